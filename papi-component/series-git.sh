#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A git tree of the PAPI patch series, for reviewing, editing or sending it:
#   papi-component/series-git.sh DIR
# DIR gets the pristine PAPI 7.0.0 tree (from $RVPAPI_BUILD/upstream, fetched by scripts/fetch-upstream.sh) as
# its first commit, then every patch of the series as one commit (git am), in the order apply.sh applies them
# (apply.sh --list): the patches that add our new files, patches/upstream/, patches/riscv_hpc/ (the component),
# patches/emulator-host/. Nothing else is copied in: this is what upstream would get.
# Send the upstream part:  git -C DIR format-patch --cover-letter -o OUT pristine..<last upstream commit>
# After editing a commit, write it back with
#   git -C DIR format-patch -1 --stdout --zero-commit --no-signature <commit> > papi-component/patches/<dir>/NN-name.patch
# (a patch that adds new files is written from its files instead: edit them, then apply.sh --refresh).
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
mapfile -t patches < <("$here/apply.sh" --list)
[ "${#patches[@]}" -gt 0 ] || die "no patches (papi-component/apply.sh --list)"
cp -a "$pristine" "$dir"
cd "$dir"
id=(-c user.name=riscv-papi -c user.email=riscv-papi@localhost -c core.autocrlf=false)
git init -q
git add -A
git "${id[@]}" commit -q -m "PAPI 7.0.0 (Debian 7.0.0-2 source)"
git tag pristine
for p in "${patches[@]}"; do
	git "${id[@]}" am -q --keep-cr "$p" || die "git am ${p#"$here/patches/"} failed"
done
git log --oneline | cat
