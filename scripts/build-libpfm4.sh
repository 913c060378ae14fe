#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build our libpfm4: the pinned upstream 4.13.0 tree plus the RISC-V port (libpfm4-riscv/), with the RISC-V
# models only -- also on x86_64 hosts (ARCH=riscv64), so no x86 core PMU is detected beside the emulated
# RISC-V one.
#   build-libpfm4.sh build           fetch (once), copy the pristine tree, apply the port, make lib/tests/examples
#   build-libpfm4.sh install PREFIX  libpfm.so*/.a -> PREFIX/lib, perfmon/*.h -> PREFIX/include/perfmon,
#                                    man pages -> PREFIX/share/man/man3, libpfm.pc -> PREFIX/lib/pkgconfig,
#                                    showevtinfo, check_events -> PREFIX/bin
#   build-libpfm4.sh validate        run libpfm4's own tests/validate (non-zero exit on failure)
# Env: RVPAPI_BUILD (default <repo>/build), RVPAPI_UPSTREAM (fetched sources, default $RVPAPI_BUILD/upstream),
# RVPAPI_HOST (a cross build: the GNU triplet, e.g. riscv64-linux-gnu; compiled with <triplet>-gcc),
# RVPAPI_RUNNER (validate: the command that runs a cross-built program, e.g. tests/riscv64/qemu-run), GENERATED (holds libpfm/ headers; default $RVPAPI_BUILD/generated,
# generated with gen/gen_events.py when missing). The tree is $RVPAPI_BUILD/libpfm4; it is copied afresh
# whenever the port or the generated headers change (content hash in .rvpapi-inputs, see scripts/overlay-tree.sh), else reused.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
gen=${GENERATED:-$build/generated}
version=4.13.0
host=${RVPAPI_HOST:-}
pristine=${RVPAPI_UPSTREAM:-$build/upstream}/libpfm4-$version
tree=$build/libpfm4
log=$build/libpfm4-build.log
# shellcheck source=overlay-tree.sh
. "$top/scripts/overlay-tree.sh"
die() { echo "build-libpfm4: error: $*" >&2; exit 1; }

# upstream's own flags only (its -Werror set); a caller's CFLAGS (e.g. sanitizers) are for our code. Upstream's
# config.mk leaves the optimisation (OPTIM) to the packager, as Debian's -O2 (dpkg-buildflags' CFLAGS) does: without
# it libpfm4 ran unoptimised, a tenth of PAPI's init..add in instructions (docs/performance.md).
make_libpfm() {
    local cc=()
    [ -n "$host" ] && cc=(CC="$host-gcc" AR="$host-ar")
    env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$tree/$1" ARCH=riscv64 CONFIG_PFMLIB_NOPYTHON=y OPTIM=-O2 \
        "${cc[@]}" "${@:2}"
}

# Always regenerated (cheap; unchanged files keep their timestamps): a generated folder left by an older
# checkout may lack headers the port now includes.
ensure_generated() {
    python3 "$top/gen/gen_events.py" --libpfm "$gen/libpfm" || die "generating the libpfm4 headers failed"
}

overlay_hash() {
    (cd "$top" && find libpfm4-riscv -type f | LC_ALL=C sort | xargs sha256sum
     sha256sum scripts/build-libpfm4.sh
     echo "host=$host"
     cd "$gen/libpfm" && find . -name 'riscv_*.h' | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}

apply_port() { "$top/libpfm4-riscv/apply.sh" "$tree" "$gen/libpfm" > /dev/null; }

prepare_tree() {
    overlay_tree_prepare build-libpfm4 "$pristine" "$tree" "$(overlay_hash)" apply_port ||
        die "applying libpfm4-riscv/ failed"
}

do_build() {
    "$top/scripts/fetch-upstream.sh" libpfm4 > /dev/null
    [ -d "$pristine" ] || die "$pristine missing after scripts/fetch-upstream.sh libpfm4"
    ensure_generated
    mkdir -p "$build"
    prepare_tree
    local jobs
    jobs=$(nproc 2>/dev/null || echo 2)
    if ! { make_libpfm lib -j"$jobs" && make_libpfm tests -j"$jobs" && make_libpfm examples -j"$jobs"; } > "$log" 2>&1; then
        tail -n 40 "$log" >&2
        die "libpfm4 build failed (full log: $log)"
    fi
    overlay_tree_built "$tree"
    for f in lib/libpfm.a tests/validate examples/showevtinfo examples/check_events; do
        [ -f "$tree/$f" ] || die "$tree/$f was not built"
    done
    echo "build-libpfm4: libpfm4 $version + RISC-V models ready in $tree"
}

do_install() {
    local prefix=${1:?usage: build-libpfm4.sh install PREFIX}
    [ -f "$tree/examples/showevtinfo" ] || die "$tree is not built; run build-libpfm4.sh build first"
    mkdir -p "$prefix/lib" "$prefix/include/perfmon" "$prefix/bin"
    cp -P "$tree"/lib/libpfm.so* "$prefix/lib/"
    [ -f "$tree/lib/libpfm.a" ] && cp "$tree/lib/libpfm.a" "$prefix/lib/"
    cp "$tree"/include/perfmon/*.h "$prefix/include/perfmon/"
    cp "$tree/examples/showevtinfo" "$tree/examples/check_events" "$prefix/bin/"
    mkdir -p "$prefix/share/man/man3" "$prefix/lib/pkgconfig"
    cp "$tree"/docs/man3/*.3 "$prefix/share/man/man3/"
    # relocatable: pkg-config finds the prefix from where the file is
    sed "s/@VERSION@/$version/" >"$prefix/lib/pkgconfig/libpfm.pc" <<'PC'
prefix=${pcfiledir}/../..
libdir=${prefix}/lib
includedir=${prefix}/include

Name: libpfm
Description: performance monitoring event encoding library (with the RISC-V PMU models of riscv-papi)
Version: @VERSION@
Libs: -L${libdir} -lpfm
Cflags: -I${includedir}
PC
    echo "build-libpfm4: installed libpfm4 into $prefix"
}

do_validate() {
    [ -x "$tree/tests/validate" ] || die "$tree/tests/validate is not built; run build-libpfm4.sh build first"
    local out rc=0
    local runner=()
    read -r -a runner <<<"${RVPAPI_RUNNER:-}"
    out=$("${runner[@]}" "$tree/tests/validate" -A 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "$out" >&2
        die "libpfm4 validate failed"
    fi
    echo "$out" | grep -E "RISC-V events|Total|All tests passed"
    return 0
}

case "${1:-}" in
build) do_build ;;
install) do_install "${2:-}" ;;
validate) do_validate ;;
*) echo "usage: $0 build | install PREFIX | validate" >&2; exit 2 ;;
esac
