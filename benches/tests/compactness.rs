//! Issue 15's "nodes inside the chosen racks" shape at a size the test suite affords:
//! on fragmented synthetic HGX clusters of 1k nodes (the benchmarks' generator, several
//! seeds, 50 and 85 % used), block-required 256-member and rack-preferred 512-member
//! gangs use exactly as many nodes as a largest-node-first fill of the racks they
//! chose: among placements in those racks none needs fewer nodes, and the engine's is
//! one of them (before the exact objective it could use 1–9 more, as each rack's share
//! was fixed before its nodes were chosen).

use std::collections::BTreeSet;

use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec, SynthNode, BLOCK, RACK, ZONE};
use gang_core::TaintEffect;

/// How many workers `n` takes on its own (0 when the worker may not run there).
fn fit(spec: &Spec, n: &SynthNode) -> u64 {
    let eligible = n.schedulable
        && n.taints
            .iter()
            .all(|t| t.effect == TaintEffect::PreferNoSchedule);
    if !eligible {
        return 0;
    }
    cases::worker_columns(spec)
        .iter()
        .map(|&(r, q)| n.free(r) / q)
        .min()
        .unwrap_or(0)
}

/// The unit of `n` at the rack level: its zone, block and rack (or the node itself when
/// it lacks a rack label).
fn rack_of(n: &SynthNode) -> Vec<String> {
    let value = |k: &str| {
        n.labels
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.clone())
    };
    match (value(ZONE), value(BLOCK), value(RACK)) {
        (Some(z), Some(b), Some(r)) => vec![z, b, r],
        _ => vec![n.name.clone()],
    }
}

#[test]
fn nodes_inside_the_chosen_racks_are_the_fewest() {
    let mut checked = 0;
    for used in [50, 85] {
        for seed in 0..6u64 {
            let mut spec = Spec::hgx(Size::K1, used);
            spec.seed = spec.seed.wrapping_add(seed);
            let cluster = Cluster::generate(&spec);
            let inv = cluster.inventory();
            for (constraint, count) in [
                (Constraint::RequiredBlock, 256),
                (Constraint::PreferredRack, 512),
            ] {
                let gang = cases::single(&spec, constraint, count);
                let out = inv.place(&gang).unwrap();
                let Some(p) = out.placement() else { continue };
                p.validate(&inv).unwrap();
                let by_name = |name: &str| cluster.nodes.iter().find(|n| n.name == name).unwrap();
                let racks: BTreeSet<Vec<String>> = p
                    .node_counts()
                    .iter()
                    .map(|(n, _)| rack_of(by_name(n)))
                    .collect();
                let mut fits: Vec<u64> = cluster
                    .nodes
                    .iter()
                    .filter(|n| racks.contains(&rack_of(n)))
                    .map(|n| fit(&spec, n))
                    .filter(|&f| f > 0)
                    .collect();
                fits.sort_unstable_by(|a, b| b.cmp(a));
                let (mut sum, mut fewest) = (0u64, 0usize);
                while sum < u64::from(count) {
                    sum += fits[fewest];
                    fewest += 1;
                }
                assert_eq!(
                    p.node_counts().len(),
                    fewest,
                    "{} seed {seed}, {} {count}: {} racks",
                    cluster.name(),
                    constraint.as_str(),
                    racks.len()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "only {checked} placements checked");
}
