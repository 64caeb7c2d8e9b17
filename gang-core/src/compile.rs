//! Compiling a [`Gang`] against an [`Inventory`]: validation, dense shapes, eligibility.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::bitset::Bitset;
use crate::error::Error;
use crate::inventory::Inventory;
use crate::names::{check_label_value, check_object_name, check_qualified_name};
use crate::node::TolerationOperator;
use crate::request::{Gang, Policy, Role, SelectorOperator};

/// A role made dense: resource ids, amounts, eligible nodes.
#[derive(Debug, Clone)]
pub(crate) struct CRole {
    pub count: u32,
    pub min: u32,
    /// `(resource id, milli-units per member)`, zero requests dropped.
    pub req: SmallVec<[(u32, u64); 4]>,
    /// Requested resources that no node offers (nothing fits while non-empty).
    pub missing: Vec<String>,
    /// `max_per_node`, or `u32::MAX`.
    pub per_node: u32,
    pub constrained: bool,
    /// Nodes whose labels and taints admit the role (schedulable or not).
    pub eligible: Bitset,
    /// Per-node caps tighter than `per_node`, `(node, cap)` sorted (replacements:
    /// `max_per_node` minus the members already there).
    pub node_caps: Vec<(u32, u32)>,
    /// Dominant share of the whole role, for ordering roles in greedy packing.
    pub weight: u128,
}

/// A gang validated and compiled against one inventory: the hot path works from this.
///
/// Compile once with [`Inventory::compile`] and place it as often as needed with a
/// reusable [`Solver`](crate::Solver); [`Inventory::place`] does both in one call.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Solver, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8))
///     .build()?;
/// let compiled = inv.compile(&Gang::new("g").role(Role::new("w", 2).request("gpu", 4)))?;
/// assert_eq!(compiled.gang().roles[0].count, 2);
/// let mut solver = Solver::new();
/// assert!(solver.place(&inv, &compiled)?.is_placed());
/// // Compiling validates: a level the inventory does not have is an error.
/// assert!(inv.compile(&Gang::new("g").role(Role::new("w", 2)).required("block")).is_err());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct CompiledGang {
    pub(crate) inner: Arc<Compiled>,
}

#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    pub gang: Gang,
    pub roles: Vec<CRole>,
    /// Depths to try, in order (deepest first); 0 is the whole cluster.
    pub levels: SmallVec<[usize; 4]>,
    pub required: Option<usize>,
    /// `(depth, size)`, outermost first.
    pub slices: SmallVec<[(usize, u32); 2]>,
    /// `gran[d]`: members given to a domain at depth `d` come in multiples of this.
    pub gran: Vec<u64>,
    /// Nodes whose deepest domain is shallower than this cannot hold sliced members.
    pub slice_min_leaf: usize,
    pub policy: Policy,
    pub layout_id: u64,
}

impl CompiledGang {
    /// The gang as given. See [`CompiledGang`].
    pub fn gang(&self) -> &Gang {
        &self.inner.gang
    }
}

impl CRole {
    /// The most members of this role node `ix` may hold (`max_per_node`, or less for a
    /// replacement on a node that already holds some).
    #[inline]
    pub fn cap_on(&self, ix: u32) -> u32 {
        if self.node_caps.is_empty() {
            return self.per_node;
        }
        match self.node_caps.binary_search_by_key(&ix, |c| c.0) {
            Ok(i) => self.per_node.min(self.node_caps[i].1),
            Err(_) => self.per_node,
        }
    }
}

impl Compiled {
    pub fn has_slices(&self) -> bool {
        !self.slices.is_empty()
    }

    /// Whether constrained roles exist (else the gang is placed cluster-wide).
    pub fn any_constrained(&self) -> bool {
        self.roles.iter().any(|r| r.constrained)
    }
}

impl Inventory {
    /// Validates `gang` against this inventory and compiles it for the solver.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
    ///     .node(NodeSpec::new("a1").label("block", "b1").label("rack", "a").capacity("gpu", 8))
    ///     .build()?;
    /// let workers = Role::new("worker", 4).request("gpu", 1);
    /// assert!(inv.compile(&Gang::new("g").role(workers.clone()).required("rack")).is_ok());
    ///
    /// let err = inv.compile(&Gang::new("g").role(workers.clone()).required("zone")).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    /// assert_eq!(err.field(), "gang.topology.required");
    /// let bad_amount = Gang::new("g").role(Role::new("worker", 4).request("gpu", "one"));
    /// let err = inv.compile(&bad_amount).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidQuantity);
    /// assert_eq!(err.field(), "gang.roles[worker].requests.gpu");
    /// let upside_down = Gang::new("g").role(workers).required("rack").preferred("block");
    /// let err = inv.compile(&upside_down).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Contradictory);
    /// assert_eq!(err.field(), "gang.topology.preferred");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the field and value for an unknown level, a bad
    /// count, name, label, resource or slice; [`Error::InvalidQuantity`] for a bad
    /// request amount; [`Error::Contradictory`] for constraints that can never hold
    /// together (a slice level above the required level, `max_per_node` too small for
    /// any domain of the level).
    pub fn compile(&self, gang: &Gang) -> Result<CompiledGang, Error> {
        compile(self, gang, true).map(|c| CompiledGang { inner: Arc::new(c) })
    }

    /// Compiles a gang that was valid when first compiled, against a changed layout:
    /// the structural `max_per_node` check is skipped (the nodes that made it hold may
    /// be gone; that is "does not fit now", not an invalid request).
    pub(crate) fn recompile(&self, gang: &Gang) -> Result<CompiledGang, Error> {
        compile(self, gang, false).map(|c| CompiledGang { inner: Arc::new(c) })
    }
}

fn compile(inv: &Inventory, gang: &Gang, structural: bool) -> Result<Compiled, Error> {
    check_object_name(&gang.name).map_err(|r| Error::request("gang.name", &gang.name, r))?;
    if gang.roles.is_empty() {
        return Err(Error::request(
            "gang.roles",
            "[]",
            "a gang needs at least one role",
        ));
    }
    let topo = &inv.topology;
    let l = inv.label_depth();
    let level = |field: &str, key: &str| -> Result<usize, Error> {
        topo.depth_of(key).ok_or_else(|| {
            Error::request(
                field,
                key,
                format!("not a topology level (levels: {})", level_list(inv)),
            )
        })
    };
    let t = &gang.topology;
    let required = t
        .required
        .as_deref()
        .map(|k| level("gang.topology.required", k))
        .transpose()?;
    let preferred = t
        .preferred
        .as_deref()
        .map(|k| level("gang.topology.preferred", k))
        .transpose()?;
    if let (Some(r), Some(p)) = (required, preferred) {
        if p < r {
            return Err(Error::contradictory(
                "gang.topology.preferred",
                t.preferred.as_deref().unwrap_or_default(),
                format!(
                    "preferred level is above the required level {:?}; it can never be met",
                    t.required.as_deref().unwrap_or_default()
                ),
            ));
        }
    }

    let mut roles = Vec::with_capacity(gang.roles.len());
    for (i, role) in gang.roles.iter().enumerate() {
        if gang.roles[..i].iter().any(|r| r.name == role.name) {
            return Err(Error::request(
                format!("gang.roles[{i}].name"),
                &role.name,
                "duplicate role name",
            ));
        }
        roles.push(compile_role(inv, role, i)?);
    }
    if roles.iter().map(|r| u64::from(r.min)).sum::<u64>() == 0 {
        return Err(Error::request(
            "gang.roles",
            "min_count",
            "every role has min_count 0: the gang would be empty",
        ));
    }

    // Slices: outer to inner, strictly deeper, sizes dividing each other and the counts.
    let mut slices: SmallVec<[(usize, u32); 2]> = SmallVec::new();
    for (i, s) in t.slices.iter().enumerate() {
        let f = format!("gang.topology.slices[{i}]");
        let d = level(&format!("{f}.level"), &s.level)?;
        if s.size == 0 {
            return Err(Error::request(
                format!("{f}.size"),
                0,
                "slice size must be at least 1",
            ));
        }
        if let Some(&(pd, ps)) = slices.last() {
            if d <= pd {
                return Err(Error::request(
                    format!("{f}.level"),
                    &s.level,
                    "slice levels must be listed outermost first, each strictly inside the previous",
                ));
            }
            if ps % s.size != 0 {
                return Err(Error::request(
                    format!("{f}.size"),
                    s.size,
                    format!("slice size must divide the enclosing slice size {ps}"),
                ));
            }
        }
        if let Some(r) = required {
            if d < r {
                return Err(Error::contradictory(
                    format!("{f}.level"),
                    &s.level,
                    format!(
                        "slice level is above the required level {:?}",
                        t.required.as_deref().unwrap_or_default()
                    ),
                ));
            }
        }
        slices.push((d, s.size));
    }
    if let Some(&(_, outer)) = slices.first() {
        if !roles.iter().any(|r| r.constrained) {
            return Err(Error::request(
                "gang.topology.slices",
                outer,
                "slices need at least one constrained role",
            ));
        }
        for (r, spec) in roles.iter().zip(&gang.roles) {
            if r.constrained && r.count % outer != 0 {
                return Err(Error::request(
                    format!("gang.roles[{}].count", spec.name),
                    r.count,
                    format!("count must be a multiple of the slice size {outer}"),
                ));
            }
            if r.constrained && r.min < r.count && r.min % outer != 0 {
                return Err(Error::request(
                    format!("gang.roles[{}].min_count", spec.name),
                    spec.min_count.unwrap_or(r.count),
                    format!("min_count must be a multiple of the slice size {outer}"),
                ));
            }
        }
    }
    let mut gran = vec![1u64; l + 2];
    for (d, g) in gran.iter_mut().enumerate() {
        if let Some(&(_, s)) = slices.iter().find(|&&(sd, _)| sd >= d) {
            *g = u64::from(s);
        }
    }
    let slice_min_leaf = slices
        .iter()
        .map(|&(d, _)| d)
        .filter(|&d| d <= l)
        .max()
        .unwrap_or(0);

    // max_per_node that no domain of the hard level could ever satisfy.
    let hard: SmallVec<[(usize, u32, String); 3]> = required
        .map(|r| (r, 0u32, "gang.topology.required".to_owned()))
        .into_iter()
        .chain(
            slices
                .iter()
                .enumerate()
                .map(|(i, &(d, s))| (d, s, format!("gang.topology.slices[{i}].size"))),
        )
        .collect();
    for (depth, slice_size, field) in hard.into_iter().filter(|_| structural) {
        let widest = widest_domain(inv, depth);
        for (i, r) in roles.iter().enumerate() {
            if !r.constrained || gang.roles[i].max_per_node.is_none() {
                continue;
            }
            let need = if slice_size > 0 { slice_size } else { r.min };
            if widest.saturating_mul(u64::from(r.per_node)) < u64::from(need) {
                let key = topo.key_of(depth).unwrap_or_default();
                return Err(Error::contradictory(
                    format!("gang.roles[{}].max_per_node", gang.roles[i].name),
                    r.per_node,
                    format!(
                        "{need} members at most {} per node need {} nodes, but the widest {} has {widest} (from {field})",
                        r.per_node,
                        u64::from(need).div_ceil(u64::from(r.per_node.max(1))),
                        crate::names::short_level(key),
                    ),
                ));
            }
        }
    }

    let levels = if !roles.iter().any(|r| r.constrained) {
        SmallVec::from_slice(&[0])
    } else {
        match (required, preferred) {
            (Some(r), Some(p)) => (r..=p).rev().collect(),
            (Some(r), None) => SmallVec::from_slice(&[r]),
            (None, Some(p)) => (0..=p).rev().collect(),
            (None, None) => SmallVec::from_slice(&[0]),
        }
    };
    Ok(Compiled {
        gang: gang.clone(),
        roles,
        levels,
        required,
        slices,
        gran,
        slice_min_leaf,
        policy: gang.policy,
        layout_id: inv.layout_id,
    })
}

fn level_list(inv: &Inventory) -> String {
    let mut v: Vec<&str> = inv
        .topology
        .label_levels()
        .iter()
        .map(String::as_str)
        .collect();
    v.push(crate::names::HOSTNAME_LEVEL);
    v.join(", ")
}

/// The most nodes any domain at `depth` has (1 at the node level).
fn widest_domain(inv: &Inventory, depth: usize) -> u64 {
    if depth > inv.label_depth() {
        return 1;
    }
    inv.domains[depth]
        .iter()
        .map(|d| u64::from(d.end - d.start))
        .max()
        .unwrap_or(0)
}

fn compile_role(inv: &Inventory, role: &Role, i: usize) -> Result<CRole, Error> {
    let f = format!("gang.roles[{i}]");
    check_object_name(&role.name)
        .map_err(|r| Error::request(format!("{f}.name"), &role.name, r))?;
    let f = format!("gang.roles[{}]", role.name);
    if role.count == 0 {
        return Err(Error::request(
            format!("{f}.count"),
            0,
            "count must be at least 1",
        ));
    }
    let min = role.min_count.unwrap_or(role.count);
    if min > role.count {
        return Err(Error::request(
            format!("{f}.min_count"),
            min,
            format!("min_count exceeds count {}", role.count),
        ));
    }
    if role.max_per_node == Some(0) {
        return Err(Error::request(
            format!("{f}.max_per_node"),
            0,
            "max_per_node must be at least 1",
        ));
    }
    let mut req = SmallVec::new();
    let mut missing = Vec::new();
    for (name, amount) in &role.requests {
        check_qualified_name(name).map_err(|r| Error::request(format!("{f}.requests"), name, r))?;
        let q = amount.resolve(&format!("{f}.requests.{name}"))?;
        if q.millis() == 0 {
            continue;
        }
        match inv.resources.get_index_of(name) {
            Some(r) => req.push((r as u32, q.millis())),
            None => missing.push(name.clone()),
        }
    }
    for (k, v) in &role.node_selector {
        check_qualified_name(k).map_err(|r| Error::request(format!("{f}.node_selector"), k, r))?;
        check_label_value(v).map_err(|r| Error::request(format!("{f}.node_selector.{k}"), v, r))?;
    }
    for (j, e) in role.match_expressions.iter().enumerate() {
        let ef = format!("{f}.match_expressions[{j}]");
        check_qualified_name(&e.key).map_err(|r| Error::request(format!("{ef}.key"), &e.key, r))?;
        let needs_values = matches!(e.operator, SelectorOperator::In | SelectorOperator::NotIn);
        if needs_values && e.values.is_empty() {
            return Err(Error::request(
                format!("{ef}.values"),
                "[]",
                "In and NotIn need at least one value",
            ));
        }
        if !needs_values && !e.values.is_empty() {
            return Err(Error::request(
                format!("{ef}.values"),
                e.values.join(","),
                "Exists and DoesNotExist take no values",
            ));
        }
        for v in &e.values {
            check_label_value(v).map_err(|r| Error::request(format!("{ef}.values"), v, r))?;
        }
    }
    for (j, t) in role.tolerations.iter().enumerate() {
        let tf = format!("{f}.tolerations[{j}]");
        if t.key.is_empty() {
            if t.operator != TolerationOperator::Exists {
                return Err(Error::request(
                    format!("{tf}.key"),
                    "",
                    "an empty key needs operator Exists",
                ));
            }
        } else {
            check_qualified_name(&t.key)
                .map_err(|r| Error::request(format!("{tf}.key"), &t.key, r))?;
        }
        if t.operator == TolerationOperator::Exists && !t.value.is_empty() {
            return Err(Error::request(
                format!("{tf}.value"),
                &t.value,
                "operator Exists takes no value",
            ));
        }
        check_label_value(&t.value)
            .map_err(|r| Error::request(format!("{tf}.value"), &t.value, r))?;
    }

    let eligible = eligibility(inv, role);
    // Not capped by the count: best-fit compares how much room a domain really has.
    let per_node = role.max_per_node.unwrap_or(u32::MAX);
    let weight = req
        .iter()
        .map(|&(r, q)| {
            let widest = inv.max_capacity[r as usize];
            if widest == 0 {
                u128::from(u64::MAX)
            } else {
                u128::from(q) * 1_000_000 / u128::from(widest)
            }
        })
        .max()
        .unwrap_or(0)
        * u128::from(role.count);
    Ok(CRole {
        count: role.count,
        min,
        req,
        missing,
        per_node,
        constrained: role.constrained,
        eligible,
        node_caps: Vec::new(),
        weight,
    })
}

/// Nodes whose labels and taints admit `role`. Schedulability is checked at query
/// time, so cordoning a node does not make compiled gangs stale.
pub(crate) fn eligibility(inv: &Inventory, role: &Role) -> Bitset {
    let mut e = selector_set(inv, role);
    e.and_not_with(&untolerated_set(inv, role));
    e
}

/// Nodes whose labels satisfy the role's selector and match expressions.
pub(crate) fn selector_set(inv: &Inventory, role: &Role) -> Bitset {
    let n = inv.len();
    let mut set = Bitset::full(n);
    let pair = |k: &str, v: &str| inv.label_set(k, v);
    let key = |k: &str| inv.key_set(k);
    for (k, v) in &role.node_selector {
        match pair(k, v) {
            Some(s) => s.and_into(&mut set),
            None => return Bitset::new(n),
        }
    }
    for e in &role.match_expressions {
        match e.operator {
            SelectorOperator::In => {
                let mut any = Bitset::new(n);
                for v in &e.values {
                    if let Some(s) = pair(&e.key, v) {
                        s.or_into(&mut any);
                    }
                }
                set.and_with(&any);
            }
            SelectorOperator::NotIn => {
                for v in &e.values {
                    if let Some(s) = pair(&e.key, v) {
                        s.and_not_into(&mut set);
                    }
                }
            }
            SelectorOperator::Exists => match key(&e.key) {
                Some(s) => s.and_into(&mut set),
                None => return Bitset::new(n),
            },
            SelectorOperator::DoesNotExist => {
                if let Some(s) = key(&e.key) {
                    s.and_not_into(&mut set);
                }
            }
        }
    }
    set
}

/// Nodes carrying a `NoSchedule`/`NoExecute` taint that no toleration of the role matches.
pub(crate) fn untolerated_set(inv: &Inventory, role: &Role) -> Bitset {
    let mut set = Bitset::new(inv.len());
    for (taint, nodes) in &inv.taints {
        if taint.effect.excludes() && !role.tolerations.iter().any(|t| t.tolerates(taint)) {
            nodes.or_into(&mut set);
        }
    }
    set
}
