//! Index newtypes of the inventory: a node's position in storage order and a depth in
//! the topology tree. Both are `Copy` and convert for free (`.ix()` to index a column);
//! the engine passes them instead of bare integers, so a node index cannot be mistaken
//! for a domain index, a role or a count.

/// A node's position in storage order (sorted by topology path): the index of its entry
/// in every column (`free[r][n]`), bitset and name list. An inventory has fewer than
/// `u32::MAX` nodes (checked when it is built), so a `u32` holds every position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct NodeIx(pub u32);

impl NodeIx {
    /// The position as a column index.
    #[inline(always)]
    pub const fn ix(self) -> usize {
        self.0 as usize
    }

    /// The node at column index `i`, which is below the inventory's node count.
    #[inline(always)]
    pub fn at(i: usize) -> NodeIx {
        debug_assert!(u32::try_from(i).is_ok(), "node index {i} out of range");
        NodeIx(i as u32)
    }
}

/// A depth in the topology tree: 0 is the whole cluster (one domain), `1..=L` the label
/// levels outermost first, and `L + 1` the node level, where every node is a domain of
/// its own (see [`Inventory::is_node_level`](super::Inventory::is_node_level)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Depth(pub usize);

impl Depth {
    /// The whole cluster.
    pub const CLUSTER: Depth = Depth(0);

    /// The depth as an index (`domains[d]`, `gran[d]`).
    #[inline(always)]
    pub const fn ix(self) -> usize {
        self.0
    }

    /// The next depth inward (children of a domain at this depth).
    #[inline(always)]
    pub const fn child(self) -> Depth {
        Depth(self.0 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_the_identity() {
        assert_eq!(NodeIx(7).ix(), 7);
        assert_eq!(NodeIx::at(7), NodeIx(7));
        assert_eq!(Depth(2).ix(), 2);
        assert_eq!(Depth::CLUSTER.child(), Depth(1));
        assert!(NodeIx(1) < NodeIx(2) && Depth(1) < Depth(2));
    }
}
