#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PAPI patch series applies to pristine PAPI 7.0.0 with `git am` (no offsets, no fuzz: what upstream's
# maintainers would run), and gives the same sources as papi-component/apply.sh, which built what we test.
#   tests/papi/check-series.sh    (after the build: needs $RVPAPI_BUILD/papi from apply.sh)
# The only differences allowed are what apply.sh adds beside the series: the riscv_hpc component's directory
# and the RISC-V presets appended to src/papi_events.csv.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
applied=$build/papi
[ -d "$applied/src" ] || { echo "check-series: no applied PAPI tree in $applied (build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RVPAPI_BUILD=$build "$top/papi-component/series-git.sh" "$work/series" >"$work/log" 2>&1 || {
	grep -E 'error|failed|does not apply' "$work/log" >&2
	echo "check-series: the series does not apply with git am" >&2
	exit 1
}
n=$(git -C "$work/series" rev-list --count HEAD)
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
echo "check-series: $((n - 1)) patches apply with git am to pristine PAPI 7.0.0 (+ overlay), the same sources as apply.sh"
