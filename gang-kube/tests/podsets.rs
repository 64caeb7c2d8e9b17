//! Issue 24 leftovers: workloads placed in parts — Kueue PodSets each in a domain of its
//! own (PodSets sharing `kueue.x-k8s.io/podset-group-name` together), placed in PodSet
//! order on what the earlier ones left (Kueue's TAS KEP: "PodSets are placed in sequence
//! and consume each other's capacity"), and a JobSet's child Jobs with
//! `alpha.jobset.sigs.k8s.io/exclusive-topology`, each shown in its own domain.
//! Fixtures in `fixtures/users/` (their headers say where each shape comes from).

use gang_core::Outcome;
use gang_kube::{workloads, Cluster, ClusterOptions, Level, Objects, PartOutcome, WorkloadGang};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/users/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// nodes-racks.yaml (2 racks of 2 nodes, 4 GPUs each) and `text`, in `default`.
fn with_nodes(text: &str) -> Objects {
    let mut o = Objects::parse("nodes-racks.yaml", &fixture("nodes-racks.yaml")).unwrap();
    o.add("workload.yaml", text).unwrap();
    o.apply_namespace("default");
    o
}

fn only(o: &Objects) -> WorkloadGang {
    let mut w = workloads(o).unwrap();
    assert_eq!(w.len(), 1);
    w.remove(0)
}

/// The rack of every node a part uses.
fn racks(p: &PartOutcome) -> Vec<String> {
    let placement = p.outcome.placement().expect("placed");
    let mut r: Vec<String> = placement
        .node_counts()
        .iter()
        .map(|(n, _)| n[..2].to_owned())
        .collect();
    r.dedup();
    r
}

fn placed_and_parts(o: &Objects) -> (Outcome, Vec<PartOutcome>) {
    let w = only(o);
    let c = Cluster::from_objects(o, &ClusterOptions::new()).unwrap();
    let inv = c.inventory().unwrap();
    (c.place(&inv, &w).unwrap(), c.place_parts(&inv, &w).unwrap())
}

#[test]
fn kueue_podsets_each_get_a_domain_of_their_own() {
    let o = with_nodes(&fixture("kueue-podsets.yaml"));
    let w = only(&o);
    let parts: Vec<(&str, &[String])> = w
        .topology
        .parts
        .iter()
        .map(|p| (p.name.as_str(), p.roles.as_slice()))
        .collect();
    assert_eq!(
        parts,
        [
            ("leader", &["leader".to_owned()][..]),
            ("workers", &["workers".to_owned()][..])
        ]
    );
    let rack = Level::Key("topology.kubernetes.io/rack".into());
    assert!(w
        .topology
        .parts
        .iter()
        .all(|p| p.topology.required.as_ref().map(|l| &l.level) == Some(&rack)));
    // No "stricter than Kueue" warning any more: the PodSets are placed as Kueue does.
    assert!(
        !w.warnings.iter().any(|x| x.message.contains("stricter")),
        "{:?}",
        w.warnings
    );
    // 12 GPUs do not fit in one rack of 8, but the leader (4) and the workers (8) each
    // fit in a rack: Kueue admits it, and so does gang.
    let (outcome, parts) = placed_and_parts(&o);
    assert!(outcome.is_placed(), "{outcome:?}");
    assert_eq!(parts.len(), 2);
    let (leader, workers) = (racks(&parts[0]), racks(&parts[1]));
    assert_eq!(
        (leader.len(), workers.len()),
        (1, 1),
        "{leader:?} {workers:?}"
    );
    assert_ne!(leader, workers);
    assert_eq!(
        parts[1].outcome.placement().unwrap().member_count(),
        8,
        "{parts:?}"
    );
}

#[test]
fn podsets_sharing_a_group_name_are_placed_together_under_one_constraint() {
    // The same PodSets in one podset-group-name: one domain for all 12 GPUs, which no
    // rack has (Kueue leaves it pending too).
    let text = fixture("kueue-podsets.yaml").replace(
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack",
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n              kueue.x-k8s.io/podset-group-name: together",
    );
    let o = with_nodes(&text);
    let w = only(&o);
    assert!(w.topology.parts.is_empty(), "{:?}", w.topology.parts);
    assert!(w.roles.iter().all(|r| r.constrained));
    let (outcome, parts) = placed_and_parts(&o);
    assert!(matches!(outcome, Outcome::Unschedulable(_)), "{outcome:?}");
    assert!(parts.is_empty());
    // With 8 GPUs in all (leader 2, workers 6) the group fits in one rack.
    let text = text
        .replace("nvidia.com/gpu: \"4\"", "nvidia.com/gpu: \"2\"")
        .replace(
            "completions: 4\n        parallelism: 4",
            "completions: 3\n        parallelism: 3",
        );
    let o = with_nodes(&text);
    let (outcome, _) = placed_and_parts(&o);
    let p = outcome.placement().expect("placed");
    let mut r: Vec<&str> = p.node_counts().iter().map(|(n, _)| &n[..2]).collect();
    r.dedup();
    assert_eq!(r.len(), 1, "{:?}", p.node_counts());
}

#[test]
fn a_later_podset_that_does_not_fit_after_the_earlier_ones_is_the_answer() {
    // Racks of 8 GPUs: the leader (4) takes a node of one rack, the 6 workers the other
    // rack; the 6 of eval then find 4 and 2 GPUs free: 6 in the cluster, in no rack.
    let text = fixture("kueue-podsets.yaml")
        .replace("replicas: 2\n", "replicas: 1\n")
        .replace(
            "completions: 4\n        parallelism: 4",
            "completions: 6\n        parallelism: 6",
        );
    let third = "  - name: eval\n    replicas: 1\n    template:\n      spec:\n        parallelism: 6\n        template:\n          metadata:\n            annotations:\n              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n          spec:\n            containers:\n            - {name: e, image: busybox, resources: {limits: {nvidia.com/gpu: \"1\"}}}\n";
    let text = format!("{text}{third}");
    let o = with_nodes(&text);
    let (outcome, parts) = placed_and_parts(&o);
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert!(parts[0].outcome.is_placed() && parts[1].outcome.is_placed());
    assert_eq!(parts[2].name, "eval");
    let Outcome::Unschedulable(d) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(d.roles.len(), 1, "{d}");
    assert_eq!(d.roles[0].role, "eval", "{d}");
}

#[test]
fn jobset_exclusive_topology_places_each_child_job_in_a_rack_of_its_own() {
    // JobSet's exclusive-placement example, 2 child Jobs of 2 pods (1 CPU each): the
    // whole gang fits in one rack, but each Job is shown in its own.
    let text = fixture("jobset-exclusive.yaml").replace("replicas: 3", "replicas: 2");
    let o = with_nodes(&text);
    let (outcome, parts) = placed_and_parts(&o);
    assert!(outcome.is_placed(), "{outcome:?}");
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["workers-0", "workers-1"]);
    assert!(parts
        .iter()
        .all(|p| p.outcome.placement().unwrap().member_count() == 2));
    let (a, b) = (racks(&parts[0]), racks(&parts[1]));
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_ne!(a, b, "{parts:?}");
    // 3 Jobs on 2 racks: unschedulable, and no parts to show.
    let o = with_nodes(&fixture("jobset-exclusive.yaml"));
    let (outcome, parts) = placed_and_parts(&o);
    assert!(matches!(outcome, Outcome::Unschedulable(_)));
    assert!(parts.is_empty());
}

#[test]
fn volcano_task_partitions_are_slices_inside_the_job_tier() {
    let o = with_nodes(&fixture("volcano-partitions.yaml"));
    let w = only(&o);
    let s = &w.topology.slices;
    assert_eq!(s.len(), 1, "{:?}", w.warnings);
    assert_eq!((s[0].size, &s[0].level), (2, &Level::Tier(1)));
    assert_eq!(
        s[0].field,
        "spec.tasks[0].partitionPolicy.networkTopology.highestTierAllowed"
    );
    assert!(
        !w.warnings
            .iter()
            .any(|x| x.field.ends_with("partitionPolicy")),
        "{:?}",
        w.warnings
    );
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let gang = c.gang_for(&w).unwrap();
    let t = gang.get_topology();
    assert_eq!(t.required.as_deref(), Some("topology.kubernetes.io/block"));
    assert_eq!(t.slices[0].level, "topology.kubernetes.io/rack");
    // One pod a node: each partition of 2 fills a rack.
    let (outcome, _) = placed_and_parts(&o);
    let p = outcome.placement().expect("placed");
    assert_eq!(p.member_count(), 4);
    // One partition of 4 needs a rack of 4 nodes: none (without partitions the block's
    // 4 nodes would do).
    let text = fixture("volcano-partitions.yaml")
        .replace("totalPartitions: 2", "totalPartitions: 1")
        .replace("partitionSize: 2", "partitionSize: 4");
    let (outcome, _) = placed_and_parts(&with_nodes(&text));
    assert!(matches!(outcome, Outcome::Unschedulable(_)), "{outcome:?}");
    // totalPartitions × partitionSize must be the replicas, as Volcano's webhook says.
    let text =
        fixture("volcano-partitions.yaml").replace("totalPartitions: 2", "totalPartitions: 3");
    let err = workloads(&with_nodes(&text)).unwrap_err();
    assert_eq!(
        err.field(),
        Some("spec.tasks[0].partitionPolicy.totalPartitions"),
        "{err}"
    );
}

/// `Cluster::parts`: what `place_parts` places, as each part asks, before placing:
/// the two PodSets of kueue-podsets.yaml each in a rack (the leader 1 pod, the workers
/// 2 Jobs × 4), the 3 child Jobs of jobset-exclusive.yaml each in a rack (2 pods), and
/// nothing for workloads placed as one gang (PodSets in one group, Volcano partitions).
#[test]
fn parts_list_what_each_part_asks_before_placing() {
    const RACK: &str = "topology.kubernetes.io/rack";
    let asked = |o: &Objects| {
        let c = Cluster::from_objects(o, &ClusterOptions::new()).unwrap();
        c.parts(&only(o))
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.group, p.roles, p.members, p.required, p.preferred))
            .collect::<Vec<_>>()
    };
    let rack = Some(RACK.to_owned());
    let o = with_nodes(&fixture("kueue-podsets.yaml"));
    assert_eq!(
        asked(&o),
        [
            (
                "leader".into(),
                None,
                vec!["leader".into()],
                1,
                rack.clone(),
                None
            ),
            (
                "workers".into(),
                None,
                vec!["workers".into()],
                8,
                rack.clone(),
                None
            ),
        ]
    );
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let parts = c.parts(&only(&o)).unwrap();
    assert!(parts.iter().all(|p| p.slices.is_empty()));
    assert_eq!(
        parts[0].field.as_deref(),
        Some("spec.replicatedJobs[0].template.spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology")
    );
    let o = with_nodes(&fixture("jobset-exclusive.yaml"));
    let names: Vec<_> = asked(&o)
        .into_iter()
        .map(|(n, g, r, m, req, pref)| (n, g.is_none(), r, m, req, pref.is_none()))
        .collect();
    assert_eq!(
        names,
        ["workers-0", "workers-1", "workers-2"].map(|n| (
            n.to_owned(),
            true,
            vec!["workers".to_owned()],
            2,
            rack.clone(),
            true
        ))
    );
    let grouped = fixture("kueue-podsets.yaml").replace(
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack",
        "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n              kueue.x-k8s.io/podset-group-name: together",
    );
    assert!(asked(&with_nodes(&grouped)).is_empty());
    assert!(asked(&with_nodes(&fixture("volcano-partitions.yaml"))).is_empty());
}

// ---------------------------------------------------------------------------------------
// PodSet minCount, a Kueue-managed workload's minimum, and what Kueue's webhooks refuse
// (kubernetes-sigs/kueue pkg/controller/jobframework/tas_validation.go,
// pkg/controller/jobs/job/job_webhook.go).

/// The node count of each rack a placement uses.
fn per_rack(p: &gang_core::Placement) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for (n, k) in p.node_counts() {
        match out.iter_mut().find(|(r, _)| *r == n[..2]) {
            Some((_, c)) => *c += k,
            None => out.push((n[..2].to_owned(), k)),
        }
    }
    out
}

#[test]
fn a_jobs_podset_min_count_places_as_many_as_a_rack_holds_down_to_it() {
    // 6 pods of 2 GPUs, at least 4, one rack of 8 GPUs: Kueue admits 4 (the largest
    // count from 4 to 6 that a rack holds), and so does gang.
    let o = with_nodes(&fixture("kueue-partial-admission.yaml"));
    let w = only(&o);
    assert_eq!((w.members, w.minimum), (6, 4));
    assert_eq!(
        w.minimum_field,
        "metadata.annotations.kueue.x-k8s.io/job-min-parallelism"
    );
    assert_eq!(w.roles[0].min_count, Some(4));
    let (outcome, _) = placed_and_parts(&o);
    let p = outcome.placement().expect("placed");
    assert_eq!(p.member_count(), 4);
    assert_eq!(per_rack(p).len(), 1, "{:?}", p.node_counts());
    // 1 GPU a pod: all 6 fit a rack, and all 6 are placed.
    let text = fixture("kueue-partial-admission.yaml").replace("gpu: \"2\"", "gpu: \"1\"");
    let (outcome, _) = placed_and_parts(&with_nodes(&text));
    assert_eq!(outcome.placement().expect("placed").member_count(), 6);
    // 3 GPUs a pod: a rack holds 2, fewer than 4: pending, as in Kueue.
    let text = fixture("kueue-partial-admission.yaml").replace("gpu: \"2\"", "gpu: \"3\"");
    let (outcome, _) = placed_and_parts(&with_nodes(&text));
    assert!(matches!(outcome, Outcome::Unschedulable(_)), "{outcome:?}");
}

#[test]
fn a_jobs_podset_min_count_is_one_to_one_below_its_pods_as_kueues_webhook_says() {
    for v in ["0", "6"] {
        let text = fixture("kueue-partial-admission.yaml").replace(
            "job-min-parallelism: \"4\"",
            &format!("job-min-parallelism: \"{v}\""),
        );
        let err = workloads(&with_nodes(&text)).unwrap_err();
        assert_eq!(
            (err.field(), err.value()),
            (
                Some("metadata.annotations.kueue.x-k8s.io/job-min-parallelism"),
                Some(v)
            ),
            "{err}"
        );
        assert!(
            err.reason()
                .starts_with("must be 1 to 5 (below the Job's 6 pods")
                && err.reason().contains("remove it to admit all"),
            "{err}"
        );
    }
}

#[test]
fn a_kueue_managed_pytorchjob_is_admitted_whole_whatever_its_min_available() {
    let o = with_nodes(&fixture("kueue-pytorchjob-min.yaml"));
    let w = only(&o);
    assert_eq!(
        (w.members, w.minimum, w.minimum_field.as_str()),
        (4, 4, "members")
    );
    assert!(w.roles.iter().all(|r| r.min_count.is_none()));
    let x = w
        .warnings
        .iter()
        .find(|x| x.field == "spec.runPolicy.schedulingPolicy.minAvailable")
        .expect("a warning");
    assert!(x.message.starts_with("minimum 2 is not Kueue's"), "{x:?}");
    // 3 workers of 3 GPUs: one a node, a rack holds 2: pending, as Kueue leaves it.
    let (outcome, _) = placed_and_parts(&o);
    assert!(matches!(outcome, Outcome::Unschedulable(_)), "{outcome:?}");
    // Without Kueue (no queue label, no Kueue annotation) minAvailable 2 is the gang
    // scheduler's: the master and 1 worker at least, and 2 workers fit the rack.
    let text = fixture("kueue-pytorchjob-min.yaml")
        .replace("    kueue.x-k8s.io/queue-name: user-queue\n", "")
        .replace(
            "kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack",
            "kai.scheduler/topology-required-placement: topology.kubernetes.io/rack",
        );
    let mut o = Objects::parse("nodes-racks.yaml", &fixture("nodes-racks.yaml")).unwrap();
    o.add("pt.yaml", &text).unwrap();
    o.apply_namespace("default");
    let w = only(&o);
    assert_eq!((w.members, w.minimum), (4, 2));
}

#[test]
fn podsets_each_ask_their_own_preferred_required_and_slices() {
    let o = with_nodes(&fixture("kueue-podsets-mixed.yaml"));
    let w = only(&o);
    /// A part's name, required and preferred levels, slice sizes.
    type Asked<'a> = (&'a str, Option<&'a Level>, Option<&'a Level>, Vec<u32>);
    let asked: Vec<Asked> = w
        .topology
        .parts
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.topology.required.as_ref().map(|l| &l.level),
                p.topology.preferred.as_ref().map(|l| &l.level),
                p.topology.slices.iter().map(|s| s.size).collect(),
            )
        })
        .collect();
    let (rack, block) = (
        Level::Key("topology.kubernetes.io/rack".into()),
        Level::Key("topology.kubernetes.io/block".into()),
    );
    assert_eq!(
        asked,
        [
            ("leader", None, Some(&rack), vec![]),
            ("workers", Some(&block), None, vec![2]),
        ]
    );
    let (outcome, parts) = placed_and_parts(&o);
    assert!(outcome.is_placed(), "{outcome:?}");
    // The leader in one rack; the 4 workers in the block, each slice of 2 in one rack.
    let leader = parts[0].outcome.placement().unwrap();
    assert_eq!(per_rack(leader).len(), 1);
    let workers = parts[1].outcome.placement().unwrap();
    assert_eq!(workers.member_count(), 4);
    assert!(
        per_rack(workers).iter().all(|(_, k)| k % 2 == 0),
        "{:?}",
        workers.node_counts()
    );
    // 4 Jobs of 2 workers need the block's 16 GPUs, and the leader, placed first, took
    // 1: the workers' part is the answer, and it does not fit.
    let text = fixture("kueue-podsets-mixed.yaml").replace("replicas: 2\n", "replicas: 4\n");
    let (outcome, parts) = placed_and_parts(&with_nodes(&text));
    let Outcome::Unschedulable(d) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(d.roles[0].role, "workers", "{d}");
    assert!(parts[0].outcome.is_placed());
}

/// The groups Kueue's webhook refuses, each named at a `podset-group-name` field with
/// what to do; and a group of one PodSet on a Job, which Kueue lets through.
#[test]
fn podset_groups_kueue_refuses_are_refused_naming_the_group_annotation() {
    const GROUP: &str = "kueue.x-k8s.io/podset-group-name";
    let field = |i: usize| {
        format!("spec.replicatedJobs[{i}].template.spec.template.metadata.annotations.{GROUP}")
    };
    // kueue-podsets.yaml: leader (1 pod), workers (2 Jobs of 4), each a required rack.
    // `grouped(leader, workers)` adds annotation lines under each one's required rack.
    let base = fixture("kueue-podsets.yaml");
    let req = "              kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack";
    let (head, tail) = base.split_at(base.find("  - name: workers").unwrap());
    let add = |text: &str, extra: &str| {
        if extra.is_empty() {
            text.to_owned()
        } else {
            text.replace(req, &format!("{req}\n              {extra}"))
        }
    };
    let grouped =
        |leader: &str, workers: &str| format!("{}{}", add(head, leader), add(tail, workers));
    let g = format!("{GROUP}: together");
    // Both: a leader of 1 and its workers, one rack: read (one part).
    let w = only(&with_nodes(&grouped(&g, &g)));
    assert!(w.topology.parts.is_empty());
    let two_leaders = grouped(&g, &g).replacen(
        "completions: 1\n        parallelism: 1",
        "completions: 2\n        parallelism: 2",
        1,
    );
    assert!(two_leaders.contains("parallelism: 2"));
    let block_workers = format!(
        "{}{}",
        add(head, &g),
        add(tail, &g).replace(
            "topology.kubernetes.io/rack",
            "topology.kubernetes.io/block"
        )
    );
    let sliced = format!("{g}\n              kueue.x-k8s.io/podset-slice-required-topology: kubernetes.io/hostname\n              kueue.x-k8s.io/podset-slice-size: \"1\"");
    let number = format!("{GROUP}: \"7\"");
    let cases: Vec<(String, String, &str, &str)> = vec![
        // A group of one PodSet in a JobSet.
        (grouped(&g, ""), field(0), "is given to 1 PodSet(s), leader (1 pod)", "give it to two PodSets"),
        // Neither PodSet of 1 pod.
        (two_leaders, field(0), "groups PodSets leader (2 pods) and workers (8 pods)", "give it to a PodSet of 1"),
        // Different levels.
        (
            block_workers,
            field(1),
            "PodSet workers asks for required topology.kubernetes.io/block, PodSet leader for required topology.kubernetes.io/rack",
            "make them the same",
        ),
        // A number as the name.
        (grouped(&number, &number), field(0), "must not be a number", "e.g. leader-and-workers"),
        // With slices.
        (grouped(&sliced, &g), field(0), "cannot be set on a PodSet with slice annotations", "drop the slices or the group"),
        // Without a required or preferred level on the PodSet.
        (
            grouped(&g, &g).replacen(req, "              kueue.x-k8s.io/podset-unconstrained-topology: \"true\"", 1),
            field(0),
            "needs kueue.x-k8s.io/podset-required-topology or kueue.x-k8s.io/podset-preferred-topology",
            "add the level the group shares",
        ),
    ];
    for (text, field, words, to_do) in cases {
        let err = workloads(&with_nodes(&text)).unwrap_err();
        assert_eq!(err.field(), Some(field.as_str()), "{err}");
        assert_eq!(err.object(), Some("JobSet/default/tas-example-jobset"));
        assert!(err.reason().contains(words), "{words}: {err}");
        assert!(err.reason().ends_with(to_do), "{to_do}: {err}");
    }
    // A Job's one PodSet in a group of its own: Kueue's Job webhook lets it through.
    let job = fixture("kueue-partial-admission.yaml").replace(
        "        kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack",
        "        kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack\n        kueue.x-k8s.io/podset-group-name: alone",
    );
    assert_eq!(only(&with_nodes(&job)).members, 6);
}

#[test]
fn a_slice_larger_than_its_podset_is_refused_at_the_slice_size() {
    let text = fixture("kueue-podsets-mixed.yaml")
        .replace("podset-slice-size: \"2\"", "podset-slice-size: \"6\"");
    let err = workloads(&with_nodes(&text)).unwrap_err();
    assert_eq!(
        (err.field(), err.value()),
        (
            Some("spec.replicatedJobs[1].template.spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-size"),
            Some("6")
        ),
        "{err}"
    );
    assert!(
        err.reason()
            .starts_with("is more than the 4 pods of PodSet workers")
            && err.reason().ends_with("lower it to 4 or less"),
        "{err}"
    );
    // Multi-layer constraints (Kueue's TASMultiLayerTopology): 1 to 3 layers, each inner
    // size dividing the outer, each level once.
    let layers = |json: &str| {
        fixture("kueue-podsets-mixed.yaml").replace(
            "              kueue.x-k8s.io/podset-slice-required-topology: topology.kubernetes.io/rack\n              kueue.x-k8s.io/podset-slice-size: \"2\"",
            &format!("              kueue.x-k8s.io/podset-slice-required-topology-constraints: '{json}'"),
        )
    };
    let f = "spec.replicatedJobs[1].template.spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-required-topology-constraints";
    let w = only(&with_nodes(&layers(
        r#"[{"topology": "topology.kubernetes.io/rack", "size": 2}, {"topology": "kubernetes.io/hostname", "size": 1}]"#,
    )));
    assert_eq!(w.topology.parts[1].topology.slices.len(), 2);
    for (json, at, words) in [
        ("[]", f.to_owned(), "has 0 layers"),
        (
            r#"[{"topology": "topology.kubernetes.io/rack", "size": 2}, {"topology": "kubernetes.io/hostname", "size": 3}]"#,
            format!("{f}[1].size"),
            "must divide the size 2",
        ),
        (
            r#"[{"topology": "topology.kubernetes.io/rack", "size": 2}, {"topology": "topology.kubernetes.io/rack", "size": 1}]"#,
            format!("{f}[1].topology"),
            "is layer 0's too",
        ),
        (
            r#"[{"topology": "topology.kubernetes.io/rack", "size": 8}]"#,
            format!("{f}[0].size"),
            "is more than the 4 pods of PodSet workers",
        ),
    ] {
        let err = workloads(&with_nodes(&layers(json))).unwrap_err();
        assert_eq!(err.field(), Some(at.as_str()), "{json}: {err}");
        assert!(err.reason().contains(words), "{json}: {err}");
    }
}
