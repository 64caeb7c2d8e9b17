//! `recovery.replace_timeout` bounds one wait for replacements: a later pause, of a
//! later attempt, waits afresh. Found by gang-py's reference simulator
//! (`gang-py/tests/sim_reference.py`): the deadline of the first wait was kept, so the
//! second pause gave up at once and restarted the job instead of replacing.

use gang_sim::run_json;

#[test]
fn a_second_pause_after_a_restart_waits_its_own_replace_timeout() {
    // Racks a (a1, a2) and b (b1, b2, b3) of 4-GPU nodes; `train` (8 x 1 GPU, one rack)
    // takes the tight rack a at 0. a1 fails at 100 for good: no room in rack a, so at
    // 600 (the 500 s replace timeout) it restarts, in rack b. b1 fails at 700: b3 has
    // room, so the lost members are replaced there at once and it runs on: 100 s run
    // before the first failure and 100 s before the second (no checkpoints, both lost),
    // then the whole 3600 s from 700: it ends at 4300.
    let nodes: Vec<String> = [
        ("a1", "a"),
        ("a2", "a"),
        ("b1", "b"),
        ("b2", "b"),
        ("b3", "b"),
    ]
    .iter()
    .map(|(n, r)| {
        format!(
            r#"{{"name": "{n}", "labels": {{"rack": "{r}"}}, "capacity": {{"nvidia.com/gpu": 4}}}}"#
        )
    })
    .collect();
    let doc = format!(
        r#"{{
      "cluster": {{"inline": {{"topology": {{"levels": ["rack"]}}, "nodes": [{}]}}}},
      "trace": {{"inline": [{{"id": "train", "submit": 0, "duration": 3600, "members": 8, "gpus": 1,
                              "policy": "required(rack)", "slowdown": [1]}}]}},
      "config": {{"readiness": {{"init_time": 0}}, "check_invariants": true,
                  "recovery": {{"mode": "replace", "replace_timeout": 500}},
                  "failures": {{"repair_time": 100000,
                                "scheduled": [{{"node": "a1", "at": 100}}, {{"node": "b1", "at": 700}}]}}}}
    }}"#,
        nodes.join(", ")
    );
    let out: serde_json::Value = serde_json::from_str(&run_json(&doc).unwrap()).unwrap();
    let j = &out["jobs"][0];
    assert_eq!(j["state"], "completed");
    let n = |f: &str| j[f].as_u64().unwrap();
    assert_eq!(
        (
            n("node_failures"),
            n("restarts"),
            n("replacements"),
            n("attempts")
        ),
        (2, 1, 1, 2)
    );
    assert_eq!(
        (j["admitted"].as_f64(), j["end"].as_f64()),
        (Some(600.0), Some(4300.0))
    );
    assert_eq!(j["run_time"].as_f64(), Some(3800.0));
}
