// SPDX-License-Identifier: MIT
/* PAPI_profil on a GEMM under the exec count source: which code do the samples name? The multiply is i-k-j
 * with its inner loop (c[i][*] += a[i][k] * b[k][*]) in a function of its own, gemm_inner, so a histogram
 * bucket can be told to be in it. PAPI_TOT_CYC overflows every THRESHOLD modelled cycles; with an overflow
 * interrupt (RVEMU_SSCOFPMF=1) each sample's PC is the instruction the plugin named (plus the modelled skid).
 *   profil_gemm THRESHOLD INNER_SIZE
 * INNER_SIZE: gemm_inner's size in bytes (nm -S). Prints "samples S hits H inner I hottest OFFSET", OFFSET
 * the hottest bucket's distance from gemm_inner. */
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N      48
#define REPEAT 2
static double a[N][N], b[N][N], c[N][N];

__attribute__((noinline)) void gemm_inner(double *restrict crow, const double *restrict brow, double aik)
{
	for (int j = 0; j < N; j++)
		crow[j] += aik * brow[j];
}

/* The histogram: 2-byte buckets over 16 KiB of text around gemm_inner (scale 65536: one bucket per 2 bytes).
 */
#define SPAN 16384
static unsigned short buckets[SPAN / 2];

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: profil_gemm THRESHOLD INNER_SIZE\n");
		return 2;
	}
	int threshold = atoi(argv[1]);
	uintptr_t inner = (uintptr_t)gemm_inner, inner_size = strtoul(argv[2], NULL, 0);
	uintptr_t base = inner - SPAN / 4;
	int es = PAPI_NULL, r;
	if ((r = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT ||
	    (r = PAPI_create_eventset(&es)) || (r = PAPI_add_event(es, PAPI_TOT_CYC)) ||
	    (r = PAPI_profil(buckets, sizeof(buckets), (caddr_t)base, 65536, es, PAPI_TOT_CYC, threshold,
	                     PAPI_PROFIL_POSIX)) ||
	    (r = PAPI_start(es))) {
		fprintf(stderr, "profil_gemm: PAPI: %s\n", PAPI_strerror(r));
		return 1;
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = i + j;
			b[i][j] = i - j;
		}
	for (int rep = 0; rep < REPEAT; rep++)
		for (int i = 0; i < N; i++)
			for (int k = 0; k < N; k++)
				gemm_inner(c[i], b[k], a[i][k]);
	long long cycles = 0;
	if ((r = PAPI_stop(es, &cycles)) != PAPI_OK) {
		fprintf(stderr, "profil_gemm: PAPI_stop: %s\n", PAPI_strerror(r));
		return 1;
	}
	unsigned long hits = 0, in_inner = 0, best = 0;
	size_t hottest = 0;
	for (size_t i = 0; i < SPAN / 2; i++) {
		hits += buckets[i];
		uintptr_t pc = base + 2 * i;
		if (pc >= inner && pc < inner + inner_size)
			in_inner += buckets[i];
		if (buckets[i] > best) {
			best = buckets[i];
			hottest = i;
		}
	}
	printf("gemm c[7][5] = %g cycles %lld\n", c[7][5], cycles);
	printf("samples %lld hits %lu inner %lu hottest %ld\n", cycles / threshold, hits, in_inner,
	       (long)(base + 2 * hottest) - (long)inner);
	return 0;
}
