/* SPDX-License-Identifier: MIT */
/* rvprof: a flame graph as an SVG file, drawn from folded stacks (Debian 12 packages no flame graph tool). */
#ifndef RVPROF_FLAMEGRAPH_H
#define RVPROF_FLAMEGRAPH_H
#include "report.h"
#include <stddef.h>

/* Writes the stacks ("root;caller;hot", as prof_report_stacks gives them, any order) as a flame graph: one
 * box per frame, its width its share of the samples, callers below callees, frames with the same callers
 * merged; each box's tooltip gives the function, its samples and its share. `title` heads the picture.
 * Returns 0, -EINVAL for no samples, or -errno. */
int prof_flamegraph_write(const struct prof_entry *stacks, size_t n, const char *title, const char *path);

#endif
