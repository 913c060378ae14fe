// SPDX-License-Identifier: MIT
/* What the emulated machine shows (/proc, /sys), calls it does not emulate, and perf_event_open's refusals.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu_test.h"

static void test_cpuinfo(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[512], want[256];
	unsigned processors = 0, uarchs = 0, isas = 0, vendors = 0;
	snprintf(want, sizeof(want), "isa\t\t: %s%s\n", model->isa, isa_sscofpmf_option ? "_sscofpmf" : "");
	while (fgets(line, sizeof(line), f)) {
		unsigned n;
		if (sscanf(line, "processor\t: %u", &n) == 1) {
			CU_ASSERT_EQUAL(n, processors);
			processors++;
		}
		if (sscanf(line, "hart\t\t: %u", &n) == 1) /* U74-MC: hart 0 is the S7 monitor core */
			CU_ASSERT_EQUAL(n, processors - 1 + model->first_hart);
		char *v = strchr(line, ':');
		if (!strncmp(line, "uarch\t", 6) && v && !strncmp(v + 2, model->uarch, strlen(model->uarch)))
			uarchs++;
		if (!strcmp(line, want))
			isas++;
		if (!strncmp(line, "mvendorid\t: ", 12) &&
		    !strncmp(line + 12, model->mvendorid, strlen(model->mvendorid)))
			vendors++;
	}
	fclose(f);
	CU_ASSERT_EQUAL(processors, 4);
	CU_ASSERT_EQUAL(uarchs, 4);
	CU_ASSERT_EQUAL(isas, 4);
	CU_ASSERT_EQUAL(vendors, 4);
	/* open() serves the same text */
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	char buf[64] = {0};
	CU_ASSERT(read(fd, buf, sizeof(buf) - 1) > 0);
	CU_ASSERT_EQUAL(strncmp(buf, "processor\t: 0\nhart\t\t: ", 22), 0);
	close(fd);
}

static void read_file(const char *path, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = 0;
	fclose(f);
}

static void test_sys_and_sysctl(void)
{
	char buf[256];
	read_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2\n");
	read_file("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0\n");
	read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0-3\n");
	read_file("/sys/devices/system/cpu/cpu2/topology/thread_siblings", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "4\n");
	read_file("/sys/devices/system/cpu/cpu0/topology/core_siblings", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "f\n");
	read_file("/sys/devices/system/node/node0/cpumap", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "f\n");
	CU_ASSERT_EQUAL(access("/sys/devices/system/cpu/cpu3", F_OK), 0);
	errno = 0;
	CU_ASSERT_EQUAL(access("/sys/devices/system/cpu/cpu4", F_OK), -1);
	CU_ASSERT_EQUAL(errno, ENOENT);
	CU_ASSERT_EQUAL(access("/sys/devices/system/node/node1", F_OK), -1);
	CU_ASSERT_EQUAL(sysconf(_SC_NPROCESSORS_ONLN), 4);
	/* a user cannot write the sysctl */
	CU_ASSERT_PTR_NULL(fopen("/proc/sys/kernel/perf_event_paranoid", "w"));
	CU_ASSERT_EQUAL(errno, EACCES);
}

/* The answers are built once per path and kept (fe_file_answer): the second round, in the other order and
 * with other paths opened in between, must give each path its own answer, not a neighbour's. */
static void test_answers_kept(void)
{
	unsigned harts = (unsigned)sysconf(_SC_NPROCESSORS_ONLN), bad = 0;
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < harts; i++) {
			unsigned cpu = round == 1 ? harts - 1 - i : i;
			char path[128], buf[64], want[64];
			snprintf(path, sizeof(path),
			         "/sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
			read_file(path, buf, sizeof(buf));
			snprintf(want, sizeof(want), "%u\n", cpu);
			bad += strcmp(buf, want) != 0;
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/topology/core_id", cpu);
			read_file(path, buf, sizeof(buf));
			bad += strcmp(buf, want) != 0;
			errno = 0;
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/topology/core_id",
			         cpu + harts);
			bad += open(path, O_RDONLY) != -1 || errno != ENOENT; /* a refusal is kept too */
		}
		char buf[256];
		read_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));
		bad += strcmp(buf, "2\n") != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Files, pipes and other syscalls keep working under the emulator. */
static void test_forwarded(void)
{
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	char path[] = "/tmp/emu_test_XXXXXX", buf[16] = {0};
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	unlink(path);
	CU_ASSERT_EQUAL(write(fd, "riscv", 5), 5);
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_SET), 0);
	CU_ASSERT_EQUAL(read(fd, buf, sizeof(buf)), 5);
	CU_ASSERT_STRING_EQUAL(buf, "riscv");
	CU_ASSERT_EQUAL(fcntl(fd, F_SETFL, O_APPEND), 0);
	CU_ASSERT(fcntl(fd, F_GETFL) & O_APPEND);
	int d = dup(fd);
	CU_ASSERT(d >= 0);
	CU_ASSERT_EQUAL(close(d), 0);
	CU_ASSERT_EQUAL(close(fd), 0);
	int p[2];
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	CU_ASSERT_EQUAL(write(p[1], "abc", 3), 3);
	int avail = 0;
	CU_ASSERT_EQUAL(ioctl(p[0], FIONREAD, &avail), 0);
	CU_ASSERT_EQUAL(avail, 3);
	close(p[0]);
	close(p[1]);
	CU_ASSERT_EQUAL(syscall(SYS_getpid), getpid());
	CU_ASSERT_EQUAL(syscall(SYS_gettid), test_gettid());
	errno = 0;
	CU_ASSERT_EQUAL(syscall(SYS_close, -5), -1);
	CU_ASSERT_EQUAL(errno, EBADF);
	api.get_stats(&s1);
	CU_ASSERT(s1.syscalls_forwarded >= s0.syscalls_forwarded + 8);
}

static void expect_open_error(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags,
                              int err)
{
	errno = 0;
	int fd = perf_open(a, pid, cpu, group, flags);
	CU_ASSERT_EQUAL(fd, -1);
	CU_ASSERT_EQUAL(errno, err);
	if (fd >= 0 || errno != err)
		fprintf(stderr, "  open(type %u config %#llx) gave %d errno %d, expected errno %d\n", a->type,
		        (unsigned long long)a->config, fd, errno, err);
	if (fd >= 0)
		close(fd);
}

static void test_bad_inputs(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_RAW, 0x7); /* CVA6 EXCEPTION_RETURN? U74: class 7 does not exist */
	if (model->class_masks) {
		expect_open_error(&a, 0, -1, -1, 0, ENOENT);
		uint64_t other = 0; /* class 1 with a bit class 1 does not define (0x80001 on the U74:
		                       FP_LOAD_RETIRED's) */
		for (unsigned b = 8; b < 56 && !other; b++) {
			other = 1 | 1ull << b;
			for (size_t i = 0; i < model->nevents; i++)
				if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE &&
				    model->events[i].encoding == other)
					other = 0;
		}
		attr_init(&a, PERF_TYPE_RAW, other);
		expect_open_error(&a, 0, -1, -1, 0, ENOENT);
		attr_init(&a, PERF_TYPE_RAW, 0x0); /* class 0 with no bits */
		expect_open_error(&a, 0, -1, -1, 0, ENOENT);
	} else {
		uint64_t unused = 0x7f; /* an event number the model's table does not have */
		for (size_t i = 0; i < model->nevents; i++)
			if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE &&
			    model->events[i].encoding == unused) {
				unused++;
				i = 0; /* bounded: the table has fewer events than values above 0x7f */
			}
		attr_init(&a, PERF_TYPE_RAW, unused);
		expect_open_error(&a, 0, -1, -1, 0, ENOENT);
	}
	attr_init(&a, PERF_TYPE_RAW, 1ull << 63); /* SBI firmware event */
	expect_open_error(&a, 0, -1, -1, 0, ENOENT);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
	expect_open_error(&a, 0, -1, -1, 0, ENOENT);
	attr_init(&a, 42, 0);
	expect_open_error(&a, 0, -1, -1, 0, ENOENT);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.size = 32;
	expect_open_error(&a, 0, -1, -1, 0, E2BIG);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	expect_open_error(&a, -1, -1, -1, 0, EINVAL); /* no task and no cpu */
	/* CPU-wide: EACCES with paranoid 2 and no CAP_PERFMON (perf_allow_cpu); with it, every task of the
	 * run on that CPU (tests/emu/test_emu_mproc.sh counts them through perf stat -a) */
	if (getenv("RVEMU_CAP_PERFMON") && !strcmp(getenv("RVEMU_CAP_PERFMON"), "0")) {
		expect_open_error(&a, -1, 0, -1, 0, EACCES);
	} else {
		int cpu_fd = perf_open(&a, -1, 0, -1, 0);
		uint64_t v;
		CU_ASSERT(cpu_fd >= 0);
		CU_ASSERT_EQUAL(read(cpu_fd, &v, sizeof(v)), (ssize_t)sizeof(v));
		close(cpu_fd);
	}
	expect_open_error(&a, 0, 64, -1, 0, ENODEV);
	expect_open_error(&a, 0, -1, -1, 1ul << 9, EINVAL);
	expect_open_error(&a, 0, -1, 0, 0, EBADF); /* stdin is not an event */
	expect_open_error(NULL, 0, -1, -1, 0, EFAULT);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.exclude_kernel = 1;
	if (!sscofpmf) {
		expect_open_error(&a, 0, -1, -1, 0, EINVAL); /* no privilege filtering without Sscofpmf */
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		a.exclude_guest = 1;
		expect_open_error(&a, 0, -1, -1, 0, EINVAL);
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		a.sample_period = 100000;
		expect_open_error(&a, 0, -1, -1, 0, EOPNOTSUPP); /* no overflow interrupt */
	} else {
		int fd = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT(fd >= 0);
		close(fd);
	}
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	uint32_t small;
	errno = 0;
	CU_ASSERT_EQUAL(read(fd, &small, sizeof(small)), -1);
	CU_ASSERT_EQUAL(errno, ENOSPC);
	CU_ASSERT_EQUAL(ioctl(fd, _IO('$', 99), 0), -1);
	CU_ASSERT_EQUAL(errno, ENOTTY);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1), -1); /* not a sampling event */
	CU_ASSERT_EQUAL(errno, EINVAL);
	long page = sysconf(_SC_PAGESIZE);
	CU_ASSERT_EQUAL(mmap(NULL, (size_t)(4 * page), PROT_READ, MAP_SHARED, fd, 0), MAP_FAILED);
	CU_ASSERT_EQUAL(errno, EINVAL); /* 3 data pages: not a power of 2 */
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	struct perf_event_mmap_page *pg = p;
	/* kernel.perf_user_access = 1: a mapped hardware event is user-readable, which the page shows from
	 * its first update after the mmap (pmu_sbi_event_mapped runs after perf_mmap wrote it) */
	CU_ASSERT_EQUAL(pg->cap_user_rdpmc, 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	CU_ASSERT_EQUAL(pg->cap_user_rdpmc, 1);
	munmap(p, (size_t)page);
	/* the event fd is a real fd: F_GETFD works and dup gives a working second fd */
	CU_ASSERT(fcntl(fd, F_GETFD) >= 0);
	int d = dup(fd);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(close(fd), 0);
	uint64_t v;
	CU_ASSERT_EQUAL(read(d, &v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(close(d), 0);
	/* another process's task (init): perf_event_open's ptrace-access rule, ptrace_may_access: root may
	 * count it (same uid, CAP_SYS_PTRACE), anyone else gets EACCES; a pid that does not exist, ESRCH */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int own = perf_open(&a, 0, -1, -1, 0);
	if (own >= 0) {
		close(own);
		errno = 0;
		int init = perf_open(&a, 1, -1, -1, 0);
		if (getuid() == 0) {
			CU_ASSERT(init >= 0);
			uint64_t c;
			CU_ASSERT_EQUAL(read(init, &c, sizeof(c)), (ssize_t)sizeof(c));
			close(init);
		} else {
			CU_ASSERT_EQUAL(init, -1);
			CU_ASSERT_EQUAL(errno, EACCES);
		}
		errno = 0;
		CU_ASSERT_EQUAL(perf_open(&a, 0x7ffffffe, -1, -1, 0), -1);
		CU_ASSERT_EQUAL(errno, ESRCH);
	}
}

void add_machine_suites(void)
{
	CU_pSuite s = CU_add_suite("machine", NULL, NULL);
	CU_add_test(s, "/proc/cpuinfo in the RISC-V kernel format", test_cpuinfo);
	CU_add_test(s, "/sys and sysctl files", test_sys_and_sysctl);
	CU_add_test(s, "/proc and /sys answers built once, each path its own", test_answers_kept);
	CU_add_test(s, "calls on other fds and syscalls are forwarded", test_forwarded);
	CU_add_test(s, "perf_event_open refuses bad input like the kernel", test_bad_inputs);
}
