#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The riscv64 build (scripts/cross-build.sh) under qemu-user with the riscv64 emulator preloaded
# (scripts/test.sh, stage "riscv64"; docs/riscv64.md). Runs, each riscv64 code from the riscv64 prefix:
#   - libpfm4's validate;
#   - tests/papi/run-papi-tests.sh (utilities, presets against the truth, riscv_hpc and BOOM through PAPI, PAPI's
#     ctests judged with the same tests/papi/ctest-expectations.csv, riscv64 rows included) and
#     tests/papi/run-papi-examples.sh (hl_region, profil_hot on PES and Sscofpmf), the same scripts as on x86_64;
#   - the CUnit programs of the riscv64 build tree, each configuration started directly under the emulator (a guest
#     cannot execve another riscv64 program without binfmt_misc, so the programs' own re-execution is not used);
#   - rvprof on examples/prof_workload.c (exact sample counts, call stacks naming the program's functions) and on
#     a program that forks (the child followed);
#   - the side-by-side table: per model, presets available, the virtual-clock counts of hl_region, the profile's
#     hot function, x86_64 (the papi stage's results) next to riscv64; any difference fails.
# Prints ok/FAIL lines and "riscv64: ..." summary lines; exit status 1 if anything failed.
# Env: RVPAPI_BUILD (default <repo>/build), RISCV64_PREFIX (default $RVPAPI_BUILD/prefix-riscv64),
# RISCV64_HOST (riscv64-linux-gnu), RISCV64_PAPI_PARTS (the PAPI checks' parts run at once, default 4).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
host=${RISCV64_HOST:-riscv64-linux-gnu}
rvbuild=$build/$host          # the cross tree's RVPAPI_BUILD (its libpfm4 and PAPI)
obj=$build/obj-$host          # the cross tree's objects (CUnit programs)
prefix=${RISCV64_PREFIX:-$build/prefix-riscv64}
deps=$build/$host-deps        # scripts/cross-deps.sh
work=$rvbuild/riscv64-tests
qemu_run=$top/tests/riscv64/qemu-run
pass=0
fail=0
xfail=0
expectations=$top/tests/riscv64/expectations.csv
ok() { echo "ok    $*"; pass=$((pass + 1)); }
bad() { echo "FAIL  $*"; fail=$((fail + 1)); }
# The reason a check is expected to fail on riscv64 (tests/riscv64/expectations.csv), empty if it must pass.
expected_reason() { # expected_reason CHECK
	python3 - "$expectations" "$1" <<'PY'
import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')):
    if r['check'] == sys.argv[2]:
        if r['outcome'] not in ('fails', 'varies'):
            sys.exit('expectations.csv: outcome must be fails or varies, not %r' % r['outcome'])
        print(r['outcome'], r['reason'])
PY
}
verdict() { # verdict CHECK PASSED(0|1) MESSAGE: ok / FAIL, or xfail / XPASS for a check listed in expectations.csv
	local expectation outcome reason
	expectation=$(expected_reason "$1") || { bad "$1: bad $(basename "$expectations")"; return; }
	outcome=${expectation%% *}
	reason=${expectation#* }
	if [ -z "$expectation" ]; then
		[ "$2" = 0 ] && ok "$1: $3" || bad "$1: $3"
	elif [ "$2" = 0 ] && [ "$outcome" = varies ]; then
		ok "$1: $3 (passed here; on riscv64 it varies: $reason)"
	elif [ "$2" = 0 ]; then
		bad "$1: XPASS, listed in $(basename "$expectations") as failing on riscv64 ($reason): update it"
	else
		echo "xfail $1: $reason [$3]"
		xfail=$((xfail + 1))
	fi
}

for d in "$prefix/bin/papi_avail" "$prefix/lib/librvemu.so" "$deps/lib/libcunit.so" "$obj/tests"; do
	[ -e "$d" ] || { echo "run-riscv64-tests: $d missing (scripts/cross-build.sh builds it)" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
# Every riscv64 program runs through qemu-run; rvemu-run hands it the emulator (RVEMU_EXEC).
export RVEMU_EXEC=$qemu_run RISCV64_LIBS=$prefix/lib:$deps/lib
export RVEMU_LIB=$prefix/lib/librvemu.so
cross=(CC="$host-gcc" CPPFLAGS="-I$deps/include" LDFLAGS="-L$deps/lib -Wl,-rpath-link,$deps/lib:$prefix/lib")

# ---- libpfm4's own validate
if RVPAPI_BUILD=$rvbuild RVPAPI_RUNNER=$qemu_run "$top/scripts/build-libpfm4.sh" validate >"$work/validate.txt" 2>&1; then
	ok "libpfm4 validate: $(grep -m1 -E 'All tests passed|passed' "$work/validate.txt" || tail -n 1 "$work/validate.txt")"
else
	bad "libpfm4 validate (see $work/validate.txt)"
fi

# ---- seam 2's real instructions without the emulator (tests/bank/rvhw_probe.c): cycle/time/instret are real csrr
# (qemu-user answers them), BOOM's hint is a no-op on a non-BOOM core, the custom CSR hpcc (0x800) raises SIGILL
# exactly as on a core without the distributed HPC (until the emulator's CSR-trap front end catches it).
probe=$work/rvhw_probe
if "$host-gcc" -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -I"$top/lib" "$top/tests/bank/rvhw_probe.c" -o "$probe" \
	-L"$prefix/lib" -lrvhw; then
	"$qemu_run" "$probe" >"$work/probe.txt" 2>&1 && ok "rvhw_probe: real csrr of cycle/time/instret: $(paste -sd' ' "$work/probe.txt")" ||
		bad "rvhw_probe (see $work/probe.txt)"
	"$qemu_run" "$probe" boom >"$work/probe-boom.txt" 2>&1 && ok "rvhw_probe boom: the hint is a no-op on a non-BOOM core" ||
		bad "rvhw_probe boom (see $work/probe-boom.txt)"
	{ "$qemu_run" "$probe" hpc >"$work/probe-hpc.txt" 2>&1; status=$?; } 2>>"$work/probe-hpc.txt" # bash's "Illegal instruction"
	[ $status -eq $((128 + 4)) ] && ok "rvhw_probe hpc: csrr of hpcc (0x800) without the emulator dies with SIGILL" ||
		bad "rvhw_probe hpc: status $status, want SIGILL ($((128 + 4)))"
else
	bad "cannot build rvhw_probe for riscv64"
fi

# ---- PAPI: the x86_64 scripts, with the riscv64 prefix, tree and compiler. They run in the background, beside the
# CUnit programs and rvprof below, and are judged after them: the checks in parts (PAPI_TEST_SHARD; default 4), the
# last (the lighter: its variants' ctests take less) followed by the examples. Under qemu they wait more than they
# compute (one after another they took 12.6 min of wall time for 3.6 min of CPU time; in two parts 240 s and 196 s of
# a 251 s stage), so more streams than cores still shorten the stage.
t_papi=$SECONDS
papi_parts=${RISCV64_PAPI_PARTS:-4}
[[ "$papi_parts" =~ ^[1-9]$ ]] || { echo "run-riscv64-tests: RISCV64_PAPI_PARTS must be 1..9, not '$papi_parts'" >&2; exit 2; }
papi_part() { # papi_part I: part I of the PAPI checks; the last part then runs the examples
	env "${cross[@]}" RVPAPI_BUILD="$rvbuild" PAPI_TREE="$rvbuild/papi" PREFIX="$prefix" PAPI_TEST_ARCH=riscv64 \
		PAPI_TEST_SHARD="$1/$papi_parts" "$top/tests/papi/run-papi-tests.sh" >"$work/papi-tests-$1.txt" 2>&1
	echo $((SECONDS - t_papi)) >"$work/papi-tests-$1-seconds"
	if [ "$1" = $((papi_parts - 1)) ]; then
		env "${cross[@]}" RVPAPI_BUILD="$rvbuild" PREFIX="$prefix" \
			"$top/tests/papi/run-papi-examples.sh" >"$work/papi-examples.txt" 2>&1
		echo $((SECONDS - t_papi)) >"$work/papi-examples-seconds"
	fi
}
papi_pids=()
for ((i = 0; i < papi_parts; i++)); do
	papi_part "$i" &
	papi_pids+=($!)
done
judge_papi() {
	local i f counts
	# one summary from the parts': "N ok, X xfail (documented), F failed" added up; empty if a part did not finish
	grep -h '^FAIL' "$work"/papi-tests-[0-9]*.txt | sed 's/^/   /'
	counts=$(for ((i = 0; i < papi_parts; i++)); do
		f=$work/papi-tests-$i.txt
		sed -n 's/^papi tests: \([0-9]*\) ok, \([0-9]*\) xfail (documented), \([0-9]*\) failed$/\1 \2 \3/p' "$f" | grep . ||
			echo missing
	done)
	papi_tests=
	grep -q missing <<<"$counts" ||
		papi_tests=$(awk '{ o += $1; x += $2; f += $3 } END { print o " ok, " x " xfail (documented), " f " failed" }' <<<"$counts")
	[ -n "$papi_tests" ] && grep -q ', 0 failed$' <<<"$papi_tests" && ok "PAPI tests: $papi_tests" ||
		bad "PAPI tests: ${papi_tests:-not finished} (see $work/papi-tests-*.txt)"
	papi_examples=$(sed -n 's/^papi examples: //p' "$work/papi-examples.txt")
	grep '^FAIL' "$work/papi-examples.txt" | sed 's/^/   /'
	[ -n "$papi_examples" ] && grep -q ', 0 failed$' <<<"$papi_examples" && ok "PAPI examples: $papi_examples" ||
		bad "PAPI examples: ${papi_examples:-not finished} (see $work/papi-examples.txt)"
	echo "   (PAPI tests, in $papi_parts parts: $(for ((i = 0; i < papi_parts; i++)); do
		cat "$work/papi-tests-$i-seconds" 2>/dev/null || echo '?'
	done | sed 's/$/s/' | paste -sd' ' -); examples done at $(cat "$work/papi-examples-seconds" 2>/dev/null || echo '?')s)"
}

# ---- the emulator's CSR-trap front end and PAPI_read through the mmap page (tests/riscv64-trap/): real csrr/csrw
# of the HPC client trapped and exact, a program's own SIGILL handler still served, hpmcounter reads only where the
# kernel would allow them, PAPI_read without a system call.
"$top/tests/riscv64-trap/run-riscv64-trap-tests.sh" --emu "$prefix/lib/librvemu.so" --rvhw-dir "$prefix/lib" \
	--papi-inc "$prefix/include" --papi-dir "$prefix/lib" --pfm-dir "$prefix/lib" --out "$work/trap" \
	>"$work/trap.txt" 2>&1
verdict "CSR-trap and user-read tests" $(($? != 0)) "$(sed -n 's/^riscv64 trap tests: //p' "$work/trap.txt") (see $work/trap.txt)"

# ---- the CUnit programs: "NAME ENV... -- PROGRAM ARGS" (the program relative to the cross tree's tests/)
cunit_runs() {
	local m c s
	for p in pfm/test_pfm_encode pfm/test_pfm_detect pfm/test_pfm_perf pfm/test_pfm_papi_ids \
		pfm/test_pfm_init_cost bank/test_nohw papi/test_riscv_cpuinfo; do
		echo "$p -- $p"
	done
	echo "bank/test_hpc RVEMU_MODEL=lowrisc-hpc RVEMU_CLOCK=virtual -- bank/test_hpc"
	echo "bank/test_boom RVEMU_MODEL=boom RVEMU_CLOCK=virtual -- bank/test_boom"
	for m in lowrisc-hpc boom; do
		echo "bank/test_bank_cputime:$m RVEMU_MODEL=$m -- bank/test_bank_cputime $m"
	done
	echo "bank/test_rvbank RVEMU_MODEL=lowrisc-hpc RVEMU_CLOCK=virtual -- bank/test_rvbank"
	echo "bank/test_rvbank:boom RVEMU_MODEL=boom RVEMU_CLOCK=virtual RVBANK_TEST_MODEL=boom -- bank/test_rvbank"
	# test_emu's own configurations (tests/emu/test_emu.c), each started as its child
	for c in sifive-u74:virtual:0 sifive-u74:virtual:1 sifive-u74:cputime:0 sifive-u74:cputime:1 cva6:virtual:0 \
		cva6:cputime:0 lowrisc-hpc:virtual:0 boom:virtual:0 boom:cputime:0; do
		IFS=: read -r m clock s <<<"$c"
		echo "emu/test_emu:$m:$clock:$s EMU_TEST_CHILD=1 RVEMU_MODEL=$m RVEMU_CLOCK=$clock RVEMU_SSCOFPMF=$s -- emu/test_emu"
	done
	# CPU-wide sampling in a run of its own with two harts (test_emu's launcher does the same)
	echo "emu/test_emu:cpuwide EMU_TEST_CHILD=1 EMU_TEST_ONLY=cpuwide RVEMU_HARTS=2 RVEMU_MODEL=sifive-u74 RVEMU_CLOCK=virtual RVEMU_SSCOFPMF=1 -- emu/test_emu"
	# test_sample runs its configurations itself through RVEMU_RUN (a host script: it execs qemu-run)
	echo "sample/test_sample RVEMU_RUN=$obj/emulator/rvemu-run RVEMU_LIB=$obj/emulator/.libs/librvemu.so -- sample/test_sample"
	echo "profiler/test_prof_units -- ../profiler/test_prof_units"
}
cunit_run=0 cunit_pass=0 cunit_fail=0
t_cunit=$SECONDS
while read -r name rest; do
	envs=()
	set -- $rest
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	prog=$1
	shift
	# a program linked with libtool libraries is a wrapper script; qemu runs the real one in .libs/
	[ -x "$obj/tests/$(dirname "$prog")/.libs/$(basename "$prog")" ] && prog=$(dirname "$prog")/.libs/$(basename "$prog")
	log=$work/cunit-${name//[\/:]/_}.txt
	preload=()
	[[ " ${envs[*]} " == *" RVEMU_MODEL="* ]] && preload=(RVEMU_PRELOAD="$RVEMU_LIB")
	(cd "$obj/tests" && env "${envs[@]}" "${preload[@]}" srcdir="$top/tests" timeout 300 "$qemu_run" "$prog" "$@") \
		>"$log" 2>&1
	verdict "CUnit $name" $(($? != 0)) "$(awk '$1 == "tests" && NF >= 5 { print $4 "/" $3 " passed" }' "$log" |
		paste -sd, -) (log $log)"
	read -r r p f <<<"$(awk '$1 == "tests" && NF >= 5 { r += $3; p += $4; f += $5 } END { print r + 0, p + 0, f + 0 }' "$log")"
	cunit_run=$((cunit_run + r)) cunit_pass=$((cunit_pass + p)) cunit_fail=$((cunit_fail + f))
done < <(cunit_runs)
echo "   (CUnit programs: $((SECONDS - t_cunit))s)"

# ---- rvprof (riscv64) on prof_workload (riscv64), virtual clock: 10 iterations of 7 + 2 + 1 units of 100000 cycles
# sampled every 100000 cycles (tests/profiler/run-rvprof-tests.sh). On the CVA6 (PES) exactly 70, 20 and 10 samples;
# with -g on the U74 (Sscofpmf) 69 hot samples carry the stack main;run_iterations;compute_step;hot_kernel, unwound
# by riscv64 libunwind. rvprof execs the program it profiles: here qemu-riscv64 with it (a guest cannot execve a
# riscv64 program itself); qemu passes rvprof's preload (the emulator and the agent) on to the program.
# unwind tables: GCC 12 makes them by default on x86_64 only, and call stacks need them in every frame
"$host-gcc" -std=c11 -O2 -g -fasynchronous-unwind-tables -pthread "$top/examples/prof_workload.c" -o "$work/prof_workload" -ldl ||
	bad "cannot build prof_workload for riscv64"
rvprof() { # rvprof NAME RVEMU-RUN-OPTIONS... -- RVPROF-OPTIONS...: output in $work/rvprof-NAME.{txt,err}
	local name=$1 emu_opts=()
	shift
	while [ "$1" != -- ]; do emu_opts+=("$1"); shift; done
	shift
	RVEMU_IRQ_SKID=32 "$prefix/bin/rvemu-run" "${emu_opts[@]}" --clock virtual -- "$prefix/bin/rvprof" "$@" -- \
		qemu-riscv64 -L "${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}" "$work/prof_workload" 100000 10 \
		>"$work/rvprof-$name.txt" 2>"$work/rvprof-$name.err"
}
hist() { awk '/^hot functions/ { on = 1; getline; next } on && NF == 0 { exit } on' "$1" | sed -n "${2}p"; }
rvprof pes --model cva6 -- -c 100000
[[ $(hist "$work/rvprof-pes.txt" 1) =~ ^\ *70\ +70.00%\ +#+\ +hot_kernel\ \(prof_workload\)$ ]] &&
	[[ $(hist "$work/rvprof-pes.txt" 2) =~ ^\ *20\ +20.00%\ +#+\ +warm_kernel\ \(prof_workload\)$ ]] &&
	[[ $(hist "$work/rvprof-pes.txt" 3) =~ ^\ *10\ +10.00%\ +#+\ +cold_kernel\ \(prof_workload\)$ ]]
verdict "rvprof histogram" $(($? != 0)) "CVA6 (PES): $(hist "$work/rvprof-pes.txt" 1 | xargs); $(hist "$work/rvprof-pes.txt" 2 | xargs); $(hist "$work/rvprof-pes.txt" 3 | xargs)"
rvprof stacks --model sifive-u74 --sscofpmf -- -g -c 100000 --folded "$work/rvprof-folded"
grep -qE '(^|;)main;run_iterations;compute_step;hot_kernel 69$' "$work/rvprof-folded" &&
	grep -qE '(^|;)main;run_iterations;compute_step;warm_kernel 20$' "$work/rvprof-folded"
verdict "rvprof -g stacks" $(($? != 0)) "U74 (Sscofpmf), want main;run_iterations;compute_step;hot_kernel 69: $(paste -sd, "$work/rvprof-folded")"
# children followed (issue 17): prof_cases (riscv64) forks a child that calls child_hot() 30 times while the parent
# calls work() 20 times; the child is sampled under its own pid. Under qemu-user 7.2 a forked child that creates a
# thread while its parent has a second one aborts (plugins/core.c: qemu_plugin_vcpu_init_hook); the agent ends
# its flusher thread across fork (profiler/agent.c), which this also checks.
"$host-gcc" -std=c11 -O2 -g -pthread -I"$top/profiler" "$top/tests/profiler/prof_cases.c" -o "$work/prof_cases" -ldl ||
	bad "cannot build prof_cases for riscv64"
RVEMU_IRQ_SKID=32 "$prefix/bin/rvemu-run" --model cva6 --clock virtual -- "$prefix/bin/rvprof" -c 100000 -- \
	qemu-riscv64 -L "${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}" "$work/prof_cases" fork-hot 100000 10 3 \
	>"$work/rvprof-fork.txt" 2>"$work/rvprof-fork.err"
fork_rc=$?
[ "$fork_rc" = 0 ] && [[ $(hist "$work/rvprof-fork.txt" 1) =~ ^\ *30\ +60.00%\ +#+\ +child_hot\ \(prof_cases\)$ ]] &&
	[[ $(hist "$work/rvprof-fork.txt" 2) =~ ^\ *20\ +40.00%\ +#+\ +work\ \(prof_cases\)$ ]] &&
	grep -qE '^ +pid [0-9]+ +[^ ]+ +30 samples  forked by [0-9]+$' "$work/rvprof-fork.txt"
verdict "rvprof fork" $(($? != 0)) "status $fork_rc, want child_hot 30 in the forked child, work 20: $(hist "$work/rvprof-fork.txt" 1 | xargs); $(hist "$work/rvprof-fork.txt" 2 | xargs)"

wait "${papi_pids[@]}"
judge_papi

# ---- side by side: x86_64 (the papi stage) and riscv64 (above)
python3 - "$build" "$rvbuild" "$host" >"$work/side-by-side.txt" 2>&1 <<'PY'
import glob, json, os, re, subprocess, sys
x86, rv, host = sys.argv[1:4]
NM = {x86: "nm", rv: host + "-nm"}
def symbols(root):
    """(start, end, name) of the functions of that build's profil_hot, from its own symbol table"""
    out = subprocess.run([NM[root], "-S", "--defined-only", os.path.join(root, "examples", "profil_hot")],
                         capture_output=True, text=True).stdout
    return [(int(f[0], 16), int(f[0], 16) + int(f[1], 16), f[3]) for f in (l.split() for l in out.splitlines())
            if len(f) == 4 and f[2] in "tT"]
def bucket(root, v):
    """the fullest PAPI_profil bucket as function+offset, by nm of the program that ran"""
    p = os.path.join(root, "papi-examples", v, "profil.txt")
    m = [re.match(r"fullest bucket text\+0x([0-9a-f]+)", l) for l in open(p)] if os.path.exists(p) else []
    m = [x for x in m if x]
    if not m:
        return "-"
    a = int(m[0].group(1), 16)
    hit = [(n, a - lo) for lo, hi, n in symbols(root) if lo <= a < hi]
    return "%s+0x%x (0x%x)" % (hit[0][0], hit[0][1], a) if hit else "0x%x (no function)" % a
def presets(root, v):
    p = os.path.join(root, "papi-tests", v, "avail.txt")
    if not os.path.exists(p):
        return "-"
    return str(sum(1 for l in open(p) if re.match(r"^PAPI_\w+ +0x[0-9a-f]+ +Yes", l)))
def hl_counts(root, v):
    f = glob.glob(os.path.join(root, "papi-examples", v, "hl-virtual", "papi_hl_output", "rank_*.json"))
    if len(f) != 1:
        return "-"
    doc = json.load(open(f[0]))
    ev = list(doc["event_definitions"])
    out = {}
    for t in doc["threads"].values():
        for r in t["regions"].values():
            out[r["name"]] = "/".join(str(r.get(e, "?")) for e in ev)
    return " ".join("%s %s" % (k, out[k]) for k in sorted(out))
def hot(root, v):
    p = os.path.join(root, "papi-examples", v, "profil.txt")
    if not os.path.exists(p):
        return "-"
    h = [l.split()[1] for l in open(p) if l.startswith("hottest ")]
    return h[0] if h else "-"
bad = 0
print("%-20s %-8s %-8s %-62s %-9s %s" % ("model", "arch", "presets", "hl_region, virtual clock: region TOT_CYC/TOT_INS/native",
                                         "profil", "fullest bucket (nm)"))
for v in ("sifive-u74", "sifive-u74+sscofpmf", "cva6", "lowrisc-hpc", "boom"):
    rows = [(a, presets(r, v), hl_counts(r, v), hot(r, v), bucket(r, v)) for a, r in (("x86_64", x86), ("riscv64", rv))]
    for a, p, c, h, b in rows:
        print("%-20s %-8s %-8s %-62s %-9s %s" % (v, a, p, c, h, b))
    same = rows[0][1:4] == rows[1][1:4] and "-" not in rows[0][1:4] + rows[1][1:4]
    # with overflow interrupts PAPI takes the bucket from the signal's PC (uc_mcontext, patch 02): it must be
    # in the hot function of the program that ran, by that program's own symbol table
    if v in ("sifive-u74+sscofpmf", "cva6"):
        same = same and all(r[4].startswith(r[3] + "+") for r in rows)
    print("%-20s %-8s %s" % ("", "", "equal" if same else "DIFFERENT"))
    bad |= not same
sys.exit(bad)
PY
side=$?
sed 's/^/   /' "$work/side-by-side.txt"
[ $side -eq 0 ] && ok "side by side: presets, hl_region's virtual-clock counts and the profile's hot function equal on x86_64 and riscv64 for every model; with overflow interrupts the fullest PAPI_profil bucket is in hot_loop by each build's nm" ||
	bad "side by side: x86_64 and riscv64 differ (see above)"

echo "riscv64 CUnit tests: $cunit_pass/$cunit_run passed ($cunit_fail failed)"
echo "riscv64 PAPI tests: ${papi_tests:-not run}; examples: ${papi_examples:-not run}"
echo "riscv64 checks: $pass ok, $xfail xfail (tests/riscv64/expectations.csv), $fail failed"
[ $fail -eq 0 ]
