#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The event-table generator refuses malformed tables with a message naming the file and line, and accepts
# the project's own tables. Each case copies events/ to a scratch folder and breaks one thing.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
srcdir=${srcdir:-$top/tests}
gen="$srcdir/../gen/gen_events.py"
events="$srcdir/../events"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
pass=0
fail=0

check() { # check NAME EXPECTED-MESSAGE-REGEX EDIT-COMMAND...
	local name=$1 want=$2
	shift 2
	rm -rf "$scratch/ev" && cp -r "$events" "$scratch/ev"
	(cd "$scratch/ev" && "$@")
	local out
	if out=$(python3 "$gen" --events "$scratch/ev" --libpfm "$scratch/out" 2>&1); then
		echo "FAIL $name: generator accepted the broken table"
		fail=$((fail + 1))
	elif ! grep -Eq "$want" <<<"$out"; then
		echo "FAIL $name: message '$out' does not match /$want/"
		fail=$((fail + 1))
	else
		echo "ok   $name: $out"
		pass=$((pass + 1))
	fi
}

if python3 "$gen" --events "$events" --libpfm "$scratch/good" --emulator "$scratch/good" --docs "$scratch/good/e.md"; then
	echo "ok   project tables accepted"
	pass=$((pass + 1))
else
	echo "FAIL project tables rejected"
	fail=$((fail + 1))
fi
check "u74 value not class|bit" 'sifive_u74.csv:[0-9]+: mhpmevent_value 0x300' \
	sed -i 's/^0,INSTRUCTION_COMMIT,9,0x200,/0,INSTRUCTION_COMMIT,9,0x300,/' sifive_u74.csv
check "u74 mask bit out of range" 'sifive_u74.csv:[0-9]+: mask bit 60' \
	sed -i 's/^0,INSTRUCTION_COMMIT,9,0x200,/0,INSTRUCTION_COMMIT,60,0x200,/' sifive_u74.csv
check "duplicate event name" "openhwgroup_cva6.csv:[0-9]+: 'L1_DCACHE_MISS' already defined" \
	sed -i 's/^0x3,ITLB_MISS,/0x3,L1_DCACHE_MISS,/' openhwgroup_cva6.csv
check "repeated cva6 event number" 'openhwgroup_cva6.csv:[0-9]+: encoding 0x1 repeats' \
	sed -i 's/^0x2,L1_DCACHE_MISS,/0x1,L1_DCACHE_MISS,/' openhwgroup_cva6.csv
check "wrong field count" 'ucb_boom.csv:[0-9]+: 2 fields, header has 3' \
	sed -i 's/^5,itlb_access,.*/5,itlb_access/' ucb_boom.csv
check "non-integer encoding" "column mhpmevent_value: 'zz' is not an integer" \
	sed -i 's/^0x4,DTLB_MISS,/zz,DTLB_MISS,/' openhwgroup_cva6.csv
check "bad event name" "bad event name '1BAD'" \
	sed -i 's/^0x4,DTLB_MISS,/0x4,1BAD,/' openhwgroup_cva6.csv
check "missing column" "missing columns \\['hpcm_bit'\\]" \
	sed -i 's/^manager_kind,hpcm_bit,/manager_kind,bit,/' lowrisc_hpc.csv
check "unknown manager kind" 'lowrisc_hpc.csv:[0-9]+: manager_kind must be core or l2_slice' \
	sed -i 's/^l2_slice,3,/l3_slice,3,/' lowrisc_hpc.csv
check "profile names an unknown event" 'sifive-u74.csv:[0-9]+: unknown event NOT_AN_EVENT' \
	sh -c 'echo "NOT_AN_EVENT,1,assumed" >> profiles/sifive-u74.csv'
check "profile misses an event" "no count for \\['FP_INTERLOCK'\\]" \
	sed -i '/^FP_INTERLOCK,/d' profiles/sifive-u74.csv
check "boom index out of order" 'ucb_boom.csv:[0-9]+: index 9 out of order' \
	sed -i 's/^8,npc_from_f1,/9,npc_from_f1,/' ucb_boom.csv
check "identification rules miss a machine" "models.csv:[0-9]+: events/cpu_ids.csv recognises machine cva6 as \\['riscv_generic'\\]" \
	sed -i '/^riscv_openhwgroup_cva6,/d' cpu_ids.csv
check "unknown identification rule" 'cpu_ids.csv:[0-9]+: match must be isa_base, uarch, ids, perf_id or isa_ext' \
	sed -i 's/^riscv_ucb_boom,ids,/riscv_ucb_boom,marchid,/' cpu_ids.csv
check "identification rule for an unknown PMU" "cpu_ids.csv:[0-9]+: pmu 'riscv_nope' is not a core_pmu" \
	sed -i 's/^riscv_lowrisc_hpc,isa_ext,/riscv_nope,isa_ext,/' cpu_ids.csv
check "malformed ids" "cpu_ids.csv:[0-9]+: ids value '0x602' is not mvendorid:marchid" \
	sed -i 's/^riscv_openhwgroup_cva6,ids,0x602:0x3,/riscv_openhwgroup_cva6,ids,0x602,/' cpu_ids.csv
check "missing table file" 'No such file' rm riscv_generic.csv
# events/presets.csv (PAPI's syntax: every comma splits a field)
check "preset with a bogus derived type" "presets.csv:[0-9]+: derived type 'BOGUS' is not one of" \
	sed -i 's/^PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS$/PRESET,PAPI_TOT_INS,BOGUS,riscv_sifive_u74::INSTRUCTIONS/' presets.csv
check "preset term not an event" "presets.csv:[0-9]+: unknown event 'NO_SUCH_EVENT' of riscv_sifive_u74" \
	sed -i 's/^PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS$/PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::NO_SUCH_EVENT/' presets.csv
check "preset term of another PMU" "presets.csv:[0-9]+: term 'riscv_openhwgroup_cva6::LOAD_ACCESS' is not an event of riscv_sifive_u74" \
	sed -i 's/^PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS$/PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_openhwgroup_cva6::LOAD_ACCESS/' presets.csv
check "preset term without its PMU" "presets.csv:[0-9]+: term 'INSTRUCTIONS' is not qualified" \
	sed -i 's/^PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS$/PRESET,PAPI_TOT_INS,NOT_DERIVED,INSTRUCTIONS/' presets.csv
check "preset without terms" "presets.csv:[0-9]+: NOT_DERIVED takes 1 terms, PAPI_TOT_INS has 0" \
	sed -i 's/^PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::INSTRUCTIONS$/PRESET,PAPI_TOT_INS,NOT_DERIVED,NOTE,"x"/' presets.csv
check "derived preset with one term" "presets.csv:[0-9]+: DERIVED_SUB takes 2 or more terms" \
	sed -i 's/^PRESET,PAPI_BR_PRC,DERIVED_SUB,riscv_sifive_u74::CONDITIONAL_BRANCH_RETIRED,riscv_sifive_u74::BRANCH_DIRECTION_MISPREDICTION,/PRESET,PAPI_BR_PRC,DERIVED_SUB,riscv_sifive_u74::CONDITIONAL_BRANCH_RETIRED,/' presets.csv
check "preset unit mask of another class" "presets.csv:[0-9]+: 'DATA_TLB_MISS' is not a unit mask of riscv_sifive_u74::INSTRUCTION_COMMIT" \
	sed -i 's/^PRESET,PAPI_BR_UCN,NOT_DERIVED,riscv_sifive_u74::INSTRUCTION_COMMIT:JAL_INSTRUCTION_RETIRED:/PRESET,PAPI_BR_UCN,NOT_DERIVED,riscv_sifive_u74::INSTRUCTION_COMMIT:DATA_TLB_MISS:/' presets.csv
check "preset defined twice" "presets.csv:[0-9]+: PAPI_TOT_INS already defined for riscv_sifive_u74" \
	sed -i 's/^PRESET,PAPI_TOT_CYC,NOT_DERIVED,riscv_sifive_u74::CYCLES$/PRESET,PAPI_TOT_INS,NOT_DERIVED,riscv_sifive_u74::CYCLES/' presets.csv
check "preset before any CPU" "presets.csv:[0-9]+: PRESET before any CPU line" \
	sed -i '0,/^CPU,/s/^CPU,riscv_sifive_u74$/# no CPU/' presets.csv
check "preset section of an unknown PMU" "presets.csv:[0-9]+: CPU needs one PMU of" \
	sed -i 's/^CPU,riscv_sifive_u74$/CPU,riscv_sifive_u99/' presets.csv
check "note with a comma" "presets.csv:[0-9]+: unexpected field" \
	sed -i 's/^PRESET,PAPI_BR_CN,NOT_DERIVED,riscv_sifive_u74::CONDITIONAL_BRANCH_RETIRED$/PRESET,PAPI_BR_CN,NOT_DERIVED,riscv_sifive_u74::CONDITIONAL_BRANCH_RETIRED,NOTE,"a, b"/' presets.csv
# a model is data: whatever it lacks is an error naming the file and line, never a default
check "profile without a count of an event" "profiles/cva6.csv: no count for \\['L1_ICACHE_MISS'\\]" \
	sed -i '/^L1_ICACHE_MISS,/d' profiles/cva6.csv
check "profile without INSTRUCTIONS" "profiles/cva6.csv: no count for \\['INSTRUCTIONS'\\]" \
	sed -i '/^INSTRUCTIONS,/d' profiles/cva6.csv
check "model without a profile" "models.csv:[0-9]+: model cva6 has no profile" \
	sed -i 's/,openhwgroup_cva6.csv,cva6.csv,/,openhwgroup_cva6.csv,,/' models.csv
check "model with a missing profile file" "models.csv:[0-9]+: profile 'nope.csv' is not a file" \
	sed -i 's/,openhwgroup_cva6.csv,cva6.csv,/,openhwgroup_cva6.csv,nope.csv,/' models.csv
check "core model without an event table" "models.csv:[0-9]+: core_pmu riscv_openhwgroup_cva6 needs an event_table" \
	sed -i 's/,openhwgroup_cva6.csv,cva6.csv,/,,cva6.csv,/' models.csv
check "event table that does not exist" "models.csv:[0-9]+: event_table .*nope.csv does not exist" \
	sed -i 's/,openhwgroup_cva6.csv,cva6.csv,/,nope.csv,cva6.csv,/' models.csv
check "unknown overflow interrupt" "models.csv:[0-9]+: overflow_irq 'maybe' is not one of" \
	sed -i 's/,sscofpmf,class_mask,/,maybe,class_mask,/' models.csv
check "andes overflow without xandespmu" "models.csv:[0-9]+: overflow_irq andes needs xandespmu" \
	sed -i 's/,sscofpmf,class_mask,/,andes,class_mask,/' models.csv
check "missing cpuinfo fixture" "models.csv:[0-9]+: cpuinfo_fixture 'nope.txt' is not a file" \
	sed -i 's/,cva6.txt,/,nope.txt,/' models.csv
check "model named twice" "models.csv:[0-9]+: model cva6 already defined" \
	sed -i '/^cva6,/p' models.csv
check "bad perf_id pattern" "cpu_ids.csv:[0-9]+: perf_id .* is not a regular expression" \
	sed -i '$ a riscv_openhwgroup_cva6,perf_id,0x602-0x3-0x(,CVA6' cpu_ids.csv
check "core model without presets" "presets.csv: no CPU,riscv_openhwgroup_cva6 section" \
	sed -i '/^CPU,riscv_openhwgroup_cva6$/,/^#/d' presets.csv
check "pfm_id given twice" "models.csv:[0-9]+: pfm_id 0 is already riscv_sifive_u74's" \
	sed -i 's/,cva6.txt,1$/,cva6.txt,0/' models.csv
check "pfm_id not a number" "models.csv:[0-9]+: pfm_id 'x1' is not a number 0..63" \
	sed -i 's/,cva6.txt,1$/,cva6.txt,x1/' models.csv
check "pfm_id out of libpfm4's range" "models.csv:[0-9]+: pfm_id '64' is not a number 0..63" \
	sed -i 's/,cva6.txt,1$/,cva6.txt,64/' models.csv
check "core model without pfm_id" "models.csv:[0-9]+: pfm_id '' is not a number" \
	sed -i 's/,cva6.txt,1$/,cva6.txt,/' models.csv
check "pfm_id on a riscv_generic machine" "models.csv:[0-9]+: riscv_generic has libpfm4's fixed id" \
	sed -i 's/,boom.txt,$/,boom.txt,5/' models.csv
echo "gen tables: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
