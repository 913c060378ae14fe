/* SPDX-License-Identifier: MIT */
/* The machine layer of the emulator: what the emulated RISC-V board IS, with no knowledge of perf_event
 * or of libc interposition. Configuration, the models (rows of events/models.csv), threads (tasks) and
 * their clocks, the count sources that say how many events a thread has had, the counter banks reached
 * through seam 2, statistics, and the host's real libc functions.
 *
 * Layers (scripts/lint.sh checks them from the objects' symbols): machine (mach_*.c, bank_*.c)
 * <- perf core (perf_*.c) <- front ends (fe_*.c). A file may use only its own layer and the ones below,
 * and the files of one layer call each other without cycles. See docs/emulator-core.md. */
#ifndef EMU_MACH_H
#define EMU_MACH_H
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "rvemu.h"
#include "rvemu_tables.h"

/* Only the interposed libc entry points and the rvemu_* / rvhw_* API leave the library. */
#define EMU_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------------------- host libc */
/* The host's own libc functions, resolved with dlsym(RTLD_NEXT) on first use (the first call may come
 * from another library's constructor, before ours ran). Every layer that needs the real function (and
 * not our interposed one) calls it through EMU_REAL(fn); the pointers all live in mach_host.c. */
#define EMU_REAL(fn) ((__typeof__(emu_real_##fn))emu_resolve((void **)&emu_real_##fn, #fn))
void *emu_dlsym_next(const char *name);
static inline void *emu_resolve(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		p = emu_dlsym_next(name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}
#define EMU_REAL_DECL(ret, fn, ...) extern ret (*emu_real_##fn)(__VA_ARGS__)
#include "mach_host.def"
#undef EMU_REAL_DECL
/* The calling thread's tid and the process's pid, cached (no system call after the first); a fork child
 * forgets them before anything else runs in it (emu_identity_forget). */
pid_t emu_gettid(void);
pid_t emu_getpid(void);
void emu_identity_forget(void);
/* rt_sigprocmask(how, set, NULL); what it unblocks is delivered as this returns (in this function: on riscv64
 * it makes the system call itself, see mach_host.c). */
void emu_sigmask(int how, const sigset_t *set);
/* Queues sig with *info to the calling thread (any si_code); delivered as this returns, if not blocked. */
void emu_sigqueue_self(int sig, siginfo_t *info);

/* ---------------------------------------------------------------------------------- configuration */
/* Set once at load time from the environment (mach_config.c). A malformed value is a configuration
 * error: one message "librvemu: ..." on stderr and exit status 2. The emulator never guesses. */
struct emu_config {
	const struct rvemu_model *model;
	unsigned harts;
	int clock_virtual;
	int sscofpmf;             /* the core has a counter-overflow interrupt Linux samples and filters with:
	                           * Sscofpmf's, or Andes' or T-Head's own (events/models.csv overflow_irq) */
	int isa_sscofpmf;         /* RVEMU_SSCOFPMF=1: the isa string names Sscofpmf */
	uint64_t mux_cycles;      /* multiplexing rotation interval */
	uint64_t tick_cycles;     /* scheduler tick: the kernel folds counters into perf counts this often */
	uint64_t read_advance;    /* RVEMU_READ_ADVANCE: virtual cycles added by each read() of an event */
	int paranoid;             /* kernel.perf_event_paranoid */
	int cap_perfmon;          /* the process has CAP_PERFMON (or CAP_SYS_ADMIN) */
	int perf_user_access;     /* kernel.perf_user_access: 0 off, 1 mapped events, 2 legacy (all) */
	unsigned max_sample_rate; /* kernel.perf_event_max_sample_rate */
	int pes;                  /* Precise Event Sampling present (docs/pes.md) */
	unsigned pes_records;     /* PES buffer size in records: the fill interrupt comes when it is full */
	uint64_t irq_skid; /* virtual or exec clock: cycles from a counter overflow to its interrupt (skid) */
};
void emu_init(void); /* every entry point calls it first; idempotent */
const struct emu_config *emu_cfg(void);
const struct rvemu_model *emu_model(void);
unsigned emu_nharts(void);
int emu_clock_is_virtual(void);
/* The one environment parser: unsigned decimal (or 0x hex) in [min, max]; def when unset or empty. */
uint64_t emu_env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max);
/* One of `choices` (NULL-terminated); returns its index, def when unset. */
int emu_env_choice(const char *name, int def, const char *const choices[]);
__attribute__((noreturn, format(printf, 1, 2))) void emu_config_error(const char *fmt, ...);

/* ----------------------------------------------------------------------------------------- model */
uint64_t emu_cycles_to_ns(uint64_t cycles);
uint64_t emu_ns_to_cycles(uint64_t ns);
int emu_model_event_index(const char *name); /* index in emu_model()->events, or -1 */
/* mhpmevent value -> set of model event indices it counts; 0 or -ENOENT for an undefined encoding. */
int emu_decode_raw(uint64_t config, uint64_t *evmask);
/* Linux CPU number -> hart id of the emulated machine (models.csv first_hart). */
unsigned emu_cpu_hart_id(unsigned cpu);
/* floor(cycles * rate_ppb / 1e9) without overflow. */
static inline uint64_t emu_scale(uint64_t cycles, uint64_t rate_ppb)
{
	return (uint64_t)(((unsigned __int128)cycles * rate_ppb) / RVEMU_PPB);
}

/* ---------------------------------------------------------------------------------- threads, clocks */
/* A task: one thread of a process, known to the machine by its tid (and its process by pid, so several
 * processes of one run can be held later). perf data hangs off `perf` (opaque to this layer). */
struct emu_thread {
	pid_t tid, pid;
	unsigned hart;         /* assigned round-robin when first seen; no migration is modelled */
	uint64_t vcycles;      /* virtual clock (atomic access) */
	uint64_t last_cycles;  /* last value seen, kept when the thread has exited */
	uint64_t kernel_ns;    /* CPU time in the emulator (the emulated kernel's): not the thread's cycles */
	uint64_t kernel_since; /* its CPU time when it entered the emulator, 0 outside (atomic access) */
	uint64_t *injected;    /* per model event: rvemu_inject counts */
	struct emu_ctx *perf;  /* the perf core's context of this task (owned by the perf core) */
	struct emu_pes_buf *pes;  /* the PES unit's state for this task (mach_pes.c), NULL until used */
	pid_t alarm_pid;          /* process that created the alarms (emu_thread_alarm) */
	timer_t alarm[2];         /* per enum emu_alarm_clock */
	int alarm_armed[2];       /* which of them may be armed (the other needs no disarming) */
	struct emu_run_task *run; /* its slot in the run's shared table (mach_run.c), NULL without one */
	uint64_t run_exec_seen;   /* another process's task: the execs already acted on (enable_on_exec) */
	int remote;               /* a proxy: a task of another process of the run */
	int exit_written; /* its EXIT is written (exit_group, for a sibling still running): no record after it
	                   */
	int cpu_wide;     /* a proxy for a CPU (hart): the tasks of the run on it (pid -1 events) */
	int ended; /* the thread returned, called pthread_exit or was cancelled: its tid may be a new thread's
	            * next (emu_thread_ended) */
	uint64_t ended_start; /* an ended thread's start (clock ticks since boot; 0 unknown) */
	/* the clock's alarm (mach_clock.c; its owner, the perf core, serializes the calls) */
	uint64_t alarm_due;   /* thread cycle at which the armed alarm is due (0: none armed) */
	uint64_t alarm_nvcsw; /* host clock: voluntary context switches when it was last armed */
	uint64_t handling_ns; /* host clock: CPU time one alarm takes, its handlers included (running mean) */
	int alarm_clock;      /* host clock: enum emu_alarm_clock of the armed alarm */
	struct emu_thread *next;
};
struct emu_thread *emu_thread_self(void);
struct emu_thread *emu_thread_by_tid(pid_t tid); /* a thread of this process, else NULL */
void emu_thread_forget_self(void);               /* fork child: the forking thread's record is not ours */
/* the calling thread is ending: a later thread with its tid gets a record of its own */
void emu_thread_ended(void);
uint64_t emu_thread_start_ticks(pid_t tid);   /* a thread of this process: its start, 0 if unknown (gone) */
uint64_t emu_cycles_of(struct emu_thread *t); /* cycles the thread has run (monotonic) */
uint64_t emu_thread_cycles(void);             /* ... of the calling thread */
uint64_t emu_hart_cycles(unsigned hart);      /* cycles run on a hart by every thread assigned to it */
/* The calling thread enters / leaves the emulator: its CPU time in between stands for the kernel's (a system
 * call, a trapped CSR access, the emulator's own timer interrupt) and the CPU-time clock leaves it out of the
 * thread's cycles, so no count, truth or sample charges it to the program. The thread's cycles stand still
 * meanwhile. Calls nest; only the outermost pair measures. Async-signal-safe: call inside the re-entry guard
 * (emu_guard_enter) or with signals blocked, as the emulated kernel runs (a handler inside would be charged
 * to the kernel too). On the common path no system call (see own_cputime_now in mach_thread.c). */
void emu_kernel_enter(void);
void emu_kernel_leave(void);
/* fork child: the parent's open emulator entry is not the child's (its CPU clock starts at 0). */
void emu_kernel_forget(void);
/* Test hook (rvemu_test_steal): an emulator call during which the wall clock runs `ns` further than the
 * calling thread's CPU time, as a hypervisor's steal makes it; the thread's later monotonic reads keep it. */
void emu_test_steal(uint64_t ns);
/* Test hook (rvemu_test_steal_user): the same while the thread runs its own code, between emulator calls. */
void emu_test_steal_user(uint64_t ns);
/* The re-entry guard. A system call is atomic for the caller's signal handlers; the emulator's calls must
 * be too, since a handler that calls back in (PAPI's SIGPROF handler reads its events) must not find the
 * emulator's locks held or its tables half updated by the code it interrupted. Instead of blocking every
 * signal through the kernel (two system calls per call), a thread marks itself inside (per thread, no system
 * call) and every handler that may reach the emulator -- the emulator's own and, through the interposed
 * sigaction()/signal(), the program's -- first asks emu_signal_defer: inside, the signal is kept with its
 * siginfo and queued again to the thread by the outermost emu_guard_leave, which delivers it there, where
 * the blocked-signals scheme delivered it. Nests; async-signal-safe. Every emulator lock is taken inside the
 * guard, so a handler that runs (outside it) never finds one held by its own thread. */
void emu_guard_enter(void);
void emu_guard_leave(void);
int emu_guard_inside(void);
/* In a signal handler, first thing: 1 if the thread is inside the guard and the signal was deferred (return
 * at once), 0 to handle it now. A synchronous fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS raised
 * by the kernel for an instruction) is never deferred: the instruction would fault again. */
int emu_signal_defer(int sig, siginfo_t *si, void *ucontext);
/* fork child: the guard the forking thread held (the fork handlers' lock) ends; what it deferred was the
 * parent's and is dropped (the parent delivers it). */
void emu_guard_forget(void);
/* The id of a thread's CPU-time clock (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
clockid_t emu_thread_cpuclock(pid_t tid);
/* Context switches of the calling thread so far (getrusage), for the HPC's `interrupted` bit: the host's
 * preemptions only under the CPU-time clock. */
uint64_t emu_thread_context_switches(void);
/* The thread's real accounting, for software events: page faults (minor, major), context switches. */
struct emu_thread_acct {
	uint64_t minflt, majflt, nvcsw, nivcsw;
};
int emu_thread_acct(const struct emu_thread *t, struct emu_thread_acct *out);
/* A one-shot alarm delivering `signo` to the thread after `ns` (0 disarms): of its CPU time (the kernel
 * checks CPU-time timers only at its tick: coarse), or of wall time (an hrtimer: punctual while the thread
 * runs, but it also wakes a sleeping thread). Arming one disarms the other. Returns 0 or -1. */
enum emu_alarm_clock { EMU_ALARM_CPU, EMU_ALARM_WALL };
int emu_thread_alarm(struct emu_thread *t, int signo, uint64_t ns, enum emu_alarm_clock clock);
/* Whether the thread can run now rather than wait for something: for the calling thread, whether it has not
 * blocked (no voluntary context switch) since *mark, which is updated (a thread that a busy host preempts
 * only is still runnable); for another thread, whether /proc says it is running or runnable (state R). */
int emu_thread_runnable(const struct emu_thread *t, uint64_t *mark);
/* The registry lock (fork handlers; lock order: perf lock -> bank locks -> registry lock). */
void emu_threads_lock(void);
void emu_threads_unlock(void);

/* A thread's privilege changes, told to the count source (struct emu_count_source's kernel_mode).
 * EMU_KERNEL_FORGET: in a fork child, whatever the source remembered about the calling thread is the
 * parent's. */
enum emu_kernel_mode { EMU_KERNEL_LEAVE, EMU_KERNEL_ENTER, EMU_KERNEL_FORGET };

/* ------------------------------------------------------------------------------------------- time */
/* When the perf core must look at a thread again (mach_clock.c). The perf core plans in thread cycles and
 * hands the plan to the clock, which knows what a thread cycle is: the CPU-time clock arms a host timer
 * (CPU or wall time), the virtual clock needs none (rvemu_advance moves it, and the perf core looks then),
 * a count source with its own clock (exec) arms its own alarm at a count. The perf core never asks which. */
#define EMU_ALARM_WATCHES 4
struct emu_alarm_plan {
	uint64_t from;   /* the thread cycle the plan counts from (the perf core's last accounting) */
	uint64_t cycles; /* look again at most this many thread cycles after `from` (UINT64_MAX: never) */
	/* `need` more of the events `evmask` after `from` (a clock that counts events can wake there): when
	 * `exact`, one sampling event alone decides and that is its overflow; else the union of several
	 * events' sets and the least of their needs, a bound (none of them overflows sooner). 0: only the
	 * cycle bound is known */
	uint64_t evmask, need;
	int exact;
	uint64_t skid;  /* ... whose overflow interrupt is taken this many cycles after its overflow */
	int from_alarm; /* armed by the alarm's own handler (the thread has not run since) */
	/* When every decider is a sampling event counted by the source (not `exact`): each event's own
	 * `need` more of its `evmask` after `from` (the last one may stand for several: their union and least
	 * need). A clock that counts events can watch them all and wake at the first; the union bound above
	 * wakes at every `need` of the fastest while the slowest decides (the overflow tests' livelock). */
	unsigned nwatch;
	uint64_t watch_evmask[EMU_ALARM_WATCHES], watch_need[EMU_ALARM_WATCHES];
};
int emu_clock_signal(void); /* the signal the clock's alarm sends (the perf core installs its handler) */
int emu_clock_arm(struct emu_thread *t, const struct emu_alarm_plan *p); /* 0 or -1 */
/* Whether the thread's alarm should be armed again at its cycle `now`: it is overdue (a host timer a busy
 * host stalled), or armed while nothing samples, or not armed while something does. */
int emu_clock_rearm_due(const struct emu_thread *t, uint64_t now, int sampling);
/* The alarm's handling took `ns` of the thread's CPU time (host clock: the next alarm is never sooner). */
void emu_clock_handled(struct emu_thread *t, uint64_t ns);
/* The fewest thread cycles between two alarms the clock can deliver without starving the program: a host
 * timer's floor; 0 for a clock that moves only with the program (virtual, exec). */
uint64_t emu_clock_floor_cycles(const struct emu_thread *t);
/* Whether the thread's clock moves only as its program runs (virtual, exec): no host time is ever stolen,
 * so an overflow counted is always one the program made at that count. */
int emu_clock_program_time(void);
/* The perf clock of a record (PERF_SAMPLE_TIME): the thread's accounted cycles as ns for a program-time
 * clock, else CLOCK_MONOTONIC. `accounted`: the perf core's accounted cycles, NULL: the thread's now. */
uint64_t emu_clock_record_time(struct emu_thread *t, const uint64_t *accounted);
/* The instruction at which `need` more of the events `evmask` than at thread cycle `from` were reached
 * (evmask 0: the thread's cycles reached from + need), when the clock's alarm found it exactly, and the
 * thread cycle it retired at in *cycle; else 0 (and *cycle untouched). */
uint64_t emu_clock_pc_at(const struct emu_thread *t, uint64_t evmask, uint64_t from, uint64_t need,
                         uint64_t *cycle);

/* --------------------------------------------------------------------------------- count sources */
/* "How many occurrences of model event E has thread T had up to thread cycle C", and "at which cycle
 * will a set of events have had N more": the seam between what the machine executes and what the perf
 * core counts. Today's source is the workload profile (rate x clock); an execution-driven source (e.g. a
 * QEMU TCG plugin reporting the real instruction stream) registers another struct and nothing above
 * this layer changes. Injected counts (rvemu_inject) come on top of any source. */
struct emu_count_source {
	const char *name;
	/* occurrences of model event `ev` in thread t up to its cycle `cycles` (not counting injections) */
	uint64_t (*count)(const struct emu_thread *t, size_t ev, uint64_t cycles);
	/* first cycle c in (from, limit] at which the events of `evmask` have had `need` occurrences since
	 * `from`; limit + 1 if they do not get there by `limit` */
	uint64_t (*cycle_reaching)(const struct emu_thread *t, uint64_t evmask, uint64_t from, uint64_t limit,
	                           uint64_t need);
	/* a lower bound on the cycles the events of `evmask` need for `need` occurrences (timer planning);
	 * UINT64_MAX when they never occur */
	uint64_t (*cycles_for)(const struct emu_thread *t, uint64_t evmask, uint64_t need);
	/* the thread's clock, when the source brings its own (exec: the modelled cycles the plugin counted);
	 * NULL: RVEMU_CLOCK's (CPU time or virtual). emu_cycles_of() reads it. */
	uint64_t (*thread_cycles)(struct emu_thread *t);
	/* the calling thread's privilege changes (outermost emu_kernel_enter / emu_kernel_leave), for a
	 * source that counts the emulator's own code as the kernel's (exec: the thread's slot of the count
	 * file is set to supervisor mode); NULL: nothing to do. Async-signal-safe, called with signals
	 * blocked. */
	void (*kernel_mode)(enum emu_kernel_mode mode);
	/* occurrences of `ev` in supervisor mode (the emulator's own code, the kernel's) in thread t so far,
	 * as they are now, for events that do not exclude the kernel; NULL: none (the profile source's kernel
	 * time is not the thread's). Not keyed by the thread's cycles, which stand still while the emulator
	 * runs: the perf core takes an event's share from the moment it goes on to the moment it goes off.
	 * Any thread may ask about any other (it reads t's own counts, never the caller's). */
	uint64_t (*kernel_now)(const struct emu_thread *t, size_t ev);
	/* Time, for a source with its own clock (see emu_clock_arm, emu_clock_pc_at); NULL: RVEMU_CLOCK's */
	int (*arm)(struct emu_thread *t, int signo, const struct emu_alarm_plan *p);
	uint64_t (*pc_at)(const struct emu_thread *t, uint64_t evmask, uint64_t from, uint64_t need,
	                  uint64_t *cycle);
	int signal; /* the signal its alarm sends (the source must be able to send it); 0: RVEMU_CLOCK's */
};
const struct emu_count_source *emu_count_source(void);
/* The exec count source for the counter banks (mach_count_exec.c): a handle for a bank event the source
 * counts (events/exec_events.csv under the bank's model, by the bank table's name), or -1 when the source is
 * not "exec" or the event has no execution-driven meaning (the bank keeps its profile rate); and a thread's
 * value of it, of its user-mode work or of the emulator's own work for it (supervisor mode). */
enum emu_exec_mode { EMU_EXEC_USER, EMU_EXEC_SUPERVISOR };
int emu_exec_bank_event(const char *event);
uint64_t emu_exec_bank_value(struct emu_thread *t, int handle, enum emu_exec_mode mode);
/* Sum of value(t, arg) over the threads assigned to a hart (a bank's per-hart counters). */
uint64_t emu_hart_sum(unsigned hart, uint64_t (*value)(struct emu_thread *t, int arg), int arg);
/* Occurrences of the events of evmask in thread t between its cycles a and b (a <= b). */
uint64_t emu_events_between(const struct emu_thread *t, uint64_t evmask, uint64_t a, uint64_t b);
/* Occurrences of the events of evmask in thread t's supervisor mode so far, as they are now (the kernel's
 * share; 0 unless the source counts one): the difference of two calls is the kernel's work in between. */
uint64_t emu_kernel_events_now(const struct emu_thread *t, uint64_t evmask);
/* Ground truth of one model event: the source's count up to `cycles` plus injections. */
uint64_t emu_truth_at(const struct emu_thread *t, size_t ev, uint64_t cycles);

/* -------------------------------------------------------------------------- Precise Event Sampling */
/* The PES unit of a hart (docs/pes.md): per-counter thresholds (mhpmthreshold*), a record buffer
 * (mhpmmmaped/mhpmmsize/mhpmmoffset) the emulated kernel owns. The hardware appends one record per sample
 * and raises the fill interrupt only when the buffer is full. The buffer is per task: the kernel saves it
 * with the task's counters. */
struct emu_pes_buf {
	uint64_t threshold[32]; /* mhpmthreshold per counter index (0 cycle, 2 instret, 3.. mhpmcounterN) */
	uint64_t size, offset;  /* mhpmmsize (bytes), mhpmmoffset (bytes written) */
	uint64_t capacity;      /* the memory behind mhpmmmaped: RVEMU_PES_RECORDS records */
	struct rvemu_pes_record *rec;
};
/* Appends a record to the thread's buffer: 0, or 1 when the buffer is now full (the fill interrupt), or -1
 * when it was already full (the record is not written). */
int emu_pes_append(struct emu_thread *t, const struct rvemu_pes_record *r);
void emu_pes_set_threshold(struct emu_thread *t, unsigned counter, uint64_t value); /* mhpmthreshold */
/* Takes up to `max` records out of the buffer (the kernel's drain), oldest first; returns how many. */
size_t emu_pes_drain(struct emu_thread *t, struct rvemu_pes_record *out, size_t max);
/* The kernel programs mhpmmsize: the fill interrupt comes after `records` records (1..RVEMU_PES_RECORDS).
 * -1 if out of range or if more records are held than fit (drain first). */
int emu_pes_set_size(struct emu_thread *t, unsigned records);
unsigned emu_pes_size(struct emu_thread *t);

/* ------------------------------------------------------------------------------------------ the run */
/* One machine for every process of a run (mach_run.c, docs/emulator-core.md "Across processes"): a table of
 * tasks in shared memory named by RVEMU_RUN_SHM, where each process registers its threads and publishes their
 * clocks; another process's task is an emu_thread with pid != getpid() (a proxy) whose cycles come from it.
 */
#define EMU_RUN_TASKS     1024
#define EMU_RUN_TASKS_STR "1024" /* for messages */
struct emu_run_task;
void emu_run_init(void);                                /* join or create the run (emu_init) */
void emu_run_thread_attach(struct emu_thread *t);       /* a thread of this process got its record */
void emu_run_publish(struct emu_thread *t, uint64_t c); /* its clock as this process computes it */
/* A task was created: thread parent_tid of this process made (pid, tid) by fork or pthread_create. */
void emu_run_task_created(pid_t parent_tid, pid_t pid, pid_t tid, uint64_t fork_seq);
/* The run-wide number of the calling thread's last fork() (its prepare handler takes it; the child gets the
 * same), and setting it back: a signal handler that forks between a fork's prepare handler and its return
 * overwrites it, so the fork wrapper reads its own right after fork() and restores the one it found. */
uint64_t emu_run_fork_seq(void);
void emu_run_set_fork_seq(uint64_t seq);
/* The calling thread ends: its final cycles. 1 if the caller now owns writing its EXIT record (once per
 * task: a second call, or a task another process already found killed, gets 0); -1 for a thread the run's
 * table does not hold (nobody else writes its EXIT). */
int emu_run_thread_exit(void);
/* The EXIT record emu_run_thread_exit gave the caller is written (or nobody wants one): until then a kill
 * leaves it to the first process that sees the task gone. */
void emu_run_thread_exit_written(void);
void emu_run_process_exit(void); /* the process ends (exit, _exit): every thread's final cycles */
/* The process ends (exit_group): another of its threads, still alive, whose EXIT record nobody wrote yet,
 * now the caller's to write: 1, its tid and its slot; 0 when none is left. */
int emu_run_claim_sibling_exit(pid_t *tid, int *slot);
/* Test hook (rvemu_test_fork_gate): a child of a later fork() of this process reads one byte from fd before
 * it registers in the run, so a test can act while a child exists that no slot of its own names yet. */
void emu_run_set_fork_gate(int fd);
/* The same while the child holds the run table's lock: it writes one byte to ready_fd, then reads one from
 * gate_fd (a test kills it there: a holder that dies inside the section). */
void emu_run_set_fork_gate_in_lock(int gate_fd, int ready_fd);
/* Test hook (rvemu_test_exit_gate): the next task of this process to claim its own EXIT record writes one
 * byte to ready_fd after the claim and reads one from gate_fd, before the record is written. */
void emu_run_set_exit_gate(int gate_fd, int ready_fd);
/* Task `tid` of another process, as perf_event_open may reach it (ptrace access: same uid or
 * CAP_SYS_PTRACE): 0 and its proxy, -ESRCH, -EACCES. */
int emu_run_task_open(pid_t tid, struct emu_thread **out);
int emu_thread_is_remote(const struct emu_thread *t);
uint64_t emu_run_remote_cycles(struct emu_thread *t); /* a proxy's cycles (final once it exited) */
/* A proxy's accounting (software events) as its thread left it at exit: 0, or -1 when not known. */
int emu_run_final_acct(const struct emu_thread *t, struct emu_thread_acct *out);
/* 1 when the proxy's task exec'd since last asked, with its cycles at the first exec not yet acted on. */
int emu_run_exec_pending(struct emu_thread *t, uint64_t *exec_cycles);
/* The proxy's thread accounting at its latest exec (software events enabled on exec count from there). */
void emu_run_exec_acct(const struct emu_thread *t, struct emu_thread_acct *out);
uint64_t emu_run_seq(void);                      /* tasks registered so far (a task's birth order) */
int emu_run_slot_of(const struct emu_thread *t); /* its slot, -1 none */
unsigned emu_run_tasks(void);                    /* slots in use: 0..n-1 */
/* Whether slot descends from root through tasks all created after `after` (inherit). */
int emu_run_descendant(int slot, int root, uint64_t after);
struct emu_thread *emu_run_task_thread(int slot); /* a proxy; NULL for this process's own threads */
pid_t emu_run_task_tid(int slot);
int emu_run_task_hart(int slot);
uint64_t emu_run_task_born(int slot);
/* CPU `cpu` as a proxy (cpu_wide): its cycles are those every task of the run ran on it. */
struct emu_thread *emu_run_cpu_thread(unsigned cpu);
uint64_t emu_run_task_execs(int slot); /* execs of the task so far */
int emu_run_task_live(int slot);       /* registered and not exited */
/* A task killed without running its exit path (its slot live, its process gone or a zombie) whose EXIT
 * record nobody wrote yet: 1 if the caller now owns writing it (once per task in the run), 0 otherwise. */
int emu_run_task_claim_exit(int slot);
/* The task runs, or it is a process's main thread that began its exit and the process is not gone yet. */
int emu_run_task_running(int slot);
/* A task of another process that may still write its own EXIT, or die without (no system call): 1 and its
 * ids (ppid: its parent process), 0 for the others. */
int emu_run_task_exit_pending(int slot, pid_t *pid, pid_t *tid, pid_t *ppid);
int emu_run_task_ids(int slot, pid_t *pid, pid_t *tid, pid_t *ppid); /* 0: no such slot */
/* Whether a child process of this one has a live slot whose EXIT nobody wrote (no /proc read: cheap). */
int emu_run_child_exit_pending(void);
/* "/proc/<pid>/<rest>", or "/proc/<pid>/<dir>/<n>[/<rest>]" with dir, into out, without stdio (signal
 * handlers' paths): out holds 64 bytes, rest is cut to fit. */
const char *emu_proc_path(char out[64], pid_t pid, const char *dir, int n, const char *rest);
int emu_run_task_parent(int slot);      /* the slot of the task that created it, -1 unknown */
uint64_t emu_run_task_cycles(int slot); /* its cycles as this process sees them (final once exited) */
/* Blocks of the run's shared memory for the perf core's cross-process state, opaque to the machine: the
 * first int32 is the owner's pid (0 free; a dead owner's block is free again). NULL without a run / none. */
#define EMU_RUN_BLOCKS      256
#define EMU_RUN_BLOCK_BYTES 512
void *emu_run_block_claim(void); /* zeroed past the owner word */
void emu_run_block_release(void *block);
void *emu_run_block_at(unsigned i); /* a claimed block, NULL if free */
int emu_run_block_index(const void *block);
void emu_run_block_published(void); /* a claimed block is filled in: the others look again */
uint64_t emu_run_blocks_gen(void);
/* A generation no other claim of the run has (also moves emu_run_blocks_gen): stored in a block when it is
 * claimed, it tells its users apart from an earlier one of the same block (ids restart per process). */
uint64_t emu_run_block_gen_next(void);
/* A lock word in shared memory (the holder's pid; a dead holder's lock is taken over). */
void emu_run_word_lock(int32_t *word);
void emu_run_word_unlock(int32_t *word);
int emu_run_pid_dead(pid_t pid); /* gone or a zombie */

/* ------------------------------------------------------------------------------------ counter banks */
/* A counter bank reached through seam 2 (lib/rvhw.h), not through perf_event: registered in
 * mach_bank.c, chosen by the model's bank_pmu column. Return RVHW_* codes. */
struct emu_bank {
	const char *pmu; /* libpfm4 PMU name, as in events/models.csv bank_pmu */
	void (*init)(void);
	int (*csr_read)(unsigned csr, uint64_t *value);      /* NULL: the bank has no CSRs */
	int (*csr_write)(unsigned csr, uint64_t value);      /* NULL: the bank has no CSRs */
	int (*op)(unsigned tag, uint64_t in, uint64_t *out); /* custom instruction (BOOM hints); NULL: none */
};
const struct emu_bank *emu_bank_active(void); /* the model's bank, or NULL */

/* --------------------------------------------------------------------------------------- statistics */
extern struct rvemu_stats emu_stats;
#define EMU_STAT_ADD(field, n) __atomic_fetch_add(&emu_stats.field, (n), __ATOMIC_RELAXED)

#endif
