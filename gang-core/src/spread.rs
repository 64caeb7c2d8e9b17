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
/// use gang_core::{Gang, Role, Spread};
/// let s = Spread::new(Gang::new("serve").role(Role::new("w", 2).request("gpu", 1)).required("rack"), 3, "rack");
/// assert_eq!(s.replicas, 3);
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
    /// `replicas` copies of `gang` spread over distinct domains of `level`.
    pub fn new(gang: Gang, replicas: u32, level: impl Into<String>) -> Self {
        Spread {
            gang,
            replicas,
            min_replicas: None,
            level: level.into(),
            within: None,
        }
    }

    /// Accept as few as `min` replicas.
    pub fn min_replicas(mut self, min: u32) -> Self {
        self.min_replicas = Some(min);
        self
    }

    /// Keep every replica inside one domain of `level`.
    pub fn within(mut self, level: impl Into<String>) -> Self {
        self.within = Some(level.into());
        self
    }
}

/// The answer to [`Inventory::spread`].
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
    /// Whether the gang was placed.
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
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Spread, SpreadOutcome, Topology};
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes((0..3).map(|i| NodeSpec::new(format!("n{i}")).label("rack", format!("r{i}")).capacity("gpu", 8)))
    ///     .build()?;
    /// let replica = Gang::new("serve").role(Role::new("w", 2).request("gpu", 1)).required("rack");
    /// match inv.spread(&Spread::new(replica, 3, "rack"))? {
    ///     SpreadOutcome::Placed { reservations, .. } => assert_eq!(reservations.len(), 3),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for bad counts or levels, as [`Inventory::compile`] for
    /// the gang, and [`Error::Contradictory`] when `within` is at or inside the spread
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
        let mut head: Option<(String, Bitset)> = None;
        for (g, c) in queue.iter().zip(&compiled) {
            let attempt = match (&head, mode) {
                (None, _) => c.clone(),
                (Some((name, _)), AdmitMode::Fifo) => {
                    out.push(Admission::Waiting {
                        diagnosis: None,
                        blocked_by: Some(name.clone()),
                    });
                    continue;
                }
                (Some((_, usable)), AdmitMode::Backfill) => {
                    let mut free_for_others = usable.clone();
                    free_for_others.negate();
                    restricted(c, &free_for_others, false)
                }
            };
            match solver.place(self, &attempt)? {
                Outcome::Placed(p) => {
                    let reservation = self.reserve(&p)?;
                    out.push(Admission::Placed {
                        reservation,
                        placement: p,
                    });
                }
                Outcome::Unschedulable(d) | Outcome::Undecided(d) => match &head {
                    None => {
                        head = Some((g.name.clone(), self.usable_by(&c.inner, &mut solver)));
                        out.push(Admission::Waiting {
                            diagnosis: Some(d),
                            blocked_by: None,
                        });
                    }
                    Some((name, _)) => {
                        // Would it fit if the head did not matter? Then the head blocks it.
                        let alone = solver.place(self, c)?;
                        let diagnosis = alone.diagnosis().cloned();
                        out.push(Admission::Waiting {
                            blocked_by: diagnosis.is_none().then(|| name.clone()),
                            diagnosis,
                        });
                    }
                },
            }
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
