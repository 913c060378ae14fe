// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv.c : RISC-V architecture layer for libpfm4 (riscv-papi overlay)
 *
 * Detection from /proc/cpuinfo and the PFM_OS_NONE encoding shared by every RISC-V PMU model.
 * Event tables are generated from the CSV tables in events/; the model files only describe each PMU.
 */
#include <sys/types.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"

/* ------------------------------------------------------------------------------------------ cpuinfo reader
 */

static char *trim(char *s)
{
	char *end;

	while (*s && isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static void copy_value(char *buf, size_t maxlen, const char *value)
{
	if (!maxlen)
		return;
	strncpy(buf, value, maxlen - 1);
	buf[maxlen - 1] = '\0';
}

/*
 * Split "key<blanks>: value" in place. Returns 0 when the line has that shape.
 * Unlike the copies in the ARM/MIPS layers, a line without ':' is skipped, not the end of the file, and a key
 * is matched exactly, never by prefix ("isa" must not match "hart isa").
 */
static int split_line(char *line, char **key, char **value)
{
	char *colon = strchr(line, ':');

	if (!colon)
		return -1;
	*colon = '\0';
	*key = trim(line);
	*value = trim(colon + 1);
	return 0;
}

const char *pfm_riscv_cpuinfo_path(void)
{
	const char *path = getenv(RISCV_CPUINFO_ENV);

	return (path && *path) ? path : "/proc/cpuinfo";
}

/*
 * Value of the first line whose key is exactly `key` (the first hart's, since every hart repeats its block).
 * Returns 0 and fills buf when found, -1 when the file cannot be read or has no such line: a missing key
 * never yields some other line's value (upstream's ARM reader returns the last line's value in that case).
 */
int pfm_riscv_cpuinfo_get(const char *path, const char *key, char *buf, size_t maxlen)
{
	FILE *fp;
	char *line = NULL, *k, *v;
	size_t len = 0;
	int ret = -1;

	if (!path || !key || !buf || maxlen < 1)
		return -1;
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (pfmlib_getl(&line, &len, fp) != -1) {
		if (split_line(line, &k, &v) == 0 && !strcmp(k, key)) {
			copy_value(buf, maxlen, v);
			ret = 0;
			break;
		}
	}
	free(line);
	fclose(fp);
	return ret;
}

/* One pass over the file for every field detection needs (the first occurrence of each). */
int pfm_riscv_read_cpuinfo(const char *path, struct pfm_riscv_cpuinfo *info)
{
	struct {
		const char *key;
		char *dst;
		size_t size;
		int seen;
	} want[] = {
	    {"isa", info->isa, sizeof(info->isa), 0},
	    {"uarch", info->uarch, sizeof(info->uarch), 0},
	    {"mvendorid", info->mvendorid, sizeof(info->mvendorid), 0},
	    {"marchid", info->marchid, sizeof(info->marchid), 0},
	    {"mimpid", info->mimpid, sizeof(info->mimpid), 0},
	};
	FILE *fp;
	char *line = NULL, *k, *v;
	size_t len = 0, i;

	memset(info, 0, sizeof(*info));
	fp = path ? fopen(path, "r") : NULL;
	if (!fp)
		return -1;
	while (pfmlib_getl(&line, &len, fp) != -1) {
		if (split_line(line, &k, &v))
			continue;
		for (i = 0; i < LIBPFM_ARRAY_SIZE(want); i++) {
			if (!want[i].seen && !strcmp(k, want[i].key)) {
				copy_value(want[i].dst, want[i].size, v);
				want[i].seen = 1;
			}
		}
	}
	free(line);
	fclose(fp);
	return 0;
}

/*
 * Does the isa string name the multi-letter extension `ext`? Multi-letter extensions follow the base and its
 * single-letter extensions, each after an underscore: rv64imafdc_zicntr_sscofpmf_xdhpc.
 */
int pfm_riscv_isa_has_ext(const char *isa, const char *ext)
{
	size_t n = strlen(ext);
	const char *p = strchr(isa, '_');

	while (p && n) {
		const char *tok = p + 1, *end = strchr(tok, '_');
		size_t tlen = end ? (size_t)(end - tok) : strlen(tok);

		while (tlen && isspace((unsigned char)tok[tlen - 1]))
			tlen--;
		if (tlen == n && !strncasecmp(tok, ext, n))
			return 1;
		p = end;
	}
	return 0;
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

/* A machine-id field as a number; empty or malformed fields never match an id. */
static int id_equals(const char *field, uint64_t id)
{
	char *end = NULL;
	unsigned long long v;

	if (!*field)
		return 0;
	v = strtoull(field, &end, 0);
	return *end == '\0' && v == id;
}

/*
 * The rules (the machines are listed in events/models.csv; tests check both agree):
 *  U74  : uarch sifive,u74*            or mvendorid 0x489 (SiFive) + marchid 0x8000000000000007
 *  CVA6 : uarch openhwgroup,cva6* / eth,ariane*  or mvendorid 0x602 (OpenHW) + marchid 0x3
 *  BOOM : uarch ucb-bar,boom*          or marchid 0x2 (open-source architecture id of BOOM)
 *  HPC  : isa has the extension xdhpc (an SoC feature, not a core)
 * Nothing matches unless the isa line says RISC-V, so other architectures' cpuinfo never does.
 */
void pfm_riscv_classify(const struct pfm_riscv_cpuinfo *info, struct pfm_riscv_machine *m)
{
	memset(m, 0, sizeof(*m));
	m->is_riscv = starts_with(info->isa, "rv32") || starts_with(info->isa, "rv64") ||
	              starts_with(info->isa, "rv128");
	if (!m->is_riscv)
		return;
	m->core_u74 = starts_with(info->uarch, "sifive,u74") ||
	              (id_equals(info->mvendorid, 0x489) && id_equals(info->marchid, 0x8000000000000007ULL));
	m->core_cva6 = !m->core_u74 && (starts_with(info->uarch, "openhwgroup,cva6") ||
	                                starts_with(info->uarch, "eth,ariane") ||
	                                (id_equals(info->mvendorid, 0x602) && id_equals(info->marchid, 0x3)));
	m->bank_boom = starts_with(info->uarch, "ucb-bar,boom") || id_equals(info->marchid, 0x2);
	m->bank_hpc = pfm_riscv_isa_has_ext(info->isa, "xdhpc");
	m->has_sscofpmf = pfm_riscv_isa_has_ext(info->isa, "sscofpmf");
}

int pfm_riscv_host_machine(struct pfm_riscv_machine *m)
{
	struct pfm_riscv_cpuinfo info;
	int ret = pfm_riscv_read_cpuinfo(pfm_riscv_cpuinfo_path(), &info);

	pfm_riscv_classify(&info, m);
	return ret;
}

/* ------------------------------------------------------------------------------------------ callbacks */

/* Detection of every RISC-V model: which PMU ids the host's cpuinfo calls for. */
int pfm_riscv_detect(void *this)
{
	const pfmlib_pmu_t *pmu = this;
	struct pfm_riscv_machine m;
	int present;

	pfm_riscv_host_machine(&m);
	switch (pmu->pmu) {
	case PFM_PMU_RISCV_SIFIVE_U74:
		present = m.core_u74;
		break;
	case PFM_PMU_RISCV_OPENHWGROUP_CVA6:
		present = m.core_cva6;
		break;
	case PFM_PMU_RISCV_GENERIC: /* steps aside for a specific core model: PAPI needs exactly one core PMU
	                             */
		present = m.is_riscv && !m.core_u74 && !m.core_cva6;
		break;
	case PFM_PMU_RISCV_LOWRISC_HPC:
		present = m.bank_hpc;
		break;
	case PFM_PMU_RISCV_UCB_BOOM:
		present = m.bank_boom;
		break;
	default:
		present = 0;
	}
	return present ? PFM_SUCCESS : PFM_ERR_NOTSUPP;
}

/*
 * Core PMUs: privilege filtering exists only with Sscofpmf. Without it perf gets no u/k modifiers and the
 * perf_event layer never sets exclude_* (supported_plm = 0 makes it clear them all). Run on detection and
 * when LIBPFM_FORCE_PMU activates the PMU, so both paths agree.
 */
int pfm_riscv_core_init(void *this)
{
	pfmlib_pmu_t *pmu = this;
	struct pfm_riscv_machine m;

	pfm_riscv_host_machine(&m);
	pmu->supported_plm = m.has_sscofpmf ? (PFM_PLM0 | PFM_PLM3) : 0;
	return PFM_SUCCESS;
}

/* upstream pfm_terminate() leaves PMUs flagged active; clear ours so a new pfm_initialize() detects again */
void pfm_riscv_terminate(void *this)
{
	pfmlib_pmu_t *pmu = this;

	pmu->flags &= ~PFMLIB_PMU_FL_ACTIVE;
}

static const riscv_entry_t *entry(void *this, int pidx)
{
	const riscv_entry_t *pe = this_pe(this);

	return pe + pidx;
}

static int has_modifier(const riscv_entry_t *ent)
{
	return ent->manager != RISCV_HPC_NONE;
}

unsigned int pfm_riscv_get_event_nattrs(void *this, int pidx)
{
	const riscv_entry_t *ent = entry(this, pidx);

	return (unsigned int)(ent->numasks + has_modifier(ent));
}

static int hpc_code(const riscv_entry_t *ent, uint64_t hart, uint64_t slice, uint64_t *code)
{
	if (ent->manager == RISCV_HPC_CORE) {
		if (hart >= RISCV_HPC_MAX_HART)
			return PFM_ERR_ATTR_VAL;
		*code = RISCV_HPC_CODE(RISCV_HPC_MANAGER_ID(hart), ent->code);
	} else {
		if (slice >= RISCV_HPC_MAX_SLICE)
			return PFM_ERR_ATTR_VAL;
		*code = RISCV_HPC_CODE(RISCV_HPC_MANAGER_ID(RISCV_HPC_L2_MODULE_BASE + slice), ent->code);
	}
	return PFM_SUCCESS;
}

/* fully qualified name: event, selected unit masks in table order, then the modifier with its value */
static void build_fstr(pfmlib_event_desc_t *e, const riscv_entry_t *ent, uint64_t umask_set, uint64_t hart,
                       uint64_t slice)
{
	int u;

	evt_strcat(e->fstr, "%s", ent->name);
	for (u = 0; u < ent->numasks; u++)
		if (umask_set & (UINT64_C(1) << u))
			evt_strcat(e->fstr, ":%s", ent->umasks[u].uname);
	if (ent->manager == RISCV_HPC_CORE)
		evt_strcat(e->fstr, ":hart=%" PRIu64, hart);
	else if (ent->manager == RISCV_HPC_L2_SLICE)
		evt_strcat(e->fstr, ":slice=%" PRIu64, slice);
}

/*
 * PFM_OS_NONE encoding: the mhpmevent value for programmable counters (a class OR-ed with the chosen unit
 * masks), the counter index for the BOOM bank, ManagerID << 6 | hpcm bit for the distributed HPC, and
 * RISCV_FIXED_CODE(csr) for mcycle / minstret.
 */
int pfm_riscv_get_encoding(void *this, pfmlib_event_desc_t *e)
{
	const riscv_entry_t *ent = entry(this, e->event);
	uint64_t code = ent->code, umask_set = 0, hart = 0, slice = 0;
	int i;

	for (i = 0; i < e->nattrs; i++) {
		const pfmlib_event_attr_info_t *a = attr(e, i);

		if (a->ctrl != PFM_ATTR_CTRL_PMU)
			continue;
		if (a->type == PFM_ATTR_UMASK) {
			if (a->idx >= (uint64_t)ent->numasks)
				return PFM_ERR_UMASK;
			code |= ent->umasks[a->idx].ucode;
			umask_set |= UINT64_C(1) << a->idx;
			continue;
		}
		switch (a->idx) {
		case RISCV_ATTR_HART:
			hart = e->attrs[i].ival;
			break;
		case RISCV_ATTR_SLICE:
			slice = e->attrs[i].ival;
			break;
		default:
			return PFM_ERR_ATTR;
		}
	}
	/* a class alone selects nothing: the counter would never count, so ask for a unit mask */
	if (ent->kind == RISCV_EV_CLASS && !umask_set)
		return PFM_ERR_UMASK;
	if (has_modifier(ent)) {
		int ret = hpc_code(ent, hart, slice, &code);

		if (ret != PFM_SUCCESS)
			return ret;
	}
	e->codes[0] = code;
	e->count = 1;
	build_fstr(e, ent, umask_set, hart, slice);
	__pfm_vbprintf("[0x%" PRIx64 "] %s\n", code, e->fstr);
	return PFM_SUCCESS;
}

int pfm_riscv_get_event_first(void *this)
{
	pfmlib_pmu_t *p = this;

	return p->pme_count ? 0 : -1;
}

int pfm_riscv_get_event_next(void *this, int idx)
{
	pfmlib_pmu_t *p = this;

	if (idx >= (p->pme_count - 1))
		return -1;
	return idx + 1;
}

int pfm_riscv_event_is_valid(void *this, int pidx)
{
	pfmlib_pmu_t *p = this;

	return pidx >= 0 && pidx < p->pme_count;
}

static int find_event(pfmlib_pmu_t *pmu, const char *name)
{
	const riscv_entry_t *pe = this_pe(pmu);
	int i;

	for (i = 0; i < pmu->pme_count; i++)
		if (pe[i].name && !strcasecmp(pe[i].name, name))
			return i;
	return -1;
}

static int validate_umasks(pfmlib_pmu_t *pmu, const riscv_entry_t *ent, FILE *fp)
{
	int u, v, error = 0;

	if (ent->kind == RISCV_EV_CLASS && (ent->numasks < 1 || ent->numasks > 64 || !ent->umasks)) {
		fprintf(fp, "pmu: %s event %s: class needs 1..64 unit masks\n", pmu->name, ent->name);
		return 1;
	}
	for (u = 0; u < ent->numasks; u++) {
		const riscv_umask_t *um = ent->umasks + u;

		if (!um->uname || !um->udesc) {
			fprintf(fp, "pmu: %s event %s: unit mask %d has no name or description\n", pmu->name,
			        ent->name, u);
			error++;
			continue;
		}
		if (!um->ucode || (um->ucode & ent->code)) {
			fprintf(fp,
			        "pmu: %s event %s: unit mask %s code 0x%" PRIx64
			        " is 0 or overlaps the class\n",
			        pmu->name, ent->name, um->uname, um->ucode);
			error++;
		}
		for (v = u + 1; v < ent->numasks; v++) {
			if (ent->umasks[v].uname && !strcasecmp(um->uname, ent->umasks[v].uname)) {
				fprintf(fp, "pmu: %s event %s: unit mask %s twice\n", pmu->name, ent->name,
				        um->uname);
				error++;
			}
		}
	}
	return error;
}

static int validate_entry(pfmlib_pmu_t *pmu, int i, FILE *fp)
{
	const riscv_entry_t *pe = this_pe(pmu), *ent = pe + i;
	int j, error = 0;

	if (!ent->name || !ent->desc) {
		fprintf(fp, "pmu: %s event%d: no name or description\n", pmu->name, i);
		return 1;
	}
	error += validate_umasks(pmu, ent, fp);
	if (ent->equiv) {
		int k = find_event(pmu, ent->equiv);

		if (k < 0 || pe[k].code != ent->code) {
			fprintf(fp, "pmu: %s event %s: equiv %s missing or encoded differently\n", pmu->name,
			        ent->name, ent->equiv);
			error++;
		}
	}
	for (j = i + 1; j < pmu->pme_count; j++) {
		if (!pe[j].name)
			continue;
		if (!strcasecmp(ent->name, pe[j].name)) {
			fprintf(fp, "pmu: %s event %s defined twice\n", pmu->name, ent->name);
			error++;
		}
		/* HPC bits repeat across manager kinds; only the same manager kind must not repeat a code */
		if (ent->code == pe[j].code && ent->kind == pe[j].kind && ent->manager == pe[j].manager &&
		    !(ent->equiv || pe[j].equiv)) {
			fprintf(fp, "pmu: %s events %s and %s have the same code 0x%" PRIx64 "\n", pmu->name,
			        ent->name, pe[j].name, ent->code);
			error++;
		}
	}
	return error;
}

int pfm_riscv_validate_table(void *this, FILE *fp)
{
	pfmlib_pmu_t *pmu = this;
	int i, error = 0;

	for (i = 0; i < pmu->pme_count; i++)
		error += validate_entry(pmu, i, fp);
	return error ? PFM_ERR_INVAL : PFM_SUCCESS;
}

static void modifier_info(const riscv_entry_t *ent, pfmlib_event_attr_info_t *info)
{
	int core = ent->manager == RISCV_HPC_CORE;

	info->name = core ? "hart" : "slice";
	info->desc = core ? "hart whose core HPCManager holds the counter (default 0)"
	                  : "L2 slice whose HPCManager holds the counter (default 0)";
	info->type = PFM_ATTR_MOD_INTEGER;
	info->idx = core ? RISCV_ATTR_HART : RISCV_ATTR_SLICE;
	info->code = info->idx;
	info->dfl_val64 = 0;
}

int pfm_riscv_get_event_attr_info(void *this, int pidx, int attr_idx, pfmlib_event_attr_info_t *info)
{
	const riscv_entry_t *ent = entry(this, pidx);

	memset(info, 0, sizeof(*info));
	info->ctrl = PFM_ATTR_CTRL_PMU;
	if (attr_idx < 0 || attr_idx >= (int)pfm_riscv_get_event_nattrs(this, pidx))
		return PFM_ERR_INVAL;
	if (attr_idx < ent->numasks) {
		info->name = ent->umasks[attr_idx].uname;
		info->desc = ent->umasks[attr_idx].udesc;
		info->code = ent->umasks[attr_idx].ucode;
		info->type = PFM_ATTR_UMASK;
		info->idx = (uint64_t)attr_idx;
		return PFM_SUCCESS;
	}
	modifier_info(ent, info);
	return PFM_SUCCESS;
}

int pfm_riscv_get_event_info(void *this, int idx, pfm_event_info_t *info)
{
	pfmlib_pmu_t *pmu = this;
	const riscv_entry_t *ent = entry(this, idx);

	info->name = ent->name;
	info->desc = ent->desc;
	info->code = ent->code;
	info->equiv = ent->equiv;
	info->idx = idx;
	info->pmu = pmu->pmu;
	info->is_precise = 0;
	info->support_hw_smpl = 0;
	info->nattrs = pfm_riscv_get_event_nattrs(this, idx);
	return PFM_SUCCESS;
}
