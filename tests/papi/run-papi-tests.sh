#!/usr/bin/env bash
# PAPI integration tests under the emulator, for each model (called by scripts/build-papi.sh check PREFIX).
# Env: PAPI_TREE (built PAPI tree, default $RVPAPI_BUILD/papi), PREFIX (where PAPI and libpfm4 are
# installed), RVEMU_RUN (rvemu-run; default $PREFIX/bin/rvemu-run).
# Checks per model: papi_component_avail (perf_event enabled, counter count from events/models.csv),
# papi_avail (vendor/model string, presets), papi_native_avail (every event of events/), papi_command_line,
# test_papi_presets (every preset alone == emulator truth, domains), then PAPI's ctests with a pass count.
# Prints one line per check and a summary; exit status 1 if any check failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
tree=${PAPI_TREE:-$build/papi}
prefix=${PREFIX:-$build/prefix}
run=${RVEMU_RUN:-$prefix/bin/rvemu-run}
src=$tree/src
work=$build/papi-tests
mkdir -p "$work"
export LD_LIBRARY_PATH=$prefix/lib:$src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pass=0
fail=0
ok() { echo "ok    $*"; pass=$((pass + 1)); }
bad() { echo "FAIL  $*"; fail=$((fail + 1)); }
emu() { timeout 120 "$run" "$@"; } # a hang is a failure, not a stuck suite

[ -x "$run" ] || { echo "run-papi-tests: rvemu-run not found at $run" >&2; exit 1; }

# The test program against the built PAPI and our libpfm4.
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$prefix/include" -I"$src" -I"$top/emulator" \
	"$top/tests/papi/test_papi_presets.c" -o "$work/test_papi_presets" -L"$prefix/lib" -L"$src" \
	-lpapi -lpfm -lcunit -ldl || { echo "run-papi-tests: cannot build test_papi_presets" >&2; exit 1; }

model_field() { # model_field MODEL COLUMN  (events/models.csv)
	python3 - "$top/events/models.csv" "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
print(next(r[sys.argv[3]] for r in rows if r['model'] == sys.argv[2]))
PY
}

events_of_pmu() { # every event name (and alias) libpfm4 must show for a core PMU
	case "$1" in
	riscv_sifive_u74) f=sifive_u74.csv ;; riscv_openhwgroup_cva6) f=openhwgroup_cva6.csv ;; *) f= ;;
	esac
	python3 - "$top/events" "$f" <<'PY'
import csv, sys, os
def rows(name):
    return csv.DictReader(l for l in open(os.path.join(sys.argv[1], name)) if not l.startswith('#'))
names = [r['name'] for r in rows('riscv_generic.csv')]
if sys.argv[2]:
    for r in rows(sys.argv[2]):
        names.append(r['name'])
        if 'class_name' in r: names.append(r['class_name'])
print('\n'.join(sorted(set(names))))
PY
}

ctests="zero first second multiplex1 multiplex2 overflow overflow_force_software profile sprofile inherit
zero_pthreads serial_hl pthread_hl serial_hl_ll_comb"

for variant in sifive-u74 sifive-u74+sscofpmf cva6 lowrisc-hpc boom; do
	model=${variant%+*}
	opts=(--model "$model")
	sscofpmf=0
	[ "$variant" != "$model" ] && { opts+=(--sscofpmf); sscofpmf=1; }
	pmu=$(model_field "$model" core_pmu)
	counters=$(( $(model_field "$model" prog_counters) + 2 ))
	out=$work/$variant
	mkdir -p "$out"
	echo "== $variant (PMU $pmu, $counters counters)"

	emu "${opts[@]}" "$src/utils/papi_component_avail" -d > "$out/component_avail.txt" 2>&1
	if grep -A1 "^Name:   perf_event " "$out/component_avail.txt" | grep -q "Counters: $counters\b"; then
		ok "$variant papi_component_avail: perf_event enabled with $counters counters"
	else
		bad "$variant papi_component_avail: perf_event not enabled with $counters counters"
	fi

	emu "${opts[@]}" "$src/utils/papi_avail" > "$out/avail.txt" 2>&1
	uarch=$(model_field "$model" uarch)
	if grep -q "^Model string and code.*$uarch" "$out/avail.txt" && ! grep -q "^Vendor string and code *: *(" "$out/avail.txt"; then
		ok "$variant papi_avail: $(grep '^Vendor string' "$out/avail.txt" | cut -d: -f2 | xargs) / $uarch"
	else
		bad "$variant papi_avail: vendor/model string (see $out/avail.txt)"
	fi
	want=$(awk -F, -v cpu="CPU,$pmu" '$0==cpu{on=1;next} /^CPU,/{on=0} on&&/^PRESET,/{n++} END{print n+0}' \
		"$top/events/presets.csv")
	got=$(grep -c "^PAPI_[A-Z0-9_]* *0x[0-9a-f]* *Yes" "$out/avail.txt")
	[ "$got" -ge "$want" ] && [ "$got" -gt 0 ] && ok "$variant papi_avail: $got presets available ($want in events/presets.csv)" ||
		bad "$variant papi_avail: $got presets available, want $want"

	emu "${opts[@]}" "$src/utils/papi_native_avail" > "$out/native_avail.txt" 2>&1
	missing=0
	for ev in $(events_of_pmu "$pmu"); do
		grep -q "${pmu}::$ev\b\|^|  *:$ev\b\|[: ]$ev\b" "$out/native_avail.txt" || { missing=$((missing + 1)); echo "  missing $ev"; }
	done
	[ $missing -eq 0 ] && ok "$variant papi_native_avail: every event of events/ listed" ||
		bad "$variant papi_native_avail: $missing events of events/ missing"

	native=${pmu}::CYCLES
	[ "$pmu" = riscv_sifive_u74 ] && native="${pmu}::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED"
	[ "$pmu" = riscv_openhwgroup_cva6 ] && native="${pmu}::LOAD_ACCESS"
	emu "${opts[@]}" "$src/utils/papi_command_line" PAPI_TOT_CYC PAPI_TOT_INS "$native" > "$out/command_line.txt" 2>&1
	[ "$(grep -cE ':[[:space:]]*[0-9]+[[:space:]]*$' "$out/command_line.txt")" -ge 3 ] && ok "$variant papi_command_line: 3 counts" ||
		bad "$variant papi_command_line (see $out/command_line.txt)"

	EXPECT_SSCOFPMF=$sscofpmf emu "${opts[@]}" --clock virtual "$work/test_papi_presets" > "$out/presets.txt" 2>&1 &&
		ok "$variant test_papi_presets: $(grep 'presets available' "$out/presets.txt")" ||
		bad "$variant test_papi_presets (see $out/presets.txt)"

	npass=0
	nall=0
	for t in $ctests; do
		nall=$((nall + 1))
		(cd "$out" && emu "${opts[@]}" "$src/ctests/$t" TESTS_QUIET) > "$out/ctest_$t.txt" 2>&1
		if grep -q "PASSED" "$out/ctest_$t.txt"; then
			npass=$((npass + 1))
		else
			echo "  ctest $t: $(grep -m1 -E 'FAILED|SKIPPED|WARNING|Error' "$out/ctest_$t.txt" || echo 'no verdict')"
		fi
	done
	[ $npass -eq $nall ] && ok "$variant ctests: $npass/$nall passed" || bad "$variant ctests: $npass/$nall passed"
done
echo "papi tests: $pass ok, $fail failed"
[ $fail -eq 0 ]
