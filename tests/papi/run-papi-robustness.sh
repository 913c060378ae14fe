#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What we ship never crashes on bad input, and says what is wrong (called by scripts/build-papi.sh check PREFIX).
# Each check names the overlay patch it guards (papi-component/patches/upstream/):
#   10  a 9000-character event name: papi_command_line, PAPI_EVENTS of the high-level API, the API itself
#   27, 28  unknown names say "Event does not exist"; an event class without its unit mask: query and add
#       agree (PAPI_EATTR) (papi_bad_input)
#   29  a riscv_hpc event and a perf_event event in one EventSet: PAPI_ECOMBO (papi_bad_input bank)
#   11  a preset file with a bad derived type, a missing formula or an unknown term: ignored lines, no abort
#   12  a preset whose term is not an event: the preset is not available (papi_avail crashed)
#   13  PAPI_start/read/stop on an EventSet after PAPI_shutdown: PAPI_ENOEVST, no crash
#   14, 15  PAPI_CSV_EVENT_FILE naming a missing, empty or garbage file: perf_event disabled with a reason naming it
#   26  a preset file with CRLF line endings loads as with LF
#   09  papi_mem_info under the emulator: every cache the machine's sysfs describes, with its type, size and
#       lines; a machine without cache data gets a line saying so
#       (L1 instruction and data apart), whatever caches the emulated machine serves
#   06  an ordinary user on a board whose PMU cannot exclude the kernel, with perf_event_paranoid 2: perf_event
#       disabled with the fix in its reason; with paranoid 1 it counts (needs the emulator's permission model)
# Env: PAPI_TREE (built PAPI tree), PREFIX (PAPI, libpfm4 and the emulator installed), RVEMU_RUN.
# Prints one line per check and a summary; exit status 1 if any check failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
tree=${PAPI_TREE:-$build/papi}
prefix=${PREFIX:-$build/prefix}
run=${RVEMU_RUN:-$prefix/bin/rvemu-run}
utils=$tree/src/utils
work=$build/papi-robustness
rm -rf "$work"
mkdir -p "$work"
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pass=0
fail=0
ok() { echo "ok    $*"; pass=$((pass + 1)); }
bad() { echo "FAIL  $*"; fail=$((fail + 1)); }
emu() { timeout 120 "$run" --model sifive-u74 "$@"; }
# died RC: the exit status of a program killed by a signal (or by timeout)
died() { [ "$1" -ge 124 ]; }

[ -x "$run" ] || { echo "run-papi-robustness: rvemu-run not found at $run" >&2; exit 1; }
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$prefix/include" "$top/tests/papi/papi_bad_input.c" \
	-o "$work/papi_bad_input" -L"$prefix/lib" -lpapi ||
	{ echo "run-papi-robustness: cannot build papi_bad_input" >&2; exit 1; }
make -s -f "$top/examples/GNUmakefile" PREFIX="$prefix" OUT="$work/examples" >/dev/null ||
	{ echo "run-papi-robustness: cannot build the examples" >&2; exit 1; }

long=$(printf 'A%.0s' $(seq 9000))

# --- 10: long event names -----------------------------------------------------------------------------
for name in "$long" "riscv_sifive_u74::$long" "riscv_sifive_u74::INSTRUCTION_COMMIT:$long"; do
	what="papi_command_line with a ${#name}-character name (${name:0:20}...)"
	emu "$utils/papi_command_line" "$name" >"$work/command_line.txt" 2>&1
	rc=$?
	if died $rc; then
		bad "$what: exit status $rc (crashed)"
	elif grep -q "^Failed adding: ${name:0:40}" "$work/command_line.txt"; then
		ok "$what: refused ('$(grep -m1 '^because:' "$work/command_line.txt")')"
	else
		bad "$what: no 'Failed adding' (see $work/command_line.txt)"
	fi
done
PAPI_HL_VERBOSE=1 PAPI_EVENTS="PAPI_TOT_CYC,riscv_sifive_u74::$long" PAPI_OUTPUT_DIRECTORY="$work/hl" \
	emu --clock virtual "$work/examples/hl_region" >"$work/hl.txt" 2>&1
rc=$?
if died $rc; then
	bad "PAPI_EVENTS with a 9000-character name: exit status $rc (crashed)"
elif grep -q 'PAPI-HL Warning: "riscv_sifive_u74::AAAA' "$work/hl.txt" &&
	grep -q '"PAPI_TOT_CYC"' "$work"/hl/papi_hl_output/rank_*.json 2>/dev/null; then
	ok "PAPI_EVENTS with a 9000-character name: warned about it, PAPI_TOT_CYC still counted"
else
	bad "PAPI_EVENTS with a 9000-character name: no warning or no PAPI_TOT_CYC output (see $work/hl.txt)"
fi

# --- 10, 13: the API ----------------------------------------------------------------------------------
# api_checks LABEL FILE RC: each "ok"/"FAIL" line of a test program is one check of the corpus
api_checks() {
	local label=$1 file=$2 rc=$3 verdict rest
	while read -r verdict rest; do
		case $verdict in
		ok) ok "$label: $rest" ;;
		FAIL) bad "$label: $rest" ;;
		esac
	done < <(grep -E '^(ok|FAIL) ' "$file")
	[ "$rc" -eq 0 ] || bad "$label: exit status $rc (see $file)"
}
emu "$work/papi_bad_input" >"$work/bad_input.txt" 2>&1
api_checks papi_bad_input "$work/bad_input.txt" $?

# --- 29: a counter-bank event and a perf_event event in one EventSet: ECOMBO, not "Invalid argument" -------
timeout 120 "$run" --model lowrisc-hpc "$work/papi_bad_input" bank >"$work/bad_input_bank.txt" 2>&1
api_checks "papi_bad_input bank (lowrisc-hpc)" "$work/bad_input_bank.txt" $?

# --- 11, 12: bad preset lines -----------------------------------------------------------------------------
# Each bad line is ignored (with a PAPIERROR under PAPI_VERBOSE); the good line after it still defines a preset.
bad_lines=(
	"PRESET,PAPI_TOT_INS,BOGUS,riscv_sifive_u74::INSTRUCTIONS"
	"PRESET,PAPI_TOT_INS"
	"PRESET,PAPI_TOT_INS,DERIVED_POSTFIX"
	"PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::NO_SUCH_EVENT"
	"PRESET,PAPI_FP_OPS,DERIVED_ADD,riscv_sifive_u74::CYCLES,NO_SUCH_EVENT"
)
for line in "${bad_lines[@]}"; do
	printf 'CPU,riscv_sifive_u74\n%s\nPRESET,PAPI_TOT_CYC,NOT_DERIVED,riscv_sifive_u74::CYCLES\n' "$line" >"$work/presets.csv"
	PAPI_VERBOSE=1 PAPI_CSV_EVENT_FILE=$work/presets.csv emu "$utils/papi_avail" >"$work/avail.txt" 2>&1
	rc=$?
	if died $rc; then
		bad "preset line '$line': papi_avail exit status $rc (crashed)"
	elif grep -q "^PAPI Error: " "$work/avail.txt" && grep -q "^PAPI_TOT_CYC .* Yes" "$work/avail.txt"; then
		ok "preset line '$line': ignored with '$(grep -m1 '^PAPI Error: ' "$work/avail.txt" | cut -c13-90)', the next line loads"
	else
		bad "preset line '$line': no PAPI Error or PAPI_TOT_CYC missing (see $work/avail.txt)"
	fi
done

# --- 14, 15: PAPI_CSV_EVENT_FILE that gives no presets -----------------------------------------------------
: >"$work/empty.csv"
printf '\x7fELF\x02\x01garbage,,,\n\n#comment only\nCPU\n' >"$work/garbage.csv"
printf 'CPU,some_other_cpu\nPRESET,PAPI_TOT_CYC,NOT_DERIVED,CYCLES\n' >"$work/other-cpu.csv"
for f in "$work/missing.csv:No such file or directory" "$work/empty.csv:no valid PRESET line" \
	"$work/garbage.csv:no valid PRESET line" "$work/other-cpu.csv:no valid PRESET line" \
	"$work:no valid PRESET line"; do
	path=${f%%:*}
	want="PAPI_CSV_EVENT_FILE $path: ${f#*:}"
	PAPI_CSV_EVENT_FILE=$path emu "$utils/papi_component_avail" >"$work/component_avail.txt" 2>&1
	rc=$?
	if died $rc; then
		bad "PAPI_CSV_EVENT_FILE=$(basename "$path"): exit status $rc (crashed)"
	elif grep -A1 "^Name:   perf_event " "$work/component_avail.txt" | grep -qF "Disabled: $want"; then
		ok "PAPI_CSV_EVENT_FILE=$(basename "$path"): perf_event disabled: '$want'"
	else
		bad "PAPI_CSV_EVENT_FILE=$(basename "$path"): want 'Disabled: $want' (see $work/component_avail.txt)"
	fi
done

# --- 26: a preset file with CRLF line endings (saved on Windows) loads like the same file with LF ------------
printf 'CPU,riscv_sifive_u74\r\nPRESET,PAPI_TOT_CYC,NOT_DERIVED,riscv_sifive_u74::CYCLES\r\n# comment\r\n\r\nPRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS\r\n' >"$work/crlf.csv"
PAPI_CSV_EVENT_FILE=$work/crlf.csv emu "$utils/papi_avail" >"$work/avail-crlf.txt" 2>&1
rc=$?
if died $rc; then
	bad "PAPI_CSV_EVENT_FILE with CRLF line endings: papi_avail exit status $rc (crashed)"
elif grep -q "^PAPI_TOT_CYC .* Yes" "$work/avail-crlf.txt" && grep -q "^PAPI_TOT_INS .* Yes" "$work/avail-crlf.txt"; then
	ok "PAPI_CSV_EVENT_FILE with CRLF line endings: both presets load"
else
	bad "PAPI_CSV_EVENT_FILE with CRLF line endings: PAPI_TOT_CYC/PAPI_TOT_INS not available (see $work/avail-crlf.txt)"
fi

# --- rvemu-run: an empty --model (or RVEMU_MODEL set but empty) is an error, not the U74 in silence ----------
for how in "--model ''" "--model=" "RVEMU_MODEL=''"; do
	case $how in
	RVEMU_MODEL=*) RVEMU_MODEL='' timeout 120 "$run" true >"$work/empty-model.txt" 2>&1 ;;
	--model=) RVEMU_MODEL=cva6 timeout 120 "$run" --model= true >"$work/empty-model.txt" 2>&1 ;;
	*) RVEMU_MODEL=cva6 timeout 120 "$run" --model '' true >"$work/empty-model.txt" 2>&1 ;;
	esac
	rc=$?
	if [ $rc -eq 2 ] && grep -qE 'needs a value|RVEMU_MODEL is set but empty' "$work/empty-model.txt"; then
		ok "rvemu-run $how: refused ('$(head -c 90 "$work/empty-model.txt" | head -n1)')"
	else
		bad "rvemu-run $how: exit status $rc, want 2 and a message (see $work/empty-model.txt)"
	fi
done

# --- 09: papi_mem_info shows the machine's caches ------------------------------------------------------
# What the emulated machine's sysfs says (read through the emulator), as "L<level> <Type> <size KB> <lines>"
# lines, the lines of the whole cache being size / coherency_line_size (sysfs's number_of_sets is lines per way).
# (the shell's glob lists the host's directory: leaves the machine does not have read as missing)
emu sh -c 'for d in /sys/devices/system/cpu/cpu0/cache/index*; do
	lvl=$(cat "$d/level" 2>/dev/null) || continue
	kb=$(sed "s/K$//" "$d/size")
	echo "L$lvl $(cat "$d/type") $kb $((kb * 1024 / $(cat "$d/coherency_line_size")))"; done' 2>/dev/null |
	sort >"$work/sysfs-caches.txt"
emu "$utils/papi_mem_info" >"$work/mem_info.txt" 2>&1
awk '/^L[0-9] (Data|Instruction|Unified) Cache:/ { lvl = $1; type = $2; next }
     /Total size:/ && lvl != "" { size = $3 }
     /Number of Lines:/ && lvl != "" { print lvl, type, size, $4; lvl = "" }' "$work/mem_info.txt" | sort >"$work/mem_info-caches.txt"
if [ ! -s "$work/sysfs-caches.txt" ]; then
	bad "papi_mem_info: the emulated machine describes no caches in sysfs (cannot check)"
elif cmp -s "$work/sysfs-caches.txt" "$work/mem_info-caches.txt" && grep -q '^L1 Data ' "$work/mem_info-caches.txt" &&
	grep -q '^L1 Instruction ' "$work/mem_info-caches.txt"; then
	ok "papi_mem_info: every cache of the machine with its type, size and lines ($(paste -sd ';' "$work/mem_info-caches.txt"))"
else
	bad "papi_mem_info: caches differ from sysfs: want $(paste -sd ';' "$work/sysfs-caches.txt"), got $(paste -sd ';' "$work/mem_info-caches.txt")"
fi
# A machine whose device tree describes no caches (CVA6: events/models.csv has none, so its sysfs has no cache/):
# papi_mem_info says there are none and where it looked, instead of an empty "Cache Information." section.
timeout 120 "$run" --model cva6 "$utils/papi_mem_info" >"$work/mem_info-cva6.txt" 2>&1
if grep -A3 '^Cache Information' "$work/mem_info-cva6.txt" | grep -q "None: PAPI found no description of this processor's caches" &&
	grep -q '/sys/devices/system/cpu/cpu0/cache/' "$work/mem_info-cva6.txt" && ! grep -q 'Total size:' "$work/mem_info-cva6.txt"; then
	ok "papi_mem_info on a machine without cache data (cva6): '$(grep -m1 'None: PAPI found no description of this processor.s caches' "$work/mem_info-cva6.txt" | sed 's/^ *//')'"
else
	bad "papi_mem_info on cva6 does not say that no cache is described (see $work/mem_info-cva6.txt)"
fi

# --- 09b: the demo's short papi_avail keeps the column header and the derived count ----------------------
# scripts/demo.sh shows `papi_avail -a | scripts/papi-avail-brief.sh`: without the "Name Code Deriv" header the
# Deriv column's Yes/No reads as availability.
emu "$utils/papi_avail" -a >"$work/avail-a.txt" 2>&1
"$top/scripts/papi-avail-brief.sh" 5 <"$work/avail-a.txt" >"$work/avail-brief.txt" 2>&1
first_row=$(grep -n -m1 '^PAPI_' "$work/avail-brief.txt" | cut -d: -f1)
header_row=$(grep -n -m1 '^ *Name  *Code  *Deriv' "$work/avail-brief.txt" | cut -d: -f1)
summary=$(grep '^Of [0-9]* available events' "$work/avail-a.txt")
if [ -n "$first_row" ] && [ -n "$header_row" ] && [ "$header_row" -lt "$first_row" ] &&
	[ "$(grep -c '^PAPI_' "$work/avail-brief.txt")" -eq 5 ] && [ -n "$summary" ] &&
	[ "$(tail -n1 "$work/avail-brief.txt")" = "$summary" ] && grep -q '^Vendor string' "$work/avail-brief.txt"; then
	ok "demo's papi_avail -a summary: column header above the presets, 5 rows, '$summary'"
else
	bad "scripts/papi-avail-brief.sh lost the header or the count (see $work/avail-brief.txt)"
fi
if echo "not papi_avail" | "$top/scripts/papi-avail-brief.sh" >/dev/null 2>"$work/avail-brief-bad.txt"; then
	bad "scripts/papi-avail-brief.sh accepted input that is not papi_avail -a output"
else
	ok "scripts/papi-avail-brief.sh refuses other input: $(cat "$work/avail-brief-bad.txt")"
fi

# --- 06: an ordinary user without CAP_PERFMON ---------------------------------------------------------
# The emulator's permission model: --paranoid N sets the enforced perf_event_paranoid level and a process
# without CAP_PERFMON is refused what Linux refuses (docs/emulator-core.md). PAPI looks at the uid, the
# emulator at the capabilities: so the programs run as a really unprivileged user (setpriv to nobody when
# we are root), with --user on top.
# nobody cannot reach the build tree or the prefix when the clone lives under a 0700 directory (/root, a
# Debian home): the unprivileged runs use copies of the installed utility, rvemu-run and the libraries in a
# directory everyone may enter (the installed programs find their libraries through $ORIGIN/../lib).
as_user=()
unpriv_utils=$utils
if [ "$(id -u)" = 0 ]; then
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	reach=$(mktemp -d /tmp/rvpapi-nobody.XXXXXX) && chmod 755 "$reach" && mkdir -p "$reach/bin" "$reach/lib" &&
		cp "$prefix/bin/papi_component_avail" "$run" "$reach/bin/" && cp -P "$prefix"/lib/*.so* "$reach/lib/" &&
		chmod -R a+rX "$reach" || { bad "cannot copy the programs for the unprivileged runs to $reach"; }
	trap 'rm -rf "$reach"' EXIT
	unpriv_utils=$reach/bin
	emu() { LD_LIBRARY_PATH=$reach/lib RVEMU_LIB=$reach/lib/librvemu.so timeout 120 "$reach/bin/rvemu-run" --model sifive-u74 "$@"; }
fi
emu --user --paranoid 2 "${as_user[@]}" "$unpriv_utils/papi_component_avail" >"$work/unpriv2.txt" 2>&1
want="Disabled: PMU cannot exclude kernel, perf_event_paranoid=2 forbids kernel counts: sysctl kernel.perf_event_paranoid=1 or CAP_PERFMON"
if grep -A1 "^Name:   perf_event " "$work/unpriv2.txt" | grep -qF "$want"; then
	ok "ordinary user, U74 without Sscofpmf, paranoid 2: perf_event disabled, the reason names the fix"
else
	bad "ordinary user, U74 without Sscofpmf, paranoid 2: want '$want' (see $work/unpriv2.txt)"
fi
emu --user --paranoid 1 "${as_user[@]}" "$unpriv_utils/papi_component_avail" -d >"$work/unpriv1.txt" 2>&1
if grep -A1 "^Name:   perf_event " "$work/unpriv1.txt" | grep -q "Native: [1-9]" &&
	grep -q "Default domain:.*ALL" "$work/unpriv1.txt"; then
	ok "ordinary user, U74 without Sscofpmf, paranoid 1: perf_event enabled, domain ALL"
else
	bad "ordinary user, U74 without Sscofpmf, paranoid 1: perf_event not enabled with domain ALL (see $work/unpriv1.txt)"
fi
emu --user --paranoid 2 --sscofpmf "${as_user[@]}" "$unpriv_utils/papi_component_avail" -d >"$work/unpriv-sscofpmf.txt" 2>&1
if grep -A1 "^Name:   perf_event " "$work/unpriv-sscofpmf.txt" | grep -q "Native: [1-9]" &&
	grep -q "Available domains:.*USER" "$work/unpriv-sscofpmf.txt" &&
	! grep -q "Available domains:.*KERNEL" "$work/unpriv-sscofpmf.txt"; then
	ok "ordinary user, U74 with Sscofpmf, paranoid 2: perf_event enabled, user domain only"
else
	bad "ordinary user, U74 with Sscofpmf, paranoid 2: want perf_event enabled without KERNEL (see $work/unpriv-sscofpmf.txt)"
fi
emu --user --paranoid 3 "${as_user[@]}" "$unpriv_utils/papi_component_avail" >"$work/unpriv3.txt" 2>&1
want="Disabled: perf_event_paranoid>=3 forbids every count: sysctl kernel.perf_event_paranoid=1 or CAP_PERFMON"
if grep -A1 "^Name:   perf_event " "$work/unpriv3.txt" | grep -qF "$want"; then
	ok "ordinary user, paranoid 3 (Debian): perf_event disabled, the reason names the fix"
else
	bad "ordinary user, paranoid 3 (Debian): want '$want' (see $work/unpriv3.txt)"
fi

echo "papi robustness: $pass ok, $fail failed"
[ $fail -eq 0 ]
