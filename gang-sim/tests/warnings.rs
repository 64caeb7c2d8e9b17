//! A run's summary warns about what it accepted but probably was not meant (issue 25
//! items 12 and 13): rows an importer skipped or rounded, a replay with fewer times
//! than `jobs`, a readiness `init_time` longer than its `timeout`. Without any, the
//! summary has no `warnings` (documents stay as they were).

use gang_sim::{run_json, Experiment, RunDocument};

fn summary(doc: &str) -> serde_json::Value {
    let out: serde_json::Value = serde_json::from_str(&run_json(doc).unwrap()).unwrap();
    out["summary"].clone()
}

fn warnings(doc: &str) -> Vec<String> {
    match &summary(doc)["warnings"] {
        serde_json::Value::Null => Vec::new(),
        w => serde_json::from_value(w.clone()).unwrap(),
    }
}

const CLUSTER: &str = r#"{"generate": {"flavor": "hgx", "racks": 1}}"#;
const JOB: &str = r#"{"id": "a", "submit": 0, "duration": 600, "members": 1, "gpus": 1}"#;

fn doc(trace: &str, config: &str) -> String {
    format!(r#"{{"cluster": {CLUSTER}, "trace": {trace}, "config": {config}}}"#)
}

#[test]
fn a_clean_run_has_no_warnings_key() {
    let d = doc(&format!(r#"{{"inline": [{JOB}]}}"#), "{}");
    let out = run_json(&d).unwrap();
    assert!(!out.contains("\"warnings\""), "{out}");
    assert!(warnings(&d).is_empty());
}

#[test]
fn init_time_longer_than_the_readiness_timeout_is_a_warning() {
    let trace = format!(r#"{{"inline": [{JOB}]}}"#);
    let w = warnings(&doc(
        &trace,
        r#"{"readiness": {"init_time": 900, "timeout": 300}}"#,
    ));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("readiness.init_time (900 s) is longer than readiness.timeout (300 s)"),
        "{w:?}"
    );
    // The warning is true: the job never becomes ready.
    let s = summary(&doc(
        &trace,
        r#"{"readiness": {"init_time": 900, "timeout": 300, "max_attempts": 1}}"#,
    ));
    assert_eq!(s["all"]["states"]["failed"], 1, "{s}");
    // Ready exactly at the timeout is in time: no warning for equal times.
    let s = summary(&doc(
        &trace,
        r#"{"readiness": {"init_time": 300, "timeout": 300, "max_attempts": 1}}"#,
    ));
    assert_eq!(s["all"]["states"]["completed"], 1, "{s}");
    // Equal, shorter, or no timeout: no warning.
    for cfg in [
        r#"{"readiness": {"init_time": 300, "timeout": 300}}"#,
        r#"{"readiness": {"init_time": 30}}"#,
        r#"{"readiness": {"init_time": 900, "timeout": null}}"#,
    ] {
        assert!(warnings(&doc(&trace, cfg)).is_empty(), "{cfg}");
    }
}

#[test]
fn a_replay_with_fewer_times_than_jobs_is_a_warning() {
    let gen = |jobs: &str| {
        format!(
            r#"{{"generate": {{{jobs}"arrival": {{"replay": {{"times": [0, 60, 120]}}}}, "max_members": 8}}}}"#
        )
    };
    let d = doc(&gen(r#""jobs": 10, "#), "{}");
    let w = warnings(&d);
    assert_eq!(
        w,
        vec!["trace.generate.arrival.replay has 3 times, fewer than jobs (10): the trace has 3 jobs, one per time"]
    );
    assert_eq!(summary(&d)["all"]["jobs"], 3);
    // `jobs` not given, or as many as the times: nothing to warn about.
    assert!(warnings(&doc(&gen(""), "{}")).is_empty());
    assert!(warnings(&doc(&gen(r#""jobs": 3, "#), "{}")).is_empty());
}

/// A trace file in a temporary folder, removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let p = std::env::temp_dir().join(format!("gang-sim-warn-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        TempFile(p)
    }
    fn path(&self) -> String {
        self.0.to_string_lossy().replace('\\', "/")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn importer_rows_skipped_or_rounded_are_warnings() {
    let f = TempFile::new(
        "sacct.csv",
        "job_id,node_num,gpu_num,submit_time,duration\n\
         1,2,3,0,60\n\
         2,1,1,0,0\n\
         3,1,1,10,60\n\
         4,1,1,20,\n",
    );
    let d = doc(
        &format!(
            r#"{{"file": {{"path": "{}", "format": "sacct"}}}}"#,
            f.path()
        ),
        "{}",
    );
    let w = warnings(&d);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("trace.file: 2 rows skipped (line 3, job \"2\": no run time"),
        "{w:?}"
    );
    assert!(w[0].contains("line 5, job \"4\""), "{w:?}");
    assert!(
        w[1].starts_with("trace.file: 1 row rounded (line 2, job \"1\": gpu_num 3 over 2 nodes"),
        "{w:?}"
    );
    assert_eq!(summary(&d)["all"]["jobs"], 2);
    // The same rows through the document's own way in.
    let doc = RunDocument::from_json(&d).unwrap();
    let (trace, w2) = doc.trace_with_warnings(&doc.cluster().unwrap()).unwrap();
    assert_eq!((trace.jobs.len(), w2), (2, w));
}

#[test]
fn many_skipped_rows_are_counted_not_listed() {
    let mut csv = "job_id,node_num,gpu_num,submit_time,duration\n0,1,1,0,60\n".to_owned();
    for i in 1..=1000 {
        csv.push_str(&format!("{i},1,1,0,0\n"));
    }
    let f = TempFile::new("many.csv", &csv);
    let w = warnings(&doc(
        &format!(
            r#"{{"file": {{"path": "{}", "format": "sacct"}}}}"#,
            f.path()
        ),
        "{}",
    ));
    assert_eq!(w.len(), 1);
    assert!(w[0].starts_with("trace.file: 1000 rows skipped"), "{w:?}");
    assert!(w[0].ends_with("; 997 more)"), "{w:?}");
    assert!(w[0].len() < 400, "{}", w[0].len());
}

#[test]
fn each_variant_of_an_experiment_has_its_own_warnings() {
    let e = Experiment::from_json(&format!(
        r#"{{"run": {{"cluster": {CLUSTER}, "trace": {{"inline": [{JOB}]}}}},
            "variants": [{{"name": "ok"}},
                         {{"name": "slow-start", "config": {{"readiness": {{"init_time": 400}}}}}}]}}"#
    ))
    .unwrap();
    let r = e.run().unwrap();
    assert!(r[0].1.summary.warnings.is_empty());
    assert_eq!(
        r[1].1.summary.warnings.len(),
        1,
        "{:?}",
        r[1].1.summary.warnings
    );
    assert!(r[1].1.summary_json().contains("\"warnings\""));
    assert!(!r[0].1.summary_json().contains("\"warnings\""));
}
