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
//! The class is gang-core's kind when gang-core rejected the input
//! (`SimError::core_kind`: a job's quantity, role or policy shape, the cluster), so the
//! class is the one gang-core's own error would raise; otherwise:
//!
//! | gang-sim | Python |
//! |---|---|
//! | `invalid_trace`, `invalid_config` | `InvalidScenario` |
//! | `invalid_cluster` | `InvalidInventory` |
//! | `io` | `InvalidScenario`, `field` the path (`gang.sim` checks paths first and raises `FileNotFoundError`) |
//! | `internal` | `InternalError` |
//!
//! Nothing here reads the message: [`sim_error`] is one `match` over the error.
//!
//! The schema `gang.sim` shows (its columns, its policy labels, how a variant's patch
//! merges into a configuration) is gang-sim's too, read through [`_sim_schema`],
//! [`_sim_policy_label`] and [`_sim_merge`]; `tests/test_sim_schema.py` checks that the
//! Python module uses them.

use gang_core::ErrorKind;
use gang_sim::{Experiment, SimConfig, SimError};
use pyo3::prelude::*;

use crate::errors::{self, guard};

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
    let core = err.core_kind();
    let (kind, field, line, reason) = match err {
        SimError::Trace {
            line,
            field,
            message: m,
            ..
        } => (
            core.unwrap_or(ErrorKind::InvalidScenario),
            field.clone(),
            Some(*line),
            m.clone(),
        ),
        SimError::Config {
            field, message: m, ..
        } => (
            core.unwrap_or(ErrorKind::InvalidScenario),
            config_path(field),
            None,
            m.clone(),
        ),
        SimError::Cluster {
            field, message: m, ..
        } => (
            core.unwrap_or(ErrorKind::InvalidInventory),
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
            core.unwrap_or(ErrorKind::InvalidScenario),
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

/// gang-sim's schema, for `gang.sim`: `{"job_columns": [...], "timeline_columns":
/// [...]}`, the fields of a job record and of a timeline sample in gang-sim's CSV
/// order.
///
/// Private: use `gang.sim.JOB_COLUMNS` and `gang.sim.TIMELINE_COLUMNS`.
#[pyfunction]
pub fn _sim_schema() -> String {
    let glossary: serde_json::Map<String, serde_json::Value> = gang_sim::SUMMARY_GLOSSARY
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).into()))
        .collect();
    serde_json::json!({
        "job_columns": gang_sim::JOB_COLUMNS,
        "timeline_columns": gang_sim::TIMELINE_COLUMNS,
        "summary_columns": gang_sim::SUMMARY_COLUMNS,
        "trace_columns": TRACE_COLUMNS,
        "glossary": glossary,
        "completion_bases": ["censored", "completed"],
        "default_slowdown": gang_sim::default_slowdown(),
        "cluster_sources": gang_sim::CLUSTER_SOURCES,
        "trace_sources": gang_sim::TRACE_SOURCES,
        "trace_formats": gang_sim::TRACE_FORMATS,
    })
    .to_string()
}

/// The fields of a [`gang_sim::TraceRow`], in order.
const TRACE_COLUMNS: &[&str] = &[
    "id",
    "submit",
    "duration",
    "members",
    "gpus_per_member",
    "gpus_total",
    "gpu_hours",
    "tenant",
    "priority",
    "sensitivity",
    "policy",
];

/// Summary rows (gang-sim's [`gang_sim::summary_row`]) of several runs: `summaries`
/// is the JSON text of `[[name, summary], ...]`; returns the JSON text of a list of
/// rows. `completion` is the basis (`"censored"` or `"completed"`).
///
/// Private: `gang.sim`'s `summary_table` and sweeps use it.
#[pyfunction]
#[pyo3(signature = (summaries, tenant, completion))]
pub fn _sim_summary_rows(
    summaries: &str,
    tenant: Option<&str>,
    completion: &str,
) -> PyResult<String> {
    let runs: Vec<(String, serde_json::Value)> = serde_json::from_str(summaries)
        .map_err(|e| errors::InternalError::new_err(format!("summaries from gang.sim: {e}")))?;
    // Arguments of the call, not of a run document: named as they are.
    let arg_error = |e: SimError, value: &str| {
        errors::edge_error(ErrorKind::InvalidScenario, e.field(), value, &e.to_string())
    };
    let basis: gang_sim::CompletionBasis =
        completion.parse().map_err(|e| arg_error(e, completion))?;
    let rows = guard(|| -> Result<Vec<serde_json::Value>, SimError> {
        runs.iter()
            .map(|(n, s)| gang_sim::summary_row(n, s, tenant, basis).map(serde_json::Value::Object))
            .collect()
    })?
    .map_err(|e| arg_error(e, tenant.unwrap_or("")))?;
    Ok(serde_json::Value::Array(rows).to_string())
}

/// Which runs gave identical results, and why (gang-sim's [`gang_sim::identical_runs`]):
/// `summaries` is the JSON text of `[[name, summary], ...]`; returns the JSON text of
/// `[{"names": [...], "reason": "..."}]`.
///
/// Private: `gang.sim.report` says it instead of drawing one line under another.
#[pyfunction]
pub fn _sim_identical(summaries: &str) -> PyResult<String> {
    let runs: Vec<(String, serde_json::Value)> = serde_json::from_str(summaries)
        .map_err(|e| errors::InternalError::new_err(format!("summaries from gang.sim: {e}")))?;
    let same = guard(|| gang_sim::identical_runs(&runs))?.map_err(|e| sim_error(&e))?;
    serde_json::to_string(&same).map_err(|e| errors::InternalError::new_err(e.to_string()))
}

/// What a run document's cluster and trace are, without running it: `what` is
/// `"cluster"` (the cluster document, JSON text), `"trace"` (the jobs as
/// [`gang_sim::TraceRow`]s, JSON text of a list; a generated trace with a target
/// load rescaled on the cluster), `"gpus"` (the cluster's GPUs) or `"load"` (the
/// trace's offered load on the cluster, [`gang_sim::offered_load`]).
///
/// Private: `gang.sim.cluster_inventory`, `trace_jobs` and `offered_load` use it.
#[pyfunction]
pub fn _sim_inspect(py: Python<'_>, document: &str, what: &str) -> PyResult<String> {
    let (document, what) = (document.to_owned(), what.to_owned());
    py.detach(|| {
        guard(|| -> Result<String, SimError> {
            let doc = gang_sim::RunDocument::from_json(&document)?;
            let cluster = doc.cluster()?;
            let resource = &doc.config.gpu_resource;
            Ok(match what.as_str() {
                "cluster" => cluster.to_json(),
                "gpus" => serde_json::json!(gang_sim::cluster_gpus(&cluster, resource)).to_string(),
                "trace" => {
                    let trace = doc.trace(&cluster)?;
                    serde_json::to_string(&gang_sim::trace_rows(&trace, resource)?)
                        .map_err(|e| SimError::Internal(e.to_string()))?
                }
                "load" => {
                    let trace = doc.trace(&cluster)?;
                    let gpus = gang_sim::cluster_gpus(&cluster, resource);
                    serde_json::json!(gang_sim::offered_load(&trace, gpus, resource)?).to_string()
                }
                other => return Err(SimError::Internal(format!("_sim_inspect: {other:?}"))),
            })
        })
    })?
    .map_err(|e| sim_error(&e))
}

/// The label gang-sim gives a policy (what a job record's `policy` field and the
/// summary's `by_policy` keys say): `policy` is the JSON text of a policy (a string
/// such as `"timed(rack, 600)"`, or its object form), or `null` for the default.
/// Raises `InvalidScenario` naming `config.policy` for a policy gang-sim rejects.
///
/// Private: `gang.sim` names results and variants with it.
#[pyfunction]
pub fn _sim_policy_label(policy: &str) -> PyResult<String> {
    let policy = policy.to_owned();
    guard(|| -> Result<String, SimError> {
        let value: serde_json::Value = serde_json::from_str(&policy)
            .map_err(|e| SimError::Internal(format!("policy JSON from gang.sim: {e}")))?;
        let mut doc = serde_json::Map::new();
        if !value.is_null() {
            doc.insert("policy".into(), value);
        }
        let config = SimConfig::from_json(&serde_json::Value::Object(doc).to_string())?;
        Ok(config.policy.to_string())
    })?
    .map_err(|e| sim_error(&e))
}

/// gang-sim's variant merge ([`gang_sim::merge_config`]): `patch` (JSON text) merged
/// into `base` (JSON text), returned as JSON text.
///
/// Private: `gang.sim.compare` and `gang.sim.sweep` merge with it.
#[pyfunction]
pub fn _sim_merge(base: &str, patch: &str) -> PyResult<String> {
    let parse = |what: &str, text: &str| {
        serde_json::from_str::<serde_json::Value>(text)
            .map_err(|e| errors::InternalError::new_err(format!("{what} JSON from gang.sim: {e}")))
    };
    let mut base = parse("base", base)?;
    gang_sim::merge_config(&mut base, &parse("patch", patch)?);
    Ok(base.to_string())
}

/// Runs the simulation a run document describes: `document` is the JSON text of
/// `{"cluster", "trace", "config"}` (gang-sim's `RunDocument`); returns the JSON text of
/// `{"jobs": [...], "summary": {...}, "timeline": [...]}` (with `keep="summary"`:
/// `{"summary": {...}}` alone, for sweeps that ship results back). Relative paths in the
/// document are taken from the current directory. The GIL is released while it runs.
///
/// Private: use `gang.sim.simulate`.
#[pyfunction]
#[pyo3(signature = (document, keep = "jobs"))]
pub fn _sim_run(py: Python<'_>, document: &str, keep: &str) -> PyResult<String> {
    let document = document.to_owned();
    let summary_only = match keep {
        "jobs" => false,
        "summary" => true,
        other => {
            return Err(errors::edge_error(
                ErrorKind::InvalidScenario,
                "keep",
                other,
                "keep is \"summary\" or \"jobs\"",
            ))
        }
    };
    py.detach(|| {
        guard(|| -> Result<String, SimError> {
            if !summary_only {
                return gang_sim::run_json(&document);
            }
            let r = gang_sim::RunDocument::from_json(&document)?
                .simulation()?
                .run()?;
            serde_json::to_string(&serde_json::json!({"summary": r.summary}))
                .map_err(|e| SimError::Internal(e.to_string()))
        })
    })?
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
    m.add_function(wrap_pyfunction!(_sim_schema, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_policy_label, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_merge, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_summary_rows, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(_sim_identical, m)?)?;
    Ok(())
}
