//! Invariants (crate docs: invariants), checked after every event and every pass when
//! invariant checks are on, and at the end of the run.

use super::ids::ms;
use super::job::St;
use super::Simulation;
use crate::config::RecoveryMode;
use crate::error::SimError;

impl Simulation {
    /// Every invariant, or the first one broken.
    pub(super) fn validate(&self) -> Result<(), String> {
        self.placer.validate()?;
        let timeout = self.cfg.readiness.timeout.map(ms);
        let mut held = 0u64;
        let mut busy = 0u64;
        for (i, j) in self.jobs.iter().enumerate() {
            let id = &j.def.id;
            let holds = !j.hold.res.is_empty();
            let may_hold = matches!(j.st, St::Starting | St::Running | St::Paused { .. });
            if holds && !may_hold {
                return Err(format!("job {id} holds capacity in state {:?}", j.st));
            }
            if j.st == St::Running && !holds {
                return Err(format!("job {id} runs holding nothing"));
            }
            let nogang = j.def.kind.is_nogang();
            if j.st == St::Starting {
                let since = if nogang {
                    j.times.first_pod
                } else {
                    j.times.admitted.unwrap_or(0)
                };
                if let Some(t) = timeout {
                    if self.now > since + t {
                        return Err(format!(
                            "job {id} still starting {} ms after admission, past its readiness timeout",
                            self.now - since
                        ));
                    }
                }
                // A gang is whole from its admission (gang-core reserves all or nothing).
                if !nogang {
                    let lost: u64 = j.hold.res.iter().map(|&r| self.placer.lost_of(r)).sum();
                    if lost > 0 {
                        return Err(format!("job {id} starting with lost members"));
                    }
                }
            }
            if let St::Paused { .. } = j.st {
                if j.def.recovery != RecoveryMode::Replace {
                    return Err(format!("job {id} paused without replace recovery"));
                }
            }
            if j.st == St::Running {
                let lost: u64 = j.hold.res.iter().map(|&r| self.placer.lost_of(r)).sum();
                if lost > 0 {
                    return Err(format!("job {id} running with lost members"));
                }
                busy += j.hold.gpu;
            }
            let g: u64 = j.hold.res.iter().map(|&r| self.placer.gpu_of(r)).sum();
            if g != j.hold.gpu {
                return Err(format!(
                    "job {id}: counted {} GPU milli held, holds {g}",
                    j.hold.gpu
                ));
            }
            held += g;
            j.hold.check().map_err(|m| format!("job {id}: {m}"))?;
            if j.st == St::Done && (holds || j.fin.is_none()) {
                return Err(format!(
                    "job {id} done but holding, or without a final state"
                ));
            }
            for r in &j.hold.res {
                if self.owner.get(r).map(|o| o.ix()) != Some(i) {
                    return Err(format!("job {id}: reservation ownership lost"));
                }
            }
            self.validate_preemption(j)?;
        }
        if held != self.placer.held_gpu() {
            return Err(format!(
                "jobs hold {held} GPU milli, reservations {}",
                self.placer.held_gpu()
            ));
        }
        if busy != self.usage.busy {
            return Err(format!(
                "running jobs hold {busy} GPU milli, counted {}",
                self.usage.busy
            ));
        }
        Ok(())
    }

    /// Preemption's: nothing is evicted when it is off; only a gang is evicted or
    /// evicts (spread and no-gang jobs never are); what evictions wasted is part of the
    /// job's wasted GPU-time.
    fn validate_preemption(&self, j: &super::job::Job) -> Result<(), String> {
        let (id, p) = (&j.def.id, &j.preempted);
        if self.cfg.preemption.is_off() && (p.evictions > 0 || p.preemptions > 0) {
            return Err(format!("job {id} preempted with preemption off"));
        }
        let gang = matches!(j.def.kind, super::job::Kind::Gang { .. });
        if !gang && (p.evictions > 0 || p.preemptions > 0) {
            return Err(format!(
                "job {id} is not one gang but was part of a preemption"
            ));
        }
        if p.lost_gpu > j.hold.acct.wasted {
            return Err(format!(
                "job {id}: evictions wasted {} GPU·ms, more than its waste {}",
                p.lost_gpu, j.hold.acct.wasted
            ));
        }
        Ok(())
    }

    /// The invariants of the end: every invariant, nothing held, and the jobs' held
    /// GPU-time equal to the cluster's integral of held GPUs.
    pub(super) fn validate_end(&self) -> Result<(), SimError> {
        self.validate()
            .map_err(|m| SimError::Internal(format!("at the end: {m}")))?;
        if self.placer.live_reservations() != 0 {
            return Err(SimError::Internal("reservations left at the end".into()));
        }
        let total: u128 = self.jobs.iter().map(|j| j.hold.acct.held).sum();
        if total != self.usage.held {
            return Err(SimError::Internal(format!(
                "jobs held {total} GPU·ms, the cluster's integral is {}",
                self.usage.held
            )));
        }
        Ok(())
    }
}
