//! Priorities as Kubernetes gives them: `PriorityClass` objects (`scheduling.k8s.io/v1`:
//! `value`, `globalDefault`, `preemptionPolicy`), a pod's priority (`spec.priority`, else
//! its `priorityClassName` resolved, else the global default class, else 0), and the
//! workload a running pod belongs to, so that its pods are evicted together or not at
//! all.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::model::body::Body;
use crate::model::core_v1::Pod;
use crate::objects::Objects;
use crate::origin::{object_label, ObjectRef};
use crate::workload::pod_group::pod_group_refs;
use crate::workload::types::WorkloadGang;

/// A `PriorityClass` read from the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriorityClassInfo {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// `globalDefault`: pods naming no class get this one's value.
    pub global_default: bool,
    /// `preemptionPolicy` is not `Never`: its pods may preempt lower-priority pods.
    pub preempts: bool,
    /// Where it was read.
    pub object: ObjectRef,
}

/// The PriorityClasses of the input, by name, and the global default.
#[derive(Debug, Clone, Default)]
pub(crate) struct PriorityClasses {
    pub(crate) classes: BTreeMap<String, PriorityClassInfo>,
    pub(crate) default: Option<String>,
}

impl PriorityClasses {
    /// Reads every `PriorityClass` in `objects`.
    ///
    /// Errors: a class without `value` or with one outside 32 bits, an unknown
    /// `preemptionPolicy`, a second `globalDefault` (the API server refuses each).
    pub(crate) fn read(objects: &Objects) -> Result<Self, Error> {
        let mut out = PriorityClasses::default();
        for item in &objects.items {
            let Body::PriorityClass(pc) = &item.body else {
                continue;
            };
            let o = &item.origin;
            let bad = |field: &str, value: String, reason: &str| {
                Error::new(ErrorKind::InvalidValue, &o.source, reason.to_owned())
                    .at(o)
                    .with_field(field.to_owned())
                    .with_value(value)
            };
            let value = match pc.value {
                None => return Err(bad("value", String::new(), "a PriorityClass needs a value")),
                Some(v) => i32::try_from(v)
                    .map_err(|_| bad("value", v.to_string(), "a priority is a 32-bit integer"))?,
            };
            let preempts = match pc.preemption_policy.as_str() {
                "" | "PreemptLowerPriority" => true,
                "Never" => false,
                other => {
                    return Err(bad(
                        "preemptionPolicy",
                        other.to_owned(),
                        "expected PreemptLowerPriority or Never",
                    ))
                }
            };
            let name = o.name.clone();
            if pc.global_default {
                if let Some(first) = &out.default {
                    return Err(bad(
                        "globalDefault",
                        "true".to_owned(),
                        &format!("PriorityClass {first} is already the global default"),
                    ));
                }
                out.default = Some(name.clone());
            }
            out.classes.insert(
                name.clone(),
                PriorityClassInfo {
                    name,
                    value,
                    global_default: pc.global_default,
                    preempts,
                    object: o.to_ref(),
                },
            );
        }
        Ok(out)
    }

    /// The global default class, if any.
    pub(crate) fn default_class(&self) -> Option<&PriorityClassInfo> {
        self.default.as_ref().and_then(|d| self.classes.get(d))
    }

    /// A running pod's priority: `spec.priority` (admission always sets it), else its
    /// class's value, else the global default's, else 0. A class not in the input
    /// falls through to the default: the pod is already running, its priority was
    /// resolved when it was admitted.
    pub(crate) fn of_pod(&self, p: &Pod) -> i32 {
        if let Some(v) = p.spec.priority {
            return v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        }
        self.classes
            .get(&p.spec.priority_class_name)
            .or_else(|| self.default_class())
            .map_or(0, |c| c.value)
    }
}

/// The workload a running pod belongs to, as `Kind/namespace/name`: its PodGroup (any
/// of the four APIs), else its JobSet (label `jobset.sigs.k8s.io/jobset-name`: a
/// JobSet's Jobs are one gang), else its owner (a Job, a PyTorchJob, a Volcano Job…),
/// else the pod itself. All pods of one workload are evicted together or not at all.
pub(crate) fn workload_of(p: &Pod) -> String {
    let ns = p.metadata.namespace.as_str();
    if let Some((_, group)) = pod_group_refs(p).first() {
        return object_label("PodGroup", ns, group);
    }
    if let Some(js) = p.metadata.labels.get("jobset.sigs.k8s.io/jobset-name") {
        return object_label("JobSet", ns, js);
    }
    if let Some(owner) = p.metadata.owner_references.first() {
        return object_label(&owner.kind, ns, &owner.name);
    }
    object_label("Pod", ns, &p.metadata.name)
}

/// Where a workload's priority came from, in Kubernetes' order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrioritySource {
    /// The pods' (or pod template's) `spec.priority`.
    SpecPriority,
    /// Their `priorityClassName`, resolved.
    PriorityClass,
    /// The `PriorityClass` marked `globalDefault`.
    GlobalDefault,
    /// Nothing: no class and no global default, so 0.
    None,
}

/// A workload's priority, as Kubernetes would give its pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadPriority {
    /// The priority (higher wins).
    pub value: i32,
    /// The PriorityClass it came from, if one.
    pub class: Option<String>,
    /// Where it came from.
    pub source: PrioritySource,
    /// The field it was read from (`spec.template.spec.priorityClassName`), if one.
    pub field: Option<String>,
    /// Whether it may preempt: `false` when its PriorityClass says
    /// `preemptionPolicy: Never` (it waits for room instead).
    pub preempts: bool,
}

/// A workload's priority from the `PriorityClass`es of `objects`, without reading the
/// cluster: as [`Cluster::priority_of`](crate::Cluster::priority_of), which a caller
/// that has the cluster uses instead.
///
/// ```
/// use gang_kube::{workload_priority, workloads, Objects};
/// let o = Objects::parse("a.yaml", r#"
/// apiVersion: scheduling.k8s.io/v1
/// kind: PriorityClass
/// metadata: {name: high}
/// value: 100
/// ---
/// apiVersion: batch/v1
/// kind: Job
/// metadata: {name: train, namespace: ml}
/// spec:
///   template:
///     spec:
///       priorityClassName: high
///       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
/// "#)?;
/// let p = workload_priority(&o, &workloads(&o)?[0])?;
/// assert_eq!((p.value, p.class.as_deref()), (100, Some("high")));
/// # Ok::<(), gang_kube::Error>(())
/// ```
///
/// # Errors
/// As [`Cluster::priority_of`](crate::Cluster::priority_of), and for an invalid
/// `PriorityClass` as [`Cluster::from_objects`](crate::Cluster::from_objects).
pub fn workload_priority(objects: &Objects, w: &WorkloadGang) -> Result<WorkloadPriority, Error> {
    resolve(&PriorityClasses::read(objects)?, w)
}

/// The workload's priority. See [`Cluster::priority_of`](crate::Cluster::priority_of).
pub(crate) fn resolve(
    classes: &PriorityClasses,
    w: &WorkloadGang,
) -> Result<WorkloadPriority, Error> {
    let mut best: Option<WorkloadPriority> = None;
    for r in &w.roles {
        let p = if let Some(v) = r.priority {
            let class = r
                .priority_class_name
                .as_deref()
                .and_then(|n| classes.classes.get(n));
            WorkloadPriority {
                value: v,
                class: r.priority_class_name.clone(),
                source: PrioritySource::SpecPriority,
                field: Some(format!("{}.priority", r.from)),
                preempts: class.is_none_or(|c| c.preempts),
            }
        } else if let Some(name) = &r.priority_class_name {
            let Some(c) = classes.classes.get(name) else {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    &w.object.source,
                    "no PriorityClass of this name in the input (give `kubectl get priorityclasses -o json` too)",
                )
                .with_object(w.object.to_string())
                .with_position(w.object.position.clone())
                .with_field(format!("{}.priorityClassName", r.from))
                .with_value(name.clone()));
            };
            WorkloadPriority {
                value: c.value,
                class: Some(c.name.clone()),
                source: PrioritySource::PriorityClass,
                field: Some(format!("{}.priorityClassName", r.from)),
                preempts: c.preempts,
            }
        } else if let Some(c) = classes.default_class() {
            WorkloadPriority {
                value: c.value,
                class: Some(c.name.clone()),
                source: PrioritySource::GlobalDefault,
                field: None,
                preempts: c.preempts,
            }
        } else {
            WorkloadPriority {
                value: 0,
                class: None,
                source: PrioritySource::None,
                field: None,
                preempts: true,
            }
        };
        best = Some(match best {
            Some(b) if b.value >= p.value => WorkloadPriority {
                preempts: b.preempts && p.preempts,
                ..b
            },
            Some(b) => WorkloadPriority {
                preempts: b.preempts && p.preempts,
                ..p
            },
            None => p,
        });
    }
    Ok(best.unwrap_or(WorkloadPriority {
        value: 0,
        class: None,
        source: PrioritySource::None,
        field: None,
        preempts: true,
    }))
}
