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
        let mut children = self.rows(d, di, v);
        let r = r as usize;
        #[cfg(test)]
        let small = r <= TOP && !lx.wide;
        #[cfg(not(test))]
        let small = r <= TOP;
        if small {
            // The r largest counts per threshold, kept sorted (largest first).
            let mut top = [[0u32; TOP]; BUCKETS];
            for row in children.by_ref() {
                let row = row?;
                for (t, best) in top[..v].iter_mut().enumerate() {
                    let mut k = row[t];
                    if k <= best[r - 1] {
                        continue;
                    }
                    for b in best[..r].iter_mut() {
                        if k > *b {
                            std::mem::swap(&mut k, b);
                        }
                    }
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
            for row in children.by_ref() {
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
