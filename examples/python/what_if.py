"""What-if over a cluster snapshot: for a gang, which rack would it land in now, and if
none, why not — and what would change the answer.

    python examples/python/what_if.py examples/scenarios/02-seven-free-no-rack-of-four.json
    python examples/python/what_if.py SNAPSHOT.json --workers 2 --gpus 1

The snapshot is a scenario file (the README's "Scenario files"): its cluster is the snapshot, its gang the
starting question. The script then varies the gang's size and the topology constraint.
"""

import argparse

import gang


def describe(inventory, g):
    result = inventory.try_place(g)
    if isinstance(result, gang.Placement):
        where = result.domain or "the cluster (split)"
        level = (result.level or "cluster").rsplit("/", 1)[-1]
        return f"lands in {level} {where}: {result.nodes}"
    d = result
    best = d.best
    lines = [f"does not fit ({d.status})."]
    if best is not None:
        fits = ", ".join(f"{f.fits} of {f.needed} {f.role}" for f in best.fits)
        why = ", ".join(best.short_of) if best.short_of else best.reason
        lines.append(f"    closest: {best.domain or 'the cluster'} takes {fits} (short of: {why})")
    for r in d.roles:
        e = r.excluded
        lines.append(f"    {r.role}: {r.cluster_fit} fit cluster-wide; excluded nodes: "
                     f"{e.cordoned} cordoned, {e.selector} selector, {e.taint} taint, "
                     f"{e.missing_label} unlabelled, {e.too_small} too small")
    if d.relaxation is not None:
        lines.append(f"    relaxing to {d.relaxation.level or 'no constraint'} would use "
                     f"{d.relaxation.domain or 'the cluster'} (across {d.relaxation.spans})")
    lines.append(f"    in words: {d}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("snapshot", help="a scenario file: its cluster and its gang")
    ap.add_argument("--level", help="the level to ask for (default: the gang's required level)")
    args = ap.parse_args()

    scenario = gang.load_scenario(args.snapshot)
    inventory = scenario.inventory
    base = scenario.gang
    level = args.level or base.required or base.preferred or inventory.levels[-1]
    print(f"snapshot: {len(inventory)} nodes, {len(inventory.domains(level))} domains of {level}")
    for dom in inventory.domains(level):
        print(f"  {dom}")

    role = base.roles[0]
    print(f"\nthe gang as given ({base.members} members, required={base.required}):")
    print("  " + describe(inventory, base))

    print(f"\nhow many {role.name}s fit in one {level.rsplit('/', 1)[-1]} now?")
    for count in range(1, role.count + 3):
        resized = gang.Role.from_dict({**role.to_dict(), "count": count, "min_count": None})
        g = gang.Gang(base.name, [resized] + base.roles[1:], required=level, policy=base.policy)
        print(f"  {count:2d}: " + describe(inventory, g).splitlines()[0])

    print(f"\nwith {level} only preferred:")
    g = gang.Gang(base.name, base.roles, preferred=level, policy=base.policy)
    print("  " + describe(inventory, g))


if __name__ == "__main__":
    main()
