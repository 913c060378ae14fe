/* SPDX-License-Identifier: MIT */
/* librvsample: batch sampling for a PAPI EventSet (issue "Precise Event Sampling", part 3).
 *
 * In the spirit of the PAPI_sample_init proposal (Weaver/Smith, SC18), which handed users the raw perf ring
 * buffer: here the user gets DECODED records (PC, thread, time, the group's counter values), a buffer at a
 * time, and a writer/reader for records saved to a file.
 *
 * One event of the EventSet samples (every `threshold` events); the others are read into each record. With
 * `precise` > 0 the kernel uses Precise Event Sampling (perf's precise_ip): exact PCs, one interrupt per full
 * hardware buffer. Two modes:
 *   RVSAMPLE_BATCH   records arrive a hardware buffer at a time; PC, thread, time and values only.
 *   RVSAMPLE_STACKS  a call stack needs the interrupted context, so this mode asks the kernel for one record
 *                    per interrupt (as Linux perf does with PEBS) and unwinds with libunwind in the handler.
 * A sampler belongs to the thread that created it (as an EventSet does); each thread creates its own.
 * Every function returns 0 (or a count) on success and a negative RVSAMPLE_E* code on failure. */
#ifndef RVSAMPLE_H
#define RVSAMPLE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RVSAMPLE_MAX_VALUES 8  /* events of the EventSet read into each record */
#define RVSAMPLE_MAX_FRAMES 32 /* frames of a call stack (RVSAMPLE_STACKS) */

#define RVSAMPLE_OK       0
#define RVSAMPLE_EINVAL   (-1) /* bad argument or configuration */
#define RVSAMPLE_ENOEVENT (-2) /* an event of the EventSet has no perf encoding */
#define RVSAMPLE_ENOTSUP  (-3) /* the PMU cannot sample this way (e.g. precise > 0 without PES) */
#define RVSAMPLE_EPERM    (-4) /* perf_event_paranoid / capabilities forbid it */
#define RVSAMPLE_ESYS     (-5) /* a system call failed: errno says why */
#define RVSAMPLE_EPAPI    (-6) /* a PAPI call on the EventSet failed */
#define RVSAMPLE_EFORMAT  (-7) /* a sample file is not ours, truncated or of an unknown version */
#define RVSAMPLE_ESTATE   (-8) /* call out of order (start twice, read after destroy, ...) */

enum rvsample_mode { RVSAMPLE_BATCH = 0, RVSAMPLE_STACKS = 1 };

#define RVSAMPLE_F_EXACT 0x1u /* the PC is the causing instruction's (PERF_RECORD_MISC_EXACT_IP) */
#define RVSAMPLE_F_STACK 0x2u /* RVSAMPLE_STACKS: frames[1..] are the unwound callers (else nframes is 1) */

struct rvsample_record {
	uint64_t pc;       /* sampled PC */
	uint64_t time_ns;  /* perf clock (CLOCK_MONOTONIC unless the kernel says otherwise) */
	uint32_t pid, tid; /* process and thread the sample belongs to */
	uint32_t cpu;      /* CPU (hart) */
	uint32_t flags;    /* RVSAMPLE_F_* */
	uint64_t period;   /* events this sample stands for */
	uint32_t nvalues;  /* = number of events of the EventSet */
	uint32_t
	    nframes; /* RVSAMPLE_STACKS: frames[0] == pc, then return addresses, innermost first; else 0 */
	uint64_t values[RVSAMPLE_MAX_VALUES]; /* the group's counts at the sample, in EventSet order */
	uint64_t frames[RVSAMPLE_MAX_FRAMES];
};

struct rvsample_config {
	int sampling_event; /* index (in PAPI_list_events order) of the EventSet's event that samples */
	uint64_t threshold; /* events per sample, > 0 */
	int precise;        /* perf precise_ip: 0 any skid, 1-3 PES (2 asks for zero skid, 3 requires it) */
	enum rvsample_mode mode;
	/* Records held between reads; 0: 4096. When full, new ones are counted `dropped`. The kernel's ring
	 * buffer is sized from it too (samples that do not fit there are counted `lost`). */
	size_t buffer_records;
	/* Optional: called with each batch of decoded records as it arrives, in signal-handler context
	 * (async-signal-safe code only), and from rvsample_stop/rvsample_read for what they drain. NULL:
	 * records wait for rvsample_read. */
	void (*on_batch)(const struct rvsample_record *records, size_t n, void *arg);
	void *arg;
	/* Optional: called for each PERF_RECORD_THROTTLE (throttled 1: the kernel stopped sampling, more than
	 * its sample rate allows) and UNTHROTTLE (0: sampling resumed) with the record's time, in the same
	 * context as on_batch, after the records that came before it. NULL: only counted (stats.throttled).
	 */
	void (*on_throttle)(int throttled, uint64_t time_ns, void *arg);
};

struct rvsample_stats {
	uint64_t samples;    /* records decoded (read + dropped) */
	uint64_t exact;      /* of which with RVSAMPLE_F_EXACT */
	uint64_t lost;       /* samples the kernel lost (PERF_RECORD_LOST; at stop also PERF_FORMAT_LOST) */
	uint64_t dropped;    /* decoded but dropped: the record buffer was full */
	uint64_t interrupts; /* overflow signals handled (batches) */
	uint64_t throttled;  /* PERF_RECORD_THROTTLE seen */
};

typedef struct rvsample rvsample_t;

int rvsample_init(rvsample_t **sampler, int EventSet, const struct rvsample_config *config);
/* start, stop: from the owner thread only (RVSAMPLE_ESTATE otherwise). */
int rvsample_start(rvsample_t *sampler);
int rvsample_stop(rvsample_t *sampler); /* drains what the kernel still holds */
/* Moves up to `max` records collected so far into `buf`; returns how many (0: none pending). Any thread may
 * read; from the owner thread it first collects what the kernel delivered without a signal. */
ssize_t rvsample_read(rvsample_t *sampler, struct rvsample_record *buf, size_t max);
int rvsample_get_stats(const rvsample_t *sampler, struct rvsample_stats *stats);
struct rvsample_file_info;
/* The sampler's events (PAPI names), threshold, precision and mode, as a sample file's header wants them. */
int rvsample_get_info(const rvsample_t *sampler, struct rvsample_file_info *info);
int rvsample_destroy(rvsample_t *sampler); /* a running sampler: from its owner thread only */
/* The detailed message of this thread's last failure with `code`, else the code's general text. */
const char *rvsample_strerror(int code);

/* ---------------------------------------------------------------------------------- sample files */
/* A file holds a header (the events, threshold, precision, mode), the executable mappings of the sampled
 * process (for symbols) and records. The format is versioned and documented in docs/sampling-api.md. */
struct rvsample_file_info {
	uint32_t nevents;
	char events[RVSAMPLE_MAX_VALUES]
	           [128]; /* event names, EventSet order; events[sampling_event] samples */
	int sampling_event;
	uint64_t threshold;
	int precise;
	enum rvsample_mode mode;
};

struct rvsample_map { /* an executable mapping, as in /proc/PID/maps */
	uint64_t start, end, offset;
	char path[4096];
};

typedef struct rvsample_writer rvsample_writer_t;
typedef struct rvsample_reader rvsample_reader_t;

int rvsample_writer_open(rvsample_writer_t **writer, const char *path, const struct rvsample_file_info *info);
int rvsample_writer_add_maps(rvsample_writer_t *writer); /* the calling process's executable mappings */
int rvsample_writer_add(rvsample_writer_t *writer, const struct rvsample_record *records, size_t n);
int rvsample_writer_close(rvsample_writer_t *writer); /* flushes; reports a write error here at the latest */

int rvsample_reader_open(rvsample_reader_t **reader, const char *path, struct rvsample_file_info *info);
ssize_t rvsample_reader_read(rvsample_reader_t *reader, struct rvsample_record *buf, size_t max);
const struct rvsample_map *rvsample_reader_maps(const rvsample_reader_t *reader, size_t *n);
int rvsample_reader_close(rvsample_reader_t *reader);

#ifdef __cplusplus
}
#endif
#endif
