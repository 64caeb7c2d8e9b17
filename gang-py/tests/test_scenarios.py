"""Every shared scenario file through the Python API, with the same expectations.

The `expect` checks are implemented here over the Python objects (Placement,
Diagnosis, exceptions); `Scenario.check()` (the core's own checker) must agree too.
"""

import json

import pytest

import gang
from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.json"))

# Every key of a scenario's top-level `expect` block that this file knows how to check.
KNOWN = {
    "status", "level", "domain", "nodes", "placed", "domain_counts", "domains_used",
    "message_contains", "diagnosis", "error_kind", "error_field",
}

ERROR_CLASSES = {
    "invalid_quantity": gang.InvalidQuantity,
    "invalid_inventory": gang.InvalidInventory,
    "invalid_request": gang.InvalidRequest,
    "contradictory": gang.Contradictory,
    "invalid_scenario": gang.InvalidScenario,
    "conflict": gang.Conflict,
    "unknown_reservation": gang.UnknownReservation,
    "unknown_node": gang.UnknownNode,
}


def json_subset(want, got, at="diagnosis"):
    """`want` is contained in `got`: objects by listed keys, arrays element-wise."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{at}: expected an object, got {got!r}"
        for k, v in want.items():
            assert k in got, f"{at}.{k}: missing in {got!r}"
            json_subset(v, got[k], f"{at}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{at}: {want!r} vs {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            json_subset(w, g, f"{at}[{i}]")
    else:
        assert want == got, f"{at}: expected {want!r}, got {got!r}"


def outcome(scenario):
    """('placed', Placement) | ('unschedulable'|'undecided', Diagnosis) | ('error', exc)."""
    try:
        result = scenario.inventory.try_place(scenario.gang)
    except gang.GangError as e:
        return "error", e
    found = scenario.inventory.find(scenario.gang)
    if isinstance(result, gang.Placement):
        assert found == result, "find disagrees with try_place"
        return "placed", result
    assert isinstance(result, gang.Diagnosis)
    assert found is None, "find placed what try_place could not"
    return result.status, result


def test_there_are_scenarios():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(path):
    doc = json.loads(path.read_text())
    scenario = gang.load_scenario(path)
    assert scenario.check() == [], "the core's own checker disagrees"
    expect = scenario.expect
    if "steps" in doc:
        run_steps(scenario, doc["steps"])
    if expect is None:
        assert "steps" in doc, f"{path.name} has neither expect nor steps"
        return
    assert expect == doc["expect"]
    unknown = set(expect) - KNOWN
    assert not unknown, f"expectations this test does not check: {unknown}"

    status, result = outcome(scenario)
    if "status" in expect:
        assert status == expect["status"], f"{status}: {result}"

    if status != "error":
        assert "error_kind" not in expect and "error_field" not in expect, f"no error: {status}"
    if status == "error":
        message = str(result)
        if "error_kind" in expect:
            assert result.kind == expect["error_kind"]
            assert type(result) is ERROR_CLASSES[expect["error_kind"]]
        if "error_field" in expect:
            assert result.field == expect["error_field"]
            assert expect["error_field"] in message
    elif status == "placed":
        message = ""
    else:
        message = str(result)
        # place() raises the matching exception carrying the same diagnosis.
        cls = gang.Undecided if status == "undecided" else gang.Unschedulable
        with pytest.raises(cls) as info:
            scenario.place()
        assert info.value.diagnosis == result
        assert str(info.value) == message
    for sub in expect.get("message_contains", []):
        assert sub in message, f"{sub!r} not in {message!r}"
    # The golden paragraph beside the scenario is Python's str() of the diagnosis, as
    # it is the library's Display (gang-core/tests/scenarios.rs) and Go's Text.
    golden = path.with_suffix(".txt")
    if golden.exists():
        assert status in ("unschedulable", "undecided"), status
        assert message == golden.read_text().rstrip("\n")

    if "diagnosis" in expect:
        assert isinstance(result, gang.Diagnosis)
        json_subset(expect["diagnosis"], result.to_dict())

    placement_keys = {"level", "domain", "nodes", "placed", "domain_counts", "domains_used"}
    if placement_keys & set(expect):
        assert isinstance(result, gang.Placement), f"placement expected, got {result}"
    if not isinstance(result, gang.Placement):
        return
    p = result
    if "level" in expect:
        assert p.level == expect["level"]
    if "domain" in expect:
        assert p.domain_labels == expect["domain"]
        assert p.domain == "/".join(p.domain_labels.values())
        assert list(p.domain_labels) == [k for k in scenario.levels + [gang.HOSTNAME_LEVEL] if k in p.domain_labels]
    if "nodes" in expect:
        assert p.nodes == expect["nodes"]
    if "placed" in expect:
        for role, k in expect["placed"].items():
            assert p.placed[role] == k
    if "domain_counts" in expect:
        for level, per in expect["domain_counts"].items():
            assert p.domain_counts(level) == per
    if "domains_used" in expect:
        for level, k in expect["domains_used"].items():
            assert p.domains_used[level] == k
    # The Python views agree with each other.
    assert sum(p.nodes.values()) == p.members == sum(p.placed.values())
    assert sum(r["count"] for r in p.to_records()) == p.members
    assert p.to_dict()["status"] == "placed"


# ---------------------------------------------------------------------- lifecycle steps

STEP_EXPECT = {
    "status", "error_kind", "message_contains", "domain_path", "nodes", "lost",
    "overcommitted", "admitted", "waiting", "replicas", "distinct", "free", "reservations",
    "victims",
}


def run_steps(scenario, steps):
    """Runs a scenario's lifecycle steps on its inventory through the Python API and
    checks each step's expectations (the same rules as the core's step checker)."""
    inv = gang.Inventory.from_json(scenario.inventory.to_json())  # a fresh copy
    names = {}  # reservation name -> id

    def name_of(rid):
        return next((k for k, v in names.items() if v == rid), f"#{rid}")

    for i, step in enumerate(steps):
        op = step["op"]
        seen = {"status": "ok", "message": "", "lost": [], "overcommitted": [], "admitted": [],
                "waiting": [], "replicas": 0, "occupied": []}
        try:
            if op in ("place", "reserve"):
                g = gang.Gang.from_dict(step["gang"]) if "gang" in step else scenario.gang
                r = inv.try_place(g)
                if isinstance(r, gang.Diagnosis):
                    seen["status"], seen["message"] = r.status, str(r)
                else:
                    seen["status"] = "placed"
                    seen["domain_path"], seen["nodes"] = r.domain, r.nodes
                    if op == "reserve":
                        names[step.get("as", g.name)] = inv.reserve(r).id
            elif op in ("preempt", "preempt_reserve"):
                g = gang.Gang.from_dict(step["gang"]) if "gang" in step else scenario.gang
                doc = inv.preempt(g) if op == "preempt" else inv.preempt_reserve(g)
                seen["status"] = doc["status"]
                seen["message"] = doc.get("message", "")
                if doc["status"] == "placed":
                    p = doc["placement"]
                    seen["domain_path"] = "/".join(p["domain"].values())
                    seen["nodes"] = {}
                    for a in p["assignments"]:
                        seen["nodes"][a["node"]] = seen["nodes"].get(a["node"], 0) + a["count"]
                    seen["victims"] = [
                        name_of(gang.ReservationId(v["id"]["id"]))
                        if v["id"]["kind"] == "reservation"
                        else v["id"]["id"]
                        for v in doc["victims"]
                    ]
                    if op == "preempt_reserve":
                        assert doc["reservation"] is not None
                        names[step.get("as", g.name)] = gang.ReservationId(doc["reservation"])
            elif op == "add_evictable":
                unit = step["unit"]
                inv.add_evictable(unit["id"], unit.get("priority", 0), unit.get("nodes"))
            elif op == "release":
                inv.release(names[step["reservation"]])
            elif op == "add_node":
                inv.add_node(step["node_spec"])
            elif op in ("remove_node", "fail_node"):
                lost = (inv.remove_node if op == "remove_node" else inv.fail_node)(step["node"])
                seen["lost"] = [(name_of(l.reservation), l.role, l.count) for l in lost]
            elif op in ("cordon", "uncordon"):
                getattr(inv, op)(step["node"])
            elif op in ("set_capacity", "set_used"):
                over = getattr(inv, op)(step["node"], step["resource"], step["amount"])
                seen["overcommitted"] = [name_of(r) for o in over for r in o.reservations]
            elif op == "replace":
                try:
                    added = inv.replace(names[step["reservation"]])
                    seen["status"], seen["nodes"] = "placed", {}
                    for a in added:
                        seen["nodes"][a.node] = seen["nodes"].get(a.node, 0) + a.count
                except gang.Pending as e:
                    seen["status"], seen["message"] = "pending", str(e)
                    assert e.reservation == names[step["reservation"]] and e.domains
            elif op == "admit":
                queue = [gang.Gang.from_dict(g) for g in step["queue"]]
                for a in inv.admit(queue, step.get("mode", "fifo")):
                    if a.placed:
                        names[a.gang] = a.reservation.id
                        seen["admitted"].append(a.gang)
                        assert a.placement is not None and a.placement.gang == a.gang
                    else:
                        seen["waiting"].append(a.gang)
                        if a.diagnosis is not None:
                            seen["message"] += str(a.diagnosis)
                        if a.blocked_by is not None:
                            seen["message"] += f" {a.gang} waits behind {a.blocked_by}."
            elif op == "spread":
                sp = step["spread"]
                g = gang.Gang.from_dict(sp["gang"])
                res = inv.spread(g, sp["replicas"], sp["level"],
                                 min_replicas=sp.get("min_replicas"), within=sp.get("within"))
                if res.placed:
                    seen["status"], seen["replicas"] = "placed", len(res.reservations)
                    base = step.get("as", g.name)
                    for k, r in enumerate(res.reservations):
                        names[f"{base}-{k}"] = r.id
                    for k, p in enumerate(res.placements):
                        for node in p.nodes:
                            seen["occupied"].append((k, inv.node(node).labels.get(sp["level"], node)))
                else:
                    seen["status"], seen["replicas"] = "unschedulable", res.fit
                    seen["message"] = str(res.diagnosis) if res.diagnosis is not None else ""
            else:
                raise AssertionError(f"step {i}: unknown op {op}")
        except gang.GangError as e:
            seen["status"] = "conflict" if e.kind == "conflict" else "error"
            seen["error_kind"], seen["message"] = e.kind, str(e)
        inv._validate()
        check_step(inv, step.get("expect"), seen, f"step {i} ({op})")


def check_step(inv, x, seen, at):
    if x is None:
        assert seen["status"] != "error", f"{at}: unexpected error: {seen['message']}"
        return
    unknown = set(x) - STEP_EXPECT
    assert not unknown, f"{at}: step expectations this test does not check: {unknown}"
    if "status" in x:
        assert seen["status"] == x["status"], f"{at}: {seen['status']} {seen['message']}"
    if "error_kind" in x:
        assert seen.get("error_kind") == x["error_kind"], at
    for sub in x.get("message_contains", []):
        assert sub in seen["message"], f"{at}: {sub!r} not in {seen['message']!r}"
    if "domain_path" in x:
        assert seen.get("domain_path") == x["domain_path"], at
    if "nodes" in x:
        assert seen.get("nodes", {}) == x["nodes"], at
    if "lost" in x:
        got = {}
        for name, role, k in seen["lost"]:
            got.setdefault(name, {}).setdefault(role, 0)
            got[name][role] += k
        assert got == x["lost"], at
    if "victims" in x:
        assert seen.get("victims") == x["victims"], f"{at}: victims {seen.get('victims')} != {x['victims']}"
    for key in ("overcommitted", "admitted", "waiting", "replicas"):
        if key in x:
            assert seen[key] == x[key], f"{at}: {key} {seen[key]} != {x[key]}"
    if "distinct" in x:
        doms = {}
        for replica, dom in seen["occupied"]:
            doms.setdefault(dom, set()).add(replica)
        assert all(len(r) == 1 for r in doms.values()), f"{at}: replicas share a domain"
    for node, per in x.get("free", {}).items():
        for res, amount in per.items():
            assert inv.free(node, res) == gang.Quantity(amount), f"{at}: free {res} on {node}"
    if "reservations" in x:
        assert len(inv.reservations) == x["reservations"], at
