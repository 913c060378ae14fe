/* SPDX-License-Identifier: MIT */
/* Shared by the riscv64 CSR-trap tests (run by run-riscv64-trap-tests.sh under qemu-riscv64 with the riscv64
 * librvemu.so preloaded): checks that print one line each and count failures, the emulator's control API
 * found with dlsym, and a SIGILL handler of the program's own that records what it receives. */
#ifndef TRAP_TEST_H
#define TRAP_TEST_H
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "rvemu.h"

#if !defined(__riscv) || __riscv_xlen != 64
// cppcheck-suppress preprocessorErrorDirective
#error "these tests are riscv64 programs (run under qemu-riscv64)"
#endif

static int checks, failures;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		checks++;                                                                                    \
		if (cond) {                                                                                  \
			printf("ok   ");                                                                     \
		} else {                                                                                     \
			failures++;                                                                          \
			printf("FAIL (%s:%d: %s) ", __FILE__, __LINE__, #cond);                              \
		}                                                                                            \
		printf(__VA_ARGS__);                                                                         \
		printf("\n");                                                                                \
		fflush(stdout);                                                                              \
	} while (0)

static inline int trap_test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, checks, failures);
	return failures ? 1 : 0;
}

/* The control API (rvemu.h); exits when the emulator is not loaded. */
struct emu_api {
	int (*advance)(uint64_t);
	void (*get_stats)(struct rvemu_stats *);
	int (*truth_raw)(uint64_t, uint64_t *);
	int (*hpc_truth)(uint32_t, unsigned, uint64_t *);
	const char *(*model)(void);
};

static inline struct emu_api emu_api_load(void)
{
	struct emu_api a;
	a.advance = RVEMU_SYM(int (*)(uint64_t), rvemu_advance);
	a.get_stats = RVEMU_SYM(void (*)(struct rvemu_stats *), rvemu_get_stats);
	a.truth_raw = RVEMU_SYM(int (*)(uint64_t, uint64_t *), rvemu_truth_raw);
	a.hpc_truth = RVEMU_SYM(int (*)(uint32_t, unsigned, uint64_t *), rvemu_hpc_truth);
	a.model = RVEMU_SYM(const char *(*)(void), rvemu_model_name);
	if (!a.advance || !a.get_stats || !a.truth_raw || !a.hpc_truth || !a.model) {
		fprintf(stderr, "the emulator is not loaded (LD_PRELOAD a riscv64 librvemu.so)\n");
		exit(2);
	}
	return a;
}

static inline struct rvemu_stats emu_stats_now(const struct emu_api *a)
{
	struct rvemu_stats s;
	a->get_stats(&s);
	return s;
}

/* The program's own SIGILL handler: records each signal and skips the instruction (its length from the
 * first parcel, as the ISA encodes it), so the program goes on. */
struct own_traps {
	volatile sig_atomic_t count;
	volatile int last_code;
	volatile uintptr_t last_pc;
	volatile unsigned last_len;
};
static struct own_traps own;

static void own_sigill(int sig, siginfo_t *si, void *context)
{
	ucontext_t *uc = context;
	(void)sig;
	own.count++;
	own.last_code = si->si_code;
	own.last_pc = uc->uc_mcontext.__gregs[REG_PC];
	if (si->si_code <= 0) { /* sent by kill()/raise(): no instruction to skip */
		own.last_len = 0;
		return;
	}
	uint16_t lo = *(const uint16_t *)own.last_pc;
	own.last_len = (lo & 3) != 3 ? 2 : 4;
	uc->uc_mcontext.__gregs[REG_PC] += own.last_len;
}

static inline int install_own_sigill(struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGILL, &sa, old);
}

/* Run fn in a child; its wait status. */
static inline int in_child(void (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	int status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

static inline int died_of_sigill(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGILL;
}
#endif
