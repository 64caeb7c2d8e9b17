//! Spread replicas and queues of competing gangs: both hold whole gangs or nothing.

use std::sync::Arc;

use crate::bitset::Bitset;
use crate::compile::{Compiled, CompiledGang};
use crate::diagnosis::Diagnosis;
use crate::error::Error;
use crate::inventory::Inventory;
use crate::placement::Placement;
use crate::request::Gang;
use crate::reserve::ReservationId;
use crate::solve::rollup::{rollup, Grain, Scope};
use crate::solve::{Outcome, Solver};

/// `k` replicas of one gang, each satisfying the gang's own topology constraint, in
/// pairwise distinct domains of a spread level (inference replicas across racks).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Spread, SpreadOutcome, Topology};
/// let node = |n: &str, block: &str, rack: &str| {
///     NodeSpec::new(n).label("block", block).label("rack", rack).capacity("nvidia.com/gpu", 4)
/// };
/// let mut inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "b1", "a"), node("b1", "b1", "b"), node("c1", "b2", "c")])
///     .build()?;
/// let replica = Gang::new("serve")
///     .role(Role::new("w", 2).request("nvidia.com/gpu", 2))
///     .required("rack");
/// // Up to 4 replicas, at least 2, in distinct racks of one block.
/// let spread = Spread::new(replica, 4, "rack").min_replicas(2).within("block");
/// assert_eq!((spread.replicas, spread.min_replicas), (4, Some(2)));
/// assert_eq!((spread.level.as_str(), spread.within.as_deref()), ("rack", Some("block")));
/// let SpreadOutcome::Placed { reservations, placements } = inv.spread(&spread)? else {
///     panic!("block b1 has two racks");
/// };
/// assert_eq!(reservations.len(), 2);
/// let racks: Vec<String> = placements.iter().map(|p| p.domain_path()).collect();
/// assert_eq!(racks, ["b1/a", "b1/b"]);
/// // All 4 required: only block b2 has room left, for 1; nothing more is held.
/// let all = Spread { min_replicas: None, ..spread };
/// assert!(matches!(inv.spread(&all)?, SpreadOutcome::Unschedulable { fit: 1, needed: 4, .. }));
/// assert_eq!(inv.reservations().count(), 2); // only the first spread's replicas
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Spread {
    /// One replica.
    pub gang: Gang,
    /// Replicas wanted.
    pub replicas: u32,
    /// Replicas required (default: all).
    #[cfg_attr(feature = "serde", serde(default))]
    pub min_replicas: Option<u32>,
    /// No two replicas' constrained members share a domain of this level.
    pub level: String,
    /// All replicas inside one domain of this level (optional).
    #[cfg_attr(feature = "serde", serde(default))]
    pub within: Option<String>,
}

impl Spread {
    /// `replicas` copies of `gang` spread over distinct domains of `level`, all required.
    /// See [`Spread`].
    pub fn new(gang: Gang, replicas: u32, level: impl Into<String>) -> Self {
        Spread {
            gang,
            replicas,
            min_replicas: None,
            level: level.into(),
            within: None,
        }
    }

    /// Accept as few as `min` replicas. See [`Spread`].
    pub fn min_replicas(mut self, min: u32) -> Self {
        self.min_replicas = Some(min);
        self
    }

    /// Keep every replica inside one domain of `level`. See [`Spread`].
    pub fn within(mut self, level: impl Into<String>) -> Self {
        self.within = Some(level.into());
        self
    }
}

/// The answer to [`Inventory::spread`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Spread, SpreadOutcome, Topology};
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes(["a", "b", "c"].map(|r| {
///         NodeSpec::new(format!("{r}1")).label("rack", r).capacity("nvidia.com/gpu", 4)
///     }))
///     .build()?;
/// let replica = Gang::new("serve")
///     .role(Role::new("w", 2).request("nvidia.com/gpu", 2))
///     .required("rack");
/// // Four replicas in distinct racks: only three racks exist.
/// match inv.spread(&Spread::new(replica.clone(), 4, "rack"))? {
///     SpreadOutcome::Unschedulable { fit, needed, diagnosis } => {
///         assert_eq!((fit, needed), (3, 4));
///         assert!(diagnosis.is_some());
///     }
///     SpreadOutcome::Placed { .. } => unreachable!(),
/// }
/// assert_eq!(inv.reservations().count(), 0); // all or nothing
/// let SpreadOutcome::Placed { reservations, placements } =
///     inv.spread(&Spread::new(replica, 4, "rack").min_replicas(3))?
/// else {
///     panic!("three replicas fit")
/// };
/// assert_eq!((reservations.len(), placements.len()), (3, 3));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum SpreadOutcome {
    /// At least `min_replicas` replicas, each reserved.
    Placed {
        /// One reservation per replica, in order.
        reservations: Vec<ReservationId>,
        /// The replicas' placements.
        placements: Vec<Placement>,
    },
    /// Fewer than `min_replicas` fit; nothing is held.
    Unschedulable {
        /// The most replicas found.
        fit: u32,
        /// Replicas required.
        needed: u32,
        /// Why the next replica did not fit.
        diagnosis: Option<Diagnosis>,
    },
}

/// How a queue of gangs is admitted by [`Inventory::admit`].
///
/// ```
/// use gang_core::{AdmitMode, Gang, Inventory, NodeSpec, Role, Topology};
/// const GPU: &str = "nvidia.com/gpu";
/// let inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("g1").capacity(GPU, 8))
///     .node(NodeSpec::new("g2").capacity(GPU, 8).used(GPU, 4))
///     .node(NodeSpec::new("s1").capacity(GPU, 2))
///     .build()?;
/// let job = |name: &str, members, gpus| {
///     Gang::new(name).role(Role::new("w", members).request(GPU, gpus))
/// };
/// // The head needs two free 8-GPU nodes; only g1 is one.
/// let queue = [job("train", 2, 8), job("small", 1, 2), job("mid", 1, 4), job("big", 1, 8)];
/// let placed = |mode| -> Result<Vec<bool>, gang_core::Error> {
///     let mut inv = inv.clone();
///     Ok(inv.admit(&queue, mode)?.iter().map(|a| a.is_placed()).collect())
/// };
/// assert_eq!(AdmitMode::default(), AdmitMode::Fifo);
/// assert_eq!(placed(AdmitMode::Fifo)?, [false, false, false, false]);
/// // Backfill: small and mid go ahead on s1 and g2; big would take g1, which train can use.
/// assert_eq!(placed(AdmitMode::Backfill)?, [false, true, true, false]);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum AdmitMode {
    /// Strict FIFO: the first gang that does not fit blocks every later one.
    #[default]
    Fifo,
    /// FIFO with backfill: a later gang may go ahead of a waiting head, but only on
    /// nodes the head cannot use now (where none of its roles fits a member), so it
    /// never takes capacity the head could use.
    Backfill,
}

/// What happened to one gang of an admitted queue.
///
/// ```
/// use gang_core::{Admission, AdmitMode, Gang, Inventory, NodeSpec, Role, Topology};
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let job = |name: &str, members| {
///     Gang::new(name).role(Role::new("w", members).request("nvidia.com/gpu", 1))
/// };
/// let out = inv.admit(&[job("first", 6), job("second", 4), job("third", 1)], AdmitMode::Fifo)?;
/// let Admission::Placed { reservation, placement } = &out[0] else { panic!("6 of 8 fit") };
/// assert_eq!((placement.gang(), inv.reservation(*reservation).is_some()), ("first", true));
/// match &out[1] {
///     Admission::Waiting { diagnosis, blocked_by } => {
///         assert!(diagnosis.is_some() && blocked_by.is_none()); // the new head
///     }
///     Admission::Placed { .. } => unreachable!("2 GPUs are left"),
/// }
/// let Admission::Waiting { blocked_by, .. } = &out[2] else { panic!("FIFO: behind the head") };
/// assert_eq!(blocked_by.as_deref(), Some("second"));
/// assert_eq!(out.iter().filter(|a| a.is_placed()).count(), 1);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Admission {
    /// Placed whole and reserved.
    Placed {
        /// Its reservation.
        reservation: ReservationId,
        /// Its placement.
        placement: Placement,
    },
    /// Waiting, holding nothing.
    Waiting {
        /// Why it does not fit now (none when it was not tried because of the head).
        diagnosis: Option<Diagnosis>,
        /// The head gang it waits behind, if any.
        blocked_by: Option<String>,
    },
}

impl Admission {
    /// Whether the gang was placed (and reserved). See [`Admission`].
    pub fn is_placed(&self) -> bool {
        matches!(self, Admission::Placed { .. })
    }
}

/// Replicas reserved by one pass of [`Inventory::spread`], and why the next did not fit.
struct Trial {
    ids: Vec<ReservationId>,
    placements: Vec<Placement>,
    next: Option<Diagnosis>,
}

/// A copy of `c` whose constrained (or all) roles may only use nodes in `mask`.
fn restricted(c: &CompiledGang, mask: &Bitset, constrained_only: bool) -> CompiledGang {
    let mut inner: Compiled = (*c.inner).clone();
    for r in &mut inner.roles {
        if r.constrained || !constrained_only {
            r.eligible.and_with(mask);
        }
    }
    CompiledGang {
        inner: Arc::new(inner),
    }
}

impl Inventory {
    /// Places and reserves up to `spread.replicas` replicas in distinct domains of the
    /// spread level: all of them, or at least `min_replicas`, or nothing.
    ///
    /// Replicas are placed one at a time, each by the exact solver, on nodes outside the
    /// spread-level domains that earlier replicas' constrained members occupy. With
    /// `within`, every domain of that level is tried and the one holding the most
    /// replicas wins (ties: the first). Unconstrained roles are not spread.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Spread, SpreadOutcome};
    /// use gang_core::Topology;
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes((0..3).map(|i| {
    ///         NodeSpec::new(format!("n{i}")).label("rack", format!("r{i}")).capacity("gpu", 8)
    ///     }))
    ///     .build()?;
    /// let replica = Gang::new("serve").role(Role::new("w", 2).request("gpu", 1)).required("rack");
    /// match inv.spread(&Spread::new(replica.clone(), 3, "rack"))? {
    ///     SpreadOutcome::Placed { reservations, .. } => assert_eq!(reservations.len(), 3),
    ///     other => panic!("{other:?}"),
    /// }
    /// let err = inv.spread(&Spread::new(replica.clone(), 0, "rack")).unwrap_err();
    /// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidRequest, "spread.replicas"));
    /// // Two replicas in distinct racks can never share one rack.
    /// let err = inv.spread(&Spread::new(replica, 2, "rack").within("rack")).unwrap_err();
    /// assert_eq!((err.kind(), err.field()), (ErrorKind::Contradictory, "spread.within"));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for bad counts or levels (fields `spread.replicas`,
    /// `spread.min_replicas`, `spread.level`, `spread.within`), as [`Inventory::compile`]
    /// for the gang, and [`Error::Contradictory`] when `within` is at or inside the spread
    /// level while two or more replicas are required (they could never be apart).
    pub fn spread(&mut self, spread: &Spread) -> Result<SpreadOutcome, Error> {
        let compiled = self.compile(&spread.gang)?;
        let min = spread.min_replicas.unwrap_or(spread.replicas);
        if spread.replicas == 0 {
            return Err(Error::request("spread.replicas", 0, "at least one replica"));
        }
        if min == 0 || min > spread.replicas {
            return Err(Error::request(
                "spread.min_replicas",
                min,
                format!("must be between 1 and replicas ({})", spread.replicas),
            ));
        }
        let level = |field: &str, key: &str| {
            self.topology
                .depth_of(key)
                .ok_or_else(|| Error::request(field, key, "not a topology level"))
        };
        let depth = level("spread.level", &spread.level)?;
        let within = spread
            .within
            .as_deref()
            .map(|k| level("spread.within", k))
            .transpose()?;
        if let Some(w) = within {
            if w >= depth && min >= 2 {
                return Err(Error::contradictory(
                    "spread.within",
                    spread.within.as_deref().unwrap_or_default(),
                    format!(
                        "{min} replicas must sit in distinct {} domains, yet all inside one {} domain, which is never more than one of them",
                        spread.level,
                        spread.within.as_deref().unwrap_or_default()
                    ),
                ));
            }
        }
        let scopes: Vec<Scope> = match within {
            None => vec![Scope::CLUSTER],
            Some(w) => (0..crate::solve::domain_count(self, w))
                .map(|index| Scope { depth: w, index })
                .collect(),
        };
        // Trial runs (each reserved, then released), then the best one for real.
        // Trial reservations never escape, so their ids are handed out again after.
        let first_id = self.ledger.next;
        let mut best: Option<(u32, Scope)> = None;
        let mut last_diag = None;
        for &scope in &scopes {
            let Trial {
                ids, next: diag, ..
            } = self.spread_in(&compiled, scope, depth, spread.replicas)?;
            let n = ids.len() as u32;
            for id in ids {
                self.release(id)?;
            }
            if best.is_none_or(|(b, _)| n > b) {
                best = Some((n, scope));
                last_diag = diag;
            }
            if n == spread.replicas {
                break;
            }
        }
        self.ledger.next = first_id;
        let Some((n, scope)) = best.filter(|&(n, _)| n >= min) else {
            return Ok(SpreadOutcome::Unschedulable {
                fit: best.map_or(0, |b| b.0),
                needed: min,
                diagnosis: last_diag,
            });
        };
        let Trial {
            ids: reservations,
            placements,
            ..
        } = self.spread_in(&compiled, scope, depth, n)?;
        Ok(SpreadOutcome::Placed {
            reservations,
            placements,
        })
    }

    /// Places and reserves up to `k` replicas inside `scope`, in distinct domains of
    /// `depth`. Returns what it reserved, and why the next replica did not fit.
    fn spread_in(
        &mut self,
        gang: &CompiledGang,
        scope: Scope,
        depth: usize,
        k: u32,
    ) -> Result<Trial, Error> {
        let (start, end) = scope.range(self);
        let mut mask = Bitset::full(self.len());
        mask.keep_range(start as usize, end as usize);
        let mut solver = Solver::new();
        let (mut ids, mut placements) = (Vec::new(), Vec::new());
        let l = self.label_depth();
        for _ in 0..k {
            let g = restricted(gang, &mask, true);
            match solver.place(self, &g)? {
                Outcome::Placed(p) => {
                    // Occupy the spread-level domains of the constrained members.
                    for &(role, n, _) in &p.members {
                        if !g.inner.roles[role as usize].constrained {
                            continue;
                        }
                        if depth > l {
                            mask.set(n as usize, false);
                        } else if let Some(d) = self.domain_of(n, depth) {
                            let dm = self.domains[depth][d as usize];
                            mask.clear_range(dm.start as usize, dm.end as usize);
                        }
                    }
                    ids.push(self.reserve(&p)?);
                    placements.push(p);
                }
                Outcome::Unschedulable(d) | Outcome::Undecided(d) => {
                    return Ok(Trial {
                        ids,
                        placements,
                        next: Some(d),
                    })
                }
            }
        }
        Ok(Trial {
            ids,
            placements,
            next: None,
        })
    }

    /// Admits a queue of gangs in order. Each is placed whole and reserved, or waits
    /// holding nothing; no gang ever holds part of its members.
    ///
    /// ```
    /// use gang_core::{AdmitMode, Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 8))
    ///     .build()?;
    /// let job = |n: &str| Gang::new(n).role(Role::new("w", 8).request("gpu", 1));
    /// let out = inv.admit(&[job("first"), job("second")], AdmitMode::Fifo)?;
    /// assert!(out[0].is_placed() && !out[1].is_placed());
    /// // An invalid gang anywhere in the queue: an error, and nothing is placed.
    /// let first = inv.reservations().next().unwrap().id();
    /// inv.release(first)?;
    /// let invalid = Gang::new("bad").role(Role::new("w", 0));
    /// let err = inv.admit(&[job("first"), invalid], AdmitMode::Fifo).unwrap_err();
    /// assert_eq!(err.field(), "gang.roles[w].count");
    /// assert_eq!(inv.reservations().count(), 0);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::compile`] for any gang of the queue; every gang is validated
    /// before anything is placed, so an invalid queue changes nothing.
    pub fn admit(&mut self, queue: &[Gang], mode: AdmitMode) -> Result<Vec<Admission>, Error> {
        let compiled: Vec<CompiledGang> = queue
            .iter()
            .map(|g| self.compile(g))
            .collect::<Result<_, _>>()?;
        let mut solver = Solver::new();
        let mut out = Vec::with_capacity(queue.len());
        // The first gang that waits, and the nodes it cannot use now (where others may
        // backfill).
        let mut head: Option<(String, Bitset)> = None;
        for (g, c) in queue.iter().zip(&compiled) {
            let found = match (&head, mode) {
                (None, _) => match solver.place(self, c)? {
                    Outcome::Placed(p) => p,
                    Outcome::Unschedulable(d) | Outcome::Undecided(d) => {
                        let mut others = self.usable_by(&c.inner, &mut solver);
                        others.negate();
                        head = Some((g.name.clone(), others));
                        out.push(Admission::Waiting {
                            diagnosis: Some(d),
                            blocked_by: None,
                        });
                        continue;
                    }
                },
                (Some((name, _)), AdmitMode::Fifo) => {
                    out.push(Admission::Waiting {
                        diagnosis: None,
                        blocked_by: Some(name.clone()),
                    });
                    continue;
                }
                (Some((name, others)), AdmitMode::Backfill) => {
                    let outside = restricted(c, others, false);
                    match solver.find(self, &outside)? {
                        Some(p) => p,
                        None => {
                            // Would it fit if the head did not matter? Then the head
                            // blocks it; otherwise it says why not.
                            let (diagnosis, blocked_by) = match solver.place(self, c)? {
                                Outcome::Placed(_) => (None, Some(name.clone())),
                                Outcome::Unschedulable(d) | Outcome::Undecided(d) => {
                                    (Some(d), None)
                                }
                            };
                            out.push(Admission::Waiting {
                                diagnosis,
                                blocked_by,
                            });
                            continue;
                        }
                    }
                }
            };
            let reservation = self.reserve(&found)?;
            out.push(Admission::Placed {
                reservation,
                placement: found,
            });
        }
        Ok(out)
    }

    /// Nodes where some role of the gang fits at least one member now.
    fn usable_by(&self, c: &Compiled, solver: &mut Solver) -> Bitset {
        let mut usable = Bitset::new(self.len());
        solver.s.ensure(self);
        for role in &c.roles {
            rollup(self, role, Grain::NONE, Scope::CLUSTER, None, &mut solver.s);
            for (n, &f) in solver.s.fits.iter().enumerate() {
                if f > 0 {
                    usable.set(n, true);
                }
            }
        }
        usable
    }
}
