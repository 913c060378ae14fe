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
#include <stdlib.h>
#include <string.h>

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

int emu_remote_prepare(struct emu_event *ev)
{
	if (!ev->target->remote)
		return 0;
	if (is_sampling(ev))
		return -EOPNOTSUPP; /* sampling another process is not emulated yet (docs/emulator-core.md) */
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

void emu_remote_sync(struct emu_event *ev)
{
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
	struct emu_remote_set *s = ev->rset;
	for (size_t i = 0; s && i < s->n; i++) {
		struct emu_event *c = s->copy[i];
		if (req == PERF_EVENT_IOC_ENABLE && c->state < EV_INACTIVE)
			c->state = EV_INACTIVE;
		else if (req == PERF_EVENT_IOC_DISABLE && c->state >= EV_INACTIVE)
			c->state = EV_OFF;
		else if (req == PERF_EVENT_IOC_RESET)
			c->count = 0;
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
	emu_ctx_schedule(c->target);
}

void emu_remote_release(struct emu_event *ev)
{
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
