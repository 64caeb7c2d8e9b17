//! Probe: a warm query in a loop, for profiling and for A/B runs of two builds under
//! the same load. `lexprobe [1k|10k|100k] [rack|block|pref|any|3role|infeasible] [members]
//! [iterations] [% used] [warm|cold|place]` on HGX (85 % used unless told). `infeasible`
//! and `place` ask `place_with` (a gang that does not fit: the diagnosis path); `cold` compiles a new shape (a salted gang) and
//! places it with the same solver at each iteration, as the `core-cold` bench does.
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
    let kind = args.get(2).map(String::as_str);
    let gang = |salt| match kind {
        Some("3role") => cases::three_role(&spec, salt),
        Some("infeasible") => cases::infeasible(&spec),
        _ => cases::single_salted(&spec, c, n, salt),
    };
    let cold = args.get(6).map(String::as_str) == Some("cold");
    let place = args.get(6).map(String::as_str) == Some("place");
    if kind == Some("infeasible") || cold || place {
        let compiled = inv.compile(&gang(0)).unwrap();
        let mut solver = Solver::new();
        let out = inv.place_with(&mut solver, &compiled).unwrap();
        println!("placed: {}", out.is_placed());
        let t = Instant::now();
        for salt in 1..=u64::from(iters) {
            if cold {
                let compiled = inv.compile(&gang(salt)).unwrap();
                std::hint::black_box(inv.place_with(&mut solver, &compiled).unwrap());
            } else {
                std::hint::black_box(inv.place_with(&mut solver, &compiled).unwrap());
            }
        }
        println!("{:?} per query", t.elapsed() / iters.max(1));
        return;
    }
    let gang = gang(0);
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
    println!("{:?} per query", t.elapsed() / iters.max(1));
}
