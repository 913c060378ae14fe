/* SPDX-License-Identifier: MIT */
/* The emulator's ground truth of PAPI events (presets and natives), for the test programs that compare
 * PAPI's counts with it (test_papi_presets, papi_truth, test_riscv_hpc). Header-only: each program includes
 * it once.
 *
 * A native term is encoded with libpfm4 (as PAPI's perf_event component does): PERF_TYPE_HARDWARE cycles and
 * instructions are the emulator's CYCLES/INSTRUCTIONS, PERF_TYPE_RAW is an mhpmevent value (rvemu_truth_raw:
 * a U74 class mask is the sum of its bits). Counter-bank events (riscv_hpc component) use libpfm4's
 * PFM_OS_NONE code: ManagerID << 6 | hpcm bit (rvemu_hpc_truth; without :hart=/:slice= the sum over every
 * manager of the kind, as the component counts it) or the BOOM counter index (rvemu_boom_truth, all
 * privilege levels: the component's default domain). A preset combines its terms as it says (NOT_DERIVED,
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
#include <stdlib.h>
#include <string.h>

#include "rvemu.h"

typedef int (*truth_advance_fn)(uint64_t);
typedef int (*truth_name_fn)(const char *, uint64_t *);
typedef int (*truth_raw_fn)(uint64_t, uint64_t *);
typedef int (*truth_hpc_fn)(uint32_t, unsigned, uint64_t *);
typedef int (*truth_boom_fn)(unsigned, uint64_t *);

static truth_advance_fn emu_advance;
static truth_name_fn emu_truth;
static truth_raw_fn emu_truth_raw;
static truth_hpc_fn emu_hpc_truth;
static truth_boom_fn emu_boom_truth;

/* 0 when the emulator's control API was found (the program runs under rvemu-run). */
static inline int truth_bind(void)
{
	emu_advance = RVEMU_SYM(truth_advance_fn, rvemu_advance);
	emu_truth = RVEMU_SYM(truth_name_fn, rvemu_truth);
	emu_truth_raw = RVEMU_SYM(truth_raw_fn, rvemu_truth_raw);
	emu_hpc_truth = RVEMU_SYM(truth_hpc_fn, rvemu_hpc_truth);
	emu_boom_truth = RVEMU_SYM(truth_boom_fn, rvemu_boom_truth);
	return emu_hpc_truth && emu_boom_truth && emu_advance && emu_truth && emu_truth_raw ? 0 : -1;
}

#define TRUTH_HPC_L2_ID 0x1000u /* ManagerID of L2 slice 0: (0x100 + 0) << 4 */

/* Truth of a counter-bank event ("[riscv_hpc:::]pmu::EVENT[:hart=N|:slice=N]"); 1 if `name` is none. */
static inline int bank_truth(const char *name, uint64_t *out)
{
	pfm_pmu_encode_arg_t arg;
	uint64_t code, sum = 0, one;

	if (strncmp(name, "riscv_hpc:::", 12) == 0)
		name += 12;
	if (strncmp(name, "riscv_lowrisc_hpc::", 19) != 0 && strncmp(name, "riscv_ucb_boom::", 16) != 0)
		return 1;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg) != PFM_SUCCESS ||
	    arg.count < 1) {
		fprintf(stderr, "libpfm4 cannot encode %s\n", name);
		return -1;
	}
	code = arg.codes[0];
	free(arg.codes);
	if (strncmp(name, "riscv_ucb_boom::", 16) == 0) /* the counter index */
		return emu_boom_truth((unsigned)code, out);
	if (strstr(name, ":hart=") != NULL || strstr(name, ":slice=") != NULL)
		return emu_hpc_truth((uint32_t)(code >> 6), (unsigned)(code & 0x3f), out);
	/* every manager of the kind: harts 0.., or L2 slices 0.., until the emulator knows no more */
	uint32_t first = (uint32_t)(code >> 6) >= TRUTH_HPC_L2_ID ? TRUTH_HPC_L2_ID : 0;
	for (uint32_t m = 0; m < 256; m++) {
		if (emu_hpc_truth(first + (m << 4), (unsigned)(code & 0x3f), &one) != 0)
			break;
		sum += one;
	}
	*out = sum;
	return 0;
}

/* Ground truth of one native event (a PAPI native name) for the calling thread. */
static inline int native_truth(const char *name, uint64_t *out)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int bank = bank_truth(name, out);

	if (bank <= 0)
		return bank;
	if (strncmp(name, "riscv_hpc:::", 12) == 0) /* the component's core counters: riscv_generic events */
		name += 12;
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
static inline int event_terms_truth(const PAPI_event_info_t *info, uint64_t *terms)
{
	for (unsigned i = 0; i < info->count; i++)
		if (native_truth(info->name[i], &terms[i]) != 0)
			return -1;
	return 0;
}

/* The event's value from its terms' deltas; -1 with a message for a derivation we do not model. */
static inline int combine_terms(const PAPI_event_info_t *info, const uint64_t *delta, long long *value)
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
