// SPDX-License-Identifier: MIT
/* The alarm re-armed from another thread (plugin/rvexec_shm.h): thread A re-arms thread B's alarm over and
 * over while B runs, alternating an arming that fires at B's next instruction (X: instructions, now + 1) and
 * one that never can (Y: instructions, now + 2^60). X may fire (B gets SIGUSR1) while it is the slot's
 * arming; Y never may. A plugin that fired an X it had read after A published the Y (the signal alone
 * compared, as before the generation) would take Y with it: A finds Y disarmed with its own generation. The
 * plugin fires with a compare-and-swap on generation and signal, so no Y may be taken; and X must have fired
 * some times, or the two threads never ran together and the test proved nothing. usage: alarm_rearm REARMS
 * prints "rearm REARMS: signals N taken_y N fired N". Static, run with $RVEXEC_SHM naming the count file (as
 * the emulator finds it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvexec_shm.h"

static struct rvexec_shm_header *file;
static struct rvexec_slot *volatile b_slot;
static volatile int done;
static volatile long signals;

static void on_signal(int sig)
{
	(void)sig;
	signals++;
}

static struct rvexec_slot *own_slot(void)
{
	for (uint32_t i = 0; i < file->nslots; i++) {
		struct rvexec_slot *s = rvexec_shm_slot(file, i);
		if (s->tid == (uint32_t)gettid() && s->state == RVEXEC_SLOT_LIVE)
			return s;
	}
	return NULL;
}

/* B: finds its slot, then runs a loop that loads and adds but stores nothing, until A is done. */
static void *runner(void *arg)
{
	(void)arg;
	b_slot = own_slot();
	long x = 0;
	for (long i = 0; !__atomic_load_n(&done, __ATOMIC_ACQUIRE); i++)
		__asm__ volatile("add %0, %0, %1" : "+r"(x) : "r"(i));
	return (void *)x;
}

int main(int argc, char **argv)
{
	long rearms = argc > 1 ? atol(argv[1]) : 0;
	const char *path = getenv(RVEXEC_SHM_ENV);
	struct stat st;
	int fd = path ? open(path, O_RDWR) : -1;
	if (rearms < 1 || fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "usage: alarm_rearm REARMS, with $%s naming the count file\n",
		        RVEXEC_SHM_ENV);
		return 2;
	}
	file = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED || file->magic != RVEXEC_SHM_MAGIC || file->version != RVEXEC_SHM_VERSION)
		return 2;
	signal(SIGUSR1, on_signal);
	pthread_t b;
	if (pthread_create(&b, NULL, runner, NULL) != 0)
		return 1;
	for (long spin = 0; !b_slot && spin < 1000000000L; spin++)
		sched_yield();
	struct rvexec_slot *s = b_slot;
	if (!s)
		return 1;
	uint64_t fired = __atomic_load_n(&s->alarm_fired, __ATOMIC_ACQUIRE);
	long taken_y = 0;
	for (long k = 0; k < rearms; k++) {
		const uint64_t *c = s->counts[RVEXEC_MODE_USER];
		uint64_t gen = rvexec_alarm_begin(s); /* X */
		__atomic_store_n(&s->alarm_mask, 1ull << RVEXEC_INSTRET, __ATOMIC_RELAXED);
		__atomic_store_n(&s->alarm_at, c[RVEXEC_INSTRET] + 1, __ATOMIC_RELAXED);
		rvexec_alarm_publish(s, gen, SIGUSR1);
		for (volatile int spin = 0; spin < (k & 15); spin++) /* X's life: 0 to 15 turns */
			;
		gen = rvexec_alarm_begin(s); /* Y */
		__atomic_store_n(&s->alarm_at, c[RVEXEC_INSTRET] + (1ull << 60), __ATOMIC_RELAXED);
		rvexec_alarm_publish(s, gen, SIGUSR1);
		for (volatile int spin = 0; spin < 20; spin++)
			;
		taken_y += __atomic_load_n(&s->alarm_armed, __ATOMIC_ACQUIRE) == gen << 32;
	}
	rvexec_alarm_begin(s); /* disarmed before B stores anything again */
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(b, NULL);
	printf("rearm %ld: signals %ld taken_y %ld fired %llu\n", rearms, signals, taken_y,
	       (unsigned long long)(__atomic_load_n(&s->alarm_fired, __ATOMIC_ACQUIRE) - fired));
	return 0;
}
