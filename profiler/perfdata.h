/* SPDX-License-Identifier: MIT */
/* rvprof: a writer of perf's perf.data file format (tools/perf/Documentation/perf.data-file-format.txt), so
 * that `perf report -i FILE` reads rvprof's samples: one event (the attr section), then per process image
 * FORK (a child), COMM (with PERF_RECORD_MISC_COMM_EXEC for an exec'd image) and MMAP2 records, its SAMPLE
 * records (IP|TID|TIME|PERIOD, plus CALLCHAIN with call stacks) and EXIT, PERF_RECORD_LOST for lost samples,
 * PERF_RECORD_THROTTLE/UNTHROTTLE where the kernel throttled the event, and the EVENT_DESC and CMDLINE
 * features. */
#ifndef RVPROF_PERFDATA_H
#define RVPROF_PERFDATA_H
#include <stddef.h>
#include <stdint.h>

struct rvsample_map;
struct rvsample_record;
struct perfdata;

struct perfdata_config {
	const char *event;  /* name shown by perf (EVENT_DESC) */
	uint64_t threshold; /* sample_period */
	int precise;        /* precise_ip */
	int callchain;      /* samples carry PERF_SAMPLE_CALLCHAIN */
	const char *comm;   /* the command name shown for every thread */
	int argc;           /* command line (CMDLINE feature) */
	char *const *argv;
};

/* Returns 0, or -errno (the file cannot be created). */
int perfdata_open(struct perfdata **pd, const char *path, const struct perfdata_config *cfg);
/* One MMAP2 record per executable mapping of process `pid`. */
int perfdata_add_maps(struct perfdata *pd, uint32_t pid, const struct rvsample_map *maps, size_t n);
/* A process image, as perf record writes it when the kernel reports one: FORK (pid from ppid's thread ptid)
 * when `forked`, COMM (the image's command name; PERF_RECORD_MISC_COMM_EXEC when `execed`), then one MMAP2
 * per executable mapping, all at `time` (before the image's first sample: perf report orders records by
 * time). Later samples of the process's threads are named `comm`. */
struct perfdata_process {
	uint32_t pid, ppid, ptid;
	const char *comm;
	int forked, execed;
	uint64_t time;
};
int perfdata_add_process(struct perfdata *pd, const struct perfdata_process *p,
                         const struct rvsample_map *maps, size_t n);
/* PERF_RECORD_EXIT of process pid (child of ppid) at `time`. */
int perfdata_add_exit(struct perfdata *pd, uint32_t pid, uint32_t ppid, uint64_t time);
/* One SAMPLE (preceded by a COMM the first time its thread is seen); exact samples get
 * PERF_RECORD_MISC_EXACT_IP. */
int perfdata_add_sample(struct perfdata *pd, const struct rvsample_record *r);
/* A PERF_RECORD_LOST record for `lost` samples (nothing when 0). */
int perfdata_add_lost(struct perfdata *pd, uint32_t pid, uint64_t lost);
/* A PERF_RECORD_THROTTLE (throttle 1) or UNTHROTTLE (0) at the record's time, for the record's thread. */
int perfdata_add_throttle(struct perfdata *pd, const struct rvsample_record *r, int throttle);
/* Writes the features and the header; returns 0 or -errno (a write error). Frees pd either way. */
int perfdata_close(struct perfdata *pd);

#endif
