//! Readiness (crate docs: `ready`, `timeout`): an attempt becomes ready and runs, or
//! times out and backs off; a paused job resumes; the slowdown of a placement's span.

use super::accounting::Phase;
use super::event::Event;
use super::ids::{ms, JobIx, Ms};
use super::job::{Kind, St};
use super::Simulation;
use crate::error::SimError;
use crate::output::FinalState;

impl Simulation {
    /// Every member of the attempt is ready: the job runs.
    pub(super) fn on_ready(&mut self, j: JobIx) {
        self.set_phase(j, Phase::Running);
        let now = self.now;
        let job = &mut self.jobs[j];
        job.hold.init_was_idle();
        job.times.all_ready.get_or_insert(now);
        job.hold.progressed = true;
        self.start_segment(j);
    }

    /// A running segment starts now; its `finish` is scheduled.
    fn start_segment(&mut self, j: JobIx) {
        let now = self.now;
        let job = &mut self.jobs[j];
        job.st = St::Running;
        job.run.seg_start = now;
        job.stamp.bump();
        let wall = (job.run.remaining * job.run.slowdown).round().max(0.0) as Ms;
        let stamp = job.stamp;
        self.push(now.saturating_add(wall), Event::Finish(j, stamp));
    }

    /// The replacements of a paused job are ready: it runs again.
    pub(super) fn on_resume(&mut self, j: JobIx) {
        self.set_phase(j, Phase::Running);
        self.jobs[j].pause.deadline = None;
        self.update_span(j);
        self.start_segment(j);
    }

    /// The span of the job's placement, and its slowdown from the job's table.
    pub(super) fn update_span(&mut self, j: JobIx) {
        let job = &self.jobs[j];
        let span = match job.def.kind {
            Kind::NoGang { .. } => self.placer.span(&job.hold.res),
            _ => job
                .hold
                .res
                .iter()
                .map(|&id| self.placer.span(&[id]))
                .max()
                .unwrap_or(0),
        };
        let table = &self.names.tables[job.def.table];
        let l = self.placer.levels().len();
        let col = if span > l {
            table.len() - 1
        } else {
            span.min(table.len() - 1)
        };
        let slowdown = table[col];
        let job = &mut self.jobs[j];
        job.run.span = Some(span);
        job.run.slowdown = slowdown;
    }

    /// Not all ready in time: the attempt is given up, then backoff or `failed`.
    pub(super) fn on_readiness_timeout(&mut self, j: JobIx) -> Result<(), SimError> {
        self.set_phase(j, Phase::None);
        self.jobs[j].hold.init_was_wasted();
        let placed = self.jobs[j].attempt.pods_placed;
        let is_nogang = self.jobs[j].def.kind.is_nogang();
        self.release_all(j)?;
        let job = &mut self.jobs[j];
        job.counts.readiness_failures += 1;
        let r = &self.cfg.readiness;
        let n = job.counts.readiness_failures;
        if n >= r.max_attempts {
            let members = job.def.members;
            let what = if is_nogang && placed < members {
                format!("only {placed} of {members} members were ever placed")
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
        job.stamp.bump();
        let stamp = job.stamp;
        self.push(self.now.saturating_add(backoff), Event::Requeue(j, stamp));
        Ok(())
    }
}
