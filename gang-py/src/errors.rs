//! The exception hierarchy and the one place core errors become Python exceptions.
//!
//! ```text
//! GangError
//! ├── InvalidQuantity        core ErrorKind::InvalidQuantity   (kind "invalid_quantity")
//! ├── InvalidInventory       core ErrorKind::InvalidInventory  (kind "invalid_inventory")
//! ├── InvalidRequest         core ErrorKind::InvalidRequest    (kind "invalid_request")
//! ├── Contradictory   core ErrorKind::Contradictory     (kind "contradictory")
//! ├── InvalidScenario        core ErrorKind::InvalidScenario   (kind "invalid_scenario")
//! ├── Conflict               core ErrorKind::Conflict          (kind "conflict")
//! ├── UnknownReservation     core ErrorKind::UnknownReservation (kind "unknown_reservation")
//! ├── UnknownNode            core ErrorKind::UnknownNode       (kind "unknown_node")
//! ├── NotPlaced              valid, but no placement: carries `.diagnosis`
//! │   ├── Unschedulable      Outcome::Unschedulable: does not fit now
//! │   └── Undecided          Outcome::Undecided: the search budget ran out
//! ├── Pending                Inventory.replace: the binding domain has no room now
//! └── InternalError          a Rust panic caught at the boundary (a bug)
//! ```

use std::panic::{catch_unwind, AssertUnwindSafe};

use gang_core::{Error, ErrorKind};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    gang,
    GangError,
    PyException,
    "Root of every exception raised by gang.\n\nAttributes (for invalid input): `kind` (stable \
     snake_case name such as \"invalid_request\"), `code` (stable number, as in the C ABI), \
     `field` (dotted path of the offending field), `value` (the value as given, or None) and \
     `reason`."
);
create_exception!(
    gang,
    InvalidQuantity,
    GangError,
    "A quantity that is malformed, negative, finer than 1m, or overflows (kind \"invalid_quantity\")."
);
create_exception!(
    gang,
    InvalidInventory,
    GangError,
    "The cluster description is invalid: duplicate node, bad label, bad level... (kind \"invalid_inventory\")."
);
create_exception!(
    gang,
    InvalidRequest,
    GangError,
    "The gang request is invalid: unknown level, bad count, bad slice... (kind \"invalid_request\")."
);
create_exception!(
    gang,
    Contradictory,
    GangError,
    "The request's constraints can never hold together, whatever the capacity (kind \"contradictory\")."
);
create_exception!(
    gang,
    InvalidScenario,
    GangError,
    "A document (scenario, cluster or gang, as JSON or dicts) that does not match the format (kind \"invalid_scenario\")."
);
create_exception!(
    gang,
    Conflict,
    GangError,
    "A placement could not be reserved because the inventory changed since it was computed; nothing was applied (kind \"conflict\")."
);
create_exception!(
    gang,
    UnknownReservation,
    GangError,
    "No live reservation has this id: never made, or already released (kind \"unknown_reservation\")."
);
create_exception!(
    gang,
    UnknownNode,
    GangError,
    "No node has this name (kind \"unknown_node\")."
);
create_exception!(
    gang,
    NotPlaced,
    GangError,
    "The request is valid but was not placed; `diagnosis` says why. See Unschedulable and Undecided."
);
create_exception!(
    gang,
    Unschedulable,
    NotPlaced,
    "The gang does not fit now. `diagnosis` is the Diagnosis; str() is its paragraph."
);
create_exception!(
    gang,
    Undecided,
    NotPlaced,
    "The exact multi-role search ran out of budget before deciding: a placement may exist. \
     `diagnosis` is the Diagnosis (its search_exhausted is True)."
);
create_exception!(
    gang,
    Pending,
    GangError,
    "Inventory.replace: the domain that binds the gang has no room for its lost members \
     now; nothing was applied. str() says which domain binds it and what it lacks; \
     attributes: `reservation` (id), `gang`, `domains` (list of dicts), `search_exhausted`."
);
create_exception!(
    gang,
    InternalError,
    GangError,
    "A bug in gang: a Rust panic caught at the Python boundary. Please report it."
);

/// Converts a core error into its Python exception, one class per [`ErrorKind`].
///
/// This `match` is the only place where core error kinds meet Python classes.
pub fn to_py_err(err: Error) -> PyErr {
    let kind = err.kind();
    let message = err.to_string();
    let py_err = match kind {
        ErrorKind::InvalidQuantity => InvalidQuantity::new_err(message),
        ErrorKind::InvalidInventory => InvalidInventory::new_err(message),
        ErrorKind::InvalidRequest => InvalidRequest::new_err(message),
        ErrorKind::Contradictory => Contradictory::new_err(message),
        ErrorKind::InvalidScenario => InvalidScenario::new_err(message),
        ErrorKind::Conflict => Conflict::new_err(message),
        ErrorKind::UnknownReservation => UnknownReservation::new_err(message),
        ErrorKind::UnknownNode => UnknownNode::new_err(message),
        // ErrorKind is #[non_exhaustive]: a kind added to the core later is still a
        // GangError (with its `kind` attribute set) until it gets a class of its own.
        _ => GangError::new_err(message),
    };
    let (value, reason) = match &err {
        Error::InvalidQuantity { value, reason, .. }
        | Error::InvalidInventory { value, reason, .. }
        | Error::InvalidRequest { value, reason, .. }
        | Error::Contradictory { value, reason, .. } => (Some(value.clone()), reason.clone()),
        Error::InvalidScenario { reason, .. } => (None, reason.clone()),
        Error::Conflict(c) => (None, c.to_string()),
        Error::UnknownReservation { id } => (Some(id.to_string()), "unknown reservation".into()),
        Error::UnknownNode { name } => (Some(name.clone()), "unknown node".into()),
        _ => (None, String::new()),
    };
    Python::attach(|py| {
        let v = py_err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice; if it
        // did, the exception is still of the right class with the right message.
        let _ = v.setattr("kind", kind.as_str());
        let _ = v.setattr("code", kind.code());
        let _ = v.setattr("field", err.field());
        let _ = v.setattr("value", value);
        let _ = v.setattr("reason", reason);
    });
    py_err
}

/// An error at the edge (a Python value that cannot become a core value), of the kind the
/// core would have used, naming the field.
pub fn edge_error(kind: ErrorKind, field: &str, value: &str, reason: &str) -> PyErr {
    let field = field.to_owned();
    let value = value.to_owned();
    let reason = reason.to_owned();
    to_py_err(match kind {
        ErrorKind::InvalidQuantity => Error::InvalidQuantity {
            field,
            value,
            reason,
        },
        ErrorKind::InvalidInventory => Error::InvalidInventory {
            field,
            value,
            reason,
        },
        ErrorKind::Contradictory => Error::Contradictory {
            field,
            value,
            reason,
        },
        ErrorKind::InvalidScenario => Error::InvalidScenario { field, reason },
        _ => Error::InvalidRequest {
            field,
            value,
            reason,
        },
    })
}

/// Runs `f`, turning a Rust panic into [`InternalError`] instead of letting it cross into
/// Python (where PyO3 would raise `PanicException`, which is not a `GangError`).
pub fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        InternalError::new_err(format!("internal error in gang (please report): {what}"))
    })
}

/// [`guard`] for a core call returning `Result`: panics and core errors both become
/// `GangError`s.
pub fn core<T>(f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
    guard(f)?.map_err(to_py_err)
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GangError", py.get_type::<GangError>())?;
    m.add("InvalidQuantity", py.get_type::<InvalidQuantity>())?;
    m.add("InvalidInventory", py.get_type::<InvalidInventory>())?;
    m.add("InvalidRequest", py.get_type::<InvalidRequest>())?;
    m.add("Contradictory", py.get_type::<Contradictory>())?;
    m.add("InvalidScenario", py.get_type::<InvalidScenario>())?;
    m.add("Conflict", py.get_type::<Conflict>())?;
    m.add("UnknownReservation", py.get_type::<UnknownReservation>())?;
    m.add("UnknownNode", py.get_type::<UnknownNode>())?;
    m.add("NotPlaced", py.get_type::<NotPlaced>())?;
    m.add("Unschedulable", py.get_type::<Unschedulable>())?;
    m.add("Undecided", py.get_type::<Undecided>())?;
    m.add("Pending", py.get_type::<Pending>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
