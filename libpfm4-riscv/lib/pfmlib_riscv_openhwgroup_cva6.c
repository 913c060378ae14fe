// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_openhwgroup_cva6.c : OpenHW Group CVA6 PMU model (riscv-papi overlay)
 *
 * mhpmevent = event number; 6 programmable (mhpmcounter3-8) + 2 fixed counters; PES gives precise sampling.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_counters.h"                /* generated from events/models.csv */
#include "events/riscv_openhwgroup_cva6_events.h" /* generated from events/ by scripts/gen_events.py */

pfmlib_pmu_t riscv_openhwgroup_cva6_support = {
    .desc = "OpenHW Group CVA6",
    .name = "riscv_openhwgroup_cva6",
    .pmu = PFM_PMU_RISCV_OPENHWGROUP_CVA6,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_openhwgroup_cva6_pe),
    .type = PFM_PMU_TYPE_CORE,
    .pe = riscv_openhwgroup_cva6_pe,
    .flags = RISCV_PMU_FL_PES,
    .max_encoding = 1,
    .num_cntrs = RISCV_OPENHWGROUP_CVA6_NUM_CNTRS,
    .num_fixed_cntrs = 2,
    PFM_RISCV_CORE_OPS,
};
