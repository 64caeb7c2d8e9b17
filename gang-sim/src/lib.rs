//! What a placement policy costs in completion time: a deterministic discrete-event
//! simulation of gangs over a job trace, driving the real `gang-core`.
//!
//! ```
//! use gang_sim::{Cluster, JobSpec, NodeSpec, SimConfig, Simulation, Trace};
//!
//! // Two racks of two 4-GPU nodes.
//! let node = |n: &str, r: &str| NodeSpec::new(n).label("rack", r).capacity("nvidia.com/gpu", 4);
//! let cluster = Cluster::from_nodes(&["rack"],
//!     vec![node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")])?;
//! // A communication-bound 8-worker job, and a second one behind it.
//! let mut first = JobSpec::new("first", 0.0, 3600.0, 8, 1);
//! first.sensitivity = Some("high".into());
//! let mut second = first.clone();
//! second.id = "second".into();
//! let trace = Trace::new(vec![first, second]);
//!
//! let config = SimConfig::from_json(r#"{"policy": "required(rack)", "readiness": {"init_time": 0}}"#)?;
//! let result = Simulation::new(cluster, trace, config)?.run()?;
//! let (a, b) = (result.job("first").unwrap(), result.job("second").unwrap());
//! // One rack each: 2.5x the ideal hour (high sensitivity, one rack), both at once.
//! assert_eq!((a.completion, b.completion), (Some(9000.0), Some(9000.0)));
//! assert_eq!(a.level.as_deref(), Some("rack"));
//! assert!(result.summary_json().contains("\"completed\": 2"));
//! # Ok::<(), gang_sim::SimError>(())
//! ```
//!
//! The same run from one JSON document (what the Python binding and the command line
//! use), see [`run_json`] and [`RunDocument`].
//!
//! # Model
//!
//! - **Cluster**: a gang-core inventory ([`Cluster`]): a scenario or cluster document,
//!   node descriptions, or a generated HGX / NVL72 cluster ([`gen`]).
//! - **Jobs** ([`JobSpec`], [`Trace`]): each job is one gang (its roles), submitted at a
//!   time, with an ideal run time (on one node), a sensitivity class, a checkpoint
//!   interval, a priority, a tenant, an optional cancellation time, and optional
//!   per-job policy, recovery, init-failure probability and slowdown table.
//! - **Placement** is gang-core's, always: [`Policy`] says which request is asked
//!   (required / preferred level, unconstrained, timed relaxation, spread of
//!   replicas, or the no-gang baseline of one-member gangs). The simulator holds no
//!   placement logic.
//! - **Run time** = remaining ideal work × the slowdown of the highest level the
//!   placement spans (one node, one domain of the innermost level, the next, …, the
//!   whole cluster), from the job's table: defaults `low` 1, 1.05, 1.10, 1.25;
//!   `medium` 1, 1.5, 1.8, 2.5; `high` 1, 2.5, 3.5, 6 (one node, rack, block, beyond).
//!   The last value applies to everything wider, and always to a placement that
//!   spans the whole cluster (wider than the top level): with the one level `rack`, a
//!   `low` job across two racks runs at 1.25, not at the third value.
//!
//! # Event semantics (normative)
//!
//! Time is integer milliseconds (inputs in seconds are rounded to the nearest
//! millisecond). Events at the same time are handled in this class order, then by job
//! (trace order), then by the order they were scheduled:
//!
//! 1. `finish` — a running job's remaining work is done: it releases everything.
//! 2. `cancel` — waiting: leaves the queue, held nothing (a no-gang job releases the
//!    members it had); starting, paused or running: releases everything.
//! 3. `repair` — a failed node is uncordoned.
//! 4. `fail` — a node fails (gang-core `fail_node`: cordoned, its members lost).
//! 5. `ready` — every member of an attempt is ready (after `init_time` from admission;
//!    for no-gang jobs from the last member placed); or the replacements of a paused
//!    job are ready. The job runs (again) from here.
//! 6. `timeout` — an attempt not all ready `timeout` after admission (no-gang: after
//!    its first member was placed) releases everything; it is a readiness failure:
//!    after `max_attempts` of them the job is `failed`, otherwise it waits
//!    `min(backoff_base × backoff_factor^(n-1), backoff_max)` and re-enters the queue.
//!    Also the end of a paused job's `replace_timeout`: it releases and restarts.
//! 7. `requeue` — backoff over: back into the queue.
//! 8. `relax` — a job under timed relaxation has waited `after` at its current level:
//!    its request moves one level out (past the top level: unconstrained). Each wait
//!    starts at the policy's level again: a job back in the queue after a readiness
//!    timeout or a restart waits `after` at `L` first.
//! 9. `arrive` — a job is submitted: into the queue, or `never_fits` (below).
//!
//! A timer of a state the job has left (a `finish` of a job that failed meanwhile) is
//! ignored and does not move the clock.
//!
//! After all events of one time, if anything changed, **one scheduling pass**:
//!
//! 1. Paused jobs (waiting for replacements), by trace order, try gang-core `replace`
//!    for every reservation with lost members, when capacity came back since their
//!    last try. Replacements stay inside the gang's domain; if it has no room the job
//!    keeps waiting, holding the rest (gang-core's pending reason is reported).
//! 2. The queue, ordered by priority (higher first) then by entry (submission; a job
//!    re-entering goes behind every waiting job, or back to its submission place with
//!    `"requeue": "creation"`): each job in turn is placed whole by gang-core
//!    (`Solver::find`, then `reserve`; spread jobs by `spread`) until one does not fit:
//!    that one is the head. `fifo`: the pass stops there. `backfill`: every later job
//!    that fits on its own is placed, in order, by gang-core's backfill rule
//!    (`Inventory::admit` in `Backfill` mode): only on nodes where no role of the head
//!    fits a member now. By default the rule is asked of the simulation's warm solver
//!    (the nodes where a one-member gang of each of the head's roles fits are found by
//!    gang-core and cordoned while the later gangs are placed, then uncordoned); with
//!    `"via_admit": true` the pass calls `Inventory::admit` itself. The answers are the
//!    same (tested). Spread jobs are never backfilled; behind a spread head, the pass is
//!    FIFO.
//! 3. No-gang members, ordered by priority, then member index, then job entry (so the
//!    members of jobs submitted together interleave, as pods of concurrently created
//!    jobs do), are each placed alone (a one-member unconstrained gang) where they fit;
//!    a member that does not fit is skipped, never blocking the rest.
//!
//! Events a pass schedules for the current time (a `ready` with `init_time` 0) are
//! handled next, at the same time, followed by another pass. A request gang-core
//! found not to fit is not asked again until capacity has been given back (a release
//! or a repair): less free capacity never turns "does not fit" into "fits", so this
//! changes no outcome, only the number of questions.
//!
//! A job placed is *admitted*: its members start (`init_time`); each fails to
//! initialise with probability `init_failure` (drawn per job, attempt and member from
//! the seed), or always for `failing_members`. A job that can never fit the cluster as
//! given (no reservations, no failures; for timed relaxation: even unconstrained; for
//! no-gang: a single member) ends `never_fits` at submission with gang-core's
//! diagnosis; it holds nothing and is never retried.
//!
//! **Failures.** Each schedulable node fails as a Poisson process of
//! `node_rate_per_hour`; the `k`-th failure happens an exponential gap after the one
//! before (drawn from the seed and `k`) on a uniformly drawn node (no effect if that
//! node is down). It is back `repair_time` later. A job hit while starting loses the
//! attempt (released, requeued at once; not a readiness failure). A running job keeps
//! its work up to its last checkpoint (checkpoints every `checkpoint` seconds of
//! running, counted from the start of the segment); the rest is lost work. Then, by its
//! recovery: `restart` releases everything and re-enters the queue; `replace` keeps
//! the rest and waits for replacements (the pass, above), then `init_time`, then runs
//! again with the slowdown of its new span.
//!
//! The simulation ends when every job is done, at the horizon, or when only the
//! failure process is left (nothing else can happen: jobs still waiting, or holding a
//! partial no-gang allocation, end `unfinished` and say why — a deadlock, for
//! instance).
//!
//! **Accounting.** A job's held GPU-time is split exactly: *useful* (running, kept),
//! *wasted* (attempts that timed out or were lost to a failure, and work lost since
//! the last checkpoint), *idle* (initialising members of attempts that became ready,
//! paused waiting for replacements, partial no-gang allocations). *Before progress*
//! is all that was held before the first useful progress.
//!
//! # Invariants
//!
//! With invariant checks on (the default in debug builds and tests,
//! `"check_invariants": true` otherwise), after every event and every pass: gang-core's
//! `Inventory::validate` (capacity never exceeded, reservations whole and accounted);
//! the simulation's free and held GPU counts equal the core's; no gang job holds a
//! partial gang except while waiting for replacements (and starting jobs never beyond
//! their readiness timeout); held = useful + wasted + idle (+ initialising); time never
//! goes backwards; at the end every job is in a final state, nothing is held, and the
//! jobs' held GPU-time equals the cluster's integral of held GPUs.
//!
//! # Randomness
//!
//! Every random decision is a function of the seed and what it is about (see
//! [`Rng`] and the crate's `rng` module): SplitMix64, with logarithms and exponentials
//! computed without the platform's math library, so results are byte-identical on
//! every platform.

#![deny(missing_docs)]

mod config;
mod csv;
mod engine;
mod error;
mod experiment;
pub mod gen;
pub mod import;
mod output;
mod rng;
mod sim;
mod trace;
mod workload;

pub use config::{
    default_slowdown, Discipline, Failures, Policy, QueueConfig, Readiness, Recovery, RecoveryMode,
    Requeue, SimConfig,
};
pub use engine::{
    Cluster, EngineProfile, NodeSpec, Requirement, Role, Taint, TaintEffect, Toleration,
};
pub use error::SimError;
pub use experiment::{Experiment, Variant};
pub use output::{
    FinalState, Group, JobRecord, Profile, Sample, SimResult, Stats, Summary, JOB_COLUMNS,
};
pub use rng::Rng;
pub use sim::Simulation;
pub use trace::{JobSpec, Trace, FIELDS};
pub use workload::{Arrival, WorkloadSpec};

use serde::{Deserialize, Serialize};

/// Where the cluster comes from, in a [`RunDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ClusterSource {
    /// A file holding a cluster or scenario document.
    File(String),
    /// The document itself.
    Inline(serde_json::Value),
    /// A generated cluster.
    Generate(GenCluster),
    /// Alibaba openb node list (CSV file), see [`import::openb_nodes`].
    OpenbNodes {
        /// The CSV file.
        file: String,
        /// Group nodes into racks of this many (in file order); `null`: no racks.
        nodes_per_rack: Option<usize>,
    },
}

/// A generated cluster: `racks` racks of `flavor` (see [`gen`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenCluster {
    /// `hgx` (32 × 8-GPU nodes per rack, 16 racks per block) or `nvl72` (18 × 4-GPU
    /// trays per rack, 8 racks per block).
    pub flavor: String,
    /// Number of racks.
    pub racks: usize,
    /// Share of GPUs already used by others, percent.
    pub used_pct: u32,
    /// Seed of the generator.
    pub seed: u64,
    /// Put in the benchmarks' awkward nodes (cordoned, tainted, unlabelled, another
    /// product).
    pub awkward: bool,
}

impl Default for GenCluster {
    fn default() -> Self {
        GenCluster {
            flavor: "hgx".into(),
            racks: 4,
            used_pct: 0,
            seed: 0,
            awkward: false,
        }
    }
}

impl GenCluster {
    /// Builds the cluster.
    ///
    /// # Errors
    /// [`SimError::Config`] for an unknown flavor or zero racks.
    pub fn build(&self) -> Result<Cluster, SimError> {
        let flavor = match self.flavor.as_str() {
            "hgx" => gen::Flavor::Hgx,
            "nvl72" => gen::Flavor::Nvl72,
            other => {
                return Err(SimError::config(
                    "cluster.generate.flavor",
                    format!("unknown flavor {other:?}: hgx or nvl72"),
                ))
            }
        };
        if self.racks == 0 {
            return Err(SimError::config(
                "cluster.generate.racks",
                "at least one rack",
            ));
        }
        let mut spec = if self.awkward {
            let mut s = gen::Spec::of(flavor, gen::Size::K1, self.used_pct);
            s.racks = self.racks;
            s
        } else {
            gen::Spec::clean(flavor, self.racks)
        };
        spec.used_pct = self.used_pct.min(100);
        spec.seed ^= self.seed;
        Ok(gen::SynthCluster::generate(&spec).cluster())
    }
}

/// Where the trace comes from, in a [`RunDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceSource {
    /// A file, read by format: `jsonl` (default), `csv`, `sacct`, `openb`, `philly`.
    File {
        /// Path.
        path: String,
        /// Format; `null`: by extension (`.csv` is CSV, else JSON Lines).
        #[serde(default)]
        format: Option<String>,
    },
    /// The jobs themselves, as JSON objects (JSON Lines fields).
    Inline(Vec<serde_json::Value>),
    /// JSON Lines text.
    Jsonl(String),
    /// CSV text.
    Csv(String),
    /// A generated workload.
    Generate(WorkloadSpec),
}

/// One JSON document for a whole run: `{"cluster", "trace", "config"}`.
///
/// ```
/// let doc = r#"{
///   "cluster": {"generate": {"flavor": "hgx", "racks": 2}},
///   "trace": {"jsonl": "{\"id\": \"a\", \"submit\": 0, \"duration\": 60, \"members\": 4, \"gpus\": 8}"},
///   "config": {"policy": "required(rack)", "seed": 1}
/// }"#;
/// let out: serde_json::Value = serde_json::from_str(&gang_sim::run_json(doc)?).unwrap();
/// assert_eq!(out["jobs"][0]["state"], "completed");
/// assert_eq!(out["jobs"][0]["level"], "topology.example.com/rack");
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDocument {
    /// The cluster.
    pub cluster: ClusterSource,
    /// The trace.
    pub trace: TraceSource,
    /// Everything else (defaults when absent).
    #[serde(default)]
    pub config: SimConfig,
}

impl RunDocument {
    /// Parses a run document.
    ///
    /// # Errors
    /// [`SimError::Config`] naming the JSON path.
    pub fn from_json(text: &str) -> Result<RunDocument, SimError> {
        let d: RunDocument = config::from_json_path(text, "")?;
        d.config.check()?;
        Ok(d)
    }

    /// Reads a run document from a file; relative paths inside it are taken relative to
    /// the file's folder.
    ///
    /// # Errors
    /// [`SimError::Io`], or as [`RunDocument::from_json`].
    pub fn from_file(path: &str) -> Result<RunDocument, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
        let mut d = RunDocument::from_json(&text)?;
        let dir = std::path::Path::new(path)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        d.rebase(&dir);
        Ok(d)
    }

    /// Makes relative file paths relative to `dir`.
    pub fn rebase(&mut self, dir: &std::path::Path) {
        let fix = |p: &mut String| {
            if std::path::Path::new(p.as_str()).is_relative() {
                *p = dir.join(p.as_str()).to_string_lossy().into_owned();
            }
        };
        match &mut self.cluster {
            ClusterSource::File(p) => fix(p),
            ClusterSource::OpenbNodes { file, .. } => fix(file),
            ClusterSource::Inline(_) | ClusterSource::Generate(_) => {}
        }
        if let TraceSource::File { path, .. } = &mut self.trace {
            fix(path);
        }
    }

    /// Builds the cluster, the trace and the simulation.
    ///
    /// # Errors
    /// As [`Simulation::new`], plus reading files and importing traces.
    pub fn simulation(&self) -> Result<Simulation, SimError> {
        let cluster = match &self.cluster {
            ClusterSource::File(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| SimError::io(p, e))?;
                Cluster::from_json(&text)?
            }
            ClusterSource::Inline(v) => Cluster::from_json(&v.to_string())?,
            ClusterSource::Generate(g) => g.build()?,
            ClusterSource::OpenbNodes {
                file,
                nodes_per_rack,
            } => {
                let text = std::fs::read_to_string(file).map_err(|e| SimError::io(file, e))?;
                import::openb_nodes(&text, *nodes_per_rack)?
            }
        };
        let trace = match &self.trace {
            TraceSource::File { path, format } => {
                let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
                let fmt = format.clone().unwrap_or_else(|| {
                    if path.ends_with(".csv") {
                        "csv"
                    } else {
                        "jsonl"
                    }
                    .to_owned()
                });
                match fmt.as_str() {
                    "jsonl" => Trace::from_jsonl(&text)?,
                    "csv" => Trace::from_csv(&text)?,
                    "sacct" => import::sacct(&text)?.trace,
                    "openb" => import::openb_pods(&text)?.trace,
                    "philly" => import::philly(&text)?.trace,
                    other => {
                        return Err(SimError::config(
                            "trace.file.format",
                            format!("unknown format {other:?}: jsonl, csv, sacct, openb or philly"),
                        ))
                    }
                }
            }
            TraceSource::Inline(jobs) => {
                let text: String = jobs.iter().map(|j| format!("{j}\n")).collect();
                Trace::from_jsonl(&text)?
            }
            TraceSource::Jsonl(t) => Trace::from_jsonl(t)?,
            TraceSource::Csv(t) => Trace::from_csv(t)?,
            TraceSource::Generate(w) => w.generate()?,
        };
        Simulation::new(cluster, trace, self.config.clone())
    }
}

/// Runs the simulation a [`RunDocument`] describes and returns its result as JSON:
/// `{"jobs": [...], "summary": {...}, "timeline": [...]}`.
///
/// # Errors
/// Any [`SimError`]; [`SimError::to_json`] renders it for a caller across a language
/// boundary.
pub fn run_json(document: &str) -> Result<String, SimError> {
    let doc = RunDocument::from_json(document)?;
    let result = doc.simulation()?.run()?;
    Ok(result.to_json())
}

/// The README's Rust examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
