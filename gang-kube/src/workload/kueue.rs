//! Kueue's PodSet topology annotations (on pod templates).

// Below the public names: reading them from a pod template, and one topology request
// for the gang from the requests of its roles.

use crate::error::Error;
use crate::model::meta_v1::Meta;
use crate::origin::Origin;
use crate::workload::fields::{bad, level_value};
use crate::workload::types::{
    Level, LevelRequest, MemberRole, SliceRequest, TopologyPart, TopologyRequest, Warning,
};

/// Every pod of the PodSet in one domain of this level.
pub const REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
/// Try one domain of this level, then walk up.
pub const PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
/// `"true"`: no topology requirement (still counted by TAS).
pub const UNCONSTRAINED: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
/// Each slice of the PodSet in one domain of this level.
pub const SLICE_REQUIRED: &str = "kueue.x-k8s.io/podset-slice-required-topology";
/// Pods per slice (with [`SLICE_REQUIRED`]).
pub const SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
/// Multi-layer slices: `[{"topology": level, "size": n}, …]`, outermost first.
pub const SLICE_CONSTRAINTS: &str = "kueue.x-k8s.io/podset-slice-required-topology-constraints";
/// PodSets with the same group name share one flavor and topology domain.
pub const GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";
/// The LocalQueue (a label on the workload).
pub const QUEUE_NAME: &str = "kueue.x-k8s.io/queue-name";
/// Partial admission: the least parallelism a Job may run with.
pub const JOB_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";

// ---------------------------------------------------------------------------------------
// Reading

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct KueueReq {
    pub(super) required: Option<LevelRequest>,
    pub(super) preferred: Option<LevelRequest>,
    pub(super) unconstrained: bool,
    pub(super) slices: Vec<SliceRequest>,
    pub(super) group: Option<String>,
    pub(super) any: bool,
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

pub(super) fn kueue_req(meta: &Meta, origin: &Origin, prefix: &str) -> Result<KueueReq, Error> {
    let a = &meta.annotations;
    let f = |k: &str| format!("{prefix}.annotations.{k}");
    let mut r = KueueReq::default();
    if let Some(v) = a.get(REQUIRED) {
        r.required = Some(LevelRequest {
            level: level_value(origin, &f(REQUIRED), v)?,
            field: f(REQUIRED),
        });
    }
    if let Some(v) = a.get(PREFERRED) {
        r.preferred = Some(LevelRequest {
            level: level_value(origin, &f(PREFERRED), v)?,
            field: f(PREFERRED),
        });
    }
    if let Some(v) = a.get(UNCONSTRAINED) {
        r.unconstrained = parse_bool(v)
            .ok_or_else(|| bad(origin, f(UNCONSTRAINED), v, "must be true or false"))?;
    }
    let exclusive = [
        r.required.is_some(),
        r.preferred.is_some(),
        a.contains_key(UNCONSTRAINED),
    ];
    if exclusive.iter().filter(|x| **x).count() > 1 {
        let v = a
            .get(PREFERRED)
            .or(a.get(UNCONSTRAINED))
            .cloned()
            .unwrap_or_default();
        let field = if a.contains_key(PREFERRED) && r.required.is_some() {
            f(PREFERRED)
        } else {
            f(UNCONSTRAINED)
        };
        return Err(bad(
            origin,
            field,
            v,
            "the required, preferred and unconstrained topology annotations are mutually exclusive",
        ));
    }
    match (a.get(SLICE_REQUIRED), a.get(SLICE_SIZE)) {
        (Some(level), Some(size)) => {
            let n: u32 = size.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                bad(
                    origin,
                    f(SLICE_SIZE),
                    size,
                    "must be a whole number of pods, 1 or more",
                )
            })?;
            r.slices.push(SliceRequest {
                level: level_value(origin, &f(SLICE_REQUIRED), level)?,
                size: n,
                field: f(SLICE_REQUIRED),
            });
        }
        (Some(level), None) => {
            return Err(bad(
                origin,
                f(SLICE_SIZE),
                "",
                &format!("required with {} ({level})", SLICE_REQUIRED),
            ))
        }
        (None, Some(size)) => {
            return Err(bad(
                origin,
                f(SLICE_SIZE),
                size,
                &format!("cannot be set without {}", SLICE_REQUIRED),
            ))
        }
        (None, None) => {}
    }
    if let Some(text) = a.get(SLICE_CONSTRAINTS) {
        let field = f(SLICE_CONSTRAINTS);
        if !r.slices.is_empty() {
            return Err(bad(
                origin,
                field,
                text,
                "mutually exclusive with podset-slice-required-topology and podset-slice-size",
            ));
        }
        #[derive(serde::Deserialize)]
        struct C {
            topology: String,
            size: serde_json::Value,
        }
        let layers: Vec<C> = serde_json::from_str(text).map_err(|e| {
            bad(
                origin,
                &field,
                text,
                &format!("not a JSON list of {{\"topology\", \"size\"}}: {e}"),
            )
        })?;
        for (i, c) in layers.iter().enumerate() {
            let size = match &c.size {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s) => s.parse().ok(),
                _ => None,
            }
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                bad(
                    origin,
                    format!("{field}[{i}].size"),
                    c.size.to_string(),
                    "must be a whole number of pods, 1 or more",
                )
            })?;
            r.slices.push(SliceRequest {
                level: level_value(origin, &format!("{field}[{i}].topology"), &c.topology)?,
                size,
                field: format!("{field}[{i}]"),
            });
        }
    }
    r.group = a.get(GROUP_NAME).cloned();
    r.any = r.required.is_some()
        || r.preferred.is_some()
        || a.contains_key(UNCONSTRAINED)
        || !r.slices.is_empty();
    Ok(r)
}

/// The gang's topology request from per-role Kueue requests, as Kueue reads them: the
/// PodSets sharing a `podset-group-name` are one part, every other PodSet its own; each
/// part asks for its own domain. With one part asking, that is the gang's request (its
/// roles constrained, the rest not); with several, the largest part's request is the
/// gang's and every part is listed in `parts`, for [`Cluster::place`](crate::Cluster::place)
/// to place one after another.
pub(super) fn combine_kueue(
    roles: &mut [MemberRole],
    reqs: &[KueueReq],
    warnings: &mut Vec<Warning>,
) -> TopologyRequest {
    let asks = |r: &KueueReq| r.required.is_some() || r.preferred.is_some() || !r.slices.is_empty();
    // Parts in PodSet order: a group joins the part of its first PodSet.
    let mut parts: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for (i, r) in reqs.iter().enumerate().take(roles.len()) {
        let joined = r
            .group
            .as_ref()
            .and_then(|g| parts.iter_mut().find(|(pg, _)| pg.as_ref() == Some(g)));
        match joined {
            Some((_, members)) => members.push(i),
            None => parts.push((r.group.clone(), vec![i])),
        }
    }
    // A part's request is its first asking PodSet's (Kueue wants a group to agree).
    let lead = |p: &[usize]| p.iter().copied().find(|&i| asks(&reqs[i]));
    for (group, members) in &parts {
        let (Some(g), Some(l)) = (group, lead(members)) else {
            continue;
        };
        for &i in members {
            if i != l && asks(&reqs[i]) && !same_request(&reqs[i], &reqs[l]) {
                warnings.push(Warning {
                    field: field_of(&reqs[i]),
                    message: format!(
                        "the PodSets of {GROUP_NAME} {g} are placed in one domain, and Kueue wants them to ask for the same topology: role {} asks for {}, role {} for {}; {}'s is used for the group",
                        roles[i].name,
                        describe(&reqs[i]),
                        roles[l].name,
                        describe(&reqs[l]),
                        roles[l].name
                    ),
                });
            }
        }
    }
    let members_of = |p: &[usize]| -> u64 { p.iter().map(|&i| u64::from(roles[i].members)).sum() };
    let asking: Vec<usize> = (0..parts.len())
        .filter(|&p| lead(&parts[p].1).is_some())
        .collect();
    let Some(&dominant) = asking
        .iter()
        .max_by_key(|&&p| (members_of(&parts[p].1), usize::MAX - p))
    else {
        return TopologyRequest::default();
    };
    let listed: Vec<TopologyPart> = if asking.len() > 1 {
        parts
            .iter()
            .map(|(group, members)| TopologyPart {
                name: group
                    .clone()
                    .unwrap_or_else(|| roles[members[0]].name.clone()),
                group: group.clone(),
                roles: members.iter().map(|&i| roles[i].name.clone()).collect(),
                topology: lead(members)
                    .map(|l| request_of(&reqs[l]))
                    .unwrap_or_default(),
            })
            .collect()
    } else {
        Vec::new()
    };
    for (p, (_, members)) in parts.iter().enumerate() {
        for &i in members {
            roles[i].constrained = p == dominant;
        }
    }
    let d =
        lead(&parts[dominant].1).map_or_else(TopologyRequest::default, |l| request_of(&reqs[l]));
    TopologyRequest { parts: listed, ..d }
}

/// One PodSet's request as a topology request (no parts).
fn request_of(r: &KueueReq) -> TopologyRequest {
    TopologyRequest {
        required: r.required.clone(),
        preferred: r.preferred.clone(),
        slices: r.slices.clone(),
        ..TopologyRequest::default()
    }
}

fn same_request(a: &KueueReq, b: &KueueReq) -> bool {
    let level = |l: &Option<LevelRequest>| l.as_ref().map(|l| l.level.clone());
    level(&a.required) == level(&b.required)
        && level(&a.preferred) == level(&b.preferred)
        && a.slices.len() == b.slices.len()
        && a.slices
            .iter()
            .zip(&b.slices)
            .all(|(x, y)| x.level == y.level && x.size == y.size)
}

fn field_of(r: &KueueReq) -> String {
    r.required
        .as_ref()
        .or(r.preferred.as_ref())
        .map(|l| l.field.clone())
        .or_else(|| r.slices.first().map(|s| s.field.clone()))
        .unwrap_or_default()
}

fn describe(r: &KueueReq) -> String {
    let mut parts = Vec::new();
    if let Some(l) = &r.required {
        parts.push(format!("required {}", show_level(&l.level)));
    }
    if let Some(l) = &r.preferred {
        parts.push(format!("preferred {}", show_level(&l.level)));
    }
    for s in &r.slices {
        parts.push(format!("slices of {} in {}", s.size, show_level(&s.level)));
    }
    parts.join(", ")
}

fn show_level(l: &Level) -> String {
    match l {
        Level::Key(k) => k.clone(),
        Level::Tier(t) => format!("tier {t}"),
    }
}
