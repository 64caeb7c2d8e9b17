//! The inventory: nodes sorted by topology path, free capacity in columns, eligibility
//! indexed by bitsets, and per-domain summaries.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

pub(crate) mod bitset;
mod build;
pub(crate) mod changes;
pub(crate) mod document;
pub(crate) mod domains;
mod evictable;
pub(crate) mod ix;
pub(crate) mod journal;
pub(crate) mod ledger;
mod mirror;
mod validate;

use bitset::{Bitset, NodeSet};
use build::Csr;
use domains::{Domain, Summary};
use journal::Journal;

use crate::model::{Quantity, Taint, Topology};
pub use build::InventoryBuilder;

/// The resource Kubernetes counts pods in (`allocatable.pods`, 110 by default). Every
/// member is one pod: on a node that declares a `pods` capacity each member uses one
/// (compiling adds it to every role's request); a node that declares none has no pod
/// limit, which the inventory stores as a capacity of [`UNLIMITED`] so that placement,
/// reservation and diagnosis need no special case. A `pods` request other than 1 is an
/// invalid request.
pub(crate) const PODS: &str = "pods";

/// One pod, in milli-units.
pub(crate) const POD: u64 = 1000;

/// The capacity of a resource a node does not limit (only `pods` is stored so).
pub(crate) const UNLIMITED: u64 = u64::MAX;

/// Sentinel for "no parent / no value".
pub(crate) const NONE: u32 = u32::MAX;

/// A validated cluster snapshot, ready to answer placement queries.
///
/// Build it with [`Inventory::builder`]. Nodes are stored sorted by topology path (then
/// name), so every domain is a contiguous range; free capacity is a column of integer
/// milli-units per resource; label, taint and schedulable sets are bitsets; every domain
/// keeps a free-capacity summary (total and largest node) per resource.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Quantity, Role, Topology};
/// const GPU: &str = "nvidia.com/gpu";
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("b1").label("rack", "b").capacity(GPU, 8).used(GPU, 6))
///     .node(NodeSpec::new("a1").label("rack", "a").capacity(GPU, 8).capacity("cpu", "96"))
///     .build()?;
/// assert_eq!((inv.len(), inv.is_empty()), (2, false));
/// assert_eq!(inv.topology().levels(), ["rack"]);
/// assert_eq!(inv.node_names().collect::<Vec<_>>(), ["a1", "b1"]); // topology order
/// assert_eq!(inv.resources().collect::<Vec<_>>(), ["cpu", GPU]); // name order
/// assert_eq!(inv.free("b1", GPU), Some(Quantity::from_units(2)));
/// assert_eq!(inv.free("b1", "cpu"), Some(Quantity::ZERO));
/// assert_eq!(inv.free("zz", GPU), None);
///
/// let gang = |n| Gang::new("g").role(Role::new("w", n).request(GPU, 1)).required("rack");
/// assert_eq!(inv.place(&gang(4))?.placement().unwrap().domain_path(), "a");
/// assert!(!inv.place(&gang(9))?.is_placed()); // no rack has 9 free GPUs
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Inventory {
    pub(crate) topology: Topology,
    /// Node names in storage (topology path) order; the index of a name is its node.
    pub(crate) names: IndexSet<String, FxBuildHasher>,
    /// Interned `(key, value)` labels per node, sorted by key id.
    pub(crate) labels: Vec<Vec<(u32, u32)>>,
    pub(crate) schedulable: Bitset,
    pub(crate) resources: IndexSet<String, FxBuildHasher>,
    /// `[resource][node]` allocatable capacity, milli-units.
    pub(crate) capacity: Vec<Vec<u64>>,
    /// Largest capacity of any node, per resource (normalises role weights).
    pub(crate) max_capacity: Vec<u64>,
    /// `[resource][node]` used outside the library.
    pub(crate) used: Vec<Vec<u64>>,
    /// What reservations hold of a resource on a node, where that exceeds capacity minus
    /// use (after a capacity or usage change): `(node, resource) → amount`. Elsewhere
    /// reserved = capacity − used − free, so it needs no column of its own.
    pub(crate) overcommit: FxHashMap<(u32, u32), u64>,
    /// `[resource][node]` free = capacity − used − reserved (saturating at zero).
    pub(crate) free: Vec<Vec<u64>>,
    /// Taint ids (into `taints`) per node.
    pub(crate) taints_of: Csr,
    pub(crate) keys: IndexSet<String, FxBuildHasher>,
    pub(crate) values: IndexSet<String, FxBuildHasher>,
    pub(crate) pair_sets: FxHashMap<(u32, u32), NodeSet>,
    pub(crate) key_sets: Vec<NodeSet>,
    pub(crate) taints: Vec<(Taint, NodeSet)>,
    /// Domains per depth: depth 0 is the whole cluster (one domain), 1..=L label levels.
    pub(crate) domains: Vec<Vec<Domain>>,
    /// `[depth][domain * resources + resource]`.
    pub(crate) summaries: Vec<Vec<Summary>>,
    /// Fingerprint of the node order and resource set; a compiled gang carries it.
    pub(crate) layout_id: u64,
    /// Live reservations.
    pub(crate) ledger: crate::inventory::ledger::Ledger,
    /// Nodes whose free capacity or schedulability changed, for solvers' caches.
    pub(crate) journal: Journal,
}

impl fmt::Debug for Inventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inventory")
            .field("levels", &self.topology.levels())
            .field("nodes", &self.names.len())
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl Inventory {
    /// Marks a node schedulable or not.
    pub(crate) fn set_schedulable(&mut self, ix: usize, v: bool) {
        self.schedulable.set(ix, v);
        self.journal.touch(ix as u32);
    }

    /// Capacity minus external use, saturating at zero.
    #[inline]
    fn available(&self, n: usize, r: usize) -> u64 {
        self.capacity[r][n].saturating_sub(self.used[r][n])
    }

    /// What live reservations hold of resource `r` on node `n`.
    pub(crate) fn reserved_of(&self, n: usize, r: usize) -> u64 {
        match self.overcommit.get(&(n as u32, r as u32)) {
            Some(&v) => v,
            None => self.available(n, r).saturating_sub(self.free[r][n]),
        }
    }

    /// Records that reservations hold `v` of resource `r` on node `n`; free follows.
    pub(crate) fn set_reserved(&mut self, n: usize, r: usize, v: u64) {
        let avail = self.available(n, r);
        let key = (n as u32, r as u32);
        if v > avail {
            self.free[r][n] = 0;
            self.overcommit.insert(key, v);
        } else {
            self.free[r][n] = avail - v;
            self.overcommit.remove(&key);
        }
    }

    /// The depth of a label-backed topology level (not the node level).
    fn level_depth(&self, key: &str) -> Option<usize> {
        self.topology
            .depth_of(key)
            .filter(|&d| d <= self.label_depth())
    }

    /// Nodes labelled `key=value`, if any. Topology levels are answered from the domain
    /// ranges (plus nodes whose path breaks above the level), other labels from the index.
    pub(crate) fn label_set(&self, key: &str, value: &str) -> Option<Cow<'_, NodeSet>> {
        let k = self.keys.get_index_of(key)? as u32;
        let v = self.values.get_index_of(value)? as u32;
        let listed = self.pair_sets.get(&(k, v));
        let Some(depth) = self.level_depth(key) else {
            return listed.map(Cow::Borrowed);
        };
        let mut set = Bitset::new(self.len());
        let mut any = false;
        for dm in self.domains[depth].iter().filter(|dm| dm.value == v) {
            set.set_range(dm.start as usize, dm.end as usize);
            any = true;
        }
        if let Some(l) = listed {
            l.or_into(&mut set);
            any = true;
        }
        any.then_some(Cow::Owned(NodeSet::Dense(set)))
    }

    /// Nodes carrying label `key`, if any (see [`Inventory::label_set`]).
    pub(crate) fn key_set(&self, key: &str) -> Option<Cow<'_, NodeSet>> {
        let k = self.keys.get_index_of(key)?;
        let listed = &self.key_sets[k];
        let Some(depth) = self.level_depth(key) else {
            return Some(Cow::Borrowed(listed));
        };
        let mut set = Bitset::new(self.len());
        for dm in &self.domains[depth] {
            set.set_range(dm.start as usize, dm.end as usize);
        }
        listed.or_into(&mut set);
        Some(Cow::Owned(NodeSet::Dense(set)))
    }

    /// This inventory's identity: what its reservation ids carry (see
    /// [`InventoryId`](crate::InventoryId)). A clone, or an inventory read back from
    /// its document, has an identity of its own.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat()).node(NodeSpec::new("n1").capacity("gpu", 1)).build()?;
    /// let id = inv.reserve(inv.place(&Gang::new("g").role(Role::new("w", 1).request("gpu", 1)))?.placement().unwrap())?;
    /// assert_eq!(id.inventory(), inv.id());
    /// let copy = inv.clone();
    /// assert_ne!(copy.id(), inv.id());
    /// assert!(copy.reservation(id).is_some()); // a copy holds the same reservations
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn id(&self) -> crate::model::InventoryId {
        self.ledger.id()
    }

    /// The domains of `level` as full paths (`"b1/r1"`), in storage order; node names
    /// at the node level ([`HOSTNAME_LEVEL`](crate::HOSTNAME_LEVEL)); `None` for a
    /// level the topology does not have.
    ///
    /// ```
    /// use gang_core::{HOSTNAME_LEVEL, Inventory, NodeSpec, Topology};
    /// let node = |n: &str, b: &str, r: &str| NodeSpec::new(n).label("block", b).label("rack", r);
    /// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
    ///     .nodes([node("n1", "b2", "r1"), node("n2", "b1", "r1"), node("n3", "b1", "r2")])
    ///     .build()?;
    /// assert_eq!(inv.domain_paths("rack").unwrap(), ["b1/r1", "b1/r2", "b2/r1"]);
    /// assert_eq!(inv.domain_paths("block").unwrap(), ["b1", "b2"]);
    /// assert_eq!(inv.domain_paths(HOSTNAME_LEVEL).unwrap(), ["n2", "n3", "n1"]);
    /// assert!(inv.domain_paths("zone").is_none());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn domain_paths(&self, level: &str) -> Option<Vec<String>> {
        if level == crate::model::names::HOSTNAME_LEVEL {
            return Some(self.names.iter().cloned().collect());
        }
        let depth = self.level_depth(level)?;
        Some(
            (0..self.domains[depth].len())
                .map(|i| self.domain_values(depth, i as u32).join("/"))
                .collect(),
        )
    }

    /// The domain of `level` that holds `node`, as its index in
    /// [`domain_paths`](Inventory::domain_paths)`(level)`; at the node level
    /// ([`HOSTNAME_LEVEL`](crate::HOSTNAME_LEVEL)) the node's own index. `None` for a
    /// node outside every domain of the level (it lacks the level's label, or a label
    /// above it), or a node or level the inventory does not have.
    ///
    /// ```
    /// use gang_core::{Inventory, NodeSpec, Topology};
    /// let node = |n: &str, b: &str, r: &str| NodeSpec::new(n).label("block", b).label("rack", r);
    /// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
    ///     .nodes([node("n1", "b2", "r1"), node("n2", "b1", "r1"), NodeSpec::new("n3").label("rack", "r1")])
    ///     .build()?;
    /// let paths = inv.domain_paths("rack").unwrap();
    /// assert_eq!(paths[inv.domain_of_node("n1", "rack").unwrap()], "b2/r1");
    /// assert_ne!(inv.domain_of_node("n1", "rack"), inv.domain_of_node("n2", "rack"));
    /// assert_eq!(inv.domain_of_node("n3", "rack"), None); // no block label
    /// assert_eq!(inv.domain_of_node("n1", "zone"), None);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn domain_of_node(&self, node: &str, level: &str) -> Option<usize> {
        let ix = self.names.get_index_of(node)?;
        if level == crate::model::names::HOSTNAME_LEVEL {
            return Some(ix);
        }
        let depth = self.level_depth(level)?;
        self.domain_of(ix as u32, depth).map(|d| d as usize)
    }

    /// Number of nodes. See [`Inventory`].
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the inventory has no nodes. See [`Inventory`].
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The topology it was built over. See [`Inventory`].
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Node names in storage order: by topology path (label values as text, nodes
    /// missing a level's label last), then by name. See [`Inventory`].
    pub fn node_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.names.iter().map(String::as_str)
    }

    /// Resource names known to the inventory, in name order. See [`Inventory`].
    pub fn resources(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.resources.iter().map(String::as_str)
    }

    /// Free amount of `resource` on `node` (capacity minus external use minus what
    /// reservations hold, never below zero), if both exist. See [`Inventory`].
    pub fn free(&self, node: &str, resource: &str) -> Option<Quantity> {
        let n = self.names.get_index_of(node)?;
        let r = self.resources.get_index_of(resource)?;
        Some(Quantity::from_millis(self.free[r][n]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeSpec;

    fn node(name: &str, block: Option<&str>, rack: Option<&str>) -> NodeSpec {
        let mut n = NodeSpec::new(name).capacity("gpu", 8);
        if let Some(b) = block {
            n = n.label("block", b);
        }
        if let Some(r) = rack {
            n = n.label("rack", r);
        }
        n
    }

    #[test]
    fn domains_are_contiguous_and_missing_labels_sort_last() {
        let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .node(node("z", None, None))
            .node(node("b2r1", Some("b2"), Some("r1")))
            .node(node("b1r2", Some("b1"), Some("r2")))
            .node(node("b1x", Some("b1"), None))
            .node(node("b1r1b", Some("b1"), Some("r1")))
            .node(node("b1r1a", Some("b1"), Some("r1")))
            .node(node("onlyrack", None, Some("r1")))
            .build()
            .unwrap();
        inv.validate().unwrap();
        let names: Vec<&str> = inv.node_names().collect();
        assert_eq!(
            names,
            ["b1r1a", "b1r1b", "b1r2", "b1x", "b2r1", "onlyrack", "z"]
        );
        assert_eq!(inv.domains[1].len(), 2);
        assert_eq!(inv.domains[2].len(), 3);
        // b1/r1 and b2/r1 are different racks.
        assert_eq!(inv.domain_values(2, 0), ["b1", "r1"]);
        assert_eq!(inv.domain_values(2, 2), ["b2", "r1"]);
        let b1 = inv.domains[1][0];
        assert_eq!((b1.start, b1.direct, b1.end), (0, 3, 4));
        assert_eq!(inv.domain_of(3, 2), None);
        assert_eq!(inv.domain_of(3, 1), Some(0));
        assert_eq!(inv.leaf_depth(3), 1);
        assert_eq!(inv.leaf_depth(5), 0); // a rack label without a block label counts for nothing
        assert_eq!(inv.domains[0][0].direct, 5);
    }

    #[test]
    fn order_of_input_does_not_matter() {
        let specs: Vec<NodeSpec> = (0..20)
            .map(|i| {
                node(
                    &format!("n{i}"),
                    Some(&format!("b{}", i % 3)),
                    Some(&format!("r{}", i % 2)),
                )
            })
            .collect();
        let t = Topology::new(["block", "rack"]).unwrap();
        let a = Inventory::builder(t.clone())
            .nodes(specs.clone())
            .build()
            .unwrap();
        let b = Inventory::builder(t)
            .nodes(specs.into_iter().rev())
            .build()
            .unwrap();
        assert_eq!(a.names, b.names);
        let shape = |inv: &Inventory| -> Vec<(usize, u32, u32, Vec<String>)> {
            (1..inv.domains.len())
                .flat_map(|d| (0..inv.domains[d].len()).map(move |i| (d, i)))
                .map(|(d, i)| {
                    let dom = inv.domains[d][i];
                    let vals = inv
                        .domain_values(d, i as u32)
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    (d, dom.start, dom.end, vals)
                })
                .collect()
        };
        assert_eq!(shape(&a), shape(&b));
        assert_eq!(a.layout_id, b.layout_id);
        a.validate().unwrap();
    }

    #[test]
    fn summaries_and_free() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(
                NodeSpec::new("a")
                    .label("rack", "r")
                    .capacity("gpu", 8)
                    .used("gpu", 6),
            )
            .node(
                NodeSpec::new("b")
                    .label("rack", "r")
                    .capacity("gpu", 4)
                    .used("gpu", 9),
            )
            .build()
            .unwrap();
        inv.validate().unwrap();
        assert_eq!(inv.free("a", "gpu"), Some(crate::Quantity::from_units(2)));
        // Over-used nodes have nothing free, not a negative amount.
        assert_eq!(inv.free("b", "gpu"), Some(crate::Quantity::ZERO));
        let s = inv.summary(1, 0, 0);
        assert_eq!((s.total, s.max), (2000, 2000));
        assert_eq!(inv.free("zz", "gpu"), None);
    }

    #[test]
    fn rejects_bad_nodes() {
        let t = Topology::new(["rack"]).unwrap();
        let cases: Vec<(NodeSpec, NodeSpec, &str)> = vec![
            (NodeSpec::new("a"), NodeSpec::new("a"), "nodes[a].name"),
            (
                NodeSpec::new("a"),
                NodeSpec::new("b").label("Bad Key", "x"),
                "nodes[b].labels",
            ),
            (
                NodeSpec::new("a"),
                NodeSpec::new("b").label("rack", "bad value"),
                "nodes[b].labels.rack",
            ),
            (
                NodeSpec::new("a"),
                NodeSpec::new("b").capacity("gpu", -1),
                "nodes[b].capacity.gpu",
            ),
            (
                NodeSpec::new("a"),
                NodeSpec::new("b").used("cpu", "1x"),
                "nodes[b].used.cpu",
            ),
            (NodeSpec::new("a"), NodeSpec::new(""), "nodes[].name"),
            (
                NodeSpec::new("a"),
                NodeSpec::new("b").taint(Taint::new("", "v", crate::TaintEffect::NoSchedule)),
                "nodes[b].taints[0].key",
            ),
        ];
        for (a, b, field) in cases {
            let e = Inventory::builder(t.clone())
                .node(a)
                .node(b)
                .build()
                .unwrap_err();
            assert_eq!(e.field(), field, "{e}");
        }
    }
}
