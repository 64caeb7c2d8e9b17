//! gang-kube's object reader on arbitrary text (issue 25): YAML or JSON (named by its
//! first character, as a file would be, so both readers are reached) is read or refused
//! with an error —
//! never a panic, a hang or an unbounded allocation — and whatever is read goes on into
//! the workloads and the cluster, which answer or refuse the same way. A refusal names
//! the file, and its message is at most 4,000 characters (values are cut).

#![no_main]

use gang_kube::{workloads, Cluster, ClusterOptions, Objects};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let json = matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
    let name = if json { "in.json" } else { "in.yaml" };
    let objects = match Objects::parse(name, text) {
        Ok(o) => o,
        Err(e) => return check_error(&e, name),
    };
    if let Err(e) = workloads(&objects) {
        check_error(&e, name);
    }
    match Cluster::from_objects(&objects, &ClusterOptions::new()) {
        Ok(cluster) => {
            if let Err(e) = cluster.inventory() {
                check_message(&e);
            }
        }
        Err(e) => check_message(&e),
    }
});

/// The longest message a refusal may print, in characters.
const MAX_MESSAGE: usize = 4_000;

/// A refusal names the file, and its message stays readable whatever the input
/// (values are cut; issue 25).
fn check_error(e: &gang_kube::Error, name: &str) {
    assert_eq!(e.source_name(), name, "{e}");
    check_message(e);
}

/// The cluster's refusals may be about the whole cluster (no file of their own): their
/// message is bounded all the same.
fn check_message(e: &gang_kube::Error) {
    let shown = e.to_string().chars().count();
    assert!(shown <= MAX_MESSAGE, "a message of {shown} characters: {e}");
}
