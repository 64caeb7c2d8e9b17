//! `node.k8s.io/v1`: RuntimeClass (cluster-scoped): `overhead.podFixed`, which the
//! RuntimeClass admission controller copies into `spec.overhead` of pods naming it.

use serde::Deserialize;

use crate::model::de::{nullable, strict_map, ResourceList};
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RuntimeClass {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub overhead: Overhead,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Overhead {
    #[serde(deserialize_with = "strict_map")]
    pub pod_fixed: ResourceList,
}
