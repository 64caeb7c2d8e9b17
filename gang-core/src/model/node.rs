//! Node descriptions, taints and tolerations (Kubernetes semantics).

use indexmap::IndexMap;

use crate::model::QuantitySpec;

/// A node as the platform describes it: name, labels, capacity, externally used amounts,
/// taints and whether it is schedulable. Validated when the inventory is built.
///
/// ```
/// use gang_core::{Inventory, NodeSpec, Taint, TaintEffect, Topology};
/// const RACK: &str = "topology.example.com/rack";
/// let n = NodeSpec::new("a1")
///     .label(RACK, "a")
///     .capacity("nvidia.com/gpu", 8)
///     .capacity("memory", "1Ti")
///     .used("nvidia.com/gpu", 6)
///     .taint(Taint::new("dedicated", "training", TaintEffect::NoSchedule));
/// assert_eq!((n.get_name(), n.get_label(RACK)), ("a1", Some("a")));
/// assert_eq!(n.get_labels().collect::<Vec<_>>(), [(RACK, "a")]);
/// let gpus = n.get_capacity().find(|(r, _)| *r == "nvidia.com/gpu").map(|(_, q)| q.clone());
/// assert_eq!(gpus, Some(8.into()));
/// assert_eq!(n.get_used().count(), 1);
/// assert_eq!(n.get_taints().len(), 1);
/// assert!(n.is_schedulable() && !n.clone().cordoned().is_schedulable());
///
/// // Validated when the inventory is built: free is capacity minus used.
/// let inv = Inventory::builder(Topology::new([RACK])?).node(n).build()?;
/// assert_eq!(inv.free("a1", "nvidia.com/gpu").unwrap().to_string(), "2");
/// let bad = NodeSpec::new("a2").label(RACK, "rack a"); // spaces are not allowed
/// let err = Inventory::builder(Topology::new([RACK])?).node(bad).build().unwrap_err();
/// assert_eq!(err.field(), "nodes[a2].labels.topology.example.com/rack");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct NodeSpec {
    /// Unique node name.
    pub(crate) name: String,
    /// Node labels (topology levels are labels too).
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) labels: IndexMap<String, String>,
    /// Allocatable capacity per resource.
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) capacity: IndexMap<String, QuantitySpec>,
    /// Amounts used by workloads the library did not place (other pods).
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) used: IndexMap<String, QuantitySpec>,
    /// Taints.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) taints: Vec<Taint>,
    /// `false` when cordoned.
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub(crate) schedulable: bool,
}

#[cfg(feature = "serde")]
fn yes() -> bool {
    true
}

impl NodeSpec {
    /// A schedulable node with no labels, capacity or taints. See [`NodeSpec`].
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

    /// Sets a label (topology levels are labels too). See [`NodeSpec`].
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.set_label(key, value);
        self
    }

    /// Sets the allocatable capacity of a resource. See [`NodeSpec`].
    pub fn capacity(
        mut self,
        resource: impl Into<String>,
        amount: impl Into<QuantitySpec>,
    ) -> Self {
        self.set_capacity(resource, amount);
        self
    }

    /// Sets the amount of a resource used outside the library. See [`NodeSpec`].
    pub fn used(mut self, resource: impl Into<String>, amount: impl Into<QuantitySpec>) -> Self {
        self.set_used(resource, amount);
        self
    }

    /// Adds a taint. See [`NodeSpec`].
    pub fn taint(mut self, taint: Taint) -> Self {
        self.add_taint(taint);
        self
    }

    /// Marks the node unschedulable (cordoned). See [`NodeSpec`].
    pub fn cordoned(mut self) -> Self {
        self.set_schedulable(false);
        self
    }

    // Getters are named `get_*` because the builder methods take the bare names (as
    // `std::process::Command` and `clap::Arg` do).

    /// The node's name. See [`NodeSpec`].
    pub fn get_name(&self) -> &str {
        &self.name
    }

    /// The node's labels, in the order set. See [`NodeSpec`].
    pub fn get_labels(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of label `key`, if set. See [`NodeSpec`].
    pub fn get_label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }

    /// Allocatable capacity per resource, as given, in the order set. See [`NodeSpec`].
    pub fn get_capacity(&self) -> impl ExactSizeIterator<Item = (&str, &QuantitySpec)> + '_ {
        self.capacity.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Amounts used outside the library per resource, as given. See [`NodeSpec`].
    pub fn get_used(&self) -> impl ExactSizeIterator<Item = (&str, &QuantitySpec)> + '_ {
        self.used.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The node's taints. See [`NodeSpec`].
    pub fn get_taints(&self) -> &[Taint] {
        &self.taints
    }

    /// `false` when cordoned. See [`NodeSpec`].
    pub fn is_schedulable(&self) -> bool {
        self.schedulable
    }

    // In-place forms of the builder methods, for loops and for bindings that hold a
    // spec behind a handle.

    /// [`NodeSpec::label`] in place; setting a key again replaces its value.
    pub fn set_label(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// [`NodeSpec::capacity`] in place; setting a resource again replaces its amount.
    pub fn set_capacity(
        &mut self,
        resource: impl Into<String>,
        amount: impl Into<QuantitySpec>,
    ) -> &mut Self {
        self.capacity.insert(resource.into(), amount.into());
        self
    }

    /// [`NodeSpec::used`] in place; setting a resource again replaces its amount.
    pub fn set_used(
        &mut self,
        resource: impl Into<String>,
        amount: impl Into<QuantitySpec>,
    ) -> &mut Self {
        self.used.insert(resource.into(), amount.into());
        self
    }

    /// [`NodeSpec::taint`] in place.
    pub fn add_taint(&mut self, taint: Taint) -> &mut Self {
        self.taints.push(taint);
        self
    }

    /// Marks the node schedulable, or cordoned ([`NodeSpec::cordoned`]), in place.
    pub fn set_schedulable(&mut self, schedulable: bool) -> &mut Self {
        self.schedulable = schedulable;
        self
    }
}

/// Taint effect. `PreferNoSchedule` is a soft preference and never excludes a node.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Taint, TaintEffect, Topology};
/// assert!(TaintEffect::NoSchedule.excludes() && TaintEffect::NoExecute.excludes());
/// assert!(!TaintEffect::PreferNoSchedule.excludes());
///
/// let on = |effect| {
///     let node = NodeSpec::new("n1")
///         .capacity("nvidia.com/gpu", 8)
///         .taint(Taint::new("maintenance", "", effect));
///     Inventory::builder(Topology::flat()).node(node).build()
/// };
/// let gang = Gang::new("g").role(Role::new("w", 2).request("nvidia.com/gpu", 1));
/// assert!(on(TaintEffect::PreferNoSchedule)?.place(&gang)?.is_placed());
/// let d = on(TaintEffect::NoSchedule)?.place(&gang)?.diagnosis().cloned().unwrap();
/// assert_eq!(d.roles[0].excluded.taint, 1);
/// # Ok::<(), gang_core::Error>(())
/// ```
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
    /// Whether an untolerated taint of this effect excludes a node. See [`TaintEffect`].
    pub fn excludes(self) -> bool {
        !matches!(self, TaintEffect::PreferNoSchedule)
    }
}

/// A node taint: members of roles that do not tolerate it are kept off the node
/// (unless its effect is `PreferNoSchedule`).
///
/// ```
/// use gang_core::{Inventory, NodeSpec, Taint, TaintEffect, Topology};
/// let t = Taint::new("dedicated", "training", TaintEffect::NoSchedule);
/// assert_eq!((t.key.as_str(), t.value.as_str()), ("dedicated", "training"));
/// let node = |t| NodeSpec::new("n1").capacity("nvidia.com/gpu", 8).taint(t);
/// assert!(Inventory::builder(Topology::flat()).node(node(t)).build().is_ok());
/// // Keys and values follow label syntax, checked when the inventory is built.
/// let bad = Taint::new("", "training", TaintEffect::NoSchedule);
/// let err = Inventory::builder(Topology::flat()).node(node(bad)).build().unwrap_err();
/// assert_eq!(err.field(), "nodes[n1].taints[0].key");
/// ```
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
    /// A taint with this key, value (may be empty) and effect. See [`Taint`].
    pub fn new(key: impl Into<String>, value: impl Into<String>, effect: TaintEffect) -> Self {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }
}

/// Toleration operator: whether a [`Toleration`] compares values or only keys.
///
/// ```
/// use gang_core::{Taint, TaintEffect, Toleration};
/// use gang_core::request::TolerationOperator;
/// assert_eq!(TolerationOperator::default(), TolerationOperator::Equal);
/// let all = Toleration::exists(""); // empty key with Exists: every taint
/// assert_eq!(all.operator, TolerationOperator::Exists);
/// assert!(all.tolerates(&Taint::new("gpu-reset", "pending", TaintEffect::NoExecute)));
/// let equal = Toleration::equal("dedicated", "training");
/// assert_eq!(equal.operator, TolerationOperator::Equal);
/// assert!(!equal.tolerates(&Taint::new("gpu-reset", "pending", TaintEffect::NoExecute)));
/// ```
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
/// assert!(Toleration::exists("dedicated").effect(TaintEffect::NoSchedule).tolerates(&t));
/// assert!(!Toleration::exists("dedicated").effect(TaintEffect::NoExecute).tolerates(&t));
/// assert!(Toleration::exists("").tolerates(&t)); // empty key: every taint
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
    /// Tolerates taints with this key and value, of any effect. See [`Toleration`].
    pub fn equal(key: impl Into<String>, value: impl Into<String>) -> Self {
        Toleration {
            key: key.into(),
            operator: TolerationOperator::Equal,
            value: value.into(),
            effect: None,
        }
    }

    /// Tolerates taints with this key, whatever the value (empty key: every taint).
    /// See [`Toleration`].
    pub fn exists(key: impl Into<String>) -> Self {
        Toleration {
            key: key.into(),
            operator: TolerationOperator::Exists,
            value: String::new(),
            effect: None,
        }
    }

    /// Restricts the toleration to one effect. See [`Toleration`].
    pub fn effect(mut self, effect: TaintEffect) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Whether this toleration tolerates `taint`. See [`Toleration`].
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Inventory, Topology};

    #[test]
    fn node_spec_builder() {
        let n = NodeSpec::new("a1");
        assert_eq!(n.name, "a1");
        assert!(n.labels.is_empty() && n.capacity.is_empty() && n.used.is_empty());
        assert!(n.taints.is_empty());
        assert!(n.schedulable);

        let n = NodeSpec::new("a1")
            .label("rack", "a")
            .label("zone", "z1")
            .label("rack", "b") // replaces, keeps its position
            .capacity("gpu", 8)
            .capacity("gpu", 4)
            .used("gpu", 1)
            .used("gpu", 3)
            .taint(Taint::new("k", "v", TaintEffect::NoSchedule))
            .taint(Taint::new("k", "v", TaintEffect::NoExecute))
            .cordoned()
            .cordoned();
        let labels: Vec<(&str, &str)> = n
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(labels, [("rack", "b"), ("zone", "z1")]);
        assert_eq!((n.capacity.len(), n.used.len()), (1, 1));
        assert_eq!(n.capacity["gpu"], QuantitySpec::from(4));
        assert_eq!(n.used["gpu"], QuantitySpec::from(3));
        let effects: Vec<TaintEffect> = n.taints.iter().map(|t| t.effect).collect();
        assert_eq!(effects, [TaintEffect::NoSchedule, TaintEffect::NoExecute]);
        assert!(!n.schedulable);

        // The last capacity and usage count: 4 - 3 = 1 free.
        let inv = Inventory::builder(Topology::flat())
            .node(n.clone())
            .build()
            .unwrap();
        assert_eq!(inv.free("a1", "gpu").unwrap().millis(), 1000);
        // Usage above capacity leaves zero free, not an error.
        let over = Inventory::builder(Topology::flat())
            .node(NodeSpec::new("a1").capacity("gpu", 8).used("gpu", 10))
            .build()
            .unwrap();
        assert_eq!(over.free("a1", "gpu").unwrap().millis(), 0);
    }

    #[test]
    fn toleration_constructors() {
        let e = Toleration::equal("k", "v");
        assert_eq!(
            (e.key.as_str(), e.operator, e.value.as_str(), e.effect),
            ("k", TolerationOperator::Equal, "v", None)
        );
        let x = Toleration::exists("k").effect(TaintEffect::NoExecute);
        assert_eq!(
            (x.key.as_str(), x.operator, x.value.as_str(), x.effect),
            (
                "k",
                TolerationOperator::Exists,
                "",
                Some(TaintEffect::NoExecute)
            )
        );
        // The default is Equal with an empty key and value: it tolerates nothing real.
        let d = Toleration::default();
        assert_eq!((d.operator, d.effect), (TolerationOperator::Equal, None));
        assert!(!d.tolerates(&Taint::new("k", "", TaintEffect::NoSchedule)));
        let t = Taint::new("k", "", TaintEffect::PreferNoSchedule);
        assert_eq!((t.key.as_str(), t.value.as_str()), ("k", ""));
    }

    /// Every operator against every effect, keys and values that match or not.
    #[test]
    fn tolerates_truth_table() {
        use TaintEffect::*;
        let taint = |k: &str, v: &str, e| Taint::new(k, v, e);
        for effect in [NoSchedule, PreferNoSchedule, NoExecute] {
            let t = taint("k", "v", effect);
            // Equal: key and value both, any effect.
            assert!(Toleration::equal("k", "v").tolerates(&t));
            assert!(!Toleration::equal("k", "w").tolerates(&t));
            assert!(!Toleration::equal("k", "").tolerates(&t));
            assert!(!Toleration::equal("j", "v").tolerates(&t));
            // Exists: key only; an empty key is every key.
            assert!(Toleration::exists("k").tolerates(&t));
            assert!(!Toleration::exists("j").tolerates(&t));
            assert!(Toleration::exists("").tolerates(&t));
            // An effect restricts every operator, the empty-key wildcard included.
            for other in [NoSchedule, PreferNoSchedule, NoExecute] {
                let same = other == effect;
                assert_eq!(
                    Toleration::equal("k", "v").effect(other).tolerates(&t),
                    same
                );
                assert_eq!(Toleration::exists("k").effect(other).tolerates(&t), same);
                assert_eq!(Toleration::exists("").effect(other).tolerates(&t), same);
            }
        }
        // Empty values compare like any other value.
        let empty = taint("k", "", NoSchedule);
        assert!(Toleration::equal("k", "").tolerates(&empty));
        assert!(!Toleration::equal("k", "v").tolerates(&empty));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_defaults_and_names() {
        let n: NodeSpec = serde_json::from_str(r#"{"name": "a1"}"#).unwrap();
        assert_eq!(n, NodeSpec::new("a1"));
        let n: NodeSpec = serde_json::from_str(r#"{"name": "a1", "schedulable": false}"#).unwrap();
        assert_eq!(n, NodeSpec::new("a1").cordoned());
        assert!(serde_json::from_str::<NodeSpec>(r#"{"name": "a1", "cordoned": true}"#).is_err());

        let t: Taint = serde_json::from_str(r#"{"key": "k", "effect": "NoExecute"}"#).unwrap();
        assert_eq!(t, Taint::new("k", "", TaintEffect::NoExecute));
        assert!(serde_json::from_str::<Taint>(r#"{"key": "k"}"#).is_err()); // effect required
        assert!(serde_json::from_str::<Taint>(r#"{"key": "k", "effect": "noschedule"}"#).is_err());
        for (e, name) in [
            (TaintEffect::NoSchedule, "\"NoSchedule\""),
            (TaintEffect::PreferNoSchedule, "\"PreferNoSchedule\""),
            (TaintEffect::NoExecute, "\"NoExecute\""),
        ] {
            assert_eq!(serde_json::to_string(&e).unwrap(), name);
        }

        // An empty toleration object is Equal on an empty key; `{"operator": "Exists"}`
        // tolerates every taint.
        let all: Toleration = serde_json::from_str(r#"{"operator": "Exists"}"#).unwrap();
        assert_eq!(all, Toleration::exists(""));
        assert!(all.tolerates(&Taint::new("any", "thing", TaintEffect::NoExecute)));
        let eq: Toleration = serde_json::from_str(r#"{"key": "k"}"#).unwrap();
        assert_eq!(eq, Toleration::equal("k", ""));
        let one: Toleration =
            serde_json::from_str(r#"{"key": "k", "operator": "Exists", "effect": "NoSchedule"}"#)
                .unwrap();
        assert_eq!(one, Toleration::exists("k").effect(TaintEffect::NoSchedule));
    }
}
