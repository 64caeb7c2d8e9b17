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
