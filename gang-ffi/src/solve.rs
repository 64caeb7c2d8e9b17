//! The solver, the limits its queries stop at, and the two placement queries.

use std::time::{Duration, Instant};

use gang_core::{Limits, Solver};

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
/// `gang_solver_free`; its limits are set with `gang_solver_set_limits`. One thread at
/// a time (use one solver per thread); a solver may be used with any number of
/// inventories, one query at a time.
pub struct gang_solver {
    _private: [u8; 0],
}

unsafe impl Handle for gang_solver {
    type Inner = SolverInner;
    const KIND: Kind = Kind::Solver;
}

/// The work units a query may spend unless told otherwise (`gang_solver_new`; pass it
/// to `gang_solver_set_limits` to go back to the default). Equal to
/// `gang_core::Limits::DEFAULT_WORK` (a test checks it).
pub const GANG_DEFAULT_WORK: u64 = 1000000;

/// A solver and the limits its queries start from. The core's deadline is an instant;
/// the C caller gives a time span, made into an instant at the start of each query
/// ([`PerQuery::at`]), as Python's `timeout=` is.
pub(crate) struct SolverInner {
    solver: Solver,
    limits: PerQuery,
}

impl SolverInner {
    fn new(limits: PerQuery) -> SolverInner {
        SolverInner {
            solver: Solver::with_limits(limits.at(Instant::now())),
            limits,
        }
    }

    /// The solver, with its limits set for a query that starts now. The clock is read
    /// only when there is a timeout.
    fn for_query(&mut self) -> &mut Solver {
        if self.limits.timeout.is_some() {
            self.solver.set_limits(self.limits.at(Instant::now()));
        }
        &mut self.solver
    }

    fn set_limits(&mut self, limits: PerQuery) {
        self.limits = limits;
        self.solver.set_limits(limits.at(Instant::now()));
    }
}

/// The limits of every query of one solver: work units, and a time span from the
/// start of each query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PerQuery {
    work: u64,
    timeout: Option<Duration>,
}

impl PerQuery {
    /// `work` units and `timeout_us` microseconds per query, as `gang_solver_set_limits`
    /// takes them: a timeout of 0 is none.
    fn new(work: u64, timeout_us: u64) -> PerQuery {
        PerQuery {
            work,
            timeout: (timeout_us > 0).then(|| Duration::from_micros(timeout_us)),
        }
    }

    /// The core's limits for a query starting at `start`. A deadline too far away to be
    /// an `Instant` is none (as in Python).
    fn at(self, start: Instant) -> Limits {
        match self.timeout.and_then(|t| start.checked_add(t)) {
            Some(deadline) => Limits::work(self.work).deadline(deadline),
            None => Limits::work(self.work),
        }
    }
}

/// Makes a solver with the default limits: `GANG_DEFAULT_WORK` (1,000,000) work units
/// per query for multi-role gangs (nodes looked at, bounds and search patterns alike),
/// and no deadline (see `gang_solver_set_limits`).
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
        let limits = PerQuery::new(GANG_DEFAULT_WORK, 0);
        out.write(gang_solver::into_raw(SolverInner::new(limits)));
        Ok(())
    })
}

/// Makes a solver whose multi-role work may spend at most `budget` work units per
/// query, and no deadline; an exhausted budget yields `GANG_STATUS_UNDECIDED`, never a
/// false "does not fit". The same as `gang_solver_new` then
/// `gang_solver_set_limits(solver, budget, 0)`.
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
        let limits = PerQuery::new(budget, 0);
        out.write(gang_solver::into_raw(SolverInner::new(limits)));
        Ok(())
    })
}

/// Sets the limits of every later query of `solver` (`gang_solver_place`,
/// `gang_solver_find`), until set again: at most `work` work units per query (nodes
/// looked at, bounds and search patterns alike; `GANG_DEFAULT_WORK` is the default,
/// and 0 allows none, as in `gang_solver_new_with_budget`), and, unless `timeout_us` is
/// 0 (no deadline, the default), a deadline `timeout_us` microseconds after the start
/// of each query — measured from each call, not from this one, as Python's `timeout=`
/// is. For a limit on one call only, set it before that call and set it back after.
///
/// A query stopped by either limit answers `GANG_STATUS_UNDECIDED` (or a placement
/// whose `gang_placement_search_complete` is false), never a false "does not fit".
/// With a deadline the answer depends on the machine's speed; without one it is
/// deterministic. The deadline is checked every 1024 work units, so a query overshoots
/// it by at most that much work. Single-role gangs do no such work and are never
/// undecided; multi-role gangs that greedy packing places need far less than the
/// default. The solver keeps its caches.
///
/// Ownership: `solver` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `solver` is NULL, `GANG_INVALID_HANDLE` when it
/// is not a live solver.
///
/// # Safety
/// `solver` must be NULL or a live solver not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_solver_set_limits(
    solver: *mut gang_solver,
    work: u64,
    timeout_us: u64,
) -> gang_result {
    ffi_boundary!({
        let s = gang_solver::get_mut(solver, "solver")?;
        s.set_limits(PerQuery::new(work, timeout_us));
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
        let s = gang_solver::get_mut(solver, "solver")?.for_query();
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
        let s = gang_solver::get_mut(solver, "solver")?.for_query();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_work_is_the_cores() {
        assert_eq!(GANG_DEFAULT_WORK, Limits::DEFAULT_WORK);
        let s = SolverInner::new(PerQuery::new(GANG_DEFAULT_WORK, 0));
        assert_eq!(s.solver.limits(), Solver::new().limits());
    }

    #[test]
    fn a_timeout_of_zero_is_no_deadline() {
        let start = Instant::now();
        assert_eq!(PerQuery::new(5, 0).at(start), Limits::work(5));
        assert_eq!(PerQuery::new(0, 0).at(start), Limits::work(0));
        let at = PerQuery::new(5, 7).at(start);
        assert_eq!(
            at,
            Limits::work(5).deadline(start + Duration::from_micros(7))
        );
        // Too far away to be an instant: no deadline rather than a panic.
        let far = PerQuery::new(5, u64::MAX).at(start);
        assert!(far.deadline.is_none_or(|d| d > start), "{far:?}");
    }

    #[test]
    fn the_deadline_counts_from_each_query_not_from_the_setting() {
        let timeout = Duration::from_millis(50);
        let mut s = SolverInner::new(PerQuery::new(GANG_DEFAULT_WORK, 0));
        s.set_limits(PerQuery::new(9, timeout.as_micros() as u64));
        std::thread::sleep(Duration::from_millis(2));
        let query = Instant::now();
        let limits = s.for_query().limits();
        assert_eq!(limits.work, 9);
        let deadline = limits.deadline.expect("a timeout is a deadline");
        assert!(deadline >= query + timeout, "measured from the query");
        let later = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        let next = s.for_query().limits().deadline.unwrap();
        assert!(
            next > later + timeout && next > deadline,
            "and again for the next one"
        );
        // Without a timeout, the limits are the work alone and the clock is not read.
        s.set_limits(PerQuery::new(GANG_DEFAULT_WORK, 0));
        assert_eq!(s.for_query().limits(), Limits::default());
    }
}
