//! The lexicographic placement objective against an enumeration of every feasible
//! placement (≤ 8 nodes, ≤ 2 label levels plus the node level, one role, ≤ 8
//! members): the engine's placement has the least vector of domains per level (then the
//! policy on spare slots, then the first domain), passes `validate()`, and is the same
//! every time — again, from a fresh solver, and from a warm one whose cache followed
//! changes. Split placements (unconstrained, or `preferred` walked past the top) never
//! use more domains at a level than the least vector allows, nor more than `preferred`
//! uses at its level.

mod support;

use gang_core::{Inventory, Outcome, Placement, Solver};
use proptest::prelude::*;
use support::cases;
use support::oracle::{
    assignment_matrix, build, chosen, least_vector, single_best, spare, vector, Case,
};

/// The placement's depth, domain, members, vector and spare slots, in oracle terms.
fn measure(case: &Case, p: &Placement) -> (usize, Option<Vec<u8>>, u32, Vec<u32>, u32) {
    let (d, dom) = chosen(case, p);
    let x = assignment_matrix(case, p);
    let placed: u32 = x[0].iter().sum();
    let v = vector(case, d, &x[0]);
    let s = spare(case, d, &dom, placed);
    (d, dom, placed, v, s)
}

/// The same question from a solver whose cache has seen other shapes and other states
/// of the inventory (changed and changed back through the journal).
fn warm_answer(inv: &Inventory, case: &Case) -> Result<Outcome, TestCaseError> {
    let (_, gang) = build(case, false);
    let compiled = inv
        .compile(&gang)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut solver = Solver::new();
    let mut inv = inv.clone();
    let _ = inv.place_with(&mut solver, &compiled);
    // Occupy the first node, ask, then give it back and ask again: the cache follows.
    let gpu = support::oracle::RES[0];
    let (cap, used) = (case.nodes[0].cap[0], case.nodes[0].used[0]);
    inv.set_used("n0", gpu, i64::from(cap)).unwrap();
    let _ = inv.place_with(&mut solver, &compiled);
    inv.set_used("n0", gpu, i64::from(used)).unwrap();
    inv.place_with(&mut solver, &compiled)
        .map_err(|e| TestCaseError::fail(e.to_string()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn single_role_placements_have_the_least_vector(case in cases::single()) {
        let (inv, gang) = build(&case, false);
        let out = match inv.place(&gang) {
            Ok(o) => o,
            Err(e) if e.kind() == gang_core::ErrorKind::Contradictory => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error {e}"))),
        };
        let want = single_best(&case);
        match (out.placement(), &want) {
            (None, None) => {}
            (Some(p), None) => prop_assert!(false, "placed {p} but nothing fits"),
            (None, Some(w)) => prop_assert!(false, "not placed, but {w:?} fits"),
            (Some(p), Some(w)) => {
                p.validate(&inv).map_err(TestCaseError::fail)?;
                let (d, dom, placed, v, s) = measure(&case, p);
                prop_assert_eq!(
                    (d, placed, &v, s, &dom),
                    (w.depth, w.placed, &w.vector, w.spare, &w.domain),
                    "{}", p
                );
            }
        }
        // Deterministic: again, from a fresh solver, from a warm one.
        prop_assert_eq!(inv.place(&gang).unwrap().to_json(), out.to_json());
        let compiled = inv.compile(&gang).unwrap();
        let fresh = inv.place_with(&mut Solver::new(), &compiled).unwrap();
        prop_assert_eq!(fresh.to_json(), out.to_json());
        prop_assert_eq!(warm_answer(&inv, &case)?.to_json(), out.to_json());
    }

    #[test]
    fn splits_use_no_more_domains_than_needed(case in cases::split()) {
        let (inv, gang) = build(&case, false);
        let Some(p) = inv.place(&gang).unwrap().placement().cloned() else {
            prop_assert!(single_best(&case).is_none());
            return Ok(());
        };
        p.validate(&inv).map_err(TestCaseError::fail)?;
        let x = assignment_matrix(&case, &p);
        let count = case.roles[0].count;
        // Unconstrained: the least vector over the whole cluster, so no level uses more
        // domains than the least vector allows, outermost first.
        let mine = vector(&case, 0, &x[0]);
        let least = least_vector(&case, 0, &None, count).unwrap();
        prop_assert_eq!(&mine, &least, "{}", p);
        // And never wider than `preferred` at the level it names: the preferred
        // placement (wherever its walk ends, measured over the cluster) uses at least as
        // many domains there.
        for level in 1..=case.levels + 1 {
            let mut pref = case.clone();
            pref.preferred = Some(level);
            let (inv2, gang2) = build(&pref, false);
            let q = inv2.place(&gang2).unwrap().placement().cloned().expect("it fits unconstrained");
            let y = assignment_matrix(&pref, &q);
            let theirs = vector(&pref, 0, &y[0]);
            prop_assert!(
                mine[level - 1] <= theirs[level - 1],
                "unconstrained {} uses {} at level {}, preferred {} uses {}",
                p, mine[level - 1], level, q, theirs[level - 1]
            );
            // Past the top of the walk, preferred is a split too: the same minimum.
            if q.level().is_none() {
                prop_assert_eq!(&theirs, &least, "{}", q);
            }
        }
    }
}
