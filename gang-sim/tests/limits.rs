//! The work of a run is bounded (issue 25, items 1-3): inputs that made the simulator
//! allocate until the process aborted, or never end, are refused with an error naming
//! the limit, or end in a clear state.

use gang_sim::{run_json, FinalState, GenCluster, RunDocument, SimConfig, WorkloadSpec};

/// A run document on a generated 1-rack cluster with `trace` (JSON Lines text) and
/// `config` (a JSON object).
fn doc(trace: &str, config: &str) -> String {
    format!(
        r#"{{"cluster": {{"generate": {{"flavor": "hgx", "racks": 1}}}},
            "trace": {{"jsonl": {}}}, "config": {config}}}"#,
        serde_json::to_string(trace).unwrap()
    )
}

fn field_of(document: &str) -> (String, String) {
    let e = run_json(document).unwrap_err();
    assert_eq!(e.kind(), "invalid_config", "{e}");
    (e.field().to_owned(), e.to_string())
}

#[test]
fn a_trace_duration_of_1e12_is_refused_by_the_sample_limit() {
    let t = r#"{"id": "a", "submit": 0, "duration": 1e12, "members": 1, "gpus": 1}"#;
    let (field, msg) = field_of(&doc(t, "{}"));
    assert_eq!(field, "limits.max_samples", "{msg}");
    assert!(msg.contains("sample_interval"), "{msg}");
}

#[test]
fn a_slowdown_of_1e10_is_refused_by_the_sample_limit() {
    let t = r#"{"id": "a", "submit": 0, "duration": 3600, "members": 2, "gpus": 8}"#;
    let c = r#"{"slowdown": {"medium": [1e10]}}"#;
    assert_eq!(field_of(&doc(t, c)).0, "limits.max_samples");
}

#[test]
fn a_one_ms_sample_interval_over_a_year_is_refused() {
    let t = r#"{"id": "a", "submit": 0, "duration": 31536000, "members": 1, "gpus": 1}"#;
    let (field, msg) = field_of(&doc(t, r#"{"sample_interval": 0.001}"#));
    assert_eq!(field, "limits.max_samples", "{msg}");
    // Raising the limit is the way through (checked with a small trace only).
    let t = r#"{"id": "a", "submit": 0, "duration": 10, "members": 1, "gpus": 1}"#;
    let c = r#"{"sample_interval": 0.001, "limits": {"max_samples": 100000}, "readiness": {"init_time": 0}}"#;
    let out: serde_json::Value = serde_json::from_str(&run_json(&doc(t, c)).unwrap()).unwrap();
    assert_eq!(out["timeline"].as_array().unwrap().len(), 10_001);
}

#[test]
fn a_horizon_past_the_sample_limit_is_refused_before_the_run() {
    let e = SimConfig::from_json(r#"{"horizon": 1e12}"#).unwrap_err();
    assert_eq!(e.field(), "limits.max_samples");
}

#[test]
fn a_huge_readiness_timeout_or_backoff_ends_with_an_error_not_an_abort() {
    let t =
        r#"{"id": "a", "submit": 0, "duration": 60, "members": 2, "gpus": 8, "init_failure": 1}"#;
    for c in [
        r#"{"readiness": {"timeout": 1e300}}"#,
        r#"{"readiness": {"backoff_base": 1e300, "backoff_max": 1e300}}"#,
    ] {
        match run_json(&doc(t, c)) {
            // Either the run ends (the job fails or waits forever), or the samples
            // the wait takes are refused; never an abort.
            Ok(out) => {
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_ne!(v["jobs"][0]["state"], "completed", "{c}");
            }
            Err(e) => assert_eq!(e.field(), "limits.max_samples", "{c}: {e}"),
        }
    }
}

#[test]
fn every_node_failing_with_a_long_repair_is_refused_by_the_sample_limit() {
    let t = r#"{"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 1}"#;
    let c = r#"{"failures": {"node_rate_per_hour": 1000, "repair_time": 1e12}}"#;
    assert_eq!(field_of(&doc(t, c)).0, "limits.max_samples");
}

#[test]
fn the_event_limit_names_itself() {
    let t: String = (0..20)
        .map(|i| format!("{{\"id\": \"j{i}\", \"submit\": {i}, \"duration\": 10, \"members\": 1, \"gpus\": 1}}\n"))
        .collect();
    let (field, msg) = field_of(&doc(&t, r#"{"limits": {"max_events": 5}}"#));
    assert_eq!(field, "limits.max_events", "{msg}");
}

#[test]
fn a_failure_livelock_ends_the_job_failed() {
    // A node fails every 36 s on average, repaired in a minute; the job needs an hour
    // without checkpoints: it can never finish.
    let t = r#"{"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 8}"#;
    let c = r#"{"failures": {"node_rate_per_hour": 100, "repair_time": 60}, "limits": {"max_restarts": 50}}"#;
    let out = run_json(&doc(t, c)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["state"], FinalState::Failed.as_str(), "{job}");
    assert!(
        job["reason"]
            .as_str()
            .unwrap()
            .contains("limits.max_restarts"),
        "{job}"
    );
    assert_eq!(job["node_failures"], 51, "{job}");
    // With the default limit too (no per-test setting): it still ends.
    let c = r#"{"failures": {"node_rate_per_hour": 100, "repair_time": 60}}"#;
    let v: serde_json::Value = serde_json::from_str(&run_json(&doc(t, c)).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["state"], "failed");
}

#[test]
fn generators_are_bounded_before_they_allocate() {
    let d = r#"{"cluster": {"generate": {"flavor": "hgx", "racks": 1}},
        "trace": {"generate": {"jobs": 1000000000000}}}"#;
    let e = RunDocument::from_json(d)
        .unwrap()
        .simulation()
        .err()
        .unwrap();
    assert_eq!(e.field(), "trace.generate.jobs", "{e}");
    assert!(e.to_string().contains("limits.max_jobs"), "{e}");
    let d = r#"{"cluster": {"generate": {"flavor": "hgx", "racks": 100000000}},
        "trace": {"jsonl": ""}}"#;
    let e = RunDocument::from_json(d)
        .unwrap()
        .simulation()
        .err()
        .unwrap();
    assert_eq!(e.field(), "cluster.generate.racks", "{e}");
    assert!(e.to_string().contains("limits.max_nodes"), "{e}");
    // A raised limit lets a bigger generator through; a lowered one stops a small one.
    let d = r#"{"cluster": {"generate": {"flavor": "hgx", "racks": 2}},
        "trace": {"generate": {"jobs": 5}}, "config": {"limits": {"max_nodes": 10}}}"#;
    let e = RunDocument::from_json(d)
        .unwrap()
        .simulation()
        .err()
        .unwrap();
    assert_eq!(e.field(), "cluster.generate.racks", "{e}");
    let spec = WorkloadSpec {
        jobs: 10,
        ..WorkloadSpec::default()
    };
    assert_eq!(
        spec.generate_within(9).unwrap_err().field(),
        "workload.jobs"
    );
    assert!(GenCluster::default().build_within(127).is_err());
    assert_eq!(GenCluster::default().build_within(128).unwrap().len(), 128);
}

#[test]
fn the_trace_and_cluster_limits_apply_to_any_source() {
    let t: String = (0..3)
        .map(|i| format!("{{\"id\": \"j{i}\", \"submit\": 0, \"duration\": 10, \"members\": 1}}\n"))
        .collect();
    let (field, msg) = field_of(&doc(&t, r#"{"limits": {"max_jobs": 2}}"#));
    assert_eq!(field, "limits.max_jobs", "{msg}");
    assert!(msg.contains('3'), "{msg}");
}

#[test]
fn trace_files_are_read_within_the_byte_limit() {
    let dir = std::env::temp_dir().join(format!("gang-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("t.jsonl");
    std::fs::write(
        &t,
        "{\"id\": \"a\", \"submit\": 0, \"duration\": 10, \"members\": 1}\n",
    )
    .unwrap();
    let d = format!(
        r#"{{"cluster": {{"generate": {{"flavor": "hgx", "racks": 1}}}},
            "trace": {{"file": {{"path": {:?}}}}}, "config": {{"limits": {{"max_input_bytes": 20}}}}}}"#,
        t.to_string_lossy()
    );
    let e = RunDocument::from_json(&d)
        .unwrap()
        .simulation()
        .err()
        .unwrap();
    assert_eq!(e.kind(), "io", "{e}");
    assert!(e.to_string().contains("limits.max_input_bytes"), "{e}");
    // /dev/zero as a trace stops at the limit instead of filling memory.
    if std::path::Path::new("/dev/zero").exists() {
        let d = r#"{"cluster": {"generate": {"flavor": "hgx", "racks": 1}},
            "trace": {"file": {"path": "/dev/zero"}}, "config": {"limits": {"max_input_bytes": 1000000}}}"#;
        let e = RunDocument::from_json(d)
            .unwrap()
            .simulation()
            .err()
            .unwrap();
        assert!(e.to_string().contains("limit of 1000000 bytes"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Found by the `sim_input` fuzz target: an unknown empty key at the top of a run
/// document named no field (`invalid config at : unknown field ``…`).
#[test]
fn an_unknown_empty_key_at_the_top_names_the_document() {
    let e = gang_sim::RunDocument::from_json(r#"{"": 1}"#).unwrap_err();
    assert_eq!(e.field(), "document", "{e}");
    let e = SimConfig::from_json(r#"{"": 1}"#).unwrap_err();
    assert_eq!(e.field(), "document", "{e}");
}

/// Found by the `sim_input` fuzz target: an unknown empty key in a trace line named
/// no field.
#[test]
fn an_unknown_empty_key_in_a_trace_line_names_the_line() {
    let e = gang_sim::Trace::from_jsonl(
        r#"{"id": "a", "submit": 0, "duration": 1, "members": 1, "": 2}"#,
    )
    .unwrap_err();
    assert_eq!(e.field(), "line", "{e}");
}

/// The same for an empty CSV column name and an empty Philly key: a field is named.
#[test]
fn empty_column_names_and_keys_name_a_field() {
    let e = gang_sim::Trace::from_csv("id,,submit\n").unwrap_err();
    assert_eq!(e.field(), "header", "{e}");
    let e = gang_sim::import::sacct("job_id,,submit_time\n").unwrap_err();
    assert_eq!(e.field(), "header", "{e}");
    let e = gang_sim::import::philly(r#"[{"jobid": "a", "": 1}]"#).unwrap_err();
    assert_eq!(e.field(), "job", "{e}");
}
