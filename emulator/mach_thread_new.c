// SPDX-License-Identifier: MIT
/* A new thread record, zeroed but for what every kind shares: its ids, its hart and its injection
 * counters (one per event of the model). The registry (mach_thread.c) makes one for each thread of this
 * process, the run (mach_run.c) one for each task of another process or CPU it counts; a file below both,
 * since the registry calls the run and the run must not call back. */
#include <stdio.h>
#include <stdlib.h>

#include "mach_priv.h"

struct emu_thread *emu_thread_new(pid_t tid, pid_t pid, unsigned hart)
{
	struct emu_thread *t = calloc(1, sizeof(*t));
	uint64_t *inj = calloc(emu_model()->nevents, sizeof(uint64_t));
	if (!t || !inj) {
		fprintf(stderr, "librvemu: out of memory\n");
		abort();
	}
	t->tid = tid;
	t->pid = pid;
	t->hart = hart;
	t->injected = inj;
	return t;
}
