"""gang.kube.load: Kubernetes objects (gang-kube's fixtures, the guides' examples) as a
gang.Inventory and gang.Gangs; the report, checks and warnings; errors naming file,
object and field."""

import json

import pytest

import gang
import gang.kube
import gang.sim

from conftest import HERE

FIX = HERE.parent.parent / "gang-kube" / "tests" / "fixtures"
RACK = "topology.example.com/rack"
SUBBLOCK = "cloud.google.com/gce-topology-subblock"


def test_the_guides_podgroup_places_four_workers_in_rack_a():
    k = gang.kube.load(FIX / "racks.json", FIX / "training-workers.yaml")
    assert isinstance(k.inventory, gang.Inventory) and k.inventory.levels == [
        "topology.example.com/block", RACK]
    (g,) = k.gangs
    assert isinstance(g, gang.Gang) and g.name == "training-workers"
    (w,) = k.workloads
    assert (w["name"], w["framework"], w["members"], w["minimum"]) == (
        "PodGroup/ml-team/training-workers", "native-pod-group", 4, 4)
    assert all(c["status"] == "ok" for c in w["checks"]) and w["error"] is None
    assert {c["id"] for c in w["checks"]} >= {"members_found", "minimum", "shape_fits"}
    p = k.inventory.place(g)
    assert (p.domain, p.nodes) == ("b1/a", {"a1": 2, "a2": 2})
    assert k.gang("training-workers") == g == k.gang("PodGroup/ml-team/training-workers")
    with pytest.raises(KeyError):
        k.gang("nope")
    assert k.report["topology"]["origin"] in ("detected", "given", "kueue-topology")
    assert any(o["object"] == "PodGroup/ml-team/training-workers" for o in k.objects)
    assert repr(k).startswith("Loaded(nodes=")


def test_the_inventory_matches_gang_kubes_and_the_document_round_trips():
    k = gang.kube.load(FIX / "gke-h100.json", FIX / "kueue-gke.yaml", FIX / "pytorchjob.yaml")
    (g,) = k.gangs
    # Members are pods: 1 master (unconstrained) + 3 workers of 8 GPUs in one subblock.
    assert [(r.name, r.count, r.constrained) for r in g.roles] == [("master", 1, False), ("worker", 3, True)]
    p = k.inventory.place(g)
    # b1/s2 and b2/s1 have three free nodes; best fit takes the tight one (as gang-kube's
    # own fixture test says), the master beside a worker.
    assert (p.level, p.domain) == (SUBBLOCK, "b2/s1")
    assert p.nodes == {"a3-b2-s1-h2": 2, "a3-b2-s1-h3": 1, "a3-b2-s1-h4": 1}
    again = gang.Inventory.from_json(json.dumps(k.document))
    assert again.to_dict() == k.inventory.to_dict()
    # Excluded nodes stay in, cordoned.
    excluded = {e["node"] for e in k.report["excluded"]}
    assert excluded and all(not k.inventory.node(n).schedulable for n in excluded)


def test_texts_pairs_bytes_and_parsed_objects():
    racks = (FIX / "racks.json").read_text()
    group = (FIX / "training-workers.yaml").read_text()
    want = gang.kube.load(FIX / "racks.json", FIX / "training-workers.yaml")
    for sources in [(racks, group), (("r.json", racks), ("g.yaml", group)),
                    (racks.encode(), group.encode()), (json.loads(racks), ("g.yaml", group)),
                    (str(FIX / "racks.json"), group)]:
        k = gang.kube.load(*sources)
        assert k.gangs == want.gangs and k.inventory.to_dict() == want.inventory.to_dict()


def test_a_leading_byte_order_mark_is_ignored(tmp_path):
    # The case: the BOM right before "apiVersion".
    lines = (FIX / "training-workers.yaml").read_text().splitlines(keepends=True)
    group = "".join(lines[next(i for i, x in enumerate(lines) if x.startswith("apiVersion")):])
    want = gang.kube.load(FIX / "racks.json", ("g.yaml", group)).gangs
    assert [g.name for g in want] == ["training-workers"]
    path = tmp_path / "g.yaml"
    path.write_text(group, encoding="utf-8-sig")
    for source in [("g.yaml", "\ufeff" + group), group.encode("utf-8-sig"), path]:
        assert gang.kube.load(FIX / "racks.json", source).gangs == want


def _pytorchjob(replicas, gpus):
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "t", "namespace": "ml"},
            "spec": {"pytorchReplicaSpecs": {"Worker": {
                "replicas": replicas,
                "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}}}}


def test_parsed_objects_with_numpy_numbers_are_read_as_numbers():
    np = pytest.importorskip("numpy")
    racks = json.loads((FIX / "racks.json").read_text())
    node = racks["items"][0]
    assert node["metadata"]["name"] == "a1" and node["status"]["allocatable"]["nvidia.com/gpu"] != "5"
    node["status"]["allocatable"]["nvidia.com/gpu"] = np.int64(5)
    k = gang.kube.load(racks, _pytorchjob(np.int64(3), np.int32(2)))
    assert k.inventory.node("a1").capacity["nvidia.com/gpu"] == gang.Quantity(5)
    (g,) = k.gangs
    assert [(r.count, r.requests["nvidia.com/gpu"]) for r in g.roles] == [(3, gang.Quantity(2))]
    # numpy floats are numbers too (a fractional CPU quantity).
    node["status"]["allocatable"]["cpu"] = np.float64(1.5)
    assert gang.kube.load(racks).inventory.node("a1").capacity["cpu"] == gang.Quantity("1500m")


def test_parsed_objects_with_a_value_that_is_not_data_name_the_field():
    with pytest.raises(gang.InvalidScenario) as e:
        gang.kube.load(_pytorchjob(object(), 1))
    assert e.value.field == "<input 1>.spec.pytorchReplicaSpecs.Worker.replicas", e.value.field
    assert "object" in str(e.value)


def test_topology_choices():
    detected = gang.kube.load(FIX / "racks.json")
    assert gang.kube.load(FIX / "racks.json", topology="detect").inventory.levels == detected.inventory.levels
    given = gang.kube.load(FIX / "racks.json", topology=[RACK])
    assert given.inventory.levels == [RACK] and given.report["topology"]["origin"] == "given"
    with pytest.raises(ValueError, match="topology must be"):
        gang.kube.load(FIX / "racks.json", topology="rack")
    with pytest.raises(gang.InvalidInventory) as e:
        gang.kube.load(FIX / "racks.json", topology=["topology.example.com/row"])
    assert e.value.kube_kind == "missing_label" and "topology.example.com/row" in str(e.value)


def test_a_named_workload_does_not_count_its_own_pods():
    nodes = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.example.com/rack: r1}}
status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
"""
    group = (FIX / "training-workers.yaml").read_text().replace(
        "schedulingGroup:", "nodeName: n1\n  schedulingGroup:")
    everything = gang.kube.load(("n.yaml", nodes), ("g.yaml", group))
    assert everything.inventory.free("n1", "nvidia.com/gpu") == gang.Quantity(4)  # 4 bound members
    mine = gang.kube.load(("n.yaml", nodes), ("g.yaml", group), workload="podgroup/training-workers",
                          namespace="ml-team")
    assert mine.inventory.free("n1", "nvidia.com/gpu") == gang.Quantity(8)
    assert [g.name for g in mine.gangs] == ["training-workers"]
    with pytest.raises(gang.InvalidRequest, match="no such workload"):
        gang.kube.load(("n.yaml", nodes), ("g.yaml", group), workload="job/train")


def test_a_group_without_members_is_a_warning_or_an_error_when_named():
    group = (FIX / "training-workers.yaml").read_text().split("\n---\n")[0]
    k = gang.kube.load(FIX / "racks.json", ("podgroup.yaml", group))
    assert k.gangs == []
    (w,) = k.workloads
    assert w["error"]["kind"] == "invalid_minimum"
    assert [c["status"] for c in w["checks"] if c["id"] == "members_found"] == ["error"]
    assert any(x.startswith("PodGroup/ml-team/training-workers: no gang:") for x in k.warnings)
    with pytest.raises(gang.InvalidRequest) as e:
        gang.kube.load(FIX / "racks.json", ("podgroup.yaml", group), workload="training-workers")
    assert (e.value.kube_kind, e.value.object, e.value.file) == (
        "invalid_minimum", "PodGroup/ml-team/training-workers", "podgroup.yaml")


@pytest.mark.parametrize("text,cls,kind,field", [
    ('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a1"}, '
     '"status": {"allocatable": {"cpu": "-4"}}}', gang.InvalidScenario, "invalid_value", "status.allocatable.cpu"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a\n", gang.InvalidScenario, "malformed", None),
    ("metadata: {name: p}\n", gang.InvalidScenario, "unexpected_kind", None),
])
def test_errors_name_file_object_and_field(text, cls, kind, field):
    with pytest.raises(cls) as e:
        gang.kube.load(("bad.yaml", text))
    err = e.value
    assert (err.file, err.kube_kind) == ("bad.yaml", kind) and str(err).startswith("bad.yaml")
    if field:
        assert err.field == field and err.object == "Node/gpu-a1" and err.value == "-4"
        assert str(err).startswith('bad.yaml: Node/gpu-a1: status.allocatable.cpu: "-4"')


def test_a_minimum_above_the_members_and_no_nodes():
    job = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: t, namespace: ml}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 9}}
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}
"""
    with pytest.raises(gang.InvalidRequest) as e:
        gang.kube.load(FIX / "racks.json", ("job.yaml", job))
    assert e.value.kube_kind == "invalid_minimum" and "runPolicy.schedulingPolicy.minAvailable" in str(e.value)
    with pytest.raises(gang.InvalidScenario) as e:
        gang.kube.load(("job.yaml", job.replace("9", "4")))
    assert e.value.kube_kind == "unexpected_kind"


def test_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError):
        gang.kube.load(tmp_path / "nope.yaml")
    with pytest.raises(TypeError):
        gang.kube.load()
    with pytest.raises(TypeError):
        gang.kube.load(42)


def test_a_kube_cluster_feeds_the_simulator():
    k = gang.kube.load(FIX / "racks.json", FIX / "training-workers.yaml")
    r = gang.sim.simulate(k.document, [{"id": "t", "submit": 0, "duration": 600, "members": 4, "gpus": 1}],
                          "required(rack)")
    assert r.job("t")["state"] == "completed"
    assert gang.sim.simulate(k.inventory, r.document["trace"], "required(rack)").jobs == r.jobs


def test_from_kube_classmethods_are_gang_kube_load():
    """Inventory.from_kube and Gang.from_kube give what gang.kube.load gives; with several
    workloads Gang.from_kube needs one named, and says which exist."""
    sources = [FIX / "racks.json", FIX / "training-workers.yaml"]
    loaded = gang.kube.load(*sources)
    inv = gang.Inventory.from_kube(*sources)
    g = gang.Gang.from_kube(*sources)
    assert inv == loaded.inventory and g == loaded.gangs[0]
    assert inv.place(g).domain == "b1/a"
    job = ("job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\n"
           "spec:\n  parallelism: 2\n  template:\n    spec:\n      containers:\n"
           "      - {name: c, resources: {requests: {nvidia.com/gpu: '1'}}}\n")
    two = [*sources, job]
    assert len(gang.kube.load(*two).gangs) == 2
    with pytest.raises(gang.InvalidRequest) as info:
        gang.Gang.from_kube(*two)
    assert info.value.field == "workload"
    assert "training-workers" in str(info.value) and "train" in str(info.value)
    assert gang.Gang.from_kube(*two, workload="job/train").name == "train"
    assert gang.Gang.from_kube(*two, workload="podgroup/training-workers") == g
