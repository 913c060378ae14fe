/* SPDX-License-Identifier: MIT */
/* The flame graph writer of rvprof (flamegraph.h). The stacks are ordered frame by frame, so that stacks
 * sharing their first frames are neighbours; walking them left to right, a frame stays open while the next
 * stack has the same callers and is drawn when a stack leaves it, from where it opened to where it closed. */
#include "flamegraph.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	IMAGE_WIDTH = 1200, /* pixels, the whole run */
	SIDE = 10,          /* margin left and right */
	TOP = 44,           /* the title above the frames */
	FRAME_HEIGHT = 16,  /* one call depth */
	CHAR_WIDTH = 7,     /* of the 12-pixel monospace labels, for fitting them into their box */
};

struct frame {
	const char *name;
	size_t len;
	uint64_t start; /* samples left of the frame */
};

struct graph {
	FILE *f;
	uint64_t total;
	size_t depth_max;
	double scale; /* pixels per sample */
};

/* ';' (the frame separator) and the end of the stack sort below every other character: a stack comes right
 * before the stacks that extend it, and "a;b" and its callees are never split by a frame named "b!" */
static int frame_char(char c)
{
	return c == '\0' ? 0 : c == ';' ? 1 : (unsigned char)c + 2;
}

static int cmp_stack(const void *a, const void *b)
{
	const char *x = (*(const struct prof_entry *const *)a)->name;
	const char *y = (*(const struct prof_entry *const *)b)->name;
	for (;; x++, y++) {
		int d = frame_char(*x) - frame_char(*y);
		if (d || !*x)
			return d;
	}
}

static void xml_text(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}

/* A warm colour from the name, so a function has the same colour wherever it appears. */
static void colour(const char *name, size_t len, unsigned rgb[3])
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	rgb[0] = 205 + h % 50;
	rgb[1] = 80 + (h >> 8) % 150;
	rgb[2] = 30 + (h >> 16) % 50;
}

static void draw(struct graph *g, const struct frame *fr, size_t depth, uint64_t end)
{
	uint64_t samples = end - fr->start;
	double x = SIDE + (double)fr->start * g->scale, w = (double)samples * g->scale;
	double y = TOP + (double)(g->depth_max - depth) * FRAME_HEIGHT; /* the root at the bottom */
	unsigned rgb[3];
	colour(fr->name, fr->len, rgb);
	fputs("<g><title>", g->f);
	xml_text(g->f, fr->name, fr->len);
	fprintf(g->f, " (%llu samples, %.2f%%)</title>", (unsigned long long)samples,
	        100.0 * (double)samples / (double)g->total);
	fprintf(g->f,
	        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
	        x, y, w, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	/* the label if at least three characters fit, shortened with ".." when the name does not */
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_WIDTH) : 0;
	if (fit >= 3) {
		fprintf(g->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
		if (fr->len <= fit) {
			xml_text(g->f, fr->name, fr->len);
		} else {
			xml_text(g->f, fr->name, fit - 2);
			fputs("..", g->f);
		}
		fputs("</text>", g->f);
	}
	fputs("</g>\n", g->f);
}

static size_t frames_of(const char *stack)
{
	size_t n = 1;
	for (; *stack; stack++)
		n += *stack == ';';
	return n;
}

int prof_flamegraph_write(const struct prof_entry *stacks, size_t n, const char *title, const char *path)
{
	struct graph g = {NULL, 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		g.total += stacks[i].samples;
		size_t depth = frames_of(stacks[i].name) - 1;
		if (depth > g.depth_max)
			g.depth_max = depth;
	}
	if (g.total == 0)
		return -EINVAL;
	const struct prof_entry **order = malloc(n * sizeof(*order));
	struct frame *open = calloc(g.depth_max + 1, sizeof(*open));
	if (!order || !open) {
		free(order);
		free(open);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = &stacks[i];
	qsort(order, n, sizeof(*order), cmp_stack);
	g.f = fopen(path, "w");
	if (!g.f) {
		int err = -errno;
		free(order);
		free(open);
		return err;
	}
	g.scale = (double)(IMAGE_WIDTH - 2 * SIDE) / (double)g.total;
	size_t height = TOP + (g.depth_max + 1) * FRAME_HEIGHT + SIDE;
	fprintf(g.f,
	        "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	        "<svg version=\"1.1\" width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" "
	        "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" font-size=\"12\">\n"
	        "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,240)\"/>\n"
	        "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">",
	        IMAGE_WIDTH, height, IMAGE_WIDTH, height, IMAGE_WIDTH / 2);
	xml_text(g.f, title, strlen(title));
	fprintf(g.f,
	        "</text>\n<text x=\"%d\" y=\"38\" text-anchor=\"middle\">%llu samples; callers below, "
	        "callees above; "
	        "width: share of the samples (hover for counts)</text>\n",
	        IMAGE_WIDTH / 2, (unsigned long long)g.total);
	uint64_t x = 0;
	size_t nopen = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = order[i]->name;
		size_t depth = 0;
		while (1) {
			size_t len = strcspn(p, ";");
			if (depth < nopen &&
			    (open[depth].len != len || memcmp(open[depth].name, p, len) != 0)) {
				/* this stack leaves the open frames from here up: draw them, callees first */
				while (nopen > depth) {
					nopen--;
					draw(&g, &open[nopen], nopen, x);
				}
			}
			if (depth == nopen) {
				open[depth] = (struct frame){p, len, x};
				nopen++;
			}
			depth++;
			if (!p[len])
				break;
			p += len + 1;
		}
		/* frames deeper than this stack close where it starts: it ends at its last frame */
		while (nopen > depth) {
			nopen--;
			draw(&g, &open[nopen], nopen, x);
		}
		x += order[i]->samples;
	}
	while (nopen > 0) {
		nopen--;
		draw(&g, &open[nopen], nopen, x);
	}
	fputs("</svg>\n", g.f);
	int err = ferror(g.f) ? -EIO : 0;
	if (fclose(g.f) != 0 && !err)
		err = -errno;
	free(order);
	free(open);
	return err;
}
