//! Probe: a warm query in a loop, for profiling and for A/B runs of two builds under
//! the same load. `lexprobe [1k|10k|100k] [rack|block|pref|any|3role] [members] [iterations]`
//! on HGX at 85 % used.
use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec};
use gang_core::Solver;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = match args.get(1).map(String::as_str) {
        Some("10k") => Size::K10,
        Some("1k") => Size::K1,
        _ => Size::K100,
    };
    let c = match args.get(2).map(String::as_str) {
        Some("block") => Constraint::RequiredBlock,
        Some("pref") => Constraint::PreferredRack,
        Some("any") => Constraint::Unconstrained,
        _ => Constraint::RequiredRack,
    };
    let n: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(4);
    let iters: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(20000);
    let pct: u32 = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(85);
    let spec = Spec::hgx(size, pct);
    let inv = Cluster::generate(&spec).inventory();
    let gang = if args.get(2).map(String::as_str) == Some("3role") {
        cases::three_role(&spec, 0)
    } else {
        cases::single(&spec, c, n)
    };
    let compiled = inv.compile(&gang).unwrap();
    let mut solver = Solver::new();
    let p = inv.find_with(&mut solver, &compiled).unwrap();
    println!(
        "{:?}",
        p.as_ref().map(|p| (p.domain_path(), p.node_counts().len()))
    );
    let t = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(inv.find_with(&mut solver, &compiled).unwrap());
    }
    println!("{:?} per query", t.elapsed() / iters);
}
