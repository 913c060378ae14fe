/* SPDX-License-Identifier: MIT */
/* Every instruction class of the exec-count plugin, compressed and full-size forms, in a loop of ITERS
 * iterations (-DITERS=n). test_exec.py derives the expected counts from this file's disassembly: each label
 * starts a region, and the test knows how often each region runs (its comment here says it). */
	.section .bss
	.balign 64
buf:	.skip 64

	.text
	.globl _start
_start:				/* runs once */
	li	s0, ITERS
	lla	s1, buf
	li	a3, 3
	fcvt.d.l fa0, a3
	fmv.d	fa1, fa0
loop:				/* runs ITERS times (s0 = ITERS .. 1) */
	ld	a4, 0(s1)
	lw	a5, 8(s1)
	sd	a4, 16(s1)
	sw	a5, 24(s1)
	lbu	t0, 1(s1)
	sh	t0, 26(s1)
	fld	fa2, 32(s1)
	fsd	fa2, 40(s1)
	flw	ft0, 48(s1)
	fsw	ft0, 52(s1)
	fadd.d	fa3, fa0, fa1
	fsub.d	fa3, fa3, fa1
	fmul.d	fa4, fa0, fa1
	fmadd.d	fa5, fa0, fa1, fa2
	fnmsub.d fa5, fa0, fa1, fa5
	fdiv.d	fa6, fa0, fa1
	fsqrt.d	fa7, fa0
	fcvt.w.d t2, fa0
	fcvt.s.d ft1, fa0
	feq.d	t2, fa0, fa1
	fmin.d	fa6, fa0, fa1
	fmv.x.d	t2, fa0
	mul	t2, a4, a5
	mulw	t2, a4, a5
	mulhu	t2, a4, a5
	div	t2, s0, a3
	remu	t2, s0, a3
	divw	t2, s0, a3
	amoadd.d t2, a3, (s1)
	amoswap.w t2, a3, (s1)
	lr.d	t2, (s1)
	sc.d	t2, a3, (s1)
	frcsr	t2
	csrr	t2, fflags
	fence
	fence.i
	lui	t3, 0x12
	auipc	t4, 0
	slli	t3, t3, 3
	sub	t3, t3, a3
	addw	t3, t3, a3
	andi	a2, s0, 1
	beqz	a2, even
odd:				/* runs (ITERS + 1) / 2 times: s0 odd */
	addi	t5, t5, 1
	xor	t6, t5, s0
	c.mv	t1, t6
even:				/* runs ITERS times */
	jal	ra, func
	lla	t0, func2
	jalr	ra, 0(t0)
	li	a7, 172		/* getpid */
	ecall
	addi	s0, s0, -1
	bnez	s0, loop
done:				/* runs once */
	li	a0, 0
	li	a7, 93		/* exit */
	ecall
func:				/* runs ITERS times */
	add	t5, t5, a3
	ret
func2:				/* runs ITERS times */
	addi	t5, t5, -1
	jr	ra
