#!/usr/bin/env bash
# Style and static checks on our own C code (never on fetched upstream trees or generated files):
# clang-format (the repository's .clang-format) and cppcheck; and the emulator's layer rule. Non-zero exit on any finding.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^build/')
[ ${#files[@]} -gt 0 ] || { echo "lint: no C files"; exit 0; }
# libpfm4-riscv/ is written in libpfm4's own style (its files go upstream), not ours: cppcheck only.
mapfile -t formatted < <(printf '%s\n' "${files[@]}" | grep -v '^libpfm4-riscv/')
status=0
if ! clang-format --dry-run -Werror "${formatted[@]}"; then
	echo "lint: clang-format differences (run: clang-format -i <file>)"
	status=1
fi
# Headers of the fetched upstream trees are not ours: cppcheck sees only our include folders.
if ! cppcheck --quiet --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
	--std=c11 -D__GNUC__ -D__x86_64__ -D__linux__ --suppress=missingIncludeSystem \
	-I lib -I emulator "${files[@]}"; then
	echo "lint: cppcheck findings"
	status=1
fi
# The emulator's layers: machine <- perf core <- front ends, no upward use, no cycle (from the objects).
if ! "$top/scripts/check-layers.sh"; then
	echo "lint: emulator layer violations (docs/emulator-core.md)"
	status=1
fi
[ $status -eq 0 ] && echo "lint: ${#files[@]} files clean (clang-format, cppcheck)"
exit $status
