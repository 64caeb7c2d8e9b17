//! `multi`: multi-role gangs that must be decided quickly (issue 15).
//!
//! - `multi-racks-of-4/<nodes>/<case>`: racks of 4 nodes with 3 GPUs and 4 CPUs; roles
//!   a (4) and b (2) of two GPUs, rack required: each role alone fits every rack, both
//!   never (`ab`, unschedulable); the same with an unconstrained one-CPU launcher
//!   (`ab-launcher`); the elastic variant a 2..=4, b 1..=2 (`elastic`, placed 3 + 1).
//!   At 1k, 4k, 10k and 100k nodes, a warm solver (target ≤ 10 ms per query).
//! - `multi-one-per-node/40`: 40 nodes of 3 GPUs, 24 + 24 two-GPU members.
//! - `multi-random-250/batch`: 2 × 50 seeded random clusters of 250 partly used nodes
//!   with 2–4 GPU-, CPU- and memory-heavy roles of up to 24 members (the two generators
//!   of `gang-core/tests/multi_decided.rs`), one query each; the median and worst single
//!   query are printed once (`multi-random-250: median … worst …`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gang_benches::cases;
use gang_core::{CompiledGang, Gang, Inventory, NodeSpec, Outcome, Role, Solver, Topology};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// The random clusters and gangs of `gang-core/tests/multi_decided.rs`.
fn random_case(rng: &mut Rng, n: usize, busy: u64, least: u64) -> (Inventory, Gang) {
    let rack_size = rng.range(4, 16) as usize;
    let racks_per_block = rng.range(2, 4) as usize;
    let nodes: Vec<NodeSpec> = (0..n)
        .map(|i| {
            let rack = i / rack_size;
            let gpu_node = rng.below(3) != 0;
            let (gpu, cpu, mem) = if gpu_node { (8, 64, 512) } else { (0, 96, 384) };
            let mut spec = NodeSpec::new(format!("n{i:03}"))
                .label("block", format!("b{}", rack / racks_per_block))
                .label("rack", format!("r{rack:03}"))
                .capacity("cpu", cpu)
                .capacity("memory", mem);
            if gpu > 0 {
                spec = spec.capacity("gpu", gpu);
                if rng.below(4) < busy {
                    spec = spec.used("gpu", rng.range(1, 7) as i64);
                }
            }
            if rng.below(4) < busy {
                spec = spec
                    .used("cpu", rng.range(4, cpu as u64 - 8) as i64)
                    .used("memory", rng.range(16, mem as u64 - 64) as i64);
            }
            spec
        })
        .collect();
    let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes(nodes)
        .build()
        .unwrap();
    let mut g = Gang::new("g");
    for r in 0..rng.range(2, 4) {
        let count = rng.range(least, 24) as u32;
        let mut role = Role::new(format!("r{r}"), count);
        role = match rng.below(3) {
            0 => role
                .request("gpu", rng.range(1, 4) as i64)
                .request("cpu", rng.range(2, 16) as i64)
                .request("memory", rng.range(16, 128) as i64),
            1 => role
                .request("cpu", rng.range(8, 32) as i64)
                .request("memory", rng.range(8, 64) as i64),
            _ => role
                .request("cpu", rng.range(1, 4) as i64)
                .request("memory", rng.range(64, 256) as i64),
        };
        if rng.below(6) == 0 {
            role = role.unconstrained();
        }
        if rng.below(6) == 0 {
            role = role.min_count(rng.range(1, u64::from(count)) as u32);
        }
        if rng.below(8) == 0 {
            role = role.max_per_node(rng.range(1, 3) as u32);
        }
        g = g.role(role);
    }
    let g = match rng.below(4) {
        0 => g.required("rack"),
        1 => g.required("block"),
        2 => g.preferred("rack"),
        _ => g,
    };
    (inv, g)
}

fn what(out: &Outcome) -> &'static str {
    match out {
        Outcome::Placed(_) => "placed",
        Outcome::Unschedulable(_) => "unschedulable",
        Outcome::Undecided(_) => "undecided",
    }
}

fn multi(c: &mut Criterion) {
    let mut g = c.benchmark_group("multi-racks-of-4");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for nodes in [1_000usize, 4_000, 10_000, 100_000] {
        let inv = cases::racks_of_four(nodes);
        for (name, gang) in [
            ("ab", cases::ab(false, false)),
            ("ab-launcher", cases::ab(false, true)),
            ("elastic", cases::ab(true, false)),
            ("elastic-launcher", cases::ab(true, true)),
        ] {
            let compiled = inv.compile(&gang).unwrap();
            let mut solver = Solver::new();
            let out = inv.place_with(&mut solver, &compiled).unwrap();
            eprintln!("multi-racks-of-4/{nodes}/{name}: {}", what(&out));
            g.bench_function(BenchmarkId::new(nodes.to_string(), name), |b| {
                b.iter(|| inv.find_with(&mut solver, black_box(&compiled)).unwrap())
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("multi-one-per-node");
    g.sample_size(10).measurement_time(Duration::from_secs(1));
    let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes((0..40).map(|i| {
            NodeSpec::new(format!("n{i}"))
                .label("rack", format!("r{}", i / 8))
                .capacity("gpu", 3)
        }))
        .build()
        .unwrap();
    let gang = Gang::new("g")
        .role(Role::new("a", 24).request("gpu", 2))
        .role(Role::new("b", 24).request("gpu", 2));
    let compiled = inv.compile(&gang).unwrap();
    let mut solver = Solver::new();
    g.bench_function("40", |b| {
        b.iter(|| inv.find_with(&mut solver, black_box(&compiled)).unwrap())
    });
    g.finish();

    // The test's two generators: half the nodes used and any size; three quarters
    // used and roles of 12-24 members.
    let mut cases: Vec<(Inventory, CompiledGang)> = Vec::new();
    for (seed, busy, least) in [
        (0x9e37_79b9_7f4a_7c15, 2, 1),
        (0x2545_f491_4f6c_dd1d, 3, 12),
    ] {
        let mut rng = Rng(seed);
        cases.extend((0..50).filter_map(|_| {
            let (inv, gang) = random_case(&mut rng, 250, busy, least);
            let c = inv.compile(&gang).ok()?;
            Some((inv, c))
        }));
    }
    let mut solver = Solver::new();
    let mut times: Vec<(Duration, &'static str)> = cases
        .iter()
        .map(|(inv, c)| {
            let t = Instant::now();
            let out = inv.place_with(&mut solver, c).unwrap();
            (t.elapsed(), what(&out))
        })
        .collect();
    times.sort();
    let undecided = times.iter().filter(|t| t.1 == "undecided").count();
    eprintln!(
        "multi-random-250: {} queries, median {:?}, worst {:?} ({}), {} undecided",
        times.len(),
        times[times.len() / 2].0,
        times[times.len() - 1].0,
        times[times.len() - 1].1,
        undecided
    );
    let mut g = c.benchmark_group("multi-random-250");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    g.bench_function("batch", |b| {
        b.iter(|| {
            for (inv, c) in &cases {
                black_box(inv.find_with(&mut solver, c).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, multi);
criterion_main!(benches);
