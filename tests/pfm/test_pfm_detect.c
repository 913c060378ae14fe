// SPDX-License-Identifier: MIT
/*
 * Detection of the RISC-V PMU models from /proc/cpuinfo texts (fixtures in tests/pfm/cpuinfo/, handed to
 * libpfm4 through LIBPFM_PROC_CPUINFO), our cpuinfo reader, the machines of events/models.csv, and
 * LIBPFM_FORCE_PMU.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include "riscv_known_machines.h"

#include "pfm_test_util.h"
#include "cunit_run.h"

#define riscv_pmus riscv_known_pmus /* generated from events/models.csv */
#define NPMUS      (sizeof(riscv_pmus) / sizeof(riscv_pmus[0]))

/* the RISC-V PMUs active after initialising with this cpuinfo, as "name name ..." */
static void active_pmus(const char *forced, const char *cpuinfo, char *out, size_t len)
{
	out[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(forced, cpuinfo), PFM_SUCCESS);
	for (size_t i = 0; i < NPMUS; i++) {
		if (pmu_active(riscv_pmus[i])) {
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, riscv_pmus[i], len - strlen(out) - 1);
		}
	}
}

static void expect_detected(const char *fixture, const char *want)
{
	char got[512];

	active_pmus(NULL, cpuinfo_fixture(fixture), got, sizeof(got));
	if (strcmp(got, want))
		fprintf(stderr, "\n  %s: detected '%s', want '%s'\n", fixture, got, want);
	CU_ASSERT_STRING_EQUAL(got, want);
}

/* PAPI's perf_event component needs exactly one core PMU */
static int active_core_pmus(void)
{
	pfm_pmu_info_t info;
	int i, n = 0;

	pfm_for_all_pmus(i)
	{
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(i, &info) == PFM_SUCCESS && info.is_present &&
		    info.type == PFM_PMU_TYPE_CORE)
			n++;
	}
	return n;
}

static void test_u74_boards(void)
{
	expect_detected("unmatched.txt", "riscv_sifive_u74"); /* by uarch */
	CU_ASSERT_EQUAL(active_core_pmus(), 1);
	expect_detected("visionfive2.txt", "riscv_sifive_u74"); /* by mvendorid + marchid, no uarch line */
	CU_ASSERT_EQUAL(active_core_pmus(), 1);
	expect_detected("u74_sscofpmf.txt", "riscv_sifive_u74");
}

static void test_cva6(void)
{
	expect_detected("cva6.txt", "riscv_openhwgroup_cva6");
	CU_ASSERT_EQUAL(active_core_pmus(), 1);
}

static void test_rocket_with_hpc(void)
{
	expect_detected("rocket_xdhpc.txt", "riscv_generic riscv_lowrisc_hpc");
	CU_ASSERT_EQUAL(active_core_pmus(), 1); /* the bank is not a core PMU */
}

static void test_boom(void)
{
	expect_detected("boom.txt", "riscv_generic riscv_ucb_boom");
	CU_ASSERT_EQUAL(active_core_pmus(), 1);
}

static void test_core_without_model_is_generic(void)
{
	expect_detected("thead_unknown_marchid.txt", "riscv_generic");
	CU_ASSERT_EQUAL(active_core_pmus(), 1);
}

static void test_x86_64_is_none(void)
{
	expect_detected("x86_64.txt", "");
	CU_ASSERT_EQUAL(active_core_pmus(), 0);
	expect_detected("no-such-file.txt", ""); /* unreadable cpuinfo: nothing detected, no crash */
}

/* libpfm4's common cpuinfo reader (patches 0002-0006) on a fixture file: the file LIBPFM_PROC_CPUINFO names,
 * which pfm_initialize() copies into pfm_cfg (the next pfm_reinit() sets it again) */
static int attrs_from(const char *path, pfmlib_cpuinfo_attr_t *attrs, int n)
{
	pfm_cfg.proc_cpuinfo = (char *)path;
	CU_ASSERT_STRING_EQUAL(pfmlib_cpuinfo_path(), path);
	return pfmlib_getcpuinfo_attrs(attrs, n);
}

/* one key through the common reader, from a fixture file */
static int cpuinfo_get(const char *path, const char *key, char *buf, size_t len)
{
	pfmlib_cpuinfo_attr_t a = {.attr = key, .buf = buf, .maxlen = len};
	int n = attrs_from(path, &a, 1);

	CU_ASSERT_EQUAL(a.found, n == 1);
	return n == 1 ? 0 : -1;
}

/* upstream's old reader returned the last line's value for a missing key; here the last line is an mimpid
 * equal to the U74 marchid, so that bug would make this a U74 */
static void test_missing_key_takes_no_other_value(void)
{
	char buf[128] = "untouched";
	const char *path = cpuinfo_fixture("missing_marchid.txt");

	CU_ASSERT_EQUAL(cpuinfo_get(path, "marchid", buf, sizeof(buf)), -1);
	CU_ASSERT_STRING_EQUAL(buf, "untouched");
	CU_ASSERT_EQUAL(cpuinfo_get(path, "mimpid", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x8000000000000007");
	expect_detected("missing_marchid.txt", "riscv_generic");
}

static void test_cpuinfo_reader(void)
{
	char buf[128], isa[64], uarch[64] = "untouched", vf2[4096];
	pfmlib_cpuinfo_attr_t several[] = {
	    {.attr = "isa", .buf = isa, .maxlen = sizeof(isa)},
	    {.attr = "uarch", .buf = uarch, .maxlen = sizeof(uarch)},
	    {.attr = "marchid", .buf = buf, .maxlen = sizeof(buf)},
	};

	snprintf(vf2, sizeof(vf2), "%s",
	         cpuinfo_fixture("visionfive2.txt")); /* the fixture buffer is reused */

	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "marchid", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x8000000000000007");
	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "hart", buf, sizeof(buf)), 0); /* first hart, exact key */
	CU_ASSERT_STRING_EQUAL(buf, "1");
	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "hart isa", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb");
	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "march", buf, sizeof(buf)), -1); /* no prefix matches */
	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "uarch", buf, sizeof(buf)), -1);
	CU_ASSERT_EQUAL(cpuinfo_get(vf2, "marchid", buf, 5), 0); /* truncated, terminated */
	CU_ASSERT_STRING_EQUAL(buf, "0x80");
	CU_ASSERT_EQUAL(cpuinfo_get(cpuinfo_fixture("nope"), "isa", buf, sizeof(buf)), -1);
	/* several keys in one pass: the missing one is reported and its buffer untouched */
	CU_ASSERT_EQUAL(attrs_from(vf2, several, 3), 2);
	CU_ASSERT_TRUE(several[0].found && !several[1].found && several[2].found);
	CU_ASSERT_STRING_EQUAL(isa, "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb");
	CU_ASSERT_STRING_EQUAL(uarch, "untouched");
	CU_ASSERT_EQUAL(attrs_from(cpuinfo_fixture("nope"), several, 3), -1);
	CU_ASSERT_EQUAL(attrs_from(vf2, NULL, 1), -1);
	/* the one-key reader of the ARM, MIPS and SPARC layers is the same code */
	CU_ASSERT_EQUAL(pfmlib_getcpuinfo_attr("marchid", buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0x8000000000000007");
	strcpy(buf, "untouched");
	CU_ASSERT_EQUAL(pfmlib_getcpuinfo_attr("uarch", buf, sizeof(buf)), -1);
	CU_ASSERT_STRING_EQUAL(buf, "untouched");
	pfm_cfg.proc_cpuinfo = NULL;
	CU_ASSERT_STRING_EQUAL(pfmlib_cpuinfo_path(), "/proc/cpuinfo");
}

static void test_isa_extensions(void)
{
	CU_ASSERT_TRUE(pfm_riscv_isa_has_ext("rv64imafdc_zicntr_xdhpc", "xdhpc"));
	CU_ASSERT_TRUE(pfm_riscv_isa_has_ext("rv64imafdc_xdhpc_zicntr", "XDHPC"));
	CU_ASSERT_TRUE(pfm_riscv_isa_has_ext("rv64imafdc_sscofpmf", "sscofpmf"));
	CU_ASSERT_FALSE(pfm_riscv_isa_has_ext("rv64imafdc_xdhpcx", "xdhpc"));
	CU_ASSERT_FALSE(pfm_riscv_isa_has_ext("rv64imafdc_zxdhpc", "xdhpc"));
	CU_ASSERT_FALSE(pfm_riscv_isa_has_ext("rv64imafdcxdhpc", "xdhpc")); /* not after an underscore */
	CU_ASSERT_FALSE(pfm_riscv_isa_has_ext("rv64imafdc", "c"));          /* single letters are not asked */
	CU_ASSERT_FALSE(pfm_riscv_isa_has_ext("", "xdhpc"));
}

/* a cpuinfo written from each row of events/models.csv detects as that row's core and bank PMUs */
static void test_known_machines(void)
{
	for (size_t i = 0; i < sizeof(riscv_known_machines) / sizeof(riscv_known_machines[0]); i++) {
		const struct riscv_known_machine *m = riscv_known_machines + i;
		char path[] = "/tmp/pfm_cpuinfo_XXXXXX", want[256], got[512];
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		for (int hart = 0; hart < 2; hart++)
			fprintf(f,
			        "processor\t: %d\nhart\t\t: %d\nisa\t\t: %s\nmmu\t\t: sv39\nuarch\t\t: %s\n"
			        "mvendorid\t: %s\nmarchid\t\t: %s\nmimpid\t\t: %s\n\n",
			        hart, hart, m->isa, m->uarch, m->mvendorid, m->marchid, m->mimpid);
		fclose(f);
		snprintf(want, sizeof(want), "%s%s%s", m->core_pmu, *m->bank_pmu ? " " : "", m->bank_pmu);
		active_pmus(NULL, path, got, sizeof(got));
		if (strcmp(got, want))
			fprintf(stderr, "\n  %s: detected '%s', want '%s'\n", m->model, got, want);
		CU_ASSERT_STRING_EQUAL(got, want);
		unlink(path);
	}
}

/* each machine's board fixture (cpuinfo_fixture of events/models.csv, as Linux prints it) detects as its PMUs
 */
static void test_board_fixtures(void)
{
	for (size_t i = 0; i < sizeof(riscv_known_machines) / sizeof(riscv_known_machines[0]); i++) {
		const struct riscv_known_machine *m = riscv_known_machines + i;
		char want[256];

		snprintf(want, sizeof(want), "%s%s%s", m->core_pmu, *m->bank_pmu ? " " : "", m->bank_pmu);
		expect_detected(m->cpuinfo_fixture, want);
		CU_ASSERT_EQUAL(active_core_pmus(), 1);
	}
}

/* a known vendor with a marchid no model has is riscv_generic, never the vendor's other core */
static void test_unknown_marchid_of_known_vendor(void)
{
	expect_detected("sifive_unknown_marchid.txt", "riscv_generic");
	expect_detected("thead_unknown_marchid.txt", "riscv_generic");
}

/* each core PMU has the pfm_pmu_t id its pfm_id column of events/models.csv gives (PFM_PMU_RISCV_CORE_FIRST +
 * pfm_id; riscv_generic has its own): ids are ABI, so they follow that column, never the rows' order */
static void test_pfm_ids(void)
{
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("x86_64.txt")), PFM_SUCCESS);
	for (size_t i = 0; i < sizeof(riscv_known_machines) / sizeof(riscv_known_machines[0]); i++) {
		const struct riscv_known_machine *m = riscv_known_machines + i;
		pfm_pmu_t id =
		    m->pfm_id < 0 ? PFM_PMU_RISCV_GENERIC : (pfm_pmu_t)(PFM_PMU_RISCV_CORE_FIRST + m->pfm_id);
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		CU_ASSERT_EQUAL_FATAL(pfm_get_pmu_info(id, &info), PFM_SUCCESS);
		if (strcmp(info.name, m->core_pmu))
			fprintf(stderr, "\n  %s: pfm_pmu_t %d is %s, not %s\n", m->model, (int)id, info.name,
			        m->core_pmu);
		CU_ASSERT_STRING_EQUAL(info.name, m->core_pmu);
		CU_ASSERT_EQUAL(info.pmu, id);
	}
}

/* LIBPFM_FORCE_PMU activates exactly the named model, even on a host that is not RISC-V */
static void test_force_each_model(void)
{
	char got[512];

	for (size_t i = 0; i < NPMUS; i++) {
		active_pmus(riscv_pmus[i], cpuinfo_fixture("x86_64.txt"), got, sizeof(got));
		CU_ASSERT_STRING_EQUAL(got, riscv_pmus[i]);
	}
}

static int teardown(void)
{
	pfm_terminate();
	return 0;
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("libpfm4 RISC-V detection", NULL, teardown);
	CU_add_test(s, "U74 boards (Unmatched, VisionFive 2)", test_u74_boards);
	CU_add_test(s, "CVA6", test_cva6);
	CU_add_test(s, "Rocket with xdhpc: generic + HPC bank", test_rocket_with_hpc);
	CU_add_test(s, "BOOM: generic + BOOM bank", test_boom);
	CU_add_test(s, "core without a model: generic", test_core_without_model_is_generic);
	CU_add_test(s, "x86_64 cpuinfo: none", test_x86_64_is_none);
	CU_add_test(s, "missing key takes no other line's value", test_missing_key_takes_no_other_value);
	CU_add_test(s, "cpuinfo reader", test_cpuinfo_reader);
	CU_add_test(s, "isa extensions", test_isa_extensions);
	CU_add_test(s, "machines of events/models.csv", test_known_machines);
	CU_add_test(s, "board cpuinfo fixtures of events/models.csv", test_board_fixtures);
	CU_add_test(s, "unknown marchid of a known vendor", test_unknown_marchid_of_known_vendor);
	CU_add_test(s, "LIBPFM_FORCE_PMU activates each model", test_force_each_model);
	CU_add_test(s, "pfm_pmu_t ids follow models.csv's pfm_id", test_pfm_ids);
	return cunit_run_all();
}
