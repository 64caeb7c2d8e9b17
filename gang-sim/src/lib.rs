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
//! assert_eq!(a.span.as_deref(), Some("rack"));
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
//!   node descriptions, or a generated HGX / NVL72 cluster ([`generate`]).
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
mod error;
mod experiment;
pub mod generate;
pub mod import;
mod load;
mod output;
mod placer;
mod rng;
mod run;
mod sim;
mod table;
pub mod textio;
mod trace;
mod unique;
mod workload;

pub use config::{
    default_slowdown, Discipline, Failures, Limits, Policy, Preemption, QueueConfig, Readiness,
    Recovery, RecoveryMode, Requeue, SimConfig, DEFAULT_MAX_INPUT_BYTES,
};
pub use error::SimError;
pub use experiment::{merge_config, Experiment, Variant};
pub use load::{cluster_gpus, offered_load, scale_to_load, trace_rows, TraceRow};
pub use output::{
    FinalState, Group, JobRecord, Profile, Sample, SimResult, Stats, Summary, UtilisationWindow,
    WindowOver, JOB_COLUMNS, TIMELINE_COLUMNS,
};
pub use output::{JobPreemption, PreemptionSummary};
pub use placer::PreemptionPolicy;
pub use placer::{
    Cluster, EngineProfile, NodeSpec, Requirement, Role, Taint, TaintEffect, Toleration,
};
pub use rng::Rng;
pub use run::{
    run_json, ClusterSource, GenCluster, RunDocument, TraceSource, CLUSTER_SOURCES, TRACE_FORMATS,
    TRACE_SOURCES,
};
pub use sim::Simulation;
pub use table::{
    identical_runs, summary_row, CompletionBasis, IdenticalRuns, SUMMARY_COLUMNS, SUMMARY_GLOSSARY,
};
pub use trace::{JobSpec, Trace, FIELDS};
pub use workload::{Arrival, WorkloadSpec};

/// The README's Rust examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
