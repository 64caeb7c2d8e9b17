"""The same random instances through gang and through an exact CP-SAT model
(reference.py and multirole.py beside this file): agreement, and the speed ratio.

    python examples/python/compare_cpsat.py --instances 200 --max-nodes 200
    python examples/python/compare_cpsat.py --multi-role --instances 2000
    python examples/python/compare_cpsat.py --issue15            # the README's tables
    python examples/python/compare_cpsat.py --issue15 --export benches/data/issue15-hardest

For each instance gang answers where the gang lands (or that it does not fit); CP-SAT
answers, for each level of the walk in turn, whether the gang fits with its constrained
members in one domain. They agree when gang places the gang at the first level CP-SAT
finds feasible (and the placement verifies), or both say it does not fit. Multi-role
gangs may come back "undecided" from gang when its exact search exhausts its budget;
those are reported separately.

Instances: by default up to --max-nodes nodes and 3 roles (reference.random_instance);
with --multi-role issue 15's shapes (multirole.multirole_instance: 40-250 nodes, 2-4
roles of up to 24 GPU-, CPU- or memory-heavy members, unconstrained or rack / block
required or preferred).

--issue15 measures what benches/README.md's "Issue 15: CP-SAT cross-check" section
reports and prints its markdown: the undecided rate and the time per query of gang and
of CP-SAT on the test's 300 instances (seed 15, as gang-py/tests/test_cpsat.py), on 2000
more (seed 2015) and on 300 instances of 250 nodes (seed 250); the time of each of the
hardest 250-node instances (those benches/data/issue15-hardest holds, which the Rust
bench `hardest` loads); and issue 15's reproducer at 1k / 4k / 10k nodes
(--reproducer-nodes). --export DIR chooses the hardest instances on the engine being
measured (undecided first, then the slowest) and writes them to DIR as scenario files.
Times are wall-clock per query on this machine: gang's `try_place` (compile + place,
through Python), CP-SAT's model build + solve for each level of the walk (2 workers).
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gang  # noqa: E402
from multirole import multirole_instance, reproducer, scenario_document  # noqa: E402
from reference import check_placement, cpsat_depth, random_instance  # noqa: E402

HARDEST = HERE.parent.parent / "benches" / "data" / "issue15-hardest"


def run(inst) -> dict:
    """One instance through gang and CP-SAT: answers, times and the verdict."""
    inv, g = inst.inventory(), inst.gang()
    t = time.perf_counter()
    try:
        result = inv.try_place(g)
    except gang.Contradictory:
        return {"verdict": "contradictory"}
    t_gang = time.perf_counter() - t
    t = time.perf_counter()
    want = cpsat_depth(inst)
    t_cpsat = time.perf_counter() - t
    if isinstance(result, gang.Diagnosis):
        got = result.status
    else:
        got = "placed" + ("" if result.search_complete else " (search incomplete)")
    if want == "unknown":
        verdict = "cpsat timeout"
    elif isinstance(result, gang.Diagnosis) and result.status == "undecided":
        verdict = "undecided"
    elif isinstance(result, gang.Diagnosis):
        verdict = "agree" if want is None else "disagree"
    else:
        depth = inst.depth(result.level)
        ok = (want is not None and not check_placement(inst, result)
              and (depth == want if result.search_complete else depth <= want))
        verdict = "agree" if ok else "disagree"
    return {"verdict": verdict, "gang": got, "cpsat": "unschedulable" if want is None else
            ("unknown" if want == "unknown" else "placed"),
            "t_gang": t_gang, "t_cpsat": t_cpsat}


def instances(multi: bool, count: int, seed: int, min_nodes: int, max_nodes: int):
    rng = random.Random(seed)
    for _ in range(count):
        if multi:
            yield multirole_instance(rng, min_nodes=min_nodes, max_nodes=max_nodes)
        else:
            yield random_instance(rng, max_nodes=max_nodes)


def fmt(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


def spread(times) -> str:
    """`median / worst` of a list of seconds."""
    return f"{fmt(statistics.median(times))} / {fmt(max(times))}" if times else "–"


def set_row(name: str, runs: list) -> str:
    runs = [r for r in runs if r["verdict"] != "contradictory"]
    n = len(runs)
    count = lambda key, v: sum(1 for r in runs if r[key] == v)  # noqa: E731
    und = count("gang", "undecided")  # also where CP-SAT timed out
    return (f"| {name} | {n} | {count('cpsat', 'placed')} / {count('cpsat', 'unschedulable')} "
            f"/ {count('cpsat', 'unknown')} "
            f"| {und} ({100 * und / max(n, 1):.1f} %) | {count('verdict', 'disagree')} "
            f"| {spread([r['t_gang'] for r in runs])} | {spread([r['t_cpsat'] for r in runs])} |")


def issue15(args) -> int:
    git = lambda *a: subprocess.run(["git", "-C", str(HERE.parent.parent), *a], capture_output=True,  # noqa: E731
                                    text=True).stdout.strip() or "?"
    # The engine's commit: the last one that changed the solver or the binding.
    engine = git("log", "-1", "--format=%h", "--", "gang-core/src", "gang-py/src")
    commit = f"{engine} (checkout {git('rev-parse', '--short', 'HEAD')})"
    sets = [("test set: 40–250 nodes, seed 15", 300, 15, 40, 250),
            ("larger set: 40–250 nodes, seed 2015", args.large, 2015, 40, 250),
            ("250 nodes, seed 250", 300, 250, 250, 250)]
    all_runs = {}
    print(f"Engine at commit {commit}; `python examples/python/compare_cpsat.py --issue15`, "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}, load average {os.getloadavg()[0]:.1f} at the start.\n")
    print("| instances | count | CP-SAT placed / unschedulable / timed out (30 s) | gang undecided | disagree "
          "| gang median / worst | CP-SAT median / worst |")
    print("|---|---|---|---|---|---|---|")
    for name, count, seed, lo, hi in sets:
        insts = list(instances(True, count, seed, lo, hi))
        runs = [run(inst) for inst in insts]
        all_runs[seed] = (insts, runs)
        print(set_row(name, runs), flush=True)
    disagree = sum(r["verdict"] == "disagree" for _, runs in all_runs.values() for r in runs)

    insts, runs = all_runs[250]
    if args.export:
        out = pathlib.Path(args.export)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.json"):
            old.unlink()
        order = sorted((i for i, r in enumerate(runs) if r["verdict"] != "contradictory"),
                       key=lambda i: (runs[i]["verdict"] != "undecided", -runs[i]["t_gang"]))
        for i in sorted(order[:12]):
            r = runs[i]
            doc = scenario_document(insts[i], (
                f"Issue 15's hardest multi-role instances: 250 nodes, seed 250, instance {i} of "
                f"examples/python/compare_cpsat.py --issue15 (multirole.multirole_instance). "
                f"CP-SAT: {r['cpsat']} in {fmt(r['t_cpsat'])}; gang, engine at {engine}: "
                f"{r['gang']} in {fmt(r['t_gang'])}."), r["cpsat"] if r["cpsat"] != "unknown" else None)
            (out / f"i{i:03d}.json").write_text(_compact(doc))
        hardest_dir = out
    else:
        hardest_dir = pathlib.Path(args.hardest)
    chosen = sorted(int(p.stem[1:]) for p in hardest_dir.glob("i*.json"))
    if chosen:
        print(f"\nThe hardest 250-node instances ({os.path.relpath(hardest_dir, HERE.parent.parent)}"
              f" — the bench `hardest` loads them):\n")
        print("| instance | roles (members) | topology | CP-SAT | CP-SAT time | gang | gang time |")
        print("|---|---|---|---|---|---|---|")
        for i in chosen:
            inst, r = insts[i], runs[i]
            roles = ", ".join(f"{x.name} {x.count}" + ("" if x.constrained else " anywhere")
                              for x in inst.roles)
            topo = " / ".join(f"{k} {v.rsplit('/', 1)[1]}" for k, v in
                              (("required", inst.required), ("preferred", inst.preferred)) if v) or "none"
            print(f"| i{i:03d} | {roles} | {topo} | {r['cpsat']} | {fmt(r['t_cpsat'])} "
                  f"| {r['gang']} | {fmt(r['t_gang'])} |")

    print("\nIssue 15's reproducer (racks of 4 nodes with 3 GPUs, 4 CPUs; roles a 4 and b 2 "
          "of 2 GPUs, rack required: unschedulable), one query through Python:\n")
    print("| nodes | a + b | a + b + unconstrained 1-CPU launcher |")
    print("|---|---|---|")
    for n in args.reproducer_nodes:
        cells = []
        for launcher in (False, True):
            inv, g = reproducer(n, launcher)
            t = time.perf_counter()
            result = inv.try_place(g)
            dt = time.perf_counter() - t
            status = "placed" if isinstance(result, gang.Placement) else result.status
            cells.append(f"{fmt(dt)} ({status})")
        print(f"| {n:,} | {cells[0]} | {cells[1]} |", flush=True)
    return 1 if disagree else 0


def _compact(doc: dict) -> str:
    """JSON with one node per line (defaults left out): small and still readable in a diff."""
    doc = dict(doc)
    nodes = [{k: v for k, v in n.items() if (k, v) not in (("taints", []), ("schedulable", True))}
             for n in doc.pop("nodes")]
    head = json.dumps(doc, indent=1)[:-2]
    body = ",\n".join("  " + json.dumps(n, separators=(",", ":")) for n in nodes)
    return f'{head},\n "nodes": [\n{body}\n ]\n}}\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--max-nodes", type=int, default=None, help="default: 200, or 250 with --multi-role")
    ap.add_argument("--min-nodes", type=int, default=40, help="with --multi-role")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--multi-role", action="store_true", help="issue 15's multi-role shapes")
    ap.add_argument("--issue15", action="store_true", help="print benches/README.md's issue 15 tables")
    ap.add_argument("--large", type=int, default=2000, help="with --issue15: size of the larger set")
    ap.add_argument("--reproducer-nodes", type=int, nargs="*", default=[1000, 4000, 10000])
    ap.add_argument("--export", metavar="DIR", help="with --issue15: write the hardest instances")
    ap.add_argument("--hardest", metavar="DIR", default=str(HARDEST),
                    help="with --issue15: the exported instances to time (default %(default)s)")
    args = ap.parse_args()
    if args.issue15:
        sys.exit(issue15(args))
    if args.max_nodes is None:
        args.max_nodes = 250 if args.multi_role else 200

    counts = {"agree": 0, "disagree": 0, "undecided": 0, "contradictory": 0, "cpsat timeout": 0}
    t_gang = t_cpsat = 0.0
    for i, inst in enumerate(instances(args.multi_role, args.instances, args.seed,
                                       args.min_nodes, args.max_nodes)):
        r = run(inst)
        counts[r["verdict"]] += 1
        t_gang += r.get("t_gang", 0.0)
        t_cpsat += r.get("t_cpsat", 0.0)
        if r["verdict"] == "disagree":
            print(f"instance {i}: gang {r['gang']} vs CP-SAT {r['cpsat']}: {inst.gang()!r}")
    decided = counts["agree"] + counts["disagree"]
    shape = "issue 15's multi-role shapes" if args.multi_role else "up to 3 roles"
    print(f"instances: {args.instances} (up to {args.max_nodes} nodes, {shape})")
    for k, v in counts.items():
        print(f"  {k:14s} {v}")
    print(f"agreement: {counts['agree']}/{decided}")
    print(f"time: gang {t_gang * 1e3:.1f} ms, CP-SAT {t_cpsat * 1e3:.1f} ms "
          f"(CP-SAT/gang = {t_cpsat / max(t_gang, 1e-9):.0f}x)")
    if counts["disagree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
