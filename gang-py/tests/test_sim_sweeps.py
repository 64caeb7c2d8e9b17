"""Issue 26: gang.sim answers "is the rack rule worth its wait?" without glue. Sweeps
come back as one table with the swept parameters as columns (names settled before
anything runs); completion statistics count failed and unfinished jobs (censored, the
basis named); load is a setting (offered_load, generators taking a target load,
nodes_per_rack, the generated cluster and trace visible); the slowdown tables are
shown and a sensitivity helper runs a comparison under each; sweeps ship back only
what is asked. Expected values are worked out by hand in the comments."""

import json
import sys

import pytest

import gang
import gang.sim

# One rack "a" of one 8-GPU node. Job "ok" (1 GPU, 600 s) completes at 600 s; job
# "bad" has a member that never becomes ready (readiness timeout 100 s, one attempt):
# it fails at 100 s; job "late" (8 GPUs, 3000 s) waits for "ok", runs 600..3600 s.
CLUSTER = {"topology": {"levels": ["rack"]}, "nodes": [
    {"name": "n1", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}}]}
JOBS = [{"id": "ok", "submit": 0, "duration": 600, "members": 1, "gpus": 1},
        {"id": "bad", "submit": 0, "duration": 600, "members": 1, "gpus": 1, "failing_members": 1},
        {"id": "late", "submit": 0, "duration": 3000, "members": 1, "gpus": 8}]
READINESS = {"init_time": 0, "timeout": 100, "max_attempts": 1}


def small_runs(keep_names=False):
    return [{"cluster": gang.sim.generated_cluster(racks=2), "policy": p, "seed": s,
             "trace": gang.sim.generated_trace(30, seed=s, max_members=16),
             "params": {"policy": p, "seed": s, "load_name": "low"},
             **({"name": f"{p}/{s}"} if keep_names else {})}
            for p in ("required(rack)", "unconstrained") for s in (1, 2)]


# ------------------------------------------------------------- 1. sweeps as tables


def test_a_sweep_is_one_table_with_the_params_as_columns():
    sw = gang.sim.sweep(small_runs())
    assert isinstance(sw, gang.sim.Sweep) and len(sw) == 4
    assert sw.param_columns == ("policy", "seed", "load_name")
    rows = sw.summary_table()
    assert [(r["policy"], r["seed"]) for r in rows] == [
        ("required(rack)", 1), ("required(rack)", 2), ("unconstrained", 1), ("unconstrained", 2)]
    assert list(rows[0]) == ["policy", "seed", "load_name", *gang.sim.SUMMARY_COLUMNS]
    # Each row's summary is its run's own.
    for r, row in zip(sw, rows):
        assert row["variant"] == r.name and row["jobs"] == 30
        assert row["completed"] == r.summary["all"]["states"].get("completed", 0)
    pd = pytest.importorskip("pandas")
    df = sw.to_pandas()
    assert list(df.columns[:3]) == ["policy", "seed", "load_name"] and len(df) == 4
    assert df.groupby("policy")["jobs"].sum().to_dict() == {"required(rack)": 60, "unconstrained": 60}
    pl = pytest.importorskip("polars")
    assert sw.to_polars().filter(pl.col("seed") == 2).height == 2
    assert isinstance(df, pd.DataFrame)


def test_names_are_unique_and_settled_before_anything_runs(monkeypatch):
    sw = gang.sim.sweep(small_runs())
    # Named by policy and params (policy not repeated).
    assert sw.names[0] == "required(rack) seed=1 load_name=low" and len(set(sw.names)) == 4
    # Without params: numbered.
    plain = [{k: v for k, v in r.items() if k != "params"} for r in small_runs()[:2]]
    assert gang.sim.sweep(plain).names == ["required(rack)", "required(rack) #2"]
    # A name given twice fails before a single run starts.
    ran = []
    monkeypatch.setattr(gang._sim.sweeps, "_run_many", lambda *a, **k: ran.append(a) or [])
    twice = small_runs(keep_names=True)
    twice[1]["name"] = twice[0]["name"]
    with pytest.raises(ValueError, match="named twice"):
        gang.sim.sweep(twice)
    # A param that would hide a summary column, too.
    hiding = small_runs()
    hiding[0]["params"] = {"jobs": 5}
    with pytest.raises(ValueError, match="jobs"):
        gang.sim.sweep(hiding)
    assert ran == []


def test_the_jobs_table_carries_the_params_when_jobs_are_kept():
    sw = gang.sim.sweep(small_runs(), keep="jobs")
    pytest.importorskip("pandas")
    jobs = sw.to_pandas("jobs")
    assert len(jobs) == 4 * 30
    # "policy" is also a job record's field: the param is named param_policy.
    assert list(jobs.columns[:4]) == ["variant", "param_policy", "seed", "load_name"]
    assert set(jobs["param_policy"]) == {"required(rack)", "unconstrained"}
    summary_only = gang.sim.sweep(small_runs()[:1])
    with pytest.raises(ValueError, match="keep='jobs'"):
        summary_only[0].jobs
    with pytest.raises(ValueError, match="keep='jobs'"):
        summary_only.to_pandas("jobs")
    with pytest.raises(ValueError, match="keep"):
        gang.sim.sweep(small_runs()[:1], keep="everything")


def test_summary_only_results_are_small_and_equal_in_summary():
    full = gang.sim.sweep(small_runs()[:1], keep="jobs")[0]
    small = gang.sim.sweep(small_runs()[:1])[0]
    assert small.summary == full.summary and small.kept == "summary" and full.kept == "jobs"
    assert len(small.to_json()) * 3 < len(full.to_json())


# ---------------------------------------------------- 2. honest completion statistics


def test_failed_jobs_are_censored_by_default_and_the_basis_is_named():
    r = gang.sim.simulate(CLUSTER, JOBS, readiness=READINESS)
    row = r.summary_row()
    assert (row["completed"], row["failed"], row["unfinished"]) == (2, 1, 0)
    assert row["completion_basis"] == "censored"
    # 600, 3600 (completed) and 3600 (failed, censored at the end of the run).
    assert (row["completion_p50"], row["completion_mean"]) == (3600.0, 2600.0)
    survivors = r.summary_row(completion="completed")
    assert survivors["completion_basis"] == "completed"
    assert (survivors["completion_p50"], survivors["completion_mean"]) == (600.0, 2100.0)
    with pytest.raises(gang.InvalidScenario) as e:
        r.summary_row(completion="optimistic")
    assert e.value.field == "completion"
    with pytest.raises(gang.InvalidScenario) as e:
        r.summary_row(tenant="nobody")
    assert e.value.field == "tenant"


def test_goodput_is_useful_over_held():
    row = gang.sim.simulate(CLUSTER, JOBS, readiness=READINESS).summary_row()
    # Useful 1×600 + 8×3000 GPU-s; held 100 GPU-s more by the failed job.
    assert row["gpu_hours_useful"] == pytest.approx(24_600 / 3600)
    assert row["gpu_hours_held"] == pytest.approx(24_700 / 3600)
    assert row["goodput"] == pytest.approx(24_600 / 24_700)


def test_a_survivor_only_report_says_so(tmp_path):
    c = gang.sim.compare(CLUSTER, JOBS, ["unconstrained"], readiness=READINESS)
    censored = gang.sim.report(c, tmp_path / "c.html").read_text()
    survivors = gang.sim.report(c, tmp_path / "s.html", completion="completed").read_text()
    assert "censored" in censored and "Survivor-only" not in censored
    assert "Survivor-only" in survivors and "1 jobs that did not complete" in survivors


# ------------------------------------------------------------- 3. load as a setting


def test_offered_load_by_hand_and_generated_at_a_target_load():
    # 16 GPUs. Jobs half an hour apart: window 1 h × 3/2. Demand 2×4×1 + 8×0.5 + 1×2 = 14 GPU-h.
    cluster = {"topology": {"levels": ["rack"]}, "nodes": [
        {"name": f"n{i}", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}} for i in (1, 2)]}
    jobs = [{"id": "a", "submit": 0, "duration": 3600, "members": 2, "gpus": 4},
            {"id": "b", "submit": 1800, "duration": 1800, "members": 1, "gpus": 8},
            {"id": "c", "submit": 3600, "duration": 7200, "members": 1, "gpus": 1}]
    assert gang.sim.offered_load(jobs, cluster) == pytest.approx(14 / 24)
    big = gang.sim.generated_cluster(racks=2)
    for target in (0.4, 0.9):
        trace = gang.sim.generated_trace(300, seed=2, load=target)
        assert gang.sim.offered_load(trace, big) == pytest.approx(target, abs=1e-4)
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.offered_load(jobs[:1], cluster)
    assert e.value.field == "trace"
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.simulate(big, gang.sim.generated_trace(10, load=0))
    assert e.value.field == "trace.generate.load"


def test_per_hour_is_the_poisson_rate():
    assert gang.sim.generated_trace(5, per_hour=30)["generate"]["arrival"] == {"poisson": {"per_hour": 30}}
    jobs = gang.sim.trace_jobs(gang.sim.generated_trace(2000, seed=1, per_hour=120))
    hours = jobs[-1]["submit"] / 3600
    assert 2000 / hours == pytest.approx(120, rel=0.1)


def test_the_generated_cluster_and_trace_can_be_seen():
    inv = gang.sim.cluster_inventory(gang.sim.generated_cluster(racks=3, nodes_per_rack=5))
    assert isinstance(inv, gang.Inventory) and len(inv) == 15
    assert inv.levels == ["topology.example.com/zone", "topology.example.com/block", "topology.example.com/rack"]
    assert len(inv.domains("topology.example.com/rack")) == 3
    blocks = gang.sim.cluster_inventory(gang.sim.generated_cluster(racks=4, nodes_per_rack=2, racks_per_block=2))
    assert len(blocks.domains("topology.example.com/block")) == 2
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.cluster_inventory(gang.sim.generated_cluster(nodes_per_rack=0))
    assert e.value.field == "cluster.generate.nodes_per_rack"
    jobs = gang.sim.trace_jobs(gang.sim.generated_trace(50, seed=4, max_members=8, member_gpus=8))
    assert len(jobs) == 50 and all(list(j) == list(gang.sim.TRACE_COLUMNS) for j in jobs)
    for j in jobs:  # gpus is the whole job's
        assert j["gpus_total"] == j["members"] * j["gpus_per_member"]
        assert j["gpu_hours"] == pytest.approx(j["gpus_total"] * j["duration"] / 3600)
    with pytest.raises(ValueError, match="needs the cluster"):
        gang.sim.trace_jobs(gang.sim.generated_trace(10, load=0.5))
    loaded = gang.sim.trace_jobs(gang.sim.generated_trace(10, load=0.5), gang.sim.generated_cluster(racks=1))
    assert len(loaded) == 10


def test_the_generated_cluster_and_trace_as_dataframes():
    """Item 3: the generated cluster and trace as tables, the way the docstrings of
    cluster_inventory and trace_jobs say (the first said gang.to_pandas(inv.nodes()),
    which raised: nodes is a list, and to_pandas takes placement results)."""
    pd = pytest.importorskip("pandas")
    cluster = gang.sim.generated_cluster(racks=2, nodes_per_rack=4)
    inv = gang.sim.cluster_inventory(cluster)
    nodes = pd.json_normalize([n.to_dict() for n in inv.nodes])
    assert "pandas.json_normalize([n.to_dict() for n in inv.nodes])" in gang.sim.cluster_inventory.__doc__
    assert len(nodes) == 8 and nodes["capacity.nvidia.com/gpu"].sum() == 64
    assert nodes.groupby("labels.topology.example.com/rack").size().to_dict() == {"r00": 4, "r01": 4}
    jobs = pd.DataFrame(gang.sim.trace_jobs(gang.sim.generated_trace(40, seed=1, load=0.5), cluster))
    assert list(jobs.columns) == list(gang.sim.TRACE_COLUMNS) and len(jobs) == 40
    assert (jobs["gpus_total"] == jobs["members"] * jobs["gpus_per_member"]).all()


def test_unfinished_and_never_fitting_jobs_are_censored_too():
    # Item 2: "ok" completes at 600 s; "long" (10,000 s) is unfinished at the horizon
    # (3600 s); "huge" (two members of 8 GPUs, one 8-GPU node) never fits. Censored:
    # 600, 3600, 3600: median 3600, mean 2600; survivors: 600.
    jobs = [{"id": "ok", "submit": 0, "duration": 600, "members": 1, "gpus": 1},
            {"id": "long", "submit": 0, "duration": 10_000, "members": 1, "gpus": 1},
            {"id": "huge", "submit": 0, "duration": 600, "members": 2, "gpus": 8}]
    r = gang.sim.simulate(CLUSTER, jobs, readiness={"init_time": 0}, horizon=3600)
    row = r.summary_row()
    assert (row["completed"], row["unfinished"], row["never_fits"]) == (1, 1, 1)
    assert (row["completion_p50"], row["completion_mean"], row["completion_basis"]) == (3600.0, 2600.0, "censored")
    survivors = r.summary_row(completion="completed")
    assert (survivors["completion_p50"], survivors["completion_basis"]) == (600.0, "completed")


# -------------------------------------------------------------- 4. slowdown tables


def test_every_summary_shows_its_slowdown_tables(tmp_path):
    r = gang.sim.simulate(CLUSTER, JOBS, slowdown={"medium": [1.0, 9.0]})
    assert r.summary["slowdown"]["medium"] == [1.0, 9.0]
    assert r.summary["slowdown"]["low"] == gang.sim.SLOWDOWN_TABLES["low"]
    assert r.summary["slowdown_spans"] == ["node", "rack", "cluster"]
    # And every report, the default class marked.
    page = r.report(tmp_path / "r.html").read_text()
    table = page.split('<table class="slowdown">')[1].split("</table>")[0]
    assert "medium (default)" in table and "×9" in table and "<th" in table and ">rack<" in table


def test_compare_refuses_a_name_twice_before_anything_runs(monkeypatch):
    # Item 1: Comparison said "two results named 'unconstrained'" after every run.
    ran = []
    monkeypatch.setattr(gang._sim.running, "_run_many", lambda *a, **k: ran.append(a) or [])
    with pytest.raises(ValueError, match="named twice"):
        gang.sim.compare(CLUSTER, JOBS, ["unconstrained", "required(rack)", "unconstrained"])
    assert ran == []


def test_sensitivity_runs_the_comparison_under_each_table():
    # One 40-member job of 8 GPUs, 32 8-GPU nodes a rack: it takes two racks of one
    # block, so its run time is its duration times the table's block column (index 2:
    # node, rack, block): low 1.10, medium 1.8, high 3.5.
    trace = [{"id": "j", "submit": 0, "duration": 1000, "members": 40, "gpus": 8}]
    sw = gang.sim.sensitivity(gang.sim.generated_cluster(racks=2), trace, ["unconstrained"],
                              readiness={"init_time": 0})
    rows = {r["slowdown"]: r for r in sw.summary_table()}
    assert set(rows) == set(gang.sim.SLOWDOWN_TABLES)
    for name, table in gang.sim.SLOWDOWN_TABLES.items():
        assert rows[name]["run_time_mean"] == pytest.approx(1000 * table[2])
        assert rows[name]["policy"] == "unconstrained"
    mine = gang.sim.sensitivity(gang.sim.generated_cluster(racks=2), trace, ["unconstrained"],
                                tables={"flat": [1.0]}, readiness={"init_time": 0})
    assert mine.summary_table()[0]["run_time_mean"] == 1000.0


def test_identical_variants_are_named_in_the_report(tmp_path):
    trace = [{"id": "j", "submit": 0, "duration": 600, "members": 2, "gpus": 8}]
    c = gang.sim.compare(gang.sim.generated_cluster(racks=2), trace, ["preferred(rack)", "unconstrained"])
    html = gang.sim.report(c, tmp_path / "r.html").read_text()
    assert "identical results" in html and "preferred(rack) = unconstrained" in html
    # Why, computed from what they placed (gang-sim's identical_runs), not a generic note:
    # the one job took two nodes of one rack under both.
    assert "1 within one rack (topology.example.com/rack)" in html, html
    assert "no job needed more than one rack" in html
    # Three policies, one job on a node and one across two racks: the rule at rack
    # level binds (required waits or never fits), so only preferred = unconstrained.
    mixed = [{"id": "n", "submit": 0, "duration": 600, "members": 1, "gpus": 8},
             {"id": "w", "submit": 0, "duration": 600, "members": 40, "gpus": 8}]
    c3 = gang.sim.compare(gang.sim.generated_cluster(racks=2), mixed,
                          ["required(rack)", "preferred(rack)", "unconstrained"])
    same = json.loads(gang._gang._sim_identical(json.dumps([[n, r.summary] for n, r in c3.items()])))
    assert [g["names"] for g in same] == [["preferred(rack)", "unconstrained"]]
    assert "1 on one node" in same[0]["reason"] and "1 within one block" in same[0]["reason"], same
    big = [{"id": "j", "submit": 0, "duration": 600, "members": 40, "gpus": 8}]  # more than a rack
    differ = gang.sim.compare(gang.sim.generated_cluster(racks=2), big, ["required(rack)", "unconstrained"])
    assert "identical results" not in gang.sim.report(differ, tmp_path / "d.html").read_text()


def test_utilisation_leaves_the_drain_tail_out_and_names_its_window(tmp_path):
    # Item 6: one 8-GPU node; a (8 GPUs) runs 0..3600, b (4 GPUs, submitted at 1800)
    # waits and runs 3600..7200: over the makespan 0.75, over the arrivals (0..1800) 1.0.
    node = {"topology": {"levels": ["rack"]}, "nodes": [
        {"name": "n1", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}}]}
    jobs = [{"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 8},
            {"id": "b", "submit": 1800, "duration": 3600, "members": 1, "gpus": 4}]
    r = gang.sim.simulate(node, jobs, readiness={"init_time": 0})
    assert r.summary["mean_utilisation"] == 1.0
    assert r.summary["utilisation_window"] == {"over": "arrivals", "start": 0.0, "end": 1800.0}
    row = r.summary_row()
    assert (row["utilisation_window"], row["cluster_gpus"]) == ("arrivals", 8.0)
    assert "drain tail" in gang.sim.GLOSSARY["utilisation_window"]
    html = r.report(tmp_path / "u.html").read_text()
    assert "utilisation over" in html and "arrivals" in html and "drain tail" in html


# ----------------------------------------------------------------------- 7. smaller


def test_output_names_say_what_they_count():
    # Item 7: input gpus is per member; no output column is called gpus any more (a
    # job's is gpus_total, the cluster's cluster_gpus), and span (node, a level key or
    # cluster: the slowdown table's columns) is not called level (which is a label key
    # everywhere else in gang).
    for cols in (gang.sim.JOB_COLUMNS, gang.sim.TRACE_COLUMNS, gang.sim.SUMMARY_COLUMNS):
        assert "gpus" not in cols and "level" not in cols, cols
    assert {"gpus_total", "span"} <= set(gang.sim.JOB_COLUMNS)
    assert {"gpus_total", "gpus_per_member"} <= set(gang.sim.TRACE_COLUMNS)
    r = gang.sim.simulate(gang.sim.generated_cluster(racks=1),
                          [{"id": "j", "submit": 0, "duration": 60, "members": 2, "gpus": 4}])
    j = r.job("j")
    assert (j["gpus_total"], j["span"]) == (8.0, "node")  # 2 members x 4 GPUs on one 8-GPU node
    assert j["span"] in r.summary["slowdown_spans"] and r.summary["cluster_gpus"] == 32 * 8


def test_comparison_repr_stays_short():
    c = gang.sim.Comparison({f"v{i}": None for i in range(100)})  # type: ignore[misc]
    assert repr(c) == "Comparison(['v0', 'v1', 'v2', 'v3', … (100 variants)])"


def test_progress_is_on_in_a_notebook(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    import sys
    import types

    class Shell:
        kernel = object()
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: Shell()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert gang.sim._progress_on(None)
    Shell.kernel = None
    assert not gang.sim._progress_on(None)  # an IPython terminal, stderr not a tty


def test_the_bar_is_tqdm_autos_a_widget_in_a_notebook(monkeypatch):
    """Item 7: the bar is ``tqdm.auto``'s (a widget in Jupyter, text on a terminal)."""
    auto = pytest.importorskip("tqdm.auto")
    made = []

    class Recorder(auto.tqdm):
        def __init__(self, *a, **k):
            made.append(k.get("desc"))
            super().__init__(*a, **{**k, "disable": True})
    monkeypatch.setattr(auto, "tqdm", Recorder)
    gang.sim.sweep(small_runs()[:2], progress=True)
    gang.sim.simulate(CLUSTER, JOBS, progress=True)
    assert made == ["gang.sim sweep", "gang.sim"]


# ------------------------------------------------------- issue 25 item 15: errors


def test_a_failing_variant_is_named_and_the_others_results_kept():
    runs = small_runs(keep_names=True)
    runs[1]["trace"] = [{"id": "x", "submit": 0, "duration": -1, "members": 1}]
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.sweep(runs)
    assert e.value.variant == "required(rack)/2" and e.value.failed == ["required(rack)/2"]
    assert e.value.results.names == ["required(rack)/1", "unconstrained/1", "unconstrained/2"]
    assert [p["seed"] for p in e.value.results.params] == [1, 1, 2]
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as pool, pytest.raises(gang.InvalidScenario) as e:
        gang.sim.compare(CLUSTER, JOBS, {"good": "unconstrained", "bad": "required(nowhere)"}, executor=pool)
    assert e.value.variant == "bad" and list(e.value.results) == ["good"]


def test_numpy_arrays_and_circular_dicts_in_a_configuration():
    np = pytest.importorskip("numpy")
    r = gang.sim.simulate(CLUSTER, JOBS, slowdown={"medium": np.array([1.0, 2.0])})
    assert r.summary["slowdown"]["medium"] == [1.0, 2.0]
    loop: dict = {"init_time": 0}
    loop["self"] = loop
    with pytest.raises(ValueError, match="inside itself") as e:
        gang.sim.simulate(CLUSTER, JOBS, readiness=loop)
    assert "NaN" not in str(e.value)


def test_the_report_modules_import_without_matplotlib():
    """stubtest imports every module of the package; matplotlib is an optional extra."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.figure'] = None; "
            "import gang._report.plots, gang._report.html, gang.sim; print('ok')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.stdout.strip() == "ok", p.stderr


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    sacct = tmp_path / "excel.csv"
    sacct.write_text(
        "\ufeffjob_id,user,node_num,gpu_num,cpu_num,state,submit_time,start_time,end_time,duration,queue\n"
        "1,u1,1,8,16,COMPLETED,2020-01-01 00:00:00,2020-01-01 00:00:10,2020-01-01 01:00:10,3600,vc1\n",
        encoding="utf-8")
    r = gang.sim.simulate(gang.sim.generated_cluster(racks=1), sacct, trace_format="sacct")
    assert [j["id"] for j in r.jobs] == ["1"]
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_text('\ufeff{"id": "a", "submit": 0, "duration": 60, "members": 1}\n', encoding="utf-8")
    assert gang.sim.simulate(gang.sim.generated_cluster(racks=1), jsonl).jobs[0]["id"] == "a"


def test_a_worker_packs_jobs_as_arrow_and_falls_back_to_json_without_pyarrow(monkeypatch):
    # Issue 26 item 5: the payload a worker ships back. With pyarrow: the jobs and the
    # timeline as compressed Arrow, much smaller than the JSON and read back equal.
    # Without it (an optional extra): the JSON text, and the same result.
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    from gang._sim import documents, results, running
    pytest.importorskip("pyarrow")
    doc = documents._json(gang.sim.run_document(
        gang.sim.generated_cluster(racks=2), gang.sim.generated_trace(300, seed=1, max_members=16)))
    text = running._run_text(doc)
    packed = running._run_shipped(doc)
    assert isinstance(packed, results.Packed)
    assert len(pickle.dumps(packed)) * 3 < len(pickle.dumps(text)), (len(pickle.dumps(packed)), len(text))
    plain = gang.sim.SimResult(text, {}, "x")
    assert gang.sim.SimResult(packed, {}, "x") == plain
    with ProcessPoolExecutor(2) as pool:
        far = gang.sim.sweep([{"cluster": gang.sim.generated_cluster(racks=1), "seed": s,
                               "trace": gang.sim.generated_trace(30, seed=s, max_members=8)} for s in (1, 2)],
                              pool, keep="jobs")
    near = gang.sim.sweep([{"cluster": gang.sim.generated_cluster(racks=1), "seed": s,
                            "trace": gang.sim.generated_trace(30, seed=s, max_members=8)} for s in (1, 2)],
                          keep="jobs")
    assert far == near and far[0].to_pandas().shape == near[0].to_pandas().shape
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # not installed
    fallback = running._run_shipped(doc)
    assert isinstance(fallback, str) and gang.sim.SimResult(fallback, {}, "x") == plain
