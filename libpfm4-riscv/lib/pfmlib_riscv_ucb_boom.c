// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_ucb_boom.c : SonicBOOM extended counters PMU model (riscv-papi overlay)
 *
 * 63 free-running counters read with custom hints; code = counter index. A counter bank, not a perf PMU
 * (PFM_RISCV_BANK_OPS).
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_ucb_boom_events.h" /* generated from events/ by scripts/gen_events.py */

pfmlib_pmu_t riscv_ucb_boom_support = {
    .desc = "SonicBOOM extended counters",
    .name = "riscv_ucb_boom",
    .pmu = PFM_PMU_RISCV_UCB_BOOM,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_ucb_boom_pe),
    .pe = riscv_ucb_boom_pe,
    .max_encoding = 1,
    .num_fixed_cntrs = LIBPFM_ARRAY_SIZE(riscv_ucb_boom_pe),
    PFM_RISCV_BANK_OPS,
};
