// SPDX-License-Identifier: MIT
/* Unit tests of the PAPI overlay's RISC-V /proc/cpuinfo identification
 * (papi-component/overlay/riscv_cpuinfo.c). */
#include <CUnit/Basic.h>
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "riscv_cpuinfo.h"
#include "riscv_cpuinfo_ids.h"
#include "ere_prefix_cases.h"
#include "cunit_run.h"

static FILE *text_file(const char *text)
{
	FILE *f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	rewind(f);
	return f;
}

static const char u74_cpuinfo[] =
    "processor\t: 0\nhart\t\t: 1\n"
    "isa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb\n"
    "mmu\t\t: sv39\nuarch\t\t: sifive,u74-mc\nmvendorid\t: 0x489\n"
    "marchid\t\t: 0x8000000000000007\nmimpid\t\t: 0x4210427\n"
    "hart isa\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb\n\n"
    "processor\t: 1\nhart\t\t: 2\nisa\t\t: rv64imafdc_sscofpmf\nuarch\t\t: other,core\n";

static void test_u74_fields(void)
{
	struct riscv_cpuinfo ci;
	FILE *f = text_file(u74_cpuinfo);
	CU_ASSERT_EQUAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(ci.isa, "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb");
	CU_ASSERT_STRING_EQUAL(ci.uarch, "sifive,u74-mc"); /* the first hart's, not the second's */
	CU_ASSERT_STRING_EQUAL(ci.mmu, "sv39");
	CU_ASSERT_TRUE(ci.has_mvendorid && ci.has_marchid && ci.has_mimpid);
	CU_ASSERT_EQUAL(ci.mvendorid, 0x489);
	CU_ASSERT_EQUAL(ci.marchid, 0x8000000000000007ULL);
	CU_ASSERT_EQUAL(ci.mimpid, 0x4210427);
	CU_ASSERT_EQUAL(ci.harts, 2);
}

static void test_u74_names(void)
{
	struct riscv_cpuinfo ci;
	char vendor[64], model[128];
	FILE *f = text_file(u74_cpuinfo);
	CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	riscv_cpuinfo_vendor_name(&ci, vendor, sizeof(vendor));
	riscv_cpuinfo_model_name(&ci, model, sizeof(model));
	CU_ASSERT_STRING_EQUAL(vendor, "SiFive");
	CU_ASSERT_STRING_EQUAL(model, "SiFive U74-MC (sifive,u74-mc)");
}

/* mvendorid 0 (non-commercial cores): the vendor comes from the device-tree compatible. */
static void test_vendor_from_uarch_and_fallbacks(void)
{
	struct riscv_cpuinfo ci;
	char vendor[64], model[64];
	FILE *f =
	    text_file("processor : 0\nisa : rv64imafdc_xdhpc\nuarch : ucb-bar,boom0\nmvendorid : 0x0\n");
	CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	riscv_cpuinfo_vendor_name(&ci, vendor, sizeof(vendor));
	riscv_cpuinfo_model_name(&ci, model, sizeof(model));
	CU_ASSERT_STRING_EQUAL(vendor, "UC Berkeley");
	CU_ASSERT_STRING_EQUAL(model, "SonicBOOM (ucb-bar,boom0)");

	f = text_file("processor : 0\nisa : rv64imac\nmvendorid : 0x123\nmarchid : 0x5\n");
	CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	riscv_cpuinfo_vendor_name(&ci, vendor, sizeof(vendor));
	riscv_cpuinfo_model_name(&ci, model, sizeof(model));
	CU_ASSERT_STRING_EQUAL(vendor, "RISC-V (mvendorid 0x123)");
	CU_ASSERT_STRING_EQUAL(model, "RISC-V marchid 0x5");
}

/* An x86 cpuinfo is not RISC-V, even though "vendor" and "isa"-like words appear in it. */
static void test_x86_is_not_riscv(void)
{
	struct riscv_cpuinfo ci;
	FILE *f = text_file("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\n"
	                    "flags\t\t: fpu vme sse\nisa\t: x86-64\n");
	CU_ASSERT_EQUAL(riscv_cpuinfo_parse(f, &ci), -1);
	fclose(f);
	CU_ASSERT_EQUAL(ci.harts, 0);
	CU_ASSERT_EQUAL(ci.isa[0], '\0');
	CU_ASSERT_EQUAL(riscv_cpuinfo_parse(NULL, &ci), -1);
}

static void test_isa_extensions(void)
{
	CU_ASSERT_TRUE(riscv_isa_has_extension("rv64imafdc_zicntr_sscofpmf", "sscofpmf"));
	CU_ASSERT_TRUE(riscv_isa_has_extension("rv64imafdc_zicntr_SSCOFPMF_zihpm", "sscofpmf"));
	CU_ASSERT_FALSE(riscv_isa_has_extension("rv64imafdc_zicntr_zihpm", "sscofpmf"));
	/* a prefix of another extension is not that extension */
	CU_ASSERT_FALSE(riscv_isa_has_extension("rv64imafdc_sscofpmfx", "sscofpmf"));
	CU_ASSERT_FALSE(riscv_isa_has_extension("rv64imafdc_zicntr", "zicnt"));
	/* single letters are not multi-letter extensions */
	CU_ASSERT_FALSE(riscv_isa_has_extension("rv64imafdc", "imafdc"));
	CU_ASSERT_FALSE(riscv_isa_has_extension(NULL, "sscofpmf"));
	CU_ASSERT_FALSE(riscv_isa_has_extension("rv64i_x", ""));
}

/* Names never overflow the caller's buffer. */
static void test_truncation(void)
{
	struct riscv_cpuinfo ci;
	char small[8];
	FILE *f = text_file(u74_cpuinfo);
	CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	memset(small, 'x', sizeof(small));
	riscv_cpuinfo_model_name(&ci, small, sizeof(small));
	CU_ASSERT_EQUAL(small[sizeof(small) - 1], '\0');
	CU_ASSERT_EQUAL(strncmp(small, "SiFive ", 7), 0);
}

/* What regcomp/regexec say: does all of s match pattern? */
static int regex_full_match(const char *pattern, const char *s)
{
	regex_t re;
	regmatch_t m;
	if (regcomp(&re, pattern, REG_EXTENDED) != 0)
		return 0;
	int hit = regexec(&re, s, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == strlen(s);
	regfree(&re);
	return hit;
}

static int compared;

/* riscv_ere_full_match and regex agree on s (when the former answers at all) */
static void check_agrees(const char *pattern, const char *s)
{
	/* what regexec matches begins with the literal prefix perf_id_matches() refuses others by */
	if (regex_full_match(pattern, s))
		CU_ASSERT_EQUAL(strncmp(pattern, s, riscv_ere_literal_prefix(pattern)), 0);
	int direct = riscv_ere_full_match(pattern, s);
	if (direct < 0)
		return;
	compared++;
	if (direct != regex_full_match(pattern, s))
		fprintf(stderr, "riscv_ere_full_match(\"%s\", \"%s\") = %d, regexec says %d\n", pattern, s,
		        direct, !direct);
	CU_ASSERT_EQUAL(direct, regex_full_match(pattern, s));
}

/* A string the pattern matches: each atom's first member, a quantified one once. */
static void instance_of(const char *p, char *out, size_t len)
{
	size_t n = 0;
	while (*p != '\0' && n + 1 < len) {
		if (*p == '[') {
			const char *q = p + 1 + (p[1] == '^');
			out[n++] = strncmp(q, "[:xdigit:]", 10) == 0 ? 'a' : *q;
			p = strchr(q + 1, ']');
			p = strncmp(q, "[:", 2) == 0 ? strchr(p + 1, ']') : p;
			p++;
		} else {
			out[n++] = *p++;
		}
		if (*p == '+' || *p == '*' || *p == '?')
			p++;
	}
	out[n] = '\0';
}

/* The cpuid rules' patterns (events/cpu_ids.csv) are matched without regcomp, with regexec's answer: on a
 * string each matches, on every one-character change, deletion and insertion of it, and on each other rule's.
 */
static void test_perf_id_patterns_without_regcomp(void)
{
	/* the last ones are ranges the matcher must hand to regcomp: "[]-a]" is ']'..'a' to glibc, regcomp
	 * refuses the others (so they never match; "[^z-a]" read directly would match any cpuid) */
	static const char *const extra[] = {"0x[[:xdigit:]]+",
	                                    "a.c",
	                                    "ab?c",
	                                    "a[^0-9]*z",
	                                    "[]x]-[a-]",
	                                    "x*",
	                                    "[]-]",
	                                    "[a-c-]",
	                                    "[^]a-c]+",
	                                    "[]-a]",
	                                    "[z-a]",
	                                    "[^z-a]",
	                                    "[a-[:digit:]]",
	                                    "[[:alpha:]-z]",
	                                    "[a-c-e]"};
	static const char *const to_regcomp[] = {"[]-a]",         "[z-a]",         "[^z-a]",
	                                         "[a-[:digit:]]", "[[:alpha:]-z]", "[a-c-e]"};
	static const char *const strings[] = {"",
	                                      "0x",
	                                      "0xff",
	                                      "abc",
	                                      "ac",
	                                      "abbc",
	                                      "aqz",
	                                      "a1z",
	                                      "az",
	                                      "]-a",
	                                      "_",
	                                      "b",
	                                      "q",
	                                      "d",
	                                      "-",
	                                      "]",
	                                      "x--",
	                                      "xxx",
	                                      "0x489-0x8000000000000007-0x4210427"};
	int rules = 0;
	for (size_t i = 0; i < sizeof(riscv_id_rules) / sizeof(riscv_id_rules[0]); i++) {
		const char *pattern = riscv_id_rules[i].str;
		char match[128], s[130];
		if (riscv_id_rules[i].match != RISCV_MATCH_PERF_ID)
			continue;
		rules++;
		CU_ASSERT_NOT_EQUAL(riscv_ere_full_match(pattern, "0x0-0x0-0x0"),
		                    -1); /* no rule needs regcomp */
		instance_of(pattern, match, sizeof(match));
		CU_ASSERT_EQUAL(riscv_ere_full_match(pattern, match), 1);
		check_agrees(pattern, match);
		size_t len = strlen(match);
		for (size_t k = 0; k <= len; k++) {
			for (const char *c = "0189adfx-"; *c != '\0'; c++) {
				snprintf(s, sizeof(s), "%.*s%c%s", (int)k, match, *c,
				         match + k + (k < len)); /* changed */
				check_agrees(pattern, s);
				snprintf(s, sizeof(s), "%.*s%c%s", (int)k, match, *c,
				         match + k); /* inserted */
				check_agrees(pattern, s);
			}
			snprintf(s, sizeof(s), "%.*s%s", (int)k, match,
			         k < len ? match + k + 1 : ""); /* deleted */
			check_agrees(pattern, s);
		}
		for (size_t j = 0; j < sizeof(riscv_id_rules) / sizeof(riscv_id_rules[0]); j++)
			if (riscv_id_rules[j].match == RISCV_MATCH_PERF_ID) {
				instance_of(riscv_id_rules[j].str, match, sizeof(match));
				check_agrees(pattern, match);
			}
	}
	CU_ASSERT_TRUE(rules > 0);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		for (size_t j = 0; j < sizeof(strings) / sizeof(strings[0]); j++)
			check_agrees(extra[i], strings[j]);
	/* what it leaves to regcomp */
	CU_ASSERT_EQUAL(riscv_ere_full_match("a|b", "a"), -1);
	CU_ASSERT_EQUAL(riscv_ere_full_match("(ab)+", "ab"), -1);
	CU_ASSERT_EQUAL(riscv_ere_full_match("a{2}", "aa"), -1);
	CU_ASSERT_EQUAL(riscv_ere_full_match("^a$", "a"), -1);
	CU_ASSERT_EQUAL(riscv_ere_full_match("[[:nope:]]", "a"), -1);
	CU_ASSERT_EQUAL(riscv_ere_full_match("[ab", "a"), -1);
	for (size_t i = 0; i < sizeof(to_regcomp) / sizeof(to_regcomp[0]); i++)
		for (size_t j = 0; j < sizeof(strings) / sizeof(strings[0]); j++)
			CU_ASSERT_EQUAL(riscv_ere_full_match(to_regcomp[i], strings[j]), -1);
	CU_ASSERT_TRUE(compared > 1000);
}

/* The leading characters perf_id_matches() compares before matching: none quantified, none after a '|' */
static void test_literal_prefix(void)
{
	for (size_t i = 0; i < ERE_PREFIX_NCASES; i++) {
		CU_ASSERT_EQUAL(riscv_ere_literal_prefix(ERE_PREFIX_CASES[i].pattern),
		                ERE_PREFIX_CASES[i].prefix);
		for (size_t j = 0; j < ERE_PREFIX_NSTRINGS; j++)
			check_agrees(ERE_PREFIX_CASES[i].pattern, ERE_PREFIX_STRINGS[j]);
	}
}

/* perf's cpuid as snprintf("0x%" PRIx64 ...) prints it, cut as snprintf cuts it; none without all three ids
 */
static void test_perf_cpuid(void)
{
	static const uint64_t values[] = {0, 1, 0xf, 0x10, 0x489, 0x5b7, 0x8000000000000007ULL, UINT64_MAX};
	const size_t nv = sizeof(values) / sizeof(values[0]);
	struct riscv_cpuinfo ci;
	char got[80], want[80];
	for (size_t i = 0; i < nv; i++) {
		memset(&ci, 0, sizeof(ci));
		ci.has_mvendorid = ci.has_marchid = ci.has_mimpid = 1;
		ci.mvendorid = values[i];
		ci.marchid = values[(i + 3) % nv];
		ci.mimpid = values[nv - 1 - i];
		for (size_t len = 1; len <= sizeof(got); len++) {
			memset(got, '#', sizeof(got));
			snprintf(want, len, "0x%" PRIx64 "-0x%" PRIx64 "-0x%" PRIx64, ci.mvendorid,
			         ci.marchid, ci.mimpid);
			CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_perf_cpuid(&ci, got, len), 0);
			CU_ASSERT_STRING_EQUAL(got, want);
		}
	}
	strcpy(got, "untouched");
	ci.has_mimpid = 0;
	CU_ASSERT_EQUAL(riscv_cpuinfo_perf_cpuid(&ci, got, sizeof(got)), -1);
	ci.has_mimpid = 1;
	CU_ASSERT_EQUAL(riscv_cpuinfo_perf_cpuid(&ci, got, 0), -1);
	CU_ASSERT_STRING_EQUAL(got, "untouched");
}

/* The parser as it was, line by line with fgets(), trim() and strcmp(): riscv_cpuinfo_parse() now reads
 * blocks and cuts the lines itself, and must give the same fields on any text. */
static char *ref_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int ref_u64(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, 0);
	if (end == s || *end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static void ref_parse(FILE *f, struct riscv_cpuinfo *out)
{
	char line[1024];
	memset(out, 0, sizeof(*out));
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');
		if (colon == NULL)
			continue;
		*colon = '\0';
		char *key = ref_trim(line), *value = ref_trim(colon + 1);
		if (strcmp(key, "processor") == 0)
			out->harts++;
		else if (strcmp(key, "isa") == 0 && out->isa[0] == '\0')
			snprintf(out->isa, sizeof(out->isa), "%s", value);
		else if (strcmp(key, "uarch") == 0 && out->uarch[0] == '\0')
			snprintf(out->uarch, sizeof(out->uarch), "%s", value);
		else if (strcmp(key, "mmu") == 0 && out->mmu[0] == '\0')
			snprintf(out->mmu, sizeof(out->mmu), "%s", value);
		else if (strcmp(key, "mvendorid") == 0 && !out->has_mvendorid)
			out->has_mvendorid = ref_u64(value, &out->mvendorid) == 0;
		else if (strcmp(key, "marchid") == 0 && !out->has_marchid)
			out->has_marchid = ref_u64(value, &out->marchid) == 0;
		else if (strcmp(key, "mimpid") == 0 && !out->has_mimpid)
			out->has_mimpid = ref_u64(value, &out->mimpid) == 0;
	}
}

static int parse_compared;

/* riscv_cpuinfo_parse() on the n bytes of text gives what the line-by-line parser gives. */
static void check_parse_as_reference(const char *what, const char *text, size_t n)
{
	struct riscv_cpuinfo got, want;
	FILE *f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(fwrite(text, 1, n, f), n);
	ref_parse(f, &want);
	int rc = riscv_cpuinfo_parse(f, &got);
	CU_ASSERT_EQUAL(ftell(f), 0); /* rewound for the next reader */
	fclose(f);
	CU_ASSERT_EQUAL(rc, strncmp(want.isa, "rv", 2) == 0 ? 0 : -1);
	if (rc != 0)
		memset(&want, 0, sizeof(want));
	int same = strcmp(got.isa, want.isa) == 0 && strcmp(got.uarch, want.uarch) == 0 &&
	           strcmp(got.mmu, want.mmu) == 0 && got.harts == want.harts &&
	           got.has_mvendorid == want.has_mvendorid && got.has_marchid == want.has_marchid &&
	           got.has_mimpid == want.has_mimpid &&
	           (!want.has_mvendorid || got.mvendorid == want.mvendorid) &&
	           (!want.has_marchid || got.marchid == want.marchid) &&
	           (!want.has_mimpid || got.mimpid == want.mimpid);
	if (!same)
		fprintf(stderr, "%s: isa \"%s\"/\"%s\" uarch \"%s\"/\"%s\" mmu \"%s\"/\"%s\" harts %d/%d\n",
		        what, got.isa, want.isa, got.uarch, want.uarch, got.mmu, want.mmu, got.harts,
		        want.harts);
	CU_ASSERT_TRUE(same);
	parse_compared++;
}

static void check_text_as_reference(const char *what, const char *text)
{
	check_parse_as_reference(what, text, strlen(text));
}

/* Every fixture of tests/pfm/cpuinfo/, and texts made to catch the cutting of lines: a line longer than
 * fgets()'s 1023 characters (its rest read as a line of its own), lines across the 4096-byte blocks, NUL
 * bytes, CRLF, no colon, no last newline, keys spaced or repeated, numbers too long for a field buffer. */
static void test_parse_as_line_by_line(void)
{
	DIR *d = opendir(CPUINFO_DIR);
	struct dirent *e;
	int fixtures = 0;
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		if (strstr(e->d_name, ".txt") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", CPUINFO_DIR, e->d_name);
		FILE *f = fopen(path, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		static char text[1 << 16];
		size_t n = fread(text, 1, sizeof(text), f);
		fclose(f);
		check_parse_as_reference(e->d_name, text, n);
		fixtures++;
	}
	closedir(d);
	CU_ASSERT_TRUE(fixtures >= 20);

	check_text_as_reference("minimal", "isa : rv64imac\n");
	check_text_as_reference("no last newline", "processor:0\nuarch: sifive,u74-mc\nisa: rv64gc");
	check_text_as_reference("CRLF",
	                        "processor\t: 0\r\nisa\t: rv64gc\r\nmvendorid\t: 0x489\r\nmarchid : 7\r\n");
	check_text_as_reference("no colon ends nothing", "isa rv32\nisa: rv64gc\nmmu\nmmu:sv48\n");
	check_text_as_reference("spaced keys", "  isa  \t:  rv64gc  \n\tmmu :sv39\nIsa: rv32\nisa x: rv32\n");
	check_text_as_reference("repeated keys",
	                        "isa: rv64gc\nisa: rv32i\nmarchid: 5\nmarchid: 6\nuarch:\nuarch: a,b\n");
	check_text_as_reference(
	    "empty and bad numbers",
	    "isa: rv64gc\nmvendorid:\nmvendorid: 0x12\nmarchid: 0x1g\nmarchid: 9\nmimpid: -1\n");
	check_text_as_reference("colon in value", "isa: rv64gc\nuarch: a:b:c\n");
	check_text_as_reference("blank lines", "\n\n   \n:\n: x\nisa:rv64\n");
	check_text_as_reference("NUL in a line",
	                        "isa: rv64gc\0 ignored\nmmu\0: sv39\nuarch: x\0y: z\nmvendorid: 1\n");
	static const char nul_then_key[] = "isa: rv64gc \0x\n\0mmu: sv48\nmarchid: 5 \0\nmimpid: 0x3\n";
	check_parse_as_reference("NUL then key", nul_then_key, sizeof(nul_then_key) - 1);

	static char text[3 * 4096 + 500];
	size_t n;
	/* a 3000-character line: fgets() returns it in pieces of 1023, and a piece may read as a key */
	for (size_t cut = 1015; cut <= 1024; cut++) {
		n = 0;
		memset(text, 'x', cut);
		n = cut;
		n += (size_t)sprintf(text + n, "isa: rv64imac");
		memset(text + n, 'y', 3000 - n);
		n = 3000;
		n += (size_t)sprintf(text + n, "\nisa: rv32i\nmarchid: 0x%03d\n", (int)cut);
		check_parse_as_reference("long line", text, n);
	}
	/* a value longer than the fields' buffers; a number with 400 leading zeros */
	n = (size_t)sprintf(text, "isa: rv64");
	memset(text + n, 'a', 600);
	n += 600;
	n += (size_t)sprintf(text + n, "\nmmu: ");
	memset(text + n, 's', 100);
	n += 100;
	n += (size_t)sprintf(text + n, "\nmvendorid: 0x");
	memset(text + n, '0', 400);
	n += 400;
	n += (size_t)sprintf(text + n, "489\nmarchid: ");
	memset(text + n, '0', 1100);
	n += 1100;
	n += (size_t)sprintf(text + n, "7\n");
	check_parse_as_reference("long values", text, n);
	/* many harts: lines across the blocks at every offset a 43-byte hart record gives */
	for (int shift = 0; shift < 8; shift++) {
		n = (size_t)sprintf(text, "%.*s", shift, "#######");
		for (int h = 0; n + 64 < sizeof(text); h++)
			n += (size_t)sprintf(text + n, "processor: %d\nisa: rv64gc\nmarchid: %d\n\n", h, h);
		check_parse_as_reference("many harts", text, n);
	}
	CU_ASSERT_TRUE(parse_compared > 40);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("riscv_cpuinfo", NULL, NULL);
	CU_add_test(s, "U74 cpuinfo fields", test_u74_fields);
	CU_add_test(s, "U74 vendor and model names", test_u74_names);
	CU_add_test(s, "vendor from uarch, fallbacks", test_vendor_from_uarch_and_fallbacks);
	CU_add_test(s, "x86 cpuinfo is not RISC-V", test_x86_is_not_riscv);
	CU_add_test(s, "ISA extension matching", test_isa_extensions);
	CU_add_test(s, "buffers are not overrun", test_truncation);
	CU_add_test(s, "cpuid patterns matched without regcomp", test_perf_id_patterns_without_regcomp);
	CU_add_test(s, "cpuid patterns' literal prefix", test_literal_prefix);
	CU_add_test(s, "perf cpuid printed as by 0x%lx", test_perf_cpuid);
	CU_add_test(s, "cpuinfo parsed as line by line", test_parse_as_line_by_line);
	return cunit_run_all();
}
