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
    # And plain Python floats (issue 25 item 8: "cpu": 0.5 in a dict, as JSON writes it).
    node["status"]["allocatable"]["cpu"] = 0.5
    assert gang.kube.load(racks).inventory.node("a1").capacity["cpu"] == gang.Quantity("500m")


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


# ---------------------------------------------------------------- parts and priority
# The fixtures of gang-kube/tests/podsets.rs (fixtures/users/: nodes-racks.yaml is two
# racks r1, r2 of block b1, two nodes each, 8 CPUs and 4 GPUs a node), and the same
# facts that file checks, worked out again from the fixtures' headers.

USERS = FIX / "users"
KRACK = "topology.kubernetes.io/rack"
KBLOCK = "topology.kubernetes.io/block"


def _podsets(text=None):
    text = text if text is not None else (USERS / "kueue-podsets.yaml").read_text()
    return gang.kube.load(USERS / "nodes-racks.yaml", ("workload.yaml", text))


def _rack_of(node):
    return node.split("-")[0]  # r1-a -> r1


def test_kueue_podsets_are_parts_each_placed_in_a_rack_of_its_own():
    k = _podsets()
    (w,) = k.workloads
    # Two replicated jobs, each a PodSet asking for a rack: leader 1 × 1 pod, workers
    # 2 Jobs × 4 pods.
    assert [(p["name"], p["group"], p["roles"], p["members"], p["required"], p["preferred"],
             p["slices"]) for p in w["parts"]] == [
        ("leader", None, ["leader"], 1, KRACK, None, []),
        ("workers", None, ["workers"], 8, KRACK, None, []),
    ]
    assert w["parts"][0]["field"].endswith("kueue.x-k8s.io/podset-required-topology")
    # 4 + 8 GPUs: no rack of 8 holds all 12, but the leader fills a node of one rack and
    # the 8 workers the other rack's two nodes.
    leader, workers = k.place_parts("tas-example-jobset")
    assert [leader["name"], workers["name"]] == ["leader", "workers"]
    assert leader["status"] == workers["status"] == "placed"
    assert leader["level"] == workers["level"] == KRACK
    assert leader["message"] is None
    assert {leader["domain"], workers["domain"]} == {"b1/r1", "b1/r2"}
    assert sum(leader["nodes"].values()) == 1 and sum(workers["nodes"].values()) == 8
    assert all(n <= 4 for n in workers["nodes"].values())
    for part in (leader, workers):
        assert {_rack_of(n) for n in part["nodes"]} == {part["domain"].split("/")[1]}
        assert sorted((a["node"], a["count"]) for a in part["assignments"]) == sorted(
            part["nodes"].items())
        assert {a["role"] for a in part["assignments"]} == set(part["roles"])
    # The full name works too; nothing was reserved: the same answer again.
    assert k.place_parts("JobSet/default/tas-example-jobset") == [leader, workers]
    assert k.inventory.free("r1-a", "nvidia.com/gpu") == gang.Quantity("4")
    with pytest.raises(KeyError):
        k.place_parts("nope")


def test_podsets_sharing_a_group_name_are_one_gang_not_parts():
    grouped = (USERS / "kueue-podsets.yaml").read_text().replace(
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack",
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n"
        "              kueue.x-k8s.io/podset-group-name: together")
    k = _podsets(grouped)
    (w,) = k.workloads
    assert w["parts"] == [] and k.place_parts("tas-example-jobset") == []
    assert all(r["constrained"] for r in w["roles"])
    # 12 GPUs in one rack of 8: unschedulable (Kueue leaves it pending too).
    with pytest.raises(gang.Unschedulable):
        k.inventory.place(k.gang("tas-example-jobset"))


def _podsets_with_eval() -> str:
    """kueue-podsets.yaml with 1 worker Job of 6 pods and a third PodSet, eval (6 pods of
    1 GPU, a rack each)."""
    text = (USERS / "kueue-podsets.yaml").read_text().replace(
        "replicas: 2\n", "replicas: 1\n").replace(
        "completions: 4\n        parallelism: 4", "completions: 6\n        parallelism: 6")
    text += ("  - name: eval\n    replicas: 1\n    template:\n      spec:\n        parallelism: 6\n"
             "        template:\n          metadata:\n            annotations:\n"
             "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n"
             "          spec:\n            containers:\n"
             "            - {name: e, image: busybox, resources: {limits: {nvidia.com/gpu: \"1\"}}}\n")
    return text


def test_a_later_podset_that_does_not_fit_is_the_last_part():
    # Workers 1 Job × 6 pods, then eval 6 pods, each asking for a rack: the leader (4)
    # fills a node of one rack, the 6 workers take the other rack (8 free), leaving
    # 4 and 2 GPUs: eval's 6 fit in no rack.
    text = _podsets_with_eval()
    k = _podsets(text)
    (w,) = k.workloads
    assert [(p["name"], p["members"]) for p in w["parts"]] == [
        ("leader", 1), ("workers", 6), ("eval", 6)]
    leader, workers, ev = k.place_parts("tas-example-jobset")
    assert (leader["status"], workers["status"], ev["status"]) == (
        "placed", "placed", "unschedulable")
    assert leader["domain"] != workers["domain"]
    assert (ev["name"], ev["domain"], ev["nodes"], ev["assignments"]) == ("eval", None, None, None)
    assert "eval" in ev["message"]


def test_jobset_exclusive_child_jobs_are_parts_in_distinct_racks():
    text = (USERS / "jobset-exclusive.yaml").read_text().replace("replicas: 3", "replicas: 2")
    k = gang.kube.load(USERS / "nodes-racks.yaml", ("js.yaml", text))
    (w,) = k.workloads
    assert [(p["name"], p["roles"], p["members"], p["required"]) for p in w["parts"]] == [
        ("workers-0", ["workers"], 2, KRACK), ("workers-1", ["workers"], 2, KRACK)]
    assert w["parts"][0]["field"] == "metadata.annotations.alpha.jobset.sigs.k8s.io/exclusive-topology"
    a, b = k.place_parts("exclusive-placement")
    assert [a["name"], b["name"]] == ["workers-0", "workers-1"]
    assert sum(a["nodes"].values()) == sum(b["nodes"].values()) == 2
    racks = [{_rack_of(n) for n in p["nodes"]} for p in (a, b)]
    assert all(len(r) == 1 for r in racks) and racks[0] != racks[1]
    assert {a["domain"], b["domain"]} == {"b1/r1", "b1/r2"}
    # Three Jobs on two racks: listed as three parts, but none placed.
    k3 = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "jobset-exclusive.yaml")
    assert [p["name"] for p in k3.workloads[0]["parts"]] == ["workers-0", "workers-1", "workers-2"]
    assert k3.place_parts("exclusive-placement") == []


def test_volcano_partitions_are_slices_of_one_gang_not_parts():
    k = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "volcano-partitions.yaml")
    (w,) = k.workloads
    assert w["parts"] == [] and k.place_parts("partitioned-job") == []
    # Partitions of 2 within tier 1 (the rack), the job within tier 2 (the block).
    (s,) = w["topology"]["slices"]
    assert (s["size"], s["level"]) == (2, {"tier": 1})
    assert s["field"] == "spec.tasks[0].partitionPolicy.networkTopology.highestTierAllowed"
    g = w["gang"]["topology"]
    assert g["required"] == KBLOCK and g["slices"] == [{"level": KRACK, "size": 2}]
    # 5 CPUs a pod: one a node, so each partition of 2 fills a rack.
    p = k.inventory.place(k.gang("partitioned-job"))
    assert sorted(p.nodes.items()) == [("r1-a", 1), ("r1-b", 1), ("r2-a", 1), ("r2-b", 1)]


def test_place_parts_uses_the_inventory_as_it_is_now():
    k = _podsets()
    # One GPU of rack r2 taken: r2 has 7 free (one node still has 4), r1 8. The leader
    # (4, first) fits either; best fit takes the tighter r2; the workers (8) then need
    # r1, the only rack with 8 free.
    other = gang.Inventory.from_json(json.dumps(k.document))
    other.reserve(other.place(gang.Gang("other", [gang.Role(
        "x", 1, requests={"nvidia.com/gpu": 1}, node_selector={KRACK: "r2"})])))
    leader, workers = k.place_parts("tas-example-jobset", inventory=other)
    assert (leader["domain"], workers["domain"]) == ("b1/r2", "b1/r1")
    # Five of r1's GPUs taken instead (a whole node and one more): no rack has 8 free
    # after the leader, so the workers do not fit.
    other = gang.Inventory.from_json(json.dumps(k.document))
    other.reserve(other.place(gang.Gang("other", [gang.Role(
        "x", 5, requests={"nvidia.com/gpu": 1}, node_selector={KRACK: "r1"})])))
    leader, workers = k.place_parts("tas-example-jobset", inventory=other)
    assert (leader["status"], workers["status"]) == ("placed", "unschedulable")
    # Nothing reserved on k.inventory: the first answer still stands there.
    assert all(p["status"] == "placed" for p in k.place_parts("tas-example-jobset"))


def test_each_workload_carries_its_priority_and_where_it_came_from():
    # preemption.yaml + kueue-workload-priority.yaml (their headers): urgent names
    # PriorityClass urgent (1000), peer says spec.priority 50, wpc-urgent's label names
    # WorkloadPriorityClass kueue-urgent (1000, over its pods' class low = 10), wpc-mid's
    # kueue-mid (50, over spec.priority 2500); typo and wpc-typo name classes not given.
    k = gang.kube.load(FIX / "preemption.yaml", FIX / "kueue-workload-priority.yaml")
    by = {w["object"]["name"]: w for w in k.workloads}
    label = "metadata.labels.kueue.x-k8s.io/priority-class"
    pr = {n: by[n]["priority"] for n in by}
    assert pr["urgent"] == {"value": 1000, "class": "urgent", "source": "priority_class",
                            "field": "spec.template.spec.priorityClassName", "preempts": True}
    assert (pr["peer"]["value"], pr["peer"]["source"], pr["peer"]["class"]) == (50, "spec_priority", None)
    assert (pr["polite"]["value"], pr["polite"]["preempts"]) == (1000, False)
    assert pr["wpc-urgent"] == {"value": 1000, "class": "kueue-urgent",
                                "source": "workload_priority_class", "field": label,
                                "preempts": True}
    assert (pr["wpc-mid"]["value"], pr["wpc-mid"]["source"]) == (50, "workload_priority_class")
    assert by["wpc-urgent"]["workload_priority_class"] == "kueue-urgent"
    # The gang carries it.
    assert k.gang("wpc-urgent").priority == 1000 and k.gang("wpc-mid").priority == 50
    # Classes not in the input: no priority, why, and a warning line; the gang is still
    # built (at 0).
    for name, field, value in [("typo", "spec.template.spec.priorityClassName", "urgnet"),
                               ("wpc-typo", label, "kueue-urgnet")]:
        assert by[name]["priority"] is None
        e = by[name]["priority_error"]
        assert (e["kind"], e["field"], e["value"]) == ("invalid_value", field, value)
        assert any(x.startswith(f"Job/ml/{name}: no priority:") and value in x for x in k.warnings)
        assert k.gang(name).priority == 0
    # Without any class or spec.priority: 0, from nowhere.
    plain = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "jobset-exclusive.yaml")
    assert plain.workloads[0]["priority"]["source"] == "none"
    assert plain.workloads[0]["priority"]["value"] == 0


def test_parts_of_a_request_the_cluster_cannot_resolve_are_none_and_placing_raises():
    # Levels given as the block only: the PodSets' rack is not a level of the cluster.
    k = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "kueue-podsets.yaml", topology=[KBLOCK])
    (w,) = k.workloads
    assert w["parts"] is None and w["gang"] is None
    assert (w["error"]["kind"], w["error"]["value"]) == ("unknown_level", KRACK)
    with pytest.raises(gang.InvalidRequest) as e:
        k.place_parts("tas-example-jobset")
    assert (e.value.kube_kind, e.value.value, e.value.object) == (
        "unknown_level", KRACK, "JobSet/default/tas-example-jobset")
    assert e.value.field.endswith("kueue.x-k8s.io/podset-required-topology")


# Loaded.place: gang-kube's Cluster::place, the answer `gang place` gives (gang-cli's
# tests/users.rs and gang-kube's tests/users.rs, podsets.rs on the same files).

def test_place_checks_exclusive_child_jobs_as_gang_place_does():
    # 3 child Jobs of 2 pods (1 CPU each), each needing a rack of its own; 2 racks
    # (16 CPUs each): gang-kube's place is Unschedulable (JobSet leaves one Job
    # pending), though the 6 pods fit in one rack as one gang.
    k = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "jobset-exclusive.yaml")
    assert k.inventory.place(k.gang("exclusive-placement")).members == 6
    with pytest.raises(gang.Unschedulable) as e:
        k.place("exclusive-placement")
    assert e.value.status == "unschedulable"
    assert isinstance(e.value.diagnosis, gang.Diagnosis)
    assert str(e.value) == str(e.value.diagnosis) != ""
    with pytest.raises(gang.Unschedulable):
        k.place("JobSet/default/exclusive-placement")
    # 2 child Jobs: placed (`gang place` exits 0 with 4 members), 2 pods per Job.
    text = (USERS / "jobset-exclusive.yaml").read_text().replace("replicas: 3", "replicas: 2")
    k2 = gang.kube.load(USERS / "nodes-racks.yaml", ("js.yaml", text))
    p = k2.place("exclusive-placement")
    assert isinstance(p, gang.Placement)
    assert p.members == 4 and sum(p.nodes.values()) == 4
    assert {a.role for a in p.assignments} == {"workers"}


def test_place_of_kueue_podsets_is_placed_and_the_first_part_that_fails_is_the_answer():
    # The leader (4 GPUs) and 8 workers (1 GPU), each PodSet in a rack of its own
    # (racks of 8 GPUs): placed (`gang place` exits 0); the whole gang, 9 members, the
    # 8 workers (the largest part, the one constrained) within one rack.
    k = _podsets()
    p = k.place("tas-example-jobset")
    assert p.members == 9
    workers = {a.node for a in p.assignments if a.role == "workers"}
    assert len({_rack_of(n) for n in workers}) == 1
    assert k.place("JobSet/default/tas-example-jobset").nodes == p.nodes
    # Reservable on the inventory it was made on; then the same workload no longer fits
    # (16 GPUs, 12 held).
    r = k.inventory.reserve(p)
    assert sum(int(k.inventory.free(n, "nvidia.com/gpu")) for n in k.inventory.node_names) == 4
    with pytest.raises(gang.Unschedulable):
        k.place("tas-example-jobset")
    k.inventory.release(r)
    assert k.place("tas-example-jobset").nodes == p.nodes
    # A third PodSet (eval, 6 pods, a rack) after the leader and 6 workers: the leader
    # (4) takes a node of one rack, the workers (6) the other rack, leaving 4 and 2
    # GPUs; eval's 6 fit in no rack. The answer is eval's diagnosis, though the whole
    # gang alone (4 + 6 + 6 = 16 GPUs, only the workers constrained) fits.
    text = _podsets_with_eval()
    k3 = _podsets(text)
    with pytest.raises(gang.Unschedulable) as e:
        k3.place("tas-example-jobset")
    (ev,) = [x for x in k3.place_parts("tas-example-jobset") if x["status"] != "placed"]
    assert ev["name"] == "eval" and str(e.value) == ev["message"]


def test_place_answers_on_the_inventory_given():
    k = _podsets()
    # Five of r1's GPUs taken (a whole node and one more): after the leader, no rack
    # has 8 free for the workers: unschedulable there, placed on k.inventory.
    other = gang.Inventory.from_json(json.dumps(k.document))
    other.reserve(other.place(gang.Gang("other", [gang.Role(
        "x", 5, requests={"nvidia.com/gpu": 1}, node_selector={KRACK: "r1"})])))
    with pytest.raises(gang.Unschedulable):
        k.place("tas-example-jobset", inventory=other)
    assert k.place("tas-example-jobset").members == 9
    # One GPU of r2 taken: placed on that inventory, and reservable there.
    other = gang.Inventory.from_json(json.dumps(k.document))
    other.reserve(other.place(gang.Gang("other", [gang.Role(
        "x", 1, requests={"nvidia.com/gpu": 1}, node_selector={KRACK: "r2"})])))
    p = k.place("tas-example-jobset", inventory=other)
    other.reserve(p)
    assert sum(int(other.free(n, "nvidia.com/gpu")) for n in other.node_names) == 16 - 1 - 12


def test_place_errors_as_place_parts():
    k = _podsets()
    with pytest.raises(KeyError):
        k.place("nope")
    k = gang.kube.load(USERS / "nodes-racks.yaml", USERS / "kueue-podsets.yaml", topology=[KBLOCK])
    with pytest.raises(gang.InvalidRequest) as e:
        k.place("tas-example-jobset")
    assert (e.value.kube_kind, e.value.value, e.value.object) == (
        "unknown_level", KRACK, "JobSet/default/tas-example-jobset")


# ---------------------------------------------------------------- issue 24: users' objects
# The fixtures of gang-kube/tests/users.rs and gang-cli/tests/users.rs (fixtures/users/,
# each with the nodes-racks.yaml cluster above unless said), the same facts worked out
# again from the fixtures' contents, through gang.kube.load.

def _users(*files, **kw):
    """nodes-racks.yaml and the fixtures named (or ``(name, text)`` pairs)."""
    return gang.kube.load(USERS / "nodes-racks.yaml",
                          *(f if isinstance(f, tuple) else USERS / f for f in files), **kw)


def _racks(nodes):
    return {_rack_of(n) for n in nodes}


# 1. generateName

def test_an_object_with_only_generate_name_is_named_from_it_with_a_warning():
    text = (USERS / "generate-name-job.yaml").read_text()
    assert "generateName: tas-sample-job-" in text and "\n  name:" not in text
    k = _users("generate-name-job.yaml")
    (w,) = k.workloads
    assert w["name"] == "Job/default/tas-sample-job-"
    (warn,) = [x for x in w["warnings"] if x["field"] == "metadata.generateName"]
    assert "five random characters" in warn["message"]
    assert any(line.startswith("Job/default/tas-sample-job-: metadata.generateName: ")
               for line in k.warnings)
    # Selected by that name, kubectl style, as any other.
    named = _users("generate-name-job.yaml", workload="job/tas-sample-job-", namespace="default")
    assert [x["name"] for x in named.workloads] == ["Job/default/tas-sample-job-"]
    # parallelism 3 pods of 3 CPUs, rack required: nodes of 8 CPUs hold 2 each, so 2 + 1
    # in one rack.
    g = k.gang("tas-sample-job-")
    assert [(r.count, r.requests["cpu"]) for r in g.roles] == [(3, gang.Quantity(3))]
    assert g.required == KRACK
    p = k.inventory.place(g)
    assert sum(p.nodes.values()) == 3 and sorted(p.nodes.values()) == [1, 2]
    assert len(_racks(p.nodes)) == 1


# 2. objects without a namespace

def test_objects_without_a_namespace_are_put_in_the_one_given_else_default():
    text = (USERS / "podgroup-no-namespace.yaml").read_text()
    # As written: the group and three pods name no namespace, one pod names default.
    assert text.count("kind: Pod\n") == 4 and text.count("namespace: default") == 1
    assert "minMember: 3" in text
    for kw in ({}, {"namespace": "default"}):
        k = _users("podgroup-no-namespace.yaml", **kw)
        (w,) = k.workloads  # the group met all four pods: one workload
        assert w["name"] == "PodGroup/default/nginx", kw
        assert (w["members"], w["minimum"]) == (4, 3), kw  # minMember kept
        assert sorted(p["name"] for p in w["member_pods"]) == [f"nginx-{i}" for i in range(4)]
        assert {p["namespace"] for p in w["member_pods"]} == {"default"}
        # Cluster-scoped objects stay without one.
        assert all(o["namespace"] is None for o in k.objects if o["kind"] == "Node")
        assert all(o["namespace"] == "default" for o in k.objects if o["kind"] != "Node")
    # namespace="ml": the objects naming none move there; the pod written in default stays.
    k = _users("podgroup-no-namespace.yaml", namespace="ml")
    assert [w["name"] for w in k.workloads] == ["PodGroup/ml/nginx", "PodGroup/default/nginx"]
    ml = k.workloads[0]
    assert (ml["members"], ml["minimum"]) == (3, 3)
    assert {p["namespace"] for p in ml["member_pods"]} == {"ml"}
    # A workload named in the namespace given is found there.
    one = _users("podgroup-no-namespace.yaml", workload="podgroup/nginx", namespace="ml")
    assert [w["name"] for w in one.workloads] == ["PodGroup/ml/nginx"]
    # Placing by its full name reads the objects again in the same namespace.
    assert k.place_parts("PodGroup/ml/nginx") == []


def test_member_pods_without_requests_give_one_warning_with_the_count():
    text = (USERS / "podgroup-no-namespace.yaml").read_text().replace(
        ', resources: {requests: {cpu: "1"}}', "")
    assert "resources" not in text
    k = _users(("pg.yaml", text))
    (w,) = k.workloads
    notes = [x for x in w["warnings"] if "request nothing" in x["message"]]
    assert len(notes) == 1, notes
    # 4 pods: one named, "and 3 more".
    assert notes[0]["message"].endswith("(and 3 more pods)"), notes


# 3. more kinds

def _roles(w):
    return [(r["name"], r["members"]) for r in w["roles"]]


def _by_name(k, name):
    (w,) = [w for w in k.workloads if w["object"]["name"] == name]
    return w


def test_a_leader_worker_set_is_one_group_of_size_pods_leader_first():
    text = (USERS / "lws.yaml").read_text()
    assert "apiVersion: leaderworkerset.x-k8s.io/v1" in text
    assert "size: 4" in text and "replicas: 2" in text
    k = _users("lws.yaml")
    (w,) = k.workloads
    assert (w["name"], w["framework"]) == ("LeaderWorkerSet/default/vllm", "leader-worker-set")
    assert w["object"]["api_version"] == "leaderworkerset.x-k8s.io/v1"
    # size 4: the leader and 3 workers; the 2 replicas are independent gangs (a warning).
    assert _roles(w) == [("leader", 1), ("worker", 3)]
    assert (w["members"], w["minimum"]) == (4, 4)
    assert all(r["constrained"] for r in w["roles"])
    assert w["topology"]["required"]["level"] == {"key": KRACK}
    assert any(x["field"] == "spec.replicas" and "2 groups of 4" in x["message"]
               for x in w["warnings"])
    # Both templates share one podset-group-name: no "stricter than Kueue" warning.
    assert not any("stricter" in x["message"] for x in w["warnings"])
    g = k.gang("vllm")
    assert g.required == KRACK
    assert [(r.name, r.count) for r in g.roles] == [("leader", 1), ("worker", 3)]
    assert g.roles[1].requests["nvidia.com/gpu"] == gang.Quantity(2)  # from the limit
    # 3 workers × 2 GPUs = 6 of a rack's 8, the leader's 2 CPUs beside them.
    p = k.inventory.place(g)
    assert sum(p.nodes.values()) == 4 and len(_racks(p.nodes)) == 1


def test_jax_xgboost_and_paddle_jobs_are_read_by_replica_type():
    k = _users("kubeflow-more.yaml")
    jax = _by_name(k, "jax-simple")
    assert (jax["framework"], jax["object"]["kind"], _roles(jax)) == (
        "jax-job", "JAXJob", [("worker", 2)])
    assert jax["kueue"] is True  # kueue.x-k8s.io/queue-name
    xgb = _by_name(k, "xgboost-dist-iris")
    assert (xgb["framework"], xgb["object"]["kind"]) == ("xg-boost-job", "XGBoostJob")
    assert _roles(xgb) == [("master", 1), ("worker", 2)]
    assert (xgb["members"], xgb["minimum"]) == (3, 3)
    paddle = _by_name(k, "paddle-simple-gpu")
    assert (paddle["framework"], paddle["object"]["kind"]) == ("paddle-job", "PaddleJob")
    # 4 workers, schedulingPolicy.minAvailable 3.
    assert (paddle["members"], paddle["minimum"]) == (4, 3)
    assert paddle["minimum_field"] == "spec.runPolicy.schedulingPolicy.minAvailable"
    assert {w["object"]["api_version"] for w in k.workloads} == {"kubeflow.org/v1"}
    assert [g.name for g in k.gangs] == ["jax-simple", "xgboost-dist-iris", "paddle-simple-gpu"]


def test_ray_clusters_count_the_head_and_replicas_times_hosts():
    k = _users("ray.yaml")
    rc = _by_name(k, "raycluster-kuberay")
    assert rc["framework"] == "ray-cluster"
    # 1 head + 2 replicas × numOfHosts 2.
    assert _roles(rc) == [("head", 1), ("workergroup", 4)]
    assert (rc["members"], rc["minimum"]) == (5, 5)
    rj = _by_name(k, "rayjob-sample")
    assert rj["framework"] == "ray-job"
    # 1 head + 3 small-group workers; the submitter pod is not counted, and said so.
    assert _roles(rj) == [("head", 1), ("small-group", 3)] and rj["members"] == 4
    assert any(x["field"] == "spec.submitterPodTemplate" for x in rj["warnings"])
    # A RayJob on an existing cluster names what to give instead.
    text = ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: on-existing}\nspec:\n"
            "  clusterSelector: {ray.io/cluster: c}\n")
    with pytest.raises(gang.InvalidScenario) as e:
        gang.kube.load(("rj.yaml", text))
    assert (e.value.kube_kind, e.value.field, e.value.object) == (
        "invalid_value", "spec.rayClusterSpec", "RayJob/default/on-existing")


def test_an_app_wrapper_is_the_pod_sets_of_its_components():
    k = _users("appwrapper.yaml")
    (w,) = k.workloads
    assert (w["name"], w["framework"]) == ("AppWrapper/default/sample-aw", "app-wrapper")
    # Component 0: a Job's template × 2; component 1: a PyTorchJob's Master × 1, Worker × 2.
    assert _roles(w) == [("job0", 2), ("pytorchjob1", 1), ("pytorchjob1-1", 2)]
    assert w["members"] == 5
    g = k.gang("sample-aw")
    assert g.roles[2].requests["nvidia.com/gpu"] == gang.Quantity(1)
    assert g.roles[0].requests["cpu"] == gang.Quantity(1)
    # A path naming nothing is refused at the pod set.
    text = (USERS / "appwrapper.yaml").read_text().replace("Worker.template}", "Wrkr.template}")
    with pytest.raises(gang.GangError) as e:
        gang.kube.load(("aw.yaml", text))
    assert (e.value.field, e.value.value) == (
        "spec.components[1].podSets[1].path", "template.spec.pytorchReplicaSpecs.Wrkr.template")


def test_kueue_plain_pods_with_a_group_name_are_one_gang():
    text = (USERS / "kueue-pod-group.yaml").read_text()
    assert text.count("kueue.x-k8s.io/pod-group-name: sample-group") == 3
    assert text.count('kueue.x-k8s.io/pod-group-total-count: "3"') == 3
    k = _users("kueue-pod-group.yaml")
    (w,) = k.workloads
    assert (w["name"], w["framework"]) == ("PodGroup/default/sample-group", "kueue-pod-group")
    assert (w["members"], w["minimum"]) == (3, 3)
    assert w["topology"]["required"]["level"] == {"key": KRACK}
    # 3 pods of 3 CPUs: 2 fit on a node of 8, so 2 + 1 in one rack.
    p = k.inventory.place(k.gang("sample-group"))
    assert sorted(p.nodes.values()) == [1, 2] and len(_racks(p.nodes)) == 1
    # The pods say 4, 3 are there: the members_found check fails.
    k = _users(("g.yaml", text.replace('total-count: "3"', 'total-count: "4"')))
    (c,) = [c for c in k.workloads[0]["checks"] if c["id"] == "members_found"]
    assert c["status"] == "error", c
    # Pods disagreeing on the count: refused, naming the pod.
    with pytest.raises(gang.GangError) as e:
        _users(("g.yaml", text.replace('total-count: "3"', 'total-count: "2"', 1)))
    assert e.value.object == "Pod/default/sample-worker-1"
    assert e.value.field == "metadata.annotations.kueue.x-k8s.io/pod-group-total-count"


@pytest.mark.parametrize("file, workload", [
    ("lws.yaml", "leaderworkerset/vllm"),
    ("kubeflow-more.yaml", "jaxjob/jax-simple"),
    ("ray.yaml", "raycluster/raycluster-kuberay"),
    ("appwrapper.yaml", "appwrapper/sample-aw"),
    ("kueue-pod-group.yaml", "podgroup/sample-group"),
])
def test_the_new_kinds_are_placed_when_named(file, workload):
    k = _users(file, workload=workload)
    (g,) = k.gangs
    assert g.name == workload.split("/")[1]
    p = k.inventory.place(g)
    assert sum(p.nodes.values()) == k.workloads[0]["members"]


def test_an_unsupported_kind_is_named_with_its_api_version_file_and_what_is_read():
    k = _users("deployment.yaml")
    assert k.workloads == [] and k.gangs == []
    (u,) = k.unread
    path = str(USERS / "deployment.yaml")
    assert (u["kind"], u["api_version"], u["source"], u["object"]) == (
        "Deployment", "apps/v1", path, "Deployment/web")
    assert u["message"].startswith(
        f"Kind Deployment (apiVersion apps/v1) in {path} is not a workload gang reads; supported: ")
    for kind in ("LeaderWorkerSet", "JAXJob", "XGBoostJob", "PaddleJob", "AppWrapper", "RayJob",
                 "RayCluster", "kueue.x-k8s.io/pod-group-name"):
        assert kind in u["message"], kind
    assert f"Deployment/web: kind: {u['message']}" in k.warnings
    # Asked for by name: the error says the same.
    with pytest.raises(gang.InvalidRequest) as e:
        _users("deployment.yaml", workload="deployment/web")
    assert e.value.field == "workload" and u["message"] in str(e.value)
    # Read kinds are not listed.
    assert _users("lws.yaml").unread == []


# 4. what admission adds

def _split_docs(text):
    return [d for d in text.split("\n---\n")]


def test_a_limit_range_gives_containers_without_requests_its_defaults():
    text = (USERS / "limitrange-pi.yaml").read_text()
    assert "defaultRequest: {cpu: 0.5}" in text and "resources:" not in text
    k = _users("limitrange-pi.yaml")
    (w,) = k.workloads
    # defaultRequest cpu 0.5: the pod counts 500m, not just `pods 1`.
    assert k.gang("pi").roles[0].requests["cpu"] == gang.Quantity("500m")
    assert any("LimitRange default/cpu-limit-range" in x["message"] for x in w["warnings"])
    # Without the LimitRange: nothing requested, and a warning says what to give.
    limit_range, job = text.split("---")[:2]
    assert "kind: LimitRange" in limit_range and "kind: Job" in job
    k = _users(("pi.yaml", job))
    (w,) = k.workloads
    assert "cpu" not in k.gang("pi").roles[0].requests
    (warn,) = [x for x in w["warnings"] if x["field"] == "spec.template.spec.containers"]
    assert "no LimitRange of namespace default" in warn["message"]
    # A LimitRange of another namespace does not apply.
    other = text.replace("metadata: {name: cpu-limit-range}",
                         "metadata: {name: cpu-limit-range, namespace: other}")
    assert other != text
    assert "cpu" not in _users(("lr.yaml", other)).gang("pi").roles[0].requests


def test_a_limit_range_keeps_what_a_container_sets():
    # A cpu limit of 2 and no cpu request: the API server made the request 2 (the limit);
    # the LimitRange's 0.5 does not replace it.
    text = (USERS / "limitrange-pi.yaml").read_text().replace(
        "        image: perl:5.34.0",
        '        image: perl:5.34.0\n        resources: {limits: {cpu: "2"}, requests: {memory: 1Gi}}')
    requests = _users(("pi.yaml", text)).gang("pi").roles[0].requests
    assert (requests["cpu"], requests["memory"]) == (gang.Quantity(2), gang.Quantity("1Gi"))


def test_a_runtime_class_adds_its_pod_overhead():
    text = (USERS / "runtimeclass.yaml").read_text()
    assert "podFixed: {memory: 120Mi, cpu: 250m}" in text
    assert 'requests: {cpu: "2", memory: 100Mi}' in text
    k = _users("runtimeclass.yaml")
    (w,) = k.workloads
    r = k.gang("sandboxed").roles[0]
    # 2 CPUs + 250m overhead; 100Mi + 120Mi memory; parallelism 2.
    assert (r.count, r.requests["cpu"], r.requests["memory"]) == (
        2, gang.Quantity("2250m"), gang.Quantity("220Mi"))
    # Without the RuntimeClass: the overhead is unknown, and said so.
    job = text.split("---")[1]
    k = _users(("job.yaml", job))
    assert k.gang("sandboxed").roles[0].requests["cpu"] == gang.Quantity(2)
    assert any(x["field"] == "spec.template.spec.runtimeClassName"
               for x in k.workloads[0]["warnings"])


# 5. constraints that must not be dropped

def test_jobset_exclusive_topology_puts_each_child_job_alone_in_a_rack():
    text = (USERS / "jobset-exclusive.yaml").read_text()
    assert f"exclusive-topology: {KRACK}" in text
    assert "replicas: 3" in text and "parallelism: 2" in text
    # 3 Jobs of 2 pods, 2 racks: JobSet leaves one pending, though 6 CPUs fit in a rack.
    k = _users("jobset-exclusive.yaml")
    (w,) = k.workloads
    assert w["topology"]["exclusive"]["size"] == 2
    assert w["topology"]["exclusive"]["level"] == {"key": KRACK}
    (check,) = [c for c in w["checks"] if c["id"] == "exclusive_jobs"]
    assert check["status"] == "error" and "2 have room" in check["message"], check
    assert [p["name"] for p in w["parts"]] == ["workers-0", "workers-1", "workers-2"]
    # No distinct racks for the three: no part placed. (gang-kube's Cluster::place says
    # Unschedulable; the gang.Gang alone carries no exclusivity, so only this check and
    # place_parts say it.)
    assert k.place_parts("exclusive-placement") == []
    # 2 Jobs: one rack each.
    k = _users(("js.yaml", text.replace("replicas: 3", "replicas: 2")))
    (w,) = k.workloads
    (check,) = [c for c in w["checks"] if c["id"] == "exclusive_jobs"]
    assert check["status"] == "ok", check
    assert sum(k.inventory.place(k.gang("exclusive-placement")).nodes.values()) == 4


VOLCANO_HARD = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: network-topology-job, namespace: default}
spec:
  schedulerName: volcano
  minAvailable: 2
  networkTopology: {mode: hard, highestTierAllowed: 2}
  tasks:
  - name: t0
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
"""


def test_volcano_hard_network_topology_without_levels_is_an_error_naming_it():
    # Nodes without topology labels: tier 2 names no level.
    k = gang.kube.load(("v.yaml", VOLCANO_HARD))
    (w,) = k.workloads
    assert w["framework"] == "volcano-job" and w["gang"] is None
    assert w["error"]["kind"] == "unknown_level"
    assert w["error"]["field"] == "spec.networkTopology.highestTierAllowed"
    assert "no levels" in w["error"]["message"]
    assert any("no gang" in line and "highestTierAllowed" in line for line in k.warnings)
    with pytest.raises(gang.InvalidRequest) as e:
        gang.kube.load(("v.yaml", VOLCANO_HARD), workload="job/network-topology-job")
    assert e.value.field == "spec.networkTopology.highestTierAllowed"
    # Soft mode stays a preference: placed anywhere.
    k = gang.kube.load(("v.yaml", VOLCANO_HARD.replace("mode: hard", "mode: soft")))
    assert k.inventory.place(k.gang("network-topology-job")).nodes == {"n1": 2}


def test_a_jobset_joining_a_pod_group_takes_its_topology_and_minimum():
    text = (USERS / "jobset-scheduling-group.yaml").read_text()
    assert "schedulingGroup: {podGroupName: js-group}" in text and "minCount: 4" in text
    k = _users("jobset-scheduling-group.yaml")
    (w,) = k.workloads
    assert w["name"] == "JobSet/default/js"
    assert w["topology"]["required"]["level"] == {"key": KRACK}
    assert w["topology"]["required"]["field"].startswith(
        "PodGroup/default/js-group: spec.schedulingConstraints")
    # 2 Jobs × 2 pods, gang minCount 4.
    assert (w["members"], w["minimum"]) == (4, 4)
    # 4 pods × 2 GPUs = 8: exactly one rack (2 nodes × 4 GPUs).
    g = k.gang("js")
    assert g.required == KRACK
    p = k.inventory.place(g)
    assert sum(p.nodes.values()) == 4 and len(_racks(p.nodes)) == 1


# 7. GKE's ExtendedResourceToleration, as an option

def test_extended_resource_toleration_is_off_by_default_and_an_option():
    text = (USERS / "gke-gpu-taint.yaml").read_text()
    assert text.count("taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]") == 2
    # Vanilla: the GPU taint keeps both nodes away.
    k = gang.kube.load(USERS / "gke-gpu-taint.yaml")
    (note,) = [m for m in k.report["warnings"] if "ExtendedResourceToleration" in m]
    assert "off (a vanilla kube-apiserver)" in note and "2 node(s)" in note, note
    assert f"cluster: {note}" in k.warnings
    with pytest.raises(gang.Unschedulable):
        k.inventory.place(k.gang("cuda"))
    # As GKE: the pods tolerate it; parallelism 2 of 1 GPU on the two 1-GPU nodes.
    k = gang.kube.load(USERS / "gke-gpu-taint.yaml", extended_resource_toleration=True)
    assert any("ExtendedResourceToleration on" in m for m in k.report["warnings"])
    assert k.inventory.place(k.gang("cuda")).nodes == {"gpu-1": 1, "gpu-2": 1}
    assert k.place_parts("cuda") == []  # placed as one gang, with the option kept
    # No such taint: nothing to say.
    assert not any("ExtendedResourceToleration" in m for m in _users().report["warnings"])


def test_an_object_with_neither_name_is_that_workloads_error_not_the_whole_reads():
    # generate-name-job.yaml with its generateName taken away: the Job has no name.
    text = (USERS / "generate-name-job.yaml").read_text()
    assert "generateName: tas-sample-job-" in text
    text = text.replace("generateName: tas-sample-job-", "labels2: {}")
    k = gang.kube.load(USERS / "nodes-racks.yaml", ("job.yaml", text))
    (w,) = k.workloads
    assert w["gang"] is None and k.gangs == []
    assert w["error"]["field"] == "metadata.name"
    assert "neither metadata.name nor metadata.generateName" in w["error"]["message"]


# 6. Kueue PodSets: a Job's minCount, Kueue's whole admission, groups its webhook refuses,
# PodSets asking differently (gang-kube's tests/podsets.rs on the same fixtures).

def test_a_jobs_podset_min_count_places_as_many_as_a_rack_holds_down_to_it():
    # kueue-partial-admission.yaml: 6 pods of 2 GPUs, job-min-parallelism 4, a rack each.
    # A rack (2 nodes × 4 GPUs) holds 4: Kueue admits 4, and so does gang.
    text = (USERS / "kueue-partial-admission.yaml").read_text()
    assert 'job-min-parallelism: "4"' in text and "parallelism: 6" in text
    k = _users("kueue-partial-admission.yaml")
    (w,) = k.workloads
    assert (w["members"], w["minimum"]) == (6, 4)
    assert w["roles"][0]["min_count"] == 4
    p = k.place("sample-job-partial-admission")
    assert p.members == 4 and len(_racks(p.nodes)) == 1
    # Outside Kueue's range (1 to parallelism - 1): refused at the annotation.
    with pytest.raises(gang.GangError) as e:
        _users(("job.yaml", text.replace('job-min-parallelism: "4"', 'job-min-parallelism: "0"')))
    assert (e.value.field, e.value.value) == (
        "metadata.annotations.kueue.x-k8s.io/job-min-parallelism", "0")
    assert "remove it to admit all" in str(e.value) and "min_count" not in str(e.value)


def test_a_kueue_managed_pytorchjob_is_admitted_whole_whatever_its_min_available():
    # kueue-pytorchjob-min.yaml: master + 3 workers of 3 GPUs, minAvailable 2, workers
    # in a rack. Kueue never reads minAvailable: all 4, and no rack holds 3 workers.
    k = _users("kueue-pytorchjob-min.yaml")
    (w,) = k.workloads
    assert (w["members"], w["minimum"], w["minimum_field"]) == (4, 4, "members")
    (x,) = [x for x in w["warnings"]
            if x["field"] == "spec.runPolicy.schedulingPolicy.minAvailable"]
    assert "Kueue admits the whole workload" in x["message"]
    with pytest.raises(gang.Unschedulable):
        k.place("pytorch-simple")


def test_podsets_asking_differently_are_parts_each_as_it_asks():
    # kueue-podsets-mixed.yaml: the leader prefers a rack; 2 Jobs of 2 workers (2 GPUs
    # each) require the block in slices of 2 per rack.
    k = _users("kueue-podsets-mixed.yaml")
    (w,) = k.workloads
    assert [(p["name"], p["required"], p["preferred"], p["slices"]) for p in w["parts"]] == [
        ("leader", None, KRACK, []),
        ("workers", KBLOCK, None, [{"level": KRACK, "size": 2}]),
    ]
    leader, workers = k.place_parts("jobset-tas-mixed")
    assert leader["status"] == workers["status"] == "placed"
    assert sum(workers["nodes"].values()) == 4
    per_rack = {}
    for n, c in workers["nodes"].items():
        per_rack[_rack_of(n)] = per_rack.get(_rack_of(n), 0) + c
    assert all(c % 2 == 0 for c in per_rack.values()), workers["nodes"]


def test_a_podset_group_kueue_refuses_is_refused_at_its_annotation():
    # The leader alone in a group, in a JobSet: Kueue's webhook takes groups of 2.
    text = (USERS / "kueue-podsets.yaml").read_text().replace(
        "kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n",
        "kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n"
        "              kueue.x-k8s.io/podset-group-name: alone\n", 1)
    with pytest.raises(gang.GangError) as e:
        _podsets(text)
    assert e.value.field == ("spec.replicatedJobs[0].template.spec.template.metadata."
                             "annotations.kueue.x-k8s.io/podset-group-name")
    assert e.value.value == "alone" and str(e.value).endswith(
        "give it to two PodSets (at document 1)")


def test_volcano_minimums_default_as_volcanos_webhook_and_zero_is_no_gang():
    # volcano-min-partitions.yaml: no minAvailable; minPartitions 1 × partitionSize 2.
    k = _users("volcano-min-partitions.yaml")
    (w,) = k.workloads
    assert (w["members"], w["minimum"], w["roles"][0]["min_count"]) == (6, 2, 2)
    p = k.place("min-partitions-job")
    assert p.members == 4 and {_rack_of(n) for n in p.nodes} == {"r1", "r2"}
    # minMember 0: no gang, read as all, said so.
    text = (USERS / "podgroup-no-namespace.yaml").read_text().replace("minMember: 3", "minMember: 0")
    (w,) = _users(("pg.yaml", text)).workloads
    assert (w["members"], w["minimum"]) == (4, 4)
    assert any(x["field"] == "spec.minMember" and x["message"].startswith("0: no gang")
               for x in w["warnings"])


# The corpus (gang-kube/tests/fixtures/corpus, each file's answer worked out by hand in
# its header and in gang-kube's tests/corpus.rs): members and minimum, or the field a
# refusal names, or the kind gang does not read, through gang.kube.load.
CORPUS = FIX / "corpus"
CORPUS_ANSWERS = {
    "appwrapper-deployment.yaml": "spec.components[0].podSets",
    "appwrapper-job.yaml": (1, 1),
    "appwrapper-pytorch-no-podsets.yaml": "spec.components[0].podSets",
    "appwrapper-pytorch-podsets.yaml": (3, 3),
    "coscheduling-podgroup.yaml": (4, 3),
    "cronjob.yaml": ("CronJob", "batch/v1"),
    "deployment.yaml": ("Deployment", "apps/v1"),
    "jaxjob-kueue.yaml": (2, 2),
    "job-bad-parallelism.yaml": "spec.parallelism",
    "job-completions-below-parallelism.yaml": (2, 2),
    "job-kai.yaml": (2, 2),
    "job-kueue-sample.yaml": (3, 3),
    "job-partial-admission-all.yaml": "metadata.annotations.kueue.x-k8s.io/job-min-parallelism",
    "job-partial-admission.yaml": (20, 5),
    "job-tas-preferred.yaml": (40, 40),
    "job-tas-required.yaml": (40, 40),
    "job-tas-unconstrained.yaml": (6, 6),
    "jobset-driver-workers.yaml": (2, 2),
    "jobset-exclusive-placement.yaml": (9, 9),
    "jobset-group-without-leader.yaml":
        "spec.replicatedJobs[0].template.spec.template.metadata.annotations."
        "kueue.x-k8s.io/podset-group-name",
    "jobset-leader-workers-group.yaml": (7, 7),
    "jobset-multilayer.yaml": (16, 16),
    "jobset-parallel-jobs.yaml": (13, 13),
    "jobset-podsets-each-own.yaml": (9, 9),
    "jobset-tas-combined.yaml": (8, 8),
    "jobset-tas-required.yaml": (4, 4),
    "jobset-tas-sliced.yaml": (8, 8),
    "jobset-tpu-multislice.yaml": (8, 8),
    "jobset-workload-aware.yaml": (6, 6),
    "kai-podgroup.yaml": (2, 2),
    "kueue-pod-group.yaml": (2, 2),
    "limitrange-pi.yaml": (1, 1),
    "lws-exclusive-placement.yaml": (4, 4),
    "lws-kueue-tas.yaml": (3, 3),
    "lws-sample.yaml": (4, 4),
    "lws-size-zero.yaml": "spec.leaderWorkerTemplate.size",
    "lws-volcano.yaml": (4, 4),
    "mpijob-v2beta1.yaml": (3, 3),
    "native-podgroup-bad-key.yaml": "spec.schedulingConstraints.topology[0].key",
    "native-podgroup.yaml": (4, 3),
    "paddlejob-kueue.yaml": (2, 2),
    "pytorchjob-kai.yaml": (3, 3),
    "pytorchjob-kueue-min.yaml": (4, 4),
    "pytorchjob-kueue.yaml": (2, 2),
    "pytorchjob-volcano-min.yaml": (4, 2),
    "raycluster-kueue.yaml": (2, 2),
    "raycluster-tpu-multihost.yaml": (9, 9),
    "rayjob-existing-cluster.yaml": "spec.rayClusterSpec",
    "rayjob-kueue.yaml": (2, 2),
    "rayservice.yaml": ("RayService", "ray.io/v1"),
    "statefulset.yaml": ("StatefulSet", "apps/v1"),
    "tfjob-bad-replicas.yaml": "spec.tfReplicaSpecs.Worker.replicas",
    "tfjob-kueue.yaml": (3, 3),
    "volcano-job.yaml": (6, 3),
    "volcano-minavailable-deny.yaml": "spec.minAvailable",
    "volcano-mpi.yaml": (3, 3),
    "volcano-network-topology.yaml": (4, 4),
    "volcano-partitions-mismatch.yaml": "spec.tasks[0].partitionPolicy.totalPartitions",
    "volcano-partitions.yaml": (8, 8),
    "volcano-podgroup.yaml": (4, 3),
    "volcano-soft-topology.yaml": (2, 2),
    "volcano-tf-no-minavailable.yaml": (3, 2),
    "xgboostjob-kueue.yaml": (3, 3),
}


def test_the_corpus_through_gang_kube_load():
    assert sorted(CORPUS_ANSWERS) == sorted(p.name for p in CORPUS.glob("*.yaml"))
    for name, want in CORPUS_ANSWERS.items():
        path = CORPUS / name
        if isinstance(want, str):
            with pytest.raises(gang.GangError) as e:
                _users(path)
            assert e.value.field == want, (name, str(e.value))
            assert str(path) in str(e.value), name
            continue
        k = _users(path)
        if isinstance(want[0], str):
            assert k.workloads == [], name
            (u,) = k.unread
            assert (u["kind"], u["api_version"]) == want, name
            continue
        (w,) = k.workloads
        assert (w["members"], w["minimum"]) == want, name


def test_a_file_is_read_with_a_cap_and_checked_as_utf8_while_it_streams(tmp_path, monkeypatch):
    """Issue 25 item 5 on Python's path: gang.kube.load (and Inventory.from_kube,
    load_scenario) read a path whole, so /dev/zero ran the interpreter out of memory and
    /dev/urandom was read to its end before the UTF-8 check. Now the CLI's cap applies
    (GANG_MAX_INPUT_BYTES, default 256 MiB) and the first bad byte ends the read."""
    import os
    import pathlib
    nodes = "gang-kube/tests/fixtures/racks.json"
    root = pathlib.Path(__file__).resolve().parents[2]
    size = (root / nodes).stat().st_size
    monkeypatch.setenv("GANG_MAX_INPUT_BYTES", str(size - 1))
    for call in (lambda: gang.kube.load(root / nodes), lambda: gang.Inventory.from_kube(str(root / nodes))):
        with pytest.raises(gang.InvalidScenario) as e:
            call()
        assert e.value.file == str(root / nodes) and f"limit of {size - 1} bytes" in str(e.value), str(e.value)
        assert "GANG_MAX_INPUT_BYTES" in str(e.value)
    monkeypatch.setenv("GANG_MAX_INPUT_BYTES", str(size))
    assert len(gang.kube.load(root / nodes).inventory) > 0
    monkeypatch.setenv("GANG_MAX_INPUT_BYTES", "lots")
    with pytest.raises(ValueError, match="GANG_MAX_INPUT_BYTES"):
        gang.kube.load(root / nodes)
    monkeypatch.delenv("GANG_MAX_INPUT_BYTES")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"kind: Node\n\xff rest")
    with pytest.raises(gang.InvalidScenario, match="offset 11"):
        gang.kube.load(bad)
    with pytest.raises(gang.InvalidScenario, match="offset 11"):
        gang.load_scenario(bad)
    if os.path.exists("/dev/zero") and os.path.exists("/dev/urandom"):
        monkeypatch.setenv("GANG_MAX_INPUT_BYTES", "1000000")
        for call in (lambda: gang.kube.load("/dev/zero"), lambda: gang.load_scenario("/dev/zero")):
            with pytest.raises(gang.InvalidScenario, match="limit of 1000000 bytes"):
                call()
        monkeypatch.delenv("GANG_MAX_INPUT_BYTES")
        # The default cap: stopped at the first bad byte, not after 256 MiB of it.
        for call in (lambda: gang.kube.load("/dev/urandom"), lambda: gang.load_scenario("/dev/urandom")):
            with pytest.raises(gang.InvalidScenario, match="not UTF-8"):
                call()
    with pytest.raises(FileNotFoundError) as nf:
        gang.load_scenario(tmp_path / "nope.json")
    assert nf.value.filename == str(tmp_path / "nope.json")
