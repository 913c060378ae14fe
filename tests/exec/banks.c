// SPDX-License-Identifier: MIT
/* The counter banks under the exec count source (docs/exec-counts.md): a riscv64 program reads BOOM's bank or
 * the distributed HPC (through librvbank, as on hardware) around a loop of N iterations (argument 2) of 4
 * instructions, one load and one conditional branch. Run under rvemu-run --exec --model boom|lowrisc-hpc,
 * two runs differ by exactly what the extra iterations executed. Usage: banks boom|hpc N. Prints one line of
 * name=count pairs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvbank.h"

static uint64_t word;

static void loop(long n)
{
	__asm__ volatile("1: ld t0, 0(%1)\n"
	                 "   addi t1, t1, 1\n"
	                 "   addi %0, %0, -1\n"
	                 "   bnez %0, 1b\n"
	                 : "+r"(n)
	                 : "r"(&word)
	                 : "t0", "t1", "memory");
}

/* BOOM: counters by index of events/ucb_boom.csv (insts, exe_is_ld, com_is_ld, dcache_access, com_is_br,
 * icache_hit, then one without an execution-driven meaning, iss_val_zero, which keeps its profile rate). */
static int boom(long n)
{
	static const unsigned counters[] = {1, 31, 47, 36, 49, 3, 27};
	static const char *const names[] = {"insts",     "exe_is_ld",  "com_is_ld",   "dcache_access",
	                                    "com_is_br", "icache_hit", "iss_val_zero"};
	enum { N = sizeof(counters) / sizeof(counters[0]) };
	uint64_t before[N], after[N];
	int rc = rvbank_boom_count(0);
	if (rc == 0)
		rc = rvbank_boom_read(counters, N, before);
	loop(n);
	if (rc == 0)
		rc = rvbank_boom_read(counters, N, after);
	if (rc != 0) {
		fprintf(stderr, "banks: BOOM: %s\n", rvbank_strerror(rc));
		return 1;
	}
	for (unsigned i = 0; i < N; i++)
		printf("%s=%llu%c", names[i], (unsigned long long)(after[i] - before[i]),
		       i + 1 < N ? ' ' : '\n');
	return 0;
}

/* The distributed HPC: every core manager's L1D_READ (bit 2) and L1I_READ (bit 0), summed over the harts, and
 * the L2 slices' L2_READ (bit 0). */
static int hpc(long n)
{
	unsigned harts = rvbank_nharts();
	if (harts > 64)
		harts = 64;
	uint64_t v[2][64][2] = {{{0}}}, l2[2][2][1] = {{{0}}};
	struct rvbank_hpc_request req[66];
	struct rvbank_hpc_stats stats = {0, 0, 0, 0};
	char reason[200];
	int rc = rvbank_hpc_probe(reason, sizeof(reason));
	if (rc != 0) {
		fprintf(stderr, "banks: the distributed HPC is not readable: %s\n", reason);
		return 1;
	}
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		if (pass == 1)
			loop(n);
		size_t k = 0;
		for (unsigned h = 0; h < harts; h++)
			req[k++] = (struct rvbank_hpc_request){RVHW_HPC_MANAGER_ID(h, 0), 0x5, v[pass][h]};
		for (unsigned s = 0; s < 2; s++)
			req[k++] =
			    (struct rvbank_hpc_request){RVHW_HPC_MANAGER_ID(0x100 + s, 0), 0x1, l2[pass][s]};
		rc = rvbank_hpc_read(req, k, NULL, &stats);
	}
	if (rc != 0) {
		fprintf(stderr, "banks: HPC: %s\n", rvbank_strerror(rc));
		return 1;
	}
	uint64_t l1i = 0, l1d = 0, l2read = 0;
	for (unsigned h = 0; h < harts; h++) {
		l1i += v[1][h][0] - v[0][h][0];
		l1d += v[1][h][1] - v[0][h][1];
	}
	for (unsigned s = 0; s < 2; s++)
		l2read += l2[1][s][0] - l2[0][s][0];
	/* retries: Algorithm 2 repeats a request the host's descheduling of the thread interrupted (real, so
	 * it varies from run to run); a retry runs more of the reading code */
	printf("L1I_READ=%llu L1D_READ=%llu L2_READ=%llu retries=%llu\n", (unsigned long long)l1i,
	       (unsigned long long)l1d, (unsigned long long)l2read, (unsigned long long)stats.retries);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "boom") != 0 && strcmp(argv[1], "hpc") != 0)) {
		fprintf(stderr, "usage: banks boom|hpc N\n");
		return 2;
	}
	long n = atol(argv[2]);
	return strcmp(argv[1], "boom") == 0 ? boom(n) : hpc(n);
}
