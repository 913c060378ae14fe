// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv_perf_event.c : perf_event encoding of RISC-V events
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * What the Linux riscv_pmu_sbi driver accepts: programmable events as
 * PERF_TYPE_RAW with the mhpmevent value in config[47:0], mcycle and
 * minstret as PERF_TYPE_HARDWARE. Privilege level filtering
 * (exclude_user/kernel) only when the core has Sscofpmf, precise sampling
 * (precise=) only with Precise Event Sampling: the perf modifiers offered
 * follow what the core can do.
 */
#include <sys/types.h>
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>

#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "pfmlib_perf_event_priv.h"

/* The mhpmevent value as raw perf config; values that do not fit bits 47:0 cannot be expressed. */
int
pfm_riscv_perf_raw_config(uint64_t code, uint64_t *config)
{
	if (code & ~RISCV_PERF_RAW_CONFIG_MASK)
		return PFM_ERR_NOTSUPP;
	*config = code;
	return PFM_SUCCESS;
}

int
pfm_riscv_get_perf_encoding(void *this, pfmlib_event_desc_t *e)
{
	pfmlib_pmu_t *pmu = this;
	const riscv_entry_t *pe = this_pe(this), *ent = pe + e->event;
	struct perf_event_attr *attr = e->os_data;
	uint64_t config;
	int ret;

	ret = pmu->get_event_encoding[PFM_OS_NONE](this, e);
	if (ret != PFM_SUCCESS)
		return ret;

	switch (ent->kind) {
	case RISCV_EV_FIXED:
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = (uint64_t)ent->perf_hw;
		return PFM_SUCCESS;
	case RISCV_EV_RAW:
	case RISCV_EV_CLASS:
		ret = pfm_riscv_perf_raw_config(e->codes[0], &config);
		if (ret != PFM_SUCCESS) {
			DPRINT("%s: mhpmevent 0x%" PRIx64 " does not fit config[47:0]\n", e->fstr,
				e->codes[0]);
			return ret;
		}
		attr->type = PERF_TYPE_RAW;
		attr->config = config;
		return PFM_SUCCESS;
	default:
		/* bank counters are read with custom CSRs or instructions, not perf_event */
		return PFM_ERR_NOTSUPP;
	}
}

/*
 * may the core's perf driver honour this perf_event modifier? filters:
 * privilege level filtering (Sscofpmf), pes: Precise Event Sampling
 */
static int
perf_attr_supported(int filters, int pes, uint64_t idx)
{
	switch (idx) {
	case PERF_ATTR_U:
	case PERF_ATTR_K:
		return filters;
	case PERF_ATTR_PE:
	case PERF_ATTR_FR:
		return filters || pes; /* sampling needs the overflow interrupt (Sscofpmf) or PES */
	case PERF_ATTR_PR:
		return pes;
	case PERF_ATTR_EX:
	case PERF_ATTR_CPU:
	case PERF_ATTR_PIN:
		return 1;
	default: /* h, mg, mh, hw_smpl: no hypervisor/guest filtering, no hardware sampling buffer */
		return 0;
	}
}

/*
 * keep, in their order, the attributes that are not perf_event modifiers
 * and the modifiers the driver honours, in one pass: without Sscofpmf
 * most modifiers go, and removing each with pfmlib_compact_pattrs()
 * moved every attribute after it once per removal, for every event
 */
void
pfm_riscv_perf_validate_pattrs(void *this, pfmlib_event_desc_t *e)
{
	const pfmlib_pmu_t *pmu = this;
	int filters = (pmu->supported_plm & (PFM_PLM0 | PFM_PLM3)) != 0;
	int pes = pfm_riscv_has_pes(pmu);
	int i, kept = 0;

	for (i = 0; i < e->npattrs; i++) {
		if (e->pattrs[i].ctrl == PFM_ATTR_CTRL_PERF_EVENT
		    && !perf_attr_supported(filters, pes, e->pattrs[i].idx))
			continue;
		if (kept != i)
			e->pattrs[kept] = e->pattrs[i];
		kept++;
	}
	e->npattrs = kept;
}

/* counter banks are not perf PMUs: no perf_event modifier applies to them */
void
pfm_riscv_bank_validate_pattrs(void *this, pfmlib_event_desc_t *e)
{
	int i;

	(void)this;
	for (i = 0; i < e->npattrs; i++) {
		if (e->pattrs[i].ctrl == PFM_ATTR_CTRL_PERF_EVENT) {
			pfmlib_compact_pattrs(e, i);
			i--;
		}
	}
}
