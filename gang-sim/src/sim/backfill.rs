//! Backfill (crate docs: the pass, `backfill`): the jobs behind a waiting head placed
//! by gang-core's backfill rule, asked of the simulation's warm solver (or of
//! `Inventory::admit` itself with `queue.via_admit`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::ids::{JobIx, ReqIx};
use super::job::Kind;
use super::queue::Key;
use super::requests::BackfillFailed;
use super::Simulation;
use crate::error::SimError;
use crate::placer::{Req, ResId};

impl Simulation {
    /// Backfills behind the head waiting at `hk`.
    pub(super) fn backfill(&mut self, hk: Key) -> Result<(), SimError> {
        let Some(hj) = self.queue.jobs.get(&hk) else {
            return Ok(());
        };
        let Kind::Gang { variants, .. } = &self.jobs[hj].def.kind else {
            return Ok(()); // a spread head: FIFO only
        };
        let head_req = variants[self.jobs[hj].place.step];
        let state = Some((self.changes.version, hk));
        if self.requests.backfill_failed.at != state {
            self.requests.backfill_failed = BackfillFailed {
                at: state,
                reqs: Default::default(),
            };
        }
        // The requests behind the head that fit the free cluster now: one question per
        // request waiting, not per job.
        let mut fit: Vec<ReqIx> = Vec::new();
        for (r, _) in self.queue.jobs.requests_behind(&hk) {
            if self.known_no_fit(r) || self.requests.backfill_failed.reqs.contains(&r) {
                continue;
            }
            if !self.placer.fits(&self.requests[r])? {
                self.requests.set_no_fit(r, self.changes.freed);
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
            let heads: Vec<&Req> = self.requests.probes[&head_req].iter().collect();
            let pass = self.placer.backfill_begin(&heads)?;
            let placed = self.backfill_in_order(hk, &fit);
            self.placer.backfill_end(pass);
            placed?
        };
        // Nothing placed: the state is as it was, and every request that fit failed in it.
        if placed.is_empty() {
            self.requests.backfill_failed.reqs.extend(fit);
        }
        for (j, id) in placed {
            let key = self.jobs[j].key();
            self.queue.jobs.remove(&key);
            self.start_attempt(j, vec![id])?;
        }
        Ok(())
    }

    /// The head's one-member probes for the backfill rule, made once per request.
    fn backfill_probes(&mut self, head_req: ReqIx) -> Result<(), SimError> {
        if !self.requests.probes.contains_key(&head_req) {
            let mut pods = Vec::new();
            for (i, role) in self.requests[head_req].roles().iter().enumerate() {
                let p = self
                    .placer
                    .usable_probe(&format!("req{}-role{i}", head_req.0), role)
                    .map_err(|e| SimError::Internal(format!("probe of a head: {e}")))?;
                pods.push(p);
            }
            self.requests.probes.insert(head_req, pods);
        }
        Ok(())
    }

    /// Backfills, on the nodes outside the head's, the jobs behind `hk` whose
    /// request is in `fit`, in queue order; once a request does not fit, its later jobs
    /// are not asked (capacity only shrinks meanwhile). The jobs placed, with their
    /// reservations.
    fn backfill_in_order(
        &mut self,
        hk: Key,
        fit: &[ReqIx],
    ) -> Result<Vec<(JobIx, ResId)>, SimError> {
        // A merge of the fitting requests' queues, by each one's next key.
        let mut queues: Vec<_> = self
            .queue
            .jobs
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
            let Some(j) = self.queue.jobs.get(&key) else {
                continue;
            };
            // A request that does not fit leaves the merge: its later jobs would not
            // fit either.
            if let Some(id) = self.placer.backfill_try(&self.requests[r])? {
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
        head_req: ReqIx,
        fit: &[ReqIx],
    ) -> Result<Vec<(JobIx, ResId)>, SimError> {
        let mut cands: Vec<(Key, JobIx, ReqIx)> = Vec::new();
        for (r, keys) in self.queue.jobs.requests_behind(&hk) {
            if fit.contains(&r) {
                cands.extend(keys.filter_map(|k| Some((*k, self.queue.jobs.get(k)?, r))));
            }
        }
        cands.sort_unstable();
        let refs: Vec<&Req> = cands.iter().map(|&(_, _, r)| &self.requests[r]).collect();
        let (head_id, ids) = self
            .placer
            .admit_backfill(&self.requests[head_req], &refs)?;
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
}
