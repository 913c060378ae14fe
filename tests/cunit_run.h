/* SPDX-License-Identifier: MIT */
/* The one way our CUnit programs run their registered suites: verbose output (scripts/count-tests.sh sums
 * the "Run Summary" rows it prints) and an exit status that is non-zero when any assertion, test or suite
 * set-up failed, or when no test ran at all (a program that tests nothing must not pass).
 *
 * Launchers (programs that re-run themselves or another CUnit program in a child, e.g. under the emulator)
 * share their output with the child, so the child's Run Summary is already in the log. A child that ran its
 * tests and reported failures exits CUNIT_EXIT_REPORTED: the launcher passes it to cunit_relay(), which
 * makes the launcher's own exit status fail without failing a second CUnit test for the same failures
 * (the counts would say 2 failed where 1 did). Any other non-zero status (a crash, a child that never got
 * to its tests) is the launcher's own failure. */
#ifndef CUNIT_RUN_H
#define CUNIT_RUN_H
#include <CUnit/Basic.h>
#include <stdio.h>

/* Whether the program runs under valgrind, which serializes its threads and delivers signals late: the tests
 * of host scheduling and signal timing say they cannot judge there (0 without valgrind's header). */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
static inline int cunit_running_on_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
	return RUNNING_ON_VALGRIND != 0;
#else
	return 0;
#endif
}

#define CUNIT_EXIT_FAILED   1 /* no test ran, or CUnit itself failed: no Run Summary tells of it */
#define CUNIT_EXIT_REPORTED 3 /* tests ran and some failed: the Run Summary counts them */

static unsigned cunit_relayed_failures; /* children whose failures their own Run Summary counted */

/* For a launcher's assertion: 1 if the child passed, or failed and counted its failures itself
 * (the launcher then exits non-zero); 0 if the child failed any other way. */
static inline int cunit_relay(int exit_status)
{
	if (exit_status == CUNIT_EXIT_REPORTED) {
		fprintf(stderr, "(a child's tests failed: they are counted in its Run Summary above)\n");
		cunit_relayed_failures++;
		return 1;
	}
	return exit_status == 0;
}

static inline int cunit_run_all(void)
{
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return CUNIT_EXIT_FAILED;
	}
	unsigned bad =
	    CU_get_number_of_failures() + CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	unsigned ran = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (ran == 0)
		return CUNIT_EXIT_FAILED;
	return bad || cunit_relayed_failures ? CUNIT_EXIT_REPORTED : 0;
}
#endif
