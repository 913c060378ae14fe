#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A git tree of the PAPI patch series, for reviewing or editing it:
#   papi-component/series-git.sh DIR
# DIR gets the pristine PAPI 7.0.0 tree (from $RVPAPI_BUILD/upstream, fetched by scripts/fetch-upstream.sh) plus
# our overlay/ files as its first commit, then every patch of patches/upstream/ and patches/emulator-host/ as one
# commit (git am), in the order apply.sh applies them. After editing, write a commit back with
#   git -C DIR format-patch -1 --stdout --zero-commit --no-signature <commit> > papi-component/patches/<dir>/NN-name.patch
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
die() { echo "series-git.sh: error: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: series-git.sh DIR"
dir=$1
[ -e "$dir" ] && die "$dir exists; give a new folder"
pristine=$build/upstream/papi-7.0.0
[ -d "$pristine" ] || die "no pristine PAPI in $pristine (run scripts/fetch-upstream.sh papi)"
cp -a "$pristine" "$dir"
cp "$here"/overlay/* "$dir/src/"
cd "$dir"
git init -q
git add -A
git -c user.name=riscv-papi -c user.email=riscv-papi@localhost commit -q -m "PAPI 7.0.0 (Debian 7.0.0-2 source) + papi-component/overlay"
for sub in upstream emulator-host; do
	for p in "$here/patches/$sub"/*.patch; do
		[ -e "$p" ] || continue
		git -c user.name=riscv-papi -c user.email=riscv-papi@localhost am -q --keep-cr "$p" ||
			die "git am $sub/$(basename "$p") failed"
	done
done
git log --oneline | cat
