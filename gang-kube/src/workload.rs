//! Workload objects → gangs: PodGroups with their member pods, and Jobs, JobSets,
//! Kubeflow and Volcano jobs with their pod templates as roles.

use std::collections::{BTreeMap, HashMap, HashSet};

use gang_core::request::Requirement;
use gang_core::{Gang, Quantity, Role, Toleration};
use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::model::{
    KubeflowObj, Meta, NetworkTopology, Pod, PodGroupObj, PodSpec, PodTemplate, VolcanoJobObj,
};
use crate::objects::{object_label, Body, KubeflowKind, ObjectRef, Objects, Origin, PodGroupKind};
use crate::requests::{pod_requests, Resources};

/// Kueue's PodSet topology annotations (on pod templates).
pub mod kueue {
    /// Every pod of the PodSet in one domain of this level.
    pub const REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
    /// Try one domain of this level, then walk up.
    pub const PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
    /// `"true"`: no topology requirement (still counted by TAS).
    pub const UNCONSTRAINED: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
    /// Each slice of the PodSet in one domain of this level.
    pub const SLICE_REQUIRED: &str = "kueue.x-k8s.io/podset-slice-required-topology";
    /// Pods per slice (with [`SLICE_REQUIRED`]).
    pub const SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
    /// Multi-layer slices: `[{"topology": level, "size": n}, …]`, outermost first.
    pub const SLICE_CONSTRAINTS: &str = "kueue.x-k8s.io/podset-slice-required-topology-constraints";
    /// PodSets with the same group name share one flavor and topology domain.
    pub const GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";
    /// The LocalQueue (a label on the workload).
    pub const QUEUE_NAME: &str = "kueue.x-k8s.io/queue-name";
    /// Partial admission: the least parallelism a Job may run with.
    pub const JOB_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";
}

/// KAI scheduler's topology annotations (on the workload object).
pub mod kai {
    /// The Topology object the constraint refers to.
    pub const TOPOLOGY: &str = "kai.scheduler/topology";
    /// Every pod inside one domain of this level.
    pub const REQUIRED: &str = "kai.scheduler/topology-required-placement";
    /// Preferably inside one domain of this level.
    pub const PREFERRED: &str = "kai.scheduler/topology-preferred-placement";
    /// Pod annotation naming its KAI PodGroup.
    pub const POD_GROUP_ANNOTATION: &str = "pod-group-name";
}

/// Pod label naming a scheduler-plugins (coscheduling) PodGroup.
pub const COSCHEDULING_LABEL: &str = "scheduling.x-k8s.io/pod-group";
/// Pod annotation naming a Volcano PodGroup.
pub const VOLCANO_GROUP_ANNOTATION: &str = "scheduling.k8s.io/group-name";

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
    /// `gang_scheduler`, `shape_fits`.
    pub id: &'static str,
    /// The outcome.
    pub status: CheckStatus,
    /// The role it is about, if one.
    pub role: Option<String>,
    /// One sentence.
    pub message: String,
}

impl Check {
    fn new(id: &'static str, status: CheckStatus, message: impl Into<String>) -> Self {
        Check {
            id,
            status,
            role: None,
            message: message.into(),
        }
    }
    fn role(mut self, role: &str) -> Self {
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

// ---------------------------------------------------------------------------------------
// Reading pod specs

fn bad(origin: &Origin, field: impl Into<String>, value: impl Into<String>, reason: &str) -> Error {
    Error::new(ErrorKind::InvalidValue, &origin.source, reason.to_owned())
        .at(origin)
        .with_field(field)
        .with_value(value)
}

fn count(origin: &Origin, field: &str, v: Option<i64>, default: u32) -> Result<u32, Error> {
    match v {
        None => Ok(default),
        Some(n) => u32::try_from(n)
            .map_err(|_| bad(origin, field, n.to_string(), "must be a count (0 or more)")),
    }
}

/// A role of `members` pods of `spec` (read at `field`, e.g. `spec.template.spec`).
fn role_from_spec(
    name: &str,
    members: u32,
    spec: &PodSpec,
    origin: &Origin,
    field: &str,
    warnings: &mut Vec<Warning>,
) -> Result<MemberRole, Error> {
    let mut requests = pod_requests(spec, None).map_err(|o| {
        Error::new(
            ErrorKind::InvalidValue,
            &origin.source,
            format!("the requests of {} overflow", o.0),
        )
        .at(origin)
        .with_field(field.to_owned())
    })?;
    requests.retain(|_, q| *q != Quantity::ZERO);
    requests.insert("pods".to_owned(), Quantity::from_units(1));
    let warn = |warnings: &mut Vec<Warning>, f: &str, m: String| {
        warnings.push(Warning {
            field: format!("{field}.{f}"),
            message: m,
        })
    };
    let mut requirements = Vec::new();
    if let Some(na) = &spec.affinity.node_affinity {
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            let terms = &req.node_selector_terms;
            if terms.len() > 1 {
                warn(
                    warnings,
                    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                    format!(
                        "{} node selector terms are alternatives (OR); gang-core takes one set of requirements: only the first term is used, so fewer nodes may be eligible",
                        terms.len()
                    ),
                );
            }
            if let Some(term) = terms.first() {
                let tf = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
                for (i, e) in term.match_expressions.iter().enumerate() {
                    match e.operator.as_str() {
                        "In" | "NotIn" | "Exists" | "DoesNotExist" => {
                            requirements.push(LabelRequirement {
                                key: e.key.clone(),
                                operator: e.operator.clone(),
                                values: e.values.clone(),
                            })
                        }
                        "Gt" | "Lt" => warn(
                            warnings,
                            &format!("{tf}.matchExpressions[{i}]"),
                            format!(
                                "{} {} {:?} is not expressible in gang-core and is not applied (more nodes may look eligible)",
                                e.key, e.operator, e.values
                            ),
                        ),
                        other => {
                            return Err(bad(
                                origin,
                                format!("{field}.{tf}.matchExpressions[{i}].operator"),
                                other,
                                "unknown operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)",
                            ))
                        }
                    }
                }
                if !term.match_fields.is_empty() {
                    warn(
                        warnings,
                        &format!("{tf}.matchFields"),
                        "matchFields (node names) are not applied".into(),
                    );
                }
            }
        }
        if !na
            .preferred_during_scheduling_ignored_during_execution
            .is_empty()
        {
            warn(
                warnings,
                "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                "preferred node affinity is a scoring preference; placement ignores it".into(),
            );
        }
    }
    if spec.affinity.pod_affinity.is_some() || spec.affinity.pod_anti_affinity.is_some() {
        warn(
            warnings,
            "affinity",
            "pod affinity and anti-affinity are not applied; the gang's topology request is".into(),
        );
    }
    if !spec.topology_spread_constraints.is_empty() {
        warn(
            warnings,
            "topologySpreadConstraints",
            "topology spread constraints are not applied".into(),
        );
    }
    if !spec.resource_claims.is_empty() {
        warn(
            warnings,
            "resourceClaims",
            "DRA resource claims are not counted (only node resources are)".into(),
        );
    }
    let mut tolerations = Vec::new();
    for (i, t) in spec.tolerations.iter().enumerate() {
        tolerations.push(
            crate::convert::toleration(t)
                .map_err(|e| e.under(&format!("{field}.tolerations[{i}]")).at(origin))?,
        );
    }
    Ok(MemberRole {
        name: name.to_owned(),
        members,
        min_count: None,
        requests,
        node_selector: spec.node_selector.clone(),
        requirements,
        tolerations,
        constrained: true,
        from: field.to_owned(),
        pods: Vec::new(),
    })
}

// ---------------------------------------------------------------------------------------
// Kueue PodSet annotations

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct KueueReq {
    required: Option<LevelRequest>,
    preferred: Option<LevelRequest>,
    unconstrained: bool,
    slices: Vec<SliceRequest>,
    group: Option<String>,
    any: bool,
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn level_value(origin: &Origin, field: &str, v: &str) -> Result<Level, Error> {
    let ok = !v.is_empty()
        && v.len() <= 316
        && !v.contains(char::is_whitespace)
        && v.rsplit('/').next().is_some_and(|n| !n.is_empty());
    if ok {
        Ok(Level::Key(v.to_owned()))
    } else {
        Err(bad(
            origin,
            field,
            v,
            "not a topology level (a node label key)",
        ))
    }
}

fn kueue_req(meta: &Meta, origin: &Origin, prefix: &str) -> Result<KueueReq, Error> {
    let a = &meta.annotations;
    let f = |k: &str| format!("{prefix}.annotations.{k}");
    let mut r = KueueReq::default();
    if let Some(v) = a.get(kueue::REQUIRED) {
        r.required = Some(LevelRequest {
            level: level_value(origin, &f(kueue::REQUIRED), v)?,
            field: f(kueue::REQUIRED),
        });
    }
    if let Some(v) = a.get(kueue::PREFERRED) {
        r.preferred = Some(LevelRequest {
            level: level_value(origin, &f(kueue::PREFERRED), v)?,
            field: f(kueue::PREFERRED),
        });
    }
    if let Some(v) = a.get(kueue::UNCONSTRAINED) {
        r.unconstrained = parse_bool(v)
            .ok_or_else(|| bad(origin, f(kueue::UNCONSTRAINED), v, "must be true or false"))?;
    }
    let exclusive = [
        r.required.is_some(),
        r.preferred.is_some(),
        a.contains_key(kueue::UNCONSTRAINED),
    ];
    if exclusive.iter().filter(|x| **x).count() > 1 {
        let v = a
            .get(kueue::PREFERRED)
            .or(a.get(kueue::UNCONSTRAINED))
            .cloned()
            .unwrap_or_default();
        let field = if a.contains_key(kueue::PREFERRED) && r.required.is_some() {
            f(kueue::PREFERRED)
        } else {
            f(kueue::UNCONSTRAINED)
        };
        return Err(bad(
            origin,
            field,
            v,
            "the required, preferred and unconstrained topology annotations are mutually exclusive",
        ));
    }
    match (a.get(kueue::SLICE_REQUIRED), a.get(kueue::SLICE_SIZE)) {
        (Some(level), Some(size)) => {
            let n: u32 = size.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                bad(
                    origin,
                    f(kueue::SLICE_SIZE),
                    size,
                    "must be a whole number of pods, 1 or more",
                )
            })?;
            r.slices.push(SliceRequest {
                level: level_value(origin, &f(kueue::SLICE_REQUIRED), level)?,
                size: n,
                field: f(kueue::SLICE_REQUIRED),
            });
        }
        (Some(level), None) => {
            return Err(bad(
                origin,
                f(kueue::SLICE_SIZE),
                "",
                &format!("required with {} ({level})", kueue::SLICE_REQUIRED),
            ))
        }
        (None, Some(size)) => {
            return Err(bad(
                origin,
                f(kueue::SLICE_SIZE),
                size,
                &format!("cannot be set without {}", kueue::SLICE_REQUIRED),
            ))
        }
        (None, None) => {}
    }
    if let Some(text) = a.get(kueue::SLICE_CONSTRAINTS) {
        let field = f(kueue::SLICE_CONSTRAINTS);
        if !r.slices.is_empty() {
            return Err(bad(
                origin,
                field,
                text,
                "mutually exclusive with podset-slice-required-topology and podset-slice-size",
            ));
        }
        #[derive(serde::Deserialize)]
        struct C {
            topology: String,
            size: serde_json::Value,
        }
        let layers: Vec<C> = serde_json::from_str(text).map_err(|e| {
            bad(
                origin,
                &field,
                text,
                &format!("not a JSON list of {{\"topology\", \"size\"}}: {e}"),
            )
        })?;
        for (i, c) in layers.iter().enumerate() {
            let size = match &c.size {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s) => s.parse().ok(),
                _ => None,
            }
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                bad(
                    origin,
                    format!("{field}[{i}].size"),
                    c.size.to_string(),
                    "must be a whole number of pods, 1 or more",
                )
            })?;
            r.slices.push(SliceRequest {
                level: level_value(origin, &format!("{field}[{i}].topology"), &c.topology)?,
                size,
                field: format!("{field}[{i}]"),
            });
        }
    }
    r.group = a.get(kueue::GROUP_NAME).cloned();
    r.any = r.required.is_some()
        || r.preferred.is_some()
        || a.contains_key(kueue::UNCONSTRAINED)
        || !r.slices.is_empty();
    Ok(r)
}

/// One topology request for the gang from per-role Kueue requests; roles whose request
/// differs become unconstrained, with a warning.
fn combine_kueue(
    roles: &mut [MemberRole],
    reqs: &[KueueReq],
    warnings: &mut Vec<Warning>,
) -> TopologyRequest {
    let constrained: Vec<usize> = (0..roles.len())
        .filter(|&i| {
            reqs[i].required.is_some() || reqs[i].preferred.is_some() || !reqs[i].slices.is_empty()
        })
        .collect();
    let Some(&dominant) = constrained
        .iter()
        .max_by_key(|&&i| (roles[i].members, usize::MAX - i))
    else {
        return TopologyRequest::default();
    };
    let d = &reqs[dominant];
    let same_levels = |r: &KueueReq| {
        r.required.as_ref().map(|l| &l.level) == d.required.as_ref().map(|l| &l.level)
            && r.preferred.as_ref().map(|l| &l.level) == d.preferred.as_ref().map(|l| &l.level)
    };
    let same_slices = |r: &KueueReq| {
        r.slices.len() == d.slices.len()
            && r.slices
                .iter()
                .zip(&d.slices)
                .all(|(a, b)| a.level == b.level && a.size == b.size)
    };
    let describe = |r: &KueueReq| -> String {
        let mut parts = Vec::new();
        if let Some(l) = &r.required {
            parts.push(format!("required {}", show_level(&l.level)));
        }
        if let Some(l) = &r.preferred {
            parts.push(format!("preferred {}", show_level(&l.level)));
        }
        for s in &r.slices {
            parts.push(format!("slices of {} in {}", s.size, show_level(&s.level)));
        }
        parts.join(", ")
    };
    let mut together = Vec::new();
    for i in 0..roles.len() {
        let r = &reqs[i];
        if constrained.contains(&i) && same_levels(r) && same_slices(r) {
            together.push(i);
            continue;
        }
        roles[i].constrained = false;
        if constrained.contains(&i) {
            let field = r
                .required
                .as_ref()
                .or(r.preferred.as_ref())
                .map(|l| l.field.clone())
                .or_else(|| r.slices.first().map(|s| s.field.clone()))
                .unwrap_or_default();
            warnings.push(Warning {
                field,
                message: format!(
                    "role {} asks for {}, role {} for {}; a gang has one topology request, so {} is placed anywhere (still all-or-nothing)",
                    roles[i].name,
                    describe(r),
                    roles[dominant].name,
                    describe(d),
                    roles[i].name
                ),
            });
        }
    }
    if together.len() > 1 {
        let groups: HashSet<Option<&String>> =
            together.iter().map(|&i| reqs[i].group.as_ref()).collect();
        if groups.len() > 1 || groups.contains(&None) {
            let names: Vec<&str> = together.iter().map(|&i| roles[i].name.as_str()).collect();
            warnings.push(Warning {
                field: d
                    .required
                    .as_ref()
                    .or(d.preferred.as_ref())
                    .map(|l| l.field.clone())
                    .unwrap_or_default(),
                message: format!(
                    "Kueue fits each of the PodSets {} in its own domain unless they share {}; gang-core places them in one domain together (stricter)",
                    names.join(", "),
                    kueue::GROUP_NAME
                ),
            });
        }
    }
    TopologyRequest {
        required: d.required.clone(),
        preferred: d.preferred.clone(),
        slices: d.slices.clone(),
        also_required: Vec::new(),
    }
}

fn show_level(l: &Level) -> String {
    match l {
        Level::Key(k) => k.clone(),
        Level::Tier(t) => format!("tier {t}"),
    }
}

fn kai_request(meta: &Meta, origin: &Origin) -> Result<Option<TopologyRequest>, Error> {
    let a = &meta.annotations;
    let f = |k: &str| format!("metadata.annotations.{k}");
    let required = match a.get(kai::REQUIRED) {
        Some(v) => Some(LevelRequest {
            level: level_value(origin, &f(kai::REQUIRED), v)?,
            field: f(kai::REQUIRED),
        }),
        None => None,
    };
    let preferred = match a.get(kai::PREFERRED) {
        Some(v) => Some(LevelRequest {
            level: level_value(origin, &f(kai::PREFERRED), v)?,
            field: f(kai::PREFERRED),
        }),
        None => None,
    };
    if required.is_none() && preferred.is_none() {
        return Ok(None);
    }
    Ok(Some(TopologyRequest {
        required,
        preferred,
        ..TopologyRequest::default()
    }))
}

fn volcano_request(
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

// ---------------------------------------------------------------------------------------
// Minimums

/// Spreads a group minimum over roles: the shortfall is taken from the largest role
/// first (workers; a launcher or master of one stays whole), then the next.
fn spread_minimum(
    roles: &mut [MemberRole],
    minimum: u32,
    field: &str,
    warnings: &mut Vec<Warning>,
) {
    let total: u32 = roles.iter().map(|r| r.members).sum();
    if minimum >= total {
        return;
    }
    let mut deficit = total - minimum;
    let mut order: Vec<usize> = (0..roles.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(roles[i].members), std::cmp::Reverse(i)));
    for i in order {
        if deficit == 0 {
            break;
        }
        let take = deficit.min(roles[i].members);
        roles[i].min_count = Some(roles[i].members - take);
        deficit -= take;
    }
    if roles.len() > 1 {
        let spread: Vec<String> = roles
            .iter()
            .map(|r| format!("{} ≥ {}", r.name, r.min_count.unwrap_or(r.members)))
            .collect();
        warnings.push(Warning {
            field: field.to_owned(),
            message: format!(
                "group minimum {minimum} of {total} spread over roles as {} (gang-core keeps a minimum per role; the scheduler accepts any {minimum} members)",
                spread.join(", ")
            ),
        });
    }
}

// ---------------------------------------------------------------------------------------
// Gangs

/// The gang for `roles` and `topology`, with levels resolved by `resolve`.
pub(crate) fn build_gang(
    name: &str,
    roles: &[MemberRole],
    required: Option<&str>,
    preferred: Option<&str>,
    slices: &[(String, u32)],
    extra_tolerations: &[Toleration],
) -> Gang {
    let mut gang = Gang::new(name);
    for r in roles {
        let mut role = Role::new(r.name.clone(), r.members);
        if let Some(m) = r.min_count {
            role = role.min_count(m);
        }
        for (k, v) in &r.requests {
            role = role.request(k.clone(), *v);
        }
        for (k, v) in &r.node_selector {
            role = role.selector(k.clone(), v.clone());
        }
        for q in &r.requirements {
            role = role.requirement(match q.operator.as_str() {
                "In" => Requirement::is_in(q.key.clone(), q.values.iter().cloned()),
                "NotIn" => Requirement::not_in(q.key.clone(), q.values.iter().cloned()),
                "Exists" => Requirement::exists(q.key.clone()),
                _ => Requirement::does_not_exist(q.key.clone()),
            });
        }
        for t in r.tolerations.iter().chain(extra_tolerations) {
            role = role.toleration(t.clone());
        }
        if !r.constrained {
            role = role.unconstrained();
        }
        gang = gang.role(role);
    }
    if let Some(l) = required {
        gang = gang.required(l);
    }
    if let Some(l) = preferred {
        gang = gang.preferred(l);
    }
    for (l, size) in slices {
        gang = gang.slice(l.clone(), *size);
    }
    gang
}

fn key_of(l: &Option<LevelRequest>) -> Result<Option<&str>, ()> {
    match l {
        None => Ok(None),
        Some(LevelRequest {
            level: Level::Key(k),
            ..
        }) => Ok(Some(k)),
        Some(_) => Err(()),
    }
}

fn standalone_gang(w: &WorkloadGang) -> Option<Gang> {
    if w.members == 0 || w.minimum > w.members || w.roles.is_empty() {
        return None;
    }
    let required = key_of(&w.topology.required).ok()?;
    let preferred = key_of(&w.topology.preferred).ok()?;
    let mut slices = Vec::new();
    for s in &w.topology.slices {
        match &s.level {
            Level::Key(k) => slices.push((k.clone(), s.size)),
            Level::Tier(_) => return None,
        }
    }
    Some(build_gang(
        &w.object.name,
        &w.roles,
        required,
        preferred,
        &slices,
        &[],
    ))
}

// ---------------------------------------------------------------------------------------
// The checklist

fn shape_text(r: &Resources) -> String {
    let parts: Vec<String> = r
        .iter()
        .map(|(k, v)| format!("{k} {}", v.human(k)))
        .collect();
    parts.join(", ")
}

fn finish(mut w: WorkloadGang, min_field: &str) -> WorkloadGang {
    // 2. members vs minimum (members, not GPUs)
    let total_gpus: u64 = w
        .roles
        .iter()
        .map(|r| {
            r.requests
                .iter()
                .filter(|(k, _)| k.ends_with("/gpu"))
                .map(|(_, q)| q.millis() / 1000)
                .sum::<u64>()
                * u64::from(r.members)
        })
        .sum();
    let gpus = if total_gpus > 0 {
        format!(" ({total_gpus} GPUs: members are pods, not GPUs)")
    } else {
        String::new()
    };
    let min_check = if w.members == 0 {
        None
    } else if w.minimum > w.members {
        Some(Check::new(
            "minimum",
            CheckStatus::Error,
            format!(
                "{min_field} {} is more than the {} members{gpus}: the group can never become ready",
                w.minimum, w.members
            ),
        ))
    } else if w.minimum < w.members {
        Some(Check::new(
            "minimum",
            CheckStatus::Warning,
            format!(
                "{min_field} {} of {} members{gpus}: the group may start short; only safe if the application and its controller are elastic",
                w.minimum, w.members
            ),
        ))
    } else {
        Some(Check::new(
            "minimum",
            CheckStatus::Ok,
            format!("{min_field} {} = {} members{gpus}", w.minimum, w.members),
        ))
    };
    w.checks.extend(min_check);
    // 3. per-member shape
    for r in &w.roles {
        let only_pods = r.requests.keys().all(|k| k == "pods");
        let (status, extra) = if only_pods {
            (
                CheckStatus::Warning,
                ": requests no resources, so any node fits it (are requests set on its containers?)",
            )
        } else {
            (CheckStatus::Ok, "")
        };
        w.checks.push(
            Check::new(
                "member_shape",
                status,
                format!(
                    "{} × {}: {} per member{extra}",
                    r.members,
                    r.name,
                    shape_text(&r.requests)
                ),
            )
            .role(&r.name),
        );
    }
    w.gang = standalone_gang(&w);
    w
}

// ---------------------------------------------------------------------------------------
// PodGroups and their pods

fn pod_group_refs(p: &Pod) -> Vec<(PodGroupKind, &str)> {
    let mut out = Vec::new();
    if !p.spec.scheduling_group.pod_group_name.is_empty() {
        out.push((
            PodGroupKind::Native,
            p.spec.scheduling_group.pod_group_name.as_str(),
        ));
    }
    let m = &p.metadata;
    if let Some(v) = m
        .annotations
        .get(VOLCANO_GROUP_ANNOTATION)
        .or(m.annotations.get("volcano.sh/group-name"))
    {
        out.push((PodGroupKind::Volcano, v.as_str()));
    }
    if let Some(v) = m
        .labels
        .get(COSCHEDULING_LABEL)
        .or(m.labels.get("pod-group.scheduling.sigs.k8s.io"))
    {
        out.push((PodGroupKind::Coscheduling, v.as_str()));
    }
    if let Some(v) = m
        .annotations
        .get(kai::POD_GROUP_ANNOTATION)
        .or(m.labels.get(kai::POD_GROUP_ANNOTATION))
    {
        out.push((PodGroupKind::Kai, v.as_str()));
    }
    out
}

fn membership(kind: PodGroupKind) -> &'static str {
    match kind {
        PodGroupKind::Native => "spec.schedulingGroup.podGroupName",
        PodGroupKind::Volcano => "annotation scheduling.k8s.io/group-name",
        PodGroupKind::Coscheduling => "label scheduling.x-k8s.io/pod-group",
        PodGroupKind::Kai => "annotation pod-group-name",
    }
}

fn framework_of(kind: PodGroupKind) -> Framework {
    match kind {
        PodGroupKind::Native => Framework::NativePodGroup,
        PodGroupKind::Volcano => Framework::VolcanoPodGroup,
        PodGroupKind::Coscheduling => Framework::CoschedulingPodGroup,
        PodGroupKind::Kai => Framework::KaiPodGroup,
    }
}

/// A name the pods of a role share: a role label, or their common name prefix.
fn role_name(pods: &[(&Pod, &Origin)]) -> String {
    const HINTS: [&str; 5] = [
        "training.kubeflow.org/replica-type",
        "jobset.sigs.k8s.io/replicatedjob-name",
        "volcano.sh/task-spec",
        "app.kubernetes.io/component",
        "role",
    ];
    for h in HINTS {
        let values: HashSet<Option<&String>> = pods
            .iter()
            .map(|(p, _)| p.metadata.labels.get(h).or(p.metadata.annotations.get(h)))
            .collect();
        if values.len() == 1 {
            if let Some(Some(v)) = values.into_iter().next() {
                return v.to_lowercase();
            }
        }
    }
    let names: Vec<&str> = pods.iter().map(|(p, _)| p.metadata.name.as_str()).collect();
    let mut prefix = names.first().copied().unwrap_or_default().to_owned();
    for n in &names[1.min(names.len())..] {
        while !n.starts_with(prefix.as_str()) {
            prefix.pop();
        }
    }
    let trimmed = prefix.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
    if trimmed.is_empty() {
        "member".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Roles from member pods, one per distinct shape, in the order first seen.
fn roles_from_pods(
    pods: &[(&Pod, &Origin)],
    warnings: &mut Vec<Warning>,
) -> Result<Vec<MemberRole>, Error> {
    let mut groups: Vec<(MemberRole, Vec<(&Pod, &Origin)>)> = Vec::new();
    for &(p, o) in pods {
        let mut w = Vec::new();
        let r = role_from_spec("", 1, &p.spec, o, "spec", &mut w)?;
        for x in w {
            warnings.push(Warning {
                field: format!("{}: {}", o.object, x.field),
                message: x.message,
            });
        }
        match groups.iter_mut().find(|(g, _)| {
            g.requests == r.requests
                && g.node_selector == r.node_selector
                && g.requirements == r.requirements
                && g.tolerations == r.tolerations
        }) {
            Some((g, members)) => {
                g.members += 1;
                members.push((p, o));
            }
            None => groups.push((r, vec![(p, o)])),
        }
    }
    let mut roles = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for (mut r, members) in groups {
        let mut name = role_name(&members);
        let mut n = 2;
        while used.contains(&name) {
            name = format!("{}-{n}", role_name(&members));
            n += 1;
        }
        used.insert(name.clone());
        r.name = name;
        r.from = "pods".into();
        r.pods = members.iter().map(|(_, o)| o.to_ref()).collect();
        roles.push(r);
    }
    Ok(roles)
}

fn pod_group(
    kind: PodGroupKind,
    pg: Option<&PodGroupObj>,
    object: ObjectRef,
    origin: Option<&Origin>,
    members: &[(&Pod, &Origin)],
) -> Result<WorkloadGang, Error> {
    let mut warnings = Vec::new();
    let mut checks = Vec::new();
    let mut roles = roles_from_pods(members, &mut warnings)?;
    let n: u32 = roles.iter().map(|r| r.members).sum();
    let label = object.to_string();
    match origin {
        Some(_) => checks.push(Check::new(
            "group_object",
            CheckStatus::Ok,
            format!("{label} found"),
        )),
        None => checks.push(Check::new(
            "group_object",
            CheckStatus::Error,
            format!(
                "{label} is not in the input, but {n} pod(s) name it ({}): create it, or check its name and namespace",
                membership(kind)
            ),
        )),
    }
    checks.push(if n == 0 {
        Check::new(
            "members_found",
            CheckStatus::Error,
            format!(
                "no member pods found: the workload controller must create pods in namespace {} with {} = {}",
                object.namespace.as_deref().unwrap_or("default"),
                membership(kind),
                object.name
            ),
        )
    } else {
        Check::new(
            "members_found",
            CheckStatus::Ok,
            format!("{n} member pod(s) found ({})", membership(kind)),
        )
    });
    let mut topology = TopologyRequest::default();
    let mut minimum = n;
    let mut min_field = "members".to_owned();
    if let (Some(pg), Some(origin)) = (pg, origin) {
        let s = &pg.spec;
        match kind {
            PodGroupKind::Native => {
                min_field = "spec.schedulingPolicy.gang.minCount".into();
                match s.scheduling_policy.gang.as_ref().and_then(|g| g.min_count) {
                    Some(m) => minimum = count(origin, &min_field, Some(m), 0)?,
                    None => warnings.push(Warning {
                        field: "spec.schedulingPolicy".into(),
                        message: "no gang policy (schedulingPolicy.gang.minCount): the pods are scheduled one by one; read here as all members".into(),
                    }),
                }
                let keys = &s.scheduling_constraints.topology;
                for (i, k) in keys.iter().enumerate() {
                    let field = format!("spec.schedulingConstraints.topology[{i}].key");
                    let req = LevelRequest {
                        level: level_value(origin, &field, &k.key)?,
                        field,
                    };
                    if topology.required.is_none() {
                        topology.required = Some(req);
                    } else {
                        topology.also_required.push(req);
                    }
                }
            }
            PodGroupKind::Volcano | PodGroupKind::Coscheduling | PodGroupKind::Kai => {
                min_field = "spec.minMember".into();
                if let Some(m) = s.min_member {
                    minimum = count(origin, &min_field, Some(m), 0)?;
                }
                if !s.min_resources.is_empty() {
                    warnings.push(Warning {
                        field: "spec.minResources".into(),
                        message: "minResources (an aggregate the scheduler checks first) is not applied; each member's own shape is".into(),
                    });
                }
                if !s.min_task_member.is_empty() {
                    for (task, m) in &s.min_task_member {
                        let m = count(origin, &format!("spec.minTaskMember.{task}"), Some(*m), 0)?;
                        match roles.iter_mut().find(|r| r.name == task.to_lowercase()) {
                            Some(r) => {
                                r.min_count = Some(m.min(r.members));
                            }
                            None => warnings.push(Warning {
                                field: format!("spec.minTaskMember.{task}"),
                                message: format!("no role named {task} among the member pods (volcano.sh/task-spec); not applied"),
                            }),
                        }
                    }
                }
                if let Some(nt) = &s.network_topology {
                    topology = volcano_request(nt, origin, "spec.networkTopology", &mut warnings)?;
                }
                if let Some(tc) = &s.topology_constraint {
                    let f = "spec.topologyConstraint";
                    if !tc.required_topology_level.is_empty() {
                        topology.required = Some(LevelRequest {
                            level: level_value(
                                origin,
                                &format!("{f}.requiredTopologyLevel"),
                                &tc.required_topology_level,
                            )?,
                            field: format!("{f}.requiredTopologyLevel"),
                        });
                    }
                    if !tc.preferred_topology_level.is_empty() {
                        topology.preferred = Some(LevelRequest {
                            level: level_value(
                                origin,
                                &format!("{f}.preferredTopologyLevel"),
                                &tc.preferred_topology_level,
                            )?,
                            field: format!("{f}.preferredTopologyLevel"),
                        });
                    }
                }
                if !s.sub_groups.is_empty() || !s.sub_group_policy.is_empty() {
                    warnings.push(Warning {
                        field: if s.sub_groups.is_empty() { "spec.subGroupPolicy" } else { "spec.subGroups" }.into(),
                        message: "sub-groups (their own minimums and topology) are not applied; the group as a whole is".into(),
                    });
                }
            }
        }
    }
    if minimum < n && roles.iter().all(|r| r.min_count.is_none()) {
        spread_minimum(&mut roles, minimum, &min_field, &mut warnings);
    }
    let member_pods = members.iter().map(|(_, o)| o.to_ref()).collect();
    let w = WorkloadGang {
        object,
        framework: framework_of(kind),
        found: origin.is_some(),
        roles,
        members: n,
        minimum,
        minimum_field: min_field.clone(),
        topology,
        kueue: false,
        member_pods,
        warnings,
        checks,
        gang: None,
    };
    Ok(finish(w, &min_field))
}

// ---------------------------------------------------------------------------------------
// Controller workloads

fn owned_pods<'a>(
    pods: &[(&'a Pod, &'a Origin)],
    kind: &str,
    namespace: &str,
    name: &str,
) -> Vec<ObjectRef> {
    pods.iter()
        .filter(|(p, _)| {
            p.metadata.namespace == namespace
                && (p
                    .metadata
                    .owner_references
                    .iter()
                    .any(|o| o.kind == kind && o.name == name)
                    || p.metadata.labels.get("training.kubeflow.org/job-name")
                        == Some(&name.to_owned())
                    || p.metadata.labels.get("jobset.sigs.k8s.io/jobset-name")
                        == Some(&name.to_owned())
                    || p.metadata.labels.get("volcano.sh/job-name") == Some(&name.to_owned()))
        })
        .map(|(_, o)| o.to_ref())
        .collect()
}

struct Controlled<'a> {
    origin: &'a Origin,
    meta: &'a Meta,
    framework: Framework,
    roles: Vec<MemberRole>,
    kueue_reqs: Vec<KueueReq>,
    minimum: Option<(u32, String)>,
    topology: Option<TopologyRequest>,
    warnings: Vec<Warning>,
}

fn controlled(
    c: Controlled<'_>,
    pods: &[(&Pod, &Origin)],
    owned_groups: &[(PodGroupKind, &PodGroupObj, &Origin)],
) -> Result<WorkloadGang, Error> {
    let Controlled {
        origin,
        meta,
        framework,
        mut roles,
        kueue_reqs,
        minimum,
        topology,
        mut warnings,
    } = c;
    let members: u32 = roles.iter().map(|r| r.members).sum();
    let (min, min_field) = minimum.clone().unwrap_or((members, "members".into()));
    if min > members {
        return Err(Error::new(
            ErrorKind::InvalidMinimum,
            &origin.source,
            format!("more than the {members} members (pods) the workload defines"),
        )
        .at(origin)
        .with_field(min_field)
        .with_value(min.to_string()));
    }
    let is_kueue = meta.labels.contains_key(kueue::QUEUE_NAME) || kueue_reqs.iter().any(|r| r.any);
    let kai = kai_request(meta, origin)?;
    let topo = if kueue_reqs.iter().any(|r| r.any) {
        if kai.is_some() {
            warnings.push(Warning {
                field: format!("metadata.annotations.{}", kai::REQUIRED),
                message: "both Kueue and KAI topology annotations: the Kueue ones are used".into(),
            });
        }
        combine_kueue(&mut roles, &kueue_reqs, &mut warnings)
    } else {
        kai.or(topology).unwrap_or_default()
    };
    if min < members && roles.iter().all(|r| r.min_count.is_none()) {
        spread_minimum(&mut roles, min, &min_field, &mut warnings);
    }
    let object = origin.to_ref();
    let member_pods = owned_pods(pods, &origin.kind, &origin.namespace, &origin.name);
    let mut checks = vec![Check::new(
        "group_object",
        CheckStatus::Ok,
        format!("{} found", object),
    )];
    let found = member_pods.len();
    if found == 0 {
        checks.push(Check::new(
            "members_found",
            CheckStatus::Ok,
            "none of its pods are in the input (not created yet, or not given)",
        ));
    } else {
        let status = if found as u64 >= u64::from(members) {
            CheckStatus::Ok
        } else {
            CheckStatus::Warning
        };
        checks.push(Check::new(
            "members_found",
            status,
            format!("{found} of the {members} pods the controller creates are in the input"),
        ));
    }
    let has_integration = is_kueue
        || meta.annotations.contains_key(kai::REQUIRED)
        || meta.annotations.contains_key(kai::PREFERRED)
        || meta.labels.contains_key("kai.scheduler/queue")
        || !owned_groups.is_empty()
        || matches!(framework, Framework::VolcanoJob)
        || (matches!(
            framework,
            Framework::PyTorchJob | Framework::MpiJob | Framework::TfJob
        ) && minimum.is_some());
    if !has_integration {
        checks.push(Check::new(
            "gang_scheduler",
            CheckStatus::Warning,
            format!(
                "no gang scheduling integration found (no {} label, Kueue or KAI topology annotation, or PodGroup): its pods may be scheduled one by one",
                kueue::QUEUE_NAME
            ),
        ));
    }
    for (kind, pg, pg_origin) in owned_groups {
        let field = match kind {
            PodGroupKind::Native => "spec.schedulingPolicy.gang.minCount",
            _ => "spec.minMember",
        };
        let pg_min = match kind {
            PodGroupKind::Native => pg
                .spec
                .scheduling_policy
                .gang
                .as_ref()
                .and_then(|g| g.min_count),
            _ => pg.spec.min_member,
        };
        if let Some(m) = pg_min {
            let status = if m == i64::from(min) {
                CheckStatus::Ok
            } else if m > i64::from(members) {
                CheckStatus::Error
            } else {
                CheckStatus::Warning
            };
            checks.push(Check::new(
                "group_object",
                status,
                format!(
                    "{} (created for it) has {field} {m}; the workload defines {members} members with minimum {min}",
                    pg_origin.object
                ),
            ));
        }
    }
    let w = WorkloadGang {
        object,
        framework,
        found: true,
        roles,
        members,
        minimum: min,
        minimum_field: min_field.clone(),
        topology: topo,
        kueue: is_kueue,
        member_pods,
        warnings,
        checks,
        gang: None,
    };
    Ok(finish(w, &min_field))
}

/// Pods a Job creates at once (Kueue's count: parallelism, at most completions).
fn job_pods(origin: &Origin, field: &str, spec: &crate::model::JobSpec) -> Result<u32, Error> {
    let p = count(origin, &format!("{field}.parallelism"), spec.parallelism, 1)?;
    let c = match spec.completions {
        Some(_) => count(origin, &format!("{field}.completions"), spec.completions, 1)?,
        None => u32::MAX,
    };
    Ok(p.min(c))
}

fn template_role(
    name: &str,
    members: u32,
    tpl: &PodTemplate,
    origin: &Origin,
    field: &str,
    warnings: &mut Vec<Warning>,
) -> Result<(MemberRole, KueueReq), Error> {
    let role = role_from_spec(
        name,
        members,
        &tpl.spec,
        origin,
        &format!("{field}.spec"),
        warnings,
    )?;
    let req = kueue_req(&tpl.metadata, origin, &format!("{field}.metadata"))?;
    Ok((role, req))
}

fn replica_order(name: &str) -> (u8, String) {
    let rank = match name.to_lowercase().as_str() {
        "master" | "chief" | "launcher" => 0,
        "ps" => 1,
        "worker" => 2,
        _ => 3,
    };
    (rank, name.to_owned())
}

fn kubeflow<'a>(
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
        if let Some(m) = sp.min_available {
            minimum = Some((count(origin, f, Some(m), 0)?, f.to_owned()));
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
            origin,
            meta: &job.metadata,
            framework,
            roles,
            kueue_reqs: reqs,
            minimum,
            topology: None,
            warnings,
        },
        framework,
    ))
}

fn volcano_job<'a>(job: &'a VolcanoJobObj, origin: &'a Origin) -> Result<Controlled<'a>, Error> {
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
        warnings,
    })
}

/// A PodGroup owned by a workload, with where it came from.
type OwnedGroup<'a> = (PodGroupKind, &'a PodGroupObj, &'a Origin);
/// A member pod and where it came from.
type Member<'a> = (&'a Pod, &'a Origin);

/// Every workload in `objects` as a gang, in input order: PodGroups of every kind with
/// their member pods; Jobs, JobSets, Kubeflow PyTorchJob / MPIJob / TFJob and Volcano
/// Jobs with their pod templates as roles; and, for pods naming a PodGroup that is not in
/// the input, that missing group (with a failed `group_object` check). A PodGroup owned
/// by a workload in the input is reported with that workload (its minimum is checked
/// against the workload's members), not on its own.
///
/// Roles of pods are their distinct shapes (requests, selector, affinity, tolerations).
/// A group minimum below the members makes the gang elastic: gang-core keeps a minimum
/// per role, so the shortfall is taken from the largest role first (the workers; a
/// launcher or master of one stays whole), with a warning when there are several roles.
///
/// ```
/// use gang_kube::{workloads, CheckStatus, Framework, Objects};
/// let objects = Objects::parse("group.yaml", r#"
/// apiVersion: scheduling.k8s.io/v1beta1
/// kind: PodGroup
/// metadata: {name: training-workers, namespace: ml-team}
/// spec:
///   schedulingPolicy: {gang: {minCount: 4}}
///   schedulingConstraints:
///     topology:
///       - key: topology.example.com/rack
/// "#)?;
/// let w = &workloads(&objects)?[0];
/// assert_eq!((w.framework, w.minimum, w.members), (Framework::NativePodGroup, 4, 0));
/// let missing = w.checks.iter().find(|c| c.id == "members_found").unwrap();
/// assert_eq!(missing.status, CheckStatus::Error); // the controller made no pods yet
/// assert!(w.gang.is_none());
/// # Ok::<(), gang_kube::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidMinimum`] when a workload's minimum exceeds the members it
/// defines; [`ErrorKind::InvalidValue`] for an annotation value that is not a level, a
/// boolean or a count, an unknown `networkTopology.mode`, a negative count, or an
/// unknown toleration or affinity operator.
pub fn workloads(objects: &Objects) -> Result<Vec<WorkloadGang>, Error> {
    let pods: Vec<(&Pod, &Origin)> = objects
        .items
        .iter()
        .filter_map(|i| match &i.body {
            Body::Pod(p) => Some((&**p, &i.origin)),
            _ => None,
        })
        .collect();
    // Workload objects, to attach the PodGroups they own.
    let controllers: HashSet<(&str, &str, &str)> = objects
        .items
        .iter()
        .filter(|i| {
            matches!(
                i.body,
                Body::Job(_) | Body::JobSet(_) | Body::Kubeflow(..) | Body::VolcanoJob(_)
            )
        })
        .map(|i| {
            (
                i.origin.kind.as_str(),
                i.origin.namespace.as_str(),
                i.origin.name.as_str(),
            )
        })
        .collect();
    let mut owned: HashMap<(&str, &str, &str), Vec<OwnedGroup<'_>>> = HashMap::new();
    let mut groups: HashSet<(PodGroupKind, &str, &str)> = HashSet::new();
    for i in &objects.items {
        if let Body::PodGroup(k, pg) = &i.body {
            groups.insert((*k, i.origin.namespace.as_str(), i.origin.name.as_str()));
            for o in &pg.metadata.owner_references {
                let key = (
                    o.kind.as_str(),
                    i.origin.namespace.as_str(),
                    o.name.as_str(),
                );
                if controllers.contains(&key) {
                    owned.entry(key).or_default().push((*k, &**pg, &i.origin));
                }
            }
        }
    }
    let owned_by = |o: &Origin| {
        owned
            .get(&(o.kind.as_str(), o.namespace.as_str(), o.name.as_str()))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for item in &objects.items {
        let o = &item.origin;
        match &item.body {
            Body::PodGroup(k, pg) => {
                let is_owned = pg.metadata.owner_references.iter().any(|r| {
                    controllers.contains(&(r.kind.as_str(), o.namespace.as_str(), r.name.as_str()))
                });
                if is_owned {
                    continue;
                }
                let members: Vec<(&Pod, &Origin)> = pods
                    .iter()
                    .filter(|(p, _)| {
                        p.metadata.namespace == o.namespace
                            && pod_group_refs(p)
                                .iter()
                                .any(|(pk, n)| pk == k && *n == o.name)
                    })
                    .copied()
                    .collect();
                out.push(pod_group(*k, Some(pg), o.to_ref(), Some(o), &members)?);
            }
            Body::Job(job) => {
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
                let c = Controlled {
                    origin: o,
                    meta: &job.metadata,
                    framework: Framework::Job,
                    roles: vec![role],
                    kueue_reqs: vec![req],
                    minimum,
                    topology: None,
                    warnings,
                };
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            Body::JobSet(js) => {
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
                let c = Controlled {
                    origin: o,
                    meta: &js.metadata,
                    framework: Framework::JobSet,
                    roles,
                    kueue_reqs: reqs,
                    minimum: None,
                    topology: None,
                    warnings,
                };
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            Body::Kubeflow(k, job) => {
                let (c, _) = kubeflow(*k, job, o)?;
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            Body::VolcanoJob(job) => {
                let c = volcano_job(job, o)?;
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            _ => {}
        }
    }
    // Pods naming a group that is not in the input.
    let mut missing: BTreeMap<(String, String, u8), (PodGroupKind, Vec<Member<'_>>)> =
        BTreeMap::new();
    for &(p, o) in &pods {
        for (k, name) in pod_group_refs(p) {
            if !groups.contains(&(k, p.metadata.namespace.as_str(), name)) {
                missing
                    .entry((p.metadata.namespace.clone(), name.to_owned(), k as u8))
                    .or_insert_with(|| (k, Vec::new()))
                    .1
                    .push((p, o));
            }
        }
    }
    for ((ns, name, _), (k, members)) in missing {
        let api_version = match k {
            PodGroupKind::Native => "scheduling.k8s.io/v1beta1",
            PodGroupKind::Volcano => "scheduling.volcano.sh/v1beta1",
            PodGroupKind::Coscheduling => "scheduling.x-k8s.io/v1alpha1",
            PodGroupKind::Kai => "scheduling.run.ai/v2alpha2",
        };
        let object = ObjectRef {
            kind: "PodGroup".into(),
            api_version: api_version.into(),
            namespace: (!ns.is_empty()).then(|| ns.clone()),
            name: name.clone(),
            source: String::new(),
            position: format!(
                "named by {}",
                object_label("Pod", &ns, &members[0].0.metadata.name)
            ),
        };
        out.push(pod_group(k, None, object, None, &members)?);
    }
    Ok(out)
}
