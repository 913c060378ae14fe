// SPDX-License-Identifier: MIT
/* A tiny seam-2 client for real riscv64 machines (and qemu-riscv64): prints which backend answers, reads
 * the standard counters, and with the argument "hpc" reads hpcc, which traps (SIGILL) on a core without
 * the distributed HPC; "boom" issues a BOOM counter-read hint, a no-op (rs1 unchanged) on other cores. Built
 * and run under qemu-riscv64 by tests/riscv64/run-riscv64-tests.sh; not part of `make check`. */
#include <stdio.h>
#include <string.h>

#include "rvhw.h"
#include "rvhw_known.h"

static void show(const char *name, unsigned csr)
{
	uint64_t v = 0;
	int rc = rvhw_csr_read(csr, &v);

	if (rc == RVHW_OK)
		printf("%-8s 0x%03x = %llu\n", name, csr, (unsigned long long)v);
	else
		printf("%-8s 0x%03x: error %d\n", name, csr, rc);
}

int main(int argc, char **argv)
{
	printf("rvhw backend: %s\n", rvhw_backend());
	show("cycle", RVHW_CSR_CYCLE);
	show("time", RVHW_CSR_TIME);
	show("instret", RVHW_CSR_INSTRET);
	if (argc > 1 && strcmp(argv[1], "hpc") == 0) {
		fflush(stdout);
		show("hpcc", RVHW_CSR_HPCC); /* traps like the hardware when the core has no such CSR */
	}
	if (argc > 1 && strcmp(argv[1], "boom") == 0) {
		uint64_t out = 0;
		int rc = rvhw_boom_op(RVHW_BOOM_READ_BASE + 1, 0xdead, &out);
		printf("boom hint read counter 1: rc %d, rs1 0x%llx%s\n", rc, (unsigned long long)out,
		       out == 0xdead ? " (unchanged: the hint is a no-op on this core)" : "");
	}
	return 0;
}
