//! The warm single-role query's domain scan at the deepest label level: among the
//! domains that take `count` members and one node of which holds them all, the policy's
//! choice (least spare, or most free), first on ties.
//!
//! Every domain is read (no index), but a chunk of domains is passed over with one
//! branch-free test unless one of them can beat the best so far — on a cluster where
//! most racks fit, the first few chunks set a tight best and the rest cost a handful of
//! instructions per domain (issue 23: 100k HGX, required rack, 4 members).

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
}
