//! PodGroups of every scheduler and their member pods: one role per distinct pod shape,
//! the group's minimum and topology request.

use std::collections::HashSet;

use crate::error::Error;
use crate::model::core_v1::Pod;
use crate::model::pod_group::{PodGroupKind, PodGroupObj};
use crate::origin::{ObjectRef, Origin};
use crate::workload::checks::finish;
use crate::workload::fields::{bad, count, level_value, role_from_spec};
use crate::workload::gang::{no_gang, spread_minimum};
use crate::workload::kai;
use crate::workload::types::{
    Check, CheckStatus, Framework, GroupPriority, LevelRequest, MemberRole, TopologyRequest,
    Warning, WorkloadGang,
};
use crate::workload::volcano::{volcano_request, VOLCANO_GROUP_ANNOTATION};

/// Pod label naming a scheduler-plugins (coscheduling) PodGroup.
pub const COSCHEDULING_LABEL: &str = "scheduling.x-k8s.io/pod-group";

pub(crate) fn pod_group_refs(p: &Pod) -> Vec<(PodGroupKind, &str)> {
    let mut out = Vec::new();
    if !p.spec.scheduling_group.pod_group_name.is_empty() {
        out.push((
            PodGroupKind::Native,
            p.spec.scheduling_group.pod_group_name.as_str(),
        ));
    }
    let m = &p.metadata;
    if let Some(v) = m
        .annotations
        .get(VOLCANO_GROUP_ANNOTATION)
        .or(m.annotations.get("volcano.sh/group-name"))
    {
        out.push((PodGroupKind::Volcano, v.as_str()));
    }
    if let Some(v) = m
        .labels
        .get(COSCHEDULING_LABEL)
        .or(m.labels.get("pod-group.scheduling.sigs.k8s.io"))
    {
        out.push((PodGroupKind::Coscheduling, v.as_str()));
    }
    if let Some(v) = m
        .annotations
        .get(kai::POD_GROUP_ANNOTATION)
        .or(m.labels.get(kai::POD_GROUP_ANNOTATION))
    {
        out.push((PodGroupKind::Kai, v.as_str()));
    }
    out
}

fn membership(kind: PodGroupKind) -> &'static str {
    match kind {
        PodGroupKind::Native => "spec.schedulingGroup.podGroupName",
        PodGroupKind::Volcano => "annotation scheduling.k8s.io/group-name",
        PodGroupKind::Coscheduling => "label scheduling.x-k8s.io/pod-group",
        PodGroupKind::Kai => "annotation pod-group-name",
    }
}

fn framework_of(kind: PodGroupKind) -> Framework {
    match kind {
        PodGroupKind::Native => Framework::NativePodGroup,
        PodGroupKind::Volcano => Framework::VolcanoPodGroup,
        PodGroupKind::Coscheduling => Framework::CoschedulingPodGroup,
        PodGroupKind::Kai => Framework::KaiPodGroup,
    }
}

/// A name the pods of a role share: a role label, or their common name prefix.
fn role_name(pods: &[(&Pod, &Origin)]) -> String {
    const HINTS: [&str; 5] = [
        "training.kubeflow.org/replica-type",
        "jobset.sigs.k8s.io/replicatedjob-name",
        "volcano.sh/task-spec",
        "app.kubernetes.io/component",
        "role",
    ];
    for h in HINTS {
        let values: HashSet<Option<&String>> = pods
            .iter()
            .map(|(p, _)| p.metadata.labels.get(h).or(p.metadata.annotations.get(h)))
            .collect();
        if values.len() == 1 {
            if let Some(Some(v)) = values.into_iter().next() {
                return v.to_lowercase();
            }
        }
    }
    let names: Vec<&str> = pods.iter().map(|(p, _)| p.metadata.name.as_str()).collect();
    let mut prefix = names.first().copied().unwrap_or_default().to_owned();
    for n in &names[1.min(names.len())..] {
        while !n.starts_with(prefix.as_str()) {
            prefix.pop();
        }
    }
    let trimmed = prefix.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
    if trimmed.is_empty() {
        "member".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Roles from member pods, one per distinct shape, in the order first seen.
pub(super) fn roles_from_pods(
    pods: &[(&Pod, &Origin)],
    warnings: &mut Vec<Warning>,
) -> Result<Vec<MemberRole>, Error> {
    let mut groups: Vec<(MemberRole, Vec<(&Pod, &Origin)>)> = Vec::new();
    for &(p, o) in pods {
        let mut w = Vec::new();
        let r = role_from_spec("", 1, &p.spec, o, "spec", &mut w)?;
        for x in w {
            warnings.push(Warning {
                field: format!("{}: {}", o.object, x.field),
                message: x.message,
            });
        }
        match groups.iter_mut().find(|(g, _)| {
            g.requests == r.requests
                && g.node_selector == r.node_selector
                && g.requirements == r.requirements
                && g.tolerations == r.tolerations
        }) {
            Some((g, members)) => {
                g.members += 1;
                g.priority = g.priority.max(r.priority);
                members.push((p, o));
            }
            None => groups.push((r, vec![(p, o)])),
        }
    }
    let mut roles = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for (mut r, members) in groups {
        let mut name = role_name(&members);
        let mut n = 2;
        while used.contains(&name) {
            name = format!("{}-{n}", role_name(&members));
            n += 1;
        }
        used.insert(name.clone());
        r.name = name;
        r.from = "pods".into();
        r.pods = members.iter().map(|(_, o)| o.to_ref()).collect();
        roles.push(r);
    }
    Ok(roles)
}

/// The group's own priority fields (`spec.priority`, `spec.priorityClassName`,
/// `spec.preemptionPolicy`), when it sets any. A priority outside 32 bits and an unknown
/// preemption policy are errors naming the field, as the API server refuses them.
fn group_priority(pg: &PodGroupObj, origin: &Origin) -> Result<Option<GroupPriority>, Error> {
    let s = &pg.spec;
    let priority = match s.priority {
        None => None,
        Some(v) => Some(i32::try_from(v).map_err(|_| {
            bad(
                origin,
                "spec.priority",
                v.to_string(),
                "a priority is a 32-bit integer",
            )
        })?),
    };
    let never_preempts = match s.preemption_policy.as_deref() {
        None => None,
        Some("PreemptLowerPriority") => Some(false),
        Some("Never") => Some(true),
        Some(other) => {
            return Err(bad(
                origin,
                "spec.preemptionPolicy",
                other,
                "expected PreemptLowerPriority or Never",
            ))
        }
    };
    if priority.is_none() && s.priority_class_name.is_none() && never_preempts.is_none() {
        return Ok(None);
    }
    Ok(Some(GroupPriority {
        priority,
        priority_class_name: s.priority_class_name.clone(),
        never_preempts,
    }))
}

pub(super) fn pod_group(
    kind: PodGroupKind,
    pg: Option<&PodGroupObj>,
    object: ObjectRef,
    origin: Option<&Origin>,
    members: &[(&Pod, &Origin)],
) -> Result<WorkloadGang, Error> {
    let mut warnings = Vec::new();
    let mut checks = Vec::new();
    let mut roles = roles_from_pods(members, &mut warnings)?;
    let n: u32 = roles.iter().map(|r| r.members).sum();
    let label = object.to_string();
    match origin {
        Some(_) => checks.push(Check::new(
            "group_object",
            CheckStatus::Ok,
            format!("{label} found"),
        )),
        None => checks.push(Check::new(
            "group_object",
            CheckStatus::Error,
            format!(
                "{label} is not in the input, but {n} pod(s) name it ({}): create it, or check its name and namespace",
                membership(kind)
            ),
        )),
    }
    checks.push(if n == 0 {
        Check::new(
            "members_found",
            CheckStatus::Error,
            format!(
                "no member pods found: the workload controller must create pods in namespace {} with {} = {}",
                object.namespace.as_deref().unwrap_or("default"),
                membership(kind),
                object.name
            ),
        )
    } else {
        Check::new(
            "members_found",
            CheckStatus::Ok,
            format!("{n} member pod(s) found ({})", membership(kind)),
        )
    });
    let group_priority = match (pg, origin) {
        (Some(pg), Some(origin)) => group_priority(pg, origin)?,
        _ => None,
    };
    let mut topology = TopologyRequest::default();
    let mut minimum = n;
    let mut min_field = "members".to_owned();
    if let (Some(pg), Some(origin)) = (pg, origin) {
        let s = &pg.spec;
        match kind {
            PodGroupKind::Native => {
                min_field = kind.min_field().into();
                match s.min_member {
                    Some(0) => warnings.push(no_gang(&min_field, n)),
                    Some(m) => minimum = count(origin, &min_field, Some(m), 0)?,
                    None => warnings.push(Warning {
                        field: "spec.schedulingPolicy".into(),
                        message: "no gang policy (schedulingPolicy.gang.minCount): the pods are scheduled one by one; read here as all members".into(),
                    }),
                }
                for (i, key) in s.topology_keys.iter().enumerate() {
                    let field = format!("spec.schedulingConstraints.topology[{i}].key");
                    let req = LevelRequest {
                        level: level_value(origin, &field, key)?,
                        field,
                    };
                    if topology.required.is_none() {
                        topology.required = Some(req);
                    } else {
                        topology.also_required.push(req);
                    }
                }
            }
            PodGroupKind::Volcano | PodGroupKind::Coscheduling | PodGroupKind::Kai => {
                min_field = kind.min_field().into();
                match s.min_member {
                    Some(0) => warnings.push(no_gang(&min_field, n)),
                    Some(m) => minimum = count(origin, &min_field, Some(m), 0)?,
                    None => {}
                }
                if s.min_resources {
                    warnings.push(Warning {
                        field: "spec.minResources".into(),
                        message: "minResources (an aggregate the scheduler checks first) is not applied; each member's own shape is".into(),
                    });
                }
                if !s.min_task_member.is_empty() {
                    for (task, m) in &s.min_task_member {
                        let m = count(origin, &format!("spec.minTaskMember.{task}"), Some(*m), 0)?;
                        match roles.iter_mut().find(|r| r.name == task.to_lowercase()) {
                            Some(r) => {
                                r.min_count = Some(m.min(r.members));
                            }
                            None => warnings.push(Warning {
                                field: format!("spec.minTaskMember.{task}"),
                                message: format!("no role named {task} among the member pods (volcano.sh/task-spec); not applied"),
                            }),
                        }
                    }
                }
                if let Some(nt) = &s.network_topology {
                    topology = volcano_request(nt, origin, "spec.networkTopology", &mut warnings)?;
                }
                if let Some(tc) = &s.topology_constraint {
                    let f = "spec.topologyConstraint";
                    if !tc.required_topology_level.is_empty() {
                        topology.required = Some(LevelRequest {
                            level: level_value(
                                origin,
                                &format!("{f}.requiredTopologyLevel"),
                                &tc.required_topology_level,
                            )?,
                            field: format!("{f}.requiredTopologyLevel"),
                        });
                    }
                    if !tc.preferred_topology_level.is_empty() {
                        topology.preferred = Some(LevelRequest {
                            level: level_value(
                                origin,
                                &format!("{f}.preferredTopologyLevel"),
                                &tc.preferred_topology_level,
                            )?,
                            field: format!("{f}.preferredTopologyLevel"),
                        });
                    }
                }
                if let Some(field) = s.sub_groups {
                    warnings.push(Warning {
                        field: field.into(),
                        message: "sub-groups (their own minimums and topology) are not applied; the group as a whole is".into(),
                    });
                }
            }
        }
    }
    if minimum < n && roles.iter().all(|r| r.min_count.is_none()) {
        spread_minimum(&mut roles, minimum, &min_field, &mut warnings);
    }
    let member_pods = members.iter().map(|(_, o)| o.to_ref()).collect();
    let w = WorkloadGang {
        object,
        framework: framework_of(kind),
        found: origin.is_some(),
        roles,
        members: n,
        minimum,
        minimum_field: min_field.clone(),
        topology,
        kueue: false,
        workload_priority_class: None,
        group_priority,
        member_pods,
        warnings,
        checks,
        gang: None,
    };
    Ok(finish(w, &min_field))
}
