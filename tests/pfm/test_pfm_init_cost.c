// SPDX-License-Identifier: MIT
/*
 * What pfm_initialize() reads on a RISC-V machine (issue 10, section 5):
 *  - /proc/cpuinfo once for all RISC-V PMUs, not once per model;
 *  - no debugfs tracepoint scan by default (patch 0009), but the scan still happens, and lists the
 *    tracepoints, with LIBPFM_PERF_TRACEPOINTS=1.
 * Deterministic on any host: this program defines fopen(), opendir() and access() itself, so the static
 * libpfm.a it links calls these. They count what libpfm4 opens, show it a /proc/mounts with a debugfs in a
 * scratch folder holding two fake tracepoints, and say the perf_event sysctl exists, then pass on to libc.
 */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "pfm_test_util.h"
#include "cunit_run.h"

static char fake_root[] = "/tmp/pfm_debugfs_XXXXXX"; /* the fake debugfs */
static char fake_mounts[4096];                       /* a /proc/mounts naming it */
static const char *cpuinfo_path;
static int cpuinfo_opens, tracing_opendirs;

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (!real)
		real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	if (cpuinfo_path && !strcmp(path, cpuinfo_path))
		cpuinfo_opens++;
	if (fake_mounts[0] && !strcmp(path, "/proc/mounts"))
		path = fake_mounts;
	return real(path, mode);
}

DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);

	if (!real)
		real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	if (strstr(path, "/tracing/"))
		tracing_opendirs++;
	return real(path);
}

int access(const char *path, int mode)
{
	static int (*real)(const char *, int);

	if (!real)
		real = (int (*)(const char *, int))dlsym(RTLD_NEXT, "access");
	if (!strcmp(path, "/proc/sys/kernel/perf_event_paranoid"))
		return 0; /* the perf PMU is detected even where the sysctl is hidden */
	return real(path, mode);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	fputs(text, f);
	return fclose(f) != 0;
}

static int make_dir(const char *fmt, const char *arg)
{
	char path[4096];

	snprintf(path, sizeof(path), fmt, fake_root, arg);
	if (mkdir(path, 0755)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* <root>/tracing/events/pfmtest/{tp_one,tp_two}/id and a mounts file naming <root> as debugfs */
static int setup(void)
{
	char path[4096], mounts[4096];

	if (!mkdtemp(fake_root))
		return 1;
	if (make_dir("%s/tracing%s", "") || make_dir("%s/tracing/events%s", "") ||
	    make_dir("%s/tracing/events/%s", "pfmtest") ||
	    make_dir("%s/tracing/events/pfmtest/%s", "tp_one") ||
	    make_dir("%s/tracing/events/pfmtest/%s", "tp_two"))
		return 1;
	snprintf(path, sizeof(path), "%s/tracing/events/pfmtest/tp_one/id", fake_root);
	if (write_file(path, "4001\n"))
		return 1;
	snprintf(path, sizeof(path), "%s/tracing/events/pfmtest/tp_two/id", fake_root);
	if (write_file(path, "4002\n"))
		return 1;
	snprintf(path, sizeof(path), "proc /proc proc rw 0 0\nnone %s debugfs rw,relatime 0 0\n", fake_root);
	snprintf(mounts, sizeof(mounts), "%s/mounts", fake_root);
	if (write_file(mounts, path))
		return 1;
	snprintf(fake_mounts, sizeof(fake_mounts), "%s", mounts); /* from now on /proc/mounts is this file */
	return 0;
}

static int teardown(void)
{
	char cmd[4200];

	pfm_terminate();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	return system(cmd) == 0 ? 0 : 1;
}

/* initialise on a U74 with the tracepoint setting given (NULL = default) and count what was read */
static void init_counted(const char *tracepoints)
{
	pfm_terminate();
	if (tracepoints)
		setenv("LIBPFM_PERF_TRACEPOINTS", tracepoints, 1);
	else
		unsetenv("LIBPFM_PERF_TRACEPOINTS");
	cpuinfo_path = cpuinfo_fixture("unmatched.txt");
	cpuinfo_opens = tracing_opendirs = 0;
	CU_ASSERT_EQUAL_FATAL(pfm_reinit(NULL, cpuinfo_path), PFM_SUCCESS);
	CU_ASSERT_TRUE(pmu_active("riscv_sifive_u74"));
	CU_ASSERT_TRUE(pmu_active("perf"));
}

static void test_cpuinfo_read_once(void)
{
	init_counted(NULL);
	CU_ASSERT_EQUAL(cpuinfo_opens, 1); /* five RISC-V PMUs detected and initialised from one read */
	/* a second initialisation reads it again (pfm_terminate forgets), once */
	init_counted(NULL);
	CU_ASSERT_EQUAL(cpuinfo_opens, 1);
	/* LIBPFM_FORCE_PMU: no detection, the forced model still learns Sscofpmf from one read */
	pfm_terminate();
	cpuinfo_opens = 0;
	CU_ASSERT_EQUAL(pfm_reinit("riscv_sifive_u74", cpuinfo_path), PFM_SUCCESS);
	CU_ASSERT_EQUAL(cpuinfo_opens, 1);
}

static void test_tracepoints_skipped_by_default(void)
{
	init_counted(NULL);
	CU_ASSERT_EQUAL(tracing_opendirs, 0);
	CU_ASSERT(pfm_find_event("perf::pfmtest") < 0);
	init_counted("0");
	CU_ASSERT_EQUAL(tracing_opendirs, 0);
	CU_ASSERT(pfm_find_event("perf::pfmtest") < 0);
}

static void test_tracepoints_on_request(void)
{
	uint64_t code;

	init_counted("1");
	CU_ASSERT(tracing_opendirs >= 2); /* events/ and events/pfmtest/ */
	CU_ASSERT(pfm_find_event("perf::pfmtest") >= 0);
	CU_ASSERT_EQUAL(encode("perf::pfmtest:tp_two", &code), PFM_SUCCESS);
	CU_ASSERT_EQUAL(code, 4002);
	unsetenv("LIBPFM_PERF_TRACEPOINTS");
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pfm_initialize cost on RISC-V", setup, teardown);
	CU_add_test(s, "/proc/cpuinfo read once", test_cpuinfo_read_once);
	CU_add_test(s, "tracepoints not scanned by default", test_tracepoints_skipped_by_default);
	CU_add_test(s, "LIBPFM_PERF_TRACEPOINTS=1 scans and lists them", test_tracepoints_on_request);
	return cunit_run_all();
}
