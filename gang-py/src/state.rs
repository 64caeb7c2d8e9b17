//! The shared state behind a Python `Inventory`: the core inventory under a read-write
//! lock, the generation its placements read node paths from, and a pool of solvers
//! (gang-core's kept `PreemptSolver`s: their `solver()` answers placement queries, and
//! they keep the candidate victims of `preempt` from one query to the next on this
//! inventory, brought up to date from its journal).
//! Below every class that holds an inventory or a placement made on one.

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use gang_core::lifecycle::PreemptSolver;
use gang_core::{Inventory, Placement, PlacementSnapshot, Solver};

/// Solvers kept per inventory for reuse (one per concurrent caller is enough).
const POOL: usize = 8;

/// The inventory as it was, once nodes moved: what placements of that generation read
/// their node paths from (unset while the generation is current).
pub type Generation = Arc<OnceLock<Inventory>>;

pub struct InvState {
    pub(crate) inner: RwLock<Inner>,
    pub(crate) solvers: Mutex<Vec<(u64, PreemptSolver)>>,
}

pub(crate) struct Inner {
    pub(crate) inv: Inventory,
    pub(crate) generation: Generation,
}

/// Where a placement came from: its inventory and the generation it was made in.
pub struct Source {
    pub(crate) state: Arc<InvState>,
    pub(crate) generation: Generation,
}

impl Source {
    /// The core snapshot of `p`, read from the inventory as it was when `p` was made.
    pub fn snapshot(&self, p: &Placement) -> PlacementSnapshot {
        let inner = self.state.read();
        match self.generation.get() {
            Some(then) => p.snapshot(then),
            None => p.snapshot(&inner.inv),
        }
    }
}

impl InvState {
    pub(crate) fn new(inv: Inventory) -> InvState {
        InvState {
            inner: RwLock::new(Inner {
                inv,
                generation: Arc::new(OnceLock::new()),
            }),
            solvers: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the core inventory (shared: queries).
    pub fn with_inventory<R>(&self, f: impl FnOnce(&Inventory) -> R) -> R {
        f(&self.read().inv)
    }

    /// Runs `f` on the core inventory (exclusive: changes). With `moves` (nodes added,
    /// removed or relabelled), the current generation is closed first if placements
    /// of it are alive.
    pub fn with_inventory_mut<R>(&self, moves: bool, f: impl FnOnce(&mut Inventory) -> R) -> R {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if moves && Arc::strong_count(&inner.generation) > 1 {
            let then = inner.inv.clone();
            let _ = inner.generation.set(then);
            inner.generation = Arc::new(OnceLock::new());
        }
        f(&mut inner.inv)
    }

    /// Runs `f` with a pooled solver of the given budget (its `solver()` for placement
    /// queries; the solver itself for `preempt`, whose kept candidates follow this
    /// state's inventory).
    pub(crate) fn with_solver<R>(&self, budget: u64, f: impl FnOnce(&mut PreemptSolver) -> R) -> R {
        let pooled = {
            let mut pool = self.solvers.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|(b, _)| *b == budget)
                .map(|i| pool.swap_remove(i).1)
        };
        let mut solver = pooled
            .unwrap_or_else(|| PreemptSolver::with_solver(Solver::with_search_budget(budget)));
        let r = f(&mut solver);
        let mut pool = self.solvers.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL {
            pool.push((budget, solver));
        }
        r
    }
}
