//! `churn`: the lifecycle hot path — reserve + release of a placed gang; place, reserve
//! and release in turn (an admission loop); and one external-usage change (`set_used`,
//! which must refresh the node's domain summaries).
//!
//! Issue 4's target: reserve + release of a 64-member gang ≤ 5 µs. (These operations
//! landed in gang-core after the harness was planned; when the fast path adds per-shape
//! fit caches, their incremental upkeep is what this file measures.)

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec, GPU};
use gang_benches::outcomes::{describe, record};
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
                    let out = solver.place(&inv, black_box(&compiled)).unwrap();
                    let id = inv.reserve(out.placement().unwrap()).unwrap();
                    inv.release(id).unwrap()
                });
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

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = churn
}
criterion_main!(benches);
