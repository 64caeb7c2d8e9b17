"""gang.kube: the Kubernetes objects users already have, as a ``gang.Inventory`` and
``gang.Gang``s.

A thin face of the Rust crate gang-kube (offline: nothing talks to a cluster). It reads
``kubectl get nodes,pods -o json`` output, Kueue ``Topology`` / ``ResourceFlavor``
objects, and the workloads — native, Volcano, KAI and scheduler-plugins PodGroups with
their pods, Jobs, JobSets, PyTorchJobs, MPIJobs, TFJobs and Volcano Jobs — with pod
requests counted as kube-scheduler counts them (see gang-kube's README for what is read
and the decisions taken).

>>> import gang, gang.kube
>>> nodes = '''
... apiVersion: v1
... kind: List
... items:
... - apiVersion: v1
...   kind: Node
...   metadata: {name: a1, labels: {topology.example.com/rack: a}}
...   status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
... - apiVersion: v1
...   kind: Pod
...   metadata: {name: other, namespace: default}
...   spec: {nodeName: a1, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "6"}}}]}
...   status: {phase: Running}
... '''
>>> job = '''
... apiVersion: batch/v1
... kind: Job
... metadata: {name: train, namespace: ml}
... spec:
...   parallelism: 2
...   template:
...     metadata:
...       annotations: {kueue.x-k8s.io/podset-required-topology: topology.example.com/rack}
...     spec:
...       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
... '''
>>> k = gang.kube.load(("nodes.yaml", nodes), ("job.yaml", job))
>>> k.inventory.free("a1", "nvidia.com/gpu"), [g.name for g in k.gangs]
(Quantity('2'), ['train'])
>>> k.inventory.place(k.gangs[0]).nodes
{'a1': 2}
>>> k.report["topology"]["levels"], k.workloads[0]["members"]
(['topology.example.com/rack'], 2)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Union

from . import _gang
from ._gang import Gang, Inventory, Placement

__all__ = ["Loaded", "load"]

Source = Union[str, "os.PathLike[str]", bytes, tuple[str, Union[str, bytes]], Mapping[str, Any],
               Sequence[Any]]
"""One input of ``load``: a file path; a text (JSON or YAML: a ``str`` holding a newline
or starting with ``{`` or ``[``, or ``bytes``); a ``(name, text)`` pair; or an object
already parsed (a dict, or a list of dicts)."""

TopologySpec = Union[None, str, Sequence[str], Mapping[str, str]]
"""How to choose the topology levels: ``None`` or ``"auto"`` (a Kueue Topology in the
objects, else detection), ``"detect"`` (from node labels only), a list of label keys
(outermost first), ``{"topology": NAME}`` or ``{"flavor": NAME}`` (a Kueue
ResourceFlavor: its topology, node labels and tolerations)."""


class Loaded:
    """What ``gang.kube.load`` read.

    - ``inventory``: a ``gang.Inventory`` of the nodes (``status.allocatable`` less what
      the bound pods request; excluded nodes — not Ready, cordoned, outside the
      ResourceFlavor — kept, cordoned);
    - ``gangs``: the ``gang.Gang`` of every workload that can be built, in input order;
    - ``workloads``: one dict per workload found (``name``, ``framework``, ``found``,
      ``roles``, ``members``, ``minimum``, ``minimum_field``, ``topology``, ``checks``
      — the guides' debug list, with ``shape_fits`` per role —, ``warnings``,
      ``member_pods``, ``gang`` as a dict, and ``error`` when its gang cannot be built;
      ``parts``: the parts it is placed in, as gang-kube's ``Cluster::parts`` lists them
      — each child Job of a JobSet with ``alpha.jobset.sigs.k8s.io/exclusive-topology``
      (``workers-0``, ``workers-1``…), or each Kueue PodSet or PodSet group
      (``kueue.x-k8s.io/podset-group-name``) when several ask for a domain of their own
      — one dict each with ``name``, ``group``, ``roles``, ``members``, ``required`` /
      ``preferred`` (the level's node label key, or ``None``), ``slices`` and ``field``;
      ``[]`` for a workload placed as one gang (a Volcano job's ``partitionPolicy``
      partitions are ``slices`` of that gang: see ``topology``), ``None`` when its
      request names a level the cluster lacks; ``priority``: ``value``, ``class``,
      ``source`` (``workload_priority_class`` — Kueue's label
      ``kueue.x-k8s.io/priority-class`` —, ``spec_priority``, ``priority_class``,
      ``global_default`` or ``none``), ``field`` and ``preempts``, or ``None`` when the
      class it names is not in the input (then ``priority_error`` says so, and
      ``warnings`` has a line);
    - ``report``: gang-kube's cluster report (topology chosen and why, nodes excluded
      by reason, taints, level coverage, pod counts, warnings);
    - ``warnings``: every warning as one line (``Job/ml/train: field: message``);
    - ``objects``: every object found (kind, name, source, position);
    - ``unread``: the objects of kinds gang does not read (a Deployment): ``object``,
      ``kind``, ``api_version``, ``source``, ``position`` and ``message`` (naming the
      kind, its apiVersion and the file, and listing the kinds read; also a line of
      ``warnings``);
    - ``document``: the cluster in the scenario format (``{"topology", "nodes"}``),
      e.g. for ``gang.sim.simulate``.

    ``place(name)`` places a workload as ``gang place`` does (its parts checked first);
    ``place_parts(name)`` shows it part by part, as Kueue and JobSet place it.
    """

    def __init__(self, text: str, sources: Sequence[Source] = (),
                 topology: TopologySpec = None,
                 extended_resource_toleration: bool = False,
                 namespace: str | None = None) -> None:
        # The inputs, kept (not copied) for place_parts, which reads them again.
        self._sources = tuple(sources)
        self._topology = topology
        self._extended_resource_toleration = extended_resource_toleration
        self._namespace = namespace
        out = json.loads(text)
        self.document: dict[str, Any] = out["cluster"]
        self.inventory: Inventory = Inventory.from_json(json.dumps(self.document))
        self.workloads: list[dict[str, Any]] = out["workloads"]
        self.gangs: list[Gang] = [Gang.from_json(json.dumps(w["gang"]))
                                  for w in self.workloads if w["gang"] is not None]
        self.report: dict[str, Any] = out["report"]
        self.objects: list[dict[str, Any]] = out["objects"]
        self.unread: list[dict[str, Any]] = out["unread"]
        warnings = [f"cluster: {w}" for w in self.report.get("warnings", [])]
        warnings += [f"{u['object']}: kind: {u['message']}" for u in self.unread]
        for w in self.workloads:
            warnings += [f"{w['name']}: {x['field']}: {x['message']}" for x in w["warnings"]]
            if w["error"] is not None:
                warnings.append(f"{w['name']}: no gang: {w['error']['message']}")
            if w.get("priority_error") is not None:
                warnings.append(f"{w['name']}: no priority: {w['priority_error']['message']}")
        self.warnings: list[str] = warnings

    def gang(self, name: str) -> Gang:
        """The gang of the workload named ``name`` (its ``metadata.name``, or
        ``Kind/namespace/name``); ``KeyError`` if there is none."""
        for w, g in zip((w for w in self.workloads if w["gang"] is not None), self.gangs):
            if name in (w["name"], w["object"]["name"]):
                return g
        raise KeyError(name)

    def _workload(self, name: str) -> dict[str, Any]:
        for w in self.workloads:
            if name in (w["name"], w["object"]["name"]):
                return w
        raise KeyError(name)

    def place(self, name: str, inventory: Inventory | None = None) -> Placement:
        """Places the workload named ``name`` (its ``metadata.name``, or
        ``Kind/namespace/name``) as gang-kube's ``Cluster::place`` does — the answer of
        ``gang place``: when the workload has ``parts``, they are checked first (a
        JobSet's exclusive child Jobs each in a domain of its own, Kueue's PodSets each
        in its own domain on what the parts before it left), and the first part that
        does not fit is the answer; then its whole gang is placed.

        Returns a ``gang.Placement`` made on ``inventory`` (reserve it there with
        ``inventory.reserve``); raises ``gang.Unschedulable`` (``.diagnosis``: the
        part's, or the gang's) or ``gang.Undecided`` as ``Inventory.place`` does. Nothing
        is reserved. ``inventory`` defaults to ``self.inventory`` as it is now; the
        objects are read again from the sources given to ``load`` (see
        ``place_parts``). ``KeyError`` if no workload has that name; gang-kube's errors
        as in ``load``.

        ``self.inventory.place(self.gang(name))`` places the gang alone: it does not
        check the parts (three exclusive child Jobs on two racks fit there as one gang
        of six pods); this does.

        >>> import gang, gang.kube
        >>> racks = [f'''{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "{r}-a",
        ...     "labels": {{"rack": "{r}"}}}}, "status": {{"allocatable": {{"cpu": "8"}}}}}}'''
        ...     for r in ("r1", "r2")]
        >>> jobset = '''
        ... apiVersion: jobset.x-k8s.io/v1alpha2
        ... kind: JobSet
        ... metadata: {name: js, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}}
        ... spec:
        ...   replicatedJobs:
        ...   - name: w
        ...     replicas: 3
        ...     template:
        ...       spec:
        ...         parallelism: 2
        ...         template:
        ...           spec:
        ...             containers: [{name: c, resources: {requests: {cpu: "1"}}}]
        ... '''
        >>> k = gang.kube.load(*racks, jobset, topology=["rack"])
        >>> k.inventory.place(k.gang("js")).members   # the gang alone: 6 CPUs fit
        6
        >>> try:
        ...     k.place("js")                          # 3 child Jobs, 2 racks
        ... except gang.Unschedulable as e:
        ...     print(e.status)
        unschedulable
        """
        w = self._workload(name)
        return _gang._kube_place(*self._sources, workload=w["name"],
                                 inventory=self.inventory if inventory is None else inventory,
                                 topology=self._topology, namespace=self._namespace,
                                 extended_resource_toleration=self._extended_resource_toleration)

    def place_parts(self, name: str, inventory: Inventory | None = None) -> list[dict[str, Any]]:
        """Places the workload named ``name`` (its ``metadata.name``, or
        ``Kind/namespace/name``) part by part, with gang-kube's ``Cluster::place_parts``:
        its ``parts`` in order, each in a domain of its own, each on what the parts
        before it left (Kueue's TAS places PodSets "in sequence"; a JobSet's exclusive
        child Jobs in distinct domains), up to the first part that does not fit.

        One dict per part: ``name``, ``roles``, ``status`` (``"placed"``,
        ``"unschedulable"`` or ``"undecided"``), ``level`` and ``domain`` (the domain
        path, ``"r1"``), ``nodes`` (members per node), ``assignments`` (``role``,
        ``node``, ``count``) — ``None`` for a part not placed — and ``message`` (its
        diagnosis, ``None`` when placed). ``[]`` for a workload placed as one gang
        (``parts`` empty), and for exclusive child Jobs that find no distinct domains
        (``place`` says why). Nothing is reserved.

        ``inventory`` defaults to ``self.inventory`` as it is now (with what was
        reserved on it since). The objects are read again from the sources given to
        ``load``, so files changed since then are read as they are now. ``KeyError``
        if no workload has that name; gang-kube's errors as in ``load``.

        The gang in ``gangs`` is the whole workload under its largest part's request:
        placing it alone does not check that the later parts fit; this does, and
        ``place`` answers for the workload as ``gang place`` does.
        """
        w = self._workload(name)
        return list(json.loads(_gang._kube_place_parts(
            *self._sources, workload=w["name"],
            inventory=self.inventory if inventory is None else inventory,
            topology=self._topology, namespace=self._namespace,
            extended_resource_toleration=self._extended_resource_toleration)))

    def __repr__(self) -> str:
        return (f"Loaded(nodes={len(self.inventory)}, gangs={[g.name for g in self.gangs]}, "
                f"warnings={len(self.warnings)})")


def load(*sources: Source, topology: TopologySpec = None, workload: str | None = None,
         namespace: str | None = None, extended_resource_toleration: bool = False) -> Loaded:
    """Reads Kubernetes objects from files and texts (JSON or YAML: single objects,
    ``List``s, ``kubectl … -o json`` output, multi-document YAML) into a ``Loaded``:
    ``inventory``, ``gangs``, ``workloads``, ``report``, ``warnings``.

    ``topology``: see ``TopologySpec`` (default: a Kueue Topology if there is one, else
    detected from the node labels; the report says what was chosen and why).
    ``namespace``: as ``kubectl apply -n``, every object naming no namespace is put in
    it, else in ``default`` (a PodGroup and its pods written without one then meet).
    ``workload`` (kubectl style: ``job/train``, ``pytorchjobs/llama``, a bare name) and
    ``namespace`` keep only that workload; then its member pods already bound are not
    counted as usage, and a gang that cannot be built raises instead of being left out.
    ``extended_resource_toleration`` (default off, as a vanilla kube-apiserver): pods
    requesting an extended resource (``nvidia.com/gpu``…) tolerate the ``NoSchedule``
    taint of that name, as GKE's ExtendedResourceToleration admission adds — gang-kube's
    ``ClusterOptions::extended_resource_toleration``, the CLI's
    ``--extended-resource-toleration``; the report's warnings say which was used.

    Invalid input raises a ``gang.GangError`` class naming the file, the object and the
    field (attributes ``file``, ``object``, ``location``, ``field``, ``value``,
    ``reason``, ``kube_kind``): ``InvalidScenario`` for malformed input, an object of
    an unexpected kind or a bad value; ``InvalidInventory`` for a topology that names
    no label or is invalid; ``InvalidRequest`` for a minimum above the members or an
    unknown level; gang-core's class for what gang-core rejects.

    >>> try:
    ...     gang.kube.load(("nodes.json", '{"apiVersion": "v1", "kind": "Node", "metadata": '
    ...         '{"name": "gpu-a1"}, "status": {"allocatable": {"cpu": "-4"}}}'))
    ... except gang.InvalidScenario as e:
    ...     print(e.file, e.object, e.field, e.value, e.kube_kind)
    nodes.json Node/gpu-a1 status.allocatable.cpu -4 invalid_value
    """
    # The inputs are read by the extension (the same reader as Inventory.from_kube and
    # Gang.from_kube): paths, texts, (name, text) pairs, parsed objects.
    return Loaded(_gang._kube_load(*sources, topology=topology, workload=workload, namespace=namespace,
                                   extended_resource_toleration=extended_resource_toleration),
                  sources, topology, extended_resource_toleration, namespace)
