//! Python values read straight into core types, through the core's own `Deserialize`
//! impls (the same rules as scenario files), with no JSON text in between.
//!
//! [`Reader`] is a `serde::Deserializer` over a Python object. Numbers are read the
//! way numeric Python code expects: anything with `__index__` (numpy integers, 0-d
//! integer arrays) is an integer; anything `float()` accepts (numpy floats, 0-d float
//! arrays, `Decimal`) is a number, NaN and infinities rejected, `-0.0` read as `0.0`.
//! Mappings are read with string keys, lists, tuples and other iterables as sequences,
//! and the spec classes (`Node`, `Role`…) as the documents they stand for. Nesting is
//! limited to [`MAX_DEPTH`], so a self-referential list or dict is an error, not a
//! crash. `serde_path_to_error` keeps the path of the first problem (built only when
//! there is one), so errors name the field the user wrote.

use std::fmt;

use gang_core::ErrorKind;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

use crate::classes;
use crate::errors::edge_error;

/// Deepest nesting of lists and dicts read (a scenario document is about 8 deep).
pub const MAX_DEPTH: usize = 64;

/// An error while reading: its text (the path is added by `serde_path_to_error`).
#[derive(Debug)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError(msg.to_string())
    }
}

fn err(e: impl fmt::Display) -> ReadError {
    ReadError(e.to_string())
}

/// A number read from a Python value (see the module docs).
pub enum Number {
    Int(i64),
    UInt(u64),
    /// An integer too large for 64 bits, as its digits.
    Big(String),
    Float(f64),
}

/// `obj` as a number, if it is one: `None` for values that are not numbers at all
/// (str, bytes, containers, None, bool); an error for NaN and infinities.
pub fn number(obj: &Bound<'_, PyAny>) -> Result<Option<Number>, ReadError> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() {
        return Ok(None);
    }
    let int = if obj.is_instance_of::<PyInt>() {
        Some(obj.clone())
    } else if obj.is_instance_of::<PyFloat>() {
        None
    } else if has(obj, "__index__") && !is_bool_like(obj) {
        // A 1-element array has `__index__` but refuses it: read it as a float below,
        // or not at all.
        obj.call_method0("__index__").ok()
    } else {
        None
    };
    if let Some(i) = int {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Some(Number::Int(v)));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Some(Number::UInt(v)));
        }
        return Ok(Some(Number::Big(i.str().map_err(err)?.to_string())));
    }
    let float = if let Ok(f) = obj.cast::<PyFloat>() {
        Some(f.value())
    } else if has(obj, "__float__") && !is_container(obj) {
        obj.call_method0("__float__")
            .ok()
            .and_then(|f| f.extract::<f64>().ok())
    } else {
        None
    };
    match float {
        None => Ok(None),
        Some(v) if !v.is_finite() => Err(ReadError(format!("{v} is not a finite number"))),
        // -0.0 is zero, not a negative amount (the pattern matches both zeros).
        Some(0.0) => Ok(Some(Number::Float(0.0))),
        Some(v) => Ok(Some(Number::Float(v))),
    }
}

fn has(obj: &Bound<'_, PyAny>, name: &str) -> bool {
    obj.get_type().hasattr(name).unwrap_or(false)
}

/// numpy's `bool_` has `__index__` in old versions; a bool is not a number here.
fn is_bool_like(obj: &Bound<'_, PyAny>) -> bool {
    obj.get_type()
        .name()
        .is_ok_and(|n| n.to_str().is_ok_and(|n| n == "bool_" || n == "bool"))
}

fn is_container(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PyDict>()
        || obj
            .getattr("ndim")
            .is_ok_and(|n| n.extract::<u32>().is_ok_and(|n| n > 0))
}

/// A `str`'s text, or an error naming why not (a lone surrogate is not text).
pub fn text<'a>(s: &'a Bound<'_, PyString>) -> Result<std::borrow::Cow<'a, str>, ReadError> {
    s.to_cow()
        .map_err(|_| ReadError("not valid text (it contains a lone surrogate)".into()))
}

/// A serde `Deserializer` over one Python value.
pub struct Reader<'a, 'py> {
    obj: &'a Bound<'py, PyAny>,
    depth: usize,
}

impl<'a, 'py> Reader<'a, 'py> {
    pub fn new(obj: &'a Bound<'py, PyAny>) -> Self {
        Reader { obj, depth: 0 }
    }

    fn nested(&self) -> Result<usize, ReadError> {
        if self.depth >= MAX_DEPTH {
            return Err(ReadError(format!(
                "nested more than {MAX_DEPTH} levels deep (does it contain itself?)"
            )));
        }
        Ok(self.depth + 1)
    }
}

/// Reads `obj` into `T`. Errors are `kind` (InvalidScenario for documents,
/// InvalidRequest or InvalidInventory for keyword arguments) naming `at` + the path
/// inside `obj`.
pub fn read<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, at: &str, kind: ErrorKind) -> PyResult<T> {
    serde_path_to_error::deserialize(Reader::new(obj)).map_err(|e| {
        let path = e.path().to_string();
        // A key that is not a string has no name: the path ends at its mapping.
        let path = path.strip_suffix(".?").map(str::to_owned).unwrap_or(path);
        let found = if at.is_empty() {
            value_at(obj, &path)
        } else {
            None
        };
        let field = match (at.is_empty(), path == "." || path == "?") {
            (true, true) => "document".to_owned(),
            (true, false) => path,
            (false, true) => at.to_owned(),
            (false, false) if path.starts_with('[') => format!("{at}{path}"),
            (false, false) => format!("{at}.{path}"),
        };
        let value = obj_repr(obj);
        let reason = e.into_inner().0;
        // A value that cannot be an amount is an invalid quantity on every path (as
        // for keyword arguments), whatever the document's own error kind.
        let kind =
            if reason.contains("expected a quantity") || reason.contains("not a finite number") {
                ErrorKind::InvalidQuantity
            } else {
                kind
            };
        // A whole document (`from_dict`, `at` empty) is not the value of the field named:
        // quote the value found at the path, if it can be found.
        let value = if at.is_empty() {
            found.unwrap_or_default()
        } else {
            value
        };
        match kind {
            ErrorKind::InvalidScenario => edge_error(kind, &field, "", &reason),
            _ => edge_error(kind, &field, &value, &reason),
        }
    })
}

/// The value at `path` (`roles[0].count`, as `serde_path_to_error` writes it) inside
/// `obj`, for an error message: a str as its text, anything else as its short repr.
fn value_at(obj: &Bound<'_, PyAny>, path: &str) -> Option<String> {
    let mut cur = obj.clone();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, indices) = part.split_once('[').map_or((part, ""), |(k, i)| (k, i));
        if !key.is_empty() {
            cur = cur.get_item(key).ok()?;
        }
        for i in indices.split('[').filter(|i| !i.is_empty()) {
            cur = cur
                .get_item(i.strip_suffix(']')?.parse::<usize>().ok()?)
                .ok()?;
        }
    }
    Some(match cur.cast::<PyString>() {
        Ok(s) => text(s).ok()?.into_owned(),
        Err(_) => obj_repr(&cur),
    })
}

/// A short repr of a value for an error message (at most 80 characters).
pub fn obj_repr(obj: &Bound<'_, PyAny>) -> String {
    let r = obj
        .repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "<unprintable>".into());
    if r.chars().count() > 80 {
        let mut s: String = r.chars().take(77).collect();
        s.push_str("...");
        s
    } else {
        r
    }
}

impl<'de> de::Deserializer<'de> for Reader<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ReadError> {
        let obj = self.obj;
        if obj.is_none() {
            return v.visit_unit();
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return v.visit_bool(b.is_true());
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return match text(s)? {
                std::borrow::Cow::Borrowed(t) => v.visit_str(t),
                std::borrow::Cow::Owned(t) => v.visit_string(t),
            };
        }
        if let Some(n) = number(obj)? {
            return match n {
                Number::Int(i) => v.visit_i64(i),
                Number::UInt(u) => v.visit_u64(u),
                // Too large for 64 bits: the digits, so that a quantity says it overflows
                // and any other field that it has the wrong type.
                Number::Big(d) => v.visit_string(d),
                Number::Float(f) => v.visit_f64(f),
            };
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            let depth = self.nested()?;
            let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = d.iter().collect();
            return v.visit_map(Map {
                items: items.into_iter(),
                value: None,
                depth,
            });
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            let depth = self.nested()?;
            let items: Vec<Bound<'_, PyAny>> = obj
                .try_iter()
                .map_err(err)?
                .collect::<PyResult<_>>()
                .map_err(err)?;
            return v.visit_seq(Seq {
                items: items.into_iter(),
                depth,
            });
        }
        if let Some(doc) = classes::spec_document(obj) {
            return doc.deserialize_any(v).map_err(err);
        }
        if let Ok(q) = obj.cast::<classes::PyQuantity>() {
            return v.visit_string(q.get().0.to_string());
        }
        if obj.is_instance_of::<pyo3::types::PyBytes>() {
            return Err(ReadError(format!("bytes are not text: {}", obj_repr(obj))));
        }
        if let Ok(items) = obj.call_method0("items") {
            // Other mappings (MappingProxy, custom containers...).
            let depth = self.nested()?;
            let mut pairs = Vec::new();
            for pair in items.try_iter().map_err(err)? {
                let pair = pair.map_err(err)?;
                pairs.push(
                    pair.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                        .map_err(err)?,
                );
            }
            return v.visit_map(Map {
                items: pairs.into_iter(),
                value: None,
                depth,
            });
        }
        if let Ok(it) = obj.try_iter() {
            let depth = self.nested()?;
            let items: Vec<Bound<'_, PyAny>> = it.collect::<PyResult<_>>().map_err(err)?;
            return v.visit_seq(Seq {
                items: items.into_iter(),
                depth,
            });
        }
        let ty = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        Err(ReadError(format!(
            "a value of type {ty} cannot be read here: {}",
            obj_repr(obj)
        )))
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ReadError> {
        if self.obj.is_none() {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, ReadError> {
        // Unit variants are written as their names.
        match self.obj.cast::<PyString>() {
            Ok(s) => {
                let t = text(s)?.into_owned();
                v.visit_enum(t.into_deserializer())
            }
            Err(_) => Err(ReadError(format!(
                "expected a string, got {}",
                obj_repr(self.obj)
            ))),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, ReadError> {
        v.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

struct Map<'py, I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    items: I,
    value: Option<Bound<'py, PyAny>>,
    depth: usize,
}

impl<'de, 'py, I> de::MapAccess<'de> for Map<'py, I>
where
    I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
{
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some((k, val)) = self.items.next() else {
            return Ok(None);
        };
        let Ok(key) = k.cast::<PyString>() else {
            return Err(ReadError(format!(
                "keys must be strings, not {}",
                obj_repr(&k)
            )));
        };
        let key = text(key)?.into_owned();
        self.value = Some(val);
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let val = self
            .value
            .take()
            .ok_or_else(|| ReadError("a value without a key".into()))?;
        seed.deserialize(Reader {
            obj: &val,
            depth: self.depth,
        })
    }
}

struct Seq<'py, I: Iterator<Item = Bound<'py, PyAny>>> {
    items: I,
    depth: usize,
}

impl<'de, 'py, I: Iterator<Item = Bound<'py, PyAny>>> de::SeqAccess<'de> for Seq<'py, I> {
    type Error = ReadError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        match self.items.next() {
            None => Ok(None),
            Some(item) => seed
                .deserialize(Reader {
                    obj: &item,
                    depth: self.depth,
                })
                .map(Some),
        }
    }
}
