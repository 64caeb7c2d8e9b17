//! Admission: a queue of gangs, each placed whole and reserved, or waiting holding
//! nothing (strict FIFO, or FIFO with backfill that cannot delay the head).

use crate::answer::diagnosis::Diagnosis;
use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::{CompiledGang, Narrow};
use crate::inventory::bitset::Bitset;
use crate::inventory::Inventory;
use crate::model::{Error, Gang, ReservationId};
use crate::solve::Solver;

/// How a queue of gangs is admitted by [`Inventory::admit`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::AdmitMode;
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
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::{Admission, AdmitMode};
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

impl Inventory {
    /// Admits a queue of gangs in order. Each is placed whole and reserved, or waits
    /// holding nothing; no gang ever holds part of its members.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::AdmitMode;
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
                        let mut others = solver.usable_nodes(self, &c.inner);
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
                    let outside = c.restricted(others, Narrow::AllRoles);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Replacement;
    use crate::lifecycle::{Spread, SpreadOutcome};
    use crate::{ErrorKind, NodeSpec, Role, Topology, HOSTNAME_LEVEL};

    use crate::testkit::{build, GPU};

    fn frees(inv: &Inventory, res: &str) -> Vec<u64> {
        inv.node_names()
            .map(|n| inv.free(n, res).map_or(0, |q| q.millis() / 1000))
            .collect()
    }

    /// g1: 8 GPUs; g2: 8 GPUs, 4 used elsewhere; c1: CPUs only.
    fn mixed() -> Inventory {
        build(
            &["rack"],
            vec![
                NodeSpec::new("c1").label("rack", "a").capacity("cpu", 8),
                NodeSpec::new("g1").label("rack", "a").capacity(GPU, 8),
                NodeSpec::new("g2")
                    .label("rack", "a")
                    .capacity(GPU, 8)
                    .used(GPU, 4),
            ],
        )
    }

    fn job(name: &str, resource: &str, amount: i64) -> Gang {
        Gang::new(name).role(Role::new("w", 1).request(resource, amount))
    }

    /// A launcher (any CPU node) and two workers that each need a whole 8-GPU node: only
    /// g1 is one, so it waits; it could use c1 (launcher) and g1 (a worker), not g2.
    fn head() -> Gang {
        Gang::new("head")
            .role(Role::new("launcher", 1).request("cpu", 2))
            .role(Role::new("w", 2).request(GPU, 8))
    }

    fn status(out: &[Admission]) -> Vec<String> {
        out.iter()
            .map(|a| match a {
                Admission::Placed { placement, .. } => {
                    let nodes: Vec<&str> =
                        placement.node_counts().into_iter().map(|n| n.0).collect();
                    format!("placed on {}", nodes.join(","))
                }
                Admission::Waiting {
                    diagnosis,
                    blocked_by,
                } => match (diagnosis, blocked_by) {
                    (Some(_), None) => "does not fit".to_owned(),
                    (None, Some(h)) => format!("behind {h}"),
                    other => panic!("{other:?}"),
                },
            })
            .collect()
    }

    #[test]
    fn backfill_never_takes_a_node_any_role_of_the_head_could_use() {
        let queue = [
            head(),
            job("huge", GPU, 16),
            job("cpu", "cpu", 2),
            job("gpu4", GPU, 4),
            job("gpu8", GPU, 8),
        ];
        let mut inv = mixed();
        let out = inv.admit(&queue, AdmitMode::Backfill).unwrap();
        assert_eq!(
            status(&out),
            [
                "does not fit",
                // Fits nowhere even ignoring the head: its own reason, and not a new head.
                "does not fit",
                // c1 would take it, but the head's launcher fits there.
                "behind head",
                // g2 (4 free) fits no head worker: free to backfill.
                "placed on g2",
                // Only g1, where a head worker fits.
                "behind head",
            ]
        );
        assert_eq!(inv.reservations().count(), 1);
        assert_eq!(
            (frees(&inv, GPU), frees(&inv, "cpu")),
            (vec![0, 8, 0], vec![8, 0, 0])
        );
        inv.validate().unwrap();

        // Strict FIFO: nothing after the head is even tried.
        let mut fifo = mixed();
        let out = fifo.admit(&queue, AdmitMode::Fifo).unwrap();
        assert_eq!(
            status(&out),
            [
                "does not fit",
                "behind head",
                "behind head",
                "behind head",
                "behind head"
            ]
        );
        assert_eq!(fifo.reservations().count(), 0);
        fifo.validate().unwrap();

        // Gangs ahead of the head go first, in either mode; g2 is the best fit for 4.
        let mut first = mixed();
        let out = first
            .admit(
                &[job("gpu4", GPU, 4), head(), job("cpu", "cpu", 2)],
                AdmitMode::Fifo,
            )
            .unwrap();
        assert_eq!(
            status(&out),
            ["placed on g2", "does not fit", "behind head"]
        );
        first.validate().unwrap();
    }

    /// A gang admitted by backfill (or a spread replica) is found with a narrowed copy of
    /// its request; its reservation keeps the request as asked, so a replacement may use
    /// any node of its domain.
    #[test]
    fn narrowed_requests_do_not_stick_to_reservations() {
        let node = |n: &str, gpus| NodeSpec::new(n).label("rack", "a").capacity(GPU, gpus);
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a1", 8), node("a2", 2), node("a3", 2)])
            .build()
            .unwrap();
        let head = Gang::new("head").role(Role::new("w", 2).request(GPU, 8));
        let small = Gang::new("small")
            .role(Role::new("w", 2).request(GPU, 2))
            .required("rack");
        let out = inv.admit(&[head, small], AdmitMode::Backfill).unwrap();
        let Admission::Placed { reservation, .. } = &out[1] else {
            panic!("small backfills on a2 and a3: {out:?}")
        };
        inv.fail_node("a2").unwrap();
        // a1 (which the head could use) is in the gang's rack: the replacement may go there.
        let Replacement::Placed { added } = inv.replace(*reservation).unwrap() else {
            panic!("a1 has 8 GPUs free")
        };
        assert_eq!((added[0].node.as_str(), added[0].count), ("a1", 1));
        inv.validate().unwrap();

        // Spread: a replica bound to no level is replaced like any such reservation,
        // anywhere — also in the rack of a replica placed before it.
        let nodes = [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")];
        let mut inv = build(
            &["rack"],
            nodes
                .map(|(n, rack)| crate::testkit::node(n, "x", rack, 2))
                .to_vec(),
        );
        let replica = Gang::new("r").role(Role::new("w", 1).request(GPU, 2));
        let SpreadOutcome::Placed {
            reservations: ids, ..
        } = inv.spread(&Spread::new(replica, 2, "rack")).unwrap()
        else {
            panic!("two racks, one replica each")
        };
        let on = |inv: &Inventory, id| {
            inv.reservation(id).unwrap().assignments(inv)[0]
                .node
                .clone()
        };
        let (first, second) = (on(&inv, ids[0]), on(&inv, ids[1]));
        assert_ne!(first[..1], second[..1], "distinct racks");
        inv.fail_node(&second).unwrap();
        // Only the first replica's rack has room left.
        for n in ["a1", "a2", "b1", "b2"] {
            if n[..1] != first[..1] {
                inv.set_used(n, GPU, 2).unwrap();
            }
        }
        let Replacement::Placed { added } = inv.replace(ids[1]).unwrap() else {
            panic!("room in the first replica's rack")
        };
        assert_eq!(added[0].node[..1], first[..1]);
        assert_ne!(added[0].node, first);
        inv.validate().unwrap();
    }

    #[test]
    fn an_invalid_gang_anywhere_in_the_queue_changes_nothing() {
        let bad_level = Gang::new("bad")
            .role(Role::new("w", 1).request(GPU, 1))
            .required("zone");
        let upside_down = Gang::new("bad")
            .role(Role::new("w", 1).request(GPU, 1))
            .required(HOSTNAME_LEVEL)
            .preferred("rack");
        for mode in [AdmitMode::Fifo, AdmitMode::Backfill] {
            for (bad, kind) in [
                (&bad_level, ErrorKind::InvalidRequest),
                (&upside_down, ErrorKind::Contradictory),
            ] {
                for at in 0..3 {
                    let mut queue = vec![job("gpu4", GPU, 4), job("cpu", "cpu", 2)];
                    queue.insert(at, bad.clone());
                    let mut inv = mixed();
                    let before = (frees(&inv, GPU), frees(&inv, "cpu"));
                    assert_eq!(inv.admit(&queue, mode).unwrap_err().kind(), kind);
                    assert_eq!(inv.reservations().count(), 0);
                    assert_eq!((frees(&inv, GPU), frees(&inv, "cpu")), before);
                    inv.validate().unwrap();
                    // Without it, both gangs of the same queue are admitted.
                    queue.remove(at);
                    let out = inv.admit(&queue, mode).unwrap();
                    assert!(out.iter().all(Admission::is_placed), "{mode:?} {at}");
                    assert_eq!(out.len(), 2);
                }
            }
        }
    }
}
