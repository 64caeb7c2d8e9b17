//! The end of a run: jobs not done end `unfinished` (and say why), then the records,
//! the summary and the timeline.

use std::collections::BTreeMap;

use super::accounting::Phase;
use super::ids::{gpu_hours, secs, JobIx, Ms};
use super::job::St;
use super::Simulation;
use crate::error::SimError;
use crate::output::{
    FinalState, Group, JobPreemption, JobRecord, PreemptionSummary, Profile, SimResult, Summary,
    UtilisationWindow, WindowOver,
};

impl Simulation {
    /// Why job `j`, not done at the end, is `unfinished`.
    fn unfinished_reason(&self, j: JobIx) -> String {
        let job = &self.jobs[j];
        match job.st {
            St::Unsubmitted => "not submitted before the simulation ended".to_owned(),
            St::Queued => {
                if job.def.kind.is_nogang() {
                    "waiting for members to be placed when the simulation ended".to_owned()
                } else {
                    "waiting when the simulation ended (nothing left that could free capacity for it)"
                        .to_owned()
                }
            }
            St::Backoff => "in backoff when the simulation ended".to_owned(),
            St::Starting => {
                if job.def.kind.is_nogang() && job.attempt.pods_placed < job.def.members {
                    format!(
                        "deadlocked: holds {} of {} members, waiting for the rest, and nothing left could complete it",
                        job.attempt.pods_placed, job.def.members
                    )
                } else if job.attempt.fails {
                    "a member never became ready and there is no readiness timeout".to_owned()
                } else {
                    "starting when the simulation ended".to_owned()
                }
            }
            St::Running => "running when the simulation ended".to_owned(),
            St::Paused { .. } => match &job.pause.reason {
                Some(p) => format!("waiting for a replacement when the simulation ended: {p}"),
                None => "waiting for a replacement when the simulation ended".to_owned(),
            },
            St::Done => String::new(),
        }
    }

    /// Jobs not done at the end: released at the end time, `unfinished`, with why.
    pub(super) fn finish_all(&mut self) -> Result<(), SimError> {
        for j in (0..self.jobs.len()).map(JobIx::at) {
            if self.jobs[j].st == St::Done {
                continue;
            }
            let why = self.unfinished_reason(j);
            if self.jobs[j].st == St::Running {
                self.end_segment(j, true);
            } else {
                self.set_phase(j, Phase::None);
                self.jobs[j].hold.init_was_idle();
            }
            if !self.jobs[j].hold.res.is_empty() {
                self.release_all(j)?;
            } else {
                self.remove_pods(j);
                let key = self.jobs[j].key();
                if self.queue.jobs.get(&key) == Some(j) {
                    self.queue.jobs.remove(&key);
                }
            }
            self.finish(j, FinalState::Unfinished, why);
        }
        if self.check {
            self.validate_end()?;
        }
        Ok(())
    }

    /// The result: per-job records, the summary, the timeline.
    pub(super) fn result(self, end: Ms) -> Result<SimResult, SimError> {
        let mut records = Vec::with_capacity(self.jobs.len());
        for j in &self.jobs {
            let (state, reason) = j.fin.clone().ok_or_else(|| {
                SimError::Internal(format!("job {} has no final state", j.def.id))
            })?;
            let d = |t: Option<Ms>| t.map(|t| secs(t.saturating_sub(j.def.submit)));
            let (times, counts, run, acct) = (&j.times, &j.counts, &j.run, &j.hold.acct);
            records.push(JobRecord {
                id: j.def.id.clone(),
                tenant: self.names.tenants[j.def.tenant as usize].clone(),
                priority: j.def.priority,
                policy: self.names.labels[j.def.label].clone(),
                sensitivity: j.def.class_name.clone(),
                members: j.def.members,
                gpus_total: j.def.gpus as f64 / 1000.0,
                submit: secs(j.def.submit),
                first_admitted: times.first_admitted.map(secs),
                admitted: times.admitted.map(secs),
                all_ready: times.all_ready.map(secs),
                first_progress: times.all_ready.map(secs),
                end: times.end.map(secs),
                completion: if state == FinalState::Completed {
                    d(times.end)
                } else {
                    None
                },
                queue_delay: d(times.first_admitted),
                time_to_ready: d(times.all_ready),
                run_time: secs(run.run_ms),
                attempts: counts.attempts,
                readiness_failures: counts.readiness_failures,
                node_failures: counts.node_failures,
                restarts: counts.restarts,
                replacements: counts.replacements,
                span: run.span.map(|s| self.placer.span_name(s)),
                slowdown: run.span.map(|_| run.slowdown),
                gpu_hours_held: gpu_hours(acct.held),
                gpu_hours_useful: gpu_hours(acct.useful),
                gpu_hours_wasted: gpu_hours(acct.wasted),
                gpu_hours_idle: gpu_hours(acct.idle),
                gpu_hours_before_progress: gpu_hours(acct.before),
                lost_work_hours: run.lost_ms as f64 / 3.6e6,
                state,
                reason,
                preemption: (!self.cfg.preemption.is_off()).then(|| JobPreemption {
                    evictions: j.preempted.evictions,
                    preemptions: j.preempted.preemptions,
                    lost_work_hours: j.preempted.lost_ms as f64 / 3.6e6,
                    gpu_hours_lost: gpu_hours(j.preempted.lost_gpu),
                }),
            });
        }
        let total_held: f64 = records.iter().map(|r| r.gpu_hours_held).sum();
        let all = Group::of(records.iter(), total_held, secs(end));
        let mut by_policy = BTreeMap::new();
        for l in &self.names.labels {
            by_policy.insert(
                l.clone(),
                Group::of(
                    records.iter().filter(|r| &r.policy == l),
                    total_held,
                    secs(end),
                ),
            );
        }
        let mut by_tenant = BTreeMap::new();
        for t in &self.names.tenants {
            by_tenant.insert(
                t.clone(),
                Group::of(
                    records.iter().filter(|r| &r.tenant == t),
                    total_held,
                    secs(end),
                ),
            );
        }
        let first = self.jobs.iter().map(|j| j.def.submit).min().unwrap_or(0);
        let last = self
            .jobs
            .iter()
            .filter_map(|j| j.times.end)
            .max()
            .unwrap_or(first);
        let span = last.saturating_sub(first);
        let gpus = self.placer.allocatable_gpu();
        // Utilisation over the arrival window (first to last submission): the drain
        // tail after the last arrival, where the cluster empties whatever the policy,
        // is left out. With every job submitted at once there is no such window: then
        // over the makespan.
        let u = &self.usage;
        let arrivals_end = u.window_end.min(end);
        let (window, from, to, held, busy) = if arrivals_end > first {
            let (h, b) = (u.held_window, u.busy_window);
            (WindowOver::Arrivals, first, arrivals_end, h, b)
        } else {
            (WindowOver::Makespan, first, last, u.held, u.busy_time)
        };
        let denom = u128::from(gpus) * u128::from(to.saturating_sub(from));
        let frac = |x: u128| {
            if denom > 0 {
                x as f64 / denom as f64
            } else {
                0.0
            }
        };
        let samples = &self.timeline.samples;
        let mean_frag = if samples.is_empty() {
            0.0
        } else {
            samples.iter().map(|s| s.fragmented_gpus).sum::<f64>() / samples.len() as f64
        };
        let t = &self.timing;
        let profile = self.cfg.profile.then(|| Profile {
            engine: self.placer.profile.clone(),
            total_ns: t.setup_ns + t.started.map_or(0, |s| s.elapsed().as_nanos() as u64),
            setup_ns: t.setup_ns,
            probe_ns: t.probe_ns,
        });
        let summary = Summary {
            seed: self.cfg.seed,
            all,
            by_policy,
            by_tenant,
            makespan: secs(span),
            end_time: secs(end),
            cluster_gpus: gpus as f64 / 1000.0,
            mean_utilisation: frac(held),
            mean_busy: frac(busy),
            utilisation_window: UtilisationWindow {
                over: window,
                start: secs(from),
                end: secs(to),
            },
            mean_fragmented_gpus: mean_frag,
            slowdown: self.cfg.slowdown_tables(),
            slowdown_spans: (0..=self.placer.levels().len() + 1)
                .map(|s| self.placer.span_name(s))
                .collect(),
            default_sensitivity: self.cfg.default_sensitivity.clone(),
            events: self.counts.events,
            passes: self.counts.passes,
            profile,
            warnings: self.warnings,
            preemption: (!self.cfg.preemption.is_off()).then(|| PreemptionSummary {
                evictions: self
                    .jobs
                    .iter()
                    .map(|j| u64::from(j.preempted.evictions))
                    .sum(),
                jobs_evicted: self
                    .jobs
                    .iter()
                    .filter(|j| j.preempted.evictions > 0)
                    .count(),
                preemptions: self
                    .jobs
                    .iter()
                    .map(|j| u64::from(j.preempted.preemptions))
                    .sum(),
                gpu_hours_lost: gpu_hours(self.jobs.iter().map(|j| j.preempted.lost_gpu).sum()),
            }),
        };
        Ok(SimResult {
            jobs: records,
            summary,
            timeline: self.timeline.samples,
        })
    }
}
