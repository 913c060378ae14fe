// SPDX-License-Identifier: MIT
/* Sampling: the mmap ring buffer (perf_event_mmap_page + data pages), PERF_RECORD_SAMPLE / PERF_RECORD_LOST,
 * the overflow signal to the F_SETOWN_EX thread, and the per-thread CPU-time timer that raises counter
 * overflows at the program's real PC in cputime mode (in virtual mode overflows happen inside
 * rvemu_advance() and the IP is its caller's return address). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "emu_priv.h"

/* ------------------------------------------------------------------------------------- ring buffer */
int emu_ring_map(struct emu_event *ev, size_t len)
{
	if (ev->page)
		return ev->map_len == len ? 0 : -EINVAL; /* one buffer per event, as perf_mmap */
	if (ftruncate(ev->fd, (off_t)len) != 0)
		return -errno;
	void *p = EMU_REAL(mmap)(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	ev->page = p;
	ev->map_len = len;
	ev->data_size = len - page;
	/* cppcheck models the dlsym'd mmap as returning its NULL hint: p is a fresh mapping here. */
	// cppcheck-suppress nullPointer
	memset(p, 0, page);
	ev->page->version = 0;
	ev->page->compat_version = 0;
	ev->page->index = 0; /* no user-space counter access */
	ev->page->cap_bit0_is_deprecated = 1;
	ev->page->cap_user_rdpmc = 0; /* rdpmc/rdcycle of the host would be wrong: read() instead */
	ev->page->data_offset = page;
	ev->page->data_size = ev->data_size;
	return 0;
}

void emu_ring_unmap(struct emu_event *ev)
{
	if (ev->page)
		EMU_REAL(munmap)(ev->page, ev->map_len);
	ev->page = NULL;
}

static void ring_put(struct emu_event *ev, uint64_t *head, const void *src, size_t n)
{
	unsigned char *data = (unsigned char *)ev->page + ev->page->data_offset;
	const unsigned char *s = src;
	while (n) {
		size_t off = (size_t)(*head % ev->data_size), chunk = ev->data_size - off;
		if (chunk > n)
			chunk = n;
		memcpy(data + off, s, chunk);
		s += chunk;
		n -= chunk;
		*head += chunk;
	}
}

static size_t build_sample(struct emu_event *ev, uint64_t ip, uint64_t *rec, size_t max)
{
	uint64_t st = ev->attr.sample_type;
	struct emu_thread *t = ev->target;
	size_t n = 1; /* rec[0] = header */
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec[n++] = ev->id;
	if (st & PERF_SAMPLE_IP)
		rec[n++] = ip;
	if (st & PERF_SAMPLE_TID)
		rec[n++] = (uint64_t)(uint32_t)getpid() | (uint64_t)(uint32_t)t->tid << 32;
	if (st & PERF_SAMPLE_TIME)
		rec[n++] = emu_sample_time(t);
	if (st & PERF_SAMPLE_ADDR)
		rec[n++] = 0;
	if (st & PERF_SAMPLE_ID)
		rec[n++] = ev->id;
	if (st & PERF_SAMPLE_STREAM_ID)
		rec[n++] = ev->id;
	if (st & PERF_SAMPLE_CPU)
		rec[n++] = t->hart;
	if (st & PERF_SAMPLE_PERIOD)
		rec[n++] = ev->period;
	if (st & PERF_SAMPLE_READ) {
		size_t need = emu_read_values(ev, rec + n, max - n);
		if (need > max - n)
			return 0; /* a group too large for one record: counted as lost, never padded with
			             stack */
		n += need;
	}
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(n * 8)};
	memcpy(&rec[0], &h, sizeof(h));
	return n * 8;
}

/* perf_output_begin: a pending loss is reported, in the same reservation, before the next record that
 * fits; a record that does not fit is dropped and counted. */
void emu_sample_write(struct emu_event *ev, uint64_t ip)
{
	uint64_t rec[8 + 3 + 3 * 64];
	size_t size = build_sample(ev, ip, rec, sizeof(rec) / sizeof(rec[0]));
	if (!ev->page || !ev->data_size) {
		ev->lost++;
		ev->lost_total++;
		EMU_STAT_ADD(samples_lost, 1);
		return;
	}
	/* PERF_RECORD_LOST: header, id, number of lost records */
	uint64_t lost[3] = {0, ev->id, ev->lost};
	struct perf_event_header lh = {PERF_RECORD_LOST, 0, sizeof(lost)};
	memcpy(&lost[0], &lh, sizeof(lh));
	uint64_t head = ev->page->data_head;
	uint64_t tail = __atomic_load_n(&ev->page->data_tail, __ATOMIC_ACQUIRE);
	size_t need = size + (ev->lost ? sizeof(lost) : 0);
	if (head - tail + need > ev->data_size || size == 0) {
		ev->lost++;
		ev->lost_total++;
		EMU_STAT_ADD(samples_lost, 1);
		return;
	}
	if (ev->lost)
		ring_put(ev, &head, &lost, sizeof(lost));
	ev->lost = 0;
	ring_put(ev, &head, rec, size);
	__atomic_store_n(&ev->page->data_head, head, __ATOMIC_RELEASE);
	EMU_STAT_ADD(samples_written, 1);
}

void emu_overflow(struct emu_event *ev, uint64_t ip)
{
	EMU_STAT_ADD(interrupts, 1);
	int code = POLL_IN;
	/* __perf_event_overflow: an IOC_REFRESH budget that reaches 0 disables the event, signal POLL_HUP. */
	if (ev->event_limit && --ev->event_limit == 0) {
		code = POLL_HUP;
		ev->state = EV_OFF;
	}
	emu_sample_write(ev, ip);
	if (ev->async)
		emu_queue_signal(ev, code);
}

uint64_t emu_sample_time(struct emu_thread *t)
{
	if (emu_clock_is_virtual())
		return emu_cycles_to_ns(t->ctx.last_cycles);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------ signals */
/* Signals are sent after the perf lock is released: a signal to ourselves runs its handler at once, and
 * PAPI's handler calls ioctl() on the event. */
struct pending_signal {
	pid_t pid, tid;
	int signo;
	siginfo_t info;
};
#define MAX_PENDING 256
static __thread struct pending_signal pending[MAX_PENDING] __attribute__((tls_model("initial-exec")));
static __thread unsigned npending __attribute__((tls_model("initial-exec")));

void emu_queue_signal(struct emu_event *ev, int code)
{
	if (npending == MAX_PENDING || !ev->has_owner)
		return; /* F_SETOWN never called: nobody to signal, as the kernel */
	struct pending_signal *p = &pending[npending++];
	memset(p, 0, sizeof(*p));
	p->pid = ev->owner_type == F_OWNER_TID ? getpid() : ev->owner;
	p->tid = ev->owner_type == F_OWNER_TID ? ev->owner : 0;
	p->signo = ev->signo ? ev->signo : SIGIO;
	p->info.si_signo = p->signo;
	p->info.si_code = code;
	p->info.si_fd = ev->fd;
	p->info.si_band =
	    code == POLL_HUP ? (POLLHUP | POLLERR) : (POLLIN | POLLRDNORM); /* kernel band_table */
}

static long send_one(struct pending_signal *p)
{
	if (p->tid)
		return EMU_REAL(syscall)(SYS_rt_tgsigqueueinfo, p->pid, p->tid, p->signo, &p->info);
	return EMU_REAL(syscall)(SYS_rt_sigqueueinfo, p->pid, p->signo, &p->info);
}

void emu_flush_signals(void)
{
	/* Send from a copy: a signal sent here runs the user's handler at once, and what it does (read,
	 * ioctl, a tick) may queue new signals into `pending` while this loop runs. */
	struct pending_signal batch[MAX_PENDING];
	unsigned n = npending;
	memcpy(batch, pending, n * sizeof(batch[0]));
	npending = 0;
	for (unsigned i = 0; i < n; i++) {
		struct pending_signal *p = &batch[i];
		long r;
		r = send_one(p);
		if (r != 0 && errno == EPERM) {
			/* The kernel lets only the target thread itself queue a kernel-style si_code
			 * (POLL_IN); from another thread we keep si_fd and mark the info as queued. */
			p->info.si_code = SI_QUEUE;
			r = send_one(p);
		}
		if (r == 0)
			EMU_STAT_ADD(signals, 1);
	}
}

/* -------------------------------------------------------------------------------- cputime sampling */
static int tick_signal;

static uint64_t interrupted_pc(void *ucv)
{
	ucontext_t *uc = ucv;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__riscv)
	return (uint64_t)uc->uc_mcontext.__gregs[REG_PC];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static void tick_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int saved = errno;
	struct emu_thread *t = emu_thread_self();
	uint64_t pc = interrupted_pc(uc);
	if (emu_in_emulator()) { /* we hold (or wait for) the lock: emu_unlock handles it */
		t->tick_ip = pc;
		t->tick_pending = 1;
	} else {
		emu_lock();
		emu_ctx_sync(t, emu_cycles_of(t), pc);
		emu_timer_rearm(t);
		emu_unlock();
	}
	errno = saved;
}

static int ensure_tick_signal(void)
{
	if (tick_signal)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tick_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* A real-time signal near the top of the range, away from PAPI's SIGRTMIN+2. */
	int sig = SIGRTMAX - 3;
	if (sigaction(sig, &sa, NULL) != 0)
		return -1;
	tick_signal = sig;
	return 0;
}

static uint64_t cycles_to_next_overflow(struct emu_thread *t)
{
	uint64_t best = UINT64_MAX;
	const struct rvemu_model *m = emu_model();
	for (struct emu_event *g = t->ctx.groups; g; g = g->next_group)
		for (struct emu_event *e = g; e; e = e->sibling) {
			if (e->state != EV_ACTIVE || !e->attr.sample_period)
				continue;
			uint64_t ppb = 0;
			for (size_t i = 0; i < m->nevents; i++)
				if (e->evmask & (1ull << i))
					ppb += m->events[i].ppb;
			if (!ppb)
				continue;
			uint64_t left = e->period_left > 0 ? (uint64_t)e->period_left : 1;
			uint64_t c = (uint64_t)(((unsigned __int128)left * RVEMU_PPB + ppb - 1) / ppb);
			if (c < best)
				best = c;
		}
	return best;
}

/* One-shot timer on the target thread's CPU clock, at the predicted next overflow (at least 20 us, at
 * most 100 ms apart so a mis-prediction is corrected soon). */
void emu_timer_rearm(struct emu_thread *t)
{
	if (emu_clock_is_virtual())
		return;
	uint64_t c = t->ctx.nsampling_active ? cycles_to_next_overflow(t) : UINT64_MAX;
	if (c == UINT64_MAX && !t->has_timer)
		return;
	if (!t->has_timer) {
		if (ensure_tick_signal() != 0)
			return;
		struct sigevent sev;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = tick_signal;
		sev._sigev_un._tid = t->tid;
		clockid_t cid = (clockid_t)((~(unsigned)t->tid << 3) | 6);
		if (timer_create(cid, &sev, &t->timer) != 0)
			return;
		t->has_timer = 1;
	}
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	if (c != UINT64_MAX) {
		uint64_t ns = emu_cycles_to_ns(c);
		if (ns < 20000)
			ns = 20000;
		if (ns > 100000000)
			ns = 100000000;
		its.it_value.tv_sec = (time_t)(ns / 1000000000u);
		its.it_value.tv_nsec = (long)(ns % 1000000000u);
	}
	timer_settime(t->timer, 0, &its, NULL);
}
