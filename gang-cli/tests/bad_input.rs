//! Every kind of bad input: a clear message naming the file, the object and the field,
//! exit code 2, and no panic (`common::output` fails the test on "panicked").

mod common;

use common::{gang, gang_stdin, json, kube, own};

/// Runs `gang place FILES…` (and `explain`, `--output json`) and checks exit 2 and
/// that every fragment is in the message.
fn invalid(files: &[&str], fragments: &[&str]) {
    for cmd in ["place", "explain"] {
        let mut args = vec![cmd];
        args.extend_from_slice(files);
        let r = gang(&args);
        assert_eq!(
            r.code, 2,
            "gang {args:?}: exit code\n{}{}",
            r.stdout, r.stderr
        );
        let message = r.stderr.lines().last().unwrap_or_default();
        assert!(message.starts_with("gang: error: "), "{}", r.stderr);
        for f in fragments {
            assert!(
                message.contains(f),
                "gang {args:?}: {f:?} not in {message:?}"
            );
        }
        args.extend(["-o", "json"]);
        let r = gang(&args);
        assert_eq!(r.code, 2);
        let v = json(&r.stdout);
        let doc = if v["status"] == "error" {
            v
        } else {
            v["error"].clone()
        };
        assert_eq!(doc["status"], "error", "{}", r.stdout);
        assert_eq!(doc["exit_code"], 2);
        for f in fragments {
            assert!(doc["message"].as_str().unwrap().contains(f), "{doc}");
        }
    }
}

#[test]
fn malformed_json_names_the_file_and_the_line() {
    invalid(
        &[&own("bad/malformed.json"), &kube("training-workers.yaml")],
        &[
            "tests/fixtures/bad/malformed.json",
            "line 3 column 43",
            "malformed JSON",
        ],
    );
}

#[test]
fn malformed_yaml_names_the_file_and_the_line() {
    invalid(
        &[&own("bad/malformed.yaml"), &kube("training-workers.yaml")],
        &[
            "tests/fixtures/bad/malformed.yaml",
            "line 6 column 7",
            "malformed YAML",
        ],
    );
}

#[test]
fn a_non_node_object_where_nodes_are_expected() {
    invalid(
        &[&own("bad/deployment.yaml"), &kube("training-workers.yaml")],
        &[
            "tests/fixtures/bad/deployment.yaml",
            "Deployment/prod/web",
            ": kind: ",
            "expected Node",
        ],
    );
    let r = gang(&["topology", &own("bad/deployment.yaml")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("Deployment/prod/web (document 1): kind: expected Node"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_level_label_no_node_carries() {
    // A Kueue Topology naming topology.example.com/row, which racks.json lacks.
    let files = [
        kube("racks.json"),
        own("bad/missing-level-label.yaml"),
        kube("training-workers.yaml"),
    ];
    let f: Vec<&str> = files.iter().map(String::as_str).collect();
    invalid(
        &f,
        &[
            "missing-level-label.yaml",
            "Topology/rows",
            "spec.levels[1].nodeLabel",
            "topology.example.com/row",
        ],
    );
    let r = gang(&["topology", &files[0], &files[1]]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("Topology/rows: spec.levels[1].nodeLabel"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_unknown_annotation_value() {
    invalid(
        &[&kube("racks.json"), &own("bad/unknown-annotation.yaml")],
        &[
            "unknown-annotation.yaml",
            "Job/ml/train",
            "spec.template.metadata.annotations.kueue.x-k8s.io/podset-unconstrained-topology",
            "\"maybe\"",
            "must be true or false",
        ],
    );
}

#[test]
fn a_minimum_above_the_members() {
    // A PodGroup's minimum above the pods found (gang-kube's coscheduling fixture).
    invalid(
        &[&kube("racks.json"), &kube("coscheduling.yaml")],
        &[
            "coscheduling.yaml",
            "PodGroup/research/sweep",
            "spec.minMember",
            "\"3\"",
        ],
    );
    // A job whose minimum is above the members it defines.
    invalid(
        &[&kube("racks.json"), &own("bad/min-above-members.yaml")],
        &[
            "min-above-members.yaml",
            "PyTorchJob/ml/too-few",
            "spec.runPolicy.schedulingPolicy.minAvailable",
            "\"6\"",
        ],
    );
}

#[test]
fn negative_and_unparsable_quantities() {
    invalid(
        &[
            &own("bad/negative-quantity.yaml"),
            &kube("training-workers.yaml"),
        ],
        &[
            "negative-quantity.yaml",
            "Node/gpu-a1",
            "status.allocatable.cpu",
            "\"-4\"",
            "negative",
        ],
    );
    invalid(
        &[
            &own("bad/unparsable-quantity.yaml"),
            &kube("training-workers.yaml"),
        ],
        &[
            "unparsable-quantity.yaml",
            "Node/gpu-a2",
            "status.allocatable.memory",
            "\"12 GB\"",
        ],
    );
    invalid(
        &[&kube("racks.json"), &own("bad/negative-request.yaml")],
        &[
            "negative-request.yaml",
            "Job/ml/train",
            "spec.template.spec.containers[0].resources.requests.nvidia.com/gpu",
            "\"-1\"",
        ],
    );
}

#[test]
fn no_workload_or_an_unknown_one() {
    invalid(&[&kube("racks.json")], &["racks.json", "no workload"]);
    invalid(
        &[&kube("training-workers.yaml")],
        &["training-workers.yaml", "no Node objects"],
    );
    let r = gang(&[
        "place",
        "--workload",
        "job/nope",
        &kube("racks.json"),
        &kube("training-workers.yaml"),
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--workload: no workload job/nope"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("found: PodGroup/ml-team/training-workers"),
        "{}",
        r.stderr
    );
}

#[test]
fn unreadable_files_and_bad_flags() {
    invalid(&["no-such-file.json"], &["no-such-file.json: cannot read"]);
    let r = gang(&[
        "place",
        "--levels",
        ",",
        &kube("racks.json"),
        &kube("training-workers.yaml"),
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--levels"), "{}", r.stderr);
    let r = gang(&["place", "--output", "xml", &kube("racks.json")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid value 'xml'"), "{}", r.stderr);
    let r = gang(&["place"]);
    assert_eq!(r.code, 2);
    let r = gang(&["place", "-", "-"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("standard input given twice"),
        "{}",
        r.stderr
    );
}

#[test]
fn garbage_on_stdin_never_panics() {
    let inputs = [
        "",
        "   \n",
        "{",
        "[",
        "[1, 2, 3]",
        "null",
        "42",
        "\"text\"",
        "{\"kind\": \"Node\"}",
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": 7}}",
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"x\"}, \"status\": {\"allocatable\": {\"cpu\": 1e400}}}",
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"x\"}, \"status\": {\"allocatable\": {\"cpu\": \"99999999999999999999999\"}}}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: x}\nspec: {taints: [{key: a, effect: Sometimes}]}\n",
        "- - - -",
        ": : :",
        "\u{feff}{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [1]}",
        &"[".repeat(10_000),
    ];
    for input in inputs {
        for cmd in ["place", "explain", "topology"] {
            let r = gang_stdin(&[cmd, "-"], input);
            assert_eq!(
                r.code,
                2,
                "gang {cmd} - <<< {:?}: {}{}",
                &input[..input.len().min(80)],
                r.stdout,
                r.stderr
            );
            assert!(
                r.stderr.starts_with("gang: error: <stdin>")
                    || r.stderr.starts_with("gang: error: -"),
                "{:?}: {}",
                &input[..input.len().min(80)],
                r.stderr
            );
        }
    }
}
