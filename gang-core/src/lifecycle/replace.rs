//! Replacement of lost members inside the gang's original domain, and nowhere else.

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::answer::diagnosis::RoleFit;
use crate::answer::render::resource_words;
use crate::answer::Outcome;
use crate::compile::{CRole, Compiled, CompiledGang, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::Inventory;
use crate::model::names::short_level;
use crate::model::{Assignment, Error, Gang, GangTopology, ReservationId};
use crate::solve::Solver;

/// The answer to [`Inventory::replace`].
///
/// ```
/// use gang_core::{Assignment, Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::Replacement;
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
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::RoleFit;
/// use gang_core::lifecycle::Replacement;
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
/// let fit = &d.fits[0];
/// assert_eq!((d.fits.len(), fit.role.as_str(), fit.fits, fit.needed), (1, "worker", 0, 2));
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
#[non_exhaustive]
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
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::lifecycle::Replacement;
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
#[non_exhaustive]
pub struct PendingDomain {
    /// The binding level (`None`: anywhere in the cluster).
    pub level: Option<String>,
    /// The domain path (empty: the cluster).
    pub domain: String,
    /// Whether the domain still exists (all its nodes may be gone).
    pub exists: bool,
    /// Whether every node of the domain is cordoned (or failed): it exists, but takes
    /// no members until uncordoned.
    pub cordoned: bool,
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
            if !d.exists || d.cordoned {
                let state = if d.exists {
                    "is cordoned"
                } else {
                    "no longer exists"
                };
                parts.push(format!("{place} {state}, and the gang is bound to it"));
                continue;
            }
            let what: Vec<String> = d
                .fits
                .iter()
                .map(|r| format!("{} {}", r.needed, r.role))
                .collect();
            let fits: Vec<String> = d.fits.iter().map(ToString::to_string).collect();
            // Every role fits here on its own: the shortfall is elsewhere, or together.
            let room = d.fits.iter().all(|r| r.fits >= u64::from(r.needed));
            let (verb, together, label) = match (room, self.domains.len() > 1) {
                (false, _) => ("has no room for", "", "fits"),
                (true, true) => ("has room for", "", "fits"),
                (true, false) => ("has no room for", " together", "each fits on its own:"),
            };
            let mut p = format!(
                "{place} {verb} {}{together} ({label} {}",
                what.join(", "),
                fits.join(", ")
            );
            if !d.short_of.is_empty() {
                p.push_str(&format!("; short of {}", resource_words(&d.short_of)));
            }
            p.push(')');
            if !room && !d.elsewhere.is_empty() {
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

/// The label values of the domain at `depth` that binds a lost member: the
/// reservation's own domain (`held`, outermost first) as far as it goes — not the path
/// of the node the member was lost on, which a relabel may have moved — and below it
/// (a slice level deeper than the reservation's domain) the lost member's path, if that
/// path still runs through the reservation's domain. Shorter than `depth` when no such
/// domain can be named; the replacement is then pending.
fn binding_path(held: &[&str], lost: &[String], depth: usize) -> Vec<String> {
    let common = depth.min(held.len());
    let mut path: Vec<String> = held[..common].iter().map(|v| (*v).to_owned()).collect();
    if depth > common {
        let inside = lost.len() >= depth && lost[..common].iter().zip(held).all(|(a, b)| a == b);
        if inside {
            path.extend(lost[common..depth].iter().cloned());
        }
    }
    path
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
    /// use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::Replacement;
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
        // Another inventory's id is an error naming both inventories.
        let r = self.ledger.find(id)?;
        if r.lost.is_empty() {
            return Ok(Replacement::Placed { added: Vec::new() });
        }
        let base = self.recompile(&r.gang)?;
        let c = &*base.inner;
        let l = self.label_depth();
        let bind = c.required.unwrap_or(0).max(c.slice_min_leaf).min(l + 1);

        // The reservation's domain, label levels only: what binds every constrained
        // member, whatever happened to the labels of the node a member was lost on.
        let held: Vec<&str> = r
            .domain
            .iter()
            .take(r.depth.min(l))
            .map(|(_, v)| v.as_str())
            .collect();

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
                binding_path(&held, &lost.path, depth)
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
        let gang_name = r.gang.name.clone();

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
                    .map(|m| (NodeIx(m.1), role.per_node.saturating_sub(m.2)))
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
                priority: c.gang.priority,
                preemption_policy: c.gang.preemption_policy,
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
                let added_members: Vec<crate::inventory::ledger::Member> = p
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
                        role: r.gang.roles[role as usize].name.clone(),
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
        if depth <= l && path.len() < depth {
            // The member's node was outside every domain of that level when it was
            // lost: there is no domain to stay in.
            return None;
        }
        if depth > l {
            // The node, if it still exists (cordoned or not: the solver skips cordoned
            // nodes, and the report says so).
            let ix = self.names.get_index_of(path.last()?.as_str())?;
            return Some(Scope::new(Depth(depth), NodeIx::at(ix).0));
        }
        // Walk down from the root, one level's value at a time.
        let mut index = 0u32;
        for (d, value) in path.iter().enumerate().take(depth) {
            let v = self.values.get_index_of(value.as_str())? as u32;
            let parent = self.domains[d][index as usize];
            index = (parent.child_start..parent.child_end)
                .find(|&c| self.domains[d + 1][c as usize].value == v)?;
        }
        Some(Scope::new(Depth(depth), index))
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
        let mut domains: Vec<PendingDomain> = Vec::new();
        // A domain's name: its path, or the node's name at the node level.
        let l = self.label_depth();
        let name_of = |g: &Group| {
            if g.depth > l {
                g.path.last().cloned().unwrap_or_default()
            } else {
                g.path.join("/")
            }
        };
        for (gi, g) in groups.iter().enumerate() {
            let level = self.topology.key_of(g.depth).map(str::to_owned);
            let path = name_of(g);
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
                        cordoned: g.scope.is_some_and(|sc| {
                            let (start, end) = sc.range(self);
                            (start..end).all(|n| !self.schedulable.get(n as usize))
                        }),
                        fits: Vec::new(),
                        short_of: Vec::new(),
                        elsewhere: Vec::new(),
                    });
                    domains.len() - 1
                }
            };
            let role = &c.roles[gi];
            let fits = match g.scope {
                Some(sc) => solver.role_capacity(self, c, RoleIx::at(gi), sc),
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
                            (self.free[r as usize][n] / q)
                                .min(u64::from(role.cap_on(NodeIx::at(n))))
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
                        && name_of(g) == d.domain
                })
                .map(|(i, _)| i)
                .collect();
            let mut ok: Vec<bool> = vec![true; self.scope_count(Depth(depth)) as usize];
            for &gi in &members {
                // The role without its confinement: eligibility as the gang's own role.
                let mut role = c.roles[gi].clone();
                role.eligible = crate::compile::eligibility(self, &c.gang.roles[gi]);
                let need = u64::from(groups[gi].count);
                for (o, cap) in ok
                    .iter_mut()
                    .zip(solver.capacities_at(self, &role, Depth(depth)))
                {
                    *o &= cap >= need;
                }
            }
            for (i, o) in ok.iter().enumerate() {
                if !*o || d.elsewhere.len() >= 5 {
                    continue;
                }
                let name = if depth > l {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeSpec, Role, HOSTNAME_LEVEL};

    use crate::testkit::{build, node, GPU};

    fn reserve(inv: &mut Inventory, gang: &Gang) -> ReservationId {
        let p = inv.place(gang).unwrap().placement().cloned().unwrap();
        p.validate(inv).unwrap();
        let id = inv.reserve(&p).unwrap();
        inv.validate().unwrap();
        id
    }

    fn held(inv: &Inventory, id: ReservationId) -> Vec<(String, String, u32)> {
        inv.reservation(id)
            .unwrap()
            .assignments(inv)
            .into_iter()
            .map(|a| (a.role, a.node, a.count))
            .collect()
    }

    fn frees(inv: &Inventory) -> Vec<u64> {
        inv.node_names()
            .map(|n| inv.free(n, GPU).map_or(0, |q| q.millis() / 1000))
            .collect()
    }

    fn added(r: Replacement) -> Vec<(String, String, u32)> {
        match r {
            Replacement::Placed { added } => added
                .into_iter()
                .map(|a| (a.role, a.node, a.count))
                .collect(),
            Replacement::Pending(p) => panic!("{p}"),
        }
    }

    /// Two roles that each fit on their own in the binding rack, but not together: the
    /// pending text says so rather than "no room".
    #[test]
    fn roles_that_fit_only_alone_are_said_to_need_room_together() {
        let mut inv = build(
            &["rack"],
            vec![
                node("a1", "x", "a", 4),
                node("a2", "x", "a", 4),
                node("b1", "x", "b", 2),
            ],
        );
        let gang = Gang::new("g")
            .role(Role::new("x", 1).request(GPU, 2))
            .role(Role::new("y", 1).request(GPU, 2))
            .required("rack");
        let id = reserve(&mut inv, &gang);
        let on = held(&inv, id)[0].1.clone();
        assert!(
            held(&inv, id).iter().all(|m| m.1 == on),
            "packed on one node"
        );
        let other = if on == "a1" { "a2" } else { "a1" };
        inv.fail_node(&on).unwrap();
        inv.set_used(other, GPU, 2).unwrap(); // 2 GPUs left in rack a: x or y, not both
        let p = pending(inv.replace(id).unwrap());
        assert_eq!(p.domains.len(), 1);
        let text = p.to_string();
        assert!(
            text.contains("rack a has no room for 1 x, 1 y together (each fits on its own: "),
            "{text}"
        );
    }

    fn pending(r: Replacement) -> Pending {
        match r {
            Replacement::Pending(p) => p,
            Replacement::Placed { added } => panic!("placed {added:?}"),
        }
    }

    fn w(role: &str, node: &str, count: u32) -> (String, String, u32) {
        (role.to_owned(), node.to_owned(), count)
    }

    #[test]
    fn bound_to_the_required_block_it_may_change_rack_but_never_block() {
        // Block b1: rack a (a1, a2: 2 GPUs each), rack c (c1: 2). Block b2: d1 (8).
        let mut inv = build(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a", 2),
                node("a2", "b1", "a", 2),
                node("c1", "b1", "c", 2),
                node("d1", "b2", "d", 8),
            ],
        );
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1).max_per_node(2))
            .required("block");
        // At most two a node: b2 (one node) cannot hold four; b1 packs them into rack a.
        let id = reserve(&mut inv, &gang);
        assert_eq!(held(&inv, id), [w("w", "a1", 2), w("w", "a2", 2)]);
        inv.fail_node("a2").unwrap();
        // Rack a is full; rack c is in the same block; d1 has far more room but is not.
        assert_eq!(added(inv.replace(id).unwrap()), [w("w", "c1", 2)]);
        inv.validate().unwrap();
        assert_eq!(held(&inv, id), [w("w", "a1", 2), w("w", "c1", 2)]);
        assert!(inv.reservation(id).unwrap().lost().is_empty());
        assert_eq!(frees(&inv), [0, 2, 0, 8]);
        // Nothing lost: nothing to do.
        assert!(added(inv.replace(id).unwrap()).is_empty());
        assert_eq!(frees(&inv), [0, 2, 0, 8]);

        // Lose c1 too: block b1 has no schedulable room left (a2 is failed).
        inv.fail_node("c1").unwrap();
        let before = frees(&inv);
        let p = pending(inv.replace(id).unwrap());
        assert_eq!(p.domains.len(), 1);
        let d = &p.domains[0];
        assert_eq!(
            (d.level.as_deref(), d.domain.as_str(), d.exists),
            (Some("block"), "b1", true)
        );
        assert_eq!(
            d.fits,
            [RoleFit {
                role: "w".into(),
                fits: 0,
                needed: 2
            }]
        );
        assert_eq!(d.elsewhere, ["b2"]);
        // Nothing applied, the loss still recorded; asking again gives the same answer.
        assert_eq!(frees(&inv), before);
        assert_eq!(inv.reservation(id).unwrap().lost().len(), 1);
        assert_eq!(pending(inv.replace(id).unwrap()), p);
        inv.validate().unwrap();
    }

    #[test]
    fn pending_is_all_or_nothing_and_lists_every_domain_with_room() {
        // Rack a: 2 + 2 + 1; b: 1; c: 2; d: 5.
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("a2").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("a3").label("rack", "a").capacity(GPU, 1),
                NodeSpec::new("b1").label("rack", "b").capacity(GPU, 1),
                NodeSpec::new("c1").label("rack", "c").capacity(GPU, 2),
                NodeSpec::new("d1").label("rack", "d").capacity(GPU, 5),
            ],
        );
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1).max_per_node(2))
            .required("rack");
        // At most two a node: only rack a holds four, on its two largest nodes.
        let id = reserve(&mut inv, &gang);
        assert_eq!(held(&inv, id), [w("w", "a1", 2), w("w", "a2", 2)]);
        inv.remove_node("a1").unwrap();
        inv.validate().unwrap();
        let before = frees(&inv);
        // Two to replace; rack a has one slot (a3): none is placed.
        let p = pending(inv.replace(id).unwrap());
        let d = &p.domains[0];
        assert_eq!((d.domain.as_str(), d.exists), ("a", true));
        assert_eq!(
            d.fits,
            [RoleFit {
                role: "w".into(),
                fits: 1,
                needed: 2
            }]
        );
        assert_eq!(d.short_of, [GPU]);
        // c and d have room for two, b does not.
        assert_eq!(d.elsewhere, ["c", "d"]);
        assert!(
            p.to_string()
                .contains("racks c, d have room, but the gang is bound to rack a"),
            "{p}"
        );
        assert!(!p.search_exhausted);
        assert_eq!(frees(&inv), before);
        assert_eq!(held(&inv, id), [w("w", "a2", 2)]);
        // One more GPU on a3 and both go there.
        inv.set_capacity("a3", GPU, 2).unwrap();
        assert_eq!(added(inv.replace(id).unwrap()), [w("w", "a3", 2)]);
        inv.validate().unwrap();
        assert_eq!(held(&inv, id), [w("w", "a2", 2), w("w", "a3", 2)]);
    }

    #[test]
    fn several_nodes_lost_at_once_with_an_unconstrained_role() {
        // Rack a: three 2-GPU nodes. Racks x and y: one CPU-only node each.
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("a2").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("a3").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("x1").label("rack", "x").capacity("cpu", 2),
                NodeSpec::new("y1").label("rack", "y").capacity("cpu", 2),
            ],
        );
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1))
            .role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
            .required("rack");
        let id = reserve(&mut inv, &gang);
        let members = held(&inv, id);
        assert_eq!(members.len(), 3);
        let launcher_on = members[2].1.clone();
        let spare = ["a1", "a2", "a3"]
            .into_iter()
            .find(|n| !members.iter().any(|m| m.1 == *n))
            .unwrap();
        let other_cpu = if launcher_on == "x1" { "y1" } else { "x1" };
        // A worker node and the launcher's node fail together.
        inv.fail_node(&members[0].1).unwrap();
        inv.fail_node(&launcher_on).unwrap();
        assert_eq!(inv.reservation(id).unwrap().lost().len(), 2);

        // The other CPU node cordoned too: the launcher has nowhere to go, so neither
        // the launcher nor the workers (which do fit in rack a) are replaced.
        let mut blocked = inv.clone();
        blocked.cordon(other_cpu).unwrap();
        let before = frees(&blocked);
        let p = pending(blocked.replace(id).unwrap());
        let cluster = p.domains.iter().find(|d| d.level.is_none()).unwrap();
        assert_eq!(cluster.domain, "");
        assert_eq!(
            cluster.fits,
            [RoleFit {
                role: "launcher".into(),
                fits: 0,
                needed: 1
            }]
        );
        assert_eq!(frees(&blocked), before);
        assert_eq!(blocked.reservation(id).unwrap().lost().len(), 2);
        blocked.validate().unwrap();
        // Rack a has room for its own workers: the text says so, and names no
        // alternative racks for them.
        let text = p.to_string();
        assert!(
            text.contains("rack a has room for 2 w (fits 2 of 2 w);"),
            "{text}"
        );
        assert!(
            text.contains("the cluster has no room for 1 launcher"),
            "{text}"
        );
        assert!(!text.contains("bound to rack a"), "{text}");

        // Otherwise both are replaced together: the workers in rack a, the launcher in
        // another rack, since it is bound to none.
        let mut got = added(inv.replace(id).unwrap());
        got.sort();
        assert_eq!(got, [w("launcher", other_cpu, 1), w("w", spare, 2)]);
        inv.validate().unwrap();
        assert!(inv.reservation(id).unwrap().lost().is_empty());
        assert_eq!(inv.reservation(id).unwrap().member_count(), 5);
    }

    #[test]
    fn slices_lost_in_two_racks_are_replaced_each_in_its_own_rack() {
        // Block b1: racks a, b, c; a and b with three 1-GPU nodes, c with one.
        let mut nodes: Vec<NodeSpec> = ["a1", "a2", "a3", "b1", "b2", "b3"]
            .iter()
            .map(|n| node(n, "b1", &n[..1], 1))
            .collect();
        nodes.push(node("c1", "b1", "c", 1));
        let mut inv = build(&["block", "rack"], nodes);
        let gang = Gang::new("g")
            .role(Role::new("w", 4).request(GPU, 1))
            .required("block")
            .slice("rack", 2);
        let id = reserve(&mut inv, &gang);
        let rack_of = |m: &(String, String, u32)| m.1[..1].to_owned();
        let per_rack = |inv: &Inventory| {
            let mut v: Vec<(String, u32)> = Vec::new();
            for m in held(inv, id) {
                match v.iter_mut().find(|x| x.0 == rack_of(&m)) {
                    Some(x) => x.1 += m.2,
                    None => v.push((rack_of(&m), m.2)),
                }
            }
            v
        };
        assert_eq!(per_rack(&inv), [("a".into(), 2), ("b".into(), 2)]);
        let members = held(&inv, id);
        let in_a = members
            .iter()
            .find(|m| rack_of(m) == "a")
            .unwrap()
            .1
            .clone();
        let in_b = members
            .iter()
            .find(|m| rack_of(m) == "b")
            .unwrap()
            .1
            .clone();
        inv.fail_node(&in_a).unwrap();
        inv.remove_node(&in_b).unwrap();
        let mut got = added(inv.replace(id).unwrap());
        got.sort();
        // One each, in the rack the slice was in (c1 would fit but is another rack).
        assert_eq!(got.len(), 2);
        assert_eq!(
            (rack_of(&got[0]), rack_of(&got[1])),
            ("a".into(), "b".into())
        );
        assert_eq!(per_rack(&inv), [("a".into(), 2), ("b".into(), 2)]);
        inv.validate().unwrap();

        // Rack a's last spare node is gone (failed earlier); lose another member there.
        let in_a = held(&inv, id)
            .into_iter()
            .find(|m| rack_of(m) == "a")
            .unwrap()
            .1;
        inv.fail_node(&in_a).unwrap();
        let p = pending(inv.replace(id).unwrap());
        let d = &p.domains[0];
        assert_eq!(
            (d.level.as_deref(), d.domain.as_str()),
            (Some("rack"), "b1/a")
        );
        assert_eq!(
            d.fits,
            [RoleFit {
                role: "w".into(),
                fits: 0,
                needed: 1
            }]
        );
        assert_eq!(d.elsewhere, ["b1/c"]);
        assert!(p.to_string().contains("bound to rack b1/a"), "{p}");
        inv.validate().unwrap();
    }

    #[test]
    fn bound_to_one_node_it_waits_for_that_node() {
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 4),
                NodeSpec::new("a2").label("rack", "a").capacity(GPU, 4),
            ],
        );
        let gang = Gang::new("g")
            .role(Role::new("w", 2).request(GPU, 1))
            .required(HOSTNAME_LEVEL);
        let id = reserve(&mut inv, &gang);
        assert_eq!(held(&inv, id), [w("w", "a1", 2)]);
        inv.fail_node("a1").unwrap();
        // a2 has room for both, but the gang is bound to node a1.
        let p = pending(inv.replace(id).unwrap());
        let d = &p.domains[0];
        assert_eq!(d.level.as_deref(), Some(HOSTNAME_LEVEL));
        assert_eq!(
            (d.domain.as_str(), d.exists, d.cordoned),
            ("a1", true, true)
        );
        assert_eq!(d.elsewhere, ["a2"]);
        assert!(
            p.to_string()
                .contains("node a1 is cordoned, and the gang is bound to it"),
            "{p}"
        );
        assert_eq!(frees(&inv), [4, 4]);
        // Uncordoned but short: the node itself is never listed as elsewhere.
        let mut short = inv.clone();
        short.uncordon("a1").unwrap();
        short.set_used("a1", GPU, 3).unwrap();
        let p = pending(short.replace(id).unwrap());
        let d = &p.domains[0];
        assert_eq!(
            (d.cordoned, d.elsewhere.as_slice()),
            (false, ["a2".to_owned()].as_slice())
        );
        assert!(
            p.to_string().contains("node a1 has no room for 2 w (fits 1 of 2 w; short of nvidia.com/gpu); node a2 has room, but the gang is bound to node a1"),
            "{p}"
        );
        inv.uncordon("a1").unwrap();
        assert_eq!(added(inv.replace(id).unwrap()), [w("w", "a1", 2)]);
        inv.validate().unwrap();
        assert_eq!(frees(&inv), [2, 4]);
    }

    #[test]
    fn an_unbound_gang_is_replaced_anywhere() {
        let mut inv = build(
            &["rack"],
            vec![
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 2),
                NodeSpec::new("b1").label("rack", "b").capacity(GPU, 1),
                NodeSpec::new("c1").label("rack", "c").capacity(GPU, 1),
            ],
        );
        // Preferred only: placed in rack a, but bound to nothing.
        let gang = Gang::new("g")
            .role(Role::new("w", 2).request(GPU, 1))
            .preferred("rack");
        let id = reserve(&mut inv, &gang);
        assert_eq!(inv.reservation(id).unwrap().domain()[0].1, "a");
        inv.remove_node("a1").unwrap();
        let mut got = added(inv.replace(id).unwrap());
        got.sort();
        assert_eq!(got, [w("w", "b1", 1), w("w", "c1", 1)]);
        inv.validate().unwrap();
        assert_eq!(frees(&inv), [0, 0]);
    }
}
