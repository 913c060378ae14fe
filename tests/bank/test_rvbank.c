// SPDX-License-Identifier: MIT
/* librvbank (lib/rvbank.h) under the emulator (model lowrisc-hpc, virtual clock; the BOOM part re-executes
 * under model boom): batched requests against the ground truth, Algorithm 2's retries, the retry and poll
 * bounds, bad input, the probe, deltas across a wrap. */
#include <CUnit/Basic.h>

#include "bank_test.h"
#include "cunit_run.h"
#include "rvbank.h"

static struct bank_api api;
static void (*force_empty_pop)(unsigned);
static int (*manager_requests)(uint32_t, uint64_t *);

static uint32_t core_id(unsigned hart)
{
	return RVHW_HPC_MANAGER_ID(hart, 0);
}

static uint32_t l2_id(unsigned slice)
{
	return RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(slice), 0);
}

static void expect_truth(uint32_t id, uint64_t bitmap, const uint64_t *values)
{
	unsigned k = 0;
	for (unsigned bit = 0; bit < 64; bit++) {
		uint64_t want;
		if (!(bitmap & (1ull << bit)))
			continue;
		if (api.hpc_truth(id, bit, &want) != 0)
			want = 0; /* a bit no counter is behind reads 0 */
		CU_ASSERT_EQUAL(values[k], want);
		k++;
	}
}

static uint64_t requests_to(uint32_t id)
{
	uint64_t n = 0;
	CU_ASSERT_EQUAL(manager_requests(id, &n), 0);
	return n;
}

/* Several managers, one request each, values in bitmap order. */
static void test_batched_read_exact(void)
{
	uint64_t core[7], l2a[4], l2b[2], wide[64];
	struct rvbank_hpc_request req[] = {
	    {core_id(0), 0x7f, core}, {l2_id(0), 0xf, l2a}, {l2_id(1), 0xa, l2b}, {core_id(1), ~0ull, wide}};
	struct rvbank_hpc_stats st = {0};
	uint64_t before[4];

	CU_ASSERT_EQUAL(api.advance(123456789), 0);
	for (int i = 0; i < 4; i++)
		before[i] = requests_to(req[i].manager_id);
	CU_ASSERT_EQUAL_FATAL(rvbank_hpc_read(req, 4, NULL, &st), RVBANK_OK);
	expect_truth(core_id(0), 0x7f, core);
	expect_truth(l2_id(0), 0xf, l2a);
	expect_truth(l2_id(1), 0xa, l2b);
	expect_truth(core_id(1), ~0ull, wide);
	/* one request per manager, plus the repetitions Algorithm 2 made when the host really descheduled
	 * the thread while values travelled (the emulator marks that request interrupted; it happens on a
	 * loaded machine, and the library counts it) */
	uint64_t issued = 0;
	for (int i = 0; i < 4; i++) {
		uint64_t n = requests_to(req[i].manager_id) - before[i];
		CU_ASSERT(n >= 1 && n <= 1 + st.retries);
		issued += n;
	}
	CU_ASSERT_EQUAL(issued, 4 + st.retries);
	CU_ASSERT_EQUAL(st.requests, 4 + st.retries);
	/* 2 writes per request (hpcm, trigger), a cancel only before a retry of a request still in flight,
	 * and at least one pop per value */
	CU_ASSERT(st.csr_writes >= 2 * st.requests && st.csr_writes <= 2 * st.requests + st.retries);
	if (st.retries == 0)
		CU_ASSERT_EQUAL(st.csr_writes, 2 * st.requests);
	CU_ASSERT(st.csr_reads >= 7 + 4 + 2 + 64);
	CU_ASSERT(core[2] > 0 && l2a[0] > 0);
}

/* CSR operations of one clean request (virtual clock, default interconnect: 4 cycles per hop, a value every
 * 2 cycles, 1 cycle per CSR access): hpcm and trigger writes, the polls of hpcc until the first value can
 * have arrived (2 x hops x 4 + 2 cycles after the trigger, each operation one cycle), then pop / hpcm poll
 * alternately (one value per 2 cycles), the last pop, the final hpcc check: 2 + 2h*4 + 2n + 2, one more than
 * the lower bound of docs/riscv-hpc.md (the poll that sees the last value). No cancel: nothing in flight. */
static uint64_t clean_request_ops(unsigned hops, unsigned n)
{
	return 2 + 2 * hops * 4 + 2 * n + 2;
}

static void test_fewest_operations(void)
{
	static const struct {
		uint32_t id;
		unsigned hops;
		uint64_t bitmap;
	} cases[] = {{RVHW_HPC_MANAGER_ID(0, 0), 1, 0x1},
	             {RVHW_HPC_MANAGER_ID(0, 0), 1, 0x7f},
	             {RVHW_HPC_MANAGER_ID(1, 0), 2, 0xf},
	             {RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(0), 0), 3, 0xf},
	             {RVHW_HPC_MANAGER_ID(0, 0), 1, ~0ull}}; /* the test runs on hart 0 */
	uint64_t v[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rvbank_hpc_request req = {cases[i].id, cases[i].bitmap, v};
		struct rvbank_hpc_stats st = {0};
		unsigned n = (unsigned)__builtin_popcountll(cases[i].bitmap);

		api.advance(1000);
		CU_ASSERT_EQUAL_FATAL(rvbank_hpc_read(&req, 1, NULL, &st), RVBANK_OK);
		expect_truth(cases[i].id, cases[i].bitmap, v);
		CU_ASSERT(st.csr_reads + st.csr_writes >= clean_request_ops(cases[i].hops, n));
		if (st.retries == 0) { /* the host did not deschedule the thread mid-request */
			CU_ASSERT_EQUAL(st.csr_writes, 2);
			CU_ASSERT_EQUAL(st.csr_reads + st.csr_writes, clean_request_ops(cases[i].hops, n));
		}
	}
}

/* An attempt interrupted while its values travel is still in flight: the retry cancels it first (and only
 * then); the values are exact. */
static void test_cancel_only_when_pending(void)
{
	uint64_t v[4];
	struct rvbank_hpc_request req = {l2_id(0), 0xf, v};
	struct rvbank_hpc_stats st = {0};
	uint64_t hpcc = 0;

	api.hpc_force_interrupt(1);
	CU_ASSERT_EQUAL_FATAL(rvbank_hpc_read(&req, 1, NULL, &st), RVBANK_OK);
	expect_truth(l2_id(0), 0xf, v);
	CU_ASSERT(st.retries >= 1);
	CU_ASSERT_EQUAL(st.requests, st.retries + 1);
	if (st.retries == 1)
		CU_ASSERT_EQUAL(st.csr_writes, 2 + 1 + 2); /* request, cancel, request */
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, &hpcc), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc & RVHW_HPCC_TRIGGER, 0);
	/* the next read starts clean: no cancel */
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL_FATAL(rvbank_hpc_read(&req, 1, NULL, &st), RVBANK_OK);
	if (st.retries == 0)
		CU_ASSERT_EQUAL(st.csr_writes, 2);
}

static void test_retries(void)
{
	uint64_t v[4];
	struct rvbank_hpc_request req = {l2_id(0), 0xf, v};
	struct rvbank_hpc_stats st = {0};
	struct rvemu_stats s0, s1;

	api.advance(1000000);
	api.get_stats(&s0);
	api.hpc_force_interrupt(2);
	force_empty_pop(1);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, NULL, &st), RVBANK_OK);
	api.get_stats(&s1);
	expect_truth(l2_id(0), 0xf, v);
	/* two interrupted attempts and one with an empty pop, then a clean one */
	CU_ASSERT(st.retries >= 3);
	CU_ASSERT_EQUAL(st.retries + 1, st.requests);
	CU_ASSERT(s1.hpc_readerrors - s0.hpc_readerrors >= 1);
}

static void test_retry_bound(void)
{
	uint64_t v[4];
	struct rvbank_hpc_request req = {l2_id(1), 0xf, v};
	const struct rvbank_hpc_options two = {2, 100000};
	struct rvbank_hpc_stats st = {0};
	uint64_t hpcc = 0;

	api.hpc_force_interrupt(3);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, &two, &st), RVBANK_ERETRY);
	CU_ASSERT_EQUAL(st.requests, 3);
	/* nothing is left in flight */
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, &hpcc), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc & RVHW_HPCC_TRIGGER, 0);
	force_empty_pop(4 *
	                (RVBANK_DEFAULT_RETRIES + 1)); /* every pop of every attempt finds the FIFO empty */
	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, NULL, NULL), RVBANK_ERETRY);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, NULL, NULL), RVBANK_OK);
	expect_truth(l2_id(1), 0xf, v);
	CU_ASSERT_STRING_NOT_EQUAL(rvbank_strerror(RVBANK_ERETRY), rvbank_strerror(RVBANK_OK));
}

static void test_silent_manager_times_out(void)
{
	uint64_t v;
	const struct rvbank_hpc_options quick = {RVBANK_DEFAULT_RETRIES, 500};
	struct rvbank_hpc_request req = {RVHW_HPC_MANAGER_ID(0x1ff, 0), 1, &v};
	uint64_t hpcc = 0;

	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, &quick, NULL), RVBANK_ETIMEDOUT);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, &hpcc), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc & RVHW_HPCC_TRIGGER, 0); /* cancelled */
	CU_ASSERT_EQUAL(rvbank_hpc_manager_answers(RVHW_HPC_MANAGER_ID(0x1ff, 0), &quick), 0);
	CU_ASSERT_EQUAL(rvbank_hpc_manager_answers(l2_id(1), &quick), 1);
	CU_ASSERT_EQUAL(rvbank_hpc_manager_answers(l2_id(2), &quick), 0); /* two slices by default */
}

static void test_bad_input(void)
{
	uint64_t v[2];
	struct rvbank_hpc_request empty = {core_id(0), 0, v}, nobuf = {core_id(0), 1, NULL},
	                          badid = {0x20000, 1, v};
	const struct rvbank_hpc_options zero_polls = {1, 0};
	struct rvbank_hpc_request ok = {core_id(0), 1, v};

	CU_ASSERT_EQUAL(rvbank_hpc_read(&empty, 1, NULL, NULL), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&nobuf, 1, NULL, NULL), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&badid, 1, NULL, NULL), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_hpc_read(NULL, 1, NULL, NULL), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&ok, 1, &zero_polls, NULL), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_hpc_read(NULL, 0, NULL, NULL), RVBANK_OK);
	CU_ASSERT_EQUAL(rvbank_boom_read(NULL, 1, v), RVBANK_EINVAL);
	CU_ASSERT_EQUAL(rvbank_boom_count(4), RVBANK_EINVAL);
	/* no BOOM bank on this machine */
	CU_ASSERT_EQUAL(rvbank_boom_count(3), RVBANK_ENOHW);
}

static void test_probe_and_useren(void)
{
	char reason[128];
	uint64_t v;
	struct rvbank_hpc_request req = {core_id(0), 1, &v};

	CU_ASSERT_EQUAL(rvbank_hpc_probe(reason, sizeof(reason)), RVBANK_OK);
	CU_ASSERT_EQUAL(rvbank_nharts(), 4);
	api.hpc_set_useren(0);
	CU_ASSERT_EQUAL(rvbank_hpc_probe(reason, sizeof(reason)), RVBANK_EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(reason, "useren = 0"));
	api.hpc_set_useren(1);
	CU_ASSERT_EQUAL(rvbank_hpc_read(&req, 1, NULL, NULL), RVBANK_OK);
}

static void test_delta_wrap(void)
{
	CU_ASSERT_EQUAL(rvbank_delta(5, 3, 64), 2);
	CU_ASSERT_EQUAL(rvbank_delta(2, UINT64_MAX - 1, 64), 4);   /* 64-bit wrap */
	CU_ASSERT_EQUAL(rvbank_delta(1, (1ull << 40) - 2, 40), 3); /* a 40-bit counter wrapped */
	CU_ASSERT_EQUAL(rvbank_delta((1ull << 40) + 7, 7, 40), 0); /* one full turn is invisible */
	CU_ASSERT_EQUAL(rvbank_delta(0x123, 0x100, 1), 1);         /* the width masks the result */
}

/* ---- BOOM (run as a child under model boom) ---- */

static void test_boom(void)
{
	struct rvbank_boom_state saved, now;
	const unsigned counters[] = {0, 1, 36};
	uint64_t start[3], end[3], truth0, truth1;

	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_PROCTAG, 0x77, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvbank_boom_save(&saved), RVBANK_OK);
	CU_ASSERT_EQUAL(saved.proc_tag, 0x77);
	CU_ASSERT_EQUAL(rvbank_boom_count(3), RVBANK_OK);
	CU_ASSERT_EQUAL(rvbank_boom_read(counters, 3, start), RVBANK_OK);
	CU_ASSERT_EQUAL(api.boom_truth(1, &truth0), 0);
	CU_ASSERT_EQUAL(api.advance(10000000), 0);
	CU_ASSERT_EQUAL(rvbank_boom_read(counters, 3, end), RVBANK_OK);
	CU_ASSERT_EQUAL(api.boom_truth(1, &truth1), 0);
	CU_ASSERT_EQUAL(rvbank_delta(end[1], start[1], 64), truth1 - truth0);
	CU_ASSERT(end[0] > start[0] && end[2] > start[2]);
	CU_ASSERT_EQUAL(rvbank_boom_restore(&saved), RVBANK_OK);
	CU_ASSERT_EQUAL(rvbank_boom_save(&now), RVBANK_OK);
	CU_ASSERT_EQUAL(now.proc_tag, 0x77);
	CU_ASSERT_EQUAL(now.max_priv, saved.max_priv);
	const unsigned bad[] = {64};
	CU_ASSERT_EQUAL(rvbank_boom_read(bad, 1, end), RVBANK_EINVAL);
}

int main(int argc, char **argv)
{
	const char *model = getenv("RVBANK_TEST_MODEL");
	CU_pSuite suite;

	(void)argc;
	if (model == NULL)
		model = "lowrisc-hpc";
	bank_reexec_under_emulator(argv, model, "virtual");
	force_empty_pop = RVEMU_SYM(void (*)(unsigned), rvemu_hpc_force_empty_pop);
	manager_requests = RVEMU_SYM(int (*)(uint32_t, uint64_t *), rvemu_hpc_manager_requests);
	if (!bank_api_load(&api) || force_empty_pop == NULL || manager_requests == NULL) {
		fprintf(stderr, "test_rvbank: emulator control API incomplete\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite(strcmp(api.model_name(), "boom") == 0 ? "librvbank (boom)"
	                                                           : "librvbank (lowrisc-hpc)",
	                     NULL, NULL);
	if (strcmp(api.model_name(), "boom") == 0) {
		CU_add_test(suite, "BOOM: save, count, read deltas, restore", test_boom);
	} else {
		CU_add_test(suite, "batched read: one request per manager, exact", test_batched_read_exact);
		CU_add_test(suite, "the fewest CSR operations per request", test_fewest_operations);
		CU_add_test(suite, "a cancel only when a request is in flight",
		            test_cancel_only_when_pending);
		CU_add_test(suite, "interruptions and empty pops are retried", test_retries);
		CU_add_test(suite, "past the retry bound: an error, nothing in flight", test_retry_bound);
		CU_add_test(suite, "a silent manager times out and is cancelled",
		            test_silent_manager_times_out);
		CU_add_test(suite, "bad input", test_bad_input);
		CU_add_test(suite, "probe and useren", test_probe_and_useren);
		CU_add_test(suite, "deltas across a wrap", test_delta_wrap);
	}
	return cunit_run_all();
}
