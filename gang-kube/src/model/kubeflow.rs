//! `kubeflow.org` (training-operator v1): PyTorchJob, MPIJob, TFJob, JAXJob, XGBoostJob
//! and PaddleJob (one spec struct: they differ only in the name of their replica specs,
//! chosen by kind when read; field names from training-operator's `pkg/apis/kubeflow.org/v1`
//! `*_types.go`).

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::core_v1::PodTemplate;
use crate::model::de::{nullable, strict_map, ResourceList};
use crate::model::meta_v1::Meta;

/// Which Kubeflow job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KubeflowKind {
    PyTorch,
    Mpi,
    Tf,
    Jax,
    XgBoost,
    Paddle,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct KubeflowObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: KubeflowSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KubeflowSpec {
    #[serde(deserialize_with = "strict_map")]
    pub pytorch_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(deserialize_with = "strict_map")]
    pub mpi_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(rename = "tfReplicaSpecs", deserialize_with = "strict_map")]
    pub tf_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(rename = "jaxReplicaSpecs", deserialize_with = "strict_map")]
    pub jax_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(rename = "xgbReplicaSpecs", deserialize_with = "strict_map")]
    pub xgb_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(rename = "paddleReplicaSpecs", deserialize_with = "strict_map")]
    pub paddle_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(deserialize_with = "nullable")]
    pub run_policy: RunPolicy,
    pub elastic_policy: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReplicaSpec {
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RunPolicy {
    pub scheduling_policy: Option<KubeflowSchedulingPolicy>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KubeflowSchedulingPolicy {
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "strict_map")]
    pub min_resources: ResourceList,
}
