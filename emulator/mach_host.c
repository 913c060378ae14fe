// SPDX-License-Identifier: MIT
/* The host's real libc functions (mach_host.def lists them), resolved lazily with dlsym(RTLD_NEXT). */
#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mach.h"

#define EMU_REAL_DECL(ret, fn, ...) ret (*emu_real_##fn)(__VA_ARGS__)
#include "mach_host.def"
#undef EMU_REAL_DECL

void *emu_dlsym_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "librvemu: libc has no %s\n", name);
		abort();
	}
	return p;
}

/* The thread's and the process's identity, asked of the kernel once (glibc caches neither since 2.25): every
 * emulated call needs them, and a system call each would be most of its host calls. fork() makes them stale
 * in the child, which forgets them first thing (emu_identity_forget, the first fork child handler: see
 * emu_threads_init). A child made by a raw clone or fork system call, not libc's fork(), would keep them:
 * the emulator does not support such children (its locks and tables are as the parent's, too). */
static __thread pid_t own_tid __attribute__((tls_model("initial-exec")));
static pid_t own_pid;

pid_t emu_gettid(void)
{
	pid_t tid = own_tid;
	if (!tid)
		tid = own_tid = (pid_t)EMU_REAL(syscall)(SYS_gettid);
	return tid;
}

pid_t emu_getpid(void)
{
	pid_t pid = __atomic_load_n(&own_pid, __ATOMIC_RELAXED);
	if (!pid) {
		pid = getpid();
		__atomic_store_n(&own_pid, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

void emu_identity_forget(void)
{
	own_tid = 0;
	__atomic_store_n(&own_pid, 0, __ATOMIC_RELAXED);
}

/* rt_sigprocmask(how, set, NULL). Signals the emulator deferred (emu_signal_defer) are delivered the moment
 * it unblocks them, so their context is the instruction after this system call. On riscv64 the call is made
 * here, in code built with unwind tables: Debian 12's riscv64 glibc has none for pthread_sigmask or
 * sigprocmask, and libunwind could not step out of a signal delivered inside them (the call stacks of samples
 * stopped at the sampled function). The sets never hold glibc's internal signals; the kernel's sigset is the
 * first 64 bits. */
void emu_sigmask(int how, const sigset_t *set)
{
#if defined(__riscv) && __riscv_xlen == 64
	register long a0 __asm__("a0") = how;
	register long a1 __asm__("a1") = (long)set;
	register long a2 __asm__("a2") = 0;
	register long a3 __asm__("a3") = 8; /* the kernel's sigset_t: 64 signals */
	register long a7 __asm__("a7") = SYS_rt_sigprocmask;
	__asm__ __volatile__("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a7) : "memory");
#else
	pthread_sigmask(how, set, NULL);
#endif
}

/* rt_tgsigqueueinfo to the calling thread: the kernel lets a thread queue any si_code to itself, so the
 * handler gets the siginfo given. Delivered as the call returns (made here on riscv64, as emu_sigmask). */
void emu_sigqueue_self(int sig, siginfo_t *info)
{
#if defined(__riscv) && __riscv_xlen == 64
	register long a0 __asm__("a0") = emu_getpid();
	register long a1 __asm__("a1") = emu_gettid();
	register long a2 __asm__("a2") = sig;
	register long a3 __asm__("a3") = (long)info;
	register long a7 __asm__("a7") = SYS_rt_tgsigqueueinfo;
	__asm__ __volatile__("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a7) : "memory");
#else
	EMU_REAL(syscall)(SYS_rt_tgsigqueueinfo, (long)emu_getpid(), (long)emu_gettid(), (long)sig, info);
#endif
}
