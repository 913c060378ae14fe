// SPDX-License-Identifier: MIT
/*
 * Differential test of the exec-count plugin's memory-side models (plugin/rvexec_cache.c, the very code the
 * plugin links) against a deliberately plain reference written here from the documented semantics
 * (docs/exec-counts.md, "The models"):
 *   - a cache is, per set, a list of at most `ways` lines, most recently used first (true LRU); a read or a
 *     write-back write moves a hit to the front, a miss puts the line at the front and drops the last one
 *     (its victim; written back if dirty); a write dirties the line (write-back, write-allocate). A
 *     write-through L1D (no write-allocate): a store hit moves the line to the front and never dirties it, a
 *     store miss changes nothing and costs nothing;
 *   - the ITLB and DTLB are one such list of `entries` pages (fully associative LRU); a first-level miss
 *     looks in the UTLB (direct mapped: vpn mod utlb, replaced on a miss) and a UTLB miss is a page walk;
 *     without a UTLB every first-level miss is a page walk;
 *   - an L1D miss costs l2_hit cycles; its dirty victim is written to the L2 first (write-allocate there),
 *     then the line is read from the L2; an L2 miss costs `memory` cycles; without an L2 a refill costs
 *     `memory` cycles; an L1 TLB miss costs utlb_hit cycles and a page walk page_walk more;
 *   - a fetch of [vaddr, end) accesses each of its L1I lines (a miss: l2_hit cycles and an L2 read), then
 *     the ITLB for each of its pages.
 * Both are driven through the entry points the plugin's callbacks use (rvexec_data_access() with its
 * recent-line and recent-page shortcuts and lazy LRU sync, rvexec_fetch() with its same-block shortcut) on
 * random traces (seeded; the seed is printed) and adversarial ones, for every cache geometry of the plugin's
 * model table (events/models.csv's caches column joined with events/exec_models.csv by
 * gen/gen_exec_tables.py) under both L1D write policies, plus small geometries no table has (direct mapped,
 * 2-way, one set; 1- and 2-entry TLBs) where the shortcuts have special cases. After every access every
 * counter must be equal (so every hit, miss, write-back, page walk and cycle), and each write-back's victim;
 * at the end of each trace the contents, dirty bits and LRU order of every cache and TLB.
 *
 * Usage: test_cache_model [--seed N|random]   (default 2; random: from the clock, printed; seed 1 always
 * runs)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rvexec_cache.h"
#include "rvexec_tables.h"

#define NAME_OF(name, what) #name,
static const char *const count_names[RVEXEC_NCOUNTS] = {RVEXEC_COUNTS(NAME_OF)};

/* ---- the reference ---- */

struct ref_cache {
	uint32_t sets, ways, shift;
	uint64_t *line;  /* [set][k]: line numbers, most recent first */
	uint8_t *dirty;  /* [set][k] */
	uint32_t *count; /* lines held per set */
};

struct ref_result {
	bool hit, evicted, victim_dirty;
	uint64_t victim; /* the evicted line's address */
};

static unsigned shift_of(uint32_t v)
{
	unsigned s = 0;
	while ((1u << s) < v)
		s++;
	return s;
}

static void ref_cache_init(struct ref_cache *c, const struct rvexec_cache_geometry *g)
{
	c->sets = g->sets;
	c->ways = g->ways;
	c->shift = g->line ? shift_of(g->line) : 0;
	size_t n = (size_t)g->sets * g->ways;
	c->line = calloc(n ? n : 1, sizeof(*c->line));
	c->dirty = calloc(n ? n : 1, 1);
	c->count = calloc(g->sets ? g->sets : 1, sizeof(*c->count));
	if (!c->line || !c->dirty || !c->count) {
		fprintf(stderr, "test_cache_model: out of memory\n");
		exit(2);
	}
}

static void ref_cache_free(struct ref_cache *c)
{
	free(c->line);
	free(c->dirty);
	free(c->count);
}

/* write: the access writes; allocate: a miss brings the line in (false: a write-through store). */
static struct ref_result ref_cache_access(struct ref_cache *c, uint64_t addr, bool write, bool allocate,
                                          bool dirties)
{
	struct ref_result r = {0};
	uint64_t line = addr >> c->shift;
	uint32_t set = (uint32_t)(line % c->sets), n = c->count[set];
	uint64_t *l = &c->line[(size_t)set * c->ways];
	uint8_t *d = &c->dirty[(size_t)set * c->ways];
	uint32_t k = 0;
	while (k < n && l[k] != line)
		k++;
	bool dirty = write && dirties;
	if (k < n) { /* a hit: to the front */
		r.hit = true;
		dirty |= d[k];
	} else {
		if (!allocate)
			return r;
		if (n == c->ways) { /* full: the last is the victim */
			k = n - 1;
			r.evicted = true;
			r.victim = l[k] << c->shift;
			r.victim_dirty = d[k];
		} else {
			k = n;
			c->count[set]++;
		}
	}
	memmove(&l[1], &l[0], k * sizeof(*l));
	memmove(&d[1], &d[0], k);
	l[0] = line;
	d[0] = dirty;
	return r;
}

struct ref_tlb {
	uint32_t entries, n;
	uint64_t *vpn; /* most recent first */
};

static bool ref_tlb_access(struct ref_tlb *t, uint64_t vpn)
{
	uint32_t k = 0;
	while (k < t->n && t->vpn[k] != vpn)
		k++;
	bool hit = k < t->n;
	if (!hit) {
		if (t->n < t->entries)
			t->n++;
		k = t->n - 1;
	}
	memmove(&t->vpn[1], &t->vpn[0], k * sizeof(*t->vpn));
	t->vpn[0] = vpn;
	return hit;
}

struct ref_mem {
	const struct rvexec_model *model;
	struct ref_cache l1i, l1d, l2;
	struct ref_tlb itlb, dtlb;
	uint64_t *utlb; /* vpn + 1 */
	uint64_t counts[RVEXEC_NCOUNTS];
	uint64_t l1d_victim, l2_victim;
};

static void ref_init(struct ref_mem *r, const struct rvexec_model *m)
{
	memset(r, 0, sizeof(*r));
	r->model = m;
	ref_cache_init(&r->l1i, &m->l1i);
	ref_cache_init(&r->l1d, &m->l1d);
	ref_cache_init(&r->l2, &m->l2);
	r->itlb.entries = m->itlb;
	r->dtlb.entries = m->dtlb;
	r->itlb.vpn = calloc(m->itlb, sizeof(uint64_t));
	r->dtlb.vpn = calloc(m->dtlb, sizeof(uint64_t));
	r->utlb = calloc(m->utlb ? m->utlb : 1, sizeof(uint64_t));
	if (!r->itlb.vpn || !r->dtlb.vpn || !r->utlb) {
		fprintf(stderr, "test_cache_model: out of memory\n");
		exit(2);
	}
}

static void ref_free(struct ref_mem *r)
{
	ref_cache_free(&r->l1i);
	ref_cache_free(&r->l1d);
	ref_cache_free(&r->l2);
	free(r->itlb.vpn);
	free(r->dtlb.vpn);
	free(r->utlb);
}

static void ref_l2(struct ref_mem *r, uint64_t addr, bool write)
{
	if (r->model->l2.sets == 0) {
		if (!write)
			r->counts[RVEXEC_CYCLES] += r->model->memory;
		return;
	}
	r->counts[RVEXEC_L2_ACCESS]++;
	struct ref_result x = ref_cache_access(&r->l2, addr, write, true, true);
	if (!x.hit) {
		r->counts[RVEXEC_L2_MISS]++;
		r->counts[RVEXEC_L2_READ_MISS] += !write;
		r->counts[RVEXEC_CYCLES] += r->model->memory;
	}
	if (x.evicted && x.victim_dirty) {
		r->counts[RVEXEC_L2_WRITEBACK]++;
		r->l2_victim = x.victim;
	}
}

static void ref_tlb(struct ref_mem *r, struct ref_tlb *t, uint64_t vpn, enum rvexec_count miss)
{
	if (ref_tlb_access(t, vpn))
		return;
	r->counts[miss]++;
	r->counts[RVEXEC_CYCLES] += r->model->utlb_hit;
	uint64_t *e = &r->utlb[r->model->utlb ? vpn % r->model->utlb : 0];
	if (r->model->utlb == 0 || *e != vpn + 1) {
		*e = vpn + 1;
		r->counts[RVEXEC_UTLB_MISS]++;
		r->counts[RVEXEC_CYCLES] += r->model->page_walk;
	}
}

static unsigned page_shift_of(const struct rvexec_model *m)
{
	return shift_of(m->page_kib * 1024);
}

static void ref_data(struct ref_mem *r, uint64_t addr, bool write)
{
	bool through = r->model->l1d_write_through;
	ref_tlb(r, &r->dtlb, addr >> page_shift_of(r->model), RVEXEC_DTLB_MISS);
	r->counts[write ? RVEXEC_L1D_WRITE_ACCESS : RVEXEC_L1D_READ_ACCESS]++;
	struct ref_result x = ref_cache_access(&r->l1d, addr, write, !(write && through), !through);
	if (x.hit)
		return;
	r->counts[write ? RVEXEC_L1D_WRITE_MISS : RVEXEC_L1D_READ_MISS]++;
	if (write && through)
		return; /* the write buffer takes it */
	r->counts[RVEXEC_CYCLES] += r->model->l2_hit;
	if (x.evicted && x.victim_dirty) {
		r->counts[RVEXEC_L1D_WRITEBACK]++;
		r->l1d_victim = x.victim;
		ref_l2(r, x.victim, true);
	}
	ref_l2(r, addr, false);
}

static void ref_fetch(struct ref_mem *r, uint64_t vaddr, uint64_t end)
{
	for (uint64_t a = vaddr >> r->l1i.shift; a <= (end - 1) >> r->l1i.shift; a++) {
		r->counts[RVEXEC_L1I_ACCESS]++;
		if (!ref_cache_access(&r->l1i, a << r->l1i.shift, false, true, true).hit) {
			r->counts[RVEXEC_L1I_MISS]++;
			r->counts[RVEXEC_CYCLES] += r->model->l2_hit;
			ref_l2(r, a << r->l1i.shift, false);
		}
	}
	unsigned ps = page_shift_of(r->model);
	for (uint64_t p = vaddr >> ps; p <= (end - 1) >> ps; p++)
		ref_tlb(r, &r->itlb, p, RVEXEC_ITLB_MISS);
}

/* ---- traces ---- */

enum op_kind { OP_READ, OP_WRITE, OP_FETCH };
struct op {
	enum op_kind kind;
	uint64_t addr, end; /* a fetch: the block [addr, end) */
	uint32_t block;     /* a fetch: which block (the same block always has the same range) */
};

struct trace {
	const char *name;
	struct op *ops;
	size_t n, cap;
};

static void add(struct trace *t, enum op_kind kind, uint64_t addr)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->ops = realloc(t->ops, t->cap * sizeof(*t->ops));
		if (!t->ops) {
			fprintf(stderr, "test_cache_model: out of memory\n");
			exit(2);
		}
	}
	t->ops[t->n++] = (struct op){kind, addr, 0, 0};
}

#define NBLOCKS 48
struct block_range {
	uint64_t vaddr, end;
};

static void add_fetch(struct trace *t, const struct block_range *blocks, uint32_t b)
{
	add(t, OP_FETCH, blocks[b].vaddr);
	t->ops[t->n - 1].end = blocks[b].end;
	t->ops[t->n - 1].block = b;
}

static uint64_t rng_state;
static uint64_t rnd(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}
static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* The geometry a trace aims at. */
struct aim {
	uint64_t line, sets, ways, page, tlb;
};

static enum op_kind rw(unsigned write_percent)
{
	return below(100) < write_percent ? OP_WRITE : OP_READ;
}

/* Random: a working set of `lines` lines around a base, with reuse of the last few addresses (the recent
 * shortcuts), accesses to the previous one's set (conflicts), page-crossing neighbours and block fetches. */
static void random_trace(struct trace *t, const struct aim *a, const struct block_range *blocks, size_t n,
                         uint64_t lines, unsigned write_percent)
{
	uint64_t base = 0x10000000 + below(64) * a->page, last[4] = {base, base, base, base};
	for (size_t i = 0; i < n; i++) {
		uint64_t r = below(100), addr;
		if (r < 8) {
			add_fetch(t, blocks, (uint32_t)below(NBLOCKS));
			continue;
		} else if (r < 40) { /* one of the last four: the recent pair and its neighbours */
			addr = last[below(4)] + below(a->line);
		} else if (r < 60) { /* the set of the previous access */
			addr = last[0] + (below(2 * a->ways + 1) - a->ways) * a->sets * a->line;
		} else if (r < 68) { /* across a page boundary */
			addr = last[0] - last[0] % a->page + a->page - a->line + below(2 * a->line);
		} else {
			addr = base + below(lines) * a->line + below(a->line);
		}
		add(t, rw(write_percent), addr);
		memmove(&last[1], &last[0], 3 * sizeof(last[0]));
		last[0] = addr;
	}
}

/* Adversarial sequences for the geometry (each comment says which shortcut or boundary it aims at). */
static void adversarial_trace(struct trace *t, const struct aim *a, const struct block_range *blocks)
{
	uint64_t set_stride = a->sets * a->line, base = 0x40000000;
	/* same-set conflicts at exactly `ways` lines (all hits once warm) and at ways + 1 (LRU: all misses),
	 * reads, then writes (dirty victims) */
	for (uint64_t extra = 0; extra <= 1; extra++)
		for (int round = 0; round < 6; round++)
			for (uint64_t k = 0; k < a->ways + extra; k++)
				add(t, round >= 3 ? OP_WRITE : OP_READ, base + k * set_stride + 8 * extra);
	/* the two recent lines alternated, in one set, then ways-1 new lines in it: the LRU order of the pair
	 * lives only in the recent pair (lazy sync) when the set fills; then the pair again */
	for (int rep = 0; rep < 4; rep++) {
		uint64_t s = base + (uint64_t)(rep + 1) * a->line + 0x100000;
		for (uint64_t k = 0; k < a->ways; k++)
			add(t, OP_READ, s + k * set_stride);
		for (int i = 0; i < 5 + rep; i++) {
			add(t, i % 3 == 0 ? OP_WRITE : OP_READ, s);
			add(t, OP_READ, s + set_stride);
		}
		for (uint64_t k = 0; k + 1 < a->ways; k++)
			add(t, OP_READ, s + (a->ways + 1 + k) * set_stride);
		add(t, OP_READ, s);
		add(t, OP_READ, s + set_stride);
		add(t, OP_READ, s + 2 * set_stride);
	}
	/* recent[1] made recent[0] and back, then a third line of the set (2-way: the pair is the set) */
	for (int rep = 0; rep < 8; rep++) {
		uint64_t s = base + 0x200000 + (uint64_t)rep * a->line;
		add(t, OP_READ, s);
		add(t, OP_WRITE, s + set_stride);
		add(t, OP_READ, s);
		if (rep & 1)
			add(t, OP_WRITE, s + set_stride);
		add(t, OP_READ, s + 2 * set_stride);
		add(t, OP_READ, s);
		add(t, OP_READ, s + set_stride);
	}
	/* a recent line evicted while recent (direct mapped: two lines of one set evict each other), with
	 * writes: dirty victims from the recent pair */
	for (int i = 0; i < 16; i++) {
		add(t, (i & 1) ? OP_WRITE : OP_READ, base + 0x300000);
		add(t, (i & 2) ? OP_WRITE : OP_READ, base + 0x300000 + set_stride);
		add(t, OP_READ, base + 0x300000 + 2 * a->line);
	}
	/* writes to a recent line, then its eviction by ways + 1 other lines of its set: a dirty victim */
	for (int rep = 0; rep < 3; rep++) {
		uint64_t x = base + 0x400000 + (uint64_t)rep * 3 * a->line, y = x + a->line;
		add(t, OP_READ, x);
		add(t, OP_READ, y);
		add(t, OP_WRITE, x); /* recent[1] written */
		add(t, OP_WRITE, y);
		add(t, OP_WRITE, x);
		for (uint64_t k = 1; k <= a->ways + 1; k++)
			add(t, OP_READ, x + k * set_stride);
		add(t, OP_READ, y);
		add(t, OP_READ, x);
	}
	/* page boundaries: the last bytes of a page and the first of the next, three pages in turn (the
	 * recent pages and a third), and an access that itself straddles the boundary */
	for (uint64_t p = 0; p < 8; p++) {
		uint64_t edge = base + 0x800000 + (p + 1) * a->page;
		add(t, OP_READ, edge - 8);
		add(t, OP_WRITE, edge);
		add(t, OP_READ, edge - 4);
		add(t, OP_READ, edge + a->page);
		add(t, OP_WRITE, edge - 1);
		add(t, OP_READ, edge + 2 * a->page - a->line);
		add(t, OP_READ, edge);
	}
	/* TLB thrash at entries + 1 pages (LRU: every access misses), then at entries (hits once warm), each
	 * page touched with one of two hot pages in between (recent pages swapping); pages 1, 64 and 2^20
	 * pages apart */
	static const uint64_t strides[] = {1, 64, 1u << 20};
	for (unsigned si = 0; si < sizeof(strides) / sizeof(strides[0]); si++)
		for (int extra = 1; extra >= 0; extra--)
			for (int round = 0; round < 4; round++)
				for (uint64_t k = 0; k < a->tlb + (uint64_t)extra; k++) {
					uint64_t page = base + 0x10000000 + k * strides[si] * a->page;
					add(t, OP_READ, page + (k % 7) * a->line);
					if (round & 1)
						add(t, k & 1 ? OP_WRITE : OP_READ,
						    base + 0x20000000 + (k & 1) * a->page);
				}
	/* fetches: a block again right after itself (the same-block shortcut), two blocks in turn, and every
	 * block once (blocks cross lines and pages) */
	for (uint32_t b = 0; b < NBLOCKS; b++) {
		add_fetch(t, blocks, b);
		add_fetch(t, blocks, b);
		add(t, OP_READ, blocks[b].vaddr);
		add_fetch(t, blocks, b);
		add_fetch(t, blocks, (b + 1) % NBLOCKS);
		add_fetch(t, blocks, b);
	}
}

/* Blocks of 4..256 bytes, some crossing a line or a page, in a few pages and in lines of one I-cache set. */
static void make_blocks(struct block_range *blocks, const struct aim *i_aim)
{
	for (uint32_t b = 0; b < NBLOCKS; b++) {
		uint64_t v;
		switch (b % 4) {
		case 0: /* across a page boundary */
			v = 0x400000 + (b + 1) * i_aim->page - 2 * below(16);
			break;
		case 1: /* in one I-cache set */
			v = 0x500000 + (b / 4) * i_aim->sets * i_aim->line + 2 * below(8);
			break;
		default:
			v = 0x600000 + 2 * below(64 * 1024);
			break;
		}
		blocks[b].vaddr = v;
		blocks[b].end = v + 4 + 2 * below(127);
	}
}

/* ---- the comparison ---- */

struct config {
	char name[96];
	struct rvexec_model model;
};

static unsigned long long total_accesses;
static uint64_t current_seed;
/* the blocks' identities for rvexec_fetch(), as the plugin's are its struct block */
static const char block_ids[NBLOCKS];

static int fail(const struct config *c, const struct trace *t, size_t i, const char *what)
{
	const struct op *o = &t->ops[i];
	printf("test_cache_model: FAIL %s, trace %s, seed %" PRIu64 ", access #%zu (%s 0x%" PRIx64 "): %s\n",
	       c->name, t->name, current_seed, i,
	       o->kind == OP_FETCH   ? "fetch"
	       : o->kind == OP_WRITE ? "write"
	                             : "read",
	       o->addr, what);
	return 1;
}

/* Each set's lines, most recent first as the cache's order has them (after the lazy sync), and their dirty
 * bits, against the reference's. */
static int compare_cache(const struct rvexec_cache *c, const struct ref_cache *r, char *why, size_t len,
                         const char *level)
{
	for (uint32_t set = 0; set < r->sets; set++) {
		size_t base = (size_t)set * c->ways;
		for (uint32_t k = 0; k < c->ways; k++) {
			size_t i = base + c->order[base + k];
			bool want = k < r->count[set];
			uint64_t line = want ? r->line[(size_t)set * r->ways + k] : 0;
			if (!want && c->tag[i] == 0)
				continue;
			if (!want || c->tag[i] != line + 1 ||
			    c->dirty[i] != r->dirty[(size_t)set * r->ways + k]) {
				snprintf(why, len,
				         "%s set %u, most recent #%u: the model has line 0x%" PRIx64
				         " (dirty %u), the "
				         "reference %s0x%" PRIx64 " (dirty %u)",
				         level, set, k, c->tag[i] ? (c->tag[i] - 1) << c->line_shift : 0,
				         c->dirty[i], want ? "" : "none ", line << r->shift,
				         want ? r->dirty[(size_t)set * r->ways + k] : 0);
				return 1;
			}
		}
	}
	return 0;
}

/* The TLB's pages, most recent first as its list has them, against the reference's. */
static int compare_tlb(const struct rvexec_tlb *t, const struct ref_tlb *r, char *why, size_t len,
                       const char *level)
{
	uint32_t k = 0;
	for (uint16_t e = t->head; e != RVEXEC_TLB_NONE && k <= t->entries; e = t->next[e], k++) {
		bool want = k < r->n;
		if (!want && t->vpn[e] == 0)
			continue;
		if (!want || t->vpn[e] != r->vpn[k] + 1) {
			snprintf(why, len,
			         "%s, most recent #%u: the model has page 0x%" PRIx64
			         ", the reference %s0x%" PRIx64,
			         level, k, t->vpn[e] ? t->vpn[e] - 1 : 0, want ? "" : "none ",
			         want ? r->vpn[k] : 0);
			return 1;
		}
	}
	if (k != t->entries) {
		snprintf(why, len, "%s: the LRU list holds %u entries, not %u", level, k, t->entries);
		return 1;
	}
	return 0;
}

static int run(const struct config *c, const struct trace *t)
{
	struct rvexec_mem m;
	struct ref_mem r;
	uint64_t counts[RVEXEC_NCOUNTS] = {0};
	char why[256];
	int rc = 0;
	if (rvexec_mem_init(&m, &c->model) != 0) {
		fprintf(stderr, "test_cache_model: out of memory\n");
		exit(2);
	}
	ref_init(&r, &c->model);
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const struct op *o = &t->ops[i];
		uint64_t writebacks = counts[RVEXEC_L1D_WRITEBACK],
		         l2_writebacks = counts[RVEXEC_L2_WRITEBACK];
		if (o->kind == OP_FETCH) {
			rvexec_fetch(&m, counts, &block_ids[o->block], o->addr, o->end,
			             rvexec_lines_spanned(m.l1i.line_shift, o->addr, o->end));
			ref_fetch(&r, o->addr, o->end);
		} else {
			rvexec_data_access(&m, counts, o->addr, o->kind == OP_WRITE);
			ref_data(&r, o->addr, o->kind == OP_WRITE);
		}
		total_accesses++;
		size_t used = 0;
		why[0] = 0;
		for (unsigned k = 0; k < RVEXEC_NCOUNTS; k++)
			if (counts[k] != r.counts[k] && used < sizeof(why))
				used += (size_t)snprintf(why + used, sizeof(why) - used,
				                         "%s%s is %" PRIu64 ", the reference's %" PRIu64,
				                         used ? "; " : "", count_names[k], counts[k],
				                         r.counts[k]);
		if (used)
			rc = fail(c, t, i, why);
		if (rc == 0 && counts[RVEXEC_L1D_WRITEBACK] != writebacks && m.l1d_victim != r.l1d_victim) {
			snprintf(why, sizeof(why), "L1D victim 0x%" PRIx64 ", the reference's 0x%" PRIx64,
			         m.l1d_victim, r.l1d_victim);
			rc = fail(c, t, i, why);
		}
		if (rc == 0 && counts[RVEXEC_L2_WRITEBACK] != l2_writebacks && m.l2_victim != r.l2_victim) {
			snprintf(why, sizeof(why), "L2 victim 0x%" PRIx64 ", the reference's 0x%" PRIx64,
			         m.l2_victim, r.l2_victim);
			rc = fail(c, t, i, why);
		}
	}
	if (rc == 0) { /* the final state: the recorded LRU order once the lazy sync has run */
		rvexec_l1d_sync(&m);
		rvexec_dtlb_sync(&m);
		if (compare_cache(&m.l1d, &r.l1d, why, sizeof(why), "L1D") ||
		    compare_cache(&m.l1i, &r.l1i, why, sizeof(why), "L1I") ||
		    (c->model.l2.sets && compare_cache(&m.l2, &r.l2, why, sizeof(why), "L2")) ||
		    compare_tlb(&m.dtlb, &r.dtlb, why, sizeof(why), "DTLB") ||
		    compare_tlb(&m.itlb, &r.itlb, why, sizeof(why), "ITLB"))
			rc = fail(c, t, t->n - 1, why);
	}
	rvexec_mem_free(&m);
	ref_free(&r);
	return rc;
}

/* ---- the configurations ---- */

#define MAX_CONFIGS 64
static struct config configs[MAX_CONFIGS];
static unsigned nconfigs;

static void add_config(const struct rvexec_model *m, const char *what)
{
	if (nconfigs == MAX_CONFIGS) {
		fprintf(stderr, "test_cache_model: more than %d configurations\n", MAX_CONFIGS);
		exit(2);
	}
	struct config *c = &configs[nconfigs++];
	c->model = *m;
	snprintf(c->name, sizeof(c->name),
	         "%s (L1D %ux%ux%u %s, L1I %ux%ux%u, L2 %ux%ux%u, DTLB %u, UTLB %u)", what, m->l1d.sets,
	         m->l1d.ways, m->l1d.line, m->l1d_write_through ? "write-through" : "write-back", m->l1i.sets,
	         m->l1i.ways, m->l1i.line, m->l2.sets, m->l2.ways, m->l2.line, m->dtlb, m->utlb);
}

static bool same_geometry(const struct rvexec_cache_geometry *a, const struct rvexec_cache_geometry *b)
{
	return a->sets == b->sets && a->ways == b->ways && a->line == b->line;
}

/* Every model as the table has it; every distinct geometry of the table as L1D and L1I under both write
 * policies (on the first model's other sizes); and small geometries no table has. */
static void make_configs(void)
{
	struct rvexec_cache_geometry geo[3 * RVEXEC_NMODELS];
	unsigned ngeo = 0;
	for (unsigned i = 0; i < RVEXEC_NMODELS; i++) {
		const struct rvexec_model *m = &rvexec_models[i];
		add_config(m, m->name);
		const struct rvexec_cache_geometry *levels[] = {&m->l1i, &m->l1d, &m->l2};
		for (unsigned l = 0; l < 3; l++) {
			bool seen = levels[l]->sets == 0;
			for (unsigned k = 0; k < ngeo && !seen; k++)
				seen = same_geometry(&geo[k], levels[l]);
			if (!seen)
				geo[ngeo++] = *levels[l];
		}
	}
	for (unsigned k = 0; k < ngeo; k++)
		for (unsigned through = 0; through <= 1; through++) {
			struct rvexec_model m = rvexec_models[0];
			m.l1d = m.l1i = geo[k];
			m.l1d_write_through = through;
			add_config(&m, "table geometry");
		}
	static const struct {
		struct rvexec_cache_geometry l1;
		uint32_t dtlb, utlb;
		bool l2;
	} small[] = {
	    {{64, 1, 64}, 1, 0, true}, /* direct mapped; a one-entry TLB; no UTLB */
	    {{16, 2, 16}, 2, 4, true}, /* 2-way: the recent pair can be a whole set; a two-entry TLB */
	    {{1, 4, 32}, 3, 8, false}, /* one set (fully associative); no L2 */
	    {{4, 1, 16}, 2, 0, false}, /* direct mapped, tiny */
	    {{2, 2, 64}, 1, 2, true},  /* 2-way, two sets */
	};
	for (unsigned k = 0; k < sizeof(small) / sizeof(small[0]); k++)
		for (unsigned through = 0; through <= 1; through++) {
			struct rvexec_model m = rvexec_models[0];
			m.l1d = m.l1i = small[k].l1;
			m.dtlb = m.itlb = small[k].dtlb;
			m.utlb = small[k].utlb;
			m.l1d_write_through = through;
			if (!small[k].l2) {
				m.l2 = (struct rvexec_cache_geometry){0, 0, 0};
			} else { /* a small L2, so it evicts and writes back */
				m.l2 =
				    (struct rvexec_cache_geometry){small[k].l1.sets * 2, 2, small[k].l1.line};
			}
			add_config(&m, "small geometry");
		}
}

int main(int argc, char **argv)
{
	/* fixed by default, so a run's verdict is the code's (make check, CI); --seed random explores */
	uint64_t seed = 2;
	for (int i = 1; i < argc; i++) {
		char *end;
		if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc && strcmp(argv[i + 1], "random") == 0) {
			seed = (uint64_t)time(NULL);
			i++;
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], &end, 0);
			if (*end || seed == 0) {
				fprintf(stderr, "test_cache_model: --seed takes a nonzero number, got '%s'\n",
				        argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: test_cache_model [--seed N|random]\n");
			return 2;
		}
	}
	make_configs();
	uint64_t seeds[2] = {1, seed};
	unsigned ntraces = 0;
	for (unsigned s = 0; s < (seed == 1 ? 1u : 2u); s++) {
		current_seed = seeds[s];
		printf("test_cache_model: seed %" PRIu64 " (rerun with --seed %" PRIu64 ")\n", seeds[s],
		       seeds[s]);
		for (unsigned ci = 0; ci < nconfigs; ci++) {
			const struct config *c = &configs[ci];
			const struct rvexec_model *m = &c->model;
			rng_state = seeds[s] * 0x9e3779b97f4a7c15ull + ci + 1;
			struct aim d = {m->l1d.line, m->l1d.sets, m->l1d.ways, (uint64_t)m->page_kib * 1024,
			                m->dtlb};
			struct aim i_aim = {m->l1i.line, m->l1i.sets, m->l1i.ways, d.page, m->itlb};
			struct block_range blocks[NBLOCKS];
			make_blocks(blocks, &i_aim);
			uint64_t cache_lines = d.sets * d.ways;
			/* working sets: fits the L1D; about the L1D; several times it and many pages */
			const struct {
				const char *name;
				uint64_t lines;
				unsigned write_percent;
			} kinds[] = {{"random-fits", cache_lines / 2 + 1, 30},
			             {"random-edge", cache_lines + cache_lines / 8 + 1, 40},
			             {"random-large", 4 * cache_lines + 4 * d.tlb * d.page / d.line, 25},
			             {"random-writes", cache_lines * 2, 80}};
			for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
				struct trace t = {kinds[k].name, NULL, 0, 0};
				random_trace(&t, &d, blocks, 40000, kinds[k].lines, kinds[k].write_percent);
				int rc = run(c, &t);
				free(t.ops);
				ntraces++;
				if (rc)
					return 1;
			}
			if (s ==
			    0) { /* the adversarial traces do not depend on the seed but for the blocks */
				struct trace t = {"adversarial", NULL, 0, 0};
				adversarial_trace(&t, &d, blocks);
				int rc = run(c, &t);
				free(t.ops);
				ntraces++;
				if (rc)
					return 1;
			}
		}
	}
	printf("test_cache_model: %llu accesses on %u geometries (%u traces), every hit/miss/victim equal\n",
	       total_accesses, nconfigs, ntraces);
	return 0;
}
