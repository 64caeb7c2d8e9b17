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

/// As [`nullable`] for a list, held in exactly its length: serde's `Vec` makes room
/// for four entries at the first, and a pod's lists (containers, tolerations, statuses,
/// owners) hold one or two, which was a third of the memory of 100,000 pods read.
pub(crate) fn nullable_vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Sv<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Sv<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // As serde's `Vec` says it.
            f.write_str("a sequence")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            let mut few = smallvec::SmallVec::<[T; 2]>::new();
            while let Some(x) = seq.next_element()? {
                few.push(x);
            }
            if few.spilled() {
                let mut out = few.into_vec();
                out.shrink_to_fit();
                return Ok(out);
            }
            // Not `into_vec`: collecting makes room for four.
            let mut out = Vec::with_capacity(few.len());
            out.extend(few);
            Ok(out)
        }
    }
    d.deserialize_option(Sv(std::marker::PhantomData))
}

/// How many entries a list has, read without keeping them (a pod's
/// `topologySpreadConstraints` and `resourceClaims`: gang only asks whether there are
/// any). `null` reads as none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Count(usize);

impl Count {
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Vec<de::IgnoredAny> = nullable(d)?;
        Ok(Count(v.len()))
    }
}

/// A map that names each key once (`null` reads as empty): a repeated key is an
/// error, as Kubernetes refuses it, never last-wins.
pub(crate) fn strict_map<'de, D, V, M>(d: D) -> Result<M, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
    M: NameMap<V>,
{
    struct Mv<V, M>(std::marker::PhantomData<(V, M)>);
    impl<'de, V: Deserialize<'de>, M: NameMap<V>> Visitor<'de> for Mv<V, M> {
        type Value = M;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(M::default())
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(M::default())
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = M::default();
            while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
                let v: V = map.next_value()?;
                if out.has(k.as_ref()) {
                    return Err(de::Error::custom(format!(
                        "duplicate key {k:?} (Kubernetes refuses a map that names a key twice)"
                    )));
                }
                out.put(k, v);
            }
            out.done();
            Ok(out)
        }
    }
    d.deserialize_option(Mv(std::marker::PhantomData))
}

/// A map by name that [`strict_map`] reads into.
pub(crate) trait NameMap<V>: Default {
    fn has(&self, name: &str) -> bool;
    fn put(&mut self, name: std::borrow::Cow<'_, str>, v: V);
    /// Called once every entry is in.
    fn done(&mut self) {}
}

impl<V> NameMap<V> for BTreeMap<String, V> {
    fn has(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn put(&mut self, name: std::borrow::Cow<'_, str>, v: V) {
        self.insert(name.into_owned(), v);
    }
}

impl NameMap<Qty> for ResourceList {
    fn has(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn put(&mut self, name: std::borrow::Cow<'_, str>, v: Qty) {
        let name = match name {
            std::borrow::Cow::Borrowed(n) => ResName::of(n),
            std::borrow::Cow::Owned(n) => ResName::from(n),
        };
        self.insert_name(name, v);
    }
    /// Room for four is made at the first name: a list of one or two gives back what
    /// it does not use (three in room for four is left, as the allocator would).
    fn done(&mut self) {
        if self.0.len() * 2 <= self.0.capacity() {
            self.0.shrink_to_fit();
        }
    }
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

/// The keys of one map read so far, to refuse a repeated one; the first eight are kept
/// without allocating (an object's top level, a pod's labels).
pub(crate) type Seen<'a> = smallvec::SmallVec<[std::borrow::Cow<'a, str>; 8]>;

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

pub(crate) use crate::origin::Word;

/// A resource name: the common ones (`cpu`, `memory`, `nvidia.com/gpu`…) shared, not
/// allocated once per list read (six per pod of a large snapshot); others owned.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ResName(std::borrow::Cow<'static, str>);

impl ResName {
    const SHARED: [&'static str; 9] = [
        "cpu",
        "memory",
        "pods",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "amd.com/gpu",
        "google.com/tpu",
        "hugepages-2Mi",
        "hugepages-1Gi",
    ];

    fn shared(name: &str) -> Option<&'static str> {
        ResName::SHARED.iter().find(|n| **n == name).copied()
    }

    /// `name`, shared when it is a common one.
    fn of(name: &str) -> ResName {
        match ResName::shared(name) {
            Some(n) => ResName(std::borrow::Cow::Borrowed(n)),
            None => ResName(std::borrow::Cow::Owned(name.to_owned())),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for ResName {
    fn from(name: String) -> ResName {
        match ResName::shared(&name) {
            Some(n) => ResName(std::borrow::Cow::Borrowed(n)),
            None => ResName(std::borrow::Cow::Owned(name)),
        }
    }
}

/// A resource list (`requests`, `allocatable`, `overhead`…), in name order: a sorted
/// vector with the map operations gang-kube uses. A pod's lists hold a handful of
/// names; a `BTreeMap` allocates a node of eleven slots for the first (a third of the
/// memory of 100,000 pods read).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct ResourceList(Vec<(ResName, Qty)>);

impl ResourceList {
    pub(crate) fn new() -> Self {
        ResourceList(Vec::new())
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        // kubectl prints names in order: the last one is the place to look first.
        match self.0.last() {
            Some((last, _)) if last.as_str() < name => Err(self.0.len()),
            _ => self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)),
        }
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Sets `name` to `v`; the value it had.
    pub(crate) fn insert(&mut self, name: String, v: Qty) -> Option<Qty> {
        self.insert_name(ResName::from(name), v)
    }

    fn insert_name(&mut self, name: ResName, v: Qty) -> Option<Qty> {
        match self.find(name.as_str()) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, v)),
            Err(i) => {
                self.0.insert(i, (name, v));
                None
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// (name, amount) in name order.
    pub(crate) fn iter(&self) -> ResourceIter<'_> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

pub(crate) type ResourceIter<'a> = std::iter::Map<
    std::slice::Iter<'a, (ResName, Qty)>,
    fn(&'a (ResName, Qty)) -> (&'a str, &'a Qty),
>;

impl<'a> IntoIterator for &'a ResourceList {
    type Item = (&'a str, &'a Qty);
    type IntoIter = ResourceIter<'a>;
    fn into_iter(self) -> ResourceIter<'a> {
        self.iter()
    }
}

impl IntoIterator for ResourceList {
    type Item = (String, Qty);
    type IntoIter =
        std::iter::Map<std::vec::IntoIter<(ResName, Qty)>, fn((ResName, Qty)) -> (String, Qty)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(|(k, v)| (k.0.into_owned(), v))
    }
}

/// As a map's: the last value given for a name wins.
impl Extend<(String, Qty)> for ResourceList {
    fn extend<I: IntoIterator<Item = (String, Qty)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, Qty)> for ResourceList {
    fn from_iter<I: IntoIterator<Item = (String, Qty)>>(iter: I) -> Self {
        let mut out = ResourceList::new();
        out.extend(iter);
        out
    }
}

/// As a `BTreeMap`'s: a map, the last value given for a name wins.
impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResourceList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ResourceList, A::Error> {
                let mut out = ResourceList::new();
                while let Some((k, v)) = map.next_entry::<String, Qty>()? {
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// As a `BTreeMap`'s: `{"cpu": Qty(..), …}`.
impl fmt::Debug for ResourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
pub(crate) type StringMap = BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Common resource names are shared, others owned; the list is in name order and
    /// refuses a repeated name, read from JSON or YAML.
    #[test]
    fn resource_names_are_shared_and_lists_read_as_before() {
        #[derive(Deserialize)]
        struct R {
            #[serde(deserialize_with = "strict_map")]
            r: ResourceList,
        }
        let text = r#"{"r": {"nvidia.com/gpu": "8", "cpu": "2", "example.com/fpga": 1}}"#;
        for l in [
            serde_json::from_str::<R>(text).unwrap().r,
            serde_yaml_ng::from_str::<R>(text).unwrap().r,
        ] {
            let names: Vec<&str> = l.keys().collect();
            assert_eq!(names, ["cpu", "example.com/fpga", "nvidia.com/gpu"]);
            let shared: Vec<bool> =
                l.0.iter()
                    .map(|(n, _)| matches!(n.0, std::borrow::Cow::Borrowed(_)))
                    .collect();
            assert_eq!(shared, [true, false, true]);
        }
        let e = serde_json::from_str::<R>(r#"{"r": {"cpu": "1", "cpu": "2"}}"#)
            .err()
            .unwrap();
        assert!(e.to_string().starts_with("duplicate key \"cpu\""), "{e}");
    }
}
