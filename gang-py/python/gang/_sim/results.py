"""gang.sim's results: one run (``SimResult``), several of one question
(``Comparison``), their summary rows and tables, plots and the HTML report."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import pathlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Union, runtime_checkable

from .. import _frames, _gang
from .documents import GLOSSARY, JOB_COLUMNS, SUMMARY_COLUMNS, TIMELINE_COLUMNS, PathLike, _policy_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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


@dataclasses.dataclass(frozen=True)
class Packed:
    """A run's answer as a worker ships it back (``sweep`` on Dask or a process pool,
    with ``keep="jobs"``): the summary as JSON text, the jobs and the timeline as Arrow
    IPC streams (compressed), a fraction of the JSON's bytes and read when first asked
    for. ``_pack`` makes it on the worker when pyarrow is there; without pyarrow the
    answer travels as JSON text, the same result either way."""

    summary: str
    jobs: bytes
    timeline: bytes


def _ipc(pa: Any, rows: list[dict[str, Any]]) -> bytes:
    table = pa.Table.from_pylist(rows)
    codec = next((c for c in ("zstd", "lz4") if pa.Codec.is_available(c)), None)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _read(data: bytes) -> Any:
    """A packed table as a ``pyarrow.Table`` (workers that had pyarrow packed it: an
    ``ImportError`` naming the extra when this process has none)."""
    pa = _frames.library("pyarrow", "frames", "reading jobs a worker shipped as Arrow")
    return pa.ipc.open_stream(data).read_all()


def _unpack(data: bytes) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = _read(data).to_pylist()
    return rows


def _pack(text: str) -> str | Packed:
    """``_sim_run``'s answer (JSON text with jobs) packed for the way back from a
    worker: jobs and timeline as Arrow when pyarrow is installed and takes them, else
    the text as it is."""
    try:
        pa = importlib.import_module("pyarrow")
    except ImportError:
        return text
    out = json.loads(text)
    if "jobs" not in out:
        return text
    try:
        return Packed(json.dumps(out["summary"]), _ipc(pa, out["jobs"]), _ipc(pa, out["timeline"]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return text  # a row Arrow cannot type: JSON it is


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
    >>> r.job("j")["span"], r.job("j")["slowdown"]   # two nodes of one rack, medium
    ('topology.example.com/rack', 1.5)
    """

    def __init__(self, text: str | Packed, document: Mapping[str, Any], name: str | None = None) -> None:
        self._packed: Packed | None = None
        if isinstance(text, Packed):  # from a worker: the jobs and timeline as Arrow
            out: dict[str, Any] = {"summary": json.loads(text.summary)}
            self._packed = text
        else:
            out = json.loads(text)
        self.kept: str = "jobs" if "jobs" in out or self._packed is not None else "summary"
        self._jobs: list[dict[str, Any]] | None = out.get("jobs")
        self.summary: dict[str, Any] = out["summary"]
        self._timeline: list[dict[str, Any]] | None = out.get("timeline")
        self.document: dict[str, Any] = dict(document)
        self.name: str = name if name is not None else _policy_label(
            document.get("config", {}).get("policy"))
        self._by_id: dict[str, dict[str, Any]] | None = None

    def _kept(self, what: str) -> list[dict[str, Any]]:
        if self._packed is not None:  # read from Arrow when first asked for
            self._jobs, self._timeline = _unpack(self._packed.jobs), _unpack(self._packed.timeline)
            self._packed = None
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
        if self.kept == "summary":
            return json.dumps({"summary": self.summary})
        self._kept("jobs")
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
        if self._packed is not None:
            self._kept("jobs")
        return {"_jobs": self._jobs, "summary": self.summary, "_timeline": self._timeline,
                "document": self.document, "name": self.name, "kept": self.kept}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._by_id = None
        self._packed = None

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
        GPU-hours and goodput, and what preemption did (``evictions``,
        ``jobs_evicted``, ``preemptions``, ``gpu_hours_lost``: the run's, ``None`` with
        preemption off and in a tenant's row); over all jobs, or one ``tenant``'s."""
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


@runtime_checkable
class _Swept(Protocol):
    """What a report reads of a ``gang.sim.Sweep`` (defined above this module)."""
    param_columns: tuple[str, ...]

    def summary_table(self, tenant: str | None = None, *, completion: str = "censored") -> list[dict[str, Any]]: ...


Results = Union[SimResult, Comparison, Mapping[str, SimResult], Sequence[SimResult]]
"""What plots and reports take: one result, a Comparison, a Sweep, a dict of name to
result, or a list of results (named by their ``name``)."""


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
    from .._report import plots
    return plots.completion_cdf(_named(results), ax, tenant=tenant)


def plot_wait_vs_run(results: Results, ax: Any = None, *, tenant: str | None = None) -> Figure:
    """Mean queue delay, start-up and run time of completed jobs, stacked, per variant
    (their sum is the mean completion time); returns the figure (needs ``gang[sim]``)."""
    from .._report import plots
    return plots.wait_vs_run(_named(results), ax, tenant=tenant)


def plot_timeline(results: Results, axes: Any = None) -> Figure:
    """GPU utilisation (held, running) and fragmented GPUs (free GPUs no waiting gang
    can use) over time, per variant, on two axes; returns the figure (needs
    ``gang[sim]``)."""
    from .._report import plots
    return plots.timeline(_named(results), axes)


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
    from .._report import html
    named = _named(results)
    description = results.description if isinstance(results, Comparison) else ""
    if not named:
        raise ValueError("gang.sim.report: no results to report")
    if isinstance(results, _Swept):
        summary, params = results.summary_table(tenant, completion=completion), results.param_columns
    else:
        summary, params = Comparison(named).summary_table(tenant, completion=completion), ()
    return html.write(named, summary, pathlib.Path(os.fspath(path)), title=title, tenant=tenant,
                      description=description, params=params, glossary=GLOSSARY,
                      jobs_kept=all(r.kept == "jobs" for r in named.values()))

