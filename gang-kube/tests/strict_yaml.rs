//! Issue 25, gang-kube's YAML and JSON: deep nesting refused in linear time (6),
//! duplicate keys refused with the file, object and field (10), topology objects that
//! name what is not there (14).

use gang_kube::{Cluster, ClusterOptions, ErrorKind, Objects, TopologySource};

#[test]
fn deep_flow_nesting_is_refused_before_parsing() {
    // 400 KB of flow nesting took the parser over a minute; refused at once, naming the
    // file and the line.
    let text = format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  labels: {}\n",
        "[".repeat(400_000)
    );
    let err = Objects::parse("deep.yaml", &text).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert!(err.to_string().starts_with("deep.yaml: line 4: "), "{err}");
    assert!(
        err.to_string().contains("nested more than 64 levels"),
        "{err}"
    );
    // Ordinary flow style is read.
    let ok = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: b}}\nstatus: {allocatable: {cpu: \"1\"}}\n";
    assert_eq!(Objects::parse("ok.yaml", ok).unwrap().len(), 1);
}
