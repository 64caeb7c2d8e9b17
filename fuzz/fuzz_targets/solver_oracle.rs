//! Tiny generated instances: the solver against the brute-force oracle of the property
//! tests (same checks: feasibility, level, most members, validity, policy, fewest
//! domains, determinism, monotonicity), with slices as the property test makes them.

#![no_main]

use arbitrary::{Result, Unstructured};
use gang_core::Policy;
use libfuzzer_sys::fuzz_target;

#[path = "../../gang-core/tests/support/oracle.rs"]
mod oracle;

use oracle::{Case, NodeCase, RoleCase};

fn case(u: &mut Unstructured<'_>) -> Result<Case> {
    let levels = u.int_in_range(0..=2usize)?;
    let mut nodes = Vec::new();
    for _ in 0..u.int_in_range(1..=8)? {
        let keep = u.int_in_range(0..=levels)?;
        let path = (0..keep)
            .map(|_| u.int_in_range(0..=1u8))
            .collect::<Result<_>>()?;
        let mut cap = [0u8; 3];
        let mut used = [0u8; 3];
        for r in 0..3 {
            cap[r] = u.int_in_range(0..=6)?;
            used[r] = u.int_in_range(0..=2)?;
        }
        nodes.push(NodeCase {
            path,
            cap,
            used,
            schedulable: u.ratio(9, 10)?,
            kind: u.int_in_range(0..=1)?,
            tainted: u.ratio(1, 8)?,
        });
    }
    let mut roles = Vec::new();
    let mut members = 0;
    for _ in 0..u.int_in_range(1..=3)? {
        let count = u.int_in_range(1..=3u32)?;
        if members + count > 6 {
            break;
        }
        members += count;
        let mut req = [0u8; 3];
        for q in &mut req {
            *q = u.int_in_range(0..=2)?;
        }
        if req == [0, 0, 0] {
            req[1] = 1;
        }
        roles.push(RoleCase {
            count,
            min: u.int_in_range(1..=count)?,
            req,
            kind: if u.ratio(1, 5)? {
                Some(u.int_in_range(0..=1)?)
            } else {
                None
            },
            tolerates: u.arbitrary()?,
            max_per_node: if u.ratio(1, 5)? {
                Some(u.int_in_range(1..=2)?)
            } else {
                None
            },
            constrained: u.ratio(4, 5)?,
        });
    }
    let depth = |u: &mut Unstructured<'_>| -> Result<Option<usize>> {
        Ok(if u.arbitrary()? {
            Some(u.int_in_range(1..=levels + 1)?)
        } else {
            None
        })
    };
    let required = depth(u)?;
    let preferred = depth(u)?.map(|p| p.max(required.unwrap_or(0)));
    let policy = *u.choose(&[Policy::BestFit, Policy::MostFree, Policy::Balanced])?;
    // Slices as the property test makes them: at or inside the required level; mostly
    // pairs, with constrained roles of 2 members (elastic: 2 of 4 when room is left).
    let mut slice = None;
    if !u.ratio(2, 3)? && roles.iter().any(|r| r.constrained) {
        let d = u.int_in_range(1..=levels + 1)?.max(required.unwrap_or(1));
        let mut size = 1;
        if u.ratio(2, 3)? {
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
                size = 2;
            }
        }
        if size == 1 {
            for r in roles.iter_mut() {
                r.min = r.min.min(r.count);
            }
        }
        slice = Some((d, size));
    }
    Ok(Case {
        levels,
        nodes,
        roles,
        required,
        preferred,
        slice,
        policy,
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    if let Ok(c) = case(&mut u) {
        if let Err(e) = oracle::check(&c) {
            panic!("{e}\n{c:#?}");
        }
    }
});
