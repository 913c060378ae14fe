// SPDX-License-Identifier: MIT
/* profil_hot: where does the time go? PAPI_profil over the program's own text segment.
 *
 *   ./profil_hot [WORK]        (WORK scales the amount of work, default 150)
 *
 * The program has one hot function (hot_loop, about 90% of the work) and a cold one (cold_loop). It samples
 * PAPI_TOT_CYC with PAPI_profil (one sample per millisecond of core cycles, PAPI_PROFIL_POSIX, 16-bit
 * buckets of 2 bytes), runs the work, and prints the histogram per function (dladdr() names the bucket
 * addresses; the program is linked with -rdynamic) and the function with the most samples.
 *
 * It also says how PAPI overflows: "hardware" when the perf_event component has counter-overflow interrupts
 * (the kernel samples; on RISC-V only cores with Sscofpmf), "software" when PAPI instead reads the counters
 * from a profiling timer (PAPI_get_component_info()->hardware_intr == 0). Under the emulator the emulator's
 * own sample count confirms which one happened.
 *
 * Output lines for scripts: "mode hardware|software", "samples N", "function NAME N PCT", "hottest NAME PCT".
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <papi.h>
#include <rvemu.h>

/* Text segment bounds from the default GNU/LLVM linker scripts. */
extern char __executable_start[];
extern char etext[];

#define MAX_FUNCS          64
#define SAMPLES_PER_SECOND 1000

/* Kept global and not static, so dladdr() names them and the compiler neither inlines nor clones them. */
volatile uint64_t sink;

__attribute__((noinline)) uint64_t hot_loop(uint64_t n, uint64_t seed)
{
	uint64_t x = seed;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		x += i;
	}
	return x;
}

__attribute__((noinline)) uint64_t cold_loop(uint64_t n, uint64_t seed)
{
	uint64_t x = seed;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u + (x >> 29);
	return x;
}

/* Samples attributed to one symbol. */
struct func_count {
	const char *name;
	unsigned long samples;
};

static struct func_count funcs[MAX_FUNCS];
static int n_funcs;

static void count_sample(const char *name, unsigned long samples)
{
	for (int i = 0; i < n_funcs; i++) {
		if (strcmp(funcs[i].name, name) == 0) {
			funcs[i].samples += samples;
			return;
		}
	}
	if (n_funcs < MAX_FUNCS)
		funcs[n_funcs++] = (struct func_count){name, samples};
	else
		funcs[MAX_FUNCS - 1].samples +=
		    samples; /* unreachable for this program; never drop samples */
}

/* The fullest bucket, as an offset into the text (the program's link-time address, for nm). */
static size_t fullest_bucket;

/* Buckets of 2 bytes (scale 65536): bucket i covers text + 2i. */
static unsigned long attribute_buckets(const unsigned short *buckets, size_t n_buckets, uintptr_t text)
{
	unsigned long total = 0;
	for (size_t i = 0; i < n_buckets; i++) {
		if (!buckets[i])
			continue;
		if (buckets[i] > buckets[fullest_bucket])
			fullest_bucket = i;
		Dl_info info;
		const char *name = "?";
		if (dladdr((void *)(text + 2 * i), &info) && info.dli_sname)
			name = info.dli_sname;
		count_sample(name, buckets[i]);
		total += buckets[i];
	}
	return total;
}

static int by_samples(const void *a, const void *b)
{
	const struct func_count *x = a, *y = b;
	return (y->samples > x->samples) - (y->samples < x->samples);
}

static void die_papi(const char *what, int rc)
{
	fprintf(stderr, "profil_hot: %s: %s\n", what, PAPI_strerror(rc));
	exit(1);
}

/* One sample per millisecond at the core's clock; the cycle rate comes from PAPI's hardware info. */
static int choose_threshold(void)
{
	const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
	int mhz = hw && hw->cpu_max_mhz > 0 ? hw->cpu_max_mhz : 1000;
	return mhz * (1000000 / SAMPLES_PER_SECOND);
}

static void print_emulator_stats(void)
{
	void (*get_stats)(struct rvemu_stats *) = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	if (!get_stats) {
		printf("emulator not loaded\n");
		return;
	}
	struct rvemu_stats s;
	get_stats(&s);
	printf("emulator samples_written %llu signals %llu\n", (unsigned long long)s.samples_written,
	       (unsigned long long)s.signals);
}

int main(int argc, char **argv)
{
	long work = argc > 1 ? strtol(argv[1], NULL, 10) : 150;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (work < 1 || work > 100000) {
		fprintf(stderr, "usage: profil_hot [WORK]   (1..100000, default 150)\n");
		return 2;
	}
	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT)
		die_papi("PAPI_library_init", rc < 0 ? rc : PAPI_EINVAL);

	int event_set = PAPI_NULL;
	if ((rc = PAPI_create_eventset(&event_set)) != PAPI_OK)
		die_papi("PAPI_create_eventset", rc);
	if ((rc = PAPI_add_event(event_set, PAPI_TOT_CYC)) != PAPI_OK)
		die_papi("PAPI_add_event(PAPI_TOT_CYC)", rc);

	const PAPI_component_info_t *cmp = PAPI_get_component_info(PAPI_get_event_component(PAPI_TOT_CYC));
	int hardware = cmp && cmp->hardware_intr;
	printf("mode %s\n", hardware ? "hardware" : "software");
	printf("profil_hot: overflow by %s (component %s, hardware_intr=%d)\n",
	       hardware ? "counter-overflow interrupts (perf sampling)"
	                : "PAPI's software timer (no overflow interrupt)",
	       cmp ? cmp->name : "?", hardware);

	uintptr_t text = (uintptr_t)__executable_start;
	size_t text_len = (size_t)((uintptr_t)etext - text);
	size_t n_buckets = text_len / 2 + 1;
	unsigned short *buckets = calloc(n_buckets, sizeof *buckets);
	if (!buckets) {
		fprintf(stderr, "profil_hot: out of memory\n");
		return 1;
	}
	int threshold = choose_threshold();
	printf("profil_hot: PAPI_TOT_CYC threshold %d, text %p..%p (%zu bytes)\n", threshold,
	       (void *)__executable_start, (void *)etext, text_len);
	/* No PAPI_PROFIL_FORCE_SW: PAPI picks software overflow by itself when the component has no interrupt
	 * (papi-component patches 05 and 08). */
	const int flags = PAPI_PROFIL_POSIX | PAPI_PROFIL_BUCKET_16;
	rc = PAPI_profil(buckets, (unsigned)(n_buckets * sizeof *buckets), (vptr_t)text, 65536, event_set,
	                 PAPI_TOT_CYC, threshold, flags);
	if (rc != PAPI_OK)
		die_papi("PAPI_profil", rc);

	long long cycles = 0;
	if ((rc = PAPI_start(event_set)) != PAPI_OK)
		die_papi("PAPI_start", rc);
	for (long rep = 0; rep < work; rep++) {
		sink += hot_loop(2000000, (uint64_t)rep + 1);
		sink += cold_loop(200000, (uint64_t)rep + 7);
	}
	if ((rc = PAPI_stop(event_set, &cycles)) != PAPI_OK)
		die_papi("PAPI_stop", rc);
	/* threshold 0 turns profiling off */
	if ((rc = PAPI_profil(buckets, (unsigned)(n_buckets * sizeof *buckets), (vptr_t)text, 65536,
	                      event_set, PAPI_TOT_CYC, 0, flags)) != PAPI_OK)
		die_papi("PAPI_profil(off)", rc);

	unsigned long total = attribute_buckets(buckets, n_buckets, text);
	printf("samples %lu\n", total);
	printf("profil_hot: %lld cycles, %lu samples in the text segment\n", cycles, total);
	print_emulator_stats();
	qsort(funcs, (size_t)n_funcs, sizeof funcs[0], by_samples);
	for (int i = 0; i < n_funcs; i++)
		printf("function %-12s %6lu %5.1f%%\n", funcs[i].name, funcs[i].samples,
		       100.0 * (double)funcs[i].samples / (double)total);
	if (n_funcs > 0)
		printf("hottest %s %.1f%%\n", funcs[0].name,
		       100.0 * (double)funcs[0].samples / (double)total);
	else
		printf("hottest none 0.0%%\n");
	/* __executable_start is the program's address 0: the offset is the address nm gives the code there */
	printf("fullest bucket text+0x%zx\n", 2 * fullest_bucket);
	free(buckets);
	PAPI_shutdown();
	return total > 0 ? 0 : 1;
}
