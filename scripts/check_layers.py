#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The emulator's layer rule, checked from its compiled objects (docs/emulator-core.md):

    machine (mach_*, bank_*, rvemu_tables)  <-  perf core (perf_*)  <-  front ends (fe_*)

An object may use (nm: undefined symbol) only what objects of its own layer or a lower one define, and the
"uses" graph between objects must have no cycle (within a layer too). Every emulator object must belong to
a layer. Usage: check_layers.py OBJECT... (exit 1 and one line per violation)."""
import os
import subprocess
import sys

LAYERS = [("machine", ("mach_", "bank_", "rvemu_tables")), ("perf core", ("perf_",)), ("front end", ("fe_",))]


def layer_of(obj):
    base = os.path.basename(obj)
    for i, (_, prefixes) in enumerate(LAYERS):
        if base.startswith(prefixes):
            return i
    return None


def symbols(obj):
    out = subprocess.run(["nm", obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWtdbr" and parts[1].isupper():
            defined.add(parts[2])
    return defined, used


def main(objs):
    errors = []
    owner, uses = {}, {}
    for o in objs:
        if layer_of(o) is None:
            errors.append(f"{os.path.basename(o)}: not in any layer (name it mach_*, bank_*, perf_* or fe_*)")
            continue
        d, u = symbols(o)
        uses[o] = u
        for s in d:
            owner[s] = o
    graph = {o: set() for o in uses}
    for o, u in uses.items():
        for s in sorted(u):
            d = owner.get(s)
            if d is None or d == o:
                continue
            graph[o].add(d)
            if layer_of(d) > layer_of(o):
                errors.append(f"{os.path.basename(o)} ({LAYERS[layer_of(o)][0]}) uses {s} of "
                              f"{os.path.basename(d)} ({LAYERS[layer_of(d)][0]}): a lower layer calls a higher one")
    # cycles: depth-first search
    state, stack = {}, []

    def visit(o):
        state[o] = 1
        stack.append(o)
        for d in sorted(graph[o]):
            if state.get(d) == 1:
                cyc = stack[stack.index(d):] + [d]
                errors.append("cycle: " + " -> ".join(os.path.basename(x) for x in cyc))
            elif d not in state:
                visit(d)
        stack.pop()
        state[o] = 2

    for o in sorted(graph):
        if o not in state:
            visit(o)
    for e in errors:
        print("layers: " + e)
    if not errors:
        print(f"layers: {len(uses)} emulator objects, no upward use, no cycle")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
