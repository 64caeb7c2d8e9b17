//! `hardest`: issue 15's hardest multi-role instances at 250 nodes, one query each.
//!
//! The instances are scenario files in `benches/data/issue15-hardest/` (cluster + gang,
//! and the status an exact CP-SAT model found as `expect.status`), exported by
//! `python examples/python/compare_cpsat.py --issue15 --export benches/data/issue15-hardest`
//! from its 250-node set: the ones the engine of the day left `undecided`, then its
//! slowest. Each description gives CP-SAT's time on the instance (through Python, 2
//! workers) — the reference the issue asks these times to be set beside.
//!
//! Each query is `Inventory::place` (compile + a new `Solver`), as one scheduling call
//! would be. Criterion reports each instance (`hardest-250/i017`); at the end the bench
//! prints, per instance, the median and worst time of the queries it ran, the outcome
//! and whether it agrees with CP-SAT, and the median and worst over the instances.
//! Sample counts are criterion's minimum, so it stays light even when a query takes
//! half a second.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use gang_benches::outcomes::{describe, record};
use gang_core::scenario::Scenario;

const GROUP: &str = "hardest-250";

/// The exported instances, by file name (`i017`), in name order.
fn instances() -> Vec<(String, Scenario)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/issue15-hardest");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let s = Scenario::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, s)
        })
        .collect()
}

fn median(sorted: &[Duration]) -> Duration {
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

fn hardest(c: &mut Criterion) {
    let mut g = c.benchmark_group(GROUP);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(500))
        .sampling_mode(SamplingMode::Flat);
    let mut rows = Vec::new();
    for (name, scenario) in instances() {
        let inv = scenario.inventory().expect("an exported inventory builds");
        let gang = &scenario.gang;
        let first = inv.place(gang).expect("an exported gang is valid");
        let outcome = describe(&first);
        record(GROUP, &name, &outcome);
        let cpsat = scenario.expect.as_ref().and_then(|e| e.status.clone());
        let agrees = match cpsat.as_deref() {
            Some(want) if first.status() == "undecided" => format!("undecided (CP-SAT: {want})"),
            Some(want) if want == first.status() => "agrees with CP-SAT".to_owned(),
            Some(want) => format!("DISAGREES with CP-SAT ({want})"),
            None => "CP-SAT undecided".to_owned(),
        };
        let times = Mutex::new(Vec::new());
        g.bench_function(BenchmarkId::from_parameter(&name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let out = inv.place(std::hint::black_box(gang));
                    let dt = t.elapsed();
                    drop(std::hint::black_box(out));
                    total += dt;
                    times.lock().unwrap().push(dt);
                }
                total
            });
        });
        let mut t = times.into_inner().unwrap();
        t.sort();
        rows.push((
            name,
            median(&t),
            t.last().copied().unwrap_or_default(),
            outcome,
            agrees,
        ));
    }
    g.finish();
    println!("\n{GROUP}: per query (Inventory::place), median / worst of the queries run");
    for (name, med, worst, outcome, agrees) in &rows {
        println!("  {name}  {med:>10.2?} / {worst:>10.2?}  {outcome}, {agrees}");
    }
    let mut meds: Vec<Duration> = rows.iter().map(|r| r.1).collect();
    meds.sort();
    let worst = meds.last().copied().unwrap_or_default();
    println!(
        "  over {} instances (each by its median): median {:.2?}, worst {:.2?}",
        rows.len(),
        median(&meds),
        worst
    );
}

criterion_group!(benches, hardest);
criterion_main!(benches);
