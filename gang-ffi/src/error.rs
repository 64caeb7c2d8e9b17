//! The panic boundary and per-call error objects: where a [`Failure`] becomes a result
//! code and, when the caller asked for one, a `gang_error`.
//!
//! Above `failure`, `text` and `handle` (it makes `gang_error` handles); nothing below
//! imports it. The other modules use it through `ffi_boundary!`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::failure::Failure;
use crate::handle::{Handle, Kind, Out};
use crate::result::gang_result;
use crate::text::{gang_str, Text};

/// Runs an ABI function's body inside the panic boundary and turns its result into a
/// [`gang_result`]; on failure, stores a `gang_error` in `error_out` when it is not NULL.
///
/// `ffi_boundary!(error_out, { ...; Ok(()) })` or, for functions without an error
/// out-parameter, `ffi_boundary!({ ...; Ok(()) })`.
macro_rules! ffi_boundary {
    ($error_out:expr, $body:block) => {
        $crate::error::run(
            $error_out,
            || -> ::std::result::Result<(), $crate::failure::Failure> { $body },
        )
    };
    ($body:block) => {
        $crate::error::run(
            ::std::ptr::null_mut(),
            || -> ::std::result::Result<(), $crate::failure::Failure> { $body },
        )
    };
}

/// The error object of a failure (the core's own JSON for core errors).
fn error_object(failure: Failure) -> ErrorInner {
    let f = failure.into_data();
    let json = match &f.core {
        Some(e) => e.to_json(),
        None => serde_json::json!({
            "status": "error",
            "kind": f.kind,
            "field": f.field,
            "message": f.message,
        })
        .to_string(),
    };
    ErrorInner {
        code: f.code,
        kind: Text::new(f.kind),
        field: Text::new(f.field),
        message: Text::new(f.message),
        json: Text::new(json),
    }
}

/// Reports a failure: its code, and a new `gang_error` in `error_out` if given.
fn report(failure: Failure, error_out: *mut *mut gang_error) -> gang_result {
    let code = failure.code;
    if !error_out.is_null() {
        // Building the error object allocates; a panic here must not unwind into C.
        if let Ok(e) = catch_unwind(AssertUnwindSafe(|| error_object(failure))) {
            // SAFETY: the caller passed a writable `gang_error **` (or NULL, checked).
            unsafe { error_out.write(gang_error::into_raw(e)) };
        }
    }
    code
}

/// Runs `body` inside the panic boundary (see `ffi_boundary!`).
pub(crate) fn run(
    error_out: *mut *mut gang_error,
    body: impl FnOnce() -> Result<(), Failure>,
) -> gang_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => gang_result::GANG_OK,
        Ok(Err(failure)) => report(failure, error_out),
        Err(payload) => report(Failure::panic(payload), error_out),
    }
}

/// Why a call failed: a result code, the kind's stable name, the field it is about (a
/// dotted path such as `nodes[a1].capacity.cpu`, or the argument's name), a message,
/// and the same as a JSON document (`{"status": "error", "kind", "field", "message"}`).
///
/// Made by any function taking `gang_error **error_out`, on failure. Freed with
/// `gang_error_free`. Immutable: may be read from many threads.
pub struct gang_error {
    _private: [u8; 0],
}

pub(crate) struct ErrorInner {
    code: gang_result,
    kind: Text,
    field: Text,
    message: Text,
    json: Text,
}

unsafe impl Handle for gang_error {
    type Inner = ErrorInner;
    const KIND: Kind = Kind::Error;
}

/// Writes the error's result code (the one the failing call returned) to `*code_out`.
///
/// Ownership: `error` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error`; `code_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_error_code(
    error: *const gang_error,
    code_out: *mut gang_result,
) -> gang_result {
    ffi_boundary!({
        let e = gang_error::get(error, "error")?;
        Out::new(code_out, "code_out")?.write(e.code);
        Ok(())
    })
}

/// Writes the error kind's stable name (`"invalid_request"`, `"null_argument"`, …;
/// NUL-terminated) to `*kind_out`.
///
/// Ownership: the view borrows from `error` and is valid until `gang_error_free(error)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error`; `kind_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_error_kind(
    error: *const gang_error,
    kind_out: *mut gang_str,
) -> gang_result {
    ffi_boundary!({
        let e = gang_error::get(error, "error")?;
        Out::new(kind_out, "kind_out")?.write(e.kind.view());
        Ok(())
    })
}

/// Writes the field the error is about (a dotted path like `gang.roles[worker].count`,
/// or the name of the offending argument; NUL-terminated, possibly empty) to
/// `*field_out`.
///
/// Ownership: the view borrows from `error` and is valid until `gang_error_free(error)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error`; `field_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_error_field(
    error: *const gang_error,
    field_out: *mut gang_str,
) -> gang_result {
    ffi_boundary!({
        let e = gang_error::get(error, "error")?;
        Out::new(field_out, "field_out")?.write(e.field.view());
        Ok(())
    })
}

/// Writes the human-readable message (NUL-terminated), naming the field and the value,
/// to `*message_out`.
///
/// Ownership: the view borrows from `error` and is valid until `gang_error_free(error)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error`; `message_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_error_message(
    error: *const gang_error,
    message_out: *mut gang_str,
) -> gang_result {
    ffi_boundary!({
        let e = gang_error::get(error, "error")?;
        Out::new(message_out, "message_out")?.write(e.message.view());
        Ok(())
    })
}

/// Writes the error as a JSON document, `{"status": "error", "kind", "field",
/// "message"}` (NUL-terminated; byte for byte the core's `Error::to_json` for core
/// errors), to `*json_out`.
///
/// Ownership: the view borrows from `error` and is valid until `gang_error_free(error)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error`; `json_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_error_json(
    error: *const gang_error,
    json_out: *mut gang_str,
) -> gang_result {
    ffi_boundary!({
        let e = gang_error::get(error, "error")?;
        Out::new(json_out, "json_out")?.write(e.json.view());
        Ok(())
    })
}

/// Frees an error. `gang_error_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `error`; it and every view of it are invalid
/// afterwards. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `error` must be NULL or a live `gang_error` not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_error_free(error: *mut gang_error) {
    gang_error::free(error);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    unsafe fn text(v: gang_str) -> String {
        let b = std::slice::from_raw_parts(v.data.cast::<u8>(), v.len);
        assert_eq!(*v.data.add(v.len), 0, "NUL-terminated");
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn a_panic_becomes_a_code_and_an_error_object() {
        let mut err: *mut gang_error = ptr::null_mut();
        let rc = run(&mut err, || panic!("boom {}", 42));
        assert_eq!(rc, gang_result::GANG_INTERNAL_ERROR);
        assert!(!err.is_null());
        unsafe {
            let mut m = gang_str::of("");
            assert_eq!(gang_error_message(err, &mut m), gang_result::GANG_OK);
            let m = text(m);
            assert!(m.contains("boom 42"), "{m}");
            let mut code = gang_result::GANG_OK;
            gang_error_code(err, &mut code);
            assert_eq!(code, gang_result::GANG_INTERNAL_ERROR);
            let mut j = gang_str::of("");
            gang_error_json(err, &mut j);
            let j: serde_json::Value = serde_json::from_str(&text(j)).unwrap();
            assert_eq!(j["kind"], "internal_error");
            gang_error_free(err);
        }
        // Without an error out-parameter, and with a non-string payload.
        let rc = run(ptr::null_mut(), || std::panic::panic_any(7u8));
        assert_eq!(rc, gang_result::GANG_INTERNAL_ERROR);
    }

    #[test]
    fn core_errors_keep_kind_field_and_json() {
        let core = gang_core::Quantity::parse("12 GB").unwrap_err();
        let want_json = core.to_json();
        let mut err: *mut gang_error = ptr::null_mut();
        let rc = run(&mut err, || Err(core.into()));
        assert_eq!(rc, gang_result::GANG_INVALID_QUANTITY);
        unsafe {
            let (mut k, mut f, mut j) = (gang_str::of(""), gang_str::of(""), gang_str::of(""));
            gang_error_kind(err, &mut k);
            gang_error_field(err, &mut f);
            gang_error_json(err, &mut j);
            assert_eq!(text(k), "invalid_quantity");
            assert_eq!(text(f), "quantity");
            assert_eq!(text(j), want_json);
            gang_error_free(err);
        }
    }

    #[test]
    fn success_leaves_the_error_untouched_and_null_is_rejected() {
        let mut err: *mut gang_error = ptr::null_mut();
        assert_eq!(run(&mut err, || Ok(())), gang_result::GANG_OK);
        assert!(err.is_null());
        unsafe {
            let mut m = gang_str::of("");
            assert_eq!(
                gang_error_message(ptr::null(), &mut m),
                gang_result::GANG_NULL_ARGUMENT
            );
            gang_error_free(ptr::null_mut());
        }
    }
}
