//! The solver's reusable scratch space, in parts owned by the phases that use them, so
//! that repeated queries do not allocate beyond their result and each function borrows
//! only the part it works on.

use crate::inventory::Inventory;

use super::descent::Attempt;
use super::multi::{Candidates, Greedy};
use super::rollup::Capacities;
use super::search::SearchSpace;

/// Every part of the scratch space.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// One role's capacities (a roll-up's output, or lent by the cache).
    pub caps: Capacities,
    /// The packing attempt under way.
    pub attempt: Attempt,
    /// Multi-role candidate domains and their bounds.
    pub candidates: Candidates,
    /// Greedy packing's role order and undo list.
    pub greedy: Greedy,
    /// The exact search's arrays.
    pub search: SearchSpace,
    /// Distinct domain ids while building a placement.
    pub seen: Vec<u32>,
}

impl Scratch {
    /// Sizes every per-node and per-domain part for `inv` (a no-op when already sized
    /// for its layout).
    pub fn ensure(&mut self, inv: &Inventory) {
        self.caps.ensure(inv);
        self.attempt.ensure(inv);
    }
}
