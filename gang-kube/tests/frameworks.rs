//! The other workload kinds and topology schemes, each on a small inline example whose
//! expectations are worked out in the comments.

use gang_kube::{workloads, CheckStatus, Cluster, ClusterOptions, Framework, Level, Objects};

fn nodes(labels: &[(&str, &str, &str)]) -> String {
    // (name, key=value,key=value, gpus)
    let mut out = String::new();
    for (name, l, gpus) in labels {
        let labels: Vec<String> = l
            .split(',')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                format!("{k}: {v}")
            })
            .collect();
        out.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{{}}}\nstatus:\n  allocatable: {{cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"{gpus}\", pods: \"110\"}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n",
            labels.join(", ")
        ));
    }
    out
}

#[test]
fn oci_labels_are_detected_outermost_first() {
    let i = "oci.oraclecloud.com/rdma.hpc_island_id";
    let n = "oci.oraclecloud.com/rdma.network_block_id";
    let l = "oci.oraclecloud.com/rdma.local_block_id";
    let text = nodes(&[
        ("bm-1", &format!("{l}=lb1,{n}=nb1,{i}=is1"), "8"),
        ("bm-2", &format!("{l}=lb2,{n}=nb1,{i}=is1"), "8"),
        ("bm-3", "", "8"),
    ]);
    let o = Objects::parse("oci.yaml", &text).unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let t = &c.report().topology;
    assert_eq!((t.origin, t.name.as_deref()), ("detected", Some("oci")));
    assert_eq!(t.levels, [i, n, l]);
    assert!(t.reason.contains("on 2 of 3 nodes"), "{}", t.reason);
    // bm-3 has no labels: outside every domain.
    assert_eq!(c.report().levels[0].missing, 1);
}

#[test]
fn no_known_labels_is_flat() {
    let o = Objects::parse("n.yaml", &nodes(&[("n1", "", "8")])).unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    assert_eq!(c.report().topology.origin, "flat");
    assert!(c.topology().levels().is_empty());
}

#[test]
fn tfjob_roles_in_leader_order_with_kai_preferred_placement() {
    let text = r#"
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: tf
  namespace: ml
  annotations: {kai.scheduler/topology-preferred-placement: topology.example.com/rack}
spec:
  tfReplicaSpecs:
    Worker: {replicas: 4, template: {spec: {containers: [{name: tf, resources: {limits: {nvidia.com/gpu: "2"}}}]}}}
    PS: {replicas: 2, template: {spec: {containers: [{name: tf, resources: {requests: {cpu: "4"}}}]}}}
    Chief: {template: {spec: {containers: [{name: tf, resources: {requests: {cpu: "2"}}}]}}}
"#;
    let o = Objects::parse("tf.yaml", text).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(w.framework, Framework::TfJob);
    let roles: Vec<(&str, u32)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.members))
        .collect();
    // Chief (replicas defaults to 1), PS, then workers.
    assert_eq!(roles, [("chief", 1), ("ps", 2), ("worker", 4)]);
    assert_eq!((w.members, w.minimum), (7, 7));
    assert_eq!(
        w.topology.preferred.as_ref().unwrap().level,
        Level::Key("topology.example.com/rack".into())
    );
    assert!(w.topology.required.is_none());
    // No Kueue label, no PodGroup, no minAvailable: but KAI annotations are an integration.
    assert!(w.checks.iter().all(|c| c.id != "gang_scheduler"));
}

#[test]
fn volcano_podgroup_with_task_minimums_and_soft_topology() {
    let mut text = String::from(
        r#"
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: v}
spec:
  minMember: 3
  minTaskMember: {worker: 2}
  networkTopology: {mode: soft, highestTierAllowed: 2}
"#,
    );
    for i in 0..3 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pg-worker-{i}\n  namespace: v\n  annotations: {{scheduling.k8s.io/group-name: pg, volcano.sh/task-spec: worker}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]\n"
        ));
    }
    let o = Objects::parse("v.yaml", &text).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(w.framework, Framework::VolcanoPodGroup);
    assert_eq!((w.members, w.minimum), (3, 3));
    assert_eq!(w.roles.len(), 1);
    // Named by the task annotation; minTaskMember applies to it.
    assert_eq!(
        (w.roles[0].name.as_str(), w.roles[0].min_count),
        ("worker", Some(2))
    );
    assert_eq!(w.topology.preferred.as_ref().unwrap().level, Level::Tier(2));
    // Tier 2 is the second label level from the nodes up: block above rack.
    let cluster_text = nodes(&[
        (
            "a1",
            "topology.example.com/block=b1,topology.example.com/rack=a",
            "2",
        ),
        (
            "b1",
            "topology.example.com/block=b1,topology.example.com/rack=b",
            "2",
        ),
    ]);
    let c = Cluster::from_objects(
        &Objects::parse("n.yaml", &cluster_text).unwrap(),
        &ClusterOptions::new(),
    )
    .unwrap();
    let gang = c.gang_for(w).unwrap();
    assert_eq!(
        gang.get_topology().preferred.as_deref(),
        Some("topology.example.com/block")
    );
    assert_eq!(gang.get_roles()[0].get_min_count(), Some(2));
}

#[test]
fn kai_podgroup_with_pods_and_a_required_level() {
    let mut text = String::from(
        r#"
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg-train, namespace: k}
spec:
  minMember: 2
  topologyConstraint: {topology: t, requiredTopologyLevel: nvidia.com/gpu.clique}
"#,
    );
    for i in 0..2 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: train-{i}\n  namespace: k\n  annotations: {{pod-group-name: pg-train}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"4\"}}}}}}]\n"
        ));
    }
    let o = Objects::parse("k.yaml", &text).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(w.framework, Framework::KaiPodGroup);
    assert_eq!((w.members, w.minimum), (2, 2));
    assert_eq!(w.roles[0].name, "train"); // the pods' common name prefix
    let g = w.gang.as_ref().unwrap();
    assert_eq!(
        g.get_topology().required.as_deref(),
        Some("nvidia.com/gpu.clique")
    );
}

#[test]
fn native_podgroup_with_two_keys_takes_the_innermost() {
    let mut text = String::from(
        r#"
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: n}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints:
    topology: [{key: topology.example.com/rack}, {key: topology.example.com/block}]
"#,
    );
    for i in 0..2 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: g-{i}, namespace: n}}\nspec:\n  schedulingGroup: {{podGroupName: g}}\n  containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]\n"
        ));
    }
    text.push_str(&nodes(&[
        (
            "a1",
            "topology.example.com/block=b1,topology.example.com/rack=a",
            "1",
        ),
        (
            "a2",
            "topology.example.com/block=b1,topology.example.com/rack=a",
            "1",
        ),
    ]));
    let o = Objects::parse("g.yaml", &text).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(w.topology.also_required.len(), 1);
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    // Block is outermost in the detected topology, so rack is the binding one.
    assert_eq!(
        c.gang_for(w).unwrap().get_topology().required.as_deref(),
        Some("topology.example.com/rack")
    );
}

#[test]
fn kueue_podsets_with_different_requests_and_affinity_warnings() {
    let text = r#"
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicatedJobs:
    - name: leader
      template:
        spec:
          template:
            metadata:
              annotations: {kueue.x-k8s.io/podset-required-topology: topology.example.com/block}
            spec:
              affinity:
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                      - matchExpressions: [{key: pool, operator: In, values: [a]}]
                      - matchExpressions: [{key: pool, operator: In, values: [b]}]
              containers: [{name: c, resources: {requests: {cpu: "1"}}}]
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 4
          template:
            metadata:
              annotations: {kueue.x-k8s.io/podset-required-topology: topology.example.com/rack}
            spec:
              containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]
"#;
    let o = Objects::parse("js.yaml", text).unwrap();
    let w = &workloads(&o).unwrap()[0];
    // 1 leader + 2 jobs x 4 workers.
    let roles: Vec<(&str, u32, bool)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.members, r.constrained))
        .collect();
    assert_eq!(roles, [("leader", 1, false), ("workers", 8, true)]);
    // The largest role's request is the gang's; each PodSet is a part with its own,
    // placed in its own domain (Cluster::place_parts), not dropped.
    assert_eq!(
        w.topology.required.as_ref().unwrap().level,
        Level::Key("topology.example.com/rack".into())
    );
    let parts: Vec<(&str, &Level)> = w
        .topology
        .parts
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                &p.topology.required.as_ref().unwrap().level,
            )
        })
        .collect();
    assert_eq!(
        parts,
        [
            ("leader", &Level::Key("topology.example.com/block".into())),
            ("workers", &Level::Key("topology.example.com/rack".into()))
        ]
    );
    assert!(w.warnings.iter().any(
        |x| x.field.ends_with("nodeSelectorTerms") && x.message.contains("only the first term")
    ));
    // Only the first term's requirement is kept.
    assert_eq!(w.roles[0].requirements.len(), 1);
    assert_eq!(w.roles[0].requirements[0].values, ["a"]);
    assert!(w.checks.iter().all(|c| c.status != CheckStatus::Error));
}

#[test]
fn a_podgroup_created_for_a_job_is_checked_against_it() {
    let text = r#"
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ft, namespace: ml}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 4}}
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: c}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: ft
  namespace: ml
  ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: ft}]
spec: {minMember: 3}
"#;
    let o = Objects::parse("ft.yaml", text).unwrap();
    let ws = workloads(&o).unwrap();
    assert_eq!(ws.len(), 1, "the PodGroup is reported with its job");
    let check = ws[0]
        .checks
        .iter()
        .find(|c| c.id == "group_object" && c.message.contains("PodGroup/ml/ft"))
        .unwrap();
    // minMember 3 below the job's 4: the group may start without a worker.
    assert_eq!(check.status, CheckStatus::Warning);
    assert!(
        check.message.contains("spec.minMember 3"),
        "{}",
        check.message
    );
}
