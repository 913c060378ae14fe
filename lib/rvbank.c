// SPDX-License-Identifier: MIT
/* librvbank: the counter-bank client (rvbank.h). */
#include "rvbank.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPUINFO_PATH "/proc/cpuinfo"

static void set_reason(char *reason, size_t len, const char *text)
{
	if (reason != NULL && len > 0)
		snprintf(reason, len, "%s", text);
}

/* Does an isa string (rv64imafdc_zicsr_xdhpc) carry the multi-letter extension `ext`? */
static int isa_has_ext(const char *isa, const char *ext)
{
	size_t n = strlen(ext);
	const char *p = strchr(isa, '_');

	while (p != NULL) {
		p++;
		if (strncasecmp(p, ext, n) == 0 &&
		    (p[n] == '\0' || p[n] == '_' || isspace((unsigned char)p[n])))
			return 1;
		p = strchr(p, '_');
	}
	return 0;
}

/* Value of the first "key : value" line of /proc/cpuinfo (trailing blanks cut); 0 if found. */
static int cpuinfo_field(const char *key, char *out, size_t len)
{
	char line[1024];
	size_t klen = strlen(key);
	FILE *f = fopen(CPUINFO_PATH, "r");
	int found = -1;

	if (f == NULL)
		return -1;
	while (found != 0 && fgets(line, sizeof(line), f) != NULL) {
		char *p = line;
		if (strncmp(p, key, klen) != 0)
			continue;
		p += klen;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		snprintf(out, len, "%s", p);
		for (size_t e = strlen(out); e > 0 && isspace((unsigned char)out[e - 1]); e--)
			out[e - 1] = '\0';
		found = 0;
	}
	fclose(f);
	return found;
}

unsigned rvbank_nharts(void)
{
	char line[256];
	unsigned n = 0;
	FILE *f = fopen(CPUINFO_PATH, "r");

	if (f == NULL)
		return 1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "processor", 9) == 0 &&
		    (line[9] == ' ' || line[9] == '\t' || line[9] == ':'))
			n++;
	fclose(f);
	return n > 0 ? n : 1;
}

int rvbank_hpc_probe(char *reason, size_t len)
{
	char isa[1024];
	uint64_t hpcc = 0;

	if (cpuinfo_field("isa", isa, sizeof(isa)) != 0) {
		set_reason(reason, len, "no isa line in /proc/cpuinfo: not a RISC-V machine");
		return RVBANK_ENOHW;
	}
	if (!isa_has_ext(isa, "xdhpc")) {
		set_reason(reason, len, "no distributed HPC: the isa string has no xdhpc extension");
		return RVBANK_ENOHW;
	}
	/* hpcc is readable from user mode on a core with the extension; only a trigger with useren = 0 traps
	 */
	if (rvhw_csr_read(RVHW_CSR_HPCC, &hpcc) != RVHW_OK) {
		set_reason(reason, len,
		           "the isa string has xdhpc but the hpcc CSR cannot be read (seam 2 refused)");
		return RVBANK_ENOHW;
	}
	if (!(hpcc & RVHW_HPCC_USEREN)) {
		set_reason(reason, len,
		           "hpcc.useren = 0: the OS does not let user code read the distributed HPC");
		return RVBANK_EPERM;
	}
	set_reason(reason, len, "");
	return RVBANK_OK;
}

/* ---- distributed HPC ---- */

struct hpc_io {
	struct rvbank_hpc_stats *stats;
	int failed; /* a seam-2 access failed: RVBANK_EIO or RVBANK_EPERM */
};

static uint64_t csr_read(struct hpc_io *io, unsigned csr)
{
	uint64_t v = 0;

	io->stats->csr_reads++;
	if (rvhw_csr_read(csr, &v) != RVHW_OK)
		io->failed = RVBANK_EIO;
	return v;
}

static void csr_write(struct hpc_io *io, unsigned csr, uint64_t v)
{
	int rc;

	io->stats->csr_writes++;
	rc = rvhw_csr_write(csr, v);
	if (rc != RVHW_OK)
		io->failed = rc == RVHW_EPERM ? RVBANK_EPERM : RVBANK_EIO;
}

static unsigned popcount(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* The thread's HPCClient as this library left it. Per thread, like the client (the OS saves hpcc, hpcm and
 * the FIFO per task).
 * - hpc_pending: a request of ours may still be in flight (set at the trigger, cleared once the final check
 *   saw trigger = 0 or a cancel was written). Only then does a request begin with Algorithm 2's cancel:
 *   writing hpcm while trigger is set would be ignored. The library assumes it is the only user of the
 *   thread's client (code that drives the CSRs itself must leave nothing in flight before calling it).
 * - hpc_generation: counts the triggers written. A read made by a signal handler of this thread (PAPI's
 *   software overflow reads its EventSet from a timer signal) in the middle of ours rewrites hpcm and
 *   empties the FIFO; the interrupted attempt sees the count move and repeats itself. */
static __thread volatile int hpc_pending;
static __thread volatile unsigned hpc_generation;

static void hpc_cancel(struct hpc_io *io)
{
	csr_write(io, RVHW_CSR_HPCC, 0);
	if (!io->failed)
		hpc_pending = 0;
}

/* Pop the next value of the request into r->values. */
static void hpc_pop(struct hpc_io *io, const struct rvbank_hpc_request *r, unsigned *popped)
{
	r->values[(*popped)++] = csr_read(io, RVHW_CSR_HPCR);
}

/* One attempt of Algorithm 2's body: (cancel,) hpcm, trigger, then drain. 1 = clean, 0 = retry, < 0 error.
 * The CSR operations, each a cycle on the interconnect, are the fewest a client that learns of arrivals from
 * the CSRs needs (docs/riscv-hpc.md, "Cost"): no cancel unless a request of ours may be in flight; while
 * nothing has arrived, poll hpcc (it says when the first value is queued, and whether a context switch
 * made the request untrustworthy); a value hpcc shows queued is popped without reading hpcm first; after
 * that, hpcm's population says how many have arrived, and all of them are popped before the next poll. */
static int hpc_attempt(struct hpc_io *io, const struct rvbank_hpc_request *r, unsigned max_polls,
                       unsigned *polls)
{
	unsigned n = popcount(r->bitmap), popped = 0, mine;
	uint64_t hpcc;

	if (hpc_pending)
		hpc_cancel(io);  /* (2) a request of ours is still in flight */
	mine = ++hpc_generation; /* before hpcm: a nested read from here on shows */
	hpc_pending = 1;
	csr_write(io, RVHW_CSR_HPCM, r->bitmap);
	csr_write(io, RVHW_CSR_HPCC, ((uint64_t)r->manager_id << RVHW_HPCC_ID_SHIFT) | RVHW_HPCC_TRIGGER);
	io->stats->requests++;
	if (io->failed)
		return io->failed;
	while (popped < n) {
		hpcc = csr_read(io, RVHW_CSR_HPCC);
		if (io->failed)
			return io->failed;
		if (hpc_generation != mine || (hpcc & RVHW_HPCC_INTERRUPTED))
			return 0; /* the values would be discarded anyway */
		if (hpcc & RVHW_HPCC_EMPTY) {
			if (++*polls > max_polls) {
				hpc_cancel(io);
				return RVBANK_ETIMEDOUT;
			}
			continue;
		}
		/* at least one value is queued: pop it, then pop what else hpcm says has arrived meanwhile */
		hpc_pop(io, r, &popped);
		while (popped < n) {
			unsigned arrived = popcount(csr_read(io, RVHW_CSR_HPCM) & r->bitmap);
			if (io->failed)
				return io->failed;
			if (hpc_generation != mine)
				return 0;
			if (arrived <= popped) {
				if (++*polls > max_polls) {
					hpc_cancel(io);
					return RVBANK_ETIMEDOUT;
				}
				break; /* nothing new: wait on hpcc, which also says interrupted */
			}
			while (popped < arrived)
				hpc_pop(io, r, &popped);
		}
		if (io->failed)
			return io->failed;
	}
	/* (9) a context switch or an empty pop meanwhile: the values cannot be trusted */
	hpcc = csr_read(io, RVHW_CSR_HPCC);
	if (io->failed)
		return io->failed;
	if (!(hpcc & RVHW_HPCC_TRIGGER) && hpc_generation == mine)
		hpc_pending = 0;
	if (hpc_generation != mine)
		return 0;
	return (hpcc & (RVHW_HPCC_INTERRUPTED | RVHW_HPCC_READERROR)) ? 0 : 1;
}

/* Algorithm 2 around hpc_attempt. The poll budget is the request's, over all its attempts: a silent
 * manager times out even when context switches keep interrupting the wait. */
static int hpc_request(struct hpc_io *io, const struct rvbank_hpc_request *r,
                       const struct rvbank_hpc_options *o)
{
	unsigned polls = 0;

	for (unsigned attempt = 0;; attempt++) {
		int rc;
		if (attempt > 0)
			io->stats->retries++;
		rc = hpc_attempt(io, r, o->max_polls, &polls);
		if (rc < 0)
			return rc;
		if (rc == 1)
			return RVBANK_OK;
		if (attempt == o->max_retries) {
			struct hpc_io quiet = *io;
			if (hpc_pending)
				hpc_cancel(&quiet); /* leave nothing in flight */
			return RVBANK_ERETRY;
		}
	}
}

static int options_valid(const struct rvbank_hpc_options *o)
{
	return o->max_polls > 0;
}

int rvbank_hpc_read(const struct rvbank_hpc_request *req, size_t n, const struct rvbank_hpc_options *opt,
                    struct rvbank_hpc_stats *stats)
{
	const struct rvbank_hpc_options defaults = {RVBANK_DEFAULT_RETRIES, RVBANK_DEFAULT_POLLS};
	struct rvbank_hpc_stats scratch;
	struct hpc_io io;

	if (opt == NULL)
		opt = &defaults;
	if ((req == NULL && n > 0) || !options_valid(opt))
		return RVBANK_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (req[i].bitmap == 0 || req[i].values == NULL ||
		    ((uint64_t)req[i].manager_id << RVHW_HPCC_ID_SHIFT) & ~RVHW_HPCC_ID_MASK)
			return RVBANK_EINVAL;
	memset(&scratch, 0, sizeof(scratch));
	io.stats = stats != NULL ? stats : &scratch;
	io.failed = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = hpc_request(&io, &req[i], opt);
		if (rc != RVBANK_OK)
			return rc;
	}
	return RVBANK_OK;
}

int rvbank_hpc_manager_answers(uint32_t manager_id, const struct rvbank_hpc_options *opt)
{
	const struct rvbank_hpc_options defaults = {RVBANK_DEFAULT_RETRIES, RVBANK_DEFAULT_POLLS};
	uint64_t value;
	struct rvbank_hpc_request r = {manager_id, 1, &value};
	int rc = rvbank_hpc_read(&r, 1, opt != NULL ? opt : &defaults, NULL);

	if (rc == RVBANK_ETIMEDOUT)
		return 0;
	return rc == RVBANK_OK ? 1 : rc;
}

/* ---- BOOM bank ---- */

static int boom(unsigned tag, uint64_t in, uint64_t *out)
{
	int rc = rvhw_boom_op(tag, in, out);
	if (rc == RVHW_ENOHW)
		return RVBANK_ENOHW;
	return rc == RVHW_OK ? RVBANK_OK : RVBANK_EIO;
}

int rvbank_boom_save(struct rvbank_boom_state *saved)
{
	int rc;

	if (saved == NULL)
		return RVBANK_EINVAL;
	rc = boom(RVHW_BOOM_GET_PROCTAG, 0, &saved->proc_tag);
	if (rc == RVBANK_OK)
		rc = boom(RVHW_BOOM_GET_MAXPRIV, 0, &saved->max_priv);
	return rc;
}

int rvbank_boom_count(unsigned max_priv)
{
	int rc;

	if (max_priv > 3)
		return RVBANK_EINVAL;
	rc = boom(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL);
	if (rc == RVBANK_OK)
		rc = boom(RVHW_BOOM_SET_MAXPRIV, max_priv, NULL);
	if (rc == RVBANK_OK)
		rc = boom(RVHW_BOOM_SET_ENABLE, 1, NULL);
	return rc;
}

int rvbank_boom_restore(const struct rvbank_boom_state *saved)
{
	int rc;

	if (saved == NULL)
		return RVBANK_EINVAL;
	rc = boom(RVHW_BOOM_SET_MAXPRIV, saved->max_priv, NULL);
	if (rc == RVBANK_OK)
		rc = boom(RVHW_BOOM_SET_PROCTAG, saved->proc_tag, NULL);
	return rc;
}

int rvbank_boom_read(const unsigned *counters, size_t n, uint64_t *values)
{
	if ((counters == NULL || values == NULL) && n > 0)
		return RVBANK_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (counters[i] >= RVHW_BOOM_COUNTERS)
			return RVBANK_EINVAL;
	for (size_t i = 0; i < n; i++) {
		int rc = boom(RVHW_BOOM_READ_BASE + counters[i], 0, &values[i]);
		if (rc != RVBANK_OK)
			return rc;
	}
	return RVBANK_OK;
}

const char *rvbank_strerror(int err)
{
	switch (err) {
	case RVBANK_OK:
		return "success";
	case RVBANK_EPERM:
		return "hpcc.useren = 0: user code may not start HPC requests";
	case RVBANK_ERETRY:
		return "the request was interrupted (context switch or empty pop) more often than the retry "
		       "bound";
	case RVBANK_ENOHW:
		return "no such counter bank on this machine";
	case RVBANK_EINVAL:
		return "invalid argument";
	case RVBANK_ETIMEDOUT:
		return "the HPCManager never answered (unknown ManagerID?)";
	case RVBANK_EIO:
		return "seam 2 refused a CSR access or BOOM hint";
	default:
		return "unknown error";
	}
}
