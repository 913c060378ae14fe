#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PAPI examples on each emulated machine (called by scripts/demo.sh after papi_avail; runs alone too):
# hl_region (PAPI_hl_region_begin/end, two regions) writes its JSON, shown in short with the emulator's truth;
# profil_hot (PAPI_profil over its own text) names its hot function and says how PAPI overflowed.
# Env: RVPAPI_BUILD (examples are built into $RVPAPI_BUILD/examples, outputs in $RVPAPI_BUILD/papi-demo),
# PREFIX (default $RVPAPI_BUILD/prefix, where build.sh installed PAPI and the emulator).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
prefix=${PREFIX:-$build/prefix}
run=$prefix/bin/rvemu-run
bin=$build/examples
work=$build/papi-demo

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

[ -x "$run" ] && [ -f "$prefix/include/papi.h" ] || { echo "papi-demo: PAPI or rvemu-run missing in $prefix (run scripts/build.sh)" >&2; exit 1; }
make -s -f "$top/examples/GNUmakefile" PREFIX="$prefix" OUT="$bin"


# One line per region: PAPI's count (from the JSON) and the emulator's truth, per event.
show_hl() { # show_hl JSON_DIR STDOUT
	python3 - "$1" "$2" <<'PY'
import glob, json, sys
path = glob.glob(sys.argv[1] + "/papi_hl_output/rank_*.json")[0]
doc = json.load(open(path))
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[0] == "truth":
        truth[(f[1], f[2])] = f[3]
print("    JSON: %s" % path)
for thread in doc["threads"].values():
    for region in thread["regions"].values():
        cells = []
        for event in doc["event_definitions"]:
            short = event.split("::")[-1]
            cells.append("%s=%s" % (short if len(short) <= 24 else short[:21] + "...", region[event]))
        same = all(region[e] == truth.get((region["name"], e)) for e in doc["event_definitions"])
        print("    region %-8s %s  (emulator truth: %s)" % (region["name"], "  ".join(cells), "equal" if same else "differs"))
PY
}

# shellcheck source=models.sh
. "$top/scripts/models.sh"
for variant in $(rv_variants); do
	model=${variant%+*}
	opts=(--model "$model")
	[ "$variant" != "$model" ] && opts+=(--sscofpmf)
	section "PAPI examples on the emulated ${variant/+/ with }"
	out=$work/$variant
	rm -rf "$out"
	mkdir -p "$out"
	events="PAPI_TOT_CYC,PAPI_TOT_INS,$(rv_native_event "$model")"
	echo "  hl_region, virtual clock, PAPI_EVENTS=$events"
	PAPI_EVENTS=$events PAPI_OUTPUT_DIRECTORY=$out "$run" "${opts[@]}" --clock virtual -- "$bin/hl_region" > "$out/hl.txt" 2>&1 ||
		{ echo "    hl_region failed (see $out/hl.txt)"; continue; }
	show_hl "$out" "$out/hl.txt" || echo "    no JSON (see $out/hl.txt)"
	echo "  profil_hot (PAPI_profil on PAPI_TOT_CYC, CPU-time clock)"
	if "$run" "${opts[@]}" -- "$bin/profil_hot" > "$out/profil.txt" 2>&1; then
		awk '/^profil_hot: overflow by/ { sub(/^profil_hot: /, ""); print "    " $0 }
		     /^function/ { printf "    %-10s %6s samples %7s\n", $2, $3, $4 }
		     /^hottest/ { print "    hottest function: " $2 " (" $3 " of the samples)" }' "$out/profil.txt"
	else
		echo "    profil_hot failed (see $out/profil.txt)"
	fi
done
