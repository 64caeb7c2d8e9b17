//! The ledger of live reservations: what each holds, and the charging and crediting
//! of free capacity that keeps the columns and summaries exact.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use smallvec::SmallVec;

/// `(role index, node index, count)`: members of one role on one node, in dense ids.
pub(crate) type Member = (u16, u32, u32);

/// What one member of a role holds: `(resource name, milli-units)`.
pub(crate) type Shape = SmallVec<[(String, u64); 4]>;

use super::Inventory;
use crate::model::{Assignment, Error, EvictableUnit, Gang, InventoryId, Quantity, ReservationId};
/// Members of a reservation lost with a node that was removed or failed.
///
/// Returned by [`Inventory::remove_node`] and [`Inventory::fail_node`], and kept in
/// [`Reservation::lost`] until [`Inventory::replace`] finds them new nodes.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::Replacement;
/// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("nvidia.com/gpu", 4);
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1"), node("a2"), node("a3")])
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 8).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?; // a1 and a2
/// let lost = inv.fail_node("a2")?;
/// assert_eq!((lost[0].reservation, lost[0].role.as_str()), (id, "worker"));
/// assert_eq!((lost[0].node.as_str(), lost[0].count), ("a2", 4));
/// assert_eq!(inv.reservation(id).unwrap().lost(), lost);
/// assert!(inv.fail_node("a9").is_err());
/// // a3 is in the same rack: the lost members are replaced there.
/// assert!(matches!(inv.replace(id)?, Replacement::Placed { .. }));
/// assert!(inv.reservation(id).unwrap().lost().is_empty());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Lost {
    /// The reservation that lost them.
    pub reservation: ReservationId,
    /// Role name.
    pub role: String,
    /// The node they were on.
    pub node: String,
    /// How many.
    pub count: u32,
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) role_ix: u16,
    /// The node's topology label values at the time of the loss (outermost first), so a
    /// replacement can stay in the lost member's slice domain.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) path: Vec<String>,
}

/// Equal when reservation, role, node and count are (what a `Lost` says; the rest is
/// bookkeeping for replacement, and is not serialised).
impl PartialEq for Lost {
    fn eq(&self, o: &Self) -> bool {
        (self.reservation, &self.role, &self.node, self.count)
            == (o.reservation, &o.role, &o.node, o.count)
    }
}

impl Eq for Lost {}

impl std::hash::Hash for Lost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.reservation, &self.role, &self.node, self.count).hash(h);
    }
}

/// A live reservation: the gang, the domain it was placed in, and what it holds.
///
/// ```
/// use gang_core::{Assignment, Gang, Inventory, NodeSpec, Quantity, Role, Topology};
/// let node = |n: &str, rack: &str| {
///     NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 4).capacity("cpu", 32)
/// };
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", "a"), node("b1", "b"), node("b2", "b")])
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 6).request("nvidia.com/gpu", 1).request("cpu", 2))
///     .required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// let r = inv.reservation(id).unwrap();
/// assert_eq!((r.id(), r.gang().get_name()), (id, "train"));
/// assert_eq!(r.domain(), [("rack".to_owned(), "b".to_owned())]);
/// let on = |node: &str, count| Assignment { role: "worker".into(), node: node.into(), count };
/// assert_eq!(r.assignments(&inv), [on("b1", 4), on("b2", 2)]);
/// assert_eq!(r.member_count(), 6);
/// let usage: Vec<(String, String, Quantity)> = r.usage(&inv);
/// assert!(usage.contains(&("b1".into(), "nvidia.com/gpu".into(), Quantity::from_units(4))));
/// assert!(usage.contains(&("b2".into(), "cpu".into(), Quantity::from_units(4))));
/// assert!(r.lost().is_empty());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Reservation {
    pub(crate) id: ReservationId,
    pub(crate) gang: Gang,
    /// Depth of the placement's domain, and its label values.
    pub(crate) depth: usize,
    pub(crate) domain: Vec<(String, String)>,
    /// `(role, node index, count)`, sorted; node indices follow relayouts.
    pub(crate) members: Vec<Member>,
    /// Per role: requested `(resource name, milli-units)` per member.
    pub(crate) shapes: Vec<SmallVec<[(String, u64); 4]>>,
    pub(crate) lost: Vec<Lost>,
}

impl Reservation {
    /// The reservation's id. See [`Reservation`].
    pub fn id(&self) -> ReservationId {
        self.id
    }

    /// The gang reserved, as given. See [`Reservation`].
    pub fn gang(&self) -> &Gang {
        &self.gang
    }

    /// The domain the gang was placed in, `(level key, value)` outermost first (empty:
    /// cluster-wide). Replacements stay inside it at the gang's required level. See
    /// [`Reservation`].
    pub fn domain(&self) -> &[(String, String)] {
        &self.domain
    }

    /// Members held, per role and node (names looked up in `inv`, the inventory that
    /// holds the reservation). See [`Reservation`].
    pub fn assignments(&self, inv: &Inventory) -> Vec<Assignment> {
        self.members
            .iter()
            .map(|&(r, n, k)| Assignment {
                role: self.gang.roles[r as usize].name.clone(),
                node: inv.names[n as usize].clone(),
                count: k,
            })
            .collect()
    }

    /// Total members held (lost members not counted). See [`Reservation`].
    pub fn member_count(&self) -> u64 {
        self.members.iter().map(|m| u64::from(m.2)).sum()
    }

    /// What the reservation holds on each node, per resource, as `(node, resource,
    /// amount)`. See [`Reservation`].
    pub fn usage(&self, inv: &Inventory) -> Vec<(String, String, Quantity)> {
        let mut out: Vec<(String, String, Quantity)> = Vec::new();
        for &(r, n, k) in &self.members {
            for (res, q) in &self.shapes[r as usize] {
                let node = &inv.names[n as usize];
                let add = q.saturating_mul(u64::from(k));
                match out.iter_mut().find(|(a, b, _)| a == node && b == res) {
                    Some(e) => e.2 = Quantity::from_millis(e.2.millis().saturating_add(add)),
                    None => out.push((node.clone(), res.clone(), Quantity::from_millis(add))),
                }
            }
        }
        out
    }

    /// Members lost with removed or failed nodes and not yet replaced. See [`Lost`].
    pub fn lost(&self) -> &[Lost] {
        &self.lost
    }

    /// The reservation as plain data, with node names (a reservation itself refers to
    /// the inventory's nodes): for JSON, and for the bindings.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Quantity, Role, Topology};
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 8))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 3));
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// let s = inv.reservation(id).unwrap().snapshot(&inv);
    /// assert_eq!((s.id, s.gang.get_name(), s.members[0].count), (id, "g", 2));
    /// assert_eq!(s.usage, [("n1".into(), "gpu".into(), Quantity::from_units(6))]);
    /// let json = serde_json::to_string(&s).unwrap();
    /// assert!(json.contains(r#""usage":[["n1","gpu",6]]"#), "{json}");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn snapshot(&self, inv: &Inventory) -> ReservationSnapshot {
        ReservationSnapshot {
            id: self.id,
            gang: self.gang().clone(),
            domain: self.domain.clone(),
            members: self.assignments(inv),
            usage: self.usage(inv),
            lost: self.lost.clone(),
        }
    }
}

/// A reservation as plain data: what [`Reservation::snapshot`] returns (see there).
/// With the `serde` feature it serialises as `{"id", "gang", "domain": [[level, value]…],
/// "members": [{"role", "node", "count"}…], "usage": [[node, resource, amount]…],
/// "lost": [{"reservation", "role", "node", "count"}…]}` and reads back the same.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ReservationSnapshot {
    /// The reservation's id.
    pub id: ReservationId,
    /// The gang reserved, as requested.
    pub gang: Gang,
    /// The placement's domain, `(level key, value)` outermost first.
    pub domain: Vec<(String, String)>,
    /// Members held, per role and node.
    pub members: Vec<Assignment>,
    /// What is held per node and resource: `(node, resource, amount)`.
    pub usage: Vec<(String, String, Quantity)>,
    /// Members lost with removed or failed nodes and not yet replaced.
    pub lost: Vec<Lost>,
}

/// The live reservations of an inventory, and its identity.
///
/// The identity ([`InventoryId`]) is taken when first needed, so building or relaying
/// out an inventory takes none. A clone holds the same reservations under the same ids
/// (they are valid in both), but gets an identity of its own for the ones it makes
/// after, so that no two inventories ever hand out the same id.
/// An evictable unit as the inventory holds it: the unit as declared and its amounts in
/// the form reservations hold theirs (one "role" per node it uses, one member each), so
/// charging and crediting it is [`Inventory::adjust`].
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub spec: EvictableUnit,
    /// Per entry of `members`: `(resource name, milli-units)`.
    pub shapes: Vec<Shape>,
    /// `(entry, node index, 1)`, in node order; node indices follow relayouts.
    pub members: Vec<Member>,
}

#[derive(Debug, Default)]
pub(crate) struct Ledger {
    pub live: BTreeMap<ReservationId, Reservation>,
    /// Evictable units declared by the caller, by id; their amounts are held like a
    /// reservation's.
    pub units: BTreeMap<String, Unit>,
    /// Serial number of the next reservation.
    pub next: u64,
    id: OnceLock<InventoryId>,
}

impl Clone for Ledger {
    fn clone(&self) -> Ledger {
        Ledger {
            live: self.live.clone(),
            units: self.units.clone(),
            next: self.next,
            id: OnceLock::new(),
        }
    }
}

impl Ledger {
    /// The inventory's identity (taken on first use).
    pub fn id(&self) -> InventoryId {
        *self.id.get_or_init(InventoryId::fresh)
    }

    /// The id the next reservation gets (the caller then counts `next` up).
    pub fn next_id(&self) -> ReservationId {
        ReservationId::new(self.id(), self.next)
    }

    /// The live reservation `id`, or the error saying why there is none: released (or
    /// never made) here, or made by another inventory.
    pub fn find(&self, id: ReservationId) -> Result<&Reservation, Error> {
        self.live.get(&id).ok_or_else(|| self.missing(id))
    }

    /// Removes and returns the live reservation `id` (errors as [`Ledger::find`]).
    pub fn take(&mut self, id: ReservationId) -> Result<Reservation, Error> {
        match self.live.remove(&id) {
            Some(r) => Ok(r),
            None => Err(self.missing(id)),
        }
    }

    fn missing(&self, id: ReservationId) -> Error {
        if id.inventory() == self.id() {
            Error::UnknownReservation { id }
        } else {
            Error::ForeignReservation {
                id,
                inventory: self.id(),
            }
        }
    }

    /// Checks that the reserved columns equal the sum of live reservations and evictable
    /// units, and that no reservation is partial.
    pub fn validate(&self, inv: &Inventory) -> Result<(), String> {
        let nres = inv.resources.len();
        let mut sum = vec![0u128; inv.len() * nres];
        for (id, r) in &self.live {
            let roles = &r.gang.roles;
            let mut held = vec![0u64; roles.len()];
            for &(role, n, k) in &r.members {
                if n as usize >= inv.len() || k == 0 {
                    return Err(format!("reservation {id}: bad member on node {n}"));
                }
                held[role as usize] += u64::from(k);
                for (res, q) in &r.shapes[role as usize] {
                    let Some(ri) = inv.resources.get_index_of(res) else {
                        return Err(format!("reservation {id}: unknown resource {res}"));
                    };
                    sum[n as usize * nres + ri] += u128::from(*q) * u128::from(k);
                }
            }
            for l in &r.lost {
                held[l.role_ix as usize] += u64::from(l.count);
            }
            for (i, role) in roles.iter().enumerate() {
                let min = role.min_count.unwrap_or(role.count);
                if held[i] < u64::from(min) || held[i] > u64::from(role.count) {
                    return Err(format!(
                        "reservation {id}: role {i} holds {} (with lost) outside [{min}, {}]",
                        held[i], role.count
                    ));
                }
            }
        }
        for (id, u) in &self.units {
            if u.members.len() != u.shapes.len() || u.spec.id != *id {
                return Err(format!("evictable unit {id}: bad bookkeeping"));
            }
            for &(e, n, k) in &u.members {
                if n as usize >= inv.len() || k != 1 || e as usize >= u.shapes.len() {
                    return Err(format!("evictable unit {id}: bad entry on node {n}"));
                }
                for (res, q) in &u.shapes[e as usize] {
                    if let Some(ri) = inv.resources.get_index_of(res) {
                        sum[n as usize * nres + ri] += u128::from(*q);
                    }
                }
            }
        }
        for n in 0..inv.len() {
            for r in 0..nres {
                if u128::from(inv.reserved_of(n, r)) != sum[n * nres + r] {
                    return Err(format!(
                        "reserved {} on {} is {}, live reservations hold {}",
                        inv.resources[r],
                        inv.names[n],
                        inv.reserved_of(n, r),
                        sum[n * nres + r]
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Inventory {
    /// The live reservation `id`, or the error that says why there is none (what
    /// [`Inventory::release`] and [`Inventory::replace`] would report).
    ///
    /// ```
    /// use gang_core::{Error, ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// let build = || Inventory::builder(Topology::flat()).node(NodeSpec::new("n1").capacity("gpu", 4)).build();
    /// let (mut a, b) = (build()?, build()?);
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 1));
    /// let id = a.reserve(a.place(&gang)?.placement().unwrap())?;
    /// assert_eq!(a.live_reservation(id)?.member_count(), 2);
    /// // Another inventory never made it: the error names both.
    /// let err = b.live_reservation(id).unwrap_err();
    /// assert_eq!(err, Error::ForeignReservation { id, inventory: b.id() });
    /// assert_eq!(err.kind(), ErrorKind::UnknownReservation);
    /// a.release(id)?;
    /// assert_eq!(a.live_reservation(id).unwrap_err(), Error::UnknownReservation { id });
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownReservation`] for an id this inventory made that is not live
    /// (released); [`Error::ForeignReservation`] for an id of another inventory.
    pub fn live_reservation(&self, id: ReservationId) -> Result<&Reservation, Error> {
        self.ledger.find(id)
    }

    /// Adds (`take`) or removes a reservation's holdings, keeping summaries exact.
    pub(crate) fn hold(&mut self, r: &Reservation, take: bool) {
        self.adjust(&r.shapes, &r.members, take);
    }

    /// Adds or removes the holdings of `members` (of roles shaped `shapes`).
    pub(crate) fn adjust(
        &mut self,
        shapes: &[SmallVec<[(String, u64); 4]>],
        members: &[(u16, u32, u32)],
        take: bool,
    ) {
        let mut touched: SmallVec<[u32; 32]> = SmallVec::new();
        for &(role, n, k) in members {
            for (res, q) in &shapes[role as usize] {
                let Some(ri) = self.resources.get_index_of(res) else {
                    continue;
                };
                let amount = q.saturating_mul(u64::from(k));
                let held = self.reserved_of(n as usize, ri);
                let held = if take {
                    held.saturating_add(amount)
                } else {
                    held.saturating_sub(amount)
                };
                self.set_reserved(n as usize, ri, held);
            }
            if !touched.contains(&n) {
                touched.push(n);
            }
        }
        for &n in &touched {
            self.journal.touch(n);
        }
        self.refresh_summaries(&touched);
    }
}
