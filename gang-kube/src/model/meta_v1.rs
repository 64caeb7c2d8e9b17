//! `meta/v1`: object metadata (`ObjectMeta`, `OwnerReference`), with only the labels
//! and annotations gang-kube reads kept for pods and workloads.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::Deserialize;

use crate::model::de::{nullable, nullable_vec, strict_map, Seen, StringMap, Text, Word};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Meta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// `metadata.generateName`: the prefix the API server completes when `name` is
    /// empty (every object gets a name from it: see `Objects::add`).
    #[serde(deserialize_with = "nullable")]
    pub generate_name: String,
    /// Set when reading: `name` was empty and was taken from `generate_name`.
    #[serde(skip)]
    pub generated: bool,
    #[serde(deserialize_with = "nullable")]
    pub namespace: String,
    /// Only the labels gang-kube reads on pods and workloads (see [`read_label`]);
    /// nodes keep all theirs ([`NodeMeta`]).
    #[serde(deserialize_with = "known_labels")]
    pub labels: StringMap,
    /// Only the annotations gang-kube reads (see [`read_annotation`]); others (a
    /// `last-applied-configuration` can be large) are skipped unread.
    #[serde(deserialize_with = "known_annotations")]
    pub annotations: StringMap,
    #[serde(deserialize_with = "nullable_vec")]
    pub owner_references: Vec<OwnerRef>,
}

/// A node's metadata: every label counts (topology, selectors, flavors).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NodeMeta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "strict_map")]
    pub labels: StringMap,
}

/// Whether gang-kube reads a label of a pod or workload: queue names, PodGroup
/// membership, and the role names controllers set.
pub(crate) fn read_label(key: &str) -> bool {
    key.starts_with("kueue.x-k8s.io/")
        || key.starts_with("kai.scheduler/")
        || key.starts_with("scheduling.x-k8s.io/")
        || key.starts_with("training.kubeflow.org/")
        || key.starts_with("jobset.sigs.k8s.io/")
        || key.starts_with("volcano.sh/")
        || matches!(
            key,
            "pod-group.scheduling.sigs.k8s.io"
                | "pod-group-name"
                | "app.kubernetes.io/component"
                | "role"
        )
}

fn known_labels<'de, D: Deserializer<'de>>(d: D) -> Result<StringMap, D::Error> {
    filtered_map(d, read_label)
}

fn known_annotations<'de, D: Deserializer<'de>>(d: D) -> Result<StringMap, D::Error> {
    filtered_map(d, read_annotation)
}

/// Whether gang-kube reads an annotation: Kueue's, KAI's, JobSet's and LeaderWorkerSet's
/// exclusive topology, Volcano's group and task.
pub(crate) fn read_annotation(key: &str) -> bool {
    key.starts_with("kueue.x-k8s.io/")
        || key.starts_with("alpha.jobset.sigs.k8s.io/")
        || key.starts_with("leaderworkerset.sigs.k8s.io/")
        || key.starts_with("kai.scheduler/")
        || key.starts_with("volcano.sh/")
        || key == "scheduling.k8s.io/group-name"
        || key == "pod-group-name"
}

/// A string map keeping only the keys `keep` accepts; the others are skipped unread.
fn filtered_map<'de, D: Deserializer<'de>>(
    d: D,
    keep: fn(&str) -> bool,
) -> Result<StringMap, D::Error> {
    struct V(fn(&str) -> bool);
    impl<'de> Visitor<'de> for V {
        type Value = StringMap;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_unit<E: de::Error>(self) -> Result<StringMap, E> {
            Ok(StringMap::new())
        }
        fn visit_none<E: de::Error>(self) -> Result<StringMap, E> {
            Ok(StringMap::new())
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<StringMap, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
            let mut out = StringMap::new();
            let mut seen = Seen::new();
            while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
                if seen.contains(&k) {
                    return Err(de::Error::custom(format!(
                        "duplicate key {k:?} (Kubernetes refuses a map that names a key twice)"
                    )));
                }
                seen.push(k.clone());
                if (self.0)(&k) {
                    let v: Option<String> = map.next_value()?;
                    out.insert(k.into_owned(), v.unwrap_or_default());
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    d.deserialize_option(V(keep))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OwnerRef {
    #[serde(deserialize_with = "nullable")]
    pub kind: Word,
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub api_version: Word,
}
