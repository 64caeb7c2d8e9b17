//! Why a call failed, before it becomes a result code and (maybe) a `gang_error`.
//!
//! The bottom of the binding with the result codes: every other module returns
//! [`Failure`]s, and only the boundary (`error.rs`) turns them into codes and error
//! objects. It depends on nothing of this crate but `result`.

use std::any::Any;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::result::gang_result;

/// Why a call failed, before it becomes a code and (maybe) a `gang_error`. Boxed, so
/// that the happy path moves one pointer-sized `Result`.
#[derive(Debug)]
pub(crate) struct Failure(Box<FailureData>);

impl std::ops::Deref for Failure {
    type Target = FailureData;
    fn deref(&self) -> &FailureData {
        &self.0
    }
}

impl std::ops::DerefMut for Failure {
    fn deref_mut(&mut self) -> &mut FailureData {
        &mut self.0
    }
}

#[derive(Debug)]
pub(crate) struct FailureData {
    pub code: gang_result,
    pub kind: Cow<'static, str>,
    pub field: String,
    pub message: String,
    /// The core error, when it came from the core (its own JSON form is used).
    pub core: Option<gang_core::Error>,
}

impl Failure {
    /// The failure's parts, unboxed.
    pub(crate) fn into_data(self) -> FailureData {
        *self.0
    }

    fn binding(code: gang_result, field: impl Into<String>, message: String) -> Failure {
        Failure(Box::new(FailureData {
            code,
            kind: Cow::Borrowed(code.name()),
            field: field.into(),
            message,
            core: None,
        }))
    }

    pub(crate) fn null(name: &'static str) -> Failure {
        Failure::binding(
            gang_result::GANG_NULL_ARGUMENT,
            name,
            format!("argument {name} is NULL"),
        )
    }

    pub(crate) fn utf8(name: &'static str, valid_up_to: usize) -> Failure {
        Failure::binding(
            gang_result::GANG_INVALID_UTF8,
            name,
            format!("argument {name} is not valid UTF-8 (invalid byte at offset {valid_up_to})"),
        )
    }

    pub(crate) fn invalid_argument(name: &'static str, value: u32, expected: &str) -> Failure {
        Failure::binding(
            gang_result::GANG_INVALID_ARGUMENT,
            name,
            format!("argument {name} is {value}, expected {expected}"),
        )
    }

    pub(crate) fn out_of_range(name: &'static str, index: usize, len: usize) -> Failure {
        Failure::binding(
            gang_result::GANG_OUT_OF_RANGE,
            name,
            format!("argument {name} is {index}, but the length is {len}"),
        )
    }

    pub(crate) fn not_found(name: &'static str, what: &str, value: &str) -> Failure {
        Failure::binding(
            gang_result::GANG_NOT_FOUND,
            name,
            format!("no {what} named {value:?}"),
        )
    }

    /// A handle argument that is not a live handle of its type (another type, freed,
    /// or not a handle at all): `found` says which, as far as the tag tells.
    pub(crate) fn invalid_handle(name: &'static str, expected: &str, found: &str) -> Failure {
        Failure::binding(
            gang_result::GANG_INVALID_HANDLE,
            name,
            format!("argument {name} is not a live {expected}: {found}"),
        )
    }

    /// The same failure about element `i` of an array argument.
    pub(crate) fn at_index(mut self, i: usize) -> Failure {
        let old = std::mem::take(&mut self.field);
        self.field = format!("{old}[{i}]");
        self.message = self.message.replacen(&old, &self.field, 1);
        self
    }

    /// A broken internal invariant (a bug), reported like a caught panic.
    pub(crate) fn internal(what: &str) -> Failure {
        Failure::binding(
            gang_result::GANG_INTERNAL_ERROR,
            "",
            format!("internal error (a bug in gang, please report it): {what}"),
        )
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send>) -> Failure {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        // Dropping a payload can itself panic; never let that unwind into C.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
        Failure::internal(&format!("panic: {what}"))
    }
}

impl From<gang_core::Error> for Failure {
    fn from(e: gang_core::Error) -> Failure {
        let kind = e.kind();
        Failure(Box::new(FailureData {
            code: gang_result::from_kind(kind),
            kind: Cow::Owned(kind.as_str().to_owned()),
            field: e.field().to_owned(),
            message: e.to_string(),
            core: Some(e),
        }))
    }
}
