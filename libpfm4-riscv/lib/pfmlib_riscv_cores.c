// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_cores.c : the RISC-V core PMU models
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * One pfmlib_pmu_t per core model of events/riscv_cores.h (generated
 * from the project's tables, as the event headers are): the models
 * differ only in their tables (events, /proc/cpuinfo ids, counters,
 * overflow interrupt), so one definition serves them all and a new model
 * is a new table, not new code. mcycle and minstret are the two fixed
 * counters of every model.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"

#define RISCV_CORE_EVENTS
#include "events/riscv_cores.h"	/* the model list and every model's tables */

#define RISCV_CORE_DEFINE(id, ID, n)					\
static int									\
pfm_riscv_detect_##id(void *this)						\
{										\
	return pfm_riscv_detect_ids(riscv_##id##_ids,				\
				    LIBPFM_ARRAY_SIZE(riscv_##id##_ids));	\
}										\
										\
pfmlib_pmu_t riscv_##id##_support={						\
	.desc			= RISCV_##ID##_DESC,				\
	.name			= "riscv_" #id,				\
	.pmu			= PFM_PMU_RISCV_CORE_FIRST + (n),		\
	.pme_count		= LIBPFM_ARRAY_SIZE(riscv_##id##_pe),		\
	.type			= PFM_PMU_TYPE_CORE,				\
	.pe			= riscv_##id##_pe,				\
	.flags			= RISCV_##ID##_FLAGS,				\
										\
	.pmu_detect		= pfm_riscv_detect_##id,			\
	.max_encoding		= 1,						\
	.num_cntrs		= RISCV_##ID##_NUM_CNTRS,			\
	.num_fixed_cntrs	= 2,						\
										\
	.pmu_init		= pfm_riscv_core_init,				\
	.pmu_terminate		= pfm_riscv_terminate,				\
	.get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,		\
	 PFMLIB_ENCODE_PERF(pfm_riscv_get_perf_encoding),			\
	.get_event_first	= pfm_riscv_get_event_first,			\
	.get_event_next		= pfm_riscv_get_event_next,			\
	.event_is_valid		= pfm_riscv_event_is_valid,			\
	.validate_table		= pfm_riscv_validate_table,			\
	.get_event_info		= pfm_riscv_get_event_info,			\
	.get_event_attr_info	= pfm_riscv_get_event_attr_info,		\
	 PFMLIB_VALID_PERF_PATTRS(pfm_riscv_perf_validate_pattrs),		\
	.get_event_nattrs	= pfm_riscv_get_event_nattrs,			\
};

RISCV_CORE_LIST(RISCV_CORE_DEFINE)
