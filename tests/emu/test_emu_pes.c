// SPDX-License-Identifier: MIT
/* Precise Event Sampling (docs/pes.md): precise_ip > 0 on a core with PES (CVA6; the U74 with RVEMU_PES=1)
 * samples without skid into the PES buffer, which interrupts only when full; the emulated kernel turns the
 * records into PERF_RECORD_SAMPLE (PERF_RECORD_MISC_EXACT_IP) and signals once per buffer. A core without
 * PES refuses precise_ip and never shows a sample as precise. */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_test.h"

static int pes_on(void)
{
	const char *p = getenv("RVEMU_PES");
	return model->pes == 2 || (model->pes == 1 && p && !strcmp(p, "1"));
}

static unsigned pes_records(void)
{
	const char *p = getenv("RVEMU_PES_RECORDS");
	return p ? (unsigned)atoi(p) : 64;
}

struct pring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
};

static void precise_attr(struct perf_event_attr *a, uint64_t config_type, uint64_t config, uint64_t period)
{
	attr_init(a, (uint32_t)config_type, config);
	a->sample_period = period;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID;
	a->precise_ip = 2;
	a->wakeup_events = 0; /* a wakeup per sample would ask for one record per interrupt (Linux's rule) */
}

static int pring_open(struct pring *r, struct perf_event_attr *a, int group, size_t data_pages)
{
	r->fd = perf_open(a, 0, -1, group, 0);
	if (r->fd < 0)
		return -1;
	r->len = (size_t)sysconf(_SC_PAGESIZE) * (1 + data_pages);
	void *p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED)
		return -1;
	r->pg = p;
	return 0;
}

static void pring_close(struct pring *r)
{
	munmap(r->pg, r->len);
	close(r->fd);
}

struct pwalk {
	unsigned samples, exact, in_hot, bad_tid, lost_records;
	unsigned kernel; /* kernel samples: taken inside the emulator, at the kernel's text, never exact */
	uint64_t lost, ids[2];
	unsigned by_id[2];
};

static void pring_walk(struct pring *r, const char *hot, pid_t tid, struct pwalk *w)
{
	const unsigned char *data = (const unsigned char *)r->pg + r->pg->data_offset;
	uint64_t size = r->pg->data_size, head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE),
	         tail = r->pg->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t f[4] = {0};
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		for (size_t i = 0; i < sizeof(f) && sizeof(h) + i < h.size; i++)
			((unsigned char *)f)[i] = data[(tail + sizeof(h) + i) % size];
		if (h.type == PERF_RECORD_SAMPLE) {
			w->samples++;
			w->exact += (h.misc & PERF_RECORD_MISC_EXACT_IP) != 0;
			w->kernel += (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
			             !(h.misc & PERF_RECORD_MISC_EXACT_IP) && f[0] == 0xffffffff80000000ull;
			Dl_info info;
			if (hot && dladdr((void *)(uintptr_t)f[0], &info) && info.dli_sname &&
			    !strcmp(info.dli_sname, hot))
				w->in_hot++;
			if ((pid_t)(f[1] >> 32) != tid)
				w->bad_tid++;
			for (int k = 0; k < 2; k++)
				w->by_id[k] += f[2] == w->ids[k];
		} else if (h.type == PERF_RECORD_LOST) {
			w->lost_records++;
			w->lost += f[1];
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
}

static volatile int pes_signals, pes_fd = -1;

static void pes_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_fd == pes_fd)
		pes_signals++;
}

static void want_signals(int fd)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pes_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 2, &sa, NULL);
	struct f_owner_ex owner = {F_OWNER_TID, test_gettid()};
	fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK);
	fcntl(fd, F_SETSIG, SIGRTMIN + 2);
	fcntl(fd, F_SETOWN_EX, &owner);
	pes_fd = fd;
	pes_signals = 0;
}

/* The sampled program: rvemu_advance is called from here, so every precise PC must be in here. */
__attribute__((noinline)) void pes_hot_kernel(uint64_t cycles)
{
	api.advance(cycles);
	__asm__ volatile("" ::: "memory");
}

/* samples = events / threshold exactly; one signal per full buffer (records / buffer size); every PC in the
 * hot function; every sample marked exact. */
static void test_pes_counts_and_signals(void)
{
	struct perf_event_attr a;
	struct pring r;
	struct rvemu_stats s0, s1;
	const uint64_t period = 100000, n = 200;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 16) == 0);
	want_signals(r.fd);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	pes_hot_kernel(n * period);
	api.get_stats(&s1);
	CU_ASSERT_EQUAL(s1.pes_records - s0.pes_records, n);
	CU_ASSERT_EQUAL(s1.pes_interrupts - s0.pes_interrupts, n / pes_records());
	CU_ASSERT_EQUAL(pes_signals, (int)(n / pes_records()));
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, "pes_hot_kernel", test_gettid(), &w);
	CU_ASSERT_EQUAL(w.samples, (n / pes_records()) * pes_records()); /* the full buffers */
	uint64_t v;
	CU_ASSERT_EQUAL(read(r.fd, &v, sizeof(v)), (ssize_t)sizeof(v)); /* the kernel drains the rest */
	pring_walk(&r, "pes_hot_kernel", test_gettid(), &w);
	CU_ASSERT_EQUAL(w.samples, n);
	CU_ASSERT_EQUAL(w.exact, n);
	CU_ASSERT_EQUAL(w.in_hot, n);
	CU_ASSERT_EQUAL(w.bad_tid, 0);
	CU_ASSERT_EQUAL(w.lost, 0);
	CU_ASSERT_EQUAL(pes_signals, (int)(n / pes_records())); /* draining at read does not signal */
	pes_fd = -1;
	pring_close(&r);
}

/* A reader that lags: records that do not fit in the ring are counted (PERF_RECORD_LOST), never dropped. */
static void test_pes_slow_reader(void)
{
	struct perf_event_attr a;
	struct pring r;
	struct rvemu_stats s0, s1;
	/* 100 records per scheduler tick (4 ms of thread time): below the throttling rate of 400 */
	const uint64_t period = 4000ull * model->freq_mhz / 100, n = 1000;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 1) == 0); /* one data page: about a hundred samples */
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	for (int i = 0; i < 10; i++)
		pes_hot_kernel(n / 10 * period); /* over several ticks: no throttling */
	uint64_t v;
	CU_ASSERT_EQUAL(read(r.fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	api.get_stats(&s1);
	uint64_t written = s1.samples_written - s0.samples_written, lost = s1.samples_lost - s0.samples_lost;
	CU_ASSERT_EQUAL(written + lost, n);
	CU_ASSERT(lost > 0);
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, NULL, test_gettid(), &w);
	pes_hot_kernel(pes_records() * period); /* one more full buffer: the loss is reported first */
	pring_walk(&r, NULL, test_gettid(), &w);
	CU_ASSERT_EQUAL(w.lost_records, 1);
	CU_ASSERT_EQUAL(w.lost, lost);
	pring_close(&r);
}

/* Thresholds on two counters at once (a group: cycle and instret, each with its own period). */
static void test_pes_two_counters(void)
{
	struct perf_event_attr a;
	struct pring r;
	const uint64_t pc = 200000, pi = 50000;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, pc);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, pi);
	a.disabled = 0;
	int ins = perf_open(&a, 0, -1, r.fd, PERF_FLAG_FD_OUTPUT);
	CU_ASSERT_FATAL(ins >= 0);
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ID, &w.ids[0]), 0);
	CU_ASSERT_EQUAL(ioctl(ins, PERF_EVENT_IOC_ID, &w.ids[1]), 0);
	uint64_t i0 = truth_of(&model->events[1]);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	for (int k = 0; k < 20; k++)
		pes_hot_kernel(1000000);
	uint64_t instret = truth_of(&model->events[1]) - i0;
	uint64_t v;
	CU_ASSERT_EQUAL(read(r.fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	pring_walk(&r, "pes_hot_kernel", test_gettid(), &w);
	CU_ASSERT_EQUAL(w.by_id[0], 20000000 / pc);
	CU_ASSERT_EQUAL(w.by_id[1], instret / pi);
	CU_ASSERT_EQUAL(w.samples, w.by_id[0] + w.by_id[1]);
	CU_ASSERT_EQUAL(w.exact, w.samples);
	close(ins);
	pring_close(&r);
}

/* Four threads sample themselves at once: every sample carries its own thread. */
struct pes_thread {
	uint64_t samples, bad_tid;
};

static void *pes_thread_main(void *arg)
{
	struct pes_thread *pt = arg;
	struct perf_event_attr a;
	struct pring r;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 100000);
	a.disabled = 0;
	if (pring_open(&r, &a, -1, 16) != 0)
		return NULL;
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	for (int k = 0; k < 10; k++) {
		pes_hot_kernel(1000000);
		pring_walk(&r, NULL, test_gettid(), &w);
	}
	uint64_t v;
	if (read(r.fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		pring_walk(&r, NULL, test_gettid(), &w);
	pt->samples = w.samples;
	pt->bad_tid = w.bad_tid;
	pring_close(&r);
	return NULL;
}

static void test_pes_threads(void)
{
	pthread_t th[4];
	struct pes_thread pt[4];
	memset(pt, 0, sizeof(pt));
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, pes_thread_main, &pt[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(pt[i].samples, 100);
		CU_ASSERT_EQUAL(pt[i].bad_tid, 0);
	}
}

/* CPU-time clock: the records come at the program's real PCs, exact, and all of them reach the ring. */
__attribute__((noinline)) void pes_spin(volatile uint64_t *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		*x += i * 5;
}

static void test_pes_cputime(void)
{
	struct perf_event_attr a;
	struct pring r;
	struct rvemu_stats s0, s1;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, (uint64_t)model->freq_mhz * 1000u);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	api.get_stats(&s0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	volatile uint64_t x = 0;
	uint64_t t0 = api.thread_cycles();
	while (api.thread_cycles() - t0 < (uint64_t)model->freq_mhz * 200000u) /* 200 ms */
		pes_spin(&x, 1000000); /* about a ms per check: the checks are not what is sampled */
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	api.get_stats(&s1);
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, "pes_spin", test_gettid(), &w);
	CU_ASSERT(w.samples >= 150);
	CU_ASSERT_EQUAL(w.samples, s1.pes_records - s0.pes_records);
	/* exact, but for overflows the alarm found inside the emulator (api.thread_cycles): kernel samples */
	CU_ASSERT_EQUAL(w.exact + w.kernel, w.samples);
	CU_ASSERT(w.kernel * 10 <= w.samples);
	printf("\n  PES, CPU-time clock: %u records, %u in pes_spin, %u in the kernel\n", w.samples, w.in_hot,
	       w.kernel);
	CU_ASSERT(w.in_hot * 4 >= w.samples * 3);
	pring_close(&r);
}

/* A threshold far below what can be delivered (rvprof -c 10 on CVA6: an overflow every 10 cycles, 5 million
 * a second of CPU) ran a 0.1 s program for minutes: every record costs the emulator more than the 10 cycles
 * it stands for. Linux bounds what a PEBS event may produce, per drain, by perf_event_max_sample_rate; so
 * does the emulator, counting every record of a drain against max_sample_rate / HZ per tick: the event is
 * throttled (PERF_RECORD_THROTTLE, then UNTHROTTLE at the next tick) and the program finishes. What the
 * emulator knows: at most the per-tick limit plus one buffer of records per tick of the thread's time. */
/* Counts the THROTTLE, UNTHROTTLE and SAMPLE records of the ring, then frees it. */
static void count_ring_records(struct pring *r, unsigned *throttle, unsigned *unthrottle, unsigned *samples)
{
	const unsigned char *data = (const unsigned char *)r->pg + r->pg->data_offset;
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE), tail = r->pg->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % r->pg->data_size];
		*throttle += h.type == PERF_RECORD_THROTTLE;
		*unthrottle += h.type == PERF_RECORD_UNTHROTTLE;
		*samples += h.type == PERF_RECORD_SAMPLE;
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
}

static void test_pes_throttled(void)
{
	struct perf_event_attr a;
	struct pring r;
	struct rvemu_stats s0, s1;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 10);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	api.get_stats(&s0);
	uint64_t t0 = api.thread_cycles();
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	volatile uint64_t x = 0;
	unsigned throttle = 0, unthrottle = 0, samples = 0, rounds = 0;
	while (api.thread_cycles() - t0 < (uint64_t)model->freq_mhz * 100000u &&
	       rounds++ < 100000) { /* 100 ms */
		pes_spin(&x, 100000);
		count_ring_records(&r, &throttle, &unthrottle, &samples);
	}
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	/* the disable drains the PES buffer too, and that drain may be throttled (its THROTTLE record came
	 * after the last read above in one CI run: 25 records, 26 throttles) */
	count_ring_records(&r, &throttle, &unthrottle, &samples);
	uint64_t ticks = (api.thread_cycles() - t0) / (4000u * (uint64_t)model->freq_mhz) + 2;
	api.get_stats(&s1);
	uint64_t recs = s1.pes_records - s0.pes_records, per_tick = (100000 + 249) / 250;
	printf(
	    "\n  PES with a threshold of 10 cycles: %llu records in %llu ticks, %u THROTTLE, %u UNTHROTTLE, "
	    "%llu throttles\n",
	    (unsigned long long)recs, (unsigned long long)ticks, throttle, unthrottle,
	    (unsigned long long)(s1.throttles - s0.throttles));
	CU_ASSERT(throttle > 0);
	CU_ASSERT(unthrottle > 0 && unthrottle <= throttle);
	/* every throttle has its THROTTLE record unless the ring was full at times (then sample records were
	 * dropped too: seen under qemu-user, where this loop frees the ring less often for the same records)
	 */
	if (s1.samples_lost == s0.samples_lost)
		CU_ASSERT_EQUAL(throttle, s1.throttles - s0.throttles);
	CU_ASSERT(throttle <= s1.throttles - s0.throttles);
	CU_ASSERT(recs <= ticks * (per_tick + pes_records()));
	CU_ASSERT(samples > 0);
	pring_close(&r);
}

/* One record per interrupt when the event asks to hear of every sample (wakeup_events = 1 without a
 * watermark) or for frequency mode, as Linux's large-PEBS rule; a watermark keeps the batches. */
static void test_pes_single_record(void)
{
	const uint64_t period = 100000, n = 100;
	for (int mode = 0; mode < 3; mode++) {
		struct perf_event_attr a;
		struct pring r;
		struct rvemu_stats s0, s1;
		precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period);
		if (mode == 0) {
			a.wakeup_events = 1;
		} else if (mode == 1) {
			a.freq = 1;
			a.sample_freq =
			    (uint64_t)model->freq_mhz * 1000000u / period; /* about the same period */
		} else {
			a.watermark = 1;
			a.wakeup_watermark = 1;
		}
		CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
		want_signals(r.fd);
		api.get_stats(&s0);
		CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
		pes_hot_kernel(n * period);
		api.get_stats(&s1);
		uint64_t recs = s1.pes_records - s0.pes_records, irqs = s1.pes_interrupts - s0.pes_interrupts;
		if (mode < 2) {
			CU_ASSERT(recs >= n / 2);
			CU_ASSERT_EQUAL(irqs, recs);
			CU_ASSERT_EQUAL(pes_signals, (int)recs);
		} else {
			CU_ASSERT_EQUAL(recs, n);
			CU_ASSERT_EQUAL(irqs, n / pes_records());
			CU_ASSERT_EQUAL(pes_signals, (int)(n / pes_records()));
		}
		struct pwalk w;
		memset(&w, 0, sizeof(w));
		uint64_t v;
		CU_ASSERT_EQUAL(read(r.fd, &v, sizeof(v)), (ssize_t)sizeof(v));
		pring_walk(&r, "pes_hot_kernel", test_gettid(), &w);
		CU_ASSERT_EQUAL(w.samples, recs);
		CU_ASSERT_EQUAL(w.exact, recs);
		CU_ASSERT_EQUAL(w.in_hot, recs);
		pes_fd = -1;
		pring_close(&r);
	}
}

/* PERF_SAMPLE_READ of a PES sample: the group's counts when the record was written (from the counters in
 * the record), not when the kernel drained the buffer. The leader's own count is k * period exactly. */
static void test_pes_read_values(void)
{
	struct perf_event_attr a;
	struct pring r;
	const uint64_t period = 100000, n = 2 * 64;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
	a.read_format = PERF_FORMAT_GROUP;
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	a.disabled = 0;
	int ins = perf_open(&a, 0, -1, r.fd, 0);
	CU_ASSERT_FATAL(ins >= 0);
	uint64_t i0 = truth_of(&model->events[1]);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	pes_hot_kernel(n * period); /* one call: every record of a buffer is drained at the same moment */
	uint64_t i1 = truth_of(&model->events[1]) - i0, v[3];
	CU_ASSERT_EQUAL(read(r.fd, v, sizeof(v)), (ssize_t)sizeof(v));
	const unsigned char *data = (const unsigned char *)r.pg + r.pg->data_offset;
	uint64_t head = __atomic_load_n(&r.pg->data_head, __ATOMIC_ACQUIRE), tail = 0, k = 0, bad = 0;
	uint64_t last_ins = 0;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t f[4];
		memcpy(&h, data + tail % r.pg->data_size, sizeof(h));
		memcpy(f, data + (tail + sizeof(h)) % r.pg->data_size,
		       sizeof(f)); /* ip, nr, cycles, instret */
		if (h.type == PERF_RECORD_SAMPLE) {
			k++;
			if (f[1] != 2 || f[2] != k * period || f[3] <= last_ins) {
				if (bad < 3)
					printf("\n  sample %llu: nr %llu cycles %llu instret %llu (previous "
					       "%llu)",
					       (unsigned long long)k, (unsigned long long)f[1],
					       (unsigned long long)f[2], (unsigned long long)f[3],
					       (unsigned long long)last_ins);
				bad++;
			}
			last_ins = f[3];
		}
		tail += h.size;
	}
	CU_ASSERT_EQUAL(k, n);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(last_ins <= i1);
	close(ins);
	pring_close(&r);
}

/* No skid with PES, where a non-precise interrupt has some (test_virtual_skid, same call sites): the
 * cycles overflow at the end of skid_cause's blocks, and every record names it. */
static void test_pes_no_skid(void)
{
	struct perf_event_attr a;
	struct pring r;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 2000);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	for (int i = 0; i < 100; i++) {
		skid_next(1000);
		skid_cause(1000);
	}
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, "skid_cause", test_gettid(), &w);
	CU_ASSERT(irq_skid() > 0);
	CU_ASSERT_EQUAL(w.samples, 100);
	CU_ASSERT_EQUAL(w.in_hot, 100);
	pring_close(&r);
}

/* IOC_REFRESH and throttling count interrupts, not records (Linux's large-PEBS drain calls
 * perf_event_overflow once, for the last record): REFRESH(2) gives two full buffers, then the event is off;
 * and a counting event with precise_ip just counts. */
static void test_pes_refresh_per_buffer(void)
{
	struct perf_event_attr a;
	struct pring r;
	const uint64_t period = 10000;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period);
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 64) == 0);
	want_signals(r.fd);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_REFRESH, 2), 0);
	for (int i = 0; i < 10; i++)
		pes_hot_kernel(pes_records() * period);
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, "pes_hot_kernel", test_gettid(), &w);
	CU_ASSERT_EQUAL(pes_signals, 2);
	CU_ASSERT_EQUAL(w.samples, 2 * pes_records());
	CU_ASSERT_EQUAL(w.in_hot, w.samples);
	pes_fd = -1;
	pring_close(&r);

	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.precise_ip = 2;
	a.disabled = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	pes_hot_kernel(12345);
	uint64_t v = 0;
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v, 12345);
	close(fd);
}

/* The PMU's caps/max_precise says 3 on a PES core (x86's attribute); a core without PES has no caps/. */
static void test_pes_caps(void)
{
	char buf[16] = "";
	FILE *f = fopen("/sys/bus/event_source/devices/cpu/caps/max_precise", "r");
	if (!pes_on()) {
		CU_ASSERT_PTR_NULL(f);
		if (f)
			fclose(f);
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof(buf), f));
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "3\n");
}

/* A core without PES: precise_ip is refused (EOPNOTSUPP), and the samples it can take (Sscofpmf) are not
 * marked exact. */
static void test_no_pes(void)
{
	struct perf_event_attr a;
	precise_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 100000);
	for (unsigned p = 1; p <= 3; p++) {
		a.precise_ip = p;
		errno = 0;
		CU_ASSERT_EQUAL(perf_open(&a, 0, -1, -1, 0), -1);
		CU_ASSERT_EQUAL(errno, EOPNOTSUPP);
	}
	if (!sscofpmf || !virtual_clock)
		return;
	struct pring r;
	a.precise_ip = 0;
	CU_ASSERT_FATAL(pring_open(&r, &a, -1, 16) == 0);
	CU_ASSERT_EQUAL(ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	pes_hot_kernel(10 * 100000 + irq_skid()); /* the last overflow's interrupt is taken too */
	struct pwalk w;
	memset(&w, 0, sizeof(w));
	pring_walk(&r, NULL, test_gettid(), &w);
	CU_ASSERT_EQUAL(w.samples, 10);
	CU_ASSERT_EQUAL(w.exact, 0);
	pring_close(&r);
}

void add_pes_suites(void)
{
	CU_pSuite s = CU_add_suite("Precise Event Sampling", NULL, NULL);
	if (!pes_on()) {
		CU_add_test(s, "no PES: precise_ip refused, no sample shown as precise", test_no_pes);
		CU_add_test(s, "no PES: no caps/max_precise", test_pes_caps);
		return;
	}
	if (virtual_clock) {
		CU_add_test(s, "samples = events / threshold; one signal per full buffer; exact PCs",
		            test_pes_counts_and_signals);
		CU_add_test(s, "a slow reader: PERF_RECORD_LOST, never silent", test_pes_slow_reader);
		CU_add_test(s, "one record per interrupt when each sample is asked for",
		            test_pes_single_record);
		CU_add_test(s, "PERF_SAMPLE_READ: the group's counts at each record", test_pes_read_values);
		CU_add_test(s, "caps/max_precise = 3", test_pes_caps);
		CU_add_test(s, "IOC_REFRESH counts buffers; a precise counting event counts",
		            test_pes_refresh_per_buffer);
		CU_add_test(s, "no skid: every record names the causing block", test_pes_no_skid);
		CU_add_test(s, "thresholds on two counters at once", test_pes_two_counters);
		CU_add_test(s, "four threads: every sample is its thread's", test_pes_threads);
	} else {
		CU_add_test(s, "CPU-time clock: exact records at the program's PCs", test_pes_cputime);
		CU_add_test(s, "CPU-time clock: a 10-cycle threshold is throttled per tick",
		            test_pes_throttled);
	}
}
