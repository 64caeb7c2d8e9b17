//! Random lifecycle operation sequences, shared by the property test and the fuzz
//! target. After every step: `validate()`; free capacity equals capacity minus external
//! use minus what live reservations hold (through the public API); no reservation is
//! partial; replacements stay inside their domain; reserve then release is the identity.

#![allow(dead_code)]

macro_rules! ensure {
    ($c:expr) => { if !$c { return Err(format!("check failed: {}", stringify!($c))); } };
    ($c:expr, $($f:tt)+) => { if !$c { return Err(format!($($f)+)); } };
}
macro_rules! ensure_eq {
    ($a:expr, $b:expr) => { ensure_eq!($a, $b, "") };
    ($a:expr, $b:expr, $($f:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b { return Err(format!("{:?} != {:?}: {}", a, b, format!($($f)+))); }
    }};
}

use gang_core::lifecycle::{AdmitMode, Replacement, Spread};
use gang_core::{Gang, Inventory, NodeSpec, Outcome, ReservationId, Role, Topology};

pub const RES: [&str; 2] = ["gpu", "cpu"];

#[derive(Debug, Clone)]
pub enum Op {
    Reserve(usize),
    Release(usize),
    Add(u8, u8, u8),
    Remove(usize),
    Fail(usize),
    Cordon(usize),
    Uncordon(usize),
    Capacity(usize, usize, u8),
    Used(usize, usize, u8),
    Replace(usize),
    Admit(Vec<usize>, bool),
    Spread(usize, u32),
}

fn gangs() -> Vec<Gang> {
    let w = |n: u32| Role::new("w", n).request("gpu", 1).request("cpu", 1);
    vec![
        Gang::new("rack2").role(w(2)).required("rack"),
        Gang::new("block4")
            .role(w(4))
            .required("block")
            .preferred("rack"),
        Gang::new("sliced")
            .role(w(4))
            .required("block")
            .slice("rack", 2),
        Gang::new("elastic")
            .role(w(5).min_count(2))
            .required("rack"),
        Gang::new("launcher")
            .role(Role::new("l", 1).request("cpu", 2).unconstrained())
            .role(w(2).max_per_node(1))
            .required("rack"),
        Gang::new("anywhere").role(w(3)),
    ]
}

fn node(i: usize, block: u8, rack: u8, gpus: u8) -> NodeSpec {
    NodeSpec::new(format!("n{i}"))
        .label("block", format!("b{block}"))
        .label("rack", format!("r{rack}"))
        .capacity("gpu", i64::from(gpus))
        .capacity("cpu", 8)
}

fn free_map(inv: &Inventory) -> Vec<(String, u64, u64)> {
    inv.node_names()
        .map(|n| {
            (
                n.to_owned(),
                inv.free(n, RES[0]).map_or(0, |q| q.millis()),
                inv.free(n, RES[1]).map_or(0, |q| q.millis()),
            )
        })
        .collect()
}

/// Free = capacity − used − held by reservations, through the public API only.
fn check_accounting(inv: &Inventory) -> Result<(), String> {
    inv.validate().map_err(|e| e.to_string())?;
    for name in inv.node_names() {
        let spec = inv.node_spec(name).unwrap();
        for res in RES {
            let amount = |mut m: Box<
                dyn Iterator<Item = (&str, &gang_core::request::QuantitySpec)> + '_,
            >| {
                m.find(|(r, _)| *r == res)
                    .map_or(0, |(_, a)| a.resolve("x").unwrap().millis())
            };
            let held: u64 = inv
                .reservations()
                .flat_map(|r| r.usage(inv))
                .filter(|(n, r, _)| n == name && r == res)
                .map(|u| u.2.millis())
                .sum();
            let want = amount(Box::new(spec.get_capacity()))
                .saturating_sub(amount(Box::new(spec.get_used())))
                .saturating_sub(held);
            let got = inv.free(name, res).map_or(0, |q| q.millis());
            ensure_eq!(got, want, "free {} on {}", res, name);
        }
    }
    Ok(())
}

/// Constrained members of a reservation with a required level share its domain there.
fn check_inside(inv: &Inventory, id: ReservationId) -> Result<(), String> {
    let r = inv.reservation(id).unwrap();
    let Some(req) = r.gang().get_topology().required.clone() else {
        return Ok(());
    };
    let want = r.domain().iter().take_while(|(k, _)| k != &req).count() + 1;
    let domain: Vec<&str> = r
        .domain()
        .iter()
        .take(want)
        .map(|(_, v)| v.as_str())
        .collect();
    for a in r.assignments(inv) {
        let role = r
            .gang()
            .get_roles()
            .iter()
            .find(|x| x.get_name() == a.role)
            .unwrap();
        if !role.is_constrained() {
            continue;
        }
        let spec = inv.node_spec(&a.node).unwrap();
        let path: Vec<&str> = ["block", "rack"]
            .iter()
            .take(want)
            .filter_map(|k| spec.get_label(k))
            .collect();
        ensure_eq!(&path, &domain, "member on {} outside {:?}", a.node, domain);
    }
    Ok(())
}

/// The one error a valid gang may meet here: `max_per_node` against racks too narrow
/// for it, which is contradictory for this inventory. Treated as "nothing happens".
fn allowed<T: Default>(r: Result<T, gang_core::Error>) -> Result<T, String> {
    match r {
        Ok(v) => Ok(v),
        Err(e) if e.kind() == gang_core::ErrorKind::Contradictory => Ok(T::default()),
        Err(e) => Err(format!("unexpected error: {e}")),
    }
}

pub fn run(nodes: Vec<(u8, u8, u8)>, ops: Vec<Op>) -> Result<(), String> {
    let specs = nodes
        .iter()
        .enumerate()
        .map(|(i, &(b, r, g))| node(i, b, r, g));
    let mut inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes(specs)
        .build()
        .unwrap();
    let gangs = gangs();
    // A long-lived solver with gangs compiled once: its per-shape cache follows the
    // inventory's changes and must always agree with a fresh solver.
    let mut warm = gang_core::Solver::new();
    let compiled: Vec<Option<gang_core::CompiledGang>> =
        gangs.iter().map(|g| inv.compile(g).ok()).collect();
    let mut next_node = nodes.len();
    let mut ids: Vec<ReservationId> = Vec::new();
    let pick = |inv: &Inventory, i: usize| -> Option<String> {
        let names: Vec<&str> = inv.node_names().collect();
        (!names.is_empty()).then(|| names[i % names.len()].to_owned())
    };
    for op in ops {
        match op {
            Op::Reserve(g) => {
                if let Some(Outcome::Placed(p)) = allowed(inv.place(&gangs[g]).map(Some))? {
                    p.validate(&inv).map_err(|e| e.to_string())?;
                    // Reserve then release is the identity.
                    let before = free_map(&inv);
                    let mut trial = inv.clone();
                    let id = trial.reserve(&p).unwrap();
                    trial.release(id).unwrap();
                    ensure_eq!(free_map(&trial), before);
                    let id = inv.reserve(&p).unwrap();
                    check_inside(&inv, id)?;
                    ids.push(id);
                }
            }
            Op::Release(i) => {
                if !ids.is_empty() {
                    let id = ids.remove(i % ids.len());
                    inv.release(id).unwrap();
                    ensure!(inv.release(id).is_err());
                }
            }
            Op::Add(b, r, g) => {
                inv.add_node(node(next_node, b, r, g)).unwrap();
                next_node += 1;
            }
            Op::Remove(i) => {
                if let Some(n) = pick(&inv, i) {
                    for l in inv.remove_node(&n).unwrap() {
                        ensure!(ids.contains(&l.reservation));
                        ensure_eq!(l.node, n.clone());
                    }
                }
            }
            Op::Fail(i) => {
                if let Some(n) = pick(&inv, i) {
                    inv.fail_node(&n).unwrap();
                }
            }
            Op::Cordon(i) => {
                if let Some(n) = pick(&inv, i) {
                    inv.cordon(&n).unwrap();
                }
            }
            Op::Uncordon(i) => {
                if let Some(n) = pick(&inv, i) {
                    inv.uncordon(&n).unwrap();
                }
            }
            Op::Capacity(i, r, a) => {
                if let Some(n) = pick(&inv, i) {
                    inv.set_capacity(&n, RES[r], i64::from(a)).unwrap();
                }
            }
            Op::Used(i, r, a) => {
                if let Some(n) = pick(&inv, i) {
                    inv.set_used(&n, RES[r], i64::from(a)).unwrap();
                }
            }
            Op::Replace(i) => {
                if !ids.is_empty() {
                    let id = ids[i % ids.len()];
                    let before = free_map(&inv);
                    match inv.replace(id).unwrap() {
                        Replacement::Placed { .. } => {
                            ensure!(inv.reservation(id).unwrap().lost().is_empty());
                            check_inside(&inv, id)?;
                        }
                        Replacement::Pending(p) => {
                            ensure_eq!(
                                free_map(&inv),
                                before,
                                "pending changed the inventory: {}",
                                p
                            );
                            ensure!(!p.to_string().is_empty());
                        }
                    }
                }
            }
            Op::Admit(q, backfill) => {
                let queue: Vec<Gang> = q.iter().map(|&g| gangs[g].clone()).collect();
                let mode = if backfill {
                    AdmitMode::Backfill
                } else {
                    AdmitMode::Fifo
                };
                for a in allowed(inv.admit(&queue, mode))? {
                    if let gang_core::lifecycle::Admission::Placed { reservation, .. } = a {
                        check_inside(&inv, reservation)?;
                        ids.push(reservation);
                    }
                }
            }
            Op::Spread(g, k) => {
                let level = if gangs[g].get_topology().required.as_deref() == Some("block") {
                    "block"
                } else {
                    "rack"
                };
                let before = free_map(&inv);
                match allowed(
                    inv.spread(&Spread::new(gangs[g].clone(), k, level))
                        .map(Some),
                )? {
                    Some(gang_core::lifecycle::SpreadOutcome::Placed { reservations, .. }) => {
                        ids.extend(reservations)
                    }
                    _ => ensure_eq!(free_map(&inv), before),
                }
            }
        }
        check_accounting(&inv)?;
        for (g, c) in gangs.iter().zip(&compiled) {
            let (Some(c), Ok(fresh)) = (c, inv.place(g)) else {
                continue;
            };
            let cached = inv.place_with(&mut warm, c).map_err(|e| e.to_string())?;
            // Compared as data (as cheap under a fuzzer's sanitizers as it can be).
            ensure_eq!(
                (cached.status(), cached.placement(), cached.diagnosis()),
                (fresh.status(), fresh.placement(), fresh.diagnosis()),
                "cached solver disagrees for {}",
                g.get_name()
            );
            let found = inv.find_with(&mut warm, c).map_err(|e| e.to_string())?;
            ensure_eq!(
                found.as_ref(),
                fresh.placement(),
                "find disagrees with place for {}",
                g.get_name()
            );
        }
    }
    // Releasing everything gives back exactly the capacity minus external use.
    for id in ids {
        inv.release(id).unwrap();
    }
    check_accounting(&inv)?;
    ensure_eq!(inv.reservations().count(), 0);
    Ok(())
}
