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
>>> r.job("big")["completion"], r.job("big")["span"]     # two nodes of rack a: x1.5
(5400.0, 'rack')
>>> r.job("small")["queue_delay"], r.summary["all"]["states"]
(0.0, {'completed': 2})

Optional extras, imported only when used: ``gang[frames]`` (pandas, polars, pyarrow)
for ``to_pandas`` / ``to_polars`` / ``to_arrow``, ``gang[sim]`` (matplotlib, tqdm) for
plots, reports and progress bars, ``gang[dask]`` (distributed) for sweeps on a Dask
cluster.
"""

from __future__ import annotations

from ._sim.documents import GLOSSARY, JOB_COLUMNS, SLOWDOWN_TABLES, SUMMARY_COLUMNS, TIMELINE_COLUMNS, TRACE_COLUMNS
from ._sim.documents import ClusterLike as ClusterLike, PathLike as PathLike
from ._sim.documents import PolicyLike as PolicyLike, TraceLike as TraceLike
from ._sim.documents import _CLUSTER_SOURCES as _CLUSTER_SOURCES, _TRACE_FORMATS as _TRACE_FORMATS
from ._sim.documents import _TRACE_SOURCES as _TRACE_SOURCES, _merge as _merge, _policy_label as _policy_label
from ._sim.documents import cluster_inventory, generated_cluster, generated_trace, offered_load, run_document
from ._sim.documents import trace_jobs
from ._sim.results import Comparison, SimResult, plot_completion_cdf, plot_timeline, plot_wait_vs_run, report
from ._sim.results import Results as Results
from ._sim.running import _progress_on as _progress_on, compare, experiment, simulate
from ._sim.sweeps import Sweep, plot_sweep, sensitivity, sweep

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
