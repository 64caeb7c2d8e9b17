//! What is asked for: a gang of roles, its topology constraint and its policy.

use indexmap::IndexMap;

use crate::model::{QuantitySpec, Toleration};

/// A group of members that must run together: one or more [`Role`]s, a topology
/// constraint and a policy for choosing among feasible domains.
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Policy, Role, Topology};
/// const BLOCK: &str = "topology.example.com/block";
/// const RACK: &str = "topology.example.com/rack";
/// let node = |name: &str, rack: &str| {
///     NodeSpec::new(name)
///         .label(BLOCK, "b1")
///         .label(RACK, rack)
///         .capacity("nvidia.com/gpu", 4)
///         .capacity("cpu", 8)
/// };
/// let inv = Inventory::builder(Topology::new([BLOCK, RACK])?)
///     .nodes([node("a1", "a"), node("b1", "b")])
///     .build()?;
/// let gang = |workers, slice| {
///     Gang::new("train")
///         .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
///         .role(Role::new("worker", workers).request("nvidia.com/gpu", 1))
///         .required(BLOCK)
///         .preferred(RACK) // no rack has 8 GPUs: walks up to the block
///         .slice(RACK, slice)
///         .policy(Policy::BestFit)
/// };
/// let g = gang(8, 4);
/// assert_eq!((g.get_name(), g.get_roles().len(), g.get_policy()), ("train", 2, Policy::BestFit));
/// assert_eq!(g.get_topology().required.as_deref(), Some(BLOCK));
/// let p = inv.place(&g)?.placement().cloned().unwrap();
/// assert_eq!((p.level(), p.domain_path().as_str()), (Some(BLOCK), "b1"));
///
/// assert!(!inv.place(&gang(12, 4))?.is_placed()); // 12 GPUs asked, 8 exist
/// let err = inv.place(&gang(8, 3)).unwrap_err(); // 8 workers are not slices of 3
/// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidRequest, "gang.roles[worker].count"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Gang {
    /// Name, used in results and diagnoses.
    pub(crate) name: String,
    /// Roles, in order.
    pub(crate) roles: Vec<Role>,
    /// Topology constraint.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) topology: GangTopology,
    /// How to choose among feasible domains.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) policy: Policy,
    /// Priority (Kubernetes PriorityClass semantics: higher wins; default 0). Only a
    /// gang of strictly higher priority may evict it ([`Inventory::preempt`](crate::Inventory::preempt)).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero"))]
    pub(crate) priority: i32,
    /// Whether the gang, once reserved, may be evicted by higher-priority work.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "PreemptionPolicy::is_default")
    )]
    pub(crate) preemption_policy: PreemptionPolicy,
}

#[cfg(feature = "serde")]
fn is_zero(v: &i32) -> bool {
    *v == 0
}

impl Gang {
    /// An empty, unconstrained gang with the default policy; add at least one role.
    /// See [`Gang`].
    pub fn new(name: impl Into<String>) -> Self {
        Gang {
            name: name.into(),
            roles: Vec::new(),
            topology: GangTopology::default(),
            policy: Policy::default(),
            priority: 0,
            preemption_policy: PreemptionPolicy::default(),
        }
    }

    /// Adds a role (roles keep their order in results). See [`Gang`].
    pub fn role(mut self, role: Role) -> Self {
        self.add_role(role);
        self
    }

    /// Every constrained member must land in one domain of `level`. See [`Gang`].
    pub fn required(mut self, level: impl Into<String>) -> Self {
        self.set_required(Some(level.into()));
        self
    }

    /// Try one domain of `level`, walking up a level at a time if none fits (never
    /// above `required`). See [`Gang`].
    pub fn preferred(mut self, level: impl Into<String>) -> Self {
        self.set_preferred(Some(level.into()));
        self
    }

    /// Adds a slice level (outermost first): members in slices of `size`, each slice
    /// inside one domain of `level`. See [`Gang`] and [`Slice`].
    pub fn slice(mut self, level: impl Into<String>, size: u32) -> Self {
        self.add_slice(level, size);
        self
    }

    /// Sets the policy for choosing among feasible domains. See [`Gang`] and [`Policy`].
    pub fn policy(mut self, policy: Policy) -> Self {
        self.set_policy(policy);
        self
    }

    /// Sets the priority (Kubernetes PriorityClass semantics: higher wins; default 0).
    /// A reservation of this gang may be evicted only for a gang of strictly higher
    /// priority, and only when its [`PreemptionPolicy`] allows it. See
    /// [`Inventory::preempt`](crate::Inventory::preempt).
    ///
    /// ```
    /// use gang_core::{Gang, PreemptionPolicy, Role};
    /// let g = Gang::new("g").role(Role::new("w", 1)).priority(100);
    /// assert_eq!((g.get_priority(), g.get_preemption_policy()), (100, PreemptionPolicy::PreemptLowerPriority));
    /// assert_eq!(Gang::new("g").get_priority(), 0);
    /// ```
    pub fn priority(mut self, priority: i32) -> Self {
        self.set_priority(priority);
        self
    }

    /// Sets the preemption policy: [`PreemptionPolicy::Never`] makes a reservation of
    /// this gang untouchable by [`Inventory::preempt`](crate::Inventory::preempt),
    /// whatever the priority of the gang asking. See [`PreemptionPolicy`].
    pub fn preemption_policy(mut self, policy: PreemptionPolicy) -> Self {
        self.set_preemption_policy(policy);
        self
    }

    /// The priority. See [`Gang::priority`].
    pub fn get_priority(&self) -> i32 {
        self.priority
    }

    /// The preemption policy. See [`Gang::preemption_policy`].
    pub fn get_preemption_policy(&self) -> PreemptionPolicy {
        self.preemption_policy
    }

    /// [`Gang::priority`] in place.
    pub fn set_priority(&mut self, priority: i32) -> &mut Self {
        self.priority = priority;
        self
    }

    /// [`Gang::preemption_policy`] in place.
    pub fn set_preemption_policy(&mut self, policy: PreemptionPolicy) -> &mut Self {
        self.preemption_policy = policy;
        self
    }

    // Getters are named `get_*` because the builder methods take the bare names (as
    // `std::process::Command` and `clap::Arg` do).

    /// The gang's name. See [`Gang`].
    pub fn get_name(&self) -> &str {
        &self.name
    }

    /// The roles, in order. See [`Gang`].
    pub fn get_roles(&self) -> &[Role] {
        &self.roles
    }

    /// The topology constraint. See [`Gang`].
    pub fn get_topology(&self) -> &GangTopology {
        &self.topology
    }

    /// The policy. See [`Gang`].
    pub fn get_policy(&self) -> Policy {
        self.policy
    }

    // In-place forms of the builder methods, for loops and for bindings that hold a
    // gang behind a handle.

    /// Renames the gang in place (a gang built from a template, say).
    pub fn set_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.name = name.into();
        self
    }

    /// [`Gang::role`] in place.
    pub fn add_role(&mut self, role: Role) -> &mut Self {
        self.roles.push(role);
        self
    }

    /// Sets or clears the required level in place. See [`Gang::required`].
    pub fn set_required(&mut self, level: Option<String>) -> &mut Self {
        self.topology.required = level;
        self
    }

    /// Sets or clears the preferred level in place. See [`Gang::preferred`].
    pub fn set_preferred(&mut self, level: Option<String>) -> &mut Self {
        self.topology.preferred = level;
        self
    }

    /// [`Gang::slice`] in place.
    pub fn add_slice(&mut self, level: impl Into<String>, size: u32) -> &mut Self {
        self.topology.slices.push(Slice {
            level: level.into(),
            size,
        });
        self
    }

    /// [`Gang::policy`] in place.
    pub fn set_policy(&mut self, policy: Policy) -> &mut Self {
        self.policy = policy;
        self
    }
}

/// One kind of member: how many, what each needs on one node, where it may run.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Taint, TaintEffect, Toleration};
/// use gang_core::request::Requirement;
/// use gang_core::Topology;
/// const PRODUCT: &str = "nvidia.com/gpu.product";
/// let node = |name: &str, product: &str| {
///     NodeSpec::new(name)
///         .label(PRODUCT, product)
///         .capacity("nvidia.com/gpu", 8)
///         .capacity("cpu", 32)
///         .taint(Taint::new("dedicated", "training", TaintEffect::NoSchedule))
/// };
/// let inv = Inventory::builder(Topology::flat())
///     .nodes([node("h1", "H200"), node("h2", "H200"), node("a1", "A100")])
///     .build()?;
/// let worker = |max_per_node| {
///     Role::new("worker", 8)
///         .min_count(4)
///         .request("nvidia.com/gpu", 1)
///         .request("cpu", "500m")
///         .selector(PRODUCT, "H200")
///         .requirement(Requirement::exists("nvidia.com/gpu.product"))
///         .toleration(Toleration::equal("dedicated", "training"))
///         .max_per_node(max_per_node)
/// };
/// let r = worker(4);
/// assert_eq!((r.get_name(), r.get_count(), r.get_min_count()), ("worker", 8, Some(4)));
/// assert_eq!((r.get_max_per_node(), r.is_constrained()), (Some(4), true));
/// assert_eq!(r.get_requests().map(|(res, _)| res).collect::<Vec<_>>(), ["nvidia.com/gpu", "cpu"]);
/// assert_eq!(r.get_node_selector().collect::<Vec<_>>(), [(PRODUCT, "H200")]);
/// assert_eq!((r.get_match_expressions().len(), r.get_tolerations().len()), (1, 1));
/// assert!(!r.clone().unconstrained().is_constrained());
///
/// let place = |role| inv.place(&Gang::new("train").role(role));
/// let p = place(worker(4))?.placement().cloned().unwrap();
/// assert_eq!(p.node_counts(), [("h1", 4), ("h2", 4)]); // never on the A100 node
/// let p = place(worker(3))?.placement().cloned().unwrap();
/// assert_eq!(p.placed("worker"), Some(6)); // elastic: 6 of 8, at least 4
/// assert!(!place(worker(1))?.is_placed()); // 2 H200 nodes, 1 each: below min_count
/// assert!(!place(worker(4).min_count(8).max_per_node(3))?.is_placed());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Role {
    /// Name (unique within the gang).
    pub(crate) name: String,
    /// Number of members.
    pub(crate) count: u32,
    /// Elastic: place at least this many, up to `count`, as many as fit.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) min_count: Option<u32>,
    /// Per-member requests; each member needs all of them on one node.
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) requests: IndexMap<String, QuantitySpec>,
    /// Required label values (equality).
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) node_selector: IndexMap<String, String>,
    /// Further label requirements (`In`, `NotIn`, `Exists`, `DoesNotExist`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) match_expressions: Vec<Requirement>,
    /// Tolerations.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) tolerations: Vec<Toleration>,
    /// At most this many members of the role on one node.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) max_per_node: Option<u32>,
    /// Bound by the gang's topology constraint (default). An unconstrained role may run
    /// anywhere but is still all-or-nothing with the rest.
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub(crate) constrained: bool,
}

#[cfg(feature = "serde")]
fn yes() -> bool {
    true
}

impl Role {
    /// A constrained role of `count` members with no requests. See [`Role`].
    pub fn new(name: impl Into<String>, count: u32) -> Self {
        Role {
            name: name.into(),
            count,
            min_count: None,
            requests: IndexMap::new(),
            node_selector: IndexMap::new(),
            match_expressions: Vec::new(),
            tolerations: Vec::new(),
            max_per_node: None,
            constrained: true,
        }
    }

    /// Elastic minimum: place at least `min`, up to `count`, as many as fit. See [`Role`].
    pub fn min_count(mut self, min: u32) -> Self {
        self.set_min_count(Some(min));
        self
    }

    /// Per-member request of `resource`; each member needs all its requests on one node.
    /// See [`Role`].
    pub fn request(mut self, resource: impl Into<String>, amount: impl Into<QuantitySpec>) -> Self {
        self.set_request(resource, amount);
        self
    }

    /// Requires label `key` = `value` on the member's node. See [`Role`].
    pub fn selector(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.set_selector(key, value);
        self
    }

    /// Adds a label requirement. See [`Role`] and [`Requirement`].
    pub fn requirement(mut self, req: Requirement) -> Self {
        self.add_requirement(req);
        self
    }

    /// Adds a toleration. See [`Role`] and [`Toleration`].
    pub fn toleration(mut self, t: Toleration) -> Self {
        self.add_toleration(t);
        self
    }

    /// At most `k` members of this role per node. See [`Role`].
    pub fn max_per_node(mut self, k: u32) -> Self {
        self.set_max_per_node(Some(k));
        self
    }

    /// Not bound by the gang's topology constraint (still all-or-nothing with the rest).
    /// See [`Role`].
    pub fn unconstrained(mut self) -> Self {
        self.set_constrained(false);
        self
    }

    /// The role's name. See [`Role`].
    pub fn get_name(&self) -> &str {
        &self.name
    }

    /// The number of members. See [`Role`].
    pub fn get_count(&self) -> u32 {
        self.count
    }

    /// The elastic minimum, if set. See [`Role`].
    pub fn get_min_count(&self) -> Option<u32> {
        self.min_count
    }

    /// Per-member requests, as given, in the order set. See [`Role`].
    pub fn get_requests(&self) -> impl ExactSizeIterator<Item = (&str, &QuantitySpec)> + '_ {
        self.requests.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Required label values. See [`Role`].
    pub fn get_node_selector(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.node_selector
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Further label requirements. See [`Role`].
    pub fn get_match_expressions(&self) -> &[Requirement] {
        &self.match_expressions
    }

    /// Tolerations. See [`Role`].
    pub fn get_tolerations(&self) -> &[Toleration] {
        &self.tolerations
    }

    /// The per-node limit, if set. See [`Role`].
    pub fn get_max_per_node(&self) -> Option<u32> {
        self.max_per_node
    }

    /// Whether the role is bound by the gang's topology constraint. See [`Role`].
    pub fn is_constrained(&self) -> bool {
        self.constrained
    }

    // In-place forms of the builder methods, for loops and for bindings that hold a
    // role behind a handle.

    /// Sets the number of members in place (a role built from a template, say).
    pub fn set_count(&mut self, count: u32) -> &mut Self {
        self.count = count;
        self
    }

    /// Sets or clears the elastic minimum in place. See [`Role::min_count`].
    pub fn set_min_count(&mut self, min: Option<u32>) -> &mut Self {
        self.min_count = min;
        self
    }

    /// [`Role::request`] in place; requesting a resource again replaces its amount.
    pub fn set_request(
        &mut self,
        resource: impl Into<String>,
        amount: impl Into<QuantitySpec>,
    ) -> &mut Self {
        self.requests.insert(resource.into(), amount.into());
        self
    }

    /// [`Role::selector`] in place; selecting a key again replaces its value.
    pub fn set_selector(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.node_selector.insert(key.into(), value.into());
        self
    }

    /// [`Role::requirement`] in place.
    pub fn add_requirement(&mut self, req: Requirement) -> &mut Self {
        self.match_expressions.push(req);
        self
    }

    /// [`Role::toleration`] in place.
    pub fn add_toleration(&mut self, t: Toleration) -> &mut Self {
        self.tolerations.push(t);
        self
    }

    /// Sets or clears the per-node limit in place. See [`Role::max_per_node`].
    pub fn set_max_per_node(&mut self, k: Option<u32>) -> &mut Self {
        self.max_per_node = k;
        self
    }

    /// Binds the role to the gang's topology constraint, or frees it
    /// ([`Role::unconstrained`]), in place.
    pub fn set_constrained(&mut self, constrained: bool) -> &mut Self {
        self.constrained = constrained;
        self
    }
}

/// Label requirement operator (Kubernetes node affinity).
///
/// ```
/// use gang_core::request::{Requirement, SelectorOperator};
/// assert_eq!(Requirement::is_in("zone", ["z1"]).operator, SelectorOperator::In);
/// assert_eq!(Requirement::not_in("zone", ["z9"]).operator, SelectorOperator::NotIn);
/// assert_eq!(Requirement::exists("zone").operator, SelectorOperator::Exists);
/// assert_eq!(Requirement::does_not_exist("zone").operator, SelectorOperator::DoesNotExist);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SelectorOperator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

/// A label requirement: `key` `operator` `values`.
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::request::Requirement;
/// const PRODUCT: &str = "nvidia.com/gpu.product";
/// let inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("h1").label(PRODUCT, "H100").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("h2").label(PRODUCT, "H200").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("a1").label(PRODUCT, "A100").label("spot", "")
///         .capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("cpu1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// // Nodes a role with this one requirement may use.
/// let nodes = |req: Requirement| -> Result<Vec<String>, gang_core::Error> {
///     let role = Role::new("w", 4).request("nvidia.com/gpu", 8).min_count(1).requirement(req);
///     let out = inv.place(&Gang::new("g").role(role))?;
///     Ok(out.placement().unwrap().assignments().iter().map(|a| a.node.clone()).collect())
/// };
/// assert_eq!(nodes(Requirement::is_in(PRODUCT, ["H100", "H200"]))?, ["h1", "h2"]);
/// assert_eq!(nodes(Requirement::not_in(PRODUCT, ["H100", "H200"]))?, ["a1", "cpu1"]);
/// assert_eq!(nodes(Requirement::exists(PRODUCT))?, ["a1", "h1", "h2"]);
/// assert_eq!(nodes(Requirement::does_not_exist("spot"))?, ["cpu1", "h1", "h2"]);
///
/// let mut bad = Requirement::exists(PRODUCT);
/// bad.values.push("H200".into()); // Exists takes no values
/// let err = nodes(bad).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidRequest);
/// assert_eq!(err.field(), "gang.roles[w].match_expressions[0].values");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Operator.
    pub operator: SelectorOperator,
    /// Values (for `In` / `NotIn`; must be empty otherwise).
    #[cfg_attr(feature = "serde", serde(default))]
    pub values: Vec<String>,
}

impl Requirement {
    fn new<I: IntoIterator<Item = S>, S: Into<String>>(
        key: impl Into<String>,
        op: SelectorOperator,
        values: I,
    ) -> Self {
        Requirement {
            key: key.into(),
            operator: op,
            values: values.into_iter().map(Into::into).collect(),
        }
    }
    /// `key In (values)`: the label's value is one of `values`. See [`Requirement`].
    pub fn is_in<I: IntoIterator<Item = S>, S: Into<String>>(
        key: impl Into<String>,
        values: I,
    ) -> Self {
        Self::new(key, SelectorOperator::In, values)
    }
    /// `key NotIn (values)`: the label is absent or none of `values`. See [`Requirement`].
    pub fn not_in<I: IntoIterator<Item = S>, S: Into<String>>(
        key: impl Into<String>,
        values: I,
    ) -> Self {
        Self::new(key, SelectorOperator::NotIn, values)
    }
    /// `key Exists`: the label is present, with any value. See [`Requirement`].
    pub fn exists(key: impl Into<String>) -> Self {
        Self::new(key, SelectorOperator::Exists, Vec::<String>::new())
    }
    /// `key DoesNotExist`: the label is absent. See [`Requirement`].
    pub fn does_not_exist(key: impl Into<String>) -> Self {
        Self::new(key, SelectorOperator::DoesNotExist, Vec::<String>::new())
    }
}

/// The gang's topology constraint. With neither level the gang is unconstrained (still
/// all-or-nothing, still packed onto few domains).
///
/// Usually set through [`Gang::required`], [`Gang::preferred`] and [`Gang::slice`].
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::request::{GangTopology, Slice};
/// let g = Gang::new("g").role(Role::new("w", 4)).required("block").slice("rack", 2);
/// let want = GangTopology {
///     required: Some("block".into()),
///     preferred: None,
///     slices: vec![Slice { level: "rack".into(), size: 2 }],
/// };
/// assert_eq!(*g.get_topology(), want);
/// assert_eq!(*Gang::new("g").get_topology(), GangTopology::default()); // unconstrained
///
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .node(NodeSpec::new("a1").label("block", "b1").label("rack", "a"))
///     .build()?;
/// assert!(inv.compile(&g).is_ok());
/// let upside_down = Gang::new("g").role(Role::new("w", 4)).required("rack").preferred("block");
/// assert_eq!(inv.compile(&upside_down).unwrap_err().kind(), ErrorKind::Contradictory);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct GangTopology {
    /// Hard: every constrained member in one domain of this level.
    #[cfg_attr(feature = "serde", serde(default))]
    pub required: Option<String>,
    /// Soft: try this level first, then walk up (never above `required`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub preferred: Option<String>,
    /// Slice levels, outermost first.
    #[cfg_attr(feature = "serde", serde(default))]
    pub slices: Vec<Slice>,
}

/// Members cut into slices of `size`, each inside one domain of `level`.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::request::Slice;
/// let node = |n: &str, rack: &str| {
///     NodeSpec::new(n).label("block", "b1").label("rack", rack).capacity("nvidia.com/gpu", 2)
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "a"), node("b1", "b"), node("c1", "c")])
///     .build()?;
/// let gang = |size| {
///     Gang::new("g")
///         .role(Role::new("w", 4).request("nvidia.com/gpu", 1))
///         .required("block")
///         .slice("rack", size)
/// };
/// assert_eq!(gang(2).get_topology().slices, [Slice { level: "rack".into(), size: 2 }]);
/// let p = inv.place(&gang(2))?.placement().cloned().unwrap();
/// assert_eq!(p.node_counts(), [("a1", 2), ("b1", 2)]); // two racks, two each
/// assert!(!inv.place(&gang(4))?.is_placed()); // no rack holds a slice of 4
/// assert_eq!(inv.place(&gang(0)).unwrap_err().field(), "gang.topology.slices[0].size");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Slice {
    /// Level key.
    pub level: String,
    /// Members per slice.
    pub size: u32,
}

/// Whether a reserved gang may be evicted for higher-priority work (the field
/// `preemption_policy` of a gang document, spelled as Kubernetes spells the values).
///
/// Note the difference from Kubernetes: there a PriorityClass's `preemptionPolicy:
/// Never` stops its pods from *preempting* others; here `Never` marks the gang as not
/// *preemptible* — [`Inventory::preempt`](crate::Inventory::preempt) never chooses it as
/// a victim (DESIGN §3). Whether a gang may preempt at all is the caller's choice: it
/// calls `preempt` or only `place`.
///
/// ```
/// use gang_core::{Gang, PreemptionPolicy, Role};
/// assert_eq!(PreemptionPolicy::default(), PreemptionPolicy::PreemptLowerPriority);
/// assert_eq!(PreemptionPolicy::Never.as_str(), "Never");
/// let g = Gang::new("serving").role(Role::new("w", 1)).priority(5)
///     .preemption_policy(PreemptionPolicy::Never);
/// assert_eq!(g.get_preemption_policy(), PreemptionPolicy::Never);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PreemptionPolicy {
    /// May be evicted for a gang of strictly higher priority (the default).
    #[default]
    PreemptLowerPriority,
    /// Never evicted by [`Inventory::preempt`](crate::Inventory::preempt).
    Never,
}

impl PreemptionPolicy {
    /// The name used in gang documents (`PreemptLowerPriority`, `Never`). See
    /// [`PreemptionPolicy`].
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionPolicy::PreemptLowerPriority => "PreemptLowerPriority",
            PreemptionPolicy::Never => "Never",
        }
    }

    #[cfg(feature = "serde")]
    fn is_default(&self) -> bool {
        *self == PreemptionPolicy::default()
    }
}

/// How to choose among feasible domains.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Policy, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("b1").label("rack", "b").capacity("nvidia.com/gpu", 4))
///     .build()?;
/// let rack_for = |policy| -> Result<String, gang_core::Error> {
///     let gang = Gang::new("g")
///         .role(Role::new("w", 4).request("nvidia.com/gpu", 1))
///         .required("rack")
///         .policy(policy);
///     Ok(inv.place(&gang)?.placement().unwrap().domain_path())
/// };
/// assert_eq!(Policy::default(), Policy::BestFit);
/// assert_eq!(rack_for(Policy::BestFit)?, "b"); // the tightest rack that fits
/// assert_eq!(rack_for(Policy::MostFree)?, "a");
/// assert_eq!(rack_for(Policy::Balanced)?, "b");
/// assert_eq!(Policy::MostFree.as_str(), "most-free");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Policy {
    /// The tightest domain that fits (fewest spare member slots), to limit fragmentation.
    #[default]
    BestFit,
    /// The domain with the most spare member slots.
    MostFree,
    /// Like best-fit for the domain; split placements get even counts per domain
    /// (8:8 rather than 15:1).
    Balanced,
}

impl Policy {
    /// The name used in scenario files (`best-fit`, `most-free`, `balanced`). See
    /// [`Policy`].
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::BestFit => "best-fit",
            Policy::MostFree => "most-free",
            Policy::Balanced => "balanced",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{selector_set, untolerated_set};
    use crate::inventory::bitset::Bitset;
    use crate::inventory::Inventory;
    use crate::Topology;
    use crate::{NodeSpec, Taint, TaintEffect};

    /// Names of the nodes in `set`, sorted.
    fn names(inv: &Inventory, set: &Bitset) -> Vec<String> {
        let mut out: Vec<String> = (0..inv.len())
            .filter(|&n| set.get(n))
            .map(|n| inv.names[n].clone())
            .collect();
        out.sort();
        out
    }

    /// Five nodes: two racks named `a` in different blocks, one with a rack label but
    /// no block label (outside every domain), one with no labels at all.
    fn labelled() -> Inventory {
        let n = |name: &str, labels: &[(&str, &str)]| {
            labels
                .iter()
                .fold(NodeSpec::new(name).capacity("gpu", 1), |n, (k, v)| {
                    n.label(*k, *v)
                })
        };
        Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .node(n(
                "n1",
                &[
                    ("block", "b1"),
                    ("rack", "a"),
                    ("zone", "z1"),
                    ("product", "H200"),
                ],
            ))
            .node(n(
                "n2",
                &[
                    ("block", "b2"),
                    ("rack", "a"),
                    ("zone", "z2"),
                    ("product", "H100"),
                ],
            ))
            .node(n("n3", &[("block", "b1"), ("rack", "b"), ("product", "")]))
            .node(n("n4", &[("rack", "a")]))
            .node(n("n5", &[]))
            .build()
            .unwrap()
    }

    fn select(inv: &Inventory, role: Role) -> Vec<String> {
        names(inv, &selector_set(inv, &role))
    }

    fn with(req: Requirement) -> Role {
        Role::new("w", 1).requirement(req)
    }

    #[test]
    fn builder_defaults_and_overrides() {
        let g = Gang::new("g");
        assert!(g.roles.is_empty());
        assert_eq!(g.topology, GangTopology::default());
        assert_eq!(
            (
                g.topology.required,
                g.topology.preferred,
                g.topology.slices.len()
            ),
            (None, None, 0)
        );
        assert_eq!(g.policy, Policy::BestFit);

        let r = Role::new("w", 3);
        assert_eq!((r.name.as_str(), r.count), ("w", 3));
        assert_eq!((r.min_count, r.max_per_node), (None, None));
        assert!(r.requests.is_empty() && r.node_selector.is_empty());
        assert!(r.match_expressions.is_empty() && r.tolerations.is_empty());
        assert!(r.constrained);

        // A repeated resource or selector key keeps its first position, last value wins.
        let r = Role::new("w", 1)
            .request("gpu", 1)
            .request("cpu", 2)
            .request("gpu", 4)
            .selector("zone", "z1")
            .selector("zone", "z2");
        let reqs: Vec<(&str, QuantitySpec)> = r
            .requests
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        assert_eq!(
            reqs,
            [
                ("gpu", QuantitySpec::from(4)),
                ("cpu", QuantitySpec::from(2))
            ]
        );
        assert_eq!(r.node_selector.len(), 1);
        assert_eq!(r.node_selector["zone"], "z2");

        // The last required / preferred wins; slices and roles accumulate in order.
        let g = Gang::new("g")
            .role(Role::new("a", 1))
            .role(Role::new("b", 2))
            .required("block")
            .required("rack")
            .preferred("rack")
            .slice("block", 4)
            .slice("rack", 2)
            .policy(Policy::MostFree)
            .policy(Policy::Balanced);
        let roles: Vec<&str> = g.roles.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(roles, ["a", "b"]);
        assert_eq!(g.topology.required.as_deref(), Some("rack"));
        assert_eq!(g.topology.preferred.as_deref(), Some("rack"));
        let slices: Vec<(&str, u32)> = g
            .topology
            .slices
            .iter()
            .map(|s| (s.level.as_str(), s.size))
            .collect();
        assert_eq!(slices, [("block", 4), ("rack", 2)]);
        assert_eq!(g.policy, Policy::Balanced);
        assert_eq!(
            [Policy::BestFit, Policy::MostFree, Policy::Balanced].map(Policy::as_str),
            ["best-fit", "most-free", "balanced"]
        );
    }

    /// Serde defaults match the builder's: a role is constrained unless it says not,
    /// policies are kebab-case, operators keep their Kubernetes spelling.
    #[cfg(feature = "serde")]
    #[test]
    fn json_defaults_match_the_builder() {
        let g: Gang = serde_json::from_str(
            r#"{"name": "g", "roles": [{"name": "w", "count": 2}], "policy": "most-free"}"#,
        )
        .unwrap();
        assert_eq!(
            g,
            Gang::new("g")
                .role(Role::new("w", 2))
                .policy(Policy::MostFree)
        );
        let r: Requirement =
            serde_json::from_str(r#"{"key": "zone", "operator": "DoesNotExist"}"#).unwrap();
        assert_eq!(r, Requirement::does_not_exist("zone"));
        let r: Requirement =
            serde_json::from_str(r#"{"key": "zone", "operator": "NotIn", "values": ["z9"]}"#)
                .unwrap();
        assert_eq!(r, Requirement::not_in("zone", ["z9"]));
        assert!(serde_json::from_str::<Requirement>(r#"{"key": "z", "operator": "in"}"#).is_err());
        assert!(serde_json::from_str::<Policy>(r#""BestFit""#).is_err());
        let unconstrained: Role =
            serde_json::from_str(r#"{"name": "l", "count": 1, "constrained": false}"#).unwrap();
        assert_eq!(unconstrained, Role::new("l", 1).unconstrained());
    }

    /// A topology level is a label like any other: a selector on it matches every
    /// domain with that value (`b1/a` and `b2/a`) and nodes carrying the label outside
    /// any domain (no block label).
    #[test]
    fn selectors_on_a_level_key() {
        let inv = labelled();
        let role = |k: &str, v: &str| Role::new("w", 1).selector(k, v);
        assert_eq!(select(&inv, role("rack", "a")), ["n1", "n2", "n4"]);
        assert_eq!(select(&inv, role("block", "b1")), ["n1", "n3"]);
        assert!(select(&inv, role("rack", "zz")).is_empty());
        assert_eq!(
            select(&inv, with(Requirement::is_in("rack", ["a"]))),
            ["n1", "n2", "n4"]
        );
        assert_eq!(
            select(&inv, with(Requirement::not_in("rack", ["a"]))),
            ["n3", "n5"]
        );
        assert_eq!(
            select(&inv, with(Requirement::exists("rack"))),
            ["n1", "n2", "n3", "n4"]
        );
        assert_eq!(
            select(&inv, with(Requirement::does_not_exist("rack"))),
            ["n5"]
        );
        assert_eq!(
            select(&inv, with(Requirement::does_not_exist("block"))),
            ["n4", "n5"]
        );
    }

    #[test]
    fn match_expressions_on_labelled_and_unlabelled_nodes() {
        let inv = labelled();
        let sel = |req| select(&inv, with(req));
        // In: any listed value; a value no node has adds nothing.
        assert_eq!(sel(Requirement::is_in("zone", ["z1", "z9"])), ["n1"]);
        assert!(sel(Requirement::is_in("zone", ["z9"])).is_empty());
        // NotIn: nodes without the label pass.
        assert_eq!(
            sel(Requirement::not_in("zone", ["z1"])),
            ["n2", "n3", "n4", "n5"]
        );
        assert_eq!(
            sel(Requirement::not_in("zone", ["z1", "z2"])),
            ["n3", "n4", "n5"]
        );
        assert_eq!(sel(Requirement::exists("zone")), ["n1", "n2"]);
        assert_eq!(sel(Requirement::does_not_exist("zone")), ["n3", "n4", "n5"]);
        // An empty value is a value: the label exists.
        assert_eq!(sel(Requirement::is_in("product", [""])), ["n3"]);
        assert_eq!(sel(Requirement::exists("product")), ["n1", "n2", "n3"]);
        assert_eq!(sel(Requirement::does_not_exist("product")), ["n4", "n5"]);
        // A key no node carries.
        let all = ["n1", "n2", "n3", "n4", "n5"];
        assert!(sel(Requirement::exists("spot")).is_empty());
        assert!(sel(Requirement::is_in("spot", ["yes"])).is_empty());
        assert_eq!(sel(Requirement::does_not_exist("spot")), all);
        assert_eq!(sel(Requirement::not_in("spot", ["yes"])), all);
        assert!(select(&inv, Role::new("w", 1).selector("spot", "yes")).is_empty());
        assert_eq!(select(&inv, Role::new("w", 1)), all);
    }

    #[test]
    fn selector_and_expressions_all_must_hold() {
        let inv = labelled();
        let r = Role::new("w", 1).selector("block", "b1");
        assert_eq!(select(&inv, r.clone()), ["n1", "n3"]);
        assert_eq!(
            select(
                &inv,
                r.clone().requirement(Requirement::does_not_exist("zone"))
            ),
            ["n3"]
        );
        assert!(select(&inv, r.clone().selector("product", "H100")).is_empty());
        let r = r
            .requirement(Requirement::exists("zone"))
            .requirement(Requirement::not_in("product", ["H100"]));
        assert_eq!(select(&inv, r.clone()), ["n1"]);
        assert!(select(&inv, r.requirement(Requirement::is_in("zone", ["z2"]))).is_empty());
    }

    /// One node per taint (plus one with two taints and one with none).
    fn tainted() -> Inventory {
        let t = |k: &str, v: &str, e| Taint::new(k, v, e);
        let n = |name: &str, taints: Vec<Taint>| {
            taints
                .into_iter()
                .fold(NodeSpec::new(name).capacity("gpu", 1), NodeSpec::taint)
        };
        use TaintEffect::*;
        Inventory::builder(Topology::flat())
            .node(n("t1", vec![t("dedicated", "training", NoSchedule)]))
            .node(n("t2", vec![t("dedicated", "training", NoExecute)]))
            .node(n("t3", vec![t("dedicated", "training", PreferNoSchedule)]))
            .node(n("t4", vec![t("dedicated", "serving", NoSchedule)]))
            .node(n("t5", vec![t("maintenance", "", NoSchedule)]))
            .node(n(
                "t6",
                vec![
                    t("dedicated", "training", NoSchedule),
                    t("gpu-reset", "pending", NoExecute),
                ],
            ))
            .node(n("t7", vec![]))
            .build()
            .unwrap()
    }

    #[test]
    fn tolerations_decide_which_taints_exclude() {
        let inv = tainted();
        let excluded = |tols: &[Toleration]| {
            let role = tols
                .iter()
                .cloned()
                .fold(Role::new("w", 1), Role::toleration);
            names(&inv, &untolerated_set(&inv, &role))
        };
        // PreferNoSchedule never excludes; NoSchedule and NoExecute do.
        assert_eq!(excluded(&[]), ["t1", "t2", "t4", "t5", "t6"]);
        // Equal: key and value, any effect; a node needs all its taints tolerated.
        assert_eq!(
            excluded(&[Toleration::equal("dedicated", "training")]),
            ["t4", "t5", "t6"]
        );
        // Restricted to one effect, the same taint with the other effect excludes.
        let only_no_schedule =
            Toleration::equal("dedicated", "training").effect(TaintEffect::NoSchedule);
        assert_eq!(excluded(&[only_no_schedule]), ["t2", "t4", "t5", "t6"]);
        let only_no_execute =
            Toleration::equal("dedicated", "training").effect(TaintEffect::NoExecute);
        assert_eq!(excluded(&[only_no_execute]), ["t1", "t4", "t5", "t6"]);
        // Equal with an empty value matches an empty-valued taint only.
        assert_eq!(
            excluded(&[Toleration::equal("maintenance", "")]),
            ["t1", "t2", "t4", "t6"]
        );
        assert_eq!(
            excluded(&[Toleration::equal("maintenance", "x")]),
            ["t1", "t2", "t4", "t5", "t6"]
        );
        // Exists: any value of the key.
        assert_eq!(excluded(&[Toleration::exists("dedicated")]), ["t5", "t6"]);
        assert_eq!(
            excluded(&[
                Toleration::exists("dedicated"),
                Toleration::exists("gpu-reset")
            ]),
            ["t5"]
        );
        // Exists with an empty key: every taint, or every taint of one effect.
        assert!(excluded(&[Toleration::exists("")]).is_empty());
        assert_eq!(
            excluded(&[Toleration::exists("").effect(TaintEffect::NoSchedule)]),
            ["t2", "t6"]
        );
        assert_eq!(
            excluded(&[Toleration::exists("").effect(TaintEffect::NoExecute)]),
            ["t1", "t4", "t5", "t6"]
        );
    }

    /// The same rules end to end: placement and the diagnosis's taint count.
    #[test]
    fn tolerations_in_placement() {
        let inv = tainted();
        let gang = |tol: Option<Toleration>| {
            let mut w = Role::new("w", 7).request("gpu", 1);
            if let Some(t) = tol {
                w = w.toleration(t);
            }
            Gang::new("g").role(w)
        };
        let d = inv
            .place(&gang(None))
            .unwrap()
            .diagnosis()
            .cloned()
            .unwrap();
        assert_eq!(
            (d.roles[0].excluded.taint, d.roles[0].fitting_nodes),
            (5, 2)
        );
        let p = inv.place(&gang(Some(Toleration::exists("")))).unwrap();
        assert_eq!(p.placement().unwrap().member_count(), 7);
        let d = inv
            .place(&gang(Some(Toleration::exists("dedicated"))))
            .unwrap()
            .diagnosis()
            .cloned()
            .unwrap();
        assert_eq!(d.roles[0].excluded.taint, 2); // t5 and t6
        assert_eq!(d.best.unwrap().fits[0].fits, 5);
    }
}
