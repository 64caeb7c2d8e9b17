//! Node descriptions, taints and tolerations (Kubernetes semantics).

use indexmap::IndexMap;

use crate::quantity::Amount;

/// A node as the platform describes it: name, labels, capacity, externally used amounts,
/// taints and whether it is schedulable. Validated when the inventory is built.
///
/// ```
/// use gang_core::{NodeSpec, Taint};
/// let n = NodeSpec::new("a1")
///     .label("topology.example.com/rack", "a")
///     .capacity("nvidia.com/gpu", 8)
///     .capacity("memory", "1Ti")
///     .used("nvidia.com/gpu", 6)
///     .taint(Taint::new("dedicated", "training", gang_core::TaintEffect::NoSchedule));
/// assert_eq!(n.name, "a1");
/// assert!(n.schedulable);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct NodeSpec {
    /// Unique node name.
    pub name: String,
    /// Node labels (topology levels are labels too).
    #[cfg_attr(feature = "serde", serde(default))]
    pub labels: IndexMap<String, String>,
    /// Allocatable capacity per resource.
    #[cfg_attr(feature = "serde", serde(default))]
    pub capacity: IndexMap<String, Amount>,
    /// Amounts used by workloads the library did not place (other pods).
    #[cfg_attr(feature = "serde", serde(default))]
    pub used: IndexMap<String, Amount>,
    /// Taints.
    #[cfg_attr(feature = "serde", serde(default))]
    pub taints: Vec<Taint>,
    /// `false` when cordoned.
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub schedulable: bool,
}

#[cfg(feature = "serde")]
fn yes() -> bool {
    true
}

impl NodeSpec {
    /// A schedulable node with no labels, capacity or taints.
    pub fn new(name: impl Into<String>) -> Self {
        NodeSpec {
            name: name.into(),
            labels: IndexMap::new(),
            capacity: IndexMap::new(),
            used: IndexMap::new(),
            taints: Vec::new(),
            schedulable: true,
        }
    }

    /// Sets a label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the allocatable capacity of a resource.
    pub fn capacity(mut self, resource: impl Into<String>, amount: impl Into<Amount>) -> Self {
        self.capacity.insert(resource.into(), amount.into());
        self
    }

    /// Sets the amount of a resource used outside the library.
    pub fn used(mut self, resource: impl Into<String>, amount: impl Into<Amount>) -> Self {
        self.used.insert(resource.into(), amount.into());
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, taint: Taint) -> Self {
        self.taints.push(taint);
        self
    }

    /// Marks the node unschedulable (cordoned).
    pub fn cordoned(mut self) -> Self {
        self.schedulable = false;
        self
    }
}

/// Taint effect. `PreferNoSchedule` is a soft preference and never excludes a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TaintEffect {
    /// Members that do not tolerate it are not placed on the node.
    NoSchedule,
    /// Soft: ignored by placement.
    PreferNoSchedule,
    /// Like `NoSchedule` for placement.
    NoExecute,
}

impl TaintEffect {
    /// Whether an untolerated taint of this effect excludes a node.
    pub fn excludes(self) -> bool {
        !matches!(self, TaintEffect::PreferNoSchedule)
    }
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value (may be empty).
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// Effect.
    pub effect: TaintEffect,
}

impl Taint {
    /// A taint.
    pub fn new(key: impl Into<String>, value: impl Into<String>, effect: TaintEffect) -> Self {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }
}

/// Toleration operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TolerationOperator {
    /// Key and value must match.
    #[default]
    Equal,
    /// Key must match (any value); an empty key with `Exists` tolerates every taint.
    Exists,
}

/// A toleration, with Kubernetes matching rules: an empty key with `Exists` matches every
/// key; `Equal` compares values; an absent effect matches every effect.
///
/// ```
/// use gang_core::{Taint, TaintEffect, Toleration};
/// let t = Taint::new("dedicated", "training", TaintEffect::NoSchedule);
/// assert!(Toleration::equal("dedicated", "training").tolerates(&t));
/// assert!(!Toleration::equal("dedicated", "serving").tolerates(&t));
/// assert!(Toleration::exists("dedicated").tolerates(&t));
/// assert!(!Toleration::exists("dedicated").effect(TaintEffect::NoExecute).tolerates(&t));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Toleration {
    /// Taint key; empty with `Exists` means all keys.
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: String,
    /// Operator.
    #[cfg_attr(feature = "serde", serde(default))]
    pub operator: TolerationOperator,
    /// Value for `Equal`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub value: String,
    /// Effect to match; `None` matches all effects.
    #[cfg_attr(feature = "serde", serde(default))]
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    /// Tolerates taints with this key and value.
    pub fn equal(key: impl Into<String>, value: impl Into<String>) -> Self {
        Toleration {
            key: key.into(),
            operator: TolerationOperator::Equal,
            value: value.into(),
            effect: None,
        }
    }

    /// Tolerates taints with this key, whatever the value (empty key: every taint).
    pub fn exists(key: impl Into<String>) -> Self {
        Toleration {
            key: key.into(),
            operator: TolerationOperator::Exists,
            value: String::new(),
            effect: None,
        }
    }

    /// Restricts the toleration to one effect.
    pub fn effect(mut self, effect: TaintEffect) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Whether this toleration tolerates `taint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(e) = self.effect {
            if e != taint.effect {
                return false;
            }
        }
        match self.operator {
            TolerationOperator::Exists => self.key.is_empty() || self.key == taint.key,
            TolerationOperator::Equal => self.key == taint.key && self.value == taint.value,
        }
    }
}
