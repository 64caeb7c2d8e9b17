//! What is asked for: a gang of roles, its topology constraint and its policy.

use indexmap::IndexMap;

use crate::node::Toleration;
use crate::quantity::Amount;

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
/// assert_eq!((g.name.as_str(), g.roles.len(), g.policy), ("train", 2, Policy::BestFit));
/// assert_eq!(g.topology.required.as_deref(), Some(BLOCK));
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
    pub name: String,
    /// Roles, in order.
    pub roles: Vec<Role>,
    /// Topology constraint.
    #[cfg_attr(feature = "serde", serde(default))]
    pub topology: GangTopology,
    /// How to choose among feasible domains.
    #[cfg_attr(feature = "serde", serde(default))]
    pub policy: Policy,
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
        }
    }

    /// Adds a role (roles keep their order in results). See [`Gang`].
    pub fn role(mut self, role: Role) -> Self {
        self.roles.push(role);
        self
    }

    /// Every constrained member must land in one domain of `level`. See [`Gang`].
    pub fn required(mut self, level: impl Into<String>) -> Self {
        self.topology.required = Some(level.into());
        self
    }

    /// Try one domain of `level`, walking up a level at a time if none fits (never
    /// above `required`). See [`Gang`].
    pub fn preferred(mut self, level: impl Into<String>) -> Self {
        self.topology.preferred = Some(level.into());
        self
    }

    /// Adds a slice level (outermost first): members in slices of `size`, each slice
    /// inside one domain of `level`. See [`Gang`] and [`Slice`].
    pub fn slice(mut self, level: impl Into<String>, size: u32) -> Self {
        self.topology.slices.push(Slice {
            level: level.into(),
            size,
        });
        self
    }

    /// Sets the policy for choosing among feasible domains. See [`Gang`] and [`Policy`].
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }
}

/// One kind of member: how many, what each needs on one node, where it may run.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Requirement, Role, Taint, TaintEffect, Toleration};
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
/// assert_eq!((r.count, r.min_count, r.max_per_node, r.constrained), (8, Some(4), Some(4), true));
/// assert!(!r.clone().unconstrained().constrained);
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
    pub name: String,
    /// Number of members.
    pub count: u32,
    /// Elastic: place at least this many, up to `count`, as many as fit.
    #[cfg_attr(feature = "serde", serde(default))]
    pub min_count: Option<u32>,
    /// Per-member requests; each member needs all of them on one node.
    #[cfg_attr(feature = "serde", serde(default))]
    pub requests: IndexMap<String, Amount>,
    /// Required label values (equality).
    #[cfg_attr(feature = "serde", serde(default))]
    pub node_selector: IndexMap<String, String>,
    /// Further label requirements (`In`, `NotIn`, `Exists`, `DoesNotExist`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub match_expressions: Vec<Requirement>,
    /// Tolerations.
    #[cfg_attr(feature = "serde", serde(default))]
    pub tolerations: Vec<Toleration>,
    /// At most this many members of the role on one node.
    #[cfg_attr(feature = "serde", serde(default))]
    pub max_per_node: Option<u32>,
    /// Bound by the gang's topology constraint (default). An unconstrained role may run
    /// anywhere but is still all-or-nothing with the rest.
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub constrained: bool,
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
        self.min_count = Some(min);
        self
    }

    /// Per-member request of `resource`; each member needs all its requests on one node.
    /// See [`Role`].
    pub fn request(mut self, resource: impl Into<String>, amount: impl Into<Amount>) -> Self {
        self.requests.insert(resource.into(), amount.into());
        self
    }

    /// Requires label `key` = `value` on the member's node. See [`Role`].
    pub fn selector(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.node_selector.insert(key.into(), value.into());
        self
    }

    /// Adds a label requirement. See [`Role`] and [`Requirement`].
    pub fn requirement(mut self, req: Requirement) -> Self {
        self.match_expressions.push(req);
        self
    }

    /// Adds a toleration. See [`Role`] and [`Toleration`].
    pub fn toleration(mut self, t: Toleration) -> Self {
        self.tolerations.push(t);
        self
    }

    /// At most `k` members of this role per node. See [`Role`].
    pub fn max_per_node(mut self, k: u32) -> Self {
        self.max_per_node = Some(k);
        self
    }

    /// Not bound by the gang's topology constraint (still all-or-nothing with the rest).
    /// See [`Role`].
    pub fn unconstrained(mut self) -> Self {
        self.constrained = false;
        self
    }
}

/// Label requirement operator (Kubernetes node affinity).
///
/// ```
/// use gang_core::{Requirement, SelectorOperator};
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
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Requirement, Role, Topology};
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
/// use gang_core::{ErrorKind, Gang, GangTopology, Inventory, NodeSpec, Role, Slice, Topology};
/// let g = Gang::new("g").role(Role::new("w", 4)).required("block").slice("rack", 2);
/// let want = GangTopology {
///     required: Some("block".into()),
///     preferred: None,
///     slices: vec![Slice { level: "rack".into(), size: 2 }],
/// };
/// assert_eq!(g.topology, want);
/// assert_eq!(Gang::new("g").topology, GangTopology::default()); // unconstrained
///
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .node(NodeSpec::new("a1").label("block", "b1").label("rack", "a"))
///     .build()?;
/// assert!(inv.compile(&g).is_ok());
/// let mut upside_down = g.clone();
/// upside_down.topology.preferred = Some("block".into());
/// upside_down.topology.required = Some("rack".into());
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
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Slice, Topology};
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
/// assert_eq!(gang(2).topology.slices, [Slice { level: "rack".into(), size: 2 }]);
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
