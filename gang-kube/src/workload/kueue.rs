//! Kueue's PodSet topology annotations (on pod templates).

// Below the public names: reading them from a pod template, and one topology request
// for the gang from the requests of its roles.

use std::collections::HashSet;

use crate::error::Error;
use crate::model::meta_v1::Meta;
use crate::origin::Origin;
use crate::workload::fields::{bad, level_value};
use crate::workload::types::{
    Level, LevelRequest, MemberRole, SliceRequest, TopologyRequest, Warning,
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

/// One topology request for the gang from per-role Kueue requests; roles whose request
/// differs become unconstrained, with a warning.
pub(super) fn combine_kueue(
    roles: &mut [MemberRole],
    reqs: &[KueueReq],
    warnings: &mut Vec<Warning>,
) -> TopologyRequest {
    let constrained: Vec<usize> = (0..roles.len())
        .filter(|&i| {
            reqs[i].required.is_some() || reqs[i].preferred.is_some() || !reqs[i].slices.is_empty()
        })
        .collect();
    let Some(&dominant) = constrained
        .iter()
        .max_by_key(|&&i| (roles[i].members, usize::MAX - i))
    else {
        return TopologyRequest::default();
    };
    let d = &reqs[dominant];
    let same_levels = |r: &KueueReq| {
        r.required.as_ref().map(|l| &l.level) == d.required.as_ref().map(|l| &l.level)
            && r.preferred.as_ref().map(|l| &l.level) == d.preferred.as_ref().map(|l| &l.level)
    };
    let same_slices = |r: &KueueReq| {
        r.slices.len() == d.slices.len()
            && r.slices
                .iter()
                .zip(&d.slices)
                .all(|(a, b)| a.level == b.level && a.size == b.size)
    };
    let describe = |r: &KueueReq| -> String {
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
    };
    let mut together = Vec::new();
    for i in 0..roles.len() {
        let r = &reqs[i];
        if constrained.contains(&i) && same_levels(r) && same_slices(r) {
            together.push(i);
            continue;
        }
        roles[i].constrained = false;
        if constrained.contains(&i) {
            let field = r
                .required
                .as_ref()
                .or(r.preferred.as_ref())
                .map(|l| l.field.clone())
                .or_else(|| r.slices.first().map(|s| s.field.clone()))
                .unwrap_or_default();
            warnings.push(Warning {
                field,
                message: format!(
                    "role {} asks for {}, role {} for {}; a gang has one topology request, so {} is placed anywhere (still all-or-nothing)",
                    roles[i].name,
                    describe(r),
                    roles[dominant].name,
                    describe(d),
                    roles[i].name
                ),
            });
        }
    }
    if together.len() > 1 {
        let groups: HashSet<Option<&String>> =
            together.iter().map(|&i| reqs[i].group.as_ref()).collect();
        if groups.len() > 1 || groups.contains(&None) {
            let names: Vec<&str> = together.iter().map(|&i| roles[i].name.as_str()).collect();
            warnings.push(Warning {
                field: d
                    .required
                    .as_ref()
                    .or(d.preferred.as_ref())
                    .map(|l| l.field.clone())
                    .unwrap_or_default(),
                message: format!(
                    "Kueue fits each of the PodSets {} in its own domain unless they share {}; gang-core places them in one domain together (stricter)",
                    names.join(", "),
                    GROUP_NAME
                ),
            });
        }
    }
    TopologyRequest {
        required: d.required.clone(),
        preferred: d.preferred.clone(),
        slices: d.slices.clone(),
        also_required: Vec::new(),
        exclusive: None,
    }
}

fn show_level(l: &Level) -> String {
    match l {
        Level::Key(k) => k.clone(),
        Level::Tier(t) => format!("tier {t}"),
    }
}
