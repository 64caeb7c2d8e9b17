//! `gang demo`: the guides' rack example, built in (keep-workers-close: "Initially,
//! rack A can host the group. In the second snapshot, seven GPUs remain free across
//! the cluster, but no single rack can host four workers.").
//!
//! One block `b1` with racks `a`, `b`, `c` of two 8-GPU H200 nodes each; other teams'
//! pods use the GPUs. The workload is the guide's native PodGroup `training-workers`
//! (`minCount: 4`, one rack) and its four 1-GPU member pods, exactly as the guide
//! writes them.
//!
//! | node | a1 | a2 | b1 | b2 | c1 | c2 | free per rack | total |
//! |---|---|---|---|---|---|---|---|---|
//! | snapshot 1, GPUs used | 6 | 6 | 7 | 8 | 6 | 8 | a 4, b 1, c 2 | 7 |
//! | snapshot 2, GPUs used | 6 | 7 | 6 | 8 | 7 | 7 | a 3, b 2, c 2 | 7 |

use std::fmt::Write;

use gang_kube::Objects;

use crate::error::CliError;

/// The nodes of the demo cluster: (name, rack).
pub const NODES: [(&str, &str); 6] = [
    ("a1", "a"),
    ("a2", "a"),
    ("b1", "b"),
    ("b2", "b"),
    ("c1", "c"),
    ("c2", "c"),
];

/// GPUs used per node in snapshot 1 (rack a has 4 free).
pub const FIRST: [u32; 6] = [6, 6, 7, 8, 6, 8];
/// GPUs used per node in snapshot 2 (7 free, no rack with 4).
pub const SECOND: [u32; 6] = [6, 7, 6, 8, 7, 7];

/// The guide's PodGroup and the four member pods its controller creates.
pub const WORKLOAD: &str = r#"# keep-workers-close: four workers within one rack domain.
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: training-workers
  namespace: ml-team
spec:
  schedulingPolicy:
    gang:
      minCount: 4
  schedulingConstraints:
    topology:
      - key: topology.example.com/rack
"#;

fn member_pod(i: usize) -> String {
    format!(
        r#"---
apiVersion: v1
kind: Pod
metadata:
  name: training-workers-{i}
  namespace: ml-team
spec:
  schedulingGroup:
    podGroupName: training-workers
  containers:
    - name: trainer
      image: registry.example/trainer:1
      resources:
        limits:
          nvidia.com/gpu: 1
        requests:
          cpu: 500m
          memory: 8Gi
"#
    )
}

/// The cluster of one snapshot as `kubectl get nodes,pods -o yaml` would print it.
pub fn cluster_yaml(used: &[u32; 6]) -> String {
    let mut s = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for (name, rack) in NODES {
        let _ = write!(
            s,
            r#"- apiVersion: v1
  kind: Node
  metadata:
    name: {name}
    labels:
      kubernetes.io/hostname: {name}
      topology.example.com/block: b1
      topology.example.com/rack: {rack}
      nvidia.com/gpu.product: H200
  status:
    allocatable: {{cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "110"}}
    conditions: [{{type: Ready, status: "True"}}]
"#
        );
    }
    for ((name, _), gpus) in NODES.iter().zip(used) {
        let _ = write!(
            s,
            r#"- apiVersion: v1
  kind: Pod
  metadata: {{name: other-{name}, namespace: other-team}}
  spec:
    nodeName: {name}
    containers:
      - name: job
        resources: {{requests: {{nvidia.com/gpu: "{gpus}", cpu: "8", memory: 64Gi}}}}
  status: {{phase: Running}}
"#
        );
    }
    s
}

/// The workload as text: the PodGroup and its four pods.
pub fn workload_yaml() -> String {
    let mut s = WORKLOAD.to_owned();
    for i in 0..4 {
        s.push_str(&member_pod(i));
    }
    s
}

/// The objects of snapshot `n` (1 or 2) and the workload, read as files would be.
///
/// # Errors
/// Never for the built-in text (tested); a [`CliError`] if it were malformed.
pub fn objects(n: u8) -> Result<Objects, CliError> {
    let used = if n == 1 { &FIRST } else { &SECOND };
    let mut o = Objects::parse(&format!("demo/snapshot-{n}.yaml"), &cluster_yaml(used))?;
    o.add("demo/training-workers.yaml", &workload_yaml())?;
    Ok(o)
}
