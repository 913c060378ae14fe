// SPDX-License-Identifier: MIT
/* Through PAPI, a preset counts what its native events count when read raw (the thesis's Table 3.2 check,
 * docs/exec-counts.md): a riscv64 program, run under rvemu-run --exec, measures one kernel of N1 and of N2
 * iterations with each preset alone in an EventSet, and with each of the preset's native events opened raw
 * with perf_event_open (the encodings tests/exec/test_exec.py takes from the event tables, not from libpfm4
 * or PAPI). The difference N2 - N1 leaves out the measuring code, which is the same in both runs of one
 * method, so for events the execution model counts the two methods must agree exactly.
 *
 * usage: presets_raw N1 N2 PRESET=SPEC...   SPEC: comma-separated [+|-]hw:N (PERF_TYPE_HARDWARE) or
 * [+|-]raw:0xN (PERF_TYPE_RAW). Prints one line per preset: "PRESET papi=D raw=D" (raw: the terms combined
 * with their signs), or "PRESET unavailable: why".
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <papi.h>

#include "open_event.h"

static volatile double fsink = 1.0;
static volatile long isink = 7, isink2 = 3, isink3 = 5;
static long counter;

/* 128 pages, read one line per iteration a page and a line apart: every read misses the L1D and the DTLB of
 * every model (128 pages > any model's DTLB, 8192 lines visited in turn > any model's L1D), so the cache and
 * TLB presets compare thousands of the kernel's own misses, not the few dozen the measuring code and the
 * kernel share (the emulator's own work, which events count without privilege filtering: CVA6) leave on
 * either side */
#define SWEEP_LONGS (128 * 4096 / 8)
#define SWEEP_STEP  ((4096 + 64) / 8)
static volatile long sweep[SWEEP_LONGS];

static __attribute__((noinline)) long step(long i)
{
	return i * 3 + 1;
}

/* Every class the models' events count: integer and FP loads and stores, ALU, mul, div, FP
 * add/mul/FMA/div/sqrt, an atomic, a data-dependent branch, a call through a pointer and its return; in
 * different numbers per iteration (4 integer loads, 2 integer stores, 2 FMAs, ...), so presets that swapped
 * two of them would differ; and one read of the sweep, which misses the L1D and the DTLB. */
static __attribute__((noinline)) void kernel(long n)
{
	long (*volatile f)(long) = step;
	double x = fsink;
	unsigned long at = 0;
	for (long i = 0; i < n; i++) {
		long v = isink + isink2 + isink3 + sweep[at];
		at = (at + SWEEP_STEP) % SWEEP_LONGS;
		if (i & 3) /* taken 3 times in 4: a 2-bit counter settles whatever it started at */
			v = v * 5 + i;
		else
			v = v / 3 - i;
		isink = f(v);
		isink2 = v & 7;
		x = __builtin_fma(x, 1.0000001, 0.5);
		x = __builtin_fma(x, 0.9999999, 0.25) / 1.5 + __builtin_sqrt(x) + 0.125 + fsink;
		fsink = x * 0.5;
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	}
}

static int papi_delta(const char *preset, long n1, long n2, long long *delta, char *why, size_t len)
{
	int code, set;
	long long v[2];
	long n[2] = {n1, n2};
	int rc = PAPI_event_name_to_code(preset, &code);
	for (int k = 0; k < 2 && rc == PAPI_OK; k++) {
		set = PAPI_NULL;
		if ((rc = PAPI_create_eventset(&set)) != PAPI_OK)
			break;
		if ((rc = PAPI_add_event(set, code)) == PAPI_OK && (rc = PAPI_start(set)) == PAPI_OK) {
			kernel(n[k]);
			rc = PAPI_stop(set, &v[k]);
		}
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
	}
	if (rc != PAPI_OK) {
		snprintf(why, len, "%s", PAPI_strerror(rc));
		return -1;
	}
	*delta = v[1] - v[0];
	return 0;
}

static int raw_delta(uint32_t type, uint64_t config, long n1, long n2, long long *delta)
{
	uint64_t v[2];
	long n[2] = {n1, n2};
	for (int k = 0; k < 2; k++) {
		int fd = open_event(type, config);
		if (fd < 0)
			return -1;
		int ok = ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
		kernel(n[k]);
		ok = ok && ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) == 0 &&
		     read(fd, &v[k], sizeof(v[k])) == sizeof(v[k]);
		close(fd);
		if (!ok)
			return -1;
	}
	*delta = (long long)(v[1] - v[0]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: presets_raw N1 N2 PRESET=SPEC...\n");
		return 2;
	}
	long n1 = atol(argv[1]), n2 = atol(argv[2]);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "presets_raw: PAPI_library_init failed\n");
		return 1;
	}
	/* one measurement of each kind first, thrown away: the first calls into PAPI and libc bind their
	 * symbols lazily (ld.so), which only the N1 run of the first measurement would pay for */
	long long warm;
	char why_warm[128];
	if (papi_delta("PAPI_TOT_INS", n1, n2, &warm, why_warm, sizeof(why_warm)) != 0 ||
	    raw_delta(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, n1, n2, &warm) != 0) {
		fprintf(stderr, "presets_raw: the warm-up measurement failed\n");
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		char *spec = strchr(argv[i], '=');
		if (!spec) {
			fprintf(stderr, "presets_raw: bad argument '%s'\n", argv[i]);
			return 2;
		}
		*spec++ = '\0';
		long long papi = 0, raw = 0;
		char why[128];
		if (papi_delta(argv[i], n1, n2, &papi, why, sizeof(why)) != 0) {
			printf("%s unavailable: %s\n", argv[i], why);
			continue;
		}
		for (char *term = strtok(spec, ","); term; term = strtok(NULL, ",")) {
			int sign = 1;
			if (*term == '+' || *term == '-')
				sign = *term++ == '-' ? -1 : 1;
			uint32_t type = strncmp(term, "hw:", 3) == 0 ? PERF_TYPE_HARDWARE : PERF_TYPE_RAW;
			long long d;
			if (raw_delta(type, strtoull(strchr(term, ':') + 1, NULL, 0), n1, n2, &d) != 0) {
				printf("%s raw %s: %s\n", argv[i], term, strerror(errno));
				return 1;
			}
			raw += sign * d;
		}
		printf("%s papi=%lld raw=%lld\n", argv[i], papi, raw);
	}
	return 0;
}
