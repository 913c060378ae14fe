// SPDX-License-Identifier: MIT
/* A riscv64 program that counts its own loop through perf_event_open, as a user of the emulator would: run
 * under qemu-riscv64 with the exec-count plugin and the riscv64 emulator (RVEMU_COUNT_SOURCE=exec), its
 * counts are what the loop executed. The loop (argument: iterations) is 4 instructions, one of them a load,
 * so two runs differ by exactly 4 instructions and 1 load per extra iteration. Prints "instructions N loads N
 * cycles N". A second argument is the load event's raw config (default 0x200, the U74's
 * INTEGER_LOAD_RETIRED; CVA6's LOAD_ACCESS is 0x5). */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "open_event.h"

static uint64_t word;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t load_event = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x200;
	int fd[3] = {open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
	             open_event(PERF_TYPE_RAW, load_event),
	             open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)};
	uint64_t v[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++)
		if (fd[i] < 0 || ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0) != 0) {
			perror("perf_loop: perf_event_open");
			return 1;
		}
	__asm__ volatile("1: ld t0, 0(%1)\n"
	                 "   addi t1, t1, 1\n"
	                 "   addi %0, %0, -1\n"
	                 "   bnez %0, 1b\n"
	                 : "+r"(n)
	                 : "r"(&word)
	                 : "t0", "t1", "memory");
	for (int i = 0; i < 3; i++)
		if (ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0) != 0 ||
		    read(fd[i], &v[i], sizeof(v[i])) != sizeof(v[i]))
			return 1;
	printf("instructions %llu loads %llu cycles %llu\n", (unsigned long long)v[0],
	       (unsigned long long)v[1], (unsigned long long)v[2]);
	return 0;
}
