//! Per-shape capacity cache: a role's per-node fits and per-domain capacities, kept from
//! one query to the next and brought up to date from the inventory's journal of touched
//! nodes, so a warm query costs O(domains at the level) rather than O(nodes).
//!
//! An entry is keyed by the compiled gang (pointer identity; the entry keeps it alive)
//! and the role index, and remembers which inventory value (by identity) and which
//! journal version it reflects. A clone or rebuild of the inventory has a new identity,
//! and a journal that moved past the entry's version forces a full roll-up, so the
//! cache can only be stale in the cheap direction: recomputed.

use std::sync::{Arc, Weak};

use crate::compile::{CRole, Compiled};
use crate::inventory::Inventory;

use super::rollup::{node_fit, rollup, Grain, Scope};
use super::Scratch;

/// At most this many shapes are kept (least recently used evicted).
const ENTRIES: usize = 16;

#[derive(Debug)]
struct Entry {
    gang: Arc<Compiled>,
    role: usize,
    /// Fingerprint of the role's eligible nodes, to find equal shapes quickly.
    elig_hash: u64,
    inventory: Weak<()>,
    version: u64,
    fits: Vec<u32>,
    caps: Vec<Vec<u64>>,
    used: u64,
}

/// The cache, and which entry (if any) is currently lent to the scratch space.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Vec<Entry>,
    clock: u64,
    lent: Option<usize>,
}

impl Cache {
    /// Puts the up-to-date single-role capacities of `c.roles[role]` into `s.fits` and
    /// `s.caps` (as [`rollup`] over the whole cluster would), until [`Cache::give_back`].
    pub fn lend(&mut self, inv: &Inventory, c: &Arc<Compiled>, role: usize, s: &mut Scratch) {
        debug_assert!(self.lent.is_none(), "one entry at a time");
        s.ensure(inv);
        self.clock += 1;
        let me = &inv.journal.identity.0;
        // The same compiled gang, or failing that one with the same shape (a queue of
        // identical gangs compiled one by one shares one entry).
        let r = &c.roles[role];
        let found = self
            .entries
            .iter()
            .position(|e| Arc::ptr_eq(&e.gang, c) && e.role == role)
            .or_else(|| {
                let hash = r.eligible.fingerprint();
                self.entries
                    .iter()
                    .position(|e| e.elig_hash == hash && same_shape(&e.gang, e.role, c, role))
            });
        let at = match found {
            Some(i) => i,
            None => {
                let e = Entry {
                    gang: Arc::clone(c),
                    role,
                    elig_hash: r.eligible.fingerprint(),
                    inventory: Weak::new(),
                    version: 0,
                    fits: Vec::new(),
                    caps: Vec::new(),
                    used: 0,
                };
                if self.entries.len() < ENTRIES {
                    self.entries.push(e);
                    self.entries.len() - 1
                } else {
                    let (i, _) = self
                        .entries
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, e)| e.used)
                        .unwrap_or((0, &self.entries[0]));
                    self.entries[i] = e;
                    i
                }
            }
        };
        let e = &mut self.entries[at];
        e.used = self.clock;
        let shaped = e.fits.len() == s.fits.len()
            && e.caps.len() == s.caps.len()
            && e.caps.iter().zip(&s.caps).all(|(a, b)| a.len() == b.len());
        let same = shaped && e.inventory.upgrade().is_some_and(|a| Arc::ptr_eq(&a, me));
        if !shaped {
            e.fits = vec![0; s.fits.len()];
            e.caps = s.caps.iter().map(|c| vec![0; c.len()]).collect();
        }
        std::mem::swap(&mut e.fits, &mut s.fits);
        std::mem::swap(&mut e.caps, &mut s.caps);
        let grain = Grain::of(c, r);
        match inv.journal.since(e.version).filter(|_| same) {
            Some(touched) => {
                for &n in touched {
                    update(inv, r, grain, n, s);
                }
            }
            None => {
                rollup(inv, r, grain, Scope::CLUSTER, None, s);
            }
        }
        e.inventory = Arc::downgrade(me);
        e.version = inv.journal.version();
        self.lent = Some(at);
    }

    /// Returns the lent arrays to their entry.
    pub fn give_back(&mut self, s: &mut Scratch) {
        if let Some(at) = self.lent.take() {
            let e = &mut self.entries[at];
            std::mem::swap(&mut e.fits, &mut s.fits);
            std::mem::swap(&mut e.caps, &mut s.caps);
        }
    }
}

/// Whether role `ra` of `a` and role `rb` of `b` have the same fits on every node:
/// requests, per-node caps, eligibility and slice arithmetic all equal.
fn same_shape(a: &Compiled, ra: usize, b: &Compiled, rb: usize) -> bool {
    let (x, y) = (&a.roles[ra], &b.roles[rb]);
    let (gx, gy) = (Grain::of(a, x), Grain::of(b, y));
    x.req == y.req
        && x.per_node == y.per_node
        && x.node_caps.is_empty()
        && y.node_caps.is_empty()
        && x.missing.is_empty() == y.missing.is_empty()
        && gx.gran == gy.gran
        && gx.min_leaf == gy.min_leaf
        && gx.floors == gy.floors
        && x.eligible == y.eligible
}

/// Node `n`'s contribution now (with `taken` charged), as the roll-up computes it.
pub(crate) fn contribution(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    n: u32,
    taken: Option<&[u64]>,
) -> u32 {
    if inv.leaf_depth(n) < grain.min_leaf {
        return 0;
    }
    let f = u64::from(node_fit(inv, role, n as usize, taken));
    let g = grain.at(inv.label_depth() + 1);
    (if g > 1 { f / g * g } else { f }) as u32
}

/// Brings node `n`'s contribution and its domains' capacities up to date.
fn update(inv: &Inventory, role: &CRole, grain: Grain<'_>, n: u32, s: &mut Scratch) {
    let fit = contribution(inv, role, grain, n, None);
    set_fit(inv, grain, n, fit, s);
}

/// Sets node `n`'s contribution to `fit` and adjusts every domain above it.
pub(crate) fn set_fit(inv: &Inventory, grain: Grain<'_>, n: u32, fit: u32, s: &mut Scratch) {
    let (fit, old) = (u64::from(fit), u64::from(s.fits[n as usize]));
    if fit == old {
        return;
    }
    s.fits[n as usize] = fit as u32;
    let l = inv.label_depth();
    let leaf = inv.leaf_depth(n);
    if grain.floors.is_empty() {
        // Plain sums: add the difference along the path.
        for d in 0..=leaf {
            if let Some(dom) = inv.domain_of(n, d) {
                let c = &mut s.caps[d][dom as usize];
                *c = (*c + fit).wrapping_sub(old);
            }
        }
        return;
    }
    // Slice floors: recompute each ancestor from its children, innermost first.
    for d in (0..=leaf).rev() {
        let Some(di) = inv.domain_of(n, d) else {
            continue;
        };
        let dom = inv.domains[d][di as usize];
        let mut cap: u64 = 0;
        if d < l {
            cap += s.caps[d + 1][dom.child_start as usize..dom.child_end as usize]
                .iter()
                .sum::<u64>();
        }
        if d >= grain.min_leaf {
            cap += s.fits[dom.direct as usize..dom.end as usize]
                .iter()
                .map(|&f| u64::from(f))
                .sum::<u64>();
        }
        let floor = grain
            .floors
            .iter()
            .find(|&&(fd, _)| fd == d)
            .map_or(1, |&(_, sz)| u64::from(sz));
        s.caps[d][di as usize] = cap / floor * floor;
    }
}
