//! Duplicate mapping keys in YAML: read as a JSON value where a mapping that repeats a
//! key keeps the repeated key under [`DUPLICATE`], so the object and the field can be
//! named once the object is known ([`duplicate`]). Kubernetes refuses them
//! (`kubectl apply` reports "mapping key already defined"); last-wins would read `cpu: 1`
//! then `cpu: 2` as 2 without a word.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The key under which a mapping records its first repeated key.
const DUPLICATE: &str = "\u{0}duplicate key";

/// A JSON value read from YAML, repeated keys recorded (see the module).
pub(crate) struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // `.nan` and `.inf` are YAML numbers but no Kubernetes quantity or count: said
        // so, not read as null.
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a finite number (YAML .nan or .inf)")))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let Strict(v) = map.next_value()?;
            if out.contains_key(&k) {
                out.entry(DUPLICATE).or_insert(Value::String(k));
            } else {
                out.insert(k, v);
            }
        }
        Ok(Value::Object(out))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<Value, A::Error> {
        Err(de::Error::custom(
            "a tagged YAML value (!tag) is not a Kubernetes value",
        ))
    }
}

/// The first repeated key in `v`: the dotted path of the mapping (`""` at the top)
/// and the key.
pub(crate) fn duplicate(v: &Value) -> Option<(String, String)> {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(k)) = m.get(DUPLICATE) {
                return Some((String::new(), k.clone()));
            }
            for (k, x) in m {
                if let Some((p, d)) = duplicate(x) {
                    let path = if p.is_empty() {
                        k.clone()
                    } else if p.starts_with('[') {
                        format!("{k}{p}")
                    } else {
                        format!("{k}.{p}")
                    };
                    return Some((path, d));
                }
            }
            None
        }
        Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
            duplicate(x).map(|(p, d)| {
                let path = if p.is_empty() || p.starts_with('[') {
                    format!("[{i}]{p}")
                } else {
                    format!("[{i}].{p}")
                };
                (path, d)
            })
        }),
        _ => None,
    }
}
