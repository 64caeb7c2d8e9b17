//! Timing of one placement query on a warm 10k-node inventory, in Rust: straight through
//! `gang-core` (the baseline) and through this crate's C ABI called from Rust (the
//! boundary's own cost, without a foreign caller). `tests/c/bench_place.c` and the Go
//! benchmarks build the same inventory (same generator, same seed) and time the same
//! query, so the differences are the cost of each boundary.
//!
//! ```text
//! cargo run --release -p gang-ffi --example timing [iterations]
//! ```
//!
//! The cluster: 20 blocks × 16 racks × 32 nodes = 10,240 nodes of 8 GPUs; each node has
//! `splitmix64() % 9` GPUs used (about half the GPUs). The query: 4 workers × 8 GPUs,
//! rack required, best-fit. Measured, not asserted.

use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use gang_core::{Gang, Inventory, NodeSpec, Quantity, Role, Solver, Topology};
use gang_ffi::*;

const BLOCK: &str = "topology.example.com/block";
const RACK: &str = "topology.example.com/rack";
const GPU: &str = "nvidia.com/gpu";

/// The generator every language uses (splitmix64, seed 42).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn inventory() -> Inventory {
    let mut rng = SplitMix(42);
    let mut nodes = Vec::with_capacity(10_240);
    for b in 0..20 {
        for r in 0..16 {
            for n in 0..32 {
                let i = (b * 16 + r) * 32 + n;
                let used = rng.next() % 9;
                nodes.push(
                    NodeSpec::new(format!("n{i:05}"))
                        .label(BLOCK, format!("b{b:02}"))
                        .label(RACK, format!("r{r:02}"))
                        .capacity(GPU, Quantity::from_millis(8000))
                        .used(GPU, Quantity::from_millis(used * 1000)),
                );
            }
        }
    }
    Inventory::builder(Topology::new([BLOCK, RACK]).unwrap())
        .nodes(nodes)
        .build()
        .unwrap()
}

fn gang() -> Gang {
    Gang::new("bench")
        .role(Role::new("worker", 4).request(GPU, Quantity::from_millis(8000)))
        .required(RACK)
}

fn main() {
    let iters: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let inv = inventory();
    let g = gang();
    let compiled = inv.compile(&g).unwrap();
    let mut solver = Solver::new();

    // Baseline: gang-core, compiled once, one solver, the outcome dropped each time.
    let first = solver.place(&inv, &compiled).unwrap();
    let p = first.placement().expect("the benchmark gang fits");
    println!(
        "instance: nodes={} domain={} assignments={:?}",
        inv.len(),
        p.domain_path(),
        p.node_counts()
    );
    for _ in 0..iters / 10 {
        black_box(solver.place(&inv, &compiled).unwrap());
    }
    let t = Instant::now();
    for _ in 0..iters {
        black_box(solver.place(black_box(&inv), black_box(&compiled)).unwrap());
    }
    let core_ns = t.elapsed().as_nanos() as f64 / f64::from(iters);
    println!("rust gang-core      place: {core_ns:9.0} ns/op ({iters} iterations)");

    // The same query through the C ABI (handles, out-parameters, panic boundary, free).
    unsafe {
        let mut ib: *mut gang_inventory_builder = ptr::null_mut();
        let levels = [
            c"topology.example.com/block".as_ptr(),
            c"topology.example.com/rack".as_ptr(),
        ];
        assert_eq!(
            gang_inventory_builder_new(levels.as_ptr(), 2, &mut ib, ptr::null_mut()),
            gang_result::GANG_OK
        );
        let mut rng = SplitMix(42);
        let mut node: *mut gang_node = ptr::null_mut();
        for b in 0..20 {
            for r in 0..16 {
                for n in 0..32 {
                    let i = (b * 16 + r) * 32 + n;
                    let used = rng.next() % 9;
                    let name = std::ffi::CString::new(format!("n{i:05}")).unwrap();
                    let bv = std::ffi::CString::new(format!("b{b:02}")).unwrap();
                    let rv = std::ffi::CString::new(format!("r{r:02}")).unwrap();
                    gang_node_new(name.as_ptr(), &mut node);
                    gang_node_add_label(node, c"topology.example.com/block".as_ptr(), bv.as_ptr());
                    gang_node_add_label(node, c"topology.example.com/rack".as_ptr(), rv.as_ptr());
                    gang_node_set_capacity_millis(node, c"nvidia.com/gpu".as_ptr(), 8000);
                    gang_node_set_used_millis(node, c"nvidia.com/gpu".as_ptr(), used * 1000);
                    gang_inventory_builder_add_node(ib, node);
                    gang_node_free(node);
                }
            }
        }
        let mut cinv: *mut gang_inventory = ptr::null_mut();
        assert_eq!(
            gang_inventory_builder_build(ib, &mut cinv, ptr::null_mut()),
            gang_result::GANG_OK
        );
        gang_inventory_builder_free(ib);
        let mut role: *mut gang_role = ptr::null_mut();
        gang_role_new(c"worker".as_ptr(), 4, &mut role);
        gang_role_set_request_millis(role, c"nvidia.com/gpu".as_ptr(), 8000);
        let mut cg: *mut gang_gang = ptr::null_mut();
        gang_gang_new(c"bench".as_ptr(), &mut cg);
        gang_gang_add_role(cg, role);
        gang_gang_set_required(cg, c"topology.example.com/rack".as_ptr());
        let mut cc: *mut gang_compiled = ptr::null_mut();
        assert_eq!(
            gang_inventory_compile(cinv, cg, &mut cc, ptr::null_mut()),
            gang_result::GANG_OK
        );
        let mut cs: *mut gang_solver = ptr::null_mut();
        gang_solver_new(&mut cs);
        let mut status = gang_status::GANG_STATUS_UNSCHEDULABLE;
        let mut pl: *mut gang_placement = ptr::null_mut();
        let mut dg: *mut gang_diagnosis = ptr::null_mut();
        let mut once = || {
            let rc =
                gang_solver_place(cs, cinv, cc, &mut status, &mut pl, &mut dg, ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_OK);
            gang_placement_free(pl);
            gang_diagnosis_free(dg);
        };
        for _ in 0..iters / 10 {
            once();
        }
        let t = Instant::now();
        for _ in 0..iters {
            once();
        }
        let abi_ns = t.elapsed().as_nanos() as f64 / f64::from(iters);
        println!(
            "rust via the C ABI  place: {abi_ns:9.0} ns/op ({:+.0} ns over gang-core)",
            abi_ns - core_ns
        );
        gang_solver_free(cs);
        gang_compiled_free(cc);
        gang_gang_free(cg);
        gang_role_free(role);
        gang_inventory_free(cinv);
    }
}
