/* SPDX-License-Identifier: MIT */
/* rvprof: sampled PCs -> function names, through the executable mappings recorded with the samples and the
 * ELF symbol tables of the mapped files (.symtab, else .dynsym and the .symtab of a separate debug file, as
 * perf reads them), read with libelf. */
#ifndef RVPROF_SYMBOLS_H
#define RVPROF_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>

struct rvsample_map;
struct prof_symbols;

struct prof_sym {
	const char *name;   /* function name, or NULL when no symbol covers the address */
	const char *module; /* basename of the mapped file ("[unknown]" when no mapping covers the address) */
	const char *path;   /* full path of the mapped file, or NULL */
	uint64_t map_start; /* the mapping that covers the address (0 if none) */
	uint64_t sym_addr;  /* the symbol's run-time address (0 if none) */
};

/* Keeps its own copy of the mappings; ELF files are opened lazily, once each. NULL on out of memory. */
struct prof_symbols *prof_symbols_new(const struct rvsample_map *maps, size_t nmaps);
/* Resolves `pc`. Always fills `out` (unknown addresses get name NULL); returns 0 when a symbol was found,
 * -1 otherwise. The strings live as long as the resolver. */
int prof_symbols_resolve(struct prof_symbols *s, uint64_t pc, struct prof_sym *out);
/* Display name: "func", or "[unknown] (module)" / "[unknown]"; written into buf, returned. */
const char *prof_sym_label(const struct prof_sym *sym, char *buf, size_t len);
void prof_symbols_free(struct prof_symbols *s);

#endif
