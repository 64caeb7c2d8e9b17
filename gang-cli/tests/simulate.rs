//! `gang simulate`: the guides' experiments from the command line, their conclusions
//! read back from the JSON output, and bad input.

mod common;

use common::{gang, json};

const SIM: &str = "../examples/sim";

fn mean_completion(doc: &serde_json::Value, variant: &str) -> f64 {
    let v = doc["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == variant)
        .unwrap_or_else(|| panic!("no variant {variant}: {doc}"));
    v["summary"]["all"]["completion"]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{variant}: no mean completion"))
}

/// Guide question 1: a small, compute-bound experiment on a busy cluster waits longer
/// under a hard same-rack rule than the rule saves; unconstrained completes sooner.
#[test]
fn a_small_experiment_completes_sooner_unconstrained() {
    let file = format!("{SIM}/01-small-experiment.json");
    let r = gang(&["simulate", &file, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json(&r.stdout);
    assert_eq!(doc["status"], "done");
    let rack = mean_completion(&doc, "rack required");
    let free = mean_completion(&doc, "unconstrained");
    assert!(free < rack, "unconstrained {free} vs rack required {rack}");
    // The text form names every variant on a line of its own.
    let t = gang(&["simulate", &file]);
    assert_eq!(t.code, 0);
    for v in ["rack required", "rack preferred", "unconstrained"] {
        assert!(
            t.stdout.lines().any(|l| l.starts_with(v)),
            "{v} missing:\n{}",
            t.stdout
        );
    }
}

/// Guide question 2: a communication-bound job wins with a block-required rule despite
/// the wait.
#[test]
fn a_communication_bound_job_completes_sooner_in_one_block() {
    let file = format!("{SIM}/02-communication-bound.json");
    let r = gang(&["simulate", &file, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json(&r.stdout);
    let names: Vec<&str> = doc["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let block = names
        .iter()
        .find(|n| n.contains("block"))
        .expect("a block variant");
    let free = names
        .iter()
        .find(|n| n.contains("unconstrained"))
        .expect("an unconstrained variant");
    assert!(mean_completion(&doc, block) < mean_completion(&doc, free));
}

/// `--out DIR` writes each variant's files.
#[test]
fn out_writes_the_files_of_every_variant() {
    let dir = std::env::temp_dir().join(format!("gang-cli-simulate-{}", std::process::id()));
    let file = format!("{SIM}/03a-fits.json");
    let r = gang(&["simulate", &file, "--out", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let variants: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(!variants.is_empty());
    for v in variants {
        let v = v.unwrap().path();
        for f in ["jobs.jsonl", "jobs.csv", "summary.json", "timeline.csv"] {
            assert!(v.join(f).is_file(), "{} has no {f}", v.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A missing file, or a document gang-sim refuses, is exit 2 with the file named.
#[test]
fn bad_simulation_input_is_exit_2_naming_the_file() {
    let r = gang(&["simulate", "no-such-run.json"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no-such-run.json"), "{}", r.stderr);
    let bad = std::env::temp_dir().join(format!("gang-cli-bad-run-{}.json", std::process::id()));
    std::fs::write(
        &bad,
        r#"{"cluster": {"inline": {}}, "trace": {"inline": []}, "config": {"colour": 1}}"#,
    )
    .unwrap();
    let r = gang(&["simulate", bad.to_str().unwrap(), "-o", "json"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let doc = json(&r.stdout);
    assert_eq!(doc["status"], "error");
    assert!(doc["message"].as_str().unwrap().contains("colour"), "{doc}");
    let _ = std::fs::remove_file(&bad);
}

/// `-o json` carries the per-job records, with the GPU-hours held before progress
/// (they were only in `--out` files); the text report has a pre-progress column and
/// prints GPU-hours as GPU-hours, not as a duration (issue 25, item 17).
#[test]
fn json_output_has_per_job_records_and_text_has_pre_progress() {
    let file = format!("{SIM}/01-small-experiment.json");
    let r = gang(&["simulate", &file, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json(&r.stdout);
    for v in doc["variants"].as_array().unwrap() {
        let jobs = v["jobs"]
            .as_array()
            .unwrap_or_else(|| panic!("no jobs: {v}"));
        assert_eq!(
            jobs.len() as u64,
            v["summary"]["all"]["jobs"].as_u64().unwrap()
        );
        let held: f64 = jobs
            .iter()
            .map(|j| j["gpu_hours_before_progress"].as_f64().unwrap())
            .sum();
        let total = v["summary"]["all"]["gpu_hours_before_progress"]
            .as_f64()
            .unwrap();
        assert!(
            (held - total).abs() < 1e-6 * total.max(1.0),
            "{held} vs {total}"
        );
    }
    let t = gang(&["simulate", &file]);
    assert_eq!(t.code, 0);
    let header = t.stdout.lines().find(|l| l.starts_with("variant")).unwrap();
    assert!(header.contains("pre-progress"), "{header}");
    let row = t
        .stdout
        .lines()
        .find(|l| l.starts_with("unconstrained"))
        .unwrap();
    assert_eq!(row.matches("GPU-h").count(), 2, "{row}");
}

/// A run's warnings (rows the importer skipped or rounded, a readiness `init_time`
/// longer than its `timeout`) are printed on stderr as `gang: warning: …` and carried
/// in the JSON summary; a clean run prints none (issue 25 items 12 and 13).
#[test]
fn simulate_prints_the_runs_warnings_on_stderr() {
    let dir = std::env::temp_dir().join(format!("gang-cli-sim-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("t.csv"),
        "job_id,node_num,gpu_num,submit_time,duration\n1,2,3,0,60\n2,1,1,0,0\n3,1,1,5,60\n",
    )
    .unwrap();
    let run = |config: &str| {
        let f = dir.join("run.json");
        std::fs::write(
            &f,
            format!(
                r#"{{"cluster": {{"generate": {{"racks": 1}}}},
                    "trace": {{"file": {{"path": "t.csv", "format": "sacct"}}}},
                    "config": {config}}}"#
            ),
        )
        .unwrap();
        (
            gang(&["simulate", f.to_str().unwrap()]),
            gang(&["simulate", f.to_str().unwrap(), "-o", "json"]),
        )
    };
    let (text, j) = run(r#"{"readiness": {"init_time": 900, "timeout": 300}}"#);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let lines: Vec<&str> = text.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", text.stderr);
    assert!(lines[0].starts_with("gang: warning: readiness.init_time (900 s) is longer"));
    assert!(
        lines[1].starts_with("gang: warning: trace.file: 1 row skipped (line 3, job \"2\""),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("gang: warning: trace.file: 1 row rounded (line 2"));
    assert_eq!(j.code, 0);
    assert_eq!(j.stderr, text.stderr);
    let w = &json(&j.stdout)["variants"][0]["summary"]["warnings"];
    assert_eq!(w.as_array().map(Vec::len), Some(3), "{w}");
    // Without them: nothing on stderr, no warnings in the summary.
    std::fs::write(
        dir.join("t.csv"),
        "job_id,node_num,gpu_num,submit_time,duration\n1,2,4,0,60\n",
    )
    .unwrap();
    let (text, j) = run("{}");
    assert_eq!((text.code, text.stderr.as_str()), (0, ""));
    assert!(json(&j.stdout)["variants"][0]["summary"]
        .get("warnings")
        .is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two variants whose names make one `--out` folder (`a b`, `a-b`) overwrote each
/// other's files; now refused before anything runs, naming the variant, both names and
/// the folder, long names cut (issue 25, item 13).
#[test]
fn variants_sharing_an_out_folder_are_refused() {
    let dir = std::env::temp_dir().join(format!("gang-cli-folders-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = "x".repeat(10_000);
    for (first, second, shown) in [
        (
            "a b",
            "a-b",
            "\"a-b\" and \"a b\" both write to the folder \"a-b\"",
        ),
        (&format!("{long} "), &format!("{long}-"), "… (10001 bytes)"),
    ] {
        let doc = serde_json::json!({
            "description": "two names, one folder",
            "run": {"cluster": {"generate": {"racks": 1}},
                    "trace": {"inline": [{"id": "a", "submit": 0, "duration": 60, "members": 1}]}},
            "variants": [{"name": first, "config": {}}, {"name": second, "config": {}}],
        });
        let file = dir.join("experiment.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = dir.join("out");
        let r = gang(&[
            "simulate",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("variants[1].name"), "{}", r.stderr);
        assert!(r.stderr.contains(shown), "{}", r.stderr);
        assert!(
            r.stderr.len() < 600,
            "{} bytes: {}",
            r.stderr.len(),
            r.stderr
        );
        assert!(!out.exists(), "nothing is written");
        // Without --out the names are fine.
        let r = gang(&["simulate", file.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
