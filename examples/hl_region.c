// SPDX-License-Identifier: MIT
/* hl_region: two instrumented regions with PAPI's high-level API.
 *
 *   PAPI_EVENTS="PAPI_TOT_CYC,PAPI_TOT_INS,riscv_sifive_u74::INTEGER_LOAD_RETIRED" \
 *   PAPI_OUTPUT_DIRECTORY=out ./hl_region [N]
 *
 * Region "dot" computes a dot product, region "stencil" smooths a vector with a 3-point stencil; at exit PAPI
 * writes out/papi_hl_output/rank_*.json with the counts of PAPI_EVENTS for each region.
 *
 * Under the emulator (librvemu.so preloaded, found with dlsym so nothing links against it) with the virtual
 * clock, counts move only when the program advances the clock: each region then advances a known number of
 * cycles and prints, for each event of PAPI_EVENTS, what the emulator says really happened inside it
 * ("truth <region> <event> <count>" lines), so a test can compare the JSON with the ground truth exactly.
 * With the CPU-time clock (or on a real board) the work itself is measured and the truth lines give the
 * emulator's count over the same stretch of code (not exactly PAPI's interval: only for ratios).
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <papi.h>

#define MAX_EVENTS     16
#define DOT_CYCLES     1000000u /* virtual cycles the "dot" region advances */
#define STENCIL_CYCLES 3000000u /* and "stencil": different, so mixed-up regions show */

typedef int (*advance_fn)(uint64_t);
typedef int (*truth_fn)(const char *, uint64_t *);

/* The emulator's control API when it is loaded, NULLs on real hardware. */
static struct {
	advance_fn advance;
	truth_fn truth;
	int virtual_clock;
} emu;

/* The events the high-level API will count: PAPI_EVENTS, or its default (PAPI_TOT_CYC). */
static char event_buf[1024];
static char *events[MAX_EVENTS];
static int n_events;

static void parse_events(void)
{
	const char *env = getenv("PAPI_EVENTS");
	snprintf(event_buf, sizeof event_buf, "%s", env && *env ? env : "PAPI_TOT_CYC");
	for (char *save = NULL, *tok = strtok_r(event_buf, ",", &save); tok && n_events < MAX_EVENTS;
	     tok = strtok_r(NULL, ",", &save))
		events[n_events++] = tok;
}

/* Ground truth of one PAPI event name, as the emulator's events/ names: the two fixed counters for
 * PAPI_TOT_CYC/PAPI_TOT_INS, NAME for "pmu::NAME", and for a U74 class with unit masks
 * ("pmu::CLASS:BIT1:BIT2") the sum of its bits, which is what the class mask counts. Returns -1 when the
 * event has no single truth (other presets) or the emulator does not know it. */
static int truth_of(const char *event, uint64_t *count)
{
	if (strcmp(event, "PAPI_TOT_CYC") == 0)
		return emu.truth("CYCLES", count);
	if (strcmp(event, "PAPI_TOT_INS") == 0)
		return emu.truth("INSTRUCTIONS", count);
	const char *component = strstr(event, ":::"); /* "component:::pmu::NAME": the same NAME */
	if (component)
		event = component + 3;
	const char *native = strstr(event, "::");
	if (!native)
		return -1;
	char name[256];
	snprintf(name, sizeof name, "%s", native + 2);
	char *save = NULL, *first = strtok_r(name, ":", &save), *umask = strtok_r(NULL, ":", &save);
	if (!first)
		return -1;
	if (!umask)
		return emu.truth(first, count);
	uint64_t sum = 0;
	for (; umask; umask = strtok_r(NULL, ":", &save)) {
		uint64_t one;
		if (emu.truth(umask, &one) != 0)
			return -1;
		sum += one;
	}
	*count = sum;
	return 0;
}

static void snapshot(uint64_t *values, int *known)
{
	for (int i = 0; i < n_events; i++)
		known[i] = emu.truth && truth_of(events[i], &values[i]) == 0;
}

/* Everything between snapshot() calls at the start and end of a region is what the region counted. */
static void print_truth(const char *region, const uint64_t *before, const uint64_t *after, const int *known)
{
	for (int i = 0; i < n_events; i++) {
		if (known[i])
			printf("truth %s %s %" PRIu64 "\n", region, events[i], after[i] - before[i]);
		else
			printf("truth %s %s n/a\n", region, events[i]);
	}
}

static double dot(const double *x, const double *y, size_t n)
{
	double sum = 0.0;
	for (size_t i = 0; i < n; i++)
		sum += x[i] * y[i];
	return sum;
}

static void stencil(double *out, const double *in, size_t n, int sweeps)
{
	for (int s = 0; s < sweeps; s++) {
		for (size_t i = 1; i + 1 < n; i++)
			out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
		out[0] = in[0];
		out[n - 1] = in[n - 1];
	}
}

/* One instrumented region: begin, the work, the emulator's advance, truth, end. */
static int region(const char *name, uint64_t cycles, void (*work)(void *), void *arg)
{
	uint64_t before[MAX_EVENTS], after[MAX_EVENTS];
	int known[MAX_EVENTS];
	int rc = PAPI_hl_region_begin(name);
	if (rc != PAPI_OK) {
		fprintf(stderr, "hl_region: PAPI_hl_region_begin(\"%s\"): %s\n", name, PAPI_strerror(rc));
		return -1;
	}
	snapshot(before, known);
	work(arg);
	if (emu.virtual_clock && emu.advance(cycles) != 0) {
		fprintf(stderr, "hl_region: rvemu_advance failed\n");
		return -1;
	}
	snapshot(after, known);
	rc = PAPI_hl_region_end(name);
	if (rc != PAPI_OK) {
		fprintf(stderr, "hl_region: PAPI_hl_region_end(\"%s\"): %s\n", name, PAPI_strerror(rc));
		return -1;
	}
	print_truth(name, before, after, known);
	return 0;
}

struct vectors {
	double *x, *y;
	size_t n;
	double result;
};

static void dot_work(void *arg)
{
	struct vectors *v = arg;
	for (int rep = 0; rep < 20; rep++)
		v->result += dot(v->x, v->y, v->n);
}

static void stencil_work(void *arg)
{
	struct vectors *v = arg;
	stencil(v->y, v->x, v->n, 60);
	v->result += v->y[v->n / 2];
}

static void find_emulator(void)
{
	emu.advance = (advance_fn)dlsym(RTLD_DEFAULT, "rvemu_advance");
	emu.truth = (truth_fn)dlsym(RTLD_DEFAULT, "rvemu_truth");
	/* rvemu_advance(0) succeeds only with the virtual clock */
	emu.virtual_clock = emu.advance && emu.truth && emu.advance(0) == 0;
	if (!emu.truth)
		emu.advance = NULL;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	if (n < 3 || n > 100000000) {
		fprintf(stderr, "usage: hl_region [N]   (vector length, 3..100000000)\n");
		return 2;
	}
	find_emulator();
	parse_events();
	struct vectors v = {calloc(n, sizeof(double)), calloc(n, sizeof(double)), n, 0.0};
	if (!v.x || !v.y) {
		fprintf(stderr, "hl_region: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		v.x[i] = (double)(i % 17) * 0.5;
		v.y[i] = 1.0 / (double)(i + 1);
	}
	printf("hl_region: %zu elements, emulator %s\n", n,
	       emu.virtual_clock ? "loaded (virtual clock)"
	       : emu.truth       ? "loaded (cputime clock)"
	                         : "not loaded");
	int failed =
	    region("dot", DOT_CYCLES, dot_work, &v) || region("stencil", STENCIL_CYCLES, stencil_work, &v);
	printf("hl_region: result %.6f\n", v.result);
	free(v.x);
	free(v.y);
	/* The JSON is written by PAPI's exit handler. */
	return failed ? 1 : 0;
}
