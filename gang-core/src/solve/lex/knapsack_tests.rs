//! The narrow (width 2) knapsack against the packed one: the same tables, the same
//! children and units for an assignment, the same members on the same nodes.

use super::super::*;
use crate::compile::CompiledGang;
use crate::solve::{peaks, rollup::rollup};
use crate::testkit::build;
use crate::{Gang, NodeSpec, Role};
use proptest::prelude::*;

const GPU: &str = "gpu";

/// Nodes as `(zone, block, rack, labels kept (0..=3), GPUs, GPUs used)` under two
/// (block, rack) or three (zone, block, rack) label levels.
fn inventory(three: bool, nodes: &[(u8, u8, u8, u8, i64, i64)]) -> crate::Inventory {
    let levels: &[&str] = if three {
        &["zone", "block", "rack"]
    } else {
        &["block", "rack"]
    };
    let specs = nodes
        .iter()
        .enumerate()
        .map(|(i, &(z, b, r, kept, gpus, used))| {
            let values = [format!("z{z}"), format!("b{b}"), format!("r{r}")];
            let values = if three { &values[..] } else { &values[1..] };
            let kept = (kept as usize).min(levels.len());
            levels[..kept]
                .iter()
                .zip(values)
                .fold(NodeSpec::new(format!("n{i}")), |spec, (key, value)| {
                    spec.label(*key, value.as_str())
                })
                .capacity(GPU, gpus)
                .used(GPU, used.min(gpus))
        })
        .collect();
    build(levels, specs)
}

fn capacities(inv: &crate::Inventory, c: &CompiledGang) -> Capacities {
    let mut s = Capacities::default();
    let role = &c.inner.roles[0];
    rollup(
        inv,
        role,
        Grain::of(&c.inner, role),
        Scope::CLUSTER,
        None,
        &mut s,
    );
    peaks::fill(inv, &mut s);
    s
}

/// Every domain of width 2, every amount (in its grain): the narrow and the packed
/// knapsack give the same table (`Table::Steps`), the same children and units
/// (`Table::Assign`, by `knapsack_children`); every domain at every depth: the same
/// vector and the same members on the same nodes (`vector`, then `assign`). Returns
/// how many width-2 knapsacks were compared.
fn compare(inv: &crate::Inventory, gang: &Gang, policy: Policy) -> u64 {
    let c = inv.compile(gang).unwrap();
    let caps = capacities(inv, &c);
    let o = Objective {
        inv,
        caps: &caps,
        grain: Grain::of(&c.inner, &c.inner.roles[0]),
        policy,
        ri: RoleIx(0),
    };
    let mut lx = Lex::default();
    let mut at = Attempt::default();
    at.ensure(inv);
    let mut compared = 0;
    for d in 0..inv.label_depth() {
        let d = Depth(d);
        let w = o.width(d);
        let step = o.grain.at(d).max(1);
        for di in 0..inv.domains[d.ix()].len() as u32 {
            let dom = *inv.domain(d, di);
            let cap = caps.caps[d.ix()][di as usize];
            for x in (step..=cap).step_by(step as usize) {
                let mut got = Vec::new();
                for no_narrow in [true, false] {
                    lx.no_narrow = no_narrow;
                    let (mut table, mut kids) = (Vec::new(), Vec::new());
                    if w == 2 && o.has_child_domains(d, &dom) {
                        let base = lx.table.len();
                        o.knapsack(&mut lx, d, &dom, x, Table::Steps);
                        table = lx.table[base..].to_vec();
                        lx.table.truncate(base);
                        let ib = lx.items.len();
                        let v = o.knapsack_children(&mut lx, d, &dom, x);
                        kids = lx.items[ib..]
                            .iter()
                            .map(|it| (it.child, it.cap, it.pos))
                            .collect();
                        kids.push((Child::Node(NodeIx(u32::MAX)), u64::from(v[0]), v[1]));
                        lx.items.truncate(ib);
                        compared += u64::from(!no_narrow);
                    }
                    let mut v = [0u32; MAX_WIDTH];
                    o.vector(&mut lx, d, di, x, &mut v[..w]);
                    at.fresh(inv.resources.len());
                    o.assign(&mut lx, Scope::new(d, di), x, &mut at);
                    let total: u64 = at.assign.iter().map(|m| u64::from(m.2)).sum();
                    assert_eq!(total, x);
                    got.push((table, kids, v, at.assign.clone()));
                }
                assert_eq!(got[0], got[1], "depth {}, domain {di}, {x} members", d.ix());
                assert!(lx.table.is_empty() && lx.ntable.is_empty() && lx.nchoice.is_empty());
                assert!(lx.nsteps.is_empty() && lx.kids.is_empty() && lx.items.is_empty());
            }
        }
    }
    compared
}

/// The gang: one-GPU members, unconstrained, or required in a zone/block with slices
/// of `slice` in a rack (slices apply to constrained roles).
fn gang(three: bool, slice: u32) -> Gang {
    match slice {
        0 | 1 => Gang::new("g").role(Role::new("w", 1).request(GPU, 1)),
        s => Gang::new("g")
            .role(Role::new("w", s).request(GPU, 1))
            .required(if three { "zone" } else { "block" })
            .slice("rack", s),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_narrow_knapsack_is_the_packed_one(
        three in any::<bool>(),
        slice in 0u32..4,
        nodes in proptest::collection::vec(
            (0u8..2, 0u8..3, 0u8..4, 0u8..=3, 0i64..=9, 0i64..=9),
            1..28,
        ),
    ) {
        let inv = inventory(three, &nodes);
        for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
            compare(&inv, &gang(three, slice), policy);
        }
    }
}

/// The comparison above reaches narrow tables often, with and without slices.
#[test]
fn narrow_tables_are_compared() {
    let mut next = crate::solve::xorshift(91);
    let (mut plain, mut sliced) = (0, 0);
    for k in 0..200 {
        let three = k % 2 == 1;
        let nodes: Vec<_> = (0..1 + next(27))
            .map(|_| {
                let (z, b, r) = (next(2) as u8, next(3) as u8, next(4) as u8);
                (z, b, r, next(4) as u8, next(10) as i64, next(10) as i64)
            })
            .collect();
        let inv = inventory(three, &nodes);
        let slice = (k / 2 % 4) as u32;
        let n = compare(&inv, &gang(three, slice), Policy::BestFit);
        if slice > 1 {
            sliced += n;
        } else {
            plain += n;
        }
    }
    assert!(
        plain > 1000 && sliced > 200,
        "{plain} plain, {sliced} sliced"
    );
}
