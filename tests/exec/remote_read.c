// SPDX-License-Identifier: MIT
/* A reader's own kernel work is never the target's (docs/exec-counts.md, "Which kernel work an event
 * counts"): a riscv64 program for CVA6 (no privilege filter: an event counts its target's kernel work too)
 * run under rvemu-run --exec. The main thread opens `instructions` on a second thread, which runs a loop of N
 * iterations and then blocks in the host's futex (a raw system call: no emulator code, its slot stands
 * still). The main thread then reads the event READS times: each read is the emulator's work in the main
 * thread's slot, not the target's, so the count read last equals the count read first. Prints "remote first F
 * last L". Arguments: N READS. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int target_tid, go;
static int futex_word;
static long iterations;

static void *target(void *arg)
{
	(void)arg;
	target_tid = (int)gettid();
	for (long spins = 0; !go && spins < 4000000000L; spins++) /* the event is opened meanwhile */
		;
	long n = iterations;
	__asm__ volatile("1: addi %0, %0, -1\n"
	                 "   bnez %0, 1b\n"
	                 : "+r"(n));
	while (!__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT, 0, NULL, NULL, 0);
	return NULL;
}

/* Whether the thread sleeps (state S in /proc): blocked in the futex. */
static int sleeping(int tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int main(int argc, char **argv)
{
	iterations = argc > 1 ? atol(argv[1]) : 100000;
	long reads = argc > 2 ? atol(argv[2]) : 100;
	pthread_t th;
	if (iterations < 1 || reads < 1 || pthread_create(&th, NULL, target, NULL) != 0)
		return 2;
	for (long spins = 0; !target_tid && spins < 4000000000L; spins++)
		;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	int fd = (int)syscall(SYS_perf_event_open, &a, target_tid, -1, -1, 0);
	if (fd < 0) {
		perror("remote_read: perf_event_open");
		return 1;
	}
	go = 1;
	int asleep = 0;
	for (long tries = 0; tries < 1000000 && !asleep;
	     tries++) { /* bounded: the loop ends, then it blocks */
		asleep = sleeping(target_tid);
		if (!asleep)
			sched_yield();
	}
	uint64_t first = 0, last = 0;
	int ok = asleep && read(fd, &first, sizeof(first)) == sizeof(first);
	for (long i = 1; ok && i < reads; i++)
		ok = read(fd, &last, sizeof(last)) == sizeof(last);
	__atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE, 1, NULL, NULL, 0);
	pthread_join(th, NULL);
	if (!ok) {
		fprintf(stderr, "remote_read: the target never blocked, or a read failed\n");
		return 1;
	}
	printf("remote first %llu last %llu\n", (unsigned long long)first, (unsigned long long)last);
	return 0;
}
