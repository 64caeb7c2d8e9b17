//! Rust side of the per-call overhead measurement of `gang`'s Python `place`.
//!
//! Reads a cluster document and a gang document (written by `bench/overhead.py`, so
//! both sides answer exactly the same query), warms up, and prints nanoseconds per
//! call as JSON for:
//! - `compiled`: `Solver::place` with a compiled gang and a warm solver;
//! - `gang`: `Inventory::compile` + `Solver::place` (what `inventory.place(gang)` does).
//!
//! ```text
//! cargo run --release -p gang-py --example overhead -- cluster.json gang.json 20000
//! ```

use std::time::Instant;

use gang_core::{Gang, Inventory, Solver};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: overhead CLUSTER.json GANG.json [ITERATIONS]");
        std::process::exit(2);
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let inv = Inventory::from_json(&read(&args[1])).expect("cluster");
    let gang = Gang::from_json(&read(&args[2])).expect("gang");
    let n: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let compiled = inv.compile(&gang).expect("compile");
    let mut solver = Solver::new();
    let placed = inv
        .place_with(&mut solver, &compiled)
        .expect("place")
        .is_placed();
    for _ in 0..n / 10 {
        std::hint::black_box(inv.place_with(&mut solver, &compiled).expect("place"));
    }
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(inv.place_with(&mut solver, &compiled).expect("place"));
    }
    let compiled_ns = t.elapsed().as_nanos() as f64 / f64::from(n);
    let t = Instant::now();
    for _ in 0..n {
        let c = inv.compile(std::hint::black_box(&gang)).expect("compile");
        std::hint::black_box(inv.place_with(&mut solver, &c).expect("place"));
    }
    let gang_ns = t.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "{{\"nodes\": {}, \"placed\": {placed}, \"iterations\": {n}, \"compiled_ns\": {compiled_ns:.0}, \"gang_ns\": {gang_ns:.0}}}",
        inv.len()
    );
}
