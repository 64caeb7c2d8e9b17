//! The lifecycle built on the placement question: reserving and releasing placements,
//! replacing lost members inside their domain, spreading replicas, admitting queues.

pub(crate) mod admit;
pub(crate) mod replace;
pub(crate) mod reserve;
pub(crate) mod spread;
