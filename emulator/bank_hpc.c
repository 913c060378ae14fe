// SPDX-License-Identifier: MIT
/* The distributed hardware performance counters of the lowRISC-v0.4 SoC (Xue/Xie/Song, CSA 2021, §4),
 * as seen through the HPCClient CSRs hpcc (0x800), hpcm (0x801) and hpcr (0xCC0).
 *
 * Machine model
 * - Under the exec count source (RVEMU_COUNT_SOURCE=exec, docs/exec-counts.md) a core manager's counters are
 *   what the hart's threads executed, from the QEMU plugin's caches (events/exec_events.csv), and the slices
 *   share those L1s' refills and write-backs and the plugin's L2 misses and write-backs the same way.
 * - HPCManagers: one per hart (ManagerID = hart << 4, 7 counters: L1I/L1D) and one per L2 slice
 *   (ManagerID = (0x100 + n) << 4, 4 counters; RVEMU_L2_SLICES slices, default 2). Counter values come from
 *   the workload profile RVEMU_PROFILE (a SPEC CPU2006 column, default gcc): core manager h counts
 *   emu_hart_cycles(h) x rate. L2 slices share the L2 traffic of all harts evenly (address interleaving);
 *   the L2 read and write counts are derived from the L1 counts of each hart (read = I.readmiss + D.readmiss
 *   + D.writemiss, write = D.writeback), so the paper's invariants hold exactly, summed over slices.
 *   Bits of a valid manager that name no counter are answered with 0, like unimplemented counters.
 * - Interconnect clock: one global clock, advanced by every HPC CSR access of any thread
 * (RVEMU_HPC_CSR_CYCLES, default 1) plus the cycles the accessing thread ran since its previous access. Event
 * counts are NOT advanced by CSR accesses: the workload is the profile, not the instrumentation, so in
 * virtual-clock mode a request returns exactly rvemu_hpc_truth() as of the time it was served.
 * - Latency: a request travels `hops` x RVEMU_HPC_HOP_CYCLES (default 4) to its manager and each value the
 *   same way back; local core = 1 hop, another core = 2, an L2 slice = 3. A manager samples all requested
 *   counters when it starts serving the request and sends one value every RVEMU_HPC_COUNTER_CYCLES
 *   (default 2) in ascending hpcm bit order. A manager serves one request at a time, in the order the
 *   requests were issued; each client has at most one outstanding request, so this is the round-robin of
 *   the paper's HPCInterconnect: a request waits at most for one request of every other client.
 * - A ManagerID no manager answers: the request is lost on the interconnect, as on hardware; trigger stays
 *   set and nothing ever arrives (Algorithm 1 would spin forever). Software recovers by cancelling
 *   (writing trigger = 0), which Algorithm 2's first step does.
 * - The receive FIFO holds RVEMU_HPC_FIFO_DEPTH (64) values; values arriving at a full FIFO are dropped
 *   (only possible when old values were left unread and a new 64-counter request was issued).
 * - Context switches: the client state is per thread (as if the OS saved hpcc/hpcm/FIFO per task). A real
 *   descheduling of the thread while values are in flight or queued (emu_thread_context_switches() grew
 *   since the trigger, checked whenever hpcc is read: the thread blocked, or, under the CPU-time clock only,
 *   the host preempted it) or an injected one (rvemu_hpc_force_interrupt,
 * RVEMU_HPC_FORCE_INTERRUPT=N for the first N requests of the process) sets `interrupted`. The FIFO content
 * is then untrustworthy on hardware; the emulator MARKS it (keeps delivering every value, so polling loops
 * never hang) rather than flushing it: software must discard the values and retry, as Algorithm 2 does.
 * - Empty pops: rvemu_hpc_force_empty_pop(n) (or RVEMU_HPC_FORCE_EMPTY_POP=N for the process) makes the next
 *   N hpcr reads find the FIFO empty, as a pop that overtook its value would: the stale value is returned,
 *   readerror is set and the value stays queued (Algorithm 2 must see readerror and retry).
 * - Statistics: requests per manager (rvemu_hpc_manager_requests), besides rvemu_stats.hpc_requests.
 * - useren = 0 (rvemu_hpc_set_useren(0), or RVEMU_HPC_USEREN=0 for every thread), the OS's knob: a user
 *   write that would start a request traps: it has no effect and answers RVHW_EPERM, and the front end
 *   that served it makes the trap (fe_csr.c raises SIGILL in the calling thread, and if a handler returns,
 *   rvhw_csr_write returns RVHW_EPERM where hardware would re-execute the instruction; on riscv64 the
 *   CSR-trap front end hands the instruction's own SIGILL to the program, fe_trap.c). Raising it here would
 *   deliver a second SIGILL on riscv64.
 */
#include "mach.h"
#include "rvhw.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HPC_MAX_COUNTERS    64
#define HPC_FIFO_DEPTH      64
#define HPC_MAX_SLICES      16
#define HPC_MODULE_L2_FIRST 0x100u
#define HPC_HOPS_LOCAL      1
#define HPC_HOPS_REMOTE     2
#define HPC_HOPS_L2         3

/* One request on the interconnect. Shared: any thread's access may make its manager sample it. */
struct hpc_request {
	struct hpc_request *next, *prev;
	int reachable;    /* 0: no manager has this id; nothing will ever arrive */
	unsigned manager; /* core h -> h; L2 slice n -> nharts + n */
	unsigned ncounters;
	unsigned bits[HPC_MAX_COUNTERS]; /* requested hpcm bits, ascending: the order values come back */
	unsigned hops;
	uint64_t start; /* interconnect time the manager serves (samples) the request */
	int sampled;
	uint64_t values[HPC_MAX_COUNTERS];
	unsigned delivered; /* values already pushed into the client's FIFO */
	int cancelled;
};

/* The HPCClient registers of one thread. Only the owning thread touches these fields. */
struct hpc_client {
	unsigned hart;
	uint64_t manager_id; /* hpcc[20:4] */
	int useren, interrupted, readerror;
	uint64_t hpcm;
	uint64_t fifo[HPC_FIFO_DEPTH];
	unsigned fifo_head, fifo_count;
	uint64_t hpcr; /* last value popped: what an empty pop returns */
	uint64_t last_cycles;
	uint64_t switches_at_trigger;
	unsigned forced_interrupts, forced_empty_pops;
	struct hpc_request *req; /* issued since the last hpcm write, or NULL */
};

static struct {
	int present;
	const struct rvemu_hpc_profile *profile;
	/* under the exec count source, each counter's handle (emu_exec_bank_event), -1: the profile's rate */
	int exec_core[RVEMU_HPC_CORE_COUNTERS], exec_l2[RVEMU_HPC_L2_COUNTERS];
	unsigned nharts, nslices;
	uint64_t hop_cycles, counter_cycles, csr_cycles;
	unsigned forced_interrupts; /* RVEMU_HPC_FORCE_INTERRUPT, process-wide */
	unsigned forced_empty_pops; /* RVEMU_HPC_FORCE_EMPTY_POP, process-wide */
	int useren_default;         /* RVEMU_HPC_USEREN */
	uint64_t *manager_requests; /* requests issued to each manager (atomic) */
	pthread_key_t client_key;
	/* Guarded by lock: */
	int lock;
	uint64_t now;
	uint64_t *manager_free_at;
	struct hpc_request *active;
} hpc;

static __thread struct hpc_client *tls_client;

/* A spin lock, not a mutex: blocking on a futex would itself be a context switch of the thread. */
static void hpc_lock(void)
{
	while (__atomic_test_and_set(&hpc.lock, __ATOMIC_ACQUIRE))
		;
}

static void hpc_unlock(void)
{
	__atomic_clear(&hpc.lock, __ATOMIC_RELEASE);
}

static void request_unlink(struct hpc_request *r)
{
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		hpc.active = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
}

static void request_release(struct hpc_client *c)
{
	if (c->req == NULL)
		return;
	hpc_lock();
	request_unlink(c->req);
	hpc_unlock();
	free(c->req);
	c->req = NULL;
}

static void client_destroy(void *arg)
{
	struct hpc_client *c = arg;

	request_release(c);
	free(c);
	tls_client = NULL;
}

static struct hpc_client *client_get(void)
{
	struct hpc_client *c = tls_client;

	if (c != NULL)
		return c;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		fprintf(stderr, "librvemu: out of memory for an HPC client\n");
		abort();
	}
	c->hart = emu_thread_self()->hart;
	c->useren = hpc.useren_default;
	c->last_cycles = emu_thread_cycles();
	tls_client = c;
	pthread_setspecific(hpc.client_key, c);
	return c;
}

/* ManagerID -> manager index; -1 when no manager answers that id. */
static int manager_index(uint64_t id)
{
	uint64_t module = id >> 4, extend = id & 0xf;

	if (extend != 0)
		return -1;
	if (module < hpc.nharts)
		return (int)module;
	if (module >= HPC_MODULE_L2_FIRST && module < HPC_MODULE_L2_FIRST + hpc.nslices)
		return (int)(hpc.nharts + (module - HPC_MODULE_L2_FIRST));
	return -1;
}

static int manager_is_l2(unsigned manager)
{
	return manager >= hpc.nharts;
}

static unsigned manager_counters(unsigned manager)
{
	return manager_is_l2(manager) ? RVEMU_HPC_L2_COUNTERS : RVEMU_HPC_CORE_COUNTERS;
}

/* Under the exec count source: one thread's count of a core counter (arg: its exec handle). */
static uint64_t thread_exec_count(struct emu_thread *t, int handle)
{
	return emu_exec_bank_value(t, handle, EMU_EXEC_USER);
}

static uint64_t core_count(unsigned hart, unsigned bit)
{
	if (hpc.exec_core[bit] >= 0) /* what the hart's threads executed (docs/exec-counts.md) */
		return emu_hart_sum(hart, thread_exec_count, hpc.exec_core[bit]);
	return emu_scale(emu_hart_cycles(hart), hpc.profile->core_ppb[bit]);
}

/* L2 traffic of all harts. Reads and writes are the L1 refills and write-backs, per hart, so that
 * sum(L2.read) = sum(L1I.readmiss + L1D.readmiss + L1D.writemiss) and sum(L2.write) = sum(L1D.writeback). */
static uint64_t l2_total(unsigned bit)
{
	const uint64_t *core = hpc.profile->core_ppb;
	uint64_t total = 0;

	for (unsigned h = 0; h < hpc.nharts; h++) {
		if ((bit == 0 || bit == 2) ? hpc.exec_core[1] >= 0 : hpc.exec_l2[bit] >= 0) {
			/* exec source: the refills and write-backs the plugin's L1s sent, its L2's own misses
			 */
			if (bit == 0)
				total += core_count(h, 1) + core_count(h, 3) + core_count(h, 5);
			else if (bit == 2)
				total += core_count(h, 6);
			else
				total += emu_hart_sum(h, thread_exec_count, hpc.exec_l2[bit]);
			continue;
		}
		uint64_t cycles = emu_hart_cycles(h);
		switch (bit) {
		case 0: /* read */
			total += emu_scale(cycles, core[1]) + emu_scale(cycles, core[3]) +
			         emu_scale(cycles, core[5]);
			break;
		case 2: /* write */
			total += emu_scale(cycles, core[6]);
			break;
		default: /* readmiss, writeback: the slice's own rates */
			total += emu_scale(cycles, hpc.profile->l2_ppb[bit]);
			break;
		}
	}
	return total;
}

/* Even interleaving: slice n gets ceil((total - n) / nslices), so the slices sum to the total exactly and
 * every slice count only grows as the total grows. */
static uint64_t slice_share(uint64_t total, unsigned slice)
{
	return total / hpc.nslices + (slice < total % hpc.nslices ? 1 : 0);
}

static uint64_t counter_value(unsigned manager, unsigned bit)
{
	if (bit >= manager_counters(manager))
		return 0; /* no counter behind this bit */
	if (manager_is_l2(manager))
		return slice_share(l2_total(bit), manager - hpc.nharts);
	return core_count(manager, bit);
}

static unsigned hops_to(const struct hpc_client *c, unsigned manager)
{
	if (manager_is_l2(manager))
		return HPC_HOPS_L2;
	return manager == c->hart ? HPC_HOPS_LOCAL : HPC_HOPS_REMOTE;
}

/* Called with the lock held: time passes for the interconnect, managers serve what has reached them. */
static void interconnect_advance(struct hpc_client *c)
{
	uint64_t cycles = emu_thread_cycles();

	hpc.now += hpc.csr_cycles + (cycles >= c->last_cycles ? cycles - c->last_cycles : 0);
	c->last_cycles = cycles;
	for (struct hpc_request *r = hpc.active; r != NULL; r = r->next) {
		if (!r->reachable || r->sampled || r->cancelled || hpc.now < r->start)
			continue;
		for (unsigned k = 0; k < r->ncounters; k++)
			r->values[k] = counter_value(r->manager, r->bits[k]);
		r->sampled = 1;
	}
}

/* How many values of r have reached the client by now (lock held). */
static unsigned values_arrived(const struct hpc_request *r)
{
	uint64_t first_at = r->start + hpc.counter_cycles + r->hops * hpc.hop_cycles;
	uint64_t n;

	if (!r->reachable || !r->sampled || hpc.now < first_at)
		return 0;
	n = 1 + (hpc.now - first_at) / hpc.counter_cycles;
	return n < r->ncounters ? (unsigned)n : r->ncounters;
}

static void fifo_push(struct hpc_client *c, uint64_t v)
{
	if (c->fifo_count == HPC_FIFO_DEPTH)
		return; /* full: the value is dropped (see the model notes) */
	c->fifo[(c->fifo_head + c->fifo_count) % HPC_FIFO_DEPTH] = v;
	c->fifo_count++;
}

/* Move the values that have arrived into the FIFO and set their hpcm bits (lock held). */
static void client_receive(struct hpc_client *c)
{
	struct hpc_request *r = c->req;
	unsigned arrived;

	if (r == NULL || r->cancelled)
		return;
	arrived = values_arrived(r);
	for (; r->delivered < arrived; r->delivered++) {
		fifo_push(c, r->values[r->delivered]);
		c->hpcm |= 1ull << r->bits[r->delivered];
	}
}

static struct hpc_client *client_access(void)
{
	struct hpc_client *c = client_get();

	hpc_lock();
	interconnect_advance(c);
	client_receive(c);
	hpc_unlock();
	return c;
}

static int request_in_flight(const struct hpc_client *c)
{
	const struct hpc_request *r = c->req;

	return r != NULL && !r->cancelled && (!r->reachable || r->delivered < r->ncounters);
}

static void note_interruption(struct hpc_client *c)
{
	if (!c->interrupted)
		EMU_STAT_ADD(hpc_interruptions, 1);
	c->interrupted = 1;
}

static void check_context_switch(struct hpc_client *c)
{
	uint64_t switches;

	if (c->req == NULL)
		return;
	switches = emu_thread_context_switches();
	if (switches != c->switches_at_trigger) {
		c->switches_at_trigger = switches;
		/* a switch endangers a request only while values are still travelling or queued */
		if (request_in_flight(c) || c->fifo_count > 0)
			note_interruption(c);
	}
}

static uint64_t hpcc_value(const struct hpc_client *c)
{
	return (request_in_flight(c) ? RVHW_HPCC_TRIGGER : 0) | (c->interrupted ? RVHW_HPCC_INTERRUPTED : 0) |
	       (c->fifo_count == 0 ? RVHW_HPCC_EMPTY : 0) | (c->readerror ? RVHW_HPCC_READERROR : 0) |
	       (c->manager_id << RVHW_HPCC_ID_SHIFT) | (c->useren ? RVHW_HPCC_USEREN : 0);
}

static int take_forced(unsigned *mine, unsigned *process_wide);

static uint64_t hpcr_pop(struct hpc_client *c)
{
	if (c->fifo_count == 0 || take_forced(&c->forced_empty_pops, &hpc.forced_empty_pops)) {
		c->readerror = 1;
		EMU_STAT_ADD(hpc_readerrors, 1);
		return c->hpcr; /* stale */
	}
	c->hpcr = c->fifo[c->fifo_head];
	c->fifo_head = (c->fifo_head + 1) % HPC_FIFO_DEPTH;
	c->fifo_count--;
	return c->hpcr;
}

static int hpc_csr_read(unsigned csr, uint64_t *value)
{
	struct hpc_client *c = client_access();

	switch (csr) {
	case RVHW_CSR_HPCC:
		check_context_switch(c);
		*value = hpcc_value(c);
		return RVHW_OK;
	case RVHW_CSR_HPCM:
		*value = c->hpcm;
		return RVHW_OK;
	case RVHW_CSR_HPCR:
		*value = hpcr_pop(c);
		return RVHW_OK;
	default:
		return RVHW_EINVAL;
	}
}

/* An injected fault: one of the calling thread's, else one of the process-wide count. */
static int take_forced(unsigned *mine, unsigned *process_wide)
{
	unsigned n;

	if (*mine > 0) {
		(*mine)--;
		return 1;
	}
	n = __atomic_load_n(process_wide, __ATOMIC_RELAXED);
	while (n > 0) {
		if (__atomic_compare_exchange_n(process_wide, &n, n - 1, 0, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

/* trigger 0 -> 1: hpcm names the counters, is cleared, and refills as values arrive. */
static void request_start(struct hpc_client *c)
{
	struct hpc_request *r = calloc(1, sizeof(*r));
	int manager = manager_index(c->manager_id);

	if (r == NULL) {
		fprintf(stderr, "librvemu: out of memory for an HPC request\n");
		abort();
	}
	for (unsigned bit = 0; bit < HPC_MAX_COUNTERS; bit++)
		if (c->hpcm & (1ull << bit))
			r->bits[r->ncounters++] = bit;
	c->hpcm = 0;
	r->reachable = manager >= 0;
	c->switches_at_trigger = emu_thread_context_switches();
	request_release(c);

	hpc_lock();
	if (r->reachable) {
		uint64_t arrival;
		r->manager = (unsigned)manager;
		r->hops = hops_to(c, r->manager);
		arrival = hpc.now + r->hops * hpc.hop_cycles;
		r->start = arrival > hpc.manager_free_at[manager] ? arrival : hpc.manager_free_at[manager];
		hpc.manager_free_at[manager] = r->start + r->ncounters * hpc.counter_cycles;
	}
	r->next = hpc.active;
	if (hpc.active != NULL)
		hpc.active->prev = r;
	hpc.active = r;
	hpc_unlock();
	c->req = r;

	EMU_STAT_ADD(hpc_requests, 1);
	if (r->reachable)
		__atomic_fetch_add(&hpc.manager_requests[r->manager], 1, __ATOMIC_RELAXED);
	if (take_forced(&c->forced_interrupts, &hpc.forced_interrupts))
		note_interruption(c);
}

static int hpcc_write(struct hpc_client *c, uint64_t v)
{
	int trigger = (v & RVHW_HPCC_TRIGGER) != 0, busy = request_in_flight(c);

	if (trigger && !busy && !c->useren)
		return RVHW_EPERM; /* the hardware traps; nothing was written */
	/* interrupted/empty/readerror are read-only; useren is not writable from user mode. */
	c->manager_id = (v & RVHW_HPCC_ID_MASK) >> RVHW_HPCC_ID_SHIFT;
	if (trigger && !busy) {
		request_start(c);
	} else if (!trigger && busy) {
		c->req->cancelled = 1; /* what has arrived stays in the FIFO; nothing more comes */
	}
	return RVHW_OK;
}

static void hpcm_write(struct hpc_client *c, uint64_t v)
{
	if (request_in_flight(c))
		return; /* read-only while trigger = 1 */
	c->hpcm = v;
	request_release(c);
	c->fifo_count = 0; /* empty is set */
	c->interrupted = 0;
	c->readerror = 0;
}

static int hpc_csr_write(unsigned csr, uint64_t value)
{
	struct hpc_client *c = client_access();

	switch (csr) {
	case RVHW_CSR_HPCC:
		return hpcc_write(c, value);
	case RVHW_CSR_HPCM:
		hpcm_write(c, value);
		return RVHW_OK;
	default:
		return RVHW_EPERM; /* hpcr is read-only */
	}
}

static const struct rvemu_hpc_profile *profile_by_name(const char *name)
{
	for (size_t i = 0; i < rvemu_nhpc_profiles; i++)
		if (strcmp(rvemu_hpc_profiles[i].name, name) == 0)
			return &rvemu_hpc_profiles[i];
	char known[512] = "";
	for (size_t i = 0; i < rvemu_nhpc_profiles; i++) {
		strncat(known, " ", sizeof(known) - strlen(known) - 1);
		strncat(known, rvemu_hpc_profiles[i].name, sizeof(known) - strlen(known) - 1);
	}
	emu_config_error("RVEMU_PROFILE=%s is not a known HPC workload profile; known:%s", name, known);
}

static void hpc_init(void)
{
	const char *profile = getenv("RVEMU_PROFILE");

	hpc.profile = profile_by_name(profile != NULL && *profile != '\0' ? profile : "gcc");
	for (unsigned b = 0; b < RVEMU_HPC_CORE_COUNTERS; b++)
		hpc.exec_core[b] = emu_exec_bank_event(rvemu_hpc_core_names[b]);
	for (unsigned b = 0; b < RVEMU_HPC_L2_COUNTERS; b++)
		hpc.exec_l2[b] = emu_exec_bank_event(rvemu_hpc_l2_names[b]);
	hpc.nharts = emu_nharts();
	hpc.nslices = (unsigned)emu_env_u64("RVEMU_L2_SLICES", 2, 1, HPC_MAX_SLICES);
	hpc.hop_cycles = emu_env_u64("RVEMU_HPC_HOP_CYCLES", 4, 0, 1000000);
	hpc.counter_cycles = emu_env_u64("RVEMU_HPC_COUNTER_CYCLES", 2, 1, 1000000);
	hpc.csr_cycles = emu_env_u64("RVEMU_HPC_CSR_CYCLES", 1, 1, 1000000);
	hpc.forced_interrupts = (unsigned)emu_env_u64("RVEMU_HPC_FORCE_INTERRUPT", 0, 0, 1000000000);
	hpc.forced_empty_pops = (unsigned)emu_env_u64("RVEMU_HPC_FORCE_EMPTY_POP", 0, 0, 1000000000);
	hpc.useren_default = (int)emu_env_u64("RVEMU_HPC_USEREN", 1, 0, 1);
	hpc.manager_free_at = calloc(hpc.nharts + hpc.nslices, sizeof(*hpc.manager_free_at));
	hpc.manager_requests = calloc(hpc.nharts + hpc.nslices, sizeof(*hpc.manager_requests));
	if (hpc.manager_free_at == NULL || hpc.manager_requests == NULL ||
	    pthread_key_create(&hpc.client_key, client_destroy) != 0)
		emu_config_error("cannot set up the distributed HPC model (out of memory)");
	/* fork must not copy the lock held: a thread inside client_access holds it while it waits for the
	 * thread registry's lock, which the registry's fork handler holds. Registered after the registry's
	 * handlers, so this prepare runs first and the lock order stays hpc -> registry. */
	pthread_atfork(hpc_lock, hpc_unlock, hpc_unlock);
	hpc.present = 1;
}

const struct emu_bank emu_bank_hpc = {"riscv_lowrisc_hpc", hpc_init, hpc_csr_read, hpc_csr_write, NULL};

/* ---- control API (rvemu.h) ---- */

int rvemu_hpc_truth(uint32_t manager_id, unsigned bit, uint64_t *value)
{
	int manager;

	if (!hpc.present || value == NULL)
		return -1;
	manager = manager_index(manager_id);
	if (manager < 0 || bit >= manager_counters((unsigned)manager))
		return -1;
	*value = counter_value((unsigned)manager, bit);
	return 0;
}

void rvemu_hpc_force_interrupt(unsigned n)
{
	if (hpc.present)
		client_get()->forced_interrupts = n;
}

void rvemu_hpc_force_empty_pop(unsigned n)
{
	if (hpc.present)
		client_get()->forced_empty_pops = n;
}

int rvemu_hpc_manager_requests(uint32_t manager_id, uint64_t *count)
{
	int manager;

	if (!hpc.present || count == NULL)
		return -1;
	manager = manager_index(manager_id);
	if (manager < 0)
		return -1;
	*count = __atomic_load_n(&hpc.manager_requests[manager], __ATOMIC_RELAXED);
	return 0;
}

void rvemu_hpc_set_useren(int on)
{
	if (hpc.present)
		client_get()->useren = on != 0;
}
