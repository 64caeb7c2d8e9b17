//! Kubernetes objects to gang: an [`Inventory`](gang_core::Inventory) and
//! [`Gang`](gang_core::Gang)s, offline.

#![deny(missing_docs)]

mod cluster;
mod convert;
mod error;
mod model;
mod objects;
mod requests;
mod topology;

pub use cluster::{
    Cluster, ClusterOptions, ClusterReport, ExcludedNode, LevelCoverage, NodeExclusion, NodeUsage,
    PodCounts,
};
pub use error::{Error, ErrorKind};
pub use objects::{ObjectRef, Objects};
pub use requests::Resources;
pub use topology::{FlavorInfo, TopologyChoice, TopologySource, CLIQUE_LABEL};
