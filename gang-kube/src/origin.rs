//! Where an object came from: the source the caller named, the position in it, and
//! the object's kind, namespace and name. Below everything that reports an object
//! ([`Error`](crate::Error), [`Objects`](crate::Objects), workloads, the cluster).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Where an object came from and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub source: Arc<str>,
    pub position: String,
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
            position: self.position.clone(),
        }
    }
}

/// A `kind` or `apiVersion`: the common ones (`Pod`, `Node`, `v1`) shared, not
/// allocated once per object read (110,000 in a large snapshot); others owned.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Word(std::borrow::Cow<'static, str>);

impl Word {
    const SHARED: [&'static str; 3] = ["v1", "Pod", "Node"];

    pub(crate) fn new(s: &str) -> Word {
        match Word::SHARED.iter().find(|w| **w == s) {
            Some(w) => Word(std::borrow::Cow::Borrowed(w)),
            None => Word(std::borrow::Cow::Owned(s.to_owned())),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// As a `String`'s.
impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
