#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cross-riscv64 check for seam 2: compile lib/ (librvhw.so) and the emulator's sources with
# riscv64-linux-gnu-gcc under our warning flags, then run a tiny lib/ client under qemu-riscv64 when
# available, to show the real-instruction path:
#   - cycle/time/instret (0xC00-0xC02) are read with real csrr instructions (qemu-user permits them);
#   - hpcc (0x800) is a custom CSR qemu's core does not have: the csrr raises SIGILL and the process dies
#     with it, exactly as on a core without the distributed HPC (lib/rvhw.c does not catch traps);
#   - a BOOM hint (`addi x0, rs1, tag`) is a no-op on a non-BOOM core: rs1 comes back unchanged.
# Output goes to $RVPAPI_BUILD/cross-riscv64 (default <srcdir>/build/cross-riscv64).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${RVPAPI_BUILD:-$top/build}/cross-riscv64
cc=${RISCV64_CC:-riscv64-linux-gnu-gcc}
sysroot=${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}
flags=(-std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE)

command -v "$cc" >/dev/null || { echo "cross-compile-lib: $cc not found (Debian: gcc-riscv64-linux-gnu)"; exit 1; }
mkdir -p "$out/generated"
python3 "$top/scripts/gen_events.py" --emulator "$out/generated" >/dev/null
python3 "$top/scripts/gen_exec_tables.py" "$top/events" "$out/generated/rvexec_event_map.h" --event-map

echo "== compile lib/ for riscv64"
"$cc" "${flags[@]}" -fPIC -shared -I"$top/lib" -o "$out/librvhw.so" "$top/lib/rvhw.c"
"$cc" "${flags[@]}" -I"$top/lib" -o "$out/rvhw_probe" "$top/tests/bank/rvhw_probe.c" -L"$out" -lrvhw
echo "== compile the emulator's sources for riscv64 (syntax and warnings only)"
for f in "$top"/emulator/*.c; do
	"$cc" "${flags[@]}" -pthread -fsyntax-only -I"$top/lib" -I"$top/emulator" -I"$top/plugin" -I"$out/generated" "$f"
done
echo "cross-compiled: $out/librvhw.so $out/rvhw_probe"

if [ "$(uname -m)" = riscv64 ]; then # on a board the probe runs natively
	run() { LD_LIBRARY_PATH="$out" "$out/rvhw_probe" "$@"; }
elif command -v qemu-riscv64 >/dev/null && [ -d "$sysroot" ]; then
	run() { qemu-riscv64 -L "$sysroot" -E LD_LIBRARY_PATH="$out" "$out/rvhw_probe" "$@"; }
else
	echo "cross-compile-lib: qemu-riscv64 or $sysroot missing (scripts/deps.sh installs qemu-user and libc6-riscv64-cross)"
	exit 1
fi
echo "== run the probe (qemu-riscv64, or natively on riscv64): standard counters"
run
echo "== BOOM hint on a non-BOOM core"
run boom
echo "== custom CSR hpcc (0x800): expected to die with SIGILL"
set +e
run hpc
status=$?
set -e
if [ "$status" -eq $((128 + 4)) ]; then
	echo "hpcc read trapped with SIGILL (status $status), as on a core without the distributed HPC"
else
	echo "unexpected: hpcc read ended with status $status, expected SIGILL ($((128 + 4)))"
	exit 1
fi
