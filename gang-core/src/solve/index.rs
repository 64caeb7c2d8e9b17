//! An index of the deepest label level's domain capacities, for the warm single-role
//! query's "the best domain one node of which holds the gang" ([`super::scan`]): the
//! domains sorted by `(capacity, position)`, kept current from the journal by the cache
//! (the domains of the nodes a catch-up moved), so the choice is a binary search and a
//! walk to the first domain whose peak holds the gang instead of a scan over every
//! domain (issue 23: 100k HGX, ~3,200 racks).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::inventory::Inventory;

/// The deepest label level's domains ordered by `(capacity, position)`, for the cache
/// entry whose capacities it was built from (lent with them). Built on the first lend
/// after [`ASKS`] queries at that level scanned for want of it (since the last full
/// roll-up), so one-off shapes, a solver made for one operation and shapes never
/// queried there pay nothing, and the sort (a few scans' worth) is paid only by a shape
/// asked again and again; then each lend moves the keys of the domains
/// whose capacity changed. Peaks are read live, so only capacities are indexed.
/// Scans at the level before the keys are built (sorting them costs about as much as
/// a few scans: a solver that asks once or twice, as a replacement's does, never
/// sorts).
pub(crate) const ASKS: u32 = 4;

#[derive(Debug, Default)]
pub(crate) struct Index {
    built: bool,
    /// `(capacity, position)` of every domain at the level, ascending.
    keys: Vec<(u64, u32)>,
    /// Each domain's capacity as indexed (the first half of its key).
    at: Vec<u64>,
    /// Queries that scanned for want of the keys since the last full roll-up.
    asked: AtomicU32,
}

impl Index {
    /// After a full roll-up: the keys are stale. Room for them is kept (or made, on a
    /// cold lend, which allocates anyway) so that building them on a warm lend does not
    /// allocate.
    pub(crate) fn reset(&mut self, inv: &Inventory) {
        self.built = false;
        *self.asked.get_mut() = 0;
        let n = inv.domains.last().map_or(0, Vec::len);
        self.keys.clear();
        self.at.clear();
        self.keys.reserve(n);
        self.at.reserve(n);
    }

    /// Brings the keys up to the capacities in `caps` after a catch-up that moved the
    /// nodes `moved` (every node whose fit changed), or builds them once queries
    /// asked for them often enough.
    pub(crate) fn catch_up(&mut self, inv: &Inventory, caps: &[Vec<u64>], moved: &[u32]) {
        let Some(level) = caps.len().checked_sub(1) else {
            return;
        };
        let caps = &caps[level];
        if !self.built {
            if self.asked.load(Ordering::Relaxed) >= ASKS {
                self.build(caps);
            }
            return;
        }
        for &n in moved {
            let Some(r) = inv.domain_of(n, level) else {
                continue;
            };
            let (new, old) = (caps[r as usize], self.at[r as usize]);
            if new != old {
                self.move_key(r, old, new);
            }
        }
    }

    fn build(&mut self, caps: &[u64]) {
        self.keys.clear();
        self.keys
            .extend(caps.iter().enumerate().map(|(i, &c)| (c, i as u32)));
        self.keys.sort_unstable();
        self.at.clear();
        self.at.extend_from_slice(caps);
        self.built = true;
    }

    /// Domain `r`'s capacity went from `old` to `new`: its key moves, the keys between
    /// shift by one.
    fn move_key(&mut self, r: u32, old: u64, new: u64) {
        let keys = &mut self.keys;
        let Ok(from) = keys.binary_search(&(old, r)) else {
            debug_assert!(false, "domain {r} not indexed at {old}");
            self.built = false;
            return;
        };
        let to = keys.partition_point(|&k| k < (new, r));
        if to > from {
            keys[from..to].rotate_left(1);
            keys[to - 1] = (new, r);
        } else {
            keys[to..=from].rotate_right(1);
            keys[to] = (new, r);
        }
        self.at[r as usize] = new;
    }

    /// Whether the keys are current (built, and moved at every lend since).
    pub(crate) fn is_built(&self) -> bool {
        self.built
    }

    /// A query at the level found no keys and scanned: after [`ASKS`] of them the
    /// next lend builds the keys.
    pub(crate) fn ask(&self) {
        self.asked.fetch_add(1, Ordering::Relaxed);
    }

    /// [`one_node_holds`](super::scan::one_node_holds) from the keys: the least spare is the first key from `need`
    /// on whose domain's peak reaches `count`; the most free, the first such key of the
    /// greatest capacity that has one.
    pub(crate) fn choose(
        &self,
        peaks: &[u64],
        need: u64,
        count: u64,
        most_free: bool,
    ) -> Option<(u64, u32)> {
        let holds = |i: u32| peaks.get(i as usize).is_some_and(|&p| p >= count);
        if !most_free {
            let from = self.keys.partition_point(|&(c, _)| c < need);
            return self.keys[from..]
                .iter()
                .find(|&&(_, i)| holds(i))
                .map(|&(_, i)| (count, i));
        }
        let mut hit: Option<(u64, u32)> = None;
        for &(c, i) in self.keys.iter().rev() {
            if c < need || hit.is_some_and(|(hc, _)| hc != c) {
                break;
            }
            if holds(i) {
                hit = Some((c, i));
            }
        }
        hit.map(|(_, i)| (count, i))
    }
}
