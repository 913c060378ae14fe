#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PAPI's rule for its built-in preset table (src/Makefile.inc, upstream patch 55): papi_events_table.sh stops
# with an error on a backslash in papi_events.csv after part of the header already went to its output, so the
# rule must leave no papi_events_table.h behind on a failure (make would take a partial one as up to date at the
# next build). Runs the tree's own rule and script in a scratch folder on a small table:
#   tests/papi/check-events-table-rule.sh PAPI_SRC    (a PAPI src/ folder: Makefile.inc, papi_events_table.sh)
# Prints one line per case; exit 1 if any fails.
set -uo pipefail
src=${1:?usage: check-events-table-rule.sh PAPI_SRC}
[ -f "$src/Makefile.inc" ] && [ -f "$src/papi_events_table.sh" ] ||
	{ echo "check-events-table-rule: no Makefile.inc and papi_events_table.sh in $src" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$src/papi_events_table.sh" "$work/"
# upstream's rule as it is: the target line and its recipe (the tab-led lines after it)
rule=$(awk '/^\$\(PAPI_EVENTS_TABLE\):/ { on = 1; print; next } on && /^\t/ { print; next } { on = 0 }' "$src/Makefile.inc")
[ -n "$rule" ] || { echo "check-events-table-rule: no \$(PAPI_EVENTS_TABLE) rule in $src/Makefile.inc" >&2; exit 2; }
printf 'PAPI_EVENTS_TABLE = papi_events_table.h\nPAPI_EVENTS_CSV = papi_events.csv\n%s\n' "$rule" >"$work/Makefile"
good='CPU,riscv_test_cpu
PRESET,PAPI_TOT_CYC,NOT_DERIVED,CYCLES
PRESET,PAPI_TOT_INS,NOT_DERIVED,INSTRUCTIONS'
# the backslash comes after a CPU line and a preset: the script has written the string table by then
bad="$good
PRESET,PAPI_L1_DCM,NOT_DERIVED,L1D\\MISS"
fail=0
check() { # check WHAT CONDITION...
	local what=$1
	shift
	if "$@"; then
		echo "check-events-table-rule: ok: $what"
	else
		echo "FAIL check-events-table-rule: $what"
		fail=1
	fi
}
complete() { tail -n 1 "$work/papi_events_table.h" 2>/dev/null | grep -qx '};'; }
no_tmp() { ! ls "$work"/*.tmp >/dev/null 2>&1; }
gen() { make -s -C "$work" papi_events_table.h >"$work/make.log" 2>&1; }

# 1. a good table: the header, whole
printf '%s\n' "$good" >"$work/papi_events.csv"
gen
check "a good table gives the whole header" complete
# 2. a backslash, no header before: make fails and leaves none (no temporary either)
rm -f "$work/papi_events_table.h"
printf '%s\n' "$bad" >"$work/papi_events.csv"
check "a failing generation fails the build" bash -c '! make -s -C "$1" papi_events_table.h >/dev/null 2>&1' _ "$work"
check "a failing generation leaves no papi_events_table.h" test ! -e "$work/papi_events_table.h"
check "a failing generation leaves no temporary" no_tmp
# 3. a header from a good table, then the table changes for the worse: the old header stays whole, and the next
#    make tries again (the header is still older than the table) instead of taking a partial one as up to date
rm -f "$work/papi_events_table.h"
printf '%s\n' "$good" >"$work/papi_events.csv"
gen
before=$(cksum <"$work/papi_events_table.h")
touch -d '@1000000000' "$work/papi_events_table.h"
printf '%s\n' "$bad" >"$work/papi_events.csv"
gen
check "a failing generation keeps the previous header unchanged" test "$before" = "$(cksum <"$work/papi_events_table.h")"
check "after a failing generation the header is not up to date" bash -c '! make -q -C "$1" papi_events_table.h' _ "$work"
[ $fail -eq 0 ] && echo "check-events-table-rule: 6/6 cases as expected"
exit $fail
