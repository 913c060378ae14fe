// SPDX-License-Identifier: MIT
/* papi_pes MODE [PERIODS [THRESHOLD]]: PAPI_overflow and PAPI_profil on a core with Precise Event Sampling
 * (docs/papi.md, "PAPI on PES"). Run under rvemu-run --model cva6 --clock virtual: time moves only when
 * hot() calls rvemu_advance, so each PES record's PC is the return address of that call, inside hot(),
 * and the emulator's statistics say how many records the PES unit wrote, how many fill interrupts it
 * raised and how many samples did not fit in the perf ring buffer.
 *   overflow  PAPI_overflow(PAPI_TOT_CYC, THRESHOLD): exactly PERIODS handler calls, each with a PC in
 *             hot(); calls from the signal = 64 per fill interrupt (one signal per buffer, not per sample),
 *             the rest (the partial buffer) at PAPI_stop
 *   profil    PAPI_profil over hot(): the histogram holds every record (sum of buckets = pes_records)
 *   lost      as overflow with the overflow signal blocked while the PES unit fills 2000 records: the
 *             ring buffer holds only part of them; handler calls + PAPI's reported loss = records, the
 *             loss PAPI reports (PAPI Warning at PAPI_stop) = the samples the emulated kernel dropped
 * Prints one summary line; exits 0 when every check holds. */
#include <dlfcn.h>
#include <papi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvemu.h"

#define PES_BUFFER_RECORDS 64 /* RVEMU_PES_RECORDS default (docs/pes.md) */

static int (*advance)(uint64_t);
static void (*get_stats)(struct rvemu_stats *);
static long calls, calls_in_signal, outside;
static volatile int stopping; /* PAPI_stop hands over the samples the last signal did not */

/* The hot function: the events of rvemu_advance are caused here (the record's PC is in this function).
 * Exported (linked with -rdynamic) so that dladdr names it. */
void hot(uint64_t cycles);
__attribute__((noinline)) void hot(uint64_t cycles)
{
	advance(cycles);
	__asm__ volatile("" ::: "memory");
}

static int in_hot(const void *pc)
{
	Dl_info info;
	return dladdr(pc, &info) && info.dli_saddr == (void *)hot;
}

// cppcheck-suppress constParameter ; PAPI_overflow_handler_t's signature
static void handler(int event_set, void *address, long long overflow_vector, void *context)
{
	(void)event_set;
	(void)overflow_vector;
	calls++;
	if (!context)
		outside++; /* a handler always gets a context, the thread's own in PAPI_stop */
	if (!stopping)
		calls_in_signal++;
	if (!in_hot(address))
		outside++;
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "papi_pes: %s: %s\n", what, ret < 0 ? PAPI_strerror(ret) : "failed");
	return 1;
}

/* Runs PERIODS * THRESHOLD cycles in hot(), in chunks that do not divide the threshold. */
static uint64_t run_hot(long periods, long threshold)
{
	uint64_t total = (uint64_t)periods * (uint64_t)threshold, done = 0,
	         chunk = 7 * (uint64_t)threshold + 123;
	while (done < total) {
		uint64_t n = total - done < chunk ? total - done : chunk;
		hot(n);
		done += n;
	}
	return done;
}

/* The number in "PAPI Warning: perf_event: N samples of event ... lost" lines of FILE, summed. */
static long long warned_lost(FILE *f)
{
	char line[512];
	long long sum = 0, n;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stdout);
		if (sscanf(line, "PAPI Warning: perf_event: %lld samples of event", &n) == 1)
			sum += n;
	}
	return sum;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "overflow";
	long periods = argc > 2 ? atol(argv[2]) : 1000, threshold = argc > 3 ? atol(argv[3]) : 10000;
	int es = PAPI_NULL, ret, lost_mode = !strcmp(mode, "lost"), profil_mode = !strcmp(mode, "profil");
	struct rvemu_stats s0, s1;
	long long count = 0;

	if (!lost_mode && !profil_mode && strcmp(mode, "overflow")) {
		fprintf(stderr, "usage: papi_pes overflow|profil|lost [PERIODS [THRESHOLD]]\n");
		return 2;
	}
	if (periods <= 0 || threshold <= 0) {
		fprintf(stderr, "papi_pes: PERIODS and THRESHOLD must be positive\n");
		return 2;
	}
	if (lost_mode && argc <= 2)
		periods = 2000;
	advance = RVEMU_SYM(int (*)(uint64_t), rvemu_advance);
	get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	if (!advance || !get_stats || advance(0) != 0) {
		fprintf(stderr,
		        "papi_pes: needs the emulator with the virtual clock (rvemu-run --clock virtual)\n");
		return 1;
	}
	if ((ret = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT)
		return fail("PAPI_library_init", ret);
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	if (!ci || !ci->hardware_intr || !ci->precise_intr) {
		fprintf(stderr, "papi_pes: perf_event does not report hardware precise overflow (%d/%d)\n",
		        ci ? (int)ci->hardware_intr : -1, ci ? (int)ci->precise_intr : -1);
		return 1;
	}
	if ((ret = PAPI_create_eventset(&es)) != PAPI_OK ||
	    (ret = PAPI_add_event(es, PAPI_TOT_CYC)) != PAPI_OK)
		return fail("PAPI_add_event(PAPI_TOT_CYC)", ret);

	/* PAPI_profil: 32-bit buckets of 4 bytes over the 4 KiB after hot() (scale 0x8000) */
	static unsigned int buckets[1024];
	if (profil_mode)
		ret = PAPI_profil(buckets, sizeof(buckets), (vptr_t)hot, 0x8000, es, PAPI_TOT_CYC,
		                  (int)threshold, PAPI_PROFIL_POSIX | PAPI_PROFIL_BUCKET_32);
	else
		ret = PAPI_overflow(es, PAPI_TOT_CYC, (int)threshold, 0, handler);
	if (ret != PAPI_OK)
		return fail(profil_mode ? "PAPI_profil" : "PAPI_overflow", ret);

	/* PAPI's warnings (lost samples) go to stderr: keep them in a file to read the number back */
	FILE *warnings = tmpfile();
	int saved_stderr = dup(2);
	if (!warnings || saved_stderr < 0 || dup2(fileno(warnings), 2) < 0)
		return fail("redirecting stderr", -1);
	PAPI_set_debug(PAPI_VERB_ECONT);

	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, ci->hardware_intr_sig);
	get_stats(&s0);
	if ((ret = PAPI_start(es)) != PAPI_OK)
		return fail("PAPI_start", ret);
	if (lost_mode) /* a reader that does not keep up: no handler runs while the unit fills its buffers */
		pthread_sigmask(SIG_BLOCK, &block, &old);
	uint64_t cycles = run_hot(periods, threshold);
	if (lost_mode)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	stopping = 1;
	ret = PAPI_stop(es, &count);
	stopping = 0;
	if (ret != PAPI_OK)
		return fail("PAPI_stop", ret);
	get_stats(&s1);
	fflush(stderr);
	dup2(saved_stderr, 2);
	long long lost = warned_lost(warnings);

	long long records = (long long)(s1.pes_records - s0.pes_records);
	long long interrupts = (long long)(s1.pes_interrupts - s0.pes_interrupts);
	long long dropped = (long long)(s1.samples_lost - s0.samples_lost);
	long long signals = (long long)(s1.signals - s0.signals);
	int ok = count == (long long)cycles && records == periods &&
	         interrupts == records / PES_BUFFER_RECORDS && signals == interrupts;
	if (profil_mode) {
		long long sum = 0;
		long in_range = 0;
		for (size_t i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
			sum += buckets[i];
			if (buckets[i] && in_hot((const char *)hot + 4 * i))
				in_range += buckets[i];
		}
		ok = ok && sum == records && in_range == sum && dropped == 0 && lost == 0;
		printf(
		    "papi_pes profil: %lld cycles, threshold %ld: %lld PES records in %lld fill interrupts "
		    "(%lld signals); histogram sum %lld, %ld in hot(); %s\n",
		    count, threshold, records, interrupts, signals, sum, in_range, ok ? "ok" : "MISMATCH");
		return ok ? 0 : 1;
	}
	if (lost_mode)
		ok = ok && dropped > 0 && lost == dropped && calls + lost == records && outside == 0;
	else
		ok = ok && calls == periods && outside == 0 && dropped == 0 && lost == 0 &&
		     calls_in_signal == interrupts * PES_BUFFER_RECORDS;
	printf("papi_pes %s: %lld cycles, threshold %ld: %ld handler calls (%ld from %lld signals, %ld at "
	       "PAPI_stop), %ld PCs outside hot(); %lld PES records in %lld fill interrupts; lost: %lld "
	       "reported by PAPI, %lld dropped by the kernel; %s\n",
	       mode, count, threshold, calls, calls_in_signal, signals, calls - calls_in_signal, outside,
	       records, interrupts, lost, dropped, ok ? "ok" : "MISMATCH");
	return ok ? 0 : 1;
}
