// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_lowrisc_hpc.c : lowRISC distributed HPC
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * Fixed-function counters in HPCManagers, one per hart and one per L2
 * slice, read in batches through the hpcc/hpcm/hpcr CSRs. The hart= or
 * slice= modifier picks the manager. A counter bank, not a perf_event
 * PMU: no perf encoding, no privilege level filtering.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_lowrisc_hpc_events.h"	/* event and ID tables */

static int
pfm_riscv_detect_lowrisc_hpc(void *this)
{
	return pfm_riscv_detect_ids(riscv_lowrisc_hpc_ids, LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_ids));
}

pfmlib_pmu_t riscv_lowrisc_hpc_support={
	.desc			= "lowRISC distributed HPC",
	.name			= "riscv_lowrisc_hpc",
	.pmu			= PFM_PMU_RISCV_LOWRISC_HPC,
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe),
	.type			= PFM_PMU_TYPE_UNKNOWN,
	.pe			= riscv_lowrisc_hpc_pe,
	.supported_plm		= 0,

	.pmu_detect		= pfm_riscv_detect_lowrisc_hpc,
	.max_encoding		= 1,
	.num_fixed_cntrs	= LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe),	/* one per counter of a manager pair */

	.pmu_terminate		= pfm_riscv_terminate,
	.get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,
	.get_event_first	= pfm_riscv_get_event_first,
	.get_event_next		= pfm_riscv_get_event_next,
	.event_is_valid		= pfm_riscv_event_is_valid,
	.validate_table		= pfm_riscv_validate_table,
	.get_event_info		= pfm_riscv_get_event_info,
	.get_event_attr_info	= pfm_riscv_get_event_attr_info,
	 PFMLIB_VALID_PERF_PATTRS(pfm_riscv_bank_validate_pattrs),
	.get_event_nattrs	= pfm_riscv_get_event_nattrs,
};
