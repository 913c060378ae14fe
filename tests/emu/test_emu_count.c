// SPDX-License-Identifier: MIT
/* Counting: exact counts in virtual-clock mode (every event of the model, U74 class-mask combinations),
 * groups, multiplexing, counter width, RESET / ENABLE / DISABLE, per-thread counting; in cputime mode the
 * same events as ratio tests (counts grow with work; ratios follow the profile within 1%). */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_test.h"

/* Counts one event (an attr) across advance/inject/advance, and compares with the ground truth. */
static void check_exact(struct perf_event_attr *a, uint64_t (*truth)(const void *), const void *arg,
                        const char *inject_name)
{
	int fd = perf_open(a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t t0 = truth(arg);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	api.advance(1234567);
	if (inject_name)
		CU_ASSERT_EQUAL(api.inject(inject_name, 17), 0);
	api.advance(7654321);
	uint64_t t1 = truth(arg);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	api.advance(99999); /* not counted */
	uint64_t v = read_count(fd);
	if (v != t1 - t0)
		fprintf(stderr, "  config %#llx: read %llu, truth %llu\n", (unsigned long long)a->config,
		        (unsigned long long)v, (unsigned long long)(t1 - t0));
	CU_ASSERT_EQUAL(v, t1 - t0);
	CU_ASSERT(v > 0);
	close(fd);
}

static uint64_t truth_event(const void *e)
{
	return truth_of(e);
}

static uint64_t truth_raw(const void *enc)
{
	uint64_t v = 0;
	CU_ASSERT_EQUAL(api.truth_raw(*(const uint64_t *)enc, &v), 0);
	return v;
}

static void test_every_event_exact(void)
{
	for (size_t i = 0; i < model->nevents; i++) {
		struct perf_event_attr a;
		attr_for_event(&a, &model->events[i]);
		check_exact(&a, truth_event, &model->events[i], model->events[i].name);
	}
}

/* U74: every pair of bits of each class, and each class's full mask; a mask counts the sum of its bits. */
static void test_class_masks(void)
{
	if (!model->class_masks)
		return;
	unsigned combos = 0;
	for (unsigned cls = 0; cls < 256; cls++) {
		uint64_t full = 0;
		const struct rvemu_event *bits[64];
		unsigned n = 0;
		for (size_t i = 0; i < model->nevents; i++)
			if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE &&
			    (model->events[i].encoding & 0xff) == cls)
				bits[n++] = &model->events[i];
		if (!n)
			continue;
		for (unsigned i = 0; i < n; i++) {
			full |= bits[i]->encoding;
			for (unsigned j = i + 1; j < n; j += 3) {
				uint64_t enc = bits[i]->encoding | bits[j]->encoding;
				struct perf_event_attr a;
				attr_init(&a, PERF_TYPE_RAW, enc);
				check_exact(&a, truth_raw, &enc, bits[j]->name);
				uint64_t sum = truth_of(bits[i]) + truth_of(bits[j]), t = truth_raw(&enc);
				CU_ASSERT_EQUAL(t, sum);
				combos++;
			}
		}
		struct perf_event_attr a;
		attr_init(&a, PERF_TYPE_RAW, full);
		check_exact(&a, truth_raw, &full, bits[0]->name);
		combos++;
	}
	CU_ASSERT(combos >= 3 * 10);
}

static int open_group_member(struct perf_event_attr *a, int leader)
{
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
	                 PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (leader < 0)
		a->pinned = 1;
	else
		a->disabled = 0;
	return perf_open(a, 0, -1, leader, 0);
}

/* Opens one group of the model's first `max` events, in table order (cycles, instret, then programmable
 * ones), skipping programmable events rarer than `min_ppb`; returns how many it opened. */
static unsigned open_event_group(int *fds, const struct rvemu_event **evs, unsigned max, uint64_t min_ppb)
{
	unsigned n = 0;
	for (size_t i = 0; i < model->nevents && n < max; i++) {
		if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE && model->events[i].ppb < min_ppb)
			continue;
		struct perf_event_attr a;
		attr_for_event(&a, &model->events[i]);
		evs[n] = &model->events[i];
		fds[n] = open_group_member(&a, n ? fds[0] : -1);
		CU_ASSERT_FATAL(fds[n] >= 0);
		n++;
	}
	return n;
}

/* A group of every counter the model has: cycles, instret and all programmable counters, read at once. */
static void test_group_full(void)
{
	int fds[2 + 29]; /* mhpmcounter3..31 at most (gen_events.py checks) */
	const struct rvemu_event *evs[2 + 29];
	unsigned n = open_event_group(fds, evs, 2 + model->prog_counters, 0);
	uint64_t t0[2 + 29] = {0}, t1[2 + 29] = {0};
	for (unsigned i = 0; i < n; i++)
		t0[i] = truth_of(evs[i]);
	CU_ASSERT_EQUAL(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	api.advance(5000000);
	for (unsigned i = 0; i < n; i++)
		t1[i] = truth_of(evs[i]);
	uint64_t buf[3 + 2 * (2 + 29)];
	CU_ASSERT_EQUAL(read(fds[0], buf, sizeof(buf)), (ssize_t)((3 + 2 * n) * 8));
	CU_ASSERT_EQUAL(buf[0], n);
	CU_ASSERT_EQUAL(buf[1], buf[2]); /* enabled == running: it fits */
	CU_ASSERT(buf[1] > 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t id = 0;
		CU_ASSERT_EQUAL(ioctl(fds[i], PERF_EVENT_IOC_ID, &id), 0);
		CU_ASSERT_EQUAL(buf[3 + 2 * i], t1[i] - t0[i]);
		CU_ASSERT_EQUAL(buf[4 + 2 * i], id);
	}
	/* reading a member reads the whole group */
	uint64_t buf2[3 + 2 * (2 + 29)];
	CU_ASSERT_EQUAL(read(fds[n - 1], buf2, sizeof(buf2)), (ssize_t)((3 + 2 * n) * 8));
	CU_ASSERT_EQUAL(buf2[3], buf[3]);
	for (unsigned i = n; i-- > 0;)
		close(fds[i]);
}

/* One more programmable event than the model has counters: a pinned group cannot be scheduled, and its
 * read returns 0 bytes (the error state PAPI tests for); unpinned, it never runs. */
static void test_group_too_big(void)
{
	for (int pinned = 1; pinned >= 0; pinned--) {
		int fds[2 + 29 + 1], n = 0; /* every counter plus one */
		struct perf_event_attr a;
		attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		fds[n] = open_group_member(&a, -1);
		CU_ASSERT_FATAL(fds[n] >= 0);
		n++;
		if (!pinned) {
			close(fds[0]);
			attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
			a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			                PERF_FORMAT_TOTAL_TIME_RUNNING;
			fds[0] = perf_open(&a, 0, -1, -1, 0);
		}
		unsigned prog = 0;
		for (size_t i = 0; i < model->nevents && prog <= model->prog_counters; i++) {
			if (model->events[i].kind != RVEMU_EV_PROGRAMMABLE)
				continue;
			attr_for_event(&a, &model->events[i]);
			fds[n] = open_group_member(&a, fds[0]);
			CU_ASSERT_FATAL(fds[n] >= 0); /* each open succeeds, as on the kernel */
			n++;
			prog++;
		}
		if (prog == 0) { /* no programmable counters: two cycle events cannot share mcycle */
			attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
			fds[n] = open_group_member(&a, fds[0]);
			CU_ASSERT_FATAL(fds[n] >= 0);
			n++;
		}
		CU_ASSERT_EQUAL(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, 0), 0);
		api.advance(100000);
		CU_ASSERT_EQUAL(ioctl(fds[0], PERF_EVENT_IOC_DISABLE, 0), 0);
		uint64_t buf[64];
		ssize_t r = read(fds[0], buf, sizeof(buf));
		if (pinned) {
			CU_ASSERT_EQUAL(r, 0);
		} else {
			CU_ASSERT_EQUAL(r, (ssize_t)((3 + n) * 8));
			CU_ASSERT(buf[1] > 0);
			CU_ASSERT_EQUAL(buf[2], 0);
		}
		for (int i = n; i-- > 0;)
			close(fds[i]);
	}
}

/* More single-event groups than counters: kernel-style rotation with honest times. */
static void test_multiplexing(void)
{
	unsigned want = model->prog_counters ? model->prog_counters + 2 : 3;
	int fds[2 + 29 + 2];
	const struct rvemu_event *evs[2 + 29 + 2];
	unsigned n = 0;
	for (size_t i = 0; n < want; i = (i + 1) % model->nevents) {
		if (model->prog_counters && model->events[i].kind != RVEMU_EV_PROGRAMMABLE)
			continue;
		if (!model->prog_counters && model->events[i].kind != RVEMU_EV_CYCLES)
			continue;
		/* a 1% estimate needs events that occur: skip the rare ones (X60's failed SC: 10 per 10^9
		 * cycles); the loop wraps, so the frequent ones are opened again when there are not enough of
		 * them */
		if (model->events[i].ppb < 100000)
			continue;
		struct perf_event_attr a;
		attr_for_event(&a, &model->events[i]);
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		evs[n] = &model->events[i];
		fds[n] = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT_FATAL(fds[n] >= 0);
		n++;
	}
	struct rvemu_stats s0, s1;
	api.get_stats(&s0);
	uint64_t t0[2 + 29 + 2];
	for (unsigned i = 0; i < n; i++) {
		t0[i] = truth_of(evs[i]);
		CU_ASSERT_EQUAL(ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0), 0);
	}
	for (int step = 0; step < 500; step++)
		api.advance(1000003);
	api.get_stats(&s1);
	CU_ASSERT(s1.multiplex_rotations > s0.multiplex_rotations);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v[3];
		CU_ASSERT_EQUAL(read(fds[i], v, sizeof(v)), 24);
		uint64_t truth = truth_of(evs[i]) - t0[i];
		CU_ASSERT(v[2] > 0);
		CU_ASSERT(v[2] < v[1]);
		double est = (double)v[0] * (double)v[1] / (double)v[2];
		double err = (est - (double)truth) / (double)truth;
		if (err > 0.01 || err < -0.01)
			fprintf(stderr, "  mux %s: estimate %.0f truth %llu\n", evs[i]->name, est,
			        (unsigned long long)truth);
		CU_ASSERT(err <= 0.01 && err >= -0.01); /* stated bound: 1% */
	}
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/* U74 programmable counters are 40 bits wide. As riscv_pmu_event_update, the kernel folds the counter into
 * the 64-bit perf count at every read, ioctl, context switch and scheduler tick, with or without Sscofpmf:
 * more than 2^40 events between two folds lose multiples of 2^40 (a burst: one injection), and 2^40 + 5
 * events that arrive across ticks read exactly 2^40 + 5. cycle/instret and CVA6 counters are 64-bit. */
static void test_counter_width(void)
{
	const struct rvemu_event *e = NULL;
	for (size_t i = 0; i < model->nevents && !e; i++)
		if (model->events[i].kind == RVEMU_EV_PROGRAMMABLE)
			e = &model->events[i];
	if (!e)
		return;
	struct perf_event_attr a;
	attr_for_event(&a, e);
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	int wraps = model->prog_width < 64;
	const uint64_t big = (1ull << (wraps ? model->prog_width : 40)) + 7;
	CU_ASSERT_EQUAL(api.inject(e->name, big), 0); /* a burst between two folds */
	uint64_t v = read_count(fd);
	CU_ASSERT_EQUAL(v, wraps ? 7 : big);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	/* 2^40 + 5 events between two reads, arriving over several scheduler ticks: nothing is lost */
	uint64_t t0 = truth_of(e);
	const uint64_t tick = 4000ull * model->freq_mhz; /* 4 ms at HZ=250 */
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(api.inject(e->name, 1ull << 38), 0);
		api.advance(tick);
	}
	CU_ASSERT_EQUAL(api.inject(e->name, 5), 0);
	uint64_t want = truth_of(e) - t0;
	CU_ASSERT(want >= (1ull << 40) + 5);
	CU_ASSERT_EQUAL(read_count(fd), want);
	close(fd);
}

static void test_enable_disable_reset(void)
{
	const struct rvemu_event *cyc = &model->events[0], *ins = &model->events[1];
	struct perf_event_attr a;
	attr_for_event(&a, ins);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t v[3];
	api.advance(1000);
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), 24);
	CU_ASSERT_EQUAL(v[0], 0);
	CU_ASSERT_EQUAL(v[1], 0); /* disabled: no time either */
	uint64_t t0 = truth_of(ins), c0 = truth_of(cyc);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	api.advance(3000000);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	uint64_t t1 = truth_of(ins), c1 = truth_of(cyc);
	api.advance(5000000);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	uint64_t t2 = truth_of(ins);
	api.advance(2000000);
	uint64_t t3 = truth_of(ins);
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), 24);
	CU_ASSERT_EQUAL(v[0], (t1 - t0) + (t3 - t2));
	CU_ASSERT_EQUAL(v[1], v[2]);
	/* time_enabled is the thread time while enabled: 5e6 cycles at the model frequency */
	uint64_t ns = 5000000ull * 1000 / model->freq_mhz;
	CU_ASSERT(v[1] >= ns - 2 && v[1] <= ns + 2);
	(void)c0;
	(void)c1;
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), 24);
	CU_ASSERT_EQUAL(v[0], 0);
	CU_ASSERT(v[1] >= ns - 2); /* RESET keeps the times */
	uint64_t t4 = truth_of(ins);
	api.advance(777777);
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), 24);
	CU_ASSERT_EQUAL(v[0], truth_of(ins) - t4);
	close(fd);
}

/* Events count their own thread: pid 0 is the caller; a tid of another thread counts that thread. */
struct worker {
	pid_t tid;
	pthread_mutex_t m;
	pthread_cond_t c;
	int stage;
	uint64_t truth0, truth1;
};

static void wait_stage(struct worker *w, int stage)
{
	pthread_mutex_lock(&w->m);
	while (w->stage < stage)
		pthread_cond_wait(&w->c, &w->m);
	pthread_mutex_unlock(&w->m);
}

static void set_stage(struct worker *w, int stage)
{
	pthread_mutex_lock(&w->m);
	w->stage = stage;
	pthread_cond_broadcast(&w->c);
	pthread_mutex_unlock(&w->m);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	w->tid = test_gettid();
	w->truth0 = truth_of(&model->events[0]);
	set_stage(w, 1);
	wait_stage(w, 2);
	api.advance(4444444);
	w->truth1 = truth_of(&model->events[0]);
	set_stage(w, 3);
	return NULL;
}

static void test_per_thread(void)
{
	struct worker w = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
	pthread_t th;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, worker_main, &w), 0);
	wait_stage(&w, 1);
	struct perf_event_attr a;
	attr_for_event(&a, &model->events[0]);
	a.disabled = 0;
	int mine = perf_open(&a, 0, -1, -1, 0), theirs = perf_open(&a, w.tid, -1, -1, 0);
	CU_ASSERT_FATAL(mine >= 0 && theirs >= 0);
	set_stage(&w, 2);
	wait_stage(&w, 3);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(read_count(mine), 0); /* this thread did not run */
	CU_ASSERT_EQUAL(read_count(theirs), w.truth1 - w.truth0);
	CU_ASSERT_EQUAL(read_count(theirs), 4444444);
	close(mine);
	close(theirs);
}

/* A forked child is a new task: it counts itself from zero, and the parent is unaffected. */
static void test_fork(void)
{
	struct perf_event_attr a;
	attr_for_event(&a, &model->events[0]);
	a.disabled = 0;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	api.advance(1000);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) { /* its status says which check failed */
		int cfd = perf_open(&a, 0, -1, -1, 0);
		uint64_t v = 0;
		api.advance(2500);
		if (cfd < 0)
			_exit(2);
		if (read(cfd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			_exit(3);
		uint64_t cycles = api.thread_cycles();
		_exit(v != 2500 ? 4 : cycles != 2500 ? 5 : 0);
	}
	CU_ASSERT_FATAL(pid > 0);
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
	if (!(WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0)) /* one failure under ASan on a loaded host: not explained */
		printf("\n  the child: %s %d (2 open failed, 3 read failed, 4 count not 2500, 5 cycles not "
		       "2500)\n",
		       WIFSIGNALED(st) ? "killed by signal" : "exit status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	api.advance(500);
	CU_ASSERT_EQUAL(read_count(fd), 1500);
	close(fd);
}

/* An fd closed any way forgets its event: the next file given that number is served by libc. A copy made
 * with fcntl(F_DUPFD) refers to the same event. */
static void test_fd_lifetimes(void)
{
	struct perf_event_attr a;
	attr_for_event(&a, &model->events[0]);
	a.disabled = 0;
	for (int way = 0; way < 4; way++) {
		int fd = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT_FATAL(fd >= 0);
		if (way == 0) {
			int copy = fcntl(fd, F_DUPFD, 100);
			CU_ASSERT_FATAL(copy >= 100);
			api.advance(1000);
			uint64_t v1 = read_count(fd), v2 = read_count(copy);
			CU_ASSERT(v1 == v2 && v1 >= 1000);
			close(copy);
			CU_ASSERT_EQUAL(close(fd), 0);
			continue;
		}
		if (way == 1)
			CU_ASSERT_EQUAL(close_range((unsigned)fd, (unsigned)fd, 0), 0);
		if (way == 2)
			CU_ASSERT_EQUAL(syscall(SYS_close, fd), 0);
		if (way == 3)
			CU_ASSERT_EQUAL(syscall(SYS_close_range, fd, fd, 0), 0);
		int file = open("/proc/self/exe", O_RDONLY); /* takes the lowest free number: fd */
		CU_ASSERT_EQUAL(file, fd);
		char magic[4] = {0};
		CU_ASSERT_EQUAL(read(file, magic, sizeof(magic)), (ssize_t)sizeof(magic));
		CU_ASSERT_EQUAL(memcmp(magic, "\177ELF", 4), 0);
		close(file);
	}
}

/* Events a task that starts its clock at 0 counts in `cycles` cycles. */
static uint64_t task_count(const struct rvemu_event *e, uint64_t cycles)
{
	return (uint64_t)(((unsigned __int128)cycles * e->ppb) / RVEMU_PPB);
}

/* attr.inherit: a forked child (and its own child) count in copies of the event; their counts and times
 * reach the event the parent opened when they exit. */
static void test_inherit(void)
{
	const struct rvemu_event *ins = &model->events[1];
	struct perf_event_attr a;
	attr_for_event(&a, ins);
	a.disabled = 0;
	a.inherit = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = perf_open(&a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t t0 = truth_of(ins);
	api.advance(1000000);
	uint64_t parent_part = truth_of(ins) - t0;
	fflush(NULL); /* the children exit() and must not write our buffered output twice */
	pid_t pid = fork();
	if (pid == 0) {
		api.advance(3000000);
		pid_t grandchild = fork();
		if (grandchild == 0) {
			api.advance(2000000);
			_exit(0); /* leaving without atexit handlers hands the counts over too */
		}
		int gst = -1;
		exit(waitpid(grandchild, &gst, 0) == grandchild && WIFEXITED(gst) ? 0 : 1);
	}
	CU_ASSERT_FATAL(pid > 0);
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	uint64_t v[3] = {0};
	CU_ASSERT_EQUAL(read(fd, v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v[0], parent_part + task_count(ins, 3000000) + task_count(ins, 2000000));
	CU_ASSERT(v[1] == v[2] && v[1] > 0); /* the times include the children's; it always fitted */
	close(fd);
	/* without inherit a child's work is not seen: test_fork */
}

/* cputime mode: counts follow the thread's CPU time; ratios between events follow the profile. */
static void test_cputime_ratios(void)
{
	int fds[4];
	const struct rvemu_event *evs[4];
	/* events rarer than 10^6 per 10^9 cycles are too rare to give a 1% ratio in a short run */
	unsigned n = open_event_group(fds, evs, 2 + (model->prog_counters ? 2 : 0), 1000000);
	CU_ASSERT_EQUAL(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	uint64_t b1[3 + 2 * 4], b2[3 + 2 * 4];
	burn_cpu_ms(30);
	CU_ASSERT_EQUAL(read(fds[0], b1, sizeof(b1)), (ssize_t)((3 + 2 * n) * 8));
	burn_cpu_ms(60);
	CU_ASSERT_EQUAL(read(fds[0], b2, sizeof(b2)), (ssize_t)((3 + 2 * n) * 8));
	uint64_t cycles = b2[3];
	CU_ASSERT(b2[3] > b1[3] + (uint64_t)model->freq_mhz * 1000u * 50u); /* 60 ms more of CPU */
	for (unsigned i = 0; i < n; i++) {
		CU_ASSERT(b2[3 + 2 * i] > b1[3 + 2 * i]); /* grows with work */
		double ratio = (double)b2[3 + 2 * i] / (double)cycles, want = (double)evs[i]->ppb / 1e9;
		CU_ASSERT(ratio > want * 0.99 && ratio < want * 1.01);
	}
	CU_ASSERT_EQUAL(ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	for (unsigned i = n; i-- > 0;)
		close(fds[i]);
}

/* The thread's cycles in every mode (a U74 without Sscofpmf filters none), counting from now. */
static int open_cycles_every_mode(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	return perf_open(&a, 0, -1, -1, 0);
}

/* Wall time the CPU was taken from the thread unseen, inside an emulator call (a VM's steal: the guest sees
 * no preemption, the rseq mark stays), is neither the emulator's nor the user's. Before, the call's wall time
 * was all charged to the emulator and came off the user's cycles: after a 50 ms steal a 2 ms window read 0 (a
 * loaded CI run: papi_preset_threads "count not above 0" in 76 of 400 thread-rounds). rvemu_test_steal makes
 * one such call. */
static void test_cputime_steal_not_charged(void)
{
	void (*steal)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_test_steal");
	CU_ASSERT_PTR_NOT_NULL_FATAL(steal);
	int fd = open_cycles_every_mode();
	CU_ASSERT_FATAL(fd >= 0);
	/* the call goes the anchor's way only while the thread kept its rseq mark since the last CPU-clock
	 * read (no tick, preemption or signal): several rounds, each must hold */
	uint64_t two_ms = (uint64_t)model->freq_mhz * 1000u * 2u, least = UINT64_MAX;
	for (int round = 0; round < 8; round++) {
		uint64_t before = read_count(fd);
		steal(50000000ull);
		burn_cpu_ms(2);
		uint64_t got = read_count(fd) - before;
		least = got < least ? got : least;
		CU_ASSERT(got >= two_ms / 2);
	}
	printf(
	    "\n  2 ms of CPU after a 50 ms steal, 8 rounds: at least %llu cycles (%llu per 2 ms at %u MHz)\n",
	    (unsigned long long)least, (unsigned long long)two_ms, (unsigned)model->freq_mhz);
	close(fd);
}

/* Steal while the thread runs its own code, between two emulator calls: the wall clock runs on, the CPU clock
 * does not, and the rseq mark stays. Counted as the thread's cycles, it came off its next window once the CPU
 * clock was read again (cycles never go back): a 2 ms window after a 50 ms steal read 0. The steal shows in
 * neither the window it fell in nor the next. */
#ifdef RSEQ_SIG
extern const unsigned int __rseq_size __attribute__((weak));
#endif
static int thread_has_rseq(void)
{
#ifdef RSEQ_SIG
	return &__rseq_size && __rseq_size > 0;
#else
	return 0;
#endif
}

static void test_cputime_steal_between_calls(void)
{
	/* without rseq (riscv64's glibc 2.36, qemu-user, glibc.pthread.rseq=0) every read takes the CPU
	 * clock: no anchor to run ahead, and this passes whatever the bound */
	/* cppcheck sees no RSEQ_SIG (a system header's): thread_has_rseq() is not always 0 */
	// cppcheck-suppress knownConditionTrueFalse
	if (!thread_has_rseq())
		printf("\n  no rseq here: the emulator reads the CPU clock at every call, no anchor is "
		       "tested\n");
	void (*steal_user)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_test_steal_user");
	CU_ASSERT_PTR_NOT_NULL_FATAL(steal_user);
	int fd = open_cycles_every_mode();
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t two_ms = (uint64_t)model->freq_mhz * 1000u * 2u, least = UINT64_MAX, most_stolen = 0;
	for (int round = 0; round < 8; round++) {
		uint64_t before = read_count(fd);
		steal_user(50000000ull);
		uint64_t stolen = read_count(fd) - before; /* two reads apart: microseconds of CPU */
		most_stolen = stolen > most_stolen ? stolen : most_stolen;
		CU_ASSERT(stolen < two_ms / 2);
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL); /* off the CPU: the next read takes the CPU clock again */
		before = read_count(fd);
		burn_cpu_ms(2);
		uint64_t got = read_count(fd) - before;
		least = got < least ? got : least;
		CU_ASSERT(got >= two_ms / 2);
	}
	printf("\n  50 ms stolen between two reads, 8 rounds: at most %llu cycles between them;\n"
	       "  the next 2 ms of CPU: at least %llu cycles (%llu per 2 ms at %u MHz)\n",
	       (unsigned long long)most_stolen, (unsigned long long)least, (unsigned long long)two_ms,
	       (unsigned)model->freq_mhz);
	close(fd);
}

/* With RVEMU_READ_ADVANCE=10^9 every read() first advances the thread by 10^9 cycles, so an event enabled
 * on a 10^9 boundary reads exactly its rate per 10^9 cycles, then twice that. */
static void test_read_advance_exact(void)
{
	for (size_t i = 0; i < model->nevents; i++) {
		const struct rvemu_event *e = &model->events[i];
		struct perf_event_attr a;
		attr_for_event(&a, e);
		int fd = perf_open(&a, 0, -1, -1, 0);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
		uint64_t before = api.thread_cycles();
		uint64_t first = read_count(fd);
		CU_ASSERT_EQUAL(api.thread_cycles() - before, 1000000000u);
		uint64_t second = read_count(fd);
		if (first != e->ppb || second != 2 * e->ppb)
			fprintf(stderr, "%s: read %llu then %llu, rate %llu per 1e9 cycles\n", e->name,
			        (unsigned long long)first, (unsigned long long)second,
			        (unsigned long long)e->ppb);
		CU_ASSERT_EQUAL(first, e->ppb);
		CU_ASSERT_EQUAL(second, 2 * e->ppb);
		close(fd);
	}
}

void add_read_advance_suite(void)
{
	CU_pSuite s = CU_add_suite("RVEMU_READ_ADVANCE", NULL, NULL);
	CU_add_test(s, "each read advances 10^9 cycles: exact per-10^9 rates", test_read_advance_exact);
}

void add_count_suites(void)
{
	CU_pSuite s = CU_add_suite("counting", NULL, NULL);
	if (virtual_clock) {
		CU_add_test(s, "every event of the model counts exactly", test_every_event_exact);
		CU_add_test(s, "U74 class masks count the sum of their bits", test_class_masks);
		CU_add_test(s, "a group of every counter reads exactly", test_group_full);
		CU_add_test(s, "a group that cannot fit", test_group_too_big);
		CU_add_test(s, "multiplexing: honest times, estimates within 1%", test_multiplexing);
		CU_add_test(s, "counter width and wrap", test_counter_width);
		CU_add_test(s, "ENABLE, DISABLE, RESET", test_enable_disable_reset);
		CU_add_test(s, "per-thread counting", test_per_thread);
		CU_add_test(s, "fork: the child is a new task", test_fork);
		CU_add_test(s, "an fd closed any way forgets its event; F_DUPFD copies", test_fd_lifetimes);
		CU_add_test(s, "inherit: forked children's counts reach the parent", test_inherit);
	} else {
		CU_add_test(s, "cputime: counts grow, ratios follow the profile within 1%",
		            test_cputime_ratios);
		CU_add_test(s, "cputime: steal inside an emulator call comes off nobody's cycles",
		            test_cputime_steal_not_charged);
		CU_add_test(s, "cputime: steal between emulator calls comes off no later window",
		            test_cputime_steal_between_calls);
	}
}
