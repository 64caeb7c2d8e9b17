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
