// SPDX-License-Identifier: MIT
/*
 * The memory-side models of the exec-count plugin: caches, TLBs and the slow paths of a fetch and a data
 * access (rvexec_cache.h says what is modelled and which shortcuts the fast paths take). Shared by the plugin
 * and tests/exec/test_cache_model.c; nothing of QEMU.
 */
#include "rvexec_cache.h"

#include <stdlib.h>
#include <string.h>

#include "rvexec_tables.h"

unsigned rvexec_log2(uint32_t v)
{
	unsigned s = 0;
	while ((1u << s) < v)
		s++;
	return s;
}

static int cache_init(struct rvexec_cache *c, const struct rvexec_cache_geometry *g)
{
	size_t n = (size_t)g->sets * g->ways;
	memset(c, 0, sizeof(*c)); /* hint place 0: a guess like any other */
	if (n == 0)               /* a level the machine does not have (no L2): never accessed */
		return 0;
	if (g->ways > 256) /* the order holds a way in a byte */
		return -1;
	c->ways = g->ways;
	c->line_shift = rvexec_log2(g->line);
	c->set_mask = g->sets - 1;
	c->tag = calloc(n, sizeof(*c->tag));
	c->dirty = calloc(n, 1);
	c->order = calloc(n + 8, 1); /* + 8: order_to_front()'s last word */
	if (!c->tag || !c->dirty || !c->order)
		return -1;
	for (size_t i = 0; i < n; i++)
		c->order[i] = (uint8_t)(i % g->ways);
	return 0;
}

static void cache_free(struct rvexec_cache *c)
{
	free(c->tag);
	free(c->dirty);
	free(c->order);
	c->tag = NULL;
	c->dirty = c->order = NULL;
}

/* Moves the way at position k (> 0) of a set's order to the front: positions [0, k) move up one. Eight at a
 * time from the top, the last (at most 7, with the front) in one 64-bit word: the order array has 8 bytes of
 * room past its end for that word. A byte loop (or GCC's memmove() call for it) was most of the instructions
 * of a miss in a 16-way set. */
static inline void order_to_front(uint8_t *order, size_t k)
{
	uint8_t way = order[k];
	/* a little-endian host: the word below holds position i in its byte i */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t j = k;
	for (; j >= 8; j -= 8) {
		uint64_t chunk;
		memcpy(&chunk, order + j - 8, 8);
		memcpy(order + j - 7, &chunk, 8);
	}
	uint64_t word, moved;
	memcpy(&word, order, 8);
	/* bytes [1, j] take [0, j); [j + 1, 8) stay (j <= 7) */
	moved = j == 7 ? ~0ull : (1ull << (8 * (j + 1))) - 1;
	word = (word & ~moved) | ((word << 8) & moved) | way;
	memcpy(order, &word, 8);
#else /* a big-endian host, or one that does not say: one byte at a time */
	for (; k > 0; k--)
		order[k] = order[k - 1];
	order[0] = way;
#endif
}

/* Makes `way` (not the front one) the set's most recently used. */
static inline void way_to_front(uint8_t *order, uint32_t way)
{
	size_t k = 1;
	while (order[k] != way)
		k++;
	order_to_front(order, k);
}

/* The way of the set's tags[0, ways) holding want, or ways: four ways a test, so a scan that misses (most of
 * an L2's lookups under a pointer chase, a fifth of the model's instructions there) takes a quarter of the
 * branches. */
static inline size_t find_way(const uint64_t *tags, size_t ways, uint64_t want)
{
	size_t w = 0;
	for (; w + 4 <= ways; w += 4)
		if ((tags[w] == want) | (tags[w + 1] == want) | (tags[w + 2] == want) | (tags[w + 3] == want))
			break;
	while (w < ways && tags[w] != want)
		w++;
	return w;
}

enum rvexec_cache_result rvexec_cache_access(struct rvexec_cache *c, uint64_t addr, bool write,
                                             uint64_t *victim, size_t *where)
{
	uint64_t line = addr >> c->line_shift;
	size_t set = (size_t)(line & c->set_mask), base = set * c->ways;
	uint8_t *order = c->order + base;
	if (c->tag[base + order[0]] == line + 1) { /* the most recent: the order stays */
		c->dirty[base + order[0]] |= write;
		*where = base + order[0];
		return RVEXEC_CACHE_HIT;
	}
	uint32_t *hint = &c->hint[line % (sizeof(c->hint) / sizeof(c->hint[0]))];
	size_t i = *hint;
	if (c->tag[i] !=
	    line + 1) { /* the guess is wrong (a line lives only in its own set: a right guess is in it) */
		i = find_way(c->tag + base, c->ways, line + 1) + base;
		if (i == base + c->ways) { /* a miss: the least recently used way */
			enum rvexec_cache_result r = RVEXEC_CACHE_MISS;
			i = base + order[c->ways - 1];
			if (c->tag[i] && c->dirty[i]) {
				*victim = (c->tag[i] - 1) << c->line_shift;
				r = RVEXEC_CACHE_MISS_WRITEBACK;
			}
			c->tag[i] = line + 1;
			c->dirty[i] = write;
			if (c->ways > 1)
				order_to_front(order, c->ways - 1);
			*hint = (uint32_t)i;
			*where = i;
			return r;
		}
		*hint = (uint32_t)i;
	}
	c->dirty[i] |= write;
	way_to_front(order, (uint32_t)(i - base));
	*where = i;
	return RVEXEC_CACHE_HIT;
}

/* A write-through, no-write-allocate store: a hit makes the line the most recent (it is updated, never
 * dirty), a miss leaves the cache as it is. Returns whether it hit; *where is the line's place on a hit. */
static bool cache_write_through(struct rvexec_cache *c, uint64_t addr, size_t *where)
{
	uint64_t line = addr >> c->line_shift;
	size_t set = (size_t)(line & c->set_mask), base = set * c->ways;
	for (size_t i = base; i < base + c->ways; i++)
		if (c->tag[i] == line + 1) {
			if (c->order[base] != i - base)
				way_to_front(c->order + base, (uint32_t)(i - base));
			*where = i;
			return true;
		}
	return false;
}

/* Makes the line at `where` (resident) its set's most recently used, as a hit in rvexec_cache_access()
 * would. */
static void cache_touch(struct rvexec_cache *c, uint64_t line, size_t where)
{
	size_t base = (size_t)(line & c->set_mask) * c->ways;
	if (c->order[base] != where - base)
		way_to_front(c->order + base, (uint32_t)(where - base));
}

static int tlb_init(struct rvexec_tlb *t, uint32_t entries)
{
	memset(t, 0, sizeof(*t));
	if (entries == 0 || entries >= RVEXEC_TLB_NONE)
		return -1;
	t->entries = entries;
	/* 16 buckets an entry (at most 2^16: 128 KiB): a miss both looks its page up and unlinks the evicted
	 * entry from its bucket, and with 2 an entry a pointer chase's random pages made chains long enough
	 * that these walks were most of a DTLB miss (14.2 ns a miss on the U74's 40 entries against 8.6 ns
	 * now, 2048 random pages; the same counts). */
	t->hash_bits = rvexec_log2(16 * entries);
	if (t->hash_bits > 16)
		t->hash_bits = 16;
	size_t buckets = (size_t)1 << t->hash_bits;
	t->vpn = calloc(entries, sizeof(*t->vpn));
	t->prev = malloc(entries * sizeof(*t->prev));
	t->next = malloc(entries * sizeof(*t->next));
	t->chain = malloc(entries * sizeof(*t->chain));
	t->bucket = malloc(buckets * sizeof(*t->bucket));
	if (!t->vpn || !t->prev || !t->next || !t->chain || !t->bucket)
		return -1;
	for (uint32_t i = 0; i < entries; i++) { /* any order: every entry is invalid */
		t->prev[i] = i ? (uint16_t)(i - 1) : RVEXEC_TLB_NONE;
		t->next[i] = i + 1 < entries ? (uint16_t)(i + 1) : RVEXEC_TLB_NONE;
	}
	t->head = 0;
	t->tail = (uint16_t)(entries - 1);
	memset(t->bucket, 0xff, buckets * sizeof(*t->bucket));
	return 0;
}

static void tlb_free(struct rvexec_tlb *t)
{
	free(t->vpn);
	free(t->prev);
	free(t->next);
	free(t->chain);
	free(t->bucket);
	t->vpn = NULL;
	t->prev = t->next = t->chain = t->bucket = NULL;
}

static inline size_t tlb_hash(const struct rvexec_tlb *t, uint64_t vpn)
{
	return (size_t)((vpn * 0x9e3779b97f4a7c15ull) >> (64 - t->hash_bits));
}

/* Makes entry e the most recently used. */
static void tlb_touch(struct rvexec_tlb *t, uint32_t e)
{
	if (t->head == e)
		return;
	uint16_t p = t->prev[e], n = t->next[e]; /* e is not the head: p exists */
	t->next[p] = n;
	if (n != RVEXEC_TLB_NONE)
		t->prev[n] = p;
	else
		t->tail = p;
	t->prev[e] = RVEXEC_TLB_NONE;
	t->next[e] = t->head;
	t->prev[t->head] = (uint16_t)e;
	t->head = (uint16_t)e;
}

bool rvexec_tlb_access(struct rvexec_tlb *t, uint64_t vpn, uint32_t *entry)
{
	uint16_t *link = &t->bucket[tlb_hash(t, vpn)];
	for (uint16_t e = *link; e != RVEXEC_TLB_NONE; e = t->chain[e])
		if (t->vpn[e] == vpn + 1) {
			tlb_touch(t, e);
			*entry = e;
			return true;
		}
	uint16_t e = t->tail; /* the least recently used, or an invalid entry */
	if (t->vpn[e]) {      /* out of its bucket */
		uint16_t *l = &t->bucket[tlb_hash(t, t->vpn[e] - 1)];
		while (*l != e)
			l = &t->chain[*l];
		*l = t->chain[e];
	}
	t->vpn[e] = vpn + 1;
	t->chain[e] = *link;
	*link = e;
	tlb_touch(t, e);
	*entry = e;
	return false;
}

int rvexec_mem_init(struct rvexec_mem *m, const struct rvexec_model *model)
{
	memset(m, 0, sizeof(*m));
	m->model = model;
	m->page_shift = rvexec_log2(model->page_kib * 1024);
	m->l1d_write_through = model->l1d_write_through != 0;
	m->utlb = calloc(model->utlb ? model->utlb : 1, sizeof(*m->utlb));
	if (!m->utlb || cache_init(&m->l1i, &model->l1i) || cache_init(&m->l1d, &model->l1d) ||
	    cache_init(&m->l2, &model->l2) || tlb_init(&m->itlb, model->itlb) ||
	    tlb_init(&m->dtlb, model->dtlb)) {
		rvexec_mem_free(m);
		return -1;
	}
	return 0;
}

void rvexec_mem_free(struct rvexec_mem *m)
{
	cache_free(&m->l1i);
	cache_free(&m->l1d);
	cache_free(&m->l2);
	tlb_free(&m->itlb);
	tlb_free(&m->dtlb);
	free(m->utlb);
	m->utlb = NULL;
}

/* An L1 miss (or write-back) reaching the L2; without an L2 it goes to memory. */
static void charge_l2(struct rvexec_mem *m, uint64_t *counts, uint64_t addr, bool write)
{
	uint64_t victim;
	size_t where;
	if (!m->model->l2.sets) { /* no L2: the L1 miss goes to memory */
		if (!write)
			counts[RVEXEC_CYCLES] += m->model->memory;
		return;
	}
	counts[RVEXEC_L2_ACCESS]++;
	enum rvexec_cache_result r = rvexec_cache_access(&m->l2, addr, write, &victim, &where);
	if (r != RVEXEC_CACHE_HIT) {
		counts[RVEXEC_L2_MISS]++;
		if (!write) /* a refill; a write-back that misses allocates (write-allocate) */
			counts[RVEXEC_L2_READ_MISS]++;
		counts[RVEXEC_CYCLES] += m->model->memory;
	}
	if (r == RVEXEC_CACHE_MISS_WRITEBACK) {
		counts[RVEXEC_L2_WRITEBACK]++;
		m->l2_victim = victim;
	}
}

/* An L1 TLB miss looks in the UTLB; a UTLB miss is a page walk. Without a UTLB (utlb 0) every L1 TLB miss
 * is a page walk, counted as a UTLB miss. */
static void charge_tlb_miss(struct rvexec_mem *m, uint64_t *counts, uint64_t vpn, enum rvexec_count which)
{
	const struct rvexec_model *model = m->model;
	uint64_t *e = &m->utlb[model->utlb ? vpn & (model->utlb - 1) : 0];
	/* without a branch on the outcome: a pointer chase misses the UTLB on 3 hops in 4, at random */
	uint64_t walk = !model->utlb || *e != vpn + 1;
	*e = vpn + 1;
	counts[which]++;
	counts[RVEXEC_UTLB_MISS] += walk;
	counts[RVEXEC_CYCLES] += model->utlb_hit + (model->page_walk & -walk);
}

void rvexec_fetch_lookup(struct rvexec_mem *m, uint64_t *counts, const void *block, uint64_t vaddr,
                         uint64_t end)
{
	uint64_t first = vaddr >> m->l1i.line_shift, last = (end - 1) >> m->l1i.line_shift;
	uint64_t first_page = vaddr >> m->page_shift, last_page = (end - 1) >> m->page_shift;
	uint64_t sets = (uint64_t)m->l1i.set_mask + 1;
	uint32_t entry;
	/* a fetch of this block right after it is all hits (rvexec_fetch()) only if its own lines and pages
	 * do not evict each other: at most `ways` of its lines in a set, at most `entries` pages (a cache or
	 * TLB far smaller than any table's, but then the shortcut would be wrong) */
	m->last_fetched = (last - first) / sets + 1 <= m->l1i.ways && last_page - first_page < m->itlb.entries
	                      ? block
	                      : NULL;
	for (uint64_t line = first; line <= last; line++) {
		uint64_t victim;
		size_t where;
		counts[RVEXEC_L1I_ACCESS]++;
		if (rvexec_cache_access(&m->l1i, line << m->l1i.line_shift, false, &victim, &where) !=
		    RVEXEC_CACHE_HIT) {
			counts[RVEXEC_L1I_MISS]++;
			counts[RVEXEC_CYCLES] += m->model->l2_hit;
			charge_l2(m, counts, line << m->l1i.line_shift, false);
		}
	}
	for (uint64_t page = first_page; page <= last_page; page++)
		if (!rvexec_tlb_access(&m->itlb, page, &entry))
			charge_tlb_miss(m, counts, page, RVEXEC_ITLB_MISS);
}

void rvexec_l1d_sync(struct rvexec_mem *m)
{
	if (!m->l1d_unsynced)
		return;
	m->l1d_unsynced = false;
	for (int i = 1; i >= 0; i--)
		if (m->recent[i].line)
			cache_touch(&m->l1d, m->recent[i].line - 1, m->recent[i].where);
}

void rvexec_dtlb_sync(struct rvexec_mem *m)
{
	if (!m->dtlb_unsynced)
		return;
	m->dtlb_unsynced = false;
	for (int i = 1; i >= 0; i--)
		if (m->recent_vpn[i])
			tlb_touch(&m->dtlb, m->recent_entry[i]);
}

/* `line` (at `where`) was just looked up: it becomes recent[0], the previous one recent[1]. The previous line
 * stays in the cache (it is the second most recent of its set now, and a miss evicts the least recent),
 * unless the cache is direct mapped and both lines share the set. */
static void recent_push(struct rvexec_mem *m, uint64_t line, size_t where)
{
	m->recent[1] = m->recent[0];
	if (m->l1d.ways == 1 && (((m->recent[1].line - 1) ^ line) & m->l1d.set_mask) == 0)
		m->recent[1].line = 0;
	m->recent[0].line = line + 1;
	m->recent[0].where = where;
}

void rvexec_dtlb_lookup(struct rvexec_mem *m, uint64_t *counts, uint64_t vpn)
{
	uint32_t entry;
	rvexec_dtlb_sync(m);
	if (!rvexec_tlb_access(&m->dtlb, vpn, &entry))
		charge_tlb_miss(m, counts, vpn, RVEXEC_DTLB_MISS);
	/* the previous page stays in the TLB (a miss evicts the least recent) unless it has one entry */
	m->recent_vpn[1] = m->dtlb.entries > 1 ? m->recent_vpn[0] : 0;
	m->recent_entry[1] = m->recent_entry[0];
	m->recent_vpn[0] = vpn + 1;
	m->recent_entry[0] = entry;
}

void rvexec_l1d_lookup(struct rvexec_mem *m, uint64_t *counts, uint64_t vaddr, uint64_t line, bool write)
{
	uint64_t victim;
	size_t where;
	rvexec_l1d_sync(m);
	if (write && m->l1d_write_through) {
		/* the store goes on to memory through the write buffer (no cycles charged); a hit also
		 * updates the line, a miss leaves the cache as it is */
		if (cache_write_through(&m->l1d, vaddr, &where))
			recent_push(m, line, where);
		else
			counts[RVEXEC_L1D_WRITE_MISS]++;
		return;
	}
	enum rvexec_cache_result r = rvexec_cache_access(&m->l1d, vaddr, write, &victim, &where);
	recent_push(m, line, where);
	if (r == RVEXEC_CACHE_HIT)
		return;
	counts[write ? RVEXEC_L1D_WRITE_MISS : RVEXEC_L1D_READ_MISS]++;
	counts[RVEXEC_CYCLES] += m->model->l2_hit;
	if (r == RVEXEC_CACHE_MISS_WRITEBACK) {
		counts[RVEXEC_L1D_WRITEBACK]++;
		m->l1d_victim = victim;
		charge_l2(m, counts, victim, true);
	}
	charge_l2(m, counts, vaddr, false);
}
