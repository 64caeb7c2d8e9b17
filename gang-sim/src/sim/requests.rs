//! The simulation's requests: every distinct gang its jobs ask, compiled once against
//! the cluster, and what has been learnt about each (it does not fit now; it can never
//! fit; its head probes for the backfill rule).

use std::ops::Index;

use rustc_hash::{FxHashMap, FxHashSet};

use super::ids::ReqIx;
use super::queue::Key;
use crate::placer::Req;

/// The compiled requests, indexed by [`ReqIx`].
#[derive(Default)]
pub(crate) struct Requests {
    reqs: Vec<Req>,
    /// Per request: the give-back count at which it was last found not to fit. Less
    /// free capacity never turns "does not fit" into "fits", so the answer holds until
    /// capacity is given back.
    no_fit: Vec<Option<u64>>,
    /// Per request: whether it fits the cluster as given, once asked.
    pub(crate) fits_empty: Vec<Option<bool>>,
    /// Per request: its roles' one-member probes (for the backfill rule), once asked.
    pub(crate) probes: FxHashMap<ReqIx, Vec<Req>>,
    pub(crate) backfill_failed: BackfillFailed,
    /// Per request: the state version at which preemption last found no plan for it
    /// (nothing changed since: the same answer).
    pub(crate) no_plan: FxHashMap<ReqIx, u64>,
}

/// The requests that fit the free cluster but were not backfilled beside the head, and
/// the state that answer holds for: until the inventory or the head changes, asking
/// again would cordon the same nodes and fail the same way.
#[derive(Default)]
pub(crate) struct BackfillFailed {
    /// The state version and the head's key.
    pub(crate) at: Option<(u64, Key)>,
    pub(crate) reqs: FxHashSet<ReqIx>,
}

impl Requests {
    /// Adds a request.
    pub(crate) fn push(&mut self, req: Req) -> ReqIx {
        self.reqs.push(req);
        self.no_fit.push(None);
        self.fits_empty.push(None);
        ReqIx((self.reqs.len() - 1) as u32)
    }

    pub(crate) fn len(&self) -> usize {
        self.reqs.len()
    }

    /// Whether `r` was found not to fit since capacity was last given back (`freed`).
    pub(crate) fn known_no_fit(&self, r: ReqIx, freed: u64) -> bool {
        self.no_fit[r.ix()] == Some(freed)
    }

    /// `r` does not fit now (`freed`: the give-back count).
    pub(crate) fn set_no_fit(&mut self, r: ReqIx, freed: u64) {
        self.no_fit[r.ix()] = Some(freed);
    }
}

impl Index<ReqIx> for Requests {
    type Output = Req;

    fn index(&self, r: ReqIx) -> &Req {
        &self.reqs[r.ix()]
    }
}
