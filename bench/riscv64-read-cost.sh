#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Guest instructions of one PAPI_read on riscv64 through the mmap page (PAPI patch 25) and through read(), and
# of one trapped CSR access, counted (not timed: qemu's time says nothing about a board) from qemu-riscv64's
# instruction trace (-singlestep -d exec,nochain: one log line per executed guest instruction), streamed
# through a FIFO and counted between bench/riscv64_read_cost.c's region markers, split by the object each
# instruction belongs to. Prints counts and ratios; asserts nothing. Takes ~1 minute per run (the trace of
# PAPI_library_init is ~9 million lines).
# Options / env as tests/riscv64-trap/run-riscv64-trap-tests.sh: --emu (RVEMU_LIB), --papi-inc (PAPI_INCDIR),
# --papi-dir (PAPI_LIBDIR), --pfm-dir (PFM_LIBDIR); defaults: the riscv64 prefix of scripts/cross-build.sh
# (RISCV64_PREFIX, default build/prefix-riscv64).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
prefix=${RISCV64_PREFIX:-${RVPAPI_BUILD:-$top/build}/prefix-riscv64}
emu=${RVEMU_LIB:-$prefix/lib/librvemu.so}
papi_inc=${PAPI_INCDIR:-$prefix/include}
papi_dir=${PAPI_LIBDIR:-$prefix/lib}
pfm_dir=${PFM_LIBDIR:-$prefix/lib}
cc=${RISCV64_CC:-riscv64-linux-gnu-gcc}
sysroot=${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}
qemu=${QEMU:-qemu-riscv64}
die() { echo "riscv64-read-cost: error: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--emu) emu=$2; shift 2 ;;
	--papi-inc) papi_inc=$2; shift 2 ;;
	--papi-dir) papi_dir=$2; shift 2 ;;
	--pfm-dir) pfm_dir=$2; shift 2 ;;
	-h | --help) sed -n '3,12p' "$0"; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done
for f in "$emu" "$papi_inc/papi.h" "$papi_dir/libpapi.so" "$pfm_dir/libpfm.so.4"; do
	[ -f "$f" ] || die "$f not found (scripts/cross-build.sh builds the riscv64 prefix)"
done
command -v "$qemu" > /dev/null || die "$qemu not found"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib"
soname=$(riscv64-linux-gnu-readelf -d "$papi_dir/libpapi.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
ln -sf "$(cd "$papi_dir" && pwd)/libpapi.so" "$work/lib/$soname"
prog=$work/riscv64_read_cost
# -no-pie: the region markers have fixed addresses, taken from the symbol table
"$cc" -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -no-pie -I"$papi_inc" -o "$prog" "$here/riscv64_read_cost.c" \
	-L"$papi_dir" -lpapi -Wl,-rpath-link,"$pfm_dir"
addr() { printf '%016x' "0x$(riscv64-linux-gnu-nm "$prog" | awk -v s="$1" '$3 == s { print $1 }')"; }
begin=$(addr bench_region_begin)
end=$(addr bench_region_end)

# trace MODE ACCESS: run the program under the trace; prints "region ID NAME REPS OBJECT=N ..." lines
trace() {
	local mode=$1 access=$2 fifo=$work/trace.$1
	mkfifo "$fifo"
	# the program's stdout (object ranges, region names) first, then the counter reads the trace
	"$qemu" -L "$sysroot" -singlestep -d exec,nochain -D "$fifo" -E LD_LIBRARY_PATH="$work/lib:$papi_dir:$pfm_dir" \
		-E LD_PRELOAD="$emu" -E RVEMU_MODEL=sifive-u74 -E RVEMU_CLOCK=virtual -E RVEMU_PARANOID=1 \
		-E RVEMU_PERF_USER_ACCESS="$access" "$prog" "$mode" > "$work/out.$mode" &
	local pid=$!
	# mawk has no hex arithmetic: PCs are 16-digit zero-padded hex strings, compared as strings
	awk -F/ -v begin="$begin" -v end="$end" -v out="$work/out.$mode" '
		BEGIN { nobj = 0 }
		function load_objects(   line, f) {
			while ((getline line < out) > 0) {
				split(line, f, " ")
				if (f[1] == "object") {
					nobj++; name[nobj] = f[2]
					lo[nobj] = sprintf("%016s", substr(f[3], 3)); hi[nobj] = sprintf("%016s", substr(f[4], 3))
					gsub(/ /, "0", lo[nobj]); gsub(/ /, "0", hi[nobj])
				} else if (f[1] == "region") {
					rname[f[2]] = f[3]; reps[f[2]] = f[4]
				}
			}
			loaded = 1
		}
		/^Trace/ {
			pc = $2
			if (pc == begin) { if (!loaded) load_objects(); region++; counting = 1 }
			if (!counting) next
			if (pc == end) { counting = 0; next }
			total[region - 1]++
			who = "other"
			for (i = 1; i <= nobj; i++) if (pc >= lo[i] && pc < hi[i]) { who = name[i]; break }
			n[region - 1, who]++; seen[who] = 1
			# inside the emulator (the emulated kernel) from its first instruction until the program or
			# PAPI runs again: libc calls and qemu'"'"'s signal return trampoline in between are its too
			if (who == "librvemu.so") inemu = 1
			else if (who == "program" || who ~ /^libpapi/ || who ~ /^libpfm/) inemu = 0
			if (inemu) emu[region - 1]++
		}
		END {
			for (r = 0; r < region; r++) {
				line = sprintf("region %d %s %d total=%d emulator=%d", r, rname[r], reps[r], total[r], emu[r] + 0)
				for (w in seen) line = line sprintf(" %s=%d", w, n[r, w] + 0)
				print line
			}
		}' "$fifo"
	wait "$pid" || die "the traced program failed: $(cat "$work/out.$mode")"
	rm -f "$fifo"
}

start=$(date +%s)
page=$(trace page 1)
read=$(trace read 0)
# field VALUE-LINE KEY: the count of KEY= in a region line
field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -1; }
region() { grep "^region $1 " <<< "$2"; }
per_op() { # (count in region - count in the empty region) / reps, for one key, one decimal
	local r=$1 k=$2 lines=$3
	local a b reps
	a=$(field "$(region "$r" "$lines")" "$k"); b=$(field "$(region 0 "$lines")" "$k")
	reps=$(region "$r" "$lines" | awk '{ print $4 }')
	awk -v a="${a:-0}" -v b="${b:-0}" -v n="$reps" 'BEGIN { printf "%.1f", (a - b) / n }'
}
split_line() { # per-op counts by object for region R of a run
	local r=$1 lines=$2 out="" k v
	for k in program libpapi.so.7.0 libpfm.so.4 libc.so.6 librvemu.so ld-linux-riscv64-lp64d.so.1 other; do
		v=$(per_op "$r" "$k" "$lines")
		[ "$v" = "0.0" ] || out="$out $k $v,"
	done
	echo "${out%,}"
}
page_total=$(per_op 1 total "$page")
read_total=$(per_op 1 total "$read")
csr_total=$(per_op 2 total "$page")
page_emu=$(per_op 1 emulator "$page")
read_emu=$(per_op 1 emulator "$read")
csr_emu=$(per_op 2 emulator "$page")
page_user=$(awk -v t="$page_total" -v e="$page_emu" 'BEGIN { printf "%.1f", t - e }')
read_user=$(awk -v t="$read_total" -v e="$read_emu" 'BEGIN { printf "%.1f", t - e }')
echo "guest instructions per operation (qemu-riscv64 -singlestep exec trace, sifive-u74, one event; counted):"
echo "  PAPI_read through the page (patch 25): $page_total = user side $page_user + emulator $page_emu" \
	" [by object:$(split_line 1 "$page")]"
echo "  PAPI_read through read():              $read_total = user side $read_user + emulator $read_emu" \
	" [by object:$(split_line 1 "$read")]"
echo "  one trapped csrr hpmcounter3:          $csr_total = emulator $csr_emu + the loop and the csrr itself" \
	" [by object:$(split_line 2 "$page")]"
echo "  user side = what a board runs in user mode (the csrr is one instruction there; a read() adds the" \
	"kernel's system call, which no count here stands for); emulator = librvemu and the libc calls and qemu" \
	"signal-return trampoline it runs (stands for the kernel: the trap's or the system call's)"
awk -v p="$page_total" -v r="$read_total" -v pu="$page_user" -v ru="$read_user" -v pe="$page_emu" -v re="$read_emu" \
	-v c="$csr_emu" 'BEGIN {
	printf "  ratios: read()/page: total %.2f, user side %.2f, emulator side %.2f; one trap = %.2f x an emulated read()\n",
		r / p, ru / pu, re / pe, c / re }'
if perf stat -x, -e instructions:u true 2>&1 | grep -q "not supported"; then
	echo "  host instructions: not measured (this host has no usable hardware counters: perf stat says <not supported>)"
fi
echo "  (took $(($(date +%s) - start)) s)"
