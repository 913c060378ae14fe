// SPDX-License-Identifier: MIT
/* Seam 2 on real hardware (lib/rvhw.h).
 *
 * On riscv64 every call executes the real instruction. csrr/csrw and BOOM's `addi x0, rs1, tag` hint encode
 * the CSR number / tag as an immediate, so each supported number gets its own instruction in a switch
 * (generated with macros below). Elsewhere there is no such hardware: every call reports RVHW_ENOHW unless
 * librvemu.so is preloaded, whose exported rvhw_* symbols then take precedence over these.
 *
 * Trapping accesses are NOT caught here: a CSR the core does not implement (e.g. hpcc on a machine without
 * the distributed HPC, or under qemu-user) or a trigger with hpcc.useren = 0 raises SIGILL exactly as the
 * instruction does. Catching it would need a process-wide SIGILL handler swapped around every access, which
 * is neither thread-safe nor compatible with a handler the application (or an emulator) installed itself.
 * Callers that must probe first can check /proc/cpuinfo for the `xdhpc` ISA extension.
 */
#include "rvhw.h"
#include "rvhw_known.h"

#include <stddef.h>

#if defined(__riscv) && __riscv_xlen == 64
#define RVHW_REAL_INSTRUCTIONS 1
#else
#define RVHW_REAL_INSTRUCTIONS 0
#endif

static int check_read_args(unsigned csr, const uint64_t *value)
{
	if (value == NULL || !rvhw_csr_known(csr))
		return RVHW_EINVAL;
	return RVHW_OK;
}

static int check_write_args(unsigned csr)
{
	if (!rvhw_csr_known(csr))
		return RVHW_EINVAL;
	if (!rvhw_csr_user_writable(csr))
		return RVHW_EPERM; /* read-only CSR: the write would trap */
	return RVHW_OK;
}

static int check_boom_args(unsigned tag, const uint64_t *out)
{
	if (!rvhw_boom_tag_known(tag))
		return RVHW_EINVAL;
	if (out == NULL && rvhw_boom_tag_returns(tag))
		return RVHW_EINVAL;
	return RVHW_OK;
}

#if RVHW_REAL_INSTRUCTIONS

#define CSR_READ_CASE(num)                                                                                   \
	case num:                                                                                            \
		__asm__ __volatile__("csrr %0, %1" : "=r"(v) : "i"(num));                                    \
		break;
#define CSR_WRITE_CASE(num)                                                                                  \
	case num:                                                                                            \
		__asm__ __volatile__("csrw %0, %1" : : "i"(num), "r"(value) : "memory");                     \
		break;
/* rs1 is both input and output: get/read hints write their result back into rs1. */
#define BOOM_HINT_CASE(tag)                                                                                  \
	case tag:                                                                                            \
		__asm__ __volatile__("addi x0, %0, %1" : "+r"(rs1) : "i"(tag) : "memory");                   \
		break;
/* Eight consecutive read tags (clang-format's layout of this macro is not stable, so it is left alone). */
/* clang-format off */
#define CSR_READ_CASES8(base) \
	CSR_READ_CASE(base) CSR_READ_CASE(base + 1) CSR_READ_CASE(base + 2) CSR_READ_CASE(base + 3) \
	CSR_READ_CASE(base + 4) CSR_READ_CASE(base + 5) CSR_READ_CASE(base + 6) CSR_READ_CASE(base + 7)
#define BOOM_HINT_CASES8(base) \
	BOOM_HINT_CASE(base) BOOM_HINT_CASE(base + 1) BOOM_HINT_CASE(base + 2) BOOM_HINT_CASE(base + 3) \
	BOOM_HINT_CASE(base + 4) BOOM_HINT_CASE(base + 5) BOOM_HINT_CASE(base + 6) BOOM_HINT_CASE(base + 7)
/* clang-format on */

int rvhw_csr_read(unsigned csr, uint64_t *value)
{
	int rc = check_read_args(csr, value);
	uint64_t v = 0;

	if (rc != RVHW_OK)
		return rc;
	switch (csr) {
		CSR_READ_CASE(0x800)
		CSR_READ_CASE(0x801)
		CSR_READ_CASE(0xCC0)
		CSR_READ_CASE(0xC00)
		CSR_READ_CASE(0xC01)
		CSR_READ_CASE(0xC02)
		CSR_READ_CASES8(0xC03)
		CSR_READ_CASES8(0xC0B)
		CSR_READ_CASES8(0xC13)
		CSR_READ_CASE(0xC1B)
		CSR_READ_CASE(0xC1C)
		CSR_READ_CASE(0xC1D)
		CSR_READ_CASE(0xC1E)
		CSR_READ_CASE(0xC1F)
	default:
		return RVHW_EINVAL;
	}
	*value = v;
	return RVHW_OK;
}

int rvhw_csr_write(unsigned csr, uint64_t value)
{
	int rc = check_write_args(csr);

	if (rc != RVHW_OK)
		return rc;
	switch (csr) {
		CSR_WRITE_CASE(0x800)
		CSR_WRITE_CASE(0x801)
	default:
		return RVHW_EINVAL;
	}
	return RVHW_OK;
}

int rvhw_boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	int rc = check_boom_args(tag, out);
	uint64_t rs1 = in;

	if (rc != RVHW_OK)
		return rc;
	switch (tag) {
		BOOM_HINT_CASE(1)
		BOOM_HINT_CASE(6)
		BOOM_HINT_CASE(7)
		BOOM_HINT_CASE(33)
		BOOM_HINT_CASE(45)
		BOOM_HINT_CASE(127)
		BOOM_HINT_CASES8(128)
		BOOM_HINT_CASES8(136)
		BOOM_HINT_CASES8(144)
		BOOM_HINT_CASES8(152)
		BOOM_HINT_CASES8(160)
		BOOM_HINT_CASES8(168)
		BOOM_HINT_CASES8(176)
		BOOM_HINT_CASES8(184)
	default:
		return RVHW_EINVAL;
	}
	if (out != NULL)
		*out = rs1;
	return RVHW_OK;
}

const char *rvhw_backend(void)
{
	return "riscv64";
}

#else /* no RISC-V: no such hardware (the emulator, when preloaded, interposes these symbols) */

int rvhw_csr_read(unsigned csr, uint64_t *value)
{
	int rc = check_read_args(csr, value);
	return rc != RVHW_OK ? rc : RVHW_ENOHW;
}

int rvhw_csr_write(unsigned csr, uint64_t value)
{
	int rc = check_write_args(csr);
	(void)value;
	return rc != RVHW_OK ? rc : RVHW_ENOHW;
}

int rvhw_boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	int rc = check_boom_args(tag, out);
	(void)in;
	return rc != RVHW_OK ? rc : RVHW_ENOHW;
}

const char *rvhw_backend(void)
{
	return "none";
}

#endif
