//! Shared test support.

pub mod cases;
pub mod ops;
pub mod oracle;
