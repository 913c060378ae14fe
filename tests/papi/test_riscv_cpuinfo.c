// SPDX-License-Identifier: MIT
/* Unit tests of the PAPI overlay's RISC-V /proc/cpuinfo identification
 * (papi-component/overlay/riscv_cpuinfo.c). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "riscv_cpuinfo.h"
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
	return cunit_run_all();
}
