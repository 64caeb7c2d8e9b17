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
/// time to ready and run time (seconds), makespan (seconds), utilisation and the window
/// it is averaged over, fragmentation, the cluster's GPUs, GPU-hours (held, useful, wasted, held before progress) and goodput,
/// and what preemption did (evictions, jobs evicted, preemptions, GPU-hours lost: the
/// whole run's, null when preemption is off and in a tenant's row).
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
    "utilisation_window",
    "mean_fragmented_gpus",
    "cluster_gpus",
    "gpu_hours_held",
    "gpu_hours_useful",
    "gpu_hours_wasted",
    "gpu_hours_before_progress",
    "goodput",
    "evictions",
    "jobs_evicted",
    "preemptions",
    "gpu_hours_lost",
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
    ("mean_utilisation", "time-averaged share of GPUs held, over the utilisation window"),
    ("mean_busy", "time-averaged share of GPUs held by running jobs (making progress), over the utilisation window"),
    ("utilisation_window", "what utilisation is averaged over: arrivals (first to last submission, so the drain tail after the last arrival, where the cluster empties whatever the policy, is left out) or makespan (when every job was submitted at once)"),
    ("mean_fragmented_gpus", "mean GPUs free that no waiting gang could use"),
    ("cluster_gpus", "GPUs in the cluster, free at the start"),
    ("gpu_hours_held", "GPU-hours held by jobs' reservations"),
    ("gpu_hours_useful", "GPU-hours of progress that counted (kept to the end or a checkpoint)"),
    ("gpu_hours_wasted", "GPU-hours of progress lost to restarts and failures"),
    ("gpu_hours_before_progress", "GPU-hours held before a job made progress (waiting for members, starting up)"),
    ("goodput", "useful GPU-hours ÷ GPU-hours held"),
    ("evictions", "jobs evicted by preemption (whole, requeued), counted per eviction; empty when preemption is off"),
    ("jobs_evicted", "jobs evicted at least once"),
    ("preemptions", "starts made by evicting lower-priority jobs"),
    ("gpu_hours_lost", "GPU-hours wasted by evictions: work since the last checkpoint, and initialisations cut short"),
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
    for k in ["makespan", "mean_utilisation", "mean_busy"] {
        row.insert(k.into(), get(summary, &[k]).clone());
    }
    let window = get(summary, &["utilisation_window", "over"]).clone();
    row.insert("utilisation_window".into(), window);
    for k in ["mean_fragmented_gpus", "cluster_gpus"] {
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
    // Preemption is counted over the whole run (not per tenant): a tenant's row leaves
    // it empty rather than show the run's as the tenant's.
    for k in ["evictions", "jobs_evicted", "preemptions", "gpu_hours_lost"] {
        let v = match tenant {
            None => get(summary, &["preemption", k]).clone(),
            Some(_) => Value::Null,
        };
        row.insert(k.into(), v);
    }
    Ok(row)
}

/// Runs of a comparison that gave identical results, and why ([`identical_runs`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IdenticalRuns {
    /// Their names, in the order given.
    pub names: Vec<String>,
    /// Why, in words, computed from what the runs placed.
    pub reason: String,
}

/// Which of `runs` (name, summary JSON) gave identical results — the same summary row
/// (every count, statistic and GPU-hour) and the same number of jobs at each placement
/// span — and why, in words: how wide their placements were, and so which rules could
/// not have changed a decision. Two policies drawn as one line (unconstrained and
/// preferred often are: gang-core packs an unconstrained gang into as few domains as it
/// can, which is what a preference asks) get a sentence instead of a hidden line.
///
/// ```
/// use gang_sim::identical_runs;
/// let doc = |p: &str| format!(r#"{{"cluster": {{"generate": {{"racks": 2}}}}, "config": {{"policy": "{p}"}},
///   "trace": {{"inline": [{{"id": "a", "submit": 0, "duration": 600, "members": 4, "gpus": 8}},
///                         {{"id": "b", "submit": 9, "duration": 600, "members": 1, "gpus": 8}}]}}}}"#);
/// let summary = |p: &str| -> serde_json::Value {
///     serde_json::from_str::<serde_json::Value>(&gang_sim::run_json(&doc(p)).unwrap()).unwrap()["summary"].clone()
/// };
/// let runs: Vec<(String, serde_json::Value)> = ["required(rack)", "preferred(rack)", "unconstrained"]
///     .iter().map(|p| (p.to_string(), summary(p))).collect();
/// let same = identical_runs(&runs)?;
/// assert_eq!(same[0].names, ["required(rack)", "preferred(rack)", "unconstrained"]);
/// assert!(same[0].reason.contains("1 on one node, 1 within one rack"), "{}", same[0].reason);
/// assert!(same[0].reason.contains("no job needed more than one rack"), "{}", same[0].reason);
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// None for summaries gang-sim wrote; [`SimError::Config`] as [`summary_row`].
pub fn identical_runs(runs: &[(String, Value)]) -> Result<Vec<IdenticalRuns>, SimError> {
    let mut groups: Vec<(Value, Vec<String>)> = Vec::new();
    for (name, summary) in runs {
        let mut row = summary_row(name, summary, None, CompletionBasis::Censored)?;
        row.remove("variant");
        let key = serde_json::json!([row, get(summary, &["all", "spans"])]);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(name.clone()),
            None => groups.push((key, vec![name.clone()])),
        }
    }
    let mut out = Vec::new();
    for (_, names) in groups.into_iter().filter(|(_, n)| n.len() > 1) {
        let reason = runs
            .iter()
            .find(|(n, _)| *n == names[0])
            .map_or_else(String::new, |(_, s)| why_identical(s));
        out.push(IdenticalRuns { names, reason });
    }
    Ok(out)
}

/// Why runs with this summary's spans placed alike: how many jobs at each span, and
/// the narrowest level every placement fitted in.
fn why_identical(summary: &Value) -> String {
    let spans = get(summary, &["all", "spans"]);
    let order: Vec<&str> = get(summary, &["slowdown_spans"])
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let short = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let mut parts = Vec::new();
    let mut widest = None;
    for s in &order {
        let n = spans.get(*s).and_then(Value::as_u64).unwrap_or(0);
        if n == 0 {
            continue;
        }
        widest = Some(*s);
        parts.push(match *s {
            "node" => format!("{n} on one node"),
            "cluster" => format!("{n} across top-level domains"),
            level => format!("{n} within one {} ({level})", short(level)),
        });
    }
    let Some(widest) = widest else {
        return "no job was placed under any of them, so no rule was ever applied".to_owned();
    };
    let mut why = format!(
        "the same summary and, under each, the same placement spans: {}",
        parts.join(", ")
    );
    match widest {
        "cluster" => why.push_str(
            "; jobs that did not fit one top-level domain spread alike, and every other \
             decision matched",
        ),
        "node" => why.push_str(
            "; no job needed more than one node, so no topology rule could change a decision",
        ),
        level => {
            let l = short(level);
            why.push_str(&format!(
                "; no job needed more than one {l}, so requiring or preferring one {l} \
                 (or anything wider) changed no decision — gang-core packs an unconstrained \
                 gang into as few domains as it can, as a preference asks"
            ));
        }
    }
    why
}
