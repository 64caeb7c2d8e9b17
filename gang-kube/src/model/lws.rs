//! `leaderworkerset.x-k8s.io/v1`: LeaderWorkerSet (kubernetes-sigs/lws `api/leaderworkerset/v1`
//! `leaderworkerset_types.go`): `replicas` groups of `leaderWorkerTemplate.size` pods, a
//! leader (its own `leaderTemplate`, else the worker template) and `size - 1` workers.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::core_v1::PodTemplate;
use crate::model::de::nullable;
use crate::model::meta_v1::Meta;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LwsObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: LwsSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LwsSpec {
    /// Groups (default 1).
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub leader_worker_template: LeaderWorkerTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LeaderWorkerTemplate {
    /// Pods per group, the leader included (default 1).
    pub size: Option<i64>,
    pub leader_template: Option<PodTemplate>,
    #[serde(deserialize_with = "nullable")]
    pub worker_template: PodTemplate,
    pub sub_group_policy: Option<IgnoredAny>,
}
