//! What a simulation produces: per-job records, a summary, a timeline; and writers.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::csv;
use crate::error::SimError;
use crate::placer::EngineProfile;

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinalState {
    /// Ran to the end.
    Completed,
    /// Gave up: never became ready within `max_attempts` readiness timeouts, or lost a
    /// node under it more than `limits.max_restarts` times (a failure livelock).
    Failed,
    /// Cancelled (while waiting, or while running).
    Cancelled,
    /// Can never fit the cluster, even empty; gang-core's diagnosis says why. It never
    /// started and held nothing.
    NeverFits,
    /// Not done when the simulation ended (horizon reached, or nothing left that could
    /// move it: a deadlock, or a wait no event can end).
    Unfinished,
}

impl FinalState {
    /// `completed`, `failed`, `cancelled`, `never_fits` or `unfinished`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinalState::Completed => "completed",
            FinalState::Failed => "failed",
            FinalState::Cancelled => "cancelled",
            FinalState::NeverFits => "never_fits",
            FinalState::Unfinished => "unfinished",
        }
    }
}

/// One job's story. Times are seconds from the start of the trace; `null` when the
/// moment never came. GPU-hours count the GPUs the job's reservations held.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    /// Job id.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Priority.
    pub priority: i64,
    /// Policy label (`required(rack)`, `no-gang`, …).
    pub policy: String,
    /// Sensitivity class (`job` when the job brought its own table).
    pub sensitivity: String,
    /// Members asked for (all roles; all replicas).
    pub members: u64,
    /// GPUs asked for by the whole job (all members; a trace's `gpus` is per member).
    pub gpus_total: f64,
    /// Submission.
    pub submit: f64,
    /// First admission (placed and reserved; for `no-gang`, its first member placed).
    pub first_admitted: Option<f64>,
    /// Last admission.
    pub admitted: Option<f64>,
    /// First time every member was ready.
    pub all_ready: Option<f64>,
    /// First useful progress (the first training step: when all members are ready).
    pub first_progress: Option<f64>,
    /// End (completion, failure, cancellation; the end of the simulation for unfinished
    /// jobs).
    pub end: Option<f64>,
    /// `end - submit` for completed jobs.
    pub completion: Option<f64>,
    /// `first_admitted - submit`.
    pub queue_delay: Option<f64>,
    /// `all_ready - submit`: time until every member was ready.
    pub time_to_ready: Option<f64>,
    /// Seconds spent running (every segment, lost work included).
    pub run_time: f64,
    /// Admissions.
    pub attempts: u32,
    /// Readiness timeouts.
    pub readiness_failures: u32,
    /// Node failures that hit the job.
    pub node_failures: u32,
    /// Restarts from a checkpoint after a node failure (released and requeued).
    pub restarts: u32,
    /// Replacements of lost members inside the domain.
    pub replacements: u32,
    /// How wide the last placement was, as the slowdown table's columns are named
    /// (one of the summary's `slowdown_spans`): `node` (one node), the key of the
    /// narrowest topology level one of whose domains held it, or `cluster` (beyond the
    /// top level). `null` when it was never placed.
    pub span: Option<String>,
    /// Run time multiplier of that span.
    pub slowdown: Option<f64>,
    /// GPU-hours held.
    pub gpu_hours_held: f64,
    /// GPU-hours of progress kept (running, not lost).
    pub gpu_hours_useful: f64,
    /// GPU-hours wasted: attempts that never became ready, work lost since the last
    /// checkpoint.
    pub gpu_hours_wasted: f64,
    /// GPU-hours held idle: members ready or starting but the gang not yet running,
    /// waiting for replacements, partial no-gang allocations.
    pub gpu_hours_idle: f64,
    /// GPU-hours held before the first useful progress (all attempts).
    pub gpu_hours_before_progress: f64,
    /// Hours of running lost to node failures (since the last checkpoint).
    pub lost_work_hours: f64,
    /// How it ended.
    pub state: FinalState,
    /// Why, in words (gang-core's diagnosis for `never_fits`).
    pub reason: String,
    // ---- Preemption (issue 22): only with the configuration's `"preemption"` on. ----
    /// What preemption did to the job; absent when preemption is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<JobPreemption>,
}

/// What preemption did to one job (`"preemption": "lower-priority"`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct JobPreemption {
    /// Times it was evicted for a job of higher priority (released whole, requeued).
    pub evictions: u32,
    /// Times it started by evicting others.
    pub preemptions: u32,
    /// Hours of running lost to evictions (since the last checkpoint).
    pub lost_work_hours: f64,
    /// GPU-hours wasted by evictions: the work lost, and initialisations cut short.
    pub gpu_hours_lost: f64,
}

/// What preemption did over a run (`"preemption": "lower-priority"`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PreemptionSummary {
    /// Evictions, over all jobs.
    pub evictions: u64,
    /// Jobs evicted at least once.
    pub jobs_evicted: usize,
    /// Starts made by evicting others.
    pub preemptions: u64,
    /// GPU-hours wasted by evictions.
    pub gpu_hours_lost: f64,
}

/// Order statistics of one metric (nearest-rank percentiles).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Stats {
    /// Values counted.
    pub count: usize,
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
}

impl Stats {
    /// Nearest-rank statistics: `p`-th percentile is the `ceil(p·n)`-th smallest value.
    ///
    /// ```
    /// use gang_sim::Stats;
    /// let s = Stats::of((1..=100).map(f64::from).collect());
    /// assert_eq!((s.p50, s.p95, s.p99, s.max), (Some(50.0), Some(95.0), Some(99.0), Some(100.0)));
    /// assert_eq!(s.mean, Some(50.5));
    /// assert_eq!(Stats::of(vec![]).p50, None);
    /// ```
    pub fn of(mut v: Vec<f64>) -> Stats {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return Stats::default();
        }
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Stats {
            count: n,
            mean: Some(v.iter().sum::<f64>() / n as f64),
            p50: Some(rank(0.50)),
            p95: Some(rank(0.95)),
            p99: Some(rank(0.99)),
            max: Some(v[n - 1]),
        }
    }
}

/// Aggregates over a group of jobs (all of them, one policy, one tenant).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Group {
    /// Jobs in the group.
    pub jobs: usize,
    /// Jobs per final state.
    pub states: BTreeMap<String, usize>,
    /// Completion time from submission, completed jobs only (survivor statistics: see
    /// `completion_censored` for the honest ones).
    pub completion: Stats,
    /// Completion time from submission with every job that did not complete (failed,
    /// never fits, unfinished; cancelled jobs are left out, withdrawn by their owner)
    /// counted as censored at the end of the run: its time from submission to the end
    /// of the simulation, a lower bound of a completion it never reached. So these
    /// statistics are lower bounds, and a policy cannot look fast by failing jobs.
    pub completion_censored: Stats,
    /// Jobs counted censored in `completion_censored`.
    pub censored: usize,
    /// Queue delay (submission to first admission), admitted jobs.
    pub queue_delay: Stats,
    /// Time from submission until all members were ready.
    pub time_to_ready: Stats,
    /// Run time, completed jobs.
    pub run_time: Stats,
    /// GPU-hours held.
    pub gpu_hours_held: f64,
    /// GPU-hours useful.
    pub gpu_hours_useful: f64,
    /// GPU-hours wasted.
    pub gpu_hours_wasted: f64,
    /// GPU-hours held idle.
    pub gpu_hours_idle: f64,
    /// GPU-hours held before useful progress.
    pub gpu_hours_before_progress: f64,
    /// Share of all GPU-hours held (per tenant: its share of the cluster's use).
    pub share: f64,
    /// Goodput: useful GPU-hours ÷ GPU-hours held (`null` when nothing was held).
    pub goodput: Option<f64>,
    /// Jobs by how wide their last placement was ([`JobRecord::span`]: `node`, a level
    /// key, `cluster`); jobs never placed are not counted.
    pub spans: BTreeMap<String, usize>,
}

impl Group {
    /// The group of `jobs`; `total_held` is every job's GPU-hours held, `end` the end of
    /// the run (seconds), where jobs that did not complete are censored.
    pub(crate) fn of<'a>(
        jobs: impl Iterator<Item = &'a JobRecord>,
        total_held: f64,
        end: f64,
    ) -> Group {
        let jobs: Vec<&JobRecord> = jobs.collect();
        let mut g = Group {
            jobs: jobs.len(),
            ..Group::default()
        };
        for j in &jobs {
            *g.states.entry(j.state.as_str().to_owned()).or_default() += 1;
            g.gpu_hours_held += j.gpu_hours_held;
            g.gpu_hours_useful += j.gpu_hours_useful;
            g.gpu_hours_wasted += j.gpu_hours_wasted;
            g.gpu_hours_idle += j.gpu_hours_idle;
            g.gpu_hours_before_progress += j.gpu_hours_before_progress;
            if let Some(s) = &j.span {
                *g.spans.entry(s.clone()).or_default() += 1;
            }
        }
        g.completion = Stats::of(jobs.iter().filter_map(|j| j.completion).collect());
        let censored: Vec<f64> = jobs
            .iter()
            .filter(|j| !matches!(j.state, FinalState::Completed | FinalState::Cancelled))
            .map(|j| (end - j.submit).max(0.0))
            .collect();
        g.censored = censored.len();
        g.completion_censored = Stats::of(
            jobs.iter()
                .filter_map(|j| j.completion)
                .chain(censored)
                .collect(),
        );
        g.goodput = (g.gpu_hours_held > 0.0).then(|| g.gpu_hours_useful / g.gpu_hours_held);
        g.queue_delay = Stats::of(jobs.iter().filter_map(|j| j.queue_delay).collect());
        g.time_to_ready = Stats::of(jobs.iter().filter_map(|j| j.time_to_ready).collect());
        g.run_time = Stats::of(
            jobs.iter()
                .filter(|j| j.state == FinalState::Completed)
                .map(|j| j.run_time)
                .collect(),
        );
        g.share = if total_held > 0.0 {
            g.gpu_hours_held / total_held
        } else {
            0.0
        };
        g
    }
}

/// The summary of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Seed used.
    pub seed: u64,
    /// Every job.
    pub all: Group,
    /// Per policy label.
    pub by_policy: BTreeMap<String, Group>,
    /// Per tenant.
    pub by_tenant: BTreeMap<String, Group>,
    /// First submission to last end, seconds.
    pub makespan: f64,
    /// When the simulation stopped, seconds.
    pub end_time: f64,
    /// GPUs in the cluster (allocatable at the start).
    pub cluster_gpus: f64,
    /// Time-averaged share of GPUs held, over `utilisation_window`.
    pub mean_utilisation: f64,
    /// Time-averaged share of GPUs held by running jobs (making progress), over
    /// `utilisation_window`.
    pub mean_busy: f64,
    /// The time `mean_utilisation` and `mean_busy` are averaged over: the arrival
    /// window (first to last submission), so that the drain tail after the last
    /// arrival, where the cluster empties whatever the policy, does not count; the
    /// makespan when every job was submitted at once.
    pub utilisation_window: UtilisationWindow,
    /// Mean over the timeline samples of GPUs free that no waiting gang could use.
    pub mean_fragmented_gpus: f64,
    /// Events handled.
    pub events: u64,
    /// Scheduling passes.
    pub passes: u64,
    /// The slowdown tables in force (run time multipliers by the widest span of a
    /// placement, see `slowdown_spans`): the answer depends on them, so every summary
    /// shows them.
    pub slowdown: BTreeMap<String, Vec<f64>>,
    /// What each column of a slowdown table stands for, narrowest first: `node`, then
    /// the cluster's levels innermost first, then `cluster` (beyond the top level); a
    /// table shorter than this uses its last multiplier for the wider spans.
    pub slowdown_spans: Vec<String>,
    /// The sensitivity class of jobs that name none.
    pub default_sensitivity: String,
    /// Where the time went, when profiling was on.
    pub profile: Option<Profile>,
    /// What was accepted but probably not meant, in words: rows an importer skipped or
    /// rounded, a replay with fewer times than `jobs`, a readiness `init_time` longer
    /// than its `timeout`. Absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    // ---- Preemption (issue 22): only with the configuration's `"preemption"` on. ----
    /// Evictions and the GPU-hours they wasted; absent when preemption is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptionSummary>,
}

/// The time a run's utilisation is averaged over ([`Summary::utilisation_window`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UtilisationWindow {
    /// Which window: the arrivals, or the makespan.
    pub over: WindowOver,
    /// Its start, seconds (the first submission).
    pub start: f64,
    /// Its end, seconds: the last submission (or the end of the run, if sooner), or for
    /// the makespan the last end.
    pub end: f64,
}

/// Which window utilisation is averaged over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowOver {
    /// First to last submission: while jobs arrive, the drain tail left out.
    Arrivals,
    /// First submission to last end: when every job was submitted at once.
    Makespan,
}

impl WindowOver {
    /// `arrivals` or `makespan`.
    pub fn as_str(self) -> &'static str {
        match self {
            WindowOver::Arrivals => "arrivals",
            WindowOver::Makespan => "makespan",
        }
    }
}

/// Where a run's time went (with `"profile": true`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Profile {
    /// Gang-core calls and their cost.
    pub engine: EngineProfile,
    /// Nanoseconds of the whole run.
    pub total_ns: u64,
    /// Nanoseconds building the simulation (compiling requests, never-fit checks).
    pub setup_ns: u64,
    /// Nanoseconds of fragmentation probes (trial fills at sample times).
    pub probe_ns: u64,
}

/// One timeline sample: the state right after every event at or before `time`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds.
    pub time: f64,
    /// GPUs held by jobs.
    pub held_gpus: f64,
    /// GPUs held by running jobs.
    pub busy_gpus: f64,
    /// GPUs free on schedulable nodes.
    pub free_gpus: f64,
    /// Free GPUs no waiting gang can use: what stays free after placing every waiting
    /// gang that fits, in queue order, ignoring the queue discipline (0 when none waits).
    pub fragmented_gpus: f64,
    /// `held_gpus / gpus`.
    pub utilisation: f64,
    /// Jobs waiting in the queue (and no-gang jobs with members waiting).
    pub queued: usize,
    /// Jobs running.
    pub running: usize,
    /// Nodes down (failed, not yet repaired).
    pub failed_nodes: usize,
}

/// The result of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    /// Per job, in trace order.
    pub jobs: Vec<JobRecord>,
    /// Aggregates.
    pub summary: Summary,
    /// Samples every `sample_interval` seconds.
    pub timeline: Vec<Sample>,
}

/// Column names of [`SimResult::jobs_csv`].
pub const JOB_COLUMNS: [&str; 32] = [
    "id",
    "tenant",
    "priority",
    "policy",
    "sensitivity",
    "members",
    "gpus_total",
    "submit",
    "first_admitted",
    "admitted",
    "all_ready",
    "first_progress",
    "end",
    "completion",
    "queue_delay",
    "time_to_ready",
    "run_time",
    "attempts",
    "readiness_failures",
    "node_failures",
    "restarts",
    "replacements",
    "span",
    "slowdown",
    "gpu_hours_held",
    "gpu_hours_useful",
    "gpu_hours_wasted",
    "gpu_hours_idle",
    "gpu_hours_before_progress",
    "lost_work_hours",
    "state",
    "reason",
];

/// Column names of [`SimResult::timeline_csv`]: the fields of [`Sample`] in order.
pub const TIMELINE_COLUMNS: [&str; 9] = [
    "time",
    "held_gpus",
    "busy_gpus",
    "free_gpus",
    "fragmented_gpus",
    "utilisation",
    "queued",
    "running",
    "failed_nodes",
];

fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl SimResult {
    /// Jobs as JSON Lines, one object per job, in trace order.
    pub fn jobs_jsonl(&self) -> String {
        let mut s = String::new();
        for j in &self.jobs {
            s.push_str(&serde_json::to_string(j).unwrap_or_default());
            s.push('\n');
        }
        s
    }

    /// Jobs as CSV with a header (the fields of [`JobRecord`] in order; empty cells for
    /// `null`).
    pub fn jobs_csv(&self) -> String {
        let cols = &JOB_COLUMNS;
        let mut s = csv::line(cols.iter());
        for j in &self.jobs {
            let v = serde_json::to_value(j).unwrap_or_default();
            s.push_str(&csv::line(cols.iter().map(|c| cell(&v[*c]))));
        }
        s
    }

    /// The summary as pretty JSON.
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).unwrap_or_default()
    }

    /// The timeline as CSV.
    pub fn timeline_csv(&self) -> String {
        let cols = TIMELINE_COLUMNS;
        let mut s = csv::line(cols);
        for t in &self.timeline {
            let v = serde_json::to_value(t).unwrap_or_default();
            s.push_str(&csv::line(cols.iter().map(|c| cell(&v[*c]))));
        }
        s
    }

    /// Everything as one JSON document: `{"summary", "jobs", "timeline"}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Writes `jobs.jsonl`, `jobs.csv`, `summary.json` and `timeline.csv` into `dir`
    /// (created if missing).
    ///
    /// # Errors
    /// [`SimError::Io`].
    pub fn write_to(&self, dir: &str) -> Result<(), SimError> {
        std::fs::create_dir_all(dir).map_err(|e| SimError::io(dir, e))?;
        let files = [
            ("jobs.jsonl", self.jobs_jsonl()),
            ("jobs.csv", self.jobs_csv()),
            ("summary.json", self.summary_json()),
            ("timeline.csv", self.timeline_csv()),
        ];
        for (name, text) in files {
            let path = format!("{dir}/{name}");
            std::fs::write(&path, text).map_err(|e| SimError::io(&path, e))?;
        }
        Ok(())
    }

    /// The record of job `id`.
    pub fn job(&self, id: &str) -> Option<&JobRecord> {
        self.jobs.iter().find(|j| j.id == id)
    }
}
