// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_lowrisc_hpc.c : lowRISC distributed HPC PMU model (riscv-papi overlay)
 *
 * Fixed-function counters in HPCManagers (per hart and per L2 slice), read in batches by the riscv_hpc PAPI
 * component through hpcc/hpcm/hpcr. A counter bank, not a perf PMU (PFM_RISCV_BANK_OPS).
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_lowrisc_hpc_events.h" /* generated from events/ by scripts/gen_events.py */

pfmlib_pmu_t riscv_lowrisc_hpc_support = {
    .desc = "lowRISC distributed HPC",
    .name = "riscv_lowrisc_hpc",
    .pmu = PFM_PMU_RISCV_LOWRISC_HPC,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe),
    .pe = riscv_lowrisc_hpc_pe,
    .max_encoding = 1,
    .num_fixed_cntrs = LIBPFM_ARRAY_SIZE(riscv_lowrisc_hpc_pe), /* one per counter kind of a manager pair */
    PFM_RISCV_BANK_OPS,
};
