/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libpfm4 RISC-V tests: event tables read from the CSV files in events/, libpfm4
 * set-up. */
#ifndef PFM_TEST_UTIL_H
#define PFM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define CSV_MAX_FIELDS 32
#define CSV_MAX_ROWS   512

/* One table of events/: header names and rows of fields (strings owned by the table). */
struct csv_table {
	int ncols, nrows;
	char *header[CSV_MAX_FIELDS];
	char *rows[CSV_MAX_ROWS][CSV_MAX_FIELDS];
};

/* Reads EVENTS_DIR/<name>; returns 0, or -1 with a message on stderr. */
int csv_load(const char *name, struct csv_table *t);
void csv_free(struct csv_table *t);
/* field of row r in column `col`; aborts the test program when the column does not exist */
const char *csv_get(const struct csv_table *t, int r, const char *col);
uint64_t csv_u64(const struct csv_table *t, int r, const char *col);

/* (Re)initialise libpfm4 with LIBPFM_FORCE_PMU / LIBPFM_PROC_CPUINFO set as given (NULL = unset). */
int pfm_reinit(const char *forced_pmu, const char *cpuinfo_fixture);
/* The same with the kernel's caps/max_precise saying max_precise (-1: no such file, as on the RISC-V
 * driver without PES); the host's own file is never read. */
int pfm_reinit_caps(const char *forced_pmu, const char *cpuinfo_fixture, int max_precise);
/* absolute path of a fixture in tests/pfm/cpuinfo/ (static buffer) */
const char *cpuinfo_fixture(const char *name);

/* PFM_OS_NONE encoding of `event`; returns the libpfm4 error code, fills *code on success */
int encode(const char *event, uint64_t *code);
/* is the named PMU active (detected or forced)? */
int pmu_active(const char *name);

#endif
