// SPDX-License-Identifier: MIT
/* What an emulated counter access costs, relative to a plain (non-inlined) function call, measured in one
 * run: read() of an emulated perf_event fd, and a pop of the distributed HPC's hpcr FIFO (rvhw_csr_read).
 * Also the emulated read() against a native read() of 8 bytes from a pipe, the cheapest real system call
 * that reads (issue 18: an emulated read() should cost at most 2x one).
 *
 *   bench_emulator --loop emu|pipe N   does only N emulated (or pipe) reads, nothing else: run under
 *   `strace -c` or callgrind for N = 0 and N > 0, the difference / N is one call's host system calls or
 *   instructions (bench_papi_overhead.py does it).
 *
 * Each figure is the median over many batches of the per-operation time within a batch; ratios are
 * printed because absolute times from these noisy machines do not compare between runs. Not a test:
 * nothing is asserted. Runs under the emulator with model lowrisc-hpc (it re-executes itself under
 * $RVEMU_LIB when that is set, or run it with rvemu-run --model lowrisc-hpc).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rvhw.h"

#define BATCHES    301
#define CALLS      4096 /* plain calls and read()s per batch */
#define POPS       64   /* one full 64-counter request per batch */
#define POLL_LIMIT 1000000u
#define ALL_BITS   (~0ull)
#define LOCAL_CORE 0u /* manager of hart 0: the first thread that touches the emulator runs there */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The baseline: a call the compiler can neither inline nor drop. */
__attribute__((noinline)) static uint64_t plain_call(uint64_t x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}

static double time_plain_call(void)
{
	double per_op[BATCHES];
	uint64_t acc = 0;

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (int i = 0; i < CALLS; i++)
			acc = plain_call(acc);
		per_op[b] = (now_ns() - t0) / CALLS;
	}
	if (acc == 0)
		printf("impossible\n");
	return median(per_op, BATCHES);
}

static int open_cycles_counter(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 0;
	return (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

/* Returns the median ns per read(), or a negative value when no perf event could be opened. */
static double time_perf_read(void)
{
	double per_op[BATCHES];
	uint64_t count;
	int fd = open_cycles_counter();

	if (fd < 0) {
		printf("perf_event read(): not measured: perf_event_open failed (%s)\n", strerror(errno));
		return -1;
	}
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (int i = 0; i < CALLS; i++)
			if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count)) {
				printf("perf_event read(): not measured: read failed (%s)\n",
				       strerror(errno));
				close(fd);
				return -1;
			}
		per_op[b] = (now_ns() - t0) / CALLS;
	}
	close(fd);
	return median(per_op, BATCHES);
}

/* A pipe holding at least CALLS reads of 8 bytes (64 KiB by default: CALLS x 8 = 32 KiB). */
static int fill_pipe(int fd, size_t bytes)
{
	static const char zeros[CALLS * sizeof(uint64_t)];
	if (bytes > sizeof(zeros))
		bytes = sizeof(zeros);
	return write(fd, zeros, bytes) == (ssize_t)bytes ? 0 : -1;
}

/* Median ns per native read() of 8 bytes from a pipe; negative if the pipe failed. */
static double time_pipe_read(void)
{
	double per_op[BATCHES];
	uint64_t v;
	int p[2];

	if (pipe(p) != 0) {
		printf("pipe read(): not measured: pipe failed (%s)\n", strerror(errno));
		return -1;
	}
	for (int b = 0; b < BATCHES; b++) {
		if (fill_pipe(p[1], CALLS * sizeof(v)) != 0) {
			printf("pipe read(): not measured: write failed (%s)\n", strerror(errno));
			return -1;
		}
		double t0 = now_ns();
		for (int i = 0; i < CALLS; i++)
			if (read(p[0], &v, sizeof(v)) != (ssize_t)sizeof(v)) {
				printf("pipe read(): not measured: read failed (%s)\n", strerror(errno));
				return -1;
			}
		per_op[b] = (now_ns() - t0) / CALLS;
	}
	close(p[0]);
	close(p[1]);
	return median(per_op, BATCHES);
}

/* --loop: the same setup for every N (one open or one pipe and one write), then N reads and nothing else,
 * so the difference between two N is the reads' own cost. */
static int loop_reads(const char *kind, long n)
{
	uint64_t v;
	int fd, p[2] = {-1, -1};

	if (n < 0 || n > CALLS) {
		fprintf(stderr, "bench_emulator: --loop N: N must be 0..%d\n", CALLS);
		return 2;
	}
	if (strcmp(kind, "emu") == 0) {
		fd = open_cycles_counter();
	} else if (strcmp(kind, "pipe") == 0) {
		fd = pipe(p) == 0 && fill_pipe(p[1], (size_t)n * sizeof(v) + 1) == 0 ? p[0] : -1;
	} else {
		fprintf(stderr, "bench_emulator: --loop emu|pipe N\n");
		return 2;
	}
	if (fd < 0) {
		perror("bench_emulator: --loop");
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
			perror("bench_emulator: --loop: read");
			return 1;
		}
	return 0;
}

static uint64_t hpcc_trigger(uint32_t manager_id)
{
	return RVHW_HPCC_TRIGGER | ((uint64_t)manager_id << RVHW_HPCC_ID_SHIFT);
}

/* Request 64 counters of the local core's manager, wait until all arrived, then time the 64 pops. */
static int fill_fifo(void)
{
	uint64_t hpcc = 0;
	unsigned polls = 0;

	if (rvhw_csr_write(RVHW_CSR_HPCC, 0) != RVHW_OK ||
	    rvhw_csr_write(RVHW_CSR_HPCM, ALL_BITS) != RVHW_OK ||
	    rvhw_csr_write(RVHW_CSR_HPCC, hpcc_trigger(RVHW_HPC_MANAGER_ID(LOCAL_CORE, 0))) != RVHW_OK)
		return -1;
	do {
		if (rvhw_csr_read(RVHW_CSR_HPCC, &hpcc) != RVHW_OK)
			return -1;
	} while ((hpcc & RVHW_HPCC_TRIGGER) && ++polls < POLL_LIMIT);
	return polls < POLL_LIMIT ? 0 : -1;
}

static double time_hpcr_pop(void)
{
	double per_op[BATCHES];
	uint64_t v, hpcc = 0;

	for (int b = 0; b < BATCHES; b++) {
		if (fill_fifo() != 0) {
			printf("hpcr pop: not measured: the HPC request did not complete\n");
			return -1;
		}
		double t0 = now_ns();
		for (int i = 0; i < POPS; i++)
			rvhw_csr_read(RVHW_CSR_HPCR, &v);
		per_op[b] = (now_ns() - t0) / POPS;
	}
	rvhw_csr_read(RVHW_CSR_HPCC, &hpcc);
	if (hpcc & RVHW_HPCC_READERROR)
		printf("hpcr pop: warning: a pop found the FIFO empty\n");
	return median(per_op, BATCHES);
}

static void reexec_under_emulator(char **argv)
{
	const char *lib = getenv("RVEMU_LIB"), *old = getenv("LD_PRELOAD");
	char preload[4096];

	if (dlsym(RTLD_DEFAULT, "rvemu_api_version") != NULL)
		return;
	if (lib == NULL || getenv("BENCH_REEXECED") != NULL) {
		fprintf(stderr,
		        "bench_emulator: run it under the emulator: rvemu-run --model lowrisc-hpc -- %s\n"
		        "(or set RVEMU_LIB to librvemu.so)\n",
		        argv[0]);
		exit(1);
	}
	snprintf(preload, sizeof(preload), "%s%s%s", old != NULL ? old : "", old != NULL && *old ? ":" : "",
	         lib);
	setenv("LD_PRELOAD", preload, 1);
	setenv("RVEMU_MODEL", "lowrisc-hpc", 0);
	setenv("BENCH_REEXECED", "1", 1);
	execv("/proc/self/exe", argv);
	perror("execv");
	exit(1);
}

int main(int argc, char **argv)
{
	double call, perf, pop, piped;
	const char *(*model_name)(void);

	reexec_under_emulator(argv);
	if (argc == 4 && strcmp(argv[1], "--loop") == 0)
		return loop_reads(argv[2], strtol(argv[3], NULL, 10));
	if (argc != 1) {
		fprintf(stderr, "usage: bench_emulator [--loop emu|pipe N]\n");
		return 2;
	}
	model_name = (const char *(*)(void))dlsym(RTLD_DEFAULT, "rvemu_model_name");
	printf("emulator model: %s; medians of %d batches\n", model_name ? model_name() : "?", BATCHES);
	call = time_plain_call();
	printf("plain function call:           %8.2f ns  (1.0x)\n", call);
	perf = time_perf_read();
	if (perf > 0)
		printf("emulated perf_event read():    %8.2f ns  (%.1fx a plain call)\n", perf, perf / call);
	piped = time_pipe_read();
	if (piped > 0)
		printf("native pipe read():            %8.2f ns  (%.1fx a plain call)\n", piped,
		       piped / call);
	if (perf > 0 && piped > 0)
		printf("emulated read() vs a native pipe read(): %.2f ns vs %.2f ns, %.2fx (issue 18 goal: "
		       "<= 2x)\n",
		       perf, piped, perf / piped);
	pop = time_hpcr_pop();
	if (pop > 0)
		printf("emulated hpcr pop:             %8.2f ns  (%.1fx a plain call)\n", pop, pop / call);
	return 0;
}
