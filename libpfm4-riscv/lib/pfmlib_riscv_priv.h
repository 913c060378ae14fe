/* SPDX-License-Identifier: MIT */
/*
 * pfmlib_riscv_priv.h : RISC-V PMU support, common definitions
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * The event tables (events/riscv_*_events.h) are generated from CSV
 * tables by a script; these are their types, the identification of a
 * core from /proc/cpuinfo and the callbacks shared by the RISC-V PMUs.
 */
#ifndef __PFMLIB_RISCV_PRIV_H__
#define __PFMLIB_RISCV_PRIV_H__

#include <stdint.h>
#include <stdio.h>
#include <perfmon/perf_event.h>

/*
 * how an event is counted, which decides how it is encoded
 */
typedef enum {
	RISCV_EV_RAW,	/* programmable counter: code is the mhpmevent value */
	RISCV_EV_CLASS,	/* programmable counter: code is a class, unit masks are OR-ed into it */
	RISCV_EV_FIXED,	/* mcycle, minstret: mhpmevent cannot select them, perf names them */
	RISCV_EV_BANK,	/* counter of a fixed-function bank (BOOM, distributed HPC), not a perf event */
} riscv_event_kind_t;

/*
 * which HPCManager holds a distributed-HPC counter (hart= or slice= modifier)
 */
typedef enum {
	RISCV_HPC_NONE = 0,
	RISCV_HPC_CORE,
	RISCV_HPC_L2_SLICE,
} riscv_hpc_manager_t;

typedef struct {
	const char	*uname;	/* unit mask name */
	const char	*udesc;	/* unit mask description */
	uint64_t	ucode;	/* bits OR-ed into the event code */
} riscv_umask_t;

typedef struct {
	const char		*name;		/* event name */
	const char		*desc;		/* event description */
	const char		*equiv;		/* canonical event when this one is an alias */
	uint64_t		code;		/* PFM_OS_NONE encoding, see riscv_event_kind_t */
	riscv_event_kind_t	kind;
	riscv_hpc_manager_t	manager;	/* RISCV_EV_BANK of the distributed HPC */
	int			perf_hw;	/* RISCV_EV_FIXED: PERF_COUNT_HW_* */
	int			numasks;	/* number of unit masks */
	const riscv_umask_t	*umasks;	/* unit masks (RISCV_EV_CLASS) */
} riscv_entry_t;

/*
 * how a PMU is recognised in /proc/cpuinfo, first hart only
 */
typedef enum {
	RISCV_ID_UARCH,		/* uarch line starts with str (device-tree compatible) */
	RISCV_ID_ARCH,		/* marchid, and mvendorid unless any_vendor, are equal */
	RISCV_ID_ISA_EXT,	/* isa line names the multi-letter extension str */
	RISCV_ID_PERF,		/* str, a row key of Linux perf's mapfile.csv (POSIX
				 * extended regex), matches all of
				 * "mvendorid-marchid-mimpid", as perf matches it */
} riscv_id_type_t;

typedef struct {
	riscv_id_type_t	type;
	const char	*str;		/* RISCV_ID_UARCH, RISCV_ID_ISA_EXT, RISCV_ID_PERF */
	uint64_t	mvendorid;	/* RISCV_ID_ARCH */
	uint64_t	marchid;	/* RISCV_ID_ARCH */
	int		any_vendor;	/* RISCV_ID_ARCH: mvendorid not compared */
} riscv_id_t;

/*
 * PFM_OS_NONE code of a fixed counter: bit 63 (no mhpmevent value has
 * it, they fit in 48 bits) plus the CSR number of the counter
 */
#define RISCV_FIXED_CODE(csr)	((UINT64_C(1) << 63) | (uint64_t)(csr))

/*
 * Linux riscv_pmu_sbi takes a raw event from config[47:0]
 * (bits 63:62 select firmware events)
 */
#define RISCV_PERF_RAW_CONFIG_MASK	((UINT64_C(1) << 48) - 1)

/*
 * distributed HPC: code = ManagerID << 6 | hpcm bit,
 * ManagerID = module << 4 | extend (extend is always 0),
 * module = hart, or 0x100 + n for L2 slice n
 */
#define RISCV_ATTR_HART			0	/* hart= modifier */
#define RISCV_ATTR_SLICE		1	/* slice= modifier */
#define RISCV_HPC_MAX_HART		256
#define RISCV_HPC_MAX_SLICE		256
#define RISCV_HPC_L2_MODULE_BASE	0x100
#define RISCV_HPC_MANAGER_ID(m)		((uint64_t)(m) << 4)
#define RISCV_HPC_CODE(id, bit)		(((uint64_t)(id) << 6) | (uint64_t)(bit))

/*
 * pfmlib_pmu_t.flags, arch-specific part
 */
#define RISCV_PMU_FL_PES	0x10000	/* the model has Precise Event Sampling (CVA6) */
/*
 * overflow interrupt without Sscofpmf, which Linux's riscv_pmu_sbi
 * drives like Sscofpmf's (sampling, u/k filtering): Andes' PMU
 * extension when the isa names xandespmu (scounterof CSR, local
 * interrupt 18), T-Head C9xx's own overflow CSR and interrupt
 * (CONFIG_ERRATA_THEAD_PMU)
 */
#define RISCV_PMU_FL_OVF_ANDES	0x20000
#define RISCV_PMU_FL_OVF_THEAD	0x40000

/*
 * the kernel's word on precise sampling: the highest precise_ip the core
 * PMU honours, as x86 publishes it; absent on the RISC-V driver without
 * PES. LIBPFM_RISCV_MAX_PRECISE names another file (tests).
 */
#define RISCV_MAX_PRECISE_PATH	"/sys/bus/event_source/devices/cpu/caps/max_precise"
#define RISCV_MAX_PRECISE_ENV	"LIBPFM_RISCV_MAX_PRECISE"

/*
 * the cpuinfo of the first hart, read once per pfm_initialize()
 */
#define RISCV_CPUINFO_MAX	512

typedef struct {
	int	read;			/* fields below are valid */
	int	error;			/* the file could not be read */
	int	is_riscv;		/* isa line names a RISC-V base ISA */
	char	path[RISCV_CPUINFO_MAX];/* file they were read from */
	char	isa[RISCV_CPUINFO_MAX];
	char	uarch[RISCV_CPUINFO_MAX];
	char	mvendorid[64];
	char	marchid[64];
	char	mimpid[64];
	/* the three ids as numbers, each when its field is one (once per read) */
	unsigned long long vendor, arch, imp;
	int	has_vendor, has_arch, has_imp;
	int	max_precise;		/* caps/max_precise, -1: no such file */
	char	perf_cpuid[3 * 20];	/* "mvendorid-marchid-mimpid" as Linux
					   perf matches it, "" if a field is
					   missing or malformed */
} pfm_riscv_config_t;

extern pfm_riscv_config_t pfm_riscv_cfg;

extern int pfm_riscv_read_cpuinfo(void);
extern int pfm_riscv_isa_has_ext(const char *isa, const char *ext);
extern int pfm_riscv_ere_match(const char *p, const char *s);
extern size_t pfm_riscv_ere_literal_prefix(const char *p);
extern int pfm_riscv_match_id(const riscv_id_t *id);
extern int pfm_riscv_detect_ids(const riscv_id_t *ids, int nids);
extern int pfm_riscv_detect_other(const riscv_id_t *ids, int nids);

extern int pfm_riscv_core_init(void *this);
extern int pfm_riscv_has_pes(const pfmlib_pmu_t *pmu);
extern void pfm_riscv_terminate(void *this);
extern int pfm_riscv_get_encoding(void *this, pfmlib_event_desc_t *e);
extern int pfm_riscv_get_event_first(void *this);
extern int pfm_riscv_get_event_next(void *this, int idx);
extern int pfm_riscv_event_is_valid(void *this, int pidx);
extern int pfm_riscv_validate_table(void *this, FILE *fp);
extern int pfm_riscv_get_event_attr_info(void *this, int pidx, int attr_idx, pfmlib_event_attr_info_t *info);
extern int pfm_riscv_get_event_info(void *this, int idx, pfm_event_info_t *info);
extern unsigned int pfm_riscv_get_event_nattrs(void *this, int pidx);

extern int pfm_riscv_perf_raw_config(uint64_t code, uint64_t *config);
extern int pfm_riscv_get_perf_encoding(void *this, pfmlib_event_desc_t *e);
extern void pfm_riscv_perf_validate_pattrs(void *this, pfmlib_event_desc_t *e);
extern void pfm_riscv_bank_validate_pattrs(void *this, pfmlib_event_desc_t *e);

#endif /* __PFMLIB_RISCV_PRIV_H__ */
