#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PAPI checks of the papi stage (scripts/build-papi.sh check): run-papi-tests.sh in PAPI_CHECK_PARTS parts
# (default 2, PAPI_TEST_SHARD) started at once, the robustness corpus after part 0 and the examples after the
# last part, so the two cores share the work. The checks run each on one core at a time (a ctest under the
# CPU-time clock spends the time it counts), so one after another they left a core idle for most of the stage.
# Each part's output is printed whole, in order, after all have finished; then one summary line adds up the
# parts' ("papi tests: N ok, X xfail (documented), F failed"), as one run would have printed it.
# Env: as run-papi-tests.sh (RVPAPI_BUILD, PAPI_TREE, PREFIX). Exit status 1 if any check failed or a part did
# not finish.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
parts=${PAPI_CHECK_PARTS:-2}
[[ "$parts" =~ ^[1-9]$ ]] || { echo "run-papi-checks: PAPI_CHECK_PARTS must be 1..9, not '$parts'" >&2; exit 2; }
work=$build/papi-tests
mkdir -p "$work"
rm -f "$work"/part-*.txt "$work/examples.txt" "$work/robustness.txt" # never an earlier run's

part() { # part I: part I of run-papi-tests.sh, then the robustness corpus (part 0) or the examples (the last)
	local i=$1 rc=0
	PAPI_TEST_SHARD="$i/$parts" "$top/tests/papi/run-papi-tests.sh" >"$work/part-$i.txt" 2>&1 || rc=1
	if [ "$i" = 0 ]; then
		"$top/tests/papi/run-papi-robustness.sh" >"$work/robustness.txt" 2>&1 || rc=1
	fi
	if [ "$i" = $((parts - 1)) ]; then
		"$top/tests/papi/run-papi-examples.sh" >"$work/examples.txt" 2>&1 || rc=1
	fi
	return $rc
}

pids=()
for ((i = 0; i < parts; i++)); do
	part "$i" &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do
	wait "$p" || failed=1
done

summary='^papi tests: \([0-9]*\) ok, \([0-9]*\) xfail (documented), \([0-9]*\) failed$'
counts=
for ((i = 0; i < parts; i++)); do
	f=$work/part-$i.txt
	# a part's own summary is one of several: name it so the stage's log has one "papi tests:" line
	sed "s/^papi tests: /papi tests, part $i of $parts: /" "$f"
	c=$(sed -n "s/$summary/\1 \2 \3/p" "$f")
	[ -n "$c" ] || { echo "FAIL  part $i of $parts did not finish (see $f)"; c="0 0 1"; failed=1; }
	counts+="$c"$'\n'
done
awk 'NF { o += $1; x += $2; f += $3 } END { print "papi tests: " o " ok, " x " xfail (documented), " f " failed" }' \
	<<<"$counts"
cat "$work/examples.txt" "$work/robustness.txt"
exit $failed
