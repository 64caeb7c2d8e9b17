//! Preemption (`"preemption": "lower-priority"`, README "Preemption"): when the head of
//! the queue does not fit, gang-core's `preempt` chooses the running jobs to evict —
//! whole jobs of strictly lower priority, the least work lost — and the head starts
//! where the plan places it; the victims lose their work since their last checkpoint
//! and re-enter the queue.

use super::accounting::Phase;
use super::ids::{JobIx, Ms};
use super::job::{Job, Kind, St};
use super::Simulation;
use crate::error::SimError;
use crate::placer::ResId;

impl Simulation {
    /// The head `j` does not fit: evict what gang-core's plan says and place it.
    /// `false` when no eviction of lower-priority work makes it fit (or preemption is
    /// off, or the job is not one gang: spread and no-gang jobs wait as before).
    pub(super) fn try_preempt(&mut self, j: JobIx) -> Result<bool, SimError> {
        if self.cfg.preemption.is_off() {
            return Ok(false);
        }
        let job = &self.jobs[j];
        let Kind::Gang { variants, .. } = &job.def.kind else {
            return Ok(false);
        };
        let r = variants[job.place.step];
        // Nothing changed since the last plan found nothing: the same answer.
        let version = self.changes.version;
        if self.requests.no_plan.get(&r) == Some(&version) {
            return Ok(false);
        }
        let now = self.now;
        let jobs = &self.jobs;
        let owner = &self.owner;
        let cost = |id: ResId| owner.get(&id).map_or(0, |&v| work_at_risk(jobs, v, now));
        let Some((victims, found)) = self.placer.preempt(&self.requests[r], cost)? else {
            self.requests.no_plan.insert(r, version);
            return Ok(false);
        };
        let mut evicted: Vec<JobIx> = victims
            .iter()
            .map(|id| {
                self.owner.get(id).copied().ok_or_else(|| {
                    SimError::Internal(format!("preemption victim {id:?} has no job"))
                })
            })
            .collect::<Result<_, _>>()?;
        evicted.sort_unstable();
        evicted.dedup();
        for v in evicted {
            self.evict(v)?;
        }
        let id = self.placer.reserve(found)?;
        self.jobs[j].preempted.preemptions += 1;
        self.start_attempt(j, vec![id])?;
        Ok(true)
    }

    /// Evicts job `v` whole: it loses its work since its last checkpoint (a starting
    /// attempt is wasted), releases everything and re-enters the queue.
    fn evict(&mut self, v: JobIx) -> Result<(), SimError> {
        let (lost_before, wasted_before) = {
            let job = &self.jobs[v];
            (job.run.lost_ms, job.hold.acct.wasted)
        };
        match self.jobs[v].st {
            St::Running => self.end_segment(v, false),
            St::Starting => {
                self.set_phase(v, Phase::None);
                self.jobs[v].hold.init_was_wasted();
            }
            St::Paused { .. } => self.set_phase(v, Phase::None),
            other => {
                return Err(SimError::Internal(format!(
                    "preemption victim {} is {other:?}, not holding a gang",
                    self.jobs[v].def.id
                )))
            }
        }
        let job = &mut self.jobs[v];
        // `lost_ms` counts work lost to node failures; this loss is preemption's.
        let lost = job.run.lost_ms - lost_before;
        job.run.lost_ms = lost_before;
        job.preempted.evictions += 1;
        job.preempted.lost_ms += lost;
        job.preempted.lost_gpu += job.hold.acct.wasted - wasted_before;
        self.release_all(v)?;
        self.enqueue(v, true);
        Ok(())
    }
}

/// The GPU-time (milli-GPU × ms, capped to `u64`) job `v` would lose if evicted at
/// `now`: its GPUs times its running time since the last checkpoint. The cost gang-core
/// weighs first among victims of the same highest priority.
fn work_at_risk(jobs: &[Job], v: JobIx, now: Ms) -> u64 {
    let job = &jobs[v.ix()];
    if job.st != St::Running {
        return 0;
    }
    let elapsed = now.saturating_sub(job.run.seg_start);
    let lost = match job.def.checkpoint {
        Some(c) => elapsed % c,
        None => elapsed,
    };
    u64::try_from(u128::from(job.hold.gpu) * u128::from(lost)).unwrap_or(u64::MAX)
}
