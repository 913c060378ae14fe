// SPDX-License-Identifier: MIT
/* CPU-wide sampling (perf record -a: pid -1, cpu N; docs/emulator-core.md "Sampling another process"). Run by
 * the launcher in a run of its own with two harts (RVEMU_HARTS=2, U74 with Sscofpmf, virtual clock), so the
 * tasks it forks are dealt the harts in turn: three children forked one after the other sit on h, h^1, h. One
 * sampling event per CPU; each child's own emulator writes its samples, its COMM (PR_SET_NAME) and its EXIT
 * into the ring of its CPU's event, and its FORK into the ring of its parent's CPU, as the kernel's CPU
 * contexts do. Exact under the virtual clock: a task's samples are the cycles it advanced / the period. */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_test.h"

#define CW_PERIOD     100000u
#define CW_TASKS      3
#define CW_MAX_CPUS   8
#define CW_DATA_PAGES 8
#define CW_OWN_CYCLES (3 * CW_PERIOD + 10000) /* the test process's own: 3 samples */

/* Each child's cycles: 10, 5 and 3 periods and a rest. The rests of the two children that share a CPU add up
 * to less than a period, so the count is the same whether the period runs on across the CPU's tasks (Linux:
 * one counter per CPU) or per task (a shadow per task here). */
static const uint64_t cw_cycles[CW_TASKS] = {10 * CW_PERIOD + 20000, 5 * CW_PERIOD + 30000,
                                             3 * CW_PERIOD + 40000};
static const char *const cw_names[CW_TASKS] = {"cw_task_a", "cw_task_b", "cw_task_c"};

/* The "program" of each child: rvemu_advance is called from here, so its samples' IPs are here. */
__attribute__((noinline)) void cpuwide_hot(uint64_t cycles)
{
	api.advance(cycles);
	__asm__ volatile("" ::: "memory");
}

struct cw_ring {
	int fd, cpu;
	uint64_t id;
	struct perf_event_mmap_page *page;
	size_t len;
};

static void cw_attr(struct perf_event_attr *a)
{
	attr_init(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a->disabled = 0;
	a->sample_period = CW_PERIOD;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
	                 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a->sample_id_all = 1;
	a->task = 1;
	a->comm = 1;
	a->exclude_kernel = 1; /* time in the emulator is the kernel's: never a sample here */
	a->wakeup_events = 1;
}

/* What one ring says about one task. */
struct cw_task_seen {
	pid_t pid;
	unsigned samples, in_hot, forks, comms, exits;
	int sample_cpu;       /* the ring it was sampled in, -1 none */
	unsigned after_exit;  /* samples or COMMs after its EXIT */
	unsigned before_comm; /* samples before its COMM */
	unsigned fork_bad;    /* a FORK whose ppid is not the owner or whose sample_id is not the parent's */
	unsigned comm_bad_name; /* a COMM with another name than its own */
};

struct cw_walk {
	unsigned records, bad_cpu, bad_id, bad_period, bad_tid, foreign, unknown, lost;
	unsigned own_samples; /* this process's (the events' owner: its thread on that CPU is sampled too) */
	struct cw_task_seen task[CW_TASKS];
};

static struct cw_task_seen *cw_task(struct cw_walk *w, uint32_t pid)
{
	for (int i = 0; i < CW_TASKS; i++)
		if ((uint32_t)w->task[i].pid == pid)
			return &w->task[i];
	return NULL;
}

/* sample_id_all's trailer {pid/tid, time, id, stream_id, cpu}: the last 5 words of a side-band record */
static void cw_check_sample_id(struct cw_walk *w, const struct cw_ring *r, const uint64_t *tail, uint32_t pid,
                               uint32_t tid)
{
	w->bad_tid += (uint32_t)tail[0] != pid || (uint32_t)(tail[0] >> 32) != tid;
	w->bad_id += tail[2] != r->id || tail[3] != r->id;
	w->bad_cpu += (uint32_t)tail[4] != (uint32_t)r->cpu;
}

static void cw_ring_walk(const struct cw_ring *r, struct cw_walk *w)
{
	const unsigned char *data = (const unsigned char *)r->page + r->page->data_offset;
	uint64_t size = r->page->data_size, head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE),
	         tail = 0;
	for (unsigned n = 0; tail < head && n < 100000; n++) {
		uint64_t rec[128];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(rec) || h.size % 8) {
			w->unknown++;
			break;
		}
		for (size_t i = 0; i < h.size; i++)
			((unsigned char *)rec)[i] = data[(tail + i) % size];
		const uint64_t *f = rec + 1, *end = rec + h.size / 8;
		const uint32_t *u = (const uint32_t *)f;
		w->records++;
		if (h.type == PERF_RECORD_SAMPLE) { /* {ip, pid/tid, time, id, stream_id, cpu, period} */
			struct cw_task_seen *t = cw_task(w, (uint32_t)f[1]);
			w->bad_tid += (uint32_t)f[1] != (uint32_t)(f[1] >> 32);
			w->bad_id += f[3] != r->id || f[4] != r->id;
			w->bad_cpu += (uint32_t)f[5] != (uint32_t)r->cpu;
			w->bad_period += f[6] != CW_PERIOD;
			if ((uint32_t)f[1] == (uint32_t)getpid()) {
				w->own_samples++;
			} else if (!t) {
				w->foreign++;
			} else {
				t->samples++;
				t->sample_cpu = r->cpu;
				t->after_exit += t->exits > 0;
				t->before_comm += t->comms == 0;
				Dl_info info;
				if (dladdr((void *)(uintptr_t)f[0], &info) && info.dli_sname &&
				    !strcmp(info.dli_sname, "cpuwide_hot"))
					t->in_hot++;
			}
		} else if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) {
			/* {pid, ppid, tid, ptid, time} and the sample_id of the task that wrote it: the
			 * parent for a FORK (the kernel writes it in the parent), the task itself for an EXIT
			 */
			struct cw_task_seen *t = cw_task(w, u[0]);
			if (!t) {
				w->foreign++;
			} else if (h.type == PERF_RECORD_FORK) {
				t->forks++;
				t->fork_bad += u[1] != (uint32_t)getpid() || u[3] != (uint32_t)getpid();
				cw_check_sample_id(w, r, end - 5, (uint32_t)getpid(), (uint32_t)getpid());
			} else {
				t->exits++;
				cw_check_sample_id(w, r, end - 5, u[0], u[2]);
			}
		} else if (h.type == PERF_RECORD_COMM) { /* {pid, tid, comm[]} */
			struct cw_task_seen *t = cw_task(w, u[0]);
			if (!t) {
				w->foreign++;
			} else {
				t->comms++;
				t->after_exit += t->exits > 0;
				t->comm_bad_name += strcmp((const char *)(u + 2), cw_names[t - w->task]) != 0;
				cw_check_sample_id(w, r, end - 5, u[0], u[1]);
			}
		} else if (h.type == PERF_RECORD_LOST) {
			w->lost++;
		} else {
			w->unknown++;
		}
		tail += h.size;
	}
}

/* Two processes on one hart and one on the other, each sampled by its CPU's event only: exact samples with
 * its pid, tid and CPU; FORK in the parent's CPU's ring, COMM and EXIT in its own; the events read the
 * cycles their CPU's tasks ran; a CPU-wide event never polls POLLHUP. */
static void test_cpuwide_sampling(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	CU_ASSERT_EQUAL_FATAL(n, 2); /* the launcher's RVEMU_HARTS=2 */
	struct cw_ring ring[CW_MAX_CPUS];
	struct perf_event_attr a;
	cw_attr(&a);
	for (int cpu = 0; cpu < n; cpu++) {
		struct cw_ring *r = &ring[cpu];
		r->cpu = cpu;
		r->fd = perf_open(&a, -1, cpu, -1, 0);
		CU_ASSERT_FATAL(r->fd >= 0);
		CU_ASSERT_EQUAL(ioctl(r->fd, PERF_EVENT_IOC_ID, &r->id), 0);
		r->len = (size_t)sysconf(_SC_PAGESIZE) * (1 + CW_DATA_PAGES);
		void *p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		CU_ASSERT_FATAL(p != MAP_FAILED);
		r->page = p;
	}
	/* the children, forked one after the other (consecutive harts), each waits for its "go" */
	int go[2];
	CU_ASSERT_FATAL(pipe(go) == 0);
	pid_t child[CW_TASKS];
	fflush(stdout);
	for (int i = 0; i < CW_TASKS; i++) {
		child[i] = fork();
		if (child[i] < 0) { /* those forked read EOF and end: reaped before the test stops */
			close(go[0]);
			close(go[1]);
			for (int j = 0; j < i; j++)
				waitpid(child[j], NULL, 0);
			CU_FAIL_FATAL("fork");
		}
		if (child[i] == 0) {
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			prctl(PR_SET_NAME, cw_names[i], 0, 0, 0);
			cpuwide_hot(cw_cycles[i]);
			_exit(0);
		}
	}
	close(go[0]);
	for (int i = 0; i < CW_TASKS; i++)
		CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	close(go[1]);
	for (int i = 0; i < CW_TASKS; i++) {
		int st = -1;
		CU_ASSERT_EQUAL(waitpid(child[i], &st, 0), child[i]);
		CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* the events' owner is a task of the run too: its thread is sampled on its CPU (since it mapped the
	 * rings), as perf itself is in perf record -a */
	cpuwide_hot(CW_OWN_CYCLES);
	struct cw_walk w[CW_MAX_CPUS];
	memset(w, 0, sizeof(w));
	for (int cpu = 0; cpu < n; cpu++) {
		for (int i = 0; i < CW_TASKS; i++) {
			w[cpu].task[i].pid = child[i];
			w[cpu].task[i].sample_cpu = -1;
		}
		cw_ring_walk(&ring[cpu], &w[cpu]);
		struct cw_walk *v = &w[cpu];
		printf("\n  CPU %d: %u records; samples a %u b %u c %u, own %u; FORK %u %u %u; COMM %u %u "
		       "%u; EXIT "
		       "%u %u %u",
		       cpu, v->records, v->task[0].samples, v->task[1].samples, v->task[2].samples,
		       v->own_samples, v->task[0].forks, v->task[1].forks, v->task[2].forks, v->task[0].comms,
		       v->task[1].comms, v->task[2].comms, v->task[0].exits, v->task[1].exits,
		       v->task[2].exits);
		CU_ASSERT_EQUAL(v->bad_cpu, 0);
		CU_ASSERT_EQUAL(v->bad_id, 0);
		CU_ASSERT_EQUAL(v->bad_period, 0);
		CU_ASSERT_EQUAL(v->bad_tid, 0);
		CU_ASSERT_EQUAL(v->foreign, 0);
		CU_ASSERT_EQUAL(v->unknown, 0);
		CU_ASSERT_EQUAL(v->lost, 0);
	}
	/* the hart of each child: where its samples are; a and c share one, b has the other */
	int cpu_of[CW_TASKS];
	for (int i = 0; i < CW_TASKS; i++) {
		cpu_of[i] = -1;
		for (int cpu = 0; cpu < n; cpu++)
			if (w[cpu].task[i].samples) {
				CU_ASSERT_EQUAL(cpu_of[i], -1); /* sampled on one CPU only */
				cpu_of[i] = cpu;
			}
		CU_ASSERT_FATAL(cpu_of[i] >= 0);
	}
	CU_ASSERT_EQUAL(cpu_of[0], cpu_of[2]);
	CU_ASSERT_NOT_EQUAL(cpu_of[0], cpu_of[1]);
	unsigned forks_total = 0;
	int fork_cpu = -1;
	for (int i = 0; i < CW_TASKS; i++) {
		const struct cw_task_seen *t = &w[cpu_of[i]].task[i];
		CU_ASSERT_EQUAL(t->samples, cw_cycles[i] / CW_PERIOD);
		CU_ASSERT_EQUAL(t->in_hot, t->samples);
		CU_ASSERT_EQUAL(t->comms, 1);
		CU_ASSERT_EQUAL(t->comm_bad_name, 0);
		CU_ASSERT_EQUAL(t->exits, 1);
		CU_ASSERT_EQUAL(t->after_exit, 0);
		CU_ASSERT_EQUAL(t->before_comm, 0);
		/* its records only in its CPU's ring (FORK aside: the parent's CPU) */
		for (int cpu = 0; cpu < n; cpu++) {
			const struct cw_task_seen *o = &w[cpu].task[i];
			if (cpu != cpu_of[i])
				CU_ASSERT(o->samples == 0 && o->comms == 0 && o->exits == 0);
			forks_total += o->forks;
			CU_ASSERT_EQUAL(o->fork_bad, 0);
			if (o->forks)
				fork_cpu = fork_cpu < 0 || fork_cpu == cpu ? cpu : -2;
		}
	}
	CU_ASSERT_EQUAL(forks_total, CW_TASKS); /* one FORK each, all on this process's CPU */
	CU_ASSERT_FATAL(fork_cpu >= 0);
	for (int cpu = 0; cpu < n; cpu++) /* this process's own samples: on its CPU only */
		CU_ASSERT_EQUAL(w[cpu].own_samples, cpu == fork_cpu ? CW_OWN_CYCLES / CW_PERIOD : 0);
	/* the events read what their CPU's tasks ran (published at their exit) */
	for (int cpu = 0; cpu < n; cpu++) {
		uint64_t want = cpu == fork_cpu ? CW_OWN_CYCLES : 0;
		for (int i = 0; i < CW_TASKS; i++)
			want += cpu_of[i] == cpu ? cw_cycles[i] : 0;
		CU_ASSERT_EQUAL(read_count(ring[cpu].fd), want);
		struct pollfd p = {ring[cpu].fd, POLLIN, 0};
		CU_ASSERT(poll(&p, 1, 0) >= 0);
		CU_ASSERT_EQUAL(p.revents & POLLHUP, 0); /* a CPU never goes away */
		munmap(ring[cpu].page, ring[cpu].len);
		close(ring[cpu].fd);
	}
}

/* A task that is not on the event's CPU is never sampled by it, also when it is the only one that runs: one
 * child, events on the CPU it does not run on only. */
static void test_cpuwide_other_cpu_silent(void)
{
	struct perf_event_attr a;
	cw_attr(&a);
	int go[2];
	CU_ASSERT_FATAL(pipe(go) == 0);
	fflush(stdout);
	pid_t c = fork();
	CU_ASSERT_FATAL(c >= 0);
	if (c == 0) {
		char x;
		close(go[1]);
		if (read(go[0], &x, 1) != 1)
			_exit(3);
		cpuwide_hot(10 * CW_PERIOD + 20000);
		_exit(0);
	}
	close(go[0]);
	/* where the child runs: the event of its CPU gets its 10 samples, the other none */
	struct cw_ring ring[2];
	int opened = 0;
	for (int cpu = 0; cpu < 2; cpu++, opened++) {
		ring[cpu].cpu = cpu;
		ring[cpu].fd = perf_open(&a, -1, cpu, -1, 0);
		CU_ASSERT(ring[cpu].fd >= 0);
		if (ring[cpu].fd < 0)
			break;
		CU_ASSERT_EQUAL(ioctl(ring[cpu].fd, PERF_EVENT_IOC_ID, &ring[cpu].id), 0);
		ring[cpu].len = (size_t)sysconf(_SC_PAGESIZE) * (1 + CW_DATA_PAGES);
		void *p = mmap(NULL, ring[cpu].len, PROT_READ | PROT_WRITE, MAP_SHARED, ring[cpu].fd, 0);
		CU_ASSERT(p != MAP_FAILED);
		if (p == MAP_FAILED) {
			close(ring[cpu].fd);
			break;
		}
		ring[cpu].page = p;
	}
	/* the child runs and is reaped whatever happened above */
	CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
	close(go[1]);
	int st = -1;
	CU_ASSERT_EQUAL(waitpid(c, &st, 0), c);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (opened < 2) {
		for (int cpu = 0; cpu < opened; cpu++) {
			munmap(ring[cpu].page, ring[cpu].len);
			close(ring[cpu].fd);
		}
		return;
	}
	unsigned samples[2];
	for (int cpu = 0; cpu < 2; cpu++) {
		struct cw_walk w;
		memset(&w, 0, sizeof(w));
		w.task[0].pid = c;
		w.task[1].pid = w.task[2].pid = -1;
		cw_ring_walk(&ring[cpu], &w);
		samples[cpu] = w.task[0].samples;
		CU_ASSERT_EQUAL(w.bad_cpu, 0);
		CU_ASSERT_EQUAL(w.foreign, 0);
		/* a task found running when the event was opened: no FORK or COMM (perf synthesizes those),
		 * its EXIT on its own CPU */
		CU_ASSERT_EQUAL(w.task[0].forks + w.task[0].comms, 0);
		CU_ASSERT_EQUAL(w.task[0].exits, samples[cpu] ? 1u : 0u);
		munmap(ring[cpu].page, ring[cpu].len);
		close(ring[cpu].fd);
	}
	printf("\n  a task running at the open: %u and %u samples on CPUs 0 and 1", samples[0], samples[1]);
	CU_ASSERT((samples[0] == 10 && samples[1] == 0) || (samples[0] == 0 && samples[1] == 10));
}

void add_cpuwide_suite(void)
{
	CU_pSuite s = CU_add_suite("CPU-wide sampling (pid -1, cpu N)", NULL, NULL);
	CU_add_test(s, "two tasks on one hart, one on the other: exact samples, FORK/COMM/EXIT, per CPU",
	            test_cpuwide_sampling);
	CU_add_test(s, "a task running at the open is sampled on its CPU only",
	            test_cpuwide_other_cpu_silent);
}

/* perf_allow_cpu: without CAP_PERFMON at paranoid >= 1 a CPU-wide sampling event is EACCES (Debian's 3 and 4
 * refuse every event); the same event on the caller's own thread opens at paranoid 1 and 2. cpu-clock: a
 * sampling event every model takes, so the refusal is the permission's, never the PMU's. */
static void test_cpuwide_sampling_refused(void)
{
	const char *p = getenv("RVEMU_PARANOID");
	int paranoid = p ? atoi(p) : 2;
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	errno = 0;
	int fd = perf_open(&a, -1, 0, -1, 0);
	CU_ASSERT_EQUAL(fd, -1);
	CU_ASSERT_EQUAL(errno, EACCES);
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = perf_open(&a, 0, -1, -1, 0);
	if (paranoid > 2) {
		CU_ASSERT_EQUAL(fd, -1);
		CU_ASSERT_EQUAL(errno, EACCES);
	} else {
		CU_ASSERT(fd >= 0);
	}
	if (fd >= 0)
		close(fd);
}

void add_cpuwide_permission_suite(void)
{
	CU_pSuite s = CU_add_suite("CPU-wide sampling without CAP_PERFMON", NULL, NULL);
	CU_add_test(s, "EACCES at paranoid >= 1 (perf_allow_cpu)", test_cpuwide_sampling_refused);
}
