// SPDX-License-Identifier: MIT
/* A process that forks: the parent runs 100 fsqrt.d, the child 300. Under qemu-user the child is a fork of
 * qemu, plugin and all: it must count in a slot of its own, not in its parent's. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void sqrts(long n)
{
	double x = 2.0;
	for (long i = 0; i < n; i++)
		__asm__ volatile("fsqrt.d %0, %0" : "+f"(x));
}

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		sqrts(300);
		_exit(0);
	}
	sqrts(100);
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	puts("forks done");
	return 0;
}
