//! Every kind of bad input gives a typed error naming the file, the object, the field
//! and the value; nothing panics.

use gang_kube::{workloads, Cluster, ClusterOptions, ErrorKind, Objects, TopologySource};

const NODE: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.example.com/rack: r1}}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "8", pods: "110"}}
"#;

fn job(annotations: &str) -> String {
    format!(
        r#"
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  parallelism: 4
  template:
    metadata:
      annotations: {{{annotations}}}
    spec:
      containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]
"#
    )
}

fn workload_error(text: &str) -> gang_kube::Error {
    let objects = Objects::parse("job.yaml", text).unwrap();
    workloads(&objects).unwrap_err()
}

#[test]
fn malformed_json_names_the_line() {
    let err = Objects::parse(
        "nodes.json",
        "{\"apiVersion\": \"v1\",\n \"kind\": \"Node\",\n",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert_eq!(err.source_name(), "nodes.json");
    assert_eq!(err.location(), Some("line 3 column 0"));
    assert!(err.to_string().contains("malformed JSON"), "{err}");
}

#[test]
fn malformed_yaml_names_the_line() {
    let err = Objects::parse(
        "pods.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert!(err.location().unwrap().starts_with("line "), "{err}");
    assert!(err.to_string().starts_with("pods.yaml: line "), "{err}");
}

#[test]
fn wrong_shape_names_the_field() {
    let err = Objects::parse(
        "nodes.json",
        r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": "none"}}"#,
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert_eq!(err.object(), Some("Node/n1"));
    assert_eq!(err.field(), Some("spec.taints"));
    assert_eq!(err.value(), Some("none"));
}

#[test]
fn a_document_that_is_not_an_object() {
    let err = Objects::parse("x.yaml", "- 1\n- 2\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedKind);
    assert_eq!(err.location(), Some("document 1 [0]"));
    let err = Objects::parse(
        "x.yaml",
        "kind: component\nrun:\n  kind: pytorchjob\n  schedulingPolicy: {minAvailable: 4}\n",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedKind);
    assert!(err.reason().contains("Polyaxon"), "{err}");
}

#[test]
fn a_non_node_object_where_nodes_are_expected() {
    let o = Objects::parse(
        "nodes.yaml",
        &format!(
            "{NODE}---\napiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: prod}}\n"
        ),
    )
    .unwrap();
    let err = o.expect_kinds(&["Node"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedKind);
    assert_eq!(
        (err.object(), err.field(), err.value()),
        (Some("Service/prod/web"), Some("kind"), Some("Service"))
    );
    assert_eq!(err.location(), Some("document 2"));
    // No nodes at all where a cluster is read.
    let pods = Objects::parse(
        "pods.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    )
    .unwrap();
    let err = Cluster::from_objects(&pods, &ClusterOptions::new()).unwrap_err();
    assert_eq!(
        (err.kind(), err.source_name()),
        (ErrorKind::UnexpectedKind, "pods.yaml")
    );
}

#[test]
fn negative_and_unparsable_quantities() {
    let err = Objects::parse(
        "nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {memory: -16Gi}}\n",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        (err.object(), err.field(), err.value()),
        (
            Some("Node/n1"),
            Some("status.allocatable.memory"),
            Some("-16Gi")
        )
    );
    assert!(err.reason().contains("negative"), "{err}");
    let text = job("").replace(r#"nvidia.com/gpu: "1""#, r#"memory: 12 GB"#);
    let err = Objects::parse("job.yaml", &text).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(err.object(), Some("Job/ml/train"));
    assert_eq!(
        err.field(),
        Some("spec.template.spec.containers[0].resources.requests.memory")
    );
    assert_eq!(err.value(), Some("12 GB"));
}

#[test]
fn unknown_annotation_values() {
    let f = "spec.template.metadata.annotations.";
    let err = workload_error(&job("kueue.x-k8s.io/podset-unconstrained-topology: maybe"));
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        err.field(),
        Some(&*format!("{f}kueue.x-k8s.io/podset-unconstrained-topology"))
    );
    assert_eq!(err.value(), Some("maybe"));
    let err = workload_error(&job(
        "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: two",
    ));
    assert_eq!(
        err.field(),
        Some(&*format!("{f}kueue.x-k8s.io/podset-slice-size"))
    );
    assert_eq!(err.value(), Some("two"));
    let err = workload_error(&job("kueue.x-k8s.io/podset-slice-size: \"2\""));
    assert!(err.reason().contains("without"), "{err}");
    let err = workload_error(&job(
        "kueue.x-k8s.io/podset-required-topology: rack, kueue.x-k8s.io/podset-preferred-topology: block",
    ));
    assert!(err.reason().contains("mutually exclusive"), "{err}");
    let err = workload_error(&job(
        r#"kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology": "rack", "size": 0}]'"#,
    ));
    assert_eq!(
        err.field(),
        Some(&*format!(
            "{f}kueue.x-k8s.io/podset-slice-required-topology-constraints[0].size"
        ))
    );
    let err = workload_error(&job("kueue.x-k8s.io/podset-required-topology: \"\""));
    assert!(err.reason().contains("not a topology level"), "{err}");
    // Volcano's mode.
    let err = workload_error(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n  networkTopology: {mode: medium}\n  tasks: [{name: w, replicas: 2, template: {spec: {containers: [{name: c}]}}}]\n",
    );
    assert_eq!(
        (err.field(), err.value()),
        (Some("spec.networkTopology.mode"), Some("medium"))
    );
}

#[test]
fn minimum_larger_than_the_members() {
    let text = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: ft, namespace: ml}\nspec:\n  runPolicy: {schedulingPolicy: {minAvailable: 5}}\n  pytorchReplicaSpecs:\n    Master: {replicas: 1, template: {spec: {containers: [{name: c}]}}}\n    Worker: {replicas: 3, template: {spec: {containers: [{name: c}]}}}\n";
    let err = workload_error(text);
    assert_eq!(err.kind(), ErrorKind::InvalidMinimum);
    assert_eq!(err.object(), Some("PyTorchJob/ml/ft"));
    assert_eq!(
        err.field(),
        Some("spec.runPolicy.schedulingPolicy.minAvailable")
    );
    assert_eq!(err.value(), Some("5"));
    assert!(err.reason().contains("4 members"), "{err}");
    // A negative count.
    let err = workload_error(&text.replace("minAvailable: 5", "minAvailable: -1"));
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
}

#[test]
fn missing_level_labels() {
    let topo = |levels: &str| {
        format!("{NODE}---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {{name: t}}\nspec:\n  levels: {levels}\n")
    };
    let o = Objects::parse(
        "topo.yaml",
        &topo("[{nodeLabel: topology.example.com/rack}, {}]"),
    )
    .unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingLabel);
    assert_eq!(
        (err.object(), err.field()),
        (Some("Topology/t"), Some("spec.levels[1].nodeLabel"))
    );
    let o = Objects::parse(
        "topo.yaml",
        &topo("[{nodeLabel: topology.example.com/block}]"),
    )
    .unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingLabel);
    assert_eq!(err.value(), Some("topology.example.com/block"));
    let o = Objects::parse(
        "topo.yaml",
        &topo("[{nodeLabel: kubernetes.io/hostname}, {nodeLabel: topology.example.com/rack}]"),
    )
    .unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTopology);
    assert_eq!(err.field(), Some("spec.levels[0].nodeLabel"));
    // Given levels.
    let o = Objects::parse("nodes.yaml", NODE).unwrap();
    let opts = ClusterOptions::new().topology(TopologySource::Levels(vec!["zone".into()]));
    let err = Cluster::from_objects(&o, &opts).unwrap_err();
    assert_eq!(
        (err.kind(), err.field(), err.value()),
        (ErrorKind::MissingLabel, Some("levels[0]"), Some("zone"))
    );
}

#[test]
fn a_node_given_twice() {
    let o = Objects::parse("a.yaml", &format!("{NODE}---{NODE}")).unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(
        (err.kind(), err.object(), err.field()),
        (
            ErrorKind::InvalidValue,
            Some("Node/n1"),
            Some("metadata.name")
        )
    );
    assert!(err.reason().contains("also document 1 of a.yaml"), "{err}");
}

#[test]
fn unknown_level_in_a_workload() {
    let o = Objects::parse(
        "all.yaml",
        &format!(
            "{NODE}---{}",
            job("kueue.x-k8s.io/podset-required-topology: topology.example.com/block")
        ),
    )
    .unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let w = &workloads(&o).unwrap()[0];
    let err = c.gang_for(w).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownLevel);
    assert_eq!(err.source_name(), "all.yaml");
    assert_eq!(
        err.field(),
        Some("spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology")
    );
    assert!(err.reason().contains("topology.example.com/rack"), "{err}");
}

#[test]
fn unknown_taint_effect_and_toleration_operator() {
    let o = Objects::parse("n.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: [{key: k, effect: Sometimes}]}\n").unwrap();
    let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
    assert_eq!(
        (err.kind(), err.field(), err.value()),
        (
            ErrorKind::InvalidValue,
            Some("spec.taints[0].effect"),
            Some("Sometimes")
        )
    );
    let text = job("").replace(
        "containers:",
        "tolerations: [{key: k, operator: Maybe}]\n      containers:",
    );
    let err = workload_error(&text);
    assert_eq!(
        err.field(),
        Some("spec.template.spec.tolerations[0].operator")
    );
}

#[test]
fn truncated_and_mangled_input_never_panics() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/gke-h100.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let yaml = std::fs::read_to_string(format!(
        "{}/tests/fixtures/pytorchjob.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for src in [&text, &yaml] {
        let step = (src.len() / 300).max(1);
        for cut in (0..src.len()).step_by(step) {
            if !src.is_char_boundary(cut) {
                continue;
            }
            if let Ok(o) = Objects::parse("cut", &src[..cut]) {
                let _ = Cluster::from_objects(&o, &ClusterOptions::new());
                let _ = workloads(&o);
            }
        }
    }
    for junk in [
        "",
        "   ",
        "null",
        "42",
        "\"x\"",
        "[]",
        "[1]",
        "{}",
        "---\n---\n",
        "{\"kind\": 3}",
        "apiVersion: v1\nkind: List\nitems: 3\n",
    ] {
        let _ = Objects::parse("junk", junk).map(|o| {
            (
                Cluster::from_objects(&o, &ClusterOptions::new()).is_ok(),
                workloads(&o).is_ok(),
            )
        });
    }
}

/// One bad node name among a thousand: the error names the file, the Node object and
/// the value (it named none; issue 25, item 9).
#[test]
fn a_bad_node_name_among_many_names_the_node() {
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: \"8\"}}}}\n"
        ));
    }
    text.push_str("---\napiVersion: v1\nkind: Node\nmetadata: {name: Bad_Name}\nstatus: {allocatable: {cpu: \"8\"}}\n");
    let objects = Objects::parse("nodes.yaml", &text).unwrap();
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let e = c.inventory().unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with("nodes.yaml: Node/Bad_Name"), "{m}");
    assert_eq!(e.field(), Some("metadata.name"), "{m}");
    assert_eq!(e.value(), Some("Bad_Name"), "{m}");
}

/// A 1 MB label value is cut in the message, kept whole in `value()`.
#[test]
fn a_huge_value_is_cut_in_the_message() {
    let big = "a".repeat(1 << 20);
    let text = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{rack: {big}}}}}\nstatus: {{allocatable: {{cpu: \"8\"}}}}\n"
    );
    let objects = Objects::parse("nodes.yaml", &text).unwrap();
    let e = match Cluster::from_objects(
        &objects,
        &ClusterOptions::new().topology(TopologySource::Levels(vec!["rack".into()])),
    ) {
        Err(e) => e,
        Ok(c) => c.inventory().unwrap_err(),
    };
    let m = e.to_string();
    assert!(m.len() < 1000, "{} bytes: {}", m.len(), &m[..200]);
    assert!(m.contains("bytes)"), "{}", &m[..200.min(m.len())]);
    assert_eq!(e.value().map(str::len), Some(1 << 20));
}

/// `replicas: 9223372036854775807` said "must be a count (0 or more)"; it is a count,
/// only too large (issue 25, item 9).
#[test]
fn a_huge_count_says_it_is_too_large() {
    let text = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  parallelism: 9223372036854775807\n  template: {spec: {containers: [{name: c}]}}\n";
    let e = workload_error(text);
    let m = e.to_string();
    assert!(m.contains("more than the 4294967295 members"), "{m}");
    assert_eq!(e.value(), Some("9223372036854775807"));
    let e = workload_error(&text.replace("9223372036854775807", "-1"));
    assert!(e.to_string().contains("must be a count (0 or more)"), "{e}");
}

/// A 100 KB name, quantity or string where a map goes was echoed whole: the value
/// was cut, but the object (`Node/xxx…`) and the reason gang-core or serde wrote
/// (`invalid quantity "999…"`, `invalid type: string "xxx…"`) were not. Each word
/// longer than 300 characters is cut now; the accessors keep the text whole (issue 25,
/// item 9).
#[test]
fn a_huge_name_or_quantity_is_cut_in_the_object_and_the_reason() {
    let x = "x".repeat(100_000);
    let nines = "9".repeat(100_000);
    let node = |name: &str, alloc: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "{name}"}}, "status": {{"allocatable": {alloc}}}}}"#
        )
    };
    let cases = [
        ("name.json", node(&x, r#"{"cpu": "8"}"#)),
        ("quantity.json", node("n1", &format!(r#"{{"cpu": "{nines}x"}}"#))),
        ("number.json", node("n1", &format!(r#"{{"cpu": 1{}}}"#, "0".repeat(100_000)))),
        ("map.json", node("n1", &format!("\"{x}\""))),
        ("map.yaml", format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {x}}}\n")),
    ];
    for (file, text) in cases {
        let e = match Objects::parse(file, &text) {
            Err(e) => e,
            Ok(objects) => match Cluster::from_objects(&objects, &ClusterOptions::new()) {
                Err(e) => e,
                Ok(c) => match (c.inventory(), workloads(&objects)) {
                    (Err(e), _) | (_, Err(e)) => e,
                    _ => panic!("{file}: read without an error"),
                },
            },
        };
        let m = e.to_string();
        assert!(m.len() < 1500, "{file}: {} bytes: {}", m.len(), &m[..300]);
        assert!(m.starts_with(file) && m.contains("bytes)"), "{file}: {m}");
    }
}

/// The lists a pod and a node hold are read in their length (`nullable_vec`), and a
/// pod's `topologySpreadConstraints` and `resourceClaims` as a count: what was refused
/// before still is, in a `kubectl get -o json` List (the fast path, then the careful
/// one naming the error) and in YAML, with the same words (checked against main
/// 4ce3864's `gang place`).
#[test]
fn lists_read_in_their_length_refuse_as_before() {
    let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"8"}}}"#;
    let pod = |spec: &str, status: &str, meta: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"List","items":[{node},{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"x"{meta}}},"spec":{{"nodeName":"n1","containers":[{{"name":"c"}}]{spec}}},"status":{{"phase":"Running"{status}}}}}]}}"#
        )
    };
    let cases = [
        (
            pod(r#","topologySpreadConstraints":"x""#, "", ""),
            "spec.topologySpreadConstraints",
            "x",
            "invalid type: string \"x\", expected a sequence",
        ),
        (
            pod(r#","resourceClaims":{"a":1}"#, "", ""),
            "spec.resourceClaims",
            r#"{"a":1}"#,
            "invalid type: map, expected a sequence",
        ),
        (
            pod(r#","tolerations":{"key":"a"}"#, "", ""),
            "spec.tolerations",
            r#"{"key":"a"}"#,
            "invalid type: map, expected a sequence",
        ),
        (
            pod(r#","tolerations":[{"key":"a","key":"b"}]"#, "", ""),
            "spec.tolerations[0]",
            r#"{"key":"b"}"#,
            "duplicate field `key`",
        ),
        (
            pod(
                r#","initContainers":[{"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"1","cpu":"2"}}}]"#,
                "",
                "",
            ),
            "spec.initContainers[0].resources.requests",
            r#"{"cpu":"2"}"#,
            "duplicate key \"cpu\"",
        ),
        (
            pod(
                r#","initContainers":[{"name":"s","resources":{"requests":{"cpu":"lots"}}}]"#,
                "",
                "",
            ),
            "spec.initContainers[0].resources.requests.cpu",
            "lots",
            "invalid quantity \"lots\"",
        ),
        (
            pod("", r#","containerStatuses":[{"name":"c","name":"d"}]"#, ""),
            "status.containerStatuses[0]",
            r#"{"name":"d"}"#,
            "duplicate field `name`",
        ),
        (
            pod("", "", r#","ownerReferences":"job""#),
            "metadata.ownerReferences",
            "job",
            "invalid type: string \"job\", expected a sequence",
        ),
    ];
    for (text, field, value, words) in &cases {
        let err = Objects::parse("s.json", text).unwrap_err();
        let kind = if words.starts_with("invalid quantity") {
            ErrorKind::InvalidValue
        } else {
            ErrorKind::Malformed
        };
        assert_eq!(err.kind(), kind, "{err}");
        assert_eq!(err.object(), Some("Pod/x/p"), "{err}");
        assert_eq!(err.field(), Some(*field), "{err}");
        assert_eq!(err.value(), Some(*value), "{err}");
        assert!(err.to_string().contains(words), "{err}");
    }
    // Without the refused part, each reads (null lists are empty).
    let ok = pod(
        r#","topologySpreadConstraints":null,"resourceClaims":[],"tolerations":[{"operator":"Exists"}],"initContainers":[{"name":"s","resources":{"requests":{"cpu":0.5,"memory":1024}}}]"#,
        r#","containerStatuses":null"#,
        r#","ownerReferences":[{"kind":"Job","name":"j"}]"#,
    );
    assert_eq!(Objects::parse("s.json", &ok).unwrap().len(), 2);
    // A node's taints and conditions, and YAML.
    let node_err = Objects::parse(
        "n.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nspec: {taints: {key: a}}\n",
    )
    .unwrap_err();
    assert_eq!(node_err.field(), Some("spec.taints"), "{node_err}");
    assert!(
        node_err.to_string().contains("expected a sequence"),
        "{node_err}"
    );
    let tsc = Objects::parse(
        "p.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\nspec: {topologySpreadConstraints: 5}\n",
    )
    .unwrap_err();
    assert_eq!(tsc.field(), Some("spec.topologySpreadConstraints"), "{tsc}");
    assert!(
        tsc.to_string()
            .contains("invalid type: number, expected a sequence"),
        "{tsc}"
    );
}
