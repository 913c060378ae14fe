// SPDX-License-Identifier: MIT
/* Overflow signals to the F_SETOWN(_EX) owner. They are queued under the perf lock and sent after it is
 * released and the thread has left the emulator: a signal to ourselves runs its handler at once, and PAPI's
 * handler calls ioctl() on the event. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_priv.h"

struct pending_signal {
	pid_t pid, tid;
	int signo;
	siginfo_t info;
};
#define MAX_PENDING 256
static __thread struct pending_signal pending[MAX_PENDING] __attribute__((tls_model("initial-exec")));
static __thread unsigned npending __attribute__((tls_model("initial-exec")));

void emu_queue_signal(struct emu_event *ev, int code)
{
	if (npending == MAX_PENDING || !ev->has_owner)
		return; /* F_SETOWN never called: nobody to signal, as the kernel */
	struct pending_signal *p = &pending[npending++];
	memset(p, 0, sizeof(*p));
	p->pid = ev->owner_type == F_OWNER_TID ? emu_getpid() : ev->owner;
	p->tid = ev->owner_type == F_OWNER_TID ? ev->owner : 0;
	p->signo = ev->signo ? ev->signo : SIGIO;
	p->info.si_signo = p->signo;
	p->info.si_code = code;
	p->info.si_fd = ev->fd;
	p->info.si_band =
	    code == POLL_HUP ? (POLLHUP | POLLERR) : (POLLIN | POLLRDNORM); /* kernel band_table */
}

static long send_one(struct pending_signal *p)
{
	if (p->tid)
		return EMU_REAL(syscall)(SYS_rt_tgsigqueueinfo, p->pid, p->tid, p->signo, &p->info);
	return EMU_REAL(syscall)(SYS_rt_sigqueueinfo, p->pid, p->signo, &p->info);
}

void emu_flush_signals_leaving(void)
{
	/* Take the batch inside the guard (a handler of this thread may queue more meanwhile, into
	 * `pending`), then leave the emulator, then send: a signal to ourselves runs its handler at once,
	 * outside the guard and outside the emulator's time, and what it does (read, ioctl, a tick) queues
	 * and sends its own. */
	struct pending_signal batch[MAX_PENDING];
	unsigned n = npending;
	memcpy(batch, pending, n * sizeof(batch[0]));
	npending = 0;
	emu_kernel_leave();
	emu_guard_leave();
	int to_self = 0;
	for (unsigned i = 0; i < n; i++) {
		struct pending_signal *p = &batch[i];
		long r = send_one(p);
		if (r != 0 && errno == EPERM) {
			/* The kernel lets only the target thread itself queue a kernel-style si_code
			 * (POLL_IN); from another thread we keep si_fd and mark the info as queued. */
			p->info.si_code = SI_QUEUE;
			r = send_one(p);
		}
		if (r == 0)
			EMU_STAT_ADD(signals, 1);
		if (r == 0 && (p->tid ? p->tid == emu_gettid() : p->pid == emu_getpid()))
			to_self = 1;
	}
	/* A signal to ourselves runs its handler as the system call that queued it returns -- on Linux. Under
	 * valgrind, which delivers only at its own points (a signal-mask change is one), the handler ran
	 * later, after the program had looked; a mask change that changes nothing makes it run here, as on a
	 * board. Only when a signal was sent: the common path makes no such call. */
	if (to_self) {
		sigset_t none;
		sigemptyset(&none);
		emu_sigmask(SIG_BLOCK, &none);
	}
}
