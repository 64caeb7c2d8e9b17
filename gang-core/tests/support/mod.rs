//! Shared test support.

pub mod ops;
pub mod oracle;
