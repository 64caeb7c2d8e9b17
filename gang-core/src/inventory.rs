//! The inventory: nodes sorted by topology path, free capacity in columns, eligibility
//! indexed by bitsets, and per-domain summaries.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::bitset::{Bitset, NodeSet};
use crate::error::Error;
use crate::names::{check_label_value, check_object_name, check_qualified_name};
use crate::node::{NodeSpec, Taint};
use crate::topology::Topology;

/// Sentinel for "no parent / no value".
pub(crate) const NONE: u32 = u32::MAX;

/// One domain: a contiguous range of nodes sharing a topology path prefix.
///
/// Nodes `start..direct` belong to child domains (`children`, at the next depth); nodes
/// `direct..end` lack the next level's label and belong to no child. At the deepest label
/// level every node is direct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Domain {
    pub start: u32,
    pub end: u32,
    pub direct: u32,
    pub parent: u32,
    pub value: u32,
    pub child_start: u32,
    pub child_end: u32,
}

/// Free-capacity summary of one domain and one resource: the total (saturating at
/// `u64::MAX`, which then means "at least that much") and the largest node's amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Summary {
    pub total: u64,
    pub max: u64,
}

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
    pub(crate) ledger: crate::reserve::Ledger,
    /// Nodes whose free capacity or schedulability changed, for solvers' caches.
    pub(crate) journal: Journal,
}

/// Short per-node lists in one allocation (compressed rows): row `i` is
/// `items[offsets[i]..offsets[i + 1]]`. Most nodes have no taint; this costs them 4 bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    fn with_capacity(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Csr {
            offsets,
            items: Vec::new(),
        }
    }

    fn push(&mut self, row: &[u32]) {
        self.items.extend_from_slice(row);
        self.offsets.push(self.items.len() as u32);
    }

    pub fn row(&self, i: usize) -> &[u32] {
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    fn rows(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.offsets
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
}

/// Identity of one inventory value: a clone or a rebuild gets a new one, so a solver's
/// cache never mistakes one inventory for another.
#[derive(Debug)]
pub(crate) struct Identity(pub std::sync::Arc<()>);

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity(std::sync::Arc::new(()))
    }
}

/// The nodes touched since this inventory value was built: `version = base + len`.
/// Bounded; a cache older than `base` recomputes everything.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    pub identity: Identity,
    pub base: u64,
    pub nodes: Vec<u32>,
}

impl Journal {
    const KEEP: usize = 1 << 14;

    fn new() -> Self {
        Journal {
            identity: Identity(std::sync::Arc::new(())),
            base: 0,
            nodes: Vec::new(),
        }
    }

    pub fn version(&self) -> u64 {
        self.base + self.nodes.len() as u64
    }

    pub fn touch(&mut self, ix: u32) {
        if self.nodes.len() >= Self::KEEP {
            self.base += self.nodes.len() as u64;
            self.nodes.clear();
        }
        self.nodes.push(ix);
    }

    /// Nodes touched since `version`, or `None` when that history is gone.
    pub fn since(&self, version: u64) -> Option<&[u32]> {
        let from = version.checked_sub(self.base)?;
        self.nodes.get(from as usize..)
    }
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

/// Builds an [`Inventory`], validating every node once.
///
/// ```
/// use gang_core::{ErrorKind, Inventory, NodeSpec, Topology};
/// let node = |name: &str, rack: &str| {
///     NodeSpec::new(name).label("rack", rack).capacity("nvidia.com/gpu", 8)
/// };
/// let mut builder = Inventory::builder(Topology::new(["rack"])?)
///     .node(node("a1", "a"))
///     .nodes([node("a2", "a"), node("b1", "b")]);
/// for i in 2..4 {
///     builder.add_node(node(&format!("b{i}"), "b"));
/// }
/// assert_eq!(builder.build()?.len(), 5);
///
/// let err = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", "a"), node("a1", "b")])
///     .build()
///     .unwrap_err();
/// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidInventory, "nodes[a1].name"));
/// let err = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("n").capacity("cpu", "lots"))
///     .build()
///     .unwrap_err();
/// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidQuantity, "nodes[n].capacity.cpu"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct InventoryBuilder {
    topology: Topology,
    nodes: Vec<NodeSpec>,
}

impl InventoryBuilder {
    /// Adds a node (chained form). See [`InventoryBuilder`].
    pub fn node(mut self, node: NodeSpec) -> Self {
        self.nodes.push(node);
        self
    }

    /// Adds a node (in place, for loops). See [`InventoryBuilder`].
    pub fn add_node(&mut self, node: NodeSpec) -> &mut Self {
        self.nodes.push(node);
        self
    }

    /// Adds many nodes. See [`InventoryBuilder`].
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = NodeSpec>) -> Self {
        self.nodes.extend(nodes);
        self
    }

    /// Validates and builds the inventory. See [`InventoryBuilder`].
    ///
    /// # Errors
    /// [`Error::InvalidInventory`] for a duplicate or malformed node name, a malformed
    /// label key or value, resource name or taint; [`Error::InvalidQuantity`] for a bad
    /// capacity or used amount. The field names the node (`nodes[a1].labels.rack`).
    pub fn build(self) -> Result<Inventory, Error> {
        Inventory::from_specs(self.topology, &self.nodes, &[])
    }
}

impl Inventory {
    /// Builds an inventory from node descriptions the caller keeps (a scheduler's own
    /// node cache): like [`InventoryBuilder::build`], without taking the nodes over.
    ///
    /// ```
    /// use gang_core::{Inventory, NodeSpec, Topology};
    /// let nodes = vec![NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8)];
    /// let inv = Inventory::from_nodes(Topology::new(["rack"])?, &nodes)?;
    /// assert_eq!(inv.len(), nodes.len());
    /// let twice = [nodes[0].clone(), nodes[0].clone()];
    /// assert!(Inventory::from_nodes(Topology::flat(), &twice).is_err());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`InventoryBuilder::build`].
    pub fn from_nodes(topology: Topology, nodes: &[NodeSpec]) -> Result<Inventory, Error> {
        Inventory::from_specs(topology, nodes, &[])
    }

    /// Starts building an inventory over `topology`. See [`InventoryBuilder`].
    pub fn builder(topology: Topology) -> InventoryBuilder {
        InventoryBuilder {
            topology,
            nodes: Vec::new(),
        }
    }

    /// Builds from node descriptions; `keep` names resources to have columns for even if
    /// no node mentions them (a rebuild keeps what reservations refer to).
    pub(crate) fn from_specs(
        topology: Topology,
        specs: &[NodeSpec],
        keep: &[String],
    ) -> Result<Inventory, Error> {
        let len = specs.len();
        if len >= NONE as usize {
            return Err(Error::inventory("nodes", len, "too many nodes"));
        }
        let mut keys: IndexSet<String, FxBuildHasher> = IndexSet::default();
        let mut values: IndexSet<String, FxBuildHasher> = IndexSet::default();
        let mut taint_ids: IndexSet<Taint, FxBuildHasher> = IndexSet::default();
        let level_keys: Vec<u32> = topology
            .label_levels()
            .iter()
            .map(|k| keys.insert_full(k.clone()).0 as u32)
            .collect();
        // Resources are numbered in name order, so nothing depends on node order.
        let mut resources: IndexSet<String, FxBuildHasher> = IndexSet::default();
        {
            let mut seen: rustc_hash::FxHashSet<&str> = keep.iter().map(String::as_str).collect();
            for spec in specs {
                for r in spec.capacity.keys().chain(spec.used.keys()) {
                    if seen.insert(r.as_str()) {
                        check_qualified_name(r).map_err(|e| {
                            let what = if spec.capacity.contains_key(r) {
                                "capacity"
                            } else {
                                "used"
                            };
                            Error::inventory(format!("nodes[{}].{what}", spec.name), r, e)
                        })?;
                    }
                }
            }
            let mut sorted: Vec<&str> = seen.into_iter().collect();
            sorted.sort_unstable();
            resources.extend(sorted.into_iter().map(str::to_owned));
        }
        let nres = resources.len();
        let depth = level_keys.len();

        // One pass in input order: validate, intern, and fill input-order columns.
        let mut names_in: IndexSet<&str, FxBuildHasher> = IndexSet::default();
        names_in.reserve(len);
        let mut labels_in: Vec<Vec<(u32, u32)>> = Vec::with_capacity(len);
        let mut taints_in: Vec<Vec<u32>> = Vec::with_capacity(len);
        let mut paths = vec![NONE; len * depth];
        let mut cap_in = vec![vec![0u64; len]; nres];
        let mut used_in = vec![vec![0u64; len]; nres];
        for (i, spec) in specs.iter().enumerate() {
            let n = &spec.name;
            check_object_name(n).map_err(|r| Error::inventory("nodes[].name", n, r))?;
            if !names_in.insert(n.as_str()) {
                return Err(Error::inventory(
                    format!("nodes[{n}].name"),
                    n,
                    "duplicate node name",
                ));
            }
            let mut labels = Vec::with_capacity(spec.labels.len());
            for (k, v) in &spec.labels {
                // Names are checked once, when first seen.
                let kid = match keys.get_index_of(k.as_str()) {
                    Some(i) => i,
                    None => {
                        check_qualified_name(k)
                            .map_err(|r| Error::inventory(format!("nodes[{n}].labels"), k, r))?;
                        keys.insert_full(k.clone()).0
                    }
                };
                let vid = match values.get_index_of(v.as_str()) {
                    Some(i) => i,
                    None => {
                        check_label_value(v).map_err(|r| {
                            Error::inventory(format!("nodes[{n}].labels.{k}"), v, r)
                        })?;
                        values.insert_full(v.clone()).0
                    }
                };
                labels.push((kid as u32, vid as u32));
            }
            labels.sort_unstable();
            for (l, &lk) in level_keys.iter().enumerate() {
                match labels.binary_search_by_key(&lk, |&(k, _)| k) {
                    Ok(j) => paths[i * depth + l] = labels[j].1,
                    Err(_) => break,
                }
            }
            for (map, cols, what) in [
                (&spec.capacity, &mut cap_in, "capacity"),
                (&spec.used, &mut used_in, "used"),
            ] {
                for (r, a) in map {
                    let ri = resources.get_index_of(r.as_str()).unwrap_or(0);
                    cols[ri][i] = a.resolve_at(|| format!("nodes[{n}].{what}.{r}"))?.millis();
                }
            }
            let mut taints = Vec::with_capacity(spec.taints.len());
            for (j, t) in spec.taints.iter().enumerate() {
                let f = || format!("nodes[{n}].taints[{j}]");
                check_qualified_name(&t.key)
                    .map_err(|r| Error::inventory(format!("{}.key", f()), &t.key, r))?;
                check_label_value(&t.value)
                    .map_err(|r| Error::inventory(format!("{}.value", f()), &t.value, r))?;
                let id = match taint_ids.get_index_of(t) {
                    Some(i) => i,
                    None => taint_ids.insert_full(t.clone()).0,
                };
                taints.push(id as u32);
            }
            taints.sort_unstable();
            taints.dedup();
            labels_in.push(labels);
            taints_in.push(taints);
        }

        // Storage order: topology path (values compared as text, a missing label after
        // every value), then name. Independent of the order nodes were given in.
        let mut rank = vec![0u32; values.len()];
        {
            let mut by_text: Vec<u32> = (0..values.len() as u32).collect();
            by_text.sort_unstable_by(|&a, &b| values[a as usize].cmp(&values[b as usize]));
            for (r, &v) in by_text.iter().enumerate() {
                rank[v as usize] = r as u32;
            }
        }
        // Sort keys, flat: value ranks per level (a missing label ranks last).
        let ranks: Vec<u32> = paths
            .iter()
            .map(|&v| if v == NONE { NONE } else { rank[v as usize] })
            .collect();
        let key = |i: u32| &ranks[i as usize * depth..i as usize * depth + depth];
        let mut order: Vec<u32> = (0..len as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            key(a)
                .cmp(key(b))
                .then_with(|| specs[a as usize].name.cmp(&specs[b as usize].name))
        });

        let mut names: IndexSet<String, FxBuildHasher> = IndexSet::default();
        names.reserve(len);
        let mut labels = Vec::with_capacity(len);
        let mut taints_of = Csr::with_capacity(len);
        let mut sorted_paths: Vec<u32> = Vec::with_capacity(len * depth);
        let mut schedulable = Bitset::new(len);
        for (ix, &orig) in order.iter().enumerate() {
            let o = orig as usize;
            names.insert(specs[o].name.clone());
            schedulable.set(ix, specs[o].schedulable);
            labels.push(std::mem::take(&mut labels_in[o]));
            taints_of.push(&taints_in[o]);
            sorted_paths.extend_from_slice(&paths[o * depth..o * depth + depth]);
        }
        let permute = |cols: Vec<Vec<u64>>| -> Vec<Vec<u64>> {
            cols.into_iter()
                .map(|c| order.iter().map(|&o| c[o as usize]).collect())
                .collect()
        };
        let capacity = permute(cap_in);
        let used = permute(used_in);

        // Label and taint indexes. A topology label of a node inside that level's domain
        // is answered from the domain ranges (see `label_set`); only the others are listed.
        let mut pair_lists: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
        let mut key_lists: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
        for (ix, ls) in labels.iter().enumerate() {
            for &(k, v) in ls {
                if let Some(l) = level_keys.iter().position(|&lk| lk == k) {
                    if sorted_paths[ix * depth + l] != NONE {
                        continue;
                    }
                }
                pair_lists.entry((k, v)).or_default().push(ix as u32);
                key_lists[k as usize].push(ix as u32);
            }
        }
        let pair_sets = pair_lists
            .into_iter()
            .map(|(kv, l)| (kv, NodeSet::from_sorted(l, len)))
            .collect();
        let key_sets = key_lists
            .into_iter()
            .map(|l| NodeSet::from_sorted(l, len))
            .collect();
        let mut taint_lists: Vec<Vec<u32>> = vec![Vec::new(); taint_ids.len()];
        for (ix, ts) in taints_of.rows().enumerate() {
            for &t in ts {
                taint_lists[t as usize].push(ix as u32);
            }
        }
        let taints = taint_ids
            .into_iter()
            .zip(taint_lists)
            .map(|(t, l)| (t, NodeSet::from_sorted(l, len)))
            .collect();

        let domains = build_domains(&sorted_paths, len, depth);
        let mut inv = Inventory {
            topology,
            names,
            labels,
            schedulable,
            resources,
            free: Vec::new(),
            overcommit: FxHashMap::default(),
            max_capacity: capacity
                .iter()
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .collect(),
            taints_of,
            capacity,
            used,
            keys,
            values,
            pair_sets,
            key_sets,
            taints,
            domains,
            summaries: Vec::new(),
            layout_id: 0,
            ledger: crate::reserve::Ledger::default(),
            journal: Journal::new(),
        };
        inv.free = (0..nres)
            .map(|r| {
                inv.capacity[r]
                    .iter()
                    .zip(&inv.used[r])
                    .map(|(c, u)| c.saturating_sub(*u))
                    .collect()
            })
            .collect();
        inv.rebuild_summaries();
        inv.layout_id = fingerprint(&inv);
        Ok(inv)
    }

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

    /// A domain's summary for one resource, from its children's summaries and its
    /// direct nodes' free amounts.
    fn summarize(&self, d: usize, di: usize, r: usize) -> Summary {
        let nres = self.resources.len();
        let dom = self.domains[d][di];
        let mut s = Summary::default();
        if d + 1 < self.domains.len() {
            for c in dom.child_start..dom.child_end {
                let cs = self.summaries[d + 1][c as usize * nres + r];
                s.total = s.total.saturating_add(cs.total);
                s.max = s.max.max(cs.max);
            }
        }
        for &f in &self.free[r][dom.direct as usize..dom.end as usize] {
            s.total = s.total.saturating_add(f);
            s.max = s.max.max(f);
        }
        s
    }

    /// Recomputes the summaries of every domain containing one of `nodes`, each once,
    /// innermost first.
    pub(crate) fn refresh_summaries(&mut self, nodes: &[u32]) {
        let nres = self.resources.len();
        let mut doms: smallvec::SmallVec<[u32; 16]> = smallvec::SmallVec::new();
        for d in (0..self.domains.len()).rev() {
            doms.clear();
            for &n in nodes {
                if let Some(di) = self.domain_of(n, d) {
                    if !doms.contains(&di) {
                        doms.push(di);
                    }
                }
            }
            for &di in &doms {
                for r in 0..nres {
                    let s = self.summarize(d, di as usize, r);
                    self.summaries[d][di as usize * nres + r] = s;
                }
            }
        }
    }

    /// Recomputes every domain summary from the free columns, deepest level first.
    pub(crate) fn rebuild_summaries(&mut self) {
        let nres = self.resources.len();
        self.summaries = self
            .domains
            .iter()
            .map(|l| vec![Summary::default(); l.len() * nres])
            .collect();
        for d in (0..self.domains.len()).rev() {
            for di in 0..self.domains[d].len() {
                for r in 0..nres {
                    let s = self.summarize(d, di, r);
                    self.summaries[d][di * nres + r] = s;
                }
            }
        }
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
    pub fn free(&self, node: &str, resource: &str) -> Option<crate::Quantity> {
        let n = self.names.get_index_of(node)?;
        let r = self.resources.get_index_of(resource)?;
        Some(crate::Quantity::from_millis(self.free[r][n]))
    }

    /// Deepest label depth (L).
    pub(crate) fn label_depth(&self) -> usize {
        self.domains.len() - 1
    }

    #[inline]
    pub(crate) fn summary(&self, depth: usize, dom: usize, res: usize) -> Summary {
        self.summaries[depth][dom * self.resources.len() + res]
    }

    /// The domain at `depth` (1..=L) containing node `ix`, if the node has that label.
    pub(crate) fn domain_of(&self, ix: u32, depth: usize) -> Option<u32> {
        if depth == 0 {
            return Some(0);
        }
        let level = self.domains.get(depth)?;
        let pos = level.partition_point(|d| d.start <= ix);
        if pos == 0 {
            return None;
        }
        let d = &level[pos - 1];
        (ix < d.end).then_some(pos as u32 - 1)
    }

    /// Depth of the deepest domain containing the node.
    pub(crate) fn leaf_depth(&self, ix: u32) -> usize {
        (1..=self.label_depth())
            .take_while(|&d| self.domain_of(ix, d).is_some())
            .last()
            .unwrap_or(0)
    }

    /// The label values of a domain's path, outermost first.
    pub(crate) fn domain_values(&self, depth: usize, dom: u32) -> Vec<&str> {
        let mut out = Vec::with_capacity(depth);
        let (mut d, mut i) = (depth, dom);
        while d > 0 {
            let dm = &self.domains[d][i as usize];
            out.push(self.values[dm.value as usize].as_str());
            i = dm.parent;
            d -= 1;
        }
        out.reverse();
        out
    }

    /// Checks the structural invariants: sorted, contiguous domains; columns consistent;
    /// summaries exact; indexes agree with labels. For tests and fuzzing.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    #[doc(hidden)]
    pub fn validate(&self) -> Result<(), String> {
        let n = self.names.len();
        let nres = self.resources.len();
        if self.names.len() != n || self.labels.len() != n || self.schedulable.len() != n {
            return Err("node arrays disagree in length".into());
        }
        for cols in [&self.capacity, &self.used, &self.free] {
            if cols.len() != nres || cols.iter().any(|c| c.len() != n) {
                return Err("resource columns have the wrong shape".into());
            }
        }
        for r in 0..nres {
            for i in 0..n {
                let (avail, free) = (self.available(i, r), self.free[r][i]);
                let over = self.overcommit.get(&(i as u32, r as u32));
                if free > avail || over.is_some_and(|&v| v <= avail || free != 0) {
                    return Err(format!(
                        "free of {} on {} is {free}, inconsistent with capacity - used = {avail} and {over:?} overcommitted",
                        self.resources[r], self.names[i]
                    ));
                }
            }
        }
        for r in 0..nres {
            if self.max_capacity.get(r).copied()
                != self.capacity[r].iter().copied().max().or(Some(0))
            {
                return Err(format!(
                    "largest capacity of {} is stale",
                    self.resources[r]
                ));
            }
        }
        self.ledger.validate(self)?;
        if self.domains.first().map(|l| l.len()) != Some(1) {
            return Err("there must be exactly one root domain".into());
        }
        let root = self.domains[0][0];
        if root.start != 0 || root.end as usize != n {
            return Err("root domain must cover every node".into());
        }
        let level_keys: Vec<u32> = self
            .topology
            .label_levels()
            .iter()
            .map(|k| self.keys.get_index_of(k).map_or(NONE, |i| i as u32))
            .collect();
        for d in 0..self.domains.len() {
            for (di, dom) in self.domains[d].iter().enumerate() {
                if !(dom.start <= dom.direct && dom.direct <= dom.end)
                    || (d > 0 && dom.start == dom.end)
                {
                    return Err(format!("domain {d}/{di} has a bad range"));
                }
                if d + 1 < self.domains.len() {
                    let ch = &self.domains[d + 1][dom.child_start as usize..dom.child_end as usize];
                    let mut at = dom.start;
                    for c in ch {
                        if c.start != at || c.parent as usize != di {
                            return Err(format!("children of domain {d}/{di} are not contiguous"));
                        }
                        at = c.end;
                    }
                    if at != dom.direct {
                        return Err(format!("domain {d}/{di}: children do not end at direct"));
                    }
                } else if dom.direct != dom.start {
                    return Err(format!(
                        "deepest domain {d}/{di} must have only direct nodes"
                    ));
                }
                // Membership agrees with labels.
                for ix in dom.start..dom.end {
                    let labels = &self.labels[ix as usize];
                    let vals = self.domain_values(d, di as u32);
                    for (lvl, v) in vals.iter().enumerate() {
                        let has = labels.iter().any(|&(k, val)| {
                            k == level_keys[lvl] && self.values[val as usize] == *v
                        });
                        if !has {
                            return Err(format!(
                                "node {} is in domain {} without its label",
                                self.names[ix as usize],
                                vals.join("/")
                            ));
                        }
                    }
                    let in_child = ix < dom.direct;
                    if d + 1 < self.domains.len() {
                        let has_next = labels.iter().any(|&(k, _)| k == level_keys[d]);
                        if has_next != in_child {
                            return Err(format!(
                                "node {} misfiled at depth {d}",
                                self.names[ix as usize]
                            ));
                        }
                    }
                }
                for r in 0..nres {
                    let s = self.summary(d, di, r);
                    let col = &self.free[r][dom.start as usize..dom.end as usize];
                    let total = col.iter().fold(0u64, |a, &f| a.saturating_add(f));
                    let max = col.iter().copied().max().unwrap_or(0);
                    if s.total != total || s.max != max {
                        return Err(format!(
                            "summary of domain {d}/{di} for {} is stale",
                            self.resources[r]
                        ));
                    }
                }
            }
        }
        let mut pairs: Vec<(u32, u32)> = self.labels.iter().flatten().copied().collect();
        pairs.sort_unstable();
        pairs.dedup();
        for (k, v) in pairs {
            let (key, value) = (&self.keys[k as usize], &self.values[v as usize]);
            let set = self
                .label_set(key, value)
                .ok_or("label index lost a label")?;
            let has_key = self.key_set(key).ok_or("label key index lost a key")?;
            for i in 0..n {
                if set.contains(i) != self.labels[i].contains(&(k, v)) {
                    return Err(format!(
                        "label index wrong for node {} ({key}={value})",
                        self.names[i]
                    ));
                }
                if has_key.contains(i) != self.labels[i].iter().any(|l| l.0 == k) {
                    return Err(format!(
                        "label key index wrong for node {} ({key})",
                        self.names[i]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Groups sorted node paths into domains, one vector per depth (0 = cluster).
/// `paths` holds `levels` value ids per node in storage order, [`NONE`] from the first
/// missing label on.
fn build_domains(paths: &[u32], len: usize, levels: usize) -> Vec<Vec<Domain>> {
    let n = len as u32;
    let at = |i: u32, depth: usize| paths[i as usize * levels + depth - 1];
    let mut out: Vec<Vec<Domain>> = Vec::with_capacity(levels + 1);
    out.push(vec![Domain {
        start: 0,
        end: n,
        direct: if levels == 0 { 0 } else { n },
        parent: NONE,
        value: NONE,
        child_start: 0,
        child_end: 0,
    }]);
    for depth in 1..=levels {
        let mut level: Vec<Domain> = Vec::new();
        let parents = &out[depth - 1];
        let mut parent = 0usize;
        for i in 0..n {
            let v = at(i, depth);
            if v == NONE {
                continue;
            }
            while parents[parent].end <= i {
                parent += 1;
            }
            match level.last_mut() {
                Some(d) if d.end == i && d.parent as usize == parent && at(d.start, depth) == v => {
                    d.end = i + 1;
                }
                _ => level.push(Domain {
                    start: i,
                    end: i + 1,
                    direct: i,
                    parent: parent as u32,
                    value: v,
                    child_start: 0,
                    child_end: 0,
                }),
            }
        }
        // Link parents to their children; a parent's direct nodes start after them.
        let parents = &mut out[depth - 1];
        for p in parents.iter_mut() {
            p.child_start = 0;
            p.child_end = 0;
            p.direct = p.start;
        }
        let mut first_seen = vec![false; parents.len()];
        for (ci, c) in level.iter().enumerate() {
            let p = &mut parents[c.parent as usize];
            if !first_seen[c.parent as usize] {
                first_seen[c.parent as usize] = true;
                p.child_start = ci as u32;
            }
            p.child_end = ci as u32 + 1;
            p.direct = c.end;
        }
        if depth == levels {
            for d in &mut level {
                d.direct = d.start;
            }
        }
        out.push(level);
    }
    out
}

/// FNV-1a over everything a compiled gang depends on: levels, resources, and per node
/// (in storage order) its name, labels and taints. Equal for inventories built from the
/// same nodes in any order.
fn fingerprint(inv: &Inventory) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    // A string's hash depends only on its text; each distinct key, value and taint is
    // hashed once, then combined per node.
    let text = |s: &str| FxBuildHasher.hash_one(s);
    let keys: Vec<u64> = inv.keys.iter().map(|k| text(k)).collect();
    let values: Vec<u64> = inv.values.iter().map(|v| text(v).rotate_left(29)).collect();
    let taints: Vec<u64> = inv
        .taints
        .iter()
        .map(|(t, _)| FxBuildHasher.hash_one(t).rotate_left(17))
        .collect();
    let mut h = rustc_hash::FxHasher::default();
    inv.topology.levels().hash(&mut h);
    for r in &inv.resources {
        r.hash(&mut h);
    }
    for (ix, name) in inv.names.iter().enumerate() {
        name.hash(&mut h);
        // Labels and taints in an order-free way: a sum of per-item hashes.
        let mut acc = 0u64;
        for &(k, v) in &inv.labels[ix] {
            acc = acc.wrapping_add(
                keys[k as usize].wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ values[v as usize],
            );
        }
        for &t in inv.taints_of.row(ix) {
            acc = acc.wrapping_add(taints[t as usize]);
        }
        h.write_u64(acc);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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
