/* SPDX-License-Identifier: MIT */
/* The one way our CUnit programs run their registered suites: verbose output (scripts/test.sh sums the
 * "Run Summary" rows it prints) and an exit status that is non-zero when any assertion, test or suite set-up
 * failed, or when no test ran at all (a program that tests nothing must not pass). */
#ifndef CUNIT_RUN_H
#define CUNIT_RUN_H
#include <CUnit/Basic.h>

static inline int cunit_run_all(void)
{
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	unsigned bad =
	    CU_get_number_of_failures() + CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	unsigned ran = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	return (bad || ran == 0) ? 1 : 0;
}
#endif
