#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and install everything into the prefix (PREFIX, default build/prefix): installs missing Debian packages,
# fetches the pinned upstream sources, generates the event tables, builds our libpfm4, lib/, the emulator and
# PAPI, and installs them. Re-runs are incremental.
set -euo pipefail
case "${1:-}" in
-h | --help)
	sed -n '3,5p' "$0" | sed 's/^# \{0,1\}//'
	echo "usage: scripts/build.sh   Environment: RVPAPI_BUILD (default <repo>/build), PREFIX (default \$RVPAPI_BUILD/prefix)."
	exit 0
	;;
"") ;;
*)
	echo "scripts/build.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
export RVPAPI_BUILD=${RVPAPI_BUILD:-$top/build}
PREFIX=${PREFIX:-$RVPAPI_BUILD/prefix}
"$top/scripts/deps.sh"
"$top/scripts/fetch-upstream.sh"
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
	(cd "$top" && autoreconf -fi >/dev/null 2>&1)
fi
obj=$RVPAPI_BUILD/obj
mkdir -p "$obj"
if [ ! -f "$obj/Makefile" ] || ! grep -qx "prefix = $PREFIX" "$obj/Makefile"; then
	(cd "$obj" && "$top/configure" -q --prefix="$PREFIX" RVPAPI_BUILD="$RVPAPI_BUILD")
fi
make -C "$obj" -s -j"$(nproc)"
# `make install` installs everything: our libraries, the emulator, our libpfm4 and PAPI
make -C "$obj" -s install >/dev/null
echo "build: installed into $PREFIX"
