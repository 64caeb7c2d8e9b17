"""What "fits" means, written out plainly: the reference the gang tests compare against.

This module is independent of gang's solver. It describes an instance as plain data
(nodes with labels, capacity, external use, a taint; roles with counts, per-member
requests, a selector, a toleration, max_per_node, elastic minimum), states the rules of
the README's "Semantics" directly, and answers the placement question in two independent ways:

* `brute_force` enumerates every assignment (tiny instances only), and
* `cpsat_fits` / `cpsat_max_members` build an exact CP-SAT model (OR-Tools).

`check_placement` verifies any placement gang returns against the same rules.

The rules, for a gang with `required` / `preferred` levels and optional slices:

1. A member of a role fits a node when the node is schedulable, its labels match the
   role's selector, every NoSchedule taint of the node is tolerated, and every
   requested resource fits: free = capacity - used (never below 0) >= request.
   Members never merge across nodes; requests of 0 are ignored.
2. Each role places between `min_count` (default: count) and `count` members, at most
   `max_per_node` on one node, and the members on a node never exceed its free
   capacity in any resource, summed over roles.
3. Locality: every member of a constrained role sits in ONE domain of the chosen level.
   A domain is a full path of label values (b1/r1 and b2/r1 differ); a node missing a
   level's label is outside every domain of that level and finer. The node level
   (kubernetes.io/hostname) means one node; depth 0 is the whole cluster.
4. Levels tried (the "walk"): `required` only → that level; `preferred` → from it
   outwards one level at a time, never above `required` (down to the whole cluster
   when there is no `required`); neither → the whole cluster. The answer's level is
   the first level of the walk at which some domain fits.
5. Slices (level, size): within the chosen domain, each domain of the slice level
   holds a multiple of `size` members of each constrained role, and sliced members sit
   on nodes that have the slice level's label.
6. Elastic roles: among the domains of the answer's level, the placement takes the
   most members in total, and in its domain the lexicographically largest per-role
   counts (roles in the order given).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Optional

HOSTNAME = "kubernetes.io/hostname"
RESOURCES = ("gpu", "cpu", "mem")


@dataclasses.dataclass
class NodeCase:
    name: str
    path: tuple  # label values of the levels, outermost first; shorter if a label is missing
    cap: dict  # resource -> whole units
    used: dict
    schedulable: bool = True
    kind: str = "a"  # label "kind"
    taint: Optional[str] = None  # taint dedicated=<value>:NoSchedule

    def free(self, res: str) -> int:
        return max(self.cap.get(res, 0) - self.used.get(res, 0), 0)


@dataclasses.dataclass
class RoleCase:
    name: str
    count: int
    req: dict  # resource -> whole units per member
    min_count: Optional[int] = None
    kind: Optional[str] = None  # node selector kind=<value>
    tolerates: Optional[str] = None  # tolerates dedicated=<value>
    max_per_node: Optional[int] = None
    constrained: bool = True

    @property
    def min(self) -> int:
        return self.count if self.min_count is None else self.min_count


@dataclasses.dataclass
class Instance:
    levels: list  # label level keys, outermost first
    nodes: list
    roles: list
    required: Optional[str] = None  # a level key, HOSTNAME or None
    preferred: Optional[str] = None
    slices: list = dataclasses.field(default_factory=list)  # [(level, size)]
    policy: str = "best-fit"

    # -------------------------------------------------------------- to gang objects

    def inventory(self, reverse: bool = False):
        import gang

        nodes = []
        for n in self.nodes:
            labels = {"kind": n.kind}
            labels.update(zip(self.levels, n.path))
            taints = [gang.Taint("dedicated", n.taint)] if n.taint else []
            nodes.append(gang.Node(n.name, labels=labels, capacity=n.cap, used=n.used,
                                   taints=taints, schedulable=n.schedulable))
        if reverse:
            nodes.reverse()
        return gang.Inventory(self.levels, nodes)

    def gang(self):
        import gang

        roles = [
            gang.Role(r.name, r.count, requests={k: v for k, v in r.req.items() if v},
                      min_count=r.min_count,
                      node_selector={"kind": r.kind} if r.kind else None,
                      tolerations=[gang.Toleration.equal("dedicated", r.tolerates)] if r.tolerates else None,
                      max_per_node=r.max_per_node, constrained=r.constrained)
            for r in self.roles
        ]
        return gang.Gang("g", roles, required=self.required, preferred=self.preferred,
                         slices=self.slices, policy=self.policy)

    # -------------------------------------------------------------- topology

    def depth(self, level: Optional[str]) -> int:
        """0 for the whole cluster, 1..L for label levels, L+1 for the node level."""
        if level is None:
            return 0
        if level == HOSTNAME:
            return len(self.levels) + 1
        return self.levels.index(level) + 1

    def domain_of(self, n: int, depth: int):
        """The domain of node n at depth (a tuple), or None when it lacks a label."""
        if depth == 0:
            return ()
        if depth > len(self.levels):
            return ("#node", self.nodes[n].name)
        path = self.nodes[n].path
        return tuple(path[:depth]) if len(path) >= depth else None

    def domains(self, depth: int) -> list:
        return sorted({d for n in range(len(self.nodes)) if (d := self.domain_of(n, depth)) is not None})

    def walk(self) -> list:
        """Depths to try, in order (rule 4)."""
        if not any(r.constrained for r in self.roles):
            return [0]
        req, pref = self.depth(self.required), self.depth(self.preferred)
        if self.preferred is not None:
            low = req if self.required is not None else 0
            return list(range(pref, low - 1, -1))
        return [req]

    # -------------------------------------------------------------- rule 1

    def eligible(self, role: RoleCase, node: NodeCase) -> bool:
        return (node.schedulable
                and (role.kind is None or role.kind == node.kind)
                and (node.taint is None or node.taint == role.tolerates))

    def node_fit(self, role: RoleCase, n: int) -> int:
        """Members of `role` node n can take on its own (rules 1-2)."""
        node = self.nodes[n]
        if not self.eligible(role, node):
            return 0
        fit = role.count if role.max_per_node is None else min(role.count, role.max_per_node)
        for res, q in role.req.items():
            if q > 0:
                fit = min(fit, node.free(res) // q)
        return fit


# ---------------------------------------------------------------------- the checker

def check_placement(inst: Instance, placement) -> list:
    """Every rule a placement must obey; returns the broken ones (empty when valid)."""
    problems = []
    x = [[0] * len(inst.nodes) for _ in inst.roles]
    index = {n.name: i for i, n in enumerate(inst.nodes)}
    roles = {r.name: i for i, r in enumerate(inst.roles)}
    for a in placement.assignments:
        if a.count <= 0:
            problems.append(f"empty assignment {a}")
        x[roles[a.role]][index[a.node]] += a.count
    depth = inst.depth(placement.level)
    if inst.required is not None and any(r.constrained for r in inst.roles):
        if depth < inst.depth(inst.required):
            problems.append(f"placed at {placement.level}, above the required {inst.required}")
    if inst.preferred is not None and any(r.constrained for r in inst.roles):
        if depth > inst.depth(inst.preferred):
            problems.append(f"placed at {placement.level}, below the preferred {inst.preferred}")
    # The reported domain, as a tuple like domain_of's.
    values = list(placement.domain_labels.values())
    if depth > len(inst.levels):
        want = ("#node", values[-1])
    else:
        want = tuple(values)
    for i, role in enumerate(inst.roles):
        total = sum(x[i])
        if not role.min <= total <= role.count:
            problems.append(f"{role.name}: {total} placed, outside [{role.min}, {role.count}]")
        if placement.placed[role.name] != total:
            problems.append(f"{role.name}: placed says {placement.placed[role.name]}, assignments {total}")
        for n, k in enumerate(x[i]):
            if k == 0:
                continue
            if not inst.eligible(role, inst.nodes[n]):
                problems.append(f"{role.name} on ineligible node {inst.nodes[n].name}")
            if role.max_per_node is not None and k > role.max_per_node:
                problems.append(f"{role.name}: {k} on {inst.nodes[n].name} > max_per_node")
            if role.constrained and inst.domain_of(n, depth) != want:
                problems.append(f"{role.name}: {inst.nodes[n].name} outside domain {want}")
        for level, size in inst.slices if role.constrained else []:
            per = {}
            for n, k in enumerate(x[i]):
                if k:
                    d = inst.domain_of(n, inst.depth(level))
                    if d is None:
                        problems.append(f"{role.name}: sliced member on {inst.nodes[n].name} outside every {level}")
                    per[d] = per.get(d, 0) + k
            if any(v % size for v in per.values()):
                problems.append(f"{role.name}: not whole slices of {size} per {level}: {per}")
    for n, node in enumerate(inst.nodes):
        for res in RESOURCES:
            load = sum(x[i][n] * r.req.get(res, 0) for i, r in enumerate(inst.roles))
            if load > node.free(res):
                problems.append(f"{node.name} over capacity in {res}: {load} > {node.free(res)}")
    return problems


# ---------------------------------------------------------------------- brute force

def _exists(inst: Instance, counts: list, depth: int, dom) -> bool:
    """Is there an assignment of exactly `counts`, constrained roles inside `dom`?"""
    nroles, nnodes = len(inst.roles), len(inst.nodes)
    left = [{r: node.free(r) for r in RESOURCES} for node in inst.nodes]
    x = [[0] * nnodes for _ in range(nroles)]

    def slices_ok() -> bool:
        for i, role in enumerate(inst.roles):
            if not role.constrained:
                continue
            for level, size in inst.slices:
                per = {}
                for n in range(nnodes):
                    if x[i][n]:
                        d = inst.domain_of(n, inst.depth(level))
                        if d is None:
                            return False
                        per[d] = per.get(d, 0) + x[i][n]
                if any(v % size for v in per.values()):
                    return False
        return True

    def go(i: int, n: int, rem: int) -> bool:
        if i == nroles:
            return slices_ok()
        if n == nnodes:
            return rem == 0 and go(i + 1, 0, counts[i + 1] if i + 1 < nroles else 0)
        role = inst.roles[i]
        hi = rem
        node = inst.nodes[n]
        if not inst.eligible(role, node) or (role.constrained and depth > 0 and inst.domain_of(n, depth) != dom):
            hi = 0
        if role.max_per_node is not None:
            hi = min(hi, role.max_per_node)
        for res, q in role.req.items():
            if q > 0:
                hi = min(hi, left[n][res] // q)
        for k in range(hi, -1, -1):
            x[i][n] = k
            for res, q in role.req.items():
                left[n][res] -= k * q
            ok = go(i, n + 1, rem - k)
            for res, q in role.req.items():
                left[n][res] += k * q
            if ok:
                return True
        x[i][n] = 0
        return False

    return go(0, 0, counts[0] if counts else 0)


def _lexmax(inst: Instance, depth: int, dom):
    ranges = [range(r.count, r.min - 1, -1) for r in inst.roles]
    for counts in itertools.product(*ranges):
        if _exists(inst, list(counts), depth, dom):
            return list(counts)
    return None


def brute_force(inst: Instance):
    """(depth, {domain: lexmax counts}) for the first depth of the walk where some
    domain fits, or None when nothing fits. Tiny instances only."""
    for depth in inst.walk():
        doms = inst.domains(depth) if depth > 0 else [()]
        fits = {}
        for d in doms:
            v = _lexmax(inst, depth, d)
            if v is not None:
                fits[d] = v
        if fits:
            return depth, fits
    return None


# ---------------------------------------------------------------------- CP-SAT

def _model(inst: Instance, depth: int):
    """The CP-SAT model: x[r, n] members of role r on node n, with every rule above."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = {}
    for r, role in enumerate(inst.roles):
        for n, node in enumerate(inst.nodes):
            ub = inst.node_fit(role, n)  # rules 1-2: eligibility, shape, max_per_node
            if ub > 0:
                x[r, n] = m.NewIntVar(0, ub, f"x[{role.name},{node.name}]")
    # Rule 2: each role places between min_count and count members...
    for r, role in enumerate(inst.roles):
        members = [x[r, n] for n in range(len(inst.nodes)) if (r, n) in x]
        m.Add(sum(members) >= role.min)
        m.Add(sum(members) <= role.count)
    # ...and no node gives more than its free capacity, summed over roles.
    for n, node in enumerate(inst.nodes):
        for res in RESOURCES:
            load = [role.req.get(res, 0) * x[r, n] for r, role in enumerate(inst.roles)
                    if (r, n) in x and role.req.get(res, 0)]
            if load:
                m.Add(sum(load) <= node.free(res))
    # Rule 3: constrained members share one domain of the level.
    if depth > 0 and any(r.constrained for r in inst.roles):
        use = {d: m.NewBoolVar(f"use[{'/'.join(map(str, d))}]") for d in inst.domains(depth)}
        if not use:
            m.Add(0 == 1)  # no domain at this level at all
        else:
            m.AddExactlyOne(use.values())
        for (r, n), v in x.items():
            if inst.roles[r].constrained:
                d = inst.domain_of(n, depth)
                if d is None:
                    m.Add(v == 0)
                else:
                    m.Add(v == 0).OnlyEnforceIf(use[d].Not())
    # Rule 5: whole slices per slice-level domain, sliced members inside such domains.
    for level, size in inst.slices:
        sd = inst.depth(level)
        for r, role in enumerate(inst.roles):
            if not role.constrained:
                continue
            groups = {}
            for n in range(len(inst.nodes)):
                if (r, n) in x:
                    d = inst.domain_of(n, sd)
                    if d is None:
                        m.Add(x[r, n] == 0)
                    else:
                        groups.setdefault(d, []).append(x[r, n])
            for d, vs in groups.items():
                k = m.NewIntVar(0, role.count // size, f"slices[{role.name},{d}]")
                m.Add(sum(vs) == size * k)
    return m, x


def _solve(m, time_limit: float):
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 2
    status = solver.Solve(m)
    return solver, status


def cpsat_fits(inst: Instance, depth: int, time_limit: float = 30.0) -> Optional[bool]:
    """Whether the gang fits with its constrained members in one domain of `depth`
    (None if CP-SAT ran out of time)."""
    from ortools.sat.python import cp_model

    m, _ = _model(inst, depth)
    _, status = _solve(m, time_limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    return None


def cpsat_max_members(inst: Instance, depth: int, time_limit: float = 30.0) -> Optional[int]:
    """The most members that fit with constrained members in one domain of `depth`
    (None if infeasible or out of time)."""
    from ortools.sat.python import cp_model

    m, x = _model(inst, depth)
    m.Maximize(sum(x.values()))
    solver, status = _solve(m, time_limit)
    if status == cp_model.OPTIMAL:
        return int(round(solver.ObjectiveValue()))
    return None


def cpsat_depth(inst: Instance, time_limit: float = 30.0):
    """The first depth of the walk at which the gang fits; None when none does;
    "unknown" when CP-SAT ran out of time first."""
    for depth in inst.walk():
        f = cpsat_fits(inst, depth, time_limit)
        if f is None:
            return "unknown"
        if f:
            return depth
    return None


# ---------------------------------------------------------------------- random instances

def random_instance(rng: random.Random, max_nodes: int = 200, max_roles: int = 3,
                    slices: bool = True) -> Instance:
    """A random cluster of up to `max_nodes` nodes (blocks of racks of 8-GPU nodes, some
    busy, some cordoned, tainted or unlabelled) and a gang of up to `max_roles` roles."""
    levels = ["topology.example.com/block", "topology.example.com/rack"]
    n_nodes = rng.randint(4, max_nodes)
    blocks = rng.randint(1, 4)
    racks = rng.randint(1, 6)
    nodes = []
    for i in range(n_nodes):
        b, r = rng.randrange(blocks), rng.randrange(racks)
        path = (f"b{b}", f"r{r}")
        roll = rng.random()
        if roll < 0.03:
            path = ()
        elif roll < 0.06:
            path = path[:1]
        gpu = rng.choice([0, 4, 8, 8, 8])
        nodes.append(NodeCase(
            name=f"n{i:03d}", path=path,
            cap={"gpu": gpu, "cpu": rng.choice([32, 64, 96]), "mem": rng.choice([256, 512, 1024])},
            used={"gpu": rng.randint(0, gpu), "cpu": rng.randint(0, 48), "mem": rng.randint(0, 256)},
            schedulable=rng.random() > 0.05,
            kind=rng.choice("aab"),
            taint="training" if rng.random() < 0.1 else None,
        ))
    total_free_gpu = sum(n.free("gpu") for n in nodes)
    roles = []
    for j in range(rng.randint(1, max_roles)):
        if j == 0:
            g = rng.choice([1, 1, 2, 4, 8])
            count = max(1, int(rng.uniform(0.05, 0.6) * total_free_gpu / g))
            count = min(count, 64)
            req = {"gpu": g, "cpu": rng.choice([0, 1, 4]), "mem": rng.choice([0, 16, 64])}
        else:
            count = rng.randint(1, 8)
            req = {"gpu": rng.choice([0, 0, 1]), "cpu": rng.choice([1, 2, 8]), "mem": rng.choice([8, 32])}
        roles.append(RoleCase(
            name=f"r{j}", count=count, req=req,
            min_count=rng.randint(max(1, count // 2), count) if rng.random() < 0.15 else None,
            kind=rng.choice([None, None, "a"]),
            tolerates="training" if rng.random() < 0.3 else None,
            max_per_node=rng.choice([None, None, None, 2, 4]),
            constrained=j == 0 or rng.random() < 0.7,
        ))
    choices = [None, levels[0], levels[1], HOSTNAME]
    required = rng.choice(choices)
    preferred = None
    if rng.random() < 0.3:
        lo = choices.index(required) if required else 1
        preferred = rng.choice(choices[max(lo, 1):])
    inst = Instance(levels, nodes, roles, required, preferred, policy=rng.choice(["best-fit", "most-free", "balanced"]))
    if slices and len(roles) == 1 and rng.random() < 0.2:
        role = roles[0]
        size = rng.choice([d for d in (2, 4) if role.count % d == 0 and role.min % d == 0] or [1])
        top = inst.depth(required) if required else 1
        level = rng.choice(levels + [HOSTNAME])
        if size > 1 and inst.depth(level) >= max(top, 1) and required != HOSTNAME:
            inst.slices = [(level, size)]
    return inst
