"""gang.sim: inputs in every form, results, tables, errors, compare, sweep, progress,
experiments (the guides' questions, answered by examples/sim/ as gang-sim's own
tests answer them)."""

import concurrent.futures
import io
import json
import pickle
import sys

import pytest

import gang
import gang.sim

from conftest import HERE

SIM = HERE.parent.parent / "examples" / "sim"
RACK = "topology.example.com/rack"


def two_racks(gpus=4):
    return {"topology": {"levels": [RACK]}, "nodes": [
        {"name": n, "labels": {RACK: r}, "capacity": {"nvidia.com/gpu": gpus}}
        for n, r in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]]}


JOBS = [{"id": "big", "submit": 0, "duration": 3600, "members": 8, "gpus": 1},
        {"id": "small", "submit": 10, "duration": 600, "members": 2, "gpus": 2, "sensitivity": "low"}]


def times(result):
    return [(j["id"], j["state"], j["queue_delay"], j["completion"], j["span"]) for j in result.jobs]


# ------------------------------------------------------------------------- inputs


def test_cluster_as_dict_path_scenario_generator_and_inventory(tmp_path):
    want = times(gang.sim.simulate(two_racks(), JOBS, "required(rack)"))
    assert want == [("big", "completed", 0.0, 5460.0, RACK), ("small", "completed", 0.0, 660.0, "node")]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(two_racks()))
    assert times(gang.sim.simulate(path, JOBS, "required(rack)")) == want
    assert times(gang.sim.simulate(str(path), JOBS, "required(rack)")) == want
    assert times(gang.sim.simulate({"file": str(path)}, JOBS, "required(rack)")) == want
    # A scenario file's cluster (its gang is not used).
    scenario = dict(two_racks(), gang={"name": "g", "roles": [{"name": "w", "count": 1}]})
    assert times(gang.sim.simulate(scenario, JOBS, "required(rack)")) == want
    assert times(gang.sim.simulate(gang.Inventory.from_dict(two_racks()), JOBS, "required(rack)")) == want
    gen = gang.sim.simulate(gang.sim.generated_cluster("hgx", 2), JOBS, "required(rack)")
    assert gen.job("big")["span"] == "node" and gen.summary["cluster_gpus"] == 2 * 32 * 8


def test_an_inventory_starts_from_its_free_capacity_now():
    inv = gang.Inventory.from_dict(two_racks())
    inv.reserve(inv.place(gang.Gang("held", [gang.Role("w", 2, requests={"nvidia.com/gpu": 4})], required=RACK)))
    # Rack a is held: big (8 GPUs in one rack) takes rack b, small waits for nothing else.
    r = gang.sim.simulate(inv, JOBS, "required(rack)")
    assert r.summary["cluster_gpus"] == 8 and r.job("big")["queue_delay"] == 0.0  # GPUs free at the start
    assert r.job("small")["queue_delay"] == 5450.0  # until big ends at 5460: nothing else is free
    assert len(inv.reservations) == 1  # the inventory itself is untouched


def test_trace_as_path_jsonl_csv_text_generator_and_dataframe(tmp_path):
    want = times(gang.sim.simulate(two_racks(), JOBS))
    jl = tmp_path / "t.jsonl"
    jl.write_text("# a comment\n" + "\n".join(json.dumps(j) for j in JOBS) + "\n")
    assert times(gang.sim.simulate(two_racks(), jl)) == want
    csv = tmp_path / "t.csv"
    csv.write_text("id,submit,duration,members,gpus,sensitivity\nbig,0,3600,8,1,\nsmall,10,600,2,2,low\n")
    assert times(gang.sim.simulate(two_racks(), csv)) == want
    assert times(gang.sim.simulate(two_racks(), {"csv": csv.read_text()})) == want
    assert times(gang.sim.simulate(two_racks(), {"jsonl": jl.read_text()})) == want
    assert times(gang.sim.simulate(two_racks(), {"inline": JOBS})) == want
    assert times(gang.sim.simulate(two_racks(), tuple(JOBS))) == want
    pd = pytest.importorskip("pandas")
    assert times(gang.sim.simulate(two_racks(), pd.DataFrame(JOBS))) == want  # NaN cells left out
    pl = pytest.importorskip("polars")
    assert times(gang.sim.simulate(two_racks(), pl.DataFrame(JOBS))) == want  # null cells left out
    g = gang.sim.simulate(two_racks(), gang.sim.generated_trace(30, seed=2, max_members=4, member_gpus=1))
    assert g.summary["all"]["jobs"] == 30


def test_sacct_trace_by_format(tmp_path):
    sacct = tmp_path / "helios.csv"
    sacct.write_text(
        "job_id,user,node_num,gpu_num,cpu_num,state,submit_time,start_time,end_time,duration,queue\n"
        "1,u1,2,8,16,COMPLETED,2020-01-01 00:00:00,2020-01-01 00:00:10,2020-01-01 01:00:10,3600,vc1\n"
        "2,u2,1,2,4,COMPLETED,2020-01-01 00:10:00,2020-01-01 00:10:00,2020-01-01 00:20:00,600,vc2\n")
    r = gang.sim.simulate(two_racks(), sacct, trace_format="sacct")
    assert [(j["id"], j["members"], j["gpus_total"], j["tenant"]) for j in r.jobs] == [
        ("1", 2, 8.0, "vc1"), ("2", 1, 2.0, "vc2")]
    with pytest.raises(ValueError, match="trace_format"):
        gang.sim.simulate(two_racks(), sacct, trace_format="slurm")


def test_config_keywords_reach_gang_sim():
    r = gang.sim.simulate(two_racks(), JOBS, readiness={"init_time": 0}, horizon=1000)
    assert r.job("big")["state"] == "unfinished" and r.job("small")["all_ready"] == 10.0
    assert r.document["config"] == {"readiness": {"init_time": 0}, "horizon": 1000, "seed": 0}


def test_same_seed_same_result_other_seed_other_result():
    trace = gang.sim.generated_trace(60, seed=5, max_members=8, member_gpus=1)
    cfg = dict(readiness={"init_failure": 0.05})
    a = gang.sim.simulate(gang.sim.generated_cluster(racks=1), trace, seed=1, **cfg)
    b = gang.sim.simulate(gang.sim.generated_cluster(racks=1), trace, seed=1, **cfg)
    c = gang.sim.simulate(gang.sim.generated_cluster(racks=1), trace, seed=2, **cfg)
    assert a == b and a.to_json() == b.to_json()
    assert a.jobs != c.jobs


# ------------------------------------------------------------------------ results


def test_result_fields_tables_and_pickling():
    r = gang.sim.simulate(two_racks(), JOBS, "required(rack)", name="rack")
    assert r.name == "rack" and repr(r).startswith("SimResult('rack', jobs=2, completed=2")
    assert list(r.jobs[0]) == list(gang.sim.JOB_COLUMNS)
    assert list(r.timeline[0]) == list(gang.sim.TIMELINE_COLUMNS)
    assert r.summary["by_policy"]["required(rack)"]["jobs"] == 2
    with pytest.raises(KeyError):
        r.job("nope")
    assert pickle.loads(pickle.dumps(r)) == r
    assert json.loads(r.to_json())["jobs"] == r.jobs


def test_to_pandas_polars_arrow():
    r = gang.sim.simulate(two_racks(), JOBS, "required(rack)")
    pd = pytest.importorskip("pandas")
    df = r.to_pandas()
    assert list(df.columns) == list(gang.sim.JOB_COLUMNS) and len(df) == 2
    assert df.set_index("id").loc["big", "completion"] == 5460.0
    assert list(r.to_pandas("timeline").columns) == list(gang.sim.TIMELINE_COLUMNS)
    pl = pytest.importorskip("polars")
    p = r.to_polars()
    assert isinstance(p, pl.DataFrame) and p.columns == list(gang.sim.JOB_COLUMNS)
    assert p.filter(pl.col("id") == "small")["span"].to_list() == ["node"]
    pa = pytest.importorskip("pyarrow")
    t = r.to_arrow()
    assert isinstance(t, pa.Table) and t.num_rows == 2 and t.column("queue_delay").to_pylist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="table"):
        r.to_pandas("summary")


@pytest.mark.parametrize("method,module", [("to_pandas", "pandas"), ("to_polars", "polars"),
                                           ("to_arrow", "pyarrow")])
def test_a_missing_extra_names_itself(monkeypatch, method, module):
    r = gang.sim.simulate(two_racks(), JOBS)
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    with pytest.raises(ImportError, match=rf"needs {module}.*gang\[frames\]"):
        getattr(r, method)()


# ------------------------------------------------------------------------- errors


def test_trace_errors_name_line_and_field():
    bad = JOBS + [{"id": "c", "submit": 0, "duration": 60, "members": 1, "colour": "red"}]
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.simulate(two_racks(), bad)
    assert (e.value.line, e.value.field, e.value.sim_kind, e.value.kind) == (3, "colour", "invalid_trace",
                                                                              "invalid_scenario")
    assert str(e.value).startswith("trace line 3, field colour: unknown field")
    with pytest.raises(gang.InvalidScenario, match="trace line 1, field colour: unknown column"):
        gang.sim.simulate(two_racks(), {"csv": "id,submit,duration,colour\na,0,1,red\n"})


@pytest.mark.parametrize("job,cls,field", [
    ({"requests": {"cpu": "x"}}, gang.InvalidQuantity, "roles[worker].requests.cpu"),
    ({"min_members": 3}, gang.InvalidRequest, "roles[worker].min_count"),
    ({"policy": "required(blok)"}, gang.InvalidScenario, "policy"),
    ({"duration": -5}, gang.InvalidScenario, "duration"),
])
def test_a_job_gang_core_rejects_raises_the_core_class(job, cls, field):
    trace = [{"id": "ok", "submit": 0, "duration": 60, "members": 1},
             dict({"id": "x", "submit": 0, "duration": 60, "members": 1}, **job)]
    with pytest.raises(cls) as e:
        gang.sim.simulate(two_racks(), trace)
    assert type(e.value) is cls and (e.value.line, e.value.field) == (2, field)
    assert str(e.value).startswith(f"trace line 2, field {field}: ")
    # Errors cross process boundaries (sweeps on process pools and Dask) intact.
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is cls and (again.line, again.field, str(again)) == (2, field, str(e.value))


def test_config_and_cluster_errors():
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.simulate(two_racks(), JOBS, readiness={"timeuot": 3})
    assert e.value.field == "config.readiness.timeuot" and e.value.line is None
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.simulate(two_racks(), JOBS, "required(blok)")
    assert e.value.field == "config.policy" and "unknown level" in str(e.value)
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.simulate(two_racks(), JOBS, horizon=-1)
    assert e.value.field == "config.horizon"
    with pytest.raises(gang.InvalidQuantity) as e:
        gang.sim.simulate({"topology": {"levels": []}, "nodes": [{"name": "a", "capacity": {"gpu": "x"}}]}, JOBS)
    assert e.value.field == "nodes[a].capacity.gpu" and e.value.sim_kind == "invalid_cluster"
    with pytest.raises(gang.InvalidInventory, match="duplicate node"):
        gang.sim.simulate({"topology": {"levels": []}, "nodes": [{"name": "a"}, {"name": "a"}]}, JOBS)
    with pytest.raises(gang.InvalidScenario, match="cluster.generate.flavor"):
        gang.sim.simulate({"generate": {"flavor": "dgx"}}, JOBS)


def test_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        gang.sim.simulate(tmp_path / "nope.json", JOBS)
    with pytest.raises(FileNotFoundError, match="trace file"):
        gang.sim.simulate(two_racks(), str(tmp_path / "nope.jsonl"))
    with pytest.raises(TypeError, match="cluster must be"):
        gang.sim.simulate(42, JOBS)
    with pytest.raises(TypeError, match=r"trace\[1\] must be a dict"):
        gang.sim.simulate(two_racks(), [JOBS[0], "j2"])
    with pytest.raises(ValueError, match="NaN"):
        gang.sim.simulate(two_racks(), [dict(JOBS[0], duration=float("nan"))])


# ------------------------------------------------------------- compare and sweep


def test_compare_policies_and_patches():
    c = gang.sim.compare(two_racks(), JOBS, ["required(rack)", {"kind": "preferred", "level": "rack"},
                                             "unconstrained"])
    assert list(c) == ["required(rack)", "preferred(rack)", "unconstrained"] and len(c) == 3
    rows = c.summary_table()
    assert [r["variant"] for r in rows] == list(c) and list(rows[0]) == list(gang.sim.SUMMARY_COLUMNS)
    assert rows[0]["completed"] == 2 and rows[0]["completion_mean"] == (5460.0 + 660.0) / 2
    named = gang.sim.compare(two_racks(), JOBS, {
        "fifo": "unconstrained",
        "no timeout, init 0": {"policy": "unconstrained", "readiness": {"init_time": 0}}})
    assert named["no timeout, init 0"].job("small")["time_to_ready"] == 0.0
    assert named["fifo"].job("small")["time_to_ready"] == 60.0
    assert named["fifo"].document["config"]["seed"] == 0
    pd = pytest.importorskip("pandas")
    assert list(c.to_pandas()["variant"]) == list(c)
    jobs = c.to_pandas("jobs")
    assert len(jobs) == 6 and list(jobs.columns[:2]) == ["variant", "id"]
    assert c.to_arrow("timeline").column_names[0] == "variant"
    with pytest.raises(ValueError, match="named twice"):
        gang.sim.compare(two_racks(), JOBS, ["unconstrained", "unconstrained"])
    with pytest.raises(TypeError):
        gang.sim.compare(two_racks(), JOBS, "unconstrained")
    with pytest.raises(gang.InvalidScenario, match="tenant") as e:
        c.summary_table(tenant="nobody")
    assert e.value.field == "tenant"


def sweep_runs(n=6):
    return [{"cluster": gang.sim.generated_cluster(racks=1), "policy": p, "seed": s, "name": f"{p}/{s}",
             "trace": gang.sim.generated_trace(40, seed=s, max_members=16, member_gpus=8)}
            for s in range(n // 2) for p in ("required(rack)", "unconstrained")]


def test_sweep_serial_threads_processes_agree():
    runs = sweep_runs()
    serial = gang.sim.sweep(runs, keep="jobs")
    assert [r.name for r in serial] == [r["name"] for r in runs]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert gang.sim.sweep(runs, pool, keep="jobs") == serial
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        assert gang.sim.sweep(runs, pool, keep="jobs") == serial
    # Each result is the one simulate gives.
    one = runs[3]
    assert serial[3] == gang.sim.simulate(one["cluster"], one["trace"], one["policy"], seed=one["seed"],
                                          name=one["name"])
    # Run documents (and their JSON text) are configs too.
    assert gang.sim.sweep([serial[0].document, json.dumps(serial[1].document)], keep="jobs")[1].jobs == serial[1].jobs


def test_sweep_errors_propagate_with_their_class():
    runs = sweep_runs(2) + [{"cluster": two_racks(), "trace": [{"id": "x", "submit": 0, "duration": -1,
                                                                 "members": 1}]}]
    with concurrent.futures.ThreadPoolExecutor(2) as pool, pytest.raises(gang.InvalidScenario) as e:
        gang.sim.sweep(runs, pool)
    assert e.value.line == 1
    with pytest.raises(ValueError, match="needs 'cluster' and 'trace'"):
        gang.sim.sweep([{"cluster": two_racks()}])
    with pytest.raises(TypeError, match="executor"):
        gang.sim.sweep(sweep_runs(2), executor=object())


# ----------------------------------------------------------------------- progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_and_when_asked_only(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    runs = sweep_runs(4)
    gang.sim.sweep(runs)  # pytest's stderr is not a terminal: no bar
    gang.sim.sweep(runs, progress=False)
    assert capsys.readouterr().err == ""
    gang.sim.sweep(runs, progress=True)
    err = capsys.readouterr().err
    assert "gang.sim sweep" in err and "4/4" in err
    gang.sim.simulate(two_racks(), JOBS, progress=True)
    assert "gang.sim" in capsys.readouterr().err
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    gang.sim.sweep(runs)  # a terminal: the bar is on by default
    assert "gang.sim sweep" in tty.getvalue()


def test_progress_true_without_tqdm_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match=r"gang\[sim\]"):
        gang.sim.sweep(sweep_runs(2), progress=True)
    assert len(gang.sim.sweep(sweep_runs(2))) == 2  # off by default: tqdm is not needed


# -------------------------------------------------------------------- experiments


def test_experiment_small_low_sensitivity_should_not_insist_on_a_rack():
    c = gang.sim.experiment(SIM / "01-small-experiment.json")
    assert c.description.startswith("A small experiment")
    e = {v: c[v].job("experiment") for v in c}
    assert (e["rack required"]["queue_delay"], e["rack required"]["completion"]) == (10800.0, 14460.0)
    assert (e["unconstrained"]["completion"], e["unconstrained"]["slowdown"]) == (4020.0, 1.10)
    assert e["timed: rack for 10 min"]["completion"] == 4620.0
    assert e["rack required"]["run_time"] < e["unconstrained"]["run_time"]
    assert e["unconstrained"]["completion"] < e["rack required"]["completion"]


def test_experiment_documents_are_gang_sims_own():
    c = gang.sim.experiment(SIM / "03c-competing.json")
    # The variant's patch merged over the run's config, the paths made absolute.
    doc = c["no gang, no readiness timeout"].document
    assert doc["config"]["policy"] == {"kind": "no-gang"} and doc["config"]["readiness"]["timeout"] is None
    assert doc["config"]["horizon"] == 7200 and doc["cluster"]["file"].endswith("examples/sim/03-eight-gpus.json")
    assert c["gang (FIFO)"].document["config"]["horizon"] is None
    with pytest.raises(FileNotFoundError):
        gang.sim.experiment(SIM / "nope.json")


def test_import_gang_needs_none_of_the_extras():
    import subprocess
    code = ("import sys, gang, gang.sim, gang.kube; "
            "print([m for m in ('numpy', 'matplotlib', 'pandas', 'polars', 'pyarrow', 'tqdm', 'distributed')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
