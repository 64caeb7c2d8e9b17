//! The diagnosis's nodes by cause against a per-node oracle on small random clusters:
//! every node is classified by the first reason that applies (cordoned, the selector,
//! an untolerated taint, a missing rack label, too small even when empty, short now),
//! with what the reason is about, written here from the node descriptions alone; the
//! causes must equal it, add up to the counts of `Exclusions`, and be the same from
//! `Inventory::role_reports`, `Inventory::explain` and the diagnosis.

use std::collections::BTreeMap;

use gang_core::diagnosis::{ExclusionReason, Exclusions};
use gang_core::{
    Gang, Inventory, NodeSpec, Outcome, Role, Taint, TaintEffect, Toleration, Topology,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct N {
    rack: Option<u8>,
    product: u8,
    taint: Option<u8>,
    schedulable: bool,
    /// (capacity, used) of `cpu`, then `gpu` (the inventory's name order).
    res: [(u8, u8); 2],
}

#[derive(Debug, Clone)]
struct R {
    count: u32,
    req: [u8; 2],
    selector: bool,
    tolerates: bool,
}

fn node() -> impl Strategy<Value = N> {
    (
        prop::option::weighted(0.8, 0u8..2),
        0u8..2,
        prop::option::weighted(0.3, 0u8..2),
        prop::bool::weighted(0.85),
        [(0u8..4, 0u8..4), (0u8..5, 0u8..5)],
    )
        .prop_map(|(rack, product, taint, schedulable, res)| N {
            rack,
            product,
            taint,
            schedulable,
            res,
        })
}

fn role() -> impl Strategy<Value = R> {
    (1u32..12, [0u8..3, 1u8..3], any::<bool>(), any::<bool>()).prop_map(
        |(count, req, selector, tolerates)| R {
            count,
            req,
            selector,
            tolerates,
        },
    )
}

const RES: [&str; 2] = ["cpu", "gpu"];

fn build(nodes: &[N], r: &R) -> (Inventory, Gang) {
    let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes(nodes.iter().enumerate().map(|(i, n)| {
            let mut s = NodeSpec::new(format!("n{i}")).label("product", format!("p{}", n.product));
            if let Some(rack) = n.rack {
                s = s.label("rack", format!("r{rack}"));
            }
            if let Some(t) = n.taint {
                s = s.taint(Taint::new(format!("t{t}"), "x", TaintEffect::NoSchedule));
            }
            if !n.schedulable {
                s = s.cordoned();
            }
            for (name, (cap, used)) in RES.iter().zip(n.res) {
                s = s
                    .capacity(*name, i64::from(cap))
                    .used(*name, i64::from(used.min(cap)));
            }
            s
        }))
        .build()
        .unwrap();
    let mut role = Role::new("w", r.count);
    for (name, q) in RES.iter().zip(r.req) {
        if q > 0 {
            role = role.request(*name, i64::from(q));
        }
    }
    if r.selector {
        role = role.selector("product", "p0");
    }
    if r.tolerates {
        role = role.toleration(Toleration::equal("t0", "x"));
    }
    (inv, Gang::new("g").role(role).required("rack"))
}

/// Each node under its first reason, with what it is about; and the nodes that fit.
fn oracle(nodes: &[N], r: &R) -> (BTreeMap<(ExclusionReason, String), u32>, u32) {
    let mut out = BTreeMap::new();
    let mut fitting = 0;
    for n in nodes {
        let cause = if !n.schedulable {
            Some((ExclusionReason::Cordoned, String::new()))
        } else if r.selector && n.product != 0 {
            Some((ExclusionReason::Selector, "product".to_owned()))
        } else if n.taint.is_some_and(|t| !(t == 0 && r.tolerates)) {
            Some((ExclusionReason::Taint, format!("t{}", n.taint.unwrap())))
        } else if n.rack.is_none() {
            Some((ExclusionReason::MissingLabel, "rack".to_owned()))
        } else {
            let asked = || RES.iter().zip(n.res).zip(r.req).filter(|(_, q)| *q > 0);
            let never = asked().find(|((_, (cap, _)), q)| cap < q);
            let short = asked().find(|((_, (cap, used)), q)| cap - used.min(cap) < *q);
            match (never, short) {
                (Some(((name, _), _)), _) => Some((ExclusionReason::TooSmall, (*name).to_owned())),
                (None, Some(((name, _), _))) => Some((ExclusionReason::Full, (*name).to_owned())),
                (None, None) => None,
            }
        };
        match cause {
            Some(c) => *out.entry(c).or_default() += 1,
            None => fitting += 1,
        }
    }
    (out, fitting)
}

fn by_reason(e: &Exclusions, reason: ExclusionReason) -> u32 {
    match reason {
        ExclusionReason::Cordoned => e.cordoned,
        ExclusionReason::Selector => e.selector,
        ExclusionReason::Taint => e.taint,
        ExclusionReason::MissingLabel => e.missing_label,
        _ => e.too_small,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
    ))]

    #[test]
    fn causes_match_the_per_node_oracle(nodes in prop::collection::vec(node(), 1..10), r in role()) {
        let (inv, gang) = build(&nodes, &r);
        let (want, fitting) = oracle(&nodes, &r);
        let reports = inv.role_reports(&gang).unwrap();
        let report = &reports[0];
        let got: BTreeMap<(ExclusionReason, String), u32> = report
            .causes
            .iter()
            .map(|c| ((c.reason, c.key.clone()), c.nodes))
            .collect();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(report.causes.len(), got.len(), "one entry per (reason, key)");
        prop_assert_eq!(report.fitting_nodes, fitting);
        // The causes add up to the counts, reason by reason.
        for reason in [
            ExclusionReason::Cordoned,
            ExclusionReason::Selector,
            ExclusionReason::Taint,
            ExclusionReason::MissingLabel,
        ] {
            let sum: u32 = got.iter().filter(|((r, _), _)| *r == reason).map(|(_, n)| n).sum();
            prop_assert_eq!(sum, by_reason(&report.excluded, reason));
        }
        let sized: u32 = got
            .iter()
            .filter(|((r, _), _)| matches!(r, ExclusionReason::TooSmall | ExclusionReason::Full))
            .map(|(_, n)| n)
            .sum();
        prop_assert_eq!(sized, report.excluded.too_small);
        // The diagnosis and the explanation report the same.
        let e = inv.explain(&gang).unwrap();
        prop_assert_eq!(&e.roles, &reports);
        if let Outcome::Unschedulable(d) = inv.place(&gang).unwrap() {
            prop_assert_eq!(&d.roles, &reports);
        }
        // Each level row says "fits" exactly when the gang fits with that level required.
        for row in &e.levels {
            let asked = gang.clone().required(row.level.clone());
            let placed = inv.place(&asked).map(|o| o.is_placed()).unwrap_or(false);
            prop_assert_eq!(row.status.as_str() == "fits", placed, "{:?}", row);
        }
    }
}

/// A change to one node of the cluster: cordoned or not, or a resource's capacity or
/// use set.
#[derive(Debug, Clone)]
enum Change {
    Schedulable(usize, bool),
    Capacity(usize, usize, u8),
    Used(usize, usize, u8),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..10, any::<bool>()).prop_map(|(n, s)| Change::Schedulable(n, s)),
        (0usize..10, 0usize..2, 0u8..5).prop_map(|(n, r, v)| Change::Capacity(n, r, v)),
        (0usize..10, 0usize..2, 0u8..5).prop_map(|(n, r, v)| Change::Used(n, r, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
    ))]

    /// The causes a kept solver reports follow the inventory through its changes (the
    /// book of causes is kept in the solver's cache and updated from the journal): after
    /// every change, the diagnosis from the kept solver equals the per-node oracle on
    /// the changed nodes.
    #[test]
    fn a_kept_solver_follows_changes(
        mut nodes in prop::collection::vec(node(), 1..10),
        r in role(),
        changes in prop::collection::vec(change(), 1..12),
    ) {
        let (mut inv, gang) = build(&nodes, &r);
        // As built: no more used than the capacity.
        for n in &mut nodes {
            for (cap, used) in &mut n.res {
                *used = (*used).min(*cap);
            }
        }
        let compiled = inv.compile(&gang).unwrap();
        let mut solver = gang_core::Solver::new();
        let _ = inv.place_with(&mut solver, &compiled).unwrap();
        for (step, ch) in changes.into_iter().enumerate() {
            let name = |n: usize| format!("n{n}");
            match ch {
                Change::Schedulable(n, s) if n < nodes.len() => {
                    if s { inv.uncordon(&name(n)).unwrap() } else { inv.cordon(&name(n)).unwrap() }
                    nodes[n].schedulable = s;
                }
                Change::Capacity(n, res, v) if n < nodes.len() => {
                    inv.set_capacity(&name(n), RES[res], i64::from(v)).unwrap();
                    nodes[n].res[res].0 = v;
                }
                Change::Used(n, res, v) if n < nodes.len() => {
                    inv.set_used(&name(n), RES[res], i64::from(v)).unwrap();
                    nodes[n].res[res].1 = v;
                }
                _ => continue,
            }
            let Outcome::Unschedulable(d) = inv.place_with(&mut solver, &compiled).unwrap() else {
                continue;
            };
            let (want, fitting) = oracle(&nodes, &r);
            let got: BTreeMap<(ExclusionReason, String), u32> = d.roles[0]
                .causes
                .iter()
                .map(|c| ((c.reason, c.key.clone()), c.nodes))
                .collect();
            prop_assert_eq!(&got, &want, "step {}", step);
            prop_assert_eq!(d.roles[0].fitting_nodes, fitting, "step {}", step);
            // And as a fresh solver would say it.
            let fresh = inv.place(&gang).unwrap();
            prop_assert_eq!(Some(&d.roles), fresh.diagnosis().map(|f| &f.roles), "step {}", step);
        }
    }
}
