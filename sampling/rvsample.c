// SPDX-License-Identifier: MIT
/* librvsample: batch sampling for a PAPI EventSet (lib/rvsample.h, docs/sampling-api.md).
 *
 * The EventSet names the events; the sampler opens its own perf group for the calling thread (leader = the
 * sampling event, the others read into each record), maps its ring buffer and routes the ring's overflow
 * signal to the thread. One SA_SIGINFO handler serves every sampler: it finds the sampler by si_fd in a
 * fixed table, decodes the ring (PERF_RECORD_SAMPLE / LOST / THROTTLE) into preallocated records and hands
 * them to on_batch or to a single-producer single-consumer buffer that rvsample_read empties. Nothing in the
 * handler allocates memory or takes a lock. */
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <papi.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rvsample_priv.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4) /* Linux 6.0: lost samples in read() and PERF_SAMPLE_READ */
#endif

#define MAX_SAMPLERS     256                       /* samplers alive at once (per process) */
#define RAW_FRAMES       (2 * RVSAMPLE_MAX_FRAMES) /* frames unwound, before trimming the handler's own */
#define MAX_RECORD_BYTES 1024 /* largest ring record decoded (ours are ~56 + 24 n bytes) */
#define MAX_RING_PAGES   1024u
#define SIGNAL_NUMBER    (SIGRTMIN + 4) /* away from PAPI's SIGRTMIN+2 and the emulator's SIGRTMAX-3 */

enum state { ST_READY, ST_RUNNING, ST_STOPPED };

struct raw_frame {
	uint64_t ip, start, end; /* start/end: the function's bounds (0 when libunwind does not know) */
	int exact;               /* ip is an interrupted instruction (first frame, or after a signal frame) */
};

struct rvsample {
	pid_t tid; /* the thread that owns it (and gets its signals) */
	int state;
	struct rvsample_config cfg;
	int nevents, leader; /* leader = cfg.sampling_event */
	int fd[RVSAMPLE_MAX_VALUES];
	uint64_t id[RVSAMPLE_MAX_VALUES];
	uint64_t read_format;
	struct rvsample_file_info info;
	struct perf_event_mmap_page *page;
	size_t map_len;
	uint64_t data_size;
	/* single producer (the handler, or a drain in the owner thread with the signal blocked), single
	 * consumer (rvsample_read, in any thread) */
	struct rvsample_record *buf;
	size_t cap;
	uint64_t head, tail;
	struct rvsample_record *batch; /* on_batch: records handed over together */
	size_t batch_cap, nbatch;
	struct rvsample_record rec; /* the record being decoded */
	struct raw_frame raw[RAW_FRAMES];
	int nraw;
	uint64_t ring_lost, read_lost; /* from PERF_RECORD_LOST; from PERF_FORMAT_LOST */
	struct rvsample_stats stats;   /* updated with __atomic stores: get_stats may run in another thread */
	int slot;
};

/* ------------------------------------------------------------------------------------------ errors */
static __thread int last_code;
static __thread char last_detail[512];

int rvsample_fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_detail, sizeof(last_detail), fmt, ap);
	va_end(ap);
	last_code = code;
	return code;
}

const char *rvsample_strerror(int code)
{
	if (code == last_code && code != RVSAMPLE_OK && last_detail[0])
		return last_detail;
	switch (code) {
	case RVSAMPLE_OK:
		return "success";
	case RVSAMPLE_EINVAL:
		return "bad argument or configuration";
	case RVSAMPLE_ENOEVENT:
		return "an event of the EventSet has no perf encoding (derived presets and non-perf "
		       "components "
		       "cannot sample)";
	case RVSAMPLE_ENOTSUP:
		return "the PMU cannot sample this way (precise > 0 needs Precise Event Sampling; sampling "
		       "needs "
		       "counter-overflow interrupts)";
	case RVSAMPLE_EPERM:
		return "perf_event_paranoid or missing capabilities forbid it";
	case RVSAMPLE_ESYS:
		return "a system call failed";
	case RVSAMPLE_EPAPI:
		return "a PAPI call on the EventSet failed";
	case RVSAMPLE_EFORMAT:
		return "not a sample file of a known version, or truncated or corrupt";
	case RVSAMPLE_ESTATE:
		return "call out of order, or from a thread that does not own the sampler";
	default:
		return "unknown rvsample error code";
	}
}

/* ------------------------------------------------------------------------------- the sampler table */
/* A slot is published by writing its sampler and fd, then its owner's tid (release); the handler only
 * looks at slots of its own thread, which that thread alone fills and empties (with the signal blocked). */
static struct rvsample *table[MAX_SAMPLERS];
static int table_fd[MAX_SAMPLERS];
static pid_t table_tid[MAX_SAMPLERS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static int handler_error;
static struct sigaction previous;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static struct rvsample *lookup(int fd, pid_t tid)
{
	for (int i = 0; i < MAX_SAMPLERS; i++) {
		if (__atomic_load_n(&table_tid[i], __ATOMIC_ACQUIRE) != tid)
			continue;
		if (__atomic_load_n(&table_fd[i], __ATOMIC_RELAXED) == fd)
			return __atomic_load_n(&table[i], __ATOMIC_RELAXED);
	}
	return NULL;
}

static int table_add(struct rvsample *s)
{
	int slot = -1;
	pthread_mutex_lock(&table_lock);
	for (int i = 0; i < MAX_SAMPLERS && slot < 0; i++) {
		if (table[i] == NULL) {
			slot = i;
			__atomic_store_n(&table[i], s, __ATOMIC_RELAXED);
			__atomic_store_n(&table_fd[i], s->fd[s->leader], __ATOMIC_RELAXED);
			__atomic_store_n(&table_tid[i], s->tid, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&table_lock);
	s->slot = slot;
	return slot < 0 ? -1 : 0;
}

static void table_remove(struct rvsample *s)
{
	if (s->slot < 0)
		return;
	pthread_mutex_lock(&table_lock);
	__atomic_store_n(&table_tid[s->slot], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&table_fd[s->slot], -1, __ATOMIC_RELAXED);
	__atomic_store_n(&table[s->slot], NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&table_lock);
	s->slot = -1;
}

static void stat_add(uint64_t *field, uint64_t n)
{
	__atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------- call stacks */
/* Unwinds the interrupted context (the handler's ucontext) into s->raw. */
static void unwind(struct rvsample *s, void *uc)
{
	unw_cursor_t c;
	s->nraw = 0;
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return;
	int exact = 1;
	do {
		unw_word_t ip;
		unw_proc_info_t pi;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		struct raw_frame *f = &s->raw[s->nraw++];
		f->ip = ip;
		f->exact = exact;
		f->start = f->end = 0;
		if (unw_get_proc_info(&c, &pi) == 0) {
			f->start = pi.start_ip;
			f->end = pi.end_ip;
		}
		exact = unw_is_signal_frame(&c) > 0; /* the next frame was interrupted, not called */
	} while (s->nraw < RAW_FRAMES && unw_step(&c) > 0);
}

/* The frame the record's PC belongs to: the one whose IP is the PC (an interrupted instruction, or the
 * return address the PC is for a call, as the emulator's virtual clock gives), else the return address
 * just after the PC in the same function. Frames above it are the signal's delivery (the handler, and
 * under the emulator its own code); the frames below are the program's callers. -1: not on this stack. */
static int frame_of(const struct rvsample *s, uint64_t pc)
{
	for (int k = 0; k < s->nraw; k++)
		if (s->raw[k].ip == pc)
			return k;
	for (int k = 0; k < s->nraw; k++) {
		const struct raw_frame *f = &s->raw[k];
		if (!f->exact && f->start && pc >= f->start && pc < f->ip && f->ip - 1 < f->end &&
		    f->ip - pc <= 16)
			return k;
	}
	return -1;
}

static void attach_stack(const struct rvsample *s, struct rvsample_record *r)
{
	r->frames[0] = r->pc;
	r->nframes = 1;
	int k = s->nraw ? frame_of(s, r->pc) : -1;
	if (k < 0)
		return;
	r->flags |= RVSAMPLE_F_STACK;
	for (int i = k + 1; i < s->nraw && r->nframes < RVSAMPLE_MAX_FRAMES; i++)
		r->frames[r->nframes++] = s->raw[i].ip;
}

/* ---------------------------------------------------------------------------------- decoding */
static void emit(struct rvsample *s, const struct rvsample_record *r)
{
	stat_add(&s->stats.samples, 1);
	if (r->flags & RVSAMPLE_F_EXACT)
		stat_add(&s->stats.exact, 1);
	if (s->cfg.on_batch) {
		s->batch[s->nbatch++] = *r;
		if (s->nbatch == s->batch_cap) {
			s->cfg.on_batch(s->batch, s->nbatch, s->cfg.arg);
			s->nbatch = 0;
		}
		return;
	}
	uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
	if (s->head - tail >= s->cap) {
		stat_add(&s->stats.dropped, 1);
		return;
	}
	s->buf[s->head % s->cap] = *r;
	__atomic_store_n(&s->head, s->head + 1, __ATOMIC_RELEASE);
}

static void update_lost(struct rvsample *s)
{
	uint64_t l = s->ring_lost > s->read_lost ? s->ring_lost : s->read_lost;
	__atomic_store_n(&s->stats.lost, l, __ATOMIC_RELAXED);
}

/* Group values as PERF_FORMAT_GROUP|ID[|LOST] lays them out: nr, then { value, id[, lost] } per event. */
static int decode_group(struct rvsample *s, const uint64_t *w, size_t nw, uint64_t *values)
{
	size_t per = (s->read_format & PERF_FORMAT_LOST) ? 3 : 2;
	if (nw < 1 || w[0] > RVSAMPLE_MAX_VALUES || nw < 1 + per * w[0])
		return -1;
	for (uint64_t i = 0; i < w[0]; i++) {
		const uint64_t *e = w + 1 + per * i;
		for (int j = 0; j < s->nevents; j++) {
			if (s->id[j] != e[1])
				continue;
			values[j] = e[0];
			if (per == 3 && j == s->leader && e[2] > s->read_lost)
				s->read_lost = e[2];
		}
	}
	return 0;
}

static void decode_sample(struct rvsample *s, const struct perf_event_header *h, const uint64_t *w, size_t nw)
{
	struct rvsample_record *r = &s->rec;
	/* sample_type IP | TID | TIME | CPU | PERIOD | READ, in the ABI's order */
	if (nw < 5)
		return;
	memset(r, 0, offsetof(struct rvsample_record, frames));
	r->pc = w[0];
	r->pid = (uint32_t)w[1];
	r->tid = (uint32_t)(w[1] >> 32);
	r->time_ns = w[2];
	r->cpu = (uint32_t)w[3];
	r->period = w[4];
	r->flags = (h->misc & PERF_RECORD_MISC_EXACT_IP) ? RVSAMPLE_F_EXACT : 0;
	r->nvalues = (uint32_t)s->nevents;
	if (decode_group(s, w + 5, nw - 5, r->values) != 0)
		return;
	if (s->cfg.mode == RVSAMPLE_STACKS)
		attach_stack(s, r);
	emit(s, r);
}

/* Empties the perf ring. Runs in the owner thread only: in the handler, or with the signal blocked. */
static void drain(struct rvsample *s)
{
	struct perf_event_mmap_page *pg = s->page;
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	uint64_t size = s->data_size, head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t rec[MAX_RECORD_BYTES / 8];
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head; /* a broken ring: nothing after this can be trusted */
			break;
		}
		size_t n = h.size <= sizeof(rec) ? h.size : 0;
		for (size_t i = 0; i < n; i++)
			((unsigned char *)rec)[i] = data[(tail + i) % size];
		size_t nw = n ? (n - sizeof(h)) / 8 : 0;
		const uint64_t *w = rec + 1;
		if (h.type == PERF_RECORD_SAMPLE && n) {
			decode_sample(s, &h, w, nw);
		} else if (h.type == PERF_RECORD_LOST && nw >= 2) {
			s->ring_lost += w[1]; /* { id, lost } */
		} else if (h.type == PERF_RECORD_THROTTLE || h.type == PERF_RECORD_UNTHROTTLE) {
			int throttle = h.type == PERF_RECORD_THROTTLE;
			if (throttle)
				stat_add(&s->stats.throttled, 1);
			/* { time, id, stream_id }; the records before it go first */
			if (s->cfg.on_throttle && nw >= 1) {
				if (s->cfg.on_batch && s->nbatch) {
					s->cfg.on_batch(s->batch, s->nbatch, s->cfg.arg);
					s->nbatch = 0;
				}
				s->cfg.on_throttle(throttle, w[0], s->cfg.arg);
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	update_lost(s);
	if (s->cfg.on_batch && s->nbatch) {
		s->cfg.on_batch(s->batch, s->nbatch, s->cfg.arg);
		s->nbatch = 0;
	}
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct rvsample *s = lookup(si->si_fd, gettid_());
	if (s) {
		stat_add(&s->stats.interrupts, 1);
		s->nraw = 0;
		if (s->cfg.mode == RVSAMPLE_STACKS)
			unwind(s, uc);
		drain(s);
		s->nraw = 0;
	} else if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
		previous.sa_sigaction(sig, si, uc); /* not ours: whoever had the signal before */
	}
	errno = saved;
}

static void install_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGNAL_NUMBER, &sa, &previous) != 0)
		handler_error = errno;
}

/* Blocks the sampling signal in this thread; the previous mask goes to *old (restore with SIG_SETMASK). */
static void block_sampling_signal(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGNAL_NUMBER);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* The owner thread drains with its signal blocked, so the handler never runs in the middle of it. */
static void drain_blocked(struct rvsample *s)
{
	sigset_t old;
	block_sampling_signal(&old);
	drain(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------------------------------ init */
static int errno_code(int e, int precise)
{
	switch (e) {
	case EOPNOTSUPP:
		return precise
		           ? rvsample_fail(
		                 RVSAMPLE_ENOTSUP,
		                 "precise=%d: this core has no Precise Event Sampling (the kernel "
		                 "refuses precise_ip with EOPNOTSUPP); samples without it would have "
		                 "skid, so none are taken: use precise=0 (on a core with "
		                 "counter-overflow interrupts)",
		                 precise)
		           : rvsample_fail(RVSAMPLE_ENOTSUP,
		                           "the PMU cannot sample this event: it has no counter-overflow "
		                           "interrupt (RISC-V: no Sscofpmf) and no Precise Event Sampling");
	case EACCES:
	case EPERM:
		return rvsample_fail(
		    RVSAMPLE_EPERM,
		    "perf_event_open: %s (kernel.perf_event_paranoid or a missing CAP_PERFMON; "
		    "a PMU that cannot exclude the kernel needs paranoid <= 1)",
		    strerror(e));
	case ENOENT:
	case ENODEV:
		return rvsample_fail(RVSAMPLE_ENOEVENT,
		                     "perf_event_open: the kernel does not know the event (%s)", strerror(e));
	default:
		return rvsample_fail(RVSAMPLE_ESYS, "perf_event_open: %s", strerror(e));
	}
}

/* The event's native name: a native event is its own; a preset must be one native term. */
static int native_name(int code, char *native, size_t len, char *papi_name, size_t plen)
{
	PAPI_event_info_t info;
	int r = PAPI_get_event_info(code, &info);
	if (r != PAPI_OK)
		return rvsample_fail(RVSAMPLE_EPAPI, "PAPI_get_event_info(%#x): %s", (unsigned)code,
		                     PAPI_strerror(r));
	size_t l = strlen(info.symbol);
	if (l >= plen)
		return rvsample_fail(RVSAMPLE_EINVAL, "event name %s: longer than %zu bytes", info.symbol,
		                     plen - 1);
	memcpy(papi_name, info.symbol, l + 1);
	if (IS_PRESET(code)) {
		if (info.count != 1 || (info.derived[0] && strcmp(info.derived, "NOT_DERIVED") != 0))
			return rvsample_fail(
			    RVSAMPLE_ENOEVENT,
			    "%s is a derived preset (%s of %u native events): one perf event "
			    "cannot sample it; add its native events instead",
			    info.symbol, info.derived, info.count);
		snprintf(native, len, "%s", info.name[0]);
	} else {
		r = PAPI_event_code_to_name(code, native);
		if (r != PAPI_OK)
			return rvsample_fail(RVSAMPLE_EPAPI, "PAPI_event_code_to_name(%#x): %s",
			                     (unsigned)code, PAPI_strerror(r));
	}
	return 0;
}

static int encode(const char *native, const char *papi_name, int domain, struct perf_event_attr *a)
{
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	memset(a, 0, sizeof(*a));
	arg.attr = a;
	arg.size = sizeof(arg);
	int plm = ((domain & PAPI_DOM_USER) ? PFM_PLM3 : 0) | ((domain & PAPI_DOM_KERNEL) ? PFM_PLM0 : 0);
	int r = pfm_initialize();
	if (r == PFM_SUCCESS)
		r = pfm_get_os_event_encoding(native, plm ? plm : PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r != PFM_SUCCESS)
		return rvsample_fail(RVSAMPLE_ENOEVENT, "%s (%s): libpfm4 has no perf encoding: %s",
		                     papi_name, native, pfm_strerror(r));
	/* The EventSet's domain, as PAPI's perf_event component sets it (libpfm4's RISC-V PMUs have no
	 * privilege modifiers) */
	a->exclude_user = !(domain & PAPI_DOM_USER);
	a->exclude_kernel = !(domain & PAPI_DOM_KERNEL);
	a->exclude_hv = !(domain & PAPI_DOM_SUPERVISOR);
	a->size = sizeof(*a);
	return 0;
}

static int perf_open(struct perf_event_attr *a, int group)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static int check_config(const struct rvsample_config *c)
{
	if (!c)
		return rvsample_fail(RVSAMPLE_EINVAL, "config is NULL");
	if (c->threshold == 0 || c->threshold >> 63)
		return rvsample_fail(RVSAMPLE_EINVAL, "threshold %llu: must be 1..2^63-1 events per sample",
		                     (unsigned long long)c->threshold);
	if (c->precise < 0 || c->precise > 3)
		return rvsample_fail(RVSAMPLE_EINVAL, "precise %d: perf's levels are 0..3", c->precise);
	if (c->mode != RVSAMPLE_BATCH && c->mode != RVSAMPLE_STACKS)
		return rvsample_fail(RVSAMPLE_EINVAL, "mode %d: RVSAMPLE_BATCH or RVSAMPLE_STACKS",
		                     (int)c->mode);
	if (c->buffer_records > (1u << 24))
		return rvsample_fail(RVSAMPLE_EINVAL, "buffer_records %zu: at most %u", c->buffer_records,
		                     1u << 24);
	return 0;
}

/* The leader's sampling attributes. Batch mode meets the rule under which the kernel batches PES (as Linux
 * batches PEBS: "large PEBS"): a fixed period, no per-sample wakeup, and sample types the hardware record
 * holds; a watermark of one byte then wakes (signals) the owner once per buffer drain. Stacks mode asks for
 * a wakeup per sample, which makes the kernel interrupt once per record. */
static void sampling_attr(struct perf_event_attr *a, const struct rvsample_config *c, uint64_t read_format)
{
	a->disabled = 1;
	a->sample_period = c->threshold;
	a->freq = 0;
	a->precise_ip = (unsigned)c->precise;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
	                 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ;
	a->read_format = read_format;
	if (c->mode == RVSAMPLE_BATCH) {
		a->watermark = 1;
		a->wakeup_watermark = 1;
	} else {
		a->watermark = 0;
		a->wakeup_events = 1;
	}
}

static void close_all(struct rvsample *s)
{
	if (s->page)
		munmap(s->page, s->map_len);
	for (int i = 0; i < s->nevents; i++)
		if (i != s->leader && s->fd[i] >= 0)
			close(s->fd[i]);
	if (s->fd[s->leader] >= 0)
		close(s->fd[s->leader]);
	free(s->buf);
	free(s->batch);
	free(s);
}

static int open_group(struct rvsample *s, const struct perf_event_attr *attrs)
{
	int tries = 0;
	s->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	for (;;) {
		struct perf_event_attr a = attrs[s->leader];
		sampling_attr(&a, &s->cfg, s->read_format);
		s->fd[s->leader] = perf_open(&a, -1);
		if (s->fd[s->leader] >= 0)
			break;
		/* kernels before 6.0 have no PERF_FORMAT_LOST: PERF_RECORD_LOST alone then */
		if (errno == EINVAL && (s->read_format & PERF_FORMAT_LOST) && tries++ == 0) {
			s->read_format &= ~(uint64_t)PERF_FORMAT_LOST;
			continue;
		}
		int e = errno, code = errno_code(e, s->cfg.precise);
		if (code == RVSAMPLE_ESYS || code == RVSAMPLE_ENOEVENT)
			rvsample_fail(code, "perf_event_open of the sampling event %s: %s",
			              s->info.events[s->leader], strerror(e));
		return code;
	}
	for (int i = 0; i < s->nevents; i++) {
		if (i == s->leader)
			continue;
		struct perf_event_attr a = attrs[i];
		a.read_format = s->read_format;
		s->fd[i] = perf_open(&a, s->fd[s->leader]);
		if (s->fd[i] < 0) {
			int e = errno, code = errno_code(e, 0);
			if (code == RVSAMPLE_ESYS || code == RVSAMPLE_ENOEVENT)
				rvsample_fail(code, "perf_event_open of %s in the sampling group: %s",
				              s->info.events[i], strerror(e));
			return code;
		}
	}
	for (int i = 0; i < s->nevents; i++)
		if (ioctl(s->fd[i], PERF_EVENT_IOC_ID, &s->id[i]) != 0)
			return rvsample_fail(RVSAMPLE_ESYS, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	return 0;
}

static int map_ring(struct rvsample *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = s->cap * 8 * (7 + (size_t)((s->read_format & PERF_FORMAT_LOST) ? 3 : 2) * s->nevents);
	size_t pages = 1;
	while (pages * page < bytes && pages < MAX_RING_PAGES)
		pages <<= 1;
	s->map_len = (pages + 1) * page;
	void *p = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd[s->leader], 0);
	if (p == MAP_FAILED) {
		s->page = NULL;
		return rvsample_fail(RVSAMPLE_ESYS, "mmap of the perf ring (%zu pages): %s", pages,
		                     strerror(errno));
	}
	s->page = p;
	s->data_size = s->page->data_size ? s->page->data_size : pages * page;
	return 0;
}

static int route_signal(struct rvsample *s)
{
	int fd = s->fd[s->leader];
	struct f_owner_ex owner = {F_OWNER_TID, s->tid};
	int fl = fcntl(fd, F_GETFL);
	if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, SIGNAL_NUMBER) != 0 || fl < 0 ||
	    fcntl(fd, F_SETFL, fl | O_ASYNC | O_NONBLOCK) != 0)
		return rvsample_fail(RVSAMPLE_ESYS, "routing the overflow signal to the thread: %s",
		                     strerror(errno));
	return 0;
}

int rvsample_init(rvsample_t **sampler, int EventSet, const struct rvsample_config *config)
{
	if (!sampler)
		return rvsample_fail(RVSAMPLE_EINVAL, "sampler is NULL");
	*sampler = NULL;
	int r = check_config(config);
	if (r)
		return r;
	int codes[RVSAMPLE_MAX_VALUES], n = RVSAMPLE_MAX_VALUES;
	r = PAPI_list_events(EventSet, codes, &n);
	if (r != PAPI_OK)
		return rvsample_fail(RVSAMPLE_EPAPI, "PAPI_list_events(%d): %s", EventSet, PAPI_strerror(r));
	if (n < 1 || n > RVSAMPLE_MAX_VALUES)
		return rvsample_fail(RVSAMPLE_EINVAL, "the EventSet has %d events: 1..%d can be sampled", n,
		                     RVSAMPLE_MAX_VALUES);
	if (config->sampling_event < 0 || config->sampling_event >= n)
		return rvsample_fail(RVSAMPLE_EINVAL, "sampling_event %d: the EventSet has events 0..%d",
		                     config->sampling_event, n - 1);
	PAPI_option_t opt;
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = EventSet;
	r = PAPI_get_opt(PAPI_DOMAIN, &opt);
	if (r < 0)
		return rvsample_fail(RVSAMPLE_EPAPI, "PAPI_get_opt(PAPI_DOMAIN): %s", PAPI_strerror(r));
	int domain = opt.domain.domain;

	struct rvsample *s = calloc(1, sizeof(*s));
	if (!s)
		return rvsample_fail(RVSAMPLE_ESYS, "out of memory");
	s->tid = gettid_();
	s->cfg = *config;
	s->nevents = n;
	s->leader = config->sampling_event;
	s->slot = -1;
	for (int i = 0; i < RVSAMPLE_MAX_VALUES; i++)
		s->fd[i] = -1;
	s->info.nevents = (uint32_t)n;
	s->info.sampling_event = s->leader;
	s->info.threshold = config->threshold;
	s->info.precise = config->precise;
	s->info.mode = config->mode;
	struct perf_event_attr attrs[RVSAMPLE_MAX_VALUES];
	for (int i = 0; i < n; i++) {
		char native[PAPI_HUGE_STR_LEN];
		r = native_name(codes[i], native, sizeof(native), s->info.events[i],
		                sizeof(s->info.events[i]));
		if (!r)
			r = encode(native, s->info.events[i], domain, &attrs[i]);
		if (r) {
			close_all(s);
			return r;
		}
	}
	s->cap = config->buffer_records ? config->buffer_records : 4096;
	s->buf = calloc(s->cap, sizeof(*s->buf));
	s->batch_cap = s->cap < 256 ? s->cap : 256;
	s->batch = config->on_batch ? calloc(s->batch_cap, sizeof(*s->batch)) : NULL;
	if (!s->buf || (config->on_batch && !s->batch)) {
		close_all(s);
		return rvsample_fail(RVSAMPLE_ESYS, "out of memory for %zu records", s->cap);
	}
	pthread_once(&handler_once, install_handler);
	if (handler_error) {
		close_all(s);
		return rvsample_fail(RVSAMPLE_ESYS, "sigaction(SIGRTMIN+4): %s", strerror(handler_error));
	}
	r = open_group(s, attrs);
	if (!r)
		r = map_ring(s);
	if (!r && table_add(s) != 0)
		r = rvsample_fail(RVSAMPLE_EINVAL, "more than %d samplers at once", MAX_SAMPLERS);
	if (!r)
		r = route_signal(s);
	if (r) {
		table_remove(s);
		close_all(s);
		return r;
	}
	s->state = ST_READY;
	*sampler = s;
	return RVSAMPLE_OK;
}

/* ------------------------------------------------------------------------------- running it */
static int owner_only(const struct rvsample *s, const char *what)
{
	if (!s)
		return rvsample_fail(RVSAMPLE_EINVAL, "%s: sampler is NULL", what);
	if (s->tid != gettid_())
		return rvsample_fail(RVSAMPLE_ESTATE,
		                     "%s: the sampler belongs to thread %d, not to this one (%d)", what,
		                     (int)s->tid, (int)gettid_());
	return 0;
}

int rvsample_start(rvsample_t *s)
{
	int r = owner_only(s, "rvsample_start");
	if (r)
		return r;
	if (s->state == ST_RUNNING)
		return rvsample_fail(RVSAMPLE_ESTATE, "rvsample_start: already started");
	if (ioctl(s->fd[s->leader], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
		return rvsample_fail(RVSAMPLE_ESYS, "PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
	s->state = ST_RUNNING;
	return RVSAMPLE_OK;
}

/* PERF_FORMAT_LOST: the kernel's count of lost samples, also those a PERF_RECORD_LOST has not reported
 * yet (one is written only before the next sample that fits). */
static void read_lost(struct rvsample *s)
{
	uint64_t w[1 + 3 * RVSAMPLE_MAX_VALUES];
	if (!(s->read_format & PERF_FORMAT_LOST))
		return;
	ssize_t n = read(s->fd[s->leader], w, sizeof(w));
	if (n > 0) {
		uint64_t values[RVSAMPLE_MAX_VALUES];
		decode_group(s, w, (size_t)n / 8, values);
	}
}

int rvsample_stop(rvsample_t *s)
{
	int r = owner_only(s, "rvsample_stop");
	if (r)
		return r;
	if (s->state != ST_RUNNING)
		return rvsample_fail(RVSAMPLE_ESTATE, "rvsample_stop: not started");
	/* disabling drains what the PES buffer holds into the ring (without a signal) */
	if (ioctl(s->fd[s->leader], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) != 0)
		return rvsample_fail(RVSAMPLE_ESYS, "PERF_EVENT_IOC_DISABLE: %s", strerror(errno));
	s->state = ST_STOPPED;
	sigset_t old;
	block_sampling_signal(&old);
	read_lost(s);
	drain(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return RVSAMPLE_OK;
}

ssize_t rvsample_read(rvsample_t *s, struct rvsample_record *buf, size_t max)
{
	if (!s || (!buf && max))
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_read: NULL sampler or buffer");
	if (s->cfg.on_batch)
		return rvsample_fail(RVSAMPLE_ESTATE,
		                     "rvsample_read: records go to on_batch, not to a buffer");
	if (s->tid == gettid_() && s->state == ST_RUNNING)
		drain_blocked(
		    s); /* what the kernel delivered without a signal (e.g. at a read or a switch) */
	uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE), tail = s->tail;
	size_t n = 0;
	while (n < max && tail != head)
		buf[n++] = s->buf[tail++ % s->cap];
	__atomic_store_n(&s->tail, tail, __ATOMIC_RELEASE);
	return (ssize_t)n;
}

int rvsample_get_stats(const rvsample_t *s, struct rvsample_stats *stats)
{
	if (!s || !stats)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_get_stats: NULL argument");
	stats->samples = __atomic_load_n(&s->stats.samples, __ATOMIC_RELAXED);
	stats->exact = __atomic_load_n(&s->stats.exact, __ATOMIC_RELAXED);
	stats->lost = __atomic_load_n(&s->stats.lost, __ATOMIC_RELAXED);
	stats->dropped = __atomic_load_n(&s->stats.dropped, __ATOMIC_RELAXED);
	stats->interrupts = __atomic_load_n(&s->stats.interrupts, __ATOMIC_RELAXED);
	stats->throttled = __atomic_load_n(&s->stats.throttled, __ATOMIC_RELAXED);
	return RVSAMPLE_OK;
}

int rvsample_get_info(const rvsample_t *s, struct rvsample_file_info *info)
{
	if (!s || !info)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_get_info: NULL argument");
	*info = s->info;
	return RVSAMPLE_OK;
}

int rvsample_destroy(rvsample_t *s)
{
	if (!s)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_destroy: sampler is NULL");
	if (s->state == ST_RUNNING) {
		int r = owner_only(s, "rvsample_destroy of a running sampler");
		if (r)
			return r;
		ioctl(s->fd[s->leader], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	}
	/* Out of the table with the signal blocked: a signal still queued finds no sampler when unblocked. */
	sigset_t old;
	block_sampling_signal(&old);
	table_remove(s);
	close_all(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return RVSAMPLE_OK;
}
