//! Structure-aware lifecycle fuzzing: an input is a small cluster, a few gangs and a
//! length-prefixed list of lifecycle operations (`Arbitrary`-derived), applied to one
//! inventory built once per input.
//!
//! After every operation: `validate()`; free capacity equals capacity minus external
//! use minus what the live reservations hold (through the public API); the live
//! reservations are exactly the ones the operations handed out. Operations that reserve
//! are re-checked from public data alone (eligibility, `max_per_node`, counts, capacity
//! as it was just before, locality at the required level, whole slices); a placement's
//! own `validate` agrees with `reserve` on whether it still fits; a warm solver agrees
//! with a fresh one; failed or pending operations change nothing. At the end every
//! reservation is released and the inventory must be back to capacity minus use.
//!
//! Reproduce a crash: `cargo +nightly fuzz run operations <file>`; print the input as
//! data: `cargo +nightly fuzz fmt operations <file>`.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use gang_core::lifecycle::{Admission, AdmitMode, Replacement, Spread, SpreadOutcome};
use gang_core::request::{Requirement, SelectorOperator};
use gang_core::{
    CompiledGang, Error, ErrorKind, Gang, Inventory, NodeSpec, Outcome, Placement, Policy,
    ReservationId, Role, Solver, Taint, TaintEffect, Toleration, Topology, HOSTNAME_LEVEL,
};
use libfuzzer_sys::fuzz_target;

/// Topology levels, outermost first.
const LEVELS: [&str; 2] = ["block", "rack"];
/// Resources; no node has `mem` at first (naming it re-sorts the resource columns).
const RES: [&str; 3] = ["gpu", "cpu", "mem"];
/// Gangs known to be valid for every inventory here (only `Contradictory` may come back,
/// for `max_per_node` against racks too narrow for it). Generated gangs follow them.
const FIXED_GANGS: usize = 6;

macro_rules! ensure {
    ($c:expr, $($f:tt)+) => { if !$c { return Err(format!($($f)+)); } };
}

// ---------------------------------------------------------------------------------
// The input.

/// A node as the fuzzer describes it, in three bytes; all zeroes is a plain node with
/// both topology labels, 8 GPUs and 8 CPUs.
#[derive(Arbitrary, Debug, Clone)]
struct NodeDesc {
    labels: LabelDesc,
    /// GPUs (low nibble) and CPUs (high nibble), counted down from 8.
    size: u8,
    /// External use (bits 0-2), a taint (bits 3-5), cordoned (bits 6-7 both set).
    extra: u8,
}

/// A node's labels in one byte: block (bit 0), rack (bits 1-2), the `kind` label
/// (bit 3), which topology labels are present (bits 4-7).
#[derive(Arbitrary, Debug, Clone)]
struct LabelDesc(u8);

impl LabelDesc {
    /// With `bad`, one pattern in sixteen is a malformed label value.
    fn labels(&self, bad: bool) -> Vec<(String, String)> {
        let p = self.0;
        let kind = if p & 8 == 0 { "a" } else { "b" };
        let mut out = vec![("kind".to_owned(), kind.to_owned())];
        let block = ("block".to_owned(), format!("b{}", p & 1));
        let rack = ("rack".to_owned(), format!("r{}", ((p >> 1) & 3) % 3));
        match p >> 4 {
            // Most nodes carry both levels; some lose the rack, or the block (a rack
            // label without a block is in no domain), or carry none.
            12 | 13 => out.push(block),
            14 => out.push(rack),
            15 if bad => out.push(("rack".to_owned(), "not a value!".to_owned())),
            15 => {}
            _ => out.extend([block, rack]),
        }
        out
    }
}

impl NodeDesc {
    fn spec(&self, name: &str, bad: bool) -> NodeSpec {
        let mut s = NodeSpec::new(name);
        for (k, v) in self.labels.labels(bad) {
            s = s.label(k, v);
        }
        s = s
            .capacity("gpu", i64::from(8 - (self.size & 15) % 9))
            .capacity("cpu", i64::from(8 - (self.size >> 4) % 8));
        match self.extra & 7 {
            1 => s = s.used("gpu", 1),
            2 => s = s.used("gpu", 2),
            3 => s = s.used("cpu", "1500m"),
            _ => {}
        }
        match (self.extra >> 3) & 7 {
            1 => s = s.taint(Taint::new("dedicated", "x", TaintEffect::NoSchedule)),
            2 => s = s.taint(Taint::new("dedicated", "x", TaintEffect::PreferNoSchedule)),
            3 => s = s.taint(Taint::new("maint", "", TaintEffect::NoExecute)),
            _ => {}
        }
        if self.extra >> 6 == 3 {
            s = s.cordoned();
        }
        s
    }
}

/// A role of a generated gang, in four bytes; all zeroes is one member asking for one
/// GPU.
#[derive(Arbitrary, Debug, Clone)]
struct RoleDesc {
    /// Count (bits 0-1, plus one) and min_count (bits 2-4: 0 none, else one less).
    counts: u8,
    /// GPU (bits 0-1), CPU (bits 2-3), memory (bit 4) per member.
    requests: u8,
    /// Selector (bits 0-2) and toleration (bits 3-4).
    select: u8,
    /// max_per_node (bits 0-1), unconstrained (bits 2-4 all set).
    shape: u8,
}

/// A generated gang: up to three roles, levels, one slice level, a policy.
#[derive(Debug, Clone)]
struct GangDesc {
    roles: Vec<RoleDesc>,
    required: u8,
    preferred: u8,
    slice: u8,
    policy: u8,
}

fn level_of(b: u8) -> Option<&'static str> {
    match b % 5 {
        1 => Some("block"),
        2 => Some("rack"),
        3 => Some(HOSTNAME_LEVEL),
        _ => None,
    }
}

impl GangDesc {
    fn gang(&self, i: usize) -> Gang {
        let mut g = Gang::new(format!("gen{i}")).policy(match self.policy % 3 {
            0 => Policy::BestFit,
            1 => Policy::MostFree,
            _ => Policy::Balanced,
        });
        for (j, r) in self.roles.iter().enumerate() {
            let count = 1 + u32::from(r.counts & 3);
            let mut role = Role::new(format!("r{j}"), count);
            match (r.counts >> 2) & 7 {
                0 => {}
                m => role = role.min_count((u32::from(m) - 1).min(count)),
            }
            let q = r.requests;
            for (res, n) in [
                ("gpu", (1 + (q & 3)) % 4),
                ("cpu", (q >> 2) & 3),
                ("mem", (q >> 4) & 1),
            ] {
                if n > 0 {
                    role = role.request(res, i64::from(n));
                }
            }
            role = match r.select & 7 {
                1 => role.selector("kind", "a"),
                2 => role.requirement(Requirement::is_in("kind", ["b"])),
                3 => role.requirement(Requirement::not_in("kind", ["a"])),
                4 => role.requirement(Requirement::exists("rack")),
                5 => role.requirement(Requirement::does_not_exist("rack")),
                _ => role,
            };
            role = match (r.select >> 3) & 3 {
                1 => role.toleration(Toleration::equal("dedicated", "x")),
                2 => role.toleration(Toleration::exists("")),
                _ => role,
            };
            if r.shape & 3 != 0 {
                role = role.max_per_node(u32::from(r.shape & 3));
            }
            if (r.shape >> 2) & 7 == 7 {
                role = role.unconstrained();
            }
            g = g.role(role);
        }
        if let Some(l) = level_of(self.required) {
            g = g.required(l);
        }
        if let Some(l) = level_of(self.preferred) {
            g = g.preferred(l);
        }
        match self.slice % 8 {
            1 => g = g.slice("rack", 2),
            2 => g = g.slice("block", 2),
            3 => g = g.slice(HOSTNAME_LEVEL, 2),
            4 => g = g.slice("rack", 3),
            _ => {}
        }
        g
    }
}

/// One lifecycle operation. Indices are taken modulo what exists; a node index of 255
/// names a node that does not exist.
#[derive(Arbitrary, Debug, Clone)]
enum Op {
    /// Place (fresh and with the warm solver, which must agree) and keep the placement.
    Place {
        gang: u8,
    },
    /// Place with the warm solver and reserve at once (reserve then release must be the
    /// identity first).
    Reserve {
        gang: u8,
    },
    /// Reserve a kept placement, possibly stale.
    ReserveKept {
        slot: u8,
    },
    Release {
        slot: u8,
    },
    Replace {
        slot: u8,
    },
    FailNode {
        node: u8,
    },
    AddNode {
        desc: NodeDesc,
        duplicate: bool,
    },
    RemoveNode {
        node: u8,
    },
    Cordon {
        node: u8,
    },
    Uncordon {
        node: u8,
    },
    SetUsed {
        node: u8,
        res: u8,
        amount: u8,
    },
    SetCapacity {
        node: u8,
        res: u8,
        amount: u8,
    },
    SetLabels {
        node: u8,
        labels: LabelDesc,
    },
    Spread {
        gang: u8,
        replicas: u8,
        min: u8,
        level: u8,
        within: u8,
    },
    Admit {
        queue: [u8; 3],
        len: u8,
        backfill: bool,
    },
}

#[derive(Debug)]
struct Input {
    nodes: Vec<NodeDesc>,
    gangs: Vec<GangDesc>,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        // Length prefixes: nodes, generated gangs, operations. Operations stop early when
        // the bytes run out, so no input ends in a tail of default operations.
        let n = u.int_in_range(1..=6u8)?;
        let nodes = (0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?;
        let g = u.int_in_range(0..=3u8)?;
        let mut gangs = Vec::new();
        for _ in 0..g {
            let roles = (0..u.int_in_range(1..=3u8)?)
                .map(|_| u.arbitrary())
                .collect::<ArbResult<_>>()?;
            gangs.push(GangDesc {
                roles,
                required: u.arbitrary()?,
                preferred: u.arbitrary()?,
                slice: u.arbitrary()?,
                policy: u.arbitrary()?,
            });
        }
        let len = u.int_in_range(0..=63u8)?;
        let mut ops = Vec::new();
        for _ in 0..len {
            if u.is_empty() {
                break;
            }
            ops.push(u.arbitrary()?);
        }
        Ok(Input { nodes, gangs, ops })
    }
}

// ---------------------------------------------------------------------------------
// Checks from public data.

type FreeMap = BTreeMap<String, [u64; 3]>;

fn free_map(inv: &Inventory) -> FreeMap {
    inv.node_names()
        .map(|n| {
            let f = |r| inv.free(n, r).map_or(0, |q| q.millis());
            (n.to_owned(), [f(RES[0]), f(RES[1]), f(RES[2])])
        })
        .collect()
}

fn res_ix(r: &str) -> usize {
    RES.iter().position(|x| *x == r).expect("a known resource")
}

/// Free = capacity − used − held by reservations (saturating), for every node.
fn check_accounting(inv: &Inventory) -> Result<(), String> {
    inv.validate()?;
    let mut held: BTreeMap<(String, usize), u64> = BTreeMap::new();
    for r in inv.reservations() {
        for (node, res, q) in r.usage(inv) {
            *held.entry((node, res_ix(&res))).or_default() += q.millis();
        }
    }
    for name in inv.node_names() {
        let spec = inv.node_spec(name).ok_or("a listed node has no spec")?;
        for (ri, res) in RES.iter().enumerate() {
            let amount =
                |it: &mut dyn Iterator<Item = (&str, &gang_core::request::QuantitySpec)>| {
                    for (r, a) in it {
                        if r == *res {
                            return a.resolve("x").map_or(u64::MAX, |q| q.millis());
                        }
                    }
                    0
                };
            let want = amount(&mut spec.get_capacity())
                .saturating_sub(amount(&mut spec.get_used()))
                .saturating_sub(held.get(&(name.to_owned(), ri)).copied().unwrap_or(0));
            let got = inv.free(name, res).map_or(0, |q| q.millis());
            ensure!(
                got == want,
                "free {res} on {name} is {got}, expected {want}"
            );
        }
    }
    Ok(())
}

/// Whether a role may have a member on the node (schedulable, selectors, taints).
fn eligible(role: &Role, spec: &NodeSpec) -> bool {
    let matches = |r: &Requirement| {
        let v = spec.get_label(&r.key);
        match r.operator {
            SelectorOperator::In => v.is_some_and(|v| r.values.iter().any(|x| x == v)),
            SelectorOperator::NotIn => v.is_none_or(|v| r.values.iter().all(|x| x != v)),
            SelectorOperator::Exists => v.is_some(),
            SelectorOperator::DoesNotExist => v.is_none(),
        }
    };
    spec.is_schedulable()
        && role
            .get_node_selector()
            .all(|(k, v)| spec.get_label(k) == Some(v))
        && role.get_match_expressions().iter().all(matches)
        && spec
            .get_taints()
            .iter()
            .all(|t| !t.effect.excludes() || role.get_tolerations().iter().any(|x| x.tolerates(t)))
}

/// The domain key of a node at a level: its label path down to the level, or the node
/// itself at the node level; `None` when a label is missing.
fn domain_key(spec: &NodeSpec, level: &str) -> Option<Vec<String>> {
    if level == HOSTNAME_LEVEL {
        return Some(vec![spec.get_name().to_owned()]);
    }
    let depth = LEVELS.iter().position(|l| *l == level)? + 1;
    LEVELS[..depth]
        .iter()
        .map(|l| spec.get_label(l).map(str::to_owned))
        .collect()
}

/// Members per role of a reservation.
fn totals(inv: &Inventory, id: ReservationId) -> Vec<u32> {
    let r = inv.reservation(id).expect("live");
    r.gang()
        .get_roles()
        .iter()
        .map(|role| {
            r.assignments(inv)
                .iter()
                .filter(|a| a.role == role.get_name())
                .map(|a| a.count)
                .sum()
        })
        .collect()
}

/// A new reservation (or several, from one spread) re-checked from public data: its
/// members fit in what was free just before, on eligible nodes, within `max_per_node`
/// and the role's counts, constrained members inside one domain of the required level
/// and whole slices.
fn check_new(inv: &Inventory, ids: &[ReservationId], before: &FreeMap) -> Result<(), String> {
    let mut load: BTreeMap<(String, usize), u64> = BTreeMap::new();
    for &id in ids {
        let r = inv
            .reservation(id)
            .ok_or(format!("reservation {id} is not live"))?;
        let gang = r.gang();
        ensure!(r.lost().is_empty(), "a new reservation has lost members");
        for (node, res, q) in r.usage(inv) {
            *load.entry((node, res_ix(&res))).or_default() += q.millis();
        }
        let assignments = r.assignments(inv);
        let mut seen = BTreeSet::new();
        let mut specs = BTreeMap::new();
        for a in &assignments {
            ensure!(
                seen.insert((a.role.clone(), a.node.clone())),
                "{} on {} twice",
                a.role,
                a.node
            );
            ensure!(a.count > 0, "an empty assignment on {}", a.node);
            let role = gang
                .get_roles()
                .iter()
                .find(|x| x.get_name() == a.role)
                .ok_or("an assignment of an unknown role")?;
            let spec = inv
                .node_spec(&a.node)
                .ok_or(format!("member on unknown node {}", a.node))?;
            ensure!(
                eligible(role, &spec),
                "role {} on ineligible node {}",
                a.role,
                a.node
            );
            if let Some(m) = role.get_max_per_node() {
                ensure!(
                    a.count <= m,
                    "{} members of {} on {} > max_per_node {m}",
                    a.count,
                    a.role,
                    a.node
                );
            }
            specs.insert(a.node.clone(), spec);
        }
        for (role, placed) in gang.get_roles().iter().zip(totals(inv, id)) {
            let (min, max) = (
                role.get_min_count().unwrap_or(role.get_count()),
                role.get_count(),
            );
            ensure!(
                (min..=max).contains(&placed),
                "role {}: {placed} placed outside [{min}, {max}]",
                role.get_name()
            );
        }
        let constrained = || {
            assignments.iter().filter(|a| {
                gang.get_roles()
                    .iter()
                    .any(|r| r.get_name() == a.role && r.is_constrained())
            })
        };
        let topo = gang.get_topology();
        if let Some(req) = &topo.required {
            let doms: BTreeSet<Option<Vec<String>>> = constrained()
                .map(|a| domain_key(&specs[&a.node], req))
                .collect();
            ensure!(
                doms.len() <= 1 && !doms.contains(&None),
                "constrained members of {} span {doms:?} at {req}",
                gang.get_name()
            );
            if let (Some(Some(d)), true) = (doms.first(), req != HOSTNAME_LEVEL) {
                let want: Vec<&str> = r
                    .domain()
                    .iter()
                    .take(d.len())
                    .map(|x| x.1.as_str())
                    .collect();
                ensure!(
                    want == d.iter().map(String::as_str).collect::<Vec<_>>(),
                    "reservation domain {:?} is not its members' {d:?}",
                    r.domain()
                );
            }
        }
        for s in &topo.slices {
            for role in gang.get_roles().iter().filter(|r| r.is_constrained()) {
                let mut per: BTreeMap<Option<Vec<String>>, u32> = BTreeMap::new();
                for a in constrained().filter(|a| a.role == role.get_name()) {
                    *per.entry(domain_key(&specs[&a.node], &s.level))
                        .or_default() += a.count;
                }
                ensure!(
                    !per.contains_key(&None),
                    "slice member outside every {}",
                    s.level
                );
                ensure!(
                    per.values().all(|k| k % s.size == 0),
                    "role {} not in whole slices of {} per {}: {per:?}",
                    role.get_name(),
                    s.size,
                    s.level
                );
            }
        }
    }
    for ((node, r), need) in load {
        let free = before.get(&node).map_or(0, |f| f[r]);
        ensure!(
            need <= free,
            "reserved {need} {} on {node}, only {free} was free",
            RES[r]
        );
    }
    Ok(())
}

/// Whether `set_labels` must report the reservation: some constrained member is no
/// longer under every topology label of its domain (one-node and cluster-wide
/// placements never are).
fn displaced(inv: &Inventory, id: ReservationId) -> bool {
    let r = inv.reservation(id).unwrap();
    // A one-node placement stays on its node whatever the node's labels.
    if r.domain().iter().any(|(k, _)| k == HOSTNAME_LEVEL) {
        return false;
    }
    let want: Vec<(&str, &str)> = r
        .domain()
        .iter()
        .filter(|(k, _)| LEVELS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    r.assignments(inv).iter().any(|a| {
        let constrained = r
            .gang()
            .get_roles()
            .iter()
            .any(|x| x.get_name() == a.role && x.is_constrained());
        let spec = inv.node_spec(&a.node).unwrap();
        constrained && want.iter().any(|(k, v)| spec.get_label(k) != Some(v))
    })
}

// ---------------------------------------------------------------------------------
// The run.

struct Run {
    inv: Inventory,
    gangs: Vec<Gang>,
    compiled: Vec<Option<CompiledGang>>,
    warm: Solver,
    /// Live reservations handed out, with their members per role when made whole.
    live: Vec<(ReservationId, Vec<u32>)>,
    /// Placements kept for `ReserveKept` (the last four).
    kept: Vec<Placement>,
    next_node: usize,
}

/// The only errors a request may meet: `Contradictory` for the fixed gangs (narrow
/// racks), also `InvalidRequest` for generated ones. Anything else is a finding.
fn allowed<T>(g: usize, r: Result<T, Error>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == ErrorKind::Contradictory => Ok(None),
        Err(e) if g >= FIXED_GANGS && e.kind() == ErrorKind::InvalidRequest => Ok(None),
        Err(e) => Err(format!(
            "unexpected error for gang {g}: {e} ({:?})",
            e.kind()
        )),
    }
}

impl Run {
    fn node(&self, i: u8) -> Option<String> {
        if i == 255 {
            return Some("nope".to_owned());
        }
        let n = self.inv.len();
        (n > 0).then(|| {
            self.inv
                .node_names()
                .nth(usize::from(i) % n)
                .unwrap()
                .to_owned()
        })
    }

    /// A change to a node: unknown names are `UnknownNode` and change nothing.
    fn node_change<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Inventory, &str) -> Result<T, Error>,
        invalid: &[ErrorKind],
    ) -> Result<Option<T>, String> {
        let before = free_map(&self.inv);
        let count = self.inv.reservations().count();
        match f(&mut self.inv, name) {
            Ok(v) => {
                ensure!(name != "nope", "a change to an unknown node succeeded");
                Ok(Some(v))
            }
            Err(e) => {
                let ok = if name == "nope" {
                    e.kind() == ErrorKind::UnknownNode
                } else {
                    invalid.contains(&e.kind())
                };
                ensure!(ok, "unexpected error on {name}: {e}");
                ensure!(
                    free_map(&self.inv) == before,
                    "a failed change changed free capacity"
                );
                ensure!(
                    self.inv.reservations().count() == count,
                    "a failed change changed reservations"
                );
                Ok(None)
            }
        }
    }

    fn keep(&mut self, p: Placement) {
        if self.kept.len() == 4 {
            self.kept.remove(0);
        }
        self.kept.push(p);
    }

    fn compiled(&mut self, g: usize) -> Option<&CompiledGang> {
        if self.compiled[g].is_none() {
            self.compiled[g] = self.inv.compile(&self.gangs[g]).ok();
        }
        self.compiled[g].as_ref()
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        let ng = self.gangs.len();
        match *op {
            Op::Place { gang } => {
                let g = usize::from(gang) % ng;
                let Some(fresh) = allowed(g, self.inv.place(&self.gangs[g]))? else {
                    return Ok(());
                };
                if let Some(p) = fresh.placement() {
                    p.validate(&self.inv)?;
                }
                // The answer renders: a diagnosis as a paragraph, any outcome as JSON.
                if let Some(d) = fresh.diagnosis() {
                    ensure!(!d.to_string().is_empty(), "an empty diagnosis");
                }
                ensure!(fresh.to_json().starts_with('{'), "outcome JSON");
                if let Some(c) = self.compiled(g).cloned() {
                    let warm = self
                        .inv
                        .place_with(&mut self.warm, &c)
                        .map_err(|e| e.to_string())?;
                    ensure!(
                        (warm.status(), warm.placement(), warm.diagnosis())
                            == (fresh.status(), fresh.placement(), fresh.diagnosis()),
                        "warm solver disagrees with a fresh one for gang {g}: {warm:?} vs {fresh:?}"
                    );
                    let found = self
                        .inv
                        .find_with(&mut self.warm, &c)
                        .map_err(|e| e.to_string())?;
                    ensure!(
                        found.as_ref() == fresh.placement(),
                        "find_with disagrees with place"
                    );
                }
                if let Outcome::Placed(p) = fresh {
                    self.keep(p);
                }
            }
            Op::Reserve { gang } => {
                let g = usize::from(gang) % ng;
                let Some(c) = self.compiled(g).cloned() else {
                    return Ok(());
                };
                let Some(out) = allowed(g, self.inv.place_with(&mut self.warm, &c))? else {
                    return Ok(());
                };
                if let Outcome::Placed(p) = out {
                    p.validate(&self.inv)?;
                    let before = free_map(&self.inv);
                    let id = self
                        .inv
                        .reserve(&p)
                        .map_err(|e| format!("fresh placement refused: {e}"))?;
                    self.inv.release(id).map_err(|e| e.to_string())?;
                    ensure!(
                        free_map(&self.inv) == before,
                        "reserve then release is not the identity"
                    );
                    let id = self
                        .inv
                        .reserve(&p)
                        .map_err(|e| format!("fresh placement refused: {e}"))?;
                    check_new(&self.inv, &[id], &before)?;
                    self.live.push((id, totals(&self.inv, id)));
                }
            }
            Op::ReserveKept { slot } => {
                if self.kept.is_empty() {
                    return Ok(());
                }
                let p = self.kept[usize::from(slot) % self.kept.len()].clone();
                let before = free_map(&self.inv);
                let count = self.inv.reservations().count();
                let valid = p.validate(&self.inv);
                let same_layout =
                    !matches!(&valid, Err(e) if e.contains("different inventory layout"));
                let r = self.inv.reserve(&p);
                if same_layout {
                    ensure!(
                        valid.is_ok() == r.is_ok(),
                        "validate says {valid:?} but reserve says {:?} for {p}",
                        r.as_ref().map_err(ToString::to_string)
                    );
                }
                match r {
                    Ok(id) => {
                        check_new(&self.inv, &[id], &before)?;
                        self.live.push((id, totals(&self.inv, id)));
                    }
                    Err(e) => {
                        ensure!(
                            e.kind() == ErrorKind::Conflict,
                            "reserve failed with {e}, not a conflict"
                        );
                        ensure!(
                            free_map(&self.inv) == before,
                            "a refused reserve changed free capacity"
                        );
                        ensure!(
                            self.inv.reservations().count() == count,
                            "a refused reserve changed reservations"
                        );
                    }
                }
            }
            Op::Release { slot } => {
                if !self.live.is_empty() {
                    let (id, _) = self.live.remove(usize::from(slot) % self.live.len());
                    self.inv
                        .release(id)
                        .map_err(|e| format!("release of a live id: {e}"))?;
                    let again = self.inv.release(id).map(|_| ()).map_err(|e| e.kind());
                    ensure!(
                        again == Err(ErrorKind::UnknownReservation),
                        "second release: {again:?}"
                    );
                }
            }
            Op::Replace { slot } => {
                if self.live.is_empty() {
                    return Ok(());
                }
                let (id, whole) = self.live[usize::from(slot) % self.live.len()].clone();
                let before = free_map(&self.inv);
                let usage = |inv: &Inventory| -> BTreeMap<(String, String), u64> {
                    inv.reservation(id)
                        .unwrap()
                        .usage(inv)
                        .into_iter()
                        .map(|(n, r, q)| ((n, r), q.millis()))
                        .collect()
                };
                let held = usage(&self.inv);
                let r = self.inv.reservation(id).unwrap();
                let (gang, domain) = (r.gang().clone(), r.domain().to_vec());
                match self
                    .inv
                    .replace(id)
                    .map_err(|e| format!("replace of a live id: {e}"))?
                {
                    Replacement::Placed { added } => {
                        let r = self.inv.reservation(id).unwrap();
                        ensure!(r.lost().is_empty(), "placed, yet members still lost");
                        ensure!(
                            totals(&self.inv, id) == whole,
                            "replacement did not restore the counts"
                        );
                        // What was added fits in what was free just before.
                        for ((node, res), q) in usage(&self.inv) {
                            let add = q.saturating_sub(
                                held.get(&(node.clone(), res.clone())).copied().unwrap_or(0),
                            );
                            let free = before.get(&node).map_or(0, |f| f[res_ix(&res)]);
                            ensure!(
                                add <= free,
                                "replacement put {add} {res} on {node} with {free} free"
                            );
                        }
                        // Constrained additions stay inside the required-level domain.
                        if let Some(req) = gang.get_topology().required.as_deref() {
                            for a in &added {
                                let role = gang
                                    .get_roles()
                                    .iter()
                                    .find(|x| x.get_name() == a.role)
                                    .unwrap();
                                let spec = self.inv.node_spec(&a.node).unwrap();
                                ensure!(
                                    eligible(role, &spec),
                                    "replacement on ineligible node {}",
                                    a.node
                                );
                                if !role.is_constrained() || req == HOSTNAME_LEVEL {
                                    continue;
                                }
                                let depth = LEVELS.iter().position(|l| *l == req).unwrap_or(0) + 1;
                                let want: Vec<String> =
                                    domain.iter().take(depth).map(|(_, v)| v.clone()).collect();
                                ensure!(
                                    domain_key(&spec, req) == Some(want.clone()),
                                    "replacement on {} outside {want:?}",
                                    a.node
                                );
                            }
                        }
                    }
                    Replacement::Pending(p) => {
                        ensure!(
                            free_map(&self.inv) == before,
                            "pending changed the inventory: {p}"
                        );
                        ensure!(!p.to_string().is_empty(), "an empty pending message");
                    }
                }
            }
            Op::FailNode { node } => {
                if let Some(n) = self.node(node) {
                    if let Some(lost) = self.node_change(&n, |i, n| i.fail_node(n), &[])? {
                        ensure!(
                            !self.inv.node_spec(&n).unwrap().is_schedulable(),
                            "failed node schedulable"
                        );
                        self.check_lost(&lost, &n)?;
                    }
                }
            }
            Op::AddNode {
                ref desc,
                duplicate,
            } => {
                let name = match self.node(0) {
                    Some(n) if duplicate => n,
                    _ => {
                        self.next_node += 1;
                        format!("n{}", self.next_node - 1)
                    }
                };
                let spec = desc.spec(&name, true);
                let before = free_map(&self.inv);
                match self.inv.add_node(spec) {
                    Ok(()) => ensure!(self.inv.node_spec(&name).is_some(), "added node missing"),
                    Err(e) => {
                        ensure!(e.kind() == ErrorKind::InvalidInventory, "add_node: {e}");
                        ensure!(
                            free_map(&self.inv) == before,
                            "a refused add changed the inventory"
                        );
                    }
                }
            }
            Op::RemoveNode { node } => {
                if let Some(n) = self.node(node) {
                    if let Some(lost) = self.node_change(&n, |i, n| i.remove_node(n), &[])? {
                        ensure!(self.inv.node_spec(&n).is_none(), "removed node still there");
                        self.check_lost(&lost, &n)?;
                    }
                }
            }
            Op::Cordon { node } => {
                if let Some(n) = self.node(node) {
                    if self.node_change(&n, |i, n| i.cordon(n), &[])?.is_some() {
                        ensure!(
                            !self.inv.node_spec(&n).unwrap().is_schedulable(),
                            "cordoned node schedulable"
                        );
                    }
                }
            }
            Op::Uncordon { node } => {
                if let Some(n) = self.node(node) {
                    if self.node_change(&n, |i, n| i.uncordon(n), &[])?.is_some() {
                        ensure!(
                            self.inv.node_spec(&n).unwrap().is_schedulable(),
                            "uncordoned node cordoned"
                        );
                    }
                }
            }
            Op::SetUsed { node, res, amount } | Op::SetCapacity { node, res, amount } => {
                let capacity = matches!(op, Op::SetCapacity { .. });
                let Some(n) = self.node(node) else {
                    return Ok(());
                };
                let res = RES[usize::from(res) % 3];
                let spec: gang_core::request::QuantitySpec = match amount {
                    255 => "lots".into(),
                    a if a >= 128 => format!("{}m", u32::from(a % 20) * 250).into(),
                    a => i64::from(a % 10).into(),
                };
                let over = self.node_change(
                    &n,
                    |i, n| {
                        if capacity {
                            i.set_capacity(n, res, spec)
                        } else {
                            i.set_used(n, res, spec)
                        }
                    },
                    &[ErrorKind::InvalidQuantity],
                )?;
                for o in over.unwrap_or_default() {
                    ensure!(
                        o.node == n && o.resource == res,
                        "overcommit reported elsewhere: {o:?}"
                    );
                    ensure!(
                        o.used.millis().saturating_add(o.reserved.millis()) > o.capacity.millis(),
                        "overcommit reported without one: {o:?}"
                    );
                    ensure!(
                        self.inv.free(&n, res).map(|q| q.millis()) == Some(0),
                        "overcommitted yet free"
                    );
                    for id in &o.reservations {
                        ensure!(
                            self.live.iter().any(|l| l.0 == *id),
                            "overcommit names unknown {id}"
                        );
                    }
                }
            }
            Op::SetLabels { node, ref labels } => {
                let Some(n) = self.node(node) else {
                    return Ok(());
                };
                let ls = labels.labels(true);
                let Some(out) = self.node_change(
                    &n,
                    |i, n| i.set_labels(n, ls),
                    &[ErrorKind::InvalidInventory],
                )?
                else {
                    return Ok(());
                };
                let got: BTreeSet<ReservationId> = out.into_iter().collect();
                let want: BTreeSet<ReservationId> = self
                    .live
                    .iter()
                    .map(|l| l.0)
                    .filter(|&id| displaced(&self.inv, id))
                    .collect();
                ensure!(
                    got == want,
                    "set_labels reports displaced {got:?}, expected {want:?}"
                );
            }
            Op::Spread {
                gang,
                replicas,
                min,
                level,
                within,
            } => {
                let g = usize::from(gang) % ng;
                let replicas = 1 + u32::from(replicas % 3);
                let level = [LEVELS[0], LEVELS[1], HOSTNAME_LEVEL][usize::from(level) % 3];
                let mut spread = Spread::new(self.gangs[g].clone(), replicas, level);
                if min % 3 != 0 {
                    spread = spread.min_replicas(u32::from(min % 3).min(replicas));
                }
                let within = match within % 6 {
                    0 => Some(LEVELS[0]),
                    1 => Some(LEVELS[1]),
                    _ => None,
                };
                if let Some(w) = within {
                    spread = spread.within(w);
                }
                let before = free_map(&self.inv);
                let count = self.inv.reservations().count();
                match allowed(g, self.inv.spread(&spread))? {
                    Some(SpreadOutcome::Placed {
                        reservations,
                        placements,
                    }) => {
                        ensure!(
                            reservations.len() == placements.len(),
                            "replicas and placements differ"
                        );
                        let need = spread.get_min_replicas().unwrap_or(replicas) as usize;
                        ensure!(
                            (need..=replicas as usize).contains(&reservations.len()),
                            "{} replicas, not in [{need}, {replicas}]",
                            reservations.len()
                        );
                        check_new(&self.inv, &reservations, &before)?;
                        self.check_spread(&reservations, level, within)?;
                        for id in reservations {
                            self.live.push((id, totals(&self.inv, id)));
                        }
                        for p in placements {
                            self.keep(p);
                        }
                    }
                    _ => {
                        ensure!(
                            free_map(&self.inv) == before,
                            "a spread that placed nothing changed free capacity"
                        );
                        ensure!(
                            self.inv.reservations().count() == count,
                            "a spread that placed nothing holds"
                        );
                    }
                }
            }
            Op::Admit {
                queue,
                len,
                backfill,
            } => {
                let q: Vec<usize> = queue[..1 + usize::from(len % 3)]
                    .iter()
                    .map(|&g| usize::from(g) % ng)
                    .collect();
                let gangs: Vec<Gang> = q.iter().map(|&g| self.gangs[g].clone()).collect();
                let mode = if backfill {
                    AdmitMode::Backfill
                } else {
                    AdmitMode::Fifo
                };
                let before = free_map(&self.inv);
                let count = self.inv.reservations().count();
                let worst = q.iter().copied().max().unwrap_or(0);
                let Some(out) = allowed(worst, self.inv.admit(&gangs, mode))? else {
                    ensure!(
                        free_map(&self.inv) == before,
                        "an invalid queue changed free capacity"
                    );
                    ensure!(
                        self.inv.reservations().count() == count,
                        "an invalid queue holds"
                    );
                    return Ok(());
                };
                ensure!(out.len() == gangs.len(), "one admission per gang");
                let mut ids = Vec::new();
                let mut waiting = false;
                for a in out {
                    match a {
                        Admission::Placed {
                            reservation,
                            placement,
                        } => {
                            ensure!(
                                !(waiting && mode == AdmitMode::Fifo),
                                "FIFO placed behind a waiting gang"
                            );
                            ids.push(reservation);
                            self.keep(placement);
                        }
                        Admission::Waiting { .. } => waiting = true,
                    }
                }
                check_new(&self.inv, &ids, &before)?;
                for id in ids {
                    self.live.push((id, totals(&self.inv, id)));
                }
            }
        }
        Ok(())
    }

    fn check_lost(&self, lost: &[gang_core::lifecycle::Lost], node: &str) -> Result<(), String> {
        for l in lost {
            ensure!(
                l.node == node,
                "lost members on {} reported for {node}",
                l.node
            );
            ensure!(
                self.live.iter().any(|x| x.0 == l.reservation),
                "lost from unknown {}",
                l.reservation
            );
            let r = self.inv.reservation(l.reservation).unwrap();
            ensure!(
                r.assignments(&self.inv).iter().all(|a| a.node != node),
                "members still on {node}"
            );
        }
        Ok(())
    }

    /// Replicas of one spread: constrained members of different replicas never share a
    /// domain of the spread level, and with `within` all of them share one.
    fn check_spread(
        &self,
        ids: &[ReservationId],
        level: &str,
        within: Option<&str>,
    ) -> Result<(), String> {
        let mut owner: BTreeMap<Vec<String>, ReservationId> = BTreeMap::new();
        let mut outer: BTreeSet<Option<Vec<String>>> = BTreeSet::new();
        for &id in ids {
            let r = self.inv.reservation(id).unwrap();
            for a in r.assignments(&self.inv) {
                let constrained = r
                    .gang()
                    .get_roles()
                    .iter()
                    .any(|x| x.get_name() == a.role && x.is_constrained());
                if !constrained {
                    continue;
                }
                let spec = self.inv.node_spec(&a.node).unwrap();
                if let Some(w) = within {
                    outer.insert(domain_key(&spec, w));
                }
                if let Some(d) = domain_key(&spec, level) {
                    let o = *owner.entry(d.clone()).or_insert(id);
                    ensure!(o == id, "replicas {o} and {id} share {level} {d:?}");
                }
            }
        }
        ensure!(
            outer.len() <= 1 && !outer.contains(&None),
            "replicas span {outer:?} within {within:?}"
        );
        Ok(())
    }

    fn after_each(&self) -> Result<(), String> {
        check_accounting(&self.inv)?;
        let live: BTreeSet<ReservationId> = self.live.iter().map(|l| l.0).collect();
        let held: BTreeSet<ReservationId> = self.inv.reservations().map(|r| r.id()).collect();
        ensure!(
            live == held,
            "live reservations {held:?}, handed out {live:?}"
        );
        Ok(())
    }
}

fn fixed_gangs() -> Vec<Gang> {
    let w = |n: u32| Role::new("w", n).request("gpu", 1).request("cpu", 1);
    vec![
        Gang::new("rack2").role(w(2)).required("rack"),
        Gang::new("block4")
            .role(w(4))
            .required("block")
            .preferred("rack"),
        Gang::new("sliced")
            .role(w(4))
            .required("block")
            .slice("rack", 2),
        Gang::new("elastic")
            .role(w(5).min_count(2))
            .required("rack"),
        Gang::new("launcher")
            .role(Role::new("l", 1).request("cpu", 2).unconstrained())
            .role(w(2).max_per_node(1))
            .required("rack"),
        Gang::new("anywhere").role(w(3)),
    ]
}

fn run(input: &Input) -> Result<(), String> {
    let specs: Vec<NodeSpec> = input
        .nodes
        .iter()
        .enumerate()
        .map(|(i, d)| d.spec(&format!("n{i}"), false))
        .collect();
    let Ok(inv) = Inventory::builder(Topology::new(LEVELS).unwrap())
        .nodes(specs)
        .build()
    else {
        // Only the malformed label value can do this; nothing to explore.
        return Ok(());
    };
    let mut gangs = fixed_gangs();
    gangs.extend(input.gangs.iter().enumerate().map(|(i, g)| g.gang(i)));
    let compiled = gangs.iter().map(|g| inv.compile(g).ok()).collect();
    let mut run = Run {
        inv,
        gangs,
        compiled,
        warm: Solver::new(),
        live: Vec::new(),
        kept: Vec::new(),
        next_node: input.nodes.len(),
    };
    run.after_each()?;
    for (i, op) in input.ops.iter().enumerate() {
        run.step(op).map_err(|e| format!("op {i} ({op:?}): {e}"))?;
        run.after_each()
            .map_err(|e| format!("after op {i} ({op:?}): {e}"))?;
    }
    // Releasing everything gives back exactly capacity minus external use.
    for (id, _) in std::mem::take(&mut run.live) {
        run.inv.release(id).map_err(|e| e.to_string())?;
    }
    run.after_each()?;
    Ok(())
}

fuzz_target!(|input: Input| {
    if let Err(e) = run(&input) {
        panic!("{e}\n{input:#?}");
    }
});
