//! Identifiers handed out by the inventory.

use std::fmt;

/// Identifies a live reservation. Ids are never reused within an inventory.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, ReservationId, Role, Topology};
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 8).request("nvidia.com/gpu", 1));
/// let first = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// assert_eq!((first, first.to_string()), (ReservationId(0), "#0".to_owned()));
/// inv.release(first)?;
/// let second = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// assert_eq!(second, ReservationId(1)); // not reused
/// assert!(inv.release(first).is_err());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct ReservationId(pub u64);

impl fmt::Display for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
