//! Recovery by replacement inside the domain. Both cases were found by gang-py's
//! reference simulator (`gang-py/tests/sim_reference.py`):
//! - `recovery.replace_timeout` bounds one wait for replacements: a later pause, of a
//!   later attempt, waits afresh (the deadline of the first wait was kept, so the second
//!   pause gave up at once and restarted the job instead of replacing);
//! - the record's span is the last placement's, replacements included, even when the
//!   job ends before it runs on them (it kept the span of the placement before).

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

#[test]
fn the_span_is_the_placement_with_its_replacements() {
    // Rack b: n0 (8 GPUs), n1 (4), n2 (2). `train` (5 x 1 GPU) runs on n0 alone (span:
    // node) from 120. n0 fails at 200: the five are replaced on n1 and n2 (span: rack),
    // which initialise for 120 s; with a cancellation at 250 the job ends before it
    // runs again, and without one it runs on the rack at x1.5.
    let run = |cancel: &str| -> serde_json::Value {
        let doc = format!(
            r#"{{
          "cluster": {{"inline": {{"topology": {{"levels": ["rack"]}}, "nodes": [
            {{"name": "n0", "labels": {{"rack": "b"}}, "capacity": {{"nvidia.com/gpu": 8}}}},
            {{"name": "n1", "labels": {{"rack": "b"}}, "capacity": {{"nvidia.com/gpu": 4}}}},
            {{"name": "n2", "labels": {{"rack": "b"}}, "capacity": {{"nvidia.com/gpu": 2}}}}]}}}},
          "trace": {{"inline": [{{"id": "train", "submit": 0, "duration": 3600, "members": 5,
                                  "gpus": 1, "policy": "required(rack)"{cancel}}}]}},
          "config": {{"readiness": {{"init_time": 120}}, "check_invariants": true,
                      "recovery": {{"mode": "replace"}},
                      "failures": {{"repair_time": 100000, "scheduled": [{{"node": "n0", "at": 200}}]}}}}
        }}"#
        );
        let out: serde_json::Value = serde_json::from_str(&run_json(&doc).unwrap()).unwrap();
        out["jobs"][0].clone()
    };
    let cancelled = run(r#", "cancel": 250"#);
    assert_eq!(
        (
            cancelled["state"].as_str(),
            cancelled["replacements"].as_u64()
        ),
        (Some("cancelled"), Some(1))
    );
    assert_eq!(cancelled["span"], "rack");
    assert_eq!(cancelled["slowdown"].as_f64(), Some(1.5));
    let ran = run("");
    assert_eq!(
        (ran["state"].as_str(), ran["span"].as_str()),
        (Some("completed"), Some("rack"))
    );
    // Ready at 120, 80 s on n0 lost (no checkpoints), replaced at 200, ready at 320,
    // 3600 x 1.5 on the rack: ends at 5720.
    assert_eq!(ran["end"].as_f64(), Some(5720.0));
}
