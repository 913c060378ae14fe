// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_generic.c : RISC-V generic core PMU
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * mcycle and minstret, which every RISC-V core has. Detected on any
 * RISC-V core without a PMU model of its own, so that exactly one core
 * PMU is active (e.g. Rocket, BOOM).
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_generic_events.h"	/* event table, cores with a model */

static int
pfm_riscv_detect_generic(void *this)
{
	return pfm_riscv_detect_other(riscv_generic_not_ids, LIBPFM_ARRAY_SIZE(riscv_generic_not_ids));
}

pfmlib_pmu_t riscv_generic_support={
	.desc			= "RISC-V generic core (cycles, instructions)",
	.name			= "riscv_generic",
	.pmu			= PFM_PMU_RISCV_GENERIC,
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_generic_pe),
	.type			= PFM_PMU_TYPE_CORE,
	.pe			= riscv_generic_pe,
	.flags			= PFMLIB_PMU_FL_ARCH_DFL,

	.pmu_detect		= pfm_riscv_detect_generic,
	.max_encoding		= 1,
	.num_cntrs		= RISCV_GENERIC_NUM_CNTRS,
	.num_fixed_cntrs	= 2,

	.pmu_init		= pfm_riscv_core_init,
	.pmu_terminate		= pfm_riscv_terminate,
	.get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,
	 PFMLIB_ENCODE_PERF(pfm_riscv_get_perf_encoding),
	.get_event_first	= pfm_riscv_get_event_first,
	.get_event_next		= pfm_riscv_get_event_next,
	.event_is_valid		= pfm_riscv_event_is_valid,
	.validate_table		= pfm_riscv_validate_table,
	.get_event_info		= pfm_riscv_get_event_info,
	.get_event_attr_info	= pfm_riscv_get_event_attr_info,
	 PFMLIB_VALID_PERF_PATTRS(pfm_riscv_perf_validate_pattrs),
	.get_event_nattrs	= pfm_riscv_get_event_nattrs,
};
