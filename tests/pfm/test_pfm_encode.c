// SPDX-License-Identifier: MIT
/*
 * Every event of every RISC-V model encodes to the value its table in events/ gives (PFM_OS_NONE), aliases
 * encode like their canonical names, and bad event strings are rejected with libpfm4's error codes:
 *   unknown event / PMU                      -> PFM_ERR_NOTFOUND
 *   unknown unit mask, a mask of another U74 class, a mask on a flat event, wrong modifier, a value on a
 *   unit mask -> PFM_ERR_ATTR
 *   U74 class without a unit mask            -> PFM_ERR_UMASK (no default: a class alone counts nothing)
 *   modifier value out of range or missing -> PFM_ERR_ATTR_VAL
 */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "pfm_test_util.h"
#include "cunit_run.h"

static struct csv_table u74, cva6, generic, hpc, boom;

#define FIXED_CODE(csr) ((UINT64_C(1) << 63) | (csr))

static void expect_code(const char *event, uint64_t want)
{
	uint64_t got = 0;
	int ret = encode(event, &got);

	if (ret != PFM_SUCCESS || got != want)
		fprintf(stderr, "\n  %s: ret %d (%s) code %#" PRIx64 ", want %#" PRIx64 "\n", event, ret,
		        pfm_strerror(ret), got, want);
	CU_ASSERT_EQUAL(ret, PFM_SUCCESS);
	CU_ASSERT_EQUAL(got, want);
}

static void expect_error(const char *event, int want)
{
	uint64_t got = 0;
	int ret = encode(event, &got);

	if (ret != want)
		fprintf(stderr, "\n  %s: ret %d (%s), want %d (%s)\n", event, ret, pfm_strerror(ret), want,
		        pfm_strerror(want));
	CU_ASSERT_EQUAL(ret, want);
}

static void expect_named(const char *pmu, const char *event, uint64_t want)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s::%s", pmu, event);
	expect_code(buf, want);
}

static void test_u74_flat_events(void)
{
	for (int r = 0; r < u74.nrows; r++) {
		expect_named("riscv_sifive_u74", csv_get(&u74, r, "name"),
		             csv_u64(&u74, r, "mhpmevent_value"));
		if (*csv_get(&u74, r, "alias"))
			expect_named("riscv_sifive_u74", csv_get(&u74, r, "alias"),
			             csv_u64(&u74, r, "mhpmevent_value"));
	}
}

static void test_u74_class_unit_masks(void)
{
	char buf[512];

	for (int r = 0; r < u74.nrows; r++) {
		snprintf(buf, sizeof(buf), "%s:%s", csv_get(&u74, r, "class_name"), csv_get(&u74, r, "name"));
		expect_named("riscv_sifive_u74", buf, csv_u64(&u74, r, "mhpmevent_value"));
	}
}

/* all bits of a class together: class | OR of the masks */
static void test_u74_class_all_masks_combine(void)
{
	for (int r = 0; r < u74.nrows; r++) {
		const char *cls = csv_get(&u74, r, "class_name");
		char buf[4096];
		uint64_t want = 0;
		int first = 1;

		if (r > 0 && !strcmp(cls, csv_get(&u74, r - 1, "class_name")))
			continue; /* one string per class, built at its first row */
		snprintf(buf, sizeof(buf), "riscv_sifive_u74::%s", cls);
		for (int s = r; s < u74.nrows && !strcmp(cls, csv_get(&u74, s, "class_name")); s++) {
			strcat(buf, ":");
			strcat(buf, csv_get(&u74, s, "name"));
			want |= csv_u64(&u74, s, "mhpmevent_value");
			first = 0;
		}
		CU_ASSERT_FALSE(first);
		expect_code(buf, want);
	}
}

static void test_u74_contract_example(void)
{
	char *fstr = NULL;
	uint64_t *codes = NULL;
	int count = 0;

	expect_code("riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED", 0x80200);
	/* order of the masks does not matter; fstr lists them in table order */
	CU_ASSERT_EQUAL(pfm_get_event_encoding(
	                    "riscv_sifive_u74::INSTRUCTION_COMMIT:FP_LOAD_RETIRED:INTEGER_LOAD_RETIRED",
	                    PFM_PLM3, &fstr, NULL, &codes, &count),
	                PFM_SUCCESS);
	CU_ASSERT_EQUAL(count, 1);
	if (count == 1)
		CU_ASSERT_EQUAL(codes[0], 0x80200);
	CU_ASSERT_STRING_EQUAL(fstr ? fstr : "",
	                       "riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED");
	free(fstr);
	free(codes);
}

/* every mask of one class with the class of every other mask: never encodes */
static void test_u74_classes_never_mix(void)
{
	char buf[512];
	int pairs = 0;

	for (int a = 0; a < u74.nrows; a++) {
		for (int b = 0; b < u74.nrows; b++) {
			if (!strcmp(csv_get(&u74, a, "class_name"), csv_get(&u74, b, "class_name")))
				continue;
			snprintf(buf, sizeof(buf), "riscv_sifive_u74::%s:%s:%s",
			         csv_get(&u74, a, "class_name"), csv_get(&u74, a, "name"),
			         csv_get(&u74, b, "name"));
			expect_error(buf, PFM_ERR_ATTR);
			pairs++;
		}
	}
	CU_ASSERT(pairs > 0);
}

static void test_u74_rejects(void)
{
	expect_error("riscv_sifive_u74::INSTRUCTION_COMMIT", PFM_ERR_UMASK);
	expect_error("riscv_sifive_u74::MEMORY_SYSTEM", PFM_ERR_UMASK);
	expect_error("riscv_sifive_u74::INSTRUCTION_COMMIT:NO_SUCH_MASK", PFM_ERR_ATTR);
	expect_error("riscv_sifive_u74::INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED", PFM_ERR_ATTR);
	/* libpfm4's parser looks for a modifier of that name when a unit mask gets a value: none exists */
	expect_error("riscv_sifive_u74::INSTRUCTION_COMMIT:FP_LOAD_RETIRED=1", PFM_ERR_ATTR);
	expect_error("riscv_sifive_u74::NO_SUCH_EVENT", PFM_ERR_NOTFOUND);
	expect_error("riscv_no_such_pmu::CYCLES", PFM_ERR_NOTFOUND);
	expect_error("riscv_sifive_u74::CYCLES:hart=1", PFM_ERR_ATTR);
}

static void test_cva6_events_and_aliases(void)
{
	for (int r = 0; r < cva6.nrows; r++) {
		uint64_t v = csv_u64(&cva6, r, "mhpmevent_value");

		expect_named("riscv_openhwgroup_cva6", csv_get(&cva6, r, "name"), v);
		expect_named("riscv_openhwgroup_cva6", csv_get(&cva6, r, "alias"), v);
	}
	expect_error("riscv_openhwgroup_cva6::L1_ICM:u", PFM_ERR_ATTR); /* no PMU-level privilege bits */
	expect_error("riscv_openhwgroup_cva6::INTEGER_LOAD_RETIRED", PFM_ERR_NOTFOUND);
}

static void test_fixed_counters_of_every_core_model(void)
{
	static const char *const cores[] = {"riscv_generic", "riscv_sifive_u74", "riscv_openhwgroup_cva6"};

	for (size_t c = 0; c < sizeof(cores) / sizeof(cores[0]); c++) {
		for (int r = 0; r < generic.nrows; r++) {
			uint64_t want = FIXED_CODE(csv_u64(&generic, r, "csr"));

			expect_named(cores[c], csv_get(&generic, r, "name"), want);
			expect_named(cores[c], csv_get(&generic, r, "alias"), want);
		}
	}
}

static uint64_t hpc_code(uint64_t module, uint64_t bit)
{
	return ((module << 4) << 6) |
	       bit; /* ManagerID = module << 4 | extend(0); code = ManagerID << 6 | bit */
}

static void test_hpc_events_and_managers(void)
{
	static const unsigned ids[] = {0, 1, 2, 7, 255};
	char buf[512];

	for (int r = 0; r < hpc.nrows; r++) {
		const char *name = csv_get(&hpc, r, "name");
		int core = !strcmp(csv_get(&hpc, r, "manager_kind"), "core");
		uint64_t bit = csv_u64(&hpc, r, "hpcm_bit");

		expect_named("riscv_lowrisc_hpc", name, hpc_code(core ? 0 : 0x100, bit));
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			snprintf(buf, sizeof(buf), "riscv_lowrisc_hpc::%s:%s=%u", name,
			         core ? "hart" : "slice", ids[i]);
			expect_code(buf, hpc_code(core ? ids[i] : 0x100 + ids[i], bit));
		}
		snprintf(buf, sizeof(buf), "riscv_lowrisc_hpc::%s:%s=256", name, core ? "hart" : "slice");
		expect_error(buf, PFM_ERR_ATTR_VAL);
		snprintf(buf, sizeof(buf), "riscv_lowrisc_hpc::%s:%s=1", name, core ? "slice" : "hart");
		expect_error(buf, PFM_ERR_ATTR);
		snprintf(buf, sizeof(buf), "riscv_lowrisc_hpc::%s:%s", name, core ? "hart" : "slice");
		expect_error(buf, PFM_ERR_ATTR_VAL); /* integer modifier needs a value */
	}
	expect_code("riscv_lowrisc_hpc::L2_READ:slice=1", 0x40400);
	expect_code("riscv_lowrisc_hpc::L1D_READ:hart=2", 0x802);
}

static void test_boom_counter_index(void)
{
	for (int r = 0; r < boom.nrows; r++)
		expect_named("riscv_ucb_boom", csv_get(&boom, r, "name"), csv_u64(&boom, r, "index"));
	expect_error("riscv_ucb_boom::no_such_counter", PFM_ERR_NOTFOUND);
}

static int count_aliases(const struct csv_table *t)
{
	int n = 0;

	for (int r = 0; r < t->nrows; r++)
		if (*csv_get(t, r, "alias") && strcmp(csv_get(t, r, "alias"), csv_get(t, r, "name")))
			n++;
	return n;
}

static int pmu_nevents(const char *name)
{
	pfm_pmu_info_t info;
	int i;

	pfm_for_all_pmus(i)
	{
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(i, &info) == PFM_SUCCESS && info.name && !strcmp(info.name, name))
			return info.nevents;
	}
	return -1;
}

/* each model lists exactly its table rows (+ aliases, + classes for U74, + fixed counters for cores) */
static void test_event_counts(void)
{
	int fixed = generic.nrows + count_aliases(&generic);
	int classes = 0;

	for (int r = 0; r < u74.nrows; r++)
		classes +=
		    r == 0 || strcmp(csv_get(&u74, r, "class_name"), csv_get(&u74, r - 1, "class_name"));
	CU_ASSERT_EQUAL(pmu_nevents("riscv_generic"), fixed);
	CU_ASSERT_EQUAL(pmu_nevents("riscv_sifive_u74"), u74.nrows + count_aliases(&u74) + classes + fixed);
	CU_ASSERT_EQUAL(pmu_nevents("riscv_openhwgroup_cva6"), cva6.nrows + count_aliases(&cva6) + fixed);
	CU_ASSERT_EQUAL(pmu_nevents("riscv_lowrisc_hpc"), hpc.nrows);
	CU_ASSERT_EQUAL(pmu_nevents("riscv_ucb_boom"), boom.nrows);
	printf("\n  events: riscv_sifive_u74 %d, riscv_openhwgroup_cva6 %d, riscv_generic %d, "
	       "riscv_lowrisc_hpc %d, "
	       "riscv_ucb_boom %d ",
	       pmu_nevents("riscv_sifive_u74"), pmu_nevents("riscv_openhwgroup_cva6"),
	       pmu_nevents("riscv_generic"), pmu_nevents("riscv_lowrisc_hpc"), pmu_nevents("riscv_ucb_boom"));
}

/* every core model of events/models.csv: each event and alias of its table encodes to its mhpmevent value, a
 * class_mask table's classes take their bits as unit masks, and the PMU lists exactly those events */
static void test_every_core_table(void)
{
	static struct csv_table models, table;
	int ncores = 0;

	CU_ASSERT_EQUAL_FATAL(csv_load("models.csv", &models), 0);
	for (int m = 0; m < models.nrows; m++) {
		const char *pmu = csv_get(&models, m, "core_pmu"), *file = csv_get(&models, m, "event_table");
		int class_mask = !strcmp(csv_get(&models, m, "event_encoding"), "class_mask"), classes = 0;

		if (!*file)
			continue;
		CU_ASSERT_EQUAL_FATAL(csv_load(file, &table), 0);
		ncores++;
		for (int r = 0; r < table.nrows; r++) {
			uint64_t v = csv_u64(&table, r, "mhpmevent_value");
			const char *alias = csv_get(&table, r, "alias");

			expect_named(pmu, csv_get(&table, r, "name"), v);
			if (*alias)
				expect_named(pmu, alias, v);
			if (class_mask) {
				const char *cls = csv_get(&table, r, "class_name");
				char buf[512];
				snprintf(buf, sizeof(buf), "%s::%s:%s", pmu, cls, csv_get(&table, r, "name"));
				expect_code(buf, v);
				classes += r == 0 || strcmp(cls, csv_get(&table, r - 1, "class_name"));
			}
		}
		for (int r = 0; r < generic.nrows; r++)
			expect_named(pmu, csv_get(&generic, r, "name"),
			             FIXED_CODE(csv_u64(&generic, r, "csr")));
		CU_ASSERT_EQUAL(pmu_nevents(pmu), table.nrows + count_aliases(&table) + classes +
		                                      generic.nrows + count_aliases(&generic));
		printf("\n  %s: %d events (%s)", pmu, pmu_nevents(pmu), file);
		csv_free(&table);
	}
	CU_ASSERT(ncores >= 2);
	csv_free(&models);
}

/* The facts of Linux perf's pmu-events JSON (events/linux-pmu-events/<pmu>.csv, each citing its source files
 * and commit): every event Linux names for a core encodes, under that name, to Linux's EventCode -- the value
 * riscv_pmu_sbi hands the SBI firmware. Every file names a core PMU of ours. */
static void test_linux_pmu_events(void)
{
	char dir[4096];
	struct dirent *d;
	int files = 0, events = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/linux-pmu-events", EVENTS_DIR);
	dp = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	while ((d = readdir(dp)) != NULL) {
		static struct csv_table facts;
		char name[512], pmu[256];
		size_t n = strlen(d->d_name);

		if (n < 5 || strcmp(d->d_name + n - 4, ".csv"))
			continue;
		snprintf(pmu, sizeof(pmu), "%.*s", (int)(n - 4), d->d_name);
		snprintf(name, sizeof(name), "linux-pmu-events/%s", d->d_name);
		if (pmu_nevents(pmu) <= 0)
			fprintf(stderr, "\n  %s: no core PMU %s\n", name, pmu);
		CU_ASSERT(pmu_nevents(pmu) > 0);
		CU_ASSERT_EQUAL_FATAL(csv_load(name, &facts), 0);
		for (int r = 0; r < facts.nrows; r++, events++)
			expect_named(pmu, csv_get(&facts, r, "name"), csv_u64(&facts, r, "code"));
		files++;
		csv_free(&facts);
	}
	closedir(dp);
	printf("\n  %d Linux pmu-events files, %d events ", files, events);
	CU_ASSERT(files > 0);
}

static int setup(void)
{
	/* encode the events of every compiled-in PMU, detected on this host or not */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	if (csv_load("sifive_u74.csv", &u74) || csv_load("openhwgroup_cva6.csv", &cva6) ||
	    csv_load("riscv_generic.csv", &generic) || csv_load("lowrisc_hpc.csv", &hpc) ||
	    csv_load("ucb_boom.csv", &boom))
		return -1;
	return pfm_reinit(NULL, NULL) == PFM_SUCCESS ? 0 : -1;
}

static int teardown(void)
{
	pfm_terminate();
	csv_free(&u74);
	csv_free(&cva6);
	csv_free(&generic);
	csv_free(&hpc);
	csv_free(&boom);
	return 0;
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("libpfm4 RISC-V encodings", setup, teardown);
	CU_add_test(s, "U74 flat per-bit events", test_u74_flat_events);
	CU_add_test(s, "U74 class events with one unit mask", test_u74_class_unit_masks);
	CU_add_test(s, "U74 all masks of a class combine", test_u74_class_all_masks_combine);
	CU_add_test(s, "U74 contract example 0x80200", test_u74_contract_example);
	CU_add_test(s, "U74 classes never mix", test_u74_classes_never_mix);
	CU_add_test(s, "U74 bad strings rejected", test_u74_rejects);
	CU_add_test(s, "CVA6 events and fork aliases", test_cva6_events_and_aliases);
	CU_add_test(s, "fixed counters in every core model", test_fixed_counters_of_every_core_model);
	CU_add_test(s, "distributed HPC events, hart/slice modifiers", test_hpc_events_and_managers);
	CU_add_test(s, "BOOM counter index", test_boom_counter_index);
	CU_add_test(s, "event counts per model", test_event_counts);
	CU_add_test(s, "every core table of events/models.csv", test_every_core_table);
	CU_add_test(s, "Linux pmu-events encodings (events/linux-pmu-events)", test_linux_pmu_events);
	return cunit_run_all();
}
