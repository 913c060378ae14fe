#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The stress mode of the test command: runs chosen stages N times while `stress-ng --cpu 2` keeps the host's
# CPUs busy, and prints each run's verdict and counts, then one summary line. The sampling tests must not
# depend on an idle host (issue 20: the sampling alarm stalled under load); this is how that is shown.
#
#   scripts/stress.sh [-h|--help] [-n RUNS] [-t SECONDS] [STAGE...]
#
# Stages (default: sampling unit):
#   sampling  the sampling tests: tests/emu/test_emu and tests/sample/test_sample (make check TESTS=...)
#   unit      the whole unit-test stage (make -C build/obj check), as ./scripts/test.sh runs it
#   overflow  PAPI_overflow(PAPI_TOT_CYC, 100000) on the U74 with Sscofpmf for 400 ms of CPU: the handler
#             calls against the overflows due (cycles counted / threshold), within 1%
#   papi      the PAPI stage (scripts/build-papi.sh check PREFIX: utilities, presets, ctests, examples)
# -n RUNS (default 20), -t SECONDS: the time limit of one stage run (default 900); a run that exceeds it is
# killed and counted as failed. Needs a built tree (./scripts/test.sh, or the build and install stages).
# Exit status 0 when every run of every stage passed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RVPAPI_BUILD=${RVPAPI_BUILD:-$top/build}
PREFIX=${PREFIX:-$RVPAPI_BUILD/prefix}
obj=$RVPAPI_BUILD/obj
runs=20
limit=900
usage() { sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; }
[ "${1:-}" = --help ] && { usage; exit 0; }
while getopts "n:t:h" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	t) limit=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(sampling unit)
case $runs$limit in *[!0-9]*) echo "stress: -n and -t take whole numbers" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] && [ "$runs" -le 1000 ] || { echo "stress: -n must be 1..1000" >&2; exit 2; }
for s in "${stages[@]}"; do
	case $s in sampling | unit | overflow | papi) ;; *) echo "stress: unknown stage '$s' (sampling, unit, overflow, papi)" >&2; exit 2 ;; esac
done
command -v stress-ng >/dev/null || { echo "stress: stress-ng is not installed (scripts/deps.sh installs it)" >&2; exit 2; }
[ -f "$obj/Makefile" ] || { echo "stress: no built tree in $obj (run ./scripts/test.sh first)" >&2; exit 2; }
log_dir=$RVPAPI_BUILD/stress-logs
mkdir -p "$log_dir"

stage_cmd() { # stage_cmd STAGE: runs one stage once, output to stdout
	case $1 in
	sampling)
		rm -f "$obj"/tests/emu/test_emu.log "$obj"/tests/sample/test_sample.log
		make -C "$obj/tests" check TESTS="emu/test_emu sample/test_sample"
		;;
	unit) make -C "$obj" -j2 check ;;
	overflow)
		local prog=$log_dir/overflow_fast
		[ "$prog" -nt "$top/tests/papi/overflow_fast.c" ] || cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$PREFIX/include" -I"$top/emulator" \
			"$top/tests/papi/overflow_fast.c" -o "$prog" -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lpapi -lpfm -ldl ||
			return 1
		"$PREFIX/bin/rvemu-run" --model sifive-u74 --sscofpmf "$prog" 100000 400 1
		;;
	papi) "$top/scripts/build-papi.sh" check "$PREFIX" ;;
	esac
}

stage_counts() { # stage_counts STAGE LOG: the counts of one run, one line
	case $1 in
	sampling)
		read -r r p f <<<"$("$top/scripts/count-tests.sh" cunit "$obj/tests/emu/test_emu.log" "$obj/tests/sample/test_sample.log")"
		echo "CUnit $p/$r passed ($f failed)"
		;;
	unit)
		# counted as the test command's closing line counts them: the whole tree (tests/ and profiler/)
		local pr pp pf
		read -r r p f <<<"$("$top/scripts/count-tests.sh" cunit "$obj")"
		read -r pr pp pf <<<"$("$top/scripts/count-tests.sh" programs "$obj")"
		echo "programs $pp/$pr passed ($pf failed); CUnit $p/$r passed ($f failed)"
		;;
	overflow) grep -h '^overflow_fast:' "$2" | sed 's/^overflow_fast: //' ;;
	papi) grep -hE '^papi (tests|examples|robustness):' "$2" | sed 's/^papi //' | paste -sd ';' - ;;
	esac
}

stress-ng --cpu 2 --timeout $((runs * limit * ${#stages[@]} + 60)) >/dev/null 2>&1 &
stressor=$!
trap 'kill "$stressor" 2>/dev/null; wait "$stressor" 2>/dev/null' EXIT
sleep 1
echo "stress: ${stages[*]}, $runs runs each under stress-ng --cpu 2 (pid $stressor), at most ${limit}s a run; logs in $log_dir"
total=0
failed=0
summary=()
for s in "${stages[@]}"; do
	ok=0
	for i in $(seq 1 "$runs"); do
		log=$log_dir/$s-$i.log
		t0=$SECONDS
		touch "$log_dir/.run-start"
		if timeout -k 10 "$limit" bash -c "$(declare -f stage_cmd); obj='$obj' top='$top' PREFIX='$PREFIX' log_dir='$log_dir' stage_cmd $s" >"$log" 2>&1; then
			verdict=ok
			ok=$((ok + 1))
		else
			verdict=FAIL
			failed=$((failed + 1))
		fi
		total=$((total + 1))
		printf 'stress %-8s run %2d/%d: %-4s (%3ss) %s\n' "$s" "$i" "$runs" "$verdict" $((SECONDS - t0)) "$(stage_counts "$s" "$log")"
		if [ $verdict != ok ]; then # the failed assertions, from the run's log and the test programs' logs
			{ cat "$log"; [ "$s" = sampling ] || [ "$s" = unit ] && find "$obj" -name '*.log' -newer "$log_dir/.run-start" -print0 | xargs -0 -r cat; } |
				grep -hE '^FAIL|\.c:[0-9]+ +- ' | sort -u | head -8 | sed 's/^/   | /'
			# the next run writes the failing programs' logs again: keep this run's beside its own
			for t in $(sed -n 's/^FAIL: //p' "$log"); do
				[ -f "$obj/tests/$t.log" ] && cp "$obj/tests/$t.log" "$log_dir/$s-$i-${t//\//_}.log" &&
					echo "   | kept: $log_dir/$s-$i-${t//\//_}.log"
			done
		fi
	done
	summary+=("$s $ok/$runs")
done
echo "STRESS SUMMARY: $((total - failed))/$total runs passed under stress-ng --cpu 2 ($(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g'))"
[ "$failed" -eq 0 ]
