//! `scheduling.k8s.io`: Kubernetes' own PodGroup (gang scheduling, KEP-4671): the
//! gang policy's `minCount`, the topology keys of its scheduling constraints, and its
//! priority (`priorityClassName`, `priority`, `preemptionPolicy`: workload-aware
//! preemption, KEP-5710); and
//! `PriorityClass` (`scheduling.k8s.io/v1`): a priority value by name.

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
    /// `spec.schedulingPolicy.gang.minCount`.
    #[serde(deserialize_with = "nullable")]
    pub scheduling_policy: SchedulingPolicy,
    /// `spec.schedulingConstraints.topology[].key`.
    #[serde(deserialize_with = "nullable")]
    pub scheduling_constraints: SchedulingConstraints,
    /// `spec.priorityClassName`: the group's priority, by class.
    #[serde(deserialize_with = "nullable")]
    pub priority_class_name: String,
    /// `spec.priority` (admission sets it from the class).
    pub priority: Option<i64>,
    /// `spec.preemptionPolicy`: `PreemptLowerPriority` (default) or `Never`.
    #[serde(deserialize_with = "nullable")]
    pub preemption_policy: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SchedulingPolicy {
    pub gang: Option<GangPolicy>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct GangPolicy {
    pub min_count: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SchedulingConstraints {
    #[serde(deserialize_with = "nullable")]
    pub topology: Vec<TopologyKey>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologyKey {
    #[serde(deserialize_with = "nullable")]
    pub key: String,
}

/// `scheduling.k8s.io/v1` `PriorityClass`: its fields are top-level, beside `metadata`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PriorityClass {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    /// `value`: the priority (required by the API).
    pub value: Option<i64>,
    /// `globalDefault`: the priority of pods that name no class.
    #[serde(deserialize_with = "nullable")]
    pub global_default: bool,
    /// `preemptionPolicy`: `PreemptLowerPriority` (default) or `Never`.
    #[serde(deserialize_with = "nullable")]
    pub preemption_policy: String,
}
