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
import importlib
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
    "JOB_COLUMNS",
    "SimResult",
    "TIMELINE_COLUMNS",
    "compare",
    "experiment",
    "generated_cluster",
    "generated_trace",
    "plot_completion_cdf",
    "plot_timeline",
    "plot_wait_vs_run",
    "report",
    "run_document",
    "simulate",
    "sweep",
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

_SCHEMA: dict[str, list[str]] = json.loads(_gang._sim_schema())

JOB_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["job_columns"])
"""The fields of a job record (``SimResult.jobs``), in gang-sim's CSV order (gang-sim's
``JOB_COLUMNS``, read from the extension)."""

TIMELINE_COLUMNS: tuple[str, ...] = tuple(_SCHEMA["timeline_columns"])
"""The fields of a timeline sample (``SimResult.timeline``), gang-sim's
``TIMELINE_COLUMNS``."""

_CLUSTER_SOURCES = ("file", "inline", "generate", "openb_nodes")
_TRACE_SOURCES = ("file", "inline", "jsonl", "csv", "generate")
_TRACE_FORMATS = ("jsonl", "csv", "sacct", "openb", "philly")


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


def _plain(v: Any) -> Any:
    """A copy of ``v`` with every mapping a dict and every list a list of copies."""
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
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
                      awkward: bool = False) -> dict[str, Any]:
    """A generated cluster, as a cluster source for ``simulate``: ``racks`` racks of
    ``flavor`` (``"hgx"``: 32 8-GPU nodes a rack, 16 racks a block; ``"nvl72"``: 18
    4-GPU trays a rack, 8 racks a block), ``used_pct`` of the GPUs used by others.

    >>> gang.sim.generated_cluster("nvl72", 2)
    {'generate': {'flavor': 'nvl72', 'racks': 2, 'used_pct': 0, 'seed': 0, 'awkward': False}}
    """
    return {"generate": {"flavor": flavor, "racks": racks, "used_pct": used_pct, "seed": seed,
                         "awkward": awkward}}


def generated_trace(jobs: int = 100, *, seed: int = 0, **spec: Any) -> dict[str, Any]:
    """A generated workload, as a trace source for ``simulate``: ``jobs`` jobs, Poisson
    arrivals, power-law gang sizes and log-normal run times; other keywords as
    gang-sim's ``WorkloadSpec`` (``arrival``, ``size_alpha``, ``max_members``,
    ``member_gpus``, ``duration_median``, ``sensitivity``, ``tenants``, ``policy``, …).

    >>> gang.sim.generated_trace(10, seed=3, max_members=8)
    {'generate': {'jobs': 10, 'seed': 3, 'max_members': 8}}
    """
    return {"generate": {"jobs": jobs, "seed": seed, **spec}}


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
    SimResult('unconstrained', jobs=1, completed=1, mean_completion=960.0)
    >>> r.job("j")["level"], r.job("j")["slowdown"]   # two nodes of one rack, medium
    ('topology.example.com/rack', 1.5)
    """

    def __init__(self, text: str, document: Mapping[str, Any], name: str | None = None) -> None:
        out = json.loads(text)
        self.jobs: list[dict[str, Any]] = out["jobs"]
        self.summary: dict[str, Any] = out["summary"]
        self.timeline: list[dict[str, Any]] = out["timeline"]
        self.document: dict[str, Any] = dict(document)
        self.name: str = name if name is not None else _policy_label(
            document.get("config", {}).get("policy"))
        self._by_id: dict[str, dict[str, Any]] | None = None

    def job(self, id: str) -> dict[str, Any]:
        """The record of job ``id``; ``KeyError`` if there is none."""
        if self._by_id is None:
            self._by_id = {j["id"]: j for j in self.jobs}
        return self._by_id[id]

    def to_json(self) -> str:
        """``{"jobs", "summary", "timeline"}`` as JSON text."""
        return json.dumps({"jobs": self.jobs, "summary": self.summary, "timeline": self.timeline})

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
        return {"jobs": self.jobs, "summary": self.summary, "timeline": self.timeline,
                "document": self.document, "name": self.name}

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
        return (f"SimResult({self.name!r}, jobs={a['jobs']}, completed={a['states'].get('completed', 0)}, "
                f"mean_completion={None if mean is None else round(mean, 1)})")


SUMMARY_COLUMNS: tuple[str, ...] = (
    "variant", "jobs", "completed", "failed", "cancelled", "never_fits", "unfinished",
    "completion_mean", "completion_p50", "completion_p95", "completion_p99",
    "queue_delay_mean", "queue_delay_p95", "time_to_ready_mean", "run_time_mean",
    "makespan", "mean_utilisation", "mean_busy", "mean_fragmented_gpus",
    "gpu_hours_held", "gpu_hours_wasted", "gpu_hours_before_progress",
)


def _summary_row(name: str, r: SimResult, tenant: str | None) -> dict[str, Any]:
    s = r.summary
    g = s["all"] if tenant is None else s["by_tenant"].get(tenant)
    if g is None:
        raise KeyError(f"no tenant {tenant!r} in {name!r} (tenants: {sorted(s['by_tenant'])})")
    row: dict[str, Any] = {"variant": name, "jobs": g["jobs"]}
    for st in ("completed", "failed", "cancelled", "never_fits", "unfinished"):
        row[st] = g["states"].get(st, 0)
    for metric, stats in (("completion", ("mean", "p50", "p95", "p99")), ("queue_delay", ("mean", "p95")),
                          ("time_to_ready", ("mean",)), ("run_time", ("mean",))):
        for stat in stats:
            row[f"{metric}_{stat}"] = g[metric][stat]
    for k in ("makespan", "mean_utilisation", "mean_busy", "mean_fragmented_gpus"):
        row[k] = s[k]
    for k in ("gpu_hours_held", "gpu_hours_wasted", "gpu_hours_before_progress"):
        row[k] = g[k]
    return row


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

    def summary_table(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """One row per variant (``SUMMARY_COLUMNS``): jobs per state, completion,
        queue delay, time to ready and run time statistics (seconds), makespan,
        utilisation, fragmentation, GPU-hours; over all jobs, or one ``tenant``'s."""
        return [_summary_row(n, r, tenant) for n, r in self.results.items()]

    def _rows(self, table: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        if table == "summary":
            return self.summary_table(), SUMMARY_COLUMNS
        cols = ("variant",) + _columns(table)
        return [{"variant": n, **row} for n, r in self.results.items() for row in getattr(r, table)], cols

    def to_pandas(self, table: str = "summary") -> Any:
        """The summary table (``"summary"``), or every variant's ``"jobs"`` or
        ``"timeline"`` with a ``variant`` column, as a ``pandas.DataFrame``."""
        rows, cols = self._rows(table)
        return _to_pandas(rows, cols, "Comparison.to_pandas")

    def to_polars(self, table: str = "summary") -> Any:
        """As ``to_pandas``, a ``polars.DataFrame``."""
        rows, cols = self._rows(table)
        return _to_polars(rows, cols, "Comparison.to_polars")

    def to_arrow(self, table: str = "summary") -> Any:
        """As ``to_pandas``, a ``pyarrow.Table``."""
        rows, cols = self._rows(table)
        return _to_arrow(rows, cols, "Comparison.to_arrow")

    def report(self, path: PathLike, *, title: str | None = None, tenant: str | None = None) -> pathlib.Path:
        """``gang.sim.report`` of these results."""
        return report(self, path, title=title, tenant=tenant)

    def __repr__(self) -> str:
        return f"Comparison({list(self.results)})"


# --------------------------------------------------------------------- running them


def _run_text(document: str) -> str:
    """Runs one JSON run document (module level, so executors can pickle it)."""
    return _gang._sim_run(document)


def _json(doc: Any) -> str:
    def default(o: Any) -> Any:
        if isinstance(o, os.PathLike):
            return os.fspath(o)
        if hasattr(o, "item"):  # numpy scalars
            return o.item()
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"gang.sim: {type(o).__name__} is not JSON: {o!r}")
    try:
        return json.dumps(doc, default=default, allow_nan=False)
    except ValueError as e:
        raise ValueError(f"gang.sim: the run document holds a NaN or infinity: {e}") from None


def _progress_on(progress: bool | None) -> bool:
    if progress is None:
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


def _run_many(texts: list[str], executor: Any, progress: bool | None, desc: str) -> list[str]:
    bar = _tqdm(progress, desc=desc, total=len(texts), unit="sim")
    tick: Callable[[], None] = (lambda: bar.update(1)) if bar is not None else (lambda: None)
    try:
        if executor is None:
            out = []
            for t in texts:
                out.append(_run_text(t))
                tick()
            return out
        if _is_dask(executor):
            dask_completed = importlib.import_module("distributed").as_completed
            futures = executor.map(_run_text, texts, pure=False)
            for _ in dask_completed(futures):
                tick()
            return list(executor.gather(futures))
        if isinstance(executor, concurrent.futures.Executor):
            futs = [executor.submit(_run_text, t) for t in texts]
            for _ in concurrent.futures.as_completed(futs):
                tick()
            return [f.result() for f in futs]
        if hasattr(executor, "map"):  # multiprocessing.Pool and the like
            out = list(executor.map(_run_text, texts))
            for _ in out:
                tick()
            return out
        raise TypeError(f"executor must be a concurrent.futures.Executor, a distributed.Client "
                        f"or have map(), not {type(executor).__name__}")
    finally:
        if bar is not None:
            bar.close()


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

    >>> c = gang.sim.compare("examples/sim/01-cluster.json", "examples/sim/01-small-experiment.jsonl",
    ...     {"rack": "required(rack)", "any": "unconstrained"}, seed=1)
    >>> c["rack"].job("experiment")["completion"], c["any"].job("experiment")["completion"]
    (14460.0, 4020.0)
    """
    base = run_document(cluster, trace, None, seed=seed, trace_format=trace_format, **config)
    names, docs = [], []
    for name, p in _variants(policies):
        doc = _plain(base)
        doc["config"] = _merge(base["config"], p)
        names.append(name)
        docs.append(doc)
    outs = _run_many([_json(d) for d in docs], executor, progress, "gang.sim compare")
    return Comparison({n: SimResult(o, d, n) for n, o, d in zip(names, outs, docs)})


def _sweep_document(c: Any, i: int) -> tuple[dict[str, Any], str | None]:
    if isinstance(c, str):
        return json.loads(c), None
    if not isinstance(c, Mapping):
        raise TypeError(f"configs[{i}] must be a dict (simulate's arguments, or a run document), "
                        f"not {type(c).__name__}")
    c = dict(c)
    name = c.pop("name", None)
    if "cluster" not in c or "trace" not in c:
        raise ValueError(f"configs[{i}] needs 'cluster' and 'trace'")
    cluster, trace, policy = c.pop("cluster"), c.pop("trace"), c.pop("policy", None)
    trace_format = c.pop("trace_format", None)
    cfg = _merge(dict(c.pop("config", None) or {}), c)
    seed = cfg.pop("seed", 0)
    if policy is None:
        policy = cfg.pop("policy", None)
    return run_document(cluster, trace, policy, seed=seed, trace_format=trace_format, **cfg), name


def sweep(configs: Iterable[Mapping[str, Any] | str], executor: Any = None, *,
          progress: bool | None = None) -> list[SimResult]:
    """Runs many simulations and returns their results in order.

    Each of ``configs`` is a dict of ``simulate``'s arguments (``cluster``, ``trace``,
    ``policy``, ``seed``, ``trace_format``, ``name``, and configuration fields, or a
    ``config`` dict of them) — so a run document works too — or a run document as JSON
    text. ``executor``: ``None`` runs them here one after another; a
    ``concurrent.futures.Executor`` (threads run in parallel: the GIL is released; a
    process pool works too), or a Dask ``distributed.Client`` (``client.map`` and
    ``client.gather``; workers need ``gang`` installed), or anything with ``map``.
    Documents are built here (paths made absolute), so workers only run them.

    ``progress``: a tqdm bar of simulations done (``None``: when stderr is a terminal).

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> runs = [{"cluster": {"generate": {"racks": 1}}, "policy": "unconstrained", "seed": s,
    ...          "trace": {"generate": {"jobs": 20, "seed": s, "max_members": 8}}} for s in range(3)]
    >>> with ThreadPoolExecutor(2) as pool:
    ...     results = gang.sim.sweep(runs, pool)
    >>> [r.summary["all"]["jobs"] for r in results]
    [20, 20, 20]
    """
    built = [_sweep_document(c, i) for i, c in enumerate(configs)]
    outs = _run_many([_json(d) for d, _ in built], executor, progress, "gang.sim sweep")
    return [SimResult(o, d, n) for o, (d, n) in zip(outs, built)]


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
    return Comparison({n: SimResult(o, d, n) for (n, d), o in zip(docs, outs)},
                      description=out["description"])


# ------------------------------------------------------------------ plots and reports

Results = Union[SimResult, Comparison, Mapping[str, SimResult], Sequence[SimResult]]
"""What plots and reports take: one result, a Comparison, a dict of name to result, or
a list of results (named by their ``name``)."""


def _named(results: Results) -> dict[str, SimResult]:
    if isinstance(results, SimResult):
        return {results.name: results}
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


def report(results: Results, path: PathLike, *, title: str | None = None,
           tenant: str | None = None) -> pathlib.Path:
    """Writes a self-contained HTML report to ``path``: the summary table and the three
    plots (inline PNG images; the page loads nothing else), and returns the path
    (needs ``gang[sim]``).

    >>> import tempfile, pathlib
    >>> c = gang.sim.experiment("examples/sim/01-small-experiment.json")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     page = gang.sim.report(c, pathlib.Path(d) / "report.html")
    ...     html = page.read_text()
    >>> html.count("<img "), "rack required" in html
    (3, True)
    """
    from ._report import html
    named = _named(results)
    description = results.description if isinstance(results, Comparison) else ""
    if not named:
        raise ValueError("gang.sim.report: no results to report")
    return html.write(named, Comparison(named).summary_table(tenant), pathlib.Path(os.fspath(path)),
                      title=title, tenant=tenant, description=description)
