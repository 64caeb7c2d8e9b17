//! `ray.io/v1`: RayCluster and RayJob (ray-project/kuberay `ray-operator/apis/ray/v1`
//! `raycluster_types.go`, `rayjob_types.go`): a head pod and worker groups of
//! `replicas` × `numOfHosts` pods; a RayJob carries its cluster in `rayClusterSpec`.

use serde::Deserialize;

use crate::model::core_v1::PodTemplate;
use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RayClusterObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: RayClusterSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RayClusterSpec {
    #[serde(deserialize_with = "nullable")]
    pub head_group_spec: HeadGroupSpec,
    #[serde(deserialize_with = "nullable")]
    pub worker_group_specs: Vec<WorkerGroupSpec>,
    pub enable_in_tree_autoscaling: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct HeadGroupSpec {
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct WorkerGroupSpec {
    #[serde(deserialize_with = "nullable")]
    pub group_name: String,
    pub replicas: Option<i64>,
    pub min_replicas: Option<i64>,
    pub num_of_hosts: Option<i64>,
    pub suspend: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RayJobObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: RayJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RayJobSpec {
    /// Absent when the job runs on an existing cluster (`clusterSelector`).
    pub ray_cluster_spec: Option<RayClusterSpec>,
    #[serde(deserialize_with = "nullable")]
    pub submission_mode: String,
    pub submitter_pod_template: Option<PodTemplate>,
}
