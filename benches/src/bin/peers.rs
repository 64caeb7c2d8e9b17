//! The gang side of the side-by-side with peers' placement code (`benches/peers/`).
//!
//! ```text
//! peers export CLUSTER [FILE]               the cluster and its queries as JSON
//! peers gang CLUSTER [--round N] [--budget-ms MS] [--only NAME,...]
//! ```
//!
//! `CLUSTER` is `hgx-10k-50` style (flavor, size, % of GPUs used; see
//! `gang_benches::peers::parse_cluster`). `gang` builds the inventory, then for each
//! query compiles the gang once and places it with one warm `Solver`: the first call
//! (compile + a cold solver) is timed apart, then one warm call sizes the batches and
//! calls are timed in batches (a batch is at least 1 ms, so the clocks' own cost stays
//! out) until `--budget-ms` (default 300) has passed and at least 5 batches ran (at
//! most 5,000 batches). It prints one tab-separated line per query:
//!
//! ```text
//! gang  CLUSTER  QUERY  ROUND  CALLS  WALL_NS  CPU_NS  FIRST_NS  OUTCOME
//! ```
//!
//! `WALL_NS` and `CPU_NS` are medians over batches of the per-call wall time and process
//! CPU time; `OUTCOME` is the placement's spread (`members=… zones=… blocks=… racks=…
//! nodes=… max/node=…`, see `gang_benches::peers::Spread`) or `unschedulable`. A line
//! `#setup` first gives the node count, the usable free GPUs and the build time. The
//! script `benches/peers/kueue/run.sh` runs this and the Kueue harness in alternating
//! rounds.

use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use gang_benches::cases;
use gang_benches::gen::Cluster;
use gang_benches::peers::{self, NodeIndex, Spread};
use gang_core::{Outcome, Solver};

const USAGE: &str = "usage: peers export CLUSTER [FILE]\n       peers gang CLUSTER [--round N] [--budget-ms MS] [--only NAME,...]\n(CLUSTER: hgx-1k-50, hgx-10k-85, nvl72-100k-0, ...)";

/// Process CPU time, nanoseconds.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// Timing of one query: calls made and medians (per call) over batches.
struct Timing {
    calls: u64,
    wall_ns: u64,
    cpu_ns: u64,
}

const MIN_BATCHES: usize = 5;
const MAX_BATCHES: usize = 5000;
const BATCH: Duration = Duration::from_millis(1);

/// Times `f` in batches of at least [`BATCH`] until `budget` passed and at least
/// [`MIN_BATCHES`] ran; one untimed-for-the-result call first sizes the batches.
fn measure(budget: Duration, mut f: impl FnMut()) -> Timing {
    let t = Instant::now();
    f();
    let one = t.elapsed();
    let per_batch = (BATCH.as_nanos() / one.as_nanos().max(1)).clamp(1, 1_000_000) as u64;
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while (wall.len() < MIN_BATCHES || start.elapsed() < budget) && wall.len() < MAX_BATCHES {
        let c0 = cpu_ns();
        let t0 = Instant::now();
        for _ in 0..per_batch {
            f();
        }
        let w = t0.elapsed().as_nanos() as u64;
        let c = cpu_ns().saturating_sub(c0);
        wall.push(w / per_batch);
        cpu.push(c / per_batch);
    }
    Timing {
        calls: per_batch * wall.len() as u64,
        wall_ns: median(&mut wall),
        cpu_ns: median(&mut cpu),
    }
}

struct GangArgs {
    cluster: String,
    round: u32,
    budget: Duration,
    only: Option<Vec<String>>,
}

fn parse_gang(args: &[String]) -> Result<GangArgs, String> {
    let mut it = args.iter();
    let cluster = it.next().ok_or("missing CLUSTER")?.clone();
    let mut out = GangArgs {
        cluster,
        round: 1,
        budget: Duration::from_millis(300),
        only: None,
    };
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--round" => out.round = value()?.parse().map_err(|e| format!("--round: {e}"))?,
            "--budget-ms" => {
                let ms: u64 = value()?.parse().map_err(|e| format!("--budget-ms: {e}"))?;
                out.budget = Duration::from_millis(ms);
            }
            "--only" => out.only = Some(value()?.split(',').map(str::to_owned).collect()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(out)
}

fn gang(args: &GangArgs) -> Result<(), String> {
    let spec = peers::parse_cluster(&args.cluster)
        .ok_or_else(|| format!("unknown cluster {:?}", args.cluster))?;
    let t0 = Instant::now();
    let cluster = Cluster::generate(&spec);
    let inv = cluster.inventory();
    let build = t0.elapsed();
    let index = NodeIndex::new(&cluster);
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| e.to_string();
    writeln!(
        out,
        "#setup\tgang\t{}\tnodes={}\tusable_free_gpus={}\tbuild_ms={:.1}",
        args.cluster,
        inv.len(),
        peers::usable_free_gpus(&cluster),
        build.as_secs_f64() * 1e3
    )
    .map_err(io)?;
    for q in peers::queries() {
        let name = q.name();
        if args.only.as_ref().is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let gang = cases::single(&spec, q.constraint, q.count);
        let t = Instant::now();
        let compiled = inv.compile(&gang).map_err(|e| e.to_string())?;
        let mut solver = Solver::new();
        let outcome = inv
            .place_with(&mut solver, &compiled)
            .map_err(|e| e.to_string())?;
        let first = t.elapsed();
        let timing = measure(args.budget, || {
            black_box(inv.place_with(&mut solver, black_box(&compiled)).ok());
        });
        let described = match &outcome {
            Outcome::Placed(p) => Spread::of_placement(&index, p).render(),
            Outcome::Unschedulable(_) => "unschedulable".to_owned(),
            Outcome::Undecided(_) => "undecided".to_owned(),
        };
        writeln!(
            out,
            "gang\t{}\t{name}\t{}\t{}\t{}\t{}\t{}\t{described}",
            args.cluster,
            args.round,
            timing.calls,
            timing.wall_ns,
            timing.cpu_ns,
            first.as_nanos()
        )
        .map_err(io)?;
        out.flush().map_err(io)?;
    }
    Ok(())
}

fn export(args: &[String]) -> Result<(), String> {
    let name = args.first().ok_or("missing CLUSTER")?;
    let spec = peers::parse_cluster(name).ok_or_else(|| format!("unknown cluster {name:?}"))?;
    let cluster = Cluster::generate(&spec);
    let queries = peers::queries();
    let io = |e: std::io::Error| e.to_string();
    match args.get(1) {
        Some(path) => {
            let f = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
            let mut w = std::io::BufWriter::new(f);
            peers::write_json(&cluster, &queries, &mut w).map_err(io)?;
            w.flush().map_err(io)
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            peers::write_json(&cluster, &queries, &mut w).map_err(io)?;
            w.flush().map_err(io)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("export") => export(&args[1..]),
        Some("gang") => parse_gang(&args[1..]).and_then(|a| gang(&a)),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peers: {e}");
            ExitCode::from(2)
        }
    }
}
