//! Nodes and the pods running on them → gang-core [`NodeSpec`]s and an [`Inventory`].

use std::collections::{BTreeMap, HashSet};

use gang_core::{EvictableUnit, Inventory, NodeSpec, Quantity, Taint, Topology};
use serde::Serialize;

use crate::convert;
use crate::error::{Error, ErrorKind};
use crate::model::body::Body;
use crate::model::core_v1::Node;
use crate::objects::Objects;
use crate::origin::{ObjectRef, Origin};
use crate::priority::{workload_of, PriorityClassInfo, PriorityClasses, WorkloadPriorityClassInfo};
use crate::requests::{pod_requests_acc, Acc, Resources};
use crate::topology::{choose, core_reason, TopologyChoice, TopologySource};

/// How to read a cluster from objects: the topology source and pods not to count.
///
/// ```
/// use gang_kube::{ClusterOptions, TopologySource};
/// let o = ClusterOptions::new()
///     .topology(TopologySource::Levels(vec!["topology.example.com/rack".into()]))
///     .ignore_pod("ml-team", "training-workers-0");
/// assert_eq!(o.ignored_pods().len(), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    topology: TopologySource,
    ignore: HashSet<(String, String)>,
    evictable: bool,
    extended_toleration: bool,
}

impl ClusterOptions {
    /// Topology [`TopologySource::Auto`], every bound pod counted. See [`ClusterOptions`].
    pub fn new() -> Self {
        ClusterOptions::default()
    }

    /// Where the topology levels come from. See [`ClusterOptions`].
    pub fn topology(mut self, source: TopologySource) -> Self {
        self.topology = source;
        self
    }

    /// Does not count this pod's usage (a member of the gang being asked about, already
    /// bound). See [`ClusterOptions`].
    pub fn ignore_pod(mut self, namespace: impl Into<String>, name: impl Into<String>) -> Self {
        self.ignore.insert((namespace.into(), name.into()));
        self
    }

    /// Ignores every pod in `pods` (e.g. a workload's
    /// [`member_pods`](crate::WorkloadGang::member_pods)). See [`ClusterOptions`].
    pub fn ignore_pods<'a>(mut self, pods: impl IntoIterator<Item = &'a ObjectRef>) -> Self {
        for p in pods {
            self.ignore
                .insert((p.namespace.clone().unwrap_or_default(), p.name.clone()));
        }
        self
    }

    /// The pods not counted, as (namespace, name). See [`ClusterOptions`].
    pub fn ignored_pods(&self) -> &HashSet<(String, String)> {
        &self.ignore
    }

    /// Declares the running pods as evictable work instead of plain usage, so that
    /// gang-core's preemption may evict them: one
    /// [`EvictableUnit`](gang_core::EvictableUnit) per workload (its PodGroup, JobSet,
    /// owner, or the pod alone), with its PodGroup's own priority when the group sets
    /// one (`spec.priority`, `spec.priorityClassName`), else the highest priority among
    /// its pods, evicted whole or not at all. Free capacity is the same either way. Off by default
    /// (placing does not need it). See [`Cluster::evictable`].
    pub fn evictable_pods(mut self, on: bool) -> Self {
        self.evictable = on;
        self
    }

    /// Models the ExtendedResourceToleration admission plugin (on in GKE, off in a
    /// vanilla kube-apiserver, the default): a pod requesting an extended resource
    /// (`nvidia.com/gpu`, `google.com/tpu`) tolerates `NoSchedule` taints of that key.
    /// [`ClusterReport::warnings`] says which is assumed when a node carries such a taint.
    ///
    /// ```
    /// use gang_kube::ClusterOptions;
    /// let gke = ClusterOptions::new().extended_resource_toleration(true);
    /// # let _ = gke;
    /// ```
    pub fn extended_resource_toleration(mut self, on: bool) -> Self {
        self.extended_toleration = on;
        self
    }
}

/// An extended resource, as Kubernetes tells one (`IsExtendedResourceName`): a name
/// with a domain outside `kubernetes.io`, not a quota's `requests.` form.
pub(crate) fn is_extended_resource(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// Why a node takes no members. Part of an [`ExcludedNode`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NodeExclusion {
    /// The `Ready` condition is not `True` (its taint may lag the condition).
    NotReady {
        /// The condition's status (`False`, `Unknown`).
        status: String,
        /// The condition's reason (`KubeletNotReady`), if given.
        detail: String,
    },
    /// `spec.unschedulable` (cordoned).
    Unschedulable,
    /// The node lacks a label of the Kueue ResourceFlavor the topology came from.
    OutsideFlavor {
        /// The flavor.
        flavor: String,
        /// The label key.
        label: String,
        /// The value the flavor asks for.
        want: String,
        /// The node's value, if it has the label.
        have: Option<String>,
    },
}

impl std::fmt::Display for NodeExclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeExclusion::NotReady { status, detail } if detail.is_empty() => {
                write!(f, "not ready (Ready={status})")
            }
            NodeExclusion::NotReady { status, detail } => {
                write!(f, "not ready (Ready={status}, {detail})")
            }
            NodeExclusion::Unschedulable => f.write_str("unschedulable (cordoned)"),
            NodeExclusion::OutsideFlavor {
                flavor,
                label,
                want,
                ..
            } => write!(f, "outside ResourceFlavor {flavor} ({label}={want})"),
        }
    }
}

/// A node that takes no members, and every reason why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExcludedNode {
    /// Node name.
    pub node: String,
    /// Reasons, in the order not ready, unschedulable, outside the flavor.
    pub reasons: Vec<NodeExclusion>,
}

/// How the pods in the input were counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PodCounts {
    /// Pods counted against their node.
    pub counted: usize,
    /// Pods in phase `Succeeded` or `Failed` (they hold nothing).
    pub terminal: usize,
    /// Pods not bound to a node (pending): they hold nothing.
    pub unbound: usize,
    /// Pods left out on request ([`ClusterOptions::ignore_pod`]).
    pub ignored: usize,
    /// Pods bound to a node that is not in the input (not counted).
    pub on_unknown_nodes: usize,
}

/// Nodes whose label of a topology level is missing (they are outside every domain of
/// that level and finer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelCoverage {
    /// The level key.
    pub level: String,
    /// Nodes with the label.
    pub labelled: usize,
    /// Nodes without it.
    pub missing: usize,
    /// Distinct domains at this level.
    pub domains: usize,
}

/// What reading the cluster found: the topology and why, nodes excluded and why, taints,
/// label coverage, pods, warnings. Serialisable for a command's JSON output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterReport {
    /// The topology chosen.
    pub topology: TopologyChoice,
    /// Node objects read.
    pub nodes: usize,
    /// Nodes that can take members (not excluded).
    pub schedulable: usize,
    /// Excluded nodes with their reasons, in input order.
    pub excluded: Vec<ExcludedNode>,
    /// Nodes per taint (`key=value:Effect`), among all nodes.
    pub taints: BTreeMap<String, usize>,
    /// Per topology level, how many nodes carry its label.
    pub levels: Vec<LevelCoverage>,
    /// How the pods were counted.
    pub pods: PodCounts,
    /// What was read but could not be honoured exactly, or looks wrong.
    pub warnings: Vec<String>,
}

/// A node's allocatable capacity and what running pods use of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeUsage {
    /// Node name.
    pub node: String,
    /// `status.allocatable`.
    pub allocatable: Resources,
    /// Requests of the non-terminal pods bound to it (with `pods` their count).
    pub used: Resources,
}

#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
    pub taints: Vec<Taint>,
    pub exclusions: Vec<NodeExclusion>,
    pub origin: ObjectRef,
}

/// A cluster read from Kubernetes objects: gang-core node descriptions, the topology,
/// what running pods use, and a report of what was found.
///
/// ```
/// use gang_kube::{Cluster, ClusterOptions, Objects};
/// let objects = Objects::parse("snapshot.yaml", r#"
/// apiVersion: v1
/// kind: Node
/// metadata:
///   name: gpu-1
///   labels: {topology.example.com/rack: r1}
/// status:
///   allocatable: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "110"}
///   conditions: [{type: Ready, status: "True"}]
/// ---
/// apiVersion: v1
/// kind: Node
/// metadata: {name: gpu-2, labels: {topology.example.com/rack: r1}}
/// spec: {unschedulable: true}
/// status:
///   allocatable: {cpu: "96", nvidia.com/gpu: "8", pods: "110"}
/// ---
/// apiVersion: v1
/// kind: Pod
/// metadata: {name: busy, namespace: default}
/// spec:
///   nodeName: gpu-1
///   containers: [{name: c, resources: {requests: {nvidia.com/gpu: "6", cpu: "8"}}}]
/// status: {phase: Running}
/// "#)?;
/// let cluster = Cluster::from_objects(&objects, &ClusterOptions::new())?;
/// let report = cluster.report();
/// assert_eq!(report.topology.levels, ["topology.example.com/rack"]);
/// assert_eq!((report.nodes, report.schedulable), (2, 1));
/// assert_eq!(report.excluded[0].reasons[0].to_string(), "unschedulable (cordoned)");
/// let inventory = cluster.inventory()?;
/// assert_eq!(inventory.free("gpu-1", "nvidia.com/gpu").unwrap().to_string(), "2");
/// assert_eq!(inventory.free("gpu-1", "pods").unwrap().to_string(), "109");
/// # Ok::<(), gang_kube::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Cluster {
    pub(crate) nodes: Vec<NodeSpec>,
    pub(crate) info: Vec<NodeInfo>,
    pub(crate) usage: Vec<NodeUsage>,
    pub(crate) topology: Topology,
    pub(crate) report: ClusterReport,
    pub(crate) priorities: PriorityClasses,
    pub(crate) units: Vec<EvictableUnit>,
    /// [`ClusterOptions::extended_resource_toleration`].
    pub(crate) extended_toleration: bool,
}

fn kind_error(source: &str, reason: &str) -> Error {
    Error::new(ErrorKind::UnexpectedKind, source, reason.to_owned())
}

impl Cluster {
    /// Reads the nodes, the pods bound to them and the topology from `objects`.
    ///
    /// Nodes: `status.allocatable` is the capacity; labels; `spec.taints`;
    /// `spec.unschedulable` and a `Ready` condition that is not `True` exclude the node
    /// (it stays in the inventory, cordoned, and the report says why; a node without a
    /// `Ready` condition is taken as ready, with a warning). Pods: every pod bound to a
    /// node (`spec.nodeName`) and not `Succeeded` or `Failed` uses its requests, counted
    /// as kube-scheduler does, and one `pods`. See [`TopologySource`] for the levels.
    ///
    /// # Errors
    /// [`ErrorKind::UnexpectedKind`] when there is no Node; [`ErrorKind::InvalidValue`]
    /// for an unknown taint effect or a usage sum that overflows;
    /// [`ErrorKind::MissingLabel`], [`ErrorKind::InvalidTopology`] for a topology that
    /// names a label no node has, or is invalid.
    pub fn from_objects(objects: &Objects, options: &ClusterOptions) -> Result<Cluster, Error> {
        Cluster::build(objects, options, None)
    }

    /// [`Cluster::from_objects`] on two threads or one (`None`: two for a large
    /// cluster, [`use_two_threads`]); the same answer either way.
    fn build(
        objects: &Objects,
        options: &ClusterOptions,
        two_threads: Option<bool>,
    ) -> Result<Cluster, Error> {
        let node_items: Vec<(&Node, &Origin)> = objects
            .items
            .iter()
            .filter_map(|i| match &i.body {
                Body::Node(n) => Some((&**n, &i.origin)),
                _ => None,
            })
            .collect();
        if node_items.is_empty() {
            let sources: Vec<String> = {
                let mut s: Vec<String> = objects
                    .items
                    .iter()
                    .map(|i| i.origin.source.to_string())
                    .collect();
                s.dedup();
                s
            };
            let source = sources.first().map(String::as_str).unwrap_or("input");
            return Err(kind_error(
                source,
                "no Node objects in the input (give `kubectl get nodes -o json`)",
            ));
        }
        let labels: Vec<&BTreeMap<String, String>> =
            node_items.iter().map(|(n, _)| &n.metadata.labels).collect();
        // The topology choice, the node descriptions' labels and capacities and the
        // levels' coverage go on a second thread for a large cluster while this one
        // reads the nodes and counts the pods ([`PARALLEL_NODES`]); errors are returned
        // in the order the steps come in on one thread (the topology's first).
        let side = || side_build(objects, options, &node_items, &labels);
        let main = || main_build(objects, options, &node_items);
        let two_threads = two_threads.unwrap_or_else(|| use_two_threads(node_items.len()));
        let (side, main) = if two_threads {
            std::thread::scope(|scope| {
                match std::thread::Builder::new().spawn_scoped(scope, side) {
                    Ok(handle) => {
                        #[cfg(test)]
                        tests::SPAWNED.with(|n| n.set(n.get() + 1));
                        let main = main();
                        let side = handle
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                        (side, main)
                    }
                    // A thread that cannot be started: the same steps on this one.
                    Err(_) => (side(), main()),
                }
            })
        } else {
            (Ok(side()?), main())
        };
        let Side {
            chosen,
            specs,
            levels,
        } = side?;
        let Main {
            mut info,
            usage,
            fixed,
            declared,
            pods,
            mut warnings,
            taints_seen,
            priorities,
        } = main?;
        if let Some(f) = &chosen.choice.flavor {
            for ((n, _), inf) in node_items.iter().zip(info.iter_mut()) {
                for (k, want) in &f.node_labels {
                    let have = n.metadata.labels.get(k);
                    if have != Some(want) {
                        inf.exclusions.push(NodeExclusion::OutsideFlavor {
                            flavor: f.name.clone(),
                            label: k.clone(),
                            want: want.clone(),
                            have: have.cloned(),
                        });
                        break;
                    }
                }
            }
        }
        let mut nodes = specs;
        for (i, (spec, inf)) in nodes.iter_mut().zip(&info).enumerate() {
            // Built in place (`set_*`), not moved through each builder call.
            let used = fixed.as_ref().map_or(&usage[i].used, |f| &f[i]);
            for (k, v) in used {
                spec.set_used(k.clone(), *v);
            }
            for t in &inf.taints {
                spec.add_taint(t.clone());
            }
            if !inf.exclusions.is_empty() {
                spec.set_schedulable(false);
            }
        }
        let excluded: Vec<ExcludedNode> = info
            .iter()
            .zip(&usage)
            .filter(|(i, _)| !i.exclusions.is_empty())
            .map(|(i, u)| ExcludedNode {
                node: u.node.clone(),
                reasons: i.exclusions.clone(),
            })
            .collect();
        let tainted = info
            .iter()
            .filter(|i| i.taints.iter().any(|t| is_extended_resource(&t.key)))
            .count();
        if tainted > 0 {
            warnings.push(if options.extended_toleration {
                format!("ExtendedResourceToleration on (as GKE): pods requesting an extended resource tolerate the NoSchedule taint of that name ({tainted} node(s) carry one)")
            } else {
                format!("ExtendedResourceToleration off (a vanilla kube-apiserver): {tainted} node(s) carry a taint named for an extended resource; on GKE, whose admission adds the toleration to pods requesting it, turn it on (`place`, `explain`, `preempt` --extended-resource-toleration; ClusterOptions::extended_resource_toleration)")
            });
        }
        let report = ClusterReport {
            topology: chosen.choice,
            nodes: info.len(),
            schedulable: info.len() - excluded.len(),
            excluded,
            taints: taints_seen,
            levels,
            pods,
            warnings,
        };
        Ok(Cluster {
            nodes,
            info,
            usage,
            topology: chosen.topology,
            report,
            priorities,
            units: declared,
            extended_toleration: options.extended_toleration,
        })
    }

    /// The gang-core node descriptions, in input order. See [`Cluster`].
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// Allocatable and used amounts per node, in input order. See [`Cluster`].
    pub fn usage(&self) -> &[NodeUsage] {
        &self.usage
    }

    /// The topology chosen. See [`Cluster`] and [`TopologySource`].
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// What was found. See [`ClusterReport`].
    pub fn report(&self) -> &ClusterReport {
        &self.report
    }

    /// Builds the gang-core inventory.
    ///
    /// # Errors
    /// [`ErrorKind::Core`] naming the node's object when gang-core rejects it (a label
    /// value or resource name gang-core does not accept); [`Error::core`] has the
    /// gang-core error.
    pub fn inventory(&self) -> Result<Inventory, Error> {
        if self.units.is_empty() {
            return Inventory::from_nodes(self.topology.clone(), &self.nodes)
                .map_err(|e| self.core_error(e));
        }
        let mut b = Inventory::builder(self.topology.clone()).nodes(self.nodes.iter().cloned());
        for u in &self.units {
            b = b.evictable(u.clone());
        }
        b.build().map_err(|e| self.core_error(e))
    }

    /// The running work declared evictable ([`ClusterOptions::evictable_pods`]): one
    /// unit per workload, by `Kind/namespace/name`, with its priority and per-node
    /// amounts; empty unless asked for. [`Cluster::inventory`] declares them.
    ///
    /// ```
    /// use gang_kube::{Cluster, ClusterOptions, Objects};
    /// let o = Objects::parse("a.yaml", r#"
    /// apiVersion: v1
    /// kind: Node
    /// metadata: {name: n1}
    /// status: {allocatable: {nvidia.com/gpu: "8", pods: "110"}}
    /// ---
    /// apiVersion: scheduling.k8s.io/v1
    /// kind: PriorityClass
    /// metadata: {name: batch}
    /// value: 100
    /// ---
    /// apiVersion: v1
    /// kind: Pod
    /// metadata: {name: train-0, namespace: ml, ownerReferences: [{kind: Job, name: train}]}
    /// spec:
    ///   nodeName: n1
    ///   priorityClassName: batch
    ///   containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}}}]
    /// status: {phase: Running}
    /// ---
    /// apiVersion: v1
    /// kind: Pod
    /// metadata: {name: train-1, namespace: ml, ownerReferences: [{kind: Job, name: train}]}
    /// spec:
    ///   nodeName: n1
    ///   priority: 100
    ///   containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}}}]
    /// status: {phase: Running}
    /// "#)?;
    /// let c = Cluster::from_objects(&o, &ClusterOptions::new().evictable_pods(true))?;
    /// let unit = &c.evictable()[0]; // both pods: one Job, evicted whole
    /// assert_eq!((unit.get_id(), unit.get_priority()), ("Job/ml/train", 100));
    /// let inv = c.inventory()?;
    /// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().to_string(), "4");
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn evictable(&self) -> &[EvictableUnit] {
        &self.units
    }

    /// The `PriorityClass` objects of the input, by name. See [`PriorityClassInfo`].
    pub fn priority_classes(&self) -> impl Iterator<Item = &PriorityClassInfo> + '_ {
        self.priorities.classes.values()
    }

    /// Kueue's `WorkloadPriorityClass` objects of the input, by name. See
    /// [`WorkloadPriorityClassInfo`].
    pub fn workload_priority_classes(
        &self,
    ) -> impl Iterator<Item = &WorkloadPriorityClassInfo> + '_ {
        self.priorities.workload_classes.values()
    }

    pub(crate) fn core_error(&self, e: gang_core::Error) -> Error {
        // gang-core names nodes as `nodes[NAME].…`: point at the Node object.
        let field = e.field().to_owned();
        let node = field
            .strip_prefix("nodes[")
            .and_then(|rest| rest.split_once(']'))
            .filter(|(name, _)| !name.is_empty());
        let reason = core_reason(&e);
        // A name gang-core refuses is `nodes[].name` with the name as the value: find
        // the node by it (issue 25: one bad name among many named no node).
        let bad_name = match (&e, field.as_str()) {
            (gang_core::Error::InvalidInventory { value, .. }, "nodes[].name") => {
                Some((value.as_str(), "name"))
            }
            _ => None,
        };
        match node.or(bad_name).and_then(|(name, rest)| {
            self.usage
                .iter()
                .position(|u| u.node == name)
                .map(|i| (i, rest))
        }) {
            Some((i, rest)) => {
                let o = &self.info[i].origin;
                let mut err = Error::new(ErrorKind::Core, &o.source, reason)
                    .with_object(o.to_string())
                    .with_position(o.position.to_string())
                    .with_field(map_node_field(rest.trim_start_matches('.')));
                if let gang_core::Error::InvalidInventory { value, .. }
                | gang_core::Error::InvalidQuantity { value, .. } = &e
                {
                    err = err.with_value(value.clone());
                }
                err.with_core(e)
            }
            None => Error::new(ErrorKind::Core, "cluster", reason)
                .with_field(field)
                .with_core(e),
        }
    }
}

/// The nodes at which [`Cluster::from_objects`] builds on two threads (when the
/// machine has two): below, a thread costs more than it saves.
const PARALLEL_NODES: usize = 1_000;

fn use_two_threads(nodes: usize) -> bool {
    nodes >= PARALLEL_NODES && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// What [`side_build`] makes: the topology, each node's description with its labels and
/// capacities, and each level's coverage.
struct Side {
    chosen: crate::topology::Chosen,
    specs: Vec<NodeSpec>,
    levels: Vec<LevelCoverage>,
}

/// The topology choice and what follows from it and the nodes' labels alone.
fn side_build(
    objects: &Objects,
    options: &ClusterOptions,
    node_items: &[(&Node, &Origin)],
    labels: &[&BTreeMap<String, String>],
) -> Result<Side, Error> {
    let chosen = choose(objects, &options.topology, labels)?;
    let specs = node_items
        .iter()
        .zip(labels)
        .map(|((n, _), node_labels)| {
            let mut spec = NodeSpec::new(n.metadata.name.clone());
            for (k, v) in *node_labels {
                spec.set_label(k.clone(), v.clone());
            }
            // In name order, as the node's `NodeUsage::allocatable`.
            for (k, v) in n.status.allocatable.iter() {
                spec.set_capacity(k.to_owned(), v.0);
            }
            spec
        })
        .collect();
    let label_levels: Vec<&String> = chosen
        .choice
        .levels
        .iter()
        .filter(|l| *l != gang_core::HOSTNAME_LEVEL)
        .collect();
    let levels = label_levels
        .iter()
        .enumerate()
        .map(|(d, l)| {
            // Domains are full paths of values: b1/s1 and b2/s1 are two subblocks.
            let paths: std::collections::BTreeSet<Vec<&str>> = labels
                .iter()
                .filter_map(|i| {
                    label_levels[..=d]
                        .iter()
                        .map(|k| i.get(*k).map(String::as_str))
                        .collect::<Option<Vec<&str>>>()
                })
                .collect();
            let labelled = labels.iter().filter(|i| i.contains_key(*l)).count();
            LevelCoverage {
                level: (*l).clone(),
                labelled,
                missing: labels.len() - labelled,
                domains: paths.len(),
            }
        })
        .collect();
    Ok(Side {
        chosen,
        specs,
        levels,
    })
}

/// What [`main_build`] makes: the nodes' information (without the flavor's
/// exclusions, which need the topology), usage, the usage not evictable, the evictable
/// units, the pod counts and warnings.
struct Main {
    info: Vec<NodeInfo>,
    usage: Vec<NodeUsage>,
    /// The usage not evictable, when some is (else `usage`'s `used`).
    fixed: Option<Vec<Resources>>,
    declared: Vec<EvictableUnit>,
    pods: PodCounts,
    warnings: Vec<String>,
    taints_seen: BTreeMap<String, usize>,
    priorities: PriorityClasses,
}

/// The nodes read and the pods counted against them.
fn main_build(
    objects: &Objects,
    options: &ClusterOptions,
    node_items: &[(&Node, &Origin)],
) -> Result<Main, Error> {
    let mut warnings = Vec::new();
    // Looked up once per pod (100,000 in a large snapshot): a fast hash of the name.
    let mut index: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    index.reserve(node_items.len());
    let mut info = Vec::with_capacity(node_items.len());
    let mut usage = Vec::with_capacity(node_items.len());
    let mut no_ready = 0usize;
    let mut taints_seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (n, origin)) in node_items.iter().enumerate() {
        let name = n.metadata.name.as_str();
        if name.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                &origin.source,
                "a Node needs a name",
            )
            .at(origin)
            .with_field("metadata.name"));
        }
        if let Some(first) = index.insert(name, i) {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                &origin.source,
                format!(
                    "node {name} appears twice (also {} of {})",
                    node_items[first].1.position, node_items[first].1.source
                ),
            )
            .at(origin)
            .with_field("metadata.name")
            .with_value(name));
        }
        let mut exclusions = Vec::new();
        match n.status.conditions.iter().find(|c| c.type_ == "Ready") {
            Some(c) if c.status == "True" => {}
            Some(c) => exclusions.push(NodeExclusion::NotReady {
                status: c.status.clone(),
                detail: c.reason.clone(),
            }),
            None => no_ready += 1,
        }
        if n.spec.unschedulable {
            exclusions.push(NodeExclusion::Unschedulable);
        }
        let mut taints = Vec::with_capacity(n.spec.taints.len());
        for (t, kt) in n.spec.taints.iter().enumerate() {
            let taint =
                convert::taint(kt).map_err(|e| e.under(&format!("spec.taints[{t}]")).at(origin))?;
            let label = if kt.value.is_empty() {
                format!("{}:{}", kt.key, kt.effect)
            } else {
                format!("{}={}:{}", kt.key, kt.value, kt.effect)
            };
            *taints_seen.entry(label).or_default() += 1;
            taints.push(taint);
        }
        info.push(NodeInfo {
            taints,
            exclusions,
            origin: origin.to_ref(),
        });
        usage.push(NodeUsage {
            node: name.to_owned(),
            allocatable: n
                .status
                .allocatable
                .iter()
                .map(|(k, v)| (k.to_owned(), v.0))
                .collect(),
            used: Resources::new(),
        });
    }
    if no_ready > 0 {
        warnings.push(format!(
            "{no_ready} node(s) have no Ready condition; taken as ready"
        ));
    }

    let priorities = PriorityClasses::read(objects)?;
    // Evictable work by workload: its priority and what it uses per node.
    let mut units: BTreeMap<String, (i32, BTreeMap<usize, Resources>)> = BTreeMap::new();
    let mut pods = PodCounts::default();
    let mut unknown_nodes: Vec<String> = Vec::new();
    // What each node's pods use, summed as they come (a handful of names per node: a
    // vector borrowing the pods' names, not a map of strings; the same sums in the same
    // order, so the same overflow), made the node's `used` after the last pod.
    let mut used: Vec<Acc<'_>> = vec![Acc::new(); node_items.len()];
    for item in &objects.items {
        let Body::Pod(p) = &item.body else { continue };
        if !options.ignore.is_empty()
            && options
                .ignore
                .contains(&(p.metadata.namespace.clone(), p.metadata.name.clone()))
        {
            pods.ignored += 1;
            continue;
        }
        if p.status.phase == "Succeeded" || p.status.phase == "Failed" {
            pods.terminal += 1;
            continue;
        }
        if p.spec.node_name.is_empty() {
            pods.unbound += 1;
            continue;
        }
        let Some(&ix) = index.get(p.spec.node_name.as_str()) else {
            pods.on_unknown_nodes += 1;
            if unknown_nodes.len() < 5 && !unknown_nodes.contains(&p.spec.node_name) {
                unknown_nodes.push(p.spec.node_name.clone());
            }
            continue;
        };
        let overflow = |resource: String| {
            Error::new(
                ErrorKind::InvalidValue,
                &item.origin.source,
                format!("the requests of {resource} overflow"),
            )
            .at(&item.origin)
            .with_field("spec")
        };
        let reqs = pod_requests_acc(&p.spec, Some(&p.status)).map_err(|o| overflow(o.0))?;
        let mut unit = if options.evictable {
            let (priority, per_node) = units
                .entry(workload_of(p))
                .or_insert((i32::MIN, BTreeMap::new()));
            *priority = (*priority).max(priorities.of_pod(p));
            Some(per_node.entry(ix).or_default())
        } else {
            None
        };
        let used = &mut used[ix];
        for (k, v) in reqs.into_iter().chain(std::iter::once(("pods", 1000))) {
            add_acc(used, k, v).ok_or_else(|| overflow(k.to_owned()))?;
            if let Some(u) = unit.as_deref_mut() {
                add(u, k, v).ok_or_else(|| overflow(k.to_owned()))?;
            }
        }
        pods.counted += 1;
    }
    if pods.on_unknown_nodes > 0 {
        warnings.push(format!(
            "{} pod(s) are bound to nodes not in the input ({}); not counted",
            pods.on_unknown_nodes,
            unknown_nodes.join(", ")
        ));
    }

    for (u, acc) in usage.iter_mut().zip(&used) {
        u.used = acc
            .iter()
            .map(|&(k, v)| (k.to_owned(), Quantity::from_millis(v)))
            .collect();
    }
    // What the evictable units use is theirs, not the node's fixed usage (without
    // units, the usage itself).
    let mut fixed: Option<Vec<Resources>> =
        (!units.is_empty()).then(|| usage.iter().map(|u| u.used.clone()).collect());
    let mut declared = Vec::with_capacity(units.len());
    // A PodGroup's own priority is its pods' unit's.
    let groups = if units.is_empty() {
        BTreeMap::new()
    } else {
        priorities.of_groups(objects)
    };
    for (id, (priority, per_node)) in units {
        let priority = groups.get(&id).copied().unwrap_or(priority);
        let mut unit = EvictableUnit::new(id, priority);
        for (ix, amounts) in per_node {
            for (k, v) in amounts {
                if let Some(have) = fixed.as_mut().and_then(|f| f[ix].get_mut(&k)) {
                    *have = Quantity::from_millis(have.millis().saturating_sub(v.millis()));
                }
                unit = unit.amount(usage[ix].node.clone(), k, v);
            }
        }
        declared.push(unit);
    }
    Ok(Main {
        info,
        usage,
        fixed,
        declared,
        pods,
        warnings,
        taints_seen,
        priorities,
    })
}

/// gang-core's node field names → the Kubernetes fields they came from.
fn map_node_field(rest: &str) -> String {
    if let Some(r) = rest.strip_prefix("labels.") {
        format!("metadata.labels.{r}")
    } else if let Some(r) = rest.strip_prefix("capacity.") {
        format!("status.allocatable.{r}")
    } else if let Some(r) = rest.strip_prefix("taints") {
        format!("spec.taints{r}")
    } else if rest == "name" || rest.is_empty() {
        "metadata.name".to_owned()
    } else {
        rest.to_owned()
    }
}

/// Adds `v` milli-units of `k` to `acc`; `None` on overflow.
fn add_acc<'a>(acc: &mut Acc<'a>, k: &'a str, v: u64) -> Option<()> {
    match acc.iter_mut().find(|(n, _)| *n == k) {
        Some((_, have)) => *have = have.checked_add(v)?,
        None => acc.push((k, v)),
    }
    Some(())
}

/// Adds `v` milli-units of `k` to `r`; `None` on overflow.
fn add(r: &mut Resources, k: &str, v: u64) -> Option<()> {
    match r.get_mut(k) {
        Some(have) => *have = Quantity::from_millis(have.millis().checked_add(v)?),
        None => {
            r.insert(k.to_owned(), Quantity::from_millis(v));
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Side threads started by [`Cluster::build`] called on this thread.
        pub(super) static SPAWNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A cluster of `nodes` nodes in racks of four (every seventh not ready, every
    /// eleventh cordoned, every fifth outside the flavor's node pool, GPU taints), two
    /// pods per node (some terminal, pending, on unknown nodes, of two Jobs), a Kueue
    /// Topology and ResourceFlavor, and a PriorityClass; `extra` appended as written.
    fn objects(nodes: usize, extra: &str) -> Objects {
        let mut y = String::from(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\nspec:\n  levels: [{nodeLabel: block}, {nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {nodeLabels: {pool: gpu}, topologyName: t}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n",
        );
        for i in 0..nodes {
            let ready = if i % 7 == 3 { "False" } else { "True" };
            let pool = if i % 5 == 4 { "cpu" } else { "gpu" };
            let cordon = if i % 11 == 2 {
                "unschedulable: true, "
            } else {
                ""
            };
            y.push_str(&format!(
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{block: b{}, rack: r{}, pool: {pool}, kubernetes.io/hostname: n{i}}}}}\nspec: {{{cordon}taints: [{{key: nvidia.com/gpu, value: present, effect: NoSchedule}}]}}\nstatus:\n  allocatable: {{cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"8\", pods: \"110\"}}\n  conditions: [{{type: Ready, status: \"{ready}\"}}]\n",
                i / 16,
                i / 4
            ));
        }
        for i in 0..nodes * 2 {
            let node = if i % 13 == 5 {
                format!("gone-{}", i % 3)
            } else if i % 17 == 1 {
                String::new()
            } else {
                format!("n{}", i / 2)
            };
            let phase = if i % 19 == 0 { "Succeeded" } else { "Running" };
            y.push_str(&format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: ml, ownerReferences: [{{kind: Job, name: j{}}}]}}\nspec:\n  nodeName: \"{node}\"\n  priorityClassName: high\n  containers: [{{name: c, resources: {{requests: {{cpu: \"{}\", nvidia.com/gpu: \"{}\"}}}}}}]\nstatus: {{phase: {phase}}}\n",
                i % 2,
                i % 5 + 1,
                i % 3
            ));
        }
        y.push_str(extra);
        Objects::parse("c.yaml", &y).unwrap()
    }

    /// Built on two threads or one: the same cluster, or the same error, for every
    /// option (ignored pods, evictable units, a flavor's exclusions, the topology's
    /// levels given or from Kueue).
    #[test]
    fn two_threads_build_what_one_builds() {
        let o = objects(60, "");
        let sources = [
            TopologySource::Auto,
            TopologySource::Levels(vec!["block".into(), "rack".into()]),
        ];
        for source in sources {
            for evictable in [false, true] {
                let opts = ClusterOptions::new()
                    .topology(source.clone())
                    .evictable_pods(evictable)
                    .ignore_pod("ml", "p7");
                let one = Cluster::build(&o, &opts, Some(false)).unwrap();
                let two = Cluster::build(&o, &opts, Some(true)).unwrap();
                assert_eq!(format!("{two:?}"), format!("{one:?}"));
                assert_eq!(two.inventory().is_ok(), one.inventory().is_ok());
                assert_eq!(two.nodes().len(), 60);
            }
        }
        let c = Cluster::build(&o, &ClusterOptions::new(), Some(true)).unwrap();
        assert!(c.report().excluded.iter().any(|e| e
            .reasons
            .iter()
            .any(|r| matches!(r, NodeExclusion::OutsideFlavor { .. }))));
        assert!(!c.report().warnings.is_empty());
        // Errors: the topology's before a node's, a node's before a pod's, whichever
        // thread meets it.
        let dup = "---\napiVersion: v1\nkind: Node\nmetadata: {name: n3}\n";
        let overflow = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ml}\nspec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: \"18446744073709551\"}}}, {name: d, resources: {requests: {cpu: \"18446744073709551\"}}}]}\n";
        for (extra, levels) in [
            (dup, vec!["missing-label".to_owned()]),
            (dup, vec!["rack".to_owned()]),
            (overflow, vec!["rack".to_owned()]),
            (overflow, vec!["missing-label".to_owned()]),
        ] {
            let o = objects(20, extra);
            let opts = ClusterOptions::new().topology(TopologySource::Levels(levels.clone()));
            let one = Cluster::build(&o, &opts, Some(false)).unwrap_err();
            let two = Cluster::build(&o, &opts, Some(true)).unwrap_err();
            assert_eq!(format!("{two:?}"), format!("{one:?}"), "{levels:?}");
        }
    }

    /// A node's usage summed over its pods: exact, and an overflow names the pod at
    /// which the sum overflows (each pod's own requests fit).
    #[test]
    fn usage_sums_over_pods_and_names_the_pod_that_overflows() {
        let pod = |name: &str, cpu: &str| {
            format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\", example.com/x: \"1\"}}}}}}]}}\n")
        };
        let big = "9223372036854775";
        let fits = format!("{}{}", pod("a", big), pod("b", "1"));
        let o = objects(3, &fits);
        for two in [false, true] {
            let c = Cluster::build(&o, &ClusterOptions::new(), Some(two)).unwrap();
            let used = &c.usage()[1].used;
            assert_eq!(
                used["cpu"].millis(),
                9_223_372_036_854_775_000 + 1000 + 3000 + 4000
            );
            assert_eq!(used["example.com/x"].millis(), 2000);
            assert_eq!(used["pods"].millis(), 4000);
            assert!(c.usage()[1].used.keys().eq([
                "cpu",
                "example.com/x",
                "nvidia.com/gpu",
                "pods"
            ]));
        }
        let over = format!("{}{}{}", pod("a", big), pod("b", big), pod("c", big));
        let o = objects(3, &over);
        for two in [false, true] {
            let e = Cluster::build(&o, &ClusterOptions::new(), Some(two)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidValue);
            assert!(e.to_string().contains("Pod/ml/b"), "{e}");
            assert!(
                e.to_string().contains("the requests of cpu overflow"),
                "{e}"
            );
        }
    }

    /// A large cluster is built on two threads when the machine has two.
    #[test]
    fn a_large_cluster_is_built_on_two_threads() {
        let before = SPAWNED.with(|n| n.get());
        let small = objects(10, "");
        Cluster::from_objects(&small, &ClusterOptions::new()).unwrap();
        let large = objects(PARALLEL_NODES, "");
        let c = Cluster::from_objects(&large, &ClusterOptions::new()).unwrap();
        assert_eq!(c.nodes().len(), PARALLEL_NODES);
        let spawned = SPAWNED.with(|n| n.get()) - before;
        let two = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        assert_eq!(spawned, usize::from(two));
    }
}
