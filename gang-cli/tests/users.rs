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

/// A fixture of gang-kube's `users/` with text replaced, written to a scratch file.
fn edited(name: &str, from: &str, to: &str) -> (std::path::PathBuf, String) {
    let text = std::fs::read_to_string(users(name)).unwrap();
    assert!(text.contains(from), "{name}: {from}");
    let dir = std::env::temp_dir().join(format!(
        "gang-cli-users-{}-{}",
        std::process::id(),
        name.trim_end_matches(".yaml")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    let path = file.to_str().unwrap().to_owned();
    (dir, path)
}

#[test]
fn an_object_with_neither_name_is_refused_at_metadata_name() {
    let (dir, file) = edited(
        "generate-name-job.yaml",
        "generateName: tas-sample-job-",
        "labels2: {}",
    );
    let r = gang(&["place", &users("nodes-racks.yaml"), &file]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains(": Job/default/<unnamed>: metadata.name: the object has neither metadata.name nor metadata.generateName"),
        "{m}"
    );
    assert!(!m.contains("gang.name"), "{m}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_new_kinds_are_read_with_their_roles_through_the_cli() {
    // The same facts gang-kube's tests/users.rs works out from the fixtures.
    for (file, workload, roles, minimum) in [
        (
            "lws.yaml",
            "leaderworkerset/vllm",
            &[("leader", 1), ("worker", 3)][..],
            4,
        ),
        (
            "kubeflow-more.yaml",
            "xgboostjob/xgboost-dist-iris",
            &[("master", 1), ("worker", 2)],
            3,
        ),
        (
            "kubeflow-more.yaml",
            "paddlejob/paddle-simple-gpu",
            &[("worker", 4)],
            3,
        ),
        (
            "ray.yaml",
            "rayjob/rayjob-sample",
            &[("head", 1), ("small-group", 3)],
            4,
        ),
        (
            "appwrapper.yaml",
            "appwrapper/sample-aw",
            &[("job0", 2), ("pytorchjob1", 1), ("pytorchjob1-1", 2)],
            5,
        ),
    ] {
        let r = gang(&[
            "explain",
            &users("nodes-racks.yaml"),
            &users(file),
            "-w",
            workload,
            "-o",
            "json",
        ]);
        let v = json(&r.stdout);
        let got: Vec<(String, u64)> = v["workload"]["roles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_owned(),
                    x["members"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, u64)> = roles.iter().map(|(n, k)| ((*n).to_owned(), *k)).collect();
        assert_eq!(got, want, "{workload}: {}", r.stdout);
        assert_eq!(v["workload"]["minimum"], minimum, "{workload}");
    }
}

#[test]
fn a_workload_without_requests_or_limit_range_is_warned_through_the_cli() {
    let text = std::fs::read_to_string(users("limitrange-pi.yaml")).unwrap();
    let job = text.split("---").nth(1).unwrap().to_owned();
    let dir = std::env::temp_dir().join(format!("gang-cli-nolr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pi.yaml");
    std::fs::write(&file, job).unwrap();
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        file.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("no LimitRange of namespace default"),
        "{warnings}"
    );
    assert_eq!(
        v["workload"]["roles"][0]["requests"]["cpu"],
        serde_json::Value::Null
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn volcano_partitions_and_hard_mode_without_levels_through_the_cli() {
    // Partitions of 2 a rack inside the block: 4 pods, 2 in each rack.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("volcano-partitions.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    assert_eq!(
        v["workload"]["request"]["required"],
        "topology.kubernetes.io/block"
    );
    assert_eq!(v["workload"]["request"]["slices"][0][1], 2, "{}", r.stdout);
    // Hard mode on nodes without topology labels: an error naming the missing topology.
    let dir = std::env::temp_dir().join(format!("gang-cli-flat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = users("volcano-partitions.yaml");
    let flat = dir.join("flat.yaml");
    std::fs::write(
        &flat,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"64\", pods: \"110\"}}\n",
    )
    .unwrap();
    let r = gang(&["place", flat.to_str().unwrap(), &file]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains("spec.networkTopology.highestTierAllowed") && m.contains("no levels"),
        "{m}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_jobset_joining_a_pod_group_is_asked_for_as_the_jobset() {
    let r = gang(&[
        "explain",
        &users("nodes-racks.yaml"),
        &users("jobset-scheduling-group.yaml"),
        "-w",
        "jobset/js",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["workload"]["object"], "JobSet/default/js");
    assert_eq!(
        v["workload"]["request"]["required"],
        "topology.kubernetes.io/rack"
    );
    assert_eq!(v["workload"]["minimum"], 4);
}

#[test]
fn podset_min_count_and_kueue_minimums_through_the_cli() {
    // Partial admission: 4 of 6 in one rack.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("kueue-partial-admission.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["workload"]["minimum"], 4);
    assert_eq!(
        v["result"]["level"], "topology.kubernetes.io/rack",
        "{}",
        r.stdout
    );
    let placed: u64 = v["result"]["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["count"].as_u64().unwrap())
        .sum();
    assert_eq!(placed, 4, "{}", r.stdout);
    // A Kueue-managed PyTorchJob: all 4, not minAvailable's 2; pending, as in Kueue.
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("kueue-pytorchjob-min.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    assert_eq!(
        (
            v["workload"]["members"].as_u64(),
            v["workload"]["minimum"].as_u64()
        ),
        (Some(4), Some(4))
    );
    assert!(
        v["warnings"].to_string().contains("is not Kueue's"),
        "{}",
        r.stdout
    );
    // job-min-parallelism 0: Kueue's webhook range, not gang-core's words.
    let (dir, file) = edited(
        "kueue-partial-admission.yaml",
        "job-min-parallelism: \"4\"",
        "job-min-parallelism: \"0\"",
    );
    let r = gang(&["place", &users("nodes-racks.yaml"), &file]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains(
            "metadata.annotations.kueue.x-k8s.io/job-min-parallelism: \"0\": must be 1 to 5"
        ),
        "{m}"
    );
    assert!(!m.contains("min_count"), "{m}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn podsets_asking_differently_and_groups_kueue_refuses_through_the_cli() {
    let r = gang(&[
        "place",
        &users("nodes-racks.yaml"),
        &users("kueue-podsets-mixed.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    let names: Vec<&str> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["leader", "workers"], "{}", r.stdout);
    // A group of the leader alone, in a JobSet: Kueue's webhook refuses it.
    let (dir, file) = edited(
        "kueue-podsets.yaml",
        "kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n",
        "kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n              kueue.x-k8s.io/podset-group-name: alone\n",
    );
    let r = gang(&["place", &users("nodes-racks.yaml"), &file]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let m = r.stderr.lines().last().unwrap();
    assert!(
        m.contains("spec.replicatedJobs[0].template.spec.template.metadata.annotations.kueue.x-k8s.io/podset-group-name: \"alone\": is given to 1 PodSet(s)")
            && m.contains("give it to two PodSets"),
        "{m}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// gang-kube's corpus (tests/fixtures/corpus, its answers worked out by hand in
/// gang-kube's tests/corpus.rs) through `gang place`: what gang-kube reads is what the
/// command reports (members, minimum), and what it refuses is exit 2 naming the file,
/// object and field (or, for a kind gang does not read, the kind).
#[test]
fn the_corpus_through_gang_place() {
    let dir = format!("{}/corpus", common::KUBE);
    let mut files: Vec<String> = std::fs::read_dir(common::crate_dir().join(&dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 40);
    for f in &files {
        let path = format!("{dir}/{f}");
        let text = std::fs::read_to_string(common::crate_dir().join(&path)).unwrap();
        let read = gang_kube::Objects::parse(&path, &text).and_then(|mut o| {
            o.apply_namespace("default");
            gang_kube::workloads(&o).map(|w| (w, o))
        });
        let r = gang(&["place", &users("nodes-racks.yaml"), &path, "-o", "json"]);
        match read {
            Ok((ws, _)) if ws.len() == 1 => {
                assert!(
                    r.code == 0 || r.code == 1 || r.code == 2,
                    "{f}: {}",
                    r.stderr
                );
                if r.code == 2 {
                    // Read, but its levels are not this cluster's (a node pool, a TPU
                    // selector): said at the field.
                    let m = r.stderr.lines().last().unwrap();
                    assert!(
                        m.contains(&format!("{path}: {}: ", ws[0].name()))
                            && m.contains("not a level of the cluster's topology"),
                        "{f}: {m}"
                    );
                    continue;
                }
                let v = json(&r.stdout);
                assert_eq!(v["workload"]["object"], ws[0].name(), "{f}");
                assert_eq!(v["workload"]["members"], ws[0].members, "{f}");
                assert_eq!(v["workload"]["minimum"], ws[0].minimum, "{f}");
            }
            Ok((ws, o)) => {
                assert!(ws.is_empty(), "{f}");
                assert_eq!(r.code, 2, "{f}");
                let u = &o.unread()[0];
                let m = r.stderr.lines().last().unwrap();
                assert!(
                    m.contains(&format!("Kind {} (apiVersion {}) in {path} is not a workload gang reads; supported: ", u.kind, u.api_version)),
                    "{f}: {m}"
                );
            }
            Err(e) => {
                assert_eq!(r.code, 2, "{f}: {}", r.stdout);
                let m = r.stderr.lines().last().unwrap();
                assert!(
                    m.contains(&format!(
                        "{path}: {}: {}: ",
                        e.object().unwrap(),
                        e.field().unwrap()
                    )) && m.contains(e.reason()),
                    "{f}: {m}"
                );
            }
        }
    }
}
