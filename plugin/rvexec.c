// SPDX-License-Identifier: MIT
/*
 * librvexec.so: a QEMU 7.2 TCG plugin for qemu-riscv64 (user mode) that counts what a riscv64 program
 * executes, per guest thread, into the shared count file of rvexec_shm.h (docs/exec-counts.md).
 *
 *   qemu-riscv64 -plugin librvexec.so,model=sifive-u74,shm=/dev/shm/rvexec.1,out=summary.txt ./prog
 *
 * Hot path: one callback per executed block (the block's class counts were summed when it was translated) and
 * one per memory access (the data cache and TLB model); never one per instruction. QEMU 7.2's inline counters
 * add to one global address whatever the thread, so they serve only as the whole-process cross-check
 * `inline_instret` of the summary; per-thread counts need the block callback, which runs in the guest
 * thread's own host thread (under qemu-user a guest thread is a host thread), so a thread-local pointer finds
 * the thread's state without locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "rvexec_cache.h"
#include "rvexec_decode.h"
#include "rvexec_print.h"
#include "rvexec_shm.h"
#include "rvexec_tables.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* ---- per-thread state ---- */

struct block;

/* The control transfer that ended the previous block, resolved when the next block of the thread starts. */
struct pending_flow {
	uint64_t pc, fallthrough;
	struct rvexec_insn insn;
};

struct thread_state {
	struct rvexec_slot *slot;
	uint64_t *counts;      /* slot->counts[mode of the running block] */
	struct rvexec_mem mem; /* caches and TLBs (rvexec_cache.h) */
	uint8_t *bht;          /* 2-bit counters, 0..1 predict not taken, 2..3 taken */
	uint64_t *btb_pc, *btb_target;
	uint64_t *ras;
	uint32_t ras_top, ras_used;
	struct pending_flow pending;
	/* an alarm whose watch was reached, its signal waiting for the skid (rvexec_shm.h): the user cycles
	 * at which it is sent and the arming it belongs to (alarm_armed's word: a re-arming cancels it; 0:
	 * none) */
	uint64_t skid_armed, skid_at;
};

/* A translated block: its counts, summed at translation time, and what the models need at execution. */
struct block {
	uint64_t vaddr, end; /* [vaddr, end) */
	uint32_t nadds;
	struct {
		uint16_t count; /* enum rvexec_count */
		uint32_t n;
	} adds[RVEXEC_NCLASSES + 4];
	uint64_t last_pc;
	uint32_t l1i_lines;      /* the L1I lines it spans */
	struct rvexec_insn last; /* the block's last instruction (its control transfer, if any) */
	uint32_t ninsns;
	/* each instruction, for the alarm's exact instruction */
	struct {
		uint64_t pc;
		uint8_t count; /* its class */
	} insn[];
};

static const struct rvexec_model *model;
static unsigned l1i_line_shift; /* log2(model->l1i.line) */
static struct rvexec_shm_header *shm;
static char *out_path;
static uint64_t inline_instret;          /* QEMU 7.2 inline adds: one global counter, the cross-check */
static struct rvexec_slot overflow_slot; /* threads that found no free slot count here, unseen */
/* initial-exec: no __tls_get_addr call on the hot path (glibc keeps static TLS room for dlopen()ed libraries)
 */
static __thread struct thread_state *current __attribute__((tls_model("initial-exec")));

static struct thread_state *thread_state_new(void)
{
	struct thread_state *ts = calloc(1, sizeof(*ts));
	if (!ts || rvexec_mem_init(&ts->mem, model))
		return NULL;
	ts->bht = calloc(model->bht, 1);
	ts->btb_pc = calloc(model->btb, sizeof(uint64_t));
	ts->btb_target = calloc(model->btb, sizeof(uint64_t));
	ts->ras = calloc(model->ras, sizeof(uint64_t));
	if (!ts->bht || !ts->btb_pc || !ts->btb_target || !ts->ras)
		return NULL;
	memset(ts->bht, 1, model->bht); /* weakly not taken */

	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (uint32_t probe = 0; probe < shm->nslots; probe++) {
		struct rvexec_slot *s = rvexec_shm_slot(shm, (tid + probe) % shm->nslots);
		uint32_t expected = 0;
		if (__atomic_compare_exchange_n(&s->tid, &expected, tid, false, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED)) {
			__atomic_store_n(&s->state, RVEXEC_SLOT_LIVE, __ATOMIC_RELEASE);
			ts->slot = s;
			ts->counts = s->counts[RVEXEC_MODE_USER];
			return ts;
		}
	}
	fprintf(stderr,
	        "rvexec: all %u slots of the count file are in use: thread %u is not counted (slots=)\n",
	        shm->nslots, tid);
	ts->slot = &overflow_slot;
	ts->counts = overflow_slot.counts[RVEXEC_MODE_USER];
	return ts;
}

static struct thread_state *thread_state(void)
{
	if (__builtin_expect(current == NULL, 0)) {
		current = thread_state_new();
		if (!current) {
			fprintf(stderr, "rvexec: out of memory for a thread's models\n");
			abort();
		}
	}
	return current;
}

/* A fork()ed qemu (the guest's fork) runs on with its parent's thread state: let it take its own slot. */
static void forget_thread_in_child(void)
{
	current = NULL;
}

/* ---- execution ---- */

/* The instruction fetch of block b: its L1I lines and ITLB pages (rvexec_cache.h). */
static inline __attribute__((always_inline)) void fetch(struct thread_state *ts, const struct block *b)
{
	rvexec_fetch(&ts->mem, ts->counts, b, b->vaddr, b->end, b->l1i_lines);
}

static void mispredict(struct thread_state *ts, enum rvexec_count which)
{
	ts->counts[which]++;
	ts->counts[RVEXEC_CYCLES] += model->mispredict;
}

/* The previous block of this thread ended in a control transfer; `next` is where execution went. */
static inline __attribute__((always_inline)) void resolve(struct thread_state *ts, uint64_t next)
{
	struct pending_flow *p = &ts->pending;
	if (p->insn.flow == RVEXEC_FLOW_BRANCH) {
		bool taken = next != p->fallthrough;
		uint8_t *ctr = &ts->bht[(p->pc >> 1) & (model->bht - 1)];
		ts->counts[taken ? RVEXEC_BRANCH_TAKEN : RVEXEC_BRANCH_NOT_TAKEN]++;
		if ((*ctr >= 2) != taken)
			mispredict(ts, RVEXEC_BRANCH_DIR_MISPREDICT);
		if (taken && *ctr < 3)
			(*ctr)++;
		else if (!taken && *ctr > 0)
			(*ctr)--;
	} else if (p->insn.flow == RVEXEC_FLOW_JALR) {
		if (rvexec_is_return(&p->insn) && ts->ras_used > 0) {
			uint64_t predicted = ts->ras[ts->ras_top];
			ts->ras_top = (ts->ras_top + model->ras - 1) % model->ras;
			ts->ras_used--;
			if (predicted != next)
				mispredict(ts, RVEXEC_BRANCH_TARGET_MISPREDICT);
		} else {
			size_t i = (p->pc >> 1) & (model->btb - 1);
			if (ts->btb_pc[i] != p->pc + 1 || ts->btb_target[i] != next)
				mispredict(ts, RVEXEC_BRANCH_TARGET_MISPREDICT);
			ts->btb_pc[i] = p->pc + 1;
			ts->btb_target[i] = next;
		}
	}
	if (rvexec_is_call(&p->insn)) {
		ts->ras_top = (ts->ras_top + 1) % model->ras;
		ts->ras[ts->ras_top] = p->fallthrough;
		if (ts->ras_used < model->ras)
			ts->ras_used++;
	}
	p->insn.flow = RVEXEC_FLOW_NONE;
}

/* ---- the alarm (rvexec_shm.h) ---- */

#define COUNT_BIT(k) (1ull << (k))

/* The index of the instruction of block b at which its static counts (added at block start) make the
 * counters of `mask` grow by `need` (1-based): the need-th instruction, the need-th of its classes, the one
 * whose latency reaches it; b->ninsns when none does (calls and returns, penalties: the last instruction). */
static uint32_t block_index_of(const struct block *b, uint64_t mask, uint64_t need)
{
	uint64_t seen = 0;
	for (uint32_t i = 0; i < b->ninsns; i++) {
		unsigned c = b->insn[i].count;
		seen += (mask & COUNT_BIT(RVEXEC_INSTRET)) != 0;
		seen += (mask & COUNT_BIT(c)) != 0;
		if (mask & COUNT_BIT(RVEXEC_CYCLES))
			seen += model->latency[c - RVEXEC_FIRST_CLASS];
		if (seen >= need)
			return i;
	}
	return b->ninsns;
}

static uint64_t block_pc_at(const struct block *b, uint32_t i)
{
	return i < b->ninsns ? b->insn[i].pc : b->last_pc;
}

/* The latencies of instructions 0..i of block b: the modelled cycles from the block's start to i's retiring.
 */
static uint64_t block_latency_through(const struct block *b, uint32_t i)
{
	uint64_t sum = 0;
	for (uint32_t j = 0; j <= i && j < b->ninsns; j++)
		sum += model->latency[b->insn[j].count - RVEXEC_FIRST_CLASS];
	return sum;
}

/* Disarms the arming `armed` if it is still the slot's (a compare-and-swap on generation and signal) and
 * sends its signal; false if the guest re-armed or disarmed it meanwhile. */
static bool alarm_take(struct thread_state *ts, uint64_t armed)
{
	struct rvexec_slot *s = ts->slot;
	if (!__atomic_compare_exchange_n(&s->alarm_armed, &armed, armed & ~0xffffffffull, false,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return false;
	syscall(SYS_tgkill, getpid(), s->tid, (int)(uint32_t)armed);
	return true;
}

/* The armed alarm of the running thread, as one consistent arming: its word (0: none), its watches and
 * their sums before a step. */
struct alarm_watch {
	uint64_t armed;
	uint32_t skid; /* read with the fields, inside the sequence check */
	unsigned n;
	uint64_t mask[RVEXEC_ALARM_WATCHES], at[RVEXEC_ALARM_WATCHES], before[RVEXEC_ALARM_WATCHES];
	uint8_t index[RVEXEC_ALARM_WATCHES]; /* alarm_fired_watch of each */
};

static uint64_t watched_sum(const struct thread_state *ts, uint64_t mask)
{
	uint64_t sum = 0;
	for (uint64_t m = mask; m; m &= m - 1)
		sum += ts->counts[__builtin_ctzll(m)];
	return sum;
}

static void add_watch(struct alarm_watch *w, uint64_t mask, uint64_t at, unsigned index)
{
	if (!mask || (mask >> RVEXEC_NCOUNTS)) /* none, or a bad counter: never fires */
		return;
	w->mask[w->n] = mask;
	w->at[w->n] = at;
	w->index[w->n++] = (uint8_t)index;
}

/* Reads the arming as a sequence lock's reader (rvexec_shm.h): the word, the fields, the word again; an
 * arming being rewritten is skipped for this step (the next block sees it whole). */
static void alarm_watch(struct thread_state *ts, struct alarm_watch *w)
{
	struct rvexec_slot *s = ts->slot;
	w->n = 0;
	w->armed = __atomic_load_n(&s->alarm_armed, __ATOMIC_ACQUIRE);
	if (!(uint32_t)w->armed)
		return;
	if (ts->counts != s->counts[RVEXEC_MODE_USER]) { /* supervisor-mode work is not watched */
		w->armed = 0;
		return;
	}
	uint64_t mask = __atomic_load_n(&s->alarm_mask, __ATOMIC_RELAXED);
	uint32_t k = __atomic_load_n(&s->alarm_count, __ATOMIC_RELAXED);
	add_watch(w,
	          mask                 ? mask
	          : k < RVEXEC_NCOUNTS ? COUNT_BIT(k)
	                               : 0,
	          __atomic_load_n(&s->alarm_at, __ATOMIC_RELAXED), 0);
	for (unsigned i = 0; i < RVEXEC_ALARM_WATCHES - 1; i++)
		add_watch(w, __atomic_load_n(&s->alarm_more_mask[i], __ATOMIC_RELAXED),
		          __atomic_load_n(&s->alarm_more_at[i], __ATOMIC_RELAXED), i + 1);
	w->skid = __atomic_load_n(&s->alarm_skid, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->alarm_armed, __ATOMIC_RELAXED) != w->armed || w->n == 0) {
		w->armed = 0;
		return;
	}
	for (unsigned i = 0; i < w->n; i++)
		w->before[i] = watched_sum(ts, w->mask[i]);
}

/* A waiting skid: sends the signal once the user cycles reached skid_at. The instruction is the one whose
 * latency got there, for the block's static counts (b != NULL, its cycles before them `base`), else pc (a
 * penalty's or a data access's instruction). A re-arming since the watch was reached cancels it. */
static void skid_step(struct thread_state *ts, const struct block *b, uint64_t base, uint64_t pc)
{
	struct rvexec_slot *s = ts->slot;
	if (ts->counts != s->counts[RVEXEC_MODE_USER])
		return; /* supervisor-mode work is not the program's: no skid runs out in it */
	if (__atomic_load_n(&s->alarm_armed, __ATOMIC_ACQUIRE) != ts->skid_armed) {
		ts->skid_armed = 0;
		return;
	}
	if (ts->counts[RVEXEC_CYCLES] < ts->skid_at)
		return;
	uint64_t at = b && ts->skid_at > base
	                  ? block_pc_at(b, block_index_of(b, COUNT_BIT(RVEXEC_CYCLES), ts->skid_at - base))
	                  : pc;
	uint64_t armed = ts->skid_armed;
	ts->skid_armed = 0;
	__atomic_store_n(&s->alarm_pc, at, __ATOMIC_RELAXED); /* (before the signal: its handler reads it) */
	alarm_take(ts, armed);
}

/* After a step that may have added to the watched counters: if one reached its value, writes the instruction
 * (pc = the step's instruction, or for the block's static counts (b != NULL, the cycles before them `base`)
 * the exact one inside the block, the earliest of the watches reached) and its modelled cycle, then signals
 * now or after the skid. The arming fires only if it is still the slot's. */
static bool alarm_step(struct thread_state *ts, struct alarm_watch *w, const struct block *b, uint64_t pc,
                       uint64_t base)
{
	int fired = -1;
	uint32_t first = UINT32_MAX;
	for (unsigned i = 0; i < w->n; i++) {
		uint64_t now = watched_sum(ts, w->mask[i]);
		if (w->before[i] < w->at[i] && now >= w->at[i]) {
			uint32_t idx = b ? block_index_of(b, w->mask[i], w->at[i] - w->before[i]) : 0;
			if (fired < 0 || idx < first) {
				fired = (int)i;
				first = idx;
			}
		}
		w->before[i] = now;
	}
	if (fired < 0)
		return false;
	struct rvexec_slot *s = ts->slot;
	uint64_t cause = b ? block_pc_at(b, first) : pc;
	uint64_t cycles = b ? base + block_latency_through(b, first) : ts->counts[RVEXEC_CYCLES];
	uint32_t skid = w->skid;
	uint64_t armed = w->armed;
	w->armed = 0;
	w->n = 0;
	if (__atomic_load_n(&s->alarm_armed, __ATOMIC_ACQUIRE) != armed)
		return true; /* re-armed since this step began: the new arming is watched from the next step
		              */
	__atomic_store_n(&s->alarm_pc, cause, __ATOMIC_RELAXED);
	__atomic_store_n(&s->alarm_cycles, cycles, __ATOMIC_RELAXED);
	__atomic_store_n(&s->alarm_fired_watch, w->index[fired], __ATOMIC_RELAXED);
	__atomic_store_n(&s->alarm_fired_gen, armed >> 32, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->alarm_fired, 1, __ATOMIC_RELEASE);
	if (!skid) {
		alarm_take(ts, armed);
	} else {
		ts->skid_armed = armed;
		ts->skid_at = cycles + skid;
		skid_step(ts, b, base, pc);
	}
	return true;
}

/* ---- execution, continued ---- */

/* A block run with an alarm armed or a skid waiting: the step as block_exec()'s, with the watches checked
 * after each part (the branch resolved, the fetch, the block's static counts). */
static void __attribute__((noinline)) block_exec_watched(struct thread_state *ts, const struct block *b)
{
	struct alarm_watch w;
	alarm_watch(ts, &w);
	if (ts->pending.insn.flow != RVEXEC_FLOW_NONE) {
		uint64_t branch_pc = ts->pending.pc;
		resolve(ts, b->vaddr);
		if (w.armed)
			alarm_step(ts, &w, NULL, branch_pc, 0);
		if (ts->skid_armed)
			skid_step(ts, NULL, 0, branch_pc);
	}
	fetch(ts, b);
	if (w.armed)
		alarm_step(ts, &w, NULL, b->vaddr, 0);
	if (ts->skid_armed)
		skid_step(ts, NULL, 0, b->vaddr);
	uint64_t base = ts->counts[RVEXEC_CYCLES];
	for (uint32_t i = 0; i < b->nadds; i++)
		ts->counts[b->adds[i].count] += b->adds[i].n;
	if (w.armed)
		alarm_step(ts, &w, b, 0, base);
	if (ts->skid_armed)
		skid_step(ts, b, base, 0);
}

static void block_exec(unsigned int vcpu_index, void *udata)
{
	const struct block *b = udata;
	struct thread_state *ts = thread_state();
	uint32_t mode = __atomic_load_n(&ts->slot->mode, __ATOMIC_RELAXED);
	(void)vcpu_index;
	ts->counts = ts->slot->counts[mode < RVEXEC_NMODES ? mode : RVEXEC_MODE_USER];
	if (__builtin_expect((uint32_t)__atomic_load_n(&ts->slot->alarm_armed, __ATOMIC_RELAXED) != 0 ||
	                         ts->skid_armed,
	                     0)) {
		block_exec_watched(ts, b);
	} else {
		if (ts->pending.insn.flow != RVEXEC_FLOW_NONE)
			resolve(ts, b->vaddr);
		fetch(ts, b);
		for (uint32_t i = 0; i < b->nadds; i++)
			ts->counts[b->adds[i].count] += b->adds[i].n;
	}
	if (b->last.flow != RVEXEC_FLOW_NONE) {
		ts->pending.pc = b->last_pc;
		ts->pending.fallthrough = b->last_pc + b->last.length;
		ts->pending.insn = b->last;
	}
}

/* The data cache and TLB model for one access (rvexec_cache.h). */
static inline __attribute__((always_inline)) void data_access(struct thread_state *ts, uint64_t vaddr,
                                                              bool write)
{
	rvexec_data_access(&ts->mem, ts->counts, vaddr, write);
}

/* An access with its alarm armed: the model, then the watches. pc: the accessing instruction. */
static void __attribute__((noinline))
watched_access(struct thread_state *ts, uint64_t vaddr, bool write, uint64_t pc)
{
	struct alarm_watch w;
	alarm_watch(ts, &w);
	data_access(ts, vaddr, write);
	if (w.armed)
		alarm_step(ts, &w, NULL, pc, 0);
	if (ts->skid_armed)
		skid_step(ts, NULL, 0, pc);
}

/* One data access. */
static inline __attribute__((always_inline)) void one_access(uint64_t vaddr, bool write, void *udata)
{
	struct thread_state *ts = thread_state(); /* (ts->counts is set from the start) */
	if (__builtin_expect((uint32_t)__atomic_load_n(&ts->slot->alarm_armed, __ATOMIC_RELAXED) != 0, 0)) {
		watched_access(ts, vaddr, write, (uint64_t)(uintptr_t)udata);
		return;
	}
	data_access(ts, vaddr, write);
}

/* The memory callbacks, one per kind of instruction: a load's access is a read and a store's a write whatever
 * QEMU says (no call to ask it); an AMO, LR or SC asks. udata: the accessing instruction's address (the
 * alarm's pc). */
static void load_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	(void)vcpu_index, (void)info;
	one_access(vaddr, false, udata);
}

static void store_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	(void)vcpu_index, (void)info;
	one_access(vaddr, true, udata);
}

static void atomic_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	(void)vcpu_index;
	one_access(vaddr, qemu_plugin_mem_is_store(info), udata);
}

/* ---- translation ---- */

static void block_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint32_t per_count[RVEXEC_NCOUNTS] = {0};
	struct block *b = calloc(1, sizeof(*b) + n * sizeof(b->insn[0]));
	(void)id;
	if (!b) { /* a block left uncounted would make every count wrong without a word */
		fprintf(stderr, "rvexec: out of memory for a translated block\n");
		abort();
	}
	if (n == 0) {
		free(b);
		return;
	}
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct rvexec_insn d;
		rvexec_decode(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn), &d);
		b->insn[i].pc = qemu_plugin_insn_vaddr(insn);
		b->insn[i].count = d.count;
		per_count[d.count]++;
		per_count[RVEXEC_CYCLES] += model->latency[d.count - RVEXEC_FIRST_CLASS];
		switch (d.count) {
		case RVEXEC_INT_LOAD:
		case RVEXEC_FP_LOAD:
			qemu_plugin_register_vcpu_mem_cb(insn, load_access, QEMU_PLUGIN_CB_NO_REGS,
			                                 QEMU_PLUGIN_MEM_RW,
			                                 (void *)(uintptr_t)b->insn[i].pc);
			break;
		case RVEXEC_INT_STORE:
		case RVEXEC_FP_STORE:
			qemu_plugin_register_vcpu_mem_cb(insn, store_access, QEMU_PLUGIN_CB_NO_REGS,
			                                 QEMU_PLUGIN_MEM_RW,
			                                 (void *)(uintptr_t)b->insn[i].pc);
			break;
		case RVEXEC_AMO:
		case RVEXEC_LR:
		case RVEXEC_SC:
			qemu_plugin_register_vcpu_mem_cb(insn, atomic_access, QEMU_PLUGIN_CB_NO_REGS,
			                                 QEMU_PLUGIN_MEM_RW,
			                                 (void *)(uintptr_t)b->insn[i].pc);
			break;
		default:
			break;
		}
		if (i == n - 1) {
			b->last_pc = qemu_plugin_insn_vaddr(insn);
			b->last = d;
			b->end = b->last_pc + qemu_plugin_insn_size(insn);
			per_count[RVEXEC_CALL] += rvexec_is_call(&d);
			per_count[RVEXEC_RETURN] += rvexec_is_return(&d);
		}
	}
	per_count[RVEXEC_INSTRET] = (uint32_t)n;
	b->l1i_lines = rvexec_lines_spanned(l1i_line_shift, b->vaddr, b->end);
	b->ninsns = (uint32_t)n;
	for (unsigned c = 0; c < RVEXEC_NCOUNTS; c++) {
		if (per_count[c] == 0)
			continue;
		b->adds[b->nadds].count = (uint16_t)c;
		b->adds[b->nadds].n = per_count[c];
		b->nadds++;
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &inline_instret, n);
}

/* ---- threads, exit ---- */

static void syscall_entry(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1, uint64_t a2,
                          uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	enum { RISCV_NR_EXIT = 93, RISCV_NR_EXIT_GROUP = 94 };
	(void)id, (void)vcpu_index, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7,
	    (void)a8;
	if ((num == RISCV_NR_EXIT || num == RISCV_NR_EXIT_GROUP) && current)
		__atomic_store_n(&current->slot->state, RVEXEC_SLOT_EXITED, __ATOMIC_RELEASE);
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id, (void)userdata;
	if (!out_path)
		return;
	FILE *f = strcmp(out_path, "-") == 0 ? stderr : fopen(out_path, "w");
	if (!f) {
		fprintf(stderr, "rvexec: cannot write %s: %s\n", out_path, strerror(errno));
		return;
	}
	rvexec_print(f, shm);
	fprintf(f, "process pid=%u inline_instret=%" PRIu64 "\n", (unsigned)getpid(),
	        __atomic_load_n(&inline_instret, __ATOMIC_RELAXED));
	if (f != stderr)
		fclose(f);
}

/* ---- set-up ---- */

static int usage(const char *bad)
{
	fprintf(stderr,
	        "rvexec: bad plugin argument '%s'\n"
	        "rvexec: arguments: model=NAME (default sifive-u74), shm=PATH (the count file, default $%s;\n"
	        "rvexec:   without either, counts stay private), slots=N (threads, default %d; a new file "
	        "only),\n"
	        "rvexec:   out=PATH|- (a text summary at exit)\n",
	        bad, RVEXEC_SHM_ENV, RVEXEC_SLOTS_DEFAULT);
	return -1;
}

static int model_by_name(const char *name)
{
	for (int i = 0; i < RVEXEC_NMODELS; i++)
		if (strcmp(rvexec_models[i].name, name) == 0) {
			model = &rvexec_models[i];
			return 0;
		}
	fprintf(stderr, "rvexec: no execution model for '%s' (events/exec_models.csv has:", name);
	for (int i = 0; i < RVEXEC_NMODELS; i++)
		fprintf(stderr, " %s", rvexec_models[i].name);
	fprintf(stderr, ")\n");
	return -1;
}

static void header_init(struct rvexec_shm_header *h, uint32_t nslots)
{
	h->version = RVEXEC_SHM_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(struct rvexec_slot);
	h->nslots = nslots;
	h->ncounts = RVEXEC_NCOUNTS;
	h->freq_mhz = model->freq_mhz;
	snprintf(h->model, sizeof(h->model), "%s", model->name);
	h->writer_pid = (uint32_t)getpid();
	__atomic_store_n(&h->magic, RVEXEC_SHM_MAGIC, __ATOMIC_RELEASE);
}

/* Maps the count file, creating it (under an exclusive lock, so two processes do not both size it) or joining
 * one of the same model. */
static int shm_open_file(const char *path, uint32_t nslots)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	struct stat st;
	if (fd < 0) {
		fprintf(stderr, "rvexec: cannot open the count file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "rvexec: cannot lock %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : rvexec_shm_size(nslots);
	if (st.st_size == 0 && ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "rvexec: cannot size %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "rvexec: cannot map %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	shm = m;
	const char *bad = NULL;
	if (st.st_size == 0)
		header_init(shm, nslots);
	else if ((bad = rvexec_check_header(shm, size)) == NULL && strcmp(shm->model, model->name) != 0)
		bad = "written for another model";
	close(fd); /* also drops the lock; the mapping stays */
	if (bad) {
		fprintf(stderr, "rvexec: %s exists and is %s: remove it or name another (shm=)\n", path, bad);
		return -1;
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
	const char *model_name = "sifive-u74", *path = getenv(RVEXEC_SHM_ENV);
	unsigned long nslots = RVEXEC_SLOTS_DEFAULT;

	if (strcmp(info->target_name, "riscv64") != 0) {
		fprintf(stderr, "rvexec: this plugin models riscv64 code; qemu runs %s\n", info->target_name);
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		if (strncmp(a, "model=", 6) == 0)
			model_name = a + 6;
		else if (strncmp(a, "shm=", 4) == 0 && a[4])
			path = a + 4;
		else if (strncmp(a, "out=", 4) == 0 && a[4])
			out_path = strdup(a + 4);
		else if (strncmp(a, "slots=", 6) == 0) {
			errno = 0;
			nslots = strtoul(a + 6, &end, 10);
			if (errno || *end || nslots == 0 || nslots > 65536)
				return usage(a);
		} else
			return usage(a);
	}
	if (model_by_name(model_name) != 0)
		return -1;
	l1i_line_shift = rvexec_log2(model->l1i.line);
	if (path && *path) {
		if (shm_open_file(path, (uint32_t)nslots) != 0)
			return -1;
	} else {
		void *m = mmap(NULL, rvexec_shm_size((uint32_t)nslots), PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "rvexec: out of memory for %lu slots\n", nslots);
			return -1;
		}
		shm = m;
		header_init(shm, (uint32_t)nslots);
	}
	pthread_atfork(NULL, NULL, forget_thread_in_child);
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translate);
	qemu_plugin_register_vcpu_syscall_cb(id, syscall_entry);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
