/* SPDX-License-Identifier: MIT */
/* RISC-V identification from Linux /proc/cpuinfo, independent of PAPI so it can be unit tested.
 *
 * Linux on RISC-V prints per hart: processor, hart, isa, mmu, uarch (the device-tree "compatible" of the
 * core, e.g. "sifive,u74-mc"), mvendorid (JEDEC bank/id), marchid, mimpid. PAPI 7.0.0 knows none of them
 * and, worse, its substring search finds "vendor" inside "mvendorid". A cpuinfo is recognised as RISC-V by
 * its content (an "isa" line starting with rv32, rv64 or rv128), not by the compiler's target, so the same
 * code identifies an emulated RISC-V machine on an x86 host. Which cpuinfo is RISC-V and which core it is
 * follow riscv_cpuinfo_ids.h, generated from the table libpfm4's RISC-V detection comes from.
 */
#ifndef RISCV_CPUINFO_H
#define RISCV_CPUINFO_H

#include <stdint.h>
#include <stdio.h>

#define RISCV_CPUINFO_STR_LEN 256

struct riscv_cpuinfo {
	char isa[RISCV_CPUINFO_STR_LEN];   /* e.g. rv64imafdc_zicntr_zihpm_sscofpmf */
	char uarch[RISCV_CPUINFO_STR_LEN]; /* e.g. sifive,u74-mc; empty when the kernel does not print it */
	char mmu[32];
	uint64_t mvendorid, marchid, mimpid;
	int has_mvendorid, has_marchid, has_mimpid;
	int harts; /* number of "processor" entries */
};

/* Parse the first hart's fields from an open cpuinfo stream (rewinds it first).
 * Returns 0 when it is a RISC-V cpuinfo, -1 when it is not (out is then zeroed). */
int riscv_cpuinfo_parse(FILE *f, struct riscv_cpuinfo *out);

/* Does all of s match the POSIX extended regular expression pattern? 1 or 0, matched without regcomp, when
 * the pattern uses only ordinary characters, '.', bracket expressions and '*', '+', '?'; -1 for any other
 * pattern. */
int riscv_ere_full_match(const char *pattern, const char *s);

/* How many leading characters of pattern every string it matches in full begins with: its leading run of
 * ordinary characters, less the last when a quantifier follows it; 0 when '|' appears anywhere. */
size_t riscv_ere_literal_prefix(const char *pattern);

/* The cpuid Linux perf's keys are matched against, "mvendorid-marchid-mimpid", each as the kernel prints it
 * ("0x%lx"), into buf (cut to len - 1 characters and NUL-terminated, as snprintf does); -1, buf untouched,
 * when a field is missing or len is 0. */
int riscv_cpuinfo_perf_cpuid(const struct riscv_cpuinfo *ci, char *buf, size_t len);

/* 1 when the ISA string names the multi-letter extension `ext` (case-insensitive, e.g. "sscofpmf"). */
int riscv_isa_has_extension(const char *isa, const char *ext);

/* Vendor name for humans: from the JEDEC mvendorid when known, else from the vendor part of uarch,
 * else "RISC-V (mvendorid 0x...)". Always NUL-terminates `buf`. */
void riscv_cpuinfo_vendor_name(const struct riscv_cpuinfo *ci, char *buf, size_t len);

/* Model for humans: a known core name plus the kernel's uarch, e.g. "SiFive U74-MC (sifive,u74-mc)"; a core
 * known by mvendorid/marchid only is its name; unknown cores keep uarch, else "RISC-V marchid 0x...".
 * Always NUL-terminates `buf`. */
void riscv_cpuinfo_model_name(const struct riscv_cpuinfo *ci, char *buf, size_t len);

/* 1 when libpfm4 detects the PMU `pmu` (e.g. "riscv_sifive_u74", "riscv_ucb_boom") on this machine. */
int riscv_cpuinfo_has_pmu(const struct riscv_cpuinfo *ci, const char *pmu);

/* The libpfm4 core PMU of this machine ("riscv_generic" for a core without a model), NULL if not RISC-V. */
const char *riscv_cpuinfo_core_pmu(const struct riscv_cpuinfo *ci);

#endif
