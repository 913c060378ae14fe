/* SPDX-License-Identifier: MIT */
/* What seam 2 knows: which CSR numbers and BOOM hint tags exist, and which CSRs user code may write.
 * Shared by lib/rvhw.c (real instructions) and the emulator (emulator/fe_csr.c) so both reject the same
 * requests with the same error codes. Not installed. */
#ifndef RVHW_KNOWN_H
#define RVHW_KNOWN_H
#include "rvhw.h"

/* Standard unprivileged counters (Zicntr, Zihpm): read-only in user mode, and readable only where the
 * kernel's scounteren allows it (Linux: kernel.perf_user_access); elsewhere the read traps. */
#define RVHW_CSR_CYCLE        0xC00u
#define RVHW_CSR_TIME         0xC01u
#define RVHW_CSR_INSTRET      0xC02u
#define RVHW_CSR_HPMCOUNTER3  0xC03u
#define RVHW_CSR_HPMCOUNTER31 0xC1Fu

static inline int rvhw_csr_known(unsigned csr)
{
	switch (csr) {
	case RVHW_CSR_HPCC:
	case RVHW_CSR_HPCM:
	case RVHW_CSR_HPCR:
	case RVHW_CSR_CYCLE:
	case RVHW_CSR_TIME:
	case RVHW_CSR_INSTRET:
		return 1;
	default:
		return csr >= RVHW_CSR_HPMCOUNTER3 && csr <= RVHW_CSR_HPMCOUNTER31;
	}
}

/* CSRs 0xC00-0xCFF are read-only by the privileged spec's numbering; writing them traps. */
static inline int rvhw_csr_user_writable(unsigned csr)
{
	return csr == RVHW_CSR_HPCC || csr == RVHW_CSR_HPCM;
}

/* BOOM hints we issue: set/get procTag, set/get pfc_maxPriv, set pfc_enable, reset, read counter n.
 * The sampling tags of seed 001 (2-5, 8-12, 34-44, 64) are deliberately not part of this interface. */
static inline int rvhw_boom_tag_known(unsigned tag)
{
	switch (tag) {
	case RVHW_BOOM_SET_PROCTAG:
	case RVHW_BOOM_SET_MAXPRIV:
	case RVHW_BOOM_SET_ENABLE:
	case RVHW_BOOM_GET_PROCTAG:
	case RVHW_BOOM_GET_MAXPRIV:
	case RVHW_BOOM_RESET:
		return 1;
	default:
		return tag >= RVHW_BOOM_READ_BASE && tag < RVHW_BOOM_READ_BASE + RVHW_BOOM_COUNTERS;
	}
}

/* Tags whose result lands in rs1 (the caller must pass an output pointer). */
static inline int rvhw_boom_tag_returns(unsigned tag)
{
	return tag == RVHW_BOOM_GET_PROCTAG || tag == RVHW_BOOM_GET_MAXPRIV || tag >= RVHW_BOOM_READ_BASE;
}

#endif
