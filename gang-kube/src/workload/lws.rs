//! LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`): one group is the gang, as Kueue
//! admits it (one Workload per group, PodSets `leader` of 1 and `worker` of `size - 1`);
//! `replicas` groups are independent of each other.

use crate::error::Error;
use crate::model::lws::LwsObj;
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count, level_value};
use crate::workload::types::{Framework, LevelRequest, TopologyRequest, Warning};

/// LeaderWorkerSet annotation: each group alone in one domain of this label key (the
/// LWS controller gives the pods of a group affinity to its leader's domain, and the
/// groups anti-affinity to each other).
pub const EXCLUSIVE_TOPOLOGY: &str = "leaderworkerset.sigs.k8s.io/exclusive-topology";

pub(super) fn lws<'a>(o: &'a LwsObj, origin: &'a Origin) -> Result<Controlled<'a>, Error> {
    let t = &o.spec.leader_worker_template;
    let f = "spec.leaderWorkerTemplate";
    let size = count(origin, &format!("{f}.size"), t.size, 1)?;
    if size == 0 {
        return Err(bad(
            origin,
            format!("{f}.size"),
            "0",
            "a group has at least its leader (1 or more)",
        ));
    }
    let groups = count(origin, "spec.replicas", o.spec.replicas, 1)?;
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    let (leader_tpl, leader_field) = match &t.leader_template {
        Some(tpl) => (tpl, format!("{f}.leaderTemplate")),
        None => (&t.worker_template, format!("{f}.workerTemplate")),
    };
    let (r, q) = template_role(
        "leader",
        1,
        leader_tpl,
        origin,
        &leader_field,
        &mut warnings,
    )?;
    roles.push(r);
    reqs.push(q);
    if size > 1 {
        let (r, q) = template_role(
            "worker",
            size - 1,
            &t.worker_template,
            origin,
            &format!("{f}.workerTemplate"),
            &mut warnings,
        )?;
        roles.push(r);
        reqs.push(q);
    }
    if groups != 1 {
        warnings.push(Warning {
            field: "spec.replicas".into(),
            message: format!(
                "{groups} groups of {size} pods, each its own gang (Kueue admits one Workload per group): one group is read"
            ),
        });
    }
    if t.sub_group_policy.is_some() {
        warnings.push(Warning {
            field: format!("{f}.subGroupPolicy"),
            message: "sub-groups (their own topology inside a group) are not applied; the group as a whole is".into(),
        });
    }
    // The group in one domain of the key: the request when Kueue asks for none.
    let mut topology = None;
    if let Some(key) = o.metadata.annotations.get(EXCLUSIVE_TOPOLOGY) {
        let field = format!("metadata.annotations.{EXCLUSIVE_TOPOLOGY}");
        topology = Some(TopologyRequest {
            required: Some(LevelRequest {
                level: level_value(origin, &field, key)?,
                field: field.clone(),
            }),
            ..TopologyRequest::default()
        });
        if groups > 1 {
            warnings.push(Warning {
                field,
                message: format!(
                    "the group read is placed in one {key} domain; that each of the {groups} groups finds one of its own is not checked"
                ),
            });
        }
    }
    Ok(Controlled {
        topology,
        ..Controlled::new(
            origin,
            &o.metadata,
            Framework::LeaderWorkerSet,
            roles,
            reqs,
            warnings,
        )
    })
}
