//! Compiling a [`Gang`] against an [`Inventory`]: validation, dense shapes, eligibility.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::inventory::bitset::Bitset;
use crate::inventory::ix::NodeIx;
use crate::inventory::{Inventory, POD, PODS};
use crate::model::names::{check_label_value, check_object_name, check_qualified_name};
use crate::model::{Error, TolerationOperator};
use crate::model::{Gang, Policy, Requirement, Role, SelectorOperator};

/// A role's position in its gang (the order the roles were given in), as members and
/// reservations record it. A gang has at most `u16::MAX + 1` roles (checked when it is
/// compiled), so a `u16` holds every position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct RoleIx(pub u16);

impl RoleIx {
    /// The position as an index into the gang's roles.
    #[inline(always)]
    pub const fn ix(self) -> usize {
        self.0 as usize
    }

    /// The role at index `i` of a compiled gang.
    #[inline(always)]
    pub fn at(i: usize) -> RoleIx {
        debug_assert!(u16::try_from(i).is_ok(), "role index {i} out of range");
        RoleIx(i as u16)
    }
}

/// The most roles a gang may have: every role index fits a [`RoleIx`].
const MAX_ROLES: usize = u16::MAX as usize + 1;

/// A role made dense: resource ids, amounts, eligible nodes.
#[derive(Debug, Clone)]
pub(crate) struct CRole {
    pub count: u32,
    pub min: u32,
    /// `(resource id, milli-units per member)`, zero requests dropped.
    pub req: DenseRequest,
    /// Requested resources that no node offers (nothing fits while non-empty).
    pub missing: Vec<String>,
    /// `max_per_node`, or `u32::MAX`.
    pub per_node: u32,
    pub constrained: bool,
    /// Nodes whose labels and taints admit the role (schedulable or not).
    pub eligible: Bitset,
    /// Per-node caps tighter than `per_node`, `(node, cap)` sorted (replacements:
    /// `max_per_node` minus the members already there).
    pub node_caps: Vec<(NodeIx, u32)>,
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
/// assert_eq!(compiled.gang().get_roles()[0].get_count(), 2);
/// let mut solver = Solver::new();
/// assert!(inv.place_with(&mut solver, &compiled)?.is_placed());
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

    /// A copy whose constrained roles (or all roles, with [`Narrow::AllRoles`]) may only
    /// use nodes in `mask` (spread keeps replicas apart; backfill keeps later gangs off
    /// the head's nodes). The gang itself is unchanged, so a reservation made from the
    /// copy holds the request as given.
    pub(crate) fn restricted(&self, mask: &Bitset, roles: Narrow) -> CompiledGang {
        let mut inner: Compiled = (*self.inner).clone();
        for r in &mut inner.roles {
            if r.constrained || roles == Narrow::AllRoles {
                r.eligible.and_with(mask);
            }
        }
        CompiledGang {
            inner: Arc::new(inner),
        }
    }
}

/// Which roles [`CompiledGang::restricted`] narrows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrow {
    /// Only roles under the gang's topology constraint.
    ConstrainedRoles,
    /// Every role.
    AllRoles,
}

impl CRole {
    /// The most members of this role node `ix` may hold (`max_per_node`, or less for a
    /// replacement on a node that already holds some).
    #[inline]
    pub fn cap_on(&self, n: NodeIx) -> u32 {
        if self.node_caps.is_empty() {
            return self.per_node;
        }
        match self.node_caps.binary_search_by_key(&n, |c| c.0) {
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

    /// Role `r`.
    #[inline]
    pub fn role(&self, r: RoleIx) -> &CRole {
        &self.roles[r.ix()]
    }

    /// Every role with its index, in the order given.
    pub fn indexed_roles(&self) -> impl ExactSizeIterator<Item = (RoleIx, &CRole)> + '_ {
        self.roles
            .iter()
            .enumerate()
            .map(|(i, r)| (RoleIx::at(i), r))
    }
}

/// Whether [`compile`] checks that `max_per_node` leaves room in the widest domain of
/// every hard level (a structural contradiction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Structure {
    /// A new request: contradictions are errors.
    Check,
    /// A request valid when first compiled, against a changed layout: nodes that made it
    /// hold may be gone, which is "does not fit now", not an invalid request.
    Skip,
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
        compile(self, gang, Structure::Check).map(|c| CompiledGang { inner: Arc::new(c) })
    }

    /// Compiles a gang that was valid when first compiled, against a changed layout:
    /// the structural `max_per_node` check is skipped (the nodes that made it hold may
    /// be gone; that is "does not fit now", not an invalid request).
    pub(crate) fn recompile(&self, gang: &Gang) -> Result<CompiledGang, Error> {
        compile(self, gang, Structure::Skip).map(|c| CompiledGang { inner: Arc::new(c) })
    }
}

/// Validates and compiles `gang`, in the order its checks are documented to apply:
/// the gang's name and roles, its levels ([`levels_of`]), each role
/// ([`compile_role`]), its slices ([`slices_of`]) and their granularity
/// ([`granularity`]), `max_per_node` against the widest hard domain
/// ([`check_max_per_node`], skipped on recompilation), and the depths to try
/// ([`depths_to_try`]).
fn compile(inv: &Inventory, gang: &Gang, structure: Structure) -> Result<Compiled, Error> {
    check_object_name(&gang.name).map_err(|r| Error::request("gang.name", &gang.name, r))?;
    if gang.roles.is_empty() {
        return Err(Error::request(
            "gang.roles",
            "[]",
            "a gang needs at least one role",
        ));
    }
    if gang.roles.len() > MAX_ROLES {
        return Err(Error::request(
            "gang.roles",
            gang.roles.len(),
            format!("a gang has at most {MAX_ROLES} roles"),
        ));
    }
    let (required, preferred) = levels_of(inv, gang)?;
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
    let slices = slices_of(inv, gang, required, &roles)?;
    let (gran, slice_min_leaf) = granularity(&slices, inv.label_depth());
    if structure == Structure::Check {
        check_max_per_node(inv, gang, &roles, required, &slices)?;
    }
    Ok(Compiled {
        gang: gang.clone(),
        levels: depths_to_try(&roles, required, preferred),
        roles,
        required,
        slices,
        gran,
        slice_min_leaf,
        policy: gang.policy,
        layout_id: inv.layout_id,
    })
}

/// The depth of a level key, or the error naming `field`.
fn level_at(inv: &Inventory, field: &str, key: &str) -> Result<usize, Error> {
    inv.topology.depth_of(key).ok_or_else(|| {
        Error::request(
            field,
            key,
            format!("not a topology level (levels: {})", level_list(inv)),
        )
    })
}

/// The required and preferred depths; a preferred level above the required one can
/// never be met.
fn levels_of(inv: &Inventory, gang: &Gang) -> Result<(Option<usize>, Option<usize>), Error> {
    let t = &gang.topology;
    let required = t
        .required
        .as_deref()
        .map(|k| level_at(inv, "gang.topology.required", k))
        .transpose()?;
    let preferred = t
        .preferred
        .as_deref()
        .map(|k| level_at(inv, "gang.topology.preferred", k))
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
    Ok((required, preferred))
}

/// The slices as `(depth, size)`: outer to inner, strictly deeper, sizes dividing each
/// other and the constrained roles' counts, none above the required level.
fn slices_of(
    inv: &Inventory,
    gang: &Gang,
    required: Option<usize>,
    roles: &[CRole],
) -> Result<SmallVec<[(usize, u32); 2]>, Error> {
    let t = &gang.topology;
    let mut slices: SmallVec<[(usize, u32); 2]> = SmallVec::new();
    for (i, s) in t.slices.iter().enumerate() {
        let f = format!("gang.topology.slices[{i}]");
        let d = level_at(inv, &format!("{f}.level"), &s.level)?;
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
    Ok(slices)
}

/// `gran[d]` (members given to a domain at depth `d` come in multiples of it, for
/// `d` in `0..=L+1`) and the shallowest leaf depth a sliced member's node may have.
fn granularity(slices: &[(usize, u32)], l: usize) -> (Vec<u64>, usize) {
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
    (gran, slice_min_leaf)
}

/// A `max_per_node` that no domain of a hard level (the required one, or a slice level)
/// could ever satisfy is a contradiction.
fn check_max_per_node(
    inv: &Inventory,
    gang: &Gang,
    roles: &[CRole],
    required: Option<usize>,
    slices: &[(usize, u32)],
) -> Result<(), Error> {
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
    for (depth, slice_size, field) in hard {
        let widest = widest_domain(inv, depth);
        for (r, spec) in roles.iter().zip(&gang.roles) {
            if !r.constrained || spec.max_per_node.is_none() {
                continue;
            }
            // An elastic role that may place none needs nothing; one that must place
            // some needs a whole slice in one domain, or all its minimum in one domain.
            let need = match (r.min, slice_size) {
                (0, _) => 0,
                (_, 0) => r.min,
                (_, size) => size,
            };
            if widest.saturating_mul(u64::from(r.per_node)) < u64::from(need) {
                let key = inv.topology.key_of(depth).unwrap_or_default();
                return Err(Error::contradictory(
                    format!("gang.roles[{}].max_per_node", spec.name),
                    r.per_node,
                    format!(
                        "{need} members at most {} per node need {} nodes, but the widest {} has {widest} (from {field})",
                        r.per_node,
                        u64::from(need).div_ceil(u64::from(r.per_node.max(1))),
                        crate::model::names::short_level(key),
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The depths to try, deepest first: the required one; from the preferred one up to the
/// required one (or the cluster); the cluster alone when nothing is constrained.
fn depths_to_try(
    roles: &[CRole],
    required: Option<usize>,
    preferred: Option<usize>,
) -> SmallVec<[usize; 4]> {
    if !roles.iter().any(|r| r.constrained) {
        return SmallVec::from_slice(&[0]);
    }
    match (required, preferred) {
        (Some(r), Some(p)) => (r..=p).rev().collect(),
        (Some(r), None) => SmallVec::from_slice(&[r]),
        (None, Some(p)) => (0..=p).rev().collect(),
        (None, None) => SmallVec::from_slice(&[0]),
    }
}

fn level_list(inv: &Inventory) -> String {
    let mut v: Vec<&str> = inv
        .topology
        .label_levels()
        .iter()
        .map(String::as_str)
        .collect();
    v.push(crate::model::names::HOSTNAME_LEVEL);
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

/// Validates role `i` and makes it dense: its counts, its requests as resource ids
/// ([`dense_requests`]), its selector ([`check_selector`]) and tolerations
/// ([`check_tolerations`]), then its eligible nodes and weight.
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
    let (req, missing) = dense_requests(inv, role, &f)?;
    check_selector(role, &f)?;
    check_tolerations(role, &f)?;
    Ok(CRole {
        count: role.count,
        min,
        weight: dominant_weight(inv, &req, role.count),
        req,
        missing,
        // Not capped by the count: best-fit compares how much room a domain really has.
        per_node: role.max_per_node.unwrap_or(u32::MAX),
        constrained: role.constrained,
        eligible: eligibility(inv, role),
        node_caps: Vec::new(),
    })
}

/// A dense request: `(resource id, milli-units per member)`, zero requests dropped.
type DenseRequest = SmallVec<[(u32, u64); 4]>;

/// The role's requests as resource ids and amounts, and the requested resources no node
/// offers. `f` is the role's field prefix.
fn dense_requests(
    inv: &Inventory,
    role: &Role,
    f: &str,
) -> Result<(DenseRequest, Vec<String>), Error> {
    let mut req = SmallVec::new();
    let mut missing = Vec::new();
    for (name, amount) in &role.requests {
        check_qualified_name(name).map_err(|r| Error::request(format!("{f}.requests"), name, r))?;
        let q = amount.resolve(&format!("{f}.requests.{name}"))?;
        if name == PODS {
            // Every member is one pod, charged below; saying so is allowed, saying
            // anything else is a mistake.
            if q.millis() != POD {
                return Err(Error::request(
                    format!("{f}.requests.{name}"),
                    q,
                    "a member is one pod: request pods 1, or leave it out (it is charged anyway)",
                ));
            }
            continue;
        }
        if q.millis() == 0 {
            continue;
        }
        match inv.resources.get_index_of(name) {
            // Resource ids are below the number of resources, far below u32::MAX.
            Some(r) => req.push((r as u32, q.millis())),
            None => missing.push(name.clone()),
        }
    }
    // Kubernetes charges one pod per member on nodes that declare a pod limit; nodes
    // that do not have no limit (see `inventory::PODS`).
    if let Some(p) = inv.resources.get_index_of(PODS) {
        req.push((p as u32, POD));
    }
    Ok((req, missing))
}

/// The node selector and match expressions are well formed.
fn check_selector(role: &Role, f: &str) -> Result<(), Error> {
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
    Ok(())
}

/// The tolerations are well formed.
fn check_tolerations(role: &Role, f: &str) -> Result<(), Error> {
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
    Ok(())
}

/// The role's dominant share (its largest request relative to the largest node's
/// capacity of that resource, in millionths) times its count, for ordering roles in
/// greedy packing; a resource no node has weighs the most.
fn dominant_weight(inv: &Inventory, req: &[(u32, u64)], count: u32) -> u128 {
    req.iter()
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
        * u128::from(count)
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
    let mut set = Bitset::full(inv.len());
    for term in selector_terms(role) {
        restrict(inv, term, &mut set);
    }
    set
}

/// One term of a role's selector: a `node_selector` pair or a match expression.
#[derive(Clone, Copy)]
pub(crate) enum Term<'a> {
    Pair(&'a str, &'a str),
    Expr(&'a Requirement),
}

impl<'a> Term<'a> {
    /// The label key the term is about.
    pub(crate) fn key(self) -> &'a str {
        match self {
            Term::Pair(k, _) => k,
            Term::Expr(e) => &e.key,
        }
    }
}

/// The terms of a role's selector, `node_selector` first, in the order given.
pub(crate) fn selector_terms(role: &Role) -> impl Iterator<Item = Term<'_>> {
    let pairs = role.node_selector.iter().map(|(k, v)| Term::Pair(k, v));
    pairs.chain(role.match_expressions.iter().map(Term::Expr))
}

/// Keeps in `set` only the nodes that satisfy `term`.
pub(crate) fn restrict(inv: &Inventory, term: Term<'_>, set: &mut Bitset) {
    let n = inv.len();
    let pair = |k: &str, v: &str| inv.label_set(k, v);
    let key = |k: &str| inv.key_set(k);
    match term {
        Term::Pair(k, v) => match pair(k, v) {
            Some(s) => s.and_into(set),
            None => *set = Bitset::new(n),
        },
        Term::Expr(e) => match e.operator {
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
                        s.and_not_into(set);
                    }
                }
            }
            SelectorOperator::Exists => match key(&e.key) {
                Some(s) => s.and_into(set),
                None => *set = Bitset::new(n),
            },
            SelectorOperator::DoesNotExist => {
                if let Some(s) = key(&e.key) {
                    s.and_not_into(set);
                }
            }
        },
    }
}

pub(crate) fn untolerated_set(inv: &Inventory, role: &Role) -> Bitset {
    let mut set = Bitset::new(inv.len());
    for (taint, nodes) in &inv.taints {
        if taint.effect.excludes() && !role.tolerations.iter().any(|t| t.tolerates(taint)) {
            nodes.or_into(&mut set);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Requirement;
    use crate::HOSTNAME_LEVEL;
    use crate::{ErrorKind, NodeSpec, Quantity, Taint, TaintEffect, Toleration, Topology};

    const GPU: &str = "gpu";

    /// Block b1: rack a (a1, a2), rack b (b1, b2, b3); block b2: rack c (c1).
    fn cluster() -> Inventory {
        let n = |name: &str, block: &str, rack: &str| {
            NodeSpec::new(name)
                .label("block", block)
                .label("rack", rack)
                .capacity(GPU, 8)
        };
        Inventory::builder(Topology::new(["block", "rack", HOSTNAME_LEVEL]).unwrap())
            .nodes([
                n("a1", "b1", "a"),
                n("a2", "b1", "a"),
                n("b1", "b1", "b"),
                n("b2", "b1", "b"),
                n("b3", "b1", "b"),
                n("c1", "b2", "c"),
            ])
            .build()
            .unwrap()
    }

    fn w(count: u32) -> Role {
        Role::new("w", count).request(GPU, 1)
    }

    /// `(kind, field, value)` of the error compiling `gang`.
    fn err(inv: &Inventory, gang: &Gang) -> (ErrorKind, String, String) {
        let e = inv.compile(gang).unwrap_err();
        let value = match &e {
            Error::InvalidRequest { value, .. }
            | Error::Contradictory { value, .. }
            | Error::InvalidQuantity { value, .. } => value.clone(),
            other => panic!("unexpected error {other}"),
        };
        (e.kind(), e.field().to_owned(), value)
    }

    fn request(field: &str, value: &str) -> (ErrorKind, String, String) {
        (
            ErrorKind::InvalidRequest,
            field.to_owned(),
            value.to_owned(),
        )
    }

    fn contradictory(field: &str, value: &str) -> (ErrorKind, String, String) {
        (ErrorKind::Contradictory, field.to_owned(), value.to_owned())
    }

    #[test]
    fn slice_sizes_must_divide_counts_and_min_counts() {
        let inv = cluster();
        let sliced = |role: Role| Gang::new("g").role(role).required("block").slice("rack", 4);
        assert_eq!(
            err(&inv, &sliced(w(6))),
            request("gang.roles[w].count", "6")
        );
        assert_eq!(
            err(&inv, &sliced(w(8).min_count(6))),
            request("gang.roles[w].min_count", "6")
        );
        assert!(inv.compile(&sliced(w(8).min_count(4))).is_ok());
        assert!(inv.compile(&sliced(w(8))).is_ok());
        // The outer size decides: 4 divides 8 and 2 divides 4.
        let two_levels = |n| Gang::new("g").role(w(n)).slice("block", 4).slice("rack", 2);
        assert_eq!(
            err(&inv, &two_levels(2)),
            request("gang.roles[w].count", "2")
        );
        assert!(inv.compile(&two_levels(8)).is_ok());
        // Unconstrained roles are not sliced.
        let with_launcher = sliced(w(4)).role(Role::new("l", 3).request(GPU, 1).unconstrained());
        assert!(inv.compile(&with_launcher).is_ok());
        // And slices need some constrained role.
        let only_free = Gang::new("g").role(w(4).unconstrained()).slice("rack", 4);
        assert_eq!(err(&inv, &only_free), request("gang.topology.slices", "4"));
    }

    #[test]
    fn slice_levels_and_sizes_are_checked() {
        let inv = cluster();
        let g = || Gang::new("g").role(w(8));
        assert_eq!(
            err(&inv, &g().slice("rack", 0)),
            request("gang.topology.slices[0].size", "0")
        );
        assert_eq!(
            err(&inv, &g().slice("zone", 2)),
            request("gang.topology.slices[0].level", "zone")
        );
        // Outermost first, each strictly inside the previous.
        assert_eq!(
            err(&inv, &g().slice("rack", 2).slice("block", 4)),
            request("gang.topology.slices[1].level", "block")
        );
        assert_eq!(
            err(&inv, &g().slice("rack", 2).slice("rack", 2)),
            request("gang.topology.slices[1].level", "rack")
        );
        // Each size divides the enclosing one.
        assert_eq!(
            err(&inv, &g().slice("block", 4).slice("rack", 3)),
            request("gang.topology.slices[1].size", "3")
        );
        // A slice above the required level can never hold.
        assert_eq!(
            err(&inv, &g().required("rack").slice("block", 4)),
            contradictory("gang.topology.slices[0].level", "block")
        );
        assert!(inv.compile(&g().required("rack").slice("rack", 4)).is_ok());
        assert!(inv
            .compile(&g().required("rack").slice(HOSTNAME_LEVEL, 2))
            .is_ok());
    }

    #[test]
    fn max_per_node_below_the_widest_domain_is_contradictory() {
        let inv = cluster();
        // The widest rack (b) has 3 nodes: 3 x 2 = 6 members at most.
        let racked = |role: Role| Gang::new("g").role(role).required("rack");
        let e = inv.compile(&racked(w(7).max_per_node(2))).unwrap_err();
        assert_eq!(
            (e.kind(), e.field()),
            (ErrorKind::Contradictory, "gang.roles[w].max_per_node")
        );
        assert!(
            e.to_string()
                .contains("need 4 nodes, but the widest rack has 3"),
            "{e}"
        );
        assert!(inv.compile(&racked(w(6).max_per_node(2))).is_ok());
        // Elastic: only min_count must fit.
        assert!(inv
            .compile(&racked(w(7).min_count(6).max_per_node(2)))
            .is_ok());
        // The node level is one node wide.
        let on_node = |n| {
            Gang::new("g")
                .role(w(n).max_per_node(2))
                .required(HOSTNAME_LEVEL)
        };
        assert_eq!(
            err(&inv, &on_node(3)),
            contradictory("gang.roles[w].max_per_node", "2")
        );
        assert!(inv.compile(&on_node(2)).is_ok());
        // A slice level is as hard as a required one: 4 per rack, at most 1 per node.
        let sliced = Gang::new("g").role(w(4).max_per_node(1)).slice("rack", 4);
        let e = inv.compile(&sliced).unwrap_err();
        assert_eq!(e.field(), "gang.roles[w].max_per_node");
        assert!(
            e.to_string().contains("gang.topology.slices[0].size"),
            "{e}"
        );
        // An elastic role that may place none contradicts nothing: the gang places the
        // other role alone.
        let optional = Gang::new("g")
            .role(w(4).min_count(0).max_per_node(1))
            .role(Role::new("v", 4).request(GPU, 1))
            .slice("rack", 4);
        let out = inv.place(&optional).unwrap();
        let p = out.placement().expect("v fits in rack b in one slice of 4");
        assert_eq!(p.placed("w"), Some(0));
        assert_eq!(p.placed("v"), Some(4));
        // Not without a hard level, not for unconstrained roles, not on recompilation.
        assert!(inv
            .compile(&Gang::new("g").role(w(100).max_per_node(1)))
            .is_ok());
        let free = racked(w(1)).role(
            Role::new("l", 100)
                .request(GPU, 1)
                .max_per_node(1)
                .unconstrained(),
        );
        assert!(inv.compile(&free).is_ok());
        assert!(inv.recompile(&racked(w(7).max_per_node(2))).is_ok());
        // No rack at all: nothing can hold even one member.
        let flat = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(NodeSpec::new("n").capacity(GPU, 8))
            .build()
            .unwrap();
        let e = flat.compile(&racked(w(1).max_per_node(8))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Contradictory);
    }

    #[test]
    fn levels_granularity_and_slice_leaf() {
        let inv = cluster();
        let levels = |g: Gang| inv.compile(&g).unwrap().inner.levels.to_vec();
        let g = || Gang::new("g").role(w(4));
        assert_eq!(levels(g()), [0]);
        assert_eq!(levels(g().required("rack")), [2]);
        assert_eq!(levels(g().required("block").preferred("rack")), [2, 1]);
        assert_eq!(levels(g().preferred("rack")), [2, 1, 0]);
        assert_eq!(levels(g().preferred(HOSTNAME_LEVEL)), [3, 2, 1, 0]);
        assert_eq!(levels(g().required(HOSTNAME_LEVEL)), [3]);
        // Nothing constrained: cluster-wide, whatever the topology says.
        assert_eq!(
            levels(Gang::new("g").role(w(4).unconstrained()).required("rack")),
            [0]
        );

        let c = inv
            .compile(&g().required("block").slice("block", 4).slice("rack", 2))
            .unwrap();
        let c = &c.inner;
        assert_eq!(c.required, Some(1));
        assert_eq!(c.slices.to_vec(), [(1, 4), (2, 2)]);
        // Cluster and block in 4s, rack in 2s, node in 1s.
        assert_eq!(c.gran, [4, 4, 2, 1]);
        assert_eq!(c.slice_min_leaf, 2);
        assert!(c.has_slices() && c.any_constrained());
        let c = inv.compile(&g().slice(HOSTNAME_LEVEL, 2)).unwrap();
        assert_eq!(c.inner.gran, [2, 2, 2, 2]);
        assert_eq!(c.inner.slice_min_leaf, 0);
        assert_eq!(c.inner.required, None);
        assert_eq!(c.inner.layout_id, inv.layout_id);
    }

    #[test]
    fn role_indices_fit_their_type() {
        let inv = cluster();
        let many =
            |n: usize| (0..n).fold(Gang::new("g"), |g, i| g.role(Role::new(format!("r{i}"), 1)));
        assert_eq!(
            err(&inv, &many(MAX_ROLES + 1)),
            request("gang.roles", "65537")
        );
        let c = inv.compile(&many(3)).unwrap();
        let ixs: Vec<RoleIx> = c.inner.indexed_roles().map(|(r, _)| r).collect();
        assert_eq!(ixs, [RoleIx(0), RoleIx(1), RoleIx(2)]);
        assert_eq!(c.inner.role(RoleIx(2)).count, 1);
        assert_eq!(
            RoleIx::at(usize::from(u16::MAX)).ix(),
            usize::from(u16::MAX)
        );
    }

    #[test]
    fn roles_and_names_are_validated() {
        let inv = cluster();
        let g = |role: Role| Gang::new("g").role(role);
        assert_eq!(err(&inv, &g(w(0))), request("gang.roles[w].count", "0"));
        assert_eq!(
            err(&inv, &g(w(4).min_count(5))),
            request("gang.roles[w].min_count", "5")
        );
        assert_eq!(
            err(&inv, &g(w(4).max_per_node(0))),
            request("gang.roles[w].max_per_node", "0")
        );
        assert_eq!(
            err(&inv, &g(Role::new("w x", 1))),
            request("gang.roles[0].name", "w x")
        );
        assert_eq!(
            err(&inv, &g(Role::new("", 1))),
            request("gang.roles[0].name", "")
        );
        assert_eq!(
            err(&inv, &g(w(1)).role(w(2))),
            request("gang.roles[1].name", "w")
        );
        assert_eq!(err(&inv, &Gang::new("g")), request("gang.roles", "[]"));
        assert_eq!(err(&inv, &Gang::new("G g").role(w(1))).1, "gang.name");
        // min_count 0 is allowed for a role, not for all of them.
        let empty = g(w(2).min_count(0)).role(Role::new("v", 2).min_count(0));
        assert_eq!(err(&inv, &empty), request("gang.roles", "min_count"));
        assert!(inv
            .compile(&g(w(2).min_count(0)).role(Role::new("v", 2)))
            .is_ok());
        assert_eq!(
            err(&inv, &g(w(1)).required("zone")),
            request("gang.topology.required", "zone")
        );
        assert_eq!(
            err(&inv, &g(w(1)).required("rack").preferred("block")),
            contradictory("gang.topology.preferred", "block")
        );
        assert_eq!(
            err(&inv, &g(Role::new("w", 1).request(GPU, "1.5x"))),
            (
                ErrorKind::InvalidQuantity,
                "gang.roles[w].requests.gpu".into(),
                "1.5x".into()
            )
        );
        // Selectors, expressions, tolerations.
        assert_eq!(
            err(&inv, &g(w(1).selector("Bad Key", "x"))).1,
            "gang.roles[w].node_selector"
        );
        assert_eq!(
            err(&inv, &g(w(1).selector("k", "bad value"))).1,
            "gang.roles[w].node_selector.k"
        );
        let no_values = Requirement::is_in("k", Vec::<String>::new());
        assert_eq!(
            err(&inv, &g(w(1).requirement(no_values))),
            request("gang.roles[w].match_expressions[0].values", "[]")
        );
        let mut with_values = Requirement::exists("k");
        with_values.values = vec!["x".into(), "y".into()];
        assert_eq!(
            err(&inv, &g(w(1).requirement(with_values))),
            request("gang.roles[w].match_expressions[0].values", "x,y")
        );
        assert_eq!(
            err(&inv, &g(w(1).toleration(Toleration::equal("", "x")))).1,
            "gang.roles[w].tolerations[0].key"
        );
        let mut exists_with_value = Toleration::exists("k");
        exists_with_value.value = "v".into();
        assert_eq!(
            err(&inv, &g(w(1).toleration(exists_with_value))),
            request("gang.roles[w].tolerations[0].value", "v")
        );
    }

    #[test]
    fn requests_become_dense_shapes() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([
                NodeSpec::new("a1")
                    .label("rack", "a")
                    .capacity(GPU, 8)
                    .capacity("cpu", 96),
                NodeSpec::new("a2")
                    .label("rack", "a")
                    .capacity(GPU, 4)
                    .capacity("cpu", 32),
                // A resource known only from external use: no node can offer it.
                NodeSpec::new("a3").label("rack", "a").used("memory", "1Gi"),
            ])
            .build()
            .unwrap();
        let (cpu, gpu, memory) = (0u32, 1u32, 2u32); // name order
        assert_eq!(inv.resources().collect::<Vec<_>>(), ["cpu", GPU, "memory"]);
        let gang = Gang::new("g")
            .role(
                Role::new("w", 3)
                    .request(GPU, 2)
                    .request("cpu", "12")
                    .request("memory", 0)
                    .request("tpu", 1),
            )
            .role(Role::new("m", 2).request("memory", "1Mi").max_per_node(3))
            .role(Role::new("z", 5).min_count(1).unconstrained());
        let c = inv.compile(&gang).unwrap();
        let [w, m, z] = &c.inner.roles[..] else {
            panic!("three roles")
        };
        // Zero requests are dropped; unknown resources are kept aside.
        assert_eq!(w.req.to_vec(), [(gpu, 2000), (cpu, 12_000)]);
        assert_eq!(w.missing, ["tpu"]);
        assert_eq!(
            (w.count, w.min, w.per_node, w.constrained),
            (3, 3, u32::MAX, true)
        );
        // Dominant share: max(2/8 GPU, 12/96 CPU) = 1/4, in millionths, times 3.
        assert_eq!(w.weight, 750_000);
        // A resource no node has any capacity of weighs the most.
        assert_eq!(m.req.to_vec(), [(memory, 1024 * 1024 * 1000)]);
        assert_eq!(m.weight, u128::from(u64::MAX) * 2);
        assert_eq!(m.per_node, 3);
        assert!(z.req.is_empty() && z.missing.is_empty());
        assert_eq!((z.weight, z.min, z.constrained), (0, 1, false));
        // Huge amounts stay exact.
        let huge = Gang::new("g")
            .role(Role::new("h", u32::MAX).request(GPU, Quantity::from_millis(u64::MAX)));
        let c = inv.compile(&huge).unwrap();
        let h = &c.inner.roles[0];
        assert_eq!(h.req.to_vec(), [(gpu, u64::MAX)]);
        assert_eq!(
            h.weight,
            u128::from(u64::MAX) * 1_000_000 / 8000 * u128::from(u32::MAX)
        );
    }

    #[test]
    fn eligibility_follows_selectors_and_taints() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([
                NodeSpec::new("a1")
                    .label("rack", "a")
                    .label("kind", "train"),
                NodeSpec::new("a2")
                    .label("rack", "a")
                    .label("kind", "serve")
                    .taint(Taint::new("dedicated", "x", TaintEffect::NoSchedule)),
                NodeSpec::new("b1")
                    .label("rack", "b")
                    .label("kind", "train")
                    .taint(Taint::new("dedicated", "x", TaintEffect::NoExecute)),
                NodeSpec::new("b2").label("rack", "b").taint(Taint::new(
                    "soft",
                    "",
                    TaintEffect::PreferNoSchedule,
                )),
                NodeSpec::new("u1").label("kind", "train").cordoned(),
            ])
            .build()
            .unwrap();
        let names = |role: Role| -> Vec<&str> {
            let e = eligibility(&inv, &role);
            (0..inv.len())
                .filter(|&i| e.get(i))
                .map(|i| inv.names[i].as_str())
                .collect()
        };
        let all = |role: Role| role.toleration(Toleration::exists(""));
        let r = || Role::new("w", 1);
        // Untolerated NoSchedule and NoExecute exclude; PreferNoSchedule and cordons do not.
        assert_eq!(names(r()), ["a1", "b2", "u1"]);
        assert_eq!(
            names(r().toleration(Toleration::equal("dedicated", "x"))),
            ["a1", "a2", "b1", "b2", "u1"]
        );
        let no_execute_only = Toleration::exists("dedicated").effect(TaintEffect::NoExecute);
        assert_eq!(
            names(r().toleration(no_execute_only)),
            ["a1", "b1", "b2", "u1"]
        );
        assert_eq!(names(r().selector("kind", "train")), ["a1", "u1"]);
        // Topology labels are selectable like any other.
        assert_eq!(names(all(r().selector("rack", "a"))), ["a1", "a2"]);
        assert_eq!(
            names(all(r().selector("rack", "a").selector("kind", "train"))),
            ["a1"]
        );
        assert_eq!(
            names(all(
                r().requirement(Requirement::is_in("kind", ["serve", "train"]))
            )),
            ["a1", "a2", "b1", "u1"]
        );
        assert_eq!(
            names(all(r().requirement(Requirement::not_in("kind", ["train"])))),
            ["a2", "b2"]
        );
        assert_eq!(
            names(all(r().requirement(Requirement::not_in("rack", ["a"])))),
            ["b1", "b2", "u1"]
        );
        assert_eq!(
            names(all(r().requirement(Requirement::exists("rack")))),
            ["a1", "a2", "b1", "b2"]
        );
        assert_eq!(
            names(all(r().requirement(Requirement::does_not_exist("rack")))),
            ["u1"]
        );
        // Labels nobody has.
        assert!(names(all(r().selector("zone", "z1"))).is_empty());
        assert!(names(all(r().selector("kind", "gpu"))).is_empty());
        assert!(names(all(r().requirement(Requirement::exists("zone")))).is_empty());
        assert!(names(all(r().requirement(Requirement::is_in("zone", ["z1"])))).is_empty());
        assert_eq!(
            names(all(r().requirement(Requirement::does_not_exist("zone")))).len(),
            5
        );
        // compile stores the same set.
        let c = inv
            .compile(&Gang::new("g").role(r().selector("kind", "train")))
            .unwrap();
        assert_eq!(
            c.inner.roles[0].eligible,
            eligibility(&inv, &r().selector("kind", "train"))
        );
    }

    #[test]
    fn cap_on_takes_the_tighter_of_max_per_node_and_the_node_cap() {
        let inv = cluster();
        let c = inv
            .compile(&Gang::new("g").role(w(4).max_per_node(4)))
            .unwrap();
        let mut role = c.inner.roles[0].clone();
        let cap_on = |role: &CRole, n: u32| role.cap_on(NodeIx(n));
        assert_eq!(cap_on(&role, 0), 4);
        role.node_caps = vec![(NodeIx(1), 2), (NodeIx(3), 9)];
        assert_eq!(
            [
                cap_on(&role, 0),
                cap_on(&role, 1),
                cap_on(&role, 2),
                cap_on(&role, 3)
            ],
            [4, 2, 4, 4]
        );
        role.per_node = u32::MAX;
        assert_eq!(
            [cap_on(&role, 1), cap_on(&role, 3), cap_on(&role, 5)],
            [2, 9, u32::MAX]
        );
    }

    /// Every member is one pod: on an inventory with a `pods` column every role is
    /// charged one (an explicit `pods: 1` is the same); any other `pods` request is
    /// invalid; without a `pods` column nothing is charged.
    #[test]
    fn every_member_is_one_pod() {
        let node = |n: &str, pods: Option<i64>| {
            let s = NodeSpec::new(n).capacity("cpu", 8);
            match pods {
                Some(p) => s.capacity("pods", p),
                None => s,
            }
        };
        let inv = Inventory::builder(Topology::flat())
            .nodes([node("a1", Some(2)), node("a2", None)])
            .build()
            .unwrap();
        let pods = inv.resources.get_index_of("pods").unwrap() as u32;
        let cpu = inv.resources.get_index_of("cpu").unwrap() as u32;
        for role in [
            Role::new("w", 1).request("cpu", "100m"),
            Role::new("w", 1).request("cpu", "100m").request("pods", 1),
        ] {
            let c = inv.compile(&Gang::new("g").role(role)).unwrap();
            assert_eq!(c.inner.roles[0].req.to_vec(), [(cpu, 100), (pods, 1000)]);
        }
        for bad in [0, 2] {
            let err = inv
                .compile(&Gang::new("g").role(Role::new("w", 1).request("pods", bad)))
                .unwrap_err();
            assert_eq!(
                (err.kind(), err.field()),
                (ErrorKind::InvalidRequest, "gang.roles[w].requests.pods")
            );
        }
        // No node declares pods: no column, nothing charged, `pods: 1` still accepted.
        let free = Inventory::builder(Topology::flat())
            .node(node("b1", None))
            .build()
            .unwrap();
        let c = free
            .compile(&Gang::new("g").role(Role::new("w", 1).request("pods", 1)))
            .unwrap();
        assert!(c.inner.roles[0].req.is_empty());
    }
}
