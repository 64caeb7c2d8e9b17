//! The exact search's second value order: each node's patterns, fullest first.
//!
//! The walks of [`super::search`] offer a node its maximal patterns: the first walk in
//! decreasing lexicographic order, the second (when the first ran out) in this one.
//! Which one comes first does not change what a walk can prove (every pattern is still
//! tried before the node gives up), but it decides how soon a placement is found.
//! Largest-count-first by role order fills a node with the first role's members and
//! leaves room nothing else fits in; on tight instances (nodes whose memory holds two
//! members of one role or one each of two others) that wastes the slack the whole
//! placement needs, and the walk spends its budget below a wrong first choice. So here
//! the patterns of a node are tried in decreasing order of the *priced load* they put
//! on it — `Σ_i x_i·price_i`, each role's price the sum over resources of its request
//! times the resource's tightness (members' demand over the nodes' supply) per unit of
//! supply — the bin-completion order of bin packing ("fill each bin as fully as
//! possible, in the scarce resource"), ties in decreasing lexicographic order so the
//! walk stays deterministic. Adding a member never lowers the priced load, so this is a
//! total order under which the search's dominance and symmetry rules stay complete.
//!
//! A [`Menu`] holds the sorted patterns of every node on the walk's current path, one
//! segment per depth, as a stack.

/// The patterns of the nodes on the walk's path (see the module docs).
#[derive(Debug, Default, Clone)]
pub(crate) struct Menu {
    /// Roles.
    k: usize,
    /// Patterns, `k` counts each, in the order they were offered.
    patterns: Vec<u32>,
    /// `(rank, pattern number)`: one depth's entries sorted, fullest first (the rank
    /// is `u64::MAX` minus the priced load's bits, which order like the load does for a
    /// load ≥ 0, so a plain sort of the pairs is the menu's order).
    keys: Vec<(u64, u32)>,
    /// Per depth on the path: its first key, its end, and the next key to offer.
    levels: Vec<Level>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Level {
    begin: usize,
    end: usize,
    next: usize,
}

impl Menu {
    /// Starts depth `t`'s menu of patterns over `k` roles (forgetting those of depths
    /// `t` and deeper; depth 0 starts a new walk).
    pub fn open(&mut self, t: usize, k: usize) {
        let begin = if t == 0 { 0 } else { self.levels[t - 1].end };
        self.k = k;
        self.levels.truncate(t);
        // Keys and patterns are numbered alike: depth `t`'s are `begin..`.
        self.keys.truncate(begin);
        self.patterns.truncate(begin * k);
        self.levels.push(Level {
            begin,
            end: begin,
            next: begin,
        });
    }

    /// Adds `pattern`, whose priced load is `score`, to the open depth.
    pub fn push(&mut self, pattern: &[u32], score: f64) {
        debug_assert_eq!(pattern.len(), self.k);
        let n = self.keys.len() as u32;
        self.patterns.extend_from_slice(pattern);
        self.keys.push((rank(score), n));
    }

    /// Closes the open depth: its patterns sorted, fullest first (then as offered).
    pub fn close(&mut self) {
        let Some(level) = self.levels.last_mut() else {
            return;
        };
        level.end = self.keys.len();
        if level.end - level.begin > 1 {
            self.keys[level.begin..].sort_unstable();
        }
    }

    /// The open depth `t`'s next pattern, or `None` when it has offered them all.
    pub fn next(&mut self, t: usize) -> Option<&[u32]> {
        let level = &mut self.levels[t];
        if level.next == level.end {
            return None;
        }
        let n = self.keys[level.next].1 as usize;
        level.next += 1;
        Some(&self.patterns[n * self.k..(n + 1) * self.k])
    }
}

/// A priced load's rank in the menu: smaller for fuller (the bits of a load ≥ 0 order
/// like the load; `-0.0` counts as `0.0`).
pub(crate) fn rank(score: f64) -> u64 {
    debug_assert!(score >= 0.0);
    u64::MAX - (score + 0.0).to_bits()
}

/// The price of one unit of each resource, `demand_j / supply_j²` (see the module docs),
/// where `demand_j = Σ_i counts[i] · q[i * nr + j]` and `supply_j` is the nodes' free
/// amount of resource `j` (`free[t * nr + j]`), into `unit`; and each role's price,
/// `Σ_j q[i * nr + j] · unit_j`, into `prices`.
pub(crate) fn prices(
    q: &[u64],
    counts: &[u64],
    free: &[u64],
    nr: usize,
    unit: &mut Vec<f64>,
    prices: &mut Vec<f64>,
) {
    let k = counts.len();
    unit.clear();
    for j in 0..nr {
        let supply: f64 = free.iter().skip(j).step_by(nr).map(|&f| f as f64).sum();
        let demand: f64 = (0..k)
            .map(|i| counts[i] as f64 * q[i * nr + j] as f64)
            .sum();
        unit.push(if supply > 0.0 {
            demand / (supply * supply)
        } else {
            0.0
        });
    }
    prices.clear();
    prices.extend((0..k).map(|i| (0..nr).map(|j| q[i * nr + j] as f64 * unit[j]).sum::<f64>()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_come_fullest_first_then_as_offered() {
        let mut m = Menu::default();
        m.open(0, 2);
        m.push(&[2, 0], 4.0);
        m.push(&[1, 1], 5.0);
        m.push(&[0, 2], 4.0);
        m.close();
        m.open(1, 2);
        m.push(&[1, 0], 1.0);
        m.push(&[0, 1], 3.0);
        m.close();
        assert_eq!(m.next(1), Some(&[0, 1][..]));
        // Depth 0 keeps its place while depth 1 is walked.
        assert_eq!(m.next(0), Some(&[1, 1][..]));
        assert_eq!(m.next(1), Some(&[1, 0][..]));
        assert_eq!(m.next(1), None);
        // Reopening depth 1 forgets its old patterns, not depth 0's.
        m.open(1, 2);
        m.push(&[0, 0], 0.0);
        m.close();
        assert_eq!(m.next(1), Some(&[0, 0][..]));
        assert_eq!(m.next(0), Some(&[2, 0][..]));
        assert_eq!(m.next(0), Some(&[0, 2][..]));
        assert_eq!(m.next(0), None);
    }

    #[test]
    fn the_scarce_resource_sets_the_price() {
        // Two roles; resource 0 is nearly all asked for, resource 1 barely.
        // Role 0: 4 of r0, 1 of r1; role 1: 2 of r0, 8 of r1.
        let q = [4, 1, 2, 8];
        let counts = [5, 5];
        // Two nodes: 16 + 16 of r0 (30 asked), 100 + 100 of r1 (45 asked).
        let free = [16, 100, 16, 100];
        let (mut unit, mut p) = (Vec::new(), Vec::new());
        prices(&q, &counts, &free, 2, &mut unit, &mut p);
        let (d0, s0, d1, s1) = (30.0, 32.0, 45.0, 200.0);
        let want0 = 4.0 * d0 / (s0 * s0) + d1 / (s1 * s1);
        let want1 = 2.0 * d0 / (s0 * s0) + 8.0 * d1 / (s1 * s1);
        assert!((p[0] - want0).abs() < 1e-12 && (p[1] - want1).abs() < 1e-12);
        assert!(
            (unit[0] - d0 / (s0 * s0)).abs() < 1e-12 && (unit[1] - d1 / (s1 * s1)).abs() < 1e-12
        );
        assert!(p[0] > p[1], "role 0 takes more of the scarce resource");
    }
}
