//! Bad input: a typed error naming the line and field, or a final state saying why.

use gang_sim::{Cluster, FinalState, NodeSpec, SimConfig, SimError, Simulation, Trace};

fn cluster() -> Cluster {
    let node = |n: &str, r: &str| {
        NodeSpec::new(n)
            .label("topology.example.com/rack", r)
            .capacity("nvidia.com/gpu", 4)
            .capacity("cpu", 16)
    };
    Cluster::from_nodes(
        &["topology.example.com/rack"],
        vec![node("a1", "a"), node("a2", "a"), node("b1", "b")],
    )
    .unwrap()
}

/// (line, field) of a trace error.
fn at(e: &SimError) -> (usize, &str) {
    match e {
        SimError::Trace { line, field, .. } => (*line, field.as_str()),
        other => panic!("expected a trace error, got {other}"),
    }
}

const OK: &str = r#"{"id": "ok", "submit": 0, "duration": 10, "members": 1, "gpus": 1}"#;

fn jsonl_err(bad: &str) -> SimError {
    Trace::from_jsonl(&format!("{OK}\n\n{bad}\n")).unwrap_err()
}

#[test]
fn malformed_lines_name_line_and_column() {
    let e = jsonl_err(r#"{"id": "x", "submit": 0,"#);
    assert_eq!(at(&e).0, 3);
    assert!(at(&e).1.starts_with("column "), "{e}");
    assert!(e.to_string().contains("malformed JSON"));
    let e = jsonl_err("[1, 2]");
    assert_eq!(at(&e), (3, "line"));
}

#[test]
fn unknown_fields_and_columns_are_errors() {
    let e = jsonl_err(r#"{"id": "x", "submit": 0, "duration": 1, "members": 1, "colour": "red"}"#);
    assert_eq!(at(&e), (3, "colour"));
    let e = Trace::from_csv("id,submit,duration,members\nx,0,1,1\n").map(|t| t.jobs.len());
    assert_eq!(e.unwrap(), 1);
    let e = Trace::from_csv("id,submit,duration,members,colour\nx,0,1,1,red\n").unwrap_err();
    assert_eq!(at(&e), (1, "colour"));
    // Inside a role: gang-core's own field names.
    let e = jsonl_err(
        r#"{"id": "x", "submit": 0, "duration": 1, "roles": [{"name": "w", "count": 1, "size": 2}]}"#,
    );
    assert_eq!(at(&e).0, 3);
    assert!(at(&e).1.starts_with("roles[0]"), "{e}");
}

#[test]
fn bad_values_name_their_field() {
    let cases = [
        (
            r#"{"id": "x", "submit": 0, "duration": -5, "members": 1}"#,
            "duration",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 0, "members": 1}"#,
            "duration",
        ),
        (
            r#"{"id": "x", "submit": -1, "duration": 5, "members": 1}"#,
            "submit",
        ),
        (r#"{"id": "x", "duration": 5, "members": 1}"#, "submit"),
        (r#"{"id": "x", "submit": 0, "duration": 5}"#, "roles"),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": -2}"#,
            "members",
        ),
        (
            r#"{"id": "x", "submit": 9, "duration": 5, "members": 1, "cancel": 3}"#,
            "cancel",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "init_failure": 2}"#,
            "init_failure",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "policy": "sideways"}"#,
            "policy",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "recovery": "pray"}"#,
            "recovery",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "slowdown": []}"#,
            "slowdown",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "checkpoint": 0}"#,
            "checkpoint",
        ),
        (
            r#"{"id": "ok", "submit": 0, "duration": 5, "members": 1}"#,
            "id",
        ),
        (
            r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "roles": []}"#,
            "members",
        ),
    ];
    for (line, field) in cases {
        let e = jsonl_err(line);
        assert_eq!(at(&e), (3, field), "{line}: {e}");
    }
    let e = Trace::from_csv("id,submit,duration,members\nx,0,soon,1\n").unwrap_err();
    assert_eq!(at(&e), (2, "duration"));
    let e = Trace::from_csv("id,submit,duration,members\nx,0,1\n").unwrap_err();
    assert_eq!(at(&e), (2, "csv"));
}

fn sim_err(job: &str, config: &str) -> SimError {
    let trace = Trace::from_jsonl(&format!("{OK}\n{job}\n")).unwrap();
    let config = SimConfig::from_json(config).unwrap();
    match Simulation::new(cluster(), trace, config) {
        Ok(_) => panic!("{job} should be rejected"),
        Err(e) => e,
    }
}

#[test]
fn unknown_levels_classes_and_invalid_requests() {
    // A job's own policy: the job's line.
    let e = sim_err(
        r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "policy": "required(zone)"}"#,
        "{}",
    );
    assert_eq!(at(&e), (2, "policy"));
    assert!(e.to_string().contains("unknown level \"zone\""), "{e}");
    // The configuration's policy: the configuration's field.
    let e = sim_err(
        r#"{"id": "x", "submit": 0, "duration": 5, "members": 1}"#,
        r#"{"policy": "timed(zone, 60)"}"#,
    );
    assert_eq!((e.kind(), e.field()), ("invalid_config", "policy"));
    let e = sim_err(
        r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "sensitivity": "extreme"}"#,
        "{}",
    );
    assert_eq!(at(&e), (2, "sensitivity"));
    // gang-core rejects the request: its field, on the job's line.
    let e = sim_err(
        r#"{"id": "x", "submit": 0, "duration": 5, "members": 2, "min_members": 3}"#,
        "{}",
    );
    assert_eq!(at(&e).0, 2);
    assert!(at(&e).1.contains("min_count"), "{e}");
    let e = sim_err(
        r#"{"id": "x", "submit": 0, "duration": 5, "members": 1, "requests": {"cpu": "lots"}}"#,
        "{}",
    );
    assert_eq!(at(&e).0, 2);
    assert!(at(&e).1.contains("cpu"), "{e}");
    // Short level names resolve when unique.
    let trace = Trace::from_jsonl(&format!("{OK}\n")).unwrap();
    let config = SimConfig::from_json(r#"{"policy": "required(rack)"}"#).unwrap();
    assert!(Simulation::new(cluster(), trace, config).is_ok());
}

#[test]
fn bad_configuration_names_its_field() {
    for (text, field) in [
        (
            r#"{"readiness": {"init_failure": 1.5}}"#,
            "readiness.init_failure",
        ),
        (
            r#"{"readiness": {"max_attempts": 0}}"#,
            "readiness.max_attempts",
        ),
        (
            r#"{"readiness": {"backoff_factor": 0.5}}"#,
            "readiness.backoff_factor",
        ),
        (
            r#"{"failures": {"repair_time": -1}}"#,
            "failures.repair_time",
        ),
        (r#"{"slowdown": {"low": [1, -2]}}"#, "slowdown.low"),
        (r#"{"default_sensitivity": "nope"}"#, "default_sensitivity"),
        (r#"{"sample_interval": 0}"#, "sample_interval"),
        (
            r#"{"queue": {"discipline": "lottery"}}"#,
            "queue.discipline",
        ),
        (r#"{"policy": {"kind": "required"}}"#, "policy"),
        (r#"{"seed": "one"}"#, "seed"),
    ] {
        let e = SimConfig::from_json(text).unwrap_err();
        assert_eq!(
            (e.kind(), e.field()),
            ("invalid_config", field),
            "{text}: {e}"
        );
    }
    let trace = Trace::from_jsonl(OK).unwrap();
    let config =
        SimConfig::from_json(r#"{"failures": {"scheduled": [{"node": "zz", "at": 5}]}}"#).unwrap();
    let e = Simulation::new(cluster(), trace, config).err().unwrap();
    assert_eq!(e.field(), "failures.scheduled[0].node");
}

#[test]
fn jobs_that_can_never_fit_end_with_the_diagnosis_and_are_not_retried() {
    let trace = Trace::from_jsonl(&format!(
        "{OK}\n{}\n{}\n{}\n",
        r#"{"id": "rack9", "submit": 0, "duration": 5, "members": 9, "gpus": 1, "policy": "required(rack)"}"#,
        r#"{"id": "huge", "submit": 0, "duration": 5, "members": 1, "gpus": 5}"#,
        r#"{"id": "pods", "submit": 0, "duration": 5, "members": 2, "gpus": 5, "policy": "no-gang"}"#,
    ))
    .unwrap();
    let config = SimConfig::from_json(r#"{"check_invariants": true}"#).unwrap();
    let r = Simulation::new(cluster(), trace, config)
        .unwrap()
        .run()
        .unwrap();
    let rack9 = r.job("rack9").unwrap();
    assert_eq!((rack9.state, rack9.attempts), (FinalState::NeverFits, 0));
    assert!(
        rack9
            .reason
            .contains("gang rack9 (9 worker) does not fit in one rack"),
        "{}",
        rack9.reason
    );
    let huge = r.job("huge").unwrap();
    assert_eq!(huge.state, FinalState::NeverFits);
    assert!(huge.reason.contains("too small"), "{}", huge.reason);
    assert_eq!(r.job("pods").unwrap().state, FinalState::NeverFits);
    assert!(r
        .jobs
        .iter()
        .filter(|j| j.state == FinalState::NeverFits)
        .all(|j| j.gpu_hours_held == 0.0));
    assert_eq!(r.job("ok").unwrap().state, FinalState::Completed);
    // Reported at submission: the run is over as soon as `ok` is.
    assert_eq!(r.summary.end_time, 70.0);
}

#[test]
fn run_documents_report_files_and_formats() {
    let e = gang_sim::run_json(
        r#"{"cluster": {"file": "/nonexistent/c.json"}, "trace": {"jsonl": ""}}"#,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "io");
    let e = gang_sim::run_json(
        r#"{"cluster": {"generate": {"flavor": "dgx"}}, "trace": {"jsonl": ""}}"#,
    )
    .unwrap_err();
    assert_eq!(e.field(), "cluster.generate.flavor");
    let e =
        gang_sim::run_json(r#"{"cluster": {"generate": {}}, "trace": {"jsonl": ""}, "extra": 1}"#)
            .unwrap_err();
    assert_eq!(e.kind(), "invalid_config");
    let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
    assert_eq!(v["kind"], "invalid_config");
    let e =
        gang_sim::run_json(r#"{"cluster": {"generate": {}}, "trace": {"jsonl": "{\"id\": 1}"}}"#)
            .unwrap_err();
    assert_eq!((e.kind(), e.field()), ("invalid_trace", "submit"));
}

/// What gang-core rejected carries gang-core's kind (`SimError::core_kind`), so faces
/// map it without reading the message; what the simulator checks itself carries none.
#[test]
fn errors_from_gang_core_carry_its_kind() {
    use gang_core::ErrorKind;
    let sim = |job: &str| {
        let trace = Trace::from_jsonl(&format!("{OK}\n{job}\n"))?;
        Simulation::new(cluster(), trace, SimConfig::default()).map(|_| ())
    };
    let base = r#""id": "x", "submit": 0, "duration": 10, "members": 2"#;
    let cases = [
        (
            format!(r#"{{{base}, "requests": {{"cpu": "lots"}}}}"#),
            Some(ErrorKind::InvalidQuantity),
        ),
        (
            format!(r#"{{{base}, "min_members": 3}}"#),
            Some(ErrorKind::InvalidRequest),
        ),
        (format!(r#"{{{base}, "policy": "required(blok)"}}"#), None),
        (format!(r#"{{{base}, "sensitivity": "extreme"}}"#), None),
    ];
    for (job, kind) in cases {
        let e = sim(&job).unwrap_err();
        assert_eq!((e.kind(), e.core_kind()), ("invalid_trace", kind), "{e}");
        let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v["core_kind"].as_str(), kind.map(ErrorKind::as_str), "{v}");
    }
    // The cluster: gang-core's kind of what it rejects.
    let e = Cluster::from_json(
        r#"{"topology": {"levels": []}, "nodes": [{"name": "a", "capacity": {"gpu": "x"}}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.core_kind()),
        ("invalid_cluster", Some(ErrorKind::InvalidQuantity))
    );
    let e = Cluster::from_json(
        r#"{"topology": {"levels": []}, "nodes": [{"name": "a"}, {"name": "a"}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.core_kind()),
        ("invalid_cluster", Some(ErrorKind::InvalidInventory))
    );
    // A configuration the simulator checks itself: no core kind.
    let e = SimConfig::from_json(r#"{"horizon": -1}"#).unwrap_err();
    assert_eq!((e.kind(), e.core_kind()), ("invalid_config", None));
}

/// Errors in a document quoted serde_json's "at line 1 column 204": the position in a
/// document the user never saw when `gang.sim` or an experiment built it. They name
/// the user's field instead, and no position (issue 26, item 7).
#[test]
fn document_errors_name_the_field_not_a_position_in_the_text() {
    let doc = r#"{"cluster": {"generate": {"racks": 1}}, "trace": {"inline": []},
        "config": {"readiness": {"timeout": "soon"}}}"#;
    let e = gang_sim::run_json(doc).unwrap_err();
    assert_eq!(e.field(), "config.readiness.timeout", "{e}");
    assert!(!e.to_string().contains("column"), "{e}");
    let e = SimConfig::from_json(r#"{"seed": "one"}"#).unwrap_err();
    assert_eq!(e.field(), "seed", "{e}");
    assert!(!e.to_string().contains(" at line "), "{e}");
    // Trailing text after the document is still refused (naming the document).
    let e = SimConfig::from_json(r#"{} x"#).unwrap_err();
    assert_eq!(e.field(), "document", "{e}");
    assert!(!e.to_string().contains(" at line "), "{e}");
    // A cluster gang-core reads (an inventory document with reservations: its own
    // serde error).
    let e = Cluster::from_json(r#"{"reservations": 5, "topology": {"levels": []}, "nodes": []}"#)
        .unwrap_err();
    assert!(!e.to_string().contains(" at line "), "{e}");
}

/// A 100 KB policy, key, value, level, resource, node name or sensitivity was echoed
/// whole in the message; each word longer than 300 characters is cut now, its length in
/// bytes after it, while `field()` keeps the text whole (issue 25, item 9).
#[test]
fn a_huge_value_is_cut_in_every_message() {
    let x = "x".repeat(100_000);
    let job = r#"{"id": "a", "submit": 0, "duration": 60, "members": 1, "gpus": 1}"#;
    let with = |key: &str, value: &str| job.replacen('}', &format!(", {key}: {value}}}"), 1);
    let run = |trace: &str, config: &str, cluster: &str| {
        format!(
            r#"{{"cluster": {cluster}, "trace": {{"jsonl": {}}}, "config": {config}}}"#,
            serde_json::to_string(trace).unwrap()
        )
    };
    let gen = r#"{"generate": {"racks": 1}}"#;
    let inline = format!(
        r#"{{"inline": {{"topology": {{"levels": ["rack"]}}, "nodes": [{{"name": "{x}", "labels": {{"rack": "a"}}, "capacity": {{"nvidia.com/gpu": 8}}}}]}}}}"#
    );
    let q = format!("\"{x}\"");
    let docs = [
        run(job, &format!(r#"{{"policy": "{x}"}}"#), gen),
        run(job, &format!(r#"{{"{x}": 1}}"#), gen),
        run(job, &format!(r#"{{"gpu_resource": "{x}"}}"#), gen),
        run(
            job,
            &format!(r#"{{"failures": {{"scheduled": [{{"node": "{x}", "at": 1}}]}}}}"#),
            gen,
        ),
        run(
            &with("\"policy\"", &format!("\"required({x})\"")),
            "{}",
            gen,
        ),
        run(&with("\"sensitivity\"", &q), "{}", gen),
        run(&job.replace("60", &q), "{}", gen),
        run(job, "{}", &inline),
    ];
    for d in &docs {
        let e = gang_sim::run_json(d).unwrap_err();
        let m = e.to_string();
        assert!(m.len() < 1500, "{} bytes: {}", m.len(), &m[..300]);
        assert!(m.contains("bytes)"), "{m}");
    }
    let csv = format!("id,submit,duration,members\na,{x},1,1\n");
    let m = Trace::from_csv(&csv).unwrap_err().to_string();
    assert!(m.len() < 1500 && m.contains("bytes)"), "{m}");
    // Many short words: the first 1,000 characters of the part.
    let spaced = "ab ".repeat(10_000);
    let e =
        gang_sim::run_json(&run(job, &format!(r#"{{"policy": "{spaced}"}}"#), gen)).unwrap_err();
    let m = e.to_string();
    assert!(m.len() < 1500 && m.contains("bytes in all)"), "{m}");
    assert!(gang_core::cut_words(&x).len() < 300);
}
