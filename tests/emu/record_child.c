// SPDX-License-Identifier: MIT
/* A workload for the perf record checks of tests/emu/test_emu_mproc.sh: a hot function under a known call
 * chain, in the process perf starts, in a forked child, or in a child that forked and exec'd. Built with
 * frame pointers (the kernel walks a user call chain by them) and without inlining, so every function keeps
 * its name and frame.
 *
 * main N: spin N iterations in record_hot_main (called by record_outer -> record_middle).
 * fork N: a forked child spins N in record_hot_child; the parent only waits.
 * forkexec N: a forked child execs this program as "exec N", which spins N in record_hot_exec.
 * killed N: a forked child spins N in record_hot_child, then kills itself with SIGKILL.
 * selfkill N: spins N in record_hot_main, then kills itself with SIGKILL (no exit path of its own runs).
 * thread N: a thread spins N in record_hot_thread; the main thread only joins it.
 * both N: a forked child spins N in record_hot_child while the parent spins N in record_hot_main (two writers
 * of one ring when they share a CPU).
 * enabled N: spins in record_wait_enabled until its emulator has written a sample of its own (the event perf
 * opened disabled was enabled: perf record -D's ENABLE reached it), then N in record_hot_main. perf enables
 * after a delay in wall time; a command that started the hot loop at once could end before perf got a CPU
 * (seen under load: no sample at all). Waits at most 64 N iterations, then says so and exits 1 without the
 * hot loop. Without the emulator (no rvemu_get_stats) it cannot know: the hot loop starts at once. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rvemu.h"

static volatile unsigned long sink;

/* Called after each hot loop: the hot functions are not leaves, so they set up their frame (a leaf may not,
 * and then its caller is missing from the frame-pointer chain, on Linux as here). */
__attribute__((noinline)) void record_done(void)
{
	sink++;
}

#define SPIN(n)                                                                                              \
	do {                                                                                                 \
		for (unsigned long i = 0; i < (n); i++)                                                      \
			sink += i ^ (sink >> 3);                                                             \
		record_done();                                                                               \
	} while (0)

__attribute__((noinline)) void record_hot_main(unsigned long n)
{
	SPIN(n);
}

__attribute__((noinline)) void record_hot_child(unsigned long n)
{
	SPIN(n);
}

__attribute__((noinline)) void record_hot_exec(unsigned long n)
{
	SPIN(n);
}

__attribute__((noinline)) void record_hot_thread(unsigned long n)
{
	SPIN(n);
}

/* Spins until this process's emulator wrote a sample (its stats, the shadow of perf's event included), in
 * chunks, at most `cap` iterations: 0 once one was written, -1 if none was. Not a hot function of the checks:
 * the samples taken here are the few between the first one written and the next look. */
__attribute__((noinline)) int record_wait_enabled(void (*get_stats)(struct rvemu_stats *), unsigned long cap)
{
	const unsigned long chunk = 1ul << 16;
	struct rvemu_stats st;
	for (unsigned long done = 0; done < cap; done += chunk) {
		get_stats(&st);
		if (st.samples_written > 0)
			return 0;
		for (unsigned long i = 0; i < chunk; i++)
			sink += i ^ (sink >> 3);
	}
	get_stats(&st);
	return st.samples_written > 0 ? 0 : -1;
}

__attribute__((noinline)) void record_middle(void (*f)(unsigned long), unsigned long n)
{
	f(n);
	sink++; /* not a tail call: record_middle stays in the chain */
}

__attribute__((noinline)) void record_outer(void (*f)(unsigned long), unsigned long n)
{
	record_middle(f, n);
	sink++;
}

static void *thread_body(void *arg)
{
	record_outer(record_hot_thread, *(unsigned long *)arg);
	return NULL;
}

static int wait_child(pid_t pid)
{
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(
		    stderr,
		    "usage: record_child main|thread|fork|forkexec|killed|selfkill|both|enabled|exec N\n");
		return 2;
	}
	unsigned long n = strtoul(argv[2], NULL, 0);
	if (strcmp(argv[1], "main") == 0) {
		record_outer(record_hot_main, n);
		return 0;
	}
	if (strcmp(argv[1], "enabled") == 0) {
		void (*get_stats)(struct rvemu_stats *) =
		    RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
		if (get_stats && record_wait_enabled(get_stats, 64 * n) != 0) {
			fprintf(stderr,
			        "record_child: no sample of its own written in %lu iterations: its event was "
			        "never enabled\n",
			        64 * n);
			return 1;
		}
		record_outer(record_hot_main, n);
		return 0;
	}
	if (strcmp(argv[1], "selfkill") == 0) {
		record_outer(record_hot_main, n);
		raise(SIGKILL);
		return 1;
	}
	if (strcmp(argv[1], "exec") == 0) {
		record_outer(record_hot_exec, n);
		return 0;
	}
	if (strcmp(argv[1], "thread") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, thread_body, &n) != 0)
			return 1;
		return pthread_join(th, NULL) != 0;
	}
	if (strcmp(argv[1], "both") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			record_outer(record_hot_child, n);
			_exit(0);
		}
		record_outer(record_hot_main, n);
		return wait_child(pid);
	}
	if (strcmp(argv[1], "fork") == 0 || strcmp(argv[1], "killed") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			record_outer(record_hot_child, n);
			if (strcmp(argv[1], "killed") == 0)
				raise(SIGKILL);
			_exit(0);
		}
		int r = wait_child(pid);
		return strcmp(argv[1], "killed") == 0 ? r != 128 + SIGKILL : r;
	}
	if (strcmp(argv[1], "forkexec") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			char self[4096];
			ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
			if (len >
			    0) { /* its own path: the new image's COMM is "record_child", as perf shows it */
				self[len] = 0;
				execl(self, argv[0], "exec", argv[2], (char *)NULL);
			}
			_exit(127);
		}
		return wait_child(pid);
	}
	fprintf(stderr, "record_child: unknown mode %s\n", argv[1]);
	return 2;
}
