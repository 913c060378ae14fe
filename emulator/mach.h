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
pid_t emu_gettid(void);
/* Restores a signal mask pthread_sigmask gave; what arrived while it was blocked is delivered as this returns
 * (in this function: on riscv64 it makes the system call itself, see mach_host.c). */
void emu_restore_sigmask(const sigset_t *mask);

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
	uint64_t irq_skid;        /* virtual clock: cycles from a counter overflow to its interrupt (skid) */
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
	struct emu_pes_buf *pes; /* the PES unit's state for this task (mach_pes.c), NULL until used */
	pid_t alarm_pid;         /* process that created the alarms (emu_thread_alarm) */
	timer_t alarm[2];        /* per enum emu_alarm_clock */
	int alarm_armed[2];      /* which of them may be armed (the other needs no disarming) */
	struct emu_thread *next;
};
struct emu_thread *emu_thread_self(void);
struct emu_thread *emu_thread_by_tid(pid_t tid); /* a thread of this process, else NULL */
void emu_thread_forget_self(void);               /* fork child: the forking thread's record is not ours */
uint64_t emu_cycles_of(struct emu_thread *t);    /* cycles the thread has run (monotonic) */
uint64_t emu_thread_cycles(void);                /* ... of the calling thread */
uint64_t emu_hart_cycles(unsigned hart);         /* cycles run on a hart by every thread assigned to it */
/* The calling thread enters / leaves the emulator: its CPU time in between stands for the kernel's (a system
 * call, a trapped CSR access, the emulator's own timer interrupt) and the CPU-time clock leaves it out of the
 * thread's cycles, so no count, truth or sample charges it to the program. The thread's cycles stand still
 * meanwhile. Calls nest; only the outermost pair measures. Async-signal-safe: call with signals blocked, as
 * the emulated kernel runs (an interrupt inside would be charged to the kernel too). */
void emu_kernel_enter(void);
void emu_kernel_leave(void);
/* fork child: the parent's open emulator entry is not the child's (its CPU clock starts at 0). */
void emu_kernel_forget(void);
/* The id of a thread's CPU-time clock (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
clockid_t emu_thread_cpuclock(pid_t tid);
/* Host context switches of the calling thread so far (getrusage), for the HPC's `interrupted` bit. */
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
