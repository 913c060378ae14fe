// SPDX-License-Identifier: MIT
/* A workload for tests/emu/test_emu_mproc.sh: processes of one run counting each other.
 *
 * adv N [M [K]]: advance N cycles (virtual clock); with M fork a child that advances M; with K exec itself to
 * advance K (its clock goes on across exec). Each process that ends prints "truth <event> <count>" of its own
 * thread for cycles, instructions and the U74 raw event 0x80200, so the script can sum what perf stat shows.
 *
 * thread N M: advance N, then a thread advances M (inherit reaches threads created later).
 *
 * spawn N K: advance N, then posix_spawn itself to advance K (vfork + exec: no fork handler runs).
 *
 * touch BYTES: write fresh memory once per 4 KiB (page faults).
 *
 * spin N: (CPU-time clock) N iterations of a loop, then its truths as adv prints them.
 *
 * open PID: perf_event_open(cycles, pid = PID); prints "open ok" or "open <errno name>".
 *
 * killed N: fork a child, count its cycles from here, let it advance N and die by SIGKILL; reads the counter
 * after it is reaped: prints "killed <count>". */
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int (*advance)(uint64_t);
static int (*truth)(const char *, uint64_t *);
static int (*truth_raw)(uint64_t, uint64_t *);

static void print_truths(void)
{
	uint64_t c = 0, i = 0, r = 0;
	if (truth("CYCLES", &c) != 0 && truth("cycles", &c) != 0)
		c = 0;
	truth_raw(0x80200, &r);
	if (truth("INSTRUCTIONS", &i) != 0 && truth("instructions", &i) != 0)
		i = 0;
	printf("truth cycles %llu\ntruth instructions %llu\ntruth r80200 %llu\n", (unsigned long long)c,
	       (unsigned long long)i, (unsigned long long)r);
	fflush(stdout);
}

static void *thread_body(void *arg)
{
	advance(*(uint64_t *)arg);
	return NULL;
}

static int open_cycles(pid_t pid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	return (int)syscall(__NR_perf_event_open, &a, pid, -1, -1, 0);
}

int main(int argc, char **argv)
{
	advance = (int (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_advance");
	truth = (int (*)(const char *, uint64_t *))dlsym(RTLD_DEFAULT, "rvemu_truth");
	truth_raw = (int (*)(uint64_t, uint64_t *))dlsym(RTLD_DEFAULT, "rvemu_truth_raw");
	if (!advance || !truth || !truth_raw || argc < 3) {
		fprintf(stderr,
		        "usage: under the emulator, mproc_child adv N [M [K]] | open PID | killed N\n");
		return 2;
	}
	if (strcmp(argv[1], "thread") == 0 && argc == 4) {
		uint64_t m = strtoull(argv[3], NULL, 0);
		pthread_t th;
		advance(strtoull(argv[2], NULL, 0));
		if (pthread_create(&th, NULL, thread_body, &m) != 0 || pthread_join(th, NULL) != 0)
			return 1;
		return 0;
	}
	if (strcmp(argv[1], "spawn") == 0 && argc == 4) {
		char *args[] = {argv[0], "adv", argv[3], NULL};
		extern char **environ;
		pid_t p;
		advance(strtoull(argv[2], NULL, 0));
		fflush(stdout);
		if (posix_spawn(&p, argv[0], NULL, NULL, args, environ) != 0 || waitpid(p, NULL, 0) != p)
			return 1;
		return 0;
	}
	if (strcmp(argv[1], "touch") == 0) { /* page faults: fresh memory written once per 4 KiB */
		size_t n = strtoull(argv[2], NULL, 0);
		char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return 1;
		madvise(m, n, MADV_NOHUGEPAGE); /* a fault per 4 KiB page, not per huge page */
		for (size_t i = 0; i < n; i += 4096)
			m[i] = 1;
		munmap(m, n);
		return 0;
	}
	if (strcmp(argv[1], "spin") == 0) {
		volatile unsigned long sink = 0;
		for (unsigned long i = 0, n = strtoul(argv[2], NULL, 0); i < n; i++)
			sink += i;
		print_truths();
		return 0;
	}
	if (strcmp(argv[1], "open") == 0) {
		int fd = open_cycles((pid_t)atoi(argv[2]));
		printf("open %s\n", fd >= 0           ? "ok"
		                    : errno == EACCES ? "EACCES"
		                    : errno == ESRCH  ? "ESRCH"
		                                      : strerror(errno));
		return 0;
	}
	if (strcmp(argv[1], "killed") == 0) {
		int go[2];
		if (pipe(go) != 0)
			return 1;
		pid_t p = fork();
		if (p == 0) {
			char b;
			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(1);
			advance(strtoull(argv[2], NULL, 0));
			kill(getpid(), SIGKILL);
			_exit(1);
		}
		close(go[0]);
		int fd = open_cycles(p);
		if (write(go[1], "g", 1) != 1)
			return 1;
		close(go[1]);
		int st;
		waitpid(p, &st, 0);
		uint64_t v = 0;
		if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v) || !WIFSIGNALED(st))
			printf("killed failed (fd %d, status %d)\n", fd, st);
		else
			printf("killed %llu\n", (unsigned long long)v);
		return 0;
	}
	advance(strtoull(argv[2], NULL, 0));
	if (argc > 3) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			advance(strtoull(argv[3], NULL, 0));
			print_truths();
			_exit(0);
		}
		waitpid(p, NULL, 0);
	}
	if (argc > 4) {
		char *args[] = {argv[0], "adv", argv[4], NULL};
		execv(argv[0], args);
		return 1;
	}
	print_truths();
	return 0;
}
