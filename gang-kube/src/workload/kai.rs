//! KAI scheduler's topology annotations (on the workload object).

// Below the public names: reading them from a workload.

use crate::error::Error;
use crate::model::meta_v1::Meta;
use crate::origin::Origin;
use crate::workload::fields::level_value;
use crate::workload::types::{LevelRequest, TopologyRequest};

/// The Topology object the constraint refers to.
pub const TOPOLOGY: &str = "kai.scheduler/topology";
/// Every pod inside one domain of this level.
pub const REQUIRED: &str = "kai.scheduler/topology-required-placement";
/// Preferably inside one domain of this level.
pub const PREFERRED: &str = "kai.scheduler/topology-preferred-placement";
/// The KAI queue label (on a workload or its pod template).
pub const QUEUE: &str = "kai.scheduler/queue";
/// The scheduler name KAI's pods give.
pub const SCHEDULER_NAME: &str = "kai-scheduler";
/// Pod annotation naming its KAI PodGroup.
pub const POD_GROUP_ANNOTATION: &str = "pod-group-name";

pub(super) fn kai_request(meta: &Meta, origin: &Origin) -> Result<Option<TopologyRequest>, Error> {
    let a = &meta.annotations;
    let f = |k: &str| format!("metadata.annotations.{k}");
    let required = match a.get(REQUIRED) {
        Some(v) => Some(LevelRequest {
            level: level_value(origin, &f(REQUIRED), v)?,
            field: f(REQUIRED),
        }),
        None => None,
    };
    let preferred = match a.get(PREFERRED) {
        Some(v) => Some(LevelRequest {
            level: level_value(origin, &f(PREFERRED), v)?,
            field: f(PREFERRED),
        }),
        None => None,
    };
    if required.is_none() && preferred.is_none() {
        return Ok(None);
    }
    Ok(Some(TopologyRequest {
        required,
        preferred,
        ..TopologyRequest::default()
    }))
}
