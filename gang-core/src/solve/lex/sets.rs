//! The exact vector of a domain whose children hold only nodes (width 2), by a branch
//! and bound over sets of its children (issue 23), when the node bound's witness
//! ([`Objective::nodes_exact`]) falls short and only the knapsack would tell otherwise.
//!
//! The vector is `[r, k]`: `r` the fewest children whose capacities reach `x`, `k` the
//! least nodes over the sets of `r` children, a set's least being the largest-fits-first
//! fill of its nodes, read off the children's fit profiles (`k` nodes of a set hold
//! `sum_t min(k, C(t))` members, `C(t)` its nodes with a fit of at least `t`). The
//! search takes children with equal profiles as one group (choosing how many of each),
//! and drops a partial set when even its best completion (the `r - m` largest counts
//! among the groups not yet decided, threshold by threshold) cannot beat the best set
//! so far. Beyond [`BUDGET`] partial sets it gives up: the knapsack
//! decides, as before.

use super::*;

/// The search gives up after this many partial sets.
const BUDGET: u32 = 1024;

/// At most this many groups of children with equal profiles (kept on the stack).
const KIDS: usize = 64;

/// At most this many children in a set.
const MOST: usize = 16;

/// Thresholds' counts of one set or group, `[t - 1]` for a fit of at least `t`.
type Counts = [u64; BUCKETS];

/// The branch and bound's state: groups of children with equal rows (rows in
/// `lx.witness`, `v` counts each), the best completion of `j` more children from
/// groups `g..` per threshold, and the best `k` so far.
struct Search<'s> {
    rows: &'s [u32],
    mult: &'s [u32],
    /// Children in groups `g..`.
    after: &'s [u32],
    tops: &'s [u64],
    stride: usize,
    v: usize,
    x: u64,
    best: u64,
    budget: u32,
}

impl Objective<'_> {
    /// [`Objective::nodes_exact`], else [`Objective::sets_exact`].
    pub(super) fn exact_by_profiles(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        x: u64,
    ) -> Option<[u32; 2]> {
        self.nodes_exact(lx, d, di, x)
            .or_else(|| self.sets_exact(lx, d, di, x))
    }

    /// The exact vector `[r, k]` of a placement of `x` members in domain `di` at depth
    /// `d` whose children hold only nodes (width 2), by the search over sets of `r`
    /// children (the module's doc). `None` when it does not apply (slices below `d`, no
    /// profiles, fits too large for them, more than 64 groups or 16 children in a set) or gives
    /// up.
    pub(super) fn sets_exact(&self, lx: &mut Lex, d: Depth, di: u32, x: u64) -> Option<[u32; 2]> {
        #[cfg(test)]
        if lx.no_sets {
            return None;
        }
        if self.width(d) != 2
            || !self.caps.profiled
            || !self.pool_allowed(d)
            || self.grain.at(d.child()) != 1
        {
            return None;
        }
        let c = d.child();
        if self.inv.is_node_level(c) {
            return None;
        }
        let r = self.fewest_children(lx, d, di, x) as usize;
        if r == 0 || r > MOST {
            return None;
        }
        let v = self.caps.peaks[d.ix()][di as usize * 2 + 1] as usize;
        if v == 0 || v >= BUCKETS {
            return None;
        }
        // Rows of the children that hold a member, equal rows as one group.
        let base = lx.witness.len();
        let mut mult = [0u32; KIDS];
        let mut g = 0usize;
        let dom = *self.inv.domain(d, di);
        let (caps, profiles) = (&self.caps.caps[c.ix()], &self.caps.profiles[c.ix()]);
        let mut row = [0u32; BUCKETS];
        let mut ok = true;
        let mut add = |lx: &mut Lex, row: &[u32]| {
            let rows = &lx.witness[base..];
            if let Some(i) = (0..g).find(|&i| &rows[i * v..i * v + v] == row) {
                mult[i] += 1;
                return true;
            }
            if g == KIDS {
                return false;
            }
            lx.witness.extend_from_slice(row);
            mult[g] = 1;
            g += 1;
            true
        };
        for ci in dom.children() {
            if caps[ci] == 0 {
                continue;
            }
            let Some(counts) = profiles[ci].counts() else {
                ok = false;
                break;
            };
            let mut acc = 0u32;
            for t in (1..=v).rev() {
                acc += counts[t];
                row[t - 1] = acc;
            }
            if !add(lx, &row[..v]) {
                ok = false;
                break;
            }
        }
        if ok {
            for &f in &self.caps.fits[dom.direct_nodes()] {
                if f == 0 {
                    continue;
                }
                row[..v].fill(0);
                row[..(f as usize).min(v)].fill(1);
                if !add(lx, &row[..v]) {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            lx.witness.truncate(base);
            return None;
        }
        // Groups with the most nodes of the largest fits first.
        let mut order = [0usize; KIDS];
        for (i, o) in order[..g].iter_mut().enumerate() {
            *o = i;
        }
        {
            let rows = &lx.witness[base..];
            order[..g].sort_by(|&a, &b| {
                let (ra, rb) = (&rows[a * v..a * v + v], &rows[b * v..b * v + v]);
                rb.iter().rev().cmp(ra.iter().rev()).then(a.cmp(&b))
            });
        }
        let sorted = lx.witness.len();
        let mut m = [0u32; KIDS];
        for (i, &o) in order[..g].iter().enumerate() {
            lx.witness
                .extend_from_within(base + o * v..base + o * v + v);
            m[i] = mult[o];
        }
        let mut after = [0u32; KIDS + 1];
        for i in (0..g).rev() {
            after[i] = after[i + 1] + m[i];
        }
        // The j largest counts of each threshold over the children of groups g.., for
        // j <= r (`(g * (r + 1) + j) * v + t` in `lx.tops`; all of them when fewer).
        let tb = lx.tops.len();
        let stride = (r + 1) * v;
        lx.tops.resize(tb + (g + 1) * stride, 0);
        {
            let rows = &lx.witness[sorted..];
            let tops = &mut lx.tops[tb..];
            for i in (0..g).rev() {
                let (here, next) = tops[i * stride..(i + 2) * stride].split_at_mut(stride);
                for t in 0..v {
                    let c = u64::from(rows[i * v + t]);
                    for j in 1..=r {
                        let mut most = next[j * v + t];
                        for a in 1..=j.min(m[i] as usize) {
                            most = most.max(a as u64 * c + next[(j - a) * v + t]);
                        }
                        here[j * v + t] = most;
                    }
                }
            }
        }
        let mut s = Search {
            rows: &lx.witness[sorted..],
            mult: &m[..g],
            after: &after[..=g],
            tops: &lx.tops[tb..],
            stride,
            v,
            x,
            best: u64::MAX,
            budget: BUDGET,
        };
        let mut sum: Counts = [0; BUCKETS];
        let done = s.dfs(0, r, &mut sum);
        let best = s.best;
        lx.tops.truncate(tb);
        lx.witness.truncate(base);
        if !done || best == u64::MAX {
            return None;
        }
        #[cfg(test)]
        {
            lx.by_sets += 1;
        }
        Some([r as u32, u32::try_from(best).ok()?])
    }
}

impl Search<'_> {
    /// Sets of `left` more children from groups `g..` added to `sum`; false when out of
    /// budget.
    fn dfs(&mut self, g: usize, left: usize, sum: &mut Counts) -> bool {
        let v = self.v;
        if left == 0 {
            if let Some(k) = least_nodes(&sum[..v], self.x) {
                self.best = self.best.min(k);
            }
            return true;
        }
        if self.after[g] < left as u32 {
            return true;
        }
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        let mut bound: Counts = [0; BUCKETS];
        for ((b, &s), &t) in bound[..v]
            .iter_mut()
            .zip(&sum[..v])
            .zip(&self.tops[g * self.stride + left * v..][..v])
        {
            *b = s + t;
        }
        match least_nodes(&bound[..v], self.x) {
            Some(k) if k < self.best => {}
            _ => return true,
        }
        let most = (self.mult[g] as usize).min(left);
        let row = &self.rows[g * v..g * v + v];
        for take in (0..=most).rev() {
            for (s, &c) in sum[..v].iter_mut().zip(row) {
                *s += u64::from(c) * take as u64;
            }
            let ok = self.dfs(g + 1, left - take, sum);
            for (s, &c) in sum[..v].iter_mut().zip(row) {
                *s -= u64::from(c) * take as u64;
            }
            if !ok {
                return false;
            }
        }
        true
    }
}

/// The least `k` with `sum_t min(k, b[t]) >= x` (`b` not increasing, `x > 0`): `k`
/// nodes of a set with `b[t]` nodes of a fit of at least `t + 1` hold that many members
/// (largest fits first). `None` when all of them do not hold `x`.
fn least_nodes(b: &[u64], x: u64) -> Option<u64> {
    // With `k` between b[j] and b[j - 1], thresholds before j take k, the rest b[t].
    let v = b.len();
    let mut rest = 0u64;
    for j in (1..=v).rev() {
        let hi = b[j - 1];
        if j as u64 * hi + rest >= x {
            let k = x.saturating_sub(rest).div_ceil(j as u64);
            let lo = if j < v { b[j] } else { 0 };
            return Some(k.max(lo).max(1));
        }
        rest += hi;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::knapsack::tests::inventory;
    use super::super::tests::{objective, profiled};
    use super::*;
    use crate::{Gang, Role};
    use proptest::prelude::*;

    const GPU: &str = "gpu";

    /// The gang: members of `per` GPUs, unconstrained, or required in a zone/block with
    /// slices of `slice` in a rack.
    fn gang(three: bool, per: i64, slice: u32) -> Gang {
        match slice {
            0 | 1 => Gang::new("g").role(Role::new("w", 1).request(GPU, per)),
            s => Gang::new("g")
                .role(Role::new("w", s).request(GPU, per))
                .required(if three { "zone" } else { "block" })
                .slice("rack", s),
        }
    }

    /// Every width-2 domain and amount (in its grain): the search's vector, when it
    /// settles one, is the knapsack's. Returns how many it settled.
    fn vectors(inv: &Inventory, gang: &Gang) -> u64 {
        let c = inv.compile(gang).unwrap();
        let caps = profiled(inv, &c);
        let o = objective(inv, &c, &caps, Policy::BestFit);
        let mut lx = Lex::default();
        for d in 0..inv.label_depth() {
            let d = Depth(d);
            let step = o.grain.at(d).max(1);
            if o.width(d) != 2 {
                continue;
            }
            for di in 0..inv.domains[d.ix()].len() as u32 {
                let dom = *inv.domain(d, di);
                if !o.has_child_domains(d, &dom) {
                    continue;
                }
                let cap = caps.caps[d.ix()][di as usize];
                for x in (step..=cap).step_by(step as usize) {
                    let Some(v) = o.sets_exact(&mut lx, d, di, x) else {
                        continue;
                    };
                    let base = lx.table.len();
                    o.knapsack(&mut lx, d, &dom, x, Table::Steps);
                    let at = base + x as usize * 2;
                    let dp = lx.table[at..at + 2].to_vec();
                    lx.table.truncate(base);
                    assert_eq!(
                        &v[..],
                        &dp[..],
                        "depth {}, domain {di}, {x} members",
                        d.ix()
                    );
                    assert!(lx.witness.is_empty() && lx.sorted.is_empty());
                }
            }
        }
        lx.by_sets
    }

    /// Every level, amount and policy: the domain chosen and the assignment node by
    /// node are the same with and without the search over sets; so are every domain's
    /// vector and assignment. Returns how many vectors the search settled.
    fn queries(inv: &Inventory, gang: &Gang) -> u64 {
        let c = inv.compile(gang).unwrap();
        let caps = profiled(inv, &c);
        let mut settled = 0;
        for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
            let o = objective(inv, &c, &caps, policy);
            let mut lxs = [
                Lex {
                    no_sets: true,
                    ..Lex::default()
                },
                Lex::default(),
            ];
            let mut at = Attempt::default();
            at.ensure(inv);
            for t in 0..inv.label_depth() {
                let t = Depth(t + 1);
                let step = o.grain.at(t).max(1);
                let top = caps.caps[t.ix()].iter().copied().max().unwrap_or(0);
                for count in (step..=top).step_by(step as usize) {
                    let mut got = Vec::new();
                    for lx in lxs.iter_mut() {
                        let found = o.choose_domain(lx, t, count, 1, step, None);
                        at.fresh(inv.resources.len());
                        if let Some((placed, pos)) = found {
                            o.assign(lx, Scope::new(t, pos), placed, &mut at);
                        }
                        got.push((found, at.assign.clone()));
                    }
                    assert_eq!(got[0], got[1], "{count} at depth {}", t.ix());
                }
            }
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                let (w, step) = (o.width(d), o.grain.at(d).max(1));
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    let cap = caps.caps[d.ix()][di as usize];
                    for x in (step..=cap).step_by(step as usize) {
                        let mut got = Vec::new();
                        for lx in lxs.iter_mut() {
                            let mut v = [0u32; MAX_WIDTH];
                            o.vector(lx, d, di, x, &mut v[..w]);
                            at.fresh(inv.resources.len());
                            o.assign(lx, Scope::new(d, di), x, &mut at);
                            got.push((v, at.assign.clone()));
                        }
                        assert_eq!(got[0], got[1], "depth {}, domain {di}, {x}", d.ix());
                    }
                }
            }
            assert_eq!(lxs[0].by_sets, 0);
            settled += lxs[1].by_sets;
        }
        settled
    }

    fn random_nodes(next: &mut impl FnMut(u64) -> u64) -> Vec<(u8, u8, u8, u8, i64, i64)> {
        (0..1 + next(40))
            .map(|_| {
                let (z, b, r) = (next(2) as u8, next(2) as u8, next(6) as u8);
                let kept = if next(8) == 0 { next(3) } else { 3 } as u8;
                (z, b, r, kept, 8, next(9) as i64)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn the_search_over_sets_is_the_knapsacks_vector(
            three in any::<bool>(),
            per in 1i64..3,
            slice in 0u32..3,
            nodes in proptest::collection::vec(
                (0u8..2, 0u8..2, 0u8..6, 0u8..=9, 4i64..=8, 0i64..=8),
                1..40,
            ),
        ) {
            let inv = inventory(three, &nodes);
            vectors(&inv, &gang(three, per, slice));
        }

        #[test]
        fn every_query_is_the_same_with_and_without_the_sets(
            three in any::<bool>(),
            per in 1i64..3,
            slice in 0u32..3,
            nodes in proptest::collection::vec(
                (0u8..2, 0u8..2, 0u8..6, 0u8..=9, 4i64..=8, 0i64..=8),
                1..40,
            ),
        ) {
            let inv = inventory(three, &nodes);
            queries(&inv, &gang(three, per, slice));
        }
    }

    /// The comparisons above reach the search often: vectors it settles (the witness
    /// fell short), compared with the knapsack's and through whole queries.
    #[test]
    fn the_search_settles_vectors_the_witness_does_not() {
        let mut next = crate::solve::xorshift(23);
        let (mut direct, mut through) = (0, 0);
        for k in 0..300 {
            let three = k % 2 == 1;
            let nodes = random_nodes(&mut next);
            let inv = inventory(three, &nodes);
            let g = gang(three, 1 + (k / 2 % 2) as i64, 0);
            direct += vectors(&inv, &g);
            through += queries(&inv, &g);
        }
        assert!(
            direct > 2000 && through > 500,
            "{direct} direct, {through} through"
        );
    }

    /// [`least_nodes`] is the least `k` found by trying every `k`.
    #[test]
    fn the_least_nodes_is_the_first_k_that_holds() {
        let mut next = crate::solve::xorshift(5);
        for _ in 0..20_000 {
            let v = 1 + next(8) as usize;
            let mut b: Vec<u64> = (0..v).map(|_| next(12)).collect();
            b.sort_unstable_by(|a, b| b.cmp(a));
            let x = 1 + next(60);
            let want = (1..=b[0]).find(|&k| b.iter().map(|&c| c.min(k)).sum::<u64>() >= x);
            assert_eq!(least_nodes(&b, x), want, "{b:?} {x}");
        }
    }
}
