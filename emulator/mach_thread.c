// SPDX-License-Identifier: MIT
/* Tasks and their clocks. A thread is known by its tid; its clock is virtual (advanced only by the control
 * API) or its CPU time at the model's frequency. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
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

/* The first fork child handler of the emulator (child handlers run in the order they were registered): the
 * child's identity is new before any other handler asks for it. The child is inside the emulator from here
 * on, as its parent is (perf_fork_prepare's emu_lock): its own slot of the count source turns to supervisor
 * mode before the handlers run, and the last of them leaves (fe_libc.c's fork_child). Otherwise the
 * handlers' work (the run table, the inherited events) counted as the child's user instructions, and how
 * much of it the child did, not its parent, depended on which of the two ran first. */
static void threads_fork_child(void)
{
	emu_identity_forget();
	emu_kernel_forget();
	emu_kernel_enter();
	emu_threads_unlock();
}

void emu_threads_init(void)
{
	/* Registered before the banks' handlers: prepare handlers run in reverse order, so a bank's lock is
	 * taken before this one, the order its code uses. */
	pthread_atfork(emu_threads_lock, emu_threads_unlock, threads_fork_child);
}

/* A thread's record: by tid and by this process's pid. A fork child holds a copy of its parent's registry,
 * records of the parent's ended threads among them, and its pid may be such a thread's tid (pids wrap, or a
 * process writes ns_last_pid): by tid alone it took the dead thread's record, with that thread's slot in the
 * run's table, hart and clock, so events opened on the child never reached it (their root is the child's own
 * slot).
 * `own`: the calling thread's first look. An ended thread's record (emu_thread_ended) is never the caller's:
 * the caller lives with that tid, so the record is of a dead thread whose tid came back. Another thread's
 * lookup by tid takes an ended record only while it is that thread's (the same start: a worker's creator
 * after its pthread_exit, a zombie main thread; or a start not known), else the thread on the tid now gets
 * a record of its own. */
static struct emu_thread *find_or_add(pid_t tid, int own)
{
	struct emu_thread *t;
	pid_t pid = emu_getpid();
	/* the tid's start now, read before the lock and only if an ended record would need it (rare) */
	uint64_t start_now = 0;
	int any_ended = 0;
	for (t = __atomic_load_n(&threads, __ATOMIC_ACQUIRE); !own && t && !any_ended; t = t->next)
		any_ended = t->tid == tid && t->pid == pid && __atomic_load_n(&t->ended, __ATOMIC_ACQUIRE);
	if (any_ended)
		start_now = emu_thread_start_ticks(tid);
	emu_guard_enter(); /* a handler of this thread must not find the registry locked */
	pthread_mutex_lock(&threads_lock);
	for (t = threads; t; t = t->next) {
		if (t->tid != tid || t->pid != pid)
			continue;
		if (!t->ended)
			break;
		if (!own && (!t->ended_start || !start_now || t->ended_start == start_now))
			break;
	}
	if (!t) {
		t = emu_thread_new(tid, pid, next_hart++ % emu_nharts());
		t->next = threads;
		__atomic_store_n(&threads, t, __ATOMIC_RELEASE); /* the look before the lock */
		emu_run_thread_attach(t); /* its slot in the run; after exec its clock goes on */
	}
	pthread_mutex_unlock(&threads_lock);
	emu_guard_leave();
	return t;
}

struct emu_thread *emu_thread_self(void)
{
	if (!self) {
		self = find_or_add(emu_gettid(), 1);
	}
	return self;
}

void emu_thread_forget_self(void)
{
	self = NULL;
}

/* Records are never freed (events and other processes' readers keep pointers to them), so an ended thread's
 * stays in the registry; a new thread of this process that gets its tid (tids wrap, or a process writes
 * ns_last_pid) must not take it: that thread's clock, counts, hart and slot in the run's table. The ending
 * thread keeps using its record (self) for what it still does. */
void emu_thread_ended(void)
{
	pid_t tid = emu_gettid(), pid = emu_getpid();
	uint64_t start = emu_thread_start_ticks(tid);
	emu_guard_enter(); /* a handler of this thread must not find the registry locked */
	pthread_mutex_lock(&threads_lock);
	struct emu_thread *t = self;
	/* never looked itself up: its record, if another thread's lookup made one, is the newest live one */
	for (struct emu_thread *o = threads; !t && o; o = o->next)
		if (o->tid == tid && o->pid == pid && !o->ended)
			t = o;
	if (t && !t->ended) {
		t->ended_start = start;
		__atomic_store_n(&t->ended, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&threads_lock);
	emu_guard_leave();
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

/* Test hook (emu_test_steal): wall time added to this thread's monotonic reads, as a hypervisor's steal adds
 * it without the thread's CPU time (the guest sees no preemption, so the rseq mark stays). */
static __thread uint64_t test_steal_ns __attribute__((tls_model("initial-exec")));

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* in the vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + test_steal_ns;
}

/* Was the thread ever off its CPU (preempted, blocked, migrated) or sent a signal since a point? Linux's
 * rseq tells, without a system call: at every such event the kernel looks at the thread's registered rseq
 * area on the way back to user space, and clears its rseq_cs pointer when the thread is not inside the
 * critical section it describes (rseq_ip_fixup). A descriptor whose section is empty is never entered, so
 * a pointer to it that is still there later means: no such event in between. glibc (2.35+) registers
 * every thread's area (__rseq_offset from the thread pointer; __rseq_size 0 when it could not, e.g. under
 * qemu-user or with glibc.pthread.rseq=0). The kernel checks the descriptor: version 0, and the word before
 * abort_ip must be the signature glibc registered (RSEQ_SIG). Weak: an older glibc has no rseq symbols, and
 * then nothing is known this way. */
#ifdef RSEQ_SIG /* glibc registers rseq only where it defines the signature (riscv64: not in 2.36) */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static const uint32_t off_cpu_signature[2] __attribute__((aligned(8))) = {RSEQ_SIG, 0};
static const struct rseq_cs off_cpu_mark __attribute__((aligned(32))) = {
    .version = 0,
    .flags = 0,
    .start_ip = (uintptr_t)&off_cpu_mark,
    .post_commit_offset = 0,                      /* an empty section: the thread is never inside it */
    .abort_ip = (uintptr_t)&off_cpu_signature[1], /* after the signature word */
};

static volatile uint64_t *own_rseq_cs(void)
{
	if (!&__rseq_size || !&__rseq_offset || __rseq_size < offsetof(struct rseq, flags))
		return NULL;
	struct rseq *area = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	if ((int32_t)__atomic_load_n(&area->cpu_id, __ATOMIC_RELAXED) < 0) /* this thread is not registered */
		return NULL;
	return (volatile uint64_t *)&area->rseq_cs;
}
#else
static const char off_cpu_mark; /* never stored: no thread has an rseq area */
static volatile uint64_t *own_rseq_cs(void)
{
	return NULL;
}
#endif

/* Sets the mark; 0 if this thread cannot have one. */
static int off_cpu_mark_set(void)
{
	volatile uint64_t *cs = own_rseq_cs();
	if (!cs)
		return 0;
	*cs = (uint64_t)(uintptr_t)&off_cpu_mark;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 1;
}

/* 1 if the mark set by off_cpu_mark_set is still there: the thread stayed on its CPU and got no signal. */
static int off_cpu_mark_kept(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	const volatile uint64_t *cs = own_rseq_cs();
	return cs && *cs == (uint64_t)(uintptr_t)&off_cpu_mark;
}

/* The source hears of the privilege change first on entry and last on exit, so the emulator's own
 * bookkeeping here counts as the kernel's too. */
static void source_kernel_mode(enum emu_kernel_mode mode)
{
	const struct emu_count_source *src = emu_count_source();
	if (src->kernel_mode)
		src->kernel_mode(mode);
}

/* The calling thread's CPU time without a system call where possible. CLOCK_THREAD_CPUTIME_ID is not in the
 * vDSO, and here it costs more than the rest of an emulated call together (1.4 us against a pipe read's 0.3
 * us, measured on this project's CI machine). While a thread stays on its CPU, its CPU time advances as the
 * monotonic clock (vDSO); the rseq mark says it stayed. So the CPU clock is read once, as an anchor (CPU
 * time, monotonic time), with the mark set just before, and later reads are the anchor plus the monotonic
 * time since, for as long as the mark is kept -- at most until the next scheduler tick, which clears it
 * (Linux 6.x; measured: a busy thread keeps it 1 ms in 3 of 4 tries, 4 ms almost never), or a
 * preemption, a sleep, a signal. Then the CPU clock is read again and the anchor renewed. A thread without
 * rseq reads the CPU clock every time. The error: time the thread's CPU clock does not get while the mark
 * stays counts as its own -- interrupt time the host does not charge to the thread (IRQ_TIME_ACCOUNTING),
 * and a VM's steal (its vCPU descheduled by the hypervisor: the guest sees no preemption, its monotonic clock
 * runs on, the thread's CPU clock does not). The CPU-clock read that renews the anchor corrects it, but
 * cycles never go back (emu_cycles_of keeps them monotonic): what was counted ahead comes off the next
 * window, which reads 0 until the CPU clock catches up. So an anchor is trusted for ANCHOR_WALL_MAX_NS of
 * wall time at most: a longer gap since it (a thread that calls the emulator seldom, or a steal) is checked
 * against the CPU clock, and what a steal can put ahead, and take from the next window, is bounded by it
 * (seen on a shared VM before the bound: a 2 ms window read 0.3 ms, a 1 ms one 0). A thread that calls the
 * emulator in a tight loop still renews at most once per ANCHOR_WALL_MAX_NS (below 1% of its time). */
#define ANCHOR_WALL_MAX_NS 200000u
/* an emulator call whose wall time says it took longer than this is checked against the CPU clock (most take
 * a few microseconds) */
#define KERNEL_WALL_CHECK_NS 50000u
static __thread uint64_t anchor_cpu __attribute__((tls_model("initial-exec")));
static __thread uint64_t anchor_wall __attribute__((tls_model("initial-exec"))); /* 0: no anchor */

static uint64_t own_cputime_now(uint64_t *wall)
{
	/* cppcheck sees no RSEQ_SIG (a system header's): own_rseq_cs() is not always NULL */
	// cppcheck-suppress knownConditionTrueFalse
	if (!own_rseq_cs()) { /* no mark possible: the CPU clock, and no monotonic reads for nothing */
		anchor_wall = 0;
		*wall = 0;
		return own_cputime_ns();
	}
	uint64_t w = monotonic_ns();
	if (anchor_wall && w >= anchor_wall && w - anchor_wall <= ANCHOR_WALL_MAX_NS && off_cpu_mark_kept()) {
		*wall = w;
		return anchor_cpu + (w - anchor_wall);
	}
	int marked = off_cpu_mark_set(); /* before the read: an event during it is seen */
	uint64_t cpu = own_cputime_ns();
	w = monotonic_ns(); /* after it: the anchor's CPU time is a little early, never late */
	anchor_cpu = cpu;
	anchor_wall = marked && cpu != UINT64_MAX ? w : 0;
	*wall = w;
	return cpu;
}

/* The time spent inside: the monotonic time from entry to exit, when the mark shows the thread on its CPU all
 * along; else the CPU time at exit (a system call) minus that at entry. */
static __thread uint64_t kernel_wall_since __attribute__((tls_model("initial-exec")));

void emu_kernel_enter(void)
{
	if (kernel_depth++)
		return;
	source_kernel_mode(EMU_KERNEL_ENTER);
	if (!kernel_time_measured())
		return;
	uint64_t now = own_cputime_now(&kernel_wall_since);
	kernel_since = now == UINT64_MAX ? 0 : now;
	if (self) {
		__atomic_store_n(&self->kernel_since, kernel_since, __ATOMIC_RELAXED);
		emu_run_publish(self, 0);
	}
}

void emu_kernel_leave(void)
{
	if (!kernel_depth || --kernel_depth)
		return;
	if (kernel_since) {
		uint64_t wall, spent;
		uint64_t now = own_cputime_now(&wall);
		if (anchor_wall && wall >= kernel_wall_since && kernel_wall_since >= anchor_wall) {
			spent =
			    wall - kernel_wall_since; /* one anchor across the call: on the CPU all along */
			/* unless the CPU was taken from the thread unseen: a hypervisor's steal (a VM's vCPU
			 * descheduled: no preemption in the guest, the mark stays) or interrupt time runs the
			 * wall clock, not the thread's. Charged to the emulator, it would come off the user's
			 * cycles (a window after it reads 0 until they catch up). A long call is checked
			 * against the CPU clock, whose cost is small beside it; the anchor is renewed. */
			if (spent > KERNEL_WALL_CHECK_NS) {
				int marked = off_cpu_mark_set(); /* as own_cputime_now renews it */
				uint64_t cpu = own_cputime_ns();
				if (cpu != UINT64_MAX) {
					uint64_t by_cpu = cpu > kernel_since ? cpu - kernel_since : 0;
					spent = by_cpu < spent ? by_cpu : spent;
					anchor_cpu = cpu;
					anchor_wall = marked ? monotonic_ns() : 0;
				} else {
					anchor_wall = 0;
				}
			}
		} else {
			spent = now != UINT64_MAX && now > kernel_since ? now - kernel_since : 0;
		}
		/* self may have been made in the emulator: its kernel time is its own */
		struct emu_thread *t = self;
		if (t && spent)
			__atomic_fetch_add(&t->kernel_ns, spent, __ATOMIC_RELAXED);
		if (t) {
			__atomic_store_n(&t->kernel_since, 0, __ATOMIC_RELAXED);
			emu_run_publish(t, 0);
		}
		kernel_since = 0;
	}
	source_kernel_mode(EMU_KERNEL_LEAVE);
}

void emu_test_steal(uint64_t ns)
{
	emu_kernel_enter();
	test_steal_ns +=
	    ns; /* inside an emulator call: the wall clock runs on, the thread's CPU time does not */
	emu_kernel_leave();
}

void emu_test_steal_user(uint64_t ns)
{
	test_steal_ns += ns; /* in the thread's own code: no emulator call, the mark stays */
}

void emu_kernel_forget(void)
{
	kernel_depth = 0;
	kernel_since = 0;
	kernel_wall_since = 0;
	anchor_wall = 0; /* the child's CPU clock starts again at 0 */
	source_kernel_mode(EMU_KERNEL_FORGET);
}

/* ------------------------------------------------------------------------------- re-entry guard */
static __thread unsigned guard_depth __attribute__((tls_model("initial-exec")));
/* Deferred signals, kept with their siginfo and queued again to the thread when it leaves: nothing is blocked
 * (a handler's changes to the interrupted context's mask, which the kernel and qemu honour, valgrind
 * ignores: blocking there would deliver the signal again at once, forever). A standard signal is kept once,
 * as the kernel keeps one pending. When the list is full (32 in one call), further signals are blocked in
 * the context's mask and queued at once, and unblocked when the thread leaves. */
#define DEFERRED_MAX 32
static __thread siginfo_t deferred[DEFERRED_MAX] __attribute__((tls_model("initial-exec")));
static __thread unsigned deferred_n __attribute__((tls_model("initial-exec")));
static __thread sigset_t deferred_blocked __attribute__((tls_model("initial-exec")));
static __thread int any_blocked __attribute__((tls_model("initial-exec")));

void emu_guard_enter(void)
{
	guard_depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* set before anything the guard protects */
}

static void deliver_deferred(void)
{
	unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_RELAXED);
	if (!n && !__atomic_load_n(&any_blocked, __ATOMIC_RELAXED))
		return;
	/* a handler run here may enter the guard and defer again: take the list first */
	siginfo_t batch[DEFERRED_MAX];
	if (n > DEFERRED_MAX)
		n = DEFERRED_MAX;
	memcpy(batch, deferred, n * sizeof(batch[0]));
	sigset_t blocked = deferred_blocked;
	int unblock = any_blocked;
	sigemptyset(&deferred_blocked);
	any_blocked = 0;
	__atomic_store_n(&deferred_n, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int saved_errno = errno;
	for (unsigned i = 0; i < n; i++)
		emu_sigqueue_self(batch[i].si_signo, &batch[i]); /* delivered as the call returns */
	if (unblock)
		emu_sigmask(SIG_UNBLOCK, &blocked);
	errno = saved_errno;
}

void emu_guard_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* everything the guard protects is done */
	if (!guard_depth || --guard_depth)
		return;
	deliver_deferred();
}

int emu_guard_inside(void)
{
	return guard_depth != 0;
}

void emu_guard_forget(void)
{
	guard_depth = 0;
	/* The signals held back here were sent to the parent, which delivers them itself as its guard ends;
	 * the kernel gives a fork child none of its parent's pending signals. Only what the list blocked is
	 * undone. */
	sigset_t blocked = deferred_blocked;
	int unblock = any_blocked;
	sigemptyset(&deferred_blocked);
	any_blocked = 0;
	__atomic_store_n(&deferred_n, 0, __ATOMIC_RELAXED);
	if (unblock)
		emu_sigmask(SIG_UNBLOCK, &blocked);
}

static int is_fault(int sig, const siginfo_t *si)
{
	return si && si->si_code > 0 &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
	        sig == SIGSYS);
}

int emu_signal_defer(int sig, siginfo_t *si, void *ucontext)
{
	if (!guard_depth || is_fault(sig, si))
		return 0;
	EMU_STAT_ADD(signals_deferred, 1);
	siginfo_t info;
	if (si) {
		info = *si;
	} else {
		memset(&info, 0, sizeof(info));
		info.si_code = SI_TKILL;
	}
	info.si_signo = sig;
	unsigned n = __atomic_load_n(&deferred_n, __ATOMIC_RELAXED);
	if (sig < SIGRTMIN)
		for (unsigned i = 0; i < n && i < DEFERRED_MAX; i++)
			if (deferred[i].si_signo == sig)
				return 1; /* already pending: the kernel would not queue a second one */
	/* a handler that interrupts this one takes the next slot */
	unsigned slot = __atomic_fetch_add(&deferred_n, 1, __ATOMIC_RELAXED);
	if (slot < DEFERRED_MAX) {
		deferred[slot] = info;
		return 1;
	}
	__atomic_store_n(&deferred_n, DEFERRED_MAX, __ATOMIC_RELAXED);
	int saved_errno = errno;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	/* blocked now (SA_NODEFER) and after this handler returns (the kernel restores the context's mask) */
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	if (ucontext)
		sigaddset(&((ucontext_t *)ucontext)->uc_sigmask, sig);
	sigaddset(&deferred_blocked, sig);
	any_blocked = 1;
	emu_sigqueue_self(sig, &info);
	errno = saved_errno;
	return 1;
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
	return find_or_add(tid, 0);
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
	if (t->remote) {
		c = emu_run_remote_cycles(t); /* another process's task: from the run's table */
	} else if (src->thread_cycles) {
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
	c = c > old ? c : old;
	emu_run_publish(t, c);
	return c;
}

uint64_t emu_thread_cycles(void)
{
	return emu_cycles_of(emu_thread_self());
}

uint64_t emu_hart_cycles(unsigned hart)
{
	uint64_t sum = 0;
	emu_guard_enter();
	pthread_mutex_lock(&threads_lock);
	for (struct emu_thread *t = threads; t; t = t->next)
		if (t->hart == hart)
			sum += emu_cycles_of(t);
	pthread_mutex_unlock(&threads_lock);
	emu_guard_leave();
	return sum;
}

uint64_t emu_hart_sum(unsigned hart, uint64_t (*value)(struct emu_thread *t, int arg), int arg)
{
	uint64_t sum = 0;
	emu_guard_enter(); /* a handler of this thread must not find the registry locked */
	pthread_mutex_lock(&threads_lock);
	for (struct emu_thread *t = threads; t; t = t->next)
		if (t->hart == hart)
			sum += value(t, arg);
	pthread_mutex_unlock(&threads_lock);
	emu_guard_leave();
	return sum;
}

/* Voluntary switches (the thread blocked: the program's own doing) always; involuntary ones (the host
 * preempted it) only under the CPU-time clock, where the host's time is the machine's. Under a modelled clock
 * (virtual, exec) the host's preemptions are not the emulated machine's: an HPC read's retries, and the
 * counts they add, must not follow the host's load (exec-counts' banks check saw 164 more L1D reads from one
 * retried read under a load of 10). */
uint64_t emu_thread_context_switches(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	int modelled = emu_clock_is_virtual() || emu_count_source()->thread_cycles != NULL;
	return (uint64_t)ru.ru_nvcsw + (modelled ? 0 : (uint64_t)ru.ru_nivcsw);
}

/* Another thread's accounting: /proc/self/task/<tid>/stat (minflt is field 10, majflt 12) and status
 * (voluntary/nonvoluntary_ctxt_switches). */
static int acct_of_other(pid_t pid, pid_t tid, struct emu_thread_acct *out)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
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
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
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
	if (t->tid != emu_gettid()) {
		int r = acct_of_other(t->pid, t->tid, out);
		/* another process's task that is gone: what it left at exit */
		return r != 0 && t->remote ? emu_run_final_acct(t, out) : r;
	}
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
	pid_t pid = emu_getpid();
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
