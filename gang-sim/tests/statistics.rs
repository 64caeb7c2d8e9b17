//! Issue 26: completion statistics that do not hide failed jobs (censored percentiles,
//! counts, goodput), offered load and generators that take a target load, generated
//! clusters of any rack size. Expected values are worked out by hand in the comments.

use gang_sim::{
    offered_load, run_json, summary_row, CompletionBasis, JobSpec, RunDocument, Trace,
    SUMMARY_COLUMNS,
};
use serde_json::Value;

fn run(doc: &str) -> Value {
    serde_json::from_str(&run_json(doc).unwrap()).unwrap()
}

/// One 8-GPU node (one rack). Job `ok` (1 GPU, 600 s) completes at 600 s; job `bad`
/// (1 GPU, 600 s) has a member that never becomes ready: readiness timeout 100 s, one
/// attempt, so it fails at 100 s. Job `late` (8 GPUs, 3000 s) waits for `ok` and runs
/// 600..3600. The run ends at 3600 s.
const DOC: &str = r#"{
  "cluster": {"inline": {"topology": {"levels": ["rack"]}, "nodes": [
     {"name": "n1", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}}]}},
  "trace": {"inline": [
     {"id": "ok", "submit": 0, "duration": 600, "members": 1, "gpus": 1},
     {"id": "bad", "submit": 0, "duration": 600, "members": 1, "gpus": 1, "failing_members": 1},
     {"id": "late", "submit": 0, "duration": 3000, "members": 1, "gpus": 8}]},
  "config": {"readiness": {"init_time": 0, "timeout": 100, "max_attempts": 1}}
}"#;

#[test]
fn failed_jobs_are_censored_at_the_end_of_the_run_not_left_out() {
    let out = run(DOC);
    let all = &out["summary"]["all"];
    assert_eq!(all["states"]["failed"], 1, "{all}");
    assert_eq!(all["states"]["completed"], 2);
    assert_eq!(out["summary"]["end_time"], 3600.0);
    // Survivors: 600 and 3600; the failed job is invisible.
    assert_eq!(all["completion"]["count"], 2);
    assert_eq!(all["completion"]["max"], 3600.0);
    // Censored: 600, 3600 (completed) and 3600 (failed: submitted at 0, run ended at
    // 3600): median 3600, mean 2600.
    assert_eq!(all["censored"], 1);
    assert_eq!(all["completion_censored"]["count"], 3);
    assert_eq!(all["completion_censored"]["p50"], 3600.0);
    assert_eq!(all["completion_censored"]["mean"], 2600.0);
    // The survivor median is 600 (nearest rank of 2 values): the failure made it look fast.
    assert_eq!(all["completion"]["p50"], 600.0);

    let row = summary_row("v", &out["summary"], None, CompletionBasis::Censored).unwrap();
    assert_eq!(
        row.keys().map(String::as_str).collect::<Vec<_>>(),
        SUMMARY_COLUMNS
    );
    assert_eq!(row["completion_basis"], "censored");
    assert_eq!(row["completion_p50"], 3600.0);
    assert_eq!(
        (row["completed"].clone(), row["failed"].clone()),
        (2.into(), 1.into())
    );
    let survivors = summary_row("v", &out["summary"], None, CompletionBasis::Completed).unwrap();
    assert_eq!(survivors["completion_basis"], "completed");
    assert_eq!(survivors["completion_p50"], 600.0);
    assert!("infinite".parse::<CompletionBasis>().is_err());
}

#[test]
fn goodput_is_useful_over_held_gpu_hours() {
    let out = run(DOC);
    let all = &out["summary"]["all"];
    let (useful, held) = (
        all["gpu_hours_useful"].as_f64().unwrap(),
        all["gpu_hours_held"].as_f64().unwrap(),
    );
    // Useful: 1 GPU × 600 s + 8 GPUs × 3000 s = 24,600 GPU-s; the failed job held its
    // GPU 100 s for nothing: held 24,700 GPU-s.
    assert!((useful - 24_600.0 / 3600.0).abs() < 1e-9, "{useful}");
    assert!((held - 24_700.0 / 3600.0).abs() < 1e-9, "{held}");
    assert_eq!(all["goodput"].as_f64().unwrap(), useful / held);
}

#[test]
fn offered_load_is_demand_over_gpus_times_the_submission_window() {
    // Three jobs a half hour apart: window 1 h × 3/2 = 1.5 h. Demand: 2×4 GPUs × 1 h +
    // 8 GPUs × 0.5 h + 1 GPU × 2 h = 14 GPU-h. On 16 GPUs: 14 / (16 × 1.5) = 0.58333…
    let t = Trace::new(vec![
        JobSpec::new("a", 0.0, 3600.0, 2, 4),
        JobSpec::new("b", 1800.0, 1800.0, 1, 8),
        JobSpec::new("c", 3600.0, 7200.0, 1, 1),
    ]);
    let load = offered_load(&t, 16.0, "nvidia.com/gpu").unwrap();
    assert!((load - 14.0 / 24.0).abs() < 1e-12, "{load}");
    assert!(offered_load(&t, 0.0, "nvidia.com/gpu").is_err());
}

#[test]
fn a_generated_trace_with_a_target_load_has_that_load_on_its_cluster() {
    for target in [0.3, 0.9] {
        let doc = format!(
            r#"{{"cluster": {{"generate": {{"racks": 2}}}},
                 "trace": {{"generate": {{"jobs": 400, "seed": 3, "load": {target}}}}}}}"#
        );
        let d = RunDocument::from_json(&doc).unwrap();
        let cluster = d.cluster().unwrap();
        let trace = d.trace(&cluster).unwrap();
        // 2 racks × 32 nodes × 8 GPUs.
        assert_eq!(gang_sim::cluster_gpus(&cluster, "nvidia.com/gpu"), 512.0);
        let got = offered_load(&trace, 512.0, "nvidia.com/gpu").unwrap();
        assert!((got - target).abs() < 1e-4, "{got} vs {target}");
    }
    let bad = r#"{"cluster": {"generate": {"racks": 1}}, "trace": {"generate": {"jobs": 10, "load": -1}}}"#;
    let d = RunDocument::from_json(bad).unwrap();
    let err = d.trace(&d.cluster().unwrap()).unwrap_err();
    assert_eq!(err.field(), "trace.generate.load");
}

#[test]
fn generated_racks_take_any_number_of_nodes() {
    let d = RunDocument::from_json(
        r#"{"cluster": {"generate": {"racks": 3, "nodes_per_rack": 5}}, "trace": {"inline": []}}"#,
    )
    .unwrap();
    let c = d.cluster().unwrap();
    assert_eq!(c.len(), 15);
    let doc: Value = serde_json::from_str(&c.to_json()).unwrap();
    let racks: std::collections::BTreeSet<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["labels"]["topology.example.com/rack"].as_str().unwrap())
        .collect();
    assert_eq!(racks.len(), 3);
    let zero = RunDocument::from_json(
        r#"{"cluster": {"generate": {"nodes_per_rack": 0}}, "trace": {"inline": []}}"#,
    )
    .unwrap();
    assert_eq!(
        zero.cluster().unwrap_err().field(),
        "cluster.generate.nodes_per_rack"
    );
}

#[test]
fn every_summary_shows_the_slowdown_tables_in_force() {
    let doc = r#"{"cluster": {"generate": {"racks": 1}}, "trace": {"inline": []},
                  "config": {"slowdown": {"medium": [1.0, 9.0]}, "default_sensitivity": "low"}}"#;
    let out = run(doc);
    let s = &out["summary"];
    // The override replaces one class; the others stay the defaults.
    assert_eq!(s["slowdown"]["medium"], serde_json::json!([1.0, 9.0]));
    assert_eq!(
        s["slowdown"]["high"],
        serde_json::json!([1.0, 2.5, 3.5, 6.0])
    );
    assert_eq!(s["default_sensitivity"], "low");
    // A generated cluster: zone > block > rack, so node, rack, block, zone, cluster.
    let spans: Vec<&str> = s["slowdown_spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        spans,
        [
            "node",
            "topology.example.com/rack",
            "topology.example.com/block",
            "topology.example.com/zone",
            "cluster"
        ]
    );
}

#[test]
fn the_source_keys_and_formats_are_the_ones_a_run_document_reads() {
    // Every listed key parses as a source (its body's own errors aside); another does not.
    for key in gang_sim::CLUSTER_SOURCES {
        let doc = format!(r#"{{"cluster": {{"{key}": null}}, "trace": {{"inline": []}}}}"#);
        if let Err(e) = RunDocument::from_json(&doc) {
            assert!(!e.to_string().contains("unknown variant"), "{key}: {e}");
        }
    }
    for key in gang_sim::TRACE_SOURCES {
        let doc = format!(r#"{{"cluster": {{"generate": {{}}}}, "trace": {{"{key}": null}}}}"#);
        if let Err(e) = RunDocument::from_json(&doc) {
            assert!(!e.to_string().contains("unknown variant"), "{key}: {e}");
        }
    }
    let bad = r#"{"cluster": {"nowhere": null}, "trace": {"inline": []}}"#;
    assert!(RunDocument::from_json(bad)
        .unwrap_err()
        .to_string()
        .contains("unknown variant"));
    // Every listed format is read (an empty file is an empty trace or a format's own
    // error, never "unknown format"); another is "unknown format".
    let dir = std::env::temp_dir().join(format!("gang-sim-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("empty.txt");
    std::fs::write(&path, "").unwrap();
    let p = path.to_string_lossy().replace('\\', "/");
    for fmt in gang_sim::TRACE_FORMATS.iter().chain(["tsv"].iter()) {
        let doc = format!(
            r#"{{"cluster": {{"generate": {{"racks": 1}}}}, "trace": {{"file": {{"path": "{p}", "format": "{fmt}"}}}}}}"#
        );
        let d = RunDocument::from_json(&doc).unwrap();
        let got = d.trace(&d.cluster().unwrap());
        let unknown = matches!(&got, Err(e) if e.to_string().contains("unknown format"));
        assert_eq!(unknown, *fmt == "tsv", "{fmt}: {got:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 26 item 6: utilisation over the makespan counted the drain tail, where the
/// cluster empties after the last arrival whatever the policy. One 8-GPU node: `a`
/// (8 GPUs, 3600 s) runs 0..3600; `b` (4 GPUs, 3600 s), submitted at 1800, waits for it
/// and runs 3600..7200. Over the makespan (0..7200) the node is 8/8 then 4/8 held:
/// 0.75. Over the arrival window (0..1800, first to last submission) it is full: 1.0.
/// With both submitted at 0 there is no such window: the makespan, named so.
#[test]
fn utilisation_is_averaged_over_the_arrivals_and_says_so() {
    let doc = |b_submit: u32| {
        format!(
            r#"{{"cluster": {{"inline": {{"topology": {{"levels": ["rack"]}}, "nodes": [
                {{"name": "n1", "labels": {{"rack": "a"}}, "capacity": {{"nvidia.com/gpu": 8}}}}]}}}},
              "trace": {{"inline": [
                {{"id": "a", "submit": 0, "duration": 3600, "members": 1, "gpus": 8}},
                {{"id": "b", "submit": {b_submit}, "duration": 3600, "members": 1, "gpus": 4}}]}},
              "config": {{"readiness": {{"init_time": 0}}}}}}"#
        )
    };
    let s = &run(&doc(1800))["summary"];
    assert_eq!(s["makespan"], 7200.0);
    assert_eq!(s["mean_utilisation"], 1.0, "{s}");
    assert_eq!(s["mean_busy"], 1.0);
    assert_eq!(s["utilisation_window"]["over"], "arrivals");
    assert_eq!(
        (
            &s["utilisation_window"]["start"],
            &s["utilisation_window"]["end"]
        ),
        (&Value::from(0.0), &Value::from(1800.0))
    );
    let row = summary_row("x", s, None, CompletionBasis::Censored).unwrap();
    assert_eq!(row["utilisation_window"], "arrivals");
    assert_eq!(row["cluster_gpus"], 8.0);
    let s = &run(&doc(0))["summary"];
    assert_eq!(s["utilisation_window"]["over"], "makespan", "{s}");
    assert_eq!(s["mean_utilisation"], 0.75);
    assert_eq!(s["utilisation_window"]["end"], 7200.0);
}
