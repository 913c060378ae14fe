// SPDX-License-Identifier: MIT
/* Throttling: how many samples one event may cost the emulator in a scheduler tick, and its end at the next
 * tick (__perf_event_account_interrupt and perf_adjust_freq_unthr_context's unthrottling in the kernel's
 * kernel/events/core.c). Both sample paths take it: the overflow interrupt (perf_ctx.c) and the PES drain,
 * so it sits below them and calls neither. */
#include "perf_priv.h"

/* The event's period in thread cycles, or 0 when it cannot be told. */
static uint64_t period_cycles(const struct emu_event *e)
{
	if (is_clock(e))
		return emu_ns_to_cycles(e->period);
	if (e->kind == EK_SOFTWARE || e->attr.exclude_user)
		return 0;
	uint64_t c = emu_count_source()->cycles_for(e->target, e->evmask, e->period);
	return c == UINT64_MAX ? 0 : c;
}

/* An event refreshed after each overflow (IOC_REFRESH budget) whose period is shorter than the emulator's
 * alarm floor asks for more interrupts than the emulator can deliver without starving the program: as
 * Linux lowers perf_event_max_sample_rate when its interrupts take too long (perf_cpu_time_max_percent),
 * it is throttled until the next tick, and says so (PERF_RECORD_THROTTLE). */
static int refresh_too_fast(const struct emu_event *e)
{
	if (!e->event_limit || !e->target->perf)
		return 0;
	uint64_t p = period_cycles(e);
	return p && p < emu_clock_floor_cycles(e->target);
}

/* __perf_event_account_interrupt: more than max_sample_rate / HZ samples of one event in one tick stop it
 * until the next tick (PERF_RECORD_THROTTLE, then UNTHROTTLE), so a too-small period cannot starve the
 * program. `samples`: 1 for an overflow interrupt, the records of a PES drain (each is a sample the
 * emulator must produce: a PES event with a period of 10 cycles must not keep it busy for minutes). Returns 1
 * when this throttled the event. */
int emu_account_interrupt(struct emu_event *ev, uint64_t samples)
{
	uint64_t per_tick = (emu_cfg()->max_sample_rate + 249) / 250; /* HZ = 250 */
	ev->tick_interrupts += samples;
	if (ev->throttled || (ev->tick_interrupts < per_tick && !refresh_too_fast(ev)))
		return 0;
	ev->throttled = 1;
	EMU_STAT_ADD(throttles, 1);
	emu_ring_write_throttle(ev, 1, emu_event_time(ev->target));
	return 1;
}

/* A scheduler tick (perf_adjust_freq_unthr_context): every event's interrupt count starts again and the
 * throttled events come back (PERF_RECORD_UNTHROTTLE). */
void emu_throttle_tick(struct emu_ctx *ctx)
{
	for_each_group(ctx, g) for_each_member(g, e)
	{
		e->tick_interrupts = 0;
		if (e->throttled) {
			e->throttled = 0;
			emu_ring_write_throttle(e, 0, emu_event_time(e->target));
		}
	}
}
