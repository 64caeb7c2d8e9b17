//! The benchmarks' synthetic clusters: HGX-style and NVL72-style, fragmented by random
//! use. The generator lives in `gang_sim::generate` (the simulator builds its clusters with
//! it); this module re-exports it and adds the two baseline views the benchmarks
//! compare against, through [`Baselines`]: [`Baselines::reference`] for the
//! [reference placer](crate::reference) and [`Baselines::columns`] for the
//! [floor kernel](crate::floor).

pub use gang_sim::generate::{
    Flavor, Rng, Size, Spec, SynthCluster as Cluster, SynthNode, BLOCK, CPU, DEGRADED_TAINT, GPU,
    MAINTENANCE_TAINT, MEMORY, PRODUCT, RACK, RESOURCES, ZONE,
};

use gang_core::TaintEffect;

use crate::floor::Columns;
use crate::reference::{RefCluster, RefNode};

/// The baselines' views of a generated cluster.
pub trait Baselines {
    /// The same cluster as plain records for the reference placer.
    fn reference(&self) -> RefCluster;
    /// Free-capacity columns (and eligibility for a role with no selector and no
    /// tolerations) for the floor kernel.
    fn columns(&self) -> Columns;
}

impl Baselines for Cluster {
    fn reference(&self) -> RefCluster {
        RefCluster::new(
            Self::LEVELS.iter().map(|s| (*s).to_owned()).collect(),
            self.nodes
                .iter()
                .map(|n| RefNode {
                    name: n.name.clone(),
                    labels: n
                        .labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), v.clone()))
                        .collect(),
                    free: RESOURCES
                        .iter()
                        .enumerate()
                        .map(|(i, r)| ((*r).to_owned(), n.free(i)))
                        .collect(),
                    taints: n.taints.clone(),
                    schedulable: n.schedulable,
                })
                .collect(),
        )
    }

    fn columns(&self) -> Columns {
        Columns::new(
            RESOURCES
                .iter()
                .enumerate()
                .map(|(i, _)| self.nodes.iter().map(|n| n.free(i)).collect())
                .collect(),
            self.nodes
                .iter()
                .map(|n| {
                    n.schedulable
                        && !n
                            .taints
                            .iter()
                            .any(|t| t.effect != TaintEffect::PreferNoSchedule)
                })
                .collect::<Vec<bool>>(),
        )
    }
}
