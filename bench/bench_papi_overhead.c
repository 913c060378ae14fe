// SPDX-License-Identifier: MIT
/* The worker of bench_papi_overhead.py: PAPI's setup and start against the raw perf_event calls they stand
 * for, phase by phase, in one process under the emulator. Each phase is bracketed by callgrind client
 * requests (zero, then dump named after the phase), so under `valgrind --tool=callgrind` every phase gets
 * its own exact instruction count; outside valgrind the requests do nothing.
 *
 * The calls a phase makes into the kernel's interface are counted here, by kind: this program defines the
 * libc entry points PAPI uses for them (syscall, ioctl, read, close, open, fopen, opendir, ...). An
 * executable's definitions come first in symbol lookup, so libpapi's and libpfm4's calls land here; each
 * counts and goes on to the next definition (the emulator's, then libc's). stdio's own reads of a file
 * fopen opened are not seen (they do not go through the exported read): the counts are a lower bound of
 * the system calls, exact for the perf_event ones.
 *
 *   bench_papi_overhead --worker     prints one line per phase: "phase NAME calls K=N ..."
 * Built against an installed PAPI (bench/bench.am, run-bench), run by bench_papi_overhead.py.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

/* what the kernel interface was asked for, by kind; the table order is the output order */
enum call_kind { K_PERF_OPEN, K_IOCTL, K_READ, K_CLOSE, K_OPEN, K_OTHER_SYSCALL, K_KINDS };
static const char *const kind_names[K_KINDS] = {"perf_event_open", "ioctl", "read",
                                                "close",           "open",  "other_syscall"};
static unsigned long calls[K_KINDS];
static int counting; /* only inside a phase: the program's own printing is not PAPI's */

static void count(enum call_kind k)
{
	if (counting)
		calls[k]++;
}

static void *next_fn(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		fprintf(stderr, "bench_papi_overhead: no next definition of %s\n", name);
		abort();
	}
	return fn;
}

/* ---- the interposed entry points (the emulator's, when loaded, are next; libc's after it) ----
 * Their next definitions are looked up once, before the first phase (resolve_next), so no phase pays
 * for a dlsym. */
static long (*next_syscall)(long, ...);
static int (*next_ioctl)(int, unsigned long, ...);
static ssize_t (*next_read)(int, void *, size_t);
static int (*next_close)(int);
static int (*next_open)(const char *, int, ...);
static int (*next_open64)(const char *, int, ...);
static FILE *(*next_fopen)(const char *, const char *);
static FILE *(*next_fopen64)(const char *, const char *);
static DIR *(*next_opendir)(const char *);

static void resolve_next(void)
{
	if (next_opendir)
		return;
	next_syscall = (long (*)(long, ...))next_fn("syscall");
	next_ioctl = (int (*)(int, unsigned long, ...))next_fn("ioctl");
	next_read = (ssize_t(*)(int, void *, size_t))next_fn("read");
	next_close = (int (*)(int))next_fn("close");
	next_open = (int (*)(const char *, int, ...))next_fn("open");
	next_open64 = (int (*)(const char *, int, ...))next_fn("open64");
	next_fopen = (FILE * (*)(const char *, const char *)) next_fn("fopen");
	next_fopen64 = (FILE * (*)(const char *, const char *)) next_fn("fopen64");
	next_opendir = (DIR * (*)(const char *)) next_fn("opendir");
}

long syscall(long number, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	resolve_next(); /* a no-op once main has run it; before main (constructors) it is not */
	count(number == SYS_perf_event_open ? K_PERF_OPEN : K_OTHER_SYSCALL);
	return next_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	resolve_next();
	count(K_IOCTL);
	return next_ioctl(fd, req, arg);
}

ssize_t read(int fd, void *buf, size_t len)
{
	resolve_next();
	count(K_READ);
	return next_read(fd, buf, len);
}

int close(int fd)
{
	resolve_next();
	count(K_CLOSE);
	return next_close(fd);
}

#define OPEN_LIKE(name)                                                                                      \
	int name(const char *path, int flags, ...)                                                           \
	{                                                                                                    \
		va_list ap;                                                                                  \
		va_start(ap, flags);                                                                         \
		int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;                            \
		va_end(ap);                                                                                  \
		resolve_next();                                                                              \
		count(K_OPEN);                                                                               \
		return next_##name(path, flags, mode);                                                       \
	}
OPEN_LIKE(open)
OPEN_LIKE(open64)

#define FOPEN_LIKE(name)                                                                                     \
	FILE *name(const char *path, const char *mode)                                                       \
	{                                                                                                    \
		resolve_next();                                                                              \
		count(K_OPEN);                                                                               \
		return next_##name(path, mode);                                                              \
	}
FOPEN_LIKE(fopen)
FOPEN_LIKE(fopen64)

DIR *opendir(const char *path)
{
	resolve_next();
	count(K_OPEN);
	return next_opendir(path);
}

/* ---- phases ---- */
static void phase_begin(void)
{
	memset(calls, 0, sizeof(calls));
	counting = 1;
	CALLGRIND_ZERO_STATS;
}

static void phase_end(const char *name)
{
	CALLGRIND_DUMP_STATS_AT(name);
	counting = 0;
	printf("phase %s calls", name);
	for (int k = 0; k < K_KINDS; k++)
		printf(" %s=%lu", kind_names[k], calls[k]);
	printf("\n");
	fflush(stdout);
}

#define NEVENTS 4
/* the raw counterparts of the four presets PAPI adds (events/presets.csv, U74): PAPI_TOT_CYC and PAPI_TOT_INS
 * are the generic cycles and instructions, PAPI_BR_CN and PAPI_BR_MSP the mhpmevent values of
 * CONDITIONAL_BRANCH_RETIRED and BRANCH_DIRECTION_MISPREDICTION (events/sifive_u74.csv); one group, the
 * leader disabled, as PAPI opens them. No exclude_* bits: the U74 without Sscofpmf refuses them. */
static const struct {
	unsigned type;
	unsigned long long config;
} raw_events[NEVENTS] = {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
                         {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
                         {PERF_TYPE_RAW, 0x4000},
                         {PERF_TYPE_RAW, 0x2001}};
static const char *const presets[NEVENTS] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_BR_CN", "PAPI_BR_MSP"};

static int raw_open(int fds[NEVENTS])
{
	for (int i = 0; i < NEVENTS; i++) {
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = raw_events[i].type;
		attr.config = raw_events[i].config;
		attr.disabled = i == 0;
		attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		fds[i] = (int)syscall(SYS_perf_event_open, &attr, 0, -1, i == 0 ? -1 : fds[0], 0);
		if (fds[i] < 0) {
			perror("bench_papi_overhead: perf_event_open");
			return -1;
		}
	}
	return 0;
}

static void raw_close(int fds[NEVENTS])
{
	for (int i = NEVENTS - 1; i >= 0; i--)
		close(fds[i]);
}

static int papi_fail(const char *what, int rc)
{
	fprintf(stderr, "bench_papi_overhead: %s: %s\n", what, PAPI_strerror(rc));
	return 1;
}

/* PAPI_library_init .. PAPI_add_event x4; the EventSet is returned in *es */
static int papi_init_add(int *es)
{
	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT)
		return papi_fail("PAPI_library_init", rc);
	*es = PAPI_NULL;
	if ((rc = PAPI_create_eventset(es)) != PAPI_OK)
		return papi_fail("PAPI_create_eventset", rc);
	for (int i = 0; i < NEVENTS; i++) {
		int code;
		if ((rc = PAPI_event_name_to_code(presets[i], &code)) != PAPI_OK ||
		    (rc = PAPI_add_event(*es, code)) != PAPI_OK)
			return papi_fail(presets[i], rc);
	}
	return 0;
}

static int papi_teardown(int es)
{
	long long v[NEVENTS];
	int rc;
	if ((rc = PAPI_stop(es, v)) != PAPI_OK)
		return papi_fail("PAPI_stop", rc);
	if ((rc = PAPI_cleanup_eventset(es)) != PAPI_OK || (rc = PAPI_destroy_eventset(&es)) != PAPI_OK)
		return papi_fail("PAPI_cleanup/destroy_eventset", rc);
	PAPI_shutdown();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "--worker") != 0) {
		fprintf(stderr, "usage: bench_papi_overhead --worker (run by bench_papi_overhead.py)\n");
		return 2;
	}
	int fds[NEVENTS], es, rc;
	long long v[NEVENTS];
	uint64_t buf[1 + 2 * NEVENTS]; /* PERF_FORMAT_GROUP | PERF_FORMAT_ID: nr, then value and id each */

	/* warm-up: binds the raw path's libc and emulator entry points, as PAPI's first open binds its own */
	resolve_next();
	if (raw_open(fds) != 0)
		return 1;
	(void)ioctl(fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	(void)read(fds[0], buf, sizeof(buf));
	raw_close(fds);

	phase_begin();
	rc = raw_open(fds);
	phase_end("raw_open4");
	if (rc != 0)
		return 1;

	phase_begin();
	(void)ioctl(fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	(void)ioctl(fds[0], PERF_EVENT_IOC_ENABLE, 0);
	phase_end("raw_start");

	phase_begin();
	ssize_t got = read(fds[0], buf, sizeof(buf));
	phase_end("raw_read");
	if (got != (ssize_t)sizeof(buf)) {
		fprintf(stderr, "bench_papi_overhead: group read of %d events returned %zd bytes\n", NEVENTS,
		        got);
		return 1;
	}
	raw_close(fds);

	/* a process's first init pays for loading and binding too; the second one is PAPI's own work */
	for (int round = 1; round <= 2; round++) {
		phase_begin();
		rc = papi_init_add(&es);
		phase_end(round == 1 ? "papi_init_add4_first" : "papi_init_add4");
		if (rc != 0)
			return 1;

		phase_begin();
		rc = PAPI_start(es);
		phase_end(round == 1 ? "papi_start_first" : "papi_start");
		if (rc != PAPI_OK)
			return papi_fail("PAPI_start", rc);

		phase_begin();
		rc = PAPI_read(es, v);
		phase_end(round == 1 ? "papi_read_first" : "papi_read");
		if (rc != PAPI_OK)
			return papi_fail("PAPI_read", rc);

		phase_begin();
		rc = papi_teardown(es);
		phase_end(round == 1 ? "papi_stop_shutdown_first" : "papi_stop_shutdown");
		if (rc != 0)
			return 1;
	}
	return 0;
}
