#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apply our RISC-V series to a pristine PAPI 7.0.0 tree (as unpacked by scripts/fetch-upstream.sh).
#   papi-component/apply.sh PAPI_TREE [PRESETS_CSV]
#   papi-component/apply.sh --list       the series' patch files, in the order they apply (series-git.sh uses it)
#   papi-component/apply.sh --refresh    rewrite the patches that add new files from their files (below)
# 1. checks that the patches adding new files add exactly the files of this tree (series-files.txt: overlay/,
#    riscv_hpc/, and src/riscv_cpuinfo_ids.h, PAPI's RISC-V identification rules, generated from events/ by
#    gen/gen_events.py); a stale one stops the build: run apply.sh --refresh and commit the patch,
# 2. applies the patch series, one directory after the other, each in file-name order (what `git am` of the
#    same files gives, tests/papi/check-series.sh; nothing reaches the tree beside the series but step 3):
#      patches/upstream/NN-*.patch       meant for upstream PAPI (git format-patch files, one concern each);
#                                        00a, 00b... add new files and come before 01, which uses them
#      patches/riscv_hpc/NN-*.patch      the riscv_hpc component (src/components/riscv_hpc), for upstream too
#      patches/emulator-host/NN-*.patch  needed only because our emulator runs x86_64 builds of PAPI
#    (to add a patch, drop an NN-name.patch into the right directory; upstream/ uses 00a-00z, then 01 on,
#    a patch split in two keeps its number with a letter (44a, 44b); emulator-host/ has its own 50-99;
#    a patch file anywhere else is refused),
# 3. appends our presets (events/presets.csv by default) to src/papi_events.csv, which PAPI compiles into
#    libpapi (papi_events_table.h) and installs as share/papi/papi_events.csv.
# Idempotent: a tree that already carries this exact series is left alone; a tree carrying another
# series (or a partly patched one) is refused -- start again from a pristine copy (build-papi.sh does).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
die() { echo "papi-component/apply.sh: error: $*" >&2; exit 1; }

series_dirs=(upstream riscv_hpc emulator-host)
series() { # the patch files in the order they apply
	local dir p
	for dir in "${series_dirs[@]}"; do
		for p in "$here/patches/$dir"/*.patch; do
			[ -e "$p" ] && echo "$p"
		done
	done
	return 0
}
[ "${1:-}" = --list ] && { series; exit 0; }
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
python3 "$top/gen/gen_events.py" --papi-ids "$gen/riscv_cpuinfo_ids.h" >/dev/null ||
	die "generating riscv_cpuinfo_ids.h from events/ failed"
new_files() { # new_files --check|--write
	python3 "$top/scripts/series_files.py" --manifest "$here/series-files.txt" --gen "$gen" "$1" \
		--hint "papi-component/apply.sh --refresh"
}
[ "${1:-}" = --refresh ] && { new_files --write; exit; }

[ $# -ge 1 ] || die "usage: apply.sh PAPI_TREE [PRESETS_CSV] | --list | --refresh"
tree=$1
presets=${2:-$top/events/presets.csv}
src=$tree/src
[ -f "$src/papi.c" ] && [ -f "$src/papi_events.csv" ] || die "$tree is not a PAPI source tree (no src/papi.c)"
[ -f "$presets" ] || die "presets file $presets not found"
stray=$(cd "$here/patches" && find . -name '*.patch' | LC_ALL=C sort |
	grep -v -E '^\./(upstream|riscv_hpc|emulator-host)/[^/]+\.patch$' || true)
[ -z "$stray" ] || die "patch files outside patches/upstream/, riscv_hpc/ and emulator-host/: $(echo $stray)"
new_files --check || die "a patch adding new files is stale (see above)"

overlay_hash() {
	(cd "$here" && find overlay patches riscv_hpc -type f | LC_ALL=C sort | xargs sha256sum
	 sha256sum < "$presets") | sha256sum | cut -d' ' -f1
}
stamp=$tree/.rvpapi-papi-overlay
want=$(overlay_hash)
if [ -f "$stamp" ]; then
	[ "$(cat "$stamp")" = "$want" ] && { echo "apply: series already applied to $tree"; exit 0; }
	die "$tree carries a different series; apply to a fresh copy of the pristine tree"
fi
grep -q "PAPI_VENDOR_RISCV" "$src/papi.h" && die "$tree is partly patched (no stamp); use a fresh copy"

while read -r p; do
	name=${p#"$here/patches/"}
	patch -d "$tree" -p1 --forward --batch --quiet < "$p" || die "patch $name does not apply to $tree"
	echo "apply: patched with $name"
done < <(series)
{
	echo "#"
	echo "# ---- RISC-V presets (riscv-papi events/presets.csv) ----"
	grep -v '^[[:space:]]*$' "$presets"
} >> "$src/papi_events.csv"
echo "apply: appended $(grep -c '^PRESET,' "$presets") RISC-V presets to src/papi_events.csv"
echo "$want" > "$stamp"
