// SPDX-License-Identifier: MIT
/* A small libc program (start-up, a loop, printf, exit): the plugin's instruction total must equal the number
 * of instructions QEMU logs executing it one instruction per block. */
#include <stdio.h>

int main(int argc, char **argv)
{
	unsigned long sum = 0;
	(void)argv;
	for (int i = 0; i < 2000 + argc; i++)
		sum += (unsigned long)i * i % 7;
	printf("sum %lu\n", sum);
	return 0;
}
