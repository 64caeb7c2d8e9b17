//! Issue 24 through the CLI: the objects users have (gang-kube's `fixtures/users/`).

mod common;

use common::{gang, json, kube};

fn users(name: &str) -> String {
    kube(&format!("users/{name}"))
}

#[test]
fn a_generate_name_job_is_placed_under_its_prefix() {
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("generate-name-job.yaml"),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("placed Job/default/tas-sample-job-"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("metadata.generateName"), "{}", r.stdout);
    assert!(!r.stdout.contains("gang.name"), "{}", r.stdout);
}

#[test]
fn objects_without_a_namespace_are_in_the_namespace_given_else_default() {
    for extra in [&[][..], &["-n", "default"][..]] {
        let mut args = vec![
            "explain".to_owned(),
            users("nodes-racks.yaml"),
            users("podgroup-no-namespace.yaml"),
            "-o".into(),
            "json".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = gang(&args);
        let v = json(&r.stdout);
        assert_eq!(
            v["workload"]["object"], "PodGroup/default/nginx",
            "{}",
            r.stdout
        );
        assert_eq!(v["workload"]["minimum"], 3, "{extra:?}");
        assert_eq!(v["workload"]["members"], 4, "{extra:?}");
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
    }
    // -n ml: the objects without a namespace move there; the pod written in default stays.
    let r = gang(&[
        "explain",
        &users("nodes-racks.yaml"),
        &users("podgroup-no-namespace.yaml"),
        "-n",
        "ml",
        "-o",
        "json",
    ]);
    let v = json(&r.stdout);
    assert_eq!(v["workload"]["object"], "PodGroup/ml/nginx", "{}", r.stdout);
    assert_eq!(v["workload"]["members"], 3);
}

#[test]
fn explain_does_not_exit_0_after_an_error_line() {
    let r = gang(&[
        "explain",
        &users("nodes-racks.yaml"),
        &users("pods-missing-group.yaml"),
    ]);
    assert!(r.stdout.contains("error group_object"), "{}", r.stdout);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    // `place` answers only the capacity question.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("pods-missing-group.yaml"),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn an_unsupported_kind_is_named_with_what_is_supported() {
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("deployment.yaml"),
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains("Kind Deployment (apiVersion apps/v1) in ../gang-kube/tests/fixtures/users/deployment.yaml is not a workload gang reads; supported: "),
        "{m}"
    );
    assert!(m.contains("LeaderWorkerSet") && m.contains("RayJob"), "{m}");
}

#[test]
fn the_new_kinds_are_placed_through_the_cli() {
    for (file, workload) in [
        ("lws.yaml", "leaderworkerset/vllm"),
        ("kubeflow-more.yaml", "jaxjob/jax-simple"),
        ("ray.yaml", "raycluster/raycluster-kuberay"),
        ("appwrapper.yaml", "appwrapper/sample-aw"),
        ("kueue-pod-group.yaml", "podgroup/sample-group"),
    ] {
        let r = gang(&[
            "place",
            &users("nodes-racks.yaml"),
            &users(file),
            "-w",
            workload,
            "-o",
            "json",
        ]);
        assert_eq!(r.code, 0, "{file}: {}{}", r.stdout, r.stderr);
        assert_eq!(json(&r.stdout)["status"], "placed", "{file}");
    }
}

#[test]
fn admission_defaults_are_counted_through_the_cli() {
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("limitrange-pi.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    assert_eq!(
        v["workload"]["roles"][0]["requests"]["cpu"], "500m",
        "{}",
        r.stdout
    );
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("runtimeclass.yaml"),
        "-o",
        "json",
    ]);
    let v = json(&r.stdout);
    assert_eq!(
        v["workload"]["roles"][0]["requests"]["cpu"], "2250m",
        "{}",
        r.stdout
    );
}

/// Issue 25 item 14: a resource no node has is an error, not a 0/0 drawing.
#[test]
fn topology_with_a_resource_no_node_has_is_an_error() {
    let r = gang(&["topology", &users("nodes-racks.yaml"), "-r", "nope"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains("--resource") && m.contains("no node has \"nope\""),
        "{m}"
    );
    assert!(m.contains("nvidia.com/gpu"), "{m}");
    let r = gang(&["topology", &users("nodes-racks.yaml"), "-r", "cpu"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn extended_resource_toleration_is_a_flag() {
    let f = users("gke-gpu-taint.yaml");
    let r = gang(&["explain", &f]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("ExtendedResourceToleration off"),
        "{}",
        r.stdout
    );
    let r = gang(&["place", &f, "--extended-resource-toleration"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn kueue_podsets_are_shown_each_in_its_own_domain() {
    // Kueue's TAS KEP JobSet: the leader (4 GPUs) and 8 workers, each PodSet in a rack
    // of its own: 12 GPUs, no rack of 8 holds all, each part fits.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("kueue-podsets.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    let parts = v["parts"].as_array().expect("parts");
    let names: Vec<&str> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["leader", "workers"]);
    assert_ne!(parts[0]["domain"], parts[1]["domain"], "{}", r.stdout);
    let r = gang(&[
        "explain",
        &users("nodes-racks.yaml"),
        &users("kueue-podsets.yaml"),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("in parts, each in its own domain: leader in rack"),
        "{}",
        r.stdout
    );
}

#[test]
fn jobset_exclusive_topology_shows_each_child_job_in_its_own_domain() {
    // 2 child Jobs of 2 pods, one per rack: the assignment shown is per Job, in two
    // racks (the whole gang's could put both Jobs in one).
    let text = std::fs::read_to_string(users("jobset-exclusive.yaml"))
        .unwrap()
        .replace("replicas: 3", "replicas: 2");
    let dir = std::env::temp_dir().join(format!("gang-cli-exclusive-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("js.yaml");
    std::fs::write(&file, text).unwrap();
    let r = gang(&["place", &users("nodes-racks.yaml"), file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("4 members in 2 parts, each in a domain of its own"),
        "{}",
        r.stdout
    );
    let lines: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("workers-"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(lines[0].contains("in rack b1/r") && lines[1].contains("in rack b1/r"));
    let rack = |l: &str| l.split("in rack ").nth(1).unwrap()[..5].to_owned();
    assert_ne!(rack(lines[0]), rack(lines[1]), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn three_exclusive_jobs_on_two_racks_do_not_fit_and_the_paragraph_names_no_empty_resource() {
    // 3 child Jobs, each needing a rack of its own, on 2 racks of 2 roomy nodes (8 CPUs
    // each): the third finds both racks held, so all 4 nodes are out of its reach,
    // though none is short of a resource.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("jobset-exclusive.yaml"),
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let text = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("does not fit JobSet/default/exclusive-placement"),
        "{text}"
    );
    assert!(
        text.contains("Nodes excluded for workers: 4 not available to a member now."),
        "{text}"
    );
    assert!(!text.contains("short of now"), "{text}");
}
