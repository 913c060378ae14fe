#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The demo (README: "Build and see it work"): builds everything into the prefix, then for each machine model
# lists and encodes its RISC-V events with libpfm4, runs the emulated machine, and (once PAPI is built) shows
# PAPI on it. Output is explained in the README.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RVPAPI_BUILD=${RVPAPI_BUILD:-$top/build}
PREFIX=${PREFIX:-$RVPAPI_BUILD/prefix}
"$top/scripts/build.sh"
bin=$PREFIX/bin
export LD_LIBRARY_PATH=$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

section "libpfm4: RISC-V PMU models compiled in (showevtinfo, one model forced at a time)"
# the models of events/models.csv (gen/gen_events.py --models), never a list of our own
models=$(python3 "$top/gen/gen_events.py" --models | cut -d' ' -f1)
for pmu in $(python3 "$top/gen/gen_events.py" --core-pmus) riscv_generic riscv_lowrisc_hpc riscv_ucb_boom; do
	n=$(LIBPFM_FORCE_PMU=$pmu "$bin/showevtinfo" | grep -c '^Name')
	printf '  %-24s %3d events\n' "$pmu" "$n"
done

section "libpfm4: encoding events (check_events)"
for ev in riscv_sifive_u74::INSTRUCTION_COMMIT:INTEGER_LOAD_RETIRED:FP_LOAD_RETIRED \
	riscv_sifive_u74::MEMORY_SYSTEM:DATA_TLB_MISS:INST_TLB_MISS riscv_openhwgroup_cva6::L1_DCACHE_MISS \
	riscv_openhwgroup_cva6::L1_DCM; do
	pmu=${ev%%::*}
	LIBPFM_FORCE_PMU=$pmu "$bin/check_events" "$ev" | awk -v ev="$ev" '/Codes/ { printf "  %-62s -> mhpmevent %s\n", ev, $NF }'
done

if [ -x "$bin/rvemu-run" ]; then
	section "emulator: what Linux shows on each emulated machine (/proc/cpuinfo, hart 0)"
	for m in $models; do
		printf '  %-12s ' "$m"
		"$bin/rvemu-run" --model "$m" -- sh -c 'head -8 /proc/cpuinfo' | tr '\n' ' ' | sed 's/\t//g'
		echo
	done
fi

if [ -x "$bin/papi_avail" ]; then
	for m in $models; do
		section "PAPI on the emulated $m"
		"$bin/rvemu-run" --model "$m" --clock virtual -- "$bin/papi_avail" -a | "$top/scripts/papi-avail-brief.sh" 30
	done
	[ -x "$top/scripts/papi-demo.sh" ] && "$top/scripts/papi-demo.sh"
fi
echo
echo "demo: done (everything is installed in $PREFIX)"
