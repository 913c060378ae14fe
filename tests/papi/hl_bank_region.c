// SPDX-License-Identifier: MIT
/* hl_bank_region: two PAPI_hl_region_begin/end regions over the events of PAPI_EVENTS (counter-bank
 * natives and presets included), printing the emulator's truth of each region as
 * "truth <region> <event> <count>" lines. Run under rvemu-run --clock virtual; run-papi-tests.sh compares
 * the lines with the JSON PAPI writes at exit (papi_hl_output/rank_*.json).
 */
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papi_emu_truth.h"

#define MAX_EVENTS 16

static char *events[MAX_EVENTS];
static int nevents;

/* Truth of a PAPI event name: a native, or a preset combined from its terms. */
static int event_truth(const char *name, long long *out)
{
	int code;
	PAPI_event_info_t info;
	uint64_t terms[PAPI_MAX_INFO_TERMS];

	if (PAPI_event_name_to_code(name, &code) != PAPI_OK || PAPI_get_event_info(code, &info) != PAPI_OK)
		return -1;
	if (!IS_PRESET(code)) {
		if (native_truth(name, &terms[0]) != 0)
			return -1;
		*out = (long long)terms[0];
		return 0;
	}
	if (event_terms_truth(&info, terms) != 0)
		return -1;
	return combine_terms(&info, terms, out);
}

static int snapshot(long long *v)
{
	for (int i = 0; i < nevents; i++)
		if (event_truth(events[i], &v[i]) != 0) {
			fprintf(stderr, "hl_bank_region: no truth for %s\n", events[i]);
			return -1;
		}
	return 0;
}

static int region(const char *name, uint64_t cycles)
{
	long long before[MAX_EVENTS], after[MAX_EVENTS];

	if (snapshot(before) != 0 || PAPI_hl_region_begin(name) != PAPI_OK || emu_advance(cycles) != 0 ||
	    PAPI_hl_region_end(name) != PAPI_OK || snapshot(after) != 0) {
		fprintf(stderr, "hl_bank_region: region %s failed\n", name);
		return -1;
	}
	for (int i = 0; i < nevents; i++)
		printf("truth %s %s %lld\n", name, events[i], after[i] - before[i]);
	return 0;
}

int main(void)
{
	const char *list = getenv("PAPI_EVENTS");
	char *copy, *save = NULL;

	if (list == NULL || truth_bind() != 0) {
		fprintf(stderr,
		        "hl_bank_region: set PAPI_EVENTS and run me under rvemu-run --clock virtual\n");
		return 2;
	}
	copy = strdup(list);
	for (char *t = strtok_r(copy, ",", &save); t != NULL && nevents < MAX_EVENTS;
	     t = strtok_r(NULL, ",", &save))
		events[nevents++] = t;
	/* the truth needs libpfm4 and the event tables: initialize PAPI first (the hl API shares it) */
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "hl_bank_region: PAPI_library_init failed\n");
		return 1;
	}
	if (region("first", 300000000) != 0 || region("second", 700000000) != 0)
		return 1;
	return 0;
}
