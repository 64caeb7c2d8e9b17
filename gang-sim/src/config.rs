//! The simulation's configuration: placement policy, queue, readiness, failures,
//! recovery, slowdown tables, seed. One JSON document (see [`SimConfig::from_json`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{without_position, SimError};

/// How a job's gang is placed.
///
/// In JSON an object with a `kind` (`{"kind": "required", "level": "rack"}`), or a short
/// string: `"unconstrained"`, `"no-gang"`, `"required(rack)"`, `"preferred(rack)"`,
/// `"timed(rack, 600)"`, `"spread(4, rack)"`. Levels are topology label keys; the last
/// path segment is enough when it names exactly one level (`rack` for
/// `topology.example.com/rack`).
///
/// ```
/// use gang_sim::Policy;
/// let p: Policy = serde_json::from_str(r#"{"kind": "timed", "level": "rack", "after": 600}"#).unwrap();
/// assert_eq!(p, Policy::Timed { level: "rack".into(), after: 600.0 });
/// assert_eq!(p.to_string(), "timed(rack, 600)");
/// let q: Policy = serde_json::from_str(r#""required(rack)""#).unwrap();
/// assert_eq!(q, Policy::Required { level: "rack".into() });
/// assert!(serde_json::from_str::<Policy>(r#""sideways""#).is_err());
/// assert!(serde_json::from_str::<Policy>(r#"{"kind": "required"}"#).is_err()); // no level
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub enum Policy {
    /// Every member in one domain of `level`; otherwise the job waits.
    Required {
        /// Level key.
        level: String,
    },
    /// One domain of `level` if any fits now, else walk up (gang-core `preferred`).
    Preferred {
        /// Level key.
        level: String,
    },
    /// Anywhere, still all or nothing (packed onto few domains by gang-core).
    #[default]
    Unconstrained,
    /// Required at `level` for up to `after` seconds of waiting, then required at the
    /// parent level for another `after`, and so on; unconstrained past the top level
    /// (Slurm's `--switches=N@T`, generalised to any depth).
    Timed {
        /// The first level.
        level: String,
        /// Seconds of waiting per level.
        after: f64,
    },
    /// `replicas` copies of the job's roles, each placed whole, in distinct domains of
    /// `level` (gang-core `spread`); the job needs all of them.
    Spread {
        /// Number of replicas.
        replicas: u32,
        /// The level whose domains must be distinct.
        level: String,
    },
    /// The baseline without gang scheduling: members placed one at a time as they fit,
    /// anywhere, holding what they got (shows partial allocation and deadlock).
    NoGang,
}

impl fmt::Display for Policy {
    /// The label used in summaries: `required(rack)`, `timed(rack, 600)`, ….
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Required { level } => write!(f, "required({level})"),
            Policy::Preferred { level } => write!(f, "preferred({level})"),
            Policy::Unconstrained => write!(f, "unconstrained"),
            Policy::Timed { level, after } => write!(f, "timed({level}, {after})"),
            Policy::Spread { replicas, level } => write!(f, "spread({replicas}, {level})"),
            Policy::NoGang => write!(f, "no-gang"),
        }
    }
}

fn parse_policy_text(s: &str) -> Result<Policy, String> {
    let s = s.trim();
    match s {
        "unconstrained" => return Ok(Policy::Unconstrained),
        "no-gang" => return Ok(Policy::NoGang),
        _ => {}
    }
    let bad = || {
        format!(
            "unknown policy {s:?}: expected unconstrained, no-gang, required(LEVEL), \
             preferred(LEVEL), timed(LEVEL, SECONDS) or spread(REPLICAS, LEVEL)"
        )
    };
    let (name, rest) = s.split_once('(').ok_or_else(bad)?;
    let args = rest.strip_suffix(')').ok_or_else(bad)?;
    let args: Vec<&str> = args.split(',').map(str::trim).collect();
    match (name.trim(), args.as_slice()) {
        ("required", [l]) if !l.is_empty() => Ok(Policy::Required {
            level: (*l).to_owned(),
        }),
        ("preferred", [l]) if !l.is_empty() => Ok(Policy::Preferred {
            level: (*l).to_owned(),
        }),
        ("timed", [l, t]) => Ok(Policy::Timed {
            level: (*l).to_owned(),
            after: t
                .parse::<f64>()
                .map_err(|_| format!("timed: {t:?} is not a number of seconds"))?,
        }),
        ("spread", [k, l]) => Ok(Policy::Spread {
            replicas: k
                .parse::<u32>()
                .map_err(|_| format!("spread: {k:?} is not a number of replicas"))?,
            level: (*l).to_owned(),
        }),
        _ => Err(bad()),
    }
}

impl TryFrom<Value> for Policy {
    type Error = String;

    fn try_from(v: Value) -> Result<Policy, String> {
        let p = match v {
            Value::String(s) => parse_policy_text(&s)?,
            Value::Object(mut o) => {
                let kind = match o.remove("kind") {
                    Some(Value::String(k)) => k,
                    _ => return Err("a policy object needs a string \"kind\"".into()),
                };
                let mut take_str = |k: &str| -> Result<String, String> {
                    match o.remove(k) {
                        Some(Value::String(s)) => Ok(s),
                        Some(_) => Err(format!("{kind}: {k} must be a string")),
                        None => Err(format!("{kind}: missing {k}")),
                    }
                };
                let p = match kind.as_str() {
                    "required" => Policy::Required {
                        level: take_str("level")?,
                    },
                    "preferred" => Policy::Preferred {
                        level: take_str("level")?,
                    },
                    "unconstrained" => Policy::Unconstrained,
                    "no-gang" => Policy::NoGang,
                    "timed" => {
                        let level = take_str("level")?;
                        let after = o
                            .remove("after")
                            .and_then(|a| a.as_f64())
                            .ok_or("timed: missing numeric \"after\" (seconds)")?;
                        Policy::Timed { level, after }
                    }
                    "spread" => {
                        let level = take_str("level")?;
                        let replicas = o
                            .remove("replicas")
                            .and_then(|a| a.as_u64())
                            .and_then(|a| u32::try_from(a).ok())
                            .ok_or("spread: missing whole \"replicas\"")?;
                        Policy::Spread { replicas, level }
                    }
                    other => return Err(format!("unknown policy kind {other:?}")),
                };
                if let Some(k) = o.keys().next() {
                    return Err(format!("unknown field {k:?} in a {kind} policy"));
                }
                p
            }
            _ => return Err("a policy is a string or an object with a \"kind\"".into()),
        };
        match &p {
            Policy::Timed { after, .. } if !(after.is_finite() && *after >= 0.0) => {
                Err("timed: \"after\" must be a non-negative number of seconds".into())
            }
            Policy::Spread { replicas: 0, .. } => Err("spread: at least one replica".into()),
            _ => Ok(p),
        }
    }
}

impl From<Policy> for Value {
    fn from(p: Policy) -> Value {
        match p {
            Policy::Required { level } => serde_json::json!({"kind": "required", "level": level}),
            Policy::Preferred { level } => {
                serde_json::json!({"kind": "preferred", "level": level})
            }
            Policy::Unconstrained => serde_json::json!({"kind": "unconstrained"}),
            Policy::Timed { level, after } => {
                serde_json::json!({"kind": "timed", "level": level, "after": after})
            }
            Policy::Spread { replicas, level } => {
                serde_json::json!({"kind": "spread", "replicas": replicas, "level": level})
            }
            Policy::NoGang => serde_json::json!({"kind": "no-gang"}),
        }
    }
}

/// Queue discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    /// Strict FIFO (within priority): the first gang that waits blocks every later one.
    #[default]
    Fifo,
    /// FIFO with backfill, by gang-core's `admit`: a later gang may go ahead of the
    /// waiting head only on nodes where no role of the head fits a member now.
    Backfill,
}

/// Where a job that leaves and re-enters the queue (backoff over, restart after a
/// failure) is put.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Requeue {
    /// Behind every job already waiting (Kueue's default, `Eviction` timestamps).
    #[default]
    Eviction,
    /// Back at its original place, by submission (Kueue's `Creation` timestamps).
    Creation,
}

/// The queue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueConfig {
    /// FIFO or backfill. Higher `priority` jobs always come first.
    pub discipline: Discipline,
    /// Where re-entering jobs go.
    pub requeue: Requeue,
    /// Backfill by calling gang-core's `Inventory::admit` itself on every pass (the
    /// reference; slow: it builds the head's diagnosis and solves cold each time)
    /// instead of asking the same rule of the simulation's warm solver (the default;
    /// the answers are the same, which the tests check).
    pub via_admit: bool,
}

/// Readiness: how members start, when an incomplete gang gives up, and the retry path
/// (the shape of Kueue's `waitForPodsReady`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Readiness {
    /// Seconds from placement until a member is ready (image pull, rendezvous).
    pub init_time: f64,
    /// Seconds after admission after which a gang not all ready releases everything and
    /// is requeued; `null`: wait forever.
    pub timeout: Option<f64>,
    /// Probability that a member fails to initialise (per member, per attempt).
    pub init_failure: f64,
    /// Seconds of backoff after the first readiness failure.
    pub backoff_base: f64,
    /// Backoff growth per further failure.
    pub backoff_factor: f64,
    /// Longest backoff, seconds.
    pub backoff_max: f64,
    /// Readiness failures after which the job is failed.
    pub max_attempts: u32,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            init_time: 60.0,
            timeout: Some(300.0),
            init_failure: 0.0,
            backoff_base: 60.0,
            backoff_factor: 2.0,
            backoff_max: 3600.0,
            max_attempts: 5,
        }
    }
}

/// Node failures during the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Failures {
    /// Failures per node per hour (0: none). Each schedulable node fails as a Poisson
    /// process of this rate.
    pub node_rate_per_hour: f64,
    /// Seconds until a failed node is back (uncordoned).
    pub repair_time: f64,
    /// Failures at given times, on given nodes (besides the random ones).
    pub scheduled: Vec<ScheduledFailure>,
}

/// One failure at a given time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFailure {
    /// Node name.
    pub node: String,
    /// Seconds.
    pub at: f64,
}

impl Default for Failures {
    fn default() -> Self {
        Failures {
            node_rate_per_hour: 0.0,
            repair_time: 4.0 * 3600.0,
            scheduled: Vec::new(),
        }
    }
}

/// What a running job does when a node under it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryMode {
    /// Release everything and requeue; resume from the last checkpoint.
    #[default]
    Restart,
    /// Keep the rest, wait for replacements inside the gang's domain (gang-core
    /// `replace`), then resume from the last checkpoint.
    Replace,
}

/// Recovery after a node failure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Recovery {
    /// Restart or replace.
    pub mode: RecoveryMode,
    /// With `replace`: seconds to wait for room in the domain before restarting instead
    /// (`null`: wait as long as it takes).
    pub replace_timeout: Option<f64>,
}

/// The default slowdown tables (run time multiplier by the highest level spanned:
/// one node, one rack, one block, beyond a block).
pub fn default_slowdown() -> BTreeMap<String, Vec<f64>> {
    BTreeMap::from([
        ("low".to_owned(), vec![1.0, 1.05, 1.10, 1.25]),
        ("medium".to_owned(), vec![1.0, 1.5, 1.8, 2.5]),
        ("high".to_owned(), vec![1.0, 2.5, 3.5, 6.0]),
    ])
}

/// Everything that shapes a simulation except the cluster and the trace.
///
/// ```
/// use gang_sim::{Discipline, Policy, SimConfig};
/// let c = SimConfig::from_json(r#"{"policy": "required(rack)", "queue": {"discipline": "backfill"},
///     "seed": 7}"#)?;
/// assert_eq!(c.policy, Policy::Required { level: "rack".into() });
/// assert_eq!((c.queue.discipline, c.seed), (Discipline::Backfill, 7));
/// assert_eq!(c.readiness.timeout, Some(300.0)); // defaults for the rest
/// let err = SimConfig::from_json(r#"{"readiness": {"timeuot": 5}}"#).unwrap_err();
/// assert_eq!((err.kind(), err.field()), ("invalid_config", "readiness.timeuot"));
/// assert!(err.to_string().contains("unknown field"));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Placement policy of jobs that do not name their own.
    pub policy: Policy,
    /// Queue discipline.
    pub queue: QueueConfig,
    /// Readiness and retries.
    pub readiness: Readiness,
    /// Node failures.
    pub failures: Failures,
    /// Recovery of jobs that do not name their own.
    pub recovery: Recovery,
    /// Run time multipliers per sensitivity class, by span: one node, the innermost
    /// level, the next, …; the last value applies beyond (and to the whole cluster).
    /// Given classes replace the defaults of the same name; others are kept.
    pub slowdown: BTreeMap<String, Vec<f64>>,
    /// Sensitivity class of jobs that do not name one.
    pub default_sensitivity: String,
    /// The resource counted as GPUs (utilisation, GPU-hours).
    pub gpu_resource: String,
    /// Seed of every random decision.
    pub seed: u64,
    /// Stop at this time (seconds); jobs not done then end `unfinished`.
    pub horizon: Option<f64>,
    /// Seconds between timeline samples.
    pub sample_interval: f64,
    /// Check every invariant after every event (default: in debug builds only).
    pub check_invariants: Option<bool>,
    /// Measure where the time goes (placement calls vs the rest); reported in the
    /// summary's `profile`. Off by default (timers cost a little).
    pub profile: bool,
    /// Whether a waiting job may evict running jobs of lower priority (crate docs:
    /// preemption). Off by default; left out of the document when off.
    #[serde(skip_serializing_if = "Preemption::is_off")]
    pub preemption: Preemption,
    /// How much work a run may do (see [`Limits`]); a run that would go past a limit
    /// stops with an error naming it (`limits.max_samples`, …) before the allocation.
    /// Left out of the document when all are the defaults.
    #[serde(skip_serializing_if = "Limits::is_default")]
    pub limits: Limits,
}

/// Bounds on the work of one run, so that no input can make a run allocate without
/// bound or never end. The defaults fit a laptop; raise them for bigger studies.
///
/// A run that would pass `max_jobs`, `max_nodes`, `max_samples` or `max_events` is
/// refused with [`SimError::Config`] naming the limit (`limits.max_samples`, …) and
/// the value that passed it. A job that loses a node under it more than
/// `max_restarts` times ends `failed` (no progress: a failure livelock).
///
/// ```
/// use gang_sim::SimConfig;
/// let c = SimConfig::from_json(r#"{"limits": {"max_samples": 10}, "horizon": 36000}"#).unwrap_err();
/// assert_eq!(c.field(), "limits.max_samples");
/// assert!(c.to_string().contains("61 samples"), "{c}");
/// assert_eq!(SimConfig::default().limits.max_jobs, 1_000_000);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Jobs in the trace (generated or read).
    pub max_jobs: u64,
    /// Nodes in the cluster (generated or read).
    pub max_nodes: u64,
    /// Timeline samples (one each `sample_interval` until the run ends).
    pub max_samples: u64,
    /// Events handled (arrivals, finishes, failures, timers, …).
    pub max_events: u64,
    /// Times one job may lose a node under it (a restart, an attempt lost while
    /// starting, or a wait for replacements); past it the job ends `failed`.
    pub max_restarts: u32,
    /// Bytes of one file the run reads (a cluster, a trace).
    pub max_input_bytes: u64,
}

/// The default of [`Limits::max_input_bytes`]: 256 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_jobs: 1_000_000,
            max_nodes: 200_000,
            max_samples: 1_000_000,
            max_events: 50_000_000,
            max_restarts: 1_000,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

impl Limits {
    /// `true` when every limit is its default.
    pub fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// `Err` naming `limits.{name}` when `n` is over `limit`; `what` says what was
    /// counted.
    pub(crate) fn check(name: &str, n: u64, limit: u64, what: &str) -> Result<(), SimError> {
        if n > limit {
            return Err(SimError::config(
                format!("limits.{name}"),
                format!("{what}: {n}, over the limit of {limit} (raise limits.{name} to allow it)"),
            ));
        }
        Ok(())
    }
}

/// Whether the queue's head may evict running jobs to start (issue 22).
///
/// `"off"` (the default): jobs wait for capacity. `"lower-priority"`: when the job at
/// the head of the queue (the highest priority waiting) does not fit, gang-core's
/// `preempt` chooses whole running jobs of strictly lower priority to evict (not those
/// whose trace says `"preemption_policy": "Never"`), exactly: the lowest highest
/// victim priority, then the least work lost (GPU-seconds since each victim's last
/// checkpoint), then the fewest GPUs, the fewest victims, the placement. Victims are
/// released and requeued, losing their work since their last checkpoint, and the job
/// is placed where the plan says.
///
/// ```
/// use gang_sim::{Preemption, SimConfig};
/// let c = SimConfig::from_json(r#"{"preemption": "lower-priority"}"#)?;
/// assert_eq!(c.preemption, Preemption::LowerPriority);
/// assert_eq!(SimConfig::default().preemption, Preemption::Off);
/// assert!(SimConfig::from_json(r#"{"preemption": "always"}"#).is_err());
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preemption {
    /// Jobs wait for capacity; nothing is evicted.
    #[default]
    Off,
    /// The head of the queue evicts running jobs of strictly lower priority.
    LowerPriority,
}

impl Preemption {
    /// `true` for [`Preemption::Off`].
    pub fn is_off(&self) -> bool {
        *self == Preemption::Off
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            policy: Policy::default(),
            queue: QueueConfig::default(),
            readiness: Readiness::default(),
            failures: Failures::default(),
            recovery: Recovery::default(),
            slowdown: BTreeMap::new(),
            default_sensitivity: "medium".to_owned(),
            gpu_resource: "nvidia.com/gpu".to_owned(),
            seed: 0,
            horizon: None,
            sample_interval: 600.0,
            check_invariants: None,
            profile: false,
            preemption: Preemption::Off,
            limits: Limits::default(),
        }
    }
}

/// Parses JSON into `T`, naming the JSON path of the first problem; a key given twice in
/// any object is an error naming its path.
pub(crate) fn from_json_path<T: serde::de::DeserializeOwned>(
    text: &str,
    prefix: &str,
) -> Result<T, SimError> {
    // A key given twice would otherwise be last-wins inside maps and raw values.
    if let Some((path, key)) = crate::unique::first_duplicate(text) {
        let field = if prefix.is_empty() {
            path
        } else {
            format!("{prefix}.{path}")
        };
        return Err(SimError::config(
            field,
            format!("key {} given twice", crate::unique::quoted(&key)),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        // An unknown empty key at the top has the empty path: name the document.
        let field = match (prefix.is_empty(), path.as_str()) {
            (true, "." | "?" | "") => "document".to_owned(),
            (false, "." | "?" | "") => prefix.to_owned(),
            (true, _) => path,
            (false, _) => format!("{prefix}.{path}"),
        };
        SimError::config(field, without_position(&e.into_inner().to_string()))
    })?;
    de.end()
        .map_err(|e| SimError::config("document", without_position(&e.to_string())))?;
    Ok(v)
}

impl SimConfig {
    /// Parses a configuration document; absent fields take their defaults, unknown
    /// fields are errors. See [`SimConfig`].
    ///
    /// # Errors
    /// [`SimError::Config`] naming the JSON path.
    pub fn from_json(text: &str) -> Result<SimConfig, SimError> {
        let c: SimConfig = from_json_path(text, "")?;
        c.check()?;
        Ok(c)
    }

    /// The configuration as JSON, as [`SimConfig::from_json`] reads it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The slowdown tables in force: the defaults, overridden class by class.
    pub fn slowdown_tables(&self) -> BTreeMap<String, Vec<f64>> {
        let mut t = default_slowdown();
        for (k, v) in &self.slowdown {
            t.insert(k.clone(), v.clone());
        }
        t
    }

    /// What in the configuration is accepted but probably not meant: a readiness
    /// `init_time` longer than its `timeout` (every attempt times out before its members
    /// are ready). A run's summary carries these in `warnings`.
    ///
    /// ```
    /// use gang_sim::SimConfig;
    /// let c = SimConfig::from_json(r#"{"readiness": {"init_time": 900, "timeout": 300}}"#)?;
    /// assert!(c.warnings()[0].starts_with("readiness.init_time (900 s) is longer than"));
    /// assert!(SimConfig::default().warnings().is_empty());
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        let r = &self.readiness;
        let mut w = Vec::new();
        if let Some(t) = r.timeout {
            if r.init_time > t {
                w.push(format!(
                    "readiness.init_time ({} s) is longer than readiness.timeout ({t} s): \
                     every attempt times out before its members are ready",
                    r.init_time
                ));
            }
        }
        w
    }

    /// Checks values serde cannot (ranges).
    pub(crate) fn check(&self) -> Result<(), SimError> {
        let nonneg = |field: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(SimError::config(
                    field,
                    format!("{v} is not a non-negative number"),
                ))
            }
        };
        let r = &self.readiness;
        nonneg("readiness.init_time", r.init_time)?;
        if let Some(t) = r.timeout {
            nonneg("readiness.timeout", t)?;
        }
        if !(0.0..=1.0).contains(&r.init_failure) {
            return Err(SimError::config(
                "readiness.init_failure",
                format!("{} is not a probability", r.init_failure),
            ));
        }
        nonneg("readiness.backoff_base", r.backoff_base)?;
        nonneg("readiness.backoff_max", r.backoff_max)?;
        if !(r.backoff_factor.is_finite() && r.backoff_factor >= 1.0) {
            return Err(SimError::config(
                "readiness.backoff_factor",
                "must be at least 1",
            ));
        }
        if r.max_attempts == 0 {
            return Err(SimError::config("readiness.max_attempts", "at least 1"));
        }
        nonneg(
            "failures.node_rate_per_hour",
            self.failures.node_rate_per_hour,
        )?;
        nonneg("failures.repair_time", self.failures.repair_time)?;
        for (i, f) in self.failures.scheduled.iter().enumerate() {
            nonneg(&format!("failures.scheduled[{i}].at"), f.at)?;
        }
        if let Some(t) = self.recovery.replace_timeout {
            nonneg("recovery.replace_timeout", t)?;
        }
        if let Some(h) = self.horizon {
            nonneg("horizon", h)?;
        }
        if !(self.sample_interval.is_finite() && self.sample_interval > 0.0) {
            return Err(SimError::config("sample_interval", "must be positive"));
        }
        if self.sample_interval < 0.001 {
            return Err(SimError::config(
                "sample_interval",
                format!(
                    "{} s is below the simulation's resolution of 1 ms",
                    self.sample_interval
                ),
            ));
        }
        if self.gpu_resource.trim().is_empty() {
            return Err(SimError::config(
                "gpu_resource",
                "empty: name the resource counted as GPUs (nvidia.com/gpu)",
            ));
        }
        if let Some(h) = self.horizon {
            let n = (h / self.sample_interval.max(0.001)).ceil() + 1.0;
            let n = if n < u64::MAX as f64 {
                n as u64
            } else {
                u64::MAX
            };
            Limits::check(
                "max_samples",
                n,
                self.limits.max_samples,
                &format!(
                    "the timeline to the horizon ({h} s) every {} s takes {n} samples",
                    self.sample_interval
                ),
            )?;
        }
        for (k, v) in &self.slowdown {
            check_table(v).map_err(|m| SimError::config(format!("slowdown.{k}"), m))?;
        }
        if !self
            .slowdown_tables()
            .contains_key(&self.default_sensitivity)
        {
            return Err(SimError::config(
                "default_sensitivity",
                format!("no slowdown table named {:?}", self.default_sensitivity),
            ));
        }
        Ok(())
    }
}

/// A slowdown table is non-empty, every multiplier positive and finite.
pub(crate) fn check_table(v: &[f64]) -> Result<(), String> {
    if v.is_empty() {
        return Err("a slowdown table needs at least one multiplier".into());
    }
    if let Some(x) = v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        return Err(format!("multiplier {x} is not a positive number"));
    }
    Ok(())
}
