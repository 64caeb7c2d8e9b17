//! Where an object came from: the source the caller named, the position in it, and
//! the object's kind, namespace and name. Below everything that reports an object
//! ([`Error`](crate::Error), [`Objects`](crate::Objects), workloads, the cluster).

use std::sync::Arc;

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// Where an object came from and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub source: Arc<str>,
    pub position: Position,
    /// `Kind/name` or `Kind/namespace/name`.
    pub object: String,
    pub kind: Word,
    pub api_version: Word,
    pub namespace: String,
    pub name: String,
}

impl Origin {
    pub(crate) fn to_ref(&self) -> ObjectRef {
        ObjectRef {
            kind: self.kind.to_string(),
            api_version: self.api_version.to_string(),
            namespace: (!self.namespace.is_empty()).then(|| self.namespace.clone()),
            name: self.name.clone(),
            source: self.source.to_string(),
            position: self.position.to_string(),
        }
    }
}

/// Where in its source an object is: `items[i]` of a JSON list (a number, not a
/// string made per object read), or as written (`document 2`).
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Position {
    Item(usize),
    Text(String),
}

impl From<String> for Position {
    fn from(text: String) -> Position {
        Position::Text(text)
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Item(i) => write!(f, "items[{i}]"),
            Position::Text(t) => f.write_str(t),
        }
    }
}

/// As the `String` it displays as.
impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// A string of the model whose values repeat across objects (`kind`, `apiVersion`, a
/// pod's phase, scheduler, restart policy, tolerations, owner kinds): the common values
/// shared, not allocated once per object read (100,000 pods in a large snapshot);
/// others owned. Reads exactly as a `String` does (same errors).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Word(std::borrow::Cow<'static, str>);

impl Word {
    fn shared(s: &str) -> Option<&'static str> {
        Some(match s {
            "v1" => "v1",
            "Pod" => "Pod",
            "Node" => "Node",
            "Running" => "Running",
            "Succeeded" => "Succeeded",
            "Failed" => "Failed",
            "Pending" => "Pending",
            "default-scheduler" => "default-scheduler",
            "Always" => "Always",
            "Never" => "Never",
            "OnFailure" => "OnFailure",
            "Exists" => "Exists",
            "Equal" => "Equal",
            "NoSchedule" => "NoSchedule",
            "NoExecute" => "NoExecute",
            "PreferNoSchedule" => "PreferNoSchedule",
            "Job" => "Job",
            "batch/v1" => "batch/v1",
            "ReplicaSet" => "ReplicaSet",
            "StatefulSet" => "StatefulSet",
            "apps/v1" => "apps/v1",
            "nvidia.com/gpu" => "nvidia.com/gpu",
            "present" => "present",
            _ => return None,
        })
    }

    pub(crate) fn new(s: &str) -> Word {
        match Word::shared(s) {
            Some(w) => Word(std::borrow::Cow::Borrowed(w)),
            None => Word(std::borrow::Cow::Owned(s.to_owned())),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for Word {
    fn from(s: String) -> Word {
        match Word::shared(&s) {
            Some(w) => Word(std::borrow::Cow::Borrowed(w)),
            None => Word(std::borrow::Cow::Owned(s)),
        }
    }
}

impl From<&str> for Word {
    fn from(s: &str) -> Word {
        Word::new(s)
    }
}

impl From<Word> for String {
    fn from(w: Word) -> String {
        w.0.into_owned()
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// As a `String`'s.
impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Word {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Word {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// As serde reads a `String` (`deserialize_string`, the same visits and errors).
impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Word;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(Word::new(v))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Word, E> {
                Ok(Word::from(v))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Word, E> {
                match std::str::from_utf8(v) {
                    Ok(s) => Ok(Word::new(s)),
                    Err(_) => Err(de::Error::invalid_value(de::Unexpected::Bytes(v), &self)),
                }
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Word, E> {
                match String::from_utf8(v) {
                    Ok(s) => Ok(Word::from(s)),
                    Err(e) => Err(de::Error::invalid_value(
                        de::Unexpected::Bytes(&e.into_bytes()),
                        &self,
                    )),
                }
            }
        }
        d.deserialize_string(V)
    }
}

/// An object found in the input: kind, name and where it came from.
///
/// Displays as `Kind/name` or `Kind/namespace/name`. See [`Objects::refs`](crate::Objects::refs).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectRef {
    /// `kind` as written (`Node`, `PodGroup`, `PyTorchJob`).
    pub kind: String,
    /// `apiVersion` as written (`v1`, `kubeflow.org/v1`).
    pub api_version: String,
    /// Namespace, for namespaced objects that name one.
    pub namespace: Option<String>,
    /// `metadata.name` (empty when missing).
    pub name: String,
    /// The source name the caller passed.
    pub source: String,
    /// Where in the source (`items[3]`, `document 2`).
    pub position: String,
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&object_label(
            &self.kind,
            self.namespace.as_deref().unwrap_or(""),
            &self.name,
        ))
    }
}

/// `Kind/name` or `Kind/namespace/name`; `<unnamed>` for an empty name.
pub(crate) fn object_label(kind: &str, namespace: &str, name: &str) -> String {
    let name = if name.is_empty() { "<unnamed>" } else { name };
    // Pushed, not formatted: one label per object read (110,000 for a large snapshot).
    let mut s = String::with_capacity(kind.len() + namespace.len() + name.len() + 2);
    s.push_str(kind);
    s.push('/');
    if !namespace.is_empty() {
        s.push_str(namespace);
        s.push('/');
    }
    s.push_str(name);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Word` reads as a `String` does: the same values, the same refusals (JSON and
    /// YAML); the common values are shared, not allocated.
    #[test]
    fn words_read_as_strings_and_share_the_common_values() {
        for text in [
            r#""Running""#,
            r#""team-0""#,
            r#""a\"b""#,
            "5",
            "true",
            "null",
            "[1]",
            r#"{"a": 1}"#,
            "1.5",
        ] {
            let s = serde_json::from_str::<String>(text).map_err(|e| e.to_string());
            let w = serde_json::from_str::<Word>(text)
                .map(String::from)
                .map_err(|e| e.to_string());
            assert_eq!(s, w, "JSON {text}");
            let s = serde_yaml_ng::from_str::<String>(text).map_err(|e| e.to_string());
            let w = serde_yaml_ng::from_str::<Word>(text)
                .map(String::from)
                .map_err(|e| e.to_string());
            assert_eq!(s, w, "YAML {text}");
        }
        let shared = serde_json::from_str::<Word>(r#""NoSchedule""#).unwrap();
        assert!(matches!(shared.0, std::borrow::Cow::Borrowed(_)));
        let own = serde_json::from_str::<Word>(r#""team-0""#).unwrap();
        assert!(matches!(own.0, std::borrow::Cow::Owned(_)));
        assert_eq!(format!("{shared:?} {own}"), r#""NoSchedule" team-0"#);
        assert_eq!(Position::Item(12).to_string(), "items[12]");
        assert_eq!(format!("{:?}", Position::Item(3)), r#""items[3]""#);
    }
}
