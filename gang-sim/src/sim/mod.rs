//! The discrete-event loop.
//!
//! See the crate documentation ("Event semantics") for the normative description; the
//! comments here point at it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::config::{Discipline, Policy, RecoveryMode, Requeue, SimConfig};
use crate::engine::{
    request_error, role_request, Cluster, Engine, GangShape, Replaced, Req, ResId, Role,
};
use crate::error::SimError;
use crate::output::{FinalState, Group, JobRecord, Profile, Sample, SimResult, Summary};
use crate::rng::{draw, ln};
use crate::trace::Trace;
use crate::waiting::{Key, Waiting};

/// Milliseconds since the start of the trace.
type Ms = u64;

/// Seconds (as given) to milliseconds, rounded to the nearest.
pub(crate) fn ms(s: f64) -> Ms {
    (s * 1000.0).round().max(0.0) as Ms
}

fn secs(t: Ms) -> f64 {
    t as f64 / 1000.0
}

/// milli-GPU × ms to GPU-hours.
fn gpu_hours(x: u128) -> f64 {
    x as f64 / 3.6e9
}

// Event classes, in the order they are handled at equal times (crate docs).
const FINISH: u8 = 0;
const CANCEL: u8 = 1;
const REPAIR: u8 = 2;
const FAIL: u8 = 3;
const READY: u8 = 4;
const TIMEOUT: u8 = 5;
const REQUEUE: u8 = 6;
const RELAX: u8 = 7;
const ARRIVE: u8 = 8;

// Random streams (the second word of every draw key).
const STREAM_INIT: u64 = 1;
const STREAM_FAIL_TIME: u64 = 2;
const STREAM_FAIL_NODE: u64 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ev {
    t: Ms,
    class: u8,
    /// Job index, or node index for repairs, or failure number for failures.
    who: u64,
    seq: u64,
    epoch: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Unsubmitted,
    Queued,
    Backoff,
    Starting,
    Running,
    /// Lost members; `waiting`: no replacement yet (else replacements are starting).
    Paused {
        waiting: bool,
    },
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    None,
    Init,
    Running,
    Paused,
}

#[derive(Debug, Clone)]
enum Kind {
    /// One gang; `variants[step]` is the request in force (timed relaxation walks up).
    Gang {
        variants: Vec<usize>,
        after: Option<Ms>,
    },
    /// Replicas of one gang in distinct domains.
    Spread {
        req: usize,
        replicas: u32,
        level: String,
    },
    /// Members placed one at a time: per role, the one-member request and the count.
    NoGang { pods: Vec<(usize, u32)> },
}

#[derive(Debug, Clone, Copy, Default)]
struct Acct {
    held: u128,
    useful: u128,
    wasted: u128,
    idle: u128,
    before: u128,
    /// Held during the current attempt's initialisation, not yet classified.
    init: u128,
}

#[derive(Debug)]
struct Job {
    id: String,
    tenant: u32,
    priority: i64,
    submit: Ms,
    cancel: Option<Ms>,
    remaining: f64,
    checkpoint: Option<Ms>,
    table: usize,
    class_name: String,
    recovery: RecoveryMode,
    init_p: f64,
    failing: u32,
    kind: Kind,
    label: usize,
    members: u64,
    gpus: u64,
    never_fits: Option<String>,
    step: usize,
    st: St,
    epoch: u64,
    order: u64,
    orig_order: u64,
    res: Vec<ResId>,
    g: u64,
    open: Ms,
    phase: Phase,
    acct: Acct,
    progressed: bool,
    first_admitted: Option<Ms>,
    admitted: Option<Ms>,
    all_ready: Option<Ms>,
    end: Option<Ms>,
    attempts: u32,
    readiness_failures: u32,
    node_failures: u32,
    restarts: u32,
    replacements: u32,
    seg_start: Ms,
    slowdown: f64,
    span: Option<usize>,
    run_ms: Ms,
    lost_ms: Ms,
    pause_deadline: Option<Ms>,
    replace_tried: u64,
    pending_reason: Option<String>,
    pods_placed: u64,
    attempt_fails: bool,
    first_pod: Ms,
    fin: Option<(FinalState, String)>,
}

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
/// assert_eq!((small.queue_delay, small.level.as_deref()), (Some(0.0), Some("node")));
/// assert_eq!(result.job("big").unwrap().completion, Some(3600.0 * 1.5)); // two nodes: medium, rack
/// assert_eq!(result.summary.all.states["completed"], 2);
/// # Ok::<(), gang_sim::SimError>(())
/// ```
pub struct Simulation {
    cfg: SimConfig,
    e: Engine,
    reqs: Vec<Req>,
    /// Per request: 1 + the free-capacity epoch at which it was last found not to fit.
    memo: Vec<u64>,
    /// Per request: its roles' one-member gangs (for the backfill rule), once asked.
    pods_of: FxHashMap<usize, Vec<crate::engine::Req>>,
    /// The requests that fit the free cluster but were not backfilled beside the head,
    /// and the state (version, head) that answer holds for: until the inventory or the
    /// head changes, asking again would cordon the same nodes and fail the same way.
    backfill_fails: ((u64, (i64, u64)), FxHashSet<usize>),
    fits_empty: Vec<Option<bool>>,
    jobs: Vec<Job>,
    tables: Vec<Vec<f64>>,
    labels: Vec<String>,
    tenants: Vec<String>,
    owner: FxHashMap<ResId, u32>,
    queue: Waiting,
    pods: BTreeMap<(i64, u64, u64, u32), u16>,
    pending_pods: FxHashMap<u32, u32>,
    /// Pending no-gang members per request.
    pod_reqs: BTreeMap<usize, u32>,
    paused: BTreeSet<u32>,
    heap: BinaryHeap<Reverse<Ev>>,
    seq: u64,
    order_seq: u64,
    now: Ms,
    free_epoch: u64,
    dirty: bool,
    live: usize,
    busy: u64,
    held_integral: u128,
    busy_integral: u128,
    last_t: Ms,
    timeline: Vec<Sample>,
    next_sample: Ms,
    interval: Ms,
    frag_cache: Option<(u64, f64)>,
    state_version: u64,
    check: bool,
    events: u64,
    passes: u64,
    /// Jobs in a final state.
    done: usize,
    setup_ns: u64,
    probe_ns: u64,
    started: Option<Instant>,
}

impl Simulation {
    /// Checks and compiles everything; nothing is simulated yet.
    ///
    /// # Errors
    /// [`SimError::Config`] for an invalid configuration (a policy level the cluster
    /// does not have, an unknown default sensitivity…); [`SimError::Trace`] naming the
    /// job's line and field for a job gang-core rejects (an unknown level, a bad
    /// quantity, `min_count` above `count`) or that names an unknown sensitivity class.
    /// Jobs that are valid but can never fit are not errors: they end `never_fits`.
    pub fn new(cluster: Cluster, trace: Trace, config: SimConfig) -> Result<Simulation, SimError> {
        let t0 = Instant::now();
        config.check()?;
        let e = Engine::new(cluster, &config.gpu_resource);
        let check = config.check_invariants.unwrap_or(cfg!(debug_assertions));
        let mut sim = Simulation {
            interval: ms(config.sample_interval).max(1),
            e,
            reqs: Vec::new(),
            memo: Vec::new(),
            pods_of: FxHashMap::default(),
            backfill_fails: ((u64::MAX, (0, 0)), FxHashSet::default()),
            fits_empty: Vec::new(),
            jobs: Vec::with_capacity(trace.jobs.len()),
            tables: Vec::new(),
            labels: Vec::new(),
            tenants: Vec::new(),
            owner: FxHashMap::default(),
            queue: Waiting::default(),
            pods: BTreeMap::new(),
            pending_pods: FxHashMap::default(),
            pod_reqs: BTreeMap::new(),
            paused: BTreeSet::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            order_seq: 0,
            now: 0,
            free_epoch: 0,
            dirty: false,
            live: 0,
            busy: 0,
            held_integral: 0,
            busy_integral: 0,
            last_t: 0,
            timeline: Vec::new(),
            next_sample: 0,
            frag_cache: None,
            state_version: 0,
            check,
            events: 0,
            passes: 0,
            done: 0,
            setup_ns: 0,
            probe_ns: 0,
            started: None,
            cfg: config,
        };
        sim.e.set_profiling(sim.cfg.profile);
        sim.build(trace)?;
        sim.setup_ns = t0.elapsed().as_nanos() as u64;
        Ok(sim)
    }

    /// The full level key `name` stands for: itself, or the one level whose last path
    /// segment it is.
    fn resolve_level(&self, name: &str) -> Result<String, String> {
        let levels = self.e.levels();
        if levels.iter().any(|l| l == name) {
            return Ok(name.to_owned());
        }
        let m: Vec<&String> = levels
            .iter()
            .filter(|l| l.rsplit('/').next() == Some(name))
            .collect();
        match m.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Err(format!(
                "unknown level {name:?}; the cluster's levels are {levels:?}"
            )),
        }
    }

    fn intern<T: PartialEq + Clone>(v: &mut Vec<T>, x: &T) -> usize {
        match v.iter().position(|y| y == x) {
            Some(i) => i,
            None => {
                v.push(x.clone());
                v.len() - 1
            }
        }
    }

    fn build(&mut self, trace: Trace) -> Result<(), SimError> {
        let class_tables = self.cfg.slowdown_tables();
        let mut req_index: FxHashMap<(String, GangShape), usize> = FxHashMap::default();
        let mut spread_empty: FxHashMap<(usize, u32, String), Option<String>> =
            FxHashMap::default();
        let default_policy = self.cfg.policy.clone();
        for spec in trace.jobs {
            let line = spec.line;
            let (policy, from_job) = match &spec.policy {
                Some(p) => (p.clone(), true),
                None => (default_policy.clone(), false),
            };
            let perr = |m: String| {
                if from_job {
                    SimError::trace(line, "policy", m)
                } else {
                    SimError::config("policy", m)
                }
            };
            let class_name = spec
                .sensitivity
                .clone()
                .unwrap_or_else(|| self.cfg.default_sensitivity.clone());
            let table = match &spec.slowdown {
                Some(t) => t.clone(),
                None => class_tables.get(&class_name).cloned().ok_or_else(|| {
                    SimError::trace(
                        line,
                        "sensitivity",
                        format!(
                            "unknown sensitivity class {class_name:?}; known: {:?}",
                            class_tables.keys().collect::<Vec<_>>()
                        ),
                    )
                })?,
            };
            let class_name = if spec.slowdown.is_some() {
                "job".to_owned()
            } else {
                class_name
            };
            let roles_key = serde_json::to_string(&spec.roles).unwrap_or_default();
            let mut compile = |sim: &mut Simulation,
                               roles: &[Role],
                               key: &str,
                               shape: GangShape|
             -> Result<usize, SimError> {
                let k = (key.to_owned(), shape.clone());
                if let Some(&i) = req_index.get(&k) {
                    return Ok(i);
                }
                let name = format!("req{}", sim.reqs.len());
                let r = sim.e.compile(&name, roles, &shape).map_err(|e| {
                    let (f, m) = request_error(&e);
                    if f.starts_with("topology") {
                        perr(m)
                    } else {
                        SimError::trace(line, f, m)
                    }
                })?;
                sim.reqs.push(r);
                sim.memo.push(0);
                sim.fits_empty.push(None);
                req_index.insert(k, sim.reqs.len() - 1);
                Ok(sim.reqs.len() - 1)
            };
            let level = |sim: &Simulation, l: &str| sim.resolve_level(l).map_err(perr);
            let kind = match &policy {
                Policy::Required { level: l } => {
                    let l = level(self, l)?;
                    Kind::Gang {
                        variants: vec![compile(
                            self,
                            &spec.roles,
                            &roles_key,
                            GangShape::Required(l),
                        )?],
                        after: None,
                    }
                }
                Policy::Preferred { level: l } => {
                    let l = level(self, l)?;
                    Kind::Gang {
                        variants: vec![compile(
                            self,
                            &spec.roles,
                            &roles_key,
                            GangShape::Preferred(l),
                        )?],
                        after: None,
                    }
                }
                Policy::Unconstrained => Kind::Gang {
                    variants: vec![compile(
                        self,
                        &spec.roles,
                        &roles_key,
                        GangShape::Unconstrained,
                    )?],
                    after: None,
                },
                Policy::Timed { level: l, after } => {
                    let l = level(self, l)?;
                    let levels = self.e.levels().to_vec();
                    let d = levels.iter().position(|x| *x == l).unwrap_or(0);
                    let mut variants = Vec::new();
                    for lv in levels[..=d].iter().rev() {
                        variants.push(compile(
                            self,
                            &spec.roles,
                            &roles_key,
                            GangShape::Required(lv.clone()),
                        )?);
                    }
                    variants.push(compile(
                        self,
                        &spec.roles,
                        &roles_key,
                        GangShape::Unconstrained,
                    )?);
                    Kind::Gang {
                        variants,
                        after: Some(ms(*after)),
                    }
                }
                Policy::Spread { replicas, level: l } => {
                    let l = level(self, l)?;
                    let req = compile(self, &spec.roles, &roles_key, GangShape::Unconstrained)?;
                    Kind::Spread {
                        req,
                        replicas: *replicas,
                        level: l,
                    }
                }
                Policy::NoGang => {
                    let mut pods = Vec::new();
                    for r in &spec.roles {
                        let mut one = r.clone();
                        one.set_count(1);
                        one.set_min_count(None);
                        let key = serde_json::to_string(&one).unwrap_or_default();
                        let req = compile(self, &[one], &key, GangShape::Unconstrained)?;
                        pods.push((req, r.get_min_count().unwrap_or(r.get_count())));
                    }
                    Kind::NoGang { pods }
                }
            };
            // Can it ever fit (on the cluster as given, nothing held, nothing failed)?
            let never_fits = match &kind {
                Kind::Gang { variants, .. } => {
                    let last = variants[variants.len() - 1];
                    if self.fits_empty_req(last)? {
                        None
                    } else {
                        let shape = match (&policy, variants.len()) {
                            (_, n) if n > 1 => GangShape::Unconstrained,
                            (Policy::Required { .. }, _) => GangShape::Required(
                                self.resolve_level(policy_level(&policy))
                                    .unwrap_or_default(),
                            ),
                            (Policy::Preferred { .. }, _) => GangShape::Preferred(
                                self.resolve_level(policy_level(&policy))
                                    .unwrap_or_default(),
                            ),
                            _ => GangShape::Unconstrained,
                        };
                        Some(self.diagnose(&spec.id, &spec.roles, &shape))
                    }
                }
                Kind::Spread {
                    req,
                    replicas,
                    level,
                } => {
                    let k = (*req, *replicas, level.clone());
                    match spread_empty.get(&k) {
                        Some(x) => x.clone(),
                        None => {
                            let x = self.e.spread_empty(&self.reqs[*req], *replicas, level)?;
                            spread_empty.insert(k, x.clone());
                            x
                        }
                    }
                }
                Kind::NoGang { pods } => {
                    let mut why = None;
                    for (i, &(req, _)) in pods.iter().enumerate() {
                        if !self.fits_empty_req(req)? {
                            let role = &spec.roles[i];
                            let mut one = role.clone();
                            one.set_count(1);
                            one.set_min_count(None);
                            why = Some(self.diagnose(&spec.id, &[one], &GangShape::Unconstrained));
                            break;
                        }
                    }
                    why
                }
            };
            let mut members = 0u64;
            let mut gpus = 0u64;
            for r in &spec.roles {
                let per = role_request(r, &self.cfg.gpu_resource).map_err(|m| {
                    SimError::trace(line, format!("roles[{}].requests", r.get_name()), m)
                })?;
                members += u64::from(r.get_count());
                gpus += per * u64::from(r.get_count());
            }
            if let Kind::Spread { replicas, .. } = &kind {
                members *= u64::from(*replicas);
                gpus *= u64::from(*replicas);
            }
            let label_text = policy.to_string();
            let label = Self::intern(&mut self.labels, &label_text);
            let tenant = Self::intern(&mut self.tenants, &spec.tenant) as u32;
            let table = Self::intern(&mut self.tables, &table);
            let recovery = spec.recovery.unwrap_or(self.cfg.recovery.mode);
            let j = Job {
                id: spec.id,
                tenant,
                priority: spec.priority,
                submit: ms(spec.submit),
                cancel: spec.cancel.map(ms),
                remaining: ms(spec.duration) as f64,
                checkpoint: spec.checkpoint.map(ms).filter(|&c| c > 0),
                table,
                class_name,
                recovery,
                init_p: spec.init_failure.unwrap_or(self.cfg.readiness.init_failure),
                failing: spec.failing_members,
                kind,
                label,
                members,
                gpus,
                never_fits,
                step: 0,
                st: St::Unsubmitted,
                epoch: 0,
                order: 0,
                orig_order: 0,
                res: Vec::new(),
                g: 0,
                open: 0,
                phase: Phase::None,
                acct: Acct::default(),
                progressed: false,
                first_admitted: None,
                admitted: None,
                all_ready: None,
                end: None,
                attempts: 0,
                readiness_failures: 0,
                node_failures: 0,
                restarts: 0,
                replacements: 0,
                seg_start: 0,
                slowdown: 1.0,
                span: None,
                run_ms: 0,
                lost_ms: 0,
                pause_deadline: None,
                replace_tried: 0,
                pending_reason: None,
                pods_placed: 0,
                attempt_fails: false,
                first_pod: 0,
                fin: None,
            };
            self.jobs.push(j);
        }
        for i in 0..self.jobs.len() {
            let (submit, cancel) = (self.jobs[i].submit, self.jobs[i].cancel);
            self.push(submit, ARRIVE, i as u64, 0);
            if let Some(c) = cancel {
                self.push(c, CANCEL, i as u64, 0);
            }
        }
        if self.cfg.failures.node_rate_per_hour > 0.0 && self.e.node_count() > 0 {
            self.arm_failures(0);
        }
        for (i, f) in self.cfg.failures.scheduled.clone().iter().enumerate() {
            let node = self.e.node_index(&f.node).ok_or_else(|| {
                SimError::config(
                    format!("failures.scheduled[{i}].node"),
                    format!("no node named {:?}", f.node),
                )
            })?;
            // epoch 1 marks a scheduled failure (`who` is the node).
            self.push(ms(f.at), FAIL, node as u64, 1);
        }
        Ok(())
    }

    fn fits_empty_req(&mut self, req: usize) -> Result<bool, SimError> {
        if let Some(f) = self.fits_empty[req] {
            return Ok(f);
        }
        let f = self.e.fits_empty(&self.reqs[req])?;
        self.fits_empty[req] = Some(f);
        Ok(f)
    }

    /// gang-core's diagnosis of a gang named after the job, on the cluster as given.
    fn diagnose(&mut self, id: &str, roles: &[Role], shape: &GangShape) -> String {
        match self.e.compile(id, roles, shape) {
            Ok(r) => self.e.diagnose_empty(&r),
            Err(e) => e.to_string(),
        }
    }

    fn push(&mut self, t: Ms, class: u8, who: u64, epoch: u64) {
        self.seq += 1;
        if class != FAIL {
            self.live += 1;
        }
        self.heap.push(Reverse(Ev {
            t,
            class,
            who,
            seq: self.seq,
            epoch,
        }));
    }

    /// Schedules failure number `k` after an exponential gap from now.
    fn arm_failures(&mut self, k: u64) {
        let rate_per_ms = self.cfg.failures.node_rate_per_hour * self.e.node_count() as f64 / 3.6e6;
        let u = draw(&[self.cfg.seed, STREAM_FAIL_TIME, k]);
        let gap = -ln(1.0 - u) / rate_per_ms;
        let gap = if gap.is_finite() {
            gap.ceil().max(1.0) as Ms
        } else {
            Ms::MAX / 4
        };
        self.push(self.now.saturating_add(gap), FAIL, k, 0);
    }

    /// Runs the simulation to its end.
    ///
    /// # Errors
    /// [`SimError::Internal`] only: an invariant violated (a bug; with invariant checks
    /// on, the first violation is reported with the time and the job).
    pub fn run(mut self) -> Result<SimResult, SimError> {
        self.started = Some(Instant::now());
        let horizon = self.cfg.horizon.map(ms);
        let mut end = 0;
        loop {
            let Some(&Reverse(next)) = self.heap.peek() else {
                if let Some(h) = horizon {
                    end = end.max(h);
                }
                break;
            };
            // Stale timers (of a state the job has left) are invisible: they do not
            // even move the clock.
            if self.is_stale(&next) {
                self.heap.pop();
                if next.class != FAIL {
                    self.live -= 1;
                }
                continue;
            }
            // Only the failure process is left: nothing else can happen (time still runs
            // to the horizon, if there is one). `live` also counts timers that went
            // stale while still in the heap, so when a failure is next, look for a
            // timer that is still live.
            if self.live == 0 || (next.class == FAIL && !self.live_timer_left()) {
                if let Some(h) = horizon {
                    end = end.max(h);
                }
                break;
            }
            if let Some(h) = horizon {
                if next.t > h {
                    end = h;
                    break;
                }
            }
            if next.t < self.now {
                return Err(SimError::Internal(format!(
                    "time went backwards: {} after {}",
                    next.t, self.now
                )));
            }
            self.samples_before(next.t)?;
            self.advance(next.t);
            self.now = next.t;
            while let Some(&Reverse(ev)) = self.heap.peek() {
                if ev.t != self.now {
                    break;
                }
                self.heap.pop();
                if ev.class != FAIL {
                    self.live -= 1;
                }
                if self.is_stale(&ev) {
                    continue;
                }
                self.events += 1;
                self.handle(ev)?;
                if self.check {
                    self.validate().map_err(|m| {
                        SimError::Internal(format!("after event {ev:?} at {}: {m}", self.now))
                    })?;
                }
            }
            if self.dirty {
                self.pass()?;
                if self.check {
                    self.validate().map_err(|m| {
                        SimError::Internal(format!("after the pass at {}: {m}", self.now))
                    })?;
                }
            }
            end = self.now;
            if self.done == self.jobs.len() {
                break;
            }
        }
        let end = end.max(self.now);
        self.samples_before(end + 1)?;
        self.advance(end);
        self.now = end;
        self.finish_all()?;
        self.result(end)
    }

    /// Whether the heap holds an event other than a failure that is not stale: something
    /// that can still happen besides the failure process.
    fn live_timer_left(&self) -> bool {
        self.heap
            .iter()
            .any(|Reverse(e)| e.class != FAIL && !self.is_stale(e))
    }

    /// Whether an event is a timer of a state its job has since left.
    fn is_stale(&self, ev: &Ev) -> bool {
        matches!(ev.class, FINISH | READY | TIMEOUT | REQUEUE | RELAX)
            && self
                .jobs
                .get(ev.who as usize)
                .is_none_or(|j| j.epoch != ev.epoch)
    }

    /// Integrals up to `t`.
    fn advance(&mut self, t: Ms) {
        let dt = u128::from(t.saturating_sub(self.last_t));
        self.held_integral += u128::from(self.e.held_gpu()) * dt;
        self.busy_integral += u128::from(self.busy) * dt;
        self.last_t = self.last_t.max(t);
    }

    // ---- timeline ------------------------------------------------------------------

    fn samples_before(&mut self, t: Ms) -> Result<(), SimError> {
        while self.next_sample < t {
            let s = self.sample(self.next_sample)?;
            self.timeline.push(s);
            self.next_sample = self.next_sample.saturating_add(self.interval);
        }
        Ok(())
    }

    fn sample(&mut self, at: Ms) -> Result<Sample, SimError> {
        let total = self.e.allocatable_gpu();
        let frag = match self.frag_cache {
            Some((v, f)) if v == self.state_version => f,
            _ => {
                let t = self.cfg.profile.then(Instant::now);
                let f = self.probe()? as f64 / 1000.0;
                self.probe_ns += t.map_or(0, |t| t.elapsed().as_nanos() as u64);
                self.frag_cache = Some((self.state_version, f));
                f
            }
        };
        let queued = self.queue.len() + self.pending_pods.len();
        let running = self.jobs.iter().filter(|j| j.st == St::Running).count();
        Ok(Sample {
            time: secs(at),
            held_gpus: self.e.held_gpu() as f64 / 1000.0,
            busy_gpus: self.busy as f64 / 1000.0,
            free_gpus: self.e.free_gpu() as f64 / 1000.0,
            fragmented_gpus: frag,
            utilisation: if total > 0 {
                self.e.held_gpu() as f64 / total as f64
            } else {
                0.0
            },
            queued,
            running,
            failed_nodes: self.e.failed_nodes(),
        })
    }

    /// Free GPUs (milli) left after placing, as a trial, every waiting gang that fits,
    /// in queue order; everything is given back after. 0 when nothing waits.
    fn probe(&mut self) -> Result<u64, SimError> {
        if self.queue.is_empty() && self.pods.is_empty() {
            return Ok(0);
        }
        let mut failed = vec![false; self.reqs.len()];
        let mut trial: Vec<ResId> = Vec::new();
        let waiting: Vec<u32> = self.queue.jobs().collect();
        for j in waiting {
            match self.jobs[j as usize].kind.clone() {
                Kind::Gang { variants, .. } => {
                    let r = variants[self.jobs[j as usize].step];
                    if failed[r] {
                        continue;
                    }
                    match self.e.find(&self.reqs[r])? {
                        Some(f) => trial.push(self.e.reserve(f)?),
                        None => failed[r] = true,
                    }
                }
                Kind::Spread {
                    req,
                    replicas,
                    level,
                } => {
                    if let Some(ids) = self.e.spread(&self.reqs[req], replicas, &level)? {
                        trial.extend(ids);
                    }
                }
                Kind::NoGang { .. } => {}
            }
        }
        let pods: Vec<((i64, u64, u64, u32), u16)> =
            self.pods.iter().map(|(k, v)| (*k, *v)).collect();
        for ((_, _, _, j), role) in pods {
            let Kind::NoGang { pods } = &self.jobs[j as usize].kind else {
                continue;
            };
            let r = pods[role as usize].0;
            if failed[r] {
                continue;
            }
            match self.e.find(&self.reqs[r])? {
                Some(f) => trial.push(self.e.reserve(f)?),
                None => failed[r] = true,
            }
        }
        let left = self.e.free_gpu();
        for id in trial {
            self.e.release(id)?;
        }
        Ok(left)
    }

    // ---- accounting ------------------------------------------------------------------

    /// Closes the job's open holding interval at `now`, attributing it to its phase.
    fn close(&mut self, j: usize) {
        let now = self.now;
        let job = &mut self.jobs[j];
        let amount = u128::from(job.g) * u128::from(now.saturating_sub(job.open));
        job.open = now;
        if amount == 0 {
            return;
        }
        job.acct.held += amount;
        if !job.progressed {
            job.acct.before += amount;
        }
        match job.phase {
            Phase::Init => job.acct.init += amount,
            Phase::Paused => job.acct.idle += amount,
            // Running intervals are classified by the caller (saved vs lost work).
            Phase::Running => job.acct.useful += amount,
            Phase::None => job.acct.idle += amount,
        }
    }

    /// Re-reads what the job's reservations hold.
    fn regather(&mut self, j: usize) {
        let g: u64 = self.jobs[j].res.iter().map(|&id| self.e.gpu_of(id)).sum();
        self.jobs[j].g = g;
    }

    fn set_phase(&mut self, j: usize, p: Phase) {
        self.close(j);
        let job = &mut self.jobs[j];
        if job.phase == Phase::Running {
            self.busy -= job.g;
        }
        job.phase = p;
        if p == Phase::Running {
            self.busy += job.g;
        }
    }

    /// Releases everything the job holds (after its interval was closed).
    fn release_all(&mut self, j: usize) -> Result<(), SimError> {
        let res = std::mem::take(&mut self.jobs[j].res);
        for id in res {
            self.owner.remove(&id);
            self.e.release(id)?;
        }
        if self.jobs[j].phase == Phase::Running {
            self.busy -= self.jobs[j].g;
        }
        self.jobs[j].g = 0;
        self.jobs[j].phase = Phase::None;
        self.free_epoch += 1;
        self.state_version += 1;
        self.dirty = true;
        self.paused.remove(&(j as u32));
        self.remove_pods(j);
        Ok(())
    }

    fn finish(&mut self, j: usize, state: FinalState, reason: String) {
        let now = self.now;
        self.done += 1;
        let job = &mut self.jobs[j];
        job.st = St::Done;
        job.end = Some(now);
        job.fin = Some((state, reason));
        job.epoch += 1;
    }

    // ---- events ----------------------------------------------------------------------

    fn handle(&mut self, ev: Ev) -> Result<(), SimError> {
        let j = ev.who as usize;
        // Timers of states the job has left never get here (`is_stale`).
        let st = self.jobs.get(j).map(|job| job.st);
        match ev.class {
            FINISH if st == Some(St::Running) => {
                self.end_segment(j, true);
                self.release_all(j)?;
                self.jobs[j].remaining = 0.0;
                self.finish(j, FinalState::Completed, "ran to the end".into());
            }
            CANCEL => self.on_cancel(j)?,
            REPAIR if self.e.repair_node(j)? => {
                self.free_epoch += 1;
                self.state_version += 1;
                self.dirty = true;
            }
            FAIL if ev.epoch == 1 => self.fail_node(ev.who as usize)?,
            FAIL => self.on_fail(ev.who)?,
            READY if st == Some(St::Starting) => self.on_ready(j),
            READY if st == Some(St::Paused { waiting: false }) => self.on_resume(j),
            TIMEOUT if st == Some(St::Starting) => self.on_readiness_timeout(j)?,
            TIMEOUT if matches!(st, Some(St::Paused { .. })) => self.on_replace_timeout(j)?,
            REQUEUE if st == Some(St::Backoff) => self.enqueue(j, true),
            RELAX if st == Some(St::Queued) => self.on_relax(j),
            ARRIVE if st == Some(St::Unsubmitted) => {
                if let Some(why) = self.jobs[j].never_fits.clone() {
                    self.finish(j, FinalState::NeverFits, why);
                } else {
                    self.enqueue(j, false);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Puts a job in the queue (crate docs: queue order).
    fn enqueue(&mut self, j: usize, again: bool) {
        self.order_seq += 1;
        let job = &mut self.jobs[j];
        if !again {
            job.orig_order = self.order_seq;
        }
        job.order = match (again, self.cfg.queue.requeue) {
            (true, Requeue::Creation) => job.orig_order,
            _ => self.order_seq,
        };
        job.st = St::Queued;
        job.step = 0;
        job.epoch += 1;
        job.pods_placed = 0;
        let (prio, order, epoch) = (-job.priority, job.order, job.epoch);
        match &job.kind {
            Kind::NoGang { pods } => {
                let total: u32 = pods.iter().map(|p| p.1).sum();
                let mut m = 0u64;
                for (ri, &(req, count)) in pods.iter().enumerate() {
                    for _ in 0..count {
                        self.pods.insert((prio, m, order, j as u32), ri as u16);
                        m += 1;
                    }
                    *self.pod_reqs.entry(req).or_default() += count;
                }
                self.pending_pods.insert(j as u32, total);
            }
            Kind::Gang { variants, after } => {
                self.queue
                    .insert((prio, order), j as u32, Some(variants[0]));
                if let (Some(a), true) = (after, variants.len() > 1) {
                    let t = self.now.saturating_add(*a);
                    self.push(t, RELAX, j as u64, epoch);
                }
            }
            Kind::Spread { .. } => {
                self.queue.insert((prio, order), j as u32, None);
            }
        }
        self.dirty = true;
    }

    fn remove_pods(&mut self, j: usize) {
        if self.pending_pods.remove(&(j as u32)).is_none() {
            return;
        }
        let job = &self.jobs[j];
        let Kind::NoGang { pods } = &job.kind else {
            return;
        };
        let total: u64 = pods.iter().map(|p| u64::from(p.1)).sum();
        let (prio, order) = (-job.priority, job.order);
        let reqs: Vec<usize> = pods.iter().map(|p| p.0).collect();
        for m in 0..total {
            if let Some(role) = self.pods.remove(&(prio, m, order, j as u32)) {
                self.pod_unpending(reqs[role as usize]);
            }
        }
    }

    fn on_relax(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        let Kind::Gang { variants, after } = &job.kind else {
            return;
        };
        if job.step + 1 >= variants.len() {
            return;
        }
        job.step += 1;
        let more = job.step + 1 < variants.len();
        let (after, epoch) = (*after, job.epoch);
        let (key, req) = ((-job.priority, job.order), variants[job.step]);
        self.queue.set_request(&key, j as u32, req);
        if let (true, Some(a)) = (more, after) {
            let t = self.now.saturating_add(a);
            self.push(t, RELAX, j as u64, epoch);
        }
        self.dirty = true;
    }

    fn on_cancel(&mut self, j: usize) -> Result<(), SimError> {
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
                let key = (-self.jobs[j].priority, self.jobs[j].order);
                self.queue.remove(&key);
                self.remove_pods(j);
                self.dirty = true;
                self.finish(
                    j,
                    FinalState::Cancelled,
                    "cancelled while waiting; it held nothing".into(),
                );
            }
            St::Starting | St::Paused { .. } => {
                self.set_phase(j, Phase::None);
                // An attempt cut short: its initialisation was idle holding, not waste.
                let a = &mut self.jobs[j].acct;
                a.idle += std::mem::take(&mut a.init);
                let nogang_partial = matches!(self.jobs[j].kind, Kind::NoGang { .. })
                    && self.jobs[j].st == St::Starting;
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

    /// Ends a running segment at `now`: progress up to the last checkpoint is kept
    /// (all of it when `keep_all`); the rest is lost work.
    fn end_segment(&mut self, j: usize, keep_all: bool) {
        let now = self.now;
        let g = self.jobs[j].g;
        // Close as if all useful, then move the lost part to waste.
        self.set_phase(j, Phase::None);
        let job = &mut self.jobs[j];
        let elapsed = now.saturating_sub(job.seg_start);
        job.run_ms += elapsed;
        let saved = if keep_all {
            elapsed
        } else {
            match job.checkpoint {
                Some(c) => elapsed / c * c,
                None => 0,
            }
        };
        let lost = elapsed - saved;
        let lost_amount = u128::from(g) * u128::from(lost);
        job.acct.useful -= lost_amount.min(job.acct.useful);
        job.acct.wasted += lost_amount;
        job.lost_ms += lost;
        job.remaining = (job.remaining - saved as f64 / job.slowdown).max(0.0);
    }

    fn on_ready(&mut self, j: usize) {
        self.set_phase(j, Phase::Running);
        let now = self.now;
        let job = &mut self.jobs[j];
        let a = &mut job.acct;
        a.idle += std::mem::take(&mut a.init);
        job.all_ready.get_or_insert(now);
        job.progressed = true;
        self.start_segment(j);
    }

    fn start_segment(&mut self, j: usize) {
        let now = self.now;
        let job = &mut self.jobs[j];
        job.st = St::Running;
        job.seg_start = now;
        job.epoch += 1;
        let wall = (job.remaining * job.slowdown).round().max(0.0) as Ms;
        let epoch = job.epoch;
        self.push(now.saturating_add(wall), FINISH, j as u64, epoch);
    }

    fn on_resume(&mut self, j: usize) {
        self.set_phase(j, Phase::Running);
        self.jobs[j].pause_deadline = None;
        self.update_span(j);
        self.start_segment(j);
    }

    fn update_span(&mut self, j: usize) {
        let job = &self.jobs[j];
        let span = match job.kind {
            Kind::NoGang { .. } => self.e.span(&job.res),
            _ => job
                .res
                .iter()
                .map(|&id| self.e.span(&[id]))
                .max()
                .unwrap_or(0),
        };
        let table = &self.tables[job.table];
        let l = self.e.levels().len();
        let col = if span > l {
            table.len() - 1
        } else {
            span.min(table.len() - 1)
        };
        let slowdown = table[col];
        let job = &mut self.jobs[j];
        job.span = Some(span);
        job.slowdown = slowdown;
    }

    fn on_readiness_timeout(&mut self, j: usize) -> Result<(), SimError> {
        self.set_phase(j, Phase::None);
        let a = &mut self.jobs[j].acct;
        a.wasted += std::mem::take(&mut a.init);
        let placed = self.jobs[j].pods_placed;
        let is_nogang = matches!(self.jobs[j].kind, Kind::NoGang { .. });
        self.release_all(j)?;
        let job = &mut self.jobs[j];
        job.readiness_failures += 1;
        let r = &self.cfg.readiness;
        let n = job.readiness_failures;
        if n >= r.max_attempts {
            let what = if is_nogang && placed < job.members {
                format!("only {placed} of {} members were ever placed", job.members)
            } else {
                "a member never became ready".to_owned()
            };
            let t = r.timeout.unwrap_or(0.0);
            let why = format!("failed: {what}; readiness timeout ({t} s) on each of {n} attempts");
            self.finish(j, FinalState::Failed, why);
            return Ok(());
        }
        let mut backoff = r.backoff_base;
        for _ in 1..n {
            backoff *= r.backoff_factor;
            if backoff >= r.backoff_max {
                break;
            }
        }
        let backoff = ms(backoff.min(r.backoff_max));
        job.st = St::Backoff;
        job.epoch += 1;
        let epoch = job.epoch;
        self.push(self.now.saturating_add(backoff), REQUEUE, j as u64, epoch);
        Ok(())
    }

    fn on_replace_timeout(&mut self, j: usize) -> Result<(), SimError> {
        if self.jobs[j].st != (St::Paused { waiting: true }) {
            return Ok(());
        }
        self.set_phase(j, Phase::None);
        self.release_all(j)?;
        self.jobs[j].restarts += 1;
        self.jobs[j].pending_reason = None;
        // The wait is over: a later pause (of a later attempt) waits afresh.
        self.jobs[j].pause_deadline = None;
        self.enqueue(j, true);
        Ok(())
    }

    fn on_fail(&mut self, k: u64) -> Result<(), SimError> {
        let n = self.e.node_count();
        let u = draw(&[self.cfg.seed, STREAM_FAIL_NODE, k]);
        let node = ((u * n as f64) as usize).min(n.saturating_sub(1));
        self.fail_node(node)?;
        self.arm_failures(k + 1);
        Ok(())
    }

    /// Node `node` fails now (no effect when it is down already).
    fn fail_node(&mut self, node: usize) -> Result<(), SimError> {
        if let Some(lost) = self.e.fail_node(node)? {
            self.state_version += 1;
            let repair = self.now.saturating_add(ms(self.cfg.failures.repair_time));
            self.push(repair, REPAIR, node as u64, 0);
            let mut jobs: Vec<u32> = lost
                .iter()
                .filter_map(|(id, _)| self.owner.get(id).copied())
                .collect();
            jobs.sort_unstable();
            jobs.dedup();
            for j in jobs {
                self.on_loss(j as usize)?;
            }
        }
        Ok(())
    }

    /// A node under job `j` failed (crate docs: failure semantics).
    fn on_loss(&mut self, j: usize) -> Result<(), SimError> {
        self.jobs[j].node_failures += 1;
        match self.jobs[j].st {
            St::Starting => {
                // The attempt is lost; try again at once (not a readiness failure).
                self.set_phase(j, Phase::None);
                let a = &mut self.jobs[j].acct;
                a.wasted += std::mem::take(&mut a.init);
                self.release_all(j)?;
                self.enqueue(j, true);
            }
            St::Running => {
                self.end_segment(j, false);
                match self.jobs[j].recovery {
                    RecoveryMode::Restart => {
                        self.release_all(j)?;
                        self.jobs[j].restarts += 1;
                        self.enqueue(j, true);
                    }
                    RecoveryMode::Replace => {
                        self.regather(j);
                        self.pause(j);
                    }
                }
            }
            St::Paused { .. } => {
                self.close(j);
                self.regather(j);
                self.pause(j);
            }
            _ => {
                self.regather(j);
            }
        }
        Ok(())
    }

    fn pause(&mut self, j: usize) {
        self.close(j);
        self.jobs[j].phase = Phase::Paused;
        let now = self.now;
        let deadline = match self.cfg.recovery.replace_timeout {
            Some(t) => Some(
                self.jobs[j]
                    .pause_deadline
                    .unwrap_or(now.saturating_add(ms(t))),
            ),
            None => None,
        };
        let job = &mut self.jobs[j];
        job.st = St::Paused { waiting: true };
        job.epoch += 1;
        job.pause_deadline = deadline;
        job.replace_tried = 0;
        let epoch = job.epoch;
        if let Some(d) = deadline {
            self.push(d.max(now), TIMEOUT, j as u64, epoch);
        }
        self.paused.insert(j as u32);
        self.dirty = true;
    }

    // ---- admission -------------------------------------------------------------------

    /// Starts an attempt on the reservations just made.
    fn start_attempt(&mut self, j: usize, ids: Vec<ResId>) -> Result<(), SimError> {
        let now = self.now;
        for &id in &ids {
            self.owner.insert(id, j as u32);
        }
        self.state_version += 1;
        {
            let job = &mut self.jobs[j];
            job.res = ids;
            job.attempts += 1;
            job.admitted = Some(now);
            job.first_admitted.get_or_insert(now);
            job.st = St::Starting;
            job.epoch += 1;
            job.open = now;
            job.phase = Phase::Init;
        }
        self.regather(j);
        self.update_span(j);
        let members: u64 = self.jobs[j]
            .res
            .iter()
            .map(|&id| self.e.members_of(id))
            .sum();
        let fails = self.init_fails(j, members);
        let job = &mut self.jobs[j];
        job.attempt_fails = fails;
        let epoch = job.epoch;
        if !fails {
            self.push(
                now.saturating_add(ms(self.cfg.readiness.init_time)),
                READY,
                j as u64,
                epoch,
            );
        }
        if let Some(t) = self.cfg.readiness.timeout {
            self.push(now.saturating_add(ms(t)), TIMEOUT, j as u64, epoch);
        }
        Ok(())
    }

    /// Whether some member of this attempt fails to initialise.
    fn init_fails(&self, j: usize, members: u64) -> bool {
        let job = &self.jobs[j];
        if job.failing > 0 {
            return true;
        }
        if job.init_p <= 0.0 {
            return false;
        }
        let a = u64::from(job.attempts);
        (0..members).any(|m| draw(&[self.cfg.seed, STREAM_INIT, j as u64, a, m]) < job.init_p)
    }

    fn memo_fails(&self, r: usize) -> bool {
        self.memo[r] == self.free_epoch + 1
    }

    /// Tries to place and reserve job `j` now (gang or spread).
    fn try_place(&mut self, j: usize) -> Result<bool, SimError> {
        let (r, spread) = match &self.jobs[j].kind {
            Kind::Gang { variants, .. } => (variants[self.jobs[j].step], None),
            Kind::Spread {
                req,
                replicas,
                level,
            } => (*req, Some((*replicas, level.clone()))),
            Kind::NoGang { .. } => return Ok(false),
        };
        if self.memo_fails(r) {
            return Ok(false);
        }
        let ids = match spread {
            None => match self.e.find(&self.reqs[r])? {
                Some(f) => Some(vec![self.e.reserve(f)?]),
                None => None,
            },
            Some((replicas, level)) => self.e.spread(&self.reqs[r], replicas, &level)?,
        };
        match ids {
            Some(ids) => {
                self.start_attempt(j, ids)?;
                Ok(true)
            }
            None => {
                self.memo[r] = self.free_epoch + 1;
                Ok(false)
            }
        }
    }

    /// One scheduling pass (crate docs: the pass).
    fn pass(&mut self) -> Result<(), SimError> {
        self.dirty = false;
        self.passes += 1;
        self.replacements()?;
        // Head first, in queue order, until one waits.
        let mut head: Option<(i64, u64)> = None;
        while let Some((key, j)) = self.queue.first() {
            if self.try_place(j as usize)? {
                self.queue.remove(&key);
            } else {
                head = Some(key);
                break;
            }
        }
        if let (Some(hk), Discipline::Backfill) = (head, self.cfg.queue.discipline) {
            self.backfill(hk)?;
        }
        self.place_pods()?;
        Ok(())
    }

    fn backfill(&mut self, hk: (i64, u64)) -> Result<(), SimError> {
        let Some(hj) = self.queue.get(&hk) else {
            return Ok(());
        };
        let hj = hj as usize;
        let Kind::Gang { variants, .. } = &self.jobs[hj].kind else {
            return Ok(()); // a spread head: FIFO only
        };
        let head_req = variants[self.jobs[hj].step];
        let state = (self.state_version, hk);
        if self.backfill_fails.0 != state {
            self.backfill_fails = (state, FxHashSet::default());
        }
        // The requests behind the head that fit the free cluster now: one question per
        // request waiting, not per job.
        let mut fit: Vec<usize> = Vec::new();
        for (r, _) in self.queue.requests_behind(&hk) {
            if self.memo[r] == self.free_epoch + 1 || self.backfill_fails.1.contains(&r) {
                continue;
            }
            if self.e.find(&self.reqs[r])?.is_none() {
                self.memo[r] = self.free_epoch + 1;
                continue;
            }
            fit.push(r);
        }
        if fit.is_empty() {
            return Ok(());
        }
        let placed = if self.cfg.queue.via_admit {
            self.backfill_via_admit(hk, head_req, &fit)?
        } else {
            self.backfill_probes(head_req)?;
            let heads: Vec<&Req> = self.pods_of[&head_req].iter().collect();
            let cordoned = self.e.backfill_begin(&heads)?;
            let placed = self.backfill_in_order(hk, &fit);
            self.e.backfill_end(cordoned)?;
            placed?
        };
        // Nothing placed: the state is as it was, and every request that fit failed in it.
        if placed.is_empty() {
            self.backfill_fails.1.extend(fit);
        }
        for (j, id) in placed {
            let key = (-self.jobs[j as usize].priority, self.jobs[j as usize].order);
            self.queue.remove(&key);
            self.start_attempt(j as usize, vec![id])?;
        }
        Ok(())
    }

    /// The head's one-member probes for the backfill rule, made once per request.
    fn backfill_probes(&mut self, head_req: usize) -> Result<(), SimError> {
        if !self.pods_of.contains_key(&head_req) {
            let mut pods = Vec::new();
            for (i, role) in self.reqs[head_req].roles().iter().enumerate() {
                let p = self
                    .e
                    .usable_probe(&format!("req{head_req}-role{i}"), role)
                    .map_err(|e| SimError::Internal(format!("probe of a head: {e}")))?;
                pods.push(p);
            }
            self.pods_of.insert(head_req, pods);
        }
        Ok(())
    }

    /// Backfills, on the nodes left after cordoning the head's, the jobs behind `hk` whose
    /// request is in `fit`, in queue order; once a request does not fit, its later jobs
    /// are not asked (capacity only shrinks meanwhile). The jobs placed, with their
    /// reservations.
    fn backfill_in_order(&mut self, hk: Key, fit: &[usize]) -> Result<Vec<(u32, ResId)>, SimError> {
        // A merge of the fitting requests' queues, by each one's next key.
        let mut queues: Vec<_> = self
            .queue
            .requests_behind(&hk)
            .filter(|(r, _)| fit.contains(r))
            .collect();
        let mut next: BinaryHeap<Reverse<(Key, usize)>> = queues
            .iter_mut()
            .enumerate()
            .filter_map(|(i, (_, keys))| Some(Reverse((*keys.next()?, i))))
            .collect();
        let mut placed = Vec::new();
        while let Some(Reverse((key, i))) = next.pop() {
            let r = queues[i].0;
            let Some(j) = self.queue.get(&key) else {
                continue;
            };
            // A request that does not fit leaves the merge: its later jobs would not
            // fit either.
            if let Some(id) = self.e.backfill_try(&self.reqs[r])? {
                placed.push((j, id));
                if let Some(k) = queues[i].1.next() {
                    next.push(Reverse((*k, i)));
                }
            }
        }
        Ok(placed)
    }

    /// The same pass through gang-core's `admit` (`queue.via_admit`): every job behind
    /// `hk` whose request is in `fit`, in queue order, in one call.
    fn backfill_via_admit(
        &mut self,
        hk: Key,
        head_req: usize,
        fit: &[usize],
    ) -> Result<Vec<(u32, ResId)>, SimError> {
        let mut cands: Vec<(Key, u32, usize)> = Vec::new();
        for (r, keys) in self.queue.requests_behind(&hk) {
            if fit.contains(&r) {
                cands.extend(keys.filter_map(|k| Some((*k, self.queue.get(k)?, r))));
            }
        }
        cands.sort_unstable();
        let refs: Vec<&Req> = cands.iter().map(|&(_, _, r)| &self.reqs[r]).collect();
        let (head_id, ids) = self.e.admit_backfill(&self.reqs[head_req], &refs)?;
        if head_id.is_some() {
            return Err(SimError::Internal(
                "admit placed a head the solver had found not to fit".into(),
            ));
        }
        Ok(cands
            .into_iter()
            .zip(ids)
            .filter_map(|((_, j, _), id)| Some((j, id?)))
            .collect())
    }

    /// The no-gang baseline: pending members in order, each placed alone where it fits.
    fn place_pods(&mut self) -> Result<(), SimError> {
        // Nothing to do when every kind of member waiting is known not to fit.
        if self.pods.is_empty() || self.pod_reqs.keys().all(|&r| self.memo_fails(r)) {
            return Ok(());
        }
        // The map is only read while walking it; placed members leave it afterwards.
        let pending = std::mem::take(&mut self.pods);
        let mut placed = Vec::new();
        let out = self.walk_pods(&pending, &mut placed);
        self.pods = pending;
        for key in placed {
            self.pods.remove(&key);
        }
        out
    }

    fn walk_pods(
        &mut self,
        pending: &BTreeMap<(i64, u64, u64, u32), u16>,
        placed: &mut Vec<(i64, u64, u64, u32)>,
    ) -> Result<(), SimError> {
        for (&key, &role) in pending {
            let j = key.3 as usize;
            let Kind::NoGang { pods } = &self.jobs[j].kind else {
                continue;
            };
            let r = pods[role as usize].0;
            if self.memo_fails(r) {
                continue;
            }
            let Some(f) = self.e.find(&self.reqs[r])? else {
                self.memo[r] = self.free_epoch + 1;
                if self.pod_reqs.keys().all(|&r| self.memo_fails(r)) {
                    break;
                }
                continue;
            };
            let id = self.e.reserve(f)?;
            placed.push(key);
            self.pod_unpending(r);
            self.owner.insert(id, j as u32);
            self.state_version += 1;
            let now = self.now;
            if self.jobs[j].st == St::Queued {
                let members = self.jobs[j].members;
                self.jobs[j].attempts += 1;
                let fails = self.init_fails(j, members);
                let job = &mut self.jobs[j];
                job.admitted = Some(now);
                job.first_admitted.get_or_insert(now);
                job.st = St::Starting;
                job.epoch += 1;
                job.open = now;
                job.phase = Phase::Init;
                job.first_pod = now;
                job.attempt_fails = fails;
                let epoch = job.epoch;
                if let Some(t) = self.cfg.readiness.timeout {
                    self.push(now.saturating_add(ms(t)), TIMEOUT, j as u64, epoch);
                }
            }
            self.close(j);
            self.jobs[j].res.push(id);
            self.jobs[j].g += self.e.gpu_of(id);
            self.jobs[j].pods_placed += 1;
            let left = self.pending_pods.get(&(j as u32)).copied().unwrap_or(0);
            if left <= 1 {
                self.pending_pods.remove(&(j as u32));
                self.update_span(j);
                if !self.jobs[j].attempt_fails {
                    let epoch = self.jobs[j].epoch;
                    let t = now.saturating_add(ms(self.cfg.readiness.init_time));
                    self.push(t, READY, j as u64, epoch);
                }
            } else {
                self.pending_pods.insert(j as u32, left - 1);
            }
        }
        Ok(())
    }

    fn pod_unpending(&mut self, r: usize) {
        if let Some(c) = self.pod_reqs.get_mut(&r) {
            *c -= 1;
            if *c == 0 {
                self.pod_reqs.remove(&r);
            }
        }
    }

    /// Jobs waiting for replacements: tried again when capacity came back.
    fn replacements(&mut self) -> Result<(), SimError> {
        let waiting: Vec<u32> = self.paused.iter().copied().collect();
        for j in waiting {
            let j = j as usize;
            if self.jobs[j].st != (St::Paused { waiting: true })
                || self.jobs[j].replace_tried == self.free_epoch + 1
            {
                continue;
            }
            self.jobs[j].replace_tried = self.free_epoch + 1;
            let mut all = true;
            let mut why = None;
            for id in self.jobs[j].res.clone() {
                if self.e.lost_of(id) == 0 {
                    continue;
                }
                match self.e.replace(id)? {
                    Replaced::Placed => {}
                    Replaced::Pending(p) => {
                        all = false;
                        why = Some(self.name_job(&p, j));
                    }
                }
            }
            self.state_version += 1;
            self.close(j);
            self.regather(j);
            if all {
                self.paused.remove(&(j as u32));
                let job = &mut self.jobs[j];
                job.replacements += 1;
                job.pending_reason = None;
                job.st = St::Paused { waiting: false };
                let epoch = job.epoch;
                // The placement changed now: its span is the job's, even if the job
                // ends before it runs again (its record reports the last placement).
                self.update_span(j);
                self.push(
                    self.now.saturating_add(ms(self.cfg.readiness.init_time)),
                    READY,
                    j as u64,
                    epoch,
                );
            } else {
                self.jobs[j].pending_reason = why;
            }
        }
        Ok(())
    }

    /// gang-core's texts name the shared request (`gang req7`); say which job it is.
    fn name_job(&self, text: &str, j: usize) -> String {
        let mut out = text.to_owned();
        if let Some(i) = out.find("(gang req") {
            if let Some(end) = out[i..].find(')') {
                out.replace_range(i..i + end + 1, &format!("(job {})", self.jobs[j].id));
            }
        }
        out
    }

    // ---- invariants ------------------------------------------------------------------

    /// Every invariant (crate docs: invariants), or the first one broken.
    fn validate(&self) -> Result<(), String> {
        self.e.validate()?;
        let timeout = self.cfg.readiness.timeout.map(ms);
        let mut held = 0u64;
        let mut busy = 0u64;
        for (i, j) in self.jobs.iter().enumerate() {
            let holds = !j.res.is_empty();
            let may_hold = matches!(j.st, St::Starting | St::Running | St::Paused { .. });
            if holds && !may_hold {
                return Err(format!("job {} holds capacity in state {:?}", j.id, j.st));
            }
            if j.st == St::Running && !holds {
                return Err(format!("job {} runs holding nothing", j.id));
            }
            if j.st == St::Starting {
                let since = if matches!(j.kind, Kind::NoGang { .. }) {
                    j.first_pod
                } else {
                    j.admitted.unwrap_or(0)
                };
                if let Some(t) = timeout {
                    if self.now > since + t {
                        return Err(format!(
                            "job {} still starting {} ms after admission, past its readiness timeout",
                            j.id,
                            self.now - since
                        ));
                    }
                }
                // A gang is whole from its admission (gang-core reserves all or nothing).
                if !matches!(j.kind, Kind::NoGang { .. }) {
                    let lost: u64 = j.res.iter().map(|&id| self.e.lost_of(id)).sum();
                    if lost > 0 {
                        return Err(format!("job {} starting with lost members", j.id));
                    }
                }
            }
            if let St::Paused { .. } = j.st {
                if j.recovery != RecoveryMode::Replace {
                    return Err(format!("job {} paused without replace recovery", j.id));
                }
            }
            if j.st == St::Running {
                let lost: u64 = j.res.iter().map(|&id| self.e.lost_of(id)).sum();
                if lost > 0 {
                    return Err(format!("job {} running with lost members", j.id));
                }
                busy += j.g;
            }
            let g: u64 = j.res.iter().map(|&id| self.e.gpu_of(id)).sum();
            if g != j.g {
                return Err(format!(
                    "job {}: counted {} GPU milli held, holds {g}",
                    j.id, j.g
                ));
            }
            held += g;
            let a = &j.acct;
            if a.held != a.useful + a.wasted + a.idle + a.init {
                return Err(format!(
                    "job {}: held {} != useful {} + wasted {} + idle {} + initialising {}",
                    j.id, a.held, a.useful, a.wasted, a.idle, a.init
                ));
            }
            if j.st == St::Done && (holds || j.fin.is_none()) {
                return Err(format!(
                    "job {} done but holding, or without a final state",
                    j.id
                ));
            }
            for &id in &j.res {
                if self.owner.get(&id) != Some(&(i as u32)) {
                    return Err(format!("job {}: reservation ownership lost", j.id));
                }
            }
        }
        if held != self.e.held_gpu() {
            return Err(format!(
                "jobs hold {held} GPU milli, reservations {}",
                self.e.held_gpu()
            ));
        }
        if busy != self.busy {
            return Err(format!(
                "running jobs hold {busy} GPU milli, counted {}",
                self.busy
            ));
        }
        Ok(())
    }

    // ---- the end ---------------------------------------------------------------------

    /// Jobs not done at the end: released at the end time, `unfinished`, with why.
    fn finish_all(&mut self) -> Result<(), SimError> {
        for j in 0..self.jobs.len() {
            if self.jobs[j].st == St::Done {
                continue;
            }
            let why = match self.jobs[j].st {
                St::Unsubmitted => "not submitted before the simulation ended".to_owned(),
                St::Queued => {
                    if matches!(self.jobs[j].kind, Kind::NoGang { .. }) {
                        "waiting for members to be placed when the simulation ended".to_owned()
                    } else {
                        "waiting when the simulation ended (nothing left that could free capacity for it)"
                            .to_owned()
                    }
                }
                St::Backoff => "in backoff when the simulation ended".to_owned(),
                St::Starting => {
                    let job = &self.jobs[j];
                    if matches!(job.kind, Kind::NoGang { .. }) && job.pods_placed < job.members {
                        format!(
                            "deadlocked: holds {} of {} members, waiting for the rest, and nothing left could complete it",
                            job.pods_placed, job.members
                        )
                    } else if job.attempt_fails {
                        "a member never became ready and there is no readiness timeout".to_owned()
                    } else {
                        "starting when the simulation ended".to_owned()
                    }
                }
                St::Running => "running when the simulation ended".to_owned(),
                St::Paused { .. } => match &self.jobs[j].pending_reason {
                    Some(p) => format!("waiting for a replacement when the simulation ended: {p}"),
                    None => "waiting for a replacement when the simulation ended".to_owned(),
                },
                St::Done => String::new(),
            };
            if self.jobs[j].st == St::Running {
                self.end_segment(j, true);
            } else {
                self.set_phase(j, Phase::None);
                let a = &mut self.jobs[j].acct;
                a.idle += std::mem::take(&mut a.init);
            }
            if !self.jobs[j].res.is_empty() {
                self.release_all(j)?;
            } else {
                self.remove_pods(j);
                let key = (-self.jobs[j].priority, self.jobs[j].order);
                if self.queue.get(&key) == Some(j as u32) {
                    self.queue.remove(&key);
                }
            }
            self.finish(j, FinalState::Unfinished, why);
        }
        if self.check {
            self.validate()
                .map_err(|m| SimError::Internal(format!("at the end: {m}")))?;
            if self.e.live_reservations() != 0 {
                return Err(SimError::Internal("reservations left at the end".into()));
            }
            let total: u128 = self.jobs.iter().map(|j| j.acct.held).sum();
            if total != self.held_integral {
                return Err(SimError::Internal(format!(
                    "jobs held {total} GPU·ms, the cluster's integral is {}",
                    self.held_integral
                )));
            }
        }
        Ok(())
    }

    fn result(self, end: Ms) -> Result<SimResult, SimError> {
        let mut records = Vec::with_capacity(self.jobs.len());
        for j in &self.jobs {
            let (state, reason) = j
                .fin
                .clone()
                .ok_or_else(|| SimError::Internal(format!("job {} has no final state", j.id)))?;
            let d = |t: Option<Ms>| t.map(|t| secs(t.saturating_sub(j.submit)));
            records.push(JobRecord {
                id: j.id.clone(),
                tenant: self.tenants[j.tenant as usize].clone(),
                priority: j.priority,
                policy: self.labels[j.label].clone(),
                sensitivity: j.class_name.clone(),
                members: j.members,
                gpus: j.gpus as f64 / 1000.0,
                submit: secs(j.submit),
                first_admitted: j.first_admitted.map(secs),
                admitted: j.admitted.map(secs),
                all_ready: j.all_ready.map(secs),
                first_progress: j.all_ready.map(secs),
                end: j.end.map(secs),
                completion: if state == FinalState::Completed {
                    d(j.end)
                } else {
                    None
                },
                queue_delay: d(j.first_admitted),
                time_to_ready: d(j.all_ready),
                run_time: secs(j.run_ms),
                attempts: j.attempts,
                readiness_failures: j.readiness_failures,
                node_failures: j.node_failures,
                restarts: j.restarts,
                replacements: j.replacements,
                level: j.span.map(|s| self.e.span_name(s)),
                slowdown: j.span.map(|_| j.slowdown),
                gpu_hours_held: gpu_hours(j.acct.held),
                gpu_hours_useful: gpu_hours(j.acct.useful),
                gpu_hours_wasted: gpu_hours(j.acct.wasted),
                gpu_hours_idle: gpu_hours(j.acct.idle),
                gpu_hours_before_progress: gpu_hours(j.acct.before),
                lost_work_hours: j.lost_ms as f64 / 3.6e6,
                state,
                reason,
            });
        }
        let total_held: f64 = records.iter().map(|r| r.gpu_hours_held).sum();
        let all = Group::of(records.iter(), total_held);
        let mut by_policy = BTreeMap::new();
        for l in &self.labels {
            by_policy.insert(
                l.clone(),
                Group::of(records.iter().filter(|r| &r.policy == l), total_held),
            );
        }
        let mut by_tenant = BTreeMap::new();
        for t in &self.tenants {
            by_tenant.insert(
                t.clone(),
                Group::of(records.iter().filter(|r| &r.tenant == t), total_held),
            );
        }
        let first = self.jobs.iter().map(|j| j.submit).min().unwrap_or(0);
        let last = self
            .jobs
            .iter()
            .filter_map(|j| j.end)
            .max()
            .unwrap_or(first);
        let span = last.saturating_sub(first);
        let gpus = self.e.allocatable_gpu();
        let denom = u128::from(gpus) * u128::from(span);
        let frac = |x: u128| {
            if denom > 0 {
                x as f64 / denom as f64
            } else {
                0.0
            }
        };
        let mean_frag = if self.timeline.is_empty() {
            0.0
        } else {
            self.timeline.iter().map(|s| s.fragmented_gpus).sum::<f64>()
                / self.timeline.len() as f64
        };
        let profile = self.cfg.profile.then(|| Profile {
            engine: self.e.profile.clone(),
            total_ns: self.setup_ns + self.started.map_or(0, |s| s.elapsed().as_nanos() as u64),
            setup_ns: self.setup_ns,
            probe_ns: self.probe_ns,
        });
        let summary = Summary {
            seed: self.cfg.seed,
            all,
            by_policy,
            by_tenant,
            makespan: secs(span),
            end_time: secs(end),
            gpus: gpus as f64 / 1000.0,
            // Integrals run over the whole simulation; outside the makespan nothing is held.
            mean_utilisation: frac(self.held_integral),
            mean_busy: frac(self.busy_integral),
            mean_fragmented_gpus: mean_frag,
            events: self.events,
            passes: self.passes,
            profile,
        };
        Ok(SimResult {
            jobs: records,
            summary,
            timeline: self.timeline,
        })
    }
}

fn policy_level(p: &Policy) -> &str {
    match p {
        Policy::Required { level } | Policy::Preferred { level } | Policy::Timed { level, .. } => {
            level
        }
        Policy::Spread { level, .. } => level,
        Policy::Unconstrained | Policy::NoGang => "",
    }
}
