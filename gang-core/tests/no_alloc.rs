//! After the inventory is built and the gang compiled, a placement query allocates
//! nothing beyond its result: counted with a global allocator, a warm `Solver::place`
//! makes exactly as many allocations as cloning the placement it returns.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gang_core::{Gang, Inventory, NodeSpec, Role, Solver, Topology};

struct Counting;

thread_local! {
    /// Allocations made by this thread: what the measured code does, and not the test
    /// harness printing another test's result at the same moment. Const-initialised
    /// with no destructor, so reading it never allocates.
    static MINE: Cell<usize> = const { Cell::new(0) };
}

fn count_mine() {
    let _ = MINE.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call to the system allocator; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count_mine();
        // SAFETY: same layout as given.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count_mine();
        // SAFETY: as for `dealloc`, with the new size.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The counter is global: tests that count take this lock, so they never overlap.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn allocations<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = MINE.with(Cell::get);
    let v = f();
    (MINE.with(Cell::get) - before, v)
}

fn cluster(nodes: usize) -> Inventory {
    let specs = (0..nodes).map(|i| {
        NodeSpec::new(format!("n{i}"))
            .label("block", format!("b{}", i / 64))
            .label("rack", format!("r{}", i / 16))
            .capacity("gpu", 8)
            .capacity("cpu", 64)
            .used("gpu", (i % 9) as i64)
    });
    Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes(specs)
        .build()
        .unwrap()
}

#[test]
fn a_warm_query_allocates_only_its_result() {
    // The whole test runs on one thread, so the counter sees only this code.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let gangs = [
        Gang::new("rack")
            .role(Role::new("w", 4).request("gpu", 1))
            .required("rack"),
        Gang::new("block")
            .role(Role::new("w", 40).request("gpu", 1))
            .required("block")
            .preferred("rack"),
        Gang::new("sliced")
            .role(Role::new("w", 8).request("gpu", 1))
            .required("block")
            .slice("rack", 4),
        Gang::new("split")
            .role(Role::new("w", 300).request("gpu", 1))
            .preferred("rack"),
        Gang::new("roles")
            .role(Role::new("launcher", 1).request("cpu", 4).unconstrained())
            .role(Role::new("w", 8).request("gpu", 1))
            .role(Role::new("ps", 2).request("cpu", 16))
            .required("block"),
    ];
    for nodes in [256, 2048] {
        let inv = cluster(nodes);
        let mut solver = Solver::new();
        for gang in &gangs {
            let compiled = inv.compile(gang).unwrap();
            // Warm up: the first query sizes the scratch space and fills the cache.
            let first = inv.place_with(&mut solver, &compiled).unwrap();
            assert!(first.is_placed(), "{}: {first:?}", gang.get_name());
            for _ in 0..3 {
                let (spent, out) = allocations(|| inv.place_with(&mut solver, &compiled).unwrap());
                let p = out.placement().unwrap();
                let (result, copy) = allocations(|| p.clone());
                assert_eq!(&copy, p);
                assert_eq!(
                    spent,
                    result,
                    "{} on {nodes} nodes: {spent} allocations, the result holds {result}",
                    gang.get_name()
                );
            }
        }
    }
}

#[test]
fn a_warm_no_answer_allocates_nothing() {
    // `Solver::find` for gangs that do not fit: the polling hot path.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let gangs = [
        Gang::new("rack")
            .role(Role::new("w", 200).request("gpu", 1))
            .required("rack"),
        // A rack has 16 nodes of 8 GPUs, some used: never a whole slice of 128.
        Gang::new("sliced")
            .role(Role::new("w", 128).request("gpu", 1))
            .required("block")
            .slice("rack", 128),
        Gang::new("roles")
            .role(Role::new("w", 8).request("gpu", 1))
            .role(Role::new("ps", 2).request("cpu", 1000))
            .required("block"),
    ];
    let inv = cluster(2048);
    let mut solver = Solver::new();
    for gang in &gangs {
        let compiled = inv.compile(gang).unwrap();
        assert_eq!(
            inv.find_with(&mut solver, &compiled).unwrap(),
            None,
            "{}",
            gang.get_name()
        );
        for _ in 0..3 {
            let (spent, found) = allocations(|| inv.find_with(&mut solver, &compiled).unwrap());
            assert_eq!((spent, found), (0, None), "{}", gang.get_name());
        }
    }
}
