// SPDX-License-Identifier: MIT
/* Instruction classes from the RISC-V unprivileged ISA's opcode map (RV64GC): major opcode in bits 6:2 of a
 * 32-bit instruction; for a 16-bit one, the quadrant (bits 1:0) and funct3 (bits 15:13). */
#include "rvexec_decode.h"
#include "rvexec_shm.h"

static void set(struct rvexec_insn *out, enum rvexec_count count, enum rvexec_flow flow, unsigned rd,
                unsigned rs1)
{
	out->count = (uint8_t)count;
	out->flow = (uint8_t)flow;
	out->rd = (uint8_t)rd;
	out->rs1 = (uint8_t)rs1;
}

static void decode_compressed(uint16_t c, struct rvexec_insn *out)
{
	unsigned quadrant = c & 3, funct3 = c >> 13, rd = (c >> 7) & 31, rs2 = (c >> 2) & 31,
	         bit12 = (c >> 12) & 1;

	switch (quadrant << 3 | funct3) {
	case 000: /* c.addi4spn; all-zero bits are the defined illegal instruction */
		set(out, c == 0 ? RVEXEC_OTHER : RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 001: /* c.fld */
		set(out, RVEXEC_FP_LOAD, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 002: /* c.lw */
	case 003: /* c.ld */
		set(out, RVEXEC_INT_LOAD, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 005: /* c.fsd */
		set(out, RVEXEC_FP_STORE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 006: /* c.sw */
	case 007: /* c.sd */
		set(out, RVEXEC_INT_STORE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 010: /* c.addi, c.nop */
	case 011: /* c.addiw */
	case 012: /* c.li */
	case 013: /* c.addi16sp, c.lui */
	case 014: /* c.srli, c.srai, c.andi, c.sub, c.xor, c.or, c.and, c.subw, c.addw */
		set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 015: /* c.j */
		set(out, RVEXEC_JAL, RVEXEC_FLOW_JAL, 0, 0);
		return;
	case 016: /* c.beqz */
	case 017: /* c.bnez */
		set(out, RVEXEC_BRANCH, RVEXEC_FLOW_BRANCH, 0, 0);
		return;
	case 020: /* c.slli */
		set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 021: /* c.fldsp */
		set(out, RVEXEC_FP_LOAD, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 022: /* c.lwsp */
	case 023: /* c.ldsp */
		set(out, RVEXEC_INT_LOAD, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 024:
		if (bit12 == 0 && rs2 == 0) /* c.jr */
			set(out, RVEXEC_JALR, RVEXEC_FLOW_JALR, 0, rd);
		else if (bit12 == 0) /* c.mv */
			set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		else if (rd == 0 && rs2 == 0) /* c.ebreak */
			set(out, RVEXEC_SYSTEM, RVEXEC_FLOW_NONE, 0, 0);
		else if (rs2 == 0) /* c.jalr */
			set(out, RVEXEC_JALR, RVEXEC_FLOW_JALR, 1, rd);
		else /* c.add */
			set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 025: /* c.fsdsp */
		set(out, RVEXEC_FP_STORE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 026: /* c.swsp */
	case 027: /* c.sdsp */
		set(out, RVEXEC_INT_STORE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	default: /* 004: reserved */
		set(out, RVEXEC_OTHER, RVEXEC_FLOW_NONE, 0, 0);
		return;
	}
}

/* OP-FP (opcode 0x53): the operation is funct5 = bits 31:27. */
static enum rvexec_count fp_op(uint32_t w)
{
	switch (w >> 27) {
	case 0x00: /* fadd */
	case 0x01: /* fsub */
		return RVEXEC_FP_ADD;
	case 0x02:
		return RVEXEC_FP_MUL;
	case 0x03:
		return RVEXEC_FP_DIV;
	case 0x0b:
		return RVEXEC_FP_SQRT;
	case 0x08: /* fcvt between precisions */
	case 0x18: /* fcvt to integer */
	case 0x1a: /* fcvt from integer */
		return RVEXEC_FP_CVT;
	case 0x04: /* fsgnj* */
	case 0x05: /* fmin, fmax */
	case 0x14: /* feq, flt, fle */
	case 0x1c: /* fmv.x.*, fclass */
	case 0x1e: /* fmv.*.x */
		return RVEXEC_FP_OTHER;
	default:
		return RVEXEC_OTHER;
	}
}

void rvexec_decode(const uint8_t *bytes, size_t size, struct rvexec_insn *out)
{
	out->rd = out->rs1 = 0;
	out->flow = RVEXEC_FLOW_NONE;
	if (size < 2) {
		out->length = (uint8_t)size;
		out->count = RVEXEC_OTHER;
		return;
	}
	uint16_t low = (uint16_t)(bytes[0] | bytes[1] << 8);
	if ((low & 3) != 3) {
		out->length = 2;
		decode_compressed(low, out);
		return;
	}
	out->length = 4;
	if (size < 4) {
		out->count = RVEXEC_OTHER;
		return;
	}
	uint32_t w = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 |
	             (uint32_t)bytes[3] << 24;
	unsigned opcode = w & 0x7f, rd = (w >> 7) & 31, funct3 = (w >> 12) & 7, rs1 = (w >> 15) & 31;
	unsigned funct7 = w >> 25;

	switch (opcode) {
	case 0x03:
		set(out, RVEXEC_INT_LOAD, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x07: /* flh/flw/fld/flq; the other widths are vector loads */
		set(out, funct3 >= 1 && funct3 <= 4 ? RVEXEC_FP_LOAD : RVEXEC_OTHER, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x0f: /* fence, fence.i */
		set(out, RVEXEC_FENCE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x13: /* OP-IMM */
	case 0x17: /* auipc */
	case 0x1b: /* OP-IMM-32 */
	case 0x37: /* lui */
		set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x23:
		set(out, RVEXEC_INT_STORE, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x27:
		set(out, funct3 >= 1 && funct3 <= 4 ? RVEXEC_FP_STORE : RVEXEC_OTHER, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x2f: /* A: funct5 2 = lr, 3 = sc, the rest are amo* */
		switch (w >> 27) {
		case 2:
			set(out, RVEXEC_LR, RVEXEC_FLOW_NONE, 0, 0);
			return;
		case 3:
			set(out, RVEXEC_SC, RVEXEC_FLOW_NONE, 0, 0);
			return;
		default:
			set(out, RVEXEC_AMO, RVEXEC_FLOW_NONE, 0, 0);
			return;
		}
	case 0x33: /* OP: funct7 1 is M (mul, mulh, mulhsu, mulhu, div, divu, rem, remu) */
	case 0x3b: /* OP-32: mulw, divw, divuw, remw, remuw */
		if (funct7 == 1)
			set(out, funct3 < 4 ? RVEXEC_MUL : RVEXEC_DIV, RVEXEC_FLOW_NONE, 0, 0);
		else
			set(out, RVEXEC_INT_ALU, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x43: /* fmadd */
	case 0x47: /* fmsub */
	case 0x4b: /* fnmsub */
	case 0x4f: /* fnmadd */
		set(out, RVEXEC_FP_FMA, RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x53:
		set(out, fp_op(w), RVEXEC_FLOW_NONE, 0, 0);
		return;
	case 0x63:
		set(out, RVEXEC_BRANCH, RVEXEC_FLOW_BRANCH, 0, 0);
		return;
	case 0x67:
		set(out, RVEXEC_JALR, RVEXEC_FLOW_JALR, rd, rs1);
		return;
	case 0x6f:
		set(out, RVEXEC_JAL, RVEXEC_FLOW_JAL, rd, 0);
		return;
	case 0x73: /* funct3 0: ecall, ebreak, xret, wfi, sfence.vma; 4 is reserved; the rest are csrr* */
		if (funct3 == 0)
			set(out, RVEXEC_SYSTEM, RVEXEC_FLOW_NONE, 0, 0);
		else
			set(out, funct3 == 4 ? RVEXEC_OTHER : RVEXEC_CSR, RVEXEC_FLOW_NONE, 0, 0);
		return;
	default:
		set(out, RVEXEC_OTHER, RVEXEC_FLOW_NONE, 0, 0);
		return;
	}
}
