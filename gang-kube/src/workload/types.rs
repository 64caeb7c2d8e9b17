//! What a workload reads as: the public types of a [`WorkloadGang`] (roles, minimum,
//! topology request, warnings, the checklist).

use std::collections::BTreeMap;

use gang_core::{Gang, Toleration};
use serde::Serialize;

use crate::origin::ObjectRef;
use crate::requests::Resources;

/// Which object a gang was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Framework {
    /// `scheduling.k8s.io` PodGroup (Kubernetes' own gang scheduling) and its pods.
    NativePodGroup,
    /// `scheduling.volcano.sh` PodGroup and its pods.
    VolcanoPodGroup,
    /// `scheduling.x-k8s.io` PodGroup (scheduler-plugins coscheduling) and its pods.
    CoschedulingPodGroup,
    /// `scheduling.run.ai` PodGroup (KAI scheduler) and its pods.
    KaiPodGroup,
    /// `batch/v1` Job.
    Job,
    /// `jobset.x-k8s.io` JobSet.
    JobSet,
    /// Kubeflow `PyTorchJob`.
    PyTorchJob,
    /// Kubeflow `MPIJob`.
    MpiJob,
    /// Kubeflow `TFJob`.
    TfJob,
    /// Volcano `batch.volcano.sh` Job.
    VolcanoJob,
    /// Kubeflow `JAXJob`.
    JaxJob,
    /// Kubeflow `XGBoostJob`.
    XgBoostJob,
    /// Kubeflow `PaddleJob`.
    PaddleJob,
    /// `leaderworkerset.x-k8s.io` LeaderWorkerSet (one group of leader and workers).
    LeaderWorkerSet,
    /// KubeRay `RayCluster`.
    RayCluster,
    /// KubeRay `RayJob` (its `rayClusterSpec`).
    RayJob,
    /// `workload.codeflare.dev` AppWrapper (its components' pod sets).
    AppWrapper,
    /// Kueue plain pods grouped by the `kueue.x-k8s.io/pod-group-name` label.
    KueuePodGroup,
}

/// A topology level as a workload names it: a label key, or a Volcano tier (1 = the
/// innermost label level, resolved against the cluster's topology).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A node label key.
    Key(String),
    /// A Volcano HyperNode tier, counted from the nodes up.
    Tier(u32),
}

/// A level request and the field it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelRequest {
    /// The level.
    pub level: Level,
    /// Where it was read (`spec.template.metadata.annotations.kueue.x-k8s.io/…`).
    pub field: String,
}

/// A slice request and the field it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliceRequest {
    /// The slice level.
    pub level: Level,
    /// Members per slice.
    pub size: u32,
    /// Where it was read.
    pub field: String,
}

/// The workload's topology request, before it is resolved against a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TopologyRequest {
    /// Hard: every constrained member in one domain of this level.
    pub required: Option<LevelRequest>,
    /// Soft: try this level, then walk up.
    pub preferred: Option<LevelRequest>,
    /// Slices, outermost first.
    pub slices: Vec<SliceRequest>,
    /// Further required levels named (a native PodGroup may list several keys); the
    /// innermost of the cluster's levels among them and `required` is used.
    pub also_required: Vec<LevelRequest>,
    /// JobSet `alpha.jobset.sigs.k8s.io/exclusive-topology`: each child Job (`size`
    /// pods) alone in its own domain of `level`; placed as slices of `size`, with
    /// gang-core's spread checking that the Jobs find distinct domains.
    pub exclusive: Option<SliceRequest>,
    /// Kueue PodSets placed each in a domain of its own (PodSets sharing
    /// `kueue.x-k8s.io/podset-group-name` together), in PodSet order, when more than one
    /// asks for a topology; empty otherwise. The fields above are then the largest
    /// part's request (the gang as one, the other parts unconstrained), and
    /// [`Cluster::place`](crate::Cluster::place) places the parts one after another, as
    /// Kueue does, each using what the earlier ones took.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<TopologyPart>,
}

/// Roles Kueue places together in one domain of their request: one PodSet, or the
/// PodSets sharing a `kueue.x-k8s.io/podset-group-name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopologyPart {
    /// The group name, else the role's.
    pub name: String,
    /// The group name, when the PodSets share one.
    pub group: Option<String>,
    /// The roles, in PodSet order.
    pub roles: Vec<String>,
    /// Their request (`parts` empty); no level at all when the PodSets ask for none.
    pub topology: TopologyRequest,
}

/// A label requirement of a member (node affinity `matchExpressions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelRequirement {
    /// Label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In` / `NotIn`.
    pub values: Vec<String>,
}

/// One role of a gang: members with one pod shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberRole {
    /// Role name (replica type, replicated job, task, or a name shared by the pods).
    pub name: String,
    /// Members (pods) of this role.
    pub members: u32,
    /// Elastic minimum, when the group's minimum lets the role run short.
    pub min_count: Option<u32>,
    /// Per-member requests as kube-scheduler counts them, with `pods: 1`.
    pub requests: Resources,
    /// `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity (one term).
    pub requirements: Vec<LabelRequirement>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
    /// Bound by the topology request (false: may run anywhere, still all-or-nothing).
    pub constrained: bool,
    /// Where the shape was read: a template's field path, or `pods`.
    pub from: String,
    /// The member pods of this role found in the input.
    pub pods: Vec<ObjectRef>,
    /// `spec.priority` of the pod template (or the member pods), if set.
    pub priority: Option<i32>,
    /// `spec.priorityClassName` of the pod template (or the member pods), if set.
    pub priority_class_name: Option<String>,
}

/// A PodGroup's own priority, read from the group object (Kubernetes'
/// `scheduling.k8s.io` PodGroup: `spec.priority`, `spec.priorityClassName`,
/// `spec.preemptionPolicy`; Volcano's and KAI's: `spec.priorityClassName`). It gives the
/// group its priority before its pods' ([`Cluster::priority_of`](crate::Cluster::priority_of)),
/// as the scheduler ranks and preempts whole groups by it (KEP-5710).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupPriority {
    /// `spec.priority`, if set (admission sets it from the class).
    pub priority: Option<i32>,
    /// `spec.priorityClassName`, if set.
    pub priority_class_name: Option<String>,
    /// `spec.preemptionPolicy` is `Never`: the group does not preempt (Kubernetes'
    /// meaning); `None` when the field is not set.
    pub never_preempts: Option<bool>,
}

/// Something read that could not be honoured exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The field (dotted path inside the workload object, or a pod).
    pub field: String,
    /// What is not honoured and what is done instead.
    pub message: String,
}

/// The outcome of one debug check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Fine.
    Ok,
    /// Probably fine, but worth a look.
    Warning,
    /// The group cannot become ready this way.
    Error,
}

/// One item of the guides' checklist for a group that never becomes ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable id: `group_object`, `members_found`, `minimum`, `member_shape`,
    /// `gang_scheduler`, `shape_fits`, `exclusive_jobs`.
    pub id: &'static str,
    /// The outcome.
    pub status: CheckStatus,
    /// The role it is about, if one.
    pub role: Option<String>,
    /// One sentence.
    pub message: String,
}

impl Check {
    pub(crate) fn new(id: &'static str, status: CheckStatus, message: impl Into<String>) -> Self {
        Check {
            id,
            status,
            role: None,
            message: message.into(),
        }
    }
    pub(super) fn role(mut self, role: &str) -> Self {
        self.role = Some(role.to_owned());
        self
    }
}

/// A workload read as a gang: its object, roles (member shapes), minimum, topology
/// request, the warnings and checks, and the gang-core [`Gang`] when it can be built
/// from the objects alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadGang {
    /// The group or workload object (for pods naming a group that is not in the input,
    /// a reference to the missing group with an empty source).
    pub object: ObjectRef,
    /// What kind of workload.
    pub framework: Framework,
    /// Whether the group object itself is in the input.
    pub found: bool,
    /// Roles, leaders first (master, chief, launcher, PS), then workers.
    pub roles: Vec<MemberRole>,
    /// Members: pods the controller creates (or, for PodGroups, the pods found).
    pub members: u32,
    /// The group minimum (`minCount`, `minMember`, `minAvailable`), or `members`.
    pub minimum: u32,
    /// The field the minimum was read from (`spec.minMember`), or `members` when the
    /// workload sets none.
    pub minimum_field: String,
    /// The topology request.
    pub topology: TopologyRequest,
    /// Managed by Kueue (a queue-name label or a PodSet topology annotation): its
    /// ResourceFlavor's tolerations apply.
    pub kueue: bool,
    /// The Kueue `WorkloadPriorityClass` the workload object's label
    /// `kueue.x-k8s.io/priority-class` names (for a Kueue pod group, its pods' label),
    /// if any: it gives the workload its priority
    /// ([`Cluster::priority_of`](crate::Cluster::priority_of)).
    pub workload_priority_class: Option<String>,
    /// The PodGroup's own priority fields, when it sets any ([`GroupPriority`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_priority: Option<GroupPriority>,
    /// Every member pod found in the input.
    pub member_pods: Vec<ObjectRef>,
    /// Fields read but not honoured exactly.
    pub warnings: Vec<Warning>,
    /// The checklist.
    pub checks: Vec<Check>,
    /// The gang, when the objects alone define it (members found, minimum within them,
    /// levels given as label keys). [`Cluster::gang_for`](crate::Cluster::gang_for)
    /// builds it against a cluster in every case that can be placed.
    pub gang: Option<Gang>,
}

impl WorkloadGang {
    /// `Kind/namespace/name` of the workload. See [`WorkloadGang`].
    pub fn name(&self) -> String {
        self.object.to_string()
    }

    /// Whether this is the workload a command names as kubectl does: `kind/name`
    /// (`job/train`, `pytorchjobs/llama-ft`, `PodGroup/training-workers`; kind in any
    /// case, singular or plural) or a bare name, in `namespace` if one is given.
    ///
    /// ```
    /// use gang_kube::{workloads, Objects};
    /// let o = Objects::parse("j.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\n")?;
    /// let w = &workloads(&o)?[0];
    /// assert!(w.is("job/train", Some("ml")) && w.is("jobs/train", None) && w.is("train", None));
    /// assert!(!w.is("job/train", Some("default")) && !w.is("pytorchjob/train", None));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn is(&self, reference: &str, namespace: Option<&str>) -> bool {
        if let Some(ns) = namespace {
            if self.object.namespace.as_deref().unwrap_or("") != ns {
                return false;
            }
        }
        match reference.split_once('/') {
            None => self.object.name == reference,
            Some((kind, name)) => {
                let kind = kind.to_ascii_lowercase();
                let own = self.object.kind.to_ascii_lowercase();
                let group_kind = kind.split_once('.').map_or(kind.as_str(), |(k, _)| k);
                (group_kind == own || group_kind == format!("{own}s")) && self.object.name == name
            }
        }
    }
}
