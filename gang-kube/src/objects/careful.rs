//! The careful path: JSON (any document, array or `List`) and YAML, each object read
//! with serde_path_to_error so an error names the object, the field and the value.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, ErrorKind};
use crate::model::body::{classify, Body, Class, Item};
use crate::model::de::nullable;
use crate::objects::strict::{duplicate, Strict};
use crate::origin::{object_label, Origin};

// ---------------------------------------------------------------------------------------
// JSON

#[derive(Deserialize)]
struct ListEnvelope<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

pub(crate) fn read_json(source: &Arc<str>, text: &str, out: &mut Vec<Item>) -> Result<(), Error> {
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
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, rename = "generateName", deserialize_with = "nullable")]
    generate_name: String,
    #[serde(default, deserialize_with = "nullable")]
    namespace: String,
}

impl LightMeta {
    /// The name the object is known by: `metadata.name`, else `metadata.generateName`
    /// (see `name_from_generate_name`).
    fn into_name(self) -> (String, String) {
        let name = if self.name.is_empty() {
            self.generate_name
        } else {
            self.name
        };
        (self.namespace, name)
    }
}

#[derive(Deserialize, Default)]
struct Light {
    #[serde(default, deserialize_with = "nullable")]
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
    // The top-level keys once each (a struct's fields are; `kind` twice is not read
    // by `peek_json`, which stops at the first).
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Top {
        kind: Option<serde::de::IgnoredAny>,
        #[serde(rename = "apiVersion")]
        api_version: Option<serde::de::IgnoredAny>,
        metadata: Option<serde::de::IgnoredAny>,
        spec: Option<serde::de::IgnoredAny>,
        status: Option<serde::de::IgnoredAny>,
    }
    if let Err(e) = serde_json::from_str::<Top>(raw) {
        let m = e.to_string();
        if let Some(rest) = m.strip_prefix("duplicate field `") {
            let key = rest.split('`').next().unwrap_or_default();
            let (namespace, name) = serde_json::from_str::<Light>(raw)
                .ok()
                .unwrap_or_default()
                .metadata
                .into_name();
            let object = object_label(&kind, &namespace, &name);
            return Err(duplicate_error(source, Some(object), "", key).with_position(position));
        }
    }
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

pub(crate) fn read_yaml(source: &Arc<str>, text: &str, out: &mut Vec<Item>) -> Result<(), Error> {
    for (d, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = Strict::deserialize(doc).map(|s| s.0).map_err(|e| {
            let position = match e.location() {
                Some(l) => format!("line {} column {}", l.line(), l.column()),
                None => format!("document {}", d + 1),
            };
            Error::new(ErrorKind::Malformed, source, format!("malformed YAML: {e}"))
                .with_position(position)
        })?;
        // A repeated key of a List document itself (outside `items`): no object to name.
        if let serde_json::Value::Object(m) = &value {
            if m.contains_key("items") {
                let top: serde_json::Map<_, _> = m
                    .iter()
                    .filter(|(k, _)| *k != "items")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if let Some((path, key)) = duplicate(&serde_json::Value::Object(top)) {
                    return Err(duplicate_error(source, None, &path, &key)
                        .with_position(format!("document {}", d + 1)));
                }
            }
        }
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
    if let Some((path, key)) = duplicate(&value) {
        let (namespace, name) = serde_json::from_value::<Light>(value.clone())
            .ok()
            .unwrap_or_default()
            .metadata
            .into_name();
        let object = object_label(
            if kind.is_empty() { "object" } else { &kind },
            &namespace,
            &name,
        );
        return Err(duplicate_error(source, Some(object), &path, &key).with_position(position));
    }
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

/// A mapping that repeats `key`, at `path` inside the object (or the document).
fn duplicate_error(source: &str, object: Option<String>, path: &str, key: &str) -> Error {
    let field = if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    };
    let mut e = Error::new(
        ErrorKind::Malformed,
        source,
        "duplicate key: a mapping names it twice (Kubernetes refuses it; which one was meant?)",
    )
    .with_field(field)
    .with_value(key.to_owned());
    if let Some(o) = object {
        e = e.with_object(o);
    }
    e
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
    let make = |meta: LightMeta| {
        let (namespace, name) = meta.into_name();
        Origin {
            source: source.clone(),
            position: position.clone().into(),
            object: object_label(&kind, &namespace, &name),
            kind: crate::origin::Word::new(&kind),
            api_version: crate::origin::Word::new(&api_version),
            namespace,
            name,
        }
    };
    match read(class) {
        Ok(body) => {
            let meta = match body.names() {
                Some((namespace, name)) => LightMeta {
                    name: name.to_owned(),
                    generate_name: body
                        .meta()
                        .map(|m| m.generate_name.clone())
                        .unwrap_or_default(),
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
