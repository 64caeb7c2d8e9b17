//! A placement: which domain, and how many members of each role on which node.

use std::fmt;

use crate::compile::{Compiled, CompiledGang};
use crate::inventory::domains::Scope;
use crate::inventory::ledger::Member;
use crate::inventory::Inventory;
use crate::model::names::{short_level, HOSTNAME_LEVEL};
use crate::model::Assignment;

/// Where a gang goes: the level and domain used, and per-role per-node counts.
///
/// Assignments are ordered by role (as given) then node (topology order), so the same
/// inventory and request give the same placement, byte for byte.
///
/// ```
/// use gang_core::{Gang, HOSTNAME_LEVEL, Inventory, NodeSpec, Role, Topology};
/// let node = |name: &str, rack: &str| {
///     NodeSpec::new(name)
///         .label("block", "b1")
///         .label("rack", rack)
///         .capacity("nvidia.com/gpu", 8)
///         .capacity("cpu", "64")
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b")])
///     .build()?;
/// let gang = |workers| {
///     Gang::new("train")
///         .role(Role::new("launcher", 1).request("cpu", 4))
///         .role(Role::new("worker", workers).request("nvidia.com/gpu", 1).request("cpu", 2))
///         .required("rack")
/// };
/// let p = inv.place(&gang(16))?.placement().cloned().unwrap();
/// assert_eq!(p.gang(), "train");
/// assert_eq!(p.level(), Some("rack"));
/// assert_eq!(p.domain(), [("block".into(), "b1".into()), ("rack".into(), "a".into())]);
/// assert_eq!(p.domain_path(), "b1/a");
/// assert_eq!(p.assignments().len(), 3); // launcher on a1; workers on a1 and a2
/// assert_eq!((p.placed("worker"), p.placed("nobody")), (Some(16), None));
/// assert_eq!(p.placed_by_role().collect::<Vec<_>>(), [("launcher", 1), ("worker", 16)]);
/// assert_eq!(p.member_count(), 17);
/// assert_eq!(p.node_counts(), [("a1", 9), ("a2", 8)]);
/// let used: Vec<(&str, u32)> = p.domains_used().iter().map(|(k, n)| (k.as_str(), *n)).collect();
/// assert_eq!(used, [("block", 1), ("rack", 1), (HOSTNAME_LEVEL, 2)]);
/// assert!(p.search_complete());
/// assert_eq!(
///     p.to_string(),
///     "gang train placed in rack b1/a; 1 launcher on a1 (1); 16 worker on a1 (8), a2 (8)"
/// );
/// // 17 workers need 17 GPUs in one rack; no rack has more than 16.
/// assert!(inv.place(&gang(17))?.placement().is_none());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Placement {
    pub(crate) compiled: CompiledGang,
    pub(crate) depth: usize,
    pub(crate) index: u32,
    pub(crate) level: Option<String>,
    pub(crate) domain: Vec<(String, String)>,
    pub(crate) assignments: Vec<Assignment>,
    /// `(role, node index, count)`, sorted.
    pub(crate) members: Vec<(u16, u32, u32)>,
    pub(crate) placed: Vec<u32>,
    pub(crate) domains_used: Vec<(String, u32)>,
    pub(crate) complete: bool,
}

impl PartialEq for Placement {
    fn eq(&self, o: &Self) -> bool {
        self.compiled.gang() == o.compiled.gang()
            && self.level == o.level
            && self.domain == o.domain
            && self.assignments == o.assignments
            && self.complete == o.complete
    }
}

impl Placement {
    /// Builds the result. Allocates exactly what the result holds (no temporaries):
    /// `seen` is the caller's scratch space.
    pub(crate) fn new(
        inv: &Inventory,
        compiled: &CompiledGang,
        found: Scope,
        assign: &[Member],
        complete: bool,
        seen: &mut Vec<u32>,
    ) -> Placement {
        let c = &compiled.inner;
        let mut members: Vec<Member> =
            Vec::with_capacity(assign.iter().filter(|m| m.2 > 0).count());
        members.extend(assign.iter().copied().filter(|m| m.2 > 0));
        members.sort_unstable();
        let mut placed = vec![0u32; c.roles.len()];
        let assignments = members
            .iter()
            .map(|&(r, n, k)| {
                placed[r as usize] += k;
                Assignment {
                    role: c.gang.roles[r as usize].name.clone(),
                    node: inv.names[n as usize].clone(),
                    count: k,
                }
            })
            .collect();
        let l = inv.label_depth();
        let (path_depth, path_index, node) = if found.depth.ix() > l {
            let node = found.index;
            let leaf = inv.leaf_depth(node);
            (leaf, inv.domain_of(node, leaf).unwrap_or(0), Some(node))
        } else {
            (found.depth.ix(), found.index, None)
        };
        let mut domain = Vec::with_capacity(path_depth + usize::from(node.is_some()));
        let (mut d, mut i) = (path_depth, path_index);
        while d > 0 {
            let dm = &inv.domains[d][i as usize];
            let key = inv.topology.key_of(d).unwrap_or_default().to_owned();
            domain.push((key, inv.values[dm.value as usize].clone()));
            i = dm.parent;
            d -= 1;
        }
        domain.reverse();
        if let Some(n) = node {
            domain.push((HOSTNAME_LEVEL.to_owned(), inv.names[n as usize].clone()));
        }
        let mut domains_used = Vec::with_capacity(l + 1);
        for d in 1..=l + 1 {
            let key = inv.topology.key_of(d).unwrap_or(HOSTNAME_LEVEL).to_owned();
            domains_used.push((key, distinct_domains(inv, &members, d, seen)));
        }
        Placement {
            compiled: compiled.clone(),
            depth: found.depth.ix(),
            index: found.index,
            level: inv.topology.key_of(found.depth.ix()).map(str::to_owned),
            domain,
            assignments,
            members,
            placed,
            domains_used,
            complete,
        }
    }

    /// The gang's name. See [`Placement`].
    pub fn gang(&self) -> &str {
        &self.compiled.gang().name
    }

    /// The level whose single domain holds the constrained members; `None` when the gang
    /// was placed cluster-wide (unconstrained, or split above the top level). See
    /// [`Placement`].
    pub fn level(&self) -> Option<&str> {
        self.level.as_deref()
    }

    /// The domain as `(level key, value)` pairs, outermost first (empty cluster-wide).
    /// See [`Placement`].
    pub fn domain(&self) -> &[(String, String)] {
        &self.domain
    }

    /// The domain's values joined by `/` (`"b1/r1"`; empty cluster-wide). See
    /// [`Placement`].
    pub fn domain_path(&self) -> String {
        self.domain
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Per-role per-node member counts, by role (as given) then node (topology order).
    /// See [`Placement`] and [`Assignment`].
    pub fn assignments(&self) -> &[Assignment] {
        &self.assignments
    }

    /// Members placed for `role` (less than its count only for elastic roles); `None`
    /// for a role the gang does not have. See [`Placement`].
    pub fn placed(&self, role: &str) -> Option<u32> {
        let i = self
            .compiled
            .gang()
            .roles
            .iter()
            .position(|r| r.name == role)?;
        Some(self.placed[i])
    }

    /// Members placed per role, in the gang's role order. See [`Placement`].
    pub fn placed_by_role(&self) -> impl ExactSizeIterator<Item = (&str, u32)> + '_ {
        self.compiled
            .gang()
            .roles
            .iter()
            .zip(&self.placed)
            .map(|(r, &k)| (r.name.as_str(), k))
    }

    /// Total members placed, over all roles. See [`Placement`].
    pub fn member_count(&self) -> u64 {
        self.placed.iter().map(|&p| u64::from(p)).sum()
    }

    /// Members per node, summed over roles, in topology order. See [`Placement`].
    pub fn node_counts(&self) -> Vec<(&str, u32)> {
        let mut v: Vec<(u32, &str, u32)> = self
            .members
            .iter()
            .zip(&self.assignments)
            .map(|(m, a)| (m.1, a.node.as_str(), m.2))
            .collect();
        v.sort_by_key(|x| x.0);
        let mut out: Vec<(&str, u32)> = Vec::new();
        for (_, name, k) in v {
            match out.last_mut() {
                Some(last) if last.0 == name => last.1 += k,
                _ => out.push((name, k)),
            }
        }
        out
    }

    /// Number of distinct domains used at each level (the node level last), e.g.
    /// `[("block", 1), ("rack", 2), ("kubernetes.io/hostname", 3)]`. See [`Placement`].
    pub fn domains_used(&self) -> &[(String, u32)] {
        &self.domains_used
    }

    /// `false` when the exact search ran out of budget at a tighter level first, so a
    /// tighter placement might exist. Always `true` for single-role gangs. See
    /// [`Placement`].
    pub fn search_complete(&self) -> bool {
        self.complete
    }

    /// Re-checks the placement against `inv`: counts within `[min_count, count]`,
    /// eligibility, `max_per_node`, capacity on every node, locality of constrained
    /// members, slices, and that what it reports (domain, level, assignments, domains
    /// used per level) agrees with its members.
    ///
    /// # Errors
    /// A description of the first violation.
    #[doc(hidden)]
    pub fn validate(&self, inv: &Inventory) -> Result<(), String> {
        let c = &self.compiled.inner;
        if c.layout_id != inv.layout_id {
            return Err("placement made for a different inventory layout".into());
        }
        let l = inv.label_depth();
        let nres = inv.resources.len();
        let mut load = vec![0u128; inv.len() * nres];
        let mut totals = vec![0u64; c.roles.len()];
        let in_scope = |n: u32| -> bool {
            match self.depth {
                0 => true,
                d if d > l => n == self.index,
                d => inv.domain_of(n, d) == Some(self.index),
            }
        };
        for w in self.members.windows(2) {
            if (w[0].0, w[0].1) >= (w[1].0, w[1].1) {
                return Err("members not sorted or repeated".into());
            }
        }
        for &(ri, n, k) in &self.members {
            let role = &c.roles[ri as usize];
            let name = &c.gang.roles[ri as usize].name;
            if n as usize >= inv.len() {
                return Err(format!("role {name}: node index {n} out of range"));
            }
            if k == 0 {
                return Err(format!(
                    "role {name}: empty assignment on {}",
                    inv.names[n as usize]
                ));
            }
            if !role.eligible.get(n as usize) || !inv.schedulable.get(n as usize) {
                return Err(format!(
                    "role {name} placed on ineligible node {}",
                    inv.names[n as usize]
                ));
            }
            if k > role.cap_on(crate::inventory::ix::NodeIx(n)) {
                return Err(format!(
                    "role {name}: {k} members on {} exceed max_per_node",
                    inv.names[n as usize]
                ));
            }
            if role.constrained && !in_scope(n) {
                return Err(format!(
                    "role {name}: node {} is outside the chosen domain",
                    inv.names[n as usize]
                ));
            }
            totals[ri as usize] += u64::from(k);
            for &(r, q) in &role.req {
                load[n as usize * nres + r as usize] += u128::from(q) * u128::from(k);
            }
        }
        for (i, role) in c.roles.iter().enumerate() {
            let name = &c.gang.roles[i].name;
            if totals[i] != u64::from(self.placed[i]) {
                return Err(format!(
                    "role {name}: placed count disagrees with assignments"
                ));
            }
            if totals[i] < u64::from(role.min) || totals[i] > u64::from(role.count) {
                return Err(format!(
                    "role {name}: {} members placed, outside [{}, {}]",
                    totals[i], role.min, role.count
                ));
            }
            if role.constrained && c.has_slices() && totals[i] % c.gran[0] != 0 {
                return Err(format!(
                    "role {name}: {} members is not a whole number of slices",
                    totals[i]
                ));
            }
        }
        for n in 0..inv.len() {
            for r in 0..nres {
                if load[n * nres + r] > u128::from(inv.free[r][n]) {
                    return Err(format!(
                        "node {} over capacity in {}",
                        inv.names[n], inv.resources[r]
                    ));
                }
            }
        }
        match broken_slice(inv, c, &self.members) {
            None => {}
            Some(SliceBreak::Outside { node, depth, .. }) => {
                return Err(format!(
                    "slice member on {} outside every {}",
                    inv.names[node as usize],
                    short_level(inv.topology.key_of(depth).unwrap_or_default())
                ));
            }
            Some(SliceBreak::Partial {
                depth, size, held, ..
            }) => {
                return Err(format!(
                    "a {} domain holds {held} members, not a multiple of the slice size {size}",
                    short_level(inv.topology.key_of(depth).unwrap_or_default()),
                ));
            }
        }
        if let Some(r) = c.required {
            if c.any_constrained() && self.depth < r {
                return Err("placed above the required level".into());
            }
        }
        if self.depth <= l {
            let values = inv.domain_values(self.depth, self.index);
            if values.len() != self.domain.len()
                || values.iter().zip(&self.domain).any(|(a, b)| *a != b.1)
            {
                return Err("reported domain is not the chosen one".into());
            }
        }
        // What the placement reports agrees with its members.
        let named = self
            .members
            .iter()
            .zip(&self.assignments)
            .all(|(&(r, n, k), a)| {
                a.role == c.gang.roles[r as usize].name
                    && a.node == inv.names[n as usize]
                    && a.count == k
            });
        if !named || self.assignments.len() != self.members.len() {
            return Err("assignments disagree with the members".into());
        }
        if self.level.as_deref() != inv.topology.key_of(self.depth) {
            return Err("reported level is not the chosen one".into());
        }
        let mut seen = Vec::new();
        for (i, d) in (1..=l + 1).enumerate() {
            let used = distinct_domains(inv, &self.members, d, &mut seen);
            if self.domains_used.get(i).map(|x| x.1) != Some(used) {
                return Err("domains_used disagrees with the members".into());
            }
        }
        Ok(())
    }
}

/// A placement as plain data, with the topology path of every node it uses, taken from
/// the inventory it was made on: what bindings keep, pickle and turn into tables.
/// [`Placement::snapshot`] takes it.
///
/// With the `serde` feature it serialises as `{"gang", "level", "domain": [[level,
/// value]…], "levels", "assignments": [{"role", "node", "count", "path"}…], "nodes":
/// [[node, count]…], "placed": [[role, count]…], "domains_used": [[level, count]…],
/// "search_complete"}` and reads back the same.
///
/// ```
/// use gang_core::{Gang, HOSTNAME_LEVEL, Inventory, NodeSpec, Role, Topology};
/// let node = |n: &str, rack: Option<&str>| {
///     let s = NodeSpec::new(n).label("block", "b1").capacity("gpu", 2);
///     match rack { Some(r) => s.label("rack", r), None => s }
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", Some("a")), node("b1", Some("b")), node("x1", None)])
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 6).request("gpu", 1)).required("block");
/// let p = inv.place(&gang)?.placement().cloned().unwrap();
/// let s = p.snapshot(&inv);
/// assert_eq!((s.gang.as_str(), s.levels.as_slice()), ("g", ["block".to_owned(), "rack".to_owned()].as_slice()));
/// assert_eq!(s.assignments[0].path, ["b1", "a"]);
/// assert_eq!(s.nodes, [("a1".to_owned(), 2), ("b1".to_owned(), 2), ("x1".to_owned(), 2)]);
/// // x1 has no rack label: its members are outside every rack.
/// let racks = s.domain_counts("rack").unwrap();
/// assert_eq!(racks.domains, [("b1/a".to_owned(), 2), ("b1/b".to_owned(), 2)]);
/// assert_eq!(racks.outside, 2);
/// assert_eq!(s.domain_counts(HOSTNAME_LEVEL).unwrap().domains.len(), 3);
/// assert!(s.domain_counts("zone").is_none());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct PlacementSnapshot {
    /// The gang's name.
    pub gang: String,
    /// As [`Placement::level`].
    pub level: Option<String>,
    /// As [`Placement::domain`].
    pub domain: Vec<(String, String)>,
    /// The inventory's label levels, outermost first (the node level not included).
    pub levels: Vec<String>,
    /// As [`Placement::assignments`], each with its node's path.
    pub assignments: Vec<NodeAssignment>,
    /// As [`Placement::node_counts`]: members per node, in topology order.
    pub nodes: Vec<(String, u32)>,
    /// As [`Placement::placed_by_role`].
    pub placed: Vec<(String, u32)>,
    /// As [`Placement::domains_used`].
    pub domains_used: Vec<(String, u32)>,
    /// As [`Placement::search_complete`].
    pub search_complete: bool,
}

/// Members of one role on one node, with the node's topology path (see
/// [`PlacementSnapshot`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct NodeAssignment {
    /// Role name.
    pub role: String,
    /// Node name.
    pub node: String,
    /// Members of the role on the node.
    pub count: u32,
    /// The node's label values for the levels, outermost first, up to its first missing
    /// label (a node without a level's label is outside that level and every finer one).
    pub path: Vec<String>,
}

/// Members per domain of one level (see [`PlacementSnapshot::domain_counts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DomainCounts {
    /// `(domain path, members)` in topology order; node names at the node level.
    pub domains: Vec<(String, u32)>,
    /// Members on nodes outside every domain of the level (without its label).
    pub outside: u32,
}

impl Placement {
    /// The placement as data, with node paths read from `inv`, the inventory it was
    /// made on (a node that is no longer there has an empty path). See
    /// [`PlacementSnapshot`].
    pub fn snapshot(&self, inv: &Inventory) -> PlacementSnapshot {
        let same = self.compiled.inner.layout_id == inv.layout_id;
        let path_of = |n: u32, name: &str| -> Vec<String> {
            let ix = if same {
                Some(n)
            } else {
                inv.names.get_index_of(name).map(|i| i as u32)
            };
            let Some(ix) = ix else {
                return Vec::new();
            };
            let leaf = inv.leaf_depth(ix);
            match inv.domain_of(ix, leaf) {
                Some(d) if leaf > 0 => inv
                    .domain_values(leaf, d)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        PlacementSnapshot {
            gang: self.gang().to_owned(),
            level: self.level.clone(),
            domain: self.domain.clone(),
            levels: inv.topology.label_levels().to_vec(),
            assignments: self
                .members
                .iter()
                .zip(&self.assignments)
                .map(|(&(_, n, _), a)| NodeAssignment {
                    role: a.role.clone(),
                    node: a.node.clone(),
                    count: a.count,
                    path: path_of(n, &a.node),
                })
                .collect(),
            nodes: self
                .node_counts()
                .into_iter()
                .map(|(n, k)| (n.to_owned(), k))
                .collect(),
            placed: self
                .placed_by_role()
                .map(|(r, k)| (r.to_owned(), k))
                .collect(),
            domains_used: self.domains_used.clone(),
            search_complete: self.complete,
        }
    }
}

impl PlacementSnapshot {
    /// Members per domain of `level` (a label level, or [`HOSTNAME_LEVEL`] for nodes),
    /// with the members on nodes outside every domain of that level counted apart;
    /// `None` for a level the inventory does not have. See [`PlacementSnapshot`].
    pub fn domain_counts(&self, level: &str) -> Option<DomainCounts> {
        let depth = self.levels.iter().position(|l| l == level);
        if depth.is_none() && level != HOSTNAME_LEVEL {
            return None;
        }
        let mut out = DomainCounts {
            domains: Vec::new(),
            outside: 0,
        };
        for (node, _) in &self.nodes {
            for a in self.assignments.iter().filter(|a| &a.node == node) {
                let key = match depth {
                    None => a.node.clone(),
                    Some(i) if a.path.len() > i => a.path[..=i].join("/"),
                    Some(_) => {
                        out.outside += a.count;
                        continue;
                    }
                };
                match out.domains.iter_mut().find(|(k, _)| *k == key) {
                    Some(e) => e.1 += a.count,
                    None => out.domains.push((key, a.count)),
                }
            }
        }
        Some(out)
    }

    /// Total members placed. See [`PlacementSnapshot`].
    pub fn member_count(&self) -> u64 {
        self.placed.iter().map(|p| u64::from(p.1)).sum()
    }

    /// The domain's values joined by `/`, as [`Placement::domain_path`].
    pub fn domain_path(&self) -> String {
        self.domain
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// A slice rule that members break (see [`broken_slice`]).
pub(crate) enum SliceBreak {
    /// A constrained member of `role` on `node`, which is in no domain of slice depth
    /// `depth`.
    Outside { role: u16, node: u32, depth: usize },
    /// A domain of slice depth `depth` (with `node` in it) holds `held` members of
    /// `role`: not a whole number of slices of `size`.
    Partial {
        role: u16,
        node: u32,
        depth: usize,
        size: u32,
        held: u64,
    },
}

/// The first slice rule `members` break, if any: every constrained member inside a
/// domain of each slice level, each such domain holding whole slices of each role.
pub(crate) fn broken_slice(
    inv: &Inventory,
    c: &Compiled,
    members: &[Member],
) -> Option<SliceBreak> {
    let l = inv.label_depth();
    for &(depth, size) in &c.slices {
        for (i, role) in c.roles.iter().enumerate() {
            if !role.constrained {
                continue;
            }
            // (domain, members held, first node seen there)
            let mut per: Vec<(u32, u64, u32)> = Vec::new();
            for &(ri, n, k) in members.iter().filter(|m| m.0 as usize == i) {
                let dom = if depth > l {
                    Some(n)
                } else {
                    inv.domain_of(n, depth)
                };
                let Some(dom) = dom else {
                    return Some(SliceBreak::Outside {
                        role: ri,
                        node: n,
                        depth,
                    });
                };
                match per.iter_mut().find(|p| p.0 == dom) {
                    Some(p) => p.1 += u64::from(k),
                    None => per.push((dom, u64::from(k), n)),
                }
            }
            if let Some(&(_, held, node)) = per.iter().find(|p| p.1 % u64::from(size) != 0) {
                return Some(SliceBreak::Partial {
                    role: i as u16,
                    node,
                    depth,
                    size,
                    held,
                });
            }
        }
    }
    None
}

/// How many distinct domains of depth `d` (the node level past the labels) hold
/// `members`; `seen` is scratch space.
fn distinct_domains(inv: &Inventory, members: &[Member], d: usize, seen: &mut Vec<u32>) -> u32 {
    let l = inv.label_depth();
    seen.clear();
    seen.extend(
        members
            .iter()
            .filter_map(|&(_, n, _)| if d > l { Some(n) } else { inv.domain_of(n, d) }),
    );
    seen.sort_unstable();
    seen.dedup();
    seen.len() as u32
}

impl fmt::Display for Placement {
    /// One line per role: `gang g in rack b1/r1: 4 w on n1 (2), n2 (2)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.level {
            None => "cluster-wide".to_owned(),
            Some(k) => format!("in {} {}", short_level(k), self.domain_path()),
        };
        write!(f, "gang {} placed {place}", self.gang())?;
        for (i, role) in self.compiled.gang().roles.iter().enumerate() {
            let on: Vec<String> = self
                .assignments
                .iter()
                .zip(&self.members)
                .filter(|(_, m)| m.0 as usize == i)
                .map(|(a, _)| format!("{} ({})", a.node, a.count))
                .collect();
            write!(f, "; {} {} on {}", self.placed[i], role.name, on.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gang, NodeSpec, Role, Topology};

    use crate::testkit::{placed as place, GPU};

    /// Rack a: a1 (4 GPUs), a2 (2 GPUs); rack b: b1 (3 GPUs, and the only CPUs).
    fn racks() -> Inventory {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(NodeSpec::new("a1").label("rack", "a").capacity(GPU, 4))
            .node(NodeSpec::new("a2").label("rack", "a").capacity(GPU, 2))
            .node(
                NodeSpec::new("b1")
                    .label("rack", "b")
                    .capacity(GPU, 3)
                    .capacity("cpu", 4),
            )
            .build()
            .unwrap();
        inv.validate().unwrap();
        inv
    }

    fn six_in_a_rack(inv: &Inventory) -> Placement {
        // Rack a has exactly 6 GPUs, rack b 3: the only answer is a1 (4) + a2 (2).
        let gang = Gang::new("g")
            .role(Role::new("w", 6).request(GPU, 1))
            .required("rack");
        let p = place(inv, &gang);
        // Node indices in topology order: a1 = 0, a2 = 1, b1 = 2.
        assert_eq!(p.members, [(0, 0, 4), (0, 1, 2)]);
        p
    }

    /// `p` with other members, what it reports derived from them as the solver does.
    fn with_members(p: &Placement, inv: &Inventory, members: Vec<Member>) -> Placement {
        let found = crate::inventory::domains::Scope {
            depth: crate::inventory::ix::Depth(p.depth),
            index: p.index,
        };
        Placement::new(
            inv,
            &p.compiled,
            found,
            &members,
            p.complete,
            &mut Vec::new(),
        )
    }

    fn rejected(p: &Placement, inv: &Inventory, what: &str) {
        let err = p.validate(inv).expect_err(what);
        assert!(err.contains(what), "expected {what:?}, got {err:?}");
    }

    #[test]
    fn validate_rejects_members_over_capacity() {
        let inv = racks();
        let good = six_in_a_rack(&inv);
        // All six on a1, which has 4 GPUs: counts and domain are right, capacity is not.
        let mut p = good.clone();
        p.members = vec![(0, 0, 6)];
        rejected(&p, &inv, "node a1 over capacity in nvidia.com/gpu");
        // The placement itself stops fitting once another workload takes a GPU on a2.
        let mut busy = inv.clone();
        busy.set_used("a2", GPU, 1).unwrap();
        rejected(&good, &busy, "node a2 over capacity in nvidia.com/gpu");
        // ...or once it has been reserved: the same members again exceed what is free.
        let mut held = inv.clone();
        held.reserve(&good).unwrap();
        held.validate().unwrap();
        rejected(&good, &held, "over capacity in nvidia.com/gpu");
    }

    #[test]
    fn validate_rejects_constrained_members_outside_the_domain() {
        let inv = racks();
        let good = six_in_a_rack(&inv);
        // a2's two members moved to b1 (3 GPUs free there): fits, but in rack b.
        let mut p = good.clone();
        p.members = vec![(0, 0, 4), (0, 2, 2)];
        rejected(&p, &inv, "node b1 is outside the chosen domain");
        // The chosen domain switched to rack b while the members stay in rack a.
        let mut p = good.clone();
        p.index = 1;
        rejected(&p, &inv, "node a1 is outside the chosen domain");
        // The reported domain disagrees with the chosen one.
        let mut p = good.clone();
        p.domain[0].1 = "b".into();
        rejected(&p, &inv, "reported domain is not the chosen one");
        // Claimed cluster-wide although the gang requires a rack.
        let mut p = good.clone();
        p.depth = 0;
        p.index = 0;
        rejected(&p, &inv, "placed above the required level");
        // Placed on a node cordoned since, or for an inventory laid out differently.
        let mut cordoned = inv.clone();
        cordoned.cordon("a2").unwrap();
        rejected(&good, &cordoned, "ineligible node a2");
        let mut grown = inv.clone();
        grown
            .add_node(NodeSpec::new("a0").label("rack", "a"))
            .unwrap();
        rejected(&good, &grown, "different inventory layout");
    }

    #[test]
    fn validate_confines_only_constrained_roles() {
        let inv = racks();
        // Workers need GPUs in one rack; the launcher needs a CPU, which only b1 has.
        let gang = Gang::new("g")
            .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
            .role(Role::new("w", 6).request(GPU, 1))
            .required("rack");
        let p = place(&inv, &gang);
        assert_eq!(p.domain_path(), "a");
        assert_eq!(p.members, [(0, 2, 1), (1, 0, 4), (1, 1, 2)]);
        // Assignments follow role order; node counts follow topology order, merged.
        let nodes: Vec<&str> = p.assignments().iter().map(|a| a.node.as_str()).collect();
        assert_eq!(nodes, ["b1", "a1", "a2"]);
        assert_eq!(p.node_counts(), [("a1", 4), ("a2", 2), ("b1", 1)]);
        let used: Vec<(&str, u32)> = p
            .domains_used()
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(used, [("rack", 2), (HOSTNAME_LEVEL, 3)]);
        // A worker moved next to the launcher is outside rack a and rejected...
        let mut p2 = p.clone();
        p2.members = vec![(0, 2, 1), (1, 0, 4), (1, 1, 1), (1, 2, 1)];
        rejected(&p2, &inv, "role w: node b1 is outside the chosen domain");
        // ...and a launcher on a GPU-only node does not fit there, wherever it is.
        let mut p3 = p.clone();
        p3.members = vec![(0, 0, 1), (1, 0, 4), (1, 1, 2)];
        rejected(&p3, &inv, "node a1 over capacity in cpu");
    }

    #[test]
    fn validate_rejects_reports_that_disagree_with_the_members() {
        let inv = racks();
        let good = six_in_a_rack(&inv);
        good.validate(&inv).unwrap();
        let mut p = good.clone();
        p.assignments[0].count += 1;
        rejected(&p, &inv, "assignments disagree with the members");
        let mut p = good.clone();
        p.assignments[0].node = "elsewhere".into();
        rejected(&p, &inv, "assignments disagree with the members");
        let mut p = good.clone();
        p.assignments.pop();
        rejected(&p, &inv, "assignments disagree with the members");
        let mut p = good.clone();
        p.level = None;
        rejected(&p, &inv, "reported level is not the chosen one");
        let mut p = good.clone();
        p.domains_used.last_mut().unwrap().1 += 1;
        rejected(&p, &inv, "domains_used disagrees with the members");
        let mut p = good.clone();
        p.domains_used.pop();
        rejected(&p, &inv, "domains_used disagrees with the members");
    }

    #[test]
    fn validate_rejects_wrong_counts_and_malformed_members() {
        let inv = racks();
        let good = six_in_a_rack(&inv);
        let with = |members: Vec<Member>, placed: Vec<u32>| {
            let mut p = good.clone();
            p.members = members;
            p.placed = placed;
            p
        };
        // The per-role total disagrees with the members.
        rejected(
            &with(vec![(0, 0, 4), (0, 1, 2)], vec![5]),
            &inv,
            "placed count disagrees",
        );
        // Fewer members than the role's count, consistently reported: still a partial gang.
        rejected(
            &with(vec![(0, 0, 4)], vec![4]),
            &inv,
            "role w: 4 members placed, outside [6, 6]",
        );
        // More than the role's count (caught before the capacity it also exceeds).
        rejected(
            &with(vec![(0, 0, 5), (0, 1, 2)], vec![7]),
            &inv,
            "role w: 7 members placed, outside [6, 6]",
        );
        rejected(
            &with(vec![(0, 0, 4), (0, 1, 2), (0, 2, 0)], vec![6]),
            &inv,
            "empty assignment on b1",
        );
        rejected(
            &with(vec![(0, 1, 2), (0, 0, 4)], vec![6]),
            &inv,
            "members not sorted or repeated",
        );
        rejected(
            &with(vec![(0, 0, 2), (0, 0, 2), (0, 1, 2)], vec![6]),
            &inv,
            "members not sorted or repeated",
        );
        rejected(
            &with(vec![(0, 0, 4), (0, 7, 2)], vec![6]),
            &inv,
            "node index 7 out of range",
        );
    }

    #[test]
    fn validate_checks_counts_against_elastic_bounds() {
        let inv = racks();
        // 6 wanted, at least 4: rack a takes all 6.
        let gang = Gang::new("g")
            .role(Role::new("w", 6).min_count(4).request(GPU, 1))
            .required("rack");
        let p = place(&inv, &gang);
        assert_eq!(p.placed("w"), Some(6));
        let with = |members: Vec<Member>, placed: Vec<u32>| {
            let mut q = with_members(&p, &inv, members);
            q.placed = placed;
            q
        };
        // Four (the minimum) is a valid placement; three is not.
        with(vec![(0, 0, 4)], vec![4]).validate(&inv).unwrap();
        rejected(
            &with(vec![(0, 0, 3)], vec![3]),
            &inv,
            "3 members placed, outside [4, 6]",
        );
    }

    #[test]
    fn validate_enforces_max_per_node() {
        let inv = racks();
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1).max_per_node(2))
            .required("rack");
        let p = place(&inv, &gang);
        // Two per node in rack a (a1 could hold 4 GPUs but is capped at 2).
        assert_eq!(p.members, [(0, 0, 2), (0, 1, 2)]);
        let mut q = p.clone();
        q.members = vec![(0, 0, 3), (0, 1, 1)];
        rejected(&q, &inv, "3 members on a1 exceed max_per_node");
    }

    /// Block B: rack a (a1, a2), rack b (b1, b2), 2 GPUs each, and bx with a block label
    /// but no rack label (outside every rack).
    fn sliced() -> Inventory {
        let n = |name: &str, rack: Option<&str>| {
            let s = NodeSpec::new(name).label("block", "B").capacity(GPU, 2);
            match rack {
                Some(r) => s.label("rack", r),
                None => s,
            }
        };
        let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes([
                n("a1", Some("a")),
                n("a2", Some("a")),
                n("b1", Some("b")),
                n("b2", Some("b")),
                n("bx", None),
            ])
            .build()
            .unwrap();
        let names: Vec<&str> = inv.node_names().collect();
        assert_eq!(names, ["a1", "a2", "b1", "b2", "bx"]);
        inv
    }

    #[test]
    fn validate_rejects_broken_slices() {
        let inv = sliced();
        let gang = Gang::new("g")
            .role(Role::new("w", 4).min_count(2).request(GPU, 1))
            .required("block")
            .slice("rack", 2);
        let p = place(&inv, &gang);
        assert_eq!(p.placed("w"), Some(4));
        let with = |members: Vec<Member>, placed: Vec<u32>| {
            let mut q = with_members(&p, &inv, members);
            q.placed = placed;
            q
        };
        // Another valid arrangement: one slice per rack.
        with(vec![(0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 1)], vec![4])
            .validate(&inv)
            .unwrap();
        // Rack a holds 3 members and rack b 1: not whole slices of 2.
        rejected(
            &with(vec![(0, 0, 2), (0, 1, 1), (0, 2, 1)], vec![4]),
            &inv,
            "a rack domain holds 3 members, not a multiple of the slice size 2",
        );
        // A slice on bx, which is in block B but in no rack.
        rejected(
            &with(vec![(0, 0, 2), (0, 4, 2)], vec![4]),
            &inv,
            "slice member on bx outside every rack",
        );
        // Three members is within [2, 4] but not a whole number of slices.
        rejected(
            &with(vec![(0, 0, 2), (0, 2, 1)], vec![3]),
            &inv,
            "3 members is not a whole number of slices",
        );
        // Two (one slice, the minimum) is fine.
        with(vec![(0, 2, 2)], vec![2]).validate(&inv).unwrap();
    }
}
