//! Workloads a controller turns into pods (Job, JobSet, Kubeflow and Volcano jobs): their
//! pod templates as roles, the topology request (Kueue, KAI, or the object's own), the
//! minimum, the pods and PodGroups found for them, the checklist.

use crate::error::{Error, ErrorKind};
use crate::model::core_v1::{Pod, PodTemplate};
use crate::model::meta_v1::Meta;
use crate::model::pod_group::{PodGroupKind, PodGroupObj};
use crate::origin::{ObjectRef, Origin};
use crate::workload::checks::finish;
use crate::workload::fields::{level_value, role_from_spec};
use crate::workload::gang::spread_minimum;
use crate::workload::kai::{self, kai_request};
use crate::workload::kueue::{self, combine_kueue, kueue_req, KueueReq};
use crate::workload::types::{
    Check, CheckStatus, Framework, LevelRequest, MemberRole, SliceRequest, TopologyRequest,
    Warning, WorkloadGang,
};

/// A PodGroup owned by a workload, with where it came from.
pub(super) type OwnedGroup<'a> = (PodGroupKind, &'a PodGroupObj, &'a Origin);

fn owned_pods<'a>(
    pods: &[(&'a Pod, &'a Origin)],
    kind: &str,
    namespace: &str,
    name: &str,
) -> Vec<ObjectRef> {
    pods.iter()
        .filter(|(p, _)| {
            p.metadata.namespace == namespace
                && (p
                    .metadata
                    .owner_references
                    .iter()
                    .any(|o| o.kind == kind && o.name == name)
                    || p.metadata.labels.get("training.kubeflow.org/job-name")
                        == Some(&name.to_owned())
                    || p.metadata.labels.get("jobset.sigs.k8s.io/jobset-name")
                        == Some(&name.to_owned())
                    || p.metadata.labels.get("volcano.sh/job-name") == Some(&name.to_owned()))
        })
        .map(|(_, o)| o.to_ref())
        .collect()
}

/// A workload read from its controller's object, before its pods and groups are found.
/// [`Controlled::new`] gives one without a minimum, topology or exclusive Jobs of its
/// own (the kinds that take them from Kueue annotations alone).
pub(super) struct Controlled<'a> {
    pub(super) origin: &'a Origin,
    pub(super) meta: &'a Meta,
    pub(super) framework: Framework,
    pub(super) roles: Vec<MemberRole>,
    pub(super) kueue_reqs: Vec<KueueReq>,
    pub(super) minimum: Option<(u32, String)>,
    pub(super) topology: Option<TopologyRequest>,
    pub(super) exclusive: Option<SliceRequest>,
    pub(super) warnings: Vec<Warning>,
}

impl<'a> Controlled<'a> {
    pub(super) fn new(
        origin: &'a Origin,
        meta: &'a Meta,
        framework: Framework,
        roles: Vec<MemberRole>,
        kueue_reqs: Vec<KueueReq>,
        warnings: Vec<Warning>,
    ) -> Self {
        Controlled {
            origin,
            meta,
            framework,
            roles,
            kueue_reqs,
            minimum: None,
            topology: None,
            exclusive: None,
            warnings,
        }
    }
}

pub(super) fn controlled(
    c: Controlled<'_>,
    pods: &[(&Pod, &Origin)],
    owned_groups: &[(PodGroupKind, &PodGroupObj, &Origin)],
) -> Result<WorkloadGang, Error> {
    let Controlled {
        origin,
        meta,
        framework,
        mut roles,
        kueue_reqs,
        minimum,
        topology,
        exclusive,
        mut warnings,
    } = c;
    if meta.generated {
        warnings.push(generated_name_warning(&meta.generate_name));
    }
    let members: u32 = roles.iter().map(|r| r.members).sum();
    let (min, min_field) = minimum.clone().unwrap_or((members, "members".into()));
    if min > members {
        return Err(Error::new(
            ErrorKind::InvalidMinimum,
            &origin.source,
            format!("more than the {members} members (pods) the workload defines"),
        )
        .at(origin)
        .with_field(min_field)
        .with_value(min.to_string()));
    }
    let is_kueue = meta.labels.contains_key(kueue::QUEUE_NAME) || kueue_reqs.iter().any(|r| r.any);
    let kai = kai_request(meta, origin)?;
    let topo = if kueue_reqs.iter().any(|r| r.any) {
        if kai.is_some() {
            warnings.push(Warning {
                field: format!("metadata.annotations.{}", kai::REQUIRED),
                message: "both Kueue and KAI topology annotations: the Kueue ones are used".into(),
            });
        }
        let webhook_groups = matches!(
            framework,
            Framework::JobSet
                | Framework::LeaderWorkerSet
                | Framework::MpiJob
                | Framework::RayCluster
                | Framework::RayJob
        );
        combine_kueue(&mut roles, &kueue_reqs, webhook_groups)?
    } else {
        kai.or(topology).unwrap_or_default()
    };
    let mut topo = topo;
    topo.exclusive = exclusive;
    // A native PodGroup the pods join (spec.schedulingGroup) constrains them when the
    // workload asks for nothing itself.
    let mut group_min = None;
    for (kind, pg, pg_origin) in owned_groups {
        if *kind != PodGroupKind::Native {
            continue;
        }
        if topo.required.is_none() && topo.preferred.is_none() {
            for (i, key) in pg.spec.topology_keys.iter().enumerate() {
                let field = format!(
                    "{}: spec.schedulingConstraints.topology[{i}].key",
                    pg_origin.object
                );
                let req = LevelRequest {
                    level: level_value(pg_origin, &field, key)?,
                    field,
                };
                if topo.required.is_none() {
                    topo.required = Some(req);
                } else {
                    topo.also_required.push(req);
                }
            }
        }
        if minimum.is_none() {
            if let Some(m) = pg.spec.min_member.and_then(|m| u32::try_from(m).ok()) {
                group_min = Some((
                    m,
                    format!("{}: spec.schedulingPolicy.gang.minCount", pg_origin.object),
                ));
            }
        }
    }
    let (min, min_field) = match group_min {
        Some((m, f)) if m <= members => (m, f),
        _ => (min, min_field),
    };
    let (min, min_field) = kueue_admits_whole(
        is_kueue,
        framework,
        (min, min_field),
        members,
        &mut warnings,
    );
    if min < members && roles.iter().all(|r| r.min_count.is_none()) {
        spread_minimum(&mut roles, min, &min_field, &mut warnings);
    }
    let object = origin.to_ref();
    let member_pods = owned_pods(pods, &origin.kind, &origin.namespace, &origin.name);
    let mut checks = vec![Check::new(
        "group_object",
        CheckStatus::Ok,
        format!("{} found", object),
    )];
    let found = member_pods.len();
    if found == 0 {
        checks.push(Check::new(
            "members_found",
            CheckStatus::Ok,
            "none of its pods are in the input (not created yet, or not given)",
        ));
    } else {
        let status = if found as u64 >= u64::from(members) {
            CheckStatus::Ok
        } else {
            CheckStatus::Warning
        };
        checks.push(Check::new(
            "members_found",
            status,
            format!("{found} of the {members} pods the controller creates are in the input"),
        ));
    }
    let has_integration = is_kueue
        || meta.annotations.contains_key(kai::REQUIRED)
        || meta.annotations.contains_key(kai::PREFERRED)
        || meta.labels.contains_key(kai::QUEUE)
        || !owned_groups.is_empty()
        || matches!(framework, Framework::VolcanoJob)
        || (matches!(
            framework,
            Framework::PyTorchJob
                | Framework::MpiJob
                | Framework::TfJob
                | Framework::JaxJob
                | Framework::XgBoostJob
                | Framework::PaddleJob
        ) && minimum.is_some());
    if !has_integration {
        checks.push(Check::new(
            "gang_scheduler",
            CheckStatus::Warning,
            format!(
                "no gang scheduling integration found (no {} label, Kueue or KAI topology annotation, or PodGroup): its pods may be scheduled one by one",
                kueue::QUEUE_NAME
            ),
        ));
    }
    for (kind, pg, pg_origin) in owned_groups {
        let field = kind.min_field();
        if let Some(m) = pg.spec.min_member {
            let status = if m == i64::from(min) {
                CheckStatus::Ok
            } else if m > i64::from(members) {
                CheckStatus::Error
            } else {
                CheckStatus::Warning
            };
            checks.push(Check::new(
                "group_object",
                status,
                format!(
                    "{} (created for it) has {field} {m}; the workload defines {members} members with minimum {min}",
                    pg_origin.object
                ),
            ));
        }
    }
    let w = WorkloadGang {
        object,
        framework,
        found: true,
        roles,
        members,
        minimum: min,
        minimum_field: min_field.clone(),
        topology: topo,
        kueue: is_kueue,
        workload_priority_class: meta
            .labels
            .get(crate::model::kueue::WORKLOAD_PRIORITY_CLASS_LABEL)
            .cloned(),
        group_priority: None,
        member_pods,
        warnings,
        checks,
        gang: None,
    };
    Ok(finish(w, &min_field))
}

/// Kueue admits a workload whole: its one partial admission is a Job's
/// `kueue.x-k8s.io/job-min-parallelism` (the minCount of its PodSet). Another
/// scheduler's group minimum (`minAvailable`, a PodGroup's `minCount`) counts only once
/// Kueue has admitted, and placed, every pod: the minimum is all members, with a
/// warning naming the field left aside. (A Volcano Job is not a workload Kueue admits.)
fn kueue_admits_whole(
    is_kueue: bool,
    framework: Framework,
    (min, field): (u32, String),
    members: u32,
    warnings: &mut Vec<Warning>,
) -> (u32, String) {
    if !is_kueue || min >= members || matches!(framework, Framework::Job | Framework::VolcanoJob) {
        return (min, field);
    }
    warnings.push(Warning {
        field: field.clone(),
        message: format!(
            "minimum {min} is not Kueue's: Kueue admits the whole workload, all {members} pods in their domains (its only partial admission is a Job's {}), so all {members} are placed; the {min} counts for the gang scheduler after admission",
            kueue::JOB_MIN_PARALLELISM
        ),
    });
    (members, "members".into())
}

/// The warning of a workload named from its `metadata.generateName`.
fn generated_name_warning(prefix: &str) -> Warning {
    Warning {
        field: "metadata.generateName".into(),
        message: format!(
            "no metadata.name: named {prefix:?} from metadata.generateName (the API server appends five random characters to it)"
        ),
    }
}

pub(super) fn template_role(
    name: &str,
    members: u32,
    tpl: &PodTemplate,
    origin: &Origin,
    field: &str,
    warnings: &mut Vec<Warning>,
) -> Result<(MemberRole, KueueReq), Error> {
    let role = role_from_spec(
        name,
        members,
        &tpl.spec,
        origin,
        &format!("{field}.spec"),
        warnings,
    )?;
    let req = kueue_req(&tpl.metadata, origin, &format!("{field}.metadata"))?;
    Ok((role, req))
}
