//! Heap bytes per node of a built inventory, measured with the [counting
//! allocator](crate::alloc).
//!
//! The inventory's heap size is the live-bytes delta of building it (its input specs are
//! cloned into the builder after the first reading, so they are freed again by the
//! second). The share that is the node's own names and labels is measured by building
//! the same containers `gang-core` keeps for them — the name list, the name → index map
//! and the per-node interned label lists — with the same capacities. What is left is the
//! cost of the layout itself: resource columns, bitsets, label and taint indexes,
//! domains and summaries. The split is an estimate that follows the core's present
//! containers (see `gang-core/src/inventory.rs`); the total is exact.

use std::collections::HashMap;
use std::fmt;

use gang_core::{Inventory, NodeSpec};

use crate::alloc;
use crate::gen::Cluster;

/// What one inventory keeps on the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReport {
    /// Nodes.
    pub nodes: usize,
    /// Heap bytes of the built inventory.
    pub inventory: usize,
    /// The list of node names (`Vec<String>`).
    pub names: usize,
    /// The name → index map (`HashMap<String, u32>`, its own copy of every name).
    pub name_index: usize,
    /// Per-node interned label lists (`Vec<Vec<(u32, u32)>>`).
    pub labels: usize,
    /// Most bytes live at once while building, beyond what was live before (includes the
    /// builder's copy of the node specs).
    pub build_peak: usize,
    /// Heap bytes of the node specs given to the builder.
    pub specs: usize,
}

impl MemoryReport {
    /// Bytes per node, everything included.
    pub fn per_node(&self) -> f64 {
        self.inventory as f64 / self.nodes.max(1) as f64
    }

    /// Bytes per node beyond the node's own names and labels (names, name index and
    /// label lists subtracted).
    pub fn per_node_beyond_names_labels(&self) -> f64 {
        self.inventory
            .saturating_sub(self.names + self.name_index + self.labels) as f64
            / self.nodes.max(1) as f64
    }
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nodes.max(1) as f64;
        let per = |b: usize| b as f64 / n;
        writeln!(f, "nodes:                          {:>12}", self.nodes)?;
        writeln!(
            f,
            "inventory heap:                 {:>12} B  {:>7.1} B/node",
            self.inventory,
            self.per_node()
        )?;
        writeln!(
            f,
            "  names (Vec<String>):          {:>12} B  {:>7.1} B/node",
            self.names,
            per(self.names)
        )?;
        writeln!(
            f,
            "  name index (HashMap):         {:>12} B  {:>7.1} B/node",
            self.name_index,
            per(self.name_index)
        )?;
        writeln!(
            f,
            "  label lists:                  {:>12} B  {:>7.1} B/node",
            self.labels,
            per(self.labels)
        )?;
        writeln!(
            f,
            "  beyond names and labels:      {:>12} B  {:>7.1} B/node",
            self.inventory
                .saturating_sub(self.names + self.name_index + self.labels),
            self.per_node_beyond_names_labels()
        )?;
        writeln!(
            f,
            "node specs (builder input):     {:>12} B  {:>7.1} B/node",
            self.specs,
            per(self.specs)
        )?;
        write!(
            f,
            "build peak above baseline:      {:>12} B  {:>7.1} B/node",
            self.build_peak,
            per(self.build_peak)
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
        let mut v: Vec<String> = Vec::with_capacity(n);
        v.extend(inv.node_names().map(str::to_owned));
        v
    });
    let (name_index, index_kept) = bytes_of(|| {
        let mut m: HashMap<String, u32> = HashMap::default();
        m.reserve(n);
        for (i, name) in inv.node_names().enumerate() {
            m.insert(name.to_owned(), i as u32);
        }
        m
    });
    let (labels, labels_kept) = bytes_of(|| {
        let mut v: Vec<Vec<(u32, u32)>> = Vec::with_capacity(n);
        for s in &specs {
            let mut l = Vec::with_capacity(s.labels.len());
            l.extend((0..s.labels.len() as u32).map(|i| (i, i)));
            v.push(l);
        }
        v
    });
    drop((names_kept, index_kept, labels_kept));
    Some((
        MemoryReport {
            nodes: n,
            inventory,
            names,
            name_index,
            labels,
            build_peak,
            specs: specs_bytes,
        },
        inv,
    ))
}
