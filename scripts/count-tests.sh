#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The counts of the test command's closing line (scripts/test.sh), from what `make check` left behind:
#   count-tests.sh cunit DIR|LOG...
#                                 "run passed failed": the individual CUnit tests, summed over the "tests"
#                                 rows of the Run Summaries in the log of each test program under each DIR
#                                 (the build tree: tests/ and the profiler's test_prof_units alike), or
#                                 in each named LOG ("? ? ?" when a named LOG is missing)
#   count-tests.sh programs DIR   "run passed failed": the test programs as automake counted them
#                                 (every test-suite.log under DIR: tests/, profiler/, ...)
# Only a test's own log counts (automake writes NAME.log next to NAME.trs); test-suite.log repeats the
# logs of the programs that failed and is never read for CUnit counts. A launcher's children print their
# Run Summaries into the launcher's log, each once; a child's failures are not counted again by its
# launcher (tests/cunit_run.h: cunit_relay).
set -uo pipefail
[ $# -ge 2 ] && { [ "$1" = cunit ] || [ $# -eq 2 ]; } ||
	{ echo "usage: count-tests.sh cunit DIR|LOG... | count-tests.sh programs DIR" >&2; exit 2; }
case $1 in
cunit)
	for where in "${@:2}"; do # a named log that is not there: its program never ran, the count is unknown
		case $where in *.log) [ -f "$where" ] || { echo "? ? ?"; exit 0; } ;; esac
	done
	for where in "${@:2}"; do
		if [ -f "$where" ]; then # one program's log, named
			printf '%s\0' "$where"
			continue
		fi
		find "$where" -name '*.trs' -print0 2>/dev/null | while IFS= read -r -d '' trs; do
			log=${trs%.trs}.log
			[ -f "$log" ] && printf '%s\0' "$log"
		done
	done | xargs -0 -r awk '
		$1 == "tests" && NF >= 5 { run += $3; passed += $4; bad += $5 }
		END { printf "%d %d %d\n", run, passed, bad }' | grep . || echo "0 0 0"
	;;
programs)
	find "$2" -name test-suite.log -print0 2>/dev/null | xargs -0 -r awk '
		/^# (TOTAL|PASS|FAIL|ERROR|XFAIL|XPASS|SKIP):/ { n[$2] += $3 }
		END { printf "%d %d %d\n", n["TOTAL:"], n["PASS:"], n["FAIL:"] + n["ERROR:"] + n["XPASS:"] }' |
		grep . || echo "0 0 0"
	;;
*) echo "count-tests.sh: unknown count '$1' (cunit or programs)" >&2; exit 2 ;;
esac
