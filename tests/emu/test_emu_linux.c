// SPDX-License-Identifier: MIT
/* The emulated kernel behaves as Linux (kernel/events/core.c, drivers/perf/riscv_pmu*.c) where users would
 * otherwise be misled: software events, the calls a kernel perf ABI test suite checks, the mmap page and
 * user-space counter reads, throttling. Each test names the kernel function it follows. Runs in every
 * model x clock configuration (sampling here uses task-clock, which every model can sample). */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cunit_run.h"
#include "emu_test.h"

#define DATA_PAGES 2

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t ring_len(void)
{
	return page_size() * (1 + DATA_PAGES);
}

/* Runs the thread for `ns` of its time: the virtual clock advances, the CPU-time clock burns. */
static void run_for_ns(uint64_t ns)
{
	if (virtual_clock)
		api.advance(ns * model->freq_mhz / 1000);
	else
		burn_cpu_ms((unsigned)(ns / 1000000 ? ns / 1000000 : 1));
}

static void clock_sampling_attr(struct perf_event_attr *a, uint64_t period_ns)
{
	attr_init(a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a->sample_period = period_ns;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ID;
	a->wakeup_events = 1;
}

static void walk_records(struct perf_event_mmap_page *pg, unsigned *samples, unsigned *throttle,
                         unsigned *unthrottle, uint64_t *ids, unsigned maxids)
{
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	uint64_t size = pg->data_size, head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE),
	         tail = pg->data_tail;
	unsigned n = 0;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t f[4] = {0};
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		for (size_t i = 0; i < sizeof(f) && i + sizeof(h) < h.size; i++)
			((unsigned char *)f)[i] = data[(tail + sizeof(h) + i) % size];
		if (h.type == PERF_RECORD_SAMPLE) {
			if (samples)
				(*samples)++;
			if (ids && n < maxids)
				ids[n++] = f[1];
		} else if (h.type == PERF_RECORD_THROTTLE && throttle) {
			(*throttle)++;
		} else if (h.type == PERF_RECORD_UNTHROTTLE && unthrottle) {
			(*unthrottle)++;
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* --------------------------------------------------------------------------------- software events */
/* perf_swevent_init: every PERF_TYPE_SOFTWARE config below PERF_COUNT_SW_MAX opens; page faults count the
 * thread's real faults (perf_sw_event in the fault handler), also as a member of a hardware group. */
static void test_software_events(void)
{
	struct perf_event_attr a;
	for (uint64_t c = 0; c < PERF_COUNT_SW_MAX; c++) {
		attr_init(&a, PERF_TYPE_SOFTWARE, c);
		int fd = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT(fd >= 0);
		if (fd < 0)
			fprintf(stderr, "  software event %llu: errno %d\n", (unsigned long long)c, errno);
		else
			close(fd);
	}
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_MAX);
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, ENOENT);

	/* a hardware leader with page-faults and context-switches as members */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.read_format = PERF_FORMAT_GROUP;
	int lead = perf_open(&a, 0, -1, -1, 0);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	a.disabled = 0;
	int pf = perf_open(&a, 0, -1, lead, 0);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN);
	a.disabled = 0;
	int minf = perf_open(&a, 0, -1, lead, 0);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	a.disabled = 0;
	int cs = perf_open(&a, 0, -1, lead, 0);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.disabled = 0;
	int dummy = perf_open(&a, 0, -1, lead, 0);
	CU_ASSERT_FATAL(lead >= 0 && pf >= 0 && minf >= 0 && cs >= 0 && dummy >= 0);
	CU_ASSERT_EQUAL(ioctl(lead, PERF_EVENT_IOC_ENABLE, 0), 0);
	const size_t pages = 64;
	char *mem =
	    mmap(NULL, pages * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(mem != MAP_FAILED);
	for (size_t i = 0; i < pages; i++)
		mem[i * page_size()] = 1; /* one minor fault per page */
	for (int i = 0; i < 3; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL); /* a voluntary context switch each */
	}
	run_for_ns(1000000);
	uint64_t v[6] = {0};
	CU_ASSERT_EQUAL(read(lead, v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v[0], 5);
	CU_ASSERT(v[1] > 0);      /* cycles */
	CU_ASSERT(v[2] >= pages); /* page faults */
	CU_ASSERT(v[3] >= pages); /* minor faults */
	CU_ASSERT(v[3] <= v[2]);  /* minor <= all */
	CU_ASSERT(v[4] >= 3);     /* context switches */
	CU_ASSERT_EQUAL(v[5], 0); /* dummy */
	/* disabled, it stops counting */
	CU_ASSERT_EQUAL(ioctl(lead, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	uint64_t w[6];
	CU_ASSERT_EQUAL(read(lead, v, sizeof(v)), (ssize_t)sizeof(v)); /* as it stopped */
	for (size_t i = 0; i < pages; i++)
		mem[i * page_size() + 1] = 2; /* no new faults anyway */
	munmap(mem, pages * page_size());
	mem = mmap(NULL, pages * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; i < pages; i++)
		mem[i * page_size()] = 1;
	munmap(mem, pages * page_size());
	CU_ASSERT_EQUAL(read(lead, w, sizeof(w)), (ssize_t)sizeof(w));
	CU_ASSERT_EQUAL(w[2], v[2]);
	close(dummy);
	close(cs);
	close(minf);
	close(pf);
	close(lead);
}

/* cpu_clock_event_init / perf_swevent_hrtimer: task-clock samples every `period` ns of the thread's time on
 * every core, Sscofpmf or not (what perf record falls back to on a U74). */
static void test_clock_sampling(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000); /* 1 ms */
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	void *p = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	run_for_ns(20000000); /* 20 ms */
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	unsigned samples = 0;
	walk_records(p, &samples, NULL, NULL, NULL, 0);
	if (virtual_clock) {
		CU_ASSERT_EQUAL(samples, 20);
	} else {
		CU_ASSERT(samples >= 10); /* 20 ms of CPU time or more: at least half of them by now */
	}
	munmap(p, ring_len());
	close(fd);
}

/* ------------------------------------------------------------------------------------- open checks */
static void test_open_checks(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX); /* pmu_sbi_event_map */
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	attr_init(&a, PERF_TYPE_HARDWARE, 1000);
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	/* perf_event_open: "Only a group leader can be exclusive or pinned" */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int lead = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(lead >= 0);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	a.pinned = 1;
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, lead, 0), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	a.exclusive = 1;
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, lead, 0), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	/* perf_ioctl: MODIFY_ATTRIBUTES only for breakpoints (perf_event_modify_attr) */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	CU_ASSERT_EQUAL(ioctl(lead, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a), -1);
	CU_ASSERT_EQUAL(errno, EOPNOTSUPP);
	/* perf_fops has no write (EINVAL) and no_llseek (ESPIPE); the event's page is not touched */
	char junk[64];
	memset(junk, 0x5a, sizeof(junk));
	CU_ASSERT_EQUAL(write(lead, junk, sizeof(junk)), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_EQUAL(lseek(lead, 0, SEEK_SET), -1);
	CU_ASSERT_EQUAL(errno, ESPIPE);
	uint64_t v;
	CU_ASSERT_EQUAL(read(lead, &v, sizeof(v)), (ssize_t)sizeof(v));
	close(lead);
}

/* event_filter_match: a per-thread event bound to CPU N counts only while the thread runs there. The
 * thread keeps its hart, so exactly one of these counts; the others take no counter (none falls into error
 * state, though all are pinned cycle events competing for one mcycle) and have time_enabled but no
 * time_running. */
static void test_cpu_filter(void)
{
	struct perf_event_attr a;
	int fds[8];
	unsigned n = 4;
	for (unsigned c = 0; c < n; c++) {
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		a.pinned = 1;
		a.disabled = 0;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fds[c] = perf_open(&a, 0, (int)c, -1, 0);
		CU_ASSERT_FATAL(fds[c] >= 0);
	}
	run_for_ns(1000000);
	unsigned counting = 0;
	for (unsigned c = 0; c < n; c++) {
		uint64_t v[3] = {0};
		CU_ASSERT_EQUAL(read(fds[c], v, sizeof(v)),
		                (ssize_t)sizeof(v)); /* never 0 bytes: no error state */
		if (v[0]) {
			counting++;
			CU_ASSERT_EQUAL(v[1], v[2]);
		} else {
			CU_ASSERT(v[1] > 0);
			CU_ASSERT_EQUAL(v[2], 0);
		}
		close(fds[c]);
	}
	CU_ASSERT_EQUAL(counting, 1);
}

/* perf_event_task_disable/enable: prctl(PR_TASK_PERF_EVENTS_*) switches every event the process opened. */
static void test_prctl(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.disabled = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	run_for_ns(1000000);
	CU_ASSERT_EQUAL(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), 0);
	uint64_t off = read_count(fd);
	CU_ASSERT(off > 0);
	run_for_ns(1000000);
	CU_ASSERT_EQUAL(read_count(fd), off);
	CU_ASSERT_EQUAL(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
	run_for_ns(1000000);
	CU_ASSERT(read_count(fd) > off);
	close(fd);
	CU_ASSERT_EQUAL(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1); /* other options reach the kernel */
}

/* perf_poll: POLLHUP at once without a buffer; with one, POLLIN after a wakeup (wakeup_events records),
 * consumed by the poll that reports it; nothing pending: poll waits (here: times out). */
static void test_poll(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	struct pollfd p = {fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 1000), 1);
	CU_ASSERT_EQUAL(p.revents, POLLHUP);
	close(fd);

	clock_sampling_attr(&a, 1000000);
	a.wakeup_events = 3;
	fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	void *m = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(m != MAP_FAILED);
	p.fd = fd;
	CU_ASSERT_EQUAL(poll(&p, 1, 5), 0); /* idle: waits, times out */
	CU_ASSERT_EQUAL(p.revents, 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	if (virtual_clock) {
		run_for_ns(2000000); /* 2 samples: no wakeup yet */
		CU_ASSERT_EQUAL(poll(&p, 1, 0), 0);
		run_for_ns(1000000); /* the third */
		CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
		CU_ASSERT_EQUAL(p.revents, POLLIN);
		CU_ASSERT_EQUAL(poll(&p, 1, 0), 0); /* consumed */
	} else {
		run_for_ns(10000000);
		CU_ASSERT_EQUAL(poll(&p, 1, 1000), 1);
		CU_ASSERT(p.revents & POLLIN);
	}
	/* a plain fd alongside an event fd still answers */
	int pipefd[2];
	CU_ASSERT_FATAL(pipe(pipefd) == 0);
	CU_ASSERT_EQUAL(write(pipefd[1], "x", 1), 1);
	struct pollfd two[2] = {{fd, POLLIN, 0}, {pipefd[0], POLLIN, 0}};
	CU_ASSERT(poll(two, 2, 100) >= 1);
	CU_ASSERT(two[1].revents & POLLIN);
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(m, ring_len());
	close(fd);
}

/* ------------------------------------------------------------------------- buffer and event lifetime */
/* perf_output_begin reads only data_tail from the user page; the kernel keeps data_head, data_offset and
 * data_size itself. A program that scribbles on the page loses samples (counted), never corrupts memory. */
static void test_page_scribble(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	struct perf_event_mmap_page *pg = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	pg->data_offset = 1ull << 40;
	pg->data_size = 1ull << 40;
	pg->data_head = 0xdeadbeefdeadull;
	pg->data_tail = 0xdeadbeefdeadull; /* ahead of the real head: no room at all */
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	run_for_ns(5000000);
	uint64_t v;
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)),
	                (ssize_t)sizeof(v)); /* the overflows up to now are handled */
	api.get_stats(&s1);
	CU_ASSERT(s1.samples_lost > s0.samples_lost);
	CU_ASSERT_EQUAL(s1.samples_written, s0.samples_written);
	CU_ASSERT_EQUAL(pg->data_offset, page_size()); /* rewritten from the kernel's copy */
	CU_ASSERT_EQUAL(pg->data_size, DATA_PAGES * page_size());
	pg->data_tail = pg->data_head; /* a reader that caught up: room again */
	run_for_ns(5000000);
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	api.get_stats(&s0);
	CU_ASSERT(s0.samples_written > s1.samples_written);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	munmap(pg, ring_len());
	close(fd);
}

/* perf_release / perf_mmap_close: closing the fd of a mapped event keeps it (and its sampling) until the
 * buffer is unmapped. */
static void test_close_while_mapped(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000);
	a.disabled = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	struct perf_event_mmap_page *pg = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	close(fd);
	/* a counting event of the same thread: reading it makes the emulator account the thread up to now
	 * (the CPU-time clock's timers are as coarse as the host's tick) */
	struct perf_event_attr c;
	attr_init(&c, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	int sync_fd = perf_open(&c, 0, -1, -1, 0);
	CU_ASSERT_FATAL(sync_fd >= 0);
	uint64_t head0 = pg->data_head;
	run_for_ns(5000000);
	read_count(sync_fd);
	CU_ASSERT(pg->data_head > head0); /* still sampling into the mapping */
	struct rvemu_stats s0, s1;
	munmap(pg, ring_len());
	api.get_stats(&s0);
	run_for_ns(5000000);
	read_count(sync_fd);
	api.get_stats(&s1);
	CU_ASSERT_EQUAL(s1.samples_written + s1.samples_lost,
	                s0.samples_written + s0.samples_lost); /* gone */
	close(sync_fd);
}

/* perf_event_set_output (PERF_FLAG_FD_OUTPUT and PERF_EVENT_IOC_SET_OUTPUT): records of one event go to
 * another's buffer. */
static void test_output_redirect(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000);
	int first = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(first >= 0);
	void *m = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, first, 0);
	CU_ASSERT_FATAL(m != MAP_FAILED);
	clock_sampling_attr(&a, 2000000);
	int second = perf_open(&a, 0, -1, first, PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT);
	CU_ASSERT_FATAL(second >= 0);
	int third = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(third >= 0);
	CU_ASSERT_EQUAL(ioctl(third, PERF_EVENT_IOC_SET_OUTPUT, first), 0);
	uint64_t id1, id2, id3;
	CU_ASSERT_EQUAL(ioctl(first, PERF_EVENT_IOC_ID, &id1), 0);
	CU_ASSERT_EQUAL(ioctl(second, PERF_EVENT_IOC_ID, &id2), 0);
	CU_ASSERT_EQUAL(ioctl(third, PERF_EVENT_IOC_ID, &id3), 0);
	/* a redirected event has no buffer of its own to map */
	CU_ASSERT_EQUAL(mmap(NULL, ring_len(), PROT_READ, MAP_SHARED, second, 0), MAP_FAILED);
	for (int fd = first; fd; fd = fd == first ? second : fd == second ? third : 0)
		CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	run_for_ns(8000000);
	for (int fd = first; fd; fd = fd == first ? second : fd == second ? third : 0)
		CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t ids[64];
	unsigned samples = 0, n1 = 0, n2 = 0, n3 = 0;
	walk_records(m, &samples, NULL, NULL, ids, 64);
	for (unsigned i = 0; i < samples && i < 64; i++) {
		n1 += ids[i] == id1;
		n2 += ids[i] == id2;
		n3 += ids[i] == id3;
	}
	CU_ASSERT(n1 > 0 && n2 > 0 && n3 > 0);
	CU_ASSERT_EQUAL(n1 + n2 + n3, samples);
	if (virtual_clock) {
		CU_ASSERT_EQUAL(n1, 8);
		CU_ASSERT_EQUAL(n2, 4);
		CU_ASSERT_EQUAL(n3, 4);
	}
	close(third);
	close(second);
	munmap(m, ring_len());
	close(first);
}

/* A forked child's fd refers to the parent's event (one struct perf_event): it reads the count the parent's
 * thread has reached, not a copy frozen at fork. */
static void test_fork_reads_parent_count(void)
{
	if (!virtual_clock)
		return; /* the exact comparison needs the parent's count to stand still */
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.disabled = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	api.advance(1000);
	int to_child[2], to_parent[2];
	CU_ASSERT_FATAL(pipe(to_child) == 0 && pipe(to_parent) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		uint64_t want, got = 0;
		int ok = read(to_child[0], &want, sizeof(want)) == sizeof(want) &&
		         read(fd, &got, sizeof(got)) == sizeof(got) && got == want;
		if (!ok)
			fprintf(stderr, "  child read %llu, the parent's count is %llu\n",
			        (unsigned long long)got, (unsigned long long)want);
		_exit(ok ? 0 : 1);
	}
	api.advance(123456789);
	uint64_t now = read_count(fd);
	CU_ASSERT_EQUAL(write(to_child[1], &now, sizeof(now)), (ssize_t)sizeof(now));
	int st;
	waitpid(pid, &st, 0);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	close(fd);
}

/* fork() while another thread is inside the emulator's mmap/munmap or /sys directory bookkeeping: the child
 * must not inherit a held lock (the kernel has no such state to inherit; a deadlocked child is the
 * emulator's bug). A second thread maps and unmaps an event's ring and lists a served /sys directory in a
 * loop while the main thread forks; each child does the same once and exits. A child that hangs is killed by
 * its own alarm, long after a healthy one has finished. */
struct fork_churn {
	int fd;
	volatile int stop;
	unsigned rounds;
};

static void map_and_list_once(int fd)
{
	void *m = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED)
		munmap(m, ring_len());
	DIR *d = opendir("/sys/devices/system/cpu/cpu0/cache");
	if (d) {
		while (readdir(d))
			;
		closedir(d);
	}
}

static void *fork_churn_thread(void *arg)
{
	struct fork_churn *c = arg;
	for (unsigned i = 0; i < 100000 && !c->stop; i++, c->rounds++)
		map_and_list_once(c->fd);
	return NULL;
}

static void test_fork_during_mmap(void)
{
#if defined(__SANITIZE_ADDRESS__)
	/* Under ASan the child hung too (fresh-clone run, 3 configurations, forks 2-11): not examined; the
	 * sanitizer's allocator (the child's opendir allocates) is the first suspect. Runs natively and under
	 * valgrind. */
	fprintf(stderr, "  (not under ASan: see the comment)\n");
	return;
#endif
#if defined(__riscv)
	/* Under qemu-user this test hung in the fresh-clone run of the branch that added it (the child of a
	 * fork taken while another guest thread is in mmap; qemu-user's own fork handling of its mmap lock is
	 * the first suspect, not yet examined). Not run on riscv64 until that is understood
	 * (docs/riscv64.md). */
	fprintf(stderr, "  (not on riscv64 under qemu-user: see the comment)\n");
	return;
#endif
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	struct fork_churn c = {.fd = perf_open(&a, 0, -1, -1, 0)};
	CU_ASSERT_FATAL(c.fd >= 0);
	pthread_t th;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, fork_churn_thread, &c) == 0);
	int forks = 0, hung = 0;
	for (; forks < 60 && !hung; forks++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(60);
			map_and_list_once(c.fd);
			_exit(0);
		}
		CU_ASSERT_FATAL(pid > 0);
		int st = 0;
		CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			hung = 1;
			fprintf(stderr, "  fork %d: the child %s %d\n", forks,
			        WIFSIGNALED(st) ? "died of signal" : "exited",
			        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	c.stop = 1;
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(hung, 0);
	CU_ASSERT(c.rounds > 0);
	close(c.fd);
}

/* The same for the directory table alone (dirs_lock, fe_vfs.c), which the test above does not single out: a
 * second thread keeps one directory open and reads it in a loop, so that it holds the table's lock much of
 * the time (every readdir, served or the host's, looks its handle up under it), while the main thread forks;
 * each child lists the directory once. The directory is a served one (cpu0/cache) where the model describes
 * caches, the host's cpu/ otherwise (CVA6). With the fork handlers' dirs_lock removed, a child hung within
 * the first 10 forks in 5 of 5 runs on the U74, and within 200 in 3 of 5 on the CVA6 (the host's readdir
 * makes a system call outside the lock); the test above noticed it in 1 of those 10 runs. */
static const char *dir_to_list(void)
{
	DIR *d = opendir("/sys/devices/system/cpu/cpu0/cache");
	if (!d)
		return "/sys/devices/system/cpu";
	closedir(d);
	return "/sys/devices/system/cpu/cpu0/cache";
}

struct dir_churn {
	const char *dir;
	int opened; /* 1 once the thread has its directory open, -1 if it could not open it */
	int stop;
};

static void *dir_churn_thread(void *arg)
{
	struct dir_churn *c = arg;
	DIR *d = opendir(c->dir);
	__atomic_store_n(&c->opened, d ? 1 : -1, __ATOMIC_RELEASE);
	for (unsigned long i = 0; d && i < 100000000ul && !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); i++)
		readdir(d); /* past the last entry: the lookup under the lock, then NULL */
	if (d)
		closedir(d);
	return NULL;
}

static void test_fork_during_readdir(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__riscv)
	/* as test_fork_during_mmap: its comment says why not under ASan nor on riscv64 */
	fprintf(stderr, "  (not under ASan nor on riscv64: see test_fork_during_mmap)\n");
	return;
#endif
	struct dir_churn c = {.dir = dir_to_list()};
	pthread_t th;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, dir_churn_thread, &c) == 0);
	for (long i = 0; i < 100000000l && !__atomic_load_n(&c.opened, __ATOMIC_ACQUIRE); i++)
		sched_yield();
	/* valgrind runs one thread at a time (the interleaving is the native runs' to find) and each fork of
	 * it is slow: 200 forks in each of its test_emu runs took the valgrind stage from 72 s to 203 s */
	int under_valgrind = cunit_running_on_valgrind();
	// cppcheck-suppress knownConditionTrueFalse ; valgrind's client request is not visible to cppcheck
	int max_forks = under_valgrind ? 20 : 200, forks = 0, hung = 0;
	for (; forks < max_forks && !hung && __atomic_load_n(&c.opened, __ATOMIC_ACQUIRE) == 1; forks++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(60);
			DIR *d = opendir(c.dir);
			int n = 0, opened = d != NULL;
			while (d && readdir(d) && n < 1000)
				n++;
			if (d)
				closedir(d);
			_exit(opened && n > 0 ? 0 : 1);
		}
		CU_ASSERT_FATAL(pid > 0);
		int st = 0;
		CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			hung = 1;
			fprintf(stderr, "  fork %d: the child %s %d\n", forks,
			        WIFSIGNALED(st) ? "died of signal" : "exited",
			        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(c.opened, 1);
	CU_ASSERT_EQUAL(forks, max_forks);
	CU_ASSERT_EQUAL(hung, 0);
}

/* ---------------------------------------------------------------------- the mmap page, user reads */
typedef int (*csr_read_fn)(unsigned, uint64_t *);

/* The user-space read of include/uapi/linux/perf_event.h (as perf's tools/lib/perf mmap read does): seq,
 * index, offset, the counter CSR, sign-extended to pmc_width. */
/* The counter CSR a page's index names: on riscv64 the real csrr, which the emulator's CSR-trap front end
 * carries out (fe_trap.c; this test maps only hpmcounter3 there: qemu-user answers cycle and instret itself,
 * so the riscv64 emulator publishes index 0 for them); elsewhere seam 2's rvhw_csr_read, which the emulator
 * exports. */
static int counter_csr_read(unsigned csr, uint64_t *v)
{
#if defined(__riscv)
	if (csr != 0xC03)
		return -1;
	__asm__ __volatile__("csrr %0, 0xC03" : "=r"(*v));
	return 0;
#else
	csr_read_fn csr_read = (csr_read_fn)dlsym(RTLD_DEFAULT, "rvhw_csr_read");
	return csr_read ? csr_read(csr, v) : -1;
#endif
}

static int user_read(struct perf_event_mmap_page *pg, uint64_t *count)
{
	uint32_t seq;
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		uint32_t idx = pg->index;
		int64_t off = pg->offset;
		if (!pg->cap_user_rdpmc || !idx)
			return -1;
		uint64_t pmc;
		int r = counter_csr_read(0xC00 + idx - 1, &pmc);
		if (r)
			return r;
		unsigned shift = 64 - pg->pmc_width;
		*count = (uint64_t)(off + (int64_t)(pmc << shift >> shift));
	} while (__atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);
	return 0;
}

static void test_mmap_page_user_read(void)
{
	struct perf_event_attr a;
	const struct rvemu_event *prog = NULL;
	for (size_t i = 0; i < model->nevents && !prog; i++)
		if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE)
			prog = &model->events[i];
	for (int k = 0; k < (prog ? 3 : 2); k++) {
		attr_for_event(&a, k == 0 ? &model->events[0] : k == 1 ? &model->events[1] : prog);
		a.disabled = 0;
		int fd = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT_FATAL(fd >= 0);
		struct perf_event_mmap_page *pg = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd, 0);
		CU_ASSERT_FATAL(pg != MAP_FAILED);
		/* perf_mmap wrote the page before pmu_sbi_event_mapped set USER_READ_CNT: not yet readable */
		CU_ASSERT_EQUAL(pg->cap_user_rdpmc, 0);
		CU_ASSERT_EQUAL(pg->index, 0);
		uint64_t user = 0, sys;
		CU_ASSERT_EQUAL(user_read(pg, &user), -1);
		/* its next update (perf_event_reset -> perf_event_update_userpage) says so */
		CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
		CU_ASSERT_EQUAL(pg->cap_user_rdpmc, 1);
		CU_ASSERT_EQUAL(pg->cap_user_time, 1);
		CU_ASSERT_EQUAL(pg->pmc_width, k == 2 ? model->prog_width : 64u);
		run_for_ns(2000000);
#if defined(__riscv)
		/* under qemu-user the fixed counters are qemu's (host ticks): index 0, read() instead */
		CU_ASSERT_EQUAL(pg->index, k == 2 ? 4u : 0u);
		if (k < 2) {
			CU_ASSERT_EQUAL(user_read(pg, &user), -1);
			munmap(pg, page_size());
			close(fd);
			continue;
		}
#else
		CU_ASSERT_EQUAL(pg->index, k == 0   ? 1u
		                           : k == 1 ? 3u
		                                    : 4u); /* CSR - 0xC00 + 1: cycle, instret, hpmcounter3 */
#endif
		CU_ASSERT_EQUAL(user_read(pg, &user), 0);
		CU_ASSERT_EQUAL(read(fd, &sys, sizeof(sys)), (ssize_t)sizeof(sys));
		if (virtual_clock) {
			CU_ASSERT_EQUAL(user, sys);
		} else {
			CU_ASSERT(user > 0 && user <= sys); /* time passed between the two */
		}
		CU_ASSERT(pg->time_enabled > 0);
		/* another thread's counter (or an unmapped one) is not readable: the read would trap */
		munmap(pg, page_size());
#if !defined(__riscv) /* on riscv64 that read is a SIGILL: tests/riscv64-trap/trap_hpm.c checks it */
		uint64_t v;
		CU_ASSERT_EQUAL(counter_csr_read(k == 0   ? 0xC00
		                                 : k == 1 ? 0xC02
		                                          : 0xC03,
		                                 &v),
		                -1 /* RVHW_EPERM */);
#endif
		close(fd);
	}
	/* a software event has no counter to read */
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	int fd = perf_open(&a, 0, -1, -1, 0);
	struct perf_event_mmap_page *pg = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	CU_ASSERT_EQUAL(pg->cap_user_rdpmc, 0);
	CU_ASSERT_EQUAL(pg->index, 0);
	munmap(pg, page_size());
	close(fd);
}

/* __perf_event_disable schedules out the event or its group alone (group_sched_out, event_sched_out), and so
 * does a close (__perf_remove_from_context): every other event keeps its counter until the next full
 * reschedule (an enable's ctx_resched, a rotation, a context switch). A program that reads its counters in
 * user space sees the same index in its page before and after. Group A = {P0} and group B = {P1, cycles} on
 * the two programmable counters: disabling A leaves B's P1 on its counter (the emulator's full pass moved it
 * to A's, the first); so do disabling and closing B's member and closing A. */
static void test_disable_keeps_others_counters(void)
{
	const struct rvemu_event *prog[2] = {NULL, NULL};
	for (size_t i = 0, n = 0; i < model->nevents && n < 2; i++)
		if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE)
			prog[n++] = &model->events[i];
	if (!prog[1] || model->prog_counters < 2)
		return; /* two programmable counters needed */
	struct perf_event_attr a;
	attr_for_event(&a, prog[0]);
	a.disabled = 0;
	int fa = perf_open(&a, 0, -1, -1, 0);
	attr_for_event(&a, prog[1]);
	a.disabled = 0;
	int fb = perf_open(&a, 0, -1, -1, 0);
	attr_for_event(&a, &model->events[0]);
	a.disabled = 0;
	int fc = perf_open(&a, 0, -1, fb, 0); /* a member of B's group */
	CU_ASSERT_FATAL(fa >= 0 && fb >= 0 && fc >= 0);
	struct perf_event_mmap_page *pa = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fa, 0),
	                            *pb = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fb, 0);
	CU_ASSERT_FATAL(pa != MAP_FAILED && pb != MAP_FAILED);
	/* the pages' next update makes them readable (test_mmap_page_user_read) */
	CU_ASSERT_EQUAL(ioctl(fa, PERF_EVENT_IOC_RESET, 0), 0);
	CU_ASSERT_EQUAL(ioctl(fb, PERF_EVENT_IOC_RESET, 0), 0);
	run_for_ns(1000000);
	uint32_t ia = pa->index, ib = pb->index;
	CU_ASSERT(ia >= 4 && ib >= 4 && ia != ib); /* hpmcounter3 and up, one each */
	CU_ASSERT_EQUAL(ioctl(fa, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(pa->index, 0);
	CU_ASSERT_EQUAL(pb->index, ib); /* B kept its counter */
	if (pb->index != ib)
		fprintf(stderr, "  B moved from index %u to %u when A was disabled\n", ib, pb->index);
	run_for_ns(1000000);
	CU_ASSERT_EQUAL(pb->index, ib);
	CU_ASSERT_EQUAL(ioctl(fc, PERF_EVENT_IOC_DISABLE, 0), 0); /* a member: B's leader stays on */
	CU_ASSERT_EQUAL(pb->index, ib);
	close(fc); /* __perf_remove_from_context: event_sched_out of that event only */
	CU_ASSERT_EQUAL(pb->index, ib);
	close(fa);
	CU_ASSERT_EQUAL(pb->index, ib);
#if !defined(__riscv) /* (on riscv64 the test maps only hpmcounter3: counter_csr_read) */
	uint64_t user = 0, sys = 0;
	CU_ASSERT_EQUAL(user_read(pb, &user), 0);
	CU_ASSERT_EQUAL(read(fb, &sys, sizeof(sys)), (ssize_t)sizeof(sys));
	if (virtual_clock)
		CU_ASSERT_EQUAL(user, sys);
#endif
	munmap(pa, page_size());
	munmap(pb, page_size());
	close(fb);
}

/* -------------------------------------------------------------------------------------- throttling */
/* __perf_event_account_interrupt: more than perf_event_max_sample_rate / HZ (100000 / 250 = 400) overflows
 * of one event within one tick stop it until the next tick, with PERF_RECORD_THROTTLE / UNTHROTTLE. */
static void test_throttle(void)
{
	if (!virtual_clock)
		return; /* the tick-exact numbers need the virtual clock; the PAPI tests cover cputime */
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000); /* every us: 4000 per 4 ms tick */
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	size_t len = page_size() * (1 + 64);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(m != MAP_FAILED);
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	uint64_t tick = 4000ull * model->freq_mhz, t0 = read_count(fd);
	api.advance(10 * tick); /* 10 ticks of thread time: 10 or 11 tick intervals, by alignment */
	uint64_t counted = read_count(fd) - t0;
	api.get_stats(&s1);
	unsigned samples = 0, thr = 0, unthr = 0;
	walk_records(m, &samples, &thr, &unthr, NULL, 0);
	uint64_t throttles = s1.throttles - s0.throttles;
	CU_ASSERT(throttles == 10 || throttles == 11);
	CU_ASSERT_EQUAL(thr, throttles);
	CU_ASSERT(unthr + 1 >= thr && unthr <= thr);
	CU_ASSERT(samples >= 400 * 9 && samples <= 400 * (throttles + 1)); /* at most 400 in any tick */
	if (samples < 400 * 9 || samples > 400 * (throttles + 1))
		fprintf(stderr, "  throttling: %u samples, %llu throttles\n", samples,
		        (unsigned long long)throttles);
	/* a throttled event is stopped: it counted only its first 400 us of each tick */
	CU_ASSERT(counted < 10 * 4000000ull / 4);
	CU_ASSERT(counted >= 1000ull * samples);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	munmap(m, len);
	close(fd);
}

/* perf_copy_attr (Linux 6.3+): on E2BIG the kernel writes back the size it knows, PERF_ATTR_SIZE_VER8 = 136
 * (config3 at byte 128); bytes up to 136 are the kernel's (config3, which no riscv PMU reads), zero bytes
 * past them are accepted, a non-zero one is E2BIG. */
static void test_attr_size(void)
{
	union {
		struct perf_event_attr a;
		unsigned char b[256];
	} u;
	memset(&u, 0, sizeof(u));
	attr_init(&u.a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	u.a.size = 32; /* below PERF_ATTR_SIZE_VER0 */
	CU_ASSERT_EQUAL(perf_open(&u.a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, E2BIG);
	CU_ASSERT_EQUAL(u.a.size, 136);
	u.a.size = 200;
	u.b[140] = 1; /* past what the kernel knows */
	CU_ASSERT_EQUAL(perf_open(&u.a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, E2BIG);
	CU_ASSERT_EQUAL(u.a.size, 136);
	u.a.size = 200;
	u.b[140] = 0;
	u.b[130] = 7; /* config3: the kernel's own field */
	int fd = perf_open(&u.a, 0, -1, -1, 0);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	u.a.size = 5000; /* above a page */
	CU_ASSERT_EQUAL(perf_open(&u.a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, E2BIG);
	CU_ASSERT_EQUAL(u.a.size, 136);
}

/* perf_ioctl PERF_EVENT_IOC_PAUSE_OUTPUT (rb_toggle_paused): EINVAL without a buffer; with one, 0, and while
 * paused perf_output_begin writes nothing and counts every record lost: read_format LOST says how many, and
 * the first record after resuming is a PERF_RECORD_LOST with that number. */
static void test_pause_output(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000); /* 1 ms */
	a.read_format = PERF_FORMAT_LOST;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	struct perf_event_mmap_page *pg = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	run_for_ns(20000000); /* 20 ms */
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), 0); /* nothing written */
	uint64_t v[2] = {0};
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), (ssize_t)sizeof(v));
	if (virtual_clock) {
		CU_ASSERT_EQUAL(v[1], 20);
	} else {
		CU_ASSERT(v[1] >= 10);
	}
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	run_for_ns(10000000);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	struct perf_event_header h;
	uint64_t lost[2] = {0}; /* id, lost */
	CU_ASSERT_FATAL(__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) >= sizeof(h) + sizeof(lost));
	memcpy(&h, data, sizeof(h));
	memcpy(lost, data + sizeof(h), sizeof(lost));
	CU_ASSERT_EQUAL(h.type, PERF_RECORD_LOST);
	CU_ASSERT_EQUAL(lost[1], v[1]);
	unsigned samples = 0;
	walk_records(pg, &samples, NULL, NULL, NULL, 0);
	CU_ASSERT(samples >= 1);
	munmap(pg, ring_len());
	close(fd);
}

/* ------------------------------------------------------------------------------ sample_type fields */
static void open_sampling_expect(uint64_t sample_type, void (*tweak)(struct perf_event_attr *), int err,
                                 const char *what)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000);
	a.size = sizeof(a); /* the fields past PERF_ATTR_SIZE_VER0 count */
	a.sample_type = sample_type;
	if (tweak)
		tweak(&a);
	errno = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	if (err) {
		CU_ASSERT_EQUAL(fd, -1);
		CU_ASSERT_EQUAL(errno, err);
	} else {
		CU_ASSERT(fd >= 0);
	}
	if ((err && (fd != -1 || errno != err)) || (!err && fd < 0))
		fprintf(stderr, "  %s: fd %d errno %d, expected %d\n", what, fd, errno, err);
	if (fd >= 0)
		close(fd);
}

static void regs_pc_sp(struct perf_event_attr *a)
{
	a->sample_regs_user = 1u << 0 | 1u << 2;
	a->sample_regs_intr = 1u << 0;
	a->sample_stack_user = 64;
}
static void regs_none(struct perf_event_attr *a)
{
	a->sample_regs_user = 0;
}
static void regs_outside(struct perf_event_attr *a)
{
	a->sample_regs_user = 1ull << 32; /* past PERF_REG_RISCV_MAX */
}
static void intr_outside(struct perf_event_attr *a)
{
	a->sample_regs_intr = 1ull << 40;
}
static void stack_too_big(struct perf_event_attr *a)
{
	a->sample_stack_user = 0xffff;
}
static void stack_unaligned(struct perf_event_attr *a)
{
	a->sample_stack_user = 12;
}
static void max_stack_127(struct perf_event_attr *a)
{
	a->sample_max_stack = 127;
}
static void max_stack_128(struct perf_event_attr *a)
{
	a->sample_max_stack = 128;
}
static void branch_any(struct perf_event_attr *a)
{
	a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
}
static void branch_plm_only(struct perf_event_attr *a)
{
	a->branch_sample_type = PERF_SAMPLE_BRANCH_USER;
}

/* perf_copy_attr, perf_reg_validate (riscv), get_callchain_buffers, riscv_pmu_event_init: every sample_type
 * bit Linux 6.6 on riscv accepts opens; the masks, the stack dump size and sample_max_stack are checked as
 * the kernel does (EOVERFLOW past sysctl perf_event_max_stack = 127); no riscv PMU has a branch stack. */
static void test_sample_type_checks(void)
{
	const uint64_t accepted[] = {PERF_SAMPLE_CALLCHAIN,      PERF_SAMPLE_REGS_USER,
	                             PERF_SAMPLE_STACK_USER,     PERF_SAMPLE_RAW,
	                             PERF_SAMPLE_REGS_INTR,      PERF_SAMPLE_WEIGHT,
	                             PERF_SAMPLE_DATA_SRC,       PERF_SAMPLE_TRANSACTION,
	                             PERF_SAMPLE_PHYS_ADDR,      PERF_SAMPLE_DATA_PAGE_SIZE,
	                             PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT};
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		open_sampling_expect(PERF_SAMPLE_IP | accepted[i], regs_pc_sp, 0,
		                     "an accepted sample_type bit");
	open_sampling_expect(PERF_SAMPLE_REGS_USER, regs_none, EINVAL, "REGS_USER, empty mask");
	open_sampling_expect(PERF_SAMPLE_REGS_USER, regs_outside, EINVAL, "REGS_USER, bit 32");
	open_sampling_expect(PERF_SAMPLE_REGS_INTR, intr_outside, EINVAL, "REGS_INTR, bit 40");
	open_sampling_expect(PERF_SAMPLE_REGS_INTR, NULL, EINVAL, "REGS_INTR, empty mask");
	open_sampling_expect(PERF_SAMPLE_STACK_USER, stack_too_big, EINVAL, "STACK_USER 65535");
	open_sampling_expect(PERF_SAMPLE_STACK_USER, stack_unaligned, EINVAL, "STACK_USER 12");
	open_sampling_expect(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, NULL, EINVAL, "both weights");
	open_sampling_expect(PERF_SAMPLE_CALLCHAIN, max_stack_127, 0, "sample_max_stack 127");
	open_sampling_expect(PERF_SAMPLE_CALLCHAIN, max_stack_128, EOVERFLOW, "sample_max_stack 128");
	open_sampling_expect(PERF_SAMPLE_IP, max_stack_128, 0, "sample_max_stack without CALLCHAIN");
	open_sampling_expect(PERF_SAMPLE_BRANCH_STACK, branch_any, EOPNOTSUPP, "BRANCH_STACK");
	open_sampling_expect(PERF_SAMPLE_BRANCH_STACK, branch_plm_only, EINVAL,
	                     "BRANCH_STACK, no branch type");
	/* a counting event is checked the same way (perf_copy_attr does not look at the period) */
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = 200;
	CU_ASSERT_EQUAL(perf_open(&a, 0, -1, -1, 0), -1);
	CU_ASSERT_EQUAL(errno, EOVERFLOW);
}

#define STACK_CANARY 0x5a17c0de0ddba11ull
static void *volatile spin_return; /* where spin_with_frame returns to: the call chain's third entry */

/* A loop with a frame pointer and a canary in its frame: the samples taken in it have a call chain through
 * the frame pointer and a stack dump from its sp that holds the canary. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void spin_with_frame(uint64_t ns)
{
	// cppcheck-suppress constVariable ; volatile: it must be stored in the frame
	volatile uint64_t canary[2] = {STACK_CANARY, STACK_CANARY};
	spin_return = __builtin_return_address(0);
	if (virtual_clock) {
		run_for_ns(ns);
	} else { /* the loop itself, so the samples are taken in this frame */
		struct timespec t0, t;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		volatile uint64_t x = 0;
		do {
			for (int i = 0; i < 10000; i++)
				x += (uint64_t)i * 3;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		} while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
		             (uint64_t)t0.tv_nsec <
		         ns);
	}
	CU_ASSERT_EQUAL(canary[0] + canary[1], 2 * STACK_CANARY);
}

/* perf_output_sample and perf_prepare_sample on riscv: CALLCHAIN (get_perf_callchain, riscv's frame-pointer
 * perf_callchain_user), RAW (4 zero bytes for a PMU without raw data), REGS_USER / REGS_INTR (the abi and
 * the registers of the mask, from the interrupted program), STACK_USER (size, the stack from sp, dyn_size),
 * WEIGHT 0, DATA_SRC PERF_MEM_NA, TRANSACTION 0, PHYS_ADDR 0, DATA_PAGE_SIZE 0 (no data address),
 * CODE_PAGE_SIZE of the pc's page. Samples taken with no program registers (virtual clock: in the control
 * API; a system call) have ABI_NONE, no stack and a one-entry user chain. */
/* spin_with_frame's caller, with a frame pointer too: riscv's perf_callchain_user stores the interrupted ra
 * in place of the first frame's saved return address, so there the chain reaches spin_with_frame's caller's
 * return address (outer_return) one entry later. */
static void *volatile outer_return;
__attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls"))) static void
spin_in_frame(uint64_t ns)
{
	outer_return = __builtin_return_address(0);
	spin_with_frame(ns);
}

static void test_sample_fields(void)
{
	struct perf_event_attr a;
	clock_sampling_attr(&a, 1000000);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
	                PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
	                PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR |
	                PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
	a.size = sizeof(a);
	a.sample_regs_user = 1u << 0 | 1u << 2; /* pc, sp */
	a.sample_regs_intr = 1u << 0;
	a.sample_stack_user = 256;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	const size_t len = page_size() * 17;
	struct perf_event_mmap_page *pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	spin_in_frame(20000000);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	const uint64_t mem_na = PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) |
	                        PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, NA) | PERF_MEM_S(LVLNUM, NA);
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = 0;
	unsigned samples = 0, with_regs = 0, canary_seen = 0, caller_seen = 0, bad = 0;
	static uint64_t w[8192];
	while (tail < head && head - tail <= pg->data_size) {
		struct perf_event_header h;
		memcpy(&h, data + tail % pg->data_size, sizeof(h));
		if (h.size < sizeof(h))
			break;
		for (size_t i = 0; i < h.size; i++)
			((unsigned char *)w)[i] = data[(tail + i) % pg->data_size];
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		samples++;
		size_t k = 1, end = h.size / 8;
		int kernel = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		uint64_t ip = w[k++], nr = w[k++];
		bad += nr < 2 || nr > 1 + 127 || w[k] != (kernel ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER) ||
		       w[k + 1] != ip;
		/* x86: the frame's return address follows the pc; riscv: the interrupted ra comes first and
		 * stands for the first frame's, then the caller's frame gives its return address */
#if defined(__riscv)
		if (nr >= 4 && w[k + 3] == (uint64_t)(uintptr_t)outer_return)
			caller_seen++;
#else
		if (nr >= 3 && w[k + 2] == (uint64_t)(uintptr_t)spin_return)
			caller_seen++;
#endif
		k += nr;
		uint32_t raw[2];
		memcpy(raw, &w[k++], sizeof(raw));
		bad += raw[0] != 4 || raw[1] != 0;
		uint64_t abi = w[k++];
		uint64_t sp = 0;
		if (abi == PERF_SAMPLE_REGS_ABI_64) {
			with_regs++;
			bad += w[k] != ip;
			sp = w[k + 1];
			k += 2;
		} else {
			bad += abi != PERF_SAMPLE_REGS_ABI_NONE || !(virtual_clock || kernel || nr == 2);
		}
		uint64_t ssize = w[k++];
		bad += ssize != (abi == PERF_SAMPLE_REGS_ABI_64 ? 256 : 0) || !sp != !ssize;
		if (ssize) {
			for (size_t i = 0; i + 1 < ssize / 8; i++)
				if (w[k + i] == STACK_CANARY && w[k + i + 1] == STACK_CANARY)
					canary_seen++;
			k += ssize / 8;
			bad += w[k++] > ssize; /* dyn_size */
		}
		bad += w[k++] != 0;      /* weight */
		bad += w[k++] != mem_na; /* data_src */
		bad += w[k++] != 0;      /* transaction */
		uint64_t iabi = w[k++];
		bad += iabi != abi;
		if (iabi == PERF_SAMPLE_REGS_ABI_64)
			bad += w[k++] != ip;
		bad += w[k++] != 0; /* phys_addr */
		bad += w[k++] != 0; /* data page size */
		bad += w[k++] != (kernel ? 0 : page_size());
		bad += k != end;
	}
	CU_ASSERT(samples >= (virtual_clock ? 20u : 10u));
	CU_ASSERT_EQUAL(bad, 0);
	if (!virtual_clock) { /* the alarm interrupted the program: its registers, stack and callers */
		CU_ASSERT(with_regs >= 1);
		CU_ASSERT(canary_seen >= 1);
		CU_ASSERT(caller_seen >= 1);
	} else {
		CU_ASSERT_EQUAL(with_regs, 0);
	}
	if (bad || (!virtual_clock && (!canary_seen || !caller_seen)))
		fprintf(stderr, "  samples %u with registers %u canary %u caller %u bad %u\n", samples,
		        with_regs, canary_seen, caller_seen, bad);
	munmap(pg, len);
	close(fd);
}

/* -------------------------------------------------------------------------------- side-band records */
#define SB_MAX_RECORDS 512
struct sb_record {
	struct perf_event_header h;
	uint64_t w[520]; /* the record after its header */
};

/* The records in a ring, copied out (wrapping) and consumed. */
static unsigned sb_collect(struct perf_event_mmap_page *pg, struct sb_record *out, unsigned max)
{
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	unsigned n = 0;
	while (tail < head && n < max) {
		struct sb_record *r = &out[n];
		for (size_t i = 0; i < sizeof(r->h); i++)
			((unsigned char *)&r->h)[i] = data[(tail + i) % pg->data_size];
		if (r->h.size < sizeof(r->h) || r->h.size > sizeof(*r))
			break;
		for (size_t i = sizeof(r->h); i < r->h.size; i++)
			((unsigned char *)r)[i] = data[(tail + i) % pg->data_size];
		tail += r->h.size;
		n++;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* The sample_id trailer (TID | TIME) is the record's last two words. */
static int sb_trailer_ok(const struct sb_record *r, pid_t tid)
{
	size_t words = (r->h.size - sizeof(r->h)) / 8;
	uint64_t tidw = r->w[words - 2], time = r->w[words - 1];
	return tidw == ((uint64_t)(uint32_t)getpid() | (uint64_t)(uint32_t)tid << 32) &&
	       (time > 0 || virtual_clock);
}

/* An MMAP2 record covering `addr` whose file is `ino`, or NULL. */
static const struct sb_record *sb_mmap2_at(const struct sb_record *r, unsigned n, uint64_t addr, uint64_t ino)
{
	for (unsigned i = 0; i < n; i++)
		if (r[i].h.type == PERF_RECORD_MMAP2 && r[i].w[1] <= addr && addr < r[i].w[1] + r[i].w[2] &&
		    r[i].w[5] == ino)
			return &r[i];
	return NULL;
}

static int sb_count(const struct sb_record *r, unsigned n, uint32_t type)
{
	int c = 0;
	for (unsigned i = 0; i < n; i++)
		c += r[i].h.type == type;
	return c;
}

static void sb_attr(struct perf_event_attr *a)
{
	attr_init(a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY); /* what perf record opens for side-band */
	a->size = sizeof(*a);
	a->comm = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
}

static pid_t sb_thread_tid;
static void *sb_thread_quiet(void *arg)
{
	(void)arg;
	sb_thread_tid = test_gettid();
	return NULL;
}

struct sb_own {
	int fd;
	struct perf_event_mmap_page *pg;
	pid_t tid;
};
/* A thread that opens a task event on itself and exits: its EXIT record stays in the ring. */
static void *sb_thread_own(void *arg)
{
	struct sb_own *o = arg;
	struct perf_event_attr a;
	sb_attr(&a);
	o->tid = test_gettid();
	o->fd = perf_open(&a, 0, -1, -1, 0);
	if (o->fd < 0)
		return NULL;
	o->pg = mmap(NULL, ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0);
	if (o->pg != MAP_FAILED)
		ioctl(o->fd, PERF_EVENT_IOC_ENABLE, 0);
	return NULL;
}

/* perf_event_comm, perf_event_mmap, perf_event_task for the calling process: once the event is enabled into
 * a buffer, COMM (the thread's name) and MMAP2 of every executable mapping that already exists (what exec
 * would have written: the program's own text, with its inode); then MMAP2 for mmap(PROT_EXEC) of a file and
 * of anonymous memory ("//anon") and for the text of a library dlopen loads; COMM for prctl(PR_SET_NAME);
 * FORK for a thread created (in its creator's events) and for fork(); EXIT for an exiting thread (in its own
 * events). Each with the sample_id trailer of sample_id_all. */
static void test_sideband(void)
{
	static struct sb_record recs[SB_MAX_RECORDS];
	struct perf_event_attr a;
	sb_attr(&a);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	const size_t len = page_size() * 33;
	struct perf_event_mmap_page *pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(pg != MAP_FAILED);
	CU_ASSERT_EQUAL(pg->data_head, 0); /* nothing before the event is enabled */
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	unsigned n = sb_collect(pg, recs, SB_MAX_RECORDS);
	char name[32] = "";
	CU_ASSERT_EQUAL(prctl(PR_GET_NAME, name), 0);
	/* the program's own file: fstat of the opened /proc/self/exe (qemu-user answers a stat of the path
	 * with qemu's own binary, an open with the guest program) */
	struct stat exe;
	int exefd = open("/proc/self/exe", O_RDONLY);
	CU_ASSERT_FATAL(exefd >= 0 && fstat(exefd, &exe) == 0);
	CU_ASSERT(n >= 2);
	CU_ASSERT_EQUAL(recs[0].h.type, PERF_RECORD_COMM);
	CU_ASSERT_EQUAL(recs[0].w[0], (uint64_t)(uint32_t)getpid() | (uint64_t)(uint32_t)test_gettid() << 32);
	CU_ASSERT_STRING_EQUAL((const char *)&recs[0].w[1], name);
	const struct sb_record *text = sb_mmap2_at(recs, n, (uint64_t)(uintptr_t)&test_sideband, exe.st_ino);
	CU_ASSERT_PTR_NOT_NULL(text);
	unsigned bad = 0;
	for (unsigned i = 0; i < n; i++)
		bad += !sb_trailer_ok(&recs[i], test_gettid());
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	CU_ASSERT_EQUAL(sb_collect(pg, recs, SB_MAX_RECORDS), 0); /* once per event */

	/* mmap(PROT_EXEC) of a file, and of anonymous memory */
	void *p = mmap(NULL, page_size(), PROT_READ | PROT_EXEC, MAP_PRIVATE, exefd, 0);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	void *anon = mmap(NULL, page_size(), PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(anon != MAP_FAILED);
	void *data = mmap(NULL, page_size(), PROT_READ, MAP_PRIVATE, exefd, 0); /* not executable: nothing */
	CU_ASSERT_FATAL(data != MAP_FAILED);
	n = sb_collect(pg, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 2);
	if (n >= 2) {
		CU_ASSERT_EQUAL(recs[0].h.type, PERF_RECORD_MMAP2);
		CU_ASSERT_EQUAL(recs[0].w[1], (uint64_t)(uintptr_t)p);
		CU_ASSERT_EQUAL(recs[0].w[2], page_size());
		CU_ASSERT_EQUAL(recs[0].w[3], 0);          /* pgoff */
		CU_ASSERT_EQUAL(recs[0].w[5], exe.st_ino); /* ino */
		CU_ASSERT_EQUAL((uint32_t)recs[0].w[7], PROT_READ | PROT_EXEC);
		CU_ASSERT_EQUAL(recs[0].h.misc, PERF_RECORD_MISC_USER);
		CU_ASSERT_EQUAL(recs[1].w[1], (uint64_t)(uintptr_t)anon);
		CU_ASSERT_STRING_EQUAL((const char *)&recs[1].w[8], "//anon");
		CU_ASSERT(sb_trailer_ok(&recs[0], test_gettid()));
	}
	munmap(p, page_size());
	munmap(anon, page_size());
	munmap(data, page_size());
	close(exefd);

	/* dlopen of a library not loaded yet: its text; again: nothing (no new mapping) */
	CU_ASSERT_PTR_NULL(dlopen("libutil.so.1", RTLD_LAZY | RTLD_NOLOAD));
	void *h = dlopen("libutil.so.1", RTLD_LAZY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	n = sb_collect(pg, recs, SB_MAX_RECORDS);
	CU_ASSERT(n >= 1 && sb_count(recs, n, PERF_RECORD_MMAP2) == (int)n);
	if (n >= 1)
		CU_ASSERT_PTR_NOT_NULL(strstr((const char *)&recs[0].w[8], "libutil"));
	void *h2 = dlopen("libutil.so.1", RTLD_LAZY);
	CU_ASSERT_EQUAL(sb_collect(pg, recs, SB_MAX_RECORDS), 0);
	dlclose(h2);
	dlclose(h);

	/* prctl(PR_SET_NAME) */
	CU_ASSERT_EQUAL(prctl(PR_SET_NAME, "emu-sideband"), 0);
	n = sb_collect(pg, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(recs[0].h.type, PERF_RECORD_COMM);
	CU_ASSERT_STRING_EQUAL((const char *)&recs[0].w[1], "emu-sideband");
	prctl(PR_SET_NAME, name);
	sb_collect(pg, recs, SB_MAX_RECORDS);

	/* a thread: FORK {pid, ppid = pid, tid, ptid = creator} in its creator's events */
	pthread_t th;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, sb_thread_quiet, NULL) == 0);
	pthread_join(th, NULL);
	n = sb_collect(pg, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(recs[0].h.type, PERF_RECORD_FORK);
	CU_ASSERT_EQUAL(recs[0].w[0], (uint64_t)(uint32_t)getpid() | (uint64_t)(uint32_t)getpid() << 32);
	CU_ASSERT_EQUAL(recs[0].w[1], (uint64_t)(uint32_t)sb_thread_tid | (uint64_t)(uint32_t)test_gettid()
	                                                                      << 32);
	CU_ASSERT(sb_trailer_ok(&recs[0], test_gettid()));

	/* fork(): FORK {child, parent, child, this thread} */
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	n = sb_collect(pg, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(recs[0].h.type, PERF_RECORD_FORK);
	CU_ASSERT_EQUAL(recs[0].w[0], (uint64_t)(uint32_t)child | (uint64_t)(uint32_t)getpid() << 32);
	CU_ASSERT_EQUAL(recs[0].w[1], (uint64_t)(uint32_t)child | (uint64_t)(uint32_t)test_gettid() << 32);

	/* a thread's own event: EXIT {pid, ppid, tid, ptid = ppid} when it returns */
	struct sb_own own = {-1, MAP_FAILED, 0};
	CU_ASSERT_FATAL(pthread_create(&th, NULL, sb_thread_own, &own) == 0);
	pthread_join(th, NULL);
	CU_ASSERT_FATAL(own.fd >= 0 && own.pg != MAP_FAILED);
	n = sb_collect(own.pg, recs, SB_MAX_RECORDS);
	CU_ASSERT(n >= 1);
	CU_ASSERT_EQUAL(sb_count(recs, n, PERF_RECORD_EXIT), 1);
	const struct sb_record *ex = n ? &recs[n - 1] : NULL;
	if (ex) {
		CU_ASSERT_EQUAL(ex->h.type, PERF_RECORD_EXIT);
		CU_ASSERT_EQUAL(ex->w[0], (uint64_t)(uint32_t)getpid() | (uint64_t)(uint32_t)getppid() << 32);
		CU_ASSERT_EQUAL(ex->w[1], (uint64_t)(uint32_t)own.tid | (uint64_t)(uint32_t)getppid() << 32);
		CU_ASSERT(sb_trailer_ok(ex, own.tid));
	}
	munmap(own.pg, ring_len());
	close(own.fd);
	munmap(pg, len);
	close(fd);
}

/* perf_iterate_ctx with event_filter_match: of one event per CPU on this thread (perf record's layout), only
 * the one on the thread's CPU gets its records, existing mappings and a COMM alike (perf test 28 counts
 * exactly one COMM per prctl). */
static void test_sideband_per_cpu(void)
{
	static struct sb_record recs[SB_MAX_RECORDS];
	enum { NCPU = 4 };
	int fds[NCPU];
	struct perf_event_mmap_page *pgs[NCPU];
	char name[32] = "";
	CU_ASSERT_EQUAL(prctl(PR_GET_NAME, name), 0);
	for (int c = 0; c < NCPU; c++) {
		struct perf_event_attr a;
		sb_attr(&a);
		fds[c] = perf_open(&a, 0, c, -1, 0);
		CU_ASSERT_FATAL(fds[c] >= 0);
		pgs[c] = mmap(NULL, page_size() * 17, PROT_READ | PROT_WRITE, MAP_SHARED, fds[c], 0);
		CU_ASSERT_FATAL(pgs[c] != MAP_FAILED);
		CU_ASSERT_EQUAL(ioctl(fds[c], PERF_EVENT_IOC_ENABLE, 0), 0);
	}
	unsigned with_existing = 0, with_comm = 0;
	for (int c = 0; c < NCPU; c++)
		with_existing += sb_collect(pgs[c], recs, SB_MAX_RECORDS) > 0;
	CU_ASSERT_EQUAL(prctl(PR_SET_NAME, "emu-percpu"), 0);
	for (int c = 0; c < NCPU; c++) {
		unsigned n = sb_collect(pgs[c], recs, SB_MAX_RECORDS);
		with_comm += n;
		if (n)
			CU_ASSERT_STRING_EQUAL((const char *)&recs[0].w[1], "emu-percpu");
	}
	CU_ASSERT_EQUAL(with_existing, 1);
	CU_ASSERT_EQUAL(with_comm, 1);
	prctl(PR_SET_NAME, name);
	for (int c = 0; c < NCPU; c++) {
		munmap(pgs[c], page_size() * 17);
		close(fds[c]);
	}
}

/* perf_event_mmap_match: an event with only attr.mmap2 gets the executable mappings (no COMM), one with
 * only mmap_data the others (PERF_RECORD_MISC_MMAP_DATA, a file's or "//anon"); mprotect_fixup: a page made
 * executable later is reported again, now executable. */
static void test_sideband_mmap_kinds(void)
{
	static struct sb_record recs[SB_MAX_RECORDS];
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.size = sizeof(a);
	a.mmap2 = 1;
	int fx = perf_open(&a, 0, -1, -1, 0);
	a.mmap2 = 0;
	a.mmap_data = 1;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fx >= 0 && fd >= 0);
	const size_t len = page_size() * 33;
	struct perf_event_mmap_page *px = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fx, 0);
	struct perf_event_mmap_page *pd = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(px != MAP_FAILED && pd != MAP_FAILED);
	CU_ASSERT_EQUAL(ioctl(fx, PERF_EVENT_IOC_ENABLE, 0), 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	unsigned n = sb_collect(px, recs, SB_MAX_RECORDS), bad = 0;
	CU_ASSERT(n >= 1);
	for (unsigned i = 0; i < n; i++)
		bad += recs[i].h.type != PERF_RECORD_MMAP2 || !((uint32_t)recs[i].w[7] & PROT_EXEC);
	n = sb_collect(pd, recs, SB_MAX_RECORDS);
	CU_ASSERT(n >= 1);
	for (unsigned i = 0; i < n; i++) /* PERF_RECORD_MMAP: no mmap2 asked for */
		bad += recs[i].h.type != PERF_RECORD_MMAP ||
		       recs[i].h.misc != (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
	CU_ASSERT_EQUAL(bad, 0);
	char *page = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(page != MAP_FAILED);
	CU_ASSERT_EQUAL(sb_collect(px, recs, SB_MAX_RECORDS), 0); /* data: not for the mmap2 event */
	n = sb_collect(pd, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(recs[0].w[1], (uint64_t)(uintptr_t)page);
	CU_ASSERT_STRING_EQUAL((const char *)&recs[0].w[4], "//anon");
	CU_ASSERT_EQUAL(mprotect(page, page_size(), PROT_READ | PROT_EXEC), 0);
	n = sb_collect(px, recs, SB_MAX_RECORDS);
	CU_ASSERT_EQUAL(n, 1); /* the vma holding the page (it may have merged with a neighbour) */
	CU_ASSERT(recs[0].w[1] <= (uint64_t)(uintptr_t)page &&
	          (uint64_t)(uintptr_t)page < recs[0].w[1] + recs[0].w[2]);
	CU_ASSERT_EQUAL((uint32_t)recs[0].w[7], PROT_READ | PROT_EXEC);
	CU_ASSERT_EQUAL(sb_collect(pd, recs, SB_MAX_RECORDS), 0);
	munmap(page, page_size());
	munmap(px, len);
	munmap(pd, len);
	close(fx);
	close(fd);
}

/* ------------------------------------------------------------------- handlers inside a system call */
/* A system call is atomic for the caller's signal handlers: a handler that reads an event while its thread
 * was inside the emulator (holding its lock, halfway through a read) must neither wait for that lock forever
 * nor see half-done work. Another thread keeps signalling this one while it reads the event; the emulator
 * counts the signals that landed inside it and were delivered as it left (signals_deferred), so the test
 * knows the hard case happened. A watchdog turns a deadlock into a failure (SIGALRM's default action). */
/* The verdict needs the other thread to have run while this one read: on a loaded host a new thread may not
 * get a CPU for all of a short burst of reads ("400000 reads, 1 in the handler, 0 signals deferred" under
 * stress-ng: the kicker never ran). So the reads wait until the kicker has started and go on until 20
 * signals were handled and 20 deferred, bounded by a count no starved host reaches before the watchdog. */
#define ATOMIC_READS_MAX      50000000u
#define ATOMIC_SIGNALS_WANTED 20
static int atomic_fd = -1;
static volatile sig_atomic_t handler_reads, handler_bad, stop_kicking, kicker_started;

static void read_in_handler(int sig)
{
	(void)sig;
	int saved = errno;
	uint64_t v;
	if (read(atomic_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		handler_reads++;
	else
		handler_bad++;
	errno = saved;
}

static void *kick_reader(void *arg)
{
	pthread_t reader = *(pthread_t *)arg;
	kicker_started = 1;
	for (unsigned i = 0; i < 4u * ATOMIC_READS_MAX && !stop_kicking; i++)
		pthread_kill(reader, SIGUSR1);
	return NULL;
}

static void test_handler_reads_inside_syscall(void)
{
	/* valgrind runs one thread at a time and delivers signals only between the emulator's calls: the
	 * window this test needs (a signal landing inside a call) does not exist there, and the kicking
	 * thread may not even run before the reads end. Natively and under ASan it is hit many times. */
	// cppcheck-suppress knownConditionTrueFalse
	if (cunit_running_on_valgrind()) {
		fprintf(stderr, "  (not under valgrind: no signal can land inside an emulated call there)\n");
		return;
	}
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	atomic_fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(atomic_fd >= 0);
	struct sigaction sa, old, now;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = read_in_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGUSR1, &sa, &old) == 0);
	/* the program sees its own handler, not the emulator's trampoline */
	CU_ASSERT(sigaction(SIGUSR1, NULL, &now) == 0 && now.sa_handler == read_in_handler);
	handler_reads = handler_bad = stop_kicking = kicker_started = 0;
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	pthread_t self = pthread_self(), kicker;
	alarm(120);
	CU_ASSERT_FATAL(pthread_create(&kicker, NULL, kick_reader, &self) == 0);
	for (unsigned w = 0; w < ATOMIC_READS_MAX && !kicker_started; w++)
		sched_yield();
	unsigned bad = 0, i;
	for (i = 0; i < ATOMIC_READS_MAX; i++) {
		uint64_t v;
		if (read(atomic_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			bad++;
		if (i % 1000 == 999) {
			api.get_stats(&s1);
			if (s1.signals_deferred - s0.signals_deferred >= ATOMIC_SIGNALS_WANTED &&
			    handler_reads >= ATOMIC_SIGNALS_WANTED)
				break;
		}
	}
	stop_kicking = 1;
	pthread_join(kicker, NULL);
	alarm(0);
	api.get_stats(&s1);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(handler_bad, 0);
	CU_ASSERT(handler_reads > 0);
	CU_ASSERT(s1.signals_deferred > s0.signals_deferred);
	fprintf(stderr, "  %u reads, %d in the handler, %llu signals deferred\n", i, (int)handler_reads,
	        (unsigned long long)(s1.signals_deferred - s0.signals_deferred));
	sigaction(SIGUSR1, &old, NULL);
	close(atomic_fd);
}

/* The program's handlers go behind the emulator's trampoline (fe_signal.c), invisibly: sigaction reports the
 * program's own handler and flags, signal() returns the previous one, SA_RESETHAND still resets after one
 * delivery, the siginfo reaches an SA_SIGINFO handler whole, and SIG_IGN and SIG_DFL are the kernel's. */
static volatile sig_atomic_t usr2_calls, usr2_value;

static void usr2_plain(int sig)
{
	(void)sig;
	usr2_calls++;
}

static void usr2_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr2_calls++;
	usr2_value = si->si_code == SI_QUEUE ? si->si_value.sival_int : -1;
}

/* valgrind delivers a signal a thread sends itself later than the kernel (at once): wait, boundedly */
static void wait_usr2_calls(int n)
{
	for (unsigned i = 0; i < 1000000 && usr2_calls < n; i++)
		sched_yield();
}

#if !defined(__riscv) /* registered only where the test program can exec itself (below) */
/* An event survives exec of the process that opened it (its fd has no FD_CLOEXEC): the new image goes on
 * counting it from what it had (virtual clock: 1000 cycles before the exec, 500 after it: 1500), with its
 * times. A child of the test does it: it opens the event, advances, and execs test_emu, which reads it. */
static void test_event_survives_exec(void)
{
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		struct perf_event_attr a;
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		int fd = perf_open(&a, 0, -1, -1, 0);
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
			_exit(4);
		api.advance(1000);
		char num[16];
		snprintf(num, sizeof(num), "%d", fd);
		setenv("EMU_TEST_EXEC_FD", num, 1);
		setenv("EMU_TEST_EXEC_WANT", "1500", 1);
		/* argv[0], not /proc/self/exe: under valgrind that is valgrind's tool */
		const char *path = self_path && strchr(self_path, '/') ? self_path : "/proc/self/exe";
		char *argv[] = {(char *)path, NULL};
		execv(path, argv);
		_exit(5);
	}
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	CU_ASSERT(WIFEXITED(st));
	CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
}
#endif

/* An event fd passed over SCM_RIGHTS (a unix socket) to another process reads there what the event counts:
 * the kernel passes the event's file, and a plain memfd would read 0 bytes. Virtual clock: exactly the 123456
 * cycles the sender advanced after sending it; a read_format with times gives them too. */
static int send_fd(int sock, int fd)
{
	char byte = 'e';
	struct iovec io = {&byte, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec io = {&byte, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = -1;
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

static void test_event_fd_over_scm_rights(void)
{
	int sv[2], done[2];
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CU_ASSERT_FATAL(pipe(done) == 0);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		close(sv[0]);
		close(done[1]);
		int fd = recv_fd(sv[1]);
		char c;
		if (fd < 0 || read(done[0], &c, 1) != 1)
			_exit(10);
		uint64_t v[3] = {0, 0, 0};
		ssize_t n = read(fd, v, sizeof(v));
		/* 0: the count and both times; 2: a wrong count; 3: not the read_format's 24 bytes */
		_exit(n != (ssize_t)sizeof(v) ? 3 : v[0] != 123456 || v[1] == 0 || v[2] != v[1] ? 2 : 0);
	}
	close(sv[1]);
	close(done[0]);
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	CU_ASSERT_EQUAL(send_fd(sv[0], fd), 0);
	api.advance(123456);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(write(done[1], "x", 1), 1);
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	CU_ASSERT(WIFEXITED(st));
	CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
	close(fd);
	close(sv[0]);
	close(done[1]);
}

/* The sender of an event fd ends; its block of the run's shared memory is free and taken by the next event
 * shared (here one this process sends itself): the received fd still reads what it read last (the 123456
 * cycles under the virtual clock), never the other event's values. */
static void test_event_fd_over_scm_rights_sender_gone(void)
{
	int sv[2], done[2], quit[2];
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CU_ASSERT_FATAL(pipe(done) == 0 && pipe(quit) == 0);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		close(sv[0]);
		close(done[0]);
		close(quit[1]);
		struct perf_event_attr a;
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		int fd = perf_open(&a, 0, -1, -1, 0);
		char c;
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0 || send_fd(sv[1], fd) != 0)
			_exit(10);
		api.advance(123456);
		if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0 || write(done[1], "d", 1) != 1)
			_exit(11);
		_exit(read(quit[0], &c, 1) == 0 ? 0 : 12); /* until the parent closes its end */
	}
	close(sv[1]);
	close(done[1]);
	close(quit[0]);
	int fd = recv_fd(sv[0]);
	CU_ASSERT(fd >= 0);
	char c;
	CU_ASSERT_EQUAL(read(done[0], &c, 1), 1);
	uint64_t first = 0, v = 0;
	CU_ASSERT_EQUAL(read(fd, &first, sizeof(first)), (ssize_t)sizeof(first));
	CU_ASSERT(first > 0);
	if (virtual_clock)
		CU_ASSERT_EQUAL(first, 123456);
	close(quit[1]);
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* another event shared: it takes the first free block, the sender's */
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	int other = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT(other >= 0);
	int self[2];
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, self) == 0);
	CU_ASSERT_EQUAL(send_fd(self[0], other), 0);
	int other_copy = recv_fd(self[1]);
	CU_ASSERT(other_copy >= 0);
	api.advance(1000);
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v, first);
	close(other_copy);
	close(other);
	close(self[0]);
	close(self[1]);
	close(fd);
	close(sv[0]);
	close(done[0]);
}

static void test_handlers_behind_trampoline(void)
{
	struct sigaction sa, old, now;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = usr2_info;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	CU_ASSERT_FATAL(sigaction(SIGUSR2, &sa, &old) == 0);
	CU_ASSERT(sigaction(SIGUSR2, NULL, &now) == 0);
	CU_ASSERT(now.sa_sigaction == usr2_info);
	CU_ASSERT((now.sa_flags & (SA_SIGINFO | SA_RESETHAND | SA_RESTART)) ==
	          (SA_SIGINFO | SA_RESETHAND | SA_RESTART));
	CU_ASSERT(sigismember(&now.sa_mask, SIGUSR1));
	usr2_calls = 0;
	usr2_value = 0;
	CU_ASSERT(sigqueue(getpid(), SIGUSR2, (union sigval){.sival_int = 4242}) == 0);
	wait_usr2_calls(1);
	CU_ASSERT_EQUAL(usr2_calls, 1);
	CU_ASSERT_EQUAL(usr2_value, 4242);
	CU_ASSERT(sigaction(SIGUSR2, NULL, &now) == 0 && now.sa_handler == SIG_DFL); /* reset after one */
	CU_ASSERT(signal(SIGUSR2, usr2_plain) == SIG_DFL);
	CU_ASSERT(signal(SIGUSR2, SIG_IGN) == usr2_plain);
	CU_ASSERT(raise(SIGUSR2) == 0); /* ignored by the kernel */
	CU_ASSERT(signal(SIGUSR2, usr2_plain) == SIG_IGN);
	CU_ASSERT(raise(SIGUSR2) == 0);
	wait_usr2_calls(2);
	CU_ASSERT_EQUAL(usr2_calls, 2);
	errno = 0;
	CU_ASSERT(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL);
	CU_ASSERT(sigaction(SIGUSR2, NULL, &now) == 0 && now.sa_handler == usr2_plain); /* not lost by it */
	sigaction(SIGUSR2, &old, NULL);
}

/* SA_RESETHAND and a signal the emulator defers: the kernel reset the disposition on the delivery the program
 * has not seen yet, so the trampoline puts the handler back for the queued copy (fe_signal.c). It must never
 * put back a handler another thread replaced in between: a program that sets SIG_IGN after installing a
 * one-shot handler must find SIG_IGN in the kernel. One thread reads an event in a loop (mostly inside the
 * emulator); each round installs the one-shot handler and signals it. When the signal is deferred, the
 * emulator's test hook (rvemu_test_resethand_hook) stops the trampoline between its read of the disposition
 * and the reinstall, the window the race needs, until this thread has set SIG_IGN; then the kernel is asked
 * (raw rt_sigaction, not interposed). A signal that lands outside the emulator is handled at once and the
 * round checks nothing. Waits are bounded; at least one round must have raced. */
#define RESETHAND_ROUNDS      400u
#define RESETHAND_WAIT_YIELDS 1000000u
static volatile sig_atomic_t resethand_stop, hook_entered, hook_release;
static volatile unsigned long resethand_reads;

static void *resethand_reader(void *arg)
{
	int fd = *(int *)arg;
	for (unsigned long i = 0; i < 4ul * ATOMIC_READS_MAX && !resethand_stop; i++) {
		uint64_t v;
		if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			__atomic_add_fetch(&resethand_reads, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* on the reader, inside the trampoline: hold the window open until the test thread changed the disposition */
static void resethand_hold(int sig)
{
	(void)sig;
	hook_entered = 1;
	for (unsigned w = 0; w < RESETHAND_WAIT_YIELDS && !hook_release; w++)
		sched_yield();
}

static void *kernel_handler_of(int sig)
{
	/* the kernel's struct sigaction, at most 4 words; its handler comes first on x86_64 and riscv64 */
	unsigned long k[4] = {0, 0, 0, 0};
	if (syscall(SYS_rt_sigaction, sig, NULL, k, sizeof(uint64_t)) != 0)
		return NULL;
	return (void *)k[0];
}

static void test_resethand_reinstall_vs_sigaction(void)
{
	// cppcheck-suppress knownConditionTrueFalse
	if (cunit_running_on_valgrind()) { /* as test_handler_reads_inside_syscall: nothing lands inside a
		                              call */
		fprintf(stderr, "  (not under valgrind: no signal can land inside an emulated call there)\n");
		return;
	}
	void (*set_hook)(void (*)(int)) =
	    (void (*)(void (*)(int)))dlsym(RTLD_DEFAULT, "rvemu_test_resethand_hook");
	CU_ASSERT_PTR_NOT_NULL_FATAL(set_hook);
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	struct sigaction one_shot, ignore, old;
	memset(&one_shot, 0, sizeof(one_shot));
	one_shot.sa_sigaction = usr2_info;
	one_shot.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
	sigemptyset(&one_shot.sa_mask);
	memset(&ignore, 0, sizeof(ignore));
	ignore.sa_handler = SIG_IGN;
	sigemptyset(&ignore.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGUSR2, &ignore, &old) == 0);
	set_hook(resethand_hold);
	resethand_stop = 0;
	pthread_t reader;
	CU_ASSERT_FATAL(pthread_create(&reader, NULL, resethand_reader, &fd) == 0);
	alarm(120);
	unsigned round, raced = 0, handled_at_once = 0, not_ignored = 0;
	for (round = 0; round < RESETHAND_ROUNDS && raced < 50; round++) {
		hook_entered = hook_release = 0;
		int calls = usr2_calls;
		CU_ASSERT_FATAL(sigaction(SIGUSR2, &one_shot, NULL) == 0);
		pthread_kill(reader, SIGUSR2);
		for (unsigned w = 0; w < RESETHAND_WAIT_YIELDS && !hook_entered && usr2_calls == calls; w++)
			sched_yield();
		int in_window = hook_entered;
		CU_ASSERT_FATAL(sigaction(SIGUSR2, &ignore, NULL) == 0); /* the program's newer word */
		hook_release = 1;
		unsigned long seen = __atomic_load_n(&resethand_reads, __ATOMIC_ACQUIRE);
		for (unsigned w = 0; w < RESETHAND_WAIT_YIELDS &&
		                     __atomic_load_n(&resethand_reads, __ATOMIC_ACQUIRE) < seen + 2;
		     w++)
			sched_yield(); /* the reader left the emulator: the reinstall, if any, is done */
		if (in_window) {
			raced++;
			if (kernel_handler_of(SIGUSR2) != (void *)SIG_IGN)
				not_ignored++;
		} else {
			handled_at_once += usr2_calls != calls;
		}
	}
	resethand_stop = 1;
	hook_release = 1;
	pthread_join(reader, NULL);
	set_hook(NULL);
	alarm(0);
	fprintf(
	    stderr,
	    "  %u rounds: %u with the signal deferred and SIG_IGN set in the reinstall's window, %u of them "
	    "left the handler installed; %u handled outside the emulator\n",
	    round, raced, not_ignored, handled_at_once);
	CU_ASSERT(raced > 0); /* the hard case happened */
	CU_ASSERT_EQUAL(not_ignored, 0);
	sigaction(SIGUSR2, &old, NULL);
	close(fd);
}

void add_linux_suites(void)
{
	CU_pSuite s = CU_add_suite("faithful to Linux", NULL, NULL);
	CU_add_test(s, "software events count, also in a hardware group (perf_swevent_init)",
	            test_software_events);
	CU_add_test(s, "task-clock sampling on every core (perf_swevent_hrtimer)", test_clock_sampling);
	CU_add_test(s, "open and file checks (pmu_sbi_event_map, perf_event_open, perf_fops)",
	            test_open_checks);
	CU_add_test(s, "a handler reads an event its thread was reading (a system call is atomic)",
	            test_handler_reads_inside_syscall);
	CU_add_test(s, "the program's handlers behind the emulator's trampoline, invisibly",
	            test_handlers_behind_trampoline);
	CU_add_test(s,
	            "SA_RESETHAND's reinstall for a deferred signal never undoes another thread's sigaction",
	            test_resethand_reinstall_vs_sigaction);
	CU_add_test(s, "a per-thread event bound to a CPU (event_filter_match)", test_cpu_filter);
	CU_add_test(s, "prctl(PR_TASK_PERF_EVENTS_*) (perf_event_task_disable)", test_prctl);
	CU_add_test(s, "poll (perf_poll)", test_poll);
	CU_add_test(s, "a scribbled mmap page (perf_output_begin)", test_page_scribble);
	CU_add_test(s, "close while mapped keeps the event (perf_mmap_close)", test_close_while_mapped);
	CU_add_test(s, "FD_OUTPUT and SET_OUTPUT (perf_event_set_output)", test_output_redirect);
	CU_add_test(s, "a forked child reads the parent's count (perf_read)", test_fork_reads_parent_count);
	CU_add_test(s, "fork while another thread maps a ring or lists /sys: the child runs",
	            test_fork_during_mmap);
	CU_add_test(s, "fork while another thread reads a directory: the child lists it",
	            test_fork_during_readdir);
	CU_add_test(s, "mmap page and user-space counter reads (arch_perf_update_userpage)",
	            test_mmap_page_user_read);
	CU_add_test(s, "a disable or close leaves the others on their counters (__perf_event_disable)",
	            test_disable_keeps_others_counters);
	CU_add_test(s, "throttling (__perf_event_account_interrupt)", test_throttle);
	CU_add_test(s, "PAUSE_OUTPUT drops and counts records (rb_toggle_paused)", test_pause_output);
	CU_add_test(s, "sample_type checks (perf_copy_attr, get_callchain_buffers)", test_sample_type_checks);
	CU_add_test(s, "sample fields in the kernel's layout (perf_output_sample)", test_sample_fields);
	CU_add_test(s, "COMM, MMAP2, FORK, EXIT records (perf_event_comm, perf_event_mmap, perf_event_task)",
	            test_sideband);
	CU_add_test(s, "side-band records of per-CPU events (event_filter_match)", test_sideband_per_cpu);
	CU_add_test(s, "mmap, mmap2, mmap_data and mprotect records (perf_event_mmap_match)",
	            test_sideband_mmap_kinds);
	CU_add_test(s, "attr size and E2BIG write back VER8 (perf_copy_attr)", test_attr_size);
	if (virtual_clock)
		CU_add_test(s, "an event fd passed over SCM_RIGHTS reads in the receiver (scm_send)",
		            test_event_fd_over_scm_rights);
	CU_add_test(s, "... and reads what it read last once its sender ended and its block was reused",
	            test_event_fd_over_scm_rights_sender_gone);
#if !defined(__riscv)
	/* not on riscv64: a guest cannot exec a riscv64 program under qemu-user without binfmt_misc
	 * (docs/riscv64.md) */
	if (virtual_clock)
		CU_add_test(s, "an event survives exec and counts on (perf_event_exec)",
		            test_event_survives_exec);
#endif
}

/* ------------------------------------------------------------------------------------- permissions */
/* Run without CAP_PERFMON (RVEMU_CAP_PERFMON=0, or really unprivileged) at the paranoid level of
 * RVEMU_PARANOID. perf_allow_kernel: above 1, an event that does not exclude the kernel needs CAP_PERFMON,
 * checked before the PMU sees the event; Debian's and Ubuntu's 3 and 4 refuse everything
 * (security_perf_event_open); perf_allow_cpu: CPU-wide needs paranoid <= 0. A U74 without Sscofpmf cannot
 * exclude the kernel (EINVAL), so an ordinary user there counts nothing unless paranoid <= 1. */
static void open_expect(struct perf_event_attr *a, int pid, int cpu, int err, const char *what)
{
	errno = 0;
	int fd = perf_open(a, pid, cpu, -1, 0);
	if (err == 0) {
		CU_ASSERT(fd >= 0);
		if (fd < 0)
			fprintf(stderr, "  %s: errno %d, expected success\n", what, errno);
		else
			close(fd);
	} else {
		CU_ASSERT_EQUAL(fd, -1);
		CU_ASSERT_EQUAL(errno, err);
		if (fd >= 0 || errno != err)
			fprintf(stderr, "  %s: fd %d errno %d, expected errno %d\n", what, fd, errno, err);
		if (fd >= 0)
			close(fd);
	}
}

static void test_permissions(void)
{
	const char *p = getenv("RVEMU_PARANOID");
	int paranoid = p ? atoi(p) : 2;
	char buf[16] = "";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof(buf), f));
	fclose(f);
	CU_ASSERT_EQUAL(atoi(buf), paranoid);
	struct perf_event_attr a;
	int all = paranoid > 2 ? EACCES : 0;
	/* the kernel counted too: perf_allow_kernel */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	open_expect(&a, 0, -1, all ? all : paranoid > 1 ? EACCES : 0, "cycles, kernel included");
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	open_expect(&a, 0, -1, all ? all : paranoid > 1 ? EACCES : 0, "task-clock, kernel included");
	/* user only: the PMU decides (no Sscofpmf: EINVAL, PERF_PMU_CAP_NO_EXCLUDE) */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.exclude_kernel = 1;
	open_expect(&a, 0, -1, all ? all : sscofpmf ? 0 : EINVAL, "cycles, user only");
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a.exclude_kernel = 1;
	open_expect(&a, 0, -1, all, "task-clock, user only");
	/* CPU-wide: perf_allow_cpu, checked when the context is found, after the PMU accepted the event */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.exclude_kernel = paranoid > 1;
	open_expect(&a, -1, 0, all ? all : a.exclude_kernel && !sscofpmf ? EINVAL : EACCES, "CPU-wide");
}

void add_permission_suite(void)
{
	CU_pSuite s = CU_add_suite("permissions without CAP_PERFMON", NULL, NULL);
	CU_add_test(s, "EACCES exactly where Linux gives it (perf_allow_kernel, perf_allow_cpu)",
	            test_permissions);
}
