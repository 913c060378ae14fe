/* SPDX-License-Identifier: MIT */
/* rvprof: run a program with sampling on one event (Precise Event Sampling where the core has it) and show
 * where it spent that event: a histogram of functions, optionally call stacks; write folded stacks, a flame
 * graph (SVG) and a perf.data file. The sampling itself happens in the program (librvprof-agent.so,
 * preloaded: prof_shm.h); this front end starts it, shows progress, then reads the agent's sample file. */
#include "flamegraph.h"
#include "perfdata.h"
#include "prof_shm.h"
#include "report.h"
#include "rvsample.h"
#include "symbols.h"
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses of rvprof itself (as timeout(1) and env(1) do); otherwise the program's own status. */
#define EXIT_RVPROF   125 /* bad option, unknown event, unwritable output, the agent could not sample */
#define EXIT_CANNOT   126 /* the program was found but could not be run */
#define EXIT_NOTFOUND 127 /* the program was not found */

#define DEFAULT_EVENT     "PAPI_TOT_CYC"
#define DEFAULT_THRESHOLD 1000000ull
#define DEFAULT_TOP       20
#define BAR_WIDTH         30

struct options {
	const char *event;
	uint64_t threshold;
	int stacks;
	const char *perf_data;
	const char *folded;
	const char *svg;
	size_t top;
	int precise;  /* -1 auto */
	int progress; /* -1 auto: when stderr is a terminal */
	char **argv;
	int argc;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: rvprof [options] [--] program [args...]\n"
	    "\n"
	    "Runs program with sampling on one event and prints its hot functions: every THRESHOLD events\n"
	    "a sample records where the program was. On a core with Precise Event Sampling (PES, e.g.\n"
	    "CVA6) the sampled PC is the instruction that caused the event (no skid) and samples arrive a\n"
	    "hardware buffer at a time. Every thread the program creates is sampled.\n"
	    "\n"
	    "Options:\n"
	    "  -e, --event EVENT      PAPI preset or native event to sample (default " DEFAULT_EVENT ")\n"
	    "  -c, --count THRESHOLD  events per sample, > 0 (default %llu)\n"
	    "  -g, --call-graph       record call stacks: one interrupt per sample (no batching), top call\n"
	    "                         stacks in the report, full stacks in --folded and -o\n"
	    "  -o, --output FILE      write a perf.data file (perf report -i FILE reads it)\n"
	    "      --folded FILE      write folded stacks (\"main;work;hot 42\" per line), the input of "
	    "flame\n"
	    "                         graph tools (speedscope, flamegraph.pl: not packaged by Debian 12);\n"
	    "                         without -g each line is the sampled function alone\n"
	    "      --svg FILE         draw those stacks as a flame graph, an SVG file any web browser shows\n"
	    "      --top N            show the N hottest functions and stacks (default %d, 0: all)\n"
	    "      --precise LEVEL    perf's precise_ip, 0-3, required: fail if the PMU refuses it\n"
	    "                         (default: 2 on a PES core, otherwise 0 with a note)\n"
	    "      --no-precise       sample with skid (precise_ip 0) even on a PES core\n"
	    "      --progress         show a progress line on stderr (default: when stderr is a terminal)\n"
	    "      --no-progress      never show it\n"
	    "  -h, --help             show this text\n"
	    "\n"
	    "Exit status: the program's (128+N if it was killed by signal N); 125 when rvprof fails (bad\n"
	    "option, unknown event, unwritable output, sampling refused), 126 when the program cannot be\n"
	    "run, 127 when it is not found. SIGTERM and SIGHUP sent to rvprof go to the program. Children\n"
	    "the program forks are not profiled.\n"
	    "\n"
	    "Under the emulator (rvemu-run --model cva6 -- rvprof ...) counts and samples are synthetic;\n"
	    "the report says so. See rvprof(1).\n",
	    (unsigned long long)DEFAULT_THRESHOLD, DEFAULT_TOP);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("rvprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_RVPROF);
}

static uint64_t parse_u64(const char *opt, const char *s, int allow_zero)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		die("%s needs a %snumber, not '%s' (see --help)", opt, allow_zero ? "" : "positive ",
		    s ? s : "");
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || (!allow_zero && v == 0))
		die("%s needs a %snumber, not '%s' (see --help)", opt, allow_zero ? "" : "positive ", s);
	return v;
}

static void parse(int argc, char **argv, struct options *o)
{
	enum {
		OPT_FOLDED = 256,
		OPT_SVG,
		OPT_TOP,
		OPT_PRECISE,
		OPT_NO_PRECISE,
		OPT_PROGRESS,
		OPT_NO_PROGRESS
	};
	static const struct option longs[] = {
	    {"event", required_argument, NULL, 'e'},
	    {"count", required_argument, NULL, 'c'},
	    {"call-graph", no_argument, NULL, 'g'},
	    {"output", required_argument, NULL, 'o'},
	    {"folded", required_argument, NULL, OPT_FOLDED},
	    {"svg", required_argument, NULL, OPT_SVG},
	    {"top", required_argument, NULL, OPT_TOP},
	    {"precise", required_argument, NULL, OPT_PRECISE},
	    {"no-precise", no_argument, NULL, OPT_NO_PRECISE},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	*o = (struct options){
	    DEFAULT_EVENT, DEFAULT_THRESHOLD, 0, NULL, NULL, NULL, DEFAULT_TOP, -1, -1, NULL, 0};
	opterr = 0;
	int c;
	/* "+": stop at the program's name, so its own options are left alone */
	while ((c = getopt_long(argc, argv, "+:e:c:go:h", longs, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!*optarg)
				die("-e needs an event name (see --help)");
			o->event = optarg;
			break;
		case 'c':
			o->threshold = parse_u64("-c", optarg, 0);
			break;
		case 'g':
			o->stacks = 1;
			break;
		case 'o':
			o->perf_data = optarg;
			break;
		case OPT_FOLDED:
			o->folded = optarg;
			break;
		case OPT_SVG:
			o->svg = optarg;
			break;
		case OPT_TOP:
			o->top = (size_t)parse_u64("--top", optarg, 1);
			break;
		case OPT_PRECISE:
			if (!(optarg[0] >= '0' && optarg[0] <= '3' && !optarg[1]))
				die("--precise needs a level 0-3, not '%s' (see --help)", optarg);
			o->precise = optarg[0] - '0';
			break;
		case OPT_NO_PRECISE:
			o->precise = 0;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o->progress = 0;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			die("option %s needs a value (see --help)", argv[optind - 1]);
		default:
			if (optopt)
				die("unknown option -%c (see --help)", optopt);
			die("unknown option %s (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		fputs("rvprof: no program to run\n", stderr);
		usage(stderr);
		exit(EXIT_RVPROF);
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->progress < 0)
		o->progress = isatty(STDERR_FILENO);
}

/* An output file must be writable before the program runs (not after a long run). */
static void check_writable(const char *opt, const char *path)
{
	if (!path)
		return;
	struct stat st;
	int existed = stat(path, &st) == 0;
	if (existed && S_ISDIR(st.st_mode))
		die("%s %s: is a directory", opt, path);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		die("%s %s: cannot write: %s", opt, path, strerror(errno));
	close(fd);
	if (!existed)
		unlink(path);
}

/* librvprof-agent.so: RVPROF_AGENT, else next to this program's lib/ (installed: <prefix>/bin/rvprof and
 * <prefix>/lib/librvprof-agent.so), else beside it (the build tree). */
static void find_agent(char *out, size_t len)
{
	const char *e = getenv("RVPROF_AGENT");
	if (e && *e) {
		if (access(e, R_OK) != 0)
			die("RVPROF_AGENT=%s: %s", e, strerror(errno));
		snprintf(out, len, "%s", e);
		return;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		die("cannot find my own path (/proc/self/exe): %s", strerror(errno));
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	const char *cands[] = {"%s/../lib/librvprof-agent.so", "%s/librvprof-agent.so",
	                       "%s/.libs/librvprof-agent.so"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		snprintf(out, len, cands[i], exe);
		if (access(out, R_OK) == 0)
			return;
	}
	die("librvprof-agent.so not found in %s/../lib (set RVPROF_AGENT)", exe);
}

/* A file with no name in `dir` (O_TMPFILE; where the file system cannot, a mkstemp file unlinked at once):
 * nothing is left behind however rvprof or the program ends, SIGKILL included. */
static int unnamed_file(const char *dir, const char *what)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/rvprof.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		die("cannot create the %s in %s: %s (set TMPDIR to a writable folder)", what, dir,
		    strerror(errno));
	unlink(path);
	return fd;
}

static struct rvprof_shm *make_shm(int fd)
{
	if (ftruncate(fd, sizeof(struct rvprof_shm)) != 0)
		die("cannot size the state file: %s", strerror(errno));
	void *m = mmap(NULL, sizeof(struct rvprof_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("cannot map the state file: %s", strerror(errno));
	struct rvprof_shm *s = m;
	s->magic = RVPROF_SHM_MAGIC;
	s->version = RVPROF_SHM_VERSION;
	return s;
}

static void setenv_or_die(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		_exit(EXIT_RVPROF);
}

/* Child: the environment for the agent, then the program. An exec failure goes back through `errfd`. */
static void run_child(const struct options *o, const char *agent, int shm_fd, int out_fd, int errfd)
{
	char buf[64];
	/* the agent gets both files as descriptors (it closes them before main) */
	if (fcntl(shm_fd, F_SETFD, 0) != 0 || fcntl(out_fd, F_SETFD, 0) != 0)
		_exit(EXIT_RVPROF);
	const char *pre = getenv("LD_PRELOAD");
	size_t len = (pre ? strlen(pre) + 1 : 0) + strlen(agent) + 1;
	char *preload = malloc(len);
	if (!preload)
		_exit(EXIT_RVPROF);
	/* appended: whatever is preloaded already (the emulator under rvemu-run) stays first */
	snprintf(preload, len, "%s%s%s", pre && *pre ? pre : "", pre && *pre ? ":" : "", agent);
	setenv_or_die("LD_PRELOAD", preload);
	free(preload);
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	setenv_or_die(RVPROF_ENV_PID, buf);
	snprintf(buf, sizeof(buf), "%d", shm_fd);
	setenv_or_die(RVPROF_ENV_SHM, buf);
	snprintf(buf, sizeof(buf), "%d", out_fd);
	setenv_or_die(RVPROF_ENV_OUT, buf);
	setenv_or_die(RVPROF_ENV_EVENT, o->event);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->threshold);
	setenv_or_die(RVPROF_ENV_THRESHOLD, buf);
	if (o->precise < 0)
		setenv_or_die(RVPROF_ENV_PRECISE, "auto");
	else {
		snprintf(buf, sizeof(buf), "%d", o->precise);
		setenv_or_die(RVPROF_ENV_PRECISE, buf);
	}
	setenv_or_die(RVPROF_ENV_STACKS, o->stacks ? "1" : "0");
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	execvp(o->argv[0], o->argv);
	int e = errno;
	if (write(errfd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(EXIT_CANNOT);
	_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_CANNOT);
}

static void progress_line(const struct rvprof_shm *s, int tty, double secs)
{
	unsigned long long n = __atomic_load_n(&s->samples, __ATOMIC_RELAXED);
	unsigned long long b = __atomic_load_n(&s->batches, __ATOMIC_RELAXED);
	if (__atomic_load_n(&s->magic, __ATOMIC_RELAXED) != RVPROF_SHM_MAGIC) /* the program wrote over it */
		fprintf(stderr, "%srvprof: running (the state page was overwritten), %.0f s%s",
		        tty ? "\r" : "", secs, tty ? "\033[K" : "\n");
	else
		fprintf(stderr, "%srvprof: %llu samples in %llu batches, %.0f s%s", tty ? "\r" : "", n, b,
		        secs, tty ? "\033[K" : "\n");
	fflush(stderr);
}

static int wait_child(pid_t pid, const struct rvprof_shm *s, int progress)
{
	int status, tty = isatty(STDERR_FILENO);
	if (!progress) {
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
		return status;
	}
	struct timespec t0, now, tick = {0, 100 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double shown = 0;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r < 0 && errno != EINTR)
			die("waitpid: %s", strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		double secs = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (r == pid) {
			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == RVPROF_FAILED) {
				if (tty && shown > 0)
					fputs("\r\033[K", stderr); /* the error says it all */
				return status;
			}
			progress_line(s, tty, secs); /* the final count */
			if (tty)
				fputc('\n', stderr);
			return status;
		}
		if (secs - shown >= (tty ? 0.5 : 5.0)) { /* a line per 5 s when stderr is a file */
			progress_line(s, tty, secs);
			shown = secs;
		}
		nanosleep(&tick, NULL);
	}
}

/* What the header shows: the agent's counts, or (when its page was overwritten) what the samples say. */
struct facts {
	struct rvprof_shm s; /* a checked copy of the agent's page */
	int counts_known;    /* 0: lost, dropped, interrupts and throttles are unknown */
	uint64_t samples, exact;
	uint64_t throttles, unthrottled; /* marks in the sample file */
	double throttled_ms;             /* the sum of the THROTTLE..UNTHROTTLE intervals */
};

static void print_header(FILE *out, const struct options *o, const struct facts *f, pid_t pid)
{
	const struct rvprof_shm *s = &f->s;
	unsigned long long samples = f->samples;
	fprintf(out, "rvprof: %s (pid %ld)\n", o->argv[0], (long)pid);
	fprintf(out, "  event       %s, one sample every %llu events\n", o->event,
	        (unsigned long long)o->threshold);
	if (s->precise > 0)
		fprintf(out,
		        "  precise     yes (precise_ip %d, Precise Event Sampling): a sample's PC is the "
		        "instruction\n"
		        "              that caused the event (no skid); %llu of %llu samples marked exact\n",
		        s->precise, (unsigned long long)f->exact, samples);
	else if (s->precise_refused)
		fprintf(
		    out,
		    "  precise     no: the PMU refused precise sampling (this core has no PES), so samples\n"
		    "              have skid: a PC may be a few instructions after the one that caused the "
		    "event\n");
	else
		fprintf(out,
		        "  precise     no%s: samples have skid, a PC may be a few instructions after\n"
		        "              the one that caused the event\n",
		        f->counts_known ? " (as asked)" : "");
	if (!f->counts_known) {
		fprintf(out,
		        "  samples     %llu%s; lost, dropped and interrupts unknown (the state page was "
		        "overwritten)\n",
		        samples, o->stacks ? " with call stacks" : "");
	} else {
		fprintf(out,
		        "  samples     %llu%s, lost %llu (kernel ring full), dropped %llu (buffers full)\n",
		        samples, o->stacks ? " with call stacks" : "", (unsigned long long)s->lost,
		        (unsigned long long)s->dropped);
		uint64_t by_irq = samples > s->at_stop ? samples - s->at_stop : 0;
		fprintf(out, "  interrupts  %llu", (unsigned long long)s->interrupts);
		if (s->interrupts && by_irq)
			fprintf(
			    out, " (%.1f samples per interrupt: %s)", (double)by_irq / (double)s->interrupts,
			    o->stacks ? "a call stack needs the interrupted context, so one each is the aim"
			    : s->precise > 0
			        ? "PES interrupts once per full buffer"
			        : "one per overflow, fewer when the kernel drains without a signal");
		if (s->at_stop && s->at_stop >= samples)
			fprintf(out, ": the %llu samples were read when sampling stopped%s",
			        (unsigned long long)s->at_stop,
			        s->precise > 0
			            ? "\n              (the PES buffer never filled, so it never interrupted)"
			            : "");
		else if (s->at_stop)
			fprintf(out,
			        "\n              and %llu samples read when sampling stopped, without one",
			        (unsigned long long)s->at_stop);
		fputc('\n', out);
	}
	if (f->throttles)
		fprintf(out,
		        "  throttled   %llu times, %.3f ms in all%s: the kernel stopped\n"
		        "              sampling the event, which overflowed faster than its maximum sample "
		        "rate;\n"
		        "              events then were not sampled (not lost: perf shows the same\n"
		        "              PERF_RECORD_THROTTLE/UNTHROTTLE, and -o writes them)\n",
		        (unsigned long long)f->throttles, f->throttled_ms,
		        f->throttles > f->unthrottled ? " (still throttled at the end)" : "");
	else if (f->counts_known)
		fprintf(out, "  throttled   never\n");
	fprintf(out, "  threads     %d sampled", s->threads);
	if (s->threads_failed)
		fprintf(out, ", %d not sampled: %s", s->threads_failed, s->message);
	fputc('\n', out);
	if (s->children)
		fprintf(out,
		        "  children    %d forked, not profiled: rvprof samples the process it started, not "
		        "its children\n",
		        s->children);
	const char *(*model)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "rvemu_model_name");
	if (model) {
		const char *clock = getenv("RVEMU_CLOCK");
		int virt = clock && strcmp(clock, "virtual") == 0;
		fprintf(out,
		        "  emulated    model %s, %s clock: counts are synthetic, not measured:\n             "
		        " %s\n",
		        model(), virt ? "virtual" : "CPU-time",
		        virt ? "events happen only where the program calls rvemu_advance(), so the profile\n"
		               "              shows those calls (exact and repeatable)"
		             : "the model's rates times each thread's CPU time, so the profile shows where\n"
		               "              CPU time went, not where the event really happened");
	}
}

/* rvsample's message about the sample file, without its /proc/self/fd/N path (the file has no name). */
static const char *sample_error(int err, const char *path)
{
	const char *m = rvsample_strerror(err);
	size_t n = strlen(path);
	return strncmp(m, path, n) == 0 && strncmp(m + n, ": ", 2) == 0 ? m + n + 2 : m;
}

/* SIGTERM and SIGHUP sent to rvprof go to the program (as timeout(1) does): it ends as it would alone, and
 * rvprof still reports what it got. */
static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* Threads seen in the samples (when the agent's count cannot be trusted). */
struct tid_set {
	uint32_t *tid;
	size_t n, cap;
};

static int tid_set_add(struct tid_set *t, uint32_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->tid[i] == tid)
			return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		uint32_t *p = realloc(t->tid, cap * sizeof(*p));
		if (!p)
			return -1;
		t->tid = p;
		t->cap = cap;
	}
	t->tid[t->n++] = tid;
	return 1;
}

/* A throttle mark: per thread, THROTTLE opens an interval and UNTHROTTLE closes it. */
struct throttle_state {
	struct tid_set tids;
	uint64_t *since; /* per tids.tid[i]: the open interval's start, or UINT64_MAX */
	size_t cap;
};

static int throttle_mark(struct facts *f, struct throttle_state *t, const struct rvsample_record *r)
{
	int fresh = tid_set_add(&t->tids, r->tid);
	if (fresh < 0)
		return -1;
	if (t->cap < t->tids.cap) {
		uint64_t *p = realloc(t->since, t->tids.cap * sizeof(*p));
		if (!p)
			return -1;
		t->since = p;
		t->cap = t->tids.cap;
	}
	size_t i = 0;
	while (t->tids.tid[i] != r->tid)
		i++;
	if (fresh)
		t->since[i] = UINT64_MAX; /* no interval open */
	if (r->flags & RVPROF_REC_THROTTLE) {
		f->throttles++;
		t->since[i] = r->time_ns;
	} else {
		if (t->since[i] != UINT64_MAX && r->time_ns >= t->since[i])
			f->throttled_ms += (double)(r->time_ns - t->since[i]) / 1e6;
		f->unthrottled++;
		t->since[i] = UINT64_MAX;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	parse(argc, argv, &o);
	check_writable("-o", o.perf_data);
	check_writable("--folded", o.folded);
	check_writable("--svg", o.svg);
	char agent[PATH_MAX];
	find_agent(agent, sizeof(agent));

	const char *tmp = getenv("TMPDIR");
	const char *dir = tmp && *tmp ? tmp : "/tmp";
	int shm_fd = unnamed_file(dir, "state file"), out_fd = unnamed_file(dir, "sample file");
	struct rvprof_shm *s = make_shm(shm_fd);

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		run_child(&o, agent, shm_fd, out_fd, pipefd[1]);
	}
	close(pipefd[1]);
	close(shm_fd); /* mapped */
	/* Ctrl-C and Ctrl-\ are for the program; rvprof reports what it got (as time(1) does) */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	child_pid = pid;
	struct sigaction fwd;
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = forward_signal;
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(pipefd[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(pipefd[0]);
	int status = wait_child(pid, s, o.progress);
	child_pid = 0;
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	struct facts f;
	memset(&f, 0, sizeof(f));
	memcpy(&f.s, s, sizeof(f.s)); /* one snapshot, checked, then used */
	char why[128];
	f.counts_known = prof_shm_check(&f.s, why, sizeof(why)) == 0;
	int state = f.counts_known ? f.s.state : -1;

	int failed = 0;
	if (got == (ssize_t)sizeof(exec_errno)) {
		fprintf(stderr, "rvprof: cannot run %s: %s\n", o.argv[0], strerror(exec_errno));
		failed = rc;
	} else if (state == RVPROF_FAILED) {
		fprintf(stderr, "rvprof: %s\n", f.s.message);
		failed = EXIT_RVPROF;
	} else if (state == RVPROF_NOT_STARTED) {
		fprintf(stderr,
		        "rvprof: the sampling agent did not run in %s (a statically linked or setuid "
		        "program, or a\n"
		        "        script whose interpreter started it as a child): nothing was sampled\n",
		        o.argv[0]);
		failed = EXIT_RVPROF;
	} else if (state == RVPROF_RUNNING) {
		fprintf(stderr,
		        "rvprof: %s ended without exit() (_exit, a signal or exec): samples not yet written "
		        "were lost\n",
		        o.argv[0]);
	} else if (state < 0) {
		fprintf(stderr, "rvprof: %s overwrote rvprof's state page (%s)\n", o.argv[0], why);
		memset(&f.s, 0, sizeof(f.s));
	} else if (f.s.overwritten) {
		fprintf(
		    stderr,
		    "rvprof: note: %s wrote over rvprof's state page while it ran; the agent kept its own "
		    "counts\n"
		    "        and wrote them again at exit, so nothing was lost\n",
		    o.argv[0]);
	}
	if (failed)
		return failed;

	struct rvsample_file_info info;
	rvsample_reader_t *reader = NULL;
	char out_path[64];
	snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out_fd);
	int err = rvsample_reader_open(&reader, out_path, &info);
	if (err < 0) {
		/* a program that ended without exit() left no complete file: its status is what matters */
		if (state >= 0 && state != RVPROF_RUNNING)
			fprintf(stderr, "rvprof: cannot read the samples: %s\n", sample_error(err, out_path));
		else if (state < 0)
			fprintf(stderr,
			        "rvprof: and the sample file is incomplete (%s): the program ended without "
			        "exit()\n"
			        "        (_exit, a signal or exec), or the agent could not sample: nothing "
			        "to show\n",
			        sample_error(err, out_path));
		/* ended without exit(), or cannot tell (the page was overwritten): the program's status
		 * stands */
		return state == RVPROF_RUNNING || state < 0 ? rc : EXIT_RVPROF;
	}
	if (!f.counts_known) {
		f.s.precise = info.precise; /* the file's header: written once, at the start */
		fprintf(stderr,
		        "rvprof: the header shows what the sample file holds; lost, dropped, interrupt "
		        "and throttle\n"
		        "        counts are unknown\n");
	}
	size_t nmaps = 0;
	const struct rvsample_map *maps = rvsample_reader_maps(reader, &nmaps);
	struct prof_symbols *syms = prof_symbols_new(maps, nmaps);
	struct prof_report *rep = syms ? prof_report_new(syms, o.stacks) : NULL;
	if (!rep)
		die("out of memory");
	struct perfdata *pd = NULL;
	if (o.perf_data) {
		const char *slash = strrchr(o.argv[0], '/');
		struct perfdata_config pc = {
		    o.event, o.threshold, f.s.precise, o.stacks, slash ? slash + 1 : o.argv[0], argc, argv};
		err = perfdata_open(&pd, o.perf_data, &pc);
		if (err < 0)
			die("-o %s: %s", o.perf_data, strerror(-err));
		perfdata_add_maps(pd, (uint32_t)pid, maps, nmaps);
	}
	struct rvsample_record *buf = calloc(256, sizeof(*buf));
	struct throttle_state thr;
	struct tid_set threads;
	memset(&thr, 0, sizeof(thr));
	memset(&threads, 0, sizeof(threads));
	if (!buf)
		die("out of memory");
	ssize_t n;
	while ((n = rvsample_reader_read(reader, buf, 256)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			const struct rvsample_record *r = &buf[i];
			if (r->flags & (RVPROF_REC_THROTTLE | RVPROF_REC_UNTHROTTLE)) {
				if (throttle_mark(&f, &thr, r) < 0)
					die("out of memory");
				if (pd)
					perfdata_add_throttle(pd, r, (r->flags & RVPROF_REC_THROTTLE) != 0);
				continue;
			}
			if (prof_report_add(rep, r) < 0 || tid_set_add(&threads, r->tid) < 0)
				die("out of memory");
			f.samples++;
			f.exact += (r->flags & RVSAMPLE_F_EXACT) != 0;
			if (pd)
				perfdata_add_sample(pd, r);
		}
	}
	if (n < 0)
		fprintf(stderr, "rvprof: reading the samples stopped early: %s\n",
		        sample_error((int)n, out_path));
	free(buf);
	if (!f.counts_known)
		f.s.threads = (int32_t)threads.n;
	free(threads.tid);
	free(thr.tids.tid);
	free(thr.since);
	int status_out = rc;
	if (pd) {
		if (f.counts_known)
			perfdata_add_lost(pd, (uint32_t)pid, f.s.lost);
		err = perfdata_close(pd);
		if (err < 0) {
			fprintf(stderr, "rvprof: writing %s failed: %s\n", o.perf_data, strerror(-err));
			status_out = EXIT_RVPROF;
		}
	}
	if (o.folded) {
		err = prof_report_write_folded(rep, o.folded);
		if (err < 0) {
			fprintf(stderr, "rvprof: writing %s failed: %s\n", o.folded, strerror(-err));
			status_out = EXIT_RVPROF;
		}
	}
	int svg_empty = 0;
	if (o.svg) {
		size_t nstacks;
		const struct prof_entry *stacks = prof_report_stacks(rep, &nstacks);
		char title[512];
		snprintf(title, sizeof(title), "rvprof %s: %s, a sample every %llu", o.argv[0], o.event,
		         (unsigned long long)o.threshold);
		err = stacks ? prof_flamegraph_write(stacks, nstacks, title, o.svg) : -ENOMEM;
		if (err == -EINVAL) {
			svg_empty = 1; /* no samples: nothing to draw, and the report says so */
		} else if (err < 0) {
			fprintf(stderr, "rvprof: writing %s failed: %s\n", o.svg, strerror(-err));
			status_out = EXIT_RVPROF;
		}
	}
	print_header(stdout, &o, &f, pid);
	prof_report_print(rep, stdout, o.top, BAR_WIDTH);
	if (o.perf_data || o.folded || o.svg)
		printf("\n");
	if (o.perf_data && status_out != EXIT_RVPROF)
		printf("perf.data written to %s (perf report -i %s)\n", o.perf_data, o.perf_data);
	if (o.folded && status_out != EXIT_RVPROF)
		printf(
		    "folded stacks written to %s (speedscope or flamegraph.pl read them; --svg draws them)\n",
		    o.folded);
	if (o.svg && svg_empty)
		printf("no flame graph written to %s: no samples\n", o.svg);
	else if (o.svg && status_out != EXIT_RVPROF)
		printf("flame graph written to %s (open it in a web browser)\n", o.svg);
	fflush(stdout);
	prof_report_free(rep);
	prof_symbols_free(syms);
	rvsample_reader_close(reader);
	close(out_fd);
	return status_out;
}
