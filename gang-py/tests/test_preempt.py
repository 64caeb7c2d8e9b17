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
    assert plan.get("nope") is None and len(plan) == len(plan.to_dict())
    # The document carries the plan in words, as str() prints it (for C and Go too).
    assert plan["message"] == str(plan)
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


def weighed():
    """One 8-GPU node, full: a priority-1 gang (4 GPUs) and two priority-1 units of 2 GPUs
    each, "new" also holding 8 CPUs; a priority-5 gang of 2 GPUs must evict one of them
    (equal priority, and each frees at least the 2 GPUs it needs)."""
    inv = gang.Inventory([], [gang.Node("n1", capacity={GPU: 8, "cpu": 16})])
    run = inv.reserve(inv.place(gang.Gang("run", [gang.Role("w", 4, requests={GPU: 1})], priority=1)))
    inv.add_evictable("old", 1, {"n1": {GPU: 2}})
    inv.add_evictable("new", 1, {"n1": {GPU: 2, "cpu": 8}})
    return inv, run, gang.Gang("g", [gang.Role("w", 2, requests={GPU: 1})], priority=5)


def victims(plan):
    return [r["victim"] for r in plan.to_records()]


def test_preempt_options_weigh_the_work_lost():
    inv, run, g = weighed()
    # GPUs by default: the units tie at 2 (the gang holds 4); the tie-break takes the
    # first id ("new" before "old").
    assert victims(inv.preempt(g)) == ["new"]
    # The caller's costs come first (GPUs x time since the last checkpoint, say); work
    # given none costs 0 there (run, here), unless it is given one too.
    assert victims(inv.preempt(g, costs={"new": 90, "old": 10})) == ["run"]
    assert victims(inv.preempt(g, costs={"new": 90, "old": 10, run: 100})) == ["old"]
    plan = inv.preempt(g, costs={"new": 90, "old": 10, run: 0})
    assert victims(plan) == ["run"] and plan.summary()["cost"] == 0
    assert plan["cost"] == ["0", "4000"]  # given, then milli-GPUs (u128 sums, as decimal strings)
    # A reservation is keyed by the Reservation, its ReservationId or the int.
    for key in (run, run.id, int(run.id)):
        assert victims(inv.preempt(g, costs={"new": 1, "old": 1, key: 0})) == ["run"], key
    # Work given a cost keeps it in the rows; work not given one costs 0.
    rows = inv.preempt(g, costs={"old": 3, "new": 7, run: 9}).to_records()
    assert [(r["victim"], r["cost"]) for r in rows] == [("old", 3)]
    # The resource order: CPUs first makes "new" (8 CPUs) the dearer unit.
    plan = inv.preempt(g, cost_resources=["cpu", GPU])
    assert victims(plan) == ["old"] and plan["cost"] == ["0", "0", "2000"]
    # No cost resources: the fewest victims, then the ids.
    assert victims(inv.preempt(g, cost_resources=[])) == ["run"]
    # The work limit: none left after the first plan (every candidate of the level, here),
    # which is kept, valid, and said to be unproven.
    cut = inv.preempt(g, max_work=0)
    assert cut.status == "placed" and not cut.search_complete and victims(cut) == ["run", "new", "old"]
    assert inv.preempt(g, max_work=10**6).search_complete
    # preempt_reserve weighs the same way.
    done = inv.preempt_reserve(g, costs={"new": 90, "old": 10, run: 100})
    assert victims(done) == ["old"] and [u["id"] for u in inv.evictable_units()] == ["new"]


def test_bad_preempt_options_are_typed_errors_naming_the_keyword():
    inv, _, g = weighed()
    for kw, field in [
        ({"costs": {"old": -1}}, "costs['old']"),
        ({"costs": {"old": 1.5}}, "costs['old']"),
        ({"costs": {2.5: 1}}, "costs"),
        ({"costs": [("old", 1)]}, "costs"),
        ({"cost_resources": GPU}, "cost_resources"),
        ({"cost_resources": [GPU, 3]}, "cost_resources[1]"),
        ({"max_work": -1}, "max_work"),
        ({"max_work": True}, "max_work"),
    ]:
        with pytest.raises(gang.InvalidRequest) as e:
            inv.preempt(g, **kw)
        assert e.value.field == field, kw
        with pytest.raises(gang.InvalidRequest):
            inv.preempt_reserve(g, **kw)
    # Nothing changed.
    assert len(inv.evictable_units()) == 2 and len(inv.reservations) == 1


def test_plans_pickle_and_copy():
    import copy
    inv, low, want = scene()
    plans = [inv.preempt(want),
             inv.preempt(gang.Gang("big", [gang.Role("w", 9, requests={GPU: 1})], required="rack", priority=10)),
             inv.preempt(gang.Gang("s", [gang.Role("w", 1, requests={GPU: 1})], priority=0)),
             inv.preempt(want, max_work=0)]
    assert [p.status for p in plans] == ["placed", "unschedulable", "placed", "placed"]
    for plan in plans:
        for again in (pickle.loads(pickle.dumps(plan)), copy.copy(plan), copy.deepcopy(plan)):
            assert isinstance(again, gang.Preemption)
            assert again == plan and again.to_dict() == plan.to_dict()
            assert again.to_records() == plan.to_records() and again.summary() == plan.summary()
            assert (str(again), repr(again), again.status, again.gang, again.search_complete) == (
                str(plan), repr(plan), plan.status, plan.gang, plan.search_complete)
            assert again._repr_html_() == plan._repr_html_()
    done = inv.preempt_reserve(want)
    assert pickle.loads(pickle.dumps(done))["reservation"] == done["reservation"]


def test_sim_preemption_is_in_the_summary_table_and_job_records():
    # gang-sim's hand-worked case (gang-sim/tests/preemption.rs): one 8-GPU node; low
    # (priority 0, 8 GPUs, a checkpoint every 600 s) runs from 0; high (priority 10, 4
    # GPUs) arrives at 1,000 and evicts it: 400 s of 8 GPUs lost, 0.889 GPU-hours.
    import gang.sim
    cluster = {"topology": {"levels": ["rack"]},
               "nodes": [{"name": "n1", "labels": {"rack": "a"}, "capacity": {GPU: 8}}]}
    trace = [{"id": "low", "submit": 0, "duration": 3600, "members": 8, "gpus": 1, "checkpoint": 600},
             {"id": "high", "submit": 1000, "duration": 600, "members": 4, "gpus": 1, "priority": 10}]
    c = gang.sim.compare(cluster, trace, {"off": {"policy": "required(rack)"},
                                          "on": {"policy": "required(rack)", "preemption": "lower-priority"}},
                         readiness={"init_time": 0})
    cols = ("evictions", "jobs_evicted", "preemptions", "gpu_hours_lost")
    assert gang.sim.SUMMARY_COLUMNS[-4:] == cols and all(k in gang.sim.GLOSSARY for k in cols)
    off, on = c.summary_table()
    assert [off[k] for k in cols] == [None] * 4
    assert [on[k] for k in cols[:3]] == [1, 1, 1] and on["gpu_hours_lost"] == pytest.approx(8 * 400 / 3600)
    assert c["on"].job("low")["preemption"]["evictions"] == 1 and "preemption" not in c["off"].job("low")
    assert c["on"].summary["preemption"]["gpu_hours_lost"] == pytest.approx(8 * 400 / 3600)
    assert c["on"].job("high")["completion"] == 600.0 and c["off"].job("high")["completion"] == 3200.0


# The kept preemption solvers (gang-core's PreemptSolver in the inventory's pool): their
# candidate victims are kept from one preempt to the next and brought up to date from
# the inventory's journal. Every answer must be the one a fresh inventory built from the
# same document gives (a first query there: nothing kept), whatever changed in between.

def fresh(inv):
    return gang.Inventory.from_json(inv.to_json())


def answer(inv, want, **limits):
    """The plan's document, reservation victims named by serial (a copy's reservation
    ids carry its own inventory id, their serials are the same)."""
    plan = inv.preempt(want, **limits)
    serial = {int(r.id): r.id.serial for r in inv.reservations}
    doc = plan.to_dict()
    for v in doc.get("victims", []):
        if v["id"]["kind"] == "reservation":
            v["id"]["id"] = serial[v["id"]["id"]]
    return plan, doc


def same_as_fresh(inv, want, **limits):
    kept, doc = answer(inv, want, **limits)
    assert doc == answer(fresh(inv), want, **limits)[1], (want.name, inv.to_json())
    return kept


def test_repeated_preempts_follow_reserve_release_and_units():
    inv, low, want = scene()  # rack r of n1, n2 (4 GPUs each): low 4 (p1), eval 2 (p5)
    assert [v["name"] for v in same_as_fresh(inv, want)["victims"]] == ["low", "eval"]
    # low released: 8 - 2 = 6 free, 7 wanted: eval alone (a kept low would be offered).
    inv.release(low)
    assert [v["name"] for v in same_as_fresh(inv, want)["victims"]] == ["eval"]
    # mid reserved (p2, 4 GPUs): 2 free; mid and eval must go (a book without mid
    # would find no plan).
    mid = inv.reserve(inv.place(gang.Gang("mid", [gang.Role("w", 4, requests={GPU: 1})], priority=2)))
    assert [v["name"] for v in same_as_fresh(inv, want)["victims"]] == ["mid", "eval"]
    # eval withdrawn, eval2 (p3, 1 GPU) declared where it was: 3 free; evicting mid
    # (4) alone gives 7.
    eval_node = next(n for n in ("n1", "n2") if n not in {m.node for m in mid.members})
    inv.remove_evictable("eval")
    inv.add_evictable("eval2", 3, {eval_node: {GPU: 1}})
    assert [v["name"] for v in same_as_fresh(inv, want)["victims"]] == ["mid"]
    # External use on the free node: 1 free; mid and eval2 together give 6: no plan.
    inv.set_used(eval_node, GPU, 2)
    assert same_as_fresh(inv, want).status == "unschedulable"
    # Placement queries between (the pool's solvers serve both) change nothing.
    inv.place(gang.Gang("s", [gang.Role("w", 1, requests={GPU: 1})]))
    inv.set_used(eval_node, GPU, 0)
    assert [v["name"] for v in same_as_fresh(inv, want)["victims"]] == ["mid"]
    # preempt_reserve applies a plan: then nothing of lower priority is left.
    done = inv.preempt_reserve(want)
    assert [r["victim"] for r in done.to_records()] == ["mid"] and inv.reservation(mid.id) is None
    assert same_as_fresh(inv, gang.Gang("t", [gang.Role("w", 2, requests={GPU: 1})], priority=5)).status == "unschedulable"


def test_repeated_preempts_answer_as_a_fresh_inventory_through_random_changes():
    import collections
    import random

    rng = random.Random(20261204)
    nodes = [gang.Node(f"{r}{i}", labels={"rack": r}, capacity={GPU: 8, "cpu": 16})
             for r in ("a", "b", "c") for i in (1, 2)]
    inv = gang.Inventory(["rack"], nodes)
    queries = [
        gang.Gang("q-rack", [gang.Role("w", 12, requests={GPU: 1})], required="rack", priority=6),
        gang.Gang("q-any", [gang.Role("w", 5, requests={GPU: 2})], priority=4),
        gang.Gang("q-two", [gang.Role("l", 1, requests={"cpu": 4}),
                            gang.Role("w", 4, requests={GPU: 3})], required="rack", priority=9),
    ]
    units = 0
    extra = 0
    did = collections.Counter()
    for step in range(80):
        names = inv.node_names
        live = inv.reservations
        op = rng.choice(["reserve", "reserve", "release", "unit", "withdraw", "used",
                         "cordon", "node", "preempt_reserve", "fail", "replace", "replace"])
        if op == "reserve":
            g = gang.Gang(f"g{step}", [gang.Role("w", rng.randint(1, 6), requests={GPU: rng.choice([1, 2])})],
                          priority=rng.randint(0, 8))
            found = inv.find(g)
            if found is not None:
                inv.reserve(found)
        elif op == "release" and live:
            inv.release(rng.choice(live))
        elif op == "unit":
            n = rng.choice(names)
            free = int(inv.free(n, GPU))
            if free:
                units += 1
                inv.add_evictable(f"u{units}", rng.randint(0, 8), {n: {GPU: rng.randint(1, free)}})
        elif op == "withdraw" and inv.evictable_units():
            inv.remove_evictable(rng.choice(inv.evictable_units())["id"])
        elif op == "used":
            inv.set_used(rng.choice(names), GPU, rng.randint(0, 3))
        elif op == "cordon":
            n = rng.choice(names)
            (inv.uncordon if rng.random() < 0.5 else inv.cordon)(n)
        elif op == "node":
            # Nodes move: another layout (the kept candidates are rebuilt).
            extra += 1
            inv.add_node(gang.Node(f"x{extra}", labels={"rack": rng.choice("abc")}, capacity={GPU: 8, "cpu": 16}))
        elif op == "preempt_reserve":
            inv.preempt_reserve(rng.choice(queries))
        elif op == "fail":
            # Reservations lose their members there: the same ids, fewer members.
            did["lost"] += len(inv.fail_node(rng.choice(names)))
        elif op == "replace" and live:
            # Members added back to a reservation, on other nodes: the same id again.
            try:
                did["replaced"] += len(inv.replace(rng.choice(live)))
            except gang.Pending:
                did["pending"] += 1
        for q in queries:
            same_as_fresh(inv, q)
        # Another budget: another solver of the pool, kept on its own.
        same_as_fresh(inv, queries[2], search_budget=50_000)
    # The sequence moved members of live reservations (lost, then replaced: the same
    # ids, other members), not only reservations made and released.
    assert did["lost"] > 0 and did["replaced"] > 0, did


def test_repeated_preempts_follow_members_replaced_on_another_node():
    # gang-ffi's Go TestPreemptKeptFollowsChanges (and gang-core's
    # kept_candidates_follow_the_go_tests_changes), step by step: at "replace mid",
    # mid's members, all lost with b1 (queries between), come back on b2, a node it
    # never held anything on; a kept book that missed them answers q-node with a cost
    # of 12000 GPU-milli where its victims (mid 6, low2 12) evict 18000.
    inv = gang.Inventory(["rack"], [gang.Node(n, labels={"rack": n[0]}, capacity={GPU: 8})
                                    for n in ("a1", "a2", "b1", "b2")])

    def job(name, count, prio, rack):
        return gang.Gang(name, [gang.Role("w", count, requests={GPU: 1}, node_selector={"rack": rack})],
                         priority=prio)

    ids = {}

    def reserve(name, count, prio, rack):
        ids[name] = inv.reserve(inv.place(job(name, count, prio, rack))).id

    queries = [
        gang.Gang("q-rack", [gang.Role("w", 12, requests={GPU: 1})], required="rack", priority=5),
        gang.Gang("q-node", [gang.Role("w", 2, requests={GPU: 8})], priority=4),
        gang.Gang("q-top", [gang.Role("w", 20, requests={GPU: 1})], required="rack", priority=10),
    ]
    steps = [
        lambda: reserve("low", 8, 1, "a"),
        lambda: reserve("mid", 6, 3, "b"),
        lambda: inv.add_evictable("nb", 2, {"b2": {GPU: 4}}),
        lambda: inv.release(ids["low"]),
        lambda: reserve("low2", 12, 0, "a"),
        lambda: inv.set_used("a1", GPU, 2),
        lambda: inv.remove_evictable("nb"),
        lambda: inv.fail_node("b1"),
        lambda: inv.replace(ids["mid"]),
    ]
    for step in steps:
        step()
        for q in queries:
            for _ in range(2):
                same_as_fresh(inv, q)
    assert {m.node for m in inv.reservation(ids["mid"]).members} == {"b2"}
    plan = same_as_fresh(inv, queries[1])
    assert sorted(v["name"] for v in plan["victims"]) == ["low2", "mid"]
