//! `gang.kube`'s native half: Kubernetes objects (JSON or YAML text) in, JSON text out,
//! over the gang-kube crate.
//!
//! `_kube_load` returns one document: the cluster in the scenario format (what
//! `gang.Inventory.from_json` reads), every workload found with its gang (what
//! `gang.Gang.from_json` reads), gang-kube's report and the warnings. The Python module
//! `gang/kube.py` turns that into `gang.Inventory` and `gang.Gang` objects; nothing is
//! decided here that gang-kube does not decide.
//!
//! Errors: a `gang_kube::Error` becomes a `GangError` class (built with
//! [`errors::edge_error`], or [`errors::to_py_err`] for the gang-core error behind a
//! `core` one), its message gang-kube's (`file: Kind/ns/name: field: "value": reason`),
//! with attributes `file`, `object`, `location`, `field`, `value`, `reason` and
//! `kube_kind` / `kube_code` (gang-kube's stable `ErrorKind`):
//!
//! | gang-kube | Python |
//! |---|---|
//! | `malformed`, `unexpected_kind`, `invalid_value` | `InvalidScenario` |
//! | `missing_label`, `invalid_topology` | `InvalidInventory` |
//! | `invalid_minimum`, `unknown_level` | `InvalidRequest` |
//! | `core` | the class of gang-core's error (`InvalidInventory`, `InvalidRequest`, …) |

use gang_core::ErrorKind as CoreKind;
use gang_kube::{workloads, Cluster, ClusterOptions, ErrorKind, Objects, TopologySource};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use serde_json::{json, Value};

use crate::errors::{self, guard};
use crate::pyde;

/// A gang-kube error as the Python exception of its kind (see the module docs).
pub fn kube_error(err: &gang_kube::Error) -> PyErr {
    let field = err.field().unwrap_or("");
    let value = err.value().unwrap_or("");
    let py_err = match err.core() {
        Some(core) if err.kind() == ErrorKind::Core => errors::to_py_err(core.clone()),
        _ => {
            let kind = match err.kind() {
                ErrorKind::MissingLabel | ErrorKind::InvalidTopology => CoreKind::InvalidInventory,
                ErrorKind::InvalidMinimum | ErrorKind::UnknownLevel => CoreKind::InvalidRequest,
                // Malformed, UnexpectedKind, InvalidValue, and kinds added later.
                _ => CoreKind::InvalidScenario,
            };
            errors::edge_error(kind, field, value, err.reason())
        }
    };
    Python::attach(|py| {
        let v = py_err.value(py);
        // str(e) is gang-kube's message: file, object, field, value, reason.
        let _ = v.setattr("args", (err.to_string(),));
        let _ = v.setattr("file", err.source_name());
        let _ = v.setattr("object", err.object());
        let _ = v.setattr("location", err.location());
        let _ = v.setattr("field", err.field());
        let _ = v.setattr("value", err.value());
        let _ = v.setattr("reason", err.reason());
        let _ = v.setattr("kube_kind", err.kind().as_str());
        let _ = v.setattr("kube_code", err.kind().code());
    });
    py_err
}

/// How the topology is chosen, from `_kube_load`'s `topology` argument (JSON text):
/// `null` or `"auto"`, `"detect"`, a list of label keys, `{"topology": NAME}` or
/// `{"flavor": NAME}`.
pub(crate) fn topology_source(spec: &Value) -> Result<TopologySource, String> {
    match spec {
        Value::Null => Ok(TopologySource::Auto),
        Value::String(s) if s == "auto" => Ok(TopologySource::Auto),
        Value::String(s) if s == "detect" => Ok(TopologySource::Detect),
        Value::Array(levels) => levels
            .iter()
            .map(|l| l.as_str().map(str::to_owned).ok_or("levels must be strings"))
            .collect::<Result<Vec<_>, _>>()
            .map(TopologySource::Levels)
            .map_err(str::to_owned),
        Value::Object(m) if m.len() == 1 => match m.iter().next() {
            Some((k, Value::String(name))) if k == "topology" => {
                Ok(TopologySource::Topology(name.clone()))
            }
            Some((k, Value::String(name))) if k == "flavor" => {
                Ok(TopologySource::Flavor(name.clone()))
            }
            _ => Err("give {\"topology\": NAME} or {\"flavor\": NAME}".into()),
        },
        _ => Err(
            "\"auto\", \"detect\", a list of label keys, {\"topology\": NAME} or {\"flavor\": NAME}"
                .into(),
        ),
    }
}

/// A gang-kube error as data, in a workload's `error` / `priority_error`.
fn error_json(e: &gang_kube::Error) -> Value {
    json!({
        "kind": e.kind().as_str(), "object": e.object(), "field": e.field(),
        "value": e.value(), "reason": e.reason(), "message": e.to_string(),
    })
}

pub(crate) fn serde_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub(crate) enum LoadError {
    Kube(gang_kube::Error),
    Arg(&'static str, String, String),
}

impl From<gang_kube::Error> for LoadError {
    fn from(e: gang_kube::Error) -> Self {
        LoadError::Kube(e)
    }
}

fn load(
    sources: &[(String, String)],
    topology: &str,
    workload: Option<&str>,
    namespace: Option<&str>,
    extended_toleration: bool,
) -> Result<String, LoadError> {
    let mut objects = Objects::new();
    for (name, text) in sources {
        objects.add(name, text)?;
    }
    // As `kubectl apply -n NS -f` (and the CLI): objects naming no namespace are in
    // `namespace`, else `default` (a PodGroup and its pods then meet).
    objects.apply_namespace(namespace.unwrap_or("default"));
    let spec: Value = serde_json::from_str(topology)
        .map_err(|e| LoadError::Arg("topology", topology.to_owned(), e.to_string()))?;
    let source =
        topology_source(&spec).map_err(|m| LoadError::Arg("topology", spec.to_string(), m))?;

    let all = workloads(&objects)?;
    // Objects of kinds gang does not read (a Deployment): named, with what is read, as
    // the CLI names them.
    let unread: Vec<Value> = objects
        .unread()
        .iter()
        .map(|r| {
            json!({"object": r.to_string(), "kind": r.kind, "api_version": r.api_version,
                   "source": r.source, "position": r.position,
                   "message": format!(
                       "Kind {} (apiVersion {}) in {} is not a workload gang reads; supported: {}",
                       r.kind, r.api_version, r.source, gang_kube::WORKLOAD_KINDS.join(", "))})
        })
        .collect();
    let chosen: Vec<_> = match workload {
        None => all.iter().collect(),
        Some(reference) => {
            let found: Vec<_> = all.iter().filter(|w| w.is(reference, namespace)).collect();
            if found.is_empty() {
                let names: Vec<String> = all.iter().map(|w| w.name()).collect();
                return Err(LoadError::Arg(
                    "workload",
                    reference.to_owned(),
                    format!(
                        "no such workload{} among {}{}",
                        namespace
                            .map(|n| format!(" in namespace {n}"))
                            .unwrap_or_default(),
                        if names.is_empty() {
                            "none found".to_owned()
                        } else {
                            names.join(", ")
                        },
                        unread
                            .iter()
                            .map(|u| format!("; {}", u["message"].as_str().unwrap_or_default()))
                            .collect::<String>()
                    ),
                ));
            }
            found
        }
    };
    let mut options = ClusterOptions::new()
        .topology(source)
        .extended_resource_toleration(extended_toleration);
    if workload.is_some() {
        // The gang asked about: its members already bound are not "other pods".
        for w in &chosen {
            options = options.ignore_pods(&w.member_pods);
        }
    }
    let cluster = Cluster::from_objects(&objects, &options)?;
    // The inventory document: gang-core's own node descriptions, in the scenario format.
    let doc = json!({
        "topology": {"levels": cluster.topology().levels()},
        "nodes": serde_value(&cluster.nodes()),
    });
    // Validate it now, so that errors name the Node object (gang-kube's core_error).
    cluster.inventory()?;

    let mut out = Vec::with_capacity(chosen.len());
    for w in chosen {
        let mut entry = serde_value(w);
        let mut checks = w.checks.clone();
        checks.extend(cluster.checks(w));
        entry["checks"] = serde_value(&checks);
        entry["name"] = Value::String(w.name());
        // The parts `_kube_place_parts` places (empty: placed as one gang; null: the
        // request cannot be resolved, as `error` says).
        entry["parts"] = cluster.parts(w).map_or(Value::Null, |p| serde_value(&p));
        // Its priority (value, class, source, field, preempts), or null with why not
        // (a PriorityClass or WorkloadPriorityClass not in the input).
        match cluster.priority_of(w) {
            Ok(p) => {
                entry["priority"] = serde_value(&p);
                entry["priority_error"] = Value::Null;
            }
            Err(e) => {
                entry["priority"] = Value::Null;
                entry["priority_error"] = error_json(&e);
            }
        }
        match cluster.gang_for(w) {
            Ok(g) => {
                entry["gang"] = serde_value(&g);
                entry["error"] = Value::Null;
            }
            // Asked for by name: its error is the answer.
            Err(e) if workload.is_some() => return Err(e.into()),
            Err(e) => {
                entry["gang"] = Value::Null;
                entry["error"] = error_json(&e);
            }
        }
        out.push(entry);
    }
    Ok(json!({
        "cluster": doc,
        "workloads": out,
        "report": serde_value(cluster.report()),
        "unread": unread,
        "objects": objects.refs().iter().map(|r| {
            json!({"object": r.to_string(), "kind": r.kind, "api_version": r.api_version,
                   "namespace": r.namespace, "name": r.name, "source": r.source,
                   "position": r.position})
        }).collect::<Vec<_>>(),
    })
    .to_string())
}

/// Reads Kubernetes objects and returns the JSON text of `{"cluster": <cluster document>,
/// "workloads": [...], "report": {...}, "objects": [...]}`.
///
/// `sources` are `gang.kube.load`'s inputs (paths, texts, `(name, text)` pairs, parsed
/// objects: see [`source`]); `topology` is `None`/`"auto"`, `"detect"`, label keys,
/// `{"topology": NAME}` or `{"flavor": NAME}`; `workload` (kubectl style, `job/train`
/// or a bare name) and `namespace` select workloads (objects naming no namespace are
/// put in `namespace`, else `default`, as kubectl does) — then the selected workloads'
/// bound member pods are not counted as usage, and a gang that cannot be built raises;
/// `extended_resource_toleration` is gang-kube's
/// `ClusterOptions::extended_resource_toleration` (GKE's admission plugin).
///
/// Private: use `gang.kube.load`.
#[pyfunction]
#[pyo3(signature = (*sources, topology=None, workload=None, namespace=None, extended_resource_toleration=false))]
pub fn _kube_load(
    py: Python<'_>,
    sources: &Bound<'_, PyTuple>,
    topology: Option<&Bound<'_, PyAny>>,
    workload: Option<&str>,
    namespace: Option<&str>,
    extended_resource_toleration: bool,
) -> PyResult<String> {
    let sources = read_sources(sources)?;
    let topology = topology_arg(topology)?;
    let workload = workload.map(str::to_owned);
    let namespace = namespace.map(str::to_owned);
    py.detach(|| {
        guard(|| {
            load(
                &sources,
                &topology,
                workload.as_deref(),
                namespace.as_deref(),
                extended_resource_toleration,
            )
        })
    })?
    .map_err(load_error)
}

/// A `LoadError` as the Python exception (see the module docs).
pub(crate) fn load_error(e: LoadError) -> PyErr {
    match e {
        LoadError::Kube(e) => kube_error(&e),
        LoadError::Arg(field, value, reason) => {
            errors::edge_error(CoreKind::InvalidRequest, field, &value, &reason)
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_kube_load, m)?)?;
    Ok(())
}

/// One input of `gang.kube.load` as a `(name, text)` pair: a `(name, text)` pair; a
/// text (`bytes`, or a `str` holding a newline or starting with `{` or `[`); a path
/// (a `str` otherwise, or an `os.PathLike`: the file is read, its path is its name);
/// or parsed objects (a mapping or a list, written back as JSON).
fn source(item: &Bound<'_, PyAny>, i: usize) -> PyResult<(String, String)> {
    let py = item.py();
    let unnamed = || format!("<input {}>", i + 1);
    let text_of = |t: &Bound<'_, PyAny>| -> PyResult<String> {
        match t.cast::<PyBytes>() {
            Ok(b) => Ok(std::str::from_utf8(b.as_bytes())
                .map_err(|e| {
                    PyValueError::new_err(format!("gang.kube.load: input {}: {e}", i + 1))
                })?
                .to_owned()),
            Err(_) => t.str().map(|s| s.to_string()),
        }
    };
    if let Ok(t) = item.cast::<PyTuple>() {
        if t.len() == 2 && t.get_item(0)?.is_instance_of::<PyString>() {
            return Ok((t.get_item(0)?.extract()?, text_of(&t.get_item(1)?)?));
        }
    }
    if item.is_instance_of::<PyBytes>() {
        return Ok((unnamed(), text_of(item)?));
    }
    let os = py.import("os")?;
    let path_like = item.is_instance(&os.getattr("PathLike")?)?;
    if let (false, Ok(s)) = (path_like, item.cast::<PyString>()) {
        let s = s.to_str()?;
        let t = s.trim_start();
        if s.contains('\n') || t.starts_with('{') || t.starts_with('[') {
            return Ok((unnamed(), s.to_owned()));
        }
    }
    if path_like || item.is_instance_of::<PyString>() {
        let path: String = os.call_method1("fspath", (item,))?.extract()?;
        if path == "-" {
            return Err(PyValueError::new_err(
                "gang.kube.load: read standard input yourself and pass its text",
            ));
        }
        return Ok((path.clone(), read_file_capped(py, &path)?));
    }
    if item.is_instance_of::<PyList>()
        || item.is_instance(&py.import("collections.abc")?.getattr("Mapping")?)?
    {
        // Read at the edge as every gang-py document is (numpy integers and floats are
        // numbers; a value that is not JSON data is an InvalidScenario naming its path).
        let name = unnamed();
        let value: Value = pyde::read(item, &name, CoreKind::InvalidScenario)?;
        return Ok((name, value.to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "gang.kube.load: input {} must be a path, a text, a (name, text) pair or parsed objects, not {}",
        i + 1,
        item.get_type().name()?
    )))
}

/// The cap on one file read from Python (`gang.kube.load`, `Inventory.from_kube`,
/// `Gang.from_kube`, `gang.load_scenario`): `GANG_MAX_INPUT_BYTES` as the CLI reads it,
/// else 256 MiB (gang-sim's `limits.max_input_bytes`).
fn max_input_bytes() -> PyResult<u64> {
    match std::env::var_os("GANG_MAX_INPUT_BYTES") {
        None => Ok(gang_sim::DEFAULT_MAX_INPUT_BYTES),
        Some(v) => match v.to_str().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(n) if n > 0 => Ok(n),
            _ => Err(PyValueError::new_err(format!(
                "GANG_MAX_INPUT_BYTES={}: not a positive number of bytes",
                v.to_string_lossy().chars().take(40).collect::<String>()
            ))),
        },
    }
}

/// A Python file object read through `std::io::Read`, so that gang-sim's capped,
/// streaming UTF-8 reader reads it.
struct PyFile<'py>(Bound<'py, PyAny>);

impl std::io::Read for PyFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let chunk = self
            .0
            .call_method1("read", (buf.len(),))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let bytes = chunk
            .cast::<PyBytes>()
            .map_err(|e| std::io::Error::other(e.to_string()))?
            .as_bytes();
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }
}

/// The text of the file at `path`, at most [`max_input_bytes`] bytes, checked as UTF-8
/// while it streams in (`/dev/zero` stops at the cap, `/dev/urandom` at its first bad
/// byte). Python's own `open()` opens it, so an unreadable file is its `OSError`
/// (`FileNotFoundError`…, with `filename`); a file too large or not UTF-8 is
/// `InvalidScenario` naming the path, as gang.sim says of the files it reads.
pub(crate) fn read_file_capped(py: Python<'_>, path: &str) -> PyResult<String> {
    let max = max_input_bytes()?;
    let f = py
        .import("builtins")?
        .getattr("open")?
        .call1((path, "rb"))?;
    let text = gang_sim::textio::read_text(&mut PyFile(f.clone()), max);
    f.call_method0("close")?;
    text.map_err(|e| {
        use gang_sim::textio::ReadError;
        let reason = match &e {
            ReadError::TooLarge { .. } => format!("{e} (set GANG_MAX_INPUT_BYTES to read more)"),
            e => e.to_string(),
        };
        let cut: String = path.chars().take(200).collect();
        let err = errors::edge_error(CoreKind::InvalidScenario, "", "", &reason);
        let v = err.value(py);
        let _ = v.setattr("args", (format!("{cut}: {reason}"),));
        let _ = v.setattr("file", path);
        err
    })
}

/// How the topology is chosen, as `_kube_load` reads it: `None`, `"auto"`,
/// `"detect"`, a mapping (`{"topology": NAME}` / `{"flavor": NAME}`) or label keys.
pub(crate) fn topology_arg(topology: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let Some(t) = topology.filter(|t| !t.is_none()) else {
        return Ok("null".to_owned());
    };
    let py = t.py();
    if let Ok(s) = t.cast::<PyString>() {
        let s = s.to_str()?;
        if s != "auto" && s != "detect" {
            return Err(PyValueError::new_err(format!(
                "gang.kube.load: topology must be 'auto', 'detect', a list of label keys, \
                 {{'topology': NAME}} or {{'flavor': NAME}}, not {}",
                t.repr()?
            )));
        }
        return Ok(serde_json::Value::String(s.to_owned()).to_string());
    }
    let json = py.import("json")?;
    let mapping = py.import("collections.abc")?.getattr("Mapping")?;
    let spec = if t.is_instance(&mapping)? {
        py.import("builtins")?.getattr("dict")?.call1((t,))?
    } else {
        py.import("builtins")?.getattr("list")?.call1((t,))?
    };
    json.call_method1("dumps", (spec,))?.extract()
}

/// `gang.kube.load(*sources, …)`'s document, read here: what `_kube_load` returns,
/// parsed, for the classmethods `Inventory.from_kube` and `Gang.from_kube` (so the
/// extension never imports the Python module `gang.kube`, which imports it).
pub fn load_document(
    sources: &Bound<'_, PyTuple>,
    topology: Option<&Bound<'_, PyAny>>,
    workload: Option<&str>,
    namespace: Option<&str>,
) -> PyResult<Value> {
    let text = _kube_load(sources.py(), sources, topology, workload, namespace, false)?;
    serde_json::from_str(&text).map_err(|e| errors::InternalError::new_err(e.to_string()))
}

/// Every input of `gang.kube.load` as `(name, text)` pairs (see [`source`]).
pub(crate) fn read_sources(sources: &Bound<'_, PyTuple>) -> PyResult<Vec<(String, String)>> {
    if sources.is_empty() {
        return Err(PyTypeError::new_err(
            "gang.kube.load: give at least one file or text",
        ));
    }
    sources
        .iter()
        .enumerate()
        .map(|(i, s)| source(&s, i))
        .collect()
}
