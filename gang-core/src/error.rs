//! Invalid input: a typed error naming the field and the value.
//!
//! "Invalid" is never "does not fit": a valid request that cannot be placed now is an
//! ordinary [`Outcome`](crate::Outcome) carrying a [`Diagnosis`](crate::Diagnosis).

use std::fmt;

/// What went wrong with the input. Every variant names the offending field (a dotted
/// path such as `nodes[a1].capacity.cpu` or `gang.roles[worker].count`) and its value.
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("n1").label("rack", "a").capacity("gpu", 8))
///     .build()?;
/// let err = inv.place(&Gang::new("g").role(Role::new("w", 4)).required("block")).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidRequest);
/// assert_eq!(err.field(), "gang.topology.required");
/// assert!(err.to_string().contains("\"block\""));
/// // A valid request that is too big is not an error: it is a diagnosis.
/// let big = inv.place(&Gang::new("g").role(Role::new("w", 9).request("gpu", 1)))?;
/// assert!(big.diagnosis().is_some());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A quantity that is malformed, negative, finer than 1m, or overflows.
    #[error("invalid quantity at {field}: {value:?}: {reason}")]
    InvalidQuantity {
        /// Where the quantity was given.
        field: String,
        /// The text as given.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The cluster description is invalid (duplicate node, bad label, bad level…).
    #[error("invalid inventory at {field}: {value:?}: {reason}")]
    InvalidInventory {
        /// Where.
        field: String,
        /// The value as given.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The gang request is invalid (unknown level, bad count, bad slice…).
    #[error("invalid request at {field}: {value:?}: {reason}")]
    InvalidRequest {
        /// Where.
        field: String,
        /// The value as given.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The request's constraints can never hold together, whatever the capacity (a slice
    /// level above the required level, `max_per_node` too small for any domain…).
    #[error("contradictory request at {field}: {value:?}: {reason}")]
    Contradictory {
        /// Where.
        field: String,
        /// The value as given.
        value: String,
        /// Why the constraints cannot all hold.
        reason: String,
    },
    /// A scenario document that does not parse or does not match the format.
    #[error("invalid scenario at {field}: {reason}")]
    InvalidScenario {
        /// Where (a JSON path or line/column).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A placement could not be reserved because the inventory changed since it was
    /// computed; nothing was applied.
    #[error("conflict: {0}")]
    Conflict(crate::reserve::Conflict),
    /// No live reservation has this id (never made, or already released).
    #[error("unknown reservation {id}")]
    UnknownReservation {
        /// The id as given.
        id: crate::reserve::ReservationId,
    },
    /// No node has this name.
    #[error("unknown node {name:?}")]
    UnknownNode {
        /// The name as given.
        name: String,
    },
}

/// The stable category of an [`Error`]; bindings map these one to one (Python exception
/// classes, C result codes, Go error values). Values are never renumbered.
///
/// ```
/// use gang_core::{ErrorKind, Quantity};
/// let err = Quantity::parse("12 GB").unwrap_err();
/// let kind = err.kind();
/// assert_eq!(kind, ErrorKind::InvalidQuantity);
/// assert_eq!((kind.as_str(), kind.code()), ("invalid_quantity", 1));
/// assert_eq!(kind.to_string(), "invalid_quantity");
/// assert_eq!(ErrorKind::UnknownNode.code(), 8);
/// assert!(Quantity::parse("12Gi").is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
#[repr(u32)]
pub enum ErrorKind {
    /// See [`Error::InvalidQuantity`].
    InvalidQuantity = 1,
    /// See [`Error::InvalidInventory`].
    InvalidInventory = 2,
    /// See [`Error::InvalidRequest`].
    InvalidRequest = 3,
    /// See [`Error::Contradictory`].
    Contradictory = 4,
    /// See [`Error::InvalidScenario`].
    InvalidScenario = 5,
    /// See [`Error::Conflict`].
    Conflict = 6,
    /// See [`Error::UnknownReservation`].
    UnknownReservation = 7,
    /// See [`Error::UnknownNode`].
    UnknownNode = 8,
}

impl ErrorKind {
    /// A stable snake_case name (`"invalid_request"`), used in JSON and by bindings.
    /// See [`ErrorKind`].
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidQuantity => "invalid_quantity",
            ErrorKind::InvalidInventory => "invalid_inventory",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Contradictory => "contradictory",
            ErrorKind::InvalidScenario => "invalid_scenario",
            ErrorKind::Conflict => "conflict",
            ErrorKind::UnknownReservation => "unknown_reservation",
            ErrorKind::UnknownNode => "unknown_node",
        }
    }

    /// The stable numeric code (as used by the C ABI). See [`ErrorKind`].
    pub const fn code(self) -> u32 {
        self as u32
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The stable category of this error. See [`Error`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidQuantity { .. } => ErrorKind::InvalidQuantity,
            Error::InvalidInventory { .. } => ErrorKind::InvalidInventory,
            Error::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            Error::Contradictory { .. } => ErrorKind::Contradictory,
            Error::InvalidScenario { .. } => ErrorKind::InvalidScenario,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::UnknownReservation { .. } => ErrorKind::UnknownReservation,
            Error::UnknownNode { .. } => ErrorKind::UnknownNode,
        }
    }

    /// The field the error is about (a dotted path such as `nodes[a1].capacity.cpu`;
    /// `placement`, `reservation` or `node` for lifecycle errors).
    ///
    /// ```
    /// use gang_core::{ErrorKind, Inventory, NodeSpec, Topology};
    /// let err = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").capacity("cpu", "lots"))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidQuantity);
    /// assert_eq!(err.field(), "nodes[a1].capacity.cpu");
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").capacity("cpu", "96"))
    ///     .build()?;
    /// let err = inv.cordon("zz").unwrap_err();
    /// assert_eq!((err.kind(), err.field()), (ErrorKind::UnknownNode, "node"));
    /// assert!(inv.cordon("a1").is_ok());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn field(&self) -> &str {
        match self {
            Error::InvalidQuantity { field, .. }
            | Error::InvalidInventory { field, .. }
            | Error::InvalidRequest { field, .. }
            | Error::Contradictory { field, .. }
            | Error::InvalidScenario { field, .. } => field,
            Error::Conflict(_) => "placement",
            Error::UnknownReservation { .. } => "reservation",
            Error::UnknownNode { .. } => "node",
        }
    }

    pub(crate) fn invalid_quantity(field: &str, value: &str, reason: impl Into<String>) -> Self {
        Error::InvalidQuantity {
            field: field.to_owned(),
            value: value.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn inventory(
        field: impl Into<String>,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidInventory {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn request(
        field: impl Into<String>,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidRequest {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn contradictory(
        field: impl Into<String>,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        Error::Contradictory {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn scenario(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidScenario {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl From<crate::reserve::Conflict> for Error {
    fn from(c: crate::reserve::Conflict) -> Self {
        Error::Conflict(c)
    }
}
