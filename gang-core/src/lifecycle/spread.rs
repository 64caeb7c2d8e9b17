//! Spread replicas and queues of competing gangs: both hold whole gangs or nothing.

use crate::answer::diagnosis::Diagnosis;
use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::{CompiledGang, Narrow};
use crate::inventory::bitset::Bitset;
use crate::inventory::domains::Scope;
use crate::inventory::ix::Depth;
use crate::inventory::Inventory;
use crate::model::{Error, Gang, ReservationId};
use crate::solve::Solver;

/// `k` replicas of one gang, each satisfying the gang's own topology constraint, in
/// pairwise distinct domains of a spread level (inference replicas across racks).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::{Spread, SpreadOutcome};
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
/// assert_eq!((spread.get_replicas(), spread.get_min_replicas()), (4, Some(2)));
/// assert_eq!((spread.get_level(), spread.get_within()), ("rack", Some("block")));
/// let SpreadOutcome::Placed { reservations, placements } = inv.spread(&spread)? else {
///     panic!("block b1 has two racks");
/// };
/// assert_eq!(reservations.len(), 2);
/// let racks: Vec<String> = placements.iter().map(|p| p.domain_path()).collect();
/// assert_eq!(racks, ["b1/a", "b1/b"]);
/// // All 4 required: only block b2 has room left, for 1; nothing more is held.
/// let all = Spread::new(spread.get_gang().clone(), 4, "rack").within("block");
/// assert!(matches!(inv.spread(&all)?, SpreadOutcome::Unschedulable { fit: 1, needed: 4, .. }));
/// assert_eq!(inv.reservations().count(), 2); // only the first spread's replicas
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Spread {
    /// One replica.
    pub(crate) gang: Gang,
    /// Replicas wanted.
    pub(crate) replicas: u32,
    /// Replicas required (default: all).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) min_replicas: Option<u32>,
    /// No two replicas' constrained members share a domain of this level.
    pub(crate) level: String,
    /// All replicas inside one domain of this level (optional).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) within: Option<String>,
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

    /// One replica's gang. See [`Spread`].
    pub fn get_gang(&self) -> &Gang {
        &self.gang
    }

    /// Replicas wanted. See [`Spread`].
    pub fn get_replicas(&self) -> u32 {
        self.replicas
    }

    /// Replicas required, if fewer than all. See [`Spread`].
    pub fn get_min_replicas(&self) -> Option<u32> {
        self.min_replicas
    }

    /// The level whose domains replicas must not share. See [`Spread`].
    pub fn get_level(&self) -> &str {
        &self.level
    }

    /// The level all replicas must share a domain of, if any. See [`Spread`].
    pub fn get_within(&self) -> Option<&str> {
        self.within.as_deref()
    }
}

/// The answer to [`Inventory::spread`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::{Spread, SpreadOutcome};
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

/// Replicas reserved by one pass of [`Inventory::spread`], and why the next did not fit.
struct Trial {
    ids: Vec<ReservationId>,
    placements: Vec<Placement>,
    next: Option<Diagnosis>,
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
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role};
    /// use gang_core::lifecycle::{Spread, SpreadOutcome};
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
            Some(w) => self.scopes_at(Depth(w)).collect(),
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
            let g = gang.restricted(&mask, Narrow::ConstrainedRoles);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, NodeSpec, Role, HOSTNAME_LEVEL};

    use crate::testkit::{build, node, GPU};

    fn frees(inv: &Inventory, res: &str) -> Vec<u64> {
        inv.node_names()
            .map(|n| inv.free(n, res).map_or(0, |q| q.millis() / 1000))
            .collect()
    }

    /// Two members of 2 GPUs in one rack: exactly one 4-GPU node.
    fn replica() -> Gang {
        Gang::new("serve")
            .role(Role::new("w", 2).request(GPU, 2))
            .required("rack")
    }

    fn placed(out: SpreadOutcome) -> (Vec<ReservationId>, Vec<String>) {
        match out {
            SpreadOutcome::Placed {
                reservations,
                placements,
            } => (
                reservations,
                placements.iter().map(Placement::domain_path).collect(),
            ),
            other => panic!("{other:?}"),
        }
    }

    fn unschedulable(out: SpreadOutcome) -> (u32, u32) {
        match out {
            SpreadOutcome::Unschedulable { fit, needed, .. } => (fit, needed),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn replicas_of_a_rack_gang_spread_over_distinct_blocks() {
        // Block b1: racks a and b; block b2: rack c. One 4-GPU node per rack.
        let mut inv = build(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a", 4),
                node("b1", "b1", "b", 4),
                node("c1", "b2", "c", 4),
            ],
        );
        // Three racks, but two blocks: a third replica has no block of its own.
        let all = Spread::new(replica(), 3, "block");
        assert_eq!(unschedulable(inv.spread(&all).unwrap()), (2, 3));
        assert_eq!(inv.reservations().count(), 0);
        assert_eq!(frees(&inv, GPU), [4, 4, 4]);
        inv.validate().unwrap();
        // Two of three: one replica per block (rack a, the first fit, then rack c).
        let (ids, racks) = placed(inv.spread(&all.clone().min_replicas(2)).unwrap());
        assert_eq!(racks, ["b1/a", "b2/c"]);
        assert_eq!(ids.len(), 2);
        assert!(ids.iter().all(|&id| inv.reservation(id).is_some()));
        assert_eq!(frees(&inv, GPU), [0, 4, 0]);
        inv.validate().unwrap();
        // Two more in distinct blocks: only block b1 has room (rack b). Nothing held,
        // the first two untouched.
        let two = Spread::new(replica(), 2, "block");
        assert_eq!(unschedulable(inv.spread(&two).unwrap()), (1, 2));
        assert_eq!(inv.reservations().count(), 2);
        assert_eq!(frees(&inv, GPU), [0, 4, 0]);
        inv.validate().unwrap();
        // Distinctness holds within one spread, not against earlier ones.
        let (_, racks) = placed(inv.spread(&Spread::new(replica(), 1, "block")).unwrap());
        assert_eq!(racks, ["b1/b"]);
        assert_eq!(frees(&inv, GPU), [0, 0, 0]);
        inv.validate().unwrap();
    }

    #[test]
    fn within_takes_the_domain_holding_the_most_replicas() {
        // Block b1: rack a. Block b2: racks c and d.
        let mut inv = build(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a", 4),
                node("c1", "b2", "c", 4),
                node("d1", "b2", "d", 4),
            ],
        );
        let spread = Spread::new(replica(), 3, "rack").within("block");
        // All three in one block: none has three racks.
        assert_eq!(unschedulable(inv.spread(&spread).unwrap()), (2, 3));
        assert_eq!(frees(&inv, GPU), [4, 4, 4]);
        // At least one: b1 holds one replica, b2 two; b2 wins although b1 comes first.
        let (ids, racks) = placed(inv.spread(&spread.clone().min_replicas(1)).unwrap());
        assert_eq!(racks, ["b2/c", "b2/d"]);
        assert_eq!(frees(&inv, GPU), [4, 0, 0]);
        inv.validate().unwrap();
        // Again: only b1 has room left, for one.
        let (more, racks) = placed(inv.spread(&spread.clone().min_replicas(1)).unwrap());
        assert_eq!(racks, ["b1/a"]);
        // Ids are distinct from the live ones, and all live.
        assert!(more.iter().all(|id| !ids.contains(id)));
        assert_eq!(inv.reservations().count(), 3);
        inv.validate().unwrap();

        // A tie (two racks in each block) goes to the first block.
        let mut tie = build(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a", 4),
                node("b1", "b1", "b", 4),
                node("c1", "b2", "c", 4),
                node("d1", "b2", "d", 4),
            ],
        );
        let (_, racks) = placed(
            tie.spread(&Spread::new(replica(), 2, "rack").within("block"))
                .unwrap(),
        );
        assert_eq!(racks, ["b1/a", "b1/b"]);
        tie.validate().unwrap();
    }

    #[test]
    fn contradictions_and_bad_counts_are_rejected_before_looking_at_capacity() {
        // One 1-GPU node: no replica ever fits.
        let mut inv = build(&["block", "rack"], vec![node("a1", "b1", "a", 1)]);
        let err = |inv: &mut Inventory, s: Spread| {
            let e = inv.spread(&s).unwrap_err();
            assert_eq!(inv.reservations().count(), 0);
            (e.kind(), e.field().to_owned())
        };
        let contradictory = |f: &str| (ErrorKind::Contradictory, f.to_owned());
        let invalid = |f: &str| (ErrorKind::InvalidRequest, f.to_owned());
        // Distinct racks, all inside one rack (or one node): never two of them.
        let s = Spread::new(replica(), 2, "rack");
        assert_eq!(
            err(&mut inv, s.clone().within("rack")),
            contradictory("spread.within")
        );
        assert_eq!(
            err(&mut inv, s.clone().within(HOSTNAME_LEVEL)),
            contradictory("spread.within")
        );
        assert_eq!(
            err(
                &mut inv,
                Spread::new(replica(), 3, "block")
                    .within("rack")
                    .min_replicas(2)
            ),
            contradictory("spread.within")
        );
        // With at most one replica required it is a valid request; here nothing fits.
        assert_eq!(
            unschedulable(
                inv.spread(&s.clone().within("rack").min_replicas(1))
                    .unwrap()
            ),
            (0, 1)
        );
        // Counts and levels.
        assert_eq!(
            err(&mut inv, Spread::new(replica(), 0, "rack")),
            invalid("spread.replicas")
        );
        assert_eq!(
            err(&mut inv, s.clone().min_replicas(0)),
            invalid("spread.min_replicas")
        );
        assert_eq!(
            err(&mut inv, s.clone().min_replicas(3)),
            invalid("spread.min_replicas")
        );
        assert_eq!(
            err(&mut inv, Spread::new(replica(), 2, "zone")),
            invalid("spread.level")
        );
        assert_eq!(
            err(&mut inv, s.clone().within("zone")),
            invalid("spread.within")
        );
        inv.validate().unwrap();

        // Within a rack, at least one of three, with room: exactly one replica.
        let mut roomy = build(
            &["block", "rack"],
            vec![node("a1", "b1", "a", 8), node("b1", "b1", "b", 8)],
        );
        let (ids, racks) = placed(
            roomy
                .spread(
                    &Spread::new(replica(), 3, "rack")
                        .within("rack")
                        .min_replicas(1),
                )
                .unwrap(),
        );
        assert_eq!((ids.len(), racks.len()), (1, 1));
        roomy.validate().unwrap();
    }

    #[test]
    fn unconstrained_roles_are_not_spread() {
        // Racks a and b: GPUs only; rack l: CPUs only.
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("b1").label("rack", "b").capacity(GPU, 2),
                NodeSpec::new("l1").label("rack", "l").capacity("cpu", 8),
            ],
        );
        let gang = Gang::new("serve")
            .role(Role::new("w", 2).request(GPU, 1))
            .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
            .required("rack");
        let (ids, racks) = placed(inv.spread(&Spread::new(gang.clone(), 2, "rack")).unwrap());
        assert_eq!(racks, ["a", "b"]);
        // Both launchers share l1 (rack l), which the replicas do not occupy.
        for id in &ids {
            let on: Vec<(String, String)> = inv
                .reservation(*id)
                .unwrap()
                .assignments(&inv)
                .into_iter()
                .map(|a| (a.role, a.node))
                .collect();
            assert!(on.contains(&("launcher".into(), "l1".into())), "{on:?}");
        }
        assert_eq!(frees(&inv, "cpu"), [0, 0, 6]);
        assert_eq!(frees(&inv, GPU), [0, 0, 0]);
        inv.validate().unwrap();
        for id in ids {
            inv.release(id).unwrap();
        }
        // A third replica's workers would need a third GPU rack: none.
        assert_eq!(
            unschedulable(inv.spread(&Spread::new(gang, 3, "rack")).unwrap()),
            (2, 3)
        );
        assert_eq!(frees(&inv, "cpu"), [0, 0, 8]);
        inv.validate().unwrap();
    }

    #[test]
    fn spread_over_nodes_uses_distinct_nodes() {
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 8),
                NodeSpec::new("a2").label("rack", "a").capacity(GPU, 8),
            ],
        );
        let one = Gang::new("serve")
            .role(Role::new("w", 1).request(GPU, 1))
            .required("rack");
        // Plenty of GPUs, two nodes: two replicas, one per node.
        let out = inv
            .spread(&Spread::new(one.clone(), 3, HOSTNAME_LEVEL))
            .unwrap();
        assert_eq!(unschedulable(out), (2, 3));
        let (_, _) = placed(
            inv.spread(&Spread::new(one, 3, HOSTNAME_LEVEL).min_replicas(2))
                .unwrap(),
        );
        assert_eq!(frees(&inv, GPU), [7, 7]);
        inv.validate().unwrap();
    }
}
