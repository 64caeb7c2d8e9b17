//! The waiting queue: jobs in queue order, and the same keys grouped by request, so
//! that a backfill pass visits the requests that wait (hundreds) rather than every
//! waiting job (tens of thousands on a crowded cluster).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// A job's place in the queue: (−priority, order).
pub(crate) type Key = (i64, u64);

#[derive(Debug, Default)]
pub(crate) struct Waiting {
    /// Every waiting job, with the request it asks now (`None`: not a candidate for
    /// backfill, such as a spread job).
    jobs: BTreeMap<Key, (u32, Option<usize>)>,
    /// The keys of the waiting jobs per request they ask now.
    by_req: BTreeMap<usize, BTreeSet<Key>>,
}

impl Waiting {
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The waiting jobs, in queue order.
    pub(crate) fn jobs(&self) -> impl Iterator<Item = u32> + '_ {
        self.jobs.values().map(|&(j, _)| j)
    }

    /// The head: the first job in queue order.
    pub(crate) fn first(&self) -> Option<(Key, u32)> {
        self.jobs.first_key_value().map(|(&k, &(j, _))| (k, j))
    }

    pub(crate) fn get(&self, key: &Key) -> Option<u32> {
        self.jobs.get(key).map(|&(j, _)| j)
    }

    pub(crate) fn insert(&mut self, key: Key, job: u32, req: Option<usize>) {
        if let Some((_, Some(old))) = self.jobs.insert(key, (job, req)) {
            self.unindex(old, &key);
        }
        if let Some(r) = req {
            self.by_req.entry(r).or_default().insert(key);
        }
    }

    pub(crate) fn remove(&mut self, key: &Key) -> Option<u32> {
        let (job, req) = self.jobs.remove(key)?;
        if let Some(r) = req {
            self.unindex(r, key);
        }
        Some(job)
    }

    /// Job `job`, waiting at `key`, asks `req` from now on (a relaxed request).
    pub(crate) fn set_request(&mut self, key: &Key, job: u32, req: usize) {
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
    ) -> impl Iterator<Item = (usize, impl Iterator<Item = &'a Key>)> + 'a {
        let after = *after;
        self.by_req.iter().filter_map(move |(&r, keys)| {
            let mut behind = keys
                .range((Bound::Excluded(after), Bound::Unbounded))
                .peekable();
            behind.peek()?;
            Some((r, behind))
        })
    }

    fn unindex(&mut self, req: usize, key: &Key) {
        if let Some(keys) = self.by_req.get_mut(&req) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_req.remove(&req);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `requests_behind` must give, from the jobs alone.
    fn expected(w: &Waiting, after: Key) -> Vec<(usize, Vec<Key>)> {
        let mut out: BTreeMap<usize, Vec<Key>> = BTreeMap::new();
        for (&k, &(_, r)) in &w.jobs {
            if let (true, Some(r)) = (k > after, r) {
                out.entry(r).or_default().push(k);
            }
        }
        out.into_iter().collect()
    }

    fn seen(w: &Waiting, after: Key) -> Vec<(usize, Vec<Key>)> {
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
            let key = ((next() % 3) as i64 - 1, next() % 200);
            match next() % 4 {
                0 | 1 => {
                    let req = (next() % 5 != 0).then(|| (next() % 12) as usize);
                    w.insert(key, step, req);
                    assert_eq!(w.get(&key), Some(step));
                }
                2 => {
                    let had = w.get(&key);
                    assert_eq!(w.remove(&key), had);
                    assert_eq!(w.get(&key), None);
                }
                _ => {
                    if let Some(j) = w.get(&key) {
                        w.set_request(&key, j, (next() % 12) as usize);
                        assert_eq!(w.jobs[&key].1.map(|r| r < 12), Some(true));
                    }
                    // Another job's key is left alone.
                    w.set_request(&key, u32::MAX, 99);
                    assert!(!w.by_req.contains_key(&99));
                }
            }
            let after = ((next() % 3) as i64 - 1, next() % 200);
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
