/* SPDX-License-Identifier: MIT */
/* Aggregation for rvprof (report.h). Functions are keyed by "comm\tmodule\tname" so equal names in two
 * modules (or commands) stay apart; stacks by their folded form behind "comm;". The command is shown only
 * when there is more than one. */
#include "report.h"
#include "rvsample.h"
#include "symbols.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	char *key;
	uint64_t count;
};

struct counts {
	struct slot *slots;
	size_t cap, n;
};

struct prof_report {
	struct prof_symbols *syms;
	int stacks;
	uint64_t samples;
	struct counts funcs, folded, comms;
	char comm[64]; /* of the samples being added, without ';', '\t' or newlines */
	struct prof_entry *entries;
	char **labels; /* storage behind entries */
	size_t nentries;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int counts_add(struct counts *c, const char *key, uint64_t n)
{
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct slot *s = calloc(cap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->slots[i].key)
				continue;
			size_t j = hash(c->slots[i].key) % cap;
			while (s[j].key)
				j = (j + 1) % cap;
			s[j] = c->slots[i];
		}
		free(c->slots);
		c->slots = s;
		c->cap = cap;
	}
	size_t j = hash(key) % c->cap;
	while (c->slots[j].key) {
		if (strcmp(c->slots[j].key, key) == 0) {
			c->slots[j].count += n;
			return 0;
		}
		j = (j + 1) % c->cap;
	}
	c->slots[j].key = strdup(key);
	if (!c->slots[j].key)
		return -ENOMEM;
	c->slots[j].count = n;
	c->n++;
	return 0;
}

static void counts_free(struct counts *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->slots[i].key);
	free(c->slots);
}

struct prof_report *prof_report_new(struct prof_symbols *syms, int stacks)
{
	struct prof_report *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->syms = syms;
	r->stacks = stacks;
	return r;
}

/* A frame's label for folded output: no ';' (the frame separator) and no newline. */
static void folded_label(const struct prof_sym *sym, char *buf, size_t len)
{
	prof_sym_label(sym, buf, len);
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n' || *p == '\r')
			*p = '_';
}

void prof_report_set_process(struct prof_report *r, struct prof_symbols *syms, const char *comm)
{
	r->syms = syms;
	snprintf(r->comm, sizeof(r->comm), "%s", comm ? comm : "");
	for (char *p = r->comm; *p; p++)
		if (*p == ';' || *p == '\t' || *p == '\n' || *p == '\r')
			*p = '_';
}

size_t prof_report_commands(const struct prof_report *r)
{
	return r->comms.n;
}

int prof_report_add(struct prof_report *r, const struct rvsample_record *rec)
{
	struct prof_sym sym;
	char key[1024], label[512];
	prof_symbols_resolve(r->syms, rec->pc, &sym);
	prof_sym_label(&sym, label, sizeof(label));
	snprintf(key, sizeof(key), "%s\t%s\t%s", r->comm, sym.path ? sym.module : "", label);
	int rc = counts_add(&r->funcs, key, 1);
	if (rc == 0)
		rc = counts_add(&r->comms, r->comm, 1);
	if (rc < 0)
		return rc;
	r->samples++;

	/* folded: root first. frames[0] is the sampled PC; the others are return addresses, so the call is
	 * the instruction before (pc - 1 stays inside the calling function even after a noreturn call). */
	char stack[RVSAMPLE_MAX_FRAMES * 128 + 96];
	uint32_t nf = r->stacks ? rec->nframes : 0;
	if (nf > RVSAMPLE_MAX_FRAMES)
		nf = RVSAMPLE_MAX_FRAMES;
	int at = snprintf(stack, sizeof(stack), "%s;", r->comm);
	size_t base = at > 0 ? (size_t)at : 0;
	if (nf == 0) {
		folded_label(&sym, stack + base, sizeof(stack) - base);
	} else {
		size_t len = base;
		for (uint32_t i = nf; i-- > 0;) {
			struct prof_sym fs;
			prof_symbols_resolve(r->syms, i == 0 ? rec->frames[0] : rec->frames[i] - 1, &fs);
			char fl[128];
			folded_label(&fs, fl, sizeof(fl));
			int w = snprintf(stack + len, sizeof(stack) - len, "%s%s", len > base ? ";" : "", fl);
			if (w < 0 || (size_t)w >= sizeof(stack) - len)
				break;
			len += (size_t)w;
		}
	}
	return counts_add(&r->folded, stack, 1);
}

uint64_t prof_report_samples(const struct prof_report *r)
{
	return r->samples;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct prof_entry *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->comm, y->comm);
}

static void clear_entries(struct prof_report *r)
{
	for (size_t i = 0; i < r->nentries; i++)
		free(r->labels[i]);
	free(r->labels);
	free(r->entries);
	r->labels = NULL;
	r->entries = NULL;
	r->nentries = 0;
}

static const struct prof_entry *entries(struct prof_report *r, const struct counts *c, int funcs, size_t *n)
{
	clear_entries(r);
	*n = 0;
	r->entries = calloc(c->n ? c->n : 1, sizeof(*r->entries));
	r->labels = calloc(c->n ? c->n : 1, sizeof(*r->labels));
	if (!r->entries || !r->labels)
		return NULL;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->slots[i].key)
			continue;
		char *k = strdup(c->slots[i].key);
		if (!k)
			break;
		r->labels[r->nentries] = k;
		struct prof_entry *e = &r->entries[r->nentries++];
		e->samples = c->slots[i].count;
		/* the command: the key's first field, shown only when there are several */
		char *sep = strchr(k, funcs ? '\t' : ';');
		*sep = 0;
		e->comm = r->comms.n > 1 ? k : sep;
		char *rest = sep + 1;
		if (r->comms.n > 1 && !funcs) {
			*sep = ';'; /* folded: the command is the root frame */
			rest = k;
		}
		if (funcs) {
			char *tab = strchr(rest, '\t');
			*tab = 0;
			e->module = rest;
			e->name = tab + 1;
		} else {
			e->name = rest;
		}
	}
	qsort(r->entries, r->nentries, sizeof(*r->entries), cmp_entry);
	*n = r->nentries;
	return r->entries;
}

const struct prof_entry *prof_report_functions(struct prof_report *r, size_t *n)
{
	return entries(r, &r->funcs, 1, n);
}

const struct prof_entry *prof_report_stacks(struct prof_report *r, size_t *n)
{
	return entries(r, &r->folded, 0, n);
}

static void bar(FILE *out, double share, int width)
{
	int full = (int)(share * width + 0.5);
	for (int i = 0; i < width; i++)
		fputc(i < full ? '#' : ' ', out);
}

void prof_report_print(struct prof_report *r, FILE *out, size_t top, int bar_width)
{
	size_t n;
	const struct prof_entry *e = prof_report_functions(r, &n);
	if (!e || r->samples == 0) {
		fprintf(out, "\nno samples\n");
		return;
	}
	size_t shown = top && top < n ? top : n;
	fprintf(out, "\nhot functions (%zu of %zu, by samples):\n", shown, n);
	int commands = r->comms.n > 1;
	fprintf(out, "%10s %7s  %-*s  %s%s\n", "samples", "%", bar_width, "", commands ? "command: " : "",
	        "function (module)");
	for (size_t i = 0; i < shown; i++) {
		double share = (double)e[i].samples / (double)r->samples;
		fprintf(out, "%10llu %6.2f%%  ", (unsigned long long)e[i].samples, 100.0 * share);
		bar(out, share, bar_width);
		fprintf(out, "  %s%s", e[i].comm, commands ? ": " : "");
		if (e[i].module[0] && strncmp(e[i].name, "[unknown]", 9) != 0)
			fprintf(out, "%s (%s)\n", e[i].name, e[i].module);
		else
			fprintf(out, "%s\n", e[i].name);
	}
	if (shown < n) {
		uint64_t rest = 0;
		for (size_t i = shown; i < n; i++)
			rest += e[i].samples;
		fprintf(out, "%10llu %6.2f%%  %-*s  (%zu more functions)\n", (unsigned long long)rest,
		        100.0 * (double)rest / (double)r->samples, bar_width, "", n - shown);
	}
	if (!r->stacks)
		return;
	e = prof_report_stacks(r, &n);
	if (!e)
		return;
	shown = top && top < n ? top : n;
	fprintf(out, "\ntop call stacks (%zu of %zu, caller > callee):\n", shown, n);
	for (size_t i = 0; i < shown; i++) {
		fprintf(out, "%10llu %6.2f%%  ", (unsigned long long)e[i].samples,
		        100.0 * (double)e[i].samples / (double)r->samples);
		for (const char *p = e[i].name; *p; p++) {
			if (*p == ';')
				fputs(" > ", out);
			else
				fputc(*p, out);
		}
		fputc('\n', out);
	}
}

int prof_report_write_folded(struct prof_report *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	size_t n;
	const struct prof_entry *e = prof_report_stacks(r, &n);
	int err = e ? 0 : -ENOMEM;
	for (size_t i = 0; e && i < n; i++)
		if (fprintf(f, "%s %llu\n", e[i].name, (unsigned long long)e[i].samples) < 0 && !err)
			err = -errno;
	if (fflush(f) != 0 && !err)
		err = -errno;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

void prof_report_free(struct prof_report *r)
{
	if (!r)
		return;
	clear_entries(r);
	counts_free(&r->funcs);
	counts_free(&r->folded);
	counts_free(&r->comms);
	free(r);
}
