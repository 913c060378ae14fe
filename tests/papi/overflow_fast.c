// SPDX-License-Identifier: MIT
/* overflow_fast THRESHOLD MS: PAPI_overflow on PAPI_TOT_CYC with a tiny threshold (1000 cycles: over a
 * million interrupts a second at 1.5 GHz) while the thread burns MS ms of CPU. Linux throttles such an event
 * at kernel.perf_event_max_sample_rate (PERF_RECORD_THROTTLE) instead of letting it starve the program;
 * so must the emulator. Prints the handler calls and the emulator's throttle count; exits 0 when the run
 * finished with both non-zero.
 * overflow_fast THRESHOLD MS PERCENT: a threshold the emulator can deliver one by one (100000 cycles, an
 * overflow every 67 us): exits 0 when the handler was called for every overflow due (cycles counted /
 * threshold) within PERCENT (on a busy host too: issue 20). A throttled event does not count (as on Linux)
 * and the run says how often it was throttled: the emulator throttles an event refreshed after each
 * overflow only while its own handling of one takes longer than the period (a host that steals the CPU). */
#include <dlfcn.h>
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rvemu.h"

static volatile long handled;

static void handler(int event_set, void *address, long long overflow_vector, void *context)
{
	(void)event_set;
	(void)address;
	(void)overflow_vector;
	(void)context;
	handled++;
}

static void burn_ms(long ms)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
	int threshold = argc > 1 ? atoi(argv[1]) : 1000, es = PAPI_NULL;
	long ms = argc > 2 ? atol(argv[2]) : 200;
	double within = argc > 3 ? atof(argv[3]) : -1;
	if (threshold <= 0 || ms <= 0) {
		fprintf(stderr, "usage: overflow_fast THRESHOLD MS [PERCENT]\n");
		return 2;
	}
	long long count = 0;
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_create_eventset(&es) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_TOT_CYC) != PAPI_OK ||
	    PAPI_overflow(es, PAPI_TOT_CYC, threshold, 0, handler) != PAPI_OK || PAPI_start(es) != PAPI_OK) {
		fprintf(stderr, "overflow_fast: PAPI set-up failed\n");
		return 1;
	}
	burn_ms(ms);
	if (PAPI_stop(es, &count) != PAPI_OK) {
		fprintf(stderr, "overflow_fast: PAPI_stop failed\n");
		return 1;
	}
	struct rvemu_stats st = {0};
	void (*get_stats)(struct rvemu_stats *) = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	if (get_stats)
		get_stats(&st);
	long long due = count / threshold;
	printf("overflow_fast: threshold %d, %ld ms: %ld handler calls, %lld cycles counted (%lld overflows "
	       "due), "
	       "%llu throttles\n",
	       threshold, ms, handled, count, due, (unsigned long long)st.throttles);
	if (within >= 0)
		return due > 0 && (double)llabs(due - handled) * 100.0 <= within * (double)due ? 0 : 1;
	return handled > 0 && st.throttles > 0 ? 0 : 1;
}
