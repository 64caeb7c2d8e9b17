//! Random small single-role cases for the objective's property tests (≤ 8 nodes, ≤ 2
//! label levels plus the node level, ≤ 8 members), in the oracle's terms.

#![allow(dead_code)]

use gang_core::Policy;
use proptest::prelude::*;

use super::oracle::{Case, NodeCase, RoleCase};

fn node(levels: usize) -> impl Strategy<Value = NodeCase> {
    (
        prop::collection::vec(0u8..2, levels),
        prop::bool::weighted(0.15),
        0..=levels,
        [0u8..7, 0u8..4, 0u8..4],
        [used(), used(), used()],
        prop::bool::weighted(0.92),
        0u8..2,
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(mut path, lose, keep, cap, used, schedulable, kind, tainted)| {
                // Some nodes lack the finer labels.
                if lose {
                    path.truncate(keep);
                }
                NodeCase {
                    path,
                    cap,
                    used,
                    schedulable,
                    kind,
                    tainted,
                }
            },
        )
}

fn used() -> impl Strategy<Value = u8> {
    prop_oneof![4 => Just(0u8), 2 => Just(1), 1 => Just(3)]
}

fn role(elastic: bool) -> impl Strategy<Value = RoleCase> {
    (
        1u32..=8,
        0u32..=8,
        prop_oneof![3 => Just(1u8), 1 => Just(2)],
        prop_oneof![3 => Just(0u8), 1 => Just(1)],
        prop::option::weighted(0.15, 0u8..2),
        prop::option::weighted(0.2, 1u32..=3),
        prop::bool::weighted(0.9),
    )
        .prop_map(
            move |(count, min, gpu, cpu, kind, max_per_node, constrained)| RoleCase {
                count,
                min: if elastic && min > 0 && min < count {
                    min
                } else {
                    count
                },
                req: [gpu, cpu, 0],
                kind,
                tolerates: false,
                max_per_node,
                constrained,
            },
        )
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::BestFit),
        Just(Policy::MostFree),
        Just(Policy::Balanced)
    ]
}

/// A single-role case: any topology constraint, slices, elastic counts, policies.
pub fn single() -> impl Strategy<Value = Case> {
    (0usize..=2)
        .prop_flat_map(|levels| {
            (
                Just(levels),
                prop::collection::vec(node(levels), 1..=8),
                role(true),
                0usize..=levels + 2,
                0usize..=levels + 2,
                prop_oneof![3 => Just(0usize), 1 => 1..=levels + 1],
                policy(),
            )
        })
        .prop_map(|(levels, nodes, mut role, req, pref, slice, policy)| {
            // Depth 1..=levels is a label level, levels+1 the node level; 0 means none.
            let required = (req > 0).then_some(req.min(levels + 1));
            let preferred = (pref > 0).then(|| pref.min(levels + 1).max(required.unwrap_or(0)));
            let slice = (slice > 0 && role.constrained).then(|| {
                let d = slice.min(levels + 1).max(required.unwrap_or(1));
                // Pairs: an even count (and min_count).
                role.count = role.count.div_ceil(2) * 2;
                role.min = role.min.div_ceil(2) * 2;
                role.min = role.min.min(role.count);
                (d, 2)
            });
            Case {
                levels,
                nodes,
                roles: vec![role],
                required,
                preferred,
                slice,
                policy,
            }
        })
}

/// A single-role split case: no required level, no slices, every member needed, and
/// either no preference (unconstrained) or `preferred` at depth `1..=levels + 1`.
pub fn split() -> impl Strategy<Value = Case> {
    (1usize..=2)
        .prop_flat_map(|levels| {
            (
                Just(levels),
                prop::collection::vec(node(levels), 1..=8),
                role(false),
                policy(),
            )
        })
        .prop_map(|(levels, nodes, mut role, policy)| {
            role.constrained = true;
            Case {
                levels,
                nodes,
                roles: vec![role],
                required: None,
                preferred: None,
                slice: None,
                policy,
            }
        })
}
