//! Building an inventory: validating node descriptions once, sorting nodes by topology
//! path, interning names and indexing labels and taints.

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::bitset::{Bitset, NodeSet};
use super::domains::build_domains;
use super::journal::Journal;
use super::{Inventory, NONE, PODS, UNLIMITED};
use crate::model::names::{check_label_value, check_node_name, check_qualified_name};
use crate::model::{Error, EvictableUnit, NodeSpec, Taint, Topology};

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
    evictable: Vec<EvictableUnit>,
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

    /// Declares an evictable unit: running work the library did not reserve, which
    /// preemption may evict. See [`EvictableUnit`] and [`Inventory::add_evictable`].
    pub fn evictable(mut self, unit: EvictableUnit) -> Self {
        self.evictable.push(unit);
        self
    }

    /// Validates and builds the inventory. See [`InventoryBuilder`].
    ///
    /// # Errors
    /// [`Error::InvalidInventory`] for a duplicate or malformed node name, a malformed
    /// label key or value, resource name or taint; [`Error::InvalidQuantity`] for a bad
    /// capacity or used amount. The field names the node (`nodes[a1].labels.rack`).
    /// Evictable units as [`Inventory::add_evictable`].
    pub fn build(self) -> Result<Inventory, Error> {
        let mut inv = Inventory::from_specs(self.topology, &self.nodes, &[])?;
        for u in self.evictable {
            inv.add_evictable(u)?;
        }
        Ok(inv)
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
            evictable: Vec::new(),
        }
    }

    /// Builds from node descriptions; `keep` names resources to have columns for even if
    /// no node mentions them (a rebuild keeps what reservations refer to).
    ///
    /// Phases: the resource set ([`resource_names`]); one validating pass over the nodes
    /// in input order that interns names and fills input-order columns ([`Input::read`]);
    /// the storage order ([`Input::storage_order`]); everything per node permuted into it
    /// ([`Sorted::lay_out`]); the label and taint indexes ([`label_index`],
    /// [`taint_index`]); and the domains, free columns, summaries and fingerprint.
    pub(crate) fn from_specs(
        topology: Topology,
        specs: &[NodeSpec],
        keep: &[String],
    ) -> Result<Inventory, Error> {
        Inventory::from_specs_with(topology, specs, keep, Memo::On)
    }

    /// [`Inventory::from_specs`], with or without the memo of the previous node's names
    /// ([`Memo`]): both build the same inventory ([`Inventory::check_build`] compares).
    pub(crate) fn from_specs_with(
        topology: Topology,
        specs: &[NodeSpec],
        keep: &[String],
        memo: Memo,
    ) -> Result<Inventory, Error> {
        let len = specs.len();
        if len >= NONE as usize {
            return Err(Error::inventory("nodes", len, "too many nodes"));
        }
        // Level keys are interned first, so they keep the smallest key ids.
        let mut keys: IndexSet<String, FxBuildHasher> = IndexSet::default();
        let level_keys: Vec<u32> = topology
            .label_levels()
            .iter()
            .map(|k| id(keys.insert_full(k.clone()).0))
            .collect();
        let resources = resource_names(specs, keep, memo)?;
        let input = Input::read(specs, keys, &level_keys, &resources, memo)?;
        let order = input.storage_order(specs, level_keys.len(), memo);
        let Input {
            keys,
            values,
            taint_ids,
            labels,
            taints,
            paths,
            capacity,
            used,
        } = input;
        let sorted = Sorted::lay_out(specs, &order, labels, &taints, &paths, level_keys.len());
        let permute = |cols: Vec<Vec<u64>>| -> Vec<Vec<u64>> {
            cols.into_iter()
                .map(|c| order.iter().map(|&o| c[o as usize]).collect())
                .collect()
        };
        let (capacity, used) = (permute(capacity), permute(used));
        let (pair_sets, key_sets) = label_index(&sorted, &level_keys, keys.len());
        let taints = taint_index(taint_ids, &sorted.taints_of, len);

        let domains = build_domains(&sorted.paths, len, level_keys.len());
        let free = capacity
            .iter()
            .zip(&used)
            .map(|(cap, used)| {
                cap.iter()
                    .zip(used)
                    .map(|(c, u)| c.saturating_sub(*u))
                    .collect()
            })
            .collect();
        let mut inv = Inventory {
            topology,
            names: sorted.names,
            labels: sorted.labels,
            schedulable: sorted.schedulable,
            resources,
            free,
            overcommit: FxHashMap::default(),
            max_capacity: capacity
                .iter()
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .collect(),
            taints_of: sorted.taints_of,
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
        inv.rebuild_summaries();
        inv.layout_id = fingerprint(&inv);
        Ok(inv)
    }
}

/// An id or a node position as stored: every interned set and the node list are
/// smaller than [`NONE`] (nodes are checked; names come from at most that many nodes'
/// finitely many labels and taints).
#[inline]
fn id(i: usize) -> u32 {
    i as u32
}

/// Every resource name: `keep`, then each one a node mentions (checked when first
/// seen), numbered in name order so that nothing depends on node order.
fn resource_names(
    specs: &[NodeSpec],
    keep: &[String],
    memo: Memo,
) -> Result<IndexSet<String, FxBuildHasher>, Error> {
    let mut seen: rustc_hash::FxHashSet<&str> = keep.iter().map(String::as_str).collect();
    let mut prev: Option<&NodeSpec> = None;
    for spec in specs {
        // A name at the position the previous node had it is in `seen` already.
        let at_prev = |i: usize, r: &str| {
            memo == Memo::On
                && prev.is_some_and(|p| {
                    let n = p.capacity.len();
                    let at = if i < n {
                        p.capacity.get_index(i)
                    } else {
                        p.used.get_index(i - n)
                    };
                    at.is_some_and(|(q, _)| same(q, r))
                })
        };
        let (prev_cap, cap) = (
            prev.map_or(usize::MAX, |p| p.capacity.len()),
            spec.capacity.len(),
        );
        for (i, r) in spec.capacity.keys().chain(spec.used.keys()).enumerate() {
            // Positions line up only when both nodes have as many capacity names.
            if prev_cap == cap && at_prev(i, r) {
                continue;
            }
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
        prev = Some(spec);
    }
    let mut sorted: Vec<&str> = seen.into_iter().collect();
    sorted.sort_unstable();
    Ok(sorted.into_iter().map(str::to_owned).collect())
}

/// The nodes as given, validated once and interned, in input order.
struct Input {
    keys: IndexSet<String, FxBuildHasher>,
    values: IndexSet<String, FxBuildHasher>,
    taint_ids: IndexSet<Taint, FxBuildHasher>,
    /// `[node]`: interned `(key, value)` labels, sorted by key.
    labels: Vec<Vec<(u32, u32)>>,
    /// `[node]`: taint ids, sorted, each once.
    taints: Vec<Vec<u32>>,
    /// `[node * levels + level]`: the level's value id, [`NONE`] from the first missing
    /// label on.
    paths: Vec<u32>,
    /// `[resource][node]`, milli-units.
    capacity: Vec<Vec<u64>>,
    used: Vec<Vec<u64>>,
}

impl Input {
    /// One pass in input order: validate every node, intern its names, fill its columns.
    fn read(
        specs: &[NodeSpec],
        keys: IndexSet<String, FxBuildHasher>,
        level_keys: &[u32],
        resources: &IndexSet<String, FxBuildHasher>,
        memo: Memo,
    ) -> Result<Input, Error> {
        let (len, depth, nres) = (specs.len(), level_keys.len(), resources.len());
        let mut input = Input {
            keys,
            values: IndexSet::default(),
            taint_ids: IndexSet::default(),
            labels: Vec::with_capacity(len),
            taints: Vec::with_capacity(len),
            paths: vec![NONE; len * depth],
            capacity: vec![vec![0u64; len]; nres],
            used: vec![vec![0u64; len]; nres],
        };
        let mut names: IndexSet<&str, FxBuildHasher> = IndexSet::default();
        names.reserve(len);
        let pods = resources.get_index_of(PODS);
        let mut last = Last {
            memo,
            ..Last::default()
        };
        for (i, spec) in specs.iter().enumerate() {
            let n = &spec.name;
            check_node_name(n).map_err(|r| Error::inventory("nodes[].name", n, r))?;
            if !names.insert(n.as_str()) {
                return Err(Error::inventory(
                    format!("nodes[{n}].name"),
                    n,
                    "duplicate node name",
                ));
            }
            let labels = input.intern_labels(spec, &mut last)?;
            for (l, &lk) in level_keys.iter().enumerate() {
                match labels.binary_search_by_key(&lk, |&(k, _)| k) {
                    Ok(j) => input.paths[i * depth + l] = labels[j].1,
                    Err(_) => break,
                }
            }
            for (map, cols, what, ids) in [
                (
                    &spec.capacity,
                    &mut input.capacity,
                    "capacity",
                    &mut last.capacity,
                ),
                (&spec.used, &mut input.used, "used", &mut last.used),
            ] {
                ids.truncate(map.len());
                for (j, (r, a)) in map.iter().enumerate() {
                    let ri = match ids.get(j) {
                        Some(&(p, ri)) if last.memo == Memo::On && same(p, r) => ri,
                        _ => {
                            let ri = resources.get_index_of(r.as_str()).unwrap_or(0);
                            remember(ids, j, (r.as_str(), ri));
                            ri
                        }
                    };
                    cols[ri][i] = a.resolve_at(|| format!("nodes[{n}].{what}.{r}"))?.millis();
                }
            }
            if let Some(p) = pods {
                if !spec.capacity.contains_key(PODS) {
                    input.capacity[p][i] = UNLIMITED;
                }
            }
            let taints = input.intern_taints(spec, &mut last)?;
            input.labels.push(labels);
            input.taints.push(taints);
        }
        Ok(input)
    }

    /// A node's labels as `(key, value)` ids, sorted by key; names are checked once,
    /// when first seen. A key or value at the position the previous node had it takes
    /// that node's id ([`Last`]).
    fn intern_labels<'a>(
        &mut self,
        spec: &'a NodeSpec,
        last: &mut Last<'a>,
    ) -> Result<Vec<(u32, u32)>, Error> {
        let n = &spec.name;
        let mut labels = Vec::with_capacity(spec.labels.len());
        last.labels.truncate(spec.labels.len());
        for (j, (k, v)) in spec.labels.iter().enumerate() {
            let (kid, vid) = match last.labels.get(j) {
                Some(&(pk, kid, pv, vid)) if last.memo == Memo::On => (
                    (same(pk, k)).then_some(kid as usize),
                    (same(pv, v)).then_some(vid as usize),
                ),
                _ => (None, None),
            };
            let kid = match kid.or_else(|| self.keys.get_index_of(k.as_str())) {
                Some(i) => i,
                None => {
                    check_qualified_name(k)
                        .map_err(|r| Error::inventory(format!("nodes[{n}].labels"), k, r))?;
                    self.keys.insert_full(k.clone()).0
                }
            };
            let vid = match vid.or_else(|| self.values.get_index_of(v.as_str())) {
                Some(i) => i,
                None => {
                    check_label_value(v)
                        .map_err(|r| Error::inventory(format!("nodes[{n}].labels.{k}"), v, r))?;
                    self.values.insert_full(v.clone()).0
                }
            };
            remember(
                &mut last.labels,
                j,
                (k.as_str(), id(kid), v.as_str(), id(vid)),
            );
            labels.push((id(kid), id(vid)));
        }
        labels.sort_unstable();
        Ok(labels)
    }

    /// A node's taints as ids, sorted, each once; each is checked (a taint equal to the
    /// one at its position on the previous node passed the same checks: [`Last`]).
    fn intern_taints<'a>(
        &mut self,
        spec: &'a NodeSpec,
        last: &mut Last<'a>,
    ) -> Result<Vec<u32>, Error> {
        let n = &spec.name;
        let mut taints = Vec::with_capacity(spec.taints.len());
        last.taints.truncate(spec.taints.len());
        for (j, t) in spec.taints.iter().enumerate() {
            if let Some(&(p, tid)) = last.taints.get(j) {
                if last.memo == Memo::On && p == t {
                    taints.push(tid);
                    continue;
                }
            }
            let f = || format!("nodes[{n}].taints[{j}]");
            check_qualified_name(&t.key)
                .map_err(|r| Error::inventory(format!("{}.key", f()), &t.key, r))?;
            check_label_value(&t.value)
                .map_err(|r| Error::inventory(format!("{}.value", f()), &t.value, r))?;
            let tid = match self.taint_ids.get_index_of(t) {
                Some(i) => i,
                None => self.taint_ids.insert_full(t.clone()).0,
            };
            remember(&mut last.taints, j, (t, id(tid)));
            taints.push(id(tid));
        }
        taints.sort_unstable();
        taints.dedup();
        Ok(taints)
    }

    /// Storage order (input positions): topology path (values compared as text, a
    /// missing label after every value), then name. Independent of the input order.
    fn storage_order(&self, specs: &[NodeSpec], depth: usize, memo: Memo) -> Vec<u32> {
        if memo == Memo::On && depth <= 4 {
            return self.storage_order_packed(specs, depth);
        }
        let values = &self.values;
        let mut rank = vec![0u32; values.len()];
        {
            let mut by_text: Vec<usize> = (0..values.len()).collect();
            by_text.sort_unstable_by(|&a, &b| values[a].cmp(&values[b]));
            for (r, &v) in by_text.iter().enumerate() {
                rank[v] = id(r);
            }
        }
        // Sort keys, flat: value ranks per level (a missing label ranks last).
        let ranks: Vec<u32> = self
            .paths
            .iter()
            .map(|&v| if v == NONE { NONE } else { rank[v as usize] })
            .collect();
        let key = |i: u32| &ranks[i as usize * depth..i as usize * depth + depth];
        let mut order: Vec<u32> = (0..specs.len()).map(id).collect();
        order.sort_unstable_by(|&a, &b| {
            key(a)
                .cmp(key(b))
                .then_with(|| specs[a as usize].name.cmp(&specs[b as usize].name))
        });
        order
    }

    /// [`Input::storage_order`] for at most four levels: only the values on some node's
    /// path are ranked (not, say, every node's own hostname label), and a node's ranks
    /// are packed into one `u128`, first level highest, so that one integer compare
    /// orders two paths as the slices compare (a missing label, [`NONE`], still last).
    fn storage_order_packed(&self, specs: &[NodeSpec], depth: usize) -> Vec<u32> {
        let values = &self.values;
        let mut rank = vec![NONE; values.len()];
        let mut on_path: Vec<u32> = Vec::new();
        for &v in &self.paths {
            if v != NONE && rank[v as usize] == NONE {
                rank[v as usize] = 0;
                on_path.push(v);
            }
        }
        on_path.sort_unstable_by(|&a, &b| values[a as usize].cmp(&values[b as usize]));
        for (r, &v) in on_path.iter().enumerate() {
            rank[v as usize] = id(r);
        }
        let mut keyed: Vec<(u128, u32)> = (0..specs.len())
            .map(|i| {
                let path = &self.paths[i * depth..i * depth + depth];
                let key = path.iter().fold(0u128, |acc, &v| {
                    let r = if v == NONE { NONE } else { rank[v as usize] };
                    (acc << 32) | u128::from(r)
                });
                (key, id(i))
            })
            .collect();
        keyed.sort_unstable_by(|&(ka, a), &(kb, b)| {
            ka.cmp(&kb)
                .then_with(|| specs[a as usize].name.cmp(&specs[b as usize].name))
        });
        keyed.into_iter().map(|(_, i)| i).collect()
    }
}

/// Whether [`Input::read`] reuses the previous node's ids ([`Last`]) and
/// [`Input::storage_order`] sorts packed keys; `Off` is the plain path (every name
/// looked up, every value ranked, paths compared as slices), kept to check against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Memo {
    #[default]
    Off,
    On,
}

/// The previous node's names by position, with their ids: nodes of one pool list the
/// same label keys, resources and taints in the same order, and most values (zone,
/// block, product) repeat from one node to the next, so a text compare with the name at
/// the same position replaces a hash lookup. A name equal to one already interned has
/// that one's id and passed its checks, so the memo changes no id and no error.
#[derive(Default)]
struct Last<'a> {
    /// As asked; the rows are empty before the first node.
    memo: Memo,
    /// `(key, key id, value, value id)` per label position.
    labels: Vec<(&'a str, u32, &'a str, u32)>,
    /// `(name, resource index)` per capacity and per used position.
    capacity: Vec<(&'a str, usize)>,
    used: Vec<(&'a str, usize)>,
    /// `(taint, id)` per taint position.
    taints: Vec<(&'a Taint, u32)>,
}

/// Equal texts, checked by length first (most differing names differ in length).
#[inline]
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a == b
}

/// Records `item` at position `j` of a memo row (rows are truncated to the node's
/// length first, so `j` is at most the row's length).
#[inline]
fn remember<T>(row: &mut Vec<T>, j: usize, item: T) {
    if j < row.len() {
        row[j] = item;
    } else {
        row.push(item);
    }
}

/// Per node, in storage order.
struct Sorted {
    names: IndexSet<String, FxBuildHasher>,
    labels: Vec<Vec<(u32, u32)>>,
    taints_of: Csr,
    /// `[node * levels + level]`, as [`Input::paths`].
    paths: Vec<u32>,
    schedulable: Bitset,
}

impl Sorted {
    /// Names, labels, taints, paths and schedulability permuted into `order`.
    fn lay_out(
        specs: &[NodeSpec],
        order: &[u32],
        mut labels_in: Vec<Vec<(u32, u32)>>,
        taints_in: &[Vec<u32>],
        paths_in: &[u32],
        depth: usize,
    ) -> Sorted {
        let len = order.len();
        let mut out = Sorted {
            names: IndexSet::default(),
            labels: Vec::with_capacity(len),
            taints_of: Csr::with_capacity(len),
            paths: Vec::with_capacity(len * depth),
            schedulable: Bitset::new(len),
        };
        out.names.reserve(len);
        for (ix, &orig) in order.iter().enumerate() {
            let o = orig as usize;
            out.names.insert(specs[o].name.clone());
            out.schedulable.set(ix, specs[o].schedulable);
            out.labels.push(std::mem::take(&mut labels_in[o]));
            out.taints_of.push(&taints_in[o]);
            out.paths
                .extend_from_slice(&paths_in[o * depth..o * depth + depth]);
        }
        out
    }
}

/// The label indexes: nodes per `(key, value)` and per key. A topology label of a node
/// inside that level's domain is answered from the domain ranges (see `label_set`);
/// only the others are listed.
fn label_index(
    sorted: &Sorted,
    level_keys: &[u32],
    nkeys: usize,
) -> (FxHashMap<(u32, u32), NodeSet>, Vec<NodeSet>) {
    let (len, depth) = (sorted.labels.len(), level_keys.len());
    let mut pair_lists: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
    let mut key_lists: Vec<Vec<u32>> = vec![Vec::new(); nkeys];
    for (ix, ls) in sorted.labels.iter().enumerate() {
        for &(k, v) in ls {
            if let Some(l) = level_keys.iter().position(|&lk| lk == k) {
                if sorted.paths[ix * depth + l] != NONE {
                    continue;
                }
            }
            pair_lists.entry((k, v)).or_default().push(id(ix));
            key_lists[k as usize].push(id(ix));
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
    (pair_sets, key_sets)
}

/// Nodes per taint.
fn taint_index(
    taint_ids: IndexSet<Taint, FxBuildHasher>,
    taints_of: &Csr,
    len: usize,
) -> Vec<(Taint, NodeSet)> {
    let mut taint_lists: Vec<Vec<u32>> = vec![Vec::new(); taint_ids.len()];
    for (ix, ts) in taints_of.rows().enumerate() {
        for &t in ts {
            taint_lists[t as usize].push(id(ix));
        }
    }
    taint_ids
        .into_iter()
        .zip(taint_lists)
        .map(|(t, l)| (t, NodeSet::from_sorted(l, len)))
        .collect()
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

impl Inventory {
    /// Builds `nodes` twice, with the memo of [`Input::read`] and on the plain path that
    /// looks every name up, and compares everything the two built (or the errors):
    /// `Err` names the first part that differs. For tests (gang-kube's fixtures and
    /// generated clusters); not a stable interface.
    #[doc(hidden)]
    pub fn check_build(topology: Topology, nodes: &[NodeSpec]) -> Result<(), String> {
        let with = Inventory::from_specs_with(topology.clone(), nodes, &[], Memo::On);
        let without = Inventory::from_specs_with(topology, nodes, &[], Memo::Off);
        match (with, without) {
            (Ok(a), Ok(b)) => {
                let (a, b) = (a.parts(), b.parts());
                match a.iter().zip(&b).find(|(x, y)| x != y) {
                    Some((x, y)) => Err(format!("with the memo {x}\nwithout {y}")),
                    None => Ok(()),
                }
            }
            (Err(a), Err(b)) if format!("{a:?}") == format!("{b:?}") => Ok(()),
            (a, b) => Err(format!(
                "with the memo {:?}\nwithout {:?}",
                a.map(|_| ()),
                b.map(|_| ())
            )),
        }
    }

    /// Everything a build makes, one part a line (the label sets in key order).
    fn parts(&self) -> Vec<String> {
        let mut pairs: Vec<_> = self.pair_sets.iter().collect();
        pairs.sort_unstable_by_key(|(kv, _)| **kv);
        let mut overcommit: Vec<_> = self.overcommit.iter().collect();
        overcommit.sort_unstable();
        vec![
            format!("topology {:?}", self.topology),
            format!("names {:?}", self.names),
            format!("labels {:?}", self.labels),
            format!("schedulable {:?}", self.schedulable),
            format!("resources {:?}", self.resources),
            format!("capacity {:?}", self.capacity),
            format!("max_capacity {:?}", self.max_capacity),
            format!("used {:?}", self.used),
            format!("overcommit {overcommit:?}"),
            format!("free {:?}", self.free),
            format!("taints_of {:?}", self.taints_of),
            format!("keys {:?}", self.keys),
            format!("values {:?}", self.values),
            format!("pair_sets {pairs:?}"),
            format!("key_sets {:?}", self.key_sets),
            format!("taints {:?}", self.taints),
            format!("domains {:?}", self.domains),
            format!("summaries {:?}", self.summaries),
            format!("layout_id {}", self.layout_id),
        ]
    }
}

#[cfg(test)]
mod tests;
