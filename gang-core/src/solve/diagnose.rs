//! Building a diagnosis: what the solver's roll-ups say about a gang that no level
//! could take.
//!
//! The phases of [`diagnose`]: per role, its cluster-wide fit and the nodes excluded
//! and why ([`role_reports`], from the role's capacities and [`CauseBook`] kept in the
//! solver's cache: a diagnosis asked again costs the nodes touched since, not a walk
//! over the cluster); the best domain at the requested level and what it lacks
//! ([`Standing`], [`domain_report`]); slices inside it ([`slice_reports`]); and the
//! tightest coarser level that fits now ([`relaxation`]).

use std::sync::Arc;

use crate::answer::diagnosis::{
    Diagnosis, DomainReport, FewerMembers, Relaxation, RoleFit, RoleReport, Shortfall, SliceReport,
};
use crate::compile::{Compiled, RoleIx};
use crate::inventory::domains::Scope;
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::{Inventory, PODS};
use crate::solve::causes::{CauseBook, Kept};
use crate::solve::rollup::{rollup, Capacities, Grain};
use crate::solve::verdict::{Budget, Search, Verdict};
use crate::solve::{policy_prefers, Aim, Limits, Solver};

/// Builds the diagnosis for a gang that no level could take, whose search ended as
/// `search`. Cold path.
pub(crate) fn diagnose(
    solver: &mut Solver,
    inv: &Inventory,
    c: &Arc<Compiled>,
    search: Search,
) -> Diagnosis {
    let depth = asked_depth(c);
    let roles = role_reports(solver, inv, c, depth);
    let standing = Standing::at(solver, inv, c, depth);
    let caps = &mut solver.s.caps;
    let best = standing
        .best
        .map(|scope| domain_report(inv, c, caps, &standing, scope, search));
    let slices = match standing.best {
        Some(scope) => slice_reports(inv, c, scope, caps),
        None => Vec::new(),
    };
    // Read before the relaxation below asks again.
    let search_progress = (search == Search::Exhausted).then_some(solver.s.candidates.progress);
    let relaxation = relaxation(solver, inv, c);
    let fewer_members = best
        .as_ref()
        .and_then(|b| fewer_members(inv, c, b, solver.limits()));
    Diagnosis {
        gang: c.gang.name.clone(),
        level: inv.topology.key_of(depth.ix()).map(str::to_owned),
        roles,
        best,
        relaxation,
        fewer_members,
        slices,
        search_exhausted: search == Search::Exhausted,
        search_progress,
    }
}

/// The role reports of a gang whatever its answer (for [`Inventory::explain`] of a
/// placed gang; a diagnosis computes the same).
pub(crate) fn roles(solver: &mut Solver, inv: &Inventory, c: &Arc<Compiled>) -> Vec<RoleReport> {
    role_reports(solver, inv, c, asked_depth(c))
}

/// `f` of role `r`'s capacities over the whole cluster (at its own grain), lent up to
/// date by the solver's cache: after the query that failed, only the nodes touched
/// since it are rolled up again.
fn with_capacities<T>(
    solver: &mut Solver,
    inv: &Inventory,
    c: &Arc<Compiled>,
    r: RoleIx,
    f: impl FnOnce(&Capacities) -> T,
) -> T {
    let Solver { s, cache, .. } = solver;
    cache.lend(inv, c, r, &mut s.caps);
    let out = f(&s.caps);
    cache.give_back(&mut s.caps);
    out
}

/// The depth a diagnosis is about: the first level tried, or the cluster.
fn asked_depth(c: &Compiled) -> Depth {
    if c.any_constrained() {
        Depth(c.levels[0])
    } else {
        Depth::CLUSTER
    }
}

/// Per role: how many fit cluster-wide, ignoring topology, and the nodes excluded for it
/// (each under the first reason that applies, in the documented order), from the role's
/// [`CauseBook`] kept in the solver's cache.
fn role_reports(
    solver: &mut Solver,
    inv: &Inventory,
    c: &Arc<Compiled>,
    depth: Depth,
) -> Vec<RoleReport> {
    // At the node level every node is a domain of its own: no label is needed.
    let check_depth = if inv.is_node_level(depth) {
        Depth::CLUSTER
    } else {
        depth
    };
    let mut roles = Vec::with_capacity(c.roles.len());
    for ((r, role), spec) in c.indexed_roles().zip(&c.gang.roles) {
        let need = if role.constrained {
            let slice = if c.has_slices() {
                Depth(c.slice_min_leaf)
            } else {
                Depth::CLUSTER
            };
            check_depth.max(slice)
        } else {
            Depth::CLUSTER
        };
        // Whole members per node, slices aside: the cache's own capacities and book
        // unless the role is sliced (then rolled up afresh without the slice
        // arithmetic, into a book of this diagnosis only).
        let Solver { s, cache, .. } = &mut *solver;
        let caps = &mut s.caps;
        let mut own: Kept = None;
        let kept = if Grain::of(c, role).gran.is_empty() {
            cache.lend(inv, c, r, caps);
            cache.lent_causes()
        } else {
            rollup(inv, role, Grain::NONE, Scope::CLUSTER, None, caps);
            None
        };
        let book = CauseBook::current(
            kept.unwrap_or(&mut own),
            inv,
            c,
            spec,
            role,
            need,
            &caps.fits,
        );
        let (causes, fitting, excluded) = book.report();
        let cluster_fit = caps.of(inv, Scope::CLUSTER);
        cache.give_back(caps);
        roles.push(RoleReport {
            role: spec.name.clone(),
            count: role.count,
            needed: role.min,
            constrained: role.constrained,
            cluster_fit,
            fitting_nodes: fitting,
            excluded,
            causes,
            unknown_resources: role.missing.clone(),
        });
    }
    roles
}

/// How the domains at the requested depth stand: each counted role's capacity in every
/// domain, and the best domain (the most of the roles' minimums, then the policy on
/// their spare capacity, then the first).
struct Standing {
    /// The roles counted: the constrained ones (every role, cluster-wide).
    roles: Vec<RoleIx>,
    /// `[counted role][domain]`: the role's capacity there, alone, in whole slices.
    caps: Vec<Vec<u64>>,
    best: Option<Scope>,
}

impl Standing {
    fn at(solver: &mut Solver, inv: &Inventory, c: &Arc<Compiled>, depth: Depth) -> Standing {
        let roles: Vec<RoleIx> = c
            .indexed_roles()
            .filter(|(_, role)| role.constrained || depth == Depth::CLUSTER)
            .map(|(r, _)| r)
            .collect();
        let mut per_role: Vec<Vec<u64>> = Vec::with_capacity(roles.len());
        for &r in &roles {
            per_role.push(with_capacities(solver, inv, c, r, |caps| {
                let mut level = Vec::with_capacity(inv.scope_count(depth) as usize);
                caps.copy_level(inv, depth, &mut level);
                level
            }));
        }
        let needs: smallvec::SmallVec<[u64; 4]> =
            roles.iter().map(|&r| u64::from(c.role(r).min)).collect();
        let mut best: Option<(u64, u64, u32)> = None;
        let mut consider = |index: usize, got: u64, spare: u64| {
            if best.is_none_or(|(bg, bs, _)| {
                got > bg || (got == bg && policy_prefers(c.policy, spare, bs))
            }) {
                best = Some((got, spare, index as u32));
            }
        };
        if let ([caps], &[need]) = (&per_role[..], &needs[..]) {
            // One role (the usual case): one pass over its capacities.
            for (index, &cap) in caps.iter().enumerate() {
                consider(index, cap.min(need), cap.saturating_sub(need));
            }
        } else {
            for index in 0..inv.scope_count(depth) as usize {
                let (mut got, mut spare) = (0u64, 0u64);
                for (caps, &need) in per_role.iter().zip(&needs) {
                    let cap = caps[index];
                    got += cap.min(need);
                    spare += cap.saturating_sub(need);
                }
                consider(index, got, spare);
            }
        }
        Standing {
            roles,
            caps: per_role,
            best: best.map(|(_, _, index)| Scope::new(depth, index)),
        }
    }
}

/// What the best domain lacks: per counted role its fit, the resources short on their
/// own, and the reason.
fn domain_report(
    inv: &Inventory,
    c: &Compiled,
    caps: &mut Capacities,
    standing: &Standing,
    scope: Scope,
    search: Search,
) -> DomainReport {
    let (start, end) = scope.range(inv);
    let mut fits = Vec::new();
    let mut short_of: Vec<String> = Vec::new();
    let mut any_short_role = false;
    let mut sliced_short = false;
    for (&r, role_caps) in standing.roles.iter().zip(&standing.caps) {
        let role = c.role(r);
        let cap = role_caps[scope.ix()];
        fits.push(RoleFit {
            role: c.gang.roles[r.ix()].name.clone(),
            fits: cap,
            needed: role.min,
        });
        if cap >= u64::from(role.min) {
            continue;
        }
        any_short_role = true;
        for m in &role.missing {
            if !short_of.contains(m) {
                short_of.push(m.clone());
            }
        }
        // Sliced members need nodes labelled down to the innermost slice level.
        let min_leaf = Grain::of(c, role).min_leaf;
        let usable = |n: NodeIx| {
            role.eligible.get(n.ix()) && inv.schedulable.get(n.ix()) && inv.reaches(n, min_leaf)
        };
        // Each resource on its own: would the role fit if only that resource counted?
        for &(res, q) in &role.req {
            let alone: u64 = (start..end)
                .map(NodeIx)
                .filter(|&n| usable(n))
                .map(|n| (inv.free[res as usize][n.ix()] / q).min(u64::from(role.cap_on(n))))
                .sum();
            if alone < u64::from(role.min) {
                let name = &inv.resources[res as usize];
                if !short_of.contains(name) {
                    short_of.push(name.clone());
                }
            }
        }
        // Every member is a pod: a role that would fit but for the nodes' pod limits is
        // short of pods (each resource alone, above, cannot see it: nodes without a
        // limit count as endless room).
        if let Some(p) = inv.resources.get_index_of(PODS) {
            // Members the domain's nodes hold one by one, with and without the pods.
            let held = |with_pods: bool| {
                (start..end)
                    .map(NodeIx)
                    .filter(|&n| usable(n))
                    .map(|n| {
                        role.req
                            .iter()
                            .filter(|&&(res, _)| with_pods || res as usize != p)
                            .map(|&(res, q)| inv.free[res as usize][n.ix()] / q)
                            .min()
                            .unwrap_or(u64::MAX)
                            .min(u64::from(role.cap_on(n)))
                    })
                    .fold(0u64, u64::saturating_add)
            };
            let min = u64::from(role.min);
            if held(true) < min && held(false) >= min && !short_of.iter().any(|s| s == PODS) {
                short_of.push(PODS.to_owned());
            }
        }
        // Room for the members on nodes that can hold a slice, ignoring the slice sizes?
        let unsliced = Grain {
            min_leaf,
            ..Grain::NONE
        };
        if role.constrained
            && c.has_slices()
            && rollup(inv, role, unsliced, scope, None, caps) >= u64::from(role.min)
        {
            sliced_short = true;
        }
    }
    let reason = if !short_of.is_empty() {
        Shortfall::Resources
    } else if sliced_short {
        Shortfall::Slices
    } else if !any_short_role {
        match search {
            Search::Exhausted => Shortfall::Undecided,
            Search::Complete => Shortfall::RolesTogether,
        }
    } else {
        Shortfall::Fragmented
    };
    DomainReport {
        level: inv.topology.key_of(scope.depth.ix()).map(str::to_owned),
        domain: scope_path(inv, scope),
        fits,
        short_of,
        reason,
    }
}

/// Per slice level, inside the best domain `scope`: the largest slice domain's room for
/// the first constrained role, and how many whole slices fit in all.
fn slice_reports(
    inv: &Inventory,
    c: &Compiled,
    scope: Scope,
    caps: &mut Capacities,
) -> Vec<SliceReport> {
    let mut slices = Vec::new();
    let Some(first) = c.roles.iter().position(|r| r.constrained) else {
        return slices;
    };
    let role = &c.roles[first];
    let (start, end) = scope.range(inv);
    for &(d, size) in &c.slices {
        let d = Depth(d);
        rollup(inv, role, Grain::NONE, Scope::CLUSTER, None, caps);
        let mut largest = (0u64, None);
        let inside: Vec<Scope> = inv
            .scopes_at(d)
            .filter(|sc| {
                let (a, b) = sc.range(inv);
                a >= start && b <= end
            })
            .collect();
        for &sc in &inside {
            let cap = caps.of(inv, sc);
            if cap > largest.0 || largest.1.is_none() {
                largest = (cap, Some(sc));
            }
        }
        rollup(inv, role, Grain::of(c, role), Scope::CLUSTER, None, caps);
        let available: u64 = inside
            .iter()
            .map(|&sc| caps.of(inv, sc) / u64::from(size))
            .sum();
        slices.push(SliceReport {
            level: inv.topology.key_of(d.ix()).unwrap_or_default().to_owned(),
            size,
            role: c.gang.roles[first].name.clone(),
            largest: largest.0,
            largest_domain: largest.1.map(|sc| scope_path(inv, sc)).unwrap_or_default(),
            available,
            needed: u64::from(role.min) / u64::from(size),
        });
    }
    slices
}

/// The tightest level above the required one at which the gang fits now, and how many
/// domains of the required level (or nodes outside any) it would then span.
fn relaxation(solver: &mut Solver, inv: &Inventory, c: &Arc<Compiled>) -> Option<Relaxation> {
    let r = c.required.filter(|_| c.any_constrained())?;
    let l = inv.label_depth();
    // The same budget as the query; a relaxation found only after the budget ran out
    // would contradict an undecided answer, so none is reported then.
    let mut budget = Budget::of(solver.limits());
    solver.s.search.new_query();
    for d in (0..r).rev().map(Depth) {
        let found = match solver.place_at(inv, c, d, Aim::Fit, &mut budget) {
            Verdict::Placed(found) if !budget.ran_out() => found,
            Verdict::NoFit => continue,
            Verdict::Placed(_) | Verdict::Exhausted => return None,
        };
        let (mut spans, mut outside): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for m in solver
            .s
            .attempt
            .assign
            .iter()
            .filter(|m| c.roles[usize::from(m.0)].constrained)
        {
            match if r > l {
                Some(m.1)
            } else {
                inv.domain_of(m.1, r)
            } {
                Some(dom) => spans.push(dom),
                None => outside.push(m.1),
            }
        }
        for v in [&mut spans, &mut outside] {
            v.sort_unstable();
            v.dedup();
        }
        return Some(Relaxation {
            level: inv.topology.key_of(d.ix()).map(str::to_owned),
            domain: scope_path(inv, found),
            spans: count(spans.len()),
            outside: count(outside.len()),
        });
    }
    None
}

/// For an elastic gang (some role has a `min_count`): each constrained role's minimum
/// lowered to what the best domain holds of it, and where that gang goes now.
fn fewer_members(
    inv: &Inventory,
    c: &Compiled,
    best: &DomainReport,
    limits: Limits,
) -> Option<FewerMembers> {
    if c.gang.roles.iter().all(|r| r.min_count.is_none()) {
        return None;
    }
    let mut gang = c.gang.clone();
    let (mut minimum, mut needed) = (0u64, 0u64);
    for (role, spec) in c.roles.iter().zip(&mut gang.roles) {
        needed += u64::from(role.min);
        if role.constrained {
            let fits = best
                .fits
                .iter()
                .find(|f| f.role == spec.name)
                .map_or(0, |f| f.fits.min(u64::from(role.min)));
            let fits = u32::try_from(fits).ok().filter(|&f| f > 0)?;
            spec.min_count = Some(fits);
        }
        minimum += u64::from(spec.min_count.unwrap_or(spec.count));
    }
    if minimum == needed {
        return None;
    }
    let compiled = inv.compile(&gang).ok()?;
    let placement = inv
        .find_with(&mut Solver::with_limits(limits), &compiled)
        .ok()??;
    Some(FewerMembers {
        level: placement.level().map(str::to_owned),
        domain: placement.domain_path(),
        members: placement.member_count(),
        minimum,
        needed,
    })
}

/// A count of distinct domains or nodes, which are fewer than `u32::MAX`.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `b1/r2` for a domain, the node's name at the node level, empty for the cluster.
fn scope_path(inv: &Inventory, scope: Scope) -> String {
    if inv.is_node_level(scope.depth) {
        inv.names[scope.ix()].clone()
    } else {
        inv.domain_values(scope.depth.ix(), scope.index).join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::diagnosis::{ExclusionReason, Exclusions};
    use crate::{Gang, NodeSpec, Policy, Role, Taint, TaintEffect, Topology, HOSTNAME_LEVEL};

    const GPU: &str = "nvidia.com/gpu";

    /// A node with `free` of `cap` GPUs free, labelled with `labels`.
    fn node(name: &str, labels: &[(&str, &str)], cap: i64, free: i64) -> NodeSpec {
        let mut n = NodeSpec::new(name).capacity(GPU, cap).used(GPU, cap - free);
        for (k, v) in labels {
            n = n.label(*k, *v);
        }
        n
    }

    fn diagnose(inv: &Inventory, gang: &Gang) -> Diagnosis {
        let out = inv.place(gang).unwrap();
        assert_eq!(out.status(), "unschedulable", "{out:?}");
        out.diagnosis().cloned().unwrap()
    }

    fn workers(n: u32) -> Role {
        Role::new("w", n).request(GPU, 1)
    }

    /// At the node level every node is a domain of its own: a node without topology
    /// labels is not "missing a label" there.
    #[test]
    fn node_level_needs_no_labels() {
        let inv = Inventory::builder(Topology::new(["rack", HOSTNAME_LEVEL]).unwrap())
            .node(node("a1", &[("rack", "a")], 2, 2))
            .node(node("x1", &[], 4, 4))
            .build()
            .unwrap();
        // The solver uses the unlabelled node at the node level...
        let four = Gang::new("g").role(workers(4)).required(HOSTNAME_LEVEL);
        let p = inv.place(&four).unwrap().placement().cloned().unwrap();
        assert_eq!(p.node_counts(), [("x1", 4)]);
        // ...so the diagnosis does not exclude it either.
        let d = diagnose(
            &inv,
            &Gang::new("g").role(workers(5)).required(HOSTNAME_LEVEL),
        );
        let r = &d.roles[0];
        assert_eq!((r.excluded.missing_label, r.fitting_nodes), (0, 2), "{d}");
        assert_eq!(d.best.as_ref().unwrap().domain, "x1");
        assert!(!d.to_string().contains("missing label"), "{d}");
        // At the rack level it is excluded, and said so.
        let d = diagnose(&inv, &Gang::new("g").role(workers(3)).required("rack"));
        assert_eq!(d.roles[0].excluded.missing_label, 1, "{d}");
    }

    /// A node without the slice level's label cannot hold sliced members: it is not
    /// "room, but not in whole slices"; the block is short of GPUs.
    #[test]
    fn unlabelled_nodes_are_no_room_for_slices() {
        let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .node(node("d1", &[("block", "b2"), ("rack", "d")], 2, 2))
            .node(node("y1", &[("block", "b2")], 8, 8))
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(workers(4))
            .required("block")
            .slice("rack", 2);
        let d = diagnose(&inv, &gang);
        let best = d.best.as_ref().unwrap();
        assert_eq!(best.reason, Shortfall::Resources, "{d}");
        assert_eq!(best.short_of, [GPU], "{d}");
        // With room on labelled nodes but no whole slice, the reason is the slices.
        let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .node(node("d1", &[("block", "b2"), ("rack", "d")], 2, 1))
            .node(node("e1", &[("block", "b2"), ("rack", "e")], 2, 1))
            .node(node("f1", &[("block", "b2"), ("rack", "f")], 2, 2))
            .build()
            .unwrap();
        let d = diagnose(&inv, &gang);
        assert_eq!(d.best.as_ref().unwrap().reason, Shortfall::Slices, "{d}");
    }

    /// Each excluded node is counted once, under the first reason in the documented
    /// order, even when later reasons also apply; the paragraph names every count.
    #[test]
    fn exclusions_count_the_first_reason_only() {
        let h200 = |name: &str, rack: Option<&str>, free: i64| {
            let mut n = node(name, &[("product", "H200")], 8, free);
            if let Some(r) = rack {
                n = n.label("rack", r);
            }
            n
        };
        let no_schedule = Taint::new("dedicated", "x", TaintEffect::NoSchedule);
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            // Cordoned and wrong product: cordoned.
            .node(h200("n1", Some("a"), 8).label("product", "A100").cordoned())
            // Wrong product and an untolerated taint: selector.
            .node(
                h200("n2", Some("a"), 8)
                    .label("product", "A100")
                    .taint(no_schedule.clone()),
            )
            // Untolerated taint and no rack label: taint.
            .node(h200("n3", None, 8).taint(Taint::new("dedicated", "x", TaintEffect::NoExecute)))
            // No rack label, 3 GPUs free: missing label (still counted cluster-wide).
            .node(h200("n4", None, 3))
            // Eligible, in rack b, nothing free: too small.
            .node(h200("n5", Some("b"), 0))
            .node(h200("n6", Some("b"), 4))
            // A soft taint never excludes.
            .node(h200("n7", Some("a"), 2).taint(Taint::new(
                "soft",
                "",
                TaintEffect::PreferNoSchedule,
            )))
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(
                Role::new("worker", 10)
                    .request(GPU, 1)
                    .selector("product", "H200"),
            )
            .required("rack");
        let d = diagnose(&inv, &gang);
        let r = &d.roles[0];
        let one_each = Exclusions {
            cordoned: 1,
            selector: 1,
            taint: 1,
            missing_label: 1,
            too_small: 1,
        };
        assert_eq!(r.excluded, one_each);
        assert_eq!(r.fitting_nodes, 2); // n6, n7
        assert_eq!(r.cluster_fit, 3 + 4 + 2); // n4 counts when topology is ignored
        let best = d.best.as_ref().unwrap();
        assert_eq!((best.domain.as_str(), best.fits[0].fits), ("b", 4)); // b: 4, a: 2
        assert_eq!(best.short_of, [GPU]);
        assert_eq!(best.reason, Shortfall::Resources);
        assert_eq!(d.relaxation, None); // 9 < 10 even without topology
        assert_eq!(
            d.to_string(),
            "gang g (10 worker) does not fit in one rack (rack). \
             Best rack: rack b fits 4 of 10 worker (short of nvidia.com/gpu). \
             Cluster-wide, ignoring topology, 9 worker fit. \
             Nodes excluded for worker: 1 cordoned, 1 not matching the selector on product, \
             1 with untolerated taint dedicated, 1 missing label rack, 1 short of nvidia.com/gpu now."
        );
        // The causes name what each reason is about and add up to the counts.
        let causes: Vec<(ExclusionReason, &str, u32)> = r
            .causes
            .iter()
            .map(|c| (c.reason, c.key.as_str(), c.nodes))
            .collect();
        assert_eq!(
            causes,
            [
                (ExclusionReason::Cordoned, "", 1),
                (ExclusionReason::Selector, "product", 1),
                (ExclusionReason::Taint, "dedicated", 1),
                (ExclusionReason::MissingLabel, "rack", 1),
                (ExclusionReason::Full, GPU, 1),
            ]
        );
    }

    /// Relaxation reports the tightest coarser level that fits, not the top one, and
    /// how many racks the gang would then span.
    #[test]
    fn relaxation_is_the_tightest_coarser_level() {
        let at = |name: &str, zone: &str, block: &str, rack: &str, free: i64| {
            node(
                name,
                &[("zone", zone), ("block", block), ("rack", rack)],
                8,
                free,
            )
        };
        let inv = Inventory::builder(Topology::new(["zone", "block", "rack"]).unwrap())
            .node(at("a1", "z1", "b1", "a", 2))
            .node(at("b1", "z1", "b1", "b", 2))
            .node(at("c1", "z1", "b2", "c", 3))
            .build()
            .unwrap();
        // Four: no rack has 4; block z1/b1 has exactly 4 (zone z1 would too).
        let d = diagnose(&inv, &Gang::new("g").role(workers(4)).required("rack"));
        let best = d.best.as_ref().unwrap();
        assert_eq!((best.domain.as_str(), best.fits[0].fits), ("z1/b2/c", 3));
        let to_block = Relaxation {
            level: Some("block".into()),
            domain: "z1/b1".into(),
            spans: 2,
            outside: 0,
        };
        assert_eq!(d.relaxation, Some(to_block));
        let text = d.to_string();
        assert!(
            text.contains("Relaxing to block: block z1/b1 fits all 4 now (across 2 racks)."),
            "{text}"
        );
        // Six: no block has 6 (4 and 3), the zone has 7; 6 members need all 3 racks.
        let d = diagnose(&inv, &Gang::new("g").role(workers(6)).required("rack"));
        let r = d.relaxation.unwrap();
        assert_eq!(
            (r.level.as_deref(), r.domain.as_str()),
            (Some("zone"), "z1")
        );
        assert_eq!((r.spans, r.outside), (3, 0));
        // Relaxing from block: the zone, spanning both blocks.
        let d = diagnose(&inv, &Gang::new("g").role(workers(6)).required("block"));
        let r = d.relaxation.unwrap();
        assert_eq!((r.level.as_deref(), r.spans), (Some("zone"), 2));
    }

    /// At the node level the best "domain" is a node (ties to the first in order) and
    /// relaxing counts the nodes spanned.
    #[test]
    fn node_level_best_and_relaxation() {
        let inv = Inventory::builder(Topology::new(["rack", HOSTNAME_LEVEL]).unwrap())
            .node(node("a2", &[("rack", "a")], 2, 2))
            .node(node("a1", &[("rack", "a")], 2, 2))
            .build()
            .unwrap();
        let d = diagnose(
            &inv,
            &Gang::new("g").role(workers(3)).required(HOSTNAME_LEVEL),
        );
        assert_eq!(d.level.as_deref(), Some(HOSTNAME_LEVEL));
        let best = d.best.as_ref().unwrap();
        assert_eq!(best.level.as_deref(), Some(HOSTNAME_LEVEL));
        assert_eq!((best.domain.as_str(), best.fits[0].fits), ("a1", 2));
        let r = d.relaxation.as_ref().unwrap();
        assert_eq!((r.level.as_deref(), r.domain.as_str()), (Some("rack"), "a"));
        assert_eq!((r.spans, r.outside), (2, 0));
        let text = d.to_string();
        assert!(
            text.contains("does not fit in one node (kubernetes.io/hostname)."),
            "{text}"
        );
        assert!(text.contains("Best node: node a1 fits 2 of 3 w"), "{text}");
        assert!(
            text.contains("Relaxing to rack: rack a fits all 3 now (across 2 nodes)."),
            "{text}"
        );
    }

    /// Two roles that each fit a rack alone but not together: the best rack is the
    /// one taking the most members, the reason is RolesTogether, and only the
    /// cluster as a whole fits them.
    #[test]
    fn roles_fit_alone_but_not_together() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(node("a1", &[("rack", "a")], 8, 8))
            .node(node("b1", &[("rack", "b")], 4, 4))
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("big", 1).request(GPU, 6))
            .role(Role::new("small", 1).request(GPU, 4))
            .required("rack");
        let d = diagnose(&inv, &gang);
        assert!(!d.search_exhausted);
        let best = d.best.as_ref().unwrap();
        assert_eq!(best.domain, "a"); // a: 1 + 1 members, b: 0 + 1
        let fits: Vec<(&str, u64, u32)> = best
            .fits
            .iter()
            .map(|f| (f.role.as_str(), f.fits, f.needed))
            .collect();
        assert_eq!(fits, [("big", 1, 1), ("small", 2, 1)]);
        assert!(best.short_of.is_empty());
        assert_eq!(best.reason, Shortfall::RolesTogether);
        let anywhere = Relaxation {
            level: None,
            domain: String::new(),
            spans: 2,
            outside: 0,
        };
        assert_eq!(d.relaxation, Some(anywhere));
        let text = d.to_string();
        assert!(
            text.contains(
                "Best rack: rack a fits 1 of 1 big, 1 of 1 small \
                 (each role fits alone, but not all roles together)."
            ),
            "{text}"
        );
        assert!(
            text.contains("Without the topology constraint all 2 fit now, across 2 racks."),
            "{text}"
        );
    }

    /// Members taken tie: the policy decides between the domains by spare room.
    #[test]
    fn best_domain_ties_go_by_policy() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(node("a1", &[("rack", "a")], 2, 2).capacity("cpu", 10))
            .node(node("b1", &[("rack", "b")], 2, 2).capacity("cpu", 1))
            .build()
            .unwrap();
        // Both racks take 2 of 3 workers and the 1 ps; rack a has 9 spare ps slots.
        let gang = |policy| {
            Gang::new("g")
                .role(workers(3))
                .role(Role::new("ps", 1).request("cpu", 1))
                .required("rack")
                .policy(policy)
        };
        let best = |policy| diagnose(&inv, &gang(policy)).best.unwrap().domain;
        assert_eq!(best(Policy::BestFit), "b");
        assert_eq!(best(Policy::Balanced), "b");
        assert_eq!(best(Policy::MostFree), "a");
    }

    /// With slices, the best domain is the one holding the most members in whole
    /// slices, not the one with the most raw room.
    #[test]
    fn best_domain_counts_whole_slices() {
        let at = |name: &str, block: &str, rack: &str, free: i64| {
            node(name, &[("block", block), ("rack", rack)], 8, free)
        };
        let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            // Block b1: 3 free, one per rack: no slice of 2 anywhere.
            .nodes([
                at("a1", "b1", "a", 1),
                at("b1", "b1", "b", 1),
                at("c1", "b1", "c", 1),
            ])
            // Block b2: 2 free in one rack: one slice.
            .node(at("d1", "b2", "d", 2))
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(workers(4))
            .required("block")
            .slice("rack", 2);
        let d = diagnose(&inv, &gang);
        let best = d.best.as_ref().unwrap();
        assert_eq!((best.domain.as_str(), best.fits[0].fits), ("b2", 2));
        assert_eq!(best.reason, Shortfall::Resources); // b2 has only 2 GPUs
        let want = SliceReport {
            level: "rack".into(),
            size: 2,
            role: "w".into(),
            largest: 2,
            largest_domain: "b2/d".into(),
            available: 1,
            needed: 2,
        };
        assert_eq!(d.slices, [want]);
        assert_eq!(d.relaxation, None); // the cluster holds 1 slice of 2 per rack
        assert!(d.to_string().contains("1 of 2 slices fit."), "{d}");
    }

    /// An unconstrained gang is diagnosed against the whole cluster; nodes without
    /// topology labels are not excluded for it.
    #[test]
    fn unconstrained_gang_is_diagnosed_cluster_wide() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(node("a1", &[("rack", "a")], 2, 2))
            .node(node("x1", &[], 2, 2))
            .build()
            .unwrap();
        let d = diagnose(&inv, &Gang::new("g").role(workers(5)));
        assert_eq!(d.level, None);
        let best = d.best.as_ref().unwrap();
        assert_eq!((best.level.as_deref(), best.domain.as_str()), (None, ""));
        assert_eq!(best.fits[0].fits, 4);
        assert_eq!(d.roles[0].excluded, Exclusions::default());
        assert_eq!(d.roles[0].fitting_nodes, 2);
        assert_eq!(d.relaxation, None);
        assert_eq!(
            d.to_string(),
            "gang g (5 w) does not fit in the cluster. \
             Cluster-wide 4 of 5 w fit (short of nvidia.com/gpu)."
        );
    }

    /// A role without requests fits without bound: "any number of"; it is not in the
    /// best domain's fits (unconstrained) but counts in "all N".
    #[test]
    fn unbounded_unconstrained_role_in_the_paragraph() {
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .node(node("a1", &[("rack", "a")], 2, 2))
            .node(node("b1", &[("rack", "b")], 2, 2))
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("launcher", 1).unconstrained())
            .role(workers(3))
            .required("rack");
        let d = diagnose(&inv, &gang);
        assert!(d.roles[0].cluster_fit >= u64::from(u32::MAX));
        assert_eq!(d.roles[1].cluster_fit, 4);
        let best = d.best.as_ref().unwrap();
        assert_eq!(best.domain, "a"); // a tie with b: the first rack
        assert_eq!(best.fits.len(), 1);
        assert_eq!((best.fits[0].role.as_str(), best.fits[0].fits), ("w", 2));
        assert_eq!(
            d.to_string(),
            "gang g (1 launcher, 3 w) does not fit in one rack (rack). \
             Best rack: rack a fits 2 of 3 w (short of nvidia.com/gpu). \
             Cluster-wide, ignoring topology, any number of launcher, 4 w fit. \
             Without the topology constraint all 4 fit now, across 2 racks."
        );
    }

    #[test]
    fn role_fit_never_shows_more_than_needed() {
        let fit = |fits, needed| RoleFit {
            role: "w".into(),
            fits,
            needed,
        };
        assert_eq!(fit(7, 4).to_string(), "4 of 4 w");
        assert_eq!(fit(0, 3).to_string(), "0 of 3 w");
        assert_eq!(fit(u64::MAX, 2).to_string(), "2 of 2 w");
    }
}
