#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages the build and the tests need, if any is missing (Debian 12).
# libunwind-dev: call stacks of the sampling API; libelf-dev: the profiler's symbols; linux-perf: the test
# that Debian's `perf report` reads the profiler's perf.data; libc6-dbg (valgrind depends on it too): libc's
# internal function names, which rvprof reads from its debug file as perf does.
# Also adds a deb-src entry (its own sources file) so `apt-get source` can fetch the pinned upstreams.
set -euo pipefail
packages=(build-essential autoconf automake libtool pkg-config python3 dpkg-dev
          libcunit1-dev valgrind cppcheck clang-format gfortran patchelf
          libunwind-dev libelf-dev linux-perf stress-ng libc6-dbg)  # stress-ng: scripts/stress.sh
# The riscv64 build and its tests (docs/riscv64.md) need a cross toolchain and qemu-user (and `file`, which checks
# that what was built is RISC-V code), except on a riscv64 board, where the native gcc is the riscv64 compiler and
# programs run as they are.
if [ "$(dpkg --print-architecture)" != riscv64 ]; then
    packages+=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user file)
fi
have_src() { # -q: a match counts even if one of the paths (often sources.list) does not exist
    grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/
}
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
need_update=0
if ! have_src; then
    echo "deps: adding a deb-src entry for bookworm (/etc/apt/sources.list.d/rvpapi-src.sources)"
    "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/rvpapi-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    need_update=1
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ $need_update -eq 1 ]; then
    echo "deps: installing ${missing[*]:-(index update only)}"
    "${sudo_cmd[@]}" apt-get update -qq
    if [ ${#missing[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi
echo "deps: all build and test packages present"
