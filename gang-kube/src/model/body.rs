//! What an object is: the typed [`Body`] of each kind gang-kube reads, which struct an
//! `apiVersion` and `kind` read into ([`classify`]), and an [`Item`]: a body with its
//! [`Origin`].

use serde::de::DeserializeOwned;

use crate::model::appwrapper::AppWrapperObj;
use crate::model::batch_v1::JobObj;
use crate::model::core_v1::{LimitRange, Node, Pod, PodSpec};
use crate::model::jobset::JobSetObj;
use crate::model::kubeflow::{KubeflowKind, KubeflowObj};
use crate::model::kueue::{FlavorObj, TopologyObj, WorkloadPriorityClassObj};
use crate::model::lws::LwsObj;
use crate::model::meta_v1::Meta;
use crate::model::node_v1::RuntimeClass;
use crate::model::pod_group::{PodGroupKind, PodGroupObj};
use crate::model::ray::{RayClusterObj, RayClusterSpec, RayJobObj};
use crate::model::volcano::VolcanoJobObj;
use crate::model::{coscheduling, kai, scheduling, volcano};
use crate::origin::Origin;

/// An object read: where it came from and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub origin: Origin,
    pub body: Body,
}

/// An object as the struct of its kind; `Other` for kinds gang-kube does not read.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Node(Box<Node>),
    Pod(Box<Pod>),
    Topology(Box<TopologyObj>),
    Flavor(Box<FlavorObj>),
    PodGroup(PodGroupKind, Box<PodGroupObj>),
    Job(Box<JobObj>),
    JobSet(Box<JobSetObj>),
    Kubeflow(KubeflowKind, Box<KubeflowObj>),
    VolcanoJob(Box<VolcanoJobObj>),
    PriorityClass(Box<scheduling::PriorityClass>),
    WorkloadPriorityClass(Box<WorkloadPriorityClassObj>),
    Lws(Box<LwsObj>),
    RayCluster(Box<RayClusterObj>),
    RayJob(Box<RayJobObj>),
    AppWrapper(Box<AppWrapperObj>),
    LimitRange(Box<LimitRange>),
    RuntimeClass(Box<RuntimeClass>),
    Other,
}

impl Body {
    pub(crate) fn meta_mut(&mut self) -> Option<&mut Meta> {
        Some(match self {
            Body::Pod(o) => &mut o.metadata,
            Body::Topology(o) => &mut o.metadata,
            Body::Flavor(o) => &mut o.metadata,
            Body::PodGroup(_, o) => &mut o.metadata,
            Body::Job(o) => &mut o.metadata,
            Body::JobSet(o) => &mut o.metadata,
            Body::Kubeflow(_, o) => &mut o.metadata,
            Body::VolcanoJob(o) => &mut o.metadata,
            Body::PriorityClass(o) => &mut o.metadata,
            Body::WorkloadPriorityClass(o) => &mut o.metadata,
            Body::Lws(o) => &mut o.metadata,
            Body::RayCluster(o) => &mut o.metadata,
            Body::RayJob(o) => &mut o.metadata,
            Body::AppWrapper(o) => &mut o.metadata,
            Body::LimitRange(o) => &mut o.metadata,
            Body::RuntimeClass(o) => &mut o.metadata,
            Body::Node(_) | Body::Other => return None,
        })
    }

    /// Whether objects of this kind live in a namespace (kinds gang-kube does not read:
    /// unknown, `false`).
    pub(crate) fn is_namespaced(&self) -> bool {
        !matches!(
            self,
            Body::Node(_)
                | Body::Topology(_)
                | Body::Flavor(_)
                | Body::PriorityClass(_)
                | Body::WorkloadPriorityClass(_)
                | Body::RuntimeClass(_)
                | Body::Other
        )
    }

    /// Whether this is a workload object (a controller of pods: not a pod, a PodGroup,
    /// or a cluster object).
    pub(crate) fn is_workload(&self) -> bool {
        matches!(
            self,
            Body::Job(_)
                | Body::JobSet(_)
                | Body::Kubeflow(..)
                | Body::VolcanoJob(_)
                | Body::Lws(_)
                | Body::RayCluster(_)
                | Body::RayJob(_)
                | Body::AppWrapper(_)
        )
    }

    /// Every pod spec in the object with its field path: a pod's own, or a workload's
    /// pod templates (an AppWrapper's are inside its components, read later: none here).
    pub(crate) fn pod_specs_mut(&mut self) -> Vec<(String, &mut PodSpec)> {
        let mut out: Vec<(String, &mut PodSpec)> = Vec::new();
        match self {
            Body::Pod(p) => out.push(("spec".into(), &mut p.spec)),
            Body::Job(j) => out.push(("spec.template.spec".into(), &mut j.spec.template.spec)),
            Body::JobSet(js) => {
                for (i, rj) in js.spec.replicated_jobs.iter_mut().enumerate() {
                    out.push((
                        format!("spec.replicatedJobs[{i}].template.spec.template.spec"),
                        &mut rj.template.spec.template.spec,
                    ));
                }
            }
            Body::Kubeflow(_, k) => {
                let s = &mut k.spec;
                for (field, specs) in [
                    ("pytorchReplicaSpecs", &mut s.pytorch_replica_specs),
                    ("mpiReplicaSpecs", &mut s.mpi_replica_specs),
                    ("tfReplicaSpecs", &mut s.tf_replica_specs),
                    ("jaxReplicaSpecs", &mut s.jax_replica_specs),
                    ("xgbReplicaSpecs", &mut s.xgb_replica_specs),
                    ("paddleReplicaSpecs", &mut s.paddle_replica_specs),
                ] {
                    for (n, rs) in specs.iter_mut() {
                        out.push((
                            format!("spec.{field}.{n}.template.spec"),
                            &mut rs.template.spec,
                        ));
                    }
                }
            }
            Body::VolcanoJob(v) => {
                for (i, t) in v.spec.tasks.iter_mut().enumerate() {
                    out.push((
                        format!("spec.tasks[{i}].template.spec"),
                        &mut t.template.spec,
                    ));
                }
            }
            Body::Lws(l) => {
                let t = &mut l.spec.leader_worker_template;
                if let Some(lt) = &mut t.leader_template {
                    out.push((
                        "spec.leaderWorkerTemplate.leaderTemplate.spec".into(),
                        &mut lt.spec,
                    ));
                }
                out.push((
                    "spec.leaderWorkerTemplate.workerTemplate.spec".into(),
                    &mut t.worker_template.spec,
                ));
            }
            Body::RayCluster(r) => ray_specs(&mut r.spec, "spec", &mut out),
            Body::RayJob(r) => {
                if let Some(c) = &mut r.spec.ray_cluster_spec {
                    ray_specs(c, "spec.rayClusterSpec", &mut out);
                }
                if let Some(t) = &mut r.spec.submitter_pod_template {
                    out.push(("spec.submitterPodTemplate.spec".into(), &mut t.spec));
                }
            }
            _ => {}
        }
        out
    }

    /// (namespace, name) of the object.
    pub(crate) fn names(&self) -> Option<(&str, &str)> {
        match self {
            Body::Node(o) => Some(("", o.metadata.name.as_str())),
            other => other
                .meta()
                .map(|m| (m.namespace.as_str(), m.name.as_str())),
        }
    }

    pub(crate) fn meta(&self) -> Option<&Meta> {
        Some(match self {
            Body::Pod(o) => &o.metadata,
            Body::Topology(o) => &o.metadata,
            Body::Flavor(o) => &o.metadata,
            Body::PodGroup(_, o) => &o.metadata,
            Body::Job(o) => &o.metadata,
            Body::JobSet(o) => &o.metadata,
            Body::Kubeflow(_, o) => &o.metadata,
            Body::VolcanoJob(o) => &o.metadata,
            Body::PriorityClass(o) => &o.metadata,
            Body::WorkloadPriorityClass(o) => &o.metadata,
            Body::Lws(o) => &o.metadata,
            Body::RayCluster(o) => &o.metadata,
            Body::RayJob(o) => &o.metadata,
            Body::AppWrapper(o) => &o.metadata,
            Body::LimitRange(o) => &o.metadata,
            Body::RuntimeClass(o) => &o.metadata,
            Body::Node(_) | Body::Other => return None,
        })
    }
}

fn ray_specs<'a>(spec: &'a mut RayClusterSpec, f: &str, out: &mut Vec<(String, &'a mut PodSpec)>) {
    out.push((
        format!("{f}.headGroupSpec.template.spec"),
        &mut spec.head_group_spec.template.spec,
    ));
    for (i, g) in spec.worker_group_specs.iter_mut().enumerate() {
        out.push((
            format!("{f}.workerGroupSpecs[{i}].template.spec"),
            &mut g.template.spec,
        ));
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Node,
    Pod,
    Topology,
    Flavor,
    PodGroup(PodGroupKind),
    Job,
    JobSet,
    Kubeflow(KubeflowKind),
    VolcanoJob,
    /// `scheduling.k8s.io` `PriorityClass`.
    Priority,
    /// Kueue's `WorkloadPriorityClass`.
    WorkloadPriority,
    Lws,
    RayCluster,
    RayJob,
    AppWrapper,
    LimitRange,
    Runtime,
    Other,
}

pub(crate) fn classify(api_version: &str, kind: &str) -> Class {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    match (group, kind) {
        ("", "Node") => Class::Node,
        ("", "Pod") => Class::Pod,
        ("kueue.x-k8s.io" | "kai.scheduler", "Topology") => Class::Topology,
        ("kueue.x-k8s.io", "ResourceFlavor") => Class::Flavor,
        ("kueue.x-k8s.io", "WorkloadPriorityClass") => Class::WorkloadPriority,
        ("scheduling.k8s.io", "PodGroup") => Class::PodGroup(PodGroupKind::Native),
        ("scheduling.volcano.sh", "PodGroup") => Class::PodGroup(PodGroupKind::Volcano),
        ("scheduling.x-k8s.io" | "scheduling.sigs.k8s.io", "PodGroup") => {
            Class::PodGroup(PodGroupKind::Coscheduling)
        }
        ("scheduling.run.ai", "PodGroup") => Class::PodGroup(PodGroupKind::Kai),
        ("batch", "Job") => Class::Job,
        ("jobset.x-k8s.io", "JobSet") => Class::JobSet,
        ("kubeflow.org", "PyTorchJob") => Class::Kubeflow(KubeflowKind::PyTorch),
        ("kubeflow.org", "MPIJob") => Class::Kubeflow(KubeflowKind::Mpi),
        ("kubeflow.org", "TFJob") => Class::Kubeflow(KubeflowKind::Tf),
        ("kubeflow.org", "JAXJob") => Class::Kubeflow(KubeflowKind::Jax),
        ("kubeflow.org", "XGBoostJob") => Class::Kubeflow(KubeflowKind::XgBoost),
        ("kubeflow.org", "PaddleJob") => Class::Kubeflow(KubeflowKind::Paddle),
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => Class::Lws,
        ("ray.io", "RayCluster") => Class::RayCluster,
        ("ray.io", "RayJob") => Class::RayJob,
        ("workload.codeflare.dev", "AppWrapper") => Class::AppWrapper,
        ("", "LimitRange") => Class::LimitRange,
        ("node.k8s.io", "RuntimeClass") => Class::Runtime,
        ("batch.volcano.sh", "Job") => Class::VolcanoJob,
        ("scheduling.k8s.io", "PriorityClass") => Class::Priority,
        _ => Class::Other,
    }
}

/// How to read one object's text (JSON) or value (YAML) into `T`, with the field path
/// of the first error.
trait Reader {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)>;
}

struct JsonReader<'a>(&'a str);
struct ValueReader<'a>(&'a serde_json::Value);

impl Reader for JsonReader<'_> {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)> {
        serde_json::from_str(self.0).map_err(|_| {
            // The slow path, only on error: redo it tracking the path.
            let mut de = serde_json::Deserializer::from_str(self.0);
            match serde_path_to_error::deserialize::<_, T>(&mut de) {
                Ok(_) => (String::new(), "malformed".to_owned()),
                Err(e) => (e.path().to_string(), e.inner().to_string()),
            }
        })
    }
}

impl Reader for ValueReader<'_> {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)> {
        T::deserialize(self.0).map_err(|_| match serde_path_to_error::deserialize::<_, T>(self.0) {
            Ok(_) => (String::new(), "malformed".to_owned()),
            Err(e) => (e.path().to_string(), e.inner().to_string()),
        })
    }
}

impl Class {
    pub(crate) fn json(self, raw: &str) -> Result<Body, (String, String)> {
        self.body(&JsonReader(raw))
    }
    pub(crate) fn value(self, v: &serde_json::Value) -> Result<Body, (String, String)> {
        self.body(&ValueReader(v))
    }
    fn body(self, r: &impl Reader) -> Result<Body, (String, String)> {
        Ok(match self {
            Class::Node => Body::Node(Box::new(r.read()?)),
            Class::Pod => Body::Pod(Box::new(r.read()?)),
            Class::Topology => Body::Topology(Box::new(r.read()?)),
            Class::Flavor => Body::Flavor(Box::new(r.read()?)),
            Class::PodGroup(k) => Body::PodGroup(
                k,
                // The one place each API's PodGroup becomes the common form.
                Box::new(match k {
                    PodGroupKind::Native => r.read::<scheduling::PodGroup>()?.into(),
                    PodGroupKind::Volcano => r.read::<volcano::PodGroup>()?.into(),
                    PodGroupKind::Coscheduling => r.read::<coscheduling::PodGroup>()?.into(),
                    PodGroupKind::Kai => r.read::<kai::PodGroup>()?.into(),
                }),
            ),
            Class::Job => Body::Job(Box::new(r.read()?)),
            Class::JobSet => Body::JobSet(Box::new(r.read()?)),
            Class::Kubeflow(k) => Body::Kubeflow(k, Box::new(r.read()?)),
            Class::VolcanoJob => Body::VolcanoJob(Box::new(r.read()?)),
            Class::Priority => Body::PriorityClass(Box::new(r.read()?)),
            Class::WorkloadPriority => Body::WorkloadPriorityClass(Box::new(r.read()?)),
            Class::Lws => Body::Lws(Box::new(r.read()?)),
            Class::RayCluster => Body::RayCluster(Box::new(r.read()?)),
            Class::RayJob => Body::RayJob(Box::new(r.read()?)),
            Class::AppWrapper => Body::AppWrapper(Box::new(r.read()?)),
            Class::LimitRange => Body::LimitRange(Box::new(r.read()?)),
            Class::Runtime => Body::RuntimeClass(Box::new(r.read()?)),
            Class::Other => Body::Other,
        })
    }
}
