/* SPDX-License-Identifier: MIT */
/*
 * pfmlib_riscv_priv.h : RISC-V support for libpfm4 (riscv-papi overlay, not part of upstream libpfm4)
 *
 * Types of the generated event tables (scripts/gen_events.py writes riscv_<model>_events.h from the CSV
 * tables in events/), the /proc/cpuinfo reader and the callbacks shared by every RISC-V PMU model.
 */
#ifndef __PFMLIB_RISCV_PRIV_H__
#define __PFMLIB_RISCV_PRIV_H__

#include <stdint.h>
#include <stdio.h>
#include <perfmon/perf_event.h>

/* How an event is counted, which decides how it is encoded. */
typedef enum {
	RISCV_EV_RAW,   /* programmable counter: code is the mhpmevent value */
	RISCV_EV_CLASS, /* programmable counter: code is a class, unit masks are OR-ed into it */
	RISCV_EV_FIXED, /* mcycle / minstret: mhpmevent cannot select them, perf names them */
	RISCV_EV_BANK,  /* counter of a fixed-function bank (BOOM, distributed HPC): not a perf event */
} riscv_event_kind_t;

/* Which HPCManager kind holds a distributed-HPC counter (picks the hart= or slice= modifier). */
typedef enum {
	RISCV_HPC_NONE = 0,
	RISCV_HPC_CORE,
	RISCV_HPC_L2_SLICE,
} riscv_hpc_manager_t;

typedef struct {
	const char *uname; /* unit mask name */
	const char *udesc; /* unit mask description */
	uint64_t ucode;    /* bits OR-ed into the event code */
} riscv_umask_t;

typedef struct {
	const char *name;
	const char *desc;
	const char *equiv; /* canonical name when this entry is an alias (the RISC-V-PAPI fork's name) */
	uint64_t code;     /* PFM_OS_NONE encoding, see riscv_event_kind_t */
	riscv_event_kind_t kind;
	riscv_hpc_manager_t manager;
	int perf_hw; /* RISCV_EV_FIXED: PERF_COUNT_HW_* */
	int numasks;
	const riscv_umask_t *umasks;
} riscv_entry_t;

/*
 * The PFM_OS_NONE code of a fixed counter: bit 63 set (no mhpmevent value can have it, they fit in 48 bits)
 * plus the counter's CSR number, so a raw code never says "mhpmevent value" for mcycle or minstret.
 */
#define RISCV_FIXED_CODE(csr) ((UINT64_C(1) << 63) | (uint64_t)(csr))

/* Linux riscv_pmu_sbi takes the event from config bits 47:0 (bits 63:62 select firmware events). */
#define RISCV_PERF_RAW_CONFIG_MASK ((UINT64_C(1) << 48) - 1)

/* PMU-level modifiers (the distributed HPC's manager selection); u/k come from the perf_event layer. */
#define RISCV_ATTR_HART     0
#define RISCV_ATTR_SLICE    1
#define RISCV_HPC_MAX_HART  256 /* hart numbers are modules 0..0xff; 0x100 and up are L2 slices */
#define RISCV_HPC_MAX_SLICE 256

/* ManagerID = module << 4 | extend (we always use extend 0); module = hart, or 0x100 + n for L2 slice n. */
#define RISCV_HPC_L2_MODULE_BASE        0x100
#define RISCV_HPC_MANAGER_ID(module)    ((uint64_t)(module) << 4)
#define RISCV_HPC_CODE(manager_id, bit) (((uint64_t)(manager_id) << 6) | (uint64_t)(bit))

/* pfmlib_pmu_t.flags, arch-specific half */
#define RISCV_PMU_FL_PES                                                                                     \
	0x10000 /* core has Precise Event Sampling (CVA6): keeps perf's precise= modifier                    \
	         */

/* What /proc/cpuinfo says about the first hart. Missing fields are empty strings. */
#define RISCV_CPUINFO_VALUE_MAX 512
struct pfm_riscv_cpuinfo {
	char isa[RISCV_CPUINFO_VALUE_MAX];
	char uarch[RISCV_CPUINFO_VALUE_MAX];
	char mvendorid[64];
	char marchid[64];
	char mimpid[64];
};

/* Which machine a cpuinfo describes (see pfm_riscv_classify). */
struct pfm_riscv_machine {
	int is_riscv;     /* isa starts with rv32/rv64/rv128 */
	int core_u74;     /* SiFive U74 core */
	int core_cva6;    /* OpenHW CVA6 core */
	int bank_boom;    /* SonicBOOM extended counter bank */
	int bank_hpc;     /* distributed HPC (isa extension xdhpc) */
	int has_sscofpmf; /* counter overflow + privilege filtering (isa extension sscofpmf) */
};

/* Environment variable naming another file to read instead of /proc/cpuinfo (tests, the emulator). */
#define RISCV_CPUINFO_ENV "LIBPFM_RISCV_CPUINFO"

extern const char *pfm_riscv_cpuinfo_path(void);
extern int pfm_riscv_cpuinfo_get(const char *path, const char *key, char *buf, size_t maxlen);
extern int pfm_riscv_read_cpuinfo(const char *path, struct pfm_riscv_cpuinfo *info);
extern int pfm_riscv_isa_has_ext(const char *isa, const char *ext);
extern void pfm_riscv_classify(const struct pfm_riscv_cpuinfo *info, struct pfm_riscv_machine *m);
extern int pfm_riscv_host_machine(struct pfm_riscv_machine *m);

/* callbacks shared by every RISC-V PMU model */
extern int pfm_riscv_detect(void *this);
extern int pfm_riscv_core_init(void *this);
extern void pfm_riscv_terminate(void *this);
extern int pfm_riscv_get_encoding(void *this, pfmlib_event_desc_t *e);
extern int pfm_riscv_get_event_first(void *this);
extern int pfm_riscv_get_event_next(void *this, int idx);
extern int pfm_riscv_event_is_valid(void *this, int pidx);
extern int pfm_riscv_validate_table(void *this, FILE *fp);
extern int pfm_riscv_get_event_attr_info(void *this, int pidx, int attr_idx, pfmlib_event_attr_info_t *info);
extern int pfm_riscv_get_event_info(void *this, int idx, pfm_event_info_t *info);
extern unsigned int pfm_riscv_get_event_nattrs(void *this, int pidx);

/* perf_event layer (pfmlib_riscv_perf_event.c) */
extern int pfm_riscv_perf_raw_config(uint64_t code, uint64_t *config);
extern int pfm_riscv_get_perf_encoding(void *this, pfmlib_event_desc_t *e);
extern void pfm_riscv_perf_validate_pattrs(void *this, pfmlib_event_desc_t *e);
extern void pfm_riscv_bank_validate_pattrs(void *this, pfmlib_event_desc_t *e);

/*
 * The callbacks every RISC-V PMU model shares: a model file is only its pfmlib_pmu_t (names, counters,
 * event table). Detection is one function (pfm_riscv_detect) that asks the classified cpuinfo about the PMU
 * id.
 */
#define PFM_RISCV_TABLE_OPS                                                                                  \
	.pmu_detect = pfm_riscv_detect, .pmu_terminate = pfm_riscv_terminate,                                \
	.get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,                                           \
	.get_event_first = pfm_riscv_get_event_first, .get_event_next = pfm_riscv_get_event_next,            \
	.event_is_valid = pfm_riscv_event_is_valid, .validate_table = pfm_riscv_validate_table,              \
	.get_event_info = pfm_riscv_get_event_info, .get_event_attr_info = pfm_riscv_get_event_attr_info,    \
	.get_event_nattrs = pfm_riscv_get_event_nattrs

/* Core PMUs: perf encoding; privilege levels decided at init from the isa string (Sscofpmf or not). */
#define PFM_RISCV_CORE_OPS                                                                                   \
	PFM_RISCV_TABLE_OPS, .pmu_init = pfm_riscv_core_init, .supported_plm = 0,                            \
	                     PFMLIB_ENCODE_PERF(pfm_riscv_get_perf_encoding),                                \
	                     PFMLIB_VALID_PERF_PATTRS(pfm_riscv_perf_validate_pattrs)

/* Counter banks: not perf PMUs (no PFMLIB_ENCODE_PERF: PFM_OS_PERF_EVENT* encodings fail with
 * PFM_ERR_NOTSUPP), no privilege filtering; type UNKNOWN so PAPI's perf_event components leave them alone. */
#define PFM_RISCV_BANK_OPS                                                                                   \
	PFM_RISCV_TABLE_OPS, .type = PFM_PMU_TYPE_UNKNOWN, .supported_plm = 0, .num_cntrs = 0,               \
	                     PFMLIB_VALID_PERF_PATTRS(pfm_riscv_bank_validate_pattrs)

#endif /* __PFMLIB_RISCV_PRIV_H__ */
