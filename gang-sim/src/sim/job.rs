//! A job as the simulation follows it: what it is (fixed when the simulation is built)
//! and where it is (its state, its place in the queue, what it holds, how far it ran,
//! what happened to it).

use std::ops::{Index, IndexMut};

use super::accounting::{Holding, Phase};
use super::ids::{JobIx, Ms, ReqIx, Stamp};
use super::queue::Key;
use crate::config::RecoveryMode;
use crate::output::FinalState;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum St {
    Unsubmitted,
    Queued,
    Backoff,
    Starting,
    Running,
    /// Lost members; `waiting`: no replacement yet (else replacements are starting).
    Paused {
        waiting: bool,
    },
    Done,
}

/// How a job is placed: the requests it asks, compiled once.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// One gang; `variants[step]` is the request in force (timed relaxation walks up).
    Gang {
        variants: Vec<ReqIx>,
        after: Option<Ms>,
    },
    /// Replicas of one gang in distinct domains.
    Spread {
        req: ReqIx,
        replicas: u32,
        level: String,
    },
    /// Members placed one at a time: per role, the one-member request and the count.
    NoGang { pods: Vec<(ReqIx, u32)> },
}

impl Kind {
    pub(crate) fn is_nogang(&self) -> bool {
        matches!(self, Kind::NoGang { .. })
    }
}

/// What a job is: from its trace line and the configuration, fixed when the
/// simulation is built.
#[derive(Debug)]
pub(crate) struct JobDef {
    pub(crate) id: String,
    /// Index into the interned tenants.
    pub(crate) tenant: u32,
    pub(crate) priority: i64,
    pub(crate) submit: Ms,
    pub(crate) cancel: Option<Ms>,
    pub(crate) checkpoint: Option<Ms>,
    /// Index into the interned slowdown tables.
    pub(crate) table: usize,
    /// The sensitivity class reported (`job` for a job's own table).
    pub(crate) class_name: String,
    pub(crate) recovery: RecoveryMode,
    /// Per-member probability of failing to initialise.
    pub(crate) init_p: f64,
    /// Members that always fail to initialise.
    pub(crate) failing: u32,
    pub(crate) kind: Kind,
    /// Index into the interned policy labels.
    pub(crate) label: usize,
    pub(crate) members: u64,
    /// GPUs (milli) of all its members.
    pub(crate) gpus: u64,
    /// Why it can never fit the cluster as given, if it cannot.
    pub(crate) never_fits: Option<String>,
}

/// A job's place in the queue.
#[derive(Debug, Default)]
pub(crate) struct Place {
    /// The request in force, for timed relaxation (index into `Kind::Gang::variants`).
    pub(crate) step: usize,
    /// Its entry now.
    pub(crate) order: u64,
    /// Its first entry (submission).
    pub(crate) first_order: u64,
}

/// How far a job has run.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Ideal work left (ms on one node).
    pub(crate) remaining: f64,
    /// Start of the running segment.
    pub(crate) seg_start: Ms,
    /// Slowdown of the placement's span.
    pub(crate) slowdown: f64,
    /// The span of the last placement (see `Placer::span`).
    pub(crate) span: Option<usize>,
    /// Time spent running.
    pub(crate) run_ms: Ms,
    /// Running time lost to failures after the last checkpoint.
    pub(crate) lost_ms: Ms,
}

/// When things first (or last) happened to a job.
#[derive(Debug, Default)]
pub(crate) struct Times {
    pub(crate) first_admitted: Option<Ms>,
    pub(crate) admitted: Option<Ms>,
    pub(crate) all_ready: Option<Ms>,
    pub(crate) end: Option<Ms>,
    /// When the first member of a no-gang attempt was placed.
    pub(crate) first_pod: Ms,
}

/// What happened to a job, counted.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) attempts: u32,
    pub(crate) readiness_failures: u32,
    pub(crate) node_failures: u32,
    pub(crate) restarts: u32,
    pub(crate) replacements: u32,
}

/// The attempt under way.
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    /// Some member fails to initialise: the attempt never becomes ready.
    pub(crate) fails: bool,
    /// No-gang members placed so far.
    pub(crate) pods_placed: u64,
}

/// A wait for replacements.
#[derive(Debug, Default)]
pub(crate) struct Pause {
    /// When the wait ends (the recovery's `replace_timeout`), kept across pauses of
    /// one attempt.
    pub(crate) deadline: Option<Ms>,
    /// The give-back count at which replacement was last tried.
    pub(crate) tried: Option<u64>,
    /// gang-core's reason the replacements are pending.
    pub(crate) reason: Option<String>,
}

/// What preemption did to a job, counted (`"preemption"` on).
#[derive(Debug, Default)]
pub(crate) struct Preempted {
    /// Times it was evicted.
    pub(crate) evictions: u32,
    /// Running time lost to evictions (since the last checkpoint), ms.
    pub(crate) lost_ms: Ms,
    /// GPU-time wasted by evictions (lost work, cut initialisations), milli-GPU × ms.
    pub(crate) lost_gpu: u128,
    /// Times it started by evicting others.
    pub(crate) preemptions: u32,
}

/// A job of the simulation.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) def: JobDef,
    pub(crate) st: St,
    pub(crate) stamp: Stamp,
    pub(crate) place: Place,
    pub(crate) hold: Holding,
    pub(crate) run: Progress,
    pub(crate) times: Times,
    pub(crate) counts: Counts,
    pub(crate) attempt: Attempt,
    pub(crate) pause: Pause,
    pub(crate) preempted: Preempted,
    /// How it ended, and why.
    pub(crate) fin: Option<(FinalState, String)>,
}

impl Job {
    /// A job not yet submitted.
    pub(crate) fn new(def: JobDef, remaining: f64) -> Job {
        Job {
            def,
            st: St::Unsubmitted,
            stamp: Stamp::default(),
            place: Place::default(),
            hold: Holding::default(),
            run: Progress {
                remaining,
                seg_start: 0,
                slowdown: 1.0,
                span: None,
                run_ms: 0,
                lost_ms: 0,
            },
            times: Times::default(),
            counts: Counts::default(),
            attempt: Attempt::default(),
            pause: Pause::default(),
            preempted: Preempted::default(),
            fin: None,
        }
    }

    /// Its place in the queue.
    pub(crate) fn key(&self) -> Key {
        Key {
            rank: -self.def.priority,
            order: self.place.order,
        }
    }

    /// Ends a running segment at `now`: progress up to the last checkpoint is kept
    /// (all of it when `keep_all`); the rest is lost work.
    pub(crate) fn end_segment(&mut self, now: Ms, keep_all: bool, busy: &mut u64) {
        // Close as if all useful, then move the lost part to waste.
        self.hold.set_phase(now, Phase::None, busy);
        let run = &mut self.run;
        let elapsed = now.saturating_sub(run.seg_start);
        run.run_ms += elapsed;
        let saved = if keep_all {
            elapsed
        } else {
            match self.def.checkpoint {
                Some(c) => elapsed / c * c,
                None => 0,
            }
        };
        let lost = elapsed - saved;
        self.hold.lose_work(lost);
        run.lost_ms += lost;
        run.remaining = (run.remaining - saved as f64 / run.slowdown).max(0.0);
    }
}

impl Index<JobIx> for Vec<Job> {
    type Output = Job;

    fn index(&self, j: JobIx) -> &Job {
        &self[j.ix()]
    }
}

impl IndexMut<JobIx> for Vec<Job> {
    fn index_mut(&mut self, j: JobIx) -> &mut Job {
        &mut self[j.ix()]
    }
}
