/* SPDX-License-Identifier: MIT */
/* The program the sampling benchmark samples (bench_sampling.c: PES, per-sample interrupts, no sampling;
 * bench_sampling_papi.c: PAPI's software overflow), and what every method reports about it.
 *
 * Virtual clock: the program is a loop of three call sites. Two "blocks" advance the virtual clock
 * (rvemu_advance at sw_block_a and sw_block_b: the sampled event accrues at the model's rate, fewer than
 * SW_PERIOD events per iteration), then the "causing site" sw_cause injects exactly the events that bring
 * the count to the next multiple of SW_PERIOD (rvemu_inject). Every threshold crossing, and so every
 * sample, is caused by the one call in sw_cause: a sample whose PC is elsewhere has skid. Expected samples
 * = iterations, whatever the model's rates.
 * CPU-time clock: the program spins (sw_spin); the event follows its CPU time, and the emulator cannot
 * know which instruction caused an overflow (docs/pes.md, "Benchmark").
 */
#ifndef SAMPLING_WORK_H
#define SAMPLING_WORK_H
#include <stdint.h>

#include "rvemu.h"

#define SW_EVENT      "INSTRUCTIONS" /* minstret: perf's PERF_COUNT_HW_INSTRUCTIONS, PAPI's PAPI_TOT_INS */
#define SW_PERIOD     20000u         /* events per sample (the threshold), every method, virtual clock */
#define SW_ITERS      100000u        /* virtual clock: iterations = threshold crossings = expected samples */
#define SW_BLOCK_A    12000u         /* cycles advanced at sw_block_a per iteration */
#define SW_BLOCK_B    8000u          /* and at sw_block_b: 20000 cycles a sample, under the throttle limit */
#define SW_CPU_RATE   5000u          /* CPU-time clock: samples per CPU second the threshold aims at */
#define SW_CPU_CHUNKS 1000u          /* CPU-time clock: the work, chunks of SW_CPU_SPINS loop iterations */
#define SW_CPU_SPINS  1000000u

struct sw_result {
	const char *method;     /* "none", "pes", "irq", "papi-sw" */
	uint64_t period;        /* the threshold used */
	uint64_t expected;      /* threshold crossings (ground truth) */
	uint64_t delivered;     /* samples the user received */
	uint64_t lost_reported; /* samples reported lost (PERF_RECORD_LOST) */
	uint64_t at_cause;      /* delivered samples whose PC is in sw_cause (virtual clock) */
	uint64_t at_block;  /* delivered samples whose PC is in sw_block_a or sw_block_b (the next blocks) */
	uint64_t exact;     /* delivered samples marked exact (PERF_RECORD_MISC_EXACT_IP) */
	uint64_t signals;   /* signals the program's handler received */
	uint64_t throttled; /* PERF_RECORD_THROTTLE records */
	uint64_t cpu_ns;    /* process CPU time of the sampled loop */
	struct rvemu_stats stats; /* the emulator's counts over the loop */
};

/* The emulator's control API (dlsym); 0, or -1 with a message when the program runs without it. */
int sw_init(void);
int sw_virtual_clock(void);
/* Called between iterations (drains a ring buffer, say); may be NULL. */
typedef void (*sw_poll_fn)(void *arg);
/* The loop: sets expected, cpu_ns and stats of r. period: events per sample (virtual clock: SW_PERIOD;
 * CPU time: from sw_cpu_period). Returns 0, or -1 with a message. */
int sw_run(struct sw_result *r, uint64_t period, sw_poll_fn poll, void *arg);
/* CPU-time clock: the threshold that gives about SW_CPU_RATE samples per CPU second on this model,
 * measured on an unsampled spin and rounded to two significant digits. */
uint64_t sw_cpu_period(void);
/* Count a delivered sample at pc: in sw_cause (the causing site), in a block, or elsewhere. */
void sw_count_pc(struct sw_result *r, uint64_t pc);
/* The sampled counter's own final value: expected samples = count / period (the ground truth: the
 * emulator counts exactly). */
void sw_set_count(struct sw_result *r, uint64_t count);
void sw_print(const struct sw_result *r);

#endif
