//! The solver and the two placement queries.

use gang_core::Solver;

use crate::error::gang_error;
use crate::handle::{Handle, Kind, Out};
use crate::inventory::gang_inventory;
use crate::outcome::{gang_diagnosis, gang_placement, OutcomeOut, PlacementInner};
use crate::request::{gang_compiled, gang_gang};
use crate::result::{gang_result, gang_status};

/// Reusable scratch space for placement queries, so that repeated queries do not
/// allocate beyond their result.
///
/// Made by `gang_solver_new` or `gang_solver_new_with_budget`; freed with
/// `gang_solver_free`. One thread at a time (use one solver per thread); a solver may
/// be used with any number of inventories, one query at a time.
pub struct gang_solver {
    _private: [u8; 0],
}

unsafe impl Handle for gang_solver {
    type Inner = Solver;
    const KIND: Kind = Kind::Solver;
}

/// Makes a solver with the default search budget (1,000,000 work units per query for
/// multi-role gangs: nodes looked at, bounds and search patterns alike).
///
/// Ownership: on `GANG_OK`, `*solver_out` is a new solver owned by the caller; free it
/// with `gang_solver_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when `solver_out` is NULL.
///
/// # Safety
/// `solver_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_new(solver_out: *mut *mut gang_solver) -> gang_result {
    ffi_boundary!({
        let out = Out::new(solver_out, "solver_out")?;
        out.write(gang_solver::into_raw(Solver::new()));
        Ok(())
    })
}

/// Makes a solver whose multi-role work may spend at most `budget` work units per
/// query; an exhausted budget yields `GANG_STATUS_UNDECIDED`, never a false "does not
/// fit".
///
/// Ownership: on `GANG_OK`, `*solver_out` is a new solver owned by the caller; free it
/// with `gang_solver_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when `solver_out` is NULL.
///
/// # Safety
/// `solver_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_new_with_budget(
    budget: u64,
    solver_out: *mut *mut gang_solver,
) -> gang_result {
    ffi_boundary!({
        let out = Out::new(solver_out, "solver_out")?;
        out.write(gang_solver::into_raw(Solver::with_search_budget(budget)));
        Ok(())
    })
}

/// Frees a solver. `gang_solver_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `solver`. Freeing it twice is undefined behaviour: set
/// your pointer to NULL.
///
/// # Safety
/// `solver` must be NULL or a live solver not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_free(solver: *mut gang_solver) {
    gang_solver::free(solver);
}

/// Places a compiled gang on `inventory` (the hot path): all of it (or each role's
/// `min_count`), or nothing.
///
/// On `GANG_OK`, writes the status to `*status_out` and either a new placement to
/// `*placement_out` (status `GANG_STATUS_PLACED`; `*diagnosis_out` is set to NULL) or a
/// new diagnosis to `*diagnosis_out` (`GANG_STATUS_UNSCHEDULABLE` or
/// `GANG_STATUS_UNDECIDED`; `*placement_out` is set to NULL). "Does not fit" is this
/// ordinary outcome, not an error.
///
/// Ownership: `solver`, `inventory` and `compiled` stay owned by the caller. The new
/// placement or diagnosis is owned by the caller: free it with `gang_placement_free` or
/// `gang_diagnosis_free`. It does not borrow the inventory. On failure, nothing is
/// written but a new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// A gang compiled against another inventory (or before its nodes changed) is compiled
/// again on the fly; when that fails, the errors are those of `gang_inventory_compile`
/// (e.g. `GANG_INVALID_REQUEST` for a level the inventory lacks).
/// `GANG_NULL_ARGUMENT` when an argument (other than `error_out`) is NULL.
///
/// # Safety
/// `solver` must be NULL or a live solver not used by another thread; `inventory` NULL
/// or a live inventory not being changed by another thread; `compiled` NULL or a live
/// compiled gang; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_place(
    solver: *mut gang_solver,
    inventory: *const gang_inventory,
    compiled: *const gang_compiled,
    status_out: *mut gang_status,
    placement_out: *mut *mut gang_placement,
    diagnosis_out: *mut *mut gang_diagnosis,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let s = gang_solver::get_mut(solver, "solver")?;
        let inv = gang_inventory::get(inventory, "inventory")?;
        let c = gang_compiled::get(compiled, "compiled")?;
        let out = OutcomeOut::new(status_out, placement_out, diagnosis_out)?;
        let outcome = inv.place_with(s, c)?;
        out.write(outcome);
        Ok(())
    })
}

/// Places a compiled gang like `gang_solver_place`, but answers "not now" without
/// building a diagnosis: for a scheduler that asks again every cycle about gangs that
/// keep waiting (a diagnosis costs far more than the answer).
///
/// On `GANG_OK`, writes to `*placement_out` either a new placement (the one
/// `gang_solver_place` returns) or NULL when the gang is not placed now (unschedulable
/// and undecided alike; call `gang_solver_place` for the reason).
///
/// Ownership: `solver`, `inventory` and `compiled` stay owned by the caller. A new
/// placement is owned by the caller: free it with `gang_placement_free`. On failure,
/// nothing is written but a new `gang_error` in `*error_out` if `error_out` is not
/// NULL.
///
/// Errors as `gang_solver_place`; `GANG_NULL_ARGUMENT` when an argument (other than
/// `error_out`) is NULL.
///
/// # Safety
/// As `gang_solver_place`.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_find(
    solver: *mut gang_solver,
    inventory: *const gang_inventory,
    compiled: *const gang_compiled,
    placement_out: *mut *mut gang_placement,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let s = gang_solver::get_mut(solver, "solver")?;
        let inv = gang_inventory::get(inventory, "inventory")?;
        let c = gang_compiled::get(compiled, "compiled")?;
        let out = Out::new(placement_out, "placement_out")?;
        let found = inv.find_with(s, c)?;
        out.write(found.map_or(std::ptr::null_mut(), |p| {
            gang_placement::into_raw(PlacementInner::new(p))
        }));
        Ok(())
    })
}

/// Compiles and places `gang` on `inventory` in one call, with a fresh solver. For
/// repeated queries, `gang_inventory_compile` once and `gang_solver_place` many times.
///
/// Outputs as `gang_solver_place`: on `GANG_OK`, the status, and a new placement or a
/// new diagnosis (the other set to NULL).
///
/// Ownership: `inventory` and `gang` stay owned by the caller and are not borrowed
/// afterwards. The new placement or diagnosis is owned by the caller: free it with
/// `gang_placement_free` or `gang_diagnosis_free`. On failure, nothing is written but a
/// new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// Returns errors as `gang_inventory_compile`; `GANG_NULL_ARGUMENT` when an argument
/// (other than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `gang` NULL or a live gang not being changed by another thread; the out-pointers NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_place(
    inventory: *const gang_inventory,
    gang: *const gang_gang,
    status_out: *mut gang_status,
    placement_out: *mut *mut gang_placement,
    diagnosis_out: *mut *mut gang_diagnosis,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        let g = gang_gang::get(gang, "gang")?;
        let out = OutcomeOut::new(status_out, placement_out, diagnosis_out)?;
        let outcome = inv.place(g)?;
        out.write(outcome);
        Ok(())
    })
}
