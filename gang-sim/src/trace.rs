//! Workload traces: one job per line, as JSON Lines or CSV.

use serde_json::{Map, Value};

use crate::config::{check_table, Policy, RecoveryMode};
use crate::csv;
use crate::engine::{QuantitySpec, Role, Toleration};
use crate::error::SimError;

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
        Value::Object(m)
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
pub const FIELDS: [&str; 20] = [
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
    /// [`SimError::Trace`] naming the line and the field: malformed JSON, an unknown
    /// field, a missing or ill-typed one, a negative time or duration, a duplicate id.
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
            let Value::Object(obj) = v else {
                return Err(SimError::trace(
                    line,
                    "line",
                    "each line must be a JSON object",
                ));
            };
            jobs.push(job_from_object(obj, line)?);
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
                    c.clone(),
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
                        Ok(v) => v,
                        Err(_) if c == "policy" => Value::String(cell.to_owned()),
                        Err(e) => {
                            return Err(SimError::trace(
                                rec.line,
                                c.clone(),
                                format!("malformed JSON: {e}"),
                            ))
                        }
                    }
                } else if matches!(c.as_str(), "id" | "tenant" | "sensitivity" | "recovery") {
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
            jobs.push(job_from_object(obj, rec.line)?);
        }
        let trace = Trace { jobs };
        trace.check_ids()?;
        Ok(trace)
    }

    /// Reads a file: CSV when its name ends in `.csv`, JSON Lines otherwise.
    ///
    /// # Errors
    /// [`SimError::Io`], or as [`Trace::from_csv`] / [`Trace::from_jsonl`].
    pub fn from_file(path: &str) -> Result<Trace, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
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

/// Seconds: a finite, non-negative number.
fn seconds(v: &Value, line: usize, field: &str) -> Result<f64, SimError> {
    match v.as_f64() {
        Some(x) if (0.0..=1e12).contains(&x) => Ok(x),
        Some(x) if x < 0.0 => Err(SimError::trace(line, field, format!("{x} is negative"))),
        _ => Err(SimError::trace(
            line,
            field,
            format!("{v} is not a number of seconds"),
        )),
    }
}

fn whole(v: &Value, line: usize, field: &str) -> Result<u32, SimError> {
    v.as_u64()
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| SimError::trace(line, field, format!("{v} is not a whole number")))
}

fn string(v: Value, line: usize, field: &str) -> Result<String, SimError> {
    match v {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(SimError::trace(
            line,
            field,
            format!("{other} is not a string"),
        )),
    }
}

/// Deserialises a JSON value, naming the path inside it on error.
fn typed<T: serde::de::DeserializeOwned>(
    v: Value,
    line: usize,
    field: &str,
) -> Result<T, SimError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let f = if path == "." || path == "?" {
            field.to_owned()
        } else if path.starts_with('[') {
            format!("{field}{path}")
        } else {
            format!("{field}.{path}")
        };
        SimError::trace(line, f, e.into_inner().to_string())
    })
}

/// One job from the fields of one line.
fn job_from_object(mut o: Map<String, Value>, line: usize) -> Result<JobSpec, SimError> {
    if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(SimError::trace(
            line,
            k.clone(),
            format!("unknown field {k:?}; known fields: {}", FIELDS.join(", ")),
        ));
    }
    let shorthand = [
        "members",
        "min_members",
        "requests",
        "gpus",
        "selector",
        "tolerations",
    ];
    if o.get("roles").is_some_and(|v| !v.is_null()) {
        if let Some(k) = shorthand
            .iter()
            .find(|k| o.get(**k).is_some_and(|v| !v.is_null()))
        {
            return Err(SimError::trace(
                line,
                *k,
                "give either roles or the one-role shorthand (members, requests, gpus…)",
            ));
        }
    }
    let mut take = |k: &str| o.remove(k).filter(|v| !v.is_null());
    let id = string(
        take("id").ok_or_else(|| SimError::trace(line, "id", "missing"))?,
        line,
        "id",
    )?;
    if id.is_empty() {
        return Err(SimError::trace(line, "id", "empty"));
    }
    let submit = seconds(
        &take("submit").ok_or_else(|| SimError::trace(line, "submit", "missing"))?,
        line,
        "submit",
    )?;
    let duration = seconds(
        &take("duration").ok_or_else(|| SimError::trace(line, "duration", "missing"))?,
        line,
        "duration",
    )?;
    if duration <= 0.0 {
        return Err(SimError::trace(line, "duration", "must be positive"));
    }
    let roles: Vec<Role> = match take("roles") {
        Some(r) => typed(r, line, "roles")?,
        None => {
            let members = whole(
                &take("members").ok_or_else(|| {
                    SimError::trace(line, "roles", "missing: give roles, or members (one role)")
                })?,
                line,
                "members",
            )?;
            let mut role = Role::new("worker", members);
            if let Some(m) = take("min_members") {
                role = role.min_count(whole(&m, line, "min_members")?);
            }
            if let Some(r) = take("requests") {
                let reqs: std::collections::BTreeMap<String, QuantitySpec> =
                    typed(r, line, "requests")?;
                for (k, a) in reqs {
                    role = role.request(k, a);
                }
            }
            if let Some(g) = take("gpus") {
                let x = g
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        SimError::trace(line, "gpus", format!("{g} is not a non-negative number"))
                    })?;
                if x > 0.0 {
                    let m = (x * 1000.0).round() as u64;
                    role = role.request("nvidia.com/gpu", crate::engine::milli_amount(m));
                }
            }
            if let Some(s) = take("selector") {
                let sel: std::collections::BTreeMap<String, String> = typed(s, line, "selector")?;
                for (k, v) in sel {
                    role = role.selector(k, v);
                }
            }
            if let Some(t) = take("tolerations") {
                let ts: Vec<Toleration> = typed(t, line, "tolerations")?;
                for t in ts {
                    role = role.toleration(t);
                }
            }
            vec![role]
        }
    };
    if roles.is_empty() {
        return Err(SimError::trace(line, "roles", "at least one role"));
    }
    let sensitivity = take("sensitivity")
        .map(|v| string(v, line, "sensitivity"))
        .transpose()?;
    let checkpoint = take("checkpoint")
        .map(|v| seconds(&v, line, "checkpoint"))
        .transpose()?;
    if checkpoint == Some(0.0) {
        return Err(SimError::trace(line, "checkpoint", "must be positive"));
    }
    let priority = match take("priority") {
        None => 0,
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|x| x.fract() == 0.0 && x.abs() < 9e15)
                    .map(|x| x as i64)
            })
            .ok_or_else(|| SimError::trace(line, "priority", format!("{v} is not an integer")))?,
    };
    let tenant = take("tenant")
        .map(|v| string(v, line, "tenant"))
        .transpose()?
        .unwrap_or_else(|| "default".to_owned());
    let cancel = take("cancel")
        .map(|v| seconds(&v, line, "cancel"))
        .transpose()?;
    if let Some(c) = cancel {
        if c < submit {
            return Err(SimError::trace(
                line,
                "cancel",
                format!("{c} is before submit ({submit})"),
            ));
        }
    }
    let policy = take("policy")
        .map(|v| Policy::try_from(v).map_err(|m| SimError::trace(line, "policy", m)))
        .transpose()?;
    let recovery = take("recovery")
        .map(|v| typed::<RecoveryMode>(v, line, "recovery"))
        .transpose()?;
    let init_failure = match take("init_failure") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => Some(p),
            _ => {
                return Err(SimError::trace(
                    line,
                    "init_failure",
                    format!("{v} is not a probability"),
                ))
            }
        },
    };
    let failing_members = take("failing_members")
        .map(|v| whole(&v, line, "failing_members"))
        .transpose()?
        .unwrap_or(0);
    let slowdown = take("slowdown")
        .map(|v| typed::<Vec<f64>>(v, line, "slowdown"))
        .transpose()?;
    if let Some(s) = &slowdown {
        check_table(s).map_err(|m| SimError::trace(line, "slowdown", m))?;
    }
    Ok(JobSpec {
        id,
        line,
        submit,
        duration,
        roles,
        sensitivity,
        checkpoint,
        priority,
        tenant,
        cancel,
        policy,
        recovery,
        init_failure,
        failing_members,
        slowdown,
    })
}
