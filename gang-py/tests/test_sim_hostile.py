"""gang.sim under hostile input, on Python's path (issue 25): generators and runs that
made the simulator allocate until the interpreter died (items 1-3) are refused with the
class of the error and the limit named, before any large allocation; a failure livelock
ends its job ``failed``. Each case would take terabytes, or never end, without its
bound, so a pass here means the bound held. Also: Python floats where quantities go
(item 8), and errors that name the user's field, not a position in the document
gang.sim built (issue 26 item 7)."""

import pytest

import gang
import gang.sim

ONE_RACK = gang.sim.generated_cluster(racks=1)
JOB = {"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 1}


def refused(call, field, says):
    with pytest.raises(gang.InvalidScenario) as info:
        call()
    e = info.value
    assert e.field == field, (e.field, str(e))
    assert says in str(e), str(e)
    assert e.sim_kind == "invalid_config", e.sim_kind
    return e


def test_generated_trace_of_a_trillion_jobs_is_refused_on_every_path():
    big = gang.sim.generated_trace(10**12)
    for call in (lambda: gang.sim.simulate(ONE_RACK, big),
                 lambda: gang.sim.trace_jobs(big),
                 lambda: gang.sim.offered_load(big, ONE_RACK),
                 lambda: gang.sim.sweep([{"cluster": ONE_RACK, "trace": big}])):
        refused(call, "trace.generate.jobs", "limits.max_jobs")
    # With a target load too (rescaled on the cluster: the bound comes first).
    refused(lambda: gang.sim.trace_jobs(gang.sim.generated_trace(10**12, load=0.5), ONE_RACK),
            "trace.generate.jobs", "limits.max_jobs")


def test_a_raised_job_limit_lets_more_through_and_a_lowered_one_stops_fewer():
    refused(lambda: gang.sim.simulate(ONE_RACK, gang.sim.generated_trace(10), limits={"max_jobs": 9}),
            "trace.generate.jobs", "limits.max_jobs")
    r = gang.sim.simulate(ONE_RACK, gang.sim.generated_trace(10, max_members=8), limits={"max_jobs": 10})
    assert r.summary["all"]["jobs"] == 10


def test_generated_clusters_are_bounded_in_racks_and_nodes_per_rack():
    for cluster in (gang.sim.generated_cluster(racks=10**8),
                    gang.sim.generated_cluster(racks=2, nodes_per_rack=10**9)):
        refused(lambda: gang.sim.simulate(cluster, [JOB]), "cluster.generate.racks", "limits.max_nodes")
        refused(lambda: gang.sim.cluster_inventory(cluster), "cluster.generate.racks", "limits.max_nodes")
    refused(lambda: gang.sim.simulate(gang.sim.generated_cluster(racks=2), [JOB], limits={"max_nodes": 10}),
            "cluster.generate.racks", "limits.max_nodes")


def test_a_count_beyond_64_bits_is_refused_not_wrapped():
    for call in (lambda: gang.sim.simulate(ONE_RACK, gang.sim.generated_trace(2**70)),
                 lambda: gang.sim.simulate(gang.sim.generated_cluster(racks=2**70), [JOB])):
        with pytest.raises(gang.InvalidScenario) as info:
            call()
        assert "jobs" in str(info.value) or "racks" in str(info.value), str(info.value)


@pytest.mark.parametrize("trace, config", [
    ([{**JOB, "duration": 1e12}], {}),                                     # a trace as long as allowed
    ([{**JOB, "members": 2, "gpus": 8}], {"slowdown": {"medium": [1e10]}}),
    ([{**JOB, "duration": 31536000}], {"sample_interval": 0.001}),         # a year at 1 ms
    ([JOB], {"failures": {"node_rate_per_hour": 1000, "repair_time": 1e12}}),
    ([JOB], {"readiness": {"timeout": 1e300, "init_failure": 1.0}}),       # a failing member waits forever
    ([JOB], {"readiness": {"backoff_base": 1e300, "backoff_max": 1e300, "init_failure": 1.0, "max_attempts": 100}}),
])
def test_runs_that_would_take_too_many_samples_are_refused(trace, config):
    e = refused(lambda: gang.sim.simulate(ONE_RACK, trace, **config), "config.limits.max_samples",
                "limits.max_samples")
    assert e.line is None


def test_a_horizon_past_the_sample_limit_is_refused_before_the_run():
    refused(lambda: gang.sim.simulate(ONE_RACK, [JOB], horizon=1e12), "config.limits.max_samples",
            "limits.max_samples")


def test_the_event_limit_names_itself():
    jobs = [{**JOB, "id": f"j{i}", "submit": i, "duration": 10} for i in range(20)]
    refused(lambda: gang.sim.simulate(ONE_RACK, jobs, limits={"max_events": 5}), "config.limits.max_events",
            "limits.max_events")


def test_a_failure_livelock_ends_the_job_failed():
    r = gang.sim.simulate(ONE_RACK, [{**JOB, "gpus": 8}], failures={"node_rate_per_hour": 100, "repair_time": 60},
                          limits={"max_restarts": 50})
    job = r.job("a")
    assert job["state"] == "failed" and "limits.max_restarts" in job["reason"], job
    assert job["node_failures"] == 51


def test_a_sweep_with_one_unbounded_run_keeps_the_others():
    runs = [{"cluster": ONE_RACK, "trace": [JOB], "name": "fine"},
            {"cluster": ONE_RACK, "trace": gang.sim.generated_trace(10**12), "name": "huge"}]
    with pytest.raises(gang.InvalidScenario) as info:
        gang.sim.sweep(runs)
    assert info.value.variant == "huge" and info.value.results.names == ["fine"]


def test_python_floats_as_quantities_run_as_their_text():
    # Item 8: a JSON number where a quantity goes, as json.dumps writes a Python float.
    jobs = [{"id": "a", "submit": 0, "duration": 60, "members": 2, "requests": {"cpu": 0.5, "nvidia.com/gpu": 1.0}}]
    r = gang.sim.simulate(ONE_RACK, jobs)
    assert r.job("a")["state"] == "completed" and r.job("a")["gpus_total"] == 2.0
    with pytest.raises(gang.InvalidQuantity) as info:
        gang.sim.simulate(ONE_RACK, [{**jobs[0], "requests": {"cpu": 1e-9}}])
    assert info.value.field == "roles[worker].requests.cpu", info.value.field


@pytest.mark.parametrize("config, field", [
    ({"readiness": {"timeout": "soon"}}, "config.readiness.timeout"),
    ({"seed": "one"}, "config.seed"),
    ({"queue": {"discipline": 3}}, "config.queue.discipline"),
])
def test_errors_name_the_field_not_a_column_of_the_document_gang_sim_built(config, field):
    # Issue 26 item 7: "at line 1 column 204" pointed into JSON the user never saw.
    with pytest.raises(gang.InvalidScenario) as info:
        gang.sim.simulate(ONE_RACK, [JOB], **config)
    assert info.value.field == field, (info.value.field, str(info.value))
    assert "column" not in str(info.value) and " at line " not in str(info.value), str(info.value)


def test_a_cluster_dict_error_names_no_position():
    bad = {"topology": {"levels": ["rack"]}, "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": 8}]}
    with pytest.raises(gang.GangError) as info:
        gang.sim.simulate(bad, [JOB])
    assert " at line " not in str(info.value) and "column" not in str(info.value), str(info.value)
