//! Declaring and withdrawing evictable units (running work the library did not reserve).

use smallvec::SmallVec;

use super::ledger::{Member, Shape, Unit};
use super::Inventory;
use crate::model::{Error, EvictableUnit};

impl Inventory {
    /// Declares an evictable unit: its amounts count as used on its nodes from now on,
    /// and [`Inventory::preempt`](crate::Inventory::preempt) may evict it for a gang of
    /// strictly higher priority. Amounts of resources that no node has are ignored.
    /// See [`EvictableUnit`].
    ///
    /// ```
    /// use gang_core::{ErrorKind, EvictableUnit, Inventory, NodeSpec, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 8))
    ///     .build()?;
    /// inv.add_evictable(EvictableUnit::new("pod-a", 1).amount("n1", "nvidia.com/gpu", 3))?;
    /// assert_eq!(inv.free("n1", "nvidia.com/gpu").unwrap().millis(), 5000);
    /// let again = inv.add_evictable(EvictableUnit::new("pod-a", 1));
    /// assert_eq!(again.unwrap_err().field(), "evictable[pod-a].id");
    /// let bad = inv.add_evictable(EvictableUnit::new("pod-b", 1).amount("n1", "cpu", "x"));
    /// assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidQuantity);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidInventory`] for an empty id or one already declared;
    /// [`Error::UnknownNode`] for a node the inventory does not have;
    /// [`Error::InvalidQuantity`] for a bad amount (`evictable[id].nodes[n1].cpu`). The
    /// inventory is unchanged.
    pub fn add_evictable(&mut self, unit: EvictableUnit) -> Result<(), Error> {
        let held = self.unit_of(unit)?;
        self.adjust(&held.shapes, &held.members, true);
        self.ledger.units.insert(held.spec.id.clone(), held);
        Ok(())
    }

    /// Withdraws an evictable unit (it finished, or was evicted by the caller), giving
    /// back what it used; returns it as declared.
    ///
    /// ```
    /// use gang_core::{EvictableUnit, Inventory, NodeSpec, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 8))
    ///     .evictable(EvictableUnit::new("pod-a", 0).amount("n1", "gpu", 8))
    ///     .build()?;
    /// assert_eq!(inv.remove_evictable("pod-a")?.get_id(), "pod-a");
    /// assert_eq!(inv.free("n1", "gpu").unwrap().millis(), 8000);
    /// assert_eq!(inv.remove_evictable("pod-a").unwrap_err().field(), "evictable[pod-a]");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidInventory`] when no unit has this id; nothing changes.
    pub fn remove_evictable(&mut self, id: &str) -> Result<EvictableUnit, Error> {
        let Some(u) = self.ledger.units.remove(id) else {
            return Err(Error::inventory(
                format!("evictable[{id}]"),
                id,
                "no evictable unit has this id",
            ));
        };
        self.adjust(&u.shapes, &u.members, false);
        Ok(u.spec)
    }

    /// The evictable units declared, in id order. See [`EvictableUnit`].
    pub fn evictable_units(&self) -> impl ExactSizeIterator<Item = &EvictableUnit> + '_ {
        self.ledger.units.values().map(|u| &u.spec)
    }

    /// Validates a unit against this inventory and puts it in the form the ledger keeps.
    pub(crate) fn unit_of(&self, unit: EvictableUnit) -> Result<Unit, Error> {
        let id = unit.id.clone();
        if id.is_empty() || self.ledger.units.contains_key(&id) {
            let why = if id.is_empty() {
                "an evictable unit needs an id"
            } else {
                "two evictable units have this id"
            };
            return Err(Error::inventory(format!("evictable[{id}].id"), &id, why));
        }
        let mut entries: Vec<(u32, Shape)> = Vec::new();
        for (node, amounts) in &unit.nodes {
            let n = self.index(node)? as u32;
            let mut shape = SmallVec::new();
            for (res, q) in amounts {
                let q = q.resolve(&format!("evictable[{id}].nodes[{node}].{res}"))?;
                if q.millis() > 0 {
                    shape.push((res.clone(), q.millis()));
                }
            }
            entries.push((n, shape));
        }
        if entries.len() > usize::from(u16::MAX) {
            return Err(Error::inventory(
                format!("evictable[{id}].nodes"),
                entries.len(),
                "an evictable unit uses at most 65535 nodes",
            ));
        }
        entries.sort_by_key(|e| e.0);
        let members: Vec<Member> = (0..entries.len())
            .map(|i| (i as u16, entries[i].0, 1))
            .collect();
        let shapes = entries.into_iter().map(|e| e.1).collect();
        Ok(Unit {
            spec: unit,
            shapes,
            members,
        })
    }
}
