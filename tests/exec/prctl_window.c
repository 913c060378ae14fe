// SPDX-License-Identifier: MIT
/* The kernel's share of an empty window that prctl(PR_TASK_PERF_EVENTS_DISABLE) ends (docs/exec-counts.md,
 * "The emulator's own code is the kernel's"). A riscv64 program for CVA6 (no privilege filter: every event
 * counts the kernel too) run under rvemu-run --exec: it opens EXTRA other events (LOAD_ACCESS, STORE_ACCESS,
 * BRANCH; each its own group, each on a counter of its own) and `instructions`, the one it reads, FIRST or
 * LAST of them, enables them all (`instructions` last), then ends the window with WAY: `ioctl` (a
 * PERF_EVENT_IOC_DISABLE of `instructions` alone) or `prctl` (every event of the task), and reads it.
 * On a board either way reaches the counter's stop in the head of the system call: what the kernel does
 * for the other events after that is not in the window. The emulator holds the thread's kernel shares at the
 * entry of either call, so the prctl window exceeds the ioctl window by the same (the two calls' ways in)
 * however many other events the prctl turns off after it.
 * usage: prctl_window ioctl|prctl EXTRA first|last   prints "window WAY EXTRA ORDER: instructions N" */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "open_event.h"

int main(int argc, char **argv)
{
	static const uint64_t extra_events[] = {0x5, 0x6, 0x9}; /* CVA6: LOAD_ACCESS, STORE_ACCESS, BRANCH */
	const size_t max_extra = sizeof(extra_events) / sizeof(extra_events[0]);
	if (argc != 4 || (strcmp(argv[1], "ioctl") != 0 && strcmp(argv[1], "prctl") != 0) ||
	    (strcmp(argv[3], "first") != 0 && strcmp(argv[3], "last") != 0)) {
		fprintf(stderr, "usage: prctl_window ioctl|prctl EXTRA first|last\n");
		return 2;
	}
	char *end;
	unsigned long extra = strtoul(argv[2], &end, 10);
	if (*end || extra > max_extra) {
		fprintf(stderr, "prctl_window: EXTRA must be 0..%zu\n", max_extra);
		return 2;
	}
	int by_prctl = strcmp(argv[1], "prctl") == 0, first = strcmp(argv[3], "first") == 0;
	int fd[4], n = 0, insn = -1;
	if (first)
		insn = fd[n++] = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	for (size_t i = 0; i < extra; i++)
		fd[n++] = open_event(PERF_TYPE_RAW, extra_events[i]);
	if (!first)
		insn = fd[n++] = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	for (int i = 0; i < n; i++)
		if (fd[i] < 0) {
			fprintf(stderr, "prctl_window: cannot open event %d\n", i);
			return 1;
		}
	for (int i = 0; i < n; i++)
		if (fd[i] != insn && ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0) != 0)
			return 1;
	uint64_t v = 0;
	if (ioctl(insn, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return 1;
	if (by_prctl ? prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) != 0
	             : ioctl(insn, PERF_EVENT_IOC_DISABLE, 0) != 0)
		return 1;
	if (read(insn, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 1;
	printf("window %s %lu %s: instructions %llu\n", argv[1], extra, argv[3], (unsigned long long)v);
	return 0;
}
