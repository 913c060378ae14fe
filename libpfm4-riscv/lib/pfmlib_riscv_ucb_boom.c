// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_ucb_boom.c : SonicBOOM extended counter bank
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * 63 free-running counters read with custom hint instructions;
 * code = counter index. A counter bank, not a perf_event PMU: no
 * perf encoding, no privilege level filtering.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_ucb_boom_events.h"	/* event and ID tables */

static int
pfm_riscv_detect_ucb_boom(void *this)
{
	return pfm_riscv_detect_ids(riscv_ucb_boom_ids, LIBPFM_ARRAY_SIZE(riscv_ucb_boom_ids));
}

pfmlib_pmu_t riscv_ucb_boom_support={
	.desc			= "SonicBOOM extended counters",
	.name			= "riscv_ucb_boom",
	.pmu			= PFM_PMU_RISCV_UCB_BOOM,
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_ucb_boom_pe),
	.type			= PFM_PMU_TYPE_UNKNOWN,
	.pe			= riscv_ucb_boom_pe,
	.supported_plm		= 0,

	.pmu_detect		= pfm_riscv_detect_ucb_boom,
	.max_encoding		= 1,
	.num_fixed_cntrs	= LIBPFM_ARRAY_SIZE(riscv_ucb_boom_pe),

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
