#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rvemu-run's help and man page name every RVEMU_* variable the emulator reads (emu_env_u64, emu_env_choice,
# getenv in emulator/*.c), the script itself uses, or the README tells users to set. Prints what is missing
# where; non-zero exit if anything is. Run by scripts/lint.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
read_by_code=$(grep -ohE '(emu_env_u64|emu_env_choice|getenv)\("RVEMU_[A-Z0-9_]+"' emulator/*.c |
	grep -oE 'RVEMU_[A-Z0-9_]+')
used_by_script=$(grep -oE 'RVEMU_[A-Z0-9_]+' emulator/rvemu-run.sh | grep -v '_$')
in_readme=$(grep -oE 'RVEMU_[A-Z0-9_]+' README.md | grep -v '_$')
help=$(sh emulator/rvemu-run.sh --help)
man=$(sed 's/\\f[BIRP]//g; s/\\-/-/g' emulator/rvemu-run.1)
missing=0
for v in $(printf '%s\n' $read_by_code $used_by_script $in_readme | sort -u); do
	where=()
	# a name counts as documented when it stands alone (RVEMU_PES must not match RVEMU_PES_RECORDS only)
	grep -qE "(^|[^A-Z0-9_])$v([^A-Z0-9_]|$)" <<<"$help" || where+=("rvemu-run --help")
	grep -qE "(^|[^A-Z0-9_])$v([^A-Z0-9_]|$)" <<<"$man" || where+=("emulator/rvemu-run.1")
	if [ ${#where[@]} -gt 0 ]; then
		echo "check-rvemu-run-doc: $v is not in ${where[*]}"
		missing=1
	fi
done
[ $missing -eq 0 ] && echo "check-rvemu-run-doc: every RVEMU_* variable in rvemu-run --help and its man page"
exit $missing
