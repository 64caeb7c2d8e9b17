//! `workload.codeflare.dev/v1beta2`: AppWrapper (project-codeflare/appwrapper
//! `api/v1beta2/appwrapper_types.go`): components, each an embedded object (`template`)
//! and the pod sets Kueue reads from it (`podSets[]`: `replicas`, `path` to a pod
//! template inside the component, `template.spec.template` for a Job).

use serde::Deserialize;

use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AppWrapperObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: AppWrapperSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AppWrapperSpec {
    #[serde(deserialize_with = "nullable")]
    pub components: Vec<Component>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Component {
    /// The wrapped object, kept whole: pod templates are found in it by path.
    #[serde(deserialize_with = "nullable")]
    pub template: serde_json::Value,
    #[serde(deserialize_with = "nullable")]
    pub pod_sets: Vec<AwPodSet>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AwPodSet {
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub path: String,
}
