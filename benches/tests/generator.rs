//! Sanity of the synthetic clusters: sizes, utilisation, awkward nodes, determinism.

use std::collections::HashSet;

use gang_benches::gen::{Cluster, Flavor, Size, Spec, BLOCK, RACK, ZONE};

fn racks(c: &Cluster) -> HashSet<(String, String, String)> {
    c.nodes
        .iter()
        .filter_map(|n| {
            let get = |k: &str| {
                n.labels
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.clone())
            };
            Some((get(ZONE)?, get(BLOCK)?, get(RACK)?))
        })
        .collect()
}

#[test]
fn standard_sizes() {
    let want = [
        (Flavor::Hgx, Size::K1, 1024, 32),
        (Flavor::Hgx, Size::K10, 10_240, 320),
        (Flavor::Hgx, Size::K100, 102_400, 3200),
        (Flavor::Nvl72, Size::K1, 1008, 56),
        (Flavor::Nvl72, Size::K10, 10_080, 560),
        (Flavor::Nvl72, Size::K100, 100_800, 5600),
    ];
    for (flavor, size, nodes, rack_count) in want {
        let spec = Spec::of(flavor, size, 50);
        assert_eq!(spec.node_count(), nodes);
        if size != Size::K100 {
            let c = Cluster::generate(&spec);
            assert_eq!(c.len(), nodes);
            // A node missing its rack label leaves its rack with fewer nodes, not fewer
            // racks (all racks have more than one node).
            assert_eq!(racks(&c).len(), rack_count, "{flavor:?} {size:?}");
        }
    }
}

#[test]
fn utilisation_is_as_asked_and_fragmented() {
    for flavor in [Flavor::Hgx, Flavor::Nvl72] {
        for pct in [0u32, 50, 85] {
            let c = Cluster::generate(&Spec::of(flavor, Size::K1, pct));
            let (used, total) = c.gpu_use();
            let share = used as f64 / total as f64 * 100.0;
            assert!(
                (share - f64::from(pct)).abs() < 0.5,
                "{flavor:?} {pct}%: {share:.2}%"
            );
            let gpus = c.spec.gpus * 1000;
            let free: u64 = c.nodes.iter().map(|n| gpus - n.used[0]).sum();
            let on_empty: u64 = c
                .nodes
                .iter()
                .filter(|n| n.used[0] == 0)
                .map(|_| gpus)
                .sum();
            if pct == 0 {
                assert_eq!(used, 0);
            } else {
                // Fragmented: most free GPUs sit on partly used nodes.
                assert!(
                    on_empty * 2 < free,
                    "{flavor:?} {pct}%: {on_empty} of {free} free GPU millis on empty nodes"
                );
            }
            // CPU and memory never exceed capacity.
            for n in &c.nodes {
                for r in 0..3 {
                    assert!(n.used[r] <= n.capacity[r], "{}", n.name);
                }
            }
        }
    }
}

#[test]
fn a_few_awkward_nodes() {
    let c = Cluster::generate(&Spec::hgx(Size::K10, 50));
    let n = c.len();
    let cordoned = c.nodes.iter().filter(|x| !x.schedulable).count();
    let tainted = c.nodes.iter().filter(|x| !x.taints.is_empty()).count();
    let no_rack = c
        .nodes
        .iter()
        .filter(|x| !x.labels.iter().any(|(k, _)| *k == RACK))
        .count();
    // 3, 5 + 5 and 1 per thousand, give or take.
    assert!(cordoned > n / 1000 && cordoned < n * 6 / 1000, "{cordoned}");
    assert!(
        tainted > n * 5 / 1000 && tainted < n * 15 / 1000,
        "{tainted}"
    );
    assert!(no_rack > 0 && no_rack < n * 3 / 1000, "{no_rack}");
    // Every 10th block has the other product.
    let alt = c
        .nodes
        .iter()
        .filter(|x| x.labels.iter().any(|(_, v)| v == c.spec.alt_product()))
        .count();
    assert_eq!(alt, 2 * 16 * 32);
}

#[test]
fn deterministic_for_a_seed() {
    let spec = Spec::nvl72(Size::K1, 85);
    let a = Cluster::generate(&spec);
    let b = Cluster::generate(&spec);
    assert_eq!(a.nodes, b.nodes);
    let mut other = spec.clone();
    other.seed ^= 1;
    let c = Cluster::generate(&other);
    assert_ne!(a.nodes, c.nodes);
    // Same nodes, same inventory order.
    let (ia, ib) = (a.inventory(), b.inventory());
    assert!(ia.node_names().eq(ib.node_names()));
    ia.validate().unwrap();
}

#[test]
fn names_are_unique_and_padded_values_sort_numerically() {
    let mut spec = Spec::hgx(Size::K10, 0);
    // A node missing its rack label sorts after its block's racks: none here.
    spec.no_rack_label_per_mille = 0;
    let c = Cluster::generate(&spec);
    let names: HashSet<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names.len(), c.len());
    // With padding, generation order is topology order: the inventory keeps it.
    let inv = c.inventory();
    assert!(inv.node_names().eq(c.nodes.iter().map(|n| n.name.as_str())));
}
