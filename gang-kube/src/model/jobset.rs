//! `jobset.x-k8s.io`: JobSet, its replicated jobs.

use serde::Deserialize;

use crate::model::batch_v1::JobTemplate;
use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobSetObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSetSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct JobSetSpec {
    #[serde(deserialize_with = "nullable")]
    pub replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReplicatedJob {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: JobTemplate,
}
