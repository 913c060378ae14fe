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
 * Then the batched read against the protocol's lower bound (docs/riscv-hpc.md, "Cost"): the fewest CSR
 * operations Algorithm 2 can make on this interconnect, for N = 1..64 counters of the local core manager,
 * M = 1..16 managers x 4 counters and a grid of both; each row the cheapest of REPEAT reads (a read the host
 * descheduled is retried, as on hardware, and costs more), and the worst ratio over all rows last, in the
 * "bench_hpc_batch: bound" line bench_papi_overhead.py copies into the overhead table.
 * Runs under the emulator: rvemu-run --model lowrisc-hpc --clock virtual (RVEMU_HARTS=8, RVEMU_L2_SLICES=8
 * give the 16 managers; the calling thread runs on hart 0), or set RVEMU_LIB and it re-executes itself so.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvbank.h"
#include "rvemu.h"

#define MAX_MANAGERS   8u  /* the batched vs per-event table */
#define BOUND_MANAGERS 16u /* the table against the lower bound */
#define PER_MANAGER    4u
#define REPEAT         5 /* reads per configuration; the table shows the mean */

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

/* The emulator's interconnect (emulator/bank_hpc.c), from the same variables and defaults. */
static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v != NULL && atoll(v) > 0 ? (uint64_t)atoll(v) : dflt;
}

/* The fewest CSR operations one request can take (docs/riscv-hpc.md, "Cost"): the hpcm and hpcc writes,
 * then pops that wait for their values (value k reaches the client 2 x hops x hop cycles + k x counter
 * cycles after the trigger; each operation is one access of csr_cycles, and a client has no other clock),
 * then the final hpcc check. hops: 1 to the local core manager, 2 to another core's, 3 to an L2 slice. */
static uint64_t request_bound(unsigned hops, unsigned n)
{
	uint64_t hop = env_u64("RVEMU_HPC_HOP_CYCLES", 4), per = env_u64("RVEMU_HPC_COUNTER_CYCLES", 2),
	         k_csr = csr_cycles, last = 0;

	for (unsigned k = 1; k <= n; k++) {
		/* the earliest operation index (after the trigger) that may pop value k, then one per value
		 */
		uint64_t at = (2 * hops * hop + k * per + k_csr - 1) / k_csr + (n - k);
		last = at > last ? at : last;
	}
	return 2 + last + 1;
}

static unsigned hops_of(unsigned m, unsigned harts)
{
	return m >= harts ? 3 : m == 0 ? 1 : 2;
}

/* The cheapest of REPEAT batched reads, in CSR operations. */
static double cheapest(const struct rvbank_hpc_request *req, size_t n)
{
	double best = -1;

	for (int r = 0; r < REPEAT; r++) {
		uint64_t before = csr_ops();
		double c;
		if (rvbank_hpc_read(req, n, NULL, NULL) != RVBANK_OK)
			return -1;
		c = (double)(csr_ops() - before);
		best = best < 0 || c < best ? c : best;
	}
	return best;
}

struct worst {
	double ratio, ours, bound;
	unsigned m, n;
};

/* One row against the bound: m managers (0, 1, ...) with n counters each. */
static int bound_row(unsigned m, unsigned n, unsigned harts, struct worst *w)
{
	static uint64_t values[BOUND_MANAGERS][64];
	struct rvbank_hpc_request req[BOUND_MANAGERS];
	double ours, bound = 0;

	for (unsigned i = 0; i < m; i++) {
		req[i].manager_id = manager(i, harts);
		req[i].bitmap = n == 64 ? ~0ull : (1ull << n) - 1;
		req[i].values = values[i];
		bound += (double)request_bound(hops_of(i, harts), n);
	}
	ours = cheapest(req, m);
	if (ours < 0) {
		printf("M=%u N=%u: a read failed\n", m, n);
		return -1;
	}
	printf("  %2u %3u | %8.0f %8.0f | %5.3fx\n", m, n, ours, bound, ours / bound);
	if (ours / bound > w->ratio) {
		w->ratio = ours / bound;
		w->ours = ours;
		w->bound = bound;
		w->m = m;
		w->n = n;
	}
	return 0;
}

static int bound_table(unsigned harts)
{
	static const unsigned grid_m[] = {1, 2, 4, 8, 16}, grid_n[] = {1, 8, 64};
	struct worst w = {0, 0, 0, 0, 0};

	if (harts + (unsigned)env_u64("RVEMU_L2_SLICES", 2) < BOUND_MANAGERS) {
		printf("bench_hpc_batch: fewer than %u managers (RVEMU_HARTS + RVEMU_L2_SLICES): no bound "
		       "table\n",
		       BOUND_MANAGERS);
		return 0;
	}
	printf(
	    "\nbatched read vs the protocol's lower bound (CSR operations; cheapest of %d reads; %u harts, "
	    "managers 0..%u = harts first, then L2 slices; the thread is on hart 0)\n",
	    REPEAT, harts, BOUND_MANAGERS - 1);
	printf("   M   N |     ours    bound |  ratio\n");
	for (unsigned n = 1; n <= 64; n = n < 8 ? n + 1 : n * 2)
		if (bound_row(1, n, harts, &w) != 0)
			return -1;
	for (unsigned m = 2; m <= BOUND_MANAGERS; m++)
		if (bound_row(m, PER_MANAGER, harts, &w) != 0)
			return -1;
	for (size_t i = 0; i < sizeof(grid_m) / sizeof(grid_m[0]); i++)
		for (size_t j = 0; j < sizeof(grid_n) / sizeof(grid_n[0]); j++)
			if (grid_m[i] > 1 && bound_row(grid_m[i], grid_n[j], harts, &w) != 0)
				return -1;
	printf("bench_hpc_batch: bound: worst ours/bound %.3fx at M=%u N=%u: ours %.0f, bound %.0f CSR "
	       "operations (goal <= 1.10x)\n",
	       w.ratio, w.m, w.n, w.ours, w.bound);
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
	setenv("RVEMU_HARTS", "8", 0);
	setenv("RVEMU_L2_SLICES", "8", 0);
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
	return bound_table(rvbank_nharts()) == 0 ? 0 : 1;
}
