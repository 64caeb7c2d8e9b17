//! Volcano: the network topology request (of a PodGroup or a Job) and the
//! `batch.volcano.sh` Job, one role per task.

use crate::error::{Error, ErrorKind};
use crate::model::volcano::{NetworkTopology, PartitionPolicy, VolcanoJobObj};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count, level_value};
use crate::workload::types::{
    Framework, Level, LevelRequest, SliceRequest, TopologyRequest, Warning,
};

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

/// A task's partitions as a slice request (hard network topology), or `None` with a
/// warning when they cannot be one (soft mode, no topology).
fn partition(
    pp: &PartitionPolicy,
    replicas: u32,
    min_modelled: bool,
    origin: &Origin,
    task: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Option<SliceRequest>, Error> {
    let f = format!("{task}.partitionPolicy");
    let total = count(
        origin,
        &format!("{f}.totalPartitions"),
        pp.total_partitions,
        0,
    )?;
    let size = count(origin, &format!("{f}.partitionSize"), pp.partition_size, 0)?;
    if total == 0 || size == 0 || u64::from(total) * u64::from(size) != u64::from(replicas) {
        return Err(bad(
            origin,
            format!("{f}.totalPartitions"),
            total.to_string(),
            &format!(
                "totalPartitions × partitionSize ({total} × {size}) must equal the task's {replicas} replicas (both 1 or more)"
            ),
        ));
    }
    // Without the task's own minAvailable, minPartitions × partitionSize is its minimum
    // (as Volcano's webhook sets it); with one, the task's minAvailable is.
    let min = count(origin, &format!("{f}.minPartitions"), pp.min_partitions, 0)?;
    if min > total {
        return Err(bad(
            origin,
            format!("{f}.minPartitions"),
            min.to_string(),
            &format!("is more than the {total} partitions (totalPartitions): lower it"),
        ));
    }
    if min > 0 && min < total && !min_modelled {
        warnings.push(Warning {
            field: format!("{f}.minPartitions"),
            message: format!(
                "at least {min} of the {total} partitions is not applied: the task's minAvailable is"
            ),
        });
    }
    let Some(nt) = &pp.network_topology else {
        warnings.push(Warning {
            field: f,
            message: "partitions without a networkTopology have no domain to keep: not applied"
                .into(),
        });
        return Ok(None);
    };
    let nt_field = format!("{f}.networkTopology");
    let req = volcano_request(nt, origin, &nt_field, warnings)?;
    match req.required {
        Some(l) => Ok(Some(SliceRequest {
            level: l.level,
            size,
            field: l.field,
        })),
        None => {
            warnings.push(Warning {
                field: format!("{nt_field}.mode"),
                message: "soft partitions (a preference per partition) are not applied: gang-core's slices are required".into(),
            });
            Ok(None)
        }
    }
}

pub(super) fn volcano_job<'a>(
    job: &'a VolcanoJobObj,
    origin: &'a Origin,
) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    let mut partitions: Vec<(String, SliceRequest)> = Vec::new();
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
        // Volcano's webhook: a task without minAvailable takes minPartitions ×
        // partitionSize when minPartitions is set, else its replicas.
        let from_partitions = t.partition_policy.as_ref().and_then(|pp| {
            let m = pp.min_partitions.filter(|m| *m > 0)?;
            Some(m.saturating_mul(pp.partition_size?))
        });
        let (task_min, min_field) = match (t.min_available, from_partitions) {
            (Some(m), _) => (Some(m), format!("{f}.minAvailable")),
            (None, Some(m)) => (Some(m), format!("{f}.partitionPolicy.minPartitions")),
            (None, None) => (None, String::new()),
        };
        if let Some(m) = task_min {
            let m = count(origin, &min_field, Some(m), 0)?;
            if m > replicas {
                return Err(Error::new(
                    ErrorKind::InvalidMinimum,
                    &origin.source,
                    format!("more than the task's {replicas} replicas"),
                )
                .at(origin)
                .with_field(min_field)
                .with_value(m.to_string()));
            }
            if m < replicas {
                r.min_count = Some(m);
            }
        }
        if let Some(pp) = &t.partition_policy {
            let min_modelled = t.min_available.is_none();
            if let Some(p) = partition(pp, replicas, min_modelled, origin, &f, &mut warnings)? {
                partitions.push((name.clone(), p));
            }
        }
        roles.push(r);
        reqs.push(q);
    }
    // Volcano's webhook: minAvailable unset (or 0) is the sum of the tasks' minimums.
    let task_mins: u32 = roles.iter().map(|r| r.min_count.unwrap_or(r.members)).sum();
    let minimum = match job.spec.min_available {
        Some(m) if m != 0 => Some((
            count(origin, "spec.minAvailable", Some(m), 0)?,
            "spec.minAvailable".to_owned(),
        )),
        _ => Some((task_mins, "spec.minAvailable".to_owned())),
    };
    let mut topology = match &job.spec.network_topology {
        Some(nt) => Some(volcano_request(
            nt,
            origin,
            "spec.networkTopology",
            &mut warnings,
        )?),
        None => None,
    };
    // Partitions are gang-core slices: every pod of the gang in slices of that size and
    // level, so they are modelled when every task is partitioned alike.
    if let Some((_, first)) = partitions.first() {
        let alike = partitions.len() == roles.len()
            && partitions
                .iter()
                .all(|(_, p)| p.level == first.level && p.size == first.size);
        if alike {
            topology.get_or_insert_with(TopologyRequest::default).slices = vec![first.clone()];
        } else {
            for (task, p) in &partitions {
                warnings.push(Warning {
                    field: p.field.clone(),
                    message: format!(
                        "task {task}'s partitions of {} are not applied: gang-core slices every pod of the gang alike, and the job's tasks are not all partitioned alike",
                        p.size
                    ),
                });
            }
        }
    }
    Ok(Controlled {
        minimum,
        topology,
        ..Controlled::new(
            origin,
            &job.metadata,
            Framework::VolcanoJob,
            roles,
            reqs,
            warnings,
        )
    })
}
