#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch the pinned upstream sources (scripts/upstream.lock) with `apt-get source`, verify the SHA-256 of
# each original tarball, and unpack each once under $RVPAPI_BUILD/upstream/<package>-<upstream version>.
# Besides PAPI and libpfm4 the lock pins what Debian 12 has no riscv64 build of (CUnit, libunwind, libelf and
# its zlib), cross-built by scripts/cross-deps.sh.
# Re-runs reuse what is there. RVPAPI_UPSTREAM overrides the folder (a cross build shares the native one).
# Usage: scripts/fetch-upstream.sh [package...]
# A version ending in "-*" takes whatever Debian revision the archive has now (security updates replace them;
# the orig tarball's SHA-256 pins the content). A fifth column lists the only paths to extract from the orig
# tarball (comma-separated, relative to its top folder), without Debian's patches: for a large tree of which we
# need a header (qemu's plugin API).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
dest=${RVPAPI_UPSTREAM:-$build/upstream}
mkdir -p "$dest"
want=("$@")
while read -r pkg ver orig sum only; do
    case "$pkg" in ''|'#'*) continue ;; esac
    if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $pkg "* ]]; then continue; fi
    debver=${ver#*:} # file names carry no epoch (zlib's 1:)
    upver=${debver%-*}
    tree=$dest/$pkg-$upver
    if [ -f "$tree/.rvpapi-verified" ]; then
        echo "fetch: $pkg $ver already unpacked in $tree"
        continue
    fi
    if [ ! -f "$dest/$orig" ]; then
        spec="$pkg=$ver"
        [[ "$ver" == *-'*' ]] && spec=$pkg # any Debian revision of this upstream version: the orig's sum decides
        echo "fetch: apt-get source $spec"
        (cd "$dest" && apt-get source -qq --download-only "$spec" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    fi
    [ -f "$dest/$orig" ] || { echo "fetch: error: $orig was not downloaded (is a deb-src entry configured? run scripts/deps.sh)" >&2; exit 1; }
    got=$(sha256sum "$dest/$orig" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
        echo "fetch: error: $orig has sha256 $got, expected $sum (scripts/upstream.lock)" >&2
        exit 1
    fi
    rm -rf "$tree"
    if [ -n "${only:-}" ]; then
        mkdir -p "$tree"
        IFS=, read -r -a paths <<<"$only"
        tar -xf "$dest/$orig" -C "$tree" --strip-components=1 --wildcards "${paths[@]/#/*/}" ||
            { echo "fetch: error: $orig lacks one of: $only" >&2; rm -rf "$tree"; exit 1; }
        touch "$tree/.rvpapi-verified"
        echo "fetch: $pkg $upver verified, extracted $only into $tree"
        continue
    fi
    # dpkg-source unpacks the orig tarball and applies Debian's patches; both are checked by the .dsc.
    (cd "$dest" && dpkg-source -q -x "${pkg}_${debver}.dsc" "$tree" 2>&1 | grep -v -e "^gpgv:" -e "signature" || true)
    [ -d "$tree" ] || { echo "fetch: error: dpkg-source failed to unpack $pkg" >&2; exit 1; }
    touch "$tree/.rvpapi-verified"
    echo "fetch: $pkg $ver verified and unpacked in $tree"
done < "$top/scripts/upstream.lock"
