// SPDX-License-Identifier: MIT
/* Distributed HPC under the emulator (model lowrisc-hpc, virtual clock): the hpcc/hpcm/hpcr protocol of
 * seed 000 §4.2-4.3 through seam 2 only, checked against the emulator's ground truth. */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bank_test.h"
#include "cunit_run.h"

#define CORE_ALL 0x7full
/* The latency knobs this test sets (see emulator/bank_hpc.c): a hop costs HOP cycles, a counter COUNTER
 * cycles, and each CSR access advances the interconnect clock by one cycle. */
#define HOP     4
#define COUNTER 2
#define L2_ALL  0xfull

static struct bank_api api;
static unsigned nharts, nslices;

static uint32_t core_id(unsigned hart)
{
	return RVHW_HPC_MANAGER_ID(hart, 0);
}

static uint32_t l2_id(unsigned slice)
{
	return RVHW_HPC_MANAGER_ID(RVHW_HPC_MODULE_L2(slice), 0);
}

static void truth_of(uint32_t id, uint64_t bitmap, uint64_t *out)
{
	unsigned i = 0;
	for (unsigned bit = 0; bit < 64; bit++)
		if (bitmap & (1ull << bit))
			CU_ASSERT_EQUAL_FATAL(api.hpc_truth(id, bit, &out[i++]), 0);
}

/* The hart the calling thread runs on: the core manager whose counts grow when the thread runs. */
static unsigned my_hart(void)
{
	uint64_t before[64] = {0}, after;
	for (unsigned h = 0; h < nharts; h++)
		api.hpc_truth(core_id(h), 0, &before[h]);
	api.advance(1000000);
	for (unsigned h = 0; h < nharts; h++)
		if (api.hpc_truth(core_id(h), 0, &after) == 0 && after > before[h])
			return h;
	CU_FAIL("no core manager counts the calling thread");
	return 0;
}

/* Interruptions the emulator has seen, injected or real. The host descheduling this thread during a request
 * sets `interrupted` exactly as an injected context switch does (that is the model); tests of the protocol
 * account for those instead of failing when the machine is busy. */
static uint64_t interruptions(void)
{
	struct rvemu_stats s;
	api.get_stats(&s);
	return s.hpc_interruptions;
}

/* Algorithm 2, checking that it retried exactly once per interruption that happened meanwhile. */
static int algorithm2_checked(uint32_t id, uint64_t bitmap, uint64_t *values)
{
	uint64_t seen = interruptions();
	int retries = hpc_algorithm2(id, bitmap, values);
	CU_ASSERT_EQUAL(retries, (int)(interruptions() - seen));
	return retries;
}

/* One run of the exactness check; 0 if the host descheduled the thread during it (nothing asserted). */
static int check_exact_once(uint32_t id, uint64_t bitmap)
{
	uint64_t want[64], got1[64], got2[64], hpcm = 0, seen = interruptions();
	unsigned n = popcount64(bitmap);

	CU_ASSERT_EQUAL_FATAL(api.advance(12345678), 0);
	truth_of(id, bitmap, want);
	int alg1 = hpc_algorithm1(id, bitmap, got1);
	uint64_t hpcc_after = hpcc_read();
	int hpcm_read = rvhw_csr_read(RVHW_CSR_HPCM, &hpcm);
	int alg2_retries = hpc_algorithm2(id, bitmap, got2);
	if (interruptions() != seen)
		return 0;
	CU_ASSERT_EQUAL_FATAL(alg1, 0);
	for (unsigned i = 0; i < n; i++)
		CU_ASSERT_EQUAL(got1[i], want[i]);
	CU_ASSERT_EQUAL(hpcc_after & (RVHW_HPCC_TRIGGER | RVHW_HPCC_READERROR | RVHW_HPCC_INTERRUPTED), 0);
	CU_ASSERT_TRUE(hpcc_after & RVHW_HPCC_EMPTY);
	/* hpcm has been refilled bit by bit to the requested bitmap */
	CU_ASSERT_EQUAL(hpcm_read, RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, bitmap);
	/* and Algorithm 2 agrees without a retry */
	CU_ASSERT_EQUAL(alg2_retries, 0);
	for (unsigned i = 0; i < n; i++)
		CU_ASSERT_EQUAL(got2[i], want[i]);
	return 1;
}

static void check_exact(uint32_t id, uint64_t bitmap)
{
	for (int attempt = 0; attempt < 20; attempt++)
		if (check_exact_once(id, bitmap))
			return;
	CU_FAIL("the host descheduled the thread during 20 attempts in a row");
}

static void test_core_manager_exact(void)
{
	unsigned h = my_hart();
	check_exact(core_id(h), CORE_ALL);
	check_exact(core_id((h + 1) % nharts), CORE_ALL); /* a remote core: farther, same protocol */
	uint64_t v;
	CU_ASSERT_EQUAL(api.hpc_truth(core_id(h), 2, &v), 0);
	CU_ASSERT_TRUE(v > 0); /* the profile makes L1D reads happen: the comparisons above are not 0 == 0 */
}

static void test_l2_slice_exact(void)
{
	for (unsigned s = 0; s < nslices; s++)
		check_exact(l2_id(s), L2_ALL);
}

/* Is `part` the k lowest set bits of `bitmap`, for some k? */
static int is_low_bits_of(uint64_t part, uint64_t bitmap)
{
	uint64_t prefix = 0;

	for (unsigned bit = 0; bit < 64; bit++) {
		if (prefix == part)
			return 1;
		if (bitmap & (1ull << bit))
			prefix |= 1ull << bit;
	}
	return prefix == part;
}

static void test_bitmap_with_gaps(void)
{
	const uint64_t bitmap = 0x55; /* bits 0, 2, 4, 6 */
	unsigned h = my_hart(), polls = 0;
	uint64_t hpcm = ~0ull, seen = 0;

	check_exact(core_id(h), bitmap);
	check_exact(l2_id(nslices - 1), 0xa); /* readmiss and writeback only */
	/* hpcm is cleared at trigger, then fills in ascending bit order, never outside the bitmap */
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, bitmap), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(core_id(h))), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, 0);
	while ((hpcc_read() & RVHW_HPCC_TRIGGER) && polls++ < BANK_POLL_LIMIT) {
		CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
		CU_ASSERT_EQUAL(hpcm & ~bitmap, 0);
		CU_ASSERT_EQUAL(hpcm & seen, seen);           /* bits only get set */
		CU_ASSERT_TRUE(is_low_bits_of(hpcm, bitmap)); /* values come back in ascending bit order */
		seen = hpcm;
	}
	CU_ASSERT_TRUE(polls > 1 && polls < BANK_POLL_LIMIT);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, bitmap);
}

static void test_hpcr_without_waiting_is_readerror(void)
{
	uint64_t first[7], stale = 0, v;
	unsigned h = my_hart();

	CU_ASSERT_EQUAL_FATAL(hpc_algorithm1(core_id(h), CORE_ALL, first), 0);
	api.advance(1000);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 0x3), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_READERROR, 0);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(l2_id(0))), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCR, &stale), RVHW_OK);
	CU_ASSERT_EQUAL(stale, first[6]); /* the stale value: the last one popped */
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_READERROR);
	/* the request itself goes on; readerror stays until the next hpcm write */
	CU_ASSERT_TRUE(hpc_wait_not_empty() < BANK_POLL_LIMIT);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCR, &v), RVHW_OK);
	CU_ASSERT_EQUAL(api.hpc_truth(l2_id(0), 0, &stale), 0);
	CU_ASSERT_EQUAL(v, stale);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_READERROR);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, 0), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 0), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_READERROR, 0);
}

/* Under a modelled clock (this program runs under the virtual clock) the host preempting the thread is not a
 * context switch of the emulated machine: a request whose values wait in the FIFO while the host preempts the
 * thread is not `interrupted` (under the CPU-time clock it would be, the model of a descheduled task).
 * Before, every involuntary host switch counted, so a read's retries, and the loads and fetches they add to
 * the bank's own counts, followed the host's load (exec-counts' banks check: 164 more L1D reads at a load of
 * 10). The host is made to preempt: this thread and a spinning one share one CPU, and this one spins
 * (bounded) until getrusage shows an involuntary switch. */
static volatile int spinner_stop;

static void *spinner(void *arg)
{
	(void)arg;
	for (long i = 0; i < 4000000000L && !spinner_stop; i++)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static long involuntary_switches(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
}

static void test_host_preemption_not_a_switch(void)
{
	unsigned h = my_hart();
	cpu_set_t old, one;
	CU_ASSERT_FATAL(pthread_getaffinity_np(pthread_self(), sizeof(old), &old) == 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	CU_ASSERT_FATAL(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	pthread_t th;
	spinner_stop = 0;
	CU_ASSERT_FATAL(pthread_create(&th, &attr, spinner, NULL) == 0);
	pthread_attr_destroy(&attr);
	uint64_t seen = interruptions(), v = 0;
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_read() & ~RVHW_HPCC_TRIGGER), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 1), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(core_id(h))), RVHW_OK);
	CU_ASSERT_NOT_EQUAL(hpc_wait_not_empty(), BANK_POLL_LIMIT); /* the value waits in the FIFO */
	long before = involuntary_switches(), now = before;
	/* valgrind runs one thread at a time and hands over by itself: no host preemption to wait for */
	for (long i = 0; i < 1000000000L && now == before && !cunit_running_on_valgrind(); i++)
		if ((i & 0xffff) == 0)
			now = involuntary_switches();
	uint64_t hpcc = hpcc_read();
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCR, &v), RVHW_OK);
	spinner_stop = 1;
	pthread_join(th, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	printf(
	    "\n  host preemptions while the value waited: %ld; interrupted %d, interruptions counted %llu\n",
	    now - before, !!(hpcc & RVHW_HPCC_INTERRUPTED), (unsigned long long)(interruptions() - seen));
	if (cunit_running_on_valgrind())
		printf("  under valgrind: no host preemption made, only the bit checked\n");
	else
		CU_ASSERT(now > before); /* the host did preempt it (bounded spin) */
	CU_ASSERT_EQUAL(hpcc & RVHW_HPCC_INTERRUPTED, 0);
	CU_ASSERT_EQUAL(interruptions(), seen);
}

static void test_injected_context_switch_retry(void)
{
	struct rvemu_stats before, after;
	uint64_t want[7], got[7];
	unsigned h = my_hart();

	api.get_stats(&before);
	api.hpc_force_interrupt(2);
	truth_of(core_id(h), CORE_ALL, want);
	int retries = hpc_algorithm2(core_id(h), CORE_ALL, got);
	for (unsigned i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(got[i], want[i]);
	api.get_stats(&after);
	/* the two injected interruptions, plus any real descheduling of this thread meanwhile */
	CU_ASSERT_TRUE(after.hpc_interruptions - before.hpc_interruptions >= 2);
	CU_ASSERT_EQUAL((uint64_t)retries, after.hpc_interruptions - before.hpc_interruptions);
	/* Algorithm 1 does not look: the bit is there for whoever does */
	api.hpc_force_interrupt(1);
	CU_ASSERT_EQUAL(hpc_algorithm1(core_id(h), CORE_ALL, got), 0);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_INTERRUPTED);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 1), RVHW_OK); /* a write of hpcm clears it */
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_INTERRUPTED, 0);
}

static sigjmp_buf sigill_jump;
static volatile sig_atomic_t sigills;

static void on_sigill(int sig)
{
	(void)sig;
	sigills++;
	siglongjmp(sigill_jump, 1);
}

static void test_useren_off_traps(void)
{
	struct sigaction sa, old;
	uint64_t values[7];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigill;
	sigemptyset(&sa.sa_mask);
	CU_ASSERT_EQUAL_FATAL(sigaction(SIGILL, &sa, &old), 0);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_USEREN);
	api.hpc_set_useren(0);
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_USEREN, 0);
	/* user code cannot give itself the permission back */
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, RVHW_HPCC_USEREN), RVHW_OK);
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_USEREN, 0);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, CORE_ALL), RVHW_OK);
	sigills = 0;
	if (sigsetjmp(sigill_jump, 1) == 0) {
		rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(core_id(0)));
		CU_FAIL("a user trigger with useren = 0 did not trap");
	}
	CU_ASSERT_EQUAL(sigills, 1);
	CU_ASSERT_EQUAL(hpcc_read() & RVHW_HPCC_TRIGGER, 0); /* the trapped write had no effect */
	api.hpc_set_useren(1);
	CU_ASSERT_EQUAL(hpc_algorithm1(core_id(0), CORE_ALL, values), 0);
	CU_ASSERT_EQUAL(sigaction(SIGILL, &old, NULL), 0);
}

#if defined(__riscv)
/* 1 if reading csr trapped: on riscv64 seam 2 is the real csrr, and an access the machine refuses is the
 * instruction's SIGILL, handed to the program's handler by the emulator's CSR-trap front end (fe_trap.c). */
static int csr_read_traps(unsigned csr)
{
	struct sigaction sa, old;
	uint64_t v = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigill;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old) != 0)
		return 0;
	sigills = 0;
	if (sigsetjmp(sigill_jump, 1) == 0)
		rvhw_csr_read(csr, &v);
	sigaction(SIGILL, &old, NULL);
	return sigills == 1;
}
#endif

static void test_hpcm_readonly_while_triggered(void)
{
	uint64_t values[4], want[4], hpcm = 0;

	api.advance(777);
	truth_of(l2_id(0), L2_ALL, want);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, L2_ALL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(l2_id(0))), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 0x1), RVHW_OK); /* ignored: trigger = 1 */
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, 0);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_TRIGGER);
	for (unsigned i = 0; i < 4; i++) {
		CU_ASSERT_TRUE(hpc_wait_not_empty() < BANK_POLL_LIMIT);
		CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCR, &values[i]), RVHW_OK);
		CU_ASSERT_EQUAL(values[i], want[i]);
	}
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, L2_ALL);
}

static void test_cancel(void)
{
	uint64_t hpcm = ~0ull;

	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, CORE_ALL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(l2_id(0))), RVHW_OK);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_TRIGGER);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, (uint64_t)l2_id(0) << RVHW_HPCC_ID_SHIFT), RVHW_OK);
	for (unsigned i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(hpcc_read() & (RVHW_HPCC_TRIGGER | RVHW_HPCC_EMPTY), RVHW_HPCC_EMPTY);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCM, &hpcm), RVHW_OK);
	CU_ASSERT_EQUAL(hpcm, 0); /* nothing arrived before the cancel, nothing after */
	CU_ASSERT_EQUAL((hpcc_read() & RVHW_HPCC_ID_MASK) >> RVHW_HPCC_ID_SHIFT, l2_id(0));
}

static void test_unknown_manager_never_answers(void)
{
	const uint32_t nobody = RVHW_HPC_MANAGER_ID(0x50, 0);
	uint64_t values[7], v;

	CU_ASSERT_EQUAL(api.hpc_truth(nobody, 0, &v), -1);
	CU_ASSERT_EQUAL(api.hpc_truth(RVHW_HPC_MANAGER_ID(0, 1), 0, &v), -1); /* extend 1 does not exist */
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, CORE_ALL), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(nobody)), RVHW_OK);
	CU_ASSERT_EQUAL(hpc_wait_not_empty(), BANK_POLL_LIMIT);
	CU_ASSERT_TRUE(hpcc_read() & RVHW_HPCC_TRIGGER);
	/* Algorithm 2 starts by cancelling, so it recovers */
	CU_ASSERT_TRUE(algorithm2_checked(core_id(0), CORE_ALL, values) >= 0);
}

static void test_l2_invariants(void)
{
	uint64_t l1_refills = 0, l1_writebacks = 0, l2_reads = 0, l2_writes = 0, v[7];

	api.advance(987654321);
	for (unsigned hart = 0; hart < nharts; hart++) {
		CU_ASSERT_FATAL(algorithm2_checked(core_id(hart), CORE_ALL, v) >= 0);
		l1_refills += v[1] + v[3] + v[5];
		l1_writebacks += v[6];
	}
	for (unsigned s = 0; s < nslices; s++) {
		CU_ASSERT_FATAL(algorithm2_checked(l2_id(s), 0x5, v) >= 0); /* read, write */
		l2_reads += v[0];
		l2_writes += v[1];
	}
	CU_ASSERT_TRUE(l1_refills > 0 && l1_writebacks > 0);
	CU_ASSERT_EQUAL(l2_reads, l1_refills);
	CU_ASSERT_EQUAL(l2_writes, l1_writebacks);
}

/* Polls of hpcc until the first value of a 1-counter request arrives. */
static unsigned first_value_polls(uint32_t id)
{
	unsigned polls;

	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, 0), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCM, 1), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(id)), RVHW_OK);
	polls = hpc_wait_not_empty();
	CU_ASSERT_TRUE(polls < BANK_POLL_LIMIT);
	return polls;
}

/* Latency model: request and value each travel `hops` hops (local core 1, other core 2, L2 slice 3), the
 * manager needs COUNTER cycles per value; the first value is there 2 x hops x HOP + COUNTER cycles after
 * the trigger, i.e. after one poll fewer. */
static void test_latency_by_distance(void)
{
	unsigned h = my_hart();

	CU_ASSERT_EQUAL(first_value_polls(core_id(h)), 2 * 1 * HOP + COUNTER - 1);
	CU_ASSERT_EQUAL(first_value_polls(core_id((h + 1) % nharts)), 2 * 2 * HOP + COUNTER - 1);
	CU_ASSERT_EQUAL(first_value_polls(l2_id(1)), 2 * 3 * HOP + COUNTER - 1);
}

static pthread_barrier_t busy_barrier;

/* Occupies L2 slice 1 with a 64-counter request, then lets the main thread request the same manager. */
static void *busy_requester(void *arg)
{
	uint64_t v[64];
	(void)arg;
	rvhw_csr_write(RVHW_CSR_HPCM, ~0ull);
	rvhw_csr_write(RVHW_CSR_HPCC, hpcc_request(l2_id(1)));
	pthread_barrier_wait(&busy_barrier); /* triggered */
	pthread_barrier_wait(&busy_barrier); /* the main thread has been served */
	for (unsigned i = 0; i < 64; i++)
		if (hpc_wait_not_empty() == BANK_POLL_LIMIT || rvhw_csr_read(RVHW_CSR_HPCR, &v[i]) != RVHW_OK)
			return (void *)1;
	return NULL;
}

/* A manager serves one request at a time: a request behind a 64-counter one waits for its service. */
static void test_busy_manager_makes_requests_wait(void)
{
	pthread_t t;
	void *failed = (void *)1;
	unsigned alone = first_value_polls(l2_id(1)), behind;

	CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&busy_barrier, NULL, 2), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, busy_requester, NULL), 0);
	pthread_barrier_wait(&busy_barrier);
	behind = first_value_polls(l2_id(1));
	pthread_barrier_wait(&busy_barrier);
	pthread_join(t, &failed);
	CU_ASSERT_PTR_NULL(failed); /* and the first request was served in full */
	CU_ASSERT_TRUE(behind >= alone + 64 * COUNTER - 2 * 3 * HOP);
	pthread_barrier_destroy(&busy_barrier);
}

struct rr_worker {
	unsigned requests_done;
	int failed;
};

static void *rr_worker_main(void *arg)
{
	struct rr_worker *w = arg;
	uint64_t v[4], before, after;

	for (unsigned i = 0; i < 300; i++) {
		api.advance(1000 + i);
		api.hpc_truth(l2_id(0), 0, &before);
		if (hpc_algorithm2(l2_id(0), L2_ALL, v) < 0) {
			w->failed = 1;
			break;
		}
		api.hpc_truth(l2_id(0), 0, &after);
		if (v[0] < before || v[0] > after)
			w->failed = 1;
		w->requests_done++;
	}
	return NULL;
}

static void test_two_threads_share_an_l2_manager(void)
{
	struct rr_worker w[2];
	pthread_t t[2];

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, rr_worker_main, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_FALSE(w[i].failed);
		CU_ASSERT_EQUAL(w[i].requests_done, 300);
	}
}

static void test_bad_input_and_other_csrs(void)
{
	uint64_t v = 0, cycles;

	CU_ASSERT_EQUAL(rvhw_csr_read(0x123, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCC, NULL), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_csr_write(RVHW_CSR_HPCR, 1), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_write(0xC00, 1), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_write(0x7ff, 1), RVHW_EINVAL);
	CU_ASSERT_EQUAL(rvhw_boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_ENOHW); /* no BOOM bank on this model */
	CU_ASSERT_EQUAL(rvhw_boom_op(2, 0, &v), RVHW_EINVAL);
	CU_ASSERT_EQUAL(api.hpc_truth(core_id(0), 7, &v), -1);
	CU_ASSERT_EQUAL(api.hpc_truth(l2_id(0), 4, &v), -1);
	CU_ASSERT_EQUAL(api.hpc_truth(l2_id(nslices), 0, &v), -1);
	CU_ASSERT_EQUAL(api.hpc_truth(core_id(nharts), 0, &v), -1);
	CU_ASSERT_STRING_EQUAL(rvhw_backend(), "emulator");
	api.advance(4242);
#if defined(__riscv)
	/* The real csrr: time is readable; hpmcounter3, which this core lacks, traps (the instruction's
	 * SIGILL reaches the program's handler). cycle and instret are not checked here: qemu-user executes
	 * their csrr itself, so they never reach the emulator (tests/riscv64-trap/trap_hpm.c checks the
	 * counters it owns). */
	(void)cycles;
	CU_ASSERT_EQUAL(rvhw_csr_read(0xC01, &v), RVHW_OK);
	CU_ASSERT_TRUE(csr_read_traps(0xC03));
#else
	/* kernel.perf_user_access = 1 (Linux 6.6+): cycle and instret trap without a mapped perf event of
	 * this thread on them (tests/emu covers the mapped case); time is always readable */
	CU_ASSERT_EQUAL(rvhw_csr_read(0xC00, &cycles), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_read(0xC02, &v), RVHW_EPERM);
	CU_ASSERT_EQUAL(rvhw_csr_read(0xC01, &v), RVHW_OK);
	CU_ASSERT_EQUAL(rvhw_csr_read(0xC03, &v), RVHW_ENOHW); /* no programmable counters on this core */
#endif
}

static void test_statistics(void)
{
	struct rvemu_stats a, b;
	uint64_t v[7];

	api.get_stats(&a);
	CU_ASSERT_EQUAL_FATAL(hpc_algorithm1(core_id(0), 0x3, v), 0);
	CU_ASSERT_EQUAL(rvhw_csr_read(RVHW_CSR_HPCR, &v[0]), RVHW_OK); /* one pop too many */
	api.get_stats(&b);
	CU_ASSERT_EQUAL(b.hpc_requests - a.hpc_requests, 1);
	CU_ASSERT_EQUAL(b.hpc_readerrors - a.hpc_readerrors, 1);
	CU_ASSERT_EQUAL(b.csr_writes - a.csr_writes, 2);
	CU_ASSERT_TRUE(b.csr_reads - a.csr_reads >=
	               4); /* 2 pops + at least one poll per value + the extra pop */
}

/* A bad knob is a configuration error the emulator reports before the program runs. */
/* The argument that makes main return 0 at once: the child of expect_config_error runs this program
 * again, so the emulator it loads is the one under test, for the architecture the test was built for. */
#define EXIT_AT_ONCE "--exit-at-once"

/* Starts this program again with var=value and the emulator preloaded, and expects the emulator to refuse
 * the configuration before main runs (exit 2; main would return 0). The program is itself, not another one
 * such as /bin/true: under qemu-user that would be the host's program, which cannot load a riscv64 emulator.
 * With RVEMU_EXEC set (a command that runs this architecture's programs, such as tests/riscv64/qemu-run), the
 * program runs through it, which gets the preload list in RVEMU_PRELOAD (the convention of rvemu-run). */
static void expect_config_error(const char *var, const char *value)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *exec_with = getenv("RVEMU_EXEC"), *preload = getenv("LD_PRELOAD");
	pid_t pid;
	int status = 0;

	CU_ASSERT_FATAL(len > 0 && preload != NULL);
	self[len] = '\0';
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		setenv(var, value, 1);
		if (exec_with != NULL && *exec_with != '\0') {
			/* the command is split on blanks, as rvemu-run does */
			setenv("RVEMU_PRELOAD", preload, 1);
			unsetenv("LD_PRELOAD");
			execl("/bin/sh", "sh", "-c", "exec $RVEMU_EXEC \"$0\" " EXIT_AT_ONCE, self,
			      (char *)NULL);
		} else {
			execl(self, self, EXIT_AT_ONCE, (char *)NULL);
		}
		_exit(127);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 2)
		fprintf(stderr, "test_hpc: %s=%s: status 0x%x, want exit 2 (the emulator refusing it)\n", var,
		        value, (unsigned)status);
}

static void test_bad_configuration(void)
{
	expect_config_error("RVEMU_PROFILE", "no-such-benchmark");
	expect_config_error("RVEMU_L2_SLICES", "0");
	expect_config_error("RVEMU_HPC_HOP_CYCLES", "four");
}

int main(int argc, char **argv)
{
	CU_pSuite suite;
	uint64_t v;

	if (argc == 2 && strcmp(argv[1], EXIT_AT_ONCE) == 0)
		return 0;
	setenv("RVEMU_L2_SLICES", "2", 1);
	setenv("RVEMU_HPC_HOP_CYCLES", "4", 1);
	setenv("RVEMU_HPC_COUNTER_CYCLES", "2", 1);
	setenv("RVEMU_HPC_CSR_CYCLES", "1", 1);
	bank_reexec_under_emulator(argv, "lowrisc-hpc", "virtual");
	if (!bank_api_load(&api)) {
		fprintf(stderr, "test_hpc: emulator control API incomplete\n");
		return 1;
	}
	for (nharts = 0; nharts < 64 && api.hpc_truth(core_id(nharts), 0, &v) == 0; nharts++)
		;
	for (nslices = 0; nslices < 16 && api.hpc_truth(l2_id(nslices), 0, &v) == 0; nslices++)
		;
	if (nharts < 2 || nslices != 2) {
		fprintf(stderr, "test_hpc: expected >= 2 harts and 2 L2 slices, found %u and %u\n", nharts,
		        nslices);
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("distributed HPC (virtual clock)", NULL, NULL);
	CU_add_test(suite, "Algorithm 1/2: core managers exact", test_core_manager_exact);
	CU_add_test(suite, "Algorithm 1/2: L2 slices exact", test_l2_slice_exact);
	CU_add_test(suite, "bitmap with gaps, hpcm refills in order", test_bitmap_with_gaps);
	CU_add_test(suite, "hpcr before empty clears: readerror, stale",
	            test_hpcr_without_waiting_is_readerror);
	CU_add_test(suite, "injected context switch: Algorithm 2 retries",
	            test_injected_context_switch_retry);
	CU_add_test(suite, "host preemption under a modelled clock: not a context switch",
	            test_host_preemption_not_a_switch);
	CU_add_test(suite, "useren off: user trigger traps (SIGILL)", test_useren_off_traps);
	CU_add_test(suite, "hpcm write ignored while trigger = 1", test_hpcm_readonly_while_triggered);
	CU_add_test(suite, "cancel by writing trigger = 0", test_cancel);
	CU_add_test(suite, "unknown manager never answers", test_unknown_manager_never_answers);
	CU_add_test(suite, "L2 sums equal L1 refills and write-backs", test_l2_invariants);
	CU_add_test(suite, "latency grows with distance", test_latency_by_distance);
	CU_add_test(suite, "a busy manager makes requests wait", test_busy_manager_makes_requests_wait);
	CU_add_test(suite, "two threads, one L2 manager: both served", test_two_threads_share_an_l2_manager);
	CU_add_test(suite, "bad input, cycle/instret CSRs", test_bad_input_and_other_csrs);
	CU_add_test(suite, "statistics", test_statistics);
	CU_add_test(suite, "bad configuration is reported", test_bad_configuration);
	return cunit_run_all();
}
