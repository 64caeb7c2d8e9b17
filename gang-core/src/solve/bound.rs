//! Relaxation bounds for packing several roles onto nodes: a proof of "does not fit"
//! before (and during) the exact search.
//!
//! For a weight vector `w ≥ 0` over the roles, every assignment of `rem` members puts
//! `w·x` on each node, where `x` is the node's pattern, so it needs
//! `Σ_nodes max_x w·x ≥ w·rem`. The per-node maximum is over the node's own packings
//! (its free resources, its fit per role, at most `rem` of each role), so the rounding
//! on each node counts: three free GPUs hold one two-GPU member, not one and a half,
//! which the per-resource totals cannot see. The weights are
//! - every non-empty subset of the roles (0/1 weights; all of them up to
//!   [`SUBSET_ROLES`] roles, else each role alone and all together): "how many members
//!   of these roles fit on the node at once";
//! - per resource requested by two or more roles, the roles' requests of it: "how much
//!   of it the node can actually hand out to members".
//!
//! The per-node maximum is exact by enumerating the node's maximal patterns when there
//! are at most [`EXACT_LEAVES`] of them; otherwise it is bounded from above by the
//! linear relaxation of each resource alone (the fractional knapsack, rounded down),
//! which is still a valid bound. Both are computed once per distinct node state.

use smallvec::SmallVec;

/// Up to this many roles, every subset of the roles is a weight vector.
pub(crate) const SUBSET_ROLES: usize = 4;

/// At most this many patterns are enumerated for one node state's exact maxima.
pub(crate) const EXACT_LEAVES: u64 = 256;

/// The weight vectors of one search: `[w * k + i]`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Weights {
    /// Roles.
    pub k: usize,
    /// Weight vectors.
    pub nw: usize,
    w: Vec<u64>,
}

impl Weights {
    /// The weights for `k` roles whose requests are `q[i * nr + j]` (see the module
    /// docs); `subsets: false` keeps only all roles together and the resource weights,
    /// a cheaper family for a first look.
    pub fn build(&mut self, k: usize, nr: usize, q: &[u64], subsets: bool) {
        self.build_for(k, nr, q, subsets, u32::MAX);
    }

    /// [`Weights::build`] for the roles in `active` (a bit per role; the subsets of the
    /// other roles add nothing when they have no members to place).
    pub fn build_for(&mut self, k: usize, nr: usize, q: &[u64], subsets: bool, active: u32) {
        self.k = k;
        self.w.clear();
        if subsets && k <= SUBSET_ROLES {
            for mask in (1u32..(1 << k)).filter(|&m| m & !active == 0 || active == 0) {
                self.w.extend((0..k).map(|i| u64::from(mask >> i & 1)));
            }
        } else {
            if subsets {
                for i in 0..k {
                    self.w.extend((0..k).map(|p| u64::from(p == i)));
                }
            }
            if !subsets || k > 1 {
                self.w.extend(std::iter::repeat_n(1, k));
            }
        }
        for j in 0..nr {
            if (0..k).filter(|&i| q[i * nr + j] > 0).count() >= 2 {
                self.w.extend((0..k).map(|i| q[i * nr + j]));
            }
        }
        self.nw = self.w.len() / k.max(1);
    }

    /// Weight vector `w`.
    #[inline]
    pub fn get(&self, w: usize) -> &[u64] {
        &self.w[w * self.k..(w + 1) * self.k]
    }

    /// `w·rem` for weight vector `w`.
    #[inline]
    pub fn dot(&self, w: usize, rem: &[u64]) -> u128 {
        self.get(w)
            .iter()
            .zip(rem)
            .map(|(&a, &b)| u128::from(a) * u128::from(b))
            .sum()
    }
}

/// One node state: its fit per role (already at most the members to place), its free
/// amount of each resource, and the roles' requests `q[i * nr + j]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeState<'a> {
    pub fit: &'a [u32],
    pub free: &'a [u64],
    pub q: &'a [u64],
    pub nr: usize,
}

/// The node's maximum of `w·x` over its packings `x`, for every weight vector, into
/// `out` (one per vector): exact when `exact` and the node has at most
/// [`EXACT_LEAVES`] patterns, else the per-resource linear relaxation. Returns the work
/// done (patterns enumerated, at least 1).
pub(crate) fn node_max(
    node: NodeState<'_>,
    weights: &Weights,
    exact: bool,
    out: &mut [u128],
) -> u64 {
    let k = weights.k;
    debug_assert_eq!(out.len(), weights.nw);
    if exact && leaves(node.fit) <= EXACT_LEAVES {
        out.fill(0);
        let mut x: SmallVec<[u32; 8]> = SmallVec::from_elem(0, k);
        let mut load: SmallVec<[u64; 8]> = SmallVec::from_elem(0, node.nr);
        let mut seen = 0u64;
        enumerate(node, weights, 0, &mut x, &mut load, out, &mut seen);
        return seen.max(1);
    }
    for (w, o) in out.iter_mut().enumerate() {
        *o = relaxed(node, weights.get(w));
    }
    weights.nw as u64 + 1
}

/// Patterns [`enumerate`] visits: every count of each role but the last, whose count is
/// then its largest.
pub(crate) fn leaves(fit: &[u32]) -> u64 {
    let Some((_, head)) = fit.split_last() else {
        return 1;
    };
    head.iter()
        .try_fold(1u64, |acc, &f| acc.checked_mul(u64::from(f) + 1))
        .unwrap_or(u64::MAX)
}

/// Depth-first over roles `i..`, the loads of the earlier ones in `load`.
fn enumerate(
    node: NodeState<'_>,
    weights: &Weights,
    i: usize,
    x: &mut [u32],
    load: &mut [u64],
    out: &mut [u128],
    seen: &mut u64,
) {
    let (k, nr) = (weights.k, node.nr);
    // The most members of role i that fit next to the earlier roles' load.
    let mut hi = u64::from(node.fit[i]);
    for (j, &used) in load.iter().enumerate() {
        if let Some(most) = node.free[j]
            .saturating_sub(used)
            .checked_div(node.q[i * nr + j])
        {
            hi = hi.min(most);
        }
    }
    if i + 1 == k {
        // Weights are non-negative: the last role at its largest count dominates.
        x[i] = hi as u32;
        *seen += 1;
        for (w, o) in out.iter_mut().enumerate() {
            let v: u128 = weights
                .get(w)
                .iter()
                .zip(x.iter())
                .map(|(&a, &b)| u128::from(a) * u128::from(b))
                .sum();
            *o = (*o).max(v);
        }
        return;
    }
    for c in (0..=hi).rev() {
        x[i] = c as u32;
        let q = &node.q[i * nr..(i + 1) * nr];
        for (l, &qj) in load.iter_mut().zip(q) {
            *l += c * qj;
        }
        enumerate(node, weights, i + 1, x, load, out, seen);
        for (l, &qj) in load.iter_mut().zip(q) {
            *l -= c * qj;
        }
    }
}

/// An upper bound on the node's maximum of `w·x`: the smallest, over its resources, of
/// the fractional knapsack of that resource alone (rounded down), and of every role at
/// its fit.
fn relaxed(node: NodeState<'_>, w: &[u64]) -> u128 {
    let k = w.len();
    let nr = node.nr;
    let all: u128 = (0..k)
        .map(|i| u128::from(w[i]) * u128::from(node.fit[i]))
        .sum();
    let mut best = all;
    let mut order: SmallVec<[usize; 8]> = SmallVec::new();
    for j in 0..nr {
        // Roles that use resource j, by weight per unit of it, highest first.
        order.clear();
        order.extend((0..k).filter(|&i| w[i] > 0 && node.fit[i] > 0 && node.q[i * nr + j] > 0));
        if order.is_empty() {
            continue;
        }
        order.sort_unstable_by(|&a, &b| {
            let (qa, qb) = (node.q[a * nr + j], node.q[b * nr + j]);
            (u128::from(w[b]) * u128::from(qa)).cmp(&(u128::from(w[a]) * u128::from(qb)))
        });
        let mut value: u128 = (0..k)
            .filter(|&i| node.q[i * nr + j] == 0)
            .map(|i| u128::from(w[i]) * u128::from(node.fit[i]))
            .sum();
        let mut cap = node.free[j];
        for &i in &order {
            let q = node.q[i * nr + j];
            let t = (cap / q).min(u64::from(node.fit[i]));
            value += u128::from(w[i]) * u128::from(t);
            cap -= t * q;
            if t < u64::from(node.fit[i]) {
                // The fractional rest of this role fills the resource.
                value += u128::from(w[i]) * u128::from(cap) / u128::from(q);
                break;
            }
        }
        best = best.min(value);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact maximum of `w·x` by brute force over every pattern.
    fn brute(fit: &[u32], free: &[u64], q: &[u64], w: &[u64]) -> u128 {
        let (k, nr) = (fit.len(), free.len());
        let mut best = 0u128;
        let mut x = vec![0u32; k];
        loop {
            let ok = (0..nr).all(|j| {
                let load: u128 = (0..k)
                    .map(|i| u128::from(x[i]) * u128::from(q[i * nr + j]))
                    .sum();
                load <= u128::from(free[j])
            });
            if ok {
                let v: u128 = (0..k).map(|i| u128::from(w[i]) * u128::from(x[i])).sum();
                best = best.max(v);
            }
            let Some(i) = (0..k).find(|&i| x[i] < fit[i]) else {
                return best;
            };
            x[i] += 1;
            x[..i].fill(0);
        }
    }

    #[test]
    fn weights_are_subsets_then_shared_resources() {
        let mut w = Weights::default();
        // Two roles both asking for resource 0, only role 1 for resource 1.
        w.build(2, 2, &[2, 0, 3, 5], true);
        let all: Vec<&[u64]> = (0..w.nw).map(|i| w.get(i)).collect();
        assert_eq!(all, [&[1, 0][..], &[0, 1], &[1, 1], &[2, 3]]);
        w.build(2, 2, &[2, 0, 3, 5], false);
        let all: Vec<&[u64]> = (0..w.nw).map(|i| w.get(i)).collect();
        assert_eq!(all, [&[1, 1][..], &[2, 3]]);
        // Five roles: each alone and all together.
        w.build(5, 1, &[1, 1, 1, 1, 1], true);
        assert_eq!(w.nw, 5 + 1 + 1);
        assert_eq!(w.dot(5, &[1, 2, 3, 4, 5]), 15);
    }

    #[test]
    fn three_gpus_hold_one_two_gpu_member() {
        let mut w = Weights::default();
        let q = [2, 2];
        w.build(2, 1, &q, true);
        let node = NodeState {
            fit: &[1, 1],
            free: &[3],
            q: &q,
            nr: 1,
        };
        let mut out = vec![0; w.nw];
        node_max(node, &w, true, &mut out);
        // a alone 1, b alone 1, both 1, GPUs handed out 2 (of 3).
        assert_eq!(out, [1, 1, 1, 2]);
        node_max(node, &w, false, &mut out);
        assert_eq!(out, [1, 1, 1, 3], "the relaxation rounds only at the end");
    }

    #[test]
    fn maxima_match_brute_force_and_the_relaxation_bounds_them() {
        let mut next = crate::solve::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut w = Weights::default();
        for _ in 0..3000 {
            let k = 1 + next(4) as usize;
            let nr = 1 + next(3) as usize;
            let q: Vec<u64> = (0..k * nr)
                .map(|_| if next(3) == 0 { 0 } else { 1 + next(6) })
                .collect();
            let free: Vec<u64> = (0..nr).map(|_| next(20)).collect();
            let fit: Vec<u32> = (0..k)
                .map(|i| {
                    // A fit no larger than the resources allow (and maybe a cap).
                    let by_res = (0..nr)
                        .filter(|&j| q[i * nr + j] > 0)
                        .map(|j| free[j] / q[i * nr + j])
                        .min()
                        .unwrap_or(7);
                    by_res.min(next(8)) as u32
                })
                .collect();
            w.build(k, nr, &q, true);
            let node = NodeState {
                fit: &fit,
                free: &free,
                q: &q,
                nr,
            };
            let (mut exact, mut relaxed) = (vec![0; w.nw], vec![0; w.nw]);
            node_max(node, &w, true, &mut exact);
            node_max(node, &w, false, &mut relaxed);
            for i in 0..w.nw {
                let want = brute(&fit, &free, &q, w.get(i));
                if leaves(&fit) <= EXACT_LEAVES {
                    assert_eq!(exact[i], want, "{fit:?} {free:?} {q:?} {:?}", w.get(i));
                }
                assert!(relaxed[i] >= want, "{fit:?} {free:?} {q:?} {:?}", w.get(i));
            }
        }
    }
}
