"""Running gang.sim's documents: here, on a ``concurrent.futures`` executor or on
Dask, with a progress bar; ``simulate``, ``compare`` and ``experiment``."""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

from .. import _gang
from .documents import (ClusterLike, PathLike, PolicyLike, TraceLike, _json, _merge, _path, _plain,
                        _variants, run_document)
from .results import Comparison, Packed, SimResult, _pack


def _run_text(document: str, keep: str = "jobs") -> str:
    """Runs one JSON run document (module level, so executors can pickle it); ``keep``:
    ``"jobs"`` (everything) or ``"summary"`` (the summary alone, small to ship back)."""
    return _gang._sim_run(document, keep)


def _run_shipped(document: str, keep: str = "jobs") -> str | Packed:
    """``_run_text`` on a worker whose answer is shipped back (Dask, a process pool):
    with jobs kept, packed as Arrow when the worker has pyarrow (``Packed``)."""
    text = _gang._sim_run(document, keep)
    return _pack(text) if keep == "jobs" else text


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


Outcome = Union[str, Packed, BaseException]
"""A run's JSON text (or its packed form, from a worker), or the exception it raised."""


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
            futures = executor.map(_run_shipped, texts, keep=keep, pure=False)
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
            # Threads share this process's memory: nothing to pack.
            run = _run_text if isinstance(executor, concurrent.futures.ThreadPoolExecutor) else _run_shipped
            futs = [executor.submit(run, t, keep) for t in texts]
            for _ in concurrent.futures.as_completed(futs):
                tick()
            for f in futs:
                err = f.exception()
                out.append(err if err is not None else f.result())
            return out
        if hasattr(executor, "map"):  # multiprocessing.Pool and the like
            out = list(executor.map(functools.partial(_run_shipped, keep=keep), texts))
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
    ``gpu_resource``, ``horizon``, ``sample_interval``, ``check_invariants``,
    ``preemption``). Same inputs and seed give the same result, byte for byte.

    ``preemption="lower-priority"`` lets the head of the queue evict whole jobs of
    lower priority (gang-core's exact choice; the trace's ``priority`` and
    ``"preemption_policy": "Never"``); what it did is in the summary row's last columns
    (``evictions``, ``jobs_evicted``, ``preemptions``, ``gpu_hours_lost``), in each
    job's ``preemption`` dict and in ``summary["preemption"]``.

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


def experiment(path: PathLike, *, executor: Any = None, progress: bool | None = None) -> Comparison:
    """Runs an experiment file (gang-sim's ``Experiment``: a run document and named
    variants of its configuration, as in ``examples/sim/``), every variant exactly as
    gang-sim's ``Experiment::run`` builds it, and returns a ``Comparison`` with the
    file's description.

    Paths inside the file are taken from the file's folder.

    >>> import json, pathlib, tempfile
    >>> two = [{"id": j, "submit": 0, "duration": 600, "members": 8, "gpus": 1} for j in "AB"]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "competing.json"
    ...     _ = path.write_text(json.dumps({"description": "two gangs of 8 on 8 GPUs",
    ...         "run": {"cluster": {"generate": {"racks": 1, "nodes_per_rack": 1}},
    ...                 "trace": {"inline": two}, "config": {"readiness": {"timeout": None}}},
    ...         "variants": [{"name": "gang", "config": {}},
    ...                      {"name": "no gang", "config": {"policy": "no-gang", "horizon": 7200}}]}))
    ...     c = gang.sim.experiment(path)
    >>> c.description, c["gang"].job("B")["state"], c["no gang"].job("A")["state"]
    ('two gangs of 8 on 8 GPUs', 'completed', 'unfinished')
    """
    out = json.loads(_gang._sim_experiment(_path(path, "experiment")))
    docs = [(v["name"], v["document"]) for v in out["variants"]]
    outs = _run_many([_json(d) for _, d in docs], executor, progress, "gang.sim experiment")
    return Comparison(_results([n for n, _ in docs], [d for _, d in docs], outs, Comparison),
                      description=out["description"])


