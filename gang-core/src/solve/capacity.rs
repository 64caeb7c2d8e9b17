//! Capacity queries for the layers above (replacement, admission): the narrow API
//! through which they read single-role roll-ups, instead of the solver's scratch space.
//! Each answers "now": from the inventory's current free capacity, with nothing else of
//! the gang placed.

use crate::compile::{CRole, Compiled, RoleIx};
use crate::inventory::bitset::Bitset;
use crate::inventory::domains::Scope;
use crate::inventory::ix::Depth;
use crate::inventory::Inventory;

use super::rollup::{rollup, Grain};
use super::Solver;

impl Solver {
    /// How many members of role `r` of `c` fit in `scope` now, on their own (the gang's
    /// other roles ignored), in whole slices where the gang cuts the role into slices.
    pub(crate) fn role_capacity(
        &mut self,
        inv: &Inventory,
        c: &Compiled,
        r: RoleIx,
        scope: Scope,
    ) -> u64 {
        let role = c.role(r);
        rollup(inv, role, Grain::of(c, role), scope, None, &mut self.s.caps)
    }

    /// How many members of `role` fit in each domain at `depth` now (each node, at the
    /// node level), on their own and ignoring slices, in storage order.
    pub(crate) fn capacities_at<'a>(
        &'a mut self,
        inv: &'a Inventory,
        role: &CRole,
        depth: Depth,
    ) -> impl Iterator<Item = u64> + 'a {
        rollup(
            inv,
            role,
            Grain::NONE,
            Scope::CLUSTER,
            None,
            &mut self.s.caps,
        );
        let caps = &self.s.caps;
        inv.scopes_at(depth).map(move |scope| caps.of(inv, scope))
    }

    /// Nodes where at least one member of some role of `c` fits now (ignoring the
    /// gang's topology and slices).
    pub(crate) fn usable_nodes(&mut self, inv: &Inventory, c: &Compiled) -> Bitset {
        let mut usable = Bitset::new(inv.len());
        for role in &c.roles {
            rollup(
                inv,
                role,
                Grain::NONE,
                Scope::CLUSTER,
                None,
                &mut self.s.caps,
            );
            for (n, &f) in self.s.caps.fits.iter().enumerate() {
                if f > 0 {
                    usable.set(n, true);
                }
            }
        }
        usable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{build, node, GPU};
    use crate::{Gang, Role};

    /// Rack b1/a: a1 4 free, a2 1; rack b1/b: b1 2; rack b2/c: c1 0.
    fn cluster() -> Inventory {
        build(
            &["block", "rack"],
            vec![
                node("a1", "b1", "a", 4),
                node("a2", "b1", "a", 1),
                node("b1", "b1", "b", 2),
                node("c1", "b2", "c", 0),
            ],
        )
    }

    #[test]
    fn capacities_answer_for_one_role_now() {
        let inv = cluster();
        let mut solver = Solver::new();
        let gang = Gang::new("g")
            .role(Role::new("w", 2).request(GPU, 1))
            .role(Role::new("x", 1).request(GPU, 2).unconstrained())
            .required("block")
            .slice("rack", 2);
        let c = inv.compile(&gang).unwrap();
        let c = &c.inner;
        let rack_a = Scope::new(Depth(2), 0);
        // 5 GPUs in rack a: 4 in whole slices of 2 for w; 2 for x (a1 only, no slices).
        assert_eq!(solver.role_capacity(&inv, c, RoleIx(0), rack_a), 4);
        assert_eq!(solver.role_capacity(&inv, c, RoleIx(1), rack_a), 2);
        // Per rack and per block, ignoring slices.
        let w = c.role(RoleIx(0));
        let racks: Vec<u64> = solver.capacities_at(&inv, w, Depth(2)).collect();
        assert_eq!(racks, [5, 2, 0]);
        let blocks: Vec<u64> = solver.capacities_at(&inv, w, Depth(1)).collect();
        assert_eq!(blocks, [7, 0]);
        let nodes: Vec<u64> = solver.capacities_at(&inv, w, Depth(3)).collect();
        assert_eq!(nodes, [4, 1, 2, 0]);
        // Nodes where w or x fits: all but c1.
        let usable = solver.usable_nodes(&inv, c);
        assert_eq!(
            (0..4).map(|n| usable.get(n)).collect::<Vec<_>>(),
            [true, true, true, false]
        );
        let only_x = inv
            .compile(&Gang::new("g").role(Role::new("x", 1).request(GPU, 2)))
            .unwrap();
        let usable = solver.usable_nodes(&inv, &only_x.inner);
        assert_eq!(
            (0..4).map(|n| usable.get(n)).collect::<Vec<_>>(),
            [true, false, true, false]
        );
    }
}
