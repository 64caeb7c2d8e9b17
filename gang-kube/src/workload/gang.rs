//! From roles to a gang-core [`Gang`]: a group minimum spread over the roles, the gang
//! itself, and the gang the objects alone define.

use gang_core::request::Requirement;
use gang_core::{Gang, Role, Toleration};

use crate::workload::types::{Level, LevelRequest, MemberRole, Warning, WorkloadGang};

/// Spreads a group minimum over roles: the shortfall is taken from the largest role
/// first (workers; a launcher or master of one stays whole), then the next.
pub(super) fn spread_minimum(
    roles: &mut [MemberRole],
    minimum: u32,
    field: &str,
    warnings: &mut Vec<Warning>,
) {
    let total: u32 = roles.iter().map(|r| r.members).sum();
    if minimum >= total {
        return;
    }
    let mut deficit = total - minimum;
    let mut order: Vec<usize> = (0..roles.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(roles[i].members), std::cmp::Reverse(i)));
    for i in order {
        if deficit == 0 {
            break;
        }
        let take = deficit.min(roles[i].members);
        roles[i].min_count = Some(roles[i].members - take);
        deficit -= take;
    }
    if roles.len() > 1 {
        let spread: Vec<String> = roles
            .iter()
            .map(|r| format!("{} ≥ {}", r.name, r.min_count.unwrap_or(r.members)))
            .collect();
        warnings.push(Warning {
            field: field.to_owned(),
            message: format!(
                "group minimum {minimum} of {total} spread over roles as {} (gang-core keeps a minimum per role; the scheduler accepts any {minimum} members)",
                spread.join(", ")
            ),
        });
    }
}

/// A group minimum of 0 (`minMember: 0`, `minAvailable: 0`) is no gang: the scheduler
/// lets each pod start on its own. gang answers whether all of them fit together, and
/// says so.
pub(super) fn no_gang(field: &str, members: u32) -> Warning {
    Warning {
        field: field.to_owned(),
        message: format!(
            "0: no gang (the scheduler starts the pods one by one, none waits for the others); read here as all {members} members together"
        ),
    }
}

/// The gang for `roles` and `topology`, with levels resolved by `resolve`.
pub(crate) fn build_gang(
    name: &str,
    roles: &[MemberRole],
    required: Option<&str>,
    preferred: Option<&str>,
    slices: &[(String, u32)],
    extra_tolerations: &[Toleration],
) -> Gang {
    let mut gang = Gang::new(name);
    for r in roles {
        let mut role = Role::new(r.name.clone(), r.members);
        if let Some(m) = r.min_count {
            role = role.min_count(m);
        }
        for (k, v) in &r.requests {
            role = role.request(k.clone(), *v);
        }
        for (k, v) in &r.node_selector {
            role = role.selector(k.clone(), v.clone());
        }
        for q in &r.requirements {
            role = role.requirement(match q.operator.as_str() {
                "In" => Requirement::is_in(q.key.clone(), q.values.iter().cloned()),
                "NotIn" => Requirement::not_in(q.key.clone(), q.values.iter().cloned()),
                "Exists" => Requirement::exists(q.key.clone()),
                _ => Requirement::does_not_exist(q.key.clone()),
            });
        }
        for t in r.tolerations.iter().chain(extra_tolerations) {
            role = role.toleration(t.clone());
        }
        if !r.constrained {
            role = role.unconstrained();
        }
        gang = gang.role(role);
    }
    if let Some(l) = required {
        gang = gang.required(l);
    }
    if let Some(l) = preferred {
        gang = gang.preferred(l);
    }
    for (l, size) in slices {
        gang = gang.slice(l.clone(), *size);
    }
    gang
}

fn key_of(l: &Option<LevelRequest>) -> Result<Option<&str>, ()> {
    match l {
        None => Ok(None),
        Some(LevelRequest {
            level: Level::Key(k),
            ..
        }) => Ok(Some(k)),
        Some(_) => Err(()),
    }
}

pub(super) fn standalone_gang(w: &WorkloadGang) -> Option<Gang> {
    if w.members == 0 || w.minimum > w.members || w.roles.is_empty() {
        return None;
    }
    let required = key_of(&w.topology.required).ok()?;
    let preferred = key_of(&w.topology.preferred).ok()?;
    let mut slices = Vec::new();
    for s in &w.topology.slices {
        match &s.level {
            Level::Key(k) => slices.push((k.clone(), s.size)),
            Level::Tier(_) => return None,
        }
    }
    Some(build_gang(
        &w.object.name,
        &w.roles,
        required,
        preferred,
        &slices,
        &[],
    ))
}
