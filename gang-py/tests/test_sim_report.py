"""gang.sim's plots and HTML report, and the report opened in a real headless browser
(Debian's chromium, driven over the DevTools protocol by ``sim_browser.py``): its plots
are rendered, its table holds the variants, the console is clean, nothing external is
loaded."""

import base64
import io
import re
import sys

import pytest

import gang.sim

from conftest import HERE

pytest.importorskip("matplotlib")
import sim_browser  # noqa: E402

SIM = HERE.parent.parent / "examples" / "sim"


@pytest.fixture(scope="module")
def small():
    return gang.sim.experiment(SIM / "01-small-experiment.json")


def test_completion_cdf_one_step_line_per_variant(small):
    fig = gang.sim.plot_completion_cdf(small)
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.get_lines()] == list(small)
    # Each line ends at the share 1 at the last completion (hours).
    for name, line in zip(small, ax.get_lines()):
        last = max(j["completion"] for j in small[name].jobs) / 3600
        assert line.get_xdata()[-1] == pytest.approx(last) and line.get_ydata()[-1] == 1.0
    mine = gang.sim.plot_completion_cdf(small["unconstrained"], tenant="me")
    assert mine.axes[0].get_lines()[0].get_xdata()[-1] == pytest.approx(4020 / 3600)


def test_wait_vs_run_stacks_sum_to_mean_completion(small):
    fig = gang.sim.plot_wait_vs_run(small, tenant="me")
    (ax,) = fig.axes
    bars = [c for c in ax.containers]
    assert [b.get_label() for b in bars] == ["queue delay", "start-up and retries", "run time"]
    for i, name in enumerate(small):
        total = sum(b.patches[i].get_height() for b in bars)
        assert total == pytest.approx(small[name].job("experiment")["completion"] / 3600)
    # rack required: 3 hours in the queue.
    assert bars[0].patches[0].get_height() == pytest.approx(3.0)


def test_timeline_two_axes_and_given_axes(small):
    fig = gang.sim.plot_timeline(small)
    util, frag = fig.axes
    assert len(util.get_lines()) == 2 * len(small) and len(frag.get_lines()) == len(small)
    assert max(max(line.get_ydata()) for line in util.get_lines()) <= 1.0
    from matplotlib.figure import Figure
    mine = Figure()
    ax = mine.add_subplot()
    assert gang.sim.plot_completion_cdf(small, ax) is mine


def test_report_is_self_contained(small, tmp_path):
    page = gang.sim.report(small, tmp_path / "r.html", title="Small experiment")
    html = page.read_text()
    imgs = re.findall(r'<img src="data:image/png;base64,([^"]+)"', html)
    assert len(imgs) == 4 and all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in imgs)
    assert "<script" not in html and "<title>Small experiment</title>" in html
    # Nothing but data: URLs in any src or href.
    assert all(u.startswith("data:") for u in re.findall(r'(?:src|href)="([^"]*)"', html))
    for name in small:
        assert f'<td class="text">{name}</td>' in html
    assert small.description in html
    # A single result, a list, a dict work too.
    assert gang.sim.report(small["unconstrained"], tmp_path / "one.html").read_text().count("<img ") == 4
    assert gang.sim.report(list(small.values()), tmp_path / "list.html").exists()
    with pytest.raises(ValueError, match="no results"):
        gang.sim.report({}, tmp_path / "none.html")


def test_report_without_matplotlib_says_which_extra(small, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    import gang._report
    for mod in ("plots", "html"):  # as if never imported
        monkeypatch.delitem(sys.modules, f"gang._report.{mod}", raising=False)
        monkeypatch.delattr(gang._report, mod, raising=False)
    with pytest.raises(ImportError, match=r"gang\[sim\]"):
        gang.sim.report(small, tmp_path / "r.html")


# ------------------------------------------------------------- in a real browser


@pytest.fixture(scope="module")
def browser_page(small, tmp_path_factory):
    path = gang.sim.report(small, tmp_path_factory.mktemp("pysim-report") / "report.html")
    page = sim_browser.inspect(path)
    (path.parent / "screenshot.png").write_bytes(page.screenshot)
    return page


def test_browser_renders_every_plot(browser_page):
    imgs = browser_page.images
    assert [i["figure"] for i in imgs] == ["gpu-hours", "completion-cdf", "wait-vs-run", "timeline"]
    for i in imgs:
        assert i["complete"] and i["naturalWidth"] >= 600 and i["naturalHeight"] >= 300, i
    assert browser_page.screenshot.startswith(b"\x89PNG") and len(browser_page.screenshot) > 20_000


def test_browser_shows_the_summary_table_with_the_variants(browser_page, small):
    summary = [t for t in browser_page.tables if t["cls"] == "summary"]
    assert len(summary) == 1
    head, rows = summary[0]["head"], summary[0]["rows"]
    assert head[:3] == ["variant", "jobs", "completed"]
    assert [r[0] for r in rows] == list(small)
    assert all(r[2] == "5" for r in rows)  # every job completed, in every variant


def test_browser_console_is_clean_and_nothing_external_loads(browser_page):
    assert browser_page.errors() == []
    assert browser_page.scripts == 0
    assert browser_page.requests and all(u.startswith(("file:", "data:")) for u in browser_page.requests), [
        u[:60] for u in browser_page.requests]


def test_the_browser_check_catches_a_broken_page(tmp_path):
    """The same checks on a page with a broken image, a console error, an uncaught
    exception and an external load: each is caught (so the tests above can fail)."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><title>bad</title></head><body>"
                   '<figure id="broken"><img src="data:image/png;base64,bm90IGEgcG5n" alt="x"></figure>'
                   '<img src="http://127.0.0.1:9/external.png" alt="y">'
                   "<script>console.error('boom'); throw new Error('kaput');</script></body></html>")
    page = sim_browser.inspect(bad)
    assert [i["naturalWidth"] for i in page.images] == [0, 0]
    errors = "\n".join(page.errors())
    assert "console.error: boom" in errors and "kaput" in errors and "failed load" in errors
    assert any(u.startswith("http://127.0.0.1:9/") for u in page.requests)


# ------------------------------------- issue 26: a report that scales, in a browser


def many_runs(n):
    """n runs of a small sweep: loads × policies × seeds."""
    policies = ["required(rack)", "preferred(rack)", "unconstrained", "no-gang", "timed(rack, 600)"]
    out = []
    for i in range(n):
        load, p, s = (0.5, 0.7, 0.9, 1.1)[i % 4], policies[(i // 4) % 5], i // 20
        out.append({"cluster": gang.sim.generated_cluster(racks=1, nodes_per_rack=8), "policy": p, "seed": s,
                    "trace": gang.sim.generated_trace(30, seed=s, load=load, max_members=8),
                    "params": {"load": load, "policy": p, "seed": s}})
    return out


@pytest.fixture(scope="module")
def sweeps():
    return {"5": gang.sim.sweep(many_runs(5), keep="jobs"), "100": gang.sim.sweep(many_runs(100))}


@pytest.fixture(scope="module")
def sweep_reports(sweeps, tmp_path_factory):
    d = tmp_path_factory.mktemp("pysim-scaling")
    return {"5": sweeps["5"].report(d / "five.html"), "100": sweeps["100"].report(d / "hundred.html")}


def test_a_hundred_variants_make_a_small_report(sweep_reports):
    big = sweep_reports["100"].read_text()
    assert len(big.encode()) < 1_000_000, len(big.encode())
    # Summaries, the GPU-hours breakdown and the metric-versus-parameter view; no
    # job-by-job plots for a hundred variants (and only summaries were kept).
    figures = re.findall(r'<figure id="([^"]+)"', big)
    assert figures == ["gpu-hours", "by-parameter"]
    assert "Job-by-job plots and lists left out" in big
    five = sweep_reports["5"].read_text()
    assert re.findall(r'<figure id="([^"]+)"', five) == [
        "gpu-hours", "by-parameter", "completion-cdf", "wait-vs-run", "timeline"]


def test_the_gpu_hours_plot_stacks_to_what_was_held():
    sw = gang.sim.sweep(many_runs(3))
    from gang._report import plots
    rows = sw.summary_table()
    (ax,) = plots.gpu_hours(rows).axes
    assert [c.get_label() for c in ax.containers][:3] == [label for _, label, _ in plots.GPU_HOURS]
    for i, row in enumerate(rows):
        total = sum(c.patches[i].get_width() for c in ax.containers)
        assert total == pytest.approx(row["gpu_hours_held"])


@pytest.mark.parametrize("variants", ["5", "100"])
@pytest.mark.parametrize("width", [390, 1400])
def test_the_report_fits_narrow_and_wide_windows(sweep_reports, variants, width):
    page = sim_browser.inspect(sweep_reports[variants], width=width)
    lay = page.layout
    assert lay["innerWidth"] == width
    # Nothing makes the page itself scroll sideways: wide tables scroll in their box.
    assert lay["scrollWidth"] <= width, lay
    assert lay["tables"] and all(t["fits"] and t["right"] <= width for t in lay["tables"]), lay
    assert all(right <= width for right in lay["images"]), lay
    if width >= 1400:  # on a laptop, both summary tables whole: no column scrolled out of sight
        assert not any(t["scrolls"] for t in lay["tables"] if t["cls"] in ("summary", "gpu")), lay
    # Every column heading of both summary tables is in the glossary.
    heads = {h for t in page.tables if t["cls"] in ("summary", "gpu") for h in t["head"]}
    assert heads and heads <= set(page.glossary), heads - set(page.glossary)
    summary = [t for t in page.tables if t["cls"] == "summary"][0]
    assert len(summary["rows"]) == int(variants)
    assert page.errors() == [] and all(i["naturalWidth"] > 0 for i in page.images)


def test_the_report_shows_every_time_in_hours(small, tmp_path):
    """Issue 26 item 6, mixed units: a column headed in hours is defined in hours (the
    glossary said "(h)" above and "seconds" beside), and its cells are the hours."""
    import html as html_lib
    page = gang.sim.report(small, tmp_path / "r.html").read_text()
    terms = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page))
    timed = {t: m for t, m in terms.items() if t.endswith("(h)")}
    assert len(timed) >= 8, terms
    for term, meaning in timed.items():
        assert "second" not in meaning and "hour" in meaning, (term, meaning)
    assert not any("second" in m for m in terms.values()), terms
    table = page.split('<table class="summary">')[1].split("</table>")[0]
    heads = [html_lib.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    first = re.findall(r"<td[^>]*>(.*?)</td>", table.split("<tbody>")[1].split("</tr>")[0])
    row = small.summary_table()[0]  # seconds
    for column, head in [("completion_p50", "completion p50 (h)"), ("queue_delay_mean", "queue delay mean (h)"),
                         ("makespan", "makespan (h)")]:
        assert first[heads.index(head)] == f"{row[column] / 3600:.2f}", (head, first)


def test_counts_read_as_integers_and_shares_stay_on_one_line():
    from gang._report import html as report_html
    assert report_html._cell(2048.0, "int") == "2048" and report_html._cell(2.5, "int") == "2.5"
    assert report_html._cell(0.558, "pct") == "55.8\u00a0%"


def test_report_plots_leak_no_warnings(small, tmp_path, recwarn):
    gang.sim.report(small, tmp_path / "r.html")
    assert [str(w.message) for w in recwarn] == []


# ------------------------------------- issue 26 item 6: plots that stay legible


def drawn(fig):
    """``fig`` drawn on an Agg canvas, and its renderer (to measure what was drawn)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    return fig.canvas.get_renderer()


def test_legends_never_cover_a_plot_and_leave_it_room(sweeps):
    """Every legend sits beside or above the plots, inside the figure, and leaves each
    plot at least 45 % of the width (beside it, the GPU-hours legend's long labels left
    the bars a fifth)."""
    from gang._report import plots
    five, hundred = sweeps["5"], sweeps["100"]
    figures = {
        "gpu-hours 5": plots.gpu_hours(five.summary_table()),
        "gpu-hours 100": plots.gpu_hours(hundred.summary_table()),
        "cdf": gang.sim.plot_completion_cdf(five.comparison()),
        "wait-vs-run": gang.sim.plot_wait_vs_run(five.comparison()),
        "timeline": gang.sim.plot_timeline(five.comparison()),
        "sweep 100": gang.sim.plot_sweep(hundred),
    }
    for what, fig in figures.items():
        assert_legends_clear(fig, what)


def assert_legends_clear(fig, what):
    r = drawn(fig)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    assert legends, what
    for leg in legends:
        box = leg.get_window_extent(r)
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, (what, box)
        assert fig.bbox.y0 - 1 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, (what, box)
        assert not any(box.overlaps(ax.get_window_extent(r)) for ax in fig.axes), what
    for ax in fig.axes:
        assert ax.get_window_extent(r).width >= 0.45 * fig.bbox.width, (what, ax.get_window_extent(r))
        assert ax.get_window_extent(r).height >= 100, (what, ax.get_window_extent(r))


def test_plots_of_forty_variants_lay_out_without_warnings():
    """Issue 26 item 6, matplotlib warnings leaking: a user plotting a sweep's forty
    runs got "constrained_layout not applied because axes sizes collapsed to zero"
    twice per plot (a legend of forty names beside it, taller than the figure). The
    legend goes under the plot in columns; no warning, every legend inside the figure."""
    import warnings
    c = gang.sim.sweep(many_runs(40), keep="jobs").comparison()
    for plot in (gang.sim.plot_completion_cdf, gang.sim.plot_timeline, gang.sim.plot_wait_vs_run):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fig = plot(c)
            assert_legends_clear(fig, plot.__name__)
            fig.savefig(io.BytesIO(), format="png")


@pytest.mark.parametrize("variants", [3, 8, 20])
def test_variant_names_on_bars_never_overlap(variants):
    """The names of the variants under (or beside) the bars of wait_vs_run, and beside
    the GPU-hours rows: slanted names far enough apart that parallel lines of text do
    not touch (their distance, the gap between bars times the sine of the slant, at
    least the font's size); names one a row not overlapping at all."""
    import math
    from gang._report import plots
    sw = gang.sim.sweep(many_runs(variants), keep="jobs")
    for fig in (gang.sim.plot_wait_vs_run(sw.comparison()), plots.gpu_hours(sw.summary_table())):
        r = drawn(fig)
        (ax,) = fig.axes
        slanted = [t for t in ax.get_xticklabels() if t.get_text() in sw.names]
        rows = [t for t in ax.get_yticklabels() if t.get_text() in sw.names]
        assert len(slanted) + len(rows) == variants
        if slanted:
            xs = [ax.transData.transform((t.get_position()[0], 0))[0] for t in slanted]
            font = slanted[0].get_fontsize() * fig.dpi / 72
            angle = math.radians(slanted[0].get_rotation()) or math.pi / 2
            gap = min(b - a for a, b in zip(xs, xs[1:])) if len(xs) > 1 else math.inf
            if slanted[0].get_rotation() == 0:
                boxes = [t.get_window_extent(r) for t in slanted]
                assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:])), variants
            else:
                assert gap * math.sin(angle) >= font, (variants, gap, font)
        boxes = [t.get_window_extent(r) for t in rows]
        assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:])), variants
