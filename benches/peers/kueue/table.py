#!/usr/bin/env python3
"""Turns the side-by-side's raw lines (run.sh) into a markdown table.

Input lines (tab-separated), from `peers gang` and the Kueue harness:

    gang|kueue  CLUSTER  QUERY  ROUND  CALLS  WALL_NS  CPU_NS  FIRST_NS  OUTCOME
    #setup  gang|kueue  CLUSTER  nodes=..  usable_free_gpus=..  build_ms=..  [...]
    #load  ROUND  CLUSTER  /proc/loadavg

Per (cluster, query, side): the median over rounds of the per-round medians. The
outcome column is the placement's spread (zones/blocks/racks/nodes used, from the
nodes' labels, counted alike on both sides); `≠` marks a side whose outcome changed
between rounds (it should not: both sides are deterministic).
"""

import argparse
import statistics
import sys
from collections import defaultdict


def fmt_ns(ns):
    if ns is None:
        return "—"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            v = ns / div
            break
    else:
        unit, v = "ns", float(ns)
    if v >= 100:
        return f"{v:.0f} {unit}"
    if v >= 10:
        return f"{v:.1f} {unit}"
    return f"{v:.2f} {unit}"


def fmt_ratio(a, b):
    if not a or not b:
        return "—"
    r = b / a
    if r >= 100:
        return f"{r:,.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


def spread(outcome):
    if outcome is None:
        return "—"
    if not outcome.startswith("members="):
        return outcome.split(":")[0]
    kv = dict(p.split("=", 1) for p in outcome.split())
    return f"{kv['zones']}/{kv['blocks']}/{kv['racks']}/{kv['nodes']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="the raw TSV run.sh wrote")
    ap.add_argument("--commit", default="?")
    ap.add_argument("--kueue-version", default="v0.17.0")
    args = ap.parse_args()

    times = defaultdict(lambda: {"wall": [], "cpu": [], "first": [], "outcomes": []})
    order = []
    setups = defaultdict(dict)
    loads = []
    rounds = set()
    with open(args.raw, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "#setup":
                side, cluster = parts[1], parts[2]
                setups[cluster][side] = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
                continue
            if parts[0] == "#load":
                loads.append(parts[3].split()[0])
                continue
            if parts[0] not in ("gang", "kueue") or len(parts) < 9:
                continue
            side, cluster, query, rnd = parts[0], parts[1], parts[2], parts[3]
            rounds.add(rnd)
            key = (cluster, query)
            if key not in order:
                order.append(key)
            t = times[(cluster, query, side)]
            t["wall"].append(int(parts[5]))
            t["cpu"].append(int(parts[6]))
            t["first"].append(int(parts[7]))
            t["outcomes"].append(parts[8])

    def med(cluster, query, side, what):
        v = times.get((cluster, query, side), {}).get(what)
        return statistics.median(v) if v else None

    def outcome(cluster, query, side):
        o = times.get((cluster, query, side), {}).get("outcomes") or [None]
        mark = "" if len(set(o)) <= 1 else " ≠"
        return spread(o[-1]) + mark

    out = []
    out.append(
        f"gang's warm `Solver` against Kueue {args.kueue_version}'s "
        "`FindTopologyAssignmentsForFlavor` on a snapshot built once; "
        f"commit {args.commit}; {len(rounds)} alternating rounds; medians over rounds of "
        "per-round medians; load average (1 min) at the rounds: "
        + (", ".join(loads) if loads else "not recorded")
        + "."
    )
    out.append("")
    for cluster, sides in setups.items():
        g, k = sides.get("gang", {}), sides.get("kueue", {})
        same = g.get("usable_free_gpus") == k.get("usable_free_gpus") and g.get("nodes") == k.get("nodes")
        out.append(
            f"- `{cluster}`: {g.get('nodes', '?')} nodes, usable free GPUs gang "
            f"{g.get('usable_free_gpus', '?')} / Kueue {k.get('usable_free_gpus', '?')}"
            + ("" if same else " (**the sides read different clusters**)")
            + f"; gang inventory build {g.get('build_ms', '?')} ms, Kueue cache feed "
            f"{k.get('build_ms', '?')} ms + snapshot {k.get('snapshot_ms', '?')} ms "
            f"({k.get('leaves', '?')} nodes in it)"
        )
    out.append("")
    out.append(
        "| cluster | query | gang wall | Kueue wall | Kueue ÷ gang | gang CPU | Kueue CPU "
        "| Kueue ÷ gang (CPU) | gang z/b/r/n | Kueue z/b/r/n |"
    )
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    for cluster, query in order:
        gw, kw = med(cluster, query, "gang", "wall"), med(cluster, query, "kueue", "wall")
        gc, kc = med(cluster, query, "gang", "cpu"), med(cluster, query, "kueue", "cpu")
        out.append(
            f"| {cluster} | {query} | {fmt_ns(gw)} | {fmt_ns(kw)} | {fmt_ratio(gw, kw)} "
            f"| {fmt_ns(gc)} | {fmt_ns(kc)} | {fmt_ratio(gc, kc)} "
            f"| {outcome(cluster, query, 'gang')} | {outcome(cluster, query, 'kueue')} |"
        )
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
