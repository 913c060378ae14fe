// SPDX-License-Identifier: MIT
/* Bad input through PAPI's API must give an error code, never a crash (overlay patches upstream/10 and 13):
 *   - an event name longer than any buffer (9000 characters), bare and with a PMU prefix, through
 *     PAPI_event_name_to_code and PAPI_add_named_event: PAPI_ENOEVNT (or another error), no crash;
 *   - PAPI_start/PAPI_read/PAPI_stop on an EventSet kept after PAPI_shutdown: PAPI_ENOEVST.
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

int main(void)
{
	enum { LONG_NAME = 9000 };
	static char name[LONG_NAME + 64];
	long long values[1];
	int code, es = PAPI_NULL, rc;

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
