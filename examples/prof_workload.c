/* SPDX-License-Identifier: MIT */
/* A workload for rvprof with known shares: per iteration, hot_kernel() costs 7 units, warm_kernel() 2 and
 * cold_kernel() 1, called as main -> run_iterations -> compute_step -> hot_kernel (warm and cold from
 * compute_step too). Under the emulator's virtual clock a unit is `unit` cycles through rvemu_advance(), so
 * sampling cycles every `unit` events gives exactly 7, 2 and 1 samples per iteration per thread; with
 * --spin the kernels burn CPU instead (the CPU-time clock, or a real board), 7:2:1 in loop iterations.
 *
 *   prof_workload [--spin] [--threads N] [--exit STATUS] UNIT ITERATIONS
 *
 * With --threads N the iterations run in N threads (the main thread waits); the exit status is STATUS. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int (*advance)(uint64_t);
static uint64_t unit, iterations;
static int spin;
static volatile uint64_t sink;

static inline __attribute__((always_inline)) void burn(uint64_t units)
{
	if (!spin) {
		advance(units * unit);
		return;
	}
	for (uint64_t i = 0; i < units * unit; i++)
		sink += i ^ (sink >> 3);
}

/* noinline: each kernel is its own function in the profile, and its rvemu_advance() call is its own PC */
__attribute__((noinline)) void hot_kernel(void)
{
	burn(7);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void warm_kernel(void)
{
	burn(2);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void cold_kernel(void)
{
	burn(1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void compute_step(void)
{
	hot_kernel();
	warm_kernel();
	cold_kernel();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void *run_iterations(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < iterations; i++)
		compute_step();
	return NULL;
}

static uint64_t number(const char *s, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s == '-' || *end || v == 0) {
		fprintf(stderr, "prof_workload: %s must be a positive number, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int threads = 0, status = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--spin") == 0)
			spin = 1;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = (int)number(argv[++i], "--threads");
		else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
			status = atoi(argv[++i]);
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr,
		        "usage: prof_workload [--spin] [--threads N] [--exit STATUS] UNIT ITERATIONS\n");
		return 2;
	}
	unit = number(argv[i], "UNIT");
	iterations = number(argv[i + 1], "ITERATIONS");
	if (!spin) {
		advance = (int (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_advance");
		if (!advance || advance(0) != 0) {
			fprintf(
			    stderr,
			    "prof_workload: needs the emulator's virtual clock (rvemu-run --clock virtual), "
			    "or --spin\n");
			return 2;
		}
	}
	if (threads == 0) {
		run_iterations(NULL);
		return status;
	}
	pthread_t t[64];
	if (threads > 64)
		threads = 64;
	for (int k = 0; k < threads; k++)
		if (pthread_create(&t[k], NULL, run_iterations, NULL) != 0) {
			fprintf(stderr, "prof_workload: pthread_create failed\n");
			return 2;
		}
	for (int k = 0; k < threads; k++)
		pthread_join(t[k], NULL);
	return status;
}
