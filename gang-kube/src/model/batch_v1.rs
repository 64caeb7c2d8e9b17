//! `batch/v1`: Job (and the Job template a JobSet replicates).

use serde::Deserialize;

use crate::model::core_v1::PodTemplate;
use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobSpec {
    pub parallelism: Option<i64>,
    pub completions: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobTemplate {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSpec,
}
