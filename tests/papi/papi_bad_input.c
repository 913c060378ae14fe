// SPDX-License-Identifier: MIT
/* Bad input through PAPI's API must give an error code, never a crash (overlay patches upstream/10 and 13):
 *   - an event name longer than any buffer (9000 characters), bare and with a PMU prefix, through
 *     PAPI_event_name_to_code and PAPI_add_named_event: PAPI_ENOEVNT (or another error), no crash;
 *   - PAPI_start/PAPI_read/PAPI_stop on an EventSet kept after PAPI_shutdown: PAPI_ENOEVST;
 *   - unknown names (FOO, PAPI_FOO, comma lists) through name_to_code, query and add: PAPI_ENOEVNT, "Event
 *     does not exist" (patch 27; they said "Not supported by component");
 *   - an event class named without its unit mask: query and add agree, whatever the order, on PAPI_EATTR
 *     (patch 28; the query said it existed once the add had failed, the add then failed with EINVAL).
 * With the argument "bank" (run on lowrisc-hpc): a counter-bank event and a perf_event event in one
 * EventSet: PAPI_ECOMBO, "Bad combination of features", not "Invalid argument" (patch 29); PAPI_TOT_CYC as
 * riscv_hpc defines it over riscv_hpc's CYCLES already overflowing: PAPI_ECNFLCT (patch 31).
 * Prints one line per check; exit status 1 if one failed. Run under the emulator (rvemu-run).
 */
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what, int code)
{
	const char *text = PAPI_strerror(code); /* NULL once PAPI is shut down */

	printf("%s %s (returned %d%s%s)\n", ok ? "ok  " : "FAIL", what, code, text ? ": " : "",
	       text ? text : "");
	if (!ok)
		failures++;
}

/* Every way of asking for NAME gives WANT. */
static void check_name(const char *name, int want)
{
	char what[256];
	int code = 0, es = PAPI_NULL, rc;

	if (PAPI_create_eventset(&es) != PAPI_OK) {
		check(0, "PAPI_create_eventset", PAPI_EMISC);
		return;
	}
	/* the add first: a failed add must not make the name exist afterwards */
	rc = PAPI_add_named_event(es, name);
	snprintf(what, sizeof(what), "PAPI_add_named_event(%s) is %s", name, PAPI_strerror(want));
	check(rc == want, what, rc);
	rc = PAPI_query_named_event(name);
	snprintf(what, sizeof(what), "PAPI_query_named_event(%s) is %s", name, PAPI_strerror(want));
	check(rc == want, what, rc);
	rc = PAPI_event_name_to_code(name, &code);
	snprintf(what, sizeof(what), "PAPI_event_name_to_code(%s) is %s", name, PAPI_strerror(want));
	check(rc == want, what, rc);
	rc = PAPI_add_named_event(es, name);
	snprintf(what, sizeof(what), "PAPI_add_named_event(%s) again is %s", name, PAPI_strerror(want));
	check(rc == want, what, rc);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

static void overflow_handler(int es, void *address, long long overflow_vector, void *context)
{
	(void)es;
	(void)address;
	(void)overflow_vector;
	(void)context;
}

/* lowrisc-hpc: riscv_hpc's bank event, then perf_event's cycles in the same EventSet. */
static int bank_mix(void)
{
	int es = PAPI_NULL, rc;

	if ((rc = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT ||
	    PAPI_create_eventset(&es) != PAPI_OK) {
		fprintf(stderr, "papi_bad_input: PAPI_library_init: %s\n", PAPI_strerror(rc));
		return 2;
	}
	rc = PAPI_add_named_event(es, "riscv_lowrisc_hpc::L1D_READ");
	check(rc == PAPI_OK, "PAPI_add_named_event(riscv_lowrisc_hpc::L1D_READ)", rc);
	rc = PAPI_add_named_event(es, "riscv_generic::CYCLES");
	check(rc == PAPI_ECOMBO, "perf_event's riscv_generic::CYCLES after a riscv_hpc event is PAPI_ECOMBO",
	      rc);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);

	/* perf_event owns PAPI_TOT_CYC here; riscv_hpc's own definition (riscv_hpc:::riscv_generic::CYCLES)
	 * counts it in a riscv_hpc EventSet (patch 31). That native event already overflowing: the preset is
	 * refused as any preset over an overflowing native event is (PAPI_ECNFLCT), not added twice. */
	es = PAPI_NULL;
	if (PAPI_create_eventset(&es) != PAPI_OK) {
		check(0, "PAPI_create_eventset", PAPI_EMISC);
		return 1;
	}
	rc = PAPI_add_named_event(es, "riscv_hpc:::riscv_generic::CYCLES");
	check(rc == PAPI_OK, "PAPI_add_named_event(riscv_hpc:::riscv_generic::CYCLES)", rc);
	int cycles = 0;
	PAPI_event_name_to_code("riscv_hpc:::riscv_generic::CYCLES", &cycles);
	rc = PAPI_overflow(es, cycles, 1000000, 0, overflow_handler);
	check(rc == PAPI_OK, "PAPI_overflow on riscv_hpc's CYCLES (software overflow)", rc);
	rc = PAPI_add_named_event(es, "PAPI_TOT_CYC");
	check(rc == PAPI_ECNFLCT,
	      "PAPI_TOT_CYC (riscv_hpc's definition) over the overflowing CYCLES is PAPI_ECNFLCT", rc);
	int n = 0;
	n = PAPI_num_events(es);
	check(n == 1, "the EventSet still holds one event", n);
	PAPI_shutdown();
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum { LONG_NAME = 9000 };
	static char name[LONG_NAME + 64];
	long long values[1];
	int code, es = PAPI_NULL, rc;

	if (argc > 1 && strcmp(argv[1], "bank") == 0)
		return bank_mix();

	if ((rc = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT) {
		fprintf(stderr, "papi_bad_input: PAPI_library_init: %s\n", PAPI_strerror(rc));
		return 2;
	}
	memset(name, 'A', LONG_NAME);
	name[LONG_NAME] = '\0';
	rc = PAPI_event_name_to_code(name, &code);
	check(rc != PAPI_OK, "PAPI_event_name_to_code(9000-character name) is an error", rc);

	snprintf(name, sizeof(name), "riscv_sifive_u74::");
	memset(name + strlen(name), 'B', LONG_NAME);
	name[LONG_NAME + strlen("riscv_sifive_u74::")] = '\0';
	rc = PAPI_event_name_to_code(name, &code);
	check(rc != PAPI_OK, "PAPI_event_name_to_code(pmu::9000-character name) is an error", rc);

	check_name("FOO", PAPI_ENOEVNT);
	check_name("PAPI_FOO", PAPI_ENOEVNT);
	check_name("PAPI_TOT_CYC,PAPI_TOT_INS", PAPI_ENOEVNT);
	check_name("FOO,BAR", PAPI_ENOEVNT);
	check_name("riscv_sifive_u74::INSTRUCTION_COMMIT", PAPI_EATTR);
	check_name("riscv_sifive_u74::INSTRUCTION_COMMIT:NO_SUCH_MASK", PAPI_ENOEVNT);

	if ((rc = PAPI_create_eventset(&es)) != PAPI_OK) {
		fprintf(stderr, "papi_bad_input: PAPI_create_eventset: %s\n", PAPI_strerror(rc));
		return 2;
	}
	rc = PAPI_add_named_event(es, name);
	check(rc != PAPI_OK, "PAPI_add_named_event(pmu::9000-character name) is an error", rc);
	rc = PAPI_add_named_event(es, "PAPI_TOT_CYC");
	check(rc == PAPI_OK, "PAPI_add_named_event(PAPI_TOT_CYC) still works", rc);

	PAPI_shutdown();
	rc = PAPI_start(es);
	check(rc == PAPI_ENOEVST, "PAPI_start after PAPI_shutdown is PAPI_ENOEVST", rc);
	rc = PAPI_read(es, values);
	check(rc == PAPI_ENOEVST, "PAPI_read after PAPI_shutdown is PAPI_ENOEVST", rc);
	rc = PAPI_stop(es, values);
	check(rc == PAPI_ENOEVST, "PAPI_stop after PAPI_shutdown is PAPI_ENOEVST", rc);
	rc = PAPI_start(1 << 20);
	check(rc == PAPI_ENOEVST, "PAPI_start of an EventSet number never created is PAPI_ENOEVST", rc);
	return failures ? 1 : 0;
}
