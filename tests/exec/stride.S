/* SPDX-License-Identifier: MIT */
/* A strided read loop: PASSES passes over COUNT doublewords STRIDE bytes apart (-DPASSES= -DCOUNT= -DSTRIDE=),
 * the only data accesses of the program, so the L1D misses are what the analytic LRU formula of test_exec.py
 * says for the modelled cache. -DSTORE makes the access a store (sd) instead of a load. */
	.section .bss
	.balign 4096
array:	.skip COUNT * STRIDE

	.text
	.globl _start
_start:				/* runs once */
	li	s2, PASSES
	lla	s1, array
	li	t0, STRIDE
pass:				/* runs PASSES times */
	mv	a0, s1
	li	a1, COUNT
inner:				/* runs PASSES * COUNT times */
#ifdef STORE
	sd	a2, 0(a0)
#else
	ld	a2, 0(a0)
#endif
	add	a0, a0, t0
	addi	a1, a1, -1
	bnez	a1, inner
next:				/* runs PASSES times */
	addi	s2, s2, -1
	bnez	s2, pass
done:				/* runs once */
	li	a0, 0
	li	a7, 93
	ecall
