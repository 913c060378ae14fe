// SPDX-License-Identifier: MIT
/*
 * riscv_hpc_basic: test case for the riscv_hpc component (counter banks of RISC-V).
 *
 * Every native event of the component maps from its code to its name and back to the same event; an EventSet
 * of the component's first events starts, reads twice around some work and stops: no count goes backwards
 * (the banks are free-running counters and the component subtracts each EventSet's baseline), and at least
 * one count grows while the test works (the banks count cycles, instructions and cache accesses of the hart).
 * Skipped when the component is disabled (no counter bank on this machine, or no user access to it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papi.h"
#include "papi_test.h"

#define BASIC_TEST_EVENTS 4

static volatile double sink;

static void work(void)
{
	double x = 1.0;
	for (int i = 0; i < 2000000; i++)
		x = x * 1.0000001 + 0.5;
	sink = x;
}

int main(int argc, char **argv)
{
	int quiet = tests_quiet(argc, argv);
	int retval = PAPI_library_init(PAPI_VER_CURRENT);
	if (retval != PAPI_VER_CURRENT)
		test_fail(__FILE__, __LINE__, "PAPI_library_init", retval);

	int cid = PAPI_get_component_index("riscv_hpc");
	if (cid < 0)
		test_skip(__FILE__, __LINE__, "riscv_hpc component not configured", 0);
	const PAPI_component_info_t *cmpinfo = PAPI_get_component_info(cid);
	if (cmpinfo == NULL)
		test_fail(__FILE__, __LINE__, "PAPI_get_component_info", 0);
	if (cmpinfo->disabled) {
		if (!quiet)
			printf("riscv_hpc disabled: %s\n", cmpinfo->disabled_reason);
		test_skip(__FILE__, __LINE__, "riscv_hpc component disabled", 0);
	}

	/* every native event: code -> name -> a code with the same name and the same description (PAPI may
	 * give an event found by name another code than the one it enumerated; both must name the same event)
	 */
	int codes[BASIC_TEST_EVENTS], ncodes = 0, nevents = 0;
	int code = PAPI_NATIVE_MASK;
	char name[PAPI_MAX_STR_LEN], back_name[PAPI_MAX_STR_LEN];
	retval = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid);
	while (retval == PAPI_OK) {
		int back = 0;
		PAPI_event_info_t info, back_info;
		retval = PAPI_event_code_to_name(code, name);
		if (retval != PAPI_OK)
			test_fail(__FILE__, __LINE__, "PAPI_event_code_to_name", retval);
		retval = PAPI_event_name_to_code(name, &back);
		if (retval != PAPI_OK)
			test_fail(__FILE__, __LINE__, "PAPI_event_name_to_code of an enumerated name",
			          retval);
		if (PAPI_event_code_to_name(back, back_name) != PAPI_OK || strcmp(name, back_name) != 0 ||
		    PAPI_get_event_info(code, &info) != PAPI_OK ||
		    PAPI_get_event_info(back, &back_info) != PAPI_OK ||
		    strcmp(info.long_descr, back_info.long_descr) != 0) {
			fprintf(stderr, "%s (%#x) found by name as %s (%#x)\n", name, (unsigned)code,
			        back_name, (unsigned)back);
			test_fail(__FILE__, __LINE__, "an event's name does not lead back to the same event",
			          0);
		}
		if (ncodes < BASIC_TEST_EVENTS)
			codes[ncodes++] = code;
		nevents++;
		retval = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid);
	}
	if (nevents != cmpinfo->num_native_events) {
		fprintf(stderr, "enumerated %d events, the component says %d\n", nevents,
		        cmpinfo->num_native_events);
		test_fail(__FILE__, __LINE__, "native event count", 0);
	}
	if (ncodes == 0)
		test_fail(__FILE__, __LINE__, "an enabled riscv_hpc component without events", 0);
	if (!quiet)
		printf("riscv_hpc: %d native events, names lead back to their events\n", nevents);

	/* count: reads never go backwards, something grows */
	int eventset = PAPI_NULL;
	long long first[BASIC_TEST_EVENTS], last[BASIC_TEST_EVENTS];
	retval = PAPI_create_eventset(&eventset);
	if (retval != PAPI_OK)
		test_fail(__FILE__, __LINE__, "PAPI_create_eventset", retval);
	for (int i = 0; i < ncodes; i++) {
		retval = PAPI_add_event(eventset, codes[i]);
		if (retval != PAPI_OK)
			test_fail(__FILE__, __LINE__, "PAPI_add_event", retval);
	}
	retval = PAPI_start(eventset);
	if (retval != PAPI_OK)
		test_fail(__FILE__, __LINE__, "PAPI_start", retval);
	work();
	retval = PAPI_read(eventset, first);
	if (retval != PAPI_OK)
		test_fail(__FILE__, __LINE__, "PAPI_read", retval);
	work();
	retval = PAPI_stop(eventset, last);
	if (retval != PAPI_OK)
		test_fail(__FILE__, __LINE__, "PAPI_stop", retval);

	int grew = 0;
	for (int i = 0; i < ncodes; i++) {
		PAPI_event_code_to_name(codes[i], name);
		if (!quiet)
			printf("%-60s %12lld %12lld\n", name, first[i], last[i]);
		if (first[i] < 0 || last[i] < first[i]) {
			fprintf(stderr, "%s went backwards: %lld then %lld\n", name, first[i], last[i]);
			test_fail(__FILE__, __LINE__, "a count went backwards", 0);
		}
		grew |= last[i] > 0;
	}
	if (!grew)
		test_fail(__FILE__, __LINE__, "no count grew while the test worked", 0);

	PAPI_cleanup_eventset(eventset);
	PAPI_destroy_eventset(&eventset);
	test_pass(__FILE__);
	return 0;
}
