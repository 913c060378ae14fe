// SPDX-License-Identifier: MIT
/* The CSR-trap front end (riscv64 only; compiles to nothing elsewhere).
 *
 * Built for riscv64, the emulator runs under qemu-user, and programs execute the real csrr/csrw of seam 2
 * (lib/rvhw.c). qemu's core has no hpmcounterN a user may read and none of the custom CSRs, so those
 * instructions raise SIGILL, as on a board whose kernel did not open the counter (scounteren) or a core
 * without the CSR. This file's SIGILL handler decodes the faulting instruction; when it is a Zicsr
 * instruction (csrrw/csrrs/csrrc and the immediate forms csrrwi/csrrsi/csrrci, full-length 32-bit
 * encodings) on a CSR seam 2 knows (lib/rvhw_known.h), it carries it out through fe_csr_read/fe_csr_write,
 * the very code the exported rvhw_* functions use on x86_64 (the perf core's perf_user_counter_read for
 * the counter CSRs, the machine layer's banks for hpcc/hpcm/hpcr), writes rd in the ucontext and resumes
 * after the instruction (pc + 4).
 *
 * What it does not own goes where a board would send it: to the program's own SIGILL handler, else the
 * default action (death by SIGILL). That covers other instructions (including every 16-bit compressed one,
 * which can never be a CSR access, and the 48-bit and longer forms), CSRs seam 2 does not know, writes to
 * read-only CSRs, counters the kernel would not open to user space (perf_user_access, events the thread has
 * not mapped), a trigger with hpcc.useren = 0, CSRs the model does not have, and SIGILLs sent by kill().
 *
 * The program's sigaction()/signal() calls for SIGILL come here through the libc front end (fe_libc.c): the
 * handler is recorded as the one to chain to, and ours stays installed. Programs that install a handler with
 * a raw rt_sigaction system call replace ours (not interposable).
 *
 * Signal safety: the handler runs with every signal blocked (no handler of the program, nor the emulator's
 * tick, can interrupt a bank or the perf core halfway, nor run with SIGILL blocked; installed so that
 * qemu-user 7.2 honours the mask: install_trap_handler), uses only async-signal-safe calls plus the
 * emulator's own locks, which no code of this thread can hold when a CSR instruction traps (they are held
 * only inside the re-entry guard, mach.h, where no code of the program runs: its handlers wait). The
 * program's recorded disposition is published with a sequence counter whose writer runs with signals blocked,
 * so a reader on any thread sees a whole one.
 *
 * Blocked SIGILL: code that runs with SIGILL blocked (the program's own SIGILL handler without SA_NODEFER,
 * a handler whose sa_mask holds SIGILL) cannot have its CSR accesses emulated: the kernel (qemu) forces the
 * default action of a blocked synchronous signal, so such an access kills, where a board would execute it.
 *
 * Time: the CPU time spent in here stands for the kernel's trap handling; the CPU-time clock leaves it out
 * of the thread's cycles (emu_kernel_enter), so it is never charged to the program.
 *
 * BOOM's hints (`addi x0, rs1, tag`) cannot be trapped: they are ordinary instructions that qemu executes as
 * no-ops. Programs reach the emulated BOOM bank through seam 2's function rvhw_boom_op, which librvemu
 * exports on every architecture (docs/emulator-core.md).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "fe.h"
#include "mach.h"
#include "rvhw_known.h"

#if FE_CSR_TRAPS

/* Zicsr: opcode SYSTEM, funct3 1-3 register forms, 5-7 immediate forms (rs1 field = 5-bit zero-extended
 * immediate). The low two bits of funct3 say the operation: 1 write, 2 set bits, 3 clear bits. */
#define OPCODE_SYSTEM 0x73u
enum csr_op { CSR_WRITE = 1, CSR_SET = 2, CSR_CLEAR = 3 };

struct csr_insn {
	unsigned csr, rd, src; /* src: rs1's number, or the immediate */
	enum csr_op op;
	int immediate;
};

/* Bytes of the instruction whose first 16-bit parcel is `lo` (the ISA's length encoding): 2 for the
 * compressed forms (low bits != 11), 4 for bits 4:2 != 111, 0 for the 48-bit and longer forms. Only
 * 4-byte instructions can be CSR accesses. */
static unsigned insn_length(uint16_t lo)
{
	if ((lo & 0x3) != 0x3)
		return 2;
	if ((lo & 0x1c) != 0x1c)
		return 4;
	return 0;
}

static int decode_csr(uint32_t insn, struct csr_insn *d)
{
	unsigned funct3 = (insn >> 12) & 0x7;
	if ((insn & 0x7f) != OPCODE_SYSTEM || (funct3 & 0x3) == 0)
		return 0; /* ecall/ebreak/wfi..., or the hypervisor loads (funct3 4) */
	d->op = (enum csr_op)(funct3 & 0x3);
	d->immediate = (funct3 & 0x4) != 0;
	d->rd = (insn >> 7) & 0x1f;
	d->src = (insn >> 15) & 0x1f;
	d->csr = insn >> 20;
	return 1;
}

/* Carry out the instruction at the ucontext's pc if it is ours; 1 when done (pc moved past it). */
static int emulate(ucontext_t *uc)
{
	unsigned long *x = uc->uc_mcontext.__gregs; /* [0] is the pc, [n] is register xn */
	const uint16_t *pc = (const uint16_t *)x[REG_PC];
	struct csr_insn d;

	/* parcels are 16-bit aligned (the C extension): read the instruction one parcel at a time */
	if (insn_length(pc[0]) != 4 || !decode_csr((uint32_t)pc[0] | (uint32_t)pc[1] << 16, &d))
		return 0;
	if (!rvhw_csr_known(d.csr))
		return 0;
	uint64_t src = d.immediate ? d.src : d.src ? x[d.src] : 0;
	/* csrrs/csrrc with rs1 = x0 (or immediate 0) do not write; csrrw/csrrwi with rd = x0 do not read
	 * (so they have no read side effect, e.g. no hpcr pop) */
	int writes = d.op == CSR_WRITE || d.src != 0;
	int reads = d.op != CSR_WRITE || d.rd != 0;
	if (writes && !rvhw_csr_user_writable(d.csr))
		return 0; /* a write to a read-only CSR is an illegal instruction */
	uint64_t old = 0;
	if (reads && fe_csr_read(d.csr, &old) != RVHW_OK)
		return 0;
	if (writes) {
		uint64_t v = d.op == CSR_WRITE ? src : d.op == CSR_SET ? old | src : old & ~src;
		if (fe_csr_write(d.csr, v) != RVHW_OK)
			return 0;
	}
	if (d.rd != 0)
		x[d.rd] = old;
	x[REG_PC] += 4;
	return 1;
}

/* ---------------------------------------------------------------- the program's SIGILL disposition */
static struct {
	unsigned seq; /* odd while the writer copies */
	struct sigaction act;
} program = {0, {.sa_handler = SIG_DFL}};
static pthread_mutex_t program_writer = PTHREAD_MUTEX_INITIALIZER;
static int installed;

static void program_get(struct sigaction *out)
{
	for (;;) { /* the writer runs with signals blocked: it always finishes */
		unsigned s = __atomic_load_n(&program.seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		memcpy(out, &program.act, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&program.seq, __ATOMIC_RELAXED) == s)
			return;
	}
}

/* Replace the recorded disposition (act may be NULL) and return the previous one (old may be NULL). */
static void program_set(const struct sigaction *act, struct sigaction *old)
{
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	pthread_mutex_lock(&program_writer);
	if (old)
		memcpy(old, &program.act, sizeof(*old));
	if (act) {
		__atomic_store_n(&program.seq, program.seq + 1, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(&program.act, act, sizeof(*act));
		__atomic_store_n(&program.seq, program.seq + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&program_writer);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* What a board's kernel does with a SIGILL the emulator does not own: run the program's handler (with its
 * sa_mask and flags), else the default action. */
static void pass_on(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct sigaction pa;
	program_get(&pa);
	EMU_STAT_ADD(csr_traps_passed, 1);
	int kernel_raised = si->si_code > 0;
	if (!(pa.sa_flags & SA_SIGINFO) && (pa.sa_handler == SIG_DFL || pa.sa_handler == SIG_IGN)) {
		if (pa.sa_handler == SIG_IGN && !kernel_raised)
			return; /* an ignored SIGILL from kill() */
		/* The default action (a trap cannot be ignored: the kernel then forces the default too).
		 * Returning re-executes the instruction, which traps again and kills the process; a SIGILL
		 * from kill() is sent again, and arrives once the handler's mask is gone. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		EMU_REAL(sigaction)(SIGILL, &dfl, NULL);
		if (!kernel_raised)
			EMU_REAL(syscall)(SYS_tgkill, (long)emu_getpid(), (long)emu_gettid(), (long)SIGILL);
		return;
	}
	sigset_t mask = uc->uc_sigmask, ours;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&pa.sa_mask, s) == 1)
			sigaddset(&mask, s);
	if (!(pa.sa_flags & SA_NODEFER))
		sigaddset(&mask, SIGILL);
	if (pa.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		program_set(&dfl, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &mask, &ours);
	if (pa.sa_flags & SA_SIGINFO)
		pa.sa_sigaction(sig, si, uc);
	else
		pa.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &ours, NULL);
}

static void (*volatile trap_test_hook)(void);

EMU_EXPORT void rvemu_test_trap_hook(void (*fn)(void))
{
	trap_test_hook = fn;
}

static void trap_handler(int sig, siginfo_t *si, void *context)
{
	int saved_errno = errno;
	ucontext_t *uc = context;
	emu_kernel_enter(); /* signals are blocked here (sa_mask) */
	/* only a trap of an instruction (si_code > 0), not a SIGILL sent by kill()/tgkill()/sigqueue() */
	int done = si->si_code > 0 && emulate(uc);
	if (done)
		EMU_STAT_ADD(csr_traps, 1);
	emu_kernel_leave();
	void (*hook)(void) = trap_test_hook;
	if (done && hook)
		hook();
	if (!done)
		pass_on(sig, si, uc);
	errno = saved_errno;
}

/* The trap handler must run with every signal blocked, as the kernel's trap handling does on a board: a
 * handler that ran inside it would run with SIGILL blocked, and a csrr of its own (PAPI's ITIMER_PROF handler
 * reads its counters from user space) would then get the default action of a blocked trap, death by SIGILL.
 * qemu-user before upstream's "linux-user: Move TARGET_SA_RESTORER out of generic/signal.h" (February 2025;
 * Debian 12 has 7.2) ignores the sa_mask a riscv64 guest gives rt_sigaction: its struct
 * target_sigaction has an sa_restorer field (linux-user/generic/signal.h defines TARGET_SA_RESTORER) that
 * riscv64 Linux's struct sigaction does not have, so it takes the guest's mask for the restorer (unused
 * without SA_RESTORER) and reads the mask from the 8 bytes after it. Measured: a handler installed with
 * sa_mask = every signal runs with its own signal alone blocked, and a SIGPROF landing as a trap is
 * delivered runs on top of the trap handler with SIGILL blocked (tests/riscv64-trap/trap_nested.c).
 * So the mask is given in both places: riscv64 Linux (and a qemu without that field) reads it at offset 16
 * and nothing after it (sigsetsize 8), qemu 7.2 reads the copy at offset 24. */
struct rt_sigaction_arg {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	uint64_t mask;       /* the kernel's sa_mask (riscv64: 64 signals) */
	uint64_t mask_again; /* where qemu-user 7.2 reads sa_mask */
};
/* the layout above is riscv64's (and any 64-bit Linux without SA_RESTORER): pointers and longs of 8 bytes */
_Static_assert(sizeof(void *) == 8 && sizeof(unsigned long) == 8, "struct rt_sigaction_arg assumes LP64");

static int install_trap_handler(void)
{
	sigset_t all;
	sigfillset(&all); /* every signal but glibc's internal ones (thread cancellation, setxid) */
	struct rt_sigaction_arg k = {trap_handler, SA_SIGINFO | SA_ONSTACK | SA_RESTART, 0, 0};
	memcpy(&k.mask, &all, sizeof(k.mask));
	k.mask_again = k.mask;
	long r = EMU_REAL(syscall)(SYS_rt_sigaction, (long)SIGILL, &k, NULL, (long)sizeof(k.mask));
	return r == 0 ? 0 : -1;
}

void fe_trap_install(void)
{
	struct sigaction prev;
	if (EMU_REAL(sigaction)(SIGILL, NULL, &prev) != 0 || install_trap_handler() != 0)
		return; /* the program keeps plain hardware behaviour: every CSR trap is its own */
	if (prev.sa_sigaction != trap_handler)
		program_set(&prev, NULL); /* SIG_IGN survives exec; a handler of an earlier preload */
	__atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
}

int fe_trap_sigaction(const struct sigaction *act, struct sigaction *old)
{
	if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
		return EMU_REAL(sigaction)(SIGILL, act, old);
	program_set(act, old);
	return 0;
}

#else /* no CSR instructions to trap: programs call the exported rvhw_* functions */

EMU_EXPORT void rvemu_test_trap_hook(void (*fn)(void))
{
	(void)fn; /* no trap handler to run it in */
}

void fe_trap_install(void)
{
}

int fe_trap_sigaction(const struct sigaction *act, struct sigaction *old)
{
	return EMU_REAL(sigaction)(SIGILL, act, old);
}

#endif
