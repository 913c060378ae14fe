#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The riscv64 libraries our code needs that Debian 12 has no riscv64 packages of (riscv64 is not a release
# architecture of bookworm): CUnit (the test programs), libunwind (librvsample's call stacks), elfutils' libelf
# (rvprof's symbols) and the zlib libelf links. Each is built from its pinned Debian source
# (scripts/upstream.lock, fetched and SHA-256 checked by scripts/fetch-upstream.sh) with the cross compiler,
# libraries and headers only, and installed into one sysroot prefix:
#   scripts/cross-deps.sh [HOST]     prints the prefix (default $RVPAPI_BUILD/<HOST>-deps; HOST riscv64-linux-gnu)
# The prefix is reused as long as the lock's rows of these packages and this script are unchanged (their hash is
# in <prefix>/.rvpapi-key); otherwise it is rebuilt from scratch. Logs: $RVPAPI_BUILD/<HOST>-deps.log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
host=${1:-riscv64-linux-gnu}
root=$build/$host-deps
work=$build/$host-deps-src
log=$build/$host-deps.log
packages=(zlib elfutils libunwind cunit)
die() { echo "cross-deps: error: $*" >&2; exit 1; }

key=$( (grep -E "^($(
	IFS='|'
	echo "${packages[*]}"
)) " "$top/scripts/upstream.lock"
	sha256sum "$top/scripts/cross-deps.sh" | cut -d' ' -f1
	echo "$host") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$root/.rvpapi-key" 2>/dev/null)" = "$key" ]; then
	echo "$root"
	exit 0
fi
command -v "$host-gcc" >/dev/null || die "$host-gcc not found (scripts/deps.sh installs gcc-riscv64-linux-gnu)"
"$top/scripts/fetch-upstream.sh" "${packages[@]}" >/dev/null || die "fetching ${packages[*]} failed"
rm -rf "$root" "$work"
mkdir -p "$root" "$work"
: >"$log"
jobs=$(nproc 2>/dev/null || echo 2)
t0=$SECONDS

# A fresh copy of the unpacked source (Debian's patches applied by dpkg-source), so the pristine tree stays as fetched.
src() { # src PACKAGE: copy build/upstream/PACKAGE-* to the work folder, print its path
	local from
	from=$(find "${RVPAPI_UPSTREAM:-$build/upstream}" -maxdepth 1 -type d -name "$1-*" | head -n 1)
	[ -n "$from" ] || die "no unpacked $1 in ${RVPAPI_UPSTREAM:-$build/upstream}"
	cp -a "$from" "$work/$1"
	echo "$work/$1"
}
step() { # step WHAT command...: run into the log, stop with its tail on failure
	local what=$1
	shift
	echo "== $what" >>"$log"
	"$@" >>"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "$what failed (full log: $log)"
	}
}
cross_env=(env -u CFLAGS -u LDFLAGS -u CPPFLAGS CC="$host-gcc" AR="$host-ar" RANLIB="$host-ranlib")

# zlib (libelf's only required dependency): its own configure script takes CHOST, not --host.
d=$(src zlib)
step "zlib configure" bash -c "cd '$d' && ${cross_env[*]} CHOST=$host ./configure --prefix='$root' --shared"
step "zlib build" make -C "$d" -j"$jobs" libz.so.1.2.13 libz.a
step "zlib install" make -C "$d" install-libs

# elfutils: only lib/ (its helpers) and libelf/; no debuginfod, no compressed-section libraries but zlib.
d=$(src elfutils)
step "elfutils configure" bash -c "cd '$d' && ${cross_env[*]} ./configure --host=$host --prefix='$root' \
	--disable-debuginfod --disable-libdebuginfod --disable-demangler --disable-nls --without-bzlib \
	--without-lzma --without-zstd CPPFLAGS=-I'$root/include' LDFLAGS=-L'$root/lib'"
step "libelf build" make -C "$d/lib" -j"$jobs"
step "libelf build" make -C "$d/libelf" -j"$jobs"
step "libelf install" make -C "$d/libelf" install
step "libelf install" make -C "$d/config" install-pkgconfigDATA

# libunwind (riscv64 is one of its targets since 1.6): the local unwinder only.
d=$(src libunwind)
step "libunwind configure" bash -c "cd '$d' && ${cross_env[*]} ./configure --host=$host --prefix='$root' \
	--disable-static --disable-tests --disable-documentation --disable-coredump --disable-ptrace --disable-setjmp \
	--disable-minidebuginfo --disable-zlibdebuginfo"
step "libunwind build" make -C "$d" -j"$jobs"
step "libunwind install" make -C "$d" install

# CUnit: its 2010 config.sub predates riscv64; take the system's (autotools-dev's) newer one.
# It compiles with -ansi, under which glibc's stdio.h does not declare snprintf (C99): the Run Summary's
# snprintf was then an implicit, non-variadic call, and on riscv64 (LP64D) such a call passes the elapsed
# time (a double) in fa0 where the variadic callee reads an integer register, so every argument after it
# is off by one. Built without optimisation the " seconds" string came out empty; with -O2 it is a wild
# pointer and every test program crashed at the end of its run. _ISOC99_SOURCE gives the prototype, and an
# implicit declaration now fails the build. Unwind tables (GCC 12 makes them by default on x86_64 only):
# call stacks through CUnit's frames, up to main (test_sample).
d=$(src cunit)
cp /usr/share/misc/config.sub /usr/share/misc/config.guess "$d/"
step "cunit configure" bash -c "cd '$d' && ${cross_env[*]} ./configure --host=$host --prefix='$root' \
	--disable-static --disable-curses CPPFLAGS=-D_ISOC99_SOURCE \
	CFLAGS='-O2 -fasynchronous-unwind-tables -Werror=implicit-function-declaration'"
step "cunit build" make -C "$d/CUnit" -j"$jobs"
step "cunit install" make -C "$d/CUnit" install

for f in lib/libz.so lib/libelf.so include/gelf.h lib/libunwind.so include/libunwind.h lib/libcunit.so \
	include/CUnit/Basic.h; do
	[ -e "$root/$f" ] || die "$root/$f was not installed"
done
file -L "$root/lib/libelf.so" | grep -q "UCB RISC-V" || die "$root/lib/libelf.so is not a RISC-V ELF"
rm -rf "$work"
echo "$key" >"$root/.rvpapi-key"
echo "cross-deps: zlib, libelf, libunwind, CUnit for $host built in $((SECONDS - t0))s into $root" >&2
echo "$root"
