"""Property tests: gang against a pure-Python brute-force oracle on tiny clusters.

Same feasibility, the same level of the walk, every placement valid, the most members
and the lexicographic maximum for elastic gangs, the policy's choice for single-role
gangs, determinism (including node order), and monotonicity (more free capacity never
turns a fit into a no-fit). Instances stay within the documented exactness limits
(up to 8 nodes, 3 roles and 6 members), so Undecided is a failure here.
"""

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gang
from reference import HOSTNAME, Instance, NodeCase, RoleCase, brute_force, check_placement

LEVELS = ["zone", "rack"]


@st.composite
def instances(draw):
    nlevels = draw(st.integers(0, 2))
    levels = LEVELS[:nlevels]
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        depth = draw(st.sampled_from([nlevels] * 3 + list(range(nlevels))))
        path = tuple(draw(st.sampled_from("xy")) for _ in range(depth))
        cap = {r: draw(st.integers(0, 4)) for r in ("gpu", "cpu")}
        used = {r: draw(st.integers(0, 2)) for r in ("gpu", "cpu")}
        nodes.append(NodeCase(
            name=f"n{i}", path=path, cap=cap, used=used,
            schedulable=draw(st.booleans()) or draw(st.booleans()),
            kind=draw(st.sampled_from("ab")),
            taint=draw(st.sampled_from([None, None, "x"])),
        ))
    roles = []
    budget = 6
    for j in range(draw(st.integers(1, 3))):
        if budget <= 0:
            break
        count = draw(st.integers(1, min(3, budget)))
        budget -= count
        roles.append(RoleCase(
            name=f"r{j}", count=count,
            req={r: draw(st.integers(0, 2)) for r in ("gpu", "cpu")},
            min_count=draw(st.sampled_from([None, None] + list(range(1, count + 1)))),
            kind=draw(st.sampled_from([None, None, "a", "b"])),
            tolerates=draw(st.sampled_from([None, "x"])),
            max_per_node=draw(st.sampled_from([None, None, 1, 2])),
            constrained=draw(st.booleans()) or draw(st.booleans()),
        ))
    keys = [None] + levels + [HOSTNAME]
    required = draw(st.sampled_from(keys))
    preferred = draw(st.sampled_from(keys))
    if required is not None and preferred is not None and keys.index(preferred) < keys.index(required):
        preferred = None
    inst = Instance(levels, nodes, roles, required, preferred,
                    policy=draw(st.sampled_from(["best-fit", "most-free", "balanced"])))
    if draw(st.integers(0, 4)) == 0 and any(r.constrained for r in roles):
        sizes = [s for s in (2, 3) if all(r.count % s == 0 and r.min % s == 0 for r in roles if r.constrained)]
        top = inst.depth(required) if required else 1
        slice_levels = [k for k in keys[1:] if inst.depth(k) >= top]
        if sizes and slice_levels:
            inst.slices = [(draw(st.sampled_from(slice_levels)), draw(st.sampled_from(sizes)))]
    return inst


def spare(inst, depth, dom):
    role = inst.roles[0]
    cap = sum(inst.node_fit(role, n) for n in range(len(inst.nodes))
              if not role.constrained or depth == 0 or inst.domain_of(n, depth) == dom)
    return cap - role.count


def domain_key(inst, p):
    depth = inst.depth(p.level)
    values = list(p.domain_labels.values())
    if depth > len(inst.levels):
        return ("#node", values[-1])
    return tuple(values)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_against_brute_force(inst):
    inv = inst.inventory()
    inv._validate()
    try:
        result = inv.try_place(inst.gang())
    except gang.Contradictory:
        return  # a structural contradiction (max_per_node vs the widest domain)
    expect = brute_force(inst)
    assert not (isinstance(result, gang.Diagnosis) and result.status == "undecided"), result
    if isinstance(result, gang.Diagnosis):
        assert expect is None, f"gang says no ({result}) but the oracle fits: {expect}"
        assert str(result)
        for role, report in zip(inst.roles, result.roles):
            if any(role.req.values()):  # (a role without requests fits "unboundedly")
                uncapped = dataclasses.replace(role, count=10**6)
                want = sum(inst.node_fit(uncapped, n) for n in range(len(inst.nodes)))
                assert report.cluster_fit == want
    else:
        p = result
        assert expect is not None, f"gang placed {p} but the oracle finds nothing"
        depth, fits = expect
        assert check_placement(inst, p) == []
        assert inst.depth(p.level) == depth, f"placed at {p.level}, oracle depth {depth}"
        assert p.search_complete
        dom = domain_key(inst, p)
        assert dom in fits, f"chosen domain {dom} infeasible for the oracle: {fits}"
        placed = [p.placed[r.name] for r in inst.roles]
        assert sum(placed) == max(sum(v) for v in fits.values()), "not the most members"
        assert placed == fits[dom], "not the lexicographic maximum"
        if len(inst.roles) == 1 and not inst.slices and inst.roles[0].min == inst.roles[0].count:
            spares = [spare(inst, depth, d) for d in fits]
            want = max(spares) if inst.policy == "most-free" else min(spares)
            assert spare(inst, depth, dom) == want, f"policy {inst.policy} picked {p}"

    # The diagnosis-free query finds the same placement, or None.
    found = inv.find(inst.gang())
    assert found == (result if isinstance(result, gang.Placement) else None)

    # Determinism: again, and with the nodes given in reverse order.
    again = inv.try_place(inst.gang())
    assert again == result and hash(again) == hash(result)
    assert again.to_json() == result.to_json()
    assert inst.inventory(reverse=True).try_place(inst.gang()).to_json() == result.to_json()

    # Monotonicity: freeing a node never turns a fit into a no-fit.
    if isinstance(result, gang.Placement):
        for i, node in enumerate(inst.nodes):
            more = dataclasses.replace(inst, nodes=list(inst.nodes))
            more.nodes[i] = dataclasses.replace(node, used={}, cap={k: v + 1 for k, v in node.cap.items()})
            assert isinstance(more.inventory().try_place(more.gang()), gang.Placement), f"freeing {node.name}"
