//! Invalid input: a typed error naming the field and the value.
//!
//! "Invalid" is never "does not fit": a valid request that cannot be placed now is an
//! ordinary [`Outcome`](crate::Outcome) carrying a [`Diagnosis`](crate::Diagnosis).

use std::fmt;

use super::ids::{InventoryId, ReservationId};
use super::quantity::Quantity;

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
    Conflict(Conflict),
    /// No live reservation has this id (never made, or already released).
    #[error("unknown reservation {id} of {}", .id.inventory())]
    UnknownReservation {
        /// The id as given.
        id: ReservationId,
    },
    /// The reservation id is not one this inventory holds, and it was made by another
    /// inventory (or by the one this inventory was copied from, and has been released
    /// here): a reservation belongs to the inventory that made it. Its kind is
    /// [`ErrorKind::UnknownReservation`], as for an id released already.
    #[error(
        "unknown reservation {id} of {}: {inventory} holds no such reservation \
         (a reservation id is only valid in the inventory that made it)",
        .id.inventory()
    )]
    ForeignReservation {
        /// The id as given (it names the inventory that made it).
        id: ReservationId,
        /// The inventory it was used on.
        inventory: InventoryId,
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
            Error::UnknownReservation { .. } | Error::ForeignReservation { .. } => {
                ErrorKind::UnknownReservation
            }
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
            Error::UnknownReservation { .. } | Error::ForeignReservation { .. } => "reservation",
            Error::UnknownNode { .. } => "node",
        }
    }

    /// The reserve conflict, if this is [`Error::Conflict`].
    ///
    /// ```
    /// use gang_core::lifecycle::Conflict;
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 2))
    ///     .build()?;
    /// let p = inv.place(&Gang::new("g").role(Role::new("w", 2).request("gpu", 1)))?;
    /// let p = p.placement().unwrap();
    /// inv.reserve(p)?;
    /// let err = inv.reserve(p).unwrap_err(); // nothing left for a second copy
    /// assert!(matches!(err.conflict(), Some(Conflict::Capacity { node, .. }) if node == "n1"));
    /// assert_eq!(inv.cordon("zz").unwrap_err().conflict(), None);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn conflict(&self) -> Option<&Conflict> {
        match self {
            Error::Conflict(c) => Some(c),
            _ => None,
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

impl From<Conflict> for Error {
    fn from(c: Conflict) -> Self {
        Error::Conflict(c)
    }
}

/// Why a placement could not be reserved; nothing was applied.
///
/// ```
/// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Quantity, Role, Topology};
/// use gang_core::lifecycle::Conflict;
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("n2").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 6).request("nvidia.com/gpu", 1));
/// let p = inv.place(&gang)?.placement().cloned().unwrap(); // 6 on n1
/// inv.set_used("n1", "nvidia.com/gpu", 4)?; // another scheduler was faster
/// let c = inv.reserve(&p).unwrap_err().conflict().cloned().unwrap();
/// let want = Conflict::Capacity {
///     node: "n1".into(),
///     resource: "nvidia.com/gpu".into(),
///     needed: Quantity::from_units(6),
///     free: Quantity::from_units(4),
/// };
/// assert_eq!((&c, c.node()), (&want, "n1"));
/// assert_eq!(c.to_string(), "node n1 has 4 nvidia.com/gpu free, the placement needs 6");
/// assert_eq!(gang_core::Error::from(c).kind(), ErrorKind::Conflict);
///
/// inv.set_used("n1", "nvidia.com/gpu", 0)?;
/// inv.cordon("n1")?;
/// let err = inv.reserve(&p).unwrap_err();
/// assert_eq!(err.conflict(), Some(&Conflict::Unschedulable { node: "n1".into() }));
/// inv.remove_node("n1")?;
/// let err = inv.reserve(&p).unwrap_err();
/// assert_eq!(err.conflict(), Some(&Conflict::NodeGone { node: "n1".into() }));
/// // Placed again on what is there now, it reserves.
/// assert!(inv.reserve(inv.place(&gang)?.placement().unwrap()).is_ok());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "conflict", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Conflict {
    /// A node no longer has the free capacity the placement needs.
    #[error("node {node} has {free} {resource} free, the placement needs {needed}")]
    Capacity {
        /// Node name.
        node: String,
        /// Resource name.
        resource: String,
        /// What the placement puts on the node.
        needed: Quantity,
        /// What is free there now.
        free: Quantity,
    },
    /// A node of the placement no longer exists.
    #[error("node {node} no longer exists")]
    NodeGone {
        /// Node name.
        node: String,
    },
    /// A node of the placement was cordoned.
    #[error("node {node} is cordoned")]
    Unschedulable {
        /// Node name.
        node: String,
    },
    /// A node no longer admits a role (labels changed).
    #[error("node {node} no longer admits role {role}")]
    NotEligible {
        /// Node name.
        node: String,
        /// Role name.
        role: String,
    },
    /// A node was relabelled since placing: a constrained member would leave the gang's
    /// domain, or a slice would no longer be whole.
    #[error("node {node} was relabelled: {reason}")]
    Relabelled {
        /// Node name.
        node: String,
        /// What would break, in words.
        reason: String,
    },
    /// The gang no longer compiles against the changed inventory.
    #[error("the gang is no longer valid here: {reason}")]
    Stale {
        /// The compile error, in words.
        reason: String,
    },
}

impl Conflict {
    /// The node the conflict is about (empty for [`Conflict::Stale`]). See [`Conflict`].
    pub fn node(&self) -> &str {
        match self {
            Conflict::Capacity { node, .. }
            | Conflict::NodeGone { node }
            | Conflict::Unschedulable { node }
            | Conflict::NotEligible { node, .. }
            | Conflict::Relabelled { node, .. } => node,
            Conflict::Stale { .. } => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Conflict;
    use crate::ReservationId;

    /// One error of every variant, with the kind, name, code and field each must have.
    fn every_variant() -> Vec<(Error, ErrorKind, &'static str, u32, &'static str)> {
        vec![
            (
                Error::invalid_quantity("nodes[a1].capacity.cpu", "lots", "unknown suffix"),
                ErrorKind::InvalidQuantity,
                "invalid_quantity",
                1,
                "nodes[a1].capacity.cpu",
            ),
            (
                Error::inventory("nodes[a1].labels.rack", "rack a", "spaces"),
                ErrorKind::InvalidInventory,
                "invalid_inventory",
                2,
                "nodes[a1].labels.rack",
            ),
            (
                Error::request("gang.roles[w].count", 0, "at least 1"),
                ErrorKind::InvalidRequest,
                "invalid_request",
                3,
                "gang.roles[w].count",
            ),
            (
                Error::contradictory("gang.topology.preferred", "block", "above required"),
                ErrorKind::Contradictory,
                "contradictory",
                4,
                "gang.topology.preferred",
            ),
            (
                Error::scenario("gang.roles[0].count", "expected u32"),
                ErrorKind::InvalidScenario,
                "invalid_scenario",
                5,
                "gang.roles[0].count",
            ),
            (
                Error::from(Conflict::NodeGone { node: "a1".into() }),
                ErrorKind::Conflict,
                "conflict",
                6,
                "placement",
            ),
            (
                Error::UnknownReservation {
                    id: ReservationId(42),
                },
                ErrorKind::UnknownReservation,
                "unknown_reservation",
                7,
                "reservation",
            ),
            (
                Error::UnknownNode { name: "zz".into() },
                ErrorKind::UnknownNode,
                "unknown_node",
                8,
                "node",
            ),
        ]
    }

    #[test]
    fn every_variant_has_its_kind_field_and_code() {
        let all = every_variant();
        assert_eq!(all.len(), 8);
        for (err, kind, name, code, field) in &all {
            assert_eq!(err.kind(), *kind, "{err}");
            assert_eq!(kind.as_str(), *name);
            assert_eq!(kind.to_string(), *name);
            assert_eq!(kind.code(), *code);
            assert_eq!(*kind as u32, *code);
            assert_eq!(err.field(), *field, "{err}");
        }
        // Codes 1..=8, each once, and the order of kinds is the order of codes.
        let mut kinds: Vec<ErrorKind> = all.iter().map(|x| x.1).collect();
        kinds.sort();
        let codes: Vec<u32> = kinds.iter().map(|k| k.code()).collect();
        assert_eq!(codes, (1..=8).collect::<Vec<u32>>());
    }

    /// The message names the field and the value (quoted, so an empty or odd value
    /// is visible) and the reason.
    #[test]
    fn display_names_field_value_and_reason() {
        let shown: Vec<String> = every_variant().iter().map(|x| x.0.to_string()).collect();
        assert_eq!(
            shown,
            [
                r#"invalid quantity at nodes[a1].capacity.cpu: "lots": unknown suffix"#,
                r#"invalid inventory at nodes[a1].labels.rack: "rack a": spaces"#,
                r#"invalid request at gang.roles[w].count: "0": at least 1"#,
                r#"contradictory request at gang.topology.preferred: "block": above required"#,
                "invalid scenario at gang.roles[0].count: expected u32",
                "conflict: node a1 no longer exists",
                "unknown reservation #42 of inventory 0",
                r#"unknown node "zz""#,
            ]
        );
        // Empty values and values with quotes stay unambiguous.
        let e = Error::request("gang.name", "", "must not be empty");
        assert_eq!(
            e.to_string(),
            r#"invalid request at gang.name: "": must not be empty"#
        );
        let e = Error::inventory("nodes[a\"b]", "a\"b", "bad name");
        assert_eq!(
            e.to_string(),
            r#"invalid inventory at nodes[a"b]: "a\"b": bad name"#
        );
    }

    /// The constructors keep the value as displayed and the field as given.
    #[test]
    fn constructors_keep_field_and_value() {
        match Error::request(
            String::from("gang.roles[w].min_count"),
            7u32,
            "exceeds count 4",
        ) {
            Error::InvalidRequest {
                field,
                value,
                reason,
            } => {
                assert_eq!(
                    (field.as_str(), value.as_str(), reason.as_str()),
                    ("gang.roles[w].min_count", "7", "exceeds count 4")
                );
            }
            other => panic!("{other:?}"),
        }
        let c = Conflict::Capacity {
            node: "a1".into(),
            resource: "gpu".into(),
            needed: crate::Quantity::parse("4").unwrap(),
            free: crate::Quantity::parse("2").unwrap(),
        };
        let e = Error::from(c.clone());
        assert_eq!(e, Error::Conflict(c));
        assert_eq!(
            e.to_string(),
            "conflict: node a1 has 2 gpu free, the placement needs 4"
        );
    }

    /// Errors from real calls name the field and show the value the caller gave.
    #[test]
    fn errors_from_the_api_name_field_and_value() {
        use crate::{Gang, Inventory, NodeSpec, Role, Topology};
        let e = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(NodeSpec::new("a1").label("rack", "a").used("gpu", "2x"))
            .build()
            .unwrap_err();
        assert_eq!(
            (e.kind(), e.field()),
            (ErrorKind::InvalidQuantity, "nodes[a1].used.gpu")
        );
        assert!(e.to_string().contains("nodes[a1].used.gpu: \"2x\""), "{e}");
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 2))
            .build()
            .unwrap();
        let e = inv
            .place(&Gang::new("g").role(Role::new("w", 3).min_count(4)))
            .unwrap_err();
        assert_eq!(
            (e.kind(), e.field()),
            (ErrorKind::InvalidRequest, "gang.roles[w].min_count")
        );
        assert!(e.to_string().contains(": \"4\": "), "{e}");
        let e = inv.release(ReservationId(9)).unwrap_err();
        assert_eq!(
            (e.kind(), e.field(), e.to_string()),
            (
                ErrorKind::UnknownReservation,
                "reservation",
                format!(
                    "unknown reservation #9 of inventory 0: {} holds no such reservation \
                     (a reservation id is only valid in the inventory that made it)",
                    inv.id()
                )
            )
        );
        // Released: unknown in the inventory that made it.
        let gang = Gang::new("g").role(Role::new("w", 1).request("gpu", 1));
        let id = inv
            .reserve(inv.place(&gang).unwrap().placement().unwrap())
            .unwrap();
        inv.release(id).unwrap();
        let e = inv.release(id).unwrap_err();
        assert_eq!(e, Error::UnknownReservation { id });
        assert_eq!(
            e.to_string(),
            format!("unknown reservation #0 of {}", inv.id())
        );
        let e = inv.set_used("b7", "gpu", 1).unwrap_err();
        assert_eq!(
            (e.kind(), e.field(), e.to_string().as_str()),
            (ErrorKind::UnknownNode, "node", "unknown node \"b7\"")
        );
    }
}
