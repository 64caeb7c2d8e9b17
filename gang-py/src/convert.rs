//! Conversions at the edge: Python values ↔ JSON values ↔ core values.
//!
//! Documents given as dicts go through the core's JSON parsers (so errors name the JSON
//! path exactly as for files); keyword arguments are converted one field at a time, and
//! a value that cannot be converted is a `GangError` naming the field.

use gang_core::request::QuantitySpec;
use gang_core::{ErrorKind, Quantity};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::errors::edge_error;
use crate::spec;

/// Converts a Python value (dicts, lists, tuples, str, int, float, bool, None, and the
/// spec classes `Node`, `Role`, `Gang`, `Taint`, `Toleration`, `Requirement`,
/// `Quantity`) into JSON text, keeping the order of dict keys. `at` is the JSON path so
/// far, for the error.
pub fn to_json(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<String> {
    let mut out = String::new();
    write_json(obj, at, &mut out)?;
    Ok(out)
}

fn write_json(obj: &Bound<'_, PyAny>, at: &str, out: &mut String) -> PyResult<()> {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    if obj.is_none() {
        out.push_str("null");
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if obj.is_instance_of::<PyInt>() {
        if let Ok(v) = obj.extract::<i64>() {
            out.push_str(&v.to_string());
        } else if let Ok(v) = obj.extract::<u64>() {
            out.push_str(&v.to_string());
        } else {
            // Too large for JSON integers here: keep the digits as text, so that a
            // quantity reports "overflows" with its field and any other field reports
            // a type error.
            out.push_str(&quote(&obj.str()?.to_string()));
        }
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        if !v.is_finite() {
            return Err(edge_error(
                ErrorKind::InvalidScenario,
                if at.is_empty() { "document" } else { at },
                &v.to_string(),
                "not a finite number",
            ));
        }
        out.push_str(&serde_json::to_string(&v).unwrap_or_else(|_| "null".to_owned()));
    } else if let Ok(s) = obj.cast::<PyString>() {
        out.push_str(&quote(s.to_str()?));
    } else if let Ok(d) = obj.cast::<PyDict>() {
        out.push('{');
        for (i, (k, v)) in d.iter().enumerate() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(edge_error(
                    ErrorKind::InvalidScenario,
                    if at.is_empty() { "document" } else { at },
                    &k.repr()?.to_string(),
                    "keys must be strings",
                ));
            };
            let key = key.to_str()?;
            if i > 0 {
                out.push(',');
            }
            out.push_str(&quote(key));
            out.push(':');
            write_json(&v, &format!("{}{key}", prefix(at)), out)?;
        }
        out.push('}');
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        out.push('[');
        for (i, item) in obj.try_iter()?.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json(&item?, &format!("{at}[{i}]"), out)?;
        }
        out.push(']');
    } else if let Some(text) = spec::spec_json(obj)? {
        out.push_str(&text);
    } else if let Ok(q) = obj.cast::<spec::PyQuantity>() {
        out.push_str(&quote(&q.get().0.to_string()));
    } else if let Ok(items) = obj.call_method0("items") {
        // Other mappings (MappingProxy, custom containers...).
        let d = PyDict::new(obj.py());
        for pair in items.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?.extract()?;
            d.set_item(k, v)?;
        }
        write_json(d.as_any(), at, out)?;
    } else {
        return Err(edge_error(
            ErrorKind::InvalidScenario,
            if at.is_empty() { "document" } else { at },
            &obj.repr()?.to_string(),
            &format!(
                "cannot be converted to JSON (type {})",
                obj.get_type().name()?
            ),
        ));
    }
    Ok(())
}

fn prefix(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!("{at}.")
    }
}

/// Converts JSON into plain Python values (dict, list, str, int, float, bool, None).
pub fn from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for item in a {
                list.append(from_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, item) in o {
                d.set_item(k, from_value(py, item)?)?;
            }
            d.into_any()
        }
    })
}

/// An amount as given from Python: `int` (whole units), `str` (Kubernetes quantity),
/// `float` (read through its shortest decimal text, so `1.5` is exactly 1500m) or a
/// `Quantity`. Validation (negative, malformed, overflow) happens when the inventory or
/// request is built, so the error names the field; a value of another type is an
/// `InvalidQuantity` naming `field` right away.
pub fn amount(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<QuantitySpec> {
    if obj.is_instance_of::<PyBool>() {
        return Err(edge_error(
            ErrorKind::InvalidQuantity,
            field,
            &obj.repr()?.to_string(),
            "a quantity must be an int, a str such as \"16Gi\", a float, or a Quantity",
        ));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(v) => QuantitySpec::Units(v),
            Err(_) => QuantitySpec::Text(obj.str()?.to_string()),
        });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(QuantitySpec::Text(s.to_str()?.to_owned()));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        if !v.is_finite() {
            return Err(edge_error(
                ErrorKind::InvalidQuantity,
                field,
                &v.to_string(),
                "not a finite number",
            ));
        }
        // Python's repr is the shortest text that reads back as the same float.
        return Ok(QuantitySpec::Text(f.repr()?.to_string()));
    }
    if let Ok(q) = obj.cast::<spec::PyQuantity>() {
        return Ok(QuantitySpec::Exact(q.get().0));
    }
    Err(edge_error(
        ErrorKind::InvalidQuantity,
        field,
        &obj.repr()?.to_string(),
        "a quantity must be an int, a str such as \"16Gi\", a float, or a Quantity",
    ))
}

/// An amount back to Python as it was given: int for whole units, str for text.
pub fn amount_to_py<'py>(py: Python<'py>, a: &QuantitySpec) -> PyResult<Bound<'py, PyAny>> {
    Ok(match a {
        QuantitySpec::Units(n) => n.into_pyobject(py)?.into_any(),
        QuantitySpec::Text(t) => PyString::new(py, t).into_any(),
        QuantitySpec::Exact(q) => quantity_to_py(py, *q)?,
    })
}

/// A quantity back to Python: int for whole units, else its text (`"1500m"`).
pub fn quantity_to_py<'py>(py: Python<'py>, q: Quantity) -> PyResult<Bound<'py, PyAny>> {
    Ok(if q.millis() % 1000 == 0 {
        (q.millis() / 1000).into_pyobject(py)?.into_any()
    } else {
        PyString::new(py, &q.to_string()).into_any()
    })
}

/// Extracts an optional mapping of `str → T` with `convert`, naming `field.key` on error.
pub fn str_map<T>(
    obj: Option<&Bound<'_, PyAny>>,
    field: &str,
    mut convert: impl FnMut(&Bound<'_, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Vec<(String, T)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let items = obj.call_method0("items").map_err(|_| {
        edge_error(
            ErrorKind::InvalidScenario,
            field,
            &obj.repr().map(|r| r.to_string()).unwrap_or_default(),
            "expected a mapping",
        )
    })?;
    let mut out = Vec::new();
    for pair in items.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?.extract()?;
        let Ok(key) = k.cast::<PyString>() else {
            return Err(edge_error(
                ErrorKind::InvalidScenario,
                field,
                &k.repr()?.to_string(),
                "keys must be strings",
            ));
        };
        let key = key.to_str()?.to_owned();
        let value = convert(&v, &format!("{field}.{key}"))?;
        out.push((key, value));
    }
    Ok(out)
}

/// A string value, or an error naming the field.
pub fn string(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(edge_error(
            kind,
            field,
            &obj.repr()?.to_string(),
            "expected a string",
        )),
    }
}

/// A count (`u32`), or an error of `kind` naming the field.
pub fn count(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<u32> {
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        if let Ok(v) = obj.extract::<u32>() {
            return Ok(v);
        }
        return Err(edge_error(
            kind,
            field,
            &obj.str()?.to_string(),
            "must be between 0 and 4294967295",
        ));
    }
    Err(edge_error(
        kind,
        field,
        &obj.repr()?.to_string(),
        "expected an int",
    ))
}

/// Items of a Python iterable (None is empty).
pub fn items<'py>(obj: Option<&Bound<'py, PyAny>>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(Vec::new()),
        Some(o) => o.try_iter()?.collect(),
    }
}

/// Parses JSON text into a `T` through the core parser family: errors name the JSON
/// path, as `InvalidScenario`.
pub fn json_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.to_owned());
    }
    if let Ok(b) = obj.extract::<Vec<u8>>() {
        return String::from_utf8(b).map_err(|e| {
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
        &obj.repr()?.to_string(),
        "expected JSON text (str or bytes)",
    ))
}
