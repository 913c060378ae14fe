// SPDX-License-Identifier: MIT
/* The libc front end for perf file descriptors: perf_event_open and every fd call on an event (read, write,
 * lseek, ioctl, fcntl, mmap, poll, close, dup...), and the side-band records the perf core reports (mmap,
 * mprotect, dlopen, prctl, fork, exec, pthread_create/exit, SCM_RIGHTS); the program's sigaction/signal, and
 * the load and fork handlers. File descriptors become event objects of the perf core (perf.h); every call on
 * another fd and every other syscall number goes to libc unchanged. The path-based calls that serve /proc and
 * /sys are fe_vfs.c's.
 *
 * Every emulated event is a real fd (a memfd), so fd numbers never collide with the program's own files.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fe.h"
#include "perf.h"

/* ------------------------------------------------------------------------------------------ fd table */
static struct emu_event **fdtab;
static size_t fdtab_len;

/* One slot per possible fd, reserved as untouched anonymous memory: lookups on every read() are a
 * bounds check and a load, no lock. */
static int fdtab_init(void)
{
	if (__atomic_load_n(&fdtab, __ATOMIC_ACQUIRE))
		return 0;
	struct rlimit rl;
	size_t n = 1u << 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
		n = rl.rlim_max;
	if (n > (1u << 20))
		n = 1u << 20;
	void *p = EMU_REAL(mmap)(NULL, n * sizeof(*fdtab), PROT_READ | PROT_WRITE,
	                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	fdtab_len = n;
	__atomic_store_n(&fdtab, (struct emu_event **)p, __ATOMIC_RELEASE);
	return 0;
}

static struct emu_event *event_of_fd(int fd)
{
	struct emu_event **tab = __atomic_load_n(&fdtab, __ATOMIC_ACQUIRE);
	if (!tab || fd < 0 || (size_t)fd >= fdtab_len)
		return NULL;
	return __atomic_load_n(&tab[fd], __ATOMIC_ACQUIRE);
}

static void fdtab_set(int fd, struct emu_event *ev)
{
	__atomic_store_n(&fdtab[fd], ev, __ATOMIC_RELEASE);
}

static long fail(int err)
{
	errno = err;
	return -1;
}

static long result(long r)
{
	return r < 0 ? fail((int)-r) : r;
}

/* ----------------------------------------------------------------------------------- load and fork */
/* The front end's own locks come first: maps_lock is held while the perf lock is taken (mmap calls
 * perf_mapped under it), dirs_lock (fe_vfs.c's served directories) around no other lock. A fork must not
 * leave the child a lock another thread held: this is the one place that takes them all, in the order
 * maps_lock -> dirs_lock -> perf lock (and, through the perf core's and machine's handlers, bank locks ->
 * thread registry). */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

static void fork_prepare(void)
{
	pthread_mutex_lock(&maps_lock);
	fe_vfs_fork_lock();
	perf_fork_prepare();
}

static void fork_parent(void)
{
	perf_fork_parent();
	fe_vfs_fork_unlock();
	pthread_mutex_unlock(&maps_lock);
}

static void fork_child(void)
{
	perf_fork_child();
	fe_vfs_fork_unlock();
	pthread_mutex_unlock(&maps_lock);
	static int registered; /* per process: the child's copy of this flag is 0 unless it forked before */
	if (!registered && atexit(perf_exit_flush) == 0)
		registered = 1;
	emu_kernel_leave(); /* the last child handler: the child leaves the fork (threads_fork_child) */
	emu_guard_leave();  /* (entered again for the child by perf_fork_child_unlock) */
}

/* After exec: the old image's counting events whose fds survived, opened again on the same fds. */
static void exec_take_events(void)
{
	int fd, cpu;
	struct perf_event_attr a;
	void *h;
	while (perf_exec_next(&fd, &cpu, &a, &h) == 0) {
		struct emu_event *ev = NULL;
		if (fdtab_init() != 0 || fd < 0 || (size_t)fd >= fdtab_len ||
		    perf_open(&a, 0, cpu, NULL, 0, 0, fd, &ev) != 0)
			ev = NULL;
		perf_exec_restore(ev, h);
		if (ev)
			fdtab_set(fd, ev);
	}
}

/* Load time: a bad configuration stops the program before it runs on a machine it did not ask for. The
 * perf core's fork handlers are registered after the machine's, so its prepare runs first: lock order
 * maps_lock -> dirs_lock -> perf lock -> bank locks -> thread registry. */
static void resolve_next_fns(void);

__attribute__((constructor)) static void fe_constructor(void)
{
	emu_init();
	resolve_next_fns();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(perf_record_process_exit); /* exit(): the process ends, every thread of it */
	fe_trap_install();
	perf_remote_attach_self(0, 0); /* another process samples this one (perf record -- cmd): after exec */
	exec_take_events();
	perf_exec_done(); /* what the image before the exec left in the run's shared memory */
}

/* ------------------------------------------------------------------------------ signal handlers */
/* The program's handlers go behind the re-entry guard's trampoline (fe_signal.c); on riscv64 its SIGILL
 * handler is recorded by the CSR-trap front end (fe_trap.c) and chained to for the traps the emulator does
 * not own, the emulator's handler staying installed. */
static int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
#if FE_CSR_TRAPS
	if (sig == SIGILL)
		return fe_trap_sigaction(act, old);
#endif
	return fe_signal_sigaction(sig, act, old);
}

EMU_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return program_sigaction(sig, act, old);
}

/* glibc's signal(): BSD semantics (the signal blocked in its handler, SA_RESTART). */
EMU_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	if (handler == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < _NSIG)
		sigaddset(&sa.sa_mask, sig);
	if (program_sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* ------------------------------------------------------------------------------- perf_event_open */
EMU_EXPORT long syscall(long number, ...);
static void release_fd(int fd);
static void release_range(unsigned first, unsigned last);

static long perf_event_open_fe(const struct perf_event_attr *attr, int pid, int cpu, int group_fd,
                               unsigned long flags)
{
	emu_init();
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (fdtab_init() != 0)
		return fail(ENOMEM);
	struct emu_event *group = group_fd >= 0 ? event_of_fd(group_fd) : NULL;
	if (group_fd < -1)
		return fail(EBADF);
	int fd = memfd_create("perf_event", (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if ((size_t)fd >= fdtab_len) {
		EMU_REAL(close)(fd);
		return fail(EMFILE);
	}
	struct emu_event *ev;
	int r = perf_open(attr, pid, cpu, group, group_fd != -1, flags, fd, &ev);
	if (r < 0) {
		EMU_REAL(close)(fd);
		return fail(-r);
	}
	fdtab_set(fd, ev);
	return fd;
}

EMU_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	if (number == SYS_perf_event_open) {
		/* pid, cpu and group_fd are int in the kernel's prototype: read them as int varargs. */
		const struct perf_event_attr *attr = va_arg(ap, const struct perf_event_attr *);
		int pid = va_arg(ap, int), cpu = va_arg(ap, int), group_fd = va_arg(ap, int);
		unsigned long flags = va_arg(ap, unsigned long);
		va_end(ap);
		return perf_event_open_fe(attr, pid, cpu, group_fd, flags);
	}
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_close && a[0] >= 0)
		release_fd((int)a[0]);
	else if (number == SYS_close_range && !(a[2] & CLOSE_RANGE_CLOEXEC) &&
	         (unsigned)a[0] <= (unsigned)a[1])
		release_range((unsigned)a[0], (unsigned)a[1]);
	EMU_STAT_ADD(syscalls_forwarded, 1);
	return EMU_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ------------------------------------------------------------------------------ read, write, lseek */
EMU_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct emu_event *ev = event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(read)(fd, buf, len);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	uint64_t advance = emu_cfg()->read_advance;
	if (advance) /* the cycles run before this read; the read then sees them */
		perf_advance_self(advance, (uint64_t)(uintptr_t)__builtin_return_address(0));
	return result(perf_read(ev, buf, len));
}

/* perf's file operations have no write (EINVAL) and no llseek (ESPIPE): the memfd behind an event must
 * not be written or moved through its fd. */
EMU_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	if (event_of_fd(fd))
		return fail(EINVAL);
	return EMU_REAL(write)(fd, buf, len);
}

EMU_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	if (event_of_fd(fd))
		return fail(ESPIPE);
	return EMU_REAL(lseek)(fd, off, whence);
}

EMU_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	if (event_of_fd(fd))
		return fail(ESPIPE);
	return EMU_REAL(lseek64)(fd, off, whence);
}

/* ------------------------------------------------------------------------------------------- ioctl */
EMU_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	struct emu_event *ev = event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(ioctl)(fd, req, arg);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (req == PERF_EVENT_IOC_SET_OUTPUT)
		return (int)result(perf_set_output(ev, event_of_fd((int)arg), (int)arg != -1));
	return (int)result(perf_ioctl(ev, req, arg));
}

/* ------------------------------------------------------------------------------------------- fcntl */
static int dup_track(int oldfd, int newfd);

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, unsigned long arg)
{
	int r = real(fd, cmd, arg);
	struct emu_event *ev = event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return r;
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return dup_track(fd, r); /* the copy refers to the same event, like dup() */
	if (r != -1)
		perf_fcntl(ev, cmd, arg);
	return r;
}

EMU_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long); /* int or pointer: both fit, as glibc reads it */
	va_end(ap);
	return fcntl_common(EMU_REAL(fcntl), fd, cmd, arg);
}

EMU_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl_common(EMU_REAL(fcntl64), fd, cmd, arg);
}

/* ------------------------------------------------------------------------------------ mmap, munmap */
/* The user's mappings of event buffers: the event lives until the last one is gone (perf_mmap_close). */
struct user_map {
	void *addr;
	size_t len;
	struct emu_event *ev;
};
#define MAX_USER_MAPS 4096
static struct user_map user_maps[MAX_USER_MAPS]; /* under maps_lock */

/* perf_event_mmap: a mapping the program makes is told to the events that asked (attr.mmap / mmap2 for an
 * executable one, mmap_data for the others) with the file's name, device and inode; anonymous: "//anon". */
static void report_mapping(void *p, size_t len, int prot, int flags, int fd, off_t off)
{
	struct perf_mmap_info m = {.addr = (uint64_t)(uintptr_t)p, .len = len, .prot = (uint32_t)prot};
	m.flags = (uint32_t)(flags & (MAP_SHARED | MAP_PRIVATE));
	char path[4096] = "//anon";
	struct stat st;
	if (!(flags & MAP_ANONYMOUS) && fd >= 0 && fstat(fd, &st) == 0) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
		m.pgoff = (uint64_t)off;
		m.maj = major(st.st_dev);
		m.min = minor(st.st_dev);
		m.ino = st.st_ino;
	}
	m.filename = path;
	perf_record_mmap(&m);
}

EMU_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct emu_event *ev = event_of_fd(fd);
	if (!ev) {
		void *p = EMU_REAL(mmap)(addr, len, prot, flags, fd, off);
		if (p != MAP_FAILED && perf_mmap_records_wanted()) {
			int saved = errno;
			report_mapping(p, len, prot, flags, fd, off);
			errno = saved;
		}
		return p;
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	int err = perf_mmap(ev, len, flags, off);
	if (err) {
		errno = -err;
		return MAP_FAILED;
	}
	void *p = EMU_REAL(mmap)(addr, len, prot, flags, fd, 0);
	if (p == MAP_FAILED)
		return p;
	pthread_mutex_lock(&maps_lock);
	for (size_t i = 0; i < MAX_USER_MAPS; i++)
		if (!user_maps[i].addr) {
			user_maps[i] = (struct user_map){p, len, ev};
			perf_mapped(ev);
			break;
		}
	pthread_mutex_unlock(&maps_lock);
	return p;
}

EMU_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* mprotect_fixup ends with perf_event_mmap for each vma it changed: JIT code made executable is named. */
EMU_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	static void *next_mprotect;
	if (!__atomic_load_n(&next_mprotect, __ATOMIC_ACQUIRE))
		__atomic_store_n(&next_mprotect, dlsym(RTLD_NEXT, "mprotect"), __ATOMIC_RELEASE);
	int (*real)(void *, size_t, int) = (int (*)(void *, size_t, int))next_mprotect;
	int r = real(addr, len, prot);
	if (r == 0 && perf_mmap_records_wanted()) {
		int saved = errno;
		perf_record_mmaps_in((uint64_t)(uintptr_t)addr, (uint64_t)(uintptr_t)addr + len);
		errno = saved;
	}
	return r;
}

EMU_EXPORT int munmap(void *addr, size_t len)
{
	int r = EMU_REAL(munmap)(addr, len);
	if (r != 0)
		return r;
	char *lo = addr, *hi = lo + len;
	pthread_mutex_lock(&maps_lock);
	for (size_t i = 0; i < MAX_USER_MAPS; i++) {
		char *a = user_maps[i].addr;
		if (a && a < hi && lo < a + user_maps[i].len) { /* any overlap unmaps the buffer */
			struct emu_event *ev = user_maps[i].ev;
			user_maps[i].addr = NULL;
			pthread_mutex_unlock(&maps_lock);
			perf_unmapped(ev);
			pthread_mutex_lock(&maps_lock);
		}
	}
	pthread_mutex_unlock(&maps_lock);
	return 0;
}

/* ------------------------------------------------------------------------------------------- poll */
/* Event fds answer from the perf core (perf_poll); the others from libc. With any event fd in the set,
 * poll waits in short slices (1 ms), since the emulator's wakeups are not kernel wakeups. */
static int poll_common(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	int any = 0;
	for (nfds_t i = 0; i < n; i++)
		if (event_of_fd(fds[i].fd))
			any = 1;
	if (!any)
		return -2;
	EMU_STAT_ADD(syscalls_emulated, 1);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int ready = 0;
		for (nfds_t i = 0; i < n; i++) {
			struct emu_event *ev = event_of_fd(fds[i].fd);
			fds[i].revents = 0;
			if (ev) {
				short r = perf_poll(ev);
				fds[i].revents = (short)(r & (fds[i].events | POLLHUP | POLLERR));
				ready += fds[i].revents != 0;
			} else if (fds[i].fd >= 0) {
				struct pollfd one = fds[i];
				if (EMU_REAL(poll)(&one, 1, 0) > 0) {
					fds[i].revents = one.revents;
					ready++;
				}
			}
		}
		if (ready || timeout_ms == 0)
			return ready;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (timeout_ms > 0 && waited >= timeout_ms)
			return 0;
		struct timespec slice = {0, 1000000};
		nanosleep(&slice, NULL);
	}
}

EMU_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	int r = poll_common(fds, n, timeout_ms);
	return r != -2 ? r : EMU_REAL(poll)(fds, n, timeout_ms);
}

EMU_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	int ms = tmo ? (int)(tmo->tv_sec * 1000 + tmo->tv_nsec / 1000000) : -1;
	int r = poll_common(fds, n, ms);
	return r != -2 ? r : EMU_REAL(ppoll)(fds, n, tmo, mask);
}

/* ------------------------------------------------------------------------------------------ prctl */
EMU_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a[4];
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_TASK_PERF_EVENTS_ENABLE || option == PR_TASK_PERF_EVENTS_DISABLE) {
		perf_task_events_enable(option == PR_TASK_PERF_EVENTS_ENABLE);
		return 0;
	}
	int r = EMU_REAL(prctl)(option, a[0], a[1], a[2], a[3]);
	if (r == 0 && option == PR_SET_NAME && a[0]) { /* __set_task_comm -> perf_event_comm */
		char comm[16];
		strncpy(comm, (const char *)a[0], sizeof(comm) - 1);
		comm[sizeof(comm) - 1] = 0;
		perf_record_comm(comm, 0);
	}
	return r;
}

/* --------------------------------------------------------------------------------- close and dup */
static void release_fd(int fd)
{
	struct emu_event *ev = event_of_fd(fd);
	if (!ev)
		return;
	fdtab_set(fd, NULL);
	perf_put(ev);
}

EMU_EXPORT int close(int fd)
{
	struct emu_event *ev = event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(close)(fd);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	release_fd(fd);
	return EMU_REAL(close)(fd);
}

/* A duplicated event fd refers to the same event, as in the kernel (one struct file). */
static int dup_track(int oldfd, int newfd)
{
	struct emu_event *ev = event_of_fd(oldfd);
	if (newfd < 0 || !ev || newfd == oldfd)
		return newfd;
	if ((size_t)newfd >= fdtab_len) {
		EMU_REAL(close)(newfd);
		return (int)fail(EMFILE);
	}
	perf_get(ev);
	fdtab_set(newfd, ev);
	return newfd;
}

/* Every way an fd can be closed must forget its event, or the next file to get that number would be served
 * as the event: close, dup2/dup3 over it, close_range, closefrom, syscall(SYS_close / SYS_close_range). */
static void release_range(unsigned first, unsigned last)
{
	for (size_t fd = first; fd <= last && fd < fdtab_len; fd++)
		release_fd((int)fd);
}

EMU_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		release_range(first, last); /* CLOEXEC only marks: the fds stay open until an exec */
	return EMU_REAL(close_range)(first, last, flags);
}

EMU_EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		release_range((unsigned)lowfd, ~0u);
	EMU_REAL(closefrom)(lowfd);
}

EMU_EXPORT int dup(int fd)
{
	return dup_track(fd, EMU_REAL(dup)(fd));
}

EMU_EXPORT int dup2(int fd, int newfd)
{
	if (fd != newfd && event_of_fd(fd) == NULL && fcntl(fd, F_GETFD) == -1)
		return EMU_REAL(dup2)(fd, newfd); /* bad oldfd: libc reports it, newfd untouched */
	if (fd != newfd)
		release_fd(newfd);
	return dup_track(fd, EMU_REAL(dup2)(fd, newfd));
}

EMU_EXPORT int dup3(int fd, int newfd, int flags)
{
	if (fd != newfd && event_of_fd(fd) == NULL && fcntl(fd, F_GETFD) == -1)
		return EMU_REAL(dup3)(fd, newfd, flags);
	if (fd != newfd)
		release_fd(newfd);
	return dup_track(fd, EMU_REAL(dup3)(fd, newfd, flags));
}

/* ----------------------------------------------------------------------------------- exit and exec */
/* A child that leaves with _exit() or replaces itself with exec() hands its inherited counts over first
 * (exit() does it through atexit). After exec the new image starts a fresh emulator: what it counts is
 * not attributed to the parent's events. */
EMU_EXPORT void _exit(int status)
{
	perf_record_process_exit();
	perf_exit_flush();
	emu_run_process_exit();
	EMU_REAL(_exit)(status);
	__builtin_unreachable();
}

EMU_EXPORT void _Exit(int status)
{
	perf_record_process_exit();
	perf_exit_flush();
	emu_run_process_exit();
	EMU_REAL(_Exit)(status);
	__builtin_unreachable();
}

EMU_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	perf_exit_flush();
	perf_exec_handoff();
	int r = EMU_REAL(execve)(path, argv, envp);
	perf_exec_failed(); /* still here: the events stay this image's */
	return r;
}

EMU_EXPORT int execv(const char *path, char *const argv[])
{
	perf_exit_flush();
	perf_exec_handoff();
	int r = EMU_REAL(execv)(path, argv);
	perf_exec_failed(); /* still here: the events stay this image's */
	return r;
}

EMU_EXPORT int execvp(const char *file, char *const argv[])
{
	perf_exit_flush();
	perf_exec_handoff();
	int r = EMU_REAL(execvp)(file, argv);
	perf_exec_failed(); /* still here: the events stay this image's */
	return r;
}

EMU_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	perf_exit_flush();
	perf_exec_handoff();
	int r = EMU_REAL(execvpe)(file, argv, envp);
	perf_exec_failed(); /* still here: the events stay this image's */
	return r;
}

/* ------------------------------------------------------------------ tasks and libraries (side-band) */
/* The libc functions below are not in the machine's table of real functions: they are front-end only. */
static void *next_fn(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}
#define NEXT(fn) ((__typeof__(&fn))next_fn((void **)&next_##fn, #fn))
static void *next_dlopen, *next_fork, *next_pthread_create, *next_pthread_exit, *next_sendmsg, *next_recvmsg;
static void *next_wait, *next_waitpid, *next_wait3, *next_wait4, *next_waitid;

/* dlopen: the executable mappings of a library it loads (not of one already loaded: no new mapping) are
 * reported as the loader's mmap calls would be in the kernel; ld.so maps them itself, past our mmap.
 * glibc's dlopen finds its caller by return address (for $ORIGIN and the caller's RUNPATH): with no event
 * asking for records, the real dlopen is a tail call and sees the program's caller. While one asks, it sees
 * librvemu.so, so a library found only through the caller's RUNPATH may not load (docs/emulator-core.md). */
static void *dlopen_reporting(const char *file, int mode)
{
	void *(*real)(const char *, int) = NEXT(dlopen);
	void *known = file ? real(file, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	void *h = real(file, mode);
	if (known) {
		dlclose(known);
	} else if (h) {
		struct link_map *lm = NULL;
		struct stat st;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && stat(lm->l_name, &st) == 0)
			perf_record_mmaps_of(major(st.st_dev), minor(st.st_dev), st.st_ino);
	}
	return h;
}

EMU_EXPORT void *dlopen(const char *file, int mode)
{
	if (perf_mmap_records_wanted())
		return dlopen_reporting(file, mode);
	return NEXT(dlopen)(file, mode);
}

/* SCM_RIGHTS: an event fd sent to another process of the run reads there what the event counts (the kernel
 * passes the event's file; here the sender publishes the event's values and the receiver adopts the fd). */
static void scm_rights_fds(struct msghdr *m, void (*each)(int fd))
{
	if (!m || !m->msg_control)
		return;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			each(fd);
		}
	}
}

static void share_fd(int fd)
{
	struct emu_event *ev = event_of_fd(fd);
	if (ev)
		perf_share(ev);
}

static void adopt_fd(int fd)
{
	struct emu_event *ev;
	if (!event_of_fd(fd) && fdtab_init() == 0 && fd >= 0 && (size_t)fd < fdtab_len &&
	    perf_adopt(fd, &ev) == 0)
		fdtab_set(fd, ev);
}

EMU_EXPORT ssize_t sendmsg(int s, const struct msghdr *m, int flags)
{
	scm_rights_fds((struct msghdr *)m, share_fd);
	return NEXT(sendmsg)(s, m, flags);
}

EMU_EXPORT ssize_t recvmsg(int s, struct msghdr *m, int flags)
{
	ssize_t r = NEXT(recvmsg)(s, m, flags);
	if (r >= 0) {
		int saved = errno;
		scm_rights_fds(m, adopt_fd);
		errno = saved;
	}
	return r;
}

/* fork: PERF_RECORD_FORK for the forking thread's events (the child's pid is its tid). */
EMU_EXPORT pid_t fork(void)
{
	pid_t (*real)(void) = NEXT(fork);
	uint64_t outer =
	    emu_run_fork_seq(); /* a fork this one interrupts (in a signal handler) needs its own */
	pid_t r = real();
	uint64_t seq = emu_run_fork_seq(); /* this fork's, before a handler that forks can change it */
	if (r > 0) {
		int saved = errno;
		emu_guard_enter();  /* the program's handlers wait: they are never the kernel's */
		emu_kernel_enter(); /* the emulator's work, the kernel's: never the user's instructions */
		perf_record_fork(emu_gettid(), r, r, seq);
		emu_kernel_leave();
		emu_guard_leave();
		errno = saved;
	}
	if (r != 0)
		emu_run_set_fork_seq(outer); /* the child keeps this fork's: its own slot's */
	return r;
}

/* The wait family: a child that died without its exit path (SIGKILL) has its PERF_RECORD_EXIT written by the
 * kernel in do_exit, before anyone can wait for it; its own emulator never runs again, and a parent with a
 * SIGCHLD handler writes it before the handler runs (fe_signal.c). A parent without one (a shell's `wait`
 * after `kill -9 $!`) learns of the death here: the EXIT is written before the wait returns the child,
 * so no reader of the rings sees the child gone and its EXIT missing (perf_remote_child_exited; it scans
 * the run's table only when a child of this process has a live slot whose EXIT nobody wrote). */
static void child_waited(void)
{
	int saved = errno;
	emu_guard_enter();
	emu_kernel_enter();
	perf_remote_child_exited();
	emu_kernel_leave();
	emu_guard_leave();
	errno = saved;
}

EMU_EXPORT pid_t wait(int *status)
{
	pid_t r = NEXT(wait)(status);
	if (r > 0)
		child_waited();
	return r;
}

EMU_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	pid_t r = NEXT(waitpid)(pid, status, options);
	if (r > 0)
		child_waited();
	return r;
}

EMU_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	pid_t r = NEXT(wait3)(status, options, ru);
	if (r > 0)
		child_waited();
	return r;
}

EMU_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	pid_t r = NEXT(wait4)(pid, status, options, ru);
	if (r > 0)
		child_waited();
	return r;
}

EMU_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	int r = NEXT(waitid)(idtype, id, info, options);
	if (r == 0 && info && info->si_pid > 0 && (options & WEXITED))
		child_waited();
	return r;
}

/* The front end's own wrappers find libc's functions at load time: the first fork or wait is often in a
 * signal handler (SIGCHLD), where dlsym (it takes the loader's lock) is not safe. */
static void resolve_next_fns(void)
{
	(void)NEXT(fork);
	(void)NEXT(wait);
	(void)NEXT(waitpid);
	(void)NEXT(wait3);
	(void)NEXT(wait4);
	(void)NEXT(waitid);
}

/* A thread: PERF_RECORD_FORK for its creator's events when it starts, PERF_RECORD_EXIT for its own when its
 * start routine returns or it calls pthread_exit. */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	pid_t creator;
};

/* A thread's end, once: its EXIT and its last counts (perf_record_exit), and its record marked ended so a
 * later thread on its tid does not take it, its clock and its slot in the run's table. */
static __thread int thread_end_done;

static void thread_end(void)
{
	if (thread_end_done)
		return;
	thread_end_done = 1;
	/* The records' writing reaches cancellation points (open, read): a cancel still pending when the
	 * start routine returned must not act there, inside the emulator, where the program's own thread
	 * would have met none (it returns its value, not PTHREAD_CANCELED). The thread ends next. */
	int old_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old_state);
	perf_record_exit();
	emu_thread_ended();
}

/* A cancelled thread unwinds past the trampoline's end and the pthread_exit wrapper. Cancelled in its own
 * code it ends as any thread does; cancelled at a cancellation point inside an emulated call (the guard
 * held), the emulator's state is not whole enough to write records: only its record is marked ended. */
static void thread_unwound(void *unused)
{
	(void)unused;
	if (emu_guard_inside()) {
		thread_end_done = 1;
		emu_thread_ended();
	}
	thread_end();
}

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	free(p);
	emu_guard_enter();
	emu_kernel_enter();
	perf_record_fork(s.creator, emu_getpid(), emu_gettid(), 0);
	emu_kernel_leave();
	emu_guard_leave();
	void *r;
	pthread_cleanup_push(thread_unwound, NULL);
	r = s.fn(s.arg);
	pthread_cleanup_pop(0);
	thread_end();
	return r;
}

EMU_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = NEXT(pthread_create);
	struct thread_start *s = malloc(sizeof(*s));
	if (!s)
		return real(th, attr, fn,
		            arg); /* no memory for the wrapper: the thread just gets no records */
	*s = (struct thread_start){fn, arg, emu_gettid()};
	int r = real(th, attr, thread_trampoline, s);
	if (r != 0)
		free(s);
	return r;
}

EMU_EXPORT void pthread_exit(void *value)
{
	void (*real)(void *) = NEXT(pthread_exit);
	thread_end();
	real(value);
	__builtin_unreachable();
}
