#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apply the RISC-V port onto a pinned libpfm4 4.13.0 tree: copy our own files in, then apply the small
# registration patches (PMU ids, PMU table, build switches, validate hook). Everything the port touches in
# upstream files is in patches/*.patch; everything else is a new file.
# Idempotent: a patch already applied is skipped; a patch that neither applies nor is applied stops with an error.
# Usage: libpfm4-riscv/apply.sh <libpfm4-tree> <generated-libpfm-dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:?usage: apply.sh <libpfm4-tree> <generated-libpfm-dir>}
gen=${2:?usage: apply.sh <libpfm4-tree> <generated-libpfm-dir>}
die() { echo "apply.sh: error: $*" >&2; exit 1; }

[ -f "$tree/lib/pfmlib_common.c" ] || die "$tree is not a libpfm4 source tree"
for model in generic sifive_u74 openhwgroup_cva6 lowrisc_hpc ucb_boom; do
    [ -f "$gen/riscv_${model}_events.h" ] || die "$gen/riscv_${model}_events.h missing (run scripts/gen_events.py --libpfm $gen)"
done

# our own files (cp only when different, so make does not rebuild an unchanged tree)
install_file() { cmp -s "$1" "$2" || cp "$1" "$2"; }
for f in "$here"/lib/*.c "$here"/lib/*.h; do install_file "$f" "$tree/lib/$(basename "$f")"; done
for f in "$gen"/riscv_*_events.h "$gen"/riscv_counters.h; do install_file "$f" "$tree/lib/events/$(basename "$f")"; done
for f in "$here"/tests/*.c; do install_file "$f" "$tree/tests/$(basename "$f")"; done

# the registrations in upstream files
for p in "$here"/patches/*.patch; do
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
done
