// SPDX-License-Identifier: MIT
/* The guest side of the count file (plugin/rvexec_shm.h), as the riscv64 emulator will use it: map the file
 * named by $RVEXEC_SHM, find this thread's slot, read it, and mark a stretch of work as supervisor mode (the
 * emulator's own code stands for the kernel). 700 fsqrt.d in supervisor mode, 300 in user mode. Prints what
 * it read from its own slot, for the test to compare with the file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvexec_shm.h"

static void sqrts(long n)
{
	double x = 2.0;
	for (long i = 0; i < n; i++)
		__asm__ volatile("fsqrt.d %0, %0" : "+f"(x));
}

int main(void)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	struct stat st;
	int fd = path ? open(path, O_RDWR) : -1;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "mode: no count file in $%s\n", RVEXEC_SHM_ENV);
		return 1;
	}
	struct rvexec_shm_header *h =
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED || h->magic != RVEXEC_SHM_MAGIC || h->version != RVEXEC_SHM_VERSION ||
	    h->header_size != sizeof(*h) || h->slot_size != sizeof(struct rvexec_slot)) {
		fprintf(stderr, "mode: not a count file this program understands\n");
		return 1;
	}
	struct rvexec_slot *mine = NULL;
	for (uint32_t i = 0; i < h->nslots && !mine; i++) {
		struct rvexec_slot *s = rvexec_shm_slot(h, i);
		if (s->tid == (uint32_t)gettid() && s->state == RVEXEC_SLOT_LIVE)
			mine = s;
	}
	if (!mine) {
		fprintf(stderr, "mode: no slot for thread %d\n", gettid());
		return 1;
	}
	__atomic_store_n(&mine->mode, RVEXEC_MODE_SUPERVISOR, __ATOMIC_RELAXED);
	sqrts(700);
	__atomic_store_n(&mine->mode, RVEXEC_MODE_USER, __ATOMIC_RELAXED);
	sqrts(300);
	printf("mode: own slot read: user fp_sqrt=%llu supervisor fp_sqrt=%llu\n",
	       (unsigned long long)mine->counts[RVEXEC_MODE_USER][RVEXEC_FP_SQRT],
	       (unsigned long long)mine->counts[RVEXEC_MODE_SUPERVISOR][RVEXEC_FP_SQRT]);
	return 0;
}
