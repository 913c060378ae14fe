/* SPDX-License-Identifier: MIT */
/* Private interface between the emulator core's own files (emu_main.c, emu_proc.c, emu_perf.c,
 * emu_sample.c). The interface shared with the counter-bank models is emu_core.h. */
#ifndef EMU_PRIV_H
#define EMU_PRIV_H
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "emu_core.h"

/* Only the interposed libc entry points and the rvemu_* / rvhw_* API leave the library. */
#define EMU_EXPORT __attribute__((visibility("default")))
#define EMU_HIDDEN __attribute__((visibility("hidden")))

/* The libc functions we interpose, resolved lazily with dlsym(RTLD_NEXT): the first call may come from
 * another library's constructor, before ours ran. */
#define EMU_REAL(fn) ((__typeof__(emu_real_##fn))emu_resolve((void **)&emu_real_##fn, #fn))
EMU_HIDDEN void *emu_dlsym_next(const char *name);
static inline void *emu_resolve(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		p = emu_dlsym_next(name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}
extern EMU_HIDDEN ssize_t (*emu_real_read)(int, void *, size_t);
extern EMU_HIDDEN int (*emu_real_close)(int);
extern EMU_HIDDEN int (*emu_real_ioctl)(int, unsigned long, ...);
extern EMU_HIDDEN int (*emu_real_fcntl)(int, int, ...);
extern EMU_HIDDEN int (*emu_real_fcntl64)(int, int, ...);
extern EMU_HIDDEN void *(*emu_real_mmap)(void *, size_t, int, int, int, off_t);
extern EMU_HIDDEN int (*emu_real_munmap)(void *, size_t);
extern EMU_HIDDEN long (*emu_real_syscall)(long, ...);
extern EMU_HIDDEN int (*emu_real_dup)(int);
extern EMU_HIDDEN int (*emu_real_dup2)(int, int);
extern EMU_HIDDEN int (*emu_real_dup3)(int, int, int);

/* One-time setup (model from the environment); every entry point calls it first. */
EMU_HIDDEN void emu_init(void);
EMU_HIDDEN int emu_sscofpmf(void);          /* overflow interrupts and privilege filtering available */
EMU_HIDDEN uint64_t emu_mux_cycles(void);   /* multiplexing rotation interval in cycles */
EMU_HIDDEN uint64_t emu_read_advance(void); /* RVEMU_READ_ADVANCE cycles per event read(), 0 = off */
/* Virtual clock: the calling thread runs `cycles` more cycles (overflows get `ip`). */
EMU_HIDDEN void emu_advance_self(uint64_t cycles, uint64_t ip);
EMU_HIDDEN uint64_t emu_cycles_to_ns(uint64_t cycles);
EMU_HIDDEN uint64_t emu_ns_to_cycles(uint64_t ns);
EMU_HIDDEN int emu_model_event_index(const char *name); /* index in emu_model()->events, or -1 */
/* mhpmevent value -> set of model event indices it counts; 0 or -ENOENT for an undefined encoding. */
EMU_HIDDEN int emu_decode_raw(uint64_t config, uint64_t *evmask);

/* ------------------------------------------------------------------------------------ perf events */
enum emu_ev_state { EV_ERROR = -2, EV_OFF = -1, EV_INACTIVE = 0, EV_ACTIVE = 1 }; /* kernel order */
enum emu_ev_kind { EK_CYCLES, EK_INSTRET, EK_PROG, EK_TASK_CLOCK };

struct emu_thread;

/* attr.inherit: what forked children counted, in memory shared with them (MAP_SHARED, inherited by fork). */
struct emu_inherit_acc {
	uint64_t count, time_enabled, time_running;
};

struct emu_event {
	int refs; /* fds referring to it (dup) */
	int fd;   /* the fd perf_event_open returned (a memfd) */
	struct perf_event_attr attr;
	uint64_t id;
	enum emu_ev_kind kind;
	uint64_t evmask; /* model events counted (bit i = emu_model()->events[i]) */
	struct emu_thread *target;
	int cpu;
	struct emu_event *leader;     /* itself for a leader */
	struct emu_event *sibling;    /* next member of the leader's group */
	struct emu_event *next_group; /* next leader in the context's group list */
	enum emu_ev_state state;
	uint64_t count; /* 64-bit perf count */
	uint64_t time_enabled, time_running;
	/* sampling */
	uint64_t period;
	int64_t period_left;
	int event_limit;     /* IOC_REFRESH budget; 0 = unlimited */
	uint64_t lost;       /* samples dropped since the last PERF_RECORD_LOST */
	uint64_t lost_total; /* all samples dropped (read_format PERF_FORMAT_LOST) */
	uint64_t samples_since_wakeup;
	/* ring buffer (our own mapping of the memfd the user maps too) */
	struct perf_event_mmap_page *page;
	size_t map_len;
	uint64_t data_size;
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
};

/* The perf context of one thread ("task"): every event that counts it. */
struct emu_ctx {
	struct emu_event *groups; /* leaders in scheduling order (rotated when multiplexing) */
	uint64_t last_cycles;     /* thread cycles up to which the events are accounted */
	uint64_t slice_end;       /* next rotation point when rotate_needed */
	int rotate_needed;
	int nsampling_active;
};

struct emu_thread {
	pid_t tid;
	unsigned hart;
	uint64_t vcycles;     /* virtual clock (atomic access) */
	uint64_t last_cycles; /* last value seen, kept when the thread has exited */
	uint64_t *injected;   /* per model event */
	struct emu_ctx ctx;
	int has_timer;
	timer_t timer;
	volatile sig_atomic_t tick_pending;
	uint64_t tick_ip;
	struct emu_thread *next;
};

EMU_HIDDEN struct emu_thread *emu_thread_self(void);
EMU_HIDDEN struct emu_thread *emu_thread_by_tid(pid_t tid); /* creates the record; NULL if not ours */
EMU_HIDDEN uint64_t emu_cycles_of(struct emu_thread *t);
EMU_HIDDEN pid_t emu_gettid(void);

/* The one lock of the perf layer. emu_lock marks the thread as inside the emulator so the sampling
 * timer's handler defers instead of deadlocking; emu_unlock sends the signals queued meanwhile. */
EMU_HIDDEN void emu_lock(void);
EMU_HIDDEN void emu_unlock(void);
EMU_HIDDEN int emu_in_emulator(void);

/* perf layer (emu_perf.c) */
EMU_HIDDEN struct emu_event *emu_event_of_fd(int fd);
EMU_HIDDEN void emu_ctx_sync(struct emu_thread *t, uint64_t now, uint64_t ip);
/* fork: copy the parent thread's inherit events into the child's context; exit: hand their counts over. */
EMU_HIDDEN void emu_inherit_fork_child(struct emu_thread *parent, struct emu_thread *child);
EMU_HIDDEN void emu_inherit_flush(struct emu_thread *t);
EMU_HIDDEN void emu_ctx_inject(struct emu_thread *t, int evidx, uint64_t n, uint64_t ip);
EMU_HIDDEN size_t emu_read_values(struct emu_event *ev, uint64_t *out, size_t max_words);

/* sampling (emu_sample.c) */
EMU_HIDDEN int emu_ring_map(struct emu_event *ev, size_t len);
EMU_HIDDEN void emu_ring_unmap(struct emu_event *ev);
EMU_HIDDEN void emu_sample_write(struct emu_event *ev, uint64_t ip);
/* Overflow of a sampling event: sample, event_limit, signal (queued until emu_unlock). */
EMU_HIDDEN void emu_overflow(struct emu_event *ev, uint64_t ip);
EMU_HIDDEN void emu_queue_signal(struct emu_event *ev, int code);
EMU_HIDDEN void emu_flush_signals(void);
EMU_HIDDEN void emu_timer_rearm(struct emu_thread *t);
EMU_HIDDEN uint64_t emu_sample_time(struct emu_thread *t);

#endif
