// SPDX-License-Identifier: MIT
/* Task contexts: scheduling events onto the model's counters, counting, the scheduler tick, overflows
 * (their throttling: perf_throttle.c; a precise event's record: perf_pes.c), and the lock. What
 * kernel/events/core.c does for a task context, with the RISC-V PMU driver's counter update
 * (riscv_pmu_event_update).
 *
 * Counting is lazy: a context is accounted up to "now" whenever something looks at it (a read, an ioctl,
 * the sampling timer, rvemu_advance). The interval is cut at every point where the kernel would act:
 *  - a scheduler tick (RVEMU_TICK_CYCLES of thread time, 4 ms): the kernel folds each counter into the
 *    64-bit perf count at least this often (context switches, reads, ioctls too), so a counter narrower
 *    than 64 bits (U74: 40) loses multiples of 2^width only if more than 2^width events happen between two
 *    folds -- as riscv_pmu_event_update masks the delta to the counter width. Ticks also end throttling.
 *  - a multiplexing rotation (RVEMU_MUX_CYCLES);
 *  - the next overflow of a sampling event (from the count source's cycle_reaching).
 * An overflow whose IOC_REFRESH budget runs out turns the event off once the overflow has been delivered,
 * which is "now": on hardware the interrupt comes at the overflow and the handler runs microseconds later,
 * so the event counts until the emulator delivers it, never losing the emulator's own latency. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include "perf_priv.h"

static void count_events(struct emu_event *e, uint64_t delta);

/* --------------------------------------------------------------------------------------------- lock */
/* A system call is atomic with respect to the caller's signal handlers: a handler that interrupts the
 * program inside the emulator and calls back into it (PAPI's SIGPROF handler reads its events) must not find
 * the lock held by the code it interrupted. So the lock is held only inside the re-entry guard
 * (emu_guard_enter, mach.h): a signal whose handler may reach the emulator (the sampling tick, the program's
 * handlers through the interposed sigaction) is deferred meanwhile and delivered by emu_unlock's
 * emu_guard_leave, after the lock is released -- where blocking every signal through the kernel delivered
 * it, without that scheme's two system calls per call. The overflow signals queued meanwhile
 * (emu_queue_signal) are sent after that, outside the guard, so a handler of the program's runs at once. */
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

void emu_lock(void)
{
	emu_guard_enter();
	emu_kernel_enter(); /* waiting for the lock is not CPU time: a blocked mutex sleeps */
	pthread_mutex_lock(&perf_lock);
}

void emu_unlock(void)
{
	pthread_mutex_unlock(&perf_lock);
	emu_flush_signals_leaving();
}

/* fork: the perf lock is taken in the prepare handler and released on both sides (the registry and bank
 * locks have their own handlers). The thread that forks, as the child's FORK record names it (copy_process):
 * taken in the parent under the perf lock, which is held across the fork, so a child's copy holds its own
 * forking thread. A thread that never entered the emulator before it forked has no record the child could
 * inherit. */
pid_t emu_fork_parent_tid, emu_fork_parent_pid;

void perf_fork_prepare(void)
{
	emu_lock(); /* a sampling tick arriving now waits for the unlock */
	emu_fork_parent_tid = emu_gettid();
	emu_fork_parent_pid = emu_getpid();
}

void perf_fork_parent(void)
{
	emu_unlock(); /* and runs the ticks that arrived meanwhile */
}

void perf_fork_child_unlock(void)
{
	pthread_mutex_unlock(&perf_lock);
	/* The parent's deferred signals are the parent's; the child stays inside the guard until its last
	 * fork handler (fe_libc.c's fork_child), as it stays in kernel mode (threads_fork_child took that
	 * over): a handler of the program never runs as the kernel's work. */
	emu_guard_forget();
	emu_guard_enter();
}

/* ------------------------------------------------------------------------------------------ contexts */
struct emu_ctx *emu_ctx_of(struct emu_thread *t)
{
	if (!t->perf) {
		t->perf = calloc(1, sizeof(*t->perf));
		if (!t->perf)
			abort();
		t->perf->next_tick = emu_cfg()->tick_cycles;
	}
	return t->perf;
}

/* Software events counted from the thread's real accounting (faults, context switches). */
static int is_accounted(const struct emu_event *ev)
{
	return ev->kind == EK_SOFTWARE && !is_clock(ev);
}

/* The user's events the counter of `ev` sees between thread cycles a and b (a <= b); the kernel's share
 * is taken apart (kernel_share). */
static uint64_t event_delta(const struct emu_event *ev, uint64_t a, uint64_t b)
{
	if (is_clock(ev))
		return emu_cycles_to_ns(b) - emu_cycles_to_ns(a);
	if (ev->kind == EK_SOFTWARE || ev->attr.exclude_user)
		return 0;
	return emu_events_between(ev->target, ev->evmask, a, b);
}

/* The kernel's share of an event that does not exclude it (the emulator's own work, when the count source
 * has one: exec), as on a board, where the counter counts the kernel's work while it is enabled: the tail of
 * the enable after the counter starts, the interrupts in between, the head of the disable before it stops --
 * not a tick handled before the enable. The thread's cycles stand still while the emulator runs, so they
 * cannot place that work: the share is the target's supervisor count now less its mark, taken when the event
 * goes on or off (emu_ctx_schedule: enable, enable_on_exec, a rotation, the end of a refresh budget) and
 * at every accounting in between (ctx_sync, whatever the emulator did since, a tick's bookkeeping
 * included). The target's count, never the reader's: another thread reading the event adds nothing of its
 * own. *now: the count read. */
static uint64_t kernel_share(const struct emu_event *e, uint64_t *now)
{
	*now = emu_kernel_events_now(e->target, e->evmask);
	if (e->kernel_capped && *now > e->kernel_cap)
		*now = e->kernel_cap; /* held (emu_kernel_share_stop_here) */
	return *now > e->kernel_mark ? *now - e->kernel_mark : 0;
}

/* The event went on or off (its state after a scheduling pass): its share starts from now, or ends now. */
static void kernel_share_edge(struct emu_event *e)
{
	int on = e->state == EV_ACTIVE && e->kind != EK_SOFTWARE && !e->attr.exclude_kernel;
	if (on == e->kernel_on)
		return;
	if (on)
		e->kernel_capped = 0; /* back on within a held entry: it counts from now */
	uint64_t now, d = kernel_share(e, &now);
	if (!on)
		count_events(e, d); /* its last share: what the kernel did up to the stop */
	e->kernel_mark = now;
	e->kernel_on = on;
}

/* PERF_EVENT_IOC_RESET: the kernel's work before the reset is not in the count after it. */
void emu_kernel_share_restart(struct emu_event *e)
{
	uint64_t now;
	if (e->kernel_on) {
		kernel_share(e, &now);
		e->kernel_mark = now;
	}
}

/* A disable's entry (stop 1, before anything is accounted; stop 0 after its scheduling pass). On a board the
 * disable's way in reaches the PMU's stop (riscv_pmu_stop, from event_sched_out), which reads the counter
 * into the count and then stops it: the window ends at that read, in the head of the disable. The emulator
 * accounts the user's window lazily, at the disable, and stops the event after; that accounting stands for
 * nothing a board does, so the share is held at the entry's start: an event the disable turns off ends
 * there, one that stays on counts the entry's work at its next accounting, as its counter went on counting.
 */
void emu_kernel_share_stop_here(struct emu_thread *t, int stop)
{
	if (!t->perf)
		return;
	for_each_group(t->perf, g) for_each_member(g, e)
	{
		e->kernel_capped = stop && e->kernel_on;
		if (e->kernel_capped)
			e->kernel_cap = emu_kernel_events_now(e->target, e->evmask);
	}
}

/* First cycle in (a, b] at which `ev` has seen `need` events since a; b + 1 if none. */
static uint64_t cycle_of_count(const struct emu_event *ev, uint64_t a, uint64_t b, uint64_t need)
{
	if (!is_clock(ev)) {
		if (ev->kind == EK_SOFTWARE || ev->attr.exclude_user)
			return b + 1;
		return emu_count_source()->cycle_reaching(ev->target, ev->evmask, a, b, need);
	}
	/* a clock counts ns = floor(cycles * 1000 / MHz): the first cycle whose ns reach ns(a) + need */
	unsigned __int128 target = (unsigned __int128)emu_cycles_to_ns(a) + need, mhz = emu_model()->freq_mhz;
	unsigned __int128 c = (target * mhz + 999) / 1000;
	return c > b ? b + 1 : (uint64_t)c;
}

/* What the hardware counter of an active event holds now: its value at the last fold plus what happened
 * since. Reading a counter CSR changes no kernel state (no fold, no page update). */
uint64_t emu_counter_now(const struct emu_event *e)
{
	const struct emu_ctx *ctx = e->target->perf;
	uint64_t now = emu_cycles_of(e->target), d = 0, k;
	if (ctx && e->state == EV_ACTIVE && !e->throttled && now > ctx->last_cycles)
		d = event_delta(e, ctx->last_cycles, now);
	if (ctx && e->kernel_on && !e->throttled)
		d += kernel_share(e, &k); /* the kernel's work up to this read */
	return emu_width_mask(e, e->hw_raw + d);
}

/* One look at a thread's accounting, shared by the software events of one pass (enable, accounting): the
 * members of a group must see the same moment, as the kernel's counters do, not one system call apart each
 * (else minor faults could exceed all faults when the thread faults in between, as code under qemu does). */
struct sw_snapshot {
	const struct emu_thread *t; /* whose accounting a holds; NULL: none taken yet */
	int ok;
	struct emu_thread_acct a;
};

static uint64_t sw_now(const struct emu_event *ev, struct sw_snapshot *snap)
{
	if (snap->t != ev->target) {
		snap->t = ev->target;
		snap->ok = emu_thread_acct(ev->target, &snap->a) == 0;
	}
	if (!snap->ok)
		return ev->sw_base;
	return emu_sw_value(ev, &snap->a);
}

uint64_t emu_sw_value(const struct emu_event *ev, const struct emu_thread_acct *a)
{
	switch (ev->attr.config) {
	case PERF_COUNT_SW_PAGE_FAULTS:
		return ev->attr.exclude_user ? 0 : a->minflt + a->majflt;
	case PERF_COUNT_SW_PAGE_FAULTS_MIN:
		return ev->attr.exclude_user ? 0 : a->minflt;
	case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
		return ev->attr.exclude_user ? 0 : a->majflt;
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
		return ev->attr.exclude_kernel ? 0 : a->nvcsw + a->nivcsw; /* counted in the scheduler */
	default: /* migrations (none modelled), alignment and emulation faults, dummy, bpf-output */
		return 0;
	}
}

struct hw_use {
	unsigned cycles, instret, prog;
};

static int group_filtered(const struct emu_event *leader)
{
	/* event_filter_match: a per-task event bound to a CPU counts only while the task runs there */
	return leader->cpu >= 0 && (unsigned)leader->cpu != leader->target->hart;
}

static int group_fits(struct emu_event *leader, struct hw_use *used)
{
	struct hw_use need = {0, 0, 0};
	for_each_member(leader, e)
	{
		if (e->state < EV_INACTIVE)
			continue;
		need.cycles += e->kind == EK_CYCLES;
		need.instret += e->kind == EK_INSTRET;
		need.prog += e->kind == EK_PROG;
	}
	if (used->cycles + need.cycles > 1 || used->instret + need.instret > 1 ||
	    used->prog + need.prog > emu_model()->prog_counters)
		return 0;
	for_each_member(leader, e)
	{
		if (e->state < EV_INACTIVE)
			continue;
		e->hw_idx = e->kind == EK_CYCLES    ? 0
		            : e->kind == EK_INSTRET ? 2
		            : e->kind == EK_PROG    ? 3 + (int)used->prog++
		                                    : -1;
	}
	used->cycles += need.cycles;
	used->instret += need.instret;
	return 1;
}

static int group_is_software(struct emu_event *leader)
{
	for_each_member(leader, e) if (e->kind != EK_SOFTWARE) return 0;
	return 1;
}

static void group_set_active(struct emu_event *leader, int active)
{
	struct sw_snapshot snap = {NULL, 0, {0, 0, 0, 0}};
	for_each_member(leader, e)
	{
		if (e->state == EV_ACTIVE || e->state == EV_INACTIVE) {
			if (active && e->state != EV_ACTIVE && is_accounted(e))
				e->sw_base = sw_now(e, &snap);
			e->state = active ? EV_ACTIVE : EV_INACTIVE;
		}
		if (!active)
			e->hw_idx = -1;
	}
}

/* Kernel order: pinned groups first (one that cannot go on is put in error state), then flexible groups
 * in list order until the first that does not fit; rotation moves the first flexible group to the end. */
void emu_ctx_schedule(struct emu_thread *t)
{
	struct emu_ctx *ctx = emu_ctx_of(t);
	emu_pes_flush(t); /* records go to the events on their counters before the counters change hands */
	struct hw_use used = {0, 0, 0};
	int was_rotating = ctx->rotate_needed;
	ctx->rotate_needed = 0;
	for_each_group(ctx, g) group_set_active(g, 0);
	for_each_group(ctx, g)
	{
		if (!g->attr.pinned || g->state != EV_INACTIVE || group_filtered(g))
			continue;
		if (group_is_software(g) || group_fits(g, &used))
			group_set_active(g, 1);
		else
			g->state = EV_ERROR;
	}
	int can_add_hw = 1;
	for_each_group(ctx, g)
	{
		if (g->attr.pinned || g->state != EV_INACTIVE || group_filtered(g))
			continue;
		if (group_is_software(g) || (can_add_hw && group_fits(g, &used))) {
			group_set_active(g, 1);
		} else {
			can_add_hw = 0;
			ctx->rotate_needed = 1;
		}
	}
	if (ctx->rotate_needed && !was_rotating)
		ctx->slice_end = ctx->last_cycles + emu_cfg()->mux_cycles;
	for_each_group(ctx, g) for_each_member(g, e) kernel_share_edge(e);
	/* Every event that went on, off or to another counter says so on its page at once, as riscv_pmu_add
	 * and riscv_pmu_del update it: a pass started for one group (an ioctl, an open, a close) can move the
	 * others, and a page still naming the old counter sends the next user-space read to a counter that is
	 * not the event's (SIGILL). */
	for_each_group(ctx, g) for_each_member(g, e) emu_ring_update_page(e);
	ctx->nsampling_active = 0;
	for_each_group(ctx, g) for_each_member(g, e) if (e->state == EV_ACTIVE && is_sampling(e))
	    ctx->nsampling_active++;
}

/* Events that went off (disabled, closed, a refresh budget spent) leave their counters; every other event
 * keeps its own. Linux's disable schedules out that event, or the group it leads (__perf_event_disable:
 * group_sched_out, event_sched_out), and a close that event alone (__perf_remove_from_context): no other
 * group is moved, and none that waits comes on, until the next full pass (an enable's ctx_resched, a
 * rotation, a context switch). A full pass here would repack the counters: a group on the second counter
 * would move to the first when the first's group was disabled, and a program reading counters in user space
 * would see its page's index change, which a board never shows it. A group left enabled but off with no
 * rotation due (the members of a closed leader that was off) would wait for ever in the emulator, which has
 * no context switch: for it the full pass stands for the board's next switch. */
void emu_ctx_schedule_out(struct emu_thread *t)
{
	struct emu_ctx *ctx = emu_ctx_of(t);
	emu_pes_flush(t); /* records go to the events on their counters before the counters change hands */
	int waiting = 0;
	for_each_group(ctx, g)
	{
		int group_on = g->state == EV_ACTIVE;
		for_each_member(g, e)
		{
			if (e->state == EV_ACTIVE && !group_on)
				e->state = EV_INACTIVE; /* its leader went off: group_sched_out */
			if (e->state != EV_ACTIVE)
				e->hw_idx = -1;
		}
		waiting |= g->state == EV_INACTIVE && !group_filtered(g);
	}
	if (waiting && !ctx->rotate_needed) {
		emu_ctx_schedule(t);
		return;
	}
	for_each_group(ctx, g) for_each_member(g, e) kernel_share_edge(e);
	for_each_group(ctx, g) for_each_member(g, e) emu_ring_update_page(e);
	ctx->nsampling_active = 0;
	for_each_group(ctx, g) for_each_member(g, e) if (e->state == EV_ACTIVE && is_sampling(e))
	    ctx->nsampling_active++;
}

static void ctx_rotate(struct emu_thread *t)
{
	struct emu_ctx *ctx = t->perf;
	struct emu_event **pp = &ctx->groups, *first = NULL;
	for (; *pp; pp = &(*pp)->next_group)
		if (!(*pp)->attr.pinned) {
			first = *pp;
			*pp = first->next_group;
			break;
		}
	if (!first) {
		/* nothing to rotate (the groups that waited were closed since: a disable or close leaves the
		 * flag for the rotation, emu_ctx_schedule_out): as ctx_event_to_rotate, the flag goes, or
		 * ctx_sync would stop at the same slice end for ever */
		ctx->rotate_needed = 0;
		return;
	}
	first->next_group = NULL;
	for (pp = &ctx->groups; *pp; pp = &(*pp)->next_group)
		;
	*pp = first;
	EMU_STAT_ADD(multiplex_rotations, 1);
	ctx->slice_end += emu_cfg()->mux_cycles;
	emu_ctx_schedule(t);
}

void emu_ctx_insert(struct emu_event *ev)
{
	struct emu_event **pp;
	if (ev->leader == ev) {
		for (pp = &emu_ctx_of(ev->target)->groups; *pp; pp = &(*pp)->next_group)
			;
	} else {
		for (pp = &ev->leader->sibling; *pp; pp = &(*pp)->sibling)
			;
	}
	*pp = ev;
}

/* The registers of the program the sampling alarm interrupted, while its samples are written (tick_handler);
 * NULL anywhere else: a sample taken in a system call, the control API, a PES drain. */
static __thread const struct emu_uregs *sample_uregs __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------------------------------ overflow */

/* The overflow interrupt of a sampling event, taken at `ip`: the sample, the IOC_REFRESH budget, the signal
 * (sent at unlock). */
static void take_interrupt(struct emu_event *ev, uint64_t ip)
{
	EMU_STAT_ADD(interrupts, 1);
	int code = POLL_IN;
	emu_account_interrupt(ev, 1); /* the sample of the overflow that throttles is still written */
	/* __perf_event_overflow: a budget that reaches 0 disables the event, signal POLL_HUP. */
	if (ev->event_limit && --ev->event_limit == 0) {
		code = POLL_HUP;
		ev->limit_reached = 1;
		ev->hup = 1;
	}
	emu_sample_write(ev, ip, emu_event_time(ev->target), NULL, sample_uregs);
	if (ev->async)
		emu_queue_signal(ev, code);
}

/* An overflow at thread cycle `cycle`. With PES the unit records it (exact PC, no interrupt). Otherwise the
 * overflow interrupt is taken irq_skid cycles later (virtual and exec clocks), at whatever the thread then
 * runs: the sample's PC is that instruction's, the skid every non-precise sample has on hardware. */
static void overflow(struct emu_event *ev, uint64_t ip, uint64_t cycle)
{
	if (ip == EMU_IP_KERNEL && ev->attr.exclude_kernel && !emu_clock_program_time()) {
		ev->user_owed++; /* it overflowed in the program, before this system call: taken back there */
		return;
	}
	if (ev->attr.precise_ip && emu_cfg()->pes) {
		emu_pes_sample(ev, ip);
		return;
	}
	uint64_t skid = emu_cfg()->irq_skid;
	if (!skid) {
		take_interrupt(ev, ip);
		return;
	}
	/* The counter's overflow flag is already set while its interrupt is pending: one interrupt, one
	 * sample, as on hardware (an overflow during the skid window is absorbed). */
	if (!ev->irq_pending) {
		ev->irq_pending = 1;
		ev->irq_due = cycle + skid;
	}
}

/* The first cycle in (last, next) at which a pending overflow interrupt is taken, else next. */
static uint64_t next_interrupt(struct emu_ctx *ctx, uint64_t last, uint64_t next)
{
	for_each_group(ctx, g)
	    for_each_member(g, e) if (e->irq_pending && e->irq_due > last && e->irq_due < next) next =
	        e->irq_due;
	return next;
}

/* Take the overflow interrupts due by `now` (all of them at a trap: a system call enters the kernel, which
 * takes what is pending), at `ip`. One that finds its event stopped is dropped, as the kernel's handler
 * ignores counters that are no longer active. */
static void take_due_interrupts(struct emu_ctx *ctx, uint64_t now, uint64_t ip, int all)
{
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (!e->irq_pending || (!all && e->irq_due > now))
			continue;
		e->irq_pending = 0;
		if (ip == EMU_IP_KERNEL && e->attr.exclude_kernel) {
			/* an interrupt taken in the kernel for an event that excludes it: dropped, as Linux
			 * drops the kernel samples of user-only events (__perf_event_overflow); counted in
			 * the stats */
			EMU_STAT_ADD(kernel_samples_dropped, 1);
			continue;
		}
		if (e->state == EV_ACTIVE && !e->limit_reached && !e->throttled) {
			/* the instruction the thread was at when the skid ran out, when the clock knows it */
			uint64_t at =
			    ip == EMU_IP_KERNEL ? 0 : emu_clock_pc_at(e->target, 0, e->irq_due, 0, NULL);
			take_interrupt(e, at ? at : ip);
		}
	}
}

/* Count `delta` events on `e`. */
static void count_events(struct emu_event *e, uint64_t delta)
{
	if (e->throttled)
		return; /* stopped until the next tick */
	e->count += emu_width_mask(e, delta);
	e->hw_raw = emu_width_mask(e, e->hw_raw + delta);
	if (is_sampling(e) && e->state == EV_ACTIVE)
		e->period_left -= (int64_t)delta;
}

/* A sampling event whose period ran out overflows (once per period, while it may still). Called once every
 * counter has counted up to this moment: a PES record holds the other counters' values. */
static void take_overflows(struct emu_event *e, uint64_t ip, uint64_t cycle, uint64_t first_ip,
                           uint64_t first_cycle)
{
	if (!is_sampling(e) || e->state != EV_ACTIVE)
		return;
	while (e->period_left <= 0 && !e->limit_reached && !e->throttled) {
		e->period_left += (int64_t)e->period;
		overflow(e, first_ip ? first_ip : ip, first_ip ? first_cycle : cycle);
		first_ip = 0;
	}
	/* Throttled: the next period starts when it is back on. So does an event whose IOC_REFRESH budget ran
	 * out, under a clock that moves only with the program (virtual: it counted until the end of the
	 * rvemu_advance that delivered it; exec).
	 * With the CPU-time clock, a delivery later than a whole period means the host stole the CPU (the
	 * thread's clock ran, the program did not): the overflows counted meanwhile stay due, taken one per
	 * alarm once the handler refreshes the event, so every overflow counted gets its handler call. */
	if (e->period_left <= 0 && (e->throttled || (e->limit_reached && emu_clock_program_time())))
		e->period_left = (int64_t)e->period;
}

static void count_and_overflow(struct emu_event *e, uint64_t delta, uint64_t ip, uint64_t cycle)
{
	count_events(e, delta);
	take_overflows(e, ip, cycle, 0, 0);
}

/* Account thread cycles [last, next) to every event of the context. */
static void ctx_account(struct emu_ctx *ctx, uint64_t last, uint64_t next, uint64_t ip)
{
	uint64_t ns = emu_cycles_to_ns(next) - emu_cycles_to_ns(last);
	for_each_group(ctx, g)
	{
		if (g->state < EV_INACTIVE)
			continue;
		for_each_member(g, e)
		{
			if (e->state < EV_INACTIVE)
				continue;
			e->time_enabled += ns;
			if (e->state != EV_ACTIVE)
				continue;
			e->time_running += ns;
			if (is_accounted(e))
				continue;
			int64_t need = e->period_left;
			count_events(e, event_delta(e, last, next));
			/* where in the interval the period ran out: the instruction, when the clock's alarm
			 * found it (exec); else the sample is taken where the thread is (ip) */
			e->overflow_pc = 0;
			if (is_sampling(e) && need > 0 && e->period_left <= 0 && e->kind != EK_SOFTWARE &&
			    !e->attr.exclude_user)
				e->overflow_pc = emu_clock_pc_at(e->target, e->evmask, last, (uint64_t)need,
				                                 &e->overflow_cycle);
		}
	}
	for_each_group(ctx, g) for_each_member(g, e) if (!is_accounted(e))
	{
		take_overflows(e, ip, next, e->overflow_pc, e->overflow_cycle);
		e->overflow_pc = 0;
	}
}

static uint64_t next_overflow(struct emu_ctx *ctx, uint64_t last, uint64_t now)
{
	uint64_t next = now;
	if (!ctx->nsampling_active)
		return next;
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (e->state != EV_ACTIVE || !is_sampling(e) || e->limit_reached || e->throttled)
			continue;
		uint64_t c =
		    cycle_of_count(e, last, next, (uint64_t)(e->period_left > 0 ? e->period_left : 1));
		if (c <= next)
			next = c;
	}
	return next;
}

/* A scheduler tick: every counter is folded (done: each accounted interval is masked on its own) and
 * throttled events come back (perf_adjust_freq_unthr_context). The ticks that fell in the interval just
 * accounted count as one (ctx_sync crosses them at once when none could have an effect). */
static void ctx_tick(struct emu_ctx *ctx)
{
	uint64_t tick = emu_cfg()->tick_cycles;
	ctx->next_tick += tick * (1 + (ctx->last_cycles - ctx->next_tick) / tick);
	emu_throttle_tick(ctx);
}

static int kernel_held(const struct emu_ctx *ctx)
{
	for_each_group(ctx, g) for_each_member(g, e) if (e->kernel_capped) return 1;
	return 0;
}

/* A tick crossed while the shares are held (emu_kernel_share_stop_here): its bookkeeping stands for the tick
 * interrupt inside the window, which every counter still on counts, so the held shares grow by it. (The cap
 * goes down by the count before and up by the count after: the difference, in modular arithmetic.) */
static void ctx_tick_held(struct emu_ctx *ctx)
{
	for_each_group(ctx, g) for_each_member(g, e) if (e->kernel_capped) e->kernel_cap -=
	    emu_kernel_events_now(e->target, e->evmask);
	ctx_tick(ctx);
	for_each_group(ctx, g) for_each_member(g, e) if (e->kernel_capped) e->kernel_cap +=
	    emu_kernel_events_now(e->target, e->evmask);
}

/* The kernel's share of the events on (kernel_share): what the emulator did since their marks, counted now
 * and in the kernel (an overflow it makes is a kernel sample, never the user's code). */
static void ctx_account_kernel(struct emu_ctx *ctx)
{
	for_each_group(ctx, g) for_each_member(g, e) if (e->kernel_on)
	{
		uint64_t now, d = kernel_share(e, &now);
		e->kernel_mark = now;
		if (d)
			count_and_overflow(e, d, EMU_IP_KERNEL, ctx->last_cycles);
	}
}

/* Accounted software events: what the thread's accounting says since the last look. */
static void ctx_account_software(struct emu_ctx *ctx)
{
	struct sw_snapshot snap = {NULL, 0, {0, 0, 0, 0}};
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (!is_accounted(e) || e->state < EV_INACTIVE)
			continue;
		uint64_t now = sw_now(e, &snap);
		if (e->state == EV_ACTIVE && now > e->sw_base)
			e->count += now - e->sw_base;
		e->sw_base = now;
	}
}

/* After accounting: events whose REFRESH budget ran out go off now (their overflow is delivered now), and
 * every event's page and fork snapshot show the new counts. */
static void ctx_settle(struct emu_thread *t)
{
	struct emu_ctx *ctx = t->perf;
	int limit_hit = 0;
	for_each_group(ctx, g) for_each_member(g, e) if (e->limit_reached)
	{
		e->limit_reached = 0;
		if (e->state >= EV_INACTIVE)
			e->state = EV_OFF;
		limit_hit = 1;
	}
	if (limit_hit)
		emu_ctx_schedule_out(t); /* perf_event_disable_inatomic: that event alone goes off */
	for_each_group(ctx, g) for_each_member(g, e) emu_event_publish(e);
}

/* Where an interval that crosses a scheduler tick must stop. At the tick itself when a throttled event comes
 * back there; otherwise the ticks only fold the counters and reset the interrupt counts, so any number of
 * them can be crossed at once (RVEMU_TICK_CYCLES=1 is a tick per cycle: one step per tick took minutes),
 * in steps of at most 2^31 cycles, so no counter sees 2^40 events (the U74's width) between two folds. */
static uint64_t tick_stop(const struct emu_ctx *ctx, uint64_t last, uint64_t next)
{
	for_each_group(ctx, g) for_each_member(g, e) if (e->throttled) return ctx->next_tick;
	uint64_t span = 1ull << 31,
	         limit = last + (emu_cfg()->tick_cycles > span ? emu_cfg()->tick_cycles : span);
	return next < limit ? next : limit > ctx->next_tick ? limit : ctx->next_tick;
}

/* Account the thread's events up to cycle `now`, the program being at `ip`. `kernel_entry`: the call is a
 * system call or an interrupt, where the kernel takes every pending overflow interrupt. */
static void ctx_sync(struct emu_thread *t, uint64_t now, uint64_t ip, int kernel_entry)
{
	struct emu_ctx *ctx = emu_ctx_of(t);
	if (ctx->next_tick <= ctx->last_cycles) /* a context made before the configuration's tick */
		ctx->next_tick = ctx->last_cycles + emu_cfg()->tick_cycles;
	/* A rotation at a past instant of the thread: on a board the outgoing events stop at the slice's end.
	 * Here their kernel share is cut at this entry's start, so none of this entry's work counts for them;
	 * kernel work between the slice's end and this entry still does (the emulator does not know when in
	 * that stretch it ran: an approximation). The incoming events count from this entry. */
	int hold = ctx->rotate_needed && ctx->slice_end < now && !kernel_held(ctx);
	if (hold)
		emu_kernel_share_stop_here(t, 1);
	while (ctx->last_cycles < now) {
		uint64_t last = ctx->last_cycles, next = now;
		if (ctx->rotate_needed && ctx->slice_end < next)
			next = ctx->slice_end;
		if (ctx->next_tick < next)
			next = tick_stop(ctx, last, next);
		next = next_overflow(ctx, last, next);
		next = next_interrupt(ctx, last, next);
		ctx_account(ctx, last, next, ip);
		ctx->last_cycles = next;
		take_due_interrupts(ctx, next, ip, 0);
		if (next >= ctx->next_tick)
			ctx_tick_held(ctx);
		if (ctx->rotate_needed && next >= ctx->slice_end)
			ctx_rotate(t);
	}
	if (hold)
		emu_kernel_share_stop_here(t, 0);
	ctx_account_kernel(ctx);
	if (kernel_entry)
		take_due_interrupts(ctx, now, ip, 1);
	if (ip != EMU_IP_KERNEL)
		for_each_group(ctx, g) for_each_member(g, e) while (e->user_owed && e->state == EV_ACTIVE &&
		                                                    !e->limit_reached && !e->throttled)
		{
			e->user_owed--;
			overflow(e, ip, ctx->last_cycles);
		}
	ctx_account_software(ctx);
	ctx_settle(t);
}

void emu_ctx_sync(struct emu_thread *t, uint64_t now, uint64_t ip)
{
	ctx_sync(t, now, ip, 1);
	/* The clock says when its alarm must be armed again: a host alarm stalled, the schedule changed here
	 * (a multiplexing rotation put a sampling event on or off its counter), an alarm at a count. */
	if (t->tid == emu_gettid() && emu_clock_rearm_due(t, now, t->perf->nsampling_active))
		emu_timer_rearm(t);
}

void perf_inject_self(size_t evidx, uint64_t n, uint64_t ip)
{
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	ctx_sync(t, emu_cycles_of(t), ip, 0);
	t->injected[evidx] += n;
	struct emu_ctx *ctx = emu_ctx_of(t);
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (e->state != EV_ACTIVE || !(e->evmask & (1ull << evidx)) || e->attr.exclude_user ||
		    e->kind == EK_SOFTWARE)
			continue;
		count_and_overflow(e, n, ip, ctx->last_cycles);
	}
	ctx_settle(t);
	emu_unlock();
}

void perf_advance_self(uint64_t cycles, uint64_t ip)
{
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	uint64_t now = __atomic_add_fetch(&t->vcycles, cycles, __ATOMIC_RELAXED);
	emu_run_publish(t, now); /* other processes of the run count this task too */
	ctx_sync(t, now, ip, 0);
	emu_unlock();
}

/* ------------------------------------------------------------------ the sampling alarm (the clock's) */
static int tick_signal;
static __thread int in_tick_handler __attribute__((tls_model("initial-exec")));
static __thread int arming_from_alarm __attribute__((tls_model("initial-exec")));

static uint64_t interrupted_pc(void *ucv)
{
	ucontext_t *uc = ucv;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__riscv)
	return (uint64_t)uc->uc_mcontext.__gregs[REG_PC];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static void uregs_from(const void *ucv, struct emu_uregs *r)
{
	const ucontext_t *uc = ucv;
	memset(r, 0, sizeof(*r));
#if defined(__riscv)
	for (int i = 0; i < EMU_PERF_REGS; i++) /* __gregs: pc, then x1..x31, as the PERF_REG order */
		r->r[i] = (uint64_t)uc->uc_mcontext.__gregs[i];
#elif defined(__x86_64__)
	r->r[EMU_REG_PC] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	r->r[EMU_REG_SP] = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	r->r[EMU_REG_S0] = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
	r->r[EMU_REG_PC] = (uint64_t)uc->uc_mcontext.pc;
	r->r[EMU_REG_SP] = (uint64_t)uc->uc_mcontext.sp;
	r->r[EMU_REG_S0] = (uint64_t)uc->uc_mcontext.regs[29];
	r->r[EMU_REG_RA] = (uint64_t)uc->uc_mcontext.regs[30];
#else
	(void)uc;
#endif
}

/* CPU time of the calling thread, ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether a PC is in librvemu.so's own code (its loaded segments, found once). */
static uintptr_t emu_text_lo, emu_text_hi;

static int find_own_segments(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t self = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= lo && self < hi) {
			emu_text_lo = lo;
			emu_text_hi = hi;
			return 1;
		}
	}
	return 0;
}

static int in_emulator(uint64_t pc)
{
	if (!emu_text_hi)
		dl_iterate_phdr(find_own_segments, (void *)(uintptr_t)&emu_lock);
	return pc >= emu_text_lo && pc < emu_text_hi;
}

static void tick_handler(int sig, siginfo_t *si, void *uc)
{
	if (emu_signal_defer(sig, si, uc)) /* the thread is inside the emulator: at its emu_unlock */
		return;
	int saved = errno;
	emu_lock(); /* first: from here the emulator's work is the kernel's (a count source may count it) */
	uint64_t t0 = thread_cpu_ns();
	struct emu_thread *t = emu_thread_self();
	uint64_t pc = interrupted_pc(uc);
	struct emu_uregs regs;
	if (in_emulator(pc)) /* an interposed call or control API, outside the re-entry guard */
		pc = EMU_IP_KERNEL;
	else
		uregs_from(uc, &regs);
	in_tick_handler = 1; /* the handlers' own re-arming (PAPI's IOC_DISABLE, IOC_REFRESH) is done below */
	sample_uregs = pc == EMU_IP_KERNEL ? NULL : &regs;
	emu_ctx_sync(t, emu_cycles_of(t), pc);
	sample_uregs = NULL;
	emu_unlock(); /* the overflow handlers run here */
	emu_lock();
	in_tick_handler = 0;
	arming_from_alarm = 1;
	emu_timer_rearm(t);
	arming_from_alarm = 0;
	/* What one alarm costs the thread, its overflow handlers included: the clock never arms the next one
	 * sooner, so the program always runs at least as long as the handling took. */
	emu_clock_handled(t, thread_cpu_ns() - t0);
	emu_unlock();
	errno = saved;
}

static int ensure_tick_signal(void)
{
	if (tick_signal)
		return 0;
	in_emulator(0); /* finds the emulator's code now: dl_iterate_phdr is not for a signal handler */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tick_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	int sig = emu_clock_signal(); /* the clock's alarm sends it */
	if (EMU_REAL(sigaction)(sig, &sa, NULL) != 0)
		return -1;
	tick_signal = sig;
	return 0;
}

/* One more sampling event of the plan, on its own while there is room (the last watch takes the rest:
 * their union, the least need). */
static void watch_event(struct emu_alarm_plan *p, uint64_t evmask, uint64_t need)
{
	if (p->nwatch < EMU_ALARM_WATCHES) {
		p->watch_evmask[p->nwatch] = evmask;
		p->watch_need[p->nwatch++] = need;
		return;
	}
	p->watch_evmask[EMU_ALARM_WATCHES - 1] |= evmask;
	if (need < p->watch_need[EMU_ALARM_WATCHES - 1])
		p->watch_need[EMU_ALARM_WATCHES - 1] = need;
}

/* When the perf core must look at the thread again: the next overflow of its sampling events (a lower bound
 * in thread cycles from the count source), a pending overflow interrupt (skid), the tick that unthrottles.
 * When one event alone decides, the plan names it, so a clock that counts events can wake exactly there. */
static struct emu_alarm_plan next_event_plan(struct emu_thread *t)
{
	struct emu_ctx *ctx = t->perf;
	struct emu_alarm_plan p = {ctx->last_cycles, UINT64_MAX, 0, 0, 0, 0, arming_from_alarm, 0, {0}, {0}};
	unsigned deciders = 0, counted = 0;
	uint64_t all_evmask = 0, least_need = UINT64_MAX;
	int any_throttled = 0;
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (e->state != EV_ACTIVE || !is_sampling(e))
			continue;
		if (e->throttled) {
			any_throttled = 1;
			continue;
		}
		uint64_t c, evmask = 0, need = 0, skid = 0;
		if (e->irq_pending) { /* its interrupt comes when the skid has run out */
			c = e->irq_due > ctx->last_cycles ? e->irq_due - ctx->last_cycles : 1;
			deciders++;
		} else if (e->user_owed) { /* overflows the kernel noticed: at the next alarm, in the program
			                    */
			c = 1;
			deciders++;
		} else {
			uint64_t left = e->period_left > 0 ? (uint64_t)e->period_left : 1;
			if (is_clock(e))
				c = emu_ns_to_cycles(left);
			else if (e->kind == EK_SOFTWARE || e->attr.exclude_user)
				continue;
			else {
				c = emu_count_source()->cycles_for(t, e->evmask, left);
				evmask = e->evmask;
				need = left;
				counted++;
				all_evmask |= evmask;
				if (need < least_need)
					least_need = need;
				watch_event(&p, evmask, need);
				/* PES records the overflow itself; an interrupt comes after the skid */
				skid = e->attr.precise_ip && emu_cfg()->pes ? 0 : emu_cfg()->irq_skid;
			}
			deciders++;
		}
		if (c < p.cycles) {
			p.cycles = c;
			p.evmask = evmask;
			p.need = need;
			p.skid = skid;
		}
	}
	if (any_throttled) { /* wake at the next tick to unthrottle */
		uint64_t to_tick = ctx->next_tick > ctx->last_cycles ? ctx->next_tick - ctx->last_cycles : 1;
		if (to_tick < p.cycles)
			p.cycles = to_tick;
		deciders++;
	}
	p.exact = deciders == 1 && p.evmask;
	if (deciders != 1) { /* several could come first: bounds only */
		p.skid = 0;
		/* events only: none overflows before the union of their events grew by the least need */
		p.evmask = counted == deciders ? all_evmask : 0;
		p.need = counted == deciders ? least_need : 0;
		if (counted != deciders)
			p.nwatch = 0;
	} else {
		p.nwatch = 0; /* one decider: evmask and need say it all */
	}
	return p;
}

/* The thread's alarm at its next event; overflows due sooner than the clock can deliver (its floor) are
 * batched (an event without an IOC_REFRESH budget takes every overflow due at the next alarm, up to the
 * throttle), and an event that must be refreshed after each overflow is throttled (emu_account_interrupt,
 * perf_throttle.c). */
void emu_timer_rearm(struct emu_thread *t)
{
	if (!t->perf || (in_tick_handler && t->tid == emu_gettid()))
		return;
	struct emu_alarm_plan p = next_event_plan(t);
	if (!t->perf->nsampling_active)
		p.cycles = UINT64_MAX;
	if (p.cycles != UINT64_MAX && ensure_tick_signal() != 0)
		return;
	emu_clock_arm(t, &p);
}
