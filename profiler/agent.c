/* SPDX-License-Identifier: MIT */
/* librvprof-agent.so: what rvprof preloads into the profiled program (prof_shm.h for the protocol).
 *
 * In the process the front end started (RVPROF_PID), a constructor creates a PAPI EventSet with the chosen
 * event and samples it with librvsample in the main thread; pthread_create is interposed so every new thread
 * does the same. Records arrive in signal-handler context (rvsample's on_batch): they are copied into the
 * thread's own ring, and a flusher thread moves them to the sample file (rvsample writer) whenever a ring is
 * half full, and at the end. A thread's sampler is stopped (which drains what the kernel still holds) when
 * the thread ends, and the calling thread's at exit(); then the file gets the mappings and is closed. */
#include "prof_shm.h"
#include "rvsample.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <papi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT    __attribute__((visibility("default")))
#define RING_SIZE 4096u /* records per thread between flushes */
#define WRITE_MAX 256u

struct ring {
	struct rvsample_record *rec;
	uint64_t head, tail; /* head: the signal handler (producer); tail: the flusher (consumer) */
	uint64_t overflow;   /* records that found the ring full */
	int finished;        /* the thread is done: free once drained */
	struct ring *next;
};

struct thread_state {
	rvsample_t *sampler;
	int eventset;
	struct ring *ring;
};

static struct rvprof_shm *shm;
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

static void shm_add(uint64_t *field, uint64_t n)
{
	__atomic_add_fetch(field, n, __ATOMIC_RELAXED);
}

static void shm_message(const char *fmt, ...)
{
	if (!shm || shm->message[0])
		return; /* the first reason is the one that matters */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(shm->message, sizeof(shm->message), fmt, ap);
	va_end(ap);
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
static void on_batch(const struct rvsample_record *records, size_t n, void *arg)
{
	struct ring *r = arg;
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
	shm_add(&shm->samples, copied);
	shm_add(&shm->batches, 1);
	if (r->head - tail >= RING_SIZE / 2)
		sem_post(&wake);
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
				shm_message("writing the samples to %s failed: %s", out_path,
				            rvsample_strerror(rc));
			} else {
				shm_add(&shm->written, n);
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
			shm_add(&shm->dropped, r->overflow);
			*p = r->next;
			munmap(r->rec, RING_SIZE * sizeof(*r->rec));
			free(r);
		} else {
			p = &r->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

static void *flusher_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the program's threads */
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		while (sem_wait(&wake) != 0 && errno == EINTR)
			;
		drain_all();
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
	return thread_start_level(precise_use, why, len);
}

static void thread_stop(void)
{
	struct thread_state *t = &self;
	if (!t->sampler)
		return;
	rvsample_stop(t->sampler); /* the last records go through on_batch */
	struct rvsample_stats st;
	if (rvsample_get_stats(t->sampler, &st) == 0) {
		shm_add(&shm->interrupts, st.interrupts);
		shm_add(&shm->lost, st.lost);
		shm_add(&shm->dropped, st.dropped);
		shm_add(&shm->throttled, st.throttled);
		shm_add(&shm->exact, st.exact);
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
		__atomic_add_fetch(&shm->threads, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&shm->threads_failed, 1, __ATOMIC_RELAXED);
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

/* -------------------------------------------------------------------------- load and exit */
static void at_exit(void)
{
	if (!active || getpid() != owner_pid)
		return;
	active = 0;
	thread_stop(); /* the thread calling exit(); others still running keep what reached the file */
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	if (flusher_running) {
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
		shm_message("writing the samples to %s failed: %s", out_path,
		            rvsample_strerror(rc < 0 ? rc : rc2));
		write_error = rc < 0 ? rc : rc2;
	}
	__atomic_store_n(&shm->state, write_error ? RVPROF_FAILED : RVPROF_DONE, __ATOMIC_RELEASE);
}

static void child_after_fork(void)
{
	active = 0; /* a forked child is not profiled (its copy of the state must not write the file) */
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

__attribute__((constructor)) static void agent_init(void)
{
	const char *pid_s = env(RVPROF_ENV_PID), *shm_path = env(RVPROF_ENV_SHM);
	if (!pid_s || !shm_path || strtol(pid_s, NULL, 10) != (long)getpid())
		return; /* not the process rvprof started (a child it ran, or no rvprof at all) */
	/* A program that execs keeps its pid: the image it runs must not take over (and truncate) the sample
	 * file. Programs it executes are not sampled, as documented. */
	unsetenv(RVPROF_ENV_PID);
	owner_pid = getpid();
	int fd = open(shm_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fail("cannot open %s: %s", shm_path, strerror(errno));
	void *m = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		fail("cannot map %s: %s", shm_path, strerror(errno));
	shm = m;
	if (shm->magic != RVPROF_SHM_MAGIC || shm->version != RVPROF_SHM_VERSION)
		fail("%s is not an rvprof state file of this version", shm_path);

	const char *ev = env(RVPROF_ENV_EVENT), *th = env(RVPROF_ENV_THRESHOLD),
	           *pr = env(RVPROF_ENV_PRECISE), *st = env(RVPROF_ENV_STACKS), *out = env(RVPROF_ENV_OUT);
	if (!ev || !th || !out)
		fail("incomplete environment: %s, %s and %s must be set", RVPROF_ENV_EVENT,
		     RVPROF_ENV_THRESHOLD, RVPROF_ENV_OUT);
	snprintf(event_name, sizeof(event_name), "%s", ev);
	snprintf(out_path, sizeof(out_path), "%s", out);
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
	precise_use = precise_req < 0 ? 2 : precise_req;
	rc = thread_start_level(precise_use, why, sizeof(why));
	if (rc == RVSAMPLE_ENOTSUP && precise_req < 0) {
		shm->precise_refused = 1;
		precise_use = 0;
		rc = thread_start_level(precise_use, why, sizeof(why));
	}
	if (rc < 0)
		fail("%s", why);
	shm->precise = precise_use;
	shm->threads = 1;

	struct rvsample_file_info info;
	memset(&info, 0, sizeof(info));
	info.nevents = 1;
	snprintf(info.events[0], sizeof(info.events[0]), "%s", event_name);
	info.sampling_event = 0;
	info.threshold = threshold;
	info.precise = precise_use;
	info.mode = stacks ? RVSAMPLE_STACKS : RVSAMPLE_BATCH;
	rc = rvsample_writer_open(&writer, out_path, &info);
	if (rc < 0)
		fail("cannot write the samples to %s: %s", out_path, rvsample_strerror(rc));
	if (pthread_atfork(NULL, NULL, child_after_fork) != 0 || atexit(at_exit) != 0)
		fail("cannot register the exit handler");
	pthread_create_fn next = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!next || next(&flusher, NULL, flusher_main, NULL) != 0)
		fail("cannot start the flusher thread");
	flusher_running = 1;
	active = 1;
	__atomic_store_n(&shm->state, RVPROF_RUNNING, __ATOMIC_RELEASE);
}
