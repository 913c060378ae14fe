// SPDX-License-Identifier: MIT
/* The riscv_hpc PAPI component under the emulator (virtual clock), checked against the emulator's truth
 * and statistics. Built and run by run-papi-tests.sh:
 *   rvemu-run --model lowrisc-hpc --clock virtual test_riscv_hpc        distributed HPC checks
 *   rvemu-run --model boom --clock virtual test_riscv_hpc               BOOM bank checks
 *   rvemu-run --model lowrisc-hpc --clock virtual test_riscv_hpc useren-off
 *                                    hpcc.useren = 0: the component is disabled with its reason, no SIGILL
 */
#include <CUnit/Basic.h>
#include <papi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papi_emu_truth.h"
#include "rvbank.h"
#include "rvhw.h"
#include "cunit_run.h"

#define ADVANCE      100000000ULL /* virtual cycles per counted interval: every event is > 0 */
#define MAX_EV       64
#define THREADS      4
#define THREAD_READS 40

static struct {
	void (*get_stats)(struct rvemu_stats *);
	int (*manager_requests)(uint32_t, uint64_t *);
	void (*force_interrupt)(unsigned);
	void (*force_empty_pop)(unsigned);
	void (*set_useren)(int);
	int (*boom_truth_priv)(unsigned, unsigned, uint64_t *);
} api;

static int cidx;
static unsigned my_hart;

static int api_bind(void)
{
	api.get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	api.manager_requests = RVEMU_SYM(int (*)(uint32_t, uint64_t *), rvemu_hpc_manager_requests);
	api.force_interrupt = RVEMU_SYM(void (*)(unsigned), rvemu_hpc_force_interrupt);
	api.force_empty_pop = RVEMU_SYM(void (*)(unsigned), rvemu_hpc_force_empty_pop);
	api.set_useren = RVEMU_SYM(void (*)(int), rvemu_hpc_set_useren);
	api.boom_truth_priv = RVEMU_SYM(int (*)(unsigned, unsigned, uint64_t *), rvemu_boom_truth_priv);
	return truth_bind() == 0 && api.get_stats && api.manager_requests && api.force_interrupt &&
	               api.force_empty_pop && api.set_useren && api.boom_truth_priv
	           ? 0
	           : -1;
}

static struct rvemu_stats stats(void)
{
	struct rvemu_stats s;
	api.get_stats(&s);
	return s;
}

static uint64_t requests_to(uint32_t manager_id)
{
	uint64_t n = 0;
	CU_ASSERT_EQUAL(api.manager_requests(manager_id, &n), 0);
	return n;
}

/* An EventSet of the named events; CUnit failure (and PAPI_NULL) if one cannot be added. */
static int make_set(const char *const *names, int n)
{
	int set = PAPI_NULL;

	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	for (int i = 0; i < n; i++) {
		int rc = PAPI_add_named_event(set, names[i]);
		if (rc != PAPI_OK)
			fprintf(stderr, "cannot add %s: %s\n", names[i], PAPI_strerror(rc));
		CU_ASSERT_EQUAL_FATAL(rc, PAPI_OK);
	}
	return set;
}

static void drop_set(int *set)
{
	PAPI_cleanup_eventset(*set);
	PAPI_destroy_eventset(set);
}

static void truths(const char *const *names, int n, uint64_t *out)
{
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL_FATAL(native_truth(names[i], &out[i]), 0);
}

/* values == truth(now) - before, every one non-zero */
static void expect_exact(const char *const *names, int n, const long long *values, const uint64_t *before)
{
	uint64_t now[MAX_EV];

	truths(names, n, now);
	for (int i = 0; i < n; i++) {
		if ((uint64_t)values[i] != now[i] - before[i])
			fprintf(stderr, "%s: PAPI %lld, truth %llu\n", names[i], values[i],
			        (unsigned long long)(now[i] - before[i]));
		CU_ASSERT_EQUAL((uint64_t)values[i], now[i] - before[i]);
		CU_ASSERT(now[i] - before[i] > 0);
	}
}

/* Every native event of the component (each base event and each :hart=/:slice= instance) alone. */
static void test_every_native_alone(void)
{
	int code = PAPI_NATIVE_MASK, checked = 0;

	CU_ASSERT_EQUAL_FATAL(PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cidx), PAPI_OK);
	do {
		int sub = code;
		int more = 1;
		do {
			char name[PAPI_MAX_STR_LEN];
			const char *names[1] = {name};
			long long v = -1;
			uint64_t before;
			CU_ASSERT_EQUAL_FATAL(PAPI_event_code_to_name(sub, name), PAPI_OK);
			int set = make_set(names, 1);
			CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
			truths(names, 1, &before);
			CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
			CU_ASSERT_EQUAL(PAPI_stop(set, &v), PAPI_OK);
			/* a hart's manager counts only what runs on that hart: the others stay at 0 here */
			if (strstr(name, ":hart=") != NULL &&
			    atoi(strstr(name, ":hart=") + 6) != (int)my_hart) {
				uint64_t now;
				CU_ASSERT_EQUAL(native_truth(name, &now), 0);
				CU_ASSERT_EQUAL((uint64_t)v, now - before);
			} else {
				expect_exact(names, 1, &v, &before);
			}
			drop_set(&set);
			checked++;
			more = PAPI_enum_cmp_event(&sub, PAPI_NTV_ENUM_UMASKS, cidx) == PAPI_OK;
		} while (more);
	} while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cidx) == PAPI_OK);
	printf("\nnative events (with qualifiers) counted alone and equal to the truth: %d\n", checked);
	CU_ASSERT(checked > 11);
}

/* The hart the test thread runs on: the core manager whose truth grows when it runs. */
static unsigned find_my_hart(void)
{
	for (unsigned h = 0; h < 256; h++) {
		uint64_t a, b;
		if (emu_hpc_truth(RVHW_HPC_MANAGER_ID(h, 0), 0, &a) != 0)
			break;
		emu_advance(1000000);
		emu_hpc_truth(RVHW_HPC_MANAGER_ID(h, 0), 0, &b);
		if (b > a)
			return h;
	}
	CU_FAIL("no core manager counts the test thread");
	return 0;
}

static const char *core_kinds[] = {"L1I_READ",  "L1I_READMISS",  "L1D_READ",     "L1D_READMISS",
                                   "L1D_WRITE", "L1D_WRITEMISS", "L1D_WRITEBACK"};
static const char *l2_kinds[] = {"L2_READ", "L2_READMISS", "L2_WRITE", "L2_WRITEBACK"};

/* 7 core events of this hart + 4 L2 events of each of 2 slices. */
static int grouped_names(char buf[][64], const char **names)
{
	int n = 0;
	for (int i = 0; i < 7; i++)
		snprintf(buf[n++], 64, "riscv_lowrisc_hpc::%s:hart=%u", core_kinds[i], my_hart);
	for (unsigned s = 0; s < 2; s++)
		for (int i = 0; i < 4; i++)
			snprintf(buf[n++], 64, "riscv_lowrisc_hpc::%s:slice=%u", l2_kinds[i], s);
	for (int i = 0; i < n; i++)
		names[i] = buf[i];
	return n;
}

/* requests to (my core manager, slice 0, slice 1) and in total since `before` */
struct req_count {
	uint64_t core, l2[2], total, retried;
};

static struct req_count req_now(void)
{
	struct req_count r;
	struct rvemu_stats st = stats();
	r.core = requests_to(RVHW_HPC_MANAGER_ID(my_hart, 0));
	r.l2[0] = requests_to(RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(0), 0));
	r.l2[1] = requests_to(RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(1), 0));
	r.total = st.hpc_requests;
	r.retried = st.hpc_interruptions + st.hpc_readerrors;
	return r;
}

/* One request per manager, plus one more for each request a context switch of the host interrupted (the
 * emulator marks a request interrupted when the thread was really descheduled while values travelled, and
 * Algorithm 2 issues it again): on a loaded machine that happens, and the count says exactly how often. */
static void expect_one_request_each(struct req_count before, const char *what)
{
	struct req_count now = req_now();
	uint64_t retried = now.retried - before.retried;
	if (now.total - before.total != 3 + retried)
		fprintf(stderr, "%s: %llu requests, want 3 (+ up to %llu retried)\n", what,
		        (unsigned long long)(now.total - before.total), (unsigned long long)retried);
	CU_ASSERT(now.core - before.core >= 1 && now.core - before.core <= 1 + retried);
	CU_ASSERT(now.l2[0] - before.l2[0] >= 1 && now.l2[0] - before.l2[0] <= 1 + retried);
	CU_ASSERT(now.l2[1] - before.l2[1] >= 1 && now.l2[1] - before.l2[1] <= 1 + retried);
	/* an attempt both interrupted and with a read error is issued again once */
	CU_ASSERT(now.total - before.total >= 3 && now.total - before.total <= 3 + retried);
}

static void test_one_request_per_manager(void)
{
	char buf[16][64];
	const char *names[16];
	long long v[16], acc[16];
	uint64_t before[16], mid[16];
	int n = grouped_names(buf, names);
	int set = make_set(names, n);
	struct req_count r;

	CU_ASSERT_EQUAL_FATAL(n, 15);
	r = req_now();
	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	expect_one_request_each(r, "PAPI_start");
	truths(names, n, before);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	r = req_now();
	CU_ASSERT_EQUAL(PAPI_read(set, v), PAPI_OK);
	expect_one_request_each(r, "PAPI_read");
	expect_exact(names, n, v, before);
	/* PAPI_accum = read + reset: still one request per manager, and no event lost */
	memset(acc, 0, sizeof(acc));
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	r = req_now();
	CU_ASSERT_EQUAL(PAPI_accum(set, acc), PAPI_OK);
	expect_one_request_each(r, "PAPI_accum");
	expect_exact(names, n, acc, before);
	truths(names, n, mid);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE / 2), 0);
	r = req_now();
	CU_ASSERT_EQUAL(PAPI_stop(set, v), PAPI_OK);
	expect_one_request_each(r, "PAPI_stop");
	expect_exact(names, n, v, mid); /* counted from the accum's reset */
	drop_set(&set);
}

/* PAPI_reset not right after a read issues its own requests; counts restart there. */
static void test_reset_and_two_eventsets(void)
{
	const char *a_names[] = {"riscv_lowrisc_hpc::L2_READ", "riscv_lowrisc_hpc::L1D_READ"};
	const char *b_names[] = {"riscv_lowrisc_hpc::L2_WRITE:slice=1"};
	long long va[2], vb[1];
	uint64_t before[2], bbefore[1];
	int a = make_set(a_names, 2), b = make_set(b_names, 1);

	CU_ASSERT_EQUAL(PAPI_start(a), PAPI_OK);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_reset(a), PAPI_OK);
	truths(a_names, 2, before);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_read(a, va), PAPI_OK);
	expect_exact(a_names, 2, va, before);
	/* a reset directly after a read re-bases at that read's values (what makes PAPI_accum one request
	 * per manager): what happens between the two is counted in the next interval, not lost
	 * (docs/riscv-hpc.md) */
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_read(a, va), PAPI_OK);
	truths(a_names, 2, before);
	uint64_t requests = stats().hpc_requests;
	CU_ASSERT_EQUAL(emu_advance(ADVANCE / 8), 0);
	CU_ASSERT_EQUAL(PAPI_reset(a), PAPI_OK);
	CU_ASSERT_EQUAL(stats().hpc_requests, requests);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE / 4), 0);
	CU_ASSERT_EQUAL(PAPI_stop(a, va), PAPI_OK);
	expect_exact(a_names, 2, va, before);
	/* another EventSet, started later: its own baseline */
	CU_ASSERT_EQUAL(PAPI_start(b), PAPI_OK);
	truths(b_names, 1, bbefore);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_stop(b, vb), PAPI_OK);
	expect_exact(b_names, 1, vb, bbefore);
	drop_set(&a);
	drop_set(&b);
}

static void test_interruptions_and_empty_pops_retried(void)
{
	char buf[16][64];
	const char *names[16];
	long long v[16];
	uint64_t before[16];
	int n = grouped_names(buf, names);
	int set = make_set(names, n);
	struct rvemu_stats s0, s1;

	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	truths(names, n, before);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	s0 = stats();
	api.force_interrupt(3);
	api.force_empty_pop(2);
	CU_ASSERT_EQUAL(PAPI_read(set, v), PAPI_OK);
	s1 = stats();
	expect_exact(names, n, v, before);
	CU_ASSERT(s1.hpc_interruptions - s0.hpc_interruptions >= 3);
	CU_ASSERT(s1.hpc_readerrors - s0.hpc_readerrors >= 2);
	/* 3 requests, plus one more per interrupted attempt and one for the attempt both empty pops hit */
	CU_ASSERT(s1.hpc_requests - s0.hpc_requests >= 3 + 3 + 1);
	CU_ASSERT_EQUAL(PAPI_stop(set, v), PAPI_OK);
	drop_set(&set);
}

static void test_past_retry_bound_is_an_error(void)
{
	const char *names[] = {"riscv_lowrisc_hpc::L2_READ:slice=0"};
	long long v = -1, before_error;
	uint64_t before;
	int set = make_set(names, 1);

	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	truths(names, 1, &before);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_read(set, &v), PAPI_OK);
	before_error = v;
	api.force_interrupt(RVBANK_DEFAULT_RETRIES + 1);
	v = -1;
	CU_ASSERT_NOT_EQUAL(PAPI_read(set, &v), PAPI_OK);
	CU_ASSERT(v == -1 || v == before_error); /* no new (wrong) number was delivered */
	api.force_empty_pop(RVBANK_DEFAULT_RETRIES + 1);
	CU_ASSERT_NOT_EQUAL(PAPI_read(set, &v), PAPI_OK);
	/* the next read works again and is exact */
	CU_ASSERT_EQUAL(PAPI_read(set, &v), PAPI_OK);
	expect_exact(names, 1, &v, &before);
	CU_ASSERT_EQUAL(PAPI_stop(set, &v), PAPI_OK);
	/* a start that cannot take its baseline fails too, and leaves the EventSet stopped */
	api.force_interrupt(RVBANK_DEFAULT_RETRIES + 1);
	CU_ASSERT_NOT_EQUAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_stop(set, &v), PAPI_OK);
	drop_set(&set);
}

static void test_bad_names(void)
{
	int code;
	CU_ASSERT_NOT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::L1I_READ:hart=999", &code), PAPI_OK);
	CU_ASSERT_NOT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::L1I_READ:slice=0", &code), PAPI_OK);
	CU_ASSERT_NOT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::L2_READ:slice=2", &code), PAPI_OK);
	CU_ASSERT_NOT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::L2_READ:slice=x", &code), PAPI_OK);
	CU_ASSERT_NOT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::NO_SUCH_EVENT", &code), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_event_name_to_code("riscv_lowrisc_hpc::L2_READ:slice=1", &code), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_get_event_component(code), cidx);
	/* the distributed HPC cannot filter privilege levels */
	int set = PAPI_NULL;
	PAPI_option_t opt;
	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_assign_eventset_component(set, cidx), PAPI_OK);
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = set;
	opt.domain.domain = PAPI_DOM_USER;
	CU_ASSERT_NOT_EQUAL(PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
	PAPI_destroy_eventset(&set);
}

/* ---- 4 threads reading the same managers at once ---- */

static pthread_barrier_t barrier;

struct worker {
	int reads_ok, exact;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const char *names[] = {"riscv_lowrisc_hpc::L2_READ:slice=0", "riscv_lowrisc_hpc::L2_WRITE:slice=1",
	                       "riscv_lowrisc_hpc::L1D_READ:hart=0", "riscv_lowrisc_hpc::L2_READMISS"};
	uint64_t before[4], now[4];
	long long v[4];
	int set = PAPI_NULL, ok = 1;

	PAPI_register_thread();
	ok &= PAPI_create_eventset(&set) == PAPI_OK;
	for (int i = 0; i < 4 && ok; i++)
		ok &= PAPI_add_named_event(set, names[i]) == PAPI_OK;
	ok &= PAPI_start(set) == PAPI_OK;
	for (int i = 0; i < 4; i++)
		ok &= native_truth(names[i], &before[i]) == 0;
	pthread_barrier_wait(&barrier); /* everyone started */
	pthread_barrier_wait(&barrier); /* the main thread has run */
	for (int i = 0; i < 4; i++)
		ok &= native_truth(names[i], &now[i]) == 0;
	w->exact = 1;
	for (int r = 0; r < THREAD_READS; r++) {
		if (PAPI_read(set, v) != PAPI_OK)
			continue;
		w->reads_ok++;
		for (int i = 0; i < 4; i++)
			if ((uint64_t)v[i] != now[i] - before[i] || v[i] <= 0)
				w->exact = 0;
	}
	ok &= PAPI_stop(set, v) == PAPI_OK;
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	PAPI_unregister_thread();
	if (!ok)
		w->exact = 0;
	return NULL;
}

static void test_four_threads_same_managers(void)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];
	struct rvemu_stats s0 = stats(), s1;

	memset(w, 0, sizeof(w));
	CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&barrier, NULL, THREADS + 1), 0);
	for (int i = 0; i < THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	pthread_barrier_wait(&barrier);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0); /* the L2 slices count it; hart 0 may be this thread's */
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(w[i].reads_ok, THREAD_READS); /* none starved (a silent wait is an error) */
		CU_ASSERT_TRUE(w[i].exact);
	}
	s1 = stats();
	/* each thread: start + reads + stop, one request per manager (slice 0, slice 1, hart 0) */
	CU_ASSERT(s1.hpc_requests - s0.hpc_requests >= (uint64_t)THREADS * (THREAD_READS + 2) * 3);
	pthread_barrier_destroy(&barrier);
}

/* ---- BOOM ---- */

static void test_boom_natives_and_domains(void)
{
	const char *names[] = {"riscv_ucb_boom::cycles", "riscv_ucb_boom::insts",
	                       "riscv_ucb_boom::dcache_access", "riscv_ucb_boom::com_is_br"};
	const unsigned counters[] = {0, 1, 36, 49};
	const int domains[] = {PAPI_DOM_USER, PAPI_DOM_USER | PAPI_DOM_KERNEL, PAPI_DOM_ALL};
	const unsigned max_priv[] = {0, 1, 3};
	long long v[4], last_user = 0;

	for (int d = 0; d < 3; d++) {
		uint64_t before[4], after[4], tag = 0, priv = 9;
		int set = PAPI_NULL;
		PAPI_option_t opt;

		CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
		CU_ASSERT_EQUAL(PAPI_assign_eventset_component(set, cidx), PAPI_OK);
		memset(&opt, 0, sizeof(opt));
		opt.domain.eventset = set;
		opt.domain.domain = domains[d];
		CU_ASSERT_EQUAL(PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
		for (int i = 0; i < 4; i++)
			CU_ASSERT_EQUAL_FATAL(PAPI_add_named_event(set, names[i]), PAPI_OK);
		/* the application's own procTag and pfc_maxPriv (not counted) */
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_PROCTAG, 0x42, NULL), RVHW_OK);
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_MAXPRIV, 2, NULL), RVHW_OK);
		CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_PROCTAG, 0, &tag), RVHW_OK);
		CU_ASSERT_EQUAL(tag, RVHW_BOOM_PROCTAG_COUNTED);
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_MAXPRIV, 0, &priv), RVHW_OK);
		CU_ASSERT_EQUAL(priv, max_priv[d]);
		for (int i = 0; i < 4; i++)
			CU_ASSERT_EQUAL(api.boom_truth_priv(counters[i], max_priv[d], &before[i]), 0);
		CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
		for (int i = 0; i < 4; i++)
			CU_ASSERT_EQUAL(api.boom_truth_priv(counters[i], max_priv[d], &after[i]), 0);
		CU_ASSERT_EQUAL(PAPI_stop(set, v), PAPI_OK);
		for (int i = 0; i < 4; i++) {
			if ((uint64_t)v[i] != after[i] - before[i])
				fprintf(stderr, "%s maxPriv %u: PAPI %lld, truth %llu\n", names[i],
				        max_priv[d], v[i], (unsigned long long)(after[i] - before[i]));
			CU_ASSERT_EQUAL((uint64_t)v[i], after[i] - before[i]);
			CU_ASSERT(v[i] > 0);
		}
		/* more levels count more */
		CU_ASSERT(v[1] > last_user);
		last_user = v[1];
		/* stopped: the application's procTag and pfc_maxPriv are back */
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_PROCTAG, 0, &tag), RVHW_OK);
		CU_ASSERT_EQUAL(tag, 0x42);
		CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_MAXPRIV, 0, &priv), RVHW_OK);
		CU_ASSERT_EQUAL(priv, 2);
		drop_set(&set);
	}
	/* PAPI_DOM_KERNEL without user mode is no pfc_maxPriv setting */
	int set = PAPI_NULL;
	PAPI_option_t opt;
	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_assign_eventset_component(set, cidx), PAPI_OK);
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = set;
	opt.domain.domain = PAPI_DOM_KERNEL;
	CU_ASSERT_NOT_EQUAL(PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
	PAPI_destroy_eventset(&set);
}

static void test_boom_every_native_alone(void)
{
	test_every_native_alone();
}

/* Truth of a preset for this thread: its terms combined as PAPI combines them. */
static long long preset_truth(const char *name)
{
	PAPI_event_info_t info;
	uint64_t terms[PAPI_MAX_INFO_TERMS];
	long long v = -1;
	int code;

	CU_ASSERT_EQUAL_FATAL(PAPI_event_name_to_code(name, &code), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(code, &info), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(event_terms_truth(&info, terms), 0);
	CU_ASSERT_EQUAL_FATAL(combine_terms(&info, terms, &v), 0);
	return v;
}

/* Issue 20, item 11: cycles and instructions in one EventSet with bank presets (PAPI's kufrin, case2,
 * sdsc-mpx... add PAPI_TOT_CYC and then whatever presets the machine has); every count equals the truth. */
static void test_cycles_beside_bank_presets(void)
{
	const char *hpc[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCA", "PAPI_L1_ICH", "PAPI_L2_TCA"};
	const char *boom[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCA", "PAPI_BR_CN", "PAPI_BR_PRC"};
	const char **names =
	    strcmp(RVEMU_SYM(const char *(*)(void), rvemu_model_name)(), "boom") == 0 ? boom : hpc;
	enum { N = 5 };
	long long v[N], before[N], twice[N];
	int set = make_set(names, N);

	for (int i = 0; i < N; i++) {
		int code;
		CU_ASSERT_EQUAL(PAPI_event_name_to_code(names[i], &code), PAPI_OK);
		CU_ASSERT_EQUAL(PAPI_get_event_component(code), cidx);
	}
	CU_ASSERT_EQUAL_FATAL(PAPI_start(set), PAPI_OK);
	for (int i = 0; i < N; i++)
		before[i] = preset_truth(names[i]);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_read(set, v), PAPI_OK);
	for (int i = 0; i < N; i++) {
		long long want = preset_truth(names[i]) - before[i];
		if (v[i] != want)
			fprintf(stderr, "%s: PAPI %lld, truth %lld\n", names[i], v[i], want);
		CU_ASSERT_EQUAL(v[i], want);
		CU_ASSERT(v[i] > 0);
	}
	CU_ASSERT_EQUAL(v[0], (long long)ADVANCE); /* the virtual clock moved exactly this far */
	CU_ASSERT_EQUAL(emu_advance(ADVANCE), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, twice), PAPI_OK);
	CU_ASSERT_EQUAL(twice[0], 2 * (long long)ADVANCE);
	drop_set(&set);
}

static volatile int overflow_calls;
static volatile long long overflow_vector_seen;

static void on_overflow(int set, void *address, long long overflow_vector, void *context)
{
	(void)set;
	(void)address;
	(void)context;
	overflow_calls++;
	overflow_vector_seen |= overflow_vector;
}

/* Issue 20, item 5: PAPI_overflow on a riscv_hpc event. The banks raise no interrupt, so PAPI's software
 * overflow (its interval timer) reads the EventSet and calls the handler once the count passed the
 * threshold: the handler must run (it never did), every call for the event's counter, and never more
 * often than the count allows. Bounded: at most 20000 steps of the virtual clock and a little CPU time. */
static void test_software_overflow(void)
{
	const char *names[] = {"PAPI_TOT_CYC", "PAPI_L1_DCA"};
	const long long threshold = 20000000;
	long long v[2];
	int set = make_set(names, 2), code, pos[2];
	volatile unsigned long spin = 0;

	CU_ASSERT_EQUAL(PAPI_event_name_to_code("PAPI_TOT_CYC", &code), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_overflow(set, code, (int)threshold, 0, on_overflow), PAPI_OK);
	overflow_calls = 0;
	overflow_vector_seen = 0;
	CU_ASSERT_EQUAL_FATAL(PAPI_start(set), PAPI_OK);
	for (int step = 0; step < 20000 && overflow_calls < 3; step++) {
		CU_ASSERT_EQUAL(emu_advance(threshold / 10), 0);
		for (int k = 0; k < 200000; k++) /* CPU time for PAPI's ITIMER_PROF */
			spin += (unsigned long)k;
	}
	CU_ASSERT_EQUAL(PAPI_stop(set, v), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_get_overflow_event_index(set, overflow_vector_seen, pos, &(int){2}), PAPI_OK);
	printf("\n    software overflow: %d handler calls for %lld cycles (threshold %lld) ", overflow_calls,
	       v[0], threshold);
	CU_ASSERT(overflow_calls >= 3);
	CU_ASSERT(overflow_calls <= v[0] / threshold);
	CU_ASSERT_EQUAL(overflow_vector_seen != 0 ? pos[0] : -1,
	                0); /* PAPI_TOT_CYC is the EventSet's index 0 */
	CU_ASSERT_EQUAL(PAPI_overflow(set, code, 0, 0, on_overflow), PAPI_OK);
	drop_set(&set);
}

/* hpcc.useren = 0 before PAPI_library_init: the component is disabled with its reason, no SIGILL. */
static int useren_off(void)
{
	const PAPI_component_info_t *info;
	int code, c;

	api.set_useren(0);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return 1;
	c = PAPI_get_component_index("riscv_hpc");
	info = c >= 0 ? PAPI_get_component_info(c) : NULL;
	if (info == NULL || !info->disabled || strstr(info->disabled_reason, "useren = 0") == NULL) {
		fprintf(stderr, "riscv_hpc is not disabled for useren = 0 (%s)\n",
		        info ? info->disabled_reason : "no component");
		return 1;
	}
	if (PAPI_event_name_to_code("riscv_lowrisc_hpc::L1D_READ", &code) == PAPI_OK ||
	    PAPI_query_named_event("PAPI_L2_TCR") == PAPI_OK) {
		fprintf(stderr, "HPC events still offered with useren = 0\n");
		return 1;
	}
	printf("riscv_hpc disabled: %s\n", info->disabled_reason);
	return 0;
}

int main(int argc, char **argv)
{
	const char *model;
	CU_pSuite s;

	if (api_bind() != 0) {
		fprintf(stderr, "test_riscv_hpc: run me under rvemu-run --clock virtual\n");
		return 1;
	}
	model = RVEMU_SYM(const char *(*)(void), rvemu_model_name)();
	if (argc > 1 && strcmp(argv[1], "useren-off") == 0)
		return useren_off();
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_thread_init((unsigned long (*)(void))pthread_self) != PAPI_OK) {
		fprintf(stderr, "PAPI_library_init failed\n");
		return 1;
	}
	cidx = PAPI_get_component_index("riscv_hpc");
	if (cidx < 0 || PAPI_get_component_info(cidx)->disabled) {
		fprintf(stderr, "riscv_hpc is not enabled on %s\n", model);
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("riscv_hpc", NULL, NULL);
	if (strcmp(model, "lowrisc-hpc") == 0) {
		my_hart = find_my_hart();
		CU_add_test(s, "every HPC native alone equals the truth", test_every_native_alone);
		CU_add_test(s, "7 core + 8 L2 events: one request per manager per start/read/accum/stop",
		            test_one_request_per_manager);
		CU_add_test(s, "reset and a second EventSet", test_reset_and_two_eventsets);
		CU_add_test(s, "interruptions and empty pops are retried, values exact",
		            test_interruptions_and_empty_pops_retried);
		CU_add_test(s, "past the retry bound PAPI_read fails", test_past_retry_bound_is_an_error);
		CU_add_test(s, "bad names and domains are refused", test_bad_names);
		CU_add_test(s, "4 threads read the same managers: exact, none starves",
		            test_four_threads_same_managers);
		CU_add_test(s, "PAPI_TOT_CYC, PAPI_TOT_INS and bank presets in one EventSet equal the truth",
		            test_cycles_beside_bank_presets);
		CU_add_test(s, "PAPI_overflow: software overflow calls the handler", test_software_overflow);
	} else {
		CU_add_test(s, "every BOOM native alone equals the truth", test_boom_every_native_alone);
		CU_add_test(s, "BOOM domains -> pfc_maxPriv; procTag set and restored",
		            test_boom_natives_and_domains);
		CU_add_test(s, "PAPI_TOT_CYC, PAPI_TOT_INS and bank presets in one EventSet equal the truth",
		            test_cycles_beside_bank_presets);
		CU_add_test(s, "PAPI_overflow: software overflow calls the handler", test_software_overflow);
	}
	return cunit_run_all();
}
