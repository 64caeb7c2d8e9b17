//! The solver against a brute-force oracle on small random clusters (≤ 8 nodes, ≤ 2
//! label levels plus the node level, ≤ 3 resources, ≤ 3 roles, ≤ 6 members): same
//! feasibility, same level, the most members, valid placements, the policy's domain,
//! the fewest child domains and nodes, determinism and monotonicity.

mod support;

use gang_core::Policy;
use proptest::prelude::*;
use support::oracle::{check, Case, NodeCase, RoleCase};

fn node_case(levels: usize) -> impl Strategy<Value = NodeCase> {
    (
        prop::collection::vec(0u8..2, levels),
        0..=levels,
        [0u8..7, 0u8..7, 0u8..7],
        [used(), used(), used()],
        prop::bool::weighted(0.9),
        0u8..2,
        prop::bool::weighted(0.15),
    )
        .prop_map(|(mut path, keep, cap, used, schedulable, kind, tainted)| {
            // Most nodes carry every label; some lose the finer ones.
            if keep < path.len() && kind == 1 && tainted {
                path.truncate(keep);
            } else if keep == 0 && schedulable && path.len() > 1 && cap[0] == 0 {
                path.truncate(1);
            }
            NodeCase {
                path,
                cap,
                used,
                schedulable,
                kind,
                tainted,
            }
        })
}

fn used() -> impl Strategy<Value = u8> {
    prop_oneof![4 => Just(0u8), 2 => Just(1), 1 => Just(2), 1 => Just(4)]
}

fn amount() -> impl Strategy<Value = u8> {
    prop_oneof![3 => Just(0u8), 3 => Just(1), 1 => Just(2), 1 => Just(3)]
}

fn role_case() -> impl Strategy<Value = RoleCase> {
    (
        1u32..=3,
        0u32..=3,
        [amount(), amount(), amount()],
        prop::option::weighted(0.2, 0u8..2),
        prop::bool::weighted(0.5),
        prop::option::weighted(0.2, 1u32..=2),
        prop::bool::weighted(0.8),
    )
        .prop_map(
            |(count, min, mut req, kind, tolerates, max_per_node, constrained)| {
                if req == [0, 0, 0] {
                    req[1] = 1;
                }
                let min = if min == 0 || min > count { count } else { min };
                RoleCase {
                    count,
                    min,
                    req,
                    kind,
                    tolerates,
                    max_per_node,
                    constrained,
                }
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (0usize..=2)
        .prop_flat_map(|levels| {
            (
                Just(levels),
                prop::collection::vec(node_case(levels), 1..=8),
                prop::collection::vec(role_case(), 1..=3),
                0usize..=levels + 2,
                0usize..=levels + 2,
                prop_oneof![2 => Just(0usize), 1 => 1..=levels + 1],
                prop_oneof![
                    Just(Policy::BestFit),
                    Just(Policy::MostFree),
                    Just(Policy::Balanced)
                ],
            )
        })
        .prop_map(|(levels, nodes, mut roles, req, pref, slice, policy)| {
            // Keep the gang small: at most 6 members in all.
            while roles.iter().map(|r| r.count).sum::<u32>() > 6 {
                roles.pop();
            }
            // Depth 1..=levels is a label level, levels+1 the node level; 0 means none.
            let required = (req > 0).then_some(req.min(levels + 1));
            let preferred = (pref > 0).then(|| pref.min(levels + 1).max(required.unwrap_or(0)));
            let slice = (slice > 0 && roles.iter().any(|r| r.constrained)).then(|| {
                let d = slice.min(levels + 1).max(required.unwrap_or(1));
                // Mostly pairs: constrained roles then get 2 members (elastic: 2 of 4
                // when room is left).
                if slice % 3 != 0 {
                    let mut room = 6 - roles
                        .iter()
                        .filter(|r| !r.constrained)
                        .map(|r| r.count)
                        .sum::<u32>();
                    for r in roles.iter_mut().filter(|r| r.constrained) {
                        let four = room >= 4 && r.min < r.count;
                        r.count = if four { 4 } else { 2 };
                        r.min = 2;
                        room = room.saturating_sub(r.count);
                    }
                    if roles.iter().map(|r| r.count).sum::<u32>() <= 6 {
                        return (d, 2);
                    }
                }
                for r in roles.iter_mut() {
                    r.min = r.min.min(r.count);
                }
                (d, 1)
            });
            Case {
                levels,
                nodes,
                roles,
                required,
                preferred,
                slice,
                policy,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn solver_agrees_with_the_oracle(case in case()) {
        check(&case).map_err(TestCaseError::fail)?;
    }
}
