//! gang-kube's object reader on arbitrary text (issue 25): YAML or JSON (named by its
//! first character, as a file would be, so both readers are reached) is read or refused
//! with an error —
//! never a panic, a hang or an unbounded allocation — and whatever is read goes on into
//! the workloads and the cluster, which answer or refuse the same way.

#![no_main]

use gang_kube::{workloads, Cluster, ClusterOptions, Objects};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let json = matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
    let name = if json { "in.json" } else { "in.yaml" };
    if let Ok(objects) = Objects::parse(name, text) {
        let _ = workloads(&objects);
        if let Ok(cluster) = Cluster::from_objects(&objects, &ClusterOptions::new()) {
            let _ = cluster.inventory();
        }
    }
});
