//! `churn`: the lifecycle hot path — reserve + release of a placed gang; place, reserve
//! and release in turn (an admission loop); one external-usage change (`set_used`,
//! which must refresh the node's domain summaries); replacing one lost member inside
//! its rack; and admitting a queue of 1000 gangs (issue 3's cases).
//!
//! Issue 4's target: reserve + release of a 64-member gang ≤ 5 µs. (These operations
//! landed in gang-core after the harness was planned; when the fast path adds per-shape
//! fit caches, their incremental upkeep is what this file measures.)

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Bencher, BenchmarkId, Criterion};
use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec, GPU};
use gang_benches::outcomes::{describe, record};
use gang_core::lifecycle::{AdmitMode, Replacement};
use gang_core::{Quantity, Solver};

fn churn(c: &mut Criterion) {
    for size in [Size::K10, Size::K100] {
        let spec = Spec::hgx(size, 50);
        let group = format!("churn-hgx-{}-50", size.as_str());
        let mut g = c.benchmark_group(&group);
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        let mut cluster = None;
        for count in [4u32, 64] {
            let gang = cases::single(&spec, Constraint::RequiredRack, count);

            g.bench_function(BenchmarkId::new("reserve-release", count), |b| {
                let mut inv = cluster
                    .get_or_insert_with(|| Cluster::generate(&spec))
                    .inventory();
                let out = inv.place(&gang).unwrap();
                record(&group, &format!("reserve-release/{count}"), &describe(&out));
                let p = out.placement().expect("fits at 50%").clone();
                b.iter(|| {
                    let id = inv.reserve(black_box(&p)).unwrap();
                    inv.release(id).unwrap()
                });
            });

            g.bench_function(BenchmarkId::new("place-reserve-release", count), |b| {
                let mut inv = cluster
                    .get_or_insert_with(|| Cluster::generate(&spec))
                    .inventory();
                let compiled = inv.compile(&gang).unwrap();
                let mut solver = Solver::new();
                b.iter(|| {
                    let out = inv.place_with(&mut solver, black_box(&compiled)).unwrap();
                    let id = inv.reserve(out.placement().unwrap()).unwrap();
                    inv.release(id).unwrap()
                });
            });
        }

        g.bench_function(BenchmarkId::new("replace", "1-member"), |b| {
            // A 4-member rack gang loses the node of one member (one GPU each, so one
            // member); each iteration replaces it on a copy of that state.
            let mut inv = cluster
                .get_or_insert_with(|| Cluster::generate(&spec))
                .inventory();
            let gang = cases::single(&spec, Constraint::RequiredRack, 4);
            let p = inv
                .place(&gang)
                .unwrap()
                .placement()
                .expect("fits at 50%")
                .clone();
            let id = inv.reserve(&p).unwrap();
            let lost_on = p
                .assignments()
                .iter()
                .find(|a| a.count == 1)
                .map_or_else(|| p.assignments()[0].node.clone(), |a| a.node.clone());
            inv.fail_node(&lost_on).unwrap();
            let probe = inv.clone().replace(id).unwrap();
            let label = match &probe {
                Replacement::Placed { added } => format!(
                    "placed {} member(s)",
                    added.iter().map(|a| a.count).sum::<u32>()
                ),
                Replacement::Pending(_) => "pending".to_owned(),
            };
            record(&group, "replace/1-member", &label);
            // The copy is returned so that criterion drops it outside the measured time.
            b.iter_batched(
                || inv.clone(),
                |mut copy| {
                    let r = copy.replace(id).unwrap();
                    (copy, r)
                },
                BatchSize::PerIteration,
            );
        });

        if size == Size::K10 {
            // 1000 gangs of 4 to 128 one-GPU workers, rack required, FIFO with backfill,
            // on a cluster that takes only some of them: most wait, so this is the cost
            // of answering "not now" again and again.
            g.bench_function(
                BenchmarkId::new("admit-backfill", "1000-gangs-crowded"),
                |b| {
                    let c = cluster.get_or_insert_with(|| Cluster::generate(&spec));
                    let name = "admit-backfill/1000-gangs-crowded";
                    admit(
                        b,
                        &group,
                        name,
                        c,
                        &spec,
                        &[128, 4, 64, 8],
                        AdmitMode::Backfill,
                    );
                },
            );
            // 1000 gangs of 4 one-GPU workers, rack required, strict FIFO.
            g.bench_function(BenchmarkId::new("admit", "1000-gangs"), |b| {
                let c = cluster.get_or_insert_with(|| Cluster::generate(&spec));
                admit(
                    b,
                    &group,
                    "admit/1000-gangs",
                    c,
                    &spec,
                    &[4],
                    AdmitMode::Fifo,
                );
            });
        }

        g.bench_function(BenchmarkId::new("set-used", "1-node"), |b| {
            let c = cluster.get_or_insert_with(|| Cluster::generate(&spec));
            let mut inv = c.inventory();
            let name = c.nodes[c.len() / 2].name.clone();
            let mut used = 0u64;
            b.iter(|| {
                used = (used + 1) % 8;
                inv.set_used(&name, GPU, Quantity::from_units(used))
                    .unwrap()
            });
        });
        g.finish();
    }
}

/// Admits a queue of 1000 rack-required gangs whose sizes cycle through `sizes`, each
/// iteration on a fresh copy of the cluster's inventory (dropped outside the timing).
fn admit(
    b: &mut Bencher<'_>,
    group: &str,
    name: &str,
    cluster: &Cluster,
    spec: &Spec,
    sizes: &[u32],
    mode: AdmitMode,
) {
    let inv = cluster.inventory();
    let queue: Vec<_> = (0..1000)
        .map(|i| {
            let mut g = cases::single(spec, Constraint::RequiredRack, sizes[i % sizes.len()]);
            g.set_name(format!("job-{i}"));
            g
        })
        .collect();
    let placed = inv
        .clone()
        .admit(&queue, mode)
        .unwrap()
        .iter()
        .filter(|a| a.is_placed())
        .count();
    record(group, name, &format!("{placed} of 1000 placed"));
    b.iter_batched(
        || inv.clone(),
        |mut copy| {
            let r = copy.admit(black_box(&queue), mode).unwrap();
            (copy, r)
        },
        BatchSize::PerIteration,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = churn
}
criterion_main!(benches);
