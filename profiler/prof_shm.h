/* SPDX-License-Identifier: MIT */
/* What rvprof (the front end) and its agent (librvprof-agent.so, preloaded into the profiled program) share:
 * the environment variables the front end sets, a socket, and per process image (the program, every child it
 * forks, every program exec'd or spawned below it) two files: a small state file both map, where the agent
 * publishes the image's state, who it is (pid, parent, command name) and its running counts (the progress
 * line), and its error message when it cannot sample; and the image's sample file (rvsample format).
 *
 * Both files have no name: the agent creates them unlinked (O_TMPFILE in rvprof's $TMPDIR, else memfd) and
 * sends their descriptors to rvprof over the socket (SCM_RIGHTS) before it samples, so nothing is left in
 * $TMPDIR whatever happens to either process, SIGKILL included. The page lives in the profiled program's
 * address space, so the program can overwrite it: the agent keeps its own counts and writes them all again
 * at exit, and the front end checks what it reads. */
#ifndef RVPROF_SHM_H
#define RVPROF_SHM_H
#include <stddef.h>
#include <stdint.h>

#define RVPROF_ENV_SOCK "RVPROF_SOCK_FD" /* descriptor of the socket to rvprof (images send files there) */
#define RVPROF_ENV_DIR  "RVPROF_TMPDIR"  /* where the agent creates its unnamed files */
/* rvprof's pid: the agent sends only to a socket whose peer it is (the program may have closed the socket and
 * reused its number for another one) */
#define RVPROF_ENV_FRONT "RVPROF_FRONT_PID"
/* The process rvprof started; its first image changes it to "0" so that images exec'd or spawned below it
 * know they are followed (RVPROF_INHERIT=1), or removes the whole environment (RVPROF_INHERIT=0). */
#define RVPROF_ENV_PID       "RVPROF_PID"
#define RVPROF_ENV_INHERIT   "RVPROF_INHERIT"   /* 1: follow forked children and exec'd programs (default) */
#define RVPROF_ENV_EVENT     "RVPROF_EVENT"     /* PAPI event name */
#define RVPROF_ENV_THRESHOLD "RVPROF_THRESHOLD" /* events per sample */
#define RVPROF_ENV_PRECISE   "RVPROF_PRECISE"   /* "auto" (2, else 0 with a note), or 0..3 (required) */
#define RVPROF_ENV_STACKS    "RVPROF_STACKS"    /* 1: call stacks (RVSAMPLE_STACKS) */

#define RVPROF_SHM_MAGIC   0x72767066u /* "rvpf" */
#define RVPROF_SHM_VERSION 3

enum rvprof_state {
	RVPROF_NOT_STARTED = 0, /* the agent never ran in the program (static binary, setuid, ...) */
	RVPROF_RUNNING = 1,
	RVPROF_FAILED = 2, /* the agent could not sample: message says why; the program was stopped */
	RVPROF_DONE = 3,   /* the sample file is complete */
};

/* How a process image came to be sampled. */
enum rvprof_how {
	RVPROF_HOW_STARTED = 0, /* the program rvprof started */
	RVPROF_HOW_FORKED = 1,  /* a child forked by a sampled image (ptid: the thread that forked) */
	RVPROF_HOW_EXECED = 2,  /* an image exec'd by a sampled process, or spawned without fork below it */
	RVPROF_HOW_RESUMED = 3, /* the same image again after an exec* that failed */
};

/* The agent's exit status when it stops the program because it cannot sample (the front end reports the
 * message instead). */
#define RVPROF_AGENT_EXIT 125

struct rvprof_shm {
	uint32_t magic, version;
	int32_t state;           /* enum rvprof_state */
	int32_t precise;         /* the precise_ip level in use */
	int32_t precise_refused; /* 1: precise sampling was asked for by default and refused by the PMU */
	int32_t threads;         /* threads sampled */
	int32_t threads_failed;  /* threads the agent could not sample (message holds the first reason) */
	int32_t children;        /* processes this image forked (not followed with RVPROF_INHERIT=0) */
	/* who: written once, before the descriptors are sent */
	int32_t pid, ppid, ptid; /* ptid: the parent's thread that forked (forked images), else 0 */
	int32_t how;             /* enum rvprof_how */
	int32_t exec_end;        /* 1: the image ended by exec* (its sample file is complete) */
	char comm[16];           /* the command name (/proc/self/comm) when the image started */
	/* running counts, updated as batches arrive (the progress line) */
	uint64_t samples, batches;
	/* totals (rvsample_get_stats), added when each thread's sampler stops */
	uint64_t interrupts, lost, dropped, throttled, exact;
	uint64_t written;     /* records in the sample file (samples and throttle marks) */
	uint64_t at_stop;     /* samples read when a thread's sampler stopped (no interrupt brought them) */
	uint32_t overwritten; /* 1: the program overwrote this page; the agent rewrote it at exit */
	uint32_t reserved;
	char message[512];
};

/* Records of the sample file that are not samples: the kernel throttled the thread's event at time_ns
 * (PERF_RECORD_THROTTLE), or let it sample again (UNTHROTTLE). pc is 0, there are no values. */
#define RVPROF_REC_THROTTLE   0x10000u
#define RVPROF_REC_UNTHROTTLE 0x20000u

/* What the front end reads back, checked (prof_shm.c): the page is in the program's reach. Returns 0, or -1
 * with the first field found wrong and its value in `why` (e.g. "precise_ip 1094795585"). */
int prof_shm_check(const struct rvprof_shm *s, char *why, size_t len);

#endif
