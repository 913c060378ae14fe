#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Slowdown of qemu-riscv64 with the exec-count plugin (plugin/librvexec.so) against plain qemu-riscv64 on the same
program: host CPU time (user + system of the qemu process, from its rusage) with the plugin over without. Printed,
never asserted (the goal is <= 3x; docs/exec-counts.md, "Speed").
With --riscv64-prefix (the riscv64 build, scripts/cross-build.sh), also the whole `rvemu-run --exec` (the plugin
plus the riscv64 emulator preloaded in the guest with its exec count source) over plain qemu-riscv64, both on the
same dynamically linked program (LD_PRELOAD needs one).

How, and why so: the two runs of a round follow each other (which goes first alternates from round to round) and
each round gives its own ratio; the bench prints the median of those ratios with their range, and each side's
median CPU time with its range. The pointer chase's plain time is not a property of qemu alone: its 8 MiB of
nodes fit in the host's last-level cache only while nothing else streams through it, and another process's
memory traffic makes every hop a DRAM access, so plain qemu's chase takes 6x longer (0.04 s -> 0.25-0.30 s
measured) while the plugin's run grows by about the same seconds, not the same factor. A ratio from such a round
says little about the plugin (1.3x instead of about 3x), so when plain qemu's rounds differ by more than 1.5x the
bench says so, and the ratio of the quietest rounds (the lowest CPU time of each side) is printed beside it.
Usage: bench_exec.py --plugin SO --top SRCDIR --work DIR [--rounds N] [--riscv64-prefix DIR]"""
import argparse
import os
import statistics
import subprocess

CC = os.environ.get("RISCV64_CC", "riscv64-linux-gnu-gcc")
QEMU = os.environ.get("QEMU_RISCV64", "qemu-riscv64")
CONTENDED = 1.5  # plain qemu's slowest round over its fastest beyond which the host's load shows


def cpu_time(cmd):
    """User + system CPU seconds of one child (and the children it waited for), from its rusage."""
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


def compare(rounds, *cmds):
    """CPU seconds of each command, `rounds` rounds, the commands back to back in each round, the order rotating
    from round to round (each command goes first in turn); a list per command."""
    times = [[] for _ in cmds]
    for r in range(rounds):
        for k in range(len(cmds)):
            i = (k + r) % len(cmds)
            times[i].append(cpu_time(cmds[i]))
    return times


def report(prog, what, plain, other):
    ratios = [b / max(p, 1e-6) for p, b in zip(plain, other)]
    line = (f"bench_exec: {prog:5s} plain {statistics.median(plain):.3f} s ({min(plain):.3f}-{max(plain):.3f}), "
            f"{what} {statistics.median(other):.3f} s ({min(other):.3f}-{max(other):.3f}): "
            f"{statistics.median(ratios):.1f}x slower (rounds {min(ratios):.1f}-{max(ratios):.1f}x)")
    if max(plain) > CONTENDED * min(plain):
        line += (f"; plain varied {max(plain) / min(plain):.1f}x (host memory contention), "
                 f"quietest rounds {min(other) / min(plain):.1f}x")
    print(line)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--plugin", required=True)
    p.add_argument("--top", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--riscv64-prefix", help="the riscv64 prefix: also time rvemu-run --exec")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print(f"bench_exec: host CPU time of qemu-riscv64 with the exec-count plugin / without, {a.rounds} rounds "
          "back to back: median (range) of each side and of the rounds' ratios (goal <= 3x, not asserted)")
    for prog, scale in (("gemm", "40"), ("chase", "16")):
        binary = os.path.join(a.work, prog)
        subprocess.run([CC, "-O2", "-static", "-o", binary, os.path.join(a.top, "tests", "exec", prog + ".c")],
                       check=True)
        plain, plugged = compare(a.rounds, [QEMU, binary, scale], [QEMU, "-plugin", a.plugin, binary, scale])
        report(prog, "with plugin", plain, plugged)
        if a.riscv64_prefix:
            rvemu_exec(a, prog, scale)
    if a.riscv64_prefix:
        startup(a)


def startup(a):
    """The fixed cost: an empty main() (dynamic) under plain qemu, with the plugin and under rvemu-run --exec,
    the three in each round. rvemu-run's extra over the plugin alone is its sh wrapper (a few ms), the
    emulator's load and initialisation in the guest, and QEMU translating that code with the plugin's per-block
    instrumentation, paid once per run, so it weighs on short runs such as the two above."""
    if not os.path.exists(os.path.join(a.riscv64_prefix, "lib", "librvemu.so")):
        return
    src = os.path.join(a.work, "empty.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    binary = os.path.join(a.work, "empty-dynamic")
    subprocess.run([CC, "-O2", "-o", binary, src], check=True)
    sysroot = os.environ.get("RISCV64_SYSROOT", "/usr/riscv64-linux-gnu")
    os.environ["RVEXEC_PLUGIN"] = a.plugin
    os.environ.setdefault("QEMU_LD_PREFIX", sysroot)
    plain, plugged, full = compare(a.rounds, [QEMU, "-L", sysroot, binary],
                                   [QEMU, "-L", sysroot, "-plugin", a.plugin, binary],
                                   ["sh", os.path.join(a.riscv64_prefix, "bin", "rvemu-run"), "--exec", "--", binary])
    med = [statistics.median(t) for t in (plain, plugged, full)]
    print(f"bench_exec: start-up (an empty main, dynamic) plain {med[0]:.3f} s, with plugin {med[1]:.3f} s, "
          f"rvemu-run --exec {med[2]:.3f} s (+{med[2] - med[1]:.3f} s per run over the plugin alone, "
          f"+{med[2] - med[0]:.3f} s over plain)")


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
    plain, full = compare(a.rounds, [QEMU, "-L", sysroot, binary, scale],
                          ["sh", os.path.join(a.riscv64_prefix, "bin", "rvemu-run"), "--exec", "--", binary, scale])
    report(prog, "rvemu-run --exec", plain, full)


if __name__ == "__main__":
    main()
