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
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
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
	int inherit;  /* follow forked children and exec'd programs */
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
	    "hardware buffer at a time. Every thread the program creates is sampled, and, as perf record\n"
	    "does, every child it forks and every program exec'd below it: one profile, each process\n"
	    "named by its command (the report's command column when there are several).\n"
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
	    "  -i, --no-inherit       sample only the process rvprof starts (as perf record -i): its\n"
	    "                         children and the programs it execs are not followed\n"
	    "      --progress         show a progress line on stderr (default: when stderr is a terminal)\n"
	    "      --no-progress      never show it\n"
	    "  -h, --help             show this text\n"
	    "\n"
	    "Exit status: the program's (128+N if it was killed by signal N); 125 when rvprof fails (bad\n"
	    "option, unknown event, unwritable output, sampling refused), 126 when the program cannot be\n"
	    "run, 127 when it is not found. SIGTERM and SIGHUP sent to rvprof go to the program. rvprof\n"
	    "ends when the program does: children still running then are left out (it says so).\n"
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
	    {"no-inherit", no_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	*o = (struct options){
	    DEFAULT_EVENT, DEFAULT_THRESHOLD, 0, NULL, NULL, NULL, DEFAULT_TOP, -1, -1, 1, NULL, 0};
	opterr = 0;
	int c;
	/* "+": stop at the program's name, so its own options are left alone */
	while ((c = getopt_long(argc, argv, "+:e:c:go:ih", longs, NULL)) != -1) {
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
		case 'i':
			o->inherit = 0;
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

static void setenv_or_die(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		_exit(EXIT_RVPROF);
}

/* Child: the environment for the agent, then the program. An exec failure goes back through `errfd`. */
static void run_child(const struct options *o, const char *agent, const char *dir, int sock_fd, int errfd)
{
	char buf[64];
	/* the agent's socket stays open across exec (every image sends its files there) */
	if (fcntl(sock_fd, F_SETFD, 0) != 0)
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
	snprintf(buf, sizeof(buf), "%d", sock_fd);
	setenv_or_die(RVPROF_ENV_SOCK, buf);
	setenv_or_die(RVPROF_ENV_DIR, dir);
	snprintf(buf, sizeof(buf), "%ld", (long)getppid());
	setenv_or_die(RVPROF_ENV_FRONT, buf);
	setenv_or_die(RVPROF_ENV_INHERIT, o->inherit ? "1" : "0");
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

/* A process image the agent sampled (prof_shm.h): its page, mapped, and its sample file. */
struct image {
	struct rvprof_shm *page;
	int out_fd;
	uint32_t pid;        /* as the message said (the page may be overwritten) */
	struct rvprof_shm s; /* a checked copy of the page, taken when the program has ended */
	int known;           /* the copy passed prof_shm_check */
	char why[128];       /* otherwise: what was wrong */
	uint64_t samples;
	int read_error; /* the sample file could not be read (incomplete) */
};

struct images {
	struct image *v;
	size_t n, cap;
	int broken; /* a message that was not an image's (left out) */
};

/* Takes every message waiting on the agents' socket: one per image, its pid and two descriptors. */
static void receive_images(int sock, struct images *im)
{
	for (;;) {
		uint32_t pid = 0;
		int fds[2] = {-1, -1};
		char ctl[CMSG_SPACE(sizeof(fds))];
		struct iovec iov = {&pid, sizeof(pid)};
		struct msghdr msg;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		ssize_t got = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		size_t nfds = 0;
		if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(cm), (nfds > 2 ? 2 : nfds) * sizeof(int));
		}
		void *m = MAP_FAILED;
		if (got == (ssize_t)sizeof(pid) && nfds == 2 && !(msg.msg_flags & MSG_CTRUNC))
			m = mmap(NULL, sizeof(struct rvprof_shm), PROT_READ, MAP_SHARED, fds[0], 0);
		if (fds[0] >= 0)
			close(fds[0]);
		if (m == MAP_FAILED) {
			if (fds[1] >= 0)
				close(fds[1]);
			im->broken++;
			continue;
		}
		if (im->n == im->cap) {
			size_t cap = im->cap ? im->cap * 2 : 8;
			struct image *v = realloc(im->v, cap * sizeof(*v));
			if (!v)
				die("out of memory");
			im->v = v;
			im->cap = cap;
		}
		struct image *g = &im->v[im->n++];
		memset(g, 0, sizeof(*g));
		g->page = m;
		g->out_fd = fds[1];
		g->pid = pid;
	}
}

/* The image rvprof started (its first), or NULL when the agent never ran in it. */
static struct image *first_image(struct images *im, pid_t pid)
{
	for (size_t i = 0; i < im->n; i++)
		if (im->v[i].pid == (uint32_t)pid && im->v[i].page->how == RVPROF_HOW_STARTED)
			return &im->v[i];
	return NULL;
}

static void progress_line(const struct images *im, int tty, double secs)
{
	unsigned long long n = 0, b = 0;
	int overwritten = 0;
	for (size_t i = 0; i < im->n; i++) {
		const struct rvprof_shm *s = im->v[i].page;
		if (__atomic_load_n(&s->magic, __ATOMIC_RELAXED) != RVPROF_SHM_MAGIC) {
			overwritten = 1; /* the program wrote over it */
			continue;
		}
		n += __atomic_load_n(&s->samples, __ATOMIC_RELAXED);
		b += __atomic_load_n(&s->batches, __ATOMIC_RELAXED);
	}
	if (overwritten && im->n == 1)
		fprintf(stderr, "%srvprof: running (the state page was overwritten), %.0f s%s",
		        tty ? "\r" : "", secs, tty ? "\033[K" : "\n");
	else if (im->n > 1)
		fprintf(stderr, "%srvprof: %llu samples in %llu batches, %zu processes, %.0f s%s",
		        tty ? "\r" : "", n, b, im->n, secs, tty ? "\033[K" : "\n");
	else
		fprintf(stderr, "%srvprof: %llu samples in %llu batches, %.0f s%s", tty ? "\r" : "", n, b,
		        secs, tty ? "\033[K" : "\n");
	fflush(stderr);
}

/* Waits for the program, taking the images' files as they arrive (so no agent waits for room on the
 * socket), and showing progress if asked. */
static int wait_child(pid_t pid, int sock, struct images *im, int progress)
{
	int status, tty = isatty(STDERR_FILENO);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double shown = 0;
	for (;;) {
		receive_images(sock, im);
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r < 0 && errno != EINTR)
			die("waitpid: %s", strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		double secs = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (r == pid) {
			receive_images(sock, im); /* what came after the last look */
			if (!progress)
				return status;
			const struct image *f = first_image(im, pid);
			if (f && __atomic_load_n(&f->page->state, __ATOMIC_ACQUIRE) == RVPROF_FAILED) {
				if (tty && shown > 0)
					fputs("\r\033[K", stderr); /* the error says it all */
				return status;
			}
			progress_line(im, tty, secs); /* the final count */
			if (tty)
				fputc('\n', stderr);
			return status;
		}
		if (progress &&
		    secs - shown >= (tty ? 0.5 : 5.0)) { /* a line per 5 s when stderr is a file */
			progress_line(im, tty, secs);
			shown = secs;
		}
		/* a message from an agent, or 100 ms: then whether the program has ended */
		struct pollfd pfd = {sock, POLLIN, 0};
		int pr = poll(&pfd, 1, 100);
		if (pr < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pr > 0 &&
		    !(pfd.revents & POLLIN)) { /* every agent closed its end: only the wait is left */
			struct timespec tick = {0, 100 * 1000 * 1000};
			nanosleep(&tick, NULL);
		}
	}
}

/* What the header shows: the agent's counts, or (when its page was overwritten) what the samples say. */
struct facts {
	struct rvprof_shm s; /* a checked copy of the agent's page */
	int counts_known;    /* 0: lost, dropped, interrupts and throttles are unknown */
	uint64_t samples, exact;
	uint64_t throttles, unthrottled; /* marks in the sample file */
	double throttled_ms;             /* the sum of the THROTTLE..UNTHROTTLE intervals */
	const struct images *im;         /* every image, for the processes line */
};

static const char *how_text(const struct images *im, size_t k, char *buf, size_t len)
{
	const struct image *g = &im->v[k];
	const struct rvprof_shm *s = &g->s;
	if (!g->known)
		snprintf(buf, len, "(its state page was overwritten: %s)", g->why);
	else if (s->how == RVPROF_HOW_STARTED)
		snprintf(buf, len, "started by rvprof");
	else if (s->how == RVPROF_HOW_FORKED)
		snprintf(buf, len, "forked by %d", s->ppid);
	else if (s->how == RVPROF_HOW_RESUMED)
		snprintf(buf, len, "the same program again (its exec failed)");
	else {
		int execed = 0; /* an earlier image of the same pid: this one is what it exec'd */
		for (size_t i = 0; i < k; i++)
			execed |= im->v[i].pid == g->pid;
		snprintf(buf, len, execed ? "exec'd" : "spawned by %d, exec'd", s->ppid);
	}
	return buf;
}

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
	if (f->im->n > 1) {
		fprintf(out,
		        "  processes   %zu program images sampled (children and exec'd programs followed):\n",
		        f->im->n);
		for (size_t k = 0; k < f->im->n; k++) {
			const struct image *g = &f->im->v[k];
			char how[256];
			fprintf(out, "              pid %-7u %-16s %8llu samples  %s%s%s\n", g->pid,
			        g->known ? g->s.comm : "?", (unsigned long long)g->samples,
			        how_text(f->im, k, how, sizeof(how)),
			        g->known && g->s.state == RVPROF_FAILED ? ", not sampled: " : "",
			        g->known && g->s.state == RVPROF_FAILED ? g->s.message : "");
		}
	}
	if (s->children && !o->inherit)
		fprintf(out,
		        "  children    %d forked, not profiled (--no-inherit): rvprof sampled the process it "
		        "started only\n",
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

/* The records of one image's sample file, into the report, the header's facts and perf.data. */
struct reading {
	struct prof_report *rep;
	struct perfdata *pd;
	struct facts *f;
	struct throttle_state thr;
	struct tid_set threads;
	struct rvsample_record *buf;
};

/* The earliest and latest sample times of an open sample file (then rewound by reopening). */
static void sample_times(const char *path, uint64_t *first, uint64_t *last, struct rvsample_record *buf)
{
	struct rvsample_file_info info;
	rvsample_reader_t *r = NULL;
	*first = UINT64_MAX;
	*last = 0;
	if (rvsample_reader_open(&r, path, &info) < 0)
		return;
	ssize_t n;
	while ((n = rvsample_reader_read(r, buf, 256)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i].time_ns < *first)
				*first = buf[i].time_ns;
			if (buf[i].time_ns > *last)
				*last = buf[i].time_ns;
		}
	rvsample_reader_close(r);
}

/* Reads image k of `im` (its file must be complete). Returns 0, or the reader's error. */
static int read_image(struct reading *rd, struct images *im, size_t k, const char *comm, int is_main,
                      uint32_t main_pid)
{
	struct image *g = &im->v[k];
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", g->out_fd);
	struct rvsample_file_info info;
	rvsample_reader_t *reader = NULL;
	int err = rvsample_reader_open(&reader, path, &info);
	if (err < 0)
		return err;
	if (is_main && !rd->f->counts_known)
		rd->f->s.precise = info.precise; /* the file's header: written once, at the start */
	size_t nmaps = 0;
	const struct rvsample_map *maps = rvsample_reader_maps(reader, &nmaps);
	struct prof_symbols *syms = prof_symbols_new(maps, nmaps);
	if (!syms)
		die("out of memory");
	prof_report_set_process(rd->rep, syms, comm);
	uint64_t first = UINT64_MAX, last = 0;
	int last_of_pid = 1;
	if (rd->pd) {
		sample_times(path, &first, &last, rd->buf);
		int earlier = 0;
		for (size_t i = 0; i < k; i++)
			earlier |= im->v[i].pid == g->pid;
		for (size_t i = k + 1; i < im->n; i++)
			last_of_pid &= im->v[i].pid != g->pid;
		/* perf record's view: a process it had not seen was forked (or spawned) by its parent; a
		 * program image after another of the same pid is an exec */
		int forked = !earlier && g->pid != main_pid && g->known;
		int execed = earlier && g->known && g->s.how == RVPROF_HOW_EXECED;
		struct perfdata_process p = {g->pid, g->known ? (uint32_t)g->s.ppid : 0,
		                             g->known ? (uint32_t)(g->s.ptid ? g->s.ptid : g->s.ppid) : 0,
		                             comm, forked, execed,
		                             /* before the image's first sample (the first image's: at 0) */
		                             is_main || first == UINT64_MAX || first < 2 ? 0 : first - 2};
		perfdata_add_process(rd->pd, &p, maps, nmaps);
	}
	ssize_t n;
	while ((n = rvsample_reader_read(reader, rd->buf, 256)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			const struct rvsample_record *r = &rd->buf[i];
			if (r->flags & (RVPROF_REC_THROTTLE | RVPROF_REC_UNTHROTTLE)) {
				if (throttle_mark(rd->f, &rd->thr, r) < 0)
					die("out of memory");
				if (rd->pd)
					perfdata_add_throttle(rd->pd, r,
					                      (r->flags & RVPROF_REC_THROTTLE) != 0);
				continue;
			}
			if (prof_report_add(rd->rep, r) < 0 || tid_set_add(&rd->threads, r->tid) < 0)
				die("out of memory");
			rd->f->samples++;
			g->samples++;
			rd->f->exact += (r->flags & RVSAMPLE_F_EXACT) != 0;
			if (rd->pd)
				perfdata_add_sample(rd->pd, r);
		}
	}
	if (n < 0)
		fprintf(stderr, "rvprof: reading the samples of process %u stopped early: %s\n", g->pid,
		        sample_error((int)n, path));
	/* the process ended (not by exec, and no image of it follows): EXIT, as the kernel reports it */
	if (rd->pd && last_of_pid && g->known && g->s.state == RVPROF_DONE && !g->s.exec_end)
		perfdata_add_exit(rd->pd, g->pid, (uint32_t)g->s.ppid, last == 0 ? 0 : last + 1);
	prof_report_set_process(rd->rep, NULL, comm);
	prof_symbols_free(syms);
	rvsample_reader_close(reader);
	return 0;
}

/* Notes on the images other than the first (the first's are rvprof's main messages). */
static void image_notes(const struct images *im, const struct image *main_img)
{
	for (size_t k = 0; k < im->n; k++) {
		const struct image *g = &im->v[k];
		if (g == main_img)
			continue;
		const char *comm = g->known ? g->s.comm : "?";
		if (!g->known)
			fprintf(stderr, "rvprof: process %u wrote over its state page (%s)\n", g->pid,
			        g->why);
		else if (g->s.state == RVPROF_FAILED)
			fprintf(stderr, "rvprof: process %u (%s) was not sampled: %s\n", g->pid, comm,
			        g->s.message);
		else if (g->s.state == RVPROF_RUNNING)
			fprintf(
			    stderr,
			    "rvprof: process %u (%s) had not ended by exit() or exec when the program ended\n"
			    "        (still running, or _exit or a signal): its samples were not written\n",
			    g->pid, comm);
		else if (g->read_error)
			fprintf(stderr, "rvprof: cannot read the samples of process %u (%s)\n", g->pid, comm);
	}
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

	/* the agents create their files in TMPDIR: it must take one before the program runs */
	const char *tmp = getenv("TMPDIR");
	const char *dir = tmp && *tmp ? tmp : "/tmp";
	close(unnamed_file(dir, "state file"));
	/* two descriptors per process image are held until the program ends */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair: %s", strerror(errno));

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		close(sv[0]);
		run_child(&o, agent, dir, sv[1], pipefd[1]);
	}
	close(pipefd[1]);
	close(sv[1]); /* the program's images hold it */
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
	struct images im;
	memset(&im, 0, sizeof(im));
	int status = wait_child(pid, sv[0], &im, o.progress);
	child_pid = 0;
	close(sv[0]); /* children still running: their later images are not taken */
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	/* one snapshot of every page, checked, then used */
	struct image *main_img = NULL;
	for (size_t k = 0; k < im.n; k++) {
		struct image *g = &im.v[k];
		memcpy(&g->s, g->page, sizeof(g->s));
		munmap(g->page, sizeof(*g->page));
		g->page = NULL;
		g->known = prof_shm_check(&g->s, g->why, sizeof(g->why)) == 0;
		if (!main_img && g->pid == (uint32_t)pid)
			main_img = g;
	}
	struct facts f;
	memset(&f, 0, sizeof(f));
	f.im = &im;
	char why[128] = "";
	if (main_img) {
		f.s = main_img->s;
		f.counts_known = main_img->known;
		snprintf(why, sizeof(why), "%s", main_img->why);
	}
	int state = !main_img ? RVPROF_NOT_STARTED : f.counts_known ? f.s.state : -1;

	int failed = 0;
	if (got == (ssize_t)sizeof(exec_errno)) {
		fprintf(stderr, "rvprof: cannot run %s: %s\n", o.argv[0], strerror(exec_errno));
		failed = rc;
	} else if (state == RVPROF_FAILED) {
		fprintf(stderr, "rvprof: %s\n", f.s.message);
		failed = EXIT_RVPROF;
	} else if (state == RVPROF_NOT_STARTED && rc == RVPROF_AGENT_EXIT) {
		failed = EXIT_RVPROF; /* the agent could not reach rvprof: it said why on stderr */
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

	/* the program's own image first: without its samples there is nothing to show */
	char main_path[64];
	snprintf(main_path, sizeof(main_path), "/proc/self/fd/%d", main_img->out_fd);
	{
		struct rvsample_file_info info;
		rvsample_reader_t *probe = NULL;
		int err = rvsample_reader_open(&probe, main_path, &info);
		if (err < 0) {
			/* a program that ended without exit() left no complete file: its status is what
			 * matters */
			if (state >= 0 && state != RVPROF_RUNNING)
				fprintf(stderr, "rvprof: cannot read the samples: %s\n",
				        sample_error(err, main_path));
			else if (state < 0)
				fprintf(stderr,
				        "rvprof: and the sample file is incomplete (%s): the program ended "
				        "without exit()\n"
				        "        (_exit, a signal or exec), or the agent could not sample: "
				        "nothing to show\n",
				        sample_error(err, main_path));
			/* ended without exit(), or cannot tell (the page was overwritten): the program's
			 * status stands */
			return state == RVPROF_RUNNING || state < 0 ? rc : EXIT_RVPROF;
		}
		rvsample_reader_close(probe);
	}
	/* the counts of the other images, added to the header's */
	for (size_t k = 0; k < im.n; k++) {
		const struct image *g = &im.v[k];
		if (g == main_img)
			continue;
		if (!g->known) {
			f.counts_known = 0;
			continue;
		}
		f.s.lost += g->s.lost;
		f.s.dropped += g->s.dropped;
		f.s.interrupts += g->s.interrupts;
		f.s.at_stop += g->s.at_stop;
		f.s.threads += g->s.threads;
		f.s.threads_failed += g->s.threads_failed;
		f.s.children += g->s.children;
	}
	if (!f.counts_known)
		fprintf(stderr,
		        "rvprof: the header shows what the sample files hold; lost, dropped, interrupt "
		        "and throttle\n"
		        "        counts are unknown\n");
	struct reading rd;
	memset(&rd, 0, sizeof(rd));
	rd.f = &f;
	rd.rep = prof_report_new(NULL, o.stacks);
	rd.buf = calloc(256, sizeof(*rd.buf));
	if (!rd.rep || !rd.buf)
		die("out of memory");
	const char *slash = strrchr(o.argv[0], '/');
	const char *main_comm = main_img->known && main_img->s.comm[0] ? main_img->s.comm
	                        : slash                                ? slash + 1
	                                                               : o.argv[0];
	if (o.perf_data) {
		struct perfdata_config pc = {o.event,   o.threshold, f.s.precise, o.stacks,
		                             main_comm, argc,        argv};
		int err = perfdata_open(&rd.pd, o.perf_data, &pc);
		if (err < 0)
			die("-o %s: %s", o.perf_data, strerror(-err));
	}
	for (size_t k = 0; k < im.n; k++) {
		struct image *g = &im.v[k];
		int is_main = g == main_img;
		if (!is_main && (!g->known || g->s.state != RVPROF_DONE))
			continue; /* not sampled, or no complete file: said below */
		int err = read_image(&rd, &im, k, is_main ? main_comm : g->s.comm, is_main, (uint32_t)pid);
		if (err < 0)
			g->read_error = 1;
	}
	image_notes(&im, main_img);
	if (!f.counts_known)
		f.s.threads = (int32_t)rd.threads.n;
	free(rd.buf);
	free(rd.threads.tid);
	free(rd.thr.tids.tid);
	free(rd.thr.since);
	int status_out = rc;
	if (rd.pd) {
		if (f.counts_known)
			perfdata_add_lost(rd.pd, (uint32_t)pid, f.s.lost);
		int err = perfdata_close(rd.pd);
		if (err < 0) {
			fprintf(stderr, "rvprof: writing %s failed: %s\n", o.perf_data, strerror(-err));
			status_out = EXIT_RVPROF;
		}
	}
	struct prof_report *rep = rd.rep;
	if (o.folded) {
		int err = prof_report_write_folded(rep, o.folded);
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
		int err = stacks ? prof_flamegraph_write(stacks, nstacks, title, o.svg) : -ENOMEM;
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
	for (size_t k = 0; k < im.n; k++)
		close(im.v[k].out_fd);
	free(im.v);
	return status_out;
}
