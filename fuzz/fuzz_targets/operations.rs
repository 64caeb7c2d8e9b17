//! Random lifecycle operation sequences (reserve, release, node add / remove / fail /
//! cordon, capacity and usage changes, replace, admit, spread), checked after every step
//! by the same invariants as the property test.

#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

#[path = "../../gang-core/tests/support/ops.rs"]
mod ops;

use ops::{run, Op};

fn op(u: &mut Unstructured<'_>) -> Result<Op> {
    Ok(match u.int_in_range(0..=11u8)? {
        0 => Op::Reserve(u.int_in_range(0..=5)?),
        1 => Op::Release(u.int_in_range(0..=7)?),
        2 => Op::Add(
            u.int_in_range(0..=1)?,
            u.int_in_range(0..=1)?,
            u.int_in_range(1..=5)?,
        ),
        3 => Op::Remove(u.int_in_range(0..=15)?),
        4 => Op::Fail(u.int_in_range(0..=15)?),
        5 => Op::Cordon(u.int_in_range(0..=15)?),
        6 => Op::Uncordon(u.int_in_range(0..=15)?),
        7 => Op::Capacity(
            u.int_in_range(0..=15)?,
            u.int_in_range(0..=1)?,
            u.int_in_range(0..=7)?,
        ),
        8 => Op::Used(
            u.int_in_range(0..=15)?,
            u.int_in_range(0..=1)?,
            u.int_in_range(0..=3)?,
        ),
        9 => Op::Replace(u.int_in_range(0..=7)?),
        10 => {
            let n = u.int_in_range(1..=3)?;
            let q = (0..n)
                .map(|_| u.int_in_range(0..=5usize))
                .collect::<Result<_>>()?;
            Op::Admit(q, u.arbitrary()?)
        }
        _ => Op::Spread(u.int_in_range(0..=5)?, u.int_in_range(1..=3)?),
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(n) = u.int_in_range(1..=8usize) else {
        return;
    };
    let mut nodes = Vec::new();
    for _ in 0..n {
        let spec = |u: &mut Unstructured<'_>| -> Result<(u8, u8, u8)> {
            Ok((
                u.int_in_range(0..=1)?,
                u.int_in_range(0..=1)?,
                u.int_in_range(1..=5)?,
            ))
        };
        let Ok(spec) = spec(&mut u) else { return };
        nodes.push(spec);
    }
    let mut ops = Vec::new();
    while let Ok(o) = op(&mut u) {
        ops.push(o);
        if ops.len() >= 40 {
            break;
        }
    }
    if let Err(e) = run(nodes.clone(), ops.clone()) {
        panic!("{e}\nnodes: {nodes:?}\nops: {ops:?}");
    }
});
