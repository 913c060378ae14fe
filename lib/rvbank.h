/* SPDX-License-Identifier: MIT */
/* librvbank: the counter-bank client. Reads the distributed HPC (seed 000, §4.2-4.3) in batches and BOOM's
 * extended counter bank (seed 001), through seam 2 (rvhw.h) only, so the same code runs on hardware and
 * under the emulator.
 *
 * Distributed HPC: the caller hands (ManagerID, bitmap) pairs; each pair is ONE request (write hpcm, write
 * hpcc with the ID and trigger), whatever the number of bits. Values are popped from hpcr as soon as they
 * arrive (`empty` clears; afterwards hpcm's refilled bits say how many more are queued), not after trigger
 * drops, and land in ascending bit order. Seed 000's Algorithm 2 guards against context switches: when
 * `interrupted` or `readerror` is set at the end, the request is cancelled and issued again, up to
 * max_retries times; then RVBANK_ERETRY (never a wrong number). A manager that does not answer within
 * max_polls polls is cancelled (trigger = 0) and reported as RVBANK_ETIMEDOUT.
 *
 * Overlap: the client of a hart is one set of registers (hpcm is read-only while trigger is set, and writing
 * it empties the receive FIFO), so the protocol allows one outstanding request per client: requests to
 * different managers are issued back to back, the next one right after the previous one's last pop.
 *
 * The counters are free-running (nothing resets them): count over an interval = rvbank_delta(end, start).
 *
 * BOOM: 64 free-running per-task counters read with hint 128 + n; they count only while procTag is
 * 0x1234567 and pfc_enable is 1, at the privilege levels pfc_maxPriv selects.
 */
#ifndef RVBANK_H
#define RVBANK_H
#include <stddef.h>
#include <stdint.h>

#include "rvhw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVBANK_MAX_COUNTERS 64 /* per HPC request (hpcm width), and BOOM's bank size */
/* Algorithm 2 repetitions after the first attempt. An attempt fails only when the thread was descheduled
 * during it (or a pop found the FIFO empty), so on a board a retry is rare; where a CSR access traps
 * (qemu-user, the emulator: each one a signal delivery) a loaded host deschedules most attempts, and 8
 * repetitions were exhausted under stress-ng --cpu 2. Each repetition costs only when it is needed. */
#define RVBANK_DEFAULT_RETRIES  32
#define RVBANK_DEFAULT_POLLS    100000 /* polls of one request before its manager counts as silent */
#define RVBANK_HPC_COUNTER_BITS 64     /* the paper gives no width: 64-bit counters */

/* Return codes (negative, errno-like). */
#define RVBANK_OK        0
#define RVBANK_EPERM     (-1)   /* hpcc.useren = 0: a user trigger would trap */
#define RVBANK_ERETRY    (-11)  /* still interrupted / readerror after the retry bound */
#define RVBANK_ENOHW     (-19)  /* no such bank on this machine */
#define RVBANK_EINVAL    (-22)  /* bad argument */
#define RVBANK_ETIMEDOUT (-110) /* the manager never answered (unknown ManagerID?) */
#define RVBANK_EIO       (-5)   /* seam 2 refused a CSR access or hint */

#define RVBANK_API __attribute__((visibility("default")))

struct rvbank_hpc_request {
	uint32_t manager_id; /* RVHW_HPC_MANAGER_ID(module, extend) */
	uint64_t bitmap;     /* counters to read (hpcm bits); at least one */
	uint64_t *values;    /* out: popcount(bitmap) values, in ascending bit order */
};

struct rvbank_hpc_options {
	unsigned max_retries; /* 0: none (one attempt only) */
	unsigned max_polls;   /* > 0 */
};

/* What one call cost (added to, never cleared by the library). */
struct rvbank_hpc_stats {
	uint64_t requests;   /* triggers written (retries included) */
	uint64_t retries;    /* Algorithm 2 repetitions */
	uint64_t csr_reads;  /* hpcc/hpcm/hpcr reads, polls included */
	uint64_t csr_writes; /* hpcc/hpcm writes */
};

/* 0 (RVBANK_OK) when user code may read the distributed HPC: the isa string of /proc/cpuinfo has the
 * xdhpc extension and hpcc.useren is 1. Otherwise an error code and, if reason != NULL, a one-line reason.
 * Never executes an HPC instruction on a machine without xdhpc (that would raise SIGILL). */
RVBANK_API int rvbank_hpc_probe(char *reason, size_t len);

/* Number of harts ("processor" entries of /proc/cpuinfo), at least 1. */
RVBANK_API unsigned rvbank_nharts(void);

/* Read every request, one after the other, each with Algorithm 2. opt and stats may be NULL (defaults, no
 * statistics). On error the values of the failing request and the ones after it are unspecified. */
RVBANK_API int rvbank_hpc_read(const struct rvbank_hpc_request *req, size_t n,
                               const struct rvbank_hpc_options *opt, struct rvbank_hpc_stats *stats);

/* 1 if a manager answers a one-counter request within opt->max_polls polls, 0 if it stays silent (the
 * request is cancelled), or an error code. */
RVBANK_API int rvbank_hpc_manager_answers(uint32_t manager_id, const struct rvbank_hpc_options *opt);

/* BOOM bank. */
struct rvbank_boom_state {
	uint64_t proc_tag, max_priv;
};
RVBANK_API int rvbank_boom_save(struct rvbank_boom_state *saved);
/* Count this task: procTag = 0x1234567, pfc_maxPriv = max_priv (0 user, 1 user+supervisor, 3 all),
 * pfc_enable = 1. The counters are not reset (other readers keep their baselines). */
RVBANK_API int rvbank_boom_count(unsigned max_priv);
/* Put procTag and pfc_maxPriv back (pfc_enable cannot be read, so it is left set). */
RVBANK_API int rvbank_boom_restore(const struct rvbank_boom_state *saved);
/* values[i] = counter[counters[i]] (each < 64). */
RVBANK_API int rvbank_boom_read(const unsigned *counters, size_t n, uint64_t *values);

/* Count between two readings of a free-running counter `width` bits wide (1..64), across one wrap. */
static inline uint64_t rvbank_delta(uint64_t end, uint64_t start, unsigned width)
{
	uint64_t mask = width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
	return (end - start) & mask;
}

/* Text of an RVBANK_* code. */
RVBANK_API const char *rvbank_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
