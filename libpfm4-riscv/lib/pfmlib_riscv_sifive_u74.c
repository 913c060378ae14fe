// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_sifive_u74.c : SiFive U74-MC core PMU
 *
 * mhpmevent = class | mask << 8: the bits of one class combine (unit
 * masks of the class event), classes never mix. 2 programmable counters
 * (mhpmcounter3-4, 40 bits) and the fixed mcycle and minstret.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_sifive_u74_events.h"	/* event and ID tables */

static int
pfm_riscv_detect_sifive_u74(void *this)
{
	return pfm_riscv_detect_ids(riscv_sifive_u74_ids, LIBPFM_ARRAY_SIZE(riscv_sifive_u74_ids));
}

pfmlib_pmu_t riscv_sifive_u74_support={
	.desc			= "SiFive U74-MC",
	.name			= "riscv_sifive_u74",
	.pmu			= PFM_PMU_RISCV_SIFIVE_U74,
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_sifive_u74_pe),
	.type			= PFM_PMU_TYPE_CORE,
	.pe			= riscv_sifive_u74_pe,

	.pmu_detect		= pfm_riscv_detect_sifive_u74,
	.max_encoding		= 1,
	.num_cntrs		= RISCV_SIFIVE_U74_NUM_CNTRS,
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
