//! Members of one role on one node: how placements and reservations list their members.

/// Members of one role on one node.
///
/// ```
/// use gang_core::{Assignment, Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("n2").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = |n| Gang::new("g").role(Role::new("worker", n).request("nvidia.com/gpu", 4));
/// let p = inv.place(&gang(3))?.placement().cloned().unwrap();
/// let on = |node: &str, count| Assignment { role: "worker".into(), node: node.into(), count };
/// assert_eq!(p.assignments(), [on("n1", 2), on("n2", 1)]);
/// assert!(!inv.place(&gang(5))?.is_placed()); // 20 GPUs asked, 16 exist
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Assignment {
    /// Role name.
    pub role: String,
    /// Node name.
    pub node: String,
    /// Number of members.
    pub count: u32,
}
