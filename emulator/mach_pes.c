// SPDX-License-Identifier: MIT
/* The Precise Event Sampling unit (the thesis's PES on CVA6, docs/pes.md): a buffer of fixed-size records
 * the hardware appends to, one per sample, with the fill interrupt raised only when it is full. The thesis's
 * proof of concept kept a single slot it overwrote and stored from M-mode to a user address; here the
 * emulated kernel owns the buffer and nothing is ever overwritten: a full buffer interrupts, and the kernel
 * drains it before the next record. */
#include <stdlib.h>
#include <string.h>

#include "mach.h"

static struct emu_pes_buf *pes_of(struct emu_thread *t)
{
	if (!t->pes) {
		struct emu_pes_buf *b = calloc(1, sizeof(*b));
		unsigned n = emu_cfg()->pes_records;
		if (b)
			b->rec = calloc(n, sizeof(*b->rec));
		if (!b || !b->rec)
			abort(); /* out of memory in the emulated hardware */
		b->capacity = (uint64_t)n * sizeof(*b->rec);
		b->size = b->capacity;
		t->pes = b;
	}
	return t->pes;
}

int emu_pes_append(struct emu_thread *t, const struct rvemu_pes_record *r)
{
	struct emu_pes_buf *b = pes_of(t);
	size_t i = (size_t)(b->offset / sizeof(*r));
	if (b->offset >= b->size)
		return -1; /* full and not yet drained: the record cannot be written (the kernel counts it
		              lost) */
	b->rec[i] = *r;
	b->offset += sizeof(*r);
	EMU_STAT_ADD(pes_records, 1);
	if (b->offset < b->size)
		return 0;
	EMU_STAT_ADD(pes_interrupts, 1);
	return 1;
}

size_t emu_pes_drain(struct emu_thread *t, struct rvemu_pes_record *out, size_t max)
{
	struct emu_pes_buf *b = t->pes;
	if (!b)
		return 0;
	size_t held = (size_t)(b->offset / sizeof(*out)), n = held < max ? held : max;
	memcpy(out, b->rec, n * sizeof(*out));
	memmove(b->rec, b->rec + n, (held - n) * sizeof(*out)); /* the rest waits for the next call */
	b->offset -= n * sizeof(*out);
	return n;
}

int emu_pes_set_size(struct emu_thread *t, unsigned records)
{
	struct emu_pes_buf *b = pes_of(t);
	uint64_t size = (uint64_t)records * sizeof(*b->rec);
	if (records == 0 || size > b->capacity || b->offset > size)
		return -1;
	b->size = size;
	return 0;
}

unsigned emu_pes_size(struct emu_thread *t)
{
	return (unsigned)(pes_of(t)->size / sizeof(struct rvemu_pes_record));
}

void emu_pes_set_threshold(struct emu_thread *t, unsigned counter, uint64_t value)
{
	if (counter < sizeof(t->pes->threshold) / sizeof(t->pes->threshold[0]))
		pes_of(t)->threshold[counter] = value;
}
