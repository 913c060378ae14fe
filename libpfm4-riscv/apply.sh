#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apply the RISC-V port onto a pinned libpfm4 4.13.0 tree: the git format-patch series patches/0001-*.patch ...
# in order (0000-cover-letter.patch is the series' cover letter, not a patch), exactly what `git am` of the same
# files gives (tests/pfm/check-libpfm4-series.sh): fixes to libpfm4's common code, then the RISC-V port, new
# files included. Nothing reaches the tree beside the series.
#   libpfm4-riscv/apply.sh <libpfm4-tree> [<generated-libpfm-dir>]
#   libpfm4-riscv/apply.sh --list        the patch files, in the order they apply
#   libpfm4-riscv/apply.sh --refresh     rewrite the patches that add new files from their files (below)
# The patches that add new files are kept equal to those files (series-files.txt; scripts/series_files.py):
# our files in lib/ and tests/, and the event headers lib/events/riscv_*.h, which gen/gen_events.py
# generates from events/ (a build passes them as <generated-libpfm-dir>; without it they are generated here
# into a scratch folder). A stale patch stops the build: run apply.sh --refresh and commit the patch.
# Idempotent: a patch already applied is skipped; a patch that neither applies nor is applied stops with an error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "apply.sh: error: $*" >&2; exit 1; }
series() { # the patches in the order they apply
    local p
    for p in "$here"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
        [ "$(basename "$p")" = 0000-cover-letter.patch ] || echo "$p"
    done
}
[ "${1:-}" = --list ] && { series; exit 0; }
gen=
if [ "${1:-}" != --refresh ]; then
    tree=${1:?usage: apply.sh <libpfm4-tree> [<generated-libpfm-dir>] | --list | --refresh}
    gen=${2:-}
fi
if [ -z "$gen" ]; then
    gen=$(mktemp -d)
    trap 'rm -rf "$gen"' EXIT
    python3 "$here/../gen/gen_events.py" --libpfm "$gen" > /dev/null || die "generating the event headers failed"
fi
new_files() { # new_files --check|--write
    python3 "$here/../scripts/series_files.py" --manifest "$here/series-files.txt" --gen "$gen" "$1" \
        --hint "libpfm4-riscv/apply.sh --refresh"
}
[ "${1:-}" = --refresh ] && { new_files --write; exit; }

[ -f "$tree/lib/pfmlib_common.c" ] || die "$tree is not a libpfm4 source tree"
new_files --check || die "a patch adding new files is stale (see above)"
while read -r p; do
    name=$(basename "$p")
    if patch -d "$tree" -p1 -R --dry-run -s -f < "$p" > /dev/null 2>&1; then
        continue # already applied
    fi
    if ! out=$(patch -d "$tree" -p1 --dry-run -f < "$p" 2>&1); then
        echo "$out" >&2
        die "$name does not apply to $tree (not a pristine libpfm4 4.13.0?)"
    fi
    patch -d "$tree" -p1 -s -f --no-backup-if-mismatch < "$p" || die "$name failed to apply"
    echo "apply.sh: applied $name"
done < <(series)
