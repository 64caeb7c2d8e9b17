//! What admission adds to a pod before the scheduler counts it, when the objects that
//! drive it are in the input: a `LimitRange`'s default limits and requests for
//! containers that set none (the LimitRanger admission plugin, per namespace), and a
//! `RuntimeClass`'s `overhead.podFixed` as the pod's `spec.overhead` (the RuntimeClass
//! admission plugin). Applied to pod templates and to pods not yet bound to a node (a
//! bound pod was admitted already: what it says is what runs).

use std::collections::HashMap;

use crate::model::body::{Body, Item};
use crate::model::core_v1::{Container, LimitRange, PodSpec};
use crate::model::de::ResourceList;
use crate::model::node_v1::RuntimeClass;
use crate::objects::Objects;

/// A note: the field and what admission added there (or could not know).
pub(crate) struct Note {
    pub field: String,
    pub message: String,
}

/// Notes per object (its `Kind/ns/name` label): what admission added, and containers
/// left without requests.
pub(crate) type Notes = HashMap<String, Vec<Note>>;

/// The LimitRanges per namespace and RuntimeClasses by name in `objects`.
struct Admission<'a> {
    limits: HashMap<&'a str, Vec<(&'a str, &'a LimitRange)>>,
    classes: HashMap<&'a str, &'a RuntimeClass>,
}

/// A LimitRange item's default request for `r`: `defaultRequest`, else `default` (the
/// API server defaults one from the other when the LimitRange is created).
fn default_request(lr: &LimitRange) -> ResourceList {
    let mut out = ResourceList::new();
    for item in lr.spec.limits.iter().filter(|i| i.type_ == "Container") {
        for (k, v) in item.default.iter().chain(&item.default_request) {
            out.insert(k.to_owned(), *v);
        }
    }
    out
}

fn default_limit(lr: &LimitRange) -> ResourceList {
    let mut out = ResourceList::new();
    for item in lr.spec.limits.iter().filter(|i| i.type_ == "Container") {
        out.extend(item.default.iter().map(|(k, v)| (k.to_owned(), *v)));
    }
    out
}

/// Fills one container from one LimitRange; whether anything was added. A resource
/// with a limit written and no request already has the limit as its request (the API
/// server's defaulting, before admission): only resources with neither get the
/// LimitRange's default request.
fn fill(c: &mut Container, lr: &LimitRange) -> bool {
    let had_limit: Vec<String> = c.resources.limits.keys().map(str::to_owned).collect();
    let mut added = false;
    for (k, v) in default_request(lr) {
        if !c.resources.requests.contains_key(&k) && !had_limit.contains(&k) {
            c.resources.requests.insert(k, v);
            added = true;
        }
    }
    for (k, v) in default_limit(lr) {
        if !c.resources.limits.contains_key(&k) {
            c.resources.limits.insert(k, v);
            added = true;
        }
    }
    added
}

impl Admission<'_> {
    /// Admits one pod spec (at `field`) in `namespace`; notes what was added.
    fn admit(&self, spec: &mut PodSpec, namespace: &str, field: &str, notes: &mut Vec<Note>) {
        let bare = |c: &Container| c.resources.requests.is_empty() && c.resources.limits.is_empty();
        let empty: Vec<String> = spec
            .containers
            .iter()
            .chain(&spec.init_containers)
            .filter(|c| bare(c))
            .map(|c| c.name.clone())
            .collect();
        match self.limits.get(namespace) {
            Some(ranges) => {
                for (name, lr) in ranges {
                    let mut added = Vec::new();
                    for c in spec.containers.iter_mut().chain(spec.init_containers.iter_mut()) {
                        if fill(c, lr) {
                            added.push(c.name.clone());
                        }
                    }
                    if !added.is_empty() {
                        notes.push(Note {
                            field: format!("{field}.containers"),
                            message: format!(
                                "LimitRange {namespace}/{name} gives container(s) {} their default requests and limits, as admission does",
                                added.join(", ")
                            ),
                        });
                    }
                }
            }
            None if !empty.is_empty() => notes.push(Note {
                field: format!("{field}.containers"),
                message: format!(
                    "container(s) {} request nothing and no LimitRange of namespace {} was given: if the namespace has one, admission adds its defaults (give `kubectl get limitranges -n {} -o yaml` too)",
                    empty.join(", "),
                    if namespace.is_empty() { "default" } else { namespace },
                    if namespace.is_empty() { "default" } else { namespace },
                ),
            }),
            None => {}
        }
        if !spec.runtime_class_name.is_empty() && spec.overhead.is_empty() {
            match self.classes.get(spec.runtime_class_name.as_str()) {
                Some(rc) => spec.overhead = rc.overhead.pod_fixed.clone(),
                None => notes.push(Note {
                    field: format!("{field}.runtimeClassName"),
                    message: format!(
                        "RuntimeClass {} is not in the input: its pod overhead (overhead.podFixed), which admission adds, is not counted",
                        spec.runtime_class_name
                    ),
                }),
            }
        }
    }
}

/// The objects as admission leaves them (`None`: nothing changes), and the notes per
/// workload object. Only workload objects and pods not bound to a node are admitted
/// (copied when a LimitRange or RuntimeClass applies; bound pods are never copied).
pub(crate) fn admitted(objects: &Objects) -> (Option<Objects>, Notes) {
    let mut adm = Admission {
        limits: HashMap::new(),
        classes: HashMap::new(),
    };
    for i in &objects.items {
        match &i.body {
            Body::LimitRange(lr) => adm
                .limits
                .entry(i.origin.namespace.as_str())
                .or_default()
                .push((i.origin.name.as_str(), lr)),
            Body::RuntimeClass(rc) => {
                adm.classes.insert(i.origin.name.as_str(), rc);
            }
            _ => {}
        }
    }
    let applies = !adm.limits.is_empty() || !adm.classes.is_empty();
    let mut notes = Notes::new();
    let mut replaced: Vec<(usize, Item)> = Vec::new();
    for (idx, item) in objects.items.iter().enumerate() {
        let unbound = matches!(&item.body, Body::Pod(p) if p.spec.node_name.is_empty());
        if !item.body.is_workload() && !unbound {
            continue;
        }
        let mut c = item.clone();
        let ns = c.origin.namespace.clone();
        let mut found = Vec::new();
        for (field, spec) in c.body.pod_specs_mut() {
            adm.admit(spec, &ns, &field, &mut found);
        }
        if !found.is_empty() {
            notes
                .entry(c.origin.object.clone())
                .or_default()
                .extend(found);
        }
        if applies {
            replaced.push((idx, c));
        }
    }
    if replaced.is_empty() {
        return (None, notes);
    }
    let mut out = objects.clone();
    for (idx, c) in replaced {
        out.items[idx] = c;
    }
    (Some(out), notes)
}
