//! The discrete-event simulation.
//!
//! See the crate documentation ("Event semantics") for the normative description; the
//! comments here point at it. The rooms, bottom to top (a file uses only the ones
//! above it in this list, and [`Simulation`] here):
//!
//! - `ids`: time in milliseconds; `JobIx`, `ReqIx`, a job's `Stamp`.
//! - `event`: the typed events and the agenda that orders them.
//! - `accounting`: what a job holds and how its GPU-time splits; the cluster's
//!   integrals.
//! - `queue`: jobs waiting in queue order (grouped by request for backfill), no-gang
//!   members waiting.
//! - `job`: a job, its definition and its state, grouped.
//! - `requests`: the compiled requests and what is known about each.
//! - this file: the [`Simulation`], its run loop and the dispatch of events.
//! - `admission` (the queue pass, admitting), `backfill` (the backfill rule),
//!   `readiness` (ready, running, readiness timeouts), `failures` (node failures,
//!   replacement): the event handlers and the pass.
//! - `preemption`: the head of the queue evicting lower-priority jobs.
//! - `timeline` (samples), `invariants` (the checks), `result` (the end of the run
//!   and its records), `setup` (the trace compiled against the cluster).

use std::collections::BTreeSet;
use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::config::SimConfig;
use crate::error::SimError;
use crate::output::{FinalState, SimResult};
use crate::placer::{Placer, ResId};

mod accounting;
mod admission;
mod backfill;
mod event;
mod failures;
mod ids;
mod invariants;
mod job;
mod preemption;
mod queue;
mod readiness;
mod requests;
mod result;
mod setup;
mod timeline;

use accounting::{Integrals, Phase};
use event::{Agenda, Event, Scheduled};
use ids::{JobIx, Ms};
use job::{Job, St};
use queue::Queue;
use requests::Requests;
use timeline::Timeline;

/// A simulation, ready to run: the cluster, the trace and the configuration, checked
/// and compiled against each other.
///
/// ```
/// use gang_sim::{Cluster, JobSpec, NodeSpec, SimConfig, Simulation, Trace};
/// let node = |n: &str, rack: &str| NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 4);
/// let cluster = Cluster::from_nodes(&["rack"], vec![node("a1", "a"), node("a2", "a"), node("b1", "b")])?;
/// let trace = Trace::new(vec![
///     JobSpec::new("big", 0.0, 3600.0, 8, 1),   // 8 GPUs: only rack a has them
///     JobSpec::new("small", 0.0, 600.0, 4, 1),  // fits on b1 at the same time
/// ]);
/// let config = SimConfig::from_json(r#"{"policy": "required(rack)", "readiness": {"init_time": 0}}"#)?;
/// let result = Simulation::new(cluster, trace, config)?.run()?;
/// let small = result.job("small").unwrap();
/// assert_eq!((small.queue_delay, small.span.as_deref()), (Some(0.0), Some("node")));
/// assert_eq!(result.job("big").unwrap().completion, Some(3600.0 * 1.5)); // two nodes: medium, rack
/// assert_eq!(result.summary.all.states["completed"], 2);
/// # Ok::<(), gang_sim::SimError>(())
/// ```
pub struct Simulation {
    cfg: SimConfig,
    placer: Placer,
    requests: Requests,
    jobs: Vec<Job>,
    names: Interned,
    /// The job holding each reservation.
    owner: FxHashMap<ResId, JobIx>,
    queue: Queue,
    /// Jobs waiting for replacements.
    paused: BTreeSet<JobIx>,
    agenda: Agenda,
    now: Ms,
    changes: Changes,
    usage: Integrals,
    timeline: Timeline,
    /// Check every invariant after every event and pass.
    check: bool,
    counts: RunCounts,
    timing: Timing,
    /// What the run's summary warns about (the configuration's, the importer's, …).
    warnings: Vec<String>,
}

/// Texts and tables jobs share, each kept once; jobs hold their indices.
#[derive(Default)]
struct Interned {
    /// Slowdown tables.
    tables: Vec<Vec<f64>>,
    /// Policy labels.
    labels: Vec<String>,
    tenants: Vec<String>,
}

/// What has changed, counted.
#[derive(Default)]
struct Changes {
    /// How many times capacity was given back (a release or a repair): a request
    /// found not to fit cannot fit before the count moves.
    freed: u64,
    /// Moves at every change of the inventory or of what jobs hold (the timeline's
    /// fragmentation and the backfill answers are kept until it moves).
    version: u64,
    /// Something changed since the last pass: a pass is due.
    dirty: bool,
}

/// How much the run did.
#[derive(Default)]
struct RunCounts {
    events: u64,
    passes: u64,
    /// Jobs in a final state.
    done: usize,
}

/// Where the time went (profiling).
#[derive(Default)]
struct Timing {
    setup_ns: u64,
    probe_ns: u64,
    started: Option<Instant>,
}

impl Simulation {
    /// A simulation of no jobs yet, on `placer` (see `setup` for the way in).
    fn empty(placer: Placer, cfg: SimConfig, jobs: usize) -> Simulation {
        Simulation {
            placer,
            requests: Requests::default(),
            jobs: Vec::with_capacity(jobs),
            names: Interned::default(),
            owner: FxHashMap::default(),
            queue: Queue::default(),
            paused: BTreeSet::new(),
            agenda: Agenda::default(),
            now: 0,
            changes: Changes::default(),
            usage: Integrals::default(),
            timeline: Timeline::new(&cfg),
            check: cfg.check_invariants.unwrap_or(cfg!(debug_assertions)),
            counts: RunCounts::default(),
            timing: Timing::default(),
            warnings: cfg.warnings(),
            cfg,
        }
    }

    /// Adds warnings to the run's summary (`summary.warnings`), after the
    /// configuration's own ([`SimConfig::warnings`]): what was read with a loss, say
    /// (rows an importer skipped or rounded, see [`crate::RunDocument::trace_with_warnings`]).
    pub fn warn(&mut self, warnings: impl IntoIterator<Item = String>) {
        self.warnings.extend(warnings);
    }

    /// Runs the simulation to its end.
    ///
    /// # Errors
    /// [`SimError::Config`] naming `limits.max_samples` or `limits.max_events` when the
    /// run would pass it (see [`crate::Limits`]); [`SimError::Internal`]: an invariant
    /// violated (a bug; with invariant checks on, the first violation is reported with
    /// the time and the job).
    pub fn run(self) -> Result<SimResult, SimError> {
        self.run_all().map(|(r, _)| r)
    }

    /// Runs the simulation to its end, and returns with the result a digest of every
    /// placement it held (each reservation's roles, nodes and member counts, in the
    /// order they were made or changed): what tests pin to show that a change left the
    /// decisions as they were. Not part of the stable API.
    ///
    /// # Errors
    /// As [`Simulation::run`].
    #[doc(hidden)]
    pub fn run_with_placement_digest(mut self) -> Result<(SimResult, u64), SimError> {
        self.placer.digest = Some(crate::placer::FNV_START);
        let (r, d) = self.run_all()?;
        Ok((r, d.unwrap_or_default()))
    }

    fn run_all(mut self) -> Result<(SimResult, Option<u64>), SimError> {
        self.timing.started = Some(Instant::now());
        self.usage.window_end = self.jobs.iter().map(|j| j.def.submit).max().unwrap_or(0);
        let horizon = self.cfg.horizon.map(ids::ms);
        let mut end = 0;
        loop {
            let Some(next) = self.agenda.peek() else {
                if let Some(h) = horizon {
                    end = end.max(h);
                }
                break;
            };
            // Stale timers (of a state the job has left) are invisible: they do not
            // even move the clock.
            if self.is_stale(next.event) {
                self.agenda.pop();
                continue;
            }
            // Only the failure process is left: nothing else can happen (time still runs
            // to the horizon, if there is one). `live` also counts timers that went
            // stale while still in the agenda, so when a failure is next, look for a
            // timer that is still live.
            if self.agenda.live() == 0 || (next.event.is_failure() && !self.live_timer_left()) {
                if let Some(h) = horizon {
                    end = end.max(h);
                }
                break;
            }
            if let Some(h) = horizon {
                if next.at > h {
                    end = h;
                    break;
                }
            }
            if next.at < self.now {
                return Err(SimError::Internal(format!(
                    "time went backwards: {} after {}",
                    next.at, self.now
                )));
            }
            self.samples_before(next.at)?;
            self.usage.advance(next.at, self.placer.held_gpu());
            self.now = next.at;
            while let Some(ev) = self.agenda.peek() {
                if ev.at != self.now {
                    break;
                }
                self.agenda.pop();
                if self.is_stale(ev.event) {
                    continue;
                }
                self.counts.events += 1;
                if self.counts.events > self.cfg.limits.max_events {
                    return Err(SimError::config(
                        "limits.max_events",
                        format!(
                            "more than {} events by {} s (raise limits.max_events to allow it)",
                            self.cfg.limits.max_events,
                            ids::secs(self.now)
                        ),
                    ));
                }
                self.handle(ev.event)?;
                if self.check {
                    self.validate().map_err(|m| {
                        SimError::Internal(format!("after event {ev:?} at {}: {m}", self.now))
                    })?;
                }
            }
            if self.changes.dirty {
                self.pass()?;
                if self.check {
                    self.validate().map_err(|m| {
                        SimError::Internal(format!("after the pass at {}: {m}", self.now))
                    })?;
                }
            }
            end = self.now;
            if self.counts.done == self.jobs.len() {
                break;
            }
        }
        let end = end.max(self.now);
        self.samples_before(end + 1)?;
        self.usage.advance(end, self.placer.held_gpu());
        self.now = end;
        self.finish_all()?;
        let digest = self.placer.digest;
        Ok((self.result(end)?, digest))
    }

    /// Whether the agenda holds an event other than a failure that is not stale:
    /// something that can still happen besides the failure process.
    fn live_timer_left(&self) -> bool {
        self.agenda
            .iter()
            .any(|s: &Scheduled| !s.event.is_failure() && !self.is_stale(s.event))
    }

    /// Whether an event is a timer of a state its job has since left.
    fn is_stale(&self, ev: Event) -> bool {
        ev.timer()
            .is_some_and(|(j, stamp)| self.jobs.get(j.ix()).is_none_or(|job| job.stamp != stamp))
    }

    /// Schedules `event` at `at`.
    fn push(&mut self, at: Ms, event: Event) {
        self.agenda.push(at, event);
    }

    /// Capacity was given back: what did not fit may fit now, and a pass is due.
    fn capacity_freed(&mut self) {
        self.changes.freed += 1;
        self.changes.version += 1;
        self.changes.dirty = true;
    }

    fn handle(&mut self, ev: Event) -> Result<(), SimError> {
        // Timers of states the job has left never get here (`is_stale`).
        let st = |sim: &Simulation, j: JobIx| sim.jobs.get(j.ix()).map(|job| job.st);
        match ev {
            Event::Finish(j, _) if st(self, j) == Some(St::Running) => {
                self.end_segment(j, true);
                self.release_all(j)?;
                self.jobs[j].run.remaining = 0.0;
                self.finish(j, FinalState::Completed, "ran to the end".into());
            }
            Event::Cancel(j) => self.on_cancel(j)?,
            Event::Repair(n) => {
                let back = self.placer.repair_node(n)?;
                if back {
                    self.capacity_freed();
                }
            }
            Event::FailScheduled(n) => self.fail_node(n)?,
            Event::Fail(k) => self.on_fail(k)?,
            Event::Ready(j, _) => match st(self, j) {
                Some(St::Starting) => self.on_ready(j),
                Some(St::Paused { waiting: false }) => self.on_resume(j),
                _ => {}
            },
            Event::Timeout(j, _) => match st(self, j) {
                Some(St::Starting) => self.on_readiness_timeout(j)?,
                Some(St::Paused { .. }) => self.on_replace_timeout(j)?,
                _ => {}
            },
            Event::Requeue(j, _) if st(self, j) == Some(St::Backoff) => self.enqueue(j, true),
            Event::Relax(j, _) if st(self, j) == Some(St::Queued) => self.on_relax(j),
            Event::Arrive(j) if st(self, j) == Some(St::Unsubmitted) => {
                if let Some(why) = self.jobs[j].def.never_fits.clone() {
                    self.finish(j, FinalState::NeverFits, why);
                } else {
                    self.enqueue(j, false);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Closes the job's open holding interval at `now`.
    fn close(&mut self, j: JobIx) {
        let now = self.now;
        self.jobs[j].hold.close(now);
    }

    /// Closes the job's open interval and counts what follows as phase `p`.
    fn set_phase(&mut self, j: JobIx, p: Phase) {
        let now = self.now;
        self.jobs[j].hold.set_phase(now, p, &mut self.usage.busy);
    }

    /// Ends the job's running segment now (see [`Job::end_segment`]).
    fn end_segment(&mut self, j: JobIx, keep_all: bool) {
        let now = self.now;
        self.jobs[j].end_segment(now, keep_all, &mut self.usage.busy);
    }

    /// Re-reads what the job's reservations hold.
    fn regather(&mut self, j: JobIx) {
        let g: u64 = self.jobs[j]
            .hold
            .res
            .iter()
            .map(|&id| self.placer.gpu_of(id))
            .sum();
        self.jobs[j].hold.gpu = g;
    }

    /// Releases everything the job holds (after its interval was closed).
    fn release_all(&mut self, j: JobIx) -> Result<(), SimError> {
        let res = std::mem::take(&mut self.jobs[j].hold.res);
        for id in res {
            self.owner.remove(&id);
            self.placer.release(id)?;
        }
        let hold = &mut self.jobs[j].hold;
        if hold.phase == Phase::Running {
            self.usage.busy -= hold.gpu;
        }
        hold.gpu = 0;
        hold.phase = Phase::None;
        self.capacity_freed();
        self.paused.remove(&j);
        self.remove_pods(j);
        Ok(())
    }

    /// The job is done: in its final state, for `reason`.
    fn finish(&mut self, j: JobIx, state: FinalState, reason: String) {
        let now = self.now;
        self.counts.done += 1;
        let job = &mut self.jobs[j];
        job.st = St::Done;
        job.times.end = Some(now);
        job.fin = Some((state, reason));
        job.stamp.bump();
    }

    fn on_cancel(&mut self, j: JobIx) -> Result<(), SimError> {
        match self.jobs[j].st {
            St::Done => {}
            St::Unsubmitted | St::Backoff => {
                self.finish(
                    j,
                    FinalState::Cancelled,
                    "cancelled while waiting; it held nothing".into(),
                );
            }
            St::Queued => {
                let key = self.jobs[j].key();
                self.queue.jobs.remove(&key);
                self.remove_pods(j);
                self.changes.dirty = true;
                self.finish(
                    j,
                    FinalState::Cancelled,
                    "cancelled while waiting; it held nothing".into(),
                );
            }
            St::Starting | St::Paused { .. } => {
                self.set_phase(j, Phase::None);
                // An attempt cut short: its initialisation was idle holding, not waste.
                self.jobs[j].hold.init_was_idle();
                let nogang_partial =
                    self.jobs[j].def.kind.is_nogang() && self.jobs[j].st == St::Starting;
                self.release_all(j)?;
                let why = if nogang_partial {
                    "cancelled while its members were being placed; released everything"
                } else {
                    "cancelled before it ran; released everything"
                };
                self.finish(j, FinalState::Cancelled, why.into());
            }
            St::Running => {
                self.end_segment(j, true);
                self.release_all(j)?;
                self.finish(
                    j,
                    FinalState::Cancelled,
                    "cancelled while running; released everything".into(),
                );
            }
        }
        Ok(())
    }
}
