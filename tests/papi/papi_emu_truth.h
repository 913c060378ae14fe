/* SPDX-License-Identifier: MIT */
/* The emulator's ground truth of PAPI events (presets and natives), for the test programs that compare
 * PAPI's counts with it (test_papi_presets, papi_truth). Header-only: each program includes it once.
 *
 * A native term is encoded with libpfm4 (as PAPI's perf_event component does): PERF_TYPE_HARDWARE cycles and
 * instructions are the emulator's CYCLES/INSTRUCTIONS, PERF_TYPE_RAW is an mhpmevent value (rvemu_truth_raw:
 * a U74 class mask is the sum of its bits). A preset combines its terms as it says (NOT_DERIVED,
 * DERIVED_ADD, DERIVED_SUB); other derivations are refused, not guessed.
 */
#ifndef PAPI_EMU_TRUTH_H
#define PAPI_EMU_TRUTH_H

#include <dlfcn.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rvemu.h"

typedef int (*truth_advance_fn)(uint64_t);
typedef int (*truth_name_fn)(const char *, uint64_t *);
typedef int (*truth_raw_fn)(uint64_t, uint64_t *);

static truth_advance_fn emu_advance;
static truth_name_fn emu_truth;
static truth_raw_fn emu_truth_raw;

/* 0 when the emulator's control API was found (the program runs under rvemu-run). */
static int truth_bind(void)
{
	emu_advance = RVEMU_SYM(truth_advance_fn, rvemu_advance);
	emu_truth = RVEMU_SYM(truth_name_fn, rvemu_truth);
	emu_truth_raw = RVEMU_SYM(truth_raw_fn, rvemu_truth_raw);
	return emu_advance && emu_truth && emu_truth_raw ? 0 : -1;
}

/* Ground truth of one native event (a PAPI native name) for the calling thread. */
static int native_truth(const char *name, uint64_t *out)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS) {
		fprintf(stderr, "libpfm4 cannot encode %s\n", name);
		return -1;
	}
	if (attr.type == PERF_TYPE_HARDWARE && attr.config == PERF_COUNT_HW_CPU_CYCLES)
		return emu_truth("CYCLES", out);
	if (attr.type == PERF_TYPE_HARDWARE && attr.config == PERF_COUNT_HW_INSTRUCTIONS)
		return emu_truth("INSTRUCTIONS", out);
	if (attr.type == PERF_TYPE_RAW)
		return emu_truth_raw(attr.config, out);
	fprintf(stderr, "%s: unexpected perf type %u\n", name, attr.type);
	return -1;
}

/* Truth of every term of the event, in PAPI's order (a native event is its own single term). */
static int event_terms_truth(const PAPI_event_info_t *info, uint64_t *terms)
{
	for (unsigned i = 0; i < info->count; i++)
		if (native_truth(info->name[i], &terms[i]) != 0)
			return -1;
	return 0;
}

/* The event's value from its terms' deltas; -1 with a message for a derivation we do not model. */
static int combine_terms(const PAPI_event_info_t *info, const uint64_t *delta, long long *value)
{
	int sub = strcmp(info->derived, "DERIVED_SUB") == 0;
	if (info->count > 1 && !sub && strcmp(info->derived, "DERIVED_ADD") != 0) {
		fprintf(stderr, "%s: derivation %s not modelled\n", info->symbol, info->derived);
		return -1;
	}
	long long v = (long long)delta[0];
	for (unsigned i = 1; i < info->count; i++)
		v = sub ? v - (long long)delta[i] : v + (long long)delta[i];
	*value = v;
	return 0;
}

#endif
