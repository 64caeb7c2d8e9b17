//! Importers for the traces users already have: column maps, no data shipped.
//!
//! | source | function | one job is | members | per-member request | ideal run time | tenant |
//! |---|---|---|---|---|---|---|
//! | Slurm `sacct`-style CSV (Helios, Acme) | [`sacct`] | a row | `node_num` (≥ 1) | `gpu_num` / `cpu_num` divided by members, rounded up | `duration`, else `end_time − start_time` | `queue`, else `user` |
//! | Alibaba openb pod list (cluster-trace-gpu-v2023) | [`openb_pods`] | a pod | 1 | `cpu_milli`, `memory_mib`, `num_gpu` (or `gpu_milli` of one shared GPU); `gpu_spec` → `nvidia.com/gpu.product` In | `deletion_time − scheduled_time` | `qos` |
//! | Alibaba openb node list | [`openb_nodes`] | (a node) | | capacity `cpu_milli`, `memory_mib`, `gpu`; label `model` | | |
//! | Philly `cluster_job_log` (JSON) | [`philly`] | a job | servers of its last attempt | GPUs on its busiest server | last attempt's `end_time − start_time` | `vc` |
//!
//! Submission times become seconds from the earliest submission in the file. Rows
//! without a usable run time (never started, still running, zero length) are skipped
//! and listed in [`Imported::skipped`] (a file whose every row is skipped is an error);
//! values rounded on the way in are listed in [`Imported::rounded`]; rows with a
//! malformed value are errors naming the line and column: a time that is not a real
//! day or lies beyond [`MAX_SECONDS`], a count that is not whole (`node_num` 2.5,
//! `num_gpu` 0.5, a node's `gpu` 8.7), an openb `gpu_milli` above 1000, a Philly
//! `detail` that is not a list. Other columns of these formats (a job's recorded state, QoS
//! class, start times) are read but not used: the simulation decides when jobs start.

use serde_json::Value;

use crate::csv;
use crate::error::SimError;
use crate::placer::{label_in, milli_amount, units, Cluster, NodeSpec, Role};
use crate::trace::{JobSpec, Trace};

/// GPU resource name the importers use.
pub const GPU: &str = "nvidia.com/gpu";
/// GPU model label the openb importers use.
pub const PRODUCT: &str = "nvidia.com/gpu.product";
/// Rack level key of [`openb_nodes`] with racks.
pub const RACK: &str = "topology.example.com/rack";

/// A row left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Line (1-based; CSV: the header is line 1).
    pub line: usize,
    /// The row's id, if it had one.
    pub id: String,
    /// Why it was left out.
    pub reason: String,
}

/// An imported trace and the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The jobs.
    pub trace: Trace,
    /// Rows without a usable run time.
    pub skipped: Vec<Skipped>,
    /// Rows imported with a value rounded (sacct: GPUs or CPUs that do not divide
    /// evenly over the nodes, rounded up per member); `reason` says which.
    pub rounded: Vec<Skipped>,
}

impl Imported {
    /// What was lost on the way in, as warnings for a run's summary: how many rows
    /// were skipped, how many rounded, each with the first few (line, id, reason).
    /// Empty when every row was read as written.
    ///
    /// ```
    /// let csv = "job_id,node_num,gpu_num,submit_time,duration\n1,2,3,0,60\n2,1,1,0,0\n";
    /// let w = gang_sim::import::sacct(csv)?.warnings();
    /// assert_eq!(w.len(), 2);
    /// assert!(w[0].starts_with("1 row skipped (line 3, job \"2\": no run time"), "{}", w[0]);
    /// assert!(w[1].starts_with("1 row rounded (line 2, job \"1\": gpu_num 3 over 2 nodes"), "{}", w[1]);
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        for (rows, what) in [(&self.skipped, "skipped"), (&self.rounded, "rounded")] {
            if rows.is_empty() {
                continue;
            }
            let shown: Vec<String> = rows
                .iter()
                .take(3)
                .map(|r| format!("line {}, job {}: {}", r.line, cut(&r.id), r.reason))
                .collect();
            let more = if rows.len() > shown.len() {
                format!("; {} more", rows.len() - shown.len())
            } else {
                String::new()
            };
            w.push(format!(
                "{} row{} {what} ({}{more})",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" },
                shown.join("; ")
            ));
        }
        w
    }
}

/// The largest time or run time the importers accept, seconds (about 31,700 years):
/// larger values are errors naming the row, not numbers that overflow later.
pub const MAX_SECONDS: f64 = 1e12;

/// Seconds since 1970 from `YYYY-MM-DD HH:MM:SS` (years 1 to 9999, real calendar
/// days: `2020-02-31` is not a time) (a `T` may separate the two;
/// fractional seconds and a trailing `Z` are accepted, other time zones are not), or
/// from a plain number of seconds (at most [`MAX_SECONDS`] either side of 0).
pub fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        return (x.is_finite() && x.abs() <= MAX_SECONDS).then_some(x);
    }
    let t = t.strip_suffix('Z').unwrap_or(t);
    let (date, time) = t.split_once([' ', 'T'])?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if d.next().is_some()
        || !(1..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || !(1..=month_days).contains(&day)
    {
        return None;
    }
    let mut hms = time.trim().split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let mi: i64 = hms.next()?.parse().ok()?;
    let s: f64 = hms.next().map_or(Some(0.0), |s| s.parse().ok())?;
    if hms.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&mi)
        || !(0.0..61.0).contains(&s)
    {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60) as f64 + s)
}

/// The most members an imported job may have.
const MAX_MEMBERS: u64 = u32::MAX as u64;
/// The most units of a resource an imported row may ask or offer.
const MAX_AMOUNT: u64 = 1 << 40;

/// A value as an error quotes it: at most 60 characters.
fn cut(v: &str) -> String {
    if v.chars().count() <= 60 {
        format!("{v:?}")
    } else {
        format!(
            "{:?}… ({} bytes)",
            v.chars().take(60).collect::<String>(),
            v.len()
        )
    }
}

/// A table read from CSV: column names and rows.
struct Table {
    cols: Vec<String>,
    rows: Vec<csv::Record>,
}

impl Table {
    fn read(text: &str, known: &[&str], required: &[&str]) -> Result<Table, SimError> {
        let records = csv::read(text).map_err(|(l, m)| SimError::trace(l, "csv", m))?;
        let mut it = records.into_iter();
        let Some(header) = it.next() else {
            return Ok(Table {
                cols: Vec::new(),
                rows: Vec::new(),
            });
        };
        let cols: Vec<String> = header.fields.iter().map(|c| c.trim().to_owned()).collect();
        for c in &cols {
            if !known.contains(&c.as_str()) {
                return Err(SimError::trace(
                    header.line,
                    if c.is_empty() { "header" } else { c.as_str() },
                    format!(
                        "unknown column {c:?}; this format's columns are {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        for r in required {
            if !cols.iter().any(|c| c == r) {
                return Err(SimError::trace(header.line, *r, "required column missing"));
            }
        }
        let rows: Vec<csv::Record> = it.collect();
        for r in &rows {
            if r.fields.len() != cols.len() {
                return Err(SimError::trace(
                    r.line,
                    "csv",
                    format!("{} fields, the header has {}", r.fields.len(), cols.len()),
                ));
            }
        }
        Ok(Table { cols, rows })
    }

    fn get<'a>(&self, r: &'a csv::Record, col: &str) -> Option<&'a str> {
        let i = self.cols.iter().position(|c| c == col)?;
        let v = r.fields[i].trim();
        (!v.is_empty() && v != "nan" && v != "None" && v != "NaN").then_some(v)
    }

    fn num(&self, r: &csv::Record, col: &str) -> Result<Option<f64>, SimError> {
        match self.get(r, col) {
            None => Ok(None),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(SimError::trace(
                    r.line,
                    col,
                    format!("{} is not a non-negative number", cut(v)),
                )),
            },
        }
    }

    fn time(&self, r: &csv::Record, col: &str) -> Result<Option<f64>, SimError> {
        match self.get(r, col) {
            None => Ok(None),
            Some(v) => parse_time(v).map(Some).ok_or_else(|| {
                SimError::trace(
                    r.line,
                    col,
                    format!(
                        "{} is not a time (YYYY-MM-DD HH:MM:SS of a real day, or seconds \
                         within ±{MAX_SECONDS:e})",
                        cut(v)
                    ),
                )
            }),
        }
    }

    /// A number of seconds, at most [`MAX_SECONDS`].
    fn secs(&self, r: &csv::Record, col: &str) -> Result<Option<f64>, SimError> {
        match self.num(r, col)? {
            Some(x) if x > MAX_SECONDS => Err(SimError::trace(
                r.line,
                col,
                format!("{x:e} seconds is more than the {MAX_SECONDS:e} accepted"),
            )),
            x => Ok(x),
        }
    }

    /// A whole count of at most `max` (`2.5` nodes, `1e10` members are errors).
    fn count(&self, r: &csv::Record, col: &str, max: u64) -> Result<Option<u64>, SimError> {
        match self.num(r, col)? {
            None => Ok(None),
            Some(x) if x.fract() == 0.0 && x <= max as f64 => Ok(Some(x as u64)),
            Some(x) => Err(SimError::trace(
                r.line,
                col,
                format!("{x} is not a whole number from 0 to {max}"),
            )),
        }
    }
}

/// Shifts submission times so the earliest is 0.
fn rebase(jobs: &mut [JobSpec]) {
    let t0 = jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min);
    if t0.is_finite() {
        for j in jobs {
            j.submit = ((j.submit - t0) * 1000.0).round() / 1000.0;
        }
    }
}

fn done(
    mut jobs: Vec<JobSpec>,
    skipped: Vec<Skipped>,
    rounded: Vec<Skipped>,
) -> Result<Imported, SimError> {
    if jobs.is_empty() {
        if let Some(first) = skipped.first() {
            return Err(SimError::trace(
                first.line,
                "row",
                format!(
                    "every row was skipped ({} rows; the first, {:?}: {})",
                    skipped.len(),
                    first.id,
                    first.reason
                ),
            ));
        }
    }
    rebase(&mut jobs);
    let mut seen = rustc_hash::FxHashMap::default();
    for j in &jobs {
        if let Some(first) = seen.insert(j.id.clone(), j.line) {
            return Err(SimError::trace(
                j.line,
                "id",
                format!("duplicate id {:?} (first on line {first})", j.id),
            ));
        }
    }
    Ok(Imported {
        trace: Trace::new(jobs),
        skipped,
        rounded,
    })
}

/// Imports a Slurm `sacct`-style CSV (the Helios and Acme traces' columns: `job_id,
/// user, node_num, gpu_num, cpu_num, state, submit_time, start_time, end_time,
/// duration, queue`; any subset with `job_id` and `submit_time`).
///
/// ```
/// let csv = "job_id,user,node_num,gpu_num,cpu_num,state,submit_time,start_time,end_time,duration,queue
/// 1,u1,2,16,32,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:05:00,2020-04-01 01:05:00,3600,vc1
/// 2,u2,1,0,4,CANCELLED,2020-04-01 00:10:00,,,0,vc2
/// ";
/// let out = gang_sim::import::sacct(csv)?;
/// let j = &out.trace.jobs[0];
/// assert_eq!((j.submit, j.duration, j.roles[0].get_count(), j.tenant.as_str()), (0.0, 3600.0, 2, "vc1"));
/// assert_eq!(out.skipped[0].line, 3); // never ran
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Trace`] naming the line and column of an unknown column or a malformed
/// value.
pub fn sacct(text: &str) -> Result<Imported, SimError> {
    let known = [
        "job_id",
        "user",
        "node_num",
        "gpu_num",
        "cpu_num",
        "state",
        "submit_time",
        "start_time",
        "end_time",
        "duration",
        "queue",
    ];
    let t = Table::read(text, &known, &["job_id", "submit_time"])?;
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    let mut rounded = Vec::new();
    for r in &t.rows {
        let id = t
            .get(r, "job_id")
            .ok_or_else(|| SimError::trace(r.line, "job_id", "missing"))?
            .to_owned();
        let submit = t
            .time(r, "submit_time")?
            .ok_or_else(|| SimError::trace(r.line, "submit_time", "missing"))?;
        let nodes = t.count(r, "node_num", MAX_MEMBERS)?.unwrap_or(1).max(1) as u32;
        let gpus = t.count(r, "gpu_num", MAX_AMOUNT)?.unwrap_or(0) as f64;
        let cpus = t.count(r, "cpu_num", MAX_AMOUNT)?.unwrap_or(0) as f64;
        let duration = match t.secs(r, "duration")? {
            Some(d) if d > 0.0 => Some(d),
            _ => match (t.time(r, "start_time")?, t.time(r, "end_time")?) {
                (Some(s), Some(e)) if e > s && e - s <= MAX_SECONDS => Some(e - s),
                (Some(s), Some(e)) if e > s => {
                    return Err(SimError::trace(
                        r.line,
                        "end_time",
                        format!(
                            "runs {:e} seconds after start_time, more than the {MAX_SECONDS:e} \
                             accepted",
                            e - s
                        ),
                    ))
                }
                _ => None,
            },
        };
        let Some(duration) = duration else {
            skipped.push(Skipped {
                line: r.line,
                id,
                reason: "no run time (never started, or zero length)".into(),
            });
            continue;
        };
        let mut role = Role::new("worker", nodes);
        for (what, n) in [("gpu_num", gpus), ("cpu_num", cpus)] {
            if n % f64::from(nodes) != 0.0 {
                rounded.push(Skipped {
                    line: r.line,
                    id: id.clone(),
                    reason: format!(
                        "{what} {n} over {nodes} nodes: {} per member, rounded up",
                        (n / f64::from(nodes)).ceil()
                    ),
                });
            }
        }
        let per_gpu = (gpus / f64::from(nodes)).ceil() as u64;
        if per_gpu > 0 {
            role = role.request(GPU, units(per_gpu));
        }
        let per_cpu = (cpus / f64::from(nodes)).ceil() as u64;
        if per_cpu > 0 {
            role = role.request("cpu", units(per_cpu));
        }
        let mut j = JobSpec::new(&id, submit, duration, nodes, 0);
        j.line = r.line;
        j.roles = vec![role];
        j.tenant = t
            .get(r, "queue")
            .or_else(|| t.get(r, "user"))
            .unwrap_or("default")
            .to_owned();
        jobs.push(j);
    }
    done(jobs, skipped, rounded)
}

/// Imports an Alibaba openb pod list (`name, cpu_milli, memory_mib, num_gpu, gpu_milli,
/// gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time`): one
/// one-member job per pod.
///
/// ```
/// let csv = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
/// openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497
/// openb-pod-0022,4000,15258,1,220,V100M16|V100M32,BE,Running,9679175,9973826,9679175
/// openb-pod-0040,4000,15258,1,1000,,BE,Pending,9679175,,
/// ";
/// let out = gang_sim::import::openb_pods(csv)?;
/// assert_eq!(out.trace.jobs.len(), 2);
/// let shared = &out.trace.jobs[1];
/// assert_eq!((shared.submit, shared.duration), (9679175.0 - 9437497.0, 9973826.0 - 9679175.0));
/// assert_eq!(shared.roles[0].get_match_expressions()[0].values, ["V100M16", "V100M32"]);
/// assert_eq!(out.skipped.len(), 1);
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Trace`] naming the line and column.
pub fn openb_pods(text: &str) -> Result<Imported, SimError> {
    let known = [
        "name",
        "cpu_milli",
        "memory_mib",
        "num_gpu",
        "gpu_milli",
        "gpu_spec",
        "qos",
        "pod_phase",
        "creation_time",
        "deletion_time",
        "scheduled_time",
    ];
    let t = Table::read(text, &known, &["name", "creation_time"])?;
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for r in &t.rows {
        let id = t
            .get(r, "name")
            .ok_or_else(|| SimError::trace(r.line, "name", "missing"))?
            .to_owned();
        let submit = t
            .secs(r, "creation_time")?
            .ok_or_else(|| SimError::trace(r.line, "creation_time", "missing"))?;
        let duration = match (t.secs(r, "scheduled_time")?, t.secs(r, "deletion_time")?) {
            (Some(s), Some(e)) if e > s => e - s,
            _ => {
                skipped.push(Skipped {
                    line: r.line,
                    id,
                    reason: "no run time (never scheduled, not deleted, or zero length)".into(),
                });
                continue;
            }
        };
        let mut role = Role::new("worker", 1);
        if let Some(c) = t.num(r, "cpu_milli")?.filter(|&c| c > 0.0) {
            role = role.request("cpu", milli_amount(c as u64));
        }
        if let Some(m) = t.num(r, "memory_mib")?.filter(|&m| m > 0.0) {
            role = role.request(
                "memory",
                milli_amount((m as u64).saturating_mul(1 << 20).saturating_mul(1000)),
            );
        }
        let n = t.count(r, "num_gpu", MAX_AMOUNT)?.unwrap_or(0);
        let milli = t.count(r, "gpu_milli", 1000)?.unwrap_or(1000);
        if n == 1 && milli > 0 && milli < 1000 {
            role = role.request(GPU, milli_amount(milli));
        } else if n > 0 {
            role = role.request(GPU, units(n));
        }
        if let Some(spec) = t.get(r, "gpu_spec") {
            let models: Vec<String> = spec
                .split('|')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            if !models.is_empty() {
                role = role.requirement(label_in(PRODUCT, models));
            }
        }
        let mut j = JobSpec::new(&id, submit, duration, 1, 0);
        j.line = r.line;
        j.roles = vec![role];
        j.tenant = t.get(r, "qos").unwrap_or("default").to_owned();
        jobs.push(j);
    }
    done(jobs, skipped, Vec::new())
}

/// Imports an Alibaba openb node list (`sn, cpu_milli, memory_mib, gpu, model`) as a
/// cluster. The list has no topology: with `nodes_per_rack`, nodes are grouped into
/// racks of that many in file order (level [`RACK`], values `r000`…); otherwise the
/// topology is flat.
///
/// ```
/// let csv = "sn,cpu_milli,memory_mib,gpu,model
/// openb-node-0227,32000,262144,0,nan
/// openb-node-0228,128000,786432,8,G3
/// openb-node-0229,96000,786432,8,V100M32
/// ";
/// let c = gang_sim::import::openb_nodes(csv, Some(2))?;
/// assert_eq!((c.len(), c.levels().len()), (3, 1));
/// assert!(c.to_json().contains("\"nvidia.com/gpu.product\":\"V100M32\""));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Trace`] naming the line and column; [`SimError::Cluster`] if gang-core
/// rejects a node (a duplicate name).
pub fn openb_nodes(text: &str, nodes_per_rack: Option<usize>) -> Result<Cluster, SimError> {
    let known = ["sn", "cpu_milli", "memory_mib", "gpu", "model"];
    let t = Table::read(text, &known, &["sn"])?;
    let mut nodes = Vec::new();
    let per = nodes_per_rack.filter(|&n| n > 0);
    let racks = per.map_or(1, |p| t.rows.len().div_ceil(p)).max(1);
    let width = racks.saturating_sub(1).max(1).ilog10() as usize + 1;
    for (i, r) in t.rows.iter().enumerate() {
        let name = t
            .get(r, "sn")
            .ok_or_else(|| SimError::trace(r.line, "sn", "missing"))?;
        let mut n = NodeSpec::new(name);
        if let Some(c) = t.num(r, "cpu_milli")? {
            n = n.capacity("cpu", milli_amount(c as u64));
        }
        if let Some(m) = t.num(r, "memory_mib")? {
            n = n.capacity(
                "memory",
                milli_amount((m as u64).saturating_mul(1 << 20).saturating_mul(1000)),
            );
        }
        if let Some(g) = t.count(r, "gpu", MAX_AMOUNT)?.filter(|&g| g > 0) {
            n = n.capacity(GPU, units(g));
        }
        if let Some(model) = t.get(r, "model") {
            n = n.label(PRODUCT, model);
        }
        if let Some(p) = per {
            n = n.label(RACK, format!("r{:0width$}", i / p));
        }
        nodes.push(n);
    }
    let levels: Vec<&str> = if per.is_some() { vec![RACK] } else { vec![] };
    Cluster::from_nodes(&levels, nodes)
}

/// Imports a Philly `cluster_job_log` (a JSON array of jobs, or one job per line):
/// `{"status", "vc", "jobid", "attempts": [{"start_time", "end_time", "detail": [{"ip",
/// "gpus": [...]}]}], "submitted_time", "user"}`.
///
/// ```
/// let log = r#"[{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1", "user": "u",
///   "submitted_time": "2017-10-07 01:11:39",
///   "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
///                 "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]},
///                {"start_time": "2017-10-07 01:13:30", "end_time": "2017-10-07 02:13:30",
///                 "detail": [{"ip": "m412", "gpus": ["gpu0"]}, {"ip": "m413", "gpus": ["gpu0", "gpu1"]}]}]},
///  {"status": "Killed", "vc": "ee9e8c", "jobid": "application_2", "user": "u",
///   "submitted_time": "2017-10-07 01:20:00", "attempts": []}]"#;
/// let out = gang_sim::import::philly(log)?;
/// let j = &out.trace.jobs[0];
/// assert_eq!((j.duration, j.roles[0].get_count(), j.tenant.as_str()), (3600.0, 2, "ee9e8c"));
/// assert_eq!(out.skipped[0].id, "application_2"); // no attempts
/// # Ok::<(), gang_sim::SimError>(())
/// ```
///
/// # Errors
/// [`SimError::Trace`] naming the job (its position, 1-based, as the line of a JSON
/// array; its line in JSON Lines) and the field.
pub fn philly(text: &str) -> Result<Imported, SimError> {
    let trimmed = text.trim_start();
    let entries: Vec<(usize, Value)> = if trimmed.starts_with('[') {
        let v: Vec<Value> = serde_json::from_str(text).map_err(|e| {
            SimError::trace(
                e.line(),
                format!("column {}", e.column()),
                format!("malformed JSON: {e}"),
            )
        })?;
        if let Some((path, key)) = crate::unique::first_duplicate(text) {
            // `[i].field…`: job i + 1 of the array.
            let (job, field) = path
                .strip_prefix('[')
                .and_then(|p| p.split_once(']'))
                .and_then(|(i, rest)| Some((i.parse::<usize>().ok()? + 1, rest)))
                .unwrap_or((1, path.as_str()));
            let field = field.trim_start_matches('.');
            return Err(SimError::trace(
                job,
                if field.is_empty() { "job" } else { field },
                format!("key {} given twice", crate::unique::quoted(&key)),
            ));
        }
        v.into_iter().enumerate().map(|(i, v)| (i + 1, v)).collect()
    } else {
        let mut out = Vec::new();
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(l).map_err(|e| {
                SimError::trace(
                    i + 1,
                    format!("column {}", e.column()),
                    format!("malformed JSON: {e}"),
                )
            })?;
            if let Some((path, key)) = crate::unique::first_duplicate(l) {
                return Err(SimError::trace(
                    i + 1,
                    path,
                    format!("key {} given twice", crate::unique::quoted(&key)),
                ));
            }
            out.push((i + 1, v));
        }
        out
    };
    let known = [
        "status",
        "vc",
        "jobid",
        "attempts",
        "submitted_time",
        "user",
    ];
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for (line, v) in entries {
        let Value::Object(o) = v else {
            return Err(SimError::trace(line, "job", "each job is a JSON object"));
        };
        if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(SimError::trace(
                line,
                if k.is_empty() { "job" } else { k.as_str() },
                format!("unknown field; known: {}", known.join(", ")),
            ));
        }
        let id = match o.get("jobid") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(SimError::trace(line, "jobid", "missing")),
        };
        let time = |v: Option<&Value>| v.and_then(Value::as_str).and_then(parse_time);
        let Some(submit) = time(o.get("submitted_time")) else {
            return Err(SimError::trace(
                line,
                "submitted_time",
                "missing or not a time",
            ));
        };
        let attempts = match o.get("attempts") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err(SimError::trace(line, "attempts", "must be a list")),
        };
        // A time that is there must read; a missing one (null, absent) is no time.
        let strict = |a: &Value, k: &str| -> Result<Option<f64>, SimError> {
            match a.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => time(Some(v)).map(Some).ok_or_else(|| {
                    SimError::trace(
                        line,
                        format!("attempts[].{k}"),
                        format!(
                            "{} is not a time (YYYY-MM-DD HH:MM:SS of a real day, or seconds \
                             within ±{MAX_SECONDS:e})",
                            cut(&v.to_string())
                        ),
                    )
                }),
            }
        };
        let mut last = None;
        for a in attempts.iter().rev() {
            if let (Some(s), Some(e)) = (strict(a, "start_time")?, strict(a, "end_time")?) {
                if e > s {
                    last = Some((a, e - s));
                    break;
                }
            }
        }
        let Some((attempt, duration)) = last else {
            skipped.push(Skipped {
                line,
                id,
                reason: "no attempt with a start and an end".into(),
            });
            continue;
        };
        let detail = match attempt.get("detail") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(d)) => d.clone(),
            Some(other) => {
                return Err(SimError::trace(
                    line,
                    "attempts[].detail",
                    format!("{} is not a list of servers", cut(&other.to_string())),
                ))
            }
        };
        if duration > MAX_SECONDS {
            return Err(SimError::trace(
                line,
                "attempts[].end_time",
                format!("a run of {duration:e} seconds is more than the {MAX_SECONDS:e} accepted"),
            ));
        }
        let servers = detail.len().max(1) as u32;
        let mut gpus = 0u64;
        for d in &detail {
            match d.get("gpus") {
                None | Some(Value::Null) => {}
                Some(Value::Array(g)) => gpus = gpus.max(g.len() as u64),
                Some(other) => {
                    return Err(SimError::trace(
                        line,
                        "attempts[].detail[].gpus",
                        format!("{} is not a list of GPUs", cut(&other.to_string())),
                    ))
                }
            }
        }
        let mut j = JobSpec::new(&id, submit, duration, servers, gpus);
        j.line = line;
        j.tenant = o
            .get("vc")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned();
        jobs.push(j);
    }
    done(jobs, skipped, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1970-01-01 00:00:00"), Some(0.0));
        assert_eq!(parse_time("1970-01-02T00:00:01Z"), Some(86_401.0));
        assert_eq!(parse_time("2000-03-01 00:00:00"), Some(951_868_800.0));
        assert_eq!(parse_time("2017-10-07 01:11:39"), Some(1_507_338_699.0));
        assert_eq!(parse_time("12.5"), Some(12.5));
        assert_eq!(parse_time("2017-13-07 01:11:39"), None);
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn bad_rows_name_line_and_column() {
        let e = sacct("job_id,submit_time,gpu_num\n1,0,x\n").unwrap_err();
        assert_eq!(
            (e.field(), e.to_string().contains("line 2")),
            ("gpu_num", true)
        );
        let e = sacct("job_id,submit_time,colour\n").unwrap_err();
        assert_eq!(e.field(), "colour");
        let e = sacct("job_id,gpu_num\n").unwrap_err();
        assert_eq!(e.field(), "submit_time");
        let e = openb_pods("name,creation_time\np,yesterday\n").unwrap_err();
        assert_eq!(e.field(), "creation_time");
        let e = philly(r#"[{"jobid": "a", "submitted_time": "2017-10-07 01:11:39", "gpu": 1}]"#)
            .unwrap_err();
        assert_eq!(e.field(), "gpu");
        let e = philly("[{").unwrap_err();
        assert_eq!(e.kind(), "invalid_trace");
    }

    #[test]
    fn sacct_divides_gpus_over_nodes_and_rebases_time() {
        let out = sacct(
            "job_id,node_num,gpu_num,cpu_num,submit_time,duration,user\n\
             a,4,30,64,100,10,alice\n\
             b,,2,,160,5,bob\n",
        )
        .unwrap();
        let a = &out.trace.jobs[0];
        assert_eq!(a.roles[0].get_count(), 4);
        let request = |r: &str| {
            a.roles[0]
                .get_requests()
                .find(|(name, _)| *name == r)
                .map(|(_, q)| q.clone())
        };
        assert_eq!(request(GPU), Some(units(8))); // 30 over 4, rounded up
        assert_eq!(request("cpu"), Some(units(16)));
        assert_eq!((a.submit, out.trace.jobs[1].submit), (0.0, 60.0));
        assert_eq!(out.trace.jobs[1].tenant, "bob");
    }
}
