//! Timing of one placement query, in Rust: straight through `gang-core` (the baseline)
//! and through this crate's C ABI called from Rust (the boundary's own cost: handles,
//! out-parameters, panic boundary, boxing and freeing the result). Batches of the two
//! alternate, so that a busy machine slows both alike; the medians are printed.
//! `tests/c/bench_place.c` and the Go benchmarks build the same inventories (same
//! generator, same seed) and time the same queries.
//!
//! ```text
//! cargo run --release -p gang-ffi --example timing [iterations per batch] [batches]
//! ```
//!
//! `10k`: 20 blocks × 16 racks × 32 nodes = 10,240 nodes of 8 GPUs, each with
//! `splitmix64() % 9` GPUs used (about half the GPUs; seed 42). `tiny`: one rack of 4
//! free 8-GPU nodes, where the solver's own work is small and the boundary shows. The
//! query: 4 workers × 8 GPUs, rack required, best-fit, compiled once, one warm solver.
//! Measured, not asserted.

use std::ffi::CString;
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use gang_core::{Gang, Inventory, NodeSpec, Quantity, Role, Solver, Topology};
use gang_ffi::*;

const BLOCK: &str = "topology.example.com/block";
const RACK: &str = "topology.example.com/rack";
const GPU: &str = "nvidia.com/gpu";

/// The generator every language uses (splitmix64).
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

/// `(name, block, rack, used GPUs)` of every node of a `blocks × racks × nodes` cluster;
/// `used` draws from splitmix64(42) when `busy`, else is 0.
fn cluster(
    blocks: usize,
    racks: usize,
    nodes: usize,
    busy: bool,
) -> Vec<(String, String, String, u64)> {
    let mut rng = SplitMix(42);
    let mut out = Vec::with_capacity(blocks * racks * nodes);
    for b in 0..blocks {
        for r in 0..racks {
            for n in 0..nodes {
                let i = (b * racks + r) * nodes + n;
                let used = if busy { rng.next() % 9 } else { 0 };
                out.push((
                    format!("n{i:05}"),
                    format!("b{b:02}"),
                    format!("r{r:02}"),
                    used,
                ));
            }
        }
    }
    out
}

fn core_inventory(nodes: &[(String, String, String, u64)]) -> Inventory {
    Inventory::builder(Topology::new([BLOCK, RACK]).unwrap())
        .nodes(nodes.iter().map(|(name, b, r, used)| {
            NodeSpec::new(name)
                .label(BLOCK, b)
                .label(RACK, r)
                .label("nvidia.com/gpu.product", "H200")
                .capacity(GPU, Quantity::from_millis(8000))
                .used(GPU, Quantity::from_millis(used * 1000))
        }))
        .build()
        .unwrap()
}

/// The same query through the C ABI: inventory, compiled gang, solver.
struct Abi {
    inv: *mut gang_inventory,
    compiled: *mut gang_compiled,
    solver: *mut gang_solver,
}

impl Abi {
    unsafe fn new(nodes: &[(String, String, String, u64)]) -> Abi {
        let ok = gang_result::GANG_OK;
        let levels = [
            c"topology.example.com/block".as_ptr(),
            c"topology.example.com/rack".as_ptr(),
        ];
        let mut ib: *mut gang_inventory_builder = ptr::null_mut();
        assert_eq!(
            gang_inventory_builder_new(levels.as_ptr(), 2, &mut ib, ptr::null_mut()),
            ok
        );
        for (name, b, r, used) in nodes {
            let (name, b, r) = (
                CString::new(name.as_str()).unwrap(),
                CString::new(b.as_str()).unwrap(),
                CString::new(r.as_str()).unwrap(),
            );
            let mut node: *mut gang_node = ptr::null_mut();
            assert_eq!(gang_node_new(name.as_ptr(), &mut node), ok);
            assert_eq!(gang_node_add_label(node, levels[0], b.as_ptr()), ok);
            assert_eq!(gang_node_add_label(node, levels[1], r.as_ptr()), ok);
            let product = c"nvidia.com/gpu.product".as_ptr();
            assert_eq!(gang_node_add_label(node, product, c"H200".as_ptr()), ok);
            assert_eq!(
                gang_node_set_capacity_millis(node, c"nvidia.com/gpu".as_ptr(), 8000),
                ok
            );
            assert_eq!(
                gang_node_set_used_millis(node, c"nvidia.com/gpu".as_ptr(), used * 1000),
                ok
            );
            assert_eq!(gang_inventory_builder_add_node(ib, node), ok);
            gang_node_free(node);
        }
        let mut inv: *mut gang_inventory = ptr::null_mut();
        assert_eq!(
            gang_inventory_builder_build(ib, &mut inv, ptr::null_mut()),
            ok
        );
        gang_inventory_builder_free(ib);
        let mut role: *mut gang_role = ptr::null_mut();
        assert_eq!(gang_role_new(c"worker".as_ptr(), 4, &mut role), ok);
        assert_eq!(
            gang_role_set_request_millis(role, c"nvidia.com/gpu".as_ptr(), 8000),
            ok
        );
        let mut g: *mut gang_gang = ptr::null_mut();
        assert_eq!(gang_gang_new(c"bench".as_ptr(), &mut g), ok);
        assert_eq!(gang_gang_add_role(g, role), ok);
        assert_eq!(gang_gang_set_required(g, levels[1]), ok);
        let mut compiled: *mut gang_compiled = ptr::null_mut();
        assert_eq!(
            gang_inventory_compile(inv, g, &mut compiled, ptr::null_mut()),
            ok
        );
        gang_gang_free(g);
        gang_role_free(role);
        let mut solver: *mut gang_solver = ptr::null_mut();
        assert_eq!(gang_solver_new(&mut solver), ok);
        Abi {
            inv,
            compiled,
            solver,
        }
    }

    /// One query, its result freed.
    unsafe fn place(&self) {
        let mut status = gang_status::GANG_STATUS_UNSCHEDULABLE;
        let mut p: *mut gang_placement = ptr::null_mut();
        let mut d: *mut gang_diagnosis = ptr::null_mut();
        let rc = gang_solver_place(
            self.solver,
            self.inv,
            self.compiled,
            &mut status,
            &mut p,
            &mut d,
            ptr::null_mut(),
        );
        assert_eq!(rc, gang_result::GANG_OK);
        gang_placement_free(black_box(p));
        gang_diagnosis_free(d);
    }
}

impl Drop for Abi {
    fn drop(&mut self) {
        unsafe {
            gang_solver_free(self.solver);
            gang_compiled_free(self.compiled);
            gang_inventory_free(self.inv);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(name: &str, nodes: &[(String, String, String, u64)], iters: u32, batches: usize) {
    let inv = core_inventory(nodes);
    let gang = Gang::new("bench")
        .role(Role::new("worker", 4).request(GPU, Quantity::from_millis(8000)))
        .required(RACK);
    let compiled = inv.compile(&gang).unwrap();
    let mut solver = Solver::new();
    let first = inv.place_with(&mut solver, &compiled).unwrap();
    let p = first.placement().expect("the benchmark gang fits");
    println!(
        "{name}: nodes={} domain={} assignments={:?}",
        inv.len(),
        p.domain_path(),
        p.node_counts()
    );
    let abi = unsafe { Abi::new(nodes) };
    // Warm both.
    for _ in 0..iters {
        black_box(inv.place_with(&mut solver, &compiled).unwrap());
        unsafe { abi.place() };
    }
    let (mut core, mut via, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..iters {
            black_box(inv.place_with(&mut solver, black_box(&compiled)).unwrap());
        }
        let c = t.elapsed().as_nanos() as f64 / f64::from(iters);
        let t = Instant::now();
        for _ in 0..iters {
            unsafe { abi.place() };
        }
        let a = t.elapsed().as_nanos() as f64 / f64::from(iters);
        core.push(c);
        via.push(a);
        diff.push(a - c);
    }
    let (c, a, d) = (median(&mut core), median(&mut via), median(&mut diff));
    println!("  rust gang-core     place: {c:10.0} ns/op (median of {batches} batches of {iters})");
    println!("  rust via the C ABI place: {a:10.0} ns/op (median paired difference {d:+.0} ns)");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iters: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let batches: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    measure("10k", &cluster(20, 16, 32, true), iters, batches);
    measure("tiny", &cluster(1, 1, 4, false), iters * 100, batches);
}
