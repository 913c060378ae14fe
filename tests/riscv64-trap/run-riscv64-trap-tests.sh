#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The riscv64 CSR-trap tests (emulator/fe_trap.c) and PAPI_read through the mmap page (PAPI patch 25):
# builds the programs of this folder with the riscv64 cross compiler and runs each under qemu-riscv64 with the
# riscv64 librvemu.so preloaded. Takes the riscv64 build made elsewhere (scripts/cross-build.sh's prefix, or
# any riscv64 install):
#   --emu FILE       librvemu.so (riscv64)                          env RVEMU_LIB
#   --rvhw-dir DIR   librvhw.so and librvbank.so (riscv64)           env RVHW_LIBDIR
#   --papi-inc DIR   papi.h of the riscv64 PAPI                      env PAPI_INCDIR
#   --papi-dir DIR   libpapi.so (riscv64)                            env PAPI_LIBDIR
#   --pfm-dir DIR    libpfm.so.4 (riscv64)                           env PFM_LIBDIR
#   --out DIR        where the test programs go (default: a temporary folder, removed at exit)
# Defaults for the library options: the riscv64 prefix (RISCV64_PREFIX, default build/prefix-riscv64).
# Env: RISCV64_CC (riscv64-linux-gnu-gcc), RISCV64_SYSROOT (/usr/riscv64-linux-gnu), QEMU (qemu-riscv64).
# Exit status 0 when every program passed; each prints one line per check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prefix=${RISCV64_PREFIX:-${RVPAPI_BUILD:-$top/build}/prefix-riscv64}
emu=${RVEMU_LIB:-$prefix/lib/librvemu.so}
rvhw_dir=${RVHW_LIBDIR:-$prefix/lib}
papi_inc=${PAPI_INCDIR:-$prefix/include}
papi_dir=${PAPI_LIBDIR:-$prefix/lib}
pfm_dir=${PFM_LIBDIR:-$prefix/lib}
out=
cc=${RISCV64_CC:-riscv64-linux-gnu-gcc}
sysroot=${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}
qemu=${QEMU:-qemu-riscv64}
die() { echo "run-riscv64-trap-tests: error: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--emu) emu=$2; shift 2 ;;
	--rvhw-dir) rvhw_dir=$2; shift 2 ;;
	--papi-inc) papi_inc=$2; shift 2 ;;
	--papi-dir) papi_dir=$2; shift 2 ;;
	--pfm-dir) pfm_dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,17p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
command -v "$cc" > /dev/null || die "$cc not found (Debian: gcc-riscv64-linux-gnu)"
command -v "$qemu" > /dev/null || die "$qemu not found (Debian: qemu-user)"
[ -d "$sysroot" ] || die "no riscv64 sysroot $sysroot (Debian: libc6-dev-riscv64-cross)"
for f in "$emu" "$rvhw_dir/librvhw.so" "$rvhw_dir/librvbank.so" "$papi_inc/papi.h" "$papi_dir/libpapi.so" \
	"$pfm_dir/libpfm.so.4"; do
	[ -f "$f" ] || die "$f not found (scripts/cross-build.sh builds the riscv64 prefix, or pass --help's options)"
done
file -L "$emu" | grep -q "UCB RISC-V" || die "$emu is not a riscv64 library"
if [ -z "$out" ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/lib"
# A libpapi.so that is not installed lacks the name its SONAME asks for: give it that name.
soname=$(riscv64-linux-gnu-readelf -d "$papi_dir/libpapi.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ -n "$soname" ] && ln -sf "$(cd "$papi_dir" && pwd)/libpapi.so" "$out/lib/$soname"

flags=(-std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -I"$top/lib" -I"$top/emulator")
"$cc" "${flags[@]}" -o "$out/trap_csr" "$here/trap_csr.c" -ldl
"$cc" "${flags[@]}" -o "$out/trap_hpm" "$here/trap_hpm.c" -ldl
"$cc" "${flags[@]}" -o "$out/trap_nested" "$here/trap_nested.c" -ldl
"$cc" "${flags[@]}" -o "$out/trap_hpc" "$here/trap_hpc.c" -L"$rvhw_dir" -lrvbank -lrvhw -ldl
"$cc" "${flags[@]}" -o "$out/trap_boom" "$here/trap_boom.c" -L"$rvhw_dir" -lrvbank -lrvhw -ldl
"$cc" "${flags[@]}" -I"$papi_inc" -o "$out/papi_user_read" "$here/papi_user_read.c" -L"$papi_dir" -lpapi \
	-Wl,-rpath-link,"$pfm_dir" -ldl

libpath=$out/lib:$rvhw_dir:$papi_dir:$pfm_dir
failed=0
total=0
# run NAME MODEL [VAR=VALUE...] -- PROGRAM ARGS...: one program under qemu with the emulator, virtual clock
run() {
	local name=$1 model=$2
	shift 2
	local envs=(-E LD_LIBRARY_PATH="$libpath" -E LD_PRELOAD="$emu" -E RVEMU_MODEL="$model" -E RVEMU_CLOCK=virtual
		-E RVEMU_PARANOID=1)
	while [ "$1" != -- ]; do
		envs+=(-E "$1")
		shift
	done
	shift
	total=$((total + 1))
	echo "== $name"
	if timeout 600 "$qemu" -L "$sysroot" "${envs[@]}" "$@"; then
		echo "== $name: ok"
	else
		echo "== $name: FAIL (status $?)"
		failed=$((failed + 1))
	fi
}
run "trap_csr (Zicsr forms, chaining, default action)" lowrisc-hpc -- "$out/trap_csr"
run "trap_hpc (librvbank's real csrr/csrw)" lowrisc-hpc -- "$out/trap_hpc"
run "trap_boom (BOOM hints through rvhw_boom_op)" boom -- "$out/trap_boom"
run "trap_hpm (hpmcounter, perf_user_access 1)" sifive-u74 -- "$out/trap_hpm"
run "trap_hpm (perf_user_access 0)" sifive-u74 RVEMU_PERF_USER_ACCESS=0 -- "$out/trap_hpm" noaccess
run "trap_nested (a signal landing in a trapped csrr reads the counter too)" sifive-u74 -- "$out/trap_nested"
run "papi_user_read (page, perf_user_access 1)" sifive-u74 -- "$out/papi_user_read"
run "papi_user_read (perf_user_access 0)" sifive-u74 RVEMU_PERF_USER_ACCESS=0 -- "$out/papi_user_read" noaccess
echo "riscv64 trap tests: $((total - failed))/$total programs passed"
[ "$failed" -eq 0 ]
