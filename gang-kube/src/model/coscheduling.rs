//! `scheduling.x-k8s.io` (and the older `scheduling.sigs.k8s.io`): the
//! scheduler-plugins coscheduling PodGroup: `minMember` and `minResources`.

use serde::Deserialize;

use crate::model::de::{nullable, strict_map, ResourceList};
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
    #[serde(deserialize_with = "strict_map")]
    pub min_resources: ResourceList,
}
