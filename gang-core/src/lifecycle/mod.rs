//! The lifecycle built on the placement question: reserving and releasing placements
//! ([`Inventory::reserve`](crate::Inventory::reserve), [`Inventory::release`](crate::Inventory::release)),
//! inventory changes and what they cost reservations ([`Lost`], [`Overcommit`]),
//! replacing lost members inside their domain ([`Replacement`]), spreading replicas
//! ([`Spread`]), admitting queues ([`AdmitMode`], [`Admission`]) and preemption: the
//! running work to evict so that a gang fits ([`Inventory::preempt`](crate::Inventory::preempt),
//! [`Preemption`], [`PreemptOptions`]).
//!
//! The preemption objective, exact and lexicographic: (1) the highest victim priority
//! as low as possible; (2) the least work lost — the costs the caller gave
//! ([`PreemptOptions::cost`]), then the amounts evicted of the cost resources in order
//! (`nvidia.com/gpu` by default); (3) the fewest victims; (4) the placement objective
//! (most members, the tightest level, the fewest domains used per level, then nodes);
//! (5) the victims' ids. Victims are whole reservations of strictly lower priority
//! that are not [`PreemptionPolicy::Never`](crate::PreemptionPolicy::Never), and
//! [`EvictableUnit`](crate::EvictableUnit)s of strictly lower priority.

pub(crate) mod admit;
pub(crate) mod preempt;
pub(crate) mod replace;
pub(crate) mod reserve;
pub(crate) mod spread;

pub use crate::answer::render::{no_plan_words, preemption_words, INCOMPLETE_PLAN};
pub use crate::inventory::changes::Overcommit;
pub use crate::inventory::ledger::{Lost, ReservationSnapshot};
pub use crate::model::error::Conflict;
pub use admit::{Admission, AdmitMode};
pub use preempt::{
    Evicted, PreemptOptions, PreemptOutcome, PreemptSolver, Preempted, Preemption, Victim, VictimId,
};
pub use replace::{Pending, PendingDomain, Replacement};
pub use spread::{Spread, SpreadOutcome};
