"""Preemption from Python (issue 22): evictable units on a live inventory, gang
priorities, and plans as records that pandas, polars and Arrow take directly."""

from __future__ import annotations

import pickle

import pytest

import gang

GPU = "nvidia.com/gpu"


def rack_of_two():
    return gang.Inventory(["rack"], [gang.Node(n, labels={"rack": "r"}, capacity={GPU: 4, "cpu": 8})
                                     for n in ("n1", "n2")])


def test_gang_priority_and_preemption_policy():
    g = gang.Gang("g", [gang.Role("w", 1)], priority=-5, preemption_policy="Never")
    assert (g.priority, g.preemption_policy) == (-5, "Never")
    assert repr(g) == "Gang('g', [Role('w', 1)], priority=-5, preemption_policy='Never')"
    assert gang.Gang.from_dict(g.to_dict()) == g and pickle.loads(pickle.dumps(g)) == g
    d = gang.Gang("g", [gang.Role("w", 1)])
    assert (d.priority, d.preemption_policy) == (0, "PreemptLowerPriority")
    with pytest.raises(gang.InvalidRequest) as e:
        gang.Gang("g", [gang.Role("w", 1)], priority=2**31)
    assert e.value.field == "gang.priority"
    with pytest.raises(gang.InvalidRequest) as e:
        gang.Gang("g", [gang.Role("w", 1)], priority=1.5)
    assert e.value.field == "gang.priority"
    with pytest.raises(gang.InvalidRequest) as e:
        gang.Gang("g", [gang.Role("w", 1)], preemption_policy="Sometimes")
    assert (e.value.field, e.value.value) == ("gang.preemption_policy", "Sometimes")


def test_add_and_remove_evictable_units():
    inv = rack_of_two()
    inv.add_evictable("batch", 3, {"n1": {GPU: 3, "cpu": "500m"}})
    assert inv.free("n1", GPU) == 1 and inv.free("n1", "cpu") == gang.Quantity("7.5")
    assert inv.evictable_units() == [{"id": "batch", "priority": 3,
                                      "nodes": {"n1": {GPU: 3, "cpu": "500m"}}}]
    # Survives the inventory's document (pickling).
    again = pickle.loads(pickle.dumps(inv))
    assert again.evictable_units() == inv.evictable_units() and again.free("n1", GPU) == 1
    assert inv.remove_evictable("batch") == inv_unit("batch", 3, {"n1": {GPU: 3, "cpu": "500m"}})
    assert inv.free("n1", GPU) == 4 and inv.evictable_units() == []
    with pytest.raises(gang.InvalidInventory) as e:
        inv.remove_evictable("batch")
    assert e.value.field == "evictable[batch]"


def inv_unit(id, priority, nodes):
    return {"id": id, "priority": priority, "nodes": nodes}


def test_bad_evictable_units_are_typed_errors_naming_the_field():
    inv = rack_of_two()
    inv.add_evictable("a", nodes={"n1": {GPU: 1}})
    cases = [
        (lambda: inv.add_evictable("a"), gang.InvalidInventory, "evictable[a].id"),
        (lambda: inv.add_evictable("b", 0, {"n9": {GPU: 1}}), gang.UnknownNode, None),
        (lambda: inv.add_evictable("b", 0, {"n1": {GPU: "lots"}}), gang.InvalidQuantity,
         "evictable[b].nodes[n1].nvidia.com/gpu"),
        (lambda: inv.add_evictable("b", 0, {"n1": {GPU: -1}}), gang.InvalidQuantity,
         "evictable[b].nodes[n1].nvidia.com/gpu"),
        (lambda: inv.add_evictable("b", "high"), gang.InvalidInventory, "evictable[b].priority"),
        (lambda: inv.add_evictable("b", 0, ["n1"]), gang.InvalidInventory, "evictable[b].nodes"),
        (lambda: inv.add_evictable("", 0), gang.InvalidInventory, None),
    ]
    for call, cls, field in cases:
        with pytest.raises(cls) as e:
            call()
        if field is not None:
            assert e.value.field == field, (e.value.field, str(e.value))
    # Nothing changed.
    assert [u["id"] for u in inv.evictable_units()] == ["a"] and inv.free("n1", GPU) == 3


def scene():
    """Rack r: a priority-1 gang holding 4 GPUs on one node, a priority-5 unit with 2 on
    the other; a priority-10 gang of 7 GPUs must evict both (2 are free)."""
    inv = rack_of_two()
    low = inv.reserve(inv.place(gang.Gang("low", [gang.Role("w", 4, requests={GPU: 1})], priority=1)))
    free_node = "n2" if low.members[0].node == "n1" else "n1"
    inv.add_evictable("eval", 5, {free_node: {GPU: 2}})
    want = gang.Gang("train", [gang.Role("w", 7, requests={GPU: 1})], required="rack", priority=10)
    return inv, low, want


def test_a_plan_is_records_and_a_summary():
    inv, low, want = scene()
    plan = inv.preempt(want)
    assert isinstance(plan, gang.Preemption) and plan.status == "placed" and plan.search_complete
    assert plan.to_records() == [
        {"gang": "train", "victim": "low", "kind": "gang", "reservation": int(low.id), "priority": 1,
         "cost": 0, "level": "rack", "domain": "r", f"evicted.{GPU}": 4.0},
        {"gang": "train", "victim": "eval", "kind": "unit", "reservation": None, "priority": 5,
         "cost": 0, "level": "rack", "domain": "r", f"evicted.{GPU}": 2.0},
    ]
    assert plan.summary() == {"status": "placed", "gang": "train", "level": "rack", "domain": "r",
                              "domain_value": "r", "victims": 2, "highest_priority": 5, "cost": 0, f"evicted.{GPU}": 6.0,
                              "search_complete": True}
    # The core's document, read as before: a mapping equal to the dict.
    assert plan["status"] == "placed" and [v["name"] for v in plan["victims"]] == ["low", "eval"]
    assert plan == plan.to_dict() and dict(plan) == plan.to_dict() and "placement" in plan
    assert plan.get("message") is None and len(plan) == len(plan.to_dict())
    with pytest.raises(KeyError):
        plan["nope"]
    assert repr(plan) == "Preemption(gang='train', status='placed', victims=['low', 'eval'], domain='r')"
    # The sentence gang-core, the CLI and Python share (one wording, issue 20).
    assert str(plan) == "evict low (priority 1, 4 nvidia.com/gpu) and eval (priority 5, 2 nvidia.com/gpu) in rack r"
    assert "<table>" in plan._repr_html_() and "eval" in plan._repr_html_()
    # Nothing changed.
    assert inv.free("n1", GPU) + inv.free("n2", GPU) == 2


def test_no_plan_and_fits_now_have_the_same_columns():
    inv, _, want = scene()
    never = gang.Gang("big", [gang.Role("w", 9, requests={GPU: 1})], required="rack", priority=10)
    none = inv.preempt(never)
    assert none.status == "unschedulable" and none.to_records() == [] and "diagnosis" in none
    assert none.summary() == {"status": "unschedulable", "gang": "big", "level": None, "domain": None,
                              "domain_value": None, "victims": 0, "highest_priority": None, "cost": 0, "search_complete": False}
    assert str(none).startswith("no eviction of lower-priority work makes it fit; even with all of it gone: gang big")
    small = inv.preempt(gang.Gang("s", [gang.Role("w", 1, requests={GPU: 1})], priority=0))
    assert small.status == "placed" and small.to_records() == [] and small.summary()["victims"] == 0
    assert str(small).startswith("nothing to evict: it fits now")
    rows = gang.to_records([inv.preempt(want), none, small])
    assert [r["status"] for r in rows] == ["placed", "unschedulable", "placed"]
    assert len({tuple(r) for r in rows}) == 1 and rows[1][f"evicted.{GPU}"] is None


def test_preempt_reserve_applies_the_plan_all_or_nothing():
    inv, low, want = scene()
    done = inv.preempt_reserve(want)
    assert done["reservation"] is not None and [r["victim"] for r in done.to_records()] == ["low", "eval"]
    assert inv.reservation(low.id) is None and inv.evictable_units() == []
    assert [r.gang.name for r in inv.reservations] == ["train"]
    # One GPU was left: a 1-GPU gang fits now, no victims.
    again = inv.preempt_reserve(gang.Gang("t2", [gang.Role("w", 1, requests={GPU: 1})], priority=20))
    assert again.status == "placed" and again["reservation"] is not None and again.to_records() == []
    # Nothing of lower priority than 5 is left: unschedulable, and nothing changes.
    third = inv.preempt_reserve(gang.Gang("t3", [gang.Role("w", 2, requests={GPU: 1})], priority=5))
    assert third.status == "unschedulable" and third["reservation"] is None
    assert len(inv.reservations) == 2


def test_never_gangs_and_equal_priorities_are_not_victims():
    inv = rack_of_two()
    pinned = inv.reserve(inv.place(gang.Gang("pinned", [gang.Role("w", 4, requests={GPU: 1})], priority=0,
                                             preemption_policy="Never")))
    other = "n2" if pinned.members[0].node == "n1" else "n1"
    inv.add_evictable("peer", 10, {other: {GPU: 2}})
    plan = inv.preempt(gang.Gang("g", [gang.Role("w", 4, requests={GPU: 1})], priority=10))
    assert plan.status == "unschedulable" and plan.to_records() == []


def test_plans_as_dataframes():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    inv, _, want = scene()
    plan = inv.preempt(want)
    df = pd.DataFrame(plan.to_records())
    assert list(df["victim"]) == ["low", "eval"] and df[f"evicted.{GPU}"].sum() == 6.0
    assert pl.DataFrame(plan.to_records())["priority"].to_list() == [1, 5]
    assert pa.Table.from_pylist(plan.to_records()).column("kind").to_pylist() == ["gang", "unit"]
    many = gang.to_pandas([plan, inv.preempt(gang.Gang("x", [gang.Role("w", 9, requests={GPU: 1})], priority=1))])
    assert list(many["status"]) == ["placed", "unschedulable"] and list(many["victims"]) == [2, 0]
    assert gang.to_arrow([plan]).column("highest_priority").to_pylist() == [5]
    assert gang.to_polars([plan])["domain"].to_list() == ["r"]
