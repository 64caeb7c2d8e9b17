//! `preempt`: what eviction makes room for an urgent gang (issue 22), on HGX clusters
//! with running gangs of mixed sizes (16–128 one-GPU workers, each in one rack: about
//! 60k of the 74k free GPUs at 10k nodes) and priorities (0–4), spread over the racks
//! (most-free): 10,240 nodes with 1,000 gangs offered, and 102,400 nodes with 10,000.
//! Against a greedy baseline in the same run: candidates in priority order (larger
//! first at equal priority, as kube-scheduler's ordering by priority then victim count
//! prefers), evicted one by one until the gang fits — the peers' method. Victims, GPUs
//! evicted and the time of one query are printed for both; criterion then measures
//! `preempt_with` (an urgent rack gang of 16 workers more than any rack holds now), the
//! same query on a kept `PreemptSolver` (`kept/…`; `kept-touched/evict`: one node's use
//! changed before each query, as between a scheduler's cycles), the same queries when
//! the gang fits now, `place_with` for that gang, and the greedy baseline.
//!
//! `GANG_BENCH_PREEMPT_SIZES=10k` (or `100k`) runs one size only.
//! `GANG_BENCH_PREEMPT_CLOCK=cpu` measures the benchmark thread's time on a CPU
//! (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`) instead of wall time: on a machine shared with
//! other work, wall time counts the time the thread waited for a core; CPU time does
//! not (caches shared with the other work still slow it).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkId, Criterion};
use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec, GPU};
use gang_core::lifecycle::{PreemptOptions, PreemptOutcome, PreemptSolver};
use gang_core::{CompiledGang, Gang, Inventory, Quantity, Solver};

/// The cluster with `running` gangs reserved: sizes 8, 16, 32, 64 in turn, priorities
/// 0..5 in turn (those that fit).
fn busy(spec: &Spec, running: usize) -> Inventory {
    let mut inv = Cluster::generate(spec).inventory();
    let mut solver = Solver::new();
    for i in 0..running {
        let count = [16u32, 32, 64, 128][i % 4];
        let mut gang = cases::single(spec, Constraint::RequiredRack, count)
            .priority((i % 5) as i32)
            // Most-free spreads them over every rack (best-fit leaves racks empty).
            .policy(gang_core::Policy::MostFree);
        gang.set_name(format!("run-{i}"));
        let compiled = inv.compile(&gang).unwrap();
        if let Some(p) = inv.find_with(&mut solver, &compiled).unwrap() {
            inv.reserve(&p).unwrap();
        }
    }
    inv
}

fn urgent(spec: &Spec, count: u32) -> Gang {
    cases::single(spec, Constraint::RequiredRack, count).priority(10)
}

/// The peers' greedy method: evict in priority order (larger first) until it fits.
/// Returns (victims, GPUs evicted in milli-units, highest priority), or `None`.
fn greedy(inv: &Inventory, gang: &CompiledGang) -> Option<(usize, u64, i32)> {
    let prio = gang.gang().get_priority();
    let mut cands: Vec<(i32, u64, gang_core::ReservationId)> = inv
        .reservations()
        .filter(|r| r.gang().get_priority() < prio)
        .map(|r| {
            let gpus = r
                .usage(inv)
                .iter()
                .filter(|u| u.1 == GPU)
                .map(|u| u.2.millis())
                .sum();
            (r.gang().get_priority(), gpus, r.id())
        })
        .collect();
    cands.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut scratch = inv.clone();
    let mut solver = Solver::new();
    let (mut n, mut gpus, mut top) = (0, 0, i32::MIN);
    for (p, g, id) in cands {
        if scratch.find_with(&mut solver, gang).unwrap().is_some() {
            return Some((n, gpus, top));
        }
        scratch.release(id).unwrap();
        n += 1;
        gpus += g;
        top = top.max(p);
    }
    scratch
        .find_with(&mut solver, gang)
        .unwrap()
        .map(|_| (n, gpus, top))
}

fn report(inv: &Inventory, gang: &CompiledGang, what: &str) {
    let t = Instant::now();
    let out = inv
        .preempt_with(&mut Solver::new(), gang, &PreemptOptions::default())
        .unwrap();
    let exact_time = t.elapsed();
    let t = Instant::now();
    let g = greedy(inv, gang);
    let greedy_time = t.elapsed();
    match &out {
        PreemptOutcome::Placed(plan) => println!(
            "preempt {what}: gang: {} victims, {} GPUs, highest priority {:?}, complete {}, \
             {exact_time:?} (cold solver); victims {:?} in {}",
            plan.victims().len(),
            plan.evicted(GPU).millis() / 1000,
            plan.highest_priority(),
            plan.search_complete(),
            plan.victims()
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>(),
            plan.placement().domain_path(),
        ),
        other => println!("preempt {what}: gang: {} ({exact_time:?})", other.status()),
    }
    match g {
        Some((n, gpus, top)) => println!(
            "preempt {what}: greedy: {n} victims, {} GPUs, highest priority {top}, {greedy_time:?}",
            gpus / 1000
        ),
        None => println!("preempt {what}: greedy: nothing fits ({greedy_time:?})"),
    }
}

/// The benchmark thread's time on a CPU, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

static WALL: WallTime = WallTime;

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = Duration;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns().saturating_sub(start))
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}

fn preempt<M: Measurement>(c: &mut Criterion<M>) {
    let sizes = std::env::var("GANG_BENCH_PREEMPT_SIZES").unwrap_or_else(|_| "10k,100k".into());
    for (size, running) in [(Size::K10, 1000), (Size::K100, 10_000)] {
        if sizes.split(',').any(|s| s.trim() == size.as_str()) {
            case(c, size, running);
        }
    }
}

fn case<M: Measurement>(c: &mut Criterion<M>, size: Size, running: usize) {
    let spec = Spec::hgx(size, 10);
    let inv = busy(&spec, running);
    println!(
        "preempt: {} nodes, {} running gangs",
        inv.len(),
        inv.reservations().count()
    );
    // The urgent gang: 16 workers more than the roomiest rack holds now.
    let mut solver = Solver::new();
    let fits = |n: u32, solver: &mut Solver| {
        let c = inv.compile(&urgent(&spec, n)).unwrap();
        inv.find_with(solver, &c).unwrap().is_some()
    };
    let (mut lo, mut hi) = (1u32, 256u32);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid, &mut solver) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let need = lo + 16;
    println!("preempt: the roomiest rack holds {lo} workers; the urgent gang has {need}");
    let big = inv.compile(&urgent(&spec, need)).unwrap();
    let small = inv.compile(&urgent(&spec, 4)).unwrap();
    report(&inv, &big, &format!("{need} workers"));
    // Criterion compares with the last run of the same name: one name per clock.
    let clock = match std::env::var("GANG_BENCH_PREEMPT_CLOCK").as_deref() {
        Ok("cpu") => "-cpu",
        _ => "",
    };
    let mut g = c.benchmark_group(format!(
        "preempt-hgx-{}-{running}-running{clock}",
        size.as_str()
    ));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, gang) in [("evict", &big), ("fits-now/4", &small)] {
        g.bench_function(BenchmarkId::new("preempt", name), |b| {
            let mut solver = Solver::new();
            let opts = PreemptOptions::default();
            b.iter(|| {
                inv.preempt_with(&mut solver, black_box(gang), &opts)
                    .unwrap()
            });
        });
        g.bench_function(BenchmarkId::new("kept", name), |b| {
            let mut solver = PreemptSolver::new();
            let opts = PreemptOptions::default();
            b.iter(|| solver.preempt(&inv, black_box(gang), &opts).unwrap());
        });
    }
    // A scheduler's cycle: something changed since the last query. One node's external
    // use alternates between 0 and 1 GPU before each query (the kept candidates and the
    // mirror catch up from the journal).
    g.bench_function(BenchmarkId::new("kept-touched", "evict"), |b| {
        let mut inv = inv.clone();
        let node = inv
            .node_names()
            .nth(inv.len() / 2)
            .expect("a node")
            .to_owned();
        let mut solver = PreemptSolver::new();
        let opts = PreemptOptions::default();
        let mut one = false;
        b.iter(|| {
            one = !one;
            inv.set_used(&node, GPU, Quantity::from_units(u64::from(one)))
                .unwrap();
            solver.preempt(&inv, black_box(&big), &opts).unwrap()
        });
    });
    g.bench_function(BenchmarkId::new("place", "fits-now/4"), |b| {
        let mut solver = Solver::new();
        b.iter(|| inv.place_with(&mut solver, black_box(&small)).unwrap());
    });
    g.bench_function(BenchmarkId::new("greedy", "evict"), |b| {
        b.iter(|| greedy(&inv, black_box(&big)));
    });
    g.finish();
}

fn main() {
    if std::env::var("GANG_BENCH_PREEMPT_CLOCK").as_deref() == Ok("cpu") {
        let mut c = Criterion::default()
            .with_measurement(ThreadCpu)
            .configure_from_args();
        preempt(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        preempt(&mut c);
        c.final_summary();
    }
}
