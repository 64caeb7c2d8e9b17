//! The PodGroup of any scheduler in one form: what gang-kube reads of a group, whichever
//! API it came from. Each API has its own struct ([`scheduling`], [`volcano`],
//! [`coscheduling`], [`kai`]) with only the fields that API defines; this file is the one
//! place they are converted, when the object is read.

use std::collections::BTreeMap;

use crate::model::meta_v1::Meta;
use crate::model::volcano::NetworkTopology;
use crate::model::{coscheduling, kai, scheduling, volcano};

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

impl PodGroupKind {
    /// The field the group minimum is read from.
    pub(crate) fn min_field(self) -> &'static str {
        match self {
            PodGroupKind::Native => "spec.schedulingPolicy.gang.minCount",
            PodGroupKind::Volcano | PodGroupKind::Coscheduling | PodGroupKind::Kai => {
                "spec.minMember"
            }
        }
    }
}

/// A PodGroup of any kind (the kind is beside it, in [`Body::PodGroup`](crate::model::body::Body::PodGroup)).
#[derive(Debug, Clone, Default)]
pub(crate) struct PodGroupObj {
    pub metadata: Meta,
    pub spec: PodGroupSpec,
}

/// What gang-kube reads of a PodGroup; a field an API does not have is empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct PodGroupSpec {
    /// The group minimum, at [`PodGroupKind::min_field`]: native
    /// `schedulingPolicy.gang.minCount`; Volcano, coscheduling, KAI `minMember`.
    pub min_member: Option<i64>,
    /// Native: `schedulingConstraints.topology[].key`, in order.
    pub topology_keys: Vec<String>,
    /// Volcano: `minTaskMember`.
    pub min_task_member: BTreeMap<String, i64>,
    /// Volcano, coscheduling: whether `minResources` is set.
    pub min_resources: bool,
    /// Volcano: `networkTopology`.
    pub network_topology: Option<NetworkTopology>,
    /// KAI: `topologyConstraint`.
    pub topology_constraint: Option<kai::TopologyConstraint>,
    /// KAI `subGroups` or Volcano `subGroupPolicy`, when set: the field.
    pub sub_groups: Option<&'static str>,
    /// Native, Volcano, KAI: `priorityClassName`, when set.
    pub priority_class_name: Option<String>,
    /// Native: `priority`.
    pub priority: Option<i64>,
    /// Native: `preemptionPolicy`, when set.
    pub preemption_policy: Option<String>,
}

/// An empty string as `None`.
fn set(s: String) -> Option<String> {
    Some(s).filter(|s| !s.is_empty())
}

impl From<scheduling::PodGroup> for PodGroupObj {
    fn from(o: scheduling::PodGroup) -> Self {
        let s = o.spec;
        PodGroupObj {
            metadata: o.metadata,
            spec: PodGroupSpec {
                min_member: s.scheduling_policy.gang.and_then(|g| g.min_count),
                topology_keys: s
                    .scheduling_constraints
                    .topology
                    .into_iter()
                    .map(|k| k.key)
                    .collect(),
                priority_class_name: set(s.priority_class_name),
                priority: s.priority,
                preemption_policy: set(s.preemption_policy),
                ..PodGroupSpec::default()
            },
        }
    }
}

impl From<volcano::PodGroup> for PodGroupObj {
    fn from(o: volcano::PodGroup) -> Self {
        let s = o.spec;
        PodGroupObj {
            metadata: o.metadata,
            spec: PodGroupSpec {
                min_member: s.min_member,
                min_task_member: s.min_task_member,
                min_resources: !s.min_resources.is_empty(),
                network_topology: s.network_topology,
                sub_groups: (!s.sub_group_policy.is_empty()).then_some("spec.subGroupPolicy"),
                priority_class_name: set(s.priority_class_name),
                ..PodGroupSpec::default()
            },
        }
    }
}

impl From<coscheduling::PodGroup> for PodGroupObj {
    fn from(o: coscheduling::PodGroup) -> Self {
        let s = o.spec;
        PodGroupObj {
            metadata: o.metadata,
            spec: PodGroupSpec {
                min_member: s.min_member,
                min_resources: !s.min_resources.is_empty(),
                ..PodGroupSpec::default()
            },
        }
    }
}

impl From<kai::PodGroup> for PodGroupObj {
    fn from(o: kai::PodGroup) -> Self {
        let s = o.spec;
        PodGroupObj {
            metadata: o.metadata,
            spec: PodGroupSpec {
                min_member: s.min_member,
                topology_constraint: s.topology_constraint,
                sub_groups: (!s.sub_groups.is_empty()).then_some("spec.subGroups"),
                priority_class_name: set(s.priority_class_name),
                ..PodGroupSpec::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::body::{classify, Body};

    fn read(api_version: &str, spec: &str) -> (PodGroupKind, PodGroupSpec) {
        let text = format!(r#"{{"metadata": {{"name": "g"}}, "spec": {spec}}}"#);
        match classify(api_version, "PodGroup").json(&text).unwrap() {
            Body::PodGroup(k, pg) => (k, pg.spec),
            other => panic!("{other:?}"),
        }
    }

    /// Each API's PodGroup is read with its own fields into the one form.
    #[test]
    fn each_api_reads_its_own_fields_into_one_form() {
        let (k, s) = read(
            "scheduling.k8s.io/v1beta1",
            r#"{"schedulingPolicy": {"gang": {"minCount": 4}},
                "schedulingConstraints": {"topology": [{"key": "b"}, {"key": "r"}]},
                "minMember": 9}"#,
        );
        assert_eq!(
            (k, s.min_member, s.topology_keys),
            (
                PodGroupKind::Native,
                Some(4),
                vec!["b".to_owned(), "r".to_owned()]
            )
        );
        let (k, s) = read(
            "scheduling.volcano.sh/v1beta1",
            r#"{"minMember": 3, "minTaskMember": {"worker": 2}, "minResources": {"cpu": "1"},
                "networkTopology": {"mode": "hard"}, "subGroupPolicy": [{}],
                "topologyConstraint": {"requiredTopologyLevel": "rack"}}"#,
        );
        assert_eq!(k, PodGroupKind::Volcano);
        assert_eq!(
            (s.min_member, s.min_task_member.len(), s.min_resources),
            (Some(3), 1, true)
        );
        assert_eq!(s.sub_groups, Some("spec.subGroupPolicy"));
        assert!(s.network_topology.is_some());
        // KAI's field on a Volcano PodGroup is not Volcano's: not read.
        assert!(s.topology_constraint.is_none());
        let (k, s) = read(
            "scheduling.run.ai/v2alpha2",
            r#"{"minMember": 2, "subGroups": [{"name": "a"}], "minResources": {"cpu": "1"},
                "topologyConstraint": {"requiredTopologyLevel": "rack"}}"#,
        );
        assert_eq!(
            (k, s.min_member, s.sub_groups),
            (PodGroupKind::Kai, Some(2), Some("spec.subGroups"))
        );
        assert_eq!(
            s.topology_constraint.unwrap().required_topology_level,
            "rack"
        );
        assert!(!s.min_resources);
        let (k, s) = read(
            "scheduling.x-k8s.io/v1alpha1",
            r#"{"minMember": 5, "minResources": {"cpu": "1"}}"#,
        );
        assert_eq!(
            (k, s.min_member, s.min_resources),
            (PodGroupKind::Coscheduling, Some(5), true)
        );
        assert_eq!(k.min_field(), "spec.minMember");
        assert_eq!(
            PodGroupKind::Native.min_field(),
            "spec.schedulingPolicy.gang.minCount"
        );
    }

    /// The group's own priority fields: all three on the native PodGroup, the class
    /// name on Volcano's and KAI's, none on coscheduling's (it has none).
    #[test]
    fn each_api_reads_its_group_priority() {
        let (_, s) = read(
            "scheduling.k8s.io/v1beta1",
            r#"{"priorityClassName": "high", "priority": 100, "preemptionPolicy": "Never"}"#,
        );
        assert_eq!(
            (
                s.priority_class_name.as_deref(),
                s.priority,
                s.preemption_policy.as_deref()
            ),
            (Some("high"), Some(100), Some("Never"))
        );
        for api in [
            "scheduling.volcano.sh/v1beta1",
            "scheduling.run.ai/v2alpha2",
        ] {
            let (_, s) = read(api, r#"{"priorityClassName": "high", "priority": 100}"#);
            assert_eq!(
                (s.priority_class_name.as_deref(), s.priority),
                (Some("high"), None),
                "{api}"
            );
        }
        let (_, s) = read(
            "scheduling.x-k8s.io/v1alpha1",
            r#"{"priorityClassName": "high"}"#,
        );
        assert_eq!(s.priority_class_name, None);
        let (_, s) = read("scheduling.k8s.io/v1beta1", r#"{"priorityClassName": ""}"#);
        assert_eq!(s.priority_class_name, None);
    }
}
