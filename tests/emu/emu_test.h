/* SPDX-License-Identifier: MIT */
/* Shared helpers of the emulator core tests: raw perf_event calls and the emulator's control API. */
#ifndef EMU_TEST_H
#define EMU_TEST_H
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "rvemu.h"
#include "rvemu_tables.h"

struct emu_api {
	int (*advance)(uint64_t);
	int (*inject)(const char *, uint64_t);
	int (*truth)(const char *, uint64_t *);
	int (*truth_raw)(uint64_t, uint64_t *);
	uint64_t (*thread_cycles)(void);
	void (*get_stats)(struct rvemu_stats *);
	void (*reset_stats)(void);
	const char *(*model_name)(void);
};
extern struct emu_api api;
extern const struct rvemu_model *model; /* the model this child runs */
/* sscofpmf: the emulated core has an overflow interrupt Linux samples and filters with (the Sscofpmf option,
 * Sscofpmf in the model's isa, or Andes'/T-Head's own); isa_sscofpmf_option: RVEMU_SSCOFPMF=1 adds _sscofpmf
 * to an isa that does not name it */
extern int virtual_clock, sscofpmf, isa_sscofpmf_option;
extern const char *self_path; /* the test program's argv[0] (it re-executes itself) */
/* Virtual clock: cycles from an overflow to its interrupt (RVEMU_IRQ_SKID, default 32). An overflow at the
 * very end of an rvemu_advance is taken in the next one, or at the next system call. */
static inline uint64_t irq_skid(void)
{
	const char *s = getenv("RVEMU_IRQ_SKID");
	return !virtual_clock ? 0 : s && *s ? strtoull(s, NULL, 0) : 32;
}

int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags);
/* attr as PAPI builds it: size 0 (first version), disabled. */
void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config);
void attr_for_event(struct perf_event_attr *a, const struct rvemu_event *e);
uint64_t read_count(int fd);
uint64_t truth_of(const struct rvemu_event *e);
const struct rvemu_event *event_named(const char *name);
pid_t test_gettid(void);
/* Spin on the CPU for about `ms` of thread CPU time. */
void burn_cpu_ms(unsigned ms);

void add_count_suites(void);  /* test_emu_count.c */
void add_sample_suites(void); /* test_emu_sample.c */
void add_tick_suite(void);    /* test_emu_sample.c: runs with RVEMU_TICK_CYCLES=1 or 2 */
/* test_emu_sample.c: two call sites of rvemu_advance, the skid tests' "causing" and "next" blocks */
void skid_next(uint64_t cycles);
void skid_cause(uint64_t cycles);
void add_machine_suites(void);           /* test_emu_machine.c */
void add_read_advance_suite(void);       /* test_emu_count.c: runs with RVEMU_READ_ADVANCE=10^9 */
void add_linux_suites(void);             /* test_emu_linux.c */
void add_pes_suites(void);               /* test_emu_pes.c */
void add_permission_suite(void);         /* test_emu_linux.c: runs without CAP_PERFMON */
void add_cpuwide_suite(void);            /* test_emu_cpuwide.c: runs in a run of its own with RVEMU_HARTS=2 */
void add_cpuwide_permission_suite(void); /* test_emu_cpuwide.c: runs without CAP_PERFMON */

#endif
