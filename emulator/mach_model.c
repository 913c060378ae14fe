// SPDX-License-Identifier: MIT
/* The emulated machine's model: one row of events/models.csv (generated into rvemu_tables.c). Everything
 * that differs between machines is a column there; nothing here is keyed on a model's name. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "mach.h"
#include "mach_priv.h"

uint64_t emu_cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)((unsigned __int128)cycles * 1000u / emu_model()->freq_mhz);
}

uint64_t emu_ns_to_cycles(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * emu_model()->freq_mhz / 1000u);
}

unsigned emu_cpu_hart_id(unsigned cpu)
{
	return cpu + emu_model()->first_hart;
}

int emu_model_event_index(const char *name)
{
	const struct rvemu_model *m = emu_model();
	for (size_t i = 0; i < m->nevents; i++)
		if (strcasecmp(m->events[i].name, name) == 0)
			return (int)m->events[i].slot; /* its count stream (rvemu_tables.h) */
	return -1;
}

/* U74: mhpmevent = class | mask << 8; the mask may combine any defined bits of that one class. */
static int decode_class_mask(const struct rvemu_model *m, uint64_t config, uint64_t *evmask)
{
	uint64_t cls = config & 0xff, mask = config & ~(uint64_t)0xff, covered = 0, set = 0;
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rvemu_event *e = &m->events[i];
		if (e->kind != RVEMU_EV_PROGRAMMABLE || (e->encoding & 0xff) != cls)
			continue;
		uint64_t bit = e->encoding & ~(uint64_t)0xff;
		if (mask & bit) {
			covered |= bit;
			set |= 1ull << i;
		}
	}
	if (!mask || covered != mask)
		return -ENOENT; /* empty mask, undefined bit, or bits of another class */
	*evmask = set;
	return 0;
}

int emu_decode_raw(uint64_t config, uint64_t *evmask)
{
	const struct rvemu_model *m = emu_model();
	/* riscv_pmu_sbi: bits 63:62 select SBI firmware events (not emulated), 47:0 are the hardware event
	 * and the driver drops bits 61:48. */
	if (config >> 62)
		return -ENOENT;
	config &= (1ull << 48) - 1;
	if (m->class_masks)
		return decode_class_mask(m, config, evmask);
	for (size_t i = 0; i < m->nevents; i++)
		if (m->events[i].kind == RVEMU_EV_PROGRAMMABLE && m->events[i].encoding == config) {
			*evmask = 1ull << m->events[i].slot; /* its count stream: < 64 (gen_events.py) */
			return 0;
		}
	return -ENOENT;
}
