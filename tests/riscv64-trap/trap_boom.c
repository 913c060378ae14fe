// SPDX-License-Identifier: MIT
/* BOOM's counter bank on riscv64 under qemu-user (model boom, virtual clock). Its hints (`addi x0, rs1, tag`)
 * cannot trap: qemu executes them as no-ops. So the riscv64 emulator keeps exporting seam 2's rvhw_boom_op,
 * and librvbank's BOOM calls reach the emulated bank through it (exact counts, no trap); a hint the program
 * writes inline is a no-op (rs1 unchanged) and never reaches the emulator, as on any core that is not BOOM.
 */
#include "rvbank.h"
#include "trap_test.h"

int main(void)
{
	struct emu_api api = emu_api_load();
	int (*boom_truth)(unsigned, uint64_t *) = RVEMU_SYM(int (*)(unsigned, uint64_t *), rvemu_boom_truth);
	const unsigned counters[] = {0, 1, 36};
	uint64_t start[3], end[3], truth0, truth1;

	CHECK(boom_truth != NULL && strcmp(api.model(), "boom") == 0, "model boom (%s)", api.model());
	if (boom_truth == NULL)
		return trap_test_done("trap_boom");
	struct rvemu_stats s0 = emu_stats_now(&api);
	CHECK(rvbank_boom_count(3) == RVBANK_OK, "rvbank_boom_count(3): procTag, maxPriv, enable set");
	CHECK(rvbank_boom_read(counters, 3, start) == RVBANK_OK, "rvbank_boom_read of counters 0, 1, 36");
	boom_truth(1, &truth0);
	api.advance(10000000);
	CHECK(rvbank_boom_read(counters, 3, end) == RVBANK_OK, "read again after 1e7 cycles");
	boom_truth(1, &truth1);
	struct rvemu_stats s1 = emu_stats_now(&api);
	CHECK(rvbank_delta(end[1], start[1], 64) == truth1 - truth0 && truth1 > truth0,
	      "counter 1 moved by %llu = the ground truth %llu", (unsigned long long)(end[1] - start[1]),
	      (unsigned long long)(truth1 - truth0));
	CHECK(s1.boom_ops - s0.boom_ops == 3 + 3 + 3 && s1.csr_traps == s0.csr_traps,
	      "9 hints reached the emulated bank through rvhw_boom_op (%llu), none by trap",
	      (unsigned long long)(s1.boom_ops - s0.boom_ops));
	/* an inline hint: qemu runs it as addi x0 (no-op); rs1 comes back unchanged, the emulator never sees
	 * it */
	uint64_t rs1 = 0xdead;
	s0 = emu_stats_now(&api);
	__asm__ __volatile__("addi x0, %0, 129" : "+r"(rs1)::"memory");
	s1 = emu_stats_now(&api);
	CHECK(rs1 == 0xdead && s1.boom_ops == s0.boom_ops && s1.csr_traps == s0.csr_traps,
	      "an inline BOOM hint is a no-op under qemu: rs1 0x%llx, not seen by the emulator",
	      (unsigned long long)rs1);
	return trap_test_done("trap_boom");
}
