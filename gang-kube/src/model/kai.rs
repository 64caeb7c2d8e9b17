//! `scheduling.run.ai`: the KAI scheduler's PodGroup: `minMember`, the topology
//! constraint and sub-groups. (KAI's `kai.scheduler` Topology is read as Kueue's,
//! [`kueue::TopologyObj`](crate::model::kueue::TopologyObj).)

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PodGroup {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: PodGroupSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PodGroupSpec {
    pub min_member: Option<i64>,
    /// `spec.priorityClassName`: the group's priority, by class.
    #[serde(deserialize_with = "nullable")]
    pub priority_class_name: String,
    pub topology_constraint: Option<TopologyConstraint>,
    #[serde(deserialize_with = "nullable")]
    pub sub_groups: Vec<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TopologyConstraint {
    #[serde(deserialize_with = "nullable")]
    pub topology: String,
    #[serde(deserialize_with = "nullable")]
    pub required_topology_level: String,
    #[serde(deserialize_with = "nullable")]
    pub preferred_topology_level: String,
}
