//! What is asked for: a gang of roles, its topology constraint and its policy.

use indexmap::IndexMap;

use crate::node::Toleration;
use crate::quantity::Amount;

/// A group of members that must run together: one or more [`Role`]s, a topology
/// constraint and a policy for choosing among feasible domains.
///
/// ```
/// use gang_core::{Gang, Policy, Role};
/// let g = Gang::new("train")
///     .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
///     .role(Role::new("worker", 8).request("nvidia.com/gpu", 1))
///     .required("topology.example.com/block")
///     .preferred("topology.example.com/rack")
///     .policy(Policy::BestFit);
/// assert_eq!(g.roles.len(), 2);
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
    /// An empty, unconstrained gang.
    pub fn new(name: impl Into<String>) -> Self {
        Gang {
            name: name.into(),
            roles: Vec::new(),
            topology: GangTopology::default(),
            policy: Policy::default(),
        }
    }

    /// Adds a role.
    pub fn role(mut self, role: Role) -> Self {
        self.roles.push(role);
        self
    }

    /// Every constrained member must land in one domain of `level`.
    pub fn required(mut self, level: impl Into<String>) -> Self {
        self.topology.required = Some(level.into());
        self
    }

    /// Try one domain of `level`, walking up a level at a time if none fits.
    pub fn preferred(mut self, level: impl Into<String>) -> Self {
        self.topology.preferred = Some(level.into());
        self
    }

    /// Adds a slice level (outermost first): members in slices of `size`, each slice
    /// inside one domain of `level`.
    pub fn slice(mut self, level: impl Into<String>, size: u32) -> Self {
        self.topology.slices.push(Slice {
            level: level.into(),
            size,
        });
        self
    }

    /// Sets the policy.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }
}

/// One kind of member: how many, what each needs on one node, where it may run.
///
/// ```
/// use gang_core::{Role, Toleration};
/// let r = Role::new("worker", 8)
///     .min_count(4)
///     .request("nvidia.com/gpu", 1)
///     .request("cpu", "500m")
///     .selector("nvidia.com/gpu.product", "H200")
///     .toleration(Toleration::equal("dedicated", "training"))
///     .max_per_node(4);
/// assert_eq!(r.min_count, Some(4));
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
    /// A constrained role of `count` members with no requests.
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

    /// Elastic minimum.
    pub fn min_count(mut self, min: u32) -> Self {
        self.min_count = Some(min);
        self
    }

    /// Per-member request of `resource`.
    pub fn request(mut self, resource: impl Into<String>, amount: impl Into<Amount>) -> Self {
        self.requests.insert(resource.into(), amount.into());
        self
    }

    /// Requires label `key` = `value`.
    pub fn selector(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.node_selector.insert(key.into(), value.into());
        self
    }

    /// Adds a label requirement.
    pub fn requirement(mut self, req: Requirement) -> Self {
        self.match_expressions.push(req);
        self
    }

    /// Adds a toleration.
    pub fn toleration(mut self, t: Toleration) -> Self {
        self.tolerations.push(t);
        self
    }

    /// At most `k` members per node.
    pub fn max_per_node(mut self, k: u32) -> Self {
        self.max_per_node = Some(k);
        self
    }

    /// Not bound by the gang's topology constraint.
    pub fn unconstrained(mut self) -> Self {
        self.constrained = false;
        self
    }
}

/// Label requirement operator (Kubernetes node affinity).
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
/// use gang_core::Requirement;
/// let r = Requirement::is_in("nvidia.com/gpu.product", ["H100", "H200"]);
/// assert_eq!(r.values.len(), 2);
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
    /// `key In (values)`.
    pub fn is_in<I: IntoIterator<Item = S>, S: Into<String>>(
        key: impl Into<String>,
        values: I,
    ) -> Self {
        Self::new(key, SelectorOperator::In, values)
    }
    /// `key NotIn (values)`.
    pub fn not_in<I: IntoIterator<Item = S>, S: Into<String>>(
        key: impl Into<String>,
        values: I,
    ) -> Self {
        Self::new(key, SelectorOperator::NotIn, values)
    }
    /// `key Exists`.
    pub fn exists(key: impl Into<String>) -> Self {
        Self::new(key, SelectorOperator::Exists, Vec::<String>::new())
    }
    /// `key DoesNotExist`.
    pub fn does_not_exist(key: impl Into<String>) -> Self {
        Self::new(key, SelectorOperator::DoesNotExist, Vec::<String>::new())
    }
}

/// The gang's topology constraint. With neither level the gang is unconstrained (still
/// all-or-nothing, still packed onto few domains).
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
    /// The name used in scenario files (`best-fit`, `most-free`, `balanced`).
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::BestFit => "best-fit",
            Policy::MostFree => "most-free",
            Policy::Balanced => "balanced",
        }
    }
}
