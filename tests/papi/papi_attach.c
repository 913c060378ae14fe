// SPDX-License-Identifier: MIT
/* PAPI_attach to a process of the run (docs/emulator-core.md "Across processes"), under the virtual clock.
 *
 * papi_attach forkexec N M K: attaches PAPI_TOT_CYC (with PAPI_INHERIT) to a child that advances N cycles,
 * forks a grandchild that advances M and execs itself to advance K; PAPI_stop must read N + M + K, and
 * without inherit N + K (the exec'd image is the same task). K "-": no exec (under qemu-user a guest cannot
 * exec a riscv64 program).
 *
 * papi_attach killed N: attaches to a child that advances N cycles and dies by SIGKILL; reads N.
 *
 * Prints "papi_attach MODE: WHAT = COUNT, expected COUNT: ok|FAILED" lines; exit 0 only if all are ok.
 * (papi_attach adv K is what the exec'd image runs.) */
#include <dlfcn.h>
#include <papi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int (*advance)(uint64_t);

static void die(const char *what, int r)
{
	printf("papi_attach: %s: %s FAILED\n", what, PAPI_strerror(r));
	exit(1);
}

/* A child that waits for the go, then runs `body`. */
static pid_t spawn(int go[2], void (*body)(char **), char **args)
{
	if (pipe(go) != 0)
		exit(1);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		body(args);
		_exit(0);
	}
	close(go[0]);
	return p;
}

static void forkexec_body(char **a)
{
	advance(strtoull(a[1], NULL, 0));
	pid_t g = fork();
	if (g == 0) {
		advance(strtoull(a[2], NULL, 0));
		_exit(0);
	}
	waitpid(g, NULL, 0);
	if (strcmp(a[3], "-") == 0)
		return;
	char *args[] = {a[0], "adv", a[3], NULL};
	execv(a[0], args);
	_exit(1);
}

static void killed_body(char **a)
{
	advance(strtoull(a[1], NULL, 0));
	kill(getpid(), SIGKILL);
}

static long long count_child(void (*body)(char **), char **args, int inherit, int *status)
{
	int es = PAPI_NULL, r, go[2];
	pid_t p = spawn(go, body, args);
	if ((r = PAPI_create_eventset(&es)) != PAPI_OK ||
	    (r = PAPI_assign_eventset_component(es, 0)) != PAPI_OK)
		die("eventset", r);
	if (inherit) {
		PAPI_option_t opt;
		memset(&opt, 0, sizeof(opt));
		opt.inherit.eventset = es;
		opt.inherit.inherit = PAPI_INHERIT_ALL;
		if ((r = PAPI_set_opt(PAPI_INHERIT, &opt)) != PAPI_OK)
			die("PAPI_set_opt(PAPI_INHERIT)", r);
	}
	if ((r = PAPI_attach(es, (unsigned long)p)) != PAPI_OK)
		die("PAPI_attach", r);
	if ((r = PAPI_add_event(es, PAPI_TOT_CYC)) != PAPI_OK)
		die("PAPI_add_event(PAPI_TOT_CYC)", r);
	if ((r = PAPI_start(es)) != PAPI_OK)
		die("PAPI_start", r);
	if (write(go[1], "g", 1) != 1)
		exit(1);
	close(go[1]);
	waitpid(p, status, 0);
	long long v = -1;
	if ((r = PAPI_stop(es, &v)) != PAPI_OK)
		die("PAPI_stop", r);
	if ((r = PAPI_detach(es)) != PAPI_OK)
		die("PAPI_detach", r);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	return v;
}

static int report(const char *mode, const char *what, long long got, long long want)
{
	printf("papi_attach %s: %s = %lld, expected %lld: %s\n", mode, what, got, want,
	       got == want ? "ok" : "FAILED");
	return got == want;
}

int main(int argc, char **argv)
{
	advance = (int (*)(uint64_t))dlsym(RTLD_DEFAULT, "rvemu_advance");
	if (!advance || argc < 3) {
		fprintf(stderr,
		        "usage: under rvemu-run --clock virtual: papi_attach forkexec N M K | killed N\n");
		return 2;
	}
	if (strcmp(argv[1], "adv") == 0) /* the exec'd image */
		return advance(strtoull(argv[2], NULL, 0)) == 0 ? 0 : 1;
	int r = PAPI_library_init(PAPI_VER_CURRENT);
	if (r != PAPI_VER_CURRENT)
		die("PAPI_library_init", r);
	int ok = 1, status;
	if (strcmp(argv[1], "forkexec") == 0 && argc == 5) {
		char *args[] = {argv[0], argv[2], argv[3], argv[4]};
		long long n = strtoll(argv[2], NULL, 0), m = strtoll(argv[3], NULL, 0);
		long long k = strcmp(argv[4], "-") == 0 ? 0 : strtoll(argv[4], NULL, 0);
		ok &= report("forkexec", "PAPI_TOT_CYC with PAPI_INHERIT (child + grandchild + exec)",
		             count_child(forkexec_body, args, 1, &status), n + m + k);
		ok &= report("forkexec", "PAPI_TOT_CYC without inherit (child + its exec)",
		             count_child(forkexec_body, args, 0, &status), n + k);
	} else if (strcmp(argv[1], "killed") == 0) {
		char *args[] = {argv[0], argv[2]};
		long long v = count_child(killed_body, args, 0, &status);
		ok &= report("killed", "PAPI_TOT_CYC of a child killed by SIGKILL", v,
		             strtoll(argv[2], NULL, 0));
		ok &= WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	} else {
		fprintf(stderr, "papi_attach: unknown mode %s\n", argv[1]);
		return 2;
	}
	return ok ? 0 : 1;
}
