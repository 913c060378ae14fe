#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build PAPI 7.0.0 for RISC-V: the pinned upstream tree + our overlay (papi-component/) + our libpfm4.
#   build-papi.sh build            fetch (once), copy the pristine tree when the overlay changed, apply the
#                                  overlay, configure against our libpfm4, build libpapi, utilities, ctests
#   build-papi.sh install PREFIX [DESTDIR]
#                                  libpapi, papi.h (+ the other public headers), utilities, papi_events.csv,
#                                  papi.pc, man pages into DESTDIR/PREFIX (our libpfm4 too, so PREFIX is
#                                  self-contained); installed programs find their libraries through $ORIGIN
#   build-papi.sh check PREFIX     build, install, then tests/papi/run-papi-checks.sh: run-papi-tests.sh,
#                                  run-papi-examples.sh and run-papi-robustness.sh (need the emulator)
# Env: RVPAPI_BUILD (default <repo>/build); RVPAPI_UPSTREAM (fetched sources, default $RVPAPI_BUILD/upstream);
# RVPAPI_HOST (a cross build: the GNU triplet, e.g. riscv64-linux-gnu; see configure_papi); RVPAPI_LIBPFM = a libpfm4 tree with include/perfmon and
# lib/libpfm.so (default: $RVPAPI_BUILD/libpfm4, built by scripts/build-libpfm4.sh when missing).
# The tree is $RVPAPI_BUILD/papi (PAPI builds inside its src/); the log is $RVPAPI_BUILD/papi-build.log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
version=7.0.0
host=${RVPAPI_HOST:-}
pristine=${RVPAPI_UPSTREAM:-$build/upstream}/papi-$version
tree=$build/papi
log=$build/papi-build.log
# shellcheck source=overlay-tree.sh
. "$top/scripts/overlay-tree.sh"
die() { echo "build-papi: error: $*" >&2; exit 1; }

libpfm_dir() {
	if [ -n "${RVPAPI_LIBPFM:-}" ]; then
		echo "$RVPAPI_LIBPFM"
	else
		echo "$build/libpfm4"
	fi
}

ensure_libpfm() {
	local pfm
	pfm=$(libpfm_dir)
	if [ -z "${RVPAPI_LIBPFM:-}" ]; then
		# build-libpfm4.sh rebuilds only when the port changed
		RVPAPI_BUILD=$build "$top/scripts/build-libpfm4.sh" build > /dev/null ||
			die "our libpfm4 did not build (scripts/build-libpfm4.sh build)"
	fi
	[ -f "$pfm/lib/libpfm.so" ] && [ -f "$pfm/include/perfmon/pfmlib.h" ] ||
		die "no libpfm4 in $pfm (want lib/libpfm.so and include/perfmon/pfmlib.h)"
}

overlay_hash() {
	(cd "$top" && find papi-component -type f | LC_ALL=C sort | xargs sha256sum
	 sha256sum events/presets.csv events/cpu_ids.csv events/models.csv scripts/build-papi.sh gen/gen_events.py
	 echo "libpfm=$(libpfm_dir) host=$host") | sha256sum | cut -d' ' -f1
}

# A fresh copy of the pristine tree whenever our overlay (or the libpfm4 we build against) changed.
apply_overlay() { "$top/papi-component/apply.sh" "$tree" "$top/events/presets.csv" >>"$log"; }

prepare_tree() {
	overlay_tree_prepare build-papi "$pristine" "$tree" "$(overlay_hash)" apply_overlay ||
		die "applying papi-component/ failed (see $log)"
}

configure_papi() {
	local pfm prefix=$1
	pfm=$(libpfm_dir)
	# the riscv_hpc component links librvbank/librvhw: from our build tree when make builds PAPI
	# (RVBANK_BUILD_LIB, its lib/ folder), else from the prefix (where make install of riscv-papi put them)
	if [ -n "${RVBANK_BUILD_LIB:-}" ]; then
		local root=$build/rvbank-root
		mkdir -p "$root/include" "$root/lib"
		cp "$top/lib/rvhw.h" "$top/lib/rvbank.h" "$root/include/"
		cp -P "$RVBANK_BUILD_LIB"/.libs/librvhw.so* "$RVBANK_BUILD_LIB"/.libs/librvbank.so* "$root/lib/" ||
			die "no librvbank in $RVBANK_BUILD_LIB (build lib/ first)"
		export RISCV_HPC_ROOT=$root
	else
		[ -f "$prefix/lib/librvbank.so" ] && [ -f "$prefix/include/rvbank.h" ] ||
			die "no librvbank in $prefix (install riscv-papi into it first: scripts/build.sh does)"
		export RISCV_HPC_ROOT=$prefix
	fi
	[ -f "$tree/src/config.status" ] && [ "$(cat "$tree/.rvpapi-prefix" 2>/dev/null)" = "$prefix" ] && return 0
	# Debian's for-debian-do-not-embed-libpfm4 patch (applied by dpkg-source) makes libpapi link to
	# libpfm.so instead of embedding libpfm.a, which is what we want: PAPI uses our libpfm4 at run time.
	# Shared library only, so the ctests link libpapi.so (the static one lacks libpfm's objects).
	# A cross configure cannot run test programs: it is told riscv64 glibc's answers (timers, TLS, ffsll), and
	# the cross linker where libpapi's libpfm.so is when it links the utilities and ctests (-rpath-link);
	# and there is no cross Fortran compiler (the Fortran tests are left out; do_build's make sets F77 empty).
	local cross=()
	[ -n "$host" ] && cross=(--host="$host" CC="$host-gcc" --with-tests=ctests --with-arch=riscv64 --with-CPU=riscv64
		--with-ffsll --with-walltimer=clock_realtime --with-tls=__thread
		--with-virtualtimer=clock_thread_cputime_id LDFLAGS="-Wl,-rpath-link,$pfm/lib")
	(cd "$tree/src" && env -u CFLAGS -u LDFLAGS -u CPPFLAGS ./configure --prefix="$prefix" "${cross[@]}" \
		--with-perf-events --with-components=riscv_hpc --with-static-lib=no --with-shared-lib=yes --with-shlib-tools \
		--with-pfm-incdir="$pfm/include" --with-pfm-libdir="$pfm/lib") >> "$log" 2>&1 ||
		die "PAPI configure failed (see $log)"
	echo "$prefix" > "$tree/.rvpapi-prefix"
}

do_build() {
	local prefix=${1:-$build/prefix}
	"$top/scripts/fetch-upstream.sh" papi > /dev/null
	[ -d "$pristine" ] || die "$pristine missing after scripts/fetch-upstream.sh papi"
	mkdir -p "$build"
	: > "$log"
	ensure_libpfm
	prepare_tree
	configure_papi "$prefix"
	local jobs
	jobs=$(nproc 2>/dev/null || echo 2)
	# upstream's own flags (it is not -Werror clean); sanitizer CFLAGS are for our code only
	local no_fortran=()
	[ -n "$host" ] && no_fortran=(F77=)
	if ! env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$tree/src" -j"$jobs" "${no_fortran[@]}" >> "$log" 2>&1; then
		grep -n -B2 -A6 'error' "$log" | tail -n 40 >&2
		die "PAPI build failed (full log: $log)"
	fi
	[ -f "$tree/src/libpapi.so" ] && [ -x "$tree/src/utils/papi_avail" ] && [ -x "$tree/src/ctests/zero" ] ||
		die "PAPI build finished without libpapi.so, utils or ctests (see $log)"
	overlay_tree_built "$tree"
	echo "build-papi: built $tree/src/libpapi.so, utilities and ctests against $(libpfm_dir)"
}

# Make an installed tree relocatable and free of the build tree: PAPI links its utilities with a RUNPATH into
# the build tree (build/papi/src/libpfm4/lib:build/papi/src), and its papi.pc names the configured prefix and the
# libpfm4 it was configured with; the installed files find their libraries next to them instead ($ORIGIN),
# papi.pc its prefix from where it is, and papi_hl_output_writer.py runs with the system's python3 (its
# #!/usr/bin/python does not exist on Debian 12).
fix_installed() { # fix_installed STAGED_PREFIX (DESTDIR + prefix)
	local root=$1 f
	command -v patchelf >/dev/null || die "patchelf is missing (scripts/deps.sh installs it)"
	for f in "$root"/bin/papi_*; do
		[ -f "$f" ] && [ ! -L "$f" ] && head -c4 "$f" | grep -q ELF || continue
		patchelf --set-rpath '$ORIGIN/../lib' "$f" || die "patchelf $f failed"
	done
	for f in "$root"/lib/libpapi.so.* "$root"/lib/libsde.so.*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		patchelf --set-rpath '$ORIGIN' "$f" || die "patchelf $f failed"
	done
	# papi.pc and its versioned copies (papi-7.0.pc, papi-7.0.0.0.pc): relocatable as our libpfm.pc and
	# rvsample.pc, the prefix found from where the file is, so a staged or moved tree needs no
	# PKG_CONFIG_SYSROOT_DIR (PAPI's own names the configured prefix)
	for f in "$root"/lib/pkgconfig/papi.pc "$root"/lib/pkgconfig/papi-[0-9]*.pc; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$f"
		# our libpfm4 is installed into the same libdir
		[ -n "${RVPAPI_LIBPFM:-}" ] || sed -i 's|^Libs.private:.*|Libs.private: -L${libdir} -lpfm|' "$f"
	done
	if [ -f "$root/bin/papi_hl_output_writer.py" ]; then
		sed -i '1s|^#!.*python.*$|#!/usr/bin/env python3|' "$root/bin/papi_hl_output_writer.py"
		chmod 755 "$root/bin/papi_hl_output_writer.py"
	fi
}

# install PREFIX [DESTDIR]: PAPI configured for PREFIX, its files staged under DESTDIR (empty: none)
do_install() {
	local prefix=$1 destdir=${2:-}
	[ -n "$prefix" ] || die "usage: build-papi.sh install PREFIX [DESTDIR]"
	case $prefix in /*) ;; *) die "PREFIX must be an absolute path, not $prefix" ;; esac
	do_build "$prefix"
	env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$tree/src" install DESTDIR="$destdir" >> "$log" 2>&1 ||
		die "PAPI install failed (see $log)"
	if [ -z "${RVPAPI_LIBPFM:-}" ]; then
		RVPAPI_BUILD=$build "$top/scripts/build-libpfm4.sh" install "$destdir$prefix" > /dev/null ||
			die "installing our libpfm4 into $destdir$prefix failed"
	fi
	fix_installed "$destdir$prefix"
	echo "build-papi: installed libpapi, papi.h, utilities and papi_events.csv into $destdir$prefix"
}

case "${1:-}" in
build) do_build "${2:-}" ;;
install) do_install "${2:-}" "${3:-}" ;;
check)
	[ -n "${2:-}" ] || die "usage: build-papi.sh check PREFIX"
	do_install "$2"
	# the tests, the examples and the robustness corpus, in parts that share the cores
	RVPAPI_BUILD=$build PAPI_TREE=$tree PREFIX=$2 exec "$top/tests/papi/run-papi-checks.sh"
	;;
*) die "usage: build-papi.sh build [PREFIX] | install PREFIX [DESTDIR] | check PREFIX" ;;
esac
