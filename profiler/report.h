/* SPDX-License-Identifier: MIT */
/* rvprof: samples -> a histogram of functions, call stacks, folded stacks. */
#ifndef RVPROF_REPORT_H
#define RVPROF_REPORT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rvsample_record;
struct prof_symbols;
struct prof_report;

/* `stacks`: the records carry call stacks (their frames are aggregated too). NULL on out of memory. */
struct prof_report *prof_report_new(struct prof_symbols *syms, int stacks);
/* The process image the next samples come from: its symbols and command name (NULL: none). The report
 * names commands only when its samples come from more than one (as perf report's comm column). */
void prof_report_set_process(struct prof_report *r, struct prof_symbols *syms, const char *comm);
int prof_report_add(struct prof_report *r, const struct rvsample_record *rec);
/* The number of distinct command names among the samples. */
size_t prof_report_commands(const struct prof_report *r);
uint64_t prof_report_samples(const struct prof_report *r);

struct prof_entry {
	const char *name;   /* function label ("hot", "[unknown] (libfoo.so)") or stack ("main > f > hot") */
	const char *module; /* functions: the module; stacks: NULL */
	uint64_t samples;
	const char *comm; /* functions: the command name ("" when the samples come from one command) */
};
/* The functions (or stacks), most samples first; ties by name. *n gets the count. Owned by the report;
 * valid until the next call or prof_report_free. */
const struct prof_entry *prof_report_functions(struct prof_report *r, size_t *n);
const struct prof_entry *prof_report_stacks(struct prof_report *r, size_t *n);
/* Prints the histogram of the top `top` functions (0: all) with a bar of `bar_width` characters, and with
 * stacks the top `top` call stacks. */
void prof_report_print(struct prof_report *r, FILE *out, size_t top, int bar_width);
/* Folded stacks ("outer;middle;hot 42", root first; the sampled function alone without stacks; with more than
 * one command the command name is the root frame, as perf's stackcollapse-perf.pl writes it). Returns 0 or
 * -errno. */
int prof_report_write_folded(struct prof_report *r, const char *path);
void prof_report_free(struct prof_report *r);

#endif
