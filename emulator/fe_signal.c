// SPDX-License-Identifier: MIT
/* The program's signal handlers behind the emulator's re-entry guard (mach.h, emu_signal_defer).
 *
 * An emulated system call must be atomic for the caller's signal handlers, as a real one is: a handler that
 * interrupts the thread inside the emulator and calls back into it (PAPI's SIGPROF and overflow handlers read
 * and refresh their events) must not find the perf lock held by the code it interrupted. The emulator no
 * longer blocks every signal through the kernel around its calls (two system calls each); instead the
 * program's handlers are installed behind a trampoline that asks emu_signal_defer first: a signal that lands
 * inside the emulator is kept with its siginfo and queued again to the thread when the emulator leaves,
 * which delivers it where the blocked-signals scheme delivered it. Outside the emulator the trampoline calls
 * the program's handler at once with the kernel's siginfo and context.
 *
 * The program's sigaction() and signal() come here through the libc front end (fe_libc.c) for every signal
 * but SIGILL on riscv64 (fe_trap.c owns it). The kernel gets the program's sa_mask and flags (SA_RESTART,
 * SA_ONSTACK, SA_NODEFER, SA_RESETHAND, ...) with the trampoline as an SA_SIGINFO handler; sigaction's `old`
 * is what the program installed. SIG_DFL and SIG_IGN go to the kernel as they are. Not interposed:
 * bsd_signal, sysv_signal, sigset, a raw rt_sigaction system call and handlers installed before the
 * emulator loaded: those handlers are called directly, and one that reads an event while the thread is
 * inside the emulator would wait for the lock its own thread holds.
 *
 * The recorded handlers are published under a sequence counter per signal; a writer runs with signals
 * blocked and owns the counter (odd) across the kernel's sigaction, so a trampoline on any thread sees a
 * whole record and writers of one signal take turns. The trampoline that puts an SA_RESETHAND handler back
 * (reinstall_reset_handler) is such a writer too, and only from the counter value it read the handler under.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "fe.h"
#include "mach.h"
#include "perf.h"
#include "rvemu.h"

struct recorded_handler {
	unsigned seq;        /* odd while a writer changes it */
	int installed;       /* sa is the disposition now (not replaced by SIG_IGN or SIG_DFL since) */
	struct sigaction sa; /* the program's last handler (a function) */
};
static struct recorded_handler programs[_NSIG];

#define SEQ_TRIES 1000000 /* a writer holds the counter for one sigaction call: far fewer suffice */

/* The program's last handler of `sig`, whether it is still installed, and the sequence value the record was
 * read under (odd: no whole record was seen, which only a writer stalled for SEQ_TRIES reads can cause). */
static unsigned read_recorded(int sig, struct sigaction *out, int *installed)
{
	struct recorded_handler *r = &programs[sig];
	for (int tries = 0; tries < SEQ_TRIES; tries++) {
		unsigned s = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		memcpy(out, &r->sa, sizeof(*out));
		*installed = r->installed;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) == s)
			return s;
	}
	memcpy(out, &r->sa, sizeof(*out)); /* never reached in practice: a writer stalled for that long */
	*installed = r->installed;
	return 1;
}

static int is_function(const struct sigaction *sa)
{
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void program_signal(int sig, siginfo_t *si, void *uc);

/* What the kernel gets for the program's handler: the trampoline, with the program's mask and flags. */
static struct sigaction behind_trampoline(const struct sigaction *program)
{
	struct sigaction k = *program;
	k.sa_sigaction = program_signal;
	k.sa_flags |= SA_SIGINFO;
	return k;
}

/* SA_RESETHAND: the kernel reset the disposition when it delivered this signal, which the emulator defers;
 * the program has not seen it yet, so its handler `h` goes back for the copy queued for later (that delivery
 * resets it). Only as a writer that finds the record unchanged since `h` was read under `seen`: a sigaction
 * of another thread in between (SIG_IGN, another handler) is the program's newer word and stays. */
static void reinstall_reset_handler(int sig, const struct sigaction *h, unsigned seen)
{
	struct recorded_handler *r = &programs[sig];
	sigset_t all, saved;
	int saved_errno = errno;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved); /* no handler of this thread may wait for the counter */
	unsigned s = seen;
	if (!(seen & 1) &&
	    __atomic_compare_exchange_n(&r->seq, &s, seen + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		struct sigaction k = behind_trampoline(h);
		EMU_REAL(sigaction)(sig, &k, NULL);
		__atomic_store_n(&r->seq, seen + 2, __ATOMIC_RELEASE);
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	errno = saved_errno;
}

static void (*volatile resethand_test_hook)(int);

EMU_EXPORT void rvemu_test_resethand_hook(void (*fn)(int sig))
{
	resethand_test_hook = fn;
}

static void program_signal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction h;
	int installed;
	unsigned seen = read_recorded(sig, &h, &installed);
	if (emu_signal_defer(sig, si, uc)) {
		if ((h.sa_flags & SA_RESETHAND) && installed && is_function(&h)) {
			void (*hook)(int) = resethand_test_hook;
			if (hook)
				hook(sig);
			reinstall_reset_handler(sig, &h, seen);
		}
		return;
	}
	if (sig == SIGCHLD && is_function(&h))
		perf_remote_child_exited(); /* a killed child's EXIT first, as the kernel wrote it at its
		                               death */
	if (h.sa_flags & SA_SIGINFO)
		h.sa_sigaction(sig, si, uc);
	else if (is_function(&h))
		h.sa_handler(sig);
	/* else the program set SIG_DFL or SIG_IGN after the kernel chose this delivery: as if it came first
	 */
}

int fe_signal_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction kernel_old;
	if (sig <= 0 || sig >= _NSIG || !act) { /* a query (or the kernel's EINVAL) */
		if (EMU_REAL(sigaction)(sig, act, &kernel_old) != 0)
			return -1;
		if (old) {
			int installed;
			if (kernel_old.sa_sigaction == program_signal)
				read_recorded(sig, old, &installed);
			else
				*old = kernel_old;
		}
		return 0;
	}
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	struct recorded_handler *r = &programs[sig];
	unsigned s = __atomic_load_n(&r->seq, __ATOMIC_RELAXED);
	while ((s & 1) ||
	       !__atomic_compare_exchange_n(&r->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		s = __atomic_load_n(&r->seq,
		                    __ATOMIC_RELAXED); /* another thread's writer: one sigaction call */
	/* SIG_IGN and SIG_DFL are recorded as "not installed": a trampoline that reads the record must not
	 * put back a handler the program replaced (reinstall_reset_handler); one the kernel chose before the
	 * change still calls the handler it was chosen for (program_signal) */
	struct sigaction previous = r->sa, kernel_new = *act;
	int was_installed = r->installed;
	r->installed = is_function(act);
	if (is_function(act)) {
		r->sa = *act;
		kernel_new = behind_trampoline(act);
	}
	int rc = EMU_REAL(sigaction)(sig, &kernel_new, &kernel_old);
	int err = errno;
	if (rc != 0) {
		r->sa = previous;
		r->installed = was_installed;
	}
	__atomic_store_n(&r->seq, s + 2, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	errno = err;
	if (rc != 0)
		return -1;
	if (old)
		*old = kernel_old.sa_sigaction == program_signal ? previous : kernel_old;
	return 0;
}
