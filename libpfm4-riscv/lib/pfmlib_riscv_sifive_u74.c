/*
 * pfmlib_riscv_sifive_u74.c : SiFive U74-MC PMU model (riscv-papi overlay)
 *
 * Event classes with combinable unit masks (mhpmevent = class | mask << 8), the per-bit events and the fixed
 * counters; 2 programmable (mhpmcounter3-4) + 2 fixed counters.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_sifive_u74_events.h" /* generated from events/ by scripts/gen_events.py */

static int pfm_riscv_detect_sifive_u74(void *this)
{
	struct pfm_riscv_machine m;

	(void)this;
	pfm_riscv_host_machine(&m);
	return (m.core_u74) ? PFM_SUCCESS : PFM_ERR_NOTSUPP;
}

pfmlib_pmu_t riscv_sifive_u74_support = {
    .desc = "SiFive U74-MC",
    .name = "riscv_sifive_u74",
    .pmu = PFM_PMU_RISCV_SIFIVE_U74,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_sifive_u74_pe),
    .type = PFM_PMU_TYPE_CORE,
    .pe = riscv_sifive_u74_pe,
    .flags = 0,
    .max_encoding = 1,
    .num_cntrs = 2,
    .num_fixed_cntrs = 2,
    .supported_plm = 0, /* core PMUs: set by pfm_riscv_core_init from the isa string */

    .pmu_detect = pfm_riscv_detect_sifive_u74,
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
