/* SPDX-License-Identifier: MIT */
/* RISC-V support for PAPI's Linux layer (our overlay; see docs/papi.md).
 *
 * Included by linux-common.c and linux-timer.c. Everything here is decided at run time from /proc/cpuinfo,
 * so an x86 build running under the RISC-V emulator identifies the emulated machine; only the cycle timer
 * needs a real RISC-V instruction and exists only when __riscv is defined.
 */
#ifndef _LINUX_RISCV_H
#define _LINUX_RISCV_H

#include <stdio.h>

#include "papi.h"

/* Fill vendor, model and MHz from a RISC-V cpuinfo. Returns 1 when `f` is a RISC-V cpuinfo (hwinfo
 * filled, the generic x86/ARM/POWER decoding must be skipped), 0 otherwise (nothing changed). */
int _linux_riscv_decode_cpuinfo(FILE *f, PAPI_hw_info_t *hwinfo, int *cpuinfo_mhz);

/* 1 once _linux_riscv_decode_cpuinfo() recognised a RISC-V machine. */
int _linux_riscv_detected(void);

/* 1 when the machine's ISA string names the multi-letter extension `ext` (e.g. "sscofpmf"). */
int _linux_riscv_has_extension(const char *ext);

#if defined(__riscv)
/* Cycle timer: mtime (rdtime, always readable from user space) scaled to core cycles. */
int _linux_riscv_timer_setup(void);
long long _linux_riscv_get_cycles(void);
#endif

#endif
