//! Shared test support.

pub mod oracle;
