//! The exact lexicographic placement objective for one role.
//!
//! A placement inside a domain `D` at depth `d` is measured by its *vector*: how many
//! domains it uses at each depth below `d`, outermost first, ending with how many nodes.
//! A node that lacks the label of some level counts as a domain of its own at that level
//! and every finer one (it is a unit nobody can share). Vectors add up over children and
//! compare lexicographically, so "the fewest racks, then the fewest nodes" is one
//! minimum. This module finds, for one role, a placement of `x` members in `D` whose
//! vector is the least of all feasible placements, and chooses the domain at the gang's
//! level by that vector first (then the policy on spare capacity, then position).
//!
//! How the minimum is computed, from the capacities the cache keeps ([`Capacities`],
//! with each domain's *peaks*: the largest capacity of a unit at every depth below it):
//!
//! - a domain whose children are all nodes needs the fewest nodes whose fits reach `x`
//!   (largest first);
//! - when one child can hold `x`, the best vector is one child's, so the children that
//!   can are compared as the domains at the gang's level are: by a lower bound from their
//!   peaks, and exactly only while the bound can still win;
//! - otherwise, with no slice level below `d`, the largest nodes of the whole domain are
//!   tried first: when the units they use meet the per-level lower bound (the fewest
//!   units of each level whose capacities reach `x`), that placement is optimal;
//! - failing that, a knapsack over the children: `F(u)` = the least vector that holds at
//!   least `u` units of the children's slice grain, each child contributing one of its
//!   own optimal vectors (a step function of the amount, computed the same way). Holding
//!   fewer members never needs a larger vector, so "at least" and "exactly" agree, and
//!   any split of `x` among the chosen children within their steps is as good: the
//!   policy splits it (`balanced` evenly, otherwise largest first and the last share on
//!   the tightest child, as before).

use crate::compile::RoleIx;
use crate::inventory::domains::{Domain, Scope};
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::Inventory;
use crate::model::Policy;

use super::descent::{choose, member, Attempt, Child, Item};
use super::profile::BUCKETS;
use super::rollup::{Capacities, Grain};

mod knapsack;
mod nodes;
mod pick;
mod sets;

/// The widest vector: every label level and the node level.
pub(crate) const MAX_WIDTH: usize = crate::model::Topology::MAX_LEVELS + 1;

/// A vector on the stack (only its first `width` entries mean anything).
type Vector = [u32; MAX_WIDTH];

/// "Cannot be held" in the knapsack's tables (first component).
const INF: u32 = u32::MAX;

/// Knapsacks up to this many grains are cheap enough to give the domain choice an
/// incumbent before every candidate's bound is sharpened.
const SMALL_KNAPSACK: u64 = 128;

/// "Cannot be held" in a packed table.
const PINF: u128 = u128::MAX;

/// What a knapsack's table is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// A child's steps: the least vector at every amount up to the full one.
    Steps,
    /// The chosen domain's assignment: only the states that can still reach the full
    /// amount, with each child's units recorded.
    Assign,
}

/// A vector of at most four components as one integer, outermost highest.
#[inline]
fn pack(v: &[u32]) -> u128 {
    v.iter().fold(0u128, |acc, &c| (acc << 32) | u128::from(c))
}

/// Scratch space of the objective, reused across queries (stack discipline: every
/// function truncates what it pushed).
#[derive(Debug, Default)]
pub(crate) struct Lex {
    /// Knapsack tables, `width` entries per amount.
    table: Vec<u32>,
    /// Packed knapsack tables and steps (vectors of at most four components).
    ptable: Vec<u128>,
    psteps: Vec<(u64, u128)>,
    /// Narrow tables of width-2 knapsacks (`lex/knapsack.rs`): the table,
    /// the previous child's copy, the steps and the units taken at each amount.
    ntable: Vec<i32>,
    nsteps: Vec<(usize, i32)>,
    nchoice: Vec<u32>,
    /// Knapsack choices at the domain being assigned: units taken from each child, and
    /// the state each child's choice at the full amount came from.
    choice: Vec<u64>,
    tsrc: Vec<u64>,
    /// Step functions of children: amounts (in units) and vectors.
    step_t: Vec<u64>,
    step_v: Vec<u32>,
    /// Capacities being sorted.
    sorted: Vec<u64>,
    /// Children of a domain, as the knapsack enumerates them.
    kids: Vec<(Child, u64)>,
    /// Candidates and their lower bounds (`width` entries each in `bounds`).
    cands: Vec<Cand>,
    bounds: Vec<u32>,
    /// Nodes of a largest-first fill: `(fit, node)`.
    pool: Vec<(u64, u32)>,
    /// Descent items.
    items: Vec<Item>,
    /// The children every knapsack of [`Objective::vector`] used in this query, for
    /// `(depth, domain, members)` (their range in `memo`): the assignment that follows
    /// reuses those of the domain it assigns, whichever was computed last.
    memo: Vec<Item>,
    memo_keys: Vec<((usize, u32, u64), u32, u32)>,
    /// Tests: only the last knapsack's children are kept (to compare with keeping
    /// every one), and how many assignments took their children from `memo`.
    #[cfg(test)]
    memo_last: bool,
    #[cfg(test)]
    memo_hits: u64,
    /// The child [`Objective::best_child`] chose, per `(depth, first node, members)`,
    /// in this query: the assignment follows the same choices without comparing again.
    picks: Vec<((usize, u32, u64), Child)>,
    /// Tests: never pack vectors (to compare the two knapsacks).
    #[cfg(test)]
    unpacked: bool,
    /// Tests: width-2 knapsacks never in narrow tables (to compare the two).
    #[cfg(test)]
    no_narrow: bool,
    /// Tests: node bounds never by the few largest counts (to compare the two ways).
    #[cfg(test)]
    wide: bool,
    /// Tests: an assignment's knapsack keeps every child (to compare with dropping the
    /// unusable ones), and how many were dropped.
    #[cfg(test)]
    keep_kids: bool,
    #[cfg(test)]
    dropped: u64,
    /// Tests: the fill and the witness the old way (nodes collected and sorted, sums
    /// per set), to compare with reading the profiles.
    #[cfg(test)]
    by_nodes: bool,
    /// Tests: [`Objective::bound_in_one`] the old way (every child's node bound), to
    /// compare with the bound that first ranks the children by their own profiles;
    /// and how many node bounds that skipped.
    #[cfg(test)]
    every_bound: bool,
    #[cfg(test)]
    skipped: u64,
    /// Rows of [`Objective::nodes_exact`]'s children (`v` counts each).
    witness: Vec<u32>,
    /// Tests: never the search over sets (`lex/sets.rs`), and how many vectors it
    /// settled.
    #[cfg(test)]
    no_sets: bool,
    /// The search's best completions per group (`lex/sets.rs`).
    tops: Vec<u64>,
    #[cfg(test)]
    by_sets: u64,
}

/// In [`Objective::select`]'s first pass, after this many candidates put off (their
/// vectors need a knapsack), the most promising of them is evaluated at once. 4 on the
/// HGX benches (`benches/README.md`, "Issue 23: large single-role gangs", step 2): 1
/// loses most of what putting off gains on emptier clusters, more than 8 makes fuller
/// ones up to 20× slower.
const PUT_OFF_PER_KNAPSACK: u32 = 4;

/// What an exact evaluation of a candidate found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eval {
    /// Its vector (in `out`).
    Done,
    /// A bound proves it cannot win.
    Beaten,
    /// Only a knapsack would tell (asked to put that off).
    Later,
}

/// A candidate domain or child: its key after the vector (`tie`, then `pos`).
#[derive(Debug, Clone, Copy)]
struct Cand {
    child: Child,
    tie: u64,
    pos: u32,
    bound: usize,
    /// Its exact vector needs a knapsack: put off until every cheaper one is known.
    later: bool,
}

/// One role's objective over its capacities.
pub(crate) struct Objective<'a> {
    pub inv: &'a Inventory,
    pub caps: &'a Capacities,
    pub grain: Grain<'a>,
    pub policy: Policy,
    pub ri: RoleIx,
}

/// Lower bound on the units needed to hold `x` when none holds more than `peak`.
#[inline(always)]
fn units(x: u64, peak: u64) -> u32 {
    if peak >= x {
        1
    } else {
        u32::try_from(x.div_ceil(peak.max(1))).unwrap_or(u32::MAX - 1)
    }
}

impl Objective<'_> {
    /// The vector's width for a placement inside a domain at depth `d`.
    #[inline]
    fn width(&self, d: Depth) -> usize {
        self.inv.node_depth().ix() - d.ix()
    }

    /// Whether domain `dom` at depth `d` has a child domain that can take a member.
    fn has_child_domains(&self, d: Depth, dom: &Domain) -> bool {
        let c = d.child();
        !self.inv.is_node_level(c)
            && self.caps.caps[c.ix()][dom.children()]
                .iter()
                .any(|&v| v > 0)
    }

    /// The domain at depth `t` (not the node level) that holds the most members,
    /// `min..=count` in multiples of `step`; among those the least vector, then the
    /// policy on spare capacity, then the first. Returns the members and the position.
    /// `within`: only those domains (ascending positions) are looked at, the others
    /// being known not to take the gang (`Span` in the parent).
    pub fn choose_domain(
        &self,
        lx: &mut Lex,
        t: Depth,
        count: u64,
        min: u64,
        step: u64,
        within: Option<&[u32]>,
    ) -> Option<(u64, u32)> {
        // A new query: the memos speak of other capacities.
        lx.memo.clear();
        lx.memo_keys.clear();
        lx.picks.clear();
        let caps = &self.caps.caps[t.ix()];
        let peaks = &self.caps.peaks[t.ix()];
        let w = self.width(t);
        let most_free = self.policy == Policy::MostFree;
        let floor = min.max(1);
        let placed_of = |cap: u64| -> u64 {
            if step == 1 {
                count.min(cap)
            } else {
                count.min(cap / step * step)
            }
        };
        let tie_of = |cap: u64, placed: u64| {
            let spare = cap - placed;
            if most_free {
                !spare
            } else {
                spare
            }
        };
        // Phase 0, when every candidate takes `count`: a domain one node of which holds
        // the gang has the least vector there is (all ones), so the policy alone decides
        // among those (the warm query's usual case; the scan of the old domain choice,
        // with one more test per domain).
        if min == count {
            if let Some(found) = self.one_node_holds(t, count, step, most_free, within) {
                return Some(found);
            }
        }
        // Pass 1: the best key (members, lower bound, tie, position), no allocation. A
        // bound is compared with the best one component by component, by products
        // rather than divisions: `ceil(placed / peak) < b` iff `placed <= (b - 1) * peak`.
        let mut best: Option<(u64, u64, u32)> = None;
        let (mut best_lb, mut lb): (Vector, Vector) = ([0; MAX_WIDTH], [0; MAX_WIDTH]);
        let mut visit = |i: usize, cap: u64| {
            let placed = placed_of(cap);
            if placed < min || placed == 0 {
                return;
            }
            let row = &peaks[i * w..i * w + w];
            let tie = tie_of(cap, placed);
            let better = match best {
                None => true,
                Some((bp, _, _)) if placed < bp => false,
                Some((bp, _, _)) if placed > bp => true,
                Some((_, bt, _)) => {
                    let mut order = std::cmp::Ordering::Equal;
                    for (&p, &b) in row.iter().zip(&best_lb[..w]) {
                        let b = u64::from(b);
                        if placed <= (b - 1).saturating_mul(p) {
                            order = std::cmp::Ordering::Less;
                            break;
                        }
                        if placed > b.saturating_mul(p) {
                            order = std::cmp::Ordering::Greater;
                            break;
                        }
                    }
                    order == std::cmp::Ordering::Less
                        || (order == std::cmp::Ordering::Equal && tie < bt)
                }
            };
            if better {
                for (l, &p) in lb[..w].iter_mut().zip(row) {
                    *l = units(placed, p);
                }
                best = Some((placed, tie, i as u32));
                best_lb[..w].copy_from_slice(&lb[..w]);
            }
        };
        const CHUNK: usize = 8;
        match within {
            Some(ps) => {
                for &i in ps {
                    let cap = caps[i as usize];
                    if cap >= floor {
                        visit(i as usize, cap);
                    }
                }
            }
            None => {
                for (ci, chunk) in caps.chunks(CHUNK).enumerate() {
                    // Most domains of a busy cluster cannot take the gang: a chunk is
                    // tested without a branch per domain.
                    if !chunk.iter().fold(false, |any, &cap| any | (cap >= floor)) {
                        continue;
                    }
                    for (j, &cap) in chunk.iter().enumerate() {
                        if cap >= floor {
                            visit(ci * CHUNK + j, cap);
                        }
                    }
                }
            }
        }
        let (placed, tie, pos) = best?;
        // When the best bound's exact vector is cheap (the deepest label level: the
        // fewest largest nodes; one child holds the gang; a small knapsack) it is the
        // incumbent. Otherwise none: every candidate's bound is sharpened first (below).
        let mut exact: Vector = [INF; MAX_WIDTH];
        let mut incumbent = (exact, u64::MAX, u32::MAX);
        let dom = *self.inv.domain(t, pos);
        let cheap = w == 1
            || self.any_child_holds(t, &dom, placed)
            || placed / self.grain.at(t.child()).max(1) <= SMALL_KNAPSACK;
        if cheap {
            self.vector(lx, t, pos, placed, &mut exact[..w]);
            if exact[..w] == best_lb[..w] {
                return Some((placed, pos));
            }
            incumbent = (exact, tie, pos);
        }
        if w == 1 {
            // The deepest label level: bounds are mostly alike (the largest node), so
            // one pass in order with a running best, each rack's node count computed
            // only as far as it can still win.
            let (mut bv, mut bt, mut bp) = (exact[0], tie, pos);
            for i in positions(within, caps.len()) {
                let cap = caps[i];
                if cap < floor || placed_of(cap) != placed || i as u32 == pos {
                    continue;
                }
                let ti = tie_of(cap, placed);
                let lb = units(placed, peaks[i]);
                if lb > bv || (lb == bv && (ti, i as u32) >= (bt, bp)) {
                    continue;
                }
                let limit = if (ti, i as u32) < (bt, bp) {
                    bv
                } else {
                    bv - 1
                };
                if let Some(k) = self.nodes_within(lx, self.inv.domain(t, i as u32), placed, limit)
                {
                    if (k, ti, i as u32) < (bv, bt, bp) {
                        (bv, bt, bp) = (k, ti, i as u32);
                    }
                }
            }
            return Some((placed, bp));
        }
        // Pass 2: every candidate whose bound does not exceed that vector, best bound
        // first, evaluated exactly while its bound can still win.
        let (cbase, bbase) = (lx.cands.len(), lx.bounds.len());
        for i in positions(within, caps.len()) {
            let cap = caps[i];
            if cap < floor || placed_of(cap) != placed || (cheap && i as u32 == pos) {
                continue;
            }
            let row = &peaks[i * w..i * w + w];
            for (l, &p) in lb[..w].iter_mut().zip(row) {
                *l = units(placed, p);
            }
            if lb[..w] > exact[..w] {
                continue;
            }
            if w > 1 {
                lb[0] = lb[0].max(self.fewest_children(lx, t, i as u32, placed));
                self.bound_in_one(lx, t, i as u32, placed, &mut lb[..w]);
            }
            let bound = lx.bounds.len();
            lx.bounds.extend_from_slice(&lb[..w]);
            lx.cands.push(Cand {
                child: Child::Domain(i as u32),
                tie: tie_of(cap, placed),
                pos: i as u32,
                bound,
                later: false,
            });
        }
        let best = self.select(
            lx,
            cbase,
            w,
            incumbent,
            |this, lx, c| this.sharpen(lx, t, c, placed, w),
            |this, lx, c, out, limit, ties, later| match c.child {
                Child::Domain(i) => this.vector_below(lx, t, i, placed, out, limit, ties, later),
                Child::Node(_) => Eval::Beaten,
            },
        );
        lx.cands.truncate(cbase);
        lx.bounds.truncate(bbase);
        Some((placed, best.2))
    }

    /// The fewest children of domain `di` at depth `d` whose capacities reach `x`:
    /// the first component of its vector, exactly.
    fn fewest_children(&self, lx: &mut Lex, d: Depth, di: u32, x: u64) -> u32 {
        let dom = self.inv.domain(d, di);
        let c = d.child();
        if let Some(k) = self.fewest_children_small(d, dom, x) {
            return k;
        }
        let base = lx.sorted.len();
        if !self.inv.is_node_level(c) {
            lx.sorted.extend(
                self.caps.caps[c.ix()][dom.children()]
                    .iter()
                    .copied()
                    .filter(|&v| v > 0),
            );
        }
        lx.sorted.extend(
            self.caps.fits[dom.direct_nodes()]
                .iter()
                .filter(|&&f| f > 0)
                .map(|&f| u64::from(f)),
        );
        let k = fewest(&mut lx.sorted[base..], x);
        lx.sorted.truncate(base);
        k
    }

    /// When one child of domain `di` at depth `d` (width at least 3) holds `x`: the
    /// least of those children's fewest children ([`Objective::fewest_children`]), 1
    /// when a direct node holds `x`. A placement with one child uses at least that many
    /// units one level further down, so it bounds the second component of `di`'s vector
    /// whenever its first is 1 (a placement with more children has a larger vector).
    #[cfg(test)]
    fn fewest_grandchildren(&self, lx: &mut Lex, d: Depth, di: u32, x: u64) -> u32 {
        let dom = *self.inv.domain(d, di);
        if self.direct_node_holds(&dom, x) {
            return 1;
        }
        let c = d.child();
        if self.inv.is_node_level(c) {
            return 1;
        }
        let mut least = u32::MAX;
        for ci in dom.children() {
            if self.caps.caps[c.ix()][ci] >= x {
                least = least.min(self.fewest_children(lx, c, ci as u32, x));
                if least == 1 {
                    break;
                }
            }
        }
        if least == u32::MAX {
            1
        } else {
            least
        }
    }

    /// Phase 0 of [`Objective::choose_domain`]: among the domains that take `count`
    /// and one node of which holds them all, the policy's choice (then the first).
    fn one_node_holds(
        &self,
        t: Depth,
        count: u64,
        step: u64,
        most_free: bool,
        within: Option<&[u32]>,
    ) -> Option<(u64, u32)> {
        let (caps, peaks) = (&self.caps.caps[t.ix()], &self.caps.peaks[t.ix()]);
        let w = self.width(t);
        let need = if step == 1 {
            count
        } else {
            count.div_ceil(step) * step
        };
        let mut best: Option<(u64, u32)> = None;
        let mut consider = |i: usize, cap: u64| -> bool {
            let spare = cap - count;
            let tie = if most_free { !spare } else { spare };
            if best.is_none_or(|(bt, _)| tie < bt) {
                best = Some((tie, i as u32));
                return tie == 0;
            }
            false
        };
        if let Some(ps) = within {
            for &i in ps {
                let i = i as usize;
                let cap = caps[i];
                if cap >= need && peaks[i * w + w - 1] >= count && consider(i, cap) {
                    break;
                }
            }
        } else if w == 1 {
            // The deepest label level: peaks are the largest node fits, contiguous.
            return super::scan::best_holding(self.caps, t, need, count, most_free);
        } else {
            for (i, &cap) in caps.iter().enumerate() {
                if cap >= need && peaks[i * w + w - 1] >= count && consider(i, cap) {
                    break;
                }
            }
        }
        best.map(|(_, i)| (count, i))
    }

    /// Among `lx.cands[base..]` (with bounds of width `w`) and an incumbent
    /// `(vector, tie, pos)`, the least `(vector, tie, pos)`; `exact` computes a
    /// candidate's vector. Candidates are sorted by bound and evaluated only while
    /// their bound can still beat the incumbent.
    fn select(
        &self,
        lx: &mut Lex,
        base: usize,
        w: usize,
        mut best: (Vector, u64, u32),
        sharpen: impl Fn(&Self, &mut Lex, &Cand) -> bool,
        exact: impl Fn(&Self, &mut Lex, &Cand, &mut [u32], &[u32], bool, bool) -> Eval,
    ) -> (Vector, u64, u32) {
        {
            let Lex { cands, bounds, .. } = &mut *lx;
            cands[base..].sort_unstable_by(|a, b| {
                bounds[a.bound..a.bound + w]
                    .cmp(&bounds[b.bound..b.bound + w])
                    .then(a.tie.cmp(&b.tie))
                    .then(a.pos.cmp(&b.pos))
            });
        }
        // Whether candidate `c`'s bound already loses to the best (with a worse tie, only
        // a smaller vector than the best can win).
        let cannot_win = |lx: &Lex, c: &Cand, best: &(Vector, u64, u32)| {
            (&lx.bounds[c.bound..c.bound + w], c.tie, c.pos) >= (&best.0[..w], best.1, best.2)
        };
        // Candidate `c`'s exact vector (its knapsack run if needed), the best if it wins.
        let mut v: Vector = [0; MAX_WIDTH];
        let mut settle = |lx: &mut Lex, c: &Cand, best: &mut (Vector, u64, u32), later: bool| {
            let limit = best.0;
            let ties = (c.tie, c.pos) >= (best.1, best.2);
            let eval = exact(self, lx, c, &mut v[..w], &limit[..w], ties, later);
            if eval == Eval::Done && (&v[..w], c.tie, c.pos) < (&best.0[..w], best.1, best.2) {
                *best = (v, c.tie, c.pos);
            }
            eval
        };
        // First the candidates whose vectors come without a knapsack; those that need
        // one are put off, then taken by their sharpened bounds while those can win.
        let mut deferred = 0u32;
        for k in base..lx.cands.len() {
            let c = lx.cands[k];
            if cannot_win(lx, &c, &best) {
                break;
            }
            // Only a candidate about to be evaluated gets its sharper (dearer) bound;
            // the order stays that of the first bounds, so one that cannot win is
            // passed over rather than ending the loop.
            if sharpen(self, lx, &c) && cannot_win(lx, &c, &best) {
                continue;
            }
            if lx.bounds[c.bound..c.bound + w].iter().all(|&u| u == 1) {
                let ones = ([1; MAX_WIDTH], c.tie, c.pos);
                if (&ones.0[..w], c.tie, c.pos) < (&best.0[..w], best.1, best.2) {
                    best = ones;
                }
                continue;
            }
            if settle(lx, &c, &mut best, true) != Eval::Later {
                continue;
            }
            lx.cands[k].later = true;
            deferred += 1;
            if deferred % PUT_OFF_PER_KNAPSACK != 0 {
                continue;
            }
            // Every few put off, the most promising of them now: its vector may end the
            // pass early (when every put-off candidate's witness fails, as on a fuller
            // cluster, the pass would otherwise try them all before any knapsack).
            let most_promising = (base..=k).filter(|&j| lx.cands[j].later).min_by(|&a, &b| {
                let (a, b) = (&lx.cands[a], &lx.cands[b]);
                (&lx.bounds[a.bound..a.bound + w], a.tie, a.pos).cmp(&(
                    &lx.bounds[b.bound..b.bound + w],
                    b.tie,
                    b.pos,
                ))
            });
            if let Some(j) = most_promising {
                let c = lx.cands[j];
                lx.cands[j].later = false;
                if !cannot_win(lx, &c, &best) {
                    settle(lx, &c, &mut best, false);
                }
            }
        }
        if deferred == 0 {
            return best;
        }
        {
            let Lex { cands, bounds, .. } = &mut *lx;
            cands[base..].sort_unstable_by(|a, b| {
                b.later
                    .cmp(&a.later)
                    .then(bounds[a.bound..a.bound + w].cmp(&bounds[b.bound..b.bound + w]))
                    .then(a.tie.cmp(&b.tie))
                    .then(a.pos.cmp(&b.pos))
            });
        }
        for k in base..lx.cands.len() {
            let c = lx.cands[k];
            if !c.later || cannot_win(lx, &c, &best) {
                break;
            }
            settle(lx, &c, &mut best, false);
        }
        best
    }

    /// The least vector (into `out`, of width `width(d)`) of a placement of `x` members
    /// in domain `di` at depth `d` (`0 < x <=` its capacity, a multiple of its grain).
    pub fn vector(&self, lx: &mut Lex, d: Depth, di: u32, x: u64, out: &mut [u32]) {
        let dom = *self.inv.domain(d, di);
        if !self.has_child_domains(d, &dom) {
            out.fill(self.nodes_needed(lx, &dom, x));
            return;
        }
        if let Some((_, tail)) = self.best_child(lx, d, &dom, x, None) {
            out[0] = 1;
            let w = out.len();
            out[1..].copy_from_slice(&tail[..w - 1]);
            return;
        }
        if self.pool_vector(lx, d, di, &dom, x, out) {
            return;
        }
        // The node bound met by the children that hold the most, else the search over
        // sets of children (width 2).
        if let Some(v) = self.exact_by_profiles(lx, d, di, x) {
            out.copy_from_slice(&v);
            return;
        }
        // The knapsack, its children kept for the assignment that usually follows.
        let ib = lx.items.len();
        let v = self.knapsack_children(lx, d, &dom, x);
        out.copy_from_slice(&v[..out.len()]);
        #[cfg(test)]
        if lx.memo_last {
            lx.memo.clear();
            lx.memo_keys.clear();
        }
        let mb = lx.memo.len() as u32;
        let Lex { items, memo, .. } = &mut *lx;
        memo.extend_from_slice(&items[ib..]);
        let me = lx.memo.len() as u32;
        lx.memo_keys.push(((d.ix(), di, x), mb, me));
        lx.items.truncate(ib);
    }

    /// [`Objective::vector`] when the vector may not exceed `limit` (nor equal it when
    /// `ties_lose`): [`Eval::Beaten`] when a bound proves it does (then `out` holds only
    /// that bound), before the knapsack; with `later`, [`Eval::Later`] rather than
    /// running the knapsack.
    #[allow(clippy::too_many_arguments)]
    fn vector_below(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        x: u64,
        out: &mut [u32],
        limit: &[u32],
        ties_lose: bool,
        later: bool,
    ) -> Eval {
        let dom = *self.inv.domain(d, di);
        if self.has_child_domains(d, &dom) && limit[0] == 1 && self.any_child_holds(d, &dom, x) {
            // One child holds `x`: the vector is `[1, the best child's]`, so only a child
            // whose vector beats the limit's tail can make it win (the limit passed down).
            return match self.best_child(lx, d, &dom, x, Some((&limit[1..], ties_lose))) {
                Some((_, tail)) => {
                    out[0] = 1;
                    let w = out.len();
                    out[1..].copy_from_slice(&tail[..w - 1]);
                    Eval::Done
                }
                None => Eval::Beaten,
            };
        }
        if self.has_child_domains(d, &dom) && !self.any_child_holds(d, &dom, x) {
            if self.pool_vector(lx, d, di, &dom, x, out) {
                return Eval::Done;
            }
            if self.pool_allowed(d) && (&out[..] > limit || (ties_lose && &out[..] == limit)) {
                return Eval::Beaten;
            }
            if later {
                if let Some(v) = self.exact_by_profiles(lx, d, di, x) {
                    out.copy_from_slice(&v);
                    return Eval::Done;
                }
                return Eval::Later;
            }
        }
        self.vector(lx, d, di, x, out);
        Eval::Done
    }

    /// Whether one child of `dom` (depth `d`) can hold `x` on its own.
    fn any_child_holds(&self, d: Depth, dom: &Domain, x: u64) -> bool {
        let c = d.child();
        (!self.inv.is_node_level(c)
            && self.caps.caps[c.ix()][dom.children()]
                .iter()
                .any(|&v| v >= x))
            || self.direct_node_holds(dom, x)
    }

    /// Whether one of `dom`'s direct nodes can hold `x` on its own.
    fn direct_node_holds(&self, dom: &Domain, x: u64) -> bool {
        self.caps.fits[dom.direct_nodes()]
            .iter()
            .any(|&f| u64::from(f) >= x)
    }

    /// Whether [`Objective::pool_fill`] applies below depth `d` (no slice level there).
    fn pool_allowed(&self, d: Depth) -> bool {
        let labels = self.inv.label_depth();
        !self
            .grain
            .floors
            .iter()
            .any(|&(sd, _)| sd > d.ix() && sd <= labels)
    }

    /// The fewest of `dom`'s direct nodes whose fits reach `x`.
    fn nodes_needed(&self, lx: &mut Lex, dom: &Domain, x: u64) -> u32 {
        let fits = &self.caps.fits[dom.direct_nodes()];
        if self.direct_node_holds(dom, x) {
            return 1;
        }
        let base = lx.sorted.len();
        lx.sorted
            .extend(fits.iter().filter(|&&f| f > 0).map(|&f| u64::from(f)));
        let k = fewest(&mut lx.sorted[base..], x);
        lx.sorted.truncate(base);
        k
    }

    /// The fewest of `dom`'s direct nodes whose fits reach `x`, when at most `limit`
    /// (`None` otherwise): counted by fit when every fit is small ([`within_by_count`]),
    /// else only the largest `limit` fits are sorted.
    fn nodes_within(&self, lx: &mut Lex, dom: &Domain, x: u64, limit: u32) -> Option<u32> {
        let fits = &self.caps.fits[dom.direct_nodes()];
        if let Some(k) = within_by_count(fits, x, limit) {
            return k;
        }
        let base = lx.sorted.len();
        lx.sorted
            .extend(fits.iter().filter(|&&f| f > 0).map(|&f| u64::from(f)));
        let head = &mut lx.sorted[base..];
        let lim = (limit as usize).min(head.len());
        if lim == 0 {
            lx.sorted.truncate(base);
            return None;
        }
        if lim < head.len() {
            head.select_nth_unstable_by(lim - 1, |a, b| b.cmp(a));
        }
        let k = if head[..lim].iter().fold(0u64, |a, &b| a.saturating_add(b)) >= x {
            Some(fewest(&mut head[..lim], x))
        } else {
            None
        };
        lx.sorted.truncate(base);
        k
    }

    /// When one child of `dom` (depth `d`) can hold `x`: the best such child and the
    /// vector inside it (width `width(d) - 1`; all ones for a direct node). Ties go to
    /// the child with the least capacity, then the first.
    /// With `below = Some((limit, ties_lose))`, only a child whose vector is less than
    /// `limit` (or equal, unless `ties_lose`) is chosen: `None` when none is.
    fn best_child(
        &self,
        lx: &mut Lex,
        d: Depth,
        dom: &Domain,
        x: u64,
        below: Option<(&[u32], bool)>,
    ) -> Option<(Child, Vector)> {
        let inv = self.inv;
        let w = self.width(d) - 1;
        let c = d.child();
        let (cbase, bbase) = (lx.cands.len(), lx.bounds.len());
        let mut pos = 0u32;
        if !inv.is_node_level(c) {
            let caps = &self.caps.caps[c.ix()];
            let peaks = &self.caps.peaks[c.ix()];
            for ci in dom.children() {
                let cap = caps[ci];
                if cap >= x {
                    let bound = lx.bounds.len();
                    let row = &peaks[ci * w..ci * w + w];
                    lx.bounds.extend(row.iter().map(|&p| units(x, p)));
                    if w > 1 {
                        let k = self.fewest_children(lx, c, ci as u32, x);
                        lx.bounds[bound] = lx.bounds[bound].max(k);
                        if w > 2 {
                            let mut lb: Vector = [0; MAX_WIDTH];
                            lb[..w].copy_from_slice(&lx.bounds[bound..bound + w]);
                            self.bound_in_one(lx, c, ci as u32, x, &mut lb[..w]);
                            lx.bounds[bound..bound + w].copy_from_slice(&lb[..w]);
                        }
                    }
                    lx.cands.push(Cand {
                        child: Child::Domain(ci as u32),
                        tie: cap,
                        pos,
                        bound,
                        later: false,
                    });
                }
                pos += 1;
            }
        }
        for n in dom.direct_nodes() {
            let fit = u64::from(self.caps.fits[n]);
            if fit >= x {
                let bound = lx.bounds.len();
                lx.bounds.extend(std::iter::repeat_n(1, w));
                lx.cands.push(Cand {
                    child: Child::Node(NodeIx::at(n)),
                    tie: fit,
                    pos,
                    bound,
                    later: false,
                });
            }
            pos += 1;
        }
        if lx.cands.len() == cbase {
            return None;
        }
        // The incumbent: none, or the limit (a child equal to it wins unless ties lose;
        // no child has the position `u32::MAX`, so the result is a child iff it differs).
        let mut none = ([INF; MAX_WIDTH], u64::MAX, u32::MAX);
        if let Some((limit, ties_lose)) = below {
            none.0[..w].copy_from_slice(&limit[..w]);
            if ties_lose {
                (none.1, none.2) = (0, 0);
            }
        }
        let found = self.select(
            lx,
            cbase,
            w,
            none,
            |this, lx, cand| this.sharpen(lx, c, cand, x, w),
            |this, lx, cand, out, limit, ties, later| match cand.child {
                Child::Domain(ci) => this.vector_below(lx, c, ci, x, out, limit, ties, later),
                Child::Node(_) => {
                    out.fill(1);
                    Eval::Done
                }
            },
        );
        let (v, _, p) = found;
        let child = (found != none)
            .then(|| lx.cands[cbase..].iter().find(|k| k.pos == p))
            .flatten()
            .map(|k| k.child);
        lx.cands.truncate(cbase);
        lx.bounds.truncate(bbase);
        if let Some(ch) = child {
            lx.picks.push(((d.ix(), dom.start, x), ch));
        }
        child.map(|ch| (ch, v))
    }

    /// The largest nodes of `dom` first (ties by position): when the units they use meet
    /// the per-level lower bound, that vector (into `out`) is the least, and the nodes
    /// are left in `lx.pool` (from its length on entry), sorted by position. Only
    /// without slice levels below `d`.
    fn pool_fill(&self, lx: &mut Lex, d: Depth, dom: &Domain, x: u64, out: &mut [u32]) -> bool {
        let inv = self.inv;
        let labels = inv.label_depth();
        if !self.pool_allowed(d) {
            return false;
        }
        let w = out.len();
        // The bound, level by level: units inside `dom` at depth e are its domains at e
        // and the nodes lacking the label of e.
        for e in d.ix() + 1..=labels {
            let base = lx.sorted.len();
            let level = &inv.domains[e];
            let lo = level.partition_point(|x| x.start < dom.start);
            let hi = level.partition_point(|x| x.start < dom.end);
            lx.sorted
                .extend(self.caps.caps[e][lo..hi].iter().copied().filter(|&v| v > 0));
            for f in d.ix()..e {
                let lvl = &inv.domains[f];
                let lo = lvl.partition_point(|x| x.start < dom.start);
                let hi = lvl.partition_point(|x| x.start < dom.end);
                for g in &lvl[lo..hi] {
                    lx.sorted.extend(
                        self.caps.fits[g.direct_nodes()]
                            .iter()
                            .filter(|&&v| v > 0)
                            .map(|&v| u64::from(v)),
                    );
                }
            }
            out[e - d.ix() - 1] = fewest(&mut lx.sorted[base..], x);
            lx.sorted.truncate(base);
        }
        // The largest nodes.
        let base = lx.pool.len();
        lx.pool.extend(
            self.caps.fits[dom.nodes()]
                .iter()
                .zip(dom.start..)
                .filter(|(&f, _)| f > 0)
                .map(|(&f, n)| (u64::from(f), n)),
        );
        let pool = &mut lx.pool[base..];
        let order = |a: &(u64, u32), b: &(u64, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        // Only the head is sorted: the largest `guess` nodes first (a partition in linear
        // time), all of them when those do not reach `x`.
        let peak = pool.iter().map(|p| p.0).max().unwrap_or(1);
        let guess = (2 * x.div_ceil(peak) as usize + 8).min(pool.len());
        if guess < pool.len() && guess > 0 {
            pool.select_nth_unstable_by(guess - 1, order);
        }
        pool[..guess].sort_unstable_by(order);
        if pool[..guess]
            .iter()
            .map(|p| p.0)
            .fold(0u64, u64::saturating_add)
            < x
        {
            pool.sort_unstable_by(order);
        }
        let mut sum = 0u64;
        let mut m = 0usize;
        while m < pool.len() && sum < x {
            sum = sum.saturating_add(pool[m].0);
            m += 1;
        }
        lx.pool.truncate(base + m);
        let pool = &mut lx.pool[base..];
        pool.sort_unstable_by_key(|p| p.1);
        out[w - 1] = m as u32;
        // The units they use at each label level.
        for e in d.ix() + 1..=labels {
            let mut used = 0u32;
            let mut last: Option<u32> = None;
            for &(_, n) in pool.iter() {
                match inv.domain_of(n, e) {
                    Some(g) if last == Some(g) => {}
                    Some(g) => {
                        used += 1;
                        last = Some(g);
                    }
                    None => used += 1,
                }
            }
            if used != out[e - d.ix() - 1] {
                return false;
            }
        }
        true
    }

    /// Assigns `x` members inside `scope` with the least vector, appending them to
    /// `at.assign`.
    pub fn assign(&self, lx: &mut Lex, scope: Scope, x: u64, at: &mut Attempt) {
        if x == 0 {
            return;
        }
        let inv = self.inv;
        if inv.is_node_level(scope.depth) {
            self.put(scope.node(), x, at);
            return;
        }
        let d = scope.depth;
        let dom = *inv.domain(d, scope.index);
        if !self.has_child_domains(d, &dom) {
            let base = lx.items.len();
            for (pos, n) in dom.direct_nodes().enumerate() {
                let cap = u64::from(self.caps.fits[n]);
                if cap > 0 {
                    lx.items.push(item(cap, Child::Node(NodeIx::at(n)), pos));
                }
            }
            self.split(lx, base, x, d, at);
            return;
        }
        // The child chosen when the vector was computed (this query), else choose now.
        let key = (d.ix(), dom.start, x);
        let picked = match lx.picks.iter().rev().find(|p| p.0 == key) {
            Some(&(_, ch)) => Some(ch),
            None if self.any_child_holds(d, &dom, x) => {
                self.best_child(lx, d, &dom, x, None).map(|c| c.0)
            }
            None => None,
        };
        if let Some(child) = picked {
            match child {
                Child::Node(n) => self.put(n, x, at),
                Child::Domain(c) => self.assign(lx, Scope::new(d.child(), c), x, at),
            }
            return;
        }
        let pb = lx.pool.len();
        let mut scratch: Vector = [0; MAX_WIDTH];
        let w = self.width(d);
        if self.pool_fill(lx, d, &dom, x, &mut scratch[..w]) {
            self.spread(lx, d, &dom, x, pb, lx.pool.len(), at);
            lx.pool.truncate(pb);
            return;
        }
        lx.pool.truncate(pb);
        // The knapsack's children (from the memo when this query computed this
        // vector by the knapsack), then the split.
        let ib = lx.items.len();
        let key = (d.ix(), scope.index, x);
        if let Some(&(_, mb, me)) = lx.memo_keys.iter().rev().find(|m| m.0 == key) {
            #[cfg(test)]
            {
                lx.memo_hits += 1;
            }
            let Lex { items, memo, .. } = &mut *lx;
            items.extend_from_slice(&memo[mb as usize..me as usize]);
        } else {
            self.knapsack_children(lx, d, &dom, x);
        }
        self.split(lx, ib, x, d, at);
    }

    /// Runs the knapsack of `dom` (depth `d`) for `x` and pushes the children it uses,
    /// with the amounts of their steps, onto `lx.items`; returns the vector (width
    /// `width(d)`) into `out` when given.
    fn knapsack_children(&self, lx: &mut Lex, d: Depth, dom: &Domain, x: u64) -> Vector {
        let (tb, chb, kb, tsb) = (
            lx.table.len(),
            lx.choice.len(),
            lx.kids.len(),
            lx.tsrc.len(),
        );
        let top = self.knapsack(lx, d, dom, x, Table::Assign);
        let w = self.width(d);
        let mut v: Vector = [0; MAX_WIDTH];
        let at = tb + top as usize * w;
        v[..w].copy_from_slice(&lx.table[at..at + w]);
        let g = self.grain.at(d.child()).max(1);
        let uu = top as usize + 1;
        let mut u = top;
        for k in (kb..lx.kids.len()).rev() {
            let t = lx.choice[chb + (k - kb) * uu + u as usize];
            if t > 0 {
                let (child, _) = lx.kids[k];
                lx.items.push(item(t * g, child, k - kb));
                u = if u == top {
                    lx.tsrc[tsb + k - kb]
                } else {
                    u.saturating_sub(t)
                };
            }
        }
        lx.table.truncate(tb);
        lx.choice.truncate(chb);
        lx.tsrc.truncate(tsb);
        lx.kids.truncate(kb);
        debug_assert_eq!(u, 0, "the knapsack holds the amount");
        v
    }

    /// Splits `x` over `lx.items[base..]` (children of a domain at depth `d`) by the
    /// policy and assigns each share; pops the items.
    fn split(&self, lx: &mut Lex, base: usize, x: u64, d: Depth, at: &mut Attempt) {
        choose(
            &mut lx.items[base..],
            x,
            self.grain.at(d.child()),
            self.policy,
        );
        for k in base..lx.items.len() {
            let it = lx.items[k];
            if it.take == 0 {
                continue;
            }
            match it.child {
                Child::Node(n) => self.put(n, it.take, at),
                Child::Domain(c) => self.assign(lx, Scope::new(d.child(), c), it.take, at),
            }
        }
        lx.items.truncate(base);
    }

    /// Spreads `x` over the nodes `lx.pool[lo..hi]` (sorted by position, all inside
    /// `dom` at depth `d`), level by level by the policy.
    #[allow(clippy::too_many_arguments)]
    fn spread(
        &self,
        lx: &mut Lex,
        d: Depth,
        dom: &Domain,
        x: u64,
        lo: usize,
        hi: usize,
        at: &mut Attempt,
    ) {
        let inv = self.inv;
        let c = d.child();
        let base = lx.items.len();
        // Children with chosen nodes, and the ranges of the pool inside each.
        let rb = lx.kids.len();
        let mut k = lo;
        let mut pos = 0usize;
        if !inv.is_node_level(c) {
            for ci in dom.children() {
                let child = inv.domain(c, ci as u32);
                let start = k;
                let mut cap = 0u64;
                while k < hi && lx.pool[k].1 < child.end {
                    cap += lx.pool[k].0;
                    k += 1;
                }
                if cap > 0 {
                    lx.items.push(item(cap, Child::Domain(ci as u32), pos));
                    lx.kids
                        .push((Child::Domain(ci as u32), (start as u64) << 32 | k as u64));
                }
                pos += 1;
            }
        }
        while k < hi {
            let (fit, n) = lx.pool[k];
            lx.items.push(item(
                fit,
                Child::Node(NodeIx(n)),
                pos + (n - dom.direct) as usize,
            ));
            k += 1;
        }
        choose(&mut lx.items[base..], x, self.grain.at(c), self.policy);
        for j in base..lx.items.len() {
            let it = lx.items[j];
            if it.take == 0 {
                continue;
            }
            match it.child {
                Child::Node(n) => self.put(n, it.take, at),
                Child::Domain(ci) => {
                    let range = lx.kids[rb..]
                        .iter()
                        .find(|r| r.0 == Child::Domain(ci))
                        .map(|r| r.1)
                        .unwrap_or(0);
                    let (s, e) = ((range >> 32) as usize, (range & 0xffff_ffff) as usize);
                    let child = *inv.domain(c, ci);
                    self.spread(lx, c, &child, it.take, s, e, at);
                }
            }
        }
        lx.kids.truncate(rb);
        lx.items.truncate(base);
    }

    /// `count` members on node `n`.
    fn put(&self, n: NodeIx, count: u64, at: &mut Attempt) {
        // At most the node's fit, a u32.
        at.assign.push(member(self.ri, n, count as u32));
        at.node_stamp[n.ix()] = at.stamp;
    }
}

/// A descent item for a child with room `cap`.
fn item(cap: u64, child: Child, pos: usize) -> Item {
    Item {
        cap,
        take: 0,
        child,
        used: false,
        pos: pos as u32,
    }
}

/// The fewest of `caps` (sorted here, largest first) whose sum reaches `x`.
fn fewest(caps: &mut [u64], x: u64) -> u32 {
    caps.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0u64;
    let mut k = 0u32;
    for &c in caps.iter() {
        if sum >= x {
            break;
        }
        sum = sum.saturating_add(c);
        k += 1;
    }
    k
}

/// Fits up to this are counted by value in [`within_by_count`] (a one-GPU member on an
/// eight-GPU node fits at most 8 times).
const SMALL_FIT: usize = 64;

/// [`Objective::nodes_within`] by counting the nodes of each fit, one pass over `fits`
/// and then the values from the largest down, taking whole values while `x` is not
/// reached (the same count as taking the largest fits one by one): `Some(answer)`, or
/// `None` when a fit exceeds [`SMALL_FIT`] (the caller sorts).
fn within_by_count(fits: &[u32], x: u64, limit: u32) -> Option<Option<u32>> {
    let mut count = [0u32; SMALL_FIT + 1];
    let mut top = 0;
    for &f in fits {
        *count.get_mut(f as usize)? += 1;
        top = top.max(f);
    }
    if limit == 0 {
        return Some(None);
    }
    let (mut left, mut used) = (x, 0u64);
    for v in (1..=u64::from(top)).rev() {
        let c = u64::from(count[v as usize]);
        if c == 0 {
            continue;
        }
        let need = left.div_ceil(v);
        if need <= c {
            used += need;
            return Some((used <= u64::from(limit)).then_some(used as u32));
        }
        used += c;
        left -= c * v;
        if used >= u64::from(limit) {
            return Some(None);
        }
    }
    Some(None)
}

/// The positions a scan visits: `0..n`, or only those of `within` (ascending).
fn positions(within: Option<&[u32]>, n: usize) -> impl Iterator<Item = usize> + '_ {
    let (all, only) = match within {
        None => (0..n, &[][..]),
        Some(ps) => (0..0, ps),
    };
    all.chain(only.iter().map(|&i| i as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::CompiledGang;
    use crate::solve::{peaks, profile, rollup::rollup};
    use crate::testkit::{build, on_path};
    use crate::{Gang, NodeSpec, Role};

    const GPU: &str = "gpu";

    /// Counting nodes by fit gives the fewest largest fits that reach `x` (when at most
    /// `limit`), as sorting them does, and leaves fits above `SMALL_FIT` to the sort.
    #[test]
    fn counting_by_fit_is_sorting_the_fits() {
        let mut next = crate::solve::xorshift(23);
        let (mut counted, mut over_limit, mut large) = (0, 0, 0);
        for _ in 0..20_000 {
            let top = [3, 9, 65, 70][next(4) as usize];
            let fits: Vec<u32> = (0..next(40)).map(|_| next(top + 1) as u32).collect();
            let (x, limit) = (next(300), next(45) as u32);
            let mut sorted: Vec<u64> = fits.iter().map(|&f| u64::from(f)).collect();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let mut sum = 0;
            let k = sorted.iter().position(|&f| {
                sum += f;
                sum >= x
            });
            // The fewest nodes reaching x: none when x is 0, and only positive fits.
            let want = match k {
                _ if x == 0 => Some(0).filter(|_| limit > 0 && sorted[..].iter().any(|&f| f > 0)),
                Some(k) if k < limit as usize => Some(k as u32 + 1),
                _ => None,
            };
            match within_by_count(&fits, x, limit) {
                None => {
                    assert!(fits.iter().any(|&f| f as usize > SMALL_FIT));
                    large += 1;
                }
                Some(got) => {
                    assert_eq!(got, want, "fits {fits:?}, x {x}, limit {limit}");
                    if got.is_some_and(|k| k > 1) {
                        counted += 1;
                    } else if k.is_some() && got.is_none() {
                        over_limit += 1;
                    }
                }
            }
        }
        assert!(
            counted > 2000 && over_limit > 300 && large > 2000,
            "{counted} {over_limit} {large}"
        );
    }

    /// Random trees of up to 10 nodes (blocks, racks, some labels missing), random fits.
    fn random(seed: u64) -> Inventory {
        let mut next = crate::solve::xorshift(seed | 1);
        let len = 1 + next(10);
        let blocks = ["p", "q", "r"];
        let racks = ["a", "b", "c"];
        let nodes = (0..len)
            .map(|i| {
                let (b, r) = (blocks[next(3) as usize], racks[next(3) as usize]);
                let path: Vec<&str> = match next(8) {
                    0 => vec![],
                    1 => vec![b],
                    _ => vec![b, r],
                };
                on_path(&format!("n{i}"), &path).capacity(GPU, next(7) as i64)
            })
            .collect();
        build(&["block", "rack"], nodes)
    }

    /// Random trees of up to 14 nodes three label levels deep (zones, blocks, racks,
    /// some labels missing), random fits: vectors of width 3 below the cluster.
    fn random3(seed: u64) -> Inventory {
        let mut next = crate::solve::xorshift(seed | 1);
        let len = 1 + next(14);
        let (zones, blocks, racks) = (["x", "y"], ["p", "q", "r"], ["a", "b", "c"]);
        let nodes = (0..len)
            .map(|i| {
                let z = zones[next(2) as usize];
                let (b, r) = (blocks[next(3) as usize], racks[next(3) as usize]);
                let path: Vec<&str> = match next(10) {
                    0 => vec![],
                    1 => vec![z],
                    2 => vec![z, b],
                    _ => vec![z, b, r],
                };
                let spec = ["zone", "block", "rack"]
                    .iter()
                    .zip(&path)
                    .fold(NodeSpec::new(format!("n{i}")), |spec, (key, value)| {
                        spec.label(*key, *value)
                    });
                spec.capacity(GPU, next(7) as i64)
            })
            .collect();
        build(&["zone", "block", "rack"], nodes)
    }

    pub(super) fn capacities(inv: &Inventory, c: &CompiledGang) -> Capacities {
        let mut s = Capacities::default();
        let role = &c.inner.roles[0];
        rollup(
            inv,
            role,
            Grain::of(&c.inner, role),
            Scope::CLUSTER,
            None,
            &mut s,
        );
        peaks::fill(inv, &mut s);
        s
    }

    /// The single-role objective of `c`'s first role over `caps`.
    pub(super) fn objective<'a>(
        inv: &'a Inventory,
        c: &'a CompiledGang,
        caps: &'a Capacities,
        policy: Policy,
    ) -> Objective<'a> {
        Objective {
            inv,
            caps,
            grain: Grain::of(&c.inner, &c.inner.roles[0]),
            policy,
            ri: RoleIx(0),
        }
    }

    /// [`capacities`] with the profiles the node bounds read.
    pub(super) fn profiled(inv: &Inventory, c: &CompiledGang) -> Capacities {
        let mut s = capacities(inv, c);
        profile::fill(inv, &s.fits, &mut s.profiles);
        s.profiled = true;
        s
    }

    /// The vector of an assignment, counted from the inventory's domains.
    fn measured(inv: &Inventory, at: &Attempt) -> Vec<u32> {
        let mut v = Vec::new();
        for e in 1..=inv.label_depth() {
            let mut units: Vec<(bool, u32)> = at
                .assign
                .iter()
                .map(|&(_, n, _)| match inv.domain_of(n, e) {
                    Some(d) => (true, d),
                    None => (false, n),
                })
                .collect();
            units.sort_unstable();
            units.dedup();
            v.push(units.len() as u32);
        }
        v.push(at.assign.len() as u32);
        v
    }

    #[test]
    fn every_path_agrees_with_the_knapsack_and_the_assignment_has_its_vector() {
        // Two label levels, then three (the bounds inside one child: `bound_in_one`).
        for seed in 1..800u64 {
            let inv = if seed < 400 {
                random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            } else {
                random3(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            };
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            // Half of the seeds with profiles: the node bounds prune, never change.
            let caps = if seed % 2 == 0 {
                profiled(&inv, &c)
            } else {
                capacities(&inv, &c)
            };
            let o = objective(&inv, &c, &caps, Policy::BestFit);
            let mut lx = Lex::default();
            let mut at = Attempt::default();
            at.ensure(&inv);
            let dom = *inv.domain(Depth::CLUSTER, 0);
            let w = o.width(Depth::CLUSTER);
            for x in 1..=caps.caps[0][0] {
                let mut v = [0u32; MAX_WIDTH];
                o.vector(&mut lx, Depth::CLUSTER, 0, x, &mut v[..w]);
                let base = lx.table.len();
                o.knapsack(&mut lx, Depth::CLUSTER, &dom, x, Table::Steps);
                let dp = lx.table[base + x as usize * w..base + x as usize * w + w].to_vec();
                lx.table.truncate(base);
                // The unpacked knapsack (deep topologies) agrees with the packed one.
                lx.unpacked = true;
                o.knapsack(&mut lx, Depth::CLUSTER, &dom, x, Table::Steps);
                let plain = lx.table[base + x as usize * w..base + x as usize * w + w].to_vec();
                lx.table.truncate(base);
                lx.unpacked = false;
                assert_eq!(dp, plain, "seed {seed}, {x} members");
                assert_eq!(&v[..w], &dp[..], "seed {seed}, {x} members");
                at.fresh(inv.resources.len());
                o.assign(&mut lx, Scope::CLUSTER, x, &mut at);
                let total: u64 = at.assign.iter().map(|m| u64::from(m.2)).sum();
                assert_eq!(total, x, "seed {seed}");
                for &(_, n, k) in &at.assign {
                    assert!(k > 0 && k <= caps.fits[n as usize], "seed {seed}");
                }
                assert_eq!(measured(&inv, &at), dp, "seed {seed}, {x} members");
                // Scratch left as found.
                assert!(lx.table.is_empty() && lx.kids.is_empty() && lx.cands.is_empty());
                assert!(lx.pool.is_empty() && lx.items.is_empty() && lx.sorted.is_empty());
            }
        }
    }

    /// Calls `f(seed, objective, scratch)` for seeds 1 to 599: the one-GPU role's
    /// objective on `random(seed * mul)`, its fit profiles kept.
    fn each_random_objective(mul: u64, mut f: impl FnMut(u64, &Objective<'_>, &mut Lex)) {
        for seed in 1..600u64 {
            let inv = random(seed.wrapping_mul(mul));
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
            let o = objective(&inv, &c, &caps, Policy::BestFit);
            let mut lx = Lex::default();
            f(seed, &o, &mut lx);
        }
    }

    #[test]
    fn the_node_bound_never_exceeds_the_vector_with_as_few_children() {
        let (mut checked, mut tight) = (0u32, 0u32);
        each_random_objective(0x2545_f491_4f6c_dd1d, |seed, o, lx| {
            let (inv, caps) = (o.inv, o.caps);
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                let w = o.width(d);
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    for x in 1..=caps.caps[d.ix()][di as usize] {
                        let mut v = [0u32; MAX_WIDTH];
                        o.vector(lx, d, di, x, &mut v[..w]);
                        let r = o.fewest_children(lx, d, di, x);
                        assert_eq!(r, v[0], "seed {seed}: the first component is exact");
                        let got = o.nodes_bound(lx, d, di, x, r);
                        lx.wide = true;
                        assert_eq!(got, o.nodes_bound(lx, d, di, x, r), "seed {seed}");
                        lx.wide = false;
                        if let Some(k) = got {
                            checked += 1;
                            tight += u32::from(k == v[w - 1]);
                            assert!(k <= v[w - 1], "seed {seed}, {x}: {k} > {:?}", &v[..w]);
                        }
                        assert!(lx.sorted.is_empty());
                    }
                }
            }
        });
        assert!(
            checked > 1000 && tight > checked / 2,
            "{tight} of {checked}"
        );
    }

    #[test]
    fn the_bounds_inside_one_child_never_exceed_the_vector() {
        // Every domain of width 3 or more whose vector starts with one child: the bound
        // from the peaks and the fewest children, raised by `bound_in_one`, stays at or
        // below the exact vector, component by component, and often meets it.
        let (mut checked, mut raised, mut tight) = (0u32, 0u32, 0u32);
        for seed in 1..600u64 {
            let inv = random3(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            let caps = if seed % 3 == 0 {
                capacities(&inv, &c)
            } else {
                profiled(&inv, &c)
            };
            let o = objective(&inv, &c, &caps, Policy::BestFit);
            let mut lx = Lex::default();
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                let w = o.width(d);
                if w < 3 {
                    continue;
                }
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    for x in 1..=caps.caps[d.ix()][di as usize] {
                        let mut v = [0u32; MAX_WIDTH];
                        o.vector(&mut lx, d, di, x, &mut v[..w]);
                        if v[0] != 1 {
                            continue;
                        }
                        let row = &caps.peaks[d.ix()][di as usize * w..di as usize * w + w];
                        let mut lb = [0u32; MAX_WIDTH];
                        for (l, &p) in lb[..w].iter_mut().zip(row) {
                            *l = units(x, p);
                        }
                        lb[0] = lb[0].max(o.fewest_children(&mut lx, d, di, x));
                        let before = lb;
                        o.bound_in_one(&mut lx, d, di, x, &mut lb[..w]);
                        checked += 1;
                        raised += u32::from(lb != before);
                        tight += u32::from(lb[1] == v[1] && lb[w - 1] == v[w - 1]);
                        for k in 0..w {
                            assert!(lb[k] <= v[k], "seed {seed}, {x}: {lb:?} > {v:?}");
                        }
                        assert!(lx.sorted.is_empty());
                    }
                }
            }
        }
        assert!(
            checked > 1000 && raised > checked / 10 && tight > checked / 3,
            "{raised} raised, {tight} tight of {checked}"
        );
    }

    #[test]
    fn dropping_the_children_no_least_placement_uses_keeps_every_assignment() {
        // Every domain, every amount: the vector and the members assigned (node by
        // node) are the same with and without `drop_unusable_kids`, which drops some.
        let mut dropped = 0u64;
        for seed in 1..600u64 {
            let mul = 0x6c62_272e_07bb_0142;
            let inv = if seed % 2 == 0 {
                random(seed.wrapping_mul(mul))
            } else {
                random3(seed.wrapping_mul(mul))
            };
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
                let c = inv.compile(&gang).unwrap();
                let caps = capacities(&inv, &c);
                let o = objective(&inv, &c, &caps, policy);
                let mut lx = Lex::default();
                let mut at = Attempt::default();
                at.ensure(&inv);
                for d in 0..inv.label_depth() {
                    let d = Depth(d);
                    let w = o.width(d);
                    for di in 0..inv.domains[d.ix()].len() as u32 {
                        for x in 1..=caps.caps[d.ix()][di as usize] {
                            let mut got = Vec::new();
                            for keep in [true, false] {
                                lx.keep_kids = keep;
                                let mut v = [0u32; MAX_WIDTH];
                                o.vector(&mut lx, d, di, x, &mut v[..w]);
                                at.fresh(inv.resources.len());
                                o.assign(&mut lx, Scope::new(d, di), x, &mut at);
                                got.push((v, at.assign.clone()));
                            }
                            assert_eq!(got[0], got[1], "seed {seed}, {policy:?}, {x}");
                        }
                    }
                }
                dropped += lx.dropped;
            }
        }
        assert!(dropped > 100, "{dropped} dropped");
    }

    #[test]
    fn the_node_bound_met_by_a_witness_is_the_knapsacks_vector() {
        let (mut met, mut checked) = (0u32, 0u32);
        each_random_objective(0x9e37_79b9_7f4a_7c15, |seed, o, lx| {
            let (inv, caps) = (o.inv, o.caps);
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                if o.width(d) != 2 {
                    continue;
                }
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    let dom = *inv.domain(d, di);
                    for x in 1..=caps.caps[d.ix()][di as usize] {
                        let base = lx.table.len();
                        o.knapsack(lx, d, &dom, x, Table::Steps);
                        let dp =
                            lx.table[base + x as usize * 2..base + x as usize * 2 + 2].to_vec();
                        lx.table.truncate(base);
                        checked += 1;
                        if let Some(v) = o.nodes_exact(lx, d, di, x) {
                            met += 1;
                            assert_eq!(&v[..], &dp[..], "seed {seed}, {x} members");
                        }
                        assert!(lx.sorted.is_empty());
                    }
                }
            }
        });
        assert!(met > checked / 2, "{met} of {checked}");
    }

    #[test]
    fn the_pool_fill_is_taken_only_when_it_meets_the_bound() {
        // Block p: racks a (3 + 3 + 3) and b (6). Twelve: the largest nodes (6, 3, 3)
        // use two racks and three nodes, the bound: taken.
        let n = |name: &str, path: &[&str], gpus: i64| on_path(name, path).capacity(GPU, gpus);
        let inv = build(
            &["block", "rack"],
            vec![
                n("a1", &["p", "a"], 3),
                n("a2", &["p", "a"], 3),
                n("a3", &["p", "a"], 3),
                n("b1", &["p", "b"], 6),
            ],
        );
        let c = inv
            .compile(&Gang::new("g").role(Role::new("w", 1).request(GPU, 1)))
            .unwrap();
        let caps = capacities(&inv, &c);
        let o = objective(&inv, &c, &caps, Policy::BestFit);
        let mut lx = Lex::default();
        let block = *inv.domain(Depth(1), 0);
        let mut v = [0u32; 2];
        assert!(o.pool_fill(&mut lx, Depth(1), &block, 12, &mut v));
        assert_eq!(v, [2, 3]);
        lx.pool.clear();
        // Nine: one rack holds it, but the largest nodes (6, 3) span two.
        assert!(!o.pool_fill(&mut lx, Depth(1), &block, 9, &mut v));
        lx.pool.clear();
        let mut best = [0u32; 2];
        o.vector(&mut lx, Depth(1), 0, 9, &mut best);
        assert_eq!(best, [1, 3]);
    }
}
