// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_sifive_u74.c : SiFive U74-MC PMU model (riscv-papi overlay)
 *
 * Event classes with combinable unit masks (mhpmevent = class | mask << 8), the per-bit events and the fixed
 * counters; 2 programmable (mhpmcounter3-4, 40 bits) + 2 fixed counters.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_counters.h"          /* generated from events/models.csv */
#include "events/riscv_sifive_u74_events.h" /* generated from events/ by scripts/gen_events.py */

pfmlib_pmu_t riscv_sifive_u74_support = {
    .desc = "SiFive U74-MC",
    .name = "riscv_sifive_u74",
    .pmu = PFM_PMU_RISCV_SIFIVE_U74,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_sifive_u74_pe),
    .type = PFM_PMU_TYPE_CORE,
    .pe = riscv_sifive_u74_pe,
    .max_encoding = 1,
    .num_cntrs = RISCV_SIFIVE_U74_NUM_CNTRS,
    .num_fixed_cntrs = 2,
    PFM_RISCV_CORE_OPS,
};
