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

const NODES: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {cloud.google.com/gce-topology-block: b1, example.com/rack: r1}}
status: {allocatable: {cpu: "8", pods: "110"}}
"#;

/// A Kueue Topology and ResourceFlavor (kueue.x-k8s.io/v1beta1, the shapes of Kueue's
/// TAS docs), written for these tests.
fn topology(name: &str, key: &str) -> String {
    format!("---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {{name: {name}}}\nspec:\n  levels:\n  - nodeLabel: {key}\n")
}

fn flavor(topology: &str) -> String {
    format!("---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {{name: tas-flavor}}\nspec:\n  nodeLabels: {{}}\n  topologyName: {topology}\n  tolerations: [{{key: dedicated, operator: Exists, effect: NoSchedule}}]\n")
}

#[test]
fn a_flavor_naming_a_missing_topology_is_an_error_not_dropped() {
    let text = format!(
        "{NODES}{}{}",
        flavor("default"),
        topology("other", "example.com/rack")
    );
    let o = Objects::parse("kueue.yaml", &text).unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(err.object(), Some("ResourceFlavor/tas-flavor"), "{err}");
    assert_eq!(
        (err.field(), err.value()),
        (Some("spec.topologyName"), Some("default"))
    );
    // With the Topology given, the flavor is used (its tolerations with it).
    let text = format!(
        "{NODES}{}{}",
        flavor("default"),
        topology("default", "example.com/rack")
    );
    let o = Objects::parse("kueue.yaml", &text).unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    assert_eq!(
        c.report()
            .topology
            .flavor
            .as_ref()
            .map(|f| f.tolerations.len()),
        Some(1)
    );
    // Detection asked for: the flavor is not consulted.
    let text = format!("{NODES}{}", flavor("default"));
    let o = Objects::parse("kueue.yaml", &text).unwrap();
    let opts = ClusterOptions::new().topology(TopologySource::Detect);
    assert!(Cluster::from_objects(&o, &opts).is_ok());
}

#[test]
fn two_topologies_with_one_name_are_refused() {
    let text = format!(
        "{NODES}{}{}",
        topology("default", "cloud.google.com/gce-topology-block"),
        topology("default", "example.com/rack")
    );
    let o = Objects::parse("kueue.yaml", &text).unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTopology);
    assert_eq!(err.object(), Some("Topology/default"));
    assert_eq!(err.location(), Some("document 3"));
    assert_eq!(
        (err.field(), err.value()),
        (Some("metadata.name"), Some("default"))
    );
}

#[test]
fn duplicate_yaml_keys_are_refused_naming_the_object_and_field() {
    let cases = [
        // (text, object, field)
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n",
            "Node/a",
            "metadata.name",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable:\n    cpu: \"1\"\n    cpu: \"2\"\n",
            "Node/n1",
            "status.allocatable.cpu",
        ),
        (
            "apiVersion: v1\nkind: Node\nkind: Pod\nmetadata: {name: p, namespace: ml}\n",
            "Node/ml/p",
            "kind",
        ),
        (
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers:\n    - name: c\n      resources: {requests: {cpu: 1, cpu: 2}}\n",
            "Pod/p",
            "spec.containers[0].resources.requests.cpu",
        ),
    ];
    for (text, object, field) in cases {
        let err = Objects::parse("dup.yaml", text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
        assert_eq!(
            (err.object(), err.field()),
            (Some(object), Some(field)),
            "{err}"
        );
        assert!(err.to_string().starts_with("dup.yaml: "), "{err}");
        assert!(err.to_string().contains("duplicate key"), "{err}");
    }
    // The same key in two different mappings is fine.
    let ok = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {name: x}}\n";
    assert!(Objects::parse("ok.yaml", ok).is_ok());
}

#[test]
fn yaml_nan_and_inf_are_refused_as_numbers_not_read_as_null() {
    for (value, shown) in [(".nan", "NaN"), (".inf", "inf"), ("-.inf", "-inf")] {
        let text = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus:\n  allocatable:\n    cpu: {value}\n"
        );
        let err = Objects::parse("nan.yaml", &text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("nan.yaml"), "{msg}");
        assert!(
            msg.contains(&format!("{shown} is not a finite number")),
            "{msg}"
        );
        assert!(!msg.contains("null"), "{msg}");
    }
}

#[test]
fn duplicate_json_keys_are_refused_on_the_list_and_document_paths() {
    let list = |item: &str| format!(r#"{{"apiVersion": "v1", "kind": "List", "items": [{item}]}}"#);
    let cases = [
        // A map (allocatable) naming cpu twice, in a kubectl List (the fast path).
        (
            list(
                r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "1", "cpu": "2"}}}"#,
            ),
            "Node/a",
            "status.allocatable",
        ),
        // Labels twice.
        (
            list(
                r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"x": "1", "x": "2"}}}"#,
            ),
            "Pod/p",
            "metadata.labels",
        ),
        // kind twice, a single document.
        (
            r#"{"apiVersion": "v1", "kind": "Node", "kind": "Pod", "metadata": {"name": "a"}}"#
                .to_owned(),
            "Node/a",
            "kind",
        ),
        // kind twice inside a List.
        (
            list(
                r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "kind": "Pod"}"#,
            ),
            "Node/a",
            "kind",
        ),
    ];
    for (text, object, field) in cases {
        let err = Objects::parse("dup.json", &text).unwrap_err();
        assert_eq!(err.object(), Some(object), "{err}");
        assert_eq!(err.field(), Some(field), "{err}");
        assert!(err.to_string().contains("duplicate"), "{err}");
    }
}

mod arbitrary_text {
    use gang_kube::{workloads, Objects};
    use proptest::prelude::*;

    const TOKENS: [&str; 16] = [
        "[",
        "]",
        "{",
        "}",
        "a: ",
        "- ",
        "\n",
        "\"",
        "'",
        " #",
        " ",
        "|\n",
        "x",
        ",",
        "kind: Job\n",
        "apiVersion: batch/v1\n",
    ];

    proptest! {
        /// YAML-like text of any shape: an answer or an error, never a panic.
        #[test]
        fn any_text_is_read_or_refused_without_panicking(
            tokens in proptest::collection::vec(0..TOKENS.len(), 0..200)
        ) {
            let text: String = tokens.iter().map(|&i| TOKENS[i]).collect();
            if let Ok(o) = Objects::parse("t.yaml", &text) {
                let _ = workloads(&o);
            }
        }

        /// Flow nesting alone: refused exactly when deeper than 64 (an oracle that only
        /// counts brackets).
        #[test]
        fn flow_depth_is_refused_exactly_past_64(
            opens in 0usize..100, extra in proptest::collection::vec(0usize..3, 0..50)
        ) {
            let mut s = "[".repeat(opens);
            for e in &extra {
                s.push_str(["[", "]", "1, "][*e]);
            }
            let (mut depth, mut max) = (0i64, 0i64);
            for c in s.chars() {
                match c {
                    '[' => { depth += 1; max = max.max(depth); }
                    ']' => depth = (depth - 1).max(0),
                    _ => {}
                }
            }
            let r = Objects::parse("d.yaml", &format!("a: {s}\n"));
            let refused = matches!(&r, Err(e) if e.to_string().contains("nested more than 64"));
            prop_assert_eq!(refused, max > 64, "{}", s);
        }
    }
}

#[test]
fn a_leading_byte_order_mark_is_not_part_of_the_text() {
    // Editors on Windows save UTF-8 with a BOM; the YAML reader took it for the start of
    // the first key ("apiVersion and kind are required").
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"8\"}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n";
    let json = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}"#;
    for text in [yaml, json] {
        let plain = Objects::parse("plain", text).unwrap();
        let bom = Objects::parse("bom", &format!("\u{feff}{text}")).unwrap();
        let names = |o: &Objects| o.refs().iter().map(|r| r.to_string()).collect::<Vec<_>>();
        assert_eq!(names(&bom), names(&plain), "{text}");
        assert!(!names(&bom).is_empty());
    }
    // Errors after it keep their line numbers.
    let err = Objects::parse(
        "bad.yaml",
        "\u{feff}apiVersion: v1\nkind: Node\nmetadata: {name: a\n",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    let plain = Objects::parse(
        "bad.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: a\n",
    )
    .unwrap_err();
    assert_eq!(err.to_string(), plain.to_string());
    // Only a leading BOM: one inside a value stays in it.
    let inner = Objects::parse(
        "n.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: \"\u{feff}n\"}\n",
    )
    .unwrap();
    assert_eq!(inner.refs()[0].name, "\u{feff}n");
}
