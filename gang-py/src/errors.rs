//! The exception hierarchy and the one place core errors become Python exceptions.
//!
//! ```text
//! GangError                  .kind .code .field .value .reason (None where they do not apply)
//! ├── InvalidQuantity        core ErrorKind::InvalidQuantity    (kind "invalid_quantity", 1)
//! ├── InvalidInventory       core ErrorKind::InvalidInventory   (kind "invalid_inventory", 2)
//! ├── InvalidRequest         core ErrorKind::InvalidRequest     (kind "invalid_request", 3)
//! ├── Contradictory          core ErrorKind::Contradictory      (kind "contradictory", 4)
//! ├── InvalidScenario        core ErrorKind::InvalidScenario    (kind "invalid_scenario", 5)
//! ├── Conflict               core ErrorKind::Conflict           (kind "conflict", 6)
//! ├── UnknownReservation     core ErrorKind::UnknownReservation (kind "unknown_reservation", 7)
//! ├── UnknownNode            core ErrorKind::UnknownNode        (kind "unknown_node", 8); also a KeyError
//! ├── NotPlaced              valid, but no placement: .diagnosis, .status
//! │   ├── Unschedulable      Outcome::Unschedulable: does not fit now   (kind "unschedulable")
//! │   └── Undecided          Outcome::Undecided: the search budget ran out (kind "undecided")
//! ├── Pending                Inventory.replace: the binding domain has no room now (kind "pending")
//! └── InternalError          a Rust panic caught at the boundary (kind "internal_error")
//! ```
//!
//! The classes are written in Python (below), because `UnknownNode` derives from
//! `KeyError` too and every class carries its attributes as class-level defaults; the
//! native code raises them through [`class`].

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use gang_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::BoundObject;

const CLASSES: &std::ffi::CStr = cr#"
class GangError(Exception):
    """Root of every exception raised by gang.

    Every subclass has these attributes (None where they do not apply): ``kind`` (a
    stable snake_case name such as "invalid_request", "unschedulable" or
    "internal_error"), ``code`` (the stable number of the core's error kinds, as in the
    C ABI; None for the classes that are not core error kinds), ``field`` (dotted path
    of the offending field, as the user wrote it), ``value`` (the value as given) and
    ``reason`` (why, in words).
    """
    kind = None
    code = None
    field = None
    value = None
    reason = None
    __module__ = "gang"

class InvalidQuantity(GangError):
    """A quantity that is malformed, negative, finer than 1m, not a finite number, or overflows (kind "invalid_quantity")."""
    __module__ = "gang"

class InvalidInventory(GangError):
    """The cluster description is invalid: duplicate node, bad label, bad level... (kind "invalid_inventory")."""
    __module__ = "gang"

class InvalidRequest(GangError):
    """The gang request is invalid: unknown level, bad count, bad slice... (kind "invalid_request")."""
    __module__ = "gang"

class Contradictory(GangError):
    """The request's constraints can never hold together, whatever the capacity (kind "contradictory")."""
    __module__ = "gang"

class InvalidScenario(GangError):
    """A document (scenario or cluster, as JSON or dicts) that does not match the format, or text that is not JSON (kind "invalid_scenario"). A gang or role document with a bad field is InvalidRequest, as when built."""
    __module__ = "gang"

class Conflict(GangError):
    """A placement could not be reserved because the inventory changed since it was computed; nothing was applied (kind "conflict")."""
    __module__ = "gang"

class UnknownReservation(GangError):
    """No live reservation has this id in this inventory: released already, or made by another inventory (the message names both) (kind "unknown_reservation")."""
    __module__ = "gang"

class UnknownNode(GangError, KeyError):
    """No node has this name (kind "unknown_node"). Also a KeyError, so ``except KeyError`` catches it."""
    __module__ = "gang"
    __str__ = Exception.__str__

class NotPlaced(GangError):
    """The request is valid but was not placed; ``diagnosis`` says why and ``status`` is "unschedulable" or "undecided". See Unschedulable and Undecided: what is raised is always one of them, whose ``kind`` and ``status`` are its name ("not_placed" is the base class's own kind, never raised)."""
    kind = "not_placed"
    diagnosis = None
    status = None
    __module__ = "gang"

class Unschedulable(NotPlaced):
    """The gang does not fit now. ``diagnosis`` is the Diagnosis; str() is its paragraph."""
    kind = "unschedulable"
    status = "unschedulable"
    __module__ = "gang"

class Undecided(NotPlaced):
    """The exact multi-role search ran out of budget before deciding: a placement may exist. ``diagnosis`` is the Diagnosis (its search_exhausted is True)."""
    kind = "undecided"
    status = "undecided"
    __module__ = "gang"

class Pending(GangError):
    """Inventory.replace: the domain that binds the gang has no room for its lost members now; nothing was applied. str() says which domain binds it and what it lacks; attributes: ``reservation`` (its ReservationId), ``gang``, ``domains`` (list of dicts), ``search_exhausted``."""
    reservation = None
    gang = None
    domains = None
    search_exhausted = None
    __module__ = "gang"

class InternalError(GangError):
    """A bug in gang: a Rust panic caught at the Python boundary. Please report it."""
    __module__ = "gang"
"#;

/// The exception classes, in this order.
pub const NAMES: [&str; 14] = [
    "GangError",
    "InvalidQuantity",
    "InvalidInventory",
    "InvalidRequest",
    "Contradictory",
    "InvalidScenario",
    "Conflict",
    "UnknownReservation",
    "UnknownNode",
    "NotPlaced",
    "Unschedulable",
    "Undecided",
    "Pending",
    "InternalError",
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// The exception class `name` (one of [`NAMES`]).
pub fn class<'py>(py: Python<'py>, name: &str) -> Bound<'py, PyType> {
    let types = TYPES.get_or_init(py, || {
        let m = PyModule::from_code(py, CLASSES, c"gang/_errors.py", c"gang._errors")
            .expect("the exception classes compile");
        NAMES
            .iter()
            .map(|n| {
                m.getattr(*n)
                    .and_then(|t| t.cast_into::<PyType>().map_err(Into::into))
                    .expect("defined above")
                    .unbind()
            })
            .collect()
    });
    let i = NAMES.iter().position(|n| *n == name).unwrap_or(0);
    types[i].bind(py).clone()
}

/// A new exception of class `name` with `message`, and its attributes set.
pub fn raise(name: &str, message: String, attrs: &[(&str, Option<Py<PyAny>>)]) -> PyErr {
    Python::attach(|py| {
        let err = PyErr::from_type(class(py, name), message);
        let v = err.value(py);
        for (k, val) in attrs {
            // Setting attributes on a fresh exception instance cannot fail in practice;
            // if it did, the exception still has the right class and message.
            let _ = v.setattr(*k, val);
        }
        err
    })
}

/// `InternalError(message)`.
pub struct InternalError;

impl InternalError {
    pub fn new_err(message: impl Into<String>) -> PyErr {
        let message = message.into();
        Python::attach(|py| {
            let reason = message
                .clone()
                .into_pyobject(py)
                .map(|s| s.into_any().unbind())
                .ok();
            raise(
                "InternalError",
                message,
                &[
                    ("kind", Some(into(py, "internal_error"))),
                    ("reason", reason),
                ],
            )
        })
    }
}

fn into<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_pyobject(py)
        .map(|b| b.into_any().into_bound().unbind())
        .unwrap_or_else(|_| py.None())
}

/// The class of a core error kind. This `match` is the only place where core error
/// kinds meet Python classes.
fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidQuantity => "InvalidQuantity",
        ErrorKind::InvalidInventory => "InvalidInventory",
        ErrorKind::InvalidRequest => "InvalidRequest",
        ErrorKind::Contradictory => "Contradictory",
        ErrorKind::InvalidScenario => "InvalidScenario",
        ErrorKind::Conflict => "Conflict",
        ErrorKind::UnknownReservation => "UnknownReservation",
        ErrorKind::UnknownNode => "UnknownNode",
        // ErrorKind is #[non_exhaustive]: a kind added to the core later is still a
        // GangError (with its `kind` attribute set) until it gets a class of its own.
        _ => "GangError",
    }
}

/// Converts a core error into its Python exception, one class per [`ErrorKind`].
pub fn to_py_err(err: Error) -> PyErr {
    let kind = err.kind();
    let (value, reason) = match &err {
        Error::InvalidQuantity { value, reason, .. }
        | Error::InvalidInventory { value, reason, .. }
        | Error::InvalidRequest { value, reason, .. }
        | Error::Contradictory { value, reason, .. } => (Some(value.clone()), reason.clone()),
        Error::InvalidScenario { reason, .. } => (None, reason.clone()),
        Error::Conflict(c) => (None, c.to_string()),
        Error::UnknownReservation { id } => (
            Some(id.to_string()),
            format!("no live reservation {id} in {}", id.inventory()),
        ),
        Error::ForeignReservation { id, inventory } => (
            Some(id.to_string()),
            format!("made by {}, used on {inventory}", id.inventory()),
        ),
        Error::UnknownNode { name } => (Some(name.clone()), "unknown node".into()),
        _ => (None, err.to_string()),
    };
    Python::attach(|py| {
        raise(
            class_of(kind),
            err.to_string(),
            &[
                ("kind", Some(into(py, kind.as_str()))),
                ("code", Some(into(py, kind.code()))),
                ("field", Some(into(py, err.field()))),
                ("value", value.map(|v| into(py, v))),
                ("reason", Some(into(py, reason))),
            ],
        )
    })
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

thread_local! {
    /// Where the last panic on this thread happened (set by the hook, read by [`guard`]).
    static WHERE: Cell<Option<String>> = const { Cell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once) this extension's panic hook: it prints nothing and records where the
/// panic happened. Every panic in the extension is caught at the boundary — by
/// [`guard`] as `InternalError`, or by PyO3 as `PanicException` — and carries its
/// message, so "thread panicked at …" on stderr would only be noise. (Each Rust
/// extension module has its own copy of the standard library, so this hook does not
/// touch other extensions' panics.)
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            WHERE.with(|w| w.set(at));
        }));
    });
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
        let at = WHERE
            .with(Cell::take)
            .map(|w| format!(" at {w}"))
            .unwrap_or_default();
        InternalError::new_err(format!(
            "internal error in gang (please report): {what}{at}"
        ))
    })
}

/// [`guard`] for a core call returning `Result`: panics and core errors both become
/// `GangError`s.
pub fn core<T>(f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
    guard(f)?.map_err(to_py_err)
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    for name in NAMES {
        m.add(name, class(m.py(), name))?;
    }
    Ok(())
}
