//! The owned string handle, `gang_string` (reports and documents made by the library).

use crate::handle::{Handle, Kind};
use crate::result::gang_result;
use crate::text::{gang_str, Text};

/// An owned string made by the library (a report, a document).
///
/// Made by `gang_scenario_check` and `gang_inventory_node_json`. Read with
/// `gang_string_view`. Freed with `gang_string_free`. Immutable: may be read from many
/// threads at once.
pub struct gang_string {
    _private: [u8; 0],
}

unsafe impl Handle for gang_string {
    type Inner = Text;
    const KIND: Kind = Kind::String;
}

/// Views an owned string: writes its bytes, NUL-terminated, to `*view_out`.
///
/// Ownership: `string` stays owned by the caller; the view borrows from it and is valid
/// until `gang_string_free(string)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `string` must be NULL or a live `gang_string`; `view_out` must be NULL or valid for
/// writing a `gang_str`.
#[no_mangle]
pub unsafe extern "C" fn gang_string_view(
    string: *const gang_string,
    view_out: *mut gang_str,
) -> gang_result {
    ffi_read!(string => |s| { view_out => s.view() })
}

/// Frees a string made by the library. `gang_string_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `string`; it (and every view of it) is invalid
/// afterwards. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `string` must be NULL or a live `gang_string` not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_string_free(string: *mut gang_string) {
    gang_string::free(string);
}
