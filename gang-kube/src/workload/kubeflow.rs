//! Kubeflow's PyTorchJob, MPIJob, TFJob, JAXJob, XGBoostJob and PaddleJob: one role per
//! replica type, leaders first.

use crate::error::Error;
use crate::model::kubeflow::{KubeflowKind, KubeflowObj};
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::count;
use crate::workload::gang::no_gang;
use crate::workload::types::{Framework, Warning};

fn replica_order(name: &str) -> (u8, String) {
    let rank = match name.to_lowercase().as_str() {
        "master" | "chief" | "launcher" => 0,
        "ps" => 1,
        "worker" => 2,
        _ => 3,
    };
    (rank, name.to_owned())
}

pub(super) fn kubeflow<'a>(
    kind: KubeflowKind,
    job: &'a KubeflowObj,
    origin: &'a Origin,
) -> Result<(Controlled<'a>, Framework), Error> {
    let (specs, field, framework) = match kind {
        KubeflowKind::PyTorch => (
            &job.spec.pytorch_replica_specs,
            "spec.pytorchReplicaSpecs",
            Framework::PyTorchJob,
        ),
        KubeflowKind::Mpi => (
            &job.spec.mpi_replica_specs,
            "spec.mpiReplicaSpecs",
            Framework::MpiJob,
        ),
        KubeflowKind::Tf => (
            &job.spec.tf_replica_specs,
            "spec.tfReplicaSpecs",
            Framework::TfJob,
        ),
        KubeflowKind::Jax => (
            &job.spec.jax_replica_specs,
            "spec.jaxReplicaSpecs",
            Framework::JaxJob,
        ),
        KubeflowKind::XgBoost => (
            &job.spec.xgb_replica_specs,
            "spec.xgbReplicaSpecs",
            Framework::XgBoostJob,
        ),
        KubeflowKind::Paddle => (
            &job.spec.paddle_replica_specs,
            "spec.paddleReplicaSpecs",
            Framework::PaddleJob,
        ),
    };
    let mut names: Vec<&String> = specs.keys().collect();
    names.sort_by_key(|n| replica_order(n));
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    for n in names {
        let rs = &specs[n];
        let f = format!("{field}.{n}");
        let replicas = count(origin, &format!("{f}.replicas"), rs.replicas, 1)?;
        if replicas == 0 {
            continue;
        }
        let (r, q) = template_role(
            &n.to_lowercase(),
            replicas,
            &rs.template,
            origin,
            &format!("{f}.template"),
            &mut warnings,
        )?;
        roles.push(r);
        reqs.push(q);
    }
    let mut minimum = None;
    if let Some(sp) = &job.spec.run_policy.scheduling_policy {
        let f = "spec.runPolicy.schedulingPolicy.minAvailable";
        match sp.min_available {
            Some(0) => {
                let members = roles.iter().map(|r| r.members).sum();
                warnings.push(no_gang(f, members));
            }
            Some(m) => minimum = Some((count(origin, f, Some(m), 0)?, f.to_owned())),
            None => {}
        }
        if !sp.min_resources.is_empty() {
            warnings.push(Warning {
                field: "spec.runPolicy.schedulingPolicy.minResources".into(),
                message: "minResources (an aggregate the scheduler checks first) is not applied; each member's own shape is".into(),
            });
        }
    }
    if job.spec.elastic_policy.is_some() {
        warnings.push(Warning {
            field: "spec.elasticPolicy".into(),
            message: "elastic policy (min/max replicas) is not read; replicas and minAvailable are"
                .into(),
        });
    }
    Ok((
        Controlled {
            minimum,
            ..Controlled::new(origin, &job.metadata, framework, roles, reqs, warnings)
        },
        framework,
    ))
}
