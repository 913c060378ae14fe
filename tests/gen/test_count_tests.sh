#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The closing line's counts (scripts/count-tests.sh) when CUnit programs fail: a deliberately failing
# launcher and its child (built here from tests/cunit_run.h, never part of the real suite) laid out as
# automake leaves them (NAME.log + NAME.trs, test-suite.log repeating the failed logs). The counts must be
# the tests that ran, each failure once: not the child's failure again through its launcher, not the
# failed programs' logs again through test-suite.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "ok    $1: $3"; else echo "FAIL  $1: want '$2', got '$3'"; fail=1; fi
}

cat >"$tmp/failing.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cunit_run.h"

static const char *self;
static void passes(void) { CU_ASSERT_EQUAL(1 + 1, 2); }
static void fails(void) { CU_ASSERT_EQUAL(1 + 1, 3); } /* deliberately */
static int child(const char *mode)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, mode, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
static void child_with_a_failing_test(void) { CU_ASSERT(cunit_relay(child("child"))); }
static void child_that_crashes(void) { CU_ASSERT(cunit_relay(child("crash"))); }

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && strcmp(argv[1], "crash") == 0)
		abort(); /* dies before any Run Summary: only its launcher can count it */
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite(argc > 1 ? "child" : "launcher", NULL, NULL);
	if (argc > 1) { /* the child: 3 tests, 1 fails */
		CU_add_test(s, "passes", passes);
		CU_add_test(s, "passes too", passes);
		CU_add_test(s, "fails", fails);
	} else { /* the launcher: its own test, the failing child, a crashing child */
		CU_add_test(s, "passes", passes);
		CU_add_test(s, "child with a failing test", child_with_a_failing_test);
		CU_add_test(s, "child that crashes", child_that_crashes);
	}
	return cunit_run_all();
}
C
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$top/tests" "$tmp/failing.c" -o "$tmp/failing" -lcunit ||
	{ echo "FAIL: cannot build the failing CUnit program"; exit 1; }
mkdir -p "$tmp/obj/tests/area"
(cd "$tmp" && ./failing) >"$tmp/obj/tests/area/failing.log" 2>&1
rc=$?
check "the launcher's exit status (its child's tests failed)" 3 "$rc"
printf ':test-result: FAIL\n' >"$tmp/obj/tests/area/failing.trs"
# a passing program next to it
(cd "$tmp" && ./failing child) >/dev/null 2>&1 # (only to show the child alone fails too)
check "the child's exit status alone" 3 "$?"
printf 'Run Summary:    Type  Total    Ran Passed Failed Inactive\n               tests      4      4      4      0        0\n' \
	>"$tmp/obj/tests/area/passing.log"
printf ':test-result: PASS\n' >"$tmp/obj/tests/area/passing.trs"
{ # automake's test-suite.log: the totals, then the failed programs' logs again
	printf '# TOTAL: 2\n# PASS:  1\n# SKIP:  0\n# XFAIL: 0\n# FAIL:  1\n# XPASS: 0\n# ERROR: 0\n\n'
	printf 'FAIL: area/failing\n==================\n\n'
	cat "$tmp/obj/tests/area/failing.log"
} >"$tmp/obj/tests/test-suite.log"
# child: 3 run, 2 passed, 1 failed; launcher: 3 run, 2 passed (the relayed failure is the child's),
# 1 failed (the crash); the passing program: 4 run, 4 passed
check "CUnit tests (run passed failed)" "10 8 2" "$("$top/scripts/count-tests.sh" cunit "$tmp/obj/tests")"
check "test programs (run passed failed)" "2 1 1" "$("$top/scripts/count-tests.sh" programs "$tmp/obj")"
grep -q "child that crashes \.\.\.FAILED" "$tmp/obj/tests/area/failing.log"
check "the crash is the launcher's failure" 0 "$?"
# a second folder with its own tests (the build tree's profiler/): its programs and CUnit tests count too
mkdir -p "$tmp/obj/profiler"
printf 'Run Summary:    Type  Total    Ran Passed Failed Inactive\n               tests      5      5      5      0        0\n' \
	>"$tmp/obj/profiler/units.log"
printf ':test-result: PASS\n' >"$tmp/obj/profiler/units.trs"
printf '# TOTAL: 1\n# PASS:  1\n# SKIP:  0\n# XFAIL: 0\n# FAIL:  0\n# XPASS: 0\n# ERROR: 0\n' >"$tmp/obj/profiler/test-suite.log"
check "CUnit tests of the whole tree (run passed failed)" "15 13 2" "$("$top/scripts/count-tests.sh" cunit "$tmp/obj")"
check "test programs of the whole tree (run passed failed)" "3 2 1" "$("$top/scripts/count-tests.sh" programs "$tmp/obj")"
# named logs (scripts/stress.sh's sampling mode): just those programs (the launcher's log holds its child's
# Run Summary too: 6 4 2, and the profiler's 5 5 0); one that never wrote its log is unknown
check "CUnit tests of named logs (run passed failed)" "11 9 2" \
	"$("$top/scripts/count-tests.sh" cunit "$tmp/obj/tests/area/failing.log" "$tmp/obj/profiler/units.log")"
check "a named log that is missing: unknown, not 0 of 0" "? ? ?" \
	"$("$top/scripts/count-tests.sh" cunit "$tmp/obj/profiler/units.log" "$tmp/obj/tests/area/never-ran.log")"
exit $fail
