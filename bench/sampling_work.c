// SPDX-License-Identifier: MIT
/* The sampled program of the sampling benchmark (sampling_work.h). The call sites are functions of their
 * own, exported (-rdynamic), so that dladdr() tells which one a sample's PC is in. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "sampling_work.h"

static int (*emu_advance)(uint64_t);
static int (*emu_inject)(const char *, uint64_t);
static int (*emu_truth)(const char *, uint64_t *);
static void (*emu_get_stats)(struct rvemu_stats *);
static int virtual_clock;

int sw_init(void)
{
	emu_advance = RVEMU_SYM(int (*)(uint64_t), rvemu_advance);
	emu_inject = RVEMU_SYM(int (*)(const char *, uint64_t), rvemu_inject);
	emu_truth = RVEMU_SYM(int (*)(const char *, uint64_t *), rvemu_truth);
	emu_get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	if (!emu_advance || !emu_inject || !emu_truth || !emu_get_stats) {
		fprintf(stderr, "bench_sampling: not running under the emulator (run it with rvemu-run)\n");
		return -1;
	}
	uint64_t v;
	if (emu_truth(SW_EVENT, &v) != 0) {
		fprintf(stderr, "bench_sampling: the model has no event %s\n", SW_EVENT);
		return -1;
	}
	virtual_clock = emu_advance(0) == 0;
	return 0;
}

int sw_virtual_clock(void)
{
	return virtual_clock;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t truth(void)
{
	uint64_t v = 0;
	emu_truth(SW_EVENT, &v);
	return v;
}

/* The call sites. Each holds one call; the barrier keeps it from becoming a tail call (its PC would then
 * be its caller's). */
__attribute__((noinline)) void sw_block_a(uint64_t cycles)
{
	emu_advance(cycles);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sw_block_b(uint64_t cycles)
{
	emu_advance(cycles);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sw_cause(uint64_t events)
{
	emu_inject(SW_EVENT, events);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sw_spin(volatile uint64_t *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		*x += i * 5;
}

enum { PC_ELSEWHERE, PC_CAUSE, PC_BLOCK };

static int classify(uint64_t pc)
{
	Dl_info info;
	if (!dladdr((void *)(uintptr_t)pc, &info) || !info.dli_saddr)
		return PC_ELSEWHERE;
	if (info.dli_saddr == (void *)(uintptr_t)sw_cause)
		return PC_CAUSE;
	if (info.dli_saddr == (void *)(uintptr_t)sw_block_a ||
	    info.dli_saddr == (void *)(uintptr_t)sw_block_b)
		return PC_BLOCK;
	return PC_ELSEWHERE;
}

void sw_count_pc(struct sw_result *r, uint64_t pc)
{
	static uint64_t last_pc; /* one dladdr() per run of equal PCs */
	static int last_kind = -1;
	if (last_kind < 0 || pc != last_pc) {
		last_pc = pc;
		last_kind = classify(pc);
	}
	r->at_cause += last_kind == PC_CAUSE;
	r->at_block += last_kind == PC_BLOCK;
}

void sw_set_count(struct sw_result *r, uint64_t count)
{
	r->expected = r->period ? count / r->period : 0;
}

static void stats_delta(struct rvemu_stats *d, const struct rvemu_stats *a, const struct rvemu_stats *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	uint64_t *o = (uint64_t *)d;
	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		o[i] = y[i] - x[i];
}

static int run_virtual(struct sw_result *r, uint64_t period, sw_poll_fn poll, void *arg)
{
	uint64_t t0 = truth();
	for (unsigned i = 0; i < SW_ITERS; i++) {
		sw_block_a(SW_BLOCK_A);
		sw_block_b(SW_BLOCK_B);
		uint64_t c = truth() - t0;
		if (c - (uint64_t)i * period >= period) {
			fprintf(stderr,
			        "bench_sampling: the blocks gave %" PRIu64 " events, not fewer than %" PRIu64
			        "\n",
			        c - (uint64_t)i * period, period);
			return -1;
		}
		sw_cause(period - c % period);
		if (poll)
			poll(arg);
	}
	r->expected = (truth() - t0) / period;
	return 0;
}

static void run_cputime(struct sw_result *r, uint64_t period, sw_poll_fn poll, void *arg)
{
	volatile uint64_t x = 0;
	uint64_t t0 = truth();
	for (unsigned i = 0; i < SW_CPU_CHUNKS; i++) {
		sw_spin(&x, SW_CPU_SPINS);
		if (poll)
			poll(arg);
	}
	r->expected = (truth() - t0) / period;
}

int sw_run(struct sw_result *r, uint64_t period, sw_poll_fn poll, void *arg)
{
	struct rvemu_stats s0, s1;
	r->period = period;
	emu_get_stats(&s0);
	uint64_t t = cpu_ns();
	if (virtual_clock) {
		if (run_virtual(r, period, poll, arg) != 0)
			return -1;
	} else {
		run_cputime(r, period, poll, arg);
	}
	r->cpu_ns = cpu_ns() - t;
	emu_get_stats(&s1);
	stats_delta(&r->stats, &s0, &s1);
	return 0;
}

uint64_t sw_cpu_period(void)
{
	volatile uint64_t x = 0;
	uint64_t e = truth(), t = cpu_ns();
	for (unsigned i = 0; i < 20; i++)
		sw_spin(&x, SW_CPU_SPINS);
	e = truth() - e;
	t = cpu_ns() - t;
	double p = (double)e / ((double)t / 1e9) / SW_CPU_RATE, scale = 1;
	while (p >= 100) {
		p /= 10;
		scale *= 10;
	}
	uint64_t period = (uint64_t)(p + 0.5) * (uint64_t)scale;
	return period ? period : 1;
}

void sw_print(const struct sw_result *r)
{
	printf("result method=%s clock=%s period=%" PRIu64 " expected=%" PRIu64 " delivered=%" PRIu64
	       " lost_reported=%" PRIu64 " at_cause=%" PRIu64 " at_block=%" PRIu64 " exact=%" PRIu64
	       " signals=%" PRIu64 " throttled=%" PRIu64 " cpu_ns=%" PRIu64 " interrupts=%" PRIu64
	       " pes_interrupts=%" PRIu64 " pes_records=%" PRIu64 " emu_signals=%" PRIu64 "\n",
	       r->method, virtual_clock ? "virtual" : "cputime", r->period, r->expected, r->delivered,
	       r->lost_reported, r->at_cause, r->at_block, r->exact, r->signals, r->throttled, r->cpu_ns,
	       r->stats.interrupts, r->stats.pes_interrupts, r->stats.pes_records, r->stats.signals);
	fflush(stdout);
}
