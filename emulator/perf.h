/* SPDX-License-Identifier: MIT */
/* The perf core: the kernel side of perf_event (kernel/events/core.c and the RISC-V PMU driver), on event
 * objects. It knows nothing of libc: the front ends turn file descriptors and libc calls into these
 * operations. Return values are 0 / a count, or -errno as the kernel's. */
#ifndef EMU_PERF_H
#define EMU_PERF_H
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mach.h"

struct emu_event;

/* The one lock of the perf core. emu_lock blocks every signal of the thread while it holds the lock (a
 * system call is atomic for the caller's signal handlers); emu_unlock sends the queued overflow signals
 * and restores the mask, so they and a sampling tick that arrived meanwhile are delivered then. */
void emu_lock(void);
void emu_unlock(void);

/* perf_event_open(2) on an fd the front end made (the event's file). group: the group_fd's event. */
int perf_open(const struct perf_event_attr *uattr, int pid, int cpu, struct emu_event *group,
              int group_fd_valid, unsigned long flags, int fd, struct emu_event **out);
ssize_t perf_read(struct emu_event *ev, void *buf, size_t len);
int perf_ioctl(struct emu_event *ev, unsigned long req, unsigned long arg);
int perf_mmap(struct emu_event *ev, size_t len, int flags, off_t off); /* checks and sets up the buffer */
void perf_mapped(struct emu_event *ev);                                /* a user mapping was made */
void perf_unmapped(struct emu_event *ev); /* ... and removed (the event may go away) */
short perf_poll(struct emu_event *ev);    /* revents now; 0 = wait */
void perf_get(struct emu_event *ev);      /* another fd refers to it (dup) */
void perf_put(struct emu_event *ev);      /* an fd referring to it was closed */
void perf_fcntl(struct emu_event *ev, int cmd, unsigned long arg); /* F_SETFL, F_SETOWN(_EX), F_SETSIG */
int perf_event_fd(const struct emu_event *ev);
/* PERF_EVENT_IOC_SET_OUTPUT: to_valid = 0 for fd -1; to = NULL for an fd that is not an event. */
int perf_set_output(struct emu_event *ev, struct emu_event *to, int to_valid);
/* prctl(PR_TASK_PERF_EVENTS_ENABLE / _DISABLE): every event the calling process opened. */
void perf_task_events_enable(int on);

/* fork and exit (attr.inherit, and the state a forked child sees through its fds) */
void perf_fork_prepare(void);
void perf_fork_parent(void);
void perf_fork_child(void);
void perf_exit_flush(void); /* exit, _exit, exec: inherited counts go to the parent's events */
/* Load time (forked_by 0: after exec), fork or thread start (forked_by: the tid of the thread that created
 * it, forked_by_pid its process at fork time: the FORK record's ppid), or later (-1): the run's events on
 * other processes that sample this task (perf record -- cmd) get their shadows in its context
 * (perf_remote.c). Cheap when there are none. */
void perf_remote_attach_self(pid_t forked_by, pid_t forked_by_pid);
void perf_remote_poll_self(void); /* the same, if such an event was opened since the last look */
/* SIGCHLD is delivered to the program (outside the emulator): the EXIT records of the run's tasks killed
 * meanwhile, before the program's handler learns of it. */
void perf_remote_child_exited(void);
/* The EXIT record of the task of `slot`, whose claim the caller took, from what the run's table holds of it
 * (its thread of this process may be gone: a sibling that ended while exit_group claimed it), into every
 * event of the run that reaches it. `self`: the calling thread. Under the perf lock. */
void perf_remote_exit_slot(struct emu_thread *self, int slot);
/* SCM_RIGHTS: an event's fd is sent to another process (perf_share: its values are published in the run's
 * shared memory from now on), and a received fd (perf_adopt: 0 and *out for an event of the run, which
 * reads what its owner publishes; -1 for any other fd). */
void perf_share(struct emu_event *ev);
int perf_adopt(int fd, struct emu_event **out);
/* exec: the calling thread's counting events whose fds survive exec (no FD_CLOEXEC; singletons, not
 * sampling) are handed to the new image (perf_exec_handoff before the exec, perf_exec_failed when it
 * returned); the new image takes them one by one (perf_exec_next: 0 with the fd, the attr to open it with
 * and a handle, -1 when none is left) and gives each opened event its values (perf_exec_restore; with a NULL
 * event the handle is just dropped). */
void perf_exec_handoff(void);
void perf_exec_failed(void);
int perf_exec_next(int *fd, int *cpu, struct perf_event_attr *attr, void **handle);
void perf_exec_restore(struct emu_event *ev, void *handle);
/* The new image, once it took its events: every block of the run's shared memory still owned by this pid is
 * the old image's (its sampling events, fds it sent, events not taken) and is released. */
void perf_exec_done(void);

/* Side-band records (attr.comm / mmap / mmap2 / task) for the events of the calling thread's context, as
 * perf_event_comm, perf_event_mmap and perf_event_task write them; the front end reports what happened. */
struct perf_mmap_info {
	uint64_t addr, len, pgoff, ino, ino_generation;
	uint32_t maj, min, prot, flags;
	const char *filename; /* "//anon" for an anonymous mapping */
};
/* A mapping was made: executable ones go to attr.mmap / mmap2 events, others to attr.mmap_data ones. */
void perf_record_mmap(const struct perf_mmap_info *m);
void perf_record_comm(const char *comm, int exec); /* the thread's name changed (prctl PR_SET_NAME) */
/* Thread parent_tid of this process created a task (a thread: pid = getpid(); a process: pid = tid, and
 * fork_seq the run-wide number of its fork, emu_run_fork_seq() read right after fork(); a thread: 0). */
void perf_record_fork(pid_t parent_tid, pid_t pid, pid_t tid, uint64_t fork_seq);
/* The executable mappings of the file (dev, ino) now in /proc/self/maps were made (dlopen). */
void perf_record_mmaps_of(uint32_t maj, uint32_t min, uint64_t ino);
/* The mappings now in /proc/self/maps that overlap [lo, hi) changed (mprotect: perf_event_mmap per vma). */
void perf_record_mmaps_in(uint64_t lo, uint64_t hi);
int perf_mmap_records_wanted(void);  /* whether any event may want a mapping's record (cheap) */
void perf_record_exit(void);         /* the calling thread exits */
void perf_record_process_exit(void); /* the process exits (exit_group): its other threads too */

/* The control API's operations on the calling thread. */
void perf_advance_self(uint64_t cycles, uint64_t ip); /* virtual clock */
void perf_inject_self(size_t ev, uint64_t n, uint64_t ip);

/* User-space counter reads (seam 2): the value of counter CSR `csr` (0xC00 + n) as the calling thread
 * would read it, or -EPERM where the kernel's scounteren would make the read trap. */
int perf_user_counter_read(unsigned csr, uint64_t *value);

#endif
