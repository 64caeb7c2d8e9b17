"""gang.sim's documents: the types of its inputs, gang-sim's schema (columns, glossary,
sources), and building the run document ``{"cluster", "trace", "config"}`` from
Python values, generators and inspection of what a run will use."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from .. import _gang
from .._gang import Inventory


PathLike = Union[str, "os.PathLike[str]"]
"""A file path."""
ClusterLike = Union[PathLike, Mapping[str, Any], Inventory]
"""A cluster: a path (a cluster or scenario document; ``.csv``: an Alibaba openb node
list), a cluster or scenario document as a dict, a gang-sim cluster source
(``{"file": ...}``, ``{"inline": ...}``, ``{"generate": {...}}``,
``{"openb_nodes": {...}}``), or a ``gang.Inventory``."""
TraceLike = Union[PathLike, Sequence[Mapping[str, Any]], Mapping[str, Any], Any]
"""A trace: a path (JSON Lines or CSV by extension, or ``trace_format``), a list of job
dicts, a pandas DataFrame of jobs, a gang-sim trace source (``{"file": ...}``,
``{"inline": [...]}``, ``{"jsonl": text}``, ``{"csv": text}``, ``{"generate": {...}}``),
or a workload generator spec (``{"jobs": 100, "seed": 1, ...}``)."""
PolicyLike = Union[str, Mapping[str, Any]]
"""A policy: ``"required(rack)"``, ``"preferred(rack)"``, ``"unconstrained"``,
``"timed(rack, 1800)"``, ``"spread(2, rack)"``, ``"no-gang"``, or its dict form
(``{"kind": "required", "level": "rack"}``)."""


_SCHEMA: dict[str, Any] = json.loads(_gang._sim_schema())

JOB_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["job_columns"])
"""The fields of a job record (``SimResult.jobs``), in gang-sim's CSV order (gang-sim's
``JOB_COLUMNS``, read from the extension)."""

TIMELINE_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["timeline_columns"])
"""The fields of a timeline sample (``SimResult.timeline``), gang-sim's
``TIMELINE_COLUMNS``."""

SUMMARY_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["summary_columns"])
"""The columns of a summary row (``Comparison.summary_table``, ``Sweep.to_pandas``),
gang-sim's ``SUMMARY_COLUMNS``."""

TRACE_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["trace_columns"])
"""The fields of a trace row (``trace_jobs``): one job as the simulator reads it."""

GLOSSARY: dict[str, str] = dict(_SCHEMA["glossary"])
"""What each summary column means (gang-sim's ``SUMMARY_GLOSSARY``)."""

_CLUSTER_SOURCES: tuple[str, ...] = tuple(_SCHEMA["cluster_sources"])
_TRACE_SOURCES: tuple[str, ...] = tuple(_SCHEMA["trace_sources"])
_TRACE_FORMATS: tuple[str, ...] = tuple(_SCHEMA["trace_formats"])


# ------------------------------------------------------------------ building documents


def _path(p: PathLike, what: str) -> str:
    """An absolute path to an existing file (so that worker processes find it too)."""
    s = os.fspath(p)
    if not os.path.isfile(s):
        # A device or a pipe (/dev/zero) exists but is not read: say so, not "not found".
        why = "is not a regular file" if os.path.exists(s) else "not found"
        raise FileNotFoundError(f"gang.sim: {what} file {why}: {s!r}")
    return os.path.abspath(s)


def _cluster_source(cluster: ClusterLike) -> dict[str, Any]:
    if isinstance(cluster, Inventory):
        # Its document (what pickling writes) holds the live reservations: gang-sim
        # keeps them held for the whole run, so the simulation starts from the
        # inventory's free capacity as it is now.
        try:
            text = cluster.__reduce__()[1][0]
            doc = json.loads(text) if isinstance(text, str) else cluster.to_dict()
        except (TypeError, IndexError, ValueError):
            doc = cluster.to_dict()
        return {"inline": doc}
    if isinstance(cluster, (str, os.PathLike)):
        path = _path(cluster, "cluster")
        if path.endswith(".csv"):
            return {"openb_nodes": {"file": path, "nodes_per_rack": None}}
        return {"file": path}
    if isinstance(cluster, Mapping):
        if len(cluster) == 1 and next(iter(cluster)) in _CLUSTER_SOURCES:
            (kind, body), = cluster.items()
            if kind == "file" and isinstance(body, (str, os.PathLike)):
                return {"file": _path(body, "cluster")}
            if kind == "openb_nodes" and isinstance(body, Mapping) and "file" in body:
                return {"openb_nodes": {**body, "file": _path(body["file"], "cluster")}}
            return {kind: body}
        # A cluster or scenario document; gang-sim reports what is wrong with it.
        return {"inline": dict(cluster)}
    raise TypeError(
        "gang.sim: cluster must be a path, a cluster/scenario dict, a cluster source "
        f"({', '.join(_CLUSTER_SOURCES)}) or a gang.Inventory, not {type(cluster).__name__}"
    )


def _records(frame: Any) -> list[dict[str, Any]]:
    """Job dicts from a DataFrame-like object, leaving out missing cells."""
    rows = frame.to_dicts() if hasattr(frame, "to_dicts") else frame.to_dict("records")  # polars, pandas
    out = []
    for row in rows:
        out.append({str(k): v for k, v in row.items()
                    if v is not None and not (isinstance(v, float) and math.isnan(v))})
    return out


def _trace_source(trace: TraceLike, trace_format: str | None) -> dict[str, Any]:
    if trace_format is not None and trace_format not in _TRACE_FORMATS:
        raise ValueError(f"gang.sim: trace_format must be one of {_TRACE_FORMATS}, not {trace_format!r}")
    if isinstance(trace, (str, os.PathLike)):
        path = _path(trace, "trace")
        return {"file": {"path": path, "format": trace_format}}
    if isinstance(trace, Mapping):
        if len(trace) == 1 and next(iter(trace)) in _TRACE_SOURCES:
            (kind, body), = trace.items()
            if kind == "file" and isinstance(body, Mapping) and "path" in body:
                return {"file": {**body, "path": _path(body["path"], "trace")}}
            if kind == "file" and isinstance(body, (str, os.PathLike)):
                return {"file": {"path": _path(body, "trace"), "format": trace_format}}
            if kind == "inline":
                return {"inline": [dict(j) for j in body]}
            return {kind: body}
        return {"generate": dict(trace)}  # a workload generator spec
    if hasattr(trace, "columns") and hasattr(trace, "to_dict") or hasattr(trace, "to_dicts"):
        return {"inline": _records(trace)}
    if isinstance(trace, Iterable):
        jobs = []
        for i, j in enumerate(trace):
            if not isinstance(j, Mapping):
                raise TypeError(f"gang.sim: trace[{i}] must be a dict (a job), not {type(j).__name__}")
            jobs.append(dict(j))
        return {"inline": jobs}
    raise TypeError(f"gang.sim: trace must be a path, a list of jobs or a trace source, not {type(trace).__name__}")


def _plain(v: Any, _inside: tuple[int, ...] = ()) -> Any:
    """A copy of ``v`` with every mapping a dict and every list a list of copies;
    ``ValueError`` for a dict or list that holds itself."""
    if isinstance(v, (Mapping, list)):
        if id(v) in _inside:
            raise ValueError("gang.sim: the configuration holds a dict or list inside itself "
                             "(a circular reference); give plain values")
        inside = _inside + (id(v),)
        if isinstance(v, Mapping):
            return {k: _plain(x, inside) for k, x in v.items()}
        return [_plain(x, inside) for x in v]
    return v


def _merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """gang-sim's variant merge (``gang_sim::merge_config``: objects merge field by
    field, anything else replaces), done by gang-sim, on the documents as JSON."""
    merged: dict[str, Any] = json.loads(_gang._sim_merge(_json(base), _json(patch)))
    return merged


def run_document(cluster: ClusterLike, trace: TraceLike, policy: PolicyLike | None = None, *,
                 seed: int | None = 0, trace_format: str | None = None,
                 **config: Any) -> dict[str, Any]:
    """The gang-sim run document ``{"cluster", "trace", "config"}`` that ``simulate``
    runs (see gang-sim's README): file paths made absolute (a file that does not exist
    raises ``FileNotFoundError``), ``policy`` and ``seed`` put into the configuration
    with every other keyword (``queue``, ``readiness``, ``failures``, ``recovery``,
    ``slowdown``, ``horizon``, ``sample_interval``, …).

    >>> import gang.sim
    >>> gang.sim.run_document({"generate": {"flavor": "hgx", "racks": 2}},
    ...     [{"id": "a", "submit": 0, "duration": 60, "members": 2}], "required(rack)",
    ...     seed=7, queue={"discipline": "backfill"})
    {'cluster': {'generate': {'flavor': 'hgx', 'racks': 2}}, 'trace': {'inline': [{'id': 'a', 'submit': 0, 'duration': 60, 'members': 2}]}, 'config': {'queue': {'discipline': 'backfill'}, 'policy': 'required(rack)', 'seed': 7}}
    """
    cfg: dict[str, Any] = _plain(config)
    if policy is not None:
        cfg["policy"] = dict(policy) if isinstance(policy, Mapping) else policy
    if seed is not None:
        cfg["seed"] = seed
    return {"cluster": _cluster_source(cluster), "trace": _trace_source(trace, trace_format),
            "config": cfg}


def generated_cluster(flavor: str = "hgx", racks: int = 4, *, used_pct: int = 0, seed: int = 0,
                      awkward: bool = False, nodes_per_rack: int | None = None,
                      racks_per_block: int | None = None,
                      blocks_per_zone: int | None = None) -> dict[str, Any]:
    """A generated cluster, as a cluster source for ``simulate``: ``racks`` racks of
    ``flavor`` in three levels, zone > block > rack (``topology.example.com/zone``,
    ``/block``, ``/rack``), then the node. ``"hgx"``: 32 8-GPU nodes a rack, 16 racks
    a block; ``"nvl72"``: 18 4-GPU trays a rack, 8 racks a block; ``nodes_per_rack``,
    ``racks_per_block`` and ``blocks_per_zone`` change those. ``used_pct`` of the GPUs
    are used by others. ``cluster_inventory`` shows what it makes.

    >>> gang.sim.generated_cluster("nvl72", 2)
    {'generate': {'flavor': 'nvl72', 'racks': 2, 'used_pct': 0, 'seed': 0, 'awkward': False}}
    >>> inv = gang.sim.cluster_inventory(gang.sim.generated_cluster(racks=3, nodes_per_rack=4))
    >>> len(inv), inv.domains("topology.example.com/rack")[:2]
    (12, ['z0/b0/r00', 'z0/b0/r01'])
    """
    body: dict[str, Any] = {"flavor": flavor, "racks": racks, "used_pct": used_pct, "seed": seed,
                            "awkward": awkward}
    for k, v in (("nodes_per_rack", nodes_per_rack), ("racks_per_block", racks_per_block),
                 ("blocks_per_zone", blocks_per_zone)):
        if v is not None:
            body[k] = v
    return {"generate": body}


def generated_trace(jobs: int = 100, *, seed: int = 0, load: float | None = None,
                    per_hour: float | None = None, **spec: Any) -> dict[str, Any]:
    """A generated workload, as a trace source for ``simulate``: ``jobs`` jobs, Poisson
    arrivals, power-law gang sizes and log-normal run times.

    The arrival rate is a setting two ways: ``load``, the target offered load on the
    run's cluster (``offered_load``: 0.8 asks for 80 % of its GPUs at ideal run
    times; the arrivals are rescaled on the cluster the trace is simulated on), or
    ``per_hour``, jobs per hour. Other keywords as gang-sim's ``WorkloadSpec``
    (``size_alpha``, ``max_members``, ``member_gpus`` (GPUs per member),
    ``single_gpus``, ``duration_median``, ``duration_sigma``, ``sensitivity``,
    ``tenants``, ``policy``, ``arrival``, …). ``trace_jobs`` shows the jobs it makes.

    >>> gang.sim.generated_trace(10, seed=3, max_members=8)
    {'generate': {'jobs': 10, 'seed': 3, 'max_members': 8}}
    >>> gang.sim.generated_trace(10, load=0.8)
    {'generate': {'jobs': 10, 'seed': 0, 'load': 0.8}}
    """
    body: dict[str, Any] = {"jobs": jobs, "seed": seed, **spec}
    if load is not None:
        body["load"] = load
    if per_hour is not None:
        body["arrival"] = {"poisson": {"per_hour": per_hour}}
    return {"generate": body}


def _inspect(cluster: ClusterLike, trace: TraceLike | None, what: str, trace_format: str | None,
             config: Mapping[str, Any]) -> Any:
    doc = run_document(cluster, [] if trace is None else trace, None, seed=None,
                       trace_format=trace_format, **config)
    return json.loads(_gang._sim_inspect(_json(doc), what))


def cluster_inventory(cluster: ClusterLike) -> Inventory:
    """The cluster a simulation would run on, as a ``gang.Inventory`` (a generated
    cluster, an openb node list, a file…): its nodes, labels, capacity and use by
    others. As a table, one row a node with a column per label and resource
    (``labels.topology.example.com/rack``, ``capacity.nvidia.com/gpu``, ``used.cpu``…):
    ``pandas.json_normalize([n.to_dict() for n in inv.nodes])``.

    >>> inv = gang.sim.cluster_inventory(gang.sim.generated_cluster("nvl72", 2))
    >>> len(inv), inv.levels[-1]
    (36, 'topology.example.com/rack')
    """
    return Inventory.from_json(json.dumps(_inspect(cluster, None, "cluster", None, {})))


def trace_jobs(trace: TraceLike, cluster: ClusterLike | None = None, *,
               trace_format: str | None = None, **config: Any) -> list[dict[str, Any]]:
    """The jobs a simulation would run, one dict per job (``TRACE_COLUMNS``:
    ``gpus_total`` is the whole job's, ``gpus_per_member`` each member's, as a trace's
    ``gpus`` is): a generated trace made (rescaled to its ``load`` on ``cluster``,
    needed then), a file read and imported.
    ``pandas.DataFrame(gang.sim.trace_jobs(...))`` makes it a table.

    >>> jobs = gang.sim.trace_jobs(gang.sim.generated_trace(3, seed=1, max_members=4))
    >>> [sorted(j) == sorted(gang.sim.TRACE_COLUMNS) for j in jobs]
    [True, True, True]
    """
    if cluster is None:
        cluster = generated_cluster(racks=1)
        if isinstance(trace, Mapping) and "load" in trace.get("generate", {}):
            raise ValueError("gang.sim.trace_jobs: a trace with a target load needs the cluster")
    rows: list[dict[str, Any]] = _inspect(cluster, trace, "trace", trace_format, config)
    return rows


def offered_load(trace: TraceLike, cluster: ClusterLike, *, trace_format: str | None = None,
                 **config: Any) -> float:
    """The offered load of ``trace`` on ``cluster`` (gang-sim's ``offered_load``): the
    GPU-hours its jobs ask for at their ideal run times ÷ (the cluster's GPUs × the
    submission window, first to last submission scaled by n/(n-1)). 1.0 asks for every
    GPU all the time. ``InvalidScenario`` for a trace of fewer than two submission
    times.

    >>> cluster = gang.sim.generated_cluster(racks=2)
    >>> round(gang.sim.offered_load(gang.sim.generated_trace(500, load=0.7), cluster), 6)
    0.7
    """
    load: float = _inspect(cluster, trace, "load", trace_format, config)
    return load


def _json(doc: Any) -> str:
    def default(o: Any) -> Any:
        if isinstance(o, os.PathLike):
            return os.fspath(o)
        if hasattr(o, "tolist") and getattr(o, "ndim", 0) > 0:  # numpy arrays, any size
            return o.tolist()
        if hasattr(o, "item"):  # numpy scalars
            return o.item()
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"gang.sim: {type(o).__name__} is not JSON: {o!r}")
    try:
        return json.dumps(doc, default=default, allow_nan=False)
    except ValueError as e:
        if "ircular" in str(e):
            raise ValueError("gang.sim: the run document holds a dict or list inside itself "
                             "(a circular reference); give plain values") from None
        raise ValueError(f"gang.sim: the run document holds a NaN or infinity: {e}") from None


def _policy_label(p: Any) -> str:
    """gang-sim's label of policy ``p`` (a string, its dict form, or None for the
    default): what job records and ``summary["by_policy"]`` call it."""
    if p is None or isinstance(p, (str, Mapping)):
        return _gang._sim_policy_label(_json(p))
    return str(p)


def _variants(policies: Sequence[PolicyLike] | Mapping[str, PolicyLike]) -> list[tuple[str, dict[str, Any]]]:
    """(name, configuration patch) per variant."""
    def patch(p: PolicyLike) -> dict[str, Any]:
        if isinstance(p, str) or (isinstance(p, Mapping) and "kind" in p):
            return {"policy": p if isinstance(p, str) else dict(p)}
        if isinstance(p, Mapping):
            return dict(p)  # a configuration patch
        raise TypeError(f"a policy is a string or a dict, not {type(p).__name__}")
    if isinstance(policies, Mapping):
        return [(str(n), patch(p)) for n, p in policies.items()]
    if isinstance(policies, str):
        raise TypeError("policies must be a list (or a dict of name: policy), not one string")
    out = []
    for p in policies:
        body = patch(p)
        out.append((_policy_label(p), body))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError(f"policies named twice: {names}; give a dict of name: policy")
    return out


SLOWDOWN_TABLES: dict[str, list[float]] = dict(_SCHEMA["default_slowdown"])
"""gang-sim's built-in slowdown tables (``default_slowdown``): run time multipliers of
a placement spanning one node, one rack, one block, more, per sensitivity class."""


