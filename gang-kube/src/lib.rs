//! Kubernetes objects to gang: an [`Inventory`](gang_core::Inventory) and
//! [`Gang`](gang_core::Gang)s, offline.

#![deny(missing_docs)]

mod cluster;
mod convert;
mod error;
mod model;
mod objects;
mod place;
mod requests;
mod topology;
mod workload;

pub use cluster::{
    Cluster, ClusterOptions, ClusterReport, ExcludedNode, LevelCoverage, NodeExclusion, NodeUsage,
    PodCounts,
};
pub use error::{Error, ErrorKind};
pub use objects::{ObjectRef, Objects};
pub use place::RoleExclusions;
pub use requests::Resources;
pub use topology::{FlavorInfo, TopologyChoice, TopologySource, CLIQUE_LABEL};
pub use workload::{
    kai, kueue, workloads, Check, CheckStatus, Framework, LabelRequirement, Level, LevelRequest,
    MemberRole, SliceRequest, TopologyRequest, Warning, WorkloadGang, COSCHEDULING_LABEL,
    VOLCANO_GROUP_ANNOTATION,
};
