"""What issue 13 adds for data people: validation when objects are built, results as
tables, one spelling of a domain, numeric quantities, value semantics, readable reprs
and notebook display — and numpy / pandas / plain values giving identical results."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gang

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

BLOCK, RACK = "block", "rack"


def cluster():
    nodes = [gang.Node(n, labels={BLOCK: "b1", RACK: r}, capacity={"gpu": 4, "cpu": 8})
             for n, r in [("a1", "a"), ("a2", "a"), ("b1", "b")]]
    nodes.append(gang.Node("x1", labels={BLOCK: "b1"}, capacity={"gpu": 4}))  # no rack label
    return gang.Inventory([BLOCK, RACK], nodes)


# ---------------------------------------------------------------- validation when built

@pytest.mark.parametrize("fn, cls, field", [
    (lambda: gang.Role("w", 2, min_count=3), gang.InvalidRequest, "gang.roles[w].min_count"),
    (lambda: gang.Role("w", 0), gang.InvalidRequest, "gang.roles[w].count"),
    (lambda: gang.Role("w", 1, max_per_node=0), gang.InvalidRequest, "gang.roles[w].max_per_node"),
    (lambda: gang.Role("w", 1, requests={"gpu": "lots"}), gang.InvalidQuantity, "gang.roles[w].requests.gpu"),
    (lambda: gang.Node("a1", capacity={"memory": "12 GB"}), gang.InvalidQuantity, "nodes[a1].capacity.memory"),
    (lambda: gang.Node("a1", labels={RACK: "a b"}), gang.InvalidInventory, "nodes[a1].labels.rack"),
    (lambda: gang.Gang("g", []), gang.InvalidRequest, "gang.roles"),
    (lambda: gang.Gang("g", [gang.Role("w", 1), gang.Role("w", 2)]), gang.InvalidRequest, "gang.roles[1].name"),
    (lambda: gang.Gang.from_dict({"name": "g", "roles": [{"name": "w", "count": 2, "min_count": 3}]}),
     gang.InvalidRequest, "gang.roles[w].min_count"),
])
def test_checked_when_built(fn, cls, field):
    with pytest.raises(cls) as info:
        fn()
    assert info.value.field == field, str(info.value)


def test_inventory_dependent_checks_stay_at_compile_time():
    g = gang.Gang("g", [gang.Role("w", 1)], required="zone")  # builds: levels need an inventory
    with pytest.raises(gang.InvalidRequest) as info:
        cluster().place(g)
    assert info.value.field == "gang.topology.required"


# ---------------------------------------------------------------- results as tables

def results():
    inv = cluster()
    out = [inv.try_place(gang.Gang(f"g{n}", [gang.Role("w", n, requests={"gpu": 4})], required=RACK))
           for n in (1, 2, 3)]
    out.append(inv.try_place(gang.Gang("any", [gang.Role("w", 4, requests={"gpu": 4})])))
    return out


def test_one_summary_record_per_result_with_the_same_columns():
    recs = [r.summary() for r in results()]
    assert [r["status"] for r in recs] == ["placed", "placed", "unschedulable", "placed"]
    assert len({tuple(r) for r in recs}) == 1, [list(r) for r in recs]
    placed, missed = recs[1], recs[2]
    assert (placed["domain"], placed["members"], placed["nodes_used"], placed["domains_used.rack"]) == ("b1/a", 2, 2, 1)
    assert (missed["best_domain"], missed["best_fits"], missed["short_of"], missed["members"]) == ("b1/a", 2, "gpu", 0)
    # The domain's own label value beside its path (issue 25 item 15).
    assert (placed["domain_value"], missed["domain_value"], recs[3]["domain_value"]) == ("a", None, None)


def test_to_pandas_polars_arrow():
    rs = results()
    df = gang.to_pandas(rs)
    assert list(df["status"]) == ["placed", "placed", "unschedulable", "placed"] and df.shape[0] == 4
    assert list(df.columns) == list(rs[0].summary())
    pl = pytest.importorskip("polars")
    assert gang.to_polars(rs)["members"].to_list() == [1, 2, 0, 4]
    pa = pytest.importorskip("pyarrow")
    assert gang.to_arrow(rs).column("gang").to_pylist() == ["g1", "g2", "g3", "any"]
    with pytest.raises(TypeError):
        gang.to_records([object()])
    assert pl and pa


def test_to_dict_on_every_result_type():
    inv = cluster()
    p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})], required=RACK))
    r = inv.reserve(p)
    d = inv.try_place(gang.Gang("g", [gang.Role("w", 9, requests={"gpu": 4})]))
    s = inv.spread(gang.Gang("s", [gang.Role("w", 1, requests={"gpu": 1})], required=RACK), 1, RACK)
    (a,) = inv.admit([gang.Gang("h", [gang.Role("w", 1, requests={"gpu": 1})])])
    lost = inv.fail_node("a1")
    over = inv.set_capacity("a2", "gpu", 1)
    for obj in [p, r, r.id, d, d.roles[0], d.best, a, s, lost[0], over[0], p.assignments[0]]:
        if isinstance(obj, gang.ReservationId):
            continue
        assert isinstance(obj.to_dict(), dict), type(obj)
    assert a.to_dict()["status"] == "placed" and a.summary()["status"] == "placed"
    assert s.to_dict()["fit"] == 1


# ---------------------------------------------------------------- one spelling of a domain

def test_one_spelling_of_a_domain():
    inv = cluster()
    p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})], required=RACK))
    d = inv.try_place(gang.Gang("g", [gang.Role("w", 3, requests={"gpu": 4})], required=RACK))
    r = inv.reserve(p)
    assert p.domain == r.domain == d.best.domain == "b1/a" and inv.domains(RACK)[0] == "b1/a"
    assert p.domain_value == r.domain_value == d.best.domain_value == "a"
    assert p.domain_labels == r.domain_labels == {BLOCK: "b1", RACK: "a"}


def test_domain_counts_count_members_outside_the_level():
    p = cluster().place(gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 4})], required=BLOCK))
    counts = p.domain_counts(RACK)
    assert counts == {"b1/a": 2, "b1/b": 1, None: 1}
    assert sum(counts.values()) == p.members
    assert p.domain_counts(BLOCK) == {"b1": 4}


# ---------------------------------------------------------------- numeric Quantity

def test_quantity_is_a_number():
    q = gang.Quantity("1500m")
    assert int(q) == 1 and float(q) == 1.5 and q.millis == 1500
    assert q == 1.5 and q > 1 and q < 2 and q != 1 and gang.Quantity(2) == 2
    assert hash(gang.Quantity(2)) == hash(2) and hash(q) == hash(1.5)
    assert q + 1 == gang.Quantity("2.5") and q - "500m" == 1 and 3 - q == 1.5
    assert sum([q, q, gang.Quantity(1)]) == 4
    assert sorted([gang.Quantity(2), 1, q]) == [1, q, 2]
    with pytest.raises(gang.InvalidQuantity):
        q - 2
    assert int(gang.Quantity("16Gi")) == 16 * 2**30


# ---------------------------------------------------------------- value semantics

def test_value_semantics():
    assert gang.Node("n", capacity={"m": "1Gi"}) == gang.Node("n", capacity={"m": 1073741824})
    assert hash(gang.Node("n", capacity={"m": "1Gi"})) == hash(gang.Node("n", capacity={"m": 1073741824}))
    assert gang.Role("w", 1, requests={"cpu": 1}) == gang.Role("w", 1, requests={"cpu": "1"})
    assert gang.Role("w", 1, requests={"cpu": 0.5}) == gang.Role("w", 1, requests={"cpu": "500m"})
    built = gang.Node("a1", labels={RACK: "a", BLOCK: "b1"}, capacity={"gpu": "4", "cpu": 8.0})
    inv = gang.Inventory([BLOCK, RACK], [built])
    assert inv.node("a1") == built and hash(inv.node("a1")) == hash(built)
    assert inv == gang.Inventory([BLOCK, RACK], [built]) and inv != cluster()
    assert list(inv) == [built] and built in inv and "a1" in inv
    with pytest.raises(TypeError):
        hash(inv)  # it changes: not hashable


# ---------------------------------------------------------------- reprs and notebooks

def test_readable_reprs_and_html():
    inv = cluster()
    p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})], required=RACK))
    d = inv.try_place(gang.Gang("g", [gang.Role("w", 9, requests={"gpu": 4})], required=RACK))
    r = inv.reserve(p)
    for obj in [inv, p, d, r, r.id, d.roles[0], d.best, d.best.fits[0], d.roles[0].excluded,
                inv.fail_node("a1")[0], gang.Quantity(1)]:
        text = repr(obj)
        assert text.startswith(type(obj).__name__ + "("), text
        assert "{\"" not in text, text  # no raw JSON
    for obj in (inv, p, d):
        html = obj._repr_html_()
        assert html.startswith("<") and "<table>" in html
    assert d.to_records() and str(d) in d._repr_html_().replace("&amp;", "&")


# ---------------------------------------------------------------- numpy / pandas = plain

def as_numpy(v):
    return np.int64(v) if isinstance(v, int) else np.float64(v)


def as_pandas(v):
    return pd.Series([v]).iloc[0]


@settings(max_examples=60, deadline=None)
@given(
    caps=st.lists(st.tuples(st.integers(0, 8), st.sampled_from([0.5, 1.0, 2.5, 4.0])), min_size=1, max_size=5),
    count=st.integers(1, 6),
    gpu=st.integers(0, 3),
    cpu=st.sampled_from([0.25, 0.5, 1.0, 1.5]),
)
def test_numpy_pandas_and_plain_values_give_identical_results(caps, count, gpu, cpu):
    def run(conv):
        nodes = [{"name": f"n{i}", "labels": {RACK: "ab"[i % 2]},
                  "capacity": {"gpu": conv(g), "cpu": conv(c)}} for i, (g, c) in enumerate(caps)]
        inv = gang.Inventory.from_dict({"topology": {"levels": [RACK]}, "nodes": nodes})
        role = gang.Role("w", conv(count), requests={"gpu": conv(gpu), "cpu": conv(cpu)})
        kw = gang.Inventory([RACK], [gang.Node(n["name"], labels=n["labels"], capacity=n["capacity"]) for n in nodes])
        assert kw == inv
        result = inv.try_place(gang.Gang("g", [role], preferred=RACK))
        return inv.to_dict(), role.to_dict(), result.to_dict(), result.summary()

    plain = run(lambda v: v)
    assert run(as_numpy) == plain
    assert run(as_pandas) == plain
    assert run(lambda v: np.array(v)) == plain


def test_placements_keep_the_node_paths_they_were_made_with():
    inv = cluster()
    p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})], required=RACK))
    assert p.domain == "b1/a"
    inv.set_labels("a1", {BLOCK: "b1", RACK: "z"})  # nodes move after the placement
    inv.remove_node("a2")
    assert p.domain_counts(RACK) == {"b1/a": 2}
    assert {r["node"]: r[RACK] for r in p.to_records()} == {"a1": "a", "a2": "a"}
    q = inv.place(gang.Gang("g", [gang.Role("w", 1, requests={"gpu": 4})], required=RACK))
    assert q.domain_counts(RACK) in ({"b1/b": 1}, {"b1/z": 1})
