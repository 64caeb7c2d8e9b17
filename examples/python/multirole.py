"""Issue 15's instances and the exact answers to check them against (beside reference.py).

* `multirole_instance`: the multi-role shapes of issue 15 — seeded random clusters of
  40-250 nodes (blocks of racks; GPU, CPU and memory nodes, partly used) and gangs of
  2-4 roles of up to 24 members each (GPU-heavy, CPU-heavy and memory-heavy members),
  unconstrained or with a required / preferred rack or block.
* `lex_instance`, `cpsat_lex` and `placement_vector`: the lexicographic compactness
  objective on small instances (at most 8 nodes, 1-3 label levels, 1-3 roles). A
  placement's vector counts the domains its members use at each level below the level
  it was placed at, outermost first, ending with nodes; CP-SAT finds the smallest
  vector of any feasible placement at the first level of the walk that fits.
* `reproducer`: issue 15's adversarial shape (racks of 4 nodes with 3 GPUs and 4 CPUs;
  roles of 4 and 2 two-GPU members, rack required: each fits every rack alone, never
  both), optionally with an unconstrained one-CPU launcher.
* `scenario_document`: an instance as a scenario file (cluster + gang, and the status
  CP-SAT found as its expectation), for the Rust benches (benches/data/).

Everything here is plain Python and OR-Tools; nothing asks gang what the answer is.
"""

from __future__ import annotations

import random
from typing import Optional

from reference import HOSTNAME, Instance, NodeCase, RoleCase, _model, _solve, cpsat_depth

LEVELS = ["topology.example.com/block", "topology.example.com/rack"]

# Node shapes: (gpu, cpu, mem) capacity choices. GPU nodes with 3 GPUs hold one 2-GPU
# member each (issue 15's trivially infeasible case).
_NODE_SHAPES = {
    "gpu": ([3, 4, 8, 8], [32, 64, 96], [256, 512, 1024]),
    "cpu": ([0], [64, 96, 128], [256, 512]),
    "mem": ([0], [32, 64], [1024, 2048]),
}
# Member shapes: (gpu, cpu, mem) request choices.
_ROLE_SHAPES = {
    "gpu-heavy": ([1, 2, 2, 4], [1, 2, 4, 8], [8, 32, 64]),
    "cpu-heavy": ([0], [8, 16, 24, 32], [8, 32, 64]),
    "mem-heavy": ([0], [1, 2, 4], [64, 128, 256]),
}
# The gang's topology: (required, preferred).
_TOPOLOGIES = [
    (None, None),
    (LEVELS[1], None),
    (LEVELS[0], None),
    (None, LEVELS[1]),
    (None, LEVELS[0]),
    (LEVELS[0], LEVELS[1]),
]


def _node(rng: random.Random, name: str, path: tuple, kind: str) -> NodeCase:
    gpus, cpus, mems = _NODE_SHAPES[kind]
    cap = {"gpu": rng.choice(gpus), "cpu": rng.choice(cpus), "mem": rng.choice(mems)}
    busy = rng.choice([0.0, rng.uniform(0.2, 0.9), rng.uniform(0.4, 0.95), rng.uniform(0.4, 0.95)])  # partly used
    used = {r: min(c, int(round(c * min(1.0, max(0.0, busy + rng.uniform(-0.2, 0.2))))))
            for r, c in cap.items()}
    return NodeCase(name=name, path=path, cap=cap, used=used,
                    schedulable=rng.random() > 0.02)


def multirole_instance(rng: random.Random, min_nodes: int = 40, max_nodes: int = 250) -> Instance:
    """A random cluster of `min_nodes`..`max_nodes` nodes and a gang of 2-4 roles of
    1-24 members (issue 15's shapes)."""
    n_nodes = rng.randint(min_nodes, max_nodes)
    blocks = rng.randint(1, 4)
    racks = rng.randint(2, 8)  # rack values repeat across blocks
    mix = [rng.random() + 0.5, rng.random(), rng.random()]  # weights of gpu / cpu / mem nodes
    nodes = []
    for i in range(n_nodes):
        kind = rng.choices(["gpu", "cpu", "mem"], weights=mix)[0]
        path = (f"b{rng.randrange(blocks)}", f"r{rng.randrange(racks)}")
        nodes.append(_node(rng, f"n{i:03d}", path, kind))
    roles = []
    n_roles = rng.choice([2, 3, 4, 4])
    theme = rng.choice(list(_ROLE_SHAPES))  # roles competing for one resource are hardest
    for j in range(n_roles):
        shape = theme if rng.random() < 0.5 else rng.choice(list(_ROLE_SHAPES))
        gpus, cpus, mems = _ROLE_SHAPES[shape]
        count = rng.choice([rng.randint(1, 24), rng.randint(12, 24)])
        roles.append(RoleCase(
            name=f"{shape.split('-')[0]}{j}", count=count,
            req={"gpu": rng.choice(gpus), "cpu": rng.choice(cpus), "mem": rng.choice(mems)},
            min_count=rng.randint(max(1, count // 2), count) if rng.random() < 0.1 else None,
            max_per_node=rng.choice([None] * 6 + [1, 2, 4]),
            # A launcher-like role placed anywhere, now and then (never all of them).
            constrained=j == 0 or rng.random() > 0.15,
        ))
    required, preferred = rng.choice(_TOPOLOGIES)
    return Instance(list(LEVELS), nodes, roles, required, preferred,
                    policy=rng.choice(["best-fit", "most-free", "balanced"]))


# ---------------------------------------------------------------------- compactness

_LEX_LEVELS = ["topology.example.com/zone", "topology.example.com/block", "topology.example.com/rack"]


def lex_instance(rng: random.Random, max_nodes: int = 8, max_roles: int = 3) -> Instance:
    """A small instance (2-`max_nodes` fully labelled nodes, 1-3 label levels, 1-`max_roles`
    roles, all constrained or all unconstrained, no slices, no elastic roles) on which
    CP-SAT finds the most compact placement quickly."""
    levels = _LEX_LEVELS[-rng.randint(1, 3):]
    fanout = [rng.randint(1, 3) for _ in levels]
    nodes = []
    for i in range(rng.randint(2, max_nodes)):
        path = tuple(f"{lv.rsplit('/', 1)[1][0]}{rng.randrange(f)}" for lv, f in zip(levels, fanout))
        cap = {"gpu": rng.choice([0, 2, 3, 4, 6, 8, 8]), "cpu": rng.choice([4, 8, 16]), "mem": 64}
        used = {"gpu": rng.randint(0, cap["gpu"]) if rng.random() < 0.3 else 0,
                "cpu": rng.randint(0, cap["cpu"] // 2), "mem": 0}
        nodes.append(NodeCase(name=f"n{i}", path=path, cap=cap, used=used))
    constrained = rng.random() < 0.8
    roles = []
    for j in range(rng.randint(1, max_roles)):
        if rng.random() < 0.7:
            req = {"gpu": rng.choice([1, 1, 2, 3]), "cpu": rng.choice([0, 1]), "mem": 0}
        else:
            req = {"gpu": 0, "cpu": rng.choice([1, 2, 4]), "mem": 0}
        roles.append(RoleCase(name=f"r{j}", count=rng.randint(1, 6), req=req,
                              max_per_node=rng.choice([None, None, None, 1, 2]),
                              constrained=constrained))
    choices = [None] + levels + [HOSTNAME]
    required = rng.choice(choices) if constrained else None
    preferred = None
    if constrained and rng.random() < 0.4:
        lo = choices.index(required) if required else 1
        preferred = rng.choice(choices[max(lo, 1):])
    return Instance(levels, nodes, roles, required, preferred,
                    policy=rng.choice(["best-fit", "most-free", "balanced"]))


def _vector_members(inst: Instance, depth: int) -> list:
    """The roles whose members the vector counts: the constrained ones (which share the
    domain), or every role when the placement is cluster-wide."""
    return [r for r, role in enumerate(inst.roles) if depth == 0 or role.constrained]


def placement_vector(inst: Instance, placement) -> tuple:
    """The domains a placement uses at each level below its own, outermost first, then
    its nodes, counted from its assignments (independently of `domains_used`)."""
    depth = inst.depth(placement.level)
    counted = {inst.roles[r].name for r in _vector_members(inst, depth)}
    index = {n.name: i for i, n in enumerate(inst.nodes)}
    return vector_of(inst, depth, [index[a.node] for a in placement.assignments
                                   if a.role in counted and a.count > 0])


def cpsat_lex(inst: Instance, time_limit: float = 30.0):
    """(depth, smallest vector) over every feasible placement at the first level of the
    walk where the gang fits; None when it fits nowhere; "unknown" when CP-SAT ran out of
    time. Small instances only (weights are powers of nodes + 1)."""
    from ortools.sat.python import cp_model

    depth = cpsat_depth(inst, time_limit)
    if depth is None or depth == "unknown":
        return depth
    m, x = _model(inst, depth)
    nn = len(inst.nodes)
    counted = _vector_members(inst, depth)
    on = {}  # node -> bool: some counted member sits on it
    for n in range(nn):
        vs = [x[r, n] for r in counted if (r, n) in x]
        if vs:
            on[n] = m.NewBoolVar(f"on[{n}]")
            for v in vs:
                m.Add(v == 0).OnlyEnforceIf(on[n].Not())
    entries = []  # one linear expression per entry of the vector
    for k in range(depth + 1, len(inst.levels) + 1):
        groups = {}
        for n, b in on.items():
            groups.setdefault(inst.domain_of(n, k), []).append(b)
        used = []
        for d, bs in groups.items():
            u = m.NewBoolVar(f"use[{k},{'/'.join(d)}]")
            for b in bs:
                m.AddImplication(b, u)
            used.append(u)
        entries.append(sum(used))
    if depth <= len(inst.levels):
        entries.append(sum(on.values()))
    if not entries:
        return depth, ()
    base = nn + 1
    m.Minimize(sum(e * base ** (len(entries) - 1 - i) for i, e in enumerate(entries)))
    solver, status = _solve(m, time_limit)
    if status != cp_model.OPTIMAL:
        return "unknown"
    value = int(round(solver.ObjectiveValue()))
    vec = []
    for i in range(len(entries)):
        w = base ** (len(entries) - 1 - i)
        vec.append(value // w)
        value %= w
    return depth, tuple(vec)


# ---------------------------------------------------------------------- reproducer

def reproducer(nodes: int, launcher: bool = False):
    """Issue 15's adversarial multi-role query as (inventory, gang): racks of 4 nodes
    with {"gpu": 3, "cpu": 4}; roles a (4) and b (2) of {"gpu": 2}, rack required
    (each fits every rack alone, never both: unschedulable); `launcher` adds an
    unconstrained one-CPU role."""
    import gang

    level = "topology.example.com/rack"
    inv = gang.Inventory([level], [
        gang.Node(f"n{i:06d}", labels={level: f"r{i // 4:05d}"}, capacity={"gpu": 3, "cpu": 4})
        for i in range(nodes)])
    roles = [gang.Role("a", 4, requests={"gpu": 2}), gang.Role("b", 2, requests={"gpu": 2})]
    if launcher:
        roles.insert(0, gang.Role("launcher", 1, requests={"cpu": 1}, constrained=False))
    return inv, gang.Gang("adversarial", roles, required=level)


# ---------------------------------------------------------------------- export

def scenario_document(inst: Instance, description: str, expect_status: Optional[str]) -> dict:
    """The instance as a scenario document (README "Scenario files"): its cluster, its
    gang and, when given, the status CP-SAT found ("placed" / "unschedulable")."""
    import json

    doc = {"description": description}
    doc.update(json.loads(inst.inventory().to_json()))
    doc["gang"] = json.loads(inst.gang().to_json())
    if expect_status is not None:
        doc["expect"] = {"status": expect_status}
    return doc


# ---------------------------------------------------------------------- brute force

def vector_of(inst: Instance, depth: int, nodes_used) -> tuple:
    """The vector of a placement at `depth` whose counted members sit on `nodes_used`
    (node indices): distinct domains per level below `depth`, then distinct nodes."""
    used = set(nodes_used)
    vec = [len({inst.domain_of(n, k) for n in used}) for k in range(depth + 1, len(inst.levels) + 1)]
    if depth <= len(inst.levels):
        vec.append(len(used))
    return tuple(vec)


def brute_lex(inst: Instance):
    """As `cpsat_lex`, by enumerating every assignment (tiny instances only: a few
    nodes, roles of a few members, no elastic roles or slices)."""
    import itertools

    nn = len(inst.nodes)

    def spreads(r):  # every way to put exactly count members of role r on the nodes
        fit = [inst.node_fit(inst.roles[r], n) for n in range(nn)]
        return [v for v in itertools.product(*(range(f + 1) for f in fit))
                if sum(v) == inst.roles[r].count]

    feasible = []
    for xs in itertools.product(*(spreads(r) for r in range(len(inst.roles)))):
        if all(sum(xs[r][n] * role.req.get(res, 0) for r, role in enumerate(inst.roles))
               <= node.free(res) for n, node in enumerate(inst.nodes) for res in ("gpu", "cpu", "mem")):
            feasible.append(xs)
    for depth in inst.walk():
        best = None
        for xs in feasible:
            doms = {inst.domain_of(n, depth) for r, role in enumerate(inst.roles)
                    if role.constrained for n in range(nn) if xs[r][n]}
            if depth > 0 and (len(doms) > 1 or None in doms):
                continue
            counted = _vector_members(inst, depth)
            v = vector_of(inst, depth, [n for r in counted for n in range(nn) if xs[r][n]])
            best = v if best is None else min(best, v)
        if best is not None:
            return depth, best
    return None
