//! The solver's what-if mirror: a copy of the inventory on which a question over
//! hypothetical states (preemption: "does the gang fit once these are gone?") changes
//! capacities, with a solver of its own, kept between queries.
//!
//! Kept, not cloned per query: when the same inventory value is asked again, the
//! mirror catches up with it from its journal (the nodes touched since, copied over),
//! and the mirror's own solver keeps its capacity caches warm; only a new inventory
//! value (a clone, a rebuild, nodes added, removed or relabelled) or a history the
//! journal no longer holds costs a new copy. The mirror's caller must leave it as it
//! found it (every hypothetical change undone) before giving it back.

use std::sync::{Arc, Weak};

use super::Solver;
use crate::compile::{Compiled, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::Inventory;

/// A mirror of one inventory value and the solver that answers questions about it.
#[derive(Debug)]
pub(crate) struct WhatIf {
    /// The mirror: the origin's nodes as of `version`, when given back clean.
    pub inv: Inventory,
    /// Answers every question about the mirror (its caches follow the mirror's journal).
    pub solver: Solver,
    origin: Weak<()>,
    version: u64,
}

impl Solver {
    /// The mirror of `inv`, in step with it (a copy made, or brought up to date), its
    /// solver under this solver's limits. Give it back with [`Solver::put_what_if`]
    /// once every change made to it is undone; a mirror not given back (an error on
    /// the way) is copied again next time.
    pub(crate) fn take_what_if(&mut self, inv: &Inventory) -> Box<WhatIf> {
        let me = &inv.journal.identity.0;
        let kept = self.what_if.take().and_then(|mut w| {
            let same = w.origin.upgrade().is_some_and(|a| Arc::ptr_eq(&a, me))
                && w.inv.layout_id == inv.layout_id;
            let touched = inv.journal.since(w.version).filter(|_| same)?;
            let mut nodes = touched.to_vec();
            nodes.sort_unstable();
            nodes.dedup();
            w.inv.copy_nodes_from(inv, &nodes);
            w.version = inv.journal.version();
            Some(w)
        });
        let mut w = kept.unwrap_or_else(|| {
            Box::new(WhatIf {
                inv: inv.mirror(),
                solver: Solver::new(),
                origin: Arc::downgrade(me),
                version: inv.journal.version(),
            })
        });
        w.solver.limits = self.limits;
        w.solver.packing = self.packing;
        w
    }

    /// Keeps the mirror for the next question about the same inventory. The caller
    /// has undone every change it made: the mirror is the origin as of its version.
    pub(crate) fn put_what_if(&mut self, w: Box<WhatIf>) {
        self.what_if = Some(w);
    }
}

impl Solver {
    /// Role `r`'s capacity in `scope` on `inv` as it is now (at the role's grain, the
    /// most members it could place there alone), from this solver's cache: only the
    /// nodes touched since its last question are rolled up again. The what-if search
    /// asks it before a whole question: a gang fits in a domain only where each
    /// constrained role's capacity reaches its minimum.
    pub(crate) fn capacity_in(
        &mut self,
        inv: &Inventory,
        c: &Arc<Compiled>,
        r: RoleIx,
        scope: Scope,
    ) -> u64 {
        let Solver { s, cache, .. } = self;
        cache.lend(inv, c, r, &mut s.caps);
        let cap = s.caps.of(inv, scope);
        cache.give_back(&mut s.caps);
        cap
    }
}
