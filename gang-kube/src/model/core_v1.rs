//! `core/v1` (the API group `""`): Node, Pod, pod templates and specs, containers,
//! affinity, taints and tolerations, conditions.

use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;

use crate::model::de::{
    nullable, nullable_vec, strict_map, Count, ResourceList, StringMap, Text, Word,
};
use crate::model::meta_v1::{Meta, NodeMeta};

/// Only the `PodResizePending` condition of a pod counts (for in-place resize).
fn resize_conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Condition>, D::Error> {
    #[derive(Deserialize)]
    struct Light<'a> {
        #[serde(rename = "type", borrow, default)]
        type_: Option<Text<'a>>,
        #[serde(borrow, default)]
        reason: Option<Text<'a>>,
    }
    // As `Option<Vec<Light>>` reads, keeping only those conditions (no vector of all).
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<Condition>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<S: serde::de::SeqAccess<'de>>(
            self,
            mut seq: S,
        ) -> Result<Self::Value, S::Error> {
            let mut out = Vec::new();
            while let Some(c) = seq.next_element::<Light<'de>>()? {
                if c.type_.as_ref().is_some_and(|t| t.0 == "PodResizePending") {
                    out.push(Condition {
                        type_: "PodResizePending".to_owned(),
                        status: String::new(),
                        reason: c.reason.map(|r| r.0.into_owned()).unwrap_or_default(),
                        message: String::new(),
                    });
                }
            }
            Ok(out)
        }
    }
    d.deserialize_option(V)
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
    #[serde(deserialize_with = "nullable_vec")]
    pub taints: Vec<KTaint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct KTaint {
    #[serde(deserialize_with = "nullable")]
    pub key: Word,
    #[serde(deserialize_with = "nullable")]
    pub value: Word,
    #[serde(deserialize_with = "nullable")]
    pub effect: Word,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NodeStatus {
    #[serde(deserialize_with = "strict_map")]
    pub allocatable: ResourceList,
    #[serde(deserialize_with = "nullable_vec")]
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
    pub scheduler_name: Word,
    #[serde(deserialize_with = "nullable_vec")]
    pub containers: Vec<Container>,
    #[serde(deserialize_with = "nullable_vec")]
    pub init_containers: Vec<Container>,
    #[serde(deserialize_with = "strict_map")]
    pub overhead: ResourceList,
    /// `spec.runtimeClassName`: admission adds the RuntimeClass's `overhead.podFixed`.
    #[serde(deserialize_with = "nullable")]
    pub runtime_class_name: String,
    /// Pod-level resources (`spec.resources`, PodLevelResources).
    pub resources: Option<Resources>,
    #[serde(deserialize_with = "strict_map")]
    pub node_selector: StringMap,
    #[serde(deserialize_with = "nullable")]
    pub affinity: Affinity,
    #[serde(deserialize_with = "nullable_vec")]
    pub tolerations: Vec<KToleration>,
    #[serde(deserialize_with = "nullable")]
    pub scheduling_group: SchedulingGroup,
    /// `spec.priority` (admission sets it from the PriorityClass on a running pod).
    pub priority: Option<i64>,
    /// `spec.priorityClassName`.
    #[serde(deserialize_with = "nullable")]
    pub priority_class_name: String,
    pub topology_spread_constraints: Count,
    pub resource_claims: Count,
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
    pub restart_policy: Word,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Resources {
    #[serde(deserialize_with = "strict_map")]
    pub requests: ResourceList,
    #[serde(deserialize_with = "strict_map")]
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
    pub key: Word,
    #[serde(deserialize_with = "nullable")]
    pub operator: Word,
    #[serde(deserialize_with = "nullable")]
    pub value: Word,
    #[serde(deserialize_with = "nullable")]
    pub effect: Word,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PodStatus {
    #[serde(deserialize_with = "nullable")]
    pub phase: Word,
    #[serde(deserialize_with = "resize_conditions")]
    pub conditions: Vec<Condition>,
    #[serde(deserialize_with = "nullable_vec")]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(deserialize_with = "nullable_vec")]
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

    /// A pod's and a node's lists are held in their length, not in serde's room for
    /// four (most of the memory of 100,000 pods read); a resource list of one entry
    /// too. The spread constraints and claims are counted.
    #[test]
    fn lists_are_held_in_their_length() {
        let text = r#"{"metadata": {"name": "p", "ownerReferences": [{"kind": "Job", "name": "j"}]},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
              "limits": {"nvidia.com/gpu": "1"}}}],
              "initContainers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
              "tolerations": [{"key": "k", "operator": "Exists"}],
              "topologySpreadConstraints": [{"maxSkew": 1}, {"maxSkew": 2}], "resourceClaims": null},
            "status": {"containerStatuses": [{"name": "c"}]}}"#;
        for pod in [
            serde_json::from_str::<Pod>(text).unwrap(),
            serde_yaml_ng::from_str::<Pod>(text).unwrap(),
        ] {
            let s = &pod.spec;
            assert_eq!((s.containers.len(), s.containers.capacity()), (1, 1));
            assert_eq!(s.init_containers.len(), 3);
            assert_eq!(s.init_containers.capacity(), 3);
            assert_eq!(s.tolerations.capacity(), 1);
            assert_eq!(pod.metadata.owner_references.capacity(), 1);
            assert_eq!(pod.status.container_statuses.capacity(), 1);
            let r = &s.containers[0].resources;
            assert_eq!((r.limits.len(), r.limits.capacity()), (1, 1));
            assert_eq!((r.requests.len(), r.requests.capacity()), (2, 2));
            assert!(!s.topology_spread_constraints.is_empty());
            assert!(s.resource_claims.is_empty());
        }
        let node: Node = serde_json::from_str(
            r#"{"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}}"#,
        )
        .unwrap();
        assert_eq!(node.spec.taints.capacity(), 1);
        assert_eq!(node.status.conditions.capacity(), 1);
        // Within mimalloc's 640-byte bin (656 bytes took a 768-byte block per pod).
        #[cfg(target_pointer_width = "64")]
        assert!(
            std::mem::size_of::<Pod>() <= 640,
            "{}",
            std::mem::size_of::<Pod>()
        );
    }
}

// ---------------------------------------------------------------------------------------
// LimitRange: the defaults admission gives containers without requests or limits

/// `v1` `LimitRange` (namespaced): per `Container` item, `default` (limits) and
/// `defaultRequest` (requests) for containers that set none.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LimitRange {
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    #[serde(deserialize_with = "nullable")]
    pub spec: LimitRangeSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LimitRangeSpec {
    #[serde(deserialize_with = "nullable")]
    pub limits: Vec<LimitRangeItem>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LimitRangeItem {
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub type_: String,
    #[serde(deserialize_with = "strict_map")]
    pub default: ResourceList,
    #[serde(deserialize_with = "strict_map")]
    pub default_request: ResourceList,
}
