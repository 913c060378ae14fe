// SPDX-License-Identifier: MIT
/* Seam 2 under the emulator: librvemu.so exports the rvhw_* symbols of lib/rvhw.h, so under LD_PRELOAD
 * they take precedence over librvhw's and every CSR access / BOOM hint lands here. Arguments are checked
 * exactly as lib/rvhw.c checks them (lib/rvhw_known.h). The counter CSRs (cycle, instret, hpmcounterN)
 * answer as the perf core says the kernel's scounteren would (kernel.perf_user_access); time is always
 * readable; the bank CSRs and hints go to the model's counter bank (mach_bank.c). A machine without the
 * CSR answers RVHW_ENOHW.
 *
 * fe_csr_read/fe_csr_write are the one implementation of a CSR access: the exported functions call them,
 * and so does the CSR-trap front end (fe_trap.c) on riscv64, where librvhw's real csrr/csrw run and trap.
 * There the CSR functions are not exported (the real instruction is the path under test); the BOOM hint
 * cannot trap (it is an ordinary addi to x0), so rvhw_boom_op stays exported on every architecture. */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "fe.h"
#include "mach.h"
#include "perf.h"
#include "rvhw.h"
#include "rvhw_known.h"

/* The time CSR counts at the platform timebase; 1 MHz is what the boards' device trees say. */
#define EMU_TIMEBASE_HZ 1000000ull

static uint64_t time_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * EMU_TIMEBASE_HZ +
	       (uint64_t)ts.tv_nsec / (1000000000ull / EMU_TIMEBASE_HZ);
}

int fe_csr_read(unsigned csr, uint64_t *value)
{
	if (value == NULL || !rvhw_csr_known(csr))
		return RVHW_EINVAL;
	EMU_STAT_ADD(csr_reads, 1);
	if (csr == RVHW_CSR_TIME) {
		*value = time_now();
		return RVHW_OK;
	}
	if (csr == RVHW_CSR_CYCLE || csr == RVHW_CSR_INSTRET ||
	    (csr >= RVHW_CSR_HPMCOUNTER3 && csr <= RVHW_CSR_HPMCOUNTER31)) {
		if (csr >= RVHW_CSR_HPMCOUNTER3 + emu_model()->prog_counters && csr <= RVHW_CSR_HPMCOUNTER31)
			return RVHW_ENOHW; /* a counter this core does not implement */
		int r = perf_user_counter_read(csr, value);
		return r == 0 ? RVHW_OK : RVHW_EPERM; /* the read would trap: SIGILL on the board */
	}
	const struct emu_bank *bank = emu_bank_active();
	return bank && bank->csr_read ? bank->csr_read(csr, value) : RVHW_ENOHW;
}

int fe_csr_write(unsigned csr, uint64_t value)
{
	if (!rvhw_csr_known(csr))
		return RVHW_EINVAL;
	if (!rvhw_csr_user_writable(csr))
		return RVHW_EPERM;
	EMU_STAT_ADD(csr_writes, 1);
	const struct emu_bank *bank = emu_bank_active();
	return bank && bank->csr_write ? bank->csr_write(csr, value) : RVHW_ENOHW;
}

/* On the board a CSR access or a hint is one instruction: no signal lands in the middle of it, and it costs
 * the program a cycle, not the emulator's microseconds. So the exported calls run inside the re-entry guard
 * (signals that arrive meanwhile are delivered after them, mach.h), and their time is the emulated kernel's
 * (emu_kernel_enter), as a trapped access's is (fe_trap.c). */
static void instruction_begin(void)
{
	emu_guard_enter();
	emu_kernel_enter();
}

static int instruction_end(int result)
{
	emu_kernel_leave();
	emu_guard_leave();
	return result;
}

#if !FE_CSR_TRAPS
int rvhw_csr_read(unsigned csr, uint64_t *value)
{
	instruction_begin();
	return instruction_end(fe_csr_read(csr, value));
}

int rvhw_csr_write(unsigned csr, uint64_t value)
{
	instruction_begin();
	int r = instruction_end(fe_csr_write(csr, value));
	/* a user-writable CSR that refuses the write (a trigger with hpcc.useren = 0) traps on the board: the
	 * SIGILL the instruction would raise, once the signal mask is the program's again */
	if (r == RVHW_EPERM && rvhw_csr_user_writable(csr))
		raise(SIGILL);
	return r;
}
#endif

static int boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	if (!rvhw_boom_tag_known(tag))
		return RVHW_EINVAL;
	if (out == NULL && rvhw_boom_tag_returns(tag))
		return RVHW_EINVAL;
	EMU_STAT_ADD(boom_ops, 1);
	const struct emu_bank *bank = emu_bank_active();
	return bank && bank->op ? bank->op(tag, in, out) : RVHW_ENOHW;
}

int rvhw_boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	instruction_begin();
	return instruction_end(boom_op(tag, in, out));
}

const char *rvhw_backend(void)
{
	return "emulator";
}
