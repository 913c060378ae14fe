// SPDX-License-Identifier: MIT
/*
 * The "exec" count source (RVEMU_COUNT_SOURCE=exec, docs/exec-counts.md): a thread's events are what the QEMU
 * plugin librvexec.so counted for it, read from the count file named by $RVEXEC_SHM (plugin/rvexec_shm.h).
 * The emulator runs as riscv64 code inside the same qemu-riscv64 process, so the file is a plain shared
 * mapping and a thread's slot is found by its thread id. Which plugin counters make each model event is the
 * table events/exec_events.csv; events it does not list keep the profile rate (they have no execution-driven
 * meaning).
 *
 * Time is part of this source: a thread's clock is its modelled user cycles (the plugin's CYCLES counter),
 * not RVEMU_CLOCK's. The perf core asks "how many events had thread T by its cycle C"; the plugin's counts
 * only exist *now*, so each time the clock is read the source remembers the whole reading under that instant
 * (a small ring per thread). Every instant the perf core folds at came from the clock, so the counts between
 * two of them are exactly what the plugin counted in between. A C later than every reading takes a new one;
 * an earlier one gets the latest reading not after it. Only user-mode counts are remembered: supervisor-mode
 * counts are the emulator's own work (the kernel's), which the user's cycles cannot place (they stand still
 * while it runs); the perf core reads them as they are now (exec_kernel_now) when an event goes on or off.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "mach.h"
#include "mach_priv.h"
#include "rvexec_event_map.h"
#include "rvexec_shm.h"

#define EXEC_SNAPSHOTS 16

_Static_assert(EMU_ALARM_WATCHES <= RVEXEC_ALARM_WATCHES, "the plugin's alarm holds every watch of a plan");

struct exec_snapshot {
	uint64_t key; /* the thread cycle the perf core asked about */
	uint64_t counts[RVEXEC_NCOUNTS];
};

struct exec_thread {
	pid_t tid;
	struct rvexec_slot *slot; /* NULL: the thread has no slot (it has not run under the plugin) */
	unsigned held, newest;    /* snapshots held, index of the newest */
	struct exec_snapshot snap[EXEC_SNAPSHOTS];
	/* the alarm last armed in the slot (exec_arm): its generation, watches (counters, value), skid, and
	 * the slot's alarm_fired then */
	int armed;
	unsigned armed_n;
	uint32_t armed_skid;
	uint64_t armed_gen, armed_fired;
	uint64_t armed_mask[RVEXEC_ALARM_WATCHES], armed_at[RVEXEC_ALARM_WATCHES];
	struct exec_thread *next;
};

static struct {
	struct rvexec_shm_header *file;
	/* per model event: how many plugin counters make it (0: profile rate), which */
	uint8_t ncounters[64];
	uint8_t negative[64]; /* bit i: counters[ev][i] is subtracted */
	uint8_t counters[64][RVEXEC_EVENT_MAX_COUNTERS];
	struct exec_thread *threads;
} exec;
static pthread_once_t exec_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;

static void exec_open(void)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	const struct rvemu_model *m = emu_model();
	struct stat st;
	if (!path || !*path)
		emu_config_error(
		    "RVEMU_COUNT_SOURCE=exec reads the exec-count plugin's count file: set %s to it "
		    "(docs/exec-counts.md)",
		    RVEXEC_SHM_ENV);
	int fd = EMU_REAL(open)(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0)
		emu_config_error("%s=%s: %s", RVEXEC_SHM_ENV, path, strerror(errno));
	struct rvexec_shm_header *h = MAP_FAILED;
	if ((uint64_t)st.st_size >= sizeof(*h))
		h = EMU_REAL(mmap)(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EMU_REAL(close)(fd);
	if (h == MAP_FAILED || h->magic != RVEXEC_SHM_MAGIC)
		emu_config_error("%s=%s is not a count file of the exec-count plugin", RVEXEC_SHM_ENV, path);
	if (h->version != RVEXEC_SHM_VERSION || h->header_size != sizeof(*h) ||
	    h->slot_size != sizeof(struct rvexec_slot) || h->ncounts < RVEXEC_NCOUNTS ||
	    h->ncounts > RVEXEC_COUNT_CAPACITY || (uint64_t)st.st_size < rvexec_shm_size(h->nslots))
		emu_config_error(
		    "%s=%s: a count file of another plugin version (version %u, %u counters; this "
		    "emulator reads version %u with %u)",
		    RVEXEC_SHM_ENV, path, h->version, h->ncounts, RVEXEC_SHM_VERSION, RVEXEC_NCOUNTS);
	if (strncmp(h->model, m->model, sizeof(h->model)) != 0)
		emu_config_error("%s=%s counts model '%.*s', the emulator runs '%s' (RVEMU_MODEL)",
		                 RVEXEC_SHM_ENV, path, (int)sizeof(h->model), h->model, m->model);
	for (size_t ev = 0; ev < m->nevents && ev < 64; ev++)
		for (size_t i = 0; i < RVEXEC_NEVENT_MAPS; i++) {
			const struct rvexec_event_map *e = &rvexec_event_maps[i];
			if (strcmp(e->model, m->model) == 0 && strcmp(e->event, m->events[ev].name) == 0) {
				exec.ncounters[ev] = e->ncounters;
				exec.negative[ev] = e->negative;
				memcpy(exec.counters[ev], e->counters, sizeof(exec.counters[ev]));
			}
		}
	exec.file = h;
}

/* The file is opened at load time (emu_init), so a bad one stops the program before it runs. */
void emu_exec_source_init(void)
{
	pthread_once(&exec_once, exec_open);
}

/* Probes from tid % nslots, where the plugin claims a thread's slot, so the live slot is the first probe
 * unless another thread's took its place: a short lookup whose length does not depend on the thread id (the
 * first entry into the emulator makes it before the slot is in supervisor mode, so it is charged to the
 * user). */
static struct rvexec_slot *slot_of(pid_t tid)
{
	struct rvexec_slot *found = NULL;
	uint32_t n = exec.file->nslots;
	for (uint32_t probe = 0; probe < n; probe++) {
		struct rvexec_slot *s = rvexec_shm_slot(exec.file, ((uint32_t)tid + probe) % n);
		if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) != (uint32_t)tid)
			continue;
		found = s; /* a live slot wins over one an earlier thread of the same id left */
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == RVEXEC_SLOT_LIVE)
			break;
	}
	return found;
}

/* Called with exec_lock held. */
static struct exec_thread *exec_thread(pid_t tid)
{
	struct exec_thread *et;
	for (et = exec.threads; et; et = et->next)
		if (et->tid == tid)
			break;
	if (!et) {
		et = calloc(1, sizeof(*et));
		if (!et)
			return NULL;
		et->tid = tid;
		/* a reading that needs no look: at modelled cycle 0 every count is 0 (the plugin counts a
		 * thread from its first block, and every block costs a cycle). So an instant the perf core
		 * has not read from the clock (a fork child's context starts at 0) has its answer. */
		et->held = 1;
		et->next = exec.threads;
		exec.threads = et;
	}
	if (!et->slot) /* the plugin claims a slot when the thread runs its first block */
		et->slot = slot_of(tid);
	return et;
}

/* Takes a reading of the thread's slot, remembered under its own modelled cycles. Called with exec_lock held.
 */
static const struct exec_snapshot *take_reading(struct exec_thread *et)
{
	static const struct exec_snapshot none;
	if (!et->slot)
		return et->held ? &et->snap[et->newest] : &none;
	uint64_t cycles =
	    __atomic_load_n(&et->slot->counts[RVEXEC_MODE_USER][RVEXEC_CYCLES], __ATOMIC_RELAXED);
	struct exec_snapshot *newest = &et->snap[et->newest];
	if (et->held && cycles <= newest->key)
		return newest; /* nothing ran since (every block costs at least a cycle) */
	unsigned i = et->held == 0 ? 0 : (et->newest + 1) % EXEC_SNAPSHOTS;
	struct exec_snapshot *s = &et->snap[i];
	for (unsigned c = 0; c < RVEXEC_NCOUNTS; c++)
		s->counts[c] = __atomic_load_n(&et->slot->counts[RVEXEC_MODE_USER][c], __ATOMIC_RELAXED);
	s->key = s->counts[RVEXEC_CYCLES]; /* the cycles of this very reading */
	et->newest = i;
	if (et->held < EXEC_SNAPSHOTS)
		et->held++;
	return s;
}

/* The counts at thread cycle `key` (see the file comment). Called with exec_lock held. */
static const struct exec_snapshot *reading_at(struct exec_thread *et, uint64_t key)
{
	if (et->held == 0 || key > et->snap[et->newest].key)
		take_reading(et);
	const struct exec_snapshot *best = NULL, *oldest = NULL;
	for (unsigned n = 0; n < et->held; n++) {
		const struct exec_snapshot *s = &et->snap[(et->newest + EXEC_SNAPSHOTS - n) % EXEC_SNAPSHOTS];
		oldest = s;
		if (!best && s->key <= key)
			best = s;
	}
	return best ? best : oldest;
}

/* The source's own clock: the thread's modelled user cycles. Every instant the perf core works with comes
 * from here, so the reading taken now is the one later questions about this instant get. */
static uint64_t exec_thread_cycles(struct emu_thread *t)
{
	uint64_t c = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	if (et)
		c = take_reading(et)->key;
	pthread_mutex_unlock(&exec_lock);
	return c;
}

/* An event's value from one reading: its counters added, or subtracted where the table says (a hit count is
 * accesses - misses; every subtracted counter is part of the counters added before it, so the sum never goes
 * below 0). */
static uint64_t mapped_sum(const uint64_t *counts, unsigned n, uint8_t negative, const uint8_t *counters)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += (negative >> i) & 1 ? -counts[counters[i]] : counts[counters[i]];
	return sum;
}

static uint64_t exec_count(const struct emu_thread *t, size_t ev, uint64_t cycles)
{
	if (ev >= 64 || exec.ncounters[ev] == 0) /* no execution-driven meaning: the profile rate */
		return emu_scale(cycles, emu_model()->events[ev].ppb);
	uint64_t sum = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	if (et) {
		const struct exec_snapshot *s = reading_at(et, cycles);
		sum = mapped_sum(s->counts, exec.ncounters[ev], exec.negative[ev], exec.counters[ev]);
	}
	pthread_mutex_unlock(&exec_lock);
	return sum;
}

static uint64_t mask_delta(const struct emu_thread *t, uint64_t evmask, uint64_t a, uint64_t b)
{
	const struct rvemu_model *m = emu_model();
	uint64_t d = 0;
	for (size_t i = 0; i < m->nevents; i++)
		if (evmask & (1ull << i))
			d += exec_count(t, i, b) - exec_count(t, i, a);
	return d;
}

/* Where inside (from, limit] the count was reached is not known from readings alone (finding the exact
 * instruction is the plugin's part, to come): the answer is limit, the instant the perf core is at. */
static uint64_t exec_cycle_reaching(const struct emu_thread *t, uint64_t evmask, uint64_t from,
                                    uint64_t limit, uint64_t need)
{
	return mask_delta(t, evmask, from, limit) >= need ? limit : limit + 1;
}

/* A lower bound, in modelled cycles, for timer planning: every instruction costs at least one cycle
 * (exec_models.csv's latencies are >= 1, penalties only add), and is in exactly one class, so the class
 * counters of a mask together grow by at most one per cycle (times how many of the mask's events share a
 * class), INSTRET and CYCLES by one each, any other counter by at most 2 (an amo's or sc's read and write
 * access, a fetch crossing two lines); unmapped events grow at their profile rate. A bound this close keeps
 * the alarms of an event made of several counters (watched through the cycles) few: a bound of 2 per counter
 * made PAPI_FP_OPS (5 class counters) wake the thread every 71429 cycles for a period of 10^6. */
static uint64_t exec_cycles_for(const struct emu_thread *t, uint64_t evmask, uint64_t need)
{
	(void)t;
	const struct rvemu_model *m = emu_model();
	unsigned class_users[RVEXEC_NCOUNTS] = {0}, classes = 0;
	unsigned __int128 rate_ppb = 0; /* events per 10^9 cycles, at most */
	for (size_t i = 0; i < m->nevents && i < 64; i++) {
		if (!(evmask & (1ull << i)))
			continue;
		if (!exec.ncounters[i]) {
			rate_ppb += m->events[i].ppb;
			continue;
		}
		for (unsigned j = 0; j < exec.ncounters[i]; j++) {
			unsigned c = exec.counters[i][j];
			if (c >= RVEXEC_FIRST_CLASS && c < RVEXEC_FIRST_CLASS + RVEXEC_NCLASSES) {
				if (++class_users[c] > classes)
					classes = class_users[c];
			} else {
				rate_ppb += (c == RVEXEC_INSTRET || c == RVEXEC_CYCLES ? 1u : 2u) * RVEMU_PPB;
			}
		}
	}
	rate_ppb += (unsigned __int128)classes * RVEMU_PPB;
	if (!rate_ppb)
		return UINT64_MAX;
	unsigned __int128 c = ((unsigned __int128)need * RVEMU_PPB + rate_ppb - 1) / rate_ppb;
	return c > UINT64_MAX ? UINT64_MAX : (uint64_t)c;
}

/* The emulator's own code stands for the kernel: from the outermost entry to the exit, the thread's slot is
 * in supervisor mode, so the plugin charges those blocks to RVEXEC_MODE_SUPERVISOR (read by no event: every
 * modelled event is a user event, as with exclude_kernel). The plugin charges a block to the mode the slot
 * has when the block starts: the rest of the block that stores the mode goes to the mode it had, and the
 * instructions of a call into the emulator before its entry (re-entry guard first) and of its return
 * after the exit stay the user's: about 300 per emulated read() (tests/exec/kernel_mode.c), where a board's
 * libc wrapper runs about 20 in user mode. The slot is found once per thread
 * (lock-free: this runs inside the re-entry guard or with signals blocked, in the trap handler). */
static __thread struct rvexec_slot *kernel_slot __attribute__((tls_model("initial-exec")));

static void exec_kernel_mode(enum emu_kernel_mode mode)
{
	if (mode == EMU_KERNEL_FORGET) { /* a fork child has a slot of its own, found at its next entry */
		kernel_slot = NULL;
		return;
	}
	if (!exec.file)
		return;
	if (!kernel_slot)
		kernel_slot = slot_of(emu_gettid());
	if (kernel_slot)
		__atomic_store_n(&kernel_slot->mode,
		                 mode == EMU_KERNEL_ENTER ? RVEXEC_MODE_SUPERVISOR : RVEXEC_MODE_USER,
		                 __ATOMIC_RELAXED);
}

/* The kernel's share of an event that does not exclude it: what the plugin counted in supervisor mode (the
 * emulator's own code) in the thread's slot so far, read as it is now. The slot is shared memory, so a reader
 * in another thread or process reads the target's own count, never its own supervisor work. Events with no
 * execution-driven meaning have no kernel share (their profile rate runs on the user's cycles). */
static uint64_t exec_kernel_now(const struct emu_thread *t, size_t ev)
{
	if (ev >= 64 || exec.ncounters[ev] == 0)
		return 0;
	uint64_t sum = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	if (et && et->slot) {
		uint64_t now[RVEXEC_NCOUNTS] = {0};
		for (unsigned i = 0; i < exec.ncounters[ev]; i++) {
			unsigned c = exec.counters[ev][i];
			now[c] =
			    __atomic_load_n(&et->slot->counts[RVEXEC_MODE_SUPERVISOR][c], __ATOMIC_RELAXED);
		}
		sum = mapped_sum(now, exec.ncounters[ev], exec.negative[ev], exec.counters[ev]);
	}
	pthread_mutex_unlock(&exec_lock);
	return sum;
}

/* ------------------------------------------------------------------------------------- the alarm */
/* The plugin counters whose sum makes the events of evmask (bit n: enum rvexec_count n), if there is such a
 * sum: the alarm watches one sum of distinct counters. 0 when an event has no execution-driven meaning or a
 * counter is in two of the events (the events' total counts it twice). */
static uint64_t counter_mask(uint64_t evmask)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < 64; i++) {
		if (!(evmask & (1ull << i)))
			continue;
		if (exec.ncounters[i] == 0 || exec.negative[i]) /* a difference is no sum to watch */
			return 0;
		for (unsigned j = 0; j < exec.ncounters[i]; j++) {
			uint64_t bit = 1ull << exec.counters[i][j];
			if (mask & bit)
				return 0;
			mask |= bit;
		}
	}
	return mask;
}

/* The plugin counters of all the events of evmask (a bound: their sum grows at least as fast as any one
 * event's count, a difference of counters included); 0 when one has no execution-driven meaning. */
static uint64_t counter_union(uint64_t evmask)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < 64; i++) {
		if (!(evmask & (1ull << i)))
			continue;
		if (exec.ncounters[i] == 0)
			return 0;
		for (unsigned j = 0; j < exec.ncounters[i]; j++)
			mask |= 1ull << exec.counters[i][j];
	}
	return mask;
}

static uint64_t sum_of(const uint64_t *counts, uint64_t mask)
{
	uint64_t sum = 0;
	for (uint64_t m = mask; m; m &= m - 1)
		sum += __atomic_load_n(&counts[__builtin_ctzll(m)], __ATOMIC_RELAXED);
	return sum;
}

/* Time under this source: the perf core's next look is the plugin's alarm (rvexec_shm.h), armed at counts.
 * When one sampling event made of one plugin counter decides the plan, the alarm watches that counter at the
 * exact value of the overflow, and its alarm_pc is the instruction that made it (exec_pc_at). When several
 * sampling events decide, it watches each event's own counters at its own overflow (a bound for an event
 * whose counters are no plain sum), so it wakes at the first of them: one union of all their counters at
 * the least need woke the thread every `need` cycles while a slow event (FP instructions in integer code)
 * held the least need and the cycles grew the union (PAPI's overflow tests with Sscofpmf, which never
 * ended). Otherwise it watches the modelled cycles at the plan's bound (the perf core looks, finds what is
 * due, and plans again). A value the thread is already past (it ran since `from`: the rest of an overflow
 * handler) fires at its next block. Called with signals blocked, by the thread itself or (an event attached
 * to it) another: the arming is a sequence lock with a generation (rvexec_alarm_begin, rvexec_alarm_publish),
 * so the plugin neither mixes two armings' fields nor fires the new one for the old one's count. */
static int exec_arm(struct emu_thread *t, int signo, const struct emu_alarm_plan *p)
{
	int r = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	struct rvexec_slot *slot = et ? et->slot : NULL;
	if (!slot) { /* the thread has run no block under the plugin: nothing of it can overflow yet */
		r = p->cycles == UINT64_MAX ? 0 : -1;
		goto out;
	}
	uint64_t gen = rvexec_alarm_begin(slot);
	et->armed = 0;
	if (p->cycles == UINT64_MAX)
		goto out;
	const struct exec_snapshot *base = reading_at(et, p->from);
	const uint64_t cycles_bit = 1ull << RVEXEC_CYCLES;
	const uint64_t *now = slot->counts[RVEXEC_MODE_USER];
	uint32_t skid = 0;
	uint64_t mask[RVEXEC_ALARM_WATCHES] = {0}, at[RVEXEC_ALARM_WATCHES] = {0};
	unsigned n = 0;
	if (p->exact && (mask[0] = counter_mask(p->evmask)) != 0) {
		at[0] = sum_of(base->counts, mask[0]) + p->need;
		skid = p->skid > UINT32_MAX ? UINT32_MAX : (uint32_t)p->skid;
		n = 1;
	} else if (!p->exact && p->nwatch && p->nwatch <= RVEXEC_ALARM_WATCHES) {
		for (n = 0; n < p->nwatch; n++) {
			uint64_t m = counter_mask(p->watch_evmask[n]);
			mask[n] = m ? m : counter_union(p->watch_evmask[n]);
			if (!mask[n] || !p->watch_need[n])
				break; /* an event without execution-driven meaning: the cycle bound below */
			at[n] = sum_of(base->counts, mask[n]) + p->watch_need[n];
		}
		if (n < p->nwatch)
			n = 0;
	} else if (!p->exact && p->evmask && p->need && (mask[0] = counter_union(p->evmask)) != 0) {
		at[0] = sum_of(base->counts, mask[0]) + p->need;
		n = 1;
	}
	if (n == 0) {
		mask[0] = cycles_bit;
		at[0] = p->from + (p->cycles ? p->cycles : 1);
		n = 1;
	}
	for (unsigned i = 0; i < n; i++)
		if (sum_of(now, mask[i]) >= at[i]) {
			/* already there: the next block (it costs at least a cycle) wakes the perf core */
			mask[0] = cycles_bit;
			at[0] = sum_of(now, cycles_bit) + 1;
			skid = 0;
			n = 1;
			break;
		}
	et->armed = 1;
	et->armed_n = n;
	et->armed_gen = gen;
	et->armed_skid = skid;
	memcpy(et->armed_mask, mask, sizeof(mask));
	memcpy(et->armed_at, at, sizeof(at));
	et->armed_fired = __atomic_load_n(&slot->alarm_fired, __ATOMIC_ACQUIRE);
	__atomic_store_n(&slot->alarm_mask, mask[0], __ATOMIC_RELAXED);
	__atomic_store_n(&slot->alarm_count, RVEXEC_CYCLES, __ATOMIC_RELAXED); /* (the mask rules) */
	__atomic_store_n(&slot->alarm_at, at[0], __ATOMIC_RELAXED);
	for (unsigned i = 1; i < RVEXEC_ALARM_WATCHES; i++) {
		__atomic_store_n(&slot->alarm_more_mask[i - 1], i < n ? mask[i] : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->alarm_more_at[i - 1], at[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&slot->alarm_skid, skid, __ATOMIC_RELAXED);
	rvexec_alarm_publish(slot, gen, (uint32_t)signo);
out:
	pthread_mutex_unlock(&exec_lock);
	return r;
}

/* The instruction at which the events of evmask had `need` more than at cycle `from`, when the last alarm
 * armed watched exactly that, and that watch of that arming fired (and its modelled cycle). evmask 0: the
 * instruction at which the cycles reached from + need: an alarm armed there, or the skid of the last alarm
 * ending there. Else 0. */
static uint64_t exec_pc_at(const struct emu_thread *t, uint64_t evmask, uint64_t from, uint64_t need,
                           uint64_t *cycle)
{
	uint64_t pc = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	if (!et || !et->slot || !et->armed ||
	    __atomic_load_n(&et->slot->alarm_fired, __ATOMIC_ACQUIRE) == et->armed_fired ||
	    __atomic_load_n(&et->slot->alarm_fired_gen, __ATOMIC_RELAXED) != et->armed_gen)
		goto out; /* not fired, or what fired was an earlier arming */
	uint64_t mask = 1ull << RVEXEC_CYCLES, at = from + need;
	if (evmask) {
		mask = counter_mask(evmask);
		if (!mask)
			goto out;
		at = sum_of(reading_at(et, from)->counts, mask) + need;
	}
	uint32_t w = __atomic_load_n(&et->slot->alarm_fired_watch, __ATOMIC_RELAXED);
	uint64_t fired_cycles = __atomic_load_n(&et->slot->alarm_cycles, __ATOMIC_RELAXED);
	if (w < et->armed_n && mask == et->armed_mask[w] && at == et->armed_at[w]) {
		/* the overflow's instruction (or, once a skid ran out, the skid's: only its cycle is used
		 * then) */
		pc = __atomic_load_n(&et->slot->alarm_pc, __ATOMIC_RELAXED);
		if (cycle)
			*cycle = fired_cycles;
	} else if (!evmask && et->armed_skid && fired_cycles + et->armed_skid == at &&
	           (uint32_t)__atomic_load_n(&et->slot->alarm_armed, __ATOMIC_ACQUIRE) == 0) {
		pc = __atomic_load_n(&et->slot->alarm_pc, __ATOMIC_RELAXED); /* the skid ran out: sent */
		if (cycle)
			*cycle = at;
	}
out:
	pthread_mutex_unlock(&exec_lock);
	return pc;
}

/* The plugin sends the alarm as a host signal; 1..31 are numbered alike on the host and the riscv64 guest
 * (qemu-user maps real-time signals), and SIGSTKFLT is one no program or library here uses. */

/* ---- the counter banks: the distributed HPC (bank_hpc.c) and BOOM's bank (bank_boom.c) ----
 * Their events are listed in exec_events.csv under the bank's model, by the bank table's names. A bank asks
 * once, at its init, which of its events the exec source counts (a handle), and reads a thread's value of
 * one whenever it needs it; events without a handle keep the bank's profile rate. */

/* The handle of a bank event (mach_count.c's emu_exec_bank_event asks when the exec source runs). */
int emu_exec_event_handle(const char *event)
{
	const char *model = emu_model()->model;
	for (size_t i = 0; i < RVEXEC_NEVENT_MAPS; i++)
		if (strcmp(rvexec_event_maps[i].model, model) == 0 &&
		    strcmp(rvexec_event_maps[i].event, event) == 0)
			return (int)i;
	return -1;
}

uint64_t emu_exec_bank_value(struct emu_thread *t, int handle, enum emu_exec_mode mode)
{
	if (handle < 0 || (size_t)handle >= RVEXEC_NEVENT_MAPS || !exec.file)
		return 0;
	const struct rvexec_event_map *e = &rvexec_event_maps[handle];
	uint64_t v = 0;
	pthread_mutex_lock(&exec_lock);
	struct exec_thread *et = exec_thread(t->tid);
	if (et && mode == EMU_EXEC_USER) { /* the reading the thread's clock was taken with, or a newer one */
		v = mapped_sum(take_reading(et)->counts, e->ncounters, e->negative, e->counters);
	} else if (et && et->slot) { /* the emulator's own work (the kernel's), read as it is now */
		uint64_t now[RVEXEC_NCOUNTS];
		for (unsigned c = 0; c < RVEXEC_NCOUNTS; c++)
			now[c] =
			    __atomic_load_n(&et->slot->counts[RVEXEC_MODE_SUPERVISOR][c], __ATOMIC_RELAXED);
		v = mapped_sum(now, e->ncounters, e->negative, e->counters);
	}
	pthread_mutex_unlock(&exec_lock);
	return v;
}

const struct emu_count_source emu_exec_source = {
    .name = "exec",
    .count = exec_count,
    .cycle_reaching = exec_cycle_reaching,
    .cycles_for = exec_cycles_for,
    .thread_cycles = exec_thread_cycles,
    .kernel_mode = exec_kernel_mode,
    .kernel_now = exec_kernel_now,
    .arm = exec_arm,
    .pc_at = exec_pc_at,
    .signal = SIGSTKFLT,
};
