//! A PodGroup's own priority (issue 22): Kubernetes' `scheduling.k8s.io` PodGroup sets
//! `spec.priorityClassName`, `spec.priority` and `spec.preemptionPolicy` (KEP-5710,
//! workload-aware preemption), Volcano's and KAI's `spec.priorityClassName`. The group's
//! priority is the workload's, before its pods' own, and the priority of the evictable
//! unit its running pods make. Expectations worked out by hand from the YAML here and
//! from `tests/fixtures/preemption.yaml` (its header has the cluster).

use std::fs;

use gang_core::lifecycle::PreemptOutcome;
use gang_kube::{
    workload_priority, workloads, Cluster, ClusterOptions, ErrorKind, Objects, PrioritySource,
};

/// Classes low (10) and urgent (1000); one group of each API, each of two pending pods
/// whose own class is low.
fn objects(native_spec: &str) -> Objects {
    // Two pods of `group`, with `meta` under their metadata and `spec` under their spec.
    let pods = |group: &str, meta: &str, spec: &str| {
        (0..2)
            .map(|i| {
                format!(
                    "- apiVersion: v1
  kind: Pod
  metadata:
    name: {group}-{i}
    namespace: ml
    {meta}
  spec:
    {spec}
    priorityClassName: low
    containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]
"
                )
            })
            .collect::<String>()
    };
    let text = format!(
        "apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {{name: low}}
  value: 10
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {{name: urgent}}
  value: 1000
- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {{name: native, namespace: ml}}
  spec: {native_spec}
{}- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {{name: vc, namespace: ml}}
  spec: {{minMember: 2, priorityClassName: urgent}}
{}- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {{name: cosched, namespace: ml}}
  spec: {{minMember: 2, priorityClassName: urgent}}
{}",
        pods(
            "native",
            "labels: {}",
            "schedulingGroup: {podGroupName: native}"
        ),
        pods(
            "vc",
            "annotations: {scheduling.k8s.io/group-name: vc}",
            "schedulerName: volcano"
        ),
        pods(
            "cosched",
            "labels: {scheduling.x-k8s.io/pod-group: cosched}",
            "schedulerName: x"
        ),
    );
    Objects::parse("groups.yaml", &text).unwrap()
}

fn priority(o: &Objects, name: &str) -> Result<gang_kube::WorkloadPriority, gang_kube::Error> {
    let w = workloads(o)
        .unwrap()
        .into_iter()
        .find(|w| w.object.name == name)
        .unwrap_or_else(|| panic!("no workload {name}"));
    workload_priority(o, &w)
}

#[test]
fn a_pod_groups_class_is_the_workloads_not_its_pods() {
    let o = objects("{schedulingPolicy: {gang: {minCount: 2}}, priorityClassName: urgent}");
    let p = priority(&o, "native").unwrap();
    assert_eq!(
        (
            p.value,
            p.class.as_deref(),
            p.source,
            p.field.as_deref(),
            p.preempts
        ),
        (
            1000,
            Some("urgent"),
            PrioritySource::PriorityClass,
            Some("spec.priorityClassName"),
            true
        )
    );
    // Volcano's PodGroup has the field too; coscheduling's has none: its pods' class.
    assert_eq!(priority(&o, "vc").unwrap().value, 1000);
    let cosched = priority(&o, "cosched").unwrap();
    assert_eq!(
        (cosched.value, cosched.field.as_deref()),
        (10, Some("pods.priorityClassName"))
    );
}

#[test]
fn a_pod_groups_spec_priority_stands_and_its_policy_decides_preempting() {
    // spec.priority as admission sets it; its class need not be in the input.
    let o = objects("{priority: 7, priorityClassName: gone, preemptionPolicy: Never}");
    let p = priority(&o, "native").unwrap();
    assert_eq!(
        (p.value, p.class.as_deref(), p.source, p.field.as_deref()),
        (
            7,
            Some("gone"),
            PrioritySource::SpecPriority,
            Some("spec.priority")
        )
    );
    // Kubernetes' preemptionPolicy: Never: it waits rather than preempts.
    assert!(!p.preempts);
    // The policy alone: the pods' priority, the group's policy.
    let p = priority(&objects("{preemptionPolicy: Never}"), "native").unwrap();
    assert_eq!((p.value, p.preempts), (10, false));
    let p = priority(
        &objects("{preemptionPolicy: PreemptLowerPriority}"),
        "native",
    )
    .unwrap();
    assert_eq!((p.value, p.preempts), (10, true));
}

#[test]
fn bad_group_priorities_name_the_field() {
    let e = priority(&objects("{priorityClassName: nope}"), "native").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        (e.field(), e.value()),
        (Some("spec.priorityClassName"), Some("nope"))
    );
    for (spec, field, value) in [
        (
            "{preemptionPolicy: Sometimes}",
            "spec.preemptionPolicy",
            "Sometimes",
        ),
        ("{priority: 3000000000}", "spec.priority", "3000000000"),
    ] {
        let e = workloads(&objects(spec)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{spec}");
        assert_eq!((e.field(), e.value()), (Some(field), Some(value)), "{spec}");
    }
}

/// `tests/fixtures/preemption.yaml` with PodGroup ml/big given its own class `batch`
/// (100): its running pods say priority 10, but the group is 100. Job ml/urgent (1000)
/// needs 8 GPUs in one rack. In rack r1 the victims of priority <= 50 (eval-b, 4 GPUs)
/// are not enough; at <= 100 both train-a (8 GPUs on n1 and n2) and big (4 on n1,
/// 4 on n3: 8 in all) are of that level: {train-a} frees 4 + 4 in r1 (fits: 8 GPUs,
/// one victim), {big, eval-b} frees 4 + 4 too (12 GPUs, two victims). So train-a goes.
/// Without the group's class (the pods' 10) the plan is {big, eval-b} (priority.rs).
#[test]
fn a_running_groups_unit_takes_the_groups_priority() {
    let path = format!(
        "{}/tests/fixtures/preemption.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = fs::read_to_string(path).unwrap();
    let old = "    schedulingPolicy: {gang: {minCount: 2}}\n";
    assert_eq!(text.matches(old).count(), 1);
    let text = text.replace(
        old,
        "    schedulingPolicy: {gang: {minCount: 2}}\n    priorityClassName: batch\n",
    );
    let o = Objects::parse("preemption.yaml", &text).unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new().evictable_pods(true)).unwrap();
    let big = c
        .evictable()
        .iter()
        .find(|u| u.get_id() == "PodGroup/ml/big")
        .unwrap();
    assert_eq!(big.get_priority(), 100);
    let w = workloads(&o)
        .unwrap()
        .into_iter()
        .find(|w| w.object.name == "urgent")
        .unwrap();
    let gang = c.gang_for(&w).unwrap();
    let out = c.inventory().unwrap().preempt(&gang).unwrap();
    let PreemptOutcome::Placed(plan) = out else {
        panic!("{}", out.status())
    };
    let victims: Vec<(&str, i32)> = plan
        .victims()
        .iter()
        .map(|v| (v.name.as_str(), v.priority))
        .collect();
    assert_eq!(victims, [("Job/ml/train-a", 100)]);
}
