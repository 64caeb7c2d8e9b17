"""One test per defect of issue 13 ("gang-py for data people"); each fails on the
binding as it was before the fix."""

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

import gang

RACK = "rack"


def cluster(n=2, gpus=2):
    return gang.Inventory([RACK], [gang.Node(f"a{i}", labels={RACK: "a"}, capacity={"gpu": gpus})
                                   for i in range(n)])


GANG = gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})], required=RACK)


# 1. release across inventories -------------------------------------------------------

def test_release_on_another_inventory_is_an_error_naming_both():
    a, b = cluster(), cluster()
    ra = a.reserve(a.place(GANG))
    rb = b.reserve(b.place(GANG))
    assert ra.id.serial == rb.id.serial == 0 and ra.id != rb.id
    with pytest.raises(gang.UnknownReservation) as info:
        b.release(ra)
    e = info.value
    assert e.kind == "unknown_reservation" and e.code == 7 and e.field == "reservation"
    assert f"inventory {a.id}" in str(e) and f"inventory {b.id}" in str(e), str(e)
    # Nothing was freed in either inventory.
    assert b.reservation(rb) == rb and a.reservation(ra) == ra
    assert sum(b.free(n, "gpu") for n in b.node_names) == 2 == sum(a.free(n, "gpu") for n in a.node_names)
    for op in (b.release, b.replace, b.reservation):
        with pytest.raises(gang.UnknownReservation):
            op(ra.id)
    with pytest.raises(gang.UnknownReservation):
        b.release(int(ra.id))  # the id's int value carries the inventory too
    assert a.release(ra) == ra


def test_copies_hold_the_same_reservations_and_make_their_own():
    a = cluster(4)
    r = a.reserve(a.place(GANG))
    b = copy.copy(a)
    assert b.id != a.id and b == a
    assert b.release(r).id == r.id  # the copy's own copy of that reservation
    assert a.reservation(r) == r  # still held in the original
    mine = b.reserve(b.place(GANG))
    with pytest.raises(gang.UnknownReservation):
        a.release(mine)


# 2. every GangError has every documented attribute ----------------------------------

def all_subclasses(cls):
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(all_subclasses(sub))
    return out


def raised_instances():
    """One instance of every class, raised by gang where gang raises it."""
    inv = cluster(1, 1)
    out = {}

    def catch(fn):
        try:
            fn()
        except gang.GangError as e:
            out.setdefault(type(e), e)
        else:
            raise AssertionError(f"{fn} did not raise")

    catch(lambda: gang.Quantity("12 GB"))
    catch(lambda: gang.Inventory([RACK, RACK], []))
    catch(lambda: gang.Role("w", 0))
    catch(lambda: inv.place(gang.Gang("g", [gang.Role("w", 2, max_per_node=1)], required=RACK)))
    catch(lambda: gang.Inventory.from_dict({"topology": {"levels": []}, "nodes": [], "x": 1}))
    p = inv.place(gang.Gang("g", [gang.Role("w", 1, requests={"gpu": 1})]))
    r = inv.reserve(p)
    catch(lambda: inv.reserve(p))
    inv.release(r)
    catch(lambda: inv.release(r))
    catch(lambda: inv.cordon("zz"))
    catch(lambda: inv.place(gang.Gang("g", [gang.Role("w", 9, requests={"gpu": 1})])))
    catch(lambda: gang._gang._panic_for_tests())
    s = gang.Scenario.from_json(open(os.path.join(os.path.dirname(__file__), "data", "undecided.json")).read())
    catch(lambda: s.place(search_budget=0))
    inv2 = gang.Inventory([RACK], [gang.Node(n, labels={RACK: "a"}, capacity={"gpu": 1}) for n in ("a1", "a2")]
                          + [gang.Node("b1", labels={RACK: "b"}, capacity={"gpu": 2})])
    r2 = inv2.reserve(inv2.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})], required=RACK)))
    inv2.remove_node(r2.members[0].node)
    inv2.reserve(inv2.place(gang.Gang("h", [gang.Role("w", 2, requests={"gpu": 1})])))
    catch(lambda: inv2.replace(r2))
    return out


DOCUMENTED = ("kind", "code", "field", "value", "reason")


def test_every_gang_error_has_every_documented_attribute():
    classes = all_subclasses(gang.GangError)
    assert len(classes) == 13
    raised = raised_instances()
    for cls in [gang.GangError] + classes:
        # On the class (None where it does not apply), and on a plain instance.
        for attr in DOCUMENTED:
            assert hasattr(cls, attr), (cls, attr)
            assert hasattr(cls("x"), attr), (cls, attr)
    for cls in classes:
        if cls is gang.NotPlaced:
            continue
        e = raised[cls]
        for attr in DOCUMENTED:
            getattr(e, attr)  # never AttributeError
        assert isinstance(e.kind, str) and e.reason, (cls, e.kind, e.reason)
    for cls in (gang.Unschedulable, gang.Undecided):
        e = raised[cls]
        assert e.diagnosis is not None and e.status == e.kind and e.code is None and e.field is None
    assert raised[gang.Pending].reservation is not None and raised[gang.Pending].domains
    assert raised[gang.InternalError].kind == "internal_error"
    assert gang.NotPlaced("x").diagnosis is None and gang.Pending("x").reservation is None


# 3. numpy and pandas numbers ---------------------------------------------------------

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def test_numpy_and_pandas_numbers_are_accepted():
    plain = gang.Role("w", 2, requests={"gpu": 1, "cpu": 1.5}, min_count=1, max_per_node=2)
    assert gang.Role("w", np.int64(2), requests={"gpu": np.int32(1), "cpu": np.float64(1.5)},
                     min_count=np.uint8(1), max_per_node=np.array(2)) == plain
    assert gang.Role("w", np.array(2), requests={"gpu": np.array(1), "cpu": np.array(1.5)},
                     min_count=1, max_per_node=2) == plain
    assert gang.Role("w", 2, requests={"gpu": 1, "cpu": np.float32(1.5)}, min_count=1, max_per_node=2) == plain
    s = pd.Series([2, 1.5])
    assert gang.Role("w", pd.Series([2]).iloc[0], requests={"gpu": 1, "cpu": s.iloc[1]},
                     min_count=1, max_per_node=2) == plain
    doc = {"name": "w", "count": np.int64(2), "requests": {"gpu": np.int64(1), "cpu": np.float64(1.5)},
           "min_count": np.int16(1), "max_per_node": 2}
    assert gang.Role.from_dict(doc) == plain
    inv = gang.Inventory.from_dict({"topology": {"levels": [RACK]}, "nodes": [
        {"name": "a1", "labels": {RACK: "a"}, "capacity": {"gpu": np.int64(8), "cpu": np.float64(96.0)}}]})
    assert inv.free("a1", "gpu") == 8 and inv.free("a1", "cpu") == 96
    inv.set_used("a1", "gpu", np.int64(3))
    assert inv.free("a1", "gpu") == 5
    assert inv.place(GANG, search_budget=np.int64(10)).members == 2
    assert gang.Quantity(np.float64(0.25)).millis == 250


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "np.nan", "np.inf"])
def test_nan_and_infinities_are_rejected_the_same_way_everywhere(bad):
    value = {"np.nan": np.nan, "np.inf": np.inf}.get(bad, bad)
    paths = [
        lambda: gang.Quantity(value),
        lambda: gang.Node("a1", capacity={"gpu": value}),
        lambda: gang.Role("w", 1, requests={"gpu": value}),
        lambda: gang.Node.from_dict({"name": "a1", "capacity": {"gpu": value}}),
        lambda: gang.Inventory.from_dict({"topology": {"levels": []}, "nodes": [{"name": "a1", "capacity": {"gpu": value}}]}),
        lambda: cluster().set_used("a0", "gpu", value),
    ]
    for fn in paths:
        with pytest.raises(gang.InvalidQuantity) as info:
            fn()
        assert "finite" in str(info.value), str(info.value)


def test_one_bad_value_gives_one_error_class_on_every_path():
    for value in ("lots", -1, [1], True):
        classes = set()
        for fn in (lambda: gang.Node("a1", capacity={"gpu": value}),
                   lambda: gang.Node.from_dict({"name": "a1", "capacity": {"gpu": value}}),
                   lambda: cluster().set_capacity("a0", "gpu", value)):
            try:
                fn()
            except gang.GangError as e:
                classes.add(type(e))
        assert len(classes) == 1, (value, classes)


# 4. a str where the levels go; an empty topology ------------------------------------

def test_a_str_of_levels_is_a_type_error_naming_the_argument():
    with pytest.raises(TypeError) as info:
        gang.Inventory("rack", [])
    assert "levels" in str(info.value) and "['rack']" in str(info.value)
    with pytest.raises(gang.InvalidInventory):
        gang.Inventory([RACK], "a1")  # nodes: a str is not a list of nodes


def test_an_empty_topology_means_the_node_level_only():
    inv = gang.Inventory([], [gang.Node("a1", capacity={"gpu": 2}), gang.Node("b1", capacity={"gpu": 2})])
    assert inv.levels == [] and inv.domains(gang.HOSTNAME_LEVEL) == ["a1", "b1"]
    p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})], required=gang.HOSTNAME_LEVEL))
    assert p.level == gang.HOSTNAME_LEVEL and p.nodes == {"a1": 2}
    with pytest.raises(gang.InvalidRequest):
        inv.place(gang.Gang("g", [gang.Role("w", 1)], required=RACK))


# 5. docs vs runtime: pickling and copying are complete and faithful -----------------

def lifecycle_objects():
    inv = gang.Inventory([RACK], [gang.Node(n, labels={RACK: r}, capacity={"gpu": 2})
                                  for n, r in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]])
    g = gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})], required=RACK)
    r = inv.reserve(inv.place(g))
    over = inv.set_capacity(r.members[0].node, "gpu", 1)
    lost = inv.fail_node(r.members[1].node)
    admitted = inv.admit([gang.Gang("s", [gang.Role("w", 1, requests={"gpu": 1})]), g])
    spread = inv.spread(gang.Gang("x", [gang.Role("w", 1, requests={"gpu": 1})], required=RACK), 1, RACK)
    return [inv, r, r.id, over[0], lost[0], admitted[0], admitted[1], spread]


@pytest.mark.parametrize("obj", lifecycle_objects(), ids=lambda o: type(o).__name__)
def test_lifecycle_results_pickle_copy_and_deepcopy(obj):
    for again in (pickle.loads(pickle.dumps(obj)), copy.copy(obj), copy.deepcopy(obj)):
        assert type(again) is type(obj)
        assert again == obj
        assert repr(again) == repr(obj) or isinstance(obj, gang.Inventory)
        if hasattr(obj, "to_dict"):
            assert again.to_dict() == obj.to_dict()


def test_copying_an_inventory_keeps_its_reservations():
    inv = cluster(4)
    r = inv.reserve(inv.place(GANG))
    for again in (copy.copy(inv), copy.deepcopy(inv), pickle.loads(pickle.dumps(inv))):
        assert [x.id.serial for x in again.reservations] == [r.id.serial]
        assert again.free("a0", "gpu") == inv.free("a0", "gpu")
        again._validate()


def test_the_inventory_is_documented_as_changeable():
    assert "immutable" not in gang.Inventory.__doc__
    assert "changed in place" in gang.Inventory.__doc__


# 6. typo-safe lookups ---------------------------------------------------------------

def test_unknown_nodes_are_unknown_node_everywhere_and_a_key_error():
    inv = cluster()
    assert issubclass(gang.UnknownNode, KeyError)
    for fn in (lambda: inv.free("typo", "gpu"), lambda: inv.node("typo"), lambda: inv.set_used("typo", "gpu", 1),
               lambda: inv.cordon("typo")):
        with pytest.raises(gang.UnknownNode) as info:
            fn()
        assert info.value.value == "typo" and str(info.value) == 'unknown node "typo"'
    with pytest.raises(KeyError):
        inv.node("typo")
    assert inv.free("a0", "no-such-resource") == 0  # a known node without it: nothing free


# 7. field names in all errors --------------------------------------------------------

@pytest.mark.parametrize("fn, cls, field", [
    (lambda: gang.Role(None, 2), gang.InvalidRequest, "gang.roles[].name"),
    (lambda: gang.Node(None), gang.InvalidInventory, "nodes[].name"),
    (lambda: gang.Gang(7, [gang.Role("w", 1)]), gang.InvalidRequest, "gang.name"),
    (lambda: cluster().place(GANG, search_budget=-1), gang.InvalidRequest, "search_budget"),
    (lambda: cluster().place(GANG, search_budget=2**64), gang.InvalidRequest, "search_budget"),
    (lambda: cluster().place(GANG, timeout=-0.5), gang.InvalidRequest, "timeout"),
    (lambda: cluster().try_place(GANG, timeout=float("nan")), gang.InvalidRequest, "timeout"),
    (lambda: cluster().find(GANG, timeout=float("inf")), gang.InvalidRequest, "timeout"),
    (lambda: cluster().place(GANG, timeout=True), gang.InvalidRequest, "timeout"),
    (lambda: cluster().place(GANG, timeout="1s"), gang.InvalidRequest, "timeout"),
    (lambda: cluster().spread(GANG, 2**32, RACK), gang.InvalidRequest, "spread.replicas"),
    (lambda: gang.Quantity.from_millis(-1), gang.InvalidQuantity, "millis"),
    (lambda: gang.Role("w\ud800", 1), gang.InvalidRequest, "gang.roles[].name"),
    (lambda: gang.Node("a1", labels={RACK: "\ud800"}), gang.InvalidInventory, "nodes[a1].labels.rack"),
    (lambda: gang.Gang.from_dict({"name": "g\ud800", "roles": []}), gang.InvalidRequest, "name"),
    (lambda: gang.Taint(3), gang.InvalidInventory, "taint.key"),
])
def test_errors_name_the_field(fn, cls, field):
    with pytest.raises(cls) as info:
        fn()
    assert info.value.field == field and field in str(info.value), str(info.value)


def test_a_missing_scenario_file_names_the_file():
    with pytest.raises(FileNotFoundError) as info:
        gang.load_scenario("no/such/file.json")
    assert info.value.filename == "no/such/file.json"


def test_dict_input_errors_quote_no_internal_json_position():
    with pytest.raises(gang.InvalidRequest) as info:
        gang.Gang.from_dict({"name": "g", "roles": [{"name": "w", "count": "two"}]})
    assert info.value.field == "roles[0].count" and "line 1" not in str(info.value), str(info.value)


def test_minus_zero_is_zero_not_negative():
    assert gang.Quantity(-0.0) == 0
    assert gang.Node("a1", capacity={"gpu": -0.0}).capacity["gpu"] == 0
    with pytest.raises(gang.InvalidQuantity) as info:
        gang.Quantity(-0.5)
    assert "negative" in str(info.value)


# 8. self-referential and deeply nested arguments ------------------------------------

def test_self_referential_arguments_raise_naming_the_path():
    x = []
    x.append(x)
    with pytest.raises(gang.InvalidRequest) as info:
        gang.Role("w", 1, tolerations=x)
    assert info.value.field.startswith("gang.roles[w].tolerations[0]")
    d = {"name": "g"}
    d["roles"] = [d]
    with pytest.raises(gang.InvalidRequest) as info:
        gang.Gang.from_dict(d)
    assert info.value.field.startswith("roles[0]")


def test_deeply_nested_arguments_raise_quickly_and_small():
    deep = 1
    for _ in range(20_000):
        deep = {"a": deep}
    with pytest.raises(gang.InvalidQuantity) as info:
        gang.Role("w", 1, requests={"gpu": deep})
    assert info.value.field == "gang.roles[w].requests.gpu" and len(str(info.value)) < 400
    doc = {"topology": {"levels": []}, "nodes": [], "gang": {"name": "g", "roles": [{"name": "w", "count": 1}]},
           "expect": {"status": "placed", "diagnosis": deep}}
    with pytest.raises(gang.InvalidScenario) as info:
        gang.Scenario.from_dict(doc)
    assert "nested more than" in str(info.value) and len(str(info.value)) < 1000


# 9. panics are silent; private names; __version__ -----------------------------------

def test_a_caught_panic_prints_nothing():
    code = textwrap.dedent("""
        import gang
        try:
            gang._gang._panic_for_tests()
        except gang.InternalError as e:
            print("caught:", e)
    """)
    env = dict(os.environ, RUST_BACKTRACE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stderr == "", out.stderr
    assert "caught: internal error in gang (please report): index out of bounds" in out.stdout


def test_private_names_are_not_exported_and_there_is_a_version():
    assert "_panic_for_tests" not in gang.__all__
    stubs = open(os.path.join(os.path.dirname(gang.__file__), "_gang.pyi")).read()
    assert '"_panic_for_tests"' not in stubs.split("__all__", 1)[1].split("]", 1)[0]
    assert isinstance(gang.__version__, str) and gang.__version__.count(".") == 2
