"""The self-contained HTML report of gang.sim: the summary table and the plots as inline
PNG images (``data:`` URLs). The page has no script and loads nothing else."""

from __future__ import annotations

import base64
import datetime
import html
import io
import json
import pathlib
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _gang
from . import plots
from .plots import Run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Jobs listed per variant (a trace of more only shows the first ones).
MAX_JOBS = 200
#: Variants drawn job by job (completion CDF, waits, timeline) and listed job by job;
#: more are shown by their summaries alone, so a report of a hundred stays small.
MAX_DETAILED = 8

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1em auto; padding: 0 1em; color: #222; max-width: 100em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
table.summary td.text:first-child, table.gpu td.text:first-child { position: sticky; left: 0; background: #fff; }
figure { margin: 1em 0; } figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.muted { color: #666; font-size: 0.85em; } .note { background: #fff8e1; padding: 0.5em; }
dl.glossary { display: grid; grid-template-columns: minmax(8em, max-content) 1fr; gap: 0.2em 1em; font-size: 0.85em; }
dl.glossary dt { font-weight: 600; } dl.glossary dd { margin: 0; }
"""

# (column, heading, how to show it): every duration in hours, every column in the glossary.
_OUTCOMES = [
    ("variant", "variant", "text"), ("jobs", "jobs", "int"), ("completed", "completed", "int"),
    ("failed", "failed", "int"), ("unfinished", "unfinished", "int"),
    ("never_fits", "never fits", "int"), ("cancelled", "cancelled", "int"),
    ("completion_p50", "completion p50 (h)", "h"), ("completion_p95", "p95 (h)", "h"),
    ("completion_p99", "p99 (h)", "h"), ("completion_mean", "mean (h)", "h"),
    ("queue_delay_mean", "queue delay mean (h)", "h"), ("queue_delay_p95", "queue p95 (h)", "h"),
    ("run_time_mean", "run time mean (h)", "h"), ("makespan", "makespan (h)", "h"),
]
_GPU = [
    ("variant", "variant", "text"), ("cluster_gpus", "cluster GPUs", "int"),
    ("mean_utilisation", "utilisation", "pct"), ("mean_busy", "busy", "pct"),
    ("utilisation_window", "utilisation over", "text"), ("mean_fragmented_gpus", "fragmented GPUs", "f"),
    ("gpu_hours_held", "GPU-h held", "f"), ("gpu_hours_useful", "GPU-h useful", "f"),
    ("gpu_hours_wasted", "GPU-h wasted", "f"),
    ("gpu_hours_before_progress", "GPU-h held before progress", "f"), ("goodput", "goodput", "pct"),
]
_SUMMARY = _OUTCOMES  # the first table's columns (kept for callers of the old name)

_JOBS = [
    ("id", "job", "text"), ("tenant", "tenant", "text"), ("policy", "policy", "text"),
    ("state", "state", "text"), ("queue_delay", "queue delay (h)", "h"),
    ("time_to_ready", "to ready (h)", "h"), ("run_time", "run time (h)", "h"),
    ("completion", "completion (h)", "h"), ("attempts", "attempts", "int"),
    ("span", "span", "text"), ("gpu_hours_held", "GPU-h held", "f"),
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
    if how == "int" and isinstance(v, float) and v.is_integer():
        return str(int(v))  # 2048 GPUs, not 2048.0
    if how == "pct":
        return f"{100.0 * v:.1f}\u00a0%"  # never broken across lines
    if how == "f":
        return f"{v:.2f}"
    if how == "g":
        return f"{v:g}"
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


def _scroll(table: str) -> str:
    return f'<div class="scroll">{table}</div>'


def _meaning(glossary: Mapping[str, str], column: str, how: str) -> str:
    """gang-sim's definition of ``column``, in the unit the report shows it in: the
    summary rows count time in seconds, the report's tables in hours."""
    m = glossary.get(column, "")
    return m[: -len(", seconds")] + ", hours" if how == "h" and m.endswith(", seconds") else m


def _glossary(glossary: Mapping[str, str], params: Sequence[str]) -> str:
    items = [(h, _meaning(glossary, c, how)) for c, h, how in _OUTCOMES + _GPU[1:]]
    items += [(p, "a swept parameter") for p in params]
    return ('<details open><summary>What the columns mean</summary><dl class="glossary">'
            + "".join(f"<dt>{html.escape(h)}</dt><dd>{html.escape(m)}</dd>" for h, m in items)
            + "</dl></details>")


def _slowdown(results: Mapping[str, Run]) -> str:
    """The slowdown tables in force (every run's, once when they agree)."""
    seen: dict[str, list[str]] = {}
    for name, r in results.items():
        s = r.summary
        key = repr((s.get("slowdown"), s.get("slowdown_spans"), s.get("default_sensitivity")))
        seen.setdefault(key, []).append(name)
    parts = []
    for names in seen.values():
        s = results[names[0]].summary
        tables, spans = s.get("slowdown") or {}, s.get("slowdown_spans") or []
        if not tables:
            continue
        short = [str(x).rsplit("/", 1)[-1] for x in spans]
        width = max(len(v) for v in tables.values())
        head = ["class"] + [short[i] if i < len(short) else f"span {i}" for i in range(width)]
        rows = [[c + (" (default)" if c == s.get("default_sensitivity") else "")]
                + [f"×{v[i]:g}" if i < len(v) else f"×{v[-1]:g}" for i in range(width)] for c, v in tables.items()]
        who = "" if len(seen) == 1 else f"<p class=\"muted\">{html.escape(', '.join(names[:6]))}{' …' if len(names) > 6 else ''}</p>"
        parts.append(who + _scroll(_gang._html_table(head, rows, css_class="slowdown",
                                                      column_classes=["text"] + ["num"] * width)))
    return "".join(parts)


def _identical(results: Mapping[str, Run]) -> str:
    """Which variants gave identical results, and why — computed by gang-sim from what
    they placed (``gang_sim::identical_runs``) — rather than one line drawn under
    another."""
    same = json.loads(_gang._sim_identical(json.dumps([[n, r.summary] for n, r in results.items()])))
    if not same:
        return ""
    lines = "".join(f"<li><strong>{html.escape(' = '.join(g['names']))}</strong>: {html.escape(g['reason'])}.</li>"
                    for g in same[:10])
    return ('<div class="note" id="identical"><p>These variants gave identical results (the same '
            'counts, statistics, GPU-hours and placement spans; their lines coincide in the '
            'plots):</p><ul>' + lines + '</ul></div>')


def _basis(summary: Sequence[Mapping[str, Any]]) -> str:
    basis = {row.get("completion_basis") for row in summary}
    missing = sum(int(row.get(k) or 0) for row in summary for k in ("failed", "unfinished", "never_fits"))
    if basis == {"completed"}:
        warn = (f" <strong>Survivor-only:</strong> {missing} jobs that did not complete are left out, "
                f"so a variant that fails its slow jobs looks fast.") if missing else ""
        return f'<p class="note">Completion statistics over completed jobs only.{warn}</p>'
    return ('<p class="muted">Completion statistics are <strong>censored</strong>: a job that failed, '
            'never fit or was unfinished counts with its time from submission to the end of the run '
            '(a lower bound of a completion it never reached), so failing jobs never makes a variant '
            'look fast; cancelled jobs are left out.</p>')


def write(results: Mapping[str, Run], summary: list[dict[str, Any]], path: pathlib.Path, *,
          title: str | None, tenant: str | None, description: str, params: Sequence[str] = (),
          glossary: Mapping[str, str] | None = None, jobs_kept: bool = True) -> pathlib.Path:
    """Writes the report of ``results`` (and their ``summary`` rows, one per variant,
    led by the swept ``params`` when a sweep: ``gang.sim.Comparison.summary_table``,
    ``gang.sim.Sweep.summary_table``) to ``path`` and returns it. Job-by-job plots and
    lists only for up to ``MAX_DETAILED`` variants whose jobs were kept."""
    if not results:
        raise ValueError("gang.sim.report: no results to report")
    title = title or "gang.sim report"
    lead = [(p, p, "text" if not all(isinstance(r.get(p), (int, float)) for r in summary) else "g")
            for p in params]
    outcomes = _scroll(_table(summary, [_OUTCOMES[0]] + lead + _OUTCOMES[1:], "summary"))
    gpu = _scroll(_table(summary, [_GPU[0]] + lead + _GPU[1:], "gpu"))
    detailed = jobs_kept and len(results) <= MAX_DETAILED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # matplotlib's layout warnings stay out of the caller's output
        figs = [_figure(plots.gpu_hours(summary), "GPU-hours held per variant, by use",
                        "GPU-hours held per variant: useful, wasted (lost to restarts and failures), "
                        "held before progress (waiting for members, starting up), and held otherwise.",
                        "gpu-hours")]
        if params:
            view = plots.by_parameter(summary, params, [
                ("completion_p95", "completion p95 (h)", 1 / plots.HOUR),
                ("queue_delay_mean", "queue delay mean (h)", 1 / plots.HOUR),
                ("goodput", "goodput", 1.0)])
            if view is not None:
                figs.append(_figure(view, "metrics versus the swept parameter",
                                    "Each metric against the swept parameter: lines the mean over "
                                    "the other parameters (seeds), dots each run.", "by-parameter"))
        if detailed:
            figs += [
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
    for name, r in (results.items() if detailed else []):
        rows = [j for j in r.jobs if tenant is None or j["tenant"] == tenant]
        more = f' <span class="muted">(first {MAX_JOBS} of {len(rows)})</span>' if len(rows) > MAX_JOBS else ""
        jobs.append(f"<details><summary>{html.escape(name)}: {len(rows)} jobs{more}</summary>"
                    f"{_scroll(_table(rows[:MAX_JOBS], _JOBS, 'jobs'))}</details>")
    if not detailed:
        why = ("only their summaries were kept" if not jobs_kept
               else f"more than {MAX_DETAILED} variants")
        jobs.append(f'<p class="muted">Job-by-job plots and lists left out: {why}.</p>')
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
{_basis(summary)}
{_identical(results)}
{outcomes}
<h2>GPUs and GPU-hours{scope}</h2>
{gpu}
{_glossary(glossary or {}, params)}
<p class="muted">Times from submission, in hours; percentiles nearest-rank; made by gang.sim (gang-sim) on {now}.</p>
<h2>Slowdown tables</h2>
<p class="muted">A job's run time is its ideal duration times its class's multiplier for the widest span of its placement: the answer depends on these.</p>
{_slowdown(results)}
<h2>Plots</h2>
{"".join(figs)}
<h2>Jobs{scope}</h2>
{"".join(jobs)}
</body>
</html>
"""
    path.write_text(page, encoding="utf-8")
    return path
