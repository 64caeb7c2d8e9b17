//! `batch/v1` Job: `parallelism` pods of its template (at most `completions`).

use crate::error::Error;
use crate::model::batch_v1::{JobObj, JobSpec};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count};
use crate::workload::kai;
use crate::workload::kueue;
use crate::workload::types::{Framework, Warning};

/// Pods a Job creates at once (Kueue's count: parallelism, at most completions).
pub(super) fn job_pods(origin: &Origin, field: &str, spec: &JobSpec) -> Result<u32, Error> {
    let p = count(origin, &format!("{field}.parallelism"), spec.parallelism, 1)?;
    let c = match spec.completions {
        Some(_) => count(origin, &format!("{field}.completions"), spec.completions, 1)?,
        None => u32::MAX,
    };
    Ok(p.min(c))
}

/// A Job as a controlled workload: one role, `main`, and Kueue's partial admission
/// minimum.
pub(super) fn job<'a>(job: &'a JobObj, o: &'a Origin) -> Result<Controlled<'a>, Error> {
    let members = job_pods(o, "spec", &job.spec)?;
    let mut warnings = Vec::new();
    let (role, req) = template_role(
        "main",
        members,
        &job.spec.template,
        o,
        "spec.template",
        &mut warnings,
    )?;
    // Kueue's partial admission (the minCount of the Job's PodSet): its webhook takes
    // 1 to parallelism - 1; more than the pods is the workload contradicting itself.
    let minimum = match job.metadata.annotations.get(kueue::JOB_MIN_PARALLELISM) {
        Some(v) => {
            let f = format!("metadata.annotations.{}", kueue::JOB_MIN_PARALLELISM);
            let m: u32 = v
                .parse()
                .map_err(|_| bad(o, &f, v, "must be a whole number"))?;
            if m == 0 || m == members {
                return Err(bad(
                    o,
                    &f,
                    v,
                    &format!(
                        "must be 1 to {} (below the Job's {members} pods; Kueue's webhook refuses {m}): set the fewest pods the Job can start with, or remove it to admit all",
                        members.saturating_sub(1)
                    ),
                ));
            }
            Some((m, f))
        }
        None => None,
    };
    // KAI's pod grouper gives each pod of a batch Job a PodGroup of its own (minMember
    // 1): no gang, unless Kueue admits the Job.
    let tpl = &job.spec.template;
    let kai_field = if tpl.spec.scheduler_name == kai::SCHEDULER_NAME {
        Some("spec.template.spec.schedulerName".to_owned())
    } else if tpl.metadata.labels.contains_key(kai::QUEUE) {
        Some(format!("spec.template.metadata.labels.{}", kai::QUEUE))
    } else if job.metadata.labels.contains_key(kai::QUEUE) {
        Some(format!("metadata.labels.{}", kai::QUEUE))
    } else {
        None
    };
    if let (Some(field), false) = (
        kai_field,
        job.metadata.labels.contains_key(kueue::QUEUE_NAME),
    ) {
        warnings.push(Warning {
            field,
            message: format!(
                "KAI's pod grouper gives each pod of a batch Job a PodGroup of its own (minMember 1): no gang, the pods start one by one; read here as all {members} together"
            ),
        });
    }
    Ok(Controlled {
        minimum,
        ..Controlled::new(
            o,
            &job.metadata,
            Framework::Job,
            vec![role],
            vec![req],
            warnings,
        )
    })
}
