//! Kueue's PodSet topology annotations (on pod templates).

// Below the public names: reading them from a pod template, and one topology request
// for the gang from the requests of its roles.

use crate::error::Error;
use crate::model::meta_v1::Meta;
use crate::origin::Origin;
use crate::workload::fields::{bad, level_value};
use crate::workload::types::{
    Level, LevelRequest, MemberRole, SliceRequest, TopologyPart, TopologyRequest,
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

#[derive(Debug, Default, Clone)]
pub(super) struct KueueReq {
    pub(super) required: Option<LevelRequest>,
    pub(super) preferred: Option<LevelRequest>,
    pub(super) unconstrained: bool,
    pub(super) slices: Vec<SliceRequest>,
    /// The field of the outermost slice's size (`…podset-slice-size`, or the first
    /// layer of `…podset-slice-required-topology-constraints`).
    pub(super) slice_size_field: String,
    pub(super) group: Option<String>,
    /// The field of `podset-group-name`.
    pub(super) group_field: String,
    pub(super) any: bool,
    /// The object the annotations were read from (the workload, or a plain pod).
    pub(super) origin: Option<Origin>,
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
            r.slice_size_field = f(SLICE_SIZE);
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
        if layers.is_empty() || layers.len() > 3 {
            return Err(bad(
                origin,
                &field,
                text,
                &format!(
                    "has {} layers: Kueue takes 1 to 3 (outermost first), and its webhook refuses others",
                    layers.len()
                ),
            ));
        }
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
            if let Some(j) = layers[..i].iter().position(|p| p.topology == c.topology) {
                return Err(bad(
                    origin,
                    format!("{field}[{i}].topology"),
                    &c.topology,
                    &format!("is layer {j}'s too: each layer names a level of its own"),
                ));
            }
            if let Some(outer) = r.slices.last() {
                if outer.size % size != 0 {
                    return Err(bad(
                        origin,
                        format!("{field}[{i}].size"),
                        size.to_string(),
                        &format!(
                            "must divide the size {} of the layer outside it (Kueue's webhook refuses it otherwise)",
                            outer.size
                        ),
                    ));
                }
            }
            r.slices.push(SliceRequest {
                level: level_value(origin, &format!("{field}[{i}].topology"), &c.topology)?,
                size,
                field: format!("{field}[{i}]"),
            });
        }
        r.slice_size_field = format!("{field}[0].size");
    }
    if let Some(g) = a.get(GROUP_NAME) {
        let field = f(GROUP_NAME);
        let refuse = |why: &str| Err(bad(origin, &field, g, why));
        if g.parse::<u64>().is_ok() {
            return refuse("must not be a number (Kueue's webhook refuses it): name the group, e.g. leader-and-workers");
        }
        if !r.slices.is_empty() {
            return refuse("cannot be set on a PodSet with slice annotations (Kueue's webhook refuses it): a group is one domain for a leader and its workers; drop the slices or the group");
        }
        if r.required.is_none() && r.preferred.is_none() {
            return refuse(&format!(
                "needs {REQUIRED} or {PREFERRED} on the same PodSet (Kueue's webhook refuses a group without one): add the level the group shares"
            ));
        }
        r.group = Some(g.clone());
        r.group_field = field;
    }
    r.any = r.required.is_some()
        || r.preferred.is_some()
        || a.contains_key(UNCONSTRAINED)
        || !r.slices.is_empty();
    r.origin = Some(origin.clone());
    Ok(r)
}

/// The gang's topology request from per-role Kueue requests, as Kueue reads them: the
/// PodSets sharing a `podset-group-name` are one part, every other PodSet its own; each
/// part asks for its own domain. With one part asking, that is the gang's request (its
/// roles constrained, the rest not); with several, the largest part's request is the
/// gang's and every part is listed in `parts`, for [`Cluster::place`](crate::Cluster::place)
/// to place one after another.
///
/// What Kueue's webhooks refuse is an error here: a slice larger than its PodSet, and a
/// group that is not two PodSets (a leader of 1 pod and its workers) asking for the same
/// level. Kueue's scheduler places a group only as such a pair; the webhooks of the
/// kinds with `webhook_groups` (JobSet, LeaderWorkerSet, MPIJob, Ray) refuse any other,
/// the others let a group of one PodSet through (it is that PodSet alone).
pub(super) fn combine_kueue(
    roles: &mut [MemberRole],
    reqs: &[KueueReq],
    webhook_groups: bool,
) -> Result<TopologyRequest, Error> {
    for (r, q) in roles.iter().zip(reqs) {
        check_slices(r, q)?;
    }
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
    for (group, members) in &parts {
        match group {
            Some(_) if members.len() == 1 && !webhook_groups => {}
            Some(g) => check_group(g, members, roles, reqs)?,
            None => {}
        }
    }
    // A part's request is its first PodSet's (a group's two ask alike, checked above).
    let lead = |p: &[usize]| p.iter().copied().find(|&i| asks(&reqs[i]));
    let members_of = |p: &[usize]| -> u64 { p.iter().map(|&i| u64::from(roles[i].members)).sum() };
    let asking: Vec<usize> = (0..parts.len())
        .filter(|&p| lead(&parts[p].1).is_some())
        .collect();
    let Some(&dominant) = asking
        .iter()
        .max_by_key(|&&p| (members_of(&parts[p].1), usize::MAX - p))
    else {
        return Ok(TopologyRequest::default());
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
    Ok(TopologyRequest { parts: listed, ..d })
}

/// Kueue's webhook: a slice no larger than its PodSet. (A size that does not divide
/// the PodSet is gang-core's error when placing: gang places whole slices.)
fn check_slices(role: &MemberRole, q: &KueueReq) -> Result<(), Error> {
    let (Some(outer), Some(origin)) = (q.slices.first(), &q.origin) else {
        return Ok(());
    };
    let n = role.members;
    if outer.size <= n {
        return Ok(());
    }
    Err(bad(
        origin,
        &q.slice_size_field,
        outer.size.to_string(),
        &format!(
            "is more than the {n} pods of PodSet {} (Kueue's webhook refuses a slice larger than its PodSet): lower it to {n} or less",
            role.name
        ),
    ))
}

/// Kueue's webhook on a `podset-group-name` group: exactly two PodSets, one of them a
/// leader of 1 pod, both asking for the same required or preferred level (its
/// scheduler places a group as one leader and its workers).
fn check_group(
    g: &str,
    members: &[usize],
    roles: &[MemberRole],
    reqs: &[KueueReq],
) -> Result<(), Error> {
    // Every PodSet of a group was read from annotations, so has its origin.
    let Some(origin) = members.iter().find_map(|&i| reqs[i].origin.as_ref()) else {
        return Ok(());
    };
    let at = |i: usize| {
        let q = &reqs[i];
        let origin = q.origin.as_ref().unwrap_or(origin);
        move |why: String| bad(origin, &q.group_field, g, &why)
    };
    let named = |i: usize| match roles[i].members {
        1 => format!("{} (1 pod)", roles[i].name),
        n => format!("{} ({n} pods)", roles[i].name),
    };
    match members {
        [a, b] => {
            if roles[*a].members != 1 && roles[*b].members != 1 {
                return Err(at(*a)(format!(
                    "groups PodSets {} and {}, and Kueue places a group as a leader of 1 pod and its workers (its webhook refuses a group where neither has 1 pod): leave the annotation off, or give it to a PodSet of 1",
                    named(*a),
                    named(*b)
                )));
            }
            if !same_request(&reqs[*a], &reqs[*b]) {
                return Err(at(*b)(format!(
                    "PodSet {} asks for {}, PodSet {} for {}: Kueue's webhook wants both PodSets of a group to ask for the same required or preferred level; make them the same",
                    roles[*b].name,
                    describe(&reqs[*b]),
                    roles[*a].name,
                    describe(&reqs[*a])
                )));
            }
            Ok(())
        }
        _ => {
            let listed: Vec<String> = members.iter().map(|&i| named(i)).collect();
            Err(at(members[0])(format!(
                "is given to {} PodSet(s), {}: Kueue places a group as exactly 2 (a leader of 1 pod and its workers; the webhooks of JobSet, LeaderWorkerSet, MPIJob and Ray refuse other groups); give it to two PodSets",
                members.len(),
                listed.join(", ")
            )))
        }
    }
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
