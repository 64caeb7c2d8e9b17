//! Kueue's WorkloadPriorityClass on `tests/fixtures/kueue-workload-priority.yaml`, read
//! on top of `preemption.yaml`. Every expectation is worked out by hand from the two
//! fixtures' header comments.

use std::fs;

use gang_core::lifecycle::PreemptOutcome;
use gang_core::Quantity;
use gang_kube::{
    workload_priority, workloads, Cluster, ClusterOptions, ErrorKind, Objects, PrioritySource,
    WorkloadGang,
};

const GPU: &str = "nvidia.com/gpu";
const FIELD: &str = "metadata.labels.kueue.x-k8s.io/priority-class";

fn read(o: &mut Objects, name: &str) {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    o.add(name, &fs::read_to_string(path).unwrap()).unwrap();
}

fn objects() -> Objects {
    let mut o = Objects::default();
    read(&mut o, "preemption.yaml");
    read(&mut o, "kueue-workload-priority.yaml");
    o
}

fn workload(o: &Objects, name: &str) -> WorkloadGang {
    workloads(o)
        .unwrap()
        .into_iter()
        .find(|w| w.object.name == name)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

#[test]
fn both_api_versions_are_read() {
    let o = objects();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let read: Vec<(&str, i32, &str)> = c
        .workload_priority_classes()
        .map(|w| (w.name.as_str(), w.value, w.object.api_version.as_str()))
        .collect();
    assert_eq!(
        read,
        [
            ("kueue-mid", 50, "kueue.x-k8s.io/v1beta1"),
            ("kueue-urgent", 1000, "kueue.x-k8s.io/v1beta2"),
        ]
    );
    // Not PriorityClasses: pods cannot name them.
    assert!(c.priority_classes().all(|p| !p.name.starts_with("kueue-")));
    // Cluster-scoped: `-n` does not put them in a namespace.
    let mut o = objects();
    o.apply_namespace("elsewhere");
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    assert!(c
        .workload_priority_classes()
        .all(|w| w.object.namespace.is_none()));
}

#[test]
fn the_label_wins_over_the_pods_priority_class_and_spec_priority() {
    let o = objects();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let w = workload(&o, "wpc-urgent");
    assert_eq!(w.workload_priority_class.as_deref(), Some("kueue-urgent"));
    let p = c.priority_of(&w).unwrap();
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
            Some("kueue-urgent"),
            PrioritySource::WorkloadPriorityClass,
            Some(FIELD),
            true
        )
    );
    assert_eq!(c.gang_for(&w).unwrap().get_priority(), 1000);
    // Without the cluster: the same.
    assert_eq!(workload_priority(&o, &w).unwrap(), p);
    // spec.priority 2500 in the template does not count either: the label's 50 does.
    let mid = c.priority_of(&workload(&o, "wpc-mid")).unwrap();
    assert_eq!(
        (mid.value, mid.source),
        (50, PrioritySource::WorkloadPriorityClass)
    );
    // A job without the label keeps its pods' class.
    let urgent = workload(&o, "urgent");
    assert_eq!(urgent.workload_priority_class, None);
    assert_eq!(
        c.priority_of(&urgent).unwrap().source,
        PrioritySource::PriorityClass
    );
}

#[test]
fn a_label_naming_no_class_is_an_error_naming_the_label() {
    let o = objects();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let w = workload(&o, "wpc-typo");
    let err = c.priority_of(&w).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(err.object(), Some("Job/ml/wpc-typo"));
    assert_eq!(err.field(), Some(FIELD));
    assert_eq!(err.value(), Some("kueue-urgnet"));
    assert!(err.to_string().contains("WorkloadPriorityClass"), "{err}");
    // As for an unknown priorityClassName: placing does not need it, priority 0.
    assert_eq!(c.gang_for(&w).unwrap().get_priority(), 0);
    // A PriorityClass of that name does not stand in for the WorkloadPriorityClass.
    let mut o = objects();
    o.add(
        "pc.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: kueue-urgnet}\nvalue: 5\n",
    )
    .unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    assert_eq!(
        c.priority_of(&workload(&o, "wpc-typo"))
            .unwrap_err()
            .field(),
        Some(FIELD)
    );
}

#[test]
fn the_label_decides_what_may_be_evicted() {
    let o = objects();
    let c = Cluster::from_objects(&o, &ClusterOptions::new().evictable_pods(true)).unwrap();
    let inv = c.inventory().unwrap();
    // wpc-urgent at 1000 (its pods' class low would give 10: nothing lower).
    let gang = c.gang_for(&workload(&o, "wpc-urgent")).unwrap();
    let plan = match inv.preempt(&gang).unwrap() {
        PreemptOutcome::Placed(p) => p,
        other => panic!("{}", other.status()),
    };
    let victims: Vec<(&str, i32)> = plan
        .victims()
        .iter()
        .map(|v| (v.name.as_str(), v.priority))
        .collect();
    assert_eq!(victims, [("Job/ml/eval-b", 50), ("PodGroup/ml/big", 10)]);
    assert_eq!(plan.evicted(GPU), Quantity::from_units(12));
    assert_eq!(plan.placement().domain_path(), "r1");
    assert_eq!(plan.placement().node_counts(), [("n1", 2), ("n2", 2)]);
    // wpc-mid at 50 (its spec.priority 2500 would evict anything): only big is lower.
    let mid = c.gang_for(&workload(&o, "wpc-mid")).unwrap();
    assert_eq!(mid.get_priority(), 50);
    assert!(matches!(
        inv.preempt(&mid).unwrap(),
        PreemptOutcome::Unschedulable(_)
    ));
}

#[test]
fn a_kueue_pod_group_takes_the_label_from_its_pods() {
    let pod = |i: u32, class: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: g-{i}\n  namespace: ml\n  labels: {{kueue.x-k8s.io/pod-group-name: g, kueue.x-k8s.io/priority-class: {class}}}\n  annotations: {{kueue.x-k8s.io/pod-group-total-count: \"2\"}}\nspec:\n  containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n---\n"
        )
    };
    let wpc = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: hi}\nvalue: 300\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: lo}\nvalue: 3\n";
    let o = Objects::parse("g.yaml", &format!("{}{}{wpc}", pod(0, "hi"), pod(1, "hi"))).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(w.workload_priority_class.as_deref(), Some("hi"));
    let p = workload_priority(&o, w).unwrap();
    assert_eq!(
        (p.value, p.source),
        (300, PrioritySource::WorkloadPriorityClass)
    );
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    // Pods that disagree: the first one's, with a warning naming the other pod.
    let o = Objects::parse("g.yaml", &format!("{}{}{wpc}", pod(0, "hi"), pod(1, "lo"))).unwrap();
    let w = &workloads(&o).unwrap()[0];
    assert_eq!(workload_priority(&o, w).unwrap().value, 300);
    let warn = w
        .warnings
        .iter()
        .find(|x| x.field == FIELD)
        .expect("a warning");
    assert!(warn.message.contains("Pod/ml/g-1"), "{}", warn.message);
}

#[test]
fn bad_workload_priority_classes_name_the_field() {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n---\n";
    for (text, value) in [
        ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: a}\ndescription: no value\n", None),
        ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: a}\nvalue: 3000000000\n", Some("3000000000")),
    ] {
        let o = Objects::parse("wpc.yaml", &format!("{node}{text}")).unwrap();
        let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue, "{err}");
        assert_eq!(err.field(), Some("value"), "{err}");
        assert_eq!(err.object(), Some("WorkloadPriorityClass/a"), "{err}");
        if let Some(v) = value {
            assert_eq!(err.value(), Some(v), "{err}");
        }
    }
    // A value that is not a number: a malformed object, named.
    let o = Objects::parse(
        "wpc.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: a}\nvalue: high\n",
    );
    let err = o.unwrap_err();
    assert_eq!(err.field(), Some("value"), "{err}");
}

#[test]
fn the_json_fast_path_keeps_the_value() {
    // kubectl get workloadpriorityclasses -o json: the fast path reads the List.
    let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
       "metadata": {"name": "p"}, "value": 7, "description": "d"}]}"#;
    let o = Objects::parse("w.json", text).unwrap();
    let mut with_node = o.clone();
    with_node
        .add(
            "n.yaml",
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n",
        )
        .unwrap();
    let c = Cluster::from_objects(&with_node, &ClusterOptions::new()).unwrap();
    let v: Vec<(&str, i32)> = c
        .workload_priority_classes()
        .map(|w| (w.name.as_str(), w.value))
        .collect();
    assert_eq!(v, [("p", 7)]);
}
