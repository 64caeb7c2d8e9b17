//! The lifecycle built on the placement question: reserving and releasing placements
//! ([`Inventory::reserve`](crate::Inventory::reserve), [`Inventory::release`](crate::Inventory::release)),
//! inventory changes and what they cost reservations ([`Lost`], [`Overcommit`]),
//! replacing lost members inside their domain ([`Replacement`]), spreading replicas
//! ([`Spread`]) and admitting queues ([`AdmitMode`], [`Admission`]).

pub(crate) mod admit;
pub(crate) mod replace;
pub(crate) mod reserve;
pub(crate) mod spread;

pub use crate::inventory::changes::Overcommit;
pub use crate::inventory::ledger::{Lost, ReservationSnapshot};
pub use crate::model::error::Conflict;
pub use admit::{Admission, AdmitMode};
pub use replace::{Pending, PendingDomain, Replacement};
pub use spread::{Spread, SpreadOutcome};
