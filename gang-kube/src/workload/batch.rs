//! `batch/v1` Job: `parallelism` pods of its template (at most `completions`).

use crate::error::Error;
use crate::model::batch_v1::{JobObj, JobSpec};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count};
use crate::workload::kueue;
use crate::workload::types::Framework;

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
    let minimum = match job.metadata.annotations.get(kueue::JOB_MIN_PARALLELISM) {
        Some(v) => {
            let f = format!("metadata.annotations.{}", kueue::JOB_MIN_PARALLELISM);
            let m: u32 = v
                .parse()
                .map_err(|_| bad(o, &f, v, "must be a whole number"))?;
            Some((m, f))
        }
        None => None,
    };
    Ok(Controlled {
        origin: o,
        meta: &job.metadata,
        framework: Framework::Job,
        roles: vec![role],
        kueue_reqs: vec![req],
        minimum,
        topology: None,
        exclusive: None,
        warnings,
    })
}
