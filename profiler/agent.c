/* SPDX-License-Identifier: MIT */
/* librvprof-agent.so: what rvprof preloads into the profiled program (prof_shm.h for the protocol).
 *
 * In every process image it samples (the program rvprof started; with RVPROF_INHERIT=1, as `perf record`
 * does, also every child a sampled image forks and every program exec'd or spawned below it), the agent
 * creates the image's state page and sample file, sends them to rvprof over its socket, creates a PAPI
 * EventSet with the chosen event and samples it with librvsample in the image's first thread;
 * pthread_create is interposed so every new thread does the same. A forked child starts its own sampling
 * when the interposed fork() returns in it (its copies of the parent's samplers, rings, page and writer are
 * forgotten: they belong to the parent); an exec'd image in the constructor. exec* is interposed so the
 * image's file is complete before the process becomes another program.
 *
 * Records arrive in signal-handler context (rvsample's on_batch): they are copied into the thread's own ring,
 * and a flusher thread moves them to the sample file (rvsample writer) whenever a ring is half full, and at
 * the end. A thread's sampler is stopped (which drains what the kernel still holds) when the thread ends, and
 * the calling thread's at exit(); then the file gets the mappings and is closed.
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
#include <sys/socket.h>
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
static int inherit;      /* follow forked children and exec'd programs */
static int sock_fd = -1; /* to rvprof: every image sends its two files there */
static long front_pid;   /* rvprof's pid: the socket's peer */
static char tmp_dir[4096];
static pid_t forking_tid; /* the thread that is forking (the child's ptid) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* rings list and writer */
static struct ring *rings;
static rvsample_writer_t *writer;
static int write_error;
static sem_t wake;
static pthread_t flusher;
static int flusher_running;
static volatile int stopping;
static volatile int flusher_pause; /* the flusher ends (fork: see there), to be started again */
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
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&flusher_pause, __ATOMIC_ACQUIRE)) {
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
/* The end of the image: its last thread's sampler stopped, every ring written, the mappings, the file closed
 * and the page's final state. At exit(), and before exec* (`by_exec`). */
static void image_finish(int by_exec)
{
	if (!active || getpid() != owner_pid)
		return;
	active = 0;
	thread_stop(); /* the calling thread; others still running keep what reached the file */
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	if (flusher_running && !pthread_equal(pthread_self(), flusher)) {
		sem_post(&wake);
		pthread_join(flusher, NULL);
	}
	flusher_running = 0;
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
	mine.exec_end = by_exec;
	publish(write_error ? RVPROF_FAILED : RVPROF_DONE);
}

static void at_exit(void)
{
	image_finish(0);
}

/* A file with no name for this image: in rvprof's TMPDIR (O_TMPFILE), else in memory (memfd). -1 and errno
 * on failure. */
static int unnamed_file(void)
{
	int fd = tmp_dir[0] ? open(tmp_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (fd < 0)
		fd = (int)syscall(SYS_memfd_create, "rvprof", 1u /* MFD_CLOEXEC */);
	return fd;
}

/* 1 when sock_fd is still rvprof's socket: a Unix socket of our type whose peer is rvprof (a program may
 * close the descriptor, and its number may then name another socket: nothing must be sent there). */
static int socket_is_rvprofs(void)
{
	int type = 0;
	socklen_t len = sizeof(type);
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	return sock_fd >= 0 && getsockopt(sock_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_SEQPACKET && getsockopt(sock_fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) == 0 &&
	       (long)peer.pid == front_pid;
}

/* The image's state page and sample file, created and sent to rvprof (the page first filled in: who this
 * image is). Returns the sample file's descriptor, or -1 with the reason in `why`. */
static int image_files(int how, pid_t ptid, char *why, size_t len)
{
	if (!socket_is_rvprofs()) {
		snprintf(why, len, "descriptor %d (%s) is no longer rvprof's socket: the program closed it",
		         sock_fd, RVPROF_ENV_SOCK);
		return -1;
	}
	int shm_fd = unnamed_file(), out_fd = unnamed_file();
	if (shm_fd < 0 || out_fd < 0) {
		snprintf(why, len, "cannot create the state and sample files in %.256s: %s", tmp_dir,
		         strerror(errno));
		goto fail;
	}
	if (ftruncate(shm_fd, sizeof(*shm)) != 0) {
		snprintf(why, len, "cannot size the state file: %s", strerror(errno));
		goto fail;
	}
	void *m = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (m == MAP_FAILED) {
		snprintf(why, len, "cannot map the state file: %s", strerror(errno));
		goto fail;
	}
	shm = m;
	memset(&mine, 0, sizeof(mine));
	mine.magic = RVPROF_SHM_MAGIC;
	mine.version = RVPROF_SHM_VERSION;
	mine.pid = (int32_t)getpid();
	mine.ppid = (int32_t)getppid();
	mine.ptid = (int32_t)ptid;
	mine.how = how;
	FILE *c = fopen("/proc/self/comm", "re");
	if (c) {
		if (fgets(mine.comm, sizeof(mine.comm), c))
			mine.comm[strcspn(mine.comm, "\n")] = 0;
		fclose(c);
	}
	memcpy(shm, &mine, sizeof(mine));
	/* one message: the pid, and the page's and the sample file's descriptors */
	int fds[2] = {shm_fd, out_fd};
	char ctl[CMSG_SPACE(sizeof(fds))];
	uint32_t pid = (uint32_t)getpid();
	struct iovec iov = {&pid, sizeof(pid)};
	struct msghdr msg;
	memset(&msg, 0, sizeof(msg));
	memset(ctl, 0, sizeof(ctl));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	ssize_t sent;
	while ((sent = sendmsg(sock_fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (sent != (ssize_t)sizeof(pid)) {
		snprintf(why, len, "cannot send the files to rvprof (descriptor %d): %s", sock_fd,
		         sent < 0 ? strerror(errno) : "short write");
		munmap(shm, sizeof(*shm));
		shm = NULL;
		goto fail;
	}
	close(shm_fd); /* mapped; rvprof has its own */
	return out_fd;
fail:
	if (shm_fd >= 0)
		close(shm_fd);
	if (out_fd >= 0)
		close(out_fd);
	return -1;
}

static int start_flusher(void)
{
	pthread_create_fn next = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!next || next(&flusher, NULL, flusher_main, NULL) != 0)
		return -1;
	flusher_running = 1;
	return 0;
}

/* Sampling for this image, in the calling thread (its only one): files sent, sampler started, writer
 * opened, flusher started. Returns 0, or -1 with the reason in `why` (the page says FAILED when it exists).
 */
static int image_start(int how, pid_t ptid, char *why, size_t len)
{
	owner_pid = getpid();
	int out_fd = image_files(how, ptid, why, len);
	if (out_fd < 0)
		return -1;
	/* the sample file has no name: the writer opens it again through /proc (its own descriptor,
	 * O_CLOEXEC) */
	snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out_fd);
	if (PAPI_register_thread() != PAPI_OK) {
		snprintf(why, len, "PAPI_register_thread failed");
		close(out_fd);
		return -1;
	}
	self.ring = ring_new();
	if (!self.ring) {
		snprintf(why, len, "out of memory");
		close(out_fd);
		return -1;
	}
	self.ring->tid = (uint32_t)thread_id();
	/* the precise level asked for, or by default 2 and, if the PMU refuses, 0 */
	precise_use = precise_req < 0 ? 2 : precise_req;
	int rc = thread_start_level(precise_use, why, len);
	if (rc == RVSAMPLE_ENOTSUP && precise_req < 0) {
		mine.precise_refused = 1;
		precise_use = 0;
		rc = thread_start_level(precise_use, why, len);
	}
	if (rc < 0) {
		close(out_fd);
		return -1;
	}
	mine.precise = precise_use;
	mine.threads = 1;
	memcpy(shm, &mine, sizeof(mine));

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
	if (rc < 0) {
		snprintf(why, len, "cannot write the sample file: %s", rvsample_strerror(rc));
		thread_stop();
		return -1;
	}
	stopping = 0;
	write_error = 0;
	if (start_flusher() != 0) {
		snprintf(why, len, "cannot start the flusher thread");
		thread_stop();
		rvsample_writer_close(writer);
		writer = NULL;
		return -1;
	}
	active = 1;
	__atomic_store_n(&shm->state, RVPROF_RUNNING, __ATOMIC_RELEASE);
	return 0;
}

/* An image other than the first could not sample: it runs on unsampled, and its page says why (rvprof prints
 * it); without a page (rvprof cannot be reached) stderr does. */
static void image_not_sampled(const char *why)
{
	if (shm) {
		snprintf(mine.message, sizeof(mine.message), "%s", why);
		memcpy(shm->message, mine.message, sizeof(shm->message));
		__atomic_store_n(&shm->state, RVPROF_FAILED, __ATOMIC_RELEASE);
	} else {
		fprintf(stderr, "rvprof agent: process %ld not sampled: %s\n", (long)getpid(), why);
	}
	active = 0;
}

/* Forgets what belongs to another image of this process (the parent's, copied by fork; or this image's
 * before a failed exec): the page mapping and the writer (its descriptor refers to the other image's file:
 * dropped without a write; O_CLOEXEC closes it at exec); after fork the rings too (the parent's records). */
static void forget_parent(int forked)
{
	if (shm && shm != MAP_FAILED)
		munmap(shm, sizeof(*shm));
	shm = NULL;
	writer = NULL;
	if (!forked)
		return; /* after a failed exec the other threads' rings are theirs still: drained into the new
		           file */
	for (struct ring *r = rings, *next; r; r = next) {
		next = r->next;
		munmap(r->rec, RING_SIZE * sizeof(*r->rec));
		free(r);
	}
	rings = NULL;
	self.sampler = NULL; /* the parent's sampler: its events count the parent, not us */
	self.eventset = PAPI_NULL;
	self.ring = NULL;
}

/* fork: the lock is held across it, so the child's copy of the rings and writer is not caught half-way
 * (the writer buffers nothing a child could write again). With RVPROF_INHERIT=1 the child samples itself
 * from here on (its own page and file); otherwise it is only counted, and its copy of the agent stays
 * inactive (its exit writes nothing). */
static void before_fork(void)
{
	pthread_mutex_lock(&lock);
	forking_tid = (pid_t)thread_id();
}

static void parent_after_fork(void)
{
	pthread_mutex_unlock(&lock);
	if (active && getpid() == owner_pid)
		COUNT32(children, 1);
}

static int fork_child_pending; /* the child of a sampled image, to start sampling when fork returns */

static void child_after_fork(void)
{
	pthread_mutex_unlock(&lock);
	fork_child_pending = active && inherit;
	active = 0;
	flusher_running = 0; /* the flusher thread was not copied */
}

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER; /* one fork at a time pauses the flusher */

/* fork, interposed: the child starts sampling once fork has returned in it. Not in the fork handler above:
 * other libraries' handlers (the emulator's, under rvemu-run) may still hold their locks there, and
 * starting a sampler needs them. Under rvemu-run the emulator's fork calls this one (RTLD_NEXT).
 * The flusher thread is ended across a fork, and started again in the parent (and the child starts its own):
 * the program is then single-threaded when it forks if it was before rvprof. qemu-user 7.2 (the riscv64
 * build's tests) aborts a forked child that creates a thread while a thread of its parent (here: the flusher)
 * holds the vCPU index the new thread gets (plugins/core.c: qemu_plugin_vcpu_init_hook: assertion failed), so
 * the child's own flusher could not start otherwise. */
EXPORT pid_t fork(void)
{
	typedef pid_t (*fork_fn)(void);
	fork_fn next = (fork_fn)dlsym(RTLD_NEXT, "fork");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	pthread_mutex_lock(&fork_lock);
	int paused = 0;
	if (active && getpid() == owner_pid && flusher_running && !pthread_equal(pthread_self(), flusher)) {
		__atomic_store_n(&flusher_pause, 1, __ATOMIC_RELEASE);
		sem_post(&wake);
		pthread_join(flusher, NULL);
		flusher_running = 0;
		paused = 1;
	}
	pid_t r = next();
	int saved = errno;
	__atomic_store_n(&flusher_pause, 0, __ATOMIC_RELEASE);
	if (r != 0 && paused && active && start_flusher() != 0)
		shm_message("cannot start the flusher thread again after fork: records are written at exit");
	pthread_mutex_unlock(&fork_lock); /* the child's copy too: the calling thread holds it */
	errno = saved;
	if (r == 0 && fork_child_pending) {
		fork_child_pending = 0;
		forget_parent(1);
		sem_destroy(&wake);
		sem_init(&wake, 0, 0);
		char why[512];
		if (image_start(RVPROF_HOW_FORKED, forking_tid, why, sizeof(why)) != 0)
			image_not_sampled(why);
		errno = saved;
	}
	return r;
}

/* ------------------------------------------------------------------------------------ exec */
/* Before the process becomes another program its file is finished (the new image, if followed, starts its
 * own in its constructor); if exec fails, the same image samples on, in new files. */
static int exec_begin(void)
{
	int was = active && getpid() == owner_pid;
	if (was)
		image_finish(1);
	return was;
}

static void exec_failed(int was, int err)
{
	if (was) {
		forget_parent(0);
		char why[512];
		if (image_start(RVPROF_HOW_RESUMED, 0, why, sizeof(why)) != 0)
			image_not_sampled(why);
	}
	errno = err;
}

/* The exec family's array forms: libc's own function (RTLD_NEXT) between exec_begin and exec_failed, which
 * only a failed exec returns to. */
#define EXEC_WRAPPER(name, params, args)                                                                     \
	EXPORT int name params                                                                               \
	{                                                                                                    \
		typedef int(*name##_fn) params;                                                              \
		name##_fn fn = (name##_fn)dlsym(RTLD_NEXT, #name);                                           \
		if (!fn) {                                                                                   \
			errno = ENOSYS;                                                                      \
			return -1;                                                                           \
		}                                                                                            \
		int was = exec_begin();                                                                      \
		int rc = fn args;                                                                            \
		exec_failed(was, errno);                                                                     \
		return rc;                                                                                   \
	}

EXEC_WRAPPER(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp))
EXEC_WRAPPER(execv, (const char *path, char *const argv[]), (path, argv))
EXEC_WRAPPER(execvp, (const char *file, char *const argv[]), (file, argv))
EXEC_WRAPPER(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp))

/* execl, execlp, execle: their arguments as an array, then the v form above (glibc's own call execve
 * inside libc, where the interposition cannot see it). */
#define EXECL_MAX 4096
static int execl_common(const char *path, const char *arg0, va_list ap, int mode)
{
	char *argv[EXECL_MAX + 1];
	size_t n = 0;
	argv[n++] = (char *)arg0;
	while (arg0 && n <= EXECL_MAX && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	if (n > EXECL_MAX) {
		errno = E2BIG;
		return -1;
	}
	argv[n] = NULL;
	if (!arg0)
		argv[0] = NULL;
	if (mode == 1)
		return execvp(path, argv);
	if (mode == 2)
		return execve(path, argv, va_arg(ap, char *const *));
	return execv(path, argv);
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(path, arg, ap, 0);
	va_end(ap);
	return rc;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(file, arg, ap, 1);
	va_end(ap);
	return rc;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(path, arg, ap, 2);
	va_end(ap);
	return rc;
}

/* ------------------------------------------------------------------------------- constructor */
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

/* The first image stops the program when it cannot sample (rvprof prints the reason); a later image runs on
 * unsampled. */
static void init_failed(int first, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void init_failed(int first, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (first)
		fail("%s", msg);
	image_not_sampled(msg);
}

__attribute__((constructor)) static void agent_init(void)
{
	const char *pid_s = env(RVPROF_ENV_PID);
	if (!pid_s)
		return; /* no rvprof, or not followed (RVPROF_INHERIT=0) */
	int first = strtol(pid_s, NULL, 10) == (long)getpid();
	if (!first && strcmp(pid_s, "0") != 0)
		return; /* another process's number: not ours to sample */
	const char *inh = env(RVPROF_ENV_INHERIT);
	inherit = !inh || strcmp(inh, "0") != 0;
	sock_fd = env_fd(RVPROF_ENV_SOCK);
	const char *dir = env(RVPROF_ENV_DIR), *front = env(RVPROF_ENV_FRONT);
	front_pid = front ? strtol(front, NULL, 10) : 0;
	snprintf(tmp_dir, sizeof(tmp_dir), "%s", dir ? dir : "");
	const char *ev = env(RVPROF_ENV_EVENT), *th = env(RVPROF_ENV_THRESHOLD),
	           *pr = env(RVPROF_ENV_PRECISE), *st = env(RVPROF_ENV_STACKS);
	if (inherit) {
		/* images exec'd below this one are followed; a program that execs itself does not become the
		 * first image again */
		setenv(RVPROF_ENV_PID, "0", 1);
	} else {
		/* only this process: an image it execs must not take over */
		unsetenv(RVPROF_ENV_PID);
		unsetenv(RVPROF_ENV_SOCK);
		unsetenv(RVPROF_ENV_FRONT);
	}
	if (sock_fd < 0) {
		init_failed(first, "%s: not a descriptor number (rvprof sets it)", RVPROF_ENV_SOCK);
		return;
	}
	if (!ev || !th) {
		init_failed(first, "incomplete environment: %s and %s must be set", RVPROF_ENV_EVENT,
		            RVPROF_ENV_THRESHOLD);
		return;
	}
	snprintf(event_name, sizeof(event_name), "%s", ev);
	char *end;
	errno = 0;
	threshold = strtoull(th, &end, 10);
	if (errno || *end || threshold == 0) {
		init_failed(first, "%s=%s: not a positive number", RVPROF_ENV_THRESHOLD, th);
		return;
	}
	if (!pr || strcmp(pr, "auto") == 0)
		precise_req = -1;
	else if (pr[0] >= '0' && pr[0] <= '3' && !pr[1])
		precise_req = pr[0] - '0';
	else {
		init_failed(first, "%s=%s: auto or 0-3", RVPROF_ENV_PRECISE, pr);
		return;
	}
	stacks = st && strcmp(st, "1") == 0;

	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		init_failed(first, "PAPI_library_init: %s", rc > 0 ? "version mismatch" : PAPI_strerror(rc));
		return;
	}
	rc = PAPI_thread_init(thread_id);
	if (rc != PAPI_OK) {
		init_failed(first, "PAPI_thread_init: %s", PAPI_strerror(rc));
		return;
	}
	if (sem_init(&wake, 0, 0) != 0) {
		init_failed(first, "sem_init: %s", strerror(errno));
		return;
	}
	if (pthread_atfork(before_fork, parent_after_fork, child_after_fork) != 0 || atexit(at_exit) != 0) {
		init_failed(first, "cannot register the fork and exit handlers");
		return;
	}
	char why[512];
	if (image_start(first ? RVPROF_HOW_STARTED : RVPROF_HOW_EXECED, 0, why, sizeof(why)) != 0) {
		init_failed(first, "%s", why);
		return;
	}
	/* later images sample as this one does (a level "auto" found, they require) */
	if (inherit && precise_req < 0) {
		char lvl[2] = {(char)('0' + precise_use), 0};
		setenv(RVPROF_ENV_PRECISE, lvl, 1);
	}
	if (!inherit) {
		close(sock_fd); /* the program does not see rvprof's descriptors */
		sock_fd = -1;
	}
}
