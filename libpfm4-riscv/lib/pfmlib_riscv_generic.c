// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_generic.c : RISC-V generic core (cycles, instructions) PMU model (riscv-papi overlay)
 *
 * mcycle and minstret, which every RISC-V core has. Steps aside when a specific core model matches
 * (pfm_riscv_detect): PAPI needs exactly one core PMU. Also the core PMU of the HPC (Rocket) and BOOM
 * machines.
 */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "events/riscv_counters.h"       /* generated from events/models.csv */
#include "events/riscv_generic_events.h" /* generated from events/ by scripts/gen_events.py */

pfmlib_pmu_t riscv_generic_support = {
    .desc = "RISC-V generic core (cycles, instructions)",
    .name = "riscv_generic",
    .pmu = PFM_PMU_RISCV_GENERIC,
    .pme_count = LIBPFM_ARRAY_SIZE(riscv_generic_pe),
    .type = PFM_PMU_TYPE_CORE,
    .pe = riscv_generic_pe,
    .flags = PFMLIB_PMU_FL_ARCH_DFL,
    .max_encoding = 1,
    .num_cntrs = RISCV_GENERIC_NUM_CNTRS,
    .num_fixed_cntrs = 2,
    PFM_RISCV_CORE_OPS,
};
