#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install like a package: `make install DESTDIR=<stage>` from the configured tree (RVPAPI_BUILD/obj) must stage
# everything (libpfm4, PAPI, the emulator, tools, headers, pkg-config files, man pages); `make install prefix=...`
# (another prefix than the configured one) and `PREFIX=...` must be refused before anything is installed. Then the build tree's libraries are put out of reach (its PAPI, libpfm4, object and prefix
# folders are renamed for the duration of the test) and the staged programs run: the PAPI utilities under the
# staged rvemu-run, papi_hl_output_writer.py, and, from a moved copy of the staged tree, an example built with
# `pkg-config --cflags --libs papi` (the .pc files find their prefix from where they are).
# Env: RVPAPI_BUILD, PREFIX (the prefix the tree was configured with). Prints one line per check.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
prefix=${PREFIX:-$build/prefix}
obj=$build/obj
stage=$build/stage
work=$build/stage-test
pass=0
fail=0
ok() { echo "ok    $*"; pass=$((pass + 1)); }
bad() { echo "FAIL  $*"; fail=$((fail + 1)); }

rm -rf "$stage" "$work"
mkdir -p "$work"
# A prefix given only at install time (the tree is built for $prefix) and PREFIX (not a variable of this build)
# are refused before anything is installed: nothing appears at the other place, nothing changes in $prefix.
touch "$work/before-refusals"
sleep 1
for var in prefix PREFIX libdir; do
	if make -C "$obj" -s install $var="$work/elsewhere-$var" >"$work/install-$var.log" 2>&1; then
		bad "make install $var=... was accepted"
	elif ! grep -q "nothing was installed" "$work/install-$var.log"; then
		bad "make install $var=... failed without saying why (see $work/install-$var.log)"
	elif [ -e "$work/elsewhere-$var" ] || [ -n "$(find "$prefix" -newer "$work/before-refusals" | head -3)" ]; then
		bad "make install $var=... was refused after installing: $(find "$work/elsewhere-$var" "$prefix" -newer \
			"$work/before-refusals" 2>/dev/null | head -3 | paste -sd ' ' -)"
	else
		ok "make install $var=... refused, nothing installed: $(grep -m1 -o "$var=.*given at install time\|$var=.* is not a variable of this build" \
			"$work/install-$var.log" | sed "s|$work/||" | cut -c1-90)"
	fi
done
# --- the install itself, from a tree that was never installed: the prefix is out of reach while it stages ---
# (nothing may come from the prefix: PAPI's riscv_hpc component once took librvbank from there)
hidden=()
restore() {
	local d
	for d in "${hidden[@]}"; do mv "$d.out-of-reach" "$d"; done
	hidden=()
}
trap restore EXIT
hide() { # hide DIR...: rename for the rest of the test (restored at exit)
	local d
	for d in "$@"; do
		[ -e "$d" ] && mv "$d" "$d.out-of-reach" && hidden+=("$d")
	done
}
hide "$prefix"
if make -C "$obj" -s install DESTDIR="$stage" >"$work/install.log" 2>&1; then
	ok "make install DESTDIR=$stage (the prefix $prefix out of reach)"
else
	bad "make install DESTDIR=$stage (see $work/install.log)"
fi
[ -e "$prefix" ] && bad "make install DESTDIR=... wrote into the prefix: $(find "$prefix" | head -3 | paste -sd ' ' -)"
restore
root=$stage$prefix
missing=()
for f in bin/papi_avail bin/papi_component_avail bin/papi_native_avail bin/papi_command_line bin/papi_mem_info \
	bin/papi_hl_output_writer.py bin/rvemu-run bin/showevtinfo bin/check_events \
	lib/libpapi.so lib/libpfm.so lib/librvemu.so lib/librvhw.so lib/librvexec.so bin/rvexec-dump include/rvexec_shm.h \
	include/papi.h include/perfmon/pfmlib.h include/rvemu.h include/rvhw.h \
	lib/pkgconfig/papi.pc lib/pkgconfig/libpfm.pc share/papi/papi_events.csv \
	share/man/man1/papi_avail.1 share/man/man3/PAPI_start.3 share/man/man3/libpfm.3; do
	[ -e "$root/$f" ] || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] && ok "staged: libraries, tools, headers, pkg-config files, man pages ($(find "$root" -type f | wc -l) files)" ||
	bad "staged tree lacks ${missing[*]}"

# No installed ELF file looks for libraries in the build tree, and no .pc file names any of it (nor the source tree).
leaks=$(find "$root" -type f | while read -r f; do
	head -c4 "$f" 2>/dev/null | grep -q ELF || continue
	rp=$(readelf -d "$f" 2>/dev/null | grep -E 'RPATH|RUNPATH' | sed 's/.*\[\(.*\)\]/\1/')
	case "$rp" in *"$build"* | *"$top"*) echo "${f#"$root"/}: $rp" ;; esac
done)
for f in "$root"/lib/pkgconfig/*.pc; do
	grep -q -e "$build" -e "$top" "$f" && leaks+=" ${f##*/}: $(grep -e "$build" -e "$top" "$f" | paste -sd ' ' -)"
done
if [ -z "$leaks" ]; then
	ok "no RUNPATH or .pc entry points into the build tree (utilities: $(readelf -d "$root/bin/papi_avail" | grep RUNPATH | sed 's/.*\[\(.*\)\]/\1/'))"
else
	bad "build-tree paths in the install: $leaks"
fi

# --- out of reach: the build tree's libraries ----------------------------------------------------------
hide "$build/papi" "$build/libpfm4" "$obj" "$prefix"
clean_env=(env -i PATH=/usr/bin:/bin HOME="${HOME:-/tmp}")

# every library the staged papi_avail loads comes from the staged lib/ (or the system)
loaded=$("${clean_env[@]}" LD_TRACE_LOADED_OBJECTS=1 "$root/bin/papi_avail" 2>&1)
if echo "$loaded" | grep -Eq "libpapi.so.* => $root/(bin/\.\./)?lib/" &&
	echo "$loaded" | grep -Eq "libpfm.so.* => $root/(bin/\.\./)?lib/" &&
	! echo "$loaded" | grep -q "not found"; then
	ok "papi_avail loads libpapi and libpfm from the staged lib/ (RUNPATH \$ORIGIN/../lib)"
else
	bad "papi_avail's libraries: $(echo "$loaded" | grep -E 'papi|pfm|not found' | tr -s ' \t' ' ' | paste -sd ';' -)"
fi
run_staged() { # run_staged NAME ARGS...: a staged utility under the staged rvemu-run, output in $work/NAME.txt
	local name=$1
	shift
	timeout 120 "${clean_env[@]}" ${RVEMU_READ_ADVANCE:+RVEMU_READ_ADVANCE=$RVEMU_READ_ADVANCE} "$root/bin/rvemu-run" --model sifive-u74 --clock virtual -- "$root/bin/$name" "$@" \
		>"$work/$name.txt" 2>&1
}
run_staged papi_avail && grep -q "^Vendor string and code *: SiFive" "$work/papi_avail.txt" &&
	grep -q "^PAPI_TOT_CYC .* Yes" "$work/papi_avail.txt" &&
	ok "staged papi_avail: SiFive, $(grep -c '^PAPI_[A-Z0-9_]* .* Yes' "$work/papi_avail.txt") presets available" ||
	bad "staged papi_avail (see $work/papi_avail.txt)"
run_staged papi_component_avail && grep -A1 "^Name:   perf_event " "$work/papi_component_avail.txt" | grep -q "Counters: 4" &&
	ok "staged papi_component_avail: perf_event enabled with 4 counters" ||
	bad "staged papi_component_avail (see $work/papi_component_avail.txt)"
run_staged papi_native_avail && grep -q "^| INSTRUCTION_COMMIT " "$work/papi_native_avail.txt" &&
	ok "staged papi_native_avail: lists the U74's INSTRUCTION_COMMIT" ||
	bad "staged papi_native_avail (see $work/papi_native_avail.txt)"
RVEMU_READ_ADVANCE=1000000 run_staged papi_command_line PAPI_TOT_CYC &&
	grep -Eq '^PAPI_TOT_CYC :[[:space:]]+1000000[[:space:]]*$' "$work/papi_command_line.txt" &&
	ok "staged papi_command_line: PAPI_TOT_CYC = 1000000 (the 10^6 cycles each read runs)" ||
	bad "staged papi_command_line (see $work/papi_command_line.txt)"
run_staged papi_mem_info && grep -q "^L1 Data Cache:" "$work/papi_mem_info.txt" &&
	grep -q "^L1 Instruction Cache:" "$work/papi_mem_info.txt" &&
	ok "staged papi_mem_info: L1 data and instruction caches apart" ||
	bad "staged papi_mem_info (see $work/papi_mem_info.txt)"

# --- an example built against a moved copy of the staged tree with pkg-config (no PKG_CONFIG_SYSROOT_DIR) -----
moved=$work/moved/rvpapi
mkdir -p "$work/moved" && cp -a "$root" "$moved"
pc=("${clean_env[@]}" PKG_CONFIG_PATH="$moved/lib/pkgconfig")
want="-I$moved/lib/pkgconfig/../../include -L$moved/lib/pkgconfig/../../lib -lpapi"
flags=$("${pc[@]}" pkg-config --cflags --libs papi | xargs)
if [ "$flags" = "$want" ]; then
	ok "papi.pc is relocatable: pkg-config --cflags --libs papi of the moved tree: ${flags//$work\//}"
else
	bad "pkg-config --cflags --libs papi of the moved tree: '$flags', expected '$want'"
fi
if cc -std=c11 -D_GNU_SOURCE -O2 "$top/examples/hl_region.c" $flags -ldl -o "$work/hl_region" 2>"$work/cc.log"; then
	ok "hl_region built with \`pkg-config --cflags --libs papi\` of the moved tree"
else
	bad "hl_region does not build with $flags (see $work/cc.log)"
fi
if [ -x "$work/hl_region" ]; then
	timeout 120 "${clean_env[@]}" LD_LIBRARY_PATH="$moved/lib" PAPI_EVENTS=PAPI_TOT_CYC,PAPI_TOT_INS \
		PAPI_OUTPUT_DIRECTORY="$work/hl" "$moved/bin/rvemu-run" --model sifive-u74 --clock virtual -- \
		"$work/hl_region" >"$work/hl_region.txt" 2>&1
	json=$(ls "$work"/hl/papi_hl_output/rank_*.json 2>/dev/null | head -1)
	if [ -n "$json" ] && grep -q '"PAPI_TOT_CYC": *"\?1000000"\?' "$json"; then
		ok "staged hl_region: region dot counted PAPI_TOT_CYC = 1000000 (virtual clock)"
	else
		bad "staged hl_region: no PAPI_TOT_CYC 1000000 in ${json:-no JSON} (see $work/hl_region.txt)"
	fi
	# the summary on stdout (JSON), and into papi_sum.json of the current folder, which it names on stderr
	rm -f "$work/papi_sum.json"
	if [ -n "$json" ] && (cd "$work" && "${clean_env[@]}" "$root/bin/papi_hl_output_writer.py" \
		--source "$work/hl/papi_hl_output" >"$work/writer.json" 2>"$work/writer.err") &&
		grep -q "dot" "$work/writer.json" && python3 -m json.tool "$work/writer.json" >/dev/null &&
		grep -qx "papi_hl_output_writer: wrote $work/papi_sum.json" "$work/writer.err" && [ -s "$work/papi_sum.json" ]; then
		ok "staged papi_hl_output_writer.py ($(head -1 "$root/bin/papi_hl_output_writer.py")) summarises the regions; '$(sed "s|$work/||" "$work/writer.err")'"
	else
		bad "staged papi_hl_output_writer.py (see $work/writer.json and $work/writer.err)"
	fi
fi
# examples/sample_batch.c builds with the command its own comment gives (joined at its backslash), run as written
# in the example's folder with the moved tree's pkg-config files, and runs on the emulated CVA6 (PES built in)
build_cmd=$(sed -n '/^ \*   cc /,/-o sample_batch$/p' "$top/examples/sample_batch.c" | sed 's/^ \* *//; s/\\$//' | tr '\n' ' ')
if [ -z "$build_cmd" ]; then
	bad "examples/sample_batch.c: no build command in its comment"
elif (cd "$top/examples" && "${pc[@]}" sh -c "${build_cmd/-o sample_batch/-o $work/sample_batch}") >"$work/sample_batch-cc.log" 2>&1 &&
	timeout 120 "${clean_env[@]}" "$moved/bin/rvemu-run" --model cva6 -- "$work/sample_batch" >"$work/sample_batch.txt" 2>&1 &&
	grep -q "samples of PAPI_TOT_CYC" "$work/sample_batch.txt" && grep -q "hot_loop" "$work/sample_batch.txt"; then
	ok "examples/sample_batch.c built with its comment's command and ran: $(grep -m1 'samples of' "$work/sample_batch.txt")"
else
	bad "examples/sample_batch.c with its comment's command '$build_cmd' (see $work/sample_batch-cc.log, $work/sample_batch.txt)"
fi
if [ "$("${pc[@]}" pkg-config --cflags libpfm | xargs)" = "-I$moved/lib/pkgconfig/../../include" ]; then
	ok "libpfm.pc is relocatable (its prefix follows the file)"
else
	bad "libpfm.pc: $("${pc[@]}" pkg-config --cflags libpfm 2>&1)"
fi
restore
trap - EXIT
echo "staged install: $pass ok, $fail failed"
[ $fail -eq 0 ]
