//! Configuration that was accepted silently and gave meaningless results is refused,
//! naming the field (issue 25, item 13).

use gang_sim::{run_json, Experiment, SimConfig};

fn doc(trace: &str, config: &str, cluster: &str) -> String {
    format!(
        r#"{{"cluster": {cluster}, "trace": {{"jsonl": {}}}, "config": {config}}}"#,
        serde_json::to_string(trace).unwrap()
    )
}

const HGX: &str = r#"{"generate": {"flavor": "hgx", "racks": 1}}"#;
const JOB: &str = r#"{"id": "a", "submit": 0, "duration": 60, "members": 2, "gpus": 8}"#;

#[test]
fn an_empty_or_absent_gpu_resource_is_refused() {
    let e = SimConfig::from_json(r#"{"gpu_resource": ""}"#).unwrap_err();
    assert_eq!(e.field(), "gpu_resource");
    let e = run_json(&doc(JOB, r#"{"gpu_resource": "amd.com/gpu"}"#, HGX)).unwrap_err();
    assert_eq!(e.field(), "gpu_resource", "{e}");
    assert!(e.to_string().contains("amd.com/gpu"), "{e}");
    assert!(run_json(&doc(JOB, r#"{"gpu_resource": "cpu"}"#, HGX)).is_ok());
}

#[test]
fn a_used_share_over_100_percent_is_refused() {
    let c = r#"{"generate": {"flavor": "hgx", "racks": 1, "used_pct": 200}}"#;
    let e = run_json(&doc(JOB, "{}", c)).unwrap_err();
    assert_eq!(e.field(), "cluster.generate.used_pct", "{e}");
}

#[test]
fn a_sample_interval_below_a_millisecond_is_refused() {
    let e = SimConfig::from_json(r#"{"sample_interval": 1e-9}"#).unwrap_err();
    assert_eq!(e.field(), "sample_interval");
    assert!(e.to_string().contains("1 ms"), "{e}");
    assert!(SimConfig::from_json(r#"{"sample_interval": 0.001}"#).is_ok());
}

#[test]
fn more_failing_members_than_members_is_refused() {
    let t = r#"{"id": "a", "submit": 0, "duration": 60, "members": 2, "gpus": 8, "failing_members": 100}"#;
    let e = run_json(&doc(t, "{}", HGX)).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        ("invalid_trace", "failing_members"),
        "{e}"
    );
}

#[test]
fn an_experiment_without_variants_is_refused() {
    let e = Experiment::from_json(&format!(
        r#"{{"run": {}, "variants": []}}"#,
        doc(JOB, "{}", HGX)
    ))
    .unwrap_err();
    assert_eq!(e.field(), "variants", "{e}");
}
