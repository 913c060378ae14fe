/* SPDX-License-Identifier: MIT */
/*
 * The interface between the execution-driven count source (the QEMU TCG plugin librvexec.so,
 * docs/exec-counts.md) and its readers: the riscv64 emulator running inside the same qemu-riscv64 process
 * (its future "exec" count source) and host tools (rvexec-dump, the tests).
 *
 * The plugin counts into a file, normally in /dev/shm, that every reader maps with MAP_SHARED: under
 * qemu-user a guest's mmap of a host file is a host mapping, so the guest sees the counts the plugin writes
 * without a system call. The file is a header followed by `nslots` slots of `slot_size` bytes, one per guest
 * thread, found by the thread id (guest and host thread ids are the same under qemu-user).
 *
 * Layout rules (both sides are LP64 little-endian: x86_64/aarch64 hosts and riscv64 guests): fixed-width
 * fields only, naturally aligned, explicit padding; a reader checks magic, version, header_size, slot_size
 * and that ncounts <= RVEXEC_COUNT_CAPACITY before trusting anything else. Counters are appended to
 * RVEXEC_COUNTS, never reordered, so a reader built against an older list reads the counters it knows.
 *
 * Concurrency: one writer per slot (the plugin, in the slot's own thread), counters are aligned 64-bit words
 * written whole, so any reader sees each counter's value at some recent instant. A thread reading its own
 * slot (the emulator inside the guest) sees every block it has executed before the read, including the block
 * that contains the read (counted when the block starts; the reading instruction, a trapped CSR access, ends
 * it).
 */
#ifndef RVEXEC_SHM_H
#define RVEXEC_SHM_H

#include <stdint.h>
#include <stddef.h>

/* "RVEXSHM1" as a little-endian 64-bit word. */
#define RVEXEC_SHM_MAGIC   0x314d48535845565aull
#define RVEXEC_SHM_VERSION 2
/* Environment variable naming the shared file (an absolute path, e.g. /dev/shm/rvexec.1234), read by the
 * plugin when no shm= argument is given and by the guest-side reader. */
#define RVEXEC_SHM_ENV        "RVEXEC_SHM"
#define RVEXEC_SLOTS_DEFAULT  256
#define RVEXEC_COUNT_CAPACITY 64
#define RVEXEC_MODEL_NAME_LEN 32

/*
 * Every counter the plugin keeps, in slot order: X(NAME, "what it counts"). The instruction classes come
 * first (every retired instruction is in exactly one class, so they sum to INSTRET); docs/exec-counts.md says
 * which instructions each class holds and which model events they feed.
 */
#define RVEXEC_CLASSES(X)                                                                                    \
	X(INT_LOAD, "integer loads (lb..ld, c.lw/c.ld/c.lwsp/c.ldsp)")                                       \
	X(INT_STORE, "integer stores (sb..sd, c.sw/c.sd/c.swsp/c.sdsp)")                                     \
	X(FP_LOAD, "floating-point loads (flw, fld, c.fld, c.fldsp)")                                        \
	X(FP_STORE, "floating-point stores (fsw, fsd, c.fsd, c.fsdsp)")                                      \
	X(BRANCH, "conditional branches (beq..bgeu, c.beqz, c.bnez)")                                        \
	X(JAL, "jal and c.j")                                                                                \
	X(JALR, "jalr, c.jr, c.jalr")                                                                        \
	X(INT_ALU, "integer arithmetic and logic, lui, auipc, shifts, Zba/Zbb, compressed ALU forms")        \
	X(MUL, "integer multiplications (mul, mulh*, mulw)")                                                 \
	X(DIV, "integer divisions and remainders (div*, rem*)")                                              \
	X(FP_ADD, "fadd, fsub")                                                                              \
	X(FP_MUL, "fmul")                                                                                    \
	X(FP_FMA, "fmadd, fmsub, fnmadd, fnmsub")                                                            \
	X(FP_DIV, "fdiv")                                                                                    \
	X(FP_SQRT, "fsqrt")                                                                                  \
	X(FP_CVT, "fcvt.* (between precisions, and to/from integers)")                                       \
	X(FP_OTHER, "other floating point: fsgnj*, fmin/fmax, compares, fclass, fmv.x.*/fmv.*.x")            \
	X(AMO, "atomic memory operations (amo*)")                                                            \
	X(LR, "load-reserved (lr.w, lr.d)")                                                                  \
	X(SC, "store-conditional (sc.w, sc.d)")                                                              \
	X(CSR, "CSR accesses (csrr*, including rdcycle/frflags forms)")                                      \
	X(FENCE, "fence, fence.i")                                                                           \
	X(SYSTEM, "ecall, ebreak, c.ebreak, wfi, xret, sfence.vma")                                          \
	X(OTHER, "anything else (vector, reserved or illegal encodings)")

#define RVEXEC_COUNTS(X)                                                                                     \
	X(INSTRET, "instructions retired (executed blocks' instructions)")                                   \
	X(CYCLES,                                                                                            \
	  "modelled cycles (docs/exec-counts.md: class latencies plus miss and mispredict penalties)")       \
	RVEXEC_CLASSES(X)                                                                                    \
	X(BRANCH_TAKEN, "conditional branches taken")                                                        \
	X(BRANCH_NOT_TAKEN, "conditional branches not taken")                                                \
	X(CALL, "calls: jal/jalr writing ra or t0")                                                          \
	X(RETURN, "returns: jalr x0 through ra or t0 (not also a call)")                                     \
	X(BRANCH_DIR_MISPREDICT, "conditional branches whose direction the predictor got wrong")             \
	X(BRANCH_TARGET_MISPREDICT, "jalr whose target the BTB / return-address stack got wrong")            \
	X(L1I_ACCESS, "L1 I-cache accesses (one per cache line of each executed block)")                     \
	X(L1I_MISS, "L1 I-cache misses")                                                                     \
	X(L1D_READ_ACCESS, "L1 D-cache read accesses (loads, lr, the read of an amo)")                       \
	X(L1D_READ_MISS, "L1 D-cache read misses")                                                           \
	X(L1D_WRITE_ACCESS, "L1 D-cache write accesses (stores, sc, the write of an amo)")                   \
	X(L1D_WRITE_MISS, "L1 D-cache write misses (write-allocate)")                                        \
	X(L1D_WRITEBACK, "dirty L1 D-cache lines evicted")                                                   \
	X(L2_ACCESS, "L2 accesses (L1 misses and write-backs)")                                              \
	X(L2_MISS, "L2 misses")                                                                              \
	X(ITLB_MISS, "instruction TLB misses")                                                               \
	X(DTLB_MISS, "data TLB misses")                                                                      \
	X(UTLB_MISS, "second-level (unified) TLB misses, i.e. page walks")                                   \
	X(L2_READ_MISS, "L2 misses of L1 refills (L2_MISS without the write-backs' misses)")                 \
	X(L2_WRITEBACK, "dirty L2 lines evicted to memory")

#define RVEXEC_ENUM_COUNT(name, what) RVEXEC_##name,
enum rvexec_count { RVEXEC_COUNTS(RVEXEC_ENUM_COUNT) RVEXEC_NCOUNTS };
#undef RVEXEC_ENUM_COUNT

/* The classes, as offsets from RVEXEC_INT_LOAD. */
#define RVEXEC_FIRST_CLASS RVEXEC_INT_LOAD
#define RVEXEC_NCLASSES    (RVEXEC_OTHER - RVEXEC_INT_LOAD + 1)

/* Privilege modes a count is charged to. The guest writes its slot's `mode`: the emulator's own code (which
 * stands for the kernel) sets RVEXEC_MODE_SUPERVISOR while it runs; blocks are charged to the mode the slot
 * has when they start. */
enum rvexec_mode { RVEXEC_MODE_USER = 0, RVEXEC_MODE_SUPERVISOR = 1, RVEXEC_NMODES = 2 };

enum rvexec_slot_state {
	RVEXEC_SLOT_FREE = 0,
	RVEXEC_SLOT_LIVE = 1,   /* the thread runs */
	RVEXEC_SLOT_EXITED = 2, /* the thread called exit; its counts stay for readers */
};

/*
 * The alarm: how an overflow interrupt can come from the counts. Its arming is one word, alarm_armed: the
 * arming's generation in the high 32 bits, its signal in the low 32 (0: disarmed). The guest arms it as a
 * sequence lock (rvexec_alarm_begin, the fields, rvexec_alarm_publish), so the plugin never mixes the fields
 * of two armings (another thread may re-arm a thread's alarm while that thread runs), and the plugin fires an
 * arming with a compare-and-swap on the whole word, so an arming made meanwhile is neither consumed nor fired
 * for the old one.
 *
 * It watches up to RVEXEC_ALARM_WATCHES sums of user-mode counters: alarm_mask/alarm_at (alarm_mask 0: the
 * one counter alarm_count), then each alarm_more_mask[i]/alarm_more_at[i] with a nonzero mask (bit n: enum
 * rvexec_count n; an event made of several counters, e.g. the FP classes). When the first of them reaches its
 * value, the plugin writes alarm_pc (the instruction that made it reach the value, found inside its block:
 * the n-th instruction, the n-th of a class, the instruction whose latency or data access it was, the branch
 * that was mispredicted; of several reached in one block, the earliest), alarm_cycles, alarm_fired_gen (the
 * arming's generation) and alarm_fired_watch (which watch: 0 alarm_mask, 1 + i alarm_more_mask[i]), counts
 * alarm_fired, disarms (one alarm per arming) and sends the signal to the thread (a host signal; 1..31 are
 * numbered alike on x86_64, aarch64 and riscv64 Linux). QEMU delivers it to the guest at the end of the
 * current block: the handler's context is at most one block after alarm_pc.
 *
 * A modelled interrupt skid: with alarm_skid > 0 the plugin still writes alarm_pc, alarm_cycles and counts
 * alarm_fired when the watch is reached, but sends the signal only once the thread's user-mode CYCLES have
 * grown alarm_skid past alarm_cycles (the modelled cycle of alarm_pc), and then overwrites alarm_pc with the
 * instruction whose latency got there (as an overflow interrupt is taken some cycles after the overflow, at
 * whatever instruction then runs) and disarms. A re-arming (or disarming) meanwhile cancels the signal.
 */
#define RVEXEC_ALARM_WATCHES 4

struct rvexec_slot {
	uint32_t tid;               /* owner thread id; 0 while free (claimed with a compare-and-swap) */
	uint32_t state;             /* enum rvexec_slot_state */
	uint32_t mode;              /* enum rvexec_mode, written by the guest */
	uint32_t alarm_count;       /* guest: enum rvexec_count, user mode (when alarm_mask is 0) */
	uint32_t alarm_skid;        /* guest: modelled cycles from alarm_pc to the signal (0: none) */
	uint32_t alarm_fired_watch; /* plugin: the watch that fired last */
	uint64_t alarm_armed;       /* guest: generation << 32 | signal (0: none); the plugin disarms it */
	uint64_t alarm_at;          /* guest: fire when counts[RVEXEC_MODE_USER][alarm_count] >= alarm_at */
	uint64_t alarm_pc;    /* plugin: the instruction that reached alarm_at (then: where its skid ended) */
	uint64_t alarm_fired; /* plugin: alarms fired so far */
	uint64_t alarm_cycles; /* plugin: the thread's user-mode CYCLES when alarm_pc retired (modelled) */
	uint64_t alarm_mask;   /* guest: nonzero: watch the sum of these counters (bit = enum rvexec_count) */
	uint64_t alarm_fired_gen; /* plugin: the generation of the arming that fired last */
	uint64_t alarm_more_mask[RVEXEC_ALARM_WATCHES - 1]; /* guest: more watches (0: none) */
	uint64_t alarm_more_at[RVEXEC_ALARM_WATCHES - 1];
	/* (the counters start on their own cache line) */
	uint64_t counts[RVEXEC_NMODES][RVEXEC_COUNT_CAPACITY]; /* [mode][enum rvexec_count] */
};

/* The guest's side of arming: begin (disarms and starts a new generation), write the fields, publish. */
static inline uint64_t rvexec_alarm_begin(struct rvexec_slot *s)
{
	uint64_t gen = (__atomic_load_n(&s->alarm_armed, __ATOMIC_RELAXED) >> 32) + 1;
	__atomic_store_n(&s->alarm_armed, gen << 32, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* the disarming is seen before any new field */
	return gen;
}

static inline void rvexec_alarm_publish(struct rvexec_slot *s, uint64_t gen, uint32_t signo)
{
	__atomic_store_n(&s->alarm_armed, gen << 32 | signo, __ATOMIC_RELEASE);
}

struct rvexec_shm_header {
	uint64_t magic;       /* RVEXEC_SHM_MAGIC */
	uint32_t version;     /* RVEXEC_SHM_VERSION */
	uint32_t header_size; /* sizeof(struct rvexec_shm_header): slots start here */
	uint32_t slot_size;   /* sizeof(struct rvexec_slot) */
	uint32_t nslots;
	uint32_t ncounts;                  /* counters in use (RVEXEC_NCOUNTS of the writer) */
	uint32_t freq_mhz;                 /* the model's clock: CYCLES / freq_mhz = modelled microseconds */
	char model[RVEXEC_MODEL_NAME_LEN]; /* events/models.csv's model name, NUL-terminated */
	uint32_t writer_pid;               /* the qemu process that created the file */
	uint32_t reserved[15];
};

_Static_assert(sizeof(struct rvexec_slot) % 64 == 0, "slots are whole cache lines");
_Static_assert(offsetof(struct rvexec_slot, counts) % 64 == 0, "the counters start on a cache line");
_Static_assert(sizeof(struct rvexec_shm_header) % 64 == 0, "the header is whole cache lines");
_Static_assert(RVEXEC_NCOUNTS <= RVEXEC_COUNT_CAPACITY, "the slot holds every counter");

static inline uint64_t rvexec_shm_size(uint32_t nslots)
{
	return sizeof(struct rvexec_shm_header) + (uint64_t)nslots * sizeof(struct rvexec_slot);
}

static inline struct rvexec_slot *rvexec_shm_slot(struct rvexec_shm_header *h, uint32_t i)
{
	return (struct rvexec_slot *)((char *)h + h->header_size + (uint64_t)i * h->slot_size);
}

#endif
