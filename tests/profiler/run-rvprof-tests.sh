#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rvprof end to end (scripts/test.sh, stage "profiler"): the installed rvprof runs examples/prof_workload.c
# under the installed emulator. With the virtual clock every count is exact: 10 iterations of 7 + 2 + 1
# units of 100000 cycles, sampled every 100000 cycles, are exactly 70 samples in hot_kernel, 20 in
# warm_kernel, 10 in cold_kernel. Checked: rvprof's report, perf report and perf script on its perf.data,
# its folded stacks, call stacks (-g), threads, children (fork, exec, posix_spawn: tests/profiler/prof_cases.c),
# --no-inherit, a CPU-time run, bad input and exit statuses.
# Env: PREFIX (default build/prefix); RVPROF, RVEMU_RUN override the programs; CC.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=${PREFIX:-${RVPAPI_BUILD:-$top/build}/prefix}
RVPROF=${RVPROF:-$PREFIX/bin/rvprof}
RUN=${RVEMU_RUN:-$PREFIX/bin/rvemu-run}
CC=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/rvprof-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
# every run's temporary files go here (and the last test checks that none is left)
mkdir "$work/tmp"
export TMPDIR=$work/tmp
pass=0
fail=0

ok() {
	echo "ok   $1"
	pass=$((pass + 1))
}
bad() {
	echo "FAIL $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/     | /'
	fail=$((fail + 1))
}
check() { # check NAME COMMAND...: passes when the command succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

[ -x "$RVPROF" ] || { echo "no rvprof at $RVPROF"; exit 1; }
[ -x "$RUN" ] || { echo "no rvemu-run at $RUN"; exit 1; }
command -v perf > /dev/null || { echo "perf is missing (linux-perf; scripts/deps.sh installs it)"; exit 1; }
$CC -std=c11 -O2 -g -pthread "$top/examples/prof_workload.c" -o "$work/prof_workload" -ldl || exit 1
$CC -std=c11 -O2 -g -pthread -I"$top/profiler" "$top/tests/profiler/prof_cases.c" -o "$work/prof_cases" -ldl || exit 1
W=$work/prof_workload
C=$work/prof_cases

# prof ARGS...: rvprof under the emulated CVA6 with the virtual clock; stdout, stderr and status in $work/
# (the virtual clock's interrupt skid is set to its documented default, 32 cycles, which the counts below assume).
# Bounded: after PROF_TIMEOUT seconds (default 300) timeout(1) ends the whole process group (SIGKILL 5 s later),
# status 124; nothing here takes more than a few seconds unless it hangs.
prof() {
	local skid=()
	[ "${CLOCK:-virtual}" = virtual ] && skid=(env RVEMU_IRQ_SKID=32)
	timeout -k 5 "${PROF_TIMEOUT:-300}" "${skid[@]}" "$RUN" --model "${MODEL:-cva6}" --clock "${CLOCK:-virtual}" \
		${EMU_ARGS:-} -- "$RVPROF" "$@" > "$work/out" 2> "$work/err"
	echo $? > "$work/rc"
}
rc() { cat "$work/rc"; }
# hist N: the Nth line of the histogram ("samples % bar function (module)")
hist() { awk '/^hot functions/ { on = 1; getline; next } on && NF == 0 { exit } on' "$work/out" | sed -n "${1}p"; }
hist_is() { # hist_is N SAMPLES PERCENT FUNCTION
	local l
	l=$(hist "$1")
	[[ $l =~ ^\ *$2\ +$3%\ +#+\ +$4\ \(prof_workload\)$ ]] || { echo "line $1: '$l'"; return 1; }
}
# perf_first FILE: the hottest symbol perf report names, and its share
perf_first() { perf report --stdio --no-children -g none -i "$1" --sort sym 2> /dev/null | awk '!/^#/ && /%/ { print $1, $3; exit }'; }
# folded_ok FILE SAMPLES: "frame;frame count" lines, root first, counts summing to SAMPLES
folded_ok() {
	awk -v want="$2" '
		!/^[^; ][^;]*(;[^;]+)* [0-9]+$/ { print "bad line " NR ": " $0; bad = 1 }
		{ sum += $NF }
		END { if (sum != want) { print "counts sum to " sum ", not " want; bad = 1 } exit bad }' "$1"
}

# ---- the hot function, exact counts, exit status, perf.data, folded stacks
prof -c 100000 -o "$work/perf.data" --folded "$work/folded" -- "$W" --exit 3 100000 10
check "the program's exit status passes through (3)" test "$(rc)" = 3
if hist_is 1 70 70.00 hot_kernel && hist_is 2 20 20.00 warm_kernel && hist_is 3 10 10.00 cold_kernel; then
	ok "hot_kernel first with exactly 70 of 100 samples, then warm 20, cold 10"
else
	bad "hot_kernel first with exactly 70 of 100 samples" "$(cat "$work/out" "$work/err")"
fi
check "header: event, threshold, 100 samples, none lost" grep -qE '^  samples +100, lost 0 ' "$work/out"
check "header: precise (PES), every sample exact" grep -q '100 of 100 samples marked exact' "$work/out"
check "header: precise yes" grep -qE '^  precise +yes \(precise_ip 2' "$work/out"
check "header: emulated counts are synthetic" grep -qE '^  emulated +model cva6, virtual clock: counts are synthetic' "$work/out"
check "header: 64-record PES buffer: 100 samples in 2 interrupts at most" \
	grep -qE '^  interrupts +[12] \(' "$work/out"
first=$(perf_first "$work/perf.data")
check "perf report names hot_kernel first (70.00%): got '$first'" test "$first" = "70.00% hot_kernel"
check "perf report: 100 samples of PAPI_TOT_CYC" \
	bash -c "perf report --stdio -i '$work/perf.data' 2>/dev/null | grep -q \"^# Samples: 100  of event 'PAPI_TOT_CYC'\""
n=$(perf report -D -i "$work/perf.data" 2> /dev/null | grep -c 'PERF_RECORD_SAMPLE(IP, 0x4002)')
check "perf.data: all 100 samples carry PERF_RECORD_MISC_EXACT_IP (got $n)" test "$n" = 100
check "folded stacks: valid format, counts sum to 100" folded_ok "$work/folded" 100
check "folded stacks without -g: the sampled function alone" grep -qx 'hot_kernel 70' "$work/folded"

# ---- call stacks (-g) on the U74 with Sscofpmf: one interrupt per sample, every stack unwound. Not precise:
# the overflow interrupt is taken RVEMU_IRQ_SKID (32) cycles late, so a sample at the very end of a kernel's
# rvemu_advance() lands in the next call: hot_kernel keeps 69 (the previous cold_kernel's last sample comes
# in, its own last goes to warm_kernel), and the very last sample lands in the emulator, inside the system call
# that stops sampling at exit: a sample taken in the (emulated) kernel, which Linux drops for an event that
# excludes the kernel (docs/emulator-core.md), so 99 samples reach the profile.
MODEL=sifive-u74 EMU_ARGS=--sscofpmf prof -g -c 100000 -o "$work/perf-g.data" \
	--folded "$work/folded-g" --svg "$work/flame-g.svg" -- "$W" 100000 10
check "-g on the U74 (Sscofpmf): exit 0" test "$(rc)" = 0
check "-g: folded stacks valid, counts sum to 99" folded_ok "$work/folded-g" 99
check "-g: 69 hot samples, all with the stack main;run_iterations;compute_step;hot_kernel" \
	grep -qE '(^|;)main;run_iterations;compute_step;hot_kernel 69$' "$work/folded-g"
check "-g: warm_kernel 20 and cold_kernel 10 through compute_step" bash -c \
	"grep -qE ';main;run_iterations;compute_step;warm_kernel 20$' '$work/folded-g' &&
	 grep -qE ';main;run_iterations;compute_step;cold_kernel 10$' '$work/folded-g'"
check "-g: the skidded last sample, in the emulated kernel, is not charged to the program" bash -c \
	"! grep -qE 'rvsample_stop|librvemu' '$work/folded-g'"
check "-g: the report's top call stack ends main > ... > hot_kernel" \
	grep -qE '^ +69 +69\.70%  .*main > run_iterations > compute_step > hot_kernel$' "$work/out"
check "-g: precise refused on the U74 is said so" grep -q 'the PMU refused precise sampling' "$work/out"
check "-g: one interrupt per sample" grep -qE '^  interrupts +99 \(1\.0 samples per interrupt' "$work/out"
# the flame graph (--svg): valid SVG; a box per frame, merged by callers: main once, across all 99 samples (the
# full width), hot_kernel's box 69 samples wide above compute_step's 99, each box's tooltip with its count
svg_ok() {
	python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
width = float(root.get("width"))
boxes = []
for g in root.findall("s:g", ns):
    m = re.fullmatch(r"(.*) \((\d+) samples, [0-9.]+%\)", g.find("s:title", ns).text)
    r = g.find("s:rect", ns)
    boxes.append((m.group(1), int(m.group(2)), float(r.get("x")), float(r.get("y")), float(r.get("width"))))
def one(name):
    found = [b for b in boxes if b[0] == name]
    assert len(found) == 1, f"{name}: {len(found)} boxes"
    return found[0]
main, step, hot = one("main"), one("compute_step"), one("hot_kernel")
assert main[1] == 99 and abs(main[4] - (width - 20)) < 0.01, f"main {main}"
assert step[1] == 99 and hot[1] == 69, f"compute_step {step}, hot_kernel {hot}"
assert abs(hot[4] / main[4] - 69 / 99) < 1e-3, "hot_kernel's width is not its share"
assert hot[3] < step[3] < main[3], "callees are not above their callers"
assert step[2] <= hot[2] and hot[2] + hot[4] <= step[2] + step[4] + 0.01, "hot_kernel is not within compute_step"
print(f"{len(boxes)} boxes")
PY
}
check "-g --svg: a flame graph: main 99 samples wide, hot_kernel 69 above compute_step, within it" \
	svg_ok "$work/flame-g.svg"
check "-g --svg: the report names the file" grep -q "^flame graph written to $work/flame-g.svg" "$work/out"
chain=$(perf script -i "$work/perf-g.data" -F ip,sym 2> /dev/null | awk '
	/^$/ { if (n) print s; s = ""; n = 0; next } { s = s (n++ ? ">" : "") $2 } END { if (n) print s }' |
	sort | uniq -c | sort -rn | head -1)
check "-g: perf script's call chains: hot_kernel>compute_step>run_iterations>main (got '$chain')" \
	bash -c "[[ '$chain' =~ ^\ *69\ hot_kernel\>compute_step\>run_iterations\>main\> ]]"
# libc's frames below main: perf names __libc_start_call_main (a local function of libc, from libc6-dbg's debug
# file) and __libc_start_main; rvprof reads the same debug file (by build ID) and names them too, not
# "[unknown] (libc.so.6)"
perf_libc=$(echo "$chain" | grep -oE 'main>__libc_start_call_main>__libc_start_main' || true)
check "-g: libc's frames named as perf names them (perf: '${perf_libc:-none}')" bash -c \
	"[ -n '$perf_libc' ] && grep -qE '^_start;__libc_start_main;__libc_start_call_main;main;run_iterations;compute_step;hot_kernel 69$' '$work/folded-g' &&
	 ! grep -q 'unknown' '$work/folded-g'"
first=$(perf_first "$work/perf-g.data")
check "-g: perf report names hot_kernel first (got '$first')" test "$first" = "69.70% hot_kernel"

# ---- -g on CVA6 (PES): with a call stack asked for, one record per interrupt (Linux's large-PEBS rule),
# still precise: exactly 70 hot samples, each with its stack
prof -g -c 100000 -o "$work/perf-pes.data" --folded "$work/folded-pes" -- "$W" 100000 10
check "-g on CVA6: folded stacks valid, counts sum to 100" folded_ok "$work/folded-pes" 100
check "-g on CVA6: 70 hot samples, all with main;run_iterations;compute_step;hot_kernel" \
	grep -qE '(^|;)main;run_iterations;compute_step;hot_kernel 70$' "$work/folded-pes"
check "-g on CVA6: one interrupt per sample, all exact" bash -c \
	"grep -qE '^  interrupts +100 \(1\.0 samples per interrupt' '$work/out' && grep -q '100 of 100 samples marked exact' '$work/out'"
first=$(perf_first "$work/perf-pes.data")
check "-g on CVA6: perf report names hot_kernel first (got '$first')" test "$first" = "70.00% hot_kernel"

# ---- a stripped program with its symbols in a separate debug file found through .gnu_debuglink (objcopy, as
# Debian's dh_strip makes them; no /usr/lib/debug/.build-id/ file for it, so the debuglink and its CRC decide)
mkdir -p "$work/dbg" "$work/dbg-wrong"
if objcopy --only-keep-debug "$W" "$work/dbg/pw.debug" && objcopy --strip-all --add-gnu-debuglink="$work/dbg/pw.debug" \
	"$W" "$work/dbg/pw" && ! readelf -S "$work/dbg/pw" | grep -q '\.symtab'; then
	prof -c 100000 -- "$work/dbg/pw" 100000 10
	l=$(hist 1)
	check "stripped program, debug file by .gnu_debuglink: hot_kernel named (got '$(echo $l)')" \
		grep -qE '^ *70 +70\.00% +#+ +hot_kernel \(pw\)$' <<<"$l"
	# the same debuglink name with other contents (another build): the CRC differs, the file is not used
	cp "$work/dbg/pw" "$work/dbg-wrong/pw"
	$CC -std=c11 -O0 -g -pthread "$top/examples/prof_workload.c" -o "$work/dbg-wrong/other" -ldl &&
		objcopy --only-keep-debug "$work/dbg-wrong/other" "$work/dbg-wrong/pw.debug"
	prof -c 100000 -- "$work/dbg-wrong/pw" 100000 10
	l=$(hist 1)
	check "a debug file whose CRC does not match is not used (got '$(echo $l)')" \
		grep -qE '^ *100 +100\.00% +#+ +\[unknown\] \(pw\)$' <<<"$l"
else
	bad "objcopy could not make a stripped program with a .gnu_debuglink"
fi

# ---- threads: every thread the program creates is sampled
prof -c 100000 -o "$work/perf-t.data" -- "$W" --threads 4 100000 10
if hist_is 1 280 70.00 hot_kernel && hist_is 2 80 20.00 warm_kernel && hist_is 3 40 10.00 cold_kernel; then
	ok "4 threads: 280/80/40 samples (each thread's 70/20/10)"
else
	bad "4 threads: 280/80/40 samples" "$(cat "$work/out" "$work/err")"
fi
check "4 threads: 5 threads sampled (main and 4)" grep -qE '^  threads +5 sampled' "$work/out"
tids=$(perf script -i "$work/perf-t.data" -F tid 2> /dev/null | sort | uniq -c | awk '{ print $1 }' | sort -u | paste -sd, -)
check "4 threads: perf.data has 4 threads of 100 samples each (got $tids)" test "$tids" = 100

# ---- CPU-time clock: samples fall where CPU time goes (shares not asserted exactly: host dependent)
CLOCK=cputime prof -c 50000 -- "$W" --spin 200000 100
l=$(hist 1)
if [ "$(rc)" = 0 ] && [[ $l =~ hot_kernel ]]; then ok "CPU-time clock: hot_kernel first ($l)"; else
	bad "CPU-time clock: hot_kernel first" "$(cat "$work/out" "$work/err")"; fi
check "CPU-time clock: no sample charged to the emulator (time in it is the kernel's, issue 20 item 9)" bash -c \
	"! grep -qE 'librvemu|\(ioctl|ioctl \(' '$work/out'"
check "CPU-time clock: the header says what emulated counts mean" \
	grep -qE '^  emulated +model cva6, CPU-time clock: counts are synthetic' "$work/out"

# ---- --no-precise: on the U74 with Sscofpmf (CVA6 has no overflow interrupt: PES is its only sampling); the
# skid shows (69 hot samples, not 70, as above); --progress
MODEL=sifive-u74 EMU_ARGS=--sscofpmf prof --no-precise --progress -c 100000 -- "$W" 100000 10
check "--no-precise: precise no, as asked" grep -qE '^  precise +no \(as asked\)' "$work/out"
check "--no-precise: samples not marked exact" bash -c "! grep -q 'marked exact' '$work/out'"
check "--no-precise: hot_kernel first with 69 of 99 samples (skid moved one, the last into the kernel)" hist_is 1 69 69.70 hot_kernel
check "--progress: a final progress line on stderr" grep -qE '^rvprof: 99 samples in [0-9]+ batches' "$work/err"

# ---- bad input: clear messages, rvprof's own exit status (125), 126/127 for the program
expect_error() { # expect_error NAME STATUS PATTERN -- RVPROF ARGS...
	local name=$1 status=$2 pattern=$3
	shift 4
	prof "$@"
	if [ "$(rc)" = "$status" ] && grep -qE "$pattern" "$work/err"; then ok "$name"; else
		bad "$name: want status $status and /$pattern/" "status $(rc)" "$(cat "$work/err")"; fi
}
expect_error "unknown option" 125 "^rvprof: unknown option --bogus \(see --help\)" -- --bogus -- "$W" 1 1
expect_error "unknown short option" 125 "^rvprof: unknown option -x" -- -x "$W" 1 1
expect_error "-c 0" 125 "^rvprof: -c needs a positive number, not '0'" -- -c 0 -- "$W" 1 1
expect_error "-c abc" 125 "^rvprof: -c needs a positive number, not 'abc'" -- -c abc -- "$W" 1 1
expect_error "-c without a value" 125 "^rvprof: option -c needs a value" -- -c
expect_error "--precise 5" 125 "^rvprof: --precise needs a level 0-3" -- --precise 5 -- "$W" 1 1
expect_error "no program" 125 "^rvprof: no program to run" --
expect_error "unknown event" 125 "^rvprof: event NO_SUCH_EVENT: no such event on this machine" \
	-- -e NO_SUCH_EVENT -- "$W" 100000 1
expect_error "unwritable -o" 125 "^rvprof: -o /nonexistent/dir/perf.data: cannot write: No such file or directory" \
	-- -o /nonexistent/dir/perf.data -- "$W" 100000 1
expect_error "unwritable --folded" 125 "^rvprof: --folded $work: is a directory" -- --folded "$work" -- "$W" 100000 1
expect_error "unwritable --svg" 125 "^rvprof: --svg $work: is a directory" -- --svg "$work" -- "$W" 100000 1
expect_error "program not found" 127 "^rvprof: cannot run /nonexistent/prog: No such file or directory" \
	-- /nonexistent/prog
expect_error "program not executable" 126 "^rvprof: cannot run .*/prof_workload.c: Permission denied" \
	-- "$top/examples/prof_workload.c"
MODEL=sifive-u74 expect_error "--precise 2 required on the U74 (no PES)" 125 "^rvprof: sampling PAPI_TOT_CYC .*precise" \
	-- --precise 2 -c 100000 -- "$W" 100000 1
expect_error "--no-precise on CVA6: no overflow interrupt, so only PES samples" 125 \
	"^rvprof: sampling PAPI_TOT_CYC every 100000 events: .*no counter-overflow interrupt" \
	-- --no-precise -c 100000 -- "$W" 100000 1
TMPDIR=/nonexistent/tmp expect_error "TMPDIR that does not exist" 125 \
	"^rvprof: cannot create the state file in /nonexistent/tmp: No such file or directory \(set TMPDIR" \
	-- -c 100000 -- "$W" 100000 1
check "an agent error prints no progress line" bash -c "! grep -q 'samples in' '$work/err'"
MODEL=sifive-u74 expect_error "the U74 without Sscofpmf cannot sample" 125 "^rvprof: sampling PAPI_TOT_CYC every 100000 events: .*Sscofpmf" \
	-- -c 100000 -- "$W" 100000 1
prof -c 100000 -- sh -c 'kill -TERM $$'
check "a program killed by a signal: status 128+15 passes through" test "$(rc)" = 143

# ---- issue 20: programs that used to hang rvprof or lose the profile (tests/profiler/prof_cases.c: one sample
# per work() call)
# main ends with pthread_exit, its 3 threads end normally: the process ends (the agent's flusher thread used to
# keep it alive with every signal blocked: timeout's 124), with every thread's samples
PROF_TIMEOUT=120 prof -c 100000 -o "$work/perf-px.data" -- "$C" pthread-exit 100000 10 3
check "pthread_exit in main: the program ends, status 0 (got $(rc))" test "$(rc)" = 0
check "pthread_exit in main: 30 samples, all in work(), 4 threads sampled" bash -c \
	"grep -qE '^ +30 +100\.00% +#+ +work \(prof_cases\)$' '$work/out' && grep -qE '^  threads +4 sampled' '$work/out'"
tids=$(perf script -i "$work/perf-px.data" -F tid 2> /dev/null | sort | uniq -c | awk '{ print $1 }' | paste -sd, -)
check "pthread_exit in main: perf.data has 3 threads of 10 samples (got $tids)" test "$tids" = 10,10,10

# ---- children, followed as perf record follows them (issue 17): one profile, each process with its pid and
# command; perf report reads the same from the perf.data (FORK, COMM, MMAP2, EXIT records)
# perf_by SORT FILE: perf report's "share key..." lines, sorted by SORT (e.g. comm,sym or pid)
perf_by() { perf report --stdio --no-children -g none -i "$2" --sort "$1" 2> /dev/null | awk '!/^#/ && /%/' | sed -E 's/ +/ /g; s/^ //'; }
# records FILE TYPE: how many PERF_RECORD_TYPE records perf report -D finds (COMM exec counted as "COMM exec")
records() { perf report -D -i "$1" 2> /dev/null | grep -cE "^[0-9]+ 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_$2[:(]"; }
# fork: the child returns from main (exit() flushes its copies of stdio buffers): it is sampled too
prof --progress -c 100000 -o "$work/perf-fork.data" -- "$C" fork 100000 10
check "fork: the program's status 0 passes through (got $(rc))" test "$(rc)" = 0
check "fork: the parent's 20 and the child's 10 samples, all in work()" \
	grep -qE '^ +30 +100\.00% +#+ +work \(prof_cases\)$' "$work/out"
check "fork: --progress counts every process (got '$(tail -1 "$work/err")')" \
	grep -qE '^rvprof: 30 samples in [0-9]+ batches, 2 processes, ' "$work/err"
check "fork: the header lists both processes (20 and 10 samples, the child forked by the parent)" bash -c \
	"grep -qE '^  processes +2 program images sampled' '$work/out' &&
	 grep -qE '^ +pid ([0-9]+) +prof_cases +20 samples  started by rvprof$' '$work/out' &&
	 grep -qE '^ +pid [0-9]+ +prof_cases +10 samples  forked by [0-9]+$' '$work/out'"
pids=$(perf_by pid "$work/perf-fork.data" | awk '{ print $1 }' | paste -sd, -)
check "fork: perf report by pid: 66.67% and 33.33% (got '$pids')" test "$pids" = "66.67%,33.33%"
recs="$(records "$work/perf-fork.data" FORK) $(records "$work/perf-fork.data" COMM) $(records "$work/perf-fork.data" EXIT)"
check "fork: perf.data has 1 FORK, 2 COMM and 2 EXIT records (got $recs)" test "$recs" = "1 2 2"
# the FORK record names the parent's pid, the child's pid is the one of its samples
fork_rec=$(perf report -D -i "$work/perf-fork.data" 2> /dev/null | sed -nE 's/.*PERF_RECORD_FORK\(([0-9]+):[0-9]+\):\(([0-9]+):[0-9]+\).*/\1 \2/p')
child_pid=${fork_rec% *} parent_pid=${fork_rec#* }
per_pid=$(perf script -i "$work/perf-fork.data" -F pid 2> /dev/null | awk -v c="$child_pid" -v p="$parent_pid" \
	'$1 == c { nc++ } $1 == p { np++ } END { print nc + 0, np + 0 }')
check "fork: FORK($child_pid from $parent_pid): the child's pid has 10 samples, the parent's 20 (got $per_pid)" \
	bash -c "[ -n '$fork_rec' ] && [ '$per_pid' = '10 20' ]"

# the child runs another function: named under the child, in the report and in perf report
prof -c 100000 -o "$work/perf-fh.data" --folded "$work/folded-fh" -- "$C" fork-hot 100000 10 3
check "fork-hot: status 0 (got $(rc))" test "$(rc)" = 0
check "fork-hot: child_hot 30 samples (the child's), work 20 (the parent's)" bash -c \
	"grep -qE '^ +30 +60\.00% +#+ +child_hot \(prof_cases\)$' '$work/out' &&
	 grep -qE '^ +20 +40\.00% +#+ +work \(prof_cases\)$' '$work/out'"
by=$(perf_by pid,sym "$work/perf-fh.data" | paste -sd'|' -)
check "fork-hot: perf report names child_hot in the child's pid, work in the parent's (got '$by')" \
	bash -c "[[ '$by' =~ ^60\.00%\ ([0-9]+):prof_cases\ \[\.\]\ child_hot\|40\.00%\ ([0-9]+):prof_cases\ \[\.\]\ work$ ]] &&
	[ \"\${BASH_REMATCH[1]}\" != \"\${BASH_REMATCH[2]}\" ]"
check "fork-hot: one command, so the folded stacks have no command frame" bash -c \
	"grep -qx 'child_hot 30' '$work/folded-fh' && grep -qx 'work 20' '$work/folded-fh'"

# fork + exec of another program: its functions under its own command name
prof -c 100000 -o "$work/perf-fx.data" --folded "$work/folded-fx" --svg "$work/flame-fx.svg" -- \
	"$C" fork-exec 100000 10 "$W" 100000 10
check "fork-exec: status 0 (got $(rc))" test "$(rc)" = 0
if grep -qE '^ +70 +58\.33% +#+ +prof_workload: hot_kernel \(prof_workload\)$' "$work/out" &&
	grep -qE '^ +20 +16\.67% +#+ +prof_cases: work \(prof_cases\)$' "$work/out" &&
	grep -qE '^ +20 +16\.67% +#+ +prof_workload: warm_kernel \(prof_workload\)$' "$work/out"; then
	ok "fork-exec: the report names prof_workload: hot_kernel 70, prof_cases: work 20 (command column)"
else
	bad "fork-exec: the report names each command's functions" "$(cat "$work/out" "$work/err")"
fi
check "fork-exec: three images: the program, its child, what the child exec'd (0 + 100 samples)" bash -c \
	"grep -qE '^  processes +3 program images sampled' '$work/out' &&
	 grep -qE '^ +pid [0-9]+ +prof_cases +0 samples  forked by [0-9]+$' '$work/out' &&
	 grep -qE '^ +pid [0-9]+ +prof_workload +100 samples  exec.d$' '$work/out'"
by=$(perf_by comm,sym "$work/perf-fx.data" | head -2 | paste -sd'|' -)
check "fork-exec: perf report names hot_kernel under prof_workload (got '$by')" \
	test "$by" = "58.33% prof_workload [.] hot_kernel|16.67% prof_cases [.] work"
check "fork-exec: perf.data: the exec is a COMM record with PERF_RECORD_MISC_COMM_EXEC" bash -c \
	"perf report -D -i '$work/perf-fx.data' 2>/dev/null | grep -qE 'PERF_RECORD_COMM exec: prof_workload:'"
check "fork-exec: folded stacks: the command as the root frame, counts sum to 120" bash -c \
	"folded_ok() { $(declare -f folded_ok | tail -n +2); }; folded_ok '$work/folded-fx' 120 &&
	 grep -qx 'prof_workload;hot_kernel 70' '$work/folded-fx' && grep -qx 'prof_cases;work 20' '$work/folded-fx'"
check "fork-exec: the flame graph has a box per command" bash -c \
	"grep -q '<title>prof_workload (100 samples' '$work/flame-fx.svg' && grep -q '<title>prof_cases (20 samples' '$work/flame-fx.svg'"

# the program execs itself into another: the same pid, two commands
prof -c 100000 -o "$work/perf-x.data" -- "$C" exec 100000 10 "$W" 100000 10
check "exec: status 0 (got $(rc))" test "$(rc)" = 0
check "exec: 10 samples before the exec (prof_cases: work), 100 after (prof_workload)" bash -c \
	"grep -qE '^ +10 +9\.09% +#+ +prof_cases: work \(prof_cases\)$' '$work/out' &&
	 grep -qE '^ +70 +63\.64% +#+ +prof_workload: hot_kernel \(prof_workload\)$' '$work/out' &&
	 grep -qE '^ +pid ([0-9]+) +prof_workload +100 samples  exec.d$' '$work/out'"
check "exec: no message that the program ended without exit()" bash -c "! grep -q 'without exit' '$work/err'"
by=$(perf_by pid,comm "$work/perf-x.data" | awk '{ print $2, $3 }' | sort | uniq | wc -l)
check "exec: perf report: one pid, two commands (got $by pid+command pairs)" test "$by" = 2

# an exec that fails: the program sees exec's errno (its perror), samples on in new files, its status passes through
prof -c 100000 -- "$C" exec 100000 10 /nonexistent/prog
check "failed exec: the program's status 2 and its errno (got $(rc): '$(head -1 "$work/err")')" bash -c \
	"[ '$(rc)' = 2 ] && grep -qx 'prof_cases: execvp: No such file or directory' '$work/err'"
check "failed exec: the samples before it kept, the image resumed" bash -c \
	"grep -qE '^ +10 +100\.00% +#+ +work \(prof_cases\)$' '$work/out' &&
	 grep -qE '^ +pid [0-9]+ +prof_cases +0 samples  the same program again \(its exec failed\)$' '$work/out'"

# posix_spawn: no fork handler runs, the spawned program's constructor starts its sampling
prof -c 100000 -o "$work/perf-sp.data" -- "$C" spawn 100000 10 "$W" 100000 10
check "posix_spawn: status 0, prof_workload's 100 samples (spawned), the program's 20" bash -c \
	"[ \"\$(cat '$work/rc')\" = 0 ] && grep -qE '^ +pid [0-9]+ +prof_workload +100 samples  spawned by [0-9]+, exec.d$' '$work/out' &&
	 grep -qE '^ +20 +16\.67% +#+ +prof_cases: work' '$work/out'"
check "posix_spawn: perf.data has a FORK record for the spawned process" test "$(records "$work/perf-sp.data" FORK)" = 1

# threads in a child: every thread of the child is sampled, under the child's pid
prof -c 100000 -o "$work/perf-ft.data" -- "$C" fork-threads 100000 10 3
tids=$(perf script -i "$work/perf-ft.data" -F pid,tid 2> /dev/null | awk '{ split($1, a, "/"); n[a[1]]++; t[a[1] "/" a[2]]++ }
	END { for (k in t) { split(k, a, "/"); c[a[1]]++ } for (p in n) print n[p] "/" c[p] }' | sort -n | paste -sd, -)
check "fork-threads: the child's 3 threads sampled: 5 threads in all (got '$(sed -nE 's/^  threads +//p' "$work/out")')" \
	grep -qE '^  threads +5 sampled$' "$work/out"
check "fork-threads: perf.data: the parent's 10 samples in 1 thread, the child's 30 in 3 (got '$tids')" \
	test "$tids" = "10/1,30/3"
# a thread forks: the child is sampled, and its FORK record names that thread as the one that forked
prof -c 100000 -o "$work/perf-tf.data" -- "$C" thread-fork 100000 10
fork_rec=$(perf report -D -i "$work/perf-tf.data" 2> /dev/null | sed -nE 's/.*PERF_RECORD_FORK\(([0-9]+):[0-9]+\):\(([0-9]+):([0-9]+)\).*/\1 \2 \3/p')
read -r c_pid p_pid p_tid <<< "${fork_rec:-x x x}"
thread_tid=$(perf script -i "$work/perf-tf.data" -F pid,tid,ip,sym 2> /dev/null | awk '/ work/ { print $1; exit }')
check "thread-fork: status 0, child_hot 10 and work 10 (got $(rc))" bash -c \
	"[ '$(rc)' = 0 ] && grep -qE '^ +10 +50\.00% +#+ +child_hot \(prof_cases\)$' '$work/out' &&
	 grep -qE '^ +10 +50\.00% +#+ +work \(prof_cases\)$' '$work/out'"
check "thread-fork: FORK($c_pid from $p_pid:$p_tid): the forking thread is the one that ran work() ($thread_tid)" \
	bash -c "[ '$p_pid/$p_tid' = '$thread_tid' ] && [ '$p_tid' != '$p_pid' ]"

# the program closed rvprof's socket and put another socket on its number: a child sends nothing there, runs on
# unsampled, and says why; the program's own profile is whole
prof -c 100000 -- "$C" reuse-fork 100000 10
check "socket replaced: nothing sent to the program's socket, status 0 (got $(rc): 3 means something was)" test "$(rc)" = 0
check "socket replaced: the child says it is not sampled, and why" \
	grep -qE "^rvprof agent: process [0-9]+ not sampled: descriptor [0-9]+ \(RVPROF_SOCK_FD\) is no longer rvprof's socket" "$work/err"
check "socket replaced: the program's 10 samples in work(), the child's none" bash -c \
	"grep -qE '^ +10 +100\.00% +#+ +work \(prof_cases\)$' '$work/out' && ! grep -q child_hot '$work/out'"

# a child that ends with _exit (no atexit): said so, the parent's profile whole
prof -c 100000 -- "$C" fork-exit 100000 10
check "fork + _exit: status 0, the parent's 20 samples" bash -c \
	"[ \"\$(cat '$work/rc')\" = 0 ] && grep -qE '^ +20 +100\.00% +#+ +work \(prof_cases\)$' '$work/out'"
check "fork + _exit: a note says the child's samples were not written" \
	grep -qE '^rvprof: process [0-9]+ \(prof_cases\) had not ended by exit\(\) or exec' "$work/err"

# a child program that fails: the program's own status (2: its child failed) passes through
prof -c 100000 -- "$C" fork-exec 100000 10 /bin/false
check "fork-exec of a failing program: the program's status 2 passes through (got $(rc))" test "$(rc)" = 2

# --no-inherit (-i, perf record's name): only the process rvprof starts, as before issue 17
prof -i -c 100000 -o "$work/perf-fork-i.data" -- "$C" fork 100000 10
check "-i: fork: status 0 (got $(rc))" test "$(rc)" = 0
check "-i: fork: the parent's 20 samples only, all in work()" grep -qE '^ +20 +100\.00% +#+ +work \(prof_cases\)$' "$work/out"
check "-i: fork: the header says the child was not profiled" \
	grep -qE '^  children +1 forked, not profiled \(--no-inherit\)' "$work/out"
nfork=$(records "$work/perf-fork-i.data" FORK)
check "-i: fork: perf report reads the 20 samples, one process (FORK records: $nfork)" bash -c \
	"perf report --stdio -i '$work/perf-fork-i.data' 2>/dev/null | grep -q '^# Samples: 20 ' && [ '$nfork' = 0 ]"
prof --no-inherit -c 100000 -- "$C" exec 100000 10 "$W" 100000 10
check "--no-inherit: exec: the 10 samples before it kept (the file finished at exec), none after" bash -c \
	"[ \"\$(cat '$work/rc')\" = 0 ] && grep -qE '^ +10 +100\.00% +#+ +work \(prof_cases\)$' '$work/out' &&
	 ! grep -q 'processes' '$work/out'"

# PES with a threshold far below what the machine delivers (issue 20 item 2): throttled per drain, ends
prof -c 10 -o "$work/perf-pes10.data" -- "$W" 100000 10
npes=$(sed -nE 's/^  throttled +([0-9]+) times.*/\1/p' "$work/out")
check "-c 10 with PES on CVA6: ends (status $(rc)), throttled (got '${npes:-none}' times)" bash -c \
	"[ '$(rc)' = 0 ] && [ '${npes:-0}' -gt 0 ]"

# throttling (U74 with Sscofpmf, an overflow per event): shown in the header, written to perf.data
MODEL=sifive-u74 EMU_ARGS=--sscofpmf prof -c 1 -o "$work/perf-thr.data" -- "$W" 100000 10
nthr=$(sed -nE 's/^  throttled +([0-9]+) times.*/\1/p' "$work/out")
check "-c 1 on the U74: the header shows throttling (got '${nthr:-none}')" test "${nthr:-0}" -gt 0
pthr=$(perf report --stats -i "$work/perf-thr.data" 2> /dev/null | sed -nE 's/^ +THROTTLE events: +([0-9]+).*/\1/p' | head -1)
check "-c 1 on the U74: perf.data has the same $nthr THROTTLE records (got '${pthr:-none}')" test "${pthr:-x}" = "${nthr:-y}"
ndump=$(perf report -D -i "$work/perf-thr.data" 2> /dev/null | grep -c 'PERF_RECORD_THROTTLE')
check "-c 1 on the U74: perf report -D shows them (got $ndump)" test "$ndump" = "${nthr:-y}"
prof -c 100000 -- "$W" 100000 10
check "no throttling: the header says never" grep -qE '^  throttled +never$' "$work/out"

# fewer samples than a PES buffer holds: no interrupt, and the header says where the samples came from
prof -c 100000 -- "$C" scribble 100000 10
check "the program overwrote the state page: status 0 (got $(rc))" test "$(rc)" = 0
check "overwritten page: the header's counts are the agent's own (precise_ip 2, 10 of 10 exact, 1 thread)" bash -c \
	"grep -qE '^  precise +yes \(precise_ip 2,' '$work/out' && grep -q '10 of 10 samples marked exact' '$work/out' &&
	 grep -qE '^  samples +10, lost 0 ' '$work/out' && grep -qE '^  threads +1 sampled$' '$work/out'"
check "overwritten page: a note says so, nothing lost" grep -q "wrote over rvprof's state page while it ran" "$work/err"
check "10 samples (a 64-record PES buffer): 'interrupts 0' says they were read when sampling stopped" \
	grep -qE '^  interrupts +0: the 10 samples were read when sampling stopped' "$work/out"
prof -c 100000 -- "$C" scribble-exit 100000 10
check "overwritten page, then _exit(3): the program's status 3 (got $(rc))" test "$(rc)" = 3
check "overwritten page, then _exit: a clear message naming the bad field" \
	grep -q "^rvprof: .*prof_cases overwrote rvprof's state page (magic 0x41414141, not 0x72767066)" "$work/err"
check "overwritten page: no garbage printed" bash -c "! grep -q 1094795585 '$work/out' '$work/err'"

# nothing left in TMPDIR: the state and sample files have no name, whatever ends rvprof (SIGKILL included);
# SIGTERM to rvprof goes to the program, which ends, and rvprof reports its status
prof -c 100000 -- "$W" 100000 10
check "a normal run leaves nothing in TMPDIR" test -z "$(ls -A "$work/tmp")"
# bg_prof: rvprof (exec'd by rvemu-run) on `sleep 60` in the background; sets rvprof_pid and prog_pid (its child).
# Bounded by the program: sleep ends after 60 s whatever happens to rvprof.
bg_prof() {
	"$RUN" --model cva6 --clock virtual -- "$RVPROF" -c 100000 -- sleep 60 \
		> "$work/out" 2> "$work/err" &
	rvprof_pid=$!
	prog_pid=
	for _ in $(seq 200); do # bounded: up to about 20 s for the program to start
		prog_pid=$(pgrep -P "$rvprof_pid" -x sleep) && break
		sleep 0.1
	done
}
bg_prof
check "while rvprof runs, TMPDIR holds nothing (got '$(ls -A "$work/tmp" | paste -sd' ' -)')" test -z "$(ls -A "$work/tmp")"
exec 3>&2 2> /dev/null # not bash's "Killed" notice
kill -KILL "$rvprof_pid"
wait "$rvprof_pid"
exec 2>&3 3>&-
check "rvprof killed by SIGKILL: TMPDIR holds nothing" test -z "$(ls -A "$work/tmp")"
[ -n "$prog_pid" ] && kill -KILL "$prog_pid" 2> /dev/null # the orphan (SIGKILL cannot be passed on)
bg_prof
kill -TERM "$rvprof_pid" 2> /dev/null
wait "$rvprof_pid"
term_rc=$?
check "rvprof got SIGTERM: passed to the program, its status 143 (got $term_rc)" test "$term_rc" = 143
check "rvprof got SIGTERM: the program ended (no orphan)" bash -c "[ -n '$prog_pid' ] && ! kill -0 '$prog_pid' 2>/dev/null"
check "rvprof got SIGTERM: it says what happened" grep -q "^rvprof: sleep ended without exit()" "$work/err"
check "rvprof got SIGTERM: TMPDIR holds nothing" test -z "$(ls -A "$work/tmp")"

# ---- --help: true and complete (every option the parser knows is described)
"$RVPROF" --help > "$work/help"
check "--help exits 0" test $? = 0
missing=""
for o in -e --event -c --count -g --call-graph -o --output --folded --svg --top --precise --no-precise \
	-i --no-inherit --progress --no-progress -h --help; do
	grep -qE "(^|[ ,])$o([ ,]|$)" "$work/help" || missing="$missing $o"
done
check "--help describes every option${missing:+ (missing:$missing)}" test -z "$missing"
prof --top 1 -c 100000 -- "$W" 100000 10
check "--top 1: one function and the rest summed" grep -qE '^ +30 +30\.00% +\(2 more functions\)' "$work/out"

check "after every run above, TMPDIR holds nothing" test -z "$(ls -A "$work/tmp")"

echo "profiler: $pass ok, $fail failed"
[ "$fail" -eq 0 ]
