//! Kubernetes objects to gang: an [`Inventory`](gang_core::Inventory) and
//! [`Gang`](gang_core::Gang)s, offline, from the JSON or YAML users already have
//! (`kubectl get nodes,pods -o json`, a Kueue Topology, a PodGroup, a PyTorchJob…).
//!
//! ```
//! use gang_core::Outcome;
//! use gang_kube::{workloads, CheckStatus, Cluster, ClusterOptions, Objects};
//!
//! // Two GKE A3 nodes in one subblock, one running a 6-GPU pod.
//! let nodes = r#"{"apiVersion": "v1", "kind": "List", "items": [
//!   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a3-1", "labels": {
//!      "cloud.google.com/gce-topology-block": "b1",
//!      "cloud.google.com/gce-topology-subblock": "s1",
//!      "cloud.google.com/gce-topology-host": "h1"}},
//!    "status": {"allocatable": {"cpu": "206", "nvidia.com/gpu": "8", "pods": "110"},
//!               "conditions": [{"type": "Ready", "status": "True"}]}},
//!   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a3-2", "labels": {
//!      "cloud.google.com/gce-topology-block": "b1",
//!      "cloud.google.com/gce-topology-subblock": "s1",
//!      "cloud.google.com/gce-topology-host": "h2"}},
//!    "status": {"allocatable": {"cpu": "206", "nvidia.com/gpu": "8", "pods": "110"},
//!               "conditions": [{"type": "Ready", "status": "True"}]}},
//!   {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "busy", "namespace": "ml"},
//!    "spec": {"nodeName": "a3-1", "containers": [
//!      {"name": "c", "resources": {"requests": {"nvidia.com/gpu": "6"}}}]},
//!    "status": {"phase": "Running"}}]}"#;
//! let mut objects = Objects::parse("snapshot.json", nodes)?;
//! // A Kueue-annotated Job: 4 pods of 2 GPUs each, in one subblock.
//! objects.add("job.yaml", r#"
//! apiVersion: batch/v1
//! kind: Job
//! metadata: {name: train, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
//! spec:
//!   parallelism: 4
//!   template:
//!     metadata:
//!       annotations:
//!         kueue.x-k8s.io/podset-required-topology: cloud.google.com/gce-topology-subblock
//!     spec:
//!       containers:
//!         - {name: c, resources: {limits: {nvidia.com/gpu: "2"}}}
//! "#)?;
//!
//! let cluster = Cluster::from_objects(&objects, &ClusterOptions::new())?;
//! assert_eq!(cluster.report().topology.name.as_deref(), Some("gke"));
//! let job = &workloads(&objects)?[0];
//! assert_eq!((job.members, job.minimum), (4, 4)); // members are pods, not GPUs
//! assert!(job.checks.iter().all(|c| c.status == CheckStatus::Ok));
//!
//! let inventory = cluster.inventory()?;
//! match inventory.place(&cluster.gang_for(job)?)? {
//!     // As few nodes as possible: a3-2 has all 8 GPUs free.
//!     Outcome::Placed(p) => assert_eq!(p.node_counts(), [("a3-2", 4)]),
//!     other => panic!("8 + 2 GPUs are free in subblock s1: {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Data flows one way: text → [`Objects`] → a [`Cluster`] (gang-core
//! [`NodeSpec`](gang_core::NodeSpec)s, the [`Topology`](gang_core::Topology) and a
//! [`ClusterReport`]) and [`WorkloadGang`]s ([`workloads`]) → [`Cluster::gang_for`] →
//! gang-core's placement. Invalid input is an [`Error`] naming the source, object,
//! field and value; what cannot be honoured exactly is a [`Warning`]; the guides'
//! debug checklist is [`Check`]s. The README (`gang-kube/README.md`) lists what is read
//! and the decisions taken.

#![deny(missing_docs)]

mod admission;
mod cluster;
mod convert;
mod error;
mod model;
mod objects;
mod origin;
mod place;
mod priority;
mod requests;
mod topology;
mod workload;

pub use cluster::{
    Cluster, ClusterOptions, ClusterReport, ExcludedNode, LevelCoverage, NodeExclusion, NodeUsage,
    PodCounts,
};
pub use error::{Error, ErrorKind};
pub use model::kueue::WORKLOAD_PRIORITY_CLASS_LABEL;
pub use objects::{Objects, WORKLOAD_KINDS};
pub use origin::ObjectRef;
pub use place::{PartOutcome, PartRequest, RoleExclusions};
pub use priority::{
    workload_priority, PriorityClassInfo, PrioritySource, WorkloadPriority,
    WorkloadPriorityClassInfo,
};
pub use requests::Resources;
pub use topology::{FlavorInfo, TopologyChoice, TopologySource, CLIQUE_LABEL};
pub use workload::pod_group::COSCHEDULING_LABEL;
pub use workload::types::{
    Check, CheckStatus, Framework, GroupPriority, LabelRequirement, Level, LevelRequest,
    MemberRole, SliceRequest, TopologyPart, TopologyRequest, Warning, WorkloadGang,
};
pub use workload::volcano::VOLCANO_GROUP_ANNOTATION;
pub use workload::{kai, kueue, workloads};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
