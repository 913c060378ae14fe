// SPDX-License-Identifier: MIT
/* Emulator core tests. Run without the emulator, this program is the launcher: it re-executes itself under
 * $RVEMU_LIB once per machine configuration (model x clock x Sscofpmf) and checks each run passed; it also
 * checks the load-time refusal of an unknown model and rvemu-run. Under the emulator it runs the CUnit
 * suites that apply to the configuration it was given. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu_test.h"
#include "cunit_run.h"

struct emu_api api;
const struct rvemu_model *model;
int virtual_clock, sscofpmf, isa_sscofpmf_option;

int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->config = config;
	a->disabled = 1;
}

void attr_for_event(struct perf_event_attr *a, const struct rvemu_event *e)
{
	if (e->kind == RVEMU_EV_CYCLES)
		attr_init(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	else if (e->kind == RVEMU_EV_INSTRET)
		attr_init(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	else
		attr_init(a, PERF_TYPE_RAW, e->encoding);
}

uint64_t read_count(int fd)
{
	uint64_t v = 0;
	CU_ASSERT_EQUAL(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return v;
}

uint64_t truth_of(const struct rvemu_event *e)
{
	uint64_t v = 0;
	CU_ASSERT_EQUAL(api.truth(e->name, &v), 0);
	return v;
}

const struct rvemu_event *event_named(const char *name)
{
	for (size_t i = 0; i < model->nevents; i++)
		if (!strcmp(model->events[i].name, name))
			return &model->events[i];
	return NULL;
}

pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void burn_cpu_ms(unsigned ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	volatile uint64_t x = 0;
	do {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * 3;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* ------------------------------------------------------------------------------------- launcher */
struct config {
	const char *model, *clock;
	int sscofpmf;
};
/* every model of the generated tables (events/models.csv): virtual clock always; the CPU-time clock except on
 * the distributed-HPC machine; RVEMU_SSCOFPMF=1 on both clocks where Sscofpmf is an option of the core */
#define MAX_CONFIGS 64
static struct config configs[MAX_CONFIGS];
static size_t nconfigs;

static void add_config(const char *model, const char *clock, int ssc)
{
	if (nconfigs < MAX_CONFIGS)
		configs[nconfigs++] = (struct config){model, clock, ssc};
}

static void build_configs(void)
{
	nconfigs = 0;
	for (size_t i = 0; i < rvemu_nmodels; i++) {
		const struct rvemu_model *m = &rvemu_models[i];
		int option = m->overflow_irq == RVEMU_OVF_SSCOFPMF && strstr(m->isa, "_sscofpmf") == NULL;
		add_config(m->model, "virtual", 0);
		if (option)
			add_config(m->model, "virtual", 1);
		if (strcmp(m->bank_pmu, "riscv_lowrisc_hpc") != 0)
			add_config(m->model, "cputime", 0);
		if (option)
			add_config(m->model, "cputime", 1);
	}
	CU_ASSERT(nconfigs < MAX_CONFIGS);
}
const char *self_path; /* argv[0], declared in emu_test.h */

/* Runs self (or argv) with the emulator appended to LD_PRELOAD; returns the exit status, stderr in err. */
/* How long a child may run (s); the test of the bound lowers it */
static long child_limit_s = 300;

static int run_under_emulator(char *const argv[], const char *model_name, const char *clock, int ssc,
                              char *err, size_t errcap)
{
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		const char *lib = getenv("RVEMU_LIB"), *pre = getenv("LD_PRELOAD");
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s%s%s", pre && *pre ? pre : "", pre && *pre ? ":" : "", lib);
		setenv("LD_PRELOAD", buf, 1);
		setenv("RVEMU_MODEL", model_name, 1);
		setenv("RVEMU_CLOCK", clock, 1);
		setenv("RVEMU_SSCOFPMF", ssc ? "1" : "0", 1);
		setenv("EMU_TEST_CHILD", "1", 1);
		if (err)
			dup2(pipefd[1], 2);
		close(pipefd[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	/* Bounded: a child stuck inside the emulator (every signal blocked there, even its own alarm()) is
	 * killed after child_limit_s (300 s) and counts as failed. The pipe is polled, not read to its end
	 * first: a hung child keeps its end open (its stderr, or the inherited descriptor), so a blocking
	 * read would wait for ever. What the child wrote is read as it comes; after it ended, what is left in
	 * the pipe, without waiting for a descendant that may still hold the pipe. */
	size_t n = 0;
	char sink[256] = {0};
	int st = 0, eof = 0, reaped = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ended = reaped || waitpid(pid, &st, WNOHANG) == pid;
		struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
		for (int chunks = 0; !eof && chunks < 4096 && poll(&p, 1, ended ? 0 : 50) > 0; chunks++) {
			int keep = err && n < errcap - 1;
			ssize_t r =
			    read(pipefd[0], keep ? err + n : sink, keep ? errcap - 1 - n : sizeof(sink));
			if (r > 0 && keep)
				n += (size_t)r;
			else if (r == 0 || (r < 0 && errno != EINTR))
				eof = 1;
			if (!ended)
				break; /* check the child between chunks */
		}
		if (ended)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long ms = (now.tv_sec - t0.tv_sec) * 1000LL + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= child_limit_s * 1000LL) {
			fprintf(stderr, "child %d still running after %ld s: killed\n", (int)pid,
			        child_limit_s);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			reaped = 1; /* once more round: what it wrote before is still in the pipe */
			continue;
		}
		if (eof) {
			struct timespec ms50 = {0, 50000000};
			nanosleep(&ms50, NULL);
		}
	}
	if (err)
		err[n] = 0;
	close(pipefd[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_every_configuration(void)
{
	build_configs();
	CU_ASSERT(nconfigs >= rvemu_nmodels);
	for (size_t i = 0; i < nconfigs; i++) {
		char *argv[] = {(char *)self_path, NULL};
		int st = run_under_emulator(argv, configs[i].model, configs[i].clock, configs[i].sscofpmf,
		                            NULL, 0);
		if (st != 0)
			fprintf(stderr, "configuration %s/%s/sscofpmf=%d failed (status %d)\n",
			        configs[i].model, configs[i].clock, configs[i].sscofpmf, st);
		CU_ASSERT(cunit_relay(st));
	}
}

/* The launcher's own bound: a child that hangs with the pipe open (its stderr) is killed, not waited for
 * for ever; what it wrote before is kept. */
static void test_hung_child_killed(void)
{
	char err[256];
	char *argv[] = {"/bin/sh", "-c", "echo started >&2; exec sleep 600", NULL};
	child_limit_s = 3; /* far more than a shell needs to start and write its line */
	int st = run_under_emulator(argv, "sifive-u74", "virtual", 0, err, sizeof(err));
	child_limit_s = 300;
	CU_ASSERT_EQUAL(st, 128 + SIGKILL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "started"));
}

static void test_unknown_model_refused(void)
{
	char err[1024];
	char *argv[] = {"/bin/true", NULL};
	int st = run_under_emulator(argv, "pentium", "virtual", 0, err, sizeof(err));
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown RVEMU_MODEL 'pentium'"));
	st = run_under_emulator(argv, "", "virtual", 0, err, sizeof(err)); /* set but empty: not the U74 */
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "RVEMU_MODEL is set but empty"));
	st = run_under_emulator(argv, "cva6", "sundial", 0, err, sizeof(err));
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "RVEMU_CLOCK"));
	st = run_under_emulator(argv, "cva6", "virtual", 1, err,
	                        sizeof(err)); /* CVA6 has no Sscofpmf option */
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "Sscofpmf"));
	setenv("RVEMU_IRQ_SKID", "10", 1); /* the CPU-time clock has the sampling alarm's own skid */
	st = run_under_emulator(argv, "cva6", "cputime", 0, err, sizeof(err));
	unsetenv("RVEMU_IRQ_SKID");
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "RVEMU_IRQ_SKID needs RVEMU_CLOCK=virtual"));
}

/* RVEMU_READ_ADVANCE: each read() advances the virtual clock first (what makes papi_command_line's counts
 * exact); a child runs the "read_advance" suite with it; with the CPU-time clock it is refused at load. */
static void test_read_advance(void)
{
	char err[1024];
	char *argv[] = {(char *)self_path, NULL};
	setenv("RVEMU_READ_ADVANCE", "1000000000", 1);
	setenv("EMU_TEST_ONLY", "read_advance", 1);
	CU_ASSERT(cunit_relay(run_under_emulator(argv, "sifive-u74", "virtual", 0, NULL, 0)));
	CU_ASSERT(cunit_relay(run_under_emulator(argv, "cva6", "virtual", 0, NULL, 0)));
	char *true_argv[] = {"/bin/true", NULL};
	CU_ASSERT_EQUAL(run_under_emulator(true_argv, "sifive-u74", "cputime", 0, err, sizeof(err)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "RVEMU_READ_ADVANCE"));
	setenv("RVEMU_READ_ADVANCE", "lots", 1);
	CU_ASSERT_EQUAL(run_under_emulator(true_argv, "sifive-u74", "virtual", 0, err, sizeof(err)), 2);
	unsetenv("RVEMU_READ_ADVANCE");
	unsetenv("EMU_TEST_ONLY");
}

/* Copy FROM to DIR/NAME, readable and executable by everyone; the path in OUT. 0 on success. */
static int copy_for_everyone(const char *from, const char *dir, const char *name, char *out, size_t cap)
{
	char buf[65536];
	ssize_t n = 0;
	int in, fd, rc = 0;
	if (from == NULL || snprintf(out, cap, "%s/%s", dir, name) >= (int)cap)
		return -1;
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		close(in);
		return -1;
	}
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			rc = -1;
	if (n < 0 || fchmod(fd, 0755) != 0)
		rc = -1;
	close(in);
	return close(fd) == 0 ? rc : -1;
}

/* RVEMU_TICK_CYCLES anywhere in its range works (issue 20: 1 or 2 made papi_avail run for minutes, one
 * accounting step per tick of the cycles a thread ran before it opened an event); a multiplexing interval
 * below 1 ms (perf_event_mux_interval_ms's minimum) is refused at load. The child ("tick" suite) counts and
 * samples a thread that already ran 300 ms, with one tick per cycle, and must finish (alarm: 60 s). */
static void test_tick_range(void)
{
	char err[1024];
	char *argv[] = {(char *)self_path, NULL};
	setenv("EMU_TEST_ONLY", "tick", 1);
	static const char *const ticks[] = {"1", "2"};
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		setenv("RVEMU_TICK_CYCLES", ticks[i], 1);
		int st = run_under_emulator(argv, "sifive-u74", "cputime", 1, NULL, 0);
		if (st)
			fprintf(stderr, "RVEMU_TICK_CYCLES=%s: status %d\n", ticks[i], st);
		CU_ASSERT_EQUAL(st, 0);
	}
	unsetenv("RVEMU_TICK_CYCLES");
	unsetenv("EMU_TEST_ONLY");
	char *true_argv[] = {"/bin/true", NULL};
	setenv("RVEMU_MUX_CYCLES", "2", 1);
	CU_ASSERT_EQUAL(run_under_emulator(true_argv, "sifive-u74", "virtual", 0, err, sizeof(err)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "RVEMU_MUX_CYCLES must be a number in 1500000.."));
	unsetenv("RVEMU_MUX_CYCLES");
}

/* Without CAP_PERFMON: RVEMU_CAP_PERFMON=0 at paranoid 1, 2 (mainline), 3 (Debian) and 4 (Ubuntu), with and
 * without Sscofpmf; and a really unprivileged process (setpriv to nobody when we are root), whose missing
 * capability the emulator finds itself. */
static void test_permissions_launch(void)
{
	char *argv[] = {(char *)self_path, NULL};
	static const char *const levels[] = {"1", "2", "3", "4"};
	setenv("EMU_TEST_ONLY", "permissions", 1);
	setenv("RVEMU_CAP_PERFMON", "0", 1);
	for (int ssc = 0; ssc < 2; ssc++)
		for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
			setenv("RVEMU_PARANOID", levels[i], 1);
			int st = run_under_emulator(argv, "sifive-u74", "virtual", ssc, NULL, 0);
			if (st)
				fprintf(stderr, "permissions: paranoid %s, sscofpmf %d failed\n", levels[i],
				        ssc);
			CU_ASSERT(cunit_relay(st));
		}
	unsetenv("RVEMU_CAP_PERFMON");
	unsetenv("RVEMU_PARANOID");
	if (geteuid() == 0) {
		/* nobody must reach the program and the emulator, wherever the clone lives (under /root, or
		 * any 0700 directory, the build tree is out of its reach): run copies in a directory of its
		 * own that everyone may enter */
		char dir[] = "/tmp/rvemu-nobody.XXXXXX", exe[4096], lib[4096];
		const char *real_lib = getenv("RVEMU_LIB");
		CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
		CU_ASSERT_EQUAL(chmod(dir, 0755), 0);
		CU_ASSERT_EQUAL_FATAL(copy_for_everyone("/proc/self/exe", dir, "test_emu", exe, sizeof(exe)),
		                      0);
		CU_ASSERT_EQUAL_FATAL(copy_for_everyone(real_lib, dir, "librvemu.so", lib, sizeof(lib)), 0);
		char *nobody[] = {"/usr/bin/setpriv",
		                  "--reuid=65534",
		                  "--regid=65534",
		                  "--clear-groups",
		                  "--inh-caps=-all",
		                  exe,
		                  NULL};
		char *saved_lib = strdup(real_lib);
		setenv("RVEMU_LIB", lib, 1);
		int st = run_under_emulator(nobody, "sifive-u74", "virtual", 0, NULL, 0);
		setenv("RVEMU_LIB", saved_lib, 1);
		free(saved_lib);
		if (st)
			fprintf(stderr, "permissions: setpriv --reuid=65534 run failed (status %d)\n", st);
		CU_ASSERT(cunit_relay(st));
		unlink(exe);
		unlink(lib);
		rmdir(dir);
	} else {
		CU_ASSERT(cunit_relay(run_under_emulator(argv, "sifive-u74", "virtual", 0, NULL, 0)));
	}
	unsetenv("EMU_TEST_ONLY");
}

/* CPU-wide sampling (test_emu_cpuwide.c) in a run of its own: two harts, so the tasks the test forks are
 * dealt them in turn; the U74 with Sscofpmf under the virtual clock (exact counts). */
static void test_cpuwide_launch(void)
{
	char *argv[] = {(char *)self_path, NULL};
	setenv("EMU_TEST_ONLY", "cpuwide", 1);
	setenv("RVEMU_HARTS", "2", 1);
	CU_ASSERT(cunit_relay(run_under_emulator(argv, "sifive-u74", "virtual", 1, NULL, 0)));
	unsetenv("RVEMU_HARTS");
	unsetenv("EMU_TEST_ONLY");
}

/* Precise Event Sampling as an option of the U74 (RVEMU_PES=1), with a small buffer too; refused on a core
 * without the option. */
static void test_pes_option(void)
{
	char err[1024];
	char *argv[] = {(char *)self_path, NULL};
	setenv("RVEMU_PES", "1", 1);
	CU_ASSERT(cunit_relay(run_under_emulator(argv, "sifive-u74", "virtual", 0, NULL, 0)));
	setenv("RVEMU_PES_RECORDS", "8", 1);
	CU_ASSERT(cunit_relay(run_under_emulator(argv, "cva6", "virtual", 0, NULL, 0)));
	unsetenv("RVEMU_PES_RECORDS");
	char *true_argv[] = {"/bin/true", NULL};
	CU_ASSERT_EQUAL(run_under_emulator(true_argv, "lowrisc-hpc", "virtual", 0, err, sizeof(err)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "Precise Event Sampling"));
	unsetenv("RVEMU_PES");
}

static int run_shell(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_rvemu_run(void)
{
	const char *run = getenv("RVEMU_RUN");
	char cmd[4096], out[8192];
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	snprintf(cmd, sizeof(cmd), "%s --help", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--model"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--sscofpmf"));
	snprintf(cmd, sizeof(cmd), "%s --model cva6 --harts 3 -- cat /proc/cpuinfo", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "uarch\t\t: openhwgroup,cva6"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "processor\t: 2"));
	CU_ASSERT_PTR_NULL(strstr(out, "processor\t: 3"));
	snprintf(cmd, sizeof(cmd), "%s --sscofpmf sh -c 'echo $LD_PRELOAD; grep -m1 ^isa /proc/cpuinfo'",
	         run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "_sscofpmf"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "librvemu.so"));
	snprintf(cmd, sizeof(cmd), "%s --clock sundial true 2>&1", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 2);
	/* an empty value is an error, never the default model over the one in the environment */
	snprintf(cmd, sizeof(cmd), "RVEMU_MODEL=cva6 %s --model '' true 2>&1", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--model needs a value"));
	snprintf(cmd, sizeof(cmd), "RVEMU_MODEL=cva6 %s --model= true 2>&1", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--model needs a value"));
	snprintf(cmd, sizeof(cmd), "%s --harts '' true 2>&1", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--harts needs a value"));
	snprintf(cmd, sizeof(cmd), "%s --bogus true 2>&1", run);
	CU_ASSERT_EQUAL(run_shell(cmd, out, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown option"));
}

/* The run table that process `pid` made, into out: 1, or 0 when there is none. Its name is
 * /dev/shm/rvemu-run.v<version>-<pid>.<hex> (before version 7: rvemu-run.<pid>.<hex>). */
static int run_table_of(pid_t pid, char *out, size_t cap)
{
	DIR *d = opendir("/dev/shm");
	int found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		const char *rest = e->d_name + strlen("rvemu-run.");
		if (strncmp(e->d_name, "rvemu-run.", strlen("rvemu-run.")) != 0)
			continue;
		if (*rest == 'v' && strchr(rest, '-'))
			rest = strchr(rest, '-') + 1;
		char *end;
		if (strtol(rest, &end, 10) == (long)pid && *end == '.') {
			snprintf(out, cap, "/dev/shm/%s", e->d_name);
			found = 1;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* rvemu-run --clock virtual -- argv..., its stdout on *out_fd when out_fd is given: the pid (the command's,
 * as rvemu-run execs it: the run's creator). */
static pid_t spawn_run(char *const cmd[], int *out_fd)
{
	int p[2] = {-1, -1};
	if (out_fd && pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[16] = {(char *)getenv("RVEMU_RUN"), "--clock", "virtual", "--"};
		for (int i = 0; i < 11 && cmd[i]; i++)
			argv[4 + i] = cmd[i];
		if (out_fd) {
			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
		}
		unsetenv("LD_PRELOAD"); /* rvemu-run adds the emulator; its run is a new one */
		execv(argv[0], argv);
		_exit(127);
	}
	if (out_fd) {
		close(p[1]);
		*out_fd = p[0];
	}
	return pid;
}

/* Until process `pid` has made its run table (bounded: it never comes when the emulator did not load). */
static int wait_run_table(pid_t pid, char *out, size_t cap)
{
	for (int i = 0; i < 3000; i++) {
		if (run_table_of(pid, out, cap))
			return 1;
		struct timespec ms10 = {0, 10000000};
		nanosleep(&ms10, NULL);
	}
	return 0;
}

/* One short run: its creator sweeps /dev/shm of the runs no one uses (remove_stale_runs). */
static void run_true(void)
{
	char *cmd[] = {"true", NULL};
	pid_t pid = spawn_run(cmd, NULL);
	int st = 0;
	CU_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Until process `pid` (not our child: a daemon) is gone or a zombie, bounded; 1 when it is. */
static int wait_gone(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 3000; i++) {
		FILE *f = fopen(path, "r");
		if (!f)
			return 1;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		const char *p = strrchr(buf, ')');
		if (p && (p[2] == 'Z' || p[2] == 'X'))
			return 1;
		struct timespec ms10 = {0, 10000000};
		nanosleep(&ms10, NULL);
	}
	return 0;
}

/* A run table named for process `pid` at `out` whose header says no more than the magic (and configuration)
 * of the table `like`: no creator pid, no slot used, as a table this version reads but whose creator's pid is
 * not known. 1 when made. */
static int make_table_without_creator(const char *like, pid_t pid, char *out, size_t cap)
{
	int in = open(like, O_RDONLY | O_CLOEXEC);
	struct stat st;
	unsigned char header[128] = {0}; /* magic[16], config[112] */
	int ok = in >= 0 && fstat(in, &st) == 0 && st.st_size > (off_t)sizeof(header) &&
	         read(in, header, sizeof(header)) == (ssize_t)sizeof(header);
	if (in >= 0)
		close(in);
	if (!ok)
		return 0;
	const char *version = strstr(like, "rvemu-run.v");
	const char *dash = version ? strchr(version + strlen("rvemu-run.v"), '-') : NULL;
	if (!dash)
		return 0;
	snprintf(out, cap, "%.*s%d.c0ffee", (int)(dash + 1 - like), like, (int)pid);
	int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	ok = ftruncate(fd, st.st_size) == 0 && write(fd, header, sizeof(header)) == (ssize_t)sizeof(header);
	close(fd);
	return ok;
}

/* Run tables do not pile up in /dev/shm (issue 20): a run whose creator was killed by SIGKILL (no exit path
 * removes its name) is removed by the next run once no process of it lives; a live run's table never is, nor
 * is the table of a run whose creator ended or was killed while a process it started (a daemon) lives on:
 * that process may still exec and join the run by the name. Before, the name was removed by the creator's
 * exit alone, and by the next run when the pid in the name was gone: the daemon's run lost its name at once.
 */
/* A line a child writes on `fd` (closed here) into line, NUL-terminated: the bytes read, or -1 when none
 * came within 60 s (bounded: a child that hangs, or never starts, must not hang the test). */
static ssize_t read_line_bounded(int fd, char *line, size_t cap)
{
	memset(line, 0, cap);
	if (fd < 0)
		return -1;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n = poll(&p, 1, 60000) > 0 ? read(fd, line, cap - 1) : -1;
	close(fd);
	return n;
}

/* A child of ours still running at a test's early exit: killed and reaped; *pid is -1 after. */
static void end_child(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = -1;
}

/* A process started by a child of ours (a daemon: not ours to reap): killed, until it is gone (bounded). */
static void end_daemon(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	wait_gone(*pid);
	*pid = -1;
}

static void test_rvemu_run_stale_tables(void)
{
	/* every name empty until found: an assertion that fails leaves no garbage for the later access() */
	char killed[300] = "", live[300] = "", daemon_run[300] = "", nameless[300] = "",
	     watcher_run[300] = "", victim_run[300] = "", line[32];
	/* our children, each killed and reaped on any early exit (out:), with the daemons they started */
	pid_t live_pid = -1, killed_pid = -1, sh_pid = -1, outsider = -1, watcher = -1, victim = -1, own = -1;
	pid_t daemon_pid = -1, orphan = -1;
	int out = -1, st = 0;
	ssize_t n;
	/* a live run, and one to be killed */
	char *sleeper[] = {"sleep", "300", NULL};
	live_pid = spawn_run(sleeper, NULL);
	killed_pid = spawn_run(sleeper, NULL);
	CU_ASSERT(live_pid > 0 && killed_pid > 0);
	if (live_pid <= 0 || killed_pid <= 0)
		goto out;
	CU_ASSERT(wait_run_table(live_pid, live, sizeof(live)));
	CU_ASSERT(wait_run_table(killed_pid, killed, sizeof(killed)));
	/* a run whose creator (sh) starts a daemon and ends */
	char *daemonize[] = {"sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!", NULL};
	sh_pid = spawn_run(daemonize, &out);
	CU_ASSERT(sh_pid > 0);
	if (sh_pid <= 0)
		goto out;
	n = read_line_bounded(out, line, sizeof(line));
	daemon_pid = n > 0 ? (pid_t)atoi(line) : -1;
	CU_ASSERT(waitpid(sh_pid, &st, 0) == sh_pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT(daemon_pid > 0);
	int daemon_has_table = run_table_of(sh_pid, daemon_run, sizeof(daemon_run));
	sh_pid = -1;
	CU_ASSERT(daemon_has_table); /* its creator's exit left the name to the daemon */
	if (!daemon_has_table)
		fprintf(stderr, "  the run of a daemon lost its table when its creator ended\n");
	/* a run that counts a process outside it (perf stat -p): that process's slot keeps nothing */
	outsider = fork();
	if (outsider == 0) {
		unsetenv("LD_PRELOAD");
		execlp("sleep", "sleep", "300", (char *)NULL);
		_exit(127);
	}
	CU_ASSERT(outsider > 0);
	if (outsider <= 0)
		goto out;
	/* a table whose creator's pid reads 0 (a table being made, seen before its creator's pid was): its
	 * name's process decides; before, it counted as gone and the table of a live run was removed */
	CU_ASSERT(make_table_without_creator(live, outsider, nameless, sizeof(nameless)));
	char watch[32];
	snprintf(watch, sizeof(watch), "%d", (int)outsider);
	setenv("EMU_TEST_WATCH_PID", watch, 1);
	char *watcher_cmd[] = {(char *)self_path, NULL};
	watcher = spawn_run(watcher_cmd, &out);
	unsetenv("EMU_TEST_WATCH_PID");
	CU_ASSERT(watcher > 0);
	if (watcher <= 0)
		goto out;
	n = read_line_bounded(out, line, sizeof(line)); /* "counting": its event is open */
	CU_ASSERT(n > 0 && !strncmp(line, "counting", 8));
	CU_ASSERT(run_table_of(watcher, watcher_run, sizeof(watcher_run)));
	kill(watcher, SIGKILL);
	CU_ASSERT(waitpid(watcher, &st, 0) == watcher && WIFSIGNALED(st));
	watcher = -1;
	kill(killed_pid, SIGKILL);
	CU_ASSERT(waitpid(killed_pid, &st, 0) == killed_pid && WIFSIGNALED(st));
	killed_pid = -1;
	run_true();
	CU_ASSERT(access(killed, F_OK) != 0);                   /* the killed run's table is gone */
	CU_ASSERT(access(watcher_run, F_OK) != 0);              /* and the watcher's, its outsider alive */
	CU_ASSERT(!nameless[0] || access(nameless, F_OK) == 0); /* its name's process lives */
	kill(outsider, SIGKILL);
	CU_ASSERT(waitpid(outsider, &st, 0) == outsider);
	outsider = -1;
	CU_ASSERT(access(live, F_OK) == 0);                            /* a live run's is not */
	CU_ASSERT(!daemon_has_table || access(daemon_run, F_OK) == 0); /* nor the daemon's */
	/* the daemon ends: its run goes with the next run */
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		CU_ASSERT(wait_gone(daemon_pid));
		daemon_pid = -1;
	}
	run_true();
	CU_ASSERT(!daemon_has_table || access(daemon_run, F_OK) != 0);
	CU_ASSERT(!nameless[0] || access(nameless, F_OK) != 0); /* its name's process is gone */
	CU_ASSERT(access(live, F_OK) == 0);
	/* a creator killed while a process it started lives: the table stays for that process */
	char *kill_me[] = {"sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 300",
	                   NULL};
	victim = spawn_run(kill_me, &out);
	CU_ASSERT(victim > 0);
	if (victim <= 0)
		goto out;
	n = read_line_bounded(out, line, sizeof(line));
	orphan = n > 0 ? (pid_t)atoi(line) : -1;
	CU_ASSERT(orphan > 0 && wait_run_table(victim, victim_run, sizeof(victim_run)));
	kill(victim, SIGKILL);
	CU_ASSERT(waitpid(victim, &st, 0) == victim && WIFSIGNALED(st));
	victim = -1;
	run_true();
	CU_ASSERT(access(victim_run, F_OK) == 0);
	if (orphan > 0) {
		kill(orphan, SIGKILL);
		CU_ASSERT(wait_gone(orphan));
		orphan = -1;
	}
	run_true();
	CU_ASSERT(access(victim_run, F_OK) != 0);
	kill(live_pid, SIGTERM); /* killed too (no exit path): the next run removes it */
	CU_ASSERT(waitpid(live_pid, &st, 0) == live_pid);
	live_pid = -1;
	run_true();
	CU_ASSERT(access(live, F_OK) != 0);
	/* a run that ends by itself removes its own name */
	char *one[] = {"sh", "-c", "echo $$", NULL};
	own = spawn_run(one, &out);
	CU_ASSERT(own > 0);
	if (own <= 0)
		goto out;
	n = read_line_bounded(out, line, sizeof(line));
	CU_ASSERT(waitpid(own, &st, 0) == own && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT(n > 0 && atoi(line) == (int)own && !run_table_of(own, daemon_run, sizeof(daemon_run)));
	own = -1;
out:
	end_child(&live_pid);
	end_child(&killed_pid);
	end_child(&sh_pid);
	end_child(&outsider);
	end_child(&watcher);
	end_child(&victim);
	end_child(&own);
	end_daemon(&daemon_pid);
	end_daemon(&orphan);
	if (nameless[0])
		unlink(nameless); /* whatever the runs did */
}

static int run_cunit(void)
{
	return cunit_run_all();
}

static int launcher(void)
{
	if (!getenv("RVEMU_LIB")) {
		fprintf(stderr, "RVEMU_LIB must name librvemu.so (make check sets it)\n");
		return 1;
	}
	CU_pSuite s = CU_add_suite("launcher", NULL, NULL);
	CU_add_test(s, "unknown model / clock / option refused at load", test_unknown_model_refused);
	CU_add_test(s, "a hung child is killed at the bound, its output kept", test_hung_child_killed);
	CU_add_test(s, "rvemu-run", test_rvemu_run);
	CU_add_test(s, "rvemu-run: a killed run's table goes, a live run's or a daemon's stays",
	            test_rvemu_run_stale_tables);
	const char *only = getenv("EMU_TEST_ONLY");
	if (only && !strcmp(only, "rvemu-run"))
		return run_cunit(); /* rvemu-run's tests alone (EMU_TEST_ONLY=rvemu-run ./test_emu) */
	CU_add_test(s, "every model x clock x Sscofpmf configuration", test_every_configuration);
	CU_add_test(s, "RVEMU_READ_ADVANCE: reads advance the virtual clock", test_read_advance);
	CU_add_test(s, "permissions of an ordinary user (paranoid 1-4, setpriv)", test_permissions_launch);
	CU_add_test(s, "Precise Event Sampling as an option and with a small buffer", test_pes_option);
	CU_add_test(s, "CPU-wide sampling: two harts, three tasks (RVEMU_HARTS=2)", test_cpuwide_launch);
	CU_add_test(s, "RVEMU_TICK_CYCLES=1 and 2 work; RVEMU_MUX_CYCLES below 1 ms refused",
	            test_tick_range);
	return run_cunit();
}

#define LOOKUP(field, sym) (api.field = (__typeof__(api.field))dlsym(RTLD_DEFAULT, #sym))

static int child(void)
{
	LOOKUP(advance, rvemu_advance);
	LOOKUP(inject, rvemu_inject);
	LOOKUP(truth, rvemu_truth);
	LOOKUP(truth_raw, rvemu_truth_raw);
	LOOKUP(thread_cycles, rvemu_thread_cycles);
	LOOKUP(get_stats, rvemu_get_stats);
	LOOKUP(reset_stats, rvemu_reset_stats);
	LOOKUP(model_name, rvemu_model_name);
	if (!api.advance || !api.model_name) {
		fprintf(stderr, "not running under librvemu\n");
		return 1;
	}
	/* The same generated tables the emulator is built from (hidden inside librvemu.so, linked here). */
	for (size_t i = 0; i < rvemu_nmodels; i++)
		if (!strcmp(rvemu_models[i].model, api.model_name()))
			model = &rvemu_models[i];
	if (!model) {
		fprintf(stderr, "model %s is not in the tables\n", api.model_name());
		return 1;
	}
	virtual_clock = !strcmp(getenv("RVEMU_CLOCK"), "virtual");
	int option = !strcmp(getenv("RVEMU_SSCOFPMF"), "1");
	isa_sscofpmf_option = option && strstr(model->isa, "_sscofpmf") == NULL;
	sscofpmf = option || strstr(model->isa, "_sscofpmf") != NULL ||
	           model->overflow_irq == RVEMU_OVF_ANDES || model->overflow_irq == RVEMU_OVF_THEAD;
	printf("\n=== model %s, clock %s, sscofpmf %d ===\n", model->model,
	       virtual_clock ? "virtual" : "cputime", sscofpmf);
	const char *only = getenv("EMU_TEST_ONLY");
	if (only && !strcmp(only, "read_advance")) {
		add_read_advance_suite();
		return run_cunit();
	}
	if (only && !strcmp(only, "cpuwide")) {
		add_cpuwide_suite();
		return run_cunit();
	}
	if (only && !strcmp(only, "tick")) {
		alarm(60); /* bounded: before the fix this ran for minutes */
		add_tick_suite();
		return run_cunit();
	}
	if (only && !strcmp(only, "permissions")) {
		add_permission_suite();
		add_cpuwide_permission_suite();
		return run_cunit();
	}
	add_machine_suites();
	add_count_suites();
	add_sample_suites();
	add_linux_suites();
	add_pes_suites();
	return run_cunit();
}

/* The new image of test_emu_linux's "an event survives exec": the event the old image opened on fd
 * EMU_TEST_EXEC_FD goes on counting here; advance 500 cycles and read it: exit 0 if it reads
 * EMU_TEST_EXEC_WANT with its times, 2 (and the count on stderr) otherwise. */
static int exec_probe(void)
{
	LOOKUP(advance, rvemu_advance);
	int fd = atoi(getenv("EMU_TEST_EXEC_FD"));
	uint64_t want = strtoull(getenv("EMU_TEST_EXEC_WANT") ? getenv("EMU_TEST_EXEC_WANT") : "0", NULL, 0);
	if (!api.advance)
		return 3;
	api.advance(500);
	uint64_t v[3] = {0, 0, 0};
	ssize_t n = read(fd, v, sizeof(v));
	if (n == (ssize_t)sizeof(v) && v[0] == want && v[1] > 0 && v[1] == v[2])
		return 0;
	fprintf(stderr, "exec_probe: read %zd bytes, count %llu (want %llu), times %llu %llu\n", n,
	        (unsigned long long)v[0], (unsigned long long)want, (unsigned long long)v[1],
	        (unsigned long long)v[2]);
	return 2;
}

/* Under rvemu-run for test_rvemu_run_stale_tables: counts cycles of process EMU_TEST_WATCH_PID (not in this
 * run), says "counting" on stdout and waits to be killed (bounded: 300 s). */
static int watch_pid(void)
{
	struct perf_event_attr a;
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int fd = perf_open(&a, (pid_t)atoi(getenv("EMU_TEST_WATCH_PID")), -1, -1, 0);
	if (fd < 0)
		return 2;
	printf("counting\n");
	fflush(stdout);
	sleep(300);
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("EMU_TEST_EXEC_FD"))
		return exec_probe();
	if (getenv("EMU_TEST_WATCH_PID"))
		return watch_pid();
	self_path = argv[0];
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	return getenv("EMU_TEST_CHILD") ? child() : launcher();
}
