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

use gang_core::{Gang, Inventory, NodeSpec, Role, Solver, Topology};

fn racks_of_four(nodes: usize) -> Inventory {
    Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes((0..nodes).map(|i| {
            NodeSpec::new(format!("n{i:06}"))
                .label("rack", format!("r{:05}", i / 4))
                .capacity("gpu", 3)
                .capacity("cpu", 4)
        }))
        .build()
        .unwrap()
}

fn ab(elastic: bool, launcher: bool) -> Gang {
    let (a, b) = if elastic {
        (
            Role::new("a", 4).min_count(2).request("gpu", 2),
            Role::new("b", 2).min_count(1).request("gpu", 2),
        )
    } else {
        (
            Role::new("a", 4).request("gpu", 2),
            Role::new("b", 2).request("gpu", 2),
        )
    };
    let g = Gang::new("ab").role(a).role(b).required("rack");
    if launcher {
        g.role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
    } else {
        g
    }
}

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
        "ab" => ab(false, false),
        "ab-launcher" => ab(false, true),
        "elastic" => ab(true, false),
        "elastic-launcher" => ab(true, true),
        c => panic!("unknown case {c}"),
    };
    let inv = racks_of_four(nodes);
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
