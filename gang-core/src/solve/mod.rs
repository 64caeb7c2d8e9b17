//! The solver: choose a level and a domain, then spread the members inside it.

pub(crate) mod cache;
pub(crate) mod descent;
pub(crate) mod diagnose;
mod query;
pub(crate) mod rollup;
pub(crate) mod scratch;
pub(crate) mod search;

use std::sync::Arc;

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::{Compiled, CompiledGang};
use crate::inventory::domains::Scope;
use crate::inventory::Inventory;
use crate::model::{Error, Policy};

use descent::descend;
use rollup::{cap_of, rollup, Grain};
use scratch::{Cand, Scratch};
use search::{search, Search};

/// Default number of patterns the exact multi-role search may try per query.
pub(crate) const DEFAULT_SEARCH_BUDGET: u64 = 1_000_000;

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
    pub(crate) s: Scratch,
    cache: cache::Cache,
    /// Stale compiled gangs and their recompilation for the current layout.
    recompiled: Vec<(Arc<Compiled>, CompiledGang)>,
    budget: u64,
    greedy: bool,
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
        Solver {
            s: Scratch::default(),
            cache: cache::Cache::default(),
            recompiled: Vec::new(),
            budget: Solver::DEFAULT_SEARCH_BUDGET,
            greedy: true,
        }
    }

    /// A solver whose exact multi-role search may try at most `budget` patterns per query.
    /// See [`Solver`].
    pub fn with_search_budget(budget: u64) -> Self {
        Solver {
            s: Scratch::default(),
            cache: cache::Cache::default(),
            recompiled: Vec::new(),
            budget,
            greedy: true,
        }
    }

    /// The number of patterns the exact multi-role search may try per query. See
    /// [`Solver`].
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Skips greedy packing so that multi-role gangs go straight to the exact search.
    /// For testing the search on its own.
    #[doc(hidden)]
    pub fn exact_only(mut self) -> Self {
        self.greedy = false;
        self
    }

    /// Places a compiled gang: all of it (or each role's `min_count`), or nothing; a
    /// gang compiled before nodes were added, removed or relabelled is compiled again
    /// on the fly. The public form is [`Inventory::place_with`].
    pub(crate) fn place(&mut self, inv: &Inventory, gang: &CompiledGang) -> Result<Outcome, Error> {
        let fresh;
        let gang = match self.current(inv, gang)? {
            Some(recompiled) => {
                fresh = recompiled;
                &fresh
            }
            None => gang,
        };
        let exhausted = match self.attempt(inv, gang) {
            Ok(placement) => return Ok(Outcome::Placed(placement)),
            Err(exhausted) => exhausted,
        };
        let diag = diagnose::diagnose(self, inv, &gang.inner, exhausted);
        Ok(if exhausted {
            Outcome::Undecided(diag)
        } else {
            Outcome::Unschedulable(diag)
        })
    }

    /// [`Solver::place`] without the diagnosis: `None` for unschedulable and undecided
    /// alike. The public form is [`Inventory::find_with`].
    pub(crate) fn find(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
    ) -> Result<Option<Placement>, Error> {
        Ok(match self.current(inv, gang)? {
            Some(fresh) => self.attempt(inv, &fresh),
            None => self.attempt(inv, gang),
        }
        .ok())
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

    /// Tries every level of the gang in turn: the placement, or whether the exact
    /// search ran out of budget.
    fn attempt(&mut self, inv: &Inventory, gang: &CompiledGang) -> Result<Placement, bool> {
        let c = &gang.inner;
        self.s.ensure(inv);
        let mut budget = self.budget;
        let mut exhausted = false;
        for &t in &c.levels {
            if let Some(found) = self.place_at(inv, c, t, &mut budget, &mut exhausted) {
                let s = &mut self.s;
                return Ok(Placement::new(
                    inv,
                    gang,
                    found,
                    &s.assign,
                    !exhausted,
                    &mut s.seen,
                ));
            }
        }
        Err(exhausted)
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

    /// Tries to place the gang in one domain at depth `t`; on success the members are in
    /// `s.assign`.
    pub(crate) fn place_at(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: usize,
        budget: &mut u64,
        exhausted: &mut bool,
    ) -> Option<Scope> {
        if c.roles.len() == 1 {
            self.single_at(inv, c, t)
        } else {
            self.multi_at(inv, c, t, budget, exhausted)
        }
    }

    /// One role: capacities are exact, so the best domain is read off the roll-up.
    fn single_at(&mut self, inv: &Inventory, c: &Arc<Compiled>, t: usize) -> Option<Scope> {
        let role = &c.roles[0];
        let grain = Grain::of(c, role);
        let step = grain.at(0);
        self.cache.lend(inv, c, 0, &mut self.s);
        let found = self.best_single(inv, c, t, grain, step);
        self.cache.give_back(&mut self.s);
        found
    }

    /// The best domain at depth `t` from the lent capacities, and the members spread in it.
    fn best_single(
        &mut self,
        inv: &Inventory,
        c: &Compiled,
        t: usize,
        grain: Grain<'_>,
        step: u64,
    ) -> Option<Scope> {
        let role = &c.roles[0];
        let (count, min) = (u64::from(role.count), u64::from(role.min));
        let best = if t > inv.label_depth() {
            pick(
                self.s.fits.iter().map(|&f| u64::from(f)),
                count,
                min,
                step,
                c.policy,
            )
        } else {
            pick(self.s.caps[t].iter().copied(), count, min, step, c.policy)
        };
        let (placed, index) = best?;
        self.s.fresh_attempt(inv.resources.len());
        let scope = Scope { depth: t, index };
        descend(
            inv,
            role,
            0,
            grain,
            scope,
            placed,
            c.policy,
            false,
            &mut self.s,
        );
        Some(Scope { depth: t, index })
    }

    /// Several roles: candidates from single-role bounds, each tried by greedy packing
    /// and, if that fails, exact search.
    fn multi_at(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: usize,
        budget: &mut u64,
        exhausted: &mut bool,
    ) -> Option<Scope> {
        let k = c.roles.len();
        let ndom = domain_count(inv, t);
        self.s.role_caps.resize_with(k, Vec::new);
        let mut unconstrained_upper = 0u64;
        for (i, role) in c.roles.iter().enumerate() {
            self.cache.lend(inv, c, i, &mut self.s);
            let mut caps = std::mem::take(&mut self.s.role_caps[i]);
            caps.clear();
            if role.constrained {
                caps.extend((0..ndom).map(|index| cap_of(inv, Scope { depth: t, index }, &self.s)));
            } else {
                let cap = self.s.caps[0][0];
                if cap < u64::from(role.min) {
                    self.s.role_caps[i] = caps;
                    self.cache.give_back(&mut self.s);
                    return None;
                }
                unconstrained_upper += cap.min(u64::from(role.count));
                caps.push(cap);
            }
            self.s.role_caps[i] = caps;
            self.cache.give_back(&mut self.s);
        }
        self.s.cands.clear();
        'dom: for index in 0..ndom {
            if t <= inv.label_depth() && !room_for_minimum(inv, c, t, index as usize) {
                continue;
            }
            let (mut upper, mut score) = (unconstrained_upper, 0u64);
            for (i, role) in c.roles.iter().enumerate() {
                if !role.constrained {
                    continue;
                }
                let step = Grain::of(c, role).at(0);
                let cap = self.s.role_caps[i][index as usize];
                let up = u64::from(role.count).min(cap / step * step);
                if up < u64::from(role.min) {
                    continue 'dom;
                }
                upper += up;
                score += cap - up;
            }
            self.s.cands.push(Cand {
                upper,
                score,
                index,
            });
        }
        let policy = c.policy;
        self.s.cands.sort_unstable_by(|a, b| {
            b.upper
                .cmp(&a.upper)
                .then_with(|| match policy {
                    Policy::MostFree => b.score.cmp(&a.score),
                    _ => a.score.cmp(&b.score),
                })
                .then(a.index.cmp(&b.index))
        });
        // Role order for greedy packing: constrained first, then the heaviest.
        self.s.order.clear();
        self.s.order.extend(0..k as u16);
        self.s.order.sort_unstable_by(|&a, &b| {
            let (ra, rb) = (&c.roles[a as usize], &c.roles[b as usize]);
            rb.constrained
                .cmp(&ra.constrained)
                .then(rb.weight.cmp(&ra.weight))
                .then(a.cmp(&b))
        });

        let mut best: Option<(u64, u32)> = None;
        let mut counts: smallvec::SmallVec<[u64; 4]> = smallvec::SmallVec::from_elem(0, k);
        for ci in 0..self.s.cands.len() {
            let cand = self.s.cands[ci];
            if best.is_some_and(|(total, _)| cand.upper <= total) {
                break;
            }
            let scope = Scope {
                depth: t,
                index: cand.index,
            };
            if let Some(total) = self.fill_domain(inv, c, scope, &mut counts, budget, exhausted) {
                if best.is_none_or(|(bt, _)| total > bt) {
                    best = Some((total, cand.index));
                    std::mem::swap(&mut self.s.assign, &mut self.s.best_assign);
                }
                if total == cand.upper {
                    break;
                }
            }
        }
        let (_, index) = best?;
        std::mem::swap(&mut self.s.assign, &mut self.s.best_assign);
        Some(Scope { depth: t, index })
    }

    /// The most members (lexicographically by role order, each at least `min_count`) that
    /// fit with constrained roles inside `scope`; the assignment is left in `s.assign`.
    fn fill_domain(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        counts: &mut [u64],
        budget: &mut u64,
        exhausted: &mut bool,
    ) -> Option<u64> {
        for (i, r) in c.roles.iter().enumerate() {
            counts[i] = u64::from(r.min);
        }
        if !self.feasible(inv, c, scope, counts, budget, exhausted) {
            return None;
        }
        let mut last_ok = std::mem::take(&mut self.s.assign);
        for i in 0..c.roles.len() {
            let role = &c.roles[i];
            let step = Grain::of(c, role).at(0);
            let cap = if role.constrained {
                self.s.role_caps[i][scope.index as usize]
            } else {
                self.s.role_caps[i][0]
            };
            let upper = u64::from(role.count).min(cap / step * step);
            // Binary search over multiples of `step` in (counts[i], upper].
            let (mut lo, mut hi) = (counts[i] / step, upper / step);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                counts[i] = mid * step;
                if self.feasible(inv, c, scope, counts, budget, exhausted) {
                    lo = mid;
                    std::mem::swap(&mut last_ok, &mut self.s.assign);
                } else {
                    hi = mid - 1;
                }
            }
            counts[i] = lo * step;
        }
        self.s.assign = last_ok;
        Some(counts.iter().sum())
    }

    /// Whether exactly `counts` members fit: greedy packing, then exact search.
    fn feasible(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        counts: &[u64],
        budget: &mut u64,
        exhausted: &mut bool,
    ) -> bool {
        if self.greedy && self.greedy(inv, c, scope, counts) {
            return true;
        }
        match search(inv, c, counts, scope, budget, &mut self.s) {
            Search::Found => true,
            Search::Infeasible => false,
            Search::Exhausted => {
                *exhausted = true;
                false
            }
        }
    }

    /// Roles one after another, each spread by [`descend`] over what the previous ones
    /// left, preferring domains and nodes the gang already uses.
    fn greedy(&mut self, inv: &Inventory, c: &Arc<Compiled>, scope: Scope, counts: &[u64]) -> bool {
        self.s.fresh_attempt(inv.resources.len());
        for oi in 0..self.s.order.len() {
            let i = self.s.order[oi] as usize;
            let role = &c.roles[i];
            if counts[i] == 0 {
                continue;
            }
            let grain = Grain::of(c, role);
            let ok = if role.constrained {
                // Inside the domain: a roll-up of its nodes, net of earlier roles.
                let taken = std::mem::take(&mut self.s.taken);
                let cap = rollup(inv, role, grain, scope, Some(&taken), &mut self.s);
                self.s.taken = taken;
                cap >= counts[i]
            } else {
                // Cluster-wide: the cached capacities, patched on the nodes earlier roles
                // took from (and restored after), instead of a roll-up of every node.
                self.cache.lend(inv, c, i, &mut self.s);
                self.s.undo.clear();
                for k in 0..self.s.touched.len() {
                    let n = self.s.touched[k];
                    let f = cache::contribution(inv, role, grain, n, Some(&self.s.taken));
                    let old = self.s.fits[n as usize];
                    self.s.undo.push((n, old));
                    cache::set_fit(inv, grain, n, f, &mut self.s);
                }
                let ok = self.s.caps[0][0] >= counts[i];
                if ok {
                    descend(
                        inv,
                        role,
                        i as u16,
                        grain,
                        Scope::CLUSTER,
                        counts[i],
                        c.policy,
                        true,
                        &mut self.s,
                    );
                }
                while let Some((n, old)) = self.s.undo.pop() {
                    cache::set_fit(inv, grain, n, old, &mut self.s);
                }
                self.cache.give_back(&mut self.s);
                if !ok {
                    return false;
                }
                continue;
            };
            if !ok {
                return false;
            }
            descend(
                inv,
                role,
                i as u16,
                grain,
                scope,
                counts[i],
                c.policy,
                true,
                &mut self.s,
            );
        }
        true
    }
}

/// Whether domain `index` at depth `t` has, in total, enough free capacity of every
/// resource for the constrained roles' minimum members together (a necessary condition
/// read off the summaries, before any packing is tried).
fn room_for_minimum(inv: &Inventory, c: &Compiled, t: usize, index: usize) -> bool {
    for r in 0..inv.resources.len() {
        let need: u128 = c
            .roles
            .iter()
            .filter(|role| role.constrained)
            .flat_map(|role| {
                role.req
                    .iter()
                    .filter(|q| q.0 as usize == r)
                    .map(move |q| u128::from(q.1) * u128::from(role.min))
            })
            .sum();
        let total = inv.summary(t, index, r).total;
        if total != u64::MAX && need > u128::from(total) {
            return false;
        }
    }
    true
}

/// Number of candidate domains at depth `t` (nodes at the node level).
pub(crate) fn domain_count(inv: &Inventory, t: usize) -> u32 {
    if t > inv.label_depth() {
        inv.len() as u32
    } else {
        inv.domains[t].len() as u32
    }
}

/// The domain (by position in `caps`) that takes the most members, `min..=count` in
/// multiples of `step`, breaking ties by `policy` on spare slots, then by position.
/// Returns the members placed and the position.
fn pick(
    caps: impl Iterator<Item = u64>,
    count: u64,
    min: u64,
    step: u64,
    policy: Policy,
) -> Option<(u64, u32)> {
    let mut best: Option<(u64, u64, u32)> = None;
    for (index, cap) in caps.enumerate() {
        if cap < min.max(1) {
            continue;
        }
        let placed = if step == 1 {
            count.min(cap)
        } else {
            count.min(cap / step * step)
        };
        if placed < min || placed == 0 {
            continue;
        }
        let spare = cap - placed;
        if best.is_none_or(|(bp, bs, _)| {
            placed > bp || (placed == bp && policy_prefers(policy, spare, bs))
        }) {
            best = Some((placed, spare, index as u32));
            if placed == count && spare == 0 && policy != Policy::MostFree {
                break; // an exact fit: nothing later can be tighter
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gang, NodeSpec, Quantity, Role, Topology};

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
        let pick1 =
            |caps: &[u64], count, min, policy| pick(caps.iter().copied(), count, min, 1, policy);
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
        assert_eq!(
            pick([1, 2].into_iter(), 4, 2, 1, Policy::BestFit),
            Some((2, 1))
        );
        // min 0 still needs one member somewhere.
        assert_eq!(
            pick([0, 1].into_iter(), 4, 0, 1, Policy::BestFit),
            Some((1, 1))
        );
        // Steps of 2: capacity 5 takes 4 (spare 1), capacity 3 takes 2.
        assert_eq!(
            pick([3, 5].into_iter(), 4, 2, 2, Policy::BestFit),
            Some((4, 1))
        );
        assert_eq!(
            pick([3].into_iter(), 4, 2, 2, Policy::BestFit),
            Some((2, 0))
        );
        // Capacity 3 holds one slice of 2: not the 4 required.
        assert_eq!(pick([3].into_iter(), 4, 4, 2, Policy::BestFit), None);
        // Spare counts capacity lost to rounding: 7 -> 4 (spare 3) vs 5 -> 4 (spare 1).
        assert_eq!(
            pick([7, 5].into_iter(), 4, 4, 2, Policy::BestFit),
            Some((4, 1))
        );
        assert_eq!(
            pick([7, 5].into_iter(), 4, 4, 2, Policy::MostFree),
            Some((4, 0))
        );
    }

    #[test]
    fn pick_handles_huge_capacities() {
        let count = u64::from(u32::MAX);
        let caps = [u64::MAX, 5_000_000_000, count];
        assert_eq!(
            pick(caps.into_iter(), count, count, 1, Policy::BestFit),
            Some((count, 2))
        );
        assert_eq!(
            pick(caps.into_iter(), count, count, 1, Policy::MostFree),
            Some((count, 0))
        );
        let even = count - 1;
        assert_eq!(
            pick(caps.into_iter(), even, 2, 2, Policy::BestFit),
            Some((even, 2))
        );
        assert_eq!(
            pick([u64::MAX].into_iter(), u64::MAX, 1, 3, Policy::BestFit),
            Some((u64::MAX / 3 * 3, 0))
        );
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
        assert_eq!(
            (s.fits.len(), s.node_stamp.len(), s.touched_stamp.len()),
            (3, 3, 3)
        );
        assert_eq!(s.caps.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(s.dom_stamp.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(s.taken.len(), 3 * inv.resources.len());
        // Same layout (or a clone of it): untouched.
        s.fits[0] = 7;
        s.stamp = 5;
        s.ensure(&inv);
        s.ensure(&inv.clone());
        assert_eq!((s.fits[0], s.stamp), (7, 5));
        // Usage changes keep the layout.
        inv.set_used("a1", GPU, 2)?;
        s.ensure(&inv);
        assert_eq!(s.fits[0], 7);
        // A new node and a new rack: resized and reset.
        inv.add_node(
            NodeSpec::new("c1")
                .label("rack", "c")
                .capacity(GPU, 8)
                .capacity("cpu", 4),
        )?;
        s.ensure(&inv);
        assert_eq!((s.fits.len(), s.fits[0], s.stamp), (4, 0, 0));
        assert_eq!(s.caps.iter().map(Vec::len).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(s.taken.len(), 4 * 2);
        Ok(())
    }

    #[test]
    fn a_fresh_attempt_forgets_the_last_one() {
        let inv = racks(&[("a1", "a", 8), ("a2", "a", 8), ("b1", "b", 8)]);
        let mut s = Scratch::default();
        s.ensure(&inv);
        // A previous attempt charged node 1 and assigned a member there.
        s.taken[1] = 3000;
        s.touched.push(1);
        s.assign.push((0, 1, 3));
        s.fresh_attempt(1);
        assert_eq!(s.taken[1], 0);
        assert!(s.touched.is_empty() && s.assign.is_empty());
        assert_eq!(s.stamp, 1);
        // Stamps wrap: every old stamp is cleared, so none equals the new one.
        s.stamp = u32::MAX;
        s.node_stamp[2] = 1;
        s.touched_stamp[0] = 1;
        s.dom_stamp[1][1] = 1;
        s.fresh_attempt(1);
        assert_eq!(s.stamp, 1);
        assert!(s.node_stamp.iter().chain(&s.touched_stamp).all(|&x| x == 0));
        assert!(s.dom_stamp.iter().flatten().all(|&x| x == 0));
    }

    #[test]
    fn domain_count_counts_nodes_at_the_node_level() {
        let inv = racks(&[
            ("a1", "a", 8),
            ("a2", "a", 8),
            ("b1", "b", 8),
            ("c1", "c", 8),
        ]);
        assert_eq!(
            (
                domain_count(&inv, 0),
                domain_count(&inv, 1),
                domain_count(&inv, 2)
            ),
            (1, 3, 4)
        );
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
        assert!(!room_for_minimum(&inv, &two.inner, 1, 0));
        assert!(!inv.place_with(&mut Solver::new(), &two)?.is_placed());
        // 2^63 + 1 fits in u64::MAX - 1.
        let one = inv.compile(&gang(1))?;
        assert!(room_for_minimum(&inv, &one.inner, 1, 0));
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
        // Without: rack a undecided, so it splits across racks (greedy manages that,
        // using b1) and says a tighter placement may exist.
        let p = Solver::with_search_budget(0)
            .place(&inv, &c)?
            .placement()
            .cloned()
            .unwrap();
        assert_eq!(p.level(), None);
        assert!(!p.search_complete());
        assert!(p.node_counts().iter().any(|&(n, _)| n == "b1"));
        p.validate(&inv).unwrap();
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
