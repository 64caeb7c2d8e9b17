//! The model: what users describe and what every layer above speaks in. Quantities,
//! Kubernetes names, nodes as described, the topology, gang requests, identifiers and
//! errors. Nothing here knows about an inventory or a solver.

pub(crate) mod assignment;
pub(crate) mod error;
pub(crate) mod evictable;
pub(crate) mod ids;
pub(crate) mod names;
pub(crate) mod node;
pub(crate) mod quantity;
pub(crate) mod request;
pub(crate) mod text;
pub(crate) mod topology;
#[cfg(feature = "serde")]
pub(crate) mod unique;

pub(crate) use assignment::Assignment;
pub(crate) use error::{Conflict, Error};
pub(crate) use evictable::EvictableUnit;
pub(crate) use ids::{InventoryId, ReservationId};
pub(crate) use node::{NodeSpec, Taint, Toleration, TolerationOperator};
pub(crate) use quantity::{Quantity, QuantitySpec};
pub(crate) use request::{
    Gang, GangTopology, Policy, PreemptionPolicy, Requirement, Role, SelectorOperator, Slice,
};
pub(crate) use topology::Topology;
