// SPDX-License-Identifier: MIT
/* hpmcounterN under the CSR-trap front end (model sifive-u74, virtual clock): a counter is readable exactly
 * where Linux's scounteren would open it (kernel.perf_user_access = 1: the counters of the events this
 * thread has mapped, while they are on a counter). A trapped csrr of the mapped event's counter, with the
 * mmap page's offset and pmc_width, gives what read() gives; a counter whose event is not mapped (or was
 * unmapped), or any counter with perf_user_access = 0, gives the program the SIGILL a board gives it (its
 * handler, else death). cycle/instret events publish index 0 (qemu-user answers those CSRs itself).
 * Argument "noaccess": the run with RVEMU_PERF_USER_ACCESS=0. */
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "trap_test.h"

#define U74_INTEGER_LOAD_RETIRED  0x200ull /* class 0, mask bit 9 */
#define U74_INTEGER_STORE_RETIRED 0x400ull /* class 0, mask bit 10 */

static int open_event(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* csrr of hpmcounterN: the CSR number is an immediate */
static uint64_t read_hpm(unsigned n)
{
	uint64_t v = 0;
	switch (n) {
	case 3:
		__asm__ __volatile__("csrr %0, 0xc03" : "=r"(v)::"memory");
		break;
	case 4:
		__asm__ __volatile__("csrr %0, 0xc04" : "=r"(v)::"memory");
		break;
	case 5:
		__asm__ __volatile__("csrr %0, 0xc05" : "=r"(v)::"memory");
		break;
	default:
		break;
	}
	return v;
}

/* The uapi reader: count = offset + pmc sign-extended from pmc_width; -1 when the page offers no read. */
static int page_read(volatile struct perf_event_mmap_page *pg, uint64_t *count)
{
	uint32_t seq;
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		uint32_t idx = pg->index;
		if (!pg->cap_user_rdpmc || idx == 0)
			return -1;
		unsigned shift = 64 - pg->pmc_width;
		int64_t pmc = (int64_t)(read_hpm(idx - 1) << shift) >> shift;
		*count = (uint64_t)(pg->offset + pmc);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);
	return 0;
}

static void expect_sigill(const struct emu_api *api, unsigned n, const char *why)
{
	struct rvemu_stats s0 = emu_stats_now(api), s1;
	int before = own.count;
	read_hpm(n);
	s1 = emu_stats_now(api);
	CHECK(own.count == before + 1 && s1.csr_traps_passed - s0.csr_traps_passed == 1 &&
	          s1.csr_traps == s0.csr_traps,
	      "csrr hpmcounter%u %s: the program's SIGILL handler got it", n, why);
}

static void child_reads_hpm3(void)
{
	signal(SIGILL, SIG_DFL);
	read_hpm(3);
}

static int run_access(const struct emu_api *api)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open_event(PERF_TYPE_RAW, U74_INTEGER_LOAD_RETIRED);
	int fd2 = open_event(PERF_TYPE_RAW, U74_INTEGER_STORE_RETIRED);
	CHECK(fd >= 0 && fd2 >= 0, "two U74 events opened (fd %d, %d)", fd, fd2);
	volatile struct perf_event_mmap_page *pg = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(pg != MAP_FAILED, "first event mapped");
	if (pg == MAP_FAILED)
		return 1;
	/* the mmap wrote the page before riscv_pmu_sbi's event_mapped set USER_READ_CNT; its next update
	 * (here a reset, as PAPI's probe does) shows it */
	CHECK(pg->cap_user_rdpmc == 0 && pg->index == 0, "page right after mmap: cap_user_rdpmc %u, index %u",
	      (unsigned)pg->cap_user_rdpmc, pg->index);
	CHECK(ioctl(fd, PERF_EVENT_IOC_RESET, 0) == 0, "PERF_EVENT_IOC_RESET updates the page");
	CHECK(pg->cap_user_rdpmc == 1 && pg->index == 4 && pg->pmc_width == 40,
	      "page: cap_user_rdpmc %u, index %u (hpmcounter3), pmc_width %u", (unsigned)pg->cap_user_rdpmc,
	      pg->index, pg->pmc_width);
	api->advance(5000000);
	struct rvemu_stats s0 = emu_stats_now(api);
	uint64_t user = 0, sys = 0, truth = 0;
	int r = page_read(pg, &user);
	struct rvemu_stats s1 = emu_stats_now(api);
	CHECK(r == 0 && s1.csr_traps - s0.csr_traps == 1 && s1.syscalls_emulated == s0.syscalls_emulated,
	      "user read: one trapped csrr, no system call");
	CHECK(read(fd, &sys, sizeof(sys)) == (ssize_t)sizeof(sys), "read() of the event");
	api->truth_raw(U74_INTEGER_LOAD_RETIRED, &truth);
	CHECK(user == sys && sys == truth && user > 0, "user read %llu = read() %llu = truth %llu",
	      (unsigned long long)user, (unsigned long long)sys, (unsigned long long)truth);
	/* the program's own handler sees the traps of counters it may not read */
	CHECK(install_own_sigill(NULL) == 0, "the program installs its own SIGILL handler");
	expect_sigill(api, 4, "(its event is on the counter but not mapped)");
	expect_sigill(api, 5, "(no event on it)");
	int st = in_child(child_reads_hpm3);
	/* the event counts the parent; perf's mapping is VM_DONTCOPY: nothing the child may read */
	CHECK(died_of_sigill(st),
	      "a forked child's csrr hpmcounter3 (the parent's event) kills it with SIGILL (status 0x%x)",
	      st);
	munmap((void *)pg, (size_t)page);
	expect_sigill(api, 3, "(its event was unmapped)");
	st = in_child(child_reads_hpm3);
	CHECK(died_of_sigill(st),
	      "without a handler, csrr of an unmapped counter kills with SIGILL (status 0x%x)", st);
	close(fd);
	close(fd2);
	/* cycles: qemu answers the cycle CSR with host ticks, so the page offers no index for it */
	int fc = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	volatile struct perf_event_mmap_page *pc = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fc, 0);
	ioctl(fc, PERF_EVENT_IOC_RESET, 0);
	CHECK(fc >= 0 && pc != MAP_FAILED && pc->cap_user_rdpmc == 1 && pc->index == 0,
	      "cycles event: cap_user_rdpmc 1, index 0 (read() it: qemu answers cycle itself)");
	if (pc != MAP_FAILED)
		munmap((void *)pc, (size_t)page);
	close(fc);
	return 0;
}

/* Two events on hpmcounter3 and 4, the second mapped: disabling the first must leave the second's page naming
 * the counter a csrr of it reads (the emulator may move it to another counter, as Linux's rescheduling may,
 * but then the page says so, as riscv_pmu_del/add update it). The program's SIGILL handler is installed
 * (run_access): a stale index is a trap it receives. */
static void run_other_disabled(const struct emu_api *api)
{
	long page = sysconf(_SC_PAGESIZE);
	int fa = open_event(PERF_TYPE_RAW, U74_INTEGER_LOAD_RETIRED);
	int fb = open_event(PERF_TYPE_RAW, U74_INTEGER_STORE_RETIRED);
	volatile struct perf_event_mmap_page *pb =
	    fb >= 0 ? mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fb, 0) : MAP_FAILED;
	CHECK(fa >= 0 && fb >= 0 && pb != MAP_FAILED, "two events opened, the second mapped");
	if (pb == MAP_FAILED)
		return;
	ioctl(fb, PERF_EVENT_IOC_RESET, 0);
	CHECK(pb->index == 5, "the second event's page: index %u (hpmcounter4)", pb->index);
	api->advance(1000000);
	CHECK(ioctl(fa, PERF_EVENT_IOC_DISABLE, 0) == 0, "the first event disabled");
	int before = own.count;
	uint64_t user = 0, sys = 0;
	int r = page_read(pb, &user);
	CHECK(read(fb, &sys, sizeof(sys)) == (ssize_t)sizeof(sys), "read() of the second event");
	CHECK(r == 0 && own.count == before && user == sys && sys > 0,
	      "its user read (page index %u) = read(): %llu, %llu; SIGILLs %d", pb->index,
	      (unsigned long long)user, (unsigned long long)sys, own.count - before);
	munmap((void *)pb, (size_t)page);
	close(fa);
	close(fb);
}

static int run_noaccess(const struct emu_api *api)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open_event(PERF_TYPE_RAW, U74_INTEGER_LOAD_RETIRED);
	volatile struct perf_event_mmap_page *pg = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(fd >= 0 && pg != MAP_FAILED, "event opened and mapped");
	if (pg == MAP_FAILED)
		return 1;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0); /* a page update after the mapping: still not readable */
	CHECK(pg->cap_user_rdpmc == 0 && pg->index == 0 && pg->pmc_width == 0,
	      "perf_user_access = 0: cap_user_rdpmc 0, index 0, pmc_width 0");
	CHECK(install_own_sigill(NULL) == 0, "the program installs its own SIGILL handler");
	expect_sigill(api, 3, "(perf_user_access = 0)");
	int st = in_child(child_reads_hpm3);
	CHECK(died_of_sigill(st), "without a handler it kills with SIGILL (status 0x%x)", st);
	munmap((void *)pg, (size_t)page);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct emu_api api = emu_api_load();
	if (strcmp(api.model(), "sifive-u74") != 0) {
		fprintf(stderr, "trap_hpm: run with RVEMU_MODEL=sifive-u74 (got %s)\n", api.model());
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "noaccess") == 0)
		run_noaccess(&api);
	else {
		run_access(&api);
		run_other_disabled(&api);
	}
	return trap_test_done(argc > 1 ? "trap_hpm noaccess" : "trap_hpm");
}
