//! Reservations: holding a placement's capacity, and giving exactly that back.

use smallvec::SmallVec;

use crate::answer::placement::{broken_slice, Placement, SliceBreak};
use crate::compile::CompiledGang;
use crate::inventory::ledger::{Member, Reservation};
use crate::inventory::Inventory;
use crate::model::{Conflict, Error, Quantity, ReservationId};

impl Inventory {
    /// Applies a placement atomically: re-checks every member against the current
    /// inventory and, if all still fit, holds their capacity under a new id.
    ///
    /// A placement computed before a node was added, removed or relabelled is matched to
    /// the current nodes by name and re-checked the same way.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 4));
    /// let p = inv.place(&gang)?.placement().cloned().unwrap();
    /// let id = inv.reserve(&p)?;
    /// assert_eq!(inv.free("a1", "gpu").unwrap().millis(), 0);
    /// // The same placement again no longer fits: nothing is applied.
    /// assert!(inv.reserve(&p).is_err());
    /// inv.release(id)?;
    /// assert_eq!(inv.free("a1", "gpu").unwrap().millis(), 8000);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Conflict`], carrying a [`Conflict`] that names the node (and resource)
    /// that no longer fits; the inventory is unchanged.
    pub fn reserve(&mut self, placement: &Placement) -> Result<ReservationId, Error> {
        // A placement found with a narrowed copy of the request (backfill, spread) holds
        // the gang as requested, so replacements may use every node the request admits.
        let (gang, members) = self.resolve(placement)?;
        let id = self.ledger.next_id();
        let c = &gang.inner;
        let shapes = c
            .roles
            .iter()
            .map(|r| {
                r.req
                    .iter()
                    .map(|&(res, q)| (self.resources[res as usize].clone(), q))
                    .collect()
            })
            .collect();
        let reservation = Reservation {
            id,
            gang: c.gang.clone(),
            depth: placement.depth,
            domain: placement.domain.clone(),
            members,
            shapes,
            lost: Vec::new(),
        };
        self.hold(&reservation, true);
        self.ledger.next += 1;
        self.ledger.live.insert(id, reservation);
        Ok(id)
    }

    /// Gives back exactly what a reservation holds, and forgets it; returns it.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("nvidia.com/gpu", 1));
    /// let a = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// let b = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// assert_eq!(inv.reservations().map(|r| r.id()).collect::<Vec<_>>(), [a, b]);
    /// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().millis(), 4000);
    ///
    /// assert_eq!(inv.release(a)?.member_count(), 2);
    /// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().millis(), 6000);
    /// assert!(inv.reservation(a).is_none() && inv.reservation(b).is_some());
    /// // Twice is an error, never a double credit.
    /// assert_eq!(inv.release(a).unwrap_err().kind(), ErrorKind::UnknownReservation);
    /// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().millis(), 6000);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownReservation`] when `id` is not live (never made, or released
    /// already), [`Error::ForeignReservation`] when another inventory made it; nothing
    /// is credited.
    pub fn release(&mut self, id: ReservationId) -> Result<Reservation, Error> {
        let r = self.ledger.take(id)?;
        self.hold(&r, false);
        Ok(r)
    }

    /// A live reservation, or `None` for an unknown or released id. See
    /// [`Inventory::release`].
    pub fn reservation(&self, id: ReservationId) -> Option<&Reservation> {
        self.ledger.live.get(&id)
    }

    /// Live reservations, in id order. See [`Inventory::release`].
    pub fn reservations(&self) -> impl Iterator<Item = &Reservation> + '_ {
        self.ledger.live.values()
    }

    /// The placement's gang (recompiled if the layout changed) and members in current
    /// node indices, after checking that everything still fits.
    fn resolve(&self, p: &Placement) -> Result<(CompiledGang, Vec<Member>), Conflict> {
        let same = p.compiled.inner.layout_id == self.layout_id;
        let gang = if same {
            p.compiled.clone()
        } else {
            // Levels and roles were valid when placed and the topology never changes, so
            // compiling again only refreshes eligibility and resource ids.
            self.recompile(p.compiled.gang())
                .map_err(|e| Conflict::Stale {
                    reason: e.to_string(),
                })?
        };
        let mut members = Vec::with_capacity(p.members.len());
        for (&(role, n, k), a) in p.members.iter().zip(&p.assignments) {
            let ix = if same {
                n
            } else {
                self.names
                    .get_index_of(a.node.as_str())
                    .ok_or_else(|| Conflict::NodeGone {
                        node: a.node.clone(),
                    })? as u32
            };
            members.push((role, ix, k));
        }
        members.sort_unstable();
        let c = &gang.inner;
        if !same {
            self.check_locality(p, c, &members)?;
        }
        let mut load: SmallVec<[(u32, u32, u128); 16]> = SmallVec::new();
        for &(role, n, k) in &members {
            let r = &c.roles[role as usize];
            let name = &self.names[n as usize];
            if !self.schedulable.get(n as usize) {
                return Err(Conflict::Unschedulable { node: name.clone() });
            }
            if !r.eligible.get(n as usize) || k > r.cap_on(crate::inventory::ix::NodeIx(n)) {
                return Err(Conflict::NotEligible {
                    node: name.clone(),
                    role: c.gang.roles[role as usize].name.clone(),
                });
            }
            for &(res, q) in &r.req {
                let add = u128::from(q) * u128::from(k);
                match load.iter_mut().find(|l| l.0 == n && l.1 == res) {
                    Some(l) => l.2 += add,
                    None => load.push((n, res, add)),
                }
            }
        }
        for &(n, res, need) in &load {
            let free = self.free[res as usize][n as usize];
            if need > u128::from(free) {
                return Err(Conflict::Capacity {
                    node: self.names[n as usize].clone(),
                    resource: self.resources[res as usize].clone(),
                    needed: Quantity::from_millis(u64::try_from(need).unwrap_or(u64::MAX)),
                    free: Quantity::from_millis(free),
                });
            }
        }
        Ok((gang, members))
    }

    /// After nodes were relabelled: every constrained member still inside the
    /// placement's domain, and every label-level slice still whole.
    fn check_locality(
        &self,
        p: &Placement,
        c: &crate::compile::Compiled,
        members: &[Member],
    ) -> Result<(), Conflict> {
        let l = self.label_depth();
        if (1..=l).contains(&p.depth) {
            let want: Vec<&str> = p
                .domain
                .iter()
                .take(p.depth)
                .map(|(_, v)| v.as_str())
                .collect();
            for &(role, n, _) in members.iter().filter(|m| c.roles[m.0 as usize].constrained) {
                let here = self
                    .domain_of(n, p.depth)
                    .map(|d| self.domain_values(p.depth, d));
                if here.as_deref() != Some(want.as_slice()) {
                    return Err(Conflict::Relabelled {
                        node: self.names[n as usize].clone(),
                        reason: format!(
                            "role {} must stay in {} {}",
                            c.gang.roles[role as usize].name,
                            crate::model::names::short_level(&p.domain[p.depth - 1].0),
                            want.join("/")
                        ),
                    });
                }
            }
        }
        let level = |depth| {
            crate::model::names::short_level(self.topology.key_of(depth).unwrap_or_default())
        };
        let (role, node, why) = match broken_slice(self, c, members) {
            None => return Ok(()),
            Some(SliceBreak::Outside { role, node, depth }) => (
                role,
                node,
                format!(
                    "would be on a node outside any {0} (slices per {0})",
                    level(depth)
                ),
            ),
            Some(SliceBreak::Partial {
                role,
                node,
                depth,
                size,
                ..
            }) => (
                role,
                node,
                format!("would not fill whole slices of {size} per {}", level(depth)),
            ),
        };
        Err(Conflict::Relabelled {
            node: self.names[node as usize].clone(),
            reason: format!("role {} {why}", c.gang.roles[role as usize].name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Lost;
    #[cfg(feature = "serde")]
    use crate::lifecycle::ReservationSnapshot;
    use crate::Gang;
    use crate::{ErrorKind, NodeSpec, Role, Topology};

    use crate::testkit::{build, placed as placement, GPU};

    fn free(inv: &Inventory, node: &str, res: &str) -> u64 {
        inv.free(node, res).unwrap().millis() / 1000
    }

    fn units(v: &[(String, String, Quantity)]) -> Vec<(&str, &str, u64)> {
        let mut out: Vec<(&str, &str, u64)> = v
            .iter()
            .map(|(n, r, q)| (n.as_str(), r.as_str(), q.millis() / 1000))
            .collect();
        out.sort_unstable();
        out
    }

    /// A placement made before a relabel is re-checked for locality: members may not
    /// leave the gang's domain, and slices must stay whole; nothing is applied otherwise.
    #[test]
    fn relabelled_nodes_may_not_break_locality_or_slices() {
        let node = |n: &str, rack: &str| NodeSpec::new(n).label("rack", rack).capacity(GPU, 2);
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b")])
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1))
            .required("rack");
        let p = placement(&inv, &gang);
        let mut moved = inv.clone();
        moved.set_labels("a2", [("rack", "b")]).unwrap();
        let c = moved.reserve(&p).unwrap_err().conflict().cloned().unwrap();
        assert_eq!(
            c,
            Conflict::Relabelled {
                node: "a2".into(),
                reason: "role w must stay in rack a".into()
            }
        );
        assert_eq!((c.node(), free(&moved, "a1", GPU)), ("a2", 2));
        assert_eq!(moved.reservations().count(), 0);
        // A relabel that keeps every member in rack a is fine.
        let mut kept = inv.clone();
        kept.set_labels("b1", [("rack", "a")]).unwrap();
        assert!(kept.reserve(&p).is_ok());
        kept.validate().unwrap();

        // Slices of 2 per rack inside one block: splitting a rack's slice breaks it.
        let nodes = [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")];
        let nodes = nodes.map(|(n, rack)| crate::testkit::node(n, "x", rack, 1));
        inv = build(&["block", "rack"], nodes.to_vec());
        let sliced = Gang::new("s")
            .role(Role::new("w", 4).request(GPU, 1))
            .required("block")
            .slice("rack", 2);
        let p = placement(&inv, &sliced);
        let mut split = inv.clone();
        split
            .set_labels("a2", [("block", "x"), ("rack", "c")])
            .unwrap();
        let c = split.reserve(&p).unwrap_err().conflict().cloned().unwrap();
        assert!(
            matches!(&c, Conflict::Relabelled { reason, .. }
                if reason == "role w would not fill whole slices of 2 per rack"),
            "{c:?}"
        );
        let mut unlabelled = inv.clone();
        unlabelled.set_labels("b2", [("block", "x")]).unwrap();
        let c = unlabelled
            .reserve(&p)
            .unwrap_err()
            .conflict()
            .cloned()
            .unwrap();
        assert_eq!(c.node(), "b2");
        assert!(c.to_string().contains("outside any rack"), "{c}");
        // Swapping two nodes between racks keeps every slice whole.
        let mut swapped = inv.clone();
        swapped
            .set_labels("a2", [("block", "x"), ("rack", "b")])
            .unwrap();
        swapped
            .set_labels("b1", [("block", "x"), ("rack", "a")])
            .unwrap();
        assert!(swapped.reserve(&p).is_ok());
        swapped.validate().unwrap();
    }

    /// A snapshot reads back equal from its JSON, lost members included.
    #[cfg(feature = "serde")]
    #[test]
    fn snapshots_round_trip_through_json() {
        let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity(GPU, 4);
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a1"), node("a2")])
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("w", 6).request(GPU, 1))
            .required("rack");
        let id = inv.reserve(&placement(&inv, &gang)).unwrap();
        inv.fail_node("a2").unwrap();
        let s = inv.reservation(id).unwrap().snapshot(&inv);
        assert_eq!((s.lost.len(), s.lost[0].count), (1, 2));
        let back: ReservationSnapshot =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    /// Rack a: big (8 GPUs, 16 CPUs of which 2 used elsewhere) and small (2 GPUs, 4 CPUs).
    fn pools() -> Inventory {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(
                NodeSpec::new("big")
                    .label("rack", "a")
                    .label("pool", "big")
                    .capacity(GPU, 8)
                    .capacity("cpu", 16)
                    .used("cpu", 2),
            )
            .node(
                NodeSpec::new("small")
                    .label("rack", "a")
                    .label("pool", "small")
                    .capacity(GPU, 2)
                    .capacity("cpu", 4),
            )
            .build()
            .unwrap();
        inv.validate().unwrap();
        inv
    }

    fn gang_a() -> Gang {
        Gang::new("train")
            .role(
                Role::new("launcher", 1)
                    .request("cpu", 3)
                    .selector("pool", "small"),
            )
            .role(
                Role::new("worker", 3)
                    .request(GPU, 2)
                    .request("cpu", 3)
                    .selector("pool", "big"),
            )
            .required("rack")
    }

    fn gang_b() -> Gang {
        Gang::new("eval")
            .role(
                Role::new("probe", 1)
                    .request("cpu", 1)
                    .selector("pool", "small"),
            )
            .role(
                Role::new("worker", 1)
                    .request(GPU, 2)
                    .request("cpu", 1)
                    .selector("pool", "big"),
            )
    }

    /// `(big gpu, big cpu, small gpu, small cpu)` free.
    fn frees(inv: &Inventory) -> [u64; 4] {
        [
            free(inv, "big", GPU),
            free(inv, "big", "cpu"),
            free(inv, "small", GPU),
            free(inv, "small", "cpu"),
        ]
    }

    #[test]
    fn reserve_and_release_account_per_node_and_resource() {
        let mut inv = pools();
        assert_eq!(frees(&inv), [8, 14, 2, 4]);
        let a = inv.reserve(&placement(&inv, &gang_a())).unwrap();
        inv.validate().unwrap();
        // big: 3 workers × (2 GPU, 3 CPU); small: the launcher's 3 CPUs.
        assert_eq!(frees(&inv), [2, 5, 2, 1]);
        let r = inv.reservation(a).unwrap();
        assert_eq!(
            units(&r.usage(&inv)),
            [("big", "cpu", 9), ("big", GPU, 6), ("small", "cpu", 3)]
        );
        assert_eq!(r.member_count(), 4);
        let b = inv.reserve(&placement(&inv, &gang_b())).unwrap();
        inv.validate().unwrap();
        assert_eq!(frees(&inv), [0, 4, 2, 0]);
        assert_eq!(
            units(&inv.reservation(b).unwrap().usage(&inv)),
            [("big", "cpu", 1), ("big", GPU, 2), ("small", "cpu", 1)]
        );
        // Nothing is left for a third copy of either.
        assert!(!inv.place(&gang_b()).unwrap().is_placed());

        // Release in the order they were made: exactly A's holdings come back.
        let released = inv.release(a).unwrap();
        assert_eq!((released.id(), released.member_count()), (a, 4));
        inv.validate().unwrap();
        assert_eq!(frees(&inv), [6, 13, 2, 3]);
        // Twice is an error and credits nothing; B keeps what it holds.
        assert_eq!(
            inv.release(a).unwrap_err().kind(),
            ErrorKind::UnknownReservation
        );
        assert_eq!(
            inv.release(ReservationId(99)).unwrap_err().kind(),
            ErrorKind::UnknownReservation
        );
        assert_eq!(frees(&inv), [6, 13, 2, 3]);
        assert_eq!(inv.reservations().map(|r| r.id()).collect::<Vec<_>>(), [b]);
        inv.release(b).unwrap();
        inv.validate().unwrap();
        assert_eq!(frees(&inv), [8, 14, 2, 4]);
        assert_eq!(inv.reservations().count(), 0);
    }

    #[test]
    fn capacity_conflict_sums_every_role_on_the_node_and_applies_nothing() {
        // n1 first in order, n2 second; each member of a role on its own node.
        let mut inv = Inventory::builder(Topology::flat())
            .node(NodeSpec::new("n1").label("pool", "x").capacity(GPU, 4))
            .node(
                NodeSpec::new("n2")
                    .label("pool", "y")
                    .capacity(GPU, 4)
                    .capacity("cpu", 8),
            )
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("gpu", 4).request(GPU, 1).selector("pool", "x"))
            .role(
                Role::new("launcher", 1)
                    .request("cpu", 4)
                    .selector("pool", "y"),
            )
            .role(
                Role::new("helper", 2)
                    .request("cpu", 2)
                    .request(GPU, 1)
                    .selector("pool", "y"),
            );
        let p = placement(&inv, &gang);
        // n2 holds 4 + 2 × 2 = 8 CPUs. With one used elsewhere, each role alone would
        // still fit (4 and 4 of 7), both together do not.
        inv.set_used("n2", "cpu", 1).unwrap();
        let c = inv.reserve(&p).unwrap_err().conflict().cloned().unwrap();
        assert_eq!(
            c,
            Conflict::Capacity {
                node: "n2".into(),
                resource: "cpu".into(),
                needed: Quantity::from_units(8),
                free: Quantity::from_units(7),
            }
        );
        // n1's GPUs, checked first and fine, were not taken either.
        assert_eq!(free(&inv, "n1", GPU), 4);
        assert_eq!(free(&inv, "n2", "cpu"), 7);
        assert_eq!(inv.reservations().count(), 0);
        inv.validate().unwrap();
        // The first id is still the first one handed out.
        inv.set_used("n2", "cpu", 0).unwrap();
        assert_eq!(inv.reserve(&p).unwrap(), ReservationId::new(inv.id(), 0));
        assert_eq!((free(&inv, "n1", GPU), free(&inv, "n2", GPU)), (0, 2));
        assert_eq!(free(&inv, "n2", "cpu"), 0);
        inv.validate().unwrap();
    }

    #[test]
    fn each_kind_of_conflict_names_the_node() {
        let node = |name: &str, pool: &str| {
            NodeSpec::new(name)
                .label("rack", "a")
                .label("pool", pool)
                .capacity(GPU, 2)
        };
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a1", "gpu"), node("a2", "gpu")])
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1).selector("pool", "gpu"))
            .required("rack");
        let p = placement(&inv, &gang);
        let before: Vec<u64> = ["a1", "a2"].iter().map(|n| free(&inv, n, GPU)).collect();
        let check = |inv: &mut Inventory, want: Conflict| {
            assert_eq!(
                inv.reserve(&p).unwrap_err().conflict().cloned().unwrap(),
                want
            );
            assert_eq!(inv.reservations().count(), 0);
            inv.validate().unwrap();
        };

        let mut cordoned = inv.clone();
        cordoned.cordon("a2").unwrap();
        check(&mut cordoned, Conflict::Unschedulable { node: "a2".into() });

        // Relabelled out of the selector's pool (same rack): the layout changed, the
        // placement is matched by name and the role no longer admits the node.
        let mut relabelled = inv.clone();
        relabelled
            .set_labels("a1", [("rack", "a"), ("pool", "cpu")])
            .unwrap();
        check(
            &mut relabelled,
            Conflict::NotEligible {
                node: "a1".into(),
                role: "w".into(),
            },
        );

        let mut removed = inv.clone();
        removed.remove_node("a2").unwrap();
        let c = removed
            .reserve(&p)
            .unwrap_err()
            .conflict()
            .cloned()
            .unwrap();
        assert_eq!(
            (c.node(), &c),
            ("a2", &Conflict::NodeGone { node: "a2".into() })
        );
        removed.validate().unwrap();

        // The original is untouched by all of that and still takes the placement.
        let mut inv = inv;
        assert_eq!(
            ["a1", "a2"]
                .iter()
                .map(|n| free(&inv, n, GPU))
                .collect::<Vec<_>>(),
            before
        );
        inv.reserve(&p).unwrap();
        assert_eq!((free(&inv, "a1", GPU), free(&inv, "a2", GPU)), (0, 0));
    }

    #[test]
    fn a_placement_from_before_a_relayout_lands_on_the_same_named_nodes() {
        let n = |name: &str, rack: &str, gpus: i64| {
            NodeSpec::new(name).label("rack", rack).capacity(GPU, gpus)
        };
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([n("m1", "m", 2), n("m2", "m", 2), n("z1", "z", 8)])
            .build()
            .unwrap();
        // At most two a node: rack z (one node) cannot hold four.
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1).max_per_node(2))
            .required("rack");
        let p = placement(&inv, &gang);
        assert_eq!(p.node_counts(), [("m1", 2), ("m2", 2)]);
        // Two nodes that sort first shift every index by two.
        inv.add_node(n("a1", "a", 8)).unwrap();
        inv.add_node(n("a2", "a", 8)).unwrap();
        assert_eq!(
            inv.node_names().collect::<Vec<_>>(),
            ["a1", "a2", "m1", "m2", "z1"]
        );
        let id = inv.reserve(&p).unwrap();
        inv.validate().unwrap();
        let held: Vec<(String, u32)> = inv
            .reservation(id)
            .unwrap()
            .assignments(&inv)
            .into_iter()
            .map(|a| (a.node, a.count))
            .collect();
        assert_eq!(held, [("m1".into(), 2), ("m2".into(), 2)]);
        let all: Vec<u64> = inv.node_names().map(|x| free(&inv, x, GPU)).collect();
        assert_eq!(all, [8, 8, 0, 0, 8]);
    }

    #[test]
    fn reservations_follow_their_nodes_through_relayouts() {
        let n = |name: &str, rack: &str| {
            NodeSpec::new(name)
                .label("rack", rack)
                .capacity(GPU, 4)
                .capacity("cpu", 8)
        };
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([n("m1", "m"), n("m2", "m"), n("x1", "x"), n("z1", "z")])
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("w", 3).request(GPU, 2).request("cpu", 1))
            .required("rack");
        // Every rack with 3 × 2 GPUs: only m (4 + 4); m1 takes 2 members, m2 one.
        let id = inv.reserve(&placement(&inv, &gang)).unwrap();
        let snapshot = |inv: &Inventory| {
            let r = inv.reservation(id).unwrap();
            let members: Vec<(String, u32)> = r
                .assignments(inv)
                .into_iter()
                .map(|a| (a.node, a.count))
                .collect();
            let usage: Vec<(String, String, u64)> = units(&r.usage(inv))
                .into_iter()
                .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c))
                .collect();
            let frees: Vec<(u64, u64)> = ["m1", "m2"]
                .iter()
                .map(|x| (free(inv, x, GPU), free(inv, x, "cpu")))
                .collect();
            (members, usage, frees)
        };
        let want = (
            vec![("m1".to_owned(), 2), ("m2".to_owned(), 1)],
            vec![
                ("m1".to_owned(), "cpu".to_owned(), 2),
                ("m1".to_owned(), GPU.to_owned(), 4),
                ("m2".to_owned(), "cpu".to_owned(), 1),
                ("m2".to_owned(), GPU.to_owned(), 2),
            ],
            vec![(0, 6), (2, 7)],
        );
        assert_eq!(snapshot(&inv), want);
        // A node sorting first, a node sorting between, one removed, one relabelled to
        // sort first, a brand-new resource column: the reservation follows by name.
        inv.add_node(n("a1", "a")).unwrap();
        inv.validate().unwrap();
        assert_eq!(snapshot(&inv), want);
        inv.add_node(n("m15", "m")).unwrap();
        inv.validate().unwrap();
        assert_eq!(snapshot(&inv), want);
        inv.remove_node("x1").unwrap();
        inv.validate().unwrap();
        assert_eq!(snapshot(&inv), want);
        inv.set_labels("z1", [("rack", "0")]).unwrap();
        inv.validate().unwrap();
        assert_eq!(snapshot(&inv), want);
        inv.set_capacity("z1", "example.com/fpga", 1).unwrap();
        inv.validate().unwrap();
        assert_eq!(snapshot(&inv), want);
        assert_eq!(
            inv.node_names().collect::<Vec<_>>(),
            ["z1", "a1", "m1", "m15", "m2"]
        );
        // Release gives back exactly to m1 and m2; the others were never touched.
        inv.release(id).unwrap();
        inv.validate().unwrap();
        for x in ["z1", "a1", "m1", "m15", "m2"] {
            assert_eq!((free(&inv, x, GPU), free(&inv, x, "cpu")), (4, 8), "{x}");
        }
    }

    #[test]
    fn ledger_validate_catches_corrupted_reservations() {
        let mut inv = pools();
        let id = inv.reserve(&placement(&inv, &gang_a())).unwrap();
        inv.validate().unwrap();
        // Members sorted by (role, node): the launcher on small (1), workers on big (0).
        assert_eq!(inv.reservation(id).unwrap().members, [(0, 1, 1), (1, 0, 3)]);
        // The workers recorded on small while the columns say big.
        let mut moved = inv.clone();
        moved.ledger.live.get_mut(&id).unwrap().members[1].1 = 1;
        let err = moved.validate().unwrap_err();
        assert!(
            err.contains("on big is 9000, live reservations hold 0"),
            "{err}"
        );
        // One worker more than the role's count.
        let mut more = inv.clone();
        more.ledger.live.get_mut(&id).unwrap().members[1].2 += 1;
        let err = more.validate().unwrap_err();
        assert!(
            err.contains("role 1 holds 4 (with lost) outside [3, 3]"),
            "{err}"
        );
        // A member dropped without being recorded as lost: a partial gang.
        let mut fewer = inv.clone();
        let r = fewer.ledger.live.get_mut(&id).unwrap();
        r.members.remove(0);
        let err = fewer.ledger.validate(&fewer).unwrap_err();
        assert!(err.contains("holds 0 (with lost) outside [1, 1]"), "{err}");
        // Recorded as lost instead, it is a whole gang again (columns aside).
        let r = fewer.ledger.live.get_mut(&id).unwrap();
        r.lost.push(Lost {
            reservation: id,
            role: "launcher".into(),
            node: "small".into(),
            count: 1,
            role_ix: 0,
            path: vec!["a".into()],
        });
        let err = fewer.ledger.validate(&fewer).unwrap_err();
        assert!(err.contains("reserved cpu on small is 3000"), "{err}");
    }
}
