//! Reading Kubernetes objects from JSON or YAML text: [`Objects`], read by the fast path
//! for a JSON `List` ([`fast`]) or the careful path that names the object and field of
//! an error ([`careful`]).

mod careful;
mod depth;
mod fast;
mod strict;

use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use crate::model::body::Item;
use crate::origin::{object_label, ObjectRef};

/// An object with only `metadata.generateName` (how `kubectl create -f` examples and
/// Kueue's samples are written) is named by it, as written (`sample-job-`): the API
/// server would append five random characters. Its metadata says so (`generated`), and
/// the workload read from it warns.
fn name_from_generate_name(item: &mut Item) {
    let Some(m) = item.body.meta_mut() else {
        return;
    };
    if m.name.is_empty() && !m.generate_name.is_empty() {
        m.name = m.generate_name.clone();
        m.generated = true;
    }
    if item.origin.name != m.name {
        item.origin.name = m.name.clone();
        item.origin.object = object_label(&item.origin.kind, &item.origin.namespace, &m.name);
    }
}

/// The workload kinds [`workloads`](crate::workloads) reads, as users write them.
pub const WORKLOAD_KINDS: &[&str] = &[
    "PodGroup (scheduling.k8s.io, scheduling.volcano.sh, scheduling.x-k8s.io, scheduling.run.ai) with its pods",
    "Job",
    "JobSet",
    "LeaderWorkerSet",
    "PyTorchJob",
    "MPIJob",
    "TFJob",
    "JAXJob",
    "XGBoostJob",
    "PaddleJob",
    "RayJob",
    "RayCluster",
    "AppWrapper",
    "Volcano Job",
    "pods labelled kueue.x-k8s.io/pod-group-name",
];

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
        // A leading byte order mark (editors on Windows write one) is not text: the YAML
        // parser would read it as the start of the first key. Lines are unchanged.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if trimmed.starts_with('{') {
            match fast::read_list(&source, trimmed) {
                Some(list) => items = list,
                None => careful::read_json(&source, trimmed, &mut items)?,
            }
        } else if trimmed.starts_with('[') {
            careful::read_json(&source, trimmed, &mut items)?;
        } else {
            if let Some(line) = depth::too_deep(text, depth::MAX_FLOW_DEPTH) {
                return Err(Error::new(
                    ErrorKind::Malformed,
                    source_name,
                    format!(
                        "malformed YAML: nested more than {} levels deep ([ and {{): Kubernetes objects are shallow; refused before parsing",
                        depth::MAX_FLOW_DEPTH
                    ),
                )
                .with_position(format!("line {line}")));
            }
            careful::read_yaml(&source, text, &mut items)?;
        }
        for item in &mut items {
            name_from_generate_name(item);
        }
        self.items.extend(items);
        Ok(())
    }

    /// Whether an object read carries the label `kueue.x-k8s.io/priority-class` (naming
    /// a Kueue `WorkloadPriorityClass`): a caller reading from a cluster then fetches
    /// those too.
    ///
    /// ```
    /// use gang_kube::Objects;
    /// let o = Objects::parse("j.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a, labels: {kueue.x-k8s.io/priority-class: hi}}\n")?;
    /// assert!(o.uses_workload_priority_class());
    /// assert!(!Objects::parse("j.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\n")?.uses_workload_priority_class());
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn uses_workload_priority_class(&self) -> bool {
        self.items.iter().any(|i| {
            i.body.meta().is_some_and(|m| {
                m.labels
                    .contains_key(crate::model::kueue::WORKLOAD_PRIORITY_CLASS_LABEL)
            })
        })
    }

    /// Puts every namespaced object that names no namespace into `namespace`, as
    /// `kubectl apply -n NAMESPACE -f` does (manifests rarely name one: it comes from
    /// `-n`, else the kubeconfig context, else `default`). Objects naming a namespace
    /// keep it; cluster-scoped kinds (Node, Topology, ResourceFlavor, PriorityClass,
    /// WorkloadPriorityClass, RuntimeClass) and kinds gang-kube does not read are left as they are. Call it once,
    /// after every source is added, before [`workloads`](crate::workloads) and
    /// [`Cluster::from_objects`](crate::Cluster::from_objects): a PodGroup and its pods
    /// then meet in one namespace.
    ///
    /// ```
    /// use gang_kube::{workloads, Objects};
    /// let mut o = Objects::parse("group.yaml", "
    /// apiVersion: scheduling.x-k8s.io/v1alpha1
    /// kind: PodGroup
    /// metadata: {name: g}
    /// spec: {minMember: 3}
    /// ---
    /// apiVersion: v1
    /// kind: Pod
    /// metadata: {name: p0, namespace: default, labels: {scheduling.x-k8s.io/pod-group: g}}
    /// spec: {containers: [{name: c}]}
    /// ")?;
    /// assert_eq!(workloads(&o)?.len(), 2); // the group in no namespace, the pod's in default
    /// o.apply_namespace("default");
    /// let w = workloads(&o)?;
    /// assert_eq!(w.len(), 1);
    /// assert_eq!((w[0].name().as_str(), w[0].minimum), ("PodGroup/default/g", 3));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn apply_namespace(&mut self, namespace: &str) {
        for item in &mut self.items {
            if !item.body.is_namespaced() || !item.origin.namespace.is_empty() {
                continue;
            }
            if let Some(m) = item.body.meta_mut() {
                m.namespace = namespace.to_owned();
            }
            let o = &mut item.origin;
            o.namespace = namespace.to_owned();
            o.object = object_label(&o.kind, &o.namespace, &o.name);
        }
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

    /// The objects of kinds gang-kube does not read (a Deployment, a StatefulSet, a
    /// CRD it does not know), in input order: what to name when no workload is found.
    ///
    /// ```
    /// use gang_kube::{Objects, WORKLOAD_KINDS};
    /// let o = Objects::parse("w.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")?;
    /// assert_eq!(o.unread()[0].to_string(), "Deployment/web");
    /// assert!(WORKLOAD_KINDS.contains(&"LeaderWorkerSet"));
    /// # Ok::<(), gang_kube::Error>(())
    /// ```
    pub fn unread(&self) -> Vec<ObjectRef> {
        self.items
            .iter()
            .filter(|i| matches!(i.body, crate::model::body::Body::Other))
            .map(|i| i.origin.to_ref())
            .collect()
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
                .with_value(item.origin.kind.to_string()));
            }
        }
        Ok(())
    }
}
