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

/* One attempt of Algorithm 2's body: cancel, hpcm, trigger, then drain. 1 = clean, 0 = retry, < 0 error. */
static int hpc_attempt(struct hpc_io *io, const struct rvbank_hpc_request *r, unsigned max_polls,
                       unsigned *polls)
{
	unsigned n = popcount(r->bitmap), popped = 0;
	uint64_t hpcc;

	csr_write(io, RVHW_CSR_HPCC, 0); /* (2) cancel whatever this client still has in flight */
	csr_write(io, RVHW_CSR_HPCM, r->bitmap);
	csr_write(io, RVHW_CSR_HPCC, ((uint64_t)r->manager_id << RVHW_HPCC_ID_SHIFT) | RVHW_HPCC_TRIGGER);
	io->stats->requests++;
	if (io->failed)
		return io->failed;
	/* Wait for the first value: `empty` clears as soon as one has arrived. */
	for (;;) {
		hpcc = csr_read(io, RVHW_CSR_HPCC);
		if (io->failed)
			return io->failed;
		if (hpcc & RVHW_HPCC_INTERRUPTED)
			return 0; /* the values would be discarded anyway */
		if (!(hpcc & RVHW_HPCC_EMPTY))
			break;
		if (++*polls > max_polls) {
			csr_write(io, RVHW_CSR_HPCC, 0);
			return RVBANK_ETIMEDOUT;
		}
	}
	/* hpcm refills bit by bit as values arrive: its population is how many have been queued so far. */
	while (popped < n) {
		unsigned arrived = popcount(csr_read(io, RVHW_CSR_HPCM) & r->bitmap);
		if (io->failed)
			return io->failed;
		if (arrived <= popped) {
			if (++*polls > max_polls) {
				csr_write(io, RVHW_CSR_HPCC, 0);
				return RVBANK_ETIMEDOUT;
			}
			continue;
		}
		while (popped < arrived)
			r->values[popped++] = csr_read(io, RVHW_CSR_HPCR);
		if (io->failed)
			return io->failed;
	}
	/* (9) a context switch or an empty pop meanwhile: the values cannot be trusted */
	hpcc = csr_read(io, RVHW_CSR_HPCC);
	if (io->failed)
		return io->failed;
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
			csr_write(&quiet, RVHW_CSR_HPCC, 0); /* leave nothing in flight */
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
