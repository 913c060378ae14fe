/* SPDX-License-Identifier: MIT */
/* Classification of one riscv64 instruction (RV64GC and the Zba/Zbb ALU forms) into the counting classes of
 * rvexec_shm.h, from its encoding alone. Used by the plugin at translation time. */
#ifndef RVEXEC_DECODE_H
#define RVEXEC_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* What the branch predictor and the call/return counters need to know about a control transfer. */
enum rvexec_flow {
	RVEXEC_FLOW_NONE = 0, /* falls through */
	RVEXEC_FLOW_BRANCH,   /* conditional branch */
	RVEXEC_FLOW_JAL,      /* direct jump (target known at decode) */
	RVEXEC_FLOW_JALR,     /* indirect jump */
};

struct rvexec_insn {
	uint8_t count;  /* enum rvexec_count: one of the classes */
	uint8_t flow;   /* enum rvexec_flow */
	uint8_t rd;     /* destination register of jal/jalr (0 if none) */
	uint8_t rs1;    /* base register of jalr */
	uint8_t length; /* 2 or 4 bytes */
};

/* Decodes the instruction in bytes[0..size) (size = 2 or 4, little-endian). Never fails: encodings it does
 * not know are RVEXEC_OTHER. */
void rvexec_decode(const uint8_t *bytes, size_t size, struct rvexec_insn *out);

/* A call writes the link register ra or the alternate link register t0; a return jumps through one of them
 * without writing either (the RISC-V unprivileged spec's hints for return-address prediction). */
static inline int rvexec_is_call(const struct rvexec_insn *i)
{
	return (i->flow == RVEXEC_FLOW_JAL || i->flow == RVEXEC_FLOW_JALR) && (i->rd == 1 || i->rd == 5);
}

static inline int rvexec_is_return(const struct rvexec_insn *i)
{
	return i->flow == RVEXEC_FLOW_JALR && (i->rs1 == 1 || i->rs1 == 5) && i->rd != 1 && i->rd != 5;
}

#endif
