//! A run's summary as one flat row ([`summary_row`], columns [`SUMMARY_COLUMNS`]):
//! what a comparison or a sweep shows per run, the same on every face.

use serde_json::{Map, Value};

use crate::error::SimError;

/// Which completion statistics a summary row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompletionBasis {
    /// Every job that did not complete (except cancelled ones) counted as censored at
    /// the end of the run ([`crate::Group::completion_censored`]): lower bounds that do
    /// not reward failing jobs. The default.
    #[default]
    Censored,
    /// Completed jobs only ([`crate::Group::completion`]): survivor statistics, which
    /// make a policy that fails its slow jobs look fast.
    Completed,
}

impl CompletionBasis {
    /// `censored` or `completed`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompletionBasis::Censored => "censored",
            CompletionBasis::Completed => "completed",
        }
    }
}

impl std::str::FromStr for CompletionBasis {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        match s {
            "censored" => Ok(CompletionBasis::Censored),
            "completed" => Ok(CompletionBasis::Completed),
            other => Err(SimError::config(
                "completion",
                format!("{other:?} is not a completion basis: censored or completed"),
            )),
        }
    }
}

/// The columns of a summary row, in order: the variant, jobs per final state, the
/// completion basis and completion statistics (seconds, on that basis), queue delay,
/// time to ready and run time (seconds), makespan (seconds), utilisation, fragmentation,
/// GPUs, GPU-hours (held, useful, wasted, held before progress) and goodput.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "variant",
    "jobs",
    "completed",
    "failed",
    "cancelled",
    "never_fits",
    "unfinished",
    "completion_basis",
    "completion_mean",
    "completion_p50",
    "completion_p95",
    "completion_p99",
    "queue_delay_mean",
    "queue_delay_p95",
    "time_to_ready_mean",
    "run_time_mean",
    "makespan",
    "mean_utilisation",
    "mean_busy",
    "mean_fragmented_gpus",
    "gpus",
    "gpu_hours_held",
    "gpu_hours_useful",
    "gpu_hours_wasted",
    "gpu_hours_before_progress",
    "goodput",
];

/// What a summary row's columns mean, one line each, in [`SUMMARY_COLUMNS`] order
/// (the glossary of reports).
pub const SUMMARY_GLOSSARY: &[(&str, &str)] = &[
    ("variant", "the run's name"),
    ("jobs", "jobs in the trace"),
    ("completed", "jobs that ran to the end"),
    ("failed", "jobs that gave up (never ready within the readiness attempts)"),
    ("cancelled", "jobs cancelled by their owner"),
    ("never_fits", "jobs that can never fit the cluster under their policy, even empty"),
    ("unfinished", "jobs not done when the simulation ended"),
    ("completion_basis", "censored: jobs that did not complete count with their time until the end of the run (lower bounds); completed: completed jobs only (survivor statistics)"),
    ("completion_mean", "mean completion time, submission to end, seconds"),
    ("completion_p50", "median completion time, seconds"),
    ("completion_p95", "95th percentile of completion time, seconds"),
    ("completion_p99", "99th percentile of completion time, seconds"),
    ("queue_delay_mean", "mean wait from submission to first admission, seconds"),
    ("queue_delay_p95", "95th percentile of that wait, seconds"),
    ("time_to_ready_mean", "mean time from submission until every member was ready, seconds"),
    ("run_time_mean", "mean run time of completed jobs (slowed by their placement), seconds"),
    ("makespan", "first submission to last end, seconds"),
    ("mean_utilisation", "time-averaged share of GPUs held, over the makespan"),
    ("mean_busy", "time-averaged share of GPUs held by running jobs (making progress)"),
    ("mean_fragmented_gpus", "mean GPUs free that no waiting gang could use"),
    ("gpus", "GPUs in the cluster, free at the start"),
    ("gpu_hours_held", "GPU-hours held by jobs' reservations"),
    ("gpu_hours_useful", "GPU-hours of progress that counted (kept to the end or a checkpoint)"),
    ("gpu_hours_wasted", "GPU-hours of progress lost to restarts and failures"),
    ("gpu_hours_before_progress", "GPU-hours held before a job made progress (waiting for members, starting up)"),
    ("goodput", "useful GPU-hours ÷ GPU-hours held"),
];

fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| v.get(k).unwrap_or(&Value::Null))
}

/// A run's summary (the JSON of [`crate::Summary`]) as one row named `name`: over all
/// jobs, or one `tenant`'s, with completion statistics on `basis`.
///
/// ```
/// use gang_sim::{summary_row, CompletionBasis, SUMMARY_COLUMNS};
/// let doc = r#"{"cluster": {"generate": {"racks": 1}}, "config": {"readiness": {"timeout": 60, "max_attempts": 1, "init_failure": 1.0}},
///   "trace": {"inline": [{"id": "a", "submit": 0, "duration": 600, "members": 1, "gpus": 1}]}}"#;
/// let out: serde_json::Value = serde_json::from_str(&gang_sim::run_json(doc)?).unwrap();
/// let row = summary_row("x", &out["summary"], None, CompletionBasis::Censored)?;
/// assert_eq!(row.keys().map(String::as_str).collect::<Vec<_>>(), SUMMARY_COLUMNS);
/// assert_eq!((row["failed"].as_u64(), row["completion_basis"].as_str()), (Some(1), Some("censored")));
/// assert!(row["completion_p50"].is_number());       // censored at the end of the run
/// let row = summary_row("x", &out["summary"], None, CompletionBasis::Completed)?;
/// assert!(row["completion_p50"].is_null());         // no survivors
/// assert!(summary_row("x", &out["summary"], Some("nobody"), CompletionBasis::Censored).is_err());
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Config`] (field `tenant`) for a tenant the summary does not have.
pub fn summary_row(
    name: &str,
    summary: &Value,
    tenant: Option<&str>,
    basis: CompletionBasis,
) -> Result<Map<String, Value>, SimError> {
    let g = match tenant {
        None => get(summary, &["all"]),
        Some(t) => {
            let g = get(summary, &["by_tenant", t]);
            if g.is_null() {
                let known: Vec<&String> = summary
                    .get("by_tenant")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().collect())
                    .unwrap_or_default();
                return Err(SimError::config(
                    "tenant",
                    format!("no tenant {t:?} in {name:?} (tenants: {known:?})"),
                ));
            }
            g
        }
    };
    let mut row = Map::new();
    row.insert("variant".into(), name.into());
    row.insert("jobs".into(), get(g, &["jobs"]).clone());
    for st in [
        "completed",
        "failed",
        "cancelled",
        "never_fits",
        "unfinished",
    ] {
        let n = get(g, &["states", st]).as_u64().unwrap_or(0);
        row.insert(st.into(), n.into());
    }
    row.insert("completion_basis".into(), basis.as_str().into());
    let completion = match basis {
        CompletionBasis::Censored => "completion_censored",
        CompletionBasis::Completed => "completion",
    };
    for (metric, key, stats) in [
        ("completion", completion, &["mean", "p50", "p95", "p99"][..]),
        ("queue_delay", "queue_delay", &["mean", "p95"][..]),
        ("time_to_ready", "time_to_ready", &["mean"][..]),
        ("run_time", "run_time", &["mean"][..]),
    ] {
        for s in stats {
            row.insert(format!("{metric}_{s}"), get(g, &[key, s]).clone());
        }
    }
    for k in [
        "makespan",
        "mean_utilisation",
        "mean_busy",
        "mean_fragmented_gpus",
        "gpus",
    ] {
        row.insert(k.into(), get(summary, &[k]).clone());
    }
    for k in [
        "gpu_hours_held",
        "gpu_hours_useful",
        "gpu_hours_wasted",
        "gpu_hours_before_progress",
        "goodput",
    ] {
        row.insert(k.into(), get(g, &[k]).clone());
    }
    Ok(row)
}
