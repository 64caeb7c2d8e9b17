//! Exact search for multi-role gangs, used when greedy packing fails.
//!
//! Depth-first over the nodes in scope, choosing for each node a *pattern* (how many
//! members of each role it takes). Complete, because it only discards what cannot matter:
//! - patterns that are not maximal: if a node could take one more member of a role that
//!   still has members to place further on, moving that member here never hurts;
//! - patterns on a node identical to the previous one that are lexicographically larger
//!   than the previous node's (the swapped assignment is explored first);
//! - states whose remaining members exceed, per role, the sum of the remaining nodes'
//!   single-role fits, or, per resource, the remaining free amount.
//!
//! With slices, the first two rules do not hold (moving a member changes a domain's
//! count modulo the slice size), so every pattern is tried and a complete assignment is
//! kept only if every slice domain holds whole slices.
//!
//! Every pattern tried costs one unit of the solver's search budget; when the budget runs
//! out the answer is "undecided", never "does not fit".

use smallvec::SmallVec;

use crate::compile::Compiled;
use crate::inventory::Inventory;

use super::rollup::{node_fit, Scope};
use super::Scratch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    Found,
    Infeasible,
    Exhausted,
}

/// Looks for an assignment of exactly `counts[i]` members of each role, constrained roles
/// inside `scope`, unconstrained ones anywhere. On success the members are in `s.assign`.
pub(crate) fn search(
    inv: &Inventory,
    c: &Compiled,
    counts: &[u64],
    scope: Scope,
    budget: &mut u64,
    s: &mut Scratch,
) -> Search {
    let k = c.roles.len();
    let mut res: SmallVec<[u32; 4]> = SmallVec::new();
    for r in &c.roles {
        for &(id, _) in &r.req {
            if !res.contains(&id) {
                res.push(id);
            }
        }
    }
    res.sort_unstable();
    let nr = res.len();
    // q[i * nr + j]: request of role i for resource res[j].
    let mut q: SmallVec<[u64; 16]> = SmallVec::from_elem(0, k * nr);
    for (i, r) in c.roles.iter().enumerate() {
        for &(id, amount) in &r.req {
            let j = res.iter().position(|&x| x == id).unwrap_or(0);
            q[i * nr + j] = amount;
        }
    }

    // Candidate nodes: in scope for any role, outside it for unconstrained roles only.
    let (start, end) = scope.range(inv);
    s.search_nodes.clear();
    s.search_fit.clear();
    for ix in 0..inv.len() as u32 {
        let inside = ix >= start && ix < end;
        let mut any = false;
        let base = s.search_fit.len();
        for (i, r) in c.roles.iter().enumerate() {
            let in_slice = !r.constrained || inv.leaf_depth(ix) >= c.slice_min_leaf;
            let f = if (inside || !r.constrained) && counts[i] > 0 && in_slice {
                node_fit(inv, r, ix as usize, None)
            } else {
                0
            };
            any |= f > 0;
            s.search_fit.push(f);
        }
        if any {
            s.search_nodes.push(ix);
        } else {
            s.search_fit.truncate(base);
        }
    }
    let m = s.search_nodes.len();
    // Order: most capable first, identical nodes adjacent.
    s.search_order.clear();
    s.search_order.extend(0..m as u32);
    {
        let fit = &s.search_fit;
        let nodes = &s.search_nodes;
        let free = |a: u32, j: usize| inv.free[res[j] as usize][nodes[a as usize] as usize];
        s.search_order.sort_unstable_by(|&a, &b| {
            let fa = &fit[a as usize * k..a as usize * k + k];
            let fb = &fit[b as usize * k..b as usize * k + k];
            fb.cmp(fa)
                .then_with(|| {
                    (0..nr)
                        .map(|j| free(b, j).cmp(&free(a, j)))
                        .find(|o| o.is_ne())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then(nodes[a as usize].cmp(&nodes[b as usize]))
        });
    }
    // Dense arrays in search order, and suffix bounds.
    s.sfit.clear();
    s.sfree.clear();
    for &o in &s.search_order {
        let o = o as usize;
        s.sfit.extend_from_slice(&s.search_fit[o * k..o * k + k]);
        let ix = s.search_nodes[o] as usize;
        s.sfree
            .extend(res.iter().map(|&r| inv.free[r as usize][ix]));
    }
    s.suf_fit.clear();
    s.suf_fit.resize((m + 1) * k, 0);
    s.suf_free.clear();
    s.suf_free.resize((m + 1) * nr, 0);
    for t in (0..m).rev() {
        for i in 0..k {
            s.suf_fit[t * k + i] = s.suf_fit[(t + 1) * k + i] + u64::from(s.sfit[t * k + i]);
        }
        for j in 0..nr {
            s.suf_free[t * nr + j] = s.suf_free[(t + 1) * nr + j] + u128::from(s.sfree[t * nr + j]);
        }
    }

    let mut rem: SmallVec<[u64; 4]> = counts.iter().copied().collect();
    if rem.iter().all(|&r| r == 0) {
        return Search::Found;
    }
    if !bounds_ok(&rem, 0, k, nr, &q, s) {
        return Search::Infeasible;
    }
    s.pattern.clear();
    s.pattern.resize(m * k, 0);
    let mut t = 0usize;
    let mut fresh = true;
    let prune = !c.has_slices();
    loop {
        let ok = next_pattern(t, fresh, prune, &rem, k, nr, &q, budget, s);
        match ok {
            Step::Exhausted => return Search::Exhausted,
            Step::None => {
                if t == 0 {
                    return Search::Infeasible;
                }
                t -= 1;
                for i in 0..k {
                    rem[i] += u64::from(s.pattern[t * k + i]);
                }
                fresh = false;
                continue;
            }
            Step::Some => {}
        }
        for i in 0..k {
            rem[i] -= u64::from(s.pattern[t * k + i]);
        }
        if rem.iter().all(|&r| r == 0) && (prune || whole_slices(inv, c, t, k, s)) {
            s.assign.clear();
            for tt in 0..=t {
                let ix = s.search_nodes[s.search_order[tt] as usize];
                for i in 0..k {
                    let x = s.pattern[tt * k + i];
                    if x > 0 {
                        s.assign.push((i as u16, ix, x));
                    }
                }
            }
            return Search::Found;
        }
        if rem.iter().any(|&r| r > 0) && t + 1 < m && bounds_ok(&rem, t + 1, k, nr, &q, s) {
            t += 1;
            fresh = true;
        } else {
            for i in 0..k {
                rem[i] += u64::from(s.pattern[t * k + i]);
            }
            fresh = false;
        }
    }
}

fn bounds_ok(rem: &[u64], t: usize, k: usize, nr: usize, q: &[u64], s: &Scratch) -> bool {
    if rem
        .iter()
        .zip(&s.suf_fit[t * k..t * k + k])
        .any(|(r, f)| r > f)
    {
        return false;
    }
    for j in 0..nr {
        let need: u128 = (0..k)
            .map(|i| u128::from(rem[i]) * u128::from(q[i * nr + j]))
            .sum();
        if need > s.suf_free[t * nr + j] {
            return false;
        }
    }
    true
}

enum Step {
    Some,
    None,
    Exhausted,
}

/// Writes node `t`'s next pattern (the first when `fresh`) in decreasing lexicographic
/// order, skipping non-maximal ones and, after an identical node, ones above its pattern.
#[allow(clippy::too_many_arguments)]
fn next_pattern(
    t: usize,
    fresh: bool,
    prune: bool,
    rem: &[u64],
    k: usize,
    nr: usize,
    q: &[u64],
    budget: &mut u64,
    s: &mut Scratch,
) -> Step {
    let identical = prune
        && t > 0
        && s.sfit[t * k..t * k + k] == s.sfit[(t - 1) * k..t * k]
        && s.sfree[t * nr..t * nr + nr] == s.sfree[(t - 1) * nr..t * nr];
    let mut first = fresh;
    loop {
        if first {
            fill_from(t, 0, rem, k, nr, q, s);
            first = false;
        } else {
            // Decrement the last role that has members, refilling the later ones. When
            // pruning, the final role is always at its maximum, so it is never the one.
            let x = &s.pattern[t * k..t * k + k];
            let last = if prune { k.saturating_sub(1) } else { k };
            let Some(j) = (0..last).rev().find(|&j| x[j] > 0) else {
                return Step::None;
            };
            s.pattern[t * k + j] -= 1;
            fill_from(t, j + 1, rem, k, nr, q, s);
        }
        if *budget == 0 {
            return Step::Exhausted;
        }
        *budget -= 1;
        let x = &s.pattern[t * k..t * k + k];
        if identical && x > &s.pattern[(t - 1) * k..t * k] {
            continue;
        }
        // Non-maximal patterns (taking nothing included, when something fits) are
        // dominated: see the module docs.
        if prune && !maximal(t, rem, k, nr, q, s) {
            continue;
        }
        return Step::Some;
    }
}

/// Sets roles `from..k` of node `t`'s pattern to their largest values given the rest.
fn fill_from(t: usize, from: usize, rem: &[u64], k: usize, nr: usize, q: &[u64], s: &mut Scratch) {
    for i in from..k {
        let mut hi = u64::from(s.sfit[t * k + i]).min(rem[i]);
        for j in 0..nr {
            let qi = q[i * nr + j];
            if qi == 0 {
                continue;
            }
            let load: u64 = (0..i)
                .map(|p| u64::from(s.pattern[t * k + p]) * q[p * nr + j])
                .sum();
            let left = s.sfree[t * nr + j].saturating_sub(load);
            hi = hi.min(left / qi);
        }
        s.pattern[t * k + i] = hi as u32;
    }
}

/// Whether no role could take one more member on node `t` under its pattern.
fn maximal(t: usize, rem: &[u64], k: usize, nr: usize, q: &[u64], s: &Scratch) -> bool {
    let x = &s.pattern[t * k..t * k + k];
    for i in 0..k {
        if u64::from(x[i]) >= rem[i].min(u64::from(s.sfit[t * k + i])) {
            continue;
        }
        let room = (0..nr).all(|j| {
            let load: u128 = (0..k)
                .map(|p| u128::from(x[p]) * u128::from(q[p * nr + j]))
                .sum();
            load + u128::from(q[i * nr + j]) <= u128::from(s.sfree[t * nr + j])
        });
        if room {
            return false;
        }
    }
    true
}

/// Whether the assignment of nodes `0..=t` gives every slice domain whole slices of
/// every constrained role.
fn whole_slices(inv: &Inventory, c: &Compiled, t: usize, k: usize, s: &Scratch) -> bool {
    let l = inv.label_depth();
    let mut per: SmallVec<[(u32, u64); 16]> = SmallVec::new();
    for &(d, size) in &c.slices {
        for (i, role) in c.roles.iter().enumerate() {
            if !role.constrained {
                continue;
            }
            per.clear();
            for tt in 0..=t {
                let x = u64::from(s.pattern[tt * k + i]);
                if x == 0 {
                    continue;
                }
                let ix = s.search_nodes[s.search_order[tt] as usize];
                let dom = if d > l {
                    Some(ix)
                } else {
                    inv.domain_of(ix, d)
                };
                let Some(dom) = dom else { return false };
                match per.iter_mut().find(|p| p.0 == dom) {
                    Some(p) => p.1 += x,
                    None => per.push((dom, x)),
                }
            }
            if per.iter().any(|p| p.1 % u64::from(size) != 0) {
                return false;
            }
        }
    }
    true
}
