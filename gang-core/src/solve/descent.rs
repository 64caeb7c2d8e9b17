//! Descent: spread a number of members over a domain's children, level by level.
//!
//! At each level the members go to as few children as possible: the largest children
//! first, and for the last share the smallest child that still holds it (best fit).
//! Children already used by the gang come first (so a launcher joins its workers).
//! Under the `balanced` policy the chosen children get counts as even as their
//! capacities allow. Amounts are multiples of the level's slice granularity.

use crate::compile::{CRole, Compiled, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::ix::NodeIx;
use crate::inventory::ledger::Member;
use crate::inventory::Inventory;
use crate::model::Policy;

use super::rollup::{Capacities, Grain};

/// A child of a domain, as one descent step sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// A child domain (its index at the next depth).
    Domain(u32),
    /// A node directly in the domain (no label of the next level).
    Node(NodeIx),
}

/// A child considered by one descent step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub cap: u64,
    pub take: u64,
    pub child: Child,
    /// Already used by the gang in this attempt.
    pub used: bool,
    /// Position among the siblings, for deterministic ties.
    pub pos: u32,
}

/// One role's descent: whose members, how they are cut into slices and how children are
/// chosen. What its members take is recorded in the attempt, so that roles placed later
/// see only what is left.
pub(crate) struct Descent<'a> {
    pub inv: &'a Inventory,
    pub role: &'a CRole,
    pub ri: RoleIx,
    pub grain: Grain<'a>,
    pub policy: Policy,
}

impl<'a> Descent<'a> {
    /// The descent for role `ri` of `c`, with its slice grain and the gang's policy.
    pub fn new(inv: &'a Inventory, c: &'a Compiled, ri: RoleIx) -> Descent<'a> {
        let role = c.role(ri);
        Descent {
            inv,
            role,
            ri,
            grain: Grain::of(c, role),
            policy: c.policy,
        }
    }

    /// Assigns `need` members inside `scope`, appending `(role, node, count)` to
    /// `at.assign`. `caps` must come from a preceding
    /// [`rollup`](super::rollup::rollup) of the same role and scope (or the cache). Every
    /// domain and node used is stamped with the attempt's number.
    pub fn run(&self, scope: Scope, need: u64, caps: &Capacities, at: &mut Attempt) {
        if need == 0 {
            return;
        }
        let inv = self.inv;
        if inv.is_node_level(scope.depth) {
            self.assign(scope.node(), need, at);
            return;
        }
        let base = at.items.len();
        let (depth, child) = (scope.depth, scope.depth.child());
        let dom = inv.domain(depth, scope.index);
        let stamp = at.stamp;
        let mut pos = 0u32;
        if !inv.is_node_level(child) {
            let (caps, stamps) = (&caps.caps[child.ix()], &at.dom_stamp[child.ix()]);
            for c in dom.child_start..dom.child_end {
                let cap = caps[c as usize];
                if cap > 0 {
                    at.items.push(Item {
                        cap,
                        take: 0,
                        child: Child::Domain(c),
                        used: stamps[c as usize] == stamp,
                        pos,
                    });
                }
                pos += 1;
            }
        }
        for ix in dom.direct..dom.end {
            let n = NodeIx(ix);
            let cap = u64::from(caps.fit(n));
            if cap > 0 {
                at.items.push(Item {
                    cap,
                    take: 0,
                    child: Child::Node(n),
                    used: at.node_stamp[n.ix()] == stamp,
                    pos,
                });
            }
            pos += 1;
        }
        choose(
            &mut at.items[base..],
            need,
            self.grain.at(child),
            self.policy,
        );
        at.dom_stamp[depth.ix()][scope.ix()] = stamp;
        for k in base..at.items.len() {
            let it = at.items[k];
            if it.take == 0 {
                continue;
            }
            match it.child {
                Child::Node(n) => self.assign(n, it.take, at),
                Child::Domain(c) => self.run(Scope::new(child, c), it.take, caps, at),
            }
        }
        at.items.truncate(base);
    }

    /// `count` members on node `n`.
    fn assign(&self, n: NodeIx, count: u64, at: &mut Attempt) {
        // At most the node's fit, a u32.
        at.assign.push(member(self.ri, n, count as u32));
        at.node_stamp[n.ix()] = at.stamp;
        take(self.inv, self.role, n, count, at);
    }
}

/// Charges `count` members of `role` on node `n` to the attempt (what they take).
fn take(inv: &Inventory, role: &CRole, n: NodeIx, count: u64, at: &mut Attempt) {
    let nres = inv.resources.len();
    if at.touched_stamp[n.ix()] != at.stamp {
        at.touched_stamp[n.ix()] = at.stamp;
        at.touched.push(n);
    }
    for &(r, q) in &role.req {
        at.taken[n.ix() * nres + r as usize] += q * count;
    }
}

/// Records `count` members of `role` on node `n`, placed elsewhere than by a descent,
/// in the attempt: the member, what it takes, and the node and its domains as used.
pub(crate) fn charge(
    inv: &Inventory,
    role: (RoleIx, &CRole),
    n: NodeIx,
    count: u32,
    at: &mut Attempt,
) {
    let (ri, role) = role;
    at.assign.push(member(ri, n, count));
    at.node_stamp[n.ix()] = at.stamp;
    for d in 0..=inv.leaf_depth(n.0) {
        if let Some(di) = inv.domain_of(n.0, d) {
            at.dom_stamp[d][di as usize] = at.stamp;
        }
    }
    take(inv, role, n, u64::from(count), at);
}

/// A member record `(role, node, count)` as placements and reservations keep it.
#[inline]
pub(crate) fn member(role: RoleIx, node: NodeIx, count: u32) -> Member {
    (role.0, node.0, count)
}

/// The packing attempt under way: the members assigned so far, which domains and nodes
/// they use (stamped with the attempt's number), and what they take from each node (so
/// that later roles of the same attempt see only what is left).
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    layout: u64,
    /// `(role, node, count)` assigned so far.
    pub assign: Vec<Member>,
    /// This attempt's number: a domain or node stamped with it is used by the gang.
    pub stamp: u32,
    /// `[node]`: the last attempt that used the node.
    pub node_stamp: Vec<u32>,
    /// `[depth][domain]`: the last attempt that used the domain.
    pub dom_stamp: Vec<Vec<u32>>,
    /// `[node * resources + resource]`: what the members assigned so far take.
    pub taken: Vec<u64>,
    /// Nodes with something in `taken`, each once (`touched_stamp`).
    pub touched: Vec<NodeIx>,
    /// `[node]`: the last attempt that charged the node.
    pub touched_stamp: Vec<u32>,
    /// Descent's work list: the children considered at each level.
    pub items: Vec<Item>,
}

impl Attempt {
    /// Sizes the per-node and per-domain arrays for `inv` (a no-op when already sized
    /// for its layout).
    pub fn ensure(&mut self, inv: &Inventory) {
        let n = inv.len();
        if self.layout == inv.layout_id
            && self.node_stamp.len() == n
            && self.dom_stamp.len() == inv.domains.len()
        {
            return;
        }
        self.layout = inv.layout_id;
        self.dom_stamp = inv.domains.iter().map(|l| vec![0; l.len()]).collect();
        self.node_stamp = vec![0; n];
        self.touched_stamp = vec![0; n];
        self.taken = vec![0; n * inv.resources.len()];
        self.touched.clear();
        self.stamp = 0;
    }

    /// Starts a fresh packing attempt: no node charged, nothing used, nothing assigned.
    pub fn fresh(&mut self, nres: usize) {
        for &n in &self.touched {
            let ix = n.ix();
            self.taken[ix * nres..ix * nres + nres].fill(0);
        }
        self.touched.clear();
        self.assign.clear();
        if self.stamp == u32::MAX {
            self.stamp = 0;
            self.node_stamp.fill(0);
            self.touched_stamp.fill(0);
            self.dom_stamp.iter_mut().for_each(|v| v.fill(0));
        }
        self.stamp += 1;
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
                child: Child::Node(NodeIx::at(i)),
                used: false,
                pos: u32::try_from(i).unwrap(),
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
