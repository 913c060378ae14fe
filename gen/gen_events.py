#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate every event list of the project from the tables in events/.

The CSV files in events/ are the one source of truth. This script turns them into
  --libpfm DIR   libpfm4 event headers (riscv_<model>_events.h, riscv_isa_bases.h) in libpfm4's format,
                 (riscv_cores.h lists the core models); never committed: builds generate them
  --papi-ids FILE  PAPI's RISC-V identification rules (riscv_cpuinfo_ids.h, written into PAPI's tree by
                 papi-component/apply.sh)
  --tests DIR    riscv_known_machines.h (the machines of models.csv, for the detection tests)
  --emulator DIR emulator tables (rvemu_tables.h / rvemu_tables.c)
  --docs FILE    the event reference (Markdown)
  --check        only validate the tables and events/presets.csv (exit 1 with a message naming file and line)
  --models       list the machines (model core_pmu bank_pmu overflow_irq pes prog_counters isa): every script and
                 test that loops over models reads this, never a list of its own
  --core-pmus    list the core PMUs that have an event table

Only the Python standard library is used, so the build needs nothing beyond python3.
"""
import argparse
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EVENTS = os.path.join(os.path.dirname(HERE), "events")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PPB = 1000000000  # rates are stored as events per billion cycles: exact integer arithmetic everywhere


class TableError(Exception):
    pass


def read_table(name, required):
    """Read events/<name>, skipping '#' comment lines; every row is a dict with its line number."""
    path = os.path.join(EVENTS, name)
    rows = []
    with open(path, newline="") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if line.strip() and not line.startswith("#")]
    reader = csv.reader(line for _, line in lines)
    header = None
    for (lineno, _), fields in zip(lines, reader):
        if header is None:
            header = fields
            missing = [c for c in required if c not in header]
            if missing:
                raise TableError(f"{path}:{lineno}: missing columns {missing}")
            continue
        if len(fields) != len(header):
            raise TableError(f"{path}:{lineno}: {len(fields)} fields, header has {len(header)}")
        row = dict(zip(header, fields))
        row["_where"] = f"{path}:{lineno}"
        rows.append(row)
    if not rows:
        raise TableError(f"{path}: no rows")
    return rows

CACHE_RE = re.compile(r"^[1-3]:(Instruction|Data|Unified):[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*(:shared)?$")


def as_int(row, col):
    try:
        return int(row[col], 0)
    except ValueError:
        raise TableError(f"{row['_where']}: column {col}: '{row[col]}' is not an integer") from None


def check_names(rows, where):
    seen = {}
    for r in rows:
        for col in ("name", "alias"):
            n = r.get(col, "")
            if not n or (col == "alias" and n == r["name"]):  # an alias equal to the name adds nothing
                continue
            if not NAME_RE.match(n):
                raise TableError(f"{r['_where']}: bad event name '{n}'")
            if n.upper() in seen:
                raise TableError(f"{r['_where']}: '{n}' already defined at {seen[n.upper()]} ({where})")
            seen[n.upper()] = r["_where"]


MODEL_COLUMNS = ["model", "description", "core_pmu", "bank_pmu", "uarch", "mvendorid", "marchid", "mimpid", "isa", "mmu",
                 "prog_counters", "prog_width", "freq_mhz", "overflow_irq", "event_encoding", "first_hart", "caches",
                 "pes", "event_table", "profile", "cpuinfo_fixture", "pfm_id"]
FIXTURES = os.path.join(os.path.dirname(HERE), "tests", "pfm", "cpuinfo")
# overflow_irq of models.csv: how the core signals a counter overflow to Linux (riscv_pmu_sbi)
OVERFLOW_IRQ = ("sscofpmf", "andes", "thead", "no")
# the counter banks: code (a bank is read by the riscv_hpc component), each with its own table and profile reader
BANK_PMUS = ("riscv_lowrisc_hpc", "riscv_ucb_boom")
TABLE_COLUMNS = {"class_mask": ["class", "class_name", "bit", "mhpmevent_value", "name", "description", "alias"],
                 "value": ["mhpmevent_value", "name", "description", "alias"]}


def load_core_table(fname, encoding, where):
    """events/<fname>: the programmable events of one core PMU, in the format its event_encoding names."""
    if not fname or "/" in fname or not fname.endswith(".csv"):
        raise TableError(f"{where}: event_table '{fname}' is not a file name in events/ ending in .csv")
    if not os.path.exists(os.path.join(EVENTS, fname)):
        raise TableError(f"{where}: event_table {os.path.join(EVENTS, fname)} does not exist")
    rows = read_table(fname, TABLE_COLUMNS[encoding])
    values = {}
    classes = {}
    for r in rows:
        v = as_int(r, "mhpmevent_value")
        if encoding == "class_mask":
            cls, bit = as_int(r, "class"), as_int(r, "bit")
            if not 8 <= bit <= 55:
                raise TableError(f"{r['_where']}: mask bit {bit} outside mhpmevent[55:8]")
            if v != (cls | (1 << bit)):
                raise TableError(f"{r['_where']}: mhpmevent_value {v:#x} != class | 1 << bit ({cls | 1 << bit:#x})")
            classes.setdefault(r["class_name"], cls)
            if classes[r["class_name"]] != cls:
                raise TableError(f"{r['_where']}: class {r['class_name']} has two numbers")
        elif v == 0:
            raise TableError(f"{r['_where']}: event number 0 means no event")
        if v >= 1 << 48:
            raise TableError(f"{r['_where']}: {v:#x} does not fit the 48 bits Linux takes from config")
        if v in values:
            raise TableError(f"{r['_where']}: encoding {v:#x} repeats {values[v]}")
        values[v] = r["_where"]
    return rows, classes


def load():
    t = {}
    t["generic"] = read_table("riscv_generic.csv", ["name", "perf_hw_event", "csr", "description", "alias"])
    hpc = read_table("lowrisc_hpc.csv", ["manager_kind", "hpcm_bit", "name", "paper_name", "description"])
    for r in hpc:
        if r["manager_kind"] not in ("core", "l2_slice"):
            raise TableError(f"{r['_where']}: manager_kind must be core or l2_slice")
        if not 0 <= as_int(r, "hpcm_bit") < 64:
            raise TableError(f"{r['_where']}: hpcm_bit outside 0..63")
    t["hpc"] = hpc
    boom = read_table("ucb_boom.csv", ["index", "name", "description"])
    for i, r in enumerate(boom):
        if as_int(r, "index") != i:
            raise TableError(f"{r['_where']}: index {r['index']} out of order (expected {i})")
    t["boom"] = boom
    t["models"] = read_table("models.csv", MODEL_COLUMNS)
    cores = {}  # core PMU -> its table and limits, in models.csv order
    seen_models = {}
    for m in t["models"]:
        w = m["_where"]
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", m["model"]):
            raise TableError(f"{w}: model name '{m['model']}' is not lower-case letters, digits and '-'")
        if m["model"] in seen_models:
            raise TableError(f"{w}: model {m['model']} already defined at {seen_models[m['model']]}")
        seen_models[m["model"]] = w
        if m["pes"] not in ("yes", "option", "no"):
            raise TableError(f"{w}: pes '{m['pes']}' is not yes, option or no")
        if m["event_encoding"] not in TABLE_COLUMNS:
            raise TableError(f"{w}: event_encoding '{m['event_encoding']}' is not class_mask or value")
        if m["overflow_irq"] not in OVERFLOW_IRQ:
            raise TableError(f"{w}: overflow_irq '{m['overflow_irq']}' is not one of {', '.join(OVERFLOW_IRQ)}")
        if isa_has_ext(m["isa"], "sscofpmf") and m["overflow_irq"] != "sscofpmf":
            raise TableError(f"{w}: the isa names sscofpmf, so overflow_irq must be sscofpmf")
        if m["overflow_irq"] == "andes" and not isa_has_ext(m["isa"], "xandespmu"):
            raise TableError(f"{w}: overflow_irq andes needs xandespmu in the isa (Linux enables it from there)")
        for col in ("prog_counters", "prog_width", "freq_mhz", "first_hart"):
            as_int(m, col)
        if not 0 <= as_int(m, "prog_counters") <= 29 or not 1 <= as_int(m, "prog_width") <= 64:
            raise TableError(f"{w}: prog_counters must be 0..29 (mhpmcounter3..31), prog_width 1..64")
        if as_int(m, "freq_mhz") <= 0:
            raise TableError(f"{w}: freq_mhz must be positive")
        for leaf in filter(None, m["caches"].split(";")):
            if not CACHE_RE.match(leaf):
                raise TableError(f"{w}: cache leaf '{leaf}' is not level:type:size_kib:ways:line[:shared]")
        if m["bank_pmu"] and m["bank_pmu"] not in BANK_PMUS:
            raise TableError(f"{w}: bank_pmu '{m['bank_pmu']}' is not one of {', '.join(BANK_PMUS)}")
        fx = m["cpuinfo_fixture"]
        if "/" in fx or not fx.endswith(".txt") or not os.path.exists(os.path.join(FIXTURES, fx)):
            raise TableError(f"{w}: cpuinfo_fixture '{fx}' is not a file of {FIXTURES} (the board's /proc/cpuinfo "
                             f"as Linux prints it)")
        if not m["profile"]:
            raise TableError(f"{w}: model {m['model']} has no profile (events/profiles/<file>): "
                             f"every emulated event needs a rate")
        pmu = m["core_pmu"]
        if not re.match(r"^riscv_[a-z0-9_]+$", pmu):
            raise TableError(f"{w}: core_pmu '{pmu}' is not riscv_<lower-case name>")
        if pmu == "riscv_generic":
            if m["event_table"]:
                raise TableError(f"{w}: riscv_generic has the fixed counters only; event_table must be empty")
            if m["pfm_id"]:
                raise TableError(f"{w}: riscv_generic has libpfm4's fixed id PFM_PMU_RISCV_GENERIC; pfm_id must be empty")
            continue
        if pmu in BANK_PMUS:
            raise TableError(f"{w}: {pmu} is a counter bank, not a core PMU")
        if not m["event_table"]:
            raise TableError(f"{w}: core_pmu {pmu} needs an event_table (events/<file>.csv)")
        if not re.match(r"^(0|[1-9][0-9]*)$", m["pfm_id"]) or int(m["pfm_id"]) >= RISCV_MAX_CORE_PMUS:
            raise TableError(f"{w}: pfm_id '{m['pfm_id']}' is not a number 0..{RISCV_MAX_CORE_PMUS - 1} (the core PMU's "
                             f"libpfm4 id is PFM_PMU_RISCV_CORE_FIRST + pfm_id)")
        if pmu in cores:
            c = cores[pmu]
            for col in ("event_table", "event_encoding", "prog_counters", "overflow_irq", "pes", "pfm_id"):
                if c["model"][col] != m[col]:
                    raise TableError(f"{w}: {pmu} has {col} '{m[col]}' here, '{c['model'][col]}' at "
                                     f"{c['model']['_where']}")
            continue
        other = next((c for c in cores.values() if c["model"]["pfm_id"] == m["pfm_id"]), None)
        if other:
            raise TableError(f"{w}: pfm_id {m['pfm_id']} is already {other['pmu']}'s ({other['model']['_where']}): "
                             f"an id is a libpfm4 ABI value, never shared or reused; take an unused one")
        rows, classes = load_core_table(m["event_table"], m["event_encoding"], w)
        check_names(t["generic"] + rows, pmu)
        flat = {r["name"].upper() for r in t["generic"] + rows} | \
            {r["alias"].upper() for r in t["generic"] + rows if r["alias"]}
        for c in classes:
            if c.upper() in flat:
                raise TableError(f"{os.path.join(EVENTS, m['event_table'])}: class name {c} collides with an event name")
        cores[pmu] = {"pmu": pmu, "model": m, "rows": rows, "classes": classes, "table": m["event_table"]}
    t["cores"] = cores
    check_names(t["boom"], "riscv_ucb_boom")
    t["profiles"] = load_profiles(t)
    t["ids"] = load_ids(t)
    for pmu, c in cores.items():
        c["desc"] = next((r["core"] for r in t["ids"]["rows"] if r["pmu"] == pmu and r["core"]), "")
        if not c["desc"]:
            raise TableError(f"{os.path.join(EVENTS, 'cpu_ids.csv')}: no row names the core of {pmu} (core column)")
    return t


RISCV_MAX_CORE_PMUS = 64  # PFM_PMU_RISCV_CORE_FIRST + 0..63 in libpfm4's pfm_pmu_t (patch 0004): pfm_id's range


def simple_profile(fname, names, cycles_name):
    rows = read_table(os.path.join("profiles", fname), ["event", "count", "source"])
    counts = {}
    for r in rows:
        if r["event"] not in names and r["event"] != cycles_name:
            raise TableError(f"{r['_where']}: unknown event {r['event']}")
        if r["event"] in counts:
            raise TableError(f"{r['_where']}: {r['event']} repeated")
        counts[r["event"]] = as_int(r, "count")
    cycles = counts.get(cycles_name)
    if not cycles:
        raise TableError(f"{os.path.join(EVENTS, 'profiles', fname)}: needs a {cycles_name} row")
    missing = [n for n in names if n not in counts]
    if missing:
        raise TableError(f"{os.path.join(EVENTS, 'profiles', fname)}: no count for {missing}")
    return {n: (counts[n] * PPB + cycles // 2) // cycles for n in names}


def load_profiles(t):
    """Per model: the rates of every event the emulated machine counts, from events/profiles/<profile>.
    A core model's profile names each event of its table plus INSTRUCTIONS; a counter bank's is read by the
    bank's own reader. A missing rate is an error naming the file; nothing is defaulted."""
    p = {"models": {}}
    gen = [r["name"] for r in t["generic"]]
    for m in t["models"]:
        fname = m["profile"]
        if "/" in fname or not fname.endswith(".csv") or not os.path.exists(os.path.join(EVENTS, "profiles", fname)):
            raise TableError(f"{m['_where']}: profile '{fname}' is not a file of {os.path.join(EVENTS, 'profiles')}")
        if m["bank_pmu"] == "riscv_lowrisc_hpc":
            spec = hpc_profile(t, fname)
            p["lowrisc-hpc"] = spec
            p["models"][m["model"]] = {gen[1]: spec["gcc"]["instret"]}  # the machine runs gcc's mix
        elif m["bank_pmu"] == "riscv_ucb_boom":
            boom = simple_profile(fname, [r["name"] for r in t["boom"]][1:], "cycles")
            boom["cycles"] = PPB
            p["boom"] = boom
            p["models"][m["model"]] = {gen[1]: boom["insts"]}
        else:
            names = [r["name"] for r in t["cores"][m["core_pmu"]]["rows"]] if m["event_table"] else []
            p["models"][m["model"]] = simple_profile(fname, names + gen[1:], gen[0])
    for bank in BANK_PMUS:
        key = {"riscv_lowrisc_hpc": "lowrisc-hpc", "riscv_ucb_boom": "boom"}[bank]
        if key not in p:
            raise TableError(f"{os.path.join(EVENTS, 'models.csv')}: no machine has bank_pmu {bank} "
                             f"(its profile feeds the emulator's bank)")
    return p


def hpc_profile(t, fname):
    rows = read_table(os.path.join("profiles", fname), ["event"])
    bench = [c for c in rows[0].keys() if c not in ("event", "_where")]
    table = {r["event"]: {b: float(r[b]) for b in bench} for r in rows}
    if "gcc" not in bench:
        raise TableError(f"{os.path.join(EVENTS, 'profiles', fname)}: needs a gcc column (the machine's default mix)")
    spec = {}
    for b in bench:
        cyc = table["cycle"][b]

        def rate(ev):
            if ev not in table:
                raise TableError(f"{os.path.join(EVENTS, 'profiles', fname)}: no row {ev}")
            return int(round(table[ev][b] * PPB / cyc))

        core = {r["name"]: rate("L1" + r["paper_name"][0] + r["paper_name"][1:]) for r in t["hpc"]
                if r["manager_kind"] == "core"}
        l2 = {r["name"]: rate("L2." + r["paper_name"]) for r in t["hpc"] if r["manager_kind"] == "l2_slice"}
        spec[b] = {"instret": rate("instret"), "core": core, "l2": l2}
    return spec


# ----------------------------------------------------------------------------------------------- output helpers

def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def banner(what):
    return (f"/* {what}\n * GENERATED by gen/gen_events.py from the CSV tables in events/ -- do not edit; edit the tables. */\n")


def write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:  # keep timestamps stable so make does not rebuild needlessly
        with open(path, "w") as f:
            f.write(text)


# ------------------------------------------------------------------------------------ libpfm4 event headers
# Written in libpfm4's own format (as lib/events/arm_cortex_a53_events.h): a comment citing the source of the
# table, then one field per line. Generated at build time (libpfm4-riscv/apply.sh copies them into the tree).

def source_comment(*tables):
    """The leading '#' comment lines of events/<table> (they cite where the table comes from)."""
    out = []
    for name in tables:
        with open(os.path.join(EVENTS, name)) as f:
            for line in f:
                if not line.startswith("#"):
                    break
                text = line[1:].strip()
                # the table's own licence line: the header carries one, at its top
                if text and not text.startswith("SPDX-License-Identifier:"):
                    out.append(text)
    return out


def copyright_line():
    """The project's copyright line (LICENSE's), which the generated libpfm4 headers carry as libpfm4's own
    tables carry theirs."""
    with open(os.path.join(os.path.dirname(EVENTS), "LICENSE")) as f:
        for line in f:
            if line.startswith("Copyright"):
                return line.strip()
    raise SystemExit("gen_events: LICENSE has no Copyright line")


def libpfm_banner(title, tables, extra=()):
    lines = ["/* SPDX-License-Identifier: MIT */", "/*", f" * {title}", " *", f" * {copyright_line()}", " *"]
    cite = source_comment(*[n for n in tables if n not in ("cpu_ids.csv", "models.csv")])
    lines += [f" * {c}" for c in cite] + ([" *"] if cite else [])
    lines += [f" * {e}" for e in extra] + ([" *"] if extra else [])
    lines.append(f" * Generated by gen/gen_events.py from events/{', events/'.join(tables)}:")
    lines.append(" * edit those tables, not this file.")
    lines.append(" */")
    return lines


def c_entry(fields):
    """One table entry, libpfm4 style: {.a = x,\\n\\t .b = y\\n\\t},"""
    out = []
    for i, (k, v) in enumerate(fields):
        lead = "\t{" if i == 0 else "\t "
        out.append(f"{lead}.{k} = {v}" + ("," if i < len(fields) - 1 else ""))
    out.append("\t},")
    return out


def c_u64(v):
    return f"{v:#x}ULL" if v > 0x7fffffff else f"{v:#x}"


def fixed_entries(t):
    out = []
    for r in t["generic"]:
        out += c_entry([("name", c_str(r["name"])), ("desc", c_str(r["description"])),
                        ("code", f"RISCV_FIXED_CODE({as_int(r, 'csr'):#x})"), ("kind", "RISCV_EV_FIXED"),
                        ("perf_hw", r["perf_hw_event"])])
    for r in t["generic"]:
        if r["alias"]:
            out += c_entry([("name", c_str(r["alias"])), ("desc", c_str(r["description"] + " (alias)")),
                            ("equiv", c_str(r["name"])), ("code", f"RISCV_FIXED_CODE({as_int(r, 'csr'):#x})"),
                            ("kind", "RISCV_EV_FIXED"), ("perf_hw", r["perf_hw_event"])])
    return out


def raw_entries(rows):
    """Programmable events (PERF_TYPE_RAW, code = mhpmevent), then the fork's aliases of them (.equiv)."""
    out = []
    for r in rows:
        out += c_entry([("name", c_str(r["name"])), ("desc", c_str(r["description"])),
                        ("code", f"{as_int(r, 'mhpmevent_value'):#x}"), ("kind", "RISCV_EV_RAW")])
    for r in rows:
        if r["alias"] and r["alias"] != r["name"]:
            out += c_entry([("name", c_str(r["alias"])), ("desc", c_str(r["description"] + " (alias)")),
                            ("equiv", c_str(r["name"])), ("code", f"{as_int(r, 'mhpmevent_value'):#x}"),
                            ("kind", "RISCV_EV_RAW")])
    return out


def load_ids(t):
    """events/cpu_ids.csv, checked, as {'isa_base': [...], 'rows': [...]} with parsed ids."""
    rows = read_table("cpu_ids.csv", ["pmu", "match", "value", "core"])
    pmus = {m["core_pmu"] for m in t["models"]} | {m["bank_pmu"] for m in t["models"] if m["bank_pmu"]}
    bases, out = [], []
    for r in rows:
        kind, value = r["match"], r["value"]
        if not value or value != value.strip() or '"' in value or "\\" in value:
            raise TableError(f"{r['_where']}: bad value '{value}'")
        if kind == "isa_base":
            if r["pmu"] or not re.match(r"^rv[0-9]+$", value):
                raise TableError(f"{r['_where']}: an isa_base row has no pmu and a value rv<XLEN>")
            bases.append(value)
            continue
        if r["pmu"] not in pmus:
            raise TableError(f"{r['_where']}: pmu '{r['pmu']}' is not a core_pmu or bank_pmu of models.csv")
        row = {"pmu": r["pmu"], "match": kind, "str": "", "mvendorid": 0, "marchid": 0, "any_vendor": 0,
               "core": r["core"], "_where": r["_where"]}
        if kind in ("uarch", "isa_ext"):
            row["str"] = value
        elif kind == "perf_id":
            if re.sub(r"\[(\[:[a-z]+:\]|[^]])*\]", "", value).count("-") != 2:  # a '-' in [1-9] is a range
                raise TableError(f"{r['_where']}: perf_id '{value}' is not mvendorid-marchid-mimpid (Linux's mapfile.csv)")
            try:
                re.compile(posix_to_python_re(value))
            except re.error as e:
                raise TableError(f"{r['_where']}: perf_id '{value}' is not a regular expression: {e}") from None
            row["str"] = value
        elif kind == "ids":
            vendor, sep, arch = value.partition(":")
            try:
                row["marchid"] = int(arch, 0)
                if vendor == "*":
                    row["any_vendor"] = 1
                else:
                    row["mvendorid"] = int(vendor, 0)
            except ValueError:
                raise TableError(f"{r['_where']}: ids value '{value}' is not mvendorid:marchid") from None
            if not sep:
                raise TableError(f"{r['_where']}: ids value '{value}' is not mvendorid:marchid")
        else:
            raise TableError(f"{r['_where']}: match must be isa_base, uarch, ids, perf_id or isa_ext")
        if kind == "isa_ext" and not re.match(r"^[a-z][a-z0-9]+$", value, re.I):
            raise TableError(f"{r['_where']}: bad extension name '{value}'")
        out.append(row)
    if not bases:
        raise TableError(f"{os.path.join(EVENTS, 'cpu_ids.csv')}: no isa_base row")
    ids = {"isa_base": bases, "rows": out,
           "core_models": sorted({m["core_pmu"] for m in t["models"]} - {"riscv_generic"})}
    for m in t["models"]:  # the rules must recognise every machine we know as its PMUs
        got = classify(ids, m["isa"], m["uarch"], m["mvendorid"], m["marchid"], m["mimpid"])
        want = {m["core_pmu"]} | ({m["bank_pmu"]} if m["bank_pmu"] else set())
        if got != want:
            raise TableError(f"{m['_where']}: events/cpu_ids.csv recognises machine {m['model']} as "
                             f"{sorted(got)}, models.csv says {sorted(want)}")
    return ids


def isa_has_ext(isa, ext):
    return any(tok.strip().lower() == ext.lower() for tok in isa.split("_")[1:])


def posix_to_python_re(expr):
    """Linux's mapfile.csv patterns are POSIX extended regular expressions; Python's re lacks [[:xdigit:]]."""
    return expr.replace("[:xdigit:]", "0-9a-fA-F").replace("[:digit:]", "0-9")


def perf_cpuid(mvendorid, marchid, mimpid):
    """The string perf matches mapfile.csv against: the three cpuinfo fields as the kernel prints them
    ("0x%lx"), joined by '-'; None when one is missing or not a number."""
    try:
        return "-".join(f"0x{int(v, 0):x}" for v in (mvendorid, marchid, mimpid))  # 0 is 0x0, as the kernel
    except (ValueError, TypeError):
        return None


def classify(ids, isa, uarch, mvendorid, marchid, mimpid=""):
    """The PMUs the rules give a cpuinfo (what libpfm4 detects), for the check against models.csv."""
    if not any(isa.lower().startswith(b) for b in ids["isa_base"]):
        return set()

    def num(s):
        try:
            return int(s, 0)
        except ValueError:
            return None

    found = set()
    for r in ids["rows"]:
        if r["match"] == "uarch":
            hit = uarch.lower().startswith(r["str"].lower())
        elif r["match"] == "isa_ext":
            hit = isa_has_ext(isa, r["str"])
        elif r["match"] == "perf_id":
            cpuid = perf_cpuid(mvendorid, marchid, mimpid)
            hit = cpuid is not None and re.fullmatch(posix_to_python_re(r["str"]), cpuid) is not None
        else:
            hit = num(marchid) == r["marchid"] and (r["any_vendor"] or num(mvendorid) == r["mvendorid"])
        if hit and r["pmu"] != "riscv_generic":
            found.add(r["pmu"])
    if not found & set(ids["core_models"]):
        found.add("riscv_generic")
    return found


def id_entries(rows):
    out = []
    for r in rows:
        if r["match"] == "uarch":
            out += c_entry([("type", "RISCV_ID_UARCH"), ("str", c_str(r["str"]))])
        elif r["match"] == "isa_ext":
            out += c_entry([("type", "RISCV_ID_ISA_EXT"), ("str", c_str(r["str"]))])
        elif r["match"] == "perf_id":
            out += c_entry([("type", "RISCV_ID_PERF"), ("str", c_str(r["str"]))])
        elif r["any_vendor"]:
            out += c_entry([("type", "RISCV_ID_ARCH"), ("any_vendor", "1"), ("marchid", c_u64(r["marchid"]))])
        else:
            out += c_entry([("type", "RISCV_ID_ARCH"), ("mvendorid", c_u64(r["mvendorid"])),
                            ("marchid", c_u64(r["marchid"]))])
    return out


def ids_table(ids, pmu, sym, comment):
    rows = [r for r in ids["rows"] if r["pmu"] == pmu] if pmu else \
        [r for r in ids["rows"] if r["pmu"] in ids["core_models"]]
    return ["", f"/* {comment} */", f"static const riscv_id_t {sym}[]={{"] + id_entries(rows) + ["};"]


def core_events_header(t, core):
    """riscv_<core>_events.h: the core's events (class events with unit masks first for class_mask cores, then
    one event per encoding, then the fixed counters), how it is recognised, and its limits."""
    pmu, m, rows = core["pmu"], core["model"], core["rows"]
    ident = pmu[len("riscv_"):]
    extra = ["Events: one per class (its bits are unit masks, combinable within the class), one per",
             "bit, then the fixed counters mcycle and minstret."] if core["classes"] else \
        ["Events: one per mhpmevent value, then the fixed counters mcycle and minstret."]
    lines = libpfm_banner(f"{core['desc']} ({pmu})", [core["table"], "riscv_generic.csv", "models.csv", "cpu_ids.csv"],
                          extra)
    for cname in core["classes"]:
        lines += ["", f"static const riscv_umask_t {pmu}_{cname.lower()}[]={{"]
        for r in rows:
            if r["class_name"] == cname:
                lines += c_entry([("uname", c_str(r["name"])), ("udesc", c_str(r["description"])),
                                  ("ucode", f"{as_int(r, 'mhpmevent_value') & ~0xff:#x}")])
        lines.append("};")
    lines += ["", f"static const riscv_entry_t {pmu}_pe[]={{"]
    for cname, cls in core["classes"].items():
        n = sum(1 for r in rows if r["class_name"] == cname)
        lines += c_entry([("name", c_str(cname)),
                          ("desc", c_str(f"Event class {cls}: counts any of the selected unit masks (combinable within the class)")),
                          ("code", f"{cls:#x}"), ("kind", "RISCV_EV_CLASS"), ("numasks", str(n)),
                          ("umasks", f"{pmu}_{cname.lower()}")])
    lines += raw_entries(rows) + fixed_entries(t) + ["};"]
    lines += ids_table(t["ids"], pmu, f"{pmu}_ids", "how the core is recognised in /proc/cpuinfo (events/cpu_ids.csv)")
    flags = ["0"]
    if m["pes"] == "yes":
        flags.append("RISCV_PMU_FL_PES")
    if m["overflow_irq"] == "andes":
        flags.append("RISCV_PMU_FL_OVF_ANDES")
    if m["overflow_irq"] == "thead":
        flags.append("RISCV_PMU_FL_OVF_THEAD")
    up = ident.upper()
    lines += ["", f"#define RISCV_{up}_DESC\t{c_str(core['desc'])}",
              f"#define RISCV_{up}_NUM_CNTRS\t{as_int(m, 'prog_counters')}\t/* programmable counters (events/models.csv) */",
              f"#define RISCV_{up}_FLAGS\t({' | '.join(flags[1:]) if len(flags) > 1 else '0'})"
              f"\t/* overflow interrupt {m['overflow_irq']}, PES {m['pes']} */"]
    return ident, lines


def gen_libpfm(t, outdir):
    """libpfm4 headers. Types (riscv_entry_t, riscv_umask_t, riscv_id_t) are in pfmlib_riscv_priv.h. Every core
    model is one header plus one line of riscv_cores.h (the descriptor list pfmlib_riscv_cores.c, pfmlib_priv.h
    and pfmlib_pmus[] expand), so a new model changes no libpfm4 source file and no patch."""
    ids = t["ids"]
    ours = set()

    def emit(name, lines):
        write(os.path.join(outdir, name), "\n".join(lines) + "\n")
        ours.add(name)

    idents = []
    for core in t["cores"].values():
        ident, lines = core_events_header(t, core)
        emit(f"riscv_{ident}_events.h", lines)
        idents.append((ident, int(core["model"]["pfm_id"])))

    lines = libpfm_banner("RISC-V core models: the list every core PMU of libpfm4 is made from",
                          ["models.csv", "cpu_ids.csv"],
                          ["RISCV_CORE_LIST(M) calls M(id, ID, n) for each model: riscv_<id>_support is its",
                           "pfmlib_pmu_t (pfmlib_riscv_cores.c), PFM_PMU_RISCV_CORE_FIRST + n its pfm_pmu_t id.",
                           "n is the model's pfm_id in models.csv: fixed once given (an ABI value programs",
                           "store), so a new model never renumbers another.",
                           "The events headers are included only where RISCV_CORE_EVENTS is defined",
                           "(pfmlib_riscv_cores.c): pfmlib_priv.h needs the list alone."])
    lines += ["", "#ifndef __RISCV_CORES_H__", "#define __RISCV_CORES_H__", "",
              f"#define RISCV_CORE_COUNT\t{len(idents)}", "", "#define RISCV_CORE_LIST(M) \\"]
    lines += [f"\tM({i}, {i.upper()}, {n}) \\" for i, n in idents]
    lines += ["", "#endif /* __RISCV_CORES_H__ */", "", "#ifdef RISCV_CORE_EVENTS"]
    lines += [f'#include "events/riscv_{i}_events.h"' for i, _ in idents]
    lines += ["#endif"]
    emit("riscv_cores.h", lines)

    lines = libpfm_banner("RISC-V generic core (riscv_generic)", ["riscv_generic.csv", "cpu_ids.csv"])
    lines += ["", "static const riscv_entry_t riscv_generic_pe[]={"] + fixed_entries(t) + ["};"]
    lines += ids_table(ids, None, "riscv_generic_not_ids",
                       "cores with a model of their own: riscv_generic steps aside for them (events/cpu_ids.csv)")
    lines += ["", "#define RISCV_GENERIC_NUM_CNTRS\t0\t/* no programmable counter is known */"]
    emit("riscv_generic_events.h", lines)

    lines = libpfm_banner("SonicBOOM extended counter bank (riscv_ucb_boom)", ["ucb_boom.csv", "cpu_ids.csv"],
                          ["code = counter index"])
    lines += ["", "static const riscv_entry_t riscv_ucb_boom_pe[]={"]
    for r in t["boom"]:
        lines += c_entry([("name", c_str(r["name"])), ("desc", c_str(r["description"])),
                          ("code", str(as_int(r, "index"))), ("kind", "RISCV_EV_BANK")])
    lines += ["};"] + ids_table(ids, "riscv_ucb_boom", "riscv_ucb_boom_ids",
                                "how the core is recognised in /proc/cpuinfo (events/cpu_ids.csv)")
    emit("riscv_ucb_boom_events.h", lines)

    lines = libpfm_banner("lowRISC distributed HPC (riscv_lowrisc_hpc)", ["lowrisc_hpc.csv", "cpu_ids.csv"],
                          ["code = hpcm bit; the hart= or slice= modifier picks the HPCManager"])
    lines += ["", "static const riscv_entry_t riscv_lowrisc_hpc_pe[]={"]
    for r in t["hpc"]:
        kind = "RISCV_HPC_CORE" if r["manager_kind"] == "core" else "RISCV_HPC_L2_SLICE"
        lines += c_entry([("name", c_str(r["name"])),
                          ("desc", c_str(r["description"] + " (paper: " + r["paper_name"] + ")")),
                          ("code", str(as_int(r, "hpcm_bit"))), ("kind", "RISCV_EV_BANK"), ("manager", kind)])
    lines += ["};"] + ids_table(ids, "riscv_lowrisc_hpc", "riscv_lowrisc_hpc_ids",
                                "how the core is recognised in /proc/cpuinfo (events/cpu_ids.csv)")
    emit("riscv_lowrisc_hpc_events.h", lines)

    lines = libpfm_banner("RISC-V base ISAs: a cpuinfo whose isa line starts with one of these is RISC-V",
                          ["cpu_ids.csv"])
    lines += ["", "static const char * const riscv_isa_bases[]={"]
    lines += [f"\t{c_str(b)}," for b in ids["isa_base"]] + ["};"]
    emit("riscv_isa_bases.h", lines)

    # the folder holds exactly the libpfm4 headers (a model removed from the tables takes its header along)
    for name in os.listdir(outdir):
        if name.startswith("riscv_") and name.endswith(".h") and name not in ours:
            os.remove(os.path.join(outdir, name))


def gen_known_machines(t, outdir):
    lines = [banner("Machines known to the RISC-V port (events/models.csv), for detection tests"),
             "static const struct riscv_known_machine { const char *model, *core_pmu, *bank_pmu, *uarch, *mvendorid,"
             " *marchid, *mimpid, *isa, *cpuinfo_fixture; int pfm_id; /* -1: riscv_generic's fixed id */ }"
             " riscv_known_machines[] = {"]
    for m in t["models"]:
        lines.append("\t{ " + ", ".join(c_str(m[k]) for k in ("model", "core_pmu", "bank_pmu", "uarch", "mvendorid",
                                                              "marchid", "mimpid", "isa", "cpuinfo_fixture"))
                     + f", {m['pfm_id'] or -1} }},")
    lines.append("};")
    pmus = list(t["cores"]) + ["riscv_generic"] + list(BANK_PMUS)
    lines += ["/* every RISC-V PMU of the port: the core models of events/models.csv, the generic core, the banks */",
              "static const char *const riscv_known_pmus[] = {" + ", ".join(c_str(p) for p in pmus) + "};"]
    write(os.path.join(outdir, "riscv_known_machines.h"), "\n".join(lines) + "\n")


def gen_papi_ids(t, path):
    """PAPI's copy of the identification rules (riscv_cpuinfo_ids.h, written into PAPI's src/ by papi-component/apply.sh)."""
    ids = t["ids"]
    match = {"uarch": "RISCV_MATCH_UARCH", "ids": "RISCV_MATCH_IDS", "isa_ext": "RISCV_MATCH_ISA_EXT",
             "perf_id": "RISCV_MATCH_PERF_ID"}
    h = ["/* How a RISC-V machine is recognised in /proc/cpuinfo: the rules of events/cpu_ids.csv, the same ones",
         " * libpfm4's RISC-V detection is generated from. Included by riscv_cpuinfo.c only.",
         " * GENERATED by gen/gen_events.py -- do not edit; edit events/cpu_ids.csv. */",
         "#ifndef RISCV_CPUINFO_IDS_H", "#define RISCV_CPUINFO_IDS_H", "",
         "#include <stdint.h>", "",
         "/* a cpuinfo is RISC-V when its isa line starts with one of these */",
         "static const char *const riscv_isa_bases[] = {" + ", ".join(c_str(b) for b in ids["isa_base"]) + "};", "",
         "/* RISCV_MATCH_PERF_ID: str is a POSIX extended regular expression over \"mvendorid-marchid-mimpid\"",
         " * (each 0x%lx as the kernel prints it), matching the whole string, as Linux perf reads mapfile.csv */",
         "enum riscv_match { RISCV_MATCH_UARCH, RISCV_MATCH_IDS, RISCV_MATCH_ISA_EXT, RISCV_MATCH_PERF_ID };", "",
         "struct riscv_id_rule {",
         "\tconst char *pmu; /* libpfm4 PMU the rule recognises */",
         "\tenum riscv_match match;",
         "\tconst char *str;    /* uarch prefix, isa extension or perf_id pattern */",
         "\tuint64_t mvendorid; /* RISCV_MATCH_IDS */",
         "\tuint64_t marchid;",
         "\tint any_vendor;   /* RISCV_MATCH_IDS: mvendorid not compared */",
         "\tconst char *core; /* name of the core for humans, or NULL */",
         "};", "",
         "/* generated tables, one row per line: not reformatted */", "/* clang-format off */",
         "static const struct riscv_id_rule riscv_id_rules[] = {"]
    for r in ids["rows"]:
        h.append(f"    {{{c_str(r['pmu'])}, {match[r['match']]}, {c_str(r['str']) if r['str'] else 'NULL'}, "
                 f"{r['mvendorid']:#x}, {r['marchid']:#x}ULL, {r['any_vendor']}, "
                 f"{c_str(r['core']) if r['core'] else 'NULL'}}},")
    h += ["};", "",
          "/* core PMUs with a model of their own; any other RISC-V core is riscv_generic's */",
          "static const char *const riscv_core_model_pmus[] = {" +
          ", ".join(c_str(p) for p in ids["core_models"]) + "};", "/* clang-format on */", "", "#endif"]
    write(path, "\n".join(h) + "\n")


EMU_MASK_BITS = 64  # the emulator's event mask (perf_priv.h evmask, mach.h emu_decode_raw) is 64 bits


def emulator_slots(m, rows, prof):
    """The programmable events of a model as the emulator streams them: (name, mhpmevent, ppb, slot), slot = the
    index of the event whose count stream it uses (events 0 and 1 are cycles and instret). One slot per event when
    they fit the 64-bit event mask; on a bigger table (a value-encoded core: one event per counter, so no mask
    ever combines two) events of equal rate share the first one's stream, listed first."""
    evs = [(r["name"], as_int(r, "mhpmevent_value"), prof[r["name"]]) for r in rows]
    if len(evs) + 2 <= EMU_MASK_BITS:
        return [(n, v, p, i + 2) for i, (n, v, p) in enumerate(evs)]
    where = os.path.join(EVENTS, "profiles", m["profile"])
    if m["event_encoding"] != "value":
        raise TableError(f"{m['_where']}: {len(evs)} class_mask events; the emulator streams at most "
                         f"{EMU_MASK_BITS - 2} (a 64-bit event mask)")
    reps = []
    for n, v, p in evs:
        if p not in [r[2] for r in reps]:
            reps.append((n, v, p))
    if len(reps) + 2 > EMU_MASK_BITS:
        raise TableError(f"{where}: {len(reps)} distinct rates among {len(evs)} events; the emulator streams at "
                         f"most {EMU_MASK_BITS - 2} per model (a 64-bit event mask): give more events equal counts")
    slot = {p: i + 2 for i, (_, _, p) in enumerate(reps)}
    rest = [e for e in evs if e not in reps]
    return [(n, v, p, slot[p]) for n, v, p in reps + rest]


def gen_emulator(t, outdir):
    h = [banner("Emulator tables: machine models, events and workload profiles"),
         "#ifndef RVEMU_TABLES_H\n#define RVEMU_TABLES_H\n#include <stddef.h>\n#include <stdint.h>\n",
         "#define RVEMU_PPB 1000000000ULL /* rates are events per billion cycles; multiply in 128 bits */\n",
         "enum rvemu_event_kind { RVEMU_EV_CYCLES, RVEMU_EV_INSTRET, RVEMU_EV_PROGRAMMABLE };\n",
         "/* overflow_irq of events/models.csv: SSCOFPMF = the interrupt exists when the isa has Sscofpmf (an option",
         " * of the emulated core: RVEMU_SSCOFPMF=1); ANDES = Andes' PMU extension (xandespmu: scounterof, local",
         " * interrupt 18), THEAD = T-Head C9xx's own overflow CSR and interrupt: both always there, and Linux",
         " * (riscv_pmu_sbi) samples and filters with them as with Sscofpmf; NONE = counting only. */",
         "enum rvemu_overflow_irq { RVEMU_OVF_NONE, RVEMU_OVF_SSCOFPMF, RVEMU_OVF_ANDES, RVEMU_OVF_THEAD };\n",
         "/* One countable event of a core PMU: encoding is the mhpmevent value (programmable) or 0. */",
         "/* slot = the event whose count stream this one shares (its own index, except on a model with more",
         " * programmable events than a 64-bit event mask holds: there events of equal rate share one stream). */",
         "struct rvemu_event { const char *name; enum rvemu_event_kind kind; uint64_t encoding; uint64_t ppb;"
         " unsigned slot; };\n",
         "/* A distributed-HPC workload: per-cycle rates of the core-manager and L2-slice counters (hpcm bit order).",
         " * L2 read and write rates are NOT listed: the emulator derives those counts from the L1 counts. */",
         f"#define RVEMU_HPC_CORE_COUNTERS {sum(1 for r in t['hpc'] if r['manager_kind'] == 'core')}",
         f"#define RVEMU_HPC_L2_COUNTERS {sum(1 for r in t['hpc'] if r['manager_kind'] == 'l2_slice')}",
         "struct rvemu_hpc_profile { const char *name; uint64_t instret_ppb; uint64_t core_ppb[RVEMU_HPC_CORE_COUNTERS];"
         " uint64_t l2_ppb[RVEMU_HPC_L2_COUNTERS]; };\n",
         "struct rvemu_bank_event { const char *name; uint64_t ppb; };\n",
         "struct rvemu_model {",
         "\tconst char *model, *description, *core_pmu, *bank_pmu;",
         "\tconst char *uarch, *mvendorid, *marchid, *mimpid, *isa, *mmu;",
         "\tunsigned prog_counters, prog_width, freq_mhz;",
         "\tunsigned first_hart; /* hart id of Linux CPU 0 */",
         "\tconst char *caches; /* cache leaves: \"level:type:size_kib:ways:line[:shared]\" joined by ';' */",
         "\tenum rvemu_overflow_irq overflow_irq; /* how Linux learns of a counter overflow */",
         "\tint pes; /* Precise Event Sampling: 2 always, 1 with RVEMU_PES=1, 0 never */",
         "\tconst struct rvemu_event *events; size_t nevents; /* cycles, instret, then the programmable ones */",
         "\tint class_masks; /* 1: mhpmevent = class | mask, several bits of one class may be set (U74) */",
         "};\n",
         "extern const struct rvemu_model rvemu_models[];\nextern const size_t rvemu_nmodels;",
         "extern const struct rvemu_hpc_profile rvemu_hpc_profiles[];\nextern const size_t rvemu_nhpc_profiles;",
         "extern const char *const rvemu_hpc_core_names[RVEMU_HPC_CORE_COUNTERS];",
         "extern const char *const rvemu_hpc_l2_names[RVEMU_HPC_L2_COUNTERS];",
         f"#define RVEMU_BOOM_COUNTERS {len(t['boom'])}",
         "extern const struct rvemu_bank_event rvemu_boom_events[RVEMU_BOOM_COUNTERS];",
         "\n#endif"]
    c = [banner("Emulator tables"), '#include "rvemu_tables.h"\n']
    gen_names = [r["name"] for r in t["generic"]]
    for m in t["models"]:
        key = m["model"]
        sym = "rvemu_events_" + key.replace("-", "_")
        c.append(f"static const struct rvemu_event {sym}[] = {{")
        prof = t["profiles"]["models"][key]  # load_profiles gave every model a rate for every event it counts
        rows = t["cores"][m["core_pmu"]]["rows"] if m["event_table"] else []
        instret_ppb = prof[gen_names[1]]
        c.append(f"\t{{ {c_str(gen_names[0])}, RVEMU_EV_CYCLES, 0, RVEMU_PPB, 0 }},")
        c.append(f"\t{{ {c_str(gen_names[1])}, RVEMU_EV_INSTRET, 0, {instret_ppb}, 1 }},")
        for name, value, ppb, slot in emulator_slots(m, rows, prof):
            c.append(f"\t{{ {c_str(name)}, RVEMU_EV_PROGRAMMABLE, {value:#x}, {ppb}, {slot} }},")
        c.append("};")
    c.append("\nconst struct rvemu_model rvemu_models[] = {")
    for m in t["models"]:
        sym = "rvemu_events_" + m["model"].replace("-", "_")
        fields = ", ".join(c_str(m[k]) for k in ("model", "description", "core_pmu", "bank_pmu", "uarch", "mvendorid",
                                                 "marchid", "mimpid", "isa", "mmu"))
        c.append(f"\t{{ {fields}, {as_int(m, 'prog_counters')}, {as_int(m, 'prog_width')}, {as_int(m, 'freq_mhz')}, "
                 f"{as_int(m, 'first_hart')}, {c_str(m['caches'])}, "
                 f"RVEMU_OVF_{'NONE' if m['overflow_irq'] == 'no' else m['overflow_irq'].upper()}, "
                 f"{dict(yes=2, option=1, no=0)[m['pes']]}, "
                 f"{sym}, sizeof({sym}) / sizeof({sym}[0]), "
                 f"{1 if m['event_encoding'] == 'class_mask' else 0} }},")
    c.append("};\nconst size_t rvemu_nmodels = sizeof(rvemu_models) / sizeof(rvemu_models[0]);\n")
    c.append("const struct rvemu_hpc_profile rvemu_hpc_profiles[] = {")
    for b, p in t["profiles"]["lowrisc-hpc"].items():
        c.append(f"\t{{ {c_str(b)}, {p['instret']}, {{ {', '.join(str(v) for v in p['core'].values())} }}, "
                 f"{{ {', '.join(str(v) for v in p['l2'].values())} }} }},")
    c.append("};\nconst size_t rvemu_nhpc_profiles = sizeof(rvemu_hpc_profiles) / sizeof(rvemu_hpc_profiles[0]);\n")
    c.append("const char *const rvemu_hpc_core_names[RVEMU_HPC_CORE_COUNTERS] = { " +
             ", ".join(c_str(r["name"]) for r in t["hpc"] if r["manager_kind"] == "core") + " };")
    c.append("const char *const rvemu_hpc_l2_names[RVEMU_HPC_L2_COUNTERS] = { " +
             ", ".join(c_str(r["name"]) for r in t["hpc"] if r["manager_kind"] == "l2_slice") + " };\n")
    c.append("const struct rvemu_bank_event rvemu_boom_events[RVEMU_BOOM_COUNTERS] = {")
    for r in t["boom"]:
        c.append(f"\t{{ {c_str(r['name'])}, {t['profiles']['boom'][r['name']]} }},")
    c.append("};")
    write(os.path.join(outdir, "rvemu_tables.h"), "\n".join(h) + "\n")
    write(os.path.join(outdir, "rvemu_tables.c"), "\n".join(c) + "\n")


def gen_docs(t, path):
    d = ["# Event reference", "",
         "Generated by `gen/gen_events.py` from the tables in `events/`; edit those, not this file.", ""]
    d += ["## Machines", "", "| model (`RVEMU_MODEL`) | machine | core PMU | counter bank | uarch | programmable counters |",
          "|---|---|---|---|---|---|"]
    for m in t["models"]:
        d.append(f"| `{m['model']}` | {m['description']} | `{m['core_pmu']}` | {('`' + m['bank_pmu'] + '`') if m['bank_pmu'] else '-'} "
                 f"| `{m['uarch']}` | {m['prog_counters']} x {m['prog_width']} bit |")
    d += ["", "## Fixed counters (every core model, and `riscv_generic`)", "", "| event | perf encoding | alias |", "|---|---|---|"]
    for r in t["generic"]:
        d.append(f"| `{r['name']}` | `PERF_TYPE_HARDWARE`, `{r['perf_hw_event']}` | `{r['alias']}` |")
    for core in t["cores"].values():
        pmu, m = core["pmu"], core["model"]
        d += ["", f"## `{pmu}`", "", f"{core['desc']}: {m['prog_counters']} programmable counters of "
              f"{m['prog_width']} bits, overflow interrupt: {m['overflow_irq']}; table `events/{core['table']}`, "
              f"whose header cites its sources.", ""]
        if core["classes"]:
            first = core["rows"][0]
            d += ["Each class is an event whose unit masks are its bits; bits of one class combine "
                  f"(`{pmu}::{first['class_name']}:{first['name']}`). The per-bit names are events too.", "",
                  "| class event | unit mask / flat event | mhpmevent | alias | description |", "|---|---|---|---|---|"]
            for r in core["rows"]:
                d.append(f"| `{r['class_name']}` | `{r['name']}` | `{as_int(r, 'mhpmevent_value'):#x}` | "
                         f"{('`' + r['alias'] + '`') if r['alias'] else ''} | {r['description']} |")
        else:
            d += ["| event | mhpmevent | alias | description |", "|---|---|---|---|"]
            for r in core["rows"]:
                d.append(f"| `{r['name']}` | `{as_int(r, 'mhpmevent_value'):#x}` | "
                         f"{('`' + r['alias'] + '`') if r['alias'] else ''} | {r['description']} |")
    d += ["", "## `riscv_lowrisc_hpc` (distributed HPC, read by the `riscv_hpc` component)", "",
          "Code = ManagerID << 6 | hpcm bit, ManagerID = module << 4 | extend; module = hart for a core manager, "
          "0x100 + n for L2 slice n.", "", "| manager | hpcm bit | event | paper name | description |", "|---|---|---|---|---|"]
    for r in t["hpc"]:
        d.append(f"| {r['manager_kind']} | {r['hpcm_bit']} | `{r['name']}` | {r['paper_name']} | {r['description']} |")
    d += ["", "## `riscv_ucb_boom` (SonicBOOM extended counters)", "", "| counter | event | description |", "|---|---|---|"]
    for r in t["boom"]:
        d.append(f"| {r['index']} | `{r['name']}` | {r['description']} |")
    write(path, "\n".join(d) + "\n")


# ---- events/presets.csv: PAPI presets (appended to PAPI's papi_events.csv by papi-component/apply.sh) ----
PRESET_NAME_RE = re.compile(r"^PAPI_[A-Z0-9_]+$")
# PAPI 7.0.0's derived types (papi_internal.c _papi_hwi_derived_info) and how many terms each takes
DERIVED_TERMS = {"NOT_DERIVED": (1, 1), "DERIVED_ADD": (2, None), "DERIVED_SUB": (2, None),
                 "DERIVED_PS": (2, 2), "DERIVED_ADD_PS": (3, None), "DERIVED_CMPD": (1, None),
                 "DERIVED_POSTFIX": (1, None), "DERIVED_INFIX": (1, None)}
PRESET_FIELDS = ("NOTE", "LDESC", "SDESC")


def preset_pmus(t):
    """Every PMU a CPU section may name: {pmu: ({event names, aliases}, {class name: {unit masks}})}."""
    def names(rows):
        return {n for r in rows for n in (r["name"], r.get("alias", "")) if n}
    generic = names(t["generic"])
    out = {"riscv_generic": (generic, {})}
    for pmu, core in t["cores"].items():
        classes = {}
        for r in core["rows"]:
            if core["classes"]:
                classes.setdefault(r["class_name"], set()).add(r["name"])
        out[pmu] = (generic | names(core["rows"]), classes)
    return {**out,
            "riscv_lowrisc_hpc": (names(t["hpc"]), {}),
            "riscv_ucb_boom": (names(t["boom"]), {})}


# The riscv_hpc component also counts the core's cycles and instructions beside a counter bank: its own
# natives riscv_hpc:::riscv_generic::EVENT (the prefix keeps perf_event from taking the name).
COMPONENT_CORE_TERMS = {"riscv_lowrisc_hpc": ("riscv_hpc:::", "riscv_generic")}


def check_term(term, pmu, pmus, where):
    """A preset term is <pmu>::EVENT[:UNIT_MASK...][:modifier=value...], an event of the section's PMU."""
    prefix, core = COMPONENT_CORE_TERMS.get(pmu, (None, None))
    if prefix and term.startswith(prefix + core + "::"):
        return check_term(term[len(prefix):], core, pmus, where)
    qual, sep, rest = term.partition("::")
    if not sep:
        raise TableError(f"{where}: term '{term}' is not qualified with its PMU ({pmu}::...)")
    if qual != pmu:
        raise TableError(f"{where}: term '{term}' is not an event of {pmu} (the CPU section's PMU)")
    event, *attrs = rest.split(":")
    events, classes = pmus[pmu]
    if event not in events and event not in classes:
        raise TableError(f"{where}: unknown event '{event}' of {pmu}")
    masks = [a for a in attrs if a and not a[0].islower()]  # modifiers (u, k, hart=0, ...) are lower case
    for m in masks:
        if m not in classes.get(event, set()):
            raise TableError(f"{where}: '{m}' is not a unit mask of {pmu}::{event}")
    if event in classes and not masks:
        raise TableError(f"{where}: {pmu}::{event} is an event class: name its unit masks")


def check_presets(t, path):
    """Validate a presets file the way PAPI reads it (every comma splits a field): CPU sections of PMUs we
    know, PRESET lines with a PAPI name, one of PAPI's derived types, the right number of terms, every term
    an event of the section's PMU, then NOTE/LDESC/SDESC with a value. Raises TableError naming file:line."""
    pmus = preset_pmus(t)
    pmu, seen, count, sections = None, {}, 0, set()
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            where = f"{path}:{lineno}"
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in line.split(",")]
            if fields[0] == "CPU":
                if len(fields) != 2 or fields[1] not in pmus:
                    raise TableError(f"{where}: CPU needs one PMU of {sorted(pmus)}, not {fields[1:]}")
                pmu = fields[1]
                sections.add(pmu)
                seen = {}
                continue
            if fields[0] != "PRESET":
                raise TableError(f"{where}: a line is CPU or PRESET, not '{fields[0]}'")
            if pmu is None:
                raise TableError(f"{where}: PRESET before any CPU line")
            if len(fields) < 4:
                raise TableError(f"{where}: PRESET,<name>,<derived type>,<term>... needs at least 4 fields")
            name, dtype, rest = fields[1], fields[2], fields[3:]
            if not PRESET_NAME_RE.match(name):
                raise TableError(f"{where}: bad preset name '{name}'")
            if name in seen:
                raise TableError(f"{where}: {name} already defined for {pmu} at line {seen[name]}")
            seen[name] = lineno
            if dtype not in DERIVED_TERMS:
                raise TableError(f"{where}: derived type '{dtype}' is not one of {sorted(DERIVED_TERMS)}")
            if dtype in ("DERIVED_POSTFIX", "DERIVED_INFIX"):
                if not rest[0]:
                    raise TableError(f"{where}: {dtype} needs a formula before its terms")
                rest = rest[1:]
            terms = []
            while rest and rest[0] not in PRESET_FIELDS:
                terms.append(rest.pop(0))
            lo, hi = DERIVED_TERMS[dtype]
            if len(terms) < lo or (hi is not None and len(terms) > hi):
                want = f"{lo}" if lo == hi else f"{lo} or more" if hi is None else f"{lo} to {hi}"
                raise TableError(f"{where}: {dtype} takes {want} terms, {name} has {len(terms)}")
            for term in terms:
                check_term(term, pmu, pmus, where)
            while rest:
                if rest[0] not in PRESET_FIELDS:
                    raise TableError(f"{where}: unexpected field '{rest[0]}' after the terms (a note holds no comma)")
                if len(rest) < 2 or not rest[1]:
                    raise TableError(f"{where}: {rest[0]} without a value")
                rest = rest[2:]
            count += 1
    if count == 0:
        raise TableError(f"{path}: no PRESET lines")
    for pmu, core in t["cores"].items():  # every core model gets PAPI's presets, at least cycles and instructions
        if pmu not in sections:
            raise TableError(f"{path}: no CPU,{pmu} section for the core of {core['model']['_where']}")
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--libpfm", metavar="DIR")
    ap.add_argument("--emulator", metavar="DIR")
    ap.add_argument("--docs", metavar="FILE")
    ap.add_argument("--papi-ids", metavar="FILE", help="PAPI's identification rules (riscv_cpuinfo_ids.h)")
    ap.add_argument("--tests", metavar="DIR", help="headers for the tests (riscv_known_machines.h)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--models", action="store_true",
                    help="print the machines of models.csv, one per line: model core_pmu bank_pmu(- if none) "
                         "overflow_irq pes prog_counters isa (what scripts and tests loop over)")
    ap.add_argument("--core-pmus", action="store_true", help="print the core PMUs with a table, one per line")
    ap.add_argument("--events", metavar="DIR", help="tables folder (default: events/ next to scripts/)")
    a = ap.parse_args()
    global EVENTS
    if a.events:
        EVENTS = a.events
    try:
        t = load()
        check_presets(t, os.path.join(EVENTS, "presets.csv"))
    except (TableError, OSError) as e:
        print(f"gen_events: error: {e}", file=sys.stderr)
        return 1
    if a.models:
        for m in t["models"]:
            print(m["model"], m["core_pmu"], m["bank_pmu"] or "-", m["overflow_irq"], m["pes"], m["prog_counters"],
                  m["isa"])
    if a.core_pmus:
        print("\n".join(t["cores"]))
    if a.libpfm:
        gen_libpfm(t, a.libpfm)
    if a.papi_ids:
        gen_papi_ids(t, a.papi_ids)
    if a.tests:
        gen_known_machines(t, a.tests)
    if a.emulator:
        gen_emulator(t, a.emulator)
    if a.docs:
        gen_docs(t, a.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
