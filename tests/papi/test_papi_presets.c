// SPDX-License-Identifier: MIT
/* Every available PAPI preset, alone in an EventSet, counts exactly what the emulator says happened.
 *
 * Runs under rvemu-run with the virtual clock (RVEMU_CLOCK=virtual): between PAPI_start and PAPI_stop the
 * test advances its thread by a fixed number of cycles, so every event advances by its profile rate. The
 * expected value of a preset is computed from the emulator's ground truth of each native term (found
 * with libpfm4's perf encoding: PERF_TYPE_HARDWARE -> CYCLES/INSTRUCTIONS, raw -> mhpmevent) combined
 * as the preset says (NOT_DERIVED, DERIVED_ADD, DERIVED_SUB). Also: PAPI_start and PAPI_reset zero every
 * event of a two-event set (a perf_event group), not only its leader; events added one by one, then one
 * removed, then added back, each count their truth (perf_event keeps the events already open
 * when one is appended, upstream patch 45; a removal keeps each event's code, patch 49, and PAPI reads each
 * event left at its new place, patch 58); on a core with Sscofpmf, PAPI_overflow on an event follows it when
 * an event before it is removed (patch 59). Built and run by
 * run-papi-tests.sh.
 */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <papi.h>
#include <perfmon/pfmlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papi_emu_truth.h"
#include "cunit_run.h"

/* 10^9 cycles: every event of every profile occurs at least 50 times in that window, so each preset's check
 * compares non-zero counts (and stays below the U74's 40-bit counter width). */
#define ADVANCE_CYCLES 1000000000ULL

static int presets_checked, presets_available;

/* PAPI's count of the preset over ADVANCE_CYCLES virtual cycles == the truth of its terms combined. */
static void count_and_compare(int set, const PAPI_event_info_t *info)
{
	uint64_t before[PAPI_MAX_INFO_TERMS], after[PAPI_MAX_INFO_TERMS], delta[PAPI_MAX_INFO_TERMS];
	long long value = -1, want = -2;

	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(event_terms_truth(info, before), 0);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE_CYCLES), 0);
	CU_ASSERT_EQUAL(event_terms_truth(info, after), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, &value), PAPI_OK);
	for (unsigned i = 0; i < info->count; i++)
		delta[i] = after[i] - before[i];
	CU_ASSERT_EQUAL(combine_terms(info, delta, &want), 0);
	if (value != want)
		fprintf(stderr, "%s (%s, %u terms): PAPI %lld, truth %lld\n", info->symbol, info->derived,
		        info->count, value, want);
	CU_ASSERT_EQUAL(value, want);
	if (want <= 0)
		fprintf(stderr, "%s: truth is %lld over %llu cycles; the check would prove nothing\n",
		        info->symbol, want, ADVANCE_CYCLES);
	CU_ASSERT(want > 0);
	presets_checked++;
}

static void check_one_preset(int code, const PAPI_event_info_t *info)
{
	int set = PAPI_NULL;

	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	int rc = PAPI_add_event(set, code);
	if (rc != PAPI_OK)
		fprintf(stderr, "%s is reported available but cannot be added alone: %s\n", info->symbol,
		        PAPI_strerror(rc));
	CU_ASSERT_EQUAL(rc, PAPI_OK);
	if (rc == PAPI_OK)
		count_and_compare(set, info);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

static void test_every_available_preset(void)
{
	int code = PAPI_PRESET_MASK;
	CU_ASSERT_EQUAL_FATAL(PAPI_enum_event(&code, PAPI_ENUM_FIRST), PAPI_OK);
	do {
		PAPI_event_info_t info;
		if (PAPI_get_event_info(code, &info) != PAPI_OK || info.count == 0)
			continue;
		presets_available++;
		check_one_preset(code, &info);
	} while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
	printf("\npresets available: %d, counted alone and equal to the truth: %d\n", presets_available,
	       presets_checked);
	CU_ASSERT_TRUE(presets_available >= 2); /* at least PAPI_TOT_CYC and PAPI_TOT_INS */
}

/* PAPI_start and PAPI_reset zero every event of an EventSet, not just the first: a set of PAPI_TOT_CYC and
 * PAPI_TOT_INS is one perf_event group (cycles lead, instructions is a member; on the counter-bank machines
 * both are the riscv_hpc component's), and the counts of an interval after a restart or a reset are that
 * interval's alone. A reset that missed the member would leave it ADVANCE_CYCLES' worth too high. */
#define RESET_SET 2
static void expect_interval_only(int set, const PAPI_event_info_t info[RESET_SET], int use_reset)
{
	uint64_t before[RESET_SET][PAPI_MAX_INFO_TERMS], after[RESET_SET][PAPI_MAX_INFO_TERMS];
	long long values[RESET_SET] = {-1, -1};

	CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE_CYCLES), 0); /* what the reset or restart must drop */
	if (use_reset) {
		CU_ASSERT_EQUAL(PAPI_reset(set), PAPI_OK);
	} else {
		CU_ASSERT_EQUAL(PAPI_stop(set, values), PAPI_OK);
		CU_ASSERT_EQUAL(PAPI_start(set), PAPI_OK);
	}
	for (int i = 0; i < RESET_SET; i++)
		CU_ASSERT_EQUAL(event_terms_truth(&info[i], before[i]), 0);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE_CYCLES / 2), 0);
	for (int i = 0; i < RESET_SET; i++)
		CU_ASSERT_EQUAL(event_terms_truth(&info[i], after[i]), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, values), PAPI_OK);
	for (int i = 0; i < RESET_SET; i++) {
		uint64_t delta[PAPI_MAX_INFO_TERMS];
		long long want = -2;
		for (unsigned t = 0; t < info[i].count; t++)
			delta[t] = after[i][t] - before[i][t];
		CU_ASSERT_EQUAL(combine_terms(&info[i], delta, &want), 0);
		if (values[i] != want)
			fprintf(stderr, "%s after %s: PAPI %lld, truth of the interval %lld\n",
			        info[i].symbol, use_reset ? "PAPI_reset" : "a restart", values[i], want);
		CU_ASSERT_EQUAL(values[i], want);
		CU_ASSERT(want > 0);
	}
}

static void test_start_and_reset_zero_every_event(void)
{
	const int codes[RESET_SET] = {PAPI_TOT_CYC, PAPI_TOT_INS};
	PAPI_event_info_t info[RESET_SET];
	int set = PAPI_NULL;

	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	for (int i = 0; i < RESET_SET; i++) {
		CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(codes[i], &info[i]), PAPI_OK);
		CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, codes[i]), PAPI_OK);
	}
	expect_interval_only(set, info, 0);
	expect_interval_only(set, info, 1);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

#define MAX_SET 3

/* Count the set over `cycles` and compare each event with its truth. */
static void count_set_and_compare(int set, const int *codes, int n, uint64_t cycles, const char *when)
{
	PAPI_event_info_t info[MAX_SET];
	uint64_t before[MAX_SET][PAPI_MAX_INFO_TERMS], after[MAX_SET][PAPI_MAX_INFO_TERMS];
	long long values[MAX_SET];

	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(codes[i], &info[i]), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_start(set), PAPI_OK);
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(event_terms_truth(&info[i], before[i]), 0);
	CU_ASSERT_EQUAL(emu_advance(cycles), 0);
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(event_terms_truth(&info[i], after[i]), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, values), PAPI_OK);
	for (int i = 0; i < n; i++) {
		uint64_t delta[PAPI_MAX_INFO_TERMS];
		long long want = -2;
		for (unsigned t = 0; t < info[i].count; t++)
			delta[t] = after[i][t] - before[i][t];
		CU_ASSERT_EQUAL(combine_terms(&info[i], delta, &want), 0);
		if (values[i] != want)
			fprintf(stderr, "%s, event %d of %d (%s): PAPI %lld, truth %lld\n", when, i + 1, n,
			        info[i].symbol, values[i], want);
		CU_ASSERT_EQUAL(values[i], want);
		CU_ASSERT(want > 0);
	}
}

/* PAPI_add_event appends to the set: the events already open stay open (upstream patch 45); a removed one
 * is closed and the events after it are opened again at their new places. Every event counts its truth
 * after each change. Each interval has its own length: PAPI_stop reading an event from a stale place of
 * the component's counts (the place it had before a removal, upstream patch 58) gets that place's value
 * of the interval before, which an interval as long would hide (the U74's instructions came out one short,
 * the rounding of the rate at another start; on CVA6 and BOOM they came out exact). */
static void test_add_remove(void)
{
	const int extra[] = {PAPI_BR_CN, PAPI_BR_MSP, PAPI_L1_ICM, PAPI_L1_DCM, PAPI_LD_INS, PAPI_BR_INS};
	int codes[MAX_SET] = {PAPI_TOT_CYC, PAPI_TOT_INS, 0}, n = 2, set = PAPI_NULL;
	uint64_t cycles = ADVANCE_CYCLES / 2; /* one step longer each interval */
	const uint64_t step = ADVANCE_CYCLES / 10;

	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, codes[0]), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, codes[1]), PAPI_OK);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]) && n == 2; i++)
		if (PAPI_query_event(extra[i]) == PAPI_OK && PAPI_add_event(set, extra[i]) == PAPI_OK)
			codes[n++] = extra[i];
	CU_ASSERT_EQUAL_FATAL(n, 3); /* every model has one of them beside cycles and instructions */
	count_set_and_compare(set, codes, n, cycles, "added one by one");
	/* remove the middle one: [cycles, extra] (the component keeps the first open, closes the others and
	 * opens the extra one again at its new place); PAPI_stop gives the values in that order. */
	CU_ASSERT_EQUAL_FATAL(PAPI_remove_event(set, PAPI_TOT_INS), PAPI_OK);
	const int removed[MAX_SET] = {codes[0], codes[2], 0};
	count_set_and_compare(set, removed, n - 1, cycles += step, "one removed");
	/* added back, it comes last: [cycles, extra, instructions]. Removing an event moves the last native
	 * event into its slot of the EventSet; when the move left the slot's PAPI event code behind (upstream
	 * patch 49), the component opened the removed event there again: the extra one counted instructions,
	 * and instructions added back conflicted with itself (PAPI_ECNFLCT on the U74, one instret counter).
	 */
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, PAPI_TOT_INS), PAPI_OK);
	const int added_back[MAX_SET] = {codes[0], codes[2], codes[1]};
	count_set_and_compare(set, added_back, n, cycles += step, "one removed, added back");
	/* the extra one out and back in: instructions move from the component's third count to its second,
	 * and PAPI_stop must read them there (patch 58), then the set is as it was first */
	CU_ASSERT_EQUAL_FATAL(PAPI_remove_event(set, codes[2]), PAPI_OK);
	count_set_and_compare(set, codes, n - 1, cycles += step, "the extra one removed");
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, codes[2]), PAPI_OK);
	count_set_and_compare(set, codes, n, cycles += step, "the extra one added back");
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

/* PAPI_overflow on an event of a set follows it when an event before it is removed (upstream patch 59):
 * PAPI keeps the event's index in the set (overflow.EventIndex[]), which a removal moves down one place, and
 * sets the overflow up again on the events' new places. Each run below must call the handler once per
 * threshold of the overflowing event's count (the emulator's truth: the k-th call comes after k thresholds'
 * worth and before k+1), with the overflow vector naming the event's place and PAPI_get_overflow_event_index
 * its index. Needs an overflow interrupt that is not precise (Sscofpmf: the runner's EXPECT_SSCOFPMF=1):
 * PAPI's software overflow runs on a wall-clock timer, which the virtual clock's counts do not follow, and
 * PES hands its records over in batches. */
#define OVF_MAX_CALLS 64
static int ovf_calls, ovf_index[OVF_MAX_CALLS], ovf_indexes[OVF_MAX_CALLS];
static long long ovf_vector[OVF_MAX_CALLS];
static uint64_t ovf_truth[OVF_MAX_CALLS];
static const char *ovf_native; /* the overflowing event's native name, for its truth */

// cppcheck-suppress constParameter ; PAPI_overflow_handler_t's signature
static void ovf_handler(int set, void *address, long long overflow_vector, void *context)
{
	(void)address;
	(void)context;
	if (ovf_calls >= OVF_MAX_CALLS) {
		ovf_calls++;
		return;
	}
	int number = 1;
	ovf_vector[ovf_calls] = overflow_vector;
	if (PAPI_get_overflow_event_index(set, overflow_vector, &ovf_index[ovf_calls], &number) != PAPI_OK)
		number = -1;
	ovf_indexes[ovf_calls] = number;
	if (native_truth(ovf_native, &ovf_truth[ovf_calls]) != 0)
		ovf_truth[ovf_calls] = 0;
	ovf_calls++;
}

/* Run the set until `info`'s event (at `index` in the set, `pos` in the component's counts, overflowing
 * every `threshold`) has counted 20 thresholds, in steps of fewer than one threshold (PAPI refreshes an
 * event after each overflow, so the virtual clock raises at most one per rvemu_advance call; the models'
 * rates of an event differ by more than ten times). */
static void expect_overflows(int set, const PAPI_event_info_t *info, int index, int pos, int threshold,
                             const char *when)
{
	uint64_t start = 0, end = 0;
	long long values[MAX_SET] = {-1, -1, -1};

	ovf_native = info->name[0];
	ovf_calls = 0;
	CU_ASSERT_EQUAL_FATAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(native_truth(ovf_native, &start), 0);
	/* a step runs about a quarter threshold of the event, at the rate of a first million cycles */
	CU_ASSERT_EQUAL(emu_advance(1000000), 0);
	CU_ASSERT_EQUAL(native_truth(ovf_native, &end), 0);
	uint64_t rate = end - start, step_cycles = ADVANCE_CYCLES;
	if (rate > 0)
		step_cycles = 1000000 * (uint64_t)threshold / (4 * rate);
	if (step_cycles < 1000)
		step_cycles = 1000;
	for (int step = 0; step < 1000 && end - start < 20ULL * (uint64_t)threshold; step++) {
		CU_ASSERT_EQUAL(emu_advance(step_cycles), 0);
		CU_ASSERT_EQUAL(native_truth(ovf_native, &end), 0);
	}
	CU_ASSERT_EQUAL(emu_advance(64), 0); /* past RVEMU_IRQ_SKID: every overflow due is taken */
	CU_ASSERT_EQUAL(native_truth(ovf_native, &end), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, values), PAPI_OK);
	int due = (int)((end - start) / (uint64_t)threshold);
	printf("\n%s: overflow on %s every %d: %d handler calls, %d due (%llu counted)\n", when, info->symbol,
	       threshold, ovf_calls, due, (unsigned long long)(end - start));
	CU_ASSERT(due >= 20 && due < OVF_MAX_CALLS);
	CU_ASSERT_EQUAL(ovf_calls, due);
	CU_ASSERT_EQUAL(values[index], (long long)(end - start));
	for (int k = 0; k < ovf_calls && k < OVF_MAX_CALLS; k++) {
		uint64_t seen = ovf_truth[k] - start, after = (uint64_t)(k + 1) * (uint64_t)threshold;
		int ok = ovf_vector[k] == 1LL << pos && ovf_indexes[k] == 1 && ovf_index[k] == index &&
		         seen >= after && seen < after + (uint64_t)threshold;
		if (!ok)
			fprintf(stderr,
			        "%s, overflow call %d: vector %#llx, event index %d (%d found), %s at %llu\n",
			        when, k + 1, ovf_vector[k], ovf_index[k], ovf_indexes[k], info->symbol,
			        (unsigned long long)seen);
		CU_ASSERT(ok);
	}
}

/* [PAPI_TOT_CYC, PAPI_TOT_INS, extra] (extra: PAPI_BR_CN on the U74; a one-term preset, PAPI refuses
 * overflow on a derived one); 0 when the core has no such set. */
static int overflow_set(int *set, int codes[MAX_SET], PAPI_event_info_t info[MAX_SET])
{
	const int extra[] = {PAPI_BR_CN, PAPI_BR_MSP, PAPI_L1_ICM, PAPI_L1_DCM, PAPI_LD_INS, PAPI_BR_INS};
	int n = 2;

	codes[0] = PAPI_TOT_CYC;
	codes[1] = PAPI_TOT_INS;
	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(set), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(*set, codes[0]), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(*set, codes[1]), PAPI_OK);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]) && n == 2; i++)
		if (PAPI_get_event_info(extra[i], &info[2]) == PAPI_OK && info[2].count == 1 &&
		    PAPI_add_event(*set, extra[i]) == PAPI_OK)
			codes[n++] = extra[i];
	CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(codes[0], &info[0]), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(codes[1], &info[1]), PAPI_OK);
	const PAPI_component_info_t *cmp = PAPI_get_component_info(PAPI_get_eventset_component(*set));
	CU_ASSERT_FATAL(cmp != NULL && cmp->hardware_intr && !cmp->precise_intr);
	return n == 3;
}

static int has_overflow_interrupt(void)
{
	const char *isa_has_sscofpmf = getenv("EXPECT_SSCOFPMF");
	return isa_has_sscofpmf != NULL && strcmp(isa_has_sscofpmf, "1") == 0;
}

/* Overflow on the extra event, PAPI_TOT_CYC removed while stopped: the extra event becomes the set's second
 * event and the component's first count. PAPI 7.0.0 set the overflow up on its place before the removal,
 * a third count the set no longer has: no handler call at all, and PAPI_overflow(..., 0) failed. */
static void test_overflow_after_remove(void)
{
	int codes[MAX_SET], set = PAPI_NULL;
	PAPI_event_info_t info[MAX_SET];

	if (!has_overflow_interrupt())
		return; /* no overflow interrupt, or a precise one */
	CU_ASSERT_FATAL(overflow_set(&set, codes, info));
	CU_ASSERT_EQUAL_FATAL(PAPI_overflow(set, codes[2], 1000000, 0, ovf_handler), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_remove_event(set, PAPI_TOT_CYC), PAPI_OK);
	expect_overflows(set, &info[2], 1, 0, 1000000, "PAPI_TOT_CYC removed");
	/* turned off, it is found; the set then counts its truth without a handler call */
	int rc = PAPI_overflow(set, codes[2], 0, 0, ovf_handler);
	if (rc != PAPI_OK)
		fprintf(stderr, "PAPI_overflow(%s, 0) after the removal: %s\n", info[2].symbol,
		        PAPI_strerror(rc));
	CU_ASSERT_EQUAL(rc, PAPI_OK);
	ovf_calls = 0;
	const int left[MAX_SET] = {codes[1], codes[2], 0};
	count_set_and_compare(set, left, 2, ADVANCE_CYCLES / 2, "overflow turned off after a removal");
	CU_ASSERT_EQUAL(ovf_calls, 0);
	/* the overflowing event itself removed: PAPI_remove_event turns its overflow off first */
	CU_ASSERT_EQUAL(PAPI_overflow(set, codes[2], 1000000, 0, ovf_handler), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_remove_event(set, codes[2]), PAPI_OK);
	count_set_and_compare(set, left, 1, ADVANCE_CYCLES / 2, "the overflowing event removed");
	CU_ASSERT_EQUAL(ovf_calls, 0);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

/* Overflow on PAPI_TOT_INS, PAPI_TOT_CYC removed, then added back: [PAPI_TOT_INS, extra, PAPI_TOT_CYC].
 * PAPI_TOT_INS keeps its count's place (the extra one moves into the removed one's), but becomes the set's
 * first event: an index left at 1 names the extra event, on which the add sets the overflow up again. */
static void test_overflow_index_after_remove_and_add(void)
{
	int codes[MAX_SET], set = PAPI_NULL;
	PAPI_event_info_t info[MAX_SET];
	const int threshold = 50000000;

	if (!has_overflow_interrupt())
		return;
	CU_ASSERT_FATAL(overflow_set(&set, codes, info));
	CU_ASSERT_EQUAL_FATAL(PAPI_overflow(set, PAPI_TOT_INS, threshold, 0, ovf_handler), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_remove_event(set, PAPI_TOT_CYC), PAPI_OK);
	expect_overflows(set, &info[1], 0, 1, threshold, "PAPI_TOT_CYC removed");
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, PAPI_TOT_CYC), PAPI_OK);
	expect_overflows(set, &info[1], 0, 1, threshold, "PAPI_TOT_CYC removed and added back");
	CU_ASSERT_EQUAL(PAPI_overflow(set, PAPI_TOT_INS, 0, 0, ovf_handler), PAPI_OK);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

/* A domain set between two adds holds for the events already open too: the component must reopen them
 * (patch 45 keeps an open event only while it is what the list asks for). Only where Linux filters by
 * privilege (Sscofpmf): PAPI_DOM_KERNEL alone then leaves out the user-mode cycles the test advances. */
static void test_domain_between_adds(void)
{
	const char *isa_has_sscofpmf = getenv("EXPECT_SSCOFPMF");
	PAPI_event_info_t info;
	PAPI_option_t opt;
	uint64_t before[PAPI_MAX_INFO_TERMS], after[PAPI_MAX_INFO_TERMS];
	long long values[2] = {-1, -1};
	int set = PAPI_NULL;

	if (isa_has_sscofpmf == NULL || strcmp(isa_has_sscofpmf, "1") != 0)
		return; /* one domain only (test_domains_are_honest) */
	CU_ASSERT_EQUAL_FATAL(PAPI_get_event_info(PAPI_TOT_CYC, &info), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, PAPI_TOT_CYC), PAPI_OK);
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = set;
	opt.domain.domain = PAPI_DOM_KERNEL;
	CU_ASSERT_EQUAL_FATAL(PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_add_event(set, PAPI_TOT_INS), PAPI_OK);
	CU_ASSERT_EQUAL_FATAL(PAPI_start(set), PAPI_OK);
	CU_ASSERT_EQUAL(event_terms_truth(&info, before), 0);
	CU_ASSERT_EQUAL(emu_advance(ADVANCE_CYCLES / 2), 0);
	CU_ASSERT_EQUAL(event_terms_truth(&info, after), 0);
	CU_ASSERT_EQUAL(PAPI_stop(set, values), PAPI_OK);
	/* the cycles advanced are user mode: a kernel-only PAPI_TOT_CYC sees at most a small part of them */
	if (values[0] >= (long long)(after[0] - before[0]) / 2)
		fprintf(stderr, "PAPI_TOT_CYC in PAPI_DOM_KERNEL: %lld of %llu user-mode cycles\n", values[0],
		        (unsigned long long)(after[0] - before[0]));
	CU_ASSERT(values[0] >= 0 && values[0] < (long long)(after[0] - before[0]) / 2);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

/* Domains: a core without an overflow interrupt Linux filters with (Sscofpmf's, Andes', T-Head's; the test
 * runner sets EXPECT_SSCOFPMF=1 for those) counts PAPI_DOM_ALL only, and PAPI says so. */
static void test_domains_are_honest(void)
{
	const char *isa_has_sscofpmf = getenv("EXPECT_SSCOFPMF");
	PAPI_option_t opt;
	memset(&opt, 0, sizeof(opt));
	opt.defdomain.def_cidx = 0;
	int dom = PAPI_get_opt(PAPI_DEFDOM, &opt);
	if (isa_has_sscofpmf == NULL || strcmp(isa_has_sscofpmf, "1") != 0) {
		CU_ASSERT_EQUAL(dom, PAPI_DOM_ALL);
		int set = PAPI_NULL;
		CU_ASSERT_EQUAL_FATAL(PAPI_create_eventset(&set), PAPI_OK);
		CU_ASSERT_EQUAL(PAPI_assign_eventset_component(set, 0), PAPI_OK);
		memset(&opt, 0, sizeof(opt));
		opt.domain.eventset = set;
		opt.domain.domain = PAPI_DOM_USER;
		CU_ASSERT_NOT_EQUAL(PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
		PAPI_destroy_eventset(&set);
	} else {
		CU_ASSERT_EQUAL(dom, PAPI_DOM_USER);
	}
}

/* What perf_event (component 0) learned at the first init by opening probe events: what the kernel
 * samples with, the domains it counts apart, fast reads. A later init in the process (after PAPI_shutdown)
 * reuses the kernel's answers instead of probing again (upstream patch 69): it must report the same. */
struct probed_info {
	int disabled, hardware_intr, kernel_profile, precise_intr, fast_counter_read;
	int default_domain, available_domains;
};
static struct probed_info first_init_info;
/* PAPI_get_hardware_info() at the first init, memory hierarchy included: a later init copies the machine's
 * description the first one read (upstream patch 80) and reads the memory hierarchy again when asked. */
static PAPI_hw_info_t first_init_hw;
/* component 0's PMUs and native event count at the first init */
static char first_init_pmu_names[PAPI_PMU_MAX][PAPI_MIN_STR_LEN];
static int first_init_native_events;

/* /proc/cpuinfo opened by PAPI and libpfm4 (the executable's fopen comes first in symbol lookup): a later
 * init reads the machine's description no more (upstream patch 80), only libpfm4's own read is left. */
static unsigned cpuinfo_opens, first_init_cpuinfo_opens;

/* libpfm4's PMU questions (PAPI's calls land here first): a later init visits only the PMUs the first one's
 * scan found (upstream patch 83), not every pfm_pmu_t id. */
static unsigned pmu_info_calls;
pfm_err_t pfm_get_pmu_info(pfm_pmu_t pmu, pfm_pmu_info_t *info)
{
	static pfm_err_t (*next)(pfm_pmu_t, pfm_pmu_info_t *);
	if (!next)
		next = (pfm_err_t(*)(pfm_pmu_t, pfm_pmu_info_t *))dlsym(RTLD_NEXT, "pfm_get_pmu_info");
	__atomic_fetch_add(&pmu_info_calls, 1, __ATOMIC_RELAXED);
	return next ? next(pmu, info) : PFM_ERR_NOTSUPP;
}
FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*next)(const char *, const char *);
	if (!next)
		next = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	if (path && strcmp(path, "/proc/cpuinfo") == 0)
		__atomic_fetch_add(&cpuinfo_opens, 1, __ATOMIC_RELAXED);
	return next ? next(path, mode) : NULL;
}

static int probed_info_of_component0(struct probed_info *p)
{
	const PAPI_component_info_t *cmp = PAPI_get_component_info(0);
	if (cmp == NULL)
		return -1;
	p->disabled = cmp->disabled;
	p->hardware_intr = cmp->hardware_intr;
	p->kernel_profile = cmp->kernel_profile;
	p->precise_intr = cmp->precise_intr;
	p->fast_counter_read = cmp->fast_counter_read;
	p->default_domain = cmp->default_domain;
	p->available_domains = cmp->available_domains;
	return 0;
}

/* Shut PAPI down and initialize it again: the same component info, and the counts, domains and
 * overflows of the tests above as they were at the first init. Runs last (it replaces the library's
 * state the other tests used). */
static void test_reinit_same_answers(void)
{
	struct probed_info again;

	PAPI_shutdown();
	/* libpfm4 is the program's too (main initialized it first): PAPI_shutdown leaves it (patch 82) */
	CU_ASSERT(pfm_find_event("cycles") >= 0);
	__atomic_store_n(&cpuinfo_opens, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pmu_info_calls, 0, __ATOMIC_RELAXED);
	CU_ASSERT_EQUAL_FATAL(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	unsigned again_cpuinfo_opens = __atomic_load_n(&cpuinfo_opens, __ATOMIC_RELAXED);
	unsigned again_pmu_info_calls = __atomic_load_n(&pmu_info_calls, __ATOMIC_RELAXED);
	printf("\n  pfm_get_pmu_info calls by a later init: %u (libpfm4 knows %d PMU ids)\n",
	       again_pmu_info_calls, (int)PFM_PMU_MAX);
	CU_ASSERT(again_pmu_info_calls < (unsigned)PFM_PMU_MAX);
	const PAPI_component_info_t *cmp = PAPI_get_component_info(0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
	CU_ASSERT_EQUAL(cmp->num_native_events, first_init_native_events);
	for (int i = 0; i < PAPI_PMU_MAX; i++) {
		CU_ASSERT_EQUAL(cmp->pmu_names[i] == NULL, first_init_pmu_names[i][0] == '\0');
		if (cmp->pmu_names[i]) {
			CU_ASSERT_STRING_EQUAL(cmp->pmu_names[i], first_init_pmu_names[i]);
		}
	}
	printf("\n  /proc/cpuinfo opened by the first init %u times, by a later one %u\n",
	       first_init_cpuinfo_opens, again_cpuinfo_opens);
	CU_ASSERT(again_cpuinfo_opens < first_init_cpuinfo_opens);
	CU_ASSERT_EQUAL_FATAL(probed_info_of_component0(&again), 0);
	CU_ASSERT_EQUAL(again.disabled, first_init_info.disabled);
	CU_ASSERT_EQUAL(again.hardware_intr, first_init_info.hardware_intr);
	CU_ASSERT_EQUAL(again.kernel_profile, first_init_info.kernel_profile);
	CU_ASSERT_EQUAL(again.precise_intr, first_init_info.precise_intr);
	CU_ASSERT_EQUAL(again.fast_counter_read, first_init_info.fast_counter_read);
	CU_ASSERT_EQUAL(again.default_domain, first_init_info.default_domain);
	CU_ASSERT_EQUAL(again.available_domains, first_init_info.available_domains);
	const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
	CU_ASSERT_PTR_NOT_NULL_FATAL(hw);
	CU_ASSERT_STRING_EQUAL(hw->vendor_string, first_init_hw.vendor_string);
	CU_ASSERT_STRING_EQUAL(hw->model_string, first_init_hw.model_string);
	CU_ASSERT_EQUAL(hw->totalcpus, first_init_hw.totalcpus);
	CU_ASSERT_EQUAL(hw->cpu_max_mhz, first_init_hw.cpu_max_mhz);
	CU_ASSERT_EQUAL(hw->mem_hierarchy.levels, first_init_hw.mem_hierarchy.levels);
	CU_ASSERT(memcmp(hw, &first_init_hw, sizeof(*hw)) == 0);
	test_domains_are_honest();
	test_add_remove();
	test_domain_between_adds();
	test_overflow_after_remove();
}

int main(void)
{
	if (truth_bind() != 0) {
		fprintf(stderr, "test_papi_presets: run me under rvemu-run --clock virtual\n");
		return 1;
	}
	if (pfm_initialize() != PFM_SUCCESS) { /* the program's own use of libpfm4, before PAPI's */
		fprintf(stderr, "pfm_initialize failed\n");
		return 1;
	}
	__atomic_store_n(&cpuinfo_opens, 0, __ATOMIC_RELAXED);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "PAPI_library_init failed\n");
		return 1;
	}
	first_init_cpuinfo_opens = __atomic_load_n(&cpuinfo_opens, __ATOMIC_RELAXED);
	if (probed_info_of_component0(&first_init_info) != 0) {
		fprintf(stderr, "no component 0\n");
		return 1;
	}
	const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
	if (hw == NULL) {
		fprintf(stderr, "no hardware info\n");
		return 1;
	}
	first_init_hw = *hw;
	const PAPI_component_info_t *cmp = PAPI_get_component_info(0);
	first_init_native_events = cmp->num_native_events;
	for (int i = 0; i < PAPI_PMU_MAX; i++)
		if (cmp->pmu_names[i])
			snprintf(first_init_pmu_names[i], sizeof(first_init_pmu_names[i]), "%s",
			         cmp->pmu_names[i]);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("papi_presets", NULL, NULL);
	CU_add_test(s, "every available preset alone equals the truth", test_every_available_preset);
	CU_add_test(s, "counting domains are what the kernel accepts", test_domains_are_honest);
	CU_add_test(s, "PAPI_start and PAPI_reset zero every event of the set",
	            test_start_and_reset_zero_every_event);
	CU_add_test(s, "events added one by one, one removed, added back, each count their truth",
	            test_add_remove);
	CU_add_test(s, "a domain set between two adds holds for both events", test_domain_between_adds);
	CU_add_test(s, "overflow on an event still follows it after an event before it is removed",
	            test_overflow_after_remove);
	CU_add_test(s, "overflow on an event follows its index after a removal and an add",
	            test_overflow_index_after_remove_and_add);
	CU_add_test(s, "after PAPI_shutdown, a new init answers, counts and overflows as the first",
	            test_reinit_same_answers);
	return cunit_run_all();
}
