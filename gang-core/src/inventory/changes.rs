//! Changes to a live inventory: nodes added, removed, failed, cordoned, relabelled,
//! resized, and usage from outside the library.
//!
//! Cordoning and amounts change columns in place. Adding, removing or relabelling a node
//! (or naming a resource no node had) re-sorts the nodes: the inventory is rebuilt from
//! its own node descriptions, reservations follow their nodes by name, and gangs
//! compiled before are compiled again on their next placement.

use rustc_hash::FxHashMap;

use crate::inventory::ledger::{Lost, Member};
use crate::inventory::{Inventory, PODS, UNLIMITED};
use crate::model::{Error, NodeSpec, ReservationId};
use crate::model::{Quantity, QuantitySpec};

/// A node whose capacity no longer covers what is used and reserved on it, after a
/// capacity or external-usage change. The change is applied (it is a fact about the
/// node); free capacity is zero until the holders release or are replaced.
///
/// Returned by [`Inventory::set_capacity`] and [`Inventory::set_used`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Quantity, Role, Topology};
/// let mut inv = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("a1").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = Gang::new("train").role(Role::new("w", 6).request("nvidia.com/gpu", 1));
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// // Another scheduler now uses 4 GPUs: 4 + 6 reserved > 8.
/// let over = inv.set_used("a1", "nvidia.com/gpu", 4)?;
/// let o = &over[0];
/// assert_eq!((o.node.as_str(), o.resource.as_str()), ("a1", "nvidia.com/gpu"));
/// assert_eq!(o.capacity, Quantity::from_units(8));
/// assert_eq!((o.used, o.reserved), (Quantity::from_units(4), Quantity::from_units(6)));
/// assert_eq!(o.reservations, [id]);
/// assert_eq!(inv.free("a1", "nvidia.com/gpu"), Some(Quantity::ZERO));
/// // Back to 2: everything fits again, nothing to report.
/// assert!(inv.set_used("a1", "nvidia.com/gpu", 2)?.is_empty());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Overcommit {
    /// Node name.
    pub node: String,
    /// Resource name.
    pub resource: String,
    /// Allocatable capacity now.
    pub capacity: Quantity,
    /// Used outside the library.
    pub used: Quantity,
    /// Held by reservations.
    pub reserved: Quantity,
    /// The reservations holding this resource on the node.
    pub reservations: Vec<ReservationId>,
}

impl Inventory {
    /// The description of a node as it stands now (capacity and used as exact amounts;
    /// zero amounts left out), or `None` for an unknown name.
    ///
    /// ```
    /// use gang_core::{Inventory, NodeSpec, Quantity, Topology};
    /// use gang_core::request::QuantitySpec;
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("cpu", "1.5").used("cpu", "500m"))
    ///     .build()?;
    /// let spec = inv.node_spec("a1").unwrap();
    /// assert_eq!(spec.get_label("rack"), Some("a"));
    /// let exact = |m: u64| QuantitySpec::Exact(Quantity::from_millis(m));
    /// assert_eq!(spec.get_capacity().collect::<Vec<_>>(), [("cpu", &exact(1500))]);
    /// assert_eq!(spec.get_used().collect::<Vec<_>>(), [("cpu", &exact(500))]);
    /// assert!(spec.is_schedulable());
    /// assert!(inv.node_spec("zz").is_none());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn node_spec(&self, name: &str) -> Option<NodeSpec> {
        let ix = self.names.get_index_of(name)?;
        Some(self.spec_of(ix))
    }

    fn spec_of(&self, ix: usize) -> NodeSpec {
        let mut n = NodeSpec::new(self.names[ix].clone());
        for &(k, v) in &self.labels[ix] {
            n.labels.insert(
                self.keys[k as usize].clone(),
                self.values[v as usize].clone(),
            );
        }
        for (r, name) in self.resources.iter().enumerate() {
            // A node without a pod limit is described without one.
            let unlimited = name == PODS && self.capacity[r][ix] == UNLIMITED;
            if self.capacity[r][ix] > 0 && !unlimited {
                n.capacity.insert(
                    name.clone(),
                    QuantitySpec::Exact(Quantity::from_millis(self.capacity[r][ix])),
                );
            }
            if self.used[r][ix] > 0 {
                n.used.insert(
                    name.clone(),
                    QuantitySpec::Exact(Quantity::from_millis(self.used[r][ix])),
                );
            }
        }
        n.taints = self
            .taints_of
            .row(ix)
            .iter()
            .map(|&t| self.taints[t as usize].0.clone())
            .collect();
        n.schedulable = self.schedulable.get(ix);
        n
    }

    pub(crate) fn index(&self, name: &str) -> Result<usize, Error> {
        self.names
            .get_index_of(name)
            .ok_or_else(|| Error::UnknownNode {
                name: name.to_owned(),
            })
    }

    /// Rebuilds from node descriptions, carrying reservations over by node name. Leaves
    /// `self` unchanged on error.
    fn relayout(&mut self, specs: &[NodeSpec]) -> Result<(), Error> {
        let keep: Vec<String> = self.resources.iter().cloned().collect();
        let mut next = Inventory::from_specs(self.topology.clone(), specs, &keep)?;
        let mut ledger = std::mem::take(&mut self.ledger);
        for r in ledger.live.values_mut() {
            for m in &mut r.members {
                // Members on removed nodes were moved to `lost` before the rebuild.
                m.1 = next
                    .names
                    .get_index_of(self.names[m.1 as usize].as_str())
                    .unwrap_or(0) as u32;
            }
            r.members.sort_unstable();
        }
        // Evictable units follow their nodes by name; what they used on a removed node
        // is gone with it (from the unit as declared too).
        for u in ledger.units.values_mut() {
            let mut kept = Vec::with_capacity(u.members.len());
            let mut shapes = Vec::with_capacity(u.shapes.len());
            for &(e, n, k) in &u.members {
                let name = self.names[n as usize].as_str();
                match next.names.get_index_of(name) {
                    Some(ix) => {
                        kept.push((ix as u32, k, std::mem::take(&mut u.shapes[e as usize])));
                    }
                    None => {
                        u.spec.nodes.shift_remove(name);
                    }
                }
            }
            kept.sort_by_key(|m| m.0);
            u.members = Vec::with_capacity(kept.len());
            for (i, (n, k, shape)) in kept.into_iter().enumerate() {
                u.members.push((i as u16, n, k));
                shapes.push(shape);
            }
            u.shapes = shapes;
        }
        let mut held: FxHashMap<(u32, u32), u64> = FxHashMap::default();
        let units = ledger.units.values().map(|u| (&u.members, &u.shapes));
        for (members, shapes) in ledger
            .live
            .values()
            .map(|r| (&r.members, &r.shapes))
            .chain(units)
        {
            for &(role, n, k) in members {
                for (res, q) in &shapes[role as usize] {
                    if let Some(ri) = next.resources.get_index_of(res) {
                        let cell = held.entry((n, ri as u32)).or_default();
                        *cell = cell.saturating_add(q.saturating_mul(u64::from(k)));
                    }
                }
            }
        }
        next.ledger = ledger;
        for ((n, r), v) in held {
            next.set_reserved(n as usize, r as usize, v);
        }
        next.rebuild_summaries();
        *self = next;
        Ok(())
    }

    /// Adds a node.
    ///
    /// ```
    /// use gang_core::{Inventory, NodeSpec, Topology};
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?).build()?;
    /// inv.add_node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8))?;
    /// assert_eq!(inv.len(), 1);
    /// assert!(inv.add_node(NodeSpec::new("a1")).is_err()); // duplicate
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`InventoryBuilder::build`](crate::InventoryBuilder::build) (duplicate name,
    /// bad label or quantity); the inventory is unchanged.
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<(), Error> {
        let mut specs: Vec<NodeSpec> = (0..self.len()).map(|i| self.spec_of(i)).collect();
        specs.push(spec);
        self.relayout(&specs)
    }

    /// Removes a node. Members of reservations on it are lost: each reservation keeps
    /// the rest and records what it lost (see [`Inventory::replace`]).
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("nvidia.com/gpu", 4);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1"), node("a2")])
    ///     .build()?;
    /// let gang = Gang::new("train")
    ///     .role(Role::new("worker", 8).request("nvidia.com/gpu", 1))
    ///     .required("rack");
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// let lost = inv.remove_node("a2")?;
    /// assert_eq!((lost[0].reservation, lost[0].role.as_str()), (id, "worker"));
    /// assert_eq!((lost[0].node.as_str(), lost[0].count), ("a2", 4));
    /// let r = inv.reservation(id).unwrap();
    /// assert_eq!((r.member_count(), r.lost().len()), (4, 1));
    /// assert_eq!(inv.node_names().collect::<Vec<_>>(), ["a1"]);
    /// assert_eq!(inv.remove_node("a2").unwrap_err().kind(), ErrorKind::UnknownNode);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn remove_node(&mut self, name: &str) -> Result<Vec<Lost>, Error> {
        let ix = self.index(name)?;
        let lost = self.lose_members(ix);
        let specs: Vec<NodeSpec> = (0..self.len())
            .filter(|&i| i != ix)
            .map(|i| self.spec_of(i))
            .collect();
        self.relayout(&specs)?;
        Ok(lost)
    }

    /// Marks a node failed: it is cordoned, and members of reservations on it are lost
    /// (their capacity there is given back).
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("nvidia.com/gpu", 4);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1"), node("a2")])
    ///     .build()?;
    /// let gang = Gang::new("train").role(Role::new("worker", 8).request("nvidia.com/gpu", 1));
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// let lost = inv.fail_node("a2")?;
    /// assert_eq!((lost[0].reservation, lost[0].count), (id, 4));
    /// assert!(!inv.node_spec("a2").unwrap().is_schedulable()); // still there, cordoned
    /// assert_eq!(inv.free("a2", "nvidia.com/gpu").unwrap().millis(), 4000);
    /// assert!(inv.fail_node("a9").is_err());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn fail_node(&mut self, name: &str) -> Result<Vec<Lost>, Error> {
        let ix = self.index(name)?;
        self.set_schedulable(ix, false);
        Ok(self.lose_members(ix))
    }

    /// Moves every reservation's members on node `ix` to its lost list.
    fn lose_members(&mut self, ix: usize) -> Vec<Lost> {
        let path: Vec<String> = (1..=self.label_depth())
            .map_while(|d| self.domain_of(ix as u32, d))
            .enumerate()
            .map(|(i, dom)| self.values[self.domains[i + 1][dom as usize].value as usize].clone())
            .collect();
        let mut out = Vec::new();
        let ids: Vec<ReservationId> = self.ledger.live.keys().copied().collect();
        for id in ids {
            // Take the reservation out while adjusting the columns, then put it back.
            let Some(mut r) = self.ledger.live.remove(&id) else {
                continue;
            };
            let gone: Vec<Member> = r
                .members
                .iter()
                .copied()
                .filter(|m| m.1 as usize == ix)
                .collect();
            if !gone.is_empty() {
                self.adjust(&r.shapes, &gone, false);
                r.members.retain(|m| m.1 as usize != ix);
                for &(role, _, k) in &gone {
                    let l = Lost {
                        reservation: id,
                        role: r.gang.roles[role as usize].name.clone(),
                        node: self.names[ix].clone(),
                        count: k,
                        role_ix: role,
                        path: path.clone(),
                    };
                    r.lost.push(l.clone());
                    out.push(l);
                }
            }
            self.ledger.live.insert(id, r);
        }
        out
    }

    /// Cordons a node: nothing new is placed on it; reservations there stay.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 1).request("nvidia.com/gpu", 1));
    /// inv.cordon("n1")?;
    /// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
    /// assert_eq!(d.roles[0].excluded.cordoned, 1);
    /// inv.uncordon("n1")?;
    /// assert!(inv.place(&gang)?.is_placed());
    /// assert_eq!(inv.cordon("n9").unwrap_err().kind(), ErrorKind::UnknownNode);
    /// assert_eq!(inv.uncordon("n9").unwrap_err().kind(), ErrorKind::UnknownNode);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn cordon(&mut self, name: &str) -> Result<(), Error> {
        let ix = self.index(name)?;
        self.set_schedulable(ix, false);
        Ok(())
    }

    /// Makes a cordoned (or failed) node schedulable again. See [`Inventory::cordon`].
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn uncordon(&mut self, name: &str) -> Result<(), Error> {
        let ix = self.index(name)?;
        self.set_schedulable(ix, true);
        Ok(())
    }

    /// Replaces a node's labels. Returns the live reservations whose constrained members
    /// no longer share their domain (the caller decides whether to move them).
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let node = |n: &str, rack: &str| {
    ///     NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 4)
    /// };
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b")])
    ///     .build()?;
    /// let gang = Gang::new("train")
    ///     .role(Role::new("worker", 8).request("nvidia.com/gpu", 1))
    ///     .required("rack");
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?; // a1 and a2
    /// let displaced = inv.set_labels("a2", [("rack", "b")])?;
    /// assert_eq!(displaced, [id]); // its workers now span racks a and b
    /// assert_eq!(inv.node_spec("a2").unwrap().get_label("rack").unwrap(), "b");
    /// let bad = inv.set_labels("a2", [("rack", "rack b")]);
    /// assert_eq!(bad.unwrap_err().field(), "nodes[a2].labels.rack");
    /// assert_eq!(inv.node_spec("a2").unwrap().get_label("rack").unwrap(), "b"); // unchanged
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::InvalidInventory`] for a malformed label key or
    /// value (field `nodes[name].labels…`); the inventory is unchanged.
    pub fn set_labels<K, V>(
        &mut self,
        name: &str,
        labels: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Vec<ReservationId>, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let ix = self.index(name)?;
        let mut specs: Vec<NodeSpec> = (0..self.len()).map(|i| self.spec_of(i)).collect();
        specs[ix].labels = labels
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.relayout(&specs)?;
        Ok(self.displaced())
    }

    /// Reservations whose constrained members are no longer inside their domain.
    fn displaced(&self) -> Vec<ReservationId> {
        let l = self.label_depth();
        let mut out = Vec::new();
        for (id, r) in &self.ledger.live {
            let want: Vec<&str> = r.domain.iter().map(|(_, v)| v.as_str()).collect();
            // Cluster-wide and one-node placements cannot be displaced by labels.
            let inside = |n: u32| match r.depth {
                0 => true,
                d if d > l => true,
                d => self
                    .domain_of(n, d)
                    .is_some_and(|dom| self.domain_values(d, dom) == want),
            };
            if r.members
                .iter()
                .any(|m| r.gang.roles[m.0 as usize].constrained && !inside(m.1))
            {
                out.push(*id);
            }
        }
        out
    }

    /// Sets a node's allocatable capacity of one resource. Applied even when it falls
    /// below what is used and reserved there: that is reported, not refused.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8))
    ///     .build()?;
    /// let p = inv.place(&Gang::new("g").role(Role::new("w", 6).request("gpu", 1)))?;
    /// let id = inv.reserve(p.placement().unwrap())?;
    /// let over = inv.set_capacity("a1", "gpu", 4)?;
    /// assert_eq!(over[0].reservations, [id]);
    /// assert_eq!(inv.free("a1", "gpu").unwrap().millis(), 0);
    /// assert!(inv.set_capacity("a1", "gpu", 16)?.is_empty()); // room again
    /// assert!(inv.set_capacity("zz", "gpu", 8).is_err()); // no such node
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::InvalidQuantity`] (the inventory is unchanged).
    pub fn set_capacity(
        &mut self,
        node: &str,
        resource: &str,
        amount: impl Into<QuantitySpec>,
    ) -> Result<Vec<Overcommit>, Error> {
        self.set_amount(node, resource, amount.into(), true)
    }

    /// Sets the amount of a resource used on a node by workloads the library did not
    /// place. Reports overcommitment like [`Inventory::set_capacity`] (see
    /// [`Overcommit`]).
    ///
    /// ```
    /// use gang_core::{ErrorKind, Inventory, NodeSpec, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("a1").capacity("nvidia.com/gpu", 8))
    ///     .build()?;
    /// assert!(inv.set_used("a1", "nvidia.com/gpu", 3)?.is_empty());
    /// assert_eq!(inv.free("a1", "nvidia.com/gpu").unwrap().millis(), 5000);
    /// let err = inv.set_used("a1", "nvidia.com/gpu", "three").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidQuantity);
    /// assert_eq!(err.field(), "nodes[a1].used.nvidia.com/gpu");
    /// assert_eq!(inv.free("a1", "nvidia.com/gpu").unwrap().millis(), 5000); // unchanged
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::InvalidQuantity`] (the inventory is unchanged).
    pub fn set_used(
        &mut self,
        node: &str,
        resource: &str,
        amount: impl Into<QuantitySpec>,
    ) -> Result<Vec<Overcommit>, Error> {
        self.set_amount(node, resource, amount.into(), false)
    }

    fn set_amount(
        &mut self,
        node: &str,
        resource: &str,
        amount: QuantitySpec,
        capacity: bool,
    ) -> Result<Vec<Overcommit>, Error> {
        let ix = self.index(node)?;
        let what = if capacity { "capacity" } else { "used" };
        let q = amount.resolve(&format!("nodes[{node}].{what}.{resource}"))?;
        match self.resources.get_index_of(resource) {
            Some(r) => {
                let held = self.reserved_of(ix, r);
                let col = if capacity {
                    &mut self.capacity
                } else {
                    &mut self.used
                };
                col[r][ix] = q.millis();
                if capacity {
                    self.max_capacity[r] = self.capacity[r].iter().copied().max().unwrap_or(0);
                }
                self.set_reserved(ix, r, held);
                self.refresh_summaries(&[ix as u32]);
                self.journal.touch(ix as u32);
            }
            None => {
                // A new resource: a new column, so rebuild.
                let mut specs: Vec<NodeSpec> = (0..self.len()).map(|i| self.spec_of(i)).collect();
                let map = if capacity {
                    &mut specs[ix].capacity
                } else {
                    &mut specs[ix].used
                };
                map.insert(resource.to_owned(), QuantitySpec::Exact(q));
                self.relayout(&specs)?;
            }
        }
        let ix = self.index(node)?;
        let Some(r) = self.resources.get_index_of(resource) else {
            return Ok(Vec::new());
        };
        let (cap, used, reserved) = (
            self.capacity[r][ix],
            self.used[r][ix],
            self.reserved_of(ix, r),
        );
        if used.saturating_add(reserved) <= cap {
            return Ok(Vec::new());
        }
        let reservations = self
            .ledger
            .live
            .values()
            .filter(|res| {
                res.members.iter().any(|m| {
                    m.1 as usize == ix
                        && res.shapes[m.0 as usize].iter().any(|(n, _)| n == resource)
                })
            })
            .map(|res| res.id)
            .collect();
        Ok(vec![Overcommit {
            node: node.to_owned(),
            resource: resource.to_owned(),
            capacity: Quantity::from_millis(cap),
            used: Quantity::from_millis(used),
            reserved: Quantity::from_millis(reserved),
            reservations,
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Gang, Placement, Role, Topology};

    const GPU: &str = "nvidia.com/gpu";

    fn free(inv: &Inventory, node: &str, res: &str) -> u64 {
        inv.free(node, res).unwrap().millis() / 1000
    }

    fn placement(inv: &Inventory, gang: &Gang) -> Placement {
        let p = inv.place(gang).unwrap().placement().cloned().unwrap();
        p.validate(inv).unwrap();
        p
    }

    fn reserve(inv: &mut Inventory, gang: &Gang) -> ReservationId {
        let p = placement(inv, gang);
        let id = inv.reserve(&p).unwrap();
        inv.validate().unwrap();
        id
    }

    fn lost(l: &[Lost]) -> Vec<(ReservationId, &str, &str, u32)> {
        l.iter()
            .map(|l| (l.reservation, l.role.as_str(), l.node.as_str(), l.count))
            .collect()
    }

    /// Rack a: x1 (pool x) and y1 (pool y), 8 GPUs and 16 CPUs each.
    fn pools() -> Inventory {
        let n = |name: &str, pool: &str| {
            NodeSpec::new(name)
                .label("rack", "a")
                .label("pool", pool)
                .capacity(GPU, 8)
                .capacity("cpu", 16)
        };
        Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([n("x1", "x"), n("y1", "y")])
            .build()
            .unwrap()
    }

    fn on(pool: &str, name: &str, count: u32, gpus: i64, cpus: i64) -> Role {
        Role::new(name, count)
            .request(GPU, gpus)
            .request("cpu", cpus)
            .selector("pool", pool)
    }

    #[test]
    fn removing_a_node_reports_lost_members_per_reservation_and_role() {
        let mut inv = pools();
        let a = reserve(
            &mut inv,
            &Gang::new("a")
                .role(on("x", "launcher", 1, 0, 2))
                .role(on("x", "worker", 2, 1, 1)),
        );
        let b = reserve(&mut inv, &Gang::new("b").role(on("x", "worker", 3, 1, 0)));
        let c = reserve(&mut inv, &Gang::new("c").role(on("y", "worker", 2, 2, 1)));
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (3, 12));
        assert_eq!((free(&inv, "y1", GPU), free(&inv, "y1", "cpu")), (4, 14));

        let gone = inv.remove_node("x1").unwrap();
        inv.validate().unwrap();
        assert_eq!(
            lost(&gone),
            [
                (a, "launcher", "x1", 1),
                (a, "worker", "x1", 2),
                (b, "worker", "x1", 3)
            ]
        );
        assert_eq!(gone[0].path, ["a"]);
        let ra = inv.reservation(a).unwrap();
        assert_eq!((ra.member_count(), lost(ra.lost())), (0, lost(&gone[..2])));
        assert_eq!(lost(inv.reservation(b).unwrap().lost()), lost(&gone[2..]));
        // c, on y1, lost nothing and still holds what it held.
        let rc = inv.reservation(c).unwrap();
        assert!(rc.lost().is_empty());
        assert_eq!(rc.member_count(), 2);
        assert_eq!((free(&inv, "y1", GPU), free(&inv, "y1", "cpu")), (4, 14));
        // Releasing a reservation that lost everything credits nothing anywhere.
        inv.release(a).unwrap();
        inv.validate().unwrap();
        assert_eq!((free(&inv, "y1", GPU), free(&inv, "y1", "cpu")), (4, 14));
        assert_eq!(
            inv.remove_node("x1").unwrap_err().kind(),
            ErrorKind::UnknownNode
        );
    }

    #[test]
    fn failing_a_node_twice_gives_its_capacity_back_once() {
        let mut inv = pools();
        let id = reserve(&mut inv, &Gang::new("g").role(on("x", "w", 3, 2, 1)));
        let other = reserve(&mut inv, &Gang::new("h").role(on("y", "w", 1, 4, 4)));
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (2, 13));

        let first = inv.fail_node("x1").unwrap();
        inv.validate().unwrap();
        assert_eq!(lost(&first), [(id, "w", "x1", 3)]);
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (8, 16));
        assert!(!inv.node_spec("x1").unwrap().schedulable);
        // Nothing is left on x1 to lose: no report, no credit, no duplicate record.
        assert!(inv.fail_node("x1").unwrap().is_empty());
        inv.validate().unwrap();
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (8, 16));
        assert_eq!(inv.reservation(id).unwrap().lost().len(), 1);
        // Failing y1 loses h's one member there and gives its capacity back.
        assert_eq!(lost(&inv.fail_node("y1").unwrap()), [(other, "w", "y1", 1)]);
        inv.validate().unwrap();
        let (y_gpu, y_cpu) = (free(&inv, "y1", GPU), free(&inv, "y1", "cpu"));
        assert_eq!((y_gpu, y_cpu), (8, 16));
        assert_eq!(inv.reservation(other).unwrap().member_count(), 0);
        // Uncordoning brings the node back, not the members.
        inv.uncordon("x1").unwrap();
        inv.validate().unwrap();
        assert!(inv.node_spec("x1").unwrap().schedulable);
        assert_eq!(inv.reservation(id).unwrap().lost().len(), 1);
        assert_eq!(free(&inv, "x1", GPU), 8);
    }

    #[test]
    fn cordon_keeps_reservations_and_only_stops_new_placements() {
        let mut inv = pools();
        let id = reserve(&mut inv, &Gang::new("g").role(on("x", "w", 2, 1, 1)));
        inv.cordon("x1").unwrap();
        inv.validate().unwrap();
        // The reservation and the free columns are untouched.
        assert_eq!(inv.reservation(id).unwrap().member_count(), 2);
        assert!(inv.reservation(id).unwrap().lost().is_empty());
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (6, 14));
        // Cordoning twice is harmless; nothing new lands on x1, even when it fits there.
        inv.cordon("x1").unwrap();
        let g = Gang::new("more").role(on("x", "w", 1, 1, 1));
        assert!(!inv.place(&g).unwrap().is_placed());
        // Release on a cordoned node gives back exactly what it held.
        inv.release(id).unwrap();
        inv.validate().unwrap();
        assert_eq!((free(&inv, "x1", GPU), free(&inv, "x1", "cpu")), (8, 16));
        inv.uncordon("x1").unwrap();
        assert!(inv.place(&g).unwrap().is_placed());
    }

    #[test]
    fn relabelling_reports_only_reservations_whose_constrained_members_left_their_domain() {
        let n = |name: &str, block: &str, rack: &str| {
            NodeSpec::new(name)
                .label("block", block)
                .label("rack", rack)
                .capacity(GPU, 2)
        };
        let mut inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes([n("a1", "b1", "a"), n("a2", "b1", "a"), n("c1", "b1", "c")])
            .node(
                NodeSpec::new("d1")
                    .label("block", "b2")
                    .label("rack", "d")
                    .capacity(GPU, 8)
                    .capacity("cpu", 8),
            )
            .build()
            .unwrap();
        // Racks: a 4 GPUs, c 2, d 8. Four workers in a rack, at most two a node: only a.
        let rack = reserve(
            &mut inv,
            &Gang::new("rack")
                .role(Role::new("w", 4).request(GPU, 1).max_per_node(2))
                .required("rack"),
        );
        assert_eq!(inv.reservation(rack).unwrap().domain()[1].1, "a");
        // Two workers in a block: b1 has exactly 2 left (on c1); the launcher needs a
        // CPU, only d1 (block b2) has one, and it may run anywhere.
        let block = reserve(
            &mut inv,
            &Gang::new("block")
                .role(Role::new("w", 2).request(GPU, 1))
                .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
                .required("block"),
        );
        let members: Vec<String> = inv
            .reservation(block)
            .unwrap()
            .assignments(&inv)
            .into_iter()
            .map(|a| format!("{} {} {}", a.role, a.node, a.count))
            .collect();
        assert_eq!(members, ["w c1 2", "launcher d1 1"]);
        // One worker anywhere: only d1 has room.
        let anywhere = reserve(
            &mut inv,
            &Gang::new("any").role(Role::new("w", 1).request(GPU, 1)),
        );
        let frees = |inv: &Inventory| -> Vec<(String, u64)> {
            let mut v: Vec<(String, u64)> = inv
                .node_names()
                .map(|x| (x.to_owned(), free(inv, x, GPU)))
                .collect();
            v.sort();
            v
        };
        let before = frees(&inv);

        // d1 to another block: only an unconstrained launcher and a cluster-wide gang there.
        let moved = inv
            .set_labels("d1", [("block", "b9"), ("rack", "d")])
            .unwrap();
        assert_eq!(moved, []);
        inv.validate().unwrap();
        // c1 into rack a: members that were inside their domain still are.
        assert_eq!(
            inv.set_labels("c1", [("block", "b1"), ("rack", "a")])
                .unwrap(),
            []
        );
        inv.validate().unwrap();
        // a2 loses its rack label: the rack gang's members there are outside rack b1/a.
        assert_eq!(inv.set_labels("a2", [("block", "b1")]).unwrap(), [rack]);
        inv.validate().unwrap();
        // c1 to block b2: the block gang's workers left block b1. The rack gang is still
        // displaced, and reported again.
        assert_eq!(
            inv.set_labels("c1", [("block", "b2"), ("rack", "c")])
                .unwrap(),
            [rack, block]
        );
        inv.validate().unwrap();
        // Relabelling moves no capacity.
        assert_eq!(frees(&inv), before);
        for id in [rack, block, anywhere] {
            inv.release(id).unwrap();
            inv.validate().unwrap();
        }
        assert!(frees(&inv)
            .iter()
            .all(|(x, f)| *f == if x == "d1" { 8 } else { 2 }));
    }

    #[test]
    fn overcommit_names_the_reservations_holding_that_resource_on_that_node() {
        let n = |name: &str| NodeSpec::new(name).capacity(GPU, 8).capacity("cpu", 8);
        let mut inv = Inventory::builder(Topology::flat())
            .nodes([n("n1"), n("n2")])
            .build()
            .unwrap();
        // Best fit: r1 and r2 both go to n1 (the first, then the fuller node); r3 needs
        // all 8 GPUs of n2.
        let r1 = reserve(
            &mut inv,
            &Gang::new("r1").role(Role::new("w", 3).request(GPU, 1)),
        );
        let r2 = reserve(
            &mut inv,
            &Gang::new("r2").role(Role::new("w", 2).request(GPU, 1).request("cpu", 2)),
        );
        let held: Vec<String> = [r1, r2]
            .iter()
            .flat_map(|&id| inv.reservation(id).unwrap().assignments(&inv))
            .map(|a| a.node)
            .collect();
        assert_eq!(held, ["n1", "n1"]);
        let r3 = reserve(
            &mut inv,
            &Gang::new("r3").role(Role::new("w", 8).request(GPU, 1)),
        );
        assert_eq!(inv.reservation(r3).unwrap().assignments(&inv)[0].node, "n2");

        // n1 holds 5 GPUs reserved; capacity 4 is below that.
        let over = inv.set_capacity("n1", GPU, 4).unwrap();
        inv.validate().unwrap();
        assert_eq!(
            over,
            [Overcommit {
                node: "n1".into(),
                resource: GPU.into(),
                capacity: Quantity::from_units(4),
                used: Quantity::ZERO,
                reserved: Quantity::from_units(5),
                reservations: vec![r1, r2],
            }]
        );
        assert_eq!(free(&inv, "n1", GPU), 0);
        // CPUs: 6 used elsewhere + 4 held by r2 > 8. r1 holds no CPU: not named.
        let over = inv.set_used("n1", "cpu", 6).unwrap();
        inv.validate().unwrap();
        assert_eq!(over.len(), 1);
        assert_eq!(
            (
                over[0].resource.as_str(),
                over[0].reserved.millis(),
                &over[0].reservations
            ),
            ("cpu", 4000, &vec![r2])
        );
        assert_eq!(free(&inv, "n1", "cpu"), 0);
        // n2 is full (8 of 8 reserved) but not over: resizing it to exactly that is fine.
        assert!(inv.set_capacity("n2", GPU, 8).unwrap().is_empty());
        // Release r2: GPUs 4 - 3 = 1 free; CPUs 8 - 6 = 2.
        inv.release(r2).unwrap();
        inv.validate().unwrap();
        assert_eq!((free(&inv, "n1", GPU), free(&inv, "n1", "cpu")), (1, 2));
        let over = inv.set_capacity("n1", GPU, 2).unwrap();
        assert_eq!(over[0].reservations, [r1]);
        inv.release(r1).unwrap();
        inv.validate().unwrap();
        assert_eq!((free(&inv, "n1", GPU), free(&inv, "n1", "cpu")), (2, 2));
        assert!(inv.set_used("n1", "cpu", 0).unwrap().is_empty());
        assert_eq!(free(&inv, "n1", "cpu"), 8);
    }

    #[test]
    fn an_overcommitted_node_stays_overcommitted_through_a_relayout() {
        let mut inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(NodeSpec::new("m1").label("rack", "m").capacity(GPU, 8))
            .build()
            .unwrap();
        let id = reserve(
            &mut inv,
            &Gang::new("g").role(Role::new("w", 6).request(GPU, 1)),
        );
        assert_eq!(
            inv.set_capacity("m1", GPU, 4).unwrap()[0].reservations,
            [id]
        );
        // Relayouts of every kind: a node sorting first, a new resource, a relabel.
        inv.add_node(NodeSpec::new("a1").label("rack", "a").capacity(GPU, 8))
            .unwrap();
        inv.validate().unwrap();
        assert_eq!(free(&inv, "m1", GPU), 0);
        let over = inv.set_used("m1", "example.com/fpga", 1).unwrap();
        // A new resource, used beyond its (zero) capacity; no reservation holds it.
        assert_eq!(
            over.iter()
                .map(|o| (o.resource.as_str(), o.reservations.len()))
                .collect::<Vec<_>>(),
            [("example.com/fpga", 0)]
        );
        inv.validate().unwrap();
        inv.set_labels("m1", [("rack", "0")]).unwrap();
        inv.validate().unwrap();
        assert_eq!(free(&inv, "m1", GPU), 0);
        // Still 6 held against 4: raising capacity to 5 is still over, to 6 is not.
        assert_eq!(
            inv.set_capacity("m1", GPU, 5).unwrap()[0].reserved.millis(),
            6000
        );
        assert!(inv.set_capacity("m1", GPU, 6).unwrap().is_empty());
        assert_eq!(free(&inv, "m1", GPU), 0);
        inv.set_capacity("m1", GPU, 4).unwrap();
        // Release gives back what was held, and the node has exactly its capacity free.
        inv.release(id).unwrap();
        inv.validate().unwrap();
        assert_eq!((free(&inv, "m1", GPU), free(&inv, "a1", GPU)), (4, 8));
    }
}
