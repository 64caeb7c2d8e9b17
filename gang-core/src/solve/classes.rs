//! The nodes unconstrained roles may use, collapsed into classes of identical states,
//! once per query.
//!
//! An unconstrained role may go anywhere, so every candidate domain's exact search
//! would otherwise look at every node of the cluster again. Two nodes with the same
//! free amounts of the requested resources and the same fit for every unconstrained
//! role are interchangeable outside the candidate domain, and a search never uses more
//! of them than it has members to place; so the query groups the nodes into classes
//! once (linear in the nodes), and each search takes at most that many nodes of each
//! class (skipping those inside its domain, which it sees as they are there).

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::compile::Compiled;
use crate::inventory::ix::NodeIx;
use crate::inventory::Inventory;

use super::rollup::node_fit;

/// A class's key: the unconstrained roles' fits, then the free amounts.
type Key = SmallVec<[u64; 8]>;

/// The classes of one query (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Outside {
    /// Whether the classes are built for the current query.
    ready: bool,
    /// Roles.
    k: usize,
    /// Resources of the search's shape.
    nr: usize,
    /// `[class * k + role]`: fits (zero for constrained roles).
    pub fit: Vec<u32>,
    /// `[class * nr + j]`: free amounts of the shape's resources.
    pub free: Vec<u64>,
    /// Class `c`'s nodes are `nodes[start[c]..start[c + 1]]`, in storage order.
    pub start: Vec<u32>,
    pub nodes: Vec<NodeIx>,
    /// Per node: its class, or `u32::MAX` when no unconstrained role fits on it.
    class_of: Vec<u32>,
    index: FxHashMap<Key, u32>,
    /// Nodes per class, then the next free slot per class (the counting sort's).
    sizes: Vec<u32>,
}

impl Outside {
    /// Forgets the classes: the next query builds them again.
    pub fn invalidate(&mut self) {
        self.ready = false;
    }

    /// Whether the classes are built for this query.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Classes.
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Class `c`'s nodes.
    pub fn members(&self, c: usize) -> &[NodeIx] {
        &self.nodes[self.start[c] as usize..self.start[c + 1] as usize]
    }

    /// Class `c`'s fits.
    pub fn fits(&self, c: usize) -> &[u32] {
        &self.fit[c * self.k..(c + 1) * self.k]
    }

    /// Class `c`'s free amounts.
    pub fn frees(&self, c: usize) -> &[u64] {
        &self.free[c * self.nr..(c + 1) * self.nr]
    }

    /// Groups every node on which some unconstrained role of `c` fits, by its fits and
    /// its free amounts of `res`. Returns the work done (nodes looked at).
    pub fn build(&mut self, inv: &Inventory, c: &Compiled, res: &[u32]) -> u64 {
        let k = c.roles.len();
        self.k = k;
        self.nr = res.len();
        self.fit.clear();
        self.free.clear();
        self.start.clear();
        self.nodes.clear();
        self.index.clear();
        self.class_of.clear();
        let sizes = &mut self.sizes;
        sizes.clear();
        let mut key = Key::new();
        for ix in 0..inv.len() {
            let n = NodeIx::at(ix);
            key.clear();
            let mut any = false;
            for r in &c.roles {
                let f = if r.constrained {
                    0
                } else {
                    node_fit(inv, r, n, None)
                };
                any |= f > 0;
                key.push(u64::from(f));
            }
            if !any {
                self.class_of.push(u32::MAX);
                continue;
            }
            key.extend(res.iter().map(|&r| inv.free[r as usize][ix]));
            let next = self.index.len() as u32;
            let class = *self.index.entry(key.clone()).or_insert(next);
            if class == next {
                self.fit.extend(key[..k].iter().map(|&f| f as u32));
                self.free.extend_from_slice(&key[k..]);
                sizes.push(0);
            }
            sizes[class as usize] += 1;
            self.class_of.push(class);
        }
        // Counting sort: each class's nodes together, in storage order.
        self.start.push(0);
        let mut at = 0u32;
        for s in sizes.iter_mut() {
            let size = *s;
            *s = at;
            at += size;
            self.start.push(at);
        }
        self.nodes.resize(at as usize, NodeIx(0));
        for (ix, &class) in self.class_of.iter().enumerate() {
            if class != u32::MAX {
                let slot = &mut sizes[class as usize];
                self.nodes[*slot as usize] = NodeIx::at(ix);
                *slot += 1;
            }
        }
        self.ready = true;
        inv.len() as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gang, NodeSpec, Role, Topology};

    #[test]
    fn identical_nodes_share_a_class_in_storage_order() {
        let node = |n: &str, cpu: i64| {
            NodeSpec::new(n)
                .label("rack", "r")
                .capacity("cpu", cpu)
                .capacity("gpu", 1)
        };
        let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
            .nodes([node("a", 4), node("b", 2), node("c", 4), node("d", 0)])
            .build()
            .unwrap();
        let gang = Gang::new("g")
            .role(Role::new("l", 1).request("cpu", 1).unconstrained())
            .role(Role::new("w", 2).request("gpu", 1))
            .required("rack");
        let c = inv.compile(&gang).unwrap();
        let res: Vec<u32> = (0..inv.resources.len() as u32).collect();
        let mut o = Outside::default();
        assert_eq!(o.build(&inv, &c.inner, &res), 5);
        assert!(o.is_ready());
        // d has no CPU: no class. a and c: 4 CPUs; b: 2.
        assert_eq!(o.len(), 2);
        let classes: Vec<Vec<u32>> = (0..o.len())
            .map(|c| o.members(c).iter().map(|n| n.0).collect())
            .collect();
        assert_eq!(classes, [vec![0, 2], vec![1]]);
        // The constrained role's fit is left out.
        assert_eq!(o.fits(0)[1], 0);
        assert!(o.fits(0)[0] > o.fits(1)[0]);
        o.invalidate();
        assert!(!o.is_ready());
    }
}
