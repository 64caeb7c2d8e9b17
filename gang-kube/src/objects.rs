//! Reading Kubernetes objects from JSON or YAML text.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{Error, ErrorKind};
use crate::model::{
    FlavorObj, JobObj, JobSetObj, KubeflowObj, Node, Pod, PodGroupObj, TopologyObj, VolcanoJobObj,
};

/// Kubernetes objects read from one or more sources, in the order given.
///
/// Reads JSON or YAML: a single object, a `List` (any kind ending in `List` with
/// `items`, as `kubectl get … -o json` prints), several concatenated JSON documents, a
/// JSON array, or multi-document YAML (`---`). Only the fields gang uses are read; unknown
/// fields and unknown kinds are kept out of the way (unknown kinds are still listed by
/// [`Objects::refs`]).
///
/// ```
/// use gang_kube::Objects;
/// let nodes = r#"{"apiVersion": "v1", "kind": "List", "items": [
///   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
///   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}]}"#;
/// let mut objects = Objects::parse("nodes.json", nodes)?;
/// objects.add("group.yaml", "
/// apiVersion: scheduling.k8s.io/v1beta1
/// kind: PodGroup
/// metadata: {name: training-workers, namespace: ml-team}
/// spec:
///   schedulingPolicy: {gang: {minCount: 4}}
/// ---
/// apiVersion: v1
/// kind: ConfigMap
/// metadata: {name: settings}
/// ")?;
/// let refs = objects.refs();
/// assert_eq!(refs.len(), 4);
/// assert_eq!(refs[1].to_string(), "Node/n2");
/// assert_eq!(refs[2].to_string(), "PodGroup/ml-team/training-workers");
/// assert_eq!((refs[3].kind.as_str(), refs[3].source.as_str()), ("ConfigMap", "group.yaml"));
///
/// // A document that is not JSON or YAML names the file and the line.
/// let err = Objects::parse("bad.json", "{\"kind\": ").unwrap_err();
/// assert!(err.to_string().starts_with("bad.json: line 1 column 9: "), "{err}");
/// # Ok::<(), gang_kube::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub(crate) items: Vec<Item>,
}

/// Where an object came from and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub source: Arc<str>,
    pub position: String,
    /// `Kind/name` or `Kind/namespace/name`.
    pub object: String,
    pub kind: String,
    pub api_version: String,
    pub namespace: String,
    pub name: String,
}

impl Origin {
    pub(crate) fn to_ref(&self) -> ObjectRef {
        ObjectRef {
            kind: self.kind.clone(),
            api_version: self.api_version.clone(),
            namespace: (!self.namespace.is_empty()).then(|| self.namespace.clone()),
            name: self.name.clone(),
            source: self.source.to_string(),
            position: self.position.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub origin: Origin,
    pub body: Body,
}

/// Which scheduler's PodGroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PodGroupKind {
    /// `scheduling.k8s.io` (Kubernetes' own gang scheduling).
    Native,
    /// `scheduling.volcano.sh`.
    Volcano,
    /// `scheduling.x-k8s.io` (scheduler-plugins coscheduling).
    Coscheduling,
    /// `scheduling.run.ai` (KAI scheduler).
    Kai,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KubeflowKind {
    PyTorch,
    Mpi,
    Tf,
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    Node(Box<Node>),
    Pod(Box<Pod>),
    Topology(Box<TopologyObj>),
    Flavor(Box<FlavorObj>),
    PodGroup(PodGroupKind, Box<PodGroupObj>),
    Job(Box<JobObj>),
    JobSet(Box<JobSetObj>),
    Kubeflow(KubeflowKind, Box<KubeflowObj>),
    VolcanoJob(Box<VolcanoJobObj>),
    Other,
}

/// An object found in the input: kind, name and where it came from.
///
/// Displays as `Kind/name` or `Kind/namespace/name`. See [`Objects::refs`].
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

pub(crate) fn object_label(kind: &str, namespace: &str, name: &str) -> String {
    let name = if name.is_empty() { "<unnamed>" } else { name };
    if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

impl Objects {
    /// No objects. See [`Objects`].
    pub fn new() -> Self {
        Objects::default()
    }

    /// Reads the objects in `text` (JSON or YAML, see [`Objects`]); `source_name` names
    /// the text in errors and in [`ObjectRef::source`].
    ///
    /// ```
    /// use gang_kube::{ErrorKind, Objects};
    /// let o = Objects::parse("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")?;
    /// assert_eq!(o.len(), 1);
    /// let err = Objects::parse("x.yaml", "metadata: {name: p}\n").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnexpectedKind);
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Malformed`] when the text is neither JSON nor YAML or an object does
    /// not have the shape of its kind (with the line, or the object and field);
    /// [`ErrorKind::UnexpectedKind`] for a document without `apiVersion` and `kind`;
    /// [`ErrorKind::InvalidValue`] for a bad quantity or enumeration value.
    pub fn parse(source_name: &str, text: &str) -> Result<Objects, Error> {
        let mut objects = Objects::new();
        objects.add(source_name, text)?;
        Ok(objects)
    }

    /// Reads more objects into this set (see [`Objects::parse`]); on error nothing is
    /// added.
    ///
    /// # Errors
    /// As [`Objects::parse`].
    pub fn add(&mut self, source_name: &str, text: &str) -> Result<(), Error> {
        let source: Arc<str> = Arc::from(source_name);
        let mut items = Vec::new();
        let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if trimmed.starts_with('{') {
            match crate::fast::read_list(&source, trimmed) {
                Some(list) => items = list,
                None => read_json_careful(&source, trimmed, &mut items)?,
            }
        } else if trimmed.starts_with('[') {
            read_json_careful(&source, trimmed, &mut items)?;
        } else {
            read_yaml(&source, text, &mut items)?;
        }
        self.items.extend(items);
        Ok(())
    }

    /// Appends the objects of `other`. See [`Objects`].
    pub fn extend(&mut self, other: Objects) {
        self.items.extend(other.items);
    }

    /// Number of objects. See [`Objects`].
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none. See [`Objects`].
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every object found, in input order (the "objects found" of a report).
    /// See [`Objects`].
    pub fn refs(&self) -> Vec<ObjectRef> {
        self.items.iter().map(|i| i.origin.to_ref()).collect()
    }

    /// Checks that every object is of one of `kinds` (a nodes file holds only `Node`s).
    ///
    /// ```
    /// use gang_kube::{ErrorKind, Objects};
    /// let o = Objects::parse("nodes.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n")?;
    /// let err = o.expect_kinds(&["Node"]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnexpectedKind);
    /// assert_eq!(err.object(), Some("Deployment/prod/web"));
    /// assert!(Objects::new().expect_kinds(&["Node"]).is_ok());
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::UnexpectedKind`] naming the first object of another kind.
    pub fn expect_kinds(&self, kinds: &[&str]) -> Result<(), Error> {
        for item in &self.items {
            if !kinds.contains(&item.origin.kind.as_str()) {
                return Err(Error::new(
                    ErrorKind::UnexpectedKind,
                    &item.origin.source,
                    format!(
                        "expected {}, found {} {}",
                        kinds.join(" or "),
                        item.origin.api_version,
                        item.origin.kind
                    ),
                )
                .at(&item.origin)
                .with_field("kind")
                .with_value(item.origin.kind.clone()));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// JSON

#[derive(Deserialize)]
struct ListEnvelope<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

pub(crate) fn read_json_careful(
    source: &Arc<str>,
    text: &str,
    out: &mut Vec<Item>,
) -> Result<(), Error> {
    let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    for (d, doc) in stream.enumerate() {
        let doc = doc.map_err(|e| malformed_json(source, &e))?;
        let doc_prefix = if d == 0 {
            String::new()
        } else {
            format!("document {} ", d + 1)
        };
        let raw = doc.get();
        if raw.starts_with('[') {
            let items: Vec<&RawValue> =
                serde_json::from_str(raw).map_err(|e| malformed_json(source, &e))?;
            for (i, item) in items.iter().enumerate() {
                json_item(source, format!("{doc_prefix}[{i}]"), item.get(), out)?;
            }
            continue;
        }
        let (kind, _) = peek_json(raw).unwrap_or_default();
        if kind.ends_with("List") {
            let env: ListEnvelope<'_> =
                serde_json::from_str(raw).map_err(|e| malformed_json(source, &e))?;
            if let Some(items) = env.items {
                for (i, item) in items.iter().enumerate() {
                    json_item(source, format!("{doc_prefix}items[{i}]"), item.get(), out)?;
                }
                continue;
            }
        }
        json_item(source, format!("document {}", d + 1), raw, out)?;
    }
    Ok(())
}

fn malformed_json(source: &str, e: &serde_json::Error) -> Error {
    Error::new(ErrorKind::Malformed, source, format!("malformed JSON: {e}")).with_position(format!(
        "line {} column {}",
        e.line(),
        e.column()
    ))
}

#[derive(Deserialize, Default)]
struct LightMeta {
    #[serde(default, deserialize_with = "crate::model::nullable")]
    name: String,
    #[serde(default, deserialize_with = "crate::model::nullable")]
    namespace: String,
}

#[derive(Deserialize, Default)]
struct Light {
    #[serde(default, deserialize_with = "crate::model::nullable")]
    metadata: LightMeta,
}

fn json_item(
    source: &Arc<str>,
    position: String,
    raw: &str,
    out: &mut Vec<Item>,
) -> Result<(), Error> {
    let Some((kind, api_version)) = peek_json(raw) else {
        return Err(not_an_object(source, position));
    };
    let light = || {
        serde_json::from_str::<Light>(raw)
            .ok()
            .unwrap_or_default()
            .metadata
    };
    let item = finish(
        source,
        position,
        kind,
        api_version,
        |c| c.json(raw),
        light,
        || serde_json::from_str(raw).ok(),
    )?;
    out.push(item);
    Ok(())
}

fn not_an_object(source: &str, position: String) -> Error {
    Error::new(
        ErrorKind::UnexpectedKind,
        source,
        "not a Kubernetes object (expected a mapping with apiVersion and kind)",
    )
    .with_position(position)
}

/// The `kind` and `apiVersion` of a JSON object, read from its first keys without
/// scanning the rest (Kubernetes writes them first). `None` when the text is not an object.
fn peek_json(raw: &str) -> Option<(String, String)> {
    let b = raw.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let (mut kind, mut api) = (None, None);
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            break;
        }
        let (key, after) = read_string(raw, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if key == "kind" || key == "apiVersion" {
            let value = if b.get(i) == Some(&b'"') {
                let (v, after) = read_string(raw, i)?;
                i = after;
                v
            } else {
                i = skip_value(b, i)?;
                String::new()
            };
            if key == "kind" {
                kind = Some(value);
            } else {
                api = Some(value);
            }
            if kind.is_some() && api.is_some() {
                break;
            }
        } else {
            i = skip_value(b, i)?;
        }
        i = skip_ws(b, i);
        if b.get(i) == Some(&b',') {
            i += 1;
        } else {
            break;
        }
    }
    Some((kind.unwrap_or_default(), api.unwrap_or_default()))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// A JSON string starting at `i` (a quote): its text (escapes decoded by serde_json) and
/// the index after its closing quote.
fn read_string(raw: &str, i: usize) -> Option<(String, usize)> {
    let b = raw.as_bytes();
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        match b.get(j)? {
            b'\\' => {
                escaped = true;
                j += 2;
            }
            b'"' => break,
            _ => j += 1,
        }
    }
    let text = raw.get(i..=j)?;
    let s = if escaped {
        serde_json::from_str::<String>(text).ok()?
    } else {
        text.get(1..text.len() - 1)?.to_owned()
    };
    Some((s, j + 1))
}

/// The index after the JSON value starting at `i` (the text is valid JSON).
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                if depth == 0 {
                    return Some(i);
                }
                depth -= 1;
                i += 1;
            }
            b',' if depth == 0 => return Some(i),
            _ => i += 1,
        }
        if depth == 0 && matches!(b.get(i), Some(b',' | b'}' | b']') | None) {
            return Some(i);
        }
    }
}

// ---------------------------------------------------------------------------------------
// YAML

fn read_yaml(source: &Arc<str>, text: &str, out: &mut Vec<Item>) -> Result<(), Error> {
    for (d, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = serde_json::Value::deserialize(doc).map_err(|e| {
            let position = match e.location() {
                Some(l) => format!("line {} column {}", l.line(), l.column()),
                None => format!("document {}", d + 1),
            };
            Error::new(ErrorKind::Malformed, source, format!("malformed YAML: {e}"))
                .with_position(position)
        })?;
        match value {
            serde_json::Value::Null => {} // an empty document (a trailing `---`)
            serde_json::Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    value_item(source, format!("document {} [{i}]", d + 1), item, out)?;
                }
            }
            serde_json::Value::Object(ref map)
                if map
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| k.ends_with("List"))
                    && map.get("items").is_some_and(|i| i.is_array()) =>
            {
                let serde_json::Value::Object(mut map) = value else {
                    unreachable!("matched an object")
                };
                if let Some(serde_json::Value::Array(items)) = map.remove("items") {
                    for (i, item) in items.into_iter().enumerate() {
                        value_item(source, format!("document {} items[{i}]", d + 1), item, out)?;
                    }
                }
            }
            other => value_item(source, format!("document {}", d + 1), other, out)?,
        }
    }
    Ok(())
}

fn value_item(
    source: &Arc<str>,
    position: String,
    value: serde_json::Value,
    out: &mut Vec<Item>,
) -> Result<(), Error> {
    if !value.is_object() {
        return Err(not_an_object(source, position));
    }
    let text = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let (kind, api_version) = (text("kind"), text("apiVersion"));
    if api_version.is_empty() && value.get("run").is_some() {
        return Err(Error::new(
            ErrorKind::UnexpectedKind,
            source,
            "not a Kubernetes object: apiVersion and kind are required (this looks like a Polyaxon component; give the Kubernetes object it generates, e.g. the PyTorchJob)",
        )
        .with_position(position));
    }
    let light = || {
        serde_json::from_value::<Light>(value.clone())
            .ok()
            .unwrap_or_default()
            .metadata
    };
    let item = finish(
        source,
        position,
        kind,
        api_version,
        |c| c.value(&value),
        light,
        || Some(value.clone()),
    )?;
    out.push(item);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Dispatch on kind

/// Reads one object of `kind` and names it, or says which field of it is wrong.
fn finish(
    source: &Arc<str>,
    position: String,
    kind: String,
    api_version: String,
    read: impl FnOnce(Class) -> Result<Body, (String, String)>,
    light: impl FnOnce() -> LightMeta,
    value: impl FnOnce() -> Option<serde_json::Value>,
) -> Result<Item, Error> {
    if kind.is_empty() || api_version.is_empty() {
        return Err(Error::new(
            ErrorKind::UnexpectedKind,
            source,
            "not a Kubernetes object: apiVersion and kind are required",
        )
        .with_position(position));
    }
    let class = classify(&api_version, &kind);
    let make = |meta: LightMeta| Origin {
        source: source.clone(),
        position: position.clone(),
        object: object_label(&kind, &meta.namespace, &meta.name),
        kind: kind.clone(),
        api_version: api_version.clone(),
        namespace: meta.namespace,
        name: meta.name,
    };
    match read(class) {
        Ok(body) => {
            let meta = match body.names() {
                Some((namespace, name)) => LightMeta {
                    name: name.to_owned(),
                    namespace: namespace.to_owned(),
                },
                None => light(),
            };
            Ok(Item {
                origin: make(meta),
                body,
            })
        }
        Err((path, message)) => {
            let origin = make(light());
            let kind = if message.starts_with("invalid quantity") {
                ErrorKind::InvalidValue
            } else {
                ErrorKind::Malformed
            };
            let mut err = Error::new(kind, &origin.source, strip_position(&message)).at(&origin);
            if !path.is_empty() && path != "." {
                if let Some(v) = value().and_then(|v| value_at(&v, &path)) {
                    err = err.with_value(v);
                }
                err = err.with_field(path);
            }
            Err(err)
        }
    }
}

impl Body {
    pub(crate) fn meta_mut(&mut self) -> Option<&mut crate::model::Meta> {
        Some(match self {
            Body::Pod(o) => &mut o.metadata,
            Body::Topology(o) => &mut o.metadata,
            Body::Flavor(o) => &mut o.metadata,
            Body::PodGroup(_, o) => &mut o.metadata,
            Body::Job(o) => &mut o.metadata,
            Body::JobSet(o) => &mut o.metadata,
            Body::Kubeflow(_, o) => &mut o.metadata,
            Body::VolcanoJob(o) => &mut o.metadata,
            Body::Node(_) | Body::Other => return None,
        })
    }

    /// (namespace, name) of the object.
    pub(crate) fn names(&self) -> Option<(&str, &str)> {
        match self {
            Body::Node(o) => Some(("", o.metadata.name.as_str())),
            other => other
                .meta()
                .map(|m| (m.namespace.as_str(), m.name.as_str())),
        }
    }

    pub(crate) fn meta(&self) -> Option<&crate::model::Meta> {
        Some(match self {
            Body::Pod(o) => &o.metadata,
            Body::Topology(o) => &o.metadata,
            Body::Flavor(o) => &o.metadata,
            Body::PodGroup(_, o) => &o.metadata,
            Body::Job(o) => &o.metadata,
            Body::JobSet(o) => &o.metadata,
            Body::Kubeflow(_, o) => &o.metadata,
            Body::VolcanoJob(o) => &o.metadata,
            Body::Node(_) | Body::Other => return None,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Node,
    Pod,
    Topology,
    Flavor,
    PodGroup(PodGroupKind),
    Job,
    JobSet,
    Kubeflow(KubeflowKind),
    VolcanoJob,
    Other,
}

pub(crate) fn classify(api_version: &str, kind: &str) -> Class {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    match (group, kind) {
        ("", "Node") => Class::Node,
        ("", "Pod") => Class::Pod,
        ("kueue.x-k8s.io" | "kai.scheduler", "Topology") => Class::Topology,
        ("kueue.x-k8s.io", "ResourceFlavor") => Class::Flavor,
        ("scheduling.k8s.io", "PodGroup") => Class::PodGroup(PodGroupKind::Native),
        ("scheduling.volcano.sh", "PodGroup") => Class::PodGroup(PodGroupKind::Volcano),
        ("scheduling.x-k8s.io" | "scheduling.sigs.k8s.io", "PodGroup") => {
            Class::PodGroup(PodGroupKind::Coscheduling)
        }
        ("scheduling.run.ai", "PodGroup") => Class::PodGroup(PodGroupKind::Kai),
        ("batch", "Job") => Class::Job,
        ("jobset.x-k8s.io", "JobSet") => Class::JobSet,
        ("kubeflow.org", "PyTorchJob") => Class::Kubeflow(KubeflowKind::PyTorch),
        ("kubeflow.org", "MPIJob") => Class::Kubeflow(KubeflowKind::Mpi),
        ("kubeflow.org", "TFJob") => Class::Kubeflow(KubeflowKind::Tf),
        ("batch.volcano.sh", "Job") => Class::VolcanoJob,
        _ => Class::Other,
    }
}

/// How to read one object's text (JSON) or value (YAML) into `T`, with the field path
/// of the first error.
trait Reader {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)>;
}

struct JsonReader<'a>(&'a str);
struct ValueReader<'a>(&'a serde_json::Value);

impl Reader for JsonReader<'_> {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)> {
        serde_json::from_str(self.0).map_err(|_| {
            // The slow path, only on error: redo it tracking the path.
            let mut de = serde_json::Deserializer::from_str(self.0);
            match serde_path_to_error::deserialize::<_, T>(&mut de) {
                Ok(_) => (String::new(), "malformed".to_owned()),
                Err(e) => (e.path().to_string(), e.inner().to_string()),
            }
        })
    }
}

impl Reader for ValueReader<'_> {
    fn read<T: DeserializeOwned>(&self) -> Result<T, (String, String)> {
        T::deserialize(self.0).map_err(|_| match serde_path_to_error::deserialize::<_, T>(self.0) {
            Ok(_) => (String::new(), "malformed".to_owned()),
            Err(e) => (e.path().to_string(), e.inner().to_string()),
        })
    }
}

impl Class {
    pub(crate) fn json(self, raw: &str) -> Result<Body, (String, String)> {
        self.body(&JsonReader(raw))
    }
    fn value(self, v: &serde_json::Value) -> Result<Body, (String, String)> {
        self.body(&ValueReader(v))
    }
    fn body(self, r: &impl Reader) -> Result<Body, (String, String)> {
        Ok(match self {
            Class::Node => Body::Node(Box::new(r.read()?)),
            Class::Pod => Body::Pod(Box::new(r.read()?)),
            Class::Topology => Body::Topology(Box::new(r.read()?)),
            Class::Flavor => Body::Flavor(Box::new(r.read()?)),
            Class::PodGroup(k) => Body::PodGroup(k, Box::new(r.read()?)),
            Class::Job => Body::Job(Box::new(r.read()?)),
            Class::JobSet => Body::JobSet(Box::new(r.read()?)),
            Class::Kubeflow(k) => Body::Kubeflow(k, Box::new(r.read()?)),
            Class::VolcanoJob => Body::VolcanoJob(Box::new(r.read()?)),
            Class::Other => Body::Other,
        })
    }
}

/// serde_json appends " at line L column C"; the field path says more.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The value at a serde_path_to_error path (`status.allocatable.cpu`, `spec.containers[0]`),
/// as text.
fn value_at(root: &serde_json::Value, path: &str) -> Option<String> {
    let mut v = root;
    // Map keys may contain dots (`nvidia.com/gpu`): match the longest key present.
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let i: usize = after[..end].parse().ok()?;
            v = v.get(i)?;
            rest = after[end + 1..].trim_start_matches('.');
            continue;
        }
        let obj = v.as_object()?;
        let (key, remainder) = obj
            .keys()
            .filter(|k| {
                rest.starts_with(k.as_str())
                    && matches!(rest.as_bytes().get(k.len()), None | Some(b'.' | b'['))
            })
            .max_by_key(|k| k.len())
            .map(|k| (k.clone(), &rest[k.len()..]))?;
        v = obj.get(&key)?;
        rest = remainder.trim_start_matches('.');
    }
    Some(match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_the_first_keys() {
        let raw = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}"#;
        assert_eq!(peek_json(raw), Some(("Pod".into(), "v1".into())));
        let raw = r#" { "metadata" : {"a": [1, {"b": "}"}]}, "kind" : "No\u0064e", "apiVersion": "v1" } "#;
        assert_eq!(peek_json(raw), Some(("Node".into(), "v1".into())));
        assert_eq!(peek_json("[1]"), None);
        assert_eq!(
            peek_json(r#"{"x": 1}"#),
            Some((String::new(), String::new()))
        );
        // Never panics on truncated text.
        for cut in 0..raw.len() {
            let _ = peek_json(&raw[..cut]);
        }
    }

    #[test]
    fn value_at_follows_dotted_keys() {
        let v: serde_json::Value = serde_json::json!({
            "status": {"allocatable": {"nvidia.com/gpu": "x", "cpu": 4}},
            "spec": {"containers": [{"resources": {"requests": {"cpu": "-1"}}}]}
        });
        assert_eq!(
            value_at(&v, "status.allocatable.nvidia.com/gpu").as_deref(),
            Some("x")
        );
        assert_eq!(value_at(&v, "status.allocatable.cpu").as_deref(), Some("4"));
        assert_eq!(
            value_at(&v, "spec.containers[0].resources.requests.cpu").as_deref(),
            Some("-1")
        );
        assert_eq!(value_at(&v, "spec.nothing"), None);
    }
}
