//! The solver: choose a level and a domain, then spread the members inside it.
//!
//! [`Solver::attempt`] tries the gang's depths in turn (deepest first); at each,
//! a single-role gang reads the best domain off the cached roll-up ([`Solver::single_at`])
//! and a multi-role gang goes through [`multi`]'s candidates, greedy packing and exact
//! [`search`]. Inside the chosen domain, [`descent`] spreads the members over as few
//! children as possible, level by level. A gang that is not placed is explained by
//! [`diagnose`]. Every try answers a [`Verdict`]: placed, does not fit, or the exact
//! search's [`Budget`] ran out.

pub(crate) mod bestfit;
pub(crate) mod bound;
pub(crate) mod cache;
pub(crate) mod capacity;
pub(crate) mod causes;
pub(crate) mod classes;
pub(crate) mod descent;
pub(crate) mod diagnose;
mod explain;
pub(crate) mod index;
pub(crate) mod lex;
pub(crate) mod mask;
pub(crate) mod menu;
pub(crate) mod multi;
pub(crate) mod peaks;
pub(crate) mod profile;
mod query;
pub(crate) mod rollup;
pub(crate) mod scan;
pub(crate) mod scratch;
pub(crate) mod search;
pub(crate) mod verdict;
pub(crate) mod whatif;

use std::sync::Arc;

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::{Compiled, CompiledGang, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::ix::Depth;
use crate::inventory::Inventory;
use crate::model::{Error, Policy};

use descent::Attempt;
use rollup::{Capacities, Grain};
use scratch::Scratch;
pub use verdict::Limits;
use verdict::{Budget, Search, Verdict};

/// Default number of work units the multi-role machinery may spend per query.
pub(crate) const DEFAULT_SEARCH_BUDGET: u64 = Limits::DEFAULT_WORK;

/// A reusable placement context: scratch space, per-shape capacity caches kept current
/// from the inventory's journal, and the search budget. Pass one to
/// [`Inventory::place_with`] and [`Inventory::find_with`] to ask repeatedly without
/// allocating beyond the result.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Outcome, Role, Solver, Topology};
/// const GPU: &str = "nvidia.com/gpu";
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes((1..=3).map(|i| NodeSpec::new(format!("n{i}")).label("rack", "a").capacity(GPU, 8)))
///     .build()?;
/// // Two 5-GPU and four 3-GPU members: greedy packing fails, the exact search does not.
/// let gang = Gang::new("g")
///     .role(Role::new("a", 2).request(GPU, 5))
///     .role(Role::new("b", 4).request(GPU, 3))
///     .required("rack");
/// let compiled = inv.compile(&gang)?;
/// let mut solver = Solver::new();
/// assert_eq!(solver.budget(), Solver::DEFAULT_SEARCH_BUDGET);
/// for _ in 0..3 {
///     assert!(inv.place_with(&mut solver, &compiled)?.is_placed()); // scratch reused
/// }
/// // With no budget for the search, the answer is "undecided", never "does not fit".
/// let mut hasty = Solver::with_search_budget(0);
/// assert_eq!(hasty.budget(), 0);
/// let out = inv.place_with(&mut hasty, &compiled)?;
/// assert!(matches!(out, Outcome::Undecided(_)));
/// assert!(out.diagnosis().unwrap().search_exhausted);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Solver {
    s: Scratch,
    cache: cache::Cache,
    /// Stale compiled gangs and their recompilation for the current layout.
    recompiled: Vec<(Arc<Compiled>, CompiledGang)>,
    limits: Limits,
    packing: Packing,
    /// Work units of a multi-role query's objective ([`multi::OBJECTIVE_WORK`]).
    objective_work: u64,
    /// The single-role objective's scratch space.
    lex: lex::Lex,
    /// The mirror for what-if questions (preemption), kept between queries.
    what_if: Option<Box<whatif::WhatIf>>,
}

/// Where an attempt placed the gang, and how its search ended.
#[derive(Debug, Clone, Copy)]
struct Found {
    scope: Scope,
    search: Search,
}

/// What a multi-role placement is asked for (a single role's is always the most
/// compact: it costs next to nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aim {
    /// The least vector (see [`search::tighten`]).
    Compact,
    /// Any placement that fits (for the diagnosis, which only reports where it fits).
    Fit,
}

/// Which domains a question looks at: all of them, or at one depth only those listed
/// (ascending positions). The what-if search narrows its questions so: with a set of
/// victims evicted, only the domains they free room in can take a gang that fitted
/// nowhere before — every other domain is as it was — so the answer is the same.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Span<'a> {
    All,
    Only(Depth, &'a [u32]),
}

/// How multi-role gangs are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Packing {
    /// Greedy packing, and the exact search when it fails.
    GreedyFirst,
    /// The exact search alone (for testing it).
    ExactOnly,
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// The number of patterns the exact multi-role search may try per query unless told
    /// otherwise ([`Solver::with_search_budget`]).
    ///
    /// ```
    /// use gang_core::Solver;
    /// assert_eq!(Solver::DEFAULT_SEARCH_BUDGET, 1_000_000);
    /// assert_eq!(Solver::new().budget(), Solver::DEFAULT_SEARCH_BUDGET);
    /// assert_eq!(Solver::with_search_budget(10).budget(), 10);
    /// ```
    pub const DEFAULT_SEARCH_BUDGET: u64 = DEFAULT_SEARCH_BUDGET;

    /// A solver with the default search budget ([`Solver::DEFAULT_SEARCH_BUDGET`]). See
    /// [`Solver`].
    pub fn new() -> Self {
        Solver::with_search_budget(Solver::DEFAULT_SEARCH_BUDGET)
    }

    /// A solver whose multi-role machinery may spend at most `budget` work units per
    /// query (see [`Limits`]). See [`Solver`].
    pub fn with_search_budget(budget: u64) -> Self {
        Solver::with_limits(Limits::work(budget))
    }

    /// A solver whose queries stop at `limits`. See [`Limits`].
    pub fn with_limits(limits: Limits) -> Self {
        Solver {
            s: Scratch::default(),
            cache: cache::Cache::default(),
            recompiled: Vec::new(),
            limits,
            packing: Packing::GreedyFirst,
            objective_work: multi::OBJECTIVE_WORK,
            lex: lex::Lex::default(),
            what_if: None,
        }
    }

    /// The work units one query may spend (the limits' `work`). See [`Solver`].
    pub fn budget(&self) -> u64 {
        self.limits.work
    }

    /// The limits every later query stops at.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Sets the limits for every later query (until set again): per call, set them
    /// before the call. Keeps the solver's caches. See [`Limits`].
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Skips greedy packing so that multi-role gangs go straight to the exact search.
    /// For testing the search on its own.
    #[doc(hidden)]
    pub fn exact_only(mut self) -> Self {
        self.packing = Packing::ExactOnly;
        self
    }

    /// Sets the work units a multi-role query's objective may spend in its branch and
    /// bound (4,000 by default): for testing what the bounds prove once they are spent.
    #[doc(hidden)]
    pub fn objective_work(mut self, units: u64) -> Self {
        self.objective_work = units;
        self
    }

    /// Places a compiled gang: all of it (or each role's `min_count`), or nothing; a
    /// gang compiled before nodes were added, removed or relabelled is compiled again
    /// on the fly. The public form is [`Inventory::place_with`].
    pub(crate) fn place(&mut self, inv: &Inventory, gang: &CompiledGang) -> Result<Outcome, Error> {
        let fresh = self.current(inv, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        Ok(match self.attempt(inv, gang) {
            Verdict::Placed(found) => Outcome::Placed(self.placement(inv, gang, found)),
            Verdict::NoFit => {
                Outcome::Unschedulable(diagnose::diagnose(self, inv, &gang.inner, Search::Complete))
            }
            Verdict::Exhausted => Outcome::Undecided(diagnose::diagnose(
                self,
                inv,
                &gang.inner,
                Search::Exhausted,
            )),
        })
    }

    /// [`Solver::place`] without the diagnosis: `None` for unschedulable and undecided
    /// alike. The public form is [`Inventory::find_with`].
    pub(crate) fn find(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
    ) -> Result<Option<Placement>, Error> {
        let fresh = self.current(inv, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        Ok(match self.attempt(inv, gang) {
            Verdict::Placed(found) => Some(self.placement(inv, gang, found)),
            Verdict::NoFit | Verdict::Exhausted => None,
        })
    }

    /// [`Solver::find`] telling "does not fit" (`Ok(Err(true))`) from "the search ran
    /// out before deciding" (`Ok(Err(false))`), for callers that reason about many
    /// what-if states (preemption) and must not take an undecided state for a "no".
    pub(crate) fn find_decided(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
    ) -> Result<Result<Placement, bool>, Error> {
        self.find_decided_in(inv, gang, Span::All)
    }

    /// [`Solver::find_decided`] looking only at the domains of `span` at its depth.
    /// The caller knows that no other domain there can take the gang (see [`Span`]);
    /// single-role gangs are narrowed, multi-role ones asked about everywhere.
    pub(crate) fn find_decided_in(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
        span: Span<'_>,
    ) -> Result<Result<Placement, bool>, Error> {
        let fresh = self.current(inv, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        Ok(match self.attempt_in(inv, gang, span) {
            Verdict::Placed(found) => Ok(self.placement(inv, gang, found)),
            Verdict::NoFit => Err(true),
            Verdict::Exhausted => Err(false),
        })
    }

    /// `None` when `gang` is compiled for `inv`'s layout; otherwise the gang compiled
    /// again (after nodes were added, removed or relabelled the compiled form is stale:
    /// it is compiled again once per layout and kept, so the capacity cache keeps
    /// hitting).
    fn current(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
    ) -> Result<Option<CompiledGang>, Error> {
        if gang.inner.layout_id == inv.layout_id {
            Ok(None)
        } else {
            self.recompiled(inv, gang).map(Some)
        }
    }

    /// Tries every depth of the gang in turn, deepest first; when placed, the members
    /// are in the attempt's assignment. A placement found after the search ran out of
    /// budget (at a tighter depth, or in another domain) says its search was not
    /// complete.
    fn attempt(&mut self, inv: &Inventory, gang: &CompiledGang) -> Verdict<Found> {
        self.attempt_in(inv, gang, Span::All)
    }

    /// [`Solver::attempt`] over the domains of `span` (single-role gangs).
    fn attempt_in(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
        span: Span<'_>,
    ) -> Verdict<Found> {
        let c = &gang.inner;
        self.s.ensure(inv);
        self.s.search.new_query();
        self.s.candidates.progress = Default::default();
        self.s.candidates.greedy_failed = false;
        self.s.candidates.objective_left = self.objective_work;
        self.s.candidates.proof_left = multi::PROOF_WORK;
        let mut budget = Budget::of(self.limits);
        let mut found = None;
        for &t in &c.levels {
            let verdict = match span {
                Span::Only(d, within)
                    if d == Depth(t) && c.roles.len() == 1 && !inv.is_node_level(d) =>
                {
                    match self.single_at(inv, c, d, Some(within)) {
                        Some(scope) => Verdict::Placed(scope),
                        None => budget.unplaced(),
                    }
                }
                _ => self.place_at(inv, c, Depth(t), Aim::Compact, &mut budget),
            };
            if let Verdict::Placed(scope) = verdict {
                found = Some(scope);
                break;
            }
        }
        self.s.candidates.progress.work = budget.spent();
        match found {
            Some(scope) => Verdict::Placed(Found {
                scope,
                search: budget.search(),
            }),
            None => budget.unplaced(),
        }
    }

    /// The placement an attempt found, built from its assignment (built where the
    /// caller returns it, so that the large result is not moved through a `Verdict`).
    fn placement(&mut self, inv: &Inventory, gang: &CompiledGang, found: Found) -> Placement {
        let s = &mut self.s;
        let complete = found.search == Search::Complete;
        Placement::new(
            inv,
            gang,
            found.scope,
            &s.attempt.assign,
            complete,
            &mut s.seen,
        )
    }

    /// The gang compiled again for `inv`'s layout, reusing an earlier recompilation.
    fn recompiled(&mut self, inv: &Inventory, stale: &CompiledGang) -> Result<CompiledGang, Error> {
        if let Some((_, fresh)) = self.recompiled.iter().find(|(old, fresh)| {
            Arc::ptr_eq(old, &stale.inner) && fresh.inner.layout_id == inv.layout_id
        }) {
            return Ok(fresh.clone());
        }
        let fresh = inv.recompile(stale.gang())?;
        self.recompiled
            .retain(|(old, _)| !Arc::ptr_eq(old, &stale.inner));
        if self.recompiled.len() >= 8 {
            self.recompiled.remove(0);
        }
        self.recompiled
            .push((Arc::clone(&stale.inner), fresh.clone()));
        Ok(fresh)
    }

    /// Tries to place the gang in one domain at depth `t`; when placed, the members are
    /// in the attempt's assignment.
    pub(crate) fn place_at(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: Depth,
        aim: Aim,
        budget: &mut Budget,
    ) -> Verdict<Scope> {
        if c.roles.len() > 1 {
            return self.multi_at(inv, c, t, aim, budget);
        }
        match self.single_at(inv, c, t, None) {
            Some(scope) => Verdict::Placed(scope),
            None => budget.unplaced(),
        }
    }

    /// One role: capacities are exact, so the best domain is read off the roll-up.
    /// `within`: only those domains at `t` (ascending positions) are looked at.
    fn single_at(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: Depth,
        within: Option<&[u32]>,
    ) -> Option<Scope> {
        let Solver { s, cache, lex, .. } = self;
        let warm = cache.lend(inv, c, RoleIx(0), &mut s.caps);
        if !s.caps.profiled && wants_profiles(inv, c, t, &s.caps) {
            if warm {
                // Kept from now on by the cache (moved node by node from the journal).
                profile::fill(inv, &s.caps.fits, &mut s.caps.profiles);
                s.caps.profiled = true;
            } else {
                // A first query only sizes them: a one-off shape does not pay for the
                // filling, and a repeated one fills them without allocating (a warm
                // query allocates nothing but its answer: tests/no_alloc.rs).
                profile::size(inv, &mut s.caps.profiles);
            }
        }
        let found = best_single(inv, c, t, &s.caps, &mut s.attempt, lex, within);
        cache.give_back(&mut s.caps);
        found
    }
}

/// Whether the objective's node bounds from profiles ([`lex`]) can help a single-role
/// gang at depth `t`: the vectors there have a domain level and a node level, and no
/// one node holds the gang. Profiles are filled only for warm entries (a repeated
/// shape), so a one-off query does not pay for them.
fn wants_profiles(inv: &Inventory, c: &Compiled, t: Depth, caps: &Capacities) -> bool {
    let role = c.role(RoleIx(0));
    let width = inv.node_depth().ix() - t.ix();
    let largest = caps.peaks[0].last().copied().unwrap_or(0);
    width >= 2 && u64::from(role.count) > largest
}

/// The best domain at depth `t` for a single-role gang, from its capacities, and its
/// members placed in it (into `at`): the most members (elastic gangs), then the least
/// vector of domains used per level ([`lex`]), then the policy on spare capacity, then
/// the first in topology order. `within` (not at the node level): only those domains
/// at `t` are looked at.
fn best_single(
    inv: &Inventory,
    c: &Compiled,
    t: Depth,
    caps: &Capacities,
    at: &mut Attempt,
    lx: &mut lex::Lex,
    within: Option<&[u32]>,
) -> Option<Scope> {
    let (r, role) = (RoleIx(0), c.role(RoleIx(0)));
    let (count, min) = (u64::from(role.count), u64::from(role.min));
    let step = Grain::of(c, role).at(Depth::CLUSTER);
    let objective = lex::Objective {
        inv,
        caps,
        grain: Grain::of(c, role),
        policy: c.policy,
        ri: r,
    };
    let (placed, index) = if inv.is_node_level(t) {
        // One node: every placement's vector is empty.
        pick(&caps.fits, count, min, step, c.policy)?
    } else {
        objective.choose_domain(lx, t, count, min, step, within)?
    };
    at.fresh(inv.resources.len());
    let scope = Scope::new(t, index);
    objective.assign(lx, scope, placed, at);
    Some(scope)
}

/// The domain (by position in `caps`) that takes the most members, `min..=count` in
/// multiples of `step`, breaking ties by `policy` on spare slots, then by position.
/// Returns the members placed and the position.
fn pick<T: Copy + Into<u64>>(
    caps: &[T],
    count: u64,
    min: u64,
    step: u64,
    policy: Policy,
) -> Option<(u64, u32)> {
    // One scan per policy, so that the scan compares spare slots without dispatching on
    // the policy at each domain.
    match policy {
        Policy::MostFree => pick_by(caps, count, min, step, |a, b| a > b, Exact::Continue),
        Policy::BestFit | Policy::Balanced => {
            pick_by(caps, count, min, step, |a, b| a < b, Exact::Stop)
        }
    }
}

/// Whether [`pick_by`] stops at an exact fit (nothing later can be tighter).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exact {
    Stop,
    Continue,
}

/// Domains [`pick_by`] tests at once before looking at each.
const CHUNK: usize = 8;

/// [`pick`] with the policy as `prefers(spare, best spare)`.
#[inline(always)]
fn pick_by<T: Copy + Into<u64>>(
    caps: &[T],
    count: u64,
    min: u64,
    step: u64,
    prefers: impl Fn(u64, u64) -> bool,
    exact: Exact,
) -> Option<(u64, u32)> {
    let floor = min.max(1);
    let mut best: Option<(u64, u64, u32)> = None;
    // Domain `index`: whether it is the best so far, and whether the scan may stop.
    let mut consider = |index: usize, cap: u64| -> bool {
        if cap < floor {
            return false;
        }
        let placed = if step == 1 {
            count.min(cap)
        } else {
            count.min(cap / step * step)
        };
        if placed < min || placed == 0 {
            return false;
        }
        let spare = cap - placed;
        if best.is_none_or(|(bp, bs, _)| placed > bp || (placed == bp && prefers(spare, bs))) {
            // Positions index domains or nodes, fewer than u32::MAX.
            best = Some((placed, spare, index as u32));
            return placed == count && spare == 0 && exact == Exact::Stop;
        }
        false
    };
    let chunks = caps.chunks_exact(CHUNK);
    let rest = chunks.remainder();
    'scan: {
        for (c, chunk) in chunks.enumerate() {
            // Most domains of a busy cluster cannot take the gang: a chunk is tested
            // without a branch per domain (the compiler vectorises it), and only a
            // chunk with a candidate is looked at domain by domain. The result is the
            // scan's over every domain.
            if !chunk
                .iter()
                .fold(false, |any, &cap| any | (cap.into() >= floor))
            {
                continue;
            }
            for (j, &cap) in chunk.iter().enumerate() {
                if consider(c * CHUNK + j, cap.into()) {
                    break 'scan;
                }
            }
        }
        let base = caps.len() - rest.len();
        for (j, &cap) in rest.iter().enumerate() {
            if consider(base + j, cap.into()) {
                break 'scan;
            }
        }
    }
    best.map(|(placed, _, index)| (placed, index))
}

/// Whether `policy` prefers a domain with spare `a` over one with spare `b`.
pub(crate) fn policy_prefers(policy: Policy, a: u64, b: u64) -> bool {
    match policy {
        Policy::MostFree => a > b,
        Policy::BestFit | Policy::Balanced => a < b,
    }
}

/// A xorshift generator for the solver's randomized unit tests: `next(n)` is below `n`.
#[cfg(test)]
pub(crate) fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::ix::NodeIx;
    use crate::{Gang, NodeSpec, Quantity, Role, Topology};
    use multi::room_for_minimum;

    const GPU: &str = "gpu";

    fn racks(free: &[(&str, &str, i64)]) -> Inventory {
        Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes(
                free.iter()
                    .map(|&(n, r, g)| NodeSpec::new(n).label("rack", r).capacity(GPU, g)),
            )
            .build()
            .unwrap()
    }

    #[test]
    fn pick_takes_the_most_members_then_the_policy_then_the_first() {
        use Policy::*;
        let pick1 = |caps: &[u64], count, min, policy| pick(caps, count, min, 1, policy);
        // Elastic: the domain taking 4 beats the one taking 3, whatever the policy.
        for policy in [BestFit, MostFree, Balanced] {
            assert_eq!(pick1(&[3, 10], 4, 2, policy), Some((4, 1)));
        }
        // All take 4; spare 6, 1, 2.
        assert_eq!(pick1(&[10, 5, 6], 4, 4, BestFit), Some((4, 1)));
        assert_eq!(pick1(&[10, 5, 6], 4, 4, Balanced), Some((4, 1)));
        assert_eq!(pick1(&[10, 5, 6], 4, 4, MostFree), Some((4, 0)));
        // Equal spare: the first, under every policy.
        for policy in [BestFit, MostFree, Balanced] {
            assert_eq!(pick1(&[2, 7, 7, 7], 4, 4, policy), Some((4, 1)));
        }
        // An exact fit after a looser one.
        assert_eq!(pick1(&[9, 4, 4], 4, 4, BestFit), Some((4, 1)));
        assert_eq!(pick1(&[4, 9], 4, 4, MostFree), Some((4, 1)));
        // Nothing, or nothing big enough.
        assert_eq!(pick1(&[], 4, 4, BestFit), None);
        assert_eq!(pick1(&[3, 2], 4, 4, BestFit), None);
        assert_eq!(pick1(&[0, 0], 4, 0, BestFit), None);
    }

    #[test]
    fn pick_respects_min_count_and_slice_steps() {
        // min 2: the 1 is too small, the 2 takes 2 of 4.
        assert_eq!(pick(&[1u64, 2], 4, 2, 1, Policy::BestFit), Some((2, 1)));
        // min 0 still needs one member somewhere.
        assert_eq!(pick(&[0u64, 1], 4, 0, 1, Policy::BestFit), Some((1, 1)));
        // Steps of 2: capacity 5 takes 4 (spare 1), capacity 3 takes 2.
        assert_eq!(pick(&[3u64, 5], 4, 2, 2, Policy::BestFit), Some((4, 1)));
        assert_eq!(pick(&[3u64], 4, 2, 2, Policy::BestFit), Some((2, 0)));
        // Capacity 3 holds one slice of 2: not the 4 required.
        assert_eq!(pick(&[3u64], 4, 4, 2, Policy::BestFit), None);
        // Spare counts capacity lost to rounding: 7 -> 4 (spare 3) vs 5 -> 4 (spare 1).
        assert_eq!(pick(&[7u64, 5], 4, 4, 2, Policy::BestFit), Some((4, 1)));
        assert_eq!(pick(&[7u64, 5], 4, 4, 2, Policy::MostFree), Some((4, 0)));
    }

    #[test]
    fn pick_handles_huge_capacities() {
        let count = u64::from(u32::MAX);
        let caps = [u64::MAX, 5_000_000_000, count];
        assert_eq!(
            pick(&caps, count, count, 1, Policy::BestFit),
            Some((count, 2))
        );
        assert_eq!(
            pick(&caps, count, count, 1, Policy::MostFree),
            Some((count, 0))
        );
        let even = count - 1;
        assert_eq!(pick(&caps, even, 2, 2, Policy::BestFit), Some((even, 2)));
        assert_eq!(
            pick(&[u64::MAX], u64::MAX, 1, 3, Policy::BestFit),
            Some((u64::MAX / 3 * 3, 0))
        );
    }

    #[test]
    fn pick_scans_in_chunks_as_it_would_one_by_one() {
        // The scan of `pick` before it tested chunks of domains at once.
        fn one_by_one(
            caps: &[u64],
            count: u64,
            min: u64,
            step: u64,
            policy: Policy,
        ) -> Option<(u64, u32)> {
            let mut best: Option<(u64, u64, u32)> = None;
            for (index, &cap) in caps.iter().enumerate() {
                if cap < min.max(1) {
                    continue;
                }
                let placed = count.min(cap / step * step);
                if placed < min || placed == 0 {
                    continue;
                }
                let spare = cap - placed;
                if best.is_none_or(|(bp, bs, _)| {
                    placed > bp || (placed == bp && policy_prefers(policy, spare, bs))
                }) {
                    best = Some((placed, spare, u32::try_from(index).unwrap()));
                    if placed == count && spare == 0 && policy != Policy::MostFree {
                        break;
                    }
                }
            }
            best.map(|(placed, _, index)| (placed, index))
        }
        let mut next = crate::solve::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..4000 {
            let len = usize::try_from(next(41)).unwrap();
            // Mostly too small, as on a busy cluster, with a few candidates.
            let caps: Vec<u64> = (0..len)
                .map(|_| if next(4) == 0 { next(12) } else { next(3) })
                .collect();
            let (count, step) = (1 + next(8), 1 + next(2));
            let min = next(count + 1);
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                let want = one_by_one(&caps, count, min, step, policy);
                assert_eq!(
                    pick(&caps, count, min, step, policy),
                    want,
                    "{caps:?} {count} {min} {step} {policy:?}"
                );
                let fits: Vec<u32> = caps.iter().map(|&c| u32::try_from(c).unwrap()).collect();
                assert_eq!(pick(&fits, count, min, step, policy), want);
            }
        }
    }

    #[test]
    fn policy_prefers_is_strict() {
        assert!(policy_prefers(Policy::BestFit, 1, 2));
        assert!(!policy_prefers(Policy::BestFit, 2, 1));
        assert!(policy_prefers(Policy::Balanced, 1, 2));
        assert!(!policy_prefers(Policy::Balanced, 2, 1));
        assert!(policy_prefers(Policy::MostFree, 2, 1));
        assert!(!policy_prefers(Policy::MostFree, 1, 2));
        for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
            assert!(
                !policy_prefers(policy, 3, 3),
                "ties keep the earlier domain"
            );
        }
    }

    #[test]
    fn scratch_is_sized_once_per_layout() -> Result<(), Error> {
        let mut inv = racks(&[("a1", "a", 8), ("a2", "a", 8), ("b1", "b", 8)]);
        let mut s = Scratch::default();
        s.ensure(&inv);
        let at = &s.attempt;
        assert_eq!(
            (
                s.caps.fits.len(),
                at.node_stamp.len(),
                at.touched_stamp.len()
            ),
            (3, 3, 3)
        );
        assert_eq!(s.caps.caps.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            at.dom_stamp.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(at.taken.len(), 3 * inv.resources.len());
        // Same layout (or a clone of it): untouched.
        s.caps.fits[0] = 7;
        s.attempt.stamp = 5;
        s.ensure(&inv);
        s.ensure(&inv.clone());
        assert_eq!((s.caps.fits[0], s.attempt.stamp), (7, 5));
        // Usage changes keep the layout.
        inv.set_used("a1", GPU, 2)?;
        s.ensure(&inv);
        assert_eq!(s.caps.fits[0], 7);
        // A new node and a new rack: resized and reset.
        inv.add_node(
            NodeSpec::new("c1")
                .label("rack", "c")
                .capacity(GPU, 8)
                .capacity("cpu", 4),
        )?;
        s.ensure(&inv);
        assert_eq!(
            (s.caps.fits.len(), s.caps.fits[0], s.attempt.stamp),
            (4, 0, 0)
        );
        assert_eq!(s.caps.caps.iter().map(Vec::len).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(s.attempt.taken.len(), 4 * 2);
        Ok(())
    }

    #[test]
    fn a_fresh_attempt_forgets_the_last_one() {
        let inv = racks(&[("a1", "a", 8), ("a2", "a", 8), ("b1", "b", 8)]);
        let mut s = Attempt::default();
        s.ensure(&inv);
        // A previous attempt charged node 1 and assigned a member there.
        s.taken[1] = 3000;
        s.touched.push(NodeIx(1));
        s.assign.push((0, 1, 3));
        s.fresh(1);
        assert_eq!(s.taken[1], 0);
        assert!(s.touched.is_empty() && s.assign.is_empty());
        assert_eq!(s.stamp, 1);
        // Stamps wrap: every old stamp is cleared, so none equals the new one.
        s.stamp = u32::MAX;
        s.node_stamp[2] = 1;
        s.touched_stamp[0] = 1;
        s.dom_stamp[1][1] = 1;
        s.fresh(1);
        assert_eq!(s.stamp, 1);
        assert!(s.node_stamp.iter().chain(&s.touched_stamp).all(|&x| x == 0));
        assert!(s.dom_stamp.iter().flatten().all(|&x| x == 0));
    }

    #[test]
    fn scope_count_counts_nodes_at_the_node_level() {
        let inv = racks(&[
            ("a1", "a", 8),
            ("a2", "a", 8),
            ("b1", "b", 8),
            ("c1", "c", 8),
        ]);
        assert_eq!([0, 1, 2].map(|d| inv.scope_count(Depth(d))), [1, 3, 4]);
        let nodes: Vec<Scope> = inv.scopes_at(Depth(2)).collect();
        assert_eq!(nodes.len(), 4);
        assert_eq!(nodes[3], Scope::new(Depth(2), 3));
        assert_eq!(nodes[3].node(), NodeIx(3));
    }

    #[test]
    fn single_role_ties_follow_the_policy() -> Result<(), Error> {
        let inv = racks(&[
            ("a1", "a", 6),
            ("b1", "b", 4),
            ("c1", "c", 4),
            ("d1", "d", 3),
        ]);
        let gang = |policy| {
            Gang::new("g")
                .role(Role::new("w", 4).request(GPU, 1))
                .required("rack")
                .policy(policy)
        };
        let rack = |policy| {
            inv.place(&gang(policy))
                .unwrap()
                .placement()
                .unwrap()
                .domain_path()
        };
        // Spare: a 2, b 0, c 0; d too small. Ties go to the first in topology order.
        assert_eq!(rack(Policy::BestFit), "b");
        assert_eq!(rack(Policy::Balanced), "b");
        assert_eq!(rack(Policy::MostFree), "a");
        // Elastic: the most members first, even against best-fit.
        let elastic = Gang::new("g")
            .role(Role::new("w", 8).min_count(2).request(GPU, 1))
            .required("rack");
        let p = inv.place(&elastic)?.placement().cloned().unwrap();
        assert_eq!((p.domain_path().as_str(), p.member_count()), ("a", 6));
        let none = Gang::new("g")
            .role(Role::new("w", 8).min_count(7).request(GPU, 1))
            .required("rack");
        assert!(matches!(inv.place(&none)?, Outcome::Unschedulable(_)));
        Ok(())
    }

    #[test]
    fn elastic_roles_fill_in_the_order_given() -> Result<(), Error> {
        let inv = racks(&[("a1", "a", 8)]);
        let role = |n: &str| Role::new(n, 6).min_count(2).request(GPU, 1);
        let p = inv.place(
            &Gang::new("g")
                .role(role("x"))
                .role(role("y"))
                .required("rack"),
        )?;
        let p = p.placement().unwrap();
        assert_eq!((p.placed("x"), p.placed("y")), (Some(6), Some(2)));
        let p = inv.place(
            &Gang::new("g")
                .role(role("y"))
                .role(role("x"))
                .required("rack"),
        )?;
        let p = p.placement().unwrap();
        assert_eq!((p.placed("x"), p.placed("y")), (Some(2), Some(6)));
        Ok(())
    }

    #[test]
    fn room_for_minimum_does_not_overflow() -> Result<(), Error> {
        let inv = Inventory::builder(Topology::new(["rack"])?)
            .node(
                NodeSpec::new("a1")
                    .label("rack", "a")
                    .capacity(GPU, Quantity::from_millis(u64::MAX - 1)),
            )
            .build()?;
        let half = Quantity::from_millis(1 << 63);
        let gang = |n| {
            Gang::new("g")
                .role(Role::new("big", n).request(GPU, half))
                .role(Role::new("small", 1).request(GPU, "1m"))
                .required("rack")
        };
        // 2 * 2^63 + 1 milli-GPUs: more than u64 holds, and more than the rack has.
        let two = inv.compile(&gang(2))?;
        let rack = Scope::new(Depth(1), 0);
        assert!(!room_for_minimum(&inv, &two.inner, rack));
        assert!(!inv.place_with(&mut Solver::new(), &two)?.is_placed());
        // 2^63 + 1 fits in u64::MAX - 1.
        let one = inv.compile(&gang(1))?;
        assert!(room_for_minimum(&inv, &one.inner, rack));
        assert!(inv.place_with(&mut Solver::new(), &one)?.is_placed());
        Ok(())
    }

    #[test]
    fn find_answers_what_place_answers() -> Result<(), Error> {
        // Rack a: three 8-GPU nodes; rack b: one.
        let inv = racks(&[
            ("a1", "a", 8),
            ("a2", "a", 8),
            ("a3", "a", 8),
            ("b1", "b", 8),
        ]);
        let mut solver = Solver::new();
        let fits = inv.compile(
            &Gang::new("g")
                .role(Role::new("w", 3).request(GPU, 8))
                .required("rack"),
        )?;
        let found = solver
            .find(&inv, &fits)?
            .expect("rack a has three free nodes");
        assert_eq!(
            Some(&found),
            inv.place_with(&mut solver, &fits)?.placement()
        );
        assert_eq!(found.domain_path(), "a");
        let too_big = inv.compile(
            &Gang::new("g")
                .role(Role::new("w", 4).request(GPU, 8))
                .required("rack"),
        )?;
        assert_eq!(inv.find_with(&mut solver, &too_big)?, None);
        assert!(matches!(
            inv.place_with(&mut solver, &too_big)?,
            Outcome::Unschedulable(_)
        ));
        // Greedy fails in rack a (see the search tests); with no budget the answer is
        // undecided, and find says None for it too.
        let tricky = inv.compile(
            &Gang::new("g")
                .role(Role::new("a", 2).request(GPU, 5))
                .role(Role::new("b", 4).request(GPU, 3))
                .required("rack"),
        )?;
        let mut hasty = Solver::with_search_budget(0);
        assert_eq!(inv.find_with(&mut hasty, &tricky)?, None);
        assert!(matches!(
            inv.place_with(&mut hasty, &tricky)?,
            Outcome::Undecided(_)
        ));
        let p = solver
            .find(&inv, &tricky)?
            .expect("the search finds 5+3, 5+3, 3+3");
        assert!(p.search_complete());
        // The search alone finds a placement too.
        assert!(inv
            .find_with(&mut Solver::new().exact_only(), &tricky)?
            .is_some());
        Ok(())
    }

    #[test]
    fn a_search_exhausted_at_a_tighter_level_is_reported() -> Result<(), Error> {
        let inv = racks(&[
            ("a1", "a", 8),
            ("a2", "a", 8),
            ("a3", "a", 8),
            ("b1", "b", 8),
        ]);
        let gang = Gang::new("g")
            .role(Role::new("a", 2).request(GPU, 5))
            .role(Role::new("b", 4).request(GPU, 3))
            .preferred("rack");
        let c = inv.compile(&gang)?;
        // With a budget: rack a, complete.
        let p = inv
            .place_with(&mut Solver::new(), &c)?
            .placement()
            .cloned()
            .unwrap();
        assert_eq!((p.level(), p.domain_path().as_str()), (Some("rack"), "a"));
        assert!(p.search_complete());
        // With less work allowed, every budget answers undecided, rack a (whose search
        // for the least vector may stop short, and then says so), or a split across
        // racks (using b1) that says a tighter placement may exist. (The budget counts all work, and on this small instance
        // the work before rack a's search already costs more than its patterns, so no
        // budget stops between the two: `Budget::share` keeps the units for later
        // levels when a long search runs out.)
        let mut split = 0;
        for budget in 0..2000 {
            match Solver::with_search_budget(budget).place(&inv, &c)? {
                Outcome::Placed(p) => {
                    p.validate(&inv).unwrap();
                    if p.level().is_none() {
                        assert!(!p.search_complete(), "budget {budget}");
                        assert!(p.node_counts().iter().any(|&(n, _)| n == "b1"));
                        split += 1;
                    } else {
                        assert_eq!(p.domain_path(), "a");
                        if budget == 1999 {
                            assert!(p.search_complete(), "budget {budget}");
                        }
                    }
                }
                Outcome::Undecided(_) => assert_eq!(split, 0, "budget {budget}"),
                Outcome::Unschedulable(d) => panic!("budget {budget}: {d}"),
            }
        }
        assert_eq!(split, 0);
        Ok(())
    }

    #[test]
    fn a_stale_gang_is_compiled_again_once() -> Result<(), Error> {
        let mut inv = racks(&[("a1", "a", 8)]);
        let gang = |n| {
            Gang::new("g")
                .role(Role::new("w", n).request(GPU, 8))
                .required("rack")
        };
        let two = inv.compile(&gang(2))?;
        let mut solver = Solver::new();
        assert_eq!(inv.find_with(&mut solver, &two)?, None);
        inv.add_node(NodeSpec::new("a2").label("rack", "a").capacity(GPU, 8))?;
        let first = inv.find_with(&mut solver, &two)?.expect("two nodes now");
        let second = inv.find_with(&mut solver, &two)?.expect("still");
        assert_eq!(first, second);
        assert!(
            Arc::ptr_eq(&first.compiled.inner, &second.compiled.inner),
            "compiled once"
        );
        assert!(!Arc::ptr_eq(&first.compiled.inner, &two.inner));
        assert_eq!(solver.recompiled.len(), 1);
        first.validate(&inv).unwrap();
        // Many stale gangs: at most 8 kept.
        let stale: Vec<CompiledGang> = (1..=10).map(|n| inv.compile(&gang(n)).unwrap()).collect();
        inv.add_node(NodeSpec::new("a3").label("rack", "a").capacity(GPU, 8))?;
        for c in &stale {
            inv.find_with(&mut solver, c)?;
        }
        assert_eq!(solver.recompiled.len(), 8);
        Ok(())
    }
}
