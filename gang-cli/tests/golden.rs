//! Golden outputs: every fixture with every subcommand, as text and as JSON, plus the
//! facts each one must show (computed by hand from the fixtures: see the comments in
//! gang-kube/tests/fixtures/generate.py, the fixture YAML files and
//! gang-cli/src/demo.rs). `GANG_UPDATE_GOLDEN=1 cargo test -p gang-cli` rewrites the
//! files; review every diff by hand.

mod common;

use common::{gang, golden, json, kube, own};

/// (golden name, arguments, exit code).
fn cases() -> Vec<(&'static str, Vec<String>, i32)> {
    let k = |f: &str| kube(f);
    let sets: Vec<(&str, Vec<String>, i32, i32)> = vec![
        // (name, files, place exit, explain exit)
        (
            "racks",
            vec![k("racks.json"), k("training-workers.yaml")],
            0,
            0,
        ),
        (
            "gke-kueue-pytorchjob",
            vec![
                k("gke-h100.json"),
                k("kueue-gke.yaml"),
                k("pytorchjob.yaml"),
            ],
            0,
            0,
        ),
        (
            "gke-pytorchjob",
            vec![k("gke-h100.json"), k("pytorchjob.yaml")],
            1,
            1,
        ),
        (
            "gke-kueue-jobset",
            vec![
                k("gke-h100.json"),
                k("kueue-gke.yaml"),
                k("jobset-slices.yaml"),
            ],
            0,
            0,
        ),
        (
            "eks-volcano",
            vec![k("eks-p5.json"), k("volcano-job.yaml")],
            0,
            0,
        ),
        (
            "nvl72-mpijob",
            vec![k("nvl72-gb200.json"), k("mpijob-kai.yaml")],
            0,
            0,
        ),
        (
            "racks-coscheduling",
            vec![k("racks.json"), k("coscheduling.yaml")],
            2,
            2,
        ),
        (
            "racks-preferred",
            vec![k("racks.json"), own("preferred-job.yaml")],
            0,
            0,
        ),
        (
            "racks-elastic",
            vec![k("racks.json"), own("elastic-workers.yaml")],
            1,
            1,
        ),
    ];
    let mut out = Vec::new();
    for (name, files, place, explain) in sets {
        for (cmd, code) in [("place", place), ("explain", explain)] {
            let mut args = vec![cmd.to_owned()];
            args.extend(files.iter().cloned());
            let n: &'static str = Box::leak(format!("{cmd}-{name}").into_boxed_str());
            out.push((n, args, code));
        }
    }
    for (name, files) in [
        ("racks", vec![k("racks.json")]),
        ("gke", vec![k("gke-h100.json")]),
        ("gke-kueue", vec![k("gke-h100.json"), k("kueue-gke.yaml")]),
        ("eks", vec![k("eks-p5.json")]),
        ("nvl72", vec![k("nvl72-gb200.json")]),
    ] {
        let mut args = vec!["topology".to_owned()];
        args.extend(files);
        let n: &'static str = Box::leak(format!("topology-{name}").into_boxed_str());
        out.push((n, args, 0));
    }
    // Preemption on gang-kube's preemption.yaml: the victims, the plan and the exit
    // codes are worked out by hand in that fixture's header comment (urgent: evict
    // eval-b and big in rack r1, exit 0; peer: only big is lower, no plan, exit 1;
    // polite: preemptionPolicy Never, exit 1). `explain` adds the plan's sentence.
    for (w, code) in [("urgent", 0), ("peer", 1), ("polite", 1)] {
        let n: &'static str = Box::leak(format!("preempt-{w}").into_boxed_str());
        out.push((
            n,
            vec![
                "preempt".into(),
                k("preemption.yaml"),
                "-w".into(),
                format!("job/{w}"),
            ],
            code,
        ));
    }
    // The guides' PodGroup fits now (rack a has 4 GPUs free): nothing to evict, exit 0.
    out.push((
        "preempt-racks",
        vec![
            "preempt".into(),
            k("racks.json"),
            k("training-workers.yaml"),
        ],
        0,
    ));
    out.push((
        "explain-preemption-urgent",
        vec![
            "explain".into(),
            k("preemption.yaml"),
            "-w".into(),
            "job/urgent".into(),
        ],
        1,
    ));
    out.push(("demo", vec!["demo".into()], 0));
    out.push(("demo-topology", vec!["demo".into(), "--topology".into()], 0));
    out
}

#[test]
fn every_fixture_and_subcommand_matches_its_golden_text_and_json() {
    for (name, args, code) in cases() {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = gang(&a);
        assert_eq!(
            text.code, code,
            "{name}: exit code\n{}{}",
            text.stdout, text.stderr
        );
        let mut shown = text.stdout.clone();
        if !text.stderr.is_empty() {
            shown.push_str("--- stderr ---\n");
            shown.push_str(&text.stderr);
        }
        golden(&format!("{name}.txt"), &shown);
        let mut aj = a.clone();
        aj.extend(["--output", "json"]);
        let j = gang(&aj);
        assert_eq!(
            j.code, code,
            "{name} --output json: exit code\n{}",
            j.stderr
        );
        let v = json(&j.stdout);
        if let Some(c) = v.get("exit_code") {
            assert_eq!(c, code, "{name}: exit_code in the JSON document");
        }
        golden(&format!("{name}.json"), &j.stdout);
    }
}

fn place_json(files: &[String]) -> serde_json::Value {
    let mut a: Vec<&str> = vec!["place", "-o", "json"];
    a.extend(files.iter().map(String::as_str));
    json(&gang(&a).stdout)
}

fn explain_json(files: &[String]) -> serde_json::Value {
    let mut a: Vec<&str> = vec!["explain", "-o", "json"];
    a.extend(files.iter().map(String::as_str));
    json(&gang(&a).stdout)
}

fn nodes_of(result: &serde_json::Value, role: &str) -> Vec<(String, u64)> {
    result["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["role"] == role)
        .map(|a| {
            (
                a["node"].as_str().unwrap().to_owned(),
                a["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_guides_podgroup_lands_in_rack_a() {
    // racks.json: a1 and a2 have 2 of 8 GPUs free each, b1 3, b2 is cordoned.
    let v = place_json(&[kube("racks.json"), kube("training-workers.yaml")]);
    assert_eq!(v["status"], "placed");
    assert_eq!(v["workload"]["object"], "PodGroup/ml-team/training-workers");
    assert_eq!(
        (
            v["workload"]["members"].as_u64(),
            v["workload"]["minimum"].as_u64()
        ),
        (Some(4), Some(4))
    );
    assert_eq!(v["result"]["domain"]["topology.example.com/rack"], "a");
    assert_eq!(
        nodes_of(&v["result"], "training-workers"),
        [("a1".to_owned(), 2), ("a2".to_owned(), 2)]
    );
    assert_eq!(v["topology"]["origin"], "detected");
    // The four member pods are the workload's own: not counted as usage.
    assert_eq!(v["cluster"]["pods"]["ignored"], 4);
    assert_eq!(v["cluster"]["pods"]["counted"], 3);
}

#[test]
fn explain_on_racks_shows_each_level_and_the_exclusions() {
    let v = explain_json(&[kube("racks.json"), kube("training-workers.yaml")]);
    assert_eq!(v["status"], "placed");
    let levels = v["levels"].as_array().unwrap();
    let row = |i: usize| {
        (
            levels[i]["name"].as_str().unwrap().to_owned(),
            levels[i]["domain"].as_str().unwrap().to_owned(),
            levels[i]["status"].as_str().unwrap().to_owned(),
            levels[i]["fits"][0]["fits"].as_u64().unwrap(),
        )
    };
    assert_eq!(row(0), ("block".into(), "b1".into(), "fits".into(), 4));
    assert_eq!(row(1), ("rack".into(), "b1/a".into(), "fits".into(), 4));
    // The best single node: b1 with 3 free GPUs.
    assert_eq!(row(2), ("node".into(), "b1".into(), "short".into(), 3));
    assert_eq!(levels[1]["requested"], true);
    let x = &v["exclusions"][0];
    assert_eq!(
        (
            x["nodes"].as_u64(),
            x["unschedulable"].as_u64(),
            x["fits_now"].as_u64()
        ),
        (Some(4), Some(1), Some(3))
    );
    assert_eq!(v["objects"]["kinds"]["Node"], 4);
    assert_eq!(v["objects"]["kinds"]["Pod"], 7);
    assert_eq!(v["objects"]["kinds"]["PodGroup"], 1);
}

#[test]
fn pytorchjob_workers_share_subblock_b2_s1_under_the_flavor() {
    let v = place_json(&[
        kube("gke-h100.json"),
        kube("kueue-gke.yaml"),
        kube("pytorchjob.yaml"),
    ]);
    assert_eq!(v["status"], "placed");
    assert_eq!(v["topology"]["origin"], "kueue-topology");
    // Free full nodes per subblock: b1/s1 2, b1/s2 4, b2/s1 3, b2/s2 2 (one cordoned,
    // one not ready): best fit for three workers is b2/s1.
    assert_eq!(
        v["result"]["domain"]["cloud.google.com/gce-topology-subblock"],
        "s1"
    );
    assert_eq!(
        v["result"]["domain"]["cloud.google.com/gce-topology-block"],
        "b2"
    );
    let workers: Vec<String> = nodes_of(&v["result"], "worker")
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert_eq!(workers, ["a3-b2-s1-h2", "a3-b2-s1-h3", "a3-b2-s1-h4"]);
    assert_eq!(v["result"]["placed"]["master"], 1);
}

#[test]
fn without_the_flavor_the_gpu_taint_excludes_every_gpu_node() {
    let v = explain_json(&[kube("gke-h100.json"), kube("pytorchjob.yaml")]);
    assert_eq!(v["status"], "unschedulable");
    assert_eq!(v["exit_code"], 1);
    let worker = v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["role"] == "worker")
        .unwrap();
    // 17 nodes: 1 not ready, 1 cordoned, 14 with the untolerated nvidia.com/gpu taint,
    // cpu-1 without topology labels.
    assert_eq!(worker["taints"]["nvidia.com/gpu"], 14);
    assert_eq!(worker["not_ready"], 1);
    assert_eq!(worker["unschedulable"], 1);
    assert_eq!(
        worker["missing_level"]["cloud.google.com/gce-topology-block"],
        1
    );
    assert_eq!(worker["fits_now"], 0);
    let shape = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "shape_fits" && c["role"] == "worker")
        .unwrap();
    assert_eq!(shape["status"], "error");
    assert!(v["relaxations"].as_array().unwrap().is_empty());
}

#[test]
fn volcano_job_on_eks_and_mpijob_on_nvl72_land_where_the_fixtures_say() {
    let v = place_json(&[kube("eks-p5.json"), kube("volcano-job.yaml")]);
    // Free full nodes: nn-a1 1, nn-a2 2, nn-b1 3, nn-b2 3: the first of the tie.
    assert_eq!(
        v["result"]["domain"]["topology.k8s.aws/network-node-layer-3"],
        "nn-b1"
    );
    let v = place_json(&[kube("nvl72-gb200.json"), kube("mpijob-kai.yaml")]);
    // Clique 1 has 14 free trays for 16 workers, clique 2 all 18.
    assert_eq!(
        v["result"]["domain"]["nvidia.com/gpu.clique"],
        "7f3c9a2e-1b4d-4e8f-9a6b-2c5d8e1f0a3b.2"
    );
    assert_eq!(v["result"]["placed"]["worker"], 16);
}

#[test]
fn jobset_slices_fill_whole_subblocks_of_one_block() {
    let v = place_json(&[
        kube("gke-h100.json"),
        kube("kueue-gke.yaml"),
        kube("jobset-slices.yaml"),
    ]);
    assert_eq!(v["status"], "placed");
    let nodes = nodes_of(&v["result"], "slice");
    assert_eq!(nodes.len(), 4);
    let blocks: std::collections::BTreeSet<&str> = nodes.iter().map(|(n, _)| &n[..5]).collect();
    assert_eq!(blocks.len(), 1, "{nodes:?}");
    let mut per_sub = std::collections::BTreeMap::new();
    for (n, k) in &nodes {
        *per_sub.entry(&n[..8]).or_insert(0) += k;
    }
    assert!(per_sub.values().all(|k| k % 2 == 0), "{per_sub:?}");
}

#[test]
fn elastic_group_is_offered_the_next_level_and_fewer_members() {
    let v = explain_json(&[kube("racks.json"), own("elastic-workers.yaml")]);
    assert_eq!(v["status"], "unschedulable");
    let rack = &v["levels"][1];
    assert_eq!(
        (rack["domain"].as_str(), rack["fits"][0]["fits"].as_u64()),
        (Some("b1/a"), Some(4))
    );
    assert_eq!(rack["short_of"][0], "nvidia.com/gpu");
    let r = v["relaxations"].as_array().unwrap();
    assert_eq!(r[0]["kind"], "coarser_level");
    assert_eq!(r[0]["domain"], "b1");
    assert_eq!(r[1]["kind"], "fewer_members");
    assert_eq!(
        (r[1]["domain"].as_str(), r[1]["members"].as_u64()),
        (Some("b1/a"), Some(4))
    );
}

#[test]
fn a_preferred_rack_walks_up_to_the_block() {
    let v = place_json(&[kube("racks.json"), own("preferred-job.yaml")]);
    assert_eq!(v["result"]["level"], "topology.example.com/block");
    // As few racks, then nodes, as possible: two racks, on two nodes (a1 and b1 whole;
    // rack a's 4 and one of b1's 3 would use three nodes).
    assert_eq!(
        nodes_of(&v["result"], "main"),
        [("a1".to_owned(), 2), ("b1".to_owned(), 3)]
    );
    let text = gang(&["place", &kube("racks.json"), &own("preferred-job.yaml")]).stdout;
    assert!(
        text.contains("no one rack holds it: preferred, so it walked up to block"),
        "{text}"
    );
}

#[test]
fn minimum_above_the_members_is_explained_and_invalid() {
    let r = gang(&["explain", &kube("racks.json"), &kube("coscheduling.yaml")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout
            .contains("spec.minMember 3 is more than the 2 members"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("coscheduling.yaml: PodGroup/research/sweep: spec.minMember: \"3\""),
        "{}",
        r.stderr
    );
}

#[test]
fn demo_places_the_first_snapshot_and_explains_the_second() {
    let v = json(&gang(&["demo", "-o", "json"]).stdout);
    let s = v["snapshots"].as_array().unwrap();
    assert_eq!(s.len(), 2);
    let place = &s[0]["place"];
    assert_eq!(place["status"], "placed");
    assert_eq!(place["result"]["domain"]["topology.example.com/rack"], "a");
    let explain = &s[1]["explain"];
    assert_eq!(explain["status"], "unschedulable");
    // Seven GPUs free (a 3, b 2, c 2), no rack of four.
    let rack = &explain["levels"][1];
    assert_eq!(
        (rack["name"].as_str(), rack["domain"].as_str()),
        (Some("rack"), Some("b1/a"))
    );
    assert_eq!(rack["fits"][0]["fits"], 3);
    let msg = explain["answer"]["message"].as_str().unwrap();
    assert!(msg.contains("7 training-workers fit"), "{msg}");
    assert_eq!(explain["relaxations"][0]["domain"], "b1");
    let text = gang(&["demo"]).stdout;
    assert!(
        text.contains("rack   b1/a  fits 3 of 4 training-workers (short of nvidia.com/gpu)"),
        "{text}"
    );
    // Each thing once: the relaxation on its own line, not again in the answer; the
    // best rack in the table only; the full node said one way; one unit for memory.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(flat.matches("block b1 fits all 4 now").count(), 1, "{text}");
    assert_eq!(flat.matches("Best rack").count(), 0, "{text}");
    assert_eq!(
        flat.matches("1 short of nvidia.com/gpu now").count(),
        1,
        "{text}"
    );
    assert!(!flat.contains("too small"), "{text}");
    assert!(
        !flat.contains("8589934592") && flat.contains("memory 8Gi"),
        "{text}"
    );
}

#[test]
fn yaml_output_is_the_same_document() {
    let files = [kube("racks.json"), kube("training-workers.yaml")];
    let y = gang(&["place", "-o", "yaml", &files[0], &files[1]]);
    assert_eq!(y.code, 0);
    let from_yaml: serde_json::Value = serde_yaml_ng::from_str(&y.stdout).unwrap();
    assert_eq!(from_yaml, place_json(&files));
}

#[test]
fn topology_is_plain_unless_colour_is_asked_for() {
    let plain = gang(&["topology", &kube("racks.json")]);
    assert!(!plain.stdout.contains('\x1b'));
    assert!(plain.stdout.contains("rack a"));
    let color = gang(&["topology", "--color", "always", &kube("racks.json")]);
    assert!(color.stdout.contains("\x1b[32m"), "{}", color.stdout);
    golden("topology-racks-color.txt", &color.stdout);
    // A pipe is not a terminal: `auto` stays plain, with or without NO_COLOR.
    let mut c = common::command(&["topology", &kube("racks.json")]);
    c.env("NO_COLOR", "1");
    assert!(!common::output(c).stdout.contains('\x1b'));
}

#[test]
fn topology_counts_free_gpus_per_domain() {
    let v = json(&gang(&["topology", "-o", "json", &kube("gke-h100.json")]).stdout);
    assert_eq!(v["resources"][0], "nvidia.com/gpu");
    let tree = &v["tree"];
    // 16 GPU nodes x 8 = 128 allocatable; free on schedulable nodes: 14 nodes x 8 minus
    // bert-0 (8), eval-0 (4) and infer-0 (6) = 94.
    assert_eq!(tree["allocatable"]["nvidia.com/gpu"], 128);
    assert_eq!(tree["free"]["nvidia.com/gpu"], 94);
    assert_eq!(
        (tree["nodes"].as_u64(), tree["schedulable"].as_u64()),
        (Some(17), Some(15))
    );
    let b1 = &tree["children"][0];
    assert_eq!(
        (b1["name"].as_str(), b1["free"]["nvidia.com/gpu"].as_u64()),
        (Some("b1"), Some(52))
    );
    // cpu-1 has no topology labels: gathered last, outside every block.
    let last = tree["children"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (last["unlabelled"].as_bool(), last["nodes"].as_u64()),
        (Some(true), Some(1))
    );
}

#[test]
fn stdin_is_read_for_dash() {
    let nodes = std::fs::read_to_string(kube("racks.json")).unwrap();
    let r = common::gang_stdin(&["place", "-", &kube("training-workers.yaml")], &nodes);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("placed PodGroup/ml-team/training-workers"),
        "{}",
        r.stdout
    );
}

#[test]
fn several_workloads_need_a_choice() {
    let files = [
        kube("racks.json"),
        kube("training-workers.yaml"),
        own("elastic-workers.yaml"),
    ];
    let r = gang(&["place", &files[0], &files[1], &files[2]]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("2 workloads found (PodGroup/ml-team/training-workers, PodGroup/ml-team/elastic-workers)"), "{}", r.stderr);
    let r = gang(&[
        "place",
        "--workload",
        "podgroup/elastic-workers",
        "-n",
        "ml-team",
        &files[0],
        &files[1],
        &files[2],
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("does not fit PodGroup/ml-team/elastic-workers"),
        "{}",
        r.stdout
    );
    let r = gang(&[
        "place",
        "--workload",
        "podgroup/training-workers",
        &files[0],
        &files[1],
        &files[2],
    ]);
    assert_eq!(r.code, 0);
}

#[test]
fn given_levels_replace_detection() {
    let r = json(
        &gang(&[
            "place",
            "-o",
            "json",
            "--levels",
            "topology.example.com/block",
            &kube("racks.json"),
            &kube("training-workers.yaml"),
        ])
        .stdout,
    );
    // The PodGroup asks for a rack, which is no longer a level.
    assert_eq!(r["status"], "error");
    assert_eq!(r["kind"], "unknown_level");
    assert_eq!(r["object"], "PodGroup/ml-team/training-workers");
}

#[test]
fn help_lists_the_exit_codes() {
    for args in [
        vec!["--help"],
        vec!["place", "--help"],
        vec!["kubectl", "explain", "--help"],
    ] {
        let r = gang(&args);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("Exit codes:"), "{}", r.stdout);
        assert!(r.stdout.contains("2  invalid input"), "{}", r.stdout);
    }
    let r = gang(&["frobnicate"]);
    assert_eq!(r.code, 2);
}

#[test]
fn one_node_levels_are_drawn_with_the_node_rows() {
    let r = gang(&["topology", "--no-nodes", &kube("gke-h100.json")]);
    assert!(!r.stdout.contains("gce-topology-host h"), "{}", r.stdout);
    assert!(
        r.stdout.contains("gce-topology-subblock s1"),
        "{}",
        r.stdout
    );
    let r = gang(&["topology", "--nodes", &kube("gke-h100.json")]);
    assert!(r.stdout.contains("gce-topology-host h111"), "{}", r.stdout);
    assert!(r.stdout.contains("a3-b1-s1-h1"), "{}", r.stdout);
    let r = gang(&["topology", "--depth", "1", &kube("gke-h100.json")]);
    assert!(r.stdout.contains("gce-topology-block b2"), "{}", r.stdout);
    assert!(!r.stdout.contains("subblock s"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("cpu-1"),
        "no node rows below --depth: {}",
        r.stdout
    );
}

/// On a real terminal (a pty from util-linux `script`, when it is installed) `auto`
/// colours, and `NO_COLOR` turns it off.
#[test]
fn a_terminal_gets_colour_unless_no_color() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to give gang a terminal");
        return;
    }
    let cmd = format!(
        "{} topology {}",
        env!("CARGO_BIN_EXE_gang"),
        kube("racks.json")
    );
    let run = |no_color: Option<&str>| {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &cmd, "/dev/null"])
            .current_dir(common::crate_dir())
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(run(None).contains("\x1b[32m"));
    assert!(!run(Some("1")).contains('\x1b'));
}

/// The preemption plans, checked apart from the goldens against the hand-worked
/// answers in gang-kube/tests/fixtures/preemption.yaml's header.
#[test]
fn preempt_names_the_victims_worked_out_by_hand() {
    let f = kube("preemption.yaml");
    let r = gang(&["preempt", &f, "-w", "job/urgent", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    assert_eq!(
        (v["status"].as_str(), v["exit_code"].as_i64()),
        (Some("placed"), Some(0))
    );
    let p = &v["preemption"];
    assert_eq!(p["priority"]["value"], 1000);
    assert_eq!(
        (p["running"].as_u64(), p["lower_priority"].as_u64()),
        (Some(4), Some(3))
    );
    let plan = &p["plan"];
    let victims: Vec<(&str, i64)> = plan["victims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["workload"].as_str().unwrap(),
                x["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    // Highest victim priority 50 (train-a's 100 is not needed); big whole (8 GPUs,
    // half of them in rack r2); eval-b's priority from its class mid.
    assert_eq!(victims, [("Job/ml/eval-b", 50), ("PodGroup/ml/big", 10)]);
    assert_eq!(plan["evicted"]["nvidia.com/gpu"], 12);
    assert_eq!(plan["domain"], "r1");
    assert_eq!(
        nodes_of(plan, "main"),
        [("n1".to_owned(), 2), ("n2".to_owned(), 2)]
    );
    assert_eq!(
        plan["message"],
        "evict Job/ml/eval-b (priority 50, 4 nvidia.com/gpu) and PodGroup/ml/big (priority 10, 8 nvidia.com/gpu) in rack r1"
    );
    // explain says the same sentence, and still exits 1: it does not fit now.
    let e = gang(&["explain", &f, "-w", "job/urgent"]);
    assert_eq!(e.code, 1);
    assert!(
        e.stdout
            .contains("Preempt      evict Job/ml/eval-b (priority 50, 4 nvidia.com/gpu)"),
        "{}",
        e.stdout
    );
    // peer (50): only big (10) is lower; no plan.
    let r = gang(&["preempt", &f, "-w", "job/peer", "-o", "json"]);
    assert_eq!(r.code, 1);
    let v = json(&r.stdout);
    assert_eq!(v["status"], "unschedulable");
    assert!(v["preemption"]["plan"].is_null());
    assert_eq!(v["preemption"]["lower_priority"], 1);
    // polite: preemptionPolicy Never: it waits.
    let r = gang(&["preempt", &f, "-w", "job/polite"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("preemptionPolicy: Never"), "{}", r.stdout);
    // A class the input lacks: invalid input naming the field and the value.
    let r = gang(&["preempt", &f, "-w", "job/typo", "-o", "json"]);
    assert_eq!(r.code, 2);
    let v = json(&r.stdout);
    assert_eq!(v["field"], "spec.template.spec.priorityClassName");
    assert_eq!(v["value"], "urgnet");
    // explain still explains it, and says why it cannot answer preemption.
    let e = gang(&["explain", &f, "-w", "job/typo"]);
    assert_eq!(e.code, 1, "{}", e.stderr);
    assert!(e.stdout.contains("preemption not answered"), "{}", e.stdout);
    assert!(e.stdout.contains("urgnet"), "{}", e.stdout);
    assert!(!e.stdout.contains("Preempt      "), "{}", e.stdout);
    // Without priorities in the input explain adds nothing (no "preemption" key).
    let v = explain_json(&[kube("gke-h100.json"), kube("pytorchjob.yaml")]);
    assert_eq!(v["status"], "unschedulable");
    assert!(v.get("preemption").is_none(), "{v}");
}

/// Kueue's WorkloadPriorityClass, on gang-kube's preemption.yaml plus
/// kueue-workload-priority.yaml (answers worked out by hand in the latter's header):
/// the job's label, not its pods' class or spec.priority, decides what it may evict.
#[test]
fn preempt_takes_the_priority_from_the_kueue_workload_priority_class() {
    let files = [
        kube("preemption.yaml"),
        kube("kueue-workload-priority.yaml"),
    ];
    let run = |w: &str, json_out: bool| {
        let mut args = vec!["preempt", &files[0], &files[1], "-w", w];
        if json_out {
            args.extend(["-o", "json"]);
        }
        gang(&args)
    };
    // wpc-urgent: its pods' class low (10) would leave nothing to evict; the label's
    // kueue-urgent (1000) gives urgent's plan.
    let r = run("job/wpc-urgent", true);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    let p = &v["preemption"]["priority"];
    assert_eq!(p["value"], 1000);
    assert_eq!(p["source"], "workload_priority_class");
    assert_eq!(p["class"], "kueue-urgent");
    assert_eq!(p["field"], "metadata.labels.kueue.x-k8s.io/priority-class");
    let victims: Vec<&str> = v["preemption"]["plan"]["victims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["workload"].as_str().unwrap())
        .collect();
    assert_eq!(victims, ["Job/ml/eval-b", "PodGroup/ml/big"]);
    assert_eq!(v["preemption"]["plan"]["domain"], "r1");
    let text = run("job/wpc-urgent", false).stdout;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "priority 1000 from Kueue WorkloadPriorityClass kueue-urgent (label kueue.x-k8s.io/priority-class)"
        ),
        "{text}"
    );
    // wpc-mid: the label's 50, not spec.priority 2500: only big (10) is lower, no plan.
    let r = run("job/wpc-mid", true);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["status"], "unschedulable");
    assert_eq!(v["preemption"]["priority"]["value"], 50);
    assert_eq!(v["preemption"]["lower_priority"], 1);
    assert!(v["preemption"]["plan"].is_null());
    // wpc-typo: a class the input lacks, named by the label: invalid input.
    let r = run("job/wpc-typo", true);
    assert_eq!(r.code, 2);
    let v = json(&r.stdout);
    assert_eq!(v["field"], "metadata.labels.kueue.x-k8s.io/priority-class");
    assert_eq!(v["value"], "kueue-urgnet");
    // explain answers preemption with the same plan.
    let e = gang(&["explain", &files[0], &files[1], "-w", "job/wpc-urgent"]);
    assert_eq!(e.code, 1, "{}", e.stderr);
    assert!(
        e.stdout
            .contains("Preempt      evict Job/ml/eval-b (priority 50, 4 nvidia.com/gpu)"),
        "{}",
        e.stdout
    );
}
