//! Quantities read from nodes and pods, in every way Kubernetes writes them, come out
//! exact: the allocatable and the usage gang-core sees equal the numbers written.

use gang_core::Quantity;
use gang_kube::{Cluster, ClusterOptions, Objects};
use proptest::prelude::*;

/// A quantity as text, and its exact value in milli-units.
fn quantity() -> impl Strategy<Value = (String, u64)> {
    prop_oneof![
        (0u64..1_000_000).prop_map(|u| (u.to_string(), u * 1000)),
        (0u64..10_000_000).prop_map(|m| (format!("{m}m"), m)),
        (0u64..100_000).prop_map(|k| (format!("{k}Ki"), k * 1024 * 1000)),
        (0u64..100_000).prop_map(|g| (format!("{g}Gi"), g * (1 << 30) * 1000)),
        (0u64..100_000).prop_map(|k| (format!("{k}k"), k * 1_000_000)),
        (0u64..10_000, 1u64..10).prop_map(|(u, t)| (format!("{u}.{t}"), u * 1000 + t * 100)),
    ]
}

proptest! {
    #[test]
    fn allocatable_and_requests_are_exact(
        (alloc, alloc_m) in quantity(),
        reqs in proptest::collection::vec(quantity(), 0..4),
        json in any::<bool>(),
    ) {
        let pods: Vec<String> = reqs
            .iter()
            .enumerate()
            .map(|(i, (q, _))| format!(
                r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "p{i}", "namespace": "d"}},
                   "spec": {{"nodeName": "n1", "containers": [{{"name": "c", "resources": {{"requests": {{"memory": "{q}"}}}}}}]}},
                   "status": {{"phase": "Running"}}}}"#
            ))
            .collect();
        let node = format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n1"}},
               "status": {{"allocatable": {{"memory": "{alloc}", "pods": 110}}}}}}"#
        );
        let mut items = vec![node];
        items.extend(pods);
        let text = if json {
            format!(r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#, items.join(","))
        } else {
            // JSON is YAML too; multi-document YAML takes the other path.
            items.iter().map(|i| format!("---\n{i}\n")).collect::<String>()
        };
        let objects = Objects::parse("q", &text).unwrap();
        let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
        let u = &c.usage()[0];
        prop_assert_eq!(u.allocatable["memory"], Quantity::from_millis(alloc_m));
        let used: u64 = reqs.iter().map(|(_, m)| m).sum();
        if reqs.is_empty() {
            prop_assert!(!u.used.contains_key("memory"));
        } else {
            prop_assert_eq!(u.used["memory"], Quantity::from_millis(used));
            prop_assert_eq!(u.used["pods"], Quantity::from_units(reqs.len() as u64));
        }
        let inv = c.inventory().unwrap();
        prop_assert_eq!(
            inv.free("n1", "memory"),
            Some(Quantity::from_millis(alloc_m.saturating_sub(used)))
        );
    }
}

/// A JSON number where a quantity goes (`"cpu": 0.5`) is read as Kubernetes reads it,
/// the same as YAML's `0.5`, on the JSON path and the YAML path alike (issue 25, item
/// 8: JSON numbers with a fraction failed with "invalid type: map").
#[test]
fn json_numbers_are_quantities_on_every_path() {
    let node = |cpu: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n1"}},
               "status": {{"allocatable": {{"cpu": {cpu}, "pods": 110}}}}}}"#
        )
    };
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": 0.25}}}]},
        "status": {"phase": "Running"}}"#;
    for (cpu, millis) in [("0.5", 500), ("8", 8000), ("1.5", 1500), ("1e3", 1_000_000)] {
        let list = format!(
            r#"{{"apiVersion": "v1", "kind": "List", "items": [{}, {pod}]}}"#,
            node(cpu)
        );
        let yaml = format!("---\n{}\n---\n{pod}\n", node(cpu));
        for text in [list, yaml] {
            let objects = Objects::parse("q", &text).unwrap_or_else(|e| panic!("{cpu}: {e}"));
            let c = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
            let u = &c.usage()[0];
            assert_eq!(u.allocatable["cpu"], Quantity::from_millis(millis), "{cpu}");
            assert_eq!(u.used["cpu"], Quantity::from_millis(250), "{cpu}");
        }
    }
    // A negative number is refused the same way as the string "-1".
    let text = format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        node("-1")
    );
    let e = Objects::parse("q", &text).unwrap_err().to_string();
    assert!(e.contains("negative"), "{e}");
}
