//! `gang.sim`'s native half: JSON text in, JSON text out, over `gang_sim::run_json`.
//!
//! The Python module `gang/sim.py` builds the run document (`{"cluster", "trace",
//! "config"}`, see gang-sim's README) and parses the answer; everything the simulator
//! decides is gang-sim's. The GIL is released while a simulation runs, so threads (and
//! `concurrent.futures` thread pools) run simulations in parallel.
//!
//! Errors: a [`SimError`] becomes the `GangError` class of its kind, built with
//! [`errors::edge_error`] (so `kind`, `code`, `field`, `value` and `reason` are set as
//! for every other gang error) with the simulator's own message (which names the trace
//! line and field) as `str(e)`, and two more attributes: `line` (1-based trace line, or
//! `None`) and `sim_kind` (gang-sim's `SimError::kind()`, e.g. `"invalid_trace"`).
//!
//! | gang-sim | Python |
//! |---|---|
//! | `invalid_trace` | `InvalidScenario`, or the gang-core class its message starts with (a job gang-core rejects: `InvalidQuantity`, `InvalidRequest`, `Contradictory`) |
//! | `invalid_config` | `InvalidScenario` (or the gang-core class, as above) |
//! | `invalid_cluster` | the gang-core class its message starts with (`InvalidInventory`, `InvalidQuantity`, `InvalidScenario`) |
//! | `io` | `InvalidScenario`, `field` the path (`gang.sim` checks paths first and raises `FileNotFoundError`) |
//! | `internal` | `InternalError` |
//!
//! gang-sim keeps a gang-core error as its message only (`SimError` is gang-core-free);
//! the class is read back from the first words of gang-core's own rendering
//! (`"invalid quantity at …"`), which `tests/test_sim.py` checks for every kind.

use gang_core::ErrorKind;
use gang_sim::{Experiment, SimError};
use pyo3::prelude::*;

use crate::errors::{self, guard};

/// The gang-core error kind a message rendered by gang-core starts with.
fn core_kind_of(message: &str) -> Option<ErrorKind> {
    // Trace and config errors wrap the core's text; look at where it starts.
    let m = message.trim_start();
    [
        ("invalid quantity at ", ErrorKind::InvalidQuantity),
        ("invalid inventory at ", ErrorKind::InvalidInventory),
        ("invalid request at ", ErrorKind::InvalidRequest),
        ("contradictory request at ", ErrorKind::Contradictory),
        ("invalid scenario at ", ErrorKind::InvalidScenario),
    ]
    .into_iter()
    .find(|(prefix, _)| m.starts_with(prefix))
    .map(|(_, k)| k)
}

/// A configuration error's field as a path in the run document: checks of the
/// configuration name its own fields (`horizon`), parsing names the document's
/// (`config.readiness.timeuot`, `cluster.generate.flavor`).
fn config_path(field: &str) -> String {
    let top = field.split(['.', '[']).next().unwrap_or("");
    if field.is_empty()
        || matches!(
            top,
            "config" | "cluster" | "trace" | "document" | "variants"
        )
    {
        field.to_owned()
    } else {
        format!("config.{field}")
    }
}

/// A [`SimError`] as the Python exception of its kind (see the module docs).
pub fn sim_error(err: &SimError) -> PyErr {
    let message = err.to_string();
    let (kind, field, line, reason) = match err {
        SimError::Trace {
            line,
            field,
            message: m,
        } => (
            core_kind_of(m).unwrap_or(ErrorKind::InvalidScenario),
            field.clone(),
            Some(*line),
            m.clone(),
        ),
        SimError::Config { field, message: m } => (
            core_kind_of(m).unwrap_or(ErrorKind::InvalidScenario),
            config_path(field),
            None,
            m.clone(),
        ),
        SimError::Cluster { field, message: m } => (
            core_kind_of(m).unwrap_or(ErrorKind::InvalidInventory),
            field.clone(),
            None,
            m.clone(),
        ),
        SimError::Io { path, message: m } => {
            (ErrorKind::InvalidScenario, path.clone(), None, m.clone())
        }
        SimError::Internal(m) => {
            return errors::InternalError::new_err(format!(
                "internal error in gang-sim (please report, with the inputs): {m}"
            ))
        }
        // SimError is #[non_exhaustive]: a kind added later is still a GangError.
        other => (
            ErrorKind::InvalidScenario,
            other.field().to_owned(),
            None,
            message.clone(),
        ),
    };
    let py_err = errors::edge_error(kind, &field, "", &reason);
    Python::attach(|py| {
        let v = py_err.value(py);
        // str(e) is gang-sim's message, which names the trace line and field.
        let _ = v.setattr("args", (message,));
        let _ = v.setattr("line", line);
        let _ = v.setattr("sim_kind", err.kind());
    });
    py_err
}

/// Runs the simulation a run document describes: `document` is the JSON text of
/// `{"cluster", "trace", "config"}` (gang-sim's `RunDocument`); returns the JSON text of
/// `{"jobs": [...], "summary": {...}, "timeline": [...]}`. Relative paths in the
/// document are taken from the current directory. The GIL is released while it runs.
///
/// Private: use `gang.sim.simulate`.
#[pyfunction]
pub fn _sim_run(py: Python<'_>, document: &str) -> PyResult<String> {
    let document = document.to_owned();
    py.detach(|| guard(|| gang_sim::run_json(&document)))?
        .map_err(|e| sim_error(&e))
}

/// Reads an experiment file (gang-sim's `Experiment`: a run document and named
/// variants of its configuration, the files in `examples/sim/`) and returns the JSON
/// text of `{"description": str, "variants": [{"name": str, "document": {...}}]}`: each
/// variant's run document, merged and with its paths made relative to the file's
/// folder, exactly as gang-sim runs it.
///
/// Private: use `gang.sim.experiment`.
#[pyfunction]
pub fn _sim_experiment(py: Python<'_>, path: &str) -> PyResult<String> {
    let path = path.to_owned();
    py.detach(|| {
        guard(|| -> Result<String, SimError> {
            let e = Experiment::from_file(&path)?;
            let mut variants = Vec::with_capacity(e.variants.len());
            for (i, v) in e.variants.iter().enumerate() {
                let doc = e.document(i)?;
                let doc =
                    serde_json::to_value(&doc).map_err(|x| SimError::Internal(x.to_string()))?;
                variants.push(serde_json::json!({"name": v.name, "document": doc}));
            }
            Ok(serde_json::json!({"description": e.description, "variants": variants}).to_string())
        })
    })?
    .map_err(|e| sim_error(&e))
}

/// Registers the functions on the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_experiment, m)?)?;
    Ok(())
}
