// SPDX-License-Identifier: MIT
/* The kernel's share of an empty window right after a scheduler tick (docs/exec-counts.md, "The emulator's
 * own code is the kernel's"). A riscv64 program for CVA6 (no privilege filter: every event counts the kernel
 * too) run under rvemu-run --exec: it opens `instructions` and LOAD_ACCESS (raw 0x5) disabled, spins in user
 * mode until its modelled cycles are a little past a multiple of TICK (the emulator's scheduler ticks fall on
 * multiples of RVEMU_TICK_CYCLES of the thread's cycles), so a tick falls between the open and the enable but
 * none inside the window, then enables and disables both around nothing and reads them. A board counts the
 * kernel's work while an event is enabled only: a tick handled before the enable is not in the window, so the
 * window counts the same whether a tick was crossed before it or not. TICK 0: no alignment (a run without
 * ticks). Prints "window instructions I loads L spun S". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "open_event.h"
#include "own_slot.h"

int main(int argc, char **argv)
{
	uint64_t tick = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
	const struct rvexec_slot *slot = own_slot();
	int fd[2] = {open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
	             open_event(PERF_TYPE_RAW, 0x5)}; /* CVA6's LOAD_ACCESS */
	if (!slot || fd[0] < 0 || fd[1] < 0) {
		fprintf(stderr, "tick_window: no slot of the count file or no perf event\n");
		return 1;
	}
	const volatile uint64_t *cycles = &slot->counts[RVEXEC_MODE_USER][RVEXEC_CYCLES];
	uint64_t start = *cycles, spun = 0;
	/* at least one tick crossed since the open, and then past a tick by an eighth to a half of a period:
	 * the window (a few thousand cycles) ends long before the next one. Bounded: 64 periods at most. */
	if (tick)
		for (uint64_t c = *cycles; spun < 64 * tick; c = *cycles, spun = c - start)
			if (c / tick > start / tick && c % tick >= tick / 8 && c % tick < tick / 2)
				break;
	uint64_t v[2] = {0, 0};
	if (ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0) != 0 || ioctl(fd[1], PERF_EVENT_IOC_ENABLE, 0) != 0 ||
	    ioctl(fd[1], PERF_EVENT_IOC_DISABLE, 0) != 0 || ioctl(fd[0], PERF_EVENT_IOC_DISABLE, 0) != 0 ||
	    read(fd[0], &v[0], sizeof(v[0])) != sizeof(v[0]) ||
	    read(fd[1], &v[1], sizeof(v[1])) != sizeof(v[1]))
		return 1;
	if (tick && spun >= 64 * tick) {
		fprintf(stderr, "tick_window: the cycles never reached the place after a tick\n");
		return 1;
	}
	printf("window instructions %llu loads %llu spun %llu\n", (unsigned long long)v[0],
	       (unsigned long long)v[1], (unsigned long long)spun);
	return 0;
}
