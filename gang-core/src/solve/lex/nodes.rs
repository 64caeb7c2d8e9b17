//! The node-count bound of a candidate domain from its children's fit profiles (issue
//! 23): how few nodes a placement that uses exactly the fewest children can take, read
//! from the per-threshold counts the cache keeps from the journal, so a domain whose
//! bound cannot beat the best vector so far skips its knapsack.

use super::*;

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
        let dom = *self.inv.domain(d, di);
        let (caps, profiles) = (&self.caps.caps[c.ix()], &self.caps.profiles[c.ix()]);
        let mut most = [0u64; BUCKETS];
        // Each child's counts of nodes with a fit of at least t (`row`), for t = 1..=v;
        // a child that holds no member is not used by a placement.
        let mut children = dom
            .children()
            .filter(|&ci| caps[ci] > 0)
            .map(|ci| profiles[ci].counts())
            .map(|counts| {
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
                    .map(|&f| {
                        let mut row = [0u32; BUCKETS];
                        row[..(f as usize).min(v)].fill(1);
                        Some(row)
                    }),
            );
        const TOP: usize = 16;
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
}
