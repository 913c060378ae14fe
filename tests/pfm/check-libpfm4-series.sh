#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The libpfm4 patch series as libpfm4's maintainers would take it: `git am` of libpfm4-riscv/patches/0001-...
# (new files included: the RISC-V code, the generated event tables, the validate checks) onto pristine libpfm4
# 4.13.0 applies exactly, every patch carries a Signed-off-by line and a consistent [PATCH n/N], the result has
# the same sources as libpfm4-riscv/apply.sh gave the build tree, and it builds (lib, tests, examples, for
# ARCH=riscv64 as our build does) with tests/validate -A passing.
# The cover letter's diffstat is the series' own (git diff --stat --summary of pristine..last patch, as git
# format-patch --cover-letter writes it): checked here, rewritten with --refresh-cover.
#   tests/pfm/check-libpfm4-series.sh [--refresh-cover]   (after the build: needs $RVPAPI_BUILD/libpfm4 from apply.sh)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
pristine=${RVPAPI_UPSTREAM:-$build/upstream}/libpfm4-4.13.0
applied=$build/libpfm4
die() { echo "check-libpfm4-series: $*" >&2; exit 1; }
[ -d "$pristine" ] || { echo "check-libpfm4-series: no pristine libpfm4 in $pristine (fetch first)" >&2; exit 2; }
[ -f "$applied/lib/pfmlib_riscv.c" ] || { echo "check-libpfm4-series: no applied tree in $applied (build first)" >&2; exit 2; }
work=$build/libpfm4-series
rm -rf "$work"
t0=$SECONDS
mapfile -t patches < <("$top/libpfm4-riscv/apply.sh" --list)
total=${#patches[@]}
[ "$total" -gt 0 ] || die "no patches"
# the mail headers: [PATCH n/N] with N the number of patches, in file order; a Signed-off-by line each
bad=0
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	want=$(printf '[PATCH %0*d/%d]' "${#total}" $((i + 1)) "$total")
	grep -qF "Subject: $want " "$p" || { echo "check-libpfm4-series: $(basename "$p"): subject is not $want ..." >&2; bad=1; }
	grep -q '^Signed-off-by: .* <.*@.*>$' "$p" || { echo "check-libpfm4-series: $(basename "$p"): no Signed-off-by line" >&2; bad=1; }
done
cover=$top/libpfm4-riscv/patches/0000-cover-letter.patch
grep -qF "Subject: $(printf '[PATCH %0*d/%d]' "${#total}" 0 "$total")" "$cover" ||
	{ echo "check-libpfm4-series: the cover letter is not [PATCH 0/$total]" >&2; bad=1; }
[ "$bad" -eq 0 ] || exit 1
cp -a "$pristine" "$work"
id=(-c user.name=riscv-papi -c user.email=riscv-papi@localhost -c core.autocrlf=false)
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" "${id[@]}" commit -q -m "libpfm4 4.13.0 (Debian 4.13.0-1 source)"
for p in "${patches[@]}"; do
	git -C "$work" "${id[@]}" am -q "$p" >"$build/libpfm4-series.log" 2>&1 ||
		{ cat "$build/libpfm4-series.log" >&2; die "git am $(basename "$p") failed"; }
done
differ=0
while IFS= read -r -d '' f; do
	cmp -s "$work/$f" "$applied/$f" || { echo "check-libpfm4-series: $f differs between git am and apply.sh" >&2; differ=1; }
done < <(git -C "$work" ls-files -z)
# and the other way: a source file apply.sh put in the build's tree that the series does not carry
while IFS= read -r -d '' f; do
	f=${f#./}
	[ -e "$work/$f" ] || { echo "check-libpfm4-series: $f is in apply.sh's tree but no patch adds it" >&2; differ=1; }
done < <(cd "$applied" && find . -type f \( -name '*.c' -o -name '*.h' \) -print0)
[ "$differ" -eq 0 ] || exit 1
# the cover letter's diffstat: the lines between the shortlog (its "Author (N):" line and the blank line that
# ends it) and the signature's "-- " line
stat=$(git -C "$work" diff --stat=72 --summary "HEAD~$total" HEAD)
cover_stat() { awk '/^[^ ].* \([0-9]+\):$/ { s = 1; next } s == 1 && /^$/ { s = 2; next }
	s == 2 && /^-- $/ { exit } s == 2 && NF { print }' "$cover"; }
if [ "${1:-}" = --refresh-cover ]; then
	STAT="$stat" awk '/^[^ ].* \([0-9]+\):$/ { s = 1 } s == 1 && /^$/ { print; print ENVIRON["STAT"]; print ""; s = 2; next }
		s == 2 && !/^-- $/ { next } s == 2 { s = 3 } { print }' "$cover" >"$cover.new" && mv "$cover.new" "$cover"
	echo "check-libpfm4-series: rewrote the diffstat of $cover"
fi
[ "$(cover_stat)" = "$stat" ] || { diff <(cover_stat) <(echo "$stat") >&2 || true
	die "the cover letter's diffstat is not the series' (rerun with --refresh-cover and commit the cover letter)"; }
echo "check-libpfm4-series: $total patches (+ cover letter) apply with git am to pristine libpfm4 4.13.0, each [PATCH n/$total] with Signed-off-by, the same sources as apply.sh, the cover letter's diffstat: $(echo "$stat" | grep -E 'files? changed') ($((SECONDS - t0))s)"
t1=$SECONDS
for d in lib tests examples; do
	env -u CFLAGS -u LDFLAGS -u CPPFLAGS make -C "$work/$d" -j"$(nproc)" ARCH=riscv64 CONFIG_PFMLIB_NOPYTHON=y \
		>>"$build/libpfm4-series.log" 2>&1 || { tail -n 30 "$build/libpfm4-series.log" >&2; die "make -C $d failed"; }
done
out=$("$work/tests/validate" -A 2>&1) || { echo "$out" | tail -n 20 >&2; die "tests/validate -A failed on the git am tree"; }
echo "$out" | grep -q "All tests passed" || die "tests/validate -A did not say All tests passed"
echo "check-libpfm4-series: the git am tree builds (ARCH=riscv64: lib, tests, examples); validate -A: $(echo "$out" | grep -E 'RISC-V events' | sed 's/^[[:space:]]*//'), all tests passed ($((SECONDS - t1))s)"
