// SPDX-License-Identifier: MIT
/* Helpers shared by the libpfm4 RISC-V tests (see pfm_test_util.h). */
#include "pfm_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

/* split one CSV line in place (double quotes may enclose commas); returns the number of fields */
static int csv_split(char *line, char **fields)
{
	int n = 0;
	char *p = line, *out;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < CSV_MAX_FIELDS) {
		int quoted = *p == '"';

		if (quoted)
			p++;
		fields[n++] = out = p;
		while (*p && (quoted ? *p != '"' : *p != ','))
			*out++ = *p++;
		if (quoted && *p == '"')
			p++;
		if (*p != ',') {
			*out = '\0';
			break;
		}
		*out = '\0';
		p++;
	}
	return n;
}

static int csv_add_line(struct csv_table *t, char *line)
{
	char *fields[CSV_MAX_FIELDS];
	int n = csv_split(line, fields), i;
	char **dst;

	if (t->ncols && n != t->ncols)
		return -1;
	if (!t->ncols) {
		t->ncols = n;
		dst = t->header;
	} else {
		if (t->nrows == CSV_MAX_ROWS)
			return -1;
		dst = t->rows[t->nrows++];
	}
	for (i = 0; i < n; i++)
		dst[i] = strdup(fields[i]);
	return 0;
}

int csv_load(const char *name, struct csv_table *t)
{
	char path[4096], line[4096];
	FILE *f;
	int lineno = 0;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", EVENTS_DIR, name);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (csv_add_line(t, line)) {
			fprintf(stderr, "%s:%d: bad row\n", path, lineno);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return t->nrows ? 0 : -1;
}

void csv_free(struct csv_table *t)
{
	int r, c;

	for (c = 0; c < t->ncols; c++) {
		free(t->header[c]);
		for (r = 0; r < t->nrows; r++)
			free(t->rows[r][c]);
	}
	memset(t, 0, sizeof(*t));
}

const char *csv_get(const struct csv_table *t, int r, const char *col)
{
	int c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->header[c], col))
			return t->rows[r][c];
	fprintf(stderr, "no column %s in table\n", col);
	abort();
}

uint64_t csv_u64(const struct csv_table *t, int r, const char *col)
{
	return strtoull(csv_get(t, r, col), NULL, 0);
}

static void set_or_unset(const char *var, const char *value)
{
	if (value)
		setenv(var, value, 1);
	else
		unsetenv(var);
}

int pfm_reinit(const char *forced_pmu, const char *cpuinfo)
{
	return pfm_reinit_caps(forced_pmu, cpuinfo, -1);
}

int pfm_reinit_caps(const char *forced_pmu, const char *cpuinfo, int max_precise)
{
	static char path[64];

	pfm_terminate();
	set_or_unset("LIBPFM_FORCE_PMU", forced_pmu);
	set_or_unset("LIBPFM_PROC_CPUINFO", cpuinfo);
	/* never the host's own caps/max_precise (an x86 host publishes one) */
	snprintf(path, sizeof(path), "/tmp/pfm_test_max_precise.%ld", (long)getpid());
	unlink(path);
	if (max_precise >= 0) {
		FILE *f = fopen(path, "w");
		if (!f)
			return PFM_ERR_NOINIT;
		fprintf(f, "%d\n", max_precise);
		fclose(f);
	}
	setenv("LIBPFM_RISCV_MAX_PRECISE", path, 1);
	int ret = pfm_initialize();
	unlink(path);
	return ret;
}

const char *cpuinfo_fixture(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", CPUINFO_DIR, name);
	return path;
}

int encode(const char *event, uint64_t *code)
{
	uint64_t *codes = NULL;
	int count = 0;
	int ret = pfm_get_event_encoding(event, PFM_PLM0 | PFM_PLM3, NULL, NULL, &codes, &count);

	if (ret == PFM_SUCCESS && count == 1)
		*code = codes[0];
	else if (ret == PFM_SUCCESS)
		ret = PFM_ERR_TOOSMALL; /* every RISC-V event encodes to exactly one value */
	free(codes);
	return ret;
}

int pmu_active(const char *name)
{
	pfm_pmu_info_t info;
	int i;

	pfm_for_all_pmus(i)
	{
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(i, &info) != PFM_SUCCESS)
			continue;
		if (info.name && !strcmp(info.name, name))
			return info.is_present;
	}
	return 0;
}
