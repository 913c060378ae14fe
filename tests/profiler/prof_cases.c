/* SPDX-License-Identifier: MIT */
/* Programs that used to defeat rvprof (issue 20), for tests/profiler/run-rvprof-tests.sh. Under the
 * emulator's virtual clock, work() costs UNIT cycles per call through rvemu_advance(), so sampling every UNIT
 * cycles gives exactly one sample per call, in work(). Usage: prof_cases MODE UNIT CALLS [THREADS], MODE:
 * - pthread-exit: main starts THREADS threads that call work() CALLS times each, then ends with pthread_exit
 *   (the threads end normally);
 * - fork: CALLS calls, then a child that makes CALLS calls and returns from main, then (after reaping it)
 *   CALLS more calls;
 * - fork-hot: as fork, but the child calls child_hot() instead of work(), THREADS times CALLS (default 1);
 * - fork-exec PROGRAM ARGS...: CALLS calls, then a child that execs PROGRAM ARGS (execv), then (after reaping
 *   it: its status must be 0) CALLS more calls;
 * - exec PROGRAM ARGS...: CALLS calls, then the process execs PROGRAM ARGS (execvp);
 * - spawn PROGRAM ARGS...: CALLS calls, then posix_spawn PROGRAM ARGS (no fork handlers run), reaped;
 * - fork-exit: CALLS calls, then a child that makes CALLS calls and ends with _exit(0) (no atexit handlers);
 * - fork-threads: CALLS calls, then a child that starts THREADS threads of CALLS calls each and joins them;
 * - reuse-fork: closes rvprof's socket (RVPROF_SOCK_FD), puts another Unix socket of the same type on its
 *   number, then as fork-hot; the exit status is 3 if anything arrived on that socket;
 * - thread-fork: a thread makes CALLS calls, then forks a child that calls child_hot() CALLS times; the
 * thread reaps it, then main joins the thread;
 * - scribble: overwrites rvprof's shared state page, then CALLS calls;
 * - scribble-exit: CALLS calls, overwrites the page, then _exit(3): the agent never gets to write it again.
 * The exit status is 0 (3 for scribble-exit), or 2 on a usage or setup error. */
#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prof_shm.h"

static int (*advance)(uint64_t);
static uint64_t unit, calls;

__attribute__((noinline)) void work(void)
{
	advance(unit);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void child_hot(void)
{
	advance(unit);
	__asm__ volatile("" ::: "memory");
}

static void *run_calls(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < calls; i++)
		work();
	return NULL;
}

/* Forks a child that runs `child` (then returns from main's caller: exit()), reaps it. 0, or -1. */
static int fork_and_reap(void (*child)(void))
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child();
		exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "prof_cases: the child failed\n");
		return -1;
	}
	return 0;
}

static int nthreads;

static void child_threads(void)
{
	pthread_t t[64];
	int n = nthreads < 64 ? nthreads : 64;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, run_calls, NULL) != 0)
			exit(2);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void child_hot_calls(void)
{
	for (uint64_t i = 0; i < calls; i++)
		child_hot();
}

static void *thread_forks(void *arg)
{
	run_calls(arg);
	return (void *)(intptr_t)fork_and_reap(child_hot_calls);
}

/* The agent's state page: a shared mapping of one page that starts with RVPROF_SHM_MAGIC. Found through
 * /proc/self/maps, whatever rvprof named the file (or did not). Fills it with 'A' (0x41414141...). */
static int scribble(void)
{
	FILE *m = fopen("/proc/self/maps", "r");
	if (!m)
		return -1;
	char line[4096 + 256];
	int found = 0;
	while (fgets(line, sizeof(line), m)) {
		unsigned long long start, end;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || strcmp(perms, "rw-s") != 0 ||
		    end - start < sizeof(struct rvprof_shm))
			continue;
		uint32_t *p = (uint32_t *)(uintptr_t)start;
		if (*p != RVPROF_SHM_MAGIC)
			continue;
		memset(p, 'A', sizeof(struct rvprof_shm));
		found = 1;
	}
	fclose(m);
	return found ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr,
		        "usage: prof_cases MODE UNIT CALLS [THREADS | PROGRAM ARGS...] (see the source)\n");
		return 2;
	}
	const char *mode = argv[1];
	unit = strtoull(argv[2], NULL, 10);
	calls = strtoull(argv[3], NULL, 10);
	advance = (int (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_advance");
	if (!advance || advance(0) != 0 || unit == 0 || calls == 0) {
		fprintf(stderr, "prof_cases: needs the emulator's virtual clock and UNIT, CALLS > 0\n");
		return 2;
	}
	if (strcmp(mode, "pthread-exit") == 0 && argc == 5) {
		int n = atoi(argv[4]);
		for (int i = 0; i < n && i < 64; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, run_calls, NULL) != 0 || pthread_detach(t) != 0) {
				fprintf(stderr, "prof_cases: pthread_create failed\n");
				return 2;
			}
		}
		pthread_exit(NULL);
	}
	if (strcmp(mode, "fork") == 0) {
		run_calls(NULL);
		/* no fflush(NULL) before fork: it would also flush what the agent's stdio holds */
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			run_calls(NULL);
			return 0; /* exit() in the child: its atexit handlers and stdio flush run */
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "prof_cases: the child failed\n");
			return 2;
		}
		run_calls(NULL);
		return 0;
	}
	if (strcmp(mode, "scribble") == 0) {
		if (scribble() != 0) {
			fprintf(stderr, "prof_cases: no rvprof state page found\n");
			return 2;
		}
		run_calls(NULL);
		return 0;
	}
	if (strcmp(mode, "scribble-exit") == 0) {
		run_calls(NULL);
		_exit(scribble() == 0 ? 3 : 2);
	}
	if (strcmp(mode, "fork-hot") == 0 || strcmp(mode, "fork-exit") == 0) {
		uint64_t times = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
		run_calls(NULL);
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			if (mode[5] == 'e') {
				run_calls(NULL);
				_exit(0); /* no atexit handler: the agent never finishes this child's file */
			}
			for (uint64_t i = 0; i < calls * times && i < 1000000; i++)
				child_hot();
			return 0;
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "prof_cases: the child failed\n");
			return 2;
		}
		run_calls(NULL);
		return 0;
	}
	if ((strcmp(mode, "fork-exec") == 0 || strcmp(mode, "exec") == 0 || strcmp(mode, "spawn") == 0) &&
	    argc > 4) {
		run_calls(NULL);
		if (mode[0] == 'e') {
			execvp(argv[4], argv + 4);
			perror("prof_cases: execvp");
			return 2;
		}
		extern char **environ;
		pid_t pid;
		if (mode[0] == 's') {
			if (posix_spawn(&pid, argv[4], NULL, NULL, argv + 4, environ) != 0)
				return 2;
		} else {
			pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0) {
				execv(argv[4], argv + 4);
				perror("prof_cases: execv");
				_exit(2);
			}
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "prof_cases: the child failed\n");
			return 2;
		}
		run_calls(NULL);
		return 0;
	}
	if (strcmp(mode, "reuse-fork") == 0) {
		const char *fd_s = getenv(RVPROF_ENV_SOCK);
		int fd = fd_s ? atoi(fd_s) : -1, sv[2];
		if (fd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0 || dup2(sv[1], fd) != fd)
			return 2;
		run_calls(NULL);
		if (fork_and_reap(child_hot_calls) != 0)
			return 2;
		char byte;
		return recv(sv[0], &byte, 1, MSG_DONTWAIT) >= 0 ? 3 : 0;
	}
	if (strcmp(mode, "fork-threads") == 0 && argc == 5) {
		nthreads = atoi(argv[4]);
		run_calls(NULL);
		return fork_and_reap(child_threads) == 0 ? 0 : 2;
	}
	if (strcmp(mode, "thread-fork") == 0) {
		pthread_t t;
		void *ret;
		if (pthread_create(&t, NULL, thread_forks, NULL) != 0 || pthread_join(t, &ret) != 0)
			return 2;
		return ret == NULL ? 0 : 2;
	}
	fprintf(stderr, "prof_cases: unknown mode %s\n", mode);
	return 2;
}
