// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_openhwgroup_cva6.c : OpenHW Group CVA6 core PMU
 *
 * mhpmevent = event number. 6 programmable counters (mhpmcounter3-8)
 * and the fixed mcycle and minstret; Precise Event Sampling.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_openhwgroup_cva6_events.h"	/* event and ID tables */

static int
pfm_riscv_detect_openhwgroup_cva6(void *this)
{
	return pfm_riscv_detect_ids(riscv_openhwgroup_cva6_ids, LIBPFM_ARRAY_SIZE(riscv_openhwgroup_cva6_ids));
}

pfmlib_pmu_t riscv_openhwgroup_cva6_support={
	.desc			= "OpenHW Group CVA6",
	.name			= "riscv_openhwgroup_cva6",
	.pmu			= PFM_PMU_RISCV_OPENHWGROUP_CVA6,
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_openhwgroup_cva6_pe),
	.type			= PFM_PMU_TYPE_CORE,
	.pe			= riscv_openhwgroup_cva6_pe,
	.flags			= RISCV_PMU_FL_PES,

	.pmu_detect		= pfm_riscv_detect_openhwgroup_cva6,
	.max_encoding		= 1,
	.num_cntrs		= RISCV_OPENHWGROUP_CVA6_NUM_CNTRS,
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
