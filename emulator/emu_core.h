/* SPDX-License-Identifier: MIT */
/* Internal interface between the emulator's core (machine model, clock, threads, perf_event layer) and
 * its counter-bank models (distributed HPC, BOOM). Not installed; the public control API is rvemu.h. */
#ifndef EMU_CORE_H
#define EMU_CORE_H
#include <stddef.h>
#include <stdint.h>

#include "rvemu.h"
#include "rvemu_tables.h"

/* The active machine (RVEMU_MODEL), fixed at load time. */
const struct rvemu_model *emu_model(void);
unsigned emu_nharts(void);      /* RVEMU_HARTS, default 4 (U74-MC: 4 application cores) */
int emu_clock_is_virtual(void); /* RVEMU_CLOCK=virtual */
/* The hart the calling thread runs on: assigned round-robin when the thread first touches the
 * emulator and fixed afterwards (the emulator does not model migration). */
unsigned emu_thread_hart(void);
/* Cycles the calling thread has run (virtual clock, or its CPU time at the model frequency). */
uint64_t emu_thread_cycles(void);
/* Cycles run on hart `hart` by every thread assigned to it so far (for per-core counter banks). */
uint64_t emu_hart_cycles(unsigned hart);
/* Number of host context switches of the calling thread so far (getrusage RUSAGE_THREAD), used for
 * the HPC's `interrupted` bit: a real descheduling between two CSR accesses is a context switch. */
uint64_t emu_thread_context_switches(void);
/* floor(cycles * rate_ppb / 1e9) without overflow. */
static inline uint64_t emu_scale(uint64_t cycles, uint64_t rate_ppb)
{
	return (uint64_t)(((unsigned __int128)cycles * rate_ppb) / RVEMU_PPB);
}

/* Statistics shared by all parts; fields of struct rvemu_stats. */
extern struct rvemu_stats emu_stats;
#define EMU_STAT_ADD(field, n) __atomic_fetch_add(&emu_stats.field, (n), __ATOMIC_RELAXED)

/* Called once by the core at load time, after the model is chosen (implemented by the bank models). */
void emu_banks_init(void);

#endif
