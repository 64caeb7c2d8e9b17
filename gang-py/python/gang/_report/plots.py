"""The plots of gang.sim, with matplotlib's object-oriented API (``Figure`` and the Agg
canvas): no pyplot, no display, no global backend switched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _new_figure(**kw: Any) -> Figure:
    """A matplotlib Figure; matplotlib is imported here, when a plot is drawn, so that
    importing this module (as stubtest does every module) needs no matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # tested by the missing-extra test
        raise ImportError(
            "gang.sim plots and reports need matplotlib, which is not installed: "
            "pip install 'gang[sim]' (or pip install matplotlib)"
        ) from e
    return Figure(**kw)


HOUR = 3600.0


class Run(Protocol):
    """What a plot reads of one simulation (``gang.sim.SimResult`` is one): its job
    records, summary and timeline. The report draws from these plain fields, so this
    package never imports ``gang.sim`` (which imports it)."""

    @property
    def jobs(self) -> list[dict[str, Any]]: ...
    @property
    def summary(self) -> dict[str, Any]: ...
    @property
    def timeline(self) -> list[dict[str, Any]]: ...


def _jobs(r: Run, tenant: str | None) -> list[dict[str, Any]]:
    return [j for j in r.jobs if tenant is None or j["tenant"] == tenant]


#: Legend entries (variants) shown beside the plot; more go under it in columns, the
#: figure taller by their rows (beside, they would run off the figure and collapse it).
MAX_BESIDE = 12


def _legend(ax: Any, fig: Figure | None = None) -> None:
    """The legend beside the axes, right of them: never over the curves. With more than
    ``MAX_BESIDE`` entries, under the whole figure ``fig`` (one of this module's, made
    taller by ``_legend_height``) in columns."""
    handles, labels = ax.get_legend_handles_labels()
    if fig is None or len(labels) <= MAX_BESIDE:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        return
    fig.legend(handles, labels, loc="outside lower center", ncols=_legend_columns(labels), fontsize="small")


def _legend_columns(labels: Sequence[str]) -> int:
    longest = max((len(n) for n in labels), default=0)
    return 3 if longest <= 28 else 2 if longest <= 48 else 1


def _legend_height(labels: Sequence[str]) -> float:
    """Inches a figure grows by for a legend of ``labels`` under it (0 when beside)."""
    if len(labels) <= MAX_BESIDE:
        return 0.0
    return 0.3 + 0.19 * -(-len(labels) // _legend_columns(labels))


#: Variants drawn as upright bars with their names under them; more are drawn as rows.
MAX_UPRIGHT = 8


def _names_on_x(ax: Any, x: Sequence[float], names: Sequence[str]) -> None:
    """Variant names under bars: slanted, right-aligned to their bar, when there are
    several, so that they never overlap."""
    many = len(names) > 3 or max((len(n) for n in names), default=0) > 14
    ax.set_xticks(x, names, rotation=35 if many else 0, ha="right" if many else "center",
                  rotation_mode="anchor" if many else "default", fontsize="small")


def _figure(ax: Any, size: tuple[float, float] = (7.0, 4.0)) -> tuple[Figure, Any]:
    if ax is not None:
        return ax.figure, ax
    fig = _new_figure(figsize=size, dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def completion_cdf(results: Mapping[str, Run], ax: Any = None, *,
                   tenant: str | None = None) -> Figure:
    """Empirical CDF of completion time (hours from submission) per variant."""
    own = ax is None
    fig, ax = _figure(ax, (7.0, 4.0 + _legend_height(list(results))))
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
    _legend(ax, fig if own else None)
    return fig


def _mean(v: Sequence[float]) -> float:
    return sum(v) / len(v) if v else 0.0


def wait_vs_run(results: Mapping[str, Run], ax: Any = None, *,
                tenant: str | None = None) -> Figure:
    """Per variant, stacked: mean queue delay, start-up (readiness, retries, waiting
    for replacements) and run time of completed jobs, in hours; upright bars for up to
    ``MAX_UPRIGHT`` variants, one row each beyond."""
    names = list(results)
    fig, ax = _figure(ax, (7.0, 4.0) if len(names) <= MAX_UPRIGHT else (7.0, 1.5 + 0.22 * len(names)))
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
    under = [a + b for a, b in zip(wait, start)]
    parts = [(wait, None, "queue delay", "#d62728"), (start, wait, "start-up and retries", "#ff7f0e"),
             (run, under, "run time", "#1f77b4")]
    if len(names) <= MAX_UPRIGHT:
        for v, base, label, colour in parts:
            ax.bar(x, v, bottom=base, label=label, color=colour)
        _names_on_x(ax, x, names)
        ax.set_ylabel("mean per completed job (h)")
        ax.grid(True, axis="y", alpha=0.3)
    else:  # one row a variant: names side by side under bars would overlap
        for v, base, label, colour in parts:
            ax.barh(x, v, left=base, label=label, color=colour)
        ax.set_yticks(x, names, fontsize="small" if len(names) <= 30 else "x-small")
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlabel("mean per completed job (h)")
        ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("Queue delay vs run time" + (f" (tenant {tenant})" if tenant else ""))
    _legend(ax)
    return fig


def timeline(results: Mapping[str, Run], axes: Any = None) -> Figure:
    """Utilisation (share of GPUs held; dashed: running) and fragmented GPUs over time."""
    if axes is None:
        fig = _new_figure(figsize=(7.0, 5.5 + _legend_height(list(results))), dpi=100, layout="constrained")
        util, frag = fig.subplots(2, 1, sharex=True)
        own: Figure | None = fig
    else:
        own = None
        util, frag = axes
        fig = util.figure
    for name, r in results.items():
        t = [s["time"] / HOUR for s in r.timeline]
        gpus = r.summary["cluster_gpus"] or 1.0
        (line,) = util.step(t, [s["utilisation"] for s in r.timeline], where="post", label=name)
        util.step(t, [s["busy_gpus"] / gpus for s in r.timeline], where="post",
                  linestyle="--", color=line.get_color(), alpha=0.7)
        frag.step(t, [s["fragmented_gpus"] for s in r.timeline], where="post", label=name,
                  color=line.get_color())
    util.set_ylabel("GPUs held (share)")
    util.set_ylim(0, 1.05)
    util.set_title("Utilisation (solid: held, dashed: running)")
    util.grid(True, alpha=0.3)
    _legend(util, own)
    frag.set_ylim(bottom=0)
    frag.set_ylabel("fragmented GPUs")
    frag.set_xlabel("time (h)")
    frag.set_title("Fragmentation: free GPUs no waiting gang can use")
    frag.grid(True, alpha=0.3)
    return fig


#: The parts of the GPU-hours held, in stacking order: (summary field, label, colour).
GPU_HOURS = [
    ("gpu_hours_useful", "useful", "#2ca02c"),
    ("gpu_hours_wasted", "wasted (lost to restarts, failures)", "#d62728"),
    ("gpu_hours_before_progress", "held before progress (waiting for members, start-up)", "#ff7f0e"),
]


def gpu_hours(rows: Sequence[Mapping[str, Any]], ax: Any = None) -> Figure:
    """Per variant (summary rows), the GPU-hours held split into useful, wasted and
    held before progress (the rest held, idle, in grey), as horizontal bars: one a row,
    so a hundred variants stay legible."""
    n = len(rows)
    own = ax is None
    fig, ax = _figure(ax, (7.0, max(3.0, 1.5 + 0.22 * n)))
    names = [str(r["variant"]) for r in rows]
    y = list(range(n))
    left = [0.0] * n
    for key, label, colour in GPU_HOURS:
        v = [float(r.get(key) or 0.0) for r in rows]
        ax.barh(y, v, left=left, label=label, color=colour)
        left = [a + b for a, b in zip(left, v)]
    rest = [max(0.0, float(r.get("gpu_hours_held") or 0.0) - used) for r, used in zip(rows, left)]
    ax.barh(y, rest, left=left, label="held otherwise (idle)", color="#bbbbbb")
    ax.set_yticks(y, names, fontsize="small" if n <= 30 else "x-small")
    ax.set_ylim(n - 0.5, -0.5)  # first row on top, no blank rows around them
    ax.set_xlabel("GPU-hours")
    ax.set_title("GPU-hours held: useful, wasted, held before progress")
    ax.grid(True, axis="x", alpha=0.3)
    if own:
        # Above the plot, across it: beside it, the long labels would leave the bars a
        # fifth of the width (the variant names already take the left).
        fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=2, fontsize="small")
    else:
        _legend(ax)
    return fig


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def by_parameter(rows: Sequence[Mapping[str, Any]], params: Sequence[str],
                 metrics: Sequence[tuple[str, str, float]], ax: Any = None) -> Figure | None:
    """A sweep's metric-versus-parameter view: the first numeric parameter on x, one
    line per value of the first other parameter (the mean over the rest, e.g. seeds;
    each run a dot), one panel per metric (field, label, scale). None when no parameter
    is numeric."""
    xs = [p for p in params if all(_number(r.get(p)) for r in rows)]
    if not xs:
        return None
    x = xs[0]
    group = next((p for p in params if p != x), None)
    keys = list(dict.fromkeys(str(r.get(group)) if group else "" for r in rows))
    fig = _new_figure(figsize=(7.0, 2.6 * len(metrics) + _legend_height(keys)), dpi=100, layout="constrained")
    axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    for axis, (metric, label, scale) in zip(axes, metrics):
        for k in keys:
            mine = [r for r in rows if (str(r.get(group)) if group else "") == k and r.get(metric) is not None]
            if not mine:
                continue
            at = sorted({float(r[x]) for r in mine})
            mean = [_mean([float(r[metric]) * scale for r in mine if float(r[x]) == v]) for v in at]
            (line,) = axis.plot(at, mean, marker="o", label=k or metric)
            axis.scatter([float(r[x]) for r in mine], [float(r[metric]) * scale for r in mine],
                         s=8, alpha=0.4, color=line.get_color())
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
    axes[0].set_title(f"Metrics versus {x}" + (f", one line per {group}" if group else ""))
    axes[-1].set_xlabel(x)
    if group:
        _legend(axes[0], fig)
    return fig
