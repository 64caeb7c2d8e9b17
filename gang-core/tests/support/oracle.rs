//! The brute-force oracle shared by the property tests and the fuzz target: random
//! small cases, built both as a gang-core inventory and as plain data the oracle reads.
//!
//! The oracle knows nothing of the solver: it enumerates assignments member by member
//! and checks every rule of the README's "Semantics" directly on the generated description.

#![allow(
    dead_code,
    clippy::needless_range_loop,
    clippy::too_many_arguments,
    clippy::type_complexity
)]

macro_rules! ensure {
    ($c:expr) => { if !$c { return Err(format!("check failed: {}", stringify!($c))); } };
    ($c:expr, $($f:tt)+) => { if !$c { return Err(format!($($f)+)); } };
}
macro_rules! ensure_eq {
    ($a:expr, $b:expr) => { ensure_eq!($a, $b, "") };
    ($a:expr, $b:expr, $($f:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b { return Err(format!("{:?} != {:?}: {}", a, b, format!($($f)+))); }
    }};
}

use gang_core::{
    Gang, Inventory, NodeSpec, Outcome, Placement, Policy, Role, Taint, TaintEffect, Toleration,
    Topology, HOSTNAME_LEVEL,
};

pub const RES: [&str; 3] = ["gpu", "cpu", "mem"];
pub const LEVELS: [&str; 2] = ["zone", "rack"];

#[derive(Debug, Clone)]
pub struct NodeCase {
    /// Label values per level, outermost first; shorter than the level count when a
    /// label is missing (everything finer is then missing too).
    pub path: Vec<u8>,
    pub cap: [u8; 3],
    pub used: [u8; 3],
    pub schedulable: bool,
    pub kind: u8,
    pub tainted: bool,
}

#[derive(Debug, Clone)]
pub struct RoleCase {
    pub count: u32,
    pub min: u32,
    pub req: [u8; 3],
    pub kind: Option<u8>,
    pub tolerates: bool,
    pub max_per_node: Option<u32>,
    pub constrained: bool,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub levels: usize,
    pub nodes: Vec<NodeCase>,
    pub roles: Vec<RoleCase>,
    pub required: Option<usize>,
    pub preferred: Option<usize>,
    pub slice: Option<(usize, u32)>,
    pub policy: Policy,
}

fn level_key(case: &Case, depth: usize) -> &'static str {
    if depth > case.levels {
        HOSTNAME_LEVEL
    } else {
        LEVELS[depth - 1]
    }
}

fn node_name(i: usize) -> String {
    format!("n{i}")
}

pub fn build(case: &Case, reverse: bool) -> (Inventory, Gang) {
    let topo = Topology::new(LEVELS[..case.levels].iter().copied()).unwrap();
    let mut specs: Vec<NodeSpec> = case
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut s =
                NodeSpec::new(node_name(i)).label("kind", if n.kind == 0 { "a" } else { "b" });
            for (l, v) in n.path.iter().enumerate() {
                s = s.label(LEVELS[l], if *v == 0 { "x" } else { "y" });
            }
            for r in 0..3 {
                s = s
                    .capacity(RES[r], i64::from(n.cap[r]))
                    .used(RES[r], i64::from(n.used[r]));
            }
            if n.tainted {
                s = s.taint(Taint::new("dedicated", "x", TaintEffect::NoSchedule));
            }
            if !n.schedulable {
                s = s.cordoned();
            }
            s
        })
        .collect();
    if reverse {
        specs.reverse();
    }
    let inv = Inventory::builder(topo).nodes(specs).build().unwrap();
    let mut gang = Gang::new("g").policy(case.policy);
    for (i, r) in case.roles.iter().enumerate() {
        let mut role = Role::new(format!("r{i}"), r.count).min_count(r.min);
        for (j, q) in r.req.iter().enumerate() {
            if *q > 0 {
                role = role.request(RES[j], i64::from(*q));
            }
        }
        if let Some(k) = r.kind {
            role = role.selector("kind", if k == 0 { "a" } else { "b" });
        }
        if r.tolerates {
            role = role.toleration(Toleration::equal("dedicated", "x"));
        }
        if let Some(m) = r.max_per_node {
            role = role.max_per_node(m);
        }
        if !r.constrained {
            role = role.unconstrained();
        }
        gang = gang.role(role);
    }
    if let Some(d) = case.required {
        gang = gang.required(level_key(case, d));
    }
    if let Some(d) = case.preferred {
        gang = gang.preferred(level_key(case, d));
    }
    if let Some((d, size)) = case.slice {
        gang = gang.slice(level_key(case, d), size);
    }
    (inv, gang)
}

// ---------------------------------------------------------------- the oracle

fn free(n: &NodeCase, r: usize) -> u32 {
    u32::from(n.cap[r].saturating_sub(n.used[r]))
}

fn eligible(n: &NodeCase, r: &RoleCase) -> bool {
    n.schedulable && r.kind.is_none_or(|k| k == n.kind) && (!n.tainted || r.tolerates)
}

/// The domain of node `n` at `depth` (its label values, or its index at the node
/// level); `None` when it lacks a label.
fn domain_of(case: &Case, n: usize, depth: usize) -> Option<Vec<u8>> {
    let node = &case.nodes[n];
    if depth > case.levels {
        Some(vec![0xff, n as u8])
    } else if node.path.len() >= depth {
        Some(node.path[..depth].to_vec())
    } else {
        None
    }
}

/// Whether `x[role][node]` obeys every rule with constrained roles inside `dom` at
/// `depth` (`depth == 0`: anywhere).
fn valid(case: &Case, x: &[Vec<u32>], depth: usize, dom: &Option<Vec<u8>>) -> Result<(), String> {
    for (n, node) in case.nodes.iter().enumerate() {
        for r in 0..3 {
            let load: u32 = case
                .roles
                .iter()
                .zip(x)
                .map(|(role, xs)| xs[n] * u32::from(role.req[r]))
                .sum();
            if load > free(node, r) {
                return Err(format!("node {n} over capacity in {}", RES[r]));
            }
        }
    }
    for (i, role) in case.roles.iter().enumerate() {
        let total: u32 = x[i].iter().sum();
        if total < role.min || total > role.count {
            return Err(format!("role {i}: {total} placed"));
        }
        for (n, node) in case.nodes.iter().enumerate() {
            if x[i][n] == 0 {
                continue;
            }
            if !eligible(node, role) {
                return Err(format!("role {i} on ineligible node {n}"));
            }
            if role.max_per_node.is_some_and(|m| x[i][n] > m) {
                return Err(format!("role {i}: max_per_node broken on {n}"));
            }
            if role.constrained && depth > 0 && domain_of(case, n, depth) != *dom {
                return Err(format!("role {i}: node {n} outside the domain"));
            }
        }
        if let (Some((sd, size)), true) = (case.slice, role.constrained) {
            let mut per: Vec<(Vec<u8>, u32)> = Vec::new();
            for n in 0..case.nodes.len() {
                if x[i][n] == 0 {
                    continue;
                }
                let Some(d) = domain_of(case, n, sd) else {
                    return Err(format!(
                        "role {i}: sliced member on {n} outside every slice domain"
                    ));
                };
                match per.iter_mut().find(|p| p.0 == d) {
                    Some(p) => p.1 += x[i][n],
                    None => per.push((d, x[i][n])),
                }
            }
            if per.iter().any(|p| p.1 % size != 0) {
                return Err(format!("role {i}: not whole slices"));
            }
        }
    }
    Ok(())
}

/// An assignment of exactly `counts`, constrained roles inside `dom`, if one exists.
fn exists(
    case: &Case,
    counts: &[u32],
    depth: usize,
    dom: &Option<Vec<u8>>,
) -> Option<Vec<Vec<u32>>> {
    let m = case.nodes.len();
    let mut x = vec![vec![0u32; m]; case.roles.len()];
    let mut left: Vec<[u32; 3]> = case
        .nodes
        .iter()
        .map(|n| [free(n, 0), free(n, 1), free(n, 2)])
        .collect();
    fn go(
        case: &Case,
        counts: &[u32],
        depth: usize,
        dom: &Option<Vec<u8>>,
        i: usize,
        n: usize,
        rem: u32,
        x: &mut Vec<Vec<u32>>,
        left: &mut Vec<[u32; 3]>,
    ) -> bool {
        if i == case.roles.len() {
            return valid(case, x, depth, dom).is_ok();
        }
        if n == case.nodes.len() {
            return rem == 0
                && go(
                    case,
                    counts,
                    depth,
                    dom,
                    i + 1,
                    0,
                    counts.get(i + 1).copied().unwrap_or(0),
                    x,
                    left,
                );
        }
        let role = &case.roles[i];
        let node = &case.nodes[n];
        let mut hi = rem;
        if !eligible(node, role)
            || (role.constrained && depth > 0 && domain_of(case, n, depth) != *dom)
        {
            hi = 0;
        }
        if let Some(mx) = role.max_per_node {
            hi = hi.min(mx);
        }
        for r in 0..3 {
            if role.req[r] > 0 {
                hi = hi.min(left[n][r] / u32::from(role.req[r]));
            }
        }
        for k in (0..=hi).rev() {
            x[i][n] = k;
            for r in 0..3 {
                left[n][r] -= k * u32::from(role.req[r]);
            }
            let ok = go(case, counts, depth, dom, i, n + 1, rem - k, x, left);
            for r in 0..3 {
                left[n][r] += k * u32::from(role.req[r]);
            }
            if ok {
                return true;
            }
        }
        x[i][n] = 0;
        false
    }
    let first = counts.first().copied().unwrap_or(0);
    go(case, counts, depth, dom, 0, 0, first, &mut x, &mut left).then_some(x)
}

/// The lexicographically largest per-role counts (each within `[min, count]`) that fit.
fn lexmax(case: &Case, depth: usize, dom: &Option<Vec<u8>>) -> Option<Vec<u32>> {
    let mut vectors: Vec<Vec<u32>> = vec![vec![]];
    for role in &case.roles {
        vectors = vectors
            .into_iter()
            .flat_map(|v| {
                (role.min..=role.count)
                    .rev()
                    .map(move |k| [v.clone(), vec![k]].concat())
            })
            .collect();
    }
    vectors
        .into_iter()
        .find(|v| exists(case, v, depth, dom).is_some())
}

/// Depths the solver must try, in order.
pub fn walk(case: &Case) -> Vec<usize> {
    if !case.roles.iter().any(|r| r.constrained) {
        return vec![0];
    }
    match (case.required, case.preferred) {
        (Some(r), Some(p)) => (r..=p).rev().collect(),
        (Some(r), None) => vec![r],
        (None, Some(p)) => (0..=p).rev().collect(),
        (None, None) => vec![0],
    }
}

fn domains(case: &Case, depth: usize) -> Vec<Option<Vec<u8>>> {
    if depth == 0 {
        return vec![None];
    }
    let mut v: Vec<Option<Vec<u8>>> = (0..case.nodes.len())
        .filter_map(|n| domain_of(case, n, depth))
        .map(Some)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The solver's domain, in oracle terms.
pub fn chosen(case: &Case, p: &Placement) -> (usize, Option<Vec<u8>>) {
    let Some(level) = p.level() else {
        return (0, None);
    };
    if level == HOSTNAME_LEVEL {
        let name = &p.domain().last().unwrap().1;
        let n: usize = name[1..].parse().unwrap();
        return (case.levels + 1, Some(vec![0xff, n as u8]));
    }
    let depth = LEVELS.iter().position(|l| *l == level).unwrap() + 1;
    let vals = p
        .domain()
        .iter()
        .map(|(_, v)| if v == "x" { 0 } else { 1 })
        .collect();
    (depth, Some(vals))
}

pub fn assignment_matrix(case: &Case, p: &Placement) -> Vec<Vec<u32>> {
    let mut x = vec![vec![0u32; case.nodes.len()]; case.roles.len()];
    for a in p.assignments() {
        let i: usize = a.role[1..].parse().unwrap();
        let n: usize = a.node[1..].parse().unwrap();
        x[i][n] += a.count;
    }
    x
}

/// Members of `role` node `n` can take on its own (0 when ineligible).
fn node_fit(case: &Case, role: &RoleCase, n: usize) -> u32 {
    let node = &case.nodes[n];
    if !eligible(node, role) {
        return 0;
    }
    let mut f = role.max_per_node.unwrap_or(u32::MAX);
    for r in 0..3 {
        if role.req[r] > 0 {
            f = f.min(free(node, r) / u32::from(role.req[r]));
        }
    }
    f
}

fn single_cap(case: &Case, depth: usize, dom: &Option<Vec<u8>>) -> u32 {
    let role = &case.roles[0];
    (0..case.nodes.len())
        .filter(|&n| !role.constrained || depth == 0 || domain_of(case, n, depth) == *dom)
        .map(|n| node_fit(case, role, n))
        .fold(0u32, u32::saturating_add)
}

pub fn check(case: &Case) -> Result<(), String> {
    let (inv, gang) = build(case, false);
    inv.validate().map_err(|e| e.to_string())?;
    let out = match inv.place(&gang) {
        Ok(o) => o,
        // Structural contradictions (max_per_node against the widest domain) are fine.
        Err(e) if e.kind() == gang_core::ErrorKind::Contradictory => return Ok(()),
        Err(e) => return Err(format!("unexpected error {e}")),
    };

    // The oracle's answer: the first depth of the walk where some domain fits.
    let mut expect: Option<(usize, Vec<(Option<Vec<u8>>, Vec<u32>)>)> = None;
    for depth in walk(case) {
        let fits: Vec<(Option<Vec<u8>>, Vec<u32>)> = domains(case, depth)
            .into_iter()
            .filter_map(|d| lexmax(case, depth, &d).map(|v| (d, v)))
            .collect();
        if !fits.is_empty() {
            expect = Some((depth, fits));
            break;
        }
    }

    match (&out, &expect) {
        (Outcome::Undecided(_), _) => {
            ensure!(false, "undecided within the documented limits: {out:?}");
        }
        (Outcome::Unschedulable(d), None) => {
            ensure!(!d.to_string().is_empty());
            for (i, role) in case.roles.iter().enumerate() {
                let fit: u64 = (0..case.nodes.len())
                    .map(|n| u64::from(node_fit(case, role, n)))
                    .sum();
                ensure_eq!(
                    d.roles[i].cluster_fit,
                    fit,
                    "cluster-wide fit of role {}",
                    i
                );
            }
        }
        (Outcome::Unschedulable(d), Some((depth, fits))) => {
            ensure!(
                false,
                "solver says no ({d}) but depth {depth} fits: {fits:?}"
            );
        }
        (Outcome::Placed(p), None) => {
            ensure!(false, "solver placed {p} but the oracle finds nothing");
        }
        (Outcome::Placed(p), Some((depth, fits))) => {
            p.validate(&inv).map_err(|e| e.to_string())?;
            let (d, dom) = chosen(case, p);
            ensure_eq!(d, *depth, "placed at the wrong level: {}", p);
            let x = assignment_matrix(case, p);
            valid(case, &x, d, &dom).map_err(|e| format!("{e}: {p}"))?;
            ensure!(
                p.search_complete(),
                "incomplete search within the documented limits: {}",
                p
            );
            // The chosen domain is feasible, and gets its lexicographic maximum; no
            // domain of the level gets more members in all.
            let mine = fits.iter().find(|f| f.0 == dom).map(|f| f.1.clone());
            ensure!(
                mine.is_some(),
                "chosen domain infeasible for the oracle: {}",
                p
            );
            let best_total: u32 = fits.iter().map(|f| f.1.iter().sum::<u32>()).max().unwrap();
            let placed: Vec<u32> = x.iter().map(|r| r.iter().sum()).collect();
            ensure_eq!(
                placed.iter().sum::<u32>(),
                best_total,
                "not the most members: {}",
                p
            );
            ensure_eq!(
                &placed,
                mine.as_ref().unwrap(),
                "not the lexicographic maximum: {}",
                p
            );
            if case.roles.len() == 1 {
                // Single role: the least vector of domains per level, then the policy
                // on spare slots, then the first domain (the lexicographic objective).
                let want = single_best(case)
                    .ok_or_else(|| format!("the objective's oracle finds nothing: {p}"))?;
                ensure_eq!(
                    (d, vector(case, d, &x[0]), spare(case, d, &dom, want.placed)),
                    (want.depth, want.vector.clone(), want.spare),
                    "not the least vector, then the policy {:?}: {}",
                    case.policy,
                    p
                );
                ensure_eq!(dom, want.domain, "ties go to the first domain: {}", p);
                if case.slice.is_none() && case.roles[0].min == case.roles[0].count {
                    check_fewest(case, d, &dom, &x, p)?;
                }
            }
        }
    }

    // The exact search alone (no greedy packing first) reaches the same answer.
    if case.roles.len() > 1 {
        let compiled = inv.compile(&gang).unwrap();
        let exact = inv
            .place_with(&mut gang_core::Solver::new().exact_only(), &compiled)
            .unwrap();
        ensure_eq!(
            exact.status(),
            out.status(),
            "exact search alone: {exact:?}"
        );
        if let Some(p) = exact.placement() {
            p.validate(&inv)?;
            ensure!(p.search_complete());
            let (d, dom) = chosen(case, p);
            valid(case, &assignment_matrix(case, p), d, &dom)?;
            ensure_eq!(Some(d), expect.as_ref().map(|e| e.0));
            let placed: u32 = p.assignments().iter().map(|a| a.count).sum();
            ensure_eq!(u64::from(placed), out.placement().unwrap().member_count());
        }
    }

    // The diagnosis-free query finds the same placement, or none.
    let compiled = inv.compile(&gang).unwrap();
    let found = inv
        .find_with(&mut gang_core::Solver::new(), &compiled)
        .unwrap();
    ensure_eq!(found.as_ref(), out.placement(), "find disagrees with place");

    // Determinism: again, and with the nodes given in reverse order.
    let again = inv.place(&gang).unwrap();
    ensure_eq!(out.to_json(), again.to_json());
    let (inv2, gang2) = build(case, true);
    ensure_eq!(out.to_json(), inv2.place(&gang2).unwrap().to_json());

    // Monotonicity: more free capacity never turns a fit into a no-fit.
    if out.is_placed() {
        for n in 0..case.nodes.len() {
            let mut more = case.clone();
            let node = &mut more.nodes[n];
            node.used = [0, 0, 0];
            node.cap = [node.cap[0] + 1, node.cap[1] + 1, node.cap[2] + 1];
            let (inv3, gang3) = build(&more, false);
            let o = inv3.place(&gang3).unwrap();
            ensure!(o.is_placed(), "freeing node {n} broke the fit: {o:?}");
        }
    }
    Ok(())
}

/// Single role: the members use as few children of the chosen domain as possible, and
/// as few nodes as possible within each child used.
fn check_fewest(
    case: &Case,
    depth: usize,
    dom: &Option<Vec<u8>>,
    x: &[Vec<u32>],
    p: &Placement,
) -> Result<(), String> {
    let role = &case.roles[0];
    let count = role.count;
    let child_depth = depth + 1;
    if depth > case.levels || !role.constrained && depth > 0 {
        return Ok(());
    }
    // Children: domains at the next depth inside `dom`, plus loose nodes (each its own).
    let mut groups: Vec<(Option<Vec<u8>>, Vec<usize>)> = Vec::new();
    for n in 0..case.nodes.len() {
        if depth > 0 && domain_of(case, n, depth) != *dom {
            continue;
        }
        let key = domain_of(case, n, child_depth).or(Some(vec![0xfe, n as u8]));
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(n),
            None => groups.push((key, vec![n])),
        }
    }
    let fit = |n: usize| node_fit(case, role, n);
    let mut caps: Vec<u32> = groups
        .iter()
        .map(|g| {
            g.1.iter()
                .map(|&n| fit(n))
                .fold(0u32, |a, b| a.saturating_add(b))
        })
        .collect();
    caps.sort_unstable_by(|a, b| b.cmp(a));
    let mut need = 0u32;
    let mut k = 0usize;
    while need < count {
        need = need.saturating_add(caps[k]);
        k += 1;
    }
    let used = groups
        .iter()
        .filter(|g| g.1.iter().any(|&n| x[0][n] > 0))
        .count();
    ensure_eq!(used, k, "not the fewest children: {}", p);
    for g in &groups {
        let mine: u32 = g.1.iter().map(|&n| x[0][n]).sum();
        if mine == 0 {
            continue;
        }
        let mut fits: Vec<u32> = g.1.iter().map(|&n| fit(n)).collect();
        fits.sort_unstable_by(|a, b| b.cmp(a));
        let (mut s, mut kk) = (0u32, 0usize);
        while s < mine {
            s = s.saturating_add(fits[kk]);
            kk += 1;
        }
        let nodes = g.1.iter().filter(|&&n| x[0][n] > 0).count();
        // Within a child the nodes are themselves the next level only when the child
        // is at the deepest label level; deeper trees are checked level by level by
        // the recursion of the solver, so only the node count bound applies here.
        if child_depth >= case.levels {
            ensure_eq!(nodes, kk, "not the fewest nodes in a child: {}", p);
        }
    }
    Ok(())
}

// ------------------------------------------------- the lexicographic objective

/// A placement's vector inside a domain at `depth`: the domains it uses at each label
/// level below `depth` (a node lacking that level's label counts as one of its own),
/// outermost first, then its nodes. `x[node]` is the members on each node.
pub fn vector(case: &Case, depth: usize, x: &[u32]) -> Vec<u32> {
    let used: Vec<usize> = (0..x.len()).filter(|&n| x[n] > 0).collect();
    let mut v = Vec::new();
    for e in depth + 1..=case.levels {
        let mut units: Vec<(Option<Vec<u8>>, usize)> = used
            .iter()
            .map(|&n| match domain_of(case, n, e) {
                Some(d) => (Some(d), 0),
                None => (None, n),
            })
            .collect();
        units.sort();
        units.dedup();
        v.push(units.len() as u32);
    }
    v.push(used.len() as u32);
    v
}

/// Every placement of exactly `k` members of the single role inside `dom` at `depth`
/// (`depth == 0` or an unconstrained role: anywhere), as `x[node]`, passed to `f`.
pub fn placements(
    case: &Case,
    depth: usize,
    dom: &Option<Vec<u8>>,
    k: u32,
    f: &mut dyn FnMut(&[u32]),
) {
    let role = &case.roles[0];
    let m = case.nodes.len();
    let caps: Vec<u32> = (0..m)
        .map(|n| {
            let inside = !role.constrained || depth == 0 || domain_of(case, n, depth) == *dom;
            if inside {
                node_fit(case, role, n).min(k)
            } else {
                0
            }
        })
        .collect();
    let mut x = vec![0u32; m];
    fn go(
        case: &Case,
        depth: usize,
        dom: &Option<Vec<u8>>,
        caps: &[u32],
        n: usize,
        rem: u32,
        x: &mut Vec<u32>,
        f: &mut dyn FnMut(&[u32]),
    ) {
        if n == caps.len() {
            if rem == 0 && valid(case, std::slice::from_ref(x), depth, dom).is_ok() {
                f(x);
            }
            return;
        }
        let room: u32 = caps[n..].iter().sum();
        if room < rem {
            return;
        }
        for c in 0..=caps[n].min(rem) {
            x[n] = c;
            go(case, depth, dom, caps, n + 1, rem - c, x, f);
        }
        x[n] = 0;
    }
    go(case, depth, dom, &caps, 0, k, &mut x, f);
}

/// The least vector of placing exactly `k` members in `dom` at `depth`, if any.
pub fn least_vector(case: &Case, depth: usize, dom: &Option<Vec<u8>>, k: u32) -> Option<Vec<u32>> {
    let mut best: Option<Vec<u32>> = None;
    placements(case, depth, dom, k, &mut |x| {
        let v = vector(case, depth, x);
        if best.as_ref().is_none_or(|b| v < *b) {
            best = Some(v);
        }
    });
    best
}

/// A single role's capacity in `dom` at `depth`, as the roll-up counts it: the sum of
/// its nodes' fits, in whole slices per slice domain when `depth` is at or above the
/// slice level (below it, nodes outside every slice domain count nothing and the rest
/// count whole).
pub fn capacity(case: &Case, depth: usize, dom: &Option<Vec<u8>>) -> u32 {
    let role = &case.roles[0];
    let inside = |n: usize| !role.constrained || depth == 0 || domain_of(case, n, depth) == *dom;
    match (case.slice, role.constrained) {
        (Some((sd, _)), true) if depth > sd => (0..case.nodes.len())
            .filter(|&n| inside(n) && domain_of(case, n, sd).is_some())
            .map(|n| node_fit(case, role, n))
            .sum(),
        (Some((sd, size)), true) => {
            let mut per: Vec<(Vec<u8>, u32)> = Vec::new();
            for n in (0..case.nodes.len()).filter(|&n| inside(n)) {
                let Some(d) = domain_of(case, n, sd) else {
                    continue;
                };
                let f = node_fit(case, role, n);
                match per.iter_mut().find(|p| p.0 == d) {
                    Some(p) => p.1 += f,
                    None => per.push((d, f)),
                }
            }
            per.iter().map(|p| p.1 / size * size).sum()
        }
        _ => (0..case.nodes.len())
            .filter(|&n| inside(n))
            .map(|n| node_fit(case, role, n))
            .fold(0u32, u32::saturating_add),
    }
}

/// The spare slots a placement of `placed` members leaves in `dom` at `depth`.
pub fn spare(case: &Case, depth: usize, dom: &Option<Vec<u8>>, placed: u32) -> u32 {
    capacity(case, depth, dom) - placed
}

/// What the objective asks of a single-role gang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Best {
    pub depth: usize,
    pub domain: Option<Vec<u8>>,
    pub placed: u32,
    pub vector: Vec<u32>,
    pub spare: u32,
}

/// The single-role answer by enumeration: at the first depth of the walk where a
/// domain holds `min_count`, the domains holding the most members; among them the
/// least vector, then the policy on spare slots, then the first domain.
pub fn single_best(case: &Case) -> Option<Best> {
    let role = &case.roles[0];
    for depth in walk(case) {
        let mut found: Vec<Best> = Vec::new();
        for dom in domains(case, depth) {
            for k in (role.min.max(1)..=role.count).rev() {
                if let Some(v) = least_vector(case, depth, &dom, k) {
                    let spare = spare(case, depth, &dom, k);
                    found.push(Best {
                        depth,
                        domain: dom.clone(),
                        placed: k,
                        vector: v,
                        spare,
                    });
                    break;
                }
            }
        }
        let most = found.iter().map(|b| b.placed).max();
        let Some(most) = most else { continue };
        found.retain(|b| b.placed == most);
        found.sort_by(|a, b| {
            a.vector
                .cmp(&b.vector)
                .then(match case.policy {
                    Policy::MostFree => b.spare.cmp(&a.spare),
                    _ => a.spare.cmp(&b.spare),
                })
                .then(order(case, depth, &a.domain).cmp(&order(case, depth, &b.domain)))
        });
        return found.into_iter().next();
    }
    None
}

/// Where a domain at `depth` comes in topology order: by label values, and nodes by
/// their path (a missing label after every value), then by name.
fn order(case: &Case, depth: usize, dom: &Option<Vec<u8>>) -> Vec<u8> {
    match dom {
        Some(d) if depth > case.levels => {
            let n = usize::from(d[1]);
            let mut key = case.nodes[n].path.clone();
            key.resize(case.levels, 0xff);
            key.push(d[1]);
            key
        }
        Some(d) => d.clone(),
        None => Vec::new(),
    }
}
