//! Identifiers handed out by the inventory.
//!
//! A [`ReservationId`] carries the [`InventoryId`] of the inventory that made it, so an
//! id used on another inventory is an error ([`Error::ForeignReservation`]), never a
//! lookup of that inventory's reservation with the same number.
//!
//! [`Error::ForeignReservation`]: crate::Error::ForeignReservation

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// Identifies an inventory among those alive in this process: what a [`ReservationId`]
/// carries so that it is only valid in the inventory that made it (and in copies made
/// after it).
///
/// Ids count up from 1 in the order inventories first need one (their first
/// reservation, or [`Inventory::id`](crate::Inventory::id)); a clone, and an inventory
/// read back from a document, gets a new one. This counter is the only process-wide
/// state in the crate: it makes ids distinct, and affects no placement. It has 24 bits
/// and wraps after 16,777,215 inventories (skipping 0, which no inventory has).
///
/// ```
/// use gang_core::{Inventory, NodeSpec, Topology};
/// let a = Inventory::builder(Topology::flat()).node(NodeSpec::new("n1")).build()?;
/// let b = a.clone();
/// assert_ne!(a.id(), b.id());
/// assert_eq!(a.id(), a.id()); // stable
/// assert!(a.id().get() > 0 && a.id().to_string().starts_with("inventory "));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct InventoryId(u32);

/// The last inventory id handed out (see [`InventoryId`]).
static LAST_INVENTORY: AtomicU32 = AtomicU32::new(0);

impl InventoryId {
    /// The largest id; the next one after it is 1.
    const MAX: u32 = (1 << (64 - ReservationId::SERIAL_BITS)) - 1;

    /// A new id, distinct from every other id alive unless 2^24 − 1 were handed out
    /// since.
    pub(crate) fn fresh() -> InventoryId {
        let n = LAST_INVENTORY.fetch_add(1, Ordering::Relaxed);
        InventoryId(n % Self::MAX + 1)
    }

    /// The id as a number (1 to 16,777,215; 0 only in ids no inventory made). See
    /// [`InventoryId`].
    pub fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for InventoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inventory {}", self.0)
    }
}

/// Identifies a reservation: the inventory that made it and a serial number that is
/// never reused within that inventory.
///
/// The id is one `u64` (as the C ABI and Go carry it): the inventory id in the top 24
/// bits, the serial in the low 40. Treat it as opaque; [`ReservationId::inventory`] and
/// [`ReservationId::serial`] take it apart. It displays as `#serial`.
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, ReservationId, Role, Topology};
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 8).request("nvidia.com/gpu", 1));
/// let first = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// assert_eq!((first.inventory(), first.serial(), first.to_string()), (inv.id(), 0, "#0".into()));
/// assert_eq!(ReservationId::new(inv.id(), 0), first);
/// inv.release(first)?;
/// let second = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// assert_eq!(second.serial(), 1); // not reused
/// assert!(inv.release(first).is_err());
///
/// // Another inventory's reservation #1 is not this one's.
/// let mut other = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let err = other.release(second).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnknownReservation);
/// assert!(err.to_string().contains(&inv.id().to_string()), "{err}");
/// assert!(err.to_string().contains(&other.id().to_string()), "{err}");
/// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().millis(), 0); // still held
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct ReservationId(pub u64);

impl ReservationId {
    /// Bits of the serial number (the low bits of the id).
    pub const SERIAL_BITS: u32 = 40;

    const SERIAL_MASK: u64 = (1 << Self::SERIAL_BITS) - 1;

    /// The id of reservation `serial` of `inventory` (the serial is taken modulo
    /// 2^40). See [`ReservationId`].
    pub fn new(inventory: InventoryId, serial: u64) -> ReservationId {
        ReservationId((u64::from(inventory.0) << Self::SERIAL_BITS) | (serial & Self::SERIAL_MASK))
    }

    /// The inventory that made the reservation. See [`ReservationId`].
    pub fn inventory(self) -> InventoryId {
        InventoryId((self.0 >> Self::SERIAL_BITS) as u32)
    }

    /// The reservation's serial number in its inventory (0, 1, 2… in the order they
    /// were made). See [`ReservationId`].
    pub fn serial(self) -> u64 {
        self.0 & Self::SERIAL_MASK
    }
}

impl fmt::Display for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.serial())
    }
}

impl fmt::Debug for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ReservationId(#{} of {})",
            self.serial(),
            self.inventory()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_take_apart() {
        let inv = InventoryId::fresh();
        let id = ReservationId::new(inv, 41);
        assert_eq!((id.inventory(), id.serial()), (inv, 41));
        assert_eq!(
            format!("{id} {id:?}"),
            format!("#41 ReservationId(#41 of {inv})")
        );
        let top = ReservationId::new(InventoryId(InventoryId::MAX), u64::MAX);
        assert_eq!(top.0, u64::MAX);
        assert_eq!(top.inventory().get(), InventoryId::MAX);
        // A bare number is an id of no inventory.
        assert_eq!(ReservationId(7).inventory().get(), 0);
        assert_ne!(InventoryId::fresh(), inv);
    }
}
