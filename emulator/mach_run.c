// SPDX-License-Identifier: MIT
/* The run: one emulated machine shared by every process of one rvemu-run (forked, exec'd, spawned by perf).
 *
 * The first process of a run (rvemu-run starts a fresh one) creates a table of tasks in shared memory, a file
 * in /dev/shm named by RVEMU_RUN_SHM, which every child inherits through its environment. Each process
 * registers its threads there (a slot per task: tid, pid, the task that created it, when) and publishes each
 * thread's clock as its own emulator computes it: the virtual cycles it advanced, the CPU time it spent in
 * the emulator (the emulated kernel's, left out of its cycles), the cycles it last saw; a task that exits
 * leaves its final cycles. Another process then computes the task's counts with the same count source: with
 * the virtual clock exactly what the owner computes; with the CPU-time clock from the task's CPU time, which
 * the kernel shows any process in /proc/<pid>/task/<tid>/schedstat. A task's slot survives exec (same tid,
 * pid and parent process): its clock goes on and the exec is counted (enable_on_exec).
 *
 * The table is not a security boundary (mode 0666, so a process of the run that changed its uid can still
 * register); who may count whom is decided by perf_event_open's rules (emu_run_task_open: ptrace access).
 * A process whose configuration (model, clock, harts, count source) differs from its run's starts its own.
 * Nothing waits on another process for long: the one lock is held for a few stores, and a holder that died
 * is detected and the lock taken over. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mach.h"
#include "mach_priv.h"

#define RUN_MAGIC  "rvemu-run v7"
#define RUN_DIR    "/dev/shm/"
#define RUN_PREFIX "rvemu-run."
/* A table's name after the prefix: "v7-<creator pid>.<hex>". Earlier versions named it "<pid>.<hex>" and
 * removed any whose pid was gone, a daemon's run among them: the version keeps their sweep off these names.
 */
#define RUN_NAME_VERSION "v7-"
#define RUN_ENV          "RVEMU_RUN_SHM"
enum { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_EXITED = 2 };
enum { EXIT_NONE = 0, EXIT_CLAIMED = 1, EXIT_SELF = 2, EXIT_WRITTEN = 3 };

/* One task, in shared memory: written by its own process, read by the others (relaxed atomics: each field
 * is a value on its own; `cycles` is monotonic). */
struct emu_run_task {
	int32_t state;           /* SLOT_* */
	int32_t tid, pid, ppid;  /* ppid: the parent process when the slot was made (exec matching); a fork
	                          * child's: its parent at fork time, as copy_process records it */
	int32_t parent;          /* slot of the task that created it (fork, pthread_create), -1 unknown */
	int32_t hart;            /* the CPU it runs on (no migration is modelled), dealt out run-wide */
	uint64_t born;           /* the run's sequence number when the slot was made */
	uint64_t start;          /* its process's start time (/proc/<pid>/stat field 22, clock ticks since
	                          * boot; 0 unknown): the process, not a later one that got its pid */
	uint64_t fork_seq;       /* the run-wide number of the fork() that made it, 0 none: a pid is reused
	                          * once its process is reaped, the fork that made a task is its own */
	uint64_t exec_gen;       /* execs of this task so far */
	uint64_t exec_cycles[8]; /* its cycles at exec n (n % 8): a reader acts on the first it missed */
	uint64_t vcycles;        /* virtual clock */
	uint64_t kernel_ns;      /* CPU time in the emulator: not the task's cycles */
	uint64_t kernel_since;   /* its CPU time when it entered the emulator, 0 outside */
	uint64_t cycles;         /* cycles last seen (final once exited) */
	uint64_t acct[4];      /* at exit: minflt, majflt, nvcsw, nivcsw (software events once it is gone) */
	uint64_t exec_acct[4]; /* the same at its latest exec (enable_on_exec of software events) */
	int32_t acct_valid;
	/* its PERF_RECORD_EXIT is someone's (EXIT_*): its own exit path's while it writes it (EXIT_SELF, then
	 * EXIT_WRITTEN), or another process's that found it killed (EXIT_CLAIMED, emu_run_task_claim_exit):
	 * a compare-and-swap, so written once, by one; a task killed inside its own exit path (between its
	 * claim and its record) left EXIT_SELF, which the first to see it gone takes over */
	int32_t exit_claimed;
	/* 1: the task's process is in the run (it registered, or its parent did at fork: it maps the table);
	 * 0: registered by a process counting it (emu_run_task_open), perhaps not running the emulator at all
	 * (perf stat -p 1): such a slot does not keep the run's table (run_in_use) until its process takes it
	 */
	int32_t member;
};

struct emu_run_shared {
	char magic[16];
	char config[112]; /* the machine: processes of other configurations start their own run */
	uint64_t lock;    /* the holder (lock_word): 0 free */
	uint32_t used;    /* slots handed out */
	uint32_t next_hart;
	uint64_t seq;
	uint64_t forks;         /* fork() calls of the run's processes so far (a slot's fork_seq) */
	uint64_t blocks_gen;    /* blocks claimed so far: a process looks at them again when it moved */
	int32_t creator_pid;    /* the process that made it (its name's pid) */
	uint64_t creator_start; /* and that process's start (process_start; 0 unknown): not a later one's */
	struct emu_run_task task[EMU_RUN_TASKS];
	/* the perf core's state shared across processes (an event sampling a task of another process), opaque
	 * here; the first int32 of a block is its owner's pid, 0 free */
	unsigned char block[EMU_RUN_BLOCKS][EMU_RUN_BLOCK_BYTES] __attribute__((aligned(64)));
};

static struct emu_run_shared *run;
static int run_created; /* this process made it (and removes its name at exit) */
static char run_name[96];
static pid_t run_owner_pid;       /* the process that mapped it (a fork child re-checks) */
static pid_t self_pid;            /* getpid(), kept current at fork (getpid is a system call) */
static __thread int my_slot = -1; /* the calling thread's slot */
/* The run-wide number of the last fork() of the calling thread (taken in the prepare handler, so the child,
 * a copy of this thread, knows it too): a child is the slot its own fork made, not a slot of an older child
 * whose pid it got after that one was reaped. */
static __thread uint64_t my_fork_seq;
/* Test hook (emu_run_set_fork_gate): a fork child reads a byte from this descriptor before it registers. Only
 * the read end is given here, so the gated child inherits the caller's write end too and is not closed here:
 * its read never sees EOF while it holds that end, so a caller that dies without writing leaves it held
 * (until killed). The caller (a test) writes the byte on every path, and its children are reaped. */
static int fork_gate = -1;
/* Test hook (emu_run_set_fork_gate_in_lock): the same, read while the child holds the run table's lock, after
 * it wrote a byte to fork_locked_ready (so a test can kill a holder inside the section). */
static int fork_locked_gate = -1, fork_locked_ready = -1;
/* Test hook (emu_run_set_exit_gate): this process's next task to claim its own EXIT writes a byte to
 * exit_ready, then reads one from exit_gate (a test kills it there: inside its exit path, its EXIT claimed
 * and not yet written). */
static int exit_gate = -1, exit_ready = -1;

/* Proxies: this process's view of other processes' tasks (struct emu_thread with pid != getpid()). */
static struct emu_thread *proxies;
static pthread_mutex_t proxies_lock = PTHREAD_MUTEX_INITIALIZER;

/* The table's slots in use, as any process of the run may have written it: never past the table. */
static uint32_t run_used(void)
{
	uint32_t n = __atomic_load_n(&run->used, __ATOMIC_ACQUIRE);
	return n < EMU_RUN_TASKS ? n : EMU_RUN_TASKS;
}

/* -------------------------------------------------------------------------------------------- lock */
static int read_proc(const char *path, char *buf, size_t len);

/* Paths of /proc made with no stdio: they are made in the SIGCHLD path too (perf_remote_child_exited), on
 * the program's signal stack. */
static char *put_int(char *p, int v)
{
	char digits[12];
	unsigned n = 0, u = v > 0 ? (unsigned)v : 0;
	do
		digits[n++] = (char)('0' + u % 10);
	while ((u /= 10) && n < sizeof(digits));
	while (n)
		*p++ = digits[--n];
	return p;
}

const char *emu_proc_path(char out[64], pid_t pid, const char *dir, int n, const char *rest)
{
	char *p = out, *end = out + 63;
	for (const char *s = "/proc/"; *s; s++)
		*p++ = *s;
	p = put_int(p, (int)pid);
	if (dir) {
		*p++ = '/';
		while (*dir && p < out + 40)
			*p++ = *dir++;
		*p++ = '/';
		p = put_int(p, n);
	}
	if (*rest)
		*p++ = '/';
	while (*rest && p < end)
		*p++ = *rest++;
	*p = 0;
	return out;
}

/* "/proc/<pid>/<rest>", or "/proc/<pid>/task/<tid>/<rest>" when tid > 0 */
static const char *proc_path(char out[64], pid_t pid, pid_t tid, const char *rest)
{
	return emu_proc_path(out, pid, tid > 0 ? "task" : NULL, (int)tid, rest);
}

/* After a failed read_proc: whether it said nothing of the process (this process out of descriptors or
 * memory, or not allowed: hidepid), rather than that it is gone. */
static int proc_not_known(void)
{
	return errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == EACCES || errno == EPERM;
}

/* A holder that can never release the lock: gone, or a zombie (killed, not yet reaped: kill(pid, 0) still
 * succeeds, and the process that would reap it may be the one spinning here). A main thread that called
 * pthread_exit while other threads run shows Z in /proc/<pid>/stat too: the process is a zombie only when
 * that thread is its last one (/proc/<pid>/status: "Threads: 1"). */
static int process_dead(pid_t pid)
{
	int saved = errno; /* called on the program's error paths too: its errno stays */
	int dead;
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		dead = 1;
	} else {
		char path[64], buf[1536];
		proc_path(path, pid, 0, "stat");
		errno = 0;
		if (read_proc(path, buf, sizeof(buf)) != 0) {
			dead = !proc_not_known(); /* gone, unless not known: kill found it */
		} else {
			const char *p = strrchr(buf, ')');
			dead = p && (p[2] == 'Z' || p[2] == 'X');
			proc_path(path, pid, 0, "status");
			if (dead && p[2] == 'Z' && read_proc(path, buf, sizeof(buf)) == 0) {
				const char *t = strstr(buf, "\nThreads:");
				dead = !t || strtol(t + strlen("\nThreads:"), NULL, 10) <= 1;
			}
		}
	}
	errno = saved;
	return dead;
}

/* A task's start time in clock ticks since boot (field 22 of /proc/<pid>/task/<tid>/stat; a process's is its
 * main thread's, which exec keeps), 0 when it cannot be read (gone). The task path, which qemu-user passes
 * through for every process: it serves its own /proc/self/stat and /proc/<own pid>/stat, with another start
 * time. */
static uint64_t task_start(pid_t pid, pid_t tid)
{
	int saved = errno;
	/* up to field 22 a stat line is ~300 bytes at most (a 15-byte comm, 19 numbers): 512 is room, on a
	 * small signal stack too (the SIGCHLD path) */
	char path[64], buf[512];
	proc_path(path, pid, tid, "stat");
	uint64_t start = 0;
	const char *p = read_proc(path, buf, sizeof(buf)) == 0 ? strrchr(buf, ')') : NULL;
	for (int field = 2; p && *p && field < 22; p++) /* after "(comm)": field 3 is the state */
		if (*p == ' ')
			field++;
	if (p && *p)
		start = strtoull(p, NULL, 10);
	errno = saved;
	return start;
}

static uint64_t process_start(pid_t pid)
{
	return task_start(pid, pid);
}

uint64_t emu_thread_start_ticks(pid_t tid)
{
	return task_start(getpid(), tid);
}

/* Whether the process of a slot is gone: dead, or its pid now another process's (a later start). */
static int slot_process_dead(const struct emu_run_task *s)
{
	if (process_dead(s->pid))
		return 1;
	/* both known: a start not read (EMFILE, hidepid) must not call a live process dead */
	uint64_t start = __atomic_load_n(&s->start, __ATOMIC_RELAXED),
	         now = start ? process_start(s->pid) : 0;
	return start && now && now != start;
}

/* Whether the task of a slot is gone (killed, or exited without a word): its own thread, not its process
 * (a worker runs on after its main thread called pthread_exit; a main thread is gone with its process). */
static int task_gone(const struct emu_run_task *s)
{
	if (s->tid == s->pid)
		return slot_process_dead(s);
	int saved = errno;
	int gone = tgkill(s->pid, s->tid, 0) != 0 && errno == ESRCH;
	if (!gone) {
		char path[64], buf[512];
		proc_path(path, s->pid, s->tid, "stat");
		errno = 0;
		int r = read_proc(path, buf, sizeof(buf));
		const char *p = r == 0 ? strrchr(buf, ')') : NULL;
		gone = r == 0 ? !p || p[2] == 'Z' || p[2] == 'X' : !proc_not_known();
	}
	errno = saved;
	return gone;
}

/* This process's start time, read once by run_init (under its pthread_once) or by fork_child (the child's one
 * thread): every other thread reads it after that, none writes it. */
static uint64_t self_start;

/* A process's start time, this process's as read once. */
static uint64_t start_of(pid_t pid)
{
	return pid == self_pid && self_start ? self_start : process_start(pid);
}

/* The run table's lock word names its holder by pid and by its process's start (the low 32 bits of field 22,
 * clock ticks since boot; 0 unknown): a holder killed inside the section whose pid a new process got before
 * anyone took the lock over is told from that process by its start, as a slot is (slot_process_dead). */
static uint64_t lock_word(pid_t pid)
{
	return (uint64_t)(uint32_t)pid | (uint64_t)(uint32_t)start_of(pid) << 32;
}

/* Whether the holder a lock word names can never release it: its process dead, or its pid now a later
 * process's (both starts known: a start not read is never taken for another process's). */
static int lock_holder_gone(uint64_t holder)
{
	pid_t pid = (pid_t)(uint32_t)holder;
	uint32_t start = (uint32_t)(holder >> 32);
	if (process_dead(pid))
		return 1;
	uint32_t now = start ? (uint32_t)process_start(pid) : 0;
	return start && now && now != start;
}

/* The lock is held with every signal blocked: a handler that registers its thread (a first emulator call in a
 * signal handler) must not find it held by the code it interrupted. */
static __thread sigset_t run_lock_mask;
/* the word this thread holds the lock as: run_unlock releases that one (a start read again could differ) */
static __thread uint64_t run_lock_word;

/* Said once per process on stderr when a wait for the lock is long (a stopped holder, one that never gives
 * it back): who holds it. No stdio: the SIGCHLD path takes the lock too. */
static void run_lock_wait_said(uint64_t holder)
{
	static int said;
	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	char msg[160], *p = msg;
	for (const char *t = "librvemu: waiting for the run's lock, held by pid "; *t; t++)
		*p++ = *t;
	p = put_int(p, (int)(uint32_t)holder);
	for (const char *t = " (a stopped holder goes on when continued)\n"; *t; t++)
		*p++ = *t;
	ssize_t w = EMU_REAL(write)(2, msg, (size_t)(p - msg));
	(void)w;
}

static void run_lock(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &run_lock_mask);
	uint64_t me = lock_word(getpid());
	run_lock_word = me;
	for (unsigned spins = 0;; spins++) {
		uint64_t holder = 0;
		if (__atomic_compare_exchange_n(&run->lock, &holder, me, 0, __ATOMIC_ACQUIRE,
		                                __ATOMIC_RELAXED))
			return;
		/* a holder that died (killed between two stores) never releases it: take it over, also once
		 * its pid is a new process's. A stopped holder (SIGSTOP, a debugger) is waited for: it is
		 * inside the section and will finish it. Left: a pid reused within the dead holder's clock
		 * tick (ns_last_pid, clone3's set_tid, or a wrap of a small pid_max: rare) looks like the
		 * holder, waited for as long as it lives. */
		if (spins % 64 == 63 && holder != me && lock_holder_gone(holder))
			__atomic_compare_exchange_n(&run->lock, &holder, 0, 0, __ATOMIC_RELAXED,
			                            __ATOMIC_RELAXED);
		if (spins < 4096) {
			sched_yield(); /* held for a few stores: the holder is about to give it back */
		} else {
			/* a long hold: wait without burning a CPU the holder may need, and say whose it is */
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
			if (spins == 4096 + 10000) /* about 10 s of 1 ms sleeps */
				run_lock_wait_said(holder);
		}
	}
}

static void run_unlock(void)
{
	uint64_t me = run_lock_word;
	/* only our own hold is released (a holder taken over for dead must not free its successor's) */
	__atomic_compare_exchange_n(&run->lock, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	emu_sigmask(SIG_SETMASK, &run_lock_mask);
}

/* ---------------------------------------------------------------------------------- create, join */
static void config_key(char *buf, size_t len)
{
	const struct emu_config *c = emu_cfg();
	snprintf(buf, len, "%s clock=%s harts=%u source=%s", c->model->model,
	         c->clock_virtual ? "virtual" : "cputime", c->harts, emu_count_source()->name);
}

static struct emu_run_shared *map_run(int fd)
{
	void *p =
	    EMU_REAL(mmap)(NULL, sizeof(struct emu_run_shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EMU_REAL(close)(fd);
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

/* A new table's magic, written once the rest of its header is (config, creator): its first byte last, with a
 * release store, so that a process that sees the whole magic (run_magic_valid) sees that header too. Before,
 * a plain copy could be seen before the creator's pid: the table of a run still being made looked like one
 * whose creator was gone, and another run's creator removed it. */
static void run_magic_publish(struct emu_run_shared *r)
{
	memcpy(r->magic + 1, RUN_MAGIC + 1, sizeof(RUN_MAGIC) - 1);
	__atomic_store_n(&r->magic[0], RUN_MAGIC[0], __ATOMIC_RELEASE);
}

/* Whether a table is one of this version, its header written (the first byte of the magic acquired, as
 * run_magic_publish released it). */
static int run_magic_valid(const struct emu_run_shared *r)
{
	return __atomic_load_n(&r->magic[0], __ATOMIC_ACQUIRE) == RUN_MAGIC[0] &&
	       memcmp(r->magic + 1, RUN_MAGIC + 1, sizeof(RUN_MAGIC) - 1) == 0;
}

/* Another run's table, to look at (remove_stale_runs): NULL when it cannot be mapped. Closes fd. */
static const struct emu_run_shared *map_run_readonly(int fd)
{
	void *p = EMU_REAL(mmap)(NULL, sizeof(struct emu_run_shared), PROT_READ, MAP_SHARED, fd, 0);
	EMU_REAL(close)(fd);
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

static struct emu_run_shared *join_run(const char *name, const char *key)
{
	char path[sizeof(RUN_DIR) + 96];
	if (strchr(name, '/') || strlen(name) >= sizeof(run_name))
		return NULL;
	snprintf(path, sizeof(path), "%s%s", RUN_DIR, name);
	int fd = EMU_REAL(open)(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size != sizeof(struct emu_run_shared)) {
		EMU_REAL(close)(fd);
		return NULL;
	}
	struct emu_run_shared *r = map_run(fd);
	if (r && (!run_magic_valid(r) || strcmp(r->config, key) != 0)) {
		EMU_REAL(munmap)(r, sizeof(*r));
		return NULL;
	}
	if (r)
		snprintf(run_name, sizeof(run_name), "%s", name);
	return r;
}

/* ------------------------------------------------------------------------------------ stale runs */
/* The pid a run's name carries (its creator's), 0 when the name is not a run's. */
static pid_t run_name_pid(const char *name)
{
	int pid;
	if (strncmp(name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
		return 0;
	const char *rest = name + strlen(RUN_PREFIX);
	if (!strncmp(rest, RUN_NAME_VERSION, strlen(RUN_NAME_VERSION)))
		rest += strlen(RUN_NAME_VERSION);
	if (sscanf(rest, "%d.", &pid) != 1 || pid <= 0)
		return 0;
	return (pid_t)pid;
}

/* Whether the process that made a run is gone: dead, or its pid now a later process's (both starts known).
 * No creator pid in the table (0: a table of a build that did not write it, or one whose creator has not yet)
 * says nothing: the process the file is named for decides, as for a table this version cannot read. */
static int run_creator_gone(const struct emu_run_shared *r, pid_t name_pid)
{
	pid_t pid = (pid_t)__atomic_load_n(&r->creator_pid, __ATOMIC_RELAXED);
	uint64_t start = __atomic_load_n(&r->creator_start, __ATOMIC_RELAXED);
	if (pid <= 0)
		return name_pid > 0 && process_dead(name_pid);
	if (process_dead(pid))
		return 1;
	uint64_t now = start ? process_start(pid) : 0;
	return start && now && now != start;
}

/* Whether a process of a run other than `except` still lives: a LIVE slot of a member whose process is alive,
 * told by its pid and start (a slot killed without its EXIT stays LIVE). A process that found the table full
 * has no slot and is not seen (new_slot said so): it is already outside the run's view of its tasks, and
 * keeping the name for it would keep every full table for ever. */
static int run_in_use(const struct emu_run_shared *r, pid_t except)
{
	uint32_t n = __atomic_load_n(&r->used, __ATOMIC_ACQUIRE);
	if (n > EMU_RUN_TASKS)
		n = EMU_RUN_TASKS;
	for (uint32_t i = 0; i < n; i++) {
		const struct emu_run_task *s = &r->task[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_LIVE || s->pid <= 0 ||
		    s->pid == except || !__atomic_load_n(&s->member, __ATOMIC_ACQUIRE))
			continue;
		if (!slot_process_dead(s))
			return 1;
	}
	return 0;
}

/* Whether the run table at `path` (named for the process `name_pid`) is no one's any more: its creator is
 * gone and no process of the run lives. A file this version cannot read (another build's table, or one being
 * made) goes by its name's process alone, as the tables of earlier versions always did. */
static int run_file_stale(const char *path, pid_t name_pid)
{
	int fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size != sizeof(struct emu_run_shared)) {
		EMU_REAL(close)(fd);
		return process_dead(name_pid);
	}
	const struct emu_run_shared *r = map_run_readonly(fd);
	if (!r)
		return 0;
	int stale =
	    !run_magic_valid(r) ? process_dead(name_pid) : run_creator_gone(r, name_pid) && !run_in_use(r, 0);
	EMU_REAL(munmap)((void *)r, sizeof(*r));
	return stale;
}

/* Runs no one uses any more are removed by the next run's creator, so that leftovers do not pile up in
 * /dev/shm: a run whose creator was killed (SIGKILL leaves it no exit path), or ended while another process
 * of the run lived on, goes once no process of it lives. The creator is told by its pid and start, so a later
 * process that got its pid keeps no table; a process of the run that outlives its creator (a daemon it
 * started) keeps the name, by which its execs and spawns join the run. */
static void remove_stale_runs(void)
{
	DIR *d = EMU_REAL(opendir)(RUN_DIR);
	if (!d)
		return;
	struct dirent *e;
	while ((e = EMU_REAL(readdir)(d))) {
		pid_t pid = run_name_pid(e->d_name);
		if (!pid)
			continue;
		char path[sizeof(RUN_DIR) + 256];
		snprintf(path, sizeof(path), "%s%s", RUN_DIR, e->d_name);
		if (run_file_stale(path, pid))
			unlink(path);
	}
	EMU_REAL(closedir)(d);
}

static struct emu_run_shared *create_run(const char *key)
{
	remove_stale_runs();
	for (int attempt = 0; attempt < 100; attempt++) {
		char path[sizeof(RUN_DIR) + 96];
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(run_name, sizeof(run_name), RUN_PREFIX RUN_NAME_VERSION "%d.%lx", (int)getpid(),
		         (unsigned long)(ts.tv_nsec ^ (attempt * 7919)));
		snprintf(path, sizeof(path), "%s%s", RUN_DIR, run_name);
		int fd = EMU_REAL(open)(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return NULL;
		}
		fchmod(fd, 0666); /* processes of the run that changed their uid register too */
		if (ftruncate(fd, sizeof(struct emu_run_shared)) != 0) {
			EMU_REAL(close)(fd);
			unlink(path);
			return NULL;
		}
		struct emu_run_shared *r = map_run(fd);
		if (!r) {
			unlink(path);
			return NULL;
		}
		snprintf(r->config, sizeof(r->config), "%s", key);
		r->creator_start = process_start(getpid());
		__atomic_store_n(&r->creator_pid, (int32_t)getpid(), __ATOMIC_RELAXED);
		run_magic_publish(r); /* readable by others from here */
		run_created = 1;
		setenv(RUN_ENV, run_name, 1);
		return r;
	}
	return NULL;
}

static int slot_index(const struct emu_run_task *s)
{
	return s ? (int)(s - run->task) : -1;
}

/* The LIVE slot of a task (caller holds the lock), or NULL. */
static struct emu_run_task *find_slot(pid_t tid, pid_t pid)
{
	uint32_t n = run_used();
	for (uint32_t i = n; i-- > 0;) { /* newest first: a recycled tid's old slot is older */
		struct emu_run_task *s = &run->task[i];
		if (s->state == SLOT_LIVE && s->tid == tid && (!pid || s->pid == pid))
			return s;
	}
	return NULL;
}

/* The slot of a thread of this process that created another, live or exited (caller holds the lock): a main
 * thread may call pthread_exit before the thread it made registers itself, which stays its child (inherit).
 */
static struct emu_run_task *find_creator(pid_t tid, pid_t pid)
{
	uint32_t n = run_used();
	for (uint32_t i = n; i-- > 0;) { /* newest first: a recycled tid's old slot is older */
		struct emu_run_task *s = &run->task[i];
		if (s->tid == tid && s->pid == pid)
			return s;
	}
	return NULL;
}

/* The slot of the child process that this thread's last fork() made (caller holds the lock), live or exited:
 * the child may register, and even run to its end, before fork returns in the parent, which must not make
 * it a second slot (its EXIT would be written again for a task killed, perf_remote.c). The pid alone does
 * not say which child: once an older child was reaped its pid may be the new one's (pid_max 32768), and
 * its exited slot has the same tid, pid and parent. The fork's run-wide number does. */
static struct emu_run_task *find_fork_child(pid_t tid, pid_t pid, uint64_t fork_seq)
{
	uint32_t n = run_used();
	for (uint32_t i = n; i-- > 0;) {
		struct emu_run_task *s = &run->task[i];
		if (s->tid == tid && s->pid == pid && s->state != SLOT_FREE && s->ppid == self_pid &&
		    fork_seq && s->fork_seq == fork_seq)
			return s;
	}
	return NULL;
}

/* The LIVE slot of a process's task (caller holds the lock), or NULL: never a dead process's whose pid this
 * one got (pid wrap, a reaped child's pid forced or reused). A killed task's slot stays LIVE until its EXIT
 * is written, and once written (claimed) it would keep the claim: the new process's own EXIT would never be
 * written, and the dead one's end would be taken for the new one's. Such a slot is told by its start time:
 * when its EXIT is claimed it is marked exited; when not, it stays for the one who writes that EXIT. */
static struct emu_run_task *find_slot_of_process(pid_t tid, pid_t pid)
{
	uint64_t now = 0;
	for (uint32_t i = run_used(); i-- > 0;) { /* newest first */
		struct emu_run_task *s = &run->task[i];
		if (s->state != SLOT_LIVE || s->tid != tid || s->pid != pid)
			continue;
		uint64_t start = __atomic_load_n(&s->start, __ATOMIC_RELAXED);
		if (!now)
			now = start_of(pid);
		if (!start || !now || start == now)
			return s; /* the same process (or a start not known: taken as the same) */
		if (__atomic_load_n(&s->exit_claimed, __ATOMIC_ACQUIRE))
			__atomic_store_n(&s->state, SLOT_EXITED, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A new slot (caller holds the lock), or NULL when the table is full (that task is then not seen by others).
 */
static struct emu_run_task *new_slot(pid_t tid, pid_t pid, pid_t ppid, int parent)
{
	if (run->used >= EMU_RUN_TASKS) {
		static int warned; /* once per process: say it, do not flood */
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
			static const char msg[] =
			    "librvemu: the run's task table is full (" EMU_RUN_TASKS_STR
			    " tasks): later tasks are not seen by other processes (their counts "
			    "are missing from events that inherit or watch them)\n";
			fputs(msg, stderr);
		}
		return NULL;
	}
	struct emu_run_task *s = &run->task[run->used];
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->pid = pid;
	s->ppid = ppid;
	s->parent = parent;
	s->born = ++run->seq;
	s->start = start_of(pid);
	s->hart = (int32_t)(run->next_hart++ % emu_nharts());
	s->member = 1;
	__atomic_store_n(&s->state, SLOT_LIVE, __ATOMIC_RELEASE);
	__atomic_store_n(&run->used, run->used + 1, __ATOMIC_RELEASE);
	return s;
}

/* The calling thread's own cycles from what its slot holds (its CPU time less the emulator's, or the virtual
 * clock); a count source with its own clock is read by mach_thread.c, here the last value it published. */
static uint64_t own_cycles(const struct emu_run_task *s)
{
	if (emu_count_source()->thread_cycles)
		return __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	if (emu_clock_is_virtual())
		return __atomic_load_n(&s->vcycles, __ATOMIC_RELAXED);
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
	         k = __atomic_load_n(&s->kernel_ns, __ATOMIC_RELAXED);
	return emu_ns_to_cycles(ns > k ? ns - k : 0);
}

static void fork_prepare(void)
{
	my_fork_seq = run ? __atomic_add_fetch(&run->forks, 1, __ATOMIC_ACQ_REL) : 0;
}

/* The parent: the gate held this fork's child only. */
static void fork_parent(void)
{
	fork_gate = fork_locked_gate = fork_locked_ready = -1;
}

static void fork_child(void)
{
	if (!run)
		return;
	int parent = my_slot;
	pid_t parent_pid = self_pid; /* the parent's, as copied: getppid() names a reaper once it died */
	self_pid = getpid();
	self_start = process_start(self_pid);
	run_created = 0; /* the name is the creator's to remove */
	if (fork_gate >= 0) {
		char c;
		int gate = fork_gate;
		fork_gate = -1; /* the child's own forks are not held */
		while (EMU_REAL(read)(gate, &c, 1) < 0 && errno == EINTR)
			;
	}
	run_lock();
	if (fork_locked_gate >= 0) {
		char c = 'l';
		int gate = fork_locked_gate, ready = fork_locked_ready;
		fork_locked_gate = fork_locked_ready = -1;
		while (EMU_REAL(write)(ready, &c, 1) < 0 && errno == EINTR)
			;
		while (EMU_REAL(read)(gate, &c, 1) < 0 && errno == EINTR)
			;
	}
	/* the parent may have made it (fork returned there first): the slot of this fork, never an older
	 * child's whose pid this one got */
	struct emu_run_task *s = find_slot_of_process(self_pid, self_pid);
	if (s && !((my_fork_seq && s->fork_seq == my_fork_seq) || s->ppid == 0 /* a counter's (open) */))
		s = NULL;
	if (!s) {
		s = new_slot(emu_gettid(), self_pid, parent_pid, parent);
		if (s)
			s->fork_seq = my_fork_seq;
	} else if (s->parent < 0) {
		s->parent = parent;
	}
	if (s)
		__atomic_store_n(&s->member, 1, __ATOMIC_RELEASE);
	run_unlock();
	my_slot = slot_index(s);
}

void emu_run_set_fork_gate(int fd)
{
	fork_gate = fd;
}

void emu_run_set_fork_gate_in_lock(int gate_fd, int ready_fd)
{
	fork_locked_gate = gate_fd;
	fork_locked_ready = ready_fd;
}

static void at_exit(void)
{
	emu_run_process_exit();
}

static pthread_once_t run_once = PTHREAD_ONCE_INIT;

static void run_init(void)
{
	char key[112];
	config_key(key, sizeof(key));
	const char *name = getenv(RUN_ENV);
	run = name && *name ? join_run(name, key) : NULL;
	if (!run)
		run = create_run(key);
	if (!run)
		return; /* no shared memory: this process is a run of its own, not seen by others */
	run_owner_pid = self_pid = getpid();
	self_start = process_start(self_pid);
	/* the creator, also after an exec (same pid and start): it removes the name at exit */
	run_created = __atomic_load_n(&run->creator_pid, __ATOMIC_ACQUIRE) == self_pid &&
	              __atomic_load_n(&run->creator_start, __ATOMIC_RELAXED) == self_start;
	/* A hold in this process's name is its image's before an exec (exec keeps pid and start): a thread
	 * that exec's de_thread killed inside the section. No thread of this image can hold it yet (they wait
	 * for this pthread_once), and the word would look like this process's own for ever. */
	uint64_t stale = __atomic_load_n(&run->lock, __ATOMIC_ACQUIRE);
	if (stale && (pid_t)(uint32_t)stale == self_pid)
		__atomic_compare_exchange_n(&run->lock, &stale, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	/* The main thread: after exec its slot is there already (same tid, pid and parent process); its clock
	 * goes on and the exec is counted. Otherwise a new task, made by the parent process's main thread
	 * when that is in the run (posix_spawn, vfork, a shell). */
	pid_t tid = emu_gettid(), pid = getpid(), ppid = getppid();
	run_lock();
	struct emu_run_task *s = find_slot_of_process(tid, pid);
	if (s &&
	    (s->ppid == ppid || s->ppid == 0)) { /* 0: registered by a process counting it (vfork, clone) */
		uint64_t c = own_cycles(s);
		struct rusage ru;
		if (getrusage(RUSAGE_THREAD, &ru) == 0) {
			s->exec_acct[0] = (uint64_t)ru.ru_minflt;
			s->exec_acct[1] = (uint64_t)ru.ru_majflt;
			s->exec_acct[2] = (uint64_t)ru.ru_nvcsw;
			s->exec_acct[3] = (uint64_t)ru.ru_nivcsw;
		}
		if (s->parent <
		    0) /* made by a process counting it, or before its parent knew (vfork, clone) */
			s->parent = slot_index(find_slot(ppid, ppid));
		__atomic_store_n(&s->exec_cycles[(s->exec_gen + 1) % 8], c, __ATOMIC_RELAXED);
		__atomic_store_n(&s->exec_gen, s->exec_gen + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->member, 1, __ATOMIC_RELEASE);
	} else {
		if (s)
			s->state = SLOT_EXITED; /* a recycled pid's stale slot */
		s = new_slot(tid, pid, ppid, slot_index(find_slot(ppid, ppid)));
	}
	run_unlock();
	my_slot = slot_index(s);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
}

void emu_run_init(void)
{
	pthread_once(&run_once, run_init);
}

/* ------------------------------------------------------------------------------- this process's tasks */
static struct emu_run_task *slot_at(int i)
{
	return run && i >= 0 && (uint32_t)i < EMU_RUN_TASKS ? &run->task[i] : NULL;
}

void emu_run_thread_attach(struct emu_thread *t)
{
	emu_run_init();
	if (!run || t->pid != getpid())
		return;
	run_lock();
	struct emu_run_task *s = find_slot(t->tid, t->pid);
	/* a process's first thread was made by its parent process (until told better: emu_run_task_created),
	 * another thread by this process's main thread */
	if (!s)
		s = new_slot(t->tid, t->pid, getppid(),
		             slot_index(t->tid == t->pid ? find_slot(getppid(), getppid())
		                                         : find_creator(t->pid, t->pid)));
	if (s)
		__atomic_store_n(&s->member, 1, __ATOMIC_RELEASE);
	run_unlock();
	if (!s)
		return;
	t->run = s;
	t->hart = (unsigned)s->hart; /* one machine: the run deals the harts out */
	/* the clock goes on across exec */
	t->vcycles = __atomic_load_n(&s->vcycles, __ATOMIC_RELAXED);
	t->kernel_ns = __atomic_load_n(&s->kernel_ns, __ATOMIC_RELAXED);
	if (t->tid == emu_gettid())
		my_slot = slot_index(s);
}

void emu_run_publish(struct emu_thread *t, uint64_t cycles)
{
	struct emu_run_task *s = t->run;
	if (!s || t->remote || s->pid != self_pid)
		return; /* (a fork child's copy of its parent's record) */
	__atomic_store_n(&s->vcycles, __atomic_load_n(&t->vcycles, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&s->kernel_ns, __atomic_load_n(&t->kernel_ns, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	/* release: a reader that sees this kernel_since sees the kernel_ns stored before it */
	__atomic_store_n(&s->kernel_since, __atomic_load_n(&t->kernel_since, __ATOMIC_RELAXED),
	                 __ATOMIC_RELEASE);
	uint64_t old = __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	while (cycles > old &&
	       !__atomic_compare_exchange_n(&s->cycles, &old, cycles, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint64_t emu_run_fork_seq(void)
{
	return my_fork_seq;
}

void emu_run_set_fork_seq(uint64_t seq)
{
	my_fork_seq = seq;
}

void emu_run_task_created(pid_t parent_tid, pid_t pid, pid_t tid, uint64_t fork_seq)
{
	emu_run_init();
	if (!run)
		return;
	run_lock();
	struct emu_run_task *p = find_creator(parent_tid, getpid());
	/* a child process: the slot of this fork (it may have registered, even exited, before fork returned
	 * here); a thread: its live slot */
	struct emu_run_task *s = pid != getpid() ? find_fork_child(tid, pid, fork_seq) : find_slot(tid, pid);
	if (!s && pid != getpid()) {
		s = new_slot(tid, pid, getpid(), slot_index(p));
		if (s)
			s->fork_seq = fork_seq;
	} else if (!s) {
		s = new_slot(tid, pid, getppid(), slot_index(p));
	} else if (s->parent < 0 && s != p)
		s->parent = slot_index(p);
	if (s) /* a child forked here shares the table's mapping; a thread is this process's */
		__atomic_store_n(&s->member, 1, __ATOMIC_RELEASE);
	run_unlock();
	if (s && tid == emu_gettid())
		my_slot = slot_index(s);
}

/* The calling thread's accounting, for those that count its software events once /proc has no more of it. */
static void own_acct(struct emu_run_task *s)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return;
	s->acct[0] = (uint64_t)ru.ru_minflt;
	s->acct[1] = (uint64_t)ru.ru_majflt;
	s->acct[2] = (uint64_t)ru.ru_nvcsw;
	s->acct[3] = (uint64_t)ru.ru_nivcsw;
	__atomic_store_n(&s->acct_valid, 1, __ATOMIC_RELEASE);
}

int emu_run_final_acct(const struct emu_thread *t, struct emu_thread_acct *out)
{
	struct emu_run_task *s = t->run;
	if (!s || !__atomic_load_n(&s->acct_valid, __ATOMIC_ACQUIRE))
		return -1;
	out->minflt = s->acct[0];
	out->majflt = s->acct[1];
	out->nvcsw = s->acct[2];
	out->nivcsw = s->acct[3];
	return 0;
}

static void exit_slot(struct emu_run_task *s, uint64_t cycles)
{
	uint64_t old = __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	if (cycles > old)
		__atomic_store_n(&s->cycles, cycles, __ATOMIC_RELAXED);
	__atomic_store_n(&s->kernel_since, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->state, SLOT_EXITED, __ATOMIC_RELEASE);
}

/* The right to write the slot's EXIT record, taken from `from` (EXIT_NONE; EXIT_SELF of a task killed in
 * its exit path) as `as`: 1 for the one caller that takes it, 0 for every later one. */
static int claim_exit(struct emu_run_task *s, int32_t from, int32_t as)
{
	return __atomic_compare_exchange_n(&s->exit_claimed, &from, as, 0, __ATOMIC_ACQ_REL,
	                                   __ATOMIC_RELAXED);
}

/* Whether nobody is writing the slot's EXIT: unclaimed while its task lived, or claimed by its own exit path
 * (a kill can end it before the record; the caller asks whether the task is gone). The claim it was in. */
static int exit_unwritten(const struct emu_run_task *s, int32_t *claim)
{
	*claim = __atomic_load_n(&s->exit_claimed, __ATOMIC_ACQUIRE);
	return *claim == EXIT_SELF ||
	       (*claim == EXIT_NONE && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_LIVE);
}

int emu_run_thread_exit(void)
{
	struct emu_run_task *s = slot_at(my_slot);
	if (!s || s->pid != getpid())
		return -1; /* not in the run's table: nobody else writes its EXIT */
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_LIVE) {
		own_acct(s);
		exit_slot(s, own_cycles(s));
	}
	int mine = claim_exit(s, EXIT_NONE, EXIT_SELF);
	int gate = mine ? __atomic_exchange_n(&exit_gate, -1, __ATOMIC_ACQ_REL) : -1;
	if (gate >= 0) {
		char c = 'x';
		while (EMU_REAL(write)(exit_ready, &c, 1) < 0 && errno == EINTR)
			;
		while (EMU_REAL(read)(gate, &c, 1) < 0 && errno == EINTR)
			;
	}
	return mine;
}

void emu_run_set_exit_gate(int gate_fd, int ready_fd)
{
	exit_ready = ready_fd;
	__atomic_store_n(&exit_gate, gate_fd, __ATOMIC_RELEASE);
}

void emu_run_thread_exit_written(void)
{
	struct emu_run_task *s = slot_at(my_slot);
	if (s && s->pid == getpid())
		claim_exit(s, EXIT_SELF, EXIT_WRITTEN);
}

int emu_run_claim_sibling_exit(pid_t *tid, int *slot)
{
	if (!run || run_owner_pid == 0)
		return 0;
	pid_t pid = getpid(), me = emu_gettid();
	int found = 0;
	run_lock();
	for (uint32_t i = run_used(); i-- > 0 && !found;) { /* newest first */
		struct emu_run_task *s = &run->task[i];
		if (s->pid != pid || s->tid == me || s->state != SLOT_LIVE ||
		    __atomic_load_n(&s->exit_claimed, __ATOMIC_ACQUIRE) || find_slot(s->tid, pid) != s)
			continue; /* another process's, ours, ended, written, or an older image's reused tid
			           */
		int saved = errno;
		int alive = tgkill(pid, s->tid, 0) == 0;
		errno = saved;
		if (alive && claim_exit(s, EXIT_NONE, EXIT_CLAIMED)) {
			*tid = s->tid;
			*slot = (int)i;
			found = 1;
		}
	}
	run_unlock();
	return found;
}

void emu_run_process_exit(void)
{
	if (!run || run_owner_pid == 0)
		return;
	pid_t pid = getpid();
	uint32_t n = run_used();
	for (uint32_t i = 0; i < n; i++) {
		struct emu_run_task *s = &run->task[i];
		if (s->state != SLOT_LIVE || s->pid != pid)
			continue;
		if ((int)i == my_slot) {
			own_acct(s);
			exit_slot(s, own_cycles(s));
			continue;
		}
		/* another thread of this process: its CPU clock is still readable */
		uint64_t c = __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
		struct timespec ts;
		if (!emu_clock_is_virtual() && !emu_count_source()->thread_cycles &&
		    clock_gettime((clockid_t)((~(unsigned)s->tid << 3) | 6), &ts) == 0) { /* its CPU clock */
			uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
			         k = __atomic_load_n(&s->kernel_ns, __ATOMIC_RELAXED);
			c = emu_ns_to_cycles(ns > k ? ns - k : 0);
		} else if (emu_clock_is_virtual()) {
			c = __atomic_load_n(&s->vcycles, __ATOMIC_RELAXED);
		}
		exit_slot(s, c);
	}
	/* The name goes with the run's last process. The creator removes it unless a process of the run lives
	 * on (a daemon it started, which may still exec and join by the name); then the one of them that ends
	 * last does, once the creator is gone; two that end at once and see each other leave it to the next
	 * run's creator (remove_stale_runs). Processes still in the run keep their mapping. */
	int creator = run_created && pid == run_owner_pid;
	if ((creator || run_creator_gone(run, run_name_pid(run_name))) && !run_in_use(run, pid)) {
		char path[sizeof(RUN_DIR) + 96];
		snprintf(path, sizeof(path), "%s%s", RUN_DIR, run_name);
		unlink(path);
	}
	run_created = 0;
}

/* --------------------------------------------------------------------------- other processes' tasks */
/* A small /proc file into buf, NUL-terminated: 0, or -1 when it cannot be read (the task is gone). */
static int read_proc(const char *path, char *buf, size_t len)
{
	int fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = EMU_REAL(read)(fd, buf, len - 1);
	EMU_REAL(close)(fd);
	buf[n > 0 ? (size_t)n : 0] = 0;
	return n > 0 ? 0 : -1;
}

/* ptrace_may_access(PTRACE_MODE_READ_REALCREDS), as perf_event_open checks it for a task of another process:
 * the caller's real uid and gid equal the target's real, effective and saved ones, or the caller has
 * CAP_SYS_PTRACE. Reads /proc/<tid>/status; -ESRCH when the task does not exist. */
static int status_field(const char *text, const char *name, unsigned long v[4])
{
	const char *p = strstr(text, name);
	return p && sscanf(p + strlen(name), "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4;
}

static int has_cap(unsigned bit)
{
	char buf[4096];
	if (read_proc("/proc/self/status", buf, sizeof(buf)) != 0)
		return 0;
	const char *p = strstr(buf, "CapEff:");
	unsigned long long caps;
	return p && sscanf(p + 7, "%llx", &caps) == 1 && ((caps >> bit) & 1);
}

static int may_access(pid_t tid, pid_t *tgid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (read_proc(path, buf, sizeof(buf)) != 0)
		return -ESRCH;
	unsigned long uid[4], gid[4];
	const char *tg = strstr(buf, "\nTgid:");
	int g;
	if (!tg || sscanf(tg + 6, "%d", &g) != 1 || !status_field(buf, "\nUid:", uid) ||
	    !status_field(buf, "\nGid:", gid))
		return -ESRCH; /* a zombie shows no Uid line on some kernels: nothing left to count */
	*tgid = g;
	unsigned long me = (unsigned long)getuid(), my_gid = (unsigned long)getgid();
	if (uid[0] == me && uid[1] == me && uid[2] == me && gid[0] == my_gid && gid[1] == my_gid &&
	    gid[2] == my_gid)
		return 0;
	return has_cap(19 /* CAP_SYS_PTRACE */) ? 0 : -EACCES;
}

static struct emu_thread *proxy_for(struct emu_run_task *s)
{
	struct emu_thread *t;
	pthread_mutex_lock(&proxies_lock);
	for (t = proxies; t; t = t->next)
		if (t->run == s)
			break;
	if (!t) {
		/* another process's injections are not seen (docs/emulator-core.md) */
		t = emu_thread_new(s->tid, s->pid, (unsigned)s->hart);
		t->run = s;
		t->remote = 1;
		t->run_exec_seen = __atomic_load_n(&s->exec_gen, __ATOMIC_ACQUIRE);
		t->next = proxies;
		proxies = t;
	}
	pthread_mutex_unlock(&proxies_lock);
	return t;
}

int emu_run_task_open(pid_t tid, struct emu_thread **out)
{
	emu_run_init();
	pid_t pid = 0;
	int err = may_access(tid, &pid);
	if (err)
		return err;
	if (!run)
		return -ESRCH;
	run_lock();
	struct emu_run_task *s = find_slot_of_process(tid, pid);
	/* a process of the run that has not started its emulator yet is registered for it */
	if (!s) {
		s = new_slot(tid, pid, 0,
		             -1); /* ppid 0: its own registration (an exec) will take this slot */
		if (s)
			s->member = 0; /* until then it may be no process of the run */
	}
	run_unlock();
	if (!s)
		return -ENOMEM;
	*out = proxy_for(s);
	return 0;
}

int emu_thread_is_remote(const struct emu_thread *t)
{
	return t->remote;
}

static uint64_t schedstat_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	unsigned long long ns;
	if (read_proc(path, buf, sizeof(buf)) != 0 || sscanf(buf, "%llu", &ns) != 1)
		return UINT64_MAX;
	return ns;
}

/* A task's cycles as another process (or another thread) sees them: its final cycles once it exited; under
 * the CPU-time clock its CPU time (its own thread clock in this process, schedstat in another) less the time
 * it spent in the emulator, or its time at entry while it is inside. */
static uint64_t slot_cycles(struct emu_run_task *s)
{
	uint64_t last = __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_LIVE)
		return last; /* its final cycles */
	uint64_t c;
	if (emu_count_source()->thread_cycles) {
		c = last;
	} else if (emu_clock_is_virtual()) {
		c = __atomic_load_n(&s->vcycles, __ATOMIC_RELAXED);
	} else {
		/* The task may enter or leave the emulator while its clock is read: a reading whose
		 * kernel_since changed meanwhile would count the emulator's time as the task's cycles (and
		 * stay: the count is kept monotonic), so it is taken again. */
		c = last;
		for (int tries = 0; tries < 4; tries++) {
			uint64_t since = __atomic_load_n(&s->kernel_since, __ATOMIC_ACQUIRE), ns = since;
			struct timespec ts;
			if (!ns && s->pid == self_pid) /* a thread of this process: its CPU clock */
				ns = clock_gettime((clockid_t)((~(unsigned)s->tid << 3) | 6), &ts) == 0
				         ? (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec
				         : UINT64_MAX;
			else if (!ns)
				ns = schedstat_ns(s->pid, s->tid);
			if (ns == UINT64_MAX)
				return last; /* gone without a word (killed): what it had */
			uint64_t k = __atomic_load_n(&s->kernel_ns, __ATOMIC_ACQUIRE);
			if (__atomic_load_n(&s->kernel_since, __ATOMIC_ACQUIRE) != since)
				continue;
			c = emu_ns_to_cycles(ns > k ? ns - k : 0);
			break;
		}
	}
	return c > last ? c : last;
}

uint64_t emu_run_remote_cycles(struct emu_thread *t)
{
	if (t->cpu_wide) { /* a CPU: what every task of the run on it ran */
		uint64_t sum = 0;
		unsigned n = emu_run_tasks();
		for (unsigned i = 0; i < n; i++)
			if (run->task[i].hart == (int32_t)t->hart && run->task[i].state != SLOT_FREE)
				sum += slot_cycles(&run->task[i]);
		return sum;
	}
	return t->run ? slot_cycles(t->run) : 0;
}

void emu_run_exec_acct(const struct emu_thread *t, struct emu_thread_acct *out)
{
	const struct emu_run_task *s = t->run;
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->minflt = s->exec_acct[0];
	out->majflt = s->exec_acct[1];
	out->nvcsw = s->exec_acct[2];
	out->nivcsw = s->exec_acct[3];
}

int emu_run_exec_pending(struct emu_thread *t, uint64_t *exec_cycles)
{
	struct emu_run_task *s = t->run;
	if (!s)
		return 0;
	uint64_t gen = __atomic_load_n(&s->exec_gen, __ATOMIC_ACQUIRE);
	if (gen == t->run_exec_seen)
		return 0;
	/* the first exec this process has not acted on (enable_on_exec acts once); of the last 8 */
	uint64_t first = gen - t->run_exec_seen > 8 ? gen - 7 : t->run_exec_seen + 1;
	t->run_exec_seen = gen;
	*exec_cycles = __atomic_load_n(&s->exec_cycles[first % 8], __ATOMIC_RELAXED);
	return 1;
}

uint64_t emu_run_seq(void)
{
	emu_run_init();
	return run ? __atomic_load_n(&run->seq, __ATOMIC_ACQUIRE) : 0;
}

int emu_run_slot_of(const struct emu_thread *t)
{
	return run && t->run ? slot_index(t->run) : -1;
}

int emu_run_descendant(int slot, int root, uint64_t after)
{
	if (!run || root < 0 || slot < 0 || (uint32_t)slot >= run_used())
		return 0;
	for (int i = slot, hops = 0; i >= 0 && (uint32_t)i < EMU_RUN_TASKS && hops < EMU_RUN_TASKS; hops++) {
		const struct emu_run_task *s = &run->task[i];
		if (i == root)
			return i != slot;
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_FREE || s->born <= after)
			return 0;
		i = s->parent;
	}
	return 0;
}

unsigned emu_run_tasks(void)
{
	return run ? run_used() : 0;
}

struct emu_thread *emu_run_task_thread(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	if (!s)
		return NULL;
	if (s->pid == getpid())
		return NULL; /* this process's own threads are reached through mach_thread.c */
	return proxy_for(s);
}

int emu_run_task_hart(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s ? s->hart : -1;
}

uint64_t emu_run_task_born(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s ? s->born : 0;
}

struct emu_thread *emu_run_cpu_thread(unsigned cpu)
{
	emu_run_init();
	if (!run)
		return NULL;
	struct emu_thread *t;
	pthread_mutex_lock(&proxies_lock);
	for (t = proxies; t; t = t->next)
		if (t->cpu_wide && t->hart == cpu)
			break;
	if (!t) {
		t = emu_thread_new(-1, -1, cpu); /* no task: the CPU itself */
		t->remote = 1;
		t->cpu_wide = 1;
		t->next = proxies;
		proxies = t;
	}
	pthread_mutex_unlock(&proxies_lock);
	return t;
}

pid_t emu_run_task_tid(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s ? s->tid : 0;
}

uint64_t emu_run_task_execs(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s ? __atomic_load_n(&s->exec_gen, __ATOMIC_ACQUIRE) : 0;
}

int emu_run_task_live(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	/* a task killed without a word (SIGKILL) left its slot live: its process is gone or a zombie */
	return s && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_LIVE && !task_gone(s);
}

int emu_run_task_running(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	if (!s || (uint32_t)slot >= run_used())
		return 0;
	int32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	/* a process's main thread marks its slot exited at the start of its exit path (atexit, _exit): its
	 * records (EXIT) and the rest of the process's exit come after, until the process is gone */
	if (state == SLOT_LIVE)
		return !task_gone(s);
	return state == SLOT_EXITED && s->tid == s->pid && !slot_process_dead(s);
}

int emu_run_task_claim_exit(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	int32_t claim;
	if (!s || (uint32_t)slot >= run_used() || !exit_unwritten(s, &claim) || s->pid == self_pid ||
	    !task_gone(s))
		return 0;
	return claim_exit(s, claim, EXIT_CLAIMED);
}

int emu_run_task_exit_pending(int slot, pid_t *pid, pid_t *tid, pid_t *ppid)
{
	struct emu_run_task *s = slot_at(slot);
	int32_t claim;
	if (!s || (uint32_t)slot >= run_used() || !exit_unwritten(s, &claim) || s->pid == self_pid)
		return 0;
	*pid = s->pid;
	*tid = s->tid;
	*ppid = s->ppid;
	return 1;
}

int emu_run_child_exit_pending(void)
{
	if (!run)
		return 0;
	for (uint32_t i = run_used(); i-- > 0;) {
		const struct emu_run_task *s = &run->task[i];
		int32_t claim;
		if (s->ppid == self_pid && s->pid != self_pid && exit_unwritten(s, &claim))
			return 1;
	}
	return 0;
}

int emu_run_task_ids(int slot, pid_t *pid, pid_t *tid, pid_t *ppid)
{
	struct emu_run_task *s = slot_at(slot);
	if (!s || (uint32_t)slot >= run_used())
		return 0;
	*pid = s->pid;
	*tid = s->tid;
	*ppid = s->ppid;
	return 1;
}

int emu_run_task_parent(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s ? s->parent : -1;
}

uint64_t emu_run_task_cycles(int slot)
{
	struct emu_run_task *s = slot_at(slot);
	return s && (uint32_t)slot < run_used() ? slot_cycles(s) : 0;
}

/* ------------------------------------------------------------------------------ shared blocks */
void *emu_run_block_claim(void)
{
	emu_run_init();
	if (!run)
		return NULL;
	int32_t me = (int32_t)getpid();
	for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
		int32_t *owner = (int32_t *)(void *)run->block[i];
		int32_t cur = __atomic_load_n(owner, __ATOMIC_ACQUIRE);
		/* a block whose owner died without releasing it (killed) is free again */
		if (cur != 0 && (cur == me || !process_dead(cur)))
			continue;
		if (!__atomic_compare_exchange_n(owner, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		memset(run->block[i] + sizeof(int32_t), 0, EMU_RUN_BLOCK_BYTES - sizeof(int32_t));
		return run->block[i];
	}
	return NULL;
}

void emu_run_block_published(void)
{
	if (run)
		__atomic_fetch_add(&run->blocks_gen, 1, __ATOMIC_RELEASE);
}

uint64_t emu_run_block_gen_next(void)
{
	return run ? __atomic_add_fetch(&run->blocks_gen, 1, __ATOMIC_ACQ_REL) : 0;
}

uint64_t emu_run_blocks_gen(void)
{
	return run ? __atomic_load_n(&run->blocks_gen, __ATOMIC_ACQUIRE) : 0;
}

void emu_run_block_release(void *block)
{
	if (block)
		__atomic_store_n((int32_t *)block, 0, __ATOMIC_RELEASE);
}

void *emu_run_block_at(unsigned i)
{
	emu_run_init();
	if (!run || i >= EMU_RUN_BLOCKS)
		return NULL;
	return __atomic_load_n((int32_t *)(void *)run->block[i], __ATOMIC_ACQUIRE) ? run->block[i] : NULL;
}

int emu_run_block_index(const void *block)
{
	if (!run)
		return -1;
	const unsigned char *b = block, *first = &run->block[0][0];
	if (b < first || b >= first + sizeof(run->block))
		return -1;
	return (int)((size_t)(b - first) / EMU_RUN_BLOCK_BYTES);
}

/* A lock word in shared memory: the holder's pid. A holder that died (killed between two stores) is
 * detected and the lock taken over, as the run's own lock. Held for a few copies only, so a holder still
 * there after WORD_LOCK_TRIES yields is taken for dead too (its pid reused by a live process, or the
 * holder stopped): the lock is taken over, said once on stderr, rather than wait for ever. */
#define WORD_LOCK_TRIES (1u << 20)
void emu_run_word_lock(int32_t *word)
{
	int32_t me = (int32_t)getpid();
	for (unsigned spins = 0; spins < WORD_LOCK_TRIES; spins++) {
		int32_t holder = 0;
		if (__atomic_compare_exchange_n(word, &holder, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		if (spins % 64 == 63 && holder != me && process_dead(holder))
			__atomic_compare_exchange_n(word, &holder, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		sched_yield();
	}
	static int told;
	if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "librvemu: a shared buffer's lock held by pid %d for %u tries: taken over\n",
		        (int)__atomic_load_n(word, __ATOMIC_RELAXED), WORD_LOCK_TRIES);
	__atomic_exchange_n(word, me, __ATOMIC_ACQ_REL);
}

void emu_run_word_unlock(int32_t *word)
{
	int32_t me = (int32_t)getpid();
	__atomic_compare_exchange_n(word, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

int emu_run_pid_dead(pid_t pid)
{
	return process_dead(pid);
}
