//! Several roles in one domain at one depth.
//!
//! The phases of [`Solver::multi_at`]:
//! 1. **bounds** — each role's single-role capacity in every candidate domain (the
//!    cluster's for unconstrained roles), and the counted roles' peaks, from the
//!    capacity cache;
//! 2. **candidates** — the domains whose bounds reach every role's minimum (and whose
//!    summaries hold the minimum members together), each with a lower bound on its
//!    vector: per level the peaks' `ceil(members / largest unit)`, and at the node
//!    level the fewest nodes, largest fits first, that hold each group of counted roles
//!    (read off the cache's [`profile`]s, without visiting nodes; objective only);
//!    ranked by the most members, then that bound, then policy and order;
//! 3. **role order** for greedy packing: constrained roles first, then the heaviest;
//! 4. **the best candidate** — domains filled in rank order (the most members, role by
//!    role, each count found by binary search over "do exactly these counts fit?":
//!    the relaxation bound over the domain's nodes, greedy packing, then the exact
//!    search; the bound goes first once greedy has failed in the query), then its
//!    vector made least ([`tighten`], unless the bound shows the packing already is;
//!    only vectors below the best domain's so far are looked for). The best domain
//!    takes the most members, then has the least vector (node count included), then
//!    comes first by policy and order. Ranking by the bound makes this a best-first
//!    search: the filling stops at the first domain whose bound cannot beat the best
//!    (for elastic gangs such domains are skipped, as is one whose relaxation caps its
//!    members below the best's).

use std::cmp::Ordering;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::answer::diagnosis::SearchProgress;
use crate::compile::{Compiled, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::ledger::Member;
use crate::inventory::Inventory;
use crate::model::Policy;

use super::cache;
use super::descent::{charge, Descent};
use super::lex::MAX_WIDTH;
use super::profile;
use super::rollup::{rollup, Capacities, Grain};
use super::search::{members_bound, relaxation, search, tighten, vector_of, width, Moved, Vector};
use super::verdict::{Budget, Verdict};
use super::{Aim, Packing, Solver};

/// Candidate domains of one multi-role query, and their bounds.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    /// `[role][candidate domain]`: single-role capacity (one entry, the cluster's, for
    /// an unconstrained role).
    role_caps: Vec<Vec<u64>>,
    /// `[role][candidate domain * width + l]`: single-role peaks (see [`super::peaks`])
    /// of the roles the vector counts, for its lower bounds.
    role_peaks: Vec<Vec<u64>>,
    /// Scratch for [`vector_of`].
    ids: Vec<u32>,
    /// Domains that may hold the gang, best first.
    list: Vec<Cand>,
    /// Per role, its group's index in `reps` (`u32::MAX` for a role not counted), see
    /// [`Candidates::group_roles`].
    group: Vec<u32>,
    reps: SmallVec<[RoleIx; 4]>,
    /// The groups of two or more constrained roles, each its roles (see
    /// [`rank_candidates`]: they share their shape's capacity).
    shared: SmallVec<[SmallVec<[RoleIx; 4]>; 2]>,
    /// `list[..ranked_to]` is in rank order, and before the rest.
    ranked_to: usize,
    /// [`sort_candidates`] ranks only the first few next.
    first: bool,
    /// `[slot * width + l]`: a lower bound on each candidate's vector (each role at
    /// its minimum): the peaks', its node entry raised by [`Solver::strengthen`].
    lowers: Vec<u32>,
    /// The best filled domain's members so far.
    best_assign: Vec<Member>,
    /// `(resource, amount)`: what the constrained roles' minimum members need together,
    /// for the resources they request.
    need: Vec<(usize, u128)>,
    /// The members unconstrained roles can add in any domain.
    unconstrained_upper: u64,
    /// How far the query got: candidate domains ruled out and left undecided (work is
    /// filled in when the query ends).
    pub progress: SearchProgress,
    /// Work units the objective ([`tighten`]) may still spend in this query.
    pub objective_left: u64,
    /// Work units [`tighten`] may still spend in this query on proofs by the root's
    /// bound alone, once `objective_left` no longer reaches a walk.
    pub proof_left: u64,
    /// Greedy packing failed once in this query: from then on the relaxation bound is
    /// checked before it (a query that places usually does so greedily in its first
    /// candidate, and then the bound would only cost time).
    pub greedy_failed: bool,
}

impl Candidates {
    /// Groups the counted roles at depth `t` for [`Solver::fewest_nodes`] (into
    /// `group` and `reps`): roles of one shape (requests, eligibility) and without
    /// `max_per_node` are one group, since a node holds as many of their members
    /// together as of one of them; each group is named by its first role.
    fn group_roles(&mut self, c: &Compiled, t: Depth) {
        let (group, reps) = (&mut self.group, &mut self.reps);
        group.clear();
        reps.clear();
        self.shared.clear();
        let unlimited = |q: RoleIx| c.role(q).per_node == u32::MAX;
        for (r, role) in c.indexed_roles() {
            let g = if !counted(t, role.constrained) {
                u32::MAX
            } else if let Some(g) = reps
                .iter()
                .position(|&q| unlimited(q) && unlimited(r) && cache::same_shape(c, q, c, r))
            {
                g as u32
            } else {
                reps.push(r);
                (reps.len() - 1) as u32
            };
            group.push(g);
        }
        for g in 0..reps.len() as u32 {
            let mut roles = c
                .indexed_roles()
                .filter(|&(r, role)| group[r.ix()] == g && role.constrained)
                .map(|(r, _)| r);
            if let (Some(a), Some(b)) = (roles.next(), roles.next()) {
                let mut all: SmallVec<[RoleIx; 4]> = SmallVec::new();
                all.extend([a, b]);
                all.extend(roles);
                self.shared.push(all);
            }
        }
    }

    /// Each group's first role and the sums over its roles of `count(role)`'s pairs.
    fn group_sums(&self, count: impl Fn(usize) -> (u64, u64)) -> SmallVec<[(RoleIx, u64, u64); 4]> {
        let mut sums: SmallVec<[(RoleIx, u64, u64); 4]> =
            self.reps.iter().map(|&r| (r, 0, 0)).collect();
        for (r, &g) in self.group.iter().enumerate() {
            if let Some((_, a, b)) = sums.get_mut(g as usize) {
                let (x, y) = count(r);
                (*a, *b) = (*a + x, *b + y);
            }
        }
        sums
    }

    /// The per-level lower bound on the vector (`w` entries, into `out`, which has
    /// them) of a placement in candidate `scope` with `count(role)` members of each
    /// role, from the counted roles' peaks: a level needs at least
    /// `ceil(members / largest unit)` units for every role.
    fn lower_bound(
        &self,
        c: &Compiled,
        scope: Scope,
        w: usize,
        count: impl Fn(usize) -> u64,
        out: &mut [u32],
    ) {
        out.fill(0);
        let at = scope.ix() * w;
        for (r, peaks) in self.role_peaks[..c.roles.len()].iter().enumerate() {
            let x = count(r);
            if peaks.is_empty() || x == 0 {
                continue;
            }
            for (o, &peak) in out.iter_mut().zip(&peaks[at..at + w]) {
                let units = if peak == 0 {
                    u32::MAX
                } else {
                    u32::try_from(x.div_ceil(peak)).unwrap_or(u32::MAX)
                };
                *o = (*o).max(units);
            }
        }
    }
}

/// The best filled domain so far: its members, vector, spare capacity and index.
#[derive(Debug, Clone, Copy)]
struct Best {
    total: u64,
    vector: Vector,
    score: u64,
    index: u32,
}

impl Best {
    /// Whether a domain holding as many members, with vector `v` (or a lower bound on
    /// it; as many entries as the vector's width), spare capacity `score` and index
    /// `index`, would come first: the vectors compare first, then the policy, then the
    /// order.
    fn loses_to(&self, v: &[u32], score: u64, index: u32, policy: Policy) -> bool {
        v.cmp(&self.vector[..v.len()])
            .then_with(|| match policy {
                Policy::MostFree => self.score.cmp(&score),
                _ => score.cmp(&self.score),
            })
            .then(index.cmp(&self.index))
            .is_lt()
    }
}

/// A candidate domain: the most members it could take, its spare capacity, its index,
/// where its lower bound is in [`Candidates::lowers`], and that bound's first entry
/// (0 for an empty vector), which ranks it quickly.
#[derive(Debug, Clone, Copy)]
struct Cand {
    upper: u64,
    /// At most this many members: `upper` with each group of roles of one shape (see
    /// [`Candidates::group_roles`]) capped at its shape's capacity; not ranked by.
    most: u64,
    score: u64,
    index: u32,
    slot: u32,
    lead: u32,
}

/// Greedy packing's role order, and the cached fits it patches for one role.
#[derive(Debug, Default)]
pub(crate) struct Greedy {
    order: Vec<RoleIx>,
    /// `(node, fit before the patch)`, to restore.
    undo: Vec<(NodeIx, u32)>,
}

impl Solver {
    /// Several roles: the best domain at depth `t` (see the module docs); when placed,
    /// the members are in the attempt's assignment.
    pub(super) fn multi_at(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: Depth,
        aim: Aim,
        budget: &mut Budget,
    ) -> Verdict<Scope> {
        let Some(unconstrained_upper) = self.role_bounds(inv, c, t) else {
            return budget.unplaced();
        };
        self.s.candidates.unconstrained_upper = unconstrained_upper;
        let bounds = aim == Aim::Compact;
        self.s.candidates.group_roles(c, t);
        rank_candidates(
            inv,
            c,
            t,
            unconstrained_upper,
            bounds,
            &mut self.s.candidates,
        );
        if aim == Aim::Compact {
            self.strengthen(inv, c, t, 0, None);
        }
        self.s.candidates.ranked_to = 0;
        self.s.candidates.first = true;
        sort_candidates(&mut self.s.candidates, width(inv, t), c.policy);
        greedy_order(c, &mut self.s.greedy.order);
        match self.best_candidate(inv, c, t, aim, budget) {
            Some(index) => Verdict::Placed(Scope::new(t, index)),
            None => budget.unplaced(),
        }
    }

    /// Phase 1: every role's capacity per domain at `t` (constrained roles) or in the
    /// cluster (unconstrained ones); the members unconstrained roles can add, or `None`
    /// when one of them cannot reach its minimum anywhere.
    fn role_bounds(&mut self, inv: &Inventory, c: &Arc<Compiled>, t: Depth) -> Option<u64> {
        let Solver { s, cache, .. } = self;
        let Candidates {
            role_caps,
            role_peaks,
            ..
        } = &mut s.candidates;
        role_caps.resize_with(c.roles.len(), Vec::new);
        role_peaks.resize_with(c.roles.len(), Vec::new);
        let mut unconstrained_upper = 0u64;
        for (r, role) in c.indexed_roles() {
            cache.lend(inv, c, r, &mut s.caps);
            let caps = &mut role_caps[r.ix()];
            caps.clear();
            let peaks = &mut role_peaks[r.ix()];
            peaks.clear();
            if counted(t, role.constrained) && !inv.is_node_level(t) {
                peaks.extend_from_slice(&s.caps.peaks[t.ix()]);
            }
            if role.constrained {
                s.caps.copy_level(inv, t, caps);
            } else {
                let cap = s.caps.at(Depth::CLUSTER, 0);
                if cap < u64::from(role.min) {
                    cache.give_back(&mut s.caps);
                    return None;
                }
                unconstrained_upper += cap.min(u64::from(role.count));
                caps.push(cap);
            }
            cache.give_back(&mut s.caps);
        }
        Some(unconstrained_upper)
    }

    /// Phase 4: fills candidates in order; the index of the domain taking the most
    /// members, then of least domain levels of its vector ([`tighten`]), then by
    /// policy on spare capacity, then the first; its members left in the attempt. A
    /// domain is skipped when its bounds say it cannot come first.
    fn best_candidate(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: Depth,
        aim: Aim,
        budget: &mut Budget,
    ) -> Option<u32> {
        let w = width(inv, t);
        let elastic = c.roles.iter().any(|r| r.min < r.count);
        let mut best: Option<Best> = None;
        let mut counts: SmallVec<[u64; 4]> = SmallVec::from_elem(0, c.roles.len());
        // The best's members the bounds were last raised for (elastic gangs).
        let mut tie = None;
        for ci in 0..self.s.candidates.list.len() {
            if ci == self.s.candidates.ranked_to {
                sort_candidates(&mut self.s.candidates, w, c.policy);
            }
            let mut cand = self.s.candidates.list[ci];
            if let Some(b) = &best {
                if cand.upper < b.total {
                    break;
                }
                // Elastic gangs: a domain that ties on members holds more than the
                // roles' minimum counts, which raises its bound.
                if elastic && aim == Aim::Compact && tie != Some(b.total) {
                    self.strengthen(inv, c, t, ci, Some(b.total));
                    tie = Some(b.total);
                    // Ranked again by the raised bounds.
                    let cands = &mut self.s.candidates;
                    (cands.ranked_to, cands.first) = (ci, true);
                    sort_candidates(cands, w, c.policy);
                    cand = cands.list[ci];
                }
                // A domain that can at most tie on members must beat the best on its
                // vector's lower bound (fewer members never need a larger vector) or on
                // policy; the later ones that can at most tie have no smaller bound,
                // nor a better policy on an equal one.
                let at = cand.slot as usize * w;
                let lower = &self.s.candidates.lowers[at..at + w];
                let contender = b.loses_to(lower, cand.score, cand.index, c.policy);
                if cand.upper == b.total && !contender {
                    break;
                }
                // Elastic gangs: a domain whose nodes cannot hold as many members as the
                // best so far (by the relaxation, tighter than the roles' capacities
                // taken one by one) is not filled.
                if elastic {
                    // First without visiting nodes: the groups' capacities.
                    if cand.most < b.total || (cand.most == b.total && !contender) {
                        continue;
                    }
                    let s = &mut self.s;
                    let free = s.candidates.unconstrained_upper;
                    let scope = Scope::new(t, cand.index);
                    match members_bound(inv, c, scope, budget, &mut s.search) {
                        Some(inside) => {
                            let most = free + inside.min(cand.upper - free);
                            if most < b.total || (most == b.total && !contender) {
                                continue;
                            }
                        }
                        None => {
                            let left = self.s.candidates.list.len() - ci;
                            let p = &mut self.s.candidates.progress;
                            p.undecided = p.undecided.saturating_add(left as u32);
                            break;
                        }
                    }
                }
            }
            let scope = Scope::new(t, cand.index);
            let Some(total) = self.fill_domain(inv, c, scope, &mut counts, budget) else {
                continue;
            };
            if best.is_some_and(|b| total < b.total) {
                continue;
            }
            if aim == Aim::Fit {
                // Any domain with the most members: the first.
                if best.is_none_or(|b| total > b.total) {
                    best = Some(Best {
                        total,
                        vector: [0; MAX_WIDTH],
                        score: cand.score,
                        index: cand.index,
                    });
                    let s = &mut self.s;
                    std::mem::swap(&mut s.attempt.assign, &mut s.candidates.best_assign);
                }
                if total == cand.upper {
                    break;
                }
                continue;
            }
            // As many members as the best: only a smaller vector can win (or an equal
            // one, for a domain the policy puts first).
            let cutoff = best.filter(|b| b.total == total && w > 0).map(|b| {
                let mut cut = b.vector;
                if b.loses_to(&b.vector[..w], cand.score, cand.index, c.policy) {
                    cut[w - 1] = cut[w - 1].saturating_add(1);
                }
                cut
            });
            let vector = self.least_vector(inv, c, scope, &counts, cutoff, budget);
            let first = best.is_none_or(|b| {
                total > b.total || b.loses_to(&vector[..w], cand.score, cand.index, c.policy)
            });
            if first {
                best = Some(Best {
                    total,
                    vector,
                    score: cand.score,
                    index: cand.index,
                });
                let s = &mut self.s;
                std::mem::swap(&mut s.attempt.assign, &mut s.candidates.best_assign);
            }
        }
        let index = best?.index;
        let s = &mut self.s;
        std::mem::swap(&mut s.attempt.assign, &mut s.candidates.best_assign);
        Some(index)
    }

    /// The least vector of `counts` in `scope`, starting from the assignment packing
    /// found (left in the attempt): proven by the lower bound (the peaks', its node
    /// entry raised to [`Solver::fewest_nodes`]) when it meets it, else
    /// by [`tighten`] (which only looks below `cutoff`, another domain's vector this
    /// one must beat, and is skipped when the bound already reaches it). With slices
    /// the packed assignment is kept as it is.
    fn least_vector(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        counts: &[u64],
        cutoff: Option<Vector>,
        budget: &mut Budget,
    ) -> Vector {
        let mut v: Vector = [0; MAX_WIDTH];
        let w = width(inv, scope.depth);
        let s = &mut self.s;
        vector_of(
            inv,
            scope,
            |r| counted(scope.depth, c.roles[r].constrained),
            &s.attempt.assign,
            &mut s.candidates.ids,
            &mut v,
        );
        if w == 0 || c.has_slices() {
            return v;
        }
        let mut lower: Vector = [0; MAX_WIDTH];
        s.candidates
            .lower_bound(c, scope, w, |r| counts[r], &mut lower[..w]);
        let nodes = self.fewest_nodes(inv, c, scope, |r| counts[r]);
        lower[w - 1] = lower[w - 1].max(nodes);
        let s = &mut self.s;
        if lower[..w] == v[..w] || cutoff.is_some_and(|cut| lower[..w] >= cut[..w]) {
            return v;
        }
        let mut share = budget.share_at_most(s.candidates.objective_left);
        let mut proof = budget.share_at_most(s.candidates.proof_left);
        let (v, moved) = tighten(
            inv,
            c,
            counts,
            scope,
            v,
            cutoff,
            &mut share,
            &mut proof,
            &mut s.search,
            &mut s.attempt.assign,
        );
        s.candidates.objective_left -= share.spent();
        s.candidates.proof_left -= proof.spent();
        // Both count down to the next clock read from the same start: the walk's count
        // is kept (a deadline's read comes late by at most the proof's few units).
        budget.absorb(proof);
        budget.absorb(share);
        if moved == Moved::Away {
            self.repack_unconstrained(inv, c, counts);
        }
        v
    }

    /// A lower bound on the nodes that hold `count(role)` members of every counted role
    /// in `scope` (above the node level): for each group of counted roles (see
    /// [`Candidates::group_roles`]), the fewest of the domain's nodes, largest fits first, whose
    /// fits reach the group's members (from the profiles of the capacity cache);
    /// `u32::MAX` when they cannot.
    fn fewest_nodes(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        count: impl Fn(usize) -> u64,
    ) -> u32 {
        let w = width(inv, scope.depth);
        let mut most = 0u32;
        for (r, _, x) in self.s.candidates.group_sums(|r| (0, count(r))) {
            let Solver { s, cache, .. } = self;
            let nodes = with_profiles(cache, &mut s.caps, inv, c, r, |caps| {
                fewest_in(caps, scope.depth, w, scope.index, x)
            });
            most = most.max(nodes);
        }
        most
    }

    /// Raises the node entry of the lower bound of candidates `from..` (at depth `t`)
    /// to [`Solver::fewest_nodes`] of the members each group of roles must have: at
    /// least its minimum counts, and when the candidates can at most tie with a best
    /// domain of `tie` members, what that leaves after the other roles' counts.
    fn strengthen(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        t: Depth,
        from: usize,
        tie: Option<u64>,
    ) {
        let w = width(inv, t);
        if w == 0 || c.has_slices() {
            return;
        }
        let all: u64 = c.roles.iter().map(|r| u64::from(r.count)).sum();
        let pairs = |r: usize| (u64::from(c.roles[r].min), u64::from(c.roles[r].count));
        for (r, least, most) in self.s.candidates.group_sums(pairs) {
            // The members a tying candidate's group must hold: the tie less every
            // other role's members.
            let x = tie.map_or(least, |tie| least.max(tie.saturating_sub(all - most)));
            let Solver { s, cache, .. } = self;
            let Candidates { list, lowers, .. } = &mut s.candidates;
            with_profiles(cache, &mut s.caps, inv, c, r, |caps| {
                for cand in &mut list[from..] {
                    let k = fewest_in(caps, t, w, cand.index, x);
                    let node = &mut lowers[cand.slot as usize * w + w - 1];
                    *node = (*node).max(k);
                    if w == 1 {
                        cand.lead = *node;
                    }
                }
            });
        }
    }

    /// After the least vector moved the constrained members, places the unconstrained
    /// ones again as packing does (on the domains and nodes the gang uses, by policy),
    /// keeping the ones outside the domain when that fails.
    fn repack_unconstrained(&mut self, inv: &Inventory, c: &Arc<Compiled>, counts: &[u64]) {
        let at = &mut self.s.attempt;
        let (kept, away): (Vec<Member>, Vec<Member>) = at
            .assign
            .iter()
            .partition(|m| c.roles[usize::from(m.0)].constrained);
        at.fresh(inv.resources.len());
        for &(r, n, x) in &kept {
            charge(inv, (RoleIx(r), c.role(RoleIx(r))), NodeIx(n), x, at);
        }
        if !self.greedy_unconstrained(inv, c, counts) {
            let at = &mut self.s.attempt;
            at.assign.clear();
            at.assign.extend_from_slice(&kept);
            at.assign.extend_from_slice(&away);
        }
    }

    /// The most members (lexicographically by role order, each at least `min_count`) that
    /// fit with constrained roles inside `scope`; the assignment is left in the attempt.
    fn fill_domain(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        counts: &mut [u64],
        budget: &mut Budget,
    ) -> Option<u64> {
        for (count, r) in counts.iter_mut().zip(&c.roles) {
            *count = u64::from(r.min);
        }
        match self.feasible(inv, c, scope, counts, budget) {
            Verdict::Placed(()) => {}
            Verdict::NoFit => {
                self.s.candidates.progress.ruled_out += 1;
                return None;
            }
            Verdict::Exhausted => {
                self.s.candidates.progress.undecided += 1;
                return None;
            }
        }
        let mut last_ok = std::mem::take(&mut self.s.attempt.assign);
        for (r, role) in c.indexed_roles() {
            let i = r.ix();
            let step = Grain::of(c, role).at(Depth::CLUSTER);
            let role_caps = &self.s.candidates.role_caps[i];
            let cap = if role.constrained {
                role_caps[scope.ix()]
            } else {
                role_caps[0]
            };
            let upper = u64::from(role.count).min(cap / step * step);
            // Binary search over multiples of `step` in (counts[i], upper].
            let (mut lo, mut hi) = (counts[i] / step, upper / step);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                counts[i] = mid * step;
                if self.feasible(inv, c, scope, counts, budget).is_placed() {
                    lo = mid;
                    std::mem::swap(&mut last_ok, &mut self.s.attempt.assign);
                } else {
                    hi = mid - 1;
                }
            }
            counts[i] = lo * step;
        }
        self.s.attempt.assign = last_ok;
        Some(counts.iter().sum())
    }

    /// Whether exactly `counts` members fit: greedy packing, then exact search.
    fn feasible(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        scope: Scope,
        counts: &[u64],
        budget: &mut Budget,
    ) -> Verdict {
        let greedy = self.packing == Packing::GreedyFirst;
        let bound_first = !greedy || self.s.candidates.greedy_failed;
        if bound_first {
            match relaxation(inv, c, counts, scope, budget, &mut self.s.search) {
                Verdict::Placed(()) => {}
                no => return no,
            }
        }
        if greedy {
            let (start, end) = scope.range(inv);
            if !budget.spend_n(u64::from(end - start) + 1) {
                return Verdict::Exhausted;
            }
            if self.greedy(inv, c, scope, counts) {
                return Verdict::Placed(());
            }
            self.s.candidates.greedy_failed = true;
            if !bound_first {
                match relaxation(inv, c, counts, scope, budget, &mut self.s.search) {
                    Verdict::Placed(()) => {}
                    no => return no,
                }
            }
        }
        let s = &mut self.s;
        let found = search(
            inv,
            c,
            counts,
            scope,
            budget,
            &mut s.search,
            &mut s.attempt.assign,
        );
        // The search puts unconstrained members outside the domain first: packed again
        // as packing would, on the gang's nodes.
        let away = scope.depth != Depth::CLUSTER
            && c.roles
                .iter()
                .zip(counts)
                .any(|(r, &n)| !r.constrained && n > 0);
        if found.is_placed() && away {
            self.repack_unconstrained(inv, c, counts);
        }
        found
    }

    /// Roles one after another (in the greedy order), each spread by [`Descent`] over
    /// what the previous ones left, preferring domains and nodes the gang already uses.
    fn greedy(&mut self, inv: &Inventory, c: &Arc<Compiled>, scope: Scope, counts: &[u64]) -> bool {
        let Solver { s, .. } = self;
        let (caps, at) = (&mut s.caps, &mut s.attempt);
        at.fresh(inv.resources.len());
        for &r in &s.greedy.order {
            let role = c.role(r);
            let need = counts[r.ix()];
            if need == 0 || !role.constrained {
                continue;
            }
            let grain = Grain::of(c, role);
            let descent = Descent::new(inv, c, r);
            // Inside the domain: a roll-up of its nodes, net of earlier roles.
            if rollup(inv, role, grain, scope, Some(&at.taken), caps) < need {
                return false;
            }
            descent.run(scope, need, caps, at);
        }
        // The domain's ancestors are the gang's too: unconstrained members prefer them.
        let (first, _) = scope.range(inv);
        for d in 0..scope.depth.ix() {
            if let Some(di) = inv.domain_of(first, d) {
                at.dom_stamp[d][di as usize] = at.stamp;
            }
        }
        self.greedy_unconstrained(inv, c, counts)
    }

    /// The unconstrained roles of [`Solver::greedy`], after the constrained ones (whose
    /// members are in the attempt), each spread cluster-wide.
    fn greedy_unconstrained(&mut self, inv: &Inventory, c: &Arc<Compiled>, counts: &[u64]) -> bool {
        let Solver { s, cache, .. } = self;
        let (caps, at) = (&mut s.caps, &mut s.attempt);
        let Greedy { order, undo } = &mut s.greedy;
        for &r in order.iter() {
            let role = c.role(r);
            let need = counts[r.ix()];
            if need == 0 || role.constrained {
                continue;
            }
            let grain = Grain::of(c, role);
            let descent = Descent::new(inv, c, r);
            // Cluster-wide: the cached capacities, patched on the nodes earlier roles
            // took from (and restored after), instead of a roll-up of every node.
            cache.lend(inv, c, r, caps);
            undo.clear();
            for &n in &at.touched {
                let f = cache::contribution(inv, role, grain, n, Some(&at.taken));
                undo.push((n, caps.fit(n)));
                cache::set_fit(inv, grain, n, f, caps);
            }
            let ok = caps.at(Depth::CLUSTER, 0) >= need;
            if ok {
                descent.run(Scope::CLUSTER, need, caps, at);
            }
            while let Some((n, old)) = undo.pop() {
                cache::set_fit(inv, grain, n, old, caps);
            }
            cache.give_back(caps);
            if !ok {
                return false;
            }
        }
        true
    }
}

/// Work units the objective's branch and bound may spend in one query, in all its
/// domains (beyond them the best assignment found is kept, and the placement says its
/// search was not complete): about a millisecond.
pub(crate) const OBJECTIVE_WORK: u64 = 4_000;

/// Work units a query may spend, once [`OBJECTIVE_WORK`] is spent, on proving without
/// a walk that a domain's vector cannot beat the best so far (setting up the root's
/// bound by levels: the domain's nodes and their packing maxima).
pub(crate) const PROOF_WORK: u64 = 4_000;

/// Whether a role's members count in the vector of a placement at depth `t`: the
/// constrained roles', and every role's for a placement over the whole cluster.
fn counted(t: Depth, constrained: bool) -> bool {
    constrained || t == Depth::CLUSTER
}

/// Phase 2: the candidate domains at `t`, with the most members their bounds allow,
/// their spare capacity and (with `bounds`, for the objective) the peaks' lower bound
/// on their vectors (ranked by [`sort_candidates`] once [`Solver::strengthen`] has
/// raised the bounds).
fn rank_candidates(
    inv: &Inventory,
    c: &Compiled,
    t: Depth,
    unconstrained_upper: u64,
    bounds: bool,
    cand: &mut Candidates,
) {
    cand.list.clear();
    cand.lowers.clear();
    minimum_need(inv, c, &mut cand.need);
    let w = width(inv, t);
    'dom: for scope in inv.scopes_at(t) {
        if !inv.is_node_level(t) && !room_for(inv, &cand.need, scope) {
            continue;
        }
        let (mut upper, mut score) = (unconstrained_upper, 0u64);
        for (role, caps) in c.roles.iter().zip(&cand.role_caps) {
            if !role.constrained {
                continue;
            }
            let step = Grain::of(c, role).at(Depth::CLUSTER);
            let cap = caps[scope.ix()];
            let up = u64::from(role.count).min(cap / step * step);
            if up < u64::from(role.min) {
                continue 'dom;
            }
            upper += up;
            score += cap - up;
        }
        // Constrained roles of one shape without `max_per_node` (a group of
        // `group_roles`) share each node's fit: a node holds as many of their members
        // together as of one role alone, so the domain holds at most the shape's
        // capacity of them (without slices, whose capacities are rounded per domain).
        // A domain whose capacity is below the group's minimum members is ruled out
        // here, as its relaxation bound would rule it out.
        let mut most = upper;
        if !c.has_slices() {
            for roles in &cand.shared {
                let shape = cand.role_caps[roles[0].ix()][scope.ix()];
                let (mut least, mut group_most) = (0u64, 0u64);
                for &r in roles {
                    let role = c.role(r);
                    least += u64::from(role.min);
                    group_most += u64::from(role.count).min(shape);
                }
                if least > shape {
                    cand.progress.ruled_out += 1;
                    continue 'dom;
                }
                most -= group_most - group_most.min(shape);
            }
        }
        let at = cand.lowers.len();
        cand.lowers.resize(at + w, 0);
        let mut lead = 0;
        if bounds {
            let mut lower = std::mem::take(&mut cand.lowers);
            cand.lower_bound(c, scope, w, |r| u64::from(c.roles[r].min), &mut lower[at..]);
            lead = lower.get(at).copied().filter(|_| w > 0).unwrap_or(0);
            cand.lowers = lower;
        }
        cand.list.push(Cand {
            upper,
            most,
            score,
            index: scope.index,
            slot: cand.list.len() as u32,
            lead,
        });
    }
}

/// Ranks candidates: the most members, then the least lower bound on their vectors
/// (`w` entries), then the policy on their spare capacity, then their order (so that
/// among domains that tie on members, the first whose vector meets its bound ends the
/// search).
///
/// From [`Candidates::ranked_to`] on, only the next [`RANKED_FIRST`] are put in order
/// (selected in linear time) the first time, all the rest the next: a query usually
/// stops among the first.
fn sort_candidates(cands: &mut Candidates, w: usize, policy: Policy) {
    let Candidates { list, lowers, .. } = cands;
    let lower = |c: &Cand| &lowers[c.slot as usize * w..c.slot as usize * w + w];
    let order = |a: &Cand, b: &Cand| {
        b.upper
            .cmp(&a.upper)
            .then(a.lead.cmp(&b.lead))
            .then_with(|| {
                if w > 1 {
                    lower(a).cmp(lower(b))
                } else {
                    Ordering::Equal
                }
            })
            .then_with(|| match policy {
                Policy::MostFree => b.score.cmp(&a.score),
                _ => a.score.cmp(&b.score),
            })
            .then(a.index.cmp(&b.index))
    };
    let from = cands.ranked_to;
    let rest = &mut list[from..];
    if rest.is_sorted_by(|a, b| order(a, b).is_le()) {
        // Often so on a cluster of identical domains, in storage order.
        cands.ranked_to = list.len();
    } else if cands.first && rest.len() > RANKED_FIRST {
        rest.select_nth_unstable_by(RANKED_FIRST, order);
        rest[..RANKED_FIRST].sort_unstable_by(order);
        cands.ranked_to = from + RANKED_FIRST;
    } else {
        rest.sort_unstable_by(order);
        cands.ranked_to = list.len();
    }
    cands.first = false;
}

/// How many candidates [`sort_candidates`] ranks first.
const RANKED_FIRST: usize = 16;

/// `f` over role `r`'s cached capacities (lent into `caps`), their profiles filled.
fn with_profiles<T>(
    cache: &mut cache::Cache,
    caps: &mut Capacities,
    inv: &Inventory,
    c: &Arc<Compiled>,
    r: RoleIx,
    f: impl FnOnce(&Capacities) -> T,
) -> T {
    cache.lend(inv, c, r, caps);
    if !caps.profiled {
        profile::fill(inv, &caps.fits, &mut caps.profiles);
        caps.profiled = true;
    }
    let out = f(caps);
    cache.give_back(caps);
    out
}

/// The fewest nodes of domain `index` at depth `d` (vector width `w`) that hold `x`
/// members, from its profile in `caps` (see [`profile::Profile::fewest`]).
fn fewest_in(caps: &Capacities, d: Depth, w: usize, index: u32, x: u64) -> u32 {
    let peak = caps.peaks[d.ix()][index as usize * w + w - 1];
    caps.profiles[d.ix()][index as usize].fewest(x, peak)
}

/// Phase 3: the role order for greedy packing: constrained first, then the heaviest.
fn greedy_order(c: &Compiled, order: &mut Vec<RoleIx>) {
    order.clear();
    order.extend(c.indexed_roles().map(|(r, _)| r));
    order.sort_unstable_by(|&a, &b| {
        let (ra, rb) = (c.role(a), c.role(b));
        rb.constrained
            .cmp(&ra.constrained)
            .then(rb.weight.cmp(&ra.weight))
            .then(a.cmp(&b))
    });
}

/// What the constrained roles' minimum members need together, per resource they request
/// (`(resource, amount)`, into `need`): the same for every candidate domain.
fn minimum_need(inv: &Inventory, c: &Compiled, need: &mut Vec<(usize, u128)>) {
    need.clear();
    for r in 0..inv.resources.len() {
        let amount: u128 = c
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
        if amount > 0 {
            need.push((r, amount));
        }
    }
}

/// Whether domain `dom` (at a label depth) has, in total, enough free capacity of every
/// resource for `need` (see [`minimum_need`]): a necessary condition for the minimum
/// members together, read off the summaries before any packing is tried.
fn room_for(inv: &Inventory, need: &[(usize, u128)], dom: Scope) -> bool {
    need.iter().all(|&(r, amount)| {
        let total = inv.summary(dom.depth.ix(), dom.ix(), r).total;
        total == u64::MAX || amount <= u128::from(total)
    })
}

/// [`room_for`] the constrained roles' minimum members of `c`.
#[cfg(test)]
pub(super) fn room_for_minimum(inv: &Inventory, c: &Compiled, dom: Scope) -> bool {
    let mut need = Vec::new();
    minimum_need(inv, c, &mut need);
    room_for(inv, &need, dom)
}
