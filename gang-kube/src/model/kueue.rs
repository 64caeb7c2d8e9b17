//! `kueue.x-k8s.io`: the Topology (levels of node labels) and the ResourceFlavor. KAI's
//! `kai.scheduler` Topology has the same shape and is read as this one.

use serde::Deserialize;

use crate::model::core_v1::KToleration;
use crate::model::de::{nullable, strict_map, StringMap};
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologyObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: TopologySpecK,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologySpecK {
    #[serde(deserialize_with = "nullable")]
    pub levels: Vec<TopologyLevel>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TopologyLevel {
    #[serde(deserialize_with = "nullable")]
    pub node_label: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FlavorObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: FlavorSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct FlavorSpec {
    #[serde(deserialize_with = "strict_map")]
    pub node_labels: StringMap,
    #[serde(deserialize_with = "nullable")]
    pub tolerations: Vec<KToleration>,
    #[serde(deserialize_with = "nullable")]
    pub topology_name: String,
}

/// The label of a workload object naming its Kueue `WorkloadPriorityClass`.
pub const WORKLOAD_PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";

/// Kueue's `WorkloadPriorityClass` (`kueue.x-k8s.io/v1beta1`, `v1beta2`), cluster-scoped:
/// like a `PriorityClass`, its `value` is top-level, beside `metadata` (`description`,
/// the other field, is not read). A workload object selects one with the label
/// `kueue.x-k8s.io/priority-class`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WorkloadPriorityClassObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    /// `value`: the workload's priority (required by the CRD, an int32).
    pub value: Option<i64>,
}
