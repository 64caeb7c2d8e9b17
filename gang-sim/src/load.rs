//! Offered load: how much GPU time a trace asks of a cluster per unit of time, a trace
//! rescaled to a target load, and a trace as flat rows (one per job).
//!
//! A job's **demand** is its GPUs (every role's members × GPUs per member; a spread
//! job's replicas counted when the job names its policy) × its ideal run time
//! (`duration`). A trace's **submission window** is the span from its first to its
//! last submission, scaled by `n / (n − 1)` for `n` jobs: `n` mean inter-arrival gaps,
//! so that a Poisson trace's window estimates `n / rate`. The **offered load** on a
//! cluster is the total demand ÷ (the cluster's allocatable GPUs × the window): 1.0
//! means the jobs ask for every GPU all the time, at their ideal run times.

use serde::Serialize;

use crate::config::Policy;
use crate::error::SimError;
use crate::placer::{role_request, Cluster, Placer};
use crate::trace::{JobSpec, Trace};

/// GPUs (whole units) of job `j`: every role's members × GPUs per member, times the
/// replicas of a spread policy the job names.
fn job_gpus(j: &JobSpec, resource: &str) -> Result<f64, SimError> {
    let mut milli = 0u64;
    for r in &j.roles {
        let per = role_request(r, resource).map_err(|e| {
            SimError::trace(
                j.line,
                format!("roles[{}].requests", r.get_name()),
                e.to_string(),
            )
            .with_core(e.kind())
        })?;
        milli += per * u64::from(r.get_count());
    }
    if let Some(Policy::Spread { replicas, .. }) = &j.policy {
        milli *= u64::from(*replicas);
    }
    Ok(milli as f64 / 1000.0)
}

/// GPUs a cluster offers a simulation: free on every node at the start (capacity less
/// use by others), in whole units.
pub fn cluster_gpus(cluster: &Cluster, gpu_resource: &str) -> f64 {
    Placer::new(cluster.clone(), gpu_resource).allocatable_gpu() as f64 / 1000.0
}

/// The submission window of `trace`, seconds (see the module docs); `None` with fewer
/// than two jobs or all submitted at once.
fn window(trace: &Trace) -> Option<(f64, f64)> {
    let n = trace.jobs.len();
    let first = trace
        .jobs
        .iter()
        .map(|j| j.submit)
        .fold(f64::INFINITY, f64::min);
    let last = trace
        .jobs
        .iter()
        .map(|j| j.submit)
        .fold(f64::NEG_INFINITY, f64::max);
    (n >= 2 && last > first).then(|| (first, (last - first) * n as f64 / (n - 1) as f64))
}

/// The offered load of `trace` on `gpus` GPUs (see the module docs).
///
/// ```
/// use gang_sim::{offered_load, JobSpec, Trace};
/// // Two 1-hour jobs of 4 GPUs, submitted an hour apart: window 2 h, demand 8 GPU-h.
/// let t = Trace::new(vec![JobSpec::new("a", 0.0, 3600.0, 1, 4), JobSpec::new("b", 3600.0, 3600.0, 1, 4)]);
/// assert_eq!(offered_load(&t, 8.0, "nvidia.com/gpu")?, 0.5);
/// assert!(offered_load(&Trace::new(vec![JobSpec::new("a", 0.0, 60.0, 1, 1)]), 8.0, "nvidia.com/gpu").is_err());
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Config`] (field `trace`) when the trace has fewer than two submission
/// times or the cluster no GPUs; [`SimError::Trace`] for a job whose GPU request is
/// not a quantity.
pub fn offered_load(trace: &Trace, gpus: f64, gpu_resource: &str) -> Result<f64, SimError> {
    let Some((_, w)) = window(trace) else {
        return Err(SimError::config(
            "trace",
            "offered load needs at least two jobs submitted at different times",
        ));
    };
    if gpus <= 0.0 {
        return Err(SimError::config(
            "cluster",
            format!("offered load needs GPUs ({gpu_resource}); the cluster has none free"),
        ));
    }
    let mut demand = 0.0;
    for j in &trace.jobs {
        demand += job_gpus(j, gpu_resource)? * j.duration;
    }
    Ok(demand / (gpus * w))
}

/// Rescales `trace`'s submission times around its first one so that its offered load
/// on `gpus` GPUs is `target` (times rounded to the millisecond).
///
/// # Errors
/// As [`offered_load`]; [`SimError::Config`] naming `field` for a target that is not
/// a positive number.
pub fn scale_to_load(
    trace: &mut Trace,
    gpus: f64,
    gpu_resource: &str,
    target: f64,
    field: &str,
) -> Result<(), SimError> {
    if !(target.is_finite() && target > 0.0) {
        return Err(SimError::config(
            field,
            format!("{target} is not a positive load"),
        ));
    }
    let now = offered_load(trace, gpus, gpu_resource)?;
    let (first, _) = window(trace).unwrap_or((0.0, 0.0));
    let k = now / target;
    for j in &mut trace.jobs {
        j.submit = ((first + (j.submit - first) * k) * 1000.0).round() / 1000.0;
    }
    Ok(())
}

/// One job of a trace as a flat row (what `gang.sim.trace_jobs` shows).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRow {
    /// Job id.
    pub id: String,
    /// Submission time, seconds.
    pub submit: f64,
    /// Ideal run time, seconds.
    pub duration: f64,
    /// Members, every role.
    pub members: u32,
    /// GPUs per member when every member asks the same, else `null`.
    pub gpus_per_member: Option<f64>,
    /// GPUs of the whole job (members × GPUs per member, every role); a trace's
    /// `gpus` is per member.
    pub gpus_total: f64,
    /// GPU-hours the job asks for at its ideal run time.
    pub gpu_hours: f64,
    /// Tenant.
    pub tenant: String,
    /// Priority.
    pub priority: i64,
    /// Sensitivity class, `null`: the configuration's default.
    pub sensitivity: Option<String>,
    /// The job's own policy, `null`: the configuration's.
    pub policy: Option<String>,
}

/// `trace` as one [`TraceRow`] per job, in trace order.
///
/// # Errors
/// [`SimError::Trace`] for a job whose GPU request is not a quantity.
pub fn trace_rows(trace: &Trace, gpu_resource: &str) -> Result<Vec<TraceRow>, SimError> {
    let mut rows = Vec::with_capacity(trace.jobs.len());
    for j in &trace.jobs {
        let gpus = job_gpus(j, gpu_resource)?;
        let members: u32 = j.roles.iter().map(|r| r.get_count()).sum();
        let mut per = Vec::new();
        for r in &j.roles {
            per.push(role_request(r, gpu_resource).unwrap_or(0));
        }
        per.dedup();
        let gpus_per_member = match per.as_slice() {
            [one] => Some(*one as f64 / 1000.0),
            _ => None,
        };
        rows.push(TraceRow {
            id: j.id.clone(),
            submit: j.submit,
            duration: j.duration,
            members,
            gpus_per_member,
            gpus_total: gpus,
            gpu_hours: gpus * j.duration / 3600.0,
            tenant: j.tenant.clone(),
            priority: j.priority,
            sensitivity: j.sensitivity.clone(),
            policy: j.policy.as_ref().map(ToString::to_string),
        });
    }
    Ok(rows)
}
