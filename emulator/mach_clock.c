// SPDX-License-Identifier: MIT
/* Time: what a thread cycle is, and how the perf core is woken at one (struct emu_alarm_plan, mach.h).
 * Three clocks, none of which the perf core tells apart:
 *  - CPU time (RVEMU_CLOCK=cputime, the profile source): a host timer, on the thread's CPU clock or on the
 *    wall clock, at the plan's cycles turned into ns, no sooner than the alarm's own handling takes;
 *  - virtual (RVEMU_CLOCK=virtual): no alarm at all, the clock moves only in rvemu_advance, where the perf
 *    core accounts anyway;
 *  - a count source's own clock (exec: the modelled cycles): the source's alarm, armed at a count. */
#include <signal.h>
#include <time.h>

#include "mach.h"
#include "mach_priv.h"

int emu_clock_signal(void)
{
	int s = emu_count_source()->signal;
	/* a real-time signal near the top of the range, away from PAPI's SIGRTMIN+2 */
	return s ? s : SIGRTMAX - 3;
}

int emu_clock_program_time(void)
{
	return emu_clock_is_virtual() || emu_count_source()->thread_cycles != NULL;
}

uint64_t emu_clock_record_time(struct emu_thread *t, const uint64_t *accounted)
{
	if (emu_clock_program_time())
		return emu_cycles_to_ns(accounted ? *accounted : emu_cycles_of(t));
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t emu_clock_pc_at(const struct emu_thread *t, uint64_t evmask, uint64_t from, uint64_t need,
                         uint64_t *cycle)
{
	const struct emu_count_source *src = emu_count_source();
	return src->pc_at ? src->pc_at(t, evmask, from, need, cycle) : 0;
}

/* ----------------------------------------------------------------------------- the host-time alarm */
/* The shortest delay between two alarms: the emulator's own handling of one (signal, accounting, the
 * program's overflow handlers: tens of us) and 20 us. Overflows due sooner would follow each other with no
 * program in between (a livelock: PAPI_overflow with 1000 cycles); the perf core batches or throttles them.
 */
static uint64_t host_floor_ns(const struct emu_thread *t)
{
	return t->handling_ns > 20000 ? t->handling_ns : 20000;
}

uint64_t emu_clock_floor_cycles(const struct emu_thread *t)
{
	return emu_clock_program_time() ? 0 : emu_ns_to_cycles(host_floor_ns(t));
}

/* A running mean in which one slow alarm (a cache-cold handler on a busy host: 5x the usual, measured)
 * counts as at most twice the mean, so it does not throttle what the emulator can deliver. */
void emu_clock_handled(struct emu_thread *t, uint64_t ns)
{
	uint64_t h = t->handling_ns;
	if (h && ns > 2 * h)
		ns = 2 * h;
	t->handling_ns = h ? (7 * h + ns) / 8 : ns;
}

/* One-shot alarm at the plan (at least host_floor_ns, at most 100 ms away so a mis-prediction is corrected
 * soon). Wall-clock alarms are punctual: the sampled PC is where the program was at its overflow, and a
 * thread a busy host preempts still gets them (the host's CPU-time timers fire only when its tick finds the
 * thread on a CPU: 100 ms late and more under load). But a wall-clock alarm would also wake a thread that
 * sleeps, so a thread that blocked since the last arming gets an alarm on its CPU clock (it cannot overflow
 * before it runs anyway); the next alarm, or any system call on its events once that alarm is overdue
 * (emu_clock_rearm_due), brings back the wall clock. Another thread gets a wall-clock alarm while /proc shows
 * it runnable. */
static int host_arm(struct emu_thread *t, int signo, const struct emu_alarm_plan *p)
{
	if (p->cycles == UINT64_MAX) {
		t->alarm_due = 0;
		return emu_thread_alarm(t, signo, 0, (enum emu_alarm_clock)t->alarm_clock);
	}
	/* the plan counts from the last accounting; the thread ran since (the rest of an overflow handler) */
	uint64_t now = emu_cycles_of(t), ran = now > p->from ? now - p->from : 0;
	uint64_t c = p->cycles > ran ? p->cycles - ran : 0;
	uint64_t ns = emu_cycles_to_ns(c), floor = host_floor_ns(t);
	if (ns < floor)
		ns = floor;
	if (ns > 100000000)
		ns = 100000000;
	/* Whether it blocked matters only between two alarms: a system call that arms it (ENABLE, REFRESH) is
	 * made by a running thread, and a CPU-clock alarm armed then could stall through a whole loop with no
	 * system call in it (100 of 100 samples piled up at the final IOC_DISABLE under stress-ng). */
	int runnable = emu_thread_runnable(t, &t->alarm_nvcsw);
	enum emu_alarm_clock clock =
	    runnable || (t->tid == emu_gettid() && !p->from_alarm) ? EMU_ALARM_WALL : EMU_ALARM_CPU;
	t->alarm_clock = (int)clock;
	t->alarm_due = now + emu_ns_to_cycles(ns);
	return emu_thread_alarm(t, signo, ns, clock);
}

int emu_clock_arm(struct emu_thread *t, const struct emu_alarm_plan *p)
{
	const struct emu_count_source *src = emu_count_source();
	if (src->arm) {
		int r = src->arm(t, emu_clock_signal(), p);
		t->alarm_due = r == 0 && p->cycles != UINT64_MAX ? p->from + p->cycles : 0;
		return r;
	}
	if (emu_clock_is_virtual())
		return 0; /* the perf core accounts in every rvemu_advance: nothing to wake */
	return host_arm(t, emu_clock_signal(), p);
}

int emu_clock_rearm_due(const struct emu_thread *t, uint64_t now, int sampling)
{
	if (emu_count_source()->arm) /* an alarm at a count is a few stores: it follows every new plan */
		return sampling || t->alarm_due;
	if (emu_clock_is_virtual())
		return 0;
	/* a host alarm more than a host tick (4 ms) overdue has stalled (a CPU-clock alarm on a busy host) */
	int overdue =
	    !emu_clock_program_time() && t->alarm_due && now > t->alarm_due + emu_ns_to_cycles(4000000);
	return overdue || !t->alarm_due != !sampling;
}
