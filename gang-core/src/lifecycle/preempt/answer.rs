//! What a preemption query answers and applies: the victims' identities
//! ([`VictimId`], [`Victim`]), the options that weigh them ([`PreemptOptions`]), the
//! plan ([`Preemption`]) and the answer ([`PreemptOutcome`]), each worded by its
//! `Display` (gang-core's one wording, `answer/render.rs`), and what applying a plan
//! evicted ([`Evicted`], [`Preempted`]).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::answer::diagnosis::Diagnosis;
use crate::answer::placement::Placement;
use crate::answer::render::{no_plan_words, preemption_words, INCOMPLETE_PLAN};
use crate::inventory::ledger::Reservation;
#[allow(unused_imports)] // named by the docs
use crate::inventory::Inventory;
use crate::model::{EvictableUnit, Quantity, ReservationId};

/// Which running work a [`Victim`] is: a reservation, or an evictable unit.
///
/// Ordered reservations first (by id), then units (by id): the order of the objective's
/// last tie-break.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "kind", content = "id", rename_all = "snake_case")
)]
pub enum VictimId {
    /// A live reservation of this inventory.
    Reservation(ReservationId),
    /// An [`EvictableUnit`] declared on this inventory, by its id.
    Unit(String),
}

/// One piece of running work a [`Preemption`] evicts, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Victim {
    /// The reservation or unit.
    pub id: VictimId,
    /// The reserved gang's name, or the unit's id.
    pub name: String,
    /// Its priority.
    pub priority: i32,
    /// Everything it holds, per resource (in the inventory's resource order), summed
    /// over its nodes.
    pub evicted: Vec<(String, Quantity)>,
    /// The cost the caller gave it ([`PreemptOptions::cost`]), 0 if none.
    pub cost: u64,
}

/// How [`Inventory::preempt_with`] weighs victims, and how much work it may do.
///
/// ```
/// use gang_core::lifecycle::{PreemptOptions, VictimId};
/// let o = PreemptOptions::default();
/// assert_eq!(o.get_cost_resources(), ["nvidia.com/gpu"]);
/// assert_eq!(o.get_max_work(), PreemptOptions::DEFAULT_WORK);
/// let o = PreemptOptions::new()
///     .cost_resources(["nvidia.com/gpu", "cpu"])
///     .cost(VictimId::Unit("pod-a".into()), 40)
///     .max_work(10_000);
/// assert_eq!(o.get_cost(&VictimId::Unit("pod-a".into())), 40);
/// assert_eq!(o.get_cost(&VictimId::Unit("pod-b".into())), 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptOptions {
    /// Shared with every plan made with them (a plan's words name them): a query that
    /// fits now copies nothing.
    pub(crate) cost_resources: Arc<[String]>,
    costs: BTreeMap<VictimId, u64>,
    pub(crate) max_work: u64,
}

impl Default for PreemptOptions {
    fn default() -> Self {
        PreemptOptions {
            cost_resources: Arc::from(["nvidia.com/gpu".to_owned()]),
            costs: BTreeMap::new(),
            max_work: Self::DEFAULT_WORK,
        }
    }
}

impl PreemptOptions {
    /// Work units a query may spend by default: a branch of the victim search is one,
    /// a question to the solver 32 (each of which is bounded by the solver's own
    /// [`Limits`](crate::Limits)).
    pub const DEFAULT_WORK: u64 = 1_000_000;

    /// The defaults: GPUs (`nvidia.com/gpu`) weigh the work lost, no given costs,
    /// [`PreemptOptions::DEFAULT_WORK`]. See [`PreemptOptions`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The resources whose evicted amounts measure the work lost, most important
    /// first (compared lexicographically, after any given cost). See [`PreemptOptions`].
    pub fn cost_resources<I: IntoIterator<Item = S>, S: Into<String>>(mut self, r: I) -> Self {
        self.cost_resources = r
            .into_iter()
            .map(Into::into)
            .collect::<Vec<String>>()
            .into();
        self
    }

    /// The cost of evicting one reservation or unit (e.g. GPUs × time since its last
    /// checkpoint). Given costs are compared before the evicted amounts; a victim given
    /// none costs 0 there. See [`PreemptOptions`].
    pub fn cost(mut self, victim: VictimId, cost: u64) -> Self {
        self.costs.insert(victim, cost);
        self
    }

    /// At most this many work units per query (see [`PreemptOptions::DEFAULT_WORK`]).
    pub fn max_work(mut self, work: u64) -> Self {
        self.max_work = work;
        self
    }

    /// The cost resources, in order. See [`PreemptOptions`].
    pub fn get_cost_resources(&self) -> &[String] {
        &self.cost_resources
    }

    /// The cost given to `victim`, 0 if none. See [`PreemptOptions`].
    pub fn get_cost(&self, victim: &VictimId) -> u64 {
        self.costs.get(victim).copied().unwrap_or(0)
    }

    /// The work limit. See [`PreemptOptions`].
    pub fn get_max_work(&self) -> u64 {
        self.max_work
    }
}

/// A preemption plan: the victims to evict (none when the gang fits now) and the
/// placement the gang gets once they are gone. Apply it with
/// [`Inventory::preempt_reserve`].
#[derive(Debug, Clone)]
pub struct Preemption {
    pub(crate) victims: Vec<Victim>,
    pub(crate) placement: Placement,
    pub(crate) complete: bool,
    /// `[given cost, amount of each cost resource…]`, summed over the victims; empty for
    /// all zeros when there is none ([`Preemption::cost`]: a query that fits now
    /// allocates nothing for it).
    pub(crate) cost: Vec<u128>,
    /// The cost resources (what the plan's words show of each victim).
    pub(crate) cost_resources: Arc<[String]>,
}

/// Zeros for the cost of a plan with no victims ([`Preemption::cost`]).
static ZERO_COST: [u128; ZERO_COST_LEN] = [0; ZERO_COST_LEN];
pub(crate) const ZERO_COST_LEN: usize = 32;

impl Preemption {
    /// The cost of a plan with no victims: `[0, 0 per cost resource…]`, without an
    /// allocation when it fits [`ZERO_COST`].
    pub(crate) fn zero_cost(cost_resources: &[String]) -> Vec<u128> {
        let n = cost_resources.len() + 1;
        if n <= ZERO_COST_LEN {
            Vec::new()
        } else {
            vec![0; n]
        }
    }
}

impl Preemption {
    /// The victims, in id order (reservations, then units). Empty when the gang fits
    /// now. See [`Inventory::preempt`].
    pub fn victims(&self) -> &[Victim] {
        &self.victims
    }

    /// The placement the gang gets once the victims are gone. See [`Inventory::preempt`].
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// The highest priority among the victims (`None` when there are none).
    pub fn highest_priority(&self) -> Option<i32> {
        self.victims.iter().map(|v| v.priority).max()
    }

    /// Total amount of `resource` the victims hold. See [`Inventory::preempt`].
    pub fn evicted(&self, resource: &str) -> Quantity {
        let m: u64 = self
            .victims
            .iter()
            .flat_map(|v| &v.evicted)
            .filter(|(r, _)| r == resource)
            .fold(0u64, |a, (_, q)| a.saturating_add(q.millis()));
        Quantity::from_millis(m)
    }

    /// The plan's work lost as the objective compares it: the sum of the given costs
    /// ([`PreemptOptions::cost`]), then the amount evicted of each cost resource
    /// ([`PreemptOptions::cost_resources`], in milli-units), in that order.
    pub fn cost(&self) -> &[u128] {
        if self.cost.is_empty() {
            &ZERO_COST[..self.cost_resources.len() + 1]
        } else {
            &self.cost
        }
    }

    /// The sum of the costs given to the victims ([`PreemptOptions::cost`]).
    pub fn given_cost(&self) -> u64 {
        self.victims
            .iter()
            .fold(0u64, |a, v| a.saturating_add(v.cost))
    }

    /// `false` when the search ran out of work ([`PreemptOptions::max_work`], or a
    /// multi-role placement's own budget) before proving this plan the best: a plan
    /// that evicts less may exist. It is a valid plan either way.
    pub fn search_complete(&self) -> bool {
        self.complete && self.placement.search_complete()
    }
}

/// The plan in words: the victims (priority and cost resources each) and where the gang
/// goes, as every face shows it ([`preemption_words`]), and a note when the search ran
/// out of work before proving it least.
impl fmt::Display for Preemption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.placement;
        let words = preemption_words(
            self.victims
                .iter()
                .map(|v| (v.name.as_str(), v.priority, v.evicted.as_slice())),
            &self.cost_resources,
            p.level(),
            &p.domain_path(),
        );
        f.write_str(&words)?;
        if !self.search_complete() {
            write!(f, " ({INCOMPLETE_PLAN})")?;
        }
        Ok(())
    }
}

/// The answer in words: the plan's, or why there is none and the diagnosis.
///
/// ```
/// use gang_core::{EvictableUnit, Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 2))
///     .evictable(EvictableUnit::new("pod-a", 0).amount("n1", "nvidia.com/gpu", 2))
///     .build()?;
/// let gang = |p| Gang::new("g").role(Role::new("w", 1).request("nvidia.com/gpu", 2)).priority(p);
/// assert_eq!(
///     inv.preempt(&gang(1))?.to_string(),
///     "evict pod-a (priority 0, 2 nvidia.com/gpu) across the cluster"
/// );
/// let none = inv.preempt(&gang(0))?.to_string();
/// assert!(none.starts_with("no eviction of lower-priority work makes it fit; even with all of it gone: gang g"), "{none}");
/// # Ok::<(), gang_core::Error>(())
/// ```
impl fmt::Display for PreemptOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreemptOutcome::Placed(plan) => plan.fmt(f),
            PreemptOutcome::Unschedulable(d) => write!(f, "{}: {d}", no_plan_words(false, None)),
            PreemptOutcome::Undecided(d) => write!(f, "{}: {d}", no_plan_words(true, None)),
        }
    }
}

/// What [`Inventory::preempt`] answers.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum PreemptOutcome {
    /// The gang fits now (no victims) or once the plan's victims are evicted.
    Placed(Preemption),
    /// No eviction of lower-priority, preemptible work makes it fit. The diagnosis is
    /// that of placing it with all such work evicted: how close even that comes.
    Unschedulable(Diagnosis),
    /// The work ran out before any plan was found or ruled out: one may exist.
    Undecided(Diagnosis),
}

impl PreemptOutcome {
    /// The plan, if there is one. See [`Inventory::preempt`].
    pub fn preemption(&self) -> Option<&Preemption> {
        match self {
            PreemptOutcome::Placed(p) => Some(p),
            _ => None,
        }
    }

    /// The diagnosis, if there is no plan. See [`Inventory::preempt`].
    pub fn diagnosis(&self) -> Option<&Diagnosis> {
        match self {
            PreemptOutcome::Placed(_) => None,
            PreemptOutcome::Unschedulable(d) | PreemptOutcome::Undecided(d) => Some(d),
        }
    }

    /// `"placed"`, `"unschedulable"` or `"undecided"`. See [`Inventory::preempt`].
    pub fn status(&self) -> &'static str {
        match self {
            PreemptOutcome::Placed(_) => "placed",
            PreemptOutcome::Unschedulable(_) => "unschedulable",
            PreemptOutcome::Undecided(_) => "undecided",
        }
    }
}

/// Running work evicted by [`Inventory::preempt_reserve`], as it was.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Evicted {
    /// A reservation, released whole.
    Reservation(Reservation),
    /// An evictable unit, withdrawn.
    Unit(EvictableUnit),
}

/// What [`Inventory::preempt_reserve`] did: the gang's new reservation and what was
/// evicted for it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Preempted {
    /// The gang's reservation.
    pub reservation: ReservationId,
    /// The victims, evicted, in the plan's order.
    pub evicted: Vec<Evicted>,
}
