// SPDX-License-Identifier: MIT
/* BOOM extended counter bank under the emulator (model boom, virtual clock), through seam 2's hints. */
#include <CUnit/Basic.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bank_test.h"
#include "mach.h" /* emu_scale */
#include "rvemu_tables.h"
#include "cunit_run.h"

#define KERNEL_PERMILLE  "50"
#define MACHINE_PERMILLE "10"

static struct bank_api api;

static uint64_t boom_read(unsigned counter)
{
	uint64_t v = ~0ull;
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + counter, 0, &v), RVHW_OK);
	return v;
}

static void boom_setup(uint64_t proc_tag, uint64_t max_priv, uint64_t enable)
{
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_PROCTAG, proc_tag, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_MAXPRIV, max_priv, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_ENABLE, enable, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_OK);
}

static void test_exact_counts(void)
{
	uint64_t truth;

	boom_setup(RVHW_BOOM_PROCTAG_COUNTED, 3, 1);
	CU_ASSERT_EQUAL(api.advance(123456789), 0);
	for (unsigned n = 0; n < RVHW_BOOM_COUNTERS; n++) {
		CU_ASSERT_EQUAL_FATAL(api.boom_truth(n, &truth), 0);
		CU_ASSERT_EQUAL(boom_read(n), truth);
	}
	CU_ASSERT_EQUAL(boom_read(63), 0); /* not connected */
	CU_ASSERT_EQUAL(api.boom_truth(0, &truth), 0);
	CU_ASSERT_TRUE(truth > 123000000 && truth <= 123456789); /* cycles; the three shares round down */
	CU_ASSERT_TRUE(boom_read(1) > boom_read(0));             /* the profile's IPC is 1.2 */
}

static void test_reset(void)
{
	uint64_t truth;

	boom_setup(RVHW_BOOM_PROCTAG_COUNTED, 3, 1);
	api.advance(5000000);
	CU_ASSERT_TRUE(boom_read(0) > 0);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_OK);
	for (unsigned n = 0; n < RVHW_BOOM_COUNTERS; n++)
		CU_ASSERT_EQUAL(boom_read(n), 0);
	CU_ASSERT_EQUAL(api.boom_truth(1, &truth), 0);
	CU_ASSERT_EQUAL(truth, 0);
	api.advance(1000);
	CU_ASSERT_EQUAL(api.boom_truth(0, &truth), 0);
	CU_ASSERT_EQUAL(boom_read(0), truth);
}

static void test_proctag_gating(void)
{
	uint64_t tag = 0, before, truth;

	boom_setup(0x42, 3, 1);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_PROCTAG, 0, &tag), RVHW_OK);
	CU_ASSERT_EQUAL(tag, 0x42);
	api.advance(1000000);
	CU_ASSERT_EQUAL(boom_read(0), 0);
	CU_ASSERT_EQUAL(boom_read(1), 0);
	CU_ASSERT_EQUAL(api.boom_truth(0, &truth), 0);
	CU_ASSERT_TRUE(truth > 0); /* the events happened; the bank did not count them */
	/* tagging the process starts counting from that point */
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL), RVHW_OK);
	before = boom_read(0);
	api.advance(1000000);
	CU_ASSERT_TRUE(boom_read(0) > before);
	/* pfc_enable = 0 stops it again */
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_ENABLE, 0, NULL), RVHW_OK);
	before = boom_read(0);
	api.advance(1000000);
	CU_ASSERT_EQUAL(boom_read(0), before);
}

/* Expected count of counter n over `cycles` at pfc_maxPriv = level, from the model (emulator/bank_boom.c). */
static uint64_t expected(unsigned n, uint64_t cycles, unsigned level)
{
	uint64_t rate = rvemu_boom_events[n].ppb, k = strtoull(KERNEL_PERMILLE, NULL, 10),
	         m = strtoull(MACHINE_PERMILLE, NULL, 10);
	uint64_t v = emu_scale(cycles, rate * (1000 - k - m) / 1000);
	if (level >= 1)
		v += emu_scale(cycles, rate * k / 1000);
	if (level == 3)
		v += emu_scale(cycles, rate * m / 1000);
	return v;
}

static void test_maxpriv_levels(void)
{
	const uint64_t cycles = 10000000;
	uint64_t got[4][RVEMU_BOOM_COUNTERS], priv = 9, truth;

	for (unsigned level = 0; level < 4; level++) {
		boom_setup(RVHW_BOOM_PROCTAG_COUNTED, level, 1);
		api.advance(cycles);
		for (unsigned n = 0; n < RVEMU_BOOM_COUNTERS; n++) {
			got[level][n] = boom_read(n);
			CU_ASSERT_EQUAL(got[level][n], expected(n, cycles, level));
		}
	}
	/* user < user + supervisor (2 is no level of its own) < all levels = the truth */
	CU_ASSERT_TRUE(got[0][0] < got[1][0]);
	CU_ASSERT_EQUAL(got[1][0], got[2][0]);
	CU_ASSERT_TRUE(got[1][0] < got[3][0]);
	CU_ASSERT_EQUAL(api.boom_truth(0, &truth), 0);
	CU_ASSERT_EQUAL(got[3][0], truth);
	/* pfc_maxPriv = rs1 % 4 */
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_MAXPRIV, 7, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_MAXPRIV, 0, &priv), RVHW_OK);
	CU_ASSERT_EQUAL(priv, 3);
}

static void test_bad_input(void)
{
	uint64_t v;
	const unsigned bad_tags[] = {0, 2, 8, 34, 64, 126, 192, 255, 4096};

	for (size_t i = 0; i < sizeof(bad_tags) / sizeof(bad_tags[0]); i++)
		CU_ASSERT_EQUAL(rvhw_boom_op(bad_tags[i], 0, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE, 0, NULL), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_PROCTAG, 0, NULL), RVHW_EINVAL);
	CU_ASSERT_EQUAL(api.boom_truth(64, &v), -1);
	CU_ASSERT_EQUAL(api.boom_truth(0, NULL), -1);
	/* no distributed HPC on this machine */
#if defined(__riscv)
	/* on riscv64 seam 2 issues the real csrr/csrw, and a core without the CSR raises SIGILL, which the
	 * emulator's CSR-trap front end hands to the default action as a board's kernel would: in a child */
	for (int k = 0; k < 2; k++) {
		fflush(NULL);
		pid_t pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			if (k == 0)
				rvhw_csr_read(RVHW_CSR_HPCC, &v);
			else
				rvhw_csr_write(RVHW_CSR_HPCM, 1);
			_exit(0);
		}
		int st = 0;
		CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
		CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL);
	}
#else
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, &v), RVHW_ENOHW);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 1), RVHW_ENOHW);
#endif
	CU_ASSERT_EQUAL(api.hpc_truth(0, 0, &v), -1);
}

int main(int argc, char **argv)
{
	CU_pSuite suite;

	(void)argc;
	setenv("RVEMU_BOOM_KERNEL_PERMILLE", KERNEL_PERMILLE, 1);
	setenv("RVEMU_BOOM_MACHINE_PERMILLE", MACHINE_PERMILLE, 1);
	bank_reexec_under_emulator(argv, "boom", "virtual");
	if (!bank_api_load(&api) || strcmp(api.model_name(), "boom") != 0) {
		fprintf(stderr, "test_boom: emulator control API incomplete or wrong model\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("BOOM counter bank (virtual clock)", NULL, NULL);
	CU_add_test(suite, "exact counter values", test_exact_counts);
	CU_add_test(suite, "reset", test_reset);
	CU_add_test(suite, "procTag and pfc_enable gate counting", test_proctag_gating);
	CU_add_test(suite, "pfc_maxPriv levels", test_maxpriv_levels);
	CU_add_test(suite, "bad input", test_bad_input);
	return cunit_run_all();
}
