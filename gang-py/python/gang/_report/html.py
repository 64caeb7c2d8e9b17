"""The self-contained HTML report of gang.sim: the summary table and the plots as inline
PNG images (``data:`` URLs). The page has no script and loads nothing else."""

from __future__ import annotations

import base64
import datetime
import html
import io
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _gang
from . import plots
from .plots import Run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Jobs listed per variant (a trace of more only shows the first ones).
MAX_JOBS = 200

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 75em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
figure { margin: 1em 0; } figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.muted { color: #666; font-size: 0.85em; }
"""

# (column, heading, how to show it): durations in hours.
_SUMMARY = [
    ("variant", "variant", "text"), ("jobs", "jobs", "int"), ("completed", "completed", "int"),
    ("failed", "failed", "int"), ("cancelled", "cancelled", "int"),
    ("never_fits", "never fits", "int"), ("unfinished", "unfinished", "int"),
    ("completion_mean", "completion mean (h)", "h"), ("completion_p50", "p50 (h)", "h"),
    ("completion_p95", "p95 (h)", "h"), ("completion_p99", "p99 (h)", "h"),
    ("queue_delay_mean", "queue delay mean (h)", "h"), ("queue_delay_p95", "queue p95 (h)", "h"),
    ("run_time_mean", "run time mean (h)", "h"), ("makespan", "makespan (h)", "h"),
    ("mean_utilisation", "utilisation", "pct"), ("mean_fragmented_gpus", "fragmented GPUs", "f"),
    ("gpu_hours_held", "GPU-h held", "f"), ("gpu_hours_wasted", "GPU-h wasted", "f"),
    ("gpu_hours_before_progress", "GPU-h before progress", "f"),
]

_JOBS = [
    ("id", "job", "text"), ("tenant", "tenant", "text"), ("policy", "policy", "text"),
    ("state", "state", "text"), ("queue_delay", "queue delay (s)", "s"),
    ("time_to_ready", "to ready (s)", "s"), ("run_time", "run time (s)", "s"),
    ("completion", "completion (s)", "s"), ("attempts", "attempts", "int"),
    ("level", "level", "text"), ("gpu_hours_held", "GPU-h held", "f"),
    ("reason", "reason", "text"),
]


def _cell(v: Any, how: str) -> str:
    """A cell's text (the table builder escapes it)."""
    if v is None:
        return "–"
    if how == "h":
        return f"{v / 3600.0:.2f}"
    if how == "s":
        return f"{v:.0f}"
    if how == "pct":
        return f"{100.0 * v:.1f} %"
    if how == "f":
        return f"{v:.2f}"
    return str(v)


def _table(rows: list[dict[str, Any]], cols: list[tuple[str, str, str]], cls: str) -> str:
    """The table of ``rows``, built by the extension's one HTML table builder (the
    one notebooks' ``_repr_html_`` uses): escaped, text columns left-aligned."""
    return _gang._html_table([h for _, h, _ in cols], [[_cell(r.get(c), how) for c, _, how in cols] for r in rows],
                             css_class=cls, column_classes=["text" if how == "text" else "num" for _, _, how in cols])


def _png(fig: Figure) -> tuple[str, int, int]:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    w, h = (int(round(x)) for x in fig.get_size_inches() * fig.dpi)
    return base64.b64encode(buf.getvalue()).decode("ascii"), w, h


def _figure(fig: Figure, alt: str, caption: str, css_id: str) -> str:
    data, w, h = _png(fig)
    return (f'<figure id="{css_id}"><img src="data:image/png;base64,{data}" width="{w}" height="{h}" '
            f'alt="{html.escape(alt)}"><figcaption>{html.escape(caption)}</figcaption></figure>')


def write(results: Mapping[str, Run], summary: list[dict[str, Any]], path: pathlib.Path, *,
          title: str | None, tenant: str | None, description: str) -> pathlib.Path:
    """Writes the report of ``results`` (and their ``summary`` rows, one per variant:
    ``gang.sim.Comparison.summary_table``) to ``path`` and returns it."""
    if not results:
        raise ValueError("gang.sim.report: no results to report")
    title = title or "gang.sim report"
    table = _table(summary, _SUMMARY, "summary")
    figs = [
        _figure(plots.completion_cdf(results, tenant=tenant), "completion-time CDF per variant",
                "Completion time from submission: the share of completed jobs done by each time.",
                "completion-cdf"),
        _figure(plots.wait_vs_run(results, tenant=tenant), "queue delay vs run time per variant",
                "Mean queue delay, start-up and run time of completed jobs: their sum is the mean "
                "completion time.", "wait-vs-run"),
        _figure(plots.timeline(results), "utilisation and fragmentation over time",
                "GPUs held and running over time, and free GPUs no waiting gang could use.",
                "timeline"),
    ]
    jobs = []
    for name, r in results.items():
        rows = [j for j in r.jobs if tenant is None or j["tenant"] == tenant]
        more = f' <span class="muted">(first {MAX_JOBS} of {len(rows)})</span>' if len(rows) > MAX_JOBS else ""
        jobs.append(f"<details><summary>{html.escape(name)}: {len(rows)} jobs{more}</summary>"
                    f"{_table(rows[:MAX_JOBS], _JOBS, 'jobs')}</details>")
    scope = f" (tenant {html.escape(tenant)})" if tenant else ""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
{f"<p>{html.escape(description)}</p>" if description else ""}
<h2>Summary{scope}</h2>
{table}
<p class="muted">Times from submission; percentiles nearest-rank; made by gang.sim (gang-sim) on {now}.</p>
<h2>Plots</h2>
{"".join(figs)}
<h2>Jobs{scope}</h2>
{"".join(jobs)}
</body>
</html>
"""
    path.write_text(page, encoding="utf-8")
    return path
