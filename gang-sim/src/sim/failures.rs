//! Failures (crate docs: failures): the failure process, a node lost under jobs,
//! restart or replacement inside the gang's domain, and the end of a wait for
//! replacements.

use super::accounting::Phase;
use super::event::Event;
use super::ids::{ms, JobIx};
use super::job::St;
use super::Simulation;
use crate::config::RecoveryMode;
use crate::error::SimError;
use crate::output::FinalState;
use crate::placer::{NodeIx, Replaced};
use crate::rng::{draw, ln};

/// The random stream of failure times (the second word of the draw key).
const STREAM_FAIL_TIME: u64 = 2;
/// The random stream of failed nodes.
const STREAM_FAIL_NODE: u64 = 3;

impl Simulation {
    /// Schedules failure number `k` after an exponential gap from now.
    pub(super) fn arm_failures(&mut self, k: u64) {
        self.arm_failures_from(k, self.now);
    }

    /// Schedules failure number `k` after an exponential gap from `from`.
    fn arm_failures_from(&mut self, k: u64, from: super::ids::Ms) {
        let rate_per_ms =
            self.cfg.failures.node_rate_per_hour * self.placer.node_count() as f64 / 3.6e6;
        let u = draw(&[self.cfg.seed, STREAM_FAIL_TIME, k]);
        let gap = -ln(1.0 - u) / rate_per_ms;
        let gap = if gap.is_finite() {
            gap.ceil().max(1.0) as u64
        } else {
            u64::MAX / 4
        };
        self.push(from.saturating_add(gap), Event::Fail(k));
    }

    /// Failure number `k` of the process: a uniformly drawn node fails.
    pub(super) fn on_fail(&mut self, k: u64) -> Result<(), SimError> {
        let n = self.placer.node_count();
        let u = draw(&[self.cfg.seed, STREAM_FAIL_NODE, k]);
        let node = ((u * n as f64) as usize).min(n.saturating_sub(1));
        self.fail_node(NodeIx(node as u32))?;
        // With every node down, failures until the first repair change nothing: the
        // process resumes from that repair (it is memoryless), so a long repair time
        // is a jump of the clock, not a stream of events that do nothing.
        let from = if self.placer.failed_nodes() >= n {
            self.agenda
                .iter()
                .filter(|s| matches!(s.event, Event::Repair(_)))
                .map(|s| s.at)
                .min()
                .unwrap_or(self.now)
        } else {
            self.now
        };
        self.arm_failures_from(k + 1, from);
        Ok(())
    }

    /// Node `node` fails now (no effect when it is down already).
    pub(super) fn fail_node(&mut self, node: NodeIx) -> Result<(), SimError> {
        if let Some(lost) = self.placer.fail_node(node)? {
            self.changes.version += 1;
            let repair = self.now.saturating_add(ms(self.cfg.failures.repair_time));
            self.push(repair, Event::Repair(node));
            let mut jobs: Vec<JobIx> = lost
                .iter()
                .filter_map(|(id, _)| self.owner.get(id).copied())
                .collect();
            jobs.sort_unstable();
            jobs.dedup();
            for j in jobs {
                self.on_loss(j)?;
            }
        }
        Ok(())
    }

    /// A node under job `j` failed (crate docs: failure semantics).
    fn on_loss(&mut self, j: JobIx) -> Result<(), SimError> {
        self.jobs[j].counts.node_failures += 1;
        let lost = self.jobs[j].counts.node_failures;
        let limit = self.cfg.limits.max_restarts;
        if u64::from(lost) > u64::from(limit)
            && matches!(
                self.jobs[j].st,
                St::Starting | St::Running | St::Paused { .. }
            )
        {
            // No progress: failures come faster than the job can finish (a livelock).
            if self.jobs[j].st == St::Running {
                self.end_segment(j, false);
            } else {
                self.set_phase(j, Phase::None);
                self.jobs[j].hold.init_was_wasted();
            }
            self.release_all(j)?;
            self.finish(
                j,
                FinalState::Failed,
                format!(
                    "lost a node under it {lost} times, more than limits.max_restarts \
                     ({limit}): failures come faster than it makes progress"
                ),
            );
            return Ok(());
        }
        match self.jobs[j].st {
            St::Starting => {
                // The attempt is lost; try again at once (not a readiness failure).
                self.set_phase(j, Phase::None);
                self.jobs[j].hold.init_was_wasted();
                self.release_all(j)?;
                self.enqueue(j, true);
            }
            St::Running => {
                self.end_segment(j, false);
                match self.jobs[j].def.recovery {
                    RecoveryMode::Restart => {
                        self.release_all(j)?;
                        self.jobs[j].counts.restarts += 1;
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

    /// The job waits for replacements, holding the rest.
    fn pause(&mut self, j: JobIx) {
        self.close(j);
        self.jobs[j].hold.phase = Phase::Paused;
        let now = self.now;
        let deadline = self.cfg.recovery.replace_timeout.map(|t| {
            self.jobs[j]
                .pause
                .deadline
                .unwrap_or(now.saturating_add(ms(t)))
        });
        let job = &mut self.jobs[j];
        job.st = St::Paused { waiting: true };
        job.stamp.bump();
        job.pause.deadline = deadline;
        job.pause.tried = None;
        let stamp = job.stamp;
        if let Some(d) = deadline {
            self.push(d.max(now), Event::Timeout(j, stamp));
        }
        self.paused.insert(j);
        self.changes.dirty = true;
    }

    /// The wait for replacements is over: release everything and restart.
    pub(super) fn on_replace_timeout(&mut self, j: JobIx) -> Result<(), SimError> {
        if self.jobs[j].st != (St::Paused { waiting: true }) {
            return Ok(());
        }
        self.set_phase(j, Phase::None);
        self.release_all(j)?;
        let job = &mut self.jobs[j];
        job.counts.restarts += 1;
        job.pause.reason = None;
        // The wait is over: a later pause (of a later attempt) waits afresh.
        job.pause.deadline = None;
        self.enqueue(j, true);
        Ok(())
    }

    /// Jobs waiting for replacements: tried again when capacity came back.
    pub(super) fn replacements(&mut self) -> Result<(), SimError> {
        let waiting: Vec<JobIx> = self.paused.iter().copied().collect();
        let freed = self.changes.freed;
        for j in waiting {
            if self.jobs[j].st != (St::Paused { waiting: true })
                || self.jobs[j].pause.tried == Some(freed)
            {
                continue;
            }
            self.jobs[j].pause.tried = Some(freed);
            let mut all = true;
            let mut why = None;
            for id in self.jobs[j].hold.res.clone() {
                if self.placer.lost_of(id) == 0 {
                    continue;
                }
                match self.placer.replace(id)? {
                    Replaced::Placed => {}
                    Replaced::Pending(p) => {
                        all = false;
                        why = Some(self.name_job(&p, j));
                    }
                }
            }
            self.changes.version += 1;
            self.close(j);
            self.regather(j);
            if all {
                self.paused.remove(&j);
                let job = &mut self.jobs[j];
                job.counts.replacements += 1;
                job.pause.reason = None;
                job.st = St::Paused { waiting: false };
                let stamp = job.stamp;
                // The placement changed now: its span is the job's, even if the job
                // ends before it runs again (its record reports the last placement).
                self.update_span(j);
                let t = self.now.saturating_add(ms(self.cfg.readiness.init_time));
                self.push(t, Event::Ready(j, stamp));
            } else {
                self.jobs[j].pause.reason = why;
            }
        }
        Ok(())
    }

    /// gang-core's texts name the shared request (`gang req7`); say which job it is.
    fn name_job(&self, text: &str, j: JobIx) -> String {
        let mut out = text.to_owned();
        if let Some(i) = out.find("(gang req") {
            if let Some(end) = out[i..].find(')') {
                out.replace_range(i..i + end + 1, &format!("(job {})", self.jobs[j].def.id));
            }
        }
        out
    }
}
