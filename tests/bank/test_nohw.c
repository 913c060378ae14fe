// SPDX-License-Identifier: MIT
/* Seam 2 without the emulator: on a machine that is not riscv64, every known access reports RVHW_ENOHW
 * and bad arguments RVHW_EINVAL / RVHW_EPERM, exactly as under the emulator. */
#include <CUnit/Basic.h>

#include "bank_test.h"
#include "cunit_run.h"

static void test_backend(void)
{
#if defined(__riscv) && __riscv_xlen == 64
	CU_ASSERT_STRING_EQUAL(rvhw_backend(), "riscv64");
#else
	CU_ASSERT_STRING_EQUAL(rvhw_backend(), "none");
#endif
}

#if !(defined(__riscv) && __riscv_xlen == 64)
static void test_no_hardware(void)
{
	const unsigned csrs[] = {RVHW_CSR_HPCC, RVHW_CSR_HPCM, RVHW_CSR_HPCR, 0xC00, 0xC01, 0xC02};
	uint64_t v = 77;

	for (size_t i = 0; i < sizeof(csrs) / sizeof(csrs[0]); i++)
		CU_ASSERT_EQUAL(rvhw_csr_read(csrs[i], &v), RVHW_ENOHW);
	CU_ASSERT_EQUAL(v, 77); /* untouched */
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, RVHW_HPCC_TRIGGER), RVHW_ENOHW);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 1), RVHW_ENOHW);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_ENOHW);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 63, 0, &v), RVHW_ENOHW);
}
#endif

static void test_bad_arguments(void)
{
	uint64_t v;

	CU_ASSERT_EQUAL(rvhw_csr_read(0x123, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, NULL), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCR, 0), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_write(0xC01, 0), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_write(0xB00, 0), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(5, 0, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_READ_BASE + 64, 0, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_GET_MAXPRIV, 0, NULL), RVHW_EINVAL);
}

int main(void)
{
	CU_pSuite suite;

	if (dlsym(RTLD_DEFAULT, "rvemu_api_version") != NULL) {
		fprintf(stderr, "test_nohw: must run without librvemu.so preloaded\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("seam 2 without the emulator", NULL, NULL);
	CU_add_test(suite, "backend", test_backend);
#if !(defined(__riscv) && __riscv_xlen == 64)
	CU_add_test(suite, "no hardware: RVHW_ENOHW", test_no_hardware);
#endif
	CU_add_test(suite, "bad arguments", test_bad_arguments);
	return cunit_run_all();
}
