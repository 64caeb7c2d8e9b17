//! A lower bound on the objective's vector at the root of [`super::compact`]'s walk,
//! level by level and stronger than the walk's own (which is cheap enough for every
//! state): computed once, when the walk ran out of work units, it may still prove the
//! best vector found least (the search is then complete).
//!
//! Level by level, as long as the bound equals the best vector: at level `l`, any
//! assignment of smaller vector uses exactly `best[l - 1]` units of the level above
//! (it cannot use fewer, by the bound, nor more, or its vector would be larger), so its
//! units of level `l` come from at most that many parents. The bound at a level is the
//! most of:
//! - per weight vector of the relaxation bounds ([`crate::solve::bound`]), the fewest
//!   units whose capacities reach the need, from at most that many parents (a table
//!   over the parents);
//! - the same with one set of parents for every weight vector (when there are few
//!   sets of parents);
//! - whether one or two units reach every weight vector's need at once;
//! - at the node level, two linear relaxations by their Lagrangian duals: nodes taken
//!   in part by their capacities per weight vector, and nodes each taking one packing.

use smallvec::SmallVec;

use crate::solve::bound::{leaves, EXACT_LEAVES};
use crate::solve::lex::MAX_WIDTH;

use super::{SearchSpace, Shape};

/// A vector of the objective, as `compact`'s (which imports this file, so not from there).
type Vector = [u32; MAX_WIDTH];

/// Scratch of the bound, reused from one query to the next.
#[derive(Debug, Default)]
pub(crate) struct Levels {
    /// One parent's children's capacities, then the table of [`SearchSpace::fewest_from`].
    kids: Vec<u128>,
    table: Vec<u128>,
    /// [`SearchSpace::fractional_nodes`]'s capacities as shares of the need.
    share: Vec<f64>,
    /// [`SearchSpace::fewest_jointly`]'s units, where each parent's start, capacities.
    starts: Vec<u32>,
    pstart: Vec<u32>,
    sorted: Vec<u128>,
    /// [`SearchSpace::pattern_nodes`]'s patterns (`k` each) and where each node's start.
    pats: Vec<u32>,
    pat_at: Vec<u32>,
}

/// [`SearchSpace::fewest_jointly`] looks at most at this many sets of parents.
const JOINT_SETS: u64 = 4_000;

/// `n` choose `p` (saturating).
fn sets(n: usize, p: usize) -> u64 {
    (0..p).fold(1u64, |acc, i| {
        acc.saturating_mul((n - i) as u64) / (i as u64 + 1)
    })
}

impl SearchSpace {
    /// Whether no assignment of `counts` in the domain (the walk's root) has a vector
    /// below `best`, by [`SearchSpace::levels_lower`].
    pub(super) fn proves_least(
        &mut self,
        shape: &Shape,
        counts: &[u64],
        w: usize,
        best: &Vector,
    ) -> bool {
        let lower = self.levels_lower(shape, counts, w, best);
        lower[..w] >= best[..w]
    }

    /// A lower bound, level by level, on the vector of any assignment of `counts` in
    /// the domain whose vector is at most `best`, computed up to the first level where
    /// it differs from `best` (the later entries are 0). At level `l` it is the fewest
    /// units of that level whose capacities reach the counted members' need, by every
    /// weight vector of the bounds, the units taken from at most `best[l - 1]` units of
    /// the level above ([`SearchSpace::fewest_from`]): an assignment below `best` with
    /// the bound equal to `best` on the levels above uses exactly as many units there.
    /// Stronger than the walk's bound (largest unit first at the domain levels, and any
    /// nodes at the node level), and computed once, at the root.
    pub(super) fn levels_lower(
        &mut self,
        shape: &Shape,
        counts: &[u64],
        w: usize,
        best: &Vector,
    ) -> Vector {
        let mut lower: Vector = [0; MAX_WIDTH];
        let mut left: SmallVec<[u64; 4]> = SmallVec::new();
        left.extend(
            counts
                .iter()
                .zip(&self.compact.counted)
                .map(|(&r, &counted)| if counted { r } else { 0 }),
        );
        for l in 0..w {
            let parents = if l == 0 { 1 } else { best[l - 1] };
            let mut most = 0u32;
            for v in 0..self.weights.nw {
                let need = self.weights.dot(v, &left);
                if need > 0 {
                    most = most.max(self.fewest_from(l, w, v, need, parents, best[l]));
                }
            }
            if most < best[l] && parents > 1 {
                most = most.max(self.fewest_jointly(l, w, &left, parents, best[l]));
            }
            if l + 1 == w && most < best[l] {
                most = most.max(self.fractional_nodes(&left));
            }
            if l + 1 == w && most < best[l] {
                most = most.max(self.pattern_nodes(shape, &left));
            }
            // One or two units by every weight vector at once.
            while most > 0
                && most <= 2
                && most <= best[l]
                && !self.joint(l, w, most, parents, &left)
            {
                most += 1;
            }
            lower[l] = most;
            if most != best[l] {
                break;
            }
        }
        lower
    }

    /// [`SearchSpace::fewest_from`] with the parents chosen once for every weight
    /// vector: the least, over every set of `parents` units of the level above (when
    /// there are at most [`JOINT_SETS`] such sets, else 0), of the most over the weight
    /// vectors of the fewest units of level `l` in the set, largest first, that reach
    /// the need; `limit + 1` when more than `limit` are needed.
    fn fewest_jointly(
        &mut self,
        l: usize,
        w: usize,
        left: &[u64],
        parents: u32,
        limit: u32,
    ) -> u32 {
        let nw = self.weights.nw;
        let cx = &mut self.compact;
        let lv = &mut cx.levels;
        let inside = cx.inside;
        // The units of level l (their first positions), grouped by parent.
        lv.starts.clear();
        lv.pstart.clear();
        let mut t = 0usize;
        while t < inside {
            if lv.starts.is_empty()
                || cx.unit[t * w + l - 1]
                    != cx.unit[*lv.starts.last().unwrap() as usize * w + l - 1]
            {
                lv.pstart.push(lv.starts.len() as u32);
            }
            lv.starts.push(t as u32);
            t = cx.end[t * w + l] as usize;
        }
        let (nu, np) = (lv.starts.len(), lv.pstart.len());
        lv.pstart.push(nu as u32);
        let p = (parents as usize).min(np);
        if p == 0 || p > 3 || sets(np, p) > JOINT_SETS {
            return 0;
        }
        // `sorted[v * nu + i]`: each parent's units' capacities by v, largest first.
        lv.sorted.clear();
        for v in 0..nw {
            for &t in &lv.starts {
                let (t, e) = (t as usize, cx.end[t as usize * w + l] as usize);
                lv.sorted.push(self.suf[t * nw + v] - self.suf[e * nw + v]);
            }
            for q in 0..np {
                let (a, b) = (lv.pstart[q] as usize, lv.pstart[q + 1] as usize);
                lv.sorted[v * nu + a..v * nu + b].sort_unstable_by(|x, y| y.cmp(x));
            }
        }
        let (sorted, pstart) = (&lv.sorted, &lv.pstart);
        let need: SmallVec<[u128; 32]> = (0..nw).map(|v| self.weights.dot(v, left)).collect();
        // The fewest units of parents `set` reaching v's need, at most `cap`.
        let fewest_in_set = |set: &[usize], v: usize, cap: u32| -> u32 {
            let mut at: SmallVec<[usize; 3]> = set.iter().map(|&q| pstart[q] as usize).collect();
            let (mut got, mut n) = (0u128, 0u32);
            while got < need[v] {
                if n >= cap {
                    return cap;
                }
                let mut pick: Option<usize> = None;
                for (i, &q) in set.iter().enumerate() {
                    if at[i] < pstart[q + 1] as usize
                        && pick.is_none_or(|j| sorted[v * nu + at[i]] > sorted[v * nu + at[j]])
                    {
                        pick = Some(i);
                    }
                }
                let Some(i) = pick else { return cap };
                got += sorted[v * nu + at[i]];
                at[i] += 1;
                n += 1;
            }
            n
        };
        let mut least = limit.saturating_add(1);
        let mut set: SmallVec<[usize; 3]> = (0..p).collect();
        loop {
            let mut most = 0u32;
            for v in 0..nw {
                if need[v] > 0 {
                    most = most.max(fewest_in_set(&set, v, least));
                    if most >= least {
                        break;
                    }
                }
            }
            least = least.min(most);
            // The next set of p parents, in lexicographic order.
            let Some(i) = (0..p).rev().find(|&i| set[i] < np - p + i) else {
                break;
            };
            set[i] += 1;
            for j in i + 1..p {
                set[j] = set[j - 1] + 1;
            }
        }
        least
    }

    /// A lower bound on the nodes holding `left`'s counted members: the linear
    /// relaxation "fewest nodes, each taken in part, whose capacities by every weight
    /// vector at once reach the need", bounded by its Lagrangian dual: for multipliers
    /// `μ ≥ 0` over the weight vectors (each capacity as a share `a` of its need),
    /// `Σ μ − Σ_nodes max(0, μ·a − 1)` nodes are needed. The multipliers are improved
    /// by subgradient steps from each weight vector alone; any of them gives a valid
    /// bound (computed in floating point, with a margin far above its error).
    fn fractional_nodes(&mut self, left: &[u64]) -> u32 {
        let nw = self.weights.nw;
        let cx = &mut self.compact;
        let lv = &mut cx.levels;
        let inside = cx.inside;
        // `share[t * nw + v]`: node t's capacity by weight vector v over the need.
        lv.share.clear();
        let mut need: SmallVec<[f64; 32]> = SmallVec::new();
        need.extend((0..nw).map(|v| self.weights.dot(v, left) as f64));
        for t in 0..inside {
            for v in 0..nw {
                let cap = (self.suf[t * nw + v] - self.suf[(t + 1) * nw + v]) as f64;
                lv.share
                    .push(if need[v] > 0.0 { cap / need[v] } else { 0.0 });
            }
        }
        let share = &lv.share;
        let value = |mu: &[f64], grad: Option<&mut [f64]>| -> f64 {
            let mut lb: f64 = mu.iter().sum();
            let mut grad = grad;
            if let Some(g) = grad.as_deref_mut() {
                // A weight vector with no need (only roles not counted weigh in it) has
                // no constraint: its multiplier stays 0 (a positive one would add to
                // the bound with no node to pay for it).
                for (gv, n) in g.iter_mut().zip(&need) {
                    *gv = if *n > 0.0 { 1.0 } else { 0.0 };
                }
            }
            for t in 0..inside {
                let a = &share[t * nw..t * nw + nw];
                let dot: f64 = mu.iter().zip(a).map(|(m, x)| m * x).sum();
                if dot > 1.0 {
                    lb -= dot - 1.0;
                    if let Some(g) = grad.as_deref_mut() {
                        for (gv, x) in g.iter_mut().zip(a) {
                            *gv -= x;
                        }
                    }
                }
            }
            lb
        };
        let mut best = 0f64;
        let mut mu: SmallVec<[f64; 32]> = SmallVec::from_elem(0.0, nw);
        let mut grad: SmallVec<[f64; 32]> = SmallVec::from_elem(0.0, nw);
        for v0 in 0..nw {
            if need[v0] <= 0.0 {
                continue;
            }
            // From weight vector v0 alone: μ = 1 / its largest share.
            let top = (0..inside).map(|t| share[t * nw + v0]).fold(0.0, f64::max);
            if top <= 0.0 {
                continue;
            }
            mu.fill(0.0);
            mu[v0] = 1.0 / top;
            let mut step = mu[v0] / 4.0;
            for _ in 0..60 {
                let lb = value(&mu, Some(&mut grad));
                best = best.max(lb);
                let norm: f64 = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
                if norm < 1e-12 {
                    break;
                }
                for (m, g) in mu.iter_mut().zip(&grad) {
                    *m = (*m + step * g / norm).max(0.0);
                }
                step *= 0.93;
            }
            best = best.max(value(&mu, None));
        }
        whole(best)
    }

    /// A lower bound on the nodes holding `left`'s counted members, each node taking
    /// one of its packings (patterns): the Lagrangian dual of the linear relaxation of
    /// that choice. For multipliers `λ ≥ 0` over the roles, a node gives at most
    /// `max(1, max_x λ·x)` of `λ·left` for the one node it costs, so at least
    /// `λ·left − Σ_nodes max(0, max_x λ·x − 1)` nodes are needed. The patterns are
    /// enumerated per node (0 when a node has more than [`EXACT_LEAVES`]), the
    /// multipliers improved by subgradient steps from each role alone and from all of
    /// them; any multipliers give a valid bound (floating point, with a margin far
    /// above its error).
    fn pattern_nodes(&mut self, shape: &Shape, left: &[u64]) -> u32 {
        let (k, nr) = (shape.k, shape.nr);
        let inside = self.compact.inside;
        let lv = &mut self.compact.levels;
        lv.pats.clear();
        lv.pat_at.clear();
        for t in 0..inside {
            lv.pat_at.push(lv.pats.len() as u32);
            let fit = &self.sfit[t * k..t * k + k];
            if leaves(fit) > EXACT_LEAVES {
                return 0;
            }
            let free = &self.sfree[t * nr..t * nr + nr];
            let mut x: SmallVec<[u32; 8]> = SmallVec::from_elem(0, k);
            patterns(fit, free, &shape.q, nr, 0, &mut x, &mut lv.pats);
        }
        lv.pat_at.push(lv.pats.len() as u32);
        let (pats, at) = (&lv.pats, &lv.pat_at);
        let n: SmallVec<[f64; 8]> = left.iter().map(|&x| x as f64).collect();
        // The bound at `lam`, and its subgradient into `grad`.
        let value = |lam: &[f64], grad: &mut [f64]| -> f64 {
            let mut lb: f64 = lam.iter().zip(&n).map(|(a, b)| a * b).sum();
            grad.copy_from_slice(&n);
            for t in 0..inside {
                let (a, b) = (at[t] as usize, at[t + 1] as usize);
                let (mut top, mut arg) = (0f64, None);
                for p in (a..b).step_by(k.max(1)) {
                    let v: f64 = lam
                        .iter()
                        .zip(&pats[p..p + k])
                        .map(|(l, &x)| l * f64::from(x))
                        .sum();
                    if v > top {
                        (top, arg) = (v, Some(p));
                    }
                }
                if top > 1.0 {
                    lb -= top - 1.0;
                    if let Some(p) = arg {
                        for (g, &x) in grad.iter_mut().zip(&pats[p..p + k]) {
                            *g -= f64::from(x);
                        }
                    }
                }
            }
            lb
        };
        let mut best = 0f64;
        let mut lam: SmallVec<[f64; 8]> = SmallVec::from_elem(0.0, k);
        let mut grad: SmallVec<[f64; 8]> = SmallVec::from_elem(0.0, k);
        for start in 0..=k {
            // Role `start` alone (`k`: all roles), scaled so the fullest node gives 1.
            let on = |r: usize| n[r] > 0.0 && (start == k || r == start);
            let most = (0..inside)
                .flat_map(|t| (at[t] as usize..at[t + 1] as usize).step_by(k.max(1)))
                .map(|p| (0..k).filter(|&r| on(r)).map(|r| pats[p + r]).sum::<u32>())
                .max()
                .unwrap_or(0);
            if most == 0 || (start < k && !on(start)) {
                continue;
            }
            for (r, l) in lam.iter_mut().enumerate() {
                *l = if on(r) { 1.0 / f64::from(most) } else { 0.0 };
            }
            let mut step = 0.25 / f64::from(most);
            for _ in 0..60 {
                best = best.max(value(&lam, &mut grad));
                let norm: f64 = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
                if norm < 1e-12 {
                    break;
                }
                for (l, g) in lam.iter_mut().zip(&grad) {
                    *l = (*l + step * g / norm).max(0.0);
                }
                step *= 0.93;
            }
            best = best.max(value(&lam, &mut grad));
        }
        whole(best)
    }

    /// Whether some `j` (1 or 2) units of level `l`, from at most `parents` units of
    /// the level above, have capacities reaching `left`'s need by every weight vector
    /// at once.
    fn joint(&mut self, l: usize, w: usize, j: u32, parents: u32, left: &[u64]) -> bool {
        let nw = self.weights.nw;
        let cx = &mut self.compact;
        let lv = &mut cx.levels;
        let inside = cx.inside;
        lv.kids.clear();
        let mut t = 0usize;
        while t < inside {
            lv.kids.push(t as u128);
            t = cx.end[t * w + l] as usize;
        }
        let (units, suf, weights) = (&lv.kids, &self.suf, &self.weights);
        let cap = |u: u128, v: usize| {
            let t = u as usize;
            let e = cx.end[t * w + l] as usize;
            suf[t * nw + v] - suf[e * nw + v]
        };
        let parent = |u: u128| {
            if l == 0 {
                0
            } else {
                cx.unit[u as usize * w + l - 1]
            }
        };
        let fits = |a: u128, b: Option<u128>| {
            (0..nw).all(|v| {
                let got = cap(a, v) + b.map_or(0, |b| cap(b, v));
                got >= weights.dot(v, left)
            })
        };
        match j {
            1 => units.iter().any(|&a| fits(a, None)),
            _ => units.iter().enumerate().any(|(i, &a)| {
                units[i + 1..]
                    .iter()
                    .any(|&b| (parents >= 2 || parent(a) == parent(b)) && fits(a, Some(b)))
            }),
        }
    }

    /// The fewest units of level `l` whose capacities by weight vector `v` reach `need`,
    /// taken from at most `parents` units of level `l - 1` (from the domain when `l`
    /// is 0); `limit + 1` when more than `limit` are needed. A table over the parents:
    /// the most capacity `j` units from `p` parents hold, each parent giving its
    /// largest units.
    fn fewest_from(
        &mut self,
        l: usize,
        w: usize,
        v: usize,
        need: u128,
        parents: u32,
        limit: u32,
    ) -> u32 {
        const NONE: u128 = u128::MAX;
        let nw = self.weights.nw;
        let cx = &mut self.compact;
        let lv = &mut cx.levels;
        let inside = cx.inside;
        let (jn, pn) = (limit as usize, parents.min(inside as u32) as usize);
        let row = jn + 1;
        lv.table.clear();
        lv.table.resize((pn + 1) * row, NONE);
        for p in 0..=pn {
            lv.table[p * row] = 0;
        }
        let mut t = 0usize;
        while t < inside {
            // One parent: its units of level `l`, largest first, summed.
            let parent = |t: usize| if l == 0 { 0 } else { cx.unit[t * w + l - 1] };
            let this = parent(t);
            lv.kids.clear();
            while t < inside && parent(t) == this {
                let e = cx.end[t * w + l] as usize;
                lv.kids.push(self.suf[t * nw + v] - self.suf[e * nw + v]);
                t = e;
            }
            lv.kids.sort_unstable_by(|a, b| b.cmp(a));
            lv.kids.truncate(jn);
            for i in 1..lv.kids.len() {
                lv.kids[i] += lv.kids[i - 1];
            }
            for p in (1..=pn).rev() {
                for j in (1..=jn).rev() {
                    let mut most = lv.table[p * row + j];
                    for (i, &sum) in lv.kids.iter().enumerate().take(j) {
                        let before = lv.table[(p - 1) * row + j - i - 1];
                        if before != NONE {
                            most = if most == NONE {
                                before + sum
                            } else {
                                most.max(before + sum)
                            };
                        }
                    }
                    lv.table[p * row + j] = most;
                }
            }
        }
        (1..=jn)
            .find(|&j| {
                (0..=pn).any(|p| matches!(lv.table[p * row + j], x if x != NONE && x >= need))
            })
            .map_or(limit.saturating_add(1), |j| j as u32)
    }
}

/// The node's packings into `out` (`k` counts each): every count of each role but the
/// last, the last at its largest (as [`crate::solve::bound`]'s enumeration).
fn patterns(
    fit: &[u32],
    free: &[u64],
    q: &[u64],
    nr: usize,
    i: usize,
    x: &mut [u32],
    out: &mut Vec<u32>,
) {
    let k = fit.len();
    let mut hi = u64::from(fit[i]);
    for j in 0..nr {
        let used: u64 = (0..i).map(|r| u64::from(x[r]) * q[r * nr + j]).sum();
        if let Some(most) = free[j].saturating_sub(used).checked_div(q[i * nr + j]) {
            hi = hi.min(most);
        }
    }
    if i + 1 == k {
        x[i] = hi as u32;
        out.extend_from_slice(x);
        return;
    }
    for c in (0..=hi).rev() {
        x[i] = c as u32;
        patterns(fit, free, q, nr, i + 1, x, out);
    }
    x[i] = 0;
}

/// Whole nodes from a bound computed in floating point: its error is far below the
/// margin.
fn whole(bound: f64) -> u32 {
    let nodes = (bound - 1e-6).ceil();
    if nodes <= 0.0 {
        0
    } else {
        nodes.min(f64::from(u32::MAX - 1)) as u32
    }
}
