// SPDX-License-Identifier: MIT
/* The CSR-trap front end instruction by instruction (model lowrisc-hpc, whose hpcc/hpcm/hpcr qemu does not
 * have): every Zicsr form on the HPC CSRs is carried out and resumed after, with rd = x0 and rs1 = x0 /
 * immediate 0 meaning what the ISA says (no read, no write); writes to the read-only hpcr, unknown CSRs,
 * other illegal instructions (32-bit and compressed) and SIGILLs sent by raise() reach the program's own
 * handler, which ours stays in front of when the program (re)installs it with sigaction() or signal();
 * without a handler the program dies of SIGILL as on a board. Each trap is counted in the emulator's
 * statistics (csr_traps, csr_traps_passed). */
#include "rvhw.h"
#include "trap_test.h"

/* hpcm (0x801) is user read-write while no request is active: a plain register for these tests. */
static uint64_t hpcm_read(void)
{
	uint64_t v;
	__asm__ __volatile__("csrr %0, 0x801" : "=r"(v));
	return v;
}

static void test_forms(const struct emu_api *api)
{
	struct rvemu_stats s0 = emu_stats_now(api), s1;
	uint64_t old, src;

	__asm__ __volatile__("csrwi 0x801, 5" ::: "memory"); /* csrrwi x0: write only */
	CHECK(hpcm_read() == 5, "csrrwi x0, hpcm, 5 then csrr: hpcm = %llu", (unsigned long long)hpcm_read());
	__asm__ __volatile__("csrrsi %0, 0x801, 2" : "=r"(old)::"memory");
	CHECK(old == 5 && hpcm_read() == 7, "csrrsi: old %llu, new %llu (want 5, 7)", (unsigned long long)old,
	      (unsigned long long)hpcm_read());
	__asm__ __volatile__("csrrci %0, 0x801, 1" : "=r"(old)::"memory");
	CHECK(old == 7 && hpcm_read() == 6, "csrrci: old %llu, new %llu (want 7, 6)", (unsigned long long)old,
	      (unsigned long long)hpcm_read());
	src = 0x30;
	__asm__ __volatile__("csrrw %0, 0x801, %1" : "=&r"(old) : "r"(src) : "memory");
	CHECK(old == 6 && hpcm_read() == 0x30, "csrrw: old %llu, new 0x%llx (want 6, 0x30)",
	      (unsigned long long)old, (unsigned long long)hpcm_read());
	src = 0x0f;
	__asm__ __volatile__("csrrs %0, 0x801, %1" : "=&r"(old) : "r"(src) : "memory");
	CHECK(old == 0x30 && hpcm_read() == 0x3f, "csrrs: old 0x%llx, new 0x%llx (want 0x30, 0x3f)",
	      (unsigned long long)old, (unsigned long long)hpcm_read());
	src = 0x21;
	__asm__ __volatile__("csrrc %0, 0x801, %1" : "=&r"(old) : "r"(src) : "memory");
	CHECK(old == 0x3f && hpcm_read() == 0x1e, "csrrc: old 0x%llx, new 0x%llx (want 0x3f, 0x1e)",
	      (unsigned long long)old, (unsigned long long)hpcm_read());
	/* rd = rs1: the source is read before rd is written */
	uint64_t same = 0x44;
	__asm__ __volatile__("csrrw %0, 0x801, %0" : "+r"(same)::"memory");
	CHECK(same == 0x1e && hpcm_read() == 0x44, "csrrw rd = rs1: rd 0x%llx, hpcm 0x%llx (want 0x1e, 0x44)",
	      (unsigned long long)same, (unsigned long long)hpcm_read());
	/* csrrs rd, hpcc, x0: a pure read (hpcc is writable, but rs1 = x0 writes nothing) */
	uint64_t hpcc;
	__asm__ __volatile__("csrrs %0, 0x800, x0" : "=r"(hpcc)::"memory");
	CHECK((hpcc & RVHW_HPCC_USEREN) && !(hpcc & RVHW_HPCC_TRIGGER),
	      "csrrs rd, hpcc, x0: 0x%llx (useren, no trigger)", (unsigned long long)hpcc);
	s1 = emu_stats_now(api);
	/* 8 forms + 7 hpcm reads of the checks' left sides (the CHECK messages read again: counted below) */
	CHECK(s1.csr_traps > s0.csr_traps && s1.csr_traps_passed == s0.csr_traps_passed,
	      "csr_traps grew by %llu, none passed on", (unsigned long long)(s1.csr_traps - s0.csr_traps));
	s0 = emu_stats_now(api);
	__asm__ __volatile__("csrrsi %0, 0x801, 0" : "=r"(old)::"memory"); /* immediate 0: pure read */
	s1 = emu_stats_now(api);
	CHECK(old == 0x44 && s1.csr_traps - s0.csr_traps == 1 && s1.csr_reads - s0.csr_reads == 1 &&
	          s1.csr_writes == s0.csr_writes,
	      "csrrsi rd, hpcm, 0: one trap, one read, no write (value 0x%llx)", (unsigned long long)old);
	s0 = emu_stats_now(api);
	__asm__ __volatile__("csrw 0x801, %0" ::"r"(src) : "memory"); /* csrrw x0: no read */
	s1 = emu_stats_now(api);
	CHECK(s1.csr_traps - s0.csr_traps == 1 && s1.csr_reads == s0.csr_reads &&
	          s1.csr_writes - s0.csr_writes == 1,
	      "csrrw x0, hpcm, rs1: one trap, no read, one write");
}

/* A request to this hart's manager, then hpcr pops: csrrs x0, hpcr, x0 still reads (pops one value). */
static void test_hpcr_pops(const struct emu_api *api)
{
	uint64_t id = RVHW_HPC_MANAGER_ID(0, 0), v0, v2, hpcc = 0, want0, want2;
	api->advance(1000000);
	__asm__ __volatile__("csrw 0x800, zero\n\t" /* cancel anything pending */
	                     "csrw 0x801, %0\n\t"
	                     "csrw 0x800, %1" ::"r"(0x7ull),
	                     "r"((id << RVHW_HPCC_ID_SHIFT) | RVHW_HPCC_USEREN | RVHW_HPCC_TRIGGER)
	                     : "memory");
	for (int i = 0; i < 100000; i++) { /* wait until all three values are queued (hpcm refilled) */
		__asm__ __volatile__("csrr %0, 0x800" : "=r"(hpcc)::"memory");
		if (!(hpcc & RVHW_HPCC_TRIGGER))
			break;
		api->advance(10);
	}
	CHECK(!(hpcc & RVHW_HPCC_TRIGGER), "the HPC request completed (hpcc 0x%llx)",
	      (unsigned long long)hpcc);
	__asm__ __volatile__("csrr %0, 0xcc0" : "=r"(v0)::"memory");
	__asm__ __volatile__("csrrs x0, 0xcc0, x0" ::: "memory"); /* pops counter 1, discarded */
	__asm__ __volatile__("csrrsi %0, 0xcc0, 0" : "=r"(v2)::"memory");
	api->hpc_truth((uint32_t)id, 0, &want0);
	api->hpc_truth((uint32_t)id, 2, &want2);
	/* the values were latched at the request; the truth now is at most a few CSR cycles later */
	CHECK(v0 <= want0 && v2 <= want2 && v2 > 0,
	      "hpcr pops counters 0 and 2 (%llu, %llu; truth now %llu, %llu)", (unsigned long long)v0,
	      (unsigned long long)v2, (unsigned long long)want0, (unsigned long long)want2);
}

static void write_hpcr(void)
{
	__asm__ __volatile__("csrw 0xcc0, %0" ::"r"(1ull) : "memory");
}

static void unknown_csr(void)
{
	uint64_t v;
	__asm__ __volatile__("csrr %0, 0x802" : "=r"(v)::"memory");
}

static void set_bits_in_hpcr(void)
{
	uint64_t v;
	__asm__ __volatile__("csrrsi %0, 0xcc0, 1" : "=r"(v)::"memory"); /* a write to a read-only CSR */
}

static void illegal_32bit(void)
{
	__asm__ __volatile__(".4byte 0x0000007b" ::: "memory"); /* custom-3 opcode: no such instruction */
}

static void illegal_16bit(void)
{
	__asm__ __volatile__(".2byte 0x0000" ::: "memory"); /* the defined illegal compressed instruction */
}

static void expect_own(const struct emu_api *api, void (*fn)(void), const char *what, unsigned len)
{
	struct rvemu_stats s0 = emu_stats_now(api), s1;
	int before = own.count;
	fn();
	s1 = emu_stats_now(api);
	CHECK(own.count == before + 1 && own.last_code == ILL_ILLOPC && own.last_len == len &&
	          s1.csr_traps == s0.csr_traps && s1.csr_traps_passed - s0.csr_traps_passed == 1,
	      "%s: the program's handler got it (si_code %d, length %u), emulator passed it on", what,
	      own.last_code, own.last_len);
}

static void test_chaining(const struct emu_api *api)
{
	struct sigaction old, now;
	CHECK(install_own_sigill(&old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL,
	      "sigaction(SIGILL) returns the program's previous disposition (SIG_DFL), not the emulator's");
	expect_own(api, write_hpcr, "csrw hpcr (read-only)", 4);
	expect_own(api, set_bits_in_hpcr, "csrrsi rd, hpcr, 1 (a write to read-only)", 4);
	expect_own(api, unknown_csr, "csrr 0x802 (a CSR nobody has)", 4);
	expect_own(api, illegal_32bit, ".4byte 0x7b (illegal 32-bit)", 4);
	expect_own(api, illegal_16bit, ".2byte 0 (illegal compressed)", 2);
	/* while the program's handler is installed, ours still serves the HPC CSRs */
	struct rvemu_stats s0 = emu_stats_now(api);
	int before = own.count;
	uint64_t v = hpcm_read();
	struct rvemu_stats s1 = emu_stats_now(api);
	CHECK(own.count == before && s1.csr_traps - s0.csr_traps == 1,
	      "with the program's handler installed, csrr hpcm is still emulated (0x%llx)",
	      (unsigned long long)v);
	/* raise(SIGILL): not an instruction: the program's handler gets it as sent */
	before = own.count;
	raise(SIGILL);
	CHECK(own.count == before + 1 && own.last_code == SI_TKILL,
	      "raise(SIGILL) reaches the program's handler (si_code %d)", own.last_code);
	/* signal() replaces the program's handler: the old one is returned, ours stays in front */
	sighandler_t prev = signal(SIGILL, SIG_DFL);
	CHECK((void *)prev == (void *)own_sigill, "signal(SIGILL, SIG_DFL) returns the program's handler");
	CHECK(sigaction(SIGILL, NULL, &now) == 0 && now.sa_handler == SIG_DFL,
	      "sigaction(SIGILL, NULL) reads SIG_DFL back");
	s0 = emu_stats_now(api);
	v = hpcm_read();
	s1 = emu_stats_now(api);
	CHECK(s1.csr_traps - s0.csr_traps == 1 && v == 0x7,
	      "after the program set SIG_DFL, csrr hpcm is still emulated (0x%llx)", (unsigned long long)v);
	CHECK(install_own_sigill(NULL) == 0, "the program installs its handler again");
}

static void child_default_unknown_csr(void)
{
	signal(SIGILL, SIG_DFL);
	unknown_csr();
}

static void child_ignored_unknown_csr(void)
{
	signal(SIGILL, SIG_IGN);
	unknown_csr(); /* a trap cannot be ignored: the kernel forces the default action */
}

static void child_resethand(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_sigill;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGILL, &sa, NULL);
	unknown_csr(); /* handled once */
	if (own.count != 1)
		_exit(3);
	unknown_csr(); /* SA_RESETHAND: now the default action */
	_exit(4);
}

static void child_hpc_then_unknown(void)
{
	uint64_t v = hpcm_read(); /* emulated */
	(void)v;
	unknown_csr(); /* no handler: death */
}

static void test_default_action(void)
{
	int st = in_child(child_default_unknown_csr);
	CHECK(died_of_sigill(st), "no handler (SIG_DFL): an unknown CSR kills with SIGILL (status 0x%x)", st);
	st = in_child(child_ignored_unknown_csr);
	CHECK(died_of_sigill(st), "SIG_IGN: a trap still kills with SIGILL (status 0x%x)", st);
	st = in_child(child_resethand);
	CHECK(died_of_sigill(st), "SA_RESETHAND: handled once, then the default action (status 0x%x)", st);
	st = in_child(child_hpc_then_unknown);
	CHECK(died_of_sigill(st), "a child emulates hpcm, then dies of its unknown CSR (status 0x%x)", st);
}

int main(void)
{
	struct emu_api api = emu_api_load();
	if (strcmp(api.model(), "lowrisc-hpc") != 0) {
		fprintf(stderr, "trap_csr: run with RVEMU_MODEL=lowrisc-hpc (got %s)\n", api.model());
		return 2;
	}
	test_default_action(); /* first: the program has installed no handler yet */
	test_forms(&api);
	test_hpcr_pops(&api);
	test_chaining(&api);
	return trap_test_done("trap_csr");
}
