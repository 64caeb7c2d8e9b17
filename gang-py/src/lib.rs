//! Python bindings for `gang` (import name `gang`): thin newtypes over the core types,
//! Python exceptions mapped from the core error kinds in one place, the GIL released
//! around solver calls. No placement logic lives here.
//!
//! The hand-written package `python/gang/__init__.py` re-exports this native module
//! (`gang._gang`); `python/gang/_gang.pyi` are its stubs.

mod classes;
mod convert;
mod dunder;
mod errors;
mod html;
mod inventory;
mod kube;
mod kube_place;
mod lifecycle;
mod outcome;
mod preempt;
mod pyde;
mod pyser;
mod reports;
mod scenario;
mod sim;
mod spec;
mod state;

use pyo3::prelude::*;

/// Native part of the `gang` package; import `gang` instead.
#[pymodule]
fn _gang(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<spec::PyQuantity>()?;
    m.add_class::<spec::PyTaint>()?;
    m.add_class::<spec::PyToleration>()?;
    m.add_class::<spec::PyRequirement>()?;
    m.add_class::<spec::PyNode>()?;
    m.add_class::<spec::PyRole>()?;
    m.add_class::<spec::PyGang>()?;
    m.add_class::<inventory::PyInventory>()?;
    m.add_class::<inventory::PyCompiledGang>()?;
    m.add_class::<outcome::PyPlacement>()?;
    m.add_class::<outcome::PyAssignment>()?;
    m.add_class::<outcome::PyDiagnosis>()?;
    m.add_class::<reports::PyRoleReport>()?;
    m.add_class::<reports::PyExclusions>()?;
    m.add_class::<reports::PyDomainReport>()?;
    m.add_class::<reports::PyRoleFit>()?;
    m.add_class::<reports::PyRelaxation>()?;
    m.add_class::<reports::PySliceReport>()?;
    m.add_class::<reports::PyExclusionCause>()?;
    m.add_class::<reports::PyFewerMembers>()?;
    m.add_class::<lifecycle::PyReservationId>()?;
    m.add_class::<lifecycle::PyReservation>()?;
    m.add_class::<lifecycle::PyLost>()?;
    m.add_class::<lifecycle::PyOvercommit>()?;
    m.add_class::<lifecycle::PyAdmission>()?;
    m.add_class::<lifecycle::PySpreadOutcome>()?;
    m.add_class::<preempt::PyPreemption>()?;
    m.add_class::<scenario::PyScenario>()?;
    m.add_function(wrap_pyfunction!(scenario::load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(html::_html_table, m)?)?;
    sim::register(m)?;
    kube::register(m)?;
    kube_place::register(m)?;
    m.add(
        "DEFAULT_SEARCH_BUDGET",
        gang_core::Solver::DEFAULT_SEARCH_BUDGET,
    )?;
    m.add("HOSTNAME_LEVEL", gang_core::HOSTNAME_LEVEL)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Private and dunder names stay out of `__all__` (PyO3 lists every added name).
    let all = m.index()?;
    for name in [
        "_panic_for_tests",
        "_html_table",
        "_sim_run",
        "_sim_experiment",
        "_sim_schema",
        "_sim_policy_label",
        "_sim_merge",
        "_sim_summary_rows",
        "_sim_inspect",
        "_sim_identical",
        "_kube_load",
        "_kube_place_parts",
        "_kube_place",
        "__version__",
    ] {
        all.call_method1("remove", (name,))?;
    }
    Ok(())
}

/// Panics inside the boundary guard, so tests can check that a Rust panic becomes
/// `gang.InternalError` (silently: nothing on stderr) rather than crashing or raising
/// a non-`GangError`. Private: not in `gang.__all__`.
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    errors::guard(|| {
        let v: Vec<u32> = Vec::new();
        // An out-of-bounds index: a genuine panic, not a constructed error.
        std::hint::black_box(&v)[std::hint::black_box(3)]
    })
    .map(|_| ())
}
