//! The solver's reusable scratch space.

use crate::inventory::Inventory;

use super::descent::Item;

/// Reusable scratch space, so that repeated queries do not allocate beyond their result.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub layout: u64,
    pub fits: Vec<u32>,
    pub caps: Vec<Vec<u64>>,
    pub items: Vec<Item>,
    pub taken: Vec<u64>,
    pub touched: Vec<u32>,
    pub touched_stamp: Vec<u32>,
    pub dom_stamp: Vec<Vec<u32>>,
    pub node_stamp: Vec<u32>,
    pub stamp: u32,
    pub assign: Vec<(u16, u32, u32)>,
    pub best_assign: Vec<(u16, u32, u32)>,
    pub role_caps: Vec<Vec<u64>>,
    pub cands: Vec<Cand>,
    pub order: Vec<u16>,
    pub search_nodes: Vec<u32>,
    pub search_fit: Vec<u32>,
    pub search_order: Vec<u32>,
    pub sfit: Vec<u32>,
    pub sfree: Vec<u64>,
    pub suf_fit: Vec<u64>,
    pub suf_free: Vec<u128>,
    pub pattern: Vec<u32>,
    /// Distinct domain ids while building a placement.
    pub seen: Vec<u32>,
    /// Cached fits patched for one greedy step, to restore.
    pub undo: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Cand {
    pub upper: u64,
    pub score: u64,
    pub index: u32,
}

impl Scratch {
    /// Sizes every buffer for `inv` (a no-op when already sized for its layout).
    pub fn ensure(&mut self, inv: &Inventory) {
        let n = inv.len();
        if self.layout == inv.layout_id
            && self.fits.len() == n
            && self.caps.len() == inv.domains.len()
        {
            return;
        }
        self.layout = inv.layout_id;
        self.fits = vec![0; n];
        self.caps = inv.domains.iter().map(|l| vec![0; l.len()]).collect();
        self.dom_stamp = inv.domains.iter().map(|l| vec![0; l.len()]).collect();
        self.node_stamp = vec![0; n];
        self.touched_stamp = vec![0; n];
        self.taken = vec![0; n * inv.resources.len()];
        self.touched.clear();
        self.stamp = 0;
    }

    /// Starts a fresh packing attempt: no node charged, nothing used, nothing assigned.
    pub fn fresh_attempt(&mut self, nres: usize) {
        for &ix in &self.touched {
            let ix = ix as usize;
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
