// SPDX-License-Identifier: MIT
/* The calling thread's slot of the count file ($RVEXEC_SHM, mapped read-only), for the exec test programs
 * that look at their own counts (each is built from its own file by test_exec.py, with -I plugin); NULL when
 * there is no count file or no live slot of the thread. The program defines _GNU_SOURCE first (gettid). */
#ifndef RVEXEC_TEST_OWN_SLOT_H
#define RVEXEC_TEST_OWN_SLOT_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvexec_shm.h"

static const struct rvexec_slot *own_slot(void)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	struct stat st;
	int fd = path ? open(path, O_RDONLY) : -1;
	if (fd < 0 || fstat(fd, &st) != 0)
		return NULL;
	struct rvexec_shm_header *h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED || h->magic != RVEXEC_SHM_MAGIC || h->slot_size != sizeof(struct rvexec_slot))
		return NULL;
	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct rvexec_slot *s = rvexec_shm_slot(h, i);
		if (s->tid == (uint32_t)gettid() && s->state == RVEXEC_SLOT_LIVE)
			return s;
	}
	return NULL;
}

#endif
