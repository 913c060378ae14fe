/* SPDX-License-Identifier: MIT */
/* librvemu control API: what tests and tools use to drive the emulated machine and read its ground truth.
 *
 * Nothing links against librvemu.so. Programs run under it (LD_PRELOAD, see rvemu-run) and find these
 * functions with dlsym(RTLD_DEFAULT, "rvemu_advance") etc.; RVEMU_SYM() below does that in one line.
 * When the emulator is not loaded the lookup returns NULL and the program knows it runs on real hardware.
 *
 * Counts are per thread ("task" in perf terms). In virtual-clock mode (RVEMU_CLOCK=virtual) a thread's
 * clock advances only through rvemu_advance(); otherwise it follows the thread's CPU time at the model's
 * frequency. Every event count is floor(cycles * rate / 1e9) + what was injected, exactly.
 */
#ifndef RVEMU_H
#define RVEMU_H
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RVEMU_API_VERSION 1

/* librvemu.so is built with hidden visibility: only what this header (and rvhw.h, and the interposed libc
 * entry points) declares is exported. */
#define RVEMU_API __attribute__((visibility("default")))

struct rvemu_stats {
	uint64_t syscalls_emulated;  /* perf_event_open and the file operations on emulated fds */
	uint64_t syscalls_forwarded; /* calls on other fds / other syscall numbers passed to libc */
	uint64_t csr_reads, csr_writes, boom_ops;
	uint64_t interrupts;      /* counter-overflow interrupts raised */
	uint64_t signals;         /* signals delivered for overflows */
	uint64_t samples_written; /* PERF_RECORD_SAMPLE records put into ring buffers */
	uint64_t samples_lost;    /* samples that did not fit (reported as PERF_RECORD_LOST) */
	uint64_t multiplex_rotations;
	uint64_t hpc_requests, hpc_readerrors, hpc_interruptions;
	uint64_t throttles;      /* events throttled at perf_event_max_sample_rate (PERF_RECORD_THROTTLE) */
	uint64_t pes_records;    /* Precise Event Sampling records the PES unit appended */
	uint64_t pes_interrupts; /* PES buffer-fill interrupts (one per full buffer, not per sample) */
	uint64_t
	    kernel_samples_dropped; /* interrupts taken in the (emulated) kernel for exclude_kernel events */
	/* riscv64 (under qemu-user) only: the CSR-trap front end (docs/emulator-core.md) */
	uint64_t csr_traps; /* SIGILLs of CSR instructions the emulator carried out (and resumed after) */
	uint64_t
	    csr_traps_passed; /* SIGILLs it did not own, handed to the program's handler or default action */
	uint64_t
	    signals_deferred; /* signals that landed while their thread was inside the emulator, delivered
	                       * as it left (the re-entry guard: a system call is atomic for handlers) */
};

/* One Precise Event Sampling record as the emulated PES unit writes it into its buffer (docs/pes.md): a
 * fixed 64 bytes, versioned, in the spirit of the RISC-V Performance Event Sampling task group's draft. */
#define RVEMU_PES_RECORD_VERSION 1
#define RVEMU_PES_COUNTERS       5
struct rvemu_pes_record {
	uint16_t version; /* RVEMU_PES_RECORD_VERSION */
	uint8_t counter;  /* which counter reached its threshold: CSR - 0xC00 (0 cycle, 2 instret, 3.. hpm) */
	uint8_t priv;     /* privilege mode of the sampled instruction: 0 U, 1 S, 3 M */
	uint32_t hart;    /* hart id */
	uint64_t pc;      /* the instruction that caused the event (no skid) */
	uint64_t time;    /* the time CSR's timestamp, in ns of the perf clock */
	uint64_t counters[RVEMU_PES_COUNTERS]; /* cycle, instret, mhpmcounter3..5 at the sample */
};

/* Library version of this API (RVEMU_API_VERSION). */
RVEMU_API int rvemu_api_version(void);
/* Name of the active model ("sifive-u74", "cva6", "lowrisc-hpc", "boom"). */
RVEMU_API const char *rvemu_model_name(void);
/* Virtual-clock mode: advance the calling thread by `cycles` (all its events advance by their rates,
 * counters overflow and sample as on hardware). Returns 0, or -1 when the clock is not virtual. */
RVEMU_API int rvemu_advance(uint64_t cycles);
/* Add `count` occurrences of a core event (name as in events/, e.g. "FP_LOAD_RETIRED") to the calling
 * thread, on top of its rate. Returns 0 or -1 for an unknown name. */
RVEMU_API int rvemu_inject(const char *event, uint64_t count);
/* Ground truth: occurrences of `event` in the calling thread since it started (privilege levels: all).
 * For a U74 class mask, pass the mhpmevent encoding with rvemu_truth_raw(). */
RVEMU_API int rvemu_truth(const char *event, uint64_t *count);
RVEMU_API int rvemu_truth_raw(uint64_t mhpmevent, uint64_t *count);
/* Cycles the calling thread has run on the emulated core. */
RVEMU_API uint64_t rvemu_thread_cycles(void);
RVEMU_API void rvemu_get_stats(struct rvemu_stats *out);
RVEMU_API void rvemu_reset_stats(void);
/* For tests of the signal front end: `fn` runs on a thread whose SA_RESETHAND signal the emulator deferred,
 * after the trampoline read the program's disposition and before it puts the handler back for the queued
 * copy: the window in which another thread's sigaction can change the disposition. NULL: none (default). */
RVEMU_API void rvemu_test_resethand_hook(void (*fn)(int sig));
/* For tests of the run across processes: the child of the caller's next fork() reads one byte from `fd`
 * before it registers in the run's table (its FORK record and first sample come after), so a test can make
 * its parent act first (reap an older child whose pid it got, exit and leave it to a reaper) without timing.
 * Once: the next fork clears it. -1: none (default). */
RVEMU_API void rvemu_test_fork_gate(int fd);
/* The same, but the child reads the byte while it holds the run table's lock, after it wrote one byte to
 * `ready_fd`: a test can kill a holder inside the lock's section (another process must then take the lock
 * over, also once the dead holder's pid is a new process's). The parent's fork() takes the lock as it
 * returns (the child's slot, its FORK record): hold the child with rvemu_test_fork_gate as well and release
 * that gate once fork returned, or the parent may wait for the child that waits for it. Once, as
 * rvemu_test_fork_gate. */
RVEMU_API void rvemu_test_fork_gate_in_lock(int gate_fd, int ready_fd);
/* For tests of the run across processes: the next task of this process whose exit path takes the right to
 * write its own PERF_RECORD_EXIT then writes one byte to `ready_fd` and reads one from `gate_fd`, before
 * writing the record, so a test can kill it there (SIGKILL inside its exit path: the kernel still writes
 * its EXIT; here the first process of the run to see it gone must). Once. -1: none (default). */
RVEMU_API void rvemu_test_exit_gate(int gate_fd, int ready_fd);
/* For tests of the CPU-time clock: one emulator call during which the calling thread's wall clock runs `ns`
 * further than its CPU time, as when a VM's vCPU is descheduled by its host (steal time, unseen by the
 * guest). That time is not the emulator's: it must not come off the thread's user cycles. */
RVEMU_API void rvemu_test_steal(uint64_t ns);
/* The same steal while the calling thread runs its own code, not inside an emulator call: it must not come
 * off the cycles of the thread's next window either. */
RVEMU_API void rvemu_test_steal_user(uint64_t ns);
/* For tests of the CSR-trap front end (riscv64 under qemu-user; never called elsewhere): `fn` runs inside the
 * SIGILL handler of each trapped CSR access the emulator carried out, after the access, as a signal that
 * lands while the instruction is being emulated would run there (a test raises one from it). NULL: none
 * (default). */
RVEMU_API void rvemu_test_trap_hook(void (*fn)(void));

/* Distributed HPC (model lowrisc-hpc). */
/* Ground truth of one HPC counter: manager id (RVHW_HPC_MANAGER_ID) and hpcm bit. */
RVEMU_API int rvemu_hpc_truth(uint32_t manager_id, unsigned bit, uint64_t *value);
/* Make the next N HPC requests of the calling thread see a context switch mid-request. */
RVEMU_API void rvemu_hpc_force_interrupt(unsigned n);
/* What the OS would do: set or clear hpcc.useren for the calling thread (user writes cannot). */
RVEMU_API void rvemu_hpc_set_useren(int on);
/* Make the next N hpcr reads of the calling thread find the FIFO empty (stale value, readerror set). */
RVEMU_API void rvemu_hpc_force_empty_pop(unsigned n);
/* Requests issued to one manager since the process started (all threads). 0, or -1 for an unknown id. */
RVEMU_API int rvemu_hpc_manager_requests(uint32_t manager_id, uint64_t *count);

/* BOOM bank (model boom): ground truth of counter n for the calling process (ignores procTag/maxPriv). */
RVEMU_API int rvemu_boom_truth(unsigned counter, uint64_t *value);
/* BOOM bank under the exec count source: how many threads' executed-count state is allocated now (each is
 * freed when its thread exits; tests/exec/test_exec_source.c checks it). */
RVEMU_API unsigned rvemu_boom_exec_states(void);
/* The same, counting only the privilege levels pfc_maxPriv = max_priv selects (0 user, 1 and 2 user +
 * supervisor, 3 all). */
RVEMU_API int rvemu_boom_truth_priv(unsigned counter, unsigned max_priv, uint64_t *value);

#define RVEMU_SYM(type, name) ((type)dlsym(RTLD_DEFAULT, #name))

#ifdef __cplusplus
}
#endif
#endif
