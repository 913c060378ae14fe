#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Slowdown of qemu-riscv64 with the exec-count plugin (plugin/librvexec.so) against plain qemu-riscv64 on the same
program: host CPU time (user + system of the qemu process) with the plugin over without, measured in one run,
alternating the two, median of the rounds. Printed, never asserted (the goal is <= 3x; docs/exec-counts.md).
With --riscv64-prefix (the riscv64 build, scripts/cross-build.sh), also the whole `rvemu-run --exec` (the plugin
plus the riscv64 emulator preloaded in the guest with its exec count source) over plain qemu-riscv64, both on the
same dynamically linked program (LD_PRELOAD needs one).
Usage: bench_exec.py --plugin SO --top SRCDIR --work DIR [--rounds N] [--riscv64-prefix DIR]"""
import argparse
import os
import statistics
import subprocess

CC = os.environ.get("RISCV64_CC", "riscv64-linux-gnu-gcc")
QEMU = os.environ.get("QEMU_RISCV64", "qemu-riscv64")


def cpu_time(cmd):
    """User + system CPU seconds of one child, from its rusage."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench_exec: {' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--plugin", required=True)
    p.add_argument("--top", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--riscv64-prefix", help="the riscv64 prefix: also time rvemu-run --exec")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print(f"bench_exec: host CPU time of qemu-riscv64 with the exec-count plugin / without, median of {a.rounds} "
          "alternating rounds (goal <= 3x, not asserted)")
    for prog, scale in (("gemm", "40"), ("chase", "16")):
        binary = os.path.join(a.work, prog)
        subprocess.run([CC, "-O2", "-static", "-o", binary, os.path.join(a.top, "tests", "exec", prog + ".c")],
                       check=True)
        plain, plugged = [], []
        for _ in range(a.rounds):
            plain.append(cpu_time([QEMU, binary, scale]))
            plugged.append(cpu_time([QEMU, "-plugin", a.plugin, binary, scale]))
        ratios = [b / max(p, 1e-6) for p, b in zip(plain, plugged)]
        print(f"bench_exec: {prog:5s} plain {statistics.median(plain):.3f} s, with plugin "
              f"{statistics.median(plugged):.3f} s: {statistics.median(ratios):.1f}x slower")
        if a.riscv64_prefix:
            rvemu_exec(a, prog, scale)


def rvemu_exec(a, prog, scale):
    """rvemu-run --exec PROG (the plugin, the riscv64 emulator preloaded, RVEMU_COUNT_SOURCE=exec) against plain
    qemu-riscv64 on the same dynamic binary."""
    if not os.path.exists(os.path.join(a.riscv64_prefix, "lib", "librvemu.so")):
        print(f"bench_exec: {prog:5s} no riscv64 emulator in {a.riscv64_prefix}: rvemu-run --exec not timed")
        return
    binary = os.path.join(a.work, prog + "-dynamic")
    subprocess.run([CC, "-O2", "-o", binary, os.path.join(a.top, "tests", "exec", prog + ".c")], check=True)
    sysroot = os.environ.get("RISCV64_SYSROOT", "/usr/riscv64-linux-gnu")
    os.environ["RVEXEC_PLUGIN"] = a.plugin
    os.environ.setdefault("QEMU_LD_PREFIX", sysroot)
    plain, full = [], []
    for _ in range(a.rounds):
        plain.append(cpu_time([QEMU, "-L", sysroot, binary, scale]))
        full.append(cpu_time(["sh", os.path.join(a.riscv64_prefix, "bin", "rvemu-run"), "--exec", "--", binary, scale]))
    ratios = [b / max(p, 1e-6) for p, b in zip(plain, full)]
    print(f"bench_exec: {prog:5s} plain {statistics.median(plain):.3f} s, rvemu-run --exec "
          f"{statistics.median(full):.3f} s: {statistics.median(ratios):.1f}x slower")


if __name__ == "__main__":
    main()
