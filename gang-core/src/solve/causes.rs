//! The nodes a role cannot use, by first reason and what it is about: the book behind a
//! diagnosis's [`ExclusionCause`]s, [`Exclusions`] and fitting-node count.
//!
//! Every node has a code: 0 when it is placeable and fits one member, else the
//! `(reason, key)` it is excluded under (the first that applies, in
//! [`ExclusionReason`]'s order). A book is built once over every node, then kept in the
//! solver's cache beside the role's capacities and brought up to date from the
//! inventory's journal: a node touched since is coded again and the counts moved. A
//! diagnosis asked again after a few changes (a scheduler re-asking about a pending
//! gang) costs the touched nodes, not a walk over the cluster.

use std::sync::{Arc, Weak};

use crate::answer::diagnosis::{ExclusionCause, ExclusionReason, Exclusions};
use crate::compile::{restrict, selector_set, selector_terms, untolerated_set, CRole, Compiled};
use crate::inventory::bitset::Bitset;
use crate::inventory::ix::Depth;
use crate::inventory::Inventory;
use crate::model::Role;

/// A node placeable and fitting one member.
const FITS: u32 = 0;

/// One role's excluded nodes by cause, per node and counted.
#[derive(Debug)]
pub(crate) struct CauseBook {
    /// What the book was built for: the compiled gang (its selector terms and
    /// tolerations name the keys), the depth whose labels a node needs, the inventory
    /// value, its layout, and the journal version it reflects.
    gang: Weak<Compiled>,
    need: Depth,
    inventory: Weak<()>,
    layout: u64,
    version: u64,
    /// `keys[code - 1]`: the cause of a code.
    keys: Vec<(ExclusionReason, String)>,
    /// `counts[code]`: the nodes coded so.
    counts: Vec<u32>,
    /// Per node: its selector, taint or missing-label code (what never changes for this
    /// inventory value), or [`FITS`] for none.
    statics: Vec<u32>,
    /// Per node: its code now.
    codes: Vec<u32>,
    /// The codes of the resource causes: `[TooSmall of req i…, Full of req i…, Full of
    /// none, TooSmall of the first missing resource]`.
    resource_codes: Vec<u32>,
}

/// Where a [`CauseBook`] lives between diagnoses (the solver's cache entry of the role).
pub(crate) type Kept = Option<CauseBook>;

impl CauseBook {
    /// The book of `role` (`spec` as asked) over `inv` with per-node `fits` current:
    /// the kept one brought up to date when it is for the same gang, depth and inventory
    /// value, else built afresh into `kept`.
    pub fn current<'k>(
        kept: &'k mut Kept,
        inv: &Inventory,
        c: &Arc<Compiled>,
        spec: &Role,
        role: &CRole,
        need: Depth,
        fits: &[u32],
    ) -> &'k CauseBook {
        let usable = kept.as_ref().and_then(|b| {
            let same = std::ptr::eq(b.gang.as_ptr(), Arc::as_ptr(c))
                && b.need == need
                && b.layout == inv.layout_id
                && b.inventory
                    .upgrade()
                    .is_some_and(|i| Arc::ptr_eq(&i, &inv.journal.identity.0));
            same.then(|| inv.journal.since(b.version)).flatten()
        });
        match (usable, kept) {
            (Some(touched), Some(book)) => {
                for &n in touched {
                    let n = n as usize;
                    let new = book.code_of(inv, role, fits, n);
                    let old = std::mem::replace(&mut book.codes[n], new);
                    book.counts[old as usize] -= 1;
                    book.counts[new as usize] += 1;
                }
                book.version = inv.journal.version();
                book
            }
            (_, kept) => kept.insert(CauseBook::build(inv, c, spec, role, need, fits)),
        }
    }

    /// Codes every node.
    fn build(
        inv: &Inventory,
        c: &Arc<Compiled>,
        spec: &Role,
        role: &CRole,
        need: Depth,
        fits: &[u32],
    ) -> CauseBook {
        let all = inv.len();
        let mut book = CauseBook {
            gang: Arc::downgrade(c),
            need,
            inventory: Arc::downgrade(&inv.journal.identity.0),
            layout: inv.layout_id,
            version: inv.journal.version(),
            keys: vec![(ExclusionReason::Cordoned, String::new())],
            counts: vec![0, 0],
            statics: vec![FITS; all],
            codes: vec![FITS; all],
            resource_codes: Vec::new(),
        };
        let name = |res: u32| {
            inv.resources
                .get_index(res as usize)
                .map_or("", String::as_str)
        };
        for reason in [ExclusionReason::TooSmall, ExclusionReason::Full] {
            for &(res, _) in &role.req {
                let code = book.intern(reason, name(res));
                book.resource_codes.push(code);
            }
        }
        let none = book.intern(ExclusionReason::Full, "");
        book.resource_codes.push(none);
        if let Some(m) = role.missing.first() {
            let code = book.intern(ExclusionReason::TooSmall, m);
            book.resource_codes.push(code);
        }
        book.code_statics(inv, spec, need);
        for n in 0..all {
            let code = book.code_of(inv, role, fits, n);
            book.codes[n] = code;
            book.counts[code as usize] += 1;
        }
        book
    }

    /// The selector, taint and missing-label codes, reason by reason over the nodes
    /// each takes out (word-wise set operations between them).
    fn code_statics(&mut self, inv: &Inventory, spec: &Role, need: Depth) {
        let all = inv.len();
        let selected = selector_set(inv, spec);
        let untolerated = untolerated_set(inv, spec);
        let mut out = Bitset::full(all);
        out.and_not_with(&selected);
        if out.count() > 0 {
            let terms: Vec<(u32, Bitset)> = selector_terms(spec)
                .map(|t| {
                    let mut set = Bitset::full(all);
                    restrict(inv, t, &mut set);
                    (self.intern(ExclusionReason::Selector, t.key()), set)
                })
                .collect();
            let unnamed = self.intern(ExclusionReason::Selector, "");
            for n in out.ones_in(0, all) {
                self.statics[n] = terms
                    .iter()
                    .find(|(_, set)| !set.get(n))
                    .map_or(unnamed, |t| t.0);
            }
        }
        let mut open = selected;
        let mut out = open.clone();
        out.and_with(&untolerated);
        for n in out.ones_in(0, all) {
            let taint = inv.taints.iter().find(|(t, nodes)| {
                nodes.contains(n)
                    && t.effect.excludes()
                    && !spec.tolerations.iter().any(|x| x.tolerates(t))
            });
            let key = taint.map_or("", |(t, _)| t.key.as_str());
            self.statics[n] = self.intern(ExclusionReason::Taint, key);
        }
        open.and_not_with(&untolerated);
        // Nodes inside some domain of the needed level: the union of its ranges.
        if need > Depth::CLUSTER && !inv.is_node_level(need) {
            let mut labelled = Bitset::new(all);
            for nodes in inv.domains[need.ix()].iter().map(|dm| dm.nodes()) {
                labelled.set_range(nodes.start, nodes.end);
            }
            open.and_not_with(&labelled);
            for n in open.ones_in(0, all) {
                let key = inv.topology.key_of(inv.leaf_depth(n as u32) + 1);
                self.statics[n] = self.intern(ExclusionReason::MissingLabel, key.unwrap_or(""));
            }
        }
    }

    /// Node `n`'s code now: cordoned, else its static code, else fitting or the first
    /// resource it lacks (its capacity, then what is free).
    #[inline]
    fn code_of(&self, inv: &Inventory, role: &CRole, fits: &[u32], n: usize) -> u32 {
        if !inv.schedulable.get(n) {
            return self.cordoned();
        }
        if self.statics[n] != FITS {
            return self.statics[n];
        }
        if fits[n] > 0 {
            return FITS;
        }
        let k = role.req.len();
        if !role.missing.is_empty() {
            return self.resource_codes[2 * k + 1];
        }
        if let Some(i) = role
            .req
            .iter()
            .position(|&(res, q)| inv.capacity[res as usize][n] < q)
        {
            return self.resource_codes[i];
        }
        let short = role
            .req
            .iter()
            .position(|&(res, q)| inv.free[res as usize][n] < q);
        self.resource_codes[short.map_or(2 * k, |i| k + i)]
    }

    /// The code of a cordoned node: the first key, `(Cordoned, "")`.
    #[inline]
    fn cordoned(&self) -> u32 {
        1
    }

    /// The code of `(reason, key)`, added if new.
    fn intern(&mut self, reason: ExclusionReason, key: &str) -> u32 {
        match self.keys.iter().position(|(r, k)| *r == reason && k == key) {
            Some(i) => i as u32 + 1,
            None => {
                self.keys.push((reason, key.to_owned()));
                self.counts.push(0);
                self.keys.len() as u32
            }
        }
    }

    /// The excluded nodes by cause (in `(reason, key)` order), the nodes that fit one
    /// member, and the exclusions by reason alone.
    pub fn report(&self) -> (Vec<ExclusionCause>, u32, Exclusions) {
        let mut causes: Vec<ExclusionCause> = self
            .keys
            .iter()
            .zip(&self.counts[1..])
            .filter(|(_, &k)| k > 0)
            .map(|((reason, key), &nodes)| ExclusionCause {
                reason: *reason,
                key: key.clone(),
                nodes,
            })
            .collect();
        causes.sort_by(|a, b| (a.reason, &a.key).cmp(&(b.reason, &b.key)));
        let mut ex = Exclusions::default();
        for c in &causes {
            let slot = match c.reason {
                ExclusionReason::Cordoned => &mut ex.cordoned,
                ExclusionReason::Selector => &mut ex.selector,
                ExclusionReason::Taint => &mut ex.taint,
                ExclusionReason::MissingLabel => &mut ex.missing_label,
                ExclusionReason::TooSmall | ExclusionReason::Full => &mut ex.too_small,
            };
            *slot += c.nodes;
        }
        (causes, self.counts[FITS as usize], ex)
    }
}
