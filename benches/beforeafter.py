#!/usr/bin/env python3
"""Criterion before/after in one session: two checkouts' bench binaries, run in
alternating rounds, one markdown table of medians.

    python3 benches/beforeafter.py --before ../old --after . --rounds 3 \\
        --bench place 'hgx-100k-50/core-warm/required-block-256$' ...

Each checkout builds its own bench binary (`cargo bench --no-run` in that directory,
so each uses its own target/). Round r runs the "before" binary first when r is odd
and the "after" binary first when it is even, each with the same filters; criterion
writes into a scratch CRITERION_HOME per side, so neither touches the report's data in
target/criterion. The table gives, per benchmark, the median over rounds of
criterion's point estimate of the median on each side, their ratio, and the outcome
each side recorded (gang-benches' gang-outcomes.tsv), so a changed answer shows. The
load average before each round is printed below the table: the figures mean what they
say only on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
TIME = re.compile(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]")


def build(checkout: Path, package: str, bench: str) -> str:
    """Builds the bench binary in `checkout` and returns its path."""
    out = subprocess.run(
        ["cargo", "bench", "--no-run", "-p", package, "--bench", bench,
         "--message-format=json"],
        cwd=checkout, check=True, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "CARGO_INCREMENTAL": "0"},
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg["target"]["name"] == bench and "bench" in msg["target"]["kind"]:
            return msg["executable"]
    sys.exit(f"no bench binary '{bench}' built in {checkout}")


def parse(text: str) -> dict[str, float]:
    """Criterion's stdout → {benchmark id: median in ns}."""
    found, name = {}, None
    for line in text.splitlines():
        m = TIME.search(line)
        if m:
            head = line[: m.start()].strip()
            key = head or name
            if key:
                found[key] = float(m.group(1)) * UNITS[m.group(2)]
            name = None
        elif line and not line[0].isspace() and not line.startswith(
                ("Benchmarking", "Found", "Warning", "Gnuplot", "change", "Performance",
                 "No change", "Change")):
            name = line.strip()
    return found


def outcomes(home: Path) -> dict[str, str]:
    f = home / "gang-outcomes.tsv"
    seen = {}
    if f.exists():
        for line in f.read_text().splitlines():
            group, bench, what = line.split("\t", 2)
            seen[f"{group}/{bench}"] = what
    return seen


def fmt(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="checkout of the old commit")
    ap.add_argument("--after", type=Path, required=True, help="checkout of the new commit")
    ap.add_argument("--package", default="gang-benches")
    ap.add_argument("--bench", default="place")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm-up", default="1", help="criterion --warm-up-time (s)")
    ap.add_argument("--measure", default="3", help="criterion --measurement-time (s)")
    ap.add_argument("filters", nargs="+", help="criterion filters (regexes), run one by one")
    a = ap.parse_args()

    sides = {"before": a.before, "after": a.after}
    exe = {s: build(d, a.package, a.bench) for s, d in sides.items()}
    scratch = Path(tempfile.mkdtemp(prefix="gang-beforeafter-"))
    times: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    loads = []
    for r in range(1, a.rounds + 1):
        loads.append(os.getloadavg()[0])
        order = ["before", "after"] if r % 2 else ["after", "before"]
        for side in order:
            home = scratch / side
            for flt in a.filters:
                out = subprocess.run(
                    [exe[side], "--bench", "--warm-up-time", a.warm_up,
                     "--measurement-time", a.measure, flt],
                    cwd=sides[side], check=True, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, text=True,
                    env={**os.environ, "CRITERION_HOME": str(home)},
                ).stdout
                for key, ns in parse(out).items():
                    times[side].setdefault(key, []).append(ns)
        print(f"round {r} done (load {loads[-1]:.2f})", file=sys.stderr)

    seen = {s: outcomes(scratch / s) for s in sides}
    print("| benchmark | before | after | before ÷ after | outcome before | outcome after |")
    print("|---|---:|---:|---:|---|---|")
    for key in sorted(set(times["before"]) | set(times["after"])):
        b, f = times["before"].get(key), times["after"].get(key)
        bm = statistics.median(b) if b else None
        am = statistics.median(f) if f else None
        ratio = f"{bm / am:.2f}×" if bm and am else "—"
        print(f"| {key} | {fmt(bm) if bm else '—'} | {fmt(am) if am else '—'} | {ratio} "
              f"| {seen['before'].get(key, '—')} | {seen['after'].get(key, '—')} |")
    print()
    print(f"Rounds: {a.rounds}, alternating (before first in odd rounds); load average "
          f"before each round: {', '.join(f'{x:.2f}' for x in loads)}; "
          f"criterion --warm-up-time {a.warm_up} --measurement-time {a.measure}.")


if __name__ == "__main__":
    main()
