#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The emulator across processes (docs/emulator-core.md "Across processes"): Debian's perf stat counts a
# command that forks and execs, exactly under the virtual clock (the sum of each task's ground truth), also
# CPU-wide (perf stat -a, refused without CAP_PERFMON); a
# counter on a child killed by SIGKILL reads what it had; perf_event_open on another process follows the
# ptrace-access rule (EACCES as an unprivileged user on root's process, ESRCH for no process).
# Env: RVEMU_RUN (rvemu-run), RVEMU_LIB; the workload mproc_child next to this script in the build tree.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=${RVEMU_RUN:?RVEMU_RUN must name rvemu-run}
child=${MPROC_CHILD:-$PWD/emu/mproc_child}
[ -x "$child" ] || child=$here/mproc_child
fails=0 passes=0
check() { # NAME EXPECTED GOT
	if [ "$2" = "$3" ]; then passes=$((passes + 1)); echo "ok: $1 ($3)"
	else fails=$((fails + 1)); echo "FAIL: $1: expected '$2', got '$3'"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# under the sanitizers (make check-asan) the emulator is instrumented: the ASan runtime goes first in LD_PRELOAD,
# where rvemu-run keeps it (perf itself is not instrumented)
[ -n "${RVEMU_ASAN_RUNTIME:-}" ] && export LD_PRELOAD=$RVEMU_ASAN_RUNTIME
command -v perf >/dev/null || { echo "FAIL: perf (Debian package linux-perf, scripts/deps.sh) is not installed"; exit 1; }

# 1. perf stat -- a command that advances 1000000 cycles, forks a child (300000) and execs itself (50000)
"$run" --clock virtual -- perf stat -x, -o "$tmp/stat" -e cycles,instructions,r80200 -- \
	"$child" adv 1000000 300000 50000 >"$tmp/truth" || echo "perf stat exited $?"
for ev in cycles instructions r80200; do
	want=$(awk -v e="$ev" '$1 == "truth" && $2 == e { s += $3 } END { print s + 0 }' "$tmp/truth")
	got=$(awk -F, -v e="$ev" '$3 == e { print $1 }' "$tmp/stat")
	check "perf stat -e $ev -- fork+exec: the sum of the tasks' truths" "$want" "$got"
done
check "perf stat cycles: 1000000 + 300000 + 50000" 1350000 "$(awk -F, '$3 == "cycles" { print $1 }' "$tmp/stat")"

# software events on the command: page faults from its exec on, also read after it is gone (its thread's
# accounting left at exit); a command that faults in 4 MiB must show at least 1024 faults (4 KiB pages)
"$run" -- perf stat -x, -o "$tmp/stat_sw" -e page-faults -- "$child" touch 4194304 >/dev/null ||
	echo "perf stat (page-faults) exited $?"
check "perf stat -e page-faults -- a command that touches 4 MiB: >= 1024" ok \
	"$(awk -F, '$3 == "page-faults" { print ($1 >= 1024 ? "ok" : $1) }' "$tmp/stat_sw")"

# threads created later are inherited too (perf_event_init_task for a thread): 400000 + 250000
"$run" --clock virtual -- perf stat -x, -o "$tmp/stat_thr" -e cycles -- "$child" thread 400000 250000 ||
	echo "perf stat (thread) exited $?"
check "perf stat -- a command whose thread advances: main + thread" 650000 \
	"$(awk -F, '$3 == "cycles" { print $1 }' "$tmp/stat_thr")"

# children made without fork(): posix_spawn (vfork + exec) and a shell's commands: 200000 + 30000, 1000000 + 500
"$run" --clock virtual -- perf stat -x, -o "$tmp/stat_spawn" -e cycles -- "$child" spawn 200000 30000 >/dev/null ||
	echo "perf stat (spawn) exited $?"
check "perf stat -- a command that posix_spawns a child" 230000 "$(awk -F, '$3 == "cycles" { print $1 }' "$tmp/stat_spawn")"
"$run" --clock virtual -- perf stat -x, -o "$tmp/stat_sh" -e cycles -- sh -c "'$child' adv 1000000 >/dev/null; '$child' adv 500 >/dev/null" ||
	echo "perf stat (sh -c) exited $?"
check "perf stat -- sh -c 'a; b'" 1000500 "$(awk -F, '$3 == "cycles" { print $1 }' "$tmp/stat_sh")"

# the CPU-time clock: the counts follow the task's CPU time, so their ratio is the profile's (the task's own
# ground truth's) within 1%, and cycles are not 0
"$run" -- perf stat -x, -o "$tmp/stat_cpu" -e cycles,instructions -- "$child" spin 50000000 >"$tmp/truth_cpu" ||
	echo "perf stat (cputime) exited $?"
check "perf stat (CPU-time clock): instructions/cycles as the task's truth within 1%" ok "$(awk -F, '
	FILENAME ~ /truth/ && $0 ~ /^truth cycles/ { split($0, f, " "); tc = f[3] }
	FILENAME ~ /truth/ && $0 ~ /^truth instructions/ { split($0, f, " "); ti = f[3] }
	FILENAME ~ /stat/ && $3 == "cycles" { c = $1 } FILENAME ~ /stat/ && $3 == "instructions" { i = $1 }
	END { if (c > 0 && tc > 0 && i / c > 0 && (i / c) / (ti / tc) > 0.99 && (i / c) / (ti / tc) < 1.01) print "ok";
	      else print "cycles " c " instructions " i ", truth " tc " " ti }' "$tmp/truth_cpu" "$tmp/stat_cpu")"

# 2. perf stat -a (CPU-wide: pid -1 on every CPU) with CAP_PERFMON counts every task of the run, per CPU
"$run" --clock virtual -- perf stat -a -A -x, -o "$tmp/stat_a" -e cycles -- \
	"$child" adv 1000000 300000 50000 >/dev/null || echo "perf stat -a exited $?"
check "perf stat -a -e cycles: every task of the run" 1350000 \
	"$(awk -F, '$4 == "cycles" && $2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' "$tmp/stat_a")"
# without CAP_PERFMON at paranoid 2, refused (perf_allow_cpu: EACCES; perf prints its access message), with
# Sscofpmf so that the user-only event passes the PMU first, as on Linux; as root with --user and as uid 65534
"$run" --user --sscofpmf -- perf stat -a -x, -e cycles -- "$child" adv 1000 >"$tmp/user_a" 2>&1
check "perf stat -a without CAP_PERFMON (--user)" "Access to performance monitoring and observability operations is limited." \
	"$(grep -m1 '^Access to performance' "$tmp/user_a")"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	cp "$child" "$tmp/mproc_child" && chmod 755 "$tmp" "$tmp/mproc_child"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$run" --sscofpmf -- perf stat -a -x, -e cycles -- \
		"$tmp/mproc_child" adv 1000 >"$tmp/nobody_a" 2>&1
	check "perf stat -a as uid 65534" "Access to performance monitoring and observability operations is limited." \
		"$(grep -m1 '^Access to performance' "$tmp/nobody_a")"
fi

# 3. a counter on a child that dies by SIGKILL after 500000 cycles
check "counter on a child killed by SIGKILL" "killed 500000" "$("$run" --clock virtual -- "$child" killed 500000)"

# 4. access: ESRCH for no such process; our own kind (same uid) may be counted
check "perf_event_open on a pid that does not exist" "open ESRCH" "$("$run" -- "$child" open 2147483646)"
sleep 30 &
target=$!
check "perf_event_open on a process of the same uid" "open ok" "$("$run" -- "$child" open $target)"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# an unprivileged user on root's process: ptrace_may_access fails, as Linux: EACCES
	check "perf_event_open on root's process as uid 65534" "open EACCES" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups "$run" -- "$tmp/mproc_child" open $target)"
else
	echo "note: not root, the unprivileged check (setpriv) is left out"
fi
kill $target 2>/dev/null
wait $target 2>/dev/null
echo "test_emu_mproc: $passes passed, $fails failed"
[ $fails -eq 0 ]
