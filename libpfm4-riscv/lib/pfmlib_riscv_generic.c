/*
 * pfmlib_riscv_generic.c : RISC-V generic core (cycles, instructions) PMU model (riscv-papi overlay)
 *
 * mcycle and minstret, which every RISC-V core has. Steps aside when a specific core model matches: PAPI
 * needs exactly one core PMU.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_generic_events.h" /* generated from events/ by scripts/gen_events.py */

static int pfm_riscv_detect_generic(void *this)
{
	struct pfm_riscv_machine m;

	(void)this;
	pfm_riscv_host_machine(&m);
	return (m.is_riscv && !m.core_u74 && !m.core_cva6) ? PFM_SUCCESS : PFM_ERR_NOTSUPP;
}

pfmlib_pmu_t riscv_generic_support = {
    .desc = "RISC-V generic core (cycles, instructions)",
    .name = "riscv_generic",
    .pmu = PFM_PMU_RISCV_GENERIC,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_generic_pe),
    .type = PFM_PMU_TYPE_CORE,
    .pe = riscv_generic_pe,
    .flags = PFMLIB_PMU_FL_ARCH_DFL,
    .max_encoding = 1,
    .num_cntrs = 0,
    .num_fixed_cntrs = 2,
    .supported_plm = 0, /* core PMUs: set by pfm_riscv_core_init from the isa string */

    .pmu_detect = pfm_riscv_detect_generic,
    .pmu_init = pfm_riscv_core_init,
    .pmu_terminate = pfm_riscv_terminate,
    .get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,
    PFMLIB_ENCODE_PERF(pfm_riscv_get_perf_encoding),
    PFMLIB_VALID_PERF_PATTRS(pfm_riscv_perf_validate_pattrs),
    .get_event_first = pfm_riscv_get_event_first,
    .get_event_next = pfm_riscv_get_event_next,
    .event_is_valid = pfm_riscv_event_is_valid,
    .validate_table = pfm_riscv_validate_table,
    .get_event_info = pfm_riscv_get_event_info,
    .get_event_attr_info = pfm_riscv_get_event_attr_info,
    .get_event_nattrs = pfm_riscv_get_event_nattrs,
};
