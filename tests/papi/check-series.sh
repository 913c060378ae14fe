#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PAPI patch series as upstream's maintainers would take it: `git am` of every patch (new files included:
# the cpuinfo parser, the Linux glue, the riscv_hpc component and its tests) onto pristine PAPI 7.0.0 applies
# exactly, gives the same sources as papi-component/apply.sh (which built what the other stages test), and
# builds: libpapi with the perf_event and riscv_hpc components, the utilities, the validation and component tests;
# and its preset table rule leaves no header when the generation fails (check-events-table-rule.sh).
#   tests/papi/check-series.sh    (after the build and install: needs $RVPAPI_BUILD/papi from apply.sh, our
#                                  libpfm4 in $RVPAPI_BUILD/libpfm4, librvbank in $PREFIX)
# The only difference allowed is what apply.sh adds beside the series: the RISC-V presets appended to
# src/papi_events.csv.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
prefix=${PREFIX:-$build/prefix}
applied=$build/papi
pfm=$build/libpfm4
die() { echo "check-series: $*" >&2; exit 1; }
[ -d "$applied/src" ] || { echo "check-series: no applied PAPI tree in $applied (build first)" >&2; exit 2; }
[ -f "$pfm/lib/libpfm.so" ] || { echo "check-series: no libpfm4 in $pfm (build first)" >&2; exit 2; }
[ -f "$prefix/lib/librvbank.so" ] || { echo "check-series: no librvbank in $prefix (install first)" >&2; exit 2; }
work=$build/papi-series
rm -rf "$work"
mkdir -p "$work"
t0=$SECONDS
RVPAPI_BUILD=$build "$top/papi-component/series-git.sh" "$work/series" >"$work/am.log" 2>&1 || {
	grep -E 'error|failed|does not apply|patch failed' "$work/am.log" >&2
	die "the series does not apply with git am"
}
n=$(git -C "$work/series" rev-list --count pristine..HEAD)
[ "$n" -eq "$("$top/papi-component/apply.sh" --list | wc -l)" ] || die "git am made $n commits, not one per patch"
differ=0
while IFS= read -r -d '' f; do
	[ "$f" = src/papi_events.csv ] && continue
	if ! cmp -s "$work/series/$f" "$applied/$f"; then
		echo "check-series: $f differs between git am of the series and apply.sh" >&2
		differ=$((differ + 1))
	fi
done < <(git -C "$work/series" ls-files -z)
# papi_events.csv: the series' file is the start of apply.sh's (which appends the RISC-V presets)
size=$(stat -c %s "$work/series/src/papi_events.csv")
cmp -s -n "$size" "$work/series/src/papi_events.csv" "$applied/src/papi_events.csv" ||
	{ echo "check-series: src/papi_events.csv: apply.sh's does not start with the series'" >&2; differ=$((differ + 1)); }
[ "$differ" -eq 0 ] || exit 1
echo "check-series: $n patches apply with git am to pristine PAPI 7.0.0, the same sources as apply.sh ($((SECONDS - t0))s)"

# The built-in preset table's Makefile rule (patch 55): a failing papi_events_table.sh leaves no header behind.
"$top/tests/papi/check-events-table-rule.sh" "$work/series/src" >"$work/table-rule.log" 2>&1 ||
	{ cat "$work/table-rule.log" >&2; die "a failing papi_events_table.sh leaves a header (see $work/table-rule.log)"; }
echo "check-series: the preset table's rule leaves no header when papi_events_table.sh fails ($(tail -n 1 "$work/table-rule.log"))"

# Build the git am tree as a maintainer would, against our libpfm4 and librvbank (upstream's own flags).
t1=$SECONDS
(cd "$work/series/src" && env -u CFLAGS -u LDFLAGS -u CPPFLAGS ./configure --prefix="$work/prefix" \
	--with-perf-events --with-components=riscv_hpc --with-static-lib=no --with-shared-lib=yes --with-shlib-tools \
	--with-pfm-incdir="$pfm/include" --with-pfm-libdir="$pfm/lib") >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; die "configure of the git am tree failed (see $work/build.log)"; }
# What the series touches: the library, the utilities, the validation tests (patch 43) and the component tests
# (riscv_hpc's). PAPI's ctests and ftests, which no patch changes, are left out to keep the stage short (the papi
# stage builds and runs them from apply.sh's tree, the same sources).
env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$work/series/src" -j"$(nproc)" F77= RISCV_HPC_ROOT="$prefix" \
	utils validation_tests comp_tests >>"$work/build.log" 2>&1 ||
	{ grep -n -B2 -A6 'error' "$work/build.log" | tail -n 30 >&2; die "the git am tree does not build (see $work/build.log)"; }
for f in libpapi.so utils/papi_avail utils/papi_mem_info validation_tests/cycles_validation \
	components/riscv_hpc/tests/riscv_hpc_basic; do
	[ -e "$work/series/src/$f" ] || die "the git am tree built without src/$f"
done
grep -q '_riscv_hpc_vector' "$work/series/src/components_config.h" ||
	die "the git am tree was configured without the riscv_hpc component"
echo "check-series: the git am tree builds: libpapi.so (perf_event, riscv_hpc), utilities, validation tests, riscv_hpc's tests ($((SECONDS - t1))s)"
