//! The fast path for a JSON `List` (what `kubectl get … -o json` prints): one pass over
//! the text, each item read straight into its kind's struct once its `apiVersion` and
//! `kind` are known (Kubernetes writes them first; parts seen before them are kept as
//! raw text and read after). Any error falls back to the careful path, which names the
//! object and field.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::body::{classify, Body, Class, Item};
use crate::model::core_v1::{Node, Pod};
use crate::model::de::{Seen, Text};
use crate::model::meta_v1::Meta;
use crate::origin::{object_label, Origin, Word};

struct One {
    kind: Word,
    api_version: Word,
    namespace: String,
    name: String,
    body: Body,
}

/// The metadata of a kind other than Node and Pod, or (kind not known yet) its text.
enum MetaPart<'a> {
    Meta(Meta),
    Raw(&'a RawValue),
}

#[derive(Default)]
struct Parts<'a> {
    metadata: Option<MetaPart<'a>>,
    spec: Option<&'a RawValue>,
    status: Option<&'a RawValue>,
    /// A PriorityClass's top-level fields.
    top: Vec<(&'static str, &'a RawValue)>,
}

/// Top-level fields besides `spec` and `status` that a kind gang-kube reads keeps
/// (a PriorityClass's, a RuntimeClass's `overhead`).
const TOP_FIELDS: [&str; 4] = ["value", "globalDefault", "preemptionPolicy", "overhead"];

/// A node or a pod, built in its box as its parts come (a `Pod` is 624 bytes: not
/// moved through `Option`s and locals on the way).
enum Typed {
    Node(Box<Node>),
    Pod(Box<Pod>),
}

impl Typed {
    fn new(class: Class) -> Typed {
        if class == Class::Node {
            Typed::Node(Box::default())
        } else {
            Typed::Pod(Box::default())
        }
    }
}

impl<'de> Deserialize<'de> for One {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = One;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<One, A::Error> {
                // Borrowed from the text: most kinds and versions are shared words.
                let (mut kind, mut api_version) = (None::<Text<'de>>, None::<Text<'de>>);
                let mut parts = Parts::default();
                let mut typed = None::<Typed>;
                let mut class = None::<Class>;
                let mut seen = Seen::new();
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    // A repeated key: the careful path reports it.
                    if seen.contains(&key) {
                        return Err(de::Error::custom("duplicate key"));
                    }
                    seen.push(key.clone());
                    match key.as_ref() {
                        "kind" => kind = Some(map.next_value()?),
                        "apiVersion" => api_version = Some(map.next_value()?),
                        "metadata" | "spec" | "status" => {
                            if class.is_none() {
                                if let (Some(k), Some(a)) = (&kind, &api_version) {
                                    class = Some(classify(&a.0, &k.0));
                                }
                            }
                            let part = match key.as_ref() {
                                "metadata" => 0,
                                "spec" => 1,
                                _ => 2,
                            };
                            match class {
                                Some(c @ (Class::Node | Class::Pod)) => {
                                    match (typed.get_or_insert_with(|| Typed::new(c)), part) {
                                        (Typed::Node(n), 0) => {
                                            n.metadata =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                        (Typed::Node(n), 1) => {
                                            n.spec =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                        (Typed::Node(n), _) => {
                                            n.status =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                        (Typed::Pod(p), 0) => {
                                            p.metadata =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                        (Typed::Pod(p), 1) => {
                                            p.spec =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                        (Typed::Pod(p), _) => {
                                            p.status =
                                                map.next_value::<Option<_>>()?.unwrap_or_default()
                                        }
                                    }
                                }
                                Some(_) if part == 0 => {
                                    parts.metadata = Some(MetaPart::Meta(
                                        map.next_value::<Option<_>>()?.unwrap_or_default(),
                                    ))
                                }
                                _ => {
                                    let raw: &'de RawValue = map.next_value()?;
                                    match part {
                                        0 => parts.metadata = Some(MetaPart::Raw(raw)),
                                        1 => parts.spec = Some(raw),
                                        _ => parts.status = Some(raw),
                                    }
                                }
                            }
                        }
                        other => match TOP_FIELDS.iter().find(|f| **f == other) {
                            Some(f) => parts.top.push((*f, map.next_value()?)),
                            None => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        },
                    }
                }
                let kind = kind.map(|t| t.0).unwrap_or_default();
                let api_version = api_version.map(|t| t.0).unwrap_or_default();
                if kind.is_empty() || api_version.is_empty() {
                    return Err(de::Error::custom("apiVersion and kind are required"));
                }
                let class = classify(&api_version, &kind);
                fn late<T: Default + serde::de::DeserializeOwned, E: de::Error>(
                    raw: Option<&RawValue>,
                    into: &mut T,
                ) -> Result<(), E> {
                    if let Some(raw) = raw {
                        *into = serde_json::from_str::<Option<T>>(raw.get())
                            .map_err(E::custom)?
                            .unwrap_or_default();
                    }
                    Ok(())
                }
                let (namespace, name, body) = match class {
                    Class::Node | Class::Pod => {
                        let typed = typed.unwrap_or_else(|| Typed::new(class));
                        match (class, typed) {
                            (Class::Node, Typed::Node(mut n)) => {
                                if let Some(MetaPart::Raw(raw)) = parts.metadata {
                                    late(Some(raw), &mut n.metadata)?;
                                }
                                late(parts.spec, &mut n.spec)?;
                                late(parts.status, &mut n.status)?;
                                (String::new(), n.metadata.name.clone(), Body::Node(n))
                            }
                            (Class::Pod, Typed::Pod(mut p)) => {
                                if let Some(MetaPart::Raw(raw)) = parts.metadata {
                                    late(Some(raw), &mut p.metadata)?;
                                }
                                late(parts.spec, &mut p.spec)?;
                                late(parts.status, &mut p.status)?;
                                let m = &p.metadata;
                                let name = if m.name.is_empty() {
                                    &m.generate_name
                                } else {
                                    &m.name
                                };
                                (m.namespace.clone(), name.clone(), Body::Pod(p))
                            }
                            _ => return Err(de::Error::custom("node read as a pod")),
                        }
                    }
                    class => {
                        let mut metadata = Meta::default();
                        match parts.metadata {
                            Some(MetaPart::Meta(m)) => metadata = m,
                            Some(MetaPart::Raw(raw)) => late(Some(raw), &mut metadata)?,
                            None => {}
                        }
                        let name = if metadata.name.is_empty() {
                            &metadata.generate_name
                        } else {
                            &metadata.name
                        };
                        let (namespace, name) = (metadata.namespace.clone(), name.clone());
                        // Other kinds: rebuild the object's text from its parts and read
                        // it whole (few of them in a snapshot).
                        let mut text = String::from("{\"metadata\":{}");
                        for (k, v) in [("spec", parts.spec), ("status", parts.status)]
                            .into_iter()
                            .chain(parts.top.iter().map(|(k, v)| (*k, Some(*v))))
                        {
                            if let Some(v) = v {
                                text.push_str(&format!(",\"{k}\":{}", v.get()));
                            }
                        }
                        text.push('}');
                        let mut body = class
                            .json(&text)
                            .map_err(|(path, m)| de::Error::custom(format!("{path}: {m}")))?;
                        if let Some(m) = body.meta_mut() {
                            *m = metadata;
                        }
                        (namespace, name, body)
                    }
                };
                Ok(One {
                    kind: Word::new(&kind),
                    api_version: Word::new(&api_version),
                    namespace,
                    name,
                    body,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// The list as read: its `kind` and its items, each made an [`Item`] as it is read.
struct FastList {
    kind: Option<String>,
    items: Option<Vec<Item>>,
}

/// Reads a `List` document: `kind` and `items` (other fields skipped); a repeated
/// field is an error (the careful path reports it).
struct ListSeed<'s> {
    source: &'s Arc<str>,
    /// Items to make room for at once (an estimate from the text's length).
    capacity: usize,
    /// Set when the items were read by [`read_runs`] and the text is the list with its
    /// items cut out ([`without_items`]): the address `items` must hold its one marker at.
    marker: Option<usize>,
}

impl<'de> de::DeserializeSeed<'de> for ListSeed<'_> {
    type Value = FastList;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FastList, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = FastList;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes List")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastList, A::Error> {
        let mut list = FastList {
            kind: None,
            items: None,
        };
        let (mut kind_seen, mut items_seen) = (false, false);
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match key.as_ref() {
                "kind" => {
                    if std::mem::replace(&mut kind_seen, true) {
                        return Err(de::Error::duplicate_field("kind"));
                    }
                    list.kind = map.next_value()?;
                }
                "items" => {
                    if std::mem::replace(&mut items_seen, true) {
                        return Err(de::Error::duplicate_field("items"));
                    }
                    list.items = match self.marker {
                        None => map.next_value_seed(ItemsSeed {
                            source: self.source,
                            capacity: self.capacity,
                        })?,
                        Some(at) => {
                            let marked: Vec<Text<'de>> = map.next_value()?;
                            match marked.as_slice() {
                                [Text(std::borrow::Cow::Borrowed(m))]
                                    if m.as_ptr() as usize == at =>
                                {
                                    Some(Vec::new())
                                }
                                _ => return Err(de::Error::custom("not the items cut out")),
                            }
                        }
                    };
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(list)
    }
}

/// `items`: `null` or an array of objects, each made an [`Item`] as it is read.
struct ItemsSeed<'s> {
    source: &'s Arc<str>,
    capacity: usize,
}

impl<'de> de::DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = Option<Vec<Item>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = Option<Vec<Item>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut items = Vec::with_capacity(self.capacity);
        while let Some(one) = seq.next_element::<One>()? {
            items.push(item(self.source, items.len(), one));
        }
        Ok(Some(items))
    }
}

fn item(source: &Arc<str>, i: usize, one: One) -> Item {
    let (namespace, name) = (one.namespace, one.name);
    Item {
        origin: Origin {
            source: source.clone(),
            position: crate::origin::Position::Item(i),
            object: object_label(&one.kind, &namespace, &name),
            kind: one.kind,
            api_version: one.api_version,
            namespace,
            name,
        },
        body: one.body,
    }
}

/// The text a thread reads at least (1 MiB, a few milliseconds of work): a smaller
/// list is read on the calling thread alone.
const MIN_RUN: usize = 1 << 20;

/// The most threads a list is read on.
const MAX_RUNS: usize = 8;

/// The items of a single JSON `List` document, or `None` (not one list, or any error:
/// the careful path then reads it and reports).
///
/// A large list is read on several threads ([`read_runs`]); the answer is the same.
pub(crate) fn read_list(source: &Arc<str>, text: &str) -> Option<Vec<Item>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    read_list_in(
        source,
        text,
        threads.min(MAX_RUNS).min(text.len() / MIN_RUN),
    )
    .0
}

/// [`read_list`] on at most `runs` threads; with the number of threads whose items
/// were kept (1 when the list was read whole on the calling thread).
fn read_list_in(source: &Arc<str>, text: &str, runs: usize) -> (Option<Vec<Item>>, usize) {
    if let Some((items, used)) = read_runs(source, text, runs) {
        return (Some(items), used);
    }
    // Read whole, as one document, on this thread.
    let seed = ListSeed {
        source,
        // Room for an item per kilobyte of text (kubectl prints a pod in 1–3 KB): a
        // large list is not moved as it grows; room not used is never touched.
        capacity: text.len() / 1024,
        marker: None,
    };
    (read_document(text, seed), 1)
}

/// The list's items, when `seed` reads `text` as a `List`.
fn read_document(text: &str, seed: ListSeed<'_>) -> Option<Vec<Item>> {
    let mut d = serde_json::Deserializer::from_str(text);
    let list = de::DeserializeSeed::deserialize(seed, &mut d).ok()?;
    d.end().ok()?;
    if !list.kind.as_deref().is_some_and(|k| k.ends_with("List")) {
        return None;
    }
    list.items
}

/// A large list read on `runs` threads, with the number of runs whose items were kept;
/// `None` when it cannot be read so (not laid out as [`split_points`] expects, or any
/// error): the caller then reads it whole.
///
/// The items are cut into runs at lines that start an item ([`split_points`]); each
/// run is read on its own thread, item after item, each item from the text that
/// follows it (as the careful path reads each item from its own text). A run counts
/// only when the run before it ended exactly where it starts (then it starts at an
/// item); otherwise the run before it read on to the end of the list. The list
/// itself (`kind`, the fields around `items`) is then read from its text with the
/// items cut out and a marker in their place ([`without_items`]): that the list's
/// `items` holds the marker where the first run started shows the first run started
/// at the list's first item, and the last run ended at the list's `]`.
fn read_runs(source: &Arc<str>, text: &str, runs: usize) -> Option<(Vec<Item>, usize)> {
    let starts = split_points(text, runs);
    if starts.len() < 2 {
        return None;
    }
    let cancel = AtomicBool::new(false);
    let read: Vec<_> = std::thread::scope(|scope| {
        let run = |k: usize| {
            let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
            let read = read_run(source, text, starts[k], stop, &cancel);
            if read.is_none() {
                cancel.store(true, Ordering::Relaxed);
            }
            read
        };
        // A thread that cannot be started is a run not read (the list is then read
        // whole), not a panic.
        let others: Vec<_> = (1..starts.len())
            .map(|k| std::thread::Builder::new().spawn_scoped(scope, move || run(k)))
            .collect();
        let first = run(0);
        std::iter::once(first)
            .chain(
                others
                    .into_iter()
                    .map(|h| h.ok().and_then(|h| h.join().ok().flatten())),
            )
            .collect()
    });
    let mut items = Vec::new();
    let mut used = 0;
    let mut end = None;
    for run in read {
        let (run, next) = run?;
        used += 1;
        if items.is_empty() {
            items = run;
        } else {
            items.reserve(run.len());
            for mut it in run {
                it.origin.position = crate::origin::Position::Item(items.len());
                items.push(it);
            }
        }
        if let Err(close) = next {
            end = Some(close);
            break;
        }
    }
    let (list, marker) = without_items(text, starts[0], end?);
    let seed = ListSeed {
        source,
        capacity: 0,
        marker: Some(list.as_ptr() as usize + marker),
    };
    read_document(&list, seed)?;
    Some((items, used))
}

/// `text` with the items between `first` (the first item's `{`) and `close` (the
/// list's `]`) replaced by one empty string, and where that string's text starts.
fn without_items(text: &str, first: usize, close: usize) -> (String, usize) {
    let mut list = String::with_capacity(first + 2 + text.len() - close);
    list.push_str(&text[..first]);
    list.push_str("\"\"");
    list.push_str(&text[close..]);
    (list, first + 1)
}

/// The items from `start` (an item's `{`) to the end of the list, each read from the
/// text that follows it, with where the list's `]` is (`Err`); or to `stop` when an
/// item starts exactly there (`Ok`). `None` on any error, or when `cancel` is set.
#[allow(clippy::type_complexity)]
fn read_run(
    source: &Arc<str>,
    text: &str,
    start: usize,
    stop: usize,
    cancel: &AtomicBool,
) -> Option<(Vec<Item>, Result<(), usize>)> {
    let b = text.as_bytes();
    let mut items = Vec::with_capacity((stop.min(text.len()) - start) / 1024);
    let mut at = start;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<One>();
        let one = stream.next()?.ok()?;
        at += stream.byte_offset();
        items.push(item(source, items.len(), one));
        at = skip_ws(b, at);
        match b.get(at) {
            Some(b',') => {
                at = skip_ws(b, at + 1);
                if at == stop {
                    return Some((items, Ok(())));
                }
            }
            Some(b']') => return Some((items, Err(at))),
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// Where the runs of a list read on `runs` threads start: the first item's `{` (after
/// `"items": [`), then after each of `runs - 1` points spread over the text, the first
/// line that opens an object at that item's indentation (`kubectl … -o json` prints
/// each item's `{` on a line of its own, all at one indentation). Fewer than two when
/// the text is not laid out so (one line, or items not on lines of their own). Only
/// guesses: [`read_runs`] checks that each is where an item starts.
fn split_points(text: &str, runs: usize) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    if runs < 2 {
        return out;
    }
    let Some(key) = text.find("\"items\"") else {
        return out;
    };
    let colon = skip_ws(b, key + 7);
    if b.get(colon) != Some(&b':') {
        return out;
    }
    let open = skip_ws(b, colon + 1);
    if b.get(open) != Some(&b'[') {
        return out;
    }
    let first = skip_ws(b, open + 1);
    if b.get(first) != Some(&b'{') {
        return out;
    }
    let Some(line) = b[..first].iter().rposition(|&c| c == b'\n').map(|n| n + 1) else {
        return out;
    };
    let indent = &b[line..first];
    if line <= open {
        return out;
    }
    out.push(first);
    for k in 1..runs {
        let mut at = (text.len() / runs * k).max(out[out.len() - 1] + 1);
        loop {
            let Some(nl) = b[at..].iter().position(|&c| c == b'\n') else {
                return out;
            };
            let start = at + nl + 1;
            if b[start..].starts_with(indent) && b.get(start + indent.len()) == Some(&b'{') {
                out.push(start + indent.len());
                break;
            }
            at = start;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path and the careful path read the same objects.
    #[test]
    fn fast_and_careful_paths_agree() {
        let text = r#"{"kind": "List", "apiVersion": "v1", "items": [
          {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}},
           "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
           "status": {"allocatable": {"cpu": "4", "pods": "110"}}},
          {"spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
           "metadata": {"name": "late", "namespace": "x"}, "kind": "Pod", "apiVersion": "v1",
           "status": {"phase": "Running"}},
          {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "t"},
           "spec": {"levels": [{"nodeLabel": "a"}]}},
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"x": "y"}},
          {"metadata": {"name": "n2", "labels": {"any": "label"}}, "status": {"allocatable": {"cpu": "2"}},
           "kind": "Node", "apiVersion": "v1"},
          {"metadata": {"name": "pg", "namespace": "x"}, "spec": {"minMember": 2},
           "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup"},
          {"value": 1000, "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": "high"}, "globalDefault": false, "preemptionPolicy": "Never"}
        ]}"#;
        let source: Arc<str> = Arc::from("t.json");
        let fast = read_list(&source, text).expect("the fast path reads it");
        let mut careful = Vec::new();
        crate::objects::careful::read_json(&source, text, &mut careful).unwrap();
        assert_eq!(fast.len(), 7);
        assert_eq!(format!("{fast:?}"), format!("{careful:?}"));
        // A PriorityClass's fields are top-level: the fast path keeps them.
        let Body::PriorityClass(pc) = &fast[6].body else {
            panic!("{:?}", fast[6].body)
        };
        assert_eq!(
            (pc.value, pc.preemption_policy.as_str()),
            (Some(1000), "Never")
        );
        // A bad value makes the fast path give up; the careful path names it.
        let bad = text.replace(r#""cpu": "4""#, r#""cpu": "-4""#);
        assert!(read_list(&source, &bad).is_none());
        // Not a list: not for the fast path.
        assert!(read_list(&source, r#"{"apiVersion": "v1", "kind": "Node"}"#).is_none());
    }

    /// A list laid out as `kubectl get nodes,pods -o json` prints it: one item per
    /// line at one indentation (`pretty`: items spread over lines, nested objects
    /// deeper), nodes and pods, every fourth pod with an init container.
    fn kubectl_list(items: usize, pretty: bool) -> String {
        let mut out = String::from("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
        for i in 0..items {
            let one = if i % 5 == 0 {
                format!(
                    r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"labels": {{"rack": "r{}", "zone": "z"}}, "name": "n{i}"}}, "spec": {{"taints": [{{"effect": "NoSchedule", "key": "k"}}]}}, "status": {{"allocatable": {{"cpu": "8", "nvidia.com/gpu": 4}}, "conditions": [{{"status": "True", "type": "Ready"}}]}}}}"#,
                    i % 3
                )
            } else {
                let init = if i % 4 == 0 {
                    r#""initContainers": [{"name": "log", "resources": {"requests": {"cpu": "100m"}}, "restartPolicy": "Always"}], "#
                } else {
                    ""
                };
                format!(
                    r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"annotations": {{"x": "y\"z"}}, "labels": {{"kueue.x-k8s.io/queue-name": "q"}}, "name": "p{i}", "namespace": "ns{}", "ownerReferences": [{{"apiVersion": "batch/v1", "kind": "Job", "name": "j"}}]}}, "spec": {{"containers": [{{"name": "main", "resources": {{"requests": {{"cpu": "{}", "memory": "1Gi"}}}}}}], {init}"nodeName": "n{}", "tolerations": [{{"operator": "Exists"}}]}}, "status": {{"phase": "Running"}}}}"#,
                    i % 2,
                    i % 7 + 1,
                    i / 5 * 5
                )
            };
            let one = if pretty {
                one.replace("{\"", "{\n                \"")
                    .replace("}}", "}\n            }")
            } else {
                one
            };
            out.push_str("        ");
            out.push_str(&one);
            out.push_str(if i + 1 < items { ",\n" } else { "\n" });
        }
        out.push_str(
            "    ],\n    \"kind\": \"List\",\n    \"metadata\": {\"resourceVersion\": \"\"}\n}\n",
        );
        out
    }

    fn read_in(text: &str, runs: usize) -> (String, usize) {
        let source: Arc<str> = Arc::from("t.json");
        let (items, used) = read_list_in(&source, text, runs);
        (format!("{items:?}"), used)
    }

    /// A list read on several threads is read as on one: the same items, in order,
    /// each at its position, with every run used.
    #[test]
    fn a_list_read_in_runs_is_read_as_whole() {
        for pretty in [false, true] {
            let text = kubectl_list(120, pretty);
            let (whole, one) = read_in(&text, 1);
            assert_eq!(one, 1);
            assert!(whole.starts_with("Some(["), "{whole}");
            for runs in [2, 3, 7] {
                let (split, used) = read_in(&text, runs);
                assert_eq!(used, runs, "pretty {pretty}, {runs} runs");
                assert_eq!(split, whole, "pretty {pretty}, {runs} runs");
            }
            let mut careful = Vec::new();
            let source: Arc<str> = Arc::from("t.json");
            crate::objects::careful::read_json(&source, &text, &mut careful).unwrap();
            assert_eq!(format!("Some({careful:?})"), whole);
        }
    }

    /// Lines that look like an item's but are not (a nested object at the items'
    /// indentation, a nested `items` before the list's), or an error in a later run:
    /// the same answer as read whole.
    #[test]
    fn runs_that_do_not_start_at_items_are_not_used() {
        let text = kubectl_list(60, false);
        // A label map of every tenth item opens on a line at the items' indentation.
        let odd = text.replacen(
            r#""labels": {"kueue"#,
            "\"labels\":\n        {\"kueue",
            usize::MAX,
        );
        let (whole, _) = read_in(&odd, 1);
        assert!(whole.starts_with("Some(["), "{whole}");
        for runs in [2, 3, 5, 8] {
            assert_eq!(read_in(&odd, runs).0, whole, "{runs} runs");
        }
        // A nested `items` (in the list's metadata) before the list's own: its
        // objects would read as items, but are not the list's.
        let nested = text.replacen(
            "\"apiVersion\": \"v1\",\n    \"items\"",
            "\"metadata\": {\"items\": [\n        {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"x\"}},\n        {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"y\"}}]},\n    \"apiVersion\": \"v1\",\n    \"items\"",
            1,
        );
        let (whole, one) = read_in(&nested, 1);
        assert_eq!(one, 1);
        assert!(whole.starts_with("Some(["), "{whole}");
        for runs in [2, 3] {
            assert_eq!(read_in(&nested, runs), (whole.clone(), 1), "{runs} runs");
        }
        // The same, the list's own `items` one empty string: the marker's shape, not
        // at the marker's place.
        let at = nested.rfind("\"items\": [").unwrap();
        let close = nested.rfind("\n    ],").unwrap();
        let marker_shaped = format!("{}\"items\": [\"\"{}", &nested[..at], &nested[close..]);
        assert_eq!(read_in(&marker_shaped, 1).0, "None");
        for runs in [2, 3] {
            assert_eq!(read_in(&marker_shaped, runs).0, "None", "{runs} runs");
        }
        // Errors anywhere: none, as read whole (the careful path then reports).
        let n = text.len();
        for (at, from, to) in [
            (n / 2, "\"cpu\": \"8\"", "\"cpu\": \"-8\""),
            (n * 3 / 4, "\"name\": \"p", "\"name\": p"),
            (n / 3, "}},\n", "}}\n"),
            (n - 100, "\"kind\": \"List\"", "\"kind\": \"Lost\""),
            (0, "\"items\": [", "\"items\": [1, "),
        ] {
            let at = text[at..]
                .find(from)
                .map(|i| i + at)
                .or_else(|| text.rfind(from))
                .unwrap();
            let bad = format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
            for runs in [1, 2, 3] {
                assert_eq!(read_in(&bad, runs).0, "None", "{from} → {to}, {runs} runs");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Random byte changes anywhere in a list: read on three threads or on one,
        /// the same answer (items or none).
        #[test]
        fn runs_read_as_whole_whatever_the_bytes(
            edits in proptest::collection::vec((0.0f64..1.0, proptest::sample::select(
                vec![b'{', b'}', b'[', b']', b',', b'"', b'\\', b'\n', b' ', b':', b'1', b'a', 0x01u8]
            ), 0u8..3), 1..4),
            pretty in proptest::prelude::any::<bool>(),
        ) {
            let mut bytes = kubectl_list(40, pretty).into_bytes();
            for (at, byte, how) in edits {
                let i = ((bytes.len() - 1) as f64 * at) as usize;
                match how {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => {
                        bytes.remove(i);
                    }
                }
            }
            let Ok(text) = String::from_utf8(bytes) else {
                return Ok(());
            };
            let (whole, _) = read_in(&text, 1);
            for runs in [2, 3] {
                proptest::prop_assert_eq!(&read_in(&text, runs).0, &whole);
            }
        }
    }
}
