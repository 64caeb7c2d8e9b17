//! A key given twice in a trace line or a run document is refused (issue 25 item 10,
//! gang-sim's paths), naming the line (or document), the job and the field; before,
//! serde_json's `Value` kept the last one silently.

use gang_sim::import::philly;
use gang_sim::{Experiment, RunDocument, SimConfig, SimError, Trace};

fn trace_err(r: Result<Trace, SimError>) -> (usize, String, String) {
    match r {
        Err(SimError::Trace {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("expected a trace error, got {other:?}"),
    }
}

const OK: &str = r#"{"id": "ok", "submit": 0, "duration": 10, "members": 1, "gpus": 1}"#;

#[test]
fn a_jsonl_line_with_a_key_twice_names_line_job_and_field() {
    let bad = r#"{"id": "a", "submit": 0, "duration": 10, "members": 1, "gpus": 1, "gpus": 2}"#;
    let (line, field, msg) = trace_err(Trace::from_jsonl(&format!("{OK}\n\n{bad}\n")));
    assert_eq!((line, field.as_str()), (3, "gpus"), "{msg}");
    assert_eq!(msg, r#"key "gpus" given twice in job "a""#);
    // Inside a role's requests: the path to it.
    let bad = r#"{"id": 7, "submit": 0, "duration": 10, "roles": [{"name": "w", "count": 1, "requests": {"cpu": 1, "cpu": 2}}]}"#;
    let (line, field, msg) = trace_err(Trace::from_jsonl(bad));
    assert_eq!(
        (line, field.as_str()),
        (1, "roles[0].requests.cpu"),
        "{msg}"
    );
    assert!(msg.ends_with("given twice in job 7"), "{msg}");
    // The id itself twice: no job to name but the key.
    let bad = r#"{"id": "a", "id": "b", "submit": 0, "duration": 10, "members": 1}"#;
    let (_, field, msg) = trace_err(Trace::from_jsonl(bad));
    assert_eq!(field, "id", "{msg}");
    // The same line with the key once reads.
    let once = r#"{"id": "a", "submit": 0, "duration": 10, "members": 1, "gpus": 2}"#;
    assert_eq!(Trace::from_jsonl(once).unwrap().jobs.len(), 1);
}

#[test]
fn a_long_key_is_cut_in_the_message() {
    let k = "k".repeat(10_000);
    let bad = format!(
        r#"{{"id": "a", "submit": 0, "duration": 10, "members": 1, "selector": {{"{k}": "x", "{k}": "y"}}}}"#
    );
    let (_, _, msg) = trace_err(Trace::from_jsonl(&bad));
    assert!(msg.len() < 200, "{}", msg.len());
    assert!(msg.contains("10000 characters"), "{msg}");
}

#[test]
fn a_csv_json_cell_with_a_key_twice_names_the_column() {
    let csv =
        "id,submit,duration,members,requests\nj1,0,10,1,\"{\"\"cpu\"\": 1, \"\"cpu\"\": 2}\"\n";
    let (line, field, msg) = trace_err(Trace::from_csv(csv));
    assert_eq!((line, field.as_str()), (2, "requests.cpu"), "{msg}");
    assert!(msg.contains(r#"job "j1""#), "{msg}");
}

#[test]
fn run_documents_refuse_a_key_twice_at_any_depth() {
    let doc = |cfg: &str, trace: &str| {
        format!(
            r#"{{"cluster": {{"generate": {{"racks": 1}}}}, "trace": {trace}, "config": {cfg}}}"#
        )
    };
    let inline =
        r#"{"inline": [{"id": "a", "submit": 0, "duration": 60, "members": 1, "gpus": 1}]}"#;
    assert!(RunDocument::from_json(&doc("{}", inline)).is_ok());
    for (cfg, trace, field) in [
        // A map (slowdown tables): last-wins before.
        (
            r#"{"slowdown": {"low": [1, 2], "low": [1, 9]}}"#,
            inline,
            "config.slowdown.low",
        ),
        // A struct field.
        (r#"{"seed": 1, "seed": 2}"#, inline, "config.seed"),
        // A policy (read through a JSON value).
        (
            r#"{"policy": {"kind": "required", "level": "rack", "level": "block"}}"#,
            inline,
            "config.policy.level",
        ),
        // An inline job (a JSON value inside the document).
        (
            "{}",
            r#"{"inline": [{"id": "a", "submit": 0, "duration": 60, "members": 1, "members": 4}]}"#,
            "trace.inline[0].members",
        ),
    ] {
        match RunDocument::from_json(&doc(cfg, trace)) {
            Err(SimError::Config {
                field: f, message, ..
            }) => {
                assert_eq!(f, field, "{message}");
                assert!(message.contains("given twice"), "{message}");
            }
            other => panic!("{cfg} {trace}: {other:?}"),
        }
    }
    // A JSON Lines string inside the document: the trace's own check, naming the line.
    let jsonl = r#"{"jsonl": "{\"id\": \"a\", \"submit\": 0, \"submit\": 5, \"duration\": 60, \"members\": 1}"}"#;
    let d = RunDocument::from_json(&doc("{}", jsonl)).unwrap();
    let cluster = d.cluster().unwrap();
    let (line, field, _) = trace_err(d.trace(&cluster));
    assert_eq!((line, field.as_str()), (1, "submit"));
}

#[test]
fn configs_and_experiments_refuse_a_key_twice() {
    let e = SimConfig::from_json(r#"{"readiness": {"timeout": 5, "timeout": 600}}"#).unwrap_err();
    assert_eq!(e.field(), "readiness.timeout", "{e}");
    let e = Experiment::from_json(
        r#"{"run": {"cluster": {"generate": {}}, "trace": {"inline": []}},
            "variants": [{"name": "a", "config": {"seed": 1}}, {"name": "b", "name": "c"}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.field(), "variants[1].name", "{e}");
}

#[test]
fn philly_jobs_with_a_key_twice_are_refused() {
    let job = |extra: &str| {
        format!(
            r#"{{"jobid": "j", "vc": "v", "user": "u", "status": "Pass", "submitted_time": "2017-10-03 12:00:00", {extra}"attempts": [{{"start_time": "2017-10-03 12:00:00", "end_time": "2017-10-03 13:00:00", "detail": [{{"ip": "m1", "gpus": ["gpu0"]}}]}}]}}"#
        )
    };
    assert!(philly(&job("")).is_ok(), "{:?}", philly(&job("")));
    // JSON Lines: the line; an array: the job's position.
    let (line, field, msg) =
        trace_err(philly(&format!("{}\n{}\n", job(""), job(r#""vc": "w", "#))).map(|i| i.trace));
    assert_eq!((line, field.as_str()), (2, "vc"), "{msg}");
    let (line, field, _) =
        trace_err(philly(&format!("[{}, {}]", job(""), job(r#""user": "x", "#))).map(|i| i.trace));
    assert_eq!((line, field.as_str()), (2, "user"));
}
