// SPDX-License-Identifier: MIT
/* The HPC client as a RISC-V user runs it: librvbank (lib/rvbank.c) over librvhw (lib/rvhw.c) compiled for
 * riscv64, whose real csrr/csrw of hpcc/hpcm/hpcr trap into the emulator (model lowrisc-hpc, virtual clock).
 * The batched read returns exactly the emulator's ground truth, and every CSR access the library reports
 * is one trap the emulator carried out. */
#include "rvbank.h"
#include "trap_test.h"

/* A request the host deschedules the thread in is interrupted (the emulator's hpcc says so, as a board's
 * after a context switch), and Algorithm 2 repeats it; after RVBANK_DEFAULT_RETRIES repetitions the library
 * gives up with RVBANK_ERETRY, never a wrong number. Each CSR access is a trap through qemu's signal
 * delivery, so under a loaded host (stress-ng --cpu 2 on 2 cores) every attempt of a read can be
 * preempted: that ERETRY is the protocol working. A read is tried again, boundedly, when the emulator
 * itself counted an interruption (or read error) for every attempt of it; any other ERETRY is a failure. */
#define QUIET_TRIES 100

static int read_until_uninterrupted(const struct emu_api *api, const struct rvbank_hpc_request *req, size_t n,
                                    struct rvbank_hpc_stats *st, struct rvemu_stats *s0,
                                    struct rvemu_stats *s1)
{
	int rc = RVBANK_ERETRY;
	unsigned interrupted_reads = 0;
	for (unsigned i = 0; i < QUIET_TRIES && rc == RVBANK_ERETRY; i++) {
		memset(st, 0, sizeof(*st));
		*s0 = emu_stats_now(api);
		rc = rvbank_hpc_read(req, n, NULL, st);
		*s1 = emu_stats_now(api);
		if (rc != RVBANK_ERETRY)
			break;
		uint64_t seen =
		    s1->hpc_interruptions - s0->hpc_interruptions + s1->hpc_readerrors - s0->hpc_readerrors;
		if (seen < RVBANK_DEFAULT_RETRIES + 1) {
			CHECK(0, "RVBANK_ERETRY with %llu interruptions and read errors for %u attempts",
			      (unsigned long long)seen, RVBANK_DEFAULT_RETRIES + 1);
			return rc;
		}
		interrupted_reads++;
	}
	if (interrupted_reads)
		printf("     (%u reads of %zu managers before it were interrupted in all %u attempts, as "
		       "the emulator's hpcc said: context switches, or RVEMU_HPC_FORCE_INTERRUPT)\n",
		       interrupted_reads, n, RVBANK_DEFAULT_RETRIES + 1);
	return rc;
}

static void expect_truth(const struct emu_api *api, uint32_t id, uint64_t bitmap, const uint64_t *values,
                         const char *what)
{
	unsigned k = 0, equal = 0, n = 0;
	for (unsigned bit = 0; bit < 64; bit++) {
		uint64_t want;
		if (!(bitmap & (1ull << bit)))
			continue;
		if (api->hpc_truth(id, bit, &want) != 0)
			want = 0; /* a bit no counter is behind reads 0 */
		equal += values[k] == want;
		n++;
		k++;
	}
	CHECK(equal == n, "%s: %u of %u values equal the ground truth (first %llu)", what, equal, n,
	      (unsigned long long)values[0]);
}

int main(void)
{
	struct emu_api api = emu_api_load();
	uint64_t core[7], l2[4], other[3];
	struct rvbank_hpc_request req[] = {{RVHW_HPC_MANAGER_ID(0, 0), 0x7f, core},
	                                   {RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(0), 0), 0xf, l2},
	                                   {RVHW_HPC_MANAGER_ID(1, 0), 0x13, other}};
	struct rvbank_hpc_stats st = {0};
	char reason[128] = "";

	CHECK(strcmp(rvhw_backend(), "emulator") == 0, "rvhw backend: %s", rvhw_backend());
	int probe = rvbank_hpc_probe(reason, sizeof(reason));
	CHECK(probe == RVBANK_OK, "rvbank_hpc_probe: %d %s", probe, reason);
	CHECK(api.advance(123456789) == 0, "virtual clock advanced");
	struct rvemu_stats s0, s1;
	int rc = read_until_uninterrupted(&api, req, 3, &st, &s0, &s1);
	CHECK(rc == RVBANK_OK, "rvbank_hpc_read of 3 managers: %s", rvbank_strerror(rc));
	expect_truth(&api, req[0].manager_id, req[0].bitmap, core, "hart 0's manager, 7 counters");
	expect_truth(&api, req[1].manager_id, req[1].bitmap, l2, "L2 slice 0's manager, 4 counters");
	expect_truth(&api, req[2].manager_id, req[2].bitmap, other, "hart 1's manager, bits 0, 1, 4");
	uint64_t traps = s1.csr_traps - s0.csr_traps;
	CHECK(traps == st.csr_reads + st.csr_writes && traps > 0,
	      "every CSR access was a trap: %llu traps = %llu reads + %llu writes (requests %llu, retries "
	      "%llu)",
	      (unsigned long long)traps, (unsigned long long)st.csr_reads, (unsigned long long)st.csr_writes,
	      (unsigned long long)st.requests, (unsigned long long)st.retries);
	CHECK(s1.csr_reads - s0.csr_reads == st.csr_reads && s1.csr_writes - s0.csr_writes == st.csr_writes,
	      "the emulator's csr_reads/csr_writes match the library's counts");
	CHECK(s1.csr_traps_passed == s0.csr_traps_passed, "no trap passed on to the program");
	CHECK(s1.syscalls_emulated == s0.syscalls_emulated, "no emulated system call on the way");
	/* a second read later: the counts moved by exactly what the clock added */
	CHECK(api.advance(1000000) == 0, "advanced 1e6 cycles");
	rc = read_until_uninterrupted(&api, req, 1, &st, &s0, &s1);
	CHECK(rc == RVBANK_OK, "second read of hart 0's manager");
	expect_truth(&api, req[0].manager_id, req[0].bitmap, core, "hart 0's manager after 1e6 more cycles");
	return trap_test_done("trap_hpc");
}
