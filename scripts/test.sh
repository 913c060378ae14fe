#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, from a fresh clone of a Debian 12 machine (README: "Run the tests").
# Installs missing Debian packages, fetches the pinned upstream sources, builds everything into the prefix
# (PREFIX, default build/prefix), then runs every stage below and prints one closing summary line.
# Stages keep going after a failure so one run reports everything; the exit status is non-zero if any failed.
set -uo pipefail
case "${1:-}" in
-h | --help)
	cat <<'EOF'
usage: scripts/test.sh
Builds everything from a fresh clone (installing missing Debian packages with apt-get and fetching the pinned
upstream sources with apt-get source) and runs every test stage; prints one "== STAGE ok|FAIL (Ns)" line per
stage and a closing "TEST SUMMARY:" line. Exit status 0 only if every stage passed. Takes no arguments.
Environment: RVPAPI_BUILD (build directory, default <repo>/build), PREFIX (install prefix, default
$RVPAPI_BUILD/prefix), JOBS (parallel make jobs, default nproc). Logs: $RVPAPI_BUILD/test-logs/STAGE.log.
To rerun chosen stages many times under load (flakiness hunting) after a build: scripts/stress.sh --help.
EOF
	exit 0
	;;
"") ;;
*)
	echo "scripts/test.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
export RVPAPI_BUILD=${RVPAPI_BUILD:-$top/build}
PREFIX=${PREFIX:-$RVPAPI_BUILD/prefix}
jobs=${JOBS:-$(nproc)}
log_dir=$RVPAPI_BUILD/test-logs
results=()
failed=0

stage() { # stage NAME command...: run, log, remember the verdict
	local name=$1
	shift
	local t0=$SECONDS rc=0
	"$@" >"$log_dir/$name.log" 2>&1 || rc=1
	verdict "$name" $rc $((SECONDS - t0))
}
# A stage that needs little CPU beside one that waits runs in the background: stage_start NAME command... starts
# it, stage_finish NAME waits for it and prints its verdict as stage does (its own time, not the wait).
declare -A started=()
# an interrupted run leaves no background stage behind (the stage's shell and the command it runs)
trap 'for p in "${started[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done' EXIT
stage_start() {
	local name=$1
	shift
	rm -f "$log_dir/$name.verdict"
	(
		t0=$(date +%s) rc=0
		"$@" >"$log_dir/$name.log" 2>&1 || rc=1
		echo "$rc $(($(date +%s) - t0))" >"$log_dir/$name.verdict"
	) &
	started[$name]=$!
}
stage_finish() {
	local rc=1 secs=0
	wait "${started[$1]}"
	unset 'started[$1]' # its pid may be another process's from now on
	read -r rc secs <"$log_dir/$1.verdict" || echo "stage $1 left no verdict" >>"$log_dir/$1.log"
	verdict "$1" "$rc" "$secs"
}
verdict() { # verdict NAME RC SECONDS: print the stage's line (and the failing lines), remember it
	local name=$1 rc=$2 secs=$3
	local log="$log_dir/$name.log"
	printf '== %-22s ' "$name"
	if [ "$rc" = 0 ]; then
		printf 'ok    (%ss)\n' "$secs"
		results+=("$name:ok")
	else
		printf 'FAIL  (%ss) -- last lines of %s:\n' "$secs" "$log"
		tail -n 25 "$log" | sed 's/^/   | /'
		# A long stage's failing checks scroll out of its last lines: name them too (CI keeps only this).
		if grep -q '^FAIL ' "$log"; then
			echo "   failing checks in $log:"
			grep '^FAIL ' "$log" | head -n 20 | cut -c1-400 | sed 's/^/   | /'
		fi
		results+=("$name:FAIL")
		failed=$((failed + 1))
	fi
}

configure_tree() { # configure_tree OBJDIR [configure args...]
	local obj=$1
	shift
	mkdir -p "$obj"
	cd "$obj" && "$top/configure" --prefix="$PREFIX" RVPAPI_BUILD="$RVPAPI_BUILD" "$@"
}

"$top/scripts/deps.sh" || exit 1
mkdir -p "$log_dir"
stage fetch-upstream "$top/scripts/fetch-upstream.sh"
stage autoreconf bash -c "cd '$top' && autoreconf -fi"
stage configure configure_tree "$RVPAPI_BUILD/obj"
stage build make -C "$RVPAPI_BUILD/obj" -j"$jobs"
stage install make -C "$RVPAPI_BUILD/obj" install
stage unit-tests make -C "$RVPAPI_BUILD/obj" -j"$jobs" check
# valgrind where it fits: the tests that run in one process (the emulator's tests re-execute themselves under
# LD_PRELOAD, which valgrind's launcher does not survive; they run under ASan/UBSan instead).
valgrind_tests() {
	cd "$RVPAPI_BUILD/obj/tests" || return 1
	local t rc=0
	for t in pfm/test_pfm_encode pfm/test_pfm_detect pfm/test_pfm_perf pfm/test_pfm_papi_ids pfm/test_pfm_init_cost \
		bank/test_nohw papi/test_riscv_cpuinfo; do
		echo "== valgrind $t"
		srcdir=$top/tests ../libtool --mode=execute valgrind -q --error-exitcode=1 --leak-check=full \
			--errors-for-leak-kinds=definite "$t" || rc=1
	done
	return $rc
}
stage valgrind valgrind_tests
stage libpfm4-validate "$top/scripts/build-libpfm4.sh" validate
# The two series as upstream would take them: `git am` on the pristine trees (new files included), the same
# sources apply.sh built, and a build of the result (each prints its times).
stage libpfm4-series "$top/tests/pfm/check-libpfm4-series.sh"
grep -h '^check-libpfm4-series:' "$log_dir/libpfm4-series.log" | sed 's/^/   /'
stage papi-series env PREFIX="$PREFIX" "$top/tests/papi/check-series.sh"
grep -h '^check-series:' "$log_dir/papi-series.log" | sed 's/^/   /'
[ -x "$top/scripts/build-papi.sh" ] && stage papi "$top/scripts/build-papi.sh" check "$PREFIX"
# rvprof end to end: the installed profiler under the installed emulator (docs/profiler.md).
stage profiler env PREFIX="$PREFIX" "$top/tests/profiler/run-rvprof-tests.sh"
# valgrind on the emulator itself, with real clients: the bank and core test programs (already under
# LD_PRELOAD, so they do not re-execute) and PAPI programs. Sampling *signal timing* tests are left to the
# native runs: valgrind delivers a signal a thread queues to itself later than the kernel does.
valgrind_emulator() {
	local emu=$RVPAPI_BUILD/obj/emulator/.libs/librvemu.so rc=0 t cfg
	vg() { # vg ENV... -- PROGRAM ARGS...: run under valgrind with the emulator preloaded
		local envs=()
		while [ "$1" != -- ]; do envs+=("$1"); shift; done
		shift
		echo "== valgrind ${envs[*]} $*"
		env "${envs[@]}" LD_PRELOAD="$emu" valgrind -q --error-exitcode=1 "$@" || rc=1
	}
	cd "$RVPAPI_BUILD/obj/tests" || return 1
	vg LD_LIBRARY_PATH=../lib/.libs RVEMU_MODEL=lowrisc-hpc RVEMU_CLOCK=virtual -- bank/.libs/test_hpc
	vg LD_LIBRARY_PATH=../lib/.libs RVEMU_MODEL=boom RVEMU_CLOCK=virtual RVEMU_BOOM_KERNEL_PERMILLE=50 \
		RVEMU_BOOM_MACHINE_PERMILLE=10 -- bank/.libs/test_boom
	# one model per kind of machine of events/models.csv (overflow interrupt, counter bank, Sscofpmf in its isa), not
	# every model: valgrind costs about a minute per model and each kind exercises the same emulator code
	for cfg in $(python3 "$top/gen/gen_events.py" --models | awk '!seen[$4 " " $3 " " ($7 ~ /_sscofpmf/)]++ { print $1 }'); do
		vg EMU_TEST_CHILD=1 RVEMU_MODEL=$cfg RVEMU_CLOCK=virtual RVEMU_SSCOFPMF=0 -- emu/test_emu
	done
	# CPU-wide sampling (test_emu_cpuwide.c): the forked tasks write the test's rings, in a run with two harts
	vg EMU_TEST_CHILD=1 EMU_TEST_ONLY=cpuwide RVEMU_HARTS=2 RVEMU_MODEL=sifive-u74 RVEMU_CLOCK=virtual RVEMU_SSCOFPMF=1 -- \
		emu/test_emu
	t=$PREFIX/bin
	vg LD_LIBRARY_PATH="$PREFIX/lib" RVEMU_MODEL=sifive-u74 RVEMU_CLOCK=virtual RVEMU_READ_ADVANCE=1000000 -- \
		"$t/papi_command_line" PAPI_TOT_CYC PAPI_TOT_INS riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED
	vg LD_LIBRARY_PATH="$PREFIX/lib" RVEMU_MODEL=sifive-u74 RVEMU_SSCOFPMF=1 -- "$RVPAPI_BUILD/examples/profil_hot"
	vg LD_LIBRARY_PATH="$PREFIX/lib" RVEMU_MODEL=cva6 RVEMU_CLOCK=virtual PAPI_EVENTS=PAPI_TOT_CYC,PAPI_TOT_INS \
		PAPI_OUTPUT_DIRECTORY="$RVPAPI_BUILD/valgrind-hl" -- "$RVPAPI_BUILD/examples/hl_region"
	# perf record -- cmd: the command's emulator (under valgrind, its fork and exec'd child too) writes the ring of
	# the events perf holds (perf_remote.c); perf record exits with the command's status
	echo "== valgrind under perf record: emu/record_child forkexec"
	"$RVPAPI_BUILD/obj/emulator/rvemu-run" --sscofpmf -- perf record -q -o "$RVPAPI_BUILD/valgrind-record.data" \
		-e cycles -c 1000000 -- valgrind -q --trace-children=yes --error-exitcode=1 emu/record_child forkexec 2000000 || rc=1
	# perf record -a: CPU-wide events, written by every task of the run on their CPU (the shadows of perf_remote.c)
	echo "== valgrind under perf record -a: emu/record_child both"
	"$RVPAPI_BUILD/obj/emulator/rvemu-run" --sscofpmf -- perf record -q -a -o "$RVPAPI_BUILD/valgrind-record-a.data" \
		-e cycles -c 1000000 -- valgrind -q --trace-children=yes --error-exitcode=1 emu/record_child both 2000000 || rc=1
	return $rc
}
[ -x "$top/scripts/build-papi.sh" ] && stage valgrind-emulator valgrind_emulator
# Install like a package: stage with DESTDIR, put the build tree's libraries out of reach, run what was staged.
stage staged-install env RVPAPI_BUILD="$RVPAPI_BUILD" PREFIX="$PREFIX" "$top/tests/install/run-staged-install.sh"
# The whole stack as riscv64 code, under qemu-user with the riscv64 emulator (docs/riscv64.md): built by the same
# autotools build (configure --host), then PAPI's checks, the CUnit programs and rvprof, and the side-by-side table
# against the x86_64 results of the papi stage above.
stage riscv64-build env RISCV64_PREFIX="$RVPAPI_BUILD/prefix-riscv64" "$top/scripts/cross-build.sh"
# Execution-driven counts: the QEMU plugin on riscv64 kernels, checked against QEMU's log, disassembly and the
# analytic cache numbers (docs/exec-counts.md). It runs beside the riscv64 stage, whose checks under qemu wait more
# than they compute (docs/riscv64.md).
stage_start exec-counts "$top/tests/exec/run-exec-tests.sh"
stage riscv64 env RISCV64_PREFIX="$RVPAPI_BUILD/prefix-riscv64" "$top/tests/riscv64/run-riscv64-tests.sh"
stage_finish exec-counts
grep -E '^(exec-counts:|gemm :|chase:|presets vs raw [a-z0-9-]+: [0-9]|papi_l1_dca cva6 [a-z]+: )' "$log_dir/exec-counts.log" | sed 's/^/   exec: /'
san="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
stage configure-asan configure_tree "$RVPAPI_BUILD/obj-asan" CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined" \
	--prefix="$RVPAPI_BUILD/prefix-asan" --disable-papi
stage unit-tests-asan make -C "$RVPAPI_BUILD/obj-asan" -j"$jobs" check-asan
stage lint "$top/scripts/lint.sh"
# Benchmarks print ratios measured in one run (never asserted: these machines are shared and noisy).
stage bench make -C "$RVPAPI_BUILD/obj/bench" -s run-bench
grep -E 'x a plain call|\(1\.0x\)|medians|vs a native pipe|batched vs|^bench_sampling:|^bench_papi_overhead:' "$log_dir/bench.log" | sed 's/^/   bench: /'
# x86_64 next to riscv64 (tests/riscv64/run-riscv64-tests.sh), and the dependency build's time
awk '/^ +model +arch/ { on = 1 } on && /^(ok|FAIL) +side by side/ { print; exit } on' "$log_dir/riscv64.log" 2>/dev/null |
	sed 's/^ *//; s/^/   riscv64: /'
grep -h '^cross-build: ' "$log_dir/riscv64-build.log" 2>/dev/null | sed 's/^/   /'
if [ "$(dpkg --print-architecture)" != riscv64 ]; then
	stage bench-exec python3 "$top/bench/bench_exec.py" --plugin "$RVPAPI_BUILD/obj/plugin/.libs/librvexec.so" \
		--top "$top" --work "$RVPAPI_BUILD/bench-exec" --riscv64-prefix "$RVPAPI_BUILD/prefix-riscv64"
	grep -E '^bench_exec: (gemm|chase|start-up)' "$log_dir/bench-exec.log" | sed 's/^/   bench: /'
fi
# riscv64: guest instructions of one PAPI_read through the mmap page vs read(), and of one trapped CSR access
# (counted from qemu's instruction trace, docs/emulator-core.md).
if [ -e "$RVPAPI_BUILD/prefix-riscv64/lib/librvemu.so" ]; then
	stage bench-riscv64 env RISCV64_PREFIX="$RVPAPI_BUILD/prefix-riscv64" "$top/bench/riscv64-read-cost.sh"
	grep -E '^  (PAPI_read|one trapped|ratios)' "$log_dir/bench-riscv64.log" | sed 's/^ */   bench riscv64: /'
fi

# Count the individual CUnit tests (their "tests" Run Summary rows) and the test programs (scripts/count-tests.sh) of
# the whole build tree: tests/ and the profiler's own test_prof_units.
read -r c_run c_pass c_fail <<<"$("$top/scripts/count-tests.sh" cunit "$RVPAPI_BUILD/obj")"
read -r a_run a_pass a_fail <<<"$("$top/scripts/count-tests.sh" cunit "$RVPAPI_BUILD/obj-asan")"
read -r p_run p_pass p_fail <<<"$("$top/scripts/count-tests.sh" programs "$RVPAPI_BUILD/obj")"
# The PAPI checks under the emulator (utilities, presets vs truth, ctests, examples), as their runners summed them.
papi_counts=$(grep -hE '^papi (tests|examples|robustness):' "$log_dir/papi.log" 2>/dev/null | sed 's/^papi //' | paste -sd ';' - | sed 's/;/; /g')
# The riscv64 build under qemu-user, as its runner summed it.
rv_cunit=$(sed -n 's/^riscv64 CUnit tests: //p' "$log_dir/riscv64.log" 2>/dev/null)
rv_papi=$(sed -n 's/^riscv64 PAPI tests: //p' "$log_dir/riscv64.log" 2>/dev/null)
rv_checks=$(sed -n 's/^riscv64 checks: //p' "$log_dir/riscv64.log" 2>/dev/null)
stages_ok=$(printf '%s\n' "${results[@]}" | grep -c ':ok$')
echo
echo "TEST SUMMARY: $stages_ok/${#results[@]} stages passed; test programs: $p_pass/$p_run passed ($p_fail failed);" \
	"CUnit tests: $c_pass/$c_run passed ($c_fail failed)," \
	"under ASan/UBSan: $a_pass/$a_run passed ($a_fail failed); PAPI under the emulator: ${papi_counts:-not run};" \
	"riscv64 under qemu-user: ${rv_checks:-not run}, CUnit tests: ${rv_cunit:-not run}, PAPI ${rv_papi:-not run};" \
	"logs in $log_dir"
[ "$failed" -eq 0 ]
