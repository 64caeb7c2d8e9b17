//! KubeRay (`ray.io/v1`): a RayCluster, or the cluster a RayJob creates
//! (`spec.rayClusterSpec`), as Kueue's PodSets: `head` (1) and each worker group
//! (`replicas` × `numOfHosts`, suspended groups left out).

use crate::error::Error;
use crate::model::ray::{RayClusterObj, RayClusterSpec, RayJobObj};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count};
use crate::workload::kueue::KueueReq;
use crate::workload::types::{Framework, MemberRole, Warning};

type Roles = (Vec<MemberRole>, Vec<KueueReq>);

fn cluster_roles(
    spec: &RayClusterSpec,
    origin: &Origin,
    f: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Roles, Error> {
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    let (r, q) = template_role(
        "head",
        1,
        &spec.head_group_spec.template,
        origin,
        &format!("{f}.headGroupSpec.template"),
        warnings,
    )?;
    roles.push(r);
    reqs.push(q);
    for (i, g) in spec.worker_group_specs.iter().enumerate() {
        let gf = format!("{f}.workerGroupSpecs[{i}]");
        if g.suspend == Some(true) {
            continue;
        }
        let replicas = count(origin, &format!("{gf}.replicas"), g.replicas, 0)?;
        let hosts = count(origin, &format!("{gf}.numOfHosts"), g.num_of_hosts, 1)?;
        let members = replicas.checked_mul(hosts).ok_or_else(|| {
            bad(
                origin,
                format!("{gf}.numOfHosts"),
                hosts.to_string(),
                "too many pods",
            )
        })?;
        if members == 0 {
            continue;
        }
        let name = if g.group_name.is_empty() {
            format!("workers{i}")
        } else {
            g.group_name.clone()
        };
        let (r, q) = template_role(
            &name,
            members,
            &g.template,
            origin,
            &format!("{gf}.template"),
            warnings,
        )?;
        roles.push(r);
        reqs.push(q);
    }
    if spec.enable_in_tree_autoscaling == Some(true) {
        warnings.push(Warning {
            field: format!("{f}.enableInTreeAutoscaling"),
            message: "autoscaling: worker groups are counted at their replicas now (Kueue admits that many; later scaling is not placed)".into(),
        });
    }
    Ok((roles, reqs))
}

pub(super) fn ray_cluster<'a>(
    o: &'a RayClusterObj,
    origin: &'a Origin,
) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (roles, reqs) = cluster_roles(&o.spec, origin, "spec", &mut warnings)?;
    Ok(Controlled::new(
        origin,
        &o.metadata,
        Framework::RayCluster,
        roles,
        reqs,
        warnings,
    ))
}

pub(super) fn ray_job<'a>(o: &'a RayJobObj, origin: &'a Origin) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let Some(spec) = &o.spec.ray_cluster_spec else {
        return Err(bad(
            origin,
            "spec.rayClusterSpec",
            "",
            "not set: the job runs on an existing RayCluster (spec.clusterSelector); give that RayCluster instead",
        ));
    };
    let (mut roles, mut reqs) = cluster_roles(spec, origin, "spec.rayClusterSpec", &mut warnings)?;
    let k8s_job_mode = matches!(o.spec.submission_mode.as_str(), "" | "K8sJobMode");
    match (&o.spec.submitter_pod_template, k8s_job_mode) {
        (Some(tpl), true) => {
            let (mut r, q) = template_role("submitter", 1, tpl, origin, "spec.submitterPodTemplate", &mut warnings)?;
            r.constrained = false;
            roles.push(r);
            reqs.push(KueueReq { any: q.any, ..KueueReq::default() });
        }
        (None, true) => warnings.push(Warning {
            field: "spec.submitterPodTemplate".into(),
            message: "the submitter pod KubeRay creates (K8sJobMode) is not counted: its default template is not in the object; give spec.submitterPodTemplate to count it".into(),
        }),
        _ => {}
    }
    Ok(Controlled::new(
        origin,
        &o.metadata,
        Framework::RayJob,
        roles,
        reqs,
        warnings,
    ))
}
