// SPDX-License-Identifier: MIT
/* RISC-V identification from /proc/cpuinfo (see riscv_cpuinfo.h). Which cpuinfo is RISC-V and which core it
 * describes follow the rules of riscv_cpuinfo_ids.h, generated from the same table (events/cpu_ids.csv) as
 * libpfm4's RISC-V detection, so PAPI and libpfm4 always agree. */
#include "riscv_cpuinfo.h"
#include "riscv_cpuinfo_ids.h"

#include <ctype.h>
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct name_by_id {
	uint64_t id;
	const char *name;
};

struct name_by_key {
	const char *key;
	const char *name;
};

/* JEDEC ids as the kernel prints them in mvendorid ((bank - 1) << 7 | id). */
static const struct name_by_id vendors_by_mvendorid[] = {
    {0x489, "SiFive"},       {0x5b7, "T-HEAD"},   {0x31e, "Andes"},
    {0x602, "OpenHW Group"}, {0x67e, "StarFive"}, {0x710, "SpacemiT"},
};

/* Vendor part of the device-tree compatible (before the comma), for cores with mvendorid 0. */
static const struct name_by_key vendors_by_uarch_prefix[] = {
    {"sifive", "SiFive"},   {"openhwgroup", "OpenHW Group"}, {"ucb-bar", "UC Berkeley"}, {"thead", "T-HEAD"},
    {"lowrisc", "lowRISC"}, {"andestech", "Andes"},          {"starfive", "StarFive"},
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A copy of src cut to len - 1 characters and NUL-terminated, as snprintf(dst, len, "%s", src) makes it. */
static void copy_str(char *dst, size_t len, const char *src)
{
	if (len == 0)
		return;
	size_t n = strlen(src);
	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The same from the n characters at src (no NUL among them). */
static void copy_mem(char *dst, size_t len, const char *src, size_t n)
{
	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A machine-id field as a number; an empty or malformed field is no number (and never matches an id). */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, 0);
	if (end == s || *end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

static int looks_like_riscv_isa(const char *isa)
{
	for (size_t i = 0; i < ARRAY_LEN(riscv_isa_bases); i++)
		if (starts_with(isa, riscv_isa_bases[i]))
			return 1;
	return 0;
}

#define CPUINFO_LINE_MAX 1023 /* what fgets() into a 1024-byte buffer returns at most: one line's */

enum cpuinfo_key {
	KEY_OTHER,
	KEY_PROCESSOR,
	KEY_ISA,
	KEY_UARCH,
	KEY_MMU,
	KEY_MVENDORID,
	KEY_MARCHID,
	KEY_MIMPID
};

/* The key of a line, told by its length and first letter before one memcmp (most of a cpuinfo's lines are
 * keys nobody asks for: "hart", "hart isa", blank lines). */
static enum cpuinfo_key key_of(const char *k, size_t n)
{
	switch (n) {
	case 3:
		return memcmp(k, "isa", 3) == 0 ? KEY_ISA : memcmp(k, "mmu", 3) == 0 ? KEY_MMU : KEY_OTHER;
	case 5:
		return memcmp(k, "uarch", 5) == 0 ? KEY_UARCH : KEY_OTHER;
	case 6:
		return memcmp(k, "mimpid", 6) == 0 ? KEY_MIMPID : KEY_OTHER;
	case 7:
		return memcmp(k, "marchid", 7) == 0 ? KEY_MARCHID : KEY_OTHER;
	case 9:
		return k[0] == 'p'   ? (memcmp(k, "processor", 9) == 0 ? KEY_PROCESSOR : KEY_OTHER)
		       : k[0] == 'm' ? (memcmp(k, "mvendorid", 9) == 0 ? KEY_MVENDORID : KEY_OTHER)
		                     : KEY_OTHER;
	default:
		return KEY_OTHER;
	}
}

/* One line as fgets() with a 1024-byte buffer would return it: up to its '\n' or 1023 characters, read as
 * a string (to its first NUL, if any). "key : value" with both trimmed of white space; a line without a
 * colon is skipped. Only the first hart's fields are kept: PAPI describes the machine by one core. */
static void take_line(struct riscv_cpuinfo *out, const char *line, size_t len)
{
	const char *end = memchr(line, '\0', len), *colon;
	if (end == NULL)
		end = line + len;
	colon = memchr(line, ':', (size_t)(end - line));
	if (colon == NULL)
		return;
	const char *k = line, *ke = colon;
	while (k < ke && isspace((unsigned char)*k))
		k++;
	while (ke > k && isspace((unsigned char)ke[-1]))
		ke--;
	enum cpuinfo_key key = key_of(k, (size_t)(ke - k));
	switch (key) {
	case KEY_OTHER:
		return;
	case KEY_PROCESSOR:
		out->harts++;
		return;
	case KEY_ISA:
		if (out->isa[0] != '\0')
			return;
		break;
	case KEY_UARCH:
		if (out->uarch[0] != '\0')
			return;
		break;
	case KEY_MMU:
		if (out->mmu[0] != '\0')
			return;
		break;
	case KEY_MVENDORID:
		if (out->has_mvendorid)
			return;
		break;
	case KEY_MARCHID:
		if (out->has_marchid)
			return;
		break;
	case KEY_MIMPID:
		if (out->has_mimpid)
			return;
		break;
	}
	const char *v = colon + 1, *ve = end;
	while (v < ve && isspace((unsigned char)*v))
		v++;
	while (ve > v && isspace((unsigned char)ve[-1]))
		ve--;
	size_t n = (size_t)(ve - v);
	char num[CPUINFO_LINE_MAX + 1];
	switch (key) {
	case KEY_ISA:
		copy_mem(out->isa, sizeof(out->isa), v, n);
		break;
	case KEY_UARCH:
		copy_mem(out->uarch, sizeof(out->uarch), v, n);
		break;
	case KEY_MMU:
		copy_mem(out->mmu, sizeof(out->mmu), v, n);
		break;
	case KEY_MVENDORID:
		copy_mem(num, sizeof(num), v, n);
		out->has_mvendorid = parse_u64(num, &out->mvendorid) == 0;
		break;
	case KEY_MARCHID:
		copy_mem(num, sizeof(num), v, n);
		out->has_marchid = parse_u64(num, &out->marchid) == 0;
		break;
	case KEY_MIMPID:
		copy_mem(num, sizeof(num), v, n);
		out->has_mimpid = parse_u64(num, &out->mimpid) == 0;
		break;
	default:
		break;
	}
}

/* The stream is read in blocks and cut into lines here, not with fgets(), trim() and strcmp() per line:
 * this runs at every PAPI_library_init. */
int riscv_cpuinfo_parse(FILE *f, struct riscv_cpuinfo *out)
{
	char buf[4096];
	size_t have = 0;
	int eof = 0;

	memset(out, 0, sizeof(*out));
	if (f == NULL)
		return -1;
	rewind(f);
	while (!eof || have > 0) {
		if (!eof && have < sizeof(buf)) {
			size_t n = fread(buf + have, 1, sizeof(buf) - have, f);
			have += n;
			eof = n == 0;
		}
		size_t pos = 0;
		for (;;) {
			size_t left = have - pos, span = left < CPUINFO_LINE_MAX ? left : CPUINFO_LINE_MAX;
			const char *nl = memchr(buf + pos, '\n', span);
			size_t len;
			if (nl != NULL)
				len = (size_t)(nl - (buf + pos)) + 1;
			else if (left >= CPUINFO_LINE_MAX || (eof && left > 0))
				len = span;
			else
				break; /* an unfinished line: read on */
			take_line(out, buf + pos, len);
			pos += len;
		}
		memmove(buf, buf + pos, have - pos);
		have -= pos;
	}
	rewind(f);
	if (!looks_like_riscv_isa(out->isa)) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

int riscv_isa_has_extension(const char *isa, const char *ext)
{
	size_t ext_len = strlen(ext);
	const char *p;

	if (isa == NULL || ext_len == 0)
		return 0;
	/* Multi-letter extensions follow the single-letter ones, each introduced by '_'. */
	for (p = strchr(isa, '_'); p != NULL; p = strchr(p + 1, '_')) {
		const char *name = p + 1;
		size_t n = strcspn(name, "_ \t\n");
		if (n == ext_len && strncasecmp(name, ext, n) == 0)
			return 1;
	}
	return 0;
}

static const char *vendor_from_uarch(const char *uarch)
{
	size_t prefix = strcspn(uarch, ",");
	for (size_t i = 0; i < ARRAY_LEN(vendors_by_uarch_prefix); i++) {
		const char *k = vendors_by_uarch_prefix[i].key;
		if (strlen(k) == prefix && strncmp(uarch, k, prefix) == 0)
			return vendors_by_uarch_prefix[i].name;
	}
	return NULL;
}

void riscv_cpuinfo_vendor_name(const struct riscv_cpuinfo *ci, char *buf, size_t len)
{
	const char *name = NULL;

	if (ci->has_mvendorid) {
		for (size_t i = 0; i < ARRAY_LEN(vendors_by_mvendorid); i++)
			if (vendors_by_mvendorid[i].id == ci->mvendorid)
				name = vendors_by_mvendorid[i].name;
	}
	if (name == NULL && ci->uarch[0] != '\0')
		name = vendor_from_uarch(ci->uarch);
	if (name != NULL)
		copy_str(buf, len, name);
	else if (ci->has_mvendorid)
		snprintf(buf, len, "RISC-V (mvendorid %#" PRIx64 ")", ci->mvendorid);
	else
		copy_str(buf, len, "RISC-V");
}

/* A bracket expression of a pattern: its members, and whether they are negated ("[^...]"). */
struct ere_bracket {
	const char *members; /* the text between '[' (or "[^") and ']' */
	size_t len;
	int negated;
};

/* The test of a character class ("xdigit" of "[[:xdigit:]]"), NULL for an unknown one. */
static int (*ere_class(const char *name, size_t len))(int)
{
	static const struct {
		const char *name;
		int (*test)(int);
	} classes[] = {{"xdigit", isxdigit}, {"digit", isdigit}, {"alpha", isalpha}, {"alnum", isalnum},
	               {"lower", islower},   {"upper", isupper}, {"space", isspace}, {"punct", ispunct}};
	for (size_t i = 0; i < ARRAY_LEN(classes); i++)
		if (strlen(classes[i].name) == len && strncmp(classes[i].name, name, len) == 0)
			return classes[i].test;
	return NULL;
}

/* Is there a '-' at q that starts a range of what came just before it (a class or a range)? regcomp refuses
 * "[[:alpha:]-z]" and "[a-c-e]"; a '-' last ("[a-c-]") is a member. */
static int ere_dash_after(const char *q)
{
	return q[0] == '-' && q[1] != ']';
}

/* The bracket expression at p (just after its '['): its length up to and including the closing ']'; 0 when
 * it uses what riscv_ere_full_match() leaves to regcomp: "[." or "[=", an unknown class, no closing ']', and
 * the ranges it does not decide as regcomp does -- a range from the leading ']' ("[]-a]", which glibc reads
 * as ']'..'a'), a range from or to '[' ("[a-[:digit:]]"), one whose end is below its start ("[z-a]", which
 * regcomp refuses: "[^z-a]" must not match everything), a range or class followed by '-' and not by ']'. */
static size_t ere_bracket_parse(const char *p, struct ere_bracket *b)
{
	const char *q = p;
	b->negated = *q == '^';
	q += b->negated;
	b->members = q;
	if (*q == ']') { /* a ']' first is a member, and does not start a range here */
		if (ere_dash_after(q + 1))
			return 0;
		q++;
	}
	while (*q != ']') {
		if (*q == '\0')
			return 0;
		if (q[0] == '[' && (q[1] == '.' || q[1] == '='))
			return 0;
		if (q[0] == '[' && q[1] == ':') {
			const char *end = strstr(q + 2, ":]");
			if (end == NULL || ere_class(q + 2, (size_t)(end - q - 2)) == NULL)
				return 0;
			q = end + 2;
			if (ere_dash_after(q))
				return 0;
			continue;
		}
		if (q[1] == '-' && q[2] != ']' && q[2] != '\0') { /* a range, as ere_bracket_has() reads it */
			if (q[0] == '[' || q[2] == '[' || (unsigned char)q[2] < (unsigned char)q[0])
				return 0;
			q += 3;
			if (ere_dash_after(q))
				return 0;
			continue;
		}
		q++;
	}
	b->len = (size_t)(q - b->members);
	return (size_t)(q + 1 - p);
}

static int ere_bracket_has(const struct ere_bracket *b, unsigned char c)
{
	const char *q = b->members, *end = b->members + b->len;
	int hit = 0;
	if (q < end && *q == ']') {
		hit |= c == ']';
		q++;
	}
	while (q < end && !hit) {
		if (q[0] == '[' && q[1] == ':') {
			const char *close = strstr(q + 2, ":]");
			hit = ere_class(q + 2, (size_t)(close - q - 2))(c) != 0;
			q = close + 2;
		} else if (q + 2 < end && q[1] == '-') {
			hit = (unsigned char)q[0] <= c && c <= (unsigned char)q[2];
			q += 3;
		} else {
			hit = (unsigned char)*q == c;
			q++;
		}
	}
	return hit != b->negated;
}

/* The length of the atom of the pattern at p (a bracket expression's members in *b); 0 for one that
 * riscv_ere_full_match() leaves to regcomp. */
static size_t ere_atom(const char *p, struct ere_bracket *b)
{
	if (*p == '[') {
		size_t len = ere_bracket_parse(p + 1, b);
		return len > 0 ? 1 + len : 0;
	}
	if (*p == '\0' || strchr("()|{}^$\\*+?", *p) != NULL)
		return 0;
	return 1;
}

static int ere_atom_has(const char *p, const struct ere_bracket *b, unsigned char c)
{
	if (*p == '[')
		return ere_bracket_has(b, c);
	return *p == '.' ? c != '\0' : (unsigned char)*p == c;
}

static int ere_match_here(const char *p, const char *s)
{
	struct ere_bracket b;
	if (*p == '\0')
		return *s == '\0';
	size_t len = ere_atom(p, &b);
	char quantifier = p[len];
	const char *rest = p + len + (quantifier == '*' || quantifier == '+' || quantifier == '?');
	if (quantifier == '*' || quantifier == '+' || quantifier == '?') {
		size_t run = 0, least = quantifier == '+', most = quantifier == '?' ? 1 : SIZE_MAX;
		while (run < most && s[run] != '\0' && ere_atom_has(p, &b, (unsigned char)s[run]))
			run++;
		for (size_t n = run + 1;
		     n-- > least;) /* the longest first, as POSIX; any will do for a full match */
			if (ere_match_here(rest, s + n))
				return 1;
		return 0;
	}
	return *s != '\0' && ere_atom_has(p, &b, (unsigned char)*s) && ere_match_here(rest, s + 1);
}

/* Does all of s match the extended regular expression pattern? 1 or 0 without compiling it when the pattern
 * is made of what Linux perf's cpuid rules use -- ordinary characters, '.', bracket expressions ([0-9a-f],
 * [[:xdigit:]], [^...]), each optionally followed by '*', '+' or '?' -- and -1 for anything else (groups,
 * alternation, anchors, intervals, escapes), which the caller hands to regcomp. A full match asks only
 * whether s is in the language, so POSIX's leftmost-longest rule cannot change the answer. */
int riscv_ere_full_match(const char *pattern, const char *s)
{
	struct ere_bracket b;
	for (const char *p = pattern; *p != '\0';) {
		size_t len = ere_atom(p, &b);
		if (len == 0)
			return -1;
		p += len;
		if (*p == '*' || *p == '+' || *p == '?')
			p++;
		if (*p == '{')
			return -1;
	}
	return ere_match_here(pattern, s);
}

/* Is c special in an extended regular expression (or its end)? A switch rather than strchr() on a list: asked
 * for every character of every rule's pattern at each PAPI_library_init. */
static int ere_special(char c)
{
	switch (c) {
	case '\0':
	case '.':
	case '[':
	case ']':
	case '(':
	case ')':
	case '|':
	case '{':
	case '}':
	case '^':
	case '$':
	case '\\':
	case '*':
	case '+':
	case '?':
		return 1;
	default:
		return 0;
	}
}

size_t riscv_ere_literal_prefix(const char *pattern)
{
	size_t n = 0;
	if (strchr(pattern, '|') != NULL)
		return 0;
	while (!ere_special(pattern[n]))
		n++;
	if (n > 0 && (pattern[n] == '*' || pattern[n] == '+' || pattern[n] == '?' || pattern[n] == '{'))
		n--; /* the quantifier applies to the run's last character */
	return n;
}

/* "0x" and v in lower-case hex without leading zeros, as "0x%" PRIx64 prints it; returns the end */
static char *put_hex(char *p, uint64_t v)
{
	char digits[16];
	int n = 0;
	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	*p++ = '0';
	*p++ = 'x';
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

int riscv_cpuinfo_perf_cpuid(const struct riscv_cpuinfo *ci, char *buf, size_t len)
{
	char cpuid[3 * 18 + 2], *p = cpuid; /* three "0x" + 16 digits, two dashes */
	if (!ci->has_mvendorid || !ci->has_marchid || !ci->has_mimpid || len == 0)
		return -1;
	p = put_hex(p, ci->mvendorid);
	*p++ = '-';
	p = put_hex(p, ci->marchid);
	*p++ = '-';
	p = put_hex(p, ci->mimpid);
	size_t n = (size_t)(p - cpuid) < len ? (size_t)(p - cpuid) : len - 1; /* cut as snprintf cuts */
	memcpy(buf, cpuid, n);
	buf[n] = '\0';
	return 0;
}

/* Linux perf's cpuid match (mapfile.csv): the pattern must match all of cpuid, "mvendorid-marchid-mimpid"
 * each printed as the kernel prints it (0x%lx); no cpuid (NULL: a field is missing) never matches. The rules
 * are tried one after the other at every PAPI_library_init, and compiling an expression costs far more than
 * matching it: the patterns the rules use are matched directly (riscv_ere_full_match), only another one is
 * compiled, and most name another vendor or core in their leading literal characters, which refuses them at
 * once. */
static int perf_id_matches(const char *cpuid, const char *pattern)
{
	regex_t re;
	regmatch_t m;
	if (cpuid == NULL)
		return 0;
	size_t prefix = riscv_ere_literal_prefix(pattern);
	if (strncmp(pattern, cpuid, prefix) != 0)
		return 0;
	/* the prefix has no quantifier and the pattern no alternation: the rest of the pattern must match the
	 * rest of the cpuid, whose prefix (the family's vendor and most of its marchid) is matched already */
	int direct = riscv_ere_full_match(pattern + prefix, cpuid + prefix);
	if (direct >= 0)
		return direct;
	if (regcomp(&re, pattern, REG_EXTENDED) != 0)
		return 0;
	int hit = regexec(&re, cpuid, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == strlen(cpuid);
	regfree(&re);
	return hit;
}

/* The cpuid the perf rules are matched against, in buf, or NULL when a field is missing: printed once for
 * all the rules of a question. */
static const char *perf_cpuid(const struct riscv_cpuinfo *ci, char *buf, size_t len)
{
	return riscv_cpuinfo_perf_cpuid(ci, buf, len) == 0 ? buf : NULL;
}

static int rule_matches(const struct riscv_cpuinfo *ci, const char *cpuid, const struct riscv_id_rule *r)
{
	switch (r->match) {
	case RISCV_MATCH_UARCH:
		return starts_with(ci->uarch, r->str);
	case RISCV_MATCH_IDS:
		return ci->has_marchid && ci->marchid == r->marchid &&
		       (r->any_vendor || (ci->has_mvendorid && ci->mvendorid == r->mvendorid));
	case RISCV_MATCH_ISA_EXT:
		return riscv_isa_has_extension(ci->isa, r->str);
	case RISCV_MATCH_PERF_ID:
		return perf_id_matches(cpuid, r->str);
	}
	return 0;
}

int riscv_cpuinfo_has_pmu(const struct riscv_cpuinfo *ci, const char *pmu)
{
	char buf[64];
	const char *cpuid = NULL;
	if (!looks_like_riscv_isa(ci->isa))
		return 0;
	if (strcmp(pmu, "riscv_generic") == 0)
		return strcmp(riscv_cpuinfo_core_pmu(ci), "riscv_generic") == 0;
	for (size_t i = 0; i < ARRAY_LEN(riscv_id_rules); i++) {
		if (strcmp(riscv_id_rules[i].pmu, pmu) != 0)
			continue;
		if (cpuid == NULL && riscv_id_rules[i].match == RISCV_MATCH_PERF_ID)
			cpuid = perf_cpuid(ci, buf, sizeof(buf));
		if (rule_matches(ci, cpuid, &riscv_id_rules[i]))
			return 1;
	}
	return 0;
}

const char *riscv_cpuinfo_core_pmu(const struct riscv_cpuinfo *ci)
{
	if (!looks_like_riscv_isa(ci->isa))
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(riscv_core_model_pmus); i++)
		if (riscv_cpuinfo_has_pmu(ci, riscv_core_model_pmus[i]))
			return riscv_core_model_pmus[i];
	return "riscv_generic";
}

/* The core's name: the matching uarch rule with the longest prefix (the first of equals), else the first
 * matching mvendorid/marchid or perf cpuid rule. The uarch rules are tried first, and the others only when
 * none matches: a kernel that prints uarch needs no cpuid printed and no pattern matched. */
static const char *core_name(const struct riscv_cpuinfo *ci)
{
	const struct riscv_id_rule *best = NULL;
	char buf[64];
	const char *cpuid;
	size_t i;

	for (i = 0; i < ARRAY_LEN(riscv_id_rules); i++) {
		const struct riscv_id_rule *r = &riscv_id_rules[i];
		if (r->core == NULL || r->match != RISCV_MATCH_UARCH || !starts_with(ci->uarch, r->str))
			continue;
		if (best == NULL || strlen(r->str) > strlen(best->str))
			best = r;
	}
	if (best != NULL)
		return best->core;
	cpuid = perf_cpuid(ci, buf, sizeof(buf));
	for (i = 0; i < ARRAY_LEN(riscv_id_rules); i++) {
		const struct riscv_id_rule *r = &riscv_id_rules[i];
		if (r->core != NULL && r->match != RISCV_MATCH_UARCH && r->match != RISCV_MATCH_ISA_EXT &&
		    rule_matches(ci, cpuid, r))
			return r->core;
	}
	return NULL;
}

void riscv_cpuinfo_model_name(const struct riscv_cpuinfo *ci, char *buf, size_t len)
{
	const char *core = core_name(ci);

	if (core != NULL && ci->uarch[0] != '\0' && len > 0) {
		/* "core (uarch)", cut as snprintf cuts it */
		size_t n = 0;
		const char *parts[] = {core, " (", ci->uarch, ")"};
		for (size_t i = 0; i < ARRAY_LEN(parts) && n < len - 1; i++) {
			size_t k = strlen(parts[i]);
			if (k > len - 1 - n)
				k = len - 1 - n;
			memcpy(buf + n, parts[i], k);
			n += k;
		}
		buf[n] = '\0';
	} else if (core != NULL && ci->uarch[0] != '\0')
		return; /* no room, as snprintf writes nothing */
	else if (core != NULL)
		copy_str(buf, len, core);
	else if (ci->uarch[0] != '\0')
		copy_str(buf, len, ci->uarch);
	else if (ci->has_marchid)
		snprintf(buf, len, "RISC-V marchid %#" PRIx64, ci->marchid);
	else
		copy_str(buf, len, "RISC-V");
}
