//! Peaks: for every domain, the largest capacity of a unit at each depth below it (a
//! child domain, a deeper domain, or a node; a node lacking a level's label is a unit of
//! its own at that level and every finer one). The lexicographic objective reads its
//! lower bounds off them: holding `x` members needs at least `ceil(x / peak)` units of a
//! level. Kept beside the capacities by the cache (filled after a full roll-up, and
//! refreshed along the path of every node the journal touched).

use crate::inventory::ix::Depth;
use crate::inventory::Inventory;

use super::lex::MAX_WIDTH;
use super::rollup::Capacities;

/// Fills every domain's peaks from the fits and capacities in `s` (deepest first).
/// (The cache fills them during its roll-up, `rollup::rollup_with_peaks`; this is the
/// reference the tests compare it with.)
#[cfg(test)]
pub(crate) fn fill(inv: &Inventory, s: &mut Capacities) {
    for d in (0..inv.domains.len()).rev() {
        for i in 0..inv.domains[d].len() {
            row(inv, Depth(d), i as u32, s);
        }
    }
}

/// Refreshes the peaks of every domain above the nodes `ns`, each domain once,
/// deepest first (a row reads its children's): nodes changed together mostly share
/// their racks and blocks. `rows` is scratch space.
pub(crate) fn refresh_paths(inv: &Inventory, ns: &[u32], s: &mut Capacities, rows: &mut Vec<u32>) {
    if ns.is_empty() {
        return;
    }
    for d in (0..inv.domains.len()).rev() {
        rows.clear();
        rows.extend(ns.iter().filter_map(|&n| inv.domain_of(n, d)));
        rows.sort_unstable();
        rows.dedup();
        for &di in rows.iter() {
            row(inv, Depth(d), di, s);
        }
    }
}

/// Recomputes the peaks of domain `di` at depth `d` from its children's.
fn row(inv: &Inventory, d: Depth, di: u32, s: &mut Capacities) {
    let dom = inv.domain(d, di);
    let direct = s.fits[dom.direct_nodes()]
        .iter()
        .copied()
        .max()
        .map_or(0, u64::from);
    write_row(inv, d, di, direct, s);
}

/// Writes the peaks of domain `di` at depth `d` from its children's rows and
/// capacities (already current) and `direct`, the largest fit of its direct nodes (the
/// roll-up knows it from its own pass over them).
pub(crate) fn write_row(inv: &Inventory, d: Depth, di: u32, direct: u64, s: &mut Capacities) {
    let w = inv.node_depth().ix() - d.ix();
    let dom = inv.domain(d, di);
    let mut buf = [0u64; MAX_WIDTH];
    let c = d.child();
    if !inv.is_node_level(c) {
        let (caps, peaks) = (&s.caps[c.ix()], &s.peaks[c.ix()]);
        for ci in dom.children() {
            buf[0] = buf[0].max(caps[ci]);
            let child = &peaks[ci * (w - 1)..ci * (w - 1) + w - 1];
            for (b, &p) in buf[1..w].iter_mut().zip(child) {
                *b = (*b).max(p);
            }
        }
    }
    for b in &mut buf[..w] {
        *b = (*b).max(direct);
    }
    let at = di as usize * w;
    s.peaks[d.ix()][at..at + w].copy_from_slice(&buf[..w]);
}
