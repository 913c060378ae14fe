// SPDX-License-Identifier: MIT
/* Count sources: how many events a thread has had. The profile source counts floor(cycles x rate / 1e9)
 * per model event (rates: events/profiles, per 10^9 cycles), exactly and deterministically; the exec source
 * (mach_count_exec.c) reads what the QEMU plugin counted. */
#include <pthread.h>

#include "mach.h"
#include "mach_priv.h"

static uint64_t profile_count(const struct emu_thread *t, size_t ev, uint64_t cycles)
{
	(void)t;
	return emu_scale(cycles, emu_model()->events[ev].ppb);
}

/* The events an event mask can name: bit i is events[i], i < 64. A model with more events (a value-encoded
 * table bigger than the mask) streams them through slots below 64 (rvemu_event.slot), so the loops over a
 * mask stop there: 1ull << i for i >= 64 is undefined (on x86 it wraps and would count events twice). */
static size_t emu_mask_events(const struct rvemu_model *m)
{
	return m->nevents < 64 ? m->nevents : 64;
}

static uint64_t mask_delta(const struct emu_thread *t, uint64_t evmask, uint64_t a, uint64_t b)
{
	const struct rvemu_model *m = emu_model();
	uint64_t d = 0;
	for (size_t i = 0; i < emu_mask_events(m); i++)
		if (evmask & (1ull << i))
			d += profile_count(t, i, b) - profile_count(t, i, a);
	return d;
}

/* Every count is monotonic in the cycles: bisect. */
static uint64_t profile_cycle_reaching(const struct emu_thread *t, uint64_t evmask, uint64_t from,
                                       uint64_t limit, uint64_t need)
{
	if (mask_delta(t, evmask, from, limit) < need)
		return limit + 1;
	uint64_t lo = from, hi = limit; /* delta(lo) < need <= delta(hi) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (mask_delta(t, evmask, from, mid) >= need)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static uint64_t profile_cycles_for(const struct emu_thread *t, uint64_t evmask, uint64_t need)
{
	(void)t;
	const struct rvemu_model *m = emu_model();
	uint64_t ppb = 0;
	for (size_t i = 0; i < emu_mask_events(m); i++)
		if (evmask & (1ull << i))
			ppb += m->events[i].ppb;
	if (!ppb)
		return UINT64_MAX;
	return (uint64_t)(((unsigned __int128)need * RVEMU_PPB + ppb - 1) / ppb);
}

static const struct emu_count_source profile_source = {
    .name = "profile",
    .count = profile_count,
    .cycle_reaching = profile_cycle_reaching,
    .cycles_for = profile_cycles_for,
};

/* The registry: RVEMU_COUNT_SOURCE picks one (default: the profile). Adding a source is a struct here and its
 * own file in this layer; nothing above the machine layer knows which one runs. */
static const struct emu_count_source *const count_sources[] = {&profile_source, &emu_exec_source};
static const struct emu_count_source *active_source;
static pthread_once_t source_once = PTHREAD_ONCE_INIT;

static void choose_source(void)
{
	static const char *const names[] = {"profile", "exec", NULL};
	int i = emu_env_choice("RVEMU_COUNT_SOURCE", 0, names);
	if (count_sources[i] == &emu_exec_source)
		emu_exec_source_init();
	__atomic_store_n(&active_source, count_sources[i], __ATOMIC_RELEASE);
}

const struct emu_count_source *emu_count_source(void)
{
	const struct emu_count_source *s = __atomic_load_n(&active_source, __ATOMIC_ACQUIRE);
	if (__builtin_expect(s == NULL, 0)) {
		pthread_once(&source_once, choose_source);
		s = __atomic_load_n(&active_source, __ATOMIC_ACQUIRE);
	}
	return s;
}

uint64_t emu_events_between(const struct emu_thread *t, uint64_t evmask, uint64_t a, uint64_t b)
{
	const struct emu_count_source *src = emu_count_source();
	const struct rvemu_model *m = emu_model();
	uint64_t d = 0;
	for (size_t i = 0; i < emu_mask_events(m); i++)
		if (evmask & (1ull << i))
			d += src->count(t, i, b) - src->count(t, i, a);
	return d;
}

uint64_t emu_kernel_events_now(const struct emu_thread *t, uint64_t evmask)
{
	const struct emu_count_source *src = emu_count_source();
	const struct rvemu_model *m = emu_model();
	uint64_t n = 0;
	if (!src->kernel_now)
		return 0;
	for (size_t i = 0; i < emu_mask_events(m); i++)
		if (evmask & (1ull << i))
			n += src->kernel_now(t, i);
	return n;
}

uint64_t emu_truth_at(const struct emu_thread *t, size_t ev, uint64_t cycles)
{
	return emu_count_source()->count(t, ev, cycles) + t->injected[ev];
}

/* The counter banks under the exec source (mach.h): its handle of a bank event, or -1 under another source.
 */
int emu_exec_bank_event(const char *event)
{
	if (emu_count_source() != &emu_exec_source)
		return -1;
	return emu_exec_event_handle(event);
}
