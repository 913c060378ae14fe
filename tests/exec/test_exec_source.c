// SPDX-License-Identifier: MIT
/*
 * The emulator's "exec" count source (emulator/mach_count_exec.c) on the host: this program plays the QEMU
 * plugin's part, writing its own thread's slot of a count file (plugin/rvexec_shm.h), and reads events
 * through the emulator's perf_event interface (RVEMU_COUNT_SOURCE=exec, RVEXEC_SHM=the file). Each model
 * event must count the sum of the plugin counters events/exec_events.csv gives it, between the instants it
 * was enabled and read; an event the table leaves out keeps the profile rate over the modelled cycles;
 * supervisor-mode counts show only in events that do not exclude the kernel, from their enable to their
 * disable; the thread's clock is its modelled cycles; BOOM's bank and the distributed HPC count the plugin's
 * counters too (at BOOM's user and supervisor levels as pfc_maxPriv gates them; per hart and per L2 slice on
 * the HPC). Bad configurations stop the program with exit status 2 and a message. The launcher (no
 * EXEC_SRC_CHILD) re-executes itself under $RVEMU_LIB for each case.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_run.h"
#include "open_event.h"
#include "rvemu_tables.h"
#include "rvhw.h"
#include "rvexec_shm.h"

static struct rvexec_shm_header *file;
static struct rvexec_slot *slot;

/* exclude_kernel, as PAPI's default user domain sets it (the U74 filters by privilege with Sscofpmf);
 * open_event (open_event.h) does not exclude the kernel: it counts the supervisor share too, as on a board */
static int perf_open(uint32_t type, uint64_t config)
{
	return open_event_excluding(type, config, 1);
}

static uint64_t read_count(int fd)
{
	uint64_t v = 0;
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return v;
}

static uint64_t ppb_of(const char *model, const char *event)
{
	for (size_t m = 0; m < rvemu_nmodels; m++)
		if (strcmp(rvemu_models[m].model, model) == 0)
			for (size_t e = 0; e < rvemu_models[m].nevents; e++)
				if (strcmp(rvemu_models[m].events[e].name, event) == 0)
					return rvemu_models[m].events[e].ppb;
	CU_FAIL("event not in the tables");
	return 0;
}

static uint64_t scale(uint64_t cycles, uint64_t ppb)
{
	return (uint64_t)(((unsigned __int128)cycles * ppb) / RVEMU_PPB);
}

/* What the plugin does when the thread runs a block: counts go into the slot's mode row. */
static void plugin_adds(unsigned mode, enum rvexec_count c, uint64_t n)
{
	__atomic_fetch_add(&slot->counts[mode][c], n, __ATOMIC_RELAXED);
}

static void enable_all(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_FATAL(fds[i] >= 0);
		CU_ASSERT_EQUAL(ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0), 0);
	}
}

/* The U74 has two programmable counters and Linux stops scheduling flexible events at the first that does
 * not fit: the fixed counters first, then two programmable events per phase, so nothing is multiplexed. */
static void test_events_count_plugin_counters(void)
{
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 1000); /* ran before the events exist */
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 40);
	int cycles = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int insns = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	int loads = perf_open(PERF_TYPE_RAW, 0x200);   /* INTEGER_LOAD_RETIRED */
	int atomics = perf_open(PERF_TYPE_RAW, 0x800); /* ATOMIC_MEMORY_RETIRED = amo + lr + sc */
	int fds[] = {cycles, insns, loads, atomics};
	enable_all(fds, 4);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 100);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_FP_LOAD, 7);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_AMO, 3);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_LR, 4);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_SC, 5);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INSTRET, 1000);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 5000);
	/* the emulator's own work: the kernel's, counted only by events that do not exclude it (cycles) */
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 77);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 999);
	CU_ASSERT_EQUAL(read_count(loads), 100);
	CU_ASSERT_EQUAL(read_count(atomics), 12);
	CU_ASSERT_EQUAL(read_count(insns), 1000);
	CU_ASSERT_EQUAL(read_count(cycles), 5000 + 999);
	/* later blocks add on */
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 50);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 100);
	CU_ASSERT_EQUAL(read_count(loads), 150);
	CU_ASSERT_EQUAL(read_count(cycles), 5100 + 999);
	close(loads);
	close(atomics);

	/* a combined mask counts the sum; an event the table leaves out keeps its profile rate */
	int both = perf_open(PERF_TYPE_RAW, 0x80200);    /* INTEGER_LOAD_RETIRED | FP_LOAD_RETIRED */
	int interlock = perf_open(PERF_TYPE_RAW, 0x101); /* ADDRESSGEN_INTERLOCK: no exec meaning */
	int more[] = {both, interlock};
	enable_all(more, 2);
	uint64_t start = slot->counts[RVEXEC_MODE_USER][RVEXEC_CYCLES];
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 20);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_FP_LOAD, 9);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 4000);
	CU_ASSERT_EQUAL(read_count(both), 29);
	uint64_t ppb = ppb_of("sifive-u74", "ADDRESSGEN_INTERLOCK");
	CU_ASSERT_EQUAL(read_count(interlock), scale(start + 4000, ppb) - scale(start, ppb));
	CU_ASSERT_EQUAL(read_count(cycles), 9100 + 999);
	close(both);
	close(interlock);
	close(insns);
	close(cycles);
}

static void test_thread_clock_is_modelled_cycles(void)
{
	uint64_t (*thread_cycles)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "rvemu_thread_cycles");
	CU_ASSERT_PTR_NOT_NULL_FATAL(thread_cycles);
	uint64_t before = thread_cycles();
	CU_ASSERT_EQUAL(before, slot->counts[RVEXEC_MODE_USER][RVEXEC_CYCLES]);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 12345);
	CU_ASSERT_EQUAL(thread_cycles(), before + 12345);
}

/* The kernel's share follows the event's own state changes: the supervisor work done before the enable or
 * after the disable is not the event's, whatever the thread's cycles (they stand still while the emulator,
 * the kernel, runs); what is done while it is on counts, read while on included. */
static void test_kernel_share_follows_enable_and_disable(void)
{
	int cycles = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	CU_ASSERT_FATAL(cycles >= 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 500); /* before the enable, no user cycle since */
	CU_ASSERT_EQUAL(ioctl(cycles, PERF_EVENT_IOC_ENABLE, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 30); /* while on, before any user cycle */
	CU_ASSERT_EQUAL(read_count(cycles), 30);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 100);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 7);
	CU_ASSERT_EQUAL(read_count(cycles), 137);
	CU_ASSERT_EQUAL(ioctl(cycles, PERF_EVENT_IOC_DISABLE, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 70); /* after the disable */
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 40);
	CU_ASSERT_EQUAL(read_count(cycles), 137);
	/* on again: from its own enable, not from the instant it was last accounted at */
	CU_ASSERT_EQUAL(ioctl(cycles, PERF_EVENT_IOC_ENABLE, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 3);
	CU_ASSERT_EQUAL(read_count(cycles), 140);
	/* a reset while on: what the kernel does after it counts from 0 */
	CU_ASSERT_EQUAL(ioctl(cycles, PERF_EVENT_IOC_RESET, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_CYCLES, 11);
	CU_ASSERT_EQUAL(read_count(cycles), 11);
	close(cycles);
}

/* A multiplexing rotation found at a past instant of the thread (its cycles ran past the slice's end before
 * the emulator looked): the outgoing event counts the kernel's work up to the accounting that finds it, the
 * incoming one from there. Three kernel-counting load events on the U74's two programmable counters, one
 * group each: the first two go on, the third waits; the rotation puts the first at the end (rotate_ctx). */
static void test_kernel_share_across_a_rotation(void)
{
	int ev[3];
	for (int i = 0; i < 3; i++)
		ev[i] = open_event(PERF_TYPE_RAW, 0x200); /* INTEGER_LOAD_RETIRED */
	enable_all(ev, 3);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 10); /* while the first two are on */
	CU_ASSERT_EQUAL(read_count(ev[2]), 0);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 4000ull * 1500 + 1000); /* past the 4 ms slice */
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 5); /* before the accounting that rotates */
	CU_ASSERT_EQUAL(read_count(ev[2]), 0);                   /* it rotates here: on from now */
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 3); /* the second and third are on */
	CU_ASSERT_EQUAL(read_count(ev[0]), 15);
	CU_ASSERT_EQUAL(read_count(ev[1]), 18);
	CU_ASSERT_EQUAL(read_count(ev[2]), 3);
	for (int i = 0; i < 3; i++)
		close(ev[i]);
}

/* An inheriting event's copy in a forked child counts the child's kernel work from the fork (the copy goes on
 * with the child) to the child's exit, where it reaches the parent's event; the parent's own work after its
 * disable does not count. The child claims its own slot, as the plugin does at its first block. */
static void test_kernel_share_of_an_inherited_child(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = 0x200; /* INTEGER_LOAD_RETIRED */
	a.disabled = 1;
	a.inherit = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 10); /* the parent's, while on */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		uint32_t tid = (uint32_t)gettid(), n = file->nslots;
		for (uint32_t probe = 0; probe < n; probe++) {
			struct rvexec_slot *s = rvexec_shm_slot(file, (tid + probe) % n);
			uint32_t free_tid = 0;
			if (__atomic_compare_exchange_n(&s->tid, &free_tid, tid, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_RELAXED)) {
				__atomic_store_n(&s->state, RVEXEC_SLOT_LIVE, __ATOMIC_RELEASE);
				__atomic_fetch_add(&s->counts[RVEXEC_MODE_SUPERVISOR][RVEXEC_INT_LOAD], 40,
				                   __ATOMIC_RELAXED);
				__atomic_store_n(&s->state, RVEXEC_SLOT_EXITED, __ATOMIC_RELEASE);
				exit(0);
			}
		}
		exit(3); /* no free slot */
	}
	CU_ASSERT_FATAL(pid > 0);
	int status = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_EQUAL(status, 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 5); /* the parent's, while on */
	CU_ASSERT_EQUAL(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 70); /* after the disable */
	CU_ASSERT_EQUAL(read_count(fd), 10 + 40 + 5);
	close(fd);
}

static int (*boom_op)(unsigned tag, uint64_t in, uint64_t *out);

static uint64_t boom_counter(unsigned n)
{
	uint64_t v = 0;
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_READ_BASE + n, 0, &v), RVHW_OK);
	return v;
}

/* BOOM's counters 31 exe_is_ld (int_load + fp_load + lr), 47 com_is_ld (the same), 3 icache_hit (l1i_access -
 * l1i_miss): what the plugin counted while the gating let it through, per level. */
static void test_boom_counts_the_stream(void)
{
	boom_op = (int (*)(unsigned, uint64_t, uint64_t *))dlsym(RTLD_DEFAULT, "rvhw_boom_op");
	CU_ASSERT_PTR_NOT_NULL_FATAL(boom_op);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 1000); /* before counting: never seen */
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 2000);   /* (every block costs a cycle) */
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_MAXPRIV, 0, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_ENABLE, 1, NULL), RVHW_OK);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_RESET, 0, NULL), RVHW_OK);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 30);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_FP_LOAD, 4);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_LR, 2);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1I_ACCESS, 50);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1I_MISS, 8);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 1000);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 100); /* pfc_maxPriv 0: user level only */
	CU_ASSERT_EQUAL(boom_counter(31), 36);
	CU_ASSERT_EQUAL(boom_counter(47), 36);
	CU_ASSERT_EQUAL(boom_counter(3), 42);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_MAXPRIV, 1, NULL), RVHW_OK); /* user and supervisor */
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_INT_LOAD, 5);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 1);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 10);
	CU_ASSERT_EQUAL(boom_counter(31), 42);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_ENABLE, 0, NULL), RVHW_OK); /* nothing counts */
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_INT_LOAD, 500);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 10);
	CU_ASSERT_EQUAL(boom_counter(31), 42);
}

static void *boom_thread_touches_bank(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)boom_op(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL);
}

/* Each thread that touches BOOM's bank gets its own exec-counted state; it goes when the thread exits. */
static void test_boom_state_freed_at_exit(void)
{
	unsigned (*live)(void) = (unsigned (*)(void))dlsym(RTLD_DEFAULT, "rvemu_boom_exec_states");
	boom_op = (int (*)(unsigned, uint64_t, uint64_t *))dlsym(RTLD_DEFAULT, "rvhw_boom_op");
	CU_ASSERT_PTR_NOT_NULL_FATAL(live);
	CU_ASSERT_PTR_NOT_NULL_FATAL(boom_op);
	CU_ASSERT_EQUAL(boom_op(RVHW_BOOM_SET_PROCTAG, RVHW_BOOM_PROCTAG_COUNTED, NULL), RVHW_OK);
	unsigned before = live(); /* this thread's */
	CU_ASSERT_EQUAL(before, 1);
	for (int round = 0; round < 3; round++) {
		pthread_t t[4];
		int made = 0;
		for (int i = 0; i < 4; i++)
			made += pthread_create(&t[i], NULL, boom_thread_touches_bank, NULL) == 0;
		CU_ASSERT_EQUAL_FATAL(made, 4);
		for (int i = 0; i < 4; i++) {
			void *rc;
			CU_ASSERT_EQUAL(pthread_join(t[i], &rc), 0);
			CU_ASSERT_EQUAL((intptr_t)rc, RVHW_OK);
		}
		CU_ASSERT_EQUAL(live(), before); /* 4 allocated, 4 freed */
	}
}

/* The sum of one counter over every manager of a kind (core managers 0.., L2 slices 0x100..). */
static uint64_t hpc_sum(unsigned module0, unsigned bit)
{
	int (*truth)(uint32_t, unsigned, uint64_t *) =
	    (int (*)(uint32_t, unsigned, uint64_t *))dlsym(RTLD_DEFAULT, "rvemu_hpc_truth");
	uint64_t sum = 0, v;
	CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
	for (unsigned m = 0; m < 64 && truth(RVHW_HPC_MANAGER_ID(module0 + m, 0), bit, &v) == 0; m++)
		sum += v;
	return sum;
}

/* Core managers: L1D_READ (bit 2) = l1d_read_access of the hart's threads; the slices: L2_READ (bit 0) = the
 * L1s' refills, L2_READMISS (bit 1) = the plugin's L2 read misses. */
static void test_hpc_counts_the_stream(void)
{
	/* a hart's threads are the registered ones: a thread registers at its first entry (a CSR access here)
	 */
	uint64_t (*thread_cycles)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "rvemu_thread_cycles");
	CU_ASSERT_PTR_NOT_NULL_FATAL(thread_cycles);
	thread_cycles();
	uint64_t l1d = hpc_sum(0, 2), l2read = hpc_sum(0x100, 0), l2miss = hpc_sum(0x100, 1);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1D_READ_ACCESS, 77);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1I_MISS, 3);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1D_READ_MISS, 4);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L1D_WRITE_MISS, 5);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_L2_READ_MISS, 2);
	plugin_adds(RVEXEC_MODE_USER, RVEXEC_CYCLES, 700);
	plugin_adds(RVEXEC_MODE_SUPERVISOR, RVEXEC_L1D_READ_ACCESS,
	            1000); /* the kernel's: not the hart's user */
	CU_ASSERT_EQUAL(hpc_sum(0, 2) - l1d, 77);
	CU_ASSERT_EQUAL(hpc_sum(0x100, 0) - l2read, 12);
	CU_ASSERT_EQUAL(hpc_sum(0x100, 1) - l2miss, 2);
}

static int child(const char *what)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	int fd = path ? open(path, O_RDWR) : -1;
	if (strcmp(what, "start") == 0) /* the bad-configuration cases: the emulator must stop at load */
		return perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) >= 0 ? 0 : 1;
	file =
	    fd >= 0 ? mmap(NULL, rvexec_shm_size(4), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (file == MAP_FAILED)
		return 1;
	slot = rvexec_shm_slot(file, 1); /* the plugin claims a slot when the thread runs its first block */
	slot->tid = (uint32_t)gettid();
	slot->state = RVEXEC_SLOT_LIVE;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("exec count source", NULL, NULL);
	if (strcmp(what, "boom") == 0) {
		CU_add_test(s, "BOOM's bank counts the plugin's counters", test_boom_counts_the_stream);
		CU_add_test(s, "BOOM's per-thread exec state is freed at thread exit",
		            test_boom_state_freed_at_exit);
	} else if (strcmp(what, "hpc") == 0) {
		CU_add_test(s, "the distributed HPC counts the plugin's counters",
		            test_hpc_counts_the_stream);
	} else {
		CU_add_test(s, "model events count the plugin's counters", test_events_count_plugin_counters);
		CU_add_test(s, "the kernel's share follows the enable and the disable",
		            test_kernel_share_follows_enable_and_disable);
		CU_add_test(s, "the kernel's share across a multiplexing rotation",
		            test_kernel_share_across_a_rotation);
		CU_add_test(s, "the kernel's share of an inherited child",
		            test_kernel_share_of_an_inherited_child);
		CU_add_test(s, "the thread clock is the modelled cycles",
		            test_thread_clock_is_modelled_cycles);
	}
	return cunit_run_all();
}

/* ---- the launcher ---- */

static int run(const char *self, const char *what, const char *const env[], char *err, size_t errcap)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char pre[4096];
		snprintf(pre, sizeof(pre), "%s", getenv("RVEMU_LIB"));
		setenv("LD_PRELOAD", pre, 1);
		setenv("EXEC_SRC_CHILD", what, 1);
		for (size_t i = 0; env[i]; i += 2)
			if (env[i + 1])
				setenv(env[i], env[i + 1], 1);
			else
				unsetenv(env[i]);
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	char sink[256] = {0};
	while ((r = read(p[0], n < errcap - 1 ? err + n : sink,
	                 n < errcap - 1 ? errcap - 1 - n : sizeof(sink))) > 0)
		if (n < errcap - 1)
			n += (size_t)r;
	err[n] = 0;
	close(p[0]);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int make_count_file(const char *path, const char *model)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)rvexec_shm_size(4)) != 0)
		return -1;
	struct rvexec_shm_header *h =
	    mmap(NULL, rvexec_shm_size(4), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return -1;
	h->version = RVEXEC_SHM_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(struct rvexec_slot);
	h->nslots = 4;
	h->ncounts = RVEXEC_NCOUNTS;
	h->freq_mhz = 1500;
	snprintf(h->model, sizeof(h->model), "%s", model);
	h->magic = RVEXEC_SHM_MAGIC;
	munmap(h, rvexec_shm_size(4));
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *what = getenv("EXEC_SRC_CHILD");
	if (what)
		return child(what);
	if (!getenv("RVEMU_LIB")) {
		fprintf(stderr, "test_exec_source: RVEMU_LIB (the emulator library) is not set\n");
		return 1;
	}
	char path[256], foreign[256], boom[256], hpc[256], err[8192];
	snprintf(path, sizeof(path), "/tmp/rvexec-source-test-%d", (int)getpid());
	snprintf(boom, sizeof(boom), "/tmp/rvexec-source-test-%d-boom", (int)getpid());
	snprintf(hpc, sizeof(hpc), "/tmp/rvexec-source-test-%d-hpc", (int)getpid());
	snprintf(foreign, sizeof(foreign), "/tmp/rvexec-source-test-%d-foreign", (int)getpid());
	FILE *f = fopen(foreign, "w");
	if (make_count_file(path, "sifive-u74") != 0 || make_count_file(boom, "boom") != 0 ||
	    make_count_file(hpc, "lowrisc-hpc") != 0 || !f) {
		perror("test_exec_source: count file");
		return 1;
	}
	fputs("not a count file, but long enough to hold a header ......................................."
	      ".................................................................................\n",
	      f);
	fclose(f);
	int failed = 0;
	struct {
		const char *name, *what, *env[12];
		int status;
		const char *message;
	} cases[] = {
	    {"counts and clock (CUnit)",
	     "tests",
	     {"RVEMU_MODEL", "sifive-u74", "RVEMU_COUNT_SOURCE", "exec", "RVEMU_SSCOFPMF", "1",
	      "RVEMU_PARANOID", "1", RVEXEC_SHM_ENV, path, NULL},
	     0,
	     "Run Summary"},
	    {"BOOM's bank (CUnit)",
	     "boom",
	     {"RVEMU_MODEL", "boom", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, boom, NULL},
	     0,
	     "Run Summary"},
	    {"the distributed HPC (CUnit)",
	     "hpc",
	     {"RVEMU_MODEL", "lowrisc-hpc", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, hpc, NULL},
	     0,
	     "Run Summary"},
	    {"no RVEXEC_SHM",
	     "start",
	     {"RVEMU_MODEL", "sifive-u74", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, NULL, NULL},
	     2,
	     "set RVEXEC_SHM"},
	    {"missing count file",
	     "start",
	     {"RVEMU_MODEL", "sifive-u74", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, "/nonexistent/x",
	      NULL},
	     2,
	     "No such file"},
	    {"foreign file",
	     "start",
	     {"RVEMU_MODEL", "sifive-u74", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, foreign, NULL},
	     2,
	     "is not a count file"},
	    {"count file of another model",
	     "start",
	     {"RVEMU_MODEL", "cva6", "RVEMU_COUNT_SOURCE", "exec", RVEXEC_SHM_ENV, path, NULL},
	     2,
	     "counts model 'sifive-u74', the emulator runs 'cva6'"},
	    {"unknown count source",
	     "start",
	     {"RVEMU_MODEL", "sifive-u74", "RVEMU_COUNT_SOURCE", "plugin", NULL},
	     2,
	     "RVEMU_COUNT_SOURCE must be one of profile, exec"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = run(argv[0], cases[i].what, cases[i].env, err, sizeof(err));
		int ok = st == cases[i].status && strstr(err, cases[i].message) != NULL;
		printf("%s %s: exit status %d\n", ok ? "ok  " : "FAIL", cases[i].name, st);
		if (!ok) {
			printf("%s", err);
			failed++;
		} else if (cases[i].status == 0) {
			fputs(err, stdout); /* the CUnit summary, for test.sh's counts */
		}
	}
	unlink(path);
	unlink(foreign);
	unlink(boom);
	unlink(hpc);
	printf("test_exec_source: %zu cases, %d failed\n", sizeof(cases) / sizeof(cases[0]), failed);
	return failed ? 1 : 0;
}
