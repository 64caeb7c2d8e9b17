//! Priorities as Kubernetes gives them: `PriorityClass` objects (`scheduling.k8s.io/v1`:
//! `value`, `globalDefault`, `preemptionPolicy`), a pod's priority (`spec.priority`, else
//! its `priorityClassName` resolved, else the global default class, else 0), and the
//! workload a running pod belongs to, so that its pods are evicted together or not at
//! all. Kueue's `WorkloadPriorityClass` (`kueue.x-k8s.io/v1beta1`, `v1beta2`: `value`),
//! selected by the workload object's label `kueue.x-k8s.io/priority-class`, gives the
//! workload its priority before any of its pods' (as Kueue's `ExtractPriority` does: the
//! label first, then the pods' PriorityClass).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::model::body::Body;
use crate::model::core_v1::Pod;
use crate::model::kueue::WORKLOAD_PRIORITY_CLASS_LABEL;
use crate::objects::Objects;
use crate::origin::{object_label, ObjectRef};
use crate::workload::pod_group::pod_group_refs;
use crate::workload::types::{GroupPriority, WorkloadGang};

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

/// A Kueue `WorkloadPriorityClass` read from the input (`kueue.x-k8s.io/v1beta1` or
/// `v1beta2`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadPriorityClassInfo {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// Where it was read.
    pub object: ObjectRef,
}

/// The PriorityClasses of the input, by name, and the global default; Kueue's
/// WorkloadPriorityClasses, by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct PriorityClasses {
    pub(crate) classes: BTreeMap<String, PriorityClassInfo>,
    pub(crate) default: Option<String>,
    pub(crate) workload_classes: BTreeMap<String, WorkloadPriorityClassInfo>,
}

impl PriorityClasses {
    /// Reads every `PriorityClass` and `WorkloadPriorityClass` in `objects`.
    ///
    /// Errors: a class without `value` or with one outside 32 bits, an unknown
    /// `preemptionPolicy`, a second `globalDefault` (the API server refuses each).
    pub(crate) fn read(objects: &Objects) -> Result<Self, Error> {
        let mut out = PriorityClasses::default();
        for item in &objects.items {
            let o = &item.origin;
            let bad = |field: &str, value: String, reason: &str| {
                Error::new(ErrorKind::InvalidValue, &o.source, reason.to_owned())
                    .at(o)
                    .with_field(field.to_owned())
                    .with_value(value)
            };
            let pc = match &item.body {
                Body::PriorityClass(pc) => pc,
                Body::WorkloadPriorityClass(wpc) => {
                    let value = match wpc.value {
                        None => {
                            return Err(bad(
                                "value",
                                String::new(),
                                "a WorkloadPriorityClass needs a value",
                            ))
                        }
                        Some(v) => i32::try_from(v).map_err(|_| {
                            bad("value", v.to_string(), "a priority is a 32-bit integer")
                        })?,
                    };
                    out.workload_classes.insert(
                        o.name.clone(),
                        WorkloadPriorityClassInfo {
                            name: o.name.clone(),
                            value,
                            object: o.to_ref(),
                        },
                    );
                    continue;
                }
                _ => continue,
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

impl PriorityClasses {
    /// Every PodGroup of `objects` that sets its own priority (`spec.priority`, else its
    /// `spec.priorityClassName` of a class in the input), by the workload label its
    /// running pods are grouped under ([`workload_of`]): its pods are evicted as one unit
    /// of the group's priority, not their own.
    pub(crate) fn of_groups(&self, objects: &Objects) -> BTreeMap<String, i32> {
        let mut out = BTreeMap::new();
        for item in &objects.items {
            let Body::PodGroup(_, pg) = &item.body else {
                continue;
            };
            let s = &pg.spec;
            let value = s
                .priority
                .map(|v| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
                .or_else(|| {
                    s.priority_class_name
                        .as_deref()
                        .and_then(|n| self.classes.get(n))
                        .map(|c| c.value)
                });
            if let Some(v) = value {
                let m = &pg.metadata;
                out.entry(object_label("PodGroup", &m.namespace, &m.name))
                    .or_insert(v);
            }
        }
        out
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
    /// The workload object's label `kueue.x-k8s.io/priority-class`, naming a Kueue
    /// `WorkloadPriorityClass`: Kueue orders and preempts by it, before the pods' own.
    WorkloadPriorityClass,
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
    /// The PriorityClass (or, for [`PrioritySource::WorkloadPriorityClass`], the Kueue
    /// WorkloadPriorityClass) it came from, if one.
    pub class: Option<String>,
    /// Where it came from.
    pub source: PrioritySource,
    /// The field it was read from (`spec.template.spec.priorityClassName`,
    /// `metadata.labels.kueue.x-k8s.io/priority-class`), if one.
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
    // Kueue's label first: it decides the workload's priority whatever its pods say.
    if let Some(name) = &w.workload_priority_class {
        let field = format!("metadata.labels.{WORKLOAD_PRIORITY_CLASS_LABEL}");
        let Some(c) = classes.workload_classes.get(name) else {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                &w.object.source,
                "no Kueue WorkloadPriorityClass of this name in the input (give `kubectl get workloadpriorityclasses.kueue.x-k8s.io -o json` too)",
            )
            .with_object(w.object.to_string())
            .with_position(w.object.position.clone())
            .with_field(field)
            .with_value(name.clone()));
        };
        return Ok(WorkloadPriority {
            value: c.value,
            class: Some(c.name.clone()),
            source: PrioritySource::WorkloadPriorityClass,
            field: Some(field),
            // A WorkloadPriorityClass has no preemptionPolicy: Kueue preempts for it.
            preempts: true,
        });
    }
    let group = w.group_priority.as_ref();
    let mut p = match group {
        Some(g) if g.priority.is_some() || g.priority_class_name.is_some() => {
            of_group(classes, w, g)?
        }
        _ => of_roles(classes, w)?,
    };
    // The group's own `preemptionPolicy` decides whether it preempts.
    if let Some(never) = group.and_then(|g| g.never_preempts) {
        p.preempts = !never;
    }
    Ok(p)
}

/// A PodGroup's priority from its own fields: `spec.priority`, else its
/// `spec.priorityClassName` resolved. The group's, not its pods': the scheduler ranks
/// and preempts the group by it (KEP-5710).
fn of_group(
    classes: &PriorityClasses,
    w: &WorkloadGang,
    g: &GroupPriority,
) -> Result<WorkloadPriority, Error> {
    let class = g
        .priority_class_name
        .as_deref()
        .and_then(|n| classes.classes.get(n));
    if let Some(v) = g.priority {
        // A priority set by admission stands even if its class is not in the input.
        return Ok(WorkloadPriority {
            value: v,
            class: g.priority_class_name.clone(),
            source: PrioritySource::SpecPriority,
            field: Some("spec.priority".to_owned()),
            preempts: class.is_none_or(|c| c.preempts),
        });
    }
    let Some(name) = &g.priority_class_name else {
        return of_roles(classes, w);
    };
    let Some(c) = class else {
        return Err(Error::new(
            ErrorKind::InvalidValue,
            &w.object.source,
            "no PriorityClass of this name in the input (give `kubectl get priorityclasses -o json` too)",
        )
        .with_object(w.object.to_string())
        .with_position(w.object.position.clone())
        .with_field("spec.priorityClassName")
        .with_value(name.clone()));
    };
    Ok(WorkloadPriority {
        value: c.value,
        class: Some(c.name.clone()),
        source: PrioritySource::PriorityClass,
        field: Some("spec.priorityClassName".to_owned()),
        preempts: c.preempts,
    })
}

/// The workload's priority from its roles (pod templates or member pods): the highest.
fn of_roles(classes: &PriorityClasses, w: &WorkloadGang) -> Result<WorkloadPriority, Error> {
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
