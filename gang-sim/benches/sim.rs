//! Simulation speed: 100k jobs on a 10k-node HGX cluster (320 racks of 32 8-GPU
//! nodes), under each policy.
//!
//! ```text
//! cargo bench -p gang-sim --bench sim                    # criterion, every policy
//! cargo bench -p gang-sim --bench sim -- report          # one profiled run per policy:
//!                                                        # jobs/s, events/s, memory per
//!                                                        # job, where the time goes
//! GANG_SIM_JOBS=20000 cargo bench -p gang-sim --bench sim -- report   # smaller
//! GANG_SIM_POLICY=backfill cargo bench -p gang-sim --bench sim -- report
//!                     # only the policies whose name contains the text
//! GANG_SIM_JOBS=20000 cargo bench -p gang-sim --bench sim -- preempt-report
//!                     # the same workload with priorities 0-2 (job index mod 3) and
//!                     # "preemption": "lower-priority": run time, preemption queries
//! ```
//!
//! The workload (seeded, the same for every policy): Poisson arrivals at 900 jobs an
//! hour (about the cluster's GPU-hours: queues build up), gang sizes from a power law over
//! 1..512 members (8 GPUs each; one-member jobs 1, 2, 4 or 8 GPUs), log-normal run
//! times (median 1 h, sigma 1), 30/50/20 % low/medium/high sensitivity, checkpoints
//! every 30 min, 4 tenants; node failures at 1e-4 per node-hour, repaired in 4 h.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use gang_sim::generate::{Flavor, Spec, SynthCluster};
use gang_sim::{Arrival, Cluster, SimConfig, Simulation, Trace, WorkloadSpec};

/// Counts bytes allocated now and at the peak (for memory per job).
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, size) };
        if !q.is_null() {
            if size > l.size() {
                let now = NOW.fetch_add(size - l.size(), Ordering::Relaxed) + size - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(l.size() - size, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const POLICIES: [&str; 6] = [
    "unconstrained",
    "required(rack)",
    "preferred(rack)",
    "timed(rack, 1800)",
    "no-gang",
    "backfill: unconstrained",
];

fn jobs() -> usize {
    std::env::var("GANG_SIM_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// The policies whose name contains `GANG_SIM_POLICY` (all without it).
fn policies() -> impl Iterator<Item = &'static str> {
    let only = std::env::var("GANG_SIM_POLICY").unwrap_or_default();
    POLICIES
        .into_iter()
        .filter(move |p| p.contains(only.as_str()))
}

fn cluster() -> Cluster {
    SynthCluster::generate(&Spec::clean(Flavor::Hgx, 320)).cluster()
}

fn trace(n: usize) -> Trace {
    WorkloadSpec {
        jobs: n,
        seed: 42,
        arrival: Arrival::Poisson { per_hour: 900.0 },
        ..WorkloadSpec::default()
    }
    .generate()
    .expect("valid workload")
}

fn config(policy: &str, profile: bool) -> SimConfig {
    config_with(policy, profile, "off")
}

fn config_with(policy: &str, profile: bool, preemption: &str) -> SimConfig {
    let (discipline, policy) = match policy.strip_prefix("backfill: ") {
        Some(p) => ("backfill", p),
        None => ("fifo", policy),
    };
    SimConfig::from_json(&format!(
        r#"{{"policy": "{policy}", "queue": {{"discipline": "{discipline}"}}, "seed": 1,
            "failures": {{"node_rate_per_hour": 0.0001}}, "sample_interval": 3600,
            "check_invariants": false, "profile": {profile}, "preemption": "{preemption}"}}"#
    ))
    .expect("valid config")
}

fn report() {
    let n = jobs();
    let t = trace(n);
    let gpu_s: f64 = t
        .jobs
        .iter()
        .map(|j| {
            let g: u64 = j.roles.iter().map(|r| u64::from(r.get_count())).sum();
            let per = if g == 1 { 1.0 } else { 8.0 };
            j.duration * g as f64 * per
        })
        .sum();
    let span = t.jobs.last().map_or(1.0, |j| j.submit.max(1.0));
    println!(
        "gang-sim: {n} jobs on {} nodes; arrivals over {:.0} h; ideal GPU-hours offered {:.0}% of capacity (GPUs of one-member jobs counted as 1)",
        cluster().len(),
        span / 3600.0,
        100.0 * gpu_s / (span * 81_920.0)
    );
    println!(
        "| policy | run s | jobs/s | events/s | placement calls | in gang-core s (find / admit / lifecycle) | probes s | rest s | peak MiB | bytes/job | completed | mean queue h |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for p in policies() {
        let (c, t) = (cluster(), trace(n));
        let base = NOW.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let start = Instant::now();
        let r = Simulation::new(c, t, config(p, true))
            .and_then(Simulation::run)
            .expect("runs");
        let secs = start.elapsed().as_secs_f64();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        let prof = r.summary.profile.clone().unwrap_or_default();
        let e = &prof.engine;
        let core = (e.find_ns + e.admit_ns + e.lifecycle_ns) as f64 / 1e9;
        let probe = prof.probe_ns as f64 / 1e9;
        println!(
            "| {p} | {secs:.2} | {:.0} | {:.0} | {} finds, {} admits, {} reserves | {core:.2} ({:.2} / {:.2} / {:.2}) | {probe:.2} | {:.2} | {:.0} | {:.0} | {} | {:.2} |",
            n as f64 / secs,
            r.summary.events as f64 / secs,
            e.finds,
            e.admits,
            e.reserves,
            e.find_ns as f64 / 1e9,
            e.admit_ns as f64 / 1e9,
            e.lifecycle_ns as f64 / 1e9,
            (secs - core - probe).max(0.0),
            peak as f64 / (1 << 20) as f64,
            peak as f64 / n as f64,
            r.summary.all.states.get("completed").copied().unwrap_or(0),
            r.summary.all.queue_delay.mean.unwrap_or(0.0) / 3600.0,
        );
    }
}

/// One run per policy of the workload with priorities (job index mod 3) and
/// preemption on: the time a run takes and what preemption did.
fn preempt_report() {
    let n = jobs();
    println!(
        "gang-sim preemption: {n} jobs on {} nodes, priorities 0-2",
        cluster().len()
    );
    println!("| policy | run s | preemption queries | in them s | plans from an incomplete search | preemptions | evictions | jobs evicted | GPU-hours lost |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for p in ["unconstrained", "required(rack)"] {
        let mut t = trace(n);
        for (i, j) in t.jobs.iter_mut().enumerate() {
            j.priority = (i % 3) as i64;
        }
        let start = Instant::now();
        let r = Simulation::new(cluster(), t, config_with(p, true, "lower-priority"))
            .and_then(Simulation::run)
            .expect("runs");
        let secs = start.elapsed().as_secs_f64();
        let pre = r.summary.preemption.clone().expect("preemption is on");
        let e = r.summary.profile.clone().unwrap_or_default().engine;
        println!(
            "| {p} | {secs:.2} | {} | {:.2} | {} | {} | {} | {} | {:.0} |",
            e.preempts,
            e.preempt_ns as f64 / 1e9,
            e.preempts_incomplete,
            pre.preemptions,
            pre.evictions,
            pre.jobs_evicted,
            pre.gpu_hours_lost,
        );
    }
}

fn bench(c: &mut Criterion) {
    let n = jobs();
    let cl = cluster();
    let tr = trace(n);
    let mut g = c.benchmark_group(format!("sim-{}k-jobs-10k-nodes", n / 1000));
    g.sample_size(10);
    for p in policies() {
        g.bench_function(p, |b| {
            b.iter_batched(
                || (cl.clone(), tr.clone()),
                |(c, t)| {
                    Simulation::new(c, t, config(p, false))
                        .and_then(Simulation::run)
                        .expect("runs")
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    if std::env::args().any(|a| a == "report") {
        report();
        return;
    }
    if std::env::args().any(|a| a == "preempt-report") {
        preempt_report();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
