# SPDX-License-Identifier: MIT
# Sourced by the scripts and tests that loop over the emulated machines: the list is events/models.csv's
# (through gen/gen_events.py --models), never one of their own, so a new model is in every loop.
#   rv_models              the models, one per line
#   rv_variants            the models, plus MODEL+sscofpmf for each core whose Sscofpmf is an option (its isa
#                          does not name it already)
#   rv_model_info MODEL    "core_pmu bank_pmu overflow_irq pes prog_counters isa" (bank_pmu - when none)
#   rv_overflow_mode VARIANT  the overflow mode PAPI reports there: "hardware, precise" (PES), "hardware"
#                          (Sscofpmf on, or the core's own Andes/T-Head overflow interrupt) or "none"
rv_models_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rv_models_table() { python3 "$rv_models_top/gen/gen_events.py" --models; }
rv_models() { rv_models_table | cut -d' ' -f1; }
rv_variants() {
	local m pmu bank ovf pes n isa
	rv_models_table | while read -r m pmu bank ovf pes n isa; do
		echo "$m"
		[ "$ovf" = sscofpmf ] && [[ "${isa}_" != *_sscofpmf_* ]] && echo "$m+sscofpmf"
	done
	return 0
}
rv_model_field() { # rv_model_field MODEL COLUMN: one column of the model's row of events/models.csv
	python3 - "$rv_models_top/events/models.csv" "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
print(next(r[sys.argv[3]] for r in rows if r['model'] == sys.argv[2]))
PY
}
rv_model_info() { rv_models_table | awk -v m="$1" '$1 == m { print $2, $3, $4, $5, $6, $7; found = 1 } END { exit !found }'; }
rv_overflow_mode() {
	local model=${1%+*} pmu bank ovf pes n isa
	read -r pmu bank ovf pes n isa < <(rv_model_info "$model")
	if [ "$pes" = yes ]; then
		echo "hardware, precise"
	elif [ "$1" != "$model" ] || [ "$ovf" = andes ] || [ "$ovf" = thead ] || [[ "${isa}_" == *_sscofpmf_* ]]; then
		echo "hardware"
	else
		echo "none"
	fi
}
# rv_native_event MODEL: a native event of the model's core PMU that its profile counts (the programmable event
# with the highest rate), or riscv_generic::INSTRUCTIONS on a core with only mcycle/minstret
rv_native_event() {
	python3 - "$rv_models_top/events" "$1" <<'PY'
import csv, os, sys
def rows(path):
    return list(csv.DictReader(l for l in open(path) if l.strip() and not l.startswith("#")))
m = next(r for r in rows(os.path.join(sys.argv[1], "models.csv")) if r["model"] == sys.argv[2])
if not m["event_table"]:
    print("riscv_generic::INSTRUCTIONS")
    sys.exit(0)
names = {r["name"] for r in rows(os.path.join(sys.argv[1], m["event_table"]))}
counts = [(int(r["count"], 0), r["event"]) for r in rows(os.path.join(sys.argv[1], "profiles", m["profile"]))
          if r["event"] in names]
print("%s::%s" % (m["core_pmu"], max(counts)[1]))
PY
}
