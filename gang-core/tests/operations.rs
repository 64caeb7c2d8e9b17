//! Random sequences of lifecycle operations on small clusters, checked after every
//! step (see `support/ops.rs`).

mod support;

use proptest::prelude::*;
use support::ops::{run, Op};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..6).prop_map(Op::Reserve),
        2 => (0usize..8).prop_map(Op::Release),
        1 => (0u8..2, 0u8..2, 1u8..6).prop_map(|(b, r, g)| Op::Add(b, r, g)),
        1 => (0usize..16).prop_map(Op::Remove),
        1 => (0usize..16).prop_map(Op::Fail),
        1 => (0usize..16).prop_map(Op::Cordon),
        1 => (0usize..16).prop_map(Op::Uncordon),
        1 => (0usize..16, 0usize..2, 0u8..8).prop_map(|(n, r, a)| Op::Capacity(n, r, a)),
        1 => (0usize..16, 0usize..2, 0u8..4).prop_map(|(n, r, a)| Op::Used(n, r, a)),
        2 => (0usize..8).prop_map(Op::Replace),
        1 => (prop::collection::vec(0usize..6, 1..4), any::<bool>()).prop_map(|(q, b)| Op::Admit(q, b)),
        1 => (0usize..6, 1u32..4).prop_map(|(g, k)| Op::Spread(g, k)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_every_invariant(
        nodes in prop::collection::vec((0u8..2, 0u8..2, 1u8..6), 1..=8),
        ops in prop::collection::vec(op(), 1..30),
    ) {
        run(nodes, ops).map_err(TestCaseError::fail)?;
    }
}
