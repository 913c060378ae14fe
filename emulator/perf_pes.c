// SPDX-License-Identifier: MIT
/* The emulated kernel's side of PES (docs/pes.md). A sampling event with precise_ip > 0 on a PES core does
 * not interrupt per overflow: the PES unit appends a record (the causing PC, hart, privilege, time, which
 * counter, the other counters) to its buffer and interrupts when the buffer is full. The kernel then turns
 * every record into a PERF_RECORD_SAMPLE of the event on that counter (PERF_RECORD_MISC_EXACT_IP) and
 * signals each such event's owner once. It also drains the buffer whenever the schedule changes and at
 * read, ioctl and close, so a record always meets the event it belongs to.
 *
 * Layers within the perf core: below the contexts that call it (perf_ctx.c: an overflow, a schedule change),
 * above the throttling it shares with the overflow interrupt (perf_throttle.c); it never calls back up. */
#include <signal.h>
#include <string.h>

#include "perf_priv.h"

static struct emu_event *event_on_counter(struct emu_ctx *ctx, unsigned counter)
{
	for_each_group(ctx, g) for_each_member(g, e) if (e->state == EV_ACTIVE && e->hw_idx == (int)counter &&
	                                                 e->attr.precise_ip && is_sampling(e)) return e;
	return NULL;
}

static void pes_drain(struct emu_thread *t, int interrupt)
{
	struct rvemu_pes_record recs[256];
	struct emu_ctx *ctx = t->perf;
	size_t n;
	if (!ctx || !t->pes)
		return;
	if (interrupt)
		EMU_STAT_ADD(interrupts, 1);
	while ((n = emu_pes_drain(t, recs, sizeof(recs) / sizeof(recs[0]))) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct emu_event *e = event_on_counter(ctx, recs[i].counter);
			if (!e)
				continue; /* cannot happen: every schedule change drains first */
			emu_sample_write(e, recs[i].pc, recs[i].time, &recs[i], NULL);
			e->pes_pending++;
		}
		if (n < sizeof(recs) / sizeof(recs[0]))
			break;
	}
	/* As Linux's large-PEBS drain, which hands all records but the last to perf_event_output and the last
	 * to perf_event_overflow: per event and interrupt, one throttling tick, one IOC_REFRESH unit and one
	 * signal, however many records the buffer held. A drain without an interrupt (read, ioctl, schedule)
	 * only writes the records. */
	for_each_group(ctx, g) for_each_member(g, e) if (e->pes_pending)
	{
		emu_account_interrupt(e, (uint64_t)e->pes_pending); /* every record is a sample */
		e->pes_pending = 0;
		if (!interrupt)
			continue;
		int code = POLL_IN;
		if (e->event_limit && --e->event_limit == 0) {
			e->limit_reached = 1;
			e->hup = 1;
			code = POLL_HUP;
		}
		if (e->async)
			emu_queue_signal(e, code);
	}
}

void emu_pes_flush(struct emu_thread *t)
{
	pes_drain(t, 0);
}

/* How many records per fill interrupt. Linux's large-PEBS rule (intel_pmu_hw_config): the buffer collects
 * many records per interrupt only if every precise event is content with what a record holds and with
 * being told late: no frequency mode (its period is recomputed per sample), no wakeup per N samples
 * without a watermark (the user asked to hear of each sample), and nothing in sample_type that needs the
 * interrupted context (a call chain, user registers or stack). Otherwise one record per interrupt. */
#define PES_LARGE_SAMPLE_TYPES                                                                               \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |           \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |                   \
	 PERF_SAMPLE_IDENTIFIER)
static int pes_large(const struct emu_event *e)
{
	return !e->attr.freq && !(e->attr.wakeup_events && !e->attr.watermark) &&
	       !(e->attr.sample_type & ~(uint64_t)PES_LARGE_SAMPLE_TYPES);
}

static unsigned pes_records_wanted(struct emu_ctx *ctx)
{
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (e->state == EV_ACTIVE && e->attr.precise_ip && is_sampling(e) && !pes_large(e))
			return 1;
	}
	return emu_cfg()->pes_records;
}

void emu_pes_sample(struct emu_event *ev, uint64_t ip)
{
	struct emu_thread *t = ev->target;
	struct rvemu_pes_record r;
	memset(&r, 0, sizeof(r));
	r.version = RVEMU_PES_RECORD_VERSION;
	r.counter = (uint8_t)ev->hw_idx;
	r.priv =
	    ip == EMU_IP_KERNEL ? 1 : 0; /* every modelled event happens in user mode; S: in the emulator */
	r.hart = emu_cpu_hart_id(t->hart);
	r.pc = ip;
	r.time = emu_event_time(t);
	for_each_group(t->perf, g) for_each_member(g, e)
	{
		int k = emu_pes_slot(e->hw_idx);
		if (e->state == EV_ACTIVE && k >= 0)
			r.counters[k] = e->hw_raw;
	}
	emu_pes_set_threshold(t, (unsigned)ev->hw_idx, ev->period);
	unsigned records = pes_records_wanted(t->perf);
	if (records != emu_pes_size(t)) { /* the kernel reprograms mhpmmsize on an empty buffer */
		pes_drain(t, 0);
		emu_pes_set_size(t, records);
	}
	int full = emu_pes_append(t, &r);
	if (full < 0)
		emu_sample_lost(ev); /* the buffer was not drained: never silently */
	if (full)
		pes_drain(t, 1);
}
