//! Our own serde structs for the few fields we read of each Kubernetes kind.
//!
//! Every field has a default (Kubernetes omits empty fields and sometimes writes
//! `null`), unknown fields are ignored (real objects have many), and quantities are parsed
//! by gang-core's [`Quantity::parse`] while deserialising, so a bad one fails with the
//! path of its field.

use std::collections::BTreeMap;
use std::fmt;

use gang_core::Quantity;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::Deserialize;

/// `null` reads as the default, like an absent field.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A quantity, parsed while reading: `"500m"`, `"16Gi"`, `8`, `0.5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Qty(pub Quantity);

impl<'de> Deserialize<'de> for Qty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Meta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
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
    #[serde(deserialize_with = "nullable")]
    pub owner_references: Vec<OwnerRef>,
}

/// A node's metadata: every label counts (topology, selectors, flavors).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NodeMeta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
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

/// Whether gang-kube reads an annotation: Kueue's, KAI's, Volcano's group and task.
pub(crate) fn read_annotation(key: &str) -> bool {
    key.starts_with("kueue.x-k8s.io/")
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
            while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
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

/// Only the `PodResizePending` condition of a pod counts (for in-place resize).
fn resize_conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Condition>, D::Error> {
    #[derive(Deserialize)]
    struct Light<'a> {
        #[serde(rename = "type", borrow, default)]
        type_: Option<Text<'a>>,
        #[serde(borrow, default)]
        reason: Option<Text<'a>>,
    }
    let all: Option<Vec<Light<'de>>> = Option::deserialize(d)?;
    Ok(all
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.type_.as_ref().is_some_and(|t| t.0 == "PodResizePending"))
        .map(|c| Condition {
            type_: "PodResizePending".to_owned(),
            status: String::new(),
            reason: c.reason.map(|r| r.0.into_owned()).unwrap_or_default(),
            message: String::new(),
        })
        .collect())
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OwnerRef {
    #[serde(deserialize_with = "nullable")]
    pub kind: String,
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub api_version: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Condition {
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub type_: String,
    #[serde(deserialize_with = "nullable")]
    pub status: String,
    #[serde(deserialize_with = "nullable")]
    pub reason: String,
    #[serde(deserialize_with = "nullable")]
    pub message: String,
}

// ---------------------------------------------------------------------------------------
// Nodes

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Node {
    #[serde(deserialize_with = "nullable")]
    pub metadata: NodeMeta,
    #[serde(deserialize_with = "nullable")]
    pub spec: NodeSpecK,
    #[serde(deserialize_with = "nullable")]
    pub status: NodeStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeSpecK {
    #[serde(deserialize_with = "nullable")]
    pub unschedulable: bool,
    #[serde(deserialize_with = "nullable")]
    pub taints: Vec<KTaint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KTaint {
    #[serde(deserialize_with = "nullable")]
    pub key: String,
    #[serde(deserialize_with = "nullable")]
    pub value: String,
    #[serde(deserialize_with = "nullable")]
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeStatus {
    #[serde(deserialize_with = "nullable")]
    pub allocatable: ResourceList,
    #[serde(deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
}

// ---------------------------------------------------------------------------------------
// Pods and pod templates

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Pod {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: PodSpec,
    #[serde(deserialize_with = "nullable")]
    pub status: PodStatus,
}

/// `metadata` + `spec` of a pod template (`spec.template` of a Job, replica specs…).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PodTemplate {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PodSpec {
    #[serde(deserialize_with = "nullable")]
    pub node_name: String,
    #[serde(deserialize_with = "nullable")]
    pub scheduler_name: String,
    #[serde(deserialize_with = "nullable")]
    pub containers: Vec<Container>,
    #[serde(deserialize_with = "nullable")]
    pub init_containers: Vec<Container>,
    #[serde(deserialize_with = "nullable")]
    pub overhead: ResourceList,
    /// Pod-level resources (`spec.resources`, PodLevelResources).
    pub resources: Option<Resources>,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: StringMap,
    #[serde(deserialize_with = "nullable")]
    pub affinity: Affinity,
    #[serde(deserialize_with = "nullable")]
    pub tolerations: Vec<KToleration>,
    #[serde(deserialize_with = "nullable")]
    pub scheduling_group: SchedulingGroup,
    #[serde(deserialize_with = "nullable")]
    pub topology_spread_constraints: Vec<IgnoredAny>,
    #[serde(deserialize_with = "nullable")]
    pub resource_claims: Vec<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SchedulingGroup {
    #[serde(deserialize_with = "nullable")]
    pub pod_group_name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Container {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub resources: Resources,
    /// `Always` on an init container makes it a sidecar (restartable init container).
    #[serde(deserialize_with = "nullable")]
    pub restart_policy: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Resources {
    #[serde(deserialize_with = "nullable")]
    pub requests: ResourceList,
    #[serde(deserialize_with = "nullable")]
    pub limits: ResourceList,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Affinity {
    pub node_affinity: Option<NodeAffinity>,
    pub pod_affinity: Option<IgnoredAny>,
    pub pod_anti_affinity: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeAffinity {
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    #[serde(deserialize_with = "nullable")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeSelector {
    #[serde(deserialize_with = "nullable")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeSelectorTerm {
    #[serde(deserialize_with = "nullable")]
    pub match_expressions: Vec<SelectorRequirement>,
    #[serde(deserialize_with = "nullable")]
    pub match_fields: Vec<SelectorRequirement>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SelectorRequirement {
    #[serde(deserialize_with = "nullable")]
    pub key: String,
    #[serde(deserialize_with = "nullable")]
    pub operator: String,
    #[serde(deserialize_with = "nullable")]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KToleration {
    #[serde(deserialize_with = "nullable")]
    pub key: String,
    #[serde(deserialize_with = "nullable")]
    pub operator: String,
    #[serde(deserialize_with = "nullable")]
    pub value: String,
    #[serde(deserialize_with = "nullable")]
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PodStatus {
    #[serde(deserialize_with = "nullable")]
    pub phase: String,
    #[serde(deserialize_with = "resize_conditions")]
    pub conditions: Vec<Condition>,
    #[serde(deserialize_with = "nullable")]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(deserialize_with = "nullable")]
    pub init_container_statuses: Vec<ContainerStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ContainerStatus {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// What the kubelet admitted (in-place resize).
    pub allocated_resources: Option<ResourceList>,
    /// What the runtime actually applied (in-place resize).
    pub resources: Option<Resources>,
}

// ---------------------------------------------------------------------------------------
// Kueue (and KAI) Topology, Kueue ResourceFlavor

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologyObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: TopologySpecK,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologySpecK {
    #[serde(deserialize_with = "nullable")]
    pub levels: Vec<TopologyLevel>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TopologyLevel {
    #[serde(deserialize_with = "nullable")]
    pub node_label: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FlavorObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: FlavorSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct FlavorSpec {
    #[serde(deserialize_with = "nullable")]
    pub node_labels: StringMap,
    #[serde(deserialize_with = "nullable")]
    pub tolerations: Vec<KToleration>,
    #[serde(deserialize_with = "nullable")]
    pub topology_name: String,
}

// ---------------------------------------------------------------------------------------
// PodGroups: native (scheduling.k8s.io), Volcano, scheduler-plugins, KAI

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PodGroupObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: PodGroupSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PodGroupSpec {
    /// Native: `spec.schedulingPolicy.gang.minCount`.
    #[serde(deserialize_with = "nullable")]
    pub scheduling_policy: NativePolicy,
    /// Native: `spec.schedulingConstraints.topology[].key`.
    #[serde(deserialize_with = "nullable")]
    pub scheduling_constraints: NativeConstraints,
    /// Volcano, scheduler-plugins, KAI.
    pub min_member: Option<i64>,
    /// Volcano.
    #[serde(deserialize_with = "nullable")]
    pub min_task_member: BTreeMap<String, i64>,
    /// Volcano, scheduler-plugins.
    #[serde(deserialize_with = "nullable")]
    pub min_resources: ResourceList,
    /// Volcano.
    pub network_topology: Option<NetworkTopology>,
    /// KAI.
    pub topology_constraint: Option<KaiTopologyConstraint>,
    /// KAI.
    #[serde(deserialize_with = "nullable")]
    pub sub_groups: Vec<IgnoredAny>,
    /// Volcano.
    #[serde(deserialize_with = "nullable")]
    pub sub_group_policy: Vec<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NativePolicy {
    pub gang: Option<NativeGang>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NativeGang {
    pub min_count: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NativeConstraints {
    #[serde(deserialize_with = "nullable")]
    pub topology: Vec<NativeTopologyKey>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NativeTopologyKey {
    #[serde(deserialize_with = "nullable")]
    pub key: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NetworkTopology {
    #[serde(deserialize_with = "nullable")]
    pub mode: String,
    pub highest_tier_allowed: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub highest_tier_name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KaiTopologyConstraint {
    #[serde(deserialize_with = "nullable")]
    pub topology: String,
    #[serde(deserialize_with = "nullable")]
    pub required_topology_level: String,
    #[serde(deserialize_with = "nullable")]
    pub preferred_topology_level: String,
}

// ---------------------------------------------------------------------------------------
// Workloads: Job, JobSet, Kubeflow jobs, Volcano Job

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobSpec {
    pub parallelism: Option<i64>,
    pub completions: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobTemplate {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JobSetObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSetSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct JobSetSpec {
    #[serde(deserialize_with = "nullable")]
    pub replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReplicatedJob {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: JobTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct KubeflowObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: KubeflowSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KubeflowSpec {
    #[serde(deserialize_with = "nullable")]
    pub pytorch_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(deserialize_with = "nullable")]
    pub mpi_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(rename = "tfReplicaSpecs", deserialize_with = "nullable")]
    pub tf_replica_specs: BTreeMap<String, ReplicaSpec>,
    #[serde(deserialize_with = "nullable")]
    pub run_policy: RunPolicy,
    pub elastic_policy: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReplicaSpec {
    pub replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RunPolicy {
    pub scheduling_policy: Option<KubeflowSchedulingPolicy>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KubeflowSchedulingPolicy {
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub min_resources: ResourceList,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VolcanoJobObj {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: VolcanoJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VolcanoJobSpec {
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub tasks: Vec<VolcanoTask>,
    pub network_topology: Option<NetworkTopology>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VolcanoTask {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    pub replicas: Option<i64>,
    pub min_available: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    pub template: PodTemplate,
    pub partition_policy: Option<IgnoredAny>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_annotations_and_conditions_read_are_kept() {
        let text = r#"{"metadata": {"name": "p", "annotations": {
              "kubectl.kubernetes.io/last-applied-configuration": "{\"big\": true}",
              "kueue.x-k8s.io/podset-required-topology": "rack",
              "scheduling.k8s.io/group-name": "g", "pod-group-name": "k"}},
            "status": {"phase": "Running", "conditions": [
              {"type": "Ready", "status": "True"},
              {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]}}"#;
        for pod in [
            serde_json::from_str::<Pod>(text).unwrap(),
            serde_json::from_value::<Pod>(serde_json::from_str(text).unwrap()).unwrap(),
        ] {
            let keys: Vec<&str> = pod
                .metadata
                .annotations
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                [
                    "kueue.x-k8s.io/podset-required-topology",
                    "pod-group-name",
                    "scheduling.k8s.io/group-name"
                ]
            );
            assert_eq!(pod.status.conditions.len(), 1);
            assert_eq!(pod.status.conditions[0].reason, "Infeasible");
        }
        let pod: Pod = serde_json::from_str(
            r#"{"metadata": {"annotations": null}, "status": {"conditions": null}}"#,
        )
        .unwrap();
        assert!(pod.metadata.annotations.is_empty() && pod.status.conditions.is_empty());
        // Pods keep the labels read; nodes keep all.
        let labels = r#"{"metadata": {"name": "x", "labels": {"app": "a", "role": "worker",
            "scheduling.x-k8s.io/pod-group": "g", "pod-template-hash": "1"}}}"#;
        let pod: Pod = serde_json::from_str(labels).unwrap();
        let keys: Vec<&str> = pod.metadata.labels.keys().map(String::as_str).collect();
        assert_eq!(keys, ["role", "scheduling.x-k8s.io/pod-group"]);
        let node: Node = serde_json::from_str(labels).unwrap();
        assert_eq!(node.metadata.labels.len(), 4);
    }
}
