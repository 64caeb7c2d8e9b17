//! An inventory as plain data, reservations included: what a binding pickles or ships
//! to another process, and what compares two inventories by content.

use super::ledger::{Lost, Reservation};
use super::Inventory;
use crate::model::names::{check_qualified_name, HOSTNAME_LEVEL};
use crate::model::{
    Assignment, Error, EvictableUnit, Gang, NodeSpec, Quantity, QuantitySpec, ReservationId,
    Topology,
};

/// Everything an inventory holds, as data: its topology levels, its nodes as they stand
/// now (capacity and external use as exact amounts, labels, taints, cordons), and its
/// live reservations with exactly what each holds.
///
/// [`Inventory::to_document`] takes it and [`Inventory::from_document`] builds the same
/// inventory back: same free capacity, same reservations (same serial numbers, gangs,
/// members, lost members), which can be released or replaced there. The rebuilt
/// inventory is a new one with its own [`InventoryId`](crate::InventoryId), so the
/// reservations' ids carry that identity (an id from another process could collide).
/// Two inventories with equal documents answer every query the same way.
///
/// With the `serde` feature it is the cluster document of scenario files —
/// `{"topology": {"levels": [...]}, "nodes": [...]}` — plus, when there are any,
/// `"reservations"` and `"next_reservation"` (and `"resources"` for resources no node
/// has now, and `"evictable"` for declared [`EvictableUnit`]s), so a cluster document
/// reads as an inventory without reservations.
///
/// ```
/// use gang_core::{Gang, Inventory, InventoryDocument, NodeSpec, Role, Topology};
/// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("gpu", 4).used("gpu", 1);
/// let mut inv = Inventory::builder(Topology::new(["rack"])?).nodes([node("a1"), node("a2")]).build()?;
/// let gang = Gang::new("g").role(Role::new("w", 4).request("gpu", 1)).required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
///
/// let doc: InventoryDocument = inv.to_document();
/// assert_eq!((doc.levels.as_slice(), doc.nodes.len(), doc.reservations.len()), (["rack".to_owned()].as_slice(), 2, 1));
/// let mut again = Inventory::from_document(doc.clone())?;
/// assert_eq!(again.to_document(), doc);
/// assert_eq!(again.free("a1", "gpu"), inv.free("a1", "gpu"));
/// let r = again.reservations().next().unwrap();
/// assert_eq!((r.id().serial(), r.id().inventory()), (id.serial(), again.id()));
/// again.release(r.id())?;
/// assert_eq!(again.free("a1", "gpu").unwrap().millis(), 3000);
///
/// // A reservation on a node the document does not have is an error, naming it.
/// let mut bad = inv.to_document();
/// bad.nodes.retain(|n| n.get_name() != "a2");
/// let err = Inventory::from_document(bad).unwrap_err();
/// assert_eq!(err.field(), "reservations[0].members[1].node");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InventoryDocument {
    /// Topology levels, outermost first.
    pub levels: Vec<String>,
    /// Resources the inventory keeps although no node has any of them now (empty when
    /// every resource appears on some node).
    pub resources: Vec<String>,
    /// Nodes in storage (topology) order, with exact amounts; zero amounts left out.
    pub nodes: Vec<NodeSpec>,
    /// Live reservations, in id order.
    pub reservations: Vec<ReservationRecord>,
    /// Serial number of the next reservation (serials are never reused).
    pub next_reservation: u64,
    /// Evictable units declared, in id order, amounts as exact quantities.
    pub evictable: Vec<EvictableUnit>,
}

/// One reservation in an [`InventoryDocument`] (see there).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReservationRecord {
    /// The reservation's serial number ([`ReservationId::serial`]).
    pub serial: u64,
    /// The gang, as requested.
    pub gang: Gang,
    /// The placement's domain, `(level key, value)` outermost first.
    pub domain: Vec<(String, String)>,
    /// Members held, per role and node.
    pub members: Vec<Assignment>,
    /// Per role (in the gang's order), what each member holds: `(resource, amount)`.
    pub per_member: Vec<Vec<(String, Quantity)>>,
    /// Members lost with removed or failed nodes and not yet replaced.
    pub lost: Vec<LostRecord>,
}

/// Members of a reservation lost with a node, in a [`ReservationRecord`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LostRecord {
    /// Role name.
    pub role: String,
    /// The node they were on.
    pub node: String,
    /// How many.
    pub count: u32,
    /// The node's topology label values when they were lost, outermost first.
    pub path: Vec<String>,
}

/// The gang with its (valid) request amounts as exact quantities, as a document holds it.
fn exact_requests(mut g: Gang) -> Gang {
    for role in &mut g.roles {
        for a in role.requests.values_mut() {
            if let Ok(q) = a.resolve("") {
                *a = QuantitySpec::Exact(q);
            }
        }
    }
    g
}

impl Inventory {
    /// The inventory as data, reservations included (amounts as exact quantities). See
    /// [`InventoryDocument`].
    pub fn to_document(&self) -> InventoryDocument {
        let nodes: Vec<NodeSpec> = self
            .names
            .iter()
            .filter_map(|n| self.node_spec(n))
            .collect();
        let resources = self
            .resources
            .iter()
            .filter(|r| {
                !nodes
                    .iter()
                    .any(|n| n.capacity.contains_key(r.as_str()) || n.used.contains_key(r.as_str()))
            })
            .cloned()
            .collect();
        let reservations = self
            .ledger
            .live
            .values()
            .map(|r| ReservationRecord {
                serial: r.id.serial(),
                gang: exact_requests(r.gang.clone()),
                domain: r.domain.clone(),
                members: r.assignments(self),
                per_member: r
                    .shapes
                    .iter()
                    .map(|s| {
                        s.iter()
                            .map(|(res, q)| (res.clone(), Quantity::from_millis(*q)))
                            .collect()
                    })
                    .collect(),
                lost: r
                    .lost
                    .iter()
                    .map(|l| LostRecord {
                        role: l.role.clone(),
                        node: l.node.clone(),
                        count: l.count,
                        path: l.path.clone(),
                    })
                    .collect(),
            })
            .collect();
        InventoryDocument {
            levels: self.topology.levels().to_vec(),
            resources,
            nodes,
            reservations,
            next_reservation: self.ledger.next,
            evictable: self
                .ledger
                .units
                .values()
                .map(|u| {
                    let mut spec = u.spec.clone();
                    for amounts in spec.nodes.values_mut() {
                        for a in amounts.values_mut() {
                            if let Ok(q) = a.resolve("") {
                                *a = QuantitySpec::Exact(q);
                            }
                        }
                    }
                    spec
                })
                .collect(),
        }
    }

    /// Builds an inventory back from its document: the nodes are validated as by
    /// [`InventoryBuilder::build`](crate::InventoryBuilder::build), then each
    /// reservation holds again exactly what it held. See [`InventoryDocument`].
    ///
    /// # Errors
    /// As [`InventoryBuilder::build`](crate::InventoryBuilder::build) for the topology
    /// and nodes; [`Error::InvalidScenario`] naming the field
    /// (`reservations[0].members[1].node`) for a reservation that names a role or node
    /// that does not exist, repeats a serial, holds more or fewer members than its gang
    /// allows, or does not fit the document's own bookkeeping, and for a malformed name
    /// in `resources`.
    pub fn from_document(doc: InventoryDocument) -> Result<Inventory, Error> {
        let topology = Topology::new(doc.levels)?;
        for (i, r) in doc.resources.iter().enumerate() {
            check_qualified_name(r).map_err(|e| Error::scenario(format!("resources[{i}]"), e))?;
        }
        let mut inv = Inventory::from_specs(topology, &doc.nodes, &doc.resources)?;
        let label_depth = inv.label_depth();
        let mut next = doc.next_reservation;
        for (i, rec) in doc.reservations.into_iter().enumerate() {
            let at = format!("reservations[{i}]");
            let role_of = |name: &str, field: String| -> Result<u16, Error> {
                rec.gang
                    .roles
                    .iter()
                    .position(|r| r.name == name)
                    .map(|p| p as u16)
                    .ok_or_else(|| Error::scenario(field, format!("no role {name:?} in the gang")))
            };
            let mut members = Vec::with_capacity(rec.members.len());
            for (j, a) in rec.members.iter().enumerate() {
                let role = role_of(&a.role, format!("{at}.members[{j}].role"))?;
                let node = inv.names.get_index_of(a.node.as_str()).ok_or_else(|| {
                    Error::scenario(
                        format!("{at}.members[{j}].node"),
                        format!("no node {:?} in the document", a.node),
                    )
                })?;
                if a.count == 0 {
                    return Err(Error::scenario(
                        format!("{at}.members[{j}].count"),
                        "a reservation holds at least one member per entry",
                    ));
                }
                members.push((role, node as u32, a.count));
            }
            members.sort_unstable();
            if members
                .windows(2)
                .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            {
                return Err(Error::scenario(
                    format!("{at}.members"),
                    "a role appears twice on one node",
                ));
            }
            if rec.per_member.len() != rec.gang.roles.len() {
                return Err(Error::scenario(
                    format!("{at}.per_member"),
                    format!(
                        "{} entries for {} roles",
                        rec.per_member.len(),
                        rec.gang.roles.len()
                    ),
                ));
            }
            let shapes = rec
                .per_member
                .iter()
                .map(|s| s.iter().map(|(res, q)| (res.clone(), q.millis())).collect())
                .collect();
            let mut lost = Vec::with_capacity(rec.lost.len());
            let id = ReservationId::new(inv.id(), rec.serial);
            for (j, l) in rec.lost.into_iter().enumerate() {
                let role_ix = role_of(&l.role, format!("{at}.lost[{j}].role"))?;
                lost.push(Lost {
                    reservation: id,
                    role: l.role,
                    node: l.node,
                    count: l.count,
                    role_ix,
                    path: l.path,
                });
            }
            // The depth of the domain: the node level when it ends with one node.
            let depth = match rec.domain.last() {
                Some((k, _)) if k == HOSTNAME_LEVEL => label_depth + 1,
                _ => rec.domain.len(),
            };
            if inv.ledger.live.contains_key(&id) {
                return Err(Error::scenario(
                    format!("{at}.serial"),
                    format!("serial {} appears twice", rec.serial),
                ));
            }
            let r = Reservation {
                id,
                gang: rec.gang,
                depth,
                domain: rec.domain,
                members,
                shapes,
                lost,
            };
            inv.hold(&r, true);
            inv.ledger.live.insert(id, r);
            next = next.max(rec.serial + 1);
        }
        inv.ledger.next = next;
        for u in doc.evictable {
            inv.add_evictable(u)?;
        }
        inv.validate()
            .map_err(|reason| Error::scenario("reservations", reason))?;
        Ok(inv)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use serde::{Deserialize, Serialize};

    use super::{InventoryDocument, LostRecord, ReservationRecord};
    use crate::model::{Assignment, EvictableUnit, Gang, NodeSpec, Quantity, QuantitySpec};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Topo {
        #[serde(default)]
        levels: Vec<String>,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        topology: Topo,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        resources: Vec<String>,
        nodes: Vec<NodeSpec>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reservations: Vec<Record>,
        #[serde(default, skip_serializing_if = "is_zero")]
        next_reservation: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        evictable: Vec<EvictableUnit>,
    }

    fn is_zero(n: &u64) -> bool {
        *n == 0
    }

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Record {
        serial: u64,
        gang: Gang,
        #[serde(default)]
        domain: Vec<(String, String)>,
        members: Vec<Assignment>,
        per_member: Vec<Vec<(String, Quantity)>>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        lost: Vec<LostDoc>,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct LostDoc {
        role: String,
        node: String,
        count: u32,
        #[serde(default)]
        path: Vec<String>,
    }

    impl Serialize for InventoryDocument {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            Doc {
                topology: Topo {
                    levels: self.levels.clone(),
                },
                resources: self.resources.clone(),
                nodes: self.nodes.clone(),
                reservations: self
                    .reservations
                    .iter()
                    .map(|r| Record {
                        serial: r.serial,
                        gang: r.gang.clone(),
                        domain: r.domain.clone(),
                        members: r.members.clone(),
                        per_member: r.per_member.clone(),
                        lost: r
                            .lost
                            .iter()
                            .map(|l| LostDoc {
                                role: l.role.clone(),
                                node: l.node.clone(),
                                count: l.count,
                                path: l.path.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
                next_reservation: self.next_reservation,
                evictable: self.evictable.clone(),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for InventoryDocument {
        /// Amounts that are valid (of nodes, and of the reserved gangs' requests) are
        /// read as exact quantities, so a document read back equals the one written
        /// whatever way its amounts were spelled; invalid ones stay as given, for the
        /// build to report with their field.
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let mut doc = Doc::deserialize(d)?;
            let exact = |a: &mut QuantitySpec| {
                if let Ok(q) = a.resolve("") {
                    *a = QuantitySpec::Exact(q);
                }
            };
            for n in &mut doc.nodes {
                n.capacity
                    .values_mut()
                    .chain(n.used.values_mut())
                    .for_each(exact);
            }
            for r in &mut doc.reservations {
                for role in &mut r.gang.roles {
                    role.requests.values_mut().for_each(exact);
                }
            }
            Ok(InventoryDocument {
                levels: doc.topology.levels,
                resources: doc.resources,
                nodes: doc.nodes,
                reservations: doc
                    .reservations
                    .into_iter()
                    .map(|r| ReservationRecord {
                        serial: r.serial,
                        gang: r.gang,
                        domain: r.domain,
                        members: r.members,
                        per_member: r.per_member,
                        lost: r
                            .lost
                            .into_iter()
                            .map(|l| LostRecord {
                                role: l.role,
                                node: l.node,
                                count: l.count,
                                path: l.path,
                            })
                            .collect(),
                    })
                    .collect(),
                next_reservation: doc.next_reservation,
                evictable: doc.evictable,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Gang, Inventory, NodeSpec, Role, Topology};

    fn cluster() -> Inventory {
        let node = |n: &str, rack: &str| {
            NodeSpec::new(n)
                .label("rack", rack)
                .capacity("gpu", 2)
                .capacity("pods", 10)
        };
        Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b")])
            .build()
            .unwrap()
    }

    #[test]
    fn documents_round_trip_with_lost_members_and_overcommit() {
        let mut inv = cluster();
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request("gpu", 1))
            .required("rack");
        let id = inv
            .reserve(inv.place(&gang).unwrap().placement().unwrap())
            .unwrap();
        let other = inv
            .reserve(
                inv.place(&Gang::new("h").role(Role::new("w", 1).request("gpu", 1)))
                    .unwrap()
                    .placement()
                    .unwrap(),
            )
            .unwrap();
        inv.release(other).unwrap();
        inv.fail_node("a2").unwrap();
        inv.set_capacity("a1", "gpu", 1).unwrap(); // overcommitted now
        let doc = inv.to_document();
        let again = Inventory::from_document(doc.clone()).unwrap();
        again.validate().unwrap();
        assert_eq!(again.to_document(), doc);
        assert_ne!(again.id(), inv.id());
        let r = again.reservations().next().unwrap();
        assert_eq!(r.id().serial(), id.serial());
        assert_eq!(
            r.lost(),
            inv.reservation(id)
                .unwrap()
                .lost()
                .iter()
                .map(|l| {
                    let mut l = l.clone();
                    l.reservation = r.id();
                    l
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(doc.next_reservation, 2);
        #[cfg(feature = "serde")]
        {
            let text = serde_json::to_string(&doc).unwrap();
            let back: super::InventoryDocument = serde_json::from_str(&text).unwrap();
            assert_eq!(back, doc);
        }
    }

    #[test]
    fn bad_documents_name_the_field() {
        let mut inv = cluster();
        let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 1));
        inv.reserve(inv.place(&gang).unwrap().placement().unwrap())
            .unwrap();
        let doc = inv.to_document();
        let mut twice = doc.clone();
        twice.reservations.push(twice.reservations[0].clone());
        assert_eq!(
            Inventory::from_document(twice).unwrap_err().field(),
            "reservations[1].serial"
        );
        let mut role = doc.clone();
        role.reservations[0].members[0].role = "x".into();
        assert_eq!(
            Inventory::from_document(role).unwrap_err().field(),
            "reservations[0].members[0].role"
        );
        let mut more = doc.clone();
        more.reservations[0].members[0].count += 5;
        assert_eq!(
            Inventory::from_document(more).unwrap_err().field(),
            "reservations"
        );
        let mut names = doc.clone();
        names.resources.push("Not A Name".into());
        assert_eq!(
            Inventory::from_document(names).unwrap_err().field(),
            "resources[0]"
        );
        let mut shapes = doc;
        shapes.reservations[0].per_member.clear();
        assert_eq!(
            Inventory::from_document(shapes).unwrap_err().field(),
            "reservations[0].per_member"
        );
    }
}
