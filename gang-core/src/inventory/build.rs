//! Building an inventory: validating node descriptions once, sorting nodes by topology
//! path, interning names and indexing labels and taints.

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::bitset::{Bitset, NodeSet};
use super::domains::build_domains;
use super::journal::Journal;
use super::{Inventory, NONE};
use crate::model::names::{check_label_value, check_node_name, check_qualified_name};
use crate::model::{Error, NodeSpec, Taint, Topology};

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
///     builder.push(node(&format!("b{i}"), "b"));
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

    /// Adds a node in place, for loops (the chained form is [`InventoryBuilder::node`];
    /// adding a node to a built inventory is [`Inventory::add_node`]). See
    /// [`InventoryBuilder`].
    pub fn push(&mut self, node: NodeSpec) -> &mut Self {
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
            check_node_name(n).map_err(|r| Error::inventory("nodes[].name", n, r))?;
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
            ledger: crate::inventory::ledger::Ledger::default(),
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
