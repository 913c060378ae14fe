/* SPDX-License-Identifier: MIT */
/* The front end's check of the agent's state page (prof_shm.h). */
#include "prof_shm.h"
#include <stdio.h>
#include <string.h>

/* What the agent's state page says, checked: it lives in the program's address space, so the program may have
 * written over it (the agent rewrites it at exit, but a program can still write after that). Returns 0, or -1
 * with what was wrong in `why`. */
int prof_shm_check(const struct rvprof_shm *s, char *why, size_t len)
{
	const char *bad = NULL;
	long long v = 0;
	if (s->magic != RVPROF_SHM_MAGIC)
		bad = "magic", v = s->magic;
	else if (s->version != RVPROF_SHM_VERSION)
		bad = "version", v = s->version;
	else if (s->state < RVPROF_NOT_STARTED || s->state > RVPROF_DONE)
		bad = "state", v = s->state;
	else if (s->precise < 0 || s->precise > 3)
		bad = "precise_ip", v = s->precise;
	else if (s->precise_refused != 0 && s->precise_refused != 1)
		bad = "precise_refused", v = s->precise_refused;
	else if (s->threads < 0 || s->threads > (1 << 22))
		bad = "threads", v = s->threads;
	else if (s->threads_failed < 0 || s->threads_failed > (1 << 22))
		bad = "threads not sampled", v = s->threads_failed;
	else if (s->children < 0)
		bad = "children", v = s->children;
	else if (s->pid <= 0 || s->ppid < 0 || s->ptid < 0)
		bad = "pid", v = s->pid <= 0 ? s->pid : s->ppid < 0 ? s->ppid : s->ptid;
	else if (s->how < RVPROF_HOW_STARTED || s->how > RVPROF_HOW_RESUMED)
		bad = "how", v = s->how;
	else if (s->exec_end != 0 && s->exec_end != 1)
		bad = "exec_end", v = s->exec_end;
	else if (!memchr(s->comm, 0, sizeof(s->comm)))
		bad = "comm", v = sizeof(s->comm);
	else if (s->overwritten > 1)
		bad = "overwritten", v = s->overwritten;
	else if (s->exact > s->samples + s->dropped)
		bad = "exact samples", v = (long long)s->exact;
	else if (s->at_stop > s->samples)
		bad = "samples read at stop", v = (long long)s->at_stop;
	else if (!memchr(s->message, 0, sizeof(s->message)))
		bad = "message", v = sizeof(s->message);
	if (!bad)
		return 0;
	if (strcmp(bad, "message") == 0 || strcmp(bad, "comm") == 0)
		snprintf(why, len, "its %s is not a string", bad);
	else if (strcmp(bad, "magic") == 0)
		snprintf(why, len, "magic 0x%llx, not 0x%x", (unsigned long long)v, RVPROF_SHM_MAGIC);
	else
		snprintf(why, len, "%s %lld", bad, v);
	return -1;
}
