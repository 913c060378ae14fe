// SPDX-License-Identifier: MIT
/* The kernel's perf_event ABI as PAPI and perf tools use it (man 2 perf_event_open), served through the
 * libc entry points: syscall(__NR_perf_event_open), read, ioctl, fcntl, mmap/munmap, close, dup*.
 *
 * Every emulated event is a real fd (a memfd), so fd numbers never collide with the program's own files;
 * every call on another fd, and every other syscall number, goes to libc unchanged.
 *
 * Choices where the real riscv_pmu_sbi driver gives no single answer (see docs/emulator-core.md):
 *  - an undefined RAW encoding fails at open with ENOENT (the driver accepts it and the SBI firmware then
 *    finds no counter, so the event never counts); bits 61:48 of a RAW config are ignored as the driver
 *    masks them, bits 63:62 (SBI firmware events) give ENOENT;
 *  - programmable counters narrower than 64 bits (U74: 40) are extended to the 64-bit perf count at each
 *    update like riscv_pmu_event_update does: delta = (new - old) mod 2^width. Without Sscofpmf nothing
 *    updates the count between two reads, rotations or injections, so more than 2^width events between
 *    two updates lose multiples of 2^width, as on the board.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu_priv.h"

/* ------------------------------------------------------------------------------------------ fd table */
static struct emu_event **fdtab;
static size_t fdtab_len;

/* One slot per possible fd, reserved as untouched anonymous memory: lookups on every read() are a
 * bounds check and a load, no lock. */
static int fdtab_init(void)
{
	if (fdtab)
		return 0;
	struct rlimit rl;
	size_t n = 1u << 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
		n = rl.rlim_max;
	if (n > (1u << 20))
		n = 1u << 20;
	void *p = EMU_REAL(mmap)(NULL, n * sizeof(*fdtab), PROT_READ | PROT_WRITE,
	                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	fdtab_len = n;
	__atomic_store_n(&fdtab, (struct emu_event **)p, __ATOMIC_RELEASE);
	return 0;
}

struct emu_event *emu_event_of_fd(int fd)
{
	struct emu_event **tab = __atomic_load_n(&fdtab, __ATOMIC_ACQUIRE);
	if (!tab || fd < 0 || (size_t)fd >= fdtab_len)
		return NULL;
	return __atomic_load_n(&tab[fd], __ATOMIC_ACQUIRE);
}

static void fdtab_set(int fd, struct emu_event *ev)
{
	__atomic_store_n(&fdtab[fd], ev, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------------------ counting model */
static int is_sampling(const struct emu_event *ev)
{
	return ev->attr.sample_period != 0; /* also sample_freq: same union */
}

static int counter_width(const struct emu_event *ev)
{
	const struct rvemu_model *m = emu_model();
	if (ev->kind == EK_PROG && m->prog_width < 64 && !emu_sscofpmf())
		return (int)m->prog_width;
	return 64;
}

/* Events the counter of `ev` sees between thread cycles a and b (a <= b), before counter-width effects. */
static uint64_t raw_delta(const struct emu_event *ev, uint64_t a, uint64_t b)
{
	if (ev->kind == EK_TASK_CLOCK)
		return emu_cycles_to_ns(b) - emu_cycles_to_ns(a);
	if (ev->attr.exclude_user) /* every modelled event happens in user mode */
		return 0;
	const struct rvemu_model *m = emu_model();
	uint64_t d = 0;
	for (size_t i = 0; i < m->nevents; i++)
		if (ev->evmask & (1ull << i))
			d += emu_scale(b, m->events[i].ppb) - emu_scale(a, m->events[i].ppb);
	return d;
}

static uint64_t width_mask(const struct emu_event *ev, uint64_t delta)
{
	int w = counter_width(ev);
	return w >= 64 ? delta : delta & ((1ull << w) - 1);
}

/* First cycle c in (a, b] at which `ev` has seen `need` events since a; b + 1 if none. */
static uint64_t cycle_of_count(const struct emu_event *ev, uint64_t a, uint64_t b, uint64_t need)
{
	if (raw_delta(ev, a, b) < need)
		return b + 1;
	uint64_t lo = a, hi = b; /* delta(lo) < need <= delta(hi) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (raw_delta(ev, a, mid) >= need)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

#define for_each_group(ctx, g) for (struct emu_event *g = (ctx)->groups; g; g = g->next_group)
#define for_each_member(g, e)  for (struct emu_event *e = (g); e; e = e->sibling)

struct hw_use {
	unsigned cycles, instret, prog;
};

static void group_needs(struct emu_event *leader, struct hw_use *need)
{
	memset(need, 0, sizeof(*need));
	for_each_member(leader, e)
	{
		if (e->state < EV_INACTIVE)
			continue;
		if (e->kind == EK_CYCLES)
			need->cycles++;
		else if (e->kind == EK_INSTRET)
			need->instret++;
		else if (e->kind == EK_PROG)
			need->prog++;
	}
}

static int group_fits(struct emu_event *leader, struct hw_use *used)
{
	struct hw_use need;
	group_needs(leader, &need);
	if (used->cycles + need.cycles > 1 || used->instret + need.instret > 1 ||
	    used->prog + need.prog > emu_model()->prog_counters)
		return 0;
	used->cycles += need.cycles;
	used->instret += need.instret;
	used->prog += need.prog;
	return 1;
}

static int group_is_software(struct emu_event *leader)
{
	for_each_member(leader, e) if (e->kind != EK_TASK_CLOCK) return 0;
	return 1;
}

static void group_set_active(struct emu_event *leader, int active)
{
	for_each_member(leader, e)
	{
		if (e->state == EV_ACTIVE || e->state == EV_INACTIVE)
			e->state = active ? EV_ACTIVE : EV_INACTIVE;
	}
}

/* Kernel order: pinned groups first (one that cannot go on is put in error state), then flexible groups
 * in list order until the first that does not fit; rotation moves the first flexible group to the end. */
static void ctx_schedule(struct emu_thread *t)
{
	struct emu_ctx *ctx = &t->ctx;
	struct hw_use used = {0, 0, 0};
	int was_rotating = ctx->rotate_needed;
	ctx->rotate_needed = 0;
	for_each_group(ctx, g) group_set_active(g, 0);
	for_each_group(ctx, g)
	{
		if (!g->attr.pinned || g->state != EV_INACTIVE)
			continue;
		if (group_is_software(g) || group_fits(g, &used))
			group_set_active(g, 1);
		else
			g->state = EV_ERROR;
	}
	int can_add_hw = 1;
	for_each_group(ctx, g)
	{
		if (g->attr.pinned || g->state != EV_INACTIVE)
			continue;
		if (group_is_software(g) || (can_add_hw && group_fits(g, &used))) {
			group_set_active(g, 1);
		} else {
			can_add_hw = 0;
			ctx->rotate_needed = 1;
		}
	}
	if (ctx->rotate_needed && !was_rotating)
		ctx->slice_end = ctx->last_cycles + emu_mux_cycles();
	ctx->nsampling_active = 0;
	for_each_group(ctx, g) for_each_member(g, e) if (e->state == EV_ACTIVE && is_sampling(e))
	    ctx->nsampling_active++;
}

static void ctx_rotate(struct emu_thread *t)
{
	struct emu_ctx *ctx = &t->ctx;
	struct emu_event **pp = &ctx->groups, *first = NULL;
	for (; *pp; pp = &(*pp)->next_group)
		if (!(*pp)->attr.pinned) {
			first = *pp;
			*pp = first->next_group;
			break;
		}
	if (!first)
		return;
	first->next_group = NULL;
	for (pp = &ctx->groups; *pp; pp = &(*pp)->next_group)
		;
	*pp = first;
	EMU_STAT_ADD(multiplex_rotations, 1);
	ctx->slice_end += emu_mux_cycles();
	ctx_schedule(t);
}

/* Counted events may raise overflows: handle the ones of sampling events. Returns 1 if one was disabled. */
static int count_and_overflow(struct emu_event *e, uint64_t delta, uint64_t ip)
{
	e->count += width_mask(e, delta);
	if (!is_sampling(e) || e->state != EV_ACTIVE)
		return 0;
	e->period_left -= (int64_t)delta;
	while (e->period_left <= 0 && e->state == EV_ACTIVE) {
		e->period_left += (int64_t)e->period;
		emu_overflow(e, ip);
	}
	return e->state != EV_ACTIVE;
}

/* Account thread cycles [last, next) to every event of the context. */
static int ctx_account(struct emu_ctx *ctx, uint64_t last, uint64_t next, uint64_t ip)
{
	uint64_t ns = emu_cycles_to_ns(next) - emu_cycles_to_ns(last);
	int disabled = 0;
	for_each_group(ctx, g)
	{
		if (g->state < EV_INACTIVE)
			continue;
		for_each_member(g, e)
		{
			if (e->state < EV_INACTIVE)
				continue;
			e->time_enabled += ns;
			if (e->state != EV_ACTIVE)
				continue;
			e->time_running += ns;
			disabled |= count_and_overflow(e, raw_delta(e, last, next), ip);
		}
	}
	return disabled;
}

static uint64_t next_overflow(struct emu_ctx *ctx, uint64_t last, uint64_t now)
{
	uint64_t next = now;
	if (!ctx->nsampling_active)
		return next;
	for_each_group(ctx, g) for_each_member(g, e)
	{
		if (e->state != EV_ACTIVE || !is_sampling(e))
			continue;
		uint64_t c =
		    cycle_of_count(e, last, next, (uint64_t)(e->period_left > 0 ? e->period_left : 1));
		if (c <= next)
			next = c;
	}
	return next;
}

void emu_ctx_sync(struct emu_thread *t, uint64_t now, uint64_t ip)
{
	struct emu_ctx *ctx = &t->ctx;
	while (ctx->last_cycles < now) {
		uint64_t last = ctx->last_cycles, next = now;
		if (ctx->rotate_needed && ctx->slice_end < next)
			next = ctx->slice_end;
		next = next_overflow(ctx, last, next);
		int disabled = ctx_account(ctx, last, next, ip);
		ctx->last_cycles = next;
		if (ctx->rotate_needed && next >= ctx->slice_end)
			ctx_rotate(t);
		else if (disabled)
			ctx_schedule(t);
	}
}

void emu_ctx_inject(struct emu_thread *t, int evidx, uint64_t n, uint64_t ip)
{
	int disabled = 0;
	for_each_group(&t->ctx, g) for_each_member(g, e)
	{
		if (e->state != EV_ACTIVE || !(e->evmask & (1ull << evidx)) || e->attr.exclude_user)
			continue;
		disabled |= count_and_overflow(e, n, ip);
	}
	if (disabled)
		ctx_schedule(t);
}

static void sync_event(struct emu_event *ev)
{
	emu_ctx_sync(ev->target, emu_cycles_of(ev->target), (uint64_t)(uintptr_t)__builtin_return_address(0));
}

/* --------------------------------------------------------------------------------------------- read */
/* What an event reads: its own count and times, plus those its exited children handed over (inherit). */
static uint64_t total_count(const struct emu_event *e)
{
	return e->count + (e->acc && !e->inherited ? __atomic_load_n(&e->acc->count, __ATOMIC_RELAXED) : 0);
}

static uint64_t total_enabled(const struct emu_event *e)
{
	return e->time_enabled +
	       (e->acc && !e->inherited ? __atomic_load_n(&e->acc->time_enabled, __ATOMIC_RELAXED) : 0);
}

static uint64_t total_running(const struct emu_event *e)
{
	return e->time_running +
	       (e->acc && !e->inherited ? __atomic_load_n(&e->acc->time_running, __ATOMIC_RELAXED) : 0);
}

static size_t put_one(const struct emu_event *e, uint64_t fmt, uint64_t *out)
{
	size_t n = 0;
	out[n++] = total_count(e);
	if (fmt & PERF_FORMAT_ID)
		out[n++] = e->id;
	if (fmt & PERF_FORMAT_LOST)
		out[n++] = e->lost_total;
	return n;
}

/* The read_format layout of man 2 perf_event_open; returns words needed (may exceed max_words). */
size_t emu_read_values(struct emu_event *ev, uint64_t *out, size_t max_words)
{
	uint64_t fmt = ev->attr.read_format, tmp[8];
	size_t n = 0, per = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	struct emu_event *leader = ev->leader;
#define PUT(v)                                                                                               \
	do {                                                                                                 \
		if (n < max_words)                                                                           \
			out[n] = (v);                                                                        \
		n++;                                                                                         \
	} while (0)
	if (fmt & PERF_FORMAT_GROUP) {
		uint64_t nr = 0;
		for_each_member(leader, e) nr++;
		PUT(nr);
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			PUT(total_enabled(leader));
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			PUT(total_running(leader));
		for_each_member(leader, e)
		{
			size_t k = put_one(e, fmt, tmp);
			for (size_t i = 0; i < k && i < per; i++)
				PUT(tmp[i]);
		}
	} else {
		PUT(total_count(ev));
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			PUT(total_enabled(ev));
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			PUT(total_running(ev));
		if (fmt & PERF_FORMAT_ID)
			PUT(ev->id);
		if (fmt & PERF_FORMAT_LOST)
			PUT(ev->lost_total);
	}
#undef PUT
	return n;
}

static ssize_t event_read(struct emu_event *ev, void *buf, size_t len)
{
	uint64_t vals[3 + 3 * 64];
	emu_lock();
	sync_event(ev);
	if (ev->state == EV_ERROR) { /* a pinned group that could not be scheduled */
		emu_unlock();
		return 0;
	}
	size_t words = emu_read_values(ev, vals, sizeof(vals) / sizeof(vals[0]));
	emu_unlock();
	if (words > sizeof(vals) / sizeof(vals[0])) {
		errno = E2BIG;
		return -1;
	}
	if (len < words * sizeof(uint64_t)) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, vals, words * sizeof(uint64_t));
	return (ssize_t)(words * sizeof(uint64_t));
}

EMU_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct emu_event *ev = emu_event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(read)(fd, buf, len);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	uint64_t advance = emu_read_advance();
	if (advance) /* the cycles run before this read; the read then sees them */
		emu_advance_self(advance, (uint64_t)(uintptr_t)__builtin_return_address(0));
	return event_read(ev, buf, len);
}

/* ------------------------------------------------------------------------------------ open & validate */
static uint64_t next_id = 1;

static int copy_attr(const struct perf_event_attr *u, struct perf_event_attr *a)
{
	if (!u)
		return -EFAULT;
	uint32_t size = u->size ? u->size : PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > 4096) {
		((struct perf_event_attr *)u)->size = sizeof(*a); /* the kernel writes back what it knows */
		return -E2BIG;
	}
	memset(a, 0, sizeof(*a));
	memcpy(a, u, size < sizeof(*a) ? size : sizeof(*a));
	for (size_t i = sizeof(*a); i < size; i++)
		if (((const unsigned char *)u)[i]) {
			((struct perf_event_attr *)u)->size = sizeof(*a);
			return -E2BIG;
		}
	a->size = size;
	if (a->__reserved_1 || a->__reserved_2 || a->__reserved_3)
		return -EINVAL;
	if (a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1) ||
	    a->read_format & ~(uint64_t)(PERF_FORMAT_MAX - 1))
		return -EINVAL;
	if (a->freq ? a->sample_freq > 100000 : (a->sample_period >> 63) != 0)
		return -EINVAL; /* perf_event_max_sample_rate; a period must fit in 63 bits */
	/* inherit: forked children are counted (emu_inherit_fork_child); see docs/emulator-core.md */
	return 0;
}

#define EMU_SAMPLE_SUPPORTED                                                                                 \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |           \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |                   \
	 PERF_SAMPLE_IDENTIFIER)

static int has_exclude(const struct perf_event_attr *a)
{
	return a->exclude_user || a->exclude_kernel || a->exclude_hv || a->exclude_idle || a->exclude_host ||
	       a->exclude_guest;
}

/* What the event counts: PERF_TYPE_HARDWARE cycles/instructions, RAW mhpmevent values, task/cpu clock. */
static int decode_event(const struct perf_event_attr *a, struct emu_event *ev)
{
	const struct rvemu_model *m = emu_model();
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
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
		if (a->config != PERF_COUNT_SW_TASK_CLOCK && a->config != PERF_COUNT_SW_CPU_CLOCK)
			return -ENOENT;
		ev->kind = EK_TASK_CLOCK;
		return 0;
	default:
		return -ENOENT; /* no such PMU type */
	}
}

static int check_hw_capabilities(const struct perf_event_attr *a, const struct emu_event *ev)
{
	if (ev->kind == EK_TASK_CLOCK)
		return is_sampling(ev) ? -EOPNOTSUPP : 0; /* hrtimer sampling is not emulated */
	/* riscv_pmu_sbi without Sscofpmf: PERF_PMU_CAP_NO_INTERRUPT and PERF_PMU_CAP_NO_EXCLUDE. */
	if (!emu_sscofpmf()) {
		if (has_exclude(a))
			return -EINVAL;
		if (is_sampling(ev))
			return -EOPNOTSUPP;
	}
	if (is_sampling(ev) && (a->sample_type & ~(uint64_t)EMU_SAMPLE_SUPPORTED))
		return -EINVAL;
	return 0;
}

static uint64_t period_for_freq(const struct emu_event *ev, uint64_t freq)
{
	/* The kernel adapts the period until samples arrive at `freq` per second; with a constant workload
	 * profile that converges to events-per-second / freq, which we use from the start. */
	uint64_t per_s = raw_delta(ev, 0, (uint64_t)emu_model()->freq_mhz * 1000000u);
	uint64_t p = freq ? per_s / freq : 0;
	return p ? p : 1;
}

static int resolve_target(int pid, int cpu, struct emu_thread **t)
{
	if (cpu < -1 || (cpu >= 0 && (unsigned)cpu >= emu_nharts()))
		return cpu < -1 ? -EINVAL : -ENODEV;
	if (pid == -1)
		return cpu == -1 ? -EINVAL : -EACCES; /* CPU-wide needs perf_event_paranoid <= 0 */
	if (pid < -1)
		return -ESRCH;
	if (pid == 0 || pid == emu_gettid()) {
		*t = emu_thread_self();
		return 0;
	}
	*t = emu_thread_by_tid(pid);
	/* Other processes: the kernel returns ESRCH for no such task, EACCES when paranoid forbids it. */
	return *t ? 0 : (kill(pid, 0) == 0 || errno == EPERM ? -EACCES : -ESRCH);
}

static int attach_group(struct emu_event *ev, int group_fd, unsigned long flags)
{
	if (group_fd == -1 || (flags & PERF_FLAG_FD_NO_GROUP)) {
		ev->leader = ev;
		return 0;
	}
	struct emu_event *g = emu_event_of_fd(group_fd);
	if (!g)
		return -EBADF;
	if (g->leader != g || g->target != ev->target || g->cpu != ev->cpu)
		return -EINVAL;
	ev->leader = g;
	return 0;
}

static void ctx_insert(struct emu_event *ev)
{
	struct emu_event **pp;
	if (ev->leader == ev) {
		for (pp = &ev->target->ctx.groups; *pp; pp = &(*pp)->next_group)
			;
	} else {
		for (pp = &ev->leader->sibling; *pp; pp = &(*pp)->sibling)
			;
	}
	*pp = ev;
}

static long perf_event_open_emulated(const struct perf_event_attr *uattr, int pid, int cpu, int group_fd,
                                     unsigned long flags)
{
	struct emu_event tmp;
	int err;
	memset(&tmp, 0, sizeof(tmp));
	if (flags &
	    ~(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC))
		return -EINVAL;
	if (flags & PERF_FLAG_PID_CGROUP)
		return -EINVAL; /* cgroup mode needs a CPU-wide event, which paranoid 2 forbids anyway */
	if ((err = copy_attr(uattr, &tmp.attr)) || (err = decode_event(&tmp.attr, &tmp)) ||
	    (err = check_hw_capabilities(&tmp.attr, &tmp)) || (err = resolve_target(pid, cpu, &tmp.target)))
		return err;
	tmp.cpu = cpu;
	emu_lock();
	if ((err = fdtab_init()) || (err = attach_group(&tmp, group_fd, flags))) {
		emu_unlock();
		return err;
	}
	int fd = memfd_create("perf_event", (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
	struct emu_event *ev = fd >= 0 ? malloc(sizeof(*ev)) : NULL;
	if (!ev || (size_t)fd >= fdtab_len) {
		err = fd < 0 ? -errno : -EMFILE;
		if (fd >= 0)
			EMU_REAL(close)(fd);
		free(ev);
		emu_unlock();
		return err;
	}
	*ev = tmp;
	if (ev->leader == &tmp)
		ev->leader = ev;
	if (tmp.attr.inherit) {
		ev->acc = EMU_REAL(mmap)(NULL, sizeof(*ev->acc), PROT_READ | PROT_WRITE,
		                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (ev->acc == MAP_FAILED) {
			EMU_REAL(close)(fd);
			free(ev);
			emu_unlock();
			return -ENOMEM;
		}
	}
	ev->fd = fd;
	ev->refs = 1;
	ev->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	ev->period = tmp.attr.freq ? period_for_freq(ev, tmp.attr.sample_freq) : tmp.attr.sample_period;
	ev->period_left = (int64_t)ev->period;
	ev->state = tmp.attr.disabled ? EV_OFF : EV_INACTIVE;
	emu_ctx_sync(ev->target, emu_cycles_of(ev->target), 0);
	ctx_insert(ev);
	fdtab_set(fd, ev);
	ctx_schedule(ev->target);
	emu_timer_rearm(ev->target);
	emu_unlock();
	return fd;
}

static void release_if_event(int fd);
static int (*emu_real_close_range)(unsigned, unsigned, int);
static void (*emu_real_closefrom)(int);

static void release_range(unsigned first, unsigned last);

EMU_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	if (number == SYS_perf_event_open) {
		/* pid, cpu and group_fd are int in the kernel's prototype: read them as int varargs. */
		const struct perf_event_attr *attr = va_arg(ap, const struct perf_event_attr *);
		int pid = va_arg(ap, int), cpu = va_arg(ap, int), group_fd = va_arg(ap, int);
		unsigned long flags = va_arg(ap, unsigned long);
		va_end(ap);
		emu_init();
		EMU_STAT_ADD(syscalls_emulated, 1);
		long r = perf_event_open_emulated(attr, pid, cpu, group_fd, flags);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return r;
	}
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_close && a[0] >= 0)
		release_if_event((int)a[0]);
	else if (number == SYS_close_range && !(a[2] & CLOSE_RANGE_CLOEXEC) &&
	         (unsigned)a[0] <= (unsigned)a[1])
		release_range((unsigned)a[0], (unsigned)a[1]);
	EMU_STAT_ADD(syscalls_forwarded, 1);
	return EMU_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ------------------------------------------------------------------------------------------- ioctl */
static void set_enabled(struct emu_event *e, int on)
{
	if (on && e->state < EV_INACTIVE)
		e->state = EV_INACTIVE; /* also leaves the error state */
	else if (!on && e->state >= EV_INACTIVE)
		e->state = EV_OFF; /* an event in error state stays there */
}

static int apply(struct emu_event *ev, unsigned long req, int group)
{
	struct emu_event *first = group ? ev->leader : ev;
	for (struct emu_event *e = first; e; e = group ? e->sibling : NULL) {
		if (req == PERF_EVENT_IOC_ENABLE)
			set_enabled(e, 1);
		else if (req == PERF_EVENT_IOC_DISABLE)
			set_enabled(e, 0);
		else
			e->count = 0; /* RESET: the count only, times stay */
	}
	return 0;
}

static int event_ioctl(struct emu_event *ev, unsigned long req, unsigned long arg)
{
	int r = 0;
	emu_lock();
	sync_event(ev);
	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET:
		r = apply(ev, req, (arg & PERF_IOC_FLAG_GROUP) != 0);
		break;
	case PERF_EVENT_IOC_REFRESH:
		if (!is_sampling(ev) || ev->attr.inherit || (int)arg <= 0) {
			r = -EINVAL;
			break;
		}
		ev->event_limit += (int)arg;
		set_enabled(ev, 1);
		break;
	case PERF_EVENT_IOC_PERIOD: {
		uint64_t v;
		if (!arg) {
			r = -EFAULT;
			break;
		}
		memcpy(&v, (const void *)arg, sizeof(v));
		if (!is_sampling(ev) || !v || (v >> 63) || (ev->attr.freq && v > 100000)) {
			r = -EINVAL;
			break;
		}
		if (ev->attr.freq)
			ev->period = period_for_freq(ev, v);
		else
			ev->period = v;
		ev->attr.sample_period = ev->attr.freq ? v : ev->period;
		ev->period_left = (int64_t)ev->period;
		break;
	}
	case PERF_EVENT_IOC_ID:
		if (!arg) {
			r = -EFAULT;
			break;
		}
		memcpy((void *)arg, &ev->id, sizeof(ev->id));
		break;
	case PERF_EVENT_IOC_SET_OUTPUT:
		r = (int)arg == -1 ? 0 : -EINVAL; /* redirecting into another buffer is not emulated */
		break;
	default:
		r = -ENOTTY;
	}
	if (!r && (req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_DISABLE ||
	           req == PERF_EVENT_IOC_REFRESH)) {
		ctx_schedule(ev->target);
		emu_timer_rearm(ev->target);
	}
	emu_unlock();
	if (r) {
		errno = -r;
		return -1;
	}
	return 0;
}

EMU_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	struct emu_event *ev = emu_event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(ioctl)(fd, req, arg);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	return event_ioctl(ev, req, arg);
}

/* ------------------------------------------------------------------------------------------- fcntl */
/* The memfd really holds the flags, owner and signal (so F_GET* answer), and we mirror them to know whom
 * to signal: shmem files have no fasync, so the kernel itself never signals for them. */
static void mirror_fcntl(struct emu_event *ev, int cmd, unsigned long arg)
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

static int dup_track(int oldfd, int newfd);

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, unsigned long arg)
{
	int r = real(fd, cmd, arg);
	struct emu_event *ev = emu_event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return r;
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return dup_track(fd, r); /* the copy refers to the same event, like dup() */
	if (r != -1)
		mirror_fcntl(ev, cmd, arg);
	return r;
}

EMU_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long); /* int or pointer: both fit, as glibc reads it */
	va_end(ap);
	return fcntl_common(EMU_REAL(fcntl), fd, cmd, arg);
}

EMU_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl_common(EMU_REAL(fcntl64), fd, cmd, arg);
}

/* -------------------------------------------------------------------------------------- mmap & close */
static int valid_ring_len(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (len < page || len % page)
		return 0;
	size_t data_pages = len / page - 1;
	return data_pages == 0 || (data_pages & (data_pages - 1)) == 0;
}

EMU_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct emu_event *ev = emu_event_of_fd(fd);
	if (!ev)
		return EMU_REAL(mmap)(addr, len, prot, flags, fd, off);
	EMU_STAT_ADD(syscalls_emulated, 1);
	/* perf_mmap: offset 0, shared, 1 + 2^n pages, the same size for every mapping of one event. */
	if (off != 0 || !(flags & MAP_SHARED) || !valid_ring_len(len)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	emu_lock();
	int err = emu_ring_map(ev, len);
	emu_unlock();
	if (err) {
		errno = -err;
		return MAP_FAILED;
	}
	return EMU_REAL(mmap)(addr, len, prot, flags, fd, 0);
}

EMU_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

static void event_destroy(struct emu_event *ev)
{
	struct emu_thread *t = ev->target;
	sync_event(ev);
	struct emu_event **pp;
	if (ev->leader == ev) {
		for (pp = &t->ctx.groups; *pp != ev; pp = &(*pp)->next_group)
			;
		*pp = ev->next_group;
		/* Closing a leader turns its members into singleton groups (perf_group_detach). */
		struct emu_event *s = ev->sibling;
		while (s) {
			struct emu_event *n = s->sibling;
			s->leader = s;
			s->sibling = NULL;
			ctx_insert(s);
			s = n;
		}
	} else {
		for (pp = &ev->leader->sibling; *pp != ev; pp = &(*pp)->sibling)
			;
		*pp = ev->sibling;
	}
	emu_ring_unmap(ev);
	if (ev->acc && !ev->inherited)
		EMU_REAL(munmap)(ev->acc, sizeof(*ev->acc));
	ctx_schedule(t);
	emu_timer_rearm(t);
	free(ev);
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
void emu_inherit_fork_child(struct emu_thread *parent, struct emu_thread *child)
{
	for_each_group(&parent->ctx, g)
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
			c->leader = leader ? leader : c;
			c->state = e->state == EV_ACTIVE ? EV_INACTIVE : e->state;
			c->acc = e->acc;
			c->inherited = 1;
			if (!leader)
				leader = c;
			ctx_insert(c);
		}
	}
	ctx_schedule(child);
}

void emu_inherit_flush(struct emu_thread *t)
{
	emu_ctx_sync(t, emu_cycles_of(t), 0);
	for_each_group(&t->ctx, g) for_each_member(g, e)
	{
		if (!e->inherited || !e->acc)
			continue;
		__atomic_fetch_add(&e->acc->count, e->count, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->acc->time_enabled, e->time_enabled, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->acc->time_running, e->time_running, __ATOMIC_RELAXED);
		e->count = e->time_enabled = e->time_running = 0;
	}
}

static void fd_release(int fd, struct emu_event *ev)
{
	emu_lock();
	fdtab_set(fd, NULL);
	if (--ev->refs == 0)
		event_destroy(ev);
	emu_unlock();
}

EMU_EXPORT int close(int fd)
{
	struct emu_event *ev = emu_event_of_fd(fd);
	if (!ev) {
		EMU_STAT_ADD(syscalls_forwarded, 1);
		return EMU_REAL(close)(fd);
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	fd_release(fd, ev);
	return EMU_REAL(close)(fd);
}

/* A duplicated event fd refers to the same event, as in the kernel (one struct file). */
static int dup_track(int oldfd, int newfd)
{
	struct emu_event *ev = emu_event_of_fd(oldfd);
	if (newfd < 0 || !ev || newfd == oldfd)
		return newfd;
	if ((size_t)newfd >= fdtab_len) {
		EMU_REAL(close)(newfd);
		errno = EMFILE;
		return -1;
	}
	emu_lock();
	ev->refs++;
	fdtab_set(newfd, ev);
	emu_unlock();
	return newfd;
}

static void release_if_event(int fd)
{
	struct emu_event *ev = emu_event_of_fd(fd);
	if (ev)
		fd_release(fd, ev);
}

/* Every way an fd can be closed must forget its event, or the next file to get that number would be served
 * as the event: close, dup2/dup3 over it, close_range, closefrom, syscall(SYS_close / SYS_close_range). */
static void release_range(unsigned first, unsigned last)
{
	for (size_t fd = first; fd <= last && fd < fdtab_len; fd++)
		release_if_event((int)fd);
}

EMU_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		release_range(first, last); /* CLOEXEC only marks: the fds stay open until an exec */
	return EMU_REAL(close_range)(first, last, flags);
}

EMU_EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		release_range((unsigned)lowfd, ~0u);
	EMU_REAL(closefrom)(lowfd);
}

EMU_EXPORT int dup(int fd)
{
	return dup_track(fd, EMU_REAL(dup)(fd));
}

EMU_EXPORT int dup2(int fd, int newfd)
{
	if (fd != newfd && emu_event_of_fd(fd) == NULL && fcntl(fd, F_GETFD) == -1)
		return EMU_REAL(dup2)(fd, newfd); /* bad oldfd: libc reports it, newfd untouched */
	if (fd != newfd)
		release_if_event(newfd);
	return dup_track(fd, EMU_REAL(dup2)(fd, newfd));
}

EMU_EXPORT int dup3(int fd, int newfd, int flags)
{
	if (fd != newfd && emu_event_of_fd(fd) == NULL && fcntl(fd, F_GETFD) == -1)
		return EMU_REAL(dup3)(fd, newfd, flags);
	if (fd != newfd)
		release_if_event(newfd);
	return dup_track(fd, EMU_REAL(dup3)(fd, newfd, flags));
}
