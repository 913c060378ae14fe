/* SPDX-License-Identifier: MIT */
/* Between the front ends' own files only. */
#ifndef EMU_FE_H
#define EMU_FE_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* The text of a served /proc or /sys file. */
struct fe_text {
	char text[16384];
	size_t len;
};
/* 1: `path` is ours and b holds its text (or *is_dir); 0: not ours; -ENOENT: hidden host entry. */
int fe_file_content(const char *path, struct fe_text *b, int *is_dir);
/* The same answer, built once per path and kept (the files never change): result as fe_file_content's, the
 * text of a served file (none for a directory or an error). *to_free is set when the answer could not be
 * kept: free it after use. Never NULL. */
struct fe_answer {
	int result, is_dir;
	size_t len;
	const char *path;
	char text[];
};
const struct fe_answer *fe_file_answer(const char *path, struct fe_answer **to_free);
/* The entries of a served directory (readdir order) into names[max]: their number, 0 when the directory
 * is not one whose listing we serve, -ENOENT when it does not exist on this machine. */
#define FE_NAME_MAX 32
int fe_dir_listing(const char *path, char names[][FE_NAME_MAX], int max);

/* The /proc and /sys front end's (fe_vfs.c) served-directory lock, for fork only: fe_libc.c's one
 * fork_prepare takes it after maps_lock and before the perf lock (maps_lock -> dirs_lock -> perf lock ->
 * bank locks -> thread registry), and its parent and child handlers release it. */
void fe_vfs_fork_lock(void);
void fe_vfs_fork_unlock(void);

/* Seam 2's CSR accesses as the emulated machine answers them (fe_csr.c): RVHW_OK, RVHW_EINVAL (unknown CSR),
 * RVHW_EPERM (the access traps on hardware), RVHW_ENOHW (this machine has no such CSR). */
int fe_csr_read(unsigned csr, uint64_t *value);
int fe_csr_write(unsigned csr, uint64_t value);
/* 1 on riscv64: CSR instructions are real and trap into fe_trap.c (the emulator then runs under qemu-user);
 * 0 elsewhere: programs reach the emulated CSRs through the exported rvhw_* functions only. */
#if defined(__riscv) && __riscv_xlen == 64
#define FE_CSR_TRAPS 1
#else
#define FE_CSR_TRAPS 0
#endif
/* The CSR-trap front end (fe_trap.c): installs its SIGILL handler at load (no-op without FE_CSR_TRAPS), and
 * serves the program's sigaction()/signal() calls for SIGILL. */
void fe_trap_install(void);
int fe_trap_sigaction(const struct sigaction *act, struct sigaction *old);
/* The program's sigaction() for every other signal (fe_signal.c): its handlers run behind the re-entry
 * guard's trampoline, deferred while the thread is inside the emulator. */
int fe_signal_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
#endif
