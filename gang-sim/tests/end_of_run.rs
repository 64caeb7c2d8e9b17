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
