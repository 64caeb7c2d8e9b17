//! `build`: building the inventory from node specs (validation, interning, sorting by
//! topology path, columns, bitsets, domains, summaries), 1k / 10k / 100k nodes.
//!
//! The specs are cloned outside the measured time; dropping the built inventory is not
//! measured either. `build()` consumes its specs, so freeing them is part of what it
//! costs: `drop-specs` measures that alone, as a baseline. `from-nodes` builds from
//! specs the caller keeps (`Inventory::from_nodes`), as a scheduler with its own node
//! cache would: the inventory's own cost.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode};
use gang_benches::gen::{Cluster, Flavor, Size, Spec};
use gang_core::Inventory;

fn build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    for flavor in [Flavor::Hgx, Flavor::Nvl72] {
        for size in [Size::K1, Size::K10, Size::K100] {
            if flavor == Flavor::Nvl72 && size != Size::K100 {
                continue;
            }
            let name = format!("{}-{}-50", flavor.as_str(), size.as_str());
            let mut specs = None;
            g.bench_function(BenchmarkId::new("core", &name), |b| {
                let specs = specs.get_or_insert_with(|| {
                    Cluster::generate(&Spec::of(flavor, size, 50)).node_specs()
                });
                b.iter_batched(
                    || specs.clone(),
                    |nodes| {
                        Inventory::builder(Cluster::topology())
                            .nodes(black_box(nodes))
                            .build()
                            .unwrap()
                    },
                    BatchSize::PerIteration,
                );
            });
            g.bench_function(BenchmarkId::new("from-nodes", &name), |b| {
                let specs = specs.get_or_insert_with(|| {
                    Cluster::generate(&Spec::of(flavor, size, 50)).node_specs()
                });
                b.iter(|| Inventory::from_nodes(Cluster::topology(), black_box(specs)).unwrap());
            });
            g.bench_function(BenchmarkId::new("drop-specs", &name), |b| {
                let specs = specs.get_or_insert_with(|| {
                    Cluster::generate(&Spec::of(flavor, size, 50)).node_specs()
                });
                b.iter_batched(|| specs.clone(), drop, BatchSize::PerIteration);
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = build
}
criterion_main!(benches);
