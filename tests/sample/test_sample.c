// SPDX-License-Identifier: MIT
/* librvsample (sampling/rvsample.h) under the emulator. Run without it, this program is the launcher: it runs
 * the sample-file suites itself and then runs itself under `rvemu-run` ($RVEMU_RUN) once per configuration
 * below, all but one with the virtual clock, so every count is exact: cva6            PES, 64-record buffer:
 * batch and stacks modes, values, loss, threads, errors cva6-pes8       PES with an 8-record buffer
 * (RVEMU_PES_RECORDS=8): one interrupt per 8 samples cva6-cputime    PES with the CPU-time clock: stacks
 * unwound from the interrupted program u74-sscofpmf    no PES, overflow interrupts: precise refused, plain
 * sampling works and is never exact u74             no PES, no overflow interrupts: nothing can sample
 * -rdynamic lets dladdr() name this program's functions. */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_run.h"
#include "rvemu.h"
#include "sample_test.h"

static int (*advance)(uint64_t);
static int (*truth)(const char *, uint64_t *);
static void (*get_emu_stats)(struct rvemu_stats *);
static const char *config_name;
static unsigned pes_records = 64;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ------------------------------------------------------------------------ the sampled program */
/* rvemu_advance is called from here, so every precise PC is in here (its return address). */
__attribute__((noinline)) void sample_hot(uint64_t cycles)
{
	advance(cycles);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sample_outer(uint64_t cycles)
{
	sample_hot(cycles);
	__asm__ volatile("" ::: "memory");
}

static const char *function_of(uint64_t pc)
{
	Dl_info info;
	if (dladdr((void *)(uintptr_t)pc, &info) && info.dli_sname)
		return info.dli_sname;
	return "?";
}

/* An EventSet of this thread with the given events (NULL-terminated), or -1. */
static int eventset(const char *const *names)
{
	int es = PAPI_NULL;
	if (PAPI_create_eventset(&es) != PAPI_OK)
		return -1;
	for (; *names; names++) {
		int e = PAPI_add_named_event(es, *names);
		if (e != PAPI_OK) {
			fprintf(stderr, "PAPI_add_named_event(%s): %s\n", *names, PAPI_strerror(e));
			return -1;
		}
	}
	return es;
}

static void drop_eventset(int es)
{
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

static struct rvsample_config config(uint64_t threshold, int precise, enum rvsample_mode mode)
{
	struct rvsample_config c;
	memset(&c, 0, sizeof(c));
	c.sampling_event = 0;
	c.threshold = threshold;
	c.precise = precise;
	c.mode = mode;
	return c;
}

#define T 100000u /* cycles per sample */
static const char *const cva6_events[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", NULL};
static const char *const truth_names[] = {"CYCLES", "INSTRUCTIONS", "L1_DCACHE_MISS"};
static struct rvsample_record recs[4096];

/* --------------------------------------------------------------------------------- batch mode */
/* n periods of the sampling event: n samples exactly, one interrupt per full PES buffer, every PC in the hot
 * function and exact, every record this thread's; the group's values (the counters PES snapshots with each
 * record) never decrease, the sampling event's is its periods so far, and the last record's are the truth;
 * the file round trip keeps them all. */
static void test_batch(void)
{
	const uint64_t n = 203; /* not a multiple of the PES buffer: the stop drains the rest */
	int es = eventset(cva6_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s;
	struct rvsample_config c = config(T, 2, RVSAMPLE_BATCH);
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	uint64_t t0[3], t1[3];
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(truth(truth_names[i], &t0[i]), 0);
	struct rvemu_stats e0, e1;
	get_emu_stats(&e0);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	sample_outer(n * T);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	CU_ASSERT_EQUAL(st.interrupts, n / pes_records); /* the full buffers, nothing per sample */
	CU_ASSERT_EQUAL(st.samples, n / pes_records * pes_records);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK); /* and the rest */
	get_emu_stats(&e1);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(truth(truth_names[i], &t1[i]), 0);
	rvsample_get_stats(s, &st);
	CU_ASSERT_EQUAL(st.samples, n);
	CU_ASSERT_EQUAL(st.exact, n);
	CU_ASSERT_EQUAL(st.interrupts, n / pes_records);
	CU_ASSERT_EQUAL(st.interrupts, e1.pes_interrupts - e0.pes_interrupts);
	CU_ASSERT_EQUAL(st.lost + st.dropped + st.throttled, 0);
	ssize_t got = rvsample_read(s, recs, 4096);
	CU_ASSERT_EQUAL(got, (ssize_t)n);
	unsigned in_hot = 0, bad_tid = 0, exact = 0, bad_period = 0, decreasing = 0, bad_leader = 0;
	for (ssize_t i = 0; i < got; i++) {
		in_hot += !strcmp(function_of(recs[i].pc), "sample_hot");
		bad_tid += recs[i].tid != (uint32_t)gettid_() || recs[i].pid != (uint32_t)getpid();
		exact += (recs[i].flags & RVSAMPLE_F_EXACT) != 0;
		bad_period += recs[i].period != T || recs[i].nvalues != 3 || recs[i].nframes != 0;
		/* PES snapshots the counters with each record: the sampling event's own count is its periods
		 */
		bad_leader += recs[i].values[0] != (uint64_t)(i + 1) * T;
		for (int k = 0; i > 0 && k < 3; k++)
			decreasing += recs[i].values[k] < recs[i - 1].values[k] ||
			              recs[i].time_ns < recs[i - 1].time_ns;
	}
	CU_ASSERT_EQUAL(in_hot, n);
	CU_ASSERT_EQUAL(exact, n);
	CU_ASSERT_EQUAL(bad_tid, 0);
	CU_ASSERT_EQUAL(bad_period, 0);
	CU_ASSERT_EQUAL(bad_leader, 0);
	CU_ASSERT_EQUAL(decreasing, 0);
	/* the last sample is at the end of the run */
	for (int k = 0; got > 0 && k < 3; k++)
		CU_ASSERT_EQUAL(recs[got - 1].values[k], t1[k] - t0[k]);
	CU_ASSERT_EQUAL(rvsample_read(s, recs, 4096), 0);

	struct rvsample_file_info info;
	CU_ASSERT_EQUAL(rvsample_get_info(s, &info), RVSAMPLE_OK);
	CU_ASSERT_STRING_EQUAL(info.events[0], "PAPI_TOT_CYC");
	CU_ASSERT_STRING_EQUAL(info.events[2], "PAPI_L1_DCM");
	CU_ASSERT_EQUAL(info.threshold, T);
	char path[512];
	sample_tmp_path(path, sizeof(path), "batch");
	CU_ASSERT_EQUAL(sample_round_trip(path, &info, recs, (size_t)got, 1), 0);
	unlink(path);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* on_batch receives the records as they come: one call per buffer, and the rest when stopped. */
static size_t batch_sizes[16], nbatches;
static uint64_t batch_records;
static void on_batch(const struct rvsample_record *r, size_t n, void *arg)
{
	(void)arg;
	if (nbatches < 16)
		batch_sizes[nbatches] = n;
	nbatches++;
	for (size_t i = 0; i < n; i++)
		batch_records += !strcmp(function_of(r[i].pc), "sample_hot") ? 1 : 0;
}

static void test_on_batch(void)
{
	int es = eventset(cva6_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s;
	struct rvsample_config c = config(T, 3, RVSAMPLE_BATCH);
	c.on_batch = on_batch;
	nbatches = 0;
	batch_records = 0;
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	const uint64_t n = 3 * pes_records + 5;
	/* the emulator signals when the call that filled the buffer returns: one buffer per call */
	for (int i = 0; i < 3; i++)
		sample_outer(pes_records * T);
	sample_outer(5 * T);
	CU_ASSERT_EQUAL(nbatches, 3);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(nbatches, 4);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(batch_sizes[i], pes_records);
	CU_ASSERT_EQUAL(batch_sizes[3], 5);
	CU_ASSERT_EQUAL(batch_records, n);
	struct rvsample_record r;
	CU_ASSERT_EQUAL(rvsample_read(s, &r, 1), RVSAMPLE_ESTATE); /* they went to on_batch */
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* A small buffer and a reader that does not read: the kernel's ring overflows (lost, from PERF_RECORD_LOST
 * and PERF_FORMAT_LOST) and the record buffer fills (dropped); every sample is one of read, dropped or lost.
 */
static void test_slow_reader(void)
{
	int es = eventset(cva6_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s;
	struct rvsample_config c = config(T, 2, RVSAMPLE_BATCH);
	c.buffer_records = 8; /* and a one-page ring: fewer records than a PES buffer */
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	const uint64_t n = 10 * (uint64_t)pes_records;
	for (int i = 0; i < 10; i++)
		sample_outer(pes_records * T);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	ssize_t got = rvsample_read(s, recs, 4096);
	printf("\n  %" PRIu64 " samples: %zd read, %" PRIu64 " dropped (record buffer full), %" PRIu64
	       " lost (perf ring full)\n",
	       n, got, st.dropped, st.lost);
	CU_ASSERT_EQUAL(got, 8);
	CU_ASSERT(st.lost > 0);
	CU_ASSERT(st.dropped > 0);
	CU_ASSERT_EQUAL(st.samples + st.lost, n);
	CU_ASSERT_EQUAL(st.samples - st.dropped, (uint64_t)got);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* ---------------------------------------------------------------------------------- stacks */
/* One interrupt per sample, and each record's stack: frames[0] is its PC, then the callers up to main. With
 * PES the PC is the causing one, in sample_hot, called by sample_outer from run_stacks. Without it the
 * interrupt has skid (RVEMU_IRQ_SKID): the PC is where the thread was when it was taken; the last period's
 * is still pending at the system call that stops the sampler, where the kernel takes it and, the events
 * excluding the kernel (PAPI's user domain), drops it as Linux drops the kernel samples of user-only events:
 * one sample fewer (kernel_missed). */
static uint64_t kernel_missed(int precise)
{
	return precise ? 0 : 1;
}

__attribute__((noinline)) void run_stacks(rvsample_t *s, uint64_t n)
{
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	for (uint64_t i = 0; i < n; i++)
		sample_outer(T);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	__asm__ volatile("" ::: "memory");
}

static void stacks(const char *const *events, int precise)
{
	const uint64_t n = 20;
	int es = eventset(events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s;
	struct rvsample_config c = config(T, precise, RVSAMPLE_STACKS);
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	run_stacks(s, n);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	CU_ASSERT_EQUAL(st.samples, n - kernel_missed(precise));
	CU_ASSERT_EQUAL(st.exact, precise ? n : 0);
	/* one per record: the kernel does not batch a per-sample wakeup */
	CU_ASSERT_EQUAL(st.interrupts, n - kernel_missed(precise));
	ssize_t got = rvsample_read(s, recs, 4096);
	CU_ASSERT_EQUAL(got, (ssize_t)(n - kernel_missed(precise)));
	unsigned good_hot = 0, in_hot = 0, stacked = 0, pc_first = 0;
	for (ssize_t i = 0; i < got; i++) {
		const struct rvsample_record *r = &recs[i];
		int hot = !strcmp(function_of(r->pc), "sample_hot"), outer = 0, runner = 0, main_ = 0;
		for (uint32_t k = 1; k < r->nframes; k++) {
			const char *f = function_of(r->frames[k]);
			outer |= k == 1 && !strcmp(f, "sample_outer");
			runner |= !strcmp(f, "run_stacks");
			main_ |= !strcmp(f, "main");
		}
		int stack = (r->flags & RVSAMPLE_F_STACK) != 0;
		int ok = hot && stack && r->frames[0] == r->pc && outer && runner && main_;
		if (hot && !ok && good_hot == in_hot) { /* the first bad one */
			fprintf(stderr, "record %zd: pc %#" PRIx64 " (%s), %u frames:", i, r->pc,
			        function_of(r->pc), r->nframes);
			for (uint32_t k = 0; k < r->nframes; k++)
				fprintf(stderr, " %s", function_of(r->frames[k]));
			fprintf(stderr, "\n");
		}
		good_hot += ok;
		in_hot += hot;
		stacked += stack;
		pc_first += stack && r->frames[0] == r->pc;
	}
	CU_ASSERT_EQUAL(good_hot, in_hot);
	CU_ASSERT_EQUAL(pc_first, stacked);
	if (precise) {
		CU_ASSERT_EQUAL(in_hot, n);
	} else {
		/* all but the last period's; that one's PC and stack are wherever the skid took it (the
		 * stop's system call; under ASan inside its interceptor, which may not unwind) */
		CU_ASSERT(in_hot >= n - 1);
	}
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

static void test_stacks(void)
{
	stacks(cva6_events, 2);
}

/* The CPU-time clock: the program really runs, and the emulator signals from its sampling tick in the
 * interrupted program's context, so the stack unwound is the one the PC was taken in. Counted in the thread's
 * own cycles (not wall time); the share in the spin loop depends on where the ticks land, hence a bound. */
static uint64_t (*thread_cycles)(void);

__attribute__((noinline)) void cpu_spin(volatile uint64_t *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		*x += i * 5;
}

__attribute__((noinline)) void cpu_outer(volatile uint64_t *x, uint64_t n)
{
	cpu_spin(x, n);
	__asm__ volatile("" ::: "memory");
}

static void test_stacks_cputime(void)
{
	int es = eventset(cva6_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s;
	const uint64_t mhz = 50, period = mhz * 1000; /* CVA6 at 50 MHz: a sample per ms of CPU time */
	struct rvsample_config c = config(period, 2, RVSAMPLE_STACKS);
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	volatile uint64_t x = 0;
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	uint64_t t0 = thread_cycles();
	while (thread_cycles() - t0 < mhz * 200000u) /* 200 ms of this thread's CPU time */
		cpu_outer(&x, 1000000);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	ssize_t got = rvsample_read(s, recs, 4096);
	unsigned stacked = 0, pc_first = 0, in_spin = 0, in_kernel = 0;
	for (ssize_t i = 0; i < got; i++) {
		const struct rvsample_record *r = &recs[i];
		/* an alarm that came while the thread was inside the emulator (thread_cycles()): a kernel
		 * sample at the kernel's text, never exact (docs/emulator-core.md) */
		in_kernel += r->pc == 0xffffffff80000000ull && !(r->flags & RVSAMPLE_F_EXACT);
		if (!(r->flags & RVSAMPLE_F_STACK))
			continue;
		stacked++;
		pc_first += r->frames[0] == r->pc;
		int outer = 0, main_ = 0;
		for (uint32_t k = 1; k < r->nframes; k++) {
			outer |= k == 1 && !strcmp(function_of(r->frames[k]), "cpu_outer");
			main_ |= !strcmp(function_of(r->frames[k]), "main");
		}
		in_spin += !strcmp(function_of(r->pc), "cpu_spin") && outer && main_;
	}
	printf("\n  CPU-time clock: %zd samples, %u with a stack, %u in cpu_spin <- cpu_outer <- ... main, "
	       "%" PRIu64 " interrupts\n",
	       got, stacked, in_spin, st.interrupts);
	CU_ASSERT(got >= 150);
	CU_ASSERT_EQUAL(st.exact + in_kernel, (uint64_t)got);
	CU_ASSERT(in_kernel * 10 <= (unsigned)got);
	CU_ASSERT_EQUAL(pc_first, stacked);
	CU_ASSERT(st.interrupts >= stacked); /* a stack needs an interrupt of its own */
	CU_ASSERT(stacked * 4 >= (unsigned)got * 3);
	CU_ASSERT(in_spin * 4 >= (unsigned)got * 3);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* ---------------------------------------------------------------------------------- threads */
struct thread_result {
	int init, es;
	uint64_t samples, read, bad_tid, not_hot;
	pid_t tid;
};

static void *thread_main(void *arg)
{
	struct thread_result *res = arg;
	static const char *const ev[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", NULL};
	res->tid = gettid_();
	res->es = eventset(ev);
	if (res->es < 0)
		return NULL;
	rvsample_t *s;
	struct rvsample_config c = config(T, 2, RVSAMPLE_BATCH);
	res->init = rvsample_init(&s, res->es, &c);
	if (res->init != RVSAMPLE_OK)
		return NULL;
	struct rvsample_record *r = calloc(256, sizeof(*r));
	rvsample_start(s);
	for (int i = 0; i < 10; i++)
		sample_outer(10 * T);
	rvsample_stop(s);
	ssize_t k;
	while (r && (k = rvsample_read(s, r, 256)) > 0) {
		for (ssize_t i = 0; i < k; i++) {
			res->bad_tid += r[i].tid != (uint32_t)res->tid;
			res->not_hot += strcmp(function_of(r[i].pc), "sample_hot") != 0;
		}
		res->read += (uint64_t)k;
	}
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	res->samples = st.samples;
	rvsample_destroy(s);
	free(r);
	drop_eventset(res->es);
	PAPI_unregister_thread();
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[4];
	struct thread_result res[4];
	memset(res, 0, sizeof(res));
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, thread_main, &res[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT(res[i].es >= 0);
		CU_ASSERT_EQUAL(res[i].init, RVSAMPLE_OK);
		CU_ASSERT_EQUAL(res[i].samples, 100);
		CU_ASSERT_EQUAL(res[i].read, 100);
		CU_ASSERT_EQUAL(res[i].bad_tid, 0);
		CU_ASSERT_EQUAL(res[i].not_hot, 0);
	}
}

/* ---------------------------------------------------------------------------------- misuse */
static int other_thread_rc;
static void *start_elsewhere(void *arg)
{
	other_thread_rc = rvsample_start(arg);
	return NULL;
}

static void test_errors(void)
{
	rvsample_t *s = NULL;
	struct rvsample_config c = config(T, 2, RVSAMPLE_BATCH);
	int es = eventset(cva6_events);
	CU_ASSERT_FATAL(es >= 0);
	CU_ASSERT_EQUAL(rvsample_init(NULL, es, &c), RVSAMPLE_EINVAL);
	CU_ASSERT_EQUAL(rvsample_init(&s, es, NULL), RVSAMPLE_EINVAL);
	c.threshold = 0;
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_EINVAL), "threshold"));
	c = config(T, 4, RVSAMPLE_BATCH);
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_EINVAL);
	c = config(T, 2, (enum rvsample_mode)7);
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_EINVAL);
	c = config(T, 2, RVSAMPLE_BATCH);
	c.sampling_event = 3;
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_EINVAL);
	CU_ASSERT_PTR_NULL(s);
	c.sampling_event = 0;
	CU_ASSERT_EQUAL(rvsample_init(&s, 12345, &c), RVSAMPLE_EPAPI);
	int empty = PAPI_NULL;
	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&empty), PAPI_OK);
	CU_ASSERT_EQUAL(rvsample_init(&s, empty, &c), RVSAMPLE_EINVAL);
	PAPI_destroy_eventset(&empty);
	/* a derived preset (two counters added) cannot be one perf event */
	static const char *const derived[] = {"PAPI_L1_TCM", NULL};
	int des = eventset(derived);
	CU_ASSERT_FATAL(des >= 0);
	CU_ASSERT_EQUAL(rvsample_init(&s, des, &c), RVSAMPLE_ENOEVENT);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(rvsample_strerror(RVSAMPLE_ENOEVENT), "PAPI_L1_TCM is a derived preset"));
	drop_eventset(des);

	/* out of order, or from another thread */
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_ESTATE);
	pthread_t th;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, start_elsewhere, s), 0);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(other_thread_rc, RVSAMPLE_ESTATE);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_ESTATE);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_get_stats(s, NULL), RVSAMPLE_EINVAL);
	CU_ASSERT_EQUAL(rvsample_read(NULL, recs, 1), RVSAMPLE_EINVAL);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_destroy(NULL), RVSAMPLE_EINVAL);
	CU_ASSERT_STRING_EQUAL(rvsample_strerror(-99), "unknown rvsample error code");
	drop_eventset(es);
}

/* ----------------------------------------------------------------------- cores without PES */
static const char *const u74_events[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", NULL};

/* The U74 without PES: every precise level is refused with a message that says why; without precise it
 * samples through Sscofpmf, one interrupt per sample, and no sample is marked exact. */
static void test_u74_sscofpmf(void)
{
	int es = eventset(u74_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s = NULL;
	for (int p = 1; p <= 3; p++) {
		struct rvsample_config c = config(T, p, RVSAMPLE_BATCH);
		CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_ENOTSUP);
		CU_ASSERT_PTR_NULL(s);
	}
	const char *msg = rvsample_strerror(RVSAMPLE_ENOTSUP);
	printf("\n  precise=3 on the U74: %s\n", msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no Precise Event Sampling"));
	struct rvsample_config c = config(T, 0, RVSAMPLE_BATCH);
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	sample_outer(50 * T);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	CU_ASSERT_EQUAL(st.samples, 50 - kernel_missed(0)); /* the last, pending at the stop: dropped */
	CU_ASSERT_EQUAL(st.exact, 0);
	CU_ASSERT_EQUAL(st.interrupts, 50 - kernel_missed(0));
	ssize_t got = rvsample_read(s, recs, 4096);
	CU_ASSERT_EQUAL(got, 50 - (ssize_t)kernel_missed(0));
	unsigned exact = 0;
	for (ssize_t i = 0; i < got; i++)
		exact += (recs[i].flags & RVSAMPLE_F_EXACT) != 0;
	CU_ASSERT_EQUAL(exact, 0);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* on_throttle: an overflow per cycle is far above the kernel's maximum sample rate, so the event is throttled
 * (PERF_RECORD_THROTTLE) until the next tick (UNTHROTTLE). Each one reaches the callback once, THROTTLE and
 * UNTHROTTLE alternate starting with THROTTLE, and they come in time order with the records around them
 * (what rvprof needs to place them in its perf.data). Only the structure is asserted, not how often. */
#define MAX_MARKS 4096
static struct {
	int kind; /* 0 UNTHROTTLE, 1 THROTTLE, 2 a record */
	uint64_t time;
} marks[MAX_MARKS];
static size_t nmarks;

static void mark_batch(const struct rvsample_record *r, size_t n, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < n && nmarks < MAX_MARKS; i++)
		marks[nmarks].kind = 2, marks[nmarks++].time = r[i].time_ns;
}

static void mark_throttle(int throttled, uint64_t time_ns, void *arg)
{
	(void)arg;
	if (nmarks < MAX_MARKS)
		marks[nmarks].kind = throttled, marks[nmarks++].time = time_ns;
}

static void test_u74_throttle(void)
{
	int es = eventset(u74_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s = NULL;
	struct rvsample_config c = config(1, 0, RVSAMPLE_BATCH);
	c.on_batch = mark_batch;
	c.on_throttle = mark_throttle;
	nmarks = 0;
	CU_ASSERT_EQUAL_FATAL(rvsample_init(&s, es, &c), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_start(s), RVSAMPLE_OK);
	for (int i = 0; i < 100; i++)
		sample_outer(100000);
	CU_ASSERT_EQUAL(rvsample_stop(s), RVSAMPLE_OK);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	size_t throttles = 0, unthrottles = 0, records = 0, out_of_order = 0, not_alternating = 0;
	int last = 0; /* UNTHROTTLE: sampling runs */
	for (size_t i = 0; i < nmarks; i++) {
		if (i && marks[i].time < marks[i - 1].time)
			out_of_order++;
		if (marks[i].kind == 2) {
			records++;
			continue;
		}
		throttles += marks[i].kind == 1;
		unthrottles += marks[i].kind == 0;
		not_alternating += marks[i].kind == last;
		last = marks[i].kind;
	}
	printf("\n  threshold 1: %zu records, %zu THROTTLE, %zu UNTHROTTLE (stats: %llu samples, %llu "
	       "throttled)\n",
	       records, throttles, unthrottles, (unsigned long long)st.samples,
	       (unsigned long long)st.throttled);
	CU_ASSERT(nmarks < MAX_MARKS);
	CU_ASSERT(throttles > 0);
	CU_ASSERT_EQUAL(throttles, st.throttled);
	CU_ASSERT_EQUAL(records, st.samples);
	CU_ASSERT(unthrottles + 1 >= throttles && unthrottles <= throttles);
	CU_ASSERT_EQUAL(not_alternating, 0);
	CU_ASSERT_EQUAL(out_of_order, 0);
	CU_ASSERT_EQUAL(rvsample_destroy(s), RVSAMPLE_OK);
	drop_eventset(es);
}

/* Without PES each overflow interrupts: the same stacks, unwound from the same kind of signal. */
static void test_u74_stacks(void)
{
	stacks(u74_events, 0);
}

/* The U74 without Sscofpmf: no overflow interrupt, so even precise=0 cannot sample. */
static void test_u74_plain(void)
{
	int es = eventset(u74_events);
	CU_ASSERT_FATAL(es >= 0);
	rvsample_t *s = NULL;
	struct rvsample_config c = config(T, 0, RVSAMPLE_BATCH);
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_ENOTSUP), "counter-overflow interrupt"));
	c.precise = 2;
	CU_ASSERT_EQUAL(rvsample_init(&s, es, &c), RVSAMPLE_ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_ENOTSUP), "no Precise Event Sampling"));
	drop_eventset(es);
}

/* ------------------------------------------------------------------------------------- launcher */
struct config {
	const char *name, *model, *clock, *env;
	int sscofpmf;
};
static const struct config configs[] = {
    {"cva6", "cva6", "virtual", NULL, 0},         {"cva6-pes8", "cva6", "virtual", "RVEMU_PES_RECORDS=8", 0},
    {"cva6-cputime", "cva6", "cputime", NULL, 0}, {"u74-sscofpmf", "sifive-u74", "virtual", NULL, 1},
    {"u74", "sifive-u74", "virtual", NULL, 0},
};

static int run_config(const struct config *c)
{
	const char *run = getenv("RVEMU_RUN");
	char self[4096];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!run || l <= 0) {
		fprintf(stderr, "test_sample: set RVEMU_RUN to rvemu-run (make check does)\n");
		return -1;
	}
	self[l] = 0;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[10];
		int k = 0;
		argv[k++] = (char *)run;
		argv[k++] = (char *)"--model";
		argv[k++] = (char *)c->model;
		argv[k++] = (char *)"--clock";
		argv[k++] = (char *)c->clock;
		if (c->sscofpmf)
			argv[k++] = (char *)"--sscofpmf";
		argv[k++] = self;
		argv[k++] = (char *)c->name;
		argv[k] = NULL;
		if (c->env)
			putenv((char *)c->env);
		execv(run, argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_configurations(void)
{
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		int rc = run_config(&configs[i]);
		if (rc != 0)
			fprintf(stderr, "test_sample: configuration %s failed (exit %d)\n", configs[i].name,
			        rc);
		CU_ASSERT(cunit_relay(rc));
	}
}

static unsigned long thread_id(void)
{
	return (unsigned long)gettid_();
}

static int papi_up(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return -1;
	return PAPI_thread_init(thread_id) == PAPI_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	int under_emulator = dlsym(RTLD_DEFAULT, "rvemu_api_version") != NULL;
	if (!under_emulator) {
		add_file_suites();
		CU_pSuite s = CU_add_suite("librvsample under the emulator", NULL, NULL);
		CU_add_test(s,
		            "every configuration passes (cva6: virtual clock, 8-record PES, CPU-time clock; "
		            "U74 with and without Sscofpmf)",
		            test_configurations);
		return cunit_run_all();
	}
	config_name = argc > 1 ? argv[1] : "cva6";
	advance = RVEMU_SYM(int (*)(uint64_t), rvemu_advance);
	truth = RVEMU_SYM(int (*)(const char *, uint64_t *), rvemu_truth);
	get_emu_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	thread_cycles = RVEMU_SYM(uint64_t(*)(void), rvemu_thread_cycles);
	const char *p = getenv("RVEMU_PES_RECORDS");
	if (p)
		pes_records = (unsigned)atoi(p);
	int cputime = !strcmp(config_name, "cva6-cputime");
	if (!advance || !truth || !get_emu_stats || !thread_cycles || (advance(0) != 0) != cputime ||
	    papi_up() != 0) {
		fprintf(stderr, "test_sample: needs the emulator with RVEMU_CLOCK=%s, and PAPI\n",
		        cputime ? "cputime" : "virtual");
		return 1;
	}
	CU_pSuite s = CU_add_suite(config_name, NULL, NULL);
	if (!strcmp(config_name, "cva6")) {
		CU_add_test(
		    s,
		    "batch: samples = events / threshold, one interrupt per PES buffer, exact PCs in the hot "
		    "function, values monotonic and equal to the truth, file round trip",
		    test_batch);
		CU_add_test(s, "on_batch: one call per buffer, the rest at stop", test_on_batch);
		CU_add_test(s, "a slow reader and small buffers: lost and dropped counted, never silent",
		            test_slow_reader);
		CU_add_test(s, "stacks: one interrupt per sample, frames[0] == pc, callers up to main",
		            test_stacks);
		CU_add_test(s, "four threads, a sampler each: every sample is its thread's", test_threads);
		CU_add_test(s, "bad arguments, derived presets, calls out of order or from another thread",
		            test_errors);
	} else if (!strcmp(config_name, "cva6-pes8")) {
		CU_add_test(s, "batch with an 8-record PES buffer", test_batch);
		CU_add_test(s, "on_batch with an 8-record PES buffer", test_on_batch);
	} else if (cputime) {
		CU_add_test(s, "stacks with the CPU-time clock: unwound from the interrupted program",
		            test_stacks_cputime);
	} else if (!strcmp(config_name, "u74-sscofpmf")) {
		CU_add_test(s, "no PES: precise refused (RVSAMPLE_ENOTSUP), plain samples never exact",
		            test_u74_sscofpmf);
		CU_add_test(s,
		            "no PES, stacks: one interrupt per sample, frames[0] == pc, callers up to main",
		            test_u74_stacks);
		CU_add_test(s, "threshold 1: on_throttle gets each THROTTLE/UNTHROTTLE, in time order",
		            test_u74_throttle);
	} else if (!strcmp(config_name, "u74")) {
		CU_add_test(s, "no PES, no Sscofpmf: RVSAMPLE_ENOTSUP", test_u74_plain);
	} else {
		fprintf(stderr, "test_sample: unknown configuration %s\n", config_name);
		return 1;
	}
	int rc = cunit_run_all();
	PAPI_shutdown();
	return rc;
}
