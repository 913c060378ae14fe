/* SPDX-License-Identifier: MIT */
/* What rvprof (the front end) and its agent (librvprof-agent.so, preloaded into the profiled program) share:
 * the environment variables the front end sets, and a small file mapping both map: the agent publishes its
 * state and running counts there (the progress line), and its error message when it cannot sample. */
#ifndef RVPROF_SHM_H
#define RVPROF_SHM_H
#include <stdint.h>

#define RVPROF_ENV_SHM       "RVPROF_SHM"   /* path of the shared file */
#define RVPROF_ENV_OUT       "RVPROF_OUT"   /* sample file the agent writes (rvsample format) */
#define RVPROF_ENV_PID       "RVPROF_PID"   /* the profiled process: children and exec'd programs are not */
#define RVPROF_ENV_EVENT     "RVPROF_EVENT" /* PAPI event name */
#define RVPROF_ENV_THRESHOLD "RVPROF_THRESHOLD" /* events per sample */
#define RVPROF_ENV_PRECISE   "RVPROF_PRECISE"   /* "auto" (2, else 0 with a note), or 0..3 (required) */
#define RVPROF_ENV_STACKS    "RVPROF_STACKS"    /* 1: call stacks (RVSAMPLE_STACKS) */

#define RVPROF_SHM_MAGIC   0x72767066u /* "rvpf" */
#define RVPROF_SHM_VERSION 1

enum rvprof_state {
	RVPROF_NOT_STARTED = 0, /* the agent never ran in the program (static binary, setuid, ...) */
	RVPROF_RUNNING = 1,
	RVPROF_FAILED = 2, /* the agent could not sample: message says why; the program was stopped */
	RVPROF_DONE = 3,   /* the sample file is complete */
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
	int32_t reserved;
	/* running counts, updated as batches arrive (the progress line) */
	uint64_t samples, batches;
	/* totals (rvsample_get_stats), added when each thread's sampler stops */
	uint64_t interrupts, lost, dropped, throttled, exact;
	uint64_t written; /* records in the sample file */
	char message[512];
};

#endif
