// SPDX-License-Identifier: MIT
/*
 * perf_event encodings of the RISC-V models: programmable events -> PERF_TYPE_RAW with config = mhpmevent
 * (bits 47:0), mcycle/minstret -> PERF_TYPE_HARDWARE; privilege modifiers u/k only when the isa string has
 * Sscofpmf (then they map to exclude_user/exclude_kernel), never an exclude_* bit without it; the counter
 * banks are not perf PMUs.
 */
#include <CUnit/Basic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmlib_priv.h"
#include "pfmlib_riscv_priv.h"
#include <perfmon/pfmlib_perf_event.h>

#include "pfm_test_util.h"
#include "cunit_run.h"

static struct csv_table u74, cva6, generic;

static int perf_encode(const char *event, int plm, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = attr;
	return pfm_get_os_event_encoding(event, plm, PFM_OS_PERF_EVENT_EXT, &arg);
}

static int any_exclude(const struct perf_event_attr *a)
{
	return a->exclude_user || a->exclude_kernel || a->exclude_hv || a->exclude_idle || a->exclude_host ||
	       a->exclude_guest;
}

static void expect_raw(const char *pmu, const char *name, uint64_t config)
{
	struct perf_event_attr a;
	char buf[512];
	int ret;

	snprintf(buf, sizeof(buf), "%s::%s", pmu, name);
	ret = perf_encode(buf, PFM_PLM0 | PFM_PLM3, &a);
	if (ret != PFM_SUCCESS || a.type != PERF_TYPE_RAW || a.config != config)
		fprintf(stderr, "\n  %s: ret %d type %u config %#" PRIx64 ", want RAW %#" PRIx64 "\n", buf,
		        ret, a.type, (uint64_t)a.config, config);
	CU_ASSERT_EQUAL(ret, PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_RAW);
	CU_ASSERT_EQUAL(a.config, config);
	CU_ASSERT_FALSE(any_exclude(&a)); /* no Sscofpmf in the fixtures used with this */
}

static uint64_t perf_hw_id(const char *name)
{
	if (!strcmp(name, "PERF_COUNT_HW_CPU_CYCLES"))
		return PERF_COUNT_HW_CPU_CYCLES;
	if (!strcmp(name, "PERF_COUNT_HW_INSTRUCTIONS"))
		return PERF_COUNT_HW_INSTRUCTIONS;
	CU_FAIL("unknown perf_hw_event in events/riscv_generic.csv");
	return UINT64_MAX;
}

static void expect_fixed(const char *pmu)
{
	struct perf_event_attr a;
	char buf[512];

	for (int r = 0; r < generic.nrows; r++) {
		const char *names[] = {csv_get(&generic, r, "name"), csv_get(&generic, r, "alias")};

		for (int n = 0; n < 2; n++) {
			snprintf(buf, sizeof(buf), "%s::%s", pmu, names[n]);
			CU_ASSERT_EQUAL(perf_encode(buf, PFM_PLM0 | PFM_PLM3, &a), PFM_SUCCESS);
			CU_ASSERT_EQUAL(a.type, PERF_TYPE_HARDWARE);
			CU_ASSERT_EQUAL(a.config, perf_hw_id(csv_get(&generic, r, "perf_hw_event")));
		}
	}
}

static int event_has_attr(const char *event, const char *attr_name)
{
	pfm_event_info_t info;
	pfm_event_attr_info_t ainfo;
	int idx = pfm_find_event(event), i, found = 0;

	CU_ASSERT_FATAL(idx >= 0);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	CU_ASSERT_EQUAL_FATAL(pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info), PFM_SUCCESS);
	for (i = 0; i < info.nattrs; i++) {
		memset(&ainfo, 0, sizeof(ainfo));
		ainfo.size = sizeof(ainfo);
		if (pfm_get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ainfo) == PFM_SUCCESS &&
		    !strcmp(ainfo.name, attr_name))
			found = 1;
	}
	return found;
}

static void test_u74_without_sscofpmf(void)
{
	struct perf_event_attr a;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("visionfive2.txt")), PFM_SUCCESS);
	for (int r = 0; r < u74.nrows; r++) {
		char buf[256];

		expect_raw("riscv_sifive_u74", csv_get(&u74, r, "name"), csv_u64(&u74, r, "mhpmevent_value"));
		snprintf(buf, sizeof(buf), "%s:%s", csv_get(&u74, r, "class_name"), csv_get(&u74, r, "name"));
		expect_raw("riscv_sifive_u74", buf, csv_u64(&u74, r, "mhpmevent_value"));
	}
	expect_raw("riscv_sifive_u74", "INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED", 0x80200);
	expect_fixed("riscv_sifive_u74");
	/* no privilege filtering: no u/k modifiers, and a user-only default does not set exclude_kernel */
	CU_ASSERT_FALSE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "u"));
	CU_ASSERT_FALSE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "k"));
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:u", PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:k=1", PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:period=1000", PFM_PLM3, &a),
	                PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_FALSE(any_exclude(&a));
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::CYCLES", PFM_PLM0, &a), PFM_SUCCESS);
	CU_ASSERT_FALSE(any_exclude(&a));
}

static void test_u74_with_sscofpmf(void)
{
	struct perf_event_attr a;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("u74_sscofpmf.txt")), PFM_SUCCESS);
	CU_ASSERT_TRUE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "u"));
	CU_ASSERT_TRUE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "k"));
	CU_ASSERT_FALSE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "h"));
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:u", PFM_PLM0 | PFM_PLM3, &a),
	                PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_RAW);
	CU_ASSERT_EQUAL(a.config, 0x1002);
	CU_ASSERT_FALSE(a.exclude_user);
	CU_ASSERT_TRUE(a.exclude_kernel);
	CU_ASSERT_FALSE(a.exclude_hv);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::CYCLES:k", PFM_PLM0 | PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_HARDWARE);
	CU_ASSERT_TRUE(a.exclude_user);
	CU_ASSERT_FALSE(a.exclude_kernel);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_FALSE(a.exclude_user);
	CU_ASSERT_TRUE(a.exclude_kernel);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS", PFM_PLM0 | PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_FALSE(a.exclude_user);
	CU_ASSERT_FALSE(a.exclude_kernel);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:period=1000", PFM_PLM3, &a),
	                PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.sample_period, 1000);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:precise=1", PFM_PLM3, &a), PFM_ERR_ATTR);
}

static void test_cva6(void)
{
	struct perf_event_attr a;

	/* a kernel that publishes caps/max_precise (as the emulator does for a core with PES) */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("cva6.txt"), 3), PFM_SUCCESS);
	for (int r = 0; r < cva6.nrows; r++) {
		expect_raw("riscv_openhwgroup_cva6", csv_get(&cva6, r, "name"),
		           csv_u64(&cva6, r, "mhpmevent_value"));
		expect_raw("riscv_openhwgroup_cva6", csv_get(&cva6, r, "alias"),
		           csv_u64(&cva6, r, "mhpmevent_value"));
	}
	expect_fixed("riscv_openhwgroup_cva6");
	CU_ASSERT_FALSE(event_has_attr("riscv_openhwgroup_cva6::L1_ICACHE_MISS", "u"));
	CU_ASSERT_EQUAL(perf_encode("riscv_openhwgroup_cva6::L1_ICACHE_MISS:u", PFM_PLM3, &a), PFM_ERR_ATTR);
	/* PES: precise sampling through the (emulated) kernel */
	CU_ASSERT_EQUAL(
	    perf_encode("riscv_openhwgroup_cva6::L1_ICACHE_MISS:precise=1:period=5000", PFM_PLM3, &a),
	    PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.precise_ip, 1);
	CU_ASSERT_EQUAL(a.sample_period, 5000);
	CU_ASSERT_FALSE(any_exclude(&a));
}

static int event_is_precise(const char *event)
{
	pfm_event_info_t info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	int idx = pfm_find_event(event);
	if (idx < 0 || pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
		return -1;
	return info.is_precise;
}

/* precise= (PERF_ATTR_PR) on a RISC-V machine follows the kernel's caps/max_precise, and is not offered
 * without it (a CVA6 board whose kernel does not drive PES); only a model forced on another host takes the
 * model's word */
static void test_precise_caps(void)
{
	struct perf_event_attr a;
	const char *u74_ev = "riscv_sifive_u74::DATA_TLB_MISS:precise=2:period=1000";
	const char *cva6_ev = "riscv_openhwgroup_cva6::L1_ICACHE_MISS:precise=2:period=1000";

	/* U74 with PES (RVEMU_PES=1 on the emulator, or a board whose kernel publishes it) */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("unmatched.txt"), 3), PFM_SUCCESS);
	CU_ASSERT_TRUE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "precise"));
	CU_ASSERT_EQUAL(perf_encode(u74_ev, PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.precise_ip, 2);
	CU_ASSERT_EQUAL(a.sample_period, 1000);
	CU_ASSERT_EQUAL(event_is_precise("riscv_sifive_u74::DATA_TLB_MISS"), 1);
	CU_ASSERT_EQUAL(perf_encode("riscv_sifive_u74::DATA_TLB_MISS:precise=4", PFM_PLM3, &a),
	                PFM_ERR_ATTR_VAL);
	/* U74 without PES: no caps file (the RISC-V driver's case), or 0 */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("unmatched.txt"), -1), PFM_SUCCESS);
	CU_ASSERT_FALSE(event_has_attr("riscv_sifive_u74::DATA_TLB_MISS", "precise"));
	CU_ASSERT_EQUAL(perf_encode(u74_ev, PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(event_is_precise("riscv_sifive_u74::DATA_TLB_MISS"), 0);
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("unmatched.txt"), 0), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode(u74_ev, PFM_PLM3, &a), PFM_ERR_ATTR);
	/* CVA6 on a RISC-V machine: the kernel's word only; without the file (a board whose kernel has no PES
	 * driver: Linux's RISC-V driver would take precise_ip and ignore it) no precise=, nor a precise event
	 */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("cva6.txt"), -1), PFM_SUCCESS);
	CU_ASSERT_FALSE(event_has_attr("riscv_openhwgroup_cva6::L1_ICACHE_MISS", "precise"));
	CU_ASSERT_EQUAL(perf_encode(cva6_ev, PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(event_is_precise("riscv_openhwgroup_cva6::L1_ICACHE_MISS"), 0);
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("cva6.txt"), 3), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode(cva6_ev, PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.precise_ip, 2);
	CU_ASSERT_EQUAL(event_is_precise("riscv_openhwgroup_cva6::L1_ICACHE_MISS"), 1);
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps(NULL, cpuinfo_fixture("cva6.txt"), 0), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode(cva6_ev, PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(event_is_precise("riscv_openhwgroup_cva6::L1_ICACHE_MISS"), 0);
	/* CVA6 forced on a host that is not RISC-V (encoding for another machine): the model has PES */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps("riscv_openhwgroup_cva6", cpuinfo_fixture("x86_64.txt"), -1),
	                      PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode(cva6_ev, PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.precise_ip, 2);
	/* forced on a host that is not RISC-V: its caps/max_precise describes the host's PMU, not this one */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit_caps("riscv_sifive_u74", cpuinfo_fixture("x86_64.txt"), 3),
	                      PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode(u74_ev, PFM_PLM3, &a), PFM_ERR_ATTR);
}

static void test_generic(void)
{
	struct perf_event_attr a;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("thead_unknown_marchid.txt")), PFM_SUCCESS);
	expect_fixed("riscv_generic");
	CU_ASSERT_EQUAL(perf_encode("riscv_generic::CYCLES", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_FALSE(any_exclude(&a));
	/* forced on a host whose cpuinfo says nothing about RISC-V: no Sscofpmf assumed */
	CU_ASSERT_EQUAL_FATAL(pfm_reinit("riscv_generic", cpuinfo_fixture("x86_64.txt")), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode("riscv_generic::INSTRUCTIONS:u", PFM_PLM3, &a), PFM_ERR_ATTR);
	CU_ASSERT_EQUAL(perf_encode("riscv_generic::INSTRUCTIONS", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.config, PERF_COUNT_HW_INSTRUCTIONS);
	CU_ASSERT_FALSE(any_exclude(&a));
}

/* T-Head C9xx: no Sscofpmf in the isa, but the core's own overflow interrupt (CONFIG_ERRATA_THEAD_PMU) gives
 * Linux sampling and u/k filtering, so libpfm4 offers them; the generic core on the same vendor does not */
static void test_thead_overflow_interrupt(void)
{
	struct perf_event_attr a;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("thead_c910.txt")), PFM_SUCCESS);
	CU_ASSERT_TRUE(pmu_active("riscv_thead_c900_legacy"));
	CU_ASSERT_EQUAL(perf_encode("riscv_thead_c900_legacy::INST_STORE:u", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_RAW);
	CU_ASSERT_EQUAL(a.config, 0xb);
	CU_ASSERT_TRUE(a.exclude_kernel);
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("thead_unknown_marchid.txt")), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode("riscv_generic::INSTRUCTIONS:u", PFM_PLM3, &a), PFM_ERR_ATTR);
}

/* Andes AX45: its overflow interrupt is Andes' PMU extension, which Linux uses when the isa names xandespmu
 * (CONFIG_ANDES_CUSTOM_PMU): then sampling and u/k exist without Sscofpmf; without xandespmu they do not */
static void test_andes_overflow_interrupt(void)
{
	struct perf_event_attr a;
	char path[] = "/tmp/pfm_ax45_XXXXXX";
	int fd;
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("rzfive_ax45mp.txt")), PFM_SUCCESS);
	CU_ASSERT_TRUE(pmu_active("riscv_andes_ax45"));
	CU_ASSERT_EQUAL(perf_encode("riscv_andes_ax45::icache_miss:u", PFM_PLM3, &a), PFM_SUCCESS);
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_RAW);
	CU_ASSERT_EQUAL(a.config, 0x31);
	CU_ASSERT_TRUE(a.exclude_kernel);
	/* the same core with a device tree that does not name xandespmu: no overflow interrupt */
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm\nmmu\t\t: sv39\n"
	      "uarch\t\t: andestech,ax45mp\nmvendorid\t: 0x31e\nmarchid\t\t: 0x8000000000008a45\nmimpid\t\t: "
	      "0x500\n\n",
	      f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, path), PFM_SUCCESS);
	CU_ASSERT_TRUE(pmu_active("riscv_andes_ax45"));
	CU_ASSERT_EQUAL(perf_encode("riscv_andes_ax45::icache_miss:u", PFM_PLM3, &a), PFM_ERR_ATTR);
	unlink(path);
}

static void test_banks_are_not_perf_pmus(void)
{
	struct perf_event_attr a;
	uint64_t code;

	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("rocket_xdhpc.txt")), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode("riscv_lowrisc_hpc::L1D_READ:hart=1", PFM_PLM3, &a), PFM_ERR_NOTSUPP);
	CU_ASSERT_EQUAL(encode("riscv_lowrisc_hpc::L1D_READ:hart=1", &code), PFM_SUCCESS);
	CU_ASSERT_FALSE(event_has_attr("riscv_lowrisc_hpc::L1D_READ", "u"));
	CU_ASSERT_TRUE(event_has_attr("riscv_lowrisc_hpc::L1D_READ", "hart"));
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_fixture("boom.txt")), PFM_SUCCESS);
	CU_ASSERT_EQUAL(perf_encode("riscv_ucb_boom::cycles", PFM_PLM3, &a), PFM_ERR_NOTSUPP);
	CU_ASSERT_EQUAL(encode("riscv_ucb_boom::cycles", &code), PFM_SUCCESS);
}

static void test_raw_config_fits_47_0(void)
{
	uint64_t config = 0;

	CU_ASSERT_EQUAL(pfm_riscv_perf_raw_config((UINT64_C(1) << 48) - 1, &config), PFM_SUCCESS);
	CU_ASSERT_EQUAL(config, (UINT64_C(1) << 48) - 1);
	CU_ASSERT_EQUAL(pfm_riscv_perf_raw_config(UINT64_C(1) << 48, &config), PFM_ERR_NOTSUPP);
	CU_ASSERT_EQUAL(pfm_riscv_perf_raw_config(UINT64_C(1) << 63 | 0xc00, &config), PFM_ERR_NOTSUPP);
}

static int setup(void)
{
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	return csv_load("sifive_u74.csv", &u74) || csv_load("openhwgroup_cva6.csv", &cva6) ||
	       csv_load("riscv_generic.csv", &generic);
}

static int teardown(void)
{
	pfm_terminate();
	csv_free(&u74);
	csv_free(&cva6);
	csv_free(&generic);
	return 0;
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("libpfm4 RISC-V perf_event encodings", setup, teardown);
	CU_add_test(s, "U74 without Sscofpmf: RAW/HARDWARE, no u/k, no exclude_*", test_u74_without_sscofpmf);
	CU_add_test(s, "U74 with Sscofpmf: u/k -> exclude_*", test_u74_with_sscofpmf);
	CU_add_test(s, "CVA6: RAW, aliases, PES precise", test_cva6);
	CU_add_test(s, "precise= follows caps/max_precise, else the model", test_precise_caps);
	CU_add_test(s, "generic core", test_generic);
	CU_add_test(s, "T-Head C9xx overflow interrupt gives u/k", test_thead_overflow_interrupt);
	CU_add_test(s, "Andes AX45 overflow interrupt (xandespmu) gives u/k", test_andes_overflow_interrupt);
	CU_add_test(s, "counter banks are not perf PMUs", test_banks_are_not_perf_pmus);
	CU_add_test(s, "raw config must fit bits 47:0", test_raw_config_fits_47_0);
	return cunit_run_all();
}
