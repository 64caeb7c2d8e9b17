//! Questions asked outside a set of nodes, on the warm capacity cache: what a backfill
//! pass asks behind a waiting gang (gang-sim, issue 23).
//!
//! [`Inventory::find_outside`] is [`Inventory::find_with`] on the inventory with the
//! nodes of a [`NodeMask`] cordoned, without cordoning them: for a single-role gang the
//! cache lends its arrays with the masked nodes' fits set to zero (each entry remembers
//! which mask its arrays hold, by the mask's generation, and gives the nodes their
//! fits back when it is next lent without it), so nothing goes through the journal and
//! a mask kept for many questions costs its nodes once per entry. Multi-role gangs are
//! asked of a copy with the nodes cordoned (their search reads nodes directly).
//! [`Inventory::add_fitting_nodes`] reads a gang's usable nodes off the cached per-node
//! fits, and [`Inventory::fits_with`] answers "does it fit now?" without building a
//! placement (single-role gangs: a scan of the cached capacities).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::answer::placement::Placement;
use crate::compile::{CompiledGang, RoleIx};
use crate::inventory::ix::Depth;
use crate::inventory::Inventory;
use crate::model::Error;

use super::rollup::Grain;
use super::verdict::Verdict;
use super::Solver;

/// Generations of masks, process-wide: two masks never share one, so an entry that
/// holds a mask's generation holds that mask's nodes.
static GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// A set of nodes of one inventory, for [`Inventory::find_outside`] (and filled by
/// [`Inventory::add_fitting_nodes`]). It names nodes by their place in the inventory's
/// layout: after nodes are added, removed or relabelled, clear it and fill it again.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeMask, NodeSpec, Role, Solver, Topology};
/// let node = |n: &str, gpus| NodeSpec::new(n).label("rack", "a").capacity("gpu", gpus);
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes([node("a1", 8), node("a2", 4), node("a3", 2)])
///     .build()?;
/// let mut solver = Solver::new();
/// // Where a 4-GPU member fits now: a1 and a2.
/// let big = inv.compile(&Gang::new("big").role(Role::new("w", 3).request("gpu", 4)))?;
/// let mut mask = NodeMask::new();
/// inv.add_fitting_nodes(&mut solver, &big, &mut mask)?;
/// assert_eq!(mask.names(&inv).collect::<Vec<_>>(), ["a1", "a2"]);
/// // A 2-GPU job placed on the other nodes only: a3.
/// let small = inv.compile(&Gang::new("small").role(Role::new("w", 1).request("gpu", 2)))?;
/// let p = inv.find_outside(&mut solver, &small, &mask)?.expect("a3 is left");
/// assert_eq!(p.node_counts(), [("a3", 1)]);
/// // Two of them do not fit there (a plain find would use a2).
/// let two = inv.compile(&Gang::new("two").role(Role::new("w", 2).request("gpu", 2)))?;
/// assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
/// assert!(inv.fits_with(&mut solver, &two)?);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct NodeMask {
    /// The layout the positions are of (meaningful when not empty).
    layout: u64,
    /// One bit per node position.
    bits: Vec<u64>,
    /// The positions, in the order added, without repeats.
    nodes: Vec<u32>,
    /// Changes whenever the set does (drawn from [`GENERATION`]).
    generation: u64,
}

impl Default for NodeMask {
    fn default() -> Self {
        NodeMask::new()
    }
}

impl NodeMask {
    /// An empty mask. See [`NodeMask`].
    pub fn new() -> Self {
        NodeMask {
            layout: 0,
            bits: Vec::new(),
            nodes: Vec::new(),
            generation: next_generation(),
        }
    }

    /// Removes every node (keeping the space). See [`NodeMask`].
    pub fn clear(&mut self) {
        for &n in &self.nodes {
            self.bits[n as usize / 64] = 0;
        }
        self.nodes.clear();
        self.generation = next_generation();
    }

    /// The number of nodes in the mask.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the mask holds no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Adds node `name` of `inv`; whether it was not there yet.
    ///
    /// # Errors
    /// [`Error::UnknownNode`] for a name `inv` does not have; [`Error::InvalidRequest`]
    /// when the mask holds nodes of another layout (nodes were added, removed or
    /// relabelled since: clear it first).
    pub fn insert(&mut self, inv: &Inventory, name: &str) -> Result<bool, Error> {
        let ix = inv
            .names
            .get_index_of(name)
            .ok_or_else(|| Error::UnknownNode {
                name: name.to_owned(),
            })?;
        self.adopt(inv)?;
        let new = self.add(ix as u32);
        if new {
            self.generation = next_generation();
        }
        Ok(new)
    }

    /// Whether node `name` of `inv` is in the mask.
    pub fn contains(&self, inv: &Inventory, name: &str) -> bool {
        self.of(inv)
            && inv
                .names
                .get_index_of(name)
                .is_some_and(|ix| self.has(ix as u32))
    }

    /// The names of the nodes in the mask, in the order they were added (nothing when
    /// the mask is of another layout of the inventory).
    pub fn names<'a>(&'a self, inv: &'a Inventory) -> impl Iterator<Item = &'a str> + 'a {
        let ok = self.of(inv);
        self.nodes
            .iter()
            .filter(move |_| ok)
            .filter_map(|&n| inv.names.get_index(n as usize).map(String::as_str))
    }

    /// Whether the positions are of `inv`'s layout (an empty mask is of every layout).
    fn of(&self, inv: &Inventory) -> bool {
        self.nodes.is_empty() || self.layout == inv.layout_id
    }

    /// Takes `inv`'s layout when empty; an error when holding another layout's nodes.
    fn adopt(&mut self, inv: &Inventory) -> Result<(), Error> {
        if !self.of(inv) {
            return Err(stale());
        }
        if self.nodes.is_empty() {
            self.layout = inv.layout_id;
        }
        let words = inv.len().div_ceil(64);
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
        Ok(())
    }

    /// Adds position `n` (the bits sized for it); whether it was new. The caller
    /// draws a new generation when it was.
    fn add(&mut self, n: u32) -> bool {
        let (w, b) = (n as usize / 64, 1u64 << (n % 64));
        if self.bits[w] & b != 0 {
            return false;
        }
        self.bits[w] |= b;
        self.nodes.push(n);
        true
    }

    /// The positions, in the order added.
    pub(crate) fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// Changes whenever the set does.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether position `n` is in the mask.
    #[inline]
    pub(crate) fn has(&self, n: u32) -> bool {
        self.bits
            .get(n as usize / 64)
            .is_some_and(|w| w & (1u64 << (n % 64)) != 0)
    }
}

/// The error for a mask of another layout.
fn stale() -> Error {
    Error::InvalidRequest {
        field: "mask".into(),
        value: String::new(),
        reason: "the mask holds nodes of another layout of the inventory (nodes were \
                 added, removed or relabelled since it was filled): clear it first"
            .into(),
    }
}

/// The cache's copy of the mask queries are asked outside of (kept between queries:
/// copied again only when the mask's generation changes).
#[derive(Debug, Default)]
pub(crate) struct Outside {
    generation: u64,
    mask: Option<NodeMask>,
    /// Whether the lends now are outside the mask.
    pub active: bool,
}

impl Outside {
    /// Holds a copy of `m` (a no-op when it holds that generation already).
    pub(crate) fn load(&mut self, m: &NodeMask) {
        if self.generation != m.generation {
            match &mut self.mask {
                Some(mine) => mine.clone_from(m),
                None => self.mask = Some(m.clone()),
            }
            self.generation = m.generation;
        }
    }

    /// The mask lends must apply now.
    pub fn current(&self) -> Option<&NodeMask> {
        if self.active {
            self.mask.as_ref()
        } else {
            None
        }
    }
}

/// Which mask an entry's arrays hold (generation 0: none).
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub generation: u64,
    pub nodes: Vec<u32>,
}

impl Inventory {
    /// Where a compiled gang goes now on the nodes outside `mask`: the placement
    /// [`Inventory::find_with`] would return on this inventory with every node of
    /// `mask` cordoned, or `None`. Nothing is cordoned, and a single-role gang is
    /// answered from the solver's warm capacity cache (a mask asked about again costs
    /// only what changed). See [`NodeMask`].
    ///
    /// # Errors
    /// As [`Inventory::find_with`]; [`Error::InvalidRequest`] for a mask filled on
    /// another layout of the inventory.
    pub fn find_outside(
        &self,
        solver: &mut Solver,
        gang: &CompiledGang,
        mask: &NodeMask,
    ) -> Result<Option<Placement>, Error> {
        if !mask.of(self) {
            return Err(stale());
        }
        if mask.is_empty() {
            return solver.find(self, gang);
        }
        let fresh = solver.current(self, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        if gang.inner.roles.len() != 1 {
            // The multi-role search reads nodes directly: ask a copy.
            let mut copy = self.clone();
            for &n in &mask.nodes {
                copy.set_schedulable(n as usize, false);
            }
            return Solver::with_limits(solver.limits).find(&copy, gang);
        }
        solver.cache.outside.load(mask);
        solver.cache.outside.active = true;
        let verdict = solver.attempt(self, gang);
        solver.cache.outside.active = false;
        Ok(match verdict {
            Verdict::Placed(found) => Some(solver.placement(self, gang, found)),
            Verdict::NoFit | Verdict::Exhausted => None,
        })
    }

    /// Whether a compiled gang fits now: `find_with(..).is_some()` without building the
    /// placement; a single-role gang is answered by a scan of its cached capacities at
    /// the levels it may use (no objective). See [`NodeMask`].
    ///
    /// # Errors
    /// As [`Inventory::find_with`].
    pub fn fits_with(&self, solver: &mut Solver, gang: &CompiledGang) -> Result<bool, Error> {
        let fresh = solver.current(self, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        let c = &gang.inner;
        if c.roles.len() != 1 {
            return Ok(matches!(solver.attempt(self, gang), Verdict::Placed(_)));
        }
        let role = c.role(RoleIx(0));
        let (count, min) = (u64::from(role.count), u64::from(role.min));
        let step = Grain::of(c, role).at(Depth::CLUSTER);
        // As the domain choice: a domain takes `placed` members, at least `min` and one.
        let takes = |cap: u64| {
            let placed = if step == 1 {
                count.min(cap)
            } else {
                count.min(cap / step * step)
            };
            placed >= min && placed > 0
        };
        let Solver { s, cache, .. } = solver;
        cache.lend(self, c, RoleIx(0), &mut s.caps);
        let caps = &s.caps;
        let fits = c.levels.iter().any(|&t| {
            if self.is_node_level(Depth(t)) {
                caps.fits.iter().any(|&f| takes(u64::from(f)))
            } else {
                caps.caps[t].iter().any(|&cap| takes(cap))
            }
        });
        cache.give_back(&mut s.caps);
        Ok(fits)
    }

    /// Adds to `mask` every node where one member of some role of a compiled gang fits
    /// now (its fit in the role's capacity roll-up is not zero), read off the solver's
    /// warm capacity cache. See [`NodeMask`].
    ///
    /// # Errors
    /// As [`Inventory::find_with`]; [`Error::InvalidRequest`] when `mask` holds nodes of
    /// another layout of the inventory.
    pub fn add_fitting_nodes(
        &self,
        solver: &mut Solver,
        gang: &CompiledGang,
        mask: &mut NodeMask,
    ) -> Result<(), Error> {
        mask.adopt(self)?;
        let fresh = solver.current(self, gang)?;
        let gang = fresh.as_ref().unwrap_or(gang);
        let c = &gang.inner;
        let Solver { s, cache, .. } = solver;
        let mut added = false;
        for r in 0..c.roles.len() {
            // Roles are fewer than u16::MAX (compile checks).
            let role = RoleIx(r as u16);
            cache.lend(self, c, role, &mut s.caps);
            let fits = &s.caps.fits;
            let mut scan = |nodes: std::ops::Range<usize>| {
                for n in nodes.filter(|&n| fits[n] > 0) {
                    added |= mask.add(n as u32);
                }
            };
            let d = self.label_depth();
            if d == 0 || !Grain::of(c, c.role(role)).floors.is_empty() {
                scan(0..self.len());
            } else {
                // Without slice floors a domain's capacity is the sum of its nodes'
                // fits: the deepest level's empty domains are skipped whole (a busy
                // cluster's fits are mostly zero); nodes outside them are read.
                let mut at = 0;
                for (dom, &cap) in self.domains[d].iter().zip(&s.caps.caps[d]) {
                    scan(at..dom.start as usize);
                    if cap > 0 {
                        scan(dom.nodes());
                    }
                    at = dom.end as usize;
                }
                scan(at..self.len());
            }
            cache.give_back(&mut s.caps);
        }
        if added {
            mask.generation = next_generation();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{eight_gpu_nodes as cluster, on_path, GPU};
    use crate::{Gang, Role};

    /// A gang from drawn numbers: `shape` picks the topology (and a second role, a slice).
    fn gang(count: u32, gpus: i64, elastic: bool, per_node: Option<u32>, shape: u8) -> Gang {
        let mut role = Role::new("w", count).request(GPU, gpus);
        if elastic {
            role = role.min_count(1);
        }
        if let Some(k) = per_node {
            role = role.max_per_node(k);
        }
        let g = Gang::new("g").role(role);
        match shape {
            0 => g,
            1 => g.required("block"),
            2 => g.required("rack"),
            3 => g.preferred("rack"),
            4 => g.role(Role::new("x", 1).request(GPU, 1)).required("block"),
            _ => g.role(Role::new("x", 2).request(GPU, 3)),
        }
    }

    /// `inv` with the nodes of `mask` cordoned: the oracle.
    fn cordoned(inv: &Inventory, mask: &NodeMask) -> Inventory {
        let mut copy = inv.clone();
        for name in mask.names(inv) {
            copy.cordon(name).unwrap();
        }
        copy
    }

    fn mask_of(inv: &Inventory, picks: &[bool]) -> NodeMask {
        let mut m = NodeMask::new();
        for (i, &p) in picks.iter().enumerate() {
            if p && i < inv.len() {
                m.insert(inv, &format!("n{i}")).unwrap();
            }
        }
        m
    }

    #[test]
    fn masks_name_their_nodes_and_refuse_other_layouts() -> Result<(), Error> {
        let mut inv = cluster(&[(0, 0, 0), (0, 1, 0), (1, 2, 0)]);
        let mut m = NodeMask::new();
        assert!(m.is_empty());
        assert!(m.insert(&inv, "n2")?);
        assert!(m.insert(&inv, "n0")?);
        assert!(!m.insert(&inv, "n2")?);
        assert_eq!(m.len(), 2);
        assert!(m.contains(&inv, "n0") && !m.contains(&inv, "n1"));
        assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n2", "n0"]);
        assert_eq!(
            m.insert(&inv, "zz").unwrap_err().kind(),
            crate::ErrorKind::UnknownNode
        );
        let before = m.generation;
        m.clear();
        assert!(m.is_empty() && m.generation != before);
        m.insert(&inv, "n1")?;
        // Another layout: the mask's positions mean nothing there.
        inv.add_node(on_path("n3", &["b1", "r2"]).capacity(GPU, 8))?;
        let g = inv.compile(&gang(1, 1, false, None, 0))?;
        let mut solver = Solver::new();
        let err = inv.find_outside(&mut solver, &g, &m).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidRequest);
        assert!(m.insert(&inv, "n3").is_err());
        assert_eq!(m.names(&inv).count(), 0);
        m.clear();
        assert!(m.insert(&inv, "n3")?);
        assert!(inv.find_outside(&mut solver, &g, &m)?.is_some());
        Ok(())
    }

    #[test]
    fn a_kept_mask_follows_the_journal_and_gives_fits_back() -> Result<(), Error> {
        // n0, n1 in rack r0; n2 in rack r1: 8 GPUs free each.
        let mut inv = cluster(&[(0, 0, 0), (0, 0, 0), (0, 1, 0)]);
        let mut solver = Solver::new();
        let two = inv.compile(&gang(2, 8, false, None, 2))?; // two full nodes in a rack
        let mask = mask_of(&inv, &[true, false, false]);
        assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
        assert!(inv.find_with(&mut solver, &two)?.is_some()); // given back
        assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
        // A change to a masked node while the entry holds the mask: still masked.
        inv.set_used("n0", GPU, 0)?;
        assert_eq!(inv.find_outside(&mut solver, &two, &mask)?, None);
        // And to an unmasked one: seen.
        inv.set_used("n1", GPU, 8)?;
        assert!(!inv.fits_with(&mut solver, &two)?);
        inv.set_used("n1", GPU, 0)?;
        let p = inv.find_with(&mut solver, &two)?.expect("rack r0");
        assert_eq!(p.node_counts(), [("n0", 1), ("n1", 1)]);
        Ok(())
    }

    #[test]
    fn fitting_nodes_are_where_one_member_fits() -> Result<(), Error> {
        let inv = cluster(&[(0, 0, 0), (0, 0, 4), (0, 1, 7), (1, 3, 8)]);
        let mut solver = Solver::new();
        let mut m = NodeMask::new();
        let four = inv.compile(&gang(9, 4, false, None, 2))?;
        inv.add_fitting_nodes(&mut solver, &four, &mut m)?;
        assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n0", "n1"]);
        // Every role's: one GPU fits on n2 too.
        let both = inv.compile(&gang(1, 8, false, None, 4))?;
        inv.add_fitting_nodes(&mut solver, &both, &mut m)?;
        assert_eq!(m.names(&inv).collect::<Vec<_>>(), ["n0", "n1", "n2"]);
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// A find outside a mask, asked of one warm solver across changes and between
        /// plain finds, is the find of a fresh solver on a copy with the masked nodes
        /// cordoned; it never uses a masked node, never exceeds capacity, and `fits_with`
        /// agrees with `find_with`.
        #[test]
        fn a_masked_find_is_a_find_with_those_nodes_cordoned(
            nodes in proptest::collection::vec((0u8..3, 0u8..4, 0i64..=8), 1..20),
            rounds in proptest::collection::vec(
                (
                    proptest::collection::vec(proptest::bool::weighted(0.3), 20),
                    (1u32..12, 1i64..=8, proptest::bool::ANY, proptest::option::of(1u32..3), 0u8..6),
                    (0usize..20, 0i64..=8, 0u8..3),
                ),
                1..6,
            ),
        ) {
            let mut inv = cluster(&nodes);
            let mut solver = Solver::new();
            for (picks, (count, gpus, elastic, per_node, shape), (n, used, what)) in rounds {
                let Ok(g) = inv.compile(&gang(count, gpus, elastic, per_node, shape)) else {
                    continue;
                };
                let mask = mask_of(&inv, &picks);
                for _ in 0..2 {
                    let got = inv.find_outside(&mut solver, &g, &mask)?;
                    let want = cordoned(&inv, &mask).find_with(&mut Solver::new(), &g)?;
                    proptest::prop_assert_eq!(&got, &want);
                    if let Some(p) = &got {
                        proptest::prop_assert!(p.validate(&inv).is_ok());
                        for a in p.assignments() {
                            proptest::prop_assert!(!mask.contains(&inv, &a.node), "{} masked", a.node);
                        }
                    }
                    let plain = inv.find_with(&mut solver, &g)?;
                    proptest::prop_assert_eq!(&plain, &inv.find_with(&mut Solver::new(), &g)?);
                    proptest::prop_assert_eq!(inv.fits_with(&mut solver, &g)?, plain.is_some());
                }
                // Reserve what was found outside, then change a node: the next round's
                // entries catch up from the journal, with or without a mask.
                if let Some(p) = inv.find_outside(&mut solver, &g, &mask)? {
                    inv.reserve(&p).unwrap();
                }
                let name = format!("n{}", n % nodes.len());
                match what {
                    0 => { inv.set_used(&name, GPU, used)?; }
                    1 => inv.cordon(&name)?,
                    _ => inv.uncordon(&name)?,
                }
            }
        }

        /// The fitting nodes of a one-role gang are the nodes on which one member of it
        /// fits when every other node is cordoned.
        #[test]
        fn fitting_nodes_match_one_member_alone(
            nodes in proptest::collection::vec((0u8..3, 0u8..4, 0i64..=8), 1..16),
            gpus in 1i64..=8,
            per_node in proptest::option::of(1u32..3),
        ) {
            let inv = cluster(&nodes);
            let mut solver = Solver::new();
            let g = inv.compile(&gang(4, gpus, false, per_node, 0))?;
            let mut m = NodeMask::new();
            inv.add_fitting_nodes(&mut solver, &g, &mut m)?;
            let one = inv.compile(&gang(1, gpus, false, per_node, 0))?;
            for i in 0..inv.len() {
                let name = format!("n{i}");
                let mut alone = inv.clone();
                for j in (0..inv.len()).filter(|&j| j != i) {
                    alone.cordon(&format!("n{j}"))?;
                }
                let fits = alone.find_with(&mut Solver::new(), &one)?.is_some();
                proptest::prop_assert_eq!(m.contains(&inv, &name), fits, "{}", name);
            }
        }
    }
}
