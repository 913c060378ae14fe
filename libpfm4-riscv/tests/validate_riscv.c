// SPDX-License-Identifier: MIT
/*
 * validate_riscv.c - validate RISC-V event tables + encodings
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * A few hand-checked PFM_OS_NONE encodings and fully qualified names per
 * RISC-V PMU model, and what must be refused.
 */
#include <sys/types.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#define SRC_LINE	.line = __LINE__

typedef struct {
	const char *name;
	const char *fstr;
	uint64_t code;
	int ret, line;
} riscv_test_event_t;

static const riscv_test_event_t riscv_test_events[]={
	/* U74: bits of one class combine into one mhpmevent value */
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED",
	  .ret = PFM_SUCCESS,
	  .code = 0x80200,
	  .fstr = "riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED",
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::INSTRUCTION_COMMIT:FP_LOAD_RETIRED:INTEGER_LOAD_RETIRED",
	  .ret = PFM_SUCCESS,
	  .code = 0x80200,
	  .fstr = "riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED",
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::MEMORY_SYSTEM:DCACHE_WRITEBACK:DATA_TLB_MISS",
	  .ret = PFM_SUCCESS,
	  .code = 0x1402,
	  .fstr = "riscv_sifive_u74::MEMORY_SYSTEM:DCACHE_WRITEBACK:DATA_TLB_MISS",
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::BRANCH_DIRECTION_MISPREDICTION",
	  .ret = PFM_SUCCESS,
	  .code = 0x2001,
	  .fstr = "riscv_sifive_u74::BRANCH_DIRECTION_MISPREDICTION",
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::CYCLES",
	  .ret = PFM_SUCCESS,
	  .code = 0x8000000000000c00ULL,
	  .fstr = "riscv_sifive_u74::CYCLES",
	},
	/* a class alone selects nothing; classes never mix; flat events have no unit masks */
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::INSTRUCTION_COMMIT",
	  .ret = PFM_ERR_UMASK,
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:DCACHE_WRITEBACK",
	  .ret = PFM_ERR_ATTR,
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED",
	  .ret = PFM_ERR_ATTR,
	},
	{ SRC_LINE,
	  .name = "riscv_sifive_u74::NO_SUCH_EVENT",
	  .ret = PFM_ERR_NOTFOUND,
	},
	/* CVA6: event numbers, and the RISC-V-PAPI fork's names as aliases */
	{ SRC_LINE,
	  .name = "riscv_openhwgroup_cva6::L1_ICACHE_MISS",
	  .ret = PFM_SUCCESS,
	  .code = 0x1,
	  .fstr = "riscv_openhwgroup_cva6::L1_ICACHE_MISS",
	},
	/* libpfm4 resolves an alias (equiv) to its canonical event, fstr included */
	{ SRC_LINE,
	  .name = "riscv_openhwgroup_cva6::L1_ICM",
	  .ret = PFM_SUCCESS,
	  .code = 0x1,
	  .fstr = "riscv_openhwgroup_cva6::L1_ICACHE_MISS",
	},
	{ SRC_LINE,
	  .name = "riscv_openhwgroup_cva6::BRANCH_MISPREDICT",
	  .ret = PFM_SUCCESS,
	  .code = 0xa,
	  .fstr = "riscv_openhwgroup_cva6::BRANCH_MISPREDICT",
	},
	{ SRC_LINE,
	  .name = "riscv_openhwgroup_cva6::PIPELINE_STALL",
	  .ret = PFM_SUCCESS,
	  .code = 0x16,
	  .fstr = "riscv_openhwgroup_cva6::PIPELINE_STALL",
	},
	{ SRC_LINE,
	  .name = "riscv_openhwgroup_cva6::INSTRET",
	  .ret = PFM_SUCCESS,
	  .code = 0x8000000000000c02ULL,
	  .fstr = "riscv_openhwgroup_cva6::INSTRUCTIONS",
	},
	/* generic core */
	{ SRC_LINE,
	  .name = "riscv_generic::INSTRUCTIONS",
	  .ret = PFM_SUCCESS,
	  .code = 0x8000000000000c02ULL,
	  .fstr = "riscv_generic::INSTRUCTIONS",
	},
	/* distributed HPC: ManagerID << 6 | hpcm bit, ManagerID = module << 4 */
	{ SRC_LINE,
	  .name = "riscv_lowrisc_hpc::L1D_READ:hart=2",
	  .ret = PFM_SUCCESS,
	  .code = 0x802,
	  .fstr = "riscv_lowrisc_hpc::L1D_READ:hart=2",
	},
	{ SRC_LINE,
	  .name = "riscv_lowrisc_hpc::L2_READ:slice=1",
	  .ret = PFM_SUCCESS,
	  .code = 0x40400,
	  .fstr = "riscv_lowrisc_hpc::L2_READ:slice=1",
	},
	{ SRC_LINE,
	  .name = "riscv_lowrisc_hpc::L2_WRITEBACK",
	  .ret = PFM_SUCCESS,
	  .code = 0x40003,
	  .fstr = "riscv_lowrisc_hpc::L2_WRITEBACK:slice=0",
	},
	{ SRC_LINE,
	  .name = "riscv_lowrisc_hpc::L1D_READ:slice=1",
	  .ret = PFM_ERR_ATTR,
	},
	{ SRC_LINE,
	  .name = "riscv_lowrisc_hpc::L1D_READ:hart=256",
	  .ret = PFM_ERR_ATTR_VAL,
	},
	/* BOOM bank: counter index */
	{ SRC_LINE,
	  .name = "riscv_ucb_boom::rollback_cycles",
	  .ret = PFM_SUCCESS,
	  .code = 62,
	  .fstr = "riscv_ucb_boom::rollback_cycles",
	},
};
#define NUM_TEST_EVENTS (int)(sizeof(riscv_test_events) / sizeof(riscv_test_events[0]))

static int
check_one(FILE *fp, int i, const riscv_test_event_t *e)
{
	uint64_t *codes = NULL;
	char *fstr = NULL;
	int count = 0, errors = 0;
	int ret = pfm_get_event_encoding(e->name, PFM_PLM0 | PFM_PLM3, &fstr, NULL, &codes, &count);

	if (ret != e->ret) {
		fprintf(fp, "Event%d (line %d) %s, ret=%s(%d) expected %s(%d)\n", i, e->line, e->name,
			pfm_strerror(ret), ret, pfm_strerror(e->ret), e->ret);
		errors++;
	} else if (ret == PFM_SUCCESS) {
		if (count != 1 || codes[0] != e->code) {
			fprintf(fp,
				"Event%d (line %d) %s, count=%d code=%#" PRIx64 " expected 1, %#" PRIx64 "\n",
				i, e->line, e->name, count, count ? codes[0] : 0, e->code);
			errors++;
		}
		if (e->fstr && (!fstr || strcmp(fstr, e->fstr))) {
			fprintf(fp, "Event%d (line %d) %s, fstr=%s expected %s\n", i, e->line, e->name,
				fstr ? fstr : "(null)", e->fstr);
			errors++;
		}
	}
	free(codes);
	free(fstr);
	return errors;
}

int
validate_arch(FILE *fp)
{
	int i, errors = 0;

	for (i = 0; i < NUM_TEST_EVENTS; i++)
		errors += check_one(fp, i, riscv_test_events + i);
	printf("\t %d RISC-V events: %d errors\n", i, errors);
	return errors;
}
