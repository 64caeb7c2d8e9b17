//! Heap bytes per node of a built inventory, measured with the [counting
//! allocator](crate::alloc).
//!
//! The inventory's heap size is the live-bytes delta of building it (its input specs are
//! cloned into the builder after the first reading, so they are freed again by the
//! second): exact.
//!
//! Two ways to say what is "beyond the node's own names and labels":
//! - *as kept*: minus the containers `gang-core` keeps names and labels in, measured by
//!   building the same containers with the same capacities — the name set
//!   (`IndexSet<String, FxBuildHasher>`: the strings, their entries and the hash index)
//!   and the per-node interned label lists (`Vec<Vec<(u32, u32)>>`). This mirrors the
//!   core's present containers (`gang-core/src/inventory.rs`) and must follow them if
//!   they change.
//! - *strict*: minus only the name bytes and 8 bytes per (key, value) label pair (the
//!   least any interned form needs); independent of the core's containers.
//!
//! What is left is the cost of the layout itself: resource columns, bitsets, label and
//! taint indexes, domains, summaries.

use std::fmt;

use gang_core::{Inventory, NodeSpec};
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::alloc;
use crate::gen::Cluster;

/// What one inventory keeps on the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReport {
    /// Nodes.
    pub nodes: usize,
    /// Heap bytes of the built inventory.
    pub inventory: usize,
    /// The node names as the core keeps them (name set: strings, entries, hash index).
    pub names: usize,
    /// Per-node interned label lists as the core keeps them.
    pub labels: usize,
    /// Bytes of the node names themselves.
    pub name_bytes: usize,
    /// (key, value) label pairs over all nodes.
    pub label_pairs: usize,
    /// Most bytes live at once while building, beyond what was live before (includes the
    /// builder's copy of the node specs).
    pub build_peak: usize,
    /// Heap bytes of the node specs given to the builder.
    pub specs: usize,
}

impl MemoryReport {
    fn per(&self, b: usize) -> f64 {
        b as f64 / self.nodes.max(1) as f64
    }

    /// Bytes per node, everything included.
    pub fn per_node(&self) -> f64 {
        self.per(self.inventory)
    }

    /// Bytes per node beyond the containers the core keeps names and labels in.
    pub fn per_node_beyond_names_labels(&self) -> f64 {
        self.per(self.inventory.saturating_sub(self.names + self.labels))
    }

    /// Bytes per node beyond the name bytes and 8 bytes per label pair.
    pub fn per_node_beyond_strict(&self) -> f64 {
        self.per(
            self.inventory
                .saturating_sub(self.name_bytes + 8 * self.label_pairs),
        )
    }
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = |f: &mut fmt::Formatter<'_>, what: &str, b: usize| {
            writeln!(f, "{what:<34}{b:>12} B  {:>7.1} B/node", self.per(b))
        };
        writeln!(f, "{:<34}{:>12}", "nodes:", self.nodes)?;
        line(f, "inventory heap:", self.inventory)?;
        line(f, "  names (name set, as kept):", self.names)?;
        line(f, "  label lists (as kept):", self.labels)?;
        line(
            f,
            "  beyond names and labels:",
            self.inventory.saturating_sub(self.names + self.labels),
        )?;
        line(
            f,
            "  beyond (strict):",
            self.inventory
                .saturating_sub(self.name_bytes + 8 * self.label_pairs),
        )?;
        line(f, "node specs (builder input):", self.specs)?;
        write!(
            f,
            "{:<34}{:>12} B  {:>7.1} B/node",
            "build peak above baseline:",
            self.build_peak,
            self.per(self.build_peak)
        )
    }
}

fn bytes_of<T>(make: impl FnOnce() -> T) -> (usize, T) {
    let before = alloc::live();
    let v = make();
    (alloc::live().saturating_sub(before), v)
}

/// Builds `cluster`'s inventory and measures it. `None` when the counting allocator is
/// not the global allocator of this program.
pub fn measure(cluster: &Cluster) -> Option<(MemoryReport, Inventory)> {
    let (specs_bytes, specs): (usize, Vec<NodeSpec>) = bytes_of(|| cluster.node_specs());
    if specs_bytes == 0 {
        return None;
    }
    let before = alloc::live();
    alloc::reset_peak();
    let inv = Inventory::builder(Cluster::topology())
        .nodes(specs.iter().cloned())
        .build()
        .expect("generated inventory is valid");
    let inventory = alloc::live().saturating_sub(before);
    let build_peak = alloc::peak().saturating_sub(before);
    let n = inv.len();

    let (names, names_kept) = bytes_of(|| {
        let mut set: IndexSet<String, FxBuildHasher> = IndexSet::default();
        set.reserve(n);
        for name in inv.node_names() {
            set.insert(name.to_owned());
        }
        set
    });
    let (labels, labels_kept) = bytes_of(|| {
        let mut v: Vec<Vec<(u32, u32)>> = Vec::with_capacity(n);
        for s in &specs {
            let mut l = Vec::with_capacity(s.get_labels().len());
            l.extend((0..s.get_labels().len() as u32).map(|i| (i, i)));
            v.push(l);
        }
        v
    });
    drop((names_kept, labels_kept));
    Some((
        MemoryReport {
            nodes: n,
            inventory,
            names,
            labels,
            name_bytes: specs.iter().map(|s| s.get_name().len()).sum(),
            label_pairs: specs.iter().map(|s| s.get_labels().len()).sum(),
            build_peak,
            specs: specs_bytes,
        },
        inv,
    ))
}
