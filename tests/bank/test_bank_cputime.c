// SPDX-License-Identifier: MIT
/* The counter banks with the emulator's normal clock (thread CPU time): counts grow with the work done and
 * the ratios between counters follow the workload profile within 1%. Runs itself twice, once per model. */
#include <CUnit/Basic.h>
#include <math.h>
#include <sys/wait.h>

#include "bank_test.h"
#include "rvemu_tables.h"
#include "cunit_run.h"

static struct bank_api api;

/* Work the emulated core sees as CPU time. */
static void burn_cpu(unsigned rounds)
{
	volatile uint64_t x = 1;
	for (unsigned i = 0; i < rounds * 1000000u; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
}

static int within_percent(double got, double want, double percent)
{
	return want != 0 && fabs(got - want) / want <= percent / 100.0;
}

static const struct rvemu_hpc_profile *hpc_profile(void)
{
	const char *name = getenv("RVEMU_PROFILE");
	for (size_t i = 0; i < rvemu_nhpc_profiles; i++)
		if (strcmp(rvemu_hpc_profiles[i].name, name != NULL ? name : "gcc") == 0)
			return &rvemu_hpc_profiles[i];
	return NULL;
}

static void test_hpc_counts_follow_work(void)
{
	const struct rvemu_hpc_profile *p = hpc_profile();
	uint64_t first[8][7], second[7];
	unsigned hart = 0, nharts = 0;
	uint64_t best = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	while (nharts < 8 && hpc_algorithm2(RVHW_HPC_MANAGER_ID(nharts, 0), 0x7f, first[nharts]) >= 0 &&
	       api.hpc_truth(RVHW_HPC_MANAGER_ID(nharts, 0), 0, &second[0]) == 0)
		nharts++;
	CU_ASSERT_FATAL(nharts > 0);
	burn_cpu(50);
	/* the thread's own hart is the one whose counters grew most */
	for (unsigned h = 0; h < nharts; h++) {
		CU_ASSERT_FATAL(hpc_algorithm2(RVHW_HPC_MANAGER_ID(h, 0), 0x7f, second) >= 0);
		if (second[0] - first[h][0] > best) {
			best = second[0] - first[h][0];
			hart = h;
		}
	}
	CU_ASSERT_FATAL(best > 0);
	CU_ASSERT_FATAL(hpc_algorithm2(RVHW_HPC_MANAGER_ID(hart, 0), 0x7f, second) >= 0);
	for (unsigned bit = 0; bit < 7; bit++) {
		double delta = (double)(second[bit] - first[hart][bit]);
		double want =
		    (double)(second[0] - first[hart][0]) * (double)p->core_ppb[bit] / (double)p->core_ppb[0];
		CU_ASSERT_TRUE(second[bit] > first[hart][bit]);
		CU_ASSERT_TRUE(within_percent(delta, want, 1.0));
	}
}

static void test_boom_counts_follow_work(void)
{
	uint64_t cycles0, insts0, cycles1, insts1;

	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_MAXPRIV, 3, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_SET_ENABLE, 1, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_OK);
	burn_cpu(10);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 0, 0, &cycles0), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 1, 0, &insts0), RVHW_OK);
	burn_cpu(50);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 0, 0, &cycles1), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 1, 0, &insts1), RVHW_OK);
	CU_ASSERT_TRUE(cycles1 > cycles0 && insts1 > insts0);
	CU_ASSERT_TRUE(within_percent((double)insts1 / (double)cycles1,
	                              (double)rvemu_boom_events[1].ppb / (double)rvemu_boom_events[0].ppb,
	                              1.0));
}

static int run_suite(const char *model)
{
	CU_pSuite suite;

	if (!bank_api_load(&api) || strcmp(api.model_name(), model) != 0) {
		fprintf(stderr, "test_bank_cputime: emulator control API incomplete or wrong model\n");
		return 1;
	}
	if (api.advance(1) == 0) {
		fprintf(stderr, "test_bank_cputime: the clock is virtual, expected CPU time\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite(model, NULL, NULL);
	if (strcmp(model, "boom") == 0)
		CU_add_test(suite, "BOOM counts follow CPU time, ratios within 1%",
		            test_boom_counts_follow_work);
	else
		CU_add_test(suite, "HPC counts follow CPU time, ratios within 1%",
		            test_hpc_counts_follow_work);
	return cunit_run_all();
}

/* Parent: run one child per model; child (argv[1] = model): run under the emulator with the CPU clock. */
int main(int argc, char **argv)
{
	static const char *const models[] = {"lowrisc-hpc", "boom"};
	int failed = 0;

	if (argc > 1) {
		bank_reexec_under_emulator(argv, argv[1], "cpu");
		return run_suite(argv[1]);
	}
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		int status = 0;
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], models[i], (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	return failed;
}
