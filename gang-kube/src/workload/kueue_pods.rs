//! Kueue's plain pod groups (KEP-976, kubernetes-sigs/kueue `site/content/en/docs/tasks/run/plain_pods.md`):
//! pods labelled `kueue.x-k8s.io/pod-group-name` with the annotation
//! `kueue.x-k8s.io/pod-group-total-count`, one Workload per group and namespace, a
//! PodSet per distinct pod shape, the PodSet topology annotations on the pods.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::model::core_v1::Pod;
use crate::model::kueue::WORKLOAD_PRIORITY_CLASS_LABEL;
use crate::origin::{ObjectRef, Origin};
use crate::workload::checks::finish;
use crate::workload::fields::bad;
use crate::workload::kueue::{combine_kueue, kueue_req};
use crate::workload::pod_group::roles_from_pods;
use crate::workload::types::{Check, CheckStatus, Framework, Warning, WorkloadGang};

/// Pod label naming a Kueue plain pod group.
pub const POD_GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
/// Pod annotation: how many pods the group has.
pub const POD_GROUP_TOTAL_COUNT: &str = "kueue.x-k8s.io/pod-group-total-count";

type Member<'a> = (&'a Pod, &'a Origin);

/// Every Kueue plain pod group among `pods`, by namespace and name.
pub(super) fn kueue_pod_groups(pods: &[Member<'_>]) -> Result<Vec<WorkloadGang>, Error> {
    let mut groups: BTreeMap<(&str, &str), Vec<Member<'_>>> = BTreeMap::new();
    for &(p, o) in pods {
        if let Some(g) = p.metadata.labels.get(POD_GROUP_NAME) {
            groups
                .entry((p.metadata.namespace.as_str(), g.as_str()))
                .or_default()
                .push((p, o));
        }
    }
    groups
        .into_iter()
        .map(|((ns, name), members)| group(ns, name, &members))
        .collect()
}

fn group(namespace: &str, name: &str, members: &[Member<'_>]) -> Result<WorkloadGang, Error> {
    let field = format!("metadata.annotations.{POD_GROUP_TOTAL_COUNT}");
    let mut total: Option<u32> = None;
    for (p, o) in members {
        let Some(v) = p.metadata.annotations.get(POD_GROUP_TOTAL_COUNT) else {
            return Err(bad(
                o,
                &field,
                "",
                "required on every pod of a Kueue pod group (how many pods the group has)",
            ));
        };
        let n: u32 = v
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| bad(o, &field, v, "must be a whole number of pods, 1 or more"))?;
        match total {
            Some(t) if t != n => {
                return Err(bad(
                    o,
                    &field,
                    v,
                    &format!("differs from the {t} other pods of group {name} give"),
                ))
            }
            _ => total = Some(n),
        }
    }
    let total = total.unwrap_or(0);
    let mut warnings = Vec::new();
    let mut roles = roles_from_pods(members, &mut warnings)?;
    // The PodSet topology annotations, read from the first pod of each role.
    let mut reqs = Vec::new();
    for r in &roles {
        let first = members
            .iter()
            .find(|(_, o)| r.pods.first().is_some_and(|p| p.name == o.name));
        reqs.push(match first {
            Some((p, o)) => kueue_req(&p.metadata, o, "metadata")?,
            None => Default::default(),
        });
    }
    let topology = combine_kueue(&mut roles, &reqs, false)?;
    // The group's WorkloadPriorityClass: the label on its pods (the first that carries
    // one; pods that disagree are a warning, as Kueue builds one Workload for them).
    let label = |p: &Pod| {
        p.metadata
            .labels
            .get(WORKLOAD_PRIORITY_CLASS_LABEL)
            .cloned()
    };
    let workload_priority_class = members.iter().find_map(|(p, _)| label(p));
    if let Some(first) = &workload_priority_class {
        if let Some((_, o)) = members
            .iter()
            .find(|(p, _)| label(p).is_some_and(|l| &l != first))
        {
            warnings.push(Warning {
                field: format!("metadata.labels.{WORKLOAD_PRIORITY_CLASS_LABEL}"),
                message: format!(
                    "{} names another WorkloadPriorityClass than {first}: {first} is used",
                    o.object
                ),
            });
        }
    }
    let found = members.len() as u32;
    let mut checks = vec![Check::new(
        "group_object",
        CheckStatus::Ok,
        format!("Kueue pod group {name}: {found} pod(s) labelled {POD_GROUP_NAME}={name}"),
    )];
    checks.push(if found == total {
        Check::new("members_found", CheckStatus::Ok, format!("all {total} pods of the group are in the input"))
    } else if found < total {
        Check::new(
            "members_found",
            CheckStatus::Error,
            format!("{found} of the {total} pods ({POD_GROUP_TOTAL_COUNT}) are in the input: Kueue admits the group only when all exist; the {found} found are placed"),
        )
    } else {
        Check::new(
            "members_found",
            CheckStatus::Error,
            format!("{found} pods carry the group's label but {POD_GROUP_TOTAL_COUNT} is {total}"),
        )
    });
    let (_, first_origin) = members[0];
    let object = ObjectRef {
        kind: "PodGroup".into(),
        api_version: "kueue.x-k8s.io".into(),
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        name: name.to_owned(),
        source: first_origin.source.to_string(),
        position: format!(
            "pods labelled {POD_GROUP_NAME}, first {}",
            first_origin.object
        ),
    };
    let w = WorkloadGang {
        object,
        framework: Framework::KueuePodGroup,
        found: true,
        roles,
        members: found,
        minimum: found,
        minimum_field: "members".into(),
        topology,
        kueue: true,
        workload_priority_class,
        group_priority: None,
        member_pods: members.iter().map(|(_, o)| o.to_ref()).collect(),
        warnings,
        checks,
        gang: None,
    };
    Ok(finish(w, "members"))
}
