//! The timeline: a sample of the cluster every `sample_interval`, with the GPUs left
//! fragmented (free, yet not usable by anything waiting) found by a trial placement.

use std::time::Instant;

use super::ids::{ms, secs, Ms};
use super::job::{Kind, St};
use super::Simulation;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::output::Sample;
use crate::placer::ResId;

/// The samples so far, and when the next is due.
#[derive(Debug)]
pub(crate) struct Timeline {
    pub(crate) samples: Vec<Sample>,
    next: Ms,
    interval: Ms,
    /// The last fragmentation measured, and the state version it holds for.
    fragmented: Option<(u64, f64)>,
}

impl Timeline {
    pub(crate) fn new(cfg: &SimConfig) -> Timeline {
        Timeline {
            samples: Vec::new(),
            next: 0,
            interval: ms(cfg.sample_interval).max(1),
            fragmented: None,
        }
    }
}

impl Simulation {
    /// Takes every sample due before `t`.
    ///
    /// # Errors
    /// [`SimError::Config`] naming `limits.max_samples` when the samples due would pass
    /// it (found before any is taken).
    pub(super) fn samples_before(&mut self, t: Ms) -> Result<(), SimError> {
        if self.timeline.next < t {
            let due = (t - self.timeline.next).div_ceil(self.timeline.interval);
            let n = (self.timeline.samples.len() as u64).saturating_add(due);
            crate::config::Limits::check(
                "max_samples",
                n,
                self.cfg.limits.max_samples,
                &format!(
                    "the timeline to {} s every {} s takes {n} samples (set a horizon, or a \
                     longer sample_interval)",
                    secs(t.saturating_sub(1)),
                    self.cfg.sample_interval
                ),
            )?;
        }
        while self.timeline.next < t {
            let s = self.sample(self.timeline.next)?;
            self.timeline.samples.push(s);
            self.timeline.next = self.timeline.next.saturating_add(self.timeline.interval);
        }
        Ok(())
    }

    fn sample(&mut self, at: Ms) -> Result<Sample, SimError> {
        let total = self.placer.allocatable_gpu();
        let frag = match self.timeline.fragmented {
            Some((v, f)) if v == self.changes.version => f,
            _ => {
                let t = self.cfg.profile.then(Instant::now);
                let f = self.probe()? as f64 / 1000.0;
                self.timing.probe_ns += t.map_or(0, |t| t.elapsed().as_nanos() as u64);
                self.timeline.fragmented = Some((self.changes.version, f));
                f
            }
        };
        let running = self.jobs.iter().filter(|j| j.st == St::Running).count();
        let held = self.placer.held_gpu();
        Ok(Sample {
            time: secs(at),
            held_gpus: held as f64 / 1000.0,
            busy_gpus: self.usage.busy as f64 / 1000.0,
            free_gpus: self.placer.free_gpu() as f64 / 1000.0,
            fragmented_gpus: frag,
            utilisation: if total > 0 {
                held as f64 / total as f64
            } else {
                0.0
            },
            queued: self.queue.len(),
            running,
            failed_nodes: self.placer.failed_nodes(),
        })
    }

    /// Free GPUs (milli) left after placing, as a trial, every waiting gang that fits,
    /// in queue order; everything is given back after. 0 when nothing waits.
    fn probe(&mut self) -> Result<u64, SimError> {
        if self.queue.jobs.is_empty() && self.queue.members.waiting.is_empty() {
            return Ok(0);
        }
        let mut failed = vec![false; self.requests.len()];
        let mut trial: Vec<ResId> = Vec::new();
        let waiting: Vec<_> = self.queue.jobs.jobs().collect();
        for j in waiting {
            let job = &self.jobs[j];
            match &job.def.kind {
                Kind::Gang { variants, .. } => {
                    let r = variants[job.place.step];
                    if failed[r.ix()] {
                        continue;
                    }
                    match self.placer.find(&self.requests[r])? {
                        Some(f) => trial.push(self.placer.reserve(f)?),
                        None => failed[r.ix()] = true,
                    }
                }
                Kind::Spread {
                    req,
                    replicas,
                    level,
                } => {
                    if let Some(ids) = self.placer.spread(&self.requests[*req], *replicas, level)? {
                        trial.extend(ids);
                    }
                }
                Kind::NoGang { .. } => {}
            }
        }
        let pods: Vec<_> = self
            .queue
            .members
            .waiting
            .iter()
            .map(|(k, &role)| (k.job, role))
            .collect();
        for (j, role) in pods {
            let Kind::NoGang { pods } = &self.jobs[j].def.kind else {
                continue;
            };
            let r = pods[role as usize].0;
            if failed[r.ix()] {
                continue;
            }
            match self.placer.find(&self.requests[r])? {
                Some(f) => trial.push(self.placer.reserve(f)?),
                None => failed[r.ix()] = true,
            }
        }
        let left = self.placer.free_gpu();
        for id in trial {
            self.placer.release(id)?;
        }
        Ok(left)
    }
}
