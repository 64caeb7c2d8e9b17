//! Building a simulation: the configuration checked, the trace's jobs compiled
//! against the cluster (each distinct request once), the jobs that can never fit found
//! with gang-core's diagnosis, the first events scheduled.

use std::collections::BTreeMap;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::event::Event;
use super::ids::{ms, JobIx, ReqIx};
use super::job::{Job, JobDef, Kind};
use super::Simulation;
use crate::config::{Policy, SimConfig};
use crate::error::SimError;
use crate::placer::{
    request_error, role_request, Cluster, GangShape, Placer, PreemptionPolicy, Role,
};
use crate::trace::{JobSpec, Trace};

/// What building the jobs keeps from one job to the next.
#[derive(Default)]
struct Cache {
    /// The slowdown tables in force, by class.
    tables: BTreeMap<String, Vec<f64>>,
    /// Each distinct request (roles as JSON, shape, rank), compiled once.
    reqs: FxHashMap<(String, GangShape, Option<Rank>), ReqIx>,
    /// The rank the job being built compiles its requests with (`None`: preemption
    /// is off, and requests carry no priority).
    rank: Option<Rank>,
    /// Whether a spread can ever fit, asked once per (request, replicas, level).
    spread_empty: FxHashMap<(ReqIx, u32, String), Option<String>>,
}

/// A request's priority and preemption policy, as gang-core's `preempt` weighs them.
type Rank = (i32, PreemptionPolicy);

/// Where a job's errors point: its trace line, and whether the policy is the job's own
/// (then a policy error is the line's) or the configuration's.
#[derive(Clone, Copy)]
struct Origin {
    line: usize,
    own_policy: bool,
}

impl Origin {
    fn policy_error(self, m: String) -> SimError {
        if self.own_policy {
            SimError::trace(self.line, "policy", m)
        } else {
            SimError::config("policy", m)
        }
    }
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
        let l = &config.limits;
        crate::config::Limits::check(
            "max_jobs",
            trace.jobs.len() as u64,
            l.max_jobs,
            "jobs in the trace",
        )?;
        crate::config::Limits::check(
            "max_nodes",
            cluster.len() as u64,
            l.max_nodes,
            "nodes in the cluster",
        )?;
        if !cluster.is_empty() && !cluster.offers(&config.gpu_resource) {
            return Err(SimError::config(
                "gpu_resource",
                format!(
                    "no node of the cluster has {:?}: every GPU-hour would be 0 (name the \
                     resource the cluster counts as GPUs)",
                    config.gpu_resource
                ),
            ));
        }
        let mut placer = Placer::new(cluster, &config.gpu_resource);
        placer.set_profiling(config.profile);
        let mut sim = Simulation::empty(placer, config, trace.jobs.len());
        sim.build(trace)?;
        sim.timing.setup_ns = t0.elapsed().as_nanos() as u64;
        Ok(sim)
    }

    /// The full level key `name` stands for: itself, or the one level whose last path
    /// segment it is.
    fn resolve_level(&self, name: &str) -> Result<String, String> {
        let levels = self.placer.levels();
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

    /// Every job of the trace, then the first events: arrivals, cancellations, the
    /// failure process and the scheduled failures.
    fn build(&mut self, trace: Trace) -> Result<(), SimError> {
        let mut cache = Cache {
            tables: self.cfg.slowdown_tables(),
            ..Cache::default()
        };
        for spec in trace.jobs {
            let job = self.job(&mut cache, spec)?;
            self.jobs.push(job);
        }
        for i in 0..self.jobs.len() {
            let j = JobIx::at(i);
            let (submit, cancel) = (self.jobs[j].def.submit, self.jobs[j].def.cancel);
            self.push(submit, Event::Arrive(j));
            if let Some(c) = cancel {
                self.push(c, Event::Cancel(j));
            }
        }
        if self.cfg.failures.node_rate_per_hour > 0.0 && self.placer.node_count() > 0 {
            self.arm_failures(0);
        }
        for (i, f) in self.cfg.failures.scheduled.clone().iter().enumerate() {
            let node = self.placer.node_index(&f.node).ok_or_else(|| {
                SimError::config(
                    format!("failures.scheduled[{i}].node"),
                    format!("no node named {:?}", f.node),
                )
            })?;
            self.push(ms(f.at), Event::FailScheduled(node));
        }
        Ok(())
    }

    /// One job of the trace, compiled.
    fn job(&mut self, cache: &mut Cache, spec: JobSpec) -> Result<Job, SimError> {
        let line = spec.line;
        let (policy, own_policy) = match &spec.policy {
            Some(p) => (p.clone(), true),
            None => (self.cfg.policy.clone(), false),
        };
        let origin = Origin { line, own_policy };
        let class_name = spec
            .sensitivity
            .clone()
            .unwrap_or_else(|| self.cfg.default_sensitivity.clone());
        let table = match &spec.slowdown {
            Some(t) => t.clone(),
            None => cache.tables.get(&class_name).cloned().ok_or_else(|| {
                SimError::trace(
                    line,
                    "sensitivity",
                    format!(
                        "unknown sensitivity class {class_name:?}; known: {:?}",
                        cache.tables.keys().collect::<Vec<_>>()
                    ),
                )
            })?,
        };
        let class_name = if spec.slowdown.is_some() {
            "job".to_owned()
        } else {
            class_name
        };
        let count: u64 = spec.roles.iter().map(|r| u64::from(r.get_count())).sum();
        if u64::from(spec.failing_members) > count {
            return Err(SimError::trace(
                line,
                "failing_members",
                format!(
                    "{} failing members, but the job has {count}",
                    spec.failing_members
                ),
            ));
        }
        cache.rank = self.rank(&spec, &policy)?;
        let kind = self.kind(cache, origin, &policy, &spec.roles)?;
        let never_fits = self.never_fits(cache, &kind, &policy, &spec)?;
        let mut members = 0u64;
        let mut gpus = 0u64;
        for r in &spec.roles {
            let per = role_request(r, &self.cfg.gpu_resource).map_err(|e| {
                SimError::trace(
                    line,
                    format!("roles[{}].requests", r.get_name()),
                    e.to_string(),
                )
                .with_core(e.kind())
            })?;
            members += u64::from(r.get_count());
            gpus += per * u64::from(r.get_count());
        }
        if let Kind::Spread { replicas, .. } = &kind {
            members *= u64::from(*replicas);
            gpus *= u64::from(*replicas);
        }
        let label = Self::intern(&mut self.names.labels, &policy.to_string());
        let tenant = Self::intern(&mut self.names.tenants, &spec.tenant) as u32;
        let table = Self::intern(&mut self.names.tables, &table);
        let def = JobDef {
            id: spec.id,
            tenant,
            priority: spec.priority,
            submit: ms(spec.submit),
            cancel: spec.cancel.map(ms),
            checkpoint: spec.checkpoint.map(ms).filter(|&c| c > 0),
            table,
            class_name,
            recovery: spec.recovery.unwrap_or(self.cfg.recovery.mode),
            init_p: spec.init_failure.unwrap_or(self.cfg.readiness.init_failure),
            failing: spec.failing_members,
            kind,
            label,
            members,
            gpus,
            never_fits,
        };
        Ok(Job::new(def, ms(spec.duration) as f64))
    }

    /// The request of `roles` under `shape`, compiled once per distinct (roles, shape)
    /// (`key` is the roles as JSON).
    fn compile(
        &mut self,
        cache: &mut Cache,
        origin: Origin,
        roles: &[Role],
        key: &str,
        shape: GangShape,
    ) -> Result<ReqIx, SimError> {
        let k = (key.to_owned(), shape.clone(), cache.rank);
        if let Some(&r) = cache.reqs.get(&k) {
            return Ok(r);
        }
        let name = format!("req{}", self.requests.len());
        let compiled = self
            .placer
            .compile(&name, roles, &shape)
            .and_then(|req| match cache.rank {
                Some((p, policy)) => self.placer.ranked(req, p, policy),
                None => Ok(req),
            });
        let req = compiled.map_err(|e| {
            let (f, m) = request_error(&e);
            let err = if f.starts_with("topology") {
                origin.policy_error(m)
            } else {
                SimError::trace(origin.line, f, m)
            };
            err.with_core(e.kind())
        })?;
        let r = self.requests.push(req);
        cache.reqs.insert(k, r);
        Ok(r)
    }

    /// The rank a job's requests carry when preemption is on: its priority and
    /// preemption policy for one gang; spread replicas and no-gang members are never
    /// evicted (evicting one replica or member would leave the rest of the job holding
    /// capacity), so theirs is `Never`.
    fn rank(&self, spec: &JobSpec, policy: &Policy) -> Result<Option<Rank>, SimError> {
        if self.cfg.preemption.is_off() {
            return Ok(None);
        }
        let priority = i32::try_from(spec.priority).map_err(|_| {
            SimError::trace(
                spec.line,
                "priority",
                format!(
                    "{} is outside the 32-bit range of Kubernetes priorities, which \
                     preemption compares",
                    spec.priority
                ),
            )
        })?;
        Ok(Some(match policy {
            Policy::Spread { .. } | Policy::NoGang => (priority, PreemptionPolicy::Never),
            _ => (priority, spec.preemption_policy.unwrap_or_default()),
        }))
    }

    /// How a job of `roles` is placed under `policy`: its requests, compiled.
    fn kind(
        &mut self,
        cache: &mut Cache,
        origin: Origin,
        policy: &Policy,
        roles: &[Role],
    ) -> Result<Kind, SimError> {
        let key = serde_json::to_string(roles).unwrap_or_default();
        let level =
            |sim: &Simulation, l: &str| sim.resolve_level(l).map_err(|m| origin.policy_error(m));
        let single = |variant: ReqIx| Kind::Gang {
            variants: vec![variant],
            after: None,
        };
        Ok(match policy {
            Policy::Required { level: l } => {
                let l = level(self, l)?;
                single(self.compile(cache, origin, roles, &key, GangShape::Required(l))?)
            }
            Policy::Preferred { level: l } => {
                let l = level(self, l)?;
                single(self.compile(cache, origin, roles, &key, GangShape::Preferred(l))?)
            }
            Policy::Unconstrained => {
                single(self.compile(cache, origin, roles, &key, GangShape::Unconstrained)?)
            }
            Policy::Timed { level: l, after } => {
                let l = level(self, l)?;
                let levels = self.placer.levels().to_vec();
                let d = levels.iter().position(|x| *x == l).unwrap_or(0);
                let mut variants = Vec::new();
                for lv in levels[..=d].iter().rev() {
                    let shape = GangShape::Required(lv.clone());
                    variants.push(self.compile(cache, origin, roles, &key, shape)?);
                }
                variants.push(self.compile(
                    cache,
                    origin,
                    roles,
                    &key,
                    GangShape::Unconstrained,
                )?);
                Kind::Gang {
                    variants,
                    after: Some(ms(*after)),
                }
            }
            Policy::Spread { replicas, level: l } => {
                let l = level(self, l)?;
                // A request of its own, not the unconstrained gang's of the same roles:
                // what is learnt about it ("does not fit now") is about the spread, and
                // must not hold back an unconstrained gang (issue 25, item 16).
                let own = format!("{key}|spread({replicas}, {l})");
                let req = self.compile(cache, origin, roles, &own, GangShape::Unconstrained)?;
                Kind::Spread {
                    req,
                    replicas: *replicas,
                    level: l,
                }
            }
            Policy::NoGang => {
                let mut pods = Vec::new();
                for r in roles {
                    let one = one_member(r);
                    let key = serde_json::to_string(&one).unwrap_or_default();
                    let req =
                        self.compile(cache, origin, &[one], &key, GangShape::Unconstrained)?;
                    pods.push((req, r.get_min_count().unwrap_or(r.get_count())));
                }
                Kind::NoGang { pods }
            }
        })
    }

    /// Whether the request fits the cluster as given, asked once per request.
    fn fits_empty(&mut self, r: ReqIx) -> Result<bool, SimError> {
        if let Some(f) = self.requests.fits_empty[r.ix()] {
            return Ok(f);
        }
        let f = self.placer.fits_empty(&self.requests[r])?;
        self.requests.fits_empty[r.ix()] = Some(f);
        Ok(f)
    }

    /// Can the job ever fit (on the cluster as given, nothing held, nothing failed)?
    /// `None` if it can, else gang-core's diagnosis.
    fn never_fits(
        &mut self,
        cache: &mut Cache,
        kind: &Kind,
        policy: &Policy,
        spec: &JobSpec,
    ) -> Result<Option<String>, SimError> {
        Ok(match kind {
            Kind::Gang { variants, .. } => {
                let last = variants[variants.len() - 1];
                if self.fits_empty(last)? {
                    None
                } else {
                    let level = |sim: &Simulation| {
                        sim.resolve_level(policy_level(policy)).unwrap_or_default()
                    };
                    let shape = match (policy, variants.len()) {
                        (_, n) if n > 1 => GangShape::Unconstrained,
                        (Policy::Required { .. }, _) => GangShape::Required(level(self)),
                        (Policy::Preferred { .. }, _) => GangShape::Preferred(level(self)),
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
                match cache.spread_empty.get(&k) {
                    Some(x) => x.clone(),
                    None => {
                        let x = self
                            .placer
                            .spread_empty(&self.requests[*req], *replicas, level)?;
                        cache.spread_empty.insert(k, x.clone());
                        x
                    }
                }
            }
            Kind::NoGang { pods } => {
                let mut why = None;
                for (i, &(req, _)) in pods.iter().enumerate() {
                    if !self.fits_empty(req)? {
                        let one = one_member(&spec.roles[i]);
                        why = Some(self.diagnose(&spec.id, &[one], &GangShape::Unconstrained));
                        break;
                    }
                }
                why
            }
        })
    }

    /// gang-core's diagnosis of a gang named after the job, on the cluster as given.
    fn diagnose(&mut self, id: &str, roles: &[Role], shape: &GangShape) -> String {
        match self.placer.compile(id, roles, shape) {
            Ok(r) => self.placer.diagnose_empty(&r),
            Err(e) => e.to_string(),
        }
    }
}

/// One member of `role`: the gang a no-gang member is placed as.
fn one_member(role: &Role) -> Role {
    let mut one = role.clone();
    one.set_count(1);
    one.set_min_count(None);
    one
}

/// The level a policy names (empty when it names none).
fn policy_level(p: &Policy) -> &str {
    match p {
        Policy::Required { level } | Policy::Preferred { level } | Policy::Timed { level, .. } => {
            level
        }
        Policy::Spread { level, .. } => level,
        Policy::Unconstrained | Policy::NoGang => "",
    }
}
