//! Descent: spread a number of members over a domain's children, level by level.
//!
//! At each level the members go to as few children as possible: the largest children
//! first, and for the last share the smallest child that still holds it (best fit).
//! Children already used by the gang come first (so a launcher joins its workers).
//! Under the `balanced` policy the chosen children get counts as even as their
//! capacities allow. Amounts are multiples of the level's slice granularity.

use crate::compile::CRole;
use crate::inventory::Inventory;
use crate::model::Policy;

use super::rollup::Grain;
use super::Scratch;
use crate::inventory::domains::Scope;

/// A child considered by one descent step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub cap: u64,
    pub take: u64,
    /// Child domain index, or node index when `node`.
    pub index: u32,
    pub node: bool,
    pub used: bool,
    /// Position among the siblings, for deterministic ties.
    pub pos: u32,
}

/// Assigns `need` members of `role` (index `ri`) inside `scope`, appending
/// `(role, node, count)` to `s.assign`. Capacities must come from a preceding
/// [`rollup`](super::rollup::rollup) of the same role and scope. Members taken are
/// charged to `s.taken` when `charge` is set, and every domain and node used is stamped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn descend(
    inv: &Inventory,
    role: &CRole,
    ri: u16,
    grain: Grain<'_>,
    scope: Scope,
    need: u64,
    policy: Policy,
    charge: bool,
    s: &mut Scratch,
) {
    if need == 0 {
        return;
    }
    let l = inv.label_depth();
    if scope.depth > l {
        assign(inv, role, ri, scope.index, need, charge, s);
        return;
    }
    let base = s.items.len();
    let dom = inv.domains[scope.depth][scope.index as usize];
    let stamp = s.stamp;
    let mut pos = 0u32;
    if scope.depth < l {
        for c in dom.child_start..dom.child_end {
            let cap = s.caps[scope.depth + 1][c as usize];
            if cap > 0 {
                let used = s.dom_stamp[scope.depth + 1][c as usize] == stamp;
                s.items.push(Item {
                    cap,
                    take: 0,
                    index: c,
                    node: false,
                    used,
                    pos,
                });
            }
            pos += 1;
        }
    }
    for ix in dom.direct..dom.end {
        let cap = u64::from(s.fits[ix as usize]);
        if cap > 0 {
            let used = s.node_stamp[ix as usize] == stamp;
            s.items.push(Item {
                cap,
                take: 0,
                index: ix,
                node: true,
                used,
                pos,
            });
        }
        pos += 1;
    }
    let g = grain.at(scope.depth + 1);
    choose(&mut s.items[base..], need, g, policy);
    s.dom_stamp[scope.depth][scope.index as usize] = stamp;
    for k in base..s.items.len() {
        let it = s.items[k];
        if it.take == 0 {
            continue;
        }
        if it.node {
            assign(inv, role, ri, it.index, it.take, charge, s);
        } else {
            let child = Scope {
                depth: scope.depth + 1,
                index: it.index,
            };
            descend(inv, role, ri, grain, child, it.take, policy, charge, s);
        }
    }
    s.items.truncate(base);
}

fn assign(
    inv: &Inventory,
    role: &CRole,
    ri: u16,
    ix: u32,
    count: u64,
    charge: bool,
    s: &mut Scratch,
) {
    s.assign.push((ri, ix, count as u32));
    s.node_stamp[ix as usize] = s.stamp;
    if charge {
        let nres = inv.resources.len();
        if s.touched_stamp[ix as usize] != s.stamp {
            s.touched_stamp[ix as usize] = s.stamp;
            s.touched.push(ix);
        }
        for &(r, q) in &role.req {
            s.taken[ix as usize * nres + r as usize] += q * count;
        }
    }
}

/// Sets `take` on items so that they sum to `need` (which the caps allow), using the
/// fewest items: used items first, then the largest, the last share best-fit.
pub(crate) fn choose(items: &mut [Item], need: u64, g: u64, policy: Policy) {
    items.sort_unstable_by(|a, b| {
        b.used
            .cmp(&a.used)
            .then(b.cap.cmp(&a.cap))
            .then(a.pos.cmp(&b.pos))
    });
    let mut rem = need;
    let mut first_new = items.len();
    for (k, it) in items.iter_mut().enumerate() {
        if !it.used {
            first_new = k;
            break;
        }
        let t = it.cap.min(rem);
        it.take = t;
        rem -= t;
    }
    if rem == 0 {
        return;
    }
    let rest = &mut items[first_new..];
    // Fewest items: the k largest reach `rem`.
    let mut sum = 0u64;
    let mut k = 0usize;
    while k < rest.len() && sum < rem {
        sum += rest[k].cap;
        k += 1;
    }
    if sum < rem {
        // Not enough capacity: callers only descend with a need the caps cover.
        for it in rest.iter_mut() {
            let t = it.cap.min(rem);
            it.take = t;
            rem -= t;
        }
        return;
    }
    if policy == Policy::Balanced && k > 1 {
        water_fill(&mut rest[..k], rem, g.max(1));
        return;
    }
    for it in rest[..k - 1].iter_mut() {
        it.take = it.cap;
        rem -= it.cap;
    }
    // Best fit for the last share: the smallest remaining item that holds it.
    let mut best: Option<usize> = None;
    for (j, it) in rest.iter().enumerate().skip(k - 1) {
        if it.cap >= rem {
            let better = match best {
                None => true,
                Some(b) => it.cap < rest[b].cap || (it.cap == rest[b].cap && it.pos < rest[b].pos),
            };
            if better {
                best = Some(j);
            }
        }
    }
    if let Some(b) = best {
        rest[b].take = rem;
    }
}

/// Even shares in units of `g`, capped by each item's capacity (smallest first).
fn water_fill(items: &mut [Item], need: u64, g: u64) {
    items.sort_unstable_by(|a, b| a.cap.cmp(&b.cap).then(a.pos.cmp(&b.pos)));
    let mut units = need / g;
    let n = items.len() as u64;
    for (j, it) in items.iter_mut().enumerate() {
        let left = n - j as u64;
        let share = units.div_ceil(left).min(it.cap / g);
        it.take = share * g;
        units -= share;
    }
    // Capacities cover the need, so this only runs if rounding left units behind.
    for it in items.iter_mut().rev() {
        if units == 0 {
            break;
        }
        let extra = (it.cap / g - it.take / g).min(units);
        it.take += extra * g;
        units -= extra;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(caps: &[u64]) -> Vec<Item> {
        caps.iter()
            .enumerate()
            .map(|(i, &cap)| Item {
                cap,
                take: 0,
                index: i as u32,
                node: true,
                used: false,
                pos: i as u32,
            })
            .collect()
    }

    fn takes(mut v: Vec<Item>) -> Vec<u64> {
        v.sort_by_key(|i| i.pos);
        v.iter().map(|i| i.take).collect()
    }

    #[test]
    fn fewest_then_best_fit_last() {
        let mut v = items(&[10, 3, 10, 5]);
        choose(&mut v, 12, 1, Policy::BestFit);
        // one 10 in full, then the smallest that holds 2: the 3.
        assert_eq!(takes(v), [10, 2, 0, 0]);
        let mut v = items(&[4, 8, 6]);
        choose(&mut v, 5, 1, Policy::BestFit);
        assert_eq!(takes(v), [0, 0, 5]);
    }

    #[test]
    fn balanced_is_even() {
        let mut v = items(&[15, 9, 1]);
        choose(&mut v, 16, 1, Policy::Balanced);
        assert_eq!(takes(v), [8, 8, 0]);
        let mut v = items(&[15, 2]);
        choose(&mut v, 16, 1, Policy::Balanced);
        assert_eq!(takes(v), [14, 2]);
        let mut v = items(&[8, 8, 8]);
        choose(&mut v, 12, 4, Policy::Balanced);
        let t = takes(v);
        assert_eq!(t.iter().sum::<u64>(), 12);
        assert!(t.iter().all(|x| x % 4 == 0));
    }

    #[test]
    fn used_items_first() {
        let mut v = items(&[10, 2]);
        v[1].used = true;
        choose(&mut v, 1, 1, Policy::BestFit);
        assert_eq!(takes(v), [0, 1]);
    }
}
