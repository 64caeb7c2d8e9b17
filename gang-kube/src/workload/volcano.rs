//! Volcano: the network topology request (of a PodGroup or a Job) and the
//! `batch.volcano.sh` Job, one role per task.

use crate::error::{Error, ErrorKind};
use crate::model::volcano::{NetworkTopology, VolcanoJobObj};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count, level_value};
use crate::workload::types::{Framework, Level, LevelRequest, TopologyRequest, Warning};

/// Pod annotation naming a Volcano PodGroup.
pub const VOLCANO_GROUP_ANNOTATION: &str = "scheduling.k8s.io/group-name";

pub(super) fn volcano_request(
    nt: &NetworkTopology,
    origin: &Origin,
    field: &str,
    warnings: &mut Vec<Warning>,
) -> Result<TopologyRequest, Error> {
    let level = if !nt.highest_tier_name.is_empty() {
        warnings.push(Warning {
            field: format!("{field}.highestTierName"),
            message: format!(
                "HyperNode tier names are not read (no HyperNode objects); {:?} is taken as a node label key",
                nt.highest_tier_name
            ),
        });
        level_value(
            origin,
            &format!("{field}.highestTierName"),
            &nt.highest_tier_name,
        )?
    } else {
        let tier = nt.highest_tier_allowed.unwrap_or(1);
        let tier = u32::try_from(tier)
            .ok()
            .filter(|t| *t >= 1)
            .ok_or_else(|| {
                bad(
                    origin,
                    format!("{field}.highestTierAllowed"),
                    tier.to_string(),
                    "must be a tier, 1 or more",
                )
            })?;
        warnings.push(Warning {
            field: format!("{field}.highestTierAllowed"),
            message: format!(
                "Volcano tiers are HyperNode tiers; without HyperNode objects tier {tier} is read as the {} label level counted from the nodes up",
                ordinal(tier)
            ),
        });
        Level::Tier(tier)
    };
    let req = LevelRequest {
        level,
        field: format!("{field}.highestTierAllowed"),
    };
    match nt.mode.as_str() {
        "" | "hard" => Ok(TopologyRequest {
            required: Some(req),
            ..TopologyRequest::default()
        }),
        "soft" => Ok(TopologyRequest {
            preferred: Some(req),
            ..TopologyRequest::default()
        }),
        other => Err(bad(
            origin,
            format!("{field}.mode"),
            other,
            "must be hard or soft",
        )),
    }
}

fn ordinal(n: u32) -> String {
    match n {
        1 => "innermost".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}

pub(super) fn volcano_job<'a>(
    job: &'a VolcanoJobObj,
    origin: &'a Origin,
) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    for (i, t) in job.spec.tasks.iter().enumerate() {
        let f = format!("spec.tasks[{i}]");
        let replicas = count(origin, &format!("{f}.replicas"), t.replicas, 1)?;
        if replicas == 0 {
            continue;
        }
        let name = if t.name.is_empty() {
            format!("task{i}")
        } else {
            t.name.clone()
        };
        let (mut r, q) = template_role(
            &name,
            replicas,
            &t.template,
            origin,
            &format!("{f}.template"),
            &mut warnings,
        )?;
        if let Some(m) = t.min_available {
            let m = count(origin, &format!("{f}.minAvailable"), Some(m), 0)?;
            if m > replicas {
                return Err(Error::new(
                    ErrorKind::InvalidMinimum,
                    &origin.source,
                    format!("more than the task's {replicas} replicas"),
                )
                .at(origin)
                .with_field(format!("{f}.minAvailable"))
                .with_value(m.to_string()));
            }
            if m < replicas {
                r.min_count = Some(m);
            }
        }
        if t.partition_policy.is_some() {
            warnings.push(Warning {
                field: format!("{f}.partitionPolicy"),
                message: "partition policy (partitions with their own topology) is not applied"
                    .into(),
            });
        }
        roles.push(r);
        reqs.push(q);
    }
    let members: u32 = roles.iter().map(|r| r.members).sum();
    let minimum = match job.spec.min_available {
        Some(m) => Some((
            count(origin, "spec.minAvailable", Some(m), 0)?,
            "spec.minAvailable".to_owned(),
        )),
        None => Some((members, "spec.minAvailable".to_owned())),
    };
    let topology = match &job.spec.network_topology {
        Some(nt) => Some(volcano_request(
            nt,
            origin,
            "spec.networkTopology",
            &mut warnings,
        )?),
        None => None,
    };
    Ok(Controlled {
        origin,
        meta: &job.metadata,
        framework: Framework::VolcanoJob,
        roles,
        kueue_reqs: reqs,
        minimum,
        topology,
        exclusive: None,
        warnings,
    })
}
