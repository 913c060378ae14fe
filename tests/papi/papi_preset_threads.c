// SPDX-License-Identifier: MIT
// Threads that ask for a preset nobody has asked for yet, all at the same moment (upstream patch 53: a preset
// of the built-in table is defined when first asked for). Every round initialises PAPI afresh, so the preset
// is still undefined; THREADS threads meet at a barrier, then each adds it to an EventSet of its own, counts
// a loop and checks PAPI_OK, a defined preset (PAPI_get_event_info: count > 0, a native code for each term)
// and a nonzero count. A reader that found the preset's line unlinked before it was defined saw count 0
// (PAPI_add_event: PAPI_ENOEVNT) or a half-built preset.
// Usage: papi_preset_threads ROUNDS PRESET... Prints "papi_preset_threads: ROUNDS rounds x THREADS threads x
// N presets: ok", or the first failures of each thread and their total; exit status 0 only if all passed.
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8

static pthread_barrier_t start;
static const char *const *preset_names;
static int num_presets;

struct worker {
	int round;
	int failures;
};

static void fail(struct worker *w, const char *what, const char *name, int ret)
{
	if (w->failures < 3) // the first few of each thread: the total is printed at the end
		printf("FAIL papi_preset_threads round %d: %s %s: %d (%s)\n", w->round, what, name, ret,
		       PAPI_strerror(ret));
	w->failures++;
}

/* Counts a loop with the EventSet: every count must be above 0 (emulated counts: synthetic). */
static void count_loop(struct worker *w, int es)
{
	long long counts[16];
	volatile unsigned sink = 0;
	int ret = PAPI_start(es);

	if (ret != PAPI_OK) {
		fail(w, "PAPI_start", "", ret);
		return;
	}
	for (unsigned k = 0; k < 100000; k++)
		sink += k;
	if ((ret = PAPI_stop(es, counts)) != PAPI_OK) {
		fail(w, "PAPI_stop", "", ret);
		return;
	}
	for (int i = 0; i < num_presets; i++)
		if (counts[i] <= 0)
			fail(w, "count not above 0", preset_names[i], (int)counts[i]);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int codes[16];
	int es = PAPI_NULL;
	int ret, i;

	// every thread meets the others at the barrier, even one that failed before it (no thread waits
	// forever)
	for (i = 0; i < num_presets && w->failures == 0; i++) {
		ret = PAPI_event_name_to_code(preset_names[i], &codes[i]);
		if (ret != PAPI_OK)
			fail(w, "PAPI_event_name_to_code", preset_names[i], ret);
	}
	if (w->failures == 0 &&
	    ((ret = PAPI_register_thread()) != PAPI_OK || (ret = PAPI_create_eventset(&es)) != PAPI_OK))
		fail(w, "PAPI_register_thread/create_eventset", "", ret);
	pthread_barrier_wait(&start);
	if (w->failures != 0)
		return NULL;
	for (i = 0; i < num_presets; i++) {
		PAPI_event_info_t info;

		ret = PAPI_add_event(es, codes[i]);
		if (ret != PAPI_OK)
			fail(w, "PAPI_add_event", preset_names[i], ret);
		ret = PAPI_get_event_info(codes[i], &info);
		if (ret != PAPI_OK || info.count == 0 || info.count > PAPI_MAX_INFO_TERMS)
			fail(w, "PAPI_get_event_info (count)", preset_names[i],
			     ret != PAPI_OK ? ret : (int)info.count);
		else
			for (unsigned t = 0; t < info.count; t++)
				if (info.code[t] == 0 || info.name[t][0] == '\0')
					fail(w, "half-built preset, term", preset_names[i], (int)t);
	}
	if (w->failures == 0)
		count_loop(w, es);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_unregister_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 0;
	int failures = 0;

	if (argc < 3 || rounds <= 0 || rounds > 10000 || argc - 2 > 16) {
		fprintf(stderr, "usage: papi_preset_threads ROUNDS(1..10000) PRESET... (at most 16)\n");
		return 2;
	}
	preset_names = (const char *const *)&argv[2];
	num_presets = argc - 2;
	for (int r = 0; r < rounds; r++) {
		pthread_t tid[THREADS];
		struct worker w[THREADS];
		int ret;

		if ((ret = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT ||
		    (ret = PAPI_thread_init(pthread_self)) != PAPI_OK) {
			printf("FAIL papi_preset_threads round %d: init: %d\n", r, ret);
			return 1;
		}
		pthread_barrier_init(&start, NULL, THREADS);
		for (int t = 0; t < THREADS; t++) {
			w[t] = (struct worker){.round = r};
			if (pthread_create(&tid[t], NULL, work, &w[t]) != 0) {
				printf("FAIL papi_preset_threads: pthread_create\n");
				return 1; // the barrier never opens for the others: exit without joining
			}
		}
		for (int t = 0; t < THREADS; t++) {
			pthread_join(tid[t], NULL);
			failures += w[t].failures;
		}
		pthread_barrier_destroy(&start);
		PAPI_shutdown();
	}
	if (failures == 0)
		printf("papi_preset_threads: %d rounds x %d threads x %d presets: ok\n", rounds, THREADS,
		       num_presets);
	else
		printf("FAIL papi_preset_threads: %d failures in %d rounds x %d threads\n", failures, rounds,
		       THREADS);
	return failures != 0;
}
