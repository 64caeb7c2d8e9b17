//! Arbitrary bytes as gang-sim input (issue 25): the first byte picks the reader — a
//! run document (configuration, inline cluster, inline or generated trace), JSON Lines,
//! CSV, or one of the importers (sacct, openb pods, openb nodes, Philly) — and the rest
//! is its text. Never a panic, an abort or an unbounded allocation: every refusal is a
//! typed error naming its field (and a trace error its line); a run document that reads
//! is simulated, with its limits lowered so one input stays small, and its result is
//! consistent (one record per job, each in a final state, the summary counting them).
//! A message is at most 4,000 characters (values are cut).

#![no_main]

use gang_sim::{import, ClusterSource, RunDocument, SimError, Trace, TraceSource};
use libfuzzer_sys::fuzz_target;

/// A refusal names where: a field (or column), and a trace error a line.
fn check_error(e: &SimError) {
    match e {
        SimError::Trace { line, field, .. } => {
            assert!(*line >= 1, "{e}");
            assert!(!field.is_empty(), "{e}");
        }
        SimError::Config { field, .. } | SimError::Cluster { field, .. } => {
            assert!(!field.is_empty(), "{e}");
        }
        SimError::Io { .. } => {}
        SimError::Internal(m) => panic!("internal error: {m}"),
        other => panic!("unexpected error kind: {other}"),
    }
    assert!(e.to_json().starts_with('{'));
    // Values are cut in messages (issue 25): a message stays readable whatever the input.
    let shown = e.to_string().chars().count();
    assert!(shown <= MAX_MESSAGE, "a message of {shown} characters: {e}");
}

/// The longest message a refusal may print, in characters.
const MAX_MESSAGE: usize = 4_000;

fn run(text: &str) {
    let mut doc = match RunDocument::from_json(text) {
        Ok(d) => d,
        Err(e) => return check_error(&e),
    };
    // No files: the fuzzer must not read the machine's files (or /dev/zero).
    if matches!(
        doc.cluster,
        ClusterSource::File(_) | ClusterSource::OpenbNodes { .. }
    ) || matches!(doc.trace, TraceSource::File { .. })
    {
        return;
    }
    // Small limits: an input may ask for a year of samples or a million jobs; the
    // limits refuse it (that path is what is being fuzzed), and keep each run short.
    let l = &mut doc.config.limits;
    l.max_jobs = l.max_jobs.min(200);
    l.max_nodes = l.max_nodes.min(2_000);
    l.max_samples = l.max_samples.min(20_000);
    l.max_events = l.max_events.min(20_000);
    l.max_restarts = l.max_restarts.min(50);
    doc.config.check_invariants = Some(true);
    let sim = match doc.simulation() {
        Ok(s) => s,
        Err(e) => return check_error(&e),
    };
    match sim.run() {
        Ok(r) => {
            assert_eq!(r.summary.all.jobs, r.jobs.len());
            let states: usize = r.summary.all.states.values().sum();
            assert_eq!(states, r.jobs.len());
            assert!(r.timeline.len() as u64 <= 20_000 + 1);
            assert!(r.to_json().starts_with('{'));
        }
        Err(e) => check_error(&e),
    }
}

fn trace(r: Result<Trace, SimError>) {
    match r {
        Ok(t) => {
            for j in &t.jobs {
                assert!(j.submit.is_finite() && j.duration.is_finite());
            }
        }
        Err(e) => check_error(&e),
    }
}

fn imported(r: Result<import::Imported, SimError>) {
    match r {
        Ok(i) => {
            for j in &i.trace.jobs {
                assert!(j.submit.is_finite() && j.submit >= 0.0, "{}", j.submit);
                assert!(
                    j.duration > 0.0 && j.duration <= import::MAX_SECONDS,
                    "{}",
                    j.duration
                );
            }
            assert!(!i.trace.jobs.is_empty() || i.skipped.is_empty());
        }
        Err(e) => check_error(&e),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match mode % 7 {
        0 => run(text),
        1 => trace(Trace::from_jsonl(text)),
        2 => trace(Trace::from_csv(text)),
        3 => imported(import::sacct(text)),
        4 => imported(import::openb_pods(text)),
        5 => match import::openb_nodes(text, Some(2)) {
            Ok(c) => assert!(c.to_json().starts_with('{')),
            Err(e) => check_error(&e),
        },
        _ => imported(import::philly(text)),
    }
});
