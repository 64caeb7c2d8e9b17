//! Best-fit decreasing over the exact search's nodes: a quick try before its walk.
//!
//! Greedy packing ([`super::multi`]) places role after role, each spread for
//! compactness; on tight instances it fails where a packing exists, and the walk of
//! [`super::search`] may then spend its whole share looking for one. Bin packing's
//! classic heuristic finds many of those at once: members one by one, the largest
//! first (by the priced size of [`super::menu`]: requests times the resources'
//! tightness), each on the node it leaves with the least priced room. What it finds is
//! a placement like any other (within every node's free amounts and fits); when it
//! finds none the walk runs as before, so the search stays complete.

use smallvec::SmallVec;

use super::verdict::Budget;

/// The nodes of one search, in its order, and the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nodes<'a> {
    /// `[t * k + i]`: at most this many members of role `i` on node `t`.
    pub fit: &'a [u32],
    /// `[t * nr + j]`: node `t`'s free amount of resource `j`.
    pub free: &'a [u64],
    /// `[i * nr + j]`: role `i`'s request of resource `j`.
    pub q: &'a [u64],
    /// Roles.
    pub k: usize,
    /// Resources.
    pub nr: usize,
}

/// Best-fit decreasing (see the module docs) of `counts[i]` members of each role, with
/// resources priced by `unit` and roles by `prices`: `Some(true)`, with node `t`'s
/// pattern in `pattern[t * k + i]`, when every member found a node, `Some(false)` when
/// one did not (`load` is scratch), `None` when the budget ran out. Each member costs
/// one unit per node it looks at.
pub(crate) fn best_fit(
    nodes: Nodes<'_>,
    counts: &[u64],
    unit: &[f64],
    prices: &[f64],
    pattern: &mut Vec<u32>,
    load: &mut Vec<u64>,
    budget: &mut Budget,
) -> Option<bool> {
    let Nodes {
        fit,
        free,
        q,
        k,
        nr,
    } = nodes;
    let m = fit.len().checked_div(k).unwrap_or(0);
    pattern.clear();
    pattern.resize(m * k, 0);
    load.clear();
    load.resize(m * nr, 0);
    let mut roles: SmallVec<[usize; 8]> = (0..k).collect();
    roles.sort_by(|&a, &b| prices[b].total_cmp(&prices[a]).then(a.cmp(&b)));
    for &i in &roles {
        let qi = &q[i * nr..(i + 1) * nr];
        for _ in 0..counts[i] {
            if !budget.spend_n(m as u64) {
                return None;
            }
            let mut best: Option<(f64, usize)> = None;
            for t in 0..m {
                if pattern[t * k + i] >= fit[t * k + i] {
                    continue;
                }
                let (f, l) = (&free[t * nr..(t + 1) * nr], &load[t * nr..(t + 1) * nr]);
                if (0..nr).any(|j| l[j] + qi[j] > f[j]) {
                    continue;
                }
                let room: f64 = (0..nr)
                    .map(|j| (f[j] - l[j] - qi[j]) as f64 * unit[j])
                    .sum();
                if best.is_none_or(|(r, _)| room < r) {
                    best = Some((room, t));
                }
            }
            let Some((_, t)) = best else {
                return Some(false);
            };
            pattern[t * k + i] += 1;
            for (l, &qj) in load[t * nr..(t + 1) * nr].iter_mut().zip(qi) {
                *l += qj;
            }
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_first_each_where_it_leaves_least_room() {
        // One resource; nodes of 10 and 7; members of 6 (a), 4 and 4 (b), 3 (c). Best
        // fit puts the 6 on the 7 (room 1), both 4s on the 10 (room 2), and the 3 fits
        // nowhere, though 6 + 4 | 4 + 3 packs: a heuristic, which the walk follows.
        let q = [6, 4, 3];
        let nodes = Nodes {
            fit: &[1, 2, 1, 1, 1, 1],
            free: &[10, 7],
            q: &q,
            k: 3,
            nr: 1,
        };
        let (unit, prices) = ([1.0], [6.0, 4.0, 3.0]);
        let mut pattern = Vec::new();
        let mut run = |counts: &[u64], budget: &mut Budget| {
            let mut load = Vec::new();
            best_fit(
                nodes,
                counts,
                &unit,
                &prices,
                &mut pattern,
                &mut load,
                budget,
            )
        };
        let mut budget = Budget::new(100);
        assert_eq!(run(&[1, 2, 1], &mut budget), Some(false));
        assert_eq!(budget.left(), 100 - 2 * 4, "two nodes looked at per member");
        // With too little work allowed it does not answer.
        assert_eq!(run(&[1, 2, 1], &mut Budget::new(7)), None);
        // Without the 3 it packs: the 6 on the 7, both 4s on the 10.
        assert_eq!(run(&[1, 2, 0], &mut Budget::new(100)), Some(true));
        assert_eq!(pattern, [0, 2, 0, 1, 0, 0]);
    }

    #[test]
    fn fits_and_every_resource_are_respected() {
        // Two resources: role a (2, 1) at most once per node, role b (1, 3).
        let q = [2, 1, 1, 3];
        let nodes = Nodes {
            fit: &[1, 2, 1, 2],
            free: &[4, 4, 4, 4],
            q: &q,
            k: 2,
            nr: 2,
        };
        let (unit, prices) = ([0.5, 0.5], [1.5, 2.0]);
        let (mut pattern, mut load) = (Vec::new(), Vec::new());
        // b first (priced higher): one per node (the second b does not fit beside the
        // first); then a beside each b (3 + 4 of 4 + 4), one per node.
        let mut budget = Budget::new(100);
        let mut run = |counts: &[u64], pattern: &mut Vec<u32>| {
            best_fit(
                nodes,
                counts,
                &unit,
                &prices,
                pattern,
                &mut load,
                &mut budget,
            )
        };
        assert_eq!(run(&[2, 2], &mut pattern), Some(true));
        assert_eq!(pattern, [1, 1, 1, 1]);
        // A third a finds no node (its fit), a third b no room.
        assert_eq!(run(&[3, 0], &mut pattern), Some(false));
        assert_eq!(run(&[0, 3], &mut pattern), Some(false));
        assert_eq!(run(&[0, 2], &mut pattern), Some(true));
        assert_eq!(pattern, [0, 1, 0, 1]);
        assert_eq!(run(&[2, 0], &mut pattern), Some(true));
        assert_eq!(pattern, [1, 0, 1, 0], "at most one a per node");
    }
}
