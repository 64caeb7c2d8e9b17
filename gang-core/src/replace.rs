//! Replacement of lost members inside the gang's original domain, and nowhere else.

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::compile::{CRole, Compiled, CompiledGang};
use crate::diagnosis::RoleFit;
use crate::error::Error;
use crate::inventory::Inventory;
use crate::names::short_level;
use crate::placement::Assignment;
use crate::request::{Gang, GangTopology};
use crate::reserve::ReservationId;
use crate::solve::rollup::{cap_of, rollup, Grain, Scope};
use crate::solve::{domain_count, Outcome, Solver};

/// The answer to [`Inventory::replace`].
///
/// ```
/// use gang_core::{Assignment, Gang, Inventory, NodeSpec, Replacement, Role, Topology};
/// let node = |n: &str, rack: &str| {
///     NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 2)
/// };
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")])
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 4).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?; // rack a, full
/// inv.remove_node("a2")?;
/// // Rack b has room, but the gang is bound to rack a: pending, nothing changes.
/// assert!(matches!(inv.replace(id)?, Replacement::Pending(_)));
/// inv.add_node(node("a3", "a"))?;
/// match inv.replace(id)? {
///     Replacement::Placed { added } => {
///         assert_eq!(added, [Assignment { role: "worker".into(), node: "a3".into(), count: 2 }]);
///     }
///     Replacement::Pending(p) => panic!("{p}"),
/// }
/// assert_eq!(inv.reservation(id).unwrap().member_count(), 4);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub enum Replacement {
    /// Every lost member has a new node inside its domain; the reservation holds them.
    Placed {
        /// The members added.
        added: Vec<Assignment>,
    },
    /// Not now: the domain that binds the gang has no room. Nothing was applied.
    Pending(Pending),
}

/// Why lost members cannot be replaced now; its [`Display`](fmt::Display) says it in
/// one sentence per binding domain.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Replacement, Role, RoleFit, Topology};
/// let node = |n: &str, rack: &str| {
///     NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 2)
/// };
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")])
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 4).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// inv.remove_node("a2")?;
/// let Replacement::Pending(p) = inv.replace(id)? else { panic!("rack a is full") };
/// assert_eq!((p.reservation, p.gang.as_str(), p.search_exhausted), (id, "train", false));
/// let d = &p.domains[0];
/// assert_eq!((d.level.as_deref(), d.domain.as_str(), d.exists), (Some("rack"), "a", true));
/// assert_eq!(d.fits, [RoleFit { role: "worker".into(), fits: 0, needed: 2 }]);
/// assert_eq!(d.short_of, ["nvidia.com/gpu"]);
/// assert_eq!(d.elsewhere, ["b"]); // has room, but the gang is bound to rack a
/// assert_eq!(
///     p.to_string(),
///     "replacement for reservation #0 (gang train) is pending: rack a has no room for \
///      2 worker (fits 0 of 2 worker; short of nvidia.com/gpu); rack b has room, but the \
///      gang is bound to rack a."
/// );
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Pending {
    /// The reservation.
    pub reservation: ReservationId,
    /// The gang's name.
    pub gang: String,
    /// One entry per binding domain.
    pub domains: Vec<PendingDomain>,
    /// The exact search ran out of budget: room may exist.
    pub search_exhausted: bool,
}

/// One domain the replacements are bound to, and how much room it lacks (see
/// [`Pending`] for one that exists).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Replacement, Role, Topology};
/// let node = |n: &str, rack: &str| {
///     NodeSpec::new(n).label("rack", rack).capacity("nvidia.com/gpu", 2)
/// };
/// let mut inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")])
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 4).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
/// inv.remove_node("a1")?;
/// inv.remove_node("a2")?; // rack a is gone altogether
/// let Replacement::Pending(p) = inv.replace(id)? else { panic!("rack a is gone") };
/// let d = &p.domains[0];
/// assert_eq!((d.domain.as_str(), d.exists, d.fits[0].needed), ("a", false, 4));
/// assert_eq!(d.elsewhere, ["b"]);
/// assert!(p.to_string().contains("rack a no longer exists, and the gang is bound to it"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PendingDomain {
    /// The binding level (`None`: anywhere in the cluster).
    pub level: Option<String>,
    /// The domain path (empty: the cluster).
    pub domain: String,
    /// Whether the domain still exists (all its nodes may be gone).
    pub exists: bool,
    /// Per role: members to replace here and how many fit (each role on its own).
    pub fits: Vec<RoleFit>,
    /// Resources short for some role on their own.
    pub short_of: Vec<String>,
    /// Other domains of the same level where these members would fit now.
    pub elsewhere: Vec<String>,
}

impl fmt::Display for Pending {
    /// One sentence per binding domain: what it lacks, and where there is room instead.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "replacement for reservation {} (gang {}) is pending:",
            self.reservation, self.gang
        )?;
        let mut parts: Vec<String> = Vec::with_capacity(self.domains.len());
        for d in &self.domains {
            let level = d.level.as_deref().map_or("cluster", short_level);
            let place = if d.domain.is_empty() {
                "the cluster".to_owned()
            } else {
                format!("{level} {}", d.domain)
            };
            if !d.exists {
                parts.push(format!(
                    "{place} no longer exists, and the gang is bound to it"
                ));
                continue;
            }
            let what: Vec<String> = d
                .fits
                .iter()
                .map(|r| format!("{} {}", r.needed, r.role))
                .collect();
            let fits: Vec<String> = d.fits.iter().map(ToString::to_string).collect();
            let mut p = format!(
                "{place} has no room for {} (fits {}",
                what.join(", "),
                fits.join(", ")
            );
            if !d.short_of.is_empty() {
                p.push_str(&format!("; short of {}", d.short_of.join(", ")));
            }
            p.push(')');
            if !d.elsewhere.is_empty() {
                let (plural, verb) = if d.elsewhere.len() == 1 {
                    ("", "has")
                } else {
                    ("s", "have")
                };
                p.push_str(&format!(
                    "; {level}{plural} {} {verb} room, but the gang is bound to {place}",
                    d.elsewhere.join(", ")
                ));
            }
            parts.push(p);
        }
        write!(f, " {}.", parts.join("; "))?;
        if self.search_exhausted {
            f.write_str(" The exact search ran out of budget: room may exist.")?;
        }
        Ok(())
    }
}

/// Lost members of one role bound to one domain.
struct Group {
    role: u16,
    count: u32,
    /// Binding scope (depth 0: the cluster); `None` when the domain is gone.
    scope: Option<Scope>,
    depth: usize,
    path: Vec<String>,
}

impl Inventory {
    /// Places the members a reservation lost (see [`Inventory::remove_node`] and
    /// [`Inventory::fail_node`]) inside the gang's original domain at its required level
    /// — or, with slices, inside each lost member's innermost slice domain — and nowhere
    /// else. On success the reservation is extended atomically; otherwise nothing
    /// changes and the answer is [`Replacement::Pending`], which says which domain binds
    /// the gang and what it lacks, even when other domains have room. Unconstrained
    /// roles, and gangs with neither a required level nor slices, may be replaced
    /// anywhere.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Replacement, Role, Topology};
    /// let node = |n: &str, rack: &str| NodeSpec::new(n).label("rack", rack).capacity("gpu", 2);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1", "a"), node("a2", "a")])
    ///     .nodes([node("b1", "b"), node("b2", "b"), node("b3", "b")])
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 4).request("gpu", 1)).required("rack");
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?; // rack a, full
    /// inv.remove_node("a2")?;
    /// match inv.replace(id)? {
    ///     Replacement::Pending(p) => assert!(p.to_string().contains("bound to rack a")),
    ///     Replacement::Placed { .. } => unreachable!("rack a has no room left"),
    /// }
    /// inv.release(id)?;
    /// assert_eq!(inv.replace(id).unwrap_err().kind(), ErrorKind::UnknownReservation);
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownReservation`] when `id` is not live; nothing changes. Otherwise
    /// only what recompiling the gang after a layout change can return; "no room" is
    /// [`Replacement::Pending`], never an error.
    pub fn replace(&mut self, id: ReservationId) -> Result<Replacement, Error> {
        let r = self
            .ledger
            .live
            .get(&id)
            .ok_or(Error::UnknownReservation { id })?;
        if r.lost.is_empty() {
            return Ok(Replacement::Placed { added: Vec::new() });
        }
        let base = if r.gang.inner.layout_id == self.layout_id {
            r.gang.clone()
        } else {
            self.recompile(r.gang.gang())?
        };
        let c = &*base.inner;
        let l = self.label_depth();
        let bind = c.required.unwrap_or(0).max(c.slice_min_leaf).min(l + 1);

        // Group the lost members by role and binding domain.
        let mut groups: Vec<Group> = Vec::new();
        for lost in &r.lost {
            let role = &c.roles[lost.role_ix as usize];
            let depth = if role.constrained { bind } else { 0 };
            let path: Vec<String> = if depth > l {
                // Bound to one node: the lost node itself.
                let mut p = lost.path.clone();
                p.push(lost.node.clone());
                p
            } else {
                lost.path.iter().take(depth).cloned().collect()
            };
            match groups
                .iter_mut()
                .find(|g| g.role == lost.role_ix && g.depth == depth && g.path == path)
            {
                Some(g) => g.count += lost.count,
                None => {
                    let scope = self.find_domain(depth, &path);
                    groups.push(Group {
                        role: lost.role_ix,
                        count: lost.count,
                        scope,
                        depth,
                        path,
                    });
                }
            }
        }
        let held = r.members.clone();
        let gang_name = r.gang.gang().name.clone();

        // One role per group, confined to its domain by eligibility; placed together.
        let mut roles: Vec<CRole> = Vec::with_capacity(groups.len());
        let mut specs = Vec::with_capacity(groups.len());
        let mut all_exist = true;
        for g in &groups {
            let mut role = c.roles[g.role as usize].clone();
            role.count = g.count;
            role.min = g.count;
            match g.scope {
                Some(sc) => {
                    let (start, end) = sc.range(self);
                    role.eligible.keep_range(start as usize, end as usize);
                }
                None => {
                    all_exist = false;
                    role.eligible.keep_range(0, 0);
                }
            }
            if role.per_node != u32::MAX {
                role.node_caps = held
                    .iter()
                    .filter(|m| m.0 == g.role)
                    .map(|m| (m.1, role.per_node.saturating_sub(m.2)))
                    .collect();
                role.node_caps.sort_unstable();
            }
            roles.push(role);
            let mut spec = c.gang.roles[g.role as usize].clone();
            spec.count = g.count;
            spec.min_count = None;
            specs.push(spec);
        }
        // Label slice levels are implied by the domains; a node-level slice still applies.
        let slices: SmallVec<[(usize, u32); 2]> =
            c.slices.iter().copied().filter(|&(d, _)| d > l).collect();
        let mut gran = vec![1u64; l + 2];
        if let Some(&(_, s)) = slices.first() {
            gran[l + 1] = u64::from(s);
            gran[0] = u64::from(s);
        }
        let sub = Compiled {
            gang: Gang {
                name: gang_name.clone(),
                roles: specs,
                topology: GangTopology::default(),
                policy: c.policy,
            },
            roles,
            levels: SmallVec::from_slice(&[0]),
            required: None,
            slices,
            gran,
            slice_min_leaf: 0,
            policy: c.policy,
            layout_id: self.layout_id,
        };
        let sub = CompiledGang {
            inner: Arc::new(sub),
        };
        let mut solver = Solver::new();
        let outcome = if all_exist {
            Some(solver.place(self, &sub)?)
        } else {
            None
        };
        match outcome {
            Some(Outcome::Placed(p)) => {
                let added_members: Vec<crate::placement::Member> = p
                    .members
                    .iter()
                    .map(|&(gi, n, k)| (groups[gi as usize].role, n, k))
                    .collect();
                let Some(mut r) = self.ledger.live.remove(&id) else {
                    return Err(Error::UnknownReservation { id });
                };
                self.adjust(&r.shapes, &added_members, true);
                let mut added = Vec::with_capacity(added_members.len());
                for &(role, n, k) in &added_members {
                    match r.members.iter_mut().find(|m| m.0 == role && m.1 == n) {
                        Some(m) => m.2 += k,
                        None => r.members.push((role, n, k)),
                    }
                    added.push(Assignment {
                        role: r.gang.gang().roles[role as usize].name.clone(),
                        node: self.names[n as usize].clone(),
                        count: k,
                    });
                }
                r.members.sort_unstable();
                r.lost.clear();
                self.ledger.live.insert(id, r);
                Ok(Replacement::Placed { added })
            }
            other => {
                let exhausted = matches!(other, Some(Outcome::Undecided(_)));
                Ok(Replacement::Pending(self.pending(
                    &mut solver,
                    &sub,
                    &groups,
                    id,
                    gang_name,
                    exhausted,
                )))
            }
        }
    }

    /// The domain at `depth` whose label values are `path` (the node, at the node level).
    fn find_domain(&self, depth: usize, path: &[String]) -> Option<Scope> {
        let l = self.label_depth();
        if depth == 0 {
            return Some(Scope::CLUSTER);
        }
        if depth > l {
            let ix = self.names.get_index_of(path.last()?.as_str())? as u32;
            // The node must still be the same place and able to take members.
            return self
                .schedulable
                .get(ix as usize)
                .then_some(Scope { depth, index: ix });
        }
        // Walk down from the root, one level's value at a time.
        let mut index = 0u32;
        for (d, value) in path.iter().enumerate().take(depth) {
            let v = self.values.get_index_of(value.as_str())? as u32;
            let parent = self.domains[d][index as usize];
            index = (parent.child_start..parent.child_end)
                .find(|&c| self.domains[d + 1][c as usize].value == v)?;
        }
        Some(Scope { depth, index })
    }

    fn pending(
        &self,
        solver: &mut Solver,
        sub: &CompiledGang,
        groups: &[Group],
        id: ReservationId,
        gang: String,
        exhausted: bool,
    ) -> Pending {
        let c = &*sub.inner;
        let s = &mut solver.s;
        s.ensure(self);
        let mut domains: Vec<PendingDomain> = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let level = self.topology.key_of(g.depth).map(str::to_owned);
            let path = g.path.join("/");
            let at = match domains
                .iter()
                .position(|d| d.level == level && d.domain == path)
            {
                Some(i) => i,
                None => {
                    domains.push(PendingDomain {
                        level,
                        domain: path,
                        exists: g.scope.is_some(),
                        fits: Vec::new(),
                        short_of: Vec::new(),
                        elsewhere: Vec::new(),
                    });
                    domains.len() - 1
                }
            };
            let role = &c.roles[gi];
            let fits = match g.scope {
                Some(sc) => rollup(self, role, Grain::of(c, role), sc, None, s),
                None => 0,
            };
            let d = &mut domains[at];
            d.fits.push(RoleFit {
                role: c.gang.roles[gi].name.clone(),
                fits,
                needed: g.count,
            });
            if let Some(sc) = g.scope {
                let (start, end) = sc.range(self);
                for &(r, q) in &role.req {
                    let alone: u64 = role
                        .eligible
                        .ones_in(start as usize, end as usize)
                        .filter(|&n| self.schedulable.get(n))
                        .map(|n| {
                            (self.free[r as usize][n] / q).min(u64::from(role.cap_on(n as u32)))
                        })
                        .sum();
                    let name = &self.resources[r as usize];
                    if alone < u64::from(g.count) && !d.short_of.contains(name) {
                        d.short_of.push(name.clone());
                    }
                }
            }
        }
        // Elsewhere: other domains of the binding level where every group bound to this
        // domain would fit on its own, ignoring the binding.
        for d in &mut domains {
            let Some(depth) = d.level.as_deref().and_then(|k| self.topology.depth_of(k)) else {
                continue;
            };
            if !d.exists && depth == 0 {
                continue;
            }
            let members: Vec<usize> = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| {
                    self.topology.key_of(g.depth).map(str::to_owned) == d.level
                        && g.path.join("/") == d.domain
                })
                .map(|(i, _)| i)
                .collect();
            let mut ok: Vec<bool> = vec![true; domain_count(self, depth) as usize];
            for &gi in &members {
                // The role without its confinement: eligibility as the gang's own role.
                let mut role = c.roles[gi].clone();
                role.eligible = crate::compile::eligibility(self, &c.gang.roles[gi]);
                rollup(self, &role, Grain::NONE, Scope::CLUSTER, None, s);
                for (i, o) in ok.iter_mut().enumerate() {
                    *o &= cap_of(
                        self,
                        Scope {
                            depth,
                            index: i as u32,
                        },
                        s,
                    ) >= u64::from(groups[gi].count);
                }
            }
            for (i, o) in ok.iter().enumerate() {
                if !*o || d.elsewhere.len() >= 5 {
                    continue;
                }
                let name = if depth > self.label_depth() {
                    self.names[i].clone()
                } else {
                    self.domain_values(depth, i as u32).join("/")
                };
                if name != d.domain {
                    d.elsewhere.push(name);
                }
            }
        }
        Pending {
            reservation: id,
            gang,
            domains,
            search_exhausted: exhausted,
        }
    }
}
