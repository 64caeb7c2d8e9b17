#!/usr/bin/env python3
"""Turns criterion's output into the markdown report of benches/README.md.

Reads every `<criterion dir>/**/new/{benchmark,estimates}.json` (medians), the outcome
lines the benches append to `<criterion dir>/gang-outcomes.tsv`, and optionally the
output of the `memory` binary; prints markdown tables of medians and ratios (against
the reference placer and the floor kernel measured in the same run), the issue-4
targets met or missed, and the machine. With `--readme FILE` it replaces the part of
FILE between `<!-- report:start -->` and `<!-- report:end -->` instead of printing.

    python3 benches/report.py [--target DIR] [--memory FILE] [--readme FILE] [--commit C]

DIR defaults to $CARGO_TARGET_DIR, else ./target (the criterion dir is DIR/criterion,
or $CRITERION_HOME).
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

START, END = "<!-- report:start -->", "<!-- report:end -->"


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs" if ns < 1e5 else f"{ns / 1e3:.0f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms" if ns < 1e8 else f"{ns / 1e6:.0f} ms"
    return f"{ns / 1e9:.3g} s"


def fmt_ratio(r):
    if r is None:
        return "—"
    if r < 10:
        return f"{r:.2f}×"
    return f"{r:.1f}×" if r < 100 else f"{r:.0f}×"


def load(crit):
    """{(group, function, value): median ns}"""
    out = {}
    for bj in crit.glob("**/new/benchmark.json"):
        est = bj.with_name("estimates.json")
        if not est.exists():
            continue
        b = json.loads(bj.read_text())
        e = json.loads(est.read_text())
        key = (b["group_id"], b.get("function_id") or "", b.get("value_str") or "")
        out[key] = e["median"]["point_estimate"]
    return out


def load_outcomes(crit):
    out = {}
    f = crit / "gang-outcomes.tsv"
    if f.exists():
        for line in f.read_text().splitlines():
            parts = line.split("\t")
            if len(parts) == 3:
                out[(parts[0], parts[1])] = parts[2]
    return out


def cluster_key(group):
    """Sort clusters: flavor, size, utilisation."""
    m = re.match(r"(\w+)-(\d+)k-(\d+)$", group)
    if not m:
        return (group, 0, 0)
    return (m.group(1), int(m.group(2)), int(m.group(3)))


CASE_ORDER = [
    "required-rack",
    "required-block",
    "preferred-rack",
    "unconstrained",
    "3-role",
    "sliced",
    "infeasible",
]


def case_key(case):
    for i, p in enumerate(CASE_ORDER):
        if case.startswith(p):
            n = re.findall(r"\d+$", case)
            return (i, int(n[0]) if n else 0)
    return (len(CASE_ORDER), case)


def place_table(m, outcomes):
    groups = sorted(
        {g for (g, f, v) in m if f in ("core-warm", "reference", "floor") and not g.startswith(("build", "churn"))},
        key=cluster_key,
    )
    rows = [
        "| cluster | case | outcome (core) | core warm | core cold | one-shot | reference | floor | reference ÷ warm | warm ÷ floor | cold ÷ floor |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for g in groups:
        floor = m.get((g, "floor", "worker"))
        cases = sorted(
            {v for (gg, f, v) in m if gg == g and f in ("core-warm", "core-cold", "core-oneshot", "reference")},
            key=case_key,
        )
        for c in cases:
            warm = m.get((g, "core-warm", c))
            cold = m.get((g, "core-cold", c))
            one = m.get((g, "core-oneshot", c))
            ref = m.get((g, "reference", c))
            outcome = outcomes.get((g, f"core-warm/{c}"), "")
            rows.append(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                    g,
                    c,
                    outcome,
                    fmt_time(warm),
                    fmt_time(cold),
                    fmt_time(one),
                    fmt_time(ref),
                    fmt_time(floor),
                    fmt_ratio(ref / warm if ref and warm else None),
                    fmt_ratio(warm / floor if warm and floor else None),
                    fmt_ratio(cold / floor if cold and floor else None),
                )
            )
    return "\n".join(rows)


def find_table(m, outcomes):
    """The infeasible case answered with a diagnosis (`place`) and without (`find`)."""
    rows = [
        "| cluster | case | `find` answered | `place` (diagnosis) | `find` | place ÷ find |",
        "|---|---|---|---:|---:|---:|",
    ]
    keys = sorted({(g, v) for (g, f, v) in m if f == "core-find"}, key=lambda k: (cluster_key(k[0]), k[1]))
    for g, c in keys:
        diag = m.get((g, "core-warm", c))
        find = m.get((g, "core-find", c))
        rows.append(
            "| {} | {} | {} | {} | {} | {} |".format(
                g,
                c,
                outcomes.get((g, f"core-find/{c}"), ""),
                fmt_time(diag),
                fmt_time(find),
                fmt_ratio(diag / find if diag and find else None),
            )
        )
    return "\n".join(rows)


def natural(key):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", "/".join(key))]


def simple_table(m, prefix, header):
    rows = [header, "|---|---|---:|"]
    for (g, f, v), ns in sorted(m.items(), key=lambda kv: natural(kv[0])):
        if g.startswith(prefix):
            rows.append(f"| {g} | {f}/{v} | {fmt_time(ns)} |")
    return "\n".join(rows)


def memory_figures(path):
    """{cluster title: (total B/node, beyond B/node)} from the memory binary's output."""
    out = {}
    if not path:
        return out
    title = None
    total = beyond = None
    for line in Path(path).read_text().splitlines():
        if line.startswith("== "):
            title = line[3:].strip()
        m = re.search(r"inventory heap:.*?([\d.]+) B/node", line)
        if m:
            total = float(m.group(1))
        m = re.search(r"beyond names and labels:.*?([\d.]+) B/node", line)
        if m:
            beyond = float(m.group(1))
        m = re.search(r"beyond \(strict\):.*?([\d.]+) B/node", line)
        if m and title:
            out[title] = (total, beyond, float(m.group(1)))
    return out


def targets(m, mem):
    def get(*k):
        return m.get(k)

    rows = ["| target | measured | verdict |", "|---|---|---|"]

    def line(what, value, goal, ok, miss):
        verdict = "met" if ok else f"missed by {miss}"
        rows.append(f"| {what} (target {goal}) | {value} | {verdict} |")

    w = get("hgx-100k-85", "core-warm", "required-rack-4")
    r = get("hgx-100k-85", "reference", "required-rack-4")
    f = get("hgx-100k-85", "floor", "worker")
    c = get("hgx-100k-85", "core-cold", "required-rack-4")
    if w:
        line("100k HGX 85%, required rack, 4 workers, warm", fmt_time(w), "≤ 10 µs", w <= 1e4, fmt_ratio(w / 1e4))
    if w and r:
        sp = r / w
        line("… and faster than the reference", fmt_ratio(sp), "≥ 20×", sp >= 20, f"a factor {20 / sp:.2f}")
    if c and f:
        cf = c / f
        line("100k HGX 85%, cold shape, vs floor", f"{fmt_ratio(cf)} ({fmt_time(c)} vs {fmt_time(f)})", "≤ 2×", cf <= 2, fmt_ratio(cf / 2))
    w10 = get("hgx-10k-85", "core-warm", "required-rack-4")
    if w10:
        line("10k HGX 85%, required rack, 4 workers, warm", fmt_time(w10), "≤ 3 µs", w10 <= 3e3, fmt_ratio(w10 / 3e3))
    t3 = get("hgx-10k-85", "core-warm", "3-role-37")
    if t3:
        line("10k HGX 85%, 3-role gang, warm", fmt_time(t3), "≤ 50 µs", t3 <= 5e4, fmt_ratio(t3 / 5e4))
    rr = get("churn-hgx-100k-50", "reserve-release", "64")
    if rr:
        line("reserve + release, 64 members (100k HGX)", fmt_time(rr), "≤ 5 µs", rr <= 5e3, fmt_ratio(rr / 5e3))
    b = get("build", "from-nodes", "hgx-100k-50")
    if b:
        line("build 100k HGX inventory (`Inventory::from_nodes`)", fmt_time(b), "≤ 150 ms", b <= 1.5e8, fmt_ratio(b / 1.5e8))
    bc = get("build", "core", "hgx-100k-50")
    if bc:
        line("… through `build()`, which also frees the specs it consumed", fmt_time(bc), "≤ 150 ms", bc <= 1.5e8, fmt_ratio(bc / 1.5e8))
    for title, (total, beyond, strict) in mem.items():
        nodes = re.search(r"(\d+) nodes", title)
        if nodes and int(nodes.group(1)) >= 100_000:
            line(
                f"memory, {title}",
                f"{beyond:.1f} B/node beyond names and labels as kept; {strict:.1f} strict; {total:.1f} in all",
                "≤ 96 B/node",
                beyond <= 96,
                fmt_ratio(beyond / 96),
            )
    return "\n".join(rows)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001 - machine facts are best effort
        return "?"


def machine(commit):
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "\n".join(
        [
            f"- CPUs (`nproc`): {sh('nproc')}; model: {cpu}",
            f"- {sh('rustc -V')}; {sh('cargo -V')}",
            f"- kernel: {sh('uname -sr')}; commit: {commit or sh('git rev-parse --short HEAD')}",
        ]
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    ap.add_argument("--memory", help="output of `cargo run --release -p gang-benches --bin memory`")
    ap.add_argument("--readme", help="replace the report section of this file")
    ap.add_argument("--commit", help="the commit measured (default: git rev-parse HEAD)")
    a = ap.parse_args()
    crit = Path(os.environ.get("CRITERION_HOME", Path(a.target) / "criterion"))
    m = load(crit)
    if not m:
        sys.exit(f"no criterion results under {crit}")
    outcomes = load_outcomes(crit)
    mem = memory_figures(a.memory)
    parts = [
        "### Machine",
        "",
        machine(a.commit),
        "",
        "### Issue 4 targets",
        "",
        targets(m, mem),
        "",
        "### Placement queries",
        "",
        place_table(m, outcomes),
        "",
        "### \"Not now\" without a diagnosis (`Solver::find`)",
        "",
        find_table(m, outcomes),
        "",
        "### Building the inventory",
        "",
        simple_table(m, "build", "| group | benchmark | median |"),
        "",
        "### Lifecycle churn",
        "",
        simple_table(m, "churn", "| group | benchmark | median |"),
    ]
    if a.memory:
        parts += ["", "### Memory", "", "```text", Path(a.memory).read_text().strip(), "```"]
    text = "\n".join(parts) + "\n"
    if a.readme:
        p = Path(a.readme)
        doc = p.read_text()
        if START not in doc or END not in doc:
            sys.exit(f"{p} has no {START} … {END} section")
        head, rest = doc.split(START, 1)
        _, tail = rest.split(END, 1)
        p.write_text(f"{head}{START}\n{text}{END}{tail}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
