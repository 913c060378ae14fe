// SPDX-License-Identifier: MIT
/* Sampling (U74 with Sscofpmf): ring-buffer records with correct IPs, PERF_RECORD_LOST instead of silent
 * loss, overflow signals to the F_SETOWN_EX thread, IOC_REFRESH budgets. The test binary is linked with
 * -rdynamic so dladdr() names the function an IP falls in. */
#include <CUnit/Basic.h>
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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu_test.h"

#define DATA_PAGES 2

struct ring {
	int fd;
	struct perf_event_mmap_page *page;
	size_t len;
};

static int ring_open(struct ring *r, struct perf_event_attr *a, pid_t pid)
{
	r->fd = perf_open(a, pid, -1, -1, 0);
	if (r->fd < 0)
		return -1;
	r->len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
	void *p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED)
		return -1;
	r->page = p;
	return 0;
}

static void ring_close(struct ring *r)
{
	munmap(r->page, r->len);
	close(r->fd);
}

struct walk {
	unsigned samples, in_hot, lost_records;
	uint64_t lost, bad_tid, bad_period, last_time, time_backwards;
	pid_t tid; /* the thread sampled (0: the caller) */
};

/* Reads every record between data_tail and data_head, then publishes the new tail. */
static void ring_walk(struct ring *r, const struct perf_event_attr *a, const char *hot, struct walk *w)
{
	const unsigned char *data = (const unsigned char *)r->page + r->page->data_offset;
	uint64_t size = r->page->data_size;
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE), tail = r->page->data_tail;
	while (tail < head) {
		unsigned char rec[1024];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		for (size_t i = 0; i < h.size && i < sizeof(rec); i++)
			rec[i] = data[(tail + i) % size];
		const uint64_t *f = (const uint64_t *)(rec + sizeof(h));
		if (h.type == PERF_RECORD_SAMPLE) {
			w->samples++;
			uint64_t ip = *f++;
			Dl_info info;
			if (dladdr((void *)(uintptr_t)ip, &info) && info.dli_sname &&
			    !strcmp(info.dli_sname, hot))
				w->in_hot++;
			if (a->sample_type & PERF_SAMPLE_TID) {
				if ((uint32_t)(*f >> 32) != (uint32_t)(w->tid ? w->tid : test_gettid()) ||
				    (uint32_t)*f != (uint32_t)getpid())
					w->bad_tid++;
				f++;
			}
			if (a->sample_type & PERF_SAMPLE_TIME) {
				if (*f < w->last_time)
					w->time_backwards++;
				w->last_time = *f++;
			}
			if ((a->sample_type & PERF_SAMPLE_PERIOD) && *f++ != a->sample_period)
				w->bad_period++;
		} else if (h.type == PERF_RECORD_LOST) {
			w->lost_records++;
			w->lost += f[1];
		}
		tail += h.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}

static void sample_attr(struct perf_event_attr *a, uint64_t period)
{
	attr_init(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a->sample_period = period;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	a->wakeup_events = 1;
}

/* The "program" of virtual mode: rvemu_advance is called from here, so the IPs must land here. */
__attribute__((noinline)) void hot_virtual_kernel(uint64_t cycles)
{
	api.advance(cycles);
	__asm__ volatile("" ::: "memory");
}

static void test_virtual_samples(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, 100000);
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	hot_virtual_kernel(1000000 + 50000); /* 10 overflows */
	ring_walk(&r, &a, "hot_virtual_kernel", &w);
	CU_ASSERT_EQUAL(w.samples, 10);
	CU_ASSERT_EQUAL(w.in_hot, 10);
	CU_ASSERT_EQUAL(w.bad_tid, 0);
	CU_ASSERT_EQUAL(w.bad_period, 0);
	CU_ASSERT_EQUAL(w.time_backwards, 0);
	CU_ASSERT_EQUAL(w.lost_records, 0);
	ring_close(&r);
}

/* A reader that lags: samples that do not fit are counted and reported by PERF_RECORD_LOST; every
 * overflow is either written or lost. */
static void test_virtual_lost(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	struct rvemu_stats s0, s1;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, 100000); /* 15 per ms at 1.5 GHz: below the throttling rate */
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	hot_virtual_kernel(2000 * 100000 + irq_skid()); /* 2000 samples of 40 bytes: more than 2 pages */
	api.get_stats(&s1);
	uint64_t written = s1.samples_written - s0.samples_written, lost = s1.samples_lost - s0.samples_lost;
	CU_ASSERT_EQUAL(written + lost, 2000);
	CU_ASSERT(lost > 0);
	ring_walk(&r, &a, "hot_virtual_kernel", &w); /* frees the buffer */
	CU_ASSERT_EQUAL(w.samples, written);
	hot_virtual_kernel(100000); /* the next sample is preceded by the loss report */
	ring_walk(&r, &a, "hot_virtual_kernel", &w);
	CU_ASSERT_EQUAL(w.lost_records, 1);
	CU_ASSERT_EQUAL(w.lost, lost);
	CU_ASSERT_EQUAL(w.samples, written + 1);
	CU_ASSERT_EQUAL(w.in_hot, w.samples);
	/* read_format LOST counts every lost sample ever, also after the LOST record went out */
	uint64_t v[2] = {0};
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	a.read_format = PERF_FORMAT_LOST;
	int fl = perf_open(&a, 0, -1, -1, 0); /* a fresh event reads 0 lost */
	CU_ASSERT_FATAL(fl >= 0);
	CU_ASSERT_EQUAL(read(fl, v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v[1], 0);
	close(fl);
	ring_close(&r);
}

/* PERF_FORMAT_LOST is cumulative: an event whose reader lags reports all its lost samples, before and after
 * the PERF_RECORD_LOST that announced them. */
static void test_lost_is_cumulative(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	struct rvemu_stats s0, s1;
	uint64_t v[2] = {0};
	memset(&w, 0, sizeof(w));
	sample_attr(&a, 100000);
	a.read_format = PERF_FORMAT_LOST;
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	hot_virtual_kernel(2000 * 100000 + irq_skid()); /* and the last overflow's interrupt */
	api.get_stats(&s1);
	uint64_t lost = s1.samples_lost - s0.samples_lost;
	CU_ASSERT(lost > 0);
	CU_ASSERT_EQUAL(read(r.fd, v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v[1], lost);
	ring_walk(&r, &a, "hot_virtual_kernel", &w);
	hot_virtual_kernel(100000); /* writes the PERF_RECORD_LOST and one sample */
	ring_walk(&r, &a, "hot_virtual_kernel", &w);
	CU_ASSERT_EQUAL(w.lost, lost);
	CU_ASSERT_EQUAL(read(r.fd, v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v[1], lost);
	ring_close(&r);
}

/* Signals: each thread samples itself and must receive only its own event's signals. */
#define MAXSIG 64
static struct {
	pid_t tid;
	int fd, code;
} got[MAXSIG];
static volatile int ngot;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int i = __atomic_fetch_add(&ngot, 1, __ATOMIC_RELAXED);
	if (i < MAXSIG) {
		got[i].tid = test_gettid();
		got[i].fd = si->si_fd;
		got[i].code = si->si_code;
	}
}

static int open_signalling(struct ring *r, uint64_t period)
{
	struct perf_event_attr a;
	sample_attr(&a, period);
	if (ring_open(r, &a, 0) != 0)
		return -1;
	struct f_owner_ex owner = {F_OWNER_TID, test_gettid()};
	if (fcntl(r->fd, F_SETFL, O_ASYNC | O_NONBLOCK) || fcntl(r->fd, F_SETOWN_EX, &owner) ||
	    fcntl(r->fd, F_SETSIG, SIGRTMIN + 2))
		return -1;
	return 0;
}

struct sigthread {
	int fd;
	pid_t tid;
};

static void *signalling_thread(void *arg)
{
	struct sigthread *st = arg;
	struct ring r;
	st->tid = test_gettid();
	if (open_signalling(&r, 50000) != 0)
		return NULL;
	st->fd = r.fd;
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	api.advance(3 * 50000);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_close(&r);
	return NULL;
}

static void test_signals_to_owner_thread(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 2, &sa, NULL);
	ngot = 0;
	struct ring r;
	CU_ASSERT_FATAL(open_signalling(&r, 100000) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	struct sigthread st = {-1, 0};
	pthread_t th;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, signalling_thread, &st), 0);
	pthread_join(th, NULL);
	api.advance(2 * 100000);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(ngot, 2 + 3);
	int mine = 0, theirs = 0;
	for (int i = 0; i < ngot && i < MAXSIG; i++) {
		CU_ASSERT_EQUAL(got[i].code, POLL_IN);
		if (got[i].tid == test_gettid()) {
			CU_ASSERT_EQUAL(got[i].fd, r.fd);
			mine++;
		} else {
			CU_ASSERT_EQUAL(got[i].tid, st.tid);
			CU_ASSERT_EQUAL(got[i].fd, st.fd);
			theirs++;
		}
	}
	CU_ASSERT_EQUAL(mine, 2);
	CU_ASSERT_EQUAL(theirs, 3);
	ring_close(&r);
}

/* IOC_REFRESH(n) (_perf_event_refresh): n more overflows, the last one signals POLL_HUP and turns the event
 * off. The event counts until that overflow is delivered -- here when rvemu_advance returns, as on hardware
 * the interrupt stops it microseconds after the overflow -- so a handler that refreshes loses only what ran
 * while the event was really off. The kernel adds any n (also 0) and enables the event. */
static void test_refresh(void)
{
	ngot = 0;
	struct ring r;
	CU_ASSERT_FATAL(open_signalling(&r, 10000) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 2), 0);
	api.advance(100000);
	CU_ASSERT_EQUAL(ngot, 2);
	CU_ASSERT_EQUAL(got[0].code, POLL_IN);
	CU_ASSERT_EQUAL(got[1].code, POLL_HUP);
	CU_ASSERT_EQUAL(read_count(r.fd), 100000); /* counted until the overflow was delivered */
	api.advance(50000);
	CU_ASSERT_EQUAL(read_count(r.fd), 100000); /* then off */
	uint64_t period = 5000;
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_PERIOD, &period), 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 1), 0);
	api.advance(100000);
	CU_ASSERT_EQUAL(ngot, 3);
	CU_ASSERT_EQUAL(got[2].code, POLL_HUP);
	CU_ASSERT_EQUAL(read_count(r.fd), 200000);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 0), 0); /* no budget left: unlimited, and on */
	api.advance(20000 + irq_skid()); /* the interrupt of the overflow at 20000 is taken too */
	CU_ASSERT_EQUAL(ngot, 7);
	for (int i = 3; i < ngot && i < MAXSIG; i++)
		CU_ASSERT_EQUAL(got[i].code, POLL_IN);
	CU_ASSERT_EQUAL(read_count(r.fd), 220000 + irq_skid());
	ring_close(&r);
}

/* Skid (virtual clock): an overflow interrupt is taken irq_skid cycles after the overflow. The cycles
 * overflow at the last cycle of skid_cause (period 2000: the ends of its 1000-cycle blocks), so the
 * interrupt lands in skid_next, the block that follows, unless the skid is 0. The last one is taken at
 * the IOC_DISABLE system call. */
__attribute__((noinline)) void skid_next(uint64_t cycles)
{
	api.advance(cycles);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void skid_cause(uint64_t cycles)
{
	api.advance(cycles);
	__asm__ volatile("" ::: "memory");
}

static void test_virtual_skid(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, 2000);
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	for (int i = 0; i < 100; i++) {
		skid_next(1000);
		skid_cause(1000);
	}
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	ring_walk(&r, &a, irq_skid() ? "skid_next" : "skid_cause", &w);
	CU_ASSERT_EQUAL(w.samples, 100);
	CU_ASSERT_EQUAL(w.in_hot, irq_skid() ? 99 : 100);
	ring_close(&r);
}

/* Time inside the emulator stands for kernel time (issue 20: 13 of 31 rvprof samples were in "ioctl
 * (librvemu.so)"). The overflow at the last cycle of skid_cause is pending when the program makes a system
 * call: the kernel takes it there, so without exclude_kernel it is a kernel sample (PERF_RECORD_MISC_KERNEL,
 * at the kernel's text), and with exclude_kernel it is dropped, as Linux drops the kernel samples of
 * user-only events (counted in the emulator's stats). No sample is ever in librvemu.so. */
static void kernel_walk(struct ring *r, unsigned *kernel, unsigned *in_emulator, unsigned *in_next,
                        unsigned *n)
{
	const unsigned char *data = (const unsigned char *)r->page + r->page->data_offset;
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE), tail = r->page->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		unsigned char raw[8];
		uint64_t ip;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % r->page->data_size];
		for (size_t i = 0; i < sizeof(raw); i++)
			raw[i] = data[(tail + sizeof(h) + i) % r->page->data_size];
		memcpy(&ip, raw, sizeof(ip));
		if (h.type == PERF_RECORD_SAMPLE) {
			Dl_info info;
			(*n)++;
			*kernel += (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
			           ip >= 0xffffffff80000000ull;
			if (dladdr((void *)(uintptr_t)ip, &info) && info.dli_fname) {
				*in_emulator += strstr(info.dli_fname, "librvemu") != NULL;
				*in_next += info.dli_sname && !strcmp(info.dli_sname, "skid_next");
			}
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}

static void test_kernel_samples(void)
{
	if (!irq_skid())
		return;
	for (int exclude = 0; exclude < 2; exclude++) {
		struct perf_event_attr a;
		struct ring r;
		unsigned kernel = 0, in_emu = 0, in_next = 0, n = 0;
		struct rvemu_stats s0, s1;
		api.get_stats(&s0);
		sample_attr(&a, 2000);
		a.sample_type = PERF_SAMPLE_IP;
		a.exclude_kernel = (unsigned)exclude;
		CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
		CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
		skid_next(1000);
		skid_cause(1000); /* overflows at its last cycle: the interrupt is pending */
		CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ID, &(uint64_t){0}), 0); /* a system call */
		skid_next(1000);
		CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
		kernel_walk(&r, &kernel, &in_emu, &in_next, &n);
		api.get_stats(&s1);
		CU_ASSERT_EQUAL(n, exclude ? 0 : 1);
		CU_ASSERT_EQUAL(in_emu, 0);
		CU_ASSERT_EQUAL(kernel, exclude ? 0 : 1);
		CU_ASSERT_EQUAL(in_next, 0);
		CU_ASSERT_EQUAL(s1.kernel_samples_dropped - s0.kernel_samples_dropped, (uint64_t)exclude);
		ring_close(&r);
	}
}

/* Overflows during the skid window share one interrupt (the counter's overflow flag is already set), and
 * a REFRESH budget that ran out is respected by an interrupt still pending: injecting 1000 periods at once
 * gives one sample, not 1000. */
static void test_virtual_skid_coalesces(void)
{
	if (!irq_skid())
		return;
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, 1000);
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 1), 0);
	CU_ASSERT_EQUAL(api.inject(model->events[0].name, 1000 * 1000), 0);
	skid_next(1000);
	ring_walk(&r, &a, "skid_next", &w);
	CU_ASSERT_EQUAL(w.samples, 1);
	CU_ASSERT_EQUAL(w.in_hot, 1);
	ring_close(&r);
}

/* exclude_user with Sscofpmf: every modelled event is a user-mode event, so nothing is counted. */
static void test_privilege_filter(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	a.exclude_user = 1;
	a.disabled = 0;
	int fu = perf_open(&a, 0, -1, -1, 0);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES); /* the other fixed counter */
	a.exclude_kernel = 1;
	a.disabled = 0;
	int fk = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fu >= 0 && fk >= 0);
	uint64_t t0 = truth_of(&model->events[0]);
	api.advance(1000000);
	CU_ASSERT_EQUAL(read_count(fu), 0);
	CU_ASSERT_EQUAL(read_count(fk), truth_of(&model->events[0]) - t0);
	close(fu);
	close(fk);
}

/* cputime mode: the timer interrupts the real program; most IPs fall inside the hot function. */
__attribute__((noinline)) void hot_cputime_kernel(unsigned ms)
{
	burn_cpu_ms(ms);
}

__attribute__((noinline)) void hot_spin(volatile uint64_t *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		*x += i * 7;
}

/* The program of the CPU-time tests: hot_spin for `ms` of thread CPU time, reading the ring meanwhile. */
static void spin_and_walk(struct ring *r, const struct perf_event_attr *a, struct walk *w, unsigned ms)
{
	volatile uint64_t x = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		hot_spin(&x, 1000000);
		ring_walk(r, a, "hot_spin", w);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void test_cputime_samples(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	struct rvemu_stats s0, s1;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, (uint64_t)model->freq_mhz * 1000u); /* one sample per ms of CPU */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	spin_and_walk(&r, &a, &w, 200);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t count = read_count(r.fd);
	ring_walk(&r, &a, "hot_spin", &w);
	api.get_stats(&s1);
	uint64_t overflows = count / a.sample_period;
	printf("\n  cputime sampling: %u samples, %u in hot_spin, %llu lost, %llu overflows\n", w.samples,
	       w.in_hot, (unsigned long long)w.lost, (unsigned long long)overflows);
	CU_ASSERT(w.samples >= 100);
	CU_ASSERT_EQUAL(s1.samples_written - s0.samples_written + s1.samples_lost - s0.samples_lost,
	                overflows);
	CU_ASSERT(w.in_hot * 4 >= w.samples * 3); /* at least 75% (a loaded host delays some signals) */
	CU_ASSERT_EQUAL(w.bad_tid, 0);
	ring_close(&r);
}

/* A busy host (issue 20): the sampled thread shares one CPU with two processes that spin, so it gets a
 * third of the wall time and is preempted, never blocked. Its overflows must still be taken by the sampling
 * alarm, at the program's PC: before, the alarm went on the thread's CPU clock, which the host checks only
 * when its tick finds the thread on the CPU, and the samples piled up until the next system call on the
 * event (46 of 100 in hot_spin here; 0 of 200 under stress-ng). The same when another thread opened the
 * event (pid = the tid), which always had the CPU clock. */
struct crowd {
	cpu_set_t old;
	pid_t spinner[2];
};

/* The calling thread and two spinning child processes on one CPU (threads created later inherit the
 * affinity). Processes, not threads: the host's tick then finds the sampled thread on the CPU as rarely as
 * under stress-ng (measured: a 0.67 ms CPU-clock timer fired up to 139 ms of CPU late). */
static void crowd_start(struct crowd *c)
{
	cpu_set_t one;
	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof(c->old), &c->old), 0);
	CPU_ZERO(&one);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &c->old)) {
			CPU_SET(cpu, &one);
			break;
		}
	CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof(one), &one), 0);
	for (int i = 0; i < 2; i++) {
		c->spinner[i] = fork();
		if (c->spinner[i] == 0) {
			volatile uint64_t x = 0;
			alarm(60); /* bounded even if the test dies before it kills us */
			for (;;)
				x++;
		}
		CU_ASSERT_FATAL(c->spinner[i] > 0);
	}
}

static void crowd_stop(struct crowd *c)
{
	for (int i = 0; i < 2; i++) {
		kill(c->spinner[i], SIGKILL);
		waitpid(c->spinner[i], NULL, 0);
	}
	sched_setaffinity(0, sizeof(c->old), &c->old);
}

static void preempted_attr(struct perf_event_attr *a)
{
	sample_attr(a, (uint64_t)model->freq_mhz * 1000u); /* one sample per ms of CPU */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
}

static void check_preempted(const char *what, const struct walk *w, uint64_t overflows)
{
	printf("\n  %s, sharing one CPU with two spinning processes: %u samples of %llu overflows, %u in "
	       "hot_spin\n",
	       what, w->samples, (unsigned long long)overflows, w->in_hot);
	CU_ASSERT(w->samples >= 90);
	CU_ASSERT_EQUAL(w->samples + w->lost, overflows);
	CU_ASSERT(w->in_hot * 10 >= w->samples * 9); /* taken by the alarm at the program's PC */
	CU_ASSERT_EQUAL(w->bad_tid, 0);
}

static void test_cputime_preempted(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	struct crowd c;
	memset(&w, 0, sizeof(w));
	preempted_attr(&a);
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	crowd_start(&c);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	spin_and_walk(&r, &a, &w, 100);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	crowd_stop(&c);
	uint64_t overflows = read_count(r.fd) / a.sample_period;
	ring_walk(&r, &a, "hot_spin", &w);
	check_preempted("own thread", &w, overflows);
	ring_close(&r);
}

struct spin_target {
	volatile int go, done;
	pid_t tid;
};

static void *spin_target_main(void *arg)
{
	struct spin_target *st = arg;
	volatile uint64_t x = 0;
	st->tid = test_gettid();
	while (!__atomic_load_n(&st->go, __ATOMIC_ACQUIRE))
		;
	uint64_t t0 = api.thread_cycles();
	/* 100 ms of its CPU, checking its clock (a call into the emulator: kernel time) about once per ms */
	while (api.thread_cycles() - t0 < (uint64_t)model->freq_mhz * 100000u)
		hot_spin(&x, 1000000);
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_cputime_other_thread_preempted(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct walk w;
	struct crowd c;
	struct spin_target st = {0, 0, 0};
	pthread_t th;
	memset(&w, 0, sizeof(w));
	preempted_attr(&a);
	crowd_start(&c);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, spin_target_main, &st), 0);
	while (!__atomic_load_n(&st.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	w.tid = st.tid;
	CU_ASSERT_FATAL(ring_open(&r, &a, st.tid) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	__atomic_store_n(&st.go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&st.done, __ATOMIC_ACQUIRE)) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
		ring_walk(&r, &a, "hot_spin", &w);
	}
	pthread_join(th, NULL);
	crowd_stop(&c);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t overflows = read_count(r.fd) / a.sample_period;
	ring_walk(&r, &a, "hot_spin", &w);
	check_preempted("another thread", &w, overflows);
	ring_close(&r);
}

/* Two users of the one cycle counter (issue 20: rvprof sampling cycles on a program that counts PAPI_TOT_CYC
 * itself got no sample in the counting region, and said "lost 0"). As Linux does when two events want one
 * counter, they are multiplexed: each runs part of the time (time_running < time_enabled, both told by
 * read_format), and the sampling event samples while it runs, in the program, every overflow written or
 * lost. The program reads its count often, as PAPI_read does: each read is a system call in which the
 * rotation may put the sampling event back on its counter, whose alarm must then be armed again. */
static void test_shared_cycle_counter(void)
{
	struct perf_event_attr a, c;
	struct ring r;
	struct walk w;
	struct rvemu_stats s0, s1;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, (uint64_t)model->freq_mhz * 1000u); /* a sample per ms while it runs */
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	attr_init(&c, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	c.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int counting = perf_open(&c, 0, -1, -1, 0);
	CU_ASSERT_FATAL(counting >= 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	CU_ASSERT_EQUAL(ioctl(counting, PERF_EVENT_IOC_ENABLE, 0), 0);
	volatile uint64_t x = 0;
	uint64_t v[3], t0 = api.thread_cycles();
	while (api.thread_cycles() - t0 < (uint64_t)model->freq_mhz * 200000u) { /* 200 ms */
		hot_spin(&x, 200000);
		CU_ASSERT_EQUAL(read(counting, v, sizeof(v)), (ssize_t)sizeof(v)); /* PAPI_read */
		ring_walk(&r, &a, "hot_spin", &w);
	}
	CU_ASSERT_EQUAL(ioctl(counting, PERF_EVENT_IOC_DISABLE, 0), 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t cv[3], sv[3];
	CU_ASSERT_EQUAL(read(counting, cv, sizeof(cv)), (ssize_t)sizeof(cv));
	CU_ASSERT_EQUAL(read(r.fd, sv, sizeof(sv)), (ssize_t)sizeof(sv));
	ring_walk(&r, &a, "hot_spin", &w);
	api.get_stats(&s1);
	uint64_t overflows = sv[0] / a.sample_period;
	printf("\n  two users of the cycle counter: counting ran %.0f%% of its time, sampling %.0f%%; %u "
	       "samples "
	       "(%u in hot_spin) of %llu overflows\n",
	       100.0 * (double)cv[2] / (double)cv[1], 100.0 * (double)sv[2] / (double)sv[1], w.samples,
	       w.in_hot, (unsigned long long)overflows);
	CU_ASSERT(cv[2] < cv[1] && sv[2] < sv[1]);           /* multiplexed, and both say so */
	CU_ASSERT(cv[2] * 5 >= cv[1] && sv[2] * 5 >= sv[1]); /* each ran a fair share (at least 20%) */
	CU_ASSERT(w.samples >= 40);
	CU_ASSERT_EQUAL(s1.samples_written - s0.samples_written + s1.samples_lost - s0.samples_lost,
	                overflows);
	CU_ASSERT(w.in_hot * 4 >= w.samples * 3);
	close(counting);
	ring_close(&r);
}

/* Through overflow, disable and refresh, as PAPI's handler does (IOC_DISABLE, then IOC_REFRESH(1)): the
 * count loses only what the thread ran while the event was really off -- between the delivery of the
 * overflow and the handler's REFRESH -- never the emulator's timer latency (the CPU-time alarms are as
 * coarse as the host's tick). With the CPU-time clock, on a loaded host too: thread time is what counts.
 * What is lost, measured (issue 20; sifive-u74, 44 overflows): the emulator's own time is the kernel's and
 * not thread cycles, so the gap is the program-side part of the delivery -- the rt_tgsigqueueinfo that
 * sends the signal and the host kernel's delivery of it, most of the loss -- and the handler's two ioctls
 * (entry and exit). On this project's 2-core VM: ~7000 cycles per overflow alone (0.07%), 15000-30000
 * under stress-ng --cpu 2..8, plain and ASan (0.12-0.37%); the largest single gap seen in ~100 runs was
 * 113000 cycles (75 us). The 1% limit is ~67 us per overflow on average: one gap near a whole period (the
 * 2.1% once seen in check-asan at load 10 is 10^7 of ~4.5*10^8 cycles) is not the delivery and must be
 * explained, not allowed; the line printed says whether the event was throttled or a signal deferred
 * (re-entry guard). */
static int refresh_fd = -1;
static volatile unsigned refresh_signals;

static void refresh_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_fd != refresh_fd)
		return;
	refresh_signals++;
	ioctl(refresh_fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(refresh_fd, PERF_EVENT_IOC_REFRESH, 1);
}

static void test_cputime_refresh_exact(void)
{
	struct perf_event_attr a;
	struct ring r;
	sample_attr(&a, 10000000); /* 10^7 cycles */
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = refresh_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	int sig = SIGRTMIN + 2; /* PAPI's */
	CU_ASSERT_FATAL(sigaction(sig, &sa, &old) == 0);
	refresh_fd = r.fd;
	refresh_signals = 0;
	struct f_owner_ex owner = {F_OWNER_TID, test_gettid()};
	CU_ASSERT_EQUAL(fcntl(r.fd, F_SETFL, O_ASYNC | O_NONBLOCK), 0);
	CU_ASSERT_EQUAL(fcntl(r.fd, F_SETSIG, sig), 0);
	CU_ASSERT_EQUAL(fcntl(r.fd, F_SETOWN_EX, &owner), 0);
	struct walk w;
	memset(&w, 0, sizeof(w));
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	uint64_t t0 = truth_of(&model->events[0]);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 1), 0);
	spin_and_walk(&r, &a, &w, 300);
	uint64_t count = read_count(r.fd), truth = truth_of(&model->events[0]) - t0;
	api.get_stats(&s1);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	sigaction(sig, &old, NULL);
	uint64_t lost = truth > count ? truth - count : 0;
	printf(
	    "\n  overflow + REFRESH, period 10^7: %u signals, counted %llu of %llu cycles; lost while really "
	    "disabled: %llu (%.4f%%); %llu interrupts, %llu throttled, %llu signals sent, %llu deferred\n",
	    refresh_signals, (unsigned long long)count, (unsigned long long)truth, (unsigned long long)lost,
	    100.0 * (double)lost / (double)truth, (unsigned long long)(s1.interrupts - s0.interrupts),
	    (unsigned long long)(s1.throttles - s0.throttles), (unsigned long long)(s1.signals - s0.signals),
	    (unsigned long long)(s1.signals_deferred - s0.signals_deferred));
	/* ~45 overflows; a thread descheduled by a loaded host gets its alarms on the coarse CPU clock, so
	 * fewer, later deliveries (each still counted up to its delivery) */
	CU_ASSERT(refresh_signals >= 3);
	CU_ASSERT(count <= truth);
	CU_ASSERT(lost * 100 <= truth); /* within 1% */
	refresh_fd = -1;
	ring_close(&r);
}

/* The set-up the tests of sampling another process share. The child side: a forked task that waits
 * for the owner's "go" and then looks for the events (rvemu_advance); it returns 0 in that task, which goes
 * on with what its test makes it do, and the task's pid in the owner. `unblock`: the signal mask the task
 * restores first (NULL: none). */
static pid_t fork_task_after_go(int go[2], const sigset_t *unblock)
{
	CU_ASSERT_FATAL(pipe(go) == 0);
	fflush(stdout);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		char c;
		if (unblock)
			sigprocmask(SIG_SETMASK, unblock, NULL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		api.advance(1);
		return 0;
	}
	close(go[0]);
	return child;
}

/* Lets the task started by fork_task_after_go run: its one "go". */
static void task_go(int go[2])
{
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	close(go[1]);
}

/* Reaps a child: its wait status (-1 if waitpid failed). */
static int reap(pid_t child)
{
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	return st;
}

static void reap_exited_ok(pid_t child)
{
	int st = reap(child);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void reap_killed(pid_t child)
{
	int st = reap(child);
	CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* Sampling another process (perf record -- cmd, docs/emulator-core.md "Sampling another process"): an event
 * with inherit on a running child process reaches the grandchild it forks; the grandchild's own emulator
 * writes into this process's ring its FORK record, its samples (exact under the virtual clock: 1050000 cycles
 * at a period of 100000) and its EXIT record, in that order, with its pid and tid; the child, which first
 * looks before the buffer is mapped and finds the event again when it forks, its EXIT last. The event reads
 * what they counted, and polls POLLIN and, with the task and its descendants gone, POLLHUP. */
static void test_sample_other_process(void)
{
	int go[2], ack[2];
	CU_ASSERT_FATAL(pipe(ack) == 0);
	/* the event exists, its buffer is not mapped yet: the child looks (rvemu_advance) and finds nothing
	 * to write into; it must look again once the buffer is mapped */
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		char c;
		close(ack[0]);
		if (write(ack[1], "a", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		pid_t g = fork();
		if (g == 0) {
			hot_virtual_kernel(1000000 + 50000);
			_exit(0);
		}
		int st = 0;
		_exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
	}
	close(ack[1]);
	struct perf_event_attr a;
	struct ring r;
	char c;
	sample_attr(&a, 100000);
	a.disabled = 0;
	a.inherit = 1;
	a.task = 1;
	a.sample_id_all = 1;
	r.fd = perf_open(&a, child, -1, -1, 0);
	CU_ASSERT(r.fd >= 0);
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1);
	r.len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
	void *map = r.fd >= 0 ? mmap(NULL, r.len, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0) : MAP_FAILED;
	int opened = map != MAP_FAILED;
	CU_ASSERT(opened);
	r.page = map;
	CU_ASSERT_EQUAL(write(go[1], "y", 1), 1);
	close(go[1]);
	close(ack[0]);
	reap_exited_ok(child);
	if (!opened)
		return;
	/* the records: FORK(g, child), the samples, EXIT(g) */
	const unsigned char *data = (const unsigned char *)r.page + r.page->data_offset;
	uint64_t size = r.page->data_size, head = __atomic_load_n(&r.page->data_head, __ATOMIC_ACQUIRE),
	         tail = 0;
	unsigned forks = 0, exits = 0, samples = 0, in_hot = 0, out_of_order = 0, bad_task = 0, other = 0;
	uint32_t g = 0, exited[2] = {0, 0};
	while (tail < head) {
		unsigned char rec[1024];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(rec))
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % size];
		const uint32_t *w = (const uint32_t *)(rec + sizeof(h));
		const uint64_t *f = (const uint64_t *)(rec + sizeof(h));
		if (h.type == PERF_RECORD_FORK) { /* {pid, ppid, tid, ptid, time} */
			forks++;
			g = w[0];
			bad_task += w[1] != (uint32_t)child || w[2] != g || w[3] != (uint32_t)child;
			out_of_order += samples > 0 || exits > 0;
		} else if (h.type == PERF_RECORD_SAMPLE) { /* {ip, pid/tid, time, period} */
			samples++;
			Dl_info info;
			if (dladdr((void *)(uintptr_t)f[0], &info) && info.dli_sname &&
			    !strcmp(info.dli_sname, "hot_virtual_kernel"))
				in_hot++;
			bad_task += (uint32_t)f[1] != g || (uint32_t)(f[1] >> 32) != g;
			out_of_order += forks == 0 || exits > 0;
		} else if (h.type == PERF_RECORD_EXIT) { /* {pid, ppid, tid, ptid, time} */
			if (exits < 2)
				exited[exits] = w[0];
			exits++;
			bad_task += w[0] != w[2];
		} else {
			other++;
		}
		tail += h.size;
	}
	CU_ASSERT_EQUAL(tail, head);
	CU_ASSERT_EQUAL(forks, 1);
	CU_ASSERT_EQUAL(samples, 10);
	CU_ASSERT_EQUAL(in_hot, 10);
	CU_ASSERT_EQUAL(exits, 2);
	CU_ASSERT(exited[0] == g && exited[1] == (uint32_t)child);
	CU_ASSERT_EQUAL(out_of_order, 0);
	CU_ASSERT_EQUAL(bad_task, 0);
	CU_ASSERT_EQUAL(other, 0);
	CU_ASSERT(g != 0 && g != (uint32_t)child);
	CU_ASSERT_EQUAL(read_count(r.fd), 1050000);
	struct pollfd p = {r.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT((p.revents & POLLIN) && (p.revents & POLLHUP));
	ring_close(&r);
}

/* Samples in a ring another process wrote: the SAMPLE records between 0 and data_head. */
static unsigned ring_samples(const struct perf_event_mmap_page *page)
{
	const unsigned char *data = (const unsigned char *)page + page->data_offset;
	uint64_t size = page->data_size, head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), tail = 0;
	unsigned samples = 0;
	for (unsigned n = 0; tail < head && n < 100000; n++) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h))
			break;
		samples += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	return samples;
}

/* A process that runs `rounds` times, each when told: looks for new events (rvemu_advance), then 1050000 hot
 * cycles (10 overflows at a period of 100000), optionally forks (a child that exits at once), and acks. */
static pid_t live_task(int go[2], int ack[2], int rounds, int fork_too)
{
	if (pipe(go) != 0 || pipe(ack) != 0)
		return -1;
	pid_t child = fork();
	if (child != 0)
		return child;
	close(go[1]);
	close(ack[0]);
	char c;
	for (int i = 0; i < rounds; i++) {
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		api.advance(1);
		hot_virtual_kernel(1000000 + 50000);
		if (fork_too) {
			pid_t g = fork();
			if (g == 0)
				_exit(0);
			if (g < 0 || waitpid(g, NULL, 0) != g)
				_exit(4);
		}
		if (write(ack[1], "a", 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/* perf record -p twice in turn on one live task: the second perf is another process that claims the block
 * the first released and whose event has the same id (ids are per process; the two are forked from one
 * state here as two runs of perf open the same events). The task's shadow of the first event must not pass
 * for the second's: the second ring gets its 10 samples. */
static void test_sample_other_process_twice(void)
{
	int go[2], ack[2];
	pid_t task = live_task(go, ack, 2, 0);
	CU_ASSERT_FATAL(task > 0);
	close(go[0]);
	close(ack[1]);
	unsigned samples[2] = {0, 0};
	for (int round = 0; round < 2; round++) {
		int res[2];
		CU_ASSERT_FATAL(pipe(res) == 0);
		pid_t perf = fork();
		CU_ASSERT_FATAL(perf >= 0);
		if (perf == 0) {
			close(res[0]);
			struct perf_event_attr a;
			sample_attr(&a, 100000);
			a.disabled = 0;
			int fd = perf_open(&a, task, -1, -1, 0);
			size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
			void *map =
			    fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
			char c;
			unsigned n = 0;
			if (map != MAP_FAILED && write(go[1], "x", 1) == 1 && read(ack[0], &c, 1) == 1)
				n = ring_samples(map);
			_exit(write(res[1], &n, sizeof(n)) == (ssize_t)sizeof(n) ? 0 : 1);
		}
		close(res[1]);
		CU_ASSERT_EQUAL(read(res[0], &samples[round], sizeof(samples[round])),
		                (ssize_t)sizeof(unsigned));
		close(res[0]);
		reap_exited_ok(perf);
	}
	close(go[1]);
	close(ack[0]);
	reap_exited_ok(task);
	printf("\n  two perf records in turn on one task: %u then %u samples (10 each)\n", samples[0],
	       samples[1]);
	CU_ASSERT_EQUAL(samples[0], 10);
	CU_ASSERT_EQUAL(samples[1], 10);
}

/* A sampling event on another process opened disabled and never enabled: the task's shadow counts, but the
 * event reads 0 (the kernel freezes a disabled event's count) and its ring gets no sample. */
static void test_sample_other_process_disabled(void)
{
	int go[2], ack[2];
	pid_t task = live_task(go, ack, 1, 0);
	CU_ASSERT_FATAL(task > 0);
	close(go[0]);
	close(ack[1]);
	struct perf_event_attr a;
	sample_attr(&a, 100000);
	a.disabled = 1;
	int fd = perf_open(&a, task, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	char c;
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1);
	close(go[1]);
	close(ack[0]);
	reap_exited_ok(task);
	CU_ASSERT_EQUAL(read_count(fd), 0);
	CU_ASSERT_EQUAL(ring_samples(map), 0);
	munmap(map, len);
	close(fd);
}

/* The owner closes its event's fd and keeps the ring mapped (the event lives on), then a file of its takes
 * that fd number: the sampled task, which looks for the event only now (it forks, it advances), must not map
 * and write that file. */
static void test_sample_other_process_fd_reused(void)
{
	int go[2], ack[2];
	pid_t task = live_task(go, ack, 1, 1);
	CU_ASSERT_FATAL(task > 0);
	close(go[0]);
	close(ack[1]);
	struct perf_event_attr a;
	sample_attr(&a, 100000);
	a.disabled = 0;
	a.inherit = 1;
	int fd = perf_open(&a, task, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	CU_ASSERT_EQUAL(close(fd), 0);
	char path[] = "/tmp/test_emu_fdreuse.XXXXXX";
	int file = mkstemp(path);
	CU_ASSERT_FATAL(file >= 0);
	unlink(path);
	static unsigned char text[4 * 4096], back[sizeof(text)];
	memset(text, 'r', sizeof(text));
	CU_ASSERT_EQUAL(write(file, text, sizeof(text)), (ssize_t)sizeof(text));
	CU_ASSERT_EQUAL(file, fd); /* the number the event had */
	char c;
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1);
	close(go[1]);
	close(ack[0]);
	reap_exited_ok(task);
	CU_ASSERT_EQUAL(pread(file, back, sizeof(back), 0), (ssize_t)sizeof(back));
	CU_ASSERT(memcmp(text, back, sizeof(text)) == 0);
	close(file);
	munmap(map, len);
}

/* The task records of another process's tasks as the kernel writes them (perf_event_task_output), with every
 * sample_id field: FORK carries the forking task in its sample_id (perf_event_header__init_id takes
 * `current`, and perf_event_fork runs in the parent), EXIT the exiting one; a task killed by SIGKILL gets its
 * EXIT all the same (do_exit), written once by another process of the run. */
#define TASKREC_TYPE                                                                                         \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |      \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
struct task_rec {
	uint32_t type, pid, ppid, tid, ptid; /* the body (a sample: pid and tid only) */
	uint64_t body_time;
	uint32_t id_pid, id_tid, cpu; /* the sample_id trailer (a sample's own fields) */
	uint64_t time, id, stream_id;
};

/* The FORK, EXIT and SAMPLE records of a ring written by other processes, from 0 to data_head. */
static unsigned task_records(const struct perf_event_mmap_page *page, struct task_rec *out, unsigned max)
{
	const unsigned char *data = (const unsigned char *)page + page->data_offset;
	uint64_t size = page->data_size, head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), tail = 0;
	unsigned n = 0;
	for (unsigned k = 0; tail < head && k < 100000 && n < max; k++) {
		unsigned char rec[1024];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(rec))
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % size];
		tail += h.size;
		const uint64_t *f = (const uint64_t *)(rec + sizeof(h));
		struct task_rec *r = &out[n];
		memset(r, 0, sizeof(*r));
		r->type = h.type;
		if (h.type == PERF_RECORD_FORK ||
		    h.type == PERF_RECORD_EXIT) { /* {pid, ppid, tid, ptid, time} */
			r->pid = (uint32_t)f[0];
			r->ppid = (uint32_t)(f[0] >> 32);
			r->tid = (uint32_t)f[1];
			r->ptid = (uint32_t)(f[1] >> 32);
			r->body_time = f[2];
			f += 3; /* sample_id: pid/tid, time, id, stream_id, cpu */
		} else if (h.type == PERF_RECORD_SAMPLE) {
			f++; /* ip; then pid/tid, time, id, stream_id, cpu, period */
		} else {
			continue;
		}
		r->id_pid = (uint32_t)f[0];
		r->id_tid = (uint32_t)(f[0] >> 32);
		r->time = f[1];
		r->id = f[2];
		r->stream_id = f[3];
		r->cpu = (uint32_t)f[4];
		if (h.type == PERF_RECORD_SAMPLE) {
			r->pid = r->id_pid;
			r->tid = r->id_tid;
		}
		n++;
	}
	return n;
}

/* What a ring holds for one task: its FORK and EXIT records (the last of each), how many, its samples, the
 * CPU and time of its last sample. */
struct task_view {
	unsigned forks, exits, samples, after_exit;
	struct task_rec fork, exit;
	uint32_t cpu;
	uint64_t last_time;
};

static void records_view(const struct task_rec *r, unsigned n, uint32_t id, int by_tid, struct task_view *v)
{
	memset(v, 0, sizeof(*v));
	for (unsigned i = 0; i < n; i++) {
		if ((by_tid ? r[i].tid : r[i].pid) != id)
			continue;
		if (r[i].type == PERF_RECORD_FORK) {
			v->forks++;
			v->fork = r[i];
		} else if (r[i].type == PERF_RECORD_EXIT) {
			v->exits++;
			v->exit = r[i];
		} else {
			v->samples++;
			v->after_exit += v->exits > 0;
			v->cpu = r[i].cpu;
			v->last_time = r[i].time;
		}
	}
}

/* A process's records (every thread's), or one thread's. */
static void task_view(const struct task_rec *r, unsigned n, uint32_t pid, struct task_view *v)
{
	records_view(r, n, pid, 0, v);
}

static void thread_view(const struct task_rec *r, unsigned n, uint32_t tid, struct task_view *v)
{
	records_view(r, n, tid, 1, v);
}

/* The owner side of the tests of another process's task records: a sampling event (period 100000, enabled) on
 * `task` that writes the task records with every sample_id field, `inherit` as asked, its id read back into
 * *id (unless NULL) and a ring of `data_pages` mapped. */
static void task_ring_open(struct ring *ring, pid_t task, int inherit, uint64_t *id, unsigned data_pages)
{
	struct perf_event_attr a;
	sample_attr(&a, 100000);
	a.sample_type = TASKREC_TYPE;
	a.disabled = 0;
	a.inherit = inherit ? 1 : 0;
	a.task = 1;
	a.sample_id_all = 1;
	ring->fd = perf_open(&a, task, -1, -1, 0);
	CU_ASSERT_FATAL(ring->fd >= 0);
	if (id) {
		*id = 0;
		CU_ASSERT_EQUAL(ioctl(ring->fd, PERF_EVENT_IOC_ID, id), 0);
	}
	ring->len = (size_t)sysconf(_SC_PAGESIZE) * (1 + data_pages);
	void *map = mmap(NULL, ring->len, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	ring->page = map;
}

/* The tid of the last thread a FORK record announces (0: none). */
static uint32_t forked_tid(const struct task_rec *r, unsigned n)
{
	uint32_t tid = 0;
	for (unsigned i = 0; i < n; i++)
		if (r[i].type == PERF_RECORD_FORK)
			tid = r[i].tid;
	return tid;
}

/* A running child C (150000 cycles: 1 sample) forks G, which runs 350000 cycles (3 samples) and is killed
 * by SIGKILL; C waits for it and exits. The ring: FORK(G) with C's pid, tid and CPU as sample_id; G's three
 * samples; one EXIT(G) with G's pid, tid, CPU, the event's id and a time not before its last sample (C wrote
 * it at its exit, before its own EXIT); one EXIT(C). The owner's POLLHUP (which looks for killed tasks too)
 * adds none. */
static void test_sample_other_process_killed_child(void)
{
	int go[2];
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) { /* it has looked for the event: its shadow */
		hot_virtual_kernel(150000);
		pid_t g = fork();
		if (g == 0) {
			hot_virtual_kernel(350000);
			raise(SIGKILL); /* does not return */
		}
		int st = 0;
		_exit(g > 0 && waitpid(g, &st, 0) == g && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 4);
	}
	struct ring ring;
	uint64_t id;
	task_ring_open(&ring, child, 1, &id, DATA_PAGES);
	task_go(go);
	reap_exited_ok(child);
	static struct task_rec r[64];
	unsigned n = task_records(ring.page, r, 64);
	uint32_t g = 0;
	for (unsigned i = 0; i < n; i++)
		if (r[i].type == PERF_RECORD_FORK)
			g = r[i].pid;
	struct task_view vc, vg;
	task_view(r, n, (uint32_t)child, &vc);
	task_view(r, n, g, &vg);
	printf(
	    "\n  killed grandchild: %u fork, %u samples, %u exit (sample_id pid %u tid %u cpu %u); child: %u "
	    "samples, %u exit\n",
	    vg.forks, vg.samples, vg.exits, vg.exit.id_pid, vg.exit.id_tid, vg.exit.cpu, vc.samples,
	    vc.exits);
	CU_ASSERT(g != 0 && g != (uint32_t)child);
	CU_ASSERT_EQUAL(vc.samples, 1);
	/* FORK: the body names the child and its parent; the sample_id is the parent's (current in the
	 * kernel) */
	CU_ASSERT_EQUAL(vg.forks, 1);
	CU_ASSERT(vg.fork.tid == g && vg.fork.ppid == (uint32_t)child && vg.fork.ptid == (uint32_t)child);
	CU_ASSERT_EQUAL(vg.fork.id_pid, (uint32_t)child);
	CU_ASSERT_EQUAL(vg.fork.id_tid, (uint32_t)child);
	CU_ASSERT_EQUAL(vg.fork.cpu, vc.cpu);
	CU_ASSERT(vg.fork.id == id && vg.fork.stream_id == id && vg.fork.time == vg.fork.body_time);
	/* the killed task: its samples, then one EXIT with its own sample_id */
	CU_ASSERT_EQUAL(vg.samples, 3);
	CU_ASSERT_EQUAL(vg.after_exit, 0);
	CU_ASSERT_EQUAL(vg.exits, 1);
	CU_ASSERT(vg.exit.tid == g && vg.exit.ppid == (uint32_t)child && vg.exit.ptid == (uint32_t)child);
	CU_ASSERT(vg.exit.id_pid == g && vg.exit.id_tid == g);
	CU_ASSERT_EQUAL(vg.exit.cpu, vg.cpu);
	CU_ASSERT(vg.exit.id == id && vg.exit.stream_id == id);
	CU_ASSERT(vg.exit.time == vg.exit.body_time && vg.exit.time >= vg.last_time);
	CU_ASSERT_EQUAL(vc.exits, 1);
	CU_ASSERT(vc.exit.id_pid == (uint32_t)child && vc.exit.id_tid == (uint32_t)child);
	/* every task gone: POLLHUP, and no second EXIT of either */
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	n = task_records(ring.page, r, 64);
	task_view(r, n, (uint32_t)child, &vc);
	task_view(r, n, g, &vg);
	CU_ASSERT_EQUAL(vg.exits, 1);
	CU_ASSERT_EQUAL(vc.exits, 1);
	ring_close(&ring);
}

/* The event's own task killed by SIGKILL after 250000 cycles (2 samples): nobody of the run but the owner
 * is left to see it, which writes its EXIT before it says POLLHUP, once. */
static void test_sample_other_process_killed(void)
{
	int go[2];
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		hot_virtual_kernel(250000);
		raise(SIGKILL); /* does not return */
	}
	struct ring ring;
	uint64_t id;
	task_ring_open(&ring, child, 0, &id, DATA_PAGES);
	task_go(go);
	reap_killed(child);
	static struct task_rec r[64];
	struct task_view v;
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v);
	/* Linux has it written by now (do_exit); here it waits for a process of the run to look: printed,
	 * not pinned */
	printf("\n  killed task: %u exit before anybody polled", v.exits);
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1); /* again: nothing more */
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v);
	printf("\n  killed task: %u samples, %u exit (sample_id pid %u tid %u cpu %u)\n", v.samples, v.exits,
	       v.exit.id_pid, v.exit.id_tid, v.exit.cpu);
	CU_ASSERT_EQUAL(v.samples, 2);
	CU_ASSERT_EQUAL(v.exits, 1);
	CU_ASSERT_EQUAL(v.after_exit, 0);
	CU_ASSERT(v.exit.tid == (uint32_t)child && v.exit.ppid == (uint32_t)getpid() &&
	          v.exit.ptid == (uint32_t)getpid());
	CU_ASSERT(v.exit.id_pid == (uint32_t)child && v.exit.id_tid == (uint32_t)child);
	CU_ASSERT(v.exit.cpu == v.cpu && v.exit.id == id && v.exit.stream_id == id);
	CU_ASSERT(v.exit.time == v.exit.body_time && v.exit.time >= v.last_time);
	ring_close(&ring);
}

/* perf record's end, without its timing: its SIGCHLD handler sets `done`, and it then reads the ring a last
 * time without polling (or any other call on its events) again. The event's own task kills itself with
 * SIGKILL at once; this process waits for the signal in sigsuspend, never polls, and finds the task's EXIT
 * in the ring, with its sample_id, as the kernel wrote it before the task could be waited for. */
static volatile sig_atomic_t chld_done;

static void on_sigchld(int sig)
{
	(void)sig;
	chld_done = 1;
}

static void test_sample_other_process_killed_sigchld(void)
{
	int go[2];
	struct sigaction sa, old_sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigchld;
	sigemptyset(&sa.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGCHLD, &sa, &old_sa) == 0);
	sigset_t block, old_mask;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	chld_done = 0;
	pid_t child = fork_task_after_go(go, &old_mask);
	if (child == 0) {
		hot_virtual_kernel(150000); /* 1 sample */
		raise(SIGKILL);             /* does not return */
	}
	struct ring ring;
	task_ring_open(&ring, child, 0, NULL, DATA_PAGES);
	task_go(go);
	sigset_t wait_mask = old_mask;
	sigdelset(&wait_mask, SIGCHLD);
	for (int i = 0; i < 1000 && !chld_done; i++) /* each return is a handled signal: bounded */
		sigsuspend(&wait_mask);
	CU_ASSERT(chld_done);
	static struct task_rec r[64];
	struct task_view v;
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v); /* no poll: perf's last read */
	printf(
	    "\n  killed at once, SIGCHLD handled, no poll: %u samples, %u exit (sample_id pid %u tid %u)\n",
	    v.samples, v.exits, v.exit.id_pid, v.exit.id_tid);
	CU_ASSERT_EQUAL(v.samples, 1);
	CU_ASSERT_EQUAL(v.exits, 1);
	CU_ASSERT_EQUAL(v.after_exit, 0);
	CU_ASSERT(v.exit.id_pid == (uint32_t)child && v.exit.id_tid == (uint32_t)child);
	reap_killed(child);
	sigaction(SIGCHLD, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	ring_close(&ring);
}

/* The event's own task killed by SIGKILL inside its exit path, after it took the right to write its own EXIT
 * and before it wrote it (rvemu_test_exit_gate holds it there): the kernel writes EXIT in do_exit whatever
 * ends the task; here the owner, the first to see it gone, writes it, once. Before, the claim stayed the
 * dead task's and no EXIT was ever written (under perf record, a shell's `kill -9 $!` reaching a job that
 * was ending lost the job's EXIT: test_emu_mproc.sh, 2 of 20 runs on a loaded host). */
static void test_sample_other_process_killed_in_exit(void)
{
	void (*exit_gate)(int, int) = (void (*)(int, int))dlsym(RTLD_DEFAULT, "rvemu_test_exit_gate");
	CU_ASSERT_PTR_NOT_NULL_FATAL(exit_gate);
	int gate[2], ready[2], go[2];
	CU_ASSERT_FATAL(pipe(gate) == 0 && pipe(ready) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		hot_virtual_kernel(250000); /* 2 samples */
		exit_gate(gate[0], ready[1]);
		_exit(0); /* held inside, its EXIT claimed: killed there */
	}
	struct ring ring;
	uint64_t id;
	close(ready[1]); /* a child that ends before the gate: EOF, not a wait for ever */
	close(gate[0]);
	task_ring_open(&ring, child, 0, &id, DATA_PAGES);
	task_go(go);
	char c;
	int held = read(ready[0], &c, 1) == 1;
	CU_ASSERT_EQUAL(kill(child, SIGKILL), 0);
	reap_killed(child);
	CU_ASSERT_FATAL(held);
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1); /* again: nothing more */
	static struct task_rec r[64];
	struct task_view v;
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v);
	printf("\n  killed inside its exit path: %u samples, %u exit (sample_id pid %u tid %u)\n", v.samples,
	       v.exits, v.exit.id_pid, v.exit.id_tid);
	CU_ASSERT_EQUAL(v.samples, 2);
	CU_ASSERT_EQUAL(v.exits, 1);
	CU_ASSERT_EQUAL(v.after_exit, 0);
	CU_ASSERT(v.exit.id_pid == (uint32_t)child && v.exit.id_tid == (uint32_t)child);
	CU_ASSERT(v.exit.id == id && v.exit.stream_id == id);
	close(gate[1]);
	close(ready[0]);
	ring_close(&ring);
}

/* A shell's `cmd & kill -9 $!; wait`: the child C of the event's task forks G, which is killed by SIGKILL;
 * C, with no SIGCHLD handler, waits for G and then holds. The kernel wrote G's EXIT before G could be waited
 * for, so it is in the ring when C's wait returns, with no poll and before C's own exit (which wrote it,
 * before: a reader between the two found G gone and its EXIT missing). */
static void test_sample_other_process_killed_waited(void)
{
	int go[2], waited[2], hold[2];
	CU_ASSERT_FATAL(pipe(waited) == 0 && pipe(hold) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		signal(SIGCHLD, SIG_DFL);
		pid_t g = fork();
		if (g == 0) {
			hot_virtual_kernel(150000); /* 1 sample */
			raise(SIGKILL);             /* does not return */
		}
		int st = 0;
		char c = 'w';
		int ok = g > 0 && waitpid(g, &st, 0) == g && WIFSIGNALED(st);
		ok = ok && write(waited[1], &c, 1) == 1 && read(hold[0], &c, 1) == 1;
		_exit(ok ? 0 : 4);
	}
	close(waited[1]); /* a child that fails first: EOF, not a wait for ever */
	close(hold[0]);
	struct ring ring;
	task_ring_open(&ring, child, 1, NULL, DATA_PAGES);
	task_go(go);
	char c;
	if (read(waited[0], &c, 1) != 1) {
		reap(child);
		CU_FAIL_FATAL("the child did not see its own child killed and waited for");
	}
	static struct task_rec r[64];
	unsigned n = task_records(ring.page, r, 64); /* no poll, C still there */
	uint32_t g = 0;
	for (unsigned i = 0; i < n; i++)
		if (r[i].type == PERF_RECORD_FORK)
			g = r[i].pid;
	struct task_view vg, vc;
	task_view(r, n, g, &vg);
	task_view(r, n, (uint32_t)child, &vc);
	printf("\n  killed grandchild, waited for: %u samples, %u exit; its parent still there: %u exit\n",
	       vg.samples, vg.exits, vc.exits);
	CU_ASSERT(g != 0 && g != (uint32_t)child);
	CU_ASSERT_EQUAL(vg.samples, 1);
	CU_ASSERT_EQUAL(vg.exits, 1);
	CU_ASSERT(vg.exit.id_pid == g && vg.exit.id_tid == g);
	CU_ASSERT_EQUAL(vc.exits, 0);
	CU_ASSERT_EQUAL(write(hold[1], "x", 1), 1);
	reap_exited_ok(child);
	n = task_records(ring.page, r, 64);
	task_view(r, n, g, &vg);
	task_view(r, n, (uint32_t)child, &vc);
	CU_ASSERT_EQUAL(vg.exits, 1);
	CU_ASSERT_EQUAL(vc.exits, 1);
	close(waited[0]);
	close(hold[1]);
	ring_close(&ring);
}

/* The main thread of a process calls pthread_exit while its worker runs on: the process is not gone (its
 * leader shows Z in /proc, the worker runs), so nothing may take the worker for killed. */
static int pexit_ack[2], pexit_more[2];

/* Reads a small file (of /proc) into buf, NUL-terminated (empty if the read failed): 0, or -1 if it cannot
 * be opened. */
static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return 0;
}

/* Whether the process's main thread is a zombie (it called pthread_exit): 1, 0 not yet, -1 unreadable. */
static int leader_zombie(void)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
	if (read_small_file(path, buf, sizeof(buf)) != 0)
		return -1;
	const char *p = strrchr(buf, ')');
	return p ? p[2] == 'Z' : -1;
}

static void *pexit_worker(void *arg)
{
	(void)arg;
	char c;
	api.advance(1);
	hot_virtual_kernel(250000); /* 2 samples */
	int z = 0;
	for (unsigned i = 0; i < 100000 && (z = leader_zombie()) == 0; i++)
		sched_yield();
	if (z != 1 || write(pexit_ack[1], "a", 1) != 1 || read(pexit_more[0], &c, 1) != 1)
		_exit(5);
	hot_virtual_kernel(250000); /* 3 more (the period's 50000 left from before) */
	return NULL;                /* the last thread: the process exits, status 0 */
}

/* A sampling event (inherit) on a process whose main thread calls pthread_exit while its worker runs: while
 * the worker runs the owner's poll says no POLLHUP and the ring holds no EXIT of the worker; then the worker
 * ends: its 5 samples, one EXIT each for the main thread and the worker, POLLHUP. */
static void test_sample_other_process_main_thread_exits(void)
{
	int go[2];
	CU_ASSERT_FATAL(pipe(pexit_ack) == 0 && pipe(pexit_more) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, pexit_worker, NULL) != 0)
			_exit(4);
		pthread_exit(NULL);
	}
	struct ring ring;
	task_ring_open(&ring, child, 1, NULL, DATA_PAGES);
	char c;
	task_go(go);
	int acked = read(pexit_ack[0], &c, 1) == 1; /* the main thread gone, the worker waits */
	CU_ASSERT(acked);
	static struct task_rec r[64];
	uint32_t w = forked_tid(r, task_records(ring.page, r, 64));
	struct pollfd p = {ring.fd, POLLIN, 0};
	int pr = poll(&p, 1, 0);
	struct task_view vm, vw;
	unsigned n = task_records(ring.page, r, 64);
	thread_view(r, n, w, &vw);
	thread_view(r, n, (uint32_t)child, &vm);
	printf("\n  while the worker runs: poll %d POLLHUP %d; worker %u samples %u exit; main %u exit", pr,
	       !!(p.revents & POLLHUP), vw.samples, vw.exits, vm.exits);
	CU_ASSERT(w != 0 && w != (uint32_t)child);
	CU_ASSERT_EQUAL(p.revents & POLLHUP, 0);
	CU_ASSERT_EQUAL(vw.exits, 0);
	CU_ASSERT_EQUAL(vm.exits, 1);
	CU_ASSERT_EQUAL(write(pexit_more[1], "y", 1), 1);
	reap_exited_ok(child);
	pr = poll(&p, 1, 0);
	n = task_records(ring.page, r, 64);
	thread_view(r, n, w, &vw);
	thread_view(r, n, (uint32_t)child, &vm);
	printf("; after: poll %d POLLHUP %d; worker %u samples %u exit; main %u exit\n", pr,
	       !!(p.revents & POLLHUP), vw.samples, vw.exits, vm.exits);
	CU_ASSERT(p.revents & POLLHUP);
	CU_ASSERT_EQUAL(vw.samples, 5);
	CU_ASSERT_EQUAL(vw.after_exit, 0);
	CU_ASSERT_EQUAL(vw.exits, 1);
	CU_ASSERT(vw.exit.pid == (uint32_t)child && vw.exit.tid == w);
	CU_ASSERT_EQUAL(vm.exits, 1);
	for (int i = 0; i < 2; i++) {
		close(pexit_ack[i]);
		close(pexit_more[i]);
	}
	ring_close(&ring);
}

/* A single-threaded process whose only thread calls pthread_exit: glibc then runs exit(), whose atexit
 * handlers come after the thread's own exit hook; its ring holds its 2 samples and one EXIT. */
static void test_sample_other_process_last_thread_exits(void)
{
	int go[2];
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		hot_virtual_kernel(250000);
		pthread_exit(NULL);
	}
	struct ring ring;
	task_ring_open(&ring, child, 0, NULL, DATA_PAGES);
	task_go(go);
	reap_exited_ok(child);
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	static struct task_rec r[64];
	struct task_view v;
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v);
	printf("\n  last thread's pthread_exit: %u samples, %u exit\n", v.samples, v.exits);
	CU_ASSERT_EQUAL(v.samples, 2);
	CU_ASSERT_EQUAL(v.exits, 1);
	CU_ASSERT_EQUAL(v.after_exit, 0);
	ring_close(&ring);
}

/* exit_group: a process whose main thread ends the process (exit(), or SIGKILL) while its worker still runs.
 * Linux kills the worker with it and writes one EXIT per task, each from its own do_exit: the worker's with
 * the process's pid, its own tid and its own sample_id, after its samples. */
static int sib_ack[2], sib_never[2];

static void *sibling_worker(void *arg)
{
	(void)arg;
	char c;
	api.advance(1);
	hot_virtual_kernel(250000); /* 2 samples */
	if (write(sib_ack[1], "a", 1) != 1)
		_exit(5);
	(void)read(sib_never[0], &c, 1); /* runs on (blocked) until the process ends */
	return NULL;
}

static void sibling_exit_run(int killed)
{
	int go[2];
	CU_ASSERT_FATAL(pipe(sib_ack) == 0 && pipe(sib_never) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		char c;
		pthread_t t;
		if (pthread_create(&t, NULL, sibling_worker, NULL) != 0 || read(sib_ack[0], &c, 1) != 1)
			_exit(4);
		hot_virtual_kernel(150000); /* 1 sample of the main thread */
		if (killed)
			raise(SIGKILL);
		exit(0); /* the worker is still in its read */
	}
	struct ring ring;
	uint64_t id;
	task_ring_open(&ring, child, 1, &id, DATA_PAGES);
	task_go(go);
	int st = reap(child);
	if (killed) {
		CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	} else {
		CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1); /* a killed process's EXITs are written by now */
	CU_ASSERT(p.revents & POLLHUP);
	static struct task_rec r[64];
	unsigned n = task_records(ring.page, r, 64);
	uint32_t w = forked_tid(r, n);
	struct task_view vm, vw;
	thread_view(r, n, w, &vw);
	thread_view(r, n, (uint32_t)child, &vm);
	printf(
	    "\n  %s while its worker runs: worker %u samples, %u exit (pid %u tid %u, sample_id pid %u tid "
	    "%u); main %u samples, %u exit\n",
	    killed ? "SIGKILL" : "exit()", vw.samples, vw.exits, vw.exit.pid, vw.exit.tid, vw.exit.id_pid,
	    vw.exit.id_tid, vm.samples, vm.exits);
	CU_ASSERT(w != 0 && w != (uint32_t)child);
	CU_ASSERT_EQUAL(vw.samples, 2);
	CU_ASSERT_EQUAL(vw.exits, 1);
	CU_ASSERT_EQUAL(vw.after_exit, 0);
	CU_ASSERT(vw.exit.pid == (uint32_t)child && vw.exit.tid == w);
	CU_ASSERT(vw.exit.id_pid == (uint32_t)child && vw.exit.id_tid == w);
	CU_ASSERT(vw.exit.id == id && vw.exit.stream_id == id && vw.exit.cpu == vw.cpu);
	CU_ASSERT_EQUAL(vm.samples, 1);
	CU_ASSERT_EQUAL(vm.exits, 1);
	CU_ASSERT(vm.exit.id_pid == (uint32_t)child && vm.exit.id_tid == (uint32_t)child);
	for (int i = 0; i < 2; i++) {
		close(sib_ack[i]);
		close(sib_never[i]);
	}
	ring_close(&ring);
}

static void test_sample_other_process_exit_group(void)
{
	sibling_exit_run(0);
}

static void test_sample_other_process_killed_with_worker(void)
{
	sibling_exit_run(1);
}

/* The run's slot of a forked child is the one its own fork made. R, the sampled process, forks A, which
 * exits at once; R reaps it, then forks B with A's pid (ns_last_pid; root only) and B held at
 * the emulator's fork gate (rvemu_test_fork_gate) before it registers, so R's fork returns first (A and B
 * again when another process of the machine took the pid first). R exits at once. While B is held: R is gone,
 * B is R's inheriting descendant and alive, so the owner's poll says no POLLHUP (before: R's fork took A's
 * exited slot for B's, B had none, POLLHUP, and perf record would stop reading). Then B runs 250000 cycles:
 * its FORK names R, the parent at fork time (not the reaper it has by then, this process, a subreaper), 2
 * samples, one EXIT. `reuse`: force A's pid on B; 0: a plain second child (the reparenting case alone). */
static pid_t write_last_pid(pid_t pid)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d", (int)pid);
	ssize_t w = write(fd, buf, (size_t)len);
	close(fd);
	return w == len ? 0 : -1;
}

/* A process's start time in clock ticks since boot (/proc/<pid>/stat field 22), 0 if unreadable. */
static uint64_t start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) != 0)
		return 0;
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return p && *p ? strtoull(p, NULL, 10) : 0;
}

static uint64_t boot_ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK);
	return (uint64_t)ts.tv_sec * hz + (uint64_t)ts.tv_nsec / (1000000000ull / hz);
}

/* Whether a process is gone or a zombie with no thread left (a leader shows Z while other threads end:
 * qemu-user's own threads end after the guest's), from /proc/<pid>/status. */
static int child_gone(pid_t pid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) != 0)
		return 1;
	const char *state = strstr(buf, "\nState:"), *threads = strstr(buf, "\nThreads:");
	return !state || ((strstr(state, "Z (zombie)") == state + 8 || state[8] == 'X') &&
	                  (!threads || strtol(threads + 9, NULL, 10) <= 1));
}

static void held_child_run(int reuse)
{
	int go[2], gate[2], info[2], fin[2], ran[2];
	CU_ASSERT_FATAL(pipe(gate) == 0 && pipe(info) == 0 && pipe(fin) == 0 && pipe2(ran, O_NONBLOCK) == 0);
	void (*fork_gate)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "rvemu_test_fork_gate");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fork_gate);
	/* B comes to us when R is gone, and we reap it; qemu-user (riscv64 stage) has no subreaper, and B
	 * goes to init, which reaps it: its end is then the end of fin's last writer */
	int subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
	if (!subreaper)
		printf("\n  no PR_SET_CHILD_SUBREAPER (%s): B's parent will be init", strerror(errno));
	pid_t r = fork_task_after_go(go, NULL);
	if (r == 0) {
		/* B gets A's pid unless another process of the machine takes it between the write of
		 * ns_last_pid and the fork (and keeps it): then A and B again, a bounded number of times */
		pid_t a = -1, b = -1;
		for (int tries = 0; tries < 20 && b < 0; tries++) {
			a = fork();
			if (a == 0)
				_exit(0); /* A: FORK and EXIT, then its pid is free */
			uint64_t a_start = a > 0 ? start_ticks(a) : 0;
			int st = 0;
			if (a < 0 || waitpid(a, &st, 0) != a || !WIFEXITED(st))
				_exit(4);
			/* B starts in a later clock tick than A (the start times /proc shows tell them
			 * apart): a condition, bounded */
			for (int i = 0; reuse && i < 1000 && boot_ticks() <= a_start + 1; i++)
				usleep(1000);
			if (reuse && write_last_pid(a - 1) != 0)
				_exit(5);
			fork_gate(gate[0]);
			b = fork();
			if (b == 0) {
				/* the gate opened: this child runs (a stray one of a missed try ends) */
				if (reuse && getpid() != a)
					_exit(0);
				if (write(ran[1], "b", 1) != 1)
					_exit(8);
				hot_virtual_kernel(250000);
				_exit(0);
			}
			if (b < 0 || !reuse || b == a)
				break;
			if (write(gate[1], "g", 1) != 1 || waitpid(b, &st, 0) != b)
				_exit(6);
			b = -1;
		}
		pid_t ids[2] = {a, b};
		_exit(write(info[1], ids, sizeof(ids)) == sizeof(ids) && b > 0 ? 0 : 7);
	}
	close(info[1]);
	close(fin[1]); /* R, A and B hold it: EOF once they all ended */
	struct ring ring;
	task_ring_open(&ring, r, 1, NULL, 16); /* room for the task records of 20 tries */
	task_go(go);
	pid_t ids[2] = {0, 0};
	CU_ASSERT_EQUAL(read(info[0], ids, sizeof(ids)), (ssize_t)sizeof(ids));
	reap_exited_ok(r);
	pid_t a = ids[0], b = ids[1];
	/* R gone, B held before it registered: B still runs (and has not passed the gate) */
	char c;
	int passed_gate = read(ran[0], &c, 1) == 1;
	struct pollfd p = {ring.fd, POLLIN, 0};
	int pr = poll(&p, 1, 0);
	CU_ASSERT_EQUAL(passed_gate, 0);
	printf("\n  A %d, B %d%s; R gone, B held%s: poll %d POLLHUP %d", (int)a, (int)b,
	       reuse ? " (A's pid reused)" : "", passed_gate ? " (NOT: it ran)" : "", pr,
	       !!(p.revents & POLLHUP));
	if (reuse) {
		CU_ASSERT_EQUAL(b, a);
	}
	CU_ASSERT_EQUAL(p.revents & POLLHUP, 0);
	/* release B, which is ours now (subreaper) or init's */
	CU_ASSERT_EQUAL(write(gate[1], "g", 1), 1);
	CU_ASSERT_EQUAL(read(fin[0], &c, 1), 0); /* B is ending: its files are closed */
	if (subreaper) {
		int st = -1;
		CU_ASSERT(b > 0 && waitpid(b, &st, 0) == b);
		CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	} else { /* init's child: gone once a zombie (its files close before), looked for a bounded time */
		for (int i = 0; i < 10000 && kill(b, 0) == 0 && !child_gone(b); i++)
			usleep(1000);
	}
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	static struct task_rec rec[256];
	unsigned n = task_records(ring.page, rec, 256);
	struct task_view va;
	records_view(rec, n, (uint32_t)a, 0, &va); /* by pid: A's records, then B's when B has A's pid */
	unsigned forks_b = 0, exits_b = 0, samples_b = 0, seen_exit_a = 0;
	struct task_rec fork_b;
	memset(&fork_b, 0, sizeof(fork_b));
	for (unsigned i = 0; i < n; i++) { /* B's: after A's EXIT when they share the pid */
		if (rec[i].pid != (uint32_t)b)
			continue;
		if (reuse && !seen_exit_a) {
			seen_exit_a = rec[i].type == PERF_RECORD_EXIT;
			continue;
		}
		if (rec[i].type == PERF_RECORD_FORK) {
			forks_b++;
			fork_b = rec[i];
		} else if (rec[i].type == PERF_RECORD_EXIT) {
			exits_b++;
		} else {
			samples_b++;
		}
	}
	printf("; B: %u fork (ppid %u ptid %u, sample_id pid %u; R %d), %u samples, %u exit\n", forks_b,
	       fork_b.ppid, fork_b.ptid, fork_b.id_pid, (int)r, samples_b, exits_b);
	CU_ASSERT_EQUAL(va.exits, reuse ? 2u : 1u); /* A's (and B's, with A's pid) */
	CU_ASSERT_EQUAL(forks_b, 1);
	CU_ASSERT(fork_b.ppid == (uint32_t)r && fork_b.ptid == (uint32_t)r);
	CU_ASSERT(fork_b.id_pid == (uint32_t)r && fork_b.id_tid == (uint32_t)r);
	CU_ASSERT_EQUAL(samples_b, 2);
	CU_ASSERT_EQUAL(exits_b, 1);
	if (subreaper) {
		CU_ASSERT_EQUAL(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
	}
	close(info[0]);
	close(fin[0]);
	close(ran[0]);
	close(ran[1]);
	close(gate[0]);
	close(gate[1]);
	ring_close(&ring);
}

static void test_sample_other_process_pid_reused(void)
{
	if (geteuid() != 0) {
		/* ns_last_pid needs CAP_SYS_ADMIN: said, and counted as a failure, never passed in silence */
		printf("\n  not root: cannot force pid reuse (ns_last_pid)\n");
		CU_FAIL("pid reuse needs root (ns_last_pid)");
		return;
	}
	held_child_run(1);
}

static void test_sample_other_process_reparented_fork(void)
{
	held_child_run(0);
}

/* Rounds of a pid-reuse test whose B missed A's pid because another process of the host took it (each round a
 * new A): a bound, not a tolerance (a round that ran is judged in full). */
#define PID_REUSE_ROUNDS 5

/* Runs a pid-reuse test's `round` (1: it got the pid or tid it wanted and judged the case; 0: another process
 * of the host took it first) until one ran, at most PID_REUSE_ROUNDS times. Root only (ns_last_pid). */
static void pid_reuse_rounds(int (*round)(int arg), int arg, const char *what)
{
	if (geteuid() != 0) {
		printf("\n  not root: cannot force pid reuse (ns_last_pid)\n");
		CU_FAIL("pid reuse needs root (ns_last_pid)");
		return;
	}
	int ran = 0;
	for (int r = 0; r < PID_REUSE_ROUNDS && !ran; r++) {
		ran = round(arg);
		if (!ran)
			printf("\n  round %d: another process of the host took %s: again", r + 1, what);
	}
	CU_ASSERT(ran); /* never got it in PID_REUSE_ROUNDS rounds: said above */
}

/* A process with pid `want` (ns_last_pid; root only) from a raw clone (no fork wrapper: never the emulator's,
 * never registered), blocked until *hold is closed; when another process of the machine took the pid first,
 * again, a bounded number of times. Its pid: `want`, or -1 (a missed one released and reaped). */
static pid_t clone_on_pid(pid_t want, int *hold)
{
	for (int tries = 0; tries < 20; tries++) {
		int p[2], st;
		if (pipe(p) != 0 || write_last_pid(want - 1) != 0)
			return -1;
		pid_t b = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (b == 0) { /* raw system calls only: this child is not the emulator's */
			char c;
			syscall(SYS_close, (long)p[1]);
			syscall(SYS_read, (long)p[0], &c, 1L);
			syscall(SYS_exit_group, 0L);
		}
		close(p[0]);
		if (b == want) {
			*hold = p[1];
			return b;
		}
		close(p[1]); /* a missed try (or none): release and reap it */
		if (b > 0)
			waitpid(b, &st, 0);
		if (b < 0)
			return -1;
	}
	return -1;
}

/* A killed process's pid on a process not forked under the emulator: its own slot, never the dead one's. A is
 * this process's child, watched by fd_a, killed and reaped; polling fd_a writes A's EXIT (its slot stays in
 * the run's table). B gets A's pid (ns_last_pid) from a raw clone (no fork wrapper: not registered), in a
 * later clock tick; fd_b is opened on it. Before: fd_b took A's slot, whose EXIT was claimed: POLLHUP at once
 * (A's end taken for B's) and B's EXIT never written. Now: no POLLHUP while B lives, then one EXIT each. */
/* One round of the test below: 1 when it ran (its checks asserted), 0 when B could not get A's pid (another
 * process of the host took it first: with tests running beside this one, a fork between the write of
 * ns_last_pid and the clone, that keeps the pid) -- the host's doing, not the emulator's: a new A then. */
static int killed_pid_reused_round(int unused)
{
	(void)unused;
	struct perf_event_attr at;
	sample_attr(&at, 100000);
	at.sample_type = TASKREC_TYPE;
	at.disabled = 0;
	at.task = 1;
	at.sample_id_all = 1;
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + 4);
	int hold_a[2], ready_a[2];
	CU_ASSERT_FATAL(pipe(hold_a) == 0 && pipe(ready_a) == 0);
	pid_t a = fork();
	CU_ASSERT_FATAL(a >= 0);
	if (a == 0) {
		char c = 'r';
		/* registered in the run's table (the fork's handlers are done): say so, then block outside
		 * the emulator, so that this test is about slots (A killed inside the run table's lock: its
		 * own test, test_run_lock_holder_killed_pid_reused). */
		_exit(write(ready_a[1], &c, 1) != 1 || read(hold_a[0], &c, 1) < 0 ? 1
		                                                                  : 0); /* killed before */
	}
	char ready;
	CU_ASSERT_FATAL(read(ready_a[0], &ready, 1) == 1);
	close(ready_a[0]);
	close(ready_a[1]);
	int fd_a = perf_open(&at, a, -1, -1, 0);
	CU_ASSERT_FATAL(fd_a >= 0);
	void *map_a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_a, 0);
	CU_ASSERT_FATAL(map_a != MAP_FAILED);
	uint64_t a_start = start_ticks(a);
	int st = 0;
	CU_ASSERT_EQUAL(kill(a, SIGKILL), 0);
	CU_ASSERT_EQUAL(waitpid(a, &st, 0), a);
	struct pollfd p = {fd_a, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP); /* A's EXIT written (claimed) */
	for (int i = 0; i < 1000 && boot_ticks() <= a_start + 1;
	     i++) /* a later start: a condition, bounded */
		usleep(1000);
	int hold_b;
	pid_t b = clone_on_pid(a, &hold_b);
	if (b != a) {
		close(hold_a[0]);
		close(hold_a[1]);
		munmap(map_a, len);
		close(fd_a);
		return 0;
	}
	int fd_b = perf_open(&at, b, -1, -1, 0);
	CU_ASSERT_FATAL(fd_b >= 0);
	void *map_b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_b, 0);
	CU_ASSERT_FATAL(map_b != MAP_FAILED);
	struct pollfd pb = {fd_b, POLLIN, 0};
	int pr = poll(&pb, 1, 0);
	int early_hup = !!(pb.revents & POLLHUP);
	close(hold_b);
	CU_ASSERT_EQUAL(waitpid(b, &st, 0), b);
	CU_ASSERT_EQUAL(poll(&pb, 1, 0), 1);
	CU_ASSERT(pb.revents & POLLHUP);
	static struct task_rec rec[64];
	struct task_view va, vb;
	records_view(rec, task_records(map_a, rec, 64), (uint32_t)a, 0, &va);
	records_view(rec, task_records(map_b, rec, 64), (uint32_t)b, 0, &vb);
	printf("\n  A %d killed, B %d: B alive: poll %d POLLHUP %d; EXITs: A's event %u, B's event %u\n",
	       (int)a, (int)b, pr, early_hup, va.exits, vb.exits);
	CU_ASSERT_EQUAL(early_hup, 0);
	CU_ASSERT_EQUAL(va.exits, 1);
	CU_ASSERT_EQUAL(vb.exits, 1);
	close(hold_a[0]);
	close(hold_a[1]);
	munmap(map_a, len);
	munmap(map_b, len);
	close(fd_a);
	close(fd_b);
	return 1;
}

static void test_sample_other_process_killed_pid_reused(void)
{
	pid_reuse_rounds(killed_pid_reused_round, 0, "A's pid before B");
}

/* A fork child whose pid was a thread's of its parent: its own thread record, never the dead thread's. The
 * parent's thread registry, copied into the child, still holds the records of the parent's threads that
 * ended; the child's first look for its own record went by tid alone, so a child that got such a tid (pids
 * wrap; on a host where another process writes ns_last_pid, within seconds) took the dead thread's record:
 * its slot in the run's table (the thread's, not the child's own), its hart and clock. An event opened on
 * the child then never reached it (another slot): 0 samples, and the owner wrote its EXIT when it was
 * killed (test_emu, "killed at once, SIGCHLD handled": 0 samples, 1 exit, on a loaded host). Here a thread
 * of this process enters the emulator and ends; a child gets its tid (ns_last_pid; root only) and runs
 * 150000 cycles: 1 sample, 1 EXIT. */
static void *registered_thread(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	api.advance(1); /* its record in this process's registry */
	return NULL;
}

/* One round: 1 when the child got the thread's tid (its checks asserted), 0 when another process of the host
 * took it first (a new thread then). */
static int thread_tid_reused_round(int unused)
{
	(void)unused;
	pthread_t th;
	pid_t tid = 0;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, registered_thread, &tid) == 0);
	CU_ASSERT_FATAL(pthread_join(th, NULL) == 0);
	int go[2];
	pid_t child = -1;
	for (int tries = 0; tries < 20 && child != tid; tries++) {
		/* the thread's tid is free once the kernel released it, a little after the join: tried again
		 */
		if (child > 0) {
			close(go[1]);
			int st;
			waitpid(child, &st, 0); /* read() saw no "go": it ended at once */
		}
		if (write_last_pid(tid - 1) != 0)
			return 0;
		child = fork_task_after_go(go, NULL);
		if (child == 0) {
			hot_virtual_kernel(150000); /* 1 sample */
			_exit(0);
		}
	}
	if (child != tid) {
		close(go[1]);
		int st;
		waitpid(child, &st, 0);
		return 0;
	}
	struct ring ring;
	task_ring_open(&ring, child, 0, NULL, DATA_PAGES);
	task_go(go);
	reap_exited_ok(child);
	struct pollfd p = {ring.fd, POLLIN, 0};
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	static struct task_rec r[64];
	struct task_view v;
	task_view(r, task_records(ring.page, r, 64), (uint32_t)child, &v);
	printf("\n  child %d on an ended thread's tid: %u samples, %u exit\n", (int)child, v.samples,
	       v.exits);
	CU_ASSERT_EQUAL(v.samples, 1);
	CU_ASSERT_EQUAL(v.exits, 1);
	CU_ASSERT_EQUAL(v.after_exit, 0);
	ring_close(&ring);
	return 1;
}

static void test_sample_other_process_thread_tid_reused(void)
{
	pid_reuse_rounds(thread_tid_reused_round, 0, "the thread's tid");
}

/* A thread whose tid was an ended thread's of the same process: a record of its own. Records are never freed,
 * and the first look for a thread's record went by tid (and pid) alone, so the new thread C took the ended
 * thread A's: its clock, counts, hart and slot in the run's table. A ends each way a thread can: its start
 * routine returns, it is cancelled (it unwinds past the trampoline's end), or it never called the emulator
 * itself (its record made by this thread's perf_event_open on it). An event opened on A reads what A counted
 * (nothing after the open), not C's work; one opened on C before C's first look counts C (the lookup by tid
 * finds A's ended record and must see that C is another thread: a later start). */
enum a_end { A_RETURNS, A_CANCELLED, A_NEVER_LOOKED, A_END_WAYS };
static const char *const a_end_names[] = {"returns", "is cancelled", "never looked itself up"};

struct tid_reuse {
	enum a_end how;
	pid_t want;                /* C: the tid it must have to go on (0: A) */
	volatile pid_t tid;        /* set by the thread */
	volatile int go, released; /* set by this thread */
	uint64_t cycles_at_start;  /* C: its clock at its first look */
};

static void wait_flag(volatile int *flag)
{
	for (long i = 0; i < 20000000L && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		sched_yield();
}

static void *thread_a(void *arg)
{
	struct tid_reuse *r = arg;
	if (r->how != A_NEVER_LOOKED)
		api.advance(500); /* its own first look */
	__atomic_store_n(&r->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (long i = 0; i < 20000000L && !__atomic_load_n(&r->released, __ATOMIC_ACQUIRE); i++) {
		if (r->how == A_CANCELLED)
			pthread_testcancel();
		sched_yield();
	}
	return NULL;
}

static void *thread_c(void *arg)
{
	struct tid_reuse *r = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&r->tid, tid, __ATOMIC_RELEASE);
	if (tid != r->want)
		return NULL;                      /* not the tid wanted: another try */
	wait_flag(&r->go);                        /* this thread opens an event on C first */
	r->cycles_at_start = api.thread_cycles(); /* its first look */
	api.advance(1000000);
	return NULL;
}

/* One round: 1 when C got A's tid (its checks asserted), 0 when another process of the host took it first. */
static int thread_tid_round(int how_int)
{
	enum a_end how = (enum a_end)how_int;
	struct tid_reuse a = {.how = how}, c = {.how = how};
	pthread_t ta, tc;
	CU_ASSERT_FATAL(pthread_create(&ta, NULL, thread_a, &a) == 0);
	wait_flag((volatile int *)&a.tid);
	struct perf_event_attr at;
	attr_init(&at, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	at.disabled = 0;
	int on_a = perf_open(&at, a.tid, -1, -1, 0);
	CU_ASSERT_FATAL(on_a >= 0);
	void *ret = NULL;
	if (how == A_CANCELLED) {
		CU_ASSERT_EQUAL(pthread_cancel(ta), 0); /* acts at its pthread_testcancel */
	} else {
		__atomic_store_n(&a.released, 1, __ATOMIC_RELEASE);
	}
	CU_ASSERT_FATAL(pthread_join(ta, &ret) == 0);
	CU_ASSERT((how == A_CANCELLED) == (ret == PTHREAD_CANCELED));
	/* C starts in a later clock tick than A (start times count 10 ms ticks): a tid reused within its old
	 * thread's tick looks like that thread to a lookup by tid (docs/emulator-core.md) */
	struct timespec ms30 = {0, 30000000};
	nanosleep(&ms30, NULL);
	c.want = a.tid;
	for (int tries = 0; tries < 20 && c.tid != a.tid; tries++) {
		c.tid = 0;
		if (write_last_pid(a.tid - 1) != 0)
			break;
		CU_ASSERT_FATAL(pthread_create(&tc, NULL, thread_c, &c) == 0);
		wait_flag((volatile int *)&c.tid);
		if (c.tid != a.tid)
			CU_ASSERT_FATAL(pthread_join(tc, NULL) == 0);
	}
	if (c.tid != a.tid) {
		close(on_a);
		return 0;
	}
	int on_c = perf_open(&at, c.tid, -1, -1, 0); /* before C's first look */
	CU_ASSERT(on_c >= 0);
	__atomic_store_n(&c.go, 1, __ATOMIC_RELEASE);
	CU_ASSERT_FATAL(pthread_join(tc, NULL) == 0);
	uint64_t va = 0, vc = 0;
	CU_ASSERT_EQUAL(read(on_a, &va, sizeof(va)), (ssize_t)sizeof(va));
	CU_ASSERT(on_c >= 0 && read(on_c, &vc, sizeof(vc)) == (ssize_t)sizeof(vc));
	printf("\n  A %s (tid %d); C on its tid: started at %llu cycles, event on A %llu, event on C %llu",
	       a_end_names[how], (int)a.tid, (unsigned long long)c.cycles_at_start, (unsigned long long)va,
	       (unsigned long long)vc);
	CU_ASSERT_EQUAL(c.cycles_at_start, 0);
	CU_ASSERT_EQUAL(va, 0);
	CU_ASSERT(vc >= 1000000);
	close(on_a);
	if (on_c >= 0)
		close(on_c);
	return 1;
}

static void test_thread_on_ended_threads_tid(void)
{
	for (int how = 0; how < A_END_WAYS; how++)
		pid_reuse_rounds(thread_tid_round, how, "A's tid");
	printf("\n");
}

/* The run table's lock, its holder killed inside the section and its pid a new process's at once. R, a child
 * of this process, forks A, held inside the lock by the emulator's in-lock fork gate
 * (rvemu_test_fork_gate_in_lock) once it said so (and held before it by rvemu_test_fork_gate until R's fork
 * has returned: that takes the lock too); R kills and reaps A, then B gets A's pid (ns_last_pid) from
 * a raw clone in a later clock tick, and R opens an event on B, which takes the lock. Before, the lock word
 * named its holder by pid alone, B's pid was alive, and R spun for as long as B lived (a fresh-clone CI run
 * hung so). Now the holder is told by its start too and the lock taken over. R does it all, so a regression
 * hangs R, not this test: R is waited for a bounded time, then killed and counted a failure. R's exit status
 * says which step failed. */
enum { LOCK_R_OK, LOCK_R_NO_HOOK, LOCK_R_A_NOT_HOLDING, LOCK_R_B_NOT_ON_A, LOCK_R_OPEN_FAILED };
static const char *const lock_r_step[] = {"ok", "no in-lock fork gate (rvemu_test_fork_gate_in_lock)",
                                          "A did not say it holds the lock", "B did not get A's pid",
                                          "perf_event_open on B failed"};

static int lock_holder_reused_run(void)
{
	void (*gate_in_lock)(int, int) =
	    (void (*)(int, int))dlsym(RTLD_DEFAULT, "rvemu_test_fork_gate_in_lock");
	void (*gate_before)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "rvemu_test_fork_gate");
	int before[2], gate[2], ready[2], st;
	if (!gate_in_lock || !gate_before || pipe(before) != 0 || pipe(gate) != 0 || pipe(ready) != 0)
		return LOCK_R_NO_HOOK;
	/* fork() returning here takes the lock too (the child's slot, its FORK record): A waits before the
	 * lock until that is done (else R would wait for A, which waits for R), then takes it and says so */
	gate_before(before[0]);
	gate_in_lock(gate[0], ready[1]);
	pid_t a = fork();
	if (a < 0)
		return LOCK_R_NO_HOOK;
	if (a == 0)
		_exit(0); /* never reached: killed at the gate */
	char c = 'g';
	int holding = write(before[1], &c, 1) == 1 && read(ready[0], &c, 1) == 1;
	uint64_t a_start = start_ticks(a);
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
	if (!holding)
		return LOCK_R_A_NOT_HOLDING;
	for (int i = 0; i < 1000 && boot_ticks() <= a_start + 1;
	     i++) /* a later start: a condition, bounded */
		usleep(1000);
	int hold;
	pid_t b = clone_on_pid(a, &hold);
	if (b != a)
		return LOCK_R_B_NOT_ON_A;
	struct perf_event_attr at;
	sample_attr(&at, 100000);
	int fd = perf_open(&at, b, -1, -1, 0);
	close(hold);
	waitpid(b, &st, 0);
	if (fd < 0)
		return LOCK_R_OPEN_FAILED;
	close(fd);
	return LOCK_R_OK;
}

static void test_run_lock_holder_killed_pid_reused(void)
{
	if (geteuid() != 0) {
		printf("\n  not root: cannot force pid reuse (ns_last_pid)\n");
		CU_FAIL("pid reuse needs root (ns_last_pid)");
		return;
	}
	/* B misses A's pid when another process of the host takes it first (tests beside this one fork): a
	 * new R and A then, a bounded number of times */
	int step = LOCK_R_B_NOT_ON_A;
	for (int round = 0; round < PID_REUSE_ROUNDS && step == LOCK_R_B_NOT_ON_A; round++) {
		fflush(stdout);
		pid_t r = fork();
		CU_ASSERT_FATAL(r >= 0);
		if (r == 0) {
			setpgid(0, 0); /* R's own group: A and B are in it, so a hang is killed whole */
			_exit(lock_holder_reused_run());
		}
		int st = 0;
		pid_t w = 0;
		/* a hang detector, not a measure: 60 s for what takes milliseconds */
		for (int i = 0; i < 6000 && (w = waitpid(r, &st, WNOHANG)) == 0; i++)
			usleep(10000);
		if (w == 0) {
			kill(
			    -r,
			    SIGKILL); /* R, and A holding the lock (else every later test of the run waits) */
			waitpid(r, &st, 0);
			for (int i = 0; i < 8; i++) /* A and B, if they came to this process (a subreaper) */
				waitpid(-r, &st, WNOHANG);
			CU_FAIL(
			    "the run table's lock, held by a killed process whose pid is now B's, was never "
			    "taken over");
			return;
		}
		step = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		printf("\n  R (round %d): %s\n", round + 1,
		       step >= 0 && step <= LOCK_R_OPEN_FAILED ? lock_r_step[step] : "killed by a signal");
	}
	CU_ASSERT_EQUAL(step, LOCK_R_OK);
}

/* A process whose start time cannot be read is not taken for dead: with every file descriptor of this
 * process in use (EMFILE), /proc cannot be read, and polling an event on a live child says no POLLHUP
 * (before: a start of 0 differed from the slot's, the child was called dead). */
static void test_sample_other_process_start_unreadable(void)
{
	int hold[2];
	CU_ASSERT_FATAL(pipe(hold) == 0);
	pid_t c = fork();
	CU_ASSERT_FATAL(c >= 0);
	if (c == 0) {
		char ch;
		close(hold[1]);
		_exit(read(hold[0], &ch, 1) < 0 ? 1 : 0);
	}
	close(hold[0]);
	struct perf_event_attr at;
	sample_attr(&at, 100000);
	at.sample_type = TASKREC_TYPE;
	at.disabled = 0;
	at.task = 1;
	int fd = perf_open(&at, c, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + 4);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	/* a soft limit of 1024 at most, whatever the machine's: the loop below fills it */
	struct rlimit was;
	CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &was) == 0);
	struct rlimit low = was;
	if (low.rlim_cur > 1024)
		low.rlim_cur = 1024;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &low) == 0);
	static int spare[1024];
	unsigned n = 0;
	for (; n < sizeof(spare) / sizeof(spare[0]); n++) /* every descriptor in use, bounded */
		if ((spare[n] = dup(fd)) < 0)
			break;
	int full = n < sizeof(spare) / sizeof(spare[0]) && errno == EMFILE;
	struct pollfd p = {fd, POLLIN, 0};
	int pr = poll(&p, 1, 0);
	int hup = !!(p.revents & POLLHUP);
	for (unsigned i = 0; i < n; i++)
		close(spare[i]);
	CU_ASSERT(setrlimit(RLIMIT_NOFILE, &was) == 0);
	printf("\n  descriptors full %d (%u more): child alive, poll %d POLLHUP %d\n", full, n, pr, hup);
	CU_ASSERT(full);
	CU_ASSERT_EQUAL(hup, 0);
	close(hold[1]);
	int st = 0;
	CU_ASSERT_EQUAL(waitpid(c, &st, 0), c);
	CU_ASSERT_EQUAL(poll(&p, 1, 0), 1);
	CU_ASSERT(p.revents & POLLHUP);
	munmap(map, len);
	close(fd);
}

/* prctl(PR_TASK_PERF_EVENTS_DISABLE/ENABLE) reaches the copies of an inherit event on another process's task,
 * as perf_event_task_disable does (perf_event_for_each_child): a counting event with inherit on child C,
 * whose grandchild G runs 1000000 cycles, then 2000000 after the owner's DISABLE (not counted), then 500000
 * after its ENABLE. Before, prctl switched the event of C alone: G's copy counted on, and the event read the
 * 2000000 cycles G ran while it was off. */
static void test_count_other_process_prctl(void)
{
	int go[2], ack[2], step[2];
	CU_ASSERT_FATAL(pipe(ack) == 0);
	CU_ASSERT_FATAL(pipe(step) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		close(ack[0]);
		close(step[1]);
		pid_t g = fork();
		if (g == 0) {
			char c;
			api.advance(1000000);
			if (write(ack[1], "a", 1) != 1 || read(step[0], &c, 1) != 1)
				_exit(4);
			api.advance(2000000);
			if (write(ack[1], "b", 1) != 1 || read(step[0], &c, 1) != 1)
				_exit(5);
			api.advance(500000);
			_exit(0);
		}
		close(ack[1]);
		close(step[0]);
		int st = 0;
		_exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
	}
	close(ack[1]);
	close(step[0]);
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.disabled = 0;
	a.inherit = 1;
	int fd = perf_open(&a, child, -1, -1, 0);
	CU_ASSERT(fd >= 0);
	task_go(go);
	char c;
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1); /* G ran its first 1000000 cycles */
	CU_ASSERT_EQUAL(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), 0);
	uint64_t off = fd >= 0 ? read_count(fd) : 0;
	CU_ASSERT_EQUAL(write(step[1], "x", 1), 1);
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1); /* and 2000000 more, the event off */
	uint64_t still = fd >= 0 ? read_count(fd) : 0;
	CU_ASSERT_EQUAL(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(write(step[1], "y", 1), 1);
	close(step[1]);
	close(ack[0]);
	reap_exited_ok(child);
	uint64_t end = fd >= 0 ? read_count(fd) : 0;
	printf(
	    "\n  inherit copy of another process's task: %llu at DISABLE, %llu while off, %llu at the end\n",
	    (unsigned long long)off, (unsigned long long)still, (unsigned long long)end);
	CU_ASSERT(off >= 1000000);
	CU_ASSERT_EQUAL(still, off);
	CU_ASSERT_EQUAL(end, off + 500000);
	if (fd >= 0)
		close(fd);
}

/* PERF_EVENT_IOC_RESET and PERF_EVENT_IOC_PERIOD on an event sampling another process reach the task's shadow
 * (when it next looks at the blocks: here its rvemu_advance): the task runs 150001 cycles (1 sample of
 * 100000), stops; the owner resets the event and sets a period of 30000; the task runs 100001 more: 3 samples
 * of 30000 (a whole new period from the PERIOD, as __perf_event_period clears period_left), and the event
 * reads what the task counted after the RESET, exactly (the shadow's unpublished count from before it is
 * dropped, as the kernel zeroes the count). */
static void test_sample_other_process_period_reset(void)
{
	int go[2], ack[2];
	CU_ASSERT_FATAL(pipe(ack) == 0);
	pid_t child = fork_task_after_go(go, NULL);
	if (child == 0) {
		char c;
		close(ack[0]);
		hot_virtual_kernel(150000);
		if (write(ack[1], "a", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		api.advance(1);
		hot_virtual_kernel(100000);
		_exit(0);
	}
	close(ack[1]);
	struct perf_event_attr a;
	sample_attr(&a, 100000);
	a.disabled = 0;
	int fd = perf_open(&a, child, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * (1 + DATA_PAGES);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	char c;
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	CU_ASSERT_EQUAL(read(ack[0], &c, 1), 1);
	uint64_t period = 30000;
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_PERIOD, &period), 0);
	CU_ASSERT_EQUAL(write(go[1], "y", 1), 1);
	close(go[1]);
	close(ack[0]);
	reap_exited_ok(child);
	/* the samples' PERIOD fields: {ip, pid/tid, time, period} */
	const struct perf_event_mmap_page *page = map;
	const unsigned char *data = (const unsigned char *)page + page->data_offset;
	uint64_t size = page->data_size, head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), tail = 0;
	unsigned old_period = 0, new_period = 0, other = 0;
	for (unsigned k = 0; tail < head && k < 100000; k++) {
		unsigned char rec[256];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(rec))
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % size];
		tail += h.size;
		const uint64_t *f = (const uint64_t *)(rec + sizeof(h));
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		if (f[3] == 100000 && !new_period)
			old_period++;
		else if (f[3] == period)
			new_period++;
		else
			other++;
	}
	uint64_t count = read_count(fd);
	printf("\n  after RESET and PERIOD 30000: %u samples of 100000, %u of 30000, %u other; reads %llu\n",
	       old_period, new_period, other, (unsigned long long)count);
	CU_ASSERT_EQUAL(old_period, 1);
	CU_ASSERT_EQUAL(new_period, 3);
	CU_ASSERT_EQUAL(other, 0);
	CU_ASSERT_EQUAL(count, 100001);
	munmap(map, len);
	close(fd);
}

/* Bad input: the run holds EMU_RUN_BLOCKS (256) sampling events on other processes; the next open is ENOMEM
 * (said once on stderr), and closing one makes room again. */
static void test_sample_other_process_full(void)
{
	int go[2];
	CU_ASSERT_FATAL(pipe(go) == 0);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		char c;
		close(go[1]);
		_exit(read(go[0], &c, 1) == 0 ? 0 : 1); /* until the parent closes its end */
	}
	close(go[0]);
	static int fd[300];
	struct perf_event_attr a;
	sample_attr(&a, 100000);
	int n = 0, err = 0;
	while (n < 300) {
		fd[n] = perf_open(&a, child, -1, -1, 0);
		if (fd[n] < 0) {
			err = errno;
			break;
		}
		n++;
	}
	CU_ASSERT_EQUAL(n, 256);
	CU_ASSERT_EQUAL(err, ENOMEM);
	if (n > 0) {
		close(fd[--n]);
		int again = perf_open(&a, child, -1, -1, 0);
		CU_ASSERT(again >= 0);
		if (again >= 0)
			close(again);
	}
	while (n > 0)
		close(fd[--n]);
	close(go[1]);
	reap(child);
}

void add_sample_suites(void)
{
	if (!sscofpmf)
		return; /* refusals without Sscofpmf are in the machine suite */
	CU_pSuite s = CU_add_suite("sampling", NULL, NULL);
	if (virtual_clock) {
		CU_add_test(s, "samples with IPs in the hot function", test_virtual_samples);
		CU_add_test(s, "lagging reader: PERF_RECORD_LOST, no silent loss", test_virtual_lost);
		CU_add_test(s, "read_format LOST is cumulative", test_lost_is_cumulative);
		CU_add_test(s, "signals go to the F_SETOWN_EX thread", test_signals_to_owner_thread);
		CU_add_test(s, "IOC_REFRESH budget and IOC_PERIOD", test_refresh);
		CU_add_test(s, "privilege filtering", test_privilege_filter);
		CU_add_test(s, "skid: the interrupt lands after the causing block", test_virtual_skid);
		CU_add_test(s, "skid: overflows in the window share one interrupt",
		            test_virtual_skid_coalesces);
		CU_add_test(s, "a sample taken in the emulator is a kernel sample", test_kernel_samples);
		CU_add_test(s, "another process's child: FORK, its samples, EXIT in our ring",
		            test_sample_other_process);
		CU_add_test(s, "another process sampled twice in turn: the second ring gets its samples",
		            test_sample_other_process_twice);
		CU_add_test(s, "another process sampled by a disabled event: reads 0, no sample",
		            test_sample_other_process_disabled);
		CU_add_test(s, "another process: its owner's closed event fd reused by a file, never written",
		            test_sample_other_process_fd_reused);
		CU_add_test(s, "another process's child killed by SIGKILL: FORK as the parent's, one EXIT",
		            test_sample_other_process_killed_child);
		CU_add_test(s, "another process killed by SIGKILL: the owner writes its EXIT, once",
		            test_sample_other_process_killed);
		CU_add_test(
		    s, "another process's main thread exits, its worker runs on: no POLLHUP, one EXIT each",
		    test_sample_other_process_main_thread_exits);
		CU_add_test(s, "another process's last thread calls pthread_exit: one EXIT",
		            test_sample_other_process_last_thread_exits);
		CU_add_test(s,
		            "another process killed, its owner's SIGCHLD handled, no poll: its EXIT is there",
		            test_sample_other_process_killed_sigchld);
		CU_add_test(s, "another process killed inside its exit path, its EXIT claimed: written, once",
		            test_sample_other_process_killed_in_exit);
		CU_add_test(
		    s,
		    "a killed process waited for without SIGCHLD handler: its EXIT before the wait returns",
		    test_sample_other_process_killed_waited);
		CU_add_test(s, "another process calls exit() while its worker runs: one EXIT each",
		            test_sample_other_process_exit_group);
		CU_add_test(s, "another process killed while its worker runs: one EXIT each",
		            test_sample_other_process_killed_with_worker);
		CU_add_test(s, "another process's child reparented before its FORK: FORK names the parent",
		            test_sample_other_process_reparented_fork);
		CU_add_test(s, "another process's child gets an older child's pid: its own slot",
		            test_sample_other_process_pid_reused);
		CU_add_test(s, "a killed process's pid on a new one: its own slot, one EXIT each",
		            test_sample_other_process_killed_pid_reused);
		CU_add_test(s, "a fork child on an ended thread's tid: its own record, its samples",
		            test_sample_other_process_thread_tid_reused);
		CU_add_test(s, "a thread on an ended thread's tid: its own record and clock",
		            test_thread_on_ended_threads_tid);
		CU_add_test(s,
		            "the run's lock, its holder killed inside, its pid on a new process: taken over",
		            test_run_lock_holder_killed_pid_reused);
		CU_add_test(s, "a process whose start time cannot be read is not taken for dead",
		            test_sample_other_process_start_unreadable);
		CU_add_test(s, "another process: the owner's RESET and PERIOD reach its shadow",
		            test_sample_other_process_period_reset);
		CU_add_test(
		    s, "another process's child counted with inherit: prctl DISABLE/ENABLE reach its copy",
		    test_count_other_process_prctl);
		CU_add_test(s, "sampling events on other processes: 256 per run, then ENOMEM",
		            test_sample_other_process_full);
	} else {
		CU_add_test(s, "cputime: timer samples at the real PC", test_cputime_samples);
		CU_add_test(s, "cputime: overflow + REFRESH counts exactly", test_cputime_refresh_exact);
		CU_add_test(s, "cputime: a preempted thread's samples are punctual", test_cputime_preempted);
		CU_add_test(s, "cputime: two users of the cycle counter are multiplexed, both told",
		            test_shared_cycle_counter);
		CU_add_test(s, "cputime: ... also when another thread samples it",
		            test_cputime_other_thread_preempted);
	}
}

/* RVEMU_TICK_CYCLES=1 or 2 (test_emu.c's launcher): a thread that ran 300 ms before it opens its events (as
 * papi_avail does) counts and samples them, with one tick per cycle or two. Counting: the cycles counted
 * are what the thread ran meanwhile (its truth); sampling: every overflow is a sample, written or lost. */
static void test_tick_every_cycle(void)
{
	burn_cpu_ms(300);
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t t0 = truth_of(&model->events[0]);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	burn_cpu_ms(20);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t count = read_count(fd), truth = truth_of(&model->events[0]) - t0;
	CU_ASSERT(count > 0 && count <= truth);
	close(fd);
	struct ring r;
	struct walk w;
	struct rvemu_stats s0, s1;
	memset(&w, 0, sizeof(w));
	sample_attr(&a, (uint64_t)model->freq_mhz * 1000u);
	CU_ASSERT_FATAL(ring_open(&r, &a, 0) == 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	spin_and_walk(&r, &a, &w, 50);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t overflows = read_count(r.fd) / a.sample_period;
	ring_walk(&r, &a, "hot_spin", &w);
	api.get_stats(&s1);
	printf("\n  RVEMU_TICK_CYCLES=%s: %llu of %llu cycles counted; %u samples of %llu overflows\n",
	       getenv("RVEMU_TICK_CYCLES"), (unsigned long long)count, (unsigned long long)truth, w.samples,
	       (unsigned long long)overflows);
	CU_ASSERT(w.samples >= 40);
	CU_ASSERT_EQUAL(s1.samples_written - s0.samples_written + s1.samples_lost - s0.samples_lost,
	                overflows);
	ring_close(&r);
}

void add_tick_suite(void)
{
	CU_pSuite s = CU_add_suite("scheduler tick", NULL, NULL);
	CU_add_test(s, "RVEMU_TICK_CYCLES=1 or 2: counting and sampling finish", test_tick_every_cycle);
}
