// SPDX-License-Identifier: MIT
/* papi_truth CYCLES EVENT...: the emulator's ground truth of PAPI events (presets or natives) over CYCLES
 * cycles of the calling thread, one "EVENT : count" line each (the format of papi_command_line).
 *
 * Run under rvemu-run --clock virtual. run-papi-tests.sh uses it to check papi_command_line exactly: that
 * utility runs its own loop, so it runs with RVEMU_READ_ADVANCE=CYCLES (every read() of an event adds CYCLES
 * virtual cycles first) and the one read PAPI_stop does between PAPI_start and the stop sees exactly CYCLES
 * cycles. With CYCLES a multiple of 10^9 every event's count over any such window is exactly its rate in
 * events per 10^9 cycles times CYCLES/10^9, so the window here (0..CYCLES) has the same counts.
 */
#include <errno.h>
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "papi_emu_truth.h"

static int parse_cycles(const char *text, uint64_t *cycles)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end || text[0] == '-' || v == 0)
		return -1;
	*cycles = v;
	return 0;
}

/* Truth of the event's terms: a preset's natives, or the native event itself. */
static int terms_truth(const char *name, int code, PAPI_event_info_t *info, uint64_t *terms)
{
	if (IS_PRESET(code))
		return event_terms_truth(info, terms);
	info->count = 1;
	return native_truth(name, terms); /* as given: PAPI may show a native without its PMU prefix */
}

/* Prints the truth of one event over `cycles` cycles; 0 on success. */
static int print_truth(const char *name, uint64_t cycles)
{
	int code;
	PAPI_event_info_t info;
	uint64_t before[PAPI_MAX_INFO_TERMS], after[PAPI_MAX_INFO_TERMS], delta[PAPI_MAX_INFO_TERMS];
	long long value;

	if (PAPI_event_name_to_code(name, &code) != PAPI_OK || PAPI_get_event_info(code, &info) != PAPI_OK ||
	    (IS_PRESET(code) && info.count == 0)) {
		fprintf(stderr, "papi_truth: no such PAPI event on this machine: %s\n", name);
		return -1;
	}
	if (terms_truth(name, code, &info, before) != 0 || emu_advance(cycles) != 0 ||
	    terms_truth(name, code, &info, after) != 0)
		return -1;
	for (unsigned i = 0; i < info.count; i++)
		delta[i] = after[i] - before[i];
	if (combine_terms(&info, delta, &value) != 0)
		return -1;
	printf("%s : %lld\n", name, value);
	return 0;
}
int main(int argc, char **argv)
{
	uint64_t cycles;
	if (argc < 3 || parse_cycles(argv[1], &cycles) != 0) {
		fprintf(stderr,
		        "usage: papi_truth CYCLES EVENT... (CYCLES a positive number; run under rvemu-run "
		        "--clock virtual)\n");
		return 2;
	}
	if (truth_bind() != 0) {
		fprintf(stderr,
		        "papi_truth: the emulator is not loaded (run me under rvemu-run --clock virtual)\n");
		return 2;
	}
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "papi_truth: PAPI_library_init failed\n");
		return 1;
	}
	for (int i = 2; i < argc; i++)
		if (print_truth(argv[i], cycles) != 0)
			return 1;
	return 0;
}
