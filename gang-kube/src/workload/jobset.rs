//! JobSet (`jobset.x-k8s.io`): one role per replicated job, `replicas` × the pods of
//! its Job.

use crate::error::Error;
use crate::model::jobset::JobSetObj;
use crate::origin::Origin;
use crate::workload::batch::job_pods;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count, level_value};
use crate::workload::types::{Framework, SliceRequest, Warning};

/// JobSet annotation: each child Job alone in one domain of this label key.
pub const EXCLUSIVE_TOPOLOGY: &str = "alpha.jobset.sigs.k8s.io/exclusive-topology";

/// A JobSet as a controlled workload.
pub(super) fn jobset<'a>(js: &'a JobSetObj, o: &'a Origin) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    let mut per_job: Vec<u32> = Vec::new();
    for (i, rj) in js.spec.replicated_jobs.iter().enumerate() {
        let f = format!("spec.replicatedJobs[{i}]");
        let replicas = count(o, &format!("{f}.replicas"), rj.replicas, 1)?;
        let per = job_pods(o, &format!("{f}.template.spec"), &rj.template.spec)?;
        let members = replicas.checked_mul(per).ok_or_else(|| {
            bad(
                o,
                format!("{f}.replicas"),
                replicas.to_string(),
                "too many pods",
            )
        })?;
        if members == 0 {
            continue;
        }
        let name = if rj.name.is_empty() {
            format!("job{i}")
        } else {
            rj.name.clone()
        };
        let (r, q) = template_role(
            &name,
            members,
            &rj.template.spec.template,
            o,
            &format!("{f}.template.spec.template"),
            &mut warnings,
        )?;
        roles.push(r);
        reqs.push(q);
        per_job.push(per);
    }
    let mut exclusive = None;
    if let Some(key) = js.metadata.annotations.get(EXCLUSIVE_TOPOLOGY) {
        let field = format!("metadata.annotations.{EXCLUSIVE_TOPOLOGY}");
        let level = level_value(o, &field, key)?;
        match per_job.as_slice() {
            [size] => {
                exclusive = Some(SliceRequest {
                    level,
                    size: *size,
                    field,
                })
            }
            _ => warnings.push(Warning {
                field,
                message: "one child Job per domain is modelled for a JobSet of one replicated job; with several (or none) it is not applied".into(),
            }),
        }
    }
    Ok(Controlled {
        exclusive,
        ..Controlled::new(o, &js.metadata, Framework::JobSet, roles, reqs, warnings)
    })
}
