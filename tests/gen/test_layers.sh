#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layer check of scripts/lint.sh must pass on the emulator as it is and fail on a planted back-edge:
# a machine-layer file that calls the perf core, and a cycle between two files of one layer.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
out=$("$top/scripts/check-layers.sh" 2>&1) || { echo "FAIL: the emulator as it is: $out"; fail=1; }
echo "$out"
cat >"$tmp/mach_planted.c" <<'C'
#include "perf.h"
void emu_planted(void);
void emu_planted(void) { emu_lock(); } /* the machine calling the perf core: forbidden */
C
out=$("$top/scripts/check-layers.sh" "$tmp/mach_planted.c" 2>&1)
if [ $? -eq 0 ] || ! grep -q "mach_planted.o (machine) uses emu_lock of perf_ctx.o (perf core)" <<<"$out"; then
	echo "FAIL: a planted back-edge was not reported: $out"
	fail=1
else
	echo "planted back-edge reported: $(grep mach_planted <<<"$out")"
fi
# two files of one layer calling each other
cat >"$tmp/perf_cycle_a.c" <<'C'
void perf_cycle_b(void);
void perf_cycle_a(void);
void perf_cycle_a(void) { perf_cycle_b(); }
C
cat >"$tmp/perf_cycle_b.c" <<'C'
void perf_cycle_a(void);
void perf_cycle_b(void);
void perf_cycle_b(void) { perf_cycle_a(); }
C
out=$("$top/scripts/check-layers.sh" "$tmp/perf_cycle_a.c" "$tmp/perf_cycle_b.c" 2>&1)
if [ $? -eq 0 ] || ! grep -q "cycle: perf_cycle_a.o -> perf_cycle_b.o -> perf_cycle_a.o" <<<"$out"; then
	echo "FAIL: a planted cycle was not reported: $out"
	fail=1
else
	echo "planted cycle reported: $(grep cycle <<<"$out")"
fi
[ $fail -eq 0 ] && echo "layer check: 3/3 cases as expected"
exit $fail
