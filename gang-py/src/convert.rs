//! Keyword arguments into core values, one field at a time: a value that cannot be
//! converted is a `GangError` of the kind the core would have used, naming the field
//! the user wrote. Documents (dicts, nested objects) go through [`crate::pyde`].

use gang_core::request::QuantitySpec;
use gang_core::{ErrorKind, Quantity};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};

use crate::classes;
use crate::errors::edge_error;
use crate::pyde::{self, number, obj_repr, Number};

const AMOUNT: &str =
    "a quantity must be an int, a number, a str such as \"16Gi\" or \"500m\", or a Quantity";

/// An amount as given from Python: anything with `__index__` (whole units), anything
/// `float()` accepts (read through its shortest decimal text, so `1.5` is exactly
/// 1500m), a Kubernetes quantity string, or a `Quantity` — resolved to an exact
/// quantity right away, so an invalid one is an `InvalidQuantity` naming `field`.
pub fn amount(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Quantity> {
    quantity_spec(obj, field)?
        .resolve(field)
        .map_err(crate::errors::to_py_err)
}

/// [`amount`] as the core's exact [`QuantitySpec`].
pub fn exact(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<QuantitySpec> {
    amount(obj, field).map(QuantitySpec::Exact)
}

fn quantity_spec(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<QuantitySpec> {
    let bad = |reason: &str| edge_error(ErrorKind::InvalidQuantity, field, &obj_repr(obj), reason);
    if let Ok(q) = obj.cast::<classes::PyQuantity>() {
        return Ok(QuantitySpec::Exact(q.get().0));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let t = pyde::text(s).map_err(|e| bad(&e.0))?;
        return Ok(QuantitySpec::Text(t.into_owned()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(bad(AMOUNT));
    }
    match number(obj).map_err(|e| bad(&e.0))? {
        Some(Number::Int(i)) => Ok(QuantitySpec::Units(i)),
        Some(Number::UInt(u)) => Ok(QuantitySpec::Text(u.to_string())),
        Some(Number::Big(d)) => Ok(QuantitySpec::Text(d)),
        // Rust prints the shortest text that reads back as the same float.
        Some(Number::Float(f)) => Ok(QuantitySpec::Text(format!("{f}"))),
        None => Err(bad(AMOUNT)),
    }
}

/// A string value (a `str`, without lone surrogates), or an error of `kind` naming the
/// field.
pub fn string(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => pyde::text(s)
            .map(|t| t.into_owned())
            .map_err(|e| edge_error(kind, field, &obj_repr(obj), &e.0)),
        Err(_) => Err(edge_error(kind, field, &obj_repr(obj), "expected a string")),
    }
}

/// An optional string (None is `None`).
pub fn opt_string(
    obj: Option<&Bound<'_, PyAny>>,
    field: &str,
    kind: ErrorKind,
) -> PyResult<Option<String>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => string(o, field, kind).map(Some),
    }
}

/// An integer (anything with `__index__`, not a bool) between `min` and `max`.
pub fn int_in(
    obj: &Bound<'_, PyAny>,
    field: &str,
    kind: ErrorKind,
    min: i64,
    max: u64,
) -> PyResult<u64> {
    let bad = |reason: String| edge_error(kind, field, &obj_repr(obj), &reason);
    let range = || format!("must be an integer from {min} to {max}");
    if obj.is_instance_of::<PyBool>() {
        return Err(bad("expected an integer, not a bool".into()));
    }
    let n = if obj.is_instance_of::<pyo3::types::PyFloat>() {
        None
    } else {
        number(obj).map_err(|e| bad(e.0))?
    };
    match n {
        Some(Number::Int(i)) if i >= min && (i as u64) <= max && i >= 0 => Ok(i as u64),
        Some(Number::UInt(u)) if u <= max => Ok(u),
        Some(Number::Int(_) | Number::UInt(_) | Number::Big(_)) => Err(bad(range())),
        _ => Err(bad("expected an integer".into())),
    }
}

/// A priority (`i32`, Kubernetes PriorityClass values: negative allowed), or an error of
/// `kind` naming the field.
pub fn priority(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<i32> {
    let bad = |reason: &str| edge_error(kind, field, &obj_repr(obj), reason);
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<pyo3::types::PyFloat>() {
        return Err(bad("expected an integer"));
    }
    let range = "must be an integer from -2147483648 to 2147483647";
    match number(obj).map_err(|e| bad(&e.0))? {
        Some(Number::Int(i)) => i32::try_from(i).map_err(|_| bad(range)),
        Some(Number::UInt(u)) => i32::try_from(u).map_err(|_| bad(range)),
        Some(Number::Big(_)) => Err(bad(range)),
        _ => Err(bad("expected an integer")),
    }
}

/// A count (`u32`), or an error of `kind` naming the field.
pub fn count(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<u32> {
    int_in(obj, field, kind, 0, u64::from(u32::MAX)).map(|n| n as u32)
}

/// An optional count (None is `None`).
pub fn opt_count(
    obj: Option<&Bound<'_, PyAny>>,
    field: &str,
    kind: ErrorKind,
) -> PyResult<Option<u32>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => count(o, field, kind).map(Some),
    }
}

/// A search budget: None for the default, else a non-negative integer.
pub fn budget(obj: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(gang_core::Solver::DEFAULT_SEARCH_BUDGET),
        Some(o) => int_in(o, "search_budget", ErrorKind::InvalidRequest, 0, u64::MAX),
    }
}

/// A time limit for one call, in seconds: None for none, else a finite number ≥ 0.
pub fn timeout(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<std::time::Duration>> {
    let Some(o) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let bad = |reason: &str| edge_error(ErrorKind::InvalidRequest, "timeout", &obj_repr(o), reason);
    if o.is_instance_of::<PyBool>() {
        return Err(bad("expected a number of seconds, not a bool"));
    }
    let secs: f64 = o
        .extract()
        .map_err(|_| bad("expected a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(secs)
        .map(Some)
        .map_err(|_| bad("must be a finite number of seconds, at least 0"))
}

/// Extracts an optional mapping of `str → T` with `convert`, naming `field.key` on error.
pub fn str_map<T>(
    obj: Option<&Bound<'_, PyAny>>,
    field: &str,
    kind: ErrorKind,
    mut convert: impl FnMut(&Bound<'_, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Vec<(String, T)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let items = obj
        .call_method0("items")
        .map_err(|_| edge_error(kind, field, &obj_repr(obj), "expected a mapping (a dict)"))?;
    let mut out = Vec::new();
    for pair in items.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?.extract()?;
        let Ok(key) = k.cast::<PyString>() else {
            return Err(edge_error(
                kind,
                field,
                &obj_repr(&k),
                "keys must be strings",
            ));
        };
        let key = pyde::text(key)
            .map_err(|e| edge_error(kind, field, &obj_repr(&k), &e.0))?
            .into_owned();
        let value = convert(&v, &format!("{field}.{key}"))?;
        out.push((key, value));
    }
    Ok(out)
}

/// Items of a Python iterable (None is empty); a str, bytes or mapping where a list
/// goes is an error of `kind` naming the field.
pub fn items<'py>(
    obj: Option<&Bound<'py, PyAny>>,
    field: &str,
    kind: ErrorKind,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(Vec::new()),
        Some(o) => {
            if o.is_instance_of::<PyString>() || o.is_instance_of::<PyBytes>() {
                return Err(edge_error(
                    kind,
                    field,
                    &obj_repr(o),
                    "expected a list, not a single string",
                ));
            }
            let it = o
                .try_iter()
                .map_err(|_| edge_error(kind, field, &obj_repr(o), "expected a list"))?;
            it.collect()
        }
    }
}

/// JSON text given as `str` or `bytes`, or an `InvalidScenario` error.
pub fn json_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return string(obj, "document", ErrorKind::InvalidScenario)
            .or_else(|_| Ok(s.to_string_lossy().into_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return String::from_utf8(b.as_bytes().to_vec()).map_err(|e| {
            edge_error(
                ErrorKind::InvalidScenario,
                "document",
                "<bytes>",
                &format!("not UTF-8: {e}"),
            )
        });
    }
    Err(edge_error(
        ErrorKind::InvalidScenario,
        "document",
        &obj_repr(obj),
        "expected JSON text (str or bytes)",
    ))
}

/// Parses JSON text into `T`; errors name the JSON path, as `InvalidScenario`.
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> PyResult<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = serde_path_to_error::deserialize::<_, T>(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path == "?" {
            "document".to_owned()
        } else {
            path
        };
        edge_error(
            ErrorKind::InvalidScenario,
            &field,
            "",
            &e.into_inner().to_string(),
        )
    })?;
    de.end()
        .map_err(|e| edge_error(ErrorKind::InvalidScenario, "document", "", &e.to_string()))?;
    Ok(v)
}

/// Parses JSON text describing a request (a gang, a role) into `T`: text that is not
/// JSON is an `InvalidScenario` (as for every document), a field that does not describe
/// a valid request an `InvalidRequest` naming its JSON path — the class the keyword
/// arguments and dicts give for the same field.
pub fn parse_request_json<T: serde::de::DeserializeOwned>(text: &str) -> PyResult<T> {
    let doc: serde_json::Value = parse_json(text)?;
    serde_path_to_error::deserialize(doc).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path == "?" {
            "document".to_owned()
        } else {
            path
        };
        let reason = e.into_inner().to_string();
        // As in pyde::read: what cannot be an amount is an invalid quantity everywhere.
        let kind =
            if reason.contains("expected a quantity") || reason.contains("not a finite number") {
                ErrorKind::InvalidQuantity
            } else {
                ErrorKind::InvalidRequest
            };
        edge_error(kind, &field, "", &reason)
    })
}

/// The repr of a string, with single quotes as Python writes it.
pub fn repr_str(s: &str) -> String {
    Python::attach(|py| {
        PyString::new(py, s)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| format!("'{s}'"))
    })
}
