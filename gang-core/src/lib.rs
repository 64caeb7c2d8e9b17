//! Exact, all-or-nothing, topology-aware placement of gangs.
//!
//! `gang-core` answers one question, fast and exactly: *can these N members, each with
//! its own resource shape, be placed all together inside one topology domain (rack,
//! block, NVLink domain…) of this cluster — and if so where, and if not, why?*
//!
//! ```
//! use gang_core::{Gang, Inventory, NodeSpec, Outcome, Role, Topology};
//!
//! // Two racks in one block; rack a has 4 free GPUs, rack b has 3.
//! let topology = Topology::new(["topology.example.com/block", "topology.example.com/rack"])?;
//! let node = |name: &str, rack: &str, used: i64| {
//!     NodeSpec::new(name)
//!         .label("topology.example.com/block", "b1")
//!         .label("topology.example.com/rack", rack)
//!         .capacity("nvidia.com/gpu", 8)
//!         .used("nvidia.com/gpu", used)
//! };
//! let inventory = Inventory::builder(topology)
//!     .node(node("a1", "a", 6))
//!     .node(node("a2", "a", 6))
//!     .node(node("b1", "b", 5))
//!     .build()?;
//!
//! // Four 1-GPU workers that must share a rack.
//! let gang = Gang::new("train")
//!     .role(Role::new("worker", 4).request("nvidia.com/gpu", 1))
//!     .required("topology.example.com/rack");
//! match inventory.place(&gang)? {
//!     Outcome::Placed(p) => {
//!         assert_eq!(p.domain_path(), "b1/a");
//!         assert_eq!(p.node_counts(), [("a1", 2), ("a2", 2)]);
//!     }
//!     other => panic!("expected a placement, got {other:?}"),
//! }
//!
//! // Five do not fit in any rack; the diagnosis says how close the best rack comes
//! // and what relaxing to the block would give.
//! let five = Gang::new("train")
//!     .role(Role::new("worker", 5).request("nvidia.com/gpu", 1))
//!     .required("topology.example.com/rack");
//! let diagnosis = inventory.place(&five)?.diagnosis().cloned().unwrap();
//! let text = diagnosis.to_string();
//! assert!(text.contains("rack b1/a fits 4 of 5 worker"), "{text}");
//! assert!(text.contains("Relaxing to block: block b1 fits all 5 now"), "{text}");
//! # Ok::<(), gang_core::Error>(())
//! ```
//!
//! Data flows one way: builder calls or a scenario document → a validated [`Inventory`]
//! → a [`CompiledGang`] → the [`Solver`] → an [`Outcome`]: a [`Placement`] or a
//! [`Diagnosis`]. Invalid input is an [`Error`], never a "does not fit".
//!
//! Guarantees (each checked by the test suite):
//! - **All or nothing**: a placement has every member of every role (or at least each
//!   role's `min_count`), or there is no placement.
//! - **Capacity**: no node gets more than its free capacity in any resource; devices
//!   never merge across nodes.
//! - **Locality**: under `required`, all constrained members share one domain of that
//!   level; each slice shares one domain of its slice level.
//! - **Exactness**: for single-role gangs a placement is found whenever one exists.
//!   Multi-role gangs are checked by relaxation bounds, packed greedily and, when that
//!   fails, searched exactly; every query's work is bounded by its [`Limits`] (default
//!   [`Solver::DEFAULT_SEARCH_BUDGET`] work units, optionally a deadline) and running
//!   out yields [`Outcome::Undecided`], never a false "does not fit". The
//!   property tests check it exact on every instance of up to 8 nodes, 3 roles and 6
//!   members. With slices the search keeps whole slices per domain but prunes less,
//!   so its budget runs out sooner.
//! - **Quality**: inside the chosen domain, members go to as few child domains as
//!   possible at each level (largest first, best fit for the last share), then to as
//!   few nodes as possible.
//! - **Determinism**: the same inventory and request give the same placement, whatever
//!   order the nodes were given in.

#![deny(missing_docs)]

// The layers, lowest first (docs/ARCHITECTURE.md; tests/layers.rs keeps them one-way).
mod answer;
mod compile;
mod inventory;
#[cfg(feature = "serde")]
mod json;
pub mod lifecycle;
mod model;
#[cfg(feature = "serde")]
pub mod scenario;
mod solve;
#[cfg(test)]
mod testkit;

// The root: what a user needs to describe a cluster and a gang, ask, and read the answer.
pub use answer::diagnosis::Diagnosis;
pub use answer::placement::{Placement, PlacementSnapshot};
pub use answer::Outcome;
pub use compile::CompiledGang;
pub use inventory::document::InventoryDocument;
pub use inventory::ledger::Reservation;
pub use inventory::{Inventory, InventoryBuilder};
pub use model::assignment::Assignment;
pub use model::error::{Error, ErrorKind};
pub use model::evictable::EvictableUnit;
pub use model::ids::{InventoryId, ReservationId};
pub use model::names::HOSTNAME_LEVEL;
pub use model::node::{NodeSpec, Taint, TaintEffect, Toleration};
pub use model::quantity::Quantity;
pub use model::request::{Gang, Policy, PreemptionPolicy, Role};
pub use model::text::cut_words;
pub use model::topology::Topology;
pub use solve::mask::NodeMask;
pub use solve::{Limits, Solver};

/// The parts of a request beyond [`Gang`] and [`Role`]: its topology constraint and
/// slices, node-selector expressions, toleration operators, and amounts as written.
pub mod request {
    pub use crate::model::node::TolerationOperator;
    pub use crate::model::quantity::QuantitySpec;
    pub use crate::model::request::{GangTopology, Requirement, SelectorOperator, Slice};
}

/// The parts of the plain-data snapshots: an [`InventoryDocument`]'s reservation
/// records, and a [`PlacementSnapshot`]'s node assignments and per-domain counts.
pub mod document {
    pub use crate::answer::placement::{DomainCounts, NodeAssignment};
    pub use crate::inventory::document::{LostRecord, ReservationRecord};
}

/// The parts of a [`Diagnosis`]: per-role reports, the best domain,
/// exclusions by reason, slices, and the relaxation that would fit.
pub mod diagnosis {
    pub use crate::answer::diagnosis::{
        DomainReport, ExclusionCause, ExclusionReason, Exclusions, FewerMembers, Relaxation,
        RoleFit, RoleReport, SearchProgress, Shortfall, SliceReport,
    };
    pub use crate::answer::explanation::{Explanation, LevelFit, LevelReport, LevelStatus};
    pub use crate::answer::render::Part;
}

/// The README's Rust examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
