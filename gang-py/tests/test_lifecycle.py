"""Lifecycle through Python: reserve / release, inventory changes, replace, spread,
admit — and the error kinds only they raise (Conflict, UnknownReservation,
UnknownNode) plus Pending."""

import pickle

import pytest

import gang

RACK = "rack"


def cluster():
    nodes = [gang.Node(n, labels={RACK: r}, capacity={"gpu": 2}) for n, r in
             [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"), ("b3", "b")]]
    return gang.Inventory([RACK], nodes)


GANG = gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})], required=RACK)


def test_reserve_and_release_exactly():
    inv = cluster()
    p = inv.place(GANG)
    r = inv.reserve(p)
    assert r.id.serial == 0 and r.id.inventory == inv.id and r.member_count == 4 and r.domain == "a"
    assert sorted((a.node, a.count) for a in r.members) == [("a1", 2), ("a2", 2)]
    assert inv.free("a1", "gpu").millis == 0 and [x.id for x in inv.reservations] == [r.id]
    assert inv.reservation(r.id) == r
    assert ("a1", "gpu", gang.Quantity(2)) in r.usage
    # The same placement again no longer fits: Conflict, nothing applied.
    with pytest.raises(gang.Conflict) as info:
        inv.reserve(p)
    assert info.value.kind == "conflict" and info.value.code == 6 and "a1" in str(info.value)
    assert len(inv.reservations) == 1
    released = inv.release(r)
    assert released == r and inv.free("a1", "gpu").millis == 2000 and inv.reservations == []
    assert inv.reservation(r.id) is None  # this inventory's, released
    # Releasing twice is an error, never a double credit.
    with pytest.raises(gang.UnknownReservation) as info:
        inv.release(r.id)
    assert info.value.kind == "unknown_reservation" and info.value.value == "#0"
    assert inv.free("a1", "gpu").millis == 2000
    inv._validate()


def test_unknown_node_and_bad_ids():
    inv = cluster()
    for op in (inv.cordon, inv.uncordon, inv.remove_node, inv.fail_node):
        with pytest.raises(gang.UnknownNode) as info:
            op("zz")
        assert info.value.kind == "unknown_node" and info.value.field == "node" and "zz" in str(info.value)
    with pytest.raises(gang.UnknownNode):
        inv.set_used("zz", "gpu", 1)
    with pytest.raises(gang.InvalidRequest):
        inv.release("zero")
    with pytest.raises(gang.InvalidQuantity) as info:
        inv.set_used("a1", "gpu", "lots")
    assert info.value.field == "nodes[a1].used.gpu"


def test_changes_lost_and_replace():
    inv = cluster()
    r = inv.reserve(inv.place(GANG))
    lost = inv.remove_node("a2")
    assert [(x.reservation, x.role, x.node, x.count) for x in lost] == [(r.id, "w", "a2", 2)]
    assert inv.reservation(r.id).lost == lost and "a2" not in inv
    # Rack a has no room left: pending, even though rack b has room.
    with pytest.raises(gang.Pending) as info:
        inv.replace(r)
    e = info.value
    assert isinstance(e, gang.GangError) and e.reservation == r.id and "bound to rack a" in str(e)
    assert e.domains[0]["domain"] == "a"
    inv.add_node(gang.Node("a3", labels={RACK: "a"}, capacity={"gpu": 4}))
    added = inv.replace(r.id)
    assert [(a.node, a.count) for a in added] == [("a3", 2)]
    assert inv.reservation(r.id).member_count == 4 and inv.reservation(r.id).lost == []
    inv._validate()


def test_capacity_changes_report_overcommit():
    inv = cluster()
    r = inv.reserve(inv.place(GANG))
    (o,) = inv.set_capacity("a1", "gpu", 1)
    assert (o.node, o.resource, o.reservations) == ("a1", "gpu", [r.id])
    assert o.capacity == gang.Quantity(1) and o.reserved == gang.Quantity(2)
    assert inv.set_capacity("a1", "gpu", "2") == []
    inv.cordon("b1")
    assert isinstance(inv.try_place(gang.Gang("h", [gang.Role("w", 6, requests={"gpu": 1})], required=RACK)),
                      gang.Diagnosis)
    inv.uncordon("b1")
    assert inv.place(gang.Gang("h", [gang.Role("w", 6, requests={"gpu": 1})], required=RACK)).domain == "b"
    displaced = inv.set_labels("a1", {RACK: "b"})
    assert displaced == [r.id]
    assert inv.domains(RACK) == ["a", "b"] and inv.node("a1").labels == {RACK: "b"}
    inv._validate()


def test_spread_and_admit():
    inv = cluster()
    replica = gang.Gang("serve", [gang.Role("w", 2, requests={"gpu": 1})], required=RACK)
    res = inv.spread(replica, 2, RACK)
    assert res.placed and res.fit == 2 and len(res.reservations) == 2
    assert {p.domain for p in res.placements} == {"a", "b"}
    too_many = inv.spread(replica, 3, RACK)
    assert not too_many.placed and too_many.needed == 3 and too_many.reservations == []
    for r in res.reservations:
        inv.release(r)
    job = lambda n, k: gang.Gang(n, [gang.Role("w", k, requests={"gpu": 1})], required=RACK)  # noqa: E731
    out = inv.admit([job("first", 6), job("second", 6), job("small", 1)], "fifo")
    assert [(a.gang, a.placed) for a in out] == [("first", True), ("second", False), ("small", False)]
    assert out[0].reservation.member_count == 6 and out[0].placement.domain == "b"
    assert out[2].blocked_by == "second"
    # Backfill: a later gang goes ahead only on nodes the waiting head cannot use.
    big = gang.Gang("big", [gang.Role("w", 1, requests={"gpu": 3})])  # no node has 3 GPUs
    out = inv.admit([big, job("small", 1)], "backfill")
    assert [(a.gang, a.placed) for a in out] == [("big", False), ("small", True)]
    assert inv.admit([big, job("small", 1)], "fifo")[1].blocked_by == "big"
    with pytest.raises(gang.InvalidRequest):
        inv.admit([job("x", 1)], "lifo")
    inv._validate()


def test_pickled_inventory_keeps_free_capacity_and_reservations():
    inv = cluster()
    r = inv.reserve(inv.place(GANG))
    copy = pickle.loads(pickle.dumps(inv))
    assert copy == inv and copy.id != inv.id
    (held,) = copy.reservations
    assert held.id.serial == r.id.serial and held.id.inventory == copy.id and held.members == r.members
    for n in inv.node_names:
        assert copy.free(n, "gpu") == inv.free(n, "gpu")
    assert inv.to_dict()["nodes"][0].get("used", {}) == {}  # external use only; reservations apart
    copy.release(held)
    assert copy.free("a1", "gpu") == 2 and inv.free("a1", "gpu") == 0
    again = pickle.loads(pickle.dumps(r))
    assert again == r and hash(again) == hash(r) and int(again) == r.id
    # With lost members too.
    inv.fail_node(r.members[0].node)
    hurt = inv.reservation(r)
    assert hurt.lost and hurt != r
    again = pickle.loads(pickle.dumps(hurt))
    assert again == hurt and hash(again) == hash(hurt) and again.lost == hurt.lost
    (restored,) = pickle.loads(pickle.dumps(inv)).reservations
    assert [(l.role, l.node, l.count) for l in restored.lost] == [(l.role, l.node, l.count) for l in hurt.lost]
    # An unpickled placement cannot be reserved: it belongs to another process.
    p = pickle.loads(pickle.dumps(cluster().place(GANG)))
    with pytest.raises(gang.InvalidRequest):
        cluster().reserve(p)
