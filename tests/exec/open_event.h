// SPDX-License-Identifier: MIT
/* The perf_event_open call the exec test programs share (each is built from its own file, by test_exec.py
 * or, test_exec_source, by automake, so the helpers are static functions of this header): a counting event of
 * the calling thread on any CPU, opened disabled. */
#ifndef RVEXEC_TEST_OPEN_EVENT_H
#define RVEXEC_TEST_OPEN_EVENT_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* exclude_kernel: 1 counts the user's work only (a model that filters privilege, as the U74 with Sscofpmf) */
static int open_event_excluding(uint32_t type, uint64_t config, int exclude_kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = exclude_kernel ? 1u : 0u;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static inline int open_event(uint32_t type, uint64_t config)
{
	return open_event_excluding(type, config, 0);
}

#endif
