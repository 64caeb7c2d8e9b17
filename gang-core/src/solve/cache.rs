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

use crate::compile::{CRole, Compiled, RoleIx};
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::Inventory;

use super::causes::Kept;
use super::mask::{Applied, NodeMask, Outside};
use super::peaks;
use super::profile::{self, Profile};
use super::rollup::{node_fit, rollup_with_peaks, round_fit, Capacities, Grain};

/// At most this many shapes are kept (least recently used evicted).
const ENTRIES: usize = 16;

/// At most this many compiled gangs found by shape are remembered ([`Alias`]).
const ALIASES: usize = 64;

/// A compiled gang's role found by shape, and the entry that answered it: its next
/// lend finds the entry by pointer, without hashing and comparing the eligible nodes
/// again (a queue of many gangs of a few shapes asks about each in turn). The weak
/// reference keeps the allocation, so the address names no other gang meanwhile.
#[derive(Debug)]
struct Alias {
    gang: Weak<Compiled>,
    role: RoleIx,
    masked: bool,
    entry: usize,
    /// The entry's serial when recorded (an evicted entry's place has another).
    serial: u64,
}

#[derive(Debug)]
struct Entry {
    gang: Arc<Compiled>,
    role: RoleIx,
    /// Fingerprint of the role's eligible nodes, to find equal shapes quickly.
    elig_hash: u64,
    inventory: Weak<()>,
    version: u64,
    fits: Vec<u32>,
    caps: Vec<Vec<u64>>,
    peaks: Vec<Vec<u64>>,
    profiles: Vec<Vec<Profile>>,
    profiled: bool,
    index: super::index::Index,
    used: u64,
    /// The role's excluded nodes by cause, kept for diagnoses.
    causes: Kept,
    /// Whether the entry serves queries outside a node mask (kept apart from the
    /// entry of the same shape without one, so that neither undoes the other's work).
    masked: bool,
    /// The node mask the arrays hold (fits zeroed, [`super::mask`]).
    applied: Applied,
    /// Drawn when the entry is made ([`Alias`]).
    serial: u64,
}

/// The cache, and which entry (if any) is currently lent to the scratch space.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Vec<Entry>,
    clock: u64,
    lent: Option<usize>,
    /// Scratch: the nodes whose fit changed in a catch-up, and domains to refresh.
    moved: Vec<u32>,
    rows: Vec<u32>,
    /// The node mask lends apply while a query outside it runs ([`super::mask`]).
    pub(crate) outside: Outside,
    aliases: Vec<Alias>,
    /// The next alias to replace once full, and the last entry serial drawn.
    next_alias: usize,
    serials: u64,
}

impl Cache {
    /// Puts the up-to-date single-role capacities of role `role` of `c` into `s` (as
    /// [`rollup`] over the whole cluster would), until [`Cache::give_back`]. Returns
    /// whether the entry was brought up to date from the journal (a warm lend) rather
    /// than rolled up in full.
    pub fn lend(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        role: RoleIx,
        s: &mut Capacities,
    ) -> bool {
        debug_assert!(self.lent.is_none(), "one entry at a time");
        s.ensure(inv);
        self.clock += 1;
        let me = &inv.journal.identity.0;
        // The same compiled gang, or failing that one with the same shape (a queue of
        // identical gangs compiled one by one shares one entry).
        let r = c.role(role);
        let masked = self.outside.current().is_some();
        let by_pointer = self
            .entries
            .iter()
            .position(|e| Arc::ptr_eq(&e.gang, c) && e.role == role && e.masked == masked)
            .or_else(|| {
                let a = self.aliases.iter().find(|a| {
                    std::ptr::eq(a.gang.as_ptr(), Arc::as_ptr(c))
                        && a.role == role
                        && a.masked == masked
                })?;
                (self.entries.get(a.entry)?.serial == a.serial).then_some(a.entry)
            });
        // Hashed once per lend that misses by pointer (the search by shape and a new
        // entry both need it).
        let mut hash = None;
        let found = by_pointer.or_else(|| {
            let hash = *hash.get_or_insert_with(|| r.eligible.fingerprint());
            let i = self.entries.iter().position(|e| {
                e.elig_hash == hash && e.masked == masked && same_shape(&e.gang, e.role, c, role)
            })?;
            let alias = Alias {
                gang: Arc::downgrade(c),
                role,
                masked,
                entry: i,
                serial: self.entries[i].serial,
            };
            if self.aliases.len() < ALIASES {
                self.aliases.push(alias);
            } else {
                self.aliases[self.next_alias] = alias;
                self.next_alias = (self.next_alias + 1) % ALIASES;
            }
            Some(i)
        });
        let at = match found {
            Some(i) => i,
            None => {
                let e = Entry {
                    gang: Arc::clone(c),
                    role,
                    elig_hash: hash.unwrap_or_else(|| r.eligible.fingerprint()),
                    inventory: Weak::new(),
                    version: 0,
                    fits: Vec::new(),
                    caps: Vec::new(),
                    peaks: Vec::new(),
                    profiles: Vec::new(),
                    profiled: false,
                    index: super::index::Index::default(),
                    used: 0,
                    causes: None,
                    masked,
                    applied: Applied::default(),
                    serial: {
                        self.serials += 1;
                        self.serials
                    },
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
                    let old = std::mem::replace(&mut self.entries[i], e);
                    // The evicted entry's arrays serve the new one: the full roll-up
                    // below writes every fit, cap and peak (a stream of new shapes then
                    // allocates and zeroes nothing per shape).
                    recycle(old, &mut self.entries[i]);
                    i
                }
            }
        };
        let e = &mut self.entries[at];
        e.used = self.clock;
        if !Arc::ptr_eq(&e.gang, c) || e.role != role {
            // Found by shape: the next lend for this gang finds it by pointer, without
            // hashing the eligible nodes again (a what-if search lends thousands of
            // times per query).
            e.gang = Arc::clone(c);
            e.role = role;
        }
        let shaped = e.fits.len() == s.fits.len()
            && e.caps.len() == s.caps.len()
            && e.caps.iter().zip(&s.caps).all(|(a, b)| a.len() == b.len())
            && e.peaks.len() == s.peaks.len()
            && e.peaks
                .iter()
                .zip(&s.peaks)
                .all(|(a, b)| a.len() == b.len());
        let same = shaped && e.inventory.upgrade().is_some_and(|a| Arc::ptr_eq(&a, me));
        if !shaped {
            e.fits = vec![0; s.fits.len()];
            e.caps = s.caps.iter().map(|c| vec![0; c.len()]).collect();
            e.peaks = s.peaks.iter().map(|c| vec![0; c.len()]).collect();
            e.profiles = Vec::new();
            e.profiled = false;
        }
        swap_arrays(e, s);
        let grain = Grain::of(c, r);
        let since = inv.journal.since(e.version).filter(|_| same);
        let warm = since.is_some();
        let want = self.outside.current();
        match since {
            Some(touched) => {
                self.moved.clear();
                restore_mask(inv, r, grain, &mut e.applied, want, s, &mut self.moved);
                for &n in touched {
                    let old = s.fit(NodeIx(n));
                    if update(inv, r, grain, NodeIx(n), want, s) {
                        self.moved.push(n);
                        if s.profiled {
                            let fit = s.fit(NodeIx(n));
                            profile::moved(inv, n, old, fit, &mut s.profiles);
                        }
                    }
                }
                apply_mask(inv, grain, &mut e.applied, want, s, &mut self.moved);
                peaks::refresh_paths(inv, &self.moved, s, &mut self.rows);
                s.index.catch_up(inv, &s.caps, &self.moved);
            }
            None => {
                // The roll-up fills the peaks in the same pass; a mask applied after it
                // refreshes the rows above the nodes it zeroed.
                rollup_with_peaks(inv, r, grain, s, peaks::write_row);
                s.profiled = false;
                reset_mask(&mut e.applied);
                self.moved.clear();
                apply_mask(inv, grain, &mut e.applied, want, s, &mut self.moved);
                peaks::refresh_paths(inv, &self.moved, s, &mut self.rows);
                s.index.reset(inv);
                s.index.catch_up(inv, &s.caps, &[]);
            }
        }
        e.inventory = Arc::downgrade(me);
        e.version = inv.journal.version();
        self.lent = Some(at);
        warm
    }

    /// The lent entry's book of excluded nodes by cause, if an entry is lent.
    pub fn lent_causes(&mut self) -> Option<&mut Kept> {
        Some(&mut self.entries[self.lent?].causes)
    }

    /// Returns the lent arrays to their entry.
    pub fn give_back(&mut self, s: &mut Capacities) {
        if let Some(at) = self.lent.take() {
            swap_arrays(&mut self.entries[at], s);
        }
    }
}

/// Moves an evicted entry's arrays (and the index's room) into the entry made in its
/// place; its profiles are dropped (they are sized and filled on first use).
fn recycle(old: Entry, new: &mut Entry) {
    new.fits = old.fits;
    new.caps = old.caps;
    new.peaks = old.peaks;
    new.index = old.index;
}

/// Swaps an entry's arrays with the scratch space's (lending or giving back).
fn swap_arrays(e: &mut Entry, s: &mut Capacities) {
    std::mem::swap(&mut e.fits, &mut s.fits);
    std::mem::swap(&mut e.caps, &mut s.caps);
    std::mem::swap(&mut e.peaks, &mut s.peaks);
    std::mem::swap(&mut e.profiles, &mut s.profiles);
    std::mem::swap(&mut e.profiled, &mut s.profiled);
    std::mem::swap(&mut e.index, &mut s.index);
}

/// Whether role `ra` of `a` and role `rb` of `b` have the same fits on every node:
/// requests, per-node caps, eligibility and slice arithmetic all equal.
pub(crate) fn same_shape(a: &Compiled, ra: RoleIx, b: &Compiled, rb: RoleIx) -> bool {
    let (x, y) = (a.role(ra), b.role(rb));
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
    n: NodeIx,
    taken: Option<&[u64]>,
) -> u32 {
    if !inv.reaches(n, grain.min_leaf) {
        return 0;
    }
    round_fit(node_fit(inv, role, n, taken), grain.at(inv.node_depth()))
}

/// Brings node `n`'s contribution (zero when in `want`) and its domains' capacities up
/// to date; whether the contribution changed.
fn update(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    n: NodeIx,
    want: Option<&NodeMask>,
    s: &mut Capacities,
) -> bool {
    let fit = fit_outside(inv, role, grain, n, want);
    let changed = fit != s.fit(n);
    set_fit(inv, grain, n, fit, s);
    changed
}

/// Sets node `n`'s contribution to `fit` and adjusts every domain above it.
pub(crate) fn set_fit(inv: &Inventory, grain: Grain<'_>, n: NodeIx, fit: u32, s: &mut Capacities) {
    let old = s.fit(n);
    if fit == old {
        return;
    }
    s.fits[n.ix()] = fit;
    let (fit, old) = (u64::from(fit), u64::from(old));
    let leaf = inv.leaf_depth(n.0);
    if grain.floors.is_empty() {
        // Plain sums: add the difference along the path.
        for d in 0..=leaf {
            if let Some(dom) = inv.domain_of(n.0, d) {
                let c = &mut s.caps[d][dom as usize];
                *c = (*c + fit).wrapping_sub(old);
            }
        }
        return;
    }
    // Slice floors: recompute each ancestor from its children, innermost first.
    for d in (0..=leaf).rev().map(Depth) {
        let Some(di) = inv.domain_of(n.0, d.ix()) else {
            continue;
        };
        let dom = inv.domain(d, di);
        let mut cap: u64 = 0;
        if !inv.is_node_level(d.child()) {
            cap += s.caps[d.child().ix()][dom.children()].iter().sum::<u64>();
        }
        if d >= grain.min_leaf {
            cap += s.fits[dom.direct_nodes()]
                .iter()
                .map(|&f| u64::from(f))
                .sum::<u64>();
        }
        let floor = grain.floor_at(d);
        s.caps[d.ix()][di as usize] = cap / floor * floor;
    }
}

// Masks (see [`super::mask`]): a masked entry's arrays hold the fits outside a mask.

/// Node `n`'s fit as lent outside `want`: zero when masked, else its contribution.
fn fit_outside(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    n: NodeIx,
    want: Option<&NodeMask>,
) -> u32 {
    if want.is_some_and(|m| m.has(n.0)) {
        0
    } else {
        contribution(inv, role, grain, n, None)
    }
}

/// Sets node `n`'s fit on the lent arrays (profiles kept), noting it in `moved`.
fn move_fit(
    inv: &Inventory,
    grain: Grain<'_>,
    n: u32,
    fit: u32,
    s: &mut Capacities,
    moved: &mut Vec<u32>,
) {
    let old = s.fit(NodeIx(n));
    if old == fit {
        return;
    }
    set_fit(inv, grain, NodeIx(n), fit, s);
    if s.profiled {
        profile::moved(inv, n, old, fit, &mut s.profiles);
    }
    moved.push(n);
}

/// Before a warm entry catches up: when its arrays hold another mask than `want`, the
/// nodes of that mask (not in `want`) get their fits back.
fn restore_mask(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    applied: &mut Applied,
    want: Option<&NodeMask>,
    s: &mut Capacities,
    moved: &mut Vec<u32>,
) {
    let gen = want.map_or(0, |m| m.generation());
    if applied.generation == gen {
        return;
    }
    for &n in &applied.nodes {
        if !want.is_some_and(|m| m.has(n)) {
            let fit = contribution(inv, role, grain, NodeIx(n), None);
            move_fit(inv, grain, n, fit, s, moved);
        }
    }
    applied.nodes.clear();
    applied.generation = 0;
}

/// After the catch-up (or a full roll-up, with `applied` reset): the nodes of `want`
/// get fit zero, and the entry remembers the mask.
fn apply_mask(
    inv: &Inventory,
    grain: Grain<'_>,
    applied: &mut Applied,
    want: Option<&NodeMask>,
    s: &mut Capacities,
    moved: &mut Vec<u32>,
) {
    let Some(m) = want else {
        return;
    };
    if applied.generation == m.generation() {
        return;
    }
    for &n in m.nodes() {
        move_fit(inv, grain, n, 0, s, moved);
    }
    applied.nodes.clear();
    applied.nodes.extend_from_slice(m.nodes());
    applied.generation = m.generation();
}

/// Forgets the mask an entry held (its arrays were rolled up afresh).
fn reset_mask(applied: &mut Applied) {
    applied.nodes.clear();
    applied.generation = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::CompiledGang;
    use crate::inventory::domains::Scope;
    use crate::solve::rollup::rollup;
    use crate::{Error, Gang, NodeSpec, Role, Topology};

    use crate::testkit::{on_path, GPU};

    /// Free GPUs: a1 8, a2 1 (rack b1/a), b1 4 (rack b1/b), x1 6 (block b1, no rack),
    /// z1 3 (rack b2/c).
    fn cluster() -> Inventory {
        let n = |name: &str, path: &[&str], cap: i64, used: i64| {
            on_path(name, path).capacity(GPU, cap).used(GPU, used)
        };
        Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes([
                n("a1", &["b1", "a"], 8, 0),
                n("a2", &["b1", "a"], 8, 7),
                n("b1", &["b1", "b"], 4, 0),
                n("x1", &["b1"], 8, 2),
                n("z1", &["b2", "c"], 3, 0),
            ])
            .build()
            .unwrap()
    }

    fn dom(inv: &Inventory, path: &[&str]) -> usize {
        let d = path.len();
        (0..inv.domains[d].len())
            .find(|&i| inv.domain_values(d, i as u32) == path)
            .unwrap()
    }

    fn role(gpus: i64) -> Role {
        Role::new("w", 1).request(GPU, gpus)
    }

    fn compile(inv: &Inventory, gang: Gang) -> CompiledGang {
        inv.compile(&gang).unwrap()
    }

    /// `(rack a, rack b, rack c, block b1, block b2, cluster)` as the cache lends them.
    fn lent(cache: &mut Cache, inv: &Inventory, c: &CompiledGang, s: &mut Capacities) -> [u64; 6] {
        cache.lend(inv, &c.inner, RoleIx(0), s);
        let out = [
            s.caps[2][dom(inv, &["b1", "a"])],
            s.caps[2][dom(inv, &["b1", "b"])],
            s.caps[2][dom(inv, &["b2", "c"])],
            s.caps[1][dom(inv, &["b1"])],
            s.caps[1][dom(inv, &["b2"])],
            s.caps[0][0],
        ];
        cache.give_back(s);
        out
    }

    #[test]
    fn lent_capacities_equal_a_full_rollup_and_are_given_back() {
        let inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(&inv, Gang::new("g").role(role(2)));
        // Fits for 2 GPUs: a1 4, a2 0, b1 2, x1 3, z1 1.
        cache.lend(&inv, &c.inner, RoleIx(0), &mut s);
        assert_eq!(s.fits, [4, 0, 2, 3, 1]);
        assert_eq!(s.caps[0][0], 10);
        let lent_fits = s.fits.clone();
        cache.give_back(&mut s);
        assert!(cache.lent.is_none());
        // The entry holds the arrays again; the scratch has the (zeroed) spare ones.
        assert_eq!(cache.entries[0].fits, lent_fits);
        assert_eq!(s.fits, [0; 5]);
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 1, 9, 1, 10]);
        // give_back without a lend is a no-op.
        cache.give_back(&mut s);
        assert_eq!(cache.entries[0].fits, lent_fits);
    }

    #[test]
    fn a_touched_node_is_updated_incrementally() -> Result<(), Error> {
        let mut inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(&inv, Gang::new("g").role(role(2)));
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 1, 9, 1, 10]);
        // Mark a domain no journal entry touches: an incremental update leaves it, a
        // full roll-up would overwrite it.
        let rack_c = dom(&inv, &["b2", "c"]);
        cache.entries[0].caps[2][rack_c] = 99;
        // a1: 6 used, 2 free, one member.
        assert!(inv.set_used("a1", GPU, 6)?.is_empty());
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [1, 2, 99, 6, 1, 7]);
        assert_eq!(cache.entries[0].version, inv.journal.version());
        // Back to free: the same path, the other way.
        inv.set_used("a1", GPU, 0)?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 99, 9, 1, 10]);
        Ok(())
    }

    #[test]
    fn reserve_release_and_cordon_are_seen() -> Result<(), Error> {
        let mut inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(&inv, Gang::new("g").role(role(2)));
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 1, 9, 1, 10]);
        // Three 2-GPU members in one rack: only rack b1/a (a1) has room; a1 keeps 2 GPUs.
        let gang = Gang::new("t")
            .role(Role::new("w", 3).request(GPU, 2))
            .required("rack");
        let p = inv.place(&gang)?.placement().cloned().unwrap();
        assert_eq!(p.node_counts(), [("a1", 3)]);
        let id = inv.reserve(&p).unwrap();
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [1, 2, 1, 6, 1, 7]);
        inv.cordon("x1")?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [1, 2, 1, 3, 1, 4]);
        inv.release(id)?;
        inv.uncordon("x1")?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 1, 9, 1, 10]);
        Ok(())
    }

    #[test]
    fn slice_floors_are_recomputed_not_patched() -> Result<(), Error> {
        let mut inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(
            &inv,
            Gang::new("g")
                .role(Role::new("w", 2).request(GPU, 1))
                .required("block")
                .slice("rack", 2),
        );
        // Fits for 1 GPU: a1 8, a2 1, b1 4, z1 3; x1 has no rack. Racks a 9 -> 8, b 4,
        // c 3 -> 2.
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [8, 4, 2, 12, 2, 14]);
        // a2 gains one GPU: rack a 8 + 2 = 10 (adding the difference to the floored 8
        // would give 9).
        inv.set_used("a2", GPU, 6)?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [10, 4, 2, 14, 2, 16]);
        // z1 loses one: rack c 2 -> 2 (still one slice), then another: 0.
        inv.set_used("z1", GPU, 1)?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [10, 4, 2, 14, 2, 16]);
        inv.set_used("z1", GPU, 2)?;
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [10, 4, 0, 14, 0, 14]);
        Ok(())
    }

    #[test]
    fn another_inventory_value_is_rolled_up_in_full() -> Result<(), Error> {
        let mut inv = cluster();
        let mut other = inv.clone();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(&inv, Gang::new("g").role(role(2)));
        // Both journals at version 1, with different nodes touched.
        inv.set_used("b1", GPU, 4)?; // rack b 0
        other.set_used("a1", GPU, 8)?; // rack a 0
        assert_eq!(inv.journal.version(), other.journal.version());
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 0, 1, 7, 1, 8]);
        // Same version, other identity: must not be taken for up to date.
        assert_eq!(lent(&mut cache, &other, &c, &mut s), [0, 2, 1, 5, 1, 6]);
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 0, 1, 7, 1, 8]);
        // A rebuilt inventory (new layout) too.
        inv.add_node(
            NodeSpec::new("a3")
                .label("block", "b1")
                .label("rack", "a")
                .capacity(GPU, 4),
        )?;
        let c2 = compile(&inv, Gang::new("g").role(role(2)));
        assert_eq!(lent(&mut cache, &inv, &c2, &mut s), [6, 0, 1, 9, 1, 10]);
        Ok(())
    }

    #[test]
    fn a_journal_that_moved_past_the_entry_forces_a_full_rollup() -> Result<(), Error> {
        let mut inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let c = compile(&inv, Gang::new("g").role(role(2)));
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [4, 2, 1, 9, 1, 10]);
        // a1 changes first, then so many other touches that a1 leaves the journal.
        inv.set_used("a1", GPU, 8)?;
        let b1 = inv.names.get_index_of("b1").unwrap() as u32;
        for _ in 0..(1 << 14) {
            inv.journal.touch(b1);
        }
        assert!(inv.journal.since(cache.entries[0].version).is_none());
        assert_eq!(lent(&mut cache, &inv, &c, &mut s), [0, 2, 1, 5, 1, 6]);
        Ok(())
    }

    #[test]
    fn equal_shapes_share_an_entry() {
        let inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let lend = |cache: &mut Cache, s: &mut Capacities, gang: Gang| {
            let c = compile(&inv, gang);
            cache.lend(&inv, &c.inner, RoleIx(0), s);
            cache.give_back(s);
            cache.entries.len()
        };
        assert_eq!(lend(&mut cache, &mut s, Gang::new("a").role(role(2))), 1);
        // Another gang, other name and count, same shape: the same entry.
        let same = Gang::new("b")
            .role(Role::new("x", 7).request(GPU, 2))
            .required("rack");
        assert_eq!(lend(&mut cache, &mut s, same), 1);
        // Each of these changes the fits: a new entry each.
        assert_eq!(lend(&mut cache, &mut s, Gang::new("c").role(role(3))), 2);
        assert_eq!(
            lend(
                &mut cache,
                &mut s,
                Gang::new("d").role(role(2).max_per_node(1))
            ),
            3
        );
        let selected = Gang::new("e").role(role(2).selector("rack", "a"));
        assert_eq!(lend(&mut cache, &mut s, selected), 4);
        let sliced = Gang::new("f")
            .role(Role::new("w", 2).request(GPU, 2))
            .required("block")
            .slice("rack", 2);
        assert_eq!(lend(&mut cache, &mut s, sliced), 5);
        // Repeats of any of them add nothing.
        assert_eq!(lend(&mut cache, &mut s, Gang::new("g").role(role(3))), 5);
        // The shape test itself (the fingerprint only narrows the candidates).
        let plain = compile(&inv, Gang::new("p").role(role(2)));
        let other = compile(&inv, Gang::new("q").role(Role::new("v", 5).request(GPU, 2)));
        let picky = compile(&inv, Gang::new("r").role(role(2).selector("rack", "a")));
        assert!(same_shape(&plain.inner, RoleIx(0), &other.inner, RoleIx(0)));
        assert!(!same_shape(
            &plain.inner,
            RoleIx(0),
            &picky.inner,
            RoleIx(0)
        ));
        // Replacement caps make a role's fits its own.
        let mut capped = (*other.inner).clone();
        capped.roles[0].node_caps = vec![(NodeIx(0), 1)];
        assert!(!same_shape(&plain.inner, RoleIx(0), &capped, RoleIx(0)));
        // Shared entries answer for the gang asking: 1 GPU each on rack a is 9.
        let selected_one = compile(&inv, Gang::new("h").role(role(1).selector("rack", "a")));
        assert_eq!(
            lent(&mut cache, &inv, &selected_one, &mut s),
            [9, 0, 0, 9, 0, 9]
        );
    }

    #[test]
    fn gangs_found_by_shape_are_found_again_by_pointer() {
        let inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let a = compile(&inv, Gang::new("a").role(role(2)));
        let b = compile(&inv, Gang::new("b").role(Role::new("x", 7).request(GPU, 2)));
        for _ in 0..4 {
            assert_eq!(lent(&mut cache, &inv, &a, &mut s), [4, 2, 1, 9, 1, 10]);
            assert_eq!(lent(&mut cache, &inv, &b, &mut s), [4, 2, 1, 9, 1, 10]);
        }
        // One entry; each gang found by shape once, then through its alias.
        assert_eq!(cache.entries.len(), 1);
        assert_eq!(cache.aliases.len(), 2);
        // The entry evicted: the aliases name its place, not its shape.
        let others: Vec<CompiledGang> = (1..=ENTRIES)
            .map(|i| compile(&inv, Gang::new("o").role(role(1).max_per_node(i as u32))))
            .collect();
        for o in &others {
            cache.lend(&inv, &o.inner, RoleIx(0), &mut s);
            cache.give_back(&mut s);
        }
        assert!(!cache
            .entries
            .iter()
            .any(|e| same_shape(&e.gang, e.role, &a.inner, RoleIx(0))));
        assert_eq!(lent(&mut cache, &inv, &b, &mut s), [4, 2, 1, 9, 1, 10]);
    }

    #[test]
    fn the_least_recently_used_entry_is_evicted() {
        let inv = cluster();
        let (mut cache, mut s) = (Cache::default(), Capacities::default());
        let gangs: Vec<CompiledGang> = (1..=17)
            .map(|i| {
                compile(
                    &inv,
                    Gang::new("g").role(Role::new("w", 1).request(GPU, format!("{i}m"))),
                )
            })
            .collect();
        for c in &gangs[..16] {
            cache.lend(&inv, &c.inner, RoleIx(0), &mut s);
            cache.give_back(&mut s);
        }
        assert_eq!(cache.entries.len(), ENTRIES);
        // Use the first again, then a 17th shape: the second is the oldest.
        cache.lend(&inv, &gangs[0].inner, RoleIx(0), &mut s);
        cache.give_back(&mut s);
        cache.lend(&inv, &gangs[16].inner, RoleIx(0), &mut s);
        cache.give_back(&mut s);
        assert_eq!(cache.entries.len(), ENTRIES);
        let held = |c: &CompiledGang| cache.entries.iter().any(|e| Arc::ptr_eq(&e.gang, &c.inner));
        assert!(held(&gangs[0]));
        assert!(!held(&gangs[1]));
        assert!(held(&gangs[2]) && held(&gangs[16]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The profiles a warm entry keeps (the lexicographic objective's node bounds
        /// read them) are, after any changes followed through the journal, the profiles
        /// filled afresh from the fits of a full roll-up.
        #[test]
        fn kept_profiles_follow_the_journal(
            nodes in proptest::collection::vec((0u8..3, 0u8..4, 0i64..=8), 1..24),
            changes in proptest::collection::vec((0usize..24, 0u8..3, 0i64..=8), 1..24),
        ) {
            let mut inv = crate::testkit::eight_gpu_nodes(&nodes);
            let c = compile(&inv, Gang::new("g").role(role(1)));
            let (mut cache, mut s) = (Cache::default(), Capacities::default());
            cache.lend(&inv, &c.inner, RoleIx(0), &mut s);
            profile::fill(&inv, &s.fits, &mut s.profiles);
            s.profiled = true;
            cache.give_back(&mut s);
            for (n, what, used) in changes {
                let name = format!("n{}", n % nodes.len());
                match what {
                    0 => {
                        inv.set_used(&name, GPU, used).unwrap();
                    }
                    1 => inv.cordon(&name).unwrap(),
                    _ => inv.uncordon(&name).unwrap(),
                }
                proptest::prop_assert!(cache.lend(&inv, &c.inner, RoleIx(0), &mut s));
                proptest::prop_assert!(s.profiled);
                let mut fresh = Capacities::default();
                fresh.ensure(&inv);
                rollup(&inv, c.inner.role(RoleIx(0)), Grain::NONE, Scope::CLUSTER, None, &mut fresh);
                proptest::prop_assert_eq!(&s.fits, &fresh.fits);
                profile::fill(&inv, &fresh.fits, &mut fresh.profiles);
                proptest::prop_assert_eq!(&s.profiles, &fresh.profiles);
                cache.give_back(&mut s);
            }
        }
    }

    #[test]
    fn contribution_and_set_fit() {
        let inv = cluster();
        let mut s = Capacities::default();
        let c = compile(
            &inv,
            Gang::new("g")
                .role(Role::new("w", 2).request(GPU, 1))
                .required("block")
                .slice("rack", 2),
        );
        let r = &c.inner.roles[0];
        let grain = Grain::of(&c.inner, r);
        let at = |n: &str| NodeIx::at(inv.names.get_index_of(n).unwrap());
        // Outside the innermost slice level: nothing, whatever is free.
        assert_eq!(contribution(&inv, r, grain, at("x1"), None), 0);
        assert_eq!(contribution(&inv, r, Grain::NONE, at("x1"), None), 6);
        assert_eq!(contribution(&inv, r, grain, at("a1"), None), 8);
        let nres = inv.resources.len();
        let mut taken = vec![0u64; inv.len() * nres];
        taken[at("a1").ix() * nres] = 2500;
        assert_eq!(contribution(&inv, r, grain, at("a1"), Some(&taken)), 5);
        // Plain sums: set_fit moves every ancestor by the difference.
        s.ensure(&inv);
        rollup(&inv, r, Grain::NONE, Scope::CLUSTER, None, &mut s);
        assert_eq!(s.caps[0][0], 8 + 1 + 4 + 6 + 3);
        set_fit(&inv, Grain::NONE, at("a1"), 2, &mut s);
        assert_eq!(s.fit(at("a1")), 2);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "a"])], 3);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 3 + 4 + 6);
        assert_eq!(s.caps[0][0], 16);
        // The direct node x1 moves block and cluster only.
        set_fit(&inv, Grain::NONE, at("x1"), 0, &mut s);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "a"])], 3);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 7);
        assert_eq!(s.caps[0][0], 10);
    }
}
