//! The knapsack over a domain's children (issue 23): `F(u)`, the least vector that
//! holds `u` units of the children's grain, child by child, with each child's step
//! function; for an assignment, the units taken from each child, and only the states
//! that can still lie on the path followed back.

use super::*;

impl Objective<'_> {
    /// The knapsack over `dom`'s children for amounts up to `x`: pushes the table
    /// `F(0..=U)` (width `width(d)` each, `U = x / g` for the children's grain `g`) onto
    /// `lx.table` and returns `U`. For [`Table::Assign`] only the states that can still
    /// reach `x` are kept, and the units taken from each child at each amount are pushed
    /// onto `lx.choice` (one row of `U + 1` per child in `lx.kids` order, which it leaves
    /// pushed too).
    pub(super) fn knapsack(
        &self,
        lx: &mut Lex,
        d: Depth,
        dom: &Domain,
        x: u64,
        table: Table,
    ) -> u64 {
        let assign = table == Table::Assign;
        let inv = self.inv;
        let w = self.width(d);
        let c = d.child();
        let g = self.grain.at(c).max(1);
        let top = x / g;
        let uu = top as usize + 1;
        let base = lx.table.len();
        lx.table.resize(base + uu * w, 0);
        for u in 1..uu {
            lx.table[base + u * w] = INF;
        }
        let kb = lx.kids.len();
        if !inv.is_node_level(c) {
            for ci in dom.children() {
                let cap = self.caps.caps[c.ix()][ci];
                if cap > 0 {
                    lx.kids.push((Child::Domain(ci as u32), cap));
                }
            }
        }
        for n in dom.direct_nodes() {
            let fit = u64::from(self.caps.fits[n]);
            if fit > 0 {
                lx.kids.push((Child::Node(NodeIx::at(n)), fit));
            }
        }
        if assign {
            self.drop_unusable_kids(lx, d, kb, x);
        }
        let ke = lx.kids.len();
        let chb = lx.choice.len();
        let tsb = lx.tsrc.len();
        if assign {
            lx.choice.resize(chb + (ke - kb) * uu, 0);
            lx.tsrc.resize(tsb + (ke - kb), 0);
        }
        // What the children not yet processed can still add (in grains).
        let mut rest: usize = lx.kids[kb..ke]
            .iter()
            .map(|&(_, cap)| (cap.min(x) / g) as usize)
            .sum();
        // Vectors of up to four components are packed into a u128 (32 bits each,
        // outermost highest): lexicographic order is then integer order and adding
        // vectors adds integers (counts stay far below 2^32).
        #[cfg(test)]
        let packed = w <= 4 && !lx.unpacked;
        #[cfg(not(test))]
        let packed = w <= 4;
        // Width 2 with few enough children and nodes: narrow tables (see `NARROW_INF`).
        #[cfg(test)]
        let narrow = packed && w == 2 && !lx.no_narrow;
        #[cfg(not(test))]
        let narrow = packed && w == 2;
        let narrow =
            narrow && ke - kb < NARROW_KIDS && dom.nodes().len() < NARROW_NODES && uu < 1 << 31;
        let packed = packed && !narrow;
        let pb = lx.ptable.len();
        if packed {
            lx.ptable.resize(pb + uu, PINF);
            lx.ptable[pb] = 0;
        }
        let nb = lx.ntable.len();
        let ncb = lx.nchoice.len();
        if narrow {
            lx.ntable.resize(nb + 2 * uu, NARROW_INF);
            lx.ntable[nb] = 0;
            if assign {
                lx.nchoice.resize(ncb + uu, 0);
            }
        }
        let mut cand: Vector = [0; MAX_WIDTH];
        let mut best: Vector = [0; MAX_WIDTH];
        // Amounts above what the children so far hold stay unreachable.
        let mut reach = 0usize;
        for k in kb..ke {
            let (child, cap) = lx.kids[k];
            let (tb, vb) = (lx.step_t.len(), lx.step_v.len());
            match child {
                Child::Domain(ci) => self.steps(lx, c, ci, cap.min(x), g, w),
                Child::Node(_) => {
                    lx.step_t.push(cap / g);
                    lx.step_v.extend(std::iter::repeat_n(1, w));
                }
            }
            let steps = lx.step_t.len() - tb;
            let units = (cap.min(x) / g) as usize;
            reach = (reach + units).min(uu - 1);
            rest -= units;
            let row_choice = chb + (k - kb) * uu;
            if narrow {
                let sb = lx.nsteps.len();
                for j in 0..steps {
                    let v = &lx.step_v[vb + j * w..vb + j * w + w];
                    let t = lx.step_t[tb + j] as usize;
                    lx.nsteps.push((t, ((v[0] as i32) << 16) | v[1] as i32));
                }
                let lo = if assign {
                    (uu - 1).saturating_sub(rest).max(1)
                } else {
                    1
                };
                let (took, from) = narrow_child(lx, nb, ncb, uu, sb, lo, reach, assign);
                if took > 0 && assign {
                    lx.choice[row_choice + uu - 1] = took;
                    lx.tsrc[tsb + k - kb] = from;
                }
                if assign && lo < uu - 1 {
                    let hi = reach.min(uu - 2);
                    if lo <= hi {
                        let Lex {
                            choice, nchoice, ..
                        } = &mut *lx;
                        for (c, &n) in choice[row_choice + lo..=row_choice + hi]
                            .iter_mut()
                            .zip(&nchoice[ncb + lo..=ncb + hi])
                        {
                            *c = u64::from(n);
                        }
                    }
                }
                lx.nsteps.truncate(sb);
            } else if packed {
                let sb = lx.psteps.len();
                for j in 0..steps {
                    let v = &lx.step_v[vb + j * w..vb + j * w + w];
                    lx.psteps.push((lx.step_t[tb + j], pack(v)));
                }
                let Lex {
                    ptable,
                    psteps,
                    choice,
                    tsrc,
                    ..
                } = &mut *lx;
                let f = &mut ptable[pb..pb + uu];
                let st = &psteps[sb..];
                let top = uu - 1;
                // Packed tables hold exact sums of the children's step amounts below the
                // full amount, and "at least" only at it: the full amount takes the
                // least state in each step's window first (before those states change).
                let (mut b, mut took, mut from) = (f[top], 0u64, top);
                let (mut m, mut arg, mut s) = (PINF, top, top as isize);
                for &(t, v) in st {
                    let lo = top.saturating_sub(t as usize) as isize;
                    while s >= lo {
                        if f[s as usize] < m {
                            m = f[s as usize];
                            arg = s as usize;
                        }
                        s -= 1;
                    }
                    if m != PINF && m + v < b {
                        (b, took, from) = (m + v, t, arg);
                    }
                }
                if took > 0 {
                    f[top] = b;
                    if assign {
                        choice[row_choice + top] = took;
                        tsrc[tsb + k - kb] = from as u64;
                    }
                }
                // Below it, only states the remaining children can still complete.
                let lo = if assign {
                    top.saturating_sub(rest).max(1)
                } else {
                    1
                };
                for u in (lo..=reach.min(top - 1)).rev() {
                    let mut b = f[u];
                    let mut took = 0u64;
                    for &(t, v) in st {
                        if t as usize > u {
                            break;
                        }
                        let src = f[u - t as usize];
                        if src != PINF && src + v < b {
                            b = src + v;
                            took = t;
                        }
                    }
                    if took > 0 {
                        f[u] = b;
                        if assign {
                            choice[row_choice + u] = took;
                        }
                    }
                }
                psteps.truncate(sb);
            } else {
                for u in (1..=reach).rev() {
                    let row = base + u * w;
                    best[..w].copy_from_slice(&lx.table[row..row + w]);
                    let mut took = 0u64;
                    for j in 0..steps {
                        let t = lx.step_t[tb + j];
                        let src = base + (u as u64).saturating_sub(t) as usize * w;
                        if lx.table[src] == INF {
                            continue;
                        }
                        let v = &lx.step_v[vb + j * w..vb + j * w + w];
                        for ((o, &a), &b) in
                            cand[..w].iter_mut().zip(&lx.table[src..src + w]).zip(v)
                        {
                            *o = a.saturating_add(b);
                        }
                        if cand[..w] < best[..w] {
                            best[..w].copy_from_slice(&cand[..w]);
                            took = t;
                        }
                    }
                    if took > 0 {
                        lx.table[row..row + w].copy_from_slice(&best[..w]);
                        if assign {
                            lx.choice[row_choice + u] = took;
                            if u == uu - 1 {
                                lx.tsrc[tsb + k - kb] = (u as u64).saturating_sub(took);
                            }
                        }
                    }
                }
            }
            lx.step_t.truncate(tb);
            lx.step_v.truncate(vb);
        }
        if narrow {
            for u in 0..uu {
                let p = lx.ntable[nb + u];
                let row = base + u * w;
                if p >= NARROW_INF {
                    lx.table[row] = INF;
                    lx.table[row + 1] = INF;
                } else {
                    lx.table[row] = (p >> 16) as u32;
                    lx.table[row + 1] = (p & 0xffff) as u32;
                }
            }
            lx.ntable.truncate(nb);
            lx.nchoice.truncate(ncb);
        }
        if packed {
            for u in 0..uu {
                let p = lx.ptable[pb + u];
                let row = base + u * w;
                for (k, o) in lx.table[row..row + w].iter_mut().enumerate() {
                    *o = if p == PINF {
                        INF
                    } else {
                        (p >> (32 * (w - 1 - k))) as u32
                    };
                }
            }
            lx.ptable.truncate(pb);
        }
        if !assign {
            lx.kids.truncate(kb);
        }
        top
    }

    /// Before an assignment's knapsack of a domain at depth `d` whose children hold
    /// only nodes (width 2, grain 1, no slice below): removes from `lx.kids[kb..]` the
    /// children that no placement with the fewest children `r` can use, those whose
    /// capacity and the `r - 1` largest others' fall short of `x`. The least vector uses
    /// exactly `r` children, so the path the knapsack follows back never takes them;
    /// without them every state on that path keeps its value and every other state
    /// only grows (fewer subsets, fewer states kept), so each choice on the path, the
    /// first least, is the same, and so are the children and amounts it yields.
    pub(super) fn drop_unusable_kids(&self, lx: &mut Lex, d: Depth, kb: usize, x: u64) {
        if self.width(d) != 2 || !self.pool_allowed(d) || self.grain.at(d.child()) != 1 {
            return;
        }
        #[cfg(test)]
        if lx.keep_kids {
            return;
        }
        let base = lx.sorted.len();
        lx.sorted
            .extend(lx.kids[kb..].iter().map(|&(_, cap)| cap.min(x)));
        if lx.sorted[base..].iter().sum::<u64>() < x {
            lx.sorted.truncate(base);
            return;
        }
        let r = fewest(&mut lx.sorted[base..], x) as usize;
        // The `r - 1` largest capacities (sorted largest first by `fewest`).
        let most: u64 = lx.sorted[base..base + r.saturating_sub(1)].iter().sum();
        lx.sorted.truncate(base);
        let need = x.saturating_sub(most);
        let mut kept = kb;
        for k in kb..lx.kids.len() {
            if lx.kids[k].1.min(x) >= need {
                lx.kids[kept] = lx.kids[k];
                kept += 1;
            }
        }
        #[cfg(test)]
        {
            lx.dropped += (lx.kids.len() - kept) as u64;
        }
        lx.kids.truncate(kept);
    }

    /// The step function of child domain `ci` at depth `c` for amounts in multiples of
    /// `g` up to `x`, pushed onto `lx.step_t` (the largest amount of each step, in units
    /// of `g`) and `lx.step_v` (width `w`: one for the child itself, then its vector).
    pub(super) fn steps(&self, lx: &mut Lex, c: Depth, ci: u32, x: u64, g: u64, w: usize) {
        let dom = *self.inv.domain(c, ci);
        let top = x / g;
        if !self.has_child_domains(c, &dom) {
            // Nodes only: k nodes hold up to the k largest fits' sum.
            let base = lx.sorted.len();
            lx.sorted.extend(
                self.caps.fits[dom.direct_nodes()]
                    .iter()
                    .filter(|&&f| f > 0)
                    .map(|&f| u64::from(f)),
            );
            lx.sorted[base..].sort_unstable_by(|a, b| b.cmp(a));
            let (mut sum, mut prev) = (0u64, 0u64);
            for k in 0..lx.sorted.len() - base {
                sum = sum.saturating_add(lx.sorted[base + k]);
                let t = (sum / g).min(top);
                if t > prev {
                    lx.step_t.push(t);
                    lx.step_v.push(1);
                    lx.step_v.extend(std::iter::repeat_n(k as u32 + 1, w - 1));
                    prev = t;
                }
                if t == top {
                    break;
                }
            }
            lx.sorted.truncate(base);
            return;
        }
        // The child's own table, sampled at multiples of `g`.
        let base = lx.table.len();
        let gc = self.grain.at(c.child()).max(1);
        let rows = self.knapsack(lx, c, &dom, x, Table::Steps) as usize;
        let cw = w - 1;
        // At least each amount: the least of the exact sums at or above it.
        for k in (0..rows).rev() {
            let (a, b) = (base + k * cw, base + (k + 1) * cw);
            if lx.table[b..b + cw] < lx.table[a..a + cw] {
                lx.table.copy_within(b..b + cw, a);
            }
        }
        let at = |k: u64| base + ((k * g) / gc) as usize * cw;
        for k in 1..=top {
            let here = at(k);
            if lx.table[here] == INF {
                break;
            }
            let last = k == top || {
                let next = at(k + 1);
                lx.table[next] == INF || lx.table[here..here + cw] != lx.table[next..next + cw]
            };
            if last {
                lx.step_t.push(k);
                lx.step_v.push(1);
                let (head, _) = lx.table.split_at(here + cw);
                lx.step_v.extend_from_slice(&head[here..]);
            }
        }
        lx.table.truncate(base);
    }
}

/// "Cannot be held" in a narrow table: above every vector `children << 16 | nodes` of a
/// domain with fewer than [`NARROW_KIDS`] children and [`NARROW_NODES`] nodes (below
/// 2^29), and adding a step's vector to it stays below `i32::MAX` and above it, so
/// sums need no test for it.
const NARROW_INF: i32 = 1 << 30;
const NARROW_KIDS: usize = 1 << 13;
const NARROW_NODES: usize = 1 << 15;

/// One child of a narrow (width 2) knapsack: its steps `lx.nsteps[sb..]` (units,
/// vector) into the table `lx.ntable[nb..nb + uu]`, the amounts `lo..=reach` below the
/// full one and the full amount (at least it). The same states and choices as the
/// packed table's loop, amount by amount and step by step (the first least step that
/// beats the state wins), computed step by step over a copy of the table before this
/// child (`lx.ntable[nb + uu..]`), amount by amount inside a step: a loop the compiler
/// vectorises. With `assign`, the units taken at each amount below the full one go to
/// `lx.nchoice[ncb..]` (0: none). Returns the units taken at the full amount (0: none)
/// and the state they complete.
#[allow(clippy::too_many_arguments)]
fn narrow_child(
    lx: &mut Lex,
    nb: usize,
    ncb: usize,
    uu: usize,
    sb: usize,
    lo: usize,
    reach: usize,
    assign: bool,
) -> (u64, u64) {
    let Lex {
        ntable,
        nsteps,
        nchoice,
        ..
    } = &mut *lx;
    let (f, old) = ntable[nb..nb + 2 * uu].split_at_mut(uu);
    let st = &nsteps[sb..];
    let top = uu - 1;
    // The full amount first, from the states before this child: the least state in
    // each step's window (the largest amount of the least ones).
    let (mut b, mut took, mut from) = (f[top], 0u64, top);
    let (mut m, mut arg, mut s) = (NARROW_INF, top, top as isize);
    for &(t, v) in st {
        let lo = top.saturating_sub(t) as isize;
        while s >= lo {
            if f[s as usize] < m {
                m = f[s as usize];
                arg = s as usize;
            }
            s -= 1;
        }
        if m + v < b {
            (b, took, from) = (m + v, t as u64, arg);
        }
    }
    let hi = reach.min(top.saturating_sub(1));
    if top > 0 && lo <= hi {
        old[..=hi].copy_from_slice(&f[..=hi]);
        if assign {
            nchoice[ncb + lo..=ncb + hi].fill(0);
        }
        for &(t, v) in st {
            if t > hi {
                break;
            }
            let a = lo.max(t);
            let (fs, os) = (&mut f[a..=hi], &old[a - t..=hi - t]);
            if assign {
                let cs = &mut nchoice[ncb + a..=ncb + hi];
                for ((fu, cu), &o) in fs.iter_mut().zip(cs.iter_mut()).zip(os) {
                    let c = o + v;
                    let better = c < *fu;
                    *fu = if better { c } else { *fu };
                    *cu = if better { t as u32 } else { *cu };
                }
            } else {
                for (fu, &o) in fs.iter_mut().zip(os) {
                    *fu = (*fu).min(o + v);
                }
            }
        }
    }
    if took > 0 {
        f[top] = b;
    }
    (took, from as u64)
}

/// The narrow (width 2) knapsack against the packed one: the same tables, the same
/// children and units for an assignment, the same members on the same nodes.
#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::capacities;
    use super::super::*;
    use crate::testkit::build;
    use crate::{Gang, NodeSpec, Role};
    use proptest::prelude::*;

    const GPU: &str = "gpu";

    /// Nodes as `(zone, block, rack, labels kept (0..=3), GPUs, GPUs used)` under two
    /// (block, rack) or three (zone, block, rack) label levels.
    pub(in crate::solve::lex) fn inventory(
        three: bool,
        nodes: &[(u8, u8, u8, u8, i64, i64)],
    ) -> crate::Inventory {
        let levels: &[&str] = if three {
            &["zone", "block", "rack"]
        } else {
            &["block", "rack"]
        };
        let specs = nodes
            .iter()
            .enumerate()
            .map(|(i, &(z, b, r, kept, gpus, used))| {
                let values = [format!("z{z}"), format!("b{b}"), format!("r{r}")];
                let values = if three { &values[..] } else { &values[1..] };
                let kept = (kept as usize).min(levels.len());
                levels[..kept]
                    .iter()
                    .zip(values)
                    .fold(NodeSpec::new(format!("n{i}")), |spec, (key, value)| {
                        spec.label(*key, value.as_str())
                    })
                    .capacity(GPU, gpus)
                    .used(GPU, used.min(gpus))
            })
            .collect();
        build(levels, specs)
    }

    /// Every domain of width 2, every amount (in its grain): the narrow and the packed
    /// knapsack give the same table (`Table::Steps`), the same children and units
    /// (`Table::Assign`, by `knapsack_children`); every domain at every depth: the same
    /// vector and the same members on the same nodes (`vector`, then `assign`). Returns
    /// how many width-2 knapsacks were compared.
    fn compare(inv: &crate::Inventory, gang: &Gang, policy: Policy) -> u64 {
        let c = inv.compile(gang).unwrap();
        let caps = capacities(inv, &c);
        let o = Objective {
            inv,
            caps: &caps,
            grain: Grain::of(&c.inner, &c.inner.roles[0]),
            policy,
            ri: RoleIx(0),
        };
        let mut lx = Lex::default();
        let mut at = Attempt::default();
        at.ensure(inv);
        let mut compared = 0;
        for d in 0..inv.label_depth() {
            let d = Depth(d);
            let w = o.width(d);
            let step = o.grain.at(d).max(1);
            for di in 0..inv.domains[d.ix()].len() as u32 {
                let dom = *inv.domain(d, di);
                let cap = caps.caps[d.ix()][di as usize];
                for x in (step..=cap).step_by(step as usize) {
                    let mut got = Vec::new();
                    for no_narrow in [true, false] {
                        lx.no_narrow = no_narrow;
                        let (mut table, mut kids) = (Vec::new(), Vec::new());
                        if w == 2 && o.has_child_domains(d, &dom) {
                            let base = lx.table.len();
                            o.knapsack(&mut lx, d, &dom, x, Table::Steps);
                            table = lx.table[base..].to_vec();
                            lx.table.truncate(base);
                            let ib = lx.items.len();
                            let v = o.knapsack_children(&mut lx, d, &dom, x);
                            kids = lx.items[ib..]
                                .iter()
                                .map(|it| (it.child, it.cap, it.pos))
                                .collect();
                            kids.push((Child::Node(NodeIx(u32::MAX)), u64::from(v[0]), v[1]));
                            lx.items.truncate(ib);
                            compared += u64::from(!no_narrow);
                        }
                        let mut v = [0u32; MAX_WIDTH];
                        o.vector(&mut lx, d, di, x, &mut v[..w]);
                        at.fresh(inv.resources.len());
                        o.assign(&mut lx, Scope::new(d, di), x, &mut at);
                        let total: u64 = at.assign.iter().map(|m| u64::from(m.2)).sum();
                        assert_eq!(total, x);
                        got.push((table, kids, v, at.assign.clone()));
                    }
                    assert_eq!(got[0], got[1], "depth {}, domain {di}, {x} members", d.ix());
                    assert!(lx.table.is_empty() && lx.ntable.is_empty() && lx.nchoice.is_empty());
                    assert!(lx.nsteps.is_empty() && lx.kids.is_empty() && lx.items.is_empty());
                }
            }
        }
        compared
    }

    /// The gang: one-GPU members, unconstrained, or required in a zone/block with slices
    /// of `slice` in a rack (slices apply to constrained roles).
    pub(super) fn gang(three: bool, slice: u32) -> Gang {
        match slice {
            0 | 1 => Gang::new("g").role(Role::new("w", 1).request(GPU, 1)),
            s => Gang::new("g")
                .role(Role::new("w", s).request(GPU, 1))
                .required(if three { "zone" } else { "block" })
                .slice("rack", s),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_narrow_knapsack_is_the_packed_one(
            three in any::<bool>(),
            slice in 0u32..4,
            nodes in proptest::collection::vec(
                (0u8..2, 0u8..3, 0u8..4, 0u8..=3, 0i64..=9, 0i64..=9),
                1..28,
            ),
        ) {
            let inv = inventory(three, &nodes);
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                compare(&inv, &gang(three, slice), policy);
            }
        }
    }

    /// The comparison above reaches narrow tables often, with and without slices.
    #[test]
    fn narrow_tables_are_compared() {
        let mut next = crate::solve::xorshift(91);
        let (mut plain, mut sliced) = (0, 0);
        for k in 0..200 {
            let three = k % 2 == 1;
            let nodes: Vec<_> = (0..1 + next(27))
                .map(|_| {
                    let (z, b, r) = (next(2) as u8, next(3) as u8, next(4) as u8);
                    (z, b, r, next(4) as u8, next(10) as i64, next(10) as i64)
                })
                .collect();
            let inv = inventory(three, &nodes);
            let slice = (k / 2 % 4) as u32;
            let n = compare(&inv, &gang(three, slice), Policy::BestFit);
            if slice > 1 {
                sliced += n;
            } else {
                plain += n;
            }
        }
        assert!(
            plain > 1000 && sliced > 200,
            "{plain} plain, {sliced} sliced"
        );
    }
}

/// Keeping the children of every knapsack of a query (not only the last one's) for the
/// assignment: the same domain, the same members on the same nodes.
#[cfg(test)]
mod memo_tests {
    use super::super::tests::profiled;
    use super::super::*;
    use super::tests::{gang, inventory};
    use proptest::prelude::*;

    /// Every depth, every count (in the gang's grain): the domain `choose_domain`
    /// picks and the members `assign` puts on each node, with only the last knapsack's
    /// children kept and with every one's. Returns how many more assignments took
    /// their children from the memo with every one kept.
    fn compare(inv: &crate::Inventory, gang: &crate::Gang, policy: Policy) -> u64 {
        let c = inv.compile(gang).unwrap();
        let caps = profiled(inv, &c);
        let o = Objective {
            inv,
            caps: &caps,
            grain: Grain::of(&c.inner, &c.inner.roles[0]),
            policy,
            ri: RoleIx(0),
        };
        let step = o.grain.at(Depth::CLUSTER).max(1);
        let total = caps.caps[0][0];
        let mut at = Attempt::default();
        at.ensure(inv);
        let mut hits = [0u64; 2];
        for t in 0..=inv.label_depth() {
            let t = Depth(t);
            if inv.is_node_level(t) {
                continue;
            }
            for count in (step..=total).step_by(step as usize) {
                let mut got = Vec::new();
                for (k, last) in [true, false].into_iter().enumerate() {
                    let mut lx = Lex {
                        memo_last: last,
                        ..Lex::default()
                    };
                    let chosen = o.choose_domain(&mut lx, t, count, count, step, None);
                    at.fresh(inv.resources.len());
                    if let Some((placed, index)) = chosen {
                        o.assign(&mut lx, Scope::new(t, index), placed, &mut at);
                        let sum: u64 = at.assign.iter().map(|m| u64::from(m.2)).sum();
                        assert_eq!(sum, placed);
                    }
                    hits[k] += lx.memo_hits;
                    got.push((chosen, at.assign.clone()));
                }
                assert_eq!(got[0], got[1], "depth {}, {count} members", t.ix());
            }
        }
        hits[1] - hits[0]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn every_knapsacks_children_give_the_same_assignment(
            three in any::<bool>(),
            slice in 0u32..4,
            nodes in proptest::collection::vec(
                (0u8..2, 0u8..3, 0u8..4, 0u8..=8, 0i64..=4, 0i64..=2),
                1..60,
            ),
        ) {
            let inv = inventory(three, &nodes);
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                compare(&inv, &gang(three, slice), policy);
            }
        }
    }

    /// The comparison above takes children from the memo that only keeping every
    /// knapsack's children finds.
    #[test]
    fn earlier_knapsacks_children_are_reused() {
        let mut next = crate::solve::xorshift(17);
        let mut more = 0;
        for k in 0..200 {
            let three = k % 2 == 1;
            let nodes: Vec<_> = (0..1 + next(59))
                .map(|_| {
                    let (z, b, r) = (next(2) as u8, next(3) as u8, next(4) as u8);
                    let kept = if next(8) == 0 { next(3) } else { 3 };
                    (z, b, r, kept as u8, next(5) as i64, next(3) as i64)
                })
                .collect();
            let inv = inventory(three, &nodes);
            let slice = (k / 2 % 4) as u32;
            for policy in [Policy::BestFit, Policy::MostFree, Policy::Balanced] {
                more += compare(&inv, &gang(three, slice), policy);
            }
        }
        assert!(more > 100, "{more} more from the memo");
        eprintln!("{more} more from the memo");
    }
}
