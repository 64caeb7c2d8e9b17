"""The plots of gang.sim, with matplotlib's object-oriented API (``Figure`` and the Agg
canvas): no pyplot, no display, no global backend switched."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

try:
    from matplotlib.figure import Figure
except ImportError:  # tested by the missing-extra test
    raise ImportError(
        "gang.sim plots and reports need matplotlib, which is not installed: "
        "pip install 'gang[sim]' (or pip install matplotlib)"
    ) from sys.exc_info()[1]

HOUR = 3600.0


class Run(Protocol):
    """What a plot reads of one simulation (``gang.sim.SimResult`` is one): its job
    records, summary and timeline. The report draws from these plain fields, so this
    package never imports ``gang.sim`` (which imports it)."""

    jobs: list[dict[str, Any]]
    summary: dict[str, Any]
    timeline: list[dict[str, Any]]


def _jobs(r: Run, tenant: str | None) -> list[dict[str, Any]]:
    return [j for j in r.jobs if tenant is None or j["tenant"] == tenant]


def _figure(ax: Any, size: tuple[float, float] = (7.0, 4.0)) -> tuple[Figure, Any]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=size, dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def completion_cdf(results: Mapping[str, Run], ax: Any = None, *,
                   tenant: str | None = None) -> Figure:
    """Empirical CDF of completion time (hours from submission) per variant."""
    fig, ax = _figure(ax)
    for name, r in results.items():
        xs = sorted(j["completion"] / HOUR for j in _jobs(r, tenant) if j["completion"] is not None)
        if not xs:
            ax.plot([], [], label=f"{name} (none completed)")
            continue
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        ax.step([0.0] + xs, [0.0] + ys, where="post", label=name)
    ax.set_xlabel("completion time from submission (h)")
    ax.set_ylabel("share of completed jobs")
    ax.set_ylim(0, 1.02)
    ax.set_title("Completion time CDF" + (f" (tenant {tenant})" if tenant else ""))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def _mean(v: Sequence[float]) -> float:
    return sum(v) / len(v) if v else 0.0


def wait_vs_run(results: Mapping[str, Run], ax: Any = None, *,
                tenant: str | None = None) -> Figure:
    """Per variant, stacked: mean queue delay, start-up (readiness, retries, waiting
    for replacements) and run time of completed jobs, in hours."""
    fig, ax = _figure(ax)
    names = list(results)
    wait, start, run = [], [], []
    for name in names:
        done = [j for j in _jobs(results[name], tenant) if j["completion"] is not None]
        q = [j["queue_delay"] or 0.0 for j in done]
        rt = [j["run_time"] for j in done]
        st = [j["completion"] - (j["queue_delay"] or 0.0) - j["run_time"] for j in done]
        wait.append(_mean(q) / HOUR)
        start.append(_mean(st) / HOUR)
        run.append(_mean(rt) / HOUR)
    x = list(range(len(names)))
    ax.bar(x, wait, label="queue delay", color="#d62728")
    ax.bar(x, start, bottom=wait, label="start-up and retries", color="#ff7f0e")
    ax.bar(x, run, bottom=[a + b for a, b in zip(wait, start)], label="run time", color="#1f77b4")
    ax.set_xticks(x, names, rotation=15 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center")
    ax.set_ylabel("mean per completed job (h)")
    ax.set_title("Queue delay vs run time" + (f" (tenant {tenant})" if tenant else ""))
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def timeline(results: Mapping[str, Run], axes: Any = None) -> Figure:
    """Utilisation (share of GPUs held; dashed: running) and fragmented GPUs over time."""
    if axes is None:
        fig = Figure(figsize=(7.0, 5.5), dpi=100, layout="constrained")
        util, frag = fig.subplots(2, 1, sharex=True)
    else:
        util, frag = axes
        fig = util.figure
    for name, r in results.items():
        t = [s["time"] / HOUR for s in r.timeline]
        gpus = r.summary["gpus"] or 1.0
        (line,) = util.step(t, [s["utilisation"] for s in r.timeline], where="post", label=name)
        util.step(t, [s["busy_gpus"] / gpus for s in r.timeline], where="post",
                  linestyle="--", color=line.get_color(), alpha=0.7)
        frag.step(t, [s["fragmented_gpus"] for s in r.timeline], where="post", label=name,
                  color=line.get_color())
    util.set_ylabel("GPUs held (share)")
    util.set_ylim(0, 1.05)
    util.set_title("Utilisation (solid: held, dashed: running)")
    util.grid(True, alpha=0.3)
    util.legend(fontsize="small")
    frag.set_ylim(bottom=0)
    frag.set_ylabel("fragmented GPUs")
    frag.set_xlabel("time (h)")
    frag.set_title("Fragmentation: free GPUs no waiting gang can use")
    frag.grid(True, alpha=0.3)
    return fig
