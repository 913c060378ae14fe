/* SPDX-License-Identifier: MIT */
/* The perf core's own data: events and per-task contexts, as the kernel's kernel/events/core.c keeps them.
 * Shared by the perf_*.c files only; front ends see struct emu_event as opaque (perf.h). */
#ifndef EMU_PERF_PRIV_H
#define EMU_PERF_PRIV_H
#include <linux/perf_event.h>
#include <signal.h>

#include "mach.h"
#include "perf.h"

enum emu_ev_state { EV_ERROR = -2, EV_OFF = -1, EV_INACTIVE = 0, EV_ACTIVE = 1 }; /* kernel order */
enum emu_ev_kind { EK_CYCLES, EK_INSTRET, EK_PROG, EK_SOFTWARE };

/* attr.inherit: what forked children counted, in memory shared with them (MAP_SHARED, inherited by fork). */
struct emu_inherit_acc {
	uint64_t count, time_enabled, time_running;
};

/* What a forked child reads through an inherited fd: the parent keeps it current (seqlock) in memory the
 * child shares, since the event counts the parent's thread, which does not run in the child. */
struct emu_event_snap {
	uint64_t seq;
	uint64_t count, time_enabled, time_running, lost_total;
	int32_t error;
};

/* An event on a task of another process that samples it (`perf record -- cmd`), in the run's shared memory
 * (a block of mach_run.c): the process that opened it (the owner) publishes it; the sampled task's own
 * emulator makes a shadow event of it in its context, whose samples and side-band records go into the
 * owner's ring buffer (the event's memfd, which the shadow maps through /proc/<owner>/fd/<fd>). Every writer
 * takes ring_lock and continues from the page's data_head, so the tasks of the run that the event reaches
 * (the root task, its inheriting children) write one ring as the kernel's inherited events do. */
struct emu_xsampler {
	int32_t owner; /* the claim word (mach_run.c): the owner's pid */
	int32_t ready; /* set last: the rest is written */
	int32_t fd;    /* the event's own fd in the owner (never changes) */
	int32_t root_slot, cpu;
	int32_t enabled;   /* the owner's ENABLE / DISABLE (and enable_on_exec taken by the root task) */
	int32_t ring_lock; /* pid of the process writing the ring, 0 free */
	int32_t kind;
	int32_t ring_block; /* the block of the event whose buffer the records go to (SET_OUTPUT): its lock,
	                     * wakeups and memfd (that block's fd, ino, dev); one store changes it */
	int32_t
	    cpu_wide; /* pid -1, cpu N: every task of the run while it runs on hart `cpu` (root_slot -1) */
	uint64_t evmask, after, id, period;
	uint64_t gen;       /* emu_run_block_gen_next at the claim: a shadow belongs to this event if equal */
	uint64_t ino, dev;  /* the event's own memfd (fd): the file a shadow may map as its ring */
	uint64_t exec_seen; /* the root task's execs when the event was opened (enable_on_exec) */
	uint64_t wakeups;   /* written by the shadows, taken by the owner's poll */
	uint64_t count;     /* what the shadows counted, published at samples, exec and exit */
	uint64_t lost;
	/* the owner's PERF_EVENT_IOC_PERIOD (the new period in `period`, stored first) and RESET: each moves
	 * its generation; a shadow follows when its task next looks at the blocks (perf_remote.c) */
	uint64_t period_gen, reset_gen;
	struct perf_event_attr attr;
};
_Static_assert(sizeof(struct emu_xsampler) <= EMU_RUN_BLOCK_BYTES, "a sampler fits the run's block");

/* An event whose fd was sent to another process (SCM_RIGHTS), in a block of the run's shared memory: the
 * owner publishes its values there as for a forked child; a process that receives the fd finds it by the
 * memfd's inode and reads them (perf_remote.c). ready is EMU_BLOCK_FILE, a sampler's EMU_BLOCK_SAMPLER. */
enum { EMU_BLOCK_SAMPLER = 1, EMU_BLOCK_FILE = 2, EMU_BLOCK_EXEC = 3 };
/* A counting event of a process that execs, whose fd survives the exec: handed to the new image, which opens
 * it again on the same fd and goes on from these values (perf_event.c). */
struct emu_xexec {
	int32_t owner, ready; /* ready = EMU_BLOCK_EXEC */
	int32_t fd, cpu, state, pad;
	uint64_t ino, dev; /* the event's memfd: the new image's fd must still be that file */
	uint64_t count, time_enabled, time_running;
	struct perf_event_attr attr;
};
struct emu_xfile {
	int32_t owner, ready;
	uint32_t type, pad;
	uint64_t ino, id, config, read_format;
	uint64_t gen; /* emu_run_block_gen_next at the claim: a receiver reads the block while it is equal */
	struct emu_event_snap snap;
};

struct emu_event {
	int refs;        /* fds referring to it (dup) */
	int maps;        /* user mappings of its ring buffer: the event lives until the last is unmapped */
	int user_read;   /* PERF_EVENT_FLAG_USER_READ_CNT: set once mapped (pmu_sbi_event_mapped), after the
	                  * mmap wrote the page; the page shows it from its next update */
	int fd;          /* the fd perf_event_open returned (a memfd); si_fd of its signals */
	pid_t owner_pid; /* process that opened it */
	struct perf_event_attr attr;
	uint64_t id;
	enum emu_ev_kind kind;
	uint64_t evmask;  /* model events counted (bit i = emu_model()->events[i]) */
	uint64_t sw_base; /* software events: the thread's accounting when counting (re)started */
	struct emu_thread *target;
	int cpu;
	struct emu_event *leader;     /* itself for a leader */
	struct emu_event *sibling;    /* next member of the leader's group */
	struct emu_event *next_group; /* next leader in the context's group list */
	struct emu_event *next_all;   /* every event of the process (prctl, fork) */
	struct emu_event *output;     /* PERF_EVENT_IOC_SET_OUTPUT / PERF_FLAG_FD_OUTPUT target, or NULL */
	int hw_idx;               /* counter while active: 0 cycle, 2 instret, 3.. mhpmcounterN; -1 none */
	uint64_t hw_raw;          /* the hardware counter's value (width bits) */
	int throttled;            /* perf_event_max_sample_rate reached in this tick */
	uint64_t tick_interrupts; /* overflows in the current tick */
	int pes_pending;          /* PES records drained to it by this drain: one signal, counted samples */
	int irq_pending;    /* virtual or exec clock: an overflow whose interrupt is not taken yet (skid) */
	uint64_t user_owed; /* exclude_kernel: overflows noticed in the kernel, taken back in the program */
	uint64_t irq_due;   /* thread cycle at which it is taken */
	uint64_t
	    overflow_pc; /* while an interval is accounted: the instruction of its first overflow, if known */
	uint64_t overflow_cycle; /* ... and the thread cycle it retired at */
	enum emu_ev_state state;
	uint64_t count; /* 64-bit perf count */
	/* the kernel's share (a count source's supervisor counts: exec): while the event is on and counts the
	 * kernel, its target's supervisor count of evmask when the share was last taken (perf_ctx.c) */
	int kernel_on;
	uint64_t kernel_mark;
	/* during a disable's entry: where the share stops if the disable turns the event off (its supervisor
	 * count at the entry's start, before the emulator accounts the window) */
	int kernel_capped;
	uint64_t kernel_cap;
	uint64_t time_enabled, time_running;
	/* sampling */
	uint64_t period;
	int64_t period_left;
	int event_limit;     /* IOC_REFRESH budget; 0 = unlimited */
	int limit_reached;   /* the budget ran out: off once the overflow is delivered (now) */
	uint64_t lost;       /* samples dropped since the last PERF_RECORD_LOST */
	uint64_t lost_total; /* all samples dropped (read_format PERF_FORMAT_LOST) */
	uint64_t wakeups;    /* ring buffer wakeups (poll) not yet consumed */
	uint64_t samples_since_wakeup;
	int hup; /* POLLHUP: the event's budget ended / target gone */
	/* ring buffer (our own mapping of the memfd the user maps too); head is ours, never read back */
	struct perf_event_mmap_page *page;
	size_t map_len;
	uint64_t data_size, data_head;
	int sideband_done; /* the COMM and MMAP2 records of what existed before the buffer were written */
	int paused; /* PERF_EVENT_IOC_PAUSE_OUTPUT: records are dropped and counted lost (rb->paused) */
	/* fcntl state mirrored from the user's calls */
	int async;
	int has_owner;  /* F_SETOWN / F_SETOWN_EX called */
	int owner_type; /* F_OWNER_TID / F_OWNER_PID / F_OWNER_PGRP */
	pid_t owner;
	int signo; /* F_SETSIG value, 0 = SIGIO */
	/* attr.inherit: a parent event reads its own count plus acc (its children's); a child's copy
	 * (inherited = 1, no fd) adds its count into the same acc when the child exits */
	struct emu_inherit_acc *acc;
	int inherited;
	struct emu_event_snap *snap; /* for forked children holding the fd */
	struct emu_remote_set *rset; /* another process's task: its children's copies (perf_remote.c) */
	int acc_local;               /* acc is the heap's (a CPU-wide event without inherit), not a mapping */
	struct emu_xsampler *xs; /* sampling another process's task: the shared description (perf_remote.c) */
	int shadow;              /* ... and this is the sampled task's copy, writing the owner's ring */
	int comm_exec;           /* the shadow was made at an exec: its COMM says so */
	uint64_t xs_published;   /* the shadow's count already added to xs->count */
	int xs_ring_block;       /* the shadow: the block of the buffer it writes (xs->ring_block) */
	uint64_t xs_gen;         /* the shadow: xs->gen when made (a block reused since is another event's) */
	uint64_t xs_period_gen, xs_reset_gen; /* the shadow: the owner's PERIOD and RESET it followed */
	struct emu_xfile *xfile; /* its fd was sent to another process: the values published there */
	/* a received fd's event (perf_adopt): its block and that block's generation then; once the block is
	 * no longer that event's (its owner ended, the block was claimed again) reads give the last values
	 * read */
	const struct emu_xfile *adopted;
	uint64_t adopted_gen;
};

/* The perf context of one task: every event that counts it. */
struct emu_ctx {
	struct emu_event *groups; /* leaders in scheduling order (rotated when multiplexing) */
	uint64_t last_cycles;     /* thread cycles up to which the events are accounted */
	uint64_t slice_end;       /* next rotation point when rotate_needed */
	uint64_t next_tick;       /* next scheduler tick (counters folded into the perf counts) */
	int rotate_needed;
	int nsampling_active; /* the thread's alarm: mach_clock.c, with its state in struct emu_thread */
};

#define for_each_group(ctx, g) for (struct emu_event *g = (ctx)->groups; g; g = g->next_group)
#define for_each_member(g, e)  for (struct emu_event *e = (g); e; e = e->sibling)

static inline int is_sampling(const struct emu_event *ev)
{
	return ev->attr.sample_period != 0; /* also sample_freq: same union */
}

/* A clock event (cpu-clock, task-clock): counts ns of the thread's cycles, not model events. */
static inline int is_clock(const struct emu_event *ev)
{
	return ev->kind == EK_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Where a sample taken inside the emulator is: time in the emulator stands for time in the kernel (a system
 * call on an event, an interposed call, the sampling alarm's own handling), so such a sample is a kernel
 * sample (PERF_RECORD_MISC_KERNEL) at this address, the start of the RV64 kernel's text (KERNEL_LINK_ADDR),
 * never a function of librvemu.so the user did not write. An event with exclude_kernel does not count in
 * the kernel: an overflow noticed there is taken at the next point in the program (the next alarm). */
#define EMU_IP_KERNEL 0xffffffff80000000ull

/* sysctl kernel.perf_event_max_stack and perf_event_max_contexts_per_stack at their defaults
 * (PERF_MAX_STACK_DEPTH, PERF_MAX_CONTEXTS_PER_STACK): the bounds of a PERF_SAMPLE_CALLCHAIN. */
#define EMU_MAX_STACK    127
#define EMU_MAX_CONTEXTS 8
/* The riscv PERF_REG set (arch/riscv/include/uapi/asm/perf_regs.h): pc, then x1..x31 by number. */
#define EMU_PERF_REGS 32
enum { EMU_REG_PC = 0, EMU_REG_RA = 1, EMU_REG_SP = 2, EMU_REG_S0 = 8 };

/* The program's registers where a sample was taken, in the riscv PERF_REG order. Built for riscv64 they are
 * the interrupted program's own (its signal ucontext); on another host only pc, sp and the frame pointer
 * (s0) are filled from the host's equivalents and the rest read 0. */
struct emu_uregs {
	uint64_t r[EMU_PERF_REGS];
};

/* perf_ctx.c */

void perf_fork_child_unlock(void);
extern pid_t emu_fork_parent_tid, emu_fork_parent_pid; /* perf_fork_prepare: the forking thread */
struct emu_ctx *emu_ctx_of(struct emu_thread *t);
void emu_ctx_sync(struct emu_thread *t, uint64_t now, uint64_t ip);
void emu_ctx_schedule(struct emu_thread *t);
void emu_ctx_schedule_out(struct emu_thread *t);
void emu_ctx_insert(struct emu_event *ev);
void emu_timer_rearm(struct emu_thread *t);
void emu_event_publish(struct emu_event *ev);
uint64_t emu_counter_now(const struct emu_event *e);
/* PERF_EVENT_IOC_RESET of an event that is on: its kernel's share starts again from now (perf_ctx.c). */
void emu_kernel_share_restart(struct emu_event *e);
/* A disable (or a late rotation) holds every kernel share at its entry's start (stop 1) and lets go (0). */
void emu_kernel_share_stop_here(struct emu_thread *t, int stop);
/* Where a PES record holds the counter an event is on (cycle, instret, mhpmcounter3..5), or -1. */
static inline int emu_pes_slot(int hw_idx)
{
	int k = hw_idx == 0 ? 0 : hw_idx == 2 ? 1 : hw_idx >= 3 ? hw_idx - 1 : -1;
	return k < RVEMU_PES_COUNTERS ? k : -1;
}
/* `v` cut to the width of the counter `ev` is on (programmable counters may be narrower than 64 bits). */
static inline uint64_t emu_width_mask(const struct emu_event *ev, uint64_t v)
{
	const struct rvemu_model *m = emu_model();
	unsigned w = ev->kind == EK_PROG && m->prog_width < 64 ? m->prog_width : 64;
	return w >= 64 ? v : v & ((1ull << w) - 1);
}

/* perf_pes.c: Precise Event Sampling. An overflow of a precise event on a PES core is a record, not an
 * interrupt; the kernel drains the task's buffer into the events' rings (read, ioctl, close, schedule). */
void emu_pes_flush(struct emu_thread *t);
void emu_pes_sample(struct emu_event *ev, uint64_t ip);

/* perf_throttle.c: perf_event_max_sample_rate per tick, shared by the overflow interrupt and the PES drain.
 * `samples` an interrupt cost the event (1, or a drain's records); 1 when this throttled it. */
int emu_account_interrupt(struct emu_event *ev, uint64_t samples);
void emu_throttle_tick(struct emu_ctx *ctx); /* a scheduler tick: interrupt counts restart, unthrottle */

/* perf_output.c: read_format values, the ring buffer and its records */
/* `at`: the values when that PES record was written (PERF_SAMPLE_READ of a PES sample), NULL for now. */
size_t emu_read_values(const struct emu_event *ev, const struct rvemu_pes_record *at, uint64_t *out,
                       size_t max_words);
int emu_ring_map(struct emu_event *ev, size_t len);
void emu_ring_unmap(struct emu_event *ev);
/* `pes`: the PES record this sample comes from (exact PC, counters at the sample), NULL otherwise. */
/* `regs`: the program's registers at the sample (CALLCHAIN, REGS_*, STACK_USER), NULL where there are none.
 */
void emu_sample_write(struct emu_event *ev, uint64_t ip, uint64_t time_ns, const struct rvemu_pes_record *pes,
                      const struct emu_uregs *regs);
void emu_sample_lost(struct emu_event *ev); /* a sample that could not be written, counted */
void emu_ring_write_throttle(struct emu_event *ev, int throttle, uint64_t time_ns);
void emu_ring_update_page(struct emu_event *ev);
/* Side-band records for a thread's events (callers hold the perf lock), and reading /proc/self/maps. */
void emu_sb_mmap(struct emu_thread *t, const struct perf_mmap_info *m);
void emu_sb_comm(struct emu_thread *t, const char *comm, int exec);
void emu_sb_fork(struct emu_thread *t, pid_t pid, pid_t tid);
void emu_sb_exit(struct emu_thread *t);
/* A FORK or EXIT record's fields: the body's tasks, then its sample_id's (the task the kernel would run while
 * writing it, its CPU) and the time. */
struct emu_task_record {
	uint32_t pid, ppid, tid, ptid;
	pid_t cur_pid, cur_tid;
	uint32_t cpu;
	uint64_t time;
};
void emu_sb_task_record(struct emu_event *ev, int fork, const struct emu_task_record *k);
void emu_sb_track(const struct emu_event *ev, int delta); /* events that want side-band records */
int emu_sb_wanted(void);
/* A shadow's writes into another process's buffer (perf_remote.c): the buffer's cross-process lock around a
 * write, and its count published for the owner. */
int emu_xring_begin(struct emu_event *rb); /* -1: the owner closed or disabled it, drop */
void emu_xring_end(struct emu_event *rb);
void emu_shadow_publish(struct emu_event *ev);
/* Whether the block a shadow was made of still describes its event (not closed, not claimed again). */
int emu_shadow_current(const struct emu_event *ev);
int emu_sb_existing_due(struct emu_event *ev);
void emu_sb_existing(struct emu_event *ev, const char *comm, char *maps);
char *emu_read_proc(const char *path, size_t *len); /* malloc'd, NUL-terminated; NULL if unreadable */
char *emu_next_maps_line(char *text, struct perf_mmap_info *m, int *exec);
uint64_t emu_event_time(struct emu_thread *t); /* the perf clock of a record's time */

/* An accounted software event's value (faults, switches) in the thread accounting `a` (perf_ctx.c). */
uint64_t emu_sw_value(const struct emu_event *ev, const struct emu_thread_acct *a);

/* perf_remote.c: events on a task of another process of the run (target->remote) */
int emu_remote_prepare(struct emu_event *ev); /* at open, under the lock: 0 or -errno */
void emu_remote_sync(struct emu_event *ev);   /* enable_on_exec, inherit copies, counts up to now */
void emu_remote_follow(struct emu_event *ev, unsigned long req); /* ENABLE/DISABLE/RESET to the copies */
void emu_remote_release(struct emu_event *ev);
void emu_remote_set_output(struct emu_event *ev); /* SET_OUTPUT / FD_OUTPUT: its ring is ev->output's */
/* The sampled side: the shadows' counts published (exec, exit). */
void emu_remote_shadows_publish(struct emu_thread *t);

/* perf_signal.c: overflow signals, sent when the perf lock is released. emu_unlock's second half: leaves the
 * emulated kernel and the re-entry guard, then sends what was queued. */
void emu_queue_signal(struct emu_event *ev, int code);
void emu_flush_signals_leaving(void);

#endif
