//! Scenario documents (the shared test vectors): load, take apart, check.

use std::ffi::c_char;

use gang_core::scenario::Scenario;

use crate::error::gang_error;
use crate::handle::{Handle, Kind, Out};
use crate::inventory::gang_inventory;
use crate::request::gang_gang;
use crate::result::gang_result;
use crate::string::gang_string;
use crate::text::{arg_doc, Text};

/// A parsed scenario document: a cluster, a gang, optionally what must come out, and
/// optionally lifecycle steps (the format of the files in `examples/scenarios/`).
///
/// Made by `gang_scenario_from_json`; freed with `gang_scenario_free`. Immutable: may be
/// read from many threads at once.
pub struct gang_scenario {
    _private: [u8; 0],
}

unsafe impl Handle for gang_scenario {
    type Inner = Scenario;
    const KIND: Kind = Kind::Scenario;
}

/// Parses a scenario document of `len` bytes (UTF-8, need not be NUL-terminated).
/// Unknown fields are errors.
///
/// Ownership: `json` is only read during the call. On `GANG_OK`, `*scenario_out` is a
/// new scenario owned by the caller; free it with `gang_scenario_free`. On failure, a
/// new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_SCENARIO` when the document does not parse (the field names the
/// JSON path, e.g. `gang.roles[0].count`); `GANG_NULL_ARGUMENT` (`json` may be NULL only
/// when `len` is 0) or `GANG_INVALID_UTF8`. The cluster and gang are validated later, by
/// `gang_scenario_inventory` and when placing.
///
/// # Safety
/// `json` must be NULL or readable for `len` bytes; `scenario_out` and `error_out` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_scenario_from_json(
    json: *const c_char,
    len: usize,
    scenario_out: *mut *mut gang_scenario,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let text = arg_doc(json, len, "json")?;
        let out = Out::new(scenario_out, "scenario_out")?;
        let scenario = Scenario::from_json(text)?;
        out.write(gang_scenario::into_raw(scenario));
        Ok(())
    })
}

/// Builds the scenario's inventory.
///
/// Ownership: `scenario` stays owned by the caller. On `GANG_OK`, `*inventory_out` is a
/// new inventory owned by the caller (free it with `gang_inventory_free`); it does not
/// borrow the scenario. On failure, a new `gang_error` is stored in `*error_out` if
/// `error_out` is not NULL.
///
/// Returns errors as `gang_inventory_builder_build`; `GANG_NULL_ARGUMENT` for a NULL
/// argument.
///
/// # Safety
/// `scenario` must be NULL or a live scenario; `inventory_out` and `error_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gang_scenario_inventory(
    scenario: *const gang_scenario,
    inventory_out: *mut *mut gang_inventory,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let s = gang_scenario::get(scenario, "scenario")?;
        let out = Out::new(inventory_out, "inventory_out")?;
        let inventory = s.inventory()?;
        out.write(gang_inventory::into_raw(
            crate::inventory::InventoryInner::new(inventory),
        ));
        Ok(())
    })
}

/// Copies the scenario's gang into a new gang handle (not yet validated: compiling or
/// placing it validates it).
///
/// Ownership: `scenario` stays owned by the caller. On `GANG_OK`, `*gang_out` is a new
/// gang owned by the caller; free it with `gang_gang_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `scenario` must be NULL or a live scenario; `gang_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_scenario_gang(
    scenario: *const gang_scenario,
    gang_out: *mut *mut gang_gang,
) -> gang_result {
    ffi_boundary!({
        let s = gang_scenario::get(scenario, "scenario")?;
        let out = Out::new(gang_out, "gang_out")?;
        out.write(gang_gang::into_raw(s.gang.clone()));
        Ok(())
    })
}

/// Runs the scenario in the core (build the inventory, place the gang, then run its
/// lifecycle `steps`, if any, in order on that inventory) and checks every expectation
/// of its `expect` block and of each step's (and the placement's invariants, and the
/// inventory's after every step).
///
/// On `GANG_OK`, writes whether every expectation held to `*passed_out`; the failures,
/// one per line (empty when passed), to a new string in `*failures_out`; and the result
/// of placing the scenario's gang (before any step) as a JSON document to a new string
/// in `*outcome_json_out`: the placement or diagnosis document (as `gang_placement_json`
/// / `gang_diagnosis_json`) or, when the scenario's input is invalid, the error document
/// (as `gang_error_json`). Callers running the same scenario through the ABI can compare
/// their result with it byte for byte.
///
/// Ownership: `scenario` stays owned by the caller. The two new strings are owned by the
/// caller: free them with `gang_string_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL. A scenario whose input is
/// invalid is not an error of this call: it passes when it expects that error.
///
/// # Safety
/// `scenario` must be NULL or a live scenario; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_scenario_check(
    scenario: *const gang_scenario,
    passed_out: *mut bool,
    failures_out: *mut *mut gang_string,
    outcome_json_out: *mut *mut gang_string,
) -> gang_result {
    ffi_boundary!({
        let s = gang_scenario::get(scenario, "scenario")?;
        let passed_out = Out::new(passed_out, "passed_out")?;
        let failures_out = Out::new(failures_out, "failures_out")?;
        let outcome_out = Out::new(outcome_json_out, "outcome_json_out")?;
        let report = s.check();
        let outcome = match &report.outcome {
            Ok(o) => o.to_json(),
            Err(e) => e.to_json(),
        };
        passed_out.write(report.passed());
        failures_out.write(gang_string::into_raw(Text::new(report.failures.join("\n"))));
        outcome_out.write(gang_string::into_raw(Text::new(outcome)));
        Ok(())
    })
}

/// Frees a scenario. `gang_scenario_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `scenario`. Inventories and gangs made from it are
/// unaffected. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `scenario` must be NULL or a live scenario not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_scenario_free(scenario: *mut gang_scenario) {
    gang_scenario::free(scenario);
}
