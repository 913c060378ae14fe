// SPDX-License-Identifier: MIT
/* SonicBOOM's extended counter bank (seed 001), reached with `addi x0, rs1, tag` hints.
 *
 * Model
 * - 64 free-running 64-bit counters, counters 0..62 as in events/ucb_boom.csv, counter 63 unused (reads 0).
 *   Counter n advances at rvemu_boom_events[n] (events per 1e9 cycles) of the calling thread's cycles.
 * - State is per thread: the OS saves procTag per task and the counters only count the tagged task.
 *   Defaults after reset: procTag = 0, pfc_maxPriv = 0, pfc_enable = 0 (nothing counts until set up).
 * - Counting happens only while pfc_enable = 1 and procTag == 0x1234567.
 * - Privilege: of each event's occurrences, a fraction RVEMU_BOOM_KERNEL_PERMILLE (default 50) happens in
 *   supervisor mode (system calls, page faults on behalf of the task) and RVEMU_BOOM_MACHINE_PERMILLE
 *   (default 10) in machine mode (SBI calls, timer), the rest in user mode. pfc_maxPriv = rs1 % 4 selects
 *   what counts: 0 user only, 1 user + supervisor, 2 (no hypervisor on BOOM) as 1, 3 all levels. Each
 *   share is its own rate (rate x permille / 1000, rounded down) so every count is an exact floor().
 * - The seed writes `pfc_enable = Reg[rs1] % 1`, which would always be 0; we read it as bit 0 (% 2).
 * - Reset (tag 127) zeroes the counters; rvemu_boom_truth() counts all levels, gated by nothing, since
 *   the last reset (or since the thread started).
 * - Tags outside the interface (lib/rvhw_known.h) never reach here: RVHW_EINVAL.
 * - Under the exec count source (RVEMU_COUNT_SOURCE=exec, docs/exec-counts.md) the counters
 * events/exec_events.csv lists for boom count what the thread executed, from the QEMU plugin: user level its
 * user-mode counts, supervisor level the emulator's own work for it (the kernel's), machine level nothing (no
 * SBI under qemu-user); the gating is the same. The other counters (stall and occupancy cycles, exceptions,
 * the fetch stages' redirects) keep their profile rates.
 */
#include "mach.h"
#include "rvhw.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum boom_level { BOOM_USER, BOOM_SUPERVISOR, BOOM_MACHINE, BOOM_LEVELS };

struct boom_thread {
	int initialized;
	uint64_t proc_tag, max_priv, enable;
	uint64_t segment_start;        /* thread cycles when the current gating state began */
	uint64_t counted[BOOM_LEVELS]; /* cycles counted at each privilege share since the reset */
	uint64_t truth_start;          /* thread cycles at the last reset */
	struct boom_exec *exec;        /* under the exec count source: the executed counts (else NULL) */
};

/* The exec-counted counters of a thread, per privilege level: their values when the current gating segment
 * began, what the gating let through since the reset, and their values at the reset. */
struct boom_exec {
	uint64_t segment_start[BOOM_LEVELS][RVEMU_BOOM_COUNTERS];
	uint64_t counted[BOOM_LEVELS][RVEMU_BOOM_COUNTERS];
	uint64_t truth_start[BOOM_LEVELS][RVEMU_BOOM_COUNTERS];
};

static struct {
	int present;
	uint64_t level_ppb[BOOM_LEVELS][RVEMU_BOOM_COUNTERS];
	int exec_handle[RVEMU_BOOM_COUNTERS]; /* emu_exec_bank_event, -1: the profile's rate */
	int exec_any;                         /* some counter is exec-counted */
	pthread_key_t exec_key;               /* frees a thread's boom_exec when it exits */
	unsigned exec_live; /* boom_exec states allocated and not freed (rvemu_boom_exec_states) */
} boom;

static __thread struct boom_thread tls_boom;

/* The thread's executed count of an exec-counted counter at a level, now. */
static uint64_t boom_exec_now(unsigned counter, int level)
{
	if (level == BOOM_MACHINE)
		return 0;
	return emu_exec_bank_value(emu_thread_self(), boom.exec_handle[counter],
	                           level == BOOM_USER ? EMU_EXEC_USER : EMU_EXEC_SUPERVISOR);
}

/* A thread's exec state goes with the thread: the key's destructor runs in the exiting thread. */
static void boom_exec_free(void *p)
{
	free(p);
	tls_boom.exec = NULL;
	tls_boom.initialized = 0;
	__atomic_fetch_sub(&boom.exec_live, 1, __ATOMIC_RELAXED);
}

static struct boom_thread *boom_thread_get(void)
{
	struct boom_thread *t = &tls_boom;

	if (!t->initialized) {
		memset(t, 0, sizeof(*t));
		t->segment_start = t->truth_start = emu_thread_cycles();
		if (boom.exec_any) {
			t->exec = calloc(1, sizeof(*t->exec));
			if (t->exec == NULL || pthread_setspecific(boom.exec_key, t->exec) != 0)
				emu_config_error("cannot set up BOOM's counters (out of memory)");
			__atomic_fetch_add(&boom.exec_live, 1, __ATOMIC_RELAXED);
			for (unsigned n = 0; n < RVEMU_BOOM_COUNTERS; n++)
				for (int level = 0; level < BOOM_LEVELS && boom.exec_handle[n] >= 0; level++)
					t->exec->segment_start[level][n] = t->exec->truth_start[level][n] =
					    boom_exec_now(n, level);
		}
		t->initialized = 1;
	}
	return t;
}

/* Whether the present gating state lets a level through. */
static int boom_level_counts(const struct boom_thread *t, int level)
{
	return level == BOOM_USER || (level == BOOM_SUPERVISOR && t->max_priv >= 1) ||
	       (level == BOOM_MACHINE && t->max_priv == 3);
}

static int boom_counting(const struct boom_thread *t)
{
	return t->enable && t->proc_tag == RVHW_BOOM_PROCTAG_COUNTED;
}

/* Close the current segment: its cycles count at the levels the present gating state lets through. */
static void boom_settle(struct boom_thread *t)
{
	uint64_t now = emu_thread_cycles();
	uint64_t cycles = now >= t->segment_start ? now - t->segment_start : 0;

	t->segment_start = now;
	if (t->exec != NULL)
		for (unsigned n = 0; n < RVEMU_BOOM_COUNTERS; n++)
			for (int level = 0; level < BOOM_LEVELS && boom.exec_handle[n] >= 0; level++) {
				uint64_t v = boom_exec_now(n, level);
				if (boom_counting(t) && boom_level_counts(t, level))
					t->exec->counted[level][n] += v - t->exec->segment_start[level][n];
				t->exec->segment_start[level][n] = v;
			}
	if (!boom_counting(t))
		return;
	t->counted[BOOM_USER] += cycles;
	if (t->max_priv >= 1)
		t->counted[BOOM_SUPERVISOR] += cycles;
	if (t->max_priv == 3)
		t->counted[BOOM_MACHINE] += cycles;
}

static uint64_t boom_count(const uint64_t cycles[BOOM_LEVELS], unsigned counter)
{
	uint64_t v = 0;

	if (counter >= RVEMU_BOOM_COUNTERS)
		return 0; /* counter 63 is not connected */
	for (int level = 0; level < BOOM_LEVELS; level++)
		v += emu_scale(cycles[level], boom.level_ppb[level][counter]);
	return v;
}

/* A counter's value since the reset, as the gating let it through. */
static uint64_t boom_read(const struct boom_thread *t, unsigned counter)
{
	uint64_t v = 0;

	if (counter >= RVEMU_BOOM_COUNTERS || t->exec == NULL || boom.exec_handle[counter] < 0)
		return boom_count(t->counted, counter);
	for (int level = 0; level < BOOM_LEVELS; level++)
		v += t->exec->counted[level][counter];
	return v;
}

static void boom_reset(struct boom_thread *t)
{
	memset(t->counted, 0, sizeof(t->counted));
	t->truth_start = t->segment_start;
	if (t->exec != NULL) {
		memset(t->exec->counted, 0, sizeof(t->exec->counted));
		memcpy(t->exec->truth_start, t->exec->segment_start, sizeof(t->exec->truth_start));
	}
}

static int boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	struct boom_thread *t = boom_thread_get();
	uint64_t result = in; /* set hints leave rs1 unchanged */

	boom_settle(t);
	switch (tag) {
	case RVHW_BOOM_SET_PROCTAG:
		t->proc_tag = in;
		break;
	case RVHW_BOOM_SET_MAXPRIV:
		t->max_priv = in % 4;
		break;
	case RVHW_BOOM_SET_ENABLE:
		t->enable = in & 1;
		break;
	case RVHW_BOOM_GET_PROCTAG:
		result = t->proc_tag;
		break;
	case RVHW_BOOM_GET_MAXPRIV:
		result = t->max_priv;
		break;
	case RVHW_BOOM_RESET:
		boom_reset(t);
		break;
	default:
		if (tag < RVHW_BOOM_READ_BASE || tag >= RVHW_BOOM_READ_BASE + RVHW_BOOM_COUNTERS)
			return RVHW_EINVAL;
		result = boom_read(t, tag - RVHW_BOOM_READ_BASE);
		break;
	}
	if (out != NULL)
		*out = result;
	return RVHW_OK;
}

static void boom_init(void)
{
	uint64_t kernel, machine;

	kernel = emu_env_u64("RVEMU_BOOM_KERNEL_PERMILLE", 50, 0, 1000);
	machine = emu_env_u64("RVEMU_BOOM_MACHINE_PERMILLE", 10, 0, 1000);
	if (kernel + machine > 1000)
		emu_config_error("RVEMU_BOOM_KERNEL_PERMILLE + RVEMU_BOOM_MACHINE_PERMILLE exceed 1000");
	for (unsigned n = 0; n < RVEMU_BOOM_COUNTERS; n++) {
		uint64_t rate = rvemu_boom_events[n].ppb;
		boom.level_ppb[BOOM_SUPERVISOR][n] = rate * kernel / 1000;
		boom.level_ppb[BOOM_MACHINE][n] = rate * machine / 1000;
		boom.level_ppb[BOOM_USER][n] = rate * (1000 - kernel - machine) / 1000;
		boom.exec_handle[n] = emu_exec_bank_event(rvemu_boom_events[n].name);
		boom.exec_any |= boom.exec_handle[n] >= 0;
	}
	if (boom.exec_any && pthread_key_create(&boom.exec_key, boom_exec_free) != 0)
		emu_config_error("cannot set up BOOM's counters (no thread key)");
	boom.present = 1;
}

const struct emu_bank emu_bank_boom = {"riscv_ucb_boom", boom_init, NULL, NULL, boom_op};

/* ---- control API (rvemu.h) ---- */

int rvemu_boom_truth_priv(unsigned counter, unsigned max_priv, uint64_t *value)
{
	struct boom_thread *t;
	uint64_t levels[BOOM_LEVELS];

	if (!boom.present || value == NULL || counter >= RVHW_BOOM_COUNTERS || max_priv > 3)
		return -1;
	t = boom_thread_get();
	boom_settle(t);
	levels[BOOM_USER] = t->segment_start - t->truth_start;
	levels[BOOM_SUPERVISOR] = max_priv >= 1 ? levels[BOOM_USER] : 0;
	levels[BOOM_MACHINE] = max_priv == 3 ? levels[BOOM_USER] : 0;
	*value = boom_count(levels, counter);
	if (t->exec != NULL && boom.exec_handle[counter] >= 0) {
		*value = 0;
		for (int level = 0; level <= (max_priv == 3   ? BOOM_MACHINE
		                              : max_priv >= 1 ? BOOM_SUPERVISOR
		                                              : BOOM_USER);
		     level++)
			*value +=
			    t->exec->segment_start[level][counter] - t->exec->truth_start[level][counter];
	}
	return 0;
}

int rvemu_boom_truth(unsigned counter, uint64_t *value)
{
	return rvemu_boom_truth_priv(counter, 3, value);
}

/* Threads whose exec-counted BOOM state is allocated (freed when each exits). */
unsigned rvemu_boom_exec_states(void)
{
	return __atomic_load_n(&boom.exec_live, __ATOMIC_RELAXED);
}
