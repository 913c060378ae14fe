// SPDX-License-Identifier: MIT
/* Three threads, each with its own number of fsqrt.d (an instruction libc's start-up and pthread code never
 * use): main 500, the two others 1000 and 2000. The plugin must count each in its own slot. */
#include <pthread.h>
#include <stdio.h>

static void sqrts(long n)
{
	double x = 2.0;
	for (long i = 0; i < n; i++)
		__asm__ volatile("fsqrt.d %0, %0" : "+f"(x));
}

static void *worker(void *arg)
{
	sqrts((long)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(1000 * (i + 1))) != 0)
			return 1;
	sqrts(500);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts("threads done");
	return 0;
}
