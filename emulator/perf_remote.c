// SPDX-License-Identifier: MIT
/* Events on a task of another process of the run (perf_event_open with its pid: `perf stat -- cmd`,
 * PAPI_attach). The task is a proxy (mach_run.c): its cycles are what its own emulator published, so this
 * process counts it with the same count source and the same scheduling as its owner would.
 *
 * As the kernel:
 *  - enable_on_exec: when the task execs (its slot's exec count moves), the context is accounted up to the
 *    exec's cycle, then every event with enable_on_exec that is off is enabled and the flag cleared
 *    (perf_event_enable_on_exec, event_enable_on_exec);
 *  - inherit: a task created after the event was opened by the target or one of its inheriting descendants
 *    (fork, pthread_create, exec'd children included) gets its own copy of the event, counting from its
 *    start; the event reads its own count plus its copies' (perf_event_init_task, perf_event_read_value's
 *    child_list). A copy follows ENABLE, DISABLE and RESET of its event (perf_event_for_each_child).
 *  - a task that exited reads what it had: its slot keeps its final cycles; one killed without a word reads
 *    what it had when last seen. Nothing here waits for the task.
 * The copies live in this process and are found when the event is next synchronised (read, ioctl, close),
 * not when the task is created: a copy made late is credited with what its task counted before (the count
 * source's count from the task's start), so the sum is the kernel's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_priv.h"

struct emu_remote_set {
	uint64_t after; /* the run's sequence when the event was opened: tasks created later inherit */
	int root_slot;
	int cpu; /* a CPU-wide event: every task on this CPU, -1 otherwise */
	unsigned char seen[EMU_RUN_TASKS / 8];
	size_t n, cap;
	struct emu_event **copy;
};

/* enable_on_exec, then the context up to now. */
static void task_sync(struct emu_thread *t)
{
	uint64_t exec_cycles;
	if (t->remote && emu_run_exec_pending(t, &exec_cycles)) {
		emu_ctx_sync(t, exec_cycles, EMU_IP_KERNEL);
		struct emu_event *enabled[64];
		size_t n = 0;
		for_each_group(emu_ctx_of(t), g) for_each_member(g, e)
		{
			if (!e->attr.enable_on_exec)
				continue;
			e->attr.enable_on_exec = 0;
			if (e->state < EV_INACTIVE) {
				e->state = EV_INACTIVE;
				if (n < sizeof(enabled) / sizeof(enabled[0]))
					enabled[n++] = e;
			}
		}
		if (n) {
			emu_ctx_schedule(t);
			/* faults and switches count from the exec, not from when this process noticed it */
			struct emu_thread_acct at_exec;
			emu_run_exec_acct(t, &at_exec);
			for (size_t i = 0; i < n; i++)
				if (enabled[i]->kind == EK_SOFTWARE)
					enabled[i]->sw_base = emu_sw_value(enabled[i], &at_exec);
		}
	}
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
}

static void find_copies(struct emu_event *ev);

/* A sampling event on another process's task: published for the task's own emulator, which samples it
 * (its alarm, its PC, its stack) into this event's ring. The event itself is not in any context here. */
static int xs_publish(struct emu_event *ev)
{
	struct emu_xsampler *xs = emu_run_block_claim();
	if (!xs) {
		static int told;
		if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
			        "librvemu: the run's table of events sampling another process is full (%d): "
			        "perf_event_open fails with ENOMEM\n",
			        EMU_RUN_BLOCKS);
		return -ENOMEM;
	}
	struct stat st;
	if (fstat(ev->fd, &st) != 0) {
		emu_run_block_release(xs);
		return -errno;
	}
	xs->fd = ev->fd;
	xs->ino = (uint64_t)st.st_ino;
	xs->dev = (uint64_t)st.st_dev;
	xs->gen = emu_run_block_gen_next();
	/* CPU-wide (perf record -a): no task of its own; every task of the run that runs on the CPU makes a
	 * shadow of it when it looks at the blocks, as the kernel's CPU context holds the event for whatever
	 * task runs there */
	xs->cpu_wide = ev->target->cpu_wide;
	xs->root_slot = xs->cpu_wide ? -1 : emu_run_slot_of(ev->target);
	xs->cpu = ev->cpu;
	xs->enabled = ev->state >= EV_INACTIVE;
	xs->kind = (int32_t)ev->kind;
	xs->evmask = ev->evmask;
	xs->after = emu_run_seq();
	xs->id = ev->id;
	xs->period = ev->period;
	xs->attr = ev->attr;
	xs->exec_seen = emu_run_task_execs(xs->root_slot);
	xs->ring_block = emu_run_block_index(xs);
	ev->xs = xs;
	if (ev->output)
		emu_remote_set_output(ev); /* PERF_FLAG_FD_OUTPUT */
	__atomic_store_n(&xs->ready, EMU_BLOCK_SAMPLER, __ATOMIC_RELEASE);
	emu_run_block_published();
	return 0;
}

void emu_remote_set_output(struct emu_event *ev)
{
	const struct emu_event *to = ev->output;
	struct emu_xsampler *xs = ev->xs;
	if (to && !to->xs)
		return; /* not a buffer of the sampled task's: left out */
	/* one store: a shadow takes the buffer's fd and memfd from the block it names */
	__atomic_store_n(&xs->ring_block, to ? to->xs->ring_block : emu_run_block_index(xs),
	                 __ATOMIC_RELEASE);
	if (__atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE))
		emu_run_block_published(); /* a task that found no buffer to map looks again */
}

int emu_remote_prepare(struct emu_event *ev)
{
	if (!ev->target->remote)
		return 0;
	if (is_sampling(ev))
		return xs_publish(ev);
	if (ev->attr.inherit || ev->target->cpu_wide) {
		struct emu_remote_set *s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->after = emu_run_seq();
		s->root_slot = emu_run_slot_of(ev->target);
		s->cpu = ev->target->cpu_wide ? (int)ev->target->hart : -1;
		ev->rset = s;
		if (!ev->acc) {
			ev->acc = calloc(1, sizeof(*ev->acc)); /* freed with the event */
			if (!ev->acc)
				return -ENOMEM;
			ev->acc_local = 1;
		}
	}
	task_sync(ev->target); /* an exec before the open is not this event's */
	if (ev->rset && ev->rset->cpu >= 0)
		find_copies(ev); /* the tasks on the CPU now count from now */
	return 0;
}

static struct emu_event *make_copy(struct emu_event *ev, struct emu_thread *t, int existed)
{
	struct emu_event *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->attr = ev->attr;
	c->id = ev->id;
	c->fd = -1;
	c->kind = ev->kind;
	c->evmask = ev->evmask;
	c->target = t;
	c->cpu = ev->cpu;
	c->hw_idx = -1;
	c->leader = c;
	c->state = ev->state == EV_ACTIVE ? EV_INACTIVE : ev->state;
	c->inherited = 1;
	c->owner_pid = ev->owner_pid;
	struct emu_ctx *ctx = emu_ctx_of(t);
	if (existed) /* a CPU-wide event counts a task that was there from the open: from now */
		emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	/* the task already ran (its context was accounted for another event): what it counted since its start
	 */
	uint64_t ran = ctx->last_cycles;
	if (!existed && ran && c->state >= EV_INACTIVE && c->kind != EK_SOFTWARE && !c->attr.exclude_user) {
		c->count = emu_events_between(t, c->evmask, 0, ran);
		c->time_enabled = c->time_running = emu_cycles_to_ns(ran);
	}
	emu_ctx_insert(c);
	emu_ctx_schedule(t);
	return c;
}

static void find_copies(struct emu_event *ev)
{
	struct emu_remote_set *s = ev->rset;
	unsigned n = emu_run_tasks();
	for (unsigned i = 0; i < n && i < EMU_RUN_TASKS; i++) {
		if (s->seen[i / 8] & (1u << (i % 8)))
			continue;
		if (s->cpu >= 0 ? emu_run_task_hart((int)i) != s->cpu
		                : !emu_run_descendant((int)i, s->root_slot, s->after))
			continue;
		s->seen[i / 8] |= (unsigned char)(1u << (i % 8));
		struct emu_thread *t = emu_run_task_thread((int)i);
		if (!t)
			t = emu_thread_by_tid(emu_run_task_tid((int)i)); /* a thread of this process */
		if (!t)
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 8;
			struct emu_event **p = realloc(s->copy, cap * sizeof(*p));
			if (!p)
				return;
			s->copy = p;
			s->cap = cap;
		}
		struct emu_event *c = make_copy(ev, t, s->cpu >= 0 && emu_run_task_born((int)i) <= s->after);
		if (c)
			s->copy[s->n++] = c;
	}
}

static void *map_owner_ring(const struct emu_xsampler *xs, size_t *len, int *ring_block);

/* Whether the event of `xs` reaches the task of `slot` (its own task, or one it inherits to), on any CPU. */
static int xs_reaches_slot(const struct emu_xsampler *xs, int slot)
{
	if (xs->cpu_wide)
		return 1; /* any task; the callers filter by CPU (event_filter_match) */
	return slot == xs->root_slot ||
	       (xs->attr.inherit && emu_run_descendant(slot, xs->root_slot, xs->after));
}

/* A record for a task this thread has no shadow for (a killed task's EXIT, a FORK on its parent's CPU): a
 * writer of the event's ring for that one record, made like a shadow but in no context. 0 if made. */
static int ring_writer_open(struct emu_xsampler *xs, struct emu_event *w)
{
	size_t len = 0;
	int ring_block = -1;
	memset(w, 0, sizeof(*w));
	void *page = map_owner_ring(xs, &len, &ring_block);
	if (!page)
		return -1;
	w->attr = xs->attr;
	w->id = xs->id;
	w->fd = -1;
	w->kind = (enum emu_ev_kind)xs->kind;
	w->evmask = xs->evmask;
	w->cpu = xs->cpu;
	w->hw_idx = -1;
	w->leader = w;
	w->state = EV_INACTIVE; /* records follow the owner's ENABLE / DISABLE (emu_xring_begin) */
	w->page = page;
	w->map_len = len;
	w->data_size = len - (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	w->xs = xs;
	w->xs_ring_block = ring_block;
	w->xs_gen = __atomic_load_n(&xs->gen, __ATOMIC_RELAXED);
	w->shadow = 1;
	return 0;
}

static void ring_writer_close(struct emu_event *w)
{
	emu_shadow_publish(w); /* a record that did not fit is counted lost */
	EMU_REAL(munmap)(w->page, w->map_len);
}

/* One record into every event of the run that reaches the task of `slot` and takes task records on `cpu`
 * (the owner's own events included: its ring is written as the shadows write it, under the ring's lock).
 * `skip`: a block whose record the caller writes itself. */
static void task_record_everywhere(int slot, int fork, const struct emu_task_record *k,
                                   const struct emu_xsampler *skip)
{
	for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
		struct emu_xsampler *xs = emu_run_block_at(i);
		if (!xs || xs == skip || __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) != EMU_BLOCK_SAMPLER ||
		    (xs->cpu >= 0 && (uint32_t)xs->cpu != k->cpu) || !xs_reaches_slot(xs, slot))
			continue;
		/* not on the stack: this runs on the program's signal stack too (SIGCHLD), maybe a small
		 * sigaltstack; one writer at a time under the perf lock */
		static struct emu_event w;
		if (ring_writer_open(xs, &w) != 0)
			continue;
		emu_sb_task_record(&w, fork, k);
		ring_writer_close(&w);
	}
}

/* The EXIT of a task that wrote none itself (killed, or a sibling at exit_group), from its slot in the run's
 * table: the task's ids, CPU and cycles as the table last saw them, into every ring that follows it. */
static void slot_exit_record(struct emu_thread *self, int slot, pid_t pid, pid_t tid, pid_t ppid)
{
	uint64_t cycles = emu_run_task_cycles(slot);
	struct emu_task_record k = {(uint32_t)pid,
	                            (uint32_t)ppid,
	                            (uint32_t)tid,
	                            (uint32_t)ppid,
	                            pid,
	                            tid,
	                            (uint32_t)emu_run_task_hart(slot),
	                            emu_clock_record_time(self, &cycles)};
	task_record_everywhere(slot, 0, &k, NULL);
}

/* PERF_RECORD_EXIT of the tasks of the run that died without running their exit path (SIGKILL, any signal
 * whose default kills): the kernel writes it in do_exit whatever killed the task, the task's own emulator
 * never runs again, so the first process of the run to see it dead writes it, once (the slot's claim), with
 * the sample_id the kernel gives it: the dead task's pid and tid, its CPU, and the time it was last seen
 * (its last published cycles under the virtual clock, now otherwise). Looked for by every process that
 * samples for another one when one of its tasks leaves (exit, exec: a shell that waited for the job it
 * killed), and by the owner of an event before it says POLLHUP. `only`: the tasks that event reaches, or
 * every task any event reaches; `self`: a thread of the caller's, whose clock says "now". Under the perf
 * lock. */
static void exit_dead_tasks(struct emu_thread *self, const struct emu_xsampler *only)
{
	unsigned n = emu_run_tasks();
	for (unsigned i = 0; i < n && i < EMU_RUN_TASKS; i++) {
		int slot = (int)i, reached = 0;
		pid_t pid, tid, ppid;
		if (!emu_run_task_exit_pending(slot, &pid, &tid, &ppid))
			continue; /* exited (it wrote its own), claimed, or this process's */
		if (only)
			reached = xs_reaches_slot(only, slot);
		for (unsigned b = 0; !only && !reached && b < EMU_RUN_BLOCKS; b++) {
			const struct emu_xsampler *xs = emu_run_block_at(b);
			reached = xs && __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_SAMPLER &&
			          xs_reaches_slot(xs, slot);
		}
		if (!reached || !emu_run_task_claim_exit(slot)) /* alive, or someone else writes it */
			continue;
		slot_exit_record(self, slot, pid, tid, ppid);
	}
}

void perf_remote_exit_slot(struct emu_thread *self, int slot)
{
	pid_t pid, tid, ppid;
	if (emu_run_task_ids(slot, &pid, &tid, &ppid))
		slot_exit_record(self, slot, pid, tid, ppid);
}

/* SIGCHLD reached the program, whose handler runs next (fe_signal.c): a child that died without its exit path
 * (killed) has its EXIT written now, before the program knows it is gone. The kernel writes it in do_exit,
 * before the task can be waited for; perf record's SIGCHLD handler ends its loop, which then may never poll
 * again (the other place a killed command's EXIT is written) before its last read of the rings. Called
 * from the program's signal handler path (fe_signal.c), so on the program's stack or sigaltstack, which may
 * be small: a signal that lands inside the emulator is deferred to its way out, so the perf lock is free
 * here; no allocation, no stdio, big objects not on the stack; the run's table is scanned only when a child
 * of this process has a live slot whose EXIT nobody wrote. */
void perf_remote_child_exited(void)
{
	if (!emu_run_child_exit_pending())
		return; /* no child that could have died without its EXIT */
	int any = 0;
	for (unsigned i = 0; i < EMU_RUN_BLOCKS && !any; i++) {
		const struct emu_xsampler *xs = emu_run_block_at(i);
		any = xs && __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_SAMPLER;
	}
	if (!any)
		return; /* nothing samples another process: nothing to write */
	int saved = errno;
	emu_lock();
	exit_dead_tasks(NULL,
	                NULL); /* its record times come from the dead tasks' cycles (no clock of ours) */
	emu_unlock();
	errno = saved;
}

/* Whether the task of `slot` or one of its inheriting descendants still runs: an event with none left
 * polls POLLHUP (perf_poll's is_event_hup). A process whose main thread began its exit runs until it is
 * gone: its EXIT record comes after, and perf record, which ends at POLLHUP, sends SIGTERM to a command
 * it has not seen end (the command then ends by SIGTERM, perf's status 143). */
static int xs_task_alive(const struct emu_xsampler *xs)
{
	if (xs->cpu_wide)
		return 1; /* a CPU never goes away: a CPU-wide event never polls POLLHUP (is_event_hup) */
	if (emu_run_task_running(xs->root_slot))
		return 1;
	unsigned n = emu_run_tasks();
	for (unsigned i = 0; xs->attr.inherit && i < n && i < EMU_RUN_TASKS; i++)
		if (emu_run_descendant((int)i, xs->root_slot, xs->after) && emu_run_task_running((int)i))
			return 1;
	return 0;
}

static struct emu_event *shadow_of(const struct emu_thread *t, const struct emu_xsampler *xs);

static void xs_sync(struct emu_event *ev)
{
	struct emu_xsampler *xs = ev->xs;
	if (xs->cpu_wide) { /* the reading thread samples itself on that CPU: what it counted up to now */
		struct emu_thread *self = emu_thread_self();
		struct emu_event *own = shadow_of(self, xs);
		if (own) {
			emu_ctx_sync(self, emu_cycles_of(self), EMU_IP_KERNEL);
			emu_shadow_publish(own);
		}
	}
	ev->wakeups += __atomic_exchange_n(&xs->wakeups, 0, __ATOMIC_ACQ_REL);
	ev->count = __atomic_load_n(&xs->count, __ATOMIC_RELAXED);
	ev->lost_total = __atomic_load_n(&xs->lost, __ATOMIC_RELAXED);
	if (__atomic_load_n(&xs->enabled, __ATOMIC_RELAXED) && ev->state < EV_INACTIVE &&
	    ev->state != EV_ERROR)
		ev->state = EV_INACTIVE; /* enable_on_exec, taken by the task */
	if (!ev->hup && !xs_task_alive(xs)) {
		exit_dead_tasks(ev->target, xs); /* the EXIT of those killed, before perf stops reading */
		ev->hup = 1;
	}
}

void emu_remote_sync(struct emu_event *ev)
{
	if (ev->xs) {
		xs_sync(ev);
		return;
	}
	task_sync(ev->target);
	struct emu_remote_set *s = ev->rset;
	if (!s || !ev->acc)
		return;
	if (s->cpu >= 0)
		ev->count = 0; /* the CPU's clock gives the times; the counts are its tasks' */
	find_copies(ev);
	uint64_t count = 0, enabled = 0, running = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct emu_event *c = s->copy[i];
		if (c->target->remote)
			task_sync(c->target);
		else
			emu_ctx_sync(c->target, emu_cycles_of(c->target), EMU_IP_KERNEL);
		count += c->count;
		enabled += c->time_enabled;
		running += c->time_running;
	}
	__atomic_store_n(&ev->acc->count, count, __ATOMIC_RELAXED);
	if (s->cpu >= 0)
		return; /* a CPU's times are its own: the time its tasks ran on it */
	__atomic_store_n(&ev->acc->time_enabled, enabled, __ATOMIC_RELAXED);
	__atomic_store_n(&ev->acc->time_running, running, __ATOMIC_RELAXED);
}

void emu_remote_follow(struct emu_event *ev, unsigned long req)
{
	if (ev->xs && (req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_DISABLE))
		__atomic_store_n(&ev->xs->enabled, req == PERF_EVENT_IOC_ENABLE, __ATOMIC_RELEASE);
	else if (ev->xs && req == PERF_EVENT_IOC_RESET) {
		__atomic_store_n(&ev->xs->count, 0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&ev->xs->reset_gen, 1, __ATOMIC_RELEASE);
		emu_run_block_published(); /* the tasks look again: shadow_follow */
	} else if (ev->xs && req == PERF_EVENT_IOC_PERIOD) {
		__atomic_store_n(&ev->xs->period, ev->period, __ATOMIC_RELEASE);
		__atomic_fetch_add(&ev->xs->period_gen, 1, __ATOMIC_RELEASE);
		emu_run_block_published();
	}
	struct emu_remote_set *s = ev->rset;
	for (size_t i = 0; s && i < s->n; i++) {
		struct emu_event *c = s->copy[i];
		if (req == PERF_EVENT_IOC_ENABLE && c->state < EV_INACTIVE)
			c->state = EV_INACTIVE;
		else if (req == PERF_EVENT_IOC_DISABLE && c->state >= EV_INACTIVE)
			c->state = EV_OFF;
		else if (req == PERF_EVENT_IOC_RESET)
			c->count = 0;
		/* as the event's own ioctl: a disable takes that copy off its counter alone
		 * (__perf_event_disable), an enable reschedules its task (ctx_resched); a reset or a new
		 * period moves no event (_perf_event_reset, __perf_event_period) */
		if (req == PERF_EVENT_IOC_DISABLE)
			emu_ctx_schedule_out(c->target);
		else if (req == PERF_EVENT_IOC_ENABLE)
			emu_ctx_schedule(c->target);
	}
}

static void unlink_event(struct emu_event *c)
{
	struct emu_event **pp;
	for (pp = &emu_ctx_of(c->target)->groups; *pp && *pp != c; pp = &(*pp)->next_group)
		;
	if (*pp)
		*pp = c->next_group;
	emu_ctx_schedule_out(c->target);
}

void emu_remote_release(struct emu_event *ev)
{
	/* an fd sent to another process keeps the event there (the kernel's file reference): its block stays,
	 * with the final values, until this process ends (a dead owner's block is free again) */
	if (ev->xfile && ev->owner_pid == emu_getpid())
		emu_event_publish(ev);
	ev->xfile = NULL;
	if (ev->xs && !ev->shadow) {
		__atomic_store_n(&ev->xs->ready, 0, __ATOMIC_RELEASE);
		emu_run_block_release(ev->xs);
		emu_run_block_published(); /* the tasks sampled look again: their shadows of it go */
	}
	ev->xs = NULL;
	struct emu_remote_set *s = ev->rset;
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		unlink_event(s->copy[i]);
		free(s->copy[i]);
	}
	free(s->copy);
	free(s);
	ev->rset = NULL;
}

/* ------------------------------------------------------------------------------- the sampled side */
void emu_remote_shadows_publish(struct emu_thread *t)
{
	if (!t->perf)
		return;
	int any = 0;
	for_each_group(t->perf, g) for_each_member(g, e) any |= e->shadow;
	if (!any)
		return;
	/* the task leaves (exit, exec): PES records still in its buffer reach the ring first, as the kernel
	 * drains a task's records when it is scheduled out */
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	emu_pes_flush(t);
	for_each_group(t->perf, g) for_each_member(g, e) if (e->shadow) emu_shadow_publish(e);
	/* tasks killed meanwhile (a shell that waited for the job it killed): their EXIT before this one's */
	exit_dead_tasks(t, NULL);
}

/* Maps the owner's ring: its event fd is a memfd, reached through /proc/<owner>/fd (the ptrace-access rule
 * of /proc: the run's processes may count each other). The buffer is that of the block xs->ring_block names
 * (read once, SET_OUTPUT may change it), *ring_block says which. The fd must still be that event's memfd: the
 * owner may have closed it (keeping its mapping) and the number be another file now (perf.data), which is
 * never written. Its size is the mapping the owner made; 0: not yet mapped, nothing to write into. */
static void *map_owner_ring(const struct emu_xsampler *xs, size_t *len, int *ring_block)
{
	int rb = __atomic_load_n(&xs->ring_block, __ATOMIC_ACQUIRE);
	const struct emu_xsampler *r = emu_run_block_at((unsigned)rb);
	if (!r || __atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) != EMU_BLOCK_SAMPLER)
		return NULL;
	*ring_block = rb;
	char path[64];
	emu_proc_path(path, r->owner, "fd", (int)r->fd, "");
	int fd = EMU_REAL(open)(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != r->ino || (uint64_t)st.st_dev != r->dev) {
		EMU_REAL(close)(fd);
		return NULL;
	}
	off_t size = EMU_REAL(lseek)(fd, 0, SEEK_END);
	size_t page = (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	void *p = NULL;
	if (size > (off_t)page) {
		p = EMU_REAL(mmap)(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	EMU_REAL(close)(fd);
	*len = (size_t)size;
	return p;
}

static struct emu_event *make_shadow(struct emu_xsampler *xs, struct emu_thread *t, int exec)
{
	size_t len = 0;
	int ring_block = -1;
	void *page = map_owner_ring(xs, &len, &ring_block);
	if (!page)
		return NULL;
	struct emu_event *c = calloc(1, sizeof(*c));
	if (!c) {
		EMU_REAL(munmap)(page, len);
		return NULL;
	}
	c->attr = xs->attr;
	c->attr.enable_on_exec = 0; /* acted on here, once */
	c->id = xs->id;
	c->fd = -1;
	c->kind = (enum emu_ev_kind)xs->kind;
	c->evmask = xs->evmask;
	c->target = t;
	c->cpu = xs->cpu;
	c->hw_idx = -1;
	c->leader = c;
	c->owner_pid = emu_getpid(); /* its context is this process's */
	c->period = xs->period;
	c->period_left = (int64_t)xs->period;
	c->refs = 1;
	/* The shadow always counts; whether its records are written follows the owner's event (its ENABLE,
	 * DISABLE, and enable_on_exec taken at the root task's exec): emu_xring_begin. */
	c->state = EV_INACTIVE;
	c->page = page;
	c->map_len = len;
	c->data_size = len - (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	c->data_head = __atomic_load_n(&c->page->data_head, __ATOMIC_ACQUIRE);
	c->xs = xs;
	c->xs_ring_block = ring_block;
	c->xs_gen = __atomic_load_n(&xs->gen, __ATOMIC_RELAXED);
	c->xs_period_gen = __atomic_load_n(&xs->period_gen, __ATOMIC_ACQUIRE);
	c->xs_reset_gen = __atomic_load_n(&xs->reset_gen, __ATOMIC_ACQUIRE);
	c->period_left = (int64_t)c->period;
	if (!c->attr.freq)
		c->attr.sample_period = c->period;
	c->shadow = 1;
	c->comm_exec = exec;
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL); /* it counts from now */
	emu_ctx_insert(c);
	emu_ctx_schedule(t);
	return c;
}

static int xs_reaches(const struct emu_xsampler *xs, const struct emu_thread *t, int slot)
{
	if (xs->cpu >= 0 && (unsigned)xs->cpu != t->hart)
		return 0; /* event_filter_match: another CPU's event */
	return xs_reaches_slot(xs, slot);
}

/* The thread's name and the image's mappings, read before the shadows exist: their COMM and MMAP2 records
 * come before any sample (perf report names a sample by the records before it). */
static char *read_self_comm(void)
{
	size_t len = 0;
	char *comm = emu_read_proc("/proc/thread-self/comm", &len);
	if (comm && len && comm[len - 1] == '\n')
		comm[len - 1] = 0;
	return comm;
}

/* The thread's shadow of `xs`, if it has one already (a fork handler racing with the open, a late look). */
static struct emu_event *shadow_of(const struct emu_thread *t, const struct emu_xsampler *xs)
{
	if (t->perf)
		for_each_group(t->perf, g)
		    for_each_member(g, e) if (e->shadow && e->xs == xs && e->xs_gen == xs->gen) return e;
	return NULL;
}

/* Shadows whose event the owner closed (its block released or claimed again): out of the task's context, as
 * the kernel takes a closed event off its task, so they no longer count, take alarms, hold a counter or keep
 * the old ring mapped. Seen when the task next looks at the blocks (a release moves their generation). */
static int shadows_live; /* this process's shadows, under the perf lock */

static void reap_dead_shadows(struct emu_thread *t)
{
	struct emu_ctx *ctx = t->perf;
	if (!ctx)
		return;
	int dead = 0;
	for_each_group(ctx, g) if (g->shadow && !emu_shadow_current(g))
	{
		g->state = EV_OFF;
		dead = 1;
	}
	if (!dead)
		return;
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	emu_ctx_schedule_out(t); /* off their counters, PES records drained first */
	for (struct emu_event **pp = &ctx->groups; *pp;) {
		struct emu_event *g = *pp;
		if (!g->shadow || g->state != EV_OFF || emu_shadow_current(g)) {
			pp = &g->next_group;
			continue;
		}
		*pp = g->next_group;
		emu_sb_track(g, -1);
		shadows_live--;
		if (g->page)
			EMU_REAL(munmap)(g->page, g->map_len);
		free(g);
	}
}

/* The owner's PERF_EVENT_IOC_RESET and PERF_EVENT_IOC_PERIOD, followed by the thread's shadows when it looks
 * at the blocks (its next rvemu_advance, fork or exit; each thread for itself), as ENABLE and DISABLE are
 * followed: RESET drops what a shadow counted before it and had not published yet (the owner zeroed what
 * was), to within what it counted between the RESET and this look; PERIOD makes the new period the shadow's,
 * a whole one from now (__perf_event_period clears period_left). Accounted up to now first. */
static void shadows_follow(struct emu_thread *t)
{
	int due = 0;
	for_each_group(t->perf, g) for_each_member(g, e) if (e->shadow && emu_shadow_current(e)) due |=
	    __atomic_load_n(&e->xs->reset_gen, __ATOMIC_ACQUIRE) != e->xs_reset_gen ||
	    __atomic_load_n(&e->xs->period_gen, __ATOMIC_ACQUIRE) != e->xs_period_gen;
	if (!due)
		return;
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	for_each_group(t->perf, g) for_each_member(g, e)
	{
		if (!e->shadow || !emu_shadow_current(e))
			continue;
		struct emu_xsampler *xs = e->xs;
		uint64_t gen = __atomic_load_n(&xs->reset_gen, __ATOMIC_ACQUIRE);
		if (gen != e->xs_reset_gen) {
			e->xs_reset_gen = gen;
			e->xs_published = e->count;
		}
		gen = __atomic_load_n(&xs->period_gen, __ATOMIC_ACQUIRE);
		if (gen != e->xs_period_gen) {
			e->xs_period_gen = gen;
			uint64_t p = __atomic_load_n(&xs->period, __ATOMIC_RELAXED);
			if (p) {
				e->period = p;
				if (!e->attr.freq)
					e->attr.sample_period = p;
				e->period_left = (int64_t)p;
			}
		}
	}
	emu_ctx_schedule(t);
}

/* The run's block generation this thread last looked at (perf_remote_poll_self): per thread, as the shadows
 * are (each thread makes and drops its own, at its own next look). */
static __thread uint64_t blocks_seen __attribute__((tls_model("initial-exec")));

void perf_remote_attach_self(pid_t forked_by, pid_t forked_by_pid)
{
	int exec = forked_by == 0;
	uint64_t gen = emu_run_blocks_gen();
	int any = 0;
	for (unsigned i = 0; i < EMU_RUN_BLOCKS && !any; i++)
		any = emu_run_block_at(i) != NULL;
	__atomic_store_n(&blocks_seen, gen, __ATOMIC_RELAXED);
	if (!any && !__atomic_load_n(&shadows_live, __ATOMIC_RELAXED))
		return; /* no thread registered for nothing */
	struct emu_thread *t = emu_thread_self();
	int slot = emu_run_slot_of(t);
	if (slot < 0)
		return;
	size_t len = 0;
	char *comm = exec ? read_self_comm() : NULL,
	     *maps = exec ? emu_read_proc("/proc/self/maps", &len) : NULL;
	emu_lock();
	reap_dead_shadows(t);
	if (t->perf)
		shadows_follow(t);
	for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
		struct emu_xsampler *xs = emu_run_block_at(i);
		/* this process's own events: in its threads' contexts already, except a CPU-wide one, whose
		 * owner's threads on that CPU are sampled by shadows too (perf record -a samples perf) */
		if (!xs || __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) != EMU_BLOCK_SAMPLER ||
		    (xs->owner == emu_getpid() && !xs->cpu_wide))
			continue;
		/* perf_event_enable_on_exec: every event of the task's context, of every CPU */
		if (exec && slot == xs->root_slot && xs->attr.enable_on_exec &&
		    emu_run_task_execs(slot) > xs->exec_seen)
			__atomic_store_n(&xs->enabled, 1, __ATOMIC_RELEASE);
		if (!xs_reaches(xs, t, slot) || shadow_of(t, xs))
			continue;
		struct emu_event *c = make_shadow(xs, t, exec);
		if (!c)
			continue;
		emu_sb_track(c, 1); /* released when its event is gone (reap_dead_shadows) */
		shadows_live++;
		if (!exec) {
			c->sideband_done = 1; /* a forked child: FORK, below */
			continue;
		}
		/* what exec writes: COMM (COMM_EXEC) and the new image's executable mappings */
		char *text = maps ? strdup(maps) : NULL; /* cut in place while read */
		if (emu_sb_existing_due(c))
			emu_sb_existing(c, comm, text);
		free(text);
	}
	/* A forked child: FORK (perf gives it its parent's name and mappings), unless it is the event's own
	 * task (created before the open) or a thread (its creator wrote it); a task found running (forked_by
	 * < 0): nothing, as the kernel writes nothing at an open. The kernel writes it in the parent
	 * (copy_process: perf_event_fork), so into the parent's CPU's event with the parent's pid, tid and
	 * CPU as sample_id; written here by the child before its first sample (after fork returned in the
	 * parent it could follow the child's samples and exec), with the child's time, which its samples
	 * follow. */
	if (forked_by > 0 && t->tid == t->pid) {
		int parent = emu_run_task_parent(slot), cpu = emu_run_task_hart(parent);
		/* the parent at fork time (copy_process), not getppid(): a parent that exited since (before
		 * this child got here) left it to a reaper */
		struct emu_task_record k = {(uint32_t)t->pid,
		                            (uint32_t)forked_by_pid,
		                            (uint32_t)t->tid,
		                            (uint32_t)forked_by,
		                            forked_by_pid,
		                            forked_by,
		                            (uint32_t)(cpu >= 0 ? cpu : (int)t->hart),
		                            emu_event_time(t)};
		for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
			struct emu_xsampler *xs = emu_run_block_at(i);
			if (!xs || __atomic_load_n(&xs->ready, __ATOMIC_ACQUIRE) != EMU_BLOCK_SAMPLER ||
			    xs->owner == emu_getpid() || slot == xs->root_slot ||
			    !xs_reaches_slot(xs, slot) || (xs->cpu >= 0 && (uint32_t)xs->cpu != k.cpu))
				continue;
			/* a CPU-wide event opened after the fork, before this child got here: the fork was
			 * before the event, which gets no FORK (perf synthesizes the tasks it found) */
			if (xs->cpu_wide && emu_run_task_born(slot) <= xs->after)
				continue;
			struct emu_event *own = shadow_of(t, xs), w;
			if (own) {
				emu_sb_task_record(own, 1, &k);
			} else if (ring_writer_open(xs, &w) == 0) {
				emu_sb_task_record(&w, 1, &k);
				ring_writer_close(&w);
			}
		}
	}
	emu_timer_rearm(t); /* the shadows sample from now */
	emu_unlock();
	free(comm);
	free(maps);
}

/* An event opened on this process while it runs (perf record -p, or the open racing with its start): looked
 * for when it enters the emulator at a fork, an exit or an rvemu_advance; one load when nothing changed. An
 * event whose buffer was not mapped yet when the task looked is looked at again once it is (the owner's mmap
 * and SET_OUTPUT move the generation too). */
void perf_remote_poll_self(void)
{
	if (emu_run_blocks_gen() != __atomic_load_n(&blocks_seen, __ATOMIC_RELAXED))
		perf_remote_attach_self(-1, 0);
}

/* ------------------------------------------------------------------------- an fd sent over SCM_RIGHTS */
void perf_share(struct emu_event *ev)
{
	struct stat st;
	emu_lock();
	/* a group's read needs its members' values too: not published (the receiver reads 0 bytes) */
	if (!ev->xfile && ev->owner_pid == emu_getpid() && !(ev->attr.read_format & PERF_FORMAT_GROUP) &&
	    fstat(ev->fd, &st) == 0) {
		struct emu_xfile *xf = emu_run_block_claim();
		if (xf) {
			xf->ino = (uint64_t)st.st_ino;
			xf->gen = emu_run_block_gen_next();
			xf->id = ev->id;
			xf->type = ev->attr.type;
			xf->config = ev->attr.config;
			xf->read_format = ev->attr.read_format;
			ev->xfile = xf;
			emu_event_publish(ev);
			__atomic_store_n(&xf->ready, EMU_BLOCK_FILE, __ATOMIC_RELEASE);
		}
	}
	emu_unlock();
}

int perf_adopt(int fd, struct emu_event **out)
{
	struct stat st;
	char link[64], path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0 || fstat(fd, &st) != 0)
		return -1;
	link[n] = 0;
	if (strncmp(link, "/memfd:perf_event", 17) != 0)
		return -1; /* not an event's file */
	struct emu_xfile *found = NULL;
	for (unsigned i = 0; i < EMU_RUN_BLOCKS && !found; i++) {
		struct emu_xfile *xf = emu_run_block_at(i);
		if (xf && __atomic_load_n(&xf->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_FILE &&
		    xf->ino == (uint64_t)st.st_ino)
			found = xf;
	}
	if (!found)
		return -1;
	struct emu_event *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -1;
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = found->type;
	ev->attr.config = found->config;
	ev->attr.read_format = found->read_format;
	ev->id = found->id;
	ev->fd = fd;
	ev->refs = 1;
	ev->owner_pid = found->owner; /* another process's event: read from what it publishes */
	ev->snap = &found->snap;
	ev->adopted = found;
	ev->adopted_gen = __atomic_load_n(&found->gen, __ATOMIC_RELAXED);
	ev->leader = ev;
	ev->hw_idx = -1;
	ev->state = EV_INACTIVE;
	ev->target = emu_thread_self();
	*out = ev;
	return 0;
}
