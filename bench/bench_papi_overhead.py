#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PAPI's overhead against the raw perf_event calls, in instructions and calls into the kernel, not time.

Runs bench_papi_overhead --worker under the emulator (U74, virtual clock) and valgrind's callgrind, which
dumps the instruction count of each phase separately (the worker brackets them with client requests).
Instructions are deterministic: the same build and environment give the same numbers on a loaded machine. The emulator's
own instructions stand for the kernel's work, so they are in the totals (a raw perf_event_open is almost
all emulator); the rows "outside the emulator" leave them out (what PAPI, libpfm4 and libc execute).
Prints one table: each row ours, raw, ratio, the goal of issue 18. Ratios are printed, never asserted.
With --hpc-bench, the table also has the riscv_hpc read against the protocol's lower bound (bench_hpc_batch's
worst row, in CSR operations; "raw" is the bound there).

  bench_papi_overhead.py --worker PATH --emulator librvemu.so [--hpc-bench PATH] [--work DIR] [--keep]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def parse_dump(path):
    """(phase name, total Ir, Ir inside the emulator) of one callgrind dump (--compress-strings=no).

    Inside the emulator = the inclusive cost of every call from outside librvemu into it: its own
    instructions and the libc calls it makes for the program (reading a file it serves, say)."""
    name, total, emu = None, 0, 0
    ob, cob, call_into_emu = "", None, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                name = line.split(": ", 2)[2].strip().split()[-1]
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
            elif line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("cob="):
                cob = line[4:].strip()
            elif line.startswith("calls="):
                callee = cob if cob is not None else ob
                call_into_emu = is_emulator(callee) and not is_emulator(ob)
                cob = None
            elif line[:1].isdigit() or line[:1] in "+-*":
                if call_into_emu:  # this cost line is that call's inclusive cost
                    emu += int(line.split()[-1])
                call_into_emu = None
    return name, total, emu


def is_emulator(obj):
    return "librvemu" in os.path.basename(obj)


def run(args):
    work = args.work or tempfile.mkdtemp(prefix="bench-papi-overhead-")
    os.makedirs(work, exist_ok=True)
    for f in os.listdir(work):
        if f.startswith("cg.out"):
            os.remove(os.path.join(work, f))
    env = dict(os.environ, LD_PRELOAD=args.emulator, RVEMU_MODEL="sifive-u74", RVEMU_CLOCK="virtual")
    cmd = ["valgrind", "-q", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(work, "cg.out"),
           "--dump-instr=no", "--compress-strings=no", "--compress-pos=no", args.worker, "--worker"]
    print("  $ " + " ".join(cmd), flush=True)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        sys.exit("bench_papi_overhead: the worker failed (exit %d)" % out.returncode)
    calls = {}
    for line in out.stdout.splitlines():
        m = re.match(r"phase (\S+) calls (.*)", line)
        if m:
            calls[m.group(1)] = {k: int(v) for k, v in (kv.split("=") for kv in m.group(2).split())}
    ir = {}
    for f in sorted(os.listdir(work)):
        if re.fullmatch(r"cg\.out\.\d+", f):
            name, total, emu = parse_dump(os.path.join(work, f))
            if name:
                ir[name] = (total, emu)
    missing = [p for p in calls if p not in ir]
    if missing:
        sys.exit("bench_papi_overhead: no callgrind dump for " + ", ".join(missing))
    if not args.keep and not args.work:
        shutil.rmtree(work)
    return ir, calls


def hpc_rows(hpc_bench, emulator):
    """The riscv_hpc read against the protocol's lower bound: bench_hpc_batch's worst row."""
    if not hpc_bench:
        return []
    env = dict(os.environ, RVEMU_LIB=emulator)
    out = subprocess.run([hpc_bench], env=env, capture_output=True, text=True, timeout=900)
    m = re.search(r"bench_hpc_batch: bound: worst ours/bound \S+ at M=(\d+) N=(\d+): ours (\d+), bound (\d+)",
                  out.stdout)
    if out.returncode != 0 or not m:
        sys.stderr.write(out.stdout + out.stderr)
        sys.exit("bench_papi_overhead: %s gave no bound line (exit %d)" % (hpc_bench, out.returncode))
    label = "riscv_hpc read, CSR ops vs bound (worst: M=%s N=%s)" % (m.group(1), m.group(2))
    return [(label, int(m.group(3)), int(m.group(4)), "<= 1.1x")]


def table(ir, calls, extra_rows=()):
    def total(p):
        return ir[p][0]

    def outside(p):
        return ir[p][0] - ir[p][1]

    def ncalls(phases, kinds=None):
        return sum(v for p in phases for k, v in calls[p].items() if kinds is None or k in kinds)

    life = ["papi_init_add4", "papi_start", "papi_read", "papi_stop_shutdown"]
    raw_life = ["raw_open4", "raw_start", "raw_read"]
    rows = [
        ("init..add 4 events, instructions (1st init)", total("papi_init_add4_first"), total("raw_open4"),
         "<= 10x"),
        ("init..add 4 events, instructions (again)", total("papi_init_add4"), total("raw_open4"), "<= 10x"),
        ("  the same outside the emulator", outside("papi_init_add4"), outside("raw_open4"), "-"),
        ("PAPI_start vs RESET+ENABLE, instructions", total("papi_start"), total("raw_start"), "<= 1.2x"),
        ("PAPI_read vs a group read, instructions", total("papi_read"), total("raw_read"), "-"),
        ("init..add: perf_event_open calls", ncalls(["papi_init_add4"], {"perf_event_open"}),
         ncalls(["raw_open4"], {"perf_event_open"}), "-"),
        ("init..add: ioctl calls", ncalls(["papi_init_add4"], {"ioctl"}), ncalls(["raw_open4"], {"ioctl"}), "-"),
        ("init..add: file opens (/proc, /sys, ...)", ncalls(["papi_init_add4"], {"open"}),
         ncalls(["raw_open4"], {"open"}), "-"),
        ("PAPI_start: ioctl calls", ncalls(["papi_start"], {"ioctl"}), ncalls(["raw_start"], {"ioctl"}), "-"),
        ("init..shutdown: kernel calls (lower bound)", ncalls(life), ncalls(raw_life), "<= 60 calls"),
    ]
    rows += list(extra_rows)
    print("bench_papi_overhead: emulated SiFive U74, virtual clock; instructions from callgrind (deterministic),")
    print("bench_papi_overhead: the emulator's (the kernel's stand-in) included unless a row says otherwise")
    print("bench_papi_overhead: %-52s %11s %9s %8s  %s" % ("", "ours", "raw", "ratio", "goal (issue 18)"))
    for label, ours, raw, goal in rows:
        ratio = ("%.2fx" if ours < 10 * raw else "%.1fx") % (ours / raw) if raw else "-"
        print("bench_papi_overhead: %-52s %11d %9d %8s  %s" % (label, ours, raw, ratio, goal))
    print("  calls by kind per phase (the worker's count of libc entry points):")
    for p, kinds in calls.items():
        print("  %-26s %s" % (p, " ".join("%s=%d" % kv for kv in kinds.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", required=True, help="the bench_papi_overhead program")
    ap.add_argument("--emulator", required=True, help="librvemu.so")
    ap.add_argument("--work", help="folder for callgrind's dumps (default: a temporary one, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--hpc-bench", help="bench_hpc_batch: add the riscv_hpc read against its lower bound")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench_papi_overhead: valgrind not found (scripts/deps.sh installs it)")
    ir, calls = run(args)
    table(ir, calls, hpc_rows(args.hpc_bench, args.emulator))


if __name__ == "__main__":
    main()
