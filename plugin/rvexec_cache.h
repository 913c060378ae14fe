/* SPDX-License-Identifier: MIT */
/*
 * The memory-side models of the exec-count plugin (docs/exec-counts.md, "The models"): a hart's L1I, L1D and
 * L2 caches, its ITLB, DTLB and UTLB, and how an instruction fetch or a data access moves them and the
 * counters. No QEMU here: the plugin (rvexec.c) and the host-side differential test
 * (tests/exec/test_cache_model.c) link this same code, so the test checks what the plugin runs.
 *
 * Caches: set-associative, true LRU, write-back and write-allocate (or, for the L1D, write-through and no
 * write-allocate). TLBs: fully associative LRU; the UTLB direct mapped.
 *
 * Speed shortcuts (each is exact: the differential test compares every access with a plain reference):
 *  - a set's most recently used way (the front of its order) is tried first; a line -> place hint (a
 *    direct-mapped guess, checked against the tag) finds most other hits without scanning the set; a TLB
 *    finds a page by an exact hash and its least recently used entry at the end of a list, without a scan;
 *  - rvexec_data_access() keeps the two L1D lines and the two pages accessed last (recent[], recent_vpn[]):
 *    an access to one of them is a hit found inline, and the LRU order it implies is written to the arrays
 *    lazily (rvexec_l1d_sync(), rvexec_dtlb_sync()) before the next lookup;
 *  - rvexec_fetch(): a block fetched again right after itself is all hits.
 */
#ifndef RVEXEC_CACHE_H
#define RVEXEC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rvexec_shm.h"

struct rvexec_model;          /* rvexec_tables.h */
struct rvexec_cache_geometry; /* rvexec_tables.h */

/* Tags are line numbers + 1 (0 = invalid). The LRU order is kept per set as the list of its ways, most
 * recently used first: a hit moves its way to the front, a miss takes the last way (invalid ways are never
 * moved, so they stay at the end and are taken first). A few bytes per set, no clock: the host caches hold
 * more of a large model (an L2's sets) than with a 64-bit time stamp per way. */
struct rvexec_cache {
	uint32_t ways, line_shift, set_mask;
	uint64_t *tag;  /* [set][way] */
	uint8_t *dirty; /* [set][way] */
	uint8_t *order; /* [set][k]: the set's ways, most recently used first */
	/* line -> its place when last looked up, direct mapped: a guess checked against the tag, so a hit in
	 * another way than the set's most recent is found without scanning the set */
	uint32_t hint[1024];
};

enum rvexec_cache_result { RVEXEC_CACHE_HIT, RVEXEC_CACHE_MISS, RVEXEC_CACHE_MISS_WRITEBACK };

/* Fully associative, LRU: a doubly linked list of the entries, most recently used first (invalid entries at
 * the end), and an exact hash of the valid pages (vpn -> entry), so neither a hit nor a miss scans the
 * entries. */
struct rvexec_tlb {
	uint32_t entries, hash_bits;
	uint64_t *vpn;            /* [entry]: vpn + 1, 0 = invalid */
	uint16_t *prev, *next;    /* [entry]: the LRU list's neighbours (RVEXEC_TLB_NONE at its ends) */
	uint16_t head, tail;      /* the most and the least recently used entry */
	uint16_t *bucket, *chain; /* hash of vpn -> first entry, entry -> next of its bucket (or NONE) */
};
#define RVEXEC_TLB_NONE UINT16_MAX

/* One hart's memory-side models and the state of their shortcuts. */
struct rvexec_mem {
	const struct rvexec_model *model;
	unsigned page_shift;
	bool l1d_write_through; /* model->l1d_write_through */
	struct rvexec_cache l1i, l1d, l2;
	struct rvexec_tlb itlb, dtlb;
	uint64_t *utlb;           /* direct mapped, vpn + 1 */
	const void *last_fetched; /* the block rvexec_fetch() fetched last */
	/* The two L1D lines accessed last (line + 1, 0 = none) and their places; whether the cache's
	 * recorded LRU order lags behind them (rvexec_l1d_sync()). */
	struct {
		uint64_t line;
		size_t where;
	} recent[2];
	/* The two pages accessed last (vpn + 1, 0 = none), their DTLB entries, and whether the DTLB's
	 * recorded order lags behind them (rvexec_dtlb_sync()). */
	uint64_t recent_vpn[2];
	uint32_t recent_entry[2];
	bool l1d_unsynced, dtlb_unsynced;
	/* the dirty line the last L1D (L2) write-back evicted: for the tests, never read here */
	uint64_t l1d_victim, l2_victim;
};

/* Sets up m for model (every level cold). -1: out of memory (m is then freed). */
int rvexec_mem_init(struct rvexec_mem *m, const struct rvexec_model *model);
void rvexec_mem_free(struct rvexec_mem *m);

/* Accesses the line holding addr; *victim gets the evicted dirty line's address on
 * RVEXEC_CACHE_MISS_WRITEBACK, *where the line's place in the arrays. */
enum rvexec_cache_result rvexec_cache_access(struct rvexec_cache *c, uint64_t addr, bool write,
                                             uint64_t *victim, size_t *where);
/* Whether vpn was in the TLB; a miss puts it in place of the least recently used entry. *entry: its entry
 * (the most recently used now). */
bool rvexec_tlb_access(struct rvexec_tlb *t, uint64_t vpn, uint32_t *entry);

/* The slow paths of rvexec_fetch() and rvexec_data_access(). */
void rvexec_fetch_lookup(struct rvexec_mem *m, uint64_t *counts, const void *block, uint64_t vaddr,
                         uint64_t end);
void rvexec_dtlb_lookup(struct rvexec_mem *m, uint64_t *counts, uint64_t vpn);
void rvexec_l1d_lookup(struct rvexec_mem *m, uint64_t *counts, uint64_t vaddr, uint64_t line, bool write);
/* Brings the recorded LRU order up to date with the recent lines (pages); a lookup does it first. */
void rvexec_l1d_sync(struct rvexec_mem *m);
void rvexec_dtlb_sync(struct rvexec_mem *m);

/* The smallest s with 1 << s >= v (a power of two's log2). */
unsigned rvexec_log2(uint32_t v);

/* The lines of 1 << line_shift bytes that [vaddr, end) spans (a block's `lines` for rvexec_fetch()). */
static inline uint32_t rvexec_lines_spanned(unsigned line_shift, uint64_t vaddr, uint64_t end)
{
	return (uint32_t)(((end - 1) >> line_shift) - (vaddr >> line_shift) + 1);
}

/*
 * The instruction fetch of a block [vaddr, end) of `lines` L1I lines: one L1I access per line, then the ITLB
 * per page, into counts (enum rvexec_count). `block` names the block: one fetched again right after itself
 * (a loop in one block) finds its lines and pages where it left them, most recently used: all hits, and
 * touching them again keeps the LRU order as it is.
 */
static inline __attribute__((always_inline)) void rvexec_fetch(struct rvexec_mem *m, uint64_t *counts,
                                                               const void *block, uint64_t vaddr,
                                                               uint64_t end, uint32_t lines)
{
	if (m->last_fetched == block)
		counts[RVEXEC_L1I_ACCESS] += lines;
	else
		rvexec_fetch_lookup(m, counts, block, vaddr, end);
}

/*
 * One data access (a read, or a write) at vaddr: the DTLB, then the L1D (and on a miss the L2), into counts.
 * An access to one of the two lines (pages) accessed last is a hit found without a lookup. A hit on recent[0]
 * leaves the LRU order as it is; one on recent[1] swaps the pair and leaves the order to the pair alone: then
 * the model's LRU state is the cache's (TLB's) recorded one with recent[1] and then recent[0] made the most
 * recent, and the lookups make it so first (rvexec_l1d_sync, rvexec_dtlb_sync). Right after a lookup the
 * recorded order is the model's (the looked-up line is the most recent, the one before it was when it was
 * looked up or synced).
 */
static inline __attribute__((always_inline)) void rvexec_data_access(struct rvexec_mem *m, uint64_t *counts,
                                                                     uint64_t vaddr, bool write)
{
	uint64_t vpn = vaddr >> m->page_shift, line = vaddr >> m->l1d.line_shift;
	if (vpn + 1 != m->recent_vpn[0]) {
		if (vpn + 1 == m->recent_vpn[1]) {
			uint32_t e = m->recent_entry[1];
			m->recent_vpn[1] = m->recent_vpn[0];
			m->recent_entry[1] = m->recent_entry[0];
			m->recent_vpn[0] = vpn + 1;
			m->recent_entry[0] = e;
			m->dtlb_unsynced = true;
		} else {
			rvexec_dtlb_lookup(m, counts, vpn);
		}
	}
	counts[write ? RVEXEC_L1D_WRITE_ACCESS : RVEXEC_L1D_READ_ACCESS]++;
	/* a write-through store hit only updates the line (no dirty bit); a write-back one dirties it */
	bool dirties = write && !m->l1d_write_through;
	if (line + 1 == m->recent[0].line) {
		if (dirties)
			m->l1d.dirty[m->recent[0].where] = 1;
	} else if (line + 1 == m->recent[1].line) {
		size_t where = m->recent[1].where;
		if (dirties)
			m->l1d.dirty[where] = 1;
		m->recent[1] = m->recent[0];
		m->recent[0].line = line + 1;
		m->recent[0].where = where;
		m->l1d_unsynced = true;
	} else {
		rvexec_l1d_lookup(m, counts, vaddr, line, write);
	}
}

#endif
