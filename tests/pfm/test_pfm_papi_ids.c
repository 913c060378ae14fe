// SPDX-License-Identifier: MIT
/*
 * One source of truth for RISC-V identification: libpfm4's detection (generated ID tables in the model
 * headers) and PAPI's cpuinfo rules (papi-component/overlay/riscv_cpuinfo.c with the generated
 * riscv_cpuinfo_ids.h) come from events/cpu_ids.csv. For every cpuinfo fixture, every machine of
 * events/models.csv and the edge cases where they once drifted (rv128, eth,ariane, letter case, malformed
 * ids), both must name the same PMUs; a few cases also state the expected answer, so agreeing on nothing
 * cannot pass.
 */
#include <CUnit/Basic.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "riscv_cpuinfo.h"
#include "riscv_known_machines.h"

#include "ere_prefix_cases.h"
#include "pfm_test_util.h"
#include "cunit_run.h"

#define riscv_pmus riscv_known_pmus /* generated from events/models.csv */
#define NPMUS      (sizeof(riscv_pmus) / sizeof(riscv_pmus[0]))

static int cases;

/* libpfm4's answer: the RISC-V PMUs active after initialising with this cpuinfo */
static void libpfm_pmus(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, path), PFM_SUCCESS);
	for (size_t i = 0; i < NPMUS; i++) {
		if (pmu_active(riscv_pmus[i])) {
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, riscv_pmus[i], len - strlen(out) - 1);
		}
	}
}

/* PAPI's answer for the same file */
static void papi_pmus(const char *path, char *out, size_t len)
{
	struct riscv_cpuinfo ci;
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (f == NULL || riscv_cpuinfo_parse(f, &ci) != 0) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	for (size_t i = 0; i < NPMUS; i++) {
		if (riscv_cpuinfo_has_pmu(&ci, riscv_pmus[i])) {
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, riscv_pmus[i], len - strlen(out) - 1);
		}
	}
}

/* both agree on `path`; when `want` is given, that is also the answer */
static void agree(const char *what, const char *path, const char *want)
{
	char lib[512], papi[512];

	libpfm_pmus(path, lib, sizeof(lib));
	papi_pmus(path, papi, sizeof(papi));
	if (strcmp(lib, papi) || (want && strcmp(lib, want)))
		fprintf(stderr, "\n  %s: libpfm4 '%s', PAPI '%s', want '%s'\n", what, lib, papi,
		        want ? want : "(same)");
	CU_ASSERT_STRING_EQUAL(lib, papi);
	if (want)
		CU_ASSERT_STRING_EQUAL(lib, want);
	cases++;
}

/* a cpuinfo of these lines (NULL: the line is missing), as the kernel prints them */
static void agree_text_mimpid(const char *what, const char *isa, const char *uarch, const char *mvendorid,
                              const char *marchid, const char *mimpid, const char *want)
{
	char path[] = "/tmp/pfm_ids_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int hart = 0; hart < 2; hart++) {
		fprintf(f, "processor\t: %d\nhart\t\t: %d\nisa\t\t: %s\nmmu\t\t: sv39\n", hart, hart, isa);
		if (uarch)
			fprintf(f, "uarch\t\t: %s\n", uarch);
		if (mvendorid)
			fprintf(f, "mvendorid\t: %s\n", mvendorid);
		if (marchid)
			fprintf(f, "marchid\t\t: %s\n", marchid);
		if (mimpid)
			fprintf(f, "mimpid\t\t: %s\n", mimpid);
		fputs("\n", f);
	}
	fclose(f);
	agree(what, path, want);
	unlink(path);
}

static void agree_text(const char *what, const char *isa, const char *uarch, const char *mvendorid,
                       const char *marchid, const char *want)
{
	agree_text_mimpid(what, isa, uarch, mvendorid, marchid, NULL, want);
}

static void test_fixtures(void)
{
	static const char *const fixtures[] = {"unmatched.txt",
	                                       "visionfive2.txt",
	                                       "u74_sscofpmf.txt",
	                                       "cva6.txt",
	                                       "rocket_xdhpc.txt",
	                                       "boom.txt",
	                                       "thead_c910.txt",
	                                       "x86_64.txt",
	                                       "missing_marchid.txt",
	                                       "no-such-file.txt",
	                                       "sifive_unknown_marchid.txt",
	                                       "thead_unknown_marchid.txt"};

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		agree(fixtures[i], cpuinfo_fixture(fixtures[i]), NULL);
	agree("sifive_unknown_marchid.txt", cpuinfo_fixture("sifive_unknown_marchid.txt"), "riscv_generic");
	/* each machine's board fixture (events/models.csv cpuinfo_fixture): both say its PMUs */
	for (size_t i = 0; i < sizeof(riscv_known_machines) / sizeof(riscv_known_machines[0]); i++) {
		const struct riscv_known_machine *m = riscv_known_machines + i;
		char want[256];

		snprintf(want, sizeof(want), "%s%s%s", m->core_pmu, *m->bank_pmu ? " " : "", m->bank_pmu);
		agree(m->cpuinfo_fixture, cpuinfo_fixture(m->cpuinfo_fixture), want);
	}
	agree("unmatched.txt", cpuinfo_fixture("unmatched.txt"), "riscv_sifive_u74");
	agree("x86_64.txt", cpuinfo_fixture("x86_64.txt"), "");
}

static void test_known_machines(void)
{
	for (size_t i = 0; i < sizeof(riscv_known_machines) / sizeof(riscv_known_machines[0]); i++) {
		const struct riscv_known_machine *m = riscv_known_machines + i;
		char want[256];

		snprintf(want, sizeof(want), "%s%s%s", m->core_pmu, *m->bank_pmu ? " " : "", m->bank_pmu);
		agree_text_mimpid(m->model, m->isa, m->uarch, m->mvendorid, m->marchid, m->mimpid, want);
	}
}

/* where the two once drifted, and the corners of each rule */
static void test_edge_cases(void)
{
	agree_text("rv128", "rv128imafdc", NULL, NULL, NULL, "riscv_generic");
	agree_text("rv32", "rv32imac_zicntr", NULL, NULL, NULL, "riscv_generic");
	agree_text("upper-case RV64", "RV64IMAFDC", NULL, NULL, NULL, "riscv_generic");
	agree_text("rv without XLEN", "rvimafdc", NULL, NULL, NULL, "");
	agree_text("x86-64 isa", "x86-64", "sifive,u74-mc", "0x489", "0x8000000000000007", "");
	agree_text("eth,ariane", "rv64imafdc", "eth,ariane", NULL, NULL, "riscv_openhwgroup_cva6");
	agree_text("upper-case uarch", "rv64imafdc", "SiFive,U74-MC", NULL, NULL, "riscv_sifive_u74");
	agree_text("U74 by ids only", "rv64imafdc", NULL, "0x489", "0x8000000000000007", "riscv_sifive_u74");
	/* one family, told apart by mimpid (Linux's mapfile keys for SiFive bullet-07 and bullet-0d) */
	agree_text_mimpid("bullet mimpid 0x7..", "rv64imafdc", NULL, "0x489", "0x8000000000000207",
	                  "0x7210000", "riscv_sifive_bullet_07");
	agree_text_mimpid("bullet mimpid 0xd..", "rv64imafdc", NULL, "0x489", "0x8000000000000207",
	                  "0xd210000", "riscv_sifive_bullet_0d");
	agree_text_mimpid("bullet mimpid 0x9..", "rv64imafdc", NULL, "0x489", "0x8000000000000207",
	                  "0x9210000", "riscv_generic"); /* no key covers it */
	agree_text_mimpid("bullet without mimpid", "rv64imafdc", NULL, "0x489", "0x8000000000000207", NULL,
	                  "riscv_generic");
	agree_text_mimpid("bullet marchid f07", "rv64imafdc", NULL, "0x489", "0x8000000000000f07",
	                  "0x7210000", "riscv_generic"); /* [1-9a-e]07: not f */
	agree_text_mimpid("T-Head marchid 0 mimpid 0", "rv64imafdc", NULL, "0x5b7", "0x0", "0x0",
	                  "riscv_thead_c900_legacy");
	agree_text_mimpid("T-Head marchid 0 mimpid 1", "rv64imafdc", NULL, "0x5b7", "0x0", "0x1",
	                  "riscv_generic");
	agree_text("U74 ids, other vendor", "rv64imafdc", NULL, "0x48a", "0x8000000000000007",
	           "riscv_generic");
	agree_text("CVA6 by ids, decimal", "rv64imafdc", NULL, "1538", "3", "riscv_openhwgroup_cva6");
	agree_text("malformed marchid", "rv64imafdc", NULL, "0x602", "0x3x", "riscv_generic");
	agree_text("empty marchid", "rv64imafdc", NULL, "0x602", "", "riscv_generic");
	agree_text("BOOM marchid, any vendor", "rv64imafdc", NULL, "0x489", "0x2",
	           "riscv_generic riscv_ucb_boom");
	agree_text("xdhpc upper case", "rv64imafdc_XDHPC", NULL, NULL, NULL,
	           "riscv_generic riscv_lowrisc_hpc");
	agree_text("xdhpc as prefix only", "rv64imafdc_xdhpcx", NULL, NULL, NULL, "riscv_generic");
	agree_text("CVA6 with xdhpc", "rv64imafdc_xdhpc", "openhwgroup,cva6", NULL, NULL,
	           "riscv_openhwgroup_cva6 riscv_lowrisc_hpc");
	agree_text("rocket", "rv64imafdc", "sifive,rocket0", "0x0", "0x1", "riscv_generic");
}

/* PAPI's names follow the same rules: the model string names the core libpfm4 detected */
/* libpfm4's matcher of perf's cpuid keys (pfmlib_riscv.c, internal: reached through libpfm.a) */
int pfm_riscv_ere_match(const char *p, const char *s);

/* regcomp/regexec's answer: does all of s match pattern? (a pattern regcomp refuses never matches) */
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

/* Both direct matchers (libpfm4's and PAPI's) answer as regexec does, or hand the pattern to regcomp (-1);
 * the last patterns are ranges they must hand over ("[]-a]" is ']'..'a' to glibc; regcomp refuses the
 * others, so "[^z-a]" read directly would match any cpuid). */
static void test_perf_id_patterns_without_regcomp(void)
{
	static const char *const patterns[] = {"0x[[:xdigit:]]+",
	                                       "a.c",
	                                       "ab?c",
	                                       "a[^0-9]*z",
	                                       "[]x]-[a-]",
	                                       "x*",
	                                       "[]-]",
	                                       "[a-c-]",
	                                       "[^]a-c]+",
	                                       "0x489-0x8000000000000007-0x[[:xdigit:]]+",
	                                       "[]-a]",
	                                       "[z-a]",
	                                       "[^z-a]",
	                                       "[a-[:digit:]]",
	                                       "[[:alpha:]-z]",
	                                       "[a-c-e]"};
	static const size_t first_to_regcomp = 10;
	static const char *const strings[] = {
	    "",    "0x",  "0xff", "abc", "ac", "abbc", "aqz", "a1z", "az",
	    "]-a", "x--", "_",    "b",   "q",  "d",    "-",   "]",   "0x489-0x8000000000000007-0x4210427"};
	int compared = 0;
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		for (size_t j = 0; j < sizeof(strings) / sizeof(strings[0]); j++) {
			int pfm = pfm_riscv_ere_match(patterns[i], strings[j]);
			int papi = riscv_ere_full_match(patterns[i], strings[j]);
			int want = regex_full_match(patterns[i], strings[j]);
			if (i >= first_to_regcomp) {
				CU_ASSERT_EQUAL(pfm, -1);
				CU_ASSERT_EQUAL(papi, -1);
				continue;
			}
			if (pfm != want || papi != want)
				fprintf(stderr, "\"%s\" on \"%s\": libpfm4 %d, PAPI %d, regexec %d\n",
				        patterns[i], strings[j], pfm, papi, want);
			CU_ASSERT_EQUAL(pfm, want);
			CU_ASSERT_EQUAL(papi, want);
			compared++;
		}
	CU_ASSERT_EQUAL(compared, (int)(first_to_regcomp * (sizeof(strings) / sizeof(strings[0]))));
}

/* libpfm4 refuses a perf cpuid key at once when the cpuid does not begin with the key's leading literal
 * characters (pfmlib_riscv.c): whatever regexec matches in full begins with them, for any pattern */
size_t pfm_riscv_ere_literal_prefix(const char *p);

static void test_perf_id_literal_prefix(void)
{
	for (size_t i = 0; i < ERE_PREFIX_NCASES; i++) {
		const struct ere_prefix_case *c = &ERE_PREFIX_CASES[i];
		size_t n = pfm_riscv_ere_literal_prefix(c->pattern);
		if (n != c->prefix)
			fprintf(stderr, "literal prefix of \"%s\": %zu, want %zu\n", c->pattern, n,
			        c->prefix);
		CU_ASSERT_EQUAL(n, c->prefix);
		for (size_t j = 0; j < ERE_PREFIX_NSTRINGS; j++) {
			const char *s = ERE_PREFIX_STRINGS[j];
			int want = regex_full_match(c->pattern, s);
			if (want)
				CU_ASSERT_EQUAL(strncmp(c->pattern, s, n), 0);
			if (strncmp(c->pattern, s, n) != 0)
				continue;
			/* both matchers go on from after the prefix: the rest of the pattern on the rest of s
			 * must answer for the whole (when they answer; -1 leaves the whole to regcomp) */
			int pfm = pfm_riscv_ere_match(c->pattern + n, s + n);
			int papi = riscv_ere_full_match(c->pattern + n, s + n);
			if ((pfm >= 0 && pfm != want) || (papi >= 0 && papi != want))
				fprintf(
				    stderr,
				    "\"%s\" on \"%s\" after the prefix: libpfm4 %d, PAPI %d, regexec %d\n",
				    c->pattern, s, pfm, papi, want);
			if (pfm >= 0)
				CU_ASSERT_EQUAL(pfm, want);
			if (papi >= 0)
				CU_ASSERT_EQUAL(papi, want);
		}
	}
}

static void test_papi_names(void)
{
	struct riscv_cpuinfo ci;
	char model[128];
	FILE *f = tmpfile();

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("processor : 0\nisa : rv128imafdc\nuarch : eth,ariane\n", f);
	CU_ASSERT_EQUAL_FATAL(riscv_cpuinfo_parse(f, &ci), 0);
	fclose(f);
	riscv_cpuinfo_model_name(&ci, model, sizeof(model));
	CU_ASSERT_STRING_EQUAL(model, "OpenHW Group CVA6 (Ariane) (eth,ariane)");
	CU_ASSERT_STRING_EQUAL(riscv_cpuinfo_core_pmu(&ci), "riscv_openhwgroup_cva6");
}

static int teardown(void)
{
	pfm_terminate();
	printf("\n  %d cpuinfo cases compared\n", cases);
	return 0;
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("libpfm4 and PAPI identify RISC-V machines alike", NULL, teardown);
	CU_add_test(s, "cpuinfo fixtures", test_fixtures);
	CU_add_test(s, "machines of events/models.csv", test_known_machines);
	CU_add_test(s, "edge cases (rv128, eth,ariane, case, malformed ids)", test_edge_cases);
	CU_add_test(s, "PAPI model names", test_papi_names);
	CU_add_test(s, "perf cpuid patterns: libpfm4, PAPI and regexec agree",
	            test_perf_id_patterns_without_regcomp);
	CU_add_test(s, "perf cpuid keys: libpfm4's literal prefix is in every match",
	            test_perf_id_literal_prefix);
	return cunit_run_all();
}
