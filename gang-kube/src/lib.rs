//! Kubernetes objects to gang: an [`Inventory`](gang_core::Inventory) and
//! [`Gang`](gang_core::Gang)s, offline.

#![deny(missing_docs)]

mod error;
mod model;
mod objects;

pub use error::{Error, ErrorKind};
pub use objects::{ObjectRef, Objects};
mod requests;

pub use requests::Resources;
