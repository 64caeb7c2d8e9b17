//! Single-role capacity of every domain: per-node fits summed level by level.
//!
//! A node's *contribution* is how many members of the role it can take: the least over
//! requested resources of `free / request`, capped by `max_per_node`;
//! zero when the node is ineligible or (for sliced roles) outside the innermost slice
//! level; rounded down to the node-level slice size if there is one. A domain's capacity
//! is the sum of its children's and its direct nodes', rounded down to its slice size
//! when it is a slice level. This is exact for one role.

use crate::compile::{CRole, Compiled};
use crate::inventory::Inventory;

use super::Scratch;

/// Where a computation is confined: a domain (`depth <= L`) or one node (`depth == L+1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scope {
    pub depth: usize,
    pub index: u32,
}

impl Scope {
    pub const CLUSTER: Scope = Scope { depth: 0, index: 0 };

    /// The node range `start..end` of the scope.
    pub fn range(self, inv: &Inventory) -> (u32, u32) {
        if self.depth > inv.label_depth() {
            (self.index, self.index + 1)
        } else {
            let d = &inv.domains[self.depth][self.index as usize];
            (d.start, d.end)
        }
    }
}

/// Slice arithmetic for one role: granularity per depth and the shallowest leaf allowed.
#[derive(Clone, Copy)]
pub(crate) struct Grain<'a> {
    pub gran: &'a [u64],
    pub min_leaf: usize,
    pub floors: &'a [(usize, u32)],
}

impl<'a> Grain<'a> {
    /// No slices: every domain takes any number of members.
    pub const NONE: Grain<'static> = Grain {
        gran: &[],
        min_leaf: 0,
        floors: &[],
    };

    /// The grain of `role` in `c`: slices apply to constrained roles only.
    pub fn of(c: &'a Compiled, role: &CRole) -> Grain<'a> {
        if role.constrained && c.has_slices() {
            Grain {
                gran: &c.gran,
                min_leaf: c.slice_min_leaf,
                floors: &c.slices,
            }
        } else {
            Grain::NONE
        }
    }

    #[inline]
    pub fn at(&self, depth: usize) -> u64 {
        self.gran.get(depth).copied().unwrap_or(1)
    }

    fn floor_at(&self, depth: usize) -> u64 {
        self.floors
            .iter()
            .find(|&&(d, _)| d == depth)
            .map_or(1, |&(_, s)| u64::from(s))
    }
}

#[inline]
fn round_down(v: u64, g: u64) -> u64 {
    if g <= 1 {
        v
    } else {
        v / g * g
    }
}

/// How many members of `role` node `ix` can take now (before slice rounding).
#[inline(always)]
pub(crate) fn node_fit(inv: &Inventory, role: &CRole, ix: usize, taken: Option<&[u64]>) -> u32 {
    if !role.eligible.get(ix) || !role.missing.is_empty() {
        return 0;
    }
    fit_eligible(inv, role, ix, taken)
}

/// [`node_fit`] for a node already known to match the role's labels and taints.
#[inline(always)]
fn fit_eligible(inv: &Inventory, role: &CRole, ix: usize, taken: Option<&[u64]>) -> u32 {
    if !inv.schedulable.get(ix) {
        return 0;
    }
    let mut f = role.cap_on(ix as u32);
    let nres = inv.resources.len();
    for &(r, q) in &role.req {
        let mut free = inv.free[r as usize][ix];
        if let Some(t) = taken {
            free = free.saturating_sub(t[ix * nres + r as usize]);
        }
        // Most nodes of a busy cluster cannot take one member: skip the division.
        if free < q {
            return 0;
        }
        let k = free / q;
        if k < u64::from(f) {
            f = k as u32;
        }
    }
    f
}

/// Fills `s.fits` for every node in `scope` and `s.caps` for every domain inside it,
/// returning the scope's capacity. Domains whose summary shows that no node can take a
/// member are skipped without touching their nodes.
pub(crate) fn rollup(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    scope: Scope,
    taken: Option<&[u64]>,
    s: &mut Scratch,
) -> u64 {
    s.ensure(inv);
    let l = inv.label_depth();
    if scope.depth > l {
        let ix = scope.index as usize;
        let in_slice = inv.leaf_depth(scope.index) >= grain.min_leaf;
        let f = if in_slice {
            round_down(u64::from(node_fit(inv, role, ix, taken)), grain.at(l + 1))
        } else {
            0
        };
        s.fits[ix] = f as u32;
        return f;
    }
    // Zero the caps of every domain inside the scope (they are contiguous per depth).
    let (start, end) = scope.range(inv);
    for d in scope.depth..=l {
        let level = &inv.domains[d];
        let lo = level.partition_point(|x| x.start < start);
        let hi = level.partition_point(|x| x.start < end);
        s.caps[d][lo..hi].fill(0);
    }
    rollup_domain(
        inv,
        role,
        grain,
        scope.depth,
        scope.index as usize,
        taken,
        s,
    )
}

fn rollup_domain(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    depth: usize,
    di: usize,
    taken: Option<&[u64]>,
    s: &mut Scratch,
) -> u64 {
    let dom = inv.domains[depth][di];
    // Skip domains no node of which could take a member: by the free summaries, or
    // because no node in the range matches the role's labels (a word-wise test).
    let prunable = !role.missing.is_empty()
        || role
            .req
            .iter()
            .any(|&(r, q)| inv.summary(depth, di, r as usize).max < q)
        || !role.eligible.any_in(dom.start as usize, dom.end as usize);
    if prunable {
        s.fits[dom.start as usize..dom.end as usize].fill(0);
        return 0;
    }
    let l = inv.label_depth();
    let mut cap = 0u64;
    if depth < l {
        for c in dom.child_start..dom.child_end {
            let v = rollup_domain(inv, role, grain, depth + 1, c as usize, taken, s);
            s.caps[depth + 1][c as usize] = v;
            cap += v;
        }
    }
    let (direct, end) = (dom.direct as usize, dom.end as usize);
    if depth >= grain.min_leaf {
        let node_grain = grain.at(l + 1);
        let fits = &mut s.fits[direct..end];
        for (ix, out) in (direct..end).zip(fits.iter_mut()) {
            let f = if role.eligible.get(ix) {
                round_down(u64::from(fit_eligible(inv, role, ix, taken)), node_grain)
            } else {
                0
            };
            *out = f as u32;
            cap += f;
        }
    } else {
        s.fits[direct..end].fill(0);
    }
    let cap = round_down(cap, grain.floor_at(depth));
    s.caps[depth][di] = cap;
    cap
}

/// Capacity of a scope after [`rollup`] has filled the scratch.
pub(crate) fn cap_of(inv: &Inventory, scope: Scope, s: &Scratch) -> u64 {
    if scope.depth > inv.label_depth() {
        u64::from(s.fits[scope.index as usize])
    } else {
        s.caps[scope.depth][scope.index as usize]
    }
}
