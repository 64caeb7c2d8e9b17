//! The lexicographic objective for several roles (for one role it is [`crate::solve::lex`]).
//!
//! A multi-role placement in a domain `D` is measured by its *vector*: the domains it
//! uses at each depth below `D`'s, outermost first, then its nodes, counting the nodes
//! that hold a member of a *counted* role: the constrained roles, which the topology
//! rule binds (every role when `D` is the whole cluster). Unconstrained members go where
//! they fit and cost nothing. A node lacking a level's label is a unit of its own at
//! that level and every finer one.
//!
//! [`tighten`] turns an assignment of exactly `counts` in one domain (the incumbent,
//! from packing or the search) into one of least vector there (the choice between
//! domains is [`crate::solve::multi`]'s), by branch and bound over the candidate nodes
//! in *tree order*: the units of every depth contiguous, the units with more room first,
//! the largest nodes of a unit first, then the nodes outside `D` (for unconstrained
//! members that do not all fit outside by themselves; when they do, they go there first
//! and only the counted members are searched, which is exact: they cost nothing there,
//! and what remains is a placement of the counted members alone).
//!
//! - A node is offered its maximal patterns (as in the search: moving a member onto a
//!   node that is used anyway never makes the vector larger), then the patterns with no
//!   counted member that are maximal in the other roles (a node without a counted member
//!   costs nothing, so only then may a counted member that would fit be left out).
//! - Identical nodes of one parent (or outside `D`) take non-increasing patterns, and at
//!   most as many of them as there are members are kept.
//! - A state is cut when the relaxation bounds ([`crate::solve::bound`]) say the rest
//!   cannot fit, or when its vector so far plus a lower bound on what the rest must add
//!   is no better than the best found. At each depth, the bound takes the rest of the
//!   current unit free when the unit is already used, then the fewest further units of
//!   the largest capacity that follows, by every weight vector of the bounds.
//!
//! Every pattern costs a work unit of a share of the query's budget; when it runs out
//! the best assignment found so far is kept, and the query's search is not complete.

use smallvec::SmallVec;

use crate::compile::Compiled;
use crate::inventory::domains::Scope;
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::ledger::Member;
use crate::inventory::Inventory;
use crate::solve::lex::MAX_WIDTH;
use crate::solve::verdict::Budget;

use super::levels::Levels;
use super::{
    node_fit, pack_on, unconstrained_counts, Mask, Query, Reach, SearchSpace, Shape, Start, Step,
};

/// A vector of domains used per depth, then nodes (only its first `width` entries mean
/// anything).
pub(crate) type Vector = [u32; MAX_WIDTH];

/// How [`tighten`] changed the assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moved {
    /// Not at all: the incumbent was the least found.
    No,
    /// Every member placed by the branch and bound.
    Searched,
    /// The constrained members placed by the branch and bound, the unconstrained ones
    /// on the first nodes outside the domain that take them.
    Away,
}

/// A unit id for a node lacking a level's label: its own unit (node ids stay below).
const OWN: u32 = 1 << 31;

/// "Cannot be held" in a lower bound.
const INF: u32 = u32::MAX;

/// The objective's arrays, reused from one query to the next.
#[derive(Debug, Default)]
pub(crate) struct Compact {
    /// Whether each role's members count in the vector.
    pub(super) counted: SmallVec<[bool; 4]>,
    /// `[p * g + l]`: candidate `p`'s unit at the `l`-th label depth below the domain.
    chain: Vec<u32>,
    /// `[p * g + l]`: the room of that unit (the sum of its candidates' fits), to order
    /// units with more room first.
    room: Vec<u64>,
    /// Label depths below the domain (the vector's width less the node level).
    g: usize,
    /// Candidates inside the domain: the first `inside` of the search order.
    pub(super) inside: usize,
    /// `[t * w + l]`: the `t`-th node's unit at level `l` (dense per level; the node
    /// level's unit is `t`).
    pub(super) unit: Vec<u32>,
    /// `[t * w + l]`: the position after the last node of that unit.
    pub(super) end: Vec<u32>,
    /// `[off[l] + u]`: the nodes of unit `u` of level `l` holding counted members.
    used: Vec<u32>,
    off: SmallVec<[u32; 8]>,
    /// `[(t * w + l) * nw + v]`: the largest capacity by weight vector `v` of a unit of
    /// level `l` that starts at position `t` or later.
    top: Vec<u128>,
    /// Per node: whether its current pattern comes from the second family (no counted
    /// member).
    phase: Vec<bool>,
    /// The nodes not yet decided, for the node level's bound.
    avail: Avail,
    /// Scratch for [`SearchSpace::tree_order`]: the candidates outside the domain.
    outside: Vec<u32>,
    /// Scratch for the root's bound by levels.
    pub(super) levels: Levels,
}

/// The width of a vector for a placement in a domain at depth `d`: one entry per depth
/// below it, the node level included.
#[inline]
pub(crate) fn width(inv: &Inventory, d: Depth) -> usize {
    inv.node_depth().ix().saturating_sub(d.ix())
}

/// Node `n`'s unit at label depth `e` (or its own when it lacks that label or a
/// coarser one below the domain, `own`).
#[inline]
fn unit_of(inv: &Inventory, n: NodeIx, e: usize, own: &mut bool) -> u32 {
    if !*own {
        if let Some(d) = inv.domain_of(n.0, e) {
            return d;
        }
        *own = true;
    }
    OWN | n.0
}

/// The vector of `assign` in `scope`: counted members (`counted[role]`) on nodes inside
/// it, into `out`; `ids` is scratch.
pub(crate) fn vector_of(
    inv: &Inventory,
    scope: Scope,
    counted: impl Fn(usize) -> bool,
    assign: &[Member],
    ids: &mut Vec<u32>,
    out: &mut Vector,
) {
    let w = width(inv, scope.depth);
    let (start, end) = scope.range(inv);
    let mut nodes: SmallVec<[u32; 32]> = assign
        .iter()
        .filter(|&&(r, n, x)| x > 0 && counted(usize::from(r)) && (start..end).contains(&n))
        .map(|&(_, n, _)| n)
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    out.fill(0);
    if w == 0 {
        return;
    }
    for (l, o) in out.iter_mut().enumerate().take(w - 1) {
        let e = scope.depth.ix() + 1 + l;
        ids.clear();
        for &n in &nodes {
            let mut own = (scope.depth.ix() + 1..e).any(|d| inv.domain_of(n, d).is_none());
            ids.push(unit_of(inv, NodeIx(n), e, &mut own));
        }
        ids.sort_unstable();
        ids.dedup();
        *o = ids.len() as u32;
    }
    out[w - 1] = nodes.len() as u32;
}

/// Improves `assign` — exactly `counts` members, constrained roles inside `scope`, of
/// vector `own` — to an assignment of least vector (see the module docs), which is left
/// in `assign`, and returns that vector (`own` when nothing better was found) and how
/// the assignment changed. Only vectors below `cutoff` are looked for: another domain's
/// vector that this one must beat. Slices are not handled (the caller keeps the
/// incumbent).
///
/// When `budget` runs out before the walk can start (the query's objective work is
/// spent), the walk is not made, but the root's bound by levels may still show, with
/// the work of `proof`, that no assignment here is below the best (or the cutoff): the
/// search is then complete after all, and the assignment is the incumbent as before.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tighten(
    inv: &Inventory,
    c: &Compiled,
    counts: &[u64],
    scope: Scope,
    own: Vector,
    cutoff: Option<Vector>,
    budget: &mut Budget,
    proof: &mut Budget,
    space: &mut SearchSpace,
    assign: &mut Vec<Member>,
) -> (Vector, Moved) {
    let w = width(inv, scope.depth);
    let mut best = match cutoff {
        Some(cut) if cut[..w] < own[..w] => cut,
        _ => own,
    };
    let (shape, cheap) = space.take_prepared(c);
    let q = Query {
        inv,
        c,
        shape: &shape,
    };
    let moved = space.tighten_with(q, counts, scope, [budget, proof], assign, &mut best);
    space.restore(c, shape, cheap);
    match moved {
        Moved::No => (own, moved),
        _ => (best, moved),
    }
}

impl SearchSpace {
    /// [`tighten`] with the query's shape (`budgets`: the walk's and the proof's).
    fn tighten_with(
        &mut self,
        q: Query<'_>,
        counts: &[u64],
        scope: Scope,
        budgets: [&mut Budget; 2],
        assign: &mut Vec<Member>,
        best: &mut Vector,
    ) -> Moved {
        let [budget, proof] = budgets;
        let Query { inv, c, shape } = q;
        let w = width(inv, scope.depth);
        if w == 0 {
            return Moved::No;
        }
        let cluster = scope.depth == Depth::CLUSTER;
        self.compact.counted.clear();
        self.compact
            .counted
            .extend(c.roles.iter().map(|r| cluster || r.constrained));
        // Unconstrained members that fit outside by themselves go there; otherwise they
        // are searched with the rest, anywhere.
        let free = c
            .roles
            .iter()
            .zip(counts)
            .any(|(r, &n)| !r.constrained && n > 0);
        let mut inside: SmallVec<[u64; 4]> = SmallVec::from_slice(counts);
        let (mut reach, mut away) = (Reach::ScopeOnly, false);
        if free {
            reach = Reach::Everywhere;
            if !cluster {
                match self.away_scan(inv, c, shape, counts, scope, budget) {
                    None => return self.starved(q, counts, scope, [budget, proof], best),
                    Some(true) => {
                        for (n, r) in inside.iter_mut().zip(&c.roles) {
                            if !r.constrained {
                                *n = 0;
                            }
                        }
                        (reach, away) = (Reach::ScopeOnly, true);
                    }
                    Some(false) => {}
                }
            }
        }
        if !self.collect(q, &inside, scope, reach, budget) {
            return self.starved(q, counts, scope, [budget, proof], best);
        }
        self.tree_order(inv, shape, &inside, scope, w);
        if !self.bound(shape, &inside, budget) {
            return self.starved(q, counts, scope, [budget, proof], best);
        }
        self.units(w);
        let mut found = std::mem::take(assign);
        let improved = self.walk(shape, &inside, w, budget, best, &mut found);
        // The walk ran out: the root's bound by levels may still prove the best least.
        if budget.ran_out() && !budget.timed_out() && self.proves_least(shape, &inside, w, best) {
            budget.proven();
        }
        let moved = match (improved, away) {
            (false, _) => Moved::No,
            (true, false) => Moved::Searched,
            (true, true) => {
                found.extend_from_slice(&self.away);
                Moved::Away
            }
        };
        *assign = found;
        moved
    }

    /// The walk could not start (`budget` ran out in its setup): whether the root's
    /// bound by levels, set up again with the work of `proof`, shows that no assignment
    /// of `counts` in `scope` has a vector below `best` (then `budget`'s refusal is not
    /// needed). Only the counted members are looked at, on the domain's nodes: any
    /// assignment's counted members inside the domain have its vector, so a bound on
    /// placing them alone is a bound on it. The assignment stays the incumbent.
    fn starved(
        &mut self,
        q: Query<'_>,
        counts: &[u64],
        scope: Scope,
        budgets: [&mut Budget; 2],
        best: &Vector,
    ) -> Moved {
        let [budget, proof] = budgets;
        let w = width(q.inv, scope.depth);
        if budget.timed_out() || proof.left() == 0 {
            return Moved::No;
        }
        let mut inside: SmallVec<[u64; 4]> = SmallVec::new();
        inside.extend(
            counts
                .iter()
                .zip(&self.compact.counted)
                .map(|(&n, &counted)| if counted { n } else { 0 }),
        );
        // Unconstrained members are counted only over the whole cluster, which is the
        // scope: then they are looked for everywhere, as by the walk.
        let reach = if q
            .c
            .roles
            .iter()
            .zip(&inside)
            .any(|(r, &n)| !r.constrained && n > 0)
        {
            Reach::Everywhere
        } else {
            Reach::ScopeOnly
        };
        if !self.collect(q, &inside, scope, reach, proof) {
            return Moved::No;
        }
        self.tree_order(q.inv, q.shape, &inside, scope, w);
        if !self.bound(q.shape, &inside, proof) {
            return Moved::No;
        }
        self.units(w);
        if !proof.timed_out() && self.proves_least(q.shape, &inside, w, best) {
            budget.proven();
        }
        Moved::No
    }

    /// Places the unconstrained members of `counts` on nodes outside `scope` (into
    /// `away`), greedily in storage order, stopping once all are placed: `Some(true)`
    /// when all of them fit so, `None` when the budget ran out. (Usually the first nodes
    /// looked at take them, where [`SearchSpace::place_away`] would first build the
    /// cluster's classes; failing here proves nothing, and the search then takes the
    /// unconstrained members along.)
    fn away_scan(
        &mut self,
        inv: &Inventory,
        c: &Compiled,
        shape: &Shape,
        counts: &[u64],
        scope: Scope,
        budget: &mut Budget,
    ) -> Option<bool> {
        let nr = shape.nr;
        let (start, end) = scope.range(inv);
        let mut rem = unconstrained_counts(c, counts);
        self.away.clear();
        let mut load: SmallVec<[u64; 8]> = SmallVec::from_elem(0, nr);
        let mut frees: SmallVec<[u64; 8]> = SmallVec::new();
        let mut looked = 0u64;
        let total = inv.len() as u32;
        for ix in (0..start).chain(end..total) {
            if rem.iter().all(|&r| r == 0) {
                break;
            }
            looked += 1;
            let n = NodeIx(ix);
            frees.clear();
            frees.extend(shape.res.iter().map(|&r| inv.free[r as usize][n.ix()]));
            let fit = |i: usize| u64::from(node_fit(inv, &c.roles[i], n, None));
            pack_on(shape, n, fit, &frees, &mut rem, &mut load, &mut self.away);
        }
        if !budget.spend_n(looked + 1) {
            return None;
        }
        Some(rem.iter().all(|&r| r == 0))
    }

    /// The search order for the objective (see the module docs), into `order`, and
    /// every candidate's units, into `chain`.
    fn tree_order(
        &mut self,
        inv: &Inventory,
        shape: &Shape,
        counts: &[u64],
        scope: Scope,
        w: usize,
    ) {
        let (k, nr) = (shape.k, shape.nr);
        let g = w - 1;
        let (start, end) = scope.range(inv);
        let cx = &mut self.compact;
        cx.g = g;
        cx.chain.clear();
        for &n in &self.nodes {
            let mut own = false;
            for l in 0..g {
                cx.chain
                    .push(unit_of(inv, n, scope.depth.ix() + 1 + l, &mut own));
            }
        }
        let room_of = |p: usize| -> u64 {
            self.fit[p * k..p * k + k]
                .iter()
                .zip(counts)
                .map(|(&f, &n)| u64::from(f).min(n))
                .sum()
        };
        // Rooms per unit: candidates sorted by their units, summed per group.
        let inside_of = |p: usize| (start..end).contains(&self.nodes[p].0);
        // The buffers of the last order, reused.
        let mut by_unit = std::mem::take(&mut self.order);
        by_unit.clear();
        by_unit.extend((0..self.nodes.len() as u32).filter(|&p| inside_of(p as usize)));
        let mut outside = std::mem::take(&mut cx.outside);
        outside.clear();
        outside.extend((0..self.nodes.len() as u32).filter(|&p| !inside_of(p as usize)));
        let chain = &cx.chain;
        let units = |p: u32| &chain[p as usize * g..p as usize * g + g];
        if g > 0 {
            by_unit.sort_unstable_by(|&a, &b| units(a).cmp(units(b)));
        }
        cx.room.clear();
        cx.room.resize(self.nodes.len() * g, 0);
        for l in 0..g {
            let mut i = 0;
            while i < by_unit.len() {
                let head = &units(by_unit[i])[..=l];
                let mut j = i;
                let mut sum = 0u64;
                while j < by_unit.len() && &units(by_unit[j])[..=l] == head {
                    sum += room_of(by_unit[j] as usize);
                    j += 1;
                }
                for &p in &by_unit[i..j] {
                    cx.room[p as usize * g + l] = sum;
                }
                i = j;
            }
        }
        let (fit, free, nodes, room) = (&self.fit, &self.free, &self.nodes, &cx.room);
        let fits = |a: u32| &fit[a as usize * k..a as usize * k + k];
        let frees = |a: u32| &free[a as usize * nr..a as usize * nr + nr];
        let mut order = by_unit;
        order.sort_unstable_by(|&a, &b| {
            (0..g)
                .map(|l| {
                    let (ia, ib) = (a as usize * g + l, b as usize * g + l);
                    room[ib].cmp(&room[ia]).then(chain[ia].cmp(&chain[ib]))
                })
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| fits(b).cmp(fits(a)))
                .then_with(|| frees(b).cmp(frees(a)))
                .then(nodes[a as usize].cmp(&nodes[b as usize]))
        });
        outside.sort_unstable_by(|&a, &b| {
            fits(b)
                .cmp(fits(a))
                .then_with(|| frees(b).cmp(frees(a)))
                .then(nodes[a as usize].cmp(&nodes[b as usize]))
        });
        // At most as many identical nodes of one parent as there are members.
        let total: u64 = counts.iter().sum();
        let same =
            |a: u32, b: u32| fits(a) == fits(b) && frees(a) == frees(b) && units(a) == units(b);
        let mut run = 0u64;
        let mut prev: Option<u32> = None;
        order.retain(|&a| {
            run = if prev.is_some_and(|p| same(p, a)) {
                run + 1
            } else {
                1
            };
            prev = Some(a);
            run <= total
        });
        cx.inside = order.len();
        order.extend_from_slice(&outside);
        self.order = order;
        self.compact.outside = outside;
    }

    /// Units, their ends and the largest unit capacity that follows, in search order
    /// (after [`SearchSpace::bound`]).
    fn units(&mut self, w: usize) {
        let g = w - 1;
        let nw = self.weights.nw;
        let cx = &mut self.compact;
        let inside = cx.inside;
        cx.unit.clear();
        cx.unit.resize(inside * w, 0);
        cx.off.clear();
        let mut count: SmallVec<[u32; 8]> = SmallVec::from_elem(0, w);
        for t in 0..inside {
            let p = self.order[t] as usize;
            for l in 0..g {
                let fresh = t == 0 || {
                    let q = self.order[t - 1] as usize;
                    cx.chain[p * g..p * g + l + 1] != cx.chain[q * g..q * g + l + 1]
                };
                if fresh {
                    count[l] += 1;
                }
                cx.unit[t * w + l] = count[l] - 1;
            }
            cx.unit[t * w + g] = t as u32;
        }
        count[g] = inside as u32;
        let mut acc = 0u32;
        for &n in &count {
            cx.off.push(acc);
            acc += n;
        }
        cx.used.clear();
        cx.used.resize(acc as usize, 0);
        cx.end.clear();
        cx.end.resize(inside * w, 0);
        for t in (0..inside).rev() {
            for l in 0..w {
                let same = t + 1 < inside && cx.unit[(t + 1) * w + l] == cx.unit[t * w + l];
                cx.end[t * w + l] = if same {
                    cx.end[(t + 1) * w + l]
                } else {
                    t as u32 + 1
                };
            }
        }
        cx.top.clear();
        cx.top.resize((inside + 1) * w * nw, 0);
        for t in (0..inside).rev() {
            for l in 0..w {
                let starts = t == 0 || cx.unit[(t - 1) * w + l] != cx.unit[t * w + l];
                let e = cx.end[t * w + l] as usize;
                for v in 0..nw {
                    let later = cx.top[((t + 1) * w + l) * nw + v];
                    let own = if starts {
                        self.suf[t * nw + v] - self.suf[e * nw + v]
                    } else {
                        0
                    };
                    cx.top[(t * w + l) * nw + v] = later.max(own);
                }
            }
        }
        cx.avail.build(inside, nw, |t, v| {
            self.suf[t * nw + v] - self.suf[(t + 1) * nw + v]
        });
    }

    /// Whether the state at node `t` with `rem` left and vector `cur` so far may still
    /// beat `best`.
    fn may_beat(&mut self, t: usize, rem: &[u64], cur: &Vector, best: &Vector, w: usize) -> bool {
        self.lower_at(t, rem, cur, w)
            .is_some_and(|lower| lower[..w] < best[..w])
    }

    /// A lower bound on the vector of every completion of the state at node `t` with
    /// `rem` left and vector `cur` so far (`None` when none exists).
    fn lower_at(&mut self, t: usize, rem: &[u64], cur: &Vector, w: usize) -> Option<Vector> {
        if t <= self.compact.inside {
            self.compact.avail.move_to(t);
        }
        let cx = &self.compact;
        let nw = self.weights.nw;
        let mut left: SmallVec<[u64; 4]> = SmallVec::new();
        left.extend(
            rem.iter()
                .zip(&cx.counted)
                .map(|(&r, &counted)| if counted { r } else { 0 }),
        );
        let mut lower = *cur;
        if left.iter().any(|&r| r > 0) {
            if t >= cx.inside {
                return None;
            }
            for (l, low) in lower.iter_mut().enumerate().take(w) {
                let u = cx.unit[t * w + l];
                let e = cx.end[t * w + l] as usize;
                let open = cx.used[(cx.off[l] + u) as usize] > 0;
                let mut extra = 0u32;
                for v in 0..nw {
                    let need = self.weights.dot(v, &left);
                    if need == 0 {
                        continue;
                    }
                    let rest = self.suf[t * nw + v] - self.suf[e * nw + v];
                    let after = cx.top[(e * w + l) * nw + v];
                    let more = if open {
                        fewest(need.saturating_sub(rest), after)
                    } else {
                        fewest(need, rest.max(after))
                    };
                    extra = extra.max(more);
                    if l == w - 1 {
                        extra = extra.max(cx.avail.fewest(v, need));
                    }
                }
                if extra == INF {
                    return None;
                }
                *low += extra;
            }
        }
        Some(lower)
    }

    /// Node `t`'s next pattern: its maximal ones, then those without counted members
    /// (see the module docs).
    fn next_choice(
        &mut self,
        t: usize,
        start: Start,
        rem: &[u64],
        shape: &Shape,
        budget: &mut Budget,
    ) -> Step {
        let (k, nr) = (shape.k, shape.nr);
        let inside = self.compact.inside;
        let g = self.compact.g;
        let identical = t > 0
            && self.sfit[t * k..t * k + k] == self.sfit[(t - 1) * k..t * k]
            && self.sfree[t * nr..t * nr + nr] == self.sfree[(t - 1) * nr..t * nr]
            && (t > inside || {
                let (p, q) = (self.order[t] as usize, self.order[t - 1] as usize);
                t < inside
                    && self.compact.chain[p * g..p * g + g] == self.compact.chain[q * g..q * g + g]
            });
        let mut start = start;
        if start == Start::First {
            self.compact.phase[t] = false;
        }
        loop {
            let second = self.compact.phase[t];
            let mask = if second { Mask::Uncounted } else { Mask::None };
            match self.offered(t, start, rem, shape, budget, mask) {
                Step::Done if !second => {
                    self.compact.phase[t] = true;
                    start = Start::First;
                }
                Step::Pattern => {
                    start = Start::After;
                    // After an identical node none above its pattern; in the second
                    // family none maximal in every role (offered in the first already).
                    let above = identical
                        && self.pattern[t * k..t * k + k] > self.pattern[(t - 1) * k..t * k];
                    let repeated = second && self.maximal(t, rem, shape, Mask::None);
                    if !above && !repeated {
                        return Step::Pattern;
                    }
                }
                step => return step,
            }
        }
    }

    /// Adds node `t`'s pattern to the state.
    fn put_on(
        &mut self,
        t: usize,
        k: usize,
        w: usize,
        rem: &mut [u64],
        cur: &mut Vector,
        sign: bool,
    ) {
        let x = &self.pattern[t * k..t * k + k];
        let cx = &mut self.compact;
        let holds = x
            .iter()
            .zip(&cx.counted)
            .any(|(&x, &counted)| counted && x > 0);
        for (r, &x) in rem.iter_mut().zip(x) {
            if sign {
                *r -= u64::from(x);
            } else {
                *r += u64::from(x);
            }
        }
        if !holds || t >= cx.inside {
            return;
        }
        for (l, units) in cur.iter_mut().enumerate().take(w) {
            let i = (cx.off[l] + cx.unit[t * w + l]) as usize;
            if sign {
                if cx.used[i] == 0 {
                    *units += 1;
                }
                cx.used[i] += 1;
            } else {
                cx.used[i] -= 1;
                if cx.used[i] == 0 {
                    *units -= 1;
                }
            }
        }
    }

    /// The branch and bound; `true` when it found an assignment better than `best`
    /// (then in `assign`, and its vector in `best`).
    fn walk(
        &mut self,
        shape: &Shape,
        counts: &[u64],
        w: usize,
        budget: &mut Budget,
        best: &mut Vector,
        assign: &mut Vec<Member>,
    ) -> bool {
        let k = shape.k;
        let m = self.order.len();
        let mut rem: SmallVec<[u64; 4]> = counts.iter().copied().collect();
        let mut cur: Vector = [0; MAX_WIDTH];
        if m == 0 || !self.bounds_ok(&rem, 0, shape) || !self.may_beat(0, &rem, &cur, best, w) {
            return false;
        }
        self.pattern.clear();
        self.pattern.resize(m * k, 0);
        self.compact.phase.clear();
        self.compact.phase.resize(m, false);
        let mut improved = false;
        let mut t = 0usize;
        let mut start = Start::First;
        loop {
            match self.next_choice(t, start, &rem, shape, budget) {
                Step::Exhausted => return improved,
                Step::Done => {
                    if t == 0 {
                        return improved;
                    }
                    t -= 1;
                    self.put_on(t, k, w, &mut rem, &mut cur, false);
                    start = Start::After;
                    continue;
                }
                Step::Pattern => {}
            }
            self.put_on(t, k, w, &mut rem, &mut cur, true);
            if rem.iter().all(|&r| r == 0) {
                if cur[..w] < best[..w] {
                    *best = cur;
                    self.write(t, k, assign);
                    improved = true;
                }
            } else if t + 1 < m
                && self.bounds_ok(&rem, t + 1, shape)
                && self.may_beat(t + 1, &rem, &cur, best, w)
            {
                t += 1;
                start = Start::First;
                continue;
            }
            self.put_on(t, k, w, &mut rem, &mut cur, false);
            start = Start::After;
        }
    }
}

/// The fewest units of capacity at most `top` that hold `need` (`INF` when none can).
#[inline]
fn fewest(need: u128, top: u128) -> u32 {
    if need == 0 {
        0
    } else if top == 0 {
        INF
    } else {
        u32::try_from(need.div_ceil(top)).unwrap_or(INF - 1)
    }
}

/// The nodes not yet decided (those from a position of the search order on) by their
/// capacity for every weight vector: how few of them, largest first, reach an amount.
/// Fenwick trees of counts and sums over the capacities' ranks, updated as the walk
/// moves (by one node at a time, mostly).
#[derive(Debug, Default)]
struct Avail {
    m: usize,
    nw: usize,
    /// `[v * m + t]`: node `t`'s capacity by weight vector `v`.
    cap: Vec<u128>,
    /// `[v * m + t]`: its rank (1-based) among the nodes by that capacity, largest first.
    rank: Vec<u32>,
    /// `[v * (m + 1) + i]`: the trees.
    cnt: Vec<u32>,
    sum: Vec<u128>,
    /// The nodes from here on are in the trees.
    from: usize,
    /// Scratch for the ranks.
    by: Vec<u32>,
}

impl Avail {
    /// Every one of `m` nodes in, with capacities `cap(t, v)`.
    fn build(&mut self, m: usize, nw: usize, cap: impl Fn(usize, usize) -> u128) {
        (self.m, self.nw, self.from) = (m, nw, 0);
        self.cap.clear();
        self.rank.clear();
        self.rank.resize(nw * m, 0);
        self.cnt.clear();
        self.cnt.resize(nw * (m + 1), 0);
        self.sum.clear();
        self.sum.resize(nw * (m + 1), 0);
        for v in 0..nw {
            self.cap.extend((0..m).map(|t| cap(t, v)));
        }
        for v in 0..nw {
            let caps = &self.cap[v * m..v * m + m];
            self.by.clear();
            self.by.extend(0..m as u32);
            self.by
                .sort_unstable_by(|&a, &b| caps[b as usize].cmp(&caps[a as usize]).then(a.cmp(&b)));
            for (i, &t) in self.by.iter().enumerate() {
                self.rank[v * m + t as usize] = i as u32 + 1;
            }
        }
        for t in 0..m {
            self.change(t, true);
        }
    }

    /// Adds (`add`) or removes node `t` in every tree.
    fn change(&mut self, t: usize, add: bool) {
        let m = self.m;
        for v in 0..self.nw {
            let c = self.cap[v * m + t];
            let mut i = self.rank[v * m + t] as usize;
            while i <= m {
                let at = v * (m + 1) + i;
                if add {
                    self.cnt[at] += 1;
                    self.sum[at] += c;
                } else {
                    self.cnt[at] -= 1;
                    self.sum[at] -= c;
                }
                i += i & i.wrapping_neg();
            }
        }
    }

    /// Makes the trees hold the nodes from `t` on.
    fn move_to(&mut self, t: usize) {
        while self.from < t {
            self.change(self.from, false);
            self.from += 1;
        }
        while self.from > t {
            self.from -= 1;
            self.change(self.from, true);
        }
    }

    /// The fewest nodes in the trees whose capacities by weight vector `v` reach `need`
    /// (`INF` when all of them do not).
    fn fewest(&self, v: usize, need: u128) -> u32 {
        if need == 0 {
            return 0;
        }
        let m = self.m;
        let base = v * (m + 1);
        let (mut pos, mut got, mut count) = (0usize, 0u128, 0u32);
        let mut step = if m == 0 {
            0
        } else {
            1 << (usize::BITS - 1 - m.leading_zeros())
        };
        while step > 0 {
            let next = pos + step;
            if next <= m && got + self.sum[base + next] < need {
                pos = next;
                got += self.sum[base + next];
                count += self.cnt[base + next];
            }
            step >>= 1;
        }
        if pos >= m {
            INF
        } else {
            count + 1
        }
    }
}
