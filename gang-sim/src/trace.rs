//! Workload traces: one job per line, as JSON Lines or CSV.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::{check_table, Policy, RecoveryMode};
use crate::csv;
use crate::error::{without_position, SimError};
use crate::placer::{milli_amount, PreemptionPolicy, QuantitySpec, Role, Toleration};

/// One job of a trace.
///
/// Times are seconds from the start of the trace. A job is one gang: its `roles`
/// (gang-core roles, with counts, `min_count`, per-member requests, selectors and
/// tolerations).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Unique id.
    pub id: String,
    /// Line of the trace it came from (0 when built in code).
    pub line: usize,
    /// Submission time, seconds.
    pub submit: f64,
    /// Ideal run time in seconds: on one node (the best locality).
    pub duration: f64,
    /// The gang's roles.
    pub roles: Vec<Role>,
    /// Sensitivity class (a slowdown table name); `None`: the configuration's default.
    pub sensitivity: Option<String>,
    /// Seconds between checkpoints while running; `None`: no checkpoints (a restart
    /// starts over).
    pub checkpoint: Option<f64>,
    /// Higher runs first.
    pub priority: i64,
    /// Tenant (or queue) the job belongs to.
    pub tenant: String,
    /// Cancellation time, seconds (absolute, not before `submit`).
    pub cancel: Option<f64>,
    /// Placement policy; `None`: the configuration's.
    pub policy: Option<Policy>,
    /// Recovery after a node failure; `None`: the configuration's.
    pub recovery: Option<RecoveryMode>,
    /// Per-member probability of failing to initialise; `None`: the configuration's.
    pub init_failure: Option<f64>,
    /// Members that always fail to initialise (a broken image, say).
    pub failing_members: u32,
    /// The job's own slowdown table (replaces its class's).
    pub slowdown: Option<Vec<f64>>,
    /// Whether the job may be evicted for a job of higher priority when the
    /// configuration's `preemption` is on: `PreemptLowerPriority` (the default) or
    /// `Never` (Kubernetes' names).
    pub preemption_policy: Option<PreemptionPolicy>,
}

impl JobSpec {
    /// A job of `members` members of one role `worker`, each asking `gpus` GPUs
    /// (`nvidia.com/gpu`), with defaults for everything else.
    ///
    /// ```
    /// use gang_sim::JobSpec;
    /// let j = JobSpec::new("j1", 0.0, 3600.0, 4, 2);
    /// assert_eq!((j.roles[0].get_count(), j.tenant.as_str()), (4, "default"));
    /// ```
    pub fn new(id: &str, submit: f64, duration: f64, members: u32, gpus: u64) -> JobSpec {
        let mut role = Role::new("worker", members);
        if gpus > 0 {
            role = role.request("nvidia.com/gpu", gpus);
        }
        JobSpec {
            id: id.to_owned(),
            line: 0,
            submit,
            duration,
            roles: vec![role],
            sensitivity: None,
            checkpoint: None,
            priority: 0,
            tenant: "default".to_owned(),
            cancel: None,
            policy: None,
            recovery: None,
            init_failure: None,
            failing_members: 0,
            slowdown: None,
            preemption_policy: None,
        }
    }

    /// The job as one JSON object (a JSON Lines line), as [`Trace::from_jsonl`] reads it.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().into());
        m.insert("submit".into(), num(self.submit));
        m.insert("duration".into(), num(self.duration));
        m.insert(
            "roles".into(),
            serde_json::to_value(&self.roles).unwrap_or(Value::Null),
        );
        if let Some(s) = &self.sensitivity {
            m.insert("sensitivity".into(), s.clone().into());
        }
        if let Some(c) = self.checkpoint {
            m.insert("checkpoint".into(), num(c));
        }
        if self.priority != 0 {
            m.insert("priority".into(), self.priority.into());
        }
        m.insert("tenant".into(), self.tenant.clone().into());
        if let Some(c) = self.cancel {
            m.insert("cancel".into(), num(c));
        }
        if let Some(p) = &self.policy {
            m.insert("policy".into(), Value::from(p.clone()));
        }
        if let Some(r) = self.recovery {
            m.insert(
                "recovery".into(),
                serde_json::to_value(r).unwrap_or(Value::Null),
            );
        }
        if let Some(p) = self.init_failure {
            m.insert("init_failure".into(), num(p));
        }
        if self.failing_members > 0 {
            m.insert("failing_members".into(), self.failing_members.into());
        }
        if let Some(s) = &self.slowdown {
            m.insert("slowdown".into(), s.iter().map(|&x| num(x)).collect());
        }
        if let Some(p) = self.preemption_policy {
            m.insert("preemption_policy".into(), p.as_str().into());
        }
        Value::Object(m)
    }
}

/// The message for a key given twice in a job's line (`line`: the line as read so
/// far, for the job's id when it has one).
fn given_twice(key: &str, line: &Value) -> String {
    let key = crate::unique::quoted(key);
    match line.get("id") {
        Some(Value::String(id)) => {
            format!("key {key} given twice in job {}", crate::unique::quoted(id))
        }
        Some(Value::Number(n)) => format!("key {key} given twice in job {n}"),
        _ => format!("key {key} given twice"),
    }
}

/// A float as JSON, whole numbers without a fraction.
fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// The fields a trace line may have, in CSV column order.
pub const FIELDS: [&str; 21] = [
    "id",
    "submit",
    "duration",
    "roles",
    "members",
    "min_members",
    "requests",
    "gpus",
    "selector",
    "tolerations",
    "sensitivity",
    "checkpoint",
    "priority",
    "tenant",
    "cancel",
    "policy",
    "recovery",
    "init_failure",
    "failing_members",
    "slowdown",
    "preemption_policy",
];

/// Fields whose CSV cells hold JSON (or, for `policy`, the short text form).
const JSON_FIELDS: [&str; 6] = [
    "roles",
    "requests",
    "selector",
    "tolerations",
    "policy",
    "slowdown",
];

/// A workload: jobs in trace order.
///
/// ```
/// use gang_sim::Trace;
/// let t = Trace::from_jsonl(r#"
/// {"id": "a", "submit": 0, "duration": 600, "members": 4, "gpus": 1, "sensitivity": "low"}
/// {"id": "b", "submit": 30, "duration": 60, "roles": [{"name": "w", "count": 2, "requests": {"nvidia.com/gpu": 8}}], "policy": "required(rack)"}
/// "#)?;
/// assert_eq!(t.jobs.len(), 2);
/// assert_eq!((t.jobs[1].line, t.jobs[1].roles[0].get_count()), (3, 2));
/// let csv = Trace::from_csv("id,submit,duration,members,gpus\na,0,600,4,1\n")?;
/// assert_eq!(csv.jobs[0].roles, t.jobs[0].roles);
/// let err = Trace::from_csv("id,submit,duration,colour\na,0,1,red\n").unwrap_err();
/// assert_eq!((err.kind(), err.field()), ("invalid_trace", "colour"));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    /// The jobs, in trace order.
    pub jobs: Vec<JobSpec>,
}

impl Trace {
    /// A trace of these jobs.
    pub fn new(jobs: Vec<JobSpec>) -> Trace {
        Trace { jobs }
    }

    /// Parses JSON Lines: one JSON object per line; blank lines and lines starting
    /// with `#` are skipped. See [`Trace`] for the fields.
    ///
    /// # Errors
    /// [`SimError::Trace`] naming the line and the field: malformed JSON, a key given
    /// twice in one object (naming the job), an unknown field, a missing or ill-typed
    /// one, a negative time or duration, a duplicate id.
    pub fn from_jsonl(text: &str) -> Result<Trace, SimError> {
        let mut jobs = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let line = i + 1;
            let t = l.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let v: Value = serde_json::from_str(t).map_err(|e| {
                SimError::trace(
                    line,
                    format!("column {}", e.column()),
                    format!("malformed JSON: {e}"),
                )
            })?;
            if !v.is_object() {
                return Err(SimError::trace(
                    line,
                    "line",
                    "each line must be a JSON object",
                ));
            }
            if let Some((path, key)) = crate::unique::first_duplicate(t) {
                return Err(SimError::trace(line, path, given_twice(&key, &v)));
            }
            // Read from the text, not the value: a number keeps the text it was
            // written with (`1e+21`, `2.0` where a quantity goes are read as the
            // strings "1e+21" and "2.0" are, not through a float).
            let mut de = serde_json::Deserializer::from_str(t);
            jobs.push(job_from(&mut de, line)?);
        }
        let trace = Trace { jobs };
        trace.check_ids()?;
        Ok(trace)
    }

    /// Parses CSV with a header row naming the columns (any subset of [`FIELDS`] that
    /// includes `id`, `submit` and `duration`). Cells of `roles`, `requests`,
    /// `selector`, `tolerations` and `slowdown` hold JSON; `policy` holds JSON or the
    /// short text form (`required(rack)`); an empty cell is an absent field.
    ///
    /// # Errors
    /// [`SimError::Trace`] naming the line and the column (an unknown column names line
    /// 1).
    pub fn from_csv(text: &str) -> Result<Trace, SimError> {
        let records = csv::read(text).map_err(|(line, m)| SimError::trace(line, "csv", m))?;
        let mut it = records.into_iter();
        let Some(header) = it.next() else {
            return Ok(Trace::default());
        };
        let cols: Vec<String> = header.fields.iter().map(|c| c.trim().to_owned()).collect();
        for c in &cols {
            if !FIELDS.contains(&c.as_str()) {
                return Err(SimError::trace(
                    header.line,
                    if c.is_empty() { "header" } else { c.as_str() },
                    format!("unknown column {c:?}; known columns: {}", FIELDS.join(", ")),
                ));
            }
        }
        if let Some(dup) = cols
            .iter()
            .enumerate()
            .find(|(i, c)| cols[..*i].contains(c))
        {
            return Err(SimError::trace(
                header.line,
                dup.1.clone(),
                "column repeated",
            ));
        }
        let mut jobs = Vec::new();
        for rec in it {
            if rec.fields.len() != cols.len() {
                return Err(SimError::trace(
                    rec.line,
                    "csv",
                    format!("{} fields, the header has {}", rec.fields.len(), cols.len()),
                ));
            }
            let mut obj = Map::new();
            for (c, cell) in cols.iter().zip(&rec.fields) {
                let cell = cell.trim();
                if cell.is_empty() {
                    continue;
                }
                let v = if JSON_FIELDS.contains(&c.as_str()) {
                    match serde_json::from_str::<Value>(cell) {
                        Ok(v) => {
                            if let Some((path, key)) = crate::unique::first_duplicate(cell) {
                                return Err(SimError::trace(
                                    rec.line,
                                    format!("{c}.{path}"),
                                    given_twice(&key, &Value::Object(obj)),
                                ));
                            }
                            v
                        }
                        Err(_) if c == "policy" => Value::String(cell.to_owned()),
                        Err(e) => {
                            return Err(SimError::trace(
                                rec.line,
                                c.clone(),
                                format!("malformed JSON: {e}"),
                            ))
                        }
                    }
                } else if matches!(
                    c.as_str(),
                    "id" | "tenant" | "sensitivity" | "recovery" | "preemption_policy"
                ) {
                    Value::String(cell.to_owned())
                } else {
                    match cell.parse::<f64>() {
                        Ok(x) if x.is_finite() => num(x),
                        _ => {
                            return Err(SimError::trace(
                                rec.line,
                                c.clone(),
                                format!("{cell:?} is not a number"),
                            ))
                        }
                    }
                };
                obj.insert(c.clone(), v);
            }
            // As JSON text, so that numbers in JSON cells keep their text (as in
            // JSON Lines).
            let text = Value::Object(obj).to_string();
            let mut de = serde_json::Deserializer::from_str(&text);
            jobs.push(job_from(&mut de, rec.line)?);
        }
        let trace = Trace { jobs };
        trace.check_ids()?;
        Ok(trace)
    }

    /// Reads a file: CSV when its name ends in `.csv`, JSON Lines otherwise (at most
    /// [`crate::DEFAULT_MAX_INPUT_BYTES`] bytes).
    ///
    /// # Errors
    /// [`SimError::Io`] (also for a file too large or not UTF-8), or as
    /// [`Trace::from_csv`] / [`Trace::from_jsonl`].
    pub fn from_file(path: &str) -> Result<Trace, SimError> {
        let text = crate::textio::read_sim_file(path, crate::config::DEFAULT_MAX_INPUT_BYTES)?;
        if path.ends_with(".csv") {
            Trace::from_csv(&text)
        } else {
            Trace::from_jsonl(&text)
        }
    }

    /// The trace as JSON Lines, as [`Trace::from_jsonl`] reads it.
    ///
    /// ```
    /// use gang_sim::{JobSpec, Trace};
    /// let t = Trace::new(vec![JobSpec::new("a", 0.0, 60.0, 2, 8)]);
    /// assert_eq!(Trace::from_jsonl(&t.to_jsonl())?.jobs[0].roles, t.jobs[0].roles);
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    pub fn to_jsonl(&self) -> String {
        let mut s = String::new();
        for j in &self.jobs {
            s.push_str(&j.to_json().to_string());
            s.push('\n');
        }
        s
    }

    fn check_ids(&self) -> Result<(), SimError> {
        let mut seen = rustc_hash::FxHashMap::default();
        for j in &self.jobs {
            if let Some(first) = seen.insert(j.id.as_str(), j.line) {
                return Err(SimError::trace(
                    j.line,
                    "id",
                    format!("duplicate id {:?} (first on line {first})", j.id),
                ));
            }
        }
        Ok(())
    }
}

/// One line of a trace as written (JSON Lines, or a CSV row made into an object):
/// every field optional, so that a missing one is reported by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: Option<Text>,
    submit: Option<Seconds>,
    duration: Option<Seconds>,
    roles: Option<Vec<Role>>,
    members: Option<Whole>,
    min_members: Option<Whole>,
    requests: Option<BTreeMap<String, QuantitySpec>>,
    gpus: Option<Gpus>,
    selector: Option<BTreeMap<String, String>>,
    tolerations: Option<Vec<Toleration>>,
    sensitivity: Option<Text>,
    checkpoint: Option<Seconds>,
    priority: Option<Integer>,
    tenant: Option<Text>,
    cancel: Option<Seconds>,
    policy: Option<Policy>,
    recovery: Option<RecoveryMode>,
    init_failure: Option<Probability>,
    failing_members: Option<Whole>,
    slowdown: Option<Vec<f64>>,
    preemption_policy: Option<PreemptionPolicy>,
}

/// A scalar read through a JSON value and checked by `check`, whose message is the
/// error's.
fn scalar<'de, D, T>(d: D, check: impl FnOnce(&Value) -> Result<T, String>) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v = Value::deserialize(d)?;
    check(&v).map_err(serde::de::Error::custom)
}

/// Text: a string, or a number taken as written.
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| match v {
            Value::String(s) => Ok(Text(s.clone())),
            Value::Number(n) => Ok(Text(n.to_string())),
            other => Err(format!("{other} is not a string")),
        })
    }
}

/// Seconds: a finite, non-negative number (at most 10^12).
struct Seconds(f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| match v.as_f64() {
            Some(x) if (0.0..=1e12).contains(&x) => Ok(Seconds(x)),
            Some(x) if x < 0.0 => Err(format!("{x} is negative")),
            _ => Err(format!("{v} is not a number of seconds")),
        })
    }
}

/// A whole number that fits in 32 bits.
struct Whole(u32);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| {
            v.as_u64()
                .and_then(|x| u32::try_from(x).ok())
                .map(Whole)
                .ok_or_else(|| format!("{v} is not a whole number"))
        })
    }
}

/// An integer, also written as a float without a fraction (`3.0`).
struct Integer(i64);

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| {
            v.as_i64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|x| x.fract() == 0.0 && x.abs() < 9e15)
                        .map(|x| x as i64)
                })
                .map(Integer)
                .ok_or_else(|| format!("{v} is not an integer"))
        })
    }
}

/// A probability: a number in `[0, 1]`.
struct Probability(f64);

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| match v.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => Ok(Probability(p)),
            _ => Err(format!("{v} is not a probability")),
        })
    }
}

/// GPUs per member: a finite, non-negative number (fractions are milli-GPUs).
struct Gpus(f64);

impl<'de> Deserialize<'de> for Gpus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, |v| {
            v.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(Gpus)
                .ok_or_else(|| format!("{v} is not a non-negative number"))
        })
    }
}

/// One job from the object of one line, on trace line `line`.
fn job_from<'de, D: serde::Deserializer<'de>>(d: D, line: usize) -> Result<JobSpec, SimError>
where
    D::Error: std::fmt::Display,
{
    let l: Line = serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        // An unknown empty key has the empty path: name the line.
        let field = if path == "." || path == "?" || path.is_empty() {
            "line".to_owned()
        } else {
            path
        };
        SimError::trace(line, field, without_position(&e.into_inner().to_string()))
    })?;
    let err = |field: &str, message: &str| SimError::trace(line, field, message);
    if l.roles.is_some() {
        let shorthand = [
            ("members", l.members.is_some()),
            ("min_members", l.min_members.is_some()),
            ("requests", l.requests.is_some()),
            ("gpus", l.gpus.is_some()),
            ("selector", l.selector.is_some()),
            ("tolerations", l.tolerations.is_some()),
        ];
        if let Some((k, _)) = shorthand.iter().find(|(_, given)| *given) {
            return Err(err(
                k,
                "give either roles or the one-role shorthand (members, requests, gpus…)",
            ));
        }
    }
    let id = l.id.ok_or_else(|| err("id", "missing"))?.0;
    if id.is_empty() {
        return Err(err("id", "empty"));
    }
    let submit = l.submit.ok_or_else(|| err("submit", "missing"))?.0;
    let duration = l.duration.ok_or_else(|| err("duration", "missing"))?.0;
    if duration <= 0.0 {
        return Err(err("duration", "must be positive"));
    }
    let roles = match l.roles {
        Some(roles) => roles,
        None => {
            let members = l
                .members
                .ok_or_else(|| err("roles", "missing: give roles, or members (one role)"))?;
            let mut role = Role::new("worker", members.0);
            if let Some(m) = l.min_members {
                role = role.min_count(m.0);
            }
            for (k, a) in l.requests.unwrap_or_default() {
                role = role.request(k, a);
            }
            if let Some(Gpus(x)) = l.gpus {
                if x > 0.0 {
                    let m = (x * 1000.0).round() as u64;
                    role = role.request("nvidia.com/gpu", milli_amount(m));
                }
            }
            for (k, v) in l.selector.unwrap_or_default() {
                role = role.selector(k, v);
            }
            for t in l.tolerations.unwrap_or_default() {
                role = role.toleration(t);
            }
            vec![role]
        }
    };
    if roles.is_empty() {
        return Err(err("roles", "at least one role"));
    }
    let checkpoint = l.checkpoint.map(|c| c.0);
    if checkpoint == Some(0.0) {
        return Err(err("checkpoint", "must be positive"));
    }
    let cancel = l.cancel.map(|c| c.0);
    if let Some(c) = cancel {
        if c < submit {
            return Err(err("cancel", &format!("{c} is before submit ({submit})")));
        }
    }
    if let Some(s) = &l.slowdown {
        check_table(s).map_err(|m| err("slowdown", &m))?;
    }
    Ok(JobSpec {
        id,
        line,
        submit,
        duration,
        roles,
        sensitivity: l.sensitivity.map(|s| s.0),
        checkpoint,
        priority: l.priority.map_or(0, |p| p.0),
        tenant: l.tenant.map_or_else(|| "default".to_owned(), |t| t.0),
        cancel,
        policy: l.policy,
        recovery: l.recovery,
        init_failure: l.init_failure.map(|p| p.0),
        failing_members: l.failing_members.map_or(0, |w| w.0),
        slowdown: l.slowdown,
        preemption_policy: l.preemption_policy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_the_lines_fields() {
        // Every field of FIELDS is read (all null: absent), and an unknown one is named
        // with the list serde gives, which is FIELDS.
        let all: serde_json::Map<String, Value> = FIELDS
            .iter()
            .map(|f| ((*f).to_owned(), Value::Null))
            .collect();
        let e = job_from(Value::Object(all), 4).unwrap_err();
        assert_eq!((e.field(), e.to_string().contains("missing")), ("id", true));
        let e = job_from(serde_json::json!({"colour": 1}), 4).unwrap_err();
        assert_eq!(e.field(), "colour");
        let listed = FIELDS.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>();
        assert!(e.to_string().contains(&listed.join(", ")), "{e}");
    }

    #[test]
    fn errors_inside_values_name_the_path() {
        let line = |extra: &str| {
            let text = format!(r#"{{"id": "x", "submit": 0, "duration": 5, {extra}}}"#);
            job_from(&mut serde_json::Deserializer::from_str(&text), 2).unwrap_err()
        };
        for (extra, field) in [
            (r#""members": 1, "requests": {"cpu": [1]}"#, "requests.cpu"),
            (r#""members": 1, "selector": {"a": 1}"#, "selector.a"),
            (
                r#""members": 1, "tolerations": [{"key": 1}]"#,
                "tolerations[0].key",
            ),
            (r#""members": 1, "slowdown": [1, "a"]"#, "slowdown[1]"),
            (
                r#""roles": [{"name": "w", "count": "many"}]"#,
                "roles[0].count",
            ),
            (r#""members": 1.5"#, "members"),
            (r#""members": 1, "priority": 2.5"#, "priority"),
        ] {
            let e = line(extra);
            assert_eq!(e.field(), field, "{extra}: {e}");
            assert!(e.to_string().starts_with("trace line 2, field "), "{e}");
        }
        // Messages say what is wrong with the value.
        assert!(line(r#""members": 1.5"#)
            .to_string()
            .ends_with("1.5 is not a whole number"));
        assert!(line(r#""members": 1, "priority": 2.5"#)
            .to_string()
            .ends_with("2.5 is not an integer"));
    }
}
