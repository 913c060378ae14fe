// SPDX-License-Identifier: MIT
/* The control API of rvemu.h (except the banks' rvemu_hpc_* / rvemu_boom_*, which their models export):
 * what tests and tools use to drive the emulated machine and read its ground truth. */
#include <stdint.h>

#include "mach.h"
#include "perf.h"

EMU_EXPORT int rvemu_api_version(void)
{
	return RVEMU_API_VERSION;
}

EMU_EXPORT const char *rvemu_model_name(void)
{
	return emu_model()->model;
}

EMU_EXPORT int rvemu_advance(uint64_t cycles)
{
	if (!emu_clock_is_virtual())
		return -1;
	perf_remote_poll_self(); /* another process began sampling this one (perf record -p) */
	perf_advance_self(cycles, (uint64_t)(uintptr_t)__builtin_return_address(0));
	return 0;
}

EMU_EXPORT int rvemu_inject(const char *event, uint64_t count)
{
	int idx = event ? emu_model_event_index(event) : -1;
	if (idx < 0)
		return -1;
	perf_inject_self((size_t)idx, count, (uint64_t)(uintptr_t)__builtin_return_address(0));
	return 0;
}

EMU_EXPORT int rvemu_truth(const char *event, uint64_t *count)
{
	int idx = event ? emu_model_event_index(event) : -1;
	if (idx < 0 || !count)
		return -1;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	*count = emu_truth_at(t, (size_t)idx, emu_cycles_of(t));
	emu_unlock();
	return 0;
}

EMU_EXPORT int rvemu_truth_raw(uint64_t mhpmevent, uint64_t *count)
{
	uint64_t set;
	if (!count || emu_decode_raw(mhpmevent, &set) != 0)
		return -1;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	uint64_t c = emu_cycles_of(t), sum = 0;
	for (size_t i = 0; i < 64; i++)
		if (set & (1ull << i))
			sum += emu_truth_at(t, i, c);
	*count = sum;
	emu_unlock();
	return 0;
}

EMU_EXPORT uint64_t rvemu_thread_cycles(void)
{
	return emu_thread_cycles();
}

EMU_EXPORT void rvemu_get_stats(struct rvemu_stats *out)
{
	if (!out)
		return;
	uint64_t *dst = (uint64_t *)out;
	const uint64_t *src = (const uint64_t *)&emu_stats;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

EMU_EXPORT void rvemu_reset_stats(void)
{
	uint64_t *s = (uint64_t *)&emu_stats;
	for (size_t i = 0; i < sizeof(emu_stats) / sizeof(uint64_t); i++)
		__atomic_store_n(&s[i], 0, __ATOMIC_RELAXED);
}

EMU_EXPORT void rvemu_test_fork_gate(int fd)
{
	emu_init();
	emu_run_set_fork_gate(fd);
}

EMU_EXPORT void rvemu_test_exit_gate(int gate_fd, int ready_fd)
{
	emu_init();
	emu_run_set_exit_gate(gate_fd, ready_fd);
}

EMU_EXPORT void rvemu_test_steal(uint64_t ns)
{
	emu_init();
	emu_test_steal(ns);
}

EMU_EXPORT void rvemu_test_steal_user(uint64_t ns)
{
	emu_init();
	emu_test_steal_user(ns);
}

EMU_EXPORT void rvemu_test_fork_gate_in_lock(int gate_fd, int ready_fd)
{
	emu_init();
	emu_run_set_fork_gate_in_lock(gate_fd, ready_fd);
}
