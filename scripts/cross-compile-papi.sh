#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-compile PAPI 7.0.0 with our RISC-V overlay for riscv64 Linux (riscv64-linux-gnu-gcc), so the code
# behind `#if defined(__riscv)` (memory barrier, overflow PC, rdtime cycle timer) is compiled for real.
# Builds a riscv64 libpfm4 (our port when libpfm4-riscv/ applies, else plain upstream) and libpapi.so,
# then checks that libpapi.so is a RISC-V ELF carrying the overlay's symbols.
# Env: RVPAPI_BUILD (default <repo>/build). Work tree: $RVPAPI_BUILD/cross-riscv64/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
work=$build/cross-riscv64
log=$work/build.log
cc=riscv64-linux-gnu-gcc
die() { echo "cross-compile-papi: error: $*" >&2; exit 1; }

command -v "$cc" > /dev/null || die "$cc not found (scripts/deps.sh installs gcc-riscv64-linux-gnu)"
"$top/scripts/fetch-upstream.sh" libpfm4 papi > /dev/null
# only our own outputs: scripts/cross-compile-lib.sh puts its riscv64 libraries in the same folder
rm -rf "$work/libpfm4" "$work/papi" "$work/generated/libpfm"
mkdir -p "$work"
: > "$log"

# libpfm4 for riscv64: with our port when it is there (its apply.sh wants the generated headers).
cp -a "$build/upstream/libpfm4-4.13.0" "$work/libpfm4"
if [ -x "$top/libpfm4-riscv/apply.sh" ]; then
	gen=$work/generated
	python3 "$top/scripts/gen_events.py" --libpfm "$gen/libpfm" >> "$log" 2>&1 || die "gen_events.py failed"
	"$top/libpfm4-riscv/apply.sh" "$work/libpfm4" "$gen/libpfm" >> "$log" 2>&1 || die "libpfm4-riscv/apply.sh failed"
	echo "cross-compile-papi: libpfm4 with the RISC-V port"
fi
env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$work/libpfm4" ARCH=riscv64 CC="$cc" CONFIG_PFMLIB_NOPYTHON=y lib \
	-j"$(nproc)" >> "$log" 2>&1 || die "riscv64 libpfm4 build failed (see $log)"

cp -a "$build/upstream/papi-7.0.0" "$work/papi"
"$top/papi-component/apply.sh" "$work/papi" >> "$log" || die "papi-component/apply.sh failed"
# A cross configure cannot run test programs: name the timer, TLS and ffsll answers of riscv64 glibc.
(cd "$work/papi/src" && env -u CFLAGS -u LDFLAGS -u CPPFLAGS ./configure --host=riscv64-linux-gnu CC="$cc" \
	--with-arch=riscv64 --with-CPU=riscv64 --with-ffsll --with-walltimer=clock_realtime --with-tls=__thread \
	--with-virtualtimer=clock_thread_cputime_id --with-perf-events --with-static-lib=no --with-shared-lib=yes \
	--with-shlib-tools --with-pfm-incdir="$work/libpfm4/include" --with-pfm-libdir="$work/libpfm4/lib") \
	>> "$log" 2>&1 || die "PAPI cross configure failed (see $log)"
# -Werror=implicit-function-declaration: a missing riscv declaration must fail, not warn.
env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$work/papi/src" -j"$(nproc)" libpapi.so \
	OPTFLAGS="-O2 -Werror=implicit-function-declaration" >> "$log" 2>&1 ||
	die "PAPI riscv64 build failed (see $log)"

lib=$work/papi/src/libpapi.so
file -L "$lib" | grep -q "UCB RISC-V" || die "$lib is not a RISC-V ELF"
symbols=$(riscv64-linux-gnu-nm "$lib")
for sym in _linux_riscv_get_cycles _linux_riscv_timer_setup _linux_riscv_decode_cpuinfo riscv_cpuinfo_parse; do
	grep -q " $sym\$" <<< "$symbols" || die "$sym missing from $lib"
done
# The riscv-only branches were really compiled: rdtime (cycle timer) and fence r,r (rmb, perf ring buffer).
code=$(riscv64-linux-gnu-objdump -d "$lib")
grep -q "rdtime" <<< "$code" || die "no rdtime in $lib: the RISC-V cycle timer was not compiled"
grep -qP "fence\tr,r" <<< "$code" || die "no 'fence r,r' in $lib: the RISC-V rmb() was not compiled"
echo "cross-compile-papi: ok: riscv64 libpapi.so with the RISC-V overlay ($lib)"
