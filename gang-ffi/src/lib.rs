//! The C ABI of `gang`: exact, all-or-nothing, topology-aware placement of gangs, for
//! schedulers written in C, Go (through cgo, see `go/`) or anything else that can call C.
//!
//! This crate holds no placement logic: every function converts its arguments at the
//! edge, calls `gang-core`, and converts the result back. The header
//! (`include/gang.h`) is generated from this source by a pinned cbindgen and committed;
//! `test.sh` fails when it drifts.
//!
//! # Conventions (the header repeats them)
//!
//! - **Handles.** Every object is an opaque handle made by one `gang_<type>_new` (or
//!   `_from_json`, `_build`, `_compile`, `_place`, …) and destroyed by exactly one
//!   `gang_<type>_free`. `gang_<type>_free(NULL)` is a no-op; freeing a handle twice is
//!   undefined behaviour, so set your pointer to `NULL` after freeing it (the Go package
//!   does this in an idempotent `Close()`). As defence in depth, every handle carries a
//!   type tag checked on every call (`GANG_INVALID_HANDLE` for a handle of another
//!   type), poisoned by `_free` so that a double free or a use after free is detected
//!   while the allocator still holds the memory (best-effort; see `handle.rs`).
//! - **Result codes.** Every function except `_free`, `gang_version` and
//!   `gang_result_name` returns a [`gang_result`]: `GANG_OK` (0) or an error code. The
//!   values are explicit and never renumbered: codes 1–99 are `gang-core`'s
//!   `ErrorKind::code()` one to one; codes from 100 are this binding's own (NULL
//!   argument, invalid UTF-8, …). A valid request that does not fit is *not* an error:
//!   placing returns `GANG_OK` and a [`gang_status`] of `GANG_STATUS_UNSCHEDULABLE`
//!   (a replacement that has no room in its domain: `GANG_STATUS_PENDING`; a queued gang
//!   that is not admitted: `GANG_STATUS_WAITING`).
//! - **Outputs** go only through out-parameters (never NULL), written only on success.
//! - **Errors.** Functions that can fail for a reason worth a message take a last
//!   `gang_error **error_out` (may be NULL). On failure, when it is not NULL, a new
//!   `gang_error` is stored there (kind, field, message, JSON); the caller frees it with
//!   `gang_error_free`. There is no thread-local "last error": goroutines move between
//!   threads.
//! - **Strings in** are NUL-terminated UTF-8 (`const char *`); documents (JSON) are a
//!   pointer and a length. **Strings out** are [`gang_str`] views (pointer + length)
//!   borrowed from the handle that produced them, valid until that handle is freed.
//! - **Panics** never cross the boundary: every body runs inside `catch_unwind`, and a
//!   bug becomes `GANG_INTERNAL_ERROR` (the library must be built with `panic = "unwind"`, the
//!   default). An inventory a lifecycle function was changing when it returned
//!   `GANG_INTERNAL_ERROR` may be left half-changed: check it with
//!   `gang_inventory_validate`, or free it.
//! - **Threads.** A `gang_inventory` is read by the functions taking a `const
//!   gang_inventory *` (any number of threads at once) and changed by the lifecycle
//!   functions taking a `gang_inventory *` (reserve, release, node changes, replace,
//!   spread, admit), which need it to themselves: no other call on that inventory, on
//!   any thread, during the call. Separate inventories are independent. `gang_compiled`,
//!   `gang_placement`, `gang_diagnosis`, `gang_scenario`, `gang_string`, `gang_error`,
//!   `gang_reservation`, `gang_change`, `gang_replacement`, `gang_spread_outcome` and
//!   `gang_admissions` are immutable once made and may be read from many threads at
//!   once. Builders (`gang_node`, `gang_inventory_builder`, `gang_role`, `gang_gang`)
//!   and `gang_solver` (which owns scratch space) must be used by one thread at a time;
//!   use one solver per thread.
//!
//! # Example (C)
//!
//! ```c
//! gang_error *err = NULL;
//! gang_inventory *inv = NULL;
//! if (gang_inventory_from_json(doc, strlen(doc), &inv, &err) != GANG_OK) { ... }
//! gang_gang *g = NULL;
//! gang_gang_from_json(req, strlen(req), &g, &err);
//! uint32_t status; gang_placement *p = NULL; gang_diagnosis *d = NULL;
//! gang_inventory_place(inv, g, &status, &p, &d, &err);
//! uint64_t id;                       // hold it: all of it, or nothing (GANG_CONFLICT)
//! if (p && gang_inventory_reserve(inv, p, &id, &err) == GANG_OK) {
//!     gang_inventory_release(inv, id, &err);     // exactly what it took, once
//! }
//! ```

#![allow(non_camel_case_types)]
#![deny(missing_docs)]

// The foundation, in one-way layers (each module imports only those above it;
// tests/layers.rs checks it): result codes; failures; text in and out; handles; the
// panic boundary and error objects; the accessor macros; the owned string handle.
mod result;

mod failure;

mod text;

mod handle;

#[macro_use]
mod error;

#[macro_use]
mod accessor;

mod string;

mod inventory;
mod outcome;
mod request;
mod scenario;
mod solve;

// The lifecycle: operations on a live inventory, reservations and change reports, and
// the answers of replace, spread and admit (in this order in the header).
mod lifecycle;

// Preemption: its options, the queries and evictable units.
mod preempt;

mod reservation;

mod answers;

pub use answers::*;
pub use error::*;
pub use inventory::*;
pub use lifecycle::*;
pub use outcome::*;
pub use preempt::*;
pub use request::*;
pub use reservation::*;
pub use result::*;
pub use scenario::*;
pub use solve::*;
pub use string::*;
pub use text::*;

use std::ffi::c_char;

/// Major version of this library (the header's `GANG_VERSION_MAJOR`).
pub const GANG_VERSION_MAJOR: u32 = 0;
/// Minor version of this library (the header's `GANG_VERSION_MINOR`).
pub const GANG_VERSION_MINOR: u32 = 1;
/// Patch version of this library (the header's `GANG_VERSION_PATCH`).
pub const GANG_VERSION_PATCH: u32 = 0;

/// The library's version, `"MAJOR.MINOR.PATCH"`.
///
/// Ownership: returns a static NUL-terminated string; never NULL; do not free it.
/// Compare it with the header's `GANG_VERSION_*` macros to detect a header/library
/// mismatch.
#[no_mangle]
pub extern "C" fn gang_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The thread rules of the header, checked at compile time: handles documented as
/// shareable are `Send + Sync`; the one-thread-at-a-time ones are at least `Send` (a
/// goroutine, and so the handle, moves between threads).
#[allow(dead_code)]
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    const fn movable<T: Send>() {}
    shareable::<gang_core::Inventory>();
    shareable::<inventory::InventoryInner>();
    shareable::<gang_core::CompiledGang>();
    shareable::<outcome::PlacementInner>();
    shareable::<outcome::DiagnosisInner>();
    shareable::<gang_core::scenario::Scenario>();
    shareable::<error::ErrorInner>();
    shareable::<text::Text>();
    shareable::<reservation::ReservationInner>();
    shareable::<reservation::ChangeInner>();
    shareable::<answers::ReplacementInner>();
    shareable::<answers::SpreadInner>();
    shareable::<answers::AdmissionsInner>();
    shareable::<gang_core::lifecycle::PreemptOptions>();
    movable::<solve::SolverInner>();
    movable::<gang_core::NodeSpec>();
    movable::<inventory::BuilderInner>();
    movable::<gang_core::Role>();
    movable::<gang_core::Gang>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// Each handle type carries its own tag, named as the C type.
    #[test]
    fn every_handle_is_tagged_with_its_own_name() {
        fn name<H: handle::Handle>() -> &'static str {
            let rust = std::any::type_name::<H>();
            let c = H::KIND.name();
            assert!(rust.ends_with(&format!("::{c}")), "{rust} is tagged {c}");
            c
        }
        let mut names = vec![
            name::<gang_error>(),
            name::<gang_string>(),
            name::<gang_node>(),
            name::<gang_inventory_builder>(),
            name::<gang_inventory>(),
            name::<gang_role>(),
            name::<gang_gang>(),
            name::<gang_compiled>(),
            name::<gang_solver>(),
            name::<gang_placement>(),
            name::<gang_diagnosis>(),
            name::<gang_scenario>(),
            name::<gang_reservation>(),
            name::<gang_change>(),
            name::<gang_replacement>(),
            name::<gang_spread_outcome>(),
            name::<gang_admissions>(),
        ];
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 17);
    }

    #[test]
    fn version_constants_match_cargo() {
        let v = unsafe { CStr::from_ptr(gang_version()) }.to_str().unwrap();
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        assert_eq!(
            format!("{GANG_VERSION_MAJOR}.{GANG_VERSION_MINOR}.{GANG_VERSION_PATCH}"),
            v
        );
    }
}
