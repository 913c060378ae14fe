// SPDX-License-Identifier: MIT
/* librvsample in a few lines (docs/sampling-api.md): sample this program's cycles with Precise Event
 * Sampling, a buffer of records at a time, print the hottest functions and what the sampler counted, and save
 * the records to a file (argv[1], optional) that rvsample_reader_open reads back. Build against an installed
 * prefix (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig) and run:
 *
 *   cc -O2 -rdynamic sample_batch.c $(pkg-config --cflags --libs rvsample) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir rvsample) -o sample_batch
 *   rvemu-run --model cva6 ./sample_batch [out.rvs]
 *
 * Under the emulator the counts are synthetic (its CPU-time clock: the model's rates times this thread's CPU
 * time); on a board they are the core's. -rdynamic lets dladdr() name this program's functions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <papi.h>
#include <rvsample.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void hot_loop(volatile double *x, long n)
{
	for (long i = 0; i < n; i++)
		*x = *x * 1.0000001 + 1.0;
}

__attribute__((noinline)) void cold_loop(volatile double *x, long n)
{
	for (long i = 0; i < n; i++)
		*x += 2.0;
}

struct hist {
	const char *name;
	unsigned long n;
};

static void count(struct hist *h, size_t *nh, size_t cap, const char *name)
{
	for (size_t i = 0; i < *nh; i++)
		if (!strcmp(h[i].name, name)) {
			h[i].n++;
			return;
		}
	if (*nh < cap)
		h[(*nh)++] = (struct hist){name, 1};
}

static int by_count(const void *a, const void *b)
{
	unsigned long x = ((const struct hist *)a)->n, y = ((const struct hist *)b)->n;
	return x < y ? 1 : x > y ? -1 : 0;
}

int main(int argc, char **argv)
{
	int es = PAPI_NULL;
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_create_eventset(&es) != PAPI_OK ||
	    PAPI_add_named_event(es, "PAPI_TOT_CYC") != PAPI_OK ||
	    PAPI_add_named_event(es, "PAPI_TOT_INS") != PAPI_OK) {
		fprintf(stderr, "sample_batch: PAPI cannot count cycles and instructions here\n");
		return 1;
	}
	struct rvsample_config c = {
	    .sampling_event = 0, .threshold = 50000, .precise = 2, .mode = RVSAMPLE_BATCH};
	rvsample_t *s;
	int rc = rvsample_init(&s, es, &c);
	if (rc != RVSAMPLE_OK) {
		fprintf(stderr, "sample_batch: %s\n", rvsample_strerror(rc));
		return 1;
	}
	volatile double x = 0;
	rvsample_start(s);
	for (int i = 0; i < 20; i++) {
		hot_loop(&x, 2000000);
		cold_loop(&x, 200000);
	}
	rvsample_stop(s);

	static struct rvsample_record recs[4096];
	struct hist h[64] = {{NULL, 0}};
	size_t nh = 0;
	ssize_t n = rvsample_read(s, recs, 4096);
	for (ssize_t i = 0; i < n; i++) {
		Dl_info info;
		int named = dladdr((void *)(uintptr_t)recs[i].pc, &info) && info.dli_sname;
		count(h, &nh, 64, named ? info.dli_sname : "(unknown)");
	}
	qsort(h, nh, sizeof(h[0]), by_count);
	printf("%zd samples of %s every %llu (precise=%d):\n", n, "PAPI_TOT_CYC",
	       (unsigned long long)c.threshold, c.precise);
	for (size_t i = 0; i < nh && i < 5; i++)
		printf("  %6.1f%%  %s\n", n ? 100.0 * (double)h[i].n / (double)n : 0.0, h[i].name);
	struct rvsample_stats st;
	rvsample_get_stats(s, &st);
	printf("exact %llu, interrupts %llu, lost %llu, dropped %llu\n", (unsigned long long)st.exact,
	       (unsigned long long)st.interrupts, (unsigned long long)st.lost,
	       (unsigned long long)st.dropped);
	if (argc > 1) {
		struct rvsample_file_info info;
		rvsample_writer_t *w;
		rvsample_get_info(s, &info);
		if ((rc = rvsample_writer_open(&w, argv[1], &info)) != RVSAMPLE_OK ||
		    (rc = rvsample_writer_add_maps(w)) != RVSAMPLE_OK ||
		    (rc = rvsample_writer_add(w, recs, (size_t)(n > 0 ? n : 0))) != RVSAMPLE_OK ||
		    (rc = rvsample_writer_close(w)) != RVSAMPLE_OK) {
			fprintf(stderr, "sample_batch: %s\n", rvsample_strerror(rc));
			return 1;
		}
		printf("records saved to %s\n", argv[1]);
	}
	rvsample_destroy(s);
	return 0;
}
