// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <string.h>

#include "rvexec_print.h"

#define RVEXEC_NAME(name, what) #name,
static const char *const count_names[] = {RVEXEC_COUNTS(RVEXEC_NAME)};
#undef RVEXEC_NAME

const char *rvexec_count_name(unsigned i)
{
	static char lower[RVEXEC_NCOUNTS][32];
	if (i >= RVEXEC_NCOUNTS)
		return NULL;
	if (!lower[i][0]) {
		size_t k;
		for (k = 0; count_names[i][k] && k + 1 < sizeof(lower[i]); k++)
			lower[i][k] = (char)tolower((unsigned char)count_names[i][k]);
		lower[i][k] = '\0';
	}
	return lower[i];
}

const char *rvexec_check_header(const struct rvexec_shm_header *h, uint64_t file_size)
{
	if (file_size < sizeof(*h))
		return "shorter than the header";
	if (h->magic != RVEXEC_SHM_MAGIC)
		return "not a count file (bad magic)";
	if (h->version != RVEXEC_SHM_VERSION)
		return "a count file of another version";
	if (h->header_size != sizeof(*h) || h->slot_size != sizeof(struct rvexec_slot))
		return "header or slot size differs from this reader's";
	if (h->ncounts > RVEXEC_COUNT_CAPACITY || h->nslots == 0)
		return "bad counter or slot number";
	if (file_size < rvexec_shm_size(h->nslots))
		return "shorter than its slots";
	if (memchr(h->model, '\0', sizeof(h->model)) == NULL)
		return "model name not terminated";
	return NULL;
}

void rvexec_print(FILE *out, const struct rvexec_shm_header *h)
{
	static const char *const states[] = {"free", "live", "exited"};
	static const char *const modes[] = {"user", "supervisor"};
	unsigned n = h->ncounts < RVEXEC_NCOUNTS ? h->ncounts : RVEXEC_NCOUNTS;

	fprintf(out, "rvexec model=%s freq_mhz=%u slots=%u\n", h->model, h->freq_mhz, h->nslots);
	for (uint32_t s = 0; s < h->nslots; s++) {
		const struct rvexec_slot *slot = rvexec_shm_slot((struct rvexec_shm_header *)h, s);
		uint32_t tid = __atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE);
		if (tid == 0)
			continue;
		for (unsigned m = 0; m < RVEXEC_NMODES; m++) {
			const uint64_t *c = slot->counts[m];
			unsigned any = 0;
			/* cppcheck does not expand the X-macro list and takes RVEXEC_NCOUNTS for 0 */
			// cppcheck-suppress knownConditionTrueFalse
			for (unsigned i = 0; i < n; i++)
				any |= c[i] != 0;
			if (!any)
				continue;
			fprintf(out, "thread tid=%u state=%s mode=%s", tid,
			        slot->state < 3 ? states[slot->state] : "?", modes[m]);
			for (unsigned i = 0; i < n; i++)
				fprintf(out, " %s=%llu", rvexec_count_name(i), (unsigned long long)c[i]);
			fputc('\n', out);
		}
	}
}
