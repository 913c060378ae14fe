#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libpfm4's own tools on the RISC-V models: with LIBPFM_FORCE_PMU=<model>, showevtinfo lists every event of
# the model's table (events/*.csv) with its unit masks / modifiers, and check_events encodes the U74 class
# example to 0x80200 and every CVA6 event (and fork alias) to its table value.
set -u
here=$(cd "$(dirname "$0")" && pwd)
events=$here/../../events
tools=${RVPAPI_BUILD:?RVPAPI_BUILD not set}/libpfm4/examples
fail=0 checks=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { checks=$((checks + 1)); }

for t in showevtinfo check_events; do
    [ -x "$tools/$t" ] || { echo "FAIL: $tools/$t not built (scripts/build-libpfm4.sh build)"; exit 1; }
done

# rows of a table without comments and header; prints the named columns separated by spaces
rows() { # file col...
    awk -F, -v cols="${*:2}" '
        /^#/ || /^[[:space:]]*$/ { next }
        !hdr { for (i = 1; i <= NF; i++) idx[$i] = i; hdr = 1; n = split(cols, want, " "); next }
        { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") $(idx[want[k]]); print line }' "$events/$1"
}

# "event attr attr ..." for every event showevtinfo lists for the forced model
listing() { # model
    LIBPFM_FORCE_PMU=$1 "$tools/showevtinfo" 2>&1 | awk -v pmu="$1" '
        /^#-----/ { if (name != "") print name attrs; name = ""; attrs = ""; mine = 0; next }
        /^PMU name/ { mine = ($4 == pmu) }
        /^Name / && mine { name = $3 }
        /^(Umask|Modif)-/ && mine { if (match($0, /\[[^]]*\]/)) attrs = attrs " " substr($0, RSTART + 1, RLENGTH - 2) }
        END { if (name != "") print name attrs }'
}

has_event() { # listing-file event [attr...]
    local file=$1 ev=$2 line
    line=$(grep -E "^$ev( |\$)" "$file") || { bad "$(basename "$file"): event $ev not listed"; return; }
    ok
    for a in "${@:3}"; do
        if [[ " $line " == *" $a "* ]]; then ok; else bad "$(basename "$file"): $ev lacks $a"; fi
    done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the core models are those of events/models.csv (gen/gen_events.py --core-pmus), never a list of our own
cores=$(python3 "$here/../../gen/gen_events.py" --core-pmus) || { echo "FAIL: gen_events.py --core-pmus"; exit 1; }
for model in $cores riscv_generic riscv_lowrisc_hpc riscv_ucb_boom; do
    listing $model > "$tmp/$model"
    [ -s "$tmp/$model" ] || bad "LIBPFM_FORCE_PMU=$model: showevtinfo lists nothing"
    echo "showevtinfo $model: $(wc -l < "$tmp/$model") events"
done

# fixed counters in every core model
while read -r name alias; do
    for model in $cores riscv_generic; do
        has_event "$tmp/$model" "$name"
        has_event "$tmp/$model" "$alias"
    done
done < <(rows riscv_generic.csv name alias)

# U74: flat names, and each class with every one of its bits as a unit mask
while read -r cls name; do
    has_event "$tmp/riscv_sifive_u74" "$name"
    has_event "$tmp/riscv_sifive_u74" "$cls" "$name"
done < <(rows sifive_u74.csv class_name name)

while read -r name alias; do
    has_event "$tmp/riscv_openhwgroup_cva6" "$name"
    has_event "$tmp/riscv_openhwgroup_cva6" "$alias"
done < <(rows openhwgroup_cva6.csv name alias)

while read -r kind name; do
    if [ "$kind" = core ]; then has_event "$tmp/riscv_lowrisc_hpc" "$name" hart; else has_event "$tmp/riscv_lowrisc_hpc" "$name" slice; fi
done < <(rows lowrisc_hpc.csv manager_kind name)

while read -r name; do
    has_event "$tmp/riscv_ucb_boom" "$name"
done < <(rows ucb_boom.csv name)

# every event of every core model's table (events/models.csv event_table), under its name and alias
while IFS=, read -r pmu table; do
    while read -r name alias; do
        has_event "$tmp/$pmu" "$name"
        [ -n "$alias" ] && has_event "$tmp/$pmu" "$alias"
    done < <(rows "$table" name alias)
done < <(python3 -c 'import csv, sys
rows = csv.DictReader(l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#"))
print("\n".join(sorted({r["core_pmu"] + "," + r["event_table"] for r in rows if r["event_table"]})))' "$events/models.csv")

# check_events: the encoding it prints ("Codes : 0x...")
encodes_to() { # model event want
    local got
    got=$(LIBPFM_FORCE_PMU=$1 "$tools/check_events" "$1::$2" 2>&1 | awk '/^Codes/ { print $3 }')
    if [ $((got)) -eq $(($3)) ] && [ -n "$got" ]; then ok; else bad "check_events $1::$2 gave '${got}', want $3"; fi
}
encodes_to riscv_sifive_u74 INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED 0x80200
while read -r value name alias; do
    encodes_to riscv_openhwgroup_cva6 "$name" "$value"
    encodes_to riscv_openhwgroup_cva6 "$alias" "$value"
done < <(rows openhwgroup_cva6.csv mhpmevent_value name alias)

# and check_events refuses what it must
if LIBPFM_FORCE_PMU=riscv_sifive_u74 "$tools/check_events" riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:DCACHE_WRITEBACK > /dev/null 2>&1; then
    bad "check_events accepted a mask of another U74 class"
else ok; fi

echo "test_pfm_tools: $checks checks passed, $fail failed"
[ "$fail" -eq 0 ]
