//! The branch and bound of the victim search (the parent's docs, step 3): one
//! domain's candidates and what they free, the lower bound on what any plan there
//! costs, and the depth-first walk that evicts or spares each candidate in turn.

use smallvec::{smallvec, SmallVec};

use crate::model::Error;

use super::{clamp, Asked, Search};

/// The domain search's view of one domain: its candidates (cheapest first), what they
/// free, and what the constrained members lack there.
pub(super) struct DomainView {
    /// The domain of the gang's level (`None`: the view of the candidates that only
    /// help unconstrained roles).
    pub domain: Option<u32>,
    /// Candidate indices, in search order.
    items: Vec<u32>,
    /// `freed[k][r]`: what item `k` frees of requested resource `r` in the domain.
    freed: Vec<Vec<u128>>,
    /// Per requested resource: constrained demand minus free room (may be negative).
    lack: Vec<i128>,
    /// Per requested resource: items (positions in `items`) by decreasing `freed`.
    by_amount: Vec<Vec<u32>>,
    /// Per (cost component, requested resource): items by increasing cost per unit
    /// freed (items freeing none left out).
    by_ratio: Vec<Vec<Vec<u32>>>,
}

pub(super) fn view(
    s: &Search<'_, '_>,
    domain: Option<u32>,
    mut list: Vec<(u32, Vec<u128>)>,
    lack: Vec<i128>,
) -> DomainView {
    list.sort_by(|a, b| {
        s.cands[a.0 as usize]
            .cost
            .cmp(&s.cands[b.0 as usize].cost)
            .then(a.0.cmp(&b.0))
    });
    let items: Vec<u32> = list.iter().map(|x| x.0).collect();
    let freed: Vec<Vec<u128>> = list.into_iter().map(|x| x.1).collect();
    let nres = lack.len();
    let by_amount = (0..nres)
        .map(|r| {
            let mut v: Vec<u32> = (0..items.len() as u32)
                .filter(|&k| freed[k as usize][r] > 0)
                .collect();
            v.sort_by(|&a, &b| {
                freed[b as usize][r]
                    .cmp(&freed[a as usize][r])
                    .then(a.cmp(&b))
            });
            v
        })
        .collect();
    let ncost = s.cands.first().map_or(0, |c| c.cost.len());
    let by_ratio = (0..ncost)
        .map(|j| {
            (0..nres)
                .map(|r| {
                    let mut v: Vec<u32> = (0..items.len() as u32)
                        .filter(|&k| freed[k as usize][r] > 0)
                        .collect();
                    let cost = |k: u32| s.cands[items[k as usize] as usize].cost[j];
                    // cost(a) / freed(a) < cost(b) / freed(b), by cross products.
                    v.sort_by(|&a, &b| {
                        let l = cost(a).saturating_mul(freed[b as usize][r]);
                        let rr = cost(b).saturating_mul(freed[a as usize][r]);
                        l.cmp(&rr).then(a.cmp(&b))
                    });
                    v
                })
                .collect()
        })
        .collect();
    DomainView {
        domain,
        items,
        freed,
        lack,
        by_amount,
        by_ratio,
    }
}

/// A lower bound on `(cost, count)` of any plan that evicts `chosen` (positions in the
/// view) and some of the items from `from` on, or `None` when none can meet the
/// domain's aggregate lack. `failed`: `chosen` itself was asked and does not fit.
pub(super) fn bound(
    s: &Search<'_, '_>,
    v: &DomainView,
    from: usize,
    chosen: &[u32],
    failed: bool,
) -> Option<(Vec<u128>, usize)> {
    let ncost = s.cands.first().map_or(0, |c| c.cost.len());
    let mut cost = vec![0u128; ncost];
    for &k in chosen {
        for (a, b) in cost
            .iter_mut()
            .zip(&s.cands[v.items[k as usize] as usize].cost)
        {
            *a = a.saturating_add(*b);
        }
    }
    let mut extra_count = usize::from(failed);
    let mut extra_cost = vec![0u128; ncost];
    for r in 0..v.lack.len() {
        let mut lack = v.lack[r];
        for &k in chosen {
            lack -= clamp(v.freed[k as usize][r]);
        }
        if lack <= 0 {
            continue;
        }
        // The fewest further items whose amounts reach the lack.
        let (mut got, mut n) = (0i128, 0usize);
        for &k in &v.by_amount[r] {
            if (k as usize) < from {
                continue;
            }
            got += clamp(v.freed[k as usize][r]);
            n += 1;
            if got >= lack {
                break;
            }
        }
        if got < lack {
            return None;
        }
        extra_count = extra_count.max(n);
        // The least cost of freeing the lack, items taken fractionally.
        for (j, order) in v.by_ratio.iter().enumerate() {
            let mut need = lack as u128;
            let mut c = 0u128;
            for &k in &order[r] {
                if (k as usize) < from {
                    continue;
                }
                let f = v.freed[k as usize][r];
                let ck = s.cands[v.items[k as usize] as usize].cost[j];
                if f >= need {
                    // Floor: a lower bound.
                    c = c.saturating_add(ck.saturating_mul(need) / f);
                    need = 0;
                    break;
                }
                c = c.saturating_add(ck);
                need -= f;
            }
            debug_assert_eq!(need, 0);
            extra_cost[j] = extra_cost[j].max(c);
        }
    }
    for (a, b) in cost.iter_mut().zip(&extra_cost) {
        *a = a.saturating_add(*b);
    }
    Some((cost, chosen.len() + extra_count))
}

/// Depth-first branch and bound over the view's items from `from` on, `chosen`
/// evicted on the scratch copy.
pub(super) fn dfs(
    s: &mut Search<'_, '_>,
    v: &DomainView,
    from: usize,
    chosen: &mut Vec<u32>,
) -> Result<(), Error> {
    s.work += 1;
    if s.out_of_work() {
        return Ok(());
    }
    let mut failed = false;
    let met = !chosen.is_empty()
        && (0..v.lack.len()).all(|r| {
            let mut lack = v.lack[r];
            for &k in chosen.iter() {
                lack -= clamp(v.freed[k as usize][r]);
            }
            lack <= 0
        });
    if met {
        if let Some(b) = &s.best {
            // Costlier than the best plan already: so is every superset (none is
            // asked about, whether it fits or not).
            let mut cost: SmallVec<[u128; 4]> = smallvec![0; b.cost.len()];
            for &k in chosen.iter() {
                let c = &s.cands[v.items[k as usize] as usize].cost;
                for (a, x) in cost.iter_mut().zip(c) {
                    *a = a.saturating_add(*x);
                }
            }
            if (cost.as_slice(), chosen.len()) > b.key() {
                return Ok(());
            }
        }
        let set: Vec<u32> = chosen.iter().map(|&k| v.items[k as usize]).collect();
        match s.try_set(&set, v.domain)? {
            // A plan (offered); its supersets cost no less and evict more.
            Asked::Fits | Asked::FitsBefore => return Ok(()),
            Asked::No => failed = true,
        }
    }
    if from == v.items.len() {
        return Ok(());
    }
    let Some(lb) = bound(s, v, from, chosen, failed) else {
        return Ok(());
    };
    if let Some(b) = &s.best {
        if (lb.0.as_slice(), lb.1) > b.key() {
            return Ok(());
        }
    }
    // Evict item `from`, then spare it.
    chosen.push(from as u32);
    dfs(s, v, from + 1, chosen)?;
    chosen.pop();
    dfs(s, v, from + 1, chosen)
}
