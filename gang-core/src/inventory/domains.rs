//! Domains: contiguous node ranges per topology depth, and their free-capacity
//! summaries.

use super::ix::{Depth, NodeIx};
use super::{Inventory, NONE};

/// One domain: a contiguous range of nodes sharing a topology path prefix.
///
/// Nodes `start..direct` belong to child domains (`children`, at the next depth); nodes
/// `direct..end` lack the next level's label and belong to no child. At the deepest label
/// level every node is direct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Domain {
    pub start: u32,
    pub end: u32,
    pub direct: u32,
    pub parent: u32,
    pub value: u32,
    pub child_start: u32,
    pub child_end: u32,
}

impl Domain {
    /// Its nodes `start..end`, as column indices.
    #[inline]
    pub fn nodes(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Its direct nodes `direct..end` (no label of the next level), as column indices.
    #[inline]
    pub fn direct_nodes(&self) -> std::ops::Range<usize> {
        self.direct as usize..self.end as usize
    }

    /// Its children's indices at the next depth, as column indices.
    #[inline]
    pub fn children(&self) -> std::ops::Range<usize> {
        self.child_start as usize..self.child_end as usize
    }
}

/// Free-capacity summary of one domain and one resource: the total (saturating at
/// `u64::MAX`, which then means "at least that much") and the largest node's amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Summary {
    pub total: u64,
    pub max: u64,
}

/// A domain (`depth <= L`) or one node (`depth == L+1`, index = the node): where a
/// computation is confined, or where a gang was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scope {
    pub depth: Depth,
    /// The domain's index at `depth`, or the node's index at the node level.
    pub index: u32,
}

impl Scope {
    pub const CLUSTER: Scope = Scope {
        depth: Depth::CLUSTER,
        index: 0,
    };

    /// Domain `index` at `depth` (the node `index` at the node level).
    #[inline]
    pub const fn new(depth: Depth, index: u32) -> Scope {
        Scope { depth, index }
    }

    /// The node range `start..end` of the scope.
    pub fn range(self, inv: &Inventory) -> (u32, u32) {
        if inv.is_node_level(self.depth) {
            (self.index, self.index + 1)
        } else {
            let d = inv.domain(self.depth, self.index);
            (d.start, d.end)
        }
    }

    /// The index as a column index (into per-domain or per-node arrays of its depth).
    #[inline]
    pub const fn ix(self) -> usize {
        self.index as usize
    }

    /// The node of a node-level scope.
    #[inline]
    pub const fn node(self) -> NodeIx {
        NodeIx(self.index)
    }
}

/// Groups sorted node paths into domains, one vector per depth (0 = cluster).
/// `paths` holds `levels` value ids per node in storage order, [`NONE`] from the first
/// missing label on.
pub(crate) fn build_domains(paths: &[u32], len: usize, levels: usize) -> Vec<Vec<Domain>> {
    let n = len as u32;
    let at = |i: u32, depth: usize| paths[i as usize * levels + depth - 1];
    let mut out: Vec<Vec<Domain>> = Vec::with_capacity(levels + 1);
    out.push(vec![Domain {
        start: 0,
        end: n,
        direct: if levels == 0 { 0 } else { n },
        parent: NONE,
        value: NONE,
        child_start: 0,
        child_end: 0,
    }]);
    for depth in 1..=levels {
        let mut level: Vec<Domain> = Vec::new();
        let parents = &out[depth - 1];
        let mut parent = 0usize;
        for i in 0..n {
            let v = at(i, depth);
            if v == NONE {
                continue;
            }
            while parents[parent].end <= i {
                parent += 1;
            }
            match level.last_mut() {
                Some(d) if d.end == i && d.parent as usize == parent && at(d.start, depth) == v => {
                    d.end = i + 1;
                }
                _ => level.push(Domain {
                    start: i,
                    end: i + 1,
                    direct: i,
                    parent: parent as u32,
                    value: v,
                    child_start: 0,
                    child_end: 0,
                }),
            }
        }
        // Link parents to their children; a parent's direct nodes start after them.
        let parents = &mut out[depth - 1];
        for p in parents.iter_mut() {
            p.child_start = 0;
            p.child_end = 0;
            p.direct = p.start;
        }
        let mut first_seen = vec![false; parents.len()];
        for (ci, c) in level.iter().enumerate() {
            let p = &mut parents[c.parent as usize];
            if !first_seen[c.parent as usize] {
                first_seen[c.parent as usize] = true;
                p.child_start = ci as u32;
            }
            p.child_end = ci as u32 + 1;
            p.direct = c.end;
        }
        if depth == levels {
            for d in &mut level {
                d.direct = d.start;
            }
        }
        out.push(level);
    }
    out
}

impl Inventory {
    /// Deepest label depth (L).
    pub(crate) fn label_depth(&self) -> usize {
        self.domains.len() - 1
    }

    /// Domain `index` at label depth `depth`.
    #[inline]
    pub(crate) fn domain(&self, depth: Depth, index: u32) -> &Domain {
        &self.domains[depth.ix()][index as usize]
    }

    /// The node level (L + 1), below every label level: each node is a domain of its own.
    #[inline]
    pub(crate) fn node_depth(&self) -> Depth {
        Depth(self.domains.len())
    }

    /// Whether `depth` is the node level (see [`Inventory::node_depth`]).
    #[inline]
    pub(crate) fn is_node_level(&self, depth: Depth) -> bool {
        depth.ix() >= self.domains.len()
    }

    /// How many domains there are at `depth` (nodes, at the node level).
    pub(crate) fn scope_count(&self, depth: Depth) -> u32 {
        let n = match self.domains.get(depth.ix()) {
            Some(level) => level.len(),
            None => self.len(),
        };
        // Fewer than `NONE` nodes, so fewer domains at any depth.
        n as u32
    }

    /// Every scope at `depth`, in storage order.
    pub(crate) fn scopes_at(&self, depth: Depth) -> impl Iterator<Item = Scope> {
        (0..self.scope_count(depth)).map(move |index| Scope::new(depth, index))
    }

    /// Whether node `n` is labelled down to `depth` (every node reaches depth 0).
    #[inline]
    pub(crate) fn reaches(&self, n: NodeIx, depth: Depth) -> bool {
        depth == Depth::CLUSTER || self.leaf_depth(n.0) >= depth.ix()
    }

    #[inline]
    pub(crate) fn summary(&self, depth: usize, dom: usize, res: usize) -> Summary {
        self.summaries[depth][dom * self.resources.len() + res]
    }

    /// The domain at `depth` (1..=L) containing node `ix`, if the node has that label.
    pub(crate) fn domain_of(&self, ix: u32, depth: usize) -> Option<u32> {
        if depth == 0 {
            return Some(0);
        }
        let level = self.domains.get(depth)?;
        let pos = level.partition_point(|d| d.start <= ix);
        if pos == 0 {
            return None;
        }
        let d = &level[pos - 1];
        (ix < d.end).then_some(pos as u32 - 1)
    }

    /// Depth of the deepest domain containing the node.
    pub(crate) fn leaf_depth(&self, ix: u32) -> usize {
        // Domains are path prefixes: a node in a domain of the deepest level is in one
        // at every level (the common case, one search instead of one per level).
        let l = self.label_depth();
        if l > 0 && self.domain_of(ix, l).is_some() {
            return l;
        }
        (1..=l)
            .take_while(|&d| self.domain_of(ix, d).is_some())
            .last()
            .unwrap_or(0)
    }

    /// The label values of a domain's path, outermost first.
    pub(crate) fn domain_values(&self, depth: usize, dom: u32) -> Vec<&str> {
        let mut out = Vec::with_capacity(depth);
        let (mut d, mut i) = (depth, dom);
        while d > 0 {
            let dm = &self.domains[d][i as usize];
            out.push(self.values[dm.value as usize].as_str());
            i = dm.parent;
            d -= 1;
        }
        out.reverse();
        out
    }

    /// A domain's summary for one resource, from its children's summaries and its
    /// direct nodes' free amounts.
    pub(super) fn summarize(&self, d: usize, di: usize, r: usize) -> Summary {
        let nres = self.resources.len();
        let dom = self.domains[d][di];
        let mut s = Summary::default();
        if d + 1 < self.domains.len() {
            for c in dom.children() {
                let cs = self.summaries[d + 1][c * nres + r];
                s.total = s.total.saturating_add(cs.total);
                s.max = s.max.max(cs.max);
            }
        }
        for &f in &self.free[r][dom.direct_nodes()] {
            s.total = s.total.saturating_add(f);
            s.max = s.max.max(f);
        }
        s
    }

    /// Recomputes the summaries of every domain containing one of `nodes`, each once,
    /// innermost first.
    pub(crate) fn refresh_summaries(&mut self, nodes: &[u32]) {
        let nres = self.resources.len();
        let mut doms: smallvec::SmallVec<[u32; 16]> = smallvec::SmallVec::new();
        for d in (0..self.domains.len()).rev() {
            doms.clear();
            for &n in nodes {
                if let Some(di) = self.domain_of(n, d) {
                    if !doms.contains(&di) {
                        doms.push(di);
                    }
                }
            }
            for &di in &doms {
                for r in 0..nres {
                    let s = self.summarize(d, di as usize, r);
                    self.summaries[d][di as usize * nres + r] = s;
                }
            }
        }
    }

    /// Recomputes every domain summary from the free columns, deepest level first.
    pub(crate) fn rebuild_summaries(&mut self) {
        let nres = self.resources.len();
        self.summaries = self
            .domains
            .iter()
            .map(|l| vec![Summary::default(); l.len() * nres])
            .collect();
        for d in (0..self.domains.len()).rev() {
            for di in 0..self.domains[d].len() {
                for r in 0..nres {
                    let s = self.summarize(d, di, r);
                    self.summaries[d][di * nres + r] = s;
                }
            }
        }
    }
}
