#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The exec-count plugin end to end (docs/exec-counts.md): riscv64 kernels built with the cross compiler, run
# under qemu-riscv64 with plugin/librvexec.so, their counts checked against QEMU's own log, their disassembly
# and the analytic cache formulas (tests/exec/test_exec.py); PAPI's tests of the riscv64 build (scripts/cross-build.sh)
# under rvemu-run --exec. Uses the plugin of the build tree
# (RVPAPI_BUILD/obj, or PLUGIN= and RVEXEC_DUMP=). Usage: run-exec-tests.sh [test names...]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RVPAPI_BUILD:-$top/build}
plugin=${PLUGIN:-$build/obj/plugin/.libs/librvexec.so}
dump=${RVEXEC_DUMP:-$build/obj/plugin/rvexec-dump}
if [ "$(dpkg --print-architecture 2>/dev/null)" = riscv64 ]; then
	echo "exec-counts: on a riscv64 machine the counters are real; the QEMU plugin is for other hosts"
	exit 0
fi
for f in "$plugin" "$dump"; do
	[ -e "$f" ] || { echo "exec-counts: $f is missing (build the tree: make -C $build/obj)" >&2; exit 1; }
done
command -v qemu-riscv64 >/dev/null && command -v riscv64-linux-gnu-gcc >/dev/null ||
	{ echo "exec-counts: qemu-user and gcc-riscv64-linux-gnu are needed (scripts/deps.sh installs them)" >&2; exit 1; }
qemu-riscv64 -h | grep -q -- '^-plugin' || { echo "exec-counts: this qemu-riscv64 cannot load plugins" >&2; exit 1; }
exec python3 "$top/tests/exec/test_exec.py" --plugin "$plugin" --dump "$dump" --top "$top" \
	--work "$build/exec-tests" --build "$build" "$@"
