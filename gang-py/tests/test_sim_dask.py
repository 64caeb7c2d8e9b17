"""gang.sim.sweep on a Dask cluster (``distributed.Client``): the same results as a
serial sweep, errors raised with their gang class, a progress bar over the futures.
Both a threaded LocalCluster (processes=False) and worker processes (processes=True,
which import gang themselves and receive only run documents as JSON text)."""

import pytest

import gang
import gang.sim

distributed = pytest.importorskip("distributed")


def runs():
    return [{"cluster": gang.sim.generated_cluster(racks=2), "policy": p, "seed": s, "name": f"{p} #{s}",
             "trace": gang.sim.generated_trace(80, seed=s, max_members=32, member_gpus=8)}
            for s in range(3) for p in ("required(rack)", "preferred(rack)", "unconstrained")]


@pytest.fixture(scope="module", params=[False, True], ids=["threads", "processes"])
def client(request):
    # Worker processes talk over TCP on the loopback address; threads in-process.
    where = {"host": "127.0.0.1"} if request.param else {}
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=request.param,
                                       dashboard_address=None, **where)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_sweep_on_dask_equals_the_serial_sweep(client):
    serial = gang.sim.sweep(runs())
    on_dask = gang.sim.sweep(runs(), client)
    assert [r.name for r in on_dask] == [r["name"] for r in runs()]
    assert on_dask == serial
    assert all(r.summary["all"]["jobs"] == 80 for r in on_dask)


def test_dask_is_detected_and_used(client, monkeypatch):
    calls = []
    real = client.map
    monkeypatch.setattr(client, "map", lambda *a, **k: calls.append(len(a[1])) or real(*a, **k))
    gang.sim.sweep(runs()[:4], client)
    assert calls == [4]


def test_errors_on_dask_keep_their_class_and_fields(client):
    bad = runs()[:2] + [{"cluster": gang.sim.generated_cluster(racks=1),
                         "trace": [{"id": "x", "submit": 0, "duration": 60, "members": 1, "requests": {"cpu": "x"}}]}]
    with pytest.raises(gang.InvalidQuantity) as e:
        gang.sim.sweep(bad, client)
    assert (e.value.line, e.value.field) == (1, "roles[worker].requests.cpu")


def test_progress_over_dask_futures(client, capsys):
    pytest.importorskip("tqdm")
    gang.sim.sweep(runs()[:3], client, progress=True)
    assert "3/3" in capsys.readouterr().err


def test_compare_and_experiment_take_a_client(client):
    c = gang.sim.compare(gang.sim.generated_cluster(racks=1), gang.sim.generated_trace(30, seed=1, max_members=8),
                         ["required(rack)", "unconstrained"], executor=client)
    assert list(c) == ["required(rack)", "unconstrained"] and c["unconstrained"].summary["all"]["jobs"] == 30


def test_dask_ships_back_summaries_unless_jobs_are_asked_for(client):
    """Issue 26 item 5: a sweep returns only what is asked for (summary rows by
    default); the summaries are the same as when the jobs come along."""
    few = runs()[:2]
    small = gang.sim.sweep(few, client)
    full = gang.sim.sweep(few, client, keep="jobs")
    assert [r.kept for r in small] == ["summary", "summary"] and [r.kept for r in full] == ["jobs", "jobs"]
    assert [r.summary for r in small] == [r.summary for r in full]
    assert all(len(s.to_json()) * 5 < len(f.to_json()) for s, f in zip(small, full))
    with pytest.raises(ValueError, match="keep='jobs'"):
        small[0].jobs


def test_a_failing_run_on_dask_keeps_the_others(client):
    bad = runs()[:2] + [{"cluster": gang.sim.generated_cluster(racks=1), "name": "broken",
                         "trace": [{"id": "x", "submit": 0, "duration": -1, "members": 1}]}]
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.sweep(bad, client)
    assert e.value.variant == "broken" and e.value.results.names == [r["name"] for r in runs()[:2]]


def test_jobs_come_back_as_arrow_from_dask_and_equal_the_serial_ones(client):
    # Issue 26 item 5: with keep="jobs", a worker ships the jobs and the timeline as
    # Arrow (a fraction of the JSON), read when first asked for: the same results.
    pd = pytest.importorskip("pandas")
    serial = gang.sim.sweep(runs()[:3], keep="jobs")
    on_dask = gang.sim.sweep(runs()[:3], client, keep="jobs")
    assert all(r._packed is not None for r in on_dask), "packed on the worker, not read yet"
    # The tables come straight from the Arrow (no rows in between), equal to the rows'.
    for table in ("jobs", "timeline"):
        fast, rows = on_dask.to_pandas(table), serial.to_pandas(table)
        assert list(fast.columns) == list(rows.columns)
        pd.testing.assert_frame_equal(fast, rows, check_dtype=False)
        assert on_dask.to_arrow(table).num_rows == len(rows) == on_dask.to_polars(table).height
    assert all(r._packed is not None for r in on_dask), "tables did not read the rows"
    assert [r.jobs for r in on_dask] == [r.jobs for r in serial]
    assert [r.timeline for r in on_dask] == [r.timeline for r in serial]
    assert on_dask == serial


def test_the_bar_counts_a_run_once_its_result_is_gathered(client, monkeypatch):
    """Issue 26 item 5: the bar reached 100 % before seconds of transfer and parsing.
    A run is counted only once its result has come back here: every tick follows the
    gathering of one more result."""
    import gang._sim.running as running
    events = []

    class Bar:
        def update(self, n):
            events.append("tick")

        def close(self):
            pass
    monkeypatch.setattr(running, "_tqdm", lambda progress, **kw: Bar())
    real = distributed.Future.result

    def result(self, *a, **k):
        out = real(self, *a, **k)
        events.append("gathered")
        return out
    monkeypatch.setattr(distributed.Future, "result", result)
    gang.sim.sweep(runs()[:4], client, keep="jobs")
    assert events.count("tick") == 4
    for i, e in enumerate(events):
        if e == "tick":
            assert events[:i].count("gathered") > events[:i].count("tick"), events


def test_runs_that_aborted_workers_are_refused_and_the_workers_live_on(client):
    """Issue 25 item 1: a run one sample per interval for 1e12 s, or a trillion
    generated jobs, ended in a failed allocation (an abort) and killed Dask's worker
    processes. Now each is refused on the worker with its limit named, the other
    runs' results are kept, and the same workers go on to run a sweep."""
    one = gang.sim.generated_cluster(racks=1)
    job = {"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 1}
    workers = set(client.scheduler_info()["workers"])
    for name, run, field in (
        ("long", {"trace": [{**job, "duration": 1e12}]}, "config.limits.max_samples"),
        ("many", {"trace": gang.sim.generated_trace(10**12)}, "trace.generate.jobs"),
    ):
        bad = runs()[:2] + [{"cluster": one, "name": name, **run}]
        with pytest.raises(gang.InvalidScenario) as e:
            gang.sim.sweep(bad, client)
        assert e.value.variant == name and e.value.field == field, (e.value.field, str(e.value))
        assert "limits.max_" in str(e.value)
        assert e.value.results.names == [r["name"] for r in runs()[:2]]
    assert set(client.scheduler_info()["workers"]) == workers
    assert [r.summary["all"]["jobs"] for r in gang.sim.sweep(runs()[:2], client)] == [80, 80]
