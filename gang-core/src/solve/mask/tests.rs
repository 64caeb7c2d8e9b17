use super::*;
use crate::testkit::{build, on_path};
use crate::{Gang, Role};

const GPU: &str = "gpu";

/// `(block, rack (3: none), used)` per node, 8 GPUs each.
fn cluster(nodes: &[(u8, u8, i64)]) -> Inventory {
    let specs = nodes
        .iter()
        .enumerate()
        .map(|(i, &(b, r, used))| {
            let (block, rack) = (format!("b{b}"), format!("r{r}"));
            let path: Vec<&str> = match r {
                3 => vec![&block],
                _ => vec![&block, &rack],
            };
            on_path(&format!("n{i}"), &path)
                .capacity(GPU, 8)
                .used(GPU, used)
        })
        .collect();
    build(&["block", "rack"], specs)
}

/// A gang from drawn numbers: `shape` picks the topology (and a second role, a slice).
fn gang(count: u32, gpus: i64, elastic: bool, per_node: Option<u32>, shape: u8) -> Gang {
    let mut role = Role::new("w", count).request(GPU, gpus);
    if elastic {
        role = role.min_count(1);
    }
    if let Some(k) = per_node {
        role = role.max_per_node(k);
    }
    let g = Gang::new("g").role(role);
    match shape {
        0 => g,
        1 => g.required("block"),
        2 => g.required("rack"),
        3 => g.preferred("rack"),
        4 => g.role(Role::new("x", 1).request(GPU, 1)).required("block"),
        _ => g.role(Role::new("x", 2).request(GPU, 3)),
    }
}

/// `inv` with the nodes of `mask` cordoned: the oracle.
fn cordoned(inv: &Inventory, mask: &NodeMask) -> Inventory {
    let mut copy = inv.clone();
    for name in mask.names(inv) {
        copy.cordon(name).unwrap();
    }
    copy
}

fn mask_of(inv: &Inventory, picks: &[bool]) -> NodeMask {
    let mut m = NodeMask::new();
    for (i, &p) in picks.iter().enumerate() {
        if p && i < inv.len() {
            m.insert(inv, &format!("n{i}")).unwrap();
        }
    }
    m
}

#[test]
fn masks_name_their_nodes_and_refuse_other_layouts() -> Result<(), Error> {
    let mut inv = cluster(&[(0, 0, 0), (0, 1, 0), (1, 2, 0)]);
    let mut m = NodeMask::new();
    assert!(m.is_empty());
    assert!(m.insert(&inv, "n2")?);
    assert!(m.insert(&inv, "n0")?);
    assert!(!m.insert(&inv, "n2")?);
    assert_eq!(m.len(), 2);
    assert!(m.contains(&inv, "n0") && !m.contains(&inv, "n1"));
    assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n2", "n0"]);
    assert_eq!(
        m.insert(&inv, "zz").unwrap_err().kind(),
        crate::ErrorKind::UnknownNode
    );
    let before = m.generation;
    m.clear();
    assert!(m.is_empty() && m.generation != before);
    m.insert(&inv, "n1")?;
    // Another layout: the mask's positions mean nothing there.
    inv.add_node(on_path("n3", &["b1", "r2"]).capacity(GPU, 8))?;
    let g = inv.compile(&gang(1, 1, false, None, 0))?;
    let mut solver = Solver::new();
    let err = inv.find_outside(&mut solver, &g, &m).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidRequest);
    assert!(m.insert(&inv, "n3").is_err());
    assert_eq!(m.names(&inv).count(), 0);
    m.clear();
    assert!(m.insert(&inv, "n3")?);
    assert!(inv.find_outside(&mut solver, &g, &m)?.is_some());
    Ok(())
}

#[test]
fn a_kept_mask_follows_the_journal_and_gives_fits_back() -> Result<(), Error> {
    // n0, n1 in rack r0; n2 in rack r1: 8 GPUs free each.
    let mut inv = cluster(&[(0, 0, 0), (0, 0, 0), (0, 1, 0)]);
    let mut solver = Solver::new();
    let two = inv.compile(&gang(2, 8, false, None, 2))?; // two full nodes in a rack
    let mask = mask_of(&inv, &[true, false, false]);
    assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
    assert!(inv.find_with(&mut solver, &two)?.is_some()); // given back
    assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
    // A change to a masked node while the entry holds the mask: still masked.
    inv.set_used("n0", GPU, 0)?;
    assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
    // And to an unmasked one: seen.
    inv.set_used("n1", GPU, 8)?;
    assert!(!inv.fits_with(&mut solver, &two)?);
    inv.set_used("n1", GPU, 0)?;
    let p = inv.find_with(&mut solver, &two)?.expect("rack r0");
    assert_eq!(p.node_counts(), [("n0", 1), ("n1", 1)]);
    Ok(())
}

#[test]
fn fitting_nodes_are_where_one_member_fits() -> Result<(), Error> {
    let inv = cluster(&[(0, 0, 0), (0, 0, 4), (0, 1, 7), (1, 3, 8)]);
    let mut solver = Solver::new();
    let mut m = NodeMask::new();
    let four = inv.compile(&gang(9, 4, false, None, 2))?;
    inv.add_fitting_nodes(&mut solver, &four, &mut m)?;
    assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n0", "n1"]);
    // Every role's: one GPU fits on n2 too.
    let both = inv.compile(&gang(1, 8, false, None, 4))?;
    inv.add_fitting_nodes(&mut solver, &both, &mut m)?;
    assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n0", "n1", "n2"]);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// A find outside a mask, asked of one warm solver across changes and between
    /// plain finds, is the find of a fresh solver on a copy with the masked nodes
    /// cordoned; it never uses a masked node, never exceeds capacity, and `fits_with`
    /// agrees with `find_with`.
    #[test]
    fn a_masked_find_is_a_find_with_those_nodes_cordoned(
        nodes in proptest::collection::vec((0u8..3, 0u8..4, 0i64..=8), 1..20),
        rounds in proptest::collection::vec(
            (
                proptest::collection::vec(proptest::bool::weighted(0.3), 20),
                (1u32..12, 1i64..=8, proptest::bool::ANY, proptest::option::of(1u32..3), 0u8..6),
                (0usize..20, 0i64..=8, 0u8..3),
            ),
            1..6,
        ),
    ) {
        let mut inv = cluster(&nodes);
        let mut solver = Solver::new();
        for (picks, (count, gpus, elastic, per_node, shape), (n, used, what)) in rounds {
            let Ok(g) = inv.compile(&gang(count, gpus, elastic, per_node, shape)) else {
                continue;
            };
            let mask = mask_of(&inv, &picks);
            for _ in 0..2 {
                let got = inv.find_outside(&mut solver, &g, &mask)?;
                let want = cordoned(&inv, &mask).find_with(&mut Solver::new(), &g)?;
                proptest::prop_assert_eq!(&got, &want);
                if let Some(p) = &got {
                    proptest::prop_assert!(p.validate(&inv).is_ok());
                    for a in p.assignments() {
                        proptest::prop_assert!(!mask.contains(&inv, &a.node), "{} masked", a.node);
                    }
                }
                let plain = inv.find_with(&mut solver, &g)?;
                proptest::prop_assert_eq!(&plain, &inv.find_with(&mut Solver::new(), &g)?);
                proptest::prop_assert_eq!(inv.fits_with(&mut solver, &g)?, plain.is_some());
            }
            // Reserve what was found outside, then change a node: the next round's
            // entries catch up from the journal, with or without a mask.
            if let Some(p) = inv.find_outside(&mut solver, &g, &mask)? {
                inv.reserve(&p).unwrap();
            }
            let name = format!("n{}", n % nodes.len());
            match what {
                0 => { inv.set_used(&name, GPU, used)?; }
                1 => inv.cordon(&name)?,
                _ => inv.uncordon(&name)?,
            }
        }
    }

    /// The fitting nodes of a one-role gang are the nodes on which one member of it
    /// fits when every other node is cordoned.
    #[test]
    fn fitting_nodes_match_one_member_alone(
        nodes in proptest::collection::vec((0u8..3, 0u8..4, 0i64..=8), 1..16),
        gpus in 1i64..=8,
        per_node in proptest::option::of(1u32..3),
    ) {
        let inv = cluster(&nodes);
        let mut solver = Solver::new();
        let g = inv.compile(&gang(4, gpus, false, per_node, 0))?;
        let mut m = NodeMask::new();
        inv.add_fitting_nodes(&mut solver, &g, &mut m)?;
        let one = inv.compile(&gang(1, gpus, false, per_node, 0))?;
        for i in 0..inv.len() {
            let name = format!("n{i}");
            let mut alone = inv.clone();
            for j in (0..inv.len()).filter(|&j| j != i) {
                alone.cordon(&format!("n{j}"))?;
            }
            let fits = alone.find_with(&mut Solver::new(), &one)?.is_some();
            proptest::prop_assert_eq!(m.contains(&inv, &name), fits, "{}", name);
        }
    }
}
