//! Volcano: the `scheduling.volcano.sh` PodGroup and the `batch.volcano.sh` Job, which
//! share the network topology request.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::core_v1::PodTemplate;
use crate::model::de::{nullable, strict_map, ResourceList};
use crate::model::meta_v1::Meta;

/// `networkTopology`: `mode` hard or soft, up to a HyperNode tier.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NetworkTopology {
    #[serde(deserialize_with = "nullable")]
    pub mode: String,
    pub highest_tier_allowed: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub highest_tier_name: String,
}

// ---------------------------------------------------------------------------------------
// scheduling.volcano.sh PodGroup

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
    #[serde(deserialize_with = "strict_map")]
    pub min_task_member: BTreeMap<String, i64>,
    #[serde(deserialize_with = "strict_map")]
    pub min_resources: ResourceList,
    pub network_topology: Option<NetworkTopology>,
    #[serde(deserialize_with = "nullable")]
    pub sub_group_policy: Vec<IgnoredAny>,
}

// ---------------------------------------------------------------------------------------
// batch.volcano.sh Job

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VolcanoJobObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: VolcanoJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VolcanoJobSpec {
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub tasks: Vec<VolcanoTask>,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VolcanoTask {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    pub replicas: Option<i64>,
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
    pub partition_policy: Option<PartitionPolicy>,
}

/// A task's `partitionPolicy` (volcano-sh/apis `batch/v1alpha1` `PartitionPolicySpec`):
/// `totalPartitions` groups of `partitionSize` pods (their product the task's replicas),
/// each under its own `networkTopology`; `minPartitions` of them at least.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PartitionPolicy {
    pub total_partitions: Option<i64>,
    pub partition_size: Option<i64>,
    pub network_topology: Option<NetworkTopology>,
    pub min_partitions: Option<i64>,
}
