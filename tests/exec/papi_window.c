// SPDX-License-Identifier: MIT
/* What an empty PAPI measurement counts: PAPI_reset, PAPI_start and PAPI_stop around nothing, the way PAPI's
 * validation tests measure their loops (papi_l1_dca). On a PMU that cannot filter privilege (CVA6) this is
 * the measuring code's own events plus the kernel's share of the start and stop system calls, which under
 * rvemu-run --exec is the emulator's own code (docs/exec-counts.md). Also prints what this thread's slot of
 * the count file shows around the start and the stop: the user's and the supervisor's (the emulator's) L1D
 * accesses, an upper bound for each share of the window.
 *
 * usage: papi_window EVENT RUNS   prints "window EVENT: low L high H user U supervisor S" (RUNS runs after
 * one thrown away: the first binds PAPI's and libc's symbols lazily).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <papi.h>

#include "rvexec_shm.h"

static struct rvexec_slot *own_slot(void)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	struct stat st;
	int fd = path ? open(path, O_RDWR) : -1;
	if (fd < 0 || fstat(fd, &st) != 0)
		return NULL;
	struct rvexec_shm_header *h =
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED || h->magic != RVEXEC_SHM_MAGIC || h->version != RVEXEC_SHM_VERSION ||
	    h->slot_size != sizeof(struct rvexec_slot))
		return NULL;
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct rvexec_slot *s = rvexec_shm_slot(h, i);
		if (s->tid == (uint32_t)gettid() && s->state == RVEXEC_SLOT_LIVE)
			return s;
	}
	return NULL;
}

static unsigned long long l1d_accesses(const struct rvexec_slot *s, int mode)
{
	return s->counts[mode][RVEXEC_L1D_READ_ACCESS] + s->counts[mode][RVEXEC_L1D_WRITE_ACCESS];
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: papi_window EVENT RUNS\n");
		return 2;
	}
	int runs = atoi(argv[2]), set = PAPI_NULL;
	struct rvexec_slot *slot = own_slot();
	if (runs < 1 || !slot) {
		fprintf(stderr, "papi_window: bad run count or no slot in $%s\n", RVEXEC_SHM_ENV);
		return 2;
	}
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_create_eventset(&set) != PAPI_OK || PAPI_add_named_event(set, argv[1]) != PAPI_OK) {
		fprintf(stderr, "papi_window: cannot count %s\n", argv[1]);
		return 1;
	}
	long long low = -1, high = -1;
	unsigned long long user = 0, supervisor = 0;
	for (int k = 0; k <= runs; k++) {
		long long v;
		unsigned long long u0 = l1d_accesses(slot, RVEXEC_MODE_USER);
		unsigned long long s0 = l1d_accesses(slot, RVEXEC_MODE_SUPERVISOR);
		if (PAPI_reset(set) != PAPI_OK || PAPI_start(set) != PAPI_OK ||
		    PAPI_stop(set, &v) != PAPI_OK) {
			fprintf(stderr, "papi_window: PAPI_start/PAPI_stop failed\n");
			return 1;
		}
		if (k == 0)
			continue;
		user = l1d_accesses(slot, RVEXEC_MODE_USER) - u0;
		supervisor = l1d_accesses(slot, RVEXEC_MODE_SUPERVISOR) - s0;
		if (low < 0 || v < low)
			low = v;
		if (v > high)
			high = v;
	}
	printf("window %s: low %lld high %lld user %llu supervisor %llu\n", argv[1], low, high, user,
	       supervisor);
	return 0;
}
