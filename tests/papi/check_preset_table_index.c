// SPDX-License-Identifier: MIT
// Checks the index of PAPI's built-in preset table (upstream patch 55): papi_events_table.sh writes
// papi_events_table_index[] with awk, and papi_load_derived_events() reads only the lines it lists. This
// program derives the index again from the table string itself, cutting each line as the loader does
// (strtok_r on ',', blanks trimmed), and compares it entry by entry with the generated one: every CPU line
// (with its name) and every line the loader reports as an error whatever the CPU (name NULL), by offset and
// line number, in table order, up to the first empty line (where the loader stops).
// Build: cc -I<dir of papi_events_table.h> check_preset_table_index.c; prints one line; exit 1 on a mismatch.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct papi_events_table_line {
	const char *cpu;
	unsigned int offset;
	unsigned int line_no;
};

#include "papi_events_table.h"

static char *trim(char *s)
{
	char *end;

	if (s == NULL)
		return NULL;
	while (isblank((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isblank((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int fail(unsigned int line_no, const char *what)
{
	printf("check_preset_table_index: line %u of the table: %s\n", line_no, what);
	return 1;
}

int main(void)
{
	const char *table = papi_events_table;
	const char *start = table;
	const struct papi_events_table_line *entry = papi_events_table_index;
	unsigned int line_no = 0, named = 0, unnamed = 0;
	char line[4096];

	while (*start != '\0') {
		const char *end = strchr(start, '\n');
		size_t len = end ? (size_t)(end - start) : strlen(start);
		char *save = NULL, *t, *cpu = NULL;
		int indexed = 0;

		if (len == 0)
			break; // the loader stops at the first empty line
		line_no++;
		if (len >= sizeof line)
			return fail(line_no, "longer than this check's buffer");
		memcpy(line, start, len);
		line[len] = '\0';
		t = trim(strtok_r(line, ",", &save));
		if (t != NULL && *t != '\0' && *t != '#' && strcasecmp(t, "PRESET") != 0 &&
		    strcasecmp(t, "EVENT") != 0) {
			indexed = 1;
			if (strcasecmp(t, "CPU") == 0) {
				cpu = trim(strtok_r(NULL, ",", &save));
				if (cpu != NULL && *cpu == '\0')
					cpu = NULL;
			}
		}
		if (indexed) {
			if (entry->line_no == 0)
				return fail(line_no, "not in the index (it ends before)");
			if (entry->line_no != line_no || entry->offset != (unsigned int)(start - table))
				return fail(line_no, "the index gives another line or offset here");
			if ((cpu == NULL) != (entry->cpu == NULL) ||
			    (cpu != NULL && strcmp(cpu, entry->cpu) != 0))
				return fail(line_no, "the index names another CPU here");
			cpu != NULL ? named++ : unnamed++;
			entry++;
		}
		start += end ? len + 1 : len;
	}
	if (entry->line_no != 0)
		return fail(entry->line_no, "in the index but not a CPU or error line of the table");
	printf("check_preset_table_index: %u lines, the index lists their %u CPU lines and %u error lines\n",
	       line_no, named, unnamed);
	return 0;
}
