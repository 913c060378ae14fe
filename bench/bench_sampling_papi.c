// SPDX-License-Identifier: MIT
/* The PAPI software-overflow method of bench_sampling (bench_sampling.c): PAPI_overflow on PAPI_TOT_INS
 * with PAPI_OVERFLOW_FORCE_SW and the benchmark's threshold. PAPI then samples by its interval timer
 * (ITIMER_PROF, SIGPROF every 10 ms of CPU time by default): at each tick it reads the counter and, when
 * it passed the threshold, calls the handler once with the interrupted PC and sets the next threshold
 * from the value it read. Crossings between two ticks beyond the first are lost without a report.
 * Built against an installed PAPI (bench/bench.am, run-bench); run by bench_sampling as
 *   rvemu-run --model cva6 --clock virtual|cputime -- bench_sampling_papi --worker papi-sw
 */
#include <papi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampling_work.h"

static volatile sig_atomic_t calls, ticks;
static uint64_t pcs[SW_ITERS]; /* the handler's PCs, classified after the run (dladdr is not for handlers) */
static struct sigaction papi_action;

static void on_overflow(int event_set, void *address, long long overflow_vector, void *context)
{
	(void)event_set;
	(void)overflow_vector;
	(void)context;
	if (calls < (sig_atomic_t)SW_ITERS)
		pcs[calls] = (uint64_t)(uintptr_t)address;
	calls++;
}

/* Counts PAPI's timer signals, then runs PAPI's own handler. */
static void on_tick(int sig, siginfo_t *si, void *uc)
{
	ticks++;
	if (papi_action.sa_flags & SA_SIGINFO)
		papi_action.sa_sigaction(sig, si, uc);
	else if (papi_action.sa_handler != SIG_IGN && papi_action.sa_handler != SIG_DFL)
		papi_action.sa_handler(sig);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench_sampling_papi: %s: %s\n", what, PAPI_strerror(rc));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "--worker") != 0 || strcmp(argv[2], "papi-sw") != 0) {
		fprintf(stderr, "usage: bench_sampling_papi --worker papi-sw (run by bench_sampling)\n");
		return 2;
	}
	struct sw_result r;
	memset(&r, 0, sizeof(r));
	r.method = "papi-sw";
	if (sw_init() != 0)
		return 1;
	uint64_t period = sw_virtual_clock() ? SW_PERIOD : sw_cpu_period();
	int es = PAPI_NULL, rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT)
		return fail("PAPI_library_init", rc);
	if ((rc = PAPI_create_eventset(&es)) != PAPI_OK)
		return fail("PAPI_create_eventset", rc);
	if ((rc = PAPI_add_event(es, PAPI_TOT_INS)) != PAPI_OK)
		return fail("PAPI_add_event PAPI_TOT_INS", rc);
	if ((rc = PAPI_overflow(es, PAPI_TOT_INS, (int)period, PAPI_OVERFLOW_FORCE_SW, on_overflow)) !=
	    PAPI_OK)
		return fail("PAPI_overflow", rc);
	if ((rc = PAPI_start(es)) != PAPI_OK)
		return fail("PAPI_start", rc);
	/* PAPI_start installed its SIGPROF handler and started the timer: count its ticks on the way */
	struct sigaction sa;
	sigaction(SIGPROF, NULL, &papi_action);
	sa = papi_action;
	sa.sa_sigaction = on_tick;
	sa.sa_flags |= SA_SIGINFO;
	sigaction(SIGPROF, &sa, NULL);
	int run = sw_run(&r, period, NULL, NULL);
	long long v;
	if ((rc = PAPI_stop(es, &v)) != PAPI_OK)
		return fail("PAPI_stop", rc);
	if (run != 0)
		return 1;
	sw_set_count(&r, (uint64_t)v);
	r.delivered = (uint64_t)calls;
	r.signals = (uint64_t)ticks;
	for (uint64_t i = 0; i < r.delivered && i < SW_ITERS; i++)
		sw_count_pc(&r, pcs[i]);
	sw_print(&r);
	PAPI_shutdown();
	return 0;
}
