//! The candidate victims kept between preemption queries: per running reservation and
//! evictable unit, what it holds in total and per domain of each level asked about, by
//! resource — what a query needs of it, whatever gang asks — kept in a
//! [`PreemptSolver`] and brought up to date from the inventory's journal and ledger.
//!
//! The book is for one inventory value (its journal's identity and layout, as the
//! solver's capacity caches and causes are, `solve/causes.rs`). Between queries:
//! - every entry holding something on a node the journal touched since is built again
//!   from the ledger (a reservation's members change only through the columns, which
//!   touch their nodes: reserve, release, evict, a lost node, a replacement);
//! - the ledger's reservations and units are walked beside the book's, in id order:
//!   new ones are built, gone ones dropped (a walk of ids, not of members).
//!
//! A query then reads its candidates off the entries: those of strictly lower
//! priority, preemptible, with what they free per domain of the gang's level taken
//! from the roll-up when every node of such a domain is schedulable and open to one of
//! the gang's constrained roles (the usual case), else by walking the candidate's
//! members as a fresh query does ([`exact`]). Cordons and selectors are read per query;
//! the roll-ups hold what is held, not what it frees for whom.

use std::sync::{Arc, Weak};

use smallvec::SmallVec;

use crate::compile::CompiledGang;
use crate::inventory::ledger::{Member, Shape};
use crate::inventory::Inventory;
use crate::model::{PreemptionPolicy, ReservationId};
use crate::solve::Solver;

use super::{requested, Cand, PreemptOptions, VictimId};

/// `(resource id, amount)` pairs.
type Amounts = SmallVec<[(u32, u128); 2]>;

/// Per domain of one depth (ascending): the amounts held there.
type Rollup = Vec<(u32, Amounts)>;

/// What one running reservation or unit holds.
#[derive(Debug)]
struct Entry {
    priority: i32,
    /// A reservation not [`PreemptionPolicy::Never`], or a unit.
    preemptible: bool,
    /// Per resource id (ascending): the total held.
    held: Amounts,
    /// Held of resources the inventory does not know, by name (a cost resource may
    /// name one).
    unknown: Vec<(String, u128)>,
    /// Per depth asked about so far: per domain of that depth it holds something in
    /// (ascending), the amounts held there (members outside every domain left out).
    rollups: SmallVec<[(usize, Rollup); 1]>,
    /// The `(role, node, count)` triples it was built from: members that come back to
    /// a reservation (`replace`) onto a node it held nothing on since it was built
    /// touch no node of its, so the book sees them by this count changing.
    triples: usize,
}

fn add(to: &mut Amounts, r: u32, q: u128) {
    match to.iter_mut().find(|x| x.0 == r) {
        Some(x) => x.1 += q,
        None => to.push((r, q)),
    }
}

impl Entry {
    fn new(
        inv: &Inventory,
        priority: i32,
        preemptible: bool,
        shapes: &[Shape],
        members: &[Member],
    ) -> Entry {
        let mut held = Amounts::new();
        let mut unknown: Vec<(String, u128)> = Vec::new();
        for &(e, _, k) in members {
            for (r, q) in &shapes[e as usize] {
                let q = u128::from(*q) * u128::from(k);
                match inv.resources.get_index_of(r) {
                    Some(ri) => add(&mut held, ri as u32, q),
                    None => match unknown.iter_mut().find(|x| &x.0 == r) {
                        Some(x) => x.1 += q,
                        None => unknown.push((r.clone(), q)),
                    },
                }
            }
        }
        held.sort_unstable();
        Entry {
            priority,
            preemptible,
            held,
            unknown,
            rollups: SmallVec::new(),
            triples: members.len(),
        }
    }

    /// The total held of resource `name` (`ix`: its id, if the inventory has it).
    fn total(&self, ix: Option<usize>, name: &str) -> u128 {
        let known = ix.map_or(0, |ix| {
            self.held
                .iter()
                .find(|x| x.0 as usize == ix)
                .map_or(0, |x| x.1)
        });
        known
            + self
                .unknown
                .iter()
                .filter(|x| x.0 == name)
                .map(|x| x.1)
                .sum::<u128>()
    }

    /// The roll-up at `depth`, computed on first use.
    fn rollup(
        &mut self,
        inv: &Inventory,
        depth: usize,
        shapes: &[Shape],
        members: &[Member],
    ) -> &[(u32, Amounts)] {
        let pos = match self.rollups.iter().position(|x| x.0 == depth) {
            Some(p) => p,
            None => {
                let mut out: Rollup = Vec::new();
                let resolved: Vec<Vec<(u32, u64)>> = shapes
                    .iter()
                    .map(|s| {
                        s.iter()
                            .filter_map(|(r, q)| Some((inv.resources.get_index_of(r)? as u32, *q)))
                            .collect()
                    })
                    .collect();
                let mut last: Option<(u32, u32, u32)> = None;
                for &(e, n, k) in members {
                    let Some(d) = domain_cached(inv, n, depth, &mut last) else {
                        continue;
                    };
                    let i = match out.iter().position(|x| x.0 == d) {
                        Some(i) => i,
                        None => {
                            out.push((d, Amounts::new()));
                            out.len() - 1
                        }
                    };
                    for &(r, q) in &resolved[e as usize] {
                        add(&mut out[i].1, r, u128::from(q) * u128::from(k));
                    }
                }
                out.sort_by_key(|x| x.0);
                self.rollups.push((depth, out));
                self.rollups.len() - 1
            }
        };
        &self.rollups[pos].1
    }
}

/// The domain of the gang's level at `depth` holding node `n`, through `last`: the
/// last domain found and its node range (a reservation's members come sorted by node
/// within a role).
fn domain_cached(
    inv: &Inventory,
    n: u32,
    depth: usize,
    last: &mut Option<(u32, u32, u32)>,
) -> Option<u32> {
    if let Some((d, start, end)) = *last {
        if start <= n && n < end {
            return Some(d);
        }
    }
    let d = inv.domain_at(n, depth)?;
    *last = Some(if depth == 0 || depth > inv.label_depth() {
        (d, n, n + 1)
    } else {
        let dm = &inv.domains[depth][d as usize];
        (d, dm.start, dm.end)
    });
    Some(d)
}

/// The book of one inventory value's running work.
#[derive(Debug, Default)]
pub(super) struct Book {
    inventory: Weak<()>,
    layout: u64,
    version: u64,
    /// Entries by slot (`None`: free).
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    /// Per slot: to be built again from the ledger.
    dirty: Vec<bool>,
    /// The reservations' slots, in id order (the ledger's as of `version`).
    reservations: Vec<(ReservationId, u32)>,
    /// The units' slots, in id order.
    units: Vec<(String, u32)>,
    /// Per node: the slots of entries that held something there when built (kept
    /// only for a book kept between queries; may name entries since moved away).
    at: Vec<SmallVec<[u32; 2]>>,
    track: bool,
    /// Per domain of the depth asked about: 0 unknown, 1 every node schedulable and
    /// open to a constrained role, 2 not (one query's scratch).
    whole: Vec<u8>,
}

impl Book {
    /// A book for one query (nothing tracked for a next one).
    pub fn once() -> Book {
        Book::default()
    }

    /// The book in step with `inv`: kept and brought up to date when it is of the same
    /// inventory value and the journal still holds its history, else built afresh.
    pub fn sync(&mut self, inv: &Inventory) {
        let same = self
            .inventory
            .upgrade()
            .is_some_and(|a| Arc::ptr_eq(&a, &inv.journal.identity.0))
            && self.layout == inv.layout_id;
        let touched = inv
            .journal
            .since(self.version)
            .filter(|_| same && self.track);
        match touched {
            Some(nodes) => {
                for &n in nodes {
                    if let Some(list) = self.at.get_mut(n as usize) {
                        for s in list.drain(..) {
                            self.dirty[s as usize] = true;
                        }
                    }
                }
            }
            None => {
                let track = self.track;
                *self = Book {
                    inventory: Arc::downgrade(&inv.journal.identity.0),
                    layout: inv.layout_id,
                    track,
                    at: if track {
                        vec![SmallVec::new(); inv.len()]
                    } else {
                        Vec::new()
                    },
                    whole: std::mem::take(&mut self.whole),
                    ..Book::default()
                };
            }
        }
        self.version = inv.journal.version();
        // The reservations, walked beside the book's.
        let old = std::mem::take(&mut self.reservations);
        let mut k = 0;
        let mut next = Vec::with_capacity(inv.ledger.live.len());
        for (id, r) in &inv.ledger.live {
            while k < old.len() && old[k].0 < *id {
                self.drop_slot(old[k].1);
                k += 1;
            }
            let pre = || r.gang.preemption_policy != PreemptionPolicy::Never;
            let slot = if k < old.len() && old[k].0 == *id {
                k += 1;
                let s = old[k - 1].1;
                let moved = self.slots[s as usize]
                    .as_ref()
                    .is_some_and(|e| e.triples != r.members.len());
                if self.dirty[s as usize] || moved {
                    self.build(inv, s, r.gang.priority, pre(), &r.shapes, &r.members);
                }
                s
            } else {
                self.new_slot(inv, r.gang.priority, pre(), &r.shapes, &r.members)
            };
            next.push((*id, slot));
        }
        for &(_, s) in &old[k..] {
            self.drop_slot(s);
        }
        self.reservations = next;
        let old = std::mem::take(&mut self.units);
        let mut k = 0;
        let mut next = Vec::with_capacity(inv.ledger.units.len());
        for (id, u) in &inv.ledger.units {
            while k < old.len() && old[k].0 < *id {
                self.drop_slot(old[k].1);
                k += 1;
            }
            let p = u.spec.priority;
            let slot = if k < old.len() && old[k].0 == *id {
                k += 1;
                let s = old[k - 1].1;
                if self.dirty[s as usize] {
                    self.build(inv, s, p, true, &u.shapes, &u.members);
                }
                s
            } else {
                self.new_slot(inv, p, true, &u.shapes, &u.members)
            };
            next.push((id.clone(), slot));
        }
        for (_, s) in &old[k..] {
            self.drop_slot(*s);
        }
        self.units = next;
    }

    fn drop_slot(&mut self, s: u32) {
        self.slots[s as usize] = None;
        self.dirty[s as usize] = false;
        self.free.push(s);
    }

    fn new_slot(
        &mut self,
        inv: &Inventory,
        p: i32,
        pre: bool,
        shapes: &[Shape],
        members: &[Member],
    ) -> u32 {
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                self.dirty.push(false);
                self.slots.len() as u32 - 1
            }
        };
        self.build(inv, s, p, pre, shapes, members);
        s
    }

    fn build(
        &mut self,
        inv: &Inventory,
        s: u32,
        p: i32,
        pre: bool,
        shapes: &[Shape],
        members: &[Member],
    ) {
        self.slots[s as usize] = Some(Entry::new(inv, p, pre, shapes, members));
        self.dirty[s as usize] = false;
        if self.track {
            for &(_, n, _) in members {
                if let Some(list) = self.at.get_mut(n as usize) {
                    if list.last() != Some(&s) && !list.contains(&s) {
                        list.push(s);
                    }
                }
            }
        }
    }

    /// The priorities of the running work `gang` may evict (strictly lower than its
    /// own, preemptible), ascending; readies the book for
    /// [`Book::candidates_at`] of this gang (in step with `inv`: [`Book::sync`] first).
    pub fn levels(&mut self, inv: &Inventory, gang: &CompiledGang) -> Vec<i32> {
        let c = &gang.inner;
        let depth = c.required.unwrap_or(0);
        let ndom = if depth > inv.label_depth() {
            inv.len()
        } else {
            inv.domains[depth].len()
        };
        self.whole.clear();
        self.whole.resize(ndom, 0);
        let prio = c.gang.priority;
        let mut out: Vec<i32> = self
            .reservations
            .iter()
            .map(|x| x.1)
            .chain(self.units.iter().map(|x| x.1))
            .filter_map(|s| self.slots[s as usize].as_ref())
            .filter(|e| e.priority < prio && e.preemptible)
            .map(|e| e.priority)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Appends to `out` the candidate victims of `gang` of priority `level` (below the
    /// gang's, preemptible, freeing something it asks for on a schedulable node one of
    /// its roles may use), in id order, from the book ([`Book::levels`] first).
    pub fn candidates_at<'a>(
        &mut self,
        inv: &'a Inventory,
        gang: &CompiledGang,
        options: &PreemptOptions,
        level: i32,
        out: &mut Vec<Cand<'a>>,
    ) {
        let c = &gang.inner;
        let prio = c.gang.priority;
        let depth = c.required.unwrap_or(0);
        let req = requested(gang);
        // With an unconstrained role, what frees room for it is per node: walked.
        let rolled = c.roles.iter().all(|r| r.constrained);
        let cost_ix: Vec<Option<usize>> = options
            .cost_resources
            .iter()
            .map(|r| inv.resources.get_index_of(r))
            .collect();
        // Only the entries of this level are looked up in the ledger.
        let Book {
            slots,
            whole,
            reservations,
            units,
            ..
        } = self;
        let wanted = |s: u32| {
            slots[s as usize]
                .as_ref()
                .is_some_and(|e| e.priority == level && e.priority < prio && e.preemptible)
        };
        let reservations = reservations
            .iter()
            .zip(inv.ledger.live.values())
            .filter(|((_, s), _)| wanted(*s))
            .map(|((_, s), r)| {
                (
                    *s,
                    VictimId::Reservation(r.id),
                    r.gang.name.as_str(),
                    r.shapes.as_slice(),
                    r.members.as_slice(),
                )
            })
            .collect::<Vec<_>>();
        let units = units
            .iter()
            .zip(inv.ledger.units.values())
            .filter(|((_, s), _)| wanted(*s))
            .map(|((_, s), u)| {
                (
                    *s,
                    VictimId::Unit(u.spec.id.clone()),
                    u.spec.id.as_str(),
                    u.shapes.as_slice(),
                    u.members.as_slice(),
                )
            })
            .collect::<Vec<_>>();
        for (s, id, name, shapes, members) in reservations.into_iter().chain(units) {
            let Some(e) = slots[s as usize].as_mut() else {
                continue;
            };
            let mut cost = Vec::with_capacity(cost_ix.len() + 1);
            cost.push(u128::from(options.get_cost(&id)));
            for (ix, name) in cost_ix.iter().zip(options.cost_resources.iter()) {
                cost.push(e.total(*ix, name));
            }
            let mut domains: Vec<(u32, Vec<u128>)> = Vec::new();
            let mut global = false;
            let mut walk = !rolled;
            if rolled {
                for (d, amounts) in e.rollup(inv, depth, shapes, members) {
                    let freed: Vec<u128> = req
                        .iter()
                        .map(|&r| amounts.iter().find(|x| x.0 == r).map_or(0, |x| x.1))
                        .collect();
                    if freed.iter().all(|&x| x == 0) {
                        continue;
                    }
                    if !is_whole(inv, gang, depth, *d, whole) {
                        walk = true;
                        break;
                    }
                    domains.push((*d, freed));
                }
            }
            if walk {
                (domains, global) = exact(inv, gang, &req, shapes, members);
            }
            if domains.is_empty() && !global {
                continue;
            }
            out.push(Cand {
                id,
                name,
                priority: e.priority,
                shapes,
                members,
                resolved: Vec::new(),
                cost,
                domains,
                global,
            });
        }
    }
}

/// Whether every node of domain `d` at `depth` is schedulable and open to one
/// constrained role of the gang (so what a candidate holds there is what it frees).
fn is_whole(inv: &Inventory, gang: &CompiledGang, depth: usize, d: u32, memo: &mut [u8]) -> bool {
    let Some(m) = memo.get_mut(d as usize) else {
        return false;
    };
    if *m == 0 {
        let (start, end) = if depth > inv.label_depth() {
            (d as usize, d as usize + 1)
        } else {
            let dm = &inv.domains[depth][d as usize];
            (dm.start as usize, dm.end as usize)
        };
        let yes = inv.schedulable.all_in(start, end)
            && gang
                .inner
                .roles
                .iter()
                .any(|r| r.constrained && r.eligible.all_in(start, end));
        *m = if yes { 1 } else { 2 };
    }
    *m == 1
}

/// What a candidate frees, member by member: per domain of the gang's level, the
/// requested resources (by position in `req`) it holds there on schedulable nodes open
/// to a constrained role; and whether it holds one on a schedulable node open to an
/// unconstrained role.
fn exact(
    inv: &Inventory,
    gang: &CompiledGang,
    req: &[u32],
    shapes: &[Shape],
    members: &[Member],
) -> (Vec<(u32, Vec<u128>)>, bool) {
    let c = &gang.inner;
    let depth = c.required.unwrap_or(0);
    let nreq = req.len();
    let mut freed_of = vec![0u128; shapes.len() * nreq];
    for (e, shape) in shapes.iter().enumerate() {
        for (r, q) in shape {
            let Some(ri) = inv.resources.get_index_of(r) else {
                continue;
            };
            if let Some(pos) = req.iter().position(|&x| x as usize == ri) {
                freed_of[e * nreq + pos] += u128::from(*q);
            }
        }
    }
    let mut domains: Vec<(u32, Vec<u128>)> = Vec::new();
    let mut global = false;
    let mut last = None;
    for &(e, n, k) in members {
        if !inv.schedulable.get(n as usize) {
            continue;
        }
        let e = e as usize;
        let f = &freed_of[e * nreq..(e + 1) * nreq];
        if f.iter().all(|&x| x == 0) {
            continue;
        }
        let (mut con, mut unc) = (false, false);
        for r in c.roles.iter().filter(|r| r.eligible.get(n as usize)) {
            if r.constrained {
                con = true;
            } else {
                unc = true;
            }
        }
        global |= unc;
        if !con {
            continue;
        }
        let Some(d) = domain_cached(inv, n, depth, &mut last) else {
            continue;
        };
        let add = f.iter().map(|&x| x * u128::from(k));
        match domains.iter_mut().find(|x| x.0 == d) {
            Some(x) => x.1.iter_mut().zip(add).for_each(|(a, b)| *a += b),
            None => domains.push((d, add.collect())),
        }
    }
    domains.sort_by_key(|x| x.0);
    (domains, global)
}

/// A reusable preemption solver: a placement [`Solver`] (its limits bound each question
/// of a query, and it keeps the mirror the questions are asked on) and the candidate
/// victims kept from one query to the next — per running reservation and evictable
/// unit, what it holds per domain — brought up to date from the inventory's journal
/// and ledger for what changed. Ask with [`PreemptSolver::preempt`]: the answers are
/// those of [`Inventory::preempt_with`], which rebuilds the candidates from every
/// member of every running gang on each query.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::{PreemptOptions, PreemptSolver};
/// const GPU: &str = "nvidia.com/gpu";
/// let mut inv = Inventory::builder(Topology::flat())
///     .nodes((1..=2).map(|i| NodeSpec::new(format!("n{i}")).capacity(GPU, 8)))
///     .build()?;
/// let job = |name: &str, n, prio| Gang::new(name).role(Role::new("w", n).request(GPU, 1)).priority(prio);
/// inv.reserve(inv.place(&job("a", 8, 0))?.placement().unwrap())?;
/// let b = inv.reserve(inv.place(&job("b", 4, 0))?.placement().unwrap())?;
/// let urgent = inv.compile(&job("urgent", 8, 5))?;
/// let mut solver = PreemptSolver::new();
/// let opts = PreemptOptions::new();
/// let plan = solver.preempt(&inv, &urgent, &opts)?;
/// assert_eq!(plan.preemption().unwrap().victims()[0].name, "b"); // 4 GPUs, not 8
/// inv.release(b)?; // the kept candidates follow the ledger
/// let plan = solver.preempt(&inv, &urgent, &opts)?;
/// assert!(plan.preemption().unwrap().victims().is_empty()); // fits now
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct PreemptSolver {
    solver: Solver,
    book: Book,
}

impl PreemptSolver {
    /// A preemption solver with a default [`Solver`]. See [`PreemptSolver`].
    pub fn new() -> Self {
        PreemptSolver::with_solver(Solver::new())
    }

    /// A preemption solver asking its questions with `solver` (its limits and packing).
    /// See [`PreemptSolver`].
    pub fn with_solver(solver: Solver) -> Self {
        PreemptSolver {
            solver,
            book: Book {
                track: true,
                ..Book::default()
            },
        }
    }

    /// The placement solver the questions are asked with. See [`PreemptSolver`].
    pub fn solver(&mut self) -> &mut Solver {
        &mut self.solver
    }

    /// What it would take for `gang` to fit on `inv`: as [`Inventory::preempt_with`]
    /// (the same answer), with the candidates kept from the last query on the same
    /// inventory value and brought up to date. See [`PreemptSolver`].
    ///
    /// # Errors
    /// As [`Inventory::preempt_with`].
    pub fn preempt(
        &mut self,
        inv: &Inventory,
        gang: &CompiledGang,
        options: &PreemptOptions,
    ) -> Result<super::PreemptOutcome, crate::model::Error> {
        inv.preempt_in(&mut self.solver, &mut self.book, gang, options)
    }
}
