//! The warm single-role query's domain scan at the deepest label level: among the
//! domains that take `count` members and one node of which holds them all, the policy's
//! choice (least spare, or most free), first on ties.
//!
//! A cache entry that asked for it keeps an [`Index`](super::index::Index): the level's domains sorted by
//! capacity, kept current from the journal (the racks of the nodes a catch-up moved),
//! so the choice is a binary search and a walk to the first domain one node of which
//! holds the gang (issue 23: 100k HGX, required rack, 4 members, ~3,200 racks). Without
//! one every domain is read, but a chunk of domains is passed over with one branch-free
//! test unless one of them can beat the best so far.

use crate::inventory::ix::Depth;

use super::rollup::Capacities;

/// [`one_node_holds`] over the capacities and peaks of depth `t` in `s` (one peak per
/// domain: `t` is the deepest label level), from the lent entry's index when it has
/// one; otherwise the scan, and the index is asked for.
pub(crate) fn best_holding(
    s: &Capacities,
    t: Depth,
    need: u64,
    count: u64,
    most_free: bool,
) -> Option<(u64, u32)> {
    let (caps, peaks) = (&s.caps[t.ix()], &s.peaks[t.ix()]);
    let ix = &s.index;
    let deepest = t.ix() + 1 == s.caps.len();
    if deepest && ix.is_built() {
        let found = ix.choose(peaks, need, count, most_free);
        debug_assert_eq!(
            found,
            one_node_holds(caps, peaks, need, count, most_free),
            "the index chose another domain than the scan"
        );
        return found;
    }
    if deepest {
        ix.ask();
    }
    one_node_holds(caps, peaks, need, count, most_free)
}

/// Domains tested per branch.
const CHUNK: usize = 32;

/// Among positions `i` with `caps[i] >= need` and `peaks[i] >= count`, the one whose
/// tie key (`caps[i] - count`, or its complement when `most_free`) is least, the first
/// among equals: `(count, i)`. Stops at a key of 0 (nothing can beat it).
pub(crate) fn one_node_holds(
    caps: &[u64],
    peaks: &[u64],
    need: u64,
    count: u64,
    most_free: bool,
) -> Option<(u64, u32)> {
    let flip = if most_free { u64::MAX } else { 0 };
    let key = |cap: u64| cap.wrapping_sub(count) ^ flip;
    let fits = |cap: u64, p: u64| (cap >= need) & (p >= count);
    let mut best: Option<(u64, u32)> = None;
    // The best's capacity: only a domain that fits with less spare (more, when
    // `most_free`) can replace it, which is one comparison of its capacity: `need <=
    // cap < best` (`cap > best`).
    let mut bc = 0u64;
    let len = caps.len().min(peaks.len());
    let (caps, peaks) = (&caps[..len], &peaks[..len]);
    let mut start = 0;
    while start < len {
        let end = (start + CHUNK).min(len);
        let (cs, ps) = (&caps[start..end], &peaks[start..end]);
        let promising = match best {
            None => cs
                .iter()
                .zip(ps)
                .fold(false, |any, (&c, &p)| any | fits(c, p)),
            Some(_) if cs.len() == CHUNK => {
                let (cs, ps): (&[u64; CHUNK], &[u64; CHUNK]) =
                    (cs.try_into().unwrap(), ps.try_into().unwrap());
                let mut any = false;
                if most_free {
                    for j in 0..CHUNK {
                        any |= (cs[j] > bc) & (ps[j] >= count);
                    }
                } else {
                    let span = bc - need;
                    for j in 0..CHUNK {
                        any |= (cs[j].wrapping_sub(need) < span) & (ps[j] >= count);
                    }
                }
                any
            }
            Some(_) => true,
        };
        if promising {
            for (j, (&cap, &p)) in cs.iter().zip(ps).enumerate() {
                if fits(cap, p) {
                    let tie = key(cap);
                    if best.is_none_or(|(bt, _)| tie < bt) {
                        best = Some((tie, (start + j) as u32));
                        bc = cap;
                    }
                }
            }
            if best.is_some_and(|(bt, _)| bt == 0) {
                break;
            }
        }
        start = end;
    }
    best.map(|(_, i)| (count, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan before chunks were passed over by their best key (one by one).
    fn one_by_one(
        caps: &[u64],
        peaks: &[u64],
        need: u64,
        count: u64,
        most_free: bool,
    ) -> Option<(u64, u32)> {
        let mut best: Option<(u64, u32)> = None;
        for (i, (&cap, &p)) in caps.iter().zip(peaks).enumerate() {
            if cap >= need && p >= count {
                let spare = cap - count;
                let tie = if most_free { !spare } else { spare };
                if best.is_none_or(|(bt, _)| tie < bt) {
                    best = Some((tie, i as u32));
                    if tie == 0 {
                        break;
                    }
                }
            }
        }
        best.map(|(_, i)| (count, i))
    }

    #[test]
    fn the_chunked_scan_chooses_as_one_by_one() {
        let mut next = crate::solve::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..4000 {
            let len = usize::try_from(next(60)).unwrap();
            let caps: Vec<u64> = (0..len)
                .map(|_| match next(8) {
                    0 => u64::MAX - next(3),
                    1..=4 => next(4),
                    _ => next(40),
                })
                .collect();
            let peaks: Vec<u64> = caps.iter().map(|&c| c.min(next(12))).collect();
            let count = next(6);
            let need = count + next(3);
            for most_free in [false, true] {
                assert_eq!(
                    one_node_holds(&caps, &peaks, need, count, most_free),
                    one_by_one(&caps, &peaks, need, count, most_free),
                    "{caps:?} {peaks:?} {need} {count} {most_free}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// Through reservations, releases, cordons and usage changes followed by the
        /// cache's journal, the indexed choice at the rack level is the one-by-one
        /// scan's for every gang size, need and policy, after every operation.
        #[test]
        fn the_index_chooses_as_the_scan_through_the_lifecycle(
            nodes in proptest::collection::vec((0u8..4, 0u8..4, 0i64..=8), 1..64),
            ops in proptest::collection::vec((0u8..5, 0usize..64, 1u32..7, 0i64..=8), 1..40),
        ) {
            use crate::solve::cache::Cache;
            use crate::testkit::GPU;
            use crate::{Gang, Role, Solver};
            let mut inv = crate::testkit::eight_gpu_nodes(&nodes);
            let rack = Depth(2);
            let shape = inv
                .compile(&Gang::new("g").role(Role::new("w", 1).request(GPU, 1)).required("rack"))
                .unwrap();
            let (mut cache, mut s) = (Cache::default(), Capacities::default());
            // Queries scan and ask for the index; the lend after the last ask builds it.
            proptest::prop_assert!(!cache.lend(&inv, &shape.inner, crate::compile::RoleIx(0), &mut s));
            for _ in 0..crate::solve::index::ASKS {
                proptest::prop_assert!(!s.index.is_built());
                best_holding(&s, rack, 1, 1, false);
                cache.give_back(&mut s);
                cache.lend(&inv, &shape.inner, crate::compile::RoleIx(0), &mut s);
            }
            proptest::prop_assert!(s.index.is_built());
            cache.give_back(&mut s);
            let mut solver = Solver::new();
            let mut held = Vec::new();
            for (what, n, k, used) in ops {
                let name = format!("n{}", n % nodes.len());
                match what {
                    0 => {
                        let gang = Gang::new("r")
                            .role(Role::new("w", k).request(GPU, 1))
                            .required(if k % 2 == 0 { "rack" } else { "block" });
                        let c = inv.compile(&gang).unwrap();
                        if let Some(p) = inv.find_with(&mut solver, &c).unwrap() {
                            held.push(inv.reserve(&p).unwrap());
                        }
                    }
                    1 if !held.is_empty() => {
                        let id = held.swap_remove(n % held.len());
                        inv.release(id).unwrap();
                    }
                    2 => inv.cordon(&name).unwrap(),
                    3 => inv.uncordon(&name).unwrap(),
                    _ => {
                        inv.set_used(&name, GPU, used).unwrap();
                    }
                }
                proptest::prop_assert!(cache.lend(&inv, &shape.inner, crate::compile::RoleIx(0), &mut s));
                proptest::prop_assert!(s.index.is_built());
                let (caps, peaks) = (&s.caps[rack.ix()], &s.peaks[rack.ix()]);
                for count in 1..=9 {
                    for need in count..count + 3 {
                        for most_free in [false, true] {
                            proptest::prop_assert_eq!(
                                s.index.choose(peaks, need, count, most_free),
                                one_by_one(caps, peaks, need, count, most_free),
                                "{:?} {:?} {} {} {}", caps, peaks, need, count, most_free
                            );
                        }
                    }
                }
                cache.give_back(&mut s);
            }
        }
    }
}
