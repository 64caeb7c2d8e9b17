"""gang.sim's schema is gang-sim's (issue 20, item 5): its columns, policy labels and
variant merge come from the Rust crate through the extension, and what a run produces
has exactly those columns. A Python copy that drifted from gang-sim fails here."""

from __future__ import annotations

import json

import pytest

import gang
import gang.sim
from gang import _gang

CLUSTER = {"topology": {"levels": ["rack"]}, "nodes": [
    {"name": n, "labels": {"rack": r}, "capacity": {"nvidia.com/gpu": 4}}
    for n, r in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]]}
JOBS = [{"id": "j", "submit": 0, "duration": 60, "members": 2, "gpus": 1}]


def test_columns_are_gang_sims_and_match_what_a_run_produces():
    schema = json.loads(_gang._sim_schema())
    assert gang.sim.JOB_COLUMNS == tuple(schema["job_columns"])
    assert gang.sim.TIMELINE_COLUMNS == tuple(schema["timeline_columns"])
    r = gang.sim.simulate(CLUSTER, JOBS, "required(rack)", readiness={"init_time": 0})
    # gang-sim's records carry exactly its columns, in its order.
    assert tuple(r.jobs[0]) == gang.sim.JOB_COLUMNS
    assert tuple(r.timeline[0]) == gang.sim.TIMELINE_COLUMNS
    assert {"id", "state", "gpu_hours_held", "reason"} <= set(gang.sim.JOB_COLUMNS)


@pytest.mark.parametrize("policy,label", [
    (None, "unconstrained"),
    ("required(rack)", "required(rack)"),
    ("  preferred( rack )", "preferred(rack)"),
    ({"kind": "timed", "level": "rack", "after": 600.0}, "timed(rack, 600)"),
    ({"kind": "spread", "level": "rack", "replicas": 2}, "spread(2, rack)"),
    ({"kind": "no-gang"}, "no-gang"),
])
def test_policy_labels_are_gang_sims(policy, label):
    assert gang.sim._policy_label(policy) == label
    r = gang.sim.simulate(CLUSTER, JOBS, policy, readiness={"init_time": 0})
    # The label gang-sim writes into the records, the summary and the result's name agree.
    assert r.jobs[0]["policy"] == label and r.name == label
    assert list(r.summary["by_policy"]) == [label]


def test_an_invalid_policy_is_gang_sims_error():
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim._policy_label({"kind": "timed", "level": "rack"})
    assert e.value.field == "config.policy" and "after" in str(e.value)
    with pytest.raises(gang.InvalidScenario) as e:
        gang.sim.compare(CLUSTER, JOBS, ["required(rack)", "sideways"])
    assert e.value.field == "config.policy"


def test_variant_merge_is_gang_sims():
    base = {"queue": {"discipline": "fifo", "requeue": "creation"}, "seed": 1, "slowdown": {"low": [1, 2]}}
    patch = {"queue": {"discipline": "backfill"}, "seed": [2], "slowdown": {"low": [3]}, "horizon": None}
    assert gang.sim._merge(base, patch) == {
        "queue": {"discipline": "backfill", "requeue": "creation"}, "seed": [2],
        "slowdown": {"low": [3]}, "horizon": None}
    assert json.loads(_gang._sim_merge(json.dumps(base), json.dumps(patch))) == gang.sim._merge(base, patch)
    # compare() merges a variant's patch the same way an experiment file's variant is.
    c = gang.sim.compare(CLUSTER, JOBS, {"fifo": {"policy": "required(rack)"},
                                         "backfill": {"queue": {"discipline": "backfill"}}},
                         queue={"discipline": "fifo", "requeue": "creation"})
    assert c["backfill"].document["config"]["queue"] == {"discipline": "backfill", "requeue": "creation"}
    assert c["fifo"].document["config"]["queue"] == {"discipline": "fifo", "requeue": "creation"}


def test_summary_rows_and_document_sources_are_gang_sims():
    """Issue 20's leftover: the summary row's columns and flattening, and the keys of
    cluster and trace sources, are gang-sim's, not a Python copy."""
    schema = json.loads(_gang._sim_schema())
    assert gang.sim.SUMMARY_COLUMNS == tuple(schema["summary_columns"])
    assert set(gang.sim.GLOSSARY) == set(gang.sim.SUMMARY_COLUMNS)
    assert gang.sim._CLUSTER_SOURCES == tuple(schema["cluster_sources"])
    assert gang.sim._TRACE_SOURCES == tuple(schema["trace_sources"])
    assert gang.sim._TRACE_FORMATS == tuple(schema["trace_formats"])
    r = gang.sim.simulate(CLUSTER, JOBS, "required(rack)", readiness={"init_time": 0})
    rows = json.loads(_gang._sim_summary_rows(json.dumps([["x", r.summary]]), None, "censored"))
    assert rows == [r.summary_row() | {"variant": "x"}]
    assert tuple(rows[0]) == gang.sim.SUMMARY_COLUMNS
    assert not hasattr(gang.sim, "_summary_row")  # the Python flattening is gone
