//! Admission (crate docs: the pass): jobs into the queue and out of it, timed
//! relaxation, the scheduling pass, and the start of an attempt on what gang-core
//! placed; the no-gang baseline's members placed one at a time.

use std::collections::BTreeMap;

use super::accounting::Phase;
use super::event::Event;
use super::ids::{ms, JobIx, ReqIx};
use super::job::{Kind, St};
use super::queue::{Key, MemberKey};
use super::Simulation;
use crate::config::{Discipline, Requeue};
use crate::error::SimError;
use crate::placer::ResId;
use crate::rng::draw;

/// The random stream of initialisation failures (the second word of the draw key).
const STREAM_INIT: u64 = 1;

impl Simulation {
    /// Puts a job in the queue (crate docs: queue order); `again`: it was there before.
    pub(super) fn enqueue(&mut self, j: JobIx, again: bool) {
        let entry = self.queue.enter();
        let job = &mut self.jobs[j];
        if !again {
            job.place.first_order = entry;
        }
        job.place.order = match (again, self.cfg.queue.requeue) {
            (true, Requeue::Creation) => job.place.first_order,
            _ => entry,
        };
        job.st = St::Queued;
        job.place.step = 0;
        job.stamp.bump();
        job.attempt.pods_placed = 0;
        let (key, stamp) = (job.key(), job.stamp);
        match &job.def.kind {
            Kind::NoGang { pods } => self.queue.members.add_job(j, key, pods),
            Kind::Gang { variants, after } => {
                self.queue.jobs.insert(key, j, Some(variants[0]));
                if let (Some(a), true) = (after, variants.len() > 1) {
                    let t = self.now.saturating_add(*a);
                    self.push(t, Event::Relax(j, stamp));
                }
            }
            Kind::Spread { .. } => self.queue.jobs.insert(key, j, None),
        }
        self.changes.dirty = true;
    }

    /// A no-gang job's members that wait to be placed wait no more.
    pub(super) fn remove_pods(&mut self, j: JobIx) {
        let job = &self.jobs[j];
        if let Kind::NoGang { pods } = &job.def.kind {
            self.queue.members.remove_job(j, job.key(), pods);
        }
    }

    /// Timed relaxation: the job's request moves one level out.
    pub(super) fn on_relax(&mut self, j: JobIx) {
        let job = &mut self.jobs[j];
        let Kind::Gang { variants, after } = &job.def.kind else {
            return;
        };
        if job.place.step + 1 >= variants.len() {
            return;
        }
        job.place.step += 1;
        let more = job.place.step + 1 < variants.len();
        let (after, stamp) = (*after, job.stamp);
        let (key, req) = (job.key(), variants[job.place.step]);
        self.queue.jobs.set_request(&key, j, req);
        if let (true, Some(a)) = (more, after) {
            let t = self.now.saturating_add(a);
            self.push(t, Event::Relax(j, stamp));
        }
        self.changes.dirty = true;
    }

    /// Starts an attempt on the reservations just made.
    pub(super) fn start_attempt(&mut self, j: JobIx, ids: Vec<ResId>) -> Result<(), SimError> {
        let now = self.now;
        for &id in &ids {
            self.owner.insert(id, j);
        }
        self.changes.version += 1;
        {
            let job = &mut self.jobs[j];
            job.hold.res = ids;
            job.counts.attempts += 1;
            job.times.admitted = Some(now);
            job.times.first_admitted.get_or_insert(now);
            job.st = St::Starting;
            job.stamp.bump();
            job.hold.open = now;
            job.hold.phase = Phase::Init;
        }
        self.regather(j);
        self.update_span(j);
        let members: u64 = self.jobs[j]
            .hold
            .res
            .iter()
            .map(|&id| self.placer.members_of(id))
            .sum();
        let fails = self.init_fails(j, members);
        let job = &mut self.jobs[j];
        job.attempt.fails = fails;
        let stamp = job.stamp;
        if !fails {
            let t = now.saturating_add(ms(self.cfg.readiness.init_time));
            self.push(t, Event::Ready(j, stamp));
        }
        if let Some(t) = self.cfg.readiness.timeout {
            self.push(now.saturating_add(ms(t)), Event::Timeout(j, stamp));
        }
        Ok(())
    }

    /// Whether some member of this attempt fails to initialise.
    pub(super) fn init_fails(&self, j: JobIx, members: u64) -> bool {
        let def = &self.jobs[j].def;
        if def.failing > 0 {
            return true;
        }
        if def.init_p <= 0.0 {
            return false;
        }
        let a = u64::from(self.jobs[j].counts.attempts);
        let seed = self.cfg.seed;
        (0..members).any(|m| draw(&[seed, STREAM_INIT, u64::from(j.0), a, m]) < def.init_p)
    }

    /// Whether request `r` was found not to fit since capacity was last given back.
    pub(super) fn known_no_fit(&self, r: ReqIx) -> bool {
        self.requests.known_no_fit(r, self.changes.freed)
    }

    /// Request `r` does not fit now.
    pub(super) fn set_no_fit(&mut self, r: ReqIx) {
        self.requests.set_no_fit(r, self.changes.freed);
    }

    /// Tries to place and reserve job `j` now (gang or spread).
    fn try_place(&mut self, j: JobIx) -> Result<bool, SimError> {
        let job = &self.jobs[j];
        let (r, spread) = match &job.def.kind {
            Kind::Gang { variants, .. } => (variants[job.place.step], None),
            Kind::Spread {
                req,
                replicas,
                level,
            } => (*req, Some((*replicas, level.clone()))),
            Kind::NoGang { .. } => return Ok(false),
        };
        if self.known_no_fit(r) {
            return Ok(false);
        }
        let ids = match spread {
            None => match self.placer.find(&self.requests[r])? {
                Some(f) => Some(vec![self.placer.reserve(f)?]),
                None => None,
            },
            Some((replicas, level)) => self.placer.spread(&self.requests[r], replicas, &level)?,
        };
        match ids {
            Some(ids) => {
                self.start_attempt(j, ids)?;
                Ok(true)
            }
            None => {
                self.set_no_fit(r);
                Ok(false)
            }
        }
    }

    /// One scheduling pass (crate docs: the pass).
    pub(super) fn pass(&mut self) -> Result<(), SimError> {
        self.changes.dirty = false;
        self.counts.passes += 1;
        self.replacements()?;
        // Head first, in queue order, until one waits.
        let mut head: Option<Key> = None;
        while let Some((key, j)) = self.queue.jobs.first() {
            if self.try_place(j)? || self.try_preempt(j)? {
                self.queue.jobs.remove(&key);
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

    /// Whether every kind of no-gang member waiting is known not to fit.
    fn no_member_fits(&self) -> bool {
        self.queue
            .members
            .by_req
            .keys()
            .all(|&r| self.known_no_fit(r))
    }

    /// The no-gang baseline: pending members in order, each placed alone where it fits.
    fn place_pods(&mut self) -> Result<(), SimError> {
        if self.queue.members.waiting.is_empty() || self.no_member_fits() {
            return Ok(());
        }
        // The map is only read while walking it; placed members leave it afterwards.
        let pending = std::mem::take(&mut self.queue.members.waiting);
        let mut placed = Vec::new();
        let out = self.walk_pods(&pending, &mut placed);
        self.queue.members.waiting = pending;
        for key in placed {
            self.queue.members.waiting.remove(&key);
        }
        out
    }

    fn walk_pods(
        &mut self,
        pending: &BTreeMap<MemberKey, u16>,
        placed: &mut Vec<MemberKey>,
    ) -> Result<(), SimError> {
        for (&key, &role) in pending {
            let j = key.job;
            let Kind::NoGang { pods } = &self.jobs[j].def.kind else {
                continue;
            };
            let r = pods[role as usize].0;
            if self.known_no_fit(r) {
                continue;
            }
            let Some(f) = self.placer.find(&self.requests[r])? else {
                self.set_no_fit(r);
                if self.no_member_fits() {
                    break;
                }
                continue;
            };
            let id = self.placer.reserve(f)?;
            placed.push(key);
            self.queue.members.placed_one(r);
            self.owner.insert(id, j);
            self.changes.version += 1;
            let now = self.now;
            if self.jobs[j].st == St::Queued {
                let members = self.jobs[j].def.members;
                self.jobs[j].counts.attempts += 1;
                let fails = self.init_fails(j, members);
                let job = &mut self.jobs[j];
                job.times.admitted = Some(now);
                job.times.first_admitted.get_or_insert(now);
                job.st = St::Starting;
                job.stamp.bump();
                job.hold.open = now;
                job.hold.phase = Phase::Init;
                job.times.first_pod = now;
                job.attempt.fails = fails;
                let stamp = job.stamp;
                if let Some(t) = self.cfg.readiness.timeout {
                    self.push(now.saturating_add(ms(t)), Event::Timeout(j, stamp));
                }
            }
            self.close(j);
            let gpu = self.placer.gpu_of(id);
            let job = &mut self.jobs[j];
            job.hold.res.push(id);
            job.hold.gpu += gpu;
            job.attempt.pods_placed += 1;
            let left = self.queue.members.left.get(&j).copied().unwrap_or(0);
            if left <= 1 {
                self.queue.members.left.remove(&j);
                self.update_span(j);
                if !self.jobs[j].attempt.fails {
                    let stamp = self.jobs[j].stamp;
                    let t = now.saturating_add(ms(self.cfg.readiness.init_time));
                    self.push(t, Event::Ready(j, stamp));
                }
            } else {
                self.queue.members.left.insert(j, left - 1);
            }
        }
        Ok(())
    }
}
