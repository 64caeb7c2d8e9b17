//! Golden tests on the project's fixtures: what the cluster report and the workloads say,
//! and end to end, fixture → Inventory → the workload's gang → where it lands. Every
//! expectation is computed by hand from the fixture (see the comments in
//! tests/fixtures/generate.py and the YAML files).

use std::fs;

use gang_core::{Outcome, Quantity};
use gang_kube::{
    workloads, CheckStatus, Cluster, ClusterOptions, Framework, Level, NodeExclusion, Objects,
    TopologySource,
};

const BLOCK: &str = "cloud.google.com/gce-topology-block";
const SUBBLOCK: &str = "cloud.google.com/gce-topology-subblock";
const HOST: &str = "cloud.google.com/gce-topology-host";

fn load(files: &[&str]) -> Objects {
    let mut o = Objects::new();
    for f in files {
        let path = format!("{}/tests/fixtures/{f}", env!("CARGO_MANIFEST_DIR"));
        let text = fs::read_to_string(&path).unwrap();
        o.add(f, &text).unwrap_or_else(|e| panic!("{e}"));
    }
    o
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn usage<'a>(c: &'a Cluster, node: &str) -> &'a gang_kube::NodeUsage {
    c.usage().iter().find(|u| u.node == node).unwrap()
}

#[test]
fn gke_cluster_is_detected_and_counted() {
    let objects = load(&["gke-h100.json"]);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let r = c.report();
    assert_eq!(r.topology.origin, "detected");
    assert_eq!(r.topology.name.as_deref(), Some("gke"));
    assert_eq!(r.topology.levels, [BLOCK, SUBBLOCK, HOST]);
    assert!(
        r.topology.reason.contains("on 16 of 17 nodes"),
        "{}",
        r.topology.reason
    );
    assert_eq!((r.nodes, r.schedulable), (17, 15));
    let excluded: Vec<(&str, &NodeExclusion)> = r
        .excluded
        .iter()
        .map(|e| (e.node.as_str(), &e.reasons[0]))
        .collect();
    assert_eq!(
        excluded,
        [
            ("a3-b2-s2-h3", &NodeExclusion::Unschedulable),
            (
                "a3-b2-s2-h4",
                &NodeExclusion::NotReady {
                    status: "False".into(),
                    detail: "KubeletNotReady".into()
                }
            ),
        ]
    );
    assert_eq!(r.taints["nvidia.com/gpu=present:NoSchedule"], 16);
    // bert-0, eval-0, dns-agent-0 and infer-0 count; old-run-0 finished; pending-0 is unbound.
    assert_eq!(
        (
            r.pods.counted,
            r.pods.terminal,
            r.pods.unbound,
            r.pods.on_unknown_nodes
        ),
        (4, 1, 1, 0)
    );
    // 2 blocks, 4 subblocks (paths), 16 hosts; cpu-1 has no topology labels.
    let cov: Vec<(usize, usize, usize)> = r
        .levels
        .iter()
        .map(|l| (l.labelled, l.missing, l.domains))
        .collect();
    assert_eq!(cov, [(16, 1, 2), (16, 1, 4), (16, 1, 16)]);

    // bert-0: trainer + sidecar vs init fetch beside the sidecar, plus gvisor overhead.
    let u = usage(&c, "a3-b1-s1-h1");
    assert_eq!(u.used["nvidia.com/gpu"], q("8"));
    assert_eq!(u.used["cpu"], q("100750m"));
    assert_eq!(u.used["memory"], q("819576Mi"));
    assert_eq!(u.used["pods"], q("1"));
    // eval-0: the init container's 64 CPU is the peak.
    let u = usage(&c, "a3-b1-s1-h2");
    assert_eq!((u.used["cpu"], u.used["nvidia.com/gpu"]), (q("64"), q("4")));
    // infer-0: pod-level cpu 64 replaces the container's 48.
    assert_eq!(usage(&c, "a3-b2-s1-h1").used["cpu"], q("64"));
    // old-run-0 (Succeeded) holds nothing.
    assert!(usage(&c, "a3-b1-s1-h3").used.is_empty());

    let inv = c.inventory().unwrap();
    assert_eq!(inv.free("a3-b1-s1-h1", "cpu"), Some(q("105250m")));
    assert_eq!(inv.free("a3-b2-s1-h1", "nvidia.com/gpu"), Some(q("2")));
    assert_eq!(inv.free("a3-b1-s1-h1", "pods"), Some(q("109")));
    inv.validate().unwrap();
}

#[test]
fn kueue_flavor_restricts_nodes_and_names_levels() {
    let objects = load(&["gke-h100.json", "kueue-gke.yaml"]);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let r = c.report();
    assert_eq!(r.topology.origin, "kueue-topology");
    assert_eq!(r.topology.name.as_deref(), Some("gke-default"));
    assert_eq!(
        r.topology.levels,
        [BLOCK, SUBBLOCK, HOST, "kubernetes.io/hostname"]
    );
    assert_eq!(r.topology.flavor.as_ref().unwrap().name, "a3mega");
    let cpu1 = r.excluded.iter().find(|e| e.node == "cpu-1").unwrap();
    assert_eq!(
        cpu1.reasons,
        [NodeExclusion::OutsideFlavor {
            flavor: "a3mega".into(),
            label: "cloud.google.com/gke-nodepool".into(),
            want: "a3mega".into(),
            have: Some("default".into()),
        }]
    );
    assert_eq!(r.schedulable, 14);
}

#[test]
fn pytorchjob_lands_in_the_one_subblock_with_three_free_nodes() {
    let objects = load(&["gke-h100.json", "kueue-gke.yaml", "pytorchjob.yaml"]);
    let ws = workloads(&objects).unwrap();
    assert_eq!(ws.len(), 1);
    let w = &ws[0];
    assert_eq!(w.framework, Framework::PyTorchJob);
    assert_eq!(w.name(), "PyTorchJob/ml/llama-ft");
    // Members are pods, not GPUs: 1 master + 3 workers = 4 = minAvailable.
    assert_eq!((w.members, w.minimum), (4, 4));
    assert!(w.kueue);
    let roles: Vec<(&str, u32, bool)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.members, r.constrained))
        .collect();
    assert_eq!(roles, [("master", 1, false), ("worker", 3, true)]);
    assert_eq!(w.roles[1].requests["nvidia.com/gpu"], q("8")); // from limits
    assert_eq!(w.roles[1].requests["pods"], q("1"));
    assert_eq!(
        w.topology.required.as_ref().unwrap().level,
        Level::Key(SUBBLOCK.into())
    );
    let minimum = w.checks.iter().find(|c| c.id == "minimum").unwrap();
    assert_eq!(minimum.status, CheckStatus::Ok);
    // 3 workers x 8 GPUs; the master has none.
    assert!(minimum.message.contains("(24 GPUs"), "{}", minimum.message);

    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let gang = c.gang_for(w).unwrap();
    // The flavor's toleration was added to every role.
    assert!(gang
        .get_roles()
        .iter()
        .all(|r| r.get_tolerations().len() == 1));
    let inv = c.inventory().unwrap();
    let Outcome::Placed(p) = inv.place(&gang).unwrap() else {
        panic!("expected a placement")
    };
    p.validate(&inv).unwrap();
    // Full nodes per subblock: b1/s1 2, b1/s2 4, b2/s1 3, b2/s2 2 (one cordoned, one not
    // ready): b1/s2 and b2/s1 fit three; best fit takes the tight one.
    assert_eq!(p.level(), Some(SUBBLOCK));
    assert_eq!(p.domain_path(), "b2/s1");
    assert_eq!(p.placed("worker"), Some(3));
    assert_eq!(p.placed("master"), Some(1));
    let workers: Vec<&str> = p
        .assignments()
        .iter()
        .filter(|a| a.role == "worker")
        .map(|a| a.node.as_str())
        .collect();
    assert_eq!(workers, ["a3-b2-s1-h2", "a3-b2-s1-h3", "a3-b2-s1-h4"]);
    assert!(c.checks(w).iter().all(|c| c.status == CheckStatus::Ok));
}

#[test]
fn without_the_flavor_the_gpu_taint_excludes_every_gpu_node() {
    let objects = load(&["gke-h100.json", "pytorchjob.yaml"]);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let w = &workloads(&objects).unwrap()[0];
    let x = c.exclusions(w, &w.roles[1]);
    // 17 nodes: 1 not ready, 1 cordoned, 14 tainted; cpu-1 (untainted) has no topology
    // labels, which comes before its size in the order of reasons.
    assert_eq!((x.nodes, x.not_ready, x.unschedulable), (17, 1, 1));
    assert_eq!(x.taints["nvidia.com/gpu"], 14);
    assert_eq!(x.missing_level.get(BLOCK), Some(&1));
    assert!(x.too_small.is_empty());
    assert_eq!((x.fits_now, x.fits_empty, x.excluded()), (0, 0, 17));
    let shape = c
        .checks(w)
        .into_iter()
        .find(|c| c.role.as_deref() == Some("worker"))
        .unwrap();
    assert_eq!(shape.status, CheckStatus::Error);
    assert!(
        shape
            .message
            .contains("14 with untolerated taint nvidia.com/gpu (clusters running the ExtendedResourceToleration"),
        "{}",
        shape.message
    );
    let gang = c.gang_for(w).unwrap();
    let d = c.inventory().unwrap().place(&gang).unwrap();
    assert!(!d.is_placed());
}

#[test]
fn guide_podgroup_places_four_one_gpu_workers_in_rack_a() {
    let objects = load(&["racks.json", "training-workers.yaml"]);
    let ws = workloads(&objects).unwrap();
    assert_eq!(ws.len(), 1);
    let w = &ws[0];
    assert_eq!(w.framework, Framework::NativePodGroup);
    assert_eq!(w.name(), "PodGroup/ml-team/training-workers");
    assert!(w.found);
    assert_eq!((w.members, w.minimum, w.member_pods.len()), (4, 4, 4));
    assert_eq!(w.roles.len(), 1);
    let r = &w.roles[0];
    assert_eq!(r.name, "training-workers");
    let shape: Vec<(&str, Quantity)> = r.requests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        shape,
        [
            ("cpu", q("500m")),
            ("memory", q("8Gi")),
            ("nvidia.com/gpu", q("1")),
            ("pods", q("1"))
        ]
    );
    assert_eq!(
        w.topology.required.as_ref().unwrap().level,
        Level::Key("topology.example.com/rack".into())
    );
    assert!(
        w.checks.iter().all(|c| c.status == CheckStatus::Ok),
        "{:?}",
        w.checks
    );
    let gang = w.gang.clone().unwrap();

    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    assert_eq!(
        c.report().topology.levels,
        ["topology.example.com/block", "topology.example.com/rack"]
    );
    assert_eq!(c.gang_for(w).unwrap(), gang);
    let inv = c.inventory().unwrap();
    let Outcome::Placed(p) = inv.place(&gang).unwrap() else {
        panic!("rack a has 4 free GPUs")
    };
    assert_eq!(p.domain_path(), "b1/a");
    assert_eq!(p.node_counts(), [("a1", 2), ("a2", 2)]);
}

#[test]
fn guide_podgroup_alone_reports_the_missing_members() {
    let text = fs::read_to_string(format!(
        "{}/tests/fixtures/training-workers.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let group = text.split("\n---\n").next().unwrap();
    let objects = Objects::parse("podgroup.yaml", group).unwrap();
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!((w.members, w.minimum, w.found), (0, 4, true));
    let members = w.checks.iter().find(|c| c.id == "members_found").unwrap();
    assert_eq!(members.status, CheckStatus::Error);
    assert!(
        members
            .message
            .contains("spec.schedulingGroup.podGroupName = training-workers"),
        "{}",
        members.message
    );
    assert!(w.gang.is_none());
}

#[test]
fn pods_naming_a_missing_group_are_reported() {
    let text = fs::read_to_string(format!(
        "{}/tests/fixtures/training-workers.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let pods: Vec<&str> = text.split("\n---\n").skip(1).collect();
    let objects = Objects::parse("pods.yaml", &pods.join("\n---\n")).unwrap();
    let ws = workloads(&objects).unwrap();
    assert_eq!(ws.len(), 1);
    let w = &ws[0];
    assert!(!w.found);
    assert_eq!(w.object.to_string(), "PodGroup/ml-team/training-workers");
    assert_eq!(w.members, 4);
    let group = w.checks.iter().find(|c| c.id == "group_object").unwrap();
    assert_eq!(group.status, CheckStatus::Error);
    assert!(
        group.message.contains("4 pod(s) name it"),
        "{}",
        group.message
    );
}

#[test]
fn jobset_slices_land_in_whole_subblocks_of_one_block() {
    let objects = load(&["gke-h100.json", "kueue-gke.yaml", "jobset-slices.yaml"]);
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!(w.framework, Framework::JobSet);
    assert_eq!((w.members, w.roles[0].name.as_str()), (4, "slice"));
    assert_eq!(w.topology.slices.len(), 1);
    assert_eq!(w.topology.slices[0].size, 2);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let inv = c.inventory().unwrap();
    let Outcome::Placed(p) = inv.place(&c.gang_for(w).unwrap()).unwrap() else {
        panic!("both blocks hold two slices")
    };
    p.validate(&inv).unwrap();
    assert_eq!(p.level(), Some(BLOCK));
    // Every subblock used holds a multiple of the slice size, one member per node.
    let mut per_subblock = std::collections::BTreeMap::new();
    for (node, n) in p.node_counts() {
        assert_eq!(n, 1);
        let sub = &node[..8]; // a3-bX-sY
        *per_subblock.entry(sub.to_owned()).or_insert(0) += n;
    }
    assert!(
        per_subblock.values().all(|n| n % 2 == 0),
        "{per_subblock:?}"
    );
    let blocks: std::collections::BTreeSet<&str> = per_subblock.keys().map(|k| &k[..5]).collect();
    assert_eq!(blocks.len(), 1);
}

#[test]
fn volcano_job_on_eks_stays_under_one_layer_3_network_node() {
    let objects = load(&["eks-p5.json", "volcano-job.yaml"]);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let r = c.report();
    assert_eq!(r.topology.name.as_deref(), Some("eks"));
    assert_eq!(
        r.topology.levels,
        [
            "topology.k8s.aws/network-node-layer-1",
            "topology.k8s.aws/network-node-layer-2",
            "topology.k8s.aws/network-node-layer-3"
        ]
    );
    // agent-0: app 1 + sidecar 500m = 1500m vs init 2 + sidecar 500m = 2500m.
    let u = usage(&c, "p5-b2-1");
    assert_eq!((u.used["cpu"], u.used["memory"]), (q("2500m"), q("1152Mi")));
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!(w.framework, Framework::VolcanoJob);
    assert_eq!(w.topology.required.as_ref().unwrap().level, Level::Tier(1));
    assert!(w
        .warnings
        .iter()
        .any(|x| x.field == "spec.networkTopology.highestTierAllowed"));
    assert!(w.gang.is_none()); // a tier needs the cluster's levels
    let gang = c.gang_for(w).unwrap();
    assert_eq!(
        gang.get_topology().required.as_deref(),
        Some("topology.k8s.aws/network-node-layer-3")
    );
    let Outcome::Placed(p) = c.inventory().unwrap().place(&gang).unwrap() else {
        panic!("nn-b1 and nn-b2 have three free nodes each")
    };
    // Free full nodes: nn-a1 1, nn-a2 2, nn-b1 3, nn-b2 3: a tie, the first in order.
    assert_eq!(p.domain_path(), "nn-top/nn-b/nn-b1");
}

#[test]
fn mpijob_on_kai_needs_a_whole_free_nvl72_rack() {
    let objects = load(&["nvl72-gb200.json", "mpijob-kai.yaml"]);
    let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    let r = c.report();
    assert_eq!(r.topology.name.as_deref(), Some("nvidia-clique"));
    assert_eq!(r.topology.levels, ["nvidia.com/gpu.clique"]);
    assert_eq!(r.levels[0].domains, 2);
    // llm-0 carries gvisor overhead.
    assert_eq!(usage(&c, "gb200-r1-t01").used["cpu"], q("64250m"));
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!(w.framework, Framework::MpiJob);
    let roles: Vec<(&str, u32)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.members))
        .collect();
    assert_eq!(roles, [("launcher", 1), ("worker", 16)]);
    assert_eq!((w.members, w.minimum), (17, 17));
    // The worker's init container (100 CPU) is its peak.
    assert_eq!(w.roles[1].requests["cpu"], q("100"));
    let gang = w.gang.clone().unwrap();
    assert_eq!(
        gang.get_topology().required.as_deref(),
        Some("nvidia.com/gpu.clique")
    );
    let Outcome::Placed(p) = c.inventory().unwrap().place(&gang).unwrap() else {
        panic!("clique 2 is free")
    };
    // Clique 1 has 14 free trays (56 GPUs) for 16 workers; clique 2 has 18.
    assert_eq!(p.domain_path(), "7f3c9a2e-1b4d-4e8f-9a6b-2c5d8e1f0a3b.2");
    assert_eq!(p.placed("worker"), Some(16));
}

#[test]
fn coscheduling_minimum_above_the_pods_found_never_becomes_ready() {
    let objects = load(&["coscheduling.yaml"]);
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!(w.framework, Framework::CoschedulingPodGroup);
    assert_eq!((w.members, w.minimum), (2, 3));
    let m = w.checks.iter().find(|c| c.id == "minimum").unwrap();
    assert_eq!(m.status, CheckStatus::Error);
    assert!(
        m.message
            .contains("spec.minMember 3 is more than the 2 members"),
        "{}",
        m.message
    );
    assert!(w.gang.is_none());
    // Placing it is invalid input naming the object and the field.
    let nodes = load(&["racks.json"]);
    let c = Cluster::from_objects(&nodes, &ClusterOptions::new()).unwrap();
    let err = c.gang_for(w).unwrap_err();
    assert_eq!(err.kind(), gang_kube::ErrorKind::InvalidMinimum);
    assert_eq!(
        (err.source_name(), err.object(), err.field(), err.value()),
        (
            "coscheduling.yaml",
            Some("PodGroup/research/sweep"),
            Some("spec.minMember"),
            Some("3")
        )
    );

    // The report serialises for a command's JSON output.
    let json = serde_json::to_value(w).unwrap();
    assert_eq!(json["framework"], "coscheduling-pod-group");
    assert_eq!(json["minimum_field"], "spec.minMember");
    assert_eq!(json["checks"][2]["status"], "error");
    // Whole quantities serialise as numbers (gang-core's format), others as "500m".
    assert_eq!(json["roles"][0]["requests"]["nvidia.com/gpu"], 2);
}

#[test]
fn elastic_group_minimum_shrinks_the_largest_role() {
    let kueue = fs::read_to_string(format!(
        "{}/tests/fixtures/pytorchjob.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace("minAvailable: 4", "minAvailable: 2");
    // Not managed by Kueue (no queue label, no Kueue annotation): minAvailable is the
    // gang scheduler's minimum.
    let text = kueue
        .replace("    kueue.x-k8s.io/queue-name: a3-queue\n", "")
        .replace(
            "kueue.x-k8s.io/podset-required-topology",
            "example.com/note",
        );
    let objects = Objects::parse("pytorchjob.yaml", &text).unwrap();
    let w = &workloads(&objects).unwrap()[0];
    // 4 members, minimum 2: the shortfall of 2 comes from the workers; the master stays.
    let mins: Vec<(&str, Option<u32>)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.min_count))
        .collect();
    assert_eq!(mins, [("master", None), ("worker", Some(1))]);
    assert!(w.warnings.iter().any(
        |x| x.field == "spec.runPolicy.schedulingPolicy.minAvailable"
            && x.message.contains("master ≥ 1, worker ≥ 1")
    ));
    let m = w.checks.iter().find(|c| c.id == "minimum").unwrap();
    assert_eq!(m.status, CheckStatus::Warning);
    // Managed by Kueue, the job is admitted whole (Kueue has no partial admission for a
    // PyTorchJob and never reads minAvailable): all 4 are placed, and the warning says
    // why minAvailable 2 is left aside.
    let objects = Objects::parse("pytorchjob.yaml", &kueue).unwrap();
    let w = &workloads(&objects).unwrap()[0];
    assert_eq!((w.members, w.minimum), (4, 4));
    assert!(w.roles.iter().all(|r| r.min_count.is_none()));
    let x = w
        .warnings
        .iter()
        .find(|x| x.field == "spec.runPolicy.schedulingPolicy.minAvailable")
        .expect("a warning on minAvailable");
    assert!(
        x.message.contains("Kueue admits the whole workload"),
        "{x:?}"
    );
}

#[test]
fn given_levels_replace_detection() {
    let objects = load(&["gke-h100.json"]);
    let opts = ClusterOptions::new().topology(TopologySource::Levels(vec![BLOCK.into()]));
    let c = Cluster::from_objects(&objects, &opts).unwrap();
    assert_eq!(c.report().topology.origin, "given");
    assert_eq!(c.topology().levels(), [BLOCK]);
    // Ignoring a pod gives its node back.
    let opts = opts.ignore_pod("ml", "bert-0");
    let c = Cluster::from_objects(&objects, &opts).unwrap();
    assert_eq!(c.report().pods.ignored, 1);
    assert!(usage(&c, "a3-b1-s1-h1").used.is_empty());
}

/// gang-core's inventory build with its memo of the previous node's names and packed
/// path keys builds what its plain path builds (`Inventory::check_build`), on every
/// fixture that makes a cluster, detected and with the GKE levels given.
#[test]
fn every_fixture_inventory_is_built_the_same_with_and_without_the_memo() {
    let dir = format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = Vec::new();
    for sub in ["", "/corpus"] {
        for e in fs::read_dir(format!("{dir}{sub}")).unwrap() {
            let p = e.unwrap().path();
            if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("json" | "yaml")
            ) {
                files.push(p.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    let given = TopologySource::Levels(vec![BLOCK.into(), SUBBLOCK.into(), HOST.into()]);
    let mut checked = 0;
    for f in &files {
        let mut o = Objects::new();
        if o.add(f, &fs::read_to_string(f).unwrap()).is_err() {
            continue;
        }
        for options in [
            ClusterOptions::new(),
            ClusterOptions::new().topology(given.clone()),
        ] {
            if let Ok(c) = Cluster::from_objects(&o, &options) {
                gang_core::Inventory::check_build(c.topology().clone(), c.nodes())
                    .unwrap_or_else(|d| panic!("{f}: {d}"));
                checked += usize::from(!c.nodes().is_empty());
            }
        }
    }
    assert!(checked >= 6, "{checked} clusters with nodes");
}
