//! Profiles: for every domain, how many of its nodes have each fit of one role (fits
//! below [`BUCKETS`]), and how many have a larger one and their sum. The multi-role
//! objective reads off them the fewest nodes of a domain that hold `x` members (largest
//! fits first) without visiting its nodes: a lower bound on the node count of its
//! vector, much tighter than the peaks' `ceil(x / largest fit)` on a fragmented domain.
//!
//! Kept by the cache beside the peaks, but only for entries the objective has asked
//! for (filled on first use; the journal's touched nodes then move between buckets).

use crate::inventory::Inventory;

/// Fits below this are counted one by one.
pub(crate) const BUCKETS: usize = 32;

/// One domain's profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Profile {
    count: [u32; BUCKETS],
    /// Nodes with a fit of [`BUCKETS`] or more.
    big: u32,
    /// The sum of those fits.
    big_sum: u64,
}

impl Profile {
    fn add(&mut self, fit: u32) {
        match self.count.get_mut(fit as usize) {
            Some(n) => *n += 1,
            None => {
                self.big += 1;
                self.big_sum += u64::from(fit);
            }
        }
    }

    fn remove(&mut self, fit: u32) {
        match self.count.get_mut(fit as usize) {
            Some(n) => *n -= 1,
            None => {
                self.big -= 1;
                self.big_sum -= u64::from(fit);
            }
        }
    }

    /// How many of the domain's nodes have each fit (`[f]`, for `f` below
    /// [`BUCKETS`]), when none has a larger one (`None` otherwise).
    pub fn counts(&self) -> Option<&[u32; BUCKETS]> {
        (self.big == 0).then_some(&self.count)
    }

    /// The fewest of the domain's nodes, largest fits first, whose fits reach `x`
    /// (`u32::MAX` when all of them do not); when nodes of a large fit would have to be
    /// counted one by one, `ceil(x / peak)`, `peak` being the largest fit.
    pub fn fewest(&self, x: u64, peak: u64) -> u32 {
        if x == 0 {
            return 0;
        }
        let (mut held, mut k) = (0u64, 0u32);
        if self.big > 0 {
            if x <= self.big_sum {
                return u32::try_from(x.div_ceil(peak.max(1))).unwrap_or(u32::MAX);
            }
            (held, k) = (self.big_sum, self.big);
        }
        for v in (1..BUCKETS.min(peak as usize + 1)).rev() {
            let n = self.count[v];
            let here = u64::from(n) * v as u64;
            if held + here >= x {
                return k + (x - held).div_ceil(v as u64) as u32;
            }
            held += here;
            k += n;
        }
        u32::MAX
    }
}

/// Sizes every domain's profile (`profiles[depth][domain]`), all empty: what [`fill`]
/// writes into, allocated ahead of it so that filling later allocates nothing.
pub(crate) fn size(inv: &Inventory, profiles: &mut Vec<Vec<Profile>>) {
    profiles.resize_with(inv.domains.len(), Vec::new);
    for (level, domains) in profiles.iter_mut().zip(&inv.domains) {
        level.clear();
        level.resize(domains.len(), Profile::default());
    }
}

/// Sizes and fills every domain's profile (`profiles[depth][domain]`) from the nodes'
/// `fits`.
pub(crate) fn fill(inv: &Inventory, fits: &[u32], profiles: &mut Vec<Vec<Profile>>) {
    size(inv, profiles);
    for (n, &fit) in fits.iter().enumerate() {
        path(inv, n as u32, profiles, |p| p.add(fit));
    }
}

/// Node `n`'s fit went from `old` to `fit`: moved in the profiles above it.
pub(crate) fn moved(inv: &Inventory, n: u32, old: u32, fit: u32, profiles: &mut [Vec<Profile>]) {
    path(inv, n, profiles, |p| {
        p.remove(old);
        p.add(fit);
    });
}

/// Applies `f` to the profile of every domain above node `n`.
fn path(inv: &Inventory, n: u32, profiles: &mut [Vec<Profile>], mut f: impl FnMut(&mut Profile)) {
    let depths = inv.leaf_depth(n) + 1;
    for (d, level) in profiles.iter_mut().enumerate().take(depths) {
        if let Some(di) = inv.domain_of(n, d) {
            f(&mut level[di as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fewest nodes by sorting, for comparison.
    fn by_sorting(fits: &[u32], x: u64) -> u32 {
        let mut sorted = fits.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let mut held = 0u64;
        sorted
            .iter()
            .position(|&f| {
                held += u64::from(f);
                held >= x
            })
            .map_or(u32::MAX, |k| k as u32 + 1)
    }

    #[test]
    fn the_fewest_nodes_agree_with_sorting_and_bound_it_for_large_fits() {
        let mut next = crate::solve::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for case in 0..2000 {
            let large = case % 4 == 0;
            let n = 1 + next(40) as usize;
            let fits: Vec<u32> = (0..n)
                .map(|_| next(if large { 80 } else { BUCKETS as u64 }) as u32)
                .collect();
            let mut p = Profile::default();
            for &f in &fits {
                p.add(f);
            }
            // Moving a node to another fit gives the profile built afresh from the
            // changed fits.
            let to = next(80) as u32;
            let mut moved = p;
            moved.remove(fits[0]);
            moved.add(to);
            let mut afresh = Profile::default();
            for &f in std::iter::once(&to).chain(&fits[1..]) {
                afresh.add(f);
            }
            assert_eq!(moved, afresh, "case {case}: {} -> {to}", fits[0]);
            let peak = u64::from(*fits.iter().max().unwrap());
            let total: u64 = fits.iter().map(|&f| u64::from(f)).sum();
            for x in [0, 1, total / 3, total / 2, total, total + 1] {
                let exact = if x == 0 { 0 } else { by_sorting(&fits, x) };
                let got = p.fewest(x, peak);
                if large {
                    assert!(
                        got <= exact,
                        "case {case}, x {x}: {got} > {exact}: {fits:?}"
                    );
                } else {
                    assert_eq!(got, exact, "case {case}, x {x}: {fits:?}");
                }
            }
        }
    }
}
