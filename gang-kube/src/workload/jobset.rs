//! JobSet (`jobset.x-k8s.io`): one role per replicated job, `replicas` × the pods of
//! its Job.

use crate::error::Error;
use crate::model::jobset::JobSetObj;
use crate::origin::Origin;
use crate::workload::batch::job_pods;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count};
use crate::workload::types::Framework;

/// A JobSet as a controlled workload.
pub(super) fn jobset<'a>(js: &'a JobSetObj, o: &'a Origin) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
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
    }
    Ok(Controlled {
        origin: o,
        meta: &js.metadata,
        framework: Framework::JobSet,
        roles,
        kueue_reqs: reqs,
        minimum: None,
        topology: None,
        warnings,
    })
}
