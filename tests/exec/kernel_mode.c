// SPDX-License-Identifier: MIT
/* The emulator's own code is the kernel's (docs/exec-counts.md): a riscv64 program that makes N emulated
 * system calls (read() of a perf event) between two looks at its own slot of the count file, with an
 * `instructions` event that excludes the kernel counting meanwhile. Run under qemu-riscv64 with the plugin
 * and the riscv64 emulator (RVEMU_COUNT_SOURCE=exec), and a U74 INTEGER_LOAD_RETIRED event that does not
 * exclude the kernel (RVEMU_PARANOID=1 lets it; a programmable counter: the U74 has one instret counter).
 * Prints "calls N event E user U supervisor S loads L user_loads UL supervisor_loads SL": the events' counts
 * and the slot's user and supervisor instret and integer loads between the two looks. Argument: N. */
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
	long calls = argc > 1 ? atol(argv[1]) : 100;
	const struct rvexec_slot *slot = own_slot();
	int counted = open_event_excluding(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1),
	    other = open_event_excluding(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1),
	    all = open_event_excluding(PERF_TYPE_RAW, 0x200, 0); /* U74 INTEGER_LOAD_RETIRED, kernel too */
	uint64_t value = 0, all_value = 0, scratch;
	if (!slot || counted < 0 || other < 0 || all < 0 || ioctl(counted, PERF_EVENT_IOC_ENABLE, 0) != 0 ||
	    ioctl(all, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		fprintf(stderr, "kernel_mode: no slot of the count file or no perf event\n");
		return 1;
	}
	const volatile uint64_t *user = slot->counts[RVEXEC_MODE_USER],
	                        *sup = slot->counts[RVEXEC_MODE_SUPERVISOR];
	uint64_t user0 = user[RVEXEC_INSTRET], sup0 = sup[RVEXEC_INSTRET];
	uint64_t uload0 = user[RVEXEC_INT_LOAD], sload0 = sup[RVEXEC_INT_LOAD];
	for (long i = 0; i < calls; i++)
		if (read(other, &scratch, sizeof(scratch)) != sizeof(scratch))
			return 1;
	uint64_t user1 = user[RVEXEC_INSTRET], sup1 = sup[RVEXEC_INSTRET];
	uint64_t uload1 = user[RVEXEC_INT_LOAD], sload1 = sup[RVEXEC_INT_LOAD];
	if (ioctl(counted, PERF_EVENT_IOC_DISABLE, 0) != 0 || ioctl(all, PERF_EVENT_IOC_DISABLE, 0) != 0 ||
	    read(counted, &value, sizeof(value)) != sizeof(value) ||
	    read(all, &all_value, sizeof(all_value)) != sizeof(all_value))
		return 1;
	printf("calls %ld event %llu user %llu supervisor %llu loads %llu user_loads %llu supervisor_loads "
	       "%llu\n",
	       calls, (unsigned long long)value, (unsigned long long)(user1 - user0),
	       (unsigned long long)(sup1 - sup0), (unsigned long long)all_value,
	       (unsigned long long)(uload1 - uload0), (unsigned long long)(sload1 - sload0));
	return 0;
}
