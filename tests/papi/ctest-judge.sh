# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154 # expectations, arch, ok, bad and expected_fail are the caller's
# Judging PAPI's ctests against tests/papi/ctest-expectations.csv; sourced by run-papi-tests.sh and by
# tests/gen/test_ctest_judge.sh. The caller sets expectations (the CSV's path) and arch (the build's
# architecture, uname -m) and defines ok, bad and expected_fail (one line each, counted).

# The markdown table of expected ctest failures (docs/papi.md), generated from the CSV.
expectations_table() {
	python3 - "$expectations" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')))
print('| ctest | model | outcome | reason |')
print('|---|---|---|---|')
for r in rows:
    arch, _, variant = r['variant'].rpartition(':')
    model = 'all' if variant == '*' else variant
    if arch:
        model += ' (%s build only)' % arch
    outcome = r['outcome']
    if r.get('host_verdict'):
        outcome += ' (only `%s`)' % r['host_verdict']
    print('| %s | %s | %s | %s |' % (r['ctest'], model, outcome.replace('|', '\\|'), r['reason'].replace('|', '\\|')))
PY
}
# "outcome<US>host_verdict<US>reason" (US: the unit separator, 0x1f) for a ctest expected to fail on a variant (empty: it must pass); outcome fails|varies.
# A row whose variant is ARCH:VARIANT (riscv64:*, riscv64:cva6) is for that build only (PAPI_TEST_ARCH, default
# the host's) and comes before the rows for every build.
expected_reason() { # expected_reason VARIANT CTEST
	python3 - "$expectations" "$1" "$2" "$arch" <<'PY'
import csv, sys
path, variant, ctest, arch = sys.argv[1:5]
rows = [r for r in csv.DictReader(l for l in open(path) if l.strip() and not l.startswith('#')) if r['ctest'] == ctest]
for own_arch in (True, False):
    for r in rows:
        a, _, v = r['variant'].rpartition(':')
        if (a == arch if own_arch else a == '') and v in ('*', variant):
            if r['outcome'] not in ('fails', 'varies'):
                sys.exit('ctest-expectations.csv: outcome must be fails or varies, not %r' % r['outcome'])
            print(r['outcome'], r.get('host_verdict') or '', r['reason'], sep='\x1f')
            sys.exit(0)
PY
}

# One ctest on one variant: ok, xfail (documented), XPASS or FAIL.
judge_ctest() { # judge_ctest VARIANT CTEST OUTPUT_FILE
	local expectation outcome host_verdict reason verdict
	expectation=$(expected_reason "$1" "$2") || { bad "$1 ctest $2: bad expectations file"; return; }
	IFS=$'\x1f' read -r outcome host_verdict reason <<< "$expectation"
	if grep -q "PASSED" "$3" && ! grep -q "WARNING" "$3"; then
		[ -z "$expectation" ] && { ok "$1 ctest $2"; return; }
		[ "$outcome" = varies ] && { ok "$1 ctest $2 (passed here; host-dependent: $reason)"; return; }
		bad "$1 ctest $2: XPASS, listed as expected to fail ($reason): update $(basename "$expectations") and docs/papi.md"
		return
	fi
	# the ctest's own words: its "Line # N Error/Warning" line, else its verdict
	verdict=$(grep -m1 -E 'Line #|SKIPPED' "$3" || grep -m1 -E 'FAILED|Error|WARNING' "$3" || true)
	verdict=$(echo "$verdict" | tr -s ' \t' ' ' | sed 's/^ //;s/ $//')
	[ -n "$verdict" ] || verdict="no verdict"
	if [ "$outcome" = varies ] && [ -n "$host_verdict" ] && ! grep -qE "$host_verdict" <<< "$verdict"; then
		# the host decides only the check it names; any other failure is the emulator's or ours
		bad "$1 ctest $2: $verdict, not the host-dependent '$host_verdict' (see $3)"
	elif [ -n "$reason" ]; then
		expected_fail "$1 ctest $2: $reason [$verdict]"
	else
		bad "$1 ctest $2: $verdict (see $3)"
	fi
}
