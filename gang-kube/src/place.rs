//! A workload against a cluster: its gang with resolved levels, nodes excluded per role
//! by reason, and whether each member shape fits any node.

use std::collections::BTreeMap;

use gang_core::diagnosis::{ExclusionCause, ExclusionReason, Explanation, RoleReport};
use gang_core::lifecycle::{Spread, SpreadOutcome};
use gang_core::{Gang, Inventory, Outcome, Quantity, Toleration, HOSTNAME_LEVEL};
use serde::Serialize;

use crate::cluster::{Cluster, NodeExclusion};
use crate::error::{Error, ErrorKind};
use crate::origin::ObjectRef;
use crate::priority::{resolve, WorkloadPriority};
use crate::workload::gang::build_gang;
use crate::workload::types::{
    Check, CheckStatus, Level, LevelRequest, MemberRole, TopologyPart, WorkloadGang,
};

/// Why nodes cannot take a member of one role, each node counted once under its first
/// reason in this order: not ready, unschedulable, outside the ResourceFlavor (what
/// gang-core counts as cordoned, split by why), the node selector or affinity (by label
/// key), an untolerated taint (by key), a missing topology label (constrained roles),
/// too small even when empty (by resource), short of free capacity now (by resource).
/// Everything after the first three is gang-core's diagnosis
/// ([`RoleReport::causes`](gang_core::diagnosis::RoleReport::causes)), never computed
/// a second way here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RoleExclusions {
    /// The role.
    pub role: String,
    /// Nodes considered.
    pub nodes: usize,
    /// Nodes not ready.
    pub not_ready: usize,
    /// Nodes cordoned.
    pub unschedulable: usize,
    /// Nodes outside the ResourceFlavor's node labels.
    pub outside_flavor: usize,
    /// Nodes per untolerated taint key (`NoSchedule` / `NoExecute`).
    pub taints: BTreeMap<String, usize>,
    /// Nodes per label key of the selector or affinity they fail.
    pub selector: BTreeMap<String, usize>,
    /// Nodes per topology level label they lack (down to the gang's level).
    pub missing_level: BTreeMap<String, usize>,
    /// Nodes per resource whose allocatable is below one member's request.
    pub too_small: BTreeMap<String, usize>,
    /// Nodes per resource that could hold a member when empty but lack it free now.
    pub short_now: BTreeMap<String, usize>,
    /// Nodes that can take at least one member now.
    pub fits_now: usize,
    /// Nodes that could take one member if nothing ran on them (eligible and large
    /// enough).
    pub fits_empty: usize,
    /// gang-core's causes, as it counts and words them (cordoned nodes are the three
    /// counts above).
    pub causes: Vec<ExclusionCause>,
}

impl RoleExclusions {
    /// Nodes excluded for any reason. See [`RoleExclusions`].
    pub fn excluded(&self) -> usize {
        self.nodes - self.fits_now
    }
}

/// One part of a workload placed on its own ([`Cluster::place_parts`]).
#[derive(Debug, Clone, Serialize)]
pub struct PartOutcome {
    /// A child Job (`REPLICATED-JOB-INDEX`), or a Kueue PodSet group or PodSet.
    pub name: String,
    /// The roles of the workload in this part.
    pub roles: Vec<String>,
    /// Its placement (in a domain of its own), or why it does not fit after the parts
    /// before it.
    pub outcome: Outcome,
}

/// One part of a workload as it asks to be placed ([`Cluster::parts`]): its request
/// resolved against the cluster's topology, before anything is placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartRequest {
    /// A child Job (`REPLICATED-JOB-INDEX`), or a Kueue PodSet group or PodSet, as
    /// [`PartOutcome::name`].
    pub name: String,
    /// The Kueue `podset-group-name` its PodSets share, if any.
    pub group: Option<String>,
    /// The roles of the workload in this part.
    pub roles: Vec<String>,
    /// Its members (pods).
    pub members: u32,
    /// The level all its members share, as a node label key (`kubernetes.io/hostname`
    /// for one node), if it requires one.
    pub required: Option<String>,
    /// The level it prefers, if any.
    pub preferred: Option<String>,
    /// Its slices, outermost first.
    pub slices: Vec<gang_core::request::Slice>,
    /// Where the request was read (the annotation, or JobSet's
    /// `alpha.jobset.sigs.k8s.io/exclusive-topology`), if anywhere.
    pub field: Option<String>,
}

/// gang-core's rejection of the workload's request, on the workload object, at the
/// Kubernetes field it came from (gang-core's own paths, `gang.name`, are not fields of
/// the object): the name, the role's pod template, or the topology request.
fn request_error(w: &WorkloadGang, e: gang_core::Error) -> Error {
    let mut reason = crate::topology::core_reason(&e);
    let field = kube_field(w, e.field());
    if field.is_none() && !e.field().is_empty() {
        reason = format!("{reason} (gang-core's {})", e.field());
    }
    if e.field() == "gang.name" && w.object.name.is_empty() {
        reason = "the object has neither metadata.name nor metadata.generateName".into();
    }
    // Every role's minimum 0 (Volcano tasks' minAvailable 0): said in the object's terms.
    if e.field() == "gang.roles" {
        reason = "no member is required: the minimum is 0 for every role; give at least one role a minimum of 1 or more".into();
    }
    let mut err = at_object(ErrorKind::Core, &w.object, reason);
    if let Some(f) = field {
        err = err.with_field(f);
    }
    if e.field() == "gang.roles" {
        err = err.with_value("0");
    } else if let gang_core::Error::InvalidRequest { value, .. }
    | gang_core::Error::Contradictory { value, .. } = &e
    {
        err = err.with_value(value.clone());
    }
    err.with_core(e)
}

/// The field of the workload object a gang-core request path comes from.
fn kube_field(w: &WorkloadGang, core: &str) -> Option<String> {
    if core == "gang.name" {
        return Some("metadata.name".into());
    }
    if core == "gang.roles" && w.minimum_field != "members" {
        return Some(w.minimum_field.clone());
    }
    if let Some(rest) = core.strip_prefix("gang.roles[") {
        let (name, part) = rest.split_once(']').unwrap_or((rest, ""));
        // A count that slices do not divide: the slice size is what to change.
        if part == ".count" {
            if let Some(s) = w.topology.slices.first() {
                return Some(s.field.clone());
            }
        }
        return w
            .roles
            .iter()
            .enumerate()
            .find(|(i, r)| r.name == name || i.to_string() == name)
            .map(|(_, r)| r.from.clone());
    }
    let t = &w.topology;
    if core.starts_with("gang.topology.required") {
        return t.required.as_ref().map(|l| l.field.clone());
    }
    if core.starts_with("gang.topology.preferred") {
        return t.preferred.as_ref().map(|l| l.field.clone());
    }
    if let Some(rest) = core.strip_prefix("gang.topology.slices[") {
        let i: usize = rest.split_once(']')?.0.parse().ok()?;
        return t.slices.get(i).map(|s| s.field.clone());
    }
    if core.starts_with("gang.topology.slices") {
        return t.slices.first().map(|s| s.field.clone());
    }
    None
}

/// The workload as one of its Kueue parts: only the part's roles (constrained when the
/// part asks for a topology), under the part's request.
fn part_view(w: &WorkloadGang, part: &TopologyPart) -> WorkloadGang {
    let t = &part.topology;
    let asks = t.required.is_some() || t.preferred.is_some() || !t.slices.is_empty();
    WorkloadGang {
        roles: w
            .roles
            .iter()
            .filter(|r| part.roles.contains(&r.name))
            .map(|r| MemberRole {
                constrained: asks,
                ..r.clone()
            })
            .collect(),
        topology: t.clone(),
        ..w.clone()
    }
}

fn at_object(kind: ErrorKind, r: &ObjectRef, reason: impl Into<String>) -> Error {
    Error::new(kind, &r.source, reason)
        .with_object(r.to_string())
        .with_position(r.position.clone())
}

impl Cluster {
    fn resolve(&self, w: &WorkloadGang, l: &LevelRequest) -> Result<Option<String>, Error> {
        let levels = self.topology.levels();
        let labels: Vec<&String> = levels.iter().filter(|l| *l != HOSTNAME_LEVEL).collect();
        match &l.level {
            Level::Key(k) if k == HOSTNAME_LEVEL || levels.contains(k) => Ok(Some(k.clone())),
            Level::Key(k) => Err(at_object(
                ErrorKind::UnknownLevel,
                &w.object,
                format!(
                    "not a level of the cluster's topology ({}): give levels that include it (gang's --levels, a Kueue Topology)",
                    if levels.is_empty() {
                        "flat: no levels".to_owned()
                    } else {
                        levels.join(", ")
                    }
                ),
            )
            .with_field(l.field.clone())
            .with_value(k.clone())),
            Level::Tier(t) => {
                let t = *t as usize;
                Ok((t <= labels.len()).then(|| labels[labels.len() - t].clone()))
            }
        }
    }

    fn depth(&self, key: &str) -> usize {
        self.topology
            .levels()
            .iter()
            .position(|l| l == key)
            .unwrap_or(usize::MAX)
    }

    /// The required level after resolution: the innermost of those named.
    fn required_level(&self, w: &WorkloadGang) -> Result<Option<String>, Error> {
        let mut best: Option<String> = None;
        for l in w.topology.required.iter().chain(&w.topology.also_required) {
            let flat = self.topology.levels().iter().all(|k| k == HOSTNAME_LEVEL);
            if let (Level::Tier(t), true) = (&l.level, flat) {
                // Volcano hard mode with nothing to read tiers from: Volcano leaves the
                // job pending; never silently unconstrained.
                return Err(at_object(
                    ErrorKind::UnknownLevel,
                    &w.object,
                    "hard network topology, but the cluster's topology has no levels to read HyperNode tiers from (no HyperNode objects are read; tiers are node label levels counted from the nodes up): give the levels (--levels KEY,KEY or a Kueue Topology)",
                )
                .with_field(l.field.clone())
                .with_value(t.to_string()));
            }
            if let Some(k) = self.resolve(w, l)? {
                let deeper = match &best {
                    None => true,
                    Some(b) => {
                        k == HOSTNAME_LEVEL
                            || (b != HOSTNAME_LEVEL && self.depth(&k) > self.depth(b))
                    }
                };
                if deeper {
                    best = Some(k);
                }
            }
        }
        Ok(best)
    }

    /// The roles with what the ExtendedResourceToleration admission plugin adds, when
    /// on ([`ClusterOptions::extended_resource_toleration`](crate::ClusterOptions::extended_resource_toleration)):
    /// a `NoSchedule` toleration of each extended resource a member requests.
    fn admitted(&self, roles: &[MemberRole]) -> Vec<MemberRole> {
        let mut out = roles.to_vec();
        if self.extended_toleration {
            for r in &mut out {
                for k in r.requests.keys() {
                    if crate::cluster::is_extended_resource(k) {
                        r.tolerations.push(
                            Toleration::exists(k.clone())
                                .effect(gang_core::TaintEffect::NoSchedule),
                        );
                    }
                }
            }
        }
        out
    }

    fn extra_tolerations(&self, w: &WorkloadGang) -> Vec<Toleration> {
        match (&self.report.topology.flavor, w.kueue) {
            (Some(f), true) => f.tolerations.clone(),
            _ => Vec::new(),
        }
    }

    /// The workload's gang against this cluster (when its members already run, build
    /// the cluster with [`ClusterOptions::ignore_pods`](crate::ClusterOptions::ignore_pods)
    /// over its `member_pods`, so they do not count twice): levels checked against the cluster's
    /// topology (Volcano tiers resolved: tier 1 is the innermost label level; a tier
    /// above the top level leaves the gang unconstrained), of several required keys the
    /// innermost, and for Kueue-managed workloads the ResourceFlavor's tolerations.
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, ErrorKind, Objects};
    /// let objects = Objects::parse("all.yaml", r#"
    /// apiVersion: v1
    /// kind: Node
    /// metadata: {name: n1, labels: {topology.example.com/rack: r1}}
    /// status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata: {name: train, namespace: ml}
    /// spec:
    ///   parallelism: 2
    ///   template:
    ///     metadata:
    ///       annotations: {kueue.x-k8s.io/podset-required-topology: topology.example.com/block}
    ///     spec:
    ///       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]
    /// "#)?;
    /// let cluster = Cluster::from_objects(&objects, &ClusterOptions::new())?;
    /// let w = &workloads(&objects)?[0];
    /// let err = cluster.gang_for(w).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnknownLevel);
    /// assert_eq!(err.object(), Some("Job/ml/train"));
    /// assert_eq!(err.value(), Some("topology.example.com/block"));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::UnknownLevel`] for a level the topology does not have;
    /// [`ErrorKind::InvalidMinimum`] when the workload has no members or a minimum above
    /// them (the group can never become ready: see its checks).
    pub fn gang_for(&self, w: &WorkloadGang) -> Result<Gang, Error> {
        if w.object.name.is_empty() {
            // Refused here, not by gang-core's `gang.name` when the gang is used: a
            // face that builds every workload's gang (Python's `gang.kube.load`) gets
            // this workload's error, not a failure of the whole read.
            return Err(at_object(
                ErrorKind::InvalidValue,
                &w.object,
                "the object has neither metadata.name nor metadata.generateName",
            )
            .with_field("metadata.name"));
        }
        if w.members == 0 || w.roles.is_empty() {
            return Err(at_object(
                ErrorKind::InvalidMinimum,
                &w.object,
                "no members to place (no member pods found)",
            ));
        }
        if w.minimum > w.members {
            return Err(at_object(
                ErrorKind::InvalidMinimum,
                &w.object,
                format!(
                    "more than the {} members found: the group can never become ready",
                    w.members
                ),
            )
            .with_field(w.minimum_field.clone())
            .with_value(w.minimum.to_string()));
        }
        let required = self.required_level(w)?;
        let preferred = match &w.topology.preferred {
            Some(l) => self.resolve(w, l)?,
            None => None,
        };
        let mut slices = Vec::new();
        for s in &w.topology.slices {
            let l = LevelRequest {
                level: s.level.clone(),
                field: s.field.clone(),
            };
            if let Some(k) = self.resolve(w, &l)? {
                slices.push((k, s.size));
            }
        }
        // Exclusive topology: each child Job's pods in one domain (a slice each); that
        // the Jobs find distinct domains is gang-core's spread (`exclusive_outcome`).
        if let Some((level, _, size)) = self.exclusive(w)? {
            let inside = required
                .as_deref()
                .is_none_or(|r| self.depth(&level) >= self.depth(r));
            if inside && !slices.iter().any(|(l, n)| *l == level && *n == size) {
                slices.insert(0, (level, size));
            }
        }
        let mut gang = build_gang(
            &w.object.name,
            &self.admitted(&w.roles),
            required.as_deref(),
            preferred.as_deref(),
            &slices,
            &self.extra_tolerations(w),
        );
        // A class not in the input leaves the priority at 0 here (placing does not
        // need it); `priority_of` reports it.
        if let Ok(p) = self.priority_of(w) {
            gang.set_priority(p.value);
        }
        Ok(gang)
    }

    /// The workload's priority, as Kubernetes gives its pods: per role, the pod
    /// template's (or member pods') `spec.priority`, else its `priorityClassName`
    /// resolved through the input's `PriorityClass` objects, else the class marked
    /// `globalDefault`, else 0; the workload's is the highest over its roles (roles
    /// of one workload share a class in practice). `preempts` is false when a role's
    /// class says `preemptionPolicy: Never`.
    ///
    /// Before all of these, as Kueue does: when the workload object carries the label
    /// `kueue.x-k8s.io/priority-class` ([`WorkloadGang::workload_priority_class`](crate::WorkloadGang::workload_priority_class)), the
    /// Kueue `WorkloadPriorityClass` it names gives the priority
    /// ([`PrioritySource::WorkloadPriorityClass`](crate::PrioritySource::WorkloadPriorityClass);
    /// it has no `preemptionPolicy`, so `preempts` is true).
    ///
    /// Kubernetes' `preemptionPolicy: Never` means "does not preempt others", not "may
    /// not be evicted": it does not make the gang gang-core's
    /// [`PreemptionPolicy::Never`](gang_core::PreemptionPolicy::Never).
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, Objects};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: Node
    /// metadata: {name: n1}
    /// status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
    /// ---
    /// apiVersion: scheduling.k8s.io/v1
    /// kind: PriorityClass
    /// metadata: {name: urgent}
    /// value: 1000
    /// preemptionPolicy: Never
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata: {name: train, namespace: ml}
    /// spec:
    ///   parallelism: 2
    ///   template:
    ///     spec:
    ///       priorityClassName: urgent
    ///       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new())?;
    /// let w = &workloads(&o)?[0];
    /// let p = c.priority_of(w)?;
    /// assert_eq!((p.value, p.class.as_deref(), p.preempts), (1000, Some("urgent"), false));
    /// assert_eq!(c.gang_for(w)?.get_priority(), 1000);
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidValue`] on the workload object when a role names a
    /// `priorityClassName` that no `PriorityClass` in the input has (give
    /// `kubectl get priorityclasses -o json` too), or whose
    /// `kueue.x-k8s.io/priority-class` label names no `WorkloadPriorityClass` in the
    /// input (field `metadata.labels.kueue.x-k8s.io/priority-class`).
    pub fn priority_of(&self, w: &WorkloadGang) -> Result<WorkloadPriority, Error> {
        resolve(&self.priorities, w)
    }

    /// Places the workload's gang ([`Cluster::gang_for`]) on `inventory` (built by
    /// [`Cluster::inventory`]): a placement, or gang-core's diagnosis.
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, ErrorKind, Objects};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: Node
    /// metadata: {name: n1, labels: {topology.example.com/rack: r1}}
    /// status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata: {name: train, namespace: ml}
    /// spec:
    ///   parallelism: 3
    ///   template:
    ///     metadata:
    ///       annotations:
    ///         kueue.x-k8s.io/podset-required-topology: topology.example.com/rack
    ///         kueue.x-k8s.io/podset-slice-required-topology: kubernetes.io/hostname
    ///         kueue.x-k8s.io/podset-slice-size: "2"
    ///     spec:
    ///       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new())?;
    /// let inv = c.inventory()?;
    /// // 3 pods are not slices of 2: gang-core's error, on the workload object.
    /// let err = c.place(&inv, &workloads(&o)?[0]).unwrap_err();
    /// assert_eq!((err.kind(), err.object()), (ErrorKind::Core, Some("Job/ml/train")));
    /// // At the field of the object it came from, not gang-core's `gang.roles[main].count`.
    /// assert_eq!(err.field(), Some("spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-required-topology"));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Cluster::gang_for`]; [`ErrorKind::Core`] on the workload object when
    /// gang-core rejects the request (a slice size that does not divide a role's count,
    /// a contradictory request), at the field of the object the request came from
    /// (the name, the role's pod template, the topology annotation), and gang-core's own
    /// path in the message when it maps to no field.
    pub fn place(&self, inventory: &Inventory, w: &WorkloadGang) -> Result<Outcome, Error> {
        let gang = self.gang_for(w)?;
        if let Some(o) = self.part_failure(inventory, w)? {
            return Ok(o);
        }
        inventory.place(&gang).map_err(|e| request_error(w, e))
    }

    /// The answer of the first part that does not fit: a JobSet's child Jobs that do not
    /// find distinct domains, or a Kueue part (see [`Cluster::place_parts`]).
    fn part_failure(
        &self,
        inventory: &Inventory,
        w: &WorkloadGang,
    ) -> Result<Option<Outcome>, Error> {
        if let Some(SpreadOutcome::Unschedulable {
            diagnosis: Some(d), ..
        }) = self.exclusive_outcome(inventory, w)?
        {
            return Ok(Some(Outcome::Unschedulable(d)));
        }
        Ok(self
            .kueue_parts(inventory, w)?
            .into_iter()
            .map(|p| p.outcome)
            .find(|o| !o.is_placed()))
    }

    /// The workload placed part by part, when it has parts placed on their own: each
    /// child Job of a JobSet with `alpha.jobset.sigs.k8s.io/exclusive-topology` (its own
    /// domain of that level, from gang-core's spread), or each Kueue part of a workload
    /// whose PodSets ask for their own domains ([`TopologyRequest::parts`](crate::TopologyRequest::parts)),
    /// placed in PodSet order on what the earlier parts left, as Kueue does (stopping at
    /// the first that does not fit). Empty for a workload placed as one gang. Nothing
    /// is held on `inventory`.
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, Objects};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: List
    /// items:
    /// - {apiVersion: v1, kind: Node, metadata: {name: a1, labels: {rack: a}}, status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}}
    /// - {apiVersion: v1, kind: Node, metadata: {name: b1, labels: {rack: b}}, status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}}
    /// - apiVersion: jobset.x-k8s.io/v1alpha2
    ///   kind: JobSet
    ///   metadata: {name: js, namespace: ml, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}}
    ///   spec:
    ///     replicatedJobs:
    ///     - name: w
    ///       replicas: 2
    ///       template:
    ///         spec:
    ///           parallelism: 2
    ///           template:
    ///             spec:
    ///               containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new().topology(gang_kube::TopologySource::Levels(vec!["rack".into()])))?;
    /// let parts = c.place_parts(&c.inventory()?, &workloads(&o)?[0])?;
    /// let racks: Vec<String> = parts.iter().map(|p| p.outcome.placement().unwrap().domain_path()).collect();
    /// assert_eq!((parts[0].name.as_str(), racks.len()), ("w-0", 2));
    /// assert_ne!(racks[0], racks[1]); // one child Job per rack
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Cluster::place`].
    pub fn place_parts(
        &self,
        inventory: &Inventory,
        w: &WorkloadGang,
    ) -> Result<Vec<PartOutcome>, Error> {
        if let Some(SpreadOutcome::Placed { placements, .. }) =
            self.exclusive_outcome(inventory, w)?
        {
            let role = w.roles.first().map(|r| r.name.clone()).unwrap_or_default();
            return Ok(placements
                .into_iter()
                .enumerate()
                .map(|(i, p)| PartOutcome {
                    name: format!("{role}-{i}"),
                    roles: vec![role.clone()],
                    outcome: Outcome::Placed(p),
                })
                .collect());
        }
        self.kueue_parts(inventory, w)
    }

    /// The parts [`Cluster::place_parts`] places, as they ask to be placed: each child
    /// Job of a JobSet with `alpha.jobset.sigs.k8s.io/exclusive-topology` (required at
    /// that level, `REPLICATED-JOB-INDEX`), or each Kueue PodSet or PodSet group when
    /// more than one asks for a topology of its own (its request, levels resolved as
    /// [`Cluster::gang_for`] resolves them). Empty for a workload placed as one gang
    /// (a Volcano job's partitions are slices of that gang: see its `slices`).
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, Objects, TopologySource};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: List
    /// items:
    /// - {apiVersion: v1, kind: Node, metadata: {name: a1, labels: {rack: a}}, status: {allocatable: {cpu: "8", pods: "110"}}}
    /// - apiVersion: jobset.x-k8s.io/v1alpha2
    ///   kind: JobSet
    ///   metadata: {name: js, namespace: ml, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}}
    ///   spec:
    ///     replicatedJobs:
    ///     - name: w
    ///       replicas: 2
    ///       template:
    ///         spec:
    ///           parallelism: 3
    ///           template:
    ///             spec:
    ///               containers: [{name: c, resources: {requests: {cpu: "1"}}}]
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new().topology(TopologySource::Levels(vec!["rack".into()])))?;
    /// let parts = c.parts(&workloads(&o)?[0])?;
    /// let asked: Vec<(&str, u32, Option<&str>)> =
    ///     parts.iter().map(|p| (p.name.as_str(), p.members, p.required.as_deref())).collect();
    /// assert_eq!(asked, [("w-0", 3, Some("rack")), ("w-1", 3, Some("rack"))]);
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Cluster::gang_for`] (a level the cluster's topology does not have).
    pub fn parts(&self, w: &WorkloadGang) -> Result<Vec<PartRequest>, Error> {
        if let Some((level, jobs, size)) = self.exclusive(w)? {
            let role = w.roles.first().map(|r| r.name.clone()).unwrap_or_default();
            let field = w.topology.exclusive.as_ref().map(|x| x.field.clone());
            return Ok((0..jobs)
                .map(|i| PartRequest {
                    name: format!("{role}-{i}"),
                    group: None,
                    roles: vec![role.clone()],
                    members: size,
                    required: Some(level.clone()),
                    preferred: None,
                    slices: Vec::new(),
                    field: field.clone(),
                })
                .collect());
        }
        if w.topology.parts.len() < 2 {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for part in &w.topology.parts {
            let view = part_view(w, part);
            let gang = self.gang_for(&view)?;
            let t = gang.get_topology();
            let req = &part.topology;
            out.push(PartRequest {
                name: part.name.clone(),
                group: part.group.clone(),
                roles: part.roles.clone(),
                members: view.roles.iter().map(|r| r.members).sum(),
                required: t.required.clone(),
                preferred: t.preferred.clone(),
                slices: t.slices.clone(),
                field: req
                    .required
                    .as_ref()
                    .or(req.preferred.as_ref())
                    .map(|l| l.field.clone())
                    .or_else(|| req.slices.first().map(|s| s.field.clone())),
            });
        }
        Ok(out)
    }

    /// Kueue's parts placed in order, each on what the earlier ones left.
    fn kueue_parts(
        &self,
        inventory: &Inventory,
        w: &WorkloadGang,
    ) -> Result<Vec<PartOutcome>, Error> {
        if w.topology.parts.len() < 2 {
            return Ok(Vec::new());
        }
        let mut copy = inventory.clone();
        let mut out = Vec::new();
        for part in &w.topology.parts {
            let view = part_view(w, part);
            let gang = self.gang_for(&view)?;
            let outcome = copy.place(&gang).map_err(|e| request_error(&view, e))?;
            let placed = match &outcome {
                Outcome::Placed(p) => {
                    copy.reserve(p).map_err(|e| request_error(&view, e))?;
                    true
                }
                _ => false,
            };
            out.push(PartOutcome {
                name: part.name.clone(),
                roles: part.roles.clone(),
                outcome,
            });
            if !placed {
                break;
            }
        }
        Ok(out)
    }

    /// A JobSet's exclusive topology resolved: (level, child Jobs, pods per Job).
    fn exclusive(&self, w: &WorkloadGang) -> Result<Option<(String, u32, u32)>, Error> {
        let Some(x) = &w.topology.exclusive else {
            return Ok(None);
        };
        let l = LevelRequest {
            level: x.level.clone(),
            field: x.field.clone(),
        };
        match self.resolve(w, &l)? {
            Some(k) if x.size > 0 => Ok(Some((k, w.members / x.size, x.size))),
            _ => Ok(None),
        }
    }

    /// gang-core's spread of the child Jobs over distinct domains of the exclusive level
    /// (on a copy of `inventory`: nothing is held), or `None` without that request.
    fn exclusive_outcome(
        &self,
        inventory: &Inventory,
        w: &WorkloadGang,
    ) -> Result<Option<SpreadOutcome>, Error> {
        let Some((level, jobs, size)) = self.exclusive(w)? else {
            return Ok(None);
        };
        let mut one = w.roles[..1].to_vec();
        one[0].members = size;
        one[0].min_count = None;
        one[0].constrained = true;
        let job = build_gang(
            &w.object.name,
            &self.admitted(&one),
            Some(&level),
            None,
            &[],
            &self.extra_tolerations(w),
        );
        let mut copy = inventory.clone();
        copy.spread(&Spread::new(job, jobs, level))
            .map(Some)
            .map_err(|e| request_error(w, e))
    }

    /// The `exclusive_jobs` check: whether the child Jobs find distinct domains.
    fn exclusive_check(&self, w: &WorkloadGang) -> Option<Check> {
        let (level, jobs, _) = self.exclusive(w).ok()??;
        let inventory = self.inventory().ok()?;
        let (status, message) = match self.exclusive_outcome(&inventory, w).ok()?? {
            SpreadOutcome::Placed { .. } => (
                CheckStatus::Ok,
                format!("{jobs} child Jobs, each alone in a domain of {level}: {jobs} such domains have room now"),
            ),
            SpreadOutcome::Unschedulable { fit, needed, .. } => (
                CheckStatus::Error,
                format!("{needed} child Jobs each need a domain of {level} of their own; {fit} have room now: JobSet leaves the rest pending"),
            ),
        };
        Some(Check::new("exclusive_jobs", status, message))
    }

    /// As [`Cluster::place`], with everything `gang explain` shows beside the answer:
    /// each role's excluded nodes by cause and the best domain of every level
    /// (gang-core's [`Inventory::explain`]).
    ///
    /// # Errors
    /// As [`Cluster::place`].
    pub fn explain(&self, inventory: &Inventory, w: &WorkloadGang) -> Result<Explanation, Error> {
        let gang = self.gang_for(w)?;
        let mut e = inventory.explain(&gang).map_err(|e| request_error(w, e))?;
        if let Some(o) = self.part_failure(inventory, w)? {
            e.outcome = o;
        }
        Ok(e)
    }

    /// Nodes that cannot take a member of `role`, by reason (see [`RoleExclusions`]).
    /// Levels that do not resolve are left out of the missing-label count.
    ///
    /// ```
    /// use gang_kube::{workloads, Cluster, ClusterOptions, Objects};
    /// let objects = Objects::parse("all.yaml", r#"
    /// apiVersion: v1
    /// kind: List
    /// items:
    /// - apiVersion: v1
    ///   kind: Node
    ///   metadata: {name: n1}
    ///   spec: {taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}
    ///   status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
    /// - apiVersion: v1
    ///   kind: Node
    ///   metadata: {name: n2}
    ///   status: {allocatable: {nvidia.com/gpu: "4", pods: "110"}}
    /// - apiVersion: batch/v1
    ///   kind: Job
    ///   metadata: {name: train}
    ///   spec:
    ///     template:
    ///       spec:
    ///         containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]
    /// "#)?;
    /// let cluster = Cluster::from_objects(&objects, &ClusterOptions::new())?;
    /// let w = &workloads(&objects)?[0];
    /// let x = cluster.exclusions(w, &w.roles[0]);
    /// assert_eq!(x.taints["nvidia.com/gpu"], 1); // n1: untolerated taint
    /// assert_eq!(x.too_small["nvidia.com/gpu"], 1); // n2: 4 GPUs, needs 8
    /// assert_eq!((x.fits_now, x.excluded()), (0, 2));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn exclusions(&self, w: &WorkloadGang, role: &MemberRole) -> RoleExclusions {
        let mut x = RoleExclusions {
            role: role.name.clone(),
            nodes: self.info.len(),
            ..RoleExclusions::default()
        };
        // Cordoned in the inventory: said here by the Kubernetes reason.
        for info in &self.info {
            match info.exclusions.first() {
                Some(NodeExclusion::NotReady { .. }) => x.not_ready += 1,
                Some(NodeExclusion::Unschedulable) => x.unschedulable += 1,
                Some(NodeExclusion::OutsideFlavor { .. }) => x.outside_flavor += 1,
                None => {}
            }
        }
        let Some(report) = self.role_report(w, role) else {
            return x;
        };
        for c in &report.causes {
            let n = c.nodes as usize;
            let key = c.key.clone();
            match c.reason {
                ExclusionReason::Taint => *x.taints.entry(key).or_default() += n,
                ExclusionReason::Selector => *x.selector.entry(key).or_default() += n,
                ExclusionReason::MissingLabel => *x.missing_level.entry(key).or_default() += n,
                ExclusionReason::TooSmall => *x.too_small.entry(key).or_default() += n,
                ExclusionReason::Full => {
                    *x.short_now.entry(key).or_default() += n;
                    x.fits_empty += n;
                }
                _ => {}
            }
        }
        x.fits_now = report.fitting_nodes as usize;
        x.fits_empty += x.fits_now;
        x.causes = report
            .causes
            .into_iter()
            .filter(|c| c.reason != ExclusionReason::Cordoned)
            .collect();
        x
    }

    /// gang-core's report on `role`: of the workload's gang when it can be built, else
    /// of the role alone (under the required level when it resolves); `None` when
    /// gang-core rejects even that.
    fn role_report(&self, w: &WorkloadGang, role: &MemberRole) -> Option<RoleReport> {
        let inventory = self.inventory().ok()?;
        if let Ok(gang) = self.gang_for(w) {
            if let Ok(reports) = inventory.role_reports(&gang) {
                return reports.into_iter().find(|r| r.role == role.name);
            }
        }
        let alone = MemberRole {
            min_count: None,
            ..role.clone()
        };
        let required = self
            .required_level(w)
            .ok()
            .flatten()
            .filter(|_| role.constrained);
        let gang = build_gang(
            "role",
            &self.admitted(&[alone]),
            required.as_deref(),
            None,
            &[],
            &self.extra_tolerations(w),
        );
        inventory.role_reports(&gang).ok()?.pop()
    }

    /// The checks that need the cluster: for each role, whether any node can hold one
    /// member now, or ever (`shape_fits`). Levels that do not resolve are left out (see
    /// [`Cluster::gang_for`]).
    ///
    /// ```
    /// use gang_kube::{workloads, CheckStatus, Cluster, ClusterOptions, Objects};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: Node
    /// metadata: {name: n1}
    /// status: {allocatable: {nvidia.com/gpu: "4", pods: "110"}}
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata: {name: big}
    /// spec:
    ///   template:
    ///     spec:
    ///       containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new())?;
    /// let check = &c.checks(&workloads(&o)?[0])[0];
    /// assert_eq!((check.id, check.status), ("shape_fits", CheckStatus::Error));
    /// assert!(check.message.contains("largest allocatable 4, one member needs 8"), "{}", check.message);
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn checks(&self, w: &WorkloadGang) -> Vec<Check> {
        let mut out: Vec<Check> = self.exclusive_check(w).into_iter().collect();
        for r in &w.roles {
            let x = self.exclusions(w, r);
            let shape: Vec<String> = r
                .requests
                .iter()
                .map(|(k, v)| format!("{k} {}", v.human(k)))
                .collect();
            let (status, message) = if x.fits_empty == 0 {
                let mut why: Vec<String> = Vec::new();
                for (k, n) in &x.too_small {
                    let largest = self
                        .usage
                        .iter()
                        .map(|u| u.allocatable.get(k).copied().unwrap_or(Quantity::ZERO))
                        .max()
                        .unwrap_or(Quantity::ZERO);
                    why.push(format!(
                        "{n} node(s) too small in {k} (largest allocatable {}, one member needs {})",
                        largest.human(k),
                        r.requests.get(k).copied().unwrap_or(Quantity::ZERO).human(k)
                    ));
                }
                for (k, n) in &x.taints {
                    if r.requests.contains_key(k) {
                        why.push(format!(
                            "{n} with untolerated taint {k} (clusters running the ExtendedResourceToleration admission plugin, as GKE does, add this toleration to pods that request {k} when they are created)"
                        ));
                    } else {
                        why.push(format!("{n} with untolerated taint {k}"));
                    }
                }
                for (k, n) in &x.selector {
                    why.push(format!("{n} failing the selector on {k}"));
                }
                for (k, n) in &x.missing_level {
                    why.push(format!("{n} without level label {k}"));
                }
                let cordoned = x.not_ready + x.unschedulable + x.outside_flavor;
                if cordoned > 0 {
                    why.push(format!(
                        "{cordoned} not ready, cordoned or outside the flavor"
                    ));
                }
                (
                    CheckStatus::Error,
                    format!(
                        "no node can ever hold one {} member ({}): {}",
                        r.name,
                        shape.join(", "),
                        if why.is_empty() {
                            "no nodes".to_owned()
                        } else {
                            why.join("; ")
                        }
                    ),
                )
            } else if x.fits_now == 0 {
                (
                    CheckStatus::Warning,
                    format!(
                        "no node has room for one {} member now; {} would when free",
                        r.name, x.fits_empty
                    ),
                )
            } else {
                (
                    CheckStatus::Ok,
                    format!(
                        "one {} member fits on {} node(s) now ({} when free)",
                        r.name, x.fits_now, x.fits_empty
                    ),
                )
            };
            out.push(Check {
                id: "shape_fits",
                status,
                role: Some(r.name.clone()),
                message,
            });
        }
        out
    }
}
