//! The queue (crate docs: the pass): gang and spread jobs in queue order, the same
//! keys grouped by request, so that a backfill pass visits the requests that wait
//! (hundreds) rather than every waiting job (tens of thousands on a crowded cluster);
//! and the no-gang members waiting to be placed one at a time.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use rustc_hash::FxHashMap;

use super::ids::{JobIx, ReqIx};

/// A job's place in the queue: higher priority first, then by entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    /// −priority.
    pub(crate) rank: i64,
    /// The job's entry (see [`Queue::enter`]).
    pub(crate) order: u64,
}

/// The queue of the simulation: the jobs placed whole, the members placed one at a
/// time, and the count of entries that orders them.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    pub(crate) jobs: Waiting,
    pub(crate) members: Members,
    entries: u64,
}

impl Queue {
    /// A new entry's number: later entries wait behind earlier ones of their priority.
    pub(crate) fn enter(&mut self) -> u64 {
        self.entries += 1;
        self.entries
    }

    /// Jobs waiting, counting a no-gang job with members still to place as one.
    pub(crate) fn len(&self) -> usize {
        self.jobs.len() + self.members.left.len()
    }
}

/// Jobs waiting to be placed whole.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    /// Every waiting job, with the request it asks now (`None`: not a candidate for
    /// backfill, such as a spread job).
    jobs: BTreeMap<Key, (JobIx, Option<ReqIx>)>,
    /// The keys of the waiting jobs per request they ask now.
    by_req: BTreeMap<ReqIx, BTreeSet<Key>>,
}

impl Waiting {
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The waiting jobs, in queue order.
    pub(crate) fn jobs(&self) -> impl Iterator<Item = JobIx> + '_ {
        self.jobs.values().map(|&(j, _)| j)
    }

    /// The head: the first job in queue order.
    pub(crate) fn first(&self) -> Option<(Key, JobIx)> {
        self.jobs.first_key_value().map(|(&k, &(j, _))| (k, j))
    }

    pub(crate) fn get(&self, key: &Key) -> Option<JobIx> {
        self.jobs.get(key).map(|&(j, _)| j)
    }

    pub(crate) fn insert(&mut self, key: Key, job: JobIx, req: Option<ReqIx>) {
        if let Some((_, Some(old))) = self.jobs.insert(key, (job, req)) {
            self.unindex(old, &key);
        }
        if let Some(r) = req {
            self.by_req.entry(r).or_default().insert(key);
        }
    }

    pub(crate) fn remove(&mut self, key: &Key) -> Option<JobIx> {
        let (job, req) = self.jobs.remove(key)?;
        if let Some(r) = req {
            self.unindex(r, key);
        }
        Some(job)
    }

    /// Job `job`, waiting at `key`, asks `req` from now on (a relaxed request).
    pub(crate) fn set_request(&mut self, key: &Key, job: JobIx, req: ReqIx) {
        match self.jobs.get_mut(key) {
            Some(entry) if entry.0 == job => {
                let old = entry.1.replace(req);
                if let Some(o) = old {
                    self.unindex(o, key);
                }
                self.by_req.entry(req).or_default().insert(*key);
            }
            _ => {}
        }
    }

    /// The requests asked by jobs waiting behind `after`, each with those jobs' keys in
    /// queue order; requests in increasing order.
    pub(crate) fn requests_behind<'a>(
        &'a self,
        after: &Key,
    ) -> impl Iterator<Item = (ReqIx, impl Iterator<Item = &'a Key>)> + 'a {
        let after = *after;
        self.by_req.iter().filter_map(move |(&r, keys)| {
            let mut behind = keys
                .range((Bound::Excluded(after), Bound::Unbounded))
                .peekable();
            behind.peek()?;
            Some((r, behind))
        })
    }

    fn unindex(&mut self, req: ReqIx, key: &Key) {
        if let Some(keys) = self.by_req.get_mut(&req) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_req.remove(&req);
            }
        }
    }
}

/// A no-gang member's place among the members waiting: by priority, then member index
/// within its job, then the job's entry (so that the members of jobs submitted
/// together interleave, as pods of concurrently created jobs do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct MemberKey {
    /// −priority.
    pub(crate) rank: i64,
    /// The member's index in its job.
    pub(crate) member: u64,
    /// The job's entry.
    pub(crate) order: u64,
    pub(crate) job: JobIx,
}

/// No-gang members waiting to be placed, one at a time.
#[derive(Debug, Default)]
pub(crate) struct Members {
    /// Every member waiting, in placement order, with its role's index in the job.
    pub(crate) waiting: BTreeMap<MemberKey, u16>,
    /// Per job with members waiting: how many are left to place.
    pub(crate) left: FxHashMap<JobIx, u32>,
    /// Per request: how many members waiting ask it.
    pub(crate) by_req: BTreeMap<ReqIx, u32>,
}

impl Members {
    /// Every member of job `job`, whose roles ask `roles` (the one-member request and
    /// the count of each), waits from now, at the job's place `key`.
    pub(crate) fn add_job(&mut self, job: JobIx, key: Key, roles: &[(ReqIx, u32)]) {
        let total: u32 = roles.iter().map(|p| p.1).sum();
        let mut member = 0u64;
        for (ri, &(req, count)) in roles.iter().enumerate() {
            for _ in 0..count {
                let k = MemberKey {
                    rank: key.rank,
                    member,
                    order: key.order,
                    job,
                };
                self.waiting.insert(k, ri as u16);
                member += 1;
            }
            *self.by_req.entry(req).or_default() += count;
        }
        self.left.insert(job, total);
    }

    /// Job `job`'s members (of `roles`, at `key`) wait no more.
    pub(crate) fn remove_job(&mut self, job: JobIx, key: Key, roles: &[(ReqIx, u32)]) {
        if self.left.remove(&job).is_none() {
            return;
        }
        let total: u64 = roles.iter().map(|p| u64::from(p.1)).sum();
        for member in 0..total {
            let k = MemberKey {
                rank: key.rank,
                member,
                order: key.order,
                job,
            };
            if let Some(role) = self.waiting.remove(&k) {
                self.placed_one(roles[role as usize].0);
            }
        }
    }

    /// One member asking `req` waits no more.
    pub(crate) fn placed_one(&mut self, req: ReqIx) {
        if let Some(c) = self.by_req.get_mut(&req) {
            *c -= 1;
            if *c == 0 {
                self.by_req.remove(&req);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `requests_behind` must give, from the jobs alone.
    fn expected(w: &Waiting, after: Key) -> Vec<(ReqIx, Vec<Key>)> {
        let mut out: BTreeMap<ReqIx, Vec<Key>> = BTreeMap::new();
        for (&k, &(_, r)) in &w.jobs {
            if let (true, Some(r)) = (k > after, r) {
                out.entry(r).or_default().push(k);
            }
        }
        out.into_iter().collect()
    }

    fn seen(w: &Waiting, after: Key) -> Vec<(ReqIx, Vec<Key>)> {
        w.requests_behind(&after)
            .map(|(r, ks)| (r, ks.copied().collect()))
            .collect()
    }

    #[test]
    fn the_index_follows_inserts_removals_and_relaxed_requests() {
        let mut w = Waiting::default();
        let mut x = 7u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for step in 0..4000u32 {
            let key = Key {
                rank: (next() % 3) as i64 - 1,
                order: next() % 200,
            };
            match next() % 4 {
                0 | 1 => {
                    let req = (next() % 5 != 0).then(|| ReqIx((next() % 12) as u32));
                    w.insert(key, JobIx(step), req);
                    assert_eq!(w.get(&key), Some(JobIx(step)));
                }
                2 => {
                    let had = w.get(&key);
                    assert_eq!(w.remove(&key), had);
                    assert_eq!(w.get(&key), None);
                }
                _ => {
                    if let Some(j) = w.get(&key) {
                        w.set_request(&key, j, ReqIx((next() % 12) as u32));
                        assert_eq!(w.jobs[&key].1.map(|r| r.0 < 12), Some(true));
                    }
                    // Another job's key is left alone.
                    w.set_request(&key, JobIx(u32::MAX), ReqIx(99));
                    assert!(!w.by_req.contains_key(&ReqIx(99)));
                }
            }
            let after = Key {
                rank: (next() % 3) as i64 - 1,
                order: next() % 200,
            };
            assert_eq!(seen(&w, after), expected(&w, after), "step {step}");
            assert!(w.by_req.values().all(|ks| !ks.is_empty()));
            let indexed: usize = w.by_req.values().map(BTreeSet::len).sum();
            assert_eq!(
                indexed,
                w.jobs.values().filter(|(_, r)| r.is_some()).count()
            );
        }
        assert_eq!(w.len(), w.jobs().count());
        assert_eq!(w.first().map(|(k, _)| k), w.jobs.keys().next().copied());
    }
}
