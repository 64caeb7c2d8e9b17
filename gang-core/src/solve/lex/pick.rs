//! Settling a candidate domain's exact vector cheaply (issue 23, branch `blockpick`):
//! the largest-first fill's vector and verdict read off the children's fit profiles
//! (no node collected or sorted) when the children are the deepest label level.

use super::*;

impl Objective<'_> {
    /// [`Objective::pool_fill`]'s vector (into `out`) and verdict for domain `di` at
    /// depth `d`, its nodes not kept: from the children's fit profiles
    /// ([`Objective::pool_by_profile`]) when they tell, else by the fill itself.
    pub(super) fn pool_vector(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        dom: &Domain,
        x: u64,
        out: &mut [u32],
    ) -> bool {
        #[cfg(test)]
        let by_profile = !lx.by_nodes;
        #[cfg(not(test))]
        let by_profile = true;
        if by_profile {
            if let Some(proven) = self.pool_by_profile(lx, d, di, dom, x, out) {
                return proven;
            }
        }
        let pb = lx.pool.len();
        let proven = self.pool_fill(lx, d, dom, x, out);
        lx.pool.truncate(pb);
        proven
    }

    /// [`Objective::pool_fill`] for a domain whose children are the deepest label level
    /// (width 2), from the profiles: the largest fits first (ties by position) take all
    /// the nodes with a fit above some `f*` and the first `q` nodes of fit `f*` in
    /// position order (children's nodes in child order, then the direct nodes), so the
    /// units they use are the children with a node above `f*`, the direct nodes above
    /// it, and the owners of those first `q` nodes; the bound is the fewest children
    /// ([`Objective::fewest_children`], the same capacities the fill sorts). `None`
    /// (the fill decides) without profiles, with a fit of [`BUCKETS`] or more, or when
    /// the nodes do not reach `x`.
    pub(super) fn pool_by_profile(
        &self,
        lx: &mut Lex,
        d: Depth,
        di: u32,
        dom: &Domain,
        x: u64,
        out: &mut [u32],
    ) -> Option<bool> {
        let c = d.child();
        if out.len() != 2 || !self.caps.profiled || self.inv.is_node_level(c) {
            return None;
        }
        if !self.pool_allowed(d) {
            return Some(false);
        }
        let peak = self.caps.peaks[d.ix()][di as usize * 2 + 1];
        if peak == 0 || peak >= BUCKETS as u64 {
            return None;
        }
        let v = peak as usize;
        let profiles = &self.caps.profiles[c.ix()][dom.children()];
        let fits = &self.caps.fits[dom.direct_nodes()];
        // Nodes per fit in the whole domain.
        let mut per = [0u64; BUCKETS];
        for p in profiles {
            let counts = p.counts()?;
            for (n, &k) in per[1..=v].iter_mut().zip(&counts[1..=v]) {
                *n += u64::from(k);
            }
        }
        for &f in fits {
            if f as usize > v {
                return None;
            }
            per[f as usize] += 1;
        }
        let (mut held, mut above, mut star, mut q) = (0u64, 0u64, 0usize, 0u64);
        for f in (1..=v).rev() {
            let here = per[f] * f as u64;
            if held + here >= x {
                (star, q) = (f, (x - held).div_ceil(f as u64));
                break;
            }
            held += here;
            above += per[f];
        }
        if star == 0 {
            return None;
        }
        let bound = self.fewest_children(lx, d, di, x);
        out[0] = bound;
        out[1] = u32::try_from(above + q).unwrap_or(u32::MAX);
        // The units the fill uses.
        let (mut used, mut left) = (0u32, q);
        for p in profiles {
            let counts = p.counts()?;
            let high = counts[star + 1..=v].iter().any(|&k| k > 0);
            let take = left.min(u64::from(counts[star]));
            left -= take;
            used += u32::from(high || take > 0);
        }
        for &f in fits {
            let f = f as usize;
            if f > star || (f == star && left > 0) {
                left -= u64::from(f == star);
                used += 1;
            }
        }
        Some(used == bound)
    }
}

impl Objective<'_> {
    /// [`Objective::fewest_children`] for a domain of at most [`SMALL`] children and
    /// direct nodes: their capacities sorted on the stack by insertion, no scratch
    /// vector grown (`None` for a larger one).
    pub(super) fn fewest_children_small(&self, d: Depth, dom: &Domain, x: u64) -> Option<u32> {
        let c = d.child();
        let kids = if self.inv.is_node_level(c) {
            &[][..]
        } else {
            &self.caps.caps[c.ix()][dom.children()]
        };
        let fits = &self.caps.fits[dom.direct_nodes()];
        if kids.len() + fits.len() > SMALL {
            return None;
        }
        let mut buf = [0u64; SMALL];
        let mut n = 0usize;
        for v in kids
            .iter()
            .copied()
            .chain(fits.iter().map(|&f| u64::from(f)))
        {
            buf[n] = v;
            n += usize::from(v > 0);
        }
        Some(fewest_by_insertion(&mut buf[..n], x))
    }
}

/// Children and direct nodes up to which [`Objective::fewest_children_small`] sorts on
/// the stack.
const SMALL: usize = 32;

/// [`fewest`] by an insertion sort (largest first): the same count on a short slice.
fn fewest_by_insertion(caps: &mut [u64], x: u64) -> u32 {
    for i in 1..caps.len() {
        let v = caps[i];
        let mut j = i;
        while j > 0 && caps[j - 1] < v {
            caps[j] = caps[j - 1];
            j -= 1;
        }
        caps[j] = v;
    }
    let (mut sum, mut k) = (0u64, 0u32);
    for &c in caps.iter() {
        if sum >= x {
            break;
        }
        sum = sum.saturating_add(c);
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::super::tests::{objective, profiled};
    use super::*;
    use crate::testkit::build;
    use crate::{Gang, NodeSpec, Role};

    const GPU: &str = "gpu";

    /// Random trees of up to 40 nodes, two or three label levels (some labels missing),
    /// 8 GPUs a node with some used (fits 0 to 8, or up to 40 on some seeds).
    pub(crate) fn random_used(seed: u64) -> Inventory {
        let mut next = crate::solve::xorshift(seed | 1);
        let len = 1 + next(40);
        let three = next(2) == 0;
        let big = next(8) == 0;
        let levels: &[&str] = if three {
            &["zone", "block", "rack"]
        } else {
            &["block", "rack"]
        };
        let nodes = (0..len)
            .map(|i| {
                let z = ["x", "y"][next(2) as usize];
                let b = ["p", "q", "r"][next(3) as usize];
                let r = ["a", "b", "c", "d", "e"][next(5) as usize];
                let full = if three { vec![z, b, r] } else { vec![b, r] };
                let keep = match next(10) {
                    0 => 0,
                    1 => 1,
                    2 if three => 2,
                    _ => full.len(),
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
        build(levels, nodes)
    }

    /// The fill's vector and verdict from the profiles are the fill's own, on every
    /// domain and amount of random inventories (2–3 levels, unlabelled nodes, used
    /// capacity, members of 1 or 2 GPUs).
    #[test]
    fn the_fill_read_off_the_profiles_is_the_fill() {
        let (mut told, mut proven, mut refused) = (0u32, 0u32, 0u32);
        for seed in 1..1500u64 {
            let inv = random_used(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let per = 1 + (seed % 2) as i64;
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, per));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
            let o = objective(&inv, &c, &caps, Policy::BestFit);
            let mut lx = Lex::default();
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                if o.width(d) != 2 {
                    continue;
                }
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    let dom = *inv.domain(d, di);
                    if !o.has_child_domains(d, &dom) {
                        continue;
                    }
                    for x in 1..=caps.caps[d.ix()][di as usize] {
                        let (mut a, mut b) = ([0u32; 2], [0u32; 2]);
                        let got = o.pool_by_profile(&mut lx, d, di, &dom, x, &mut a);
                        let want = o.pool_fill(&mut lx, d, &dom, x, &mut b);
                        lx.pool.clear();
                        match got {
                            Some(p) => {
                                assert_eq!((p, a), (want, b), "seed {seed}, {x} members");
                                told += 1;
                                proven += u32::from(p);
                            }
                            None => refused += 1,
                        }
                        assert!(lx.sorted.is_empty());
                    }
                }
            }
        }
        assert!(
            told > 5000 && proven > told / 4 && proven < told && refused > 100,
            "{told} {proven} {refused}"
        );
    }

    /// The domain chosen, its members and the assignment are those of the fill by
    /// nodes, at every level, amount and policy of random inventories.
    #[test]
    fn choosing_by_the_profiles_keeps_every_choice_and_assignment() {
        let mut compared = 0u32;
        for seed in 1..700u64 {
            let inv = random_used(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                let o = objective(&inv, &c, &caps, policy);
                for t in 0..inv.label_depth() {
                    let t = Depth(t + 1);
                    let top = caps.caps[t.ix()].iter().copied().max().unwrap_or(0);
                    for count in 1..=top {
                        let run = |by_nodes: bool| {
                            let mut lx = Lex {
                                by_nodes,
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
                            (found, at.assign.clone())
                        };
                        assert_eq!(run(false), run(true), "seed {seed}, {count} at {t:?}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }
    /// The witness with the set's counts kept summed is the witness summed anew, on
    /// every width-2 domain and amount of random inventories.
    #[test]
    fn the_witness_with_running_sums_is_the_witness() {
        let (mut met, mut checked) = (0u32, 0u32);
        for seed in 1..1500u64 {
            let inv = random_used(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
            let c = inv.compile(&gang).unwrap();
            let caps = profiled(&inv, &c);
            let o = objective(&inv, &c, &caps, Policy::BestFit);
            let mut lx = Lex::default();
            for d in 0..inv.label_depth() {
                let d = Depth(d);
                for di in 0..inv.domains[d.ix()].len() as u32 {
                    for x in 1..=caps.caps[d.ix()][di as usize] {
                        let got = o.nodes_exact(&mut lx, d, di, x);
                        let want = o.nodes_exact_by_sets(&mut lx, d, di, x);
                        assert_eq!(got, want, "seed {seed}, {x} members");
                        assert!(lx.witness.is_empty() && lx.sorted.is_empty());
                        checked += 1;
                        met += u32::from(got.is_some());
                    }
                }
            }
        }
        assert!(met > 2000 && met < checked, "{met} of {checked}");
    }

    /// Counting by insertion is counting by [`fewest`], and the small path is taken.
    #[test]
    fn the_fewest_by_insertion_is_the_fewest() {
        let mut next = crate::solve::xorshift(37);
        for _ in 0..50_000 {
            let top = [3, 9, 300, u64::MAX / 4][next(4) as usize];
            let mut a: Vec<u64> = (0..next(SMALL as u64 + 1)).map(|_| next(top)).collect();
            let mut b = a.clone();
            let x = next(20 * 300);
            assert_eq!(
                fewest_by_insertion(&mut a, x),
                fewest(&mut b, x),
                "{b:?} {x}"
            );
        }
    }
}
