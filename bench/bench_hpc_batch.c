// SPDX-License-Identifier: MIT
/* What one PAPI_read of the riscv_hpc component costs on the distributed HPC, batched (one request per
 * manager, as the component reads) against one request per event, in CSR operations and modelled cycles.
 *
 * The reads go through librvbank exactly as the component issues them (rvbank_hpc_read with one
 * (ManagerID, bitmap) pair per manager of the EventSet). CSR operations are the emulator's count
 * (rvemu_stats csr_reads + csr_writes): the 3 writes that issue a request, the polls of hpcc/hpcm while
 * values travel, one hpcr pop per value and the final hpcc check. Modelled cycles are the client's time
 * on the emulator's interconnect clock: every access costs RVEMU_HPC_CSR_CYCLES (1) and the client waits
 * by polling, so cycles = operations x RVEMU_HPC_CSR_CYCLES. Virtual clock: the numbers are exact, except
 * that a real descheduling of the thread mid-request makes Algorithm 2 issue it again (a few operations
 * more in that row); they are printed, not asserted.
 *   rows "N events": N counters (bits 0..N-1) of one core manager; bits past the 7 counters a lowRISC
 *                    core manager has are answered with 0 but cost the same pop (a manager holds up to 64)
 *   rows "M managers": 4 counters on each of M managers (harts first, then L2 slices)
 * Runs under the emulator: rvemu-run --model lowrisc-hpc --clock virtual (RVEMU_HARTS=4, RVEMU_L2_SLICES=4
 * give the 8 managers), or set RVEMU_LIB and it re-executes itself so.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvbank.h"
#include "rvemu.h"

#define MAX_MANAGERS 8u
#define PER_MANAGER  4u
#define REPEAT       5 /* reads per configuration; the table shows the mean */

static void (*get_stats)(struct rvemu_stats *);
static unsigned csr_cycles = 1;

static uint64_t csr_ops(void)
{
	struct rvemu_stats s;
	get_stats(&s);
	return s.csr_reads + s.csr_writes;
}

static uint32_t manager(unsigned m, unsigned harts)
{
	return m < harts ? RVHW_HPC_MANAGER_ID(m, 0) : RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(m - harts), 0);
}

/* Mean CSR operations of one read of the requests (batched) or of each of their bits alone. */
static double cost(const struct rvbank_hpc_request *req, size_t n, int per_event)
{
	uint64_t values[64] = {0};
	uint64_t before = csr_ops();

	for (int r = 0; r < REPEAT; r++) {
		if (!per_event) {
			if (rvbank_hpc_read(req, n, NULL, NULL) != RVBANK_OK)
				return -1;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			for (unsigned bit = 0; bit < 64; bit++) {
				struct rvbank_hpc_request one = {req[i].manager_id, 1ull << bit, values};
				if ((req[i].bitmap & (1ull << bit)) &&
				    rvbank_hpc_read(&one, 1, NULL, NULL) != RVBANK_OK)
					return -1;
			}
	}
	return (double)(csr_ops() - before) / REPEAT;
}

static int row(const char *label, unsigned x, const struct rvbank_hpc_request *req, size_t n, double *batched,
               double *ratio)
{
	double b = cost(req, n, 0), e = cost(req, n, 1);

	if (b < 0 || e < 0) {
		printf("%s %u: a read failed\n", label, x);
		return -1;
	}
	printf("%-10s %2u | %8.1f %8.1f | %9.1f %9.1f | %6.2fx\n", label, x, b, b * csr_cycles, e,
	       e * csr_cycles, e / b);
	*batched = b;
	*ratio = e / b;
	return 0;
}

static void reexec_under_emulator(char **argv)
{
	const char *lib = getenv("RVEMU_LIB"), *old = getenv("LD_PRELOAD");
	char preload[4096];

	if (dlsym(RTLD_DEFAULT, "rvemu_api_version") != NULL)
		return;
	if (lib == NULL || getenv("BENCH_REEXECED") != NULL) {
		fprintf(stderr,
		        "bench_hpc_batch: run it under rvemu-run --model lowrisc-hpc --clock virtual\n");
		exit(1);
	}
	snprintf(preload, sizeof(preload), "%s%s%s", old != NULL ? old : "", old != NULL && *old ? ":" : "",
	         lib);
	setenv("LD_PRELOAD", preload, 1);
	setenv("RVEMU_MODEL", "lowrisc-hpc", 0);
	setenv("RVEMU_CLOCK", "virtual", 0);
	setenv("RVEMU_HARTS", "4", 0);
	setenv("RVEMU_L2_SLICES", "4", 0);
	setenv("BENCH_REEXECED", "1", 1);
	execv("/proc/self/exe", argv);
	perror("execv");
	exit(1);
}

int main(int argc, char **argv)
{
	static uint64_t values[MAX_MANAGERS][64];
	struct rvbank_hpc_request req[MAX_MANAGERS];
	double first = 0, last = 0, b, r, one_mgr64 = 0, ratio64 = 0, ratio8 = 0;
	unsigned harts = rvbank_nharts();
	const char *cyc = getenv("RVEMU_HPC_CSR_CYCLES");

	(void)argc;
	reexec_under_emulator(argv);
	get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	if (get_stats == NULL || rvbank_hpc_probe(NULL, 0) != RVBANK_OK) {
		fprintf(stderr, "bench_hpc_batch: needs the emulator with model lowrisc-hpc\n");
		return 1;
	}
	if (cyc != NULL && atoi(cyc) > 0)
		csr_cycles = (unsigned)atoi(cyc);
	harts = harts < MAX_MANAGERS ? harts : MAX_MANAGERS;
	printf("riscv_hpc PAPI_read cost, distributed HPC (emulator, virtual clock; %u cycle(s) per CSR "
	       "access)\n",
	       csr_cycles);
	printf("                | batched (1 request/manager) | one request per event |\n");
	printf("              x |  CSR ops   cycles |   CSR ops    cycles |  ratio\n");
	for (unsigned nev = 1; nev <= 64; nev = nev < 8 ? nev + 1 : nev * 2) {
		req[0].manager_id = RVHW_HPC_MANAGER_ID(0, 0);
		req[0].bitmap = nev == 64 ? ~0ull : (1ull << nev) - 1;
		req[0].values = values[0];
		if (row("N events", nev, req, 1, &b, &r) != 0)
			return 1;
		if (nev == 1)
			first = b;
		if (nev == 64) {
			last = b;
			one_mgr64 = b;
			ratio64 = r;
		}
	}
	for (unsigned m = 1; m <= MAX_MANAGERS; m++) {
		for (unsigned i = 0; i < m; i++) {
			req[i].manager_id = manager(i, harts);
			req[i].bitmap = (1ull << PER_MANAGER) - 1;
			req[i].values = values[i];
		}
		if (row("M managers", m, req, m, &b, &r) != 0)
			return 1;
		if (m == MAX_MANAGERS)
			ratio8 = r;
	}
	printf(
	    "batched cost per extra event on one manager: %.2f CSR operations = one hpcr pop + %.2f polls of "
	    "hpcm (a manager sends one value every RVEMU_HPC_COUNTER_CYCLES=%s cycles; the client drains "
	    "faster); N=64: %.1f operations\n",
	    (last - first) / 63.0, (last - first) / 63.0 - 1.0,
	    getenv("RVEMU_HPC_COUNTER_CYCLES") ? getenv("RVEMU_HPC_COUNTER_CYCLES") : "2", one_mgr64);
	printf("batched vs one request per event: %.1fx fewer CSR operations for 64 events on one manager, "
	       "%.1fx "
	       "for %u managers x %u events\n",
	       ratio64, ratio8, MAX_MANAGERS, PER_MANAGER);
	return 0;
}
