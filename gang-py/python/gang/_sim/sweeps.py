"""gang.sim's sweeps: many runs with their swept parameters as one table (``Sweep``),
``sweep``, ``sensitivity`` and ``plot_sweep``."""

from __future__ import annotations

import importlib
import json
import pathlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _frames
from .documents import (SLOWDOWN_TABLES, SUMMARY_COLUMNS, ClusterLike, PathLike, PolicyLike, TraceLike,
                        _json, _merge, _plain, _policy_label, _variants, run_document)
from .results import Comparison, SimResult, _columns, _read, _summary_rows, _to_arrow, _to_pandas, _to_polars, report
from .running import _results, _run_many

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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

    def _arrow(self, table: str) -> Any:
        """Every run's ``"jobs"`` or ``"timeline"`` as one ``pyarrow.Table`` straight from
        the Arrow its worker shipped (``Packed``: no Python rows in between), the columns
        as ``_rows`` has them; None when a run's came as JSON or were read already."""
        if table not in ("jobs", "timeline") or not self.results or any(r._packed is None for r in self.results):
            return None
        pa = importlib.import_module("pyarrow")
        own = _columns(table)
        key = {c: f"param_{c}" if c in own else c for c in self.param_columns}
        parts = []
        for r, p in zip(self.results, self.params):
            assert r._packed is not None
            t = _read(r._packed.jobs if table == "jobs" else r._packed.timeline)
            n = t.num_rows
            cols: dict[str, Any] = {"variant": pa.array([r.name] * n, pa.string())}
            cols.update({key[k]: pa.array([p.get(k)] * n) for k in self.param_columns})
            cols.update({c: t.column(c) if c in t.column_names else pa.nulls(n) for c in own})
            parts.append(pa.table(cols))
        try:
            return pa.concat_tables(parts, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # params of types Arrow cannot unify
            return None

    def to_pandas(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """The summary table (``"summary"``: one row per run), or every run's ``"jobs"``
        or ``"timeline"`` (with ``variant`` and the params), as a ``pandas.DataFrame``
        (from the workers' Arrow when they shipped it)."""
        fast = self._arrow(table)
        if fast is not None:
            _frames.library("pandas", "frames", "Sweep.to_pandas")
            return fast.to_pandas()
        rows, cols = self._rows(table, completion)
        return _to_pandas(rows, cols, "Sweep.to_pandas")

    def to_polars(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``polars.DataFrame``."""
        fast = self._arrow(table)
        if fast is not None:
            return _frames.library("polars", "frames", "Sweep.to_polars").from_arrow(fast)
        rows, cols = self._rows(table, completion)
        return _to_polars(rows, cols, "Sweep.to_polars")

    def to_arrow(self, table: str = "summary", *, completion: str = "censored") -> Any:
        """As ``to_pandas``, a ``pyarrow.Table``."""
        fast = self._arrow(table)
        if fast is not None:
            return fast
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


def plot_sweep(results: Sweep, metrics: Sequence[str] = ("completion_p95", "queue_delay_mean", "goodput"),
               *, completion: str = "censored") -> Figure:
    """A sweep's metrics against its first numeric parameter (e.g. load), one line per
    value of its first other parameter (e.g. policy), the mean over the rest (seeds),
    each run a dot; one panel per metric (a ``SUMMARY_COLUMNS`` name; times in hours).
    Needs ``gang[sim]``; ``ValueError`` when no parameter is numeric."""
    from .._report import plots
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


