// SPDX-License-Identifier: MIT
/* Sampling at the same event and threshold, three ways, in one run (docs/pes.md, "Benchmark"):
 *   PES       CVA6, precise_ip = 2: records into the PES buffer, one interrupt (signal) per full buffer
 *   Sscofpmf  U74 with Sscofpmf, precise_ip = 0: one counter-overflow interrupt and signal per sample
 *   PAPI sw   CVA6, PAPI_overflow with PAPI_OVERFLOW_FORCE_SW: PAPI's timer reads the counter and calls
 *             the handler when it passed the threshold (bench_sampling_papi.c)
 * and an unsampled run of the same program on each model. Per method: signals per 1000 delivered
 * samples, samples lost (expected - delivered; and how many of them were reported as PERF_RECORD_LOST),
 * skid (share of delivered samples whose PC is not the causing call site), and the slowdown (process CPU
 * time of the sampled loop over the unsampled one, measured in this run: a ratio, never asserted).
 * The program (sampling_work.c) runs under the virtual clock, where the causing instruction is known,
 * and again under the CPU-time clock, where it is not (skid is not measured there).
 *
 * Usage: bench_sampling [--rvemu-run PATH] [--papi-worker PATH]     (defaults: $RVEMU_RUN or rvemu-run,
 *        $BENCH_PAPI_WORKER; without a PAPI worker its rows say "not measured")
 * Internally: bench_sampling --worker none|pes|irq runs one method under the emulator.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampling_work.h"

#define RING_PAGES 64 /* data pages of the ring buffer: room for about 10000 samples */

/* ------------------------------------------------------------------------------------------ worker */
struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
	struct sw_result *r;
};

static volatile sig_atomic_t nsignals;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	nsignals++;
}

static void copy_out(const unsigned char *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)dst)[i] = data[(pos + i) % size];
}

/* Read what the ring holds: samples (IP, TID), PERF_RECORD_LOST, PERF_RECORD_THROTTLE. */
static void drain(void *arg)
{
	struct ring *g = arg;
	const unsigned char *data = (const unsigned char *)g->pg + g->pg->data_offset;
	uint64_t size = g->pg->data_size, head = __atomic_load_n(&g->pg->data_head, __ATOMIC_ACQUIRE),
	         tail = g->pg->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t f[2] = {0, 0};
		copy_out(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;
		copy_out(data, size, tail + sizeof(h), f,
		         h.size - sizeof(h) < sizeof(f) ? h.size - sizeof(h) : sizeof(f));
		if (h.type == PERF_RECORD_SAMPLE) {
			g->r->delivered++;
			g->r->exact += (h.misc & PERF_RECORD_MISC_EXACT_IP) != 0;
			sw_count_pc(g->r, f[0]);
		} else if (h.type == PERF_RECORD_LOST) {
			g->r->lost_reported += f[1];
		} else if (h.type == PERF_RECORD_THROTTLE) {
			g->r->throttled++;
		}
		tail += h.size;
	}
	__atomic_store_n(&g->pg->data_tail, tail, __ATOMIC_RELEASE);
}

static int open_sampler(struct ring *g, int precise, uint64_t period)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a.precise_ip = precise ? 2 : 0; /* 2: ask for zero skid */
	/* PES batches only when the user does not ask to hear of each sample (Linux's large-PEBS rule); the
	 * per-sample interrupt run asks for it, as PAPI's hardware overflow does */
	a.wakeup_events = precise ? 0 : 1;
	a.disabled = 1;
	g->fd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	if (g->fd < 0) {
		fprintf(stderr, "bench_sampling: perf_event_open (precise_ip %u): %s\n", a.precise_ip,
		        strerror(errno));
		return -1;
	}
	g->len = (size_t)sysconf(_SC_PAGESIZE) * (1 + RING_PAGES);
	void *p = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "bench_sampling: mmap of the ring buffer: %s\n", strerror(errno));
		return -1;
	}
	g->pg = p;
	/* the signal the kernel sends at an overflow interrupt (per sample) or a PES fill interrupt */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 2, &sa, NULL);
	struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
	if (fcntl(g->fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(g->fd, F_SETSIG, SIGRTMIN + 2) != 0 ||
	    fcntl(g->fd, F_SETOWN_EX, &owner) != 0) {
		fprintf(stderr, "bench_sampling: fcntl on the event: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int worker(const char *method)
{
	struct sw_result r;
	memset(&r, 0, sizeof(r));
	r.method = method;
	if (sw_init() != 0)
		return 1;
	uint64_t period = sw_virtual_clock() ? SW_PERIOD : sw_cpu_period();
	if (strcmp(method, "none") == 0) {
		if (sw_run(&r, period, NULL, NULL) != 0)
			return 1;
		r.expected = 0; /* nothing was sampled */
		sw_print(&r);
		return 0;
	}
	if (strcmp(method, "pes") != 0 && strcmp(method, "irq") != 0) {
		fprintf(stderr, "bench_sampling: unknown method '%s' (none, pes or irq)\n", method);
		return 2;
	}
	struct ring g = {.r = &r};
	if (open_sampler(&g, strcmp(method, "pes") == 0, period) != 0)
		return 1;
	nsignals = 0;
	if (ioctl(g.fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		fprintf(stderr, "bench_sampling: enable: %s\n", strerror(errno));
		return 1;
	}
	int rc = sw_run(&r, period, drain, &g);
	ioctl(g.fd, PERF_EVENT_IOC_DISABLE, 0); /* the kernel drains a partly filled PES buffer, no signal */
	drain(&g);
	uint64_t count;
	if (read(g.fd, &count, sizeof(count)) != (ssize_t)sizeof(count)) {
		fprintf(stderr, "bench_sampling: read of the event: %s\n", strerror(errno));
		rc = -1;
	}
	sw_set_count(&r, count);
	r.signals = (uint64_t)nsignals;
	if (rc == 0)
		sw_print(&r);
	munmap(g.pg, g.len);
	close(g.fd);
	return rc == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------------------------------ driver */
struct run {
	const char *label, *model, *method, *clock;
	int sscofpmf, papi;
	const struct run *baseline; /* the unsampled run of the same model and clock */
	int ok;
	struct sw_result r;
	char method_buf[16];
};

static int parse_result(const char *line, struct run *x)
{
	struct sw_result *r = &x->r;
	char clock[16];
	int n =
	    sscanf(line,
	           "result method=%15s clock=%15s period=%" SCNu64 " expected=%" SCNu64 " delivered=%" SCNu64
	           " lost_reported=%" SCNu64 " at_cause=%" SCNu64 " at_block=%" SCNu64 " exact=%" SCNu64
	           " signals=%" SCNu64 " throttled=%" SCNu64 " cpu_ns=%" SCNu64 " interrupts=%" SCNu64
	           " pes_interrupts=%" SCNu64 " pes_records=%" SCNu64 " emu_signals=%" SCNu64,
	           x->method_buf, clock, &r->period, &r->expected, &r->delivered, &r->lost_reported,
	           &r->at_cause, &r->at_block, &r->exact, &r->signals, &r->throttled, &r->cpu_ns,
	           &r->stats.interrupts, &r->stats.pes_interrupts, &r->stats.pes_records, &r->stats.signals);
	return n == 16 && strcmp(x->method_buf, x->method) == 0 && strcmp(clock, x->clock) == 0 ? 0 : -1;
}

/* Run one method under rvemu-run and read its result line. */
static int run_one(struct run *x, const char *rvemu_run, const char *self, const char *papi_worker)
{
	char model[64], clock[32];
	const char *argv[16];
	int n = 0, fds[2];
	snprintf(model, sizeof(model), "--model=%s", x->model);
	snprintf(clock, sizeof(clock), "--clock=%s", x->clock);
	argv[n++] = rvemu_run;
	argv[n++] = model;
	argv[n++] = clock;
	if (x->sscofpmf)
		argv[n++] = "--sscofpmf";
	argv[n++] = "--";
	argv[n++] = x->papi ? papi_worker : self;
	argv[n++] = "--worker";
	argv[n++] = x->method;
	argv[n] = NULL;
	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_sampling: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "bench_sampling: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	if (!f)
		close(fds[0]); /* the child still runs to its end; its result is not read */
	char line[1024];
	int found = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "result ", 7) == 0 && found != 0)
			found = parse_result(line, x);
		else
			fputs(line, stdout); /* whatever else the worker says */
	if (f)
		fclose(f);
	int status;
	waitpid(pid, &status, 0);
	x->ok = found == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!x->ok)
		fprintf(stderr, "bench_sampling: %s (%s, %s clock) failed (status %d)\n", x->label, x->model,
		        x->clock, status);
	return x->ok ? 0 : -1;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static double per_1000(const struct sw_result *r)
{
	return r->delivered ? 1000.0 * (double)r->signals / (double)r->delivered : 0;
}

static double slowdown(const struct run *x)
{
	return x->baseline && x->baseline->ok && x->baseline->r.cpu_ns
	           ? (double)x->r.cpu_ns / (double)x->baseline->r.cpu_ns
	           : 0;
}

static void print_table(const struct run *runs, size_t n, const char *clock)
{
	int virt = strcmp(clock, "virtual") == 0;
	printf("\n%s clock:\n\n", virt ? "Virtual" : "CPU-time");
	printf("| method | model | threshold | samples expected | delivered | lost | of which reported | "
	       "signals | "
	       "signals / 1000 samples | skid (PC in the next block) | marked exact | CPU ms | slowdown |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct run *x = &runs[i];
		const struct sw_result *r = &x->r;
		if (strcmp(x->clock, clock) != 0)
			continue;
		if (!x->ok) {
			printf("| %s | %s | not measured (see above) | | | | | | | | | | |\n", x->label,
			       x->model);
			continue;
		}
		if (strcmp(x->method, "none") == 0) {
			printf("| %s | %s | - | - | - | - | - | - | - | - | - | %.0f | 1.00x |\n", x->label,
			       x->model, (double)r->cpu_ns / 1e6);
			continue;
		}
		uint64_t lost = r->expected > r->delivered ? r->expected - r->delivered : 0;
		char skid[64];
		if (virt)
			snprintf(skid, sizeof(skid), "%.1f%% (%.1f%%)",
			         pct(r->delivered - r->at_cause, r->delivered),
			         pct(r->at_block, r->delivered));
		else
			snprintf(skid, sizeof(skid), "not known");
		printf("| %s | %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " (%.1f%%) | %" PRIu64
		       " | %" PRIu64 " | %.1f | %s | %" PRIu64 " | %.0f | %.2fx |\n",
		       x->label, x->model, r->period, r->expected, r->delivered, lost, pct(lost, r->expected),
		       r->lost_reported, r->signals, per_1000(r), skid, r->exact, (double)r->cpu_ns / 1e6,
		       slowdown(x));
	}
}

static void headline_part(const struct run *x, const char *name, int first)
{
	const struct sw_result *r = &x->r;
	if (!x->ok) {
		printf("%s%s not measured", first ? "" : "; ", name);
		return;
	}
	uint64_t lost = r->expected > r->delivered ? r->expected - r->delivered : 0;
	printf("%s%s %.1f signals/1000 samples, %" PRIu64 " lost (%.1f%%), %.1f%% skid, %.2fx",
	       first ? "" : "; ", name, per_1000(r), lost, pct(lost, r->expected),
	       pct(r->delivered - r->at_cause, r->delivered), slowdown(x));
}

static int driver(const char *rvemu_run, const char *papi_worker)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		fprintf(stderr, "bench_sampling: cannot find its own program: %s\n", strerror(errno));
		return 1;
	}
	self[len] = '\0';
	enum { NONE_CVA6, PES, NONE_U74, IRQ, PAPI, PER_CLOCK };
	static const char *const clocks[2] = {"virtual", "cputime"};
	struct run runs[2 * PER_CLOCK];
	memset(runs, 0, sizeof(runs));
	for (int c = 0; c < 2; c++) {
		struct run *b = &runs[c * PER_CLOCK];
		b[NONE_CVA6] = (struct run){"unsampled", "cva6", "none", clocks[c], 0, 0, NULL, 0, {0}, {0}};
		b[PES] = (struct run){"PES (precise_ip 2)", "cva6", "pes", clocks[c], 0, 0,
		                      &b[NONE_CVA6],        0,      {0},   {0}};
		b[NONE_U74] =
		    (struct run){"unsampled", "sifive-u74", "none", clocks[c], 1, 0, NULL, 0, {0}, {0}};
		b[IRQ] = (struct run){"Sscofpmf interrupt per sample",
		                      "sifive-u74",
		                      "irq",
		                      clocks[c],
		                      1,
		                      0,
		                      &b[NONE_U74],
		                      0,
		                      {0},
		                      {0}};
		b[PAPI] = (struct run){
		    "PAPI software overflow", "cva6", "papi-sw", clocks[c], 0, 1, &b[NONE_CVA6], 0, {0}, {0}};
	}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (runs[i].papi && !papi_worker) {
			fprintf(stderr,
			        "bench_sampling: %s: no PAPI worker (--papi-worker or BENCH_PAPI_WORKER)\n",
			        runs[i].label);
			continue;
		}
		run_one(&runs[i], rvemu_run, self, papi_worker);
	}
	printf(
	    "Sampling the same program at the same event (%s) and threshold, under the emulator. Emulated "
	    "counts are synthetic; CPU times are this host's and vary between runs (the slowdown is a ratio "
	    "of two runs made here, one after the other).\n",
	    SW_EVENT);
	print_table(runs, PER_CLOCK, "virtual");
	print_table(runs + PER_CLOCK, PER_CLOCK, "cputime");
	printf("\nbench_sampling: ");
	headline_part(&runs[PES], "PES", 1);
	headline_part(&runs[IRQ], "Sscofpmf", 0);
	headline_part(&runs[PAPI], "PAPI software", 0);
	printf(" (virtual clock, %u samples expected)\n", SW_ITERS);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (!runs[i].ok && !(runs[i].papi && !papi_worker))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *rvemu_run = getenv("RVEMU_RUN"), *papi_worker = getenv("BENCH_PAPI_WORKER");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--worker") == 0 && i + 1 < argc)
			return worker(argv[i + 1]);
		if (strcmp(argv[i], "--rvemu-run") == 0 && i + 1 < argc)
			rvemu_run = argv[++i];
		else if (strcmp(argv[i], "--papi-worker") == 0 && i + 1 < argc)
			papi_worker = argv[++i];
		else {
			fprintf(stderr, "usage: bench_sampling [--rvemu-run PATH] [--papi-worker PATH]\n");
			return 2;
		}
	}
	return driver(rvemu_run && *rvemu_run ? rvemu_run : "rvemu-run",
	              papi_worker && *papi_worker ? papi_worker : NULL);
}
