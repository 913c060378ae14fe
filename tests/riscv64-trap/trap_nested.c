// SPDX-License-Identifier: MIT
/* A signal that lands while a csrr is being emulated (model sifive-u74, virtual clock). On a board a counter
 * read is one instruction: a signal comes before or after it, and its handler may read counters itself
 * (PAPI's software overflow: the ITIMER_PROF handler reads the EventSet through the mmap page, PAPI patch
 * 25). Under qemu-user the read is the emulator's SIGILL handler (emulator/fe_trap.c), which must run with
 * every signal blocked: a handler that ran inside it would run with SIGILL blocked, and its own csrr would
 * then kill the process with SIGILL (a trap whose signal is blocked gets the default action) -- the
 * exec-counts stage's overflow_pthreads died so once. The test hook rvemu_test_trap_hook raises SIGPROF from
 * inside the trap handler, as an ITIMER_PROF tick landing there would, in a child so that a death is a failed
 * check:
 *   - inside the trap handler SIGPROF (every signal) is blocked;
 *   - the SIGPROF handler runs once, after the trapped instruction (not inside the emulator), and its own
 *     user-space read of the counter traps, is emulated and gives the count read() gives;
 *   - the child exits normally (not killed by SIGILL). */
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "trap_test.h"

#define U74_INTEGER_LOAD_RETIRED 0x200ull /* class 0, mask bit 9 */

static uint64_t read_hpm3(void)
{
	uint64_t v;
	__asm__ __volatile__("csrr %0, 0xc03" : "=r"(v)::"memory");
	return v;
}

/* The uapi reader (as PAPI's patch 25 and libperf read): count = offset + pmc sign-extended from pmc_width;
 * -1 when the page offers no read. */
static int page_read(volatile struct perf_event_mmap_page *pg, uint64_t *count)
{
	uint32_t seq;
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		if (!pg->cap_user_rdpmc || pg->index != 4)
			return -1;
		unsigned shift = 64 - pg->pmc_width;
		int64_t pmc = (int64_t)(read_hpm3() << shift) >> shift;
		*count = (uint64_t)(pg->offset + pmc);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);
	return 0;
}

static volatile struct perf_event_mmap_page *page;
static volatile sig_atomic_t armed, hook_calls, hook_returned, prof_calls, prof_inside_trap, prof_read_ok;
static volatile int prof_blocked_in_trap = -1;
static volatile uint64_t prof_count;

/* Runs inside the emulator's SIGILL handler, after the access it emulated. */
static void in_trap(void)
{
	hook_calls++;
	if (!armed)
		return;
	armed = 0;
	sigset_t now;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	prof_blocked_in_trap = sigismember(&now, SIGPROF);
	raise(SIGPROF); /* an ITIMER_PROF tick landing while the instruction is emulated */
	hook_returned = 1;
}

static void on_prof(int sig)
{
	(void)sig;
	prof_calls++;
	prof_inside_trap = !hook_returned;
	uint64_t c = 0;
	prof_read_ok = page_read(page, &c) == 0;
	prof_count = c;
}

static void child(void)
{
	struct emu_api api = emu_api_load();
	void (*set_hook)(void (*)(void)) = RVEMU_SYM(void (*)(void (*)(void)), rvemu_test_trap_hook);
	CHECK(set_hook != NULL, "the emulator exports rvemu_test_trap_hook");
	/* the event and its mapping are the child's own (perf's mapping is not inherited by fork) */
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = U74_INTEGER_LOAD_RETIRED;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	long pagesize = sysconf(_SC_PAGESIZE);
	void *p = fd >= 0 ? mmap(NULL, (size_t)pagesize, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	CHECK(fd >= 0 && p != MAP_FAILED, "U74 INTEGER_LOAD_RETIRED opened (fd %d) and mapped", fd);
	if (!set_hook || p == MAP_FAILED)
		_exit(1);
	page = p;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0); /* the page says cap_user_rdpmc from its next update */
	CHECK(page->cap_user_rdpmc == 1 && page->index == 4,
	      "page: cap_user_rdpmc %u, index %u (hpmcounter3)", (unsigned)page->cap_user_rdpmc, page->index);
	api.advance(1000000);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sigemptyset(&sa.sa_mask); /* as PAPI's _papi_hwi_start_signal installs its handler */
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGPROF, &sa, NULL) == 0, "SIGPROF handler installed (it reads the counter itself)");
	set_hook(in_trap);
	armed = 1;
	uint64_t before = 0, sys = 0;
	int ok = page_read(page, &before) == 0;
	set_hook(NULL);
	CHECK(ok && hook_calls >= 1, "the program's user read trapped and was emulated (%d trap(s) seen)",
	      (int)hook_calls);
	CHECK(prof_blocked_in_trap == 1, "inside the trap handler SIGPROF is blocked (sigismember %d)",
	      (int)prof_blocked_in_trap);
	CHECK(prof_calls == 1 && !prof_inside_trap,
	      "the SIGPROF raised in the trap ran once, after the emulated instruction (calls %d, inside %d)",
	      (int)prof_calls, (int)prof_inside_trap);
	CHECK(read(fd, &sys, sizeof(sys)) == (ssize_t)sizeof(sys), "read() of the event");
	CHECK(prof_read_ok && prof_count == sys && before == sys && sys > 0,
	      "the handler's own user read %llu = the program's %llu = read() %llu",
	      (unsigned long long)prof_count, (unsigned long long)before, (unsigned long long)sys);
	int r = trap_test_done("trap_nested (child)");
	fflush(stdout);
	_exit(r);
}

int main(void)
{
	struct emu_api api = emu_api_load();
	if (strcmp(api.model(), "sifive-u74") != 0) {
		fprintf(stderr, "trap_nested: run with RVEMU_MODEL=sifive-u74 (got %s)\n", api.model());
		return 2;
	}
	int st = in_child(child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the child exited normally, its checks passed (status 0x%x%s)", st,
	      died_of_sigill(st) ? ": killed by SIGILL" : "");
	return trap_test_done("trap_nested");
}
