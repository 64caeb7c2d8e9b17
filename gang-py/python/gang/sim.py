"""gang.sim: what a placement policy costs in completion time, simulated over a job trace.

A thin face of the Rust crate gang-sim: this module builds gang-sim's run document
(``{"cluster", "trace", "config"}``), hands it to the crate (the GIL is released while
it runs) and parses the answer into plain Python lists and dicts. Every placement is
gang-core's; every event rule is gang-sim's (see gang-sim's README, "Event semantics").

>>> import gang.sim
>>> cluster = {"topology": {"levels": ["rack"]}, "nodes": [
...     {"name": n, "labels": {"rack": r}, "capacity": {"nvidia.com/gpu": 4}}
...     for n, r in [("a1", "a"), ("a2", "a"), ("b1", "b")]]}
>>> trace = [{"id": "big", "submit": 0, "duration": 3600, "members": 8, "gpus": 1},
...          {"id": "small", "submit": 0, "duration": 600, "members": 4, "gpus": 1}]
>>> r = gang.sim.simulate(cluster, trace, "required(rack)", readiness={"init_time": 0})
>>> r.job("big")["completion"], r.job("big")["level"]     # two nodes of rack a: x1.5
(5400.0, 'rack')
>>> r.job("small")["queue_delay"], r.summary["all"]["states"]
(0.0, {'completed': 2})

Optional extras, imported only when used: ``gang[frames]`` (pandas, polars, pyarrow)
for ``to_pandas`` / ``to_polars`` / ``to_arrow``, ``gang[sim]`` (matplotlib, tqdm) for
plots, reports and progress bars, ``gang[dask]`` (distributed) for sweeps on a Dask
cluster.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import itertools
import json
import math
import os
import pathlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from . import _frames, _gang
from ._gang import Inventory

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "Comparison",
    "GLOSSARY",
    "JOB_COLUMNS",
    "SUMMARY_COLUMNS",
    "SimResult",
    "Sweep",
    "TIMELINE_COLUMNS",
    "TRACE_COLUMNS",
    "cluster_inventory",
    "compare",
    "experiment",
    "generated_cluster",
    "generated_trace",
    "offered_load",
    "plot_completion_cdf",
    "plot_timeline",
    "plot_wait_vs_run",
    "report",
    "run_document",
    "SLOWDOWN_TABLES",
    "plot_sweep",
    "sensitivity",
    "simulate",
    "sweep",
    "trace_jobs",
]

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
        raise FileNotFoundError(f"gang.sim: {what} file not found: {s!r}")
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
    others (``gang.to_pandas(inv.nodes())`` makes it a table).

    >>> inv = gang.sim.cluster_inventory(gang.sim.generated_cluster("nvl72", 2))
    >>> len(inv), inv.levels[-1]
    (36, 'topology.example.com/rack')
    """
    return Inventory.from_json(json.dumps(_inspect(cluster, None, "cluster", None, {})))


def trace_jobs(trace: TraceLike, cluster: ClusterLike | None = None, *,
               trace_format: str | None = None, **config: Any) -> list[dict[str, Any]]:
    """The jobs a simulation would run, one dict per job (``TRACE_COLUMNS``: ``gpus``
    is the whole job's, ``gpus_per_member`` each member's): a generated trace made
    (rescaled to its ``load`` on ``cluster``, needed then), a file read and imported.
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


# ------------------------------------------------------------------------- results


def _columns(table: str) -> tuple[str, ...]:
    if table == "jobs":
        return JOB_COLUMNS
    if table == "timeline":
        return TIMELINE_COLUMNS
    raise ValueError(f"table must be 'jobs' or 'timeline', not {table!r}")


def _to_pandas(rows: list[dict[str, Any]], columns: Sequence[str], what: str) -> Any:
    return _frames.to_pandas(rows, columns, extra="frames", what=what)


def _to_arrow(rows: list[dict[str, Any]], columns: Sequence[str], what: str) -> Any:
    return _frames.to_arrow(rows, columns, extra="frames", what=what)


def _to_polars(rows: list[dict[str, Any]], columns: Sequence[str], what: str) -> Any:
    return _frames.to_polars(rows, columns, extra="frames", what=what)


class SimResult:
    """One simulation's result: ``jobs`` (one dict per job, in trace order, with the
    fields of ``JOB_COLUMNS``; times in seconds from the start of the trace, ``None``
    when the moment never came), ``summary`` (gang-sim's summary: ``all``,
    ``by_policy`` and ``by_tenant`` groups with completion / queue delay / run time
    statistics, GPU-hours, makespan, utilisation, fragmentation), ``timeline`` (one
    dict per sample, ``TIMELINE_COLUMNS``), ``name`` and the run ``document``.

    Picklable; ``to_pandas``, ``to_polars``, ``to_arrow`` give the jobs (or, with
    ``"timeline"``, the samples) as a table.

    >>> r = gang.sim.simulate({"generate": {"racks": 1}},
    ...     [{"id": "j", "submit": 0, "duration": 600, "members": 2, "gpus": 8}])
    >>> r
    SimResult('unconstrained', jobs=1, completed=1, failed=0, unfinished=0, mean_completion=960.0)
    >>> r.job("j")["level"], r.job("j")["slowdown"]   # two nodes of one rack, medium
    ('topology.example.com/rack', 1.5)
    """

    def __init__(self, text: str, document: Mapping[str, Any], name: str | None = None) -> None:
        out = json.loads(text)
        self.kept: str = "jobs" if "jobs" in out else "summary"
        self._jobs: list[dict[str, Any]] | None = out.get("jobs")
        self.summary: dict[str, Any] = out["summary"]
        self._timeline: list[dict[str, Any]] | None = out.get("timeline")
        self.document: dict[str, Any] = dict(document)
        self.name: str = name if name is not None else _policy_label(
            document.get("config", {}).get("policy"))
        self._by_id: dict[str, dict[str, Any]] | None = None

    def _kept(self, what: str) -> list[dict[str, Any]]:
        rows = self._jobs if what == "jobs" else self._timeline
        if rows is None:
            raise ValueError(f"{self.name!r}: its {what} were not kept (a sweep keeps summaries "
                             f"unless asked: gang.sim.sweep(..., keep='jobs'))")
        return rows

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """One dict per job (``JOB_COLUMNS``); ``ValueError`` when only the summary was
        kept (``sweep(..., keep="summary")``)."""
        return self._kept("jobs")

    @property
    def timeline(self) -> list[dict[str, Any]]:
        """One dict per sample (``TIMELINE_COLUMNS``); as ``jobs`` when not kept."""
        return self._kept("timeline")

    def job(self, id: str) -> dict[str, Any]:
        """The record of job ``id``; ``KeyError`` if there is none."""
        if self._by_id is None:
            self._by_id = {j["id"]: j for j in self.jobs}
        return self._by_id[id]

    def summary_row(self, *, tenant: str | None = None, completion: str = "censored") -> dict[str, Any]:
        """The summary as one row (``SUMMARY_COLUMNS``, gang-sim's ``summary_row``):
        jobs per final state, completion statistics on the ``completion`` basis
        (``"censored"``: jobs that did not complete count with their time until the end
        of the run, lower bounds; ``"completed"``: survivors only), GPU-hours, goodput."""
        return _summary_rows([(self.name, self)], tenant, completion)[0]

    def to_json(self) -> str:
        """``{"jobs", "summary", "timeline"}`` as JSON text (``{"summary"}`` when only
        the summary was kept)."""
        if self._jobs is None:
            return json.dumps({"summary": self.summary})
        return json.dumps({"jobs": self._jobs, "summary": self.summary, "timeline": self._timeline})

    def to_pandas(self, table: str = "jobs") -> Any:
        """The jobs (``table="jobs"``) or the timeline (``"timeline"``) as a
        ``pandas.DataFrame`` (needs ``gang[frames]``)."""
        return _to_pandas(getattr(self, table), _columns(table), "SimResult.to_pandas")

    def to_polars(self, table: str = "jobs") -> Any:
        """As ``to_pandas``, a ``polars.DataFrame`` (needs ``gang[frames]``)."""
        return _to_polars(getattr(self, table), _columns(table), "SimResult.to_polars")

    def to_arrow(self, table: str = "jobs") -> Any:
        """As ``to_pandas``, a ``pyarrow.Table`` (needs ``gang[frames]``)."""
        return _to_arrow(getattr(self, table), _columns(table), "SimResult.to_arrow")

    def report(self, path: PathLike, *, title: str | None = None) -> pathlib.Path:
        """``gang.sim.report`` of this one result."""
        return report(self, path, title=title)

    def __getstate__(self) -> dict[str, Any]:
        return {"_jobs": self._jobs, "summary": self.summary, "_timeline": self._timeline,
                "document": self.document, "name": self.name, "kept": self.kept}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._by_id = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimResult):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        a = self.summary["all"]
        mean = a["completion"]["mean"]
        st = a["states"]
        return (f"SimResult({self.name!r}, jobs={a['jobs']}, completed={st.get('completed', 0)}, "
                f"failed={st.get('failed', 0)}, unfinished={st.get('unfinished', 0)}, "
                f"mean_completion={None if mean is None else round(mean, 1)})")


def _summary_rows(runs: Iterable[tuple[str, SimResult]], tenant: str | None,
                  completion: str) -> list[dict[str, Any]]:
    """gang-sim's summary rows of ``runs`` (name, result)."""
    text = _gang._sim_summary_rows(json.dumps([[n, r.summary] for n, r in runs]), tenant, completion)
    rows: list[dict[str, Any]] = json.loads(text)
    return rows


class Comparison(Mapping[str, SimResult]):
    """Several simulations of one question (policies, or an experiment's variants): a
    read-only mapping from variant name to ``SimResult``, in order, with a summary
    table, plots and an HTML report.

    >>> c = gang.sim.compare({"generate": {"racks": 2}},
    ...     [{"id": "j", "submit": 0, "duration": 600, "members": 40, "gpus": 8}],
    ...     ["required(rack)", "unconstrained"])
    >>> list(c)
    ['required(rack)', 'unconstrained']
    >>> [(row["variant"], row["completed"], row["never_fits"]) for row in c.summary_table()]
    [('required(rack)', 0, 1), ('unconstrained', 1, 0)]
    """

    def __init__(self, results: Mapping[str, SimResult] | Iterable[SimResult],
                 description: str = "") -> None:
        if isinstance(results, Mapping):
            self.results: dict[str, SimResult] = dict(results)
        else:
            self.results = {}
            for r in results:
                if r.name in self.results:
                    raise ValueError(f"two results named {r.name!r}: name them apart")
                self.results[r.name] = r
        self.description = description

    def __getitem__(self, name: str) -> SimResult:
        return self.results[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def summary_table(self, tenant: str | None = None, *, completion: str = "censored") -> list[dict[str, Any]]:
        """One row per variant (``SUMMARY_COLUMNS``, gang-sim's ``summary_row``): jobs
        per final state, completion statistics on the ``completion`` basis (named in the
        ``completion_basis`` column: ``"censored"``, the default, counts jobs that did
        not complete with their time until the end of the run, so failing jobs never
        makes a policy look fast; ``"completed"`` is survivors only), queue delay, time
        to ready and run time (seconds), makespan, utilisation, fragmentation,
        GPU-hours and goodput; over all jobs, or one ``tenant``'s."""
        return _summary_rows(self.results.items(), tenant, completion)

    def _rows(self, table: str, completion: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        if table == "summary":
            return self.summary_table(completion=completion), SUMMARY_COLUMNS
        cols = ("variant",) + _columns(table)
        return [{"variant": n, **row} for n, r in self.results.items() for row in getattr(r, table)], cols

    def to_pandas(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """The summary table (``"summary"``), or every variant's ``"jobs"`` or
        ``"timeline"`` with a ``variant`` column, as a ``pandas.DataFrame``."""
        rows, cols = self._rows(table, completion)
        return _to_pandas(rows, cols, "Comparison.to_pandas")

    def to_polars(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``polars.DataFrame``."""
        rows, cols = self._rows(table, completion)
        return _to_polars(rows, cols, "Comparison.to_polars")

    def to_arrow(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``pyarrow.Table``."""
        rows, cols = self._rows(table, completion)
        return _to_arrow(rows, cols, "Comparison.to_arrow")

    def report(self, path: PathLike, *, title: str | None = None, tenant: str | None = None) -> pathlib.Path:
        """``gang.sim.report`` of these results."""
        return report(self, path, title=title, tenant=tenant)

    def __repr__(self) -> str:
        names = list(self.results)
        shown = ", ".join(repr(n) for n in names[:4]) + (f", … ({len(names)} variants)" if len(names) > 4 else "")
        return f"Comparison([{shown}])"


# --------------------------------------------------------------------- running them


def _run_text(document: str, keep: str = "jobs") -> str:
    """Runs one JSON run document (module level, so executors can pickle it); ``keep``:
    ``"jobs"`` (everything) or ``"summary"`` (the summary alone, small to ship back)."""
    return _gang._sim_run(document, keep)


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


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where tqdm.auto draws a widget)."""
    if "ipykernel" not in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    return get is not None and getattr(get(), "kernel", None) is not None


def _progress_on(progress: bool | None) -> bool:
    if progress is None:
        if _in_notebook():
            return True
        try:
            return sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return bool(progress)


def _tqdm(progress: bool | None, **kw: Any) -> Any:
    """A tqdm bar, or None when progress is off (or tqdm is missing and not asked for)."""
    if not _progress_on(progress):
        return None
    try:
        tqdm = importlib.import_module("tqdm.auto").tqdm
    except ImportError:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install 'gang[sim]'") from None
        return None
    return tqdm(**kw)


def _run_one(text: str, progress: bool | None, desc: str) -> str:
    """Runs one document; with progress, a bar of elapsed time while it runs."""
    bar = _tqdm(progress, desc=desc, total=None, unit="", bar_format="{desc}: {elapsed}",
                delay=0.0 if progress else 1.0, leave=False)
    if bar is None:
        return _run_text(text)
    with bar, concurrent.futures.ThreadPoolExecutor(1) as ex:
        fut = ex.submit(_run_text, text)
        while True:
            try:
                return fut.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                bar.refresh()


def _is_dask(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


Outcome = Union[str, BaseException]
"""A run's JSON text, or the exception it raised."""


def _run_many(texts: list[str], executor: Any, progress: bool | None, desc: str,
              keep: str = "jobs") -> list[Outcome]:
    """Runs every document; a run that raises gives its exception in its place (the
    others still run). The bar counts a run once its result is back here (on Dask,
    gathered)."""
    bar = _tqdm(progress, desc=desc, total=len(texts), unit="sim")
    tick: Callable[[], None] = (lambda: bar.update(1)) if bar is not None else (lambda: None)
    out: list[Outcome] = []
    try:
        if executor is None:
            for t in texts:
                try:
                    out.append(_run_text(t, keep))
                except Exception as e:  # kept, raised once every run is done
                    out.append(e)
                tick()
            return out
        if _is_dask(executor):
            dask_completed = importlib.import_module("distributed").as_completed
            futures = executor.map(_run_text, texts, keep=keep, pure=False)
            where = {f.key: i for i, f in enumerate(futures)}
            got: dict[int, Outcome] = {}
            for f in dask_completed(futures):
                try:
                    got[where[f.key]] = f.result()  # gathers this one
                except Exception as e:
                    got[where[f.key]] = e
                tick()
            return [got[i] for i in range(len(texts))]
        if isinstance(executor, concurrent.futures.Executor):
            futs = [executor.submit(_run_text, t, keep) for t in texts]
            for _ in concurrent.futures.as_completed(futs):
                tick()
            for f in futs:
                err = f.exception()
                out.append(err if err is not None else f.result())
            return out
        if hasattr(executor, "map"):  # multiprocessing.Pool and the like
            out = list(executor.map(functools.partial(_run_text, keep=keep), texts))
            for _ in out:
                tick()
            return out
        raise TypeError(f"executor must be a concurrent.futures.Executor, a distributed.Client "
                        f"or have map(), not {type(executor).__name__}")
    finally:
        if bar is not None:
            bar.close()


def _results(names: list[str], docs: list[dict[str, Any]], outs: list[Outcome],
             partial: Callable[[dict[str, SimResult]], Any]) -> dict[str, SimResult]:
    """The results by name; when runs raised, the first one's exception, with
    ``variant`` (its name), ``failed`` (every failing name) and ``results`` (the
    others' results, as ``partial`` makes them) set on it."""
    ok = {n: SimResult(o, d, n) for n, d, o in zip(names, docs, outs) if not isinstance(o, BaseException)}
    failed = [(n, o) for n, o in zip(names, outs) if isinstance(o, BaseException)]
    if failed:
        name, err = failed[0]
        err.variant = name  # type: ignore[attr-defined]
        err.failed = [n for n, _ in failed]  # type: ignore[attr-defined]
        err.results = partial(ok)  # type: ignore[attr-defined]
        note = (f"gang.sim: in variant {name!r} ({len(failed)} of {len(outs)} runs failed; "
                f"the {len(ok)} others' results are in this error's .results)")
        if hasattr(err, "add_note"):
            err.add_note(note)
        raise err
    return ok


def simulate(cluster: ClusterLike, trace: TraceLike, policy: PolicyLike | None = None, *,
             seed: int | None = 0, trace_format: str | None = None, progress: bool | None = None,
             name: str | None = None, **config: Any) -> SimResult:
    """Simulates ``trace`` on ``cluster`` under ``policy`` and returns a ``SimResult``.

    ``cluster`` and ``trace`` are as ``ClusterLike`` and ``TraceLike`` say; ``policy``
    is the default for jobs that do not name their own (gang-sim's default:
    ``"unconstrained"``); other keywords are gang-sim configuration fields (``queue``,
    ``readiness``, ``failures``, ``recovery``, ``slowdown``, ``default_sensitivity``,
    ``gpu_resource``, ``horizon``, ``sample_interval``, ``check_invariants``). Same
    inputs and seed give the same result, byte for byte.

    ``progress``: a tqdm bar of elapsed time while it runs (``None``: only when stderr
    is a terminal, and only after a second).

    Raises the ``gang.GangError`` class of what is wrong (``InvalidScenario`` for a
    trace or configuration gang-sim rejects, with ``line`` and ``field``;
    ``InvalidInventory`` / ``InvalidQuantity`` for the cluster; ``InvalidRequest`` for a
    job gang-core rejects), ``FileNotFoundError`` for a missing file.

    >>> try:
    ...     gang.sim.simulate({"generate": {"racks": 1}},
    ...         [{"id": "a", "submit": 0, "duration": 60, "members": 1},
    ...          {"id": "b", "submit": 0, "duration": -5, "members": 1}])
    ... except gang.InvalidScenario as e:
    ...     print(e.line, e.field, "|", e)
    2 duration | trace line 2, field duration: -5 is negative
    """
    doc = run_document(cluster, trace, policy, seed=seed, trace_format=trace_format, **config)
    return SimResult(_run_one(_json(doc), progress, f"gang.sim {name or ''}".rstrip()), doc, name)


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


def compare(cluster: ClusterLike, trace: TraceLike,
            policies: Sequence[PolicyLike] | Mapping[str, PolicyLike], *,
            seed: int | None = 0, trace_format: str | None = None, executor: Any = None,
            progress: bool | None = None, **config: Any) -> Comparison:
    """Simulates the same trace on the same cluster under several ``policies`` and
    returns a ``Comparison``.

    ``policies``: a list of policies (named by their text), or a dict of name to a
    policy or to a configuration patch (``{"policy": "timed(rack, 600)", "queue":
    {"discipline": "backfill"}}``, merged into the configuration as gang-sim's
    experiment variants are). Other arguments as ``simulate``; ``executor`` as
    ``sweep``.

    >>> c = gang.sim.compare(gang.sim.generated_cluster(racks=2),    # 32 8-GPU nodes a rack
    ...     [{"id": "big", "submit": 0, "duration": 3600, "members": 40, "gpus": 8}],
    ...     {"rack": "required(rack)", "any": "unconstrained"})
    >>> c["rack"].job("big")["state"], c["any"].job("big")["state"]
    ('never_fits', 'completed')
    """
    base = run_document(cluster, trace, None, seed=seed, trace_format=trace_format, **config)
    names, docs = [], []
    for name, p in _variants(policies):
        doc = _plain(base)
        doc["config"] = _merge(base["config"], p)
        names.append(name)
        docs.append(doc)
    outs = _run_many([_json(d) for d in docs], executor, progress, "gang.sim compare")
    return Comparison(_results(names, docs, outs, Comparison))


def _sweep_document(c: Any, i: int) -> tuple[dict[str, Any], str | None, dict[str, Any]]:
    """(run document, name or None, params) of ``configs[i]``."""
    if isinstance(c, str):
        return json.loads(c), None, {}
    if not isinstance(c, Mapping):
        raise TypeError(f"configs[{i}] must be a dict (simulate's arguments, or a run document), "
                        f"not {type(c).__name__}")
    c = dict(c)
    name = c.pop("name", None)
    params = c.pop("params", None) or {}
    if not isinstance(params, Mapping):
        raise TypeError(f"configs[{i}]['params'] must be a dict of column: value, not {type(params).__name__}")
    if "cluster" not in c or "trace" not in c:
        raise ValueError(f"configs[{i}] needs 'cluster' and 'trace'")
    cluster, trace, policy = c.pop("cluster"), c.pop("trace"), c.pop("policy", None)
    trace_format = c.pop("trace_format", None)
    cfg = _merge(dict(c.pop("config", None) or {}), c)
    seed = cfg.pop("seed", 0)
    if policy is None:
        policy = cfg.pop("policy", None)
    doc = run_document(cluster, trace, policy, seed=seed, trace_format=trace_format, **cfg)
    return doc, None if name is None else str(name), {str(k): v for k, v in params.items()}


def _sweep_names(built: list[tuple[dict[str, Any], str | None, dict[str, Any]]]) -> list[str]:
    """Every run's name, unique, decided before anything runs: a given ``name`` (two
    runs given the same one is a ``ValueError``), else the policy label with the
    params (``required(rack) load=0.8 seed=1``), numbered ``#2``, ``#3``… when that is
    still not unique."""
    given = [n for _, n, _ in built if n is not None]
    twice = sorted({n for n in given if given.count(n) > 1})
    if twice:
        raise ValueError(f"gang.sim.sweep: runs named twice: {twice}; name each run apart "
                         f"(or leave 'name' out: runs are then named by policy and params)")
    names: list[str] = []
    taken = set(given)
    for doc, n, params in built:
        if n is None:
            base = _policy_label(doc["config"].get("policy"))
            extra = " ".join(f"{k}={v}" for k, v in params.items() if k != "policy")
            n = f"{base} {extra}".strip()
            k, cand = 1, n
            while cand in taken:
                k += 1
                cand = f"{n} #{k}"
            n = cand
        taken.add(n)
        names.append(n)
    return names


def _param_columns(params: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The params' columns in order of appearance; ``ValueError`` for one that would
    hide a result column of the same name."""
    cols = _frames.columns(params)
    clash = [c for c in cols if c in SUMMARY_COLUMNS]
    if clash:
        raise ValueError(f"gang.sim.sweep: params {clash} would hide result columns of the same "
                         f"name; rename them")
    return tuple(cols)


class Sweep(Sequence[SimResult]):
    """A sweep's results, in the order of its runs, with the swept parameters: a
    sequence of ``SimResult`` (named uniquely) and one table whose rows carry each run's
    ``params`` as columns beside its summary (``SUMMARY_COLUMNS``) or, with
    ``table="jobs"``, beside each of its jobs (``keep="jobs"`` needed).

    >>> runs = [{"cluster": gang.sim.generated_cluster(racks=1), "policy": p, "seed": s,
    ...          "trace": gang.sim.generated_trace(20, seed=s, max_members=8),
    ...          "params": {"policy": p, "seed": s}}
    ...         for p in ("required(rack)", "unconstrained") for s in (1, 2)]
    >>> sw = gang.sim.sweep(runs)
    >>> sw.names[:2]
    ['required(rack) seed=1', 'required(rack) seed=2']
    >>> [(r["policy"], r["seed"], r["jobs"]) for r in sw.summary_table()][:2]
    [('required(rack)', 1, 20), ('required(rack)', 2, 20)]
    """

    def __init__(self, results: Sequence[SimResult], params: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.results: list[SimResult] = list(results)
        self.params: list[dict[str, Any]] = ([dict(p) for p in params] if params is not None
                                             else [{} for _ in self.results])
        if len(self.params) != len(self.results):
            raise ValueError(f"{len(self.results)} results but {len(self.params)} params")
        self.param_columns: tuple[str, ...] = _param_columns(self.params)

    @property
    def names(self) -> list[str]:
        """Every run's name, in order."""
        return [r.name for r in self.results]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Sweep(self.results[i], self.params[i])
        return self.results[i]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[SimResult]:
        return iter(self.results)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sweep):
            return self.results == other.results and self.params == other.params
        if isinstance(other, list):
            return self.results == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def result(self, name: str) -> SimResult:
        """The run named ``name``; ``KeyError`` if there is none."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def comparison(self) -> Comparison:
        """The runs as a ``Comparison`` (plots, reports), by name."""
        return Comparison({r.name: r for r in self.results})

    def summary_table(self, tenant: str | None = None, *, completion: str = "censored") -> list[dict[str, Any]]:
        """One row per run: its params, then its summary row (``SUMMARY_COLUMNS``;
        ``completion`` as ``Comparison.summary_table``)."""
        rows = _summary_rows(((r.name, r) for r in self.results), tenant, completion)
        return [{**p, **row} for p, row in zip(self.params, rows)]

    def _rows(self, table: str, completion: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        if table == "summary":
            return self.summary_table(completion=completion), self.param_columns + SUMMARY_COLUMNS
        # A param named as a record field (a job's own ``policy``) is ``param_policy``.
        own = _columns(table)
        key = {c: f"param_{c}" if c in own else c for c in self.param_columns}
        cols = ("variant",) + tuple(key.values()) + own
        return [{"variant": r.name, **{key[k]: v for k, v in p.items()}, **row}
                for r, p in zip(self.results, self.params) for row in getattr(r, table)], cols

    def to_pandas(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """The summary table (``"summary"``: one row per run), or every run's ``"jobs"``
        or ``"timeline"`` (with ``variant`` and the params), as a ``pandas.DataFrame``."""
        rows, cols = self._rows(table, completion)
        return _to_pandas(rows, cols, "Sweep.to_pandas")

    def to_polars(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``polars.DataFrame``."""
        rows, cols = self._rows(table, completion)
        return _to_polars(rows, cols, "Sweep.to_polars")

    def to_arrow(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``pyarrow.Table``."""
        rows, cols = self._rows(table, completion)
        return _to_arrow(rows, cols, "Sweep.to_arrow")

    def report(self, path: PathLike, *, title: str | None = None) -> pathlib.Path:
        """``gang.sim.report`` of these runs, with a metric-versus-parameter view."""
        return report(self, path, title=title)

    def __repr__(self) -> str:
        shown = ", ".join(repr(n) for n in self.names[:3])
        more = f", … ({len(self)} runs)" if len(self) > 3 else ""
        return f"Sweep([{shown}{more}], params={list(self.param_columns)})"


def sweep(configs: Iterable[Mapping[str, Any] | str], executor: Any = None, *,
          progress: bool | None = None, keep: str = "summary") -> Sweep:
    """Runs many simulations and returns a ``Sweep``: their results in order, and one
    table of them (``to_pandas``) with each run's ``params`` as columns.

    Each of ``configs`` is a dict of ``simulate``'s arguments (``cluster``, ``trace``,
    ``policy``, ``seed``, ``trace_format``, ``name``, and configuration fields, or a
    ``config`` dict of them) — so a run document works too — plus ``params``, a dict of
    the swept values to carry as columns (``{"load": 0.8, "policy": "required(rack)",
    "seed": 1}``); or a run document as JSON text. Names are settled before anything
    runs (see ``Sweep``; a name given twice is a ``ValueError``).

    ``executor``: ``None`` runs them here one after another; a
    ``concurrent.futures.Executor`` (threads run in parallel: the GIL is released; a
    process pool works too), or a Dask ``distributed.Client`` (``client.map``, each
    result gathered as it completes; workers need ``gang`` installed), or anything
    with ``map``. Documents are built here (paths made absolute), so workers only run
    them.

    ``keep``: ``"summary"`` (the default) ships back each run's summary alone (a few
    kilobytes, where jobs and timeline of a 3,000-job run are megabytes); ``"jobs"``
    keeps every job record and the timeline too.

    ``progress``: a tqdm bar (``tqdm.auto``: a widget in a notebook) of runs whose result
    is back (``None``: in a notebook, or when stderr is a terminal).

    A run that raises does not stop the others: once all are done, the first error is
    raised with ``variant`` (its name), ``failed`` (every failing name) and ``results``
    (a ``Sweep`` of the others) set on it.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> runs = [{"cluster": {"generate": {"racks": 1}}, "policy": "unconstrained", "seed": s,
    ...          "trace": {"generate": {"jobs": 20, "seed": s, "max_members": 8}}} for s in range(3)]
    >>> with ThreadPoolExecutor(2) as pool:
    ...     results = gang.sim.sweep(runs, pool)
    >>> [r.summary["all"]["jobs"] for r in results], results.names
    ([20, 20, 20], ['unconstrained', 'unconstrained #2', 'unconstrained #3'])
    """
    if keep not in ("summary", "jobs"):
        raise ValueError(f"gang.sim.sweep: keep must be 'summary' or 'jobs', not {keep!r}")
    built = [_sweep_document(c, i) for i, c in enumerate(configs)]
    names = _sweep_names(built)
    params = [p for _, _, p in built]
    _param_columns(params)  # checked before anything runs
    docs = [d for d, _, _ in built]
    outs = _run_many([_json(d) for d in docs], executor, progress, "gang.sim sweep", keep)
    by_param = dict(zip(names, params))

    def partial(ok: dict[str, SimResult]) -> Sweep:
        return Sweep(list(ok.values()), [by_param[n] for n in ok])
    ok = _results(names, docs, outs, partial)
    return Sweep([ok[n] for n in names], params)


SLOWDOWN_TABLES: dict[str, list[float]] = dict(_SCHEMA["default_slowdown"])
"""gang-sim's built-in slowdown tables (``default_slowdown``): run time multipliers of
a placement spanning one node, one rack, one block, more, per sensitivity class."""


def sensitivity(cluster: ClusterLike, trace: TraceLike,
                policies: Sequence[PolicyLike] | Mapping[str, PolicyLike], *,
                tables: Mapping[str, Sequence[float]] | None = None, seed: int | None = 0,
                trace_format: str | None = None, executor: Any = None,
                progress: bool | None = None, keep: str = "summary", **config: Any) -> Sweep:
    """The same comparison (``compare``'s ``policies``) under each slowdown table:
    every job's class is given the table (``tables``: name to multipliers; by default
    each of gang-sim's built-in ones, ``SLOWDOWN_TABLES``), so the answer's dependence
    on it shows. Returns a ``Sweep`` with params ``slowdown`` (the table's name) and
    ``policy`` (the variant's name).

    >>> sw = gang.sim.sensitivity(gang.sim.generated_cluster(racks=2),
    ...     gang.sim.generated_trace(40, seed=1, max_members=32), ["required(rack)", "unconstrained"])
    >>> [(r["slowdown"], r["policy"]) for r in sw.summary_table()][:3]
    [('high', 'required(rack)'), ('high', 'unconstrained'), ('low', 'required(rack)')]
    """
    tables = dict(SLOWDOWN_TABLES if tables is None else tables)
    runs: list[dict[str, Any]] = []
    for tname, table in tables.items():
        for name, patch in _variants(policies):
            cfg = _merge(_plain(config), patch)
            slow = dict(cfg.get("slowdown") or {})
            slow.update({c: list(table) for c in set(SLOWDOWN_TABLES) | set(slow)})
            cfg["slowdown"] = slow
            runs.append({"cluster": cluster, "trace": trace, "seed": seed, "trace_format": trace_format,
                         "config": cfg, "name": f"{name} @ {tname}",
                         "params": {"slowdown": tname, "policy": name}})
    return sweep(runs, executor, progress=progress, keep=keep)


def experiment(path: PathLike, *, executor: Any = None, progress: bool | None = None) -> Comparison:
    """Runs an experiment file (gang-sim's ``Experiment``: a run document and named
    variants of its configuration, as in ``examples/sim/``), every variant exactly as
    gang-sim's ``Experiment::run`` builds it, and returns a ``Comparison`` with the
    file's description.

    >>> c = gang.sim.experiment("examples/sim/03c-competing.json")
    >>> c["no gang, no readiness timeout"].job("A")["state"]
    'unfinished'
    """
    out = json.loads(_gang._sim_experiment(_path(path, "experiment")))
    docs = [(v["name"], v["document"]) for v in out["variants"]]
    outs = _run_many([_json(d) for _, d in docs], executor, progress, "gang.sim experiment")
    return Comparison(_results([n for n, _ in docs], [d for _, d in docs], outs, Comparison),
                      description=out["description"])


# ------------------------------------------------------------------ plots and reports

Results = Union[SimResult, Comparison, "Sweep", Mapping[str, SimResult], Sequence[SimResult]]
"""What plots and reports take: one result, a Comparison, a Sweep, a dict of name to
result, or a list of results (named by their ``name``)."""


def _named(results: Results) -> dict[str, SimResult]:
    if isinstance(results, SimResult):
        return {results.name: results}
    if isinstance(results, Sweep):
        return {r.name: r for r in results}
    if isinstance(results, Comparison):
        return dict(results.results)
    if isinstance(results, Mapping):
        return dict(results)
    return dict(Comparison(list(results)).results)


def plot_completion_cdf(results: Results, ax: Any = None, *, tenant: str | None = None) -> Figure:
    """The completion-time CDF (from submission, completed jobs) per variant, on
    ``ax`` or a new figure; returns the figure (needs ``gang[sim]``)."""
    from ._report import plots
    return plots.completion_cdf(_named(results), ax, tenant=tenant)


def plot_wait_vs_run(results: Results, ax: Any = None, *, tenant: str | None = None) -> Figure:
    """Mean queue delay, start-up and run time of completed jobs, stacked, per variant
    (their sum is the mean completion time); returns the figure (needs ``gang[sim]``)."""
    from ._report import plots
    return plots.wait_vs_run(_named(results), ax, tenant=tenant)


def plot_timeline(results: Results, axes: Any = None) -> Figure:
    """GPU utilisation (held, running) and fragmented GPUs (free GPUs no waiting gang
    can use) over time, per variant, on two axes; returns the figure (needs
    ``gang[sim]``)."""
    from ._report import plots
    return plots.timeline(_named(results), axes)


def plot_sweep(results: Sweep, metrics: Sequence[str] = ("completion_p95", "queue_delay_mean", "goodput"),
               *, completion: str = "censored") -> Figure:
    """A sweep's metrics against its first numeric parameter (e.g. load), one line per
    value of its first other parameter (e.g. policy), the mean over the rest (seeds),
    each run a dot; one panel per metric (a ``SUMMARY_COLUMNS`` name; times in hours).
    Needs ``gang[sim]``; ``ValueError`` when no parameter is numeric."""
    from ._report import plots
    unknown = [m for m in metrics if m not in SUMMARY_COLUMNS]
    if unknown:
        raise ValueError(f"gang.sim.plot_sweep: {unknown} are not summary columns {SUMMARY_COLUMNS}")
    time = ("completion_", "queue_delay_", "time_to_ready_", "run_time_", "makespan")
    spec = [(m, f"{m} (h)" if m.startswith(time) else m, 1 / plots.HOUR if m.startswith(time) else 1.0)
            for m in metrics]
    fig = plots.by_parameter(results.summary_table(completion=completion), results.param_columns, spec)
    if fig is None:
        raise ValueError(f"gang.sim.plot_sweep: no numeric parameter among {list(results.param_columns)}")
    return fig


def report(results: Results, path: PathLike, *, title: str | None = None,
           tenant: str | None = None, completion: str = "censored") -> pathlib.Path:
    """Writes a self-contained HTML report to ``path`` and returns it (needs
    ``gang[sim]``): the summary tables (outcomes and completion statistics on the
    ``completion`` basis; GPUs and GPU-hours), what every column means, the slowdown
    tables in force, which variants gave identical results, a GPU-hours plot (useful,
    wasted, held before progress), for a ``Sweep`` each metric against the swept
    parameter, and for up to 8 variants whose jobs were kept the completion-time CDF,
    waits and the timeline. Plots are inline PNG images; the page loads nothing else
    and fits a narrow window (wide tables scroll in place).

    >>> import tempfile, pathlib
    >>> c = gang.sim.compare(gang.sim.generated_cluster(racks=2),
    ...     gang.sim.generated_trace(40, seed=1, max_members=32), ["required(rack)", "unconstrained"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     page = gang.sim.report(c, pathlib.Path(d) / "report.html")
    ...     html = page.read_text()
    >>> html.count("<img "), "required(rack)" in html
    (4, True)
    """
    from ._report import html
    named = _named(results)
    description = results.description if isinstance(results, Comparison) else ""
    if not named:
        raise ValueError("gang.sim.report: no results to report")
    if isinstance(results, Sweep):
        summary, params = results.summary_table(tenant, completion=completion), results.param_columns
    else:
        summary, params = Comparison(named).summary_table(tenant, completion=completion), ()
    return html.write(named, summary, pathlib.Path(os.fspath(path)), title=title, tenant=tenant,
                      description=description, params=params, glossary=GLOSSARY,
                      jobs_kept=all(r.kept == "jobs" for r in named.values()))
