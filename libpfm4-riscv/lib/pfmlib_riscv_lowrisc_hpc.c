/*
 * pfmlib_riscv_lowrisc_hpc.c : lowRISC distributed HPC PMU model (riscv-papi overlay)
 *
 * Fixed-function counters in HPCManagers (per hart and per L2 slice), read in batches by the riscv_hpc PAPI
 * component through hpcc/hpcm/hpcr. Type UNKNOWN so PAPI's perf_event and perf_event_uncore components (which
 * take CORE, UNCORE and OS_GENERIC PMUs) leave it alone.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_lowrisc_hpc_events.h" /* generated from events/ by scripts/gen_events.py */

static int pfm_riscv_detect_lowrisc_hpc(void *this)
{
	struct pfm_riscv_machine m;

	(void)this;
	pfm_riscv_host_machine(&m);
	return (m.bank_hpc) ? PFM_SUCCESS : PFM_ERR_NOTSUPP;
}

pfmlib_pmu_t riscv_lowrisc_hpc_support = {
    .desc = "lowRISC distributed HPC",
    .name = "riscv_lowrisc_hpc",
    .pmu = PFM_PMU_RISCV_LOWRISC_HPC,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe),
    .type = PFM_PMU_TYPE_UNKNOWN,
    .pe = riscv_lowrisc_hpc_pe,
    .flags = 0,
    .max_encoding = 1,
    .num_cntrs = 0,
    .num_fixed_cntrs = LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe), /* one per counter kind of a manager pair */
    .supported_plm = 0,                                         /* no privilege filtering in the bank */

    .pmu_detect = pfm_riscv_detect_lowrisc_hpc,
    .pmu_init = NULL,
    .pmu_terminate = pfm_riscv_terminate,
    .get_event_encoding[PFM_OS_NONE] = pfm_riscv_get_encoding,
    /* no PFMLIB_ENCODE_PERF: not a perf PMU, PFM_OS_PERF_EVENT* encodings fail with PFM_ERR_NOTSUPP */
    PFMLIB_VALID_PERF_PATTRS(pfm_riscv_bank_validate_pattrs),
    .get_event_first = pfm_riscv_get_event_first,
    .get_event_next = pfm_riscv_get_event_next,
    .event_is_valid = pfm_riscv_event_is_valid,
    .validate_table = pfm_riscv_validate_table,
    .get_event_info = pfm_riscv_get_event_info,
    .get_event_attr_info = pfm_riscv_get_event_attr_info,
    .get_event_nattrs = pfm_riscv_get_event_nattrs,
};
