//! Single-role capacity of every domain: per-node fits summed level by level.
//!
//! A node's *contribution* is how many members of the role it can take: the least over
//! requested resources of `free / request`, capped by `max_per_node`;
//! zero when the node is ineligible or (for sliced roles) outside the innermost slice
//! level; rounded down to the node-level slice size if there is one. A domain's capacity
//! is the sum of its children's and its direct nodes', rounded down to its slice size
//! when it is a slice level. This is exact for one role.

use crate::compile::{CRole, Compiled};
use crate::inventory::domains::Scope;
use crate::inventory::ix::{Depth, NodeIx};
use crate::inventory::Inventory;

use super::profile::Profile;

/// One role's capacities: how many members each node can take (`fits`, by node) and
/// each domain (`caps[depth][domain]`), as a roll-up computes them or the cache lends
/// them.
#[derive(Debug, Default)]
pub(crate) struct Capacities {
    layout: u64,
    pub fits: Vec<u32>,
    pub caps: Vec<Vec<u64>>,
    /// `[depth][domain * width + k]`: the largest capacity of a unit at depth
    /// `depth + 1 + k` inside the domain (`width` = node depth − depth); see
    /// [`peaks`](super::peaks). Only the cache's entries keep them current.
    pub peaks: Vec<Vec<u64>>,
    /// `[depth][domain]`: the domain's profile of fits (see
    /// [`profile`](super::profile)), sized and current only when `profiled` (only in
    /// the cache's entries, once the objective asked for them).
    pub profiles: Vec<Vec<Profile>>,
    pub profiled: bool,
    /// The deepest label level's capacities in order ([`Index`](super::index::Index)),
    /// kept only by the cache's entries.
    pub index: super::index::Index,
}

impl Capacities {
    /// Sizes the arrays for `inv` (a no-op when already sized for its layout).
    pub fn ensure(&mut self, inv: &Inventory) {
        if self.layout == inv.layout_id
            && self.fits.len() == inv.len()
            && self.caps.len() == inv.domains.len()
            && self.peaks.len() == inv.domains.len()
        {
            return;
        }
        self.layout = inv.layout_id;
        self.fits = vec![0; inv.len()];
        self.caps = inv.domains.iter().map(|l| vec![0; l.len()]).collect();
        let nd = inv.domains.len() + 1;
        self.peaks = inv
            .domains
            .iter()
            .enumerate()
            .map(|(d, l)| vec![0; l.len() * (nd - d)])
            .collect();
        self.profiles = Vec::new();
        self.profiled = false;
    }

    /// Node `n`'s fit.
    #[inline(always)]
    pub fn fit(&self, n: NodeIx) -> u32 {
        self.fits[n.ix()]
    }

    /// Capacity of domain `index` at label depth `depth`.
    #[inline(always)]
    pub fn at(&self, depth: Depth, index: u32) -> u64 {
        self.caps[depth.ix()][index as usize]
    }

    /// Capacity of a scope (a domain, or a node at the node level).
    pub fn of(&self, inv: &Inventory, scope: Scope) -> u64 {
        if inv.is_node_level(scope.depth) {
            u64::from(self.fit(scope.node()))
        } else {
            self.at(scope.depth, scope.index)
        }
    }

    /// The capacity of every scope at `depth`, in order, appended to `out`.
    pub fn copy_level(&self, inv: &Inventory, depth: Depth, out: &mut Vec<u64>) {
        if inv.is_node_level(depth) {
            out.extend(self.fits.iter().map(|&f| u64::from(f)));
        } else {
            out.extend_from_slice(&self.caps[depth.ix()]);
        }
    }
}

/// Slice arithmetic for one role: granularity per depth and the shallowest leaf allowed.
#[derive(Clone, Copy)]
pub(crate) struct Grain<'a> {
    pub gran: &'a [u64],
    pub min_leaf: Depth,
    /// `(depth, size)` of each slice level.
    pub floors: &'a [(usize, u32)],
}

impl<'a> Grain<'a> {
    /// No slices: every domain takes any number of members.
    pub const NONE: Grain<'static> = Grain {
        gran: &[],
        min_leaf: Depth::CLUSTER,
        floors: &[],
    };

    /// The grain of `role` in `c`: slices apply to constrained roles only.
    pub fn of(c: &'a Compiled, role: &CRole) -> Grain<'a> {
        if role.constrained && c.has_slices() {
            Grain {
                gran: &c.gran,
                min_leaf: Depth(c.slice_min_leaf),
                floors: &c.slices,
            }
        } else {
            Grain::NONE
        }
    }

    /// Members given to a domain at `depth` come in multiples of this.
    #[inline]
    pub fn at(&self, depth: Depth) -> u64 {
        self.gran.get(depth.ix()).copied().unwrap_or(1)
    }

    /// A domain's capacity at `depth` is rounded down to a multiple of this (its slice
    /// size when `depth` is a slice level, else 1).
    pub fn floor_at(&self, depth: Depth) -> u64 {
        self.floors
            .iter()
            .find(|&&(d, _)| d == depth.ix())
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

/// A fit rounded down to the node-level grain `g` (still a fit: never larger).
#[inline]
pub(crate) fn round_fit(fit: u32, g: u64) -> u32 {
    if g <= 1 {
        fit
    } else {
        // At most `fit`, so it fits a u32 again.
        (u64::from(fit) / g * g) as u32
    }
}

/// How many members of `role` node `n` can take now (before slice rounding).
#[inline(always)]
pub(crate) fn node_fit(inv: &Inventory, role: &CRole, n: NodeIx, taken: Option<&[u64]>) -> u32 {
    if !role.eligible.get(n.ix()) || !role.missing.is_empty() {
        return 0;
    }
    fit_eligible(inv, role, n.ix(), taken)
}

/// [`node_fit`] for a node already known to match the role's labels and taints, by its
/// column index (the roll-up's loop variable: a round trip through [`NodeIx`] would
/// make the compiler truncate and re-extend it on every node).
#[inline(always)]
fn fit_eligible(inv: &Inventory, role: &CRole, ix: usize, taken: Option<&[u64]>) -> u32 {
    if !inv.schedulable.get(ix) {
        return 0;
    }
    let mut f = role.cap_on(NodeIx::at(ix));
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
            // Below a u32, so exact.
            f = k as u32;
        }
    }
    f
}

/// Fills `out.fits` for every node in `scope` and `out.caps` for every domain inside
/// it, returning the scope's capacity. Domains whose summary shows that no node can take
/// a member are skipped without touching their nodes.
pub(crate) fn rollup(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    scope: Scope,
    taken: Option<&[u64]>,
    out: &mut Capacities,
) -> u64 {
    out.ensure(inv);
    if inv.is_node_level(scope.depth) {
        let n = scope.node();
        let f = if inv.reaches(n, grain.min_leaf) {
            round_fit(node_fit(inv, role, n, taken), grain.at(inv.node_depth()))
        } else {
            0
        };
        out.fits[n.ix()] = f;
        return u64::from(f);
    }
    // Zero the caps of every domain inside the scope (they are contiguous per depth).
    let (start, end) = scope.range(inv);
    for (level, caps) in inv.domains.iter().zip(&mut out.caps).skip(scope.depth.ix()) {
        let lo = level.partition_point(|x| x.start < start);
        let hi = level.partition_point(|x| x.start < end);
        caps[lo..hi].fill(0);
    }
    dispatch::<false>(inv, role, grain, scope, taken, out, |_, _, _, _, _| {})
}

/// Writes domain `di`'s peak row at `depth` from its children's and the largest fit of
/// its direct nodes (the cache passes [`peaks::write_row`](super::peaks::write_row);
/// this module sits below the peaks).
pub(crate) type RowWriter = fn(&Inventory, Depth, u32, u64, &mut Capacities);

/// [`rollup`] over the whole cluster that also fills every domain's peak row as it goes,
/// with `row`, once the domain's children are done (the cache's full roll-up: one pass
/// over the nodes instead of a second one for the peaks).
pub(crate) fn rollup_with_peaks(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    out: &mut Capacities,
    row: RowWriter,
) -> u64 {
    out.ensure(inv);
    // Every cap and every peak row is written below except those of the domains inside
    // a pruned one (and the pruned one's peaks): zero them all first.
    for caps in &mut out.caps {
        caps.fill(0);
    }
    for peaks in &mut out.peaks {
        peaks.fill(0);
    }
    dispatch::<true>(inv, role, grain, Scope::CLUSTER, None, out, row)
}

/// Picks the node loop for `role` once, then rolls up the domain `scope`.
fn dispatch<const PEAKS: bool>(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    scope: Scope,
    taken: Option<&[u64]>,
    out: &mut Capacities,
    row: RowWriter,
) -> u64 {
    let node_grain = grain.at(inv.node_depth());
    // The dense loop reads the eligible set word by word over the inventory's nodes: a
    // role compiled for another layout (a set of another length) goes node by node.
    let plain = taken.is_none()
        && role.node_caps.is_empty()
        && node_grain <= 1
        && role.eligible.len() == inv.len()
        && inv.schedulable.len() == inv.len();
    let (depth, di) = (scope.depth, scope.index);
    macro_rules! fast {
        ($n:literal) => {{
            let k = Dense::<$n>::new(inv, role);
            rollup_domain::<_, PEAKS>(inv, role, grain, depth, di, &k, out, row)
        }};
    }
    match role.req.len() {
        0 if plain => fast!(0),
        1 if plain => fast!(1),
        2 if plain => fast!(2),
        3 if plain => fast!(3),
        4 if plain => fast!(4),
        _ => {
            let k = ByNode { taken, node_grain };
            rollup_domain::<_, PEAKS>(inv, role, grain, depth, di, &k, out, row)
        }
    }
}

/// The node loop over one domain's direct nodes: writes their fits, returns their sum
/// and their largest fit.
trait Direct {
    fn direct(
        &self,
        inv: &Inventory,
        role: &CRole,
        nodes: std::ops::Range<usize>,
        fits: &mut [u32],
    ) -> (u64, u32);
}

/// Node by node ([`fit_eligible`]): any request, taken capacity, per-node caps and a
/// node-level grain.
struct ByNode<'t> {
    taken: Option<&'t [u64]>,
    node_grain: u64,
}

impl Direct for ByNode<'_> {
    #[inline]
    fn direct(
        &self,
        inv: &Inventory,
        role: &CRole,
        nodes: std::ops::Range<usize>,
        fits: &mut [u32],
    ) -> (u64, u32) {
        let (mut sum, mut max) = (0u64, 0u32);
        for (ix, fit) in nodes.zip(fits.iter_mut()) {
            let f = if role.eligible.get(ix) {
                round_down(
                    u64::from(fit_eligible(inv, role, ix, self.taken)),
                    self.node_grain,
                )
            } else {
                0
            };
            // At most the node's fit, a u32 (summed as a u64: no extension per node).
            *fit = f as u32;
            sum += f;
            max = max.max(f as u32);
        }
        (sum, max)
    }
}

/// `n / q` for one `q ≥ 1` fixed ahead: a multiplication and two shifts instead of a
/// division, exact for every `n: u64` (Granlund and Montgomery's method with the
/// multiplier rounded up, `m = ⌊2⁶⁴ (2ˡ − q) / q⌋ + 1` for `l = ⌈log₂ q⌉`:
/// `n / q = (t + (n − t) / 2) >> (l − 1)` with `t` the high word of `m · n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Recip {
    m: u64,
    s1: u32,
    s2: u32,
}

impl Recip {
    /// The reciprocal of `q` (`q` of zero is taken as one).
    pub fn new(q: u64) -> Recip {
        if q <= 1 {
            // t = 0, (0 + n) >> 0 = n.
            return Recip { m: 0, s1: 0, s2: 0 };
        }
        // 1..=64; 2^(l-1) < q <= 2^l.
        let l = 64 - (q - 1).leading_zeros();
        let q128 = u128::from(q);
        // (2^l - q) < q, so the quotient is below 2^64 (and is no more than 2^64 - 1
        // once one is added: 2^l / q < 2 − 2^-63 for every q > 1).
        let m = ((((1u128 << l) - q128) << 64) / q128 + 1) as u64;
        Recip {
            m,
            s1: 1,
            s2: l - 1,
        }
    }

    /// `n / q`.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        let t = ((u128::from(n) * u128::from(self.m)) >> 64) as u64;
        // t <= n, and t + (n - t) / 2 <= n: neither wraps.
        (t + ((n - t) >> self.s1)) >> self.s2
    }
}

/// The dense loop for `N` requested resources, no taken capacity, no per-node caps and
/// no node-level grain: eligibility (the role's labels and taints, and the node
/// schedulable) a word of 64 nodes at a time, each resource's free column read with its
/// request's [`Recip`], branch-free within a word.
struct Dense<'a, const N: usize> {
    cols: [(&'a [u64], Recip); N],
    eligible: &'a [u64],
    schedulable: &'a [u64],
    per_node: u64,
}

impl<'a, const N: usize> Dense<'a, N> {
    fn new(inv: &'a Inventory, role: &'a CRole) -> Self {
        debug_assert_eq!(role.req.len(), N);
        let cols = std::array::from_fn(|k| {
            let (r, q) = role.req[k];
            (inv.free[r as usize].as_slice(), Recip::new(q))
        });
        Dense {
            cols,
            eligible: role.eligible.words(),
            schedulable: inv.schedulable.words(),
            per_node: u64::from(role.per_node),
        }
    }
}

impl<const N: usize> Direct for Dense<'_, N> {
    #[inline]
    fn direct(
        &self,
        _: &Inventory,
        _: &CRole,
        nodes: std::ops::Range<usize>,
        fits: &mut [u32],
    ) -> (u64, u32) {
        let (a, b) = (nodes.start, nodes.end);
        // Invariant of the index arithmetic below: `fits` is the range's, and every
        // column and bitset covers the range (checked once here, not per node).
        assert_eq!(fits.len(), b.saturating_sub(a));
        if a >= b {
            return (0, 0);
        }
        assert!(self.eligible.len() * 64 >= b && self.schedulable.len() * 64 >= b);
        let cols: [(&[u64], Recip); N] = self.cols.map(|(c, r)| (&c[a..b], r));
        let (mut sum, mut max) = (0u64, 0u64);
        let mut lo = a;
        while lo < b {
            // The part of the range in word `w`: nodes lo..hi.
            let w = lo / 64;
            let hi = b.min(w * 64 + 64);
            let word = (self.eligible[w] & self.schedulable[w]) >> (lo % 64);
            let seg = &mut fits[lo - a..hi - a];
            if word == 0 {
                seg.fill(0);
            } else {
                let at = lo - a;
                for (k, fit) in seg.iter_mut().enumerate() {
                    let mut f = self.per_node;
                    for (c, r) in &cols {
                        f = f.min(r.div(c[at + k]));
                    }
                    // All ones when the node is eligible and schedulable, else zero.
                    f &= 0u64.wrapping_sub((word >> k) & 1);
                    *fit = f as u32;
                    sum += f;
                    max = max.max(f);
                }
            }
            lo = hi;
        }
        (sum, max as u32)
    }
}

/// Capacity of domain `di` at `depth`, filling its nodes' fits and its descendants'
/// capacities (and, with `PEAKS`, their peak rows). (Plain reference parameters rather
/// than a context struct: the compiler then knows the stores to `out` cannot change the
/// inventory or the role, and keeps their columns in registers in the node loop.)
#[allow(clippy::too_many_arguments)]
fn rollup_domain<D: Direct, const PEAKS: bool>(
    inv: &Inventory,
    role: &CRole,
    grain: Grain<'_>,
    depth: Depth,
    di: u32,
    k: &D,
    out: &mut Capacities,
    row: RowWriter,
) -> u64 {
    let dom = inv.domain(depth, di);
    // Skip domains no node of which could take a member: by the free summaries, or
    // because no node in the range matches the role's labels (a word-wise test).
    let prunable = !role.missing.is_empty()
        || role
            .req
            .iter()
            .any(|&(r, q)| inv.summary(depth.ix(), di as usize, r as usize).max < q)
        || !role.eligible.any_in(dom.start as usize, dom.end as usize);
    if prunable {
        out.fits[dom.nodes()].fill(0);
        return 0;
    }
    let mut cap = 0u64;
    let child = depth.child();
    if !inv.is_node_level(child) {
        for c in dom.child_start..dom.child_end {
            let v = rollup_domain::<D, PEAKS>(inv, role, grain, child, c, k, out, row);
            out.caps[child.ix()][c as usize] = v;
            cap += v;
        }
    }
    let direct = dom.direct_nodes();
    let mut largest = 0;
    if depth >= grain.min_leaf {
        let (sum, max) = k.direct(inv, role, direct.clone(), &mut out.fits[direct]);
        cap += sum;
        largest = max;
    } else {
        out.fits[direct].fill(0);
    }
    let cap = round_down(cap, grain.floor_at(depth));
    out.caps[depth.ix()][di as usize] = cap;
    if PEAKS {
        row(inv, depth, di, u64::from(largest), out);
    }
    cap
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::CompiledGang;
    use crate::request::Requirement;
    use crate::HOSTNAME_LEVEL;
    use crate::{Error, Gang, NodeSpec, Quantity, Role, Taint, TaintEffect, Topology};

    use crate::testkit::on_path;

    const GPU: &str = "gpu";

    /// Two blocks, three racks, a node with a block but no rack (direct in block b1) and
    /// a node with no topology label at all (direct in the cluster). Free GPUs:
    /// a1 8, a2 1, b1 4, x1 6, z1 3, n1 8.
    fn cluster() -> Inventory {
        let n = |name: &str, path: &[&str], cap: i64, used: i64| {
            on_path(name, path).capacity(GPU, cap).used(GPU, used)
        };
        Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes([
                n("n1", &[], 8, 0),
                n("z1", &["b2", "c"], 3, 0),
                n("x1", &["b1"], 8, 2),
                n("b1", &["b1", "b"], 4, 0),
                n("a2", &["b1", "a"], 8, 7),
                n("a1", &["b1", "a"], 8, 0),
            ])
            .build()
            .unwrap()
    }

    fn ix(inv: &Inventory, name: &str) -> usize {
        inv.names.get_index_of(name).unwrap()
    }

    fn dom(inv: &Inventory, path: &[&str]) -> usize {
        let d = path.len();
        (0..inv.domains[d].len())
            .find(|&i| inv.domain_values(d, i as u32) == path)
            .unwrap()
    }

    fn compile(inv: &Inventory, gang: Gang) -> CompiledGang {
        inv.compile(&gang).unwrap()
    }

    /// Cluster-wide roll-up of role 0 of `gang` into a fresh scratch.
    fn roll(inv: &Inventory, gang: Gang, s: &mut Capacities) -> u64 {
        let cg = compile(inv, gang);
        let c = &cg.inner;
        rollup(
            inv,
            &c.roles[0],
            Grain::of(c, &c.roles[0]),
            Scope::CLUSTER,
            None,
            s,
        )
    }

    fn fits(inv: &Inventory, s: &Capacities, names: &[&str]) -> Vec<u32> {
        names.iter().map(|n| s.fits[ix(inv, n)]).collect()
    }

    const NAMES: [&str; 6] = ["a1", "a2", "b1", "x1", "z1", "n1"];

    #[test]
    fn capacity_is_the_sum_of_node_fits_level_by_level() {
        let inv = cluster();
        let mut s = Capacities::default();
        let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 2));
        // Fits for 2 GPUs each: a1 4, a2 0, b1 2, x1 3, z1 1, n1 4.
        assert_eq!(roll(&inv, gang, &mut s), 14);
        assert_eq!(fits(&inv, &s, &NAMES), [4, 0, 2, 3, 1, 4]);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "a"])], 4);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "b"])], 2);
        assert_eq!(s.caps[2][dom(&inv, &["b2", "c"])], 1);
        // Block b1 = its racks (4 + 2) + its direct node x1 (3).
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 9);
        assert_eq!(s.caps[1][dom(&inv, &["b2"])], 1);
        // The cluster adds the unlabelled n1.
        assert_eq!(s.caps[0][0], 14);
        assert_eq!(s.of(&inv, Scope::CLUSTER), 14);
        let rack_a = Scope::new(Depth(2), dom(&inv, &["b1", "a"]) as u32);
        assert_eq!(s.of(&inv, rack_a), 4);
        let a1 = Scope::new(Depth(3), ix(&inv, "a1") as u32);
        assert_eq!(s.of(&inv, a1), 4);
    }

    #[test]
    fn the_binding_resource_differs_per_node() -> Result<(), Error> {
        let inv = Inventory::builder(Topology::new(["rack"])?)
            .nodes([
                // cpu-bound: 8 GPUs but 3 CPUs.
                NodeSpec::new("p")
                    .label("rack", "r")
                    .capacity(GPU, 8)
                    .capacity("cpu", "3"),
                // gpu-bound: 1 GPU, 64 CPUs.
                NodeSpec::new("q")
                    .label("rack", "r")
                    .capacity(GPU, 1)
                    .capacity("cpu", 64),
                // cpu-bound on a fraction: 2.5 CPUs take 2 members, not 3.
                NodeSpec::new("r")
                    .label("rack", "r")
                    .capacity(GPU, 8)
                    .capacity("cpu", "2500m"),
                // no cpu at all.
                NodeSpec::new("s").label("rack", "r").capacity(GPU, 8),
            ])
            .build()?;
        let mut s = Capacities::default();
        let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1).request("cpu", "1"));
        assert_eq!(roll(&inv, gang, &mut s), 3 + 1 + 2);
        assert_eq!(fits(&inv, &s, &["p", "q", "r", "s"]), [3, 1, 2, 0]);
        assert_eq!(s.caps[1][0], 6);
        Ok(())
    }

    #[test]
    fn max_per_node_caps_every_node() {
        let inv = cluster();
        let mut s = Capacities::default();
        let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1).max_per_node(3));
        // Free a1 8, a2 1, b1 4, x1 6, z1 3, n1 8: capped at 3 each.
        assert_eq!(roll(&inv, gang, &mut s), 3 + 1 + 3 + 3 + 3 + 3);
        assert_eq!(fits(&inv, &s, &NAMES), [3, 1, 3, 3, 3, 3]);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 10);
    }

    #[test]
    fn excluded_nodes_contribute_nothing() -> Result<(), Error> {
        let node = |n: &str| NodeSpec::new(n).label("rack", "r").capacity(GPU, 4);
        let inv = Inventory::builder(Topology::new(["rack"])?)
            .nodes([
                node("ok").label("kind", "train"),
                node("other").label("kind", "serve"),
                node("tainted").label("kind", "train").taint(Taint::new(
                    "dedicated",
                    "x",
                    TaintEffect::NoSchedule,
                )),
                node("soft").label("kind", "train").taint(Taint::new(
                    "dedicated",
                    "x",
                    TaintEffect::PreferNoSchedule,
                )),
                node("cordoned").label("kind", "train").cordoned(),
            ])
            .build()?;
        let mut s = Capacities::default();
        let gang = Gang::new("g").role(Role::new("w", 1).request(GPU, 1).selector("kind", "train"));
        // Selector excludes `other`, the taint `tainted`, the cordon `cordoned`;
        // PreferNoSchedule excludes nothing.
        assert_eq!(roll(&inv, gang, &mut s), 8);
        let names = ["ok", "other", "tainted", "soft", "cordoned"];
        assert_eq!(fits(&inv, &s, &names), [4, 0, 0, 4, 0]);
        Ok(())
    }

    #[test]
    fn empty_eligibility_and_missing_resources_clear_stale_fits() {
        let inv = cluster();
        let mut s = Capacities::default();
        let small = Gang::new("g").role(Role::new("w", 1).request(GPU, 1));
        assert_eq!(roll(&inv, small.clone(), &mut s), 30);
        // A selector no node matches: the same scratch is overwritten with zeros.
        let nobody =
            Gang::new("g").role(Role::new("w", 1).request(GPU, 1).selector("kind", "none"));
        assert_eq!(roll(&inv, nobody, &mut s), 0);
        assert!(s.fits.iter().all(|&f| f == 0), "{:?}", s.fits);
        assert!(s.caps.iter().flatten().all(|&c| c == 0), "{:?}", s.caps);
        // Matched again, then a resource no node offers.
        assert_eq!(roll(&inv, small, &mut s), 30);
        let missing = Gang::new("g").role(Role::new("w", 1).request(GPU, 1).request("tpu", 1));
        assert_eq!(roll(&inv, missing, &mut s), 0);
        assert!(s.fits.iter().all(|&f| f == 0), "{:?}", s.fits);
        assert!(s.caps.iter().flatten().all(|&c| c == 0), "{:?}", s.caps);
        // DoesNotExist on a label every node lacks matches every node.
        let all = Gang::new("g").role(
            Role::new("w", 1)
                .request(GPU, 1)
                .requirement(Requirement::does_not_exist("kind")),
        );
        assert_eq!(roll(&inv, all, &mut s), 30);
    }

    #[test]
    fn a_domain_pruned_by_its_summary_has_its_fits_zeroed() {
        let inv = cluster();
        let mut s = Capacities::default();
        let two = Gang::new("g").role(Role::new("w", 1).request(GPU, 2));
        roll(&inv, two, &mut s);
        assert_eq!(s.fits[ix(&inv, "b1")], 2);
        // 5 GPUs: rack b1/b's largest node has 4 free, so the rack is skipped without
        // visiting b1, but b1's fit from the previous role must not survive.
        let five = Gang::new("g").role(Role::new("w", 1).request(GPU, 5));
        // a1 1, x1 1, n1 1; the rest 0.
        assert_eq!(roll(&inv, five, &mut s), 3);
        assert_eq!(fits(&inv, &s, &NAMES), [1, 0, 0, 1, 0, 1]);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "b"])], 0);
        assert_eq!(s.caps[2][dom(&inv, &["b2", "c"])], 0);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 2);
    }

    #[test]
    fn taken_is_charged_before_dividing_and_saturates() {
        let inv = cluster();
        let mut s = Capacities::default();
        s.ensure(&inv);
        let cg = compile(&inv, Gang::new("g").role(Role::new("w", 1).request(GPU, 2)));
        let role = &cg.inner.roles[0];
        let nres = inv.resources.len();
        let mut taken = vec![0u64; inv.len() * nres];
        taken[ix(&inv, "a1") * nres] = 5000; // a1: 8 - 5 = 3 free, one member of 2
        taken[ix(&inv, "b1") * nres] = 9000; // more than b1 has: zero, not a wrap
        let cap = rollup(
            &inv,
            role,
            Grain::NONE,
            Scope::CLUSTER,
            Some(&taken),
            &mut s,
        );
        assert_eq!(fits(&inv, &s, &NAMES), [1, 0, 0, 3, 1, 4]);
        assert_eq!(cap, 9);
        assert_eq!(
            node_fit(&inv, role, NodeIx::at(ix(&inv, "a1")), Some(&taken)),
            1
        );
        assert_eq!(node_fit(&inv, role, NodeIx::at(ix(&inv, "a1")), None), 4);
    }

    #[test]
    fn slices_round_domains_and_exclude_nodes_outside_the_slice_level() {
        let inv = cluster();
        let mut s = Capacities::default();
        let gang = Gang::new("g")
            .role(Role::new("w", 2).request(GPU, 1))
            .required("block")
            .slice("rack", 2);
        // Fits for 1 GPU: a1 8, a2 1, b1 4, x1 6 (no rack: excluded), z1 3, n1 8
        // (no block: excluded). Racks: a 9 -> 8, b 4, c 3 -> 2.
        assert_eq!(roll(&inv, gang.clone(), &mut s), 14);
        // Node-level fits are not rounded (no slice at the node level).
        assert_eq!(fits(&inv, &s, &NAMES), [8, 1, 4, 0, 3, 0]);
        assert_eq!(s.caps[2][dom(&inv, &["b1", "a"])], 8);
        assert_eq!(s.caps[2][dom(&inv, &["b2", "c"])], 2);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 12);
        assert_eq!(s.caps[1][dom(&inv, &["b2"])], 2);
        // A node-scope roll-up of a node outside the slice level is zero too.
        let cg = compile(&inv, gang);
        let c = &cg.inner;
        let x1 = Scope::new(Depth(3), ix(&inv, "x1") as u32);
        let grain = Grain::of(c, &c.roles[0]);
        assert_eq!(rollup(&inv, &c.roles[0], grain, x1, None, &mut s), 0);
        let a2 = Scope::new(Depth(3), ix(&inv, "a2") as u32);
        assert_eq!(rollup(&inv, &c.roles[0], grain, a2, None, &mut s), 1);
    }

    #[test]
    fn a_node_level_slice_rounds_each_node() -> Result<(), Error> {
        let inv = Inventory::builder(Topology::new(["rack", HOSTNAME_LEVEL])?)
            .nodes([
                NodeSpec::new("a1").label("rack", "a").capacity(GPU, 3),
                NodeSpec::new("a2").label("rack", "a").capacity(GPU, 1),
                NodeSpec::new("a3").label("rack", "a").capacity(GPU, 4),
                // No rack label: a node-level slice does not need one.
                NodeSpec::new("u").capacity(GPU, 5),
            ])
            .build()?;
        let mut s = Capacities::default();
        let gang = Gang::new("g")
            .role(Role::new("w", 2).request(GPU, 1))
            .slice(HOSTNAME_LEVEL, 2);
        assert_eq!(roll(&inv, gang.clone(), &mut s), 2 + 4 + 4);
        assert_eq!(fits(&inv, &s, &["a1", "a2", "a3", "u"]), [2, 0, 4, 4]);
        assert_eq!(s.caps[1][0], 6);
        let cg = compile(&inv, gang);
        let c = &cg.inner;
        let a1 = Scope::new(Depth(2), ix(&inv, "a1") as u32);
        let grain = Grain::of(c, &c.roles[0]);
        assert_eq!(rollup(&inv, &c.roles[0], grain, a1, None, &mut s), 2);
        Ok(())
    }

    #[test]
    fn a_scoped_rollup_leaves_other_domains_alone() {
        let inv = cluster();
        let mut s = Capacities::default();
        let cg = compile(&inv, Gang::new("g").role(Role::new("w", 1).request(GPU, 1)));
        let role = &cg.inner.roles[0];
        assert_eq!(
            rollup(&inv, role, Grain::NONE, Scope::CLUSTER, None, &mut s),
            30
        );
        // Charge all of a1, then roll up rack b1/a only.
        let nres = inv.resources.len();
        let mut taken = vec![0u64; inv.len() * nres];
        taken[ix(&inv, "a1") * nres] = 8000;
        let rack_a = dom(&inv, &["b1", "a"]);
        let scope = Scope::new(Depth(2), rack_a as u32);
        assert_eq!(scope.range(&inv), (0, 2));
        assert_eq!(
            rollup(&inv, role, Grain::NONE, scope, Some(&taken), &mut s),
            1
        );
        assert_eq!(s.caps[2][rack_a], 1);
        // Outside the scope, nothing was recomputed.
        assert_eq!(s.caps[2][dom(&inv, &["b1", "b"])], 4);
        assert_eq!(s.caps[1][dom(&inv, &["b1"])], 19);
        assert_eq!(s.fits[ix(&inv, "n1")], 8);
        assert_eq!(Scope::CLUSTER.range(&inv), (0, 6));
        let node = Scope::new(Depth(3), 4);
        assert_eq!(node.range(&inv), (4, 5));
    }

    #[test]
    fn huge_quantities_do_not_overflow() -> Result<(), Error> {
        let huge = Quantity::from_millis(u64::MAX);
        let inv = Inventory::builder(Topology::new(["rack"])?)
            .nodes((1..=3).map(|i| {
                NodeSpec::new(format!("n{i}"))
                    .label("rack", "r")
                    .capacity(GPU, huge)
            }))
            .build()?;
        let mut s = Capacities::default();
        // 1m each: u64::MAX members per node, capped at the u32 fit.
        let tiny = Gang::new("g").role(Role::new("w", 1).request(GPU, "1m"));
        assert_eq!(roll(&inv, tiny, &mut s), 3 * u64::from(u32::MAX));
        assert_eq!(s.caps[1][0], 3 * u64::from(u32::MAX));
        // A request of the whole node: one each.
        let whole = Gang::new("g").role(Role::new("w", 1).request(GPU, huge));
        assert_eq!(roll(&inv, whole, &mut s), 3);
        // max_per_node still caps a node that could take billions.
        let capped = Gang::new("g").role(Role::new("w", 1).request(GPU, "1m").max_per_node(7));
        assert_eq!(roll(&inv, capped, &mut s), 21);
        Ok(())
    }

    #[test]
    fn grain_applies_slices_to_constrained_roles_only() {
        let inv = cluster();
        let cg = compile(
            &inv,
            Gang::new("g")
                .role(Role::new("w", 4).request(GPU, 1))
                .role(Role::new("l", 1).request(GPU, 1).unconstrained())
                .required("block")
                .slice("block", 4)
                .slice("rack", 2),
        );
        let c = &cg.inner;
        let w = Grain::of(c, &c.roles[0]);
        // Cluster and block take multiples of 4, racks of 2, nodes of 1.
        assert_eq!([0, 1, 2, 3, 9].map(|d| w.at(Depth(d))), [4, 4, 2, 1, 1]);
        assert_eq!(
            (
                w.min_leaf,
                w.floor_at(Depth(1)),
                w.floor_at(Depth(2)),
                w.floor_at(Depth(0))
            ),
            (Depth(2), 4, 2, 1)
        );
        let l = Grain::of(c, &c.roles[1]);
        assert!(l.gran.is_empty() && l.floors.is_empty());
        assert_eq!((l.at(Depth(0)), l.min_leaf), (1, Depth(0)));
        assert_eq!(
            (round_down(7, 2), round_down(7, 1), round_down(7, 0)),
            (6, 7, 7)
        );
    }
}

/// The roll-up against a plain node-by-node reference, on random inventories and after
/// lifecycle operations followed through the cache's journal.
#[cfg(test)]
mod reference {
    use super::*;
    use crate::compile::CompiledGang;
    use crate::solve::cache::Cache;
    use crate::solve::mask::NodeMask;
    use crate::solve::peaks;
    use crate::{Gang, NodeSpec, Quantity, Role, Taint, TaintEffect, Topology};
    use proptest::prelude::*;

    const GPU: &str = "gpu";

    /// Every fit node by node (`free / request` with `/`, the node's eligibility,
    /// schedulability, cap and slice level), then every domain from its children and
    /// direct nodes, then the peaks from those (the module's reference [`peaks::fill`]).
    fn reference(inv: &Inventory, role: &CRole, grain: Grain<'_>) -> Capacities {
        let mut out = Capacities::default();
        out.ensure(inv);
        for ix in 0..inv.len() {
            let n = NodeIx::at(ix);
            let ok = role.missing.is_empty()
                && role.eligible.get(ix)
                && inv.schedulable.get(ix)
                && inv.reaches(n, grain.min_leaf);
            let mut f = u64::from(role.cap_on(n));
            for &(r, q) in &role.req {
                f = f.min(inv.free[r as usize][ix] / q);
            }
            let g = grain.at(inv.node_depth());
            out.fits[ix] = if ok { (f / g * g) as u32 } else { 0 };
        }
        for d in (0..inv.domains.len()).rev() {
            for di in 0..inv.domains[d].len() {
                let dom = inv.domain(Depth(d), di as u32);
                let mut cap: u64 = dom.direct_nodes().map(|n| u64::from(out.fits[n])).sum();
                if d + 1 < inv.domains.len() {
                    cap += out.caps[d + 1][dom.children()].iter().sum::<u64>();
                }
                let floor = grain.floor_at(Depth(d));
                out.caps[d][di] = cap / floor * floor;
            }
        }
        peaks::fill(inv, &mut out);
        out
    }

    /// `(zone, block, rack)` values (3: unlabelled from there on), GPUs (capacity, used;
    /// 9: a huge capacity), CPUs in millis (0: none), whether it has the `x` resource,
    /// its kind label (0 train, 1 serve, 2 none), a NoSchedule taint, cordoned.
    type NodeDraw = ((u8, u8, u8), (u8, u8), u32, bool, u8, bool, bool);

    fn node_draw() -> impl Strategy<Value = NodeDraw> {
        (
            (0u8..3, 0u8..4, 0u8..4),
            (0u8..10, 0u8..9),
            prop_oneof![Just(0u32), 1u32..70_000],
            any::<bool>(),
            0u8..3,
            proptest::bool::weighted(0.15),
            proptest::bool::weighted(0.15),
        )
    }

    fn cluster(draws: &[NodeDraw]) -> Inventory {
        let specs = draws.iter().enumerate().map(|(i, d)| {
            let ((z, b, r), (cap, used), cpu, x, kind, tainted, cordoned) = *d;
            let mut s = NodeSpec::new(format!("n{i}"));
            let (zv, bv, rv) = (format!("z{z}"), format!("b{b}"), format!("r{r}"));
            for (key, v, on) in [("zone", zv, z < 3), ("block", bv, z < 3 && b < 3)] {
                if on {
                    s = s.label(key, v);
                }
            }
            if z < 3 && b < 3 && r < 3 {
                s = s.label("rack", rv);
            }
            s = if cap == 9 {
                s.capacity(GPU, Quantity::from_millis(u64::MAX))
            } else {
                s.capacity(GPU, i64::from(cap))
                    .used(GPU, i64::from(used.min(cap)))
            };
            if cpu > 0 {
                s = s.capacity("cpu", Quantity::from_millis(u64::from(cpu)));
            }
            if x {
                s = s.capacity("x", 3);
            }
            if kind < 2 {
                s = s.label("kind", if kind == 0 { "train" } else { "serve" });
            }
            if tainted {
                s = s.taint(Taint::new("dedicated", "x", TaintEffect::NoSchedule));
            }
            if cordoned {
                s = s.cordoned();
            }
            s
        });
        Inventory::builder(Topology::new(["zone", "block", "rack"]).unwrap())
            .nodes(specs)
            .build()
            .unwrap()
    }

    /// GPUs in millis (a huge one too), CPUs in millis (0: none), `x` (0: none; 4: a
    /// resource no node has), max per node (0: none), a `kind` selector, and the
    /// required level with a slice (0: none; 1..=3 zone, block, rack; 4: node level).
    type GangDraw = (u64, u64, u8, u32, bool, u8, u32);

    fn gang_draw() -> impl Strategy<Value = GangDraw> {
        (
            prop_oneof![1u64..4000, Just(1u64), Just(u64::MAX), Just(1u64 << 63)],
            prop_oneof![Just(0u64), 1u64..20_000],
            0u8..5,
            prop_oneof![Just(0u32), 1u32..5],
            any::<bool>(),
            0u8..5,
            1u32..4,
        )
    }

    fn gang(g: &GangDraw, salt: u64) -> Gang {
        let &(gpu, cpu, x, per_node, select, slice, size) = g;
        let gpu = if gpu > 1 << 62 {
            gpu - salt
        } else {
            gpu + salt
        };
        let mut role = Role::new("w", 2).request(GPU, Quantity::from_millis(gpu));
        if cpu > 0 {
            role = role.request("cpu", Quantity::from_millis(cpu));
        }
        match x {
            1..=3 => role = role.request("x", i64::from(x)),
            4 => role = role.request("tpu", 1),
            _ => {}
        }
        if per_node > 0 {
            role = role.max_per_node(per_node);
        }
        if select {
            role = role.selector("kind", "train");
        }
        let mut g = Gang::new("g").role(role);
        let levels = ["zone", "block", "rack", crate::HOSTNAME_LEVEL];
        if (1..=4).contains(&slice) {
            let level = levels[slice as usize - 1];
            g = g.required("zone").slice(level, size);
        }
        g
    }

    /// The reciprocal divides exactly: every `n` against every small `q`, then the
    /// edges of `u64` (powers of two and their neighbours, `u64::MAX`) both ways.
    #[test]
    fn the_reciprocal_divides_exactly_at_the_edges() {
        for q in 1..=300u64 {
            let r = Recip::new(q);
            for n in 0..=3000u64 {
                assert_eq!(r.div(n), n / q, "{n} / {q}");
            }
        }
        let mut edges = vec![0, 1, 2, 3, u64::MAX, u64::MAX - 1, u64::MAX / 2, 1000];
        for k in 1..64 {
            let p = 1u64 << k;
            edges.extend([p - 1, p, p + 1, p.wrapping_mul(3) / 2]);
        }
        for &q in edges.iter().filter(|&&q| q > 0) {
            let r = Recip::new(q);
            for &n in &edges {
                for n in [n, n.wrapping_sub(q), n.wrapping_add(q), q.wrapping_mul(7)] {
                    assert_eq!(r.div(n), n / q, "{n} / {q}");
                }
            }
        }
        assert_eq!(Recip::new(0), Recip::new(1));
    }

    proptest! {
        /// And at random, over the whole range.
        #[test]
        fn the_reciprocal_divides_exactly(q in 1u64.., n in any::<u64>(), k in 0u64..64) {
            prop_assert_eq!(Recip::new(q).div(n), n / q);
            let q = (q >> k).max(1);
            prop_assert_eq!(Recip::new(q).div(n), n / q);
        }
    }

    fn same(a: &Capacities, b: &Capacities) -> Result<(), TestCaseError> {
        prop_assert_eq!(&a.fits, &b.fits);
        prop_assert_eq!(&a.caps, &b.caps);
        prop_assert_eq!(&a.peaks, &b.peaks);
        Ok(())
    }

    /// The cache's lend of `c` (cold or warm), copied out.
    fn lent(cache: &mut Cache, inv: &Inventory, c: &CompiledGang) -> Capacities {
        let mut s = Capacities::default();
        cache.lend(inv, &c.inner, RoleIx(0), &mut s);
        let out = Capacities {
            fits: s.fits.clone(),
            caps: s.caps.clone(),
            peaks: s.peaks.clone(),
            ..Capacities::default()
        };
        cache.give_back(&mut s);
        out
    }

    use crate::compile::RoleIx;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// `rollup` (fits and caps) and `rollup_with_peaks` (and the peaks) equal the
        /// reference, on both node loops (the dense one, and node by node with a
        /// per-node cap, which takes the other), and the cache's cold lend does too.
        #[test]
        fn the_rollup_is_the_node_by_node_reference(
            nodes in proptest::collection::vec(node_draw(), 1..90),
            g in gang_draw(),
        ) {
            let inv = cluster(&nodes);
            let Ok(cg) = inv.compile(&gang(&g, 0)) else {
                return Ok(());
            };
            let c = &cg.inner;
            let role = &c.roles[0];
            let grain = Grain::of(c, role);
            let want = reference(&inv, role, grain);
            let mut got = Capacities::default();
            let cap = rollup_with_peaks(&inv, role, grain, &mut got, peaks::write_row);
            same(&got, &want)?;
            prop_assert_eq!(cap, want.caps[0][0]);
            // A scratch that held another role's numbers, rolled up without peaks.
            let mut plain = Capacities::default();
            rollup(&inv, role, Grain::NONE, Scope::CLUSTER, None, &mut plain);
            let cap = rollup(&inv, role, grain, Scope::CLUSTER, None, &mut plain);
            prop_assert_eq!(cap, want.caps[0][0]);
            prop_assert_eq!(&plain.fits, &want.fits);
            prop_assert_eq!(&plain.caps, &want.caps);
            // Node by node: a per-node cap on node 0 as large as the role's.
            let mut capped = role.clone();
            capped.node_caps = vec![(NodeIx(0), role.per_node)];
            let mut by_node = Capacities::default();
            rollup_with_peaks(&inv, &capped, grain, &mut by_node, peaks::write_row);
            same(&by_node, &want)?;
            let mut cache = Cache::default();
            same(&lent(&mut cache, &inv, &cg), &want)?;
        }

        /// After reserve, release, cordon, uncordon and `set_used` through the journal:
        /// a warm entry, a cold lend of a new shape (the arrays of an evicted entry
        /// reused once the cache is full) and a cold lend outside a node mask all equal
        /// the reference.
        #[test]
        fn the_cache_equals_the_reference_through_the_lifecycle(
            nodes in proptest::collection::vec(node_draw(), 1..60),
            g in gang_draw(),
            ops in proptest::collection::vec((0u8..5, 0usize..60, 0i64..9), 1..12),
            masked in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let mut inv = cluster(&nodes);
            let Ok(cg) = inv.compile(&gang(&g, 0)) else {
                return Ok(());
            };
            let mut cache = Cache::default();
            lent(&mut cache, &inv, &cg);
            let mut held = Vec::new();
            for (salt, &(op, n, v)) in ops.iter().enumerate() {
                let name = format!("n{}", n % nodes.len());
                match op {
                    0 => {
                        let two = Gang::new("t").role(Role::new("w", 2).request(GPU, 1));
                        let p = inv.place(&two).ok().and_then(|o| o.placement().cloned());
                        if let Some(p) = p {
                            held.push(inv.reserve(&p).unwrap());
                        }
                    }
                    1 => {
                        if let Some(id) = held.pop() {
                            inv.release(id).unwrap();
                        }
                    }
                    2 => inv.cordon(&name).unwrap(),
                    3 => inv.uncordon(&name).unwrap(),
                    _ => {
                        let _ = inv.set_used(&name, GPU, v);
                    }
                }
                let cg = inv.compile(&gang(&g, 0)).unwrap();
                let role = &cg.inner.roles[0];
                let want = reference(&inv, role, Grain::of(&cg.inner, role));
                same(&lent(&mut cache, &inv, &cg), &want)?;
                // A new shape each time (salted), cold; after 16 the cache evicts.
                let fresh = inv.compile(&gang(&g, 1 + salt as u64)).unwrap();
                let role = &fresh.inner.roles[0];
                let want = reference(&inv, role, Grain::of(&fresh.inner, role));
                same(&lent(&mut cache, &inv, &fresh), &want)?;
            }
            // Many more new shapes: every cold lend now reuses an evicted entry's arrays.
            for salt in 100..120u64 {
                let fresh = inv.compile(&gang(&g, salt)).unwrap();
                let role = &fresh.inner.roles[0];
                let want = reference(&inv, role, Grain::of(&fresh.inner, role));
                same(&lent(&mut cache, &inv, &fresh), &want)?;
            }
            // Outside a mask, cold: the masked nodes' fits are zero, the caps and peaks
            // above them follow.
            let mut mask = NodeMask::new();
            for &n in &masked {
                mask.insert(&inv, &format!("n{}", n % nodes.len())).unwrap();
            }
            let fresh = inv.compile(&gang(&g, 200)).unwrap();
            let mut outside = inv.clone();
            for &n in mask.nodes() {
                outside.set_schedulable(n as usize, false);
            }
            let role = &fresh.inner.roles[0];
            let want = reference(&outside, role, Grain::of(&fresh.inner, role));
            cache.outside.load(&mask);
            cache.outside.active = true;
            let got = lent(&mut cache, &inv, &fresh);
            cache.outside.active = false;
            same(&got, &want)?;
        }
    }
}
