#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PAPI examples (examples/) under the emulator, for each model (called by scripts/build-papi.sh check PREFIX).
# Env: PREFIX (PAPI, libpfm4 and the emulator installed), RVPAPI_BUILD (examples are built into
# $RVPAPI_BUILD/examples, outputs go to $RVPAPI_BUILD/papi-examples), RVEMU_RUN (default $PREFIX/bin/rvemu-run),
# CC/CFLAGS (passed to the examples' makefile, e.g. a sanitizer build).
# Checks per model (sifive-u74, sifive-u74 --sscofpmf, cva6, lowrisc-hpc, boom):
#   hl virtual   hl_region with PAPI_EVENTS="PAPI_TOT_CYC,PAPI_TOT_INS,<native>" and the virtual clock: both
#                regions in papi_hl_output/rank_*.json, every count == the emulator's truth for that region
#   hl cputime   same with the CPU-time clock: every count > 0, and each event's ratio to PAPI_TOT_CYC within
#                1% of the profile's ratio (the virtual-clock run's exact truths)
#   profil       profil_hot (CPU-time clock): more than 50% of the samples in hot_loop, hot_loop the hottest,
#                overflow mode "hardware" exactly with --sscofpmf and on cva6 (PES), and the emulator wrote perf samples exactly
#                in hardware mode (software overflow is PAPI's timer)
# Prints one ok/FAIL line per check and a summary; exit status 1 if any check failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
prefix=${PREFIX:-$build/prefix}
run=${RVEMU_RUN:-$prefix/bin/rvemu-run}
bin=$build/examples
work=$build/papi-examples
pass=0
fail=0
ok() { echo "ok    $*"; pass=$((pass + 1)); }
bad() { echo "FAIL  $*"; fail=$((fail + 1)); }
emu() { timeout 120 "$run" "$@"; } # a hang is a failure, not a stuck suite

[ -x "$run" ] || { echo "run-papi-examples: rvemu-run not found at $run" >&2; exit 1; }
[ -f "$prefix/include/papi.h" ] || { echo "run-papi-examples: no PAPI in $prefix (build-papi.sh install)" >&2; exit 1; }
make -s -f "$top/examples/GNUmakefile" PREFIX="$prefix" OUT="$bin" ||
	{ echo "run-papi-examples: cannot build the examples (examples/GNUmakefile)" >&2; exit 1; }
mkdir -p "$work"

# A native event of the model's core PMU for the examples' EventSet (scripts/models.sh). On the distributed HPC's
# machine PAPI_TOT_CYC/PAPI_TOT_INS are the riscv_hpc component's (docs/riscv-hpc.md), counted on the core's
# cycle/instret counters; perf_event's instructions in a second EventSet would compete with them for the one
# instret counter, so the native there is the component's own.
native_event() {
	if [ "$(rv_model_field "$1" bank_pmu)" = riscv_lowrisc_hpc ]; then
		echo "riscv_hpc:::riscv_generic::INSTRUCTIONS"
	else
		rv_native_event "$1"
	fi
}

# compare_hl MODE JSON_DIR TRUTH_FILE [RATE_FILE]: exact (virtual clock) or ratios (cputime); prints a reason on
# failure. With the CPU-time clock the truths of one region are taken one after another, so their windows differ
# by whatever the thread ran between two calls (tens of us on a loaded host): the ratios to compare with are the
# profile's, read exactly from the virtual-clock run (RATE_FILE), while the JSON's counts come from one group read.
compare_hl() {
	python3 - "$@" <<'PY'
import glob, json, sys
mode, outdir, truth_file = sys.argv[1:4]
rate_file = sys.argv[4] if len(sys.argv) > 4 else truth_file
files = glob.glob(outdir + "/papi_hl_output/rank_*.json")
if len(files) != 1:
    sys.exit("want one papi_hl_output/rank_*.json, found %d" % len(files))
doc = json.load(open(files[0]))
events = list(doc["event_definitions"])
measured = {}
for thread in doc["threads"].values():
    for region in thread["regions"].values():
        measured[region["name"]] = {e: int(region[e]) for e in events if e in region}
def read_truth(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[0] == "truth" and f[3] != "n/a":
            out.setdefault(f[1], {})[f[2]] = int(f[3])
    return out
rates = read_truth(rate_file)
truth = {}
for line in open(truth_file):
    f = line.split()
    if len(f) == 4 and f[0] == "truth":
        if f[3] == "n/a":
            sys.exit("no emulator truth for %s" % f[2])
        truth.setdefault(f[1], {})[f[2]] = int(f[3])
if sorted(truth) != ["dot", "stencil"] or sorted(measured) != ["dot", "stencil"]:
    sys.exit("regions: json %s, truth %s" % (sorted(measured), sorted(truth)))
if len(events) != 3:
    sys.exit("the JSON counts %d events, want 3: %s" % (len(events), events))
summary = []
for name in ("dot", "stencil"):
    got, want = measured[name], truth[name]
    if sorted(got) != sorted(want):
        sys.exit("%s: json events %s, truth events %s" % (name, sorted(got), sorted(want)))
    if mode == "exact":
        for e in events:
            if got[e] != want[e]:
                sys.exit("%s %s: json %d, truth %d" % (name, e, got[e], want[e]))
    else:
        cyc = got["PAPI_TOT_CYC"]
        for e in events:
            if got[e] <= 0 or want[e] <= 0:
                sys.exit("%s %s: json %d, truth %d (want > 0)" % (name, e, got[e], want[e]))
            ratio, tratio = got[e] / cyc, rates[name][e] / rates[name]["PAPI_TOT_CYC"]
            if abs(ratio - tratio) > 0.01 * tratio:
                sys.exit("%s %s/PAPI_TOT_CYC: json %.4f, truth %.4f" % (name, e, ratio, tratio))
    summary.append("%s %s" % (name, " ".join(str(got[e]) for e in events)))
print("; ".join(summary))
PY
}

# check_profil VARIANT_OUTPUT WANT_MODE: majority in hot_loop, mode, emulator samples
check_profil() {
	python3 - "$@" <<'PY'
import sys
out, want_mode = sys.argv[1:3]
mode, samples, hottest, funcs, emu_samples = None, None, None, {}, None
for line in open(out):
    f = line.split()
    if not f: continue
    if f[0] == "mode": mode = f[1]
    elif f[0] == "samples": samples = int(f[1])
    elif f[0] == "function": funcs[f[1]] = int(f[2])
    elif f[0] == "hottest": hottest = f[1]
    elif f[0] == "emulator" and len(f) >= 3 and f[1] == "samples_written": emu_samples = int(f[2])
if mode != want_mode:
    sys.exit("overflow mode %s, want %s" % (mode, want_mode))
if not samples:
    sys.exit("no samples in the text segment")
if emu_samples is None or (emu_samples > 0) != (mode == "hardware"):
    sys.exit("emulator perf samples %s in %s mode" % (emu_samples, mode))
hot = funcs.get("hot_loop", 0)
if hottest != "hot_loop" or 2 * hot <= samples:
    sys.exit("hot_loop has %d of %d samples, hottest %s" % (hot, samples, hottest))
print("%s overflow, %d of %d samples (%.1f%%) in hot_loop, %d in cold_loop" %
      (mode, hot, samples, 100.0 * hot / samples, funcs.get("cold_loop", 0)))
PY
}

# shellcheck source=../../scripts/models.sh
. "$top/scripts/models.sh"
for variant in $(rv_variants); do
	model=${variant%+*}
	opts=(--model "$model")
	[ "$variant" != "$model" ] && opts+=(--sscofpmf)
	# hardware: Sscofpmf on, the core's own overflow interrupt (Andes, T-Head) or PES (docs/pes.md)
	mode=software
	[ "$(rv_overflow_mode "$variant")" != none ] && mode=hardware
	out=$work/$variant
	rm -rf "$out"
	mkdir -p "$out"
	events="PAPI_TOT_CYC,PAPI_TOT_INS,$(native_event "$model")"
	echo "== $variant (PAPI_EVENTS=$events)"

	for clock in virtual cputime; do
		dir=$out/hl-$clock
		mkdir -p "$dir"
		if ! PAPI_EVENTS=$events PAPI_OUTPUT_DIRECTORY=$dir emu "${opts[@]}" --clock "$clock" -- "$bin/hl_region" \
			> "$dir/stdout.txt" 2>&1; then
			bad "$variant hl_region $clock clock: exit status (see $dir/stdout.txt)"
			continue
		fi
		compare=exact
		[ "$clock" = cputime ] && compare=ratios
		if msg=$(compare_hl "$compare" "$dir" "$dir/stdout.txt" "$out/hl-virtual/stdout.txt" 2>&1); then
			ok "$variant hl_region $clock clock: JSON == emulator truth ($compare): $msg"
		else
			bad "$variant hl_region $clock clock: $msg (see $dir)"
		fi
	done

	if ! emu "${opts[@]}" -- "$bin/profil_hot" > "$out/profil.txt" 2>&1; then
		bad "$variant profil_hot: exit status (see $out/profil.txt)"
	elif msg=$(check_profil "$out/profil.txt" "$mode" 2>&1); then
		ok "$variant profil_hot: $msg"
	else
		bad "$variant profil_hot: $msg (see $out/profil.txt)"
	fi
done
echo "papi examples: $pass ok, $fail failed"
[ $fail -eq 0 ]
