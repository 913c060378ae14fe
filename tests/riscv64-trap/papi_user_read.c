// SPDX-License-Identifier: MIT
/* PAPI_read on riscv64 (PAPI patch 25) under the emulator (model sifive-u74, virtual clock), counted with
 * the emulator's statistics:
 *   page      kernel.perf_user_access = 1: the component finds cap_user_rdpmc; PAPI_read of two programmable
 *             events makes no system call (none emulated, none forwarded) and two trapped csrr, and returns
 *             the exact counts (= what read() returns: the ground truth), also after PAPI_reset; an EventSet
 *             with cycles falls back to exactly one read() (qemu answers cycle itself, so the emulator
 *             publishes index 0 for it); a multiplexed EventSet reads with read(), one per event, as
 *             PAPI's multiplexed read does;
 *   noaccess  kernel.perf_user_access = 0: no fast read; each PAPI_read is exactly one read(), exact counts.
 */
#include <papi.h>

#include "trap_test.h"

#define U74_INTEGER_LOAD_RETIRED   0x200ull
#define U74_INTEGER_STORE_RETIRED  0x400ull
#define U74_CONDITIONAL_BRANCH_RET 0x4000ull

static const char *const names[] = {"riscv_sifive_u74::INTEGER_LOAD_RETIRED",
                                    "riscv_sifive_u74::INTEGER_STORE_RETIRED",
                                    "riscv_sifive_u74::CONDITIONAL_BRANCH_RETIRED"};
static const uint64_t raw[] = {U74_INTEGER_LOAD_RETIRED, U74_INTEGER_STORE_RETIRED,
                               U74_CONDITIONAL_BRANCH_RET};

struct delta {
	uint64_t emulated, forwarded, traps;
};

static struct delta since(const struct emu_api *api, const struct rvemu_stats *s0)
{
	struct rvemu_stats s1 = emu_stats_now(api);
	struct delta d = {s1.syscalls_emulated - s0->syscalls_emulated,
	                  s1.syscalls_forwarded - s0->syscalls_forwarded, s1.csr_traps - s0->csr_traps};
	return d;
}

static void truths(const struct emu_api *api, int n, uint64_t *out)
{
	for (int i = 0; i < n; i++)
		api->truth_raw(raw[i], &out[i]);
}

static int make_set(int n, int multiplex)
{
	int es = PAPI_NULL;
	if (PAPI_create_eventset(&es) != PAPI_OK)
		return PAPI_NULL;
	if (multiplex &&
	    (PAPI_assign_eventset_component(es, 0) != PAPI_OK || PAPI_set_multiplex(es) != PAPI_OK))
		return PAPI_NULL;
	for (int i = 0; i < n; i++) {
		int rc = PAPI_add_named_event(es, names[i]);
		if (rc != PAPI_OK) {
			printf("PAPI_add_named_event %s: %s\n", names[i], PAPI_strerror(rc));
			return PAPI_NULL;
		}
	}
	return es;
}

static void test_two_events(const struct emu_api *api, int page)
{
	long long v[2];
	uint64_t t0[2], t1[2];
	int es = make_set(2, 0);
	CHECK(es != PAPI_NULL, "EventSet of INTEGER_LOAD_RETIRED, INTEGER_STORE_RETIRED");
	if (es == PAPI_NULL)
		return;
	CHECK(PAPI_start(es) == PAPI_OK, "PAPI_start");
	truths(api, 2, t0);
	api->advance(1000000);
	struct rvemu_stats s0 = emu_stats_now(api);
	int rc = PAPI_read(es, v);
	struct delta d = since(api, &s0);
	truths(api, 2, t1);
	CHECK(rc == PAPI_OK && (uint64_t)v[0] == t1[0] - t0[0] && (uint64_t)v[1] == t1[1] - t0[1] && v[0] > 0,
	      "PAPI_read = ground truth (= read()): %lld, %lld (truth %llu, %llu)", v[0], v[1],
	      (unsigned long long)(t1[0] - t0[0]), (unsigned long long)(t1[1] - t0[1]));
	if (page)
		CHECK(d.emulated == 0 && d.forwarded == 0 && d.traps == 2,
		      "page path: %llu system calls (emulated), %llu forwarded, %llu trapped csrr (want 0, "
		      "0, 2)",
		      (unsigned long long)d.emulated, (unsigned long long)d.forwarded,
		      (unsigned long long)d.traps);
	else
		CHECK(d.emulated == 1 && d.traps == 0,
		      "perf_user_access = 0: %llu read() (want 1), %llu trapped csrr (want 0)",
		      (unsigned long long)d.emulated, (unsigned long long)d.traps);
	/* PAPI_reset (an ioctl) updates the page's offset: the next read starts from 0 */
	CHECK(PAPI_reset(es) == PAPI_OK, "PAPI_reset");
	truths(api, 2, t0);
	api->advance(777777);
	s0 = emu_stats_now(api);
	rc = PAPI_read(es, v);
	d = since(api, &s0);
	truths(api, 2, t1);
	CHECK(rc == PAPI_OK && (uint64_t)v[0] == t1[0] - t0[0] && (uint64_t)v[1] == t1[1] - t0[1],
	      "after PAPI_reset: %lld, %lld (truth %llu, %llu), %llu read()", v[0], v[1],
	      (unsigned long long)(t1[0] - t0[0]), (unsigned long long)(t1[1] - t0[1]),
	      (unsigned long long)d.emulated);
	CHECK(PAPI_stop(es, v) == PAPI_OK, "PAPI_stop");
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

/* cycles: qemu-user answers the cycle CSR with host ticks: the page has index 0 and PAPI reads with read() */
static void test_cycles_fallback(const struct emu_api *api)
{
	long long v[2];
	uint64_t t0, t1, c0, c1;
	uint64_t (*thread_cycles)(void) = RVEMU_SYM(uint64_t(*)(void), rvemu_thread_cycles);
	int es = PAPI_NULL;
	CHECK(PAPI_create_eventset(&es) == PAPI_OK && PAPI_add_named_event(es, "PAPI_TOT_CYC") == PAPI_OK &&
	          PAPI_add_named_event(es, names[0]) == PAPI_OK,
	      "EventSet of PAPI_TOT_CYC, INTEGER_LOAD_RETIRED");
	CHECK(PAPI_start(es) == PAPI_OK, "PAPI_start");
	c0 = thread_cycles();
	api->truth_raw(raw[0], &t0);
	api->advance(2000000);
	struct rvemu_stats s0 = emu_stats_now(api);
	int rc = PAPI_read(es, v);
	struct delta d = since(api, &s0);
	c1 = thread_cycles();
	api->truth_raw(raw[0], &t1);
	CHECK(rc == PAPI_OK && (uint64_t)v[0] == c1 - c0 && (uint64_t)v[1] == t1 - t0,
	      "PAPI_read = truth: cycles %lld (%llu), loads %lld (%llu)", v[0], (unsigned long long)(c1 - c0),
	      v[1], (unsigned long long)(t1 - t0));
	CHECK(d.emulated == 1, "cycles on the page has index 0: exactly %llu read() (want 1)",
	      (unsigned long long)d.emulated);
	PAPI_stop(es, v);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

/* three events on the U74's two programmable counters: the kernel multiplexes them (time_enabled !=
 * time_running), PAPI reads each with read() */
static void test_multiplexed(const struct emu_api *api)
{
	long long v[3];
	CHECK(PAPI_multiplex_init() == PAPI_OK, "PAPI_multiplex_init");
	int es = make_set(3, 1);
	CHECK(es != PAPI_NULL, "multiplexed EventSet of 3 events on 2 counters");
	if (es == PAPI_NULL)
		return;
	CHECK(PAPI_start(es) == PAPI_OK, "PAPI_start");
	for (int i = 0; i < 10; i++) /* several rotations (RVEMU_MUX_CYCLES) */
		api->advance(3000000);
	struct rvemu_stats s0 = emu_stats_now(api);
	int rc = PAPI_read(es, v);
	struct delta d = since(api, &s0);
	CHECK(rc == PAPI_OK && v[0] > 0 && v[1] > 0 && v[2] > 0,
	      "PAPI_read: %lld, %lld, %lld (scaled estimates)", v[0], v[1], v[2]);
	CHECK(d.emulated == 3, "multiplexed: %llu read() (want 3: one per event, PAPI's multiplexed read)",
	      (unsigned long long)d.emulated);
	PAPI_stop(es, v);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

int main(int argc, char **argv)
{
	struct emu_api api = emu_api_load();
	int page = !(argc > 1 && strcmp(argv[1], "noaccess") == 0);
	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	CHECK(rc == PAPI_VER_CURRENT, "PAPI_library_init: %d", rc);
	if (rc != PAPI_VER_CURRENT)
		return trap_test_done("papi_user_read");
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	CHECK(ci != NULL && ci->disabled == 0, "perf_event component enabled (%s)",
	      ci ? ci->disabled_reason : "?");
	CHECK(ci != NULL && (int)ci->fast_counter_read == page,
	      "fast_counter_read = %d (want %d: perf_user_access %s)", ci ? (int)ci->fast_counter_read : -1,
	      page, page ? "1" : "0");
	test_two_events(&api, page);
	if (page) {
		test_cycles_fallback(&api);
		test_multiplexed(&api);
	}
	PAPI_shutdown();
	return trap_test_done(page ? "papi_user_read page" : "papi_user_read noaccess");
}
