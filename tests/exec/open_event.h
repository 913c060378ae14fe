// SPDX-License-Identifier: MIT
/* The perf_event_open call the exec test programs share (each is built from its own file by test_exec.py, so
 * the helper is a static function of this header): a counting event of the calling thread on any CPU, opened
 * disabled. */
#ifndef RVEXEC_TEST_OPEN_EVENT_H
#define RVEXEC_TEST_OPEN_EVENT_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

#endif
