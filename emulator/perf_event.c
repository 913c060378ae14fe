// SPDX-License-Identifier: MIT
/* Event objects: perf_event_open's checks (kernel/events/core.c and the riscv_pmu_sbi driver), and the
 * operations on an open event: read, ioctl, mmap, poll, fcntl state, release; inheritance across fork;
 * the process-wide prctl switch; user-space counter reads.
 *
 * Choices where the real riscv_pmu_sbi driver gives no single answer (see docs/emulator-core.md):
 *  - an undefined RAW encoding fails at open with ENOENT (the driver accepts it and the SBI firmware then
 *    finds no counter, so the event never counts); bits 61:48 of a RAW config are ignored as the driver
 *    masks them, bits 63:62 (SBI firmware events) give ENOENT.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_priv.h"

static struct emu_event *all_events; /* of this process, newest first */
static void sideband_existing(struct emu_event *ev);
static void sideband_track(const struct emu_event *ev, int delta);
static uint64_t next_id = 1;

/* ------------------------------------------------------------------------- snapshots for fork children */
#define SNAP_SLOTS 16384
static struct emu_event_snap *snap_arena; /* MAP_SHARED: a forked child sees the parent's updates */
static unsigned snap_used;
static struct emu_event_snap *snap_free;

static struct emu_event_snap *snap_alloc(void)
{
	if (snap_free) {
		struct emu_event_snap *s = snap_free;
		memcpy(&snap_free, s, sizeof(snap_free));
		memset(s, 0, sizeof(*s));
		return s;
	}
	if (!snap_arena) {
		void *p = EMU_REAL(mmap)(NULL, SNAP_SLOTS * sizeof(*snap_arena), PROT_READ | PROT_WRITE,
		                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		snap_arena = p;
	}
	return snap_used < SNAP_SLOTS ? &snap_arena[snap_used++] : NULL;
}

static void snap_release(struct emu_event_snap *s)
{
	if (!s)
		return;
	memcpy(s, &snap_free, sizeof(snap_free));
	snap_free = s;
}

/* An event another process opened: a forked child holding its parent's fd (it reads the parent's snapshot).
 * An event this process opened on another process's task (target->remote) is not foreign: perf_remote.c. */
static int is_foreign(const struct emu_event *ev)
{
	/* a received fd's event is read from its block even when this process sent it to itself: its
	 * snapshot is the block's, never this process's to release */
	return ev->owner_pid != emu_getpid() || ev->adopted;
}

/* ------------------------------------------------------------------------------------ open & validate */
/* perf_reg_validate (arch/riscv/kernel/perf_regs.c): a non-empty mask within the riscv PERF_REG set. */
static int regs_mask_ok(uint64_t mask)
{
	return mask && !(mask >> EMU_PERF_REGS);
}

/* The sample_type checks of perf_copy_attr, for every event (sampling or not), in the kernel's order. */
static int check_sample_attr(struct perf_event_attr *a)
{
	uint64_t st = a->sample_type;
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t mask = a->branch_sample_type;
		if ((mask & ~(uint64_t)(PERF_SAMPLE_BRANCH_MAX - 1)) || !(mask & ~PERF_SAMPLE_BRANCH_PLM_ALL))
			return -EINVAL;
	}
	if ((st & PERF_SAMPLE_REGS_USER) && !regs_mask_ok(a->sample_regs_user))
		return -EINVAL;
	/* HAVE_PERF_USER_STACK_DUMP (riscv has it): a u16-sized, u64-aligned dump */
	if ((st & PERF_SAMPLE_STACK_USER) && (a->sample_stack_user >= 0xffff || a->sample_stack_user % 8))
		return -EINVAL;
	if (!a->sample_max_stack)
		a->sample_max_stack = EMU_MAX_STACK;
	if ((st & PERF_SAMPLE_REGS_INTR) && !regs_mask_ok(a->sample_regs_intr))
		return -EINVAL;
	if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
		return -EINVAL;
	return 0;
}

/* The attr size Linux 6.3+ knows (PERF_ATTR_SIZE_VER8: config3 at byte 128), what it writes back on E2BIG.
 * Debian 12's headers stop at config2 (128 bytes); config3 (bytes 128..135) is copied by the kernel and no
 * riscv PMU reads it, so a non-zero config3 is accepted and ignored here too. */
#define EMU_ATTR_SIZE_VER8 136u

/* perf_copy_attr: a size below VER0 or above a page, or non-zero bytes past what the kernel knows, is E2BIG
 * with the kernel's size written back. */
static int copy_attr(const struct perf_event_attr *u, struct perf_event_attr *a)
{
	if (!u)
		return -EFAULT;
	uint32_t size = u->size ? u->size : PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > 4096) {
		((struct perf_event_attr *)u)->size = EMU_ATTR_SIZE_VER8;
		return -E2BIG;
	}
	memset(a, 0, sizeof(*a));
	memcpy(a, u, size < sizeof(*a) ? size : sizeof(*a));
	for (size_t i = EMU_ATTR_SIZE_VER8; i < size; i++)
		if (((const unsigned char *)u)[i]) {
			((struct perf_event_attr *)u)->size = EMU_ATTR_SIZE_VER8;
			return -E2BIG;
		}
	a->size = size;
	if (a->__reserved_1 || a->__reserved_2 || a->__reserved_3)
		return -EINVAL;
	if (a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1) ||
	    a->read_format & ~(uint64_t)(PERF_FORMAT_MAX - 1))
		return -EINVAL;
	if (!a->freq && (a->sample_period >> 63) != 0)
		return -EINVAL; /* a period must fit in 63 bits */
	return check_sample_attr(a);
}

/* security_perf_event_open and perf_allow_kernel (kernel/events/core.c): paranoid 3 and 4 (Debian's and
 * Ubuntu's patch) refuse everything without CAP_PERFMON; above 1 an event that does not exclude the
 * kernel needs CAP_PERFMON. Checked before the PMU sees the event, as the kernel does. */
static int check_permissions(const struct perf_event_attr *a)
{
	const struct emu_config *c = emu_cfg();
	if (c->cap_perfmon)
		return 0;
	if (c->paranoid > 2)
		return -EACCES;
	if (!a->exclude_kernel && c->paranoid > 1)
		return -EACCES;
	return 0;
}

/* What a sampling event may not ask for: AUX data (no riscv PMU has an AUX area) and the cgroup (not
 * emulated: the emulator does not know the task's perf cgroup). Everything else Linux 6.6 on riscv
 * accepts is written (perf_output.c), BRANCH_STACK being refused by every riscv PMU (below). */
#define EMU_SAMPLE_REFUSED (PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP)

static int has_exclude(const struct perf_event_attr *a)
{
	return a->exclude_user || a->exclude_kernel || a->exclude_hv || a->exclude_idle || a->exclude_host ||
	       a->exclude_guest;
}

/* What the event counts: PERF_TYPE_HARDWARE cycles/instructions, RAW mhpmevent values, software events. */
static int decode_event(const struct perf_event_attr *a, struct emu_event *ev)
{
	const struct rvemu_model *m = emu_model();
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		if (a->config >= PERF_COUNT_HW_MAX)
			return -EINVAL; /* pmu_sbi_event_map */
		for (size_t i = 0; i < m->nevents; i++) {
			if ((a->config == PERF_COUNT_HW_CPU_CYCLES && m->events[i].kind == RVEMU_EV_CYCLES) ||
			    (a->config == PERF_COUNT_HW_INSTRUCTIONS &&
			     m->events[i].kind == RVEMU_EV_INSTRET)) {
				ev->kind = a->config == PERF_COUNT_HW_CPU_CYCLES ? EK_CYCLES : EK_INSTRET;
				ev->evmask = 1ull << i;
				return 0;
			}
		}
		return -ENOENT;
	case PERF_TYPE_RAW:
		ev->kind = EK_PROG;
		return emu_decode_raw(a->config, &ev->evmask);
	case PERF_TYPE_SOFTWARE:
		if (a->config >= PERF_COUNT_SW_MAX)
			return -ENOENT; /* perf_swevent_init */
		ev->kind = EK_SOFTWARE;
		return 0;
	default:
		return -ENOENT; /* no such PMU type */
	}
}

static int check_capabilities(const struct perf_event_attr *a, const struct emu_event *ev)
{
	/* precise_ip (docs/pes.md): a PES core gives zero skid (every level, 1..3) to sampling hardware
	 * events, and samples without Sscofpmf (the PES buffer has its own fill interrupt); a counting event
	 * just counts (x86 accepts `perf stat -e cycles:pp` too). A core without PES refuses any precise
	 * level (EOPNOTSUPP, as x86 refuses what it cannot give; perf then retries less precise), so no
	 * sample is ever shown as precise that is not. */
	/* riscv_pmu_event_init, perf_swevent_init, cpu/task_clock_event_init: no branch stack */
	if (a->sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if (a->precise_ip) {
		if (!emu_cfg()->pes || ev->kind == EK_SOFTWARE)
			return -EOPNOTSUPP;
		if (is_sampling(ev)) {
			if (a->sample_type & EMU_SAMPLE_REFUSED)
				return -EINVAL;
			return !emu_cfg()->sscofpmf && has_exclude(a) ? -EINVAL : 0;
		} /* a counting event: the checks of any counting event */
	}
	if (ev->kind == EK_SOFTWARE) {
		/* the software PMU samples its clocks (hrtimer) on every core; counted faults and switches
		 * are not sampled by the emulator */
		if (is_sampling(ev) && a->config != PERF_COUNT_SW_CPU_CLOCK &&
		    a->config != PERF_COUNT_SW_TASK_CLOCK && a->config != PERF_COUNT_SW_DUMMY)
			return -EOPNOTSUPP;
		/* dummy: never counts, so never samples; perf record opens it for the side-band records
		 * (--delay, -a, ...) */
	} else if (!emu_cfg()->sscofpmf) {
		/* riscv_pmu_sbi without Sscofpmf: PERF_PMU_CAP_NO_INTERRUPT and PERF_PMU_CAP_NO_EXCLUDE. */
		if (has_exclude(a))
			return -EINVAL;
		if (is_sampling(ev))
			return -EOPNOTSUPP;
	}
	if (is_sampling(ev) && (a->sample_type & EMU_SAMPLE_REFUSED))
		return -EINVAL;
	return 0;
}

static uint64_t period_for_freq(const struct emu_event *ev, uint64_t freq)
{
	/* The kernel adapts the period until samples arrive at `freq` per second; with a constant workload
	 * profile that converges to events-per-second / freq, which we use from the start. */
	uint64_t second = (uint64_t)emu_model()->freq_mhz * 1000000u, per_s;
	if (ev->kind == EK_SOFTWARE)
		per_s = 1000000000u; /* clocks count ns */
	else
		per_s = ev->attr.exclude_user ? 0 : emu_events_between(ev->target, ev->evmask, 0, second);
	uint64_t p = freq ? per_s / freq : 0;
	return p ? p : 1;
}

static int resolve_target(int pid, int cpu, struct emu_thread **t)
{
	if (cpu < -1 || (cpu >= 0 && (unsigned)cpu >= emu_nharts()))
		return cpu < -1 ? -EINVAL : -ENODEV;
	if (pid == -1) {
		if (cpu == -1)
			return -EINVAL;
		/* perf_allow_cpu: CPU-wide needs paranoid <= 0 or CAP_PERFMON; then every task of the run on
		 * that CPU (perf_remote.c) */
		if (emu_cfg()->paranoid > 0 && !emu_cfg()->cap_perfmon)
			return -EACCES;
		*t = emu_run_cpu_thread((unsigned)cpu);
		return *t ? 0 : -EOPNOTSUPP;
	}
	if (pid < -1)
		return -ESRCH;
	if (pid == 0 || pid == emu_gettid()) {
		*t = emu_thread_self();
		return 0;
	}
	*t = emu_thread_by_tid(pid);
	/* A task of another process: through the run's table, if ptrace access allows (EACCES), ESRCH if none
	 */
	return *t ? 0 : emu_run_task_open(pid, t);
}

static int attach_group(struct emu_event *ev, struct emu_event *g, int has_group, unsigned long flags)
{
	if (!has_group || (flags & PERF_FLAG_FD_NO_GROUP)) {
		ev->leader = ev;
		if (has_group && !g)
			return -EBADF;
		if (flags & PERF_FLAG_FD_OUTPUT) {
			if (!g)
				return -EBADF;
			ev->output = g->output ? g->output : g;
		}
		return 0;
	}
	if (!g)
		return -EBADF;
	if (g->leader != g || g->target != ev->target || g->cpu != ev->cpu)
		return -EINVAL;
	if (ev->attr.pinned || ev->attr.exclusive)
		return -EINVAL; /* only a group leader can be pinned or exclusive */
	ev->leader = g;
	if (flags & PERF_FLAG_FD_OUTPUT)
		ev->output = g->output ? g->output : g;
	return 0;
}

int perf_open(const struct perf_event_attr *uattr, int pid, int cpu, struct emu_event *group, int has_group,
              unsigned long flags, int fd, struct emu_event **out)
{
	struct emu_event tmp;
	int err;
	memset(&tmp, 0, sizeof(tmp));
	if (flags &
	    ~(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC))
		return -EINVAL;
	if (flags & PERF_FLAG_PID_CGROUP)
		return -EINVAL; /* cgroup mode: the perf cgroup is not emulated */
	if ((err = copy_attr(uattr, &tmp.attr)) || (err = check_permissions(&tmp.attr)))
		return err;
	if (tmp.attr.freq && tmp.attr.sample_freq > emu_cfg()->max_sample_rate)
		return -EINVAL; /* perf_event_max_sample_rate */
	/* "Only privileged users can get physical addresses": perf_allow_kernel */
	if ((tmp.attr.sample_type & PERF_SAMPLE_PHYS_ADDR) && !emu_cfg()->cap_perfmon &&
	    emu_cfg()->paranoid > 1)
		return -EACCES;
	if ((err = decode_event(&tmp.attr, &tmp)) || (err = check_capabilities(&tmp.attr, &tmp)) ||
	    (err = resolve_target(pid, cpu, &tmp.target)))
		return err;
	/* get_callchain_buffers, once the PMU took the event: deeper than sysctl perf_event_max_stack */
	if ((tmp.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && tmp.attr.sample_max_stack > EMU_MAX_STACK)
		return -EOVERFLOW;
	tmp.cpu = cpu;
	emu_lock();
	if ((err = attach_group(&tmp, group, has_group, flags))) {
		emu_unlock();
		return err;
	}
	struct emu_event *ev = malloc(sizeof(*ev));
	if (!ev) {
		emu_unlock();
		return -ENOMEM;
	}
	*ev = tmp;
	if (ev->leader == &tmp)
		ev->leader = ev;
	if (tmp.attr.inherit) {
		ev->acc = EMU_REAL(mmap)(NULL, sizeof(*ev->acc), PROT_READ | PROT_WRITE,
		                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (ev->acc == MAP_FAILED) {
			free(ev);
			emu_unlock();
			return -ENOMEM;
		}
	}
	ev->fd = fd;
	ev->refs = 1;
	ev->owner_pid = emu_getpid();
	ev->hw_idx = -1;
	ev->snap = snap_alloc();
	ev->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	ev->period = tmp.attr.freq ? period_for_freq(ev, tmp.attr.sample_freq) : tmp.attr.sample_period;
	ev->period_left = (int64_t)ev->period;
	ev->state = tmp.attr.disabled ? EV_OFF : EV_INACTIVE;
	if (ev->target->remote) {
		if ((err = emu_remote_prepare(ev))) {
			if (ev->acc && ev->acc_local)
				free(ev->acc);
			else if (ev->acc)
				EMU_REAL(munmap)(ev->acc, sizeof(*ev->acc));
			snap_release(ev->snap);
			free(ev);
			emu_unlock();
			return err;
		}
	} else {
		emu_ctx_sync(ev->target, emu_cycles_of(ev->target), EMU_IP_KERNEL);
	}
	if (!ev->xs) /* sampling another process: its own emulator counts it (perf_remote.c) */
		emu_ctx_insert(ev);
	ev->next_all = all_events;
	all_events = ev;
	sideband_track(ev, 1);
	emu_ctx_schedule(ev->target);
	emu_event_publish(ev);
	emu_timer_rearm(ev->target);
	emu_unlock();
	sideband_existing(ev); /* enabled into a buffer it shares (PERF_FLAG_FD_OUTPUT) */
	*out = ev;
	return 0;
}

int perf_event_fd(const struct emu_event *ev)
{
	return ev->fd;
}

static void sync_event(struct emu_event *ev)
{
	if (is_foreign(ev))
		return;
	if (ev->target->remote) /* another process's task: its exec, its inheriting children */
		for (struct emu_event *e = ev->leader; e; e = e->sibling)
			emu_remote_sync(e);
	else
		emu_ctx_sync(ev->target, emu_cycles_of(ev->target), EMU_IP_KERNEL); /* a system call */
}

/* --------------------------------------------------------------------------------------------- read */
/* Whether a received fd's block still holds its event (perf_adopt); always for a forked child's snapshot. */
static int snap_current(const struct emu_event *e)
{
	const struct emu_xfile *xf = e->adopted;
	return !xf || (__atomic_load_n(&xf->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_FILE &&
	               __atomic_load_n(&xf->gen, __ATOMIC_RELAXED) == e->adopted_gen);
}

/* A forked child reads its parent's event as the parent last published it; a received fd's event as its
 * owner last published it, or, once its block is gone (the owner ended), the values it read last. A writer
 * that died mid-update leaves the sequence odd: after a bounded number of tries, the last values too. */
static void load_snapshots(struct emu_event *ev)
{
	for (struct emu_event *e = ev->leader; e; e = e->sibling) {
		struct emu_event_snap *s = e->snap, copy;
		if (!s || !snap_current(e))
			continue;
		int tries = 0, torn;
		do {
			uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
			memcpy(&copy, s, sizeof(copy));
			torn = (seq & 1) || __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq;
		} while (torn && ++tries < 100000);
		if (torn || !snap_current(e))
			continue;
		e->count = copy.count;
		e->time_enabled = copy.time_enabled;
		e->time_running = copy.time_running;
		e->lost_total = copy.lost_total;
		e->acc = NULL; /* the totals include what children handed over */
		e->state = copy.error ? EV_ERROR : e->state == EV_ERROR ? EV_INACTIVE : e->state;
	}
}

ssize_t perf_read(struct emu_event *ev, void *buf, size_t len)
{
	uint64_t vals[3 + 3 * 64];
	emu_lock();
	if (is_foreign(ev)) {
		load_snapshots(ev);
	} else {
		sync_event(ev);
		emu_pes_flush(ev->target);
	}
	if (ev->state == EV_ERROR) { /* a pinned group that could not be scheduled */
		emu_unlock();
		return 0;
	}
	size_t words = emu_read_values(ev, NULL, vals, sizeof(vals) / sizeof(vals[0]));
	emu_unlock();
	if (words > sizeof(vals) / sizeof(vals[0]))
		return -E2BIG;
	if (len < words * sizeof(uint64_t))
		return -ENOSPC;
	memcpy(buf, vals, words * sizeof(uint64_t));
	return (ssize_t)(words * sizeof(uint64_t));
}

/* ------------------------------------------------------------------------------------------- ioctl */
static void set_enabled(struct emu_event *e, int on)
{
	if (on && e->state < EV_INACTIVE) {
		e->state = EV_INACTIVE; /* also leaves the error state */
		e->hup = 0;
	} else if (!on && e->state >= EV_INACTIVE) {
		e->state = EV_OFF; /* an event in error state stays there */
	}
	/* overflows noticed in the kernel that the program will not get back to while the event is off: lost,
	 * and counted (PERF_RECORD_LOST before the next record, read_format LOST) */
	for (; !on && e->user_owed; e->user_owed--)
		emu_sample_lost(e);
}

static int apply(struct emu_event *ev, unsigned long req, int group)
{
	struct emu_event *first = group ? ev->leader : ev;
	for (struct emu_event *e = first; e; e = group ? e->sibling : NULL) {
		if (req == PERF_EVENT_IOC_ENABLE)
			set_enabled(e, 1);
		else if (req == PERF_EVENT_IOC_DISABLE)
			set_enabled(e, 0);
		else {
			e->count = 0; /* RESET: the count only, times stay */
			emu_kernel_share_restart(e);
		}
		if (e->rset || e->xs)
			emu_remote_follow(e, req); /* and its children's copies (perf_event_for_each_child) */
	}
	return 0;
}

static int ioctl_locked(struct emu_event *ev, unsigned long req, unsigned long arg)
{
	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET:
		return apply(ev, req, (arg & PERF_IOC_FLAG_GROUP) != 0);
	case PERF_EVENT_IOC_REFRESH:
		/* _perf_event_refresh: only sampling, non-inherited events; the budget grows by n (the kernel
		 * adds whatever n is) and the event is enabled */
		if (!is_sampling(ev) || ev->attr.inherit)
			return -EINVAL;
		ev->event_limit += (int)arg;
		set_enabled(ev, 1);
		return 0;
	case PERF_EVENT_IOC_PERIOD: {
		uint64_t v;
		if (!arg)
			return -EFAULT;
		memcpy(&v, (const void *)arg, sizeof(v));
		if (!is_sampling(ev) || !v || (v >> 63) || (ev->attr.freq && v > emu_cfg()->max_sample_rate))
			return -EINVAL;
		ev->period = ev->attr.freq ? period_for_freq(ev, v) : v;
		ev->attr.sample_period = ev->attr.freq ? v : ev->period;
		ev->period_left = (int64_t)ev->period;
		if (ev->xs)
			emu_remote_follow(ev, req); /* the shadows sampling another process's tasks */
		return 0;
	}
	case PERF_EVENT_IOC_ID:
		if (!arg)
			return -EFAULT;
		memcpy((void *)arg, &ev->id, sizeof(ev->id));
		return 0;
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
		return -EOPNOTSUPP; /* perf_event_modify_attr: breakpoints only */
	case PERF_EVENT_IOC_PAUSE_OUTPUT: {
		/* perf_ioctl -> rb_toggle_paused: the buffer the event writes to (its own, or the SET_OUTPUT
		 * one); no buffer mapped is EINVAL. While paused perf_output_begin drops every record and
		 * counts it lost (PERF_RECORD_LOST once output resumes, read_format LOST). */
		struct emu_event *rb = ev->output ? ev->output : ev;
		if (!rb->page || !rb->data_size)
			return -EINVAL;
		rb->paused = arg != 0;
		return 0;
	}
	case PERF_EVENT_IOC_SET_FILTER:
	case PERF_EVENT_IOC_SET_BPF:
	case PERF_EVENT_IOC_QUERY_BPF:
		return -EINVAL;
	default:
		return -ENOTTY;
	}
}

int perf_ioctl(struct emu_event *ev, unsigned long req, unsigned long arg)
{
	emu_lock();
	int stops = req == PERF_EVENT_IOC_DISABLE && !is_foreign(ev) && !ev->target->remote;
	if (stops)
		emu_kernel_share_stop_here(ev->target, 1); /* a board reads it in the head of the disable */
	sync_event(ev);
	if (!is_foreign(ev))
		emu_pes_flush(ev->target);
	int r = ioctl_locked(ev, req, arg);
	if (!r && !is_foreign(ev) &&
	    (req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_DISABLE ||
	     req == PERF_EVENT_IOC_REFRESH)) {
		if (req == PERF_EVENT_IOC_DISABLE)
			emu_ctx_schedule_out(ev->target); /* the others keep their counters */
		else
			emu_ctx_schedule(ev->target); /* ctx_resched */
		emu_timer_rearm(ev->target);
	}
	if (stops)
		emu_kernel_share_stop_here(ev->target, 0);
	if (!is_foreign(ev))
		for (struct emu_event *e = ev->leader; e; e = e->sibling)
			emu_event_publish(e);
	emu_unlock();
	if (!r && !is_foreign(ev) && (req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_REFRESH)) {
		sideband_existing(ev);
		if (arg & PERF_IOC_FLAG_GROUP && req == PERF_EVENT_IOC_ENABLE)
			for (struct emu_event *e = ev->leader; e; e = e->sibling)
				sideband_existing(e);
	}
	return r;
}

/* PERF_EVENT_IOC_SET_OUTPUT (perf_event_set_output): records go to `to`'s buffer; -1 undoes it. The two
 * must be of the same task and CPU and this event must not have a buffer of its own. */
int perf_set_output(struct emu_event *ev, struct emu_event *to, int to_valid)
{
	int r = 0;
	emu_lock();
	if (!to_valid)
		ev->output = NULL;
	else if (!to)
		r = -EBADF;
	else if (to == ev)
		r = 0;
	else if (to->target != ev->target || to->cpu != ev->cpu || ev->page)
		r = -EINVAL;
	else
		ev->output = to->output ? to->output : to;
	if (!r && ev->xs)
		emu_remote_set_output(ev); /* the sampled task's shadows write that buffer */
	emu_unlock();
	if (!r && to_valid && !is_foreign(ev))
		sideband_existing(ev);
	return r;
}

/* ------------------------------------------------------------------------------------------- fcntl */
/* The memfd really holds the flags, owner and signal (so F_GET* answer), and we mirror them to know whom
 * to signal: shmem files have no fasync, so the kernel itself never signals for them. */
void perf_fcntl(struct emu_event *ev, int cmd, unsigned long arg)
{
	emu_lock();
	if (cmd == F_SETFL) {
		ev->async = (arg & O_ASYNC) != 0;
	} else if (cmd == F_SETOWN) {
		long pid = (long)arg;
		ev->owner_type = pid < 0 ? F_OWNER_PGRP : F_OWNER_PID;
		ev->owner = (pid_t)(pid < 0 ? -pid : pid);
		ev->has_owner = pid != 0;
	} else if (cmd == F_SETOWN_EX && arg) {
		struct f_owner_ex o;
		memcpy(&o, (const void *)arg, sizeof(o));
		ev->owner_type = o.type;
		ev->owner = o.pid;
		ev->has_owner = o.pid != 0;
	} else if (cmd == F_SETSIG) {
		ev->signo = (int)arg;
	}
	emu_unlock();
}

/* -------------------------------------------------------------------------------------- mmap & poll */
static int valid_ring_len(size_t len)
{
	size_t page = (size_t)EMU_REAL(sysconf)(_SC_PAGESIZE);
	if (len < page || len % page)
		return 0;
	size_t data_pages = len / page - 1;
	return data_pages == 0 || (data_pages & (data_pages - 1)) == 0;
}

int perf_mmap(struct emu_event *ev, size_t len, int flags, off_t off)
{
	/* perf_mmap: offset 0, shared, 1 + 2^n pages, the same size for every mapping of one event. */
	if (off != 0 || !(flags & MAP_SHARED) || !valid_ring_len(len))
		return -EINVAL;
	emu_lock();
	int err = ev->output ? -EINVAL : emu_ring_map(ev, len);
	if (!err && !is_foreign(ev)) {
		sync_event(ev);
		emu_event_publish(ev);
	}
	/* perf_mmap calls the PMU's event_mapped last, after the page was written: riscv_pmu_sbi sets
	 * USER_READ_CNT (and scounteren) there, so the page says cap_user_rdpmc only from its next update (a
	 * reset, an enable, the next schedule-in). Readers refresh it first, as PAPI's probe does. */
	if (!err)
		ev->user_read = 1;
	emu_unlock();
	if (!err && !is_foreign(ev))
		sideband_existing(ev);
	return err;
}

/* perf_poll: no buffer -> POLLHUP at once; an event whose budget ended -> POLLHUP; otherwise what the
 * buffer's wakeups (wakeup_events / watermark) left since the last poll, consumed by this poll. */
short perf_poll(struct emu_event *ev)
{
	short r = 0;
	emu_lock();
	sync_event(ev);
	struct emu_event *rb = ev->output ? ev->output : ev;
	if (!rb->page)
		r = POLLHUP;
	else if (rb->wakeups) {
		rb->wakeups = 0;
		r = POLLIN | POLLRDNORM;
	}
	if (ev->hup)
		r |= POLLHUP;
	emu_unlock();
	return r;
}

/* --------------------------------------------------------------------------------------- release */
static void event_destroy(struct emu_event *ev)
{
	struct emu_thread *t = ev->target;
	sync_event(ev);
	if (!is_foreign(ev))
		emu_pes_flush(t); /* its records reach its buffer before it goes */
	struct emu_event **pp;
	if (ev->leader == ev) {
		for (pp = &emu_ctx_of(t)->groups; *pp && *pp != ev; pp = &(*pp)->next_group)
			;
		if (*pp)
			*pp = ev->next_group;
		/* Closing a leader turns its members into singleton groups (perf_group_detach). */
		struct emu_event *s = ev->sibling;
		while (s) {
			struct emu_event *n = s->sibling;
			s->leader = s;
			s->sibling = NULL;
			s->next_group = NULL;
			emu_ctx_insert(s);
			s = n;
		}
	} else {
		for (pp = &ev->leader->sibling; *pp && *pp != ev; pp = &(*pp)->sibling)
			;
		if (*pp)
			*pp = ev->sibling;
	}
	for (pp = &all_events; *pp; pp = &(*pp)->next_all)
		if (*pp == ev) {
			*pp = ev->next_all;
			break;
		}
	for (struct emu_event *e = all_events; e; e = e->next_all)
		if (e->output == ev)
			e->output = NULL;
	emu_ring_unmap(ev);
	emu_remote_release(ev);
	sideband_track(ev, -1);
	if (ev->acc && ev->acc_local)
		free(ev->acc);
	else if (ev->acc && !ev->inherited)
		EMU_REAL(munmap)(ev->acc, sizeof(*ev->acc));
	if (!is_foreign(ev)) {
		snap_release(ev->snap);
		emu_ctx_schedule_out(t); /* __perf_remove_from_context: the others keep their counters */
		emu_timer_rearm(t);
	}
	free(ev);
}

static void release_if_unused(struct emu_event *ev)
{
	/* The kernel keeps the event while its file is open or its buffer mapped (perf_mmap_close). */
	if (ev->refs == 0 && ev->maps == 0)
		event_destroy(ev);
}

void perf_get(struct emu_event *ev)
{
	emu_lock();
	ev->refs++;
	emu_unlock();
}

void perf_put(struct emu_event *ev)
{
	emu_lock();
	ev->refs--;
	release_if_unused(ev);
	emu_unlock();
}

void perf_mapped(struct emu_event *ev)
{
	emu_lock();
	ev->maps++;
	int cpu_wide = ev->xs && !ev->shadow && ev->target->cpu_wide;
	emu_unlock();
	/* a CPU-wide sampling event now has a ring: the mapping thread, if it runs on that CPU, samples
	 * itself into it from now (its shadow, perf_remote.c), as the kernel's CPU context does */
	if (cpu_wide)
		perf_remote_poll_self();
}

void perf_unmapped(struct emu_event *ev)
{
	emu_lock();
	ev->maps--;
	if (ev->maps == 0)
		ev->user_read = 0; /* pmu_sbi_event_unmapped */
	release_if_unused(ev);
	emu_unlock();
}

/* prctl(PR_TASK_PERF_EVENTS_ENABLE/DISABLE): perf_event_task_enable/disable act on the events the
 * calling task opened (its perf_event_list), whatever they count. A disable holds the calling thread's
 * kernel shares at its entry, as PERF_EVENT_IOC_DISABLE does (emu_kernel_share_stop_here): on a board the
 * prctl's way in reaches each counter's stop quickly, where the emulator first accounts every event it
 * turns off; that accounting is not kernel work the events would have counted. */
void perf_task_events_enable(int on)
{
	emu_lock();
	struct emu_thread *self = on ? NULL : emu_thread_self();
	if (self)
		emu_kernel_share_stop_here(self, 1);
	for (struct emu_event *e = all_events; e; e = e->next_all) {
		if (e->inherited || is_foreign(e))
			continue;
		sync_event(e);
		set_enabled(e, on);
		/* and its copies in the tasks it inherits to, as the ioctls (perf_event_for_each_child) */
		if (e->rset || e->xs)
			emu_remote_follow(e, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE);
		if (on)
			emu_ctx_schedule(e->target);
		else
			emu_ctx_schedule_out(e->target);
		emu_timer_rearm(e->target);
		emu_event_publish(e);
	}
	if (self)
		emu_kernel_share_stop_here(self, 0);
	emu_unlock();
}

/* ------------------------------------------------------------------------------------------ inherit */
/*
 * fork with attr.inherit (perf_event_init_task): the child's task gets its own copy of each inherited group
 * of the forking thread, counting the child from its start, in the same state. Sampling events are not
 * inherited (their records would go to the parent's ring buffer; not modelled). When the child exits, its
 * counts and times are added to the parent event (sync_child_event), which reads them from then on; a
 * grandchild's copies share the same accumulator, so everything reaches the event the user opened. Unlike
 * the kernel, a running child's counts are not visible before it exits.
 */
static void inherit_fork_child(struct emu_thread *parent, struct emu_thread *child)
{
	if (!parent->perf)
		return;
	for_each_group(parent->perf, g)
	{
		if (!g->attr.inherit || is_sampling(g))
			continue;
		struct emu_event *leader = NULL;
		for_each_member(g, e)
		{
			struct emu_event *c = calloc(1, sizeof(*c));
			if (!c)
				break; /* out of memory in a fresh child: this group's counts are lost */
			c->attr = e->attr;
			c->id = e->id;
			c->fd = -1;
			c->kind = e->kind;
			c->evmask = e->evmask;
			c->target = child;
			c->cpu = e->cpu;
			c->hw_idx = -1;
			c->leader = leader ? leader : c;
			c->state = e->state == EV_ACTIVE ? EV_INACTIVE : e->state;
			c->acc = e->acc;
			c->inherited = 1;
			c->owner_pid = emu_getpid();
			if (!leader)
				leader = c;
			emu_ctx_insert(c);
		}
	}
	emu_ctx_schedule(child);
}

/* A thread's context accounted up to its current cycles (its counts and the samples due), and its inherited
 * events' counts handed to the parent's events (as the kernel's perf_event_exit_task does). Under the perf
 * lock. */
static void exit_flush(struct emu_thread *t)
{
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	for_each_group(t->perf, g) for_each_member(g, e)
	{
		if (!e->inherited || !e->acc)
			continue;
		__atomic_fetch_add(&e->acc->count, e->count, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->acc->time_enabled, e->time_enabled, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->acc->time_running, e->time_running, __ATOMIC_RELAXED);
		e->count = e->time_enabled = e->time_running = 0;
	}
	emu_remote_shadows_publish(t);
}

void perf_exit_flush(void)
{
	struct emu_thread *t = emu_thread_self();
	emu_lock(); /* no handler runs inside the emulator (the guard defers them): never held here */
	if (t->perf)
		exit_flush(t);
	emu_unlock();
}

/* The child: the events it holds fds of count the parent's threads (it reads them from their snapshots);
 * its own task starts with copies of the inherit groups. Its snapshot arena is its own from now on. */
void perf_fork_child(void)
{
	struct emu_thread *parent = emu_thread_self(); /* the forking thread's record, as copied */
	perf_fork_child_unlock();
	snap_arena = NULL;
	snap_used = 0;
	snap_free = NULL;
	/* the parent's events keep their (shared) snapshot slots: read-only here, never released */
	emu_thread_forget_self();
	struct emu_thread *child = emu_thread_self();
	emu_lock();
	inherit_fork_child(parent, child);
	emu_unlock();
	/* events of other processes sampling it with inherit or CPU-wide; its FORK names the parent at fork
	 * time: the thread that forked, also when it had no record of its own before (its first call into
	 * the emulator was this fork: `parent` is then the child's own new record) */
	perf_remote_attach_self(emu_fork_parent_tid, emu_fork_parent_pid);
}

/* ------------------------------------------------------------------------------ user counter reads */
/* scounteren as riscv_pmu_sbi sets it: perf_user_access = 1 opens the counter of each event this thread
 * has mapped while it is scheduled on a counter; 2 (legacy) opens cycle and instret always; 0 nothing.
 * (time is always open; the front end serves it.) */
int perf_user_counter_read(unsigned csr, uint64_t *value)
{
	int access = emu_cfg()->perf_user_access, idx = (int)csr - 0xC00, r = -EPERM;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	if (access == 2 && (idx == 0 || idx == 2)) {
		const struct rvemu_model *m = emu_model();
		for (size_t i = 0; i < m->nevents; i++)
			if (m->events[i].kind == (idx == 0 ? RVEMU_EV_CYCLES : RVEMU_EV_INSTRET))
				*value = emu_truth_at(t, i, emu_cycles_of(t));
		r = 0;
	} else if (access == 1) {
		for_each_group(emu_ctx_of(t), g) for_each_member(g, e)
		{
			if (e->page && e->maps > 0 && e->kind != EK_SOFTWARE && e->state == EV_ACTIVE &&
			    e->hw_idx == idx) {
				*value = emu_counter_now(e);
				r = 0;
			}
		}
	}
	emu_unlock();
	return r;
}

/* -------------------------------------------------------------------------------- side-band records */
/* Live events that asked for side-band records (perf_output.c counts them). */
static void sideband_track(const struct emu_event *ev, int delta)
{
	emu_sb_track(ev, delta);
}

static int sideband_wanted(void)
{
	return emu_sb_wanted();
}

void perf_record_mmap(const struct perf_mmap_info *m)
{
	if (!sideband_wanted())
		return;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	emu_sb_mmap(t, m);
	emu_unlock();
}

void perf_record_comm(const char *comm, int exec)
{
	if (!sideband_wanted())
		return;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	emu_sb_comm(t, comm, exec);
	emu_unlock();
}

void perf_record_fork(pid_t parent_tid, pid_t pid, pid_t tid, uint64_t fork_seq)
{
	emu_run_task_created(parent_tid, pid, tid, fork_seq); /* the run's table: who made it (inherit) */
	struct emu_thread *t = NULL;
	if (sideband_wanted())
		t = parent_tid == emu_gettid() ? emu_thread_self() : emu_thread_by_tid(parent_tid);
	if (t) {
		emu_lock();
		emu_sb_fork(t, pid, tid);
		emu_unlock();
	}
	/* a thread starting (it reports itself): events of other processes sampling it with inherit, after
	 * its FORK record; a process that forked: such events opened on it meanwhile */
	if (tid == emu_gettid() && tid != pid)
		perf_remote_attach_self(parent_tid, emu_getpid());
	else
		perf_remote_poll_self();
}

/* The last thread of a process that calls exit() comes here twice: from its exit hook, then from atexit. A
 * thread the run's table does not hold remembers its EXIT here: the process that wrote it (a vfork child
 * shares its parent's memory, this variable included; a fork child has its own pid). */
static __thread pid_t exit_written_by;

void perf_record_exit(void)
{
	perf_remote_poll_self(); /* an event opened on it while it ran gets its EXIT */
	/* its final cycles for other processes that count it; its EXIT written once (the run's claim) */
	int claim = emu_run_thread_exit(), mine = claim > 0;
	if (claim < 0) {
		pid_t me = getpid(); /* not cached: a vfork child's is its own */
		mine = exit_written_by != me;
		exit_written_by = me;
	}
	if (!sideband_wanted()) {
		if (claim > 0)
			emu_run_thread_exit_written(); /* nothing to write */
		return;
	}
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	emu_remote_shadows_publish(t); /* its last samples before its EXIT */
	if (mine)
		emu_sb_exit(t);
	/* at once: a kill after the record and before this would have another process write a second one
	 * (the window left is the ring write itself) */
	if (claim > 0)
		emu_run_thread_exit_written();
	emu_unlock();
}

/* exit_group (exit, _exit, _Exit from any thread): the process's other threads end with it (the kernel kills
 * them, zap_other_threads) and each writes its own EXIT in do_exit, after its last samples, its counts going
 * to the parent's events. Here the exiting thread does it for them, once each (the run's claim): accounts
 * their contexts up to their current cycles (samples due until then are written, at the kernel's IP: where
 * the sibling's user code was is not known here), hands their inherited counts on, writes their EXIT; a
 * thread still running until the kernel kills it writes no record after its EXIT (its events stay as they
 * are: an event in error keeps its state). */
void perf_record_process_exit(void)
{
	perf_record_exit();
	struct emu_thread *self = emu_thread_self();
	pid_t tid;
	int slot;
	for (unsigned i = 0; i < EMU_RUN_TASKS && emu_run_claim_sibling_exit(&tid, &slot); i++) {
		/* the claim is ours: its EXIT is written here, whatever happens. A sibling that ended its
		 * pthread_exit meanwhile (it saw the claim taken and wrote nothing) has no thread left: its
		 * EXIT from the run's table, into the events of the run that reach it */
		struct emu_thread *o = emu_thread_by_tid(tid);
		emu_lock();
		if (!o || !o->perf) {
			perf_remote_exit_slot(self, slot);
		} else {
			exit_flush(o); /* its counts and samples until now, its last samples published */
			emu_sb_exit(o);
			o->exit_written = 1; /* it runs until the kernel kills it: no record after its EXIT */
		}
		emu_unlock();
	}
}

/* An MMAP2 record for every mapping of /proc/self/maps that `wanted` selects (exec: 1 executable, 0 data,
 * -1 neither). */
struct mmap_filter {
	uint32_t maj, min;
	uint64_t ino, lo, hi;
};

static void record_mmaps_where(int (*wanted)(const struct perf_mmap_info *m, int exec,
                                             const struct mmap_filter *f),
                               const struct mmap_filter *f)
{
	if (!sideband_wanted())
		return;
	size_t len = 0;
	char *maps = emu_read_proc("/proc/self/maps", &len);
	struct perf_mmap_info m;
	int exec;
	for (char *line = maps; line;) {
		line = emu_next_maps_line(line, &m, &exec);
		if (wanted(&m, exec, f))
			perf_record_mmap(&m);
	}
	free(maps);
}

static int text_of_file(const struct perf_mmap_info *m, int exec, const struct mmap_filter *f)
{
	return exec == 1 && m->maj == f->maj && m->min == f->min && m->ino == f->ino;
}

void perf_record_mmaps_of(uint32_t maj, uint32_t min, uint64_t ino)
{
	struct mmap_filter f = {.maj = maj, .min = min, .ino = ino};
	record_mmaps_where(text_of_file, &f);
}

int perf_mmap_records_wanted(void)
{
	return sideband_wanted();
}

static int overlaps_range(const struct perf_mmap_info *m, int exec, const struct mmap_filter *f)
{
	return exec >= 0 && m->addr < f->hi && f->lo < m->addr + m->len;
}

void perf_record_mmaps_in(uint64_t lo, uint64_t hi)
{
	struct mmap_filter f = {.lo = lo, .hi = hi};
	record_mmaps_where(overlaps_range, &f);
}

/* The thread's name and executable mappings as they were before the event had a buffer: what exec would
 * have written had the event existed then (perf record names functions by them). Once per event, when it
 * is enabled and has a buffer; /proc is read outside the lock. */

static void sideband_existing(struct emu_event *ev)
{
	emu_lock();
	int due = emu_sb_existing_due(ev);
	pid_t tid = ev->target->tid;
	emu_unlock();
	if (!due)
		return;
	char *comm = NULL, *maps = NULL;
	size_t len = 0;
	if (ev->attr.comm) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		comm = emu_read_proc(path, &len);
		if (comm && len && comm[len - 1] == '\n')
			comm[len - 1] = 0;
	}
	if (ev->attr.mmap || ev->attr.mmap2 || ev->attr.mmap_data)
		maps = emu_read_proc("/proc/self/maps", &len);
	emu_lock();
	if (emu_sb_existing_due(ev))
		emu_sb_existing(ev, comm, maps);
	emu_unlock();
	free(comm);
	free(maps);
}

/* ------------------------------------------------------------------------------- events across exec */
/* The kernel keeps an event across exec (the fd is the event's file, the task the same): it counts on, and
 * enable_on_exec turns it on. The new image's emulator knows nothing of the old one's, so each counting event
 * of the exec'ing thread whose fd survives is written to a block of the run's shared memory, and the new
 * image opens it again on the same fd and adds what it had counted. Sampling events and groups are not handed
 * over (their fds read as plain files there). */
void perf_exec_handoff(void)
{
	if (!all_events)
		return;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	emu_ctx_sync(t, emu_cycles_of(t), EMU_IP_KERNEL);
	for (struct emu_event *ev = all_events; ev; ev = ev->next_all) {
		if (is_foreign(ev) || ev->target != t || is_sampling(ev) || ev->leader != ev || ev->sibling ||
		    ev->fd < 0)
			continue;
		int fl = EMU_REAL(fcntl)(ev->fd, F_GETFD);
		if (fl < 0 || (fl & FD_CLOEXEC))
			continue;
		struct stat st;
		if (fstat(ev->fd, &st) != 0)
			continue;
		struct emu_xexec *x = emu_run_block_claim();
		if (!x) {
			static int told;
			if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
				fprintf(stderr,
				        "librvemu: the run's table of shared events is full (%d): events of "
				        "fds kept "
				        "across exec read 0 in the new image\n",
				        EMU_RUN_BLOCKS);
			break;
		}
		x->ino = (uint64_t)st.st_ino;
		x->dev = (uint64_t)st.st_dev;
		uint64_t v[3];
		struct emu_event one = *ev;
		one.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		emu_read_values(&one, NULL, v, 3); /* with what exited children handed over (inherit) */
		x->fd = ev->fd;
		x->cpu = ev->cpu;
		x->state = ev->state;
		x->count = v[0];
		x->time_enabled = v[1];
		x->time_running = v[2];
		x->attr = ev->attr;
		__atomic_store_n(&x->ready, EMU_BLOCK_EXEC, __ATOMIC_RELEASE);
	}
	emu_unlock();
}

void perf_exec_done(void)
{
	int32_t me = (int32_t)emu_getpid();
	for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
		int32_t *b = emu_run_block_at(i);
		if (!b || __atomic_load_n(&b[0], __ATOMIC_ACQUIRE) != me)
			continue;
		__atomic_store_n(&b[1], 0, __ATOMIC_RELEASE); /* ready: the blocks' second word */
		emu_run_block_release(b);
		emu_run_block_published(); /* shadows of the old image's events go */
	}
}

static struct emu_xexec *next_handed(void)
{
	for (unsigned i = 0; i < EMU_RUN_BLOCKS; i++) {
		struct emu_xexec *x = emu_run_block_at(i);
		if (x && __atomic_load_n(&x->ready, __ATOMIC_ACQUIRE) == EMU_BLOCK_EXEC &&
		    x->owner == emu_getpid())
			return x;
	}
	return NULL;
}

void perf_exec_failed(void)
{
	struct emu_xexec *x;
	while ((x = next_handed())) {
		__atomic_store_n(&x->ready, 0, __ATOMIC_RELAXED);
		emu_run_block_release(x);
	}
}

int perf_exec_next(int *fd, int *cpu, struct perf_event_attr *attr, void **handle)
{
	struct emu_xexec *x;
	struct stat st;
	for (;;) {
		if (!(x = next_handed()))
			return -1;
		__atomic_store_n(&x->ready, 0, __ATOMIC_RELAXED); /* taken */
		/* the fd is still the event's memfd (not a block left by an image that is gone, whose pid is
		 * this process's now, naming one of its own files) */
		if (fstat(x->fd, &st) == 0 && (uint64_t)st.st_ino == x->ino && (uint64_t)st.st_dev == x->dev)
			break;
		emu_run_block_release(x);
	}
	*fd = x->fd;
	*cpu = x->cpu;
	*attr = x->attr;
	attr->disabled = 1; /* its state comes with its values */
	*handle = x;
	return 0;
}

void perf_exec_restore(struct emu_event *ev, void *handle)
{
	struct emu_xexec *x = handle;
	if (ev) {
		emu_lock();
		emu_ctx_sync(ev->target, emu_cycles_of(ev->target), EMU_IP_KERNEL);
		ev->count += x->count;
		ev->time_enabled += x->time_enabled;
		ev->time_running += x->time_running;
		/* on if it was; enable_on_exec: this exec turns it on, once (perf_event_enable_on_exec) */
		if (x->state >= EV_INACTIVE || (x->state == EV_OFF && ev->attr.enable_on_exec))
			ev->state = EV_INACTIVE;
		ev->attr.enable_on_exec = 0;
		emu_ctx_schedule(ev->target);
		emu_event_publish(ev);
		emu_timer_rearm(ev->target);
		emu_unlock();
	}
	emu_run_block_release(x);
}
