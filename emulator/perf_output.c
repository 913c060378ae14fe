// SPDX-License-Identifier: MIT
/* What an event gives back: read() values in the read_format layout, the mmap'ed ring buffer with its
 * records (PERF_RECORD_SAMPLE, _LOST, _THROTTLE/_UNTHROTTLE), the live perf_event_mmap_page, and the
 * snapshot a forked child reads. The kernel keeps its own copy of everything it writes to the user page
 * (data_head, data_offset, data_size): user space may scribble on the page without harming the emulator,
 * only data_tail is read back, and it is never trusted beyond the buffer's size. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "perf_priv.h"

/* What an event reads: its own count and times, plus those its exited children handed over (inherit). */
static uint64_t acc_of(const struct emu_event *e, const uint64_t *field)
{
	return e->acc && !e->inherited ? __atomic_load_n(field, __ATOMIC_RELAXED) : 0;
}

/* An event's count when the PES record `at` was written (NULL: now), from the counter the record holds;
 * an event on a counter the record does not hold reads its count at the drain. */
static uint64_t count_at(const struct emu_event *e, const struct rvemu_pes_record *at)
{
	int k = emu_pes_slot(e->hw_idx);
	if (!at || e->state != EV_ACTIVE || k < 0)
		return e->count;
	return e->count - emu_width_mask(e, e->hw_raw - at->counters[k]);
}

static uint64_t total_count(const struct emu_event *e, const struct rvemu_pes_record *at)
{
	return count_at(e, at) + (e->acc ? acc_of(e, &e->acc->count) : 0);
}

static uint64_t total_enabled(const struct emu_event *e)
{
	return e->time_enabled + (e->acc ? acc_of(e, &e->acc->time_enabled) : 0);
}

static uint64_t total_running(const struct emu_event *e)
{
	return e->time_running + (e->acc ? acc_of(e, &e->acc->time_running) : 0);
}

/* The read_format layout of man 2 perf_event_open; returns words needed (may exceed max_words). */
size_t emu_read_values(const struct emu_event *ev, const struct rvemu_pes_record *at, uint64_t *out,
                       size_t max_words)
{
	uint64_t fmt = ev->attr.read_format;
	size_t n = 0;
	const struct emu_event *leader = ev->leader;
#define PUT(v)                                                                                               \
	do {                                                                                                 \
		if (n < max_words)                                                                           \
			out[n] = (v);                                                                        \
		n++;                                                                                         \
	} while (0)
	if (fmt & PERF_FORMAT_GROUP) {
		uint64_t nr = 0;
		for (const struct emu_event *e = leader; e; e = e->sibling)
			nr++;
		PUT(nr);
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			PUT(total_enabled(leader));
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			PUT(total_running(leader));
		for (const struct emu_event *e = leader; e; e = e->sibling) {
			PUT(total_count(e, at));
			if (fmt & PERF_FORMAT_ID)
				PUT(e->id);
			if (fmt & PERF_FORMAT_LOST)
				PUT(e->lost_total);
		}
	} else {
		PUT(total_count(ev, at));
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			PUT(total_enabled(ev));
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			PUT(total_running(ev));
		if (fmt & PERF_FORMAT_ID)
			PUT(ev->id);
		if (fmt & PERF_FORMAT_LOST)
			PUT(ev->lost_total);
	}
#undef PUT
	return n;
}

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
	size_t page = (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	ev->page = p;
	ev->map_len = len;
	ev->data_size = len - page;
	ev->data_head = 0;
	if (ev->xs) /* sampling another process: its shadows can map the buffer now (perf_remote.c) */
		emu_run_block_published();
	/* cppcheck models the dlsym'd mmap as returning its NULL hint: p is a fresh mapping here. */
	// cppcheck-suppress nullPointer
	memset(p, 0, page);
	emu_ring_update_page(ev);
	return 0;
}

void emu_ring_unmap(struct emu_event *ev)
{
	if (ev->page)
		EMU_REAL(munmap)(ev->page, ev->map_len);
	ev->page = NULL;
	ev->paused = 0;
}

/* Linux 6.6+ (arch_perf_update_userpage, riscv_pmu): a mapped hardware event's page says which counter CSR
 * user space may read (index = CSR - 0xC00 + 1), its width, and the offset to add; time fields convert the
 * `time` CSR (1 MHz here) to the perf clock in ns. cap_user_rdpmc is PERF_EVENT_FLAG_USER_READ_CNT, which
 * pmu_sbi_event_mapped sets after perf_mmap wrote the page (so the page shows it from its next update):
 * perf_user_access = 1, or 2 (legacy) for config 0/1 (cycles, instructions) only;
 * pmc_width is written only then. The reader's contract (include/uapi/linux/perf_event.h) is
 * count = offset + pmc sign-extended from pmc_width, so offset is the count minus the counter's value
 * sign-extended the same way (the kernel's prev_count after riscv_pmu_event_set_period).
 *
 * Built for riscv64 the emulator only ever runs under qemu-user, which answers cycle and instret (0xC00,
 * 0xC02) itself with the host's tick counter, without trapping: an index on those counters would make
 * user-space readers add host ticks to the count. There the fixed counters publish index 0 ("not on a
 * counter now"), so readers (PAPI's patch 25, libperf) fall back to read(); the programmable counters trap
 * into fe_trap.c and are exact. */
#if defined(__riscv)
#define EMU_FIXED_COUNTERS_USER_READABLE 0
#else
#define EMU_FIXED_COUNTERS_USER_READABLE 1
#endif

static int user_read_granted(const struct emu_event *ev)
{
	if (ev->kind == EK_SOFTWARE || !ev->user_read)
		return 0;
	switch (emu_cfg()->perf_user_access) {
	case 1:
		return 1;
	case 2:
		return ev->attr.config == PERF_COUNT_HW_CPU_CYCLES ||
		       ev->attr.config == PERF_COUNT_HW_INSTRUCTIONS;
	default:
		return 0;
	}
}

static int64_t sign_extend(uint64_t v, unsigned width)
{
	unsigned shift = 64 - width;
	return width >= 64 ? (int64_t)v : (int64_t)(v << shift) >> shift;
}

void emu_ring_update_page(struct emu_event *ev)
{
	struct perf_event_mmap_page *pg = ev->page;
	if (!pg || ev->shadow)
		return; /* a shadow writes records into the owner's ring, never its page */
	int rdpmc = user_read_granted(ev);
	int on_counter = rdpmc && ev->state == EV_ACTIVE && ev->hw_idx >= 0 &&
	                 (ev->kind == EK_PROG || EMU_FIXED_COUNTERS_USER_READABLE);
	unsigned width = ev->kind == EK_PROG && emu_model()->prog_width < 64 ? emu_model()->prog_width : 64;
	uint32_t seq = __atomic_load_n(&pg->lock, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->lock, seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pg->version = 0;
	pg->compat_version = 0;
	pg->capabilities = 0;
	pg->cap_bit0_is_deprecated = 1;
	pg->cap_user_rdpmc = (uint64_t)rdpmc;
	pg->cap_user_time = 1;
	pg->cap_user_time_zero = 1;
	pg->index = on_counter ? (uint32_t)ev->hw_idx + 1 : 0;
	pg->pmc_width = rdpmc ? (uint16_t)width : 0;
	pg->offset = (int64_t)(ev->count - (on_counter ? (uint64_t)sign_extend(ev->hw_raw, width) : 0));
	pg->time_enabled = ev->time_enabled;
	pg->time_running = ev->time_running;
	pg->time_shift = 0;
	pg->time_mult = 1000; /* 1 MHz time CSR -> ns */
	pg->time_zero = 0;
	pg->time_offset = 0;
	if (!ev->xs) /* sampling another process: the shadows move the head */
		pg->data_head = ev->data_head;
	pg->data_offset = ev->map_len - ev->data_size;
	pg->data_size = ev->data_size;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&pg->lock, seq + 2, __ATOMIC_RELEASE);
}

static void snap_write(struct emu_event_snap *s, const struct emu_event *ev)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
	s->count = total_count(ev, NULL);
	s->time_enabled = total_enabled(ev);
	s->time_running = total_running(ev);
	s->lost_total = ev->lost_total;
	s->error = ev->state == EV_ERROR;
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

void emu_event_publish(struct emu_event *ev)
{
	emu_ring_update_page(ev);
	if (ev->snap)
		snap_write(ev->snap, ev);
	if (ev->xfile) /* its fd was sent to another process (SCM_RIGHTS, perf_remote.c) */
		snap_write(&ev->xfile->snap, ev);
}

/* The buffer records go to: the event's own, or the one SET_OUTPUT redirected it to. */
static struct emu_event *output_of(struct emu_event *ev)
{
	return ev->output ? ev->output : ev;
}

/* A shadow (perf_remote.c) writes the buffer of an event of another process, as do the other tasks that
 * event reaches: under the buffer's lock word in the run's shared memory, from the page's data_head. */
/* Whether `xs` still describes the event the shadow was made of (the owner may have closed it and the block
 * be reused, by an event of the same id: ids restart in every process): the claim's generation says. */
int emu_shadow_current(const struct emu_event *ev)
{
	const struct emu_xsampler *xs = ev->xs;
	return xs && __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_SAMPLER &&
	       __atomic_load_n(&xs->gen, __ATOMIC_RELAXED) == ev->xs_gen;
}

/* The block whose lock and wakeups go with the buffer a shadow writes (its own, or SET_OUTPUT's). */
static struct emu_xsampler *ring_block_of(const struct emu_event *rb)
{
	struct emu_xsampler *r = emu_run_block_at((unsigned)rb->xs_ring_block);
	return r ? r : rb->xs;
}

/* The shadow's count so far, into the event the owner reads. */
void emu_shadow_publish(struct emu_event *ev)
{
	if (!emu_shadow_current(ev))
		return;
	/* the kernel freezes a disabled event's count: what the shadow counted since its last publish while
	 * its event is off is dropped (to within a period: it is noticed at publishes and overflows) */
	if (!__atomic_load_n(&ev->xs->enabled, __ATOMIC_ACQUIRE))
		ev->xs_published = ev->count;
	if (ev->count > ev->xs_published)
		__atomic_fetch_add(&ev->xs->count, ev->count - ev->xs_published, __ATOMIC_RELAXED);
	ev->xs_published = ev->count;
	if (ev->lost_total)
		__atomic_fetch_add(&ev->xs->lost, ev->lost_total, __ATOMIC_RELAXED);
	ev->lost_total = 0;
}

int emu_xring_begin(struct emu_event *rb)
{
	if (!rb->shadow)
		return 0;
	/* the owner closed or disabled the event: the task's records go nowhere, as a disabled event's */
	if (!emu_shadow_current(rb))
		return -1;
	if (!__atomic_load_n(&rb->xs->enabled, __ATOMIC_ACQUIRE)) {
		emu_shadow_publish(rb); /* drops what it counted while off */
		return -1;
	}
	emu_run_word_lock(&ring_block_of(rb)->ring_lock);
	/* the other writers moved the head on: continue from theirs */
	rb->data_head = __atomic_load_n(&rb->page->data_head, __ATOMIC_ACQUIRE);
	return 0;
}

void emu_xring_end(struct emu_event *rb)
{
	if (!rb->shadow)
		return;
	struct emu_xsampler *ring = ring_block_of(rb);
	if (rb->wakeups)
		__atomic_fetch_add(&ring->wakeups, rb->wakeups, __ATOMIC_RELEASE);
	rb->wakeups = 0;
	emu_run_word_unlock(&ring->ring_lock);
	emu_shadow_publish(rb);
}

static void ring_put(struct emu_event *rb, uint64_t *head, const void *src, size_t n)
{
	unsigned char *data = (unsigned char *)rb->page + (rb->map_len - rb->data_size);
	const unsigned char *s = src;
	while (n) {
		size_t off = (size_t)(*head % rb->data_size), chunk = rb->data_size - off;
		if (chunk > n)
			chunk = n;
		memcpy(data + off, s, chunk);
		s += chunk;
		n -= chunk;
		*head += chunk;
	}
}

/* Room for `need` bytes? data_tail is the user's: a value that is ahead of the head or further back than
 * the buffer is garbage and leaves no room (the kernel's CIRC_SPACE arithmetic never writes outside). */
static int ring_has_room(const struct emu_event *rb, size_t need)
{
	uint64_t tail = __atomic_load_n(&rb->page->data_tail, __ATOMIC_ACQUIRE);
	uint64_t used = rb->data_head - tail;
	return used <= rb->data_size && rb->data_size - used >= need;
}

/* perf_output_wakeup: wakeup_events samples (or, with watermark, that many bytes) since the last
 * wakeup make poll() report POLLIN. */
static void ring_wakeup_check(struct emu_event *ev, struct emu_event *rb, uint64_t old_head)
{
	if (ev->attr.watermark) {
		uint64_t wm = ev->attr.wakeup_watermark ? ev->attr.wakeup_watermark : rb->data_size / 2;
		if (rb->data_head / wm != old_head / wm)
			rb->wakeups++;
	} else if (++ev->samples_since_wakeup >= (ev->attr.wakeup_events ? ev->attr.wakeup_events : 1)) {
		ev->samples_since_wakeup = 0;
		rb->wakeups++;
	}
}

static void ring_commit(struct emu_event *rb, uint64_t head)
{
	rb->data_head = head;
	__atomic_store_n(&rb->page->data_head, head, __ATOMIC_RELEASE);
}

/* Where process_vm_readv is missing (qemu-user answers ENOSYS), a page is read by writing it into a pipe of
 * our own: the kernel (or qemu) checks the address and answers EFAULT instead of faulting. The pipe is made
 * once per process (a forked child makes its own), its two fds close on exec. Callers hold the perf lock. */
static int probe_pipe[2] = {-1, -1};
static pid_t probe_pipe_pid;

static ssize_t copy_by_pipe(void *dst, uint64_t addr, size_t n)
{
	if (probe_pipe_pid != emu_getpid()) {
		if (EMU_REAL(syscall)(SYS_pipe2, probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
			return -1;
		probe_pipe_pid = emu_getpid();
	}
	ssize_t w = EMU_REAL(write)(probe_pipe[1], (const void *)(uintptr_t)addr, n);
	if (w <= 0)
		return -1;
	return EMU_REAL(read)(probe_pipe[0], dst, (size_t)w);
}

/* Reads `n` bytes of this process's memory at `addr` without faulting, as __copy_from_user_inatomic: page by
 * page, stopping at the first page that cannot be read; returns the bytes read. */
static size_t user_copy(void *dst, uint64_t addr, size_t n)
{
	static int no_vm_readv;
	size_t page = (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE), done = 0;
	while (done < n) {
		size_t chunk = page - (size_t)((addr + done) % page);
		if (chunk > n - done)
			chunk = n - done;
		struct iovec l = {(char *)dst + done, chunk}, r = {(void *)(uintptr_t)(addr + done), chunk};
		ssize_t got = no_vm_readv ? -1 : process_vm_readv(emu_getpid(), &l, 1, &r, 1, 0);
		if (got < 0 && (no_vm_readv || errno == ENOSYS)) {
			no_vm_readv = 1;
			got = copy_by_pipe((char *)dst + done, addr + done, chunk);
		}
		if (got <= 0)
			break;
		done += (size_t)got;
		if ((size_t)got < chunk)
			break;
	}
	return done;
}

/* A PERF_SAMPLE_CALLCHAIN being built (perf_callchain_entry_ctx): sample_max_stack bounds the addresses,
 * perf_event_max_contexts_per_stack the PERF_CONTEXT_* marks. */
struct chain {
	uint64_t *ip;
	size_t nr, ips, max_ips, contexts;
};

static void chain_context(struct chain *c, uint64_t mark)
{
	if (c->contexts < EMU_MAX_CONTEXTS) {
		c->ip[c->nr++] = mark;
		c->contexts++;
	}
}

static int chain_store(struct chain *c, uint64_t ip)
{
	if (c->ips >= c->max_ips)
		return -1;
	c->ip[c->nr++] = ip;
	c->ips++;
	return 0;
}

/* perf_callchain_user: the sampled pc, then the return addresses along the frame-pointer chain, each frame
 * read without faulting; a program built without frame pointers gives what the kernel gives it. Built for
 * riscv64, riscv's frame record (fp-16: the caller's fp, fp-8: the return address; the first return address
 * is ra, as a leaf may not have saved it); on other hosts the host's ([fp]: caller's fp, [fp+8]: return). */
static void chain_user(struct chain *c, const struct emu_uregs *r)
{
	if (chain_store(c, r->r[EMU_REG_PC]))
		return;
	uint64_t fp = r->r[EMU_REG_S0], f[2];
#if defined(__riscv)
	uint64_t ra = r->r[EMU_REG_RA];
	while (fp && !(fp & 3) && c->ips < c->max_ips) {
		if (user_copy(f, fp - sizeof(f), sizeof(f)) != sizeof(f))
			break;
		uint64_t ret = ra ? ra : f[1];
		ra = 0;
		if (!ret || chain_store(c, ret))
			break;
		fp = f[0];
	}
#else
	while (fp && !(fp & 7) && c->ips < c->max_ips) {
		if (user_copy(f, fp, sizeof(f)) != sizeof(f) || !f[1] || chain_store(c, f[1]))
			break;
		fp = f[0];
	}
#endif
}

/* get_perf_callchain: the kernel part (PERF_CONTEXT_KERNEL and the kernel pc) for a sample taken in the
 * kernel, the user part (PERF_CONTEXT_USER and the user call chain) for one with the program's registers,
 * or just the user pc where the emulator has no registers (a PES record's exact pc, the control API). A
 * kernel sample has no user part here: the program's registers at its system call are not kept. */
static size_t put_callchain(const struct emu_event *ev, uint64_t ip, const struct emu_uregs *regs,
                            uint64_t *out)
{
	struct chain c = {out + 1, 0, 0, ev->attr.sample_max_stack, 0};
	if (ip == EMU_IP_KERNEL) {
		if (!ev->attr.exclude_callchain_kernel) {
			chain_context(&c, PERF_CONTEXT_KERNEL);
			chain_store(&c, ip);
		}
	} else if (!ev->attr.exclude_callchain_user) {
		chain_context(&c, PERF_CONTEXT_USER);
		if (regs)
			chain_user(&c, regs);
		else
			chain_store(&c, ip);
	}
	out[0] = c.nr;
	return 1 + c.nr;
}

/* perf_output_sample_regs: the abi, then each register of the mask, lowest first; ABI_NONE alone where
 * there are no registers (a sample taken in the kernel or from a PES record, emu_sample_write's regs). */
static size_t put_regs(uint64_t mask, const struct emu_uregs *regs, uint64_t *out)
{
	size_t n = 0;
	out[n++] = regs ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
	for (unsigned i = 0; regs && i < EMU_PERF_REGS; i++)
		if (mask & (1ull << i))
			out[n++] = regs->r[i];
	return n;
}

/* PERF_MEM_NA (include/linux/perf_event.h): what perf_prepare_sample writes for a PMU without data sources.
 */
#define EMU_MEM_NA                                                                                           \
	(PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) |           \
	 PERF_MEM_S(TLB, NA) | PERF_MEM_S(LVLNUM, NA))

/* The words of a PERF_RECORD_SAMPLE in perf_output_sample's order. `rec` gets everything up to STACK_USER's
 * size word, `tail` what follows its data; `stack` the user stack dump (address, size) between them. The
 * riscv PMU has no raw data, branch records, weights, data sources or transactions: the fields say so as
 * the kernel writes them (RAW: 4 bytes of 0; WEIGHT 0; DATA_SRC PERF_MEM_NA; ADDR, PHYS_ADDR and
 * DATA_PAGE_SIZE 0 as there is no data address). */
struct sample_parts {
	size_t n, m;                   /* words in rec and tail */
	uint64_t stack_sp, stack_size; /* STACK_USER dump */
};

static int build_sample(struct emu_event *ev, uint64_t ip, uint64_t time_ns,
                        const struct rvemu_pes_record *pes, const struct emu_uregs *regs, uint64_t *rec,
                        size_t max, uint64_t *tail, struct sample_parts *sp)
{
	uint64_t st = ev->attr.sample_type;
	struct emu_thread *t = ev->target;
	if (pes || ip == EMU_IP_KERNEL || (regs && regs->r[EMU_REG_PC] != ip))
		regs = NULL;
	size_t n = 1, m = 0; /* rec[0] = header */
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec[n++] = ev->id;
	if (st & PERF_SAMPLE_IP)
		rec[n++] = ip;
	if (st & PERF_SAMPLE_TID)
		rec[n++] = (uint64_t)(uint32_t)t->pid | (uint64_t)(uint32_t)t->tid << 32;
	if (st & PERF_SAMPLE_TIME)
		rec[n++] = time_ns;
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
		size_t need = emu_read_values(ev, pes, rec + n, max - n);
		if (need > max - n)
			return -1; /* a group too large for one record: counted as lost, never padded */
		n += need;
	}
	if (st & PERF_SAMPLE_CALLCHAIN)
		n += put_callchain(ev, ip, regs, rec + n);
	if (st & PERF_SAMPLE_RAW) {
		uint32_t raw[2] = {sizeof(uint32_t), 0}; /* u32 size, then the 4 bytes of data */
		memcpy(&rec[n++], raw, sizeof(raw));
	}
	if (st & PERF_SAMPLE_REGS_USER)
		n += put_regs(ev->attr.sample_regs_user, regs, rec + n);
	sp->stack_size = 0;
	sp->stack_sp = 0;
	if (st & PERF_SAMPLE_STACK_USER) {
		rec[n++] = 0; /* the size, set below once the rest is known */
		sp->stack_sp = regs ? regs->r[EMU_REG_SP] : 0;
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		tail[m++] = 0;
	if (st & PERF_SAMPLE_DATA_SRC)
		tail[m++] = EMU_MEM_NA;
	if (st & PERF_SAMPLE_TRANSACTION)
		tail[m++] = 0;
	if (st & PERF_SAMPLE_REGS_INTR) /* the interrupted registers: the program's for a user sample */
		m += put_regs(ev->attr.sample_regs_intr, regs, tail + m);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		tail[m++] = 0;
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		tail[m++] = 0;
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE) /* perf_get_page_size(ip): a user pc is on a base page */
		tail[m++] = ip == EMU_IP_KERNEL ? 0 : (uint64_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	/* perf_sample_ustack_size: what was asked, cut so the record's size still fits its u16 */
	if ((st & PERF_SAMPLE_STACK_USER) && regs) {
		uint64_t fixed = (n + m) * 8 + 8, size = ev->attr.sample_stack_user;
		if (fixed + size > 0xffff)
			size = (0xffff - fixed) & ~7ull;
		sp->stack_size = size;
		rec[n - 1] = size;
	}
	/* PERF_RECORD_MISC_EXACT_IP only for PES samples: the PC of the instruction that caused the event; a
	 * sample taken inside the emulator is a kernel sample, never exact (its cause ran in the program) */
	uint16_t misc = ip == EMU_IP_KERNEL ? PERF_RECORD_MISC_KERNEL
	                                    : PERF_RECORD_MISC_USER | (pes ? PERF_RECORD_MISC_EXACT_IP : 0);
	uint64_t bytes = (n + m) * 8 + (sp->stack_size ? sp->stack_size + 8 : 0);
	struct perf_event_header h = {PERF_RECORD_SAMPLE, misc, (uint16_t)bytes};
	memcpy(&rec[0], &h, sizeof(h));
	sp->n = n;
	sp->m = m;
	return 0;
}

/* STACK_USER's data: the stack copied straight into the ring from the program's sp; what cannot be read
 * (past the stack's end) is zero padding. Returns dyn_size, the bytes really copied. */
static uint64_t ring_put_stack(struct emu_event *rb, uint64_t *head, uint64_t sp, uint64_t size)
{
	unsigned char *data = (unsigned char *)rb->page + (rb->map_len - rb->data_size);
	uint64_t done = 0, dyn = 0;
	int failed = 0;
	while (done < size) {
		size_t off = (size_t)((*head + done) % rb->data_size), chunk = rb->data_size - off;
		if (chunk > size - done)
			chunk = (size_t)(size - done);
		size_t got = failed ? 0 : user_copy(data + off, sp + done, chunk);
		if (got < chunk) {
			memset(data + off + got, 0, chunk - got);
			failed = 1;
		}
		dyn += got;
		done += chunk;
	}
	*head += size;
	return dyn;
}

void emu_sample_lost(struct emu_event *ev)
{
	ev->lost++;
	ev->lost_total++;
	EMU_STAT_ADD(samples_lost, 1);
}

/* perf_output_begin: a pending loss is reported, in the same reservation, before the next record that
 * fits; a record that does not fit is dropped and counted. */
void emu_sample_write(struct emu_event *ev, uint64_t ip, uint64_t time_ns, const struct rvemu_pes_record *pes,
                      const struct emu_uregs *regs)
{
	/* header, 9 fixed fields, a group's read values, a call chain, raw, user registers, the stack size */
	uint64_t rec[11 + 3 + 3 * 64 + 1 + EMU_MAX_STACK + EMU_MAX_CONTEXTS + 1 + 1 + EMU_PERF_REGS + 1];
	uint64_t tail[8 + 1 + EMU_PERF_REGS];
	struct sample_parts parts;
	struct emu_event *rb = output_of(ev);
	if (ev->target && ev->target->exit_written)
		return; /* after its EXIT (exit_group ended the process): counted, never a record */
	int bad = build_sample(ev, ip, time_ns, pes, regs, rec, sizeof(rec) / sizeof(rec[0]), tail, &parts);
	if (!rb->page || !rb->data_size || bad || rb->paused) {
		emu_sample_lost(ev);
		return;
	}
	if (emu_xring_begin(rb))
		return;
	size_t size = (parts.n + parts.m) * 8 + (parts.stack_size ? parts.stack_size + 8 : 0);
	uint64_t lost[3] = {0, ev->id, ev->lost}; /* PERF_RECORD_LOST: header, id, number lost */
	struct perf_event_header lh = {PERF_RECORD_LOST, 0, sizeof(lost)};
	memcpy(&lost[0], &lh, sizeof(lh));
	if (!ring_has_room(rb, size + (ev->lost ? sizeof(lost) : 0))) {
		emu_sample_lost(ev);
		emu_xring_end(rb);
		return;
	}
	uint64_t head = rb->data_head, old = head;
	if (ev->lost)
		ring_put(rb, &head, &lost, sizeof(lost));
	ev->lost = 0;
	ring_put(rb, &head, rec, parts.n * 8);
	if (parts.stack_size) {
		uint64_t dyn = ring_put_stack(rb, &head, parts.stack_sp, parts.stack_size);
		ring_put(rb, &head, &dyn, sizeof(dyn));
	}
	ring_put(rb, &head, tail, parts.m * 8);
	ring_commit(rb, head);
	EMU_STAT_ADD(samples_written, 1);
	ring_wakeup_check(ev, rb, old);
	emu_xring_end(rb);
}

/* perf_log_throttle: PERF_RECORD_THROTTLE / UNTHROTTLE { header, time, id, stream_id }. */
void emu_ring_write_throttle(struct emu_event *ev, int throttle, uint64_t time_ns)
{
	struct emu_event *rb = output_of(ev);
	uint64_t r[4] = {0, time_ns, ev->id, ev->id};
	struct perf_event_header h = {throttle ? PERF_RECORD_THROTTLE : PERF_RECORD_UNTHROTTLE, 0, sizeof(r)};
	memcpy(&r[0], &h, sizeof(h));
	if (rb->page && rb->data_size && rb->paused) {
		emu_sample_lost(ev); /* perf_output_begin counts any record a paused buffer drops */
		return;
	}
	if (!rb->page || !rb->data_size || emu_xring_begin(rb))
		return;
	if (ring_has_room(rb, sizeof(r))) {
		uint64_t head = rb->data_head;
		ring_put(rb, &head, r, sizeof(r));
		ring_commit(rb, head);
	}
	emu_xring_end(rb);
}

/* The time of a record (PERF_SAMPLE_TIME, side-band records): the clock's (emu_clock_record_time). */
uint64_t emu_event_time(struct emu_thread *t)
{
	return emu_clock_record_time(t, t->perf ? &t->perf->last_cycles : NULL);
}

/* ----------------------------------------------------------------------------------- side-band records */
/* perf_event_comm, perf_event_mmap, perf_event_task: records that say what the task did, for the events of
 * the task's own context that asked (attr.comm, attr.mmap / mmap2, attr.task; comm/mmap events get task
 * records too, perf_event_task_match), each followed by the sample_id trailer when attr.sample_id_all
 * (perf_event__output_id_sample: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER of the task writing it). */
struct sideband {
	uint16_t type, misc;
	const uint64_t *body; /* after the header, padded to 8 bytes */
	size_t words;
	pid_t cur_pid, cur_tid; /* the task the record is written for (sample_id's TID) */
	uint64_t time;
	uint32_t cpu; /* sample_id's CPU: where that task runs */
};

static size_t put_sample_id(const struct emu_event *ev, const struct sideband *sb, uint64_t *out)
{
	uint64_t st = ev->attr.sample_type;
	size_t n = 0;
	if (!ev->attr.sample_id_all)
		return 0;
	if (st & PERF_SAMPLE_TID)
		out[n++] = (uint64_t)(uint32_t)sb->cur_pid | (uint64_t)(uint32_t)sb->cur_tid << 32;
	if (st & PERF_SAMPLE_TIME)
		out[n++] = sb->time;
	if (st & PERF_SAMPLE_ID)
		out[n++] = ev->id;
	if (st & PERF_SAMPLE_STREAM_ID)
		out[n++] = ev->id;
	if (st & PERF_SAMPLE_CPU)
		out[n++] = sb->cpu;
	if (st & PERF_SAMPLE_IDENTIFIER)
		out[n++] = ev->id;
	return n;
}

/* perf_output_begin for a side-band record: nothing without a buffer; a paused or full buffer drops it and
 * counts it lost (the PERF_RECORD_LOST is written before the next sample that fits). */
static void sideband_write(struct emu_event *ev, const struct sideband *sb)
{
	struct emu_event *rb = output_of(ev);
	if (!rb->page || !rb->data_size)
		return;
	uint64_t id[6];
	size_t nid = put_sample_id(ev, sb, id), size = (1 + sb->words + nid) * 8;
	if (emu_xring_begin(rb))
		return;
	if (rb->paused || size > 0xffff || !ring_has_room(rb, size)) {
		emu_sample_lost(ev);
		emu_xring_end(rb);
		return;
	}
	uint64_t hdr;
	struct perf_event_header h = {sb->type, sb->misc, (uint16_t)size};
	memcpy(&hdr, &h, sizeof(h));
	uint64_t head = rb->data_head, old = head;
	ring_put(rb, &head, &hdr, sizeof(hdr));
	ring_put(rb, &head, sb->body, sb->words * 8);
	ring_put(rb, &head, id, nid * 8);
	ring_commit(rb, head);
	if (ev->attr.watermark) { /* side-band records count toward a watermark, not toward wakeup_events */
		uint64_t wm = ev->attr.wakeup_watermark ? ev->attr.wakeup_watermark : rb->data_size / 2;
		if (rb->data_head / wm != old / wm)
			rb->wakeups++;
	}
	emu_xring_end(rb);
}

enum sb_kind { SB_COMM, SB_MMAP, SB_MMAP_DATA, SB_TASK };

/* Live events that asked for side-band records: while there are none, the front end's reports cost nothing
 * and never register a thread with the machine (which would give it a hart). */
static int sideband_events;

void emu_sb_track(const struct emu_event *ev, int delta)
{
	const struct perf_event_attr *a = &ev->attr;
	if (a->comm || a->mmap || a->mmap2 || a->mmap_data || a->task)
		__atomic_add_fetch(&sideband_events, delta, __ATOMIC_RELAXED);
}

int emu_sb_wanted(void)
{
	return __atomic_load_n(&sideband_events, __ATOMIC_RELAXED) > 0;
}

static int wants(const struct emu_event *ev, enum sb_kind k)
{
	const struct perf_event_attr *a = &ev->attr;
	switch (k) {
	case SB_COMM:
		return a->comm;
	case SB_MMAP: /* perf_event_mmap_match: an executable mapping */
		return a->mmap || a->mmap2;
	case SB_MMAP_DATA:
		return a->mmap_data;
	default:
		return a->comm || a->mmap || a->mmap2 || a->mmap_data || a->task;
	}
}

/* A string field: NUL-terminated, padded with zeros to 8 bytes (perf_event_comm: at least one NUL). */
static size_t put_string(uint64_t *out, size_t max_words, const char *str)
{
	size_t len = strnlen(str, max_words * 8 - 1), words = (len + 8) / 8;
	memset(out, 0, words * 8);
	memcpy(out, str, len);
	return words;
}

static void comm_write(struct emu_event *ev, const char *comm, int exec)
{
	uint64_t body[1 + 3];
	struct emu_thread *t = ev->target;
	body[0] = (uint64_t)(uint32_t)t->pid | (uint64_t)(uint32_t)t->tid << 32;
	size_t n = 1 + put_string(body + 1, 3, comm); /* TASK_COMM_LEN: 16 */
	struct sideband sb = {PERF_RECORD_COMM,
	                      exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
	                      body,
	                      n,
	                      t->pid,
	                      t->tid,
	                      emu_event_time(t),
	                      t->hart};
	sideband_write(ev, &sb);
}

#define EMU_PATH_WORDS 512 /* PATH_MAX bytes */

/* PERF_RECORD_MMAP2 {pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename}, or
 * PERF_RECORD_MMAP {pid, tid, addr, len, pgoff, filename} for an event without attr.mmap2. */
static void mmap_write(struct emu_event *ev, const struct perf_mmap_info *m)
{
	uint64_t body[8 + EMU_PATH_WORDS];
	struct emu_thread *t = ev->target;
	size_t n = 0;
	body[n++] = (uint64_t)(uint32_t)t->pid | (uint64_t)(uint32_t)t->tid << 32;
	body[n++] = m->addr;
	body[n++] = m->len;
	body[n++] = m->pgoff;
	if (ev->attr.mmap2) {
		body[n++] = (uint64_t)m->maj | (uint64_t)m->min << 32;
		body[n++] = m->ino;
		body[n++] = m->ino_generation;
		body[n++] = (uint64_t)m->prot | (uint64_t)m->flags << 32;
	}
	n += put_string(body + n, EMU_PATH_WORDS, m->filename);
	struct sideband sb = {ev->attr.mmap2 ? PERF_RECORD_MMAP2 : PERF_RECORD_MMAP,
	                      PERF_RECORD_MISC_USER |
	                          ((m->prot & PROT_EXEC) ? 0 : PERF_RECORD_MISC_MMAP_DATA),
	                      body,
	                      n,
	                      t->pid,
	                      t->tid,
	                      emu_event_time(t),
	                      t->hart};
	sideband_write(ev, &sb);
}

/* PERF_RECORD_FORK / EXIT {pid, ppid, tid, ptid, time} (perf_event_task_output). Its sample_id is that of
 * the task the kernel runs when it writes it (perf_event_header__init_id takes `current`): for EXIT the task
 * that exits (do_exit), for FORK the one that forks (copy_process), not the child. */
static void task_write(struct emu_event *ev, int fork, const struct emu_task_record *k)
{
	uint64_t body[3];
	body[0] = (uint64_t)k->pid | (uint64_t)k->ppid << 32;
	body[1] = (uint64_t)k->tid | (uint64_t)k->ptid << 32;
	body[2] = k->time;
	struct sideband sb = {
	    fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT, 0, body, 3, k->cur_pid, k->cur_tid, k->time, k->cpu};
	sideband_write(ev, &sb);
}

/* Whether an event gets a thread's side-band record now (perf_iterate_ctx: an enabled event that
 * event_filter_match takes, so of per-CPU events only the one on the thread's CPU). */
static int sideband_takes(const struct emu_event *e, const struct emu_thread *t, enum sb_kind kind)
{
	return e->state >= EV_INACTIVE && wants(e, kind) && (e->cpu < 0 || (unsigned)e->cpu == t->hart) &&
	       !t->exit_written;
}

/* The events of a thread's context that may get records now. The callers hold the perf lock. */
#define for_each_sideband_event(t, e, kind)                                                                  \
	for_each_group(t->perf, g) for_each_member(g, e) if (sideband_takes(e, t, kind))

void emu_sb_mmap(struct emu_thread *t, const struct perf_mmap_info *m)
{
	if (t->perf)
		for_each_sideband_event(t, e, (m->prot & PROT_EXEC) ? SB_MMAP : SB_MMAP_DATA)
		    mmap_write(e, m);
}

void emu_sb_comm(struct emu_thread *t, const char *comm, int exec)
{
	if (t->perf)
		for_each_sideband_event(t, e, SB_COMM) comm_write(e, comm, exec);
}

/* PERF_RECORD_FORK for the creating thread's events: ppid and ptid are the creator's pid and tid. A shadow
 * (perf_remote.c) gets it from the forked child itself, before the child's first sample: written here, after
 * fork returned in the parent, it could come after the child's samples and exec, and perf would give the
 * child the parent's mappings again. */
void emu_sb_fork(struct emu_thread *t, pid_t pid, pid_t tid)
{
	if (!t->perf)
		return;
	struct emu_task_record k = {(uint32_t)pid, (uint32_t)t->pid, (uint32_t)tid, (uint32_t)t->tid,
	                            t->pid,        t->tid,           t->hart,       emu_event_time(t)};
	for_each_sideband_event(t, e, SB_TASK) if (!e->shadow || tid != pid) task_write(e, 1, &k);
}

/* A FORK or EXIT record written for another task than the event's own (perf_remote.c: a forked child writes
 * its FORK as its parent's, a dead task's EXIT is written by another process), if the event wants task
 * records now (enabled; a per-CPU event only for the CPU the record names). */
void emu_sb_task_record(struct emu_event *ev, int fork, const struct emu_task_record *k)
{
	if (ev->state >= EV_INACTIVE && wants(ev, SB_TASK) && (ev->cpu < 0 || (unsigned)ev->cpu == k->cpu))
		task_write(ev, fork, k);
}

/* perf_event_exit_task_context: the exiting task's own events get EXIT; ppid and ptid are both the pid of
 * its real parent (the process's parent, for a thread too). */
void emu_sb_exit(struct emu_thread *t)
{
	uint32_t ppid = (uint32_t)getppid();
	if (!t->perf)
		return;
	struct emu_task_record k = {(uint32_t)t->pid, ppid,   (uint32_t)t->tid, ppid,
	                            t->pid,           t->tid, t->hart,          emu_event_time(t)};
	for_each_sideband_event(t, e, SB_TASK) task_write(e, 0, &k);
}

/* --------------------------------------------------------------------- what existed before the buffer */
/* Reads a whole /proc file with the real open/read (no stdio: this runs inside perf system calls). */
char *emu_read_proc(const char *path, size_t *len)
{
	int fd = EMU_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t r = EMU_REAL(read)(fd, buf + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	EMU_REAL(close)(fd);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* The next line of a /proc/self/maps text (cut in place) as an MMAP2 record's fields; returns the rest of
 * the text, NULL at its end. *exec: 1 executable, 0 data, -1 a line that could not be read. */
char *emu_next_maps_line(char *text, struct perf_mmap_info *m, int *exec)
{
	*exec = -1; /* no mapping, also past the end (the last line must not be seen twice) */
	if (!text || !*text)
		return NULL;
	char *next = strchr(text, '\n');
	if (next)
		*next++ = 0;
	else
		next = text + strlen(text);
	unsigned long long lo, hi, off, ino;
	unsigned maj, min;
	char perms[5];
	int name = 0;
	if (sscanf(text, "%llx-%llx %4s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj, &min, &ino, &name) <
	    7)
		return next;
	const char *path = text + name;
	memset(m, 0, sizeof(*m));
	m->addr = lo;
	m->len = hi - lo;
	m->pgoff = off;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	          (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	m->filename = *path ? path : "//anon";
	*exec = perms[2] == 'x';
	return next;
}

/* The COMM and MMAP records of what existed before the event had a buffer, once per event (under the lock;
 * `comm` and `maps` read before). Of per-CPU events, the one on the thread's CPU gets them, once. */
int emu_sb_existing_due(struct emu_event *ev)
{
	if (ev->xs && !ev->shadow)
		return 0; /* sampling another process: its own emulator writes them (perf_remote.c) */
	return !ev->sideband_done && output_of(ev)->page &&
	       (ev->attr.comm || ev->attr.mmap || ev->attr.mmap2 || ev->attr.mmap_data) &&
	       sideband_takes(ev, ev->target, SB_TASK);
}

void emu_sb_existing(struct emu_event *ev, const char *comm, char *maps)
{
	ev->sideband_done = 1;
	if (comm && ev->attr.comm)
		comm_write(ev, comm, ev->comm_exec);
	struct perf_mmap_info m;
	int exec;
	for (char *line = maps; line;) {
		line = emu_next_maps_line(line, &m, &exec);
		if ((exec == 1 && (ev->attr.mmap || ev->attr.mmap2)) || (exec == 0 && ev->attr.mmap_data))
			mmap_write(ev, &m);
	}
}
