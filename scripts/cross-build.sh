#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole stack as riscv64 code (docs/riscv64.md): the project's own autotools build, configured with
# --host=riscv64-linux-gnu, builds our libpfm4, PAPI 7.0.0 with every patch, the riscv_hpc component and PAPI's
# ctests, lib/ (librvhw, librvbank), sampling/ (librvsample), the emulator, rvprof and its agent, and the CUnit programs
# (make check TESTS=, built, not run), and installs into the riscv64 prefix. CUnit, libunwind and libelf come
# from scripts/cross-deps.sh (built once from their pinned Debian sources, then reused).
#   scripts/cross-build.sh
# Env: RVPAPI_BUILD (default <repo>/build), RISCV64_PREFIX (default $RVPAPI_BUILD/prefix-riscv64), JOBS.
# Trees: $RVPAPI_BUILD/obj-riscv64-linux-gnu (objects), $RVPAPI_BUILD/riscv64-linux-gnu (its libpfm4 and PAPI).
# Run it under qemu-user with tests/riscv64/run-riscv64-tests.sh.
set -euo pipefail
case "${1:-}" in
-h | --help)
	sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
"") ;;
*)
	echo "scripts/cross-build.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
host=riscv64-linux-gnu
prefix=${RISCV64_PREFIX:-$build/prefix-riscv64}
obj=$build/obj-$host
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
die() { echo "cross-build: error: $*" >&2; exit 1; }
case $prefix in /*) ;; *) die "RISCV64_PREFIX must be an absolute path, not $prefix" ;; esac
command -v "$host-gcc" >/dev/null || die "$host-gcc not found (scripts/deps.sh installs gcc-riscv64-linux-gnu)"
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1) || die "autoreconf failed"

t0=$SECONDS
deps=$(RVPAPI_BUILD=$build "$top/scripts/cross-deps.sh" "$host") || die "the riscv64 dependencies did not build"
echo "cross-build: dependencies (CUnit, libunwind, libelf, zlib) ready in $deps ($((SECONDS - t0))s)"

t1=$SECONDS
mkdir -p "$obj"
if [ ! -f "$obj/Makefile" ] || ! grep -qx "prefix = $prefix" "$obj/Makefile" || [ "$top/configure" -nt "$obj/Makefile" ]; then
	(cd "$obj" && "$top/configure" -q --host="$host" --prefix="$prefix" RVPAPI_BUILD="$build/$host" \
		RVPAPI_UPSTREAM="$build/upstream" CPPFLAGS="-I$deps/include" \
		LDFLAGS="-L$deps/lib -Wl,-rpath-link,$deps/lib") || die "configure --host=$host failed (see $obj/config.log)"
fi
make -C "$obj" -s -j"$jobs" || die "the riscv64 build failed"
make -C "$obj" -s install >/dev/null || die "the riscv64 install failed"
make -C "$obj" -s -j"$jobs" check TESTS= >/dev/null || die "building the riscv64 test programs failed"

# What must be riscv64 code, and the riscv-only code paths that must be in it.
for f in bin/papi_avail bin/rvprof bin/showevtinfo lib/libpapi.so lib/libpfm.so lib/librvemu.so lib/librvhw.so \
	lib/librvbank.so lib/librvsample.so lib/librvprof-agent.so; do
	file -L "$prefix/$f" | grep -q "UCB RISC-V" || die "$prefix/$f is not a RISC-V ELF"
done
code=$("$host-objdump" -d "$prefix/lib/libpapi.so")
grep -q "rdtime" <<<"$code" || die "no rdtime in libpapi.so: the RISC-V cycle timer was not compiled"
grep -qP "fence\tr,r" <<<"$code" || die "no 'fence r,r' in libpapi.so: the RISC-V rmb() was not compiled"
# (whole outputs in variables: grep -q would stop reading early, and pipefail would count nm's SIGPIPE)
symbols=$("$host-nm" "$prefix/lib/libpapi.so")
grep -q " T PAPI_library_init$" <<<"$symbols" || die "libpapi.so has no PAPI_library_init"
grep -q " _riscv_hpc_vector$" <<<"$symbols" || die "libpapi.so has no riscv_hpc component"
[ -x "$build/$host/papi/src/ctests/zero" ] || die "PAPI's ctests were not built"
echo "cross-build: riscv64 stack built and installed into $prefix ($((SECONDS - t1))s)"
