"""The Python face: constructors, views, records, repr, equality, hashing, pickling,
quantities, compiled gangs, panics, and the GIL."""

import copy
import json
import pickle
import sys
import threading

import pytest

import gang
from conftest import SCENARIOS

BLOCK, RACK = "topology.example.com/block", "topology.example.com/rack"


def cluster():
    def node(name, rack, used):
        return gang.Node(name, labels={BLOCK: "b1", RACK: rack, "product": "H200"},
                         capacity={"nvidia.com/gpu": 8, "cpu": "96", "memory": "1Ti"},
                         used={"nvidia.com/gpu": used})
    return gang.Inventory([BLOCK, RACK], [node("b2", "b", 5), node("a1", "a", 6), node("a2", "a", 7)])


WORKERS = gang.Role("worker", 4, requests={"nvidia.com/gpu": 1, "cpu": "500m"},
                    node_selector={"product": "H200"})


def test_keyword_and_dict_forms_agree():
    g = gang.Gang("train", [WORKERS], required=BLOCK, slices=[(RACK, 2)], policy="most-free")
    d = g.to_dict()
    assert d["topology"]["slices"] == [{"level": RACK, "size": 2}]
    assert gang.Gang.from_dict(d) == g
    assert gang.Gang.from_json(g.to_json()) == g
    # Dicts are accepted wherever objects are.
    assert gang.Gang("train", [WORKERS.to_dict()], required=BLOCK, slices=[{"level": RACK, "size": 2}],
                     policy="most-free") == g
    inv = cluster()
    assert gang.Inventory.from_dict(inv.to_dict()).to_dict() == inv.to_dict()
    assert gang.Inventory.from_json(inv.to_json()).to_json() == inv.to_json()
    assert gang.Inventory(inv.levels, [n.to_dict() for n in inv.nodes]).to_json() == inv.to_json()
    mixed = gang.Inventory.from_dict({"topology": {"levels": [RACK]}, "nodes": [gang.Node("x", labels={RACK: "a"})]})
    assert mixed.node_names == ["x"]
    # place accepts a gang dict too.
    assert inv.place(g.to_dict()) == inv.place(g)


def test_inventory_views():
    inv = cluster()
    assert len(inv) == 3 and "a1" in inv and "zz" not in inv
    assert inv.node_names == ["a1", "a2", "b2"]  # topology order
    assert inv.resources == ["cpu", "memory", "nvidia.com/gpu"]
    assert inv.levels == [BLOCK, RACK]
    assert inv.domains(RACK) == ["b1/a", "b1/b"] and inv.domains(BLOCK) == ["b1"]
    assert inv.domains(gang.HOSTNAME_LEVEL) == inv.node_names
    assert inv.free("a1", "nvidia.com/gpu") == gang.Quantity(2)
    assert inv.free("a1", "memory").millis == 2**40 * 1000
    assert inv.free("a1", "nope") == gang.Quantity(0)  # a resource the node lacks: nothing free
    with pytest.raises(gang.UnknownNode):
        inv.free("zz", "cpu")
    assert inv.node("b2").used == {"nvidia.com/gpu": 5}
    with pytest.raises(KeyError):
        inv.node("zz")
    assert repr(inv).startswith("Inventory(levels=['topology.example.com/block'")


def test_placement_views_and_records():
    p = cluster().place(gang.Gang("train", [WORKERS], preferred=RACK))
    assert p.level == BLOCK and p.domain_labels == {BLOCK: "b1"} and p.domain == "b1" and p.domain_value == "b1"
    assert p.placed == {"worker": 4} and p.members == 4
    assert sum(p.nodes.values()) == 4
    # No rack holds four; in the block the most compact placement uses two racks and two
    # nodes (b2 takes 3, a1 one), not three nodes (a1 2, a2 1, b2 1).
    assert len(p.nodes) == 2 and p.domain_counts(RACK) == {"b1/a": 1, "b1/b": 3}
    assert p.domain_counts(BLOCK) == {"b1": 4}
    assert p.domain_counts(gang.HOSTNAME_LEVEL) == p.nodes
    assert p.domains_used[RACK] == 2
    assert p.search_complete
    records = p.to_records()
    assert all(set(r) == {"gang", "role", "node", "count", BLOCK, RACK} for r in records)
    assert [(r["node"], r["count"]) for r in records] == [(a.node, a.count) for a in p.assignments]
    assert json.loads(json.dumps(records)) == records  # plain data
    role, node, count = p.assignments[0]
    assert (role, node, count) == ("worker", p.assignments[0].node, p.assignments[0].count)
    d = p.to_dict()
    assert d["status"] == "placed" and d["placed"] == {"worker": 4} and json.loads(p.to_json()) == d
    assert str(p).startswith("gang train placed in block b1")
    assert repr(p).startswith("Placement(gang='train', level='topology.example.com/block', domain='b1'")


def test_diagnosis_views_and_records():
    d = cluster().try_place(gang.Gang("train", [gang.Role("worker", 5, requests={"nvidia.com/gpu": 1})], required=RACK))
    assert isinstance(d, gang.Diagnosis) and d.status == "unschedulable" and not d.search_exhausted
    assert d.gang == "train" and d.level == RACK
    assert d.best.domain == "b1/a" and d.best.reason == "resources" and d.best.short_of == ["nvidia.com/gpu"]
    assert d.best.fits[0].role == "worker" and d.best.fits[0].fits == 3 and d.best.fits[0].needed == 5
    assert d.roles[0].cluster_fit == 6 and d.roles[0].excluded.total == 0
    assert d.relaxation.level == BLOCK and d.relaxation.domain == "b1" and d.relaxation.spans == 2
    assert d.slices == []
    assert "Relaxing to block: block b1 fits all 5 now" in str(d)
    (rec,) = d.to_records()
    assert rec["role"] == "worker" and rec["cluster_fit"] == 6 and rec["best_fits"] == 3
    assert json.loads(json.dumps(rec)) == rec
    assert json.loads(d.to_json()) == d.to_dict()
    assert d.to_dict()["best"]["fits"][0] == d.best.fits[0].to_dict()


def test_reports_of_exclusions_and_slices():
    s = gang.load_scenario(SCENARIOS / "06-exclusions.json")
    d = s.try_place()
    e = d.roles[0].excluded
    assert (e.cordoned, e.selector, e.taint, e.missing_label, e.too_small) == (1, 1, 1, 1, 1)
    assert e.total == 5 and d.roles[0].fitting_nodes == 1
    # By cause, as gang-core counts and words them: the same words as the paragraph.
    causes = [(c.reason, c.key, c.nodes) for c in d.roles[0].causes]
    assert causes == [
        ("cordoned", "", 1),
        ("selector", "nvidia.com/gpu.product", 1),
        ("taint", "dedicated", 1),
        ("missing_label", "topology.example.com/rack", 1),
        ("full", "nvidia.com/gpu", 1),
    ]
    words = ", ".join(str(c) for c in d.roles[0].causes)
    assert f"Nodes excluded for worker: {words}." in str(d)
    assert [p for p, _ in d.sentences()] == ["summary", "best", "cluster_wide", "excluded", "relaxation"]
    assert " ".join(t for _, t in d.sentences()) == str(d)
    assert d.fewer_members is None  # not elastic
    assert d.roles[0].causes[0] == gang.ExclusionCause._from_dict(d.roles[0].causes[0].to_dict())
    s = gang.load_scenario(SCENARIOS / "07b-slices-no-rack-of-four.json")
    (sl,) = s.try_place().slices
    assert (sl.size, sl.largest, sl.available, sl.needed, sl.largest_domain) == (4, 3, 0, 2, "b1/a")


def test_an_elastic_gang_is_told_what_fewer_members_would_get():
    inv = gang.Inventory(["rack"], [
        gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 3}),
        gang.Node("b1", labels={"rack": "b"}, capacity={"gpu": 2}),
    ])
    d = inv.try_place(gang.Gang("g", [gang.Role("w", 6, min_count=4, requests={"gpu": 1})], required="rack"))
    f = d.fewer_members
    assert (f.level, f.domain, f.members, f.minimum, f.needed) == ("rack", "a", 3, 3, 4)
    assert str(f) == "With a minimum of 3 instead of 4, rack a takes 3 members now."
    assert d.sentences()[-1] == ("fewer_members", str(f))


def every_object():
    s = gang.load_scenario(SCENARIOS / "02-seven-free-no-rack-of-four.json")
    inv = s.inventory
    p = gang.load_scenario(SCENARIOS / "08-split.json").place()
    d = s.try_place()
    return [
        inv, s.gang, s, p, d, p.assignments[0], d.roles[0], d.roles[0].excluded, d.best,
        d.best.fits[0], d.relaxation, gang.Quantity("1500m"), gang.Taint("k", "v", "NoExecute"),
        gang.Toleration.exists("k"), gang.Requirement("zone", "NotIn", ["z9"]), inv.nodes[0],
        gang.Role("w", 3, min_count=2, max_per_node=1, constrained=False),
    ]


@pytest.mark.parametrize("obj", every_object(), ids=lambda o: type(o).__name__)
def test_pickle_round_trips(obj):
    again = pickle.loads(pickle.dumps(obj))
    assert type(again) is type(obj)
    if isinstance(obj, gang.Inventory):
        assert again.to_json() == obj.to_json()
    elif isinstance(obj, gang.Scenario):
        assert again.to_json() == obj.to_json()
    else:
        assert again == obj and hash(again) == hash(obj)
        assert repr(again) == repr(obj) and str(again) == str(obj)
    assert copy.deepcopy(obj) is not None


def test_unpickled_results_keep_working():
    p = gang.load_scenario(SCENARIOS / "08-split.json").place()
    q = pickle.loads(pickle.dumps(p))
    assert q.to_dict() == p.to_dict() and q.to_records() == p.to_records()
    assert q.domain_counts(BLOCK) == p.domain_counts(BLOCK) == {"b1": 11, "b2": 5}
    inv = pickle.loads(pickle.dumps(cluster()))
    assert inv.place(gang.Gang("t", [WORKERS], preferred=RACK)).nodes == cluster().place(
        gang.Gang("t", [WORKERS], preferred=RACK)).nodes


def test_exceptions_pickle_with_their_data():
    with pytest.raises(gang.Unschedulable) as info:
        cluster().place(gang.Gang("t", [gang.Role("w", 99, requests={"nvidia.com/gpu": 1})]))
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is gang.Unschedulable and e.diagnosis == info.value.diagnosis and str(e) == str(info.value)
    with pytest.raises(gang.InvalidRequest) as info:
        cluster().place(gang.Gang("t", [WORKERS], required="zone"))
    e = pickle.loads(pickle.dumps(info.value))
    assert (e.kind, e.field, e.value, e.code) == ("invalid_request", "gang.topology.required", "zone", 3)


def test_hashable_results_work_as_keys():
    inv = cluster()
    g = gang.Gang("t", [WORKERS], preferred=RACK)
    seen = {inv.place(g), inv.place(g), inv.place(gang.Gang("u", [WORKERS], preferred=BLOCK))}
    assert len(seen) == 2
    assert len({g, gang.Gang.from_json(g.to_json())}) == 1
    assert len({gang.Quantity("1"), gang.Quantity("1000m"), gang.Quantity(2)}) == 2


def test_quantities():
    assert gang.Quantity(8).millis == 8000
    assert gang.Quantity("1.5").millis == gang.Quantity(1.5).millis == 1500
    assert gang.Quantity("16Gi").millis == 16 * 2**30 * 1000
    assert gang.Quantity.from_millis(1500) == gang.Quantity("1500m")
    assert str(gang.Quantity("1500m")) == "1500m" and str(gang.Quantity("2k")) == "2000"
    assert sorted([gang.Quantity(2), gang.Quantity("500m")]) == [gang.Quantity("500m"), gang.Quantity(2)]
    assert gang.Quantity(gang.Quantity(3)) == gang.Quantity(3)
    n = gang.Node("n", capacity={"cpu": 1.5, "memory": "16Gi", "gpu": 8, "x": gang.Quantity("250m")})
    assert n.capacity == {"cpu": gang.Quantity("1.5"), "memory": gang.Quantity("16Gi"), "gpu": 8,
                          "x": gang.Quantity("250m")}
    inv = gang.Inventory([], [n])
    assert inv.free("n", "cpu") == gang.Quantity("1500m")
    assert inv.free("n", "x").millis == 250
    p = inv.place(gang.Gang("g", [gang.Role("w", 3, requests={"cpu": "500m"})]))
    assert p.nodes == {"n": 3}
    with pytest.raises(gang.Unschedulable):
        inv.place(gang.Gang("g", [gang.Role("w", 4, requests={"cpu": "500m"})]))


def test_compiled_gangs():
    inv = cluster()
    g = gang.Gang("t", [WORKERS], preferred=RACK)
    c = inv.compile(g)
    assert c.gang == g and "CompiledGang('t'" in repr(c)
    assert inv.place(c) == inv.place(g)
    with pytest.raises(TypeError):
        pickle.dumps(c)


def test_spec_objects():
    t = gang.Toleration("dedicated", "Equal", "training", "NoSchedule")
    assert t.tolerates(gang.Taint("dedicated", "training")) and not t.tolerates(gang.Taint("dedicated", "x"))
    assert gang.Toleration.from_dict(t.to_dict()) == t
    r = gang.Requirement("zone", "In", ["a", "b"])
    assert (r.key, r.operator, r.values) == ("zone", "In", ["a", "b"])
    role = gang.Role("w", 2, match_expressions=[r], tolerations=[t], max_per_node=1, min_count=1)
    assert gang.Role.from_dict(role.to_dict()) == role
    assert role.match_expressions == [r] and role.tolerations == [t]
    assert "max_per_node=1" in repr(role)
    n = gang.Node("n", taints=[{"key": "k", "effect": "NoExecute"}], schedulable=False)
    assert n.taints == [gang.Taint("k", "", "NoExecute")] and not n.schedulable
    assert gang.Node.from_dict(n.to_dict()) == n


def test_a_panic_becomes_a_gang_error():
    with pytest.raises(gang.InternalError) as info:
        gang._gang._panic_for_tests()
    assert isinstance(info.value, gang.GangError)
    assert "index out of bounds" in str(info.value)


def big_inventory(n=30_000):
    nodes = [{"name": f"n{i:06d}",
              "labels": {"block": f"b{i // 256:03d}", "rack": f"r{i // 16:05d}"},
              "capacity": {"nvidia.com/gpu": 8, "cpu": 96},
              "used": {"nvidia.com/gpu": (i * 7919) % 9, "cpu": (i * 31) % 90}} for i in range(n)]
    return gang.Inventory.from_dict({"topology": {"levels": ["block", "rack"]}, "nodes": nodes})


def test_placement_releases_the_gil():
    """A placement in one thread does not block a pure-Python thread.

    With a huge switch interval, Python threads switch only when the running thread
    releases the GIL by itself. The worker signals, then enters `try_place`; the main
    thread can only wake up from its wait while the worker is inside `try_place` if
    the placement released the GIL. Otherwise it wakes after the worker is done.
    """
    inv = big_inventory()
    g = gang.Gang("g", [gang.Role("w", 200, requests={"nvidia.com/gpu": 8}),
                        gang.Role("l", 3, requests={"cpu": 90})], required="block")
    assert isinstance(inv.try_place(g), gang.Diagnosis)  # warm, and a non-trivial query
    ready = threading.Event()
    state = {"done": False, "calls": 0}

    def worker():
        ready.set()
        for _ in range(5):
            inv.try_place(g)
            state["calls"] += 1
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        ready.wait()
        woke_while_placing = not state["done"]
        progress = sum(i * i for i in range(10_000))  # pure Python work meanwhile
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert woke_while_placing, "the main thread could not run while a placement was in progress"
    assert progress > 0 and state["calls"] == 5


def test_threads_share_an_inventory():
    inv = big_inventory(2_000)
    g = gang.Gang("g", [gang.Role("w", 4, requests={"nvidia.com/gpu": 2})], required="rack")
    want = inv.place(g)
    results = []

    def run():
        for _ in range(20):
            results.append(inv.place(g))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and all(r == want for r in results)
