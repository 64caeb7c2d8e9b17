//! Workload objects → gangs: PodGroups with their member pods, and Jobs, JobSets,
//! Kubeflow and Volcano jobs with their pod templates as roles.
//!
//! One way, bottom to top: [`types`] (the public types) → [`fields`] (counts, levels, a
//! pod spec as a role) → the topology annotations of [`kueue`], [`kai`] → [`gang`] (the
//! minimum spread over roles, the gang-core `Gang`) → [`checks`] → [`controlled`]
//! (what every controller workload shares) → one file per kind ([`batch`], [`jobset`],
//! [`kubeflow`], [`volcano`]) and [`pod_group`] (PodGroups and their pods) → this file's
//! [`workloads`], which finds them all.

mod appwrapper;
mod batch;
mod checks;
mod controlled;
mod fields;
pub(crate) mod gang;
mod jobset;
pub mod kai;
mod kubeflow;
pub mod kueue;
pub(crate) mod kueue_pods;
mod lws;
pub(crate) mod pod_group;
mod ray;
pub(crate) mod types;
pub(crate) mod volcano;

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::Error;
use crate::model::body::Body;
use crate::model::core_v1::Pod;
use crate::model::pod_group::PodGroupKind;
use crate::objects::Objects;
use crate::origin::{object_label, ObjectRef, Origin};
use crate::workload::appwrapper::appwrapper;
use crate::workload::batch::job;
use crate::workload::controlled::{controlled, OwnedGroup};
use crate::workload::jobset::jobset;
use crate::workload::kubeflow::kubeflow;
use crate::workload::kueue_pods::kueue_pod_groups;
use crate::workload::lws::lws;
use crate::workload::pod_group::{pod_group, pod_group_refs};
use crate::workload::ray::{ray_cluster, ray_job};
use crate::workload::types::{Warning, WorkloadGang};
use crate::workload::volcano::volcano_job;

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
/// [`ErrorKind::InvalidMinimum`](crate::ErrorKind::InvalidMinimum) when a workload's minimum exceeds the members it
/// defines; [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) for an annotation value that is not a level, a
/// boolean or a count, an unknown `networkTopology.mode`, a negative count, or an
/// unknown toleration or affinity operator.
pub fn workloads(objects: &Objects) -> Result<Vec<WorkloadGang>, Error> {
    let (admitted, notes) = crate::admission::admitted(objects);
    let mut out = read_all(admitted.as_ref().unwrap_or(objects))?;
    for w in &mut out {
        if let Some(n) = notes.get(&w.object.to_string()) {
            w.warnings.extend(n.iter().map(|n| Warning {
                field: n.field.clone(),
                message: n.message.clone(),
            }));
        }
        // Member pods' notes, once per message (a group of 1,000 pods without requests
        // gets one line, with the count).
        let mut by_message: Vec<(Warning, usize)> = Vec::new();
        for p in &w.member_pods {
            for n in notes.get(&p.to_string()).into_iter().flatten() {
                match by_message.iter_mut().find(|(x, _)| x.message == n.message) {
                    Some((_, k)) => *k += 1,
                    None => by_message.push((
                        Warning {
                            field: format!("{p}: {}", n.field),
                            message: n.message.clone(),
                        },
                        1,
                    )),
                }
            }
        }
        for (mut x, k) in by_message {
            if k > 1 {
                x.message.push_str(&format!(" (and {} more pods)", k - 1));
            }
            w.warnings.push(x);
        }
    }
    Ok(out)
}

/// [`workloads`] of objects as admission left them.
fn read_all(objects: &Objects) -> Result<Vec<WorkloadGang>, Error> {
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
        .filter(|i| i.body.is_workload())
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
    // A workload whose pod templates join a native PodGroup (`spec.schedulingGroup`):
    // the group is the workload's (its minimum and topology), not reported alone.
    let mut joined: HashSet<(&str, &str)> = HashSet::new();
    for i in objects.items.iter().filter(|i| i.body.is_workload()) {
        let mut body = i.body.clone();
        let names: HashSet<String> = body
            .pod_specs_mut()
            .into_iter()
            .map(|(_, s)| s.scheduling_group.pod_group_name.clone())
            .filter(|n| !n.is_empty())
            .collect();
        for g in &objects.items {
            if let Body::PodGroup(PodGroupKind::Native, pg) = &g.body {
                if g.origin.namespace == i.origin.namespace && names.contains(&g.origin.name) {
                    let key = (
                        i.origin.kind.as_str(),
                        i.origin.namespace.as_str(),
                        i.origin.name.as_str(),
                    );
                    owned
                        .entry(key)
                        .or_default()
                        .push((PodGroupKind::Native, &**pg, &g.origin));
                    joined.insert((g.origin.namespace.as_str(), g.origin.name.as_str()));
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
                let joined = *k == PodGroupKind::Native
                    && joined.contains(&(o.namespace.as_str(), o.name.as_str()));
                if is_owned || joined {
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
            Body::Job(j) => {
                out.push(controlled(job(j, o)?, &pods, &owned_by(o))?);
            }
            Body::JobSet(js) => {
                out.push(controlled(jobset(js, o)?, &pods, &owned_by(o))?);
            }
            Body::Kubeflow(k, job) => {
                let (c, _) = kubeflow(*k, job, o)?;
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            Body::VolcanoJob(job) => {
                let c = volcano_job(job, o)?;
                out.push(controlled(c, &pods, &owned_by(o))?);
            }
            Body::Lws(x) => out.push(controlled(lws(x, o)?, &pods, &owned_by(o))?),
            Body::RayCluster(x) => out.push(controlled(ray_cluster(x, o)?, &pods, &owned_by(o))?),
            Body::RayJob(x) => out.push(controlled(ray_job(x, o)?, &pods, &owned_by(o))?),
            Body::AppWrapper(x) => out.push(controlled(appwrapper(x, o)?, &pods, &owned_by(o))?),
            _ => {}
        }
    }
    // Kueue plain pod groups (pods that are not a controller's: those carry no label).
    out.extend(kueue_pod_groups(&pods)?);
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
