#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apply our RISC-V overlay to a pristine PAPI 7.0.0 tree (as unpacked by scripts/fetch-upstream.sh).
#   papi-component/apply.sh PAPI_TREE [PRESETS_CSV]
# 1. copies our own files (overlay/*) into PAPI_TREE/src, and our component (riscv_hpc/) into src/components,
#    and writes src/riscv_cpuinfo_ids.h, PAPI's RISC-V identification rules, with scripts/gen_events.py from
#    events/ (generated, never committed: a new model is a change of the tables alone),
# 2. applies the patch series, one directory after the other, each in file-name order:
#      patches/upstream/NN-*.patch       meant for upstream PAPI (git format-patch files, one concern each)
#      patches/emulator-host/NN-*.patch  needed only because our emulator runs x86_64 builds of PAPI
#    (to add a patch, drop an NN-name.patch into the right directory; upstream/ uses 01-49,
#    emulator-host/ 50-99; a patch file anywhere else is refused),
# 3. appends our presets (events/presets.csv by default) to src/papi_events.csv, which PAPI compiles into
#    libpapi (papi_events_table.h) and installs as share/papi/papi_events.csv.
# Idempotent: a tree that already carries this exact overlay is left alone; a tree carrying another
# overlay (or a partly patched one) is refused -- start again from a pristine copy (build-papi.sh does).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
die() { echo "papi-component/apply.sh: error: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: apply.sh PAPI_TREE [PRESETS_CSV]"
tree=$1
presets=${2:-$top/events/presets.csv}
src=$tree/src
[ -f "$src/papi.c" ] && [ -f "$src/papi_events.csv" ] || die "$tree is not a PAPI source tree (no src/papi.c)"
[ -f "$presets" ] || die "presets file $presets not found"

ids=$(mktemp)
trap 'rm -f "$ids"' EXIT
python3 "$top/scripts/gen_events.py" --papi-ids "$ids" >/dev/null || die "generating riscv_cpuinfo_ids.h from events/ failed"
overlay_hash() {
	(cd "$here" && find overlay patches riscv_hpc -type f | LC_ALL=C sort | xargs sha256sum
	 sha256sum < "$presets"
	 sha256sum < "$ids") | sha256sum | cut -d' ' -f1
}
stamp=$tree/.rvpapi-papi-overlay
want=$(overlay_hash)
if [ -f "$stamp" ]; then
	[ "$(cat "$stamp")" = "$want" ] && { echo "apply: overlay already applied to $tree"; exit 0; }
	die "$tree carries a different overlay; apply to a fresh copy of the pristine tree"
fi
grep -q "PAPI_VENDOR_RISCV" "$src/papi.h" && die "$tree is partly patched (no stamp); use a fresh copy"

for f in "$here"/overlay/*; do
	cp "$f" "$src/"
	echo "apply: added src/$(basename "$f")"
done
cp "$ids" "$src/riscv_cpuinfo_ids.h"
chmod 644 "$src/riscv_cpuinfo_ids.h"
echo "apply: added src/riscv_cpuinfo_ids.h (generated from events/cpu_ids.csv)"
cp -r "$here/riscv_hpc" "$src/components/"
echo "apply: added src/components/riscv_hpc"
series_dirs=(upstream emulator-host)
stray=$(cd "$here/patches" && find . -name '*.patch' | LC_ALL=C sort |
	grep -v -E '^\./(upstream|emulator-host)/[^/]+\.patch$' || true)
if [ -n "$stray" ]; then
	die "patch files outside patches/upstream/ and patches/emulator-host/: $(echo $stray)"
fi
for dir in "${series_dirs[@]}"; do
	for p in "$here/patches/$dir"/*.patch; do
		[ -e "$p" ] || continue
		if ! patch -d "$tree" -p1 --forward --batch --quiet < "$p"; then
			die "patch $dir/$(basename "$p") does not apply to $tree"
		fi
		echo "apply: patched with $dir/$(basename "$p")"
	done
done
{
	echo "#"
	echo "# ---- RISC-V presets (riscv-papi events/presets.csv) ----"
	grep -v '^[[:space:]]*$' "$presets"
} >> "$src/papi_events.csv"
echo "apply: appended $(grep -c '^PRESET,' "$presets") RISC-V presets to src/papi_events.csv"
echo "$want" > "$stamp"
