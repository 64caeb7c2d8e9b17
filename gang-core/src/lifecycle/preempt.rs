//! Preemption: the running work to evict so that a gang fits, chosen exactly.
//!
//! The objective (DESIGN §3, README "Preemption"), lexicographic:
//! 1. the highest priority among the victims, as low as possible;
//! 2. the least work lost: the cost vector summed over the victims — first the costs
//!    the caller gave ([`PreemptOptions::cost`]; a victim given none costs 0 there),
//!    then the amounts evicted of each cost resource in order
//!    ([`PreemptOptions::cost_resources`], `nvidia.com/gpu` by default);
//! 3. the fewest victims;
//! 4. the placement objective (most members for elastic gangs, the tightest level,
//!    then the fewest domains used level by level, then nodes);
//! 5. the victims' ids (reservations by id, then units by id), lexicographically.
//!
//! How (ARCHITECTURE §5, "Preemption"): every question "does the gang fit once these
//! are gone?" is the ordinary solver asked on a scratch copy of the inventory from
//! which the candidate victims' holdings are taken; nothing here places members.
//! Only victims of strictly lower priority, preemptible, holding a resource the gang
//! asks for on a schedulable node eligible for one of its roles can help; they are
//! grouped by the domain of the gang's required level they can free room in.
//! 1. Priority levels ascending: with every candidate up to a level evicted, does the
//!    gang fit? More room never turns "fits" into "does not fit", so the first level
//!    that fits is the least highest victim priority, and every plan within it has a
//!    victim of that level.
//! 2. A first plan: that placement, with the victims that could not have helped it
//!    dropped, then each victim spared in turn (most costly first) while the gang
//!    still fits.
//! 3. Per domain, a depth-first branch and bound over its candidates (cheapest first,
//!    each evicted or spared), bounded below by what the domain still lacks: per
//!    requested resource, the constrained members need `demand - free` more, which
//!    costs at least the fractional-knapsack cost of freeing it and takes at least the
//!    fewest candidates whose amounts reach it. The solver is asked only where these
//!    aggregates are met, and a set that fits is not extended.
//!
//! Work is bounded by [`PreemptOptions::max_work`]: a plan found when it ran out says
//! so ([`Preemption::search_complete`]), and no plan found then is
//! [`PreemptOutcome::Undecided`], never a false "nothing helps".

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::CompiledGang;
use crate::inventory::domains::Scope;
use crate::inventory::ix::Depth;
use crate::inventory::ledger::{Member, Shape};
use crate::inventory::Inventory;
use crate::model::{Conflict, Error, Gang, Quantity};
use crate::solve::diagnose::diagnose;
use crate::solve::verdict::Search as SearchEnd;
use crate::solve::whatif::WhatIf;

mod answer;
mod branch;
mod kept;
use crate::solve::{Solver, Span};
pub use answer::{
    Evicted, PreemptOptions, PreemptOutcome, Preempted, Preemption, Victim, VictimId,
};
use branch::{bound, dfs, view, DomainView};
use kept::Book;
pub use kept::PreemptSolver;

/// A candidate victim: its identity, what it holds (as the ledger keeps it), what it
/// costs, and where it can help.
struct Cand<'a> {
    id: VictimId,
    name: &'a str,
    priority: i32,
    shapes: &'a [Shape],
    members: &'a [Member],
    /// `shapes` with each resource resolved to its id in the inventory (when first
    /// evicted).
    resolved: Vec<Vec<(u32, u64)>>,
    /// `[given, cost resource 1, …]`.
    cost: Vec<u128>,
    /// Per domain of the gang's level it frees room in for constrained members: the
    /// amount of each requested resource freed there, on eligible schedulable nodes.
    domains: Vec<(u32, Vec<u128>)>,
    /// It frees room on a node eligible for an unconstrained role.
    global: bool,
}

/// The objective of a plan beyond the priority: `(cost, count)`, then placement
/// quality, then the victims (candidate indices, which are in id order).
#[derive(Clone)]
struct Plan {
    cost: Vec<u128>,
    set: Vec<u32>,
    quality: (std::cmp::Reverse<u64>, std::cmp::Reverse<usize>, Vec<u32>),
    placement: Placement,
}

impl Plan {
    fn key(&self) -> (&[u128], usize) {
        (&self.cost, self.set.len())
    }

    fn better_than(&self, o: &Plan) -> bool {
        (self.key(), &self.quality, &self.set) < (o.key(), &o.quality, &o.set)
    }
}

fn quality(p: &Placement) -> (std::cmp::Reverse<u64>, std::cmp::Reverse<usize>, Vec<u32>) {
    (
        std::cmp::Reverse(p.member_count()),
        std::cmp::Reverse(p.depth),
        p.domains_used.iter().map(|d| d.1).collect(),
    )
}

/// Work units of one question to the solver.
const ASK: u64 = 32;

/// The victim search of one query.
struct Search<'a, 's> {
    /// The mirror of the inventory and its solver: every question is asked there.
    w: Box<WhatIf>,
    gang: &'s CompiledGang,
    cands: Vec<Cand<'a>>,
    /// Which candidates are evicted on the mirror now.
    out: Vec<bool>,
    /// Nodes changed on the mirror whose domain summaries are not refreshed yet.
    touched: Vec<u32>,
    /// The candidates evicted now (those `out` says), in no order.
    on: Vec<u32>,
    work: u64,
    max_work: u64,
    incomplete: bool,
    best: Option<Plan>,
    /// Sets asked about (sorted candidate indices): whether the gang fitted.
    tried: FxHashMap<Vec<u32>, bool>,
    /// Questions look only at the domains the evicted candidates free room in: the
    /// gang has one role and a required level, and fitted nowhere as things are, so
    /// no other domain can take it ([`Span`]).
    narrow: bool,
    /// Scratch: those domains, for the question being asked.
    span: Vec<u32>,
}

/// The answer of [`Search::try_set`].
enum Asked {
    /// It fits (first time asked; offered as a plan).
    Fits,
    /// It fitted when asked before (and was offered then).
    FitsBefore,
    /// It does not fit (or was undecided).
    No,
}

impl Search<'_, '_> {
    fn set(&mut self, i: usize, evicted: bool) {
        if self.out[i] != evicted {
            let c = &mut self.cands[i];
            if c.resolved.is_empty() {
                let res = &self.w.inv.resources;
                c.resolved = c
                    .shapes
                    .iter()
                    .map(|shape| {
                        shape
                            .iter()
                            .filter_map(|(r, q)| Some((res.get_index_of(r)? as u32, *q)))
                            .collect()
                    })
                    .collect();
            }
            self.w
                .inv
                .adjust_deferred(&c.resolved, c.members, !evicted, &mut self.touched);
            self.out[i] = evicted;
            if evicted {
                self.on.push(i as u32);
            } else if let Some(k) = self.on.iter().position(|&x| x as usize == i) {
                self.on.swap_remove(k);
            }
        }
    }

    fn out_of_work(&mut self) -> bool {
        if self.work >= self.max_work {
            self.incomplete = true;
        }
        self.incomplete && self.work >= self.max_work
    }

    /// Does the gang fit with the candidates in `out` evicted? `None`: undecided.
    fn ask(&mut self) -> Result<Option<Placement>, Error> {
        self.work += ASK;
        let w = &mut *self.w;
        w.inv.refresh_summaries_of(&mut self.touched);
        let span = if self.narrow {
            self.span.clear();
            for &i in &self.on {
                self.span
                    .extend(self.cands[i as usize].domains.iter().map(|x| x.0));
            }
            self.span.sort_unstable();
            self.span.dedup();
            Span::Only(Depth(self.gang.inner.required.unwrap_or(0)), &self.span)
        } else {
            Span::All
        };
        match w.solver.find_decided_in(&w.inv, self.gang, span)? {
            Ok(p) => Ok(Some(p)),
            Err(decided) => {
                if !decided {
                    self.incomplete = true;
                }
                Ok(None)
            }
        }
    }

    fn cost_of(&self, set: &[u32]) -> Vec<u128> {
        let mut cost = vec![0u128; self.cands.first().map_or(0, |c| c.cost.len())];
        for &i in set {
            for (a, b) in cost.iter_mut().zip(&self.cands[i as usize].cost) {
                *a = a.saturating_add(*b);
            }
        }
        cost
    }

    /// Offers a plan: `set` evicted (and only it), placed as `p`.
    fn offer(&mut self, mut set: Vec<u32>, p: Placement) {
        set.sort_unstable();
        let plan = Plan {
            cost: self.cost_of(&set),
            quality: quality(&p),
            set,
            placement: p,
        };
        if self.best.as_ref().is_none_or(|b| plan.better_than(b)) {
            self.best = Some(plan);
        }
    }

    /// Evicts exactly `set` on the scratch copy.
    fn evict_only(&mut self, set: &[u32]) {
        let mut i = 0;
        while i < self.on.len() {
            let x = self.on[i];
            if set.contains(&x) {
                i += 1;
            } else {
                self.set(x as usize, false);
            }
        }
        for &x in set {
            self.set(x as usize, true);
        }
    }

    /// Whether each constrained role's capacity in domain `d` of the gang's level
    /// reaches its minimum with the candidates in `out` evicted: necessary for the gang
    /// to fit there, and read from the mirror solver's cache at the cost of the nodes
    /// touched since the last question (a whole question scans every domain).
    fn room_in(&mut self, d: u32) -> bool {
        self.work += 1;
        let w = &mut *self.w;
        w.inv.refresh_summaries_of(&mut self.touched);
        let c = &self.gang.inner;
        let scope = Scope::new(Depth(c.required.unwrap_or(0)), d);
        c.indexed_roles()
            .filter(|(_, role)| role.constrained)
            .all(|(r, role)| w.solver.capacity_in(&w.inv, c, r, scope) >= u64::from(role.min))
    }

    /// Evicts exactly `set` and asks, once per distinct set; a set that fits is
    /// offered as a plan. With `domain`, a set that leaves the gang no room there
    /// ([`Search::room_in`]) is `No` without a question (and not remembered: it may
    /// fit elsewhere, which that domain's own search finds).
    fn try_set(&mut self, set: &[u32], domain: Option<u32>) -> Result<Asked, Error> {
        let mut key = set.to_vec();
        key.sort_unstable();
        if let Some(&fit) = self.tried.get(&key) {
            return Ok(if fit { Asked::FitsBefore } else { Asked::No });
        }
        self.evict_only(set);
        if domain.is_some_and(|d| !self.room_in(d)) {
            return Ok(Asked::No);
        }
        let got = self.ask()?;
        self.tried.insert(key, got.is_some());
        Ok(match got {
            Some(p) => {
                self.offer(set.to_vec(), p);
                Asked::Fits
            }
            None => Asked::No,
        })
    }
}

impl Inventory {
    /// What it would take for `gang` to fit: the placement if it fits now (no victims),
    /// otherwise the running work to evict — whole reservations of strictly lower
    /// priority that are not [`PreemptionPolicy::Never`](crate::PreemptionPolicy::Never), and [`EvictableUnit`](crate::EvictableUnit)s of
    /// strictly lower priority — and the placement it gets once they are gone, chosen
    /// exactly by the objective of the [module docs](crate::lifecycle) (README
    /// "Preemption"): the lowest highest victim priority, then the fewest GPUs
    /// evicted, then the fewest victims, then the placement objective. Nothing
    /// changes; apply the plan with [`Inventory::preempt_reserve`].
    ///
    /// ```
    /// use gang_core::{EvictableUnit, Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::PreemptOutcome;
    /// const GPU: &str = "nvidia.com/gpu";
    /// let node = |n: &str| NodeSpec::new(n).label("rack", "r1").capacity(GPU, 8);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1"), node("a2")])
    ///     .build()?;
    /// let job = |name: &str, n, prio| {
    ///     Gang::new(name).role(Role::new("w", n).request(GPU, 2)).required("rack").priority(prio)
    /// };
    /// // A big job on a1 (8 GPUs); two small ones on a2 (2 GPUs each).
    /// let big = inv.reserve(inv.place(&job("big", 4, 10))?.placement().unwrap())?;
    /// let small_a = inv.reserve(inv.place(&job("small-a", 1, 10))?.placement().unwrap())?;
    /// let small_b = inv.reserve(inv.place(&job("small-b", 1, 10))?.placement().unwrap())?;
    /// // 4 GPUs are free; the urgent job needs 8 in one rack.
    /// let urgent = job("urgent", 4, 100);
    /// assert!(!inv.place(&urgent)?.is_placed());
    /// let plan = inv.preempt(&urgent)?.preemption().cloned().unwrap();
    /// let names: Vec<&str> = plan.victims().iter().map(|v| v.name.as_str()).collect();
    /// assert_eq!(names, ["small-a", "small-b"]); // 4 GPUs lost, not the big job's 8
    /// assert_eq!(plan.evicted(GPU).millis(), 4000);
    /// let done = inv.preempt_reserve(&plan)?;
    /// assert_eq!(done.evicted.len(), 2);
    /// assert!(inv.reservation(big).is_some() && inv.reservation(small_a).is_none());
    ///
    /// // Nothing of lower priority to evict: the diagnosis says how close it comes.
    /// let out = inv.preempt(&job("peer", 4, 10))?;
    /// assert!(matches!(out, PreemptOutcome::Unschedulable(_)));
    /// assert!(out.diagnosis().unwrap().to_string().contains("fits 0 of 4 w"));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::compile`]: an invalid request is an error, not "does not fit".
    pub fn preempt(&self, gang: &Gang) -> Result<PreemptOutcome, Error> {
        let compiled = self.compile(gang)?;
        self.preempt_with(&mut Solver::new(), &compiled, &PreemptOptions::default())
    }

    /// [`Inventory::preempt`] with a reusable [`Solver`] (its limits bound each
    /// question to it) and [`PreemptOptions`] (cost resources, given costs, work).
    ///
    /// ```
    /// use gang_core::{EvictableUnit, Gang, Inventory, NodeSpec, Role, Solver, Topology};
    /// use gang_core::lifecycle::{PreemptOptions, VictimId};
    /// const GPU: &str = "nvidia.com/gpu";
    /// let inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity(GPU, 8))
    ///     .evictable(EvictableUnit::new("old", 1).amount("n1", GPU, 4))
    ///     .evictable(EvictableUnit::new("new", 1).amount("n1", GPU, 4))
    ///     .build()?;
    /// let gang = inv.compile(&Gang::new("g").role(Role::new("w", 4).request(GPU, 1)).priority(5))?;
    /// let mut solver = Solver::new();
    /// // Equal GPUs: the tie-break takes the first id ("new").
    /// let plan = inv.preempt_with(&mut solver, &gang, &PreemptOptions::new())?;
    /// assert_eq!(plan.preemption().unwrap().victims()[0].name, "new");
    /// // "new" lost no work since its checkpoint; "old" would lose 90 units.
    /// let opts = PreemptOptions::new().cost(VictimId::Unit("new".into()), 90)
    ///     .cost(VictimId::Unit("old".into()), 10);
    /// let plan = inv.preempt_with(&mut solver, &gang, &opts)?;
    /// assert_eq!(plan.preemption().unwrap().victims()[0].name, "old");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// When the gang, compiled for another layout, no longer compiles (as
    /// [`Inventory::place_with`]).
    pub fn preempt_with(
        &self,
        solver: &mut Solver,
        gang: &CompiledGang,
        options: &PreemptOptions,
    ) -> Result<PreemptOutcome, Error> {
        self.preempt_in(solver, &mut Book::once(), gang, options)
    }

    /// [`Inventory::preempt_with`] with the candidates read off `book` (brought up to
    /// date with this inventory first).
    fn preempt_in(
        &self,
        solver: &mut Solver,
        book: &mut Book,
        gang: &CompiledGang,
        options: &PreemptOptions,
    ) -> Result<PreemptOutcome, Error> {
        // Compiled again only for another layout (no reference count touched otherwise).
        let recompiled;
        let gang = if gang.inner.layout_id == self.layout_id {
            gang
        } else {
            recompiled = self.recompile(gang.gang())?;
            &recompiled
        };
        let undecided_now = match solver.find_decided(self, gang)? {
            Ok(p) => {
                return Ok(PreemptOutcome::Placed(Preemption {
                    victims: Vec::new(),
                    placement: p,
                    complete: true,
                    cost: Preemption::zero_cost(&options.cost_resources),
                    cost_resources: Arc::clone(&options.cost_resources),
                }))
            }
            Err(decided) => !decided,
        };
        book.sync(self);
        let levels = book.levels(self, gang);
        let mut search = Search {
            w: solver.take_what_if(self),
            touched: Vec::new(),
            on: Vec::new(),
            gang,
            out: Vec::new(),
            cands: Vec::new(),
            work: 0,
            max_work: options.max_work,
            incomplete: undecided_now,
            best: None,
            tried: FxHashMap::default(),
            narrow: !undecided_now && gang.inner.roles.len() == 1 && gang.inner.required.is_some(),
            span: Vec::new(),
        };
        // 1. The least priority level that makes room. A domain is asked about with its
        // candidates up to the level evicted (and those helping an unconstrained role)
        // once its aggregate room (free, plus what they free) meets the constrained
        // members' demand, roomiest first, and again only when that set grew: the gang
        // fits with every candidate up to the level evicted exactly when it fits so in
        // one of them (candidates elsewhere free nothing a placement there can use).
        // The candidates are read off the book a level at a time: those above the
        // level that makes room are never built.
        let req = requested(gang);
        let demand = self.demand(gang, &req);
        // Per domain some candidate so far frees room in: its lack, what they free, them,
        // and the sizes of its set and of the global set when it was last asked about.
        type Room = (Vec<i128>, Vec<i128>, Vec<u32>, Option<(usize, usize)>);
        let mut rooms: BTreeMap<u32, Room> = BTreeMap::new();
        let mut order: Vec<u32> = Vec::new();
        let mut next = 0;
        let mut global: Vec<u32> = Vec::new();
        let mut global_asked = 0;
        let mut first = None;
        'levels: for &t in &levels {
            book.candidates_at(self, gang, options, t, &mut search.cands);
            search.out.resize(search.cands.len(), false);
            let mut added = false;
            while next < search.cands.len() {
                let i = next;
                next += 1;
                for (d, amounts) in &search.cands[i].domains {
                    let room = rooms.entry(*d).or_insert_with(|| {
                        added = true;
                        let lack = self.lack_in(gang, *d, &demand, &req);
                        let n = lack.len();
                        (lack, vec![0i128; n], Vec::new(), None)
                    });
                    for (f, a) in room.1.iter_mut().zip(amounts) {
                        *f = f.saturating_add(clamp(*a));
                    }
                    room.2.push(i as u32);
                }
                if search.cands[i].global {
                    global.push(i as u32);
                }
            }
            if added {
                // Roomiest first (least lack), then by domain: keys read once, not
                // looked up in the map at every comparison.
                let mut keyed: Vec<(&[i128], u32)> =
                    rooms.iter().map(|(d, r)| (r.0.as_slice(), *d)).collect();
                keyed.sort_unstable();
                order = keyed.into_iter().map(|(_, d)| d).collect();
            }
            for &d in &order {
                let Some(room) = rooms.get_mut(&d) else {
                    continue;
                };
                let viable = room.0.iter().zip(&room.1).all(|(l, f)| l <= f);
                let now = (room.2.len(), global.len());
                if !viable || room.3 == Some(now) {
                    continue;
                }
                room.3 = Some(now);
                let mut set: Vec<u32> = room.2.iter().chain(&global).copied().collect();
                set.sort_unstable();
                set.dedup();
                search.evict_only(&set);
                if !search.room_in(d) {
                    continue;
                }
                if let Some(p) = search.ask()? {
                    first = Some((t, p));
                    break 'levels;
                }
            }
            // Domains no candidate frees room in may fit once unconstrained roles
            // have room.
            if global.len() > global_asked {
                global_asked = global.len();
                let set = global.clone();
                search.evict_only(&set);
                if let Some(p) = search.ask()? {
                    first = Some((t, p));
                    break;
                }
            }
        }
        drop(rooms);
        let Some((_, p)) = first else {
            // The diagnosis is that of placing it with every candidate evicted.
            for i in 0..search.cands.len() {
                search.set(i, true);
            }
            let w = &mut *search.w;
            w.inv.refresh_summaries_of(&mut search.touched);
            let diagnosis = match w.solver.place(&w.inv, gang)? {
                Outcome::Unschedulable(d) | Outcome::Undecided(d) => d,
                // Only when a question above was cut short by the solver's limits (a
                // decided search never misses a fit): the answer is undecided.
                Outcome::Placed(_) => {
                    search.incomplete = true;
                    diagnose(&mut w.solver, &w.inv, &gang.inner, SearchEnd::Exhausted)
                }
            };
            search.evict_only(&[]);
            search.w.inv.refresh_summaries_of(&mut search.touched);
            solver.put_what_if(search.w);
            return Ok(if search.incomplete {
                PreemptOutcome::Undecided(diagnosis)
            } else {
                PreemptOutcome::Unschedulable(diagnosis)
            });
        };
        // The candidates built are those up to `t` (none above it was read): in id
        // order (the objective's last tie-break compares indices), with which of them
        // are evicted now (the set the placement `p` was found for).
        let mut by_id: Vec<usize> = (0..search.cands.len()).collect();
        by_id.sort_by(|&a, &b| search.cands[a].id.cmp(&search.cands[b].id));
        let mut built: Vec<Option<Cand<'_>>> = std::mem::take(&mut search.cands)
            .into_iter()
            .map(Some)
            .collect();
        let mut out = Vec::with_capacity(by_id.len());
        let mut all: Vec<u32> = Vec::new();
        for &i in &by_id {
            if search.out[i] {
                all.push(out.len() as u32);
            }
            out.push(search.out[i]);
            search.cands.extend(built[i].take());
        }
        search.out = out;
        search.on.clone_from(&all);
        // 2. A first plan: the victims that can help where it landed, then spared.
        search.tried.insert(all.clone(), true);
        let helping = self.helping(&search, &p);
        search.offer(all.clone(), p);
        let mut plan = all;
        if helping.len() < plan.len() {
            if let Asked::Fits | Asked::FitsBefore = search.try_set(&helping, None)? {
                plan = helping;
            }
        }
        let mut order = plan.clone();
        order.sort_by(|&a, &b| {
            search.cands[b as usize]
                .cost
                .cmp(&search.cands[a as usize].cost)
                .then(b.cmp(&a))
        });
        for v in order {
            if search.out_of_work() {
                break;
            }
            let rest: Vec<u32> = plan.iter().copied().filter(|&x| x != v).collect();
            if rest.is_empty() {
                continue;
            }
            if let Asked::Fits | Asked::FitsBefore = search.try_set(&rest, None)? {
                plan = rest;
            }
        }
        // 3. Branch and bound per domain.
        let lacks = self.lacks(&search);
        let views = self.views(&search, &lacks);
        let mut views: Vec<(Vec<u128>, usize, DomainView)> = views
            .into_iter()
            .filter_map(|v| {
                let lb = bound(&search, &v, 0, &[], false)?;
                Some((lb.0, lb.1, v))
            })
            .collect();
        views.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        for (lb_cost, lb_count, view) in &views {
            if search.out_of_work() {
                break;
            }
            if let Some(b) = &search.best {
                if (lb_cost.as_slice(), *lb_count) > b.key() {
                    continue;
                }
            }
            search.evict_only(&[]);
            dfs(&mut search, view, 0, &mut Vec::new())?;
        }
        let complete = !search.incomplete;
        search.evict_only(&[]);
        search.w.inv.refresh_summaries_of(&mut search.touched);
        solver.put_what_if(search.w);
        let Some(best) = search.best else {
            unreachable!("the first level gave a plan");
        };
        let victims = best
            .set
            .iter()
            .map(|&i| self.victim(&search.cands[i as usize], options))
            .collect();
        Ok(PreemptOutcome::Placed(Preemption {
            victims,
            placement: best.placement,
            complete,
            cost: best.cost,
            cost_resources: Arc::clone(&options.cost_resources),
        }))
    }

    /// Applies a plan in one step: evicts its victims (releasing the reservations
    /// whole, withdrawing the units) and reserves its placement. All or nothing: if a
    /// victim is gone or the placement no longer fits once they are evicted, nothing
    /// changes.
    ///
    /// ```
    /// use gang_core::{ErrorKind, EvictableUnit, Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::Evicted;
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 4))
    ///     .evictable(EvictableUnit::new("batch", 0).amount("n1", "gpu", 4))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 4).request("gpu", 1)).priority(1);
    /// let plan = inv.preempt(&gang)?.preemption().cloned().unwrap();
    /// let done = inv.preempt_reserve(&plan)?;
    /// assert!(matches!(&done.evicted[0], Evicted::Unit(u) if u.get_id() == "batch"));
    /// assert_eq!(inv.evictable_units().len(), 0);
    /// assert_eq!(inv.reservation(done.reservation).unwrap().member_count(), 4);
    /// // Again: the victim is gone; nothing changes.
    /// let err = inv.preempt_reserve(&plan).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Conflict);
    /// assert_eq!(inv.reservations().count(), 1);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Conflict`] when a victim is no longer there ([`Conflict::Stale`]) or the
    /// placement does not fit once they are evicted (as [`Inventory::reserve`]); the
    /// inventory is unchanged.
    pub fn preempt_reserve(&mut self, plan: &Preemption) -> Result<Preempted, Error> {
        for v in &plan.victims {
            let here = match &v.id {
                VictimId::Reservation(id) => self.ledger.live.contains_key(id),
                VictimId::Unit(id) => self.ledger.units.contains_key(id),
            };
            if !here {
                return Err(Error::Conflict(Conflict::Stale {
                    reason: format!("victim {} is no longer running", v.name),
                }));
            }
        }
        let mut evicted = Vec::with_capacity(plan.victims.len());
        for v in &plan.victims {
            match &v.id {
                VictimId::Reservation(id) => {
                    let r = self.ledger.take(*id)?;
                    self.hold(&r, false);
                    evicted.push(Evicted::Reservation(r));
                }
                VictimId::Unit(id) => {
                    let u = self.remove_evictable(id)?;
                    evicted.push(Evicted::Unit(u));
                }
            }
        }
        match self.reserve(&plan.placement) {
            Ok(reservation) => Ok(Preempted {
                reservation,
                evicted,
            }),
            Err(e) => {
                for ev in evicted.into_iter().rev() {
                    match ev {
                        Evicted::Reservation(r) => {
                            self.hold(&r, true);
                            self.ledger.live.insert(r.id, r);
                        }
                        Evicted::Unit(u) => {
                            // It was valid here a moment ago.
                            let held = self.unit_of(u)?;
                            self.adjust(&held.shapes, &held.members, true);
                            self.ledger.units.insert(held.spec.id.clone(), held);
                        }
                    }
                }
                Err(e)
            }
        }
    }

    /// The domain of the gang's level holding node `n` (the node itself at the node
    /// level; the cluster at depth 0).
    fn domain_at(&self, n: u32, depth: usize) -> Option<u32> {
        if depth > self.label_depth() {
            Some(n)
        } else {
            self.domain_of(n, depth)
        }
    }

    /// The candidates that can help the placement `p`: those freeing room in its domain
    /// of the gang's level, or for an unconstrained role.
    fn helping(&self, s: &Search<'_, '_>, p: &Placement) -> Vec<u32> {
        let c = &s.gang.inner;
        let depth = c.required.unwrap_or(0);
        let dom = p
            .members
            .iter()
            .find(|m| c.roles[m.0 as usize].constrained)
            .and_then(|m| self.domain_at(m.1, depth));
        (0..s.cands.len() as u32)
            .filter(|&i| {
                let cand = &s.cands[i as usize];
                cand.global || dom.is_some_and(|d| cand.domains.iter().any(|x| x.0 == d))
            })
            .collect()
    }

    /// What the constrained members lack, per requested resource, in each domain some
    /// candidate frees room in (their demand minus the free room on eligible
    /// schedulable nodes there; negative when there is room to spare), for the
    /// domains whose lack every candidate together can meet — the others can hold no
    /// plan. The domain summaries (free over all its nodes, an upper bound on the
    /// room) rule most of those out before any node is visited.
    fn lacks(&self, s: &Search<'_, '_>) -> BTreeMap<u32, Vec<i128>> {
        let c = &s.gang.inner;
        let depth = c.required.unwrap_or(0);
        let req = requested(s.gang);
        let demand = self.demand(s.gang, &req);
        let mut total: BTreeMap<u32, Vec<u128>> = BTreeMap::new();
        for cand in &s.cands {
            for (d, amounts) in &cand.domains {
                let t = total.entry(*d).or_insert_with(|| vec![0; req.len()]);
                t.iter_mut().zip(amounts).for_each(|(a, b)| *a += b);
            }
        }
        let nres = self.resources.len();
        let mut out = BTreeMap::new();
        for (d, freed) in total {
            if depth <= self.label_depth() {
                let room = req.iter().map(|&r| {
                    u128::from(self.summaries[depth][d as usize * nres + r as usize].total)
                });
                let hopeless = demand
                    .iter()
                    .zip(room)
                    .zip(&freed)
                    .any(|((&a, b), &f)| clamp(a) - clamp(b) > clamp(f));
                if hopeless {
                    continue;
                }
            }
            let lack = self.lack_in(s.gang, d, &demand, &req);
            if lack.iter().zip(&freed).all(|(&l, &f)| l <= clamp(f)) {
                out.insert(d, lack);
            }
        }
        out
    }

    /// The constrained members' demand per requested resource (`req`, by position).
    fn demand(&self, gang: &CompiledGang, req: &[u32]) -> Vec<u128> {
        let mut demand = vec![0u128; req.len()];
        for r in gang.inner.roles.iter().filter(|r| r.constrained) {
            for &(res, q) in &r.req {
                if let Some(pos) = req.iter().position(|&x| x == res) {
                    demand[pos] += u128::from(q) * u128::from(r.min);
                }
            }
        }
        demand
    }

    /// What the constrained members lack in domain `d` of the gang's level, per
    /// requested resource: `demand` minus the free room on eligible schedulable nodes
    /// there (negative when there is room to spare).
    fn lack_in(&self, gang: &CompiledGang, d: u32, demand: &[u128], req: &[u32]) -> Vec<i128> {
        let c = &gang.inner;
        let depth = c.required.unwrap_or(0);
        let nres = self.resources.len();
        let (start, end) = if depth > self.label_depth() {
            (d, d + 1)
        } else {
            let dm = &self.domains[depth][d as usize];
            (dm.start, dm.end)
        };
        let mut free = vec![0u128; req.len()];
        // Every node schedulable and open to one constrained role: the summaries
        // hold the sum (the usual case, a rack of one node type).
        let whole = self.schedulable.all_in(start as usize, end as usize)
            && c.roles
                .iter()
                .any(|r| r.constrained && r.eligible.all_in(start as usize, end as usize));
        if whole && depth <= self.label_depth() {
            for (f, &res) in free.iter_mut().zip(req) {
                *f = u128::from(self.summaries[depth][d as usize * nres + res as usize].total);
            }
        }
        for n in (start..end).filter(|_| !whole || depth > self.label_depth()) {
            let n = n as usize;
            if !self.schedulable.get(n)
                || !c.roles.iter().any(|r| r.constrained && r.eligible.get(n))
            {
                continue;
            }
            for (pos, &res) in req.iter().enumerate() {
                free[pos] += u128::from(self.free[res as usize][n]);
            }
        }
        demand
            .iter()
            .zip(&free)
            .map(|(&a, &b)| clamp(a) - clamp(b))
            .collect()
    }

    /// One view per domain some candidate frees room in, plus one for the candidates
    /// that only help unconstrained roles.
    fn views(&self, s: &Search<'_, '_>, lacks: &BTreeMap<u32, Vec<i128>>) -> Vec<DomainView> {
        let req = requested(s.gang);
        let mut by_domain: BTreeMap<u32, Vec<(u32, Vec<u128>)>> = BTreeMap::new();
        let mut global: Vec<u32> = Vec::new();
        for (i, cand) in s.cands.iter().enumerate() {
            for (d, amounts) in &cand.domains {
                by_domain
                    .entry(*d)
                    .or_default()
                    .push((i as u32, amounts.clone()));
            }
            if cand.global {
                global.push(i as u32);
            }
        }
        let mut views = Vec::new();
        for (d, mut list) in by_domain {
            // A domain whose lack even every candidate cannot meet has no plan.
            let Some(lack) = lacks.get(&d) else {
                continue;
            };
            for &g in &global {
                if !list.iter().any(|x| x.0 == g) {
                    list.push((g, vec![0; req.len()]));
                }
            }
            views.push(view(s, Some(d), list, lack.clone()));
        }
        if !global.is_empty() {
            let list = global.iter().map(|&g| (g, vec![0; req.len()])).collect();
            views.push(view(s, None, list, vec![0; req.len()]));
        }
        views
    }

    fn victim(&self, c: &Cand<'_>, options: &PreemptOptions) -> Victim {
        let mut evicted: Vec<(usize, u64)> = Vec::new();
        for &(e, _, k) in c.members {
            for (r, q) in &c.shapes[e as usize] {
                let Some(ri) = self.resources.get_index_of(r) else {
                    continue;
                };
                let add = q.saturating_mul(u64::from(k));
                match evicted.iter_mut().find(|x| x.0 == ri) {
                    Some(x) => x.1 = x.1.saturating_add(add),
                    None => evicted.push((ri, add)),
                }
            }
        }
        evicted.sort_unstable();
        Victim {
            id: c.id.clone(),
            name: c.name.to_owned(),
            priority: c.priority,
            evicted: evicted
                .into_iter()
                .map(|(r, q)| (self.resources[r].clone(), Quantity::from_millis(q)))
                .collect(),
            cost: options.get_cost(&c.id),
        }
    }
}

/// The resource ids the gang's roles request, in id order.
fn requested(gang: &CompiledGang) -> Vec<u32> {
    let mut out: Vec<u32> = gang
        .inner
        .roles
        .iter()
        .flat_map(|r| r.req.iter().map(|x| x.0))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn clamp(v: u128) -> i128 {
    i128::try_from(v)
        .unwrap_or(i128::MAX / 4)
        .min(i128::MAX / 4)
}
