//! Evictable units: running work the library did not reserve (pods of other
//! workloads), declared with a priority so that preemption may evict it.

use indexmap::IndexMap;

use crate::model::QuantitySpec;

/// Running work the library did not reserve — the pods of another workload, say —
/// declared on an inventory with an id, a priority and what it uses per node, so that
/// [`Inventory::preempt`](crate::Inventory::preempt) may evict it. While declared, its
/// amounts count as used on their nodes (on top of each node's `used`), exactly as a
/// reservation's do; [`Inventory::remove_evictable`](crate::Inventory::remove_evictable)
/// gives them back. A unit is evicted whole, never in part.
///
/// In a document: `{"id": "pod-a", "priority": 5, "nodes": {"n1": {"nvidia.com/gpu": 2}}}`
/// (`priority` defaults to 0).
///
/// ```
/// use gang_core::{EvictableUnit, Inventory, NodeSpec, Quantity, Topology};
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .evictable(EvictableUnit::new("batch-pod", 5).amount("n1", "nvidia.com/gpu", 6))
///     .build()?;
/// assert_eq!(inv.free("n1", "nvidia.com/gpu"), Some(Quantity::from_units(2)));
/// let unit = inv.evictable_units().next().unwrap();
/// assert_eq!((unit.get_id(), unit.get_priority()), ("batch-pod", 5));
/// inv.remove_evictable("batch-pod")?;
/// assert_eq!(inv.free("n1", "nvidia.com/gpu"), Some(Quantity::from_units(8)));
/// // Declared on a node the inventory does not have: an error.
/// let err = inv.add_evictable(EvictableUnit::new("x", 0).amount("n9", "nvidia.com/gpu", 1));
/// assert_eq!(err.unwrap_err().kind(), gang_core::ErrorKind::UnknownNode);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct EvictableUnit {
    /// Unique among the inventory's units.
    pub(crate) id: String,
    /// Priority (higher wins).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) priority: i32,
    /// Per node: amounts used, per resource.
    #[cfg_attr(
        feature = "serde",
        serde(default, deserialize_with = "crate::model::unique::deserialize")
    )]
    pub(crate) nodes: IndexMap<String, IndexMap<String, QuantitySpec>>,
}

impl EvictableUnit {
    /// A unit using nothing yet; add its amounts with [`EvictableUnit::amount`]. See
    /// [`EvictableUnit`].
    pub fn new(id: impl Into<String>, priority: i32) -> Self {
        EvictableUnit {
            id: id.into(),
            priority,
            nodes: IndexMap::new(),
        }
    }

    /// Uses `amount` of `resource` on `node` (given again, the amount is replaced). See
    /// [`EvictableUnit`].
    pub fn amount(
        mut self,
        node: impl Into<String>,
        resource: impl Into<String>,
        amount: impl Into<QuantitySpec>,
    ) -> Self {
        self.nodes
            .entry(node.into())
            .or_default()
            .insert(resource.into(), amount.into());
        self
    }

    /// The unit's id. See [`EvictableUnit`].
    pub fn get_id(&self) -> &str {
        &self.id
    }

    /// The unit's priority. See [`EvictableUnit`].
    pub fn get_priority(&self) -> i32 {
        self.priority
    }

    /// What it uses, as `(node, resource, amount as given)`. See [`EvictableUnit`].
    pub fn get_amounts(&self) -> impl Iterator<Item = (&str, &str, &QuantitySpec)> + '_ {
        self.nodes
            .iter()
            .flat_map(|(n, m)| m.iter().map(move |(r, q)| (n.as_str(), r.as_str(), q)))
    }
}
