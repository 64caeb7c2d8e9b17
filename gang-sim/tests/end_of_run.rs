//! The end of a run: "when only the failure process is left (nothing else can
//! happen)" the simulation ends, even while timers of states jobs have left (a
//! restarted job's finish) still sit in the event queue. Found by gang-py's reference
//! simulator (`gang-py/tests/sim_reference.py`): such a stale timer kept the run going,
//! so a later scheduled failure hit a job that should have been left alone.

use gang_sim::{run_json, FinalState};

fn run(failures: &str) -> serde_json::Value {
    let doc = format!(
        r#"{{
      "cluster": {{"inline": {{"topology": {{"levels": []}}, "nodes": [
        {{"name": "n1", "labels": {{"slot": "a"}}, "capacity": {{"nvidia.com/gpu": 4}}}},
        {{"name": "n2", "labels": {{"slot": "b"}}, "capacity": {{"nvidia.com/gpu": 4}}}}]}}}},
      "trace": {{"inline": [
        {{"id": "victim", "submit": 0, "duration": 5000, "members": 1, "gpus": 4, "selector": {{"slot": "a"}}}},
        {{"id": "stuck", "submit": 0, "duration": 60, "members": 1, "gpus": 4, "selector": {{"slot": "b"}}, "failing_members": 1}},
        {{"id": "thief", "submit": 50, "duration": 60, "members": 1, "gpus": 4, "selector": {{"slot": "a"}}, "failing_members": 1}}]}},
      "config": {{"readiness": {{"init_time": 0, "timeout": null}}, "check_invariants": true,
                  "failures": {{"repair_time": 100, "scheduled": {failures}}}}}
    }}"#
    );
    serde_json::from_str(&run_json(&doc).unwrap()).unwrap()
}

#[test]
fn a_stale_timer_does_not_keep_the_failure_process_running() {
    // n1 fails at 100 under `victim` (running since 0): it restarts, and its finish at
    // 5000 goes stale. n1 is back at 200 and `thief`, waiting since 50, takes it for
    // good (a member that never initialises, no timeout); `victim` waits behind it,
    // `stuck` holds n2 the same way. From 200 nothing can happen but failures: the run
    // ends there, and the failure of n2 at 3000 never comes.
    let out = run(r#"[{"node": "n1", "at": 100}, {"node": "n2", "at": 3000}]"#);
    assert_eq!(out["summary"]["end_time"], 200.0);
    let job = |id: &str| {
        out["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == id)
            .unwrap()
            .clone()
    };
    for id in ["victim", "stuck", "thief"] {
        assert_eq!(job(id)["state"], FinalState::Unfinished.as_str());
        assert_eq!(job(id)["end"], 200.0, "{id}");
    }
    let victim = job("victim");
    assert_eq!(
        (
            victim["node_failures"].as_u64(),
            victim["restarts"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(job("stuck")["node_failures"], 0);
    assert!(job("stuck")["reason"]
        .as_str()
        .unwrap()
        .contains("never became ready"));
    // Without the second failure: the same run.
    let one = run(r#"[{"node": "n1", "at": 100}]"#);
    assert_eq!(one["jobs"], out["jobs"]);
}

/// An inventory document's reservations stay held for the whole run, like capacity
/// other pods use: the invariant checks count only the simulation's own, also when a
/// node under one fails. (Found by gang-py's `test_sim.py` run on a debug build, where
/// invariant checks are on by default.)
#[test]
fn reservations_the_cluster_came_with_are_not_the_simulations() {
    use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    let node = |n: &str, r: &str| {
        NodeSpec::new(n)
            .label("rack", r)
            .capacity("nvidia.com/gpu", 4)
    };
    let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes([
            node("a1", "a"),
            node("a2", "a"),
            node("b1", "b"),
            node("b2", "b"),
        ])
        .build()
        .unwrap();
    let held = Gang::new("held")
        .role(Role::new("w", 2).request("nvidia.com/gpu", 4))
        .required("rack");
    let p = inv.place(&held).unwrap();
    inv.reserve(p.placement().unwrap()).unwrap();
    let cluster = serde_json::to_value(inv.to_document()).unwrap();
    let doc = serde_json::json!({
        "cluster": {"inline": cluster},
        "trace": {"inline": [
            {"id": "big", "submit": 0, "duration": 3600, "members": 2, "gpus": 4, "policy": "required(rack)"},
            {"id": "small", "submit": 0, "duration": 600, "members": 1, "gpus": 2}]},
        "config": {"check_invariants": true, "readiness": {"init_time": 0},
                   "failures": {"repair_time": 100, "scheduled": [{"node": "a1", "at": 10}]}}
    });
    let out: serde_json::Value =
        serde_json::from_str(&run_json(&doc.to_string()).unwrap()).unwrap();
    let state = |i: usize| out["jobs"][i]["state"].as_str().unwrap().to_owned();
    assert_eq!(
        (state(0), state(1)),
        ("completed".into(), "completed".into())
    );
    // Rack a is the document's: the GPUs free at the start are rack b's.
    assert_eq!(out["summary"]["cluster_gpus"], 8.0);
}
