// SPDX-License-Identifier: MIT
/* Tasks and their clocks. A thread is known by its tid; its clock is virtual (advanced only by the control
 * API) or its CPU time at the model's frequency. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mach.h"
#include "mach_priv.h"

static __thread struct emu_thread *self __attribute__((tls_model("initial-exec")));
static struct emu_thread *threads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_hart;

void emu_threads_lock(void)
{
	pthread_mutex_lock(&threads_lock);
}

void emu_threads_unlock(void)
{
	pthread_mutex_unlock(&threads_lock);
}

void emu_threads_init(void)
{
	/* Registered before the banks' handlers: prepare handlers run in reverse order, so a bank's lock is
	 * taken before this one, the order its code uses. */
	pthread_atfork(emu_threads_lock, emu_threads_unlock, emu_threads_unlock);
}

static struct emu_thread *find_or_add(pid_t tid)
{
	struct emu_thread *t;
	pthread_mutex_lock(&threads_lock);
	for (t = threads; t; t = t->next)
		if (t->tid == tid)
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		uint64_t *inj = calloc(emu_model()->nevents, sizeof(uint64_t));
		if (!t || !inj) {
			fprintf(stderr, "librvemu: out of memory\n");
			abort();
		}
		t->tid = tid;
		t->pid = getpid();
		t->injected = inj;
		t->hart = next_hart++ % emu_nharts();
		t->next = threads;
		threads = t;
	}
	pthread_mutex_unlock(&threads_lock);
	return t;
}

struct emu_thread *emu_thread_self(void)
{
	if (!self) {
		self = find_or_add(emu_gettid());
	}
	return self;
}

void emu_thread_forget_self(void)
{
	self = NULL;
}

/* Emulated kernel time. The entry's CPU time is also published in the thread's record, so another thread
 * that reads this one's cycles meanwhile sees them stand still too. */
static __thread unsigned kernel_depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t kernel_since __attribute__((tls_model("initial-exec")));

static int kernel_time_measured(void)
{
	/* the virtual clock does not move in the emulator; a count source with its own clock (exec) counts
	 * only what the program executes */
	return !emu_clock_is_virtual() && !emu_count_source()->thread_cycles;
}

static uint64_t own_cputime_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The source hears of the privilege change first on entry and last on exit, so the emulator's own
 * bookkeeping here counts as the kernel's too. */
static void source_kernel_mode(enum emu_kernel_mode mode)
{
	const struct emu_count_source *src = emu_count_source();
	if (src->kernel_mode)
		src->kernel_mode(mode);
}

void emu_kernel_enter(void)
{
	if (kernel_depth++)
		return;
	source_kernel_mode(EMU_KERNEL_ENTER);
	if (!kernel_time_measured())
		return;
	uint64_t now = own_cputime_ns();
	kernel_since = now == UINT64_MAX ? 0 : now;
	if (self)
		__atomic_store_n(&self->kernel_since, kernel_since, __ATOMIC_RELAXED);
}

void emu_kernel_leave(void)
{
	if (!kernel_depth || --kernel_depth)
		return;
	if (kernel_since) {
		uint64_t now = own_cputime_ns();
		/* self may have been made in the emulator: its kernel time is its own */
		struct emu_thread *t = self;
		if (t && now != UINT64_MAX && now > kernel_since)
			__atomic_fetch_add(&t->kernel_ns, now - kernel_since, __ATOMIC_RELAXED);
		if (t)
			__atomic_store_n(&t->kernel_since, 0, __ATOMIC_RELAXED);
		kernel_since = 0;
	}
	source_kernel_mode(EMU_KERNEL_LEAVE);
}

void emu_kernel_forget(void)
{
	kernel_depth = 0;
	kernel_since = 0;
	source_kernel_mode(EMU_KERNEL_FORGET);
}

clockid_t emu_thread_cpuclock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED */
}

struct emu_thread *emu_thread_by_tid(pid_t tid)
{
	struct timespec ts;
	if (tid <= 0)
		return NULL;
	/* The kernel lets a process read the CPU clock of its own threads only: that is our test for
	 * "a thread of this process". */
	if (clock_gettime(emu_thread_cpuclock(tid), &ts) != 0)
		return NULL;
	return find_or_add(tid);
}

static uint64_t cputime_ns(pid_t tid)
{
	struct timespec ts;
	clockid_t cid = tid == emu_gettid() ? CLOCK_THREAD_CPUTIME_ID : emu_thread_cpuclock(tid);
	if (clock_gettime(cid, &ts) != 0)
		return UINT64_MAX; /* thread gone */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t emu_cycles_of(struct emu_thread *t)
{
	uint64_t c;
	const struct emu_count_source *src = emu_count_source();
	if (src->thread_cycles) {
		c = src->thread_cycles(t); /* the source's own clock (exec: modelled cycles) */
	} else if (emu_clock_is_virtual()) {
		c = __atomic_load_n(&t->vcycles, __ATOMIC_RELAXED);
	} else {
		/* in the emulator, a thread's cycles stand still at its entry */
		uint64_t ns = t == self && kernel_since ? kernel_since
		                                        : __atomic_load_n(&t->kernel_since, __ATOMIC_RELAXED);
		if (!ns)
			ns = cputime_ns(t->tid);
		if (ns == UINT64_MAX)
			return __atomic_load_n(&t->last_cycles, __ATOMIC_RELAXED);
		uint64_t kernel = __atomic_load_n(&t->kernel_ns, __ATOMIC_RELAXED);
		c = emu_ns_to_cycles(ns > kernel ? ns - kernel : 0);
	}
	/* Monotonic even if two readers race. */
	uint64_t old = __atomic_load_n(&t->last_cycles, __ATOMIC_RELAXED);
	while (c > old &&
	       !__atomic_compare_exchange_n(&t->last_cycles, &old, c, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return c > old ? c : old;
}

uint64_t emu_thread_cycles(void)
{
	return emu_cycles_of(emu_thread_self());
}

uint64_t emu_hart_cycles(unsigned hart)
{
	uint64_t sum = 0;
	pthread_mutex_lock(&threads_lock);
	for (struct emu_thread *t = threads; t; t = t->next)
		if (t->hart == hart)
			sum += emu_cycles_of(t);
	pthread_mutex_unlock(&threads_lock);
	return sum;
}

uint64_t emu_hart_sum(unsigned hart, uint64_t (*value)(struct emu_thread *t, int arg), int arg)
{
	uint64_t sum = 0;
	pthread_mutex_lock(&threads_lock);
	for (struct emu_thread *t = threads; t; t = t->next)
		if (t->hart == hart)
			sum += value(t, arg);
	pthread_mutex_unlock(&threads_lock);
	return sum;
}

uint64_t emu_thread_context_switches(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

/* Another thread's accounting: /proc/self/task/<tid>/stat (minflt is field 10, majflt 12) and status
 * (voluntary/nonvoluntary_ctxt_switches). */
static int acct_of_other(pid_t tid, struct emu_thread_acct *out)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	int fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = EMU_REAL(read)(fd, buf, sizeof(buf) - 1);
	EMU_REAL(close)(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may contain spaces */
	unsigned long long minflt, majflt;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt) != 2)
		return -1;
	out->minflt = minflt;
	out->majflt = majflt;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = EMU_REAL(read)(fd, buf, sizeof(buf) - 1);
	EMU_REAL(close)(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *v = strstr(buf, "voluntary_ctxt_switches:"),
	           *nv = strstr(buf, "nonvoluntary_ctxt_switches:");
	if (!v || !nv)
		return -1;
	out->nvcsw = strtoull(v + strlen("voluntary_ctxt_switches:"), NULL, 10);
	out->nivcsw = strtoull(nv + strlen("nonvoluntary_ctxt_switches:"), NULL, 10);
	return 0;
}

int emu_thread_acct(const struct emu_thread *t, struct emu_thread_acct *out)
{
	memset(out, 0, sizeof(*out));
	if (t->tid != emu_gettid())
		return acct_of_other(t->tid, out);
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	out->minflt = (uint64_t)ru.ru_minflt;
	out->majflt = (uint64_t)ru.ru_majflt;
	out->nvcsw = (uint64_t)ru.ru_nvcsw;
	out->nivcsw = (uint64_t)ru.ru_nivcsw;
	return 0;
}

/* The alarms live in the thread's record, owned by whoever arms them (the perf core, under its lock, also
 * from the thread's own signal handler: no lock here). Timers are per process: a forked child has a copy
 * of the record but not the timers, hence alarm_pid. */
int emu_thread_alarm(struct emu_thread *t, int signo, uint64_t ns, enum emu_alarm_clock clock)
{
	pid_t pid = getpid();
	if (t->alarm_pid != pid) {
		if (!ns)
			return 0;
		struct sigevent sev;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = signo;
		sev._sigev_un._tid = t->tid;
		if (timer_create(emu_thread_cpuclock(t->tid), &sev, &t->alarm[EMU_ALARM_CPU]) != 0)
			return -1;
		if (timer_create(CLOCK_MONOTONIC, &sev, &t->alarm[EMU_ALARM_WALL]) != 0) {
			timer_delete(t->alarm[EMU_ALARM_CPU]);
			return -1;
		}
		t->alarm_pid = pid;
		t->alarm_armed[0] = t->alarm_armed[1] = 0;
	}
	struct itimerspec its, off;
	memset(&its, 0, sizeof(its));
	memset(&off, 0, sizeof(off));
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	int other = clock == EMU_ALARM_CPU ? EMU_ALARM_WALL : EMU_ALARM_CPU;
	if (t->alarm_armed[other])
		timer_settime(t->alarm[other], 0, &off, NULL);
	t->alarm_armed[other] = 0;
	t->alarm_armed[clock] = ns != 0;
	return timer_settime(t->alarm[clock], 0, &its, NULL);
}

/* The host's CPU-time timers fire only when its scheduler tick finds the thread on a CPU: on a busy host a
 * thread that never sleeps but is preempted often can run for 100 ms and more (measured: 184 ms under
 * stress-ng --cpu 2 on 2 cores for a 0.67 ms timer) before its CPU-clock alarm fires. A wall-clock alarm is
 * punctual but wakes a sleeping thread. So the alarm's owner asks whether the thread waits: the calling
 * thread by its voluntary context switches (getrusage), another thread by its state in /proc. */
static int state_of_other(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	int fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = EMU_REAL(read)(fd, buf, sizeof(buf) - 1);
	EMU_REAL(close)(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may contain spaces */
	return p && p[1] == ' ' ? p[2] : 0;
}

int emu_thread_runnable(const struct emu_thread *t, uint64_t *mark)
{
	if (t->tid != emu_gettid())
		return state_of_other(t->tid) == 'R';
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	uint64_t nvcsw = (uint64_t)ru.ru_nvcsw;
	int runnable = nvcsw == *mark;
	*mark = nvcsw;
	return runnable;
}
