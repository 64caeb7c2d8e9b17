//! Changes to a live inventory: nodes added, removed, failed, cordoned, relabelled,
//! resized, and usage from outside the library.
//!
//! Cordoning and amounts change columns in place. Adding, removing or relabelling a node
//! (or naming a resource no node had) re-sorts the nodes: the inventory is rebuilt from
//! its own node descriptions, reservations follow their nodes by name, and gangs
//! compiled before are compiled again on their next placement.

use rustc_hash::FxHashMap;

use crate::error::Error;
use crate::inventory::Inventory;
use crate::node::NodeSpec;
use crate::placement::Member;
use crate::quantity::{Amount, Quantity};
use crate::reserve::{Lost, ReservationId};

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
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
    /// use gang_core::{Amount, Inventory, NodeSpec, Quantity, Topology};
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("cpu", "1.5").used("cpu", "500m"))
    ///     .build()?;
    /// let spec = inv.node_spec("a1").unwrap();
    /// assert_eq!(spec.labels["rack"], "a");
    /// assert_eq!(spec.capacity["cpu"], Amount::Exact(Quantity::from_millis(1500)));
    /// assert_eq!(spec.used["cpu"], Amount::Exact(Quantity::from_millis(500)));
    /// assert!(spec.schedulable);
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
            if self.capacity[r][ix] > 0 {
                n.capacity.insert(
                    name.clone(),
                    Amount::Exact(Quantity::from_millis(self.capacity[r][ix])),
                );
            }
            if self.used[r][ix] > 0 {
                n.used.insert(
                    name.clone(),
                    Amount::Exact(Quantity::from_millis(self.used[r][ix])),
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

    fn index(&self, name: &str) -> Result<usize, Error> {
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
        let mut held: FxHashMap<(u32, u32), u64> = FxHashMap::default();
        for r in ledger.live.values() {
            for &(role, n, k) in &r.members {
                for (res, q) in &r.shapes[role as usize] {
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
    /// assert!(!inv.node_spec("a2").unwrap().schedulable); // still there, cordoned
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
                        role: r.gang.gang().roles[role as usize].name.clone(),
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
    /// assert_eq!(inv.node_spec("a2").unwrap().labels["rack"], "b");
    /// let bad = inv.set_labels("a2", [("rack", "rack b")]);
    /// assert_eq!(bad.unwrap_err().field(), "nodes[a2].labels.rack");
    /// assert_eq!(inv.node_spec("a2").unwrap().labels["rack"], "b"); // unchanged
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
            let c = &r.gang.inner;
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
                .any(|m| c.roles[m.0 as usize].constrained && !inside(m.1))
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
        amount: impl Into<Amount>,
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
        amount: impl Into<Amount>,
    ) -> Result<Vec<Overcommit>, Error> {
        self.set_amount(node, resource, amount.into(), false)
    }

    fn set_amount(
        &mut self,
        node: &str,
        resource: &str,
        amount: Amount,
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
                map.insert(resource.to_owned(), Amount::Exact(q));
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
