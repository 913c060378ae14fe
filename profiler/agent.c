/* SPDX-License-Identifier: MIT */
/* librvprof-agent.so: what rvprof preloads into the profiled program (prof_shm.h for the protocol).
 *
 * In the process the front end started (RVPROF_PID), a constructor creates a PAPI EventSet with the chosen
 * event and samples it with librvsample in the main thread; pthread_create is interposed so every new thread
 * does the same. Records arrive in signal-handler context (rvsample's on_batch): they are copied into the
 * thread's own ring, and a flusher thread moves them to the sample file (rvsample writer) whenever a ring is
 * half full, and at the end. A thread's sampler is stopped (which drains what the kernel still holds) when
 * the thread ends, and the calling thread's at exit(); then the file gets the mappings and is closed.
 *
 * The flusher is a thread of the program's own, so it must never keep the program alive: glibc ends the
 * process when its last thread ends, and the flusher would always be left. When main has called
 * pthread_exit and every other thread has ended, the flusher ends the process as glibc would (exit(0)). */
#include "prof_shm.h"
#include "rvsample.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <papi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT         __attribute__((visibility("default")))
#define RING_SIZE      4096u /* records per thread between flushes */
#define WRITE_MAX      256u
#define ALONE_CHECK_MS 100 /* how often the flusher looks whether it is the last thread left */

struct ring {
	struct rvsample_record *rec;
	uint64_t head, tail; /* head: the signal handler (producer); tail: the flusher (consumer) */
	uint64_t overflow;   /* records that found the ring full */
	uint32_t tid;        /* the thread it belongs to (throttle marks carry it) */
	int in_stop;         /* its sampler is stopping: records now come from the final drain */
	int finished;        /* the thread is done: free once drained */
	struct ring *next;
};

struct thread_state {
	rvsample_t *sampler;
	int eventset;
	struct ring *ring;
};

static struct rvprof_shm *shm;
/* The agent's own counts: the page is in the program's reach and may be overwritten; these are written to it
 * as they change, and all again at exit. */
static struct rvprof_shm mine;
static int active;
static pid_t owner_pid;
static char event_name[PAPI_MAX_STR_LEN];
static uint64_t threshold;
static int precise_req = -1; /* -1: auto */
static int precise_use;
static int stacks;
static char out_path[4096];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* rings list and writer */
static struct ring *rings;
static rvsample_writer_t *writer;
static int write_error;
static sem_t wake;
static pthread_t flusher;
static int flusher_running;
static volatile int stopping;
static __thread struct thread_state self = {NULL, PAPI_NULL, NULL};

/* Adds n to a count: the agent's own, then the page's copy of it. */
#define COUNT(field, n)                                                                                      \
	do {                                                                                                 \
		uint64_t v_ = __atomic_add_fetch(&mine.field, (n), __ATOMIC_RELAXED);                        \
		__atomic_store_n(&shm->field, v_, __ATOMIC_RELAXED);                                         \
	} while (0)
#define COUNT32(field, n)                                                                                    \
	do {                                                                                                 \
		int32_t v_ = __atomic_add_fetch(&mine.field, (n), __ATOMIC_RELAXED);                         \
		__atomic_store_n(&shm->field, v_, __ATOMIC_RELAXED);                                         \
	} while (0)

static void shm_message(const char *fmt, ...)
{
	if (!shm || mine.message[0])
		return; /* the first reason is the one that matters */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(mine.message, sizeof(mine.message), fmt, ap);
	va_end(ap);
	memcpy(shm->message, mine.message, sizeof(shm->message));
}

/* At exit: the page gets every count again (the program may have written over it), the state last. */
static void publish(int state)
{
	if (shm->magic != RVPROF_SHM_MAGIC || shm->version != RVPROF_SHM_VERSION ||
	    shm->precise != mine.precise || shm->precise_refused != mine.precise_refused ||
	    shm->threads != mine.threads || shm->children != mine.children ||
	    memcmp(shm->message, mine.message, sizeof(mine.message)) != 0)
		mine.overwritten = 1;
	struct rvprof_shm copy = mine;
	copy.magic = RVPROF_SHM_MAGIC;
	copy.version = RVPROF_SHM_VERSION;
	copy.state = RVPROF_RUNNING;
	memcpy(shm, &copy, sizeof(copy));
	__atomic_store_n(&shm->state, state, __ATOMIC_RELEASE);
}

/* The constructor cannot sample: say why (the front end prints it) and stop the program before it runs. */
static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (shm) {
		snprintf(shm->message, sizeof(shm->message), "%s", msg);
		__atomic_store_n(&shm->state, RVPROF_FAILED, __ATOMIC_RELEASE);
	} else {
		fprintf(stderr, "rvprof agent: %s\n", msg);
	}
	_exit(RVPROF_AGENT_EXIT);
}

/* ------------------------------------------------------------------------------------ records */
/* rvsample's on_batch: signal-handler context in the sampled thread (or its own drain at stop). Copies into
 * the thread's ring; wakes the flusher (sem_post is async-signal-safe) when the ring is half full. */
static size_t ring_put(struct ring *r, const struct rvsample_record *records, size_t n)
{
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	size_t copied = 0;
	for (size_t i = 0; i < n; i++) {
		if (r->head - tail >= RING_SIZE) {
			r->overflow += n - i;
			break;
		}
		r->rec[r->head % RING_SIZE] = records[i];
		__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
		copied++;
	}
	if (r->head - tail >= RING_SIZE / 2)
		sem_post(&wake);
	return copied;
}

static void on_batch(const struct rvsample_record *records, size_t n, void *arg)
{
	struct ring *r = arg;
	size_t copied = ring_put(r, records, n);
	COUNT(samples, copied);
	if (r->in_stop)
		COUNT(at_stop, copied);
	else
		COUNT(batches, 1);
}

/* rvsample's on_throttle (same context as on_batch): a mark in the thread's ring, so the front end can show
 * the interval and write PERF_RECORD_THROTTLE/UNTHROTTLE where it happened among the samples. */
static void on_throttle(int throttled, uint64_t time_ns, void *arg)
{
	struct ring *r = arg;
	struct rvsample_record mark;
	memset(&mark, 0, offsetof(struct rvsample_record, values));
	mark.time_ns = time_ns;
	mark.pid = (uint32_t)owner_pid;
	mark.tid = r->tid;
	mark.flags = throttled ? RVPROF_REC_THROTTLE : RVPROF_REC_UNTHROTTLE;
	ring_put(r, &mark, 1);
}

/* Moves what a ring holds to the file. Called with `lock` held. */
static void drain_ring(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	while (r->tail != head) {
		uint64_t n = head - r->tail, at = r->tail % RING_SIZE;
		if (n > RING_SIZE - at)
			n = RING_SIZE - at; /* up to the end of the array */
		if (n > WRITE_MAX)
			n = WRITE_MAX;
		if (writer && !write_error) {
			int rc = rvsample_writer_add(writer, &r->rec[at], (size_t)n);
			if (rc < 0) {
				write_error = rc;
				shm_message("writing the sample file failed: %s", rvsample_strerror(rc));
			} else {
				COUNT(written, n);
			}
		}
		__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
	}
}

static void drain_all(void)
{
	pthread_mutex_lock(&lock);
	for (struct ring **p = &rings; *p;) {
		struct ring *r = *p;
		drain_ring(r);
		if (r->finished) {
			COUNT(dropped, r->overflow);
			*p = r->next;
			munmap(r->rec, RING_SIZE * sizeof(*r->rec));
			free(r);
		} else {
			p = &r->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* 1 when the task's /proc stat file says it has ended (zombie or dead); 0 when it runs, or is gone. */
static int task_ended(const char *stat_path)
{
	char buf[512];
	FILE *f = fopen(stat_path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* "tid (comm) S ...": comm may hold anything */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* 1 when every thread of the process but the calling one has ended. Only possible once main has called
 * pthread_exit (the leader then stays listed as a zombie until the whole process ends), so that is looked at
 * first: one small read while main runs. */
static int last_thread_left(void)
{
	if (!task_ended("/proc/self/stat"))
		return 0;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0; /* cannot tell: keep waiting, as before */
	long me = (long)syscall(SYS_gettid), leader = (long)getpid();
	int others = 0;
	struct dirent *e;
	while (!others && (e = readdir(d))) {
		long tid = strtol(e->d_name, NULL, 10);
		if (tid <= 0 || tid == me || tid == leader)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
		if (access(path, F_OK) == 0 && !task_ended(path))
			others = 1;
	}
	closedir(d);
	return !others;
}

static void *flusher_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the program's threads */
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += ALONE_CHECK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		int rc = sem_timedwait(&wake, &until);
		if (rc != 0 && errno == EINTR)
			continue;
		drain_all();
		/* main called pthread_exit and every other thread has ended: glibc would now end the process
		 * with exit(0) from the last thread; we are that thread. */
		if (rc != 0 && errno == ETIMEDOUT && !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) &&
		    last_thread_left())
			exit(0);
	}
	return NULL;
}

/* ------------------------------------------------------------------------------- per thread */
static unsigned long thread_id(void)
{
	return (unsigned long)syscall(SYS_gettid);
}

static struct ring *ring_new(void)
{
	struct ring *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->rec = mmap(NULL, RING_SIZE * sizeof(*r->rec), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	              -1, 0);
	if (r->rec == MAP_FAILED) {
		free(r);
		return NULL;
	}
	pthread_mutex_lock(&lock);
	r->next = rings;
	rings = r;
	pthread_mutex_unlock(&lock);
	return r;
}

/* Starts sampling in the calling thread with level `precise`; returns an RVSAMPLE_* code (0 on success) and,
 * on failure, writes the reason into `why`. */
static int thread_start_level(int precise, char *why, size_t len)
{
	struct thread_state *t = &self;
	t->eventset = PAPI_NULL;
	int rc = PAPI_create_eventset(&t->eventset);
	if (rc != PAPI_OK) {
		snprintf(why, len, "PAPI_create_eventset: %s", PAPI_strerror(rc));
		return RVSAMPLE_EPAPI;
	}
	int code;
	rc = PAPI_event_name_to_code(event_name, &code);
	if (rc != PAPI_OK) {
		snprintf(why, len,
		         "event %s: no such event on this machine (PAPI: %s); papi_avail and "
		         "papi_native_avail list "
		         "the events",
		         event_name, PAPI_strerror(rc));
		PAPI_destroy_eventset(&t->eventset);
		return RVSAMPLE_ENOEVENT;
	}
	rc = PAPI_add_event(t->eventset, code);
	if (rc != PAPI_OK) {
		snprintf(why, len, "event %s: PAPI_add_event: %s", event_name, PAPI_strerror(rc));
		PAPI_destroy_eventset(&t->eventset);
		return RVSAMPLE_EPAPI;
	}
	struct rvsample_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sampling_event = 0;
	cfg.threshold = threshold;
	cfg.precise = precise;
	cfg.mode = stacks ? RVSAMPLE_STACKS : RVSAMPLE_BATCH;
	cfg.on_batch = on_batch;
	cfg.on_throttle = on_throttle;
	cfg.arg = t->ring;
	rc = rvsample_init(&t->sampler, t->eventset, &cfg);
	if (rc == 0) {
		rc = rvsample_start(t->sampler);
		if (rc < 0) {
			rvsample_destroy(t->sampler);
			t->sampler = NULL;
		}
	}
	if (rc < 0) {
		snprintf(why, len, "sampling %s every %llu events%s: %s", event_name,
		         (unsigned long long)threshold, precise ? " (precise)" : "", rvsample_strerror(rc));
		PAPI_cleanup_eventset(t->eventset);
		PAPI_destroy_eventset(&t->eventset);
		t->sampler = NULL;
	}
	return rc;
}

static int thread_start(char *why, size_t len)
{
	if (PAPI_register_thread() != PAPI_OK) {
		snprintf(why, len, "PAPI_register_thread failed");
		return RVSAMPLE_EPAPI;
	}
	self.ring = ring_new();
	if (!self.ring) {
		snprintf(why, len, "out of memory");
		return RVSAMPLE_ESYS;
	}
	self.ring->tid = (uint32_t)thread_id();
	return thread_start_level(precise_use, why, len);
}

static void thread_stop(void)
{
	struct thread_state *t = &self;
	if (!t->sampler)
		return;
	if (t->ring)
		t->ring->in_stop = 1;
	rvsample_stop(t->sampler); /* the last records go through on_batch */
	struct rvsample_stats st;
	if (rvsample_get_stats(t->sampler, &st) == 0) {
		COUNT(interrupts, st.interrupts);
		COUNT(lost, st.lost);
		COUNT(dropped, st.dropped);
		COUNT(throttled, st.throttled);
		COUNT(exact, st.exact);
	}
	rvsample_destroy(t->sampler);
	t->sampler = NULL;
	PAPI_cleanup_eventset(t->eventset);
	PAPI_destroy_eventset(&t->eventset);
	if (t->ring) {
		__atomic_store_n(&t->ring->finished, 1, __ATOMIC_RELEASE);
		t->ring = NULL;
	}
	sem_post(&wake);
}

/* ------------------------------------------------------------------------- pthread_create */
struct start_arg {
	void *(*fn)(void *);
	void *arg;
};

static void thread_cleanup(void *unused)
{
	(void)unused;
	thread_stop();
	PAPI_unregister_thread();
}

static void *thread_main(void *p)
{
	struct start_arg a = *(struct start_arg *)p;
	free(p);
	char why[512];
	if (thread_start(why, sizeof(why)) == 0) {
		COUNT32(threads, 1);
	} else {
		COUNT32(threads_failed, 1);
		shm_message("a thread could not be sampled: %s", why);
		if (self.ring) {
			__atomic_store_n(&self.ring->finished, 1, __ATOMIC_RELEASE);
			self.ring = NULL;
		}
	}
	void *ret;
	pthread_cleanup_push(thread_cleanup, NULL);
	ret = a.fn(a.arg);
	pthread_cleanup_pop(1);
	return ret;
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static pthread_create_fn next;
	if (!next)
		next = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!next)
		return EAGAIN;
	if (!active || getpid() != owner_pid)
		return next(thread, attr, fn, arg);
	struct start_arg *a = malloc(sizeof(*a));
	if (!a)
		return EAGAIN;
	a->fn = fn;
	a->arg = arg;
	int rc = next(thread, attr, thread_main, a);
	if (rc != 0)
		free(a);
	return rc;
}

/* A thread that calls pthread_exit keeps its last records: main's sampler is stopped here (the threads the
 * agent started stop theirs in thread_cleanup, which pthread_exit runs; stopping twice does nothing). */
typedef void (*pthread_exit_fn)(void *);

EXPORT void pthread_exit(void *ret)
{
	pthread_exit_fn next = (pthread_exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
	if (active && getpid() == owner_pid)
		thread_stop();
	if (next)
		next(ret);
	/* no pthread_exit to call (cannot happen with glibc): end the thread as the kernel would */
	for (;;)
		syscall(SYS_exit, 0);
}

/* -------------------------------------------------------------------------- load and exit */
static void at_exit(void)
{
	if (!active || getpid() != owner_pid)
		return;
	active = 0;
	thread_stop(); /* the thread calling exit(); others still running keep what reached the file */
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	if (flusher_running && !pthread_equal(pthread_self(), flusher)) {
		sem_post(&wake);
		pthread_join(flusher, NULL);
	}
	drain_all();
	pthread_mutex_lock(&lock);
	int rc = rvsample_writer_add_maps(writer);
	int rc2 = rvsample_writer_close(writer);
	writer = NULL;
	pthread_mutex_unlock(&lock);
	if (rc < 0 || rc2 < 0) {
		shm_message("writing the sample file failed: %s", rvsample_strerror(rc < 0 ? rc : rc2));
		write_error = rc < 0 ? rc : rc2;
	}
	publish(write_error ? RVPROF_FAILED : RVPROF_DONE);
}

/* fork: the lock is held across it, so the child's copy of the rings and writer is not caught half-way
 * (the writer buffers nothing a child could write again). A child is not profiled: it is counted, and its
 * copy of the agent stays inactive (its exit writes nothing). */
static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void parent_after_fork(void)
{
	pthread_mutex_unlock(&lock);
	if (active && getpid() == owner_pid)
		COUNT32(children, 1);
}

static void child_after_fork(void)
{
	pthread_mutex_unlock(&lock);
	active = 0;
	flusher_running = 0; /* the flusher thread was not copied */
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* A descriptor number from the environment, or -1. */
static int env_fd(const char *name)
{
	const char *v = env(name);
	char *end;
	errno = 0;
	long fd = v ? strtol(v, &end, 10) : -1;
	return v && !errno && !*end && fd >= 0 && fd < 1 << 20 ? (int)fd : -1;
}

__attribute__((constructor)) static void agent_init(void)
{
	const char *pid_s = env(RVPROF_ENV_PID);
	if (!pid_s || strtol(pid_s, NULL, 10) != (long)getpid())
		return; /* not the process rvprof started (a child it ran, or no rvprof at all) */
	/* A program that execs keeps its pid: the image it runs must not take over (and truncate) the sample
	 * file. Programs it executes are not sampled, as documented. */
	unsetenv(RVPROF_ENV_PID);
	owner_pid = getpid();
	int shm_fd = env_fd(RVPROF_ENV_SHM), out_fd = env_fd(RVPROF_ENV_OUT);
	unsetenv(RVPROF_ENV_SHM);
	unsetenv(RVPROF_ENV_OUT);
	if (shm_fd < 0)
		fail("%s: not a descriptor number (rvprof sets it)", RVPROF_ENV_SHM);
	void *m = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	int map_errno = errno;
	close(shm_fd); /* the program does not see rvprof's descriptors */
	if (m == MAP_FAILED)
		fail("cannot map the state file (descriptor %d): %s", shm_fd, strerror(map_errno));
	shm = m;
	if (shm->magic != RVPROF_SHM_MAGIC || shm->version != RVPROF_SHM_VERSION)
		fail("descriptor %d is not an rvprof state file of this version", shm_fd);
	mine = *shm;
	if (out_fd < 0)
		fail("%s: not a descriptor number (rvprof sets it)", RVPROF_ENV_OUT);
	/* the sample file has no name: the writer opens it again through /proc (its own descriptor,
	 * O_CLOEXEC) */
	snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out_fd);

	const char *ev = env(RVPROF_ENV_EVENT), *th = env(RVPROF_ENV_THRESHOLD),
	           *pr = env(RVPROF_ENV_PRECISE), *st = env(RVPROF_ENV_STACKS);
	if (!ev || !th)
		fail("incomplete environment: %s and %s must be set", RVPROF_ENV_EVENT, RVPROF_ENV_THRESHOLD);
	snprintf(event_name, sizeof(event_name), "%s", ev);
	char *end;
	errno = 0;
	threshold = strtoull(th, &end, 10);
	if (errno || *end || threshold == 0)
		fail("%s=%s: not a positive number", RVPROF_ENV_THRESHOLD, th);
	if (!pr || strcmp(pr, "auto") == 0)
		precise_req = -1;
	else if (pr[0] >= '0' && pr[0] <= '3' && !pr[1])
		precise_req = pr[0] - '0';
	else
		fail("%s=%s: auto or 0-3", RVPROF_ENV_PRECISE, pr);
	stacks = st && strcmp(st, "1") == 0;

	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT)
		fail("PAPI_library_init: %s", rc > 0 ? "version mismatch" : PAPI_strerror(rc));
	rc = PAPI_thread_init(thread_id);
	if (rc != PAPI_OK)
		fail("PAPI_thread_init: %s", PAPI_strerror(rc));
	if (sem_init(&wake, 0, 0) != 0)
		fail("sem_init: %s", strerror(errno));

	/* the main thread: the precise level asked for, or by default 2 and, if the PMU refuses, 0 */
	char why[512];
	self.ring = ring_new();
	if (!self.ring)
		fail("out of memory");
	self.ring->tid = (uint32_t)thread_id();
	precise_use = precise_req < 0 ? 2 : precise_req;
	rc = thread_start_level(precise_use, why, sizeof(why));
	if (rc == RVSAMPLE_ENOTSUP && precise_req < 0) {
		shm->precise_refused = mine.precise_refused = 1;
		precise_use = 0;
		rc = thread_start_level(precise_use, why, sizeof(why));
	}
	if (rc < 0)
		fail("%s", why);
	shm->precise = mine.precise = precise_use;
	shm->threads = mine.threads = 1;

	struct rvsample_file_info info;
	memset(&info, 0, sizeof(info));
	info.nevents = 1;
	snprintf(info.events[0], sizeof(info.events[0]), "%s", event_name);
	info.sampling_event = 0;
	info.threshold = threshold;
	info.precise = precise_use;
	info.mode = stacks ? RVSAMPLE_STACKS : RVSAMPLE_BATCH;
	rc = rvsample_writer_open(&writer, out_path, &info);
	close(out_fd);
	if (rc < 0)
		fail("cannot write the sample file: %s", rvsample_strerror(rc));
	if (pthread_atfork(before_fork, parent_after_fork, child_after_fork) != 0 || atexit(at_exit) != 0)
		fail("cannot register the exit handler");
	pthread_create_fn next = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!next || next(&flusher, NULL, flusher_main, NULL) != 0)
		fail("cannot start the flusher thread");
	flusher_running = 1;
	active = 1;
	__atomic_store_n(&shm->state, RVPROF_RUNNING, __ATOMIC_RELEASE);
}
