/* SPDX-License-Identifier: MIT */
/* Internal interface between seam 2's emulated entry points (emu_csr.c) and the counter-bank models
 * (emu_hpc.c: distributed HPC, emu_boom.c: BOOM bank). Not installed. */
#ifndef EMU_BANK_H
#define EMU_BANK_H
#include <stdint.h>

/* Distributed HPC (model whose bank_pmu is riscv_lowrisc_hpc). */
void emu_hpc_init(void);
int emu_hpc_present(void);
/* csr is hpcc, hpcm or hpcr; return RVHW_* codes. */
int emu_hpc_csr_read(unsigned csr, uint64_t *value);
int emu_hpc_csr_write(unsigned csr, uint64_t value);

/* BOOM bank (model whose bank_pmu is riscv_ucb_boom). */
void emu_boom_init(void);
int emu_boom_present(void);
int emu_boom_hint(unsigned tag, uint64_t in, uint64_t *out);

/* Environment knob parsing shared by the banks: unsigned decimal in [min, max], default when unset.
 * A malformed value is a configuration error: the emulator says so on stderr and exits (status 2). */
uint64_t emu_bank_env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max);

#endif
