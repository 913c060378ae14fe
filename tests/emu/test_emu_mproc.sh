#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The emulator across processes (docs/emulator-core.md "Across processes"): Debian's perf stat counts a
# command that forks and execs, exactly under the virtual clock (the sum of each task's ground truth), also
# CPU-wide (perf stat -a, refused without CAP_PERFMON); a
# counter on a child killed by SIGKILL reads what it had; perf_event_open on another process follows the
# ptrace-access rule (EACCES as an unprivileged user on root's process, ESRCH for no process). Debian's perf
# record samples a command, its forked child, its fork+exec'd child and one killed by SIGKILL: perf report
# names the hot function (and, with -g, its call chain); every task gets one EXIT record, a killed one too, and
# a FORK record's sample_id is the parent's; a command that ends at once (killed too) has its EXIT in every run.
# perf record -a (CPU-wide sampling) names the hot functions of a command and of its child, each sampled with
# its own pid on its own CPU, and perf itself; exact under the virtual clock.
# Env: RVEMU_RUN (rvemu-run), RVEMU_LIB; the workloads mproc_child and record_child next to this script in the
# build tree.
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

# 5. perf record -- cmd: the command's own emulator samples it into the ring perf mapped (docs/emulator-core.md
# "Across processes"); perf report names the hot function by the COMM and MMAP2 records it wrote, also in a
# forked child and in a child that forked and exec'd. The workload record_child spins in record_hot_<where>.
rec=${RECORD_CHILD:-$PWD/emu/record_child}
[ -x "$rec" ] || rec=$here/record_child
record() { # NAME RVEMU-RUN-OPTIONS... -- PERF-RECORD-OPTIONS... : perf record into $tmp/NAME.data; its exit status
	local name=$1 opts=() st
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	timeout 300 "$run" "${opts[@]}" -- perf record -q -o "$tmp/$name.data" "$@" >"$tmp/$name.out" 2>&1
	st=$?
	[ $st -eq 0 ] || { echo "perf record ($name) exited $st:"; tail -5 "$tmp/$name.out"; }
	return $st
}
# the first line of perf report: "SYMBOL SHARE" of the function with the most samples
top_symbol() {
	perf report --stdio --no-children --sort sym -i "$1" 2>/dev/null |
		awk '/^ +[0-9.]+%/ { sub("%", "", $1); print $NF, $1; exit }'
}
# SYMBOL named first, with at least MIN percent of the samples: "SYMBOL ok"
hot_check() { # FILE SYMBOL MIN
	top_symbol "$1" | awk -v s="$2" -v m="$3" '{ print ($1 == s && $2 >= m) ? s " ok" : $1 " " $2 "%" }'
}
n=50000000 # iterations of the hot loop: about 0.1 s of CPU, 100s of samples at -c 100000
record main --sscofpmf -- -e cycles -c 100000 -- "$rec" main $n
check "perf record -e cycles -c 100000 (U74, Sscofpmf) -- cmd: the hot function, >= 90%" "record_hot_main ok" \
	"$(hot_check "$tmp/main.data" record_hot_main 90)"
record thread --sscofpmf -- -e cycles -c 100000 -- "$rec" thread $n
check "perf record -- a command whose thread is hot" "record_hot_thread ok" \
	"$(hot_check "$tmp/thread.data" record_hot_thread 90)"
record fork --sscofpmf -- -e cycles -c 100000 -- "$rec" fork $n
check "perf record -- a command whose forked child is hot" "record_hot_child ok" \
	"$(hot_check "$tmp/fork.data" record_hot_child 90)"
# the child's samples carry its own pid, announced by a FORK record from the parent
# the FORK record's sample_id is the forking task's (the kernel writes it in the parent, copy_process): perf
# script prints that pid first, the body names the parent after the child
check "perf record -- fork: the FORK record's sample_id is the parent's" "ok" \
	"$(perf script --show-task-events -i "$tmp/fork.data" 2>/dev/null | awk '
		/PERF_RECORD_FORK\(/ { n++; f = $0; sub(/.*\):\(/, "", f); if ($2 + 0 != f + 0) bad = bad " " $2 "!=" f + 0 }
		END { print (n == 1 && bad == "") ? "ok" : n " FORK records" bad }')"
check "perf record -- fork: the hot samples are the child's (FORK record, another pid)" "ok" \
	"$(perf script --show-task-events -F pid,ip,sym -i "$tmp/fork.data" 2>/dev/null | awk '
		/PERF_RECORD_FORK\(/ { f = $0; sub(/.*PERF_RECORD_FORK\(/, "", f); child = f + 0; next }
		/record_hot_child/ { hot[$1 + 0]++ }
		END { for (p in hot) if (p == child && child > 0) { print "ok"; exit } print "child " child }')"
record forkexec --sscofpmf -- -e cycles -c 100000 -- "$rec" forkexec $n
check "perf record -- a command whose child forks and execs" "record_hot_exec ok" \
	"$(hot_check "$tmp/forkexec.data" record_hot_exec 90)"
check "perf record -- fork+exec: the new image's COMM record has the exec flag" 2 \
	"$(perf script --show-task-events -i "$tmp/forkexec.data" 2>/dev/null | grep -c 'PERF_RECORD_COMM exec: record_child:')"
# CVA6: the event on the PES counter (cycles:pp), records drained into the ring; exact PCs
record pes --model cva6 -- -e cycles:pp -c 100000 -- "$rec" forkexec $n
check "perf record -e cycles:pp (CVA6, PES) -- fork+exec" "record_hot_exec ok" \
	"$(hot_check "$tmp/pes.data" record_hot_exec 90)"
# under the virtual clock the samples are exact: 1000000 + 50000 cycles in the command (its exec goes on with
# the same event), 300000 in its child: 10 + 3 samples of 100000
record virt --sscofpmf --clock virtual -- -e cycles -c 100000 -- "$child" adv 1000000 300000 50000
check "perf record -c 100000 (virtual clock) -- 1050000 + a child's 300000 cycles: samples" 13 \
	"$(perf script -F period -i "$tmp/virt.data" 2>/dev/null | grep -c .)"
# --delay: the events start disabled and perf enables them later (ENABLE reaches the command's shadows); the
# exec's COMM and MMAP2 go to perf's dummy event, whose records share the cycles event's buffer (SET_OUTPUT).
# perf enables after 20 ms of wall time, and a loaded machine may give it no CPU for longer than the command
# runs (ENABLE seen 255 ms late, an idle run of the hot loop takes 80 ms: no sample at all, once): the command
# ("enabled") spins until its emulator wrote a sample of its own, then runs the hot loop, so the check does
# not depend on when perf runs; what the command says when its event never gets enabled is shown
record delay --sscofpmf -- -D 20 -e cycles -c 100000 -- "$rec" enabled $n
check "perf record -D 20 -- cmd (ENABLE later, dummy event's records through SET_OUTPUT)" "record_hot_main ok" \
	"$(hot_check "$tmp/delay.data" record_hot_main 90)$(grep -h '^record_child:' "$tmp/delay.out")"
# one CPU: the command and its child write the same ring (one event per CPU), each continuing from the other's
# head under the ring's lock; both hot functions are there, nothing is overwritten
record shared --sscofpmf --harts 1 -- -e cycles -c 100000 -- "$rec" both $n
check "perf record --harts 1 -- parent and child hot at once: both functions, >= 25% each, >= 95% together" "ok" \
	"$(perf report --stdio --no-children --sort sym -i "$tmp/shared.data" 2>/dev/null | awk '
		/^ +[0-9.]+%/ { sub("%", "", $1); share[$NF] = $1 }
		END { m = share["record_hot_main"] + 0; c = share["record_hot_child"] + 0
		      print (m >= 25 && c >= 25 && m + c >= 95) ? "ok" : "main " m "% child " c "%" }')"
check "perf record --harts 1: perf reads every record (no lost or bad records)" "0" \
	"$(perf report --stdio -i "$tmp/shared.data" 2>&1 >/dev/null | grep -ci 'lost\|error\|unprocessable\|invalid')"
# perf record -a (CPU-wide: one event per CPU, pid -1): every task of the run writes its samples into the ring of
# its CPU's event; the command and its forked child, hot at once on two harts: perf report names both functions
# (of the command's samples), each sampled with its own pid on its own CPU; perf itself, a task of the run too, is
# sampled on its CPU (mostly in the emulator: kernel samples)
record syswide --sscofpmf -- -a -e cycles -c 100000 -- "$rec" both $n
check "perf record -a -e cycles -c 100000 -- parent and child hot at once: both functions, >= 25% each, >= 95% together" "ok" \
	"$(perf report --stdio --no-children --comms record_child --percentage relative --sort sym -i "$tmp/syswide.data" 2>/dev/null | awk '
		/^ +[0-9.]+%/ { sub("%", "", $1); share[$NF] = $1 }
		END { m = share["record_hot_main"] + 0; c = share["record_hot_child"] + 0
		      print (m >= 25 && c >= 25 && m + c >= 95) ? "ok" : "main " m "% child " c "%" }')"
check "perf record -a: each hot function's samples carry one pid and one CPU, the two differ" "ok" \
	"$(perf script -F pid,cpu,ip,sym -i "$tmp/syswide.data" 2>/dev/null | awk '
		/record_hot_(main|child)/ { k = $NF; if (!(k in pid)) { pid[k] = $1; cpu[k] = $2 } else if (pid[k] != $1 || cpu[k] != $2) bad++ }
		END { m = "record_hot_main"; c = "record_hot_child"
		      print (!bad && (m in pid) && (c in pid) && pid[m] != pid[c] && cpu[m] != cpu[c]) ? "ok" : "bad " bad " " pid[m] cpu[m] " " pid[c] cpu[c] }')"
check "perf record -a: perf itself is sampled too" "ok" \
	"$(perf report --stdio --no-children --sort comm -i "$tmp/syswide.data" 2>/dev/null | awk '$2 == "perf" { print "ok"; exit }')"
check "perf record -a: FORK and EXIT of the command's child, COMM of its exec" "ok" \
	"$(perf script --show-task-events -i "$tmp/syswide.data" 2>/dev/null | awk '
		/PERF_RECORD_COMM exec: record_child:/ { e++ } /PERF_RECORD_FORK\(/ && /record_child/ { f++ } /PERF_RECORD_EXIT\(/ && /record_child/ { x++ }
		END { print (e >= 1 && f >= 1 && x >= 2) ? "ok" : "COMM exec " e ", FORK " f ", EXIT " x }')"
# under the virtual clock, exact: 1000000 + 50000 cycles in the command (its exec'd image too), 300000 in its child
record syswide_virt --sscofpmf --clock virtual -- -a -e cycles -c 100000 -- "$child" adv 1000000 300000 50000
check "perf record -a -c 100000 (virtual clock) -- 1050000 + a child's 300000 cycles: samples" 13 \
	"$(perf script -F period -i "$tmp/syswide_virt.data" 2>/dev/null | grep -c .)"
# -g: the call chain of the hot function walked by frame pointers, callee first
record graph --sscofpmf -- -g -e cycles -c 100000 -- "$rec" fork $n
check "perf record -g -- fork: the hot function's call chain" "record_hot_child record_middle record_outer main" \
	"$(perf script -F ip,sym -i "$tmp/graph.data" 2>/dev/null | awk '
		NF == 0 { if (n >= 4 && c[1] == "record_hot_child") { print c[1], c[2], c[3], c[4]; exit } n = 0; next }
		{ c[++n] = $2 }')"
check "perf report -g: the caller graph of the hot function" "ok" \
	"$(perf report --stdio --no-children -g caller -i "$tmp/graph.data" 2>/dev/null | awk '
		/record_hot_child/ && /%/ { on = 1; next } on && /---/ { on = 2 }
		on == 2 { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+$/) seen = seen " " $i }
		on == 2 && /record_hot_child/ { print (seen ~ / main record_outer record_middle record_hot_child$/ ? "ok" : seen); exit }')"

# 6. a child of the command killed by SIGKILL while sampled: its samples stay in the ring, perf record ends
record killed --sscofpmf -- -e cycles -c 100000 -- "$rec" killed $n
check "perf record -- a child killed by SIGKILL: perf record ends, its samples are kept" "record_hot_child ok" \
	"$(hot_check "$tmp/killed.data" record_hot_child 90)"
# every task gets one EXIT record, also one killed by SIGKILL (the kernel writes it in do_exit; here the first
# process of the run to see it dead): "N tasks, one EXIT each" over the tasks with a FORK, COMM or EXIT record
exit_once() { # FILE
	perf script --show-task-events -i "$1" 2>/dev/null | awk '
		/PERF_RECORD_FORK\(/ { f = $0; sub(/.*PERF_RECORD_FORK\(/, "", f); seen[f + 0] = 1 }
		/PERF_RECORD_COMM/ { c = $0; sub(/.*:/, "", c); seen[c + 0] = 1 }
		/PERF_RECORD_EXIT\(/ { e = $0; sub(/.*PERF_RECORD_EXIT\(/, "", e); seen[e + 0] = 1; ex[e + 0]++ }
		END { n = 0; for (p in seen) { n++; if (ex[p] != 1) bad = bad " " p ":" ex[p] + 0 " EXIT" }
		      print bad == "" ? n " tasks, one EXIT each" : "EXIT records:" bad }'
}
check "perf record -- a child killed by SIGKILL: its EXIT record, once" "2 tasks, one EXIT each" \
	"$(exit_once "$tmp/killed.data")"
# a shell kills its job with SIGKILL and waits for it: the job's EXIT comes before the shell's (written at the
# shell's exit, which saw it dead); also under the virtual clock
record shkill --sscofpmf -- -e cycles -c 100000 -- sh -c "'$rec' main $n & kill -9 \$!; wait"
check "perf record -- sh -c 'cmd & kill -9 \$!; wait': one EXIT per task" "2 tasks, one EXIT each" \
	"$(exit_once "$tmp/shkill.data")"
record shkillv --sscofpmf --clock virtual -- -e cycles -c 100000 -- sh -c "'$child' adv 300000 & kill -9 \$!; wait"
check "perf record (virtual clock) -- sh -c 'cmd & kill -9 \$!; wait': one EXIT per task" "2 tasks, one EXIT each" \
	"$(exit_once "$tmp/shkillv.data")"
# a command that ends at once, many times (bounded): perf record's SIGCHLD handler ends its loop, which may then
# read the rings a last time without polling again; the kernel wrote the command's EXIT before it could be
# waited for. Killed by SIGKILL (no exit path of its own: the EXIT is perf's emulator's to write, at the
# SIGCHLD, before perf's handler runs) and exiting normally (its own exit path writes it): runs with one EXIT
for how in selfkill main; do
	runs=$([ $how = selfkill ] && echo 16 || echo 8) one=0
	for i in $(seq 1 $runs); do
		(timeout 300 "$run" --sscofpmf -- perf record -q -o "$tmp/quick.data" -e cycles -c 100000 -- "$rec" $how 0) \
			>"$tmp/quick.out" 2>&1
		[ "$(perf script --show-task-events -i "$tmp/quick.data" 2>/dev/null | grep -c 'PERF_RECORD_EXIT(')" = 1 ] &&
			one=$((one + 1))
	done
	check "perf record -- a command that ends at once ($how): runs with its one EXIT record" "$runs of $runs" \
		"$one of $runs"
done
echo "test_emu_mproc: $passes passed, $fails failed"
[ $fails -eq 0 ]
