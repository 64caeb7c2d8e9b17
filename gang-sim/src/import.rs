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
//! and listed in [`Imported::skipped`]; rows with a malformed value are errors naming
//! the line and column. Other columns of these formats (a job's recorded state, QoS
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
}

/// Seconds since 1970 from `YYYY-MM-DD HH:MM:SS` (a `T` may separate the two;
/// fractional seconds and a trailing `Z` are accepted, other time zones are not), or
/// from a plain number of seconds.
pub fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        return x.is_finite().then_some(x);
    }
    let t = t.strip_suffix('Z').unwrap_or(t);
    let (date, time) = t.split_once([' ', 'T'])?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
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
                    c.clone(),
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
                    format!("{v:?} is not a non-negative number"),
                )),
            },
        }
    }

    fn time(&self, r: &csv::Record, col: &str) -> Result<Option<f64>, SimError> {
        match self.get(r, col) {
            None => Ok(None),
            Some(v) => parse_time(v)
                .map(Some)
                .ok_or_else(|| SimError::trace(r.line, col, format!("{v:?} is not a time"))),
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

fn done(mut jobs: Vec<JobSpec>, skipped: Vec<Skipped>) -> Result<Imported, SimError> {
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
    for r in &t.rows {
        let id = t
            .get(r, "job_id")
            .ok_or_else(|| SimError::trace(r.line, "job_id", "missing"))?
            .to_owned();
        let submit = t
            .time(r, "submit_time")?
            .ok_or_else(|| SimError::trace(r.line, "submit_time", "missing"))?;
        let nodes = t.num(r, "node_num")?.unwrap_or(1.0).max(1.0) as u32;
        let gpus = t.num(r, "gpu_num")?.unwrap_or(0.0);
        let cpus = t.num(r, "cpu_num")?.unwrap_or(0.0);
        let duration = match t.num(r, "duration")? {
            Some(d) if d > 0.0 => Some(d),
            _ => match (t.time(r, "start_time")?, t.time(r, "end_time")?) {
                (Some(s), Some(e)) if e > s => Some(e - s),
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
    done(jobs, skipped)
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
            .num(r, "creation_time")?
            .ok_or_else(|| SimError::trace(r.line, "creation_time", "missing"))?;
        let duration = match (t.num(r, "scheduled_time")?, t.num(r, "deletion_time")?) {
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
        let n = t.num(r, "num_gpu")?.unwrap_or(0.0) as u64;
        let milli = t.num(r, "gpu_milli")?.unwrap_or(1000.0) as u64;
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
    done(jobs, skipped)
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
        if let Some(g) = t.num(r, "gpu")?.filter(|&g| g > 0.0) {
            n = n.capacity(GPU, units(g as u64));
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
                k.clone(),
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
        let last = attempts.iter().rev().find_map(|a| {
            let s = time(a.get("start_time"))?;
            let e = time(a.get("end_time"))?;
            (e > s).then_some((a, e - s))
        });
        let Some((attempt, duration)) = last else {
            skipped.push(Skipped {
                line,
                id,
                reason: "no attempt with a start and an end".into(),
            });
            continue;
        };
        let detail = attempt
            .get("detail")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let servers = detail.len().max(1) as u32;
        let gpus = detail
            .iter()
            .filter_map(|d| d.get("gpus").and_then(Value::as_array).map(Vec::len))
            .max()
            .unwrap_or(0) as u64;
        let mut j = JobSpec::new(&id, submit, duration, servers, gpus);
        j.line = line;
        j.tenant = o
            .get("vc")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned();
        jobs.push(j);
    }
    done(jobs, skipped)
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
