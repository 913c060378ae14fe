#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libpfm4's pfm_pmu_t ids are ABI (programs store them): a core PMU keeps its id for ever, and an id once given is
# never given to another PMU, even after its PMU is gone. The id of each core PMU is PFM_PMU_RISCV_CORE_FIRST +
# pfm_id (events/models.csv). This test compares the tables of the working tree with every committed version of
# them: the pfm_id column where a version has it, else the generated list that version committed
# (libpfm4-riscv/lib/events/riscv_cores.h, M(id, ID, n)). It also checks pfm_id values are unique in the tables.
# Without git history (a release tarball) there is nothing to compare with: it says so and is skipped (77).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
srcdir=${srcdir:-$top/tests}
root=$(cd "$srcdir/.." && pwd)
if ! git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	echo "SKIP: $root is not a git checkout with history; pfm_id stability needs the committed versions"
	exit 77
fi
python3 - "$root" "${RVPAPI_MODELS_CSV:-$root/events/models.csv}" <<'PY'
import csv, io, re, subprocess, sys

root, current = sys.argv[1], sys.argv[2]


def git(*args):
    return subprocess.run(["git", "-C", root] + list(args), capture_output=True, text=True)


def ids_from_models(text, where):
    """core_pmu -> pfm_id of one models.csv text (None when it has no pfm_id column)"""
    rows = list(csv.DictReader(l for l in io.StringIO(text) if l.strip() and not l.startswith("#")))
    if not rows or "pfm_id" not in rows[0]:
        return None
    ids, owner = {}, {}
    for r in rows:
        pmu, pid = r["core_pmu"], r["pfm_id"]
        if pmu == "riscv_generic" or not pid:
            continue
        if pmu in ids and ids[pmu] != int(pid):
            sys.exit(f"FAIL {where}: {pmu} has pfm_id {ids[pmu]} and {pid}")
        if int(pid) in owner and owner[int(pid)] != pmu:
            sys.exit(f"FAIL {where}: pfm_id {pid} is both {owner[int(pid)]}'s and {pmu}'s")
        ids[pmu], owner[int(pid)] = int(pid), pmu
    return ids


def ids_from_cores_h(text):
    return {f"riscv_{m.group(1)}": int(m.group(2)) for m in re.finditer(r"M\(([a-z0-9_]+), [A-Z0-9_]+, ([0-9]+)\)", text)}


history = []  # (commit, {pmu: id}), oldest first
log = git("log", "--reverse", "--format=%H", "--", "events/models.csv", "libpfm4-riscv/lib/events/riscv_cores.h")
for c in log.stdout.split():
    m = git("show", f"{c}:events/models.csv")
    ids = ids_from_models(m.stdout, f"{c[:12]}:events/models.csv") if m.returncode == 0 else None
    if ids is None:
        h = git("show", f"{c}:libpfm4-riscv/lib/events/riscv_cores.h")
        ids = ids_from_cores_h(h.stdout) if h.returncode == 0 else None
    if ids:
        history.append((c, ids))
if not history:
    sys.exit("FAIL: no committed version of the core PMU ids found in the git history")
now = ids_from_models(open(current).read(), current)
if now is None:
    sys.exit(f"FAIL {current}: no pfm_id column")
given, owner = {}, {}  # the first id each PMU got, and the first PMU each id went to, over the whole history
for c, ids in history + [("working tree", now)]:
    for pmu, pid in sorted(ids.items()):
        if given.setdefault(pmu, (pid, c))[0] != pid:
            sys.exit(f"FAIL {c[:12]}: {pmu} has id {pid}, but {given[pmu][0]} since {given[pmu][1][:12]} (ids are ABI)")
        if owner.setdefault(pid, (pmu, c))[0] != pmu:
            sys.exit(f"FAIL {c[:12]}: id {pid} goes to {pmu}, but was {owner[pid][0]}'s since {owner[pid][1][:12]} "
                     f"(an id is never reused)")
print(f"ok   {len(now)} core PMU ids of {current} agree with {len(history)} committed versions "
      f"({len(given)} PMUs ever given an id)")
PY
