// SPDX-License-Identifier: MIT
/*
 * pfmlib_riscv.c : support for RISC-V PMUs
 *
 * Copyright (c) 2024-2026 the riscv-papi authors
 *
 * Identification of the core from /proc/cpuinfo (read once per
 * pfm_initialize() for all RISC-V PMUs) and the PFM_OS_NONE encoding
 * shared by the RISC-V PMU models. The model files hold the PMU
 * descriptions, their event tables and how each is recognised.
 */
#include <sys/types.h>
#include <ctype.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* private headers */
#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"

#include "events/riscv_isa_bases.h"	/* what makes a cpuinfo RISC-V */

pfm_riscv_config_t pfm_riscv_cfg;

/*
 * caps/max_precise of the core PMU, -1 when there is no such file. Read
 * only on a RISC-V machine: under LIBPFM_FORCE_PMU on another host the
 * file describes the host's PMU, not the forced one.
 */
static int
pfm_riscv_read_max_precise(void)
{
	const char *path = getenv(RISCV_MAX_PRECISE_ENV);
	FILE *fp;
	int v = -1;

	if (!pfm_riscv_cfg.is_riscv)
		return -1;
	if (!path || !*path)
		path = RISCV_MAX_PRECISE_PATH;
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%d", &v) != 1 || v < 0)
		v = 0; /* unreadable: no precision claimed */
	fclose(fp);
	DPRINT("%s: max_precise=%d\n", path, v);
	return v;
}

static void pfm_riscv_format_perf_cpuid(pfm_riscv_config_t *c);

/*
 * read the fields of the first hart the RISC-V PMUs are recognised
 * from, in one pass over the file, and the kernel's caps/max_precise.
 * Done once: every RISC-V PMU asks, the answer is kept until
 * pfm_terminate() (pfm_riscv_terminate), or until another file is named
 * by LIBPFM_PROC_CPUINFO.
 *
 * Return:
 * 	0 : the file was read (pfm_riscv_cfg.is_riscv says what it is)
 * 	-1: it could not be read (nothing is RISC-V)
 */
int
pfm_riscv_read_cpuinfo(void)
{
	pfm_riscv_config_t *c = &pfm_riscv_cfg;
	const char *path = pfmlib_cpuinfo_path();
	pfmlib_cpuinfo_attr_t attrs[] = {
		{ .attr = "isa", .buf = c->isa, .maxlen = sizeof(c->isa) },
		{ .attr = "uarch", .buf = c->uarch, .maxlen = sizeof(c->uarch) },
		{ .attr = "mvendorid", .buf = c->mvendorid, .maxlen = sizeof(c->mvendorid) },
		{ .attr = "marchid", .buf = c->marchid, .maxlen = sizeof(c->marchid) },
		{ .attr = "mimpid", .buf = c->mimpid, .maxlen = sizeof(c->mimpid) },
	};
	size_t i;
	int ret;

	if (c->read && !strcmp(c->path, path))
		return c->error ? -1 : 0;

	memset(c, 0, sizeof(*c));
	c->max_precise = -1;
	strncpy(c->path, path, sizeof(c->path) - 1);
	c->read = 1;

	ret = pfmlib_getcpuinfo_attrs(attrs, LIBPFM_ARRAY_SIZE(attrs));
	if (ret == -1) {
		DPRINT("cannot read %s\n", path);
		c->error = 1;
		return -1;
	}

	for (i = 0; i < LIBPFM_ARRAY_SIZE(riscv_isa_bases); i++) {
		const char *b = riscv_isa_bases[i];

		if (!strncasecmp(c->isa, b, strlen(b)))
			c->is_riscv = 1;
	}
	DPRINT("%s: isa=%s uarch=%s mvendorid=%s marchid=%s mimpid=%s riscv=%d\n", path,
		c->isa, c->uarch, c->mvendorid, c->marchid, c->mimpid, c->is_riscv);
	c->max_precise = pfm_riscv_read_max_precise();
	pfm_riscv_format_perf_cpuid(c);
	return 0;
}

/*
 * does the isa string name the multi-letter extension ext? Those follow
 * the base and the single-letter extensions, each after an underscore:
 * rv64imafdc_zicntr_sscofpmf_xdhpc
 */
int
pfm_riscv_isa_has_ext(const char *isa, const char *ext)
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

/*
 * a machine-id field as a number; -1 when empty or malformed
 */
static int
pfm_riscv_id_value(const char *field, unsigned long long *v)
{
	char *end = NULL;

	if (!*field)
		return -1;
	*v = strtoull(field, &end, 0);
	return *end == '\0' ? 0 : -1;
}

/*
 * v as the kernel prints it (0x%lx) at p, followed by sep; the end.
 * By hand: snprintf() cost more than the rest of the detection
 */
static char *
pfm_riscv_put_hex(char *p, unsigned long long v, char sep)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	*p++ = '0';
	*p++ = 'x';
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	*p++ = sep;
	return p;
}

/*
 * the ids as numbers, and the cpuid Linux perf's keys are matched
 * against, once per reading of cpuinfo rather than for every id and
 * key: each field as the kernel prints it; "" when one is missing or
 * malformed, which no key matches
 */
static void
pfm_riscv_format_perf_cpuid(pfm_riscv_config_t *c)
{
	char *p = c->perf_cpuid;

	c->has_vendor = !pfm_riscv_id_value(c->mvendorid, &c->vendor);
	c->has_arch = !pfm_riscv_id_value(c->marchid, &c->arch);
	c->has_imp = !pfm_riscv_id_value(c->mimpid, &c->imp);
	c->perf_cpuid[0] = '\0';
	if (!c->has_vendor || !c->has_arch || !c->has_imp)
		return;
	p = pfm_riscv_put_hex(p, c->vendor, '-');
	p = pfm_riscv_put_hex(p, c->arch, '-');
	pfm_riscv_put_hex(p, c->imp, '\0');
}

/*
 * a character class of a bracket expression ("xdigit" of
 * "[[:xdigit:]]"): its test, NULL for an unknown one
 */
static int (*pfm_riscv_ere_class(const char *name, size_t len))(int)
{
	static const struct {
		const char *name;
		int (*test)(int);
	} classes[] = {
		{ "xdigit", isxdigit }, { "digit", isdigit },
		{ "alpha", isalpha }, { "alnum", isalnum },
		{ "lower", islower }, { "upper", isupper },
		{ "space", isspace }, { "punct", ispunct },
	};
	size_t i;

	for (i = 0; i < LIBPFM_ARRAY_SIZE(classes); i++)
		if (strlen(classes[i].name) == len
		    && !strncmp(classes[i].name, name, len))
			return classes[i].test;
	return NULL;
}

/*
 * is the '-' at q the start of a range from what came just before it
 * (a class or a range)? regcomp refuses "[[:alpha:]-z]" and "[a-c-e]";
 * a '-' last ("[a-c-]") is a member
 */
static int
pfm_riscv_ere_dash_after(const char *q)
{
	return q[0] == '-' && q[1] != ']';
}

/*
 * the length of the atom of an extended regular expression at p: an
 * ordinary character, '.' or a bracket expression (up to its ']');
 * 0 for what pfm_riscv_ere_match() leaves to regcomp: groups,
 * alternation, anchors, intervals, escapes, "[." and "[=", an unknown
 * class, a bracket without its ']', and the ranges it does not decide
 * as regcomp does: a range from the leading ']' ("[]-a]", ']'..'a' to
 * glibc), a range from or to '[' ("[a-[:digit:]]"), one whose end is
 * below its start ("[z-a]", refused by regcomp: "[^z-a]" must not match
 * every CPU), a class or range followed by '-' and not by ']'
 */
static size_t
pfm_riscv_ere_atom(const char *p)
{
	const char *q = p + 1, *end;

	if (*p == '\0' || strchr("()|{}^$\\*+?", *p))
		return 0;
	if (*p != '[')
		return 1;
	q += *q == '^';
	if (*q == ']') {
		if (pfm_riscv_ere_dash_after(q + 1))
			return 0;
		q++;
	}
	while (*q != ']') {
		if (*q == '\0' || (q[0] == '[' && (q[1] == '.' || q[1] == '=')))
			return 0;
		if (q[0] == '[' && q[1] == ':') {
			end = strstr(q + 2, ":]");
			if (!end || !pfm_riscv_ere_class(q + 2, end - q - 2))
				return 0;
			q = end + 2;
			if (pfm_riscv_ere_dash_after(q))
				return 0;
			continue;
		}
		if (q[1] == '-' && q[2] != ']' && q[2] != '\0') {
			/* a range, as pfm_riscv_ere_atom_has() reads it */
			if (q[0] == '[' || q[2] == '['
			    || (unsigned char)q[2] < (unsigned char)q[0])
				return 0;
			q += 3;
			if (pfm_riscv_ere_dash_after(q))
				return 0;
			continue;
		}
		q++;
	}
	return q + 1 - p;
}

/*
 * does the atom at p (of length len) match the character c?
 */
static int
pfm_riscv_ere_atom_has(const char *p, size_t len, unsigned char c)
{
	const char *q = p + 1, *end = p + len - 1, *close;
	int negated, hit = 0;

	if (*p == '.')
		return c != '\0';
	if (*p != '[')
		return (unsigned char)*p == c;
	negated = *q == '^';
	q += negated;
	if (*q == ']') {
		hit = c == ']';
		q++;
	}
	while (q < end && !hit) {
		if (q[0] == '[' && q[1] == ':') {
			close = strstr(q + 2, ":]");
			hit = pfm_riscv_ere_class(q + 2, close - q - 2)(c) != 0;
			q = close + 2;
		} else if (q + 2 < end && q[1] == '-') {
			hit = (unsigned char)q[0] <= c && c <= (unsigned char)q[2];
			q += 3;
		} else {
			hit = (unsigned char)*q++ == c;
		}
	}
	return hit != negated;
}

static int
pfm_riscv_ere_match_here(const char *p, const char *s)
{
	size_t len, run = 0, least, most;
	const char *rest;
	char quant;

	if (*p == '\0')
		return *s == '\0';
	len = pfm_riscv_ere_atom(p);
	quant = p[len];
	if (quant != '*' && quant != '+' && quant != '?')
		return *s != '\0' && pfm_riscv_ere_atom_has(p, len, *s)
		       && pfm_riscv_ere_match_here(p + len, s + 1);
	rest = p + len + 1;
	least = quant == '+';
	most = quant == '?' ? 1 : (size_t)-1;
	while (run < most && s[run] != '\0'
	       && pfm_riscv_ere_atom_has(p, len, s[run]))
		run++;
	for (run++; run-- > least;)
		if (pfm_riscv_ere_match_here(rest, s + run))
			return 1;
	return 0;
}

/*
 * is c special in an extended regular expression (or the end of it)?
 * A switch rather than strchr() on a list: asked for every character of
 * every key at each pfm_initialize()
 */
static int
pfm_riscv_ere_special(char c)
{
	switch (c) {
	case '\0': case '.': case '[': case ']': case '(': case ')':
	case '|': case '{': case '}': case '^': case '$': case '\\':
	case '*': case '+': case '?':
		return 1;
	default:
		return 0;
	}
}

static int
pfm_riscv_ere_quantifier(char c)
{
	return c == '*' || c == '+' || c == '?' || c == '{';
}

/*
 * the literal characters a full match of the extended regular
 * expression p must begin with: the leading run of ordinary characters
 * none of which a quantifier follows, 0 when p has an alternation
 * anywhere (conservative: "a|b" may match what does not begin with a).
 * (Not static: tests check it against regexec.)
 */
size_t
pfm_riscv_ere_literal_prefix(const char *p)
{
	size_t n = 0;

	if (strchr(p, '|'))
		return 0;
	while (!pfm_riscv_ere_special(p[n]))
		n++;
	/* a quantifier after the run applies to its last character */
	if (n && pfm_riscv_ere_quantifier(p[n]))
		n--;
	return n;
}

/*
 * pfm_riscv_ere_literal_prefix(p) when the cpuid s begins with it, else
 * (size_t)-1, found without walking all of the prefix first: s has no
 * special character (hex digits, 'x' and '-'), so the run p and s have
 * in common is made of ordinary characters, and where it stops says
 * whether s has the prefix. Most keys name another vendor or core in
 * their first characters: refused there
 */
static size_t
pfm_riscv_ere_cpuid_prefix(const char *p, const char *s)
{
	size_t n = 0;

	if (strchr(p, '|'))
		return 0;
	while (p[n] != '\0' && p[n] == s[n])
		n++;
	/* the run is p's prefix, less a quantified last character */
	if (pfm_riscv_ere_special(p[n]))
		return n && pfm_riscv_ere_quantifier(p[n]) ? n - 1 : n;
	/* s differs at an ordinary p[n]: in the prefix unless quantified */
	return pfm_riscv_ere_quantifier(p[n + 1]) ? n : (size_t)-1;
}

/*
 * does all of s match the extended regular expression p? 1 or 0,
 * without compiling it, when p is made of what Linux perf's cpuid keys
 * use: ordinary characters, '.' and bracket expressions ([0-9a-f],
 * [[:xdigit:]], [^...]), each optionally followed by '*', '+' or '?'.
 * -1 for any other expression, which the caller compiles. Only whether
 * all of s is in the language counts, so POSIX's leftmost-longest rule
 * cannot change the answer. (Not static: tests compare it with regexec.)
 */
int
pfm_riscv_ere_match(const char *p, const char *s)
{
	const char *q = p;

	while (*q != '\0') {
		size_t len = pfm_riscv_ere_atom(q);
		if (!len)
			return -1;
		q += len;
		if (*q == '*' || *q == '+' || *q == '?')
			q++;
		if (*q == '{')
			return -1;
	}
	return pfm_riscv_ere_match_here(p, s);
}

/*
 * Linux perf's cpuid match (mapfile.csv): the key, a POSIX extended
 * regular expression, must match all of "mvendorid-marchid-mimpid",
 * each field printed as the kernel prints it (0x%lx). A missing or
 * malformed field never matches. Every RISC-V PMU tries its keys at
 * each pfm_initialize(), and compiling a key costs far more than
 * matching it: the keys perf uses are matched directly, only another
 * expression is compiled.
 */
static int
pfm_riscv_match_perf_id(const pfm_riscv_config_t *c, const char *key)
{
	const char *cpuid = c->perf_cpuid;
	size_t prefix;
	regmatch_t m;
	regex_t re;
	int ret;

	if (!*cpuid)
		return 0;
	/*
	 * most keys name another vendor or core in their first characters,
	 * ordinary ones: a cpuid that does not begin with them cannot match
	 */
	prefix = pfm_riscv_ere_cpuid_prefix(key, cpuid);
	if (prefix == (size_t)-1)
		return 0;

	/*
	 * the prefix has no quantifier and the key no alternation: the rest
	 * of the key must match the rest of the cpuid, whose prefix, the
	 * family's vendor and most of its marchid, is matched already
	 */
	ret = pfm_riscv_ere_match(key + prefix, cpuid + prefix);
	if (ret >= 0)
		return ret;

	if (regcomp(&re, key, REG_EXTENDED)) {
		DPRINT("bad perf cpuid pattern %s\n", key);
		return 0;
	}
	ret = !regexec(&re, cpuid, 1, &m, 0)
	      && m.rm_so == 0 && (size_t)m.rm_eo == strlen(cpuid);
	regfree(&re);
	return ret;
}

/*
 * does the cpuinfo read by pfm_riscv_read_cpuinfo() match id?
 */
int
pfm_riscv_match_id(const riscv_id_t *id)
{
	const pfm_riscv_config_t *c = &pfm_riscv_cfg;

	switch (id->type) {
	case RISCV_ID_UARCH:
		return !strncasecmp(c->uarch, id->str, strlen(id->str));
	case RISCV_ID_ARCH:
		return c->has_arch && c->arch == id->marchid
		       && (id->any_vendor || (c->has_vendor && c->vendor == id->mvendorid));
	case RISCV_ID_ISA_EXT:
		return pfm_riscv_isa_has_ext(c->isa, id->str);
	case RISCV_ID_PERF:
		return pfm_riscv_match_perf_id(c, id->str);
	}
	return 0;
}

/*
 * detection of a RISC-V PMU: the host is RISC-V and one of the
 * ids of the PMU matches its cpuinfo
 */
int
pfm_riscv_detect_ids(const riscv_id_t *ids, int nids)
{
	int i;

	if (pfm_riscv_read_cpuinfo() || !pfm_riscv_cfg.is_riscv)
		return PFM_ERR_NOTSUPP;

	for (i = 0; i < nids; i++)
		if (pfm_riscv_match_id(ids + i))
			return PFM_SUCCESS;

	return PFM_ERR_NOTSUPP;
}

/*
 * detection of the generic core PMU: the host is RISC-V and none of
 * ids (the cores with a PMU model of their own) matches its cpuinfo,
 * so that exactly one core PMU is active
 */
int
pfm_riscv_detect_other(const riscv_id_t *ids, int nids)
{
	int i;

	if (pfm_riscv_read_cpuinfo() || !pfm_riscv_cfg.is_riscv)
		return PFM_ERR_NOTSUPP;

	for (i = 0; i < nids; i++)
		if (pfm_riscv_match_id(ids + i))
			return PFM_ERR_NOTSUPP;

	return PFM_SUCCESS;
}

/*
 * does this core sample precisely (Precise Event Sampling)? On a RISC-V
 * machine only the kernel knows: PES is an option of the U74, and a
 * CVA6 whose kernel has no PES driver cannot sample precisely either;
 * Linux's RISC-V driver accepts and ignores precise_ip, so the modifier
 * is offered only where caps/max_precise says so. On another host (the
 * model forced with LIBPFM_FORCE_PMU, to encode events for a machine
 * that is not this one) the model says what the core has
 * (RISCV_PMU_FL_PES: the CVA6).
 */
int
pfm_riscv_has_pes(const pfmlib_pmu_t *pmu)
{
	if (pmu->type != PFM_PMU_TYPE_CORE)
		return 0;
	if (pfm_riscv_cfg.is_riscv)
		return pfm_riscv_cfg.max_precise > 0;
	return (pmu->flags & RISCV_PMU_FL_PES) != 0;
}

/*
 * core PMUs: privilege level filtering and sampling exist only with an
 * overflow interrupt: Sscofpmf's, or a vendor's that Linux drives the
 * same way (RISCV_PMU_FL_OVF_ANDES with xandespmu in the isa,
 * RISCV_PMU_FL_OVF_THEAD). Without one, perf gets no u/k modifiers and
 * the perf_event layer never sets exclude_* (supported_plm = 0). Runs on
 * detection and when LIBPFM_FORCE_PMU activates the PMU, so both paths
 * agree.
 */
int
pfm_riscv_core_init(void *this)
{
	pfmlib_pmu_t *pmu = this;
	int overflow_irq = 0;

	if (!pfm_riscv_read_cpuinfo()) {
		const char *isa = pfm_riscv_cfg.isa;

		overflow_irq = pfm_riscv_isa_has_ext(isa, "sscofpmf")
			   || ((pmu->flags & RISCV_PMU_FL_OVF_ANDES)
			       && pfm_riscv_isa_has_ext(isa, "xandespmu"))
			   || (pmu->flags & RISCV_PMU_FL_OVF_THEAD);
	}

	pmu->supported_plm = overflow_irq ? (PFM_PLM0 | PFM_PLM3) : 0;
	return PFM_SUCCESS;
}

/*
 * the next pfm_initialize() reads the cpuinfo again
 */
void
pfm_riscv_terminate(void *this)
{
	pfm_riscv_cfg.read = 0;
}

static const riscv_entry_t *
entry(void *this, int pidx)
{
	const riscv_entry_t *pe = this_pe(this);

	return pe + pidx;
}

static int
has_modifier(const riscv_entry_t *ent)
{
	return ent->manager != RISCV_HPC_NONE;
}

unsigned int
pfm_riscv_get_event_nattrs(void *this, int pidx)
{
	const riscv_entry_t *ent = entry(this, pidx);

	return (unsigned int)(ent->numasks + has_modifier(ent));
}

static int
hpc_code(const riscv_entry_t *ent, uint64_t hart, uint64_t slice, uint64_t *code)
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

/*
 * evt_strcat(fstr, "%s%s", sep, s) without vsnprintf(), which costs
 * several times the copy: names are appended for every event encoded
 */
static void
fstr_cat(char *fstr, const char *sep, const char *s)
{
	size_t len = strlen(fstr), max = PFMLIB_EVT_MAX_NAME_LEN - 1;

	for (; *sep && len < max; sep++)
		fstr[len++] = *sep;
	for (; *s && len < max; s++)
		fstr[len++] = *s;
	fstr[len] = '\0';
}

/* fully qualified name: event, selected unit masks in table order, then the modifier with its value */
static void
build_fstr(pfmlib_event_desc_t *e, const riscv_entry_t *ent, uint64_t umask_set, uint64_t hart, uint64_t slice)
{
	int u;

	fstr_cat(e->fstr, "", ent->name);
	for (u = 0; u < ent->numasks; u++)
		if (umask_set & (UINT64_C(1) << u))
			fstr_cat(e->fstr, ":", ent->umasks[u].uname);
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
int
pfm_riscv_get_encoding(void *this, pfmlib_event_desc_t *e)
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

int
pfm_riscv_get_event_first(void *this)
{
	pfmlib_pmu_t *p = this;

	return p->pme_count ? 0 : -1;
}

int
pfm_riscv_get_event_next(void *this, int idx)
{
	pfmlib_pmu_t *p = this;

	if (idx >= (p->pme_count - 1))
		return -1;
	return idx + 1;
}

int
pfm_riscv_event_is_valid(void *this, int pidx)
{
	pfmlib_pmu_t *p = this;

	return pidx >= 0 && pidx < p->pme_count;
}

static int
find_event(pfmlib_pmu_t *pmu, const char *name)
{
	const riscv_entry_t *pe = this_pe(pmu);
	int i;

	for (i = 0; i < pmu->pme_count; i++)
		if (pe[i].name && !strcasecmp(pe[i].name, name))
			return i;
	return -1;
}

static int
validate_umasks(pfmlib_pmu_t *pmu, const riscv_entry_t *ent, FILE *fp)
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

static int
validate_entry(pfmlib_pmu_t *pmu, int i, FILE *fp)
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

int
pfm_riscv_validate_table(void *this, FILE *fp)
{
	pfmlib_pmu_t *pmu = this;
	int i, error = 0;

	for (i = 0; i < pmu->pme_count; i++)
		error += validate_entry(pmu, i, fp);
	return error ? PFM_ERR_INVAL : PFM_SUCCESS;
}

static void
modifier_info(const riscv_entry_t *ent, pfmlib_event_attr_info_t *info)
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

int
pfm_riscv_get_event_attr_info(void *this, int pidx, int attr_idx, pfmlib_event_attr_info_t *info)
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

int
pfm_riscv_get_event_info(void *this, int idx, pfm_event_info_t *info)
{
	pfmlib_pmu_t *pmu = this;
	const riscv_entry_t *ent = entry(this, idx);

	info->name = ent->name;
	info->desc = ent->desc;
	info->code = ent->code;
	info->equiv = ent->equiv;
	info->idx = idx;
	info->pmu = pmu->pmu;
	info->is_precise = ent->kind != RISCV_EV_BANK && pfm_riscv_has_pes(pmu);
	info->support_hw_smpl = 0;
	info->nattrs = pfm_riscv_get_event_nattrs(this, idx);
	return PFM_SUCCESS;
}
