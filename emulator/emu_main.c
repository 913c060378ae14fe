// SPDX-License-Identifier: MIT
/* Emulator core: machine model chosen from the environment, per-thread clocks, statistics and the public
 * control API of rvemu.h (except the counter banks' rvemu_hpc_* / rvemu_boom_*). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emu_priv.h"

ssize_t (*emu_real_read)(int, void *, size_t);
int (*emu_real_close)(int);
int (*emu_real_ioctl)(int, unsigned long, ...);
int (*emu_real_fcntl)(int, int, ...);
int (*emu_real_fcntl64)(int, int, ...);
void *(*emu_real_mmap)(void *, size_t, int, int, int, off_t);
int (*emu_real_munmap)(void *, size_t);
long (*emu_real_syscall)(long, ...);
int (*emu_real_dup)(int);
int (*emu_real_dup2)(int, int);
int (*emu_real_dup3)(int, int, int);

struct rvemu_stats emu_stats;

static const struct rvemu_model *active_model;
static unsigned harts = 4;
static int clock_virtual;
static int sscofpmf;
static uint64_t mux_cycles;
static uint64_t read_advance; /* RVEMU_READ_ADVANCE: virtual cycles added by each read() of an event */

/* A counter bank model that has not landed yet: nothing to initialise. */
__attribute__((weak)) void emu_banks_init(void)
{
}

void *emu_dlsym_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "librvemu: libc has no %s\n", name);
		abort();
	}
	return p;
}

static void die_config(const char *what, const char *value)
{
	fprintf(stderr, "librvemu: %s: '%s'\n", what, value);
	exit(2);
}

static const struct rvemu_model *find_model(const char *name)
{
	for (size_t i = 0; i < rvemu_nmodels; i++)
		if (strcmp(rvemu_models[i].model, name) == 0)
			return &rvemu_models[i];
	return NULL;
}

static void unknown_model(const char *name)
{
	fprintf(stderr, "librvemu: unknown RVEMU_MODEL '%s'; known models:", name);
	for (size_t i = 0; i < rvemu_nmodels; i++)
		fprintf(stderr, " %s", rvemu_models[i].model);
	fprintf(stderr, "\n");
	exit(2);
}

static unsigned long long env_number(const char *var, unsigned long long dflt, unsigned long long min,
                                     unsigned long long max)
{
	const char *s = getenv(var);
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max || s[0] == '-') {
		fprintf(stderr, "librvemu: %s must be a number in %llu..%llu, not '%s'\n", var, min, max, s);
		exit(2);
	}
	return v;
}

static void load_config(void)
{
	const char *m = getenv("RVEMU_MODEL");
	active_model = find_model(m && *m ? m : "sifive-u74");
	if (!active_model)
		unknown_model(m);
	harts = (unsigned)env_number("RVEMU_HARTS", 4, 1, 1024);
	const char *c = getenv("RVEMU_CLOCK");
	if (!c || !*c || strcmp(c, "cputime") == 0)
		clock_virtual = 0;
	else if (strcmp(c, "virtual") == 0)
		clock_virtual = 1;
	else
		die_config("RVEMU_CLOCK must be virtual or cputime, not", c);
	sscofpmf = (int)env_number("RVEMU_SSCOFPMF", 0, 0, 1);
	if (sscofpmf && !active_model->overflow_irq_with_sscofpmf)
		die_config("RVEMU_SSCOFPMF=1: this core has no Sscofpmf option", active_model->model);
	/* The kernel rotates multiplexed groups every perf_event_mux_interval_ms (4 ms with HZ=250). */
	uint64_t four_ms = 4000ull * active_model->freq_mhz;
	mux_cycles = env_number("RVEMU_MUX_CYCLES", four_ms, 1, UINT64_MAX / 4);
	/* Programs we cannot change (papi_command_line) advance a virtual clock only through their reads. */
	read_advance = env_number("RVEMU_READ_ADVANCE", 0, 0, UINT64_MAX / 4);
	if (read_advance && !clock_virtual)
		die_config("RVEMU_READ_ADVANCE needs RVEMU_CLOCK=virtual; the clock is", c ? c : "cputime");
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int config_ready;

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void init_once_fn(void)
{
	load_config();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	/* The bank models' init asks for the model: answer without re-entering pthread_once. */
	__atomic_store_n(&config_ready, 1, __ATOMIC_RELEASE);
	emu_banks_init();
}

void emu_init(void)
{
	if (!__atomic_load_n(&config_ready, __ATOMIC_ACQUIRE))
		pthread_once(&init_once, init_once_fn);
}

/* Load time: a bad configuration stops the program before it runs on a machine it did not ask for. */
__attribute__((constructor)) static void emu_constructor(void)
{
	emu_init();
}

const struct rvemu_model *emu_model(void)
{
	emu_init();
	return active_model;
}

unsigned emu_nharts(void)
{
	emu_init();
	return harts;
}

int emu_clock_is_virtual(void)
{
	emu_init();
	return clock_virtual;
}

int emu_sscofpmf(void)
{
	emu_init();
	return sscofpmf;
}

uint64_t emu_mux_cycles(void)
{
	return mux_cycles;
}

uint64_t emu_read_advance(void)
{
	emu_init();
	return read_advance;
}

uint64_t emu_cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)((unsigned __int128)cycles * 1000u / active_model->freq_mhz);
}

uint64_t emu_ns_to_cycles(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * active_model->freq_mhz / 1000u);
}

int emu_model_event_index(const char *name)
{
	const struct rvemu_model *m = emu_model();
	for (size_t i = 0; i < m->nevents; i++)
		if (strcasecmp(m->events[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* U74: mhpmevent = class | mask << 8; the mask may combine any defined bits of that one class. */
static int decode_class_mask(const struct rvemu_model *m, uint64_t config, uint64_t *evmask)
{
	uint64_t cls = config & 0xff, mask = config & ~(uint64_t)0xff, covered = 0, set = 0;
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rvemu_event *e = &m->events[i];
		if (e->kind != RVEMU_EV_PROGRAMMABLE || (e->encoding & 0xff) != cls)
			continue;
		uint64_t bit = e->encoding & ~(uint64_t)0xff;
		if (mask & bit) {
			covered |= bit;
			set |= 1ull << i;
		}
	}
	if (!mask || covered != mask)
		return -ENOENT; /* empty mask, undefined bit, or bits of another class */
	*evmask = set;
	return 0;
}

int emu_decode_raw(uint64_t config, uint64_t *evmask)
{
	const struct rvemu_model *m = emu_model();
	/* riscv_pmu_sbi: bits 63:62 select SBI firmware events (not emulated), 47:0 are the hardware event
	 * and the driver drops bits 61:48. */
	if (config >> 62)
		return -ENOENT;
	config &= (1ull << 48) - 1;
	if (m->class_masks)
		return decode_class_mask(m, config, evmask);
	for (size_t i = 0; i < m->nevents; i++)
		if (m->events[i].kind == RVEMU_EV_PROGRAMMABLE && m->events[i].encoding == config) {
			*evmask = 1ull << i;
			return 0;
		}
	return -ENOENT;
}

/* ------------------------------------------------------------------------------------------ threads */
static __thread struct emu_thread *self __attribute__((tls_model("initial-exec")));
static __thread int inside __attribute__((tls_model("initial-exec")));
static struct emu_thread *threads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_hart;

pid_t emu_gettid(void)
{
	return (pid_t)EMU_REAL(syscall)(SYS_gettid);
}

static struct emu_thread *find_or_add(pid_t tid)
{
	struct emu_thread *t;
	pthread_mutex_lock(&threads_lock);
	for (t = threads; t; t = t->next)
		if (t->tid == tid)
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		uint64_t *inj = calloc(emu_model()->nevents, sizeof(uint64_t));
		if (!t || !inj) {
			fprintf(stderr, "librvemu: out of memory\n");
			abort();
		}
		t->tid = tid;
		t->injected = inj;
		t->hart = next_hart++ % harts;
		t->next = threads;
		threads = t;
	}
	pthread_mutex_unlock(&threads_lock);
	return t;
}

struct emu_thread *emu_thread_self(void)
{
	if (!self) {
		emu_init();
		self = find_or_add(emu_gettid());
	}
	return self;
}

struct emu_thread *emu_thread_by_tid(pid_t tid)
{
	struct timespec ts;
	if (tid <= 0)
		return NULL;
	/* The kernel lets a process read the CPU clock of its own threads only: that is our test for
	 * "a thread of this process". */
	clockid_t cid = (clockid_t)((~(unsigned)tid << 3) | 6);
	if (clock_gettime(cid, &ts) != 0)
		return NULL;
	return find_or_add(tid);
}

static uint64_t cputime_ns(pid_t tid)
{
	struct timespec ts;
	clockid_t cid =
	    tid == emu_gettid() ? CLOCK_THREAD_CPUTIME_ID : (clockid_t)((~(unsigned)tid << 3) | 6);
	if (clock_gettime(cid, &ts) != 0)
		return UINT64_MAX; /* thread gone */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t emu_cycles_of(struct emu_thread *t)
{
	uint64_t c;
	if (clock_virtual) {
		c = __atomic_load_n(&t->vcycles, __ATOMIC_RELAXED);
	} else {
		uint64_t ns = cputime_ns(t->tid);
		if (ns == UINT64_MAX)
			return __atomic_load_n(&t->last_cycles, __ATOMIC_RELAXED);
		c = emu_ns_to_cycles(ns);
	}
	/* Monotonic even if two readers race. */
	uint64_t old = __atomic_load_n(&t->last_cycles, __ATOMIC_RELAXED);
	while (c > old &&
	       !__atomic_compare_exchange_n(&t->last_cycles, &old, c, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return c > old ? c : old;
}

unsigned emu_thread_hart(void)
{
	return emu_thread_self()->hart;
}

uint64_t emu_thread_cycles(void)
{
	return emu_cycles_of(emu_thread_self());
}

uint64_t emu_hart_cycles(unsigned hart)
{
	uint64_t sum = 0;
	pthread_mutex_lock(&threads_lock);
	for (struct emu_thread *t = threads; t; t = t->next)
		if (t->hart == hart)
			sum += emu_cycles_of(t);
	pthread_mutex_unlock(&threads_lock);
	return sum;
}

uint64_t emu_thread_context_switches(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

/* ------------------------------------------------------------------------------------------- lock */
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

void emu_lock(void)
{
	inside = 1;
	pthread_mutex_lock(&perf_lock);
}

void emu_unlock(void)
{
	pthread_mutex_unlock(&perf_lock);
	inside = 0;
	struct emu_thread *t = self;
	/* A sampling tick arrived while we held the lock: handle it now, at the PC it interrupted. */
	while (t && t->tick_pending) {
		t->tick_pending = 0;
		inside = 1;
		pthread_mutex_lock(&perf_lock);
		emu_ctx_sync(t, emu_cycles_of(t), t->tick_ip);
		emu_timer_rearm(t);
		pthread_mutex_unlock(&perf_lock);
		inside = 0;
	}
	emu_flush_signals();
}

/* fork: no emulator lock may be held across it, and the child's thread is a new task with its own clock
 * (events inherited through fds keep counting the parent's threads, as the kernel's do). */
static void atfork_prepare(void)
{
	emu_lock(); /* marks the thread inside: a sampling tick arriving now is deferred, not deadlocked */
	pthread_mutex_lock(&threads_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&threads_lock);
	emu_unlock(); /* and runs the ticks that arrived meanwhile */
}

/* The forked child's inherited events hand their counts to the parent's when the child exits. */
static void inherit_flush_at_exit(void)
{
	if (!self ||
	    inside) /* inside: _exit from a handler that interrupted the emulator; its lock is held */
		return;
	emu_lock();
	emu_inherit_flush(self);
	emu_unlock();
}

/* A child that leaves with _exit() or replaces itself with exec() hands its inherited counts over first
 * (exit() does it through atexit). After exec the new image starts a fresh emulator: what it counts is
 * not attributed to the parent's events. */
static void (*emu_real__exit)(int);
static void (*emu_real__Exit)(int);
static int (*emu_real_execve)(const char *, char *const[], char *const[]);
static int (*emu_real_execv)(const char *, char *const[]);
static int (*emu_real_execvp)(const char *, char *const[]);
static int (*emu_real_execvpe)(const char *, char *const[], char *const[]);

EMU_EXPORT void _exit(int status)
{
	inherit_flush_at_exit();
	EMU_REAL(_exit)(status);
	__builtin_unreachable();
}

EMU_EXPORT void _Exit(int status)
{
	inherit_flush_at_exit();
	EMU_REAL(_Exit)(status);
	__builtin_unreachable();
}

EMU_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	inherit_flush_at_exit();
	return EMU_REAL(execve)(path, argv, envp);
}

EMU_EXPORT int execv(const char *path, char *const argv[])
{
	inherit_flush_at_exit();
	return EMU_REAL(execv)(path, argv);
}

EMU_EXPORT int execvp(const char *file, char *const argv[])
{
	inherit_flush_at_exit();
	return EMU_REAL(execvp)(file, argv);
}

EMU_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	inherit_flush_at_exit();
	return EMU_REAL(execvpe)(file, argv, envp);
}

static void atfork_child(void)
{
	struct emu_thread *parent = self; /* the forking thread's record, as copied into the child */
	pthread_mutex_unlock(&threads_lock);
	pthread_mutex_unlock(&perf_lock);
	self = NULL;
	inside = 0;
	if (!parent || !parent->ctx.groups)
		return;
	struct emu_thread *child = emu_thread_self();
	emu_lock();
	emu_inherit_fork_child(parent, child);
	emu_unlock();
	static int registered; /* per process: the child's copy of this flag is 0 unless it forked before */
	if (!registered && atexit(inherit_flush_at_exit) == 0)
		registered = 1;
}

int emu_in_emulator(void)
{
	return inside;
}

/* ------------------------------------------------------------------------------------ control API */
EMU_EXPORT int rvemu_api_version(void)
{
	return RVEMU_API_VERSION;
}

EMU_EXPORT const char *rvemu_model_name(void)
{
	return emu_model()->model;
}

void emu_advance_self(uint64_t cycles, uint64_t ip)
{
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	uint64_t now = __atomic_add_fetch(&t->vcycles, cycles, __ATOMIC_RELAXED);
	emu_ctx_sync(t, now, ip);
	emu_unlock();
}

EMU_EXPORT int rvemu_advance(uint64_t cycles)
{
	if (!emu_clock_is_virtual())
		return -1;
	emu_advance_self(cycles, (uint64_t)(uintptr_t)__builtin_return_address(0));
	return 0;
}

EMU_EXPORT int rvemu_inject(const char *event, uint64_t count)
{
	int idx = event ? emu_model_event_index(event) : -1;
	if (idx < 0)
		return -1;
	struct emu_thread *t = emu_thread_self();
	uint64_t ip = (uint64_t)(uintptr_t)__builtin_return_address(0);
	emu_lock();
	emu_ctx_sync(t, emu_cycles_of(t), ip);
	t->injected[idx] += count;
	emu_ctx_inject(t, idx, count, ip);
	emu_unlock();
	return 0;
}

static uint64_t truth_of(struct emu_thread *t, uint64_t cycles, size_t idx)
{
	return emu_scale(cycles, emu_model()->events[idx].ppb) + t->injected[idx];
}

EMU_EXPORT int rvemu_truth(const char *event, uint64_t *count)
{
	int idx = event ? emu_model_event_index(event) : -1;
	if (idx < 0 || !count)
		return -1;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	*count = truth_of(t, emu_cycles_of(t), (size_t)idx);
	emu_unlock();
	return 0;
}

EMU_EXPORT int rvemu_truth_raw(uint64_t mhpmevent, uint64_t *count)
{
	uint64_t set;
	if (!count || emu_decode_raw(mhpmevent, &set) != 0)
		return -1;
	struct emu_thread *t = emu_thread_self();
	emu_lock();
	uint64_t c = emu_cycles_of(t), sum = 0;
	for (size_t i = 0; i < 64; i++)
		if (set & (1ull << i))
			sum += truth_of(t, c, i);
	*count = sum;
	emu_unlock();
	return 0;
}

EMU_EXPORT uint64_t rvemu_thread_cycles(void)
{
	return emu_thread_cycles();
}

EMU_EXPORT void rvemu_get_stats(struct rvemu_stats *out)
{
	if (!out)
		return;
	uint64_t *dst = (uint64_t *)out;
	const uint64_t *src = (const uint64_t *)&emu_stats;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

EMU_EXPORT void rvemu_reset_stats(void)
{
	uint64_t *s = (uint64_t *)&emu_stats;
	for (size_t i = 0; i < sizeof(emu_stats) / sizeof(uint64_t); i++)
		__atomic_store_n(&s[i], 0, __ATOMIC_RELAXED);
}
