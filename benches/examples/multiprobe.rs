//! Probe: the `multi` bench's racks-of-4 shapes (roles a 4 + b 2 of two GPUs on racks of
//! four 3-GPU nodes, rack required; `ab`, `ab-launcher`, `elastic`, `elastic-launcher`)
//! asked `iters` times of a warm solver with `find_with`, as the bench does. Prints the
//! median wall time and the thread CPU time per query, so two builds can be run
//! alternately on a loaded machine; under `valgrind --tool=callgrind
//! --toggle-collect='*find_with*'` it gives the instructions of the queries alone.
//!
//! `cargo run --release -p gang-benches --example multiprobe -- 100000 ab 200`

use std::hint::black_box;
use std::time::{Duration, Instant};

use gang_benches::cases;
use gang_core::Solver;

/// This thread's CPU time.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map_or(100_000, |a| a.parse().unwrap());
    let case = args.next().unwrap_or_else(|| "ab".into());
    let iters: usize = args.next().map_or(100, |a| a.parse().unwrap());
    let gang = match case.as_str() {
        "ab" => cases::ab(false, false),
        "ab-launcher" => cases::ab(false, true),
        "elastic" => cases::ab(true, false),
        "elastic-launcher" => cases::ab(true, true),
        c => panic!("unknown case {c}"),
    };
    let inv = cases::racks_of_four(nodes);
    let compiled = inv.compile(&gang).unwrap();
    let mut solver = Solver::new();
    let first = inv.place_with(&mut solver, &compiled).unwrap();
    let mut wall = Vec::with_capacity(iters);
    let cpu0 = cpu_now();
    for _ in 0..iters {
        let t = Instant::now();
        black_box(inv.find_with(&mut solver, black_box(&compiled)).unwrap());
        wall.push(t.elapsed());
    }
    let cpu = (cpu_now() - cpu0) / iters.max(1) as u32;
    wall.sort();
    println!(
        "{nodes}/{case}: {} wall median {:?} (min {:?}), cpu {:?} per query over {iters}",
        first.status(),
        wall.get(iters / 2).copied().unwrap_or_default(),
        wall.first().copied().unwrap_or_default(),
        cpu
    );
}
