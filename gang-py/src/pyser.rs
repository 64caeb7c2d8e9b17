//! Core values straight into Python data (dict, list, str, int, float, bool, None)
//! through their `Serialize` impls — the same documents as the core's JSON, with no
//! JSON text in between — and hashed by content the same way.

use std::hash::{Hash, Hasher};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::BoundObject;
use serde::ser::{self, Serialize};

/// An error while writing Python data.
#[derive(Debug)]
pub struct WriteError(pub String);

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

impl ser::Error for WriteError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        WriteError(msg.to_string())
    }
}

impl From<PyErr> for WriteError {
    fn from(e: PyErr) -> Self {
        WriteError(e.to_string())
    }
}

/// `v` as plain Python data, keys in the core's order (fields as declared, maps as
/// given).
pub fn to_py<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    v.serialize(Writer { py })
        .map_err(|e| crate::errors::InternalError::new_err(e.0))
}

#[derive(Clone, Copy)]
struct Writer<'py> {
    py: Python<'py>,
}

type Out<'py> = Result<Bound<'py, PyAny>, WriteError>;

fn any<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Out<'py> {
    v.into_pyobject(py)
        .map(|b| b.into_any().into_bound())
        .map_err(|e| WriteError(e.into().to_string()))
}

struct Seq<'py> {
    py: Python<'py>,
    list: Bound<'py, PyList>,
}

struct Map<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
}

impl<'py> ser::Serializer for Writer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = WriteError;
    type SerializeSeq = Seq<'py>;
    type SerializeTuple = Seq<'py>;
    type SerializeTupleStruct = Seq<'py>;
    type SerializeTupleVariant = Seq<'py>;
    type SerializeMap = Map<'py>;
    type SerializeStruct = Map<'py>;
    type SerializeStructVariant = Map<'py>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        any(self.py, f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        any(self.py, v.to_string())
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        any(self.py, v)
    }
    fn serialize_none(self) -> Out<'py> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Out<'py> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Out<'py> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Out<'py> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Out<'py> {
        let d = PyDict::new(self.py);
        d.set_item(variant, v.serialize(self)?)?;
        Ok(d.into_any())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'py>, WriteError> {
        Ok(Seq {
            py: self.py,
            list: PyList::empty(self.py),
        })
    }
    fn serialize_tuple(self, n: usize) -> Result<Seq<'py>, WriteError> {
        self.serialize_seq(Some(n))
    }
    fn serialize_tuple_struct(self, _: &'static str, n: usize) -> Result<Seq<'py>, WriteError> {
        self.serialize_seq(Some(n))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        n: usize,
    ) -> Result<Seq<'py>, WriteError> {
        self.serialize_seq(Some(n))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'py>, WriteError> {
        Ok(Map {
            py: self.py,
            dict: PyDict::new(self.py),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, n: usize) -> Result<Map<'py>, WriteError> {
        self.serialize_map(Some(n))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        n: usize,
    ) -> Result<Map<'py>, WriteError> {
        self.serialize_map(Some(n))
    }
}

impl<'py> Seq<'py> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WriteError> {
        self.list.append(v.serialize(Writer { py: self.py })?)?;
        Ok(())
    }
}

macro_rules! seq_impl {
    ($($tr:ident :: $m:ident),*) => {$(
        impl<'py> ser::$tr for Seq<'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = WriteError;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WriteError> {
                self.push(v)
            }
            fn end(self) -> Out<'py> {
                Ok(self.list.into_any())
            }
        }
    )*};
}
seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<'py> ser::SerializeMap for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = WriteError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), WriteError> {
        self.key = Some(k.serialize(Writer { py: self.py })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WriteError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| WriteError("a value without a key".into()))?;
        self.dict
            .set_item(key, v.serialize(Writer { py: self.py })?)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        Ok(self.dict.into_any())
    }
}

macro_rules! struct_impl {
    ($($tr:ident),*) => {$(
        impl<'py> ser::$tr for Map<'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = WriteError;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, k: &'static str, v: &T) -> Result<(), WriteError> {
                self.dict.set_item(k, v.serialize(Writer { py: self.py })?)?;
                Ok(())
            }
            fn end(self) -> Out<'py> {
                number_or(self.py, self.dict)
            }
        }
    )*};
}
struct_impl!(SerializeStruct, SerializeStructVariant);

/// The key under which serde_json (with `arbitrary_precision`, which gang-core uses so
/// a number keeps the text it was written with) serialises a number: a one-field struct.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A number serde_json wrote as `{NUMBER_TOKEN: text}` becomes a Python `int` (any
/// size) or `float`; any other struct stays the dict it is.
fn number_or<'py>(py: Python<'py>, dict: Bound<'py, PyDict>) -> Out<'py> {
    if dict.len() != 1 {
        return Ok(dict.into_any());
    }
    let Some(text) = dict.get_item(NUMBER_TOKEN)? else {
        return Ok(dict.into_any());
    };
    let text: String = text.extract()?;
    let builtins = py.import("builtins")?;
    let kind = if text.contains(['.', 'e', 'E']) {
        "float"
    } else {
        "int"
    };
    Ok(builtins.getattr(kind)?.call1((text,))?)
}

// ------------------------------------------------------------------------- hashing

/// A hash of `v`'s content, stable within a process: what its `Serialize` impl writes,
/// fed to a hasher (never text).
pub fn hash_of<T: Serialize + ?Sized>(v: &T) -> isize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    // Hashing cannot fail: the hasher takes every value.
    let _ = v.serialize(HashWriter { h: &mut h });
    h.finish() as isize
}

struct HashWriter<'a> {
    h: &'a mut std::collections::hash_map::DefaultHasher,
}

impl HashWriter<'_> {
    fn re(&mut self) -> HashWriter<'_> {
        HashWriter { h: self.h }
    }
}

macro_rules! hash_prim {
    ($($m:ident: $t:ty),*) => {$(
        fn $m(self, v: $t) -> Result<(), WriteError> {
            (stringify!($m), v).hash(self.h);
            Ok(())
        }
    )*};
}

impl<'a> ser::Serializer for HashWriter<'a> {
    type Ok = ();
    type Error = WriteError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = MapHash<'a>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    hash_prim!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8]);

    fn serialize_f32(self, v: f32) -> Result<(), WriteError> {
        v.to_bits().hash(self.h);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), WriteError> {
        v.to_bits().hash(self.h);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), WriteError> {
        0u8.hash(self.h);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), WriteError> {
        1u8.hash(self.h);
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), WriteError> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), WriteError> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        i: u32,
        _: &'static str,
    ) -> Result<(), WriteError> {
        i.hash(self.h);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), WriteError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        i: u32,
        _: &'static str,
        v: &T,
    ) -> Result<(), WriteError> {
        i.hash(self.h);
        v.serialize(self)
    }
    fn serialize_seq(self, n: Option<usize>) -> Result<Self, WriteError> {
        n.hash(self.h);
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, WriteError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, WriteError> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        i: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, WriteError> {
        i.hash(self.h);
        Ok(self)
    }
    fn serialize_map(self, n: Option<usize>) -> Result<MapHash<'a>, WriteError> {
        n.hash(self.h);
        Ok(MapHash {
            h: self.h,
            sum: 0,
            entry: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, WriteError> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        i: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, WriteError> {
        i.hash(self.h);
        Ok(self)
    }
}

macro_rules! hash_compound {
    ($($tr:ident :: $m:ident),*) => {$(
        impl ser::$tr for HashWriter<'_> {
            type Ok = ();
            type Error = WriteError;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WriteError> {
                v.serialize(self.re())
            }
            fn end(self) -> Result<(), WriteError> {
                Ok(())
            }
        }
    )*};
}
hash_compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// Maps hash the same whatever their order (they compare so): the entries' own hashes
/// are summed.
pub struct MapHash<'a> {
    h: &'a mut std::collections::hash_map::DefaultHasher,
    sum: u64,
    entry: Option<std::collections::hash_map::DefaultHasher>,
}

impl ser::SerializeMap for MapHash<'_> {
    type Ok = ();
    type Error = WriteError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), WriteError> {
        let mut e = std::collections::hash_map::DefaultHasher::new();
        k.serialize(HashWriter { h: &mut e })?;
        self.entry = Some(e);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WriteError> {
        let mut e = self.entry.take().unwrap_or_default();
        v.serialize(HashWriter { h: &mut e })?;
        self.sum = self.sum.wrapping_add(e.finish());
        Ok(())
    }
    fn end(self) -> Result<(), WriteError> {
        self.sum.hash(self.h);
        Ok(())
    }
}

macro_rules! hash_struct {
    ($($tr:ident),*) => {$(
        impl ser::$tr for HashWriter<'_> {
            type Ok = ();
            type Error = WriteError;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, k: &'static str, v: &T) -> Result<(), WriteError> {
                k.hash(self.h);
                v.serialize(self.re())
            }
            fn end(self) -> Result<(), WriteError> {
                Ok(())
            }
        }
    )*};
}
hash_struct!(SerializeStruct, SerializeStructVariant);
