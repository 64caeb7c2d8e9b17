//! The node-count bound of a candidate domain from its children's fit profiles (issue
//! 23): how few nodes a placement that uses exactly the fewest children can take, read
//! from the per-threshold counts the cache keeps from the journal, so a domain whose
//! bound cannot beat the best vector so far skips its knapsack.

use super::*;

/// Node bounds keep the `r` largest counts on the stack up to this many children.
const TOP: usize = 16;

/// A child's counts of nodes with a fit of at least `t`, at `[t - 1]`.
type Row = [u32; BUCKETS];

/// The node bound's witness searches among at most this many children.
const WITNESS: usize = 64;

impl Objective<'_> {
    /// Sharpens candidate `c`'s bound (a domain at depth `d`, width `w`, holding `x`)
    /// with [`Objective::nodes_bound`]; whether it changed.
    pub(super) fn sharpen(&self, lx: &mut Lex, d: Depth, c: &Cand, x: u64, w: usize) -> bool {
        let Child::Domain(di) = c.child else {
            return false;
        };
        if w < 2 {
            return false;
        }
        let r = lx.bounds[c.bound];
        match self.nodes_bound(lx, d, di, x, r) {
            Some(k) if k > lx.bounds[c.bound + w - 1] => {
                lx.bounds[c.bound + w - 1] = k;
                true
            }
            _ => false,
        }
    }

    /// Raises the bound `lb` (width at least 3, `lb[0] = 1`: one child of domain `di`
    /// at depth `d` holds `x`) by the children that hold `x`: its second component to
    /// their least first component ([`Objective::fewest_grandchildren`]), its last to
    /// [`Objective::nodes_bound_in_one`] for that.
    pub(super) fn bound_in_one(&self, lx: &mut Lex, d: Depth, di: u32, x: u64, lb: &mut [u32]) {
        let w = lb.len();
        if w < 3 || lb[0] != 1 {
            return;
        }
        #[cfg(test)]
        if lx.every_bound {
            return self.bound_in_one_by_every_child(lx, d, di, x, lb);
        }
        let c = d.child();
        let dom = *self.inv.domain(d, di);
        if self.direct_node_holds(&dom, x) || self.inv.is_node_level(c) {
            lb[1] = lb[1].max(1);
            return;
        }
        // The children that hold `x` and their fewest children, each once (child index
        // low, the count high): their least is the second component's bound
        // ([`Objective::fewest_grandchildren`], which stops at 1).
        let base = lx.sorted.len();
        let mut r = u32::MAX;
        for ci in dom.children() {
            if self.caps.caps[c.ix()][ci] >= x {
                let f = self.fewest_children(lx, c, ci as u32, x);
                lx.sorted.push(u64::from(f) << 32 | ci as u64);
                r = r.min(f);
                if r == 1 {
                    break;
                }
            }
        }
        let r = if r == u32::MAX { 1 } else { r };
        lb[1] = lb[1].max(r);
        if let Some(k) = self.least_nodes_bound(lx, c, base, x, r) {
            lb[w - 1] = lb[w - 1].max(k);
        }
        lx.sorted.truncate(base);
    }

    /// [`Objective::nodes_bound_in_one`] for the children of depth `c` listed in
    /// `lx.sorted[base..]` (each `fewest << 32 | index`), `r` their least fewest: the
    /// least node bound of those whose fewest is `r`, found without bounding each. A
    /// child's own profile gives the fewest of its nodes that hold `x` (largest fits
    /// first), never above its node bound (that reads the counts of only `r` of its
    /// children); the children are bounded in the order of that count, and once it
    /// reaches the least bound so far, none left can go below it. `None` when the old
    /// way is: `r` at most 1, no profiles, or a child whose fits are too large to count.
    fn least_nodes_bound(
        &self,
        lx: &mut Lex,
        c: Depth,
        base: usize,
        x: u64,
        r: u32,
    ) -> Option<u32> {
        if r <= 1 || !self.caps.profiled || self.inv.is_node_level(c.child()) {
            return None;
        }
        let w = self.width(c);
        let (peaks, profiles) = (&self.caps.peaks[c.ix()], &self.caps.profiles[c.ix()]);
        // Keep those with `r` children, keyed by their nodes' fewest.
        let mut kept = base;
        for i in base..lx.sorted.len() {
            let e = lx.sorted[i];
            if (e >> 32) as u32 != r {
                continue;
            }
            let ci = (e & 0xffff_ffff) as usize;
            let peak = peaks[ci * w + w - 1];
            if peak == 0 || peak >= BUCKETS as u64 {
                return None;
            }
            let cheap = profiles[ci].fewest(x, peak);
            if cheap == u32::MAX {
                return None;
            }
            lx.sorted[kept] = u64::from(cheap) << 32 | ci as u64;
            kept += 1;
        }
        lx.sorted.truncate(kept);
        lx.sorted[base..].sort_unstable();
        let mut least: Option<u32> = None;
        for i in base..kept {
            let e = lx.sorted[i];
            if least.is_some_and(|l| (e >> 32) as u32 >= l) {
                #[cfg(test)]
                {
                    lx.skipped += (kept - i) as u64;
                }
                break;
            }
            let k = self.nodes_bound(lx, c, (e & 0xffff_ffff) as u32, x, r)?;
            least = Some(least.map_or(k, |l| l.min(k)));
        }
        least
    }

    /// [`Objective::bound_in_one`] the old way: [`Objective::fewest_grandchildren`],
    /// then [`Objective::nodes_bound_in_one`] (every child with `r` children bounded).
    #[cfg(test)]
    fn bound_in_one_by_every_child(&self, lx: &mut Lex, d: Depth, di: u32, x: u64, lb: &mut [u32]) {
        let w = lb.len();
        let r = self.fewest_grandchildren(lx, d, di, x);
        lb[1] = lb[1].max(r);
        if let Some(k) = self.nodes_bound_in_one(lx, d, di, x, r) {
            lb[w - 1] = lb[w - 1].max(k);
        }
    }

    /// A lower bound on the nodes of a placement of `x` members in domain `di` at depth
    /// `d` (width at least 3) inside one child whose own first component is `r`, when
    /// `r` is the least such component of the children that hold `x`
    /// ([`Objective::fewest_grandchildren`]): such a placement lies in a child `b` with
    /// `fewest_children(b) = r` and uses exactly `r` of `b`'s children, so it has at
    /// least the least [`Objective::nodes_bound`] of those children for `r`. `None` when
    /// a direct node holds `x` or one of those children has no bound.
    #[cfg(test)]
    pub(super) fn nodes_bound_in_one(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        x: u64,
        r: u32,
    ) -> Option<u32> {
        let c = d.child();
        if self.inv.is_node_level(c) || r <= 1 {
            return None;
        }
        let dom = *self.inv.domain(d, di);
        if self.direct_node_holds(&dom, x) {
            return None;
        }
        let mut least: Option<u32> = None;
        for ci in dom.children() {
            if self.caps.caps[c.ix()][ci] < x {
                continue;
            }
            let ci = ci as u32;
            if self.fewest_children(lx, c, ci, x) != r {
                continue;
            }
            let k = self.nodes_bound(lx, c, ci, x, r)?;
            least = Some(least.map_or(k, |l| l.min(k)));
        }
        least
    }

    /// A lower bound on the nodes of a placement of `x` members in domain `di` at depth
    /// `d` (width at least 2) that uses exactly `r` of its children (child domains and
    /// direct nodes), from the children's profiles: those `r` children have at most
    /// `C*(t)` nodes with a fit of at least `t` (the `r` largest such counts among the
    /// children, summed threshold by threshold), and `k` nodes hold at most
    /// `sum_t min(k, C*(t))` members (the `k` largest fits, summed layer by layer). A
    /// placement that uses more than `r` children has a larger first component, so
    /// `[r, …, this]` is a lower bound on the vector whenever `r` bounds its first
    /// component. `None` without profiles, or when a fit is too large for them.
    pub(super) fn nodes_bound(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        x: u64,
        r: u32,
    ) -> Option<u32> {
        let c = d.child();
        if !self.caps.profiled || r == 0 || self.inv.is_node_level(c) {
            return None;
        }
        let w = self.width(d);
        let peak = self.caps.peaks[d.ix()][di as usize * w + w - 1];
        if peak == 0 || peak >= BUCKETS as u64 {
            return None;
        }
        // Thresholds 1..=v; `most[t - 1]` = C*(t).
        let v = peak as usize;
        let mut most = [0u64; BUCKETS];
        let r = r as usize;
        #[cfg(test)]
        let small = r <= TOP && !lx.wide;
        #[cfg(not(test))]
        let small = r <= TOP;
        if small {
            // The r largest counts per threshold, kept sorted (largest first): each
            // child's counts summed from the largest fit down, each put in its place
            // from the smallest end (no row built).
            let mut top = [[0u32; TOP]; BUCKETS];
            let mut put = |t: usize, k: u32| {
                let best = &mut top[t];
                if k <= best[r - 1] {
                    return;
                }
                let mut p = r - 1;
                while p > 0 && best[p - 1] < k {
                    best[p] = best[p - 1];
                    p -= 1;
                }
                best[p] = k;
            };
            let dom = *self.inv.domain(d, di);
            let (caps, profiles) = (&self.caps.caps[c.ix()], &self.caps.profiles[c.ix()]);
            for ci in dom.children() {
                if caps[ci] == 0 {
                    continue;
                }
                let counts = profiles[ci].counts()?;
                let mut acc = 0u32;
                for t in (1..=v).rev() {
                    acc += counts[t];
                    put(t - 1, acc);
                }
            }
            for &f in &self.caps.fits[dom.direct_nodes()] {
                for t in 0..(f as usize).min(v) {
                    put(t, 1);
                }
            }
            for (m, best) in most[..v].iter_mut().zip(&top) {
                *m = best[..r].iter().map(|&k| u64::from(k)).sum();
            }
        } else {
            // One row of v counts per child (`sorted` as scratch), then each threshold's
            // column.
            let base = lx.sorted.len();
            let mut nc = 0usize;
            for row in self.rows(d, di, v) {
                let Some(row) = row else {
                    lx.sorted.truncate(base);
                    return None;
                };
                lx.sorted.extend(row[..v].iter().map(|&k| u64::from(k)));
                nc += 1;
            }
            let r = r.min(nc);
            let col = lx.sorted.len();
            for (t, m) in most[..v].iter_mut().enumerate() {
                for i in 0..nc {
                    let k = lx.sorted[base + i * v + t];
                    lx.sorted.push(k);
                }
                let column = &mut lx.sorted[col..];
                if r < nc {
                    column.select_nth_unstable_by(r - 1, |a, b| b.cmp(a));
                }
                *m = column[..r].iter().sum();
                lx.sorted.truncate(col);
            }
            lx.sorted.truncate(base);
        }
        let most = &most[..v];
        if most.iter().sum::<u64>() < x {
            return None;
        }
        let (mut lo, mut hi) = (1u64, most[0]);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if most.iter().map(|&m| m.min(mid)).sum::<u64>() >= x {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        u32::try_from(lo).ok()
    }

    /// Each child of domain `di` at depth `d` that holds a member (child domains, then
    /// direct nodes): its counts of nodes with a fit of at least `t`, for `t = 1..=v`
    /// (`None` for a child whose profile has fits too large to count).
    fn rows(&self, d: Depth, di: u32, v: usize) -> impl Iterator<Item = Option<Row>> + '_ {
        let c = d.child();
        let dom = *self.inv.domain(d, di);
        let (caps, profiles) = (&self.caps.caps[c.ix()], &self.caps.profiles[c.ix()]);
        dom.children()
            .filter(move |&ci| caps[ci] > 0)
            .map(move |ci| profiles[ci].counts())
            .map(move |counts| {
                counts.map(|counts| {
                    let mut row = [0u32; BUCKETS];
                    let mut acc = 0u32;
                    for t in (1..=v).rev() {
                        acc += counts[t];
                        row[t - 1] = acc;
                    }
                    row
                })
            })
            .chain(
                self.caps.fits[dom.direct_nodes()]
                    .iter()
                    .filter(|&&f| f > 0)
                    .map(move |&f| {
                        let mut row = [0u32; BUCKETS];
                        row[..(f as usize).min(v)].fill(1);
                        Some(row)
                    }),
            )
    }

    /// The exact vector `[r, k]` of a placement of `x` members in domain `di` at depth
    /// `d` whose children hold only nodes (width 2), without its knapsack, when the node
    /// bound is met: `r` is the fewest children, `k` [`Objective::nodes_bound`] for `r`,
    /// and the `r` children whose `k` largest fits hold the most (the first in order on
    /// ties) hold `x` in `k` nodes (largest first). No placement uses fewer children, nor
    /// fewer nodes with `r` of them, so `[r, k]` is the least vector. `None` otherwise
    /// (slices below `d`, no profiles, more than 16 children needed, or the witness
    /// falls short). The set's counts are kept summed per threshold, so a swap is tried
    /// in `v` steps rather than `r * v` (the same sums as
    /// [`Objective::nodes_exact_by_sets`], the way it was).
    pub(super) fn nodes_exact(&self, lx: &mut Lex, d: Depth, di: u32, x: u64) -> Option<[u32; 2]> {
        #[cfg(test)]
        if lx.by_nodes {
            return self.nodes_exact_by_sets(lx, d, di, x);
        }
        if self.width(d) != 2 || !self.pool_allowed(d) || self.grain.at(d.child()) != 1 {
            return None;
        }
        let r = self.fewest_children(lx, d, di, x);
        if r as usize > TOP {
            return None;
        }
        let k = self.nodes_bound(lx, d, di, x, r)?;
        let w = self.width(d);
        let v = self.caps.peaks[d.ix()][di as usize * w + w - 1] as usize;
        // The r children whose k largest fits hold the most (the first on ties), then
        // swaps of one of them for another child while that holds more (none with more
        // than 64 children; their rows of v counts in `lx.witness`).
        let r = r as usize;
        let base = lx.witness.len();
        let mut top = [(0u64, 0usize); TOP];
        let (mut n, mut kept) = (0usize, 0usize);
        for (i, row) in self.rows(d, di, v).enumerate() {
            let Some(row) = row.filter(|_| i < WITNESS) else {
                lx.witness.truncate(base);
                return None;
            };
            let h: u64 = row[..v].iter().map(|&c| u64::from(c.min(k))).sum();
            lx.witness.extend_from_slice(&row[..v]);
            kept = i + 1;
            if n == r && h <= top[r - 1].0 {
                continue;
            }
            let mut at = n.min(r - 1);
            while at > 0 && top[at - 1].0 < h {
                top[at] = top[at - 1];
                at -= 1;
            }
            top[at] = (h, i);
            n = (n + 1).min(r);
        }
        if n < r {
            lx.witness.truncate(base);
            return None;
        }
        let rows = &lx.witness[base..];
        let row = |i: usize| &rows[i * v..i * v + v];
        let k64 = u64::from(k);
        // The set's counts per threshold, and the children in it.
        let set = &mut top[..r];
        let mut sum = [0u64; BUCKETS];
        let mut member = 0u64;
        for &(_, i) in set.iter() {
            for (s, &c) in sum.iter_mut().zip(row(i)) {
                *s += u64::from(c);
            }
            member |= 1 << i;
        }
        let mut now: u64 = sum[..v].iter().map(|&s| s.min(k64)).sum();
        for _ in 0..2 * r {
            if now >= x {
                break;
            }
            let mut swap: Option<(u64, usize, usize)> = None;
            for (m, &(_, out)) in set.iter().enumerate() {
                let out = row(out);
                for j in (0..kept).filter(|&j| member & (1 << j) == 0) {
                    let h: u64 = sum[..v]
                        .iter()
                        .zip(out)
                        .zip(row(j))
                        .map(|((&s, &o), &c)| (s - u64::from(o) + u64::from(c)).min(k64))
                        .sum();
                    if h > swap.map_or(now, |s| s.0) {
                        swap = Some((h, m, j));
                    }
                }
            }
            let Some((h, m, j)) = swap else { break };
            let out = set[m].1;
            for ((s, &o), &c) in sum.iter_mut().zip(row(out)).zip(row(j)) {
                *s = *s - u64::from(o) + u64::from(c);
            }
            member = member & !(1 << out) | (1 << j);
            set[m] = (0, j);
            now = h;
        }
        lx.witness.truncate(base);
        (now >= x).then_some([r as u32, k])
    }

    /// [`Objective::nodes_exact`] as it was: each set's counts summed anew for every
    /// swap tried (tests compare the two).
    ///
    /// The exact vector `[r, k]` of a placement of `x` members in domain `di` at depth
    /// `d` whose children hold only nodes (width 2), without its knapsack, when the node
    /// bound is met: `r` is the fewest children, `k` [`Objective::nodes_bound`] for `r`,
    /// and the `r` children whose `k` largest fits hold the most (the first in order on
    /// ties) hold `x` in `k` nodes (largest first). No placement uses fewer children, nor
    /// fewer nodes with `r` of them, so `[r, k]` is the least vector. `None` otherwise
    /// (slices below `d`, no profiles, more than 16 children needed, or the witness
    /// falls short).
    #[cfg(test)]
    pub(super) fn nodes_exact_by_sets(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        x: u64,
    ) -> Option<[u32; 2]> {
        if self.width(d) != 2 || !self.pool_allowed(d) || self.grain.at(d.child()) != 1 {
            return None;
        }
        let r = self.fewest_children(lx, d, di, x);
        if r as usize > TOP {
            return None;
        }
        let k = self.nodes_bound(lx, d, di, x, r)?;
        let w = self.width(d);
        let v = self.caps.peaks[d.ix()][di as usize * w + w - 1] as usize;
        // The r children whose k largest fits hold the most (the first on ties), then
        // swaps of one of them for another child while that holds more (none with more
        // than 64 children, kept on the stack).
        let r = r as usize;
        let mut rows = [[0u32; BUCKETS]; WITNESS];
        let mut held = [0u64; WITNESS];
        let mut top = [(0u64, 0usize); TOP];
        let (mut n, mut kept) = (0usize, 0usize);
        for (i, row) in self.rows(d, di, v).enumerate() {
            let row = row?;
            if i >= WITNESS {
                return None;
            }
            let h: u64 = row[..v].iter().map(|&c| u64::from(c.min(k))).sum();
            (rows[i], held[i], kept) = (row, h, i + 1);
            if n == r && h <= top[r - 1].0 {
                continue;
            }
            let mut at = n.min(r - 1);
            while at > 0 && top[at - 1].0 < h {
                top[at] = top[at - 1];
                at -= 1;
            }
            top[at] = (h, i);
            n = (n + 1).min(r);
        }
        if n < r {
            return None;
        }
        let k64 = u64::from(k);
        let total = |set: &[(u64, usize)], skip: usize, with: usize| -> u64 {
            (0..v)
                .map(|t| {
                    let mut count = 0u64;
                    for (m, &(_, i)) in set.iter().enumerate() {
                        let i = if m == skip { with } else { i };
                        count += u64::from(rows[i][t]);
                    }
                    count.min(k64)
                })
                .sum()
        };
        let set = &mut top[..r];
        let mut now = total(set, usize::MAX, 0);
        for _ in 0..2 * r {
            if now >= x {
                break;
            }
            let mut swap: Option<(u64, usize, usize)> = None;
            for m in 0..r {
                for j in 0..kept {
                    if set.iter().any(|&(_, i)| i == j) {
                        continue;
                    }
                    let h = total(set, m, j);
                    if h > swap.map_or(now, |s| s.0) {
                        swap = Some((h, m, j));
                    }
                }
            }
            let Some((h, m, j)) = swap else { break };
            set[m] = (held[j], j);
            now = h;
        }
        (now >= x).then_some([r as u32, k])
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{objective, profiled};
    use super::*;
    use crate::testkit::build;
    use crate::{Gang, NodeSpec, Role};

    const GPU: &str = "gpu";

    /// Random trees of up to 60 nodes under three label levels (some labels missing),
    /// 8 GPUs a node with some used (fits up to 40 on some seeds).
    fn random_deep(seed: u64) -> Inventory {
        let mut next = crate::solve::xorshift(seed | 1);
        let len = 1 + next(60);
        let big = next(8) == 0;
        let levels = ["zone", "block", "rack"];
        let nodes = (0..len)
            .map(|i| {
                let z = ["x", "y"][next(2) as usize];
                let b = ["p", "q", "r", "s"][next(4) as usize];
                let r = ["a", "b", "c", "d", "e"][next(5) as usize];
                let full = [z, b, r];
                let keep = match next(12) {
                    0 => 0,
                    1 => 1,
                    2 => 2,
                    _ => 3,
                };
                let spec = levels
                    .iter()
                    .zip(&full[..keep])
                    .fold(NodeSpec::new(format!("n{i}")), |spec, (key, value)| {
                        spec.label(*key, *value)
                    });
                let cap = if big && next(4) == 0 { 40 } else { 8 };
                spec.capacity(GPU, cap)
                    .used(GPU, next(cap as u64 + 1) as i64)
            })
            .collect();
        build(&levels, nodes)
    }

    /// The bound inside one child with the children ranked by their own profiles is the
    /// bound from every child's node bound, stays below the exact vector, and skips
    /// node bounds.
    #[test]
    fn ranking_the_children_keeps_the_bound_inside_one_child() {
        let (mut checked, mut raised) = (0u32, 0u32);
        let mut skipped = 0u64;
        for seed in 1..900u64 {
            let inv = random_deep(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let per = 1 + (seed % 3 == 0) as i64;
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, per));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
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
                        let row = &caps.peaks[d.ix()][di as usize * w..di as usize * w + w];
                        let mut lb = [0u32; MAX_WIDTH];
                        for (l, &p) in lb[..w].iter_mut().zip(row) {
                            *l = units(x, p);
                        }
                        lb[0] = lb[0].max(o.fewest_children(&mut lx, d, di, x));
                        let (before, mut old) = (lb, lb);
                        o.bound_in_one(&mut lx, d, di, x, &mut lb[..w]);
                        lx.every_bound = true;
                        o.bound_in_one(&mut lx, d, di, x, &mut old[..w]);
                        lx.every_bound = false;
                        assert_eq!(lb, old, "seed {seed}, {x} members");
                        assert!(lx.sorted.is_empty());
                        checked += 1;
                        raised += u32::from(lb[w - 1] != before[w - 1]);
                        let mut v = [0u32; MAX_WIDTH];
                        o.vector(&mut lx, d, di, x, &mut v[..w]);
                        if v[0] == 1 {
                            for k in 0..w {
                                assert!(lb[k] <= v[k], "seed {seed}, {x}: {lb:?} > {v:?}");
                            }
                        }
                    }
                }
            }
            skipped += lx.skipped;
        }
        assert!(
            checked > 5000 && raised > checked / 10 && skipped > 1000,
            "{raised} raised of {checked}, {skipped} skipped"
        );
    }

    /// The domain chosen, its members and the assignment node by node are those of the
    /// old bound, at every level, amount and policy of random inventories.
    #[test]
    fn ranking_the_children_keeps_every_choice_and_assignment() {
        let (mut compared, mut skipped) = (0u32, 0u64);
        for seed in 1..500u64 {
            let inv = random_deep(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                let o = objective(&inv, &c, &caps, policy);
                for t in 0..=inv.label_depth() {
                    let t = Depth(t);
                    let top = caps.caps[t.ix()].iter().copied().max().unwrap_or(0);
                    for count in 1..=top {
                        let mut run = |every_bound: bool| {
                            let mut lx = Lex {
                                every_bound,
                                ..Lex::default()
                            };
                            let found = o.choose_domain(&mut lx, t, count, 1, 1, None);
                            let mut at = Attempt::default();
                            at.ensure(&inv);
                            at.fresh(inv.resources.len());
                            if let Some((placed, pos)) = found {
                                let scope = Scope::new(t, pos);
                                o.assign(&mut lx, scope, placed, &mut at);
                            }
                            skipped += lx.skipped;
                            (found, at.assign.clone())
                        };
                        let new = run(false);
                        assert_eq!(new, run(true), "seed {seed}, {count} at {t:?}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 10_000 && skipped > 1000, "{compared} {skipped}");
    }
}
