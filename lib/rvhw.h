/* SPDX-License-Identifier: MIT */
/* Seam 2: the one interface through which user space touches RISC-V performance-counter hardware that
 * the Linux perf_event ABI does not cover (the distributed HPC's hpcc/hpcm/hpcr CSRs, BOOM's counter bank).
 *
 * On riscv64 these functions execute the real instructions (csrr/csrw, BOOM's `addi x0, rs1, tag` hints).
 * Elsewhere they report RVHW_ENOHW, unless librvemu.so is preloaded: it exports the same symbols and
 * emulates the hardware. librvhw is a shared library precisely so that LD_PRELOAD can interpose it.
 */
#ifndef RVHW_H
#define RVHW_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Distributed HPC CSR numbers (ours: the paper gives none) and hpcc fields (seed paper, section 4.2). */
#define RVHW_CSR_HPCC 0x800u /* user RW; useren writable only above U-mode */
#define RVHW_CSR_HPCM 0x801u /* user RW while hpcc.trigger = 0 */
#define RVHW_CSR_HPCR 0xCC0u /* user read-only: each read pops the receive FIFO */

#define RVHW_HPCC_TRIGGER     (1ull << 0)
#define RVHW_HPCC_INTERRUPTED (1ull << 1)
#define RVHW_HPCC_EMPTY       (1ull << 2)
#define RVHW_HPCC_READERROR   (1ull << 3)
#define RVHW_HPCC_ID_SHIFT    4
#define RVHW_HPCC_ID_MASK     (0x1ffffull << RVHW_HPCC_ID_SHIFT) /* bits 20:4 */
#define RVHW_HPCC_USEREN      (1ull << 21)

/* HPCManagerID = module << 4 | extend; module = hart for a core, 0x100 + n for L2 slice n. */
#define RVHW_HPC_MANAGER_ID(module, extend) ((uint32_t)(((module) << 4) | ((extend)&0xf)))
#define RVHW_HPC_MODULE_L2(slice)           (0x100u + (slice))

/* BOOM extended counters: `addi x0, rs1, tag`. */
#define RVHW_BOOM_SET_PROCTAG     1
#define RVHW_BOOM_SET_MAXPRIV     6
#define RVHW_BOOM_SET_ENABLE      7
#define RVHW_BOOM_GET_PROCTAG     33
#define RVHW_BOOM_GET_MAXPRIV     45
#define RVHW_BOOM_RESET           127
#define RVHW_BOOM_READ_BASE       128 /* read counter n: tag 128 + n, n < 64 */
#define RVHW_BOOM_COUNTERS        64
#define RVHW_BOOM_PROCTAG_COUNTED 0x1234567u

/* Return codes (negative errno style). */
#define RVHW_OK     0
#define RVHW_ENOHW  (-19) /* -ENODEV: no such hardware on this machine */
#define RVHW_EINVAL (-22) /* a CSR or tag this interface does not know */
#define RVHW_EPERM  (-1)  /* the access would trap (e.g. trigger with useren = 0): SIGILL on hardware */

/* Exported even from libraries built with -fvisibility=hidden (librvemu.so interposes these). */
#define RVHW_API __attribute__((visibility("default")))

RVHW_API int rvhw_csr_read(unsigned csr, uint64_t *value);
RVHW_API int rvhw_csr_write(unsigned csr, uint64_t value);
/* BOOM hint: executes `addi x0, rs1, tag` with rs1 = in; *out receives rs1 afterwards (for get/read tags). */
RVHW_API int rvhw_boom_op(unsigned tag, uint64_t in, uint64_t *out);
/* Which implementation answers: "riscv64" (real instructions), "emulator", or "none". */
RVHW_API const char *rvhw_backend(void);

#ifdef __cplusplus
}
#endif
#endif
