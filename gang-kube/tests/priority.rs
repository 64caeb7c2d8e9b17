//! Priorities from Kubernetes objects and running pods as evictable work, on
//! `tests/fixtures/preemption.yaml`. Every expectation is worked out by hand from the
//! fixture (its header comment has the cluster, the units and the plan).

use std::fs;

use gang_core::lifecycle::PreemptOutcome;
use gang_core::Quantity;
use gang_kube::{
    workloads, Cluster, ClusterOptions, ErrorKind, Objects, PrioritySource, WorkloadGang,
};

const GPU: &str = "nvidia.com/gpu";

fn objects() -> Objects {
    let path = format!(
        "{}/tests/fixtures/preemption.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    Objects::parse("preemption.yaml", &fs::read_to_string(path).unwrap()).unwrap()
}

fn workload(o: &Objects, name: &str) -> WorkloadGang {
    workloads(o)
        .unwrap()
        .into_iter()
        .find(|w| w.object.name == name)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

fn evictable(o: &Objects) -> Cluster {
    Cluster::from_objects(o, &ClusterOptions::new().evictable_pods(true)).unwrap()
}

#[test]
fn priorities_come_from_spec_priority_then_the_class_then_the_default() {
    let o = objects();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let urgent = c.priority_of(&workload(&o, "urgent")).unwrap();
    assert_eq!(
        (urgent.value, urgent.class.as_deref(), urgent.preempts),
        (1000, Some("urgent"), true)
    );
    assert_eq!(urgent.source, PrioritySource::PriorityClass);
    assert_eq!(
        urgent.field.as_deref(),
        Some("spec.template.spec.priorityClassName")
    );
    let peer = c.priority_of(&workload(&o, "peer")).unwrap();
    assert_eq!(
        (peer.value, peer.class, peer.source, peer.field.as_deref()),
        (
            50,
            None,
            PrioritySource::SpecPriority,
            Some("spec.template.spec.priority")
        )
    );
    // Kubernetes' preemptionPolicy: Never: a high priority that does not preempt.
    let polite = c.priority_of(&workload(&o, "polite")).unwrap();
    assert_eq!((polite.value, polite.preempts), (1000, false));
    // The PodGroup's member pods carry spec.priority 10.
    assert_eq!(c.priority_of(&workload(&o, "big")).unwrap().value, 10);
    // The gang carries it.
    assert_eq!(
        c.gang_for(&workload(&o, "urgent")).unwrap().get_priority(),
        1000
    );
    // A class the input lacks: an error naming the field and the value.
    let err = c.priority_of(&workload(&o, "typo")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(err.object(), Some("Job/ml/typo"));
    assert_eq!(err.field(), Some("spec.template.spec.priorityClassName"));
    assert_eq!(err.value(), Some("urgnet"));
    // Placing does not need it: the gang is built, at priority 0.
    assert_eq!(c.gang_for(&workload(&o, "typo")).unwrap().get_priority(), 0);
    let names: Vec<&str> = c.priority_classes().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["batch", "low", "mid", "polite", "serving", "urgent"]
    );
}

#[test]
fn a_global_default_class_gives_workloads_without_one_its_value() {
    let mut o = objects();
    o.add(
        "default.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: everyone}\nvalue: 7\nglobalDefault: true\n",
    )
    .unwrap();
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: plain, namespace: ml}\nspec:\n  parallelism: 1\n  template:\n    spec:\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]\n";
    o.add("plain.yaml", job).unwrap();
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let p = c.priority_of(&workload(&o, "plain")).unwrap();
    assert_eq!(
        (p.value, p.class.as_deref(), p.source, p.field),
        (7, Some("everyone"), PrioritySource::GlobalDefault, None)
    );
    // Without any class: 0, from nowhere.
    let mut o2b = Objects::parse("plain.yaml", job).unwrap();
    o2b.add(
        "n.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {nvidia.com/gpu: \"8\"}}\n",
    )
    .unwrap();
    let c2 = Cluster::from_objects(&o2b, &ClusterOptions::new()).unwrap();
    let p2 = c2.priority_of(&workload(&o2b, "plain")).unwrap();
    assert_eq!(
        (p2.value, p2.source, p2.preempts),
        (0, PrioritySource::None, true)
    );
}

#[test]
fn running_pods_are_one_evictable_unit_per_workload() {
    let o = objects();
    let c = evictable(&o);
    let units: Vec<(&str, i32, Quantity)> = c
        .evictable()
        .iter()
        .map(|u| {
            let gpus = u
                .get_amounts()
                .filter(|(_, r, _)| *r == GPU)
                .map(|(_, _, q)| q.resolve("x").unwrap().millis())
                .sum::<u64>();
            (u.get_id(), u.get_priority(), Quantity::from_millis(gpus))
        })
        .collect();
    // eval-b names class mid (50) without spec.priority; big's two pods on two racks
    // are one unit; serving's two pods are one unit.
    assert_eq!(
        units,
        [
            ("Job/ml/eval-b", 50, Quantity::from_units(4)),
            ("Job/ml/train-a", 100, Quantity::from_units(8)),
            ("PodGroup/ml/big", 10, Quantity::from_units(8)),
            ("ReplicaSet/ml/serving", 2000, Quantity::from_units(12)),
        ]
    );
    let big = c
        .evictable()
        .iter()
        .find(|u| u.get_id() == "PodGroup/ml/big")
        .unwrap();
    let nodes: Vec<&str> = big
        .get_amounts()
        .filter(|(_, r, _)| *r == GPU)
        .map(|(n, _, _)| n)
        .collect();
    assert_eq!(nodes, ["n1", "n3"]);
    // Free capacity is the same as without units: every GPU is in use.
    let plain = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    assert!(plain.evictable().is_empty());
    let (a, b) = (c.inventory().unwrap(), plain.inventory().unwrap());
    for n in ["n1", "n2", "n3", "n4"] {
        assert_eq!(a.free(n, GPU), Some(Quantity::ZERO), "{n}");
        assert_eq!(a.free(n, GPU), b.free(n, GPU), "{n}");
        assert_eq!(a.free(n, "pods"), b.free(n, "pods"), "{n}");
        assert_eq!(a.free(n, "cpu"), b.free(n, "cpu"), "{n}");
    }
    // The report counts the same usage either way.
    assert_eq!(c.usage(), plain.usage());
    assert!(a.validate().is_ok());
}

#[test]
fn the_urgent_job_evicts_the_low_jobs_of_rack_r1_whole() {
    let o = objects();
    let c = evictable(&o);
    let inv = c.inventory().unwrap();
    let gang = c.gang_for(&workload(&o, "urgent")).unwrap();
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
    // big is evicted whole: its pod on n3 (rack r2) too.
    assert_eq!(plan.evicted(GPU), Quantity::from_units(12));
    assert_eq!(plan.placement().domain_path(), "r1");
    assert_eq!(plan.placement().node_counts(), [("n1", 2), ("n2", 2)]);
    // peer (50) may evict only big (10): 4 GPUs per rack at most.
    let peer = c.gang_for(&workload(&o, "peer")).unwrap();
    assert!(matches!(
        inv.preempt(&peer).unwrap(),
        PreemptOutcome::Unschedulable(_)
    ));
}

#[test]
fn bad_priority_classes_name_the_field() {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n---\n";
    let cases = [
        ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\n", "value", ""),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 3000000000\n",
            "value",
            "3000000000",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\npreemptionPolicy: Sometimes\n",
            "preemptionPolicy",
            "Sometimes",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n",
            "globalDefault",
            "true",
        ),
    ];
    for (text, field, value) in cases {
        let o = Objects::parse("pc.yaml", &format!("{node}{text}")).unwrap();
        let err = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue, "{err}");
        assert_eq!(err.field(), Some(field), "{err}");
        if !value.is_empty() {
            assert_eq!(err.value(), Some(value), "{err}");
        }
        assert!(err.object().unwrap().starts_with("PriorityClass/"), "{err}");
    }
}
