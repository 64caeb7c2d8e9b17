//! Reading helpers shared by every API's structs: `null` as the default, quantities
//! parsed while reading, strings borrowed from the input, and the map types.

use std::collections::BTreeMap;
use std::fmt;

use gang_core::Quantity;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// `null` reads as the default, like an absent field.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A map that names each key once (`null` reads as empty): a repeated key is an
/// error, as Kubernetes refuses it, never last-wins.
pub(crate) fn strict_map<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct M<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for M<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
                let v: V = map.next_value()?;
                if out.contains_key(k.as_ref()) {
                    return Err(de::Error::custom(format!(
                        "duplicate key {k:?} (Kubernetes refuses a map that names a key twice)"
                    )));
                }
                out.insert(k.into_owned(), v);
            }
            Ok(out)
        }
    }
    d.deserialize_option(M(std::marker::PhantomData))
}

/// A quantity, parsed while reading: `"500m"`, `"16Gi"`, `8`, `0.5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Qty(pub Quantity);

impl<'de> Deserialize<'de> for Qty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Qty;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes quantity such as \"500m\", \"16Gi\" or 8")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Qty, E> {
                Quantity::parse(v).map(Qty).map_err(|e| {
                    let reason = match e {
                        gang_core::Error::InvalidQuantity { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    E::custom(format!("invalid quantity {v:?}: {reason}"))
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Qty, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Qty, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Qty, E> {
                self.visit_str(&v.to_string())
            }
            /// serde_json with `arbitrary_precision` (on in the workspace: gang-core
            /// asks for it) hands a number over as a one-entry map holding its text:
            /// read that text as the quantity, as YAML's `0.5` is read (issue 25).
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Qty, A::Error> {
                let n =
                    serde_json::Number::deserialize(de::value::MapAccessDeserializer::new(map))?;
                self.visit_str(&n.to_string())
            }
        }
        d.deserialize_any(V)
    }
}

/// A string borrowed from the input when it can be (no escapes), owned otherwise.
pub(crate) struct Text<'a>(pub std::borrow::Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Owned(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Borrowed("")))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A resource list (`requests`, `allocatable`, `overhead`…), in name order.
pub(crate) type ResourceList = BTreeMap<String, Qty>;
pub(crate) type StringMap = BTreeMap<String, String>;
