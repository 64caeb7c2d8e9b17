"""The same random instances through gang and through an exact CP-SAT model
(reference.py beside this file): agreement, and the speed ratio.

    python examples/python/compare_cpsat.py --instances 200 --max-nodes 200

For each instance (up to --max-nodes nodes, 3 roles) gang answers where the gang lands
(or that it does not fit); CP-SAT answers, for each level of the walk in turn, whether
the gang fits with its constrained members in one domain. They agree when gang places
the gang at the first level CP-SAT finds feasible (and the placement verifies), or both
say it does not fit. Multi-role gangs may come back "undecided" from gang when its
exact search exhausts its budget; those are reported separately.
"""

import argparse
import pathlib
import random
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import gang  # noqa: E402
from reference import check_placement, cpsat_depth, random_instance  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--max-nodes", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    counts = {"agree": 0, "disagree": 0, "undecided": 0, "contradictory": 0, "cpsat timeout": 0}
    t_gang = t_cpsat = 0.0
    for i in range(args.instances):
        inst = random_instance(rng, max_nodes=args.max_nodes)
        inv = inst.inventory()
        g = inst.gang()
        t = time.perf_counter()
        try:
            result = inv.try_place(g)
        except gang.Contradictory:
            counts["contradictory"] += 1
            continue
        t_gang += time.perf_counter() - t
        t = time.perf_counter()
        want = cpsat_depth(inst)
        t_cpsat += time.perf_counter() - t
        if want == "unknown":
            counts["cpsat timeout"] += 1
        elif isinstance(result, gang.Diagnosis) and result.status == "undecided":
            counts["undecided"] += 1
        elif isinstance(result, gang.Diagnosis):
            counts["agree" if want is None else "disagree"] += 1
        else:
            ok = (want is not None and inst.depth(result.level) == want
                  and not check_placement(inst, result))
            counts["agree" if ok else "disagree"] += 1
            if not ok:
                print(f"instance {i}: gang {result} vs CP-SAT depth {want}")
    decided = counts["agree"] + counts["disagree"]
    print(f"instances: {args.instances} (up to {args.max_nodes} nodes, 3 roles)")
    for k, v in counts.items():
        print(f"  {k:14s} {v}")
    print(f"agreement: {counts['agree']}/{decided}")
    print(f"time: gang {t_gang * 1e3:.1f} ms, CP-SAT {t_cpsat * 1e3:.1f} ms "
          f"(CP-SAT/gang = {t_cpsat / max(t_gang, 1e-9):.0f}x)")
    if counts["disagree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
