//! The placer: the simulation's adapter to gang-core. Every call into `gang-core`
//! lives in this module.
//!
//! The simulator makes no placement decision of its own: it asks the core where a gang
//! goes ([`Placer::find`], [`Placer::admit_backfill`], [`Placer::spread`]), holds and
//! gives back capacity through the core's reservations, fails and repairs nodes
//! through the core's inventory changes, and repairs gangs with the core's
//! `replace`. What it keeps itself is bookkeeping read back from the core: free GPUs
//! per node (`Inventory::free`), each node's domain per level
//! (`Inventory::domain_of_node`: the domains are gang-core's), and what each
//! reservation holds (`Reservation::usage`).
//!
//! Keeping the core's API behind this one module means a change of the core's paths
//! or names touches this file only.

use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

pub use gang_core::request::{QuantitySpec, Requirement};
pub use gang_core::PreemptionPolicy;
pub use gang_core::{Inventory, NodeSpec, Role, Taint, TaintEffect, Toleration, Topology};

use gang_core::lifecycle::{
    Admission, AdmitMode, PreemptOptions, PreemptOutcome, PreemptSolver, Replacement, Spread,
    SpreadOutcome, VictimId,
};
use gang_core::scenario::Scenario;
use gang_core::InventoryDocument;
use gang_core::{
    CompiledGang, Gang, NodeMask, Outcome, Placement, Quantity, ReservationId, Solver,
    HOSTNAME_LEVEL,
};

use crate::error::SimError;

/// A role's per-member request of `resource`, in milli-units (0 when not requested).
pub(crate) fn role_request(role: &Role, resource: &str) -> Result<u64, gang_core::Error> {
    match role.get_requests().find(|(r, _)| *r == resource) {
        None => Ok(0),
        Some((_, a)) => a
            .resolve(&format!("roles[{}].requests.{resource}", role.get_name()))
            .map(Quantity::millis),
    }
}

/// A quantity of whole units, as an amount for a node or role.
pub(crate) fn units(n: u64) -> QuantitySpec {
    QuantitySpec::from(n)
}

/// A quantity in milli-units, as an amount for a node or role.
pub(crate) fn milli_amount(m: u64) -> QuantitySpec {
    QuantitySpec::from(Quantity::from_millis(m))
}

/// `In` requirement on a label.
pub(crate) fn label_in(key: &str, values: Vec<String>) -> Requirement {
    Requirement::is_in(key.to_owned(), values)
}

/// A topology from level keys that are known to be valid.
///
/// # Panics
/// If gang-core rejects the keys (the generators' constants are valid).
pub(crate) fn topology(levels: &[&str]) -> Topology {
    Topology::new(levels.iter().copied()).expect("valid levels")
}

/// Builds an inventory (for the generators).
pub(crate) fn inventory(levels: &[&str], nodes: Vec<NodeSpec>) -> Result<Inventory, SimError> {
    Ok(Cluster::from_nodes(levels, nodes)?.inv)
}

/// Maps a core error to a cluster error.
fn cluster_err(e: gang_core::Error) -> SimError {
    SimError::cluster(&e)
}

/// A core error about a gang, as (field without the `gang.` prefix, message).
pub(crate) fn request_error(e: &gang_core::Error) -> (String, String) {
    let f = e.field();
    let f = f.strip_prefix("gang.").unwrap_or(f);
    (f.to_owned(), e.to_string())
}

/// The cluster a simulation runs on: a validated gang-core inventory.
///
/// ```
/// use gang_sim::Cluster;
/// let c = Cluster::from_json(r#"{"topology": {"levels": ["rack"]}, "nodes": [
///     {"name": "a1", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}}]}"#)?;
/// assert_eq!((c.len(), c.levels()), (1, &["rack".to_owned()][..]));
/// let err = Cluster::from_json(r#"{"topology": {"levels": []}, "nodes": [{"name": "x",
///     "capacity": {"cpu": "lots"}}]}"#).unwrap_err();
/// assert_eq!((err.kind(), err.field()), ("invalid_cluster", "nodes[x].capacity.cpu"));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Cluster {
    inv: Inventory,
}

impl Cluster {
    /// From a cluster document (`{"topology": {"levels": [...]}, "nodes": [...]}`) or a
    /// whole scenario file (DESIGN §5; its gang and expectations are ignored).
    ///
    /// # Errors
    /// [`SimError::Cluster`] naming the field gang-core rejects.
    pub fn from_json(text: &str) -> Result<Cluster, SimError> {
        let keys = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| {
                v.as_object()
                    .map(|o| (o.contains_key("gang"), o.contains_key("reservations")))
            })
            .unwrap_or((false, false));
        let inv = match keys {
            (true, _) => Scenario::from_json(text)
                .and_then(|s| s.inventory())
                .map_err(cluster_err)?,
            // An inventory document (an inventory with its live reservations): they
            // stay held for the whole run, like capacity other pods use.
            (false, true) => serde_json::from_str::<InventoryDocument>(text)
                .map_err(|e| SimError::Cluster {
                    field: String::new(),
                    message: crate::error::without_position(&e.to_string()),
                    core: None,
                })
                .and_then(|d| Inventory::from_document(d).map_err(cluster_err))?,
            (false, false) => Inventory::from_json(text).map_err(cluster_err)?,
        };
        Ok(Cluster { inv })
    }

    /// From topology levels (outermost first) and node descriptions.
    ///
    /// ```
    /// use gang_sim::{Cluster, NodeSpec};
    /// let c = Cluster::from_nodes(&["rack"], vec![NodeSpec::new("a1").label("rack", "a")])?;
    /// assert_eq!(c.len(), 1);
    /// assert!(Cluster::from_nodes(&["Bad Level"], vec![]).is_err());
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    ///
    /// # Errors
    /// [`SimError::Cluster`] naming the field gang-core rejects.
    pub fn from_nodes(levels: &[&str], nodes: Vec<NodeSpec>) -> Result<Cluster, SimError> {
        let topology = Topology::new(levels.iter().copied()).map_err(cluster_err)?;
        let inv = Inventory::builder(topology)
            .nodes(nodes)
            .build()
            .map_err(cluster_err)?;
        Ok(Cluster { inv })
    }

    /// Number of nodes. See [`Cluster::from_json`].
    pub fn len(&self) -> usize {
        self.inv.len()
    }

    /// Whether the cluster has no nodes. See [`Cluster::from_json`].
    pub fn is_empty(&self) -> bool {
        self.inv.is_empty()
    }

    /// Whether some node has a capacity of `resource`.
    pub(crate) fn offers(&self, resource: &str) -> bool {
        self.inv
            .node_names()
            .filter_map(|n| self.inv.node_spec(n))
            .any(|n| n.get_capacity().any(|(r, _)| r == resource))
    }

    /// Topology level keys, outermost first. See [`Cluster::from_json`].
    pub fn levels(&self) -> &[String] {
        self.inv.topology().levels()
    }

    /// The cluster as a cluster document (`{"topology", "nodes"}`), as
    /// [`Cluster::from_json`] reads it.
    ///
    /// ```
    /// use gang_sim::{Cluster, NodeSpec};
    /// let c = Cluster::from_nodes(&["rack"], vec![NodeSpec::new("a1").label("rack", "a")])?;
    /// assert_eq!(Cluster::from_json(&c.to_json())?.len(), 1);
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    pub fn to_json(&self) -> String {
        let nodes: Vec<NodeSpec> = self
            .inv
            .node_names()
            .filter_map(|n| self.inv.node_spec(n))
            .collect();
        serde_json::json!({
            "topology": {"levels": self.levels()},
            "nodes": nodes,
        })
        .to_string()
    }
}

/// A compiled request: the gang, compiled against the simulation's inventory.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    gang: Gang,
    compiled: CompiledGang,
    /// Per role, in order: GPUs (milli) per member.
    role_gpu: Vec<u64>,
}

impl Req {
    /// The gang's roles.
    pub(crate) fn roles(&self) -> &[Role] {
        self.gang.get_roles()
    }
}

/// A node of the cluster, by its position in storage order (`Inventory::node_names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct NodeIx(pub(crate) u32);

impl NodeIx {
    /// The index into per-node columns.
    pub(crate) fn ix(self) -> usize {
        self.0 as usize
    }
}

/// A placement found by the core and not yet reserved.
#[derive(Debug)]
pub(crate) struct Found {
    placement: Placement,
    /// GPUs (milli) it takes.
    gpu: u64,
    /// The nodes it uses, sorted.
    nodes: Vec<NodeIx>,
}

/// A reservation the simulation holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ResId(ReservationId);

/// What a live reservation holds, as the placer last read it from the core.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Held {
    /// GPUs (milli).
    gpu: u64,
    /// The nodes of its members, sorted.
    nodes: Vec<NodeIx>,
}

/// The outcome of a replacement attempt.
pub(crate) enum Replaced {
    /// Lost members have new nodes inside their domain.
    Placed,
    /// Not now: the core's reason.
    Pending(String),
}

/// What the simulation spent in gang-core, by kind of call (only measured when
/// profiling is on).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EngineProfile {
    /// Calls to `Solver::find`.
    pub finds: u64,
    /// Nanoseconds in `Solver::find`.
    pub find_ns: u64,
    /// Reservations made (`Inventory::reserve`, and through `admit`/`spread`).
    pub reserves: u64,
    /// Nanoseconds in reserve, release, replace, admit, spread and node changes.
    pub lifecycle_ns: u64,
    /// Calls to `Inventory::admit` (backfill passes).
    pub admits: u64,
    /// Nanoseconds in `Inventory::admit`.
    pub admit_ns: u64,
    /// Diagnoses built (`Solver::place` on a gang that does not fit).
    pub diagnoses: u64,
    /// Preemption queries (`PreemptSolver::preempt`, with preemption on).
    pub preempts: u64,
    /// Nanoseconds in `PreemptSolver::preempt`.
    pub preempt_ns: u64,
    /// Plans found by a search that ran out of work (`PreemptOptions::max_work`).
    pub preempts_incomplete: u64,
}

/// The nodes as the simulation reads them: names, domains, GPUs and state, one column
/// per property, indexed by [`NodeIx`].
#[derive(Debug, Clone)]
struct Nodes {
    names: Vec<String>,
    index: FxHashMap<String, NodeIx>,
    /// Label levels (a trailing `kubernetes.io/hostname` is the node itself).
    levels: Vec<String>,
    /// Per label level (outermost first), per node: the index of its domain in
    /// gang-core's `Inventory::domain_paths`, `None` if the node is outside every
    /// domain of the level.
    domain: Vec<Vec<Option<usize>>>,
    /// Free GPUs (milli), read back from the core.
    free_gpu: Vec<u64>,
    /// Schedulable (not cordoned, not failed).
    up: Vec<bool>,
    /// Failed and not yet repaired.
    failed: Vec<bool>,
}

/// GPU totals (milli) kept beside the core's columns.
#[derive(Debug, Clone, Copy, Default)]
struct GpuTotals {
    /// Free on schedulable nodes.
    free_up: u64,
    /// Free on every node at the start (capacity less external use).
    allocatable: u64,
    /// Held by the simulation's reservations.
    held: u64,
}

/// The cluster as it was given (no reservations, no failures), with a solver of its
/// own: for "can this ever fit?" and for diagnoses of jobs that never fit.
struct Given {
    inv: Inventory,
    solver: Solver,
}

/// The simulation's view of the core: the inventory, one reusable solver, and what the
/// simulation reads back from them.
pub(crate) struct Placer {
    inv: Inventory,
    /// Places and preempts: its placement solver answers `find`, and the candidate
    /// victims are kept between preemption queries.
    solver: PreemptSolver,
    given: Given,
    gpu: String,
    nodes: Nodes,
    totals: GpuTotals,
    /// Per live reservation of the simulation: what it holds.
    held: FxHashMap<ResId, Held>,
    /// Reservations the cluster came with (an inventory document's): held for the
    /// whole run, like capacity other pods use; not the simulation's, so not counted
    /// as held by it.
    external: FxHashSet<ReservationId>,
    profiling: bool,
    pub(crate) profile: EngineProfile,
    /// The waiting head's usable nodes during a backfill pass (kept for its space).
    mask: NodeMask,
    /// A running digest of every placement held (reservation id, then each
    /// assignment's role, node and count), when asked for
    /// ([`crate::Simulation::run_with_placement_digest`]).
    pub(crate) digest: Option<u64>,
}

/// FNV-1a over `bytes`, continuing from `h`.
pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// FNV-1a's offset basis.
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// A backfill pass under way ([`Placer::backfill_begin`]): when it began.
pub(crate) struct Pass {
    t: Option<Instant>,
}

impl Placer {
    /// Takes over a cluster; `gpu` is the resource counted as GPUs.
    pub(crate) fn new(cluster: Cluster, gpu: &str) -> Placer {
        let inv = cluster.inv;
        let mut levels: Vec<String> = inv.topology().levels().to_vec();
        if levels.last().map(String::as_str) == Some(HOSTNAME_LEVEL) {
            levels.pop();
        }
        let names: Vec<String> = inv.node_names().map(str::to_owned).collect();
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), NodeIx(i as u32)))
            .collect();
        // Domains are gang-core's: a domain is a full path of label values.
        let domain = levels
            .iter()
            .map(|l| names.iter().map(|n| inv.domain_of_node(n, l)).collect())
            .collect();
        let mut free_gpu = vec![0; names.len()];
        let mut up = vec![false; names.len()];
        let mut totals = GpuTotals::default();
        for (i, n) in names.iter().enumerate() {
            let Some(spec) = inv.node_spec(n) else {
                continue;
            };
            let free = inv.free(n, gpu).map_or(0, Quantity::millis);
            free_gpu[i] = free;
            totals.allocatable += free;
            up[i] = spec.is_schedulable();
            if spec.is_schedulable() {
                totals.free_up += free;
            }
        }
        let external = inv.reservations().map(|r| r.id()).collect();
        Placer {
            external,
            given: Given {
                inv: inv.clone(),
                solver: Solver::new(),
            },
            inv,
            solver: PreemptSolver::new(),
            gpu: gpu.to_owned(),
            nodes: Nodes {
                failed: vec![false; names.len()],
                names,
                index,
                levels,
                domain,
                free_gpu,
                up,
            },
            totals,
            held: FxHashMap::default(),
            profiling: false,
            profile: EngineProfile::default(),
            mask: NodeMask::new(),
            digest: None,
        }
    }

    /// Folds reservation `id`'s placement now into the digest, if one is kept.
    fn note(&mut self, id: ResId) {
        let Some(d) = self.digest else {
            return;
        };
        let Some(r) = self.inv.reservation(id.0) else {
            return;
        };
        let mut text = format!("{};", id.0.serial());
        for a in r.assignments(&self.inv) {
            text.push_str(&format!("{}@{}x{};", a.role, a.node, a.count));
        }
        self.digest = Some(fnv1a(d, text.as_bytes()));
    }

    pub(crate) fn set_profiling(&mut self, on: bool) {
        self.profiling = on;
    }

    fn clock(&self) -> Option<Instant> {
        self.profiling.then(Instant::now)
    }

    fn since(t: Option<Instant>) -> u64 {
        t.map_or(0, |t| t.elapsed().as_nanos() as u64)
    }

    /// Label level keys, outermost first.
    pub(crate) fn levels(&self) -> &[String] {
        &self.nodes.levels
    }

    /// The index of a node by name.
    pub(crate) fn node_index(&self, name: &str) -> Option<NodeIx> {
        self.nodes.index.get(name).copied()
    }

    pub(crate) fn node_count(&self) -> usize {
        self.nodes.names.len()
    }

    /// GPUs (milli) free on schedulable nodes.
    pub(crate) fn free_gpu(&self) -> u64 {
        self.totals.free_up
    }

    /// GPUs (milli) held by reservations.
    pub(crate) fn held_gpu(&self) -> u64 {
        self.totals.held
    }

    /// GPUs (milli) free on every node at the start (capacity less external use).
    pub(crate) fn allocatable_gpu(&self) -> u64 {
        self.totals.allocatable
    }

    pub(crate) fn failed_nodes(&self) -> usize {
        self.nodes.failed.iter().filter(|&&f| f).count()
    }

    /// Compiles a gang of `roles` with a topology constraint.
    pub(crate) fn compile(
        &self,
        name: &str,
        roles: &[Role],
        topo: &GangShape,
    ) -> Result<Req, gang_core::Error> {
        let mut gang = Gang::new(name);
        for r in roles {
            gang = gang.role(r.clone());
        }
        match topo {
            GangShape::Required(l) => gang = gang.required(l.clone()),
            GangShape::Preferred(l) => gang = gang.preferred(l.clone()),
            GangShape::Unconstrained => {}
        }
        let compiled = self.inv.compile(&gang)?;
        let role_gpu = gang
            .get_roles()
            .iter()
            .map(|r| role_request(r, &self.gpu).unwrap_or(0))
            .collect();
        Ok(Req {
            gang,
            compiled,
            role_gpu,
        })
    }

    /// The nodes named, as indices, sorted, without repeats.
    fn node_set<'a>(&self, nodes: impl Iterator<Item = &'a str>) -> Vec<NodeIx> {
        let mut out: Vec<NodeIx> = nodes
            .filter_map(|n| self.nodes.index.get(n).copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Where the gang goes now, without a diagnosis when it does not fit (the hot path).
    pub(crate) fn find(&mut self, req: &Req) -> Result<Option<Found>, SimError> {
        let t = self.clock();
        let out = self
            .inv
            .find_with(self.solver.solver(), &req.compiled)
            .map_err(|e| SimError::Internal(format!("find: {e}")))?;
        self.profile.finds += 1;
        self.profile.find_ns += Self::since(t);
        Ok(out.map(|placement| self.found(req, placement)))
    }

    /// Whether the gang fits now ([`Placer::find`]'s `is_some`, without building the
    /// placement).
    pub(crate) fn fits(&mut self, req: &Req) -> Result<bool, SimError> {
        let t = self.clock();
        let out = self
            .inv
            .fits_with(self.solver.solver(), &req.compiled)
            .map_err(|e| SimError::Internal(format!("find: {e}")))?;
        self.profile.finds += 1;
        self.profile.find_ns += Self::since(t);
        Ok(out)
    }

    /// A placement of `req` with what it takes.
    fn found(&self, req: &Req, placement: Placement) -> Found {
        let gpu = placement
            .placed_by_role()
            .zip(&req.role_gpu)
            .map(|((_, k), g)| u64::from(k) * g)
            .sum();
        let nodes = self.node_set(placement.assignments().iter().map(|a| a.node.as_str()));
        Found {
            placement,
            gpu,
            nodes,
        }
    }

    /// `req` compiled again with a priority and a preemption policy (gang-core's
    /// `Gang::priority`, `Gang::preemption_policy`): what `preempt` weighs its
    /// reservations by.
    pub(crate) fn ranked(
        &self,
        req: Req,
        priority: i32,
        policy: PreemptionPolicy,
    ) -> Result<Req, gang_core::Error> {
        let gang = req.gang.priority(priority).preemption_policy(policy);
        let compiled = self.inv.compile(&gang)?;
        Ok(Req {
            gang,
            compiled,
            role_gpu: req.role_gpu,
        })
    }

    /// What it would take for `req` to fit now by evicting running work (gang-core's
    /// `PreemptSolver`: the candidates kept from the last query, brought up to date):
    /// the reservations to evict, whole, and where `req` goes once they are gone;
    /// `None` when no eviction of lower-priority, preemptible work makes room (or the
    /// search could not decide). `cost` is each candidate's work at risk, weighed
    /// before the GPUs it holds.
    pub(crate) fn preempt(
        &mut self,
        req: &Req,
        cost: impl Fn(ResId) -> u64,
    ) -> Result<Option<(Vec<ResId>, Found)>, SimError> {
        let prio = req.gang.get_priority();
        let mut opts = PreemptOptions::new().cost_resources([self.gpu.clone()]);
        for r in self.inv.reservations() {
            if r.gang().get_priority() < prio {
                opts = opts.cost(VictimId::Reservation(r.id()), cost(ResId(r.id())));
            }
        }
        let t = self.clock();
        let out = self
            .solver
            .preempt(&self.inv, &req.compiled, &opts)
            .map_err(|e| SimError::Internal(format!("preempt: {e}")))?;
        self.profile.preempts += 1;
        self.profile.preempt_ns += Self::since(t);
        let PreemptOutcome::Placed(plan) = out else {
            return Ok(None);
        };
        if !plan.search_complete() {
            self.profile.preempts_incomplete += 1;
        }
        let mut victims = Vec::with_capacity(plan.victims().len());
        for v in plan.victims() {
            match &v.id {
                VictimId::Reservation(id) => victims.push(ResId(*id)),
                VictimId::Unit(u) => {
                    return Err(SimError::Internal(format!(
                        "preempt chose unit {u}, which the simulation never declares"
                    )))
                }
            }
        }
        Ok(Some((victims, self.found(req, plan.placement().clone()))))
    }

    /// Whether the gang fits the cluster as given (no reservations, no failures).
    pub(crate) fn fits_empty(&mut self, req: &Req) -> Result<bool, SimError> {
        self.given
            .inv
            .find_with(&mut self.given.solver, &req.compiled)
            .map(|p| p.is_some())
            .map_err(|e| SimError::Internal(format!("find: {e}")))
    }

    /// Whether `replicas` replicas fit the cluster as given, in distinct domains of
    /// `level`: `None` when they do, else why not (gang-core's words).
    pub(crate) fn spread_empty(
        &mut self,
        req: &Req,
        replicas: u32,
        level: &str,
    ) -> Result<Option<String>, SimError> {
        let out = self
            .given
            .inv
            .spread(&Spread::new(req.gang.clone(), replicas, level));
        match out {
            Ok(SpreadOutcome::Placed { reservations, .. }) => {
                for r in reservations {
                    self.given
                        .inv
                        .release(r)
                        .map_err(|e| SimError::Internal(format!("release: {e}")))?;
                }
                Ok(None)
            }
            Ok(SpreadOutcome::Unschedulable {
                fit,
                needed,
                diagnosis,
            }) => Ok(Some(match diagnosis {
                Some(d) => format!("{fit} of {needed} replicas fit in distinct domains; next: {d}"),
                None => format!("{fit} of {needed} replicas fit in distinct domains"),
            })),
            Err(e) => Ok(Some(e.to_string())),
        }
    }

    /// Why the gang does not fit the cluster as given: gang-core's diagnosis, as text.
    pub(crate) fn diagnose_empty(&mut self, req: &Req) -> String {
        self.profile.diagnoses += 1;
        match self
            .given
            .inv
            .place_with(&mut self.given.solver, &req.compiled)
        {
            Ok(Outcome::Placed(p)) => format!("fits: {p}"),
            Ok(o) => o
                .diagnosis()
                .map_or_else(|| o.status().to_owned(), ToString::to_string),
            Err(e) => e.to_string(),
        }
    }

    /// Holds a placement's capacity.
    pub(crate) fn reserve(&mut self, found: Found) -> Result<ResId, SimError> {
        let t = self.clock();
        let id = self
            .inv
            .reserve(&found.placement)
            .map_err(|c| SimError::Internal(format!("reserve right after find: {c}")))?;
        self.profile.reserves += 1;
        let Found { gpu, nodes, .. } = found;
        self.totals.held += gpu;
        self.refresh(&nodes);
        self.held.insert(ResId(id), Held { gpu, nodes });
        self.profile.lifecycle_ns += Self::since(t);
        self.note(ResId(id));
        Ok(ResId(id))
    }

    /// What a reservation holds now, read from the core.
    fn usage(&self, id: ResId) -> Held {
        let Some(r) = self.inv.reservation(id.0) else {
            return Held::default();
        };
        let gpu = r
            .usage(&self.inv)
            .iter()
            .filter(|(_, res, _)| *res == self.gpu)
            .map(|(_, _, q)| q.millis())
            .sum();
        let assignments = r.assignments(&self.inv);
        let nodes = self.node_set(assignments.iter().map(|a| a.node.as_str()));
        Held { gpu, nodes }
    }

    /// GPUs (milli) a reservation holds now.
    pub(crate) fn gpu_of(&self, id: ResId) -> u64 {
        self.held.get(&id).map_or(0, |h| h.gpu)
    }

    /// Members a reservation holds now (lost ones not counted).
    pub(crate) fn members_of(&self, id: ResId) -> u64 {
        self.inv.reservation(id.0).map_or(0, |r| r.member_count())
    }

    /// Members of a reservation lost with failed nodes and not yet replaced.
    pub(crate) fn lost_of(&self, id: ResId) -> u64 {
        self.inv
            .reservation(id.0)
            .map_or(0, |r| r.lost().iter().map(|l| u64::from(l.count)).sum())
    }

    /// Re-reads free GPUs of `nodes` from the core.
    fn refresh(&mut self, nodes: &[NodeIx]) {
        for &n in nodes {
            let i = n.ix();
            let free = self
                .inv
                .free(&self.nodes.names[i], &self.gpu)
                .map_or(0, Quantity::millis);
            if self.nodes.up[i] {
                self.totals.free_up = self.totals.free_up - self.nodes.free_gpu[i] + free;
            }
            self.nodes.free_gpu[i] = free;
        }
    }

    /// Reads back what a reservation holds after the core changed it (admitted,
    /// spread, lost members, replaced): the held count and the nodes touched follow.
    fn record(&mut self, id: ResId, touched: &[NodeIx]) {
        let now = self.usage(id);
        let old = self.held.remove(&id).unwrap_or_default();
        self.totals.held = self.totals.held - old.gpu + now.gpu;
        self.refresh(&old.nodes);
        self.refresh(&now.nodes);
        self.refresh(touched);
        if self.inv.reservation(id.0).is_some() {
            self.held.insert(id, now);
            self.note(id);
        }
    }

    /// Gives back everything a reservation holds; returns the GPUs (milli) given back.
    pub(crate) fn release(&mut self, id: ResId) -> Result<u64, SimError> {
        let t = self.clock();
        self.inv
            .release(id.0)
            .map_err(|e| SimError::Internal(format!("release: {e}")))?;
        let old = self.held.remove(&id).unwrap_or_default();
        self.totals.held -= old.gpu;
        self.refresh(&old.nodes);
        self.profile.lifecycle_ns += Self::since(t);
        Ok(old.gpu)
    }

    /// Admits `[head, candidates…]` with gang-core's FIFO-with-backfill rule; the head
    /// is expected to wait. Returns the head's reservation if it was placed after all,
    /// and one entry per candidate.
    pub(crate) fn admit_backfill(
        &mut self,
        head: &Req,
        candidates: &[&Req],
    ) -> Result<(Option<ResId>, Vec<Option<ResId>>), SimError> {
        let t = self.clock();
        let mut queue = Vec::with_capacity(candidates.len() + 1);
        queue.push(head.gang.clone());
        queue.extend(candidates.iter().map(|r| r.gang.clone()));
        let out = self
            .inv
            .admit(&queue, AdmitMode::Backfill)
            .map_err(|e| SimError::Internal(format!("admit: {e}")))?;
        self.profile.admits += 1;
        self.profile.diagnoses += 1; // the waiting head's
        let mut ids: Vec<Option<ResId>> = Vec::with_capacity(out.len());
        for a in out {
            match a {
                Admission::Placed { reservation, .. } => {
                    self.profile.reserves += 1;
                    self.record(ResId(reservation), &[]);
                    ids.push(Some(ResId(reservation)));
                }
                Admission::Waiting { .. } => ids.push(None),
            }
        }
        self.profile.admit_ns += Self::since(t);
        let mut it = ids.into_iter();
        let head = it.next().flatten();
        Ok((head, it.collect()))
    }

    /// The probe that finds every node where a member of `role` fits now: the role
    /// elastic from 1 up to one member per node, one per node, unconstrained. gang-core
    /// places as many members as fit, so one query names all those nodes.
    pub(crate) fn usable_probe(&self, name: &str, role: &Role) -> Result<Req, gang_core::Error> {
        let mut one = role.clone();
        one.set_count(u32::try_from(self.nodes.names.len().max(1)).unwrap_or(u32::MAX));
        one.set_min_count(Some(1));
        one.set_max_per_node(Some(1));
        self.compile(name, &[one], &GangShape::Unconstrained)
    }

    /// gang-core's backfill rule (`Inventory::admit` in `Backfill` mode), asked of a
    /// warm solver, in three steps: [`Placer::backfill_begin`] masks the nodes where
    /// some role of the waiting head fits a member now (the nodes where its
    /// [`Placer::usable_probe`]s fit, read off the warm cache:
    /// `Inventory::add_fitting_nodes`); [`Placer::backfill_try`] places and reserves
    /// one candidate, whole, on the other nodes (`Inventory::find_outside`: as on the
    /// cluster with the masked nodes cordoned, without cordoning them);
    /// [`Placer::backfill_end`] ends the pass. The same answers as `admit` (tested
    /// against it), without the head's diagnosis and without compiling or solving
    /// cold, and the caller chooses which candidate comes next (capacity only shrinks
    /// while it runs, so once a request does not fit, its later jobs need not be asked).
    pub(crate) fn backfill_begin(&mut self, head_probes: &[&Req]) -> Result<Pass, SimError> {
        let t = self.clock();
        self.mask.clear();
        for probe in head_probes {
            self.inv
                .add_fitting_nodes(self.solver.solver(), &probe.compiled, &mut self.mask)
                .map_err(|e| SimError::Internal(format!("find: {e}")))?;
            self.profile.finds += 1;
        }
        Ok(Pass { t })
    }

    /// One candidate of a backfill pass: placed and reserved now, outside the head's
    /// nodes, or `None`.
    pub(crate) fn backfill_try(&mut self, candidate: &Req) -> Result<Option<ResId>, SimError> {
        let t = self.clock();
        let out = self
            .inv
            .find_outside(self.solver.solver(), &candidate.compiled, &self.mask)
            .map_err(|e| SimError::Internal(format!("find: {e}")))?;
        self.profile.finds += 1;
        self.profile.find_ns += Self::since(t);
        match out {
            Some(placement) => self.reserve(self.found(candidate, placement)).map(Some),
            None => Ok(None),
        }
    }

    /// Ends a backfill pass.
    pub(crate) fn backfill_end(&mut self, pass: Pass) {
        self.profile.admits += 1;
        self.profile.admit_ns += Self::since(pass.t);
    }

    /// Places and reserves `replicas` replicas in distinct domains of `level`, or nothing.
    pub(crate) fn spread(
        &mut self,
        req: &Req,
        replicas: u32,
        level: &str,
    ) -> Result<Option<Vec<ResId>>, SimError> {
        let t = self.clock();
        let out = self
            .inv
            .spread(&Spread::new(req.gang.clone(), replicas, level))
            .map_err(|e| SimError::Internal(format!("spread: {e}")))?;
        let res = match out {
            SpreadOutcome::Placed { reservations, .. } => {
                let mut ids = Vec::with_capacity(reservations.len());
                for r in reservations {
                    self.profile.reserves += 1;
                    self.record(ResId(r), &[]);
                    ids.push(ResId(r));
                }
                Some(ids)
            }
            _ => None,
        };
        self.profile.lifecycle_ns += Self::since(t);
        Ok(res)
    }

    /// Fails node `n` (cordoned; its members lost). Returns the reservations that lost
    /// members, with the GPUs (milli) each lost; `None` when the node is not up.
    pub(crate) fn fail_node(&mut self, n: NodeIx) -> Result<Option<Vec<(ResId, u64)>>, SimError> {
        if !self.nodes.up.get(n.ix()).copied().unwrap_or(false) {
            return Ok(None);
        }
        let t = self.clock();
        let name = self.nodes.names[n.ix()].clone();
        let lost = self
            .inv
            .fail_node(&name)
            .map_err(|e| SimError::Internal(format!("fail_node: {e}")))?;
        let mut ids: Vec<ResId> = lost
            .iter()
            .filter(|l| !self.external.contains(&l.reservation))
            .map(|l| ResId(l.reservation))
            .collect();
        ids.sort();
        ids.dedup();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            // What each reservation held before, to count the GPUs lost.
            let before = self.gpu_of(id);
            self.record(id, &[]);
            out.push((id, before - self.gpu_of(id).min(before)));
        }
        self.totals.free_up -= self.nodes.free_gpu[n.ix()];
        self.nodes.up[n.ix()] = false;
        self.nodes.failed[n.ix()] = true;
        self.refresh(&[n]);
        self.profile.lifecycle_ns += Self::since(t);
        Ok(Some(out))
    }

    /// Brings a failed node back (uncordon). Returns whether it was failed.
    pub(crate) fn repair_node(&mut self, n: NodeIx) -> Result<bool, SimError> {
        if !self.nodes.failed.get(n.ix()).copied().unwrap_or(false) {
            return Ok(false);
        }
        let name = self.nodes.names[n.ix()].clone();
        self.inv
            .uncordon(&name)
            .map_err(|e| SimError::Internal(format!("uncordon: {e}")))?;
        self.nodes.failed[n.ix()] = false;
        self.nodes.up[n.ix()] = true;
        self.totals.free_up += self.nodes.free_gpu[n.ix()];
        self.refresh(&[n]);
        Ok(true)
    }

    /// Places a reservation's lost members inside its domain (gang-core `replace`).
    pub(crate) fn replace(&mut self, id: ResId) -> Result<Replaced, SimError> {
        let t = self.clock();
        let out = self
            .inv
            .replace(id.0)
            .map_err(|e| SimError::Internal(format!("replace: {e}")))?;
        let res = match out {
            Replacement::Placed { added } => {
                let nodes: Vec<NodeIx> = added
                    .iter()
                    .filter_map(|a| self.nodes.index.get(&a.node).copied())
                    .collect();
                self.record(id, &nodes);
                Replaced::Placed
            }
            Replacement::Pending(p) => Replaced::Pending(p.to_string()),
        };
        self.profile.lifecycle_ns += Self::since(t);
        Ok(res)
    }

    /// The highest topology level the reservations' members span, as an index: 0 one
    /// node, `1..=L` one domain of the label level `L - i` (innermost is 1), `L + 1`
    /// beyond the top level (the whole cluster).
    pub(crate) fn span(&self, ids: &[ResId]) -> usize {
        let mut nodes: Vec<NodeIx> = Vec::new();
        for id in ids {
            if let Some(h) = self.held.get(id) {
                nodes.extend_from_slice(&h.nodes);
            }
        }
        self.span_of_nodes(&nodes)
    }

    fn span_of_nodes(&self, nodes: &[NodeIx]) -> usize {
        let Some(&first) = nodes.first() else {
            return 0;
        };
        if nodes.iter().all(|&n| n == first) {
            return 0;
        }
        let l = self.nodes.levels.len();
        for (i, d) in (0..l).rev().enumerate() {
            let col = &self.nodes.domain[d];
            let dom = col[first.ix()];
            if dom.is_some() && nodes.iter().all(|&n| col[n.ix()] == dom) {
                return i + 1;
            }
        }
        l + 1
    }

    /// The name of a span index (see [`Placer::span`]): `node`, a level key, `cluster`.
    pub(crate) fn span_name(&self, span: usize) -> String {
        let l = self.nodes.levels.len();
        match span {
            0 => "node".to_owned(),
            s if s <= l => self.nodes.levels[l - s].clone(),
            _ => "cluster".to_owned(),
        }
    }

    /// Invariants: gang-core's own (`Inventory::validate`: capacity never exceeded,
    /// reservations whole) and the simulation's copies of free and held GPUs.
    pub(crate) fn validate(&self) -> Result<(), String> {
        self.inv.validate()?;
        let mut free_up = 0;
        for (i, n) in self.nodes.names.iter().enumerate() {
            let free = self.inv.free(n, &self.gpu).map_or(0, Quantity::millis);
            if free != self.nodes.free_gpu[i] {
                return Err(format!(
                    "node {n}: the simulation counts {} free GPU milli, the core {free}",
                    self.nodes.free_gpu[i]
                ));
            }
            if self.nodes.up[i] {
                free_up += free;
            }
        }
        if free_up != self.totals.free_up {
            return Err(format!(
                "free GPUs on schedulable nodes: counted {}, actual {free_up}",
                self.totals.free_up
            ));
        }
        let own = || {
            self.inv
                .reservations()
                .filter(|r| !self.external.contains(&r.id()))
        };
        for r in own() {
            if self.held.get(&ResId(r.id())) != Some(&self.usage(ResId(r.id()))) {
                return Err(format!(
                    "reservation {}: held GPUs or nodes out of date",
                    r.id()
                ));
            }
        }
        if self.held.len() != own().count() {
            return Err("a released reservation is still counted".into());
        }
        let held: u64 = self.held.values().map(|h| h.gpu).sum();
        if held != self.totals.held {
            return Err(format!(
                "held GPUs: counted {}, reservations hold {held}",
                self.totals.held
            ));
        }
        Ok(())
    }

    /// The simulation's live reservations (for the end-of-run check that nothing is
    /// left held).
    pub(crate) fn live_reservations(&self) -> usize {
        self.inv
            .reservations()
            .filter(|r| !self.external.contains(&r.id()))
            .count()
    }
}

/// A gang's topology constraint, as the simulator asks for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum GangShape {
    /// Every constrained member in one domain of the level.
    Required(String),
    /// One domain of the level if possible, walking up otherwise.
    Preferred(String),
    /// Anywhere, still all or nothing.
    Unconstrained,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Cluster {
        let node = |n: &str, b: &str, r: &str| {
            NodeSpec::new(n)
                .label("block", b)
                .label("rack", r)
                .capacity("nvidia.com/gpu", 4)
        };
        Cluster::from_nodes(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a"),
                node("a2", "b1", "a"),
                node("b1", "b1", "b"),
                node("c1", "b2", "c"),
                NodeSpec::new("loose").capacity("nvidia.com/gpu", 4),
            ],
        )
        .unwrap()
    }

    fn workers(n: u32) -> Vec<Role> {
        vec![Role::new("w", n).request("nvidia.com/gpu", 1)]
    }

    #[test]
    fn spans_agree_with_what_the_core_placed() {
        let mut e = Placer::new(cluster(), "nvidia.com/gpu");
        let mut span_for = |n: u32, shape: GangShape| {
            let r = e.compile("g", &workers(n), &shape).unwrap();
            let f = e.find(&r).unwrap().unwrap();
            let id = e.reserve(f).unwrap();
            let s = e.span(&[id]);
            let name = e.span_name(s);
            e.release(id).unwrap();
            e.validate().unwrap();
            name
        };
        assert_eq!(span_for(4, GangShape::Unconstrained), "node");
        assert_eq!(span_for(8, GangShape::Required("rack".into())), "rack");
        assert_eq!(span_for(12, GangShape::Required("block".into())), "block");
        assert_eq!(span_for(16, GangShape::Unconstrained), "cluster");
        assert_eq!(span_for(20, GangShape::Unconstrained), "cluster");
    }

    #[test]
    fn counts_follow_reserve_release_fail_and_repair() {
        let mut e = Placer::new(cluster(), "nvidia.com/gpu");
        assert_eq!((e.free_gpu(), e.allocatable_gpu()), (20_000, 20_000));
        let r = e
            .compile("g", &workers(8), &GangShape::Required("rack".into()))
            .unwrap();
        let f = e.find(&r).unwrap().unwrap();
        let id = e.reserve(f).unwrap();
        assert_eq!(
            (e.free_gpu(), e.held_gpu(), e.gpu_of(id)),
            (12_000, 8_000, 8_000)
        );
        let lost = e.fail_node(NodeIx(0)).unwrap().unwrap(); // a1
        assert_eq!(lost, [(id, 4_000)]);
        assert_eq!(
            (e.free_gpu(), e.held_gpu(), e.lost_of(id)),
            (12_000, 4_000, 4)
        );
        assert!(e.fail_node(NodeIx(0)).unwrap().is_none()); // already down
        e.validate().unwrap();
        // Rack a has no other node: pending, naming the rack.
        match e.replace(id).unwrap() {
            Replaced::Pending(why) => assert!(why.contains("rack b1/a"), "{why}"),
            Replaced::Placed => panic!("rack a has no room"),
        }
        assert!(e.repair_node(NodeIx(0)).unwrap());
        assert!(!e.repair_node(NodeIx(0)).unwrap());
        assert_eq!(e.free_gpu(), 16_000);
        assert!(matches!(e.replace(id).unwrap(), Replaced::Placed));
        assert_eq!(
            (e.free_gpu(), e.held_gpu(), e.lost_of(id)),
            (12_000, 8_000, 0)
        );
        e.validate().unwrap();
        assert_eq!(e.release(id).unwrap(), 8_000);
        assert!(e.release(id).is_err());
        assert_eq!((e.free_gpu(), e.held_gpu()), (20_000, 0));
        e.validate().unwrap();
    }

    #[test]
    fn backfill_gives_what_admit_gives() {
        // Random small states: some capacity held, a head that waits, candidates.
        let mut rng = crate::rng::Rng::new(11);
        let mut placed_some = 0;
        for round in 0..200 {
            let mut a = Placer::new(cluster(), "nvidia.com/gpu");
            // Hold some GPUs here and there.
            for k in 0..1 + rng.below(4) {
                let r = a
                    .compile(
                        &format!("bg{k}"),
                        &workers(1 + rng.below(3) as u32),
                        &GangShape::Unconstrained,
                    )
                    .unwrap();
                if let Some(f) = a.find(&r).unwrap() {
                    a.reserve(f).unwrap();
                }
            }
            let mut b = Placer {
                inv: a.inv.clone(),
                solver: PreemptSolver::new(),
                given: Given {
                    inv: a.given.inv.clone(),
                    solver: Solver::new(),
                },
                gpu: a.gpu.clone(),
                nodes: a.nodes.clone(),
                totals: a.totals,
                held: a.held.clone(),
                external: a.external.clone(),
                profiling: false,
                profile: EngineProfile::default(),
                mask: NodeMask::new(),
                digest: None,
            };
            let shape = |i: u64| match i % 3 {
                0 => GangShape::Unconstrained,
                1 => GangShape::Required("rack".into()),
                _ => GangShape::Required("block".into()),
            };
            let big = |n: u32| vec![Role::new("w", n).request("nvidia.com/gpu", 4)];
            let head = a
                .compile("head", &big(2 + rng.below(3) as u32), &shape(rng.below(3)))
                .unwrap();
            if a.find(&head).unwrap().is_some() {
                continue;
            }
            let cands: Vec<Req> = (0..4)
                .map(|k| {
                    a.compile(
                        &format!("c{k}"),
                        &workers(1 + rng.below(5) as u32),
                        &shape(rng.below(3)),
                    )
                    .unwrap()
                })
                .collect();
            let refs: Vec<&Req> = cands.iter().collect();
            let pod = a.usable_probe("pod", &big(1)[0]).unwrap();
            let pass = a.backfill_begin(&[&pod]).unwrap();
            let mine: Vec<Option<ResId>> =
                refs.iter().map(|c| a.backfill_try(c).unwrap()).collect();
            a.backfill_end(pass);
            let (head_placed, theirs) = b.admit_backfill(&head, &refs).unwrap();
            assert!(head_placed.is_none());
            let got: Vec<Option<Vec<String>>> = mine
                .iter()
                .map(|id| {
                    id.map(|id| {
                        a.inv
                            .reservation(id.0)
                            .unwrap()
                            .assignments(&a.inv)
                            .iter()
                            .map(|m| format!("{}:{}", m.node, m.count))
                            .collect()
                    })
                })
                .collect();
            let want: Vec<Option<Vec<String>>> = theirs
                .iter()
                .map(|id| {
                    id.map(|id| {
                        b.inv
                            .reservation(id.0)
                            .unwrap()
                            .assignments(&b.inv)
                            .iter()
                            .map(|m| format!("{}:{}", m.node, m.count))
                            .collect()
                    })
                })
                .collect();
            assert_eq!(got, want, "round {round}");
            placed_some += got.iter().filter(|g| g.is_some()).count();
            a.validate().unwrap();
            b.validate().unwrap();
            assert_eq!(a.free_gpu(), b.free_gpu());
        }
        assert!(
            placed_some >= 20,
            "only {placed_some} backfilled: the test shows little"
        );
    }

    #[test]
    fn never_fitting_gangs_are_diagnosed_against_the_empty_cluster() {
        let mut e = Placer::new(cluster(), "nvidia.com/gpu");
        let r = e
            .compile("big", &workers(9), &GangShape::Required("rack".into()))
            .unwrap();
        assert!(!e.fits_empty(&r).unwrap());
        let why = e.diagnose_empty(&r);
        assert!(why.contains("does not fit in one rack"), "{why}");
        let bad = e.compile("x", &workers(1), &GangShape::Required("zone".into()));
        assert_eq!(request_error(&bad.unwrap_err()).0, "topology.required");
    }
}
