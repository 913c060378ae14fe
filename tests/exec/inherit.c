// SPDX-License-Identifier: MIT
/* perf_event_open's inherit under the exec source: a user-mode `instructions` event with attr.inherit,
 * enabled in the parent; a forked child runs a 2-instruction loop N times (argument) and exits; the parent
 * reads the event after the child's exit, when the child's counts have reached it. Two runs differ by exactly
 * 2 instructions per extra iteration. Prints "instructions N". */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.inherit = 1;
	/* the user's instructions only (the U74 needs Sscofpmf to filter modes): the emulator's own work
	 * stands for the kernel's, and how much of it the parent's waitpid and the child's exit take varies
	 * from run to run as a kernel's does (seen: 816 fewer in one loaded run with the kernel share
	 * counted) */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0), status;
	uint64_t value = 0;
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		__asm__ volatile("1: addi %0, %0, -1\n"
		                 "   bnez %0, 1b\n"
		                 : "+r"(n));
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0 || read(fd, &value, sizeof(value)) != sizeof(value))
		return 1;
	printf("instructions %llu\n", (unsigned long long)value);
	return 0;
}
