/* SPDX-License-Identifier: MIT */
/* Helpers shared by the counter-bank tests: running under the emulator, the control API, and the two
 * access algorithms of the distributed-HPC paper (seed 000, §4.3) written against seam 2 only. */
#ifndef BANK_TEST_H
#define BANK_TEST_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvemu.h"
#include "rvhw.h"

#define BANK_POLL_LIMIT 100000u /* a request that needs more polls than this is stuck */

/* Re-execute this program under librvemu.so ($RVEMU_LIB) with the given model and clock ("virtual" or
 * "cpu"), unless the emulator is already loaded. LD_PRELOAD is appended to, never replaced: a sanitizer
 * runtime must stay first. Returns only when running under the emulator. */
static inline void bank_reexec_under_emulator(char **argv, const char *model, const char *clock)
{
	const char *lib = getenv("RVEMU_LIB"), *old = getenv("LD_PRELOAD");
	char *preload;

	if (dlsym(RTLD_DEFAULT, "rvemu_api_version") != NULL)
		return;
	if (getenv("BANK_TEST_REEXECED") != NULL || lib == NULL) {
		fprintf(stderr, "%s: the emulator is not loaded (set RVEMU_LIB to librvemu.so)\n", argv[0]);
		exit(1);
	}
	if (old != NULL && *old != '\0') {
		size_t n = strlen(old) + strlen(lib) + 2;
		preload = malloc(n);
		if (preload == NULL)
			exit(1);
		snprintf(preload, n, "%s:%s", old, lib);
	} else {
		preload = strdup(lib);
	}
	setenv("LD_PRELOAD", preload, 1);
	setenv("RVEMU_MODEL", model, 1);
	if (strcmp(clock, "virtual") == 0)
		setenv("RVEMU_CLOCK", "virtual", 1);
	else
		unsetenv("RVEMU_CLOCK");
	setenv("BANK_TEST_REEXECED", "1", 1);
	execv("/proc/self/exe", argv);
	perror("execv /proc/self/exe");
	exit(1);
}

/* The control API, looked up at run time (nothing links against the emulator). */
struct bank_api {
	int (*advance)(uint64_t);
	uint64_t (*thread_cycles)(void);
	void (*get_stats)(struct rvemu_stats *);
	int (*hpc_truth)(uint32_t, unsigned, uint64_t *);
	void (*hpc_force_interrupt)(unsigned);
	void (*hpc_set_useren)(int);
	int (*boom_truth)(unsigned, uint64_t *);
	const char *(*model_name)(void);
};

static inline int bank_api_load(struct bank_api *api)
{
	api->advance = RVEMU_SYM(int (*)(uint64_t), rvemu_advance);
	api->thread_cycles = RVEMU_SYM(uint64_t(*)(void), rvemu_thread_cycles);
	api->get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	api->hpc_truth = RVEMU_SYM(int (*)(uint32_t, unsigned, uint64_t *), rvemu_hpc_truth);
	api->hpc_force_interrupt = RVEMU_SYM(void (*)(unsigned), rvemu_hpc_force_interrupt);
	api->hpc_set_useren = RVEMU_SYM(void (*)(int), rvemu_hpc_set_useren);
	api->boom_truth = RVEMU_SYM(int (*)(unsigned, uint64_t *), rvemu_boom_truth);
	api->model_name = RVEMU_SYM(const char *(*)(void), rvemu_model_name);
	return api->advance && api->thread_cycles && api->get_stats && api->hpc_truth &&
	       api->hpc_force_interrupt && api->hpc_set_useren && api->boom_truth && api->model_name;
}

static inline uint64_t hpcc_read(void)
{
	uint64_t v = 0;
	if (rvhw_csr_read(RVHW_CSR_HPCC, &v) != RVHW_OK)
		return ~0ull;
	return v;
}

static inline uint64_t hpcc_request(uint32_t manager_id)
{
	return ((uint64_t)manager_id << RVHW_HPCC_ID_SHIFT) | RVHW_HPCC_TRIGGER;
}

/* Poll until hpcc.empty clears; returns the number of polls, or BANK_POLL_LIMIT when it never does. */
static inline unsigned hpc_wait_not_empty(void)
{
	unsigned polls = 0;
	while ((hpcc_read() & RVHW_HPCC_EMPTY) && polls < BANK_POLL_LIMIT)
		polls++;
	return polls;
}

static inline unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* Algorithm 1 (bare metal): write hpcm, trigger, and pop one value each time `empty` clears.
 * Returns 0, or -1 when a value never arrives or a CSR access fails. */
static inline int hpc_algorithm1(uint32_t manager_id, uint64_t bitmap, uint64_t *values)
{
	if (rvhw_csr_write(RVHW_CSR_HPCM, bitmap) != RVHW_OK ||
	    rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(manager_id)) != RVHW_OK)
		return -1;
	for (unsigned i = 0; i < popcount64(bitmap); i++) {
		if (hpc_wait_not_empty() == BANK_POLL_LIMIT ||
		    rvhw_csr_read(RVHW_CSR_HPCR, &values[i]) != RVHW_OK)
			return -1;
	}
	return 0;
}

/* Algorithm 2 (multi-threaded): cancel whatever is pending, run Algorithm 1, repeat while `interrupted`.
 * Returns the number of retries, or -1 on failure. */
static inline int hpc_algorithm2(uint32_t manager_id, uint64_t bitmap, uint64_t *values)
{
	int retries = -1;

	do {
		if (++retries > 1000)
			return -1;
		if (rvhw_csr_write(RVHW_CSR_HPCC, hpcc_read() & ~RVHW_HPCC_TRIGGER) != RVHW_OK)
			return -1;
		if (hpc_algorithm1(manager_id, bitmap, values) != 0)
			return -1;
	} while (hpcc_read() & RVHW_HPCC_INTERRUPTED);
	return retries;
}

#endif
