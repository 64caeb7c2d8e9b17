//! Lifecycle steps in scenario files: a sequence of operations on one inventory, each
//! with the state expected after it. Every step is followed by `validate()`.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::answer::Outcome;
use crate::inventory::Inventory;
use crate::lifecycle::admit::{Admission, AdmitMode};
use crate::lifecycle::preempt::{PreemptOutcome, VictimId};
use crate::lifecycle::replace::Replacement;
use crate::lifecycle::spread::{Spread, SpreadOutcome};
use crate::model::error::ErrorKind;
use crate::model::{Error, EvictableUnit, Gang, NodeSpec, QuantitySpec, ReservationId};

/// The operation of a [`Step`], named in snake case in scenario files (`"fail_node"`).
///
/// ```
/// use gang_core::scenario::{Scenario, StepOp};
/// let s = Scenario::from_json(r#"{
///   "topology": { "levels": [] },
///   "nodes": [ { "name": "n1", "capacity": { "nvidia.com/gpu": 8 } } ],
///   "gang": { "name": "g", "roles": [ { "name": "w", "count": 8,
///                                       "requests": { "nvidia.com/gpu": 1 } } ] },
///   "steps": [
///     { "op": "cordon", "node": "n1" },
///     { "op": "place", "expect": { "status": "unschedulable",
///                                  "message_contains": ["1 cordoned"] } },
///     { "op": "uncordon", "node": "n1" },
///     { "op": "place", "expect": { "status": "placed", "nodes": { "n1": 8 } } }
///   ]
/// }"#)?;
/// let ops: Vec<StepOp> = s.steps.iter().map(|step| step.op).collect();
/// assert_eq!(ops, [StepOp::Cordon, StepOp::Place, StepOp::Uncordon, StepOp::Place]);
/// let report = s.check();
/// assert!(report.passed(), "{:?}", report.failures);
/// let bad = r#"{"topology": {}, "nodes": [], "gang": {"name": "g", "roles": []},
///               "steps": [{"op": "reboot"}]}"#;
/// assert!(Scenario::from_json(bad).is_err());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOp {
    /// Place `gang` (default: the scenario's) without reserving.
    Place,
    /// Place `gang` and reserve it under the name `as`.
    Reserve,
    /// Release the reservation named `reservation`.
    Release,
    /// Add `node_spec`.
    AddNode,
    /// Remove `node`; `expect.lost` checks what reservations lost.
    RemoveNode,
    /// Fail `node` (cordon it, its members lost).
    FailNode,
    /// Cordon `node`.
    Cordon,
    /// Uncordon `node`.
    Uncordon,
    /// Set `node`'s capacity of `resource` to `amount`.
    SetCapacity,
    /// Set `node`'s externally used `resource` to `amount`.
    SetUsed,
    /// Replace the lost members of `reservation`.
    Replace,
    /// Admit `queue` in `mode`; placed gangs are reserved under their gang names.
    Admit,
    /// Place and reserve `spread`; replicas are named `as`-0, `as`-1, …
    Spread,
    /// Declare the evictable unit `unit`.
    AddEvictable,
    /// Ask what preempting would take for `gang` (default: the scenario's), without
    /// changing anything; `expect.victims` names the victims.
    Preempt,
    /// Preempt for `gang` and apply the plan: evict the victims and reserve the gang
    /// under the name `as`.
    PreemptReserve,
}

/// One lifecycle operation and what must hold after it.
///
/// Steps run in order on one inventory after the scenario's own placement; each is
/// followed by the inventory's invariant check. Reservations are named by `as` (or the
/// gang's name) and referred to by `reservation`.
///
/// ```
/// use gang_core::scenario::{Scenario, StepOp};
/// let s = Scenario::from_json(r#"{
///   "topology": { "levels": ["rack"] },
///   "nodes": [
///     { "name": "a1", "labels": { "rack": "a" }, "capacity": { "nvidia.com/gpu": 4 } },
///     { "name": "a2", "labels": { "rack": "a" }, "capacity": { "nvidia.com/gpu": 4 } },
///     { "name": "a3", "labels": { "rack": "a" }, "capacity": { "nvidia.com/gpu": 4 } }
///   ],
///   "gang": { "name": "train",
///             "roles": [ { "name": "worker", "count": 8, "requests": { "nvidia.com/gpu": 1 } } ],
///             "topology": { "required": "rack" } },
///   "steps": [
///     { "op": "reserve", "as": "t", "expect": { "nodes": { "a1": 4, "a2": 4 } } },
///     { "op": "fail_node", "node": "a2", "expect": { "lost": { "t": { "worker": 4 } } } },
///     { "op": "replace", "reservation": "t",
///       "expect": { "status": "placed", "nodes": { "a3": 4 } } },
///     { "op": "release", "reservation": "t",
///       "expect": { "reservations": 0, "free": { "a1": { "nvidia.com/gpu": 4 } } } },
///     { "op": "release", "reservation": "t",
///       "expect": { "status": "error", "error_kind": "unknown_reservation" } }
///   ]
/// }"#)?;
/// let step = &s.steps[1];
/// assert_eq!((step.op, step.node.as_deref()), (StepOp::FailNode, Some("a2")));
/// assert_eq!(s.steps[0].name.as_deref(), Some("t"));
/// let report = s.check();
/// assert!(report.passed(), "{:?}", report.failures);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What to do.
    pub op: StepOp,
    /// The gang (`place`, `reserve`; default: the scenario's gang).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gang: Option<Gang>,
    /// A node name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A node to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_spec: Option<NodeSpec>,
    /// A resource name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// An amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<QuantitySpec>,
    /// A reservation name (given by an earlier `as`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
    /// Gangs to admit, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue: Vec<Gang>,
    /// Admission mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AdmitMode>,
    /// Replicas to spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// An evictable unit to declare (`add_evictable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<EvictableUnit>,
    /// The name a reservation made by this step is known by.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What must hold after the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<StepExpect>,
}

/// Expectations after a step. Every field is optional; each unmet one is a failure of
/// [`Scenario::check`](crate::scenario::Scenario::check), naming the step.
///
/// ```
/// use gang_core::scenario::Scenario;
/// let doc = |lost: u32| format!(r#"{{
///   "topology": {{ "levels": [] }},
///   "nodes": [ {{ "name": "n1", "capacity": {{ "nvidia.com/gpu": 8 }} }} ],
///   "gang": {{ "name": "g", "roles": [ {{ "name": "w", "count": 6,
///                                        "requests": {{ "nvidia.com/gpu": 1 }} }} ] }},
///   "steps": [
///     {{ "op": "reserve", "expect": {{ "status": "placed", "reservations": 1 }} }},
///     {{ "op": "fail_node", "node": "n1",
///       "expect": {{ "lost": {{ "g": {{ "w": {lost} }} }},
///                   "free": {{ "n1": {{ "nvidia.com/gpu": 8 }} }} }} }}
///   ]
/// }}"#);
/// assert!(Scenario::from_json(&doc(6))?.check().passed());
/// let report = Scenario::from_json(&doc(5))?.check();
/// assert_eq!(report.failures.len(), 1);
/// let failure = &report.failures[0];
/// assert!(failure.starts_with("step 1 (FailNode): lost: expected"), "{failure}");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepExpect {
    /// `ok`, `placed`, `unschedulable`, `undecided`, `pending`, `conflict` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The error kind, when `status` is `error` or `conflict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// Substrings of the diagnosis, pending message or error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_contains: Vec<String>,
    /// Domain path of the placement (`place`, `reserve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_path: Option<String>,
    /// Members per node of the placement, or of the members added (`replace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<IndexMap<String, u32>>,
    /// Members lost per reservation name and role (`remove_node`, `fail_node`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<IndexMap<String, IndexMap<String, u32>>>,
    /// Reservation names reported overcommitted (`set_capacity`, `set_used`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overcommitted: Option<Vec<String>>,
    /// Gang names placed (`admit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<Vec<String>>,
    /// Gang names waiting (`admit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Vec<String>>,
    /// Replicas placed (`spread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
    /// A level at which no domain may hold members of two replicas (`spread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct: Option<String>,
    /// Free amounts after the step: node → resource → amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<IndexMap<String, IndexMap<String, QuantitySpec>>>,
    /// Live reservations after the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservations: Option<usize>,
    /// The victims of a preemption plan (`preempt`, `preempt_reserve`), in the plan's
    /// order: reservations by the names they were given, units by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victims: Option<Vec<String>>,
}

/// What a step produced, for checking.
#[derive(Default)]
struct Seen {
    status: String,
    error_kind: Option<String>,
    message: String,
    domain_path: Option<String>,
    nodes: Option<Vec<(String, u32)>>,
    lost: Vec<(String, String, u32)>,
    overcommitted: Vec<String>,
    admitted: Vec<String>,
    waiting: Vec<String>,
    replicas: u32,
    occupied: Vec<(usize, String)>,
    victims: Option<Vec<String>>,
}

/// Runs `steps` on `inv`, appending a sentence per unmet expectation to `fail`.
pub(crate) fn run_steps(
    inv: &mut Inventory,
    default_gang: &Gang,
    steps: &[Step],
    fail: &mut Vec<String>,
) {
    let mut names: IndexMap<String, ReservationId> = IndexMap::new();
    for (i, step) in steps.iter().enumerate() {
        let at = format!("step {i} ({:?})", step.op);
        let seen = match run_one(inv, default_gang, step, &mut names) {
            Ok(s) => s,
            Err(e) => Seen {
                status: if e.kind() == ErrorKind::Conflict {
                    "conflict"
                } else {
                    "error"
                }
                .into(),
                error_kind: Some(e.kind().as_str().into()),
                message: e.to_string(),
                ..Seen::default()
            },
        };
        if let Err(e) = inv.validate() {
            fail.push(format!("{at}: inventory invariant broken: {e}"));
        }
        if let Some(x) = &step.expect {
            check(inv, x, &seen, &names, &at, fail);
        } else if seen.status == "error" {
            fail.push(format!("{at}: unexpected error: {}", seen.message));
        }
    }
}

fn need<'a, T>(v: &'a Option<T>, what: &str) -> Result<&'a T, Error> {
    v.as_ref()
        .ok_or_else(|| Error::scenario(format!("steps[].{what}"), "missing for this op"))
}

fn run_one(
    inv: &mut Inventory,
    default_gang: &Gang,
    step: &Step,
    names: &mut IndexMap<String, ReservationId>,
) -> Result<Seen, Error> {
    let mut seen = Seen {
        status: "ok".into(),
        ..Seen::default()
    };
    let named = |names: &IndexMap<String, ReservationId>| -> Result<ReservationId, Error> {
        let n = need(&step.reservation, "reservation")?;
        names.get(n).copied().ok_or_else(|| {
            Error::scenario("steps[].reservation", format!("no reservation named {n:?}"))
        })
    };
    let name_of = |names: &IndexMap<String, ReservationId>, id: ReservationId| -> String {
        names
            .iter()
            .find(|(_, v)| **v == id)
            .map_or_else(|| id.to_string(), |(k, _)| k.clone())
    };
    match step.op {
        StepOp::Place | StepOp::Reserve => {
            let gang = step.gang.as_ref().unwrap_or(default_gang);
            let out = inv.place(gang)?;
            seen.status = out.status().into();
            if let Some(d) = out.diagnosis() {
                seen.message = d.to_string();
            }
            if let Outcome::Placed(p) = &out {
                p.validate(inv)
                    .map_err(|e| Error::scenario("placement", e))?;
                seen.domain_path = Some(p.domain_path());
                seen.nodes = Some(
                    p.node_counts()
                        .into_iter()
                        .map(|(n, k)| (n.to_owned(), k))
                        .collect(),
                );
                if step.op == StepOp::Reserve {
                    let id = inv.reserve(p)?;
                    names.insert(step.name.clone().unwrap_or_else(|| gang.name.clone()), id);
                }
            }
        }
        StepOp::Release => {
            inv.release(named(names)?)?;
        }
        StepOp::AddNode => inv.add_node(need(&step.node_spec, "node_spec")?.clone())?,
        StepOp::RemoveNode | StepOp::FailNode => {
            let node = need(&step.node, "node")?;
            let lost = if step.op == StepOp::RemoveNode {
                inv.remove_node(node)?
            } else {
                inv.fail_node(node)?
            };
            seen.lost = lost
                .into_iter()
                .map(|l| (name_of(names, l.reservation), l.role, l.count))
                .collect();
        }
        StepOp::Cordon => inv.cordon(need(&step.node, "node")?)?,
        StepOp::Uncordon => inv.uncordon(need(&step.node, "node")?)?,
        StepOp::SetCapacity | StepOp::SetUsed => {
            let (node, res, amount) = (
                need(&step.node, "node")?,
                need(&step.resource, "resource")?,
                need(&step.amount, "amount")?,
            );
            let over = if step.op == StepOp::SetCapacity {
                inv.set_capacity(node, res, amount.clone())?
            } else {
                inv.set_used(node, res, amount.clone())?
            };
            seen.overcommitted = over
                .iter()
                .flat_map(|o| o.reservations.iter().map(|&id| name_of(names, id)))
                .collect();
        }
        StepOp::Replace => match inv.replace(named(names)?)? {
            Replacement::Placed { added } => {
                seen.status = "placed".into();
                let mut nodes: Vec<(String, u32)> = Vec::new();
                for a in added {
                    match nodes.iter_mut().find(|n| n.0 == a.node) {
                        Some(n) => n.1 += a.count,
                        None => nodes.push((a.node, a.count)),
                    }
                }
                seen.nodes = Some(nodes);
            }
            Replacement::Pending(p) => {
                seen.status = "pending".into();
                seen.message = p.to_string();
            }
        },
        StepOp::Admit => {
            for (g, a) in step
                .queue
                .iter()
                .zip(inv.admit(&step.queue, step.mode.unwrap_or_default())?)
            {
                match a {
                    Admission::Placed { reservation, .. } => {
                        names.insert(g.name.clone(), reservation);
                        seen.admitted.push(g.name.clone());
                    }
                    Admission::Waiting {
                        diagnosis,
                        blocked_by,
                    } => {
                        seen.waiting.push(g.name.clone());
                        if let Some(d) = diagnosis {
                            seen.message.push_str(&d.to_string());
                        }
                        if let Some(b) = blocked_by {
                            seen.message
                                .push_str(&format!(" {} waits behind {b}.", g.name));
                        }
                    }
                }
            }
        }
        StepOp::AddEvictable => inv.add_evictable(need(&step.unit, "unit")?.clone())?,
        StepOp::Preempt | StepOp::PreemptReserve => {
            let gang = step.gang.as_ref().unwrap_or(default_gang);
            let out = inv.preempt(gang)?;
            seen.status = out.status().into();
            if let Some(d) = out.diagnosis() {
                seen.message = d.to_string();
            }
            if let PreemptOutcome::Placed(plan) = &out {
                let p = plan.placement();
                let mut after = inv.clone();
                for v in plan.victims() {
                    match &v.id {
                        VictimId::Reservation(id) => drop(after.release(*id)?),
                        VictimId::Unit(id) => drop(after.remove_evictable(id)?),
                    }
                }
                p.validate(&after)
                    .map_err(|e| Error::scenario("placement", e))?;
                seen.domain_path = Some(p.domain_path());
                seen.nodes = Some(
                    p.node_counts()
                        .into_iter()
                        .map(|(n, k)| (n.to_owned(), k))
                        .collect(),
                );
                seen.victims = Some(
                    plan.victims()
                        .iter()
                        .map(|v| match &v.id {
                            VictimId::Reservation(id) => name_of(names, *id),
                            VictimId::Unit(id) => id.clone(),
                        })
                        .collect(),
                );
                if step.op == StepOp::PreemptReserve {
                    let done = inv.preempt_reserve(plan)?;
                    names.insert(
                        step.name.clone().unwrap_or_else(|| gang.name.clone()),
                        done.reservation,
                    );
                }
            }
        }
        StepOp::Spread => {
            let spread = need(&step.spread, "spread")?;
            match inv.spread(spread)? {
                SpreadOutcome::Placed {
                    reservations,
                    placements,
                } => {
                    seen.status = "placed".into();
                    seen.replicas = reservations.len() as u32;
                    let base = step
                        .name
                        .clone()
                        .unwrap_or_else(|| spread.gang.name.clone());
                    for (i, id) in reservations.into_iter().enumerate() {
                        names.insert(format!("{base}-{i}"), id);
                    }
                    for (i, p) in placements.iter().enumerate() {
                        for (node, _) in p.node_counts() {
                            seen.occupied.push((i, node.to_owned()));
                        }
                    }
                }
                SpreadOutcome::Unschedulable { fit, diagnosis, .. } => {
                    seen.status = "unschedulable".into();
                    seen.replicas = fit;
                    seen.message = diagnosis.map(|d| d.to_string()).unwrap_or_default();
                }
            }
        }
    }
    Ok(seen)
}

/// The full path of `node`'s domain at `level` (`b1/r1`), or the node's name at the node
/// level or where a label on the way is missing (a domain of its own).
fn domain_at(inv: &Inventory, node: &str, level: &str) -> String {
    let depth = inv
        .topology
        .depth_of(level)
        .filter(|&d| d <= inv.label_depth());
    let ix = inv.names.get_index_of(node);
    match (depth, ix) {
        (Some(d), Some(ix)) => inv.domain_of(ix as u32, d).map_or_else(
            || node.to_owned(),
            |dom| inv.domain_values(d, dom).join("/"),
        ),
        _ => node.to_owned(),
    }
}

fn check(
    inv: &Inventory,
    x: &StepExpect,
    seen: &Seen,
    names: &IndexMap<String, ReservationId>,
    at: &str,
    fail: &mut Vec<String>,
) {
    let mut no = |what: String| fail.push(format!("{at}: {what}"));
    if let Some(s) = &x.status {
        if *s != seen.status {
            let why = if seen.message.is_empty() {
                String::new()
            } else {
                format!(": {}", seen.message)
            };
            no(format!("status: expected {s}, got {}{why}", seen.status));
        }
    }
    if x.error_kind.is_some() && x.error_kind != seen.error_kind {
        no(format!(
            "error kind: expected {:?}, got {:?}",
            x.error_kind, seen.error_kind
        ));
    }
    for sub in &x.message_contains {
        if !seen.message.contains(sub.as_str()) {
            no(format!(
                "message does not contain {sub:?}: {}",
                seen.message
            ));
        }
    }
    if x.domain_path.is_some() && x.domain_path != seen.domain_path {
        no(format!(
            "domain: expected {:?}, got {:?}",
            x.domain_path, seen.domain_path
        ));
    }
    if let Some(want) = &x.nodes {
        let got: IndexMap<String, u32> =
            seen.nodes.clone().unwrap_or_default().into_iter().collect();
        if *want != got {
            no(format!("nodes: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &x.lost {
        let mut got: IndexMap<String, IndexMap<String, u32>> = IndexMap::new();
        for (r, role, k) in &seen.lost {
            *got.entry(r.clone())
                .or_default()
                .entry(role.clone())
                .or_default() += k;
        }
        if *want != got {
            no(format!("lost: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &x.overcommitted {
        if *want != seen.overcommitted {
            no(format!(
                "overcommitted: expected {want:?}, got {:?}",
                seen.overcommitted
            ));
        }
    }
    if let Some(want) = &x.admitted {
        if *want != seen.admitted {
            no(format!(
                "admitted: expected {want:?}, got {:?}",
                seen.admitted
            ));
        }
    }
    if let Some(want) = &x.waiting {
        if *want != seen.waiting {
            no(format!(
                "waiting: expected {want:?}, got {:?}",
                seen.waiting
            ));
        }
    }
    if let Some(want) = &x.victims {
        if Some(want) != seen.victims.as_ref() {
            no(format!(
                "victims: expected {want:?}, got {:?}",
                seen.victims
            ));
        }
    }
    if let Some(want) = x.replicas {
        if want != seen.replicas {
            no(format!("replicas: expected {want}, got {}", seen.replicas));
        }
    }
    if let Some(level) = &x.distinct {
        // No domain of the level holds members of two replicas.
        let mut by_domain: Vec<(String, usize)> = seen
            .occupied
            .iter()
            .map(|(replica, node)| (domain_at(inv, node, level), *replica))
            .collect();
        by_domain.sort();
        by_domain.dedup();
        if let Some(w) = by_domain.windows(2).find(|w| w[0].0 == w[1].0) {
            no(format!(
                "replicas {} and {} share {level} {}",
                w[0].1, w[1].1, w[0].0
            ));
        }
    }
    if let Some(want) = &x.free {
        for (node, per) in want {
            for (res, amount) in per {
                let Ok(q) = amount.resolve("expect.free") else {
                    no(format!("bad amount for {node} {res}"));
                    continue;
                };
                let got = inv.free(node, res);
                if got != Some(q) {
                    no(format!("free {res} on {node}: expected {q}, got {got:?}"));
                }
            }
        }
    }
    if let Some(want) = x.reservations {
        let got = inv.reservations().count();
        if want != got {
            no(format!(
                "live reservations: expected {want}, got {got} ({names:?})"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use serde_json::{json, Value};

    /// Racks b1/a (a1: 4 GPUs, a2: 2), b2/a (c1: 4) and b2/d (d1: 2); gang `g` is three
    /// 1-GPU workers in one rack (best fit: b2/a).
    fn scenario(steps: Value) -> Result<Scenario, crate::Error> {
        let node = |name: &str, block: &str, rack: &str, gpus: u32| {
            json!({ "name": name, "labels": { "block": block, "rack": rack },
                    "capacity": { "gpu": gpus } })
        };
        Scenario::from_json(
            &json!({
                "topology": { "levels": ["block", "rack"] },
                "nodes": [ node("a1", "b1", "a", 4), node("a2", "b1", "a", 2),
                           node("c1", "b2", "a", 4), node("d1", "b2", "d", 2) ],
                "gang": { "name": "g",
                          "roles": [ { "name": "w", "count": 3, "requests": { "gpu": 1 } } ],
                          "topology": { "required": "rack" } },
                "steps": steps
            })
            .to_string(),
        )
    }

    fn failures(steps: Value) -> Vec<String> {
        scenario(steps).unwrap().check().failures
    }

    fn gang(name: &str, workers: u32) -> Value {
        json!({ "name": name, "roles": [ { "name": "w", "count": workers, "requests": { "gpu": 1 } } ],
                "topology": { "required": "rack" } })
    }

    #[test]
    fn bad_steps_are_rejected_with_their_path() {
        assert!(scenario(json!([{ "op": "cordon", "node": "a1" }])).is_ok());
        for (step, field) in [
            (json!({ "op": "reboot" }), "steps[0].op"),
            (json!({ "op": "reserve", "name": "t" }), "steps[0].name"), // it is "as"
            (
                json!({ "op": "place", "expect": { "statuz": "placed" } }),
                "steps[0].expect.statuz",
            ),
            (json!({ "op": "admit", "mode": "lifo" }), "steps[0].mode"),
            (
                json!({ "op": "add_node", "node_spec": { "name": "n", "capacity": { "gpu": true } } }),
                "steps[0].node_spec.capacity.gpu",
            ),
            (
                json!({ "op": "place", "gang": { "name": "g", "roles": [], "size": 1 } }),
                "steps[0].gang.size",
            ),
        ] {
            let e = scenario(json!([{ "op": "place" }, step])).unwrap_err();
            let field = field.replace("steps[0]", "steps[1]");
            assert_eq!(
                (e.kind(), e.field()),
                (crate::ErrorKind::InvalidScenario, field.as_str()),
                "{e}"
            );
        }
    }

    /// A step whose operand is missing or names nothing is an error: a failure unless
    /// the step expects it.
    #[test]
    fn step_errors_fail_unless_expected() {
        assert_eq!(
            failures(json!([{ "op": "cordon" }])),
            ["step 0 (Cordon): unexpected error: invalid scenario at steps[].node: missing for this op"]
        );
        assert_eq!(
            failures(json!([{ "op": "release", "reservation": "t" }])),
            [
                r#"step 0 (Release): unexpected error: invalid scenario at steps[].reservation: no reservation named "t""#
            ]
        );
        assert_eq!(
            failures(json!([{ "op": "cordon", "node": "zz" }])),
            [r#"step 0 (Cordon): unexpected error: unknown node "zz""#]
        );
        let expected = json!({ "status": "error", "error_kind": "unknown_node",
                               "message_contains": ["\"zz\""] });
        assert!(failures(json!([{ "op": "cordon", "node": "zz", "expect": expected }])).is_empty());
        assert_eq!(
            failures(json!([{ "op": "set_used", "node": "a1", "resource": "gpu",
                              "expect": { "status": "error", "error_kind": "unknown_node" } }])),
            [
                r#"step 0 (SetUsed): error kind: expected Some("unknown_node"), got Some("invalid_scenario")"#
            ]
        );
        // Later steps still run after a failed one.
        let f = failures(json!([{ "op": "cordon" }, { "op": "uncordon" }]));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[1].starts_with("step 1 (Uncordon): unexpected error"),
            "{f:?}"
        );
    }

    #[test]
    fn unmet_step_expectations_are_named_in_words() {
        let right = json!({ "status": "placed", "domain_path": "b2/a", "nodes": { "c1": 3 },
                            "reservations": 1, "free": { "c1": { "gpu": 1 }, "a1": { "gpu": 4 } } });
        assert!(failures(json!([{ "op": "reserve", "expect": right }])).is_empty());
        let wrong = json!({ "status": "unschedulable", "message_contains": ["nope"],
                            "domain_path": "b1/a", "nodes": { "a1": 3 },
                            "free": { "c1": { "gpu": 4 } }, "reservations": 0 });
        let f = failures(json!([{ "op": "reserve", "expect": wrong }]));
        let starts = [
            "step 0 (Reserve): status: expected unschedulable, got placed",
            r#"step 0 (Reserve): message does not contain "nope": "#,
            r#"step 0 (Reserve): domain: expected Some("b1/a"), got Some("b2/a")"#,
            r#"step 0 (Reserve): nodes: expected {"a1": 3}, got {"c1": 3}"#,
            "step 0 (Reserve): free gpu on c1: expected 4, got",
            "step 0 (Reserve): live reservations: expected 0, got 1",
        ];
        assert_eq!(f.len(), starts.len(), "{f:?}");
        for (got, want) in f.iter().zip(starts) {
            assert!(got.starts_with(want), "{got:?} should start with {want:?}");
        }
    }

    /// Reservations are named by `as`, else by the gang's name; losses and overcommits
    /// are reported by those names.
    #[test]
    fn reservations_are_known_by_name() {
        let steps = |lost: Value| {
            json!([
                { "op": "reserve", "expect": { "nodes": { "c1": 3 } } },
                // c1 has 1 GPU left: the two go to the tightest rack that holds them.
                { "op": "reserve", "as": "second", "gang": gang("h", 2),
                  "expect": { "domain_path": "b2/d", "nodes": { "d1": 2 }, "reservations": 2 } },
                { "op": "set_capacity", "node": "c1", "resource": "gpu", "amount": 2,
                  "expect": { "overcommitted": ["g"] } },
                { "op": "fail_node", "node": "d1", "expect": { "lost": lost } },
                { "op": "release", "reservation": "g",
                  "expect": { "reservations": 1, "free": { "c1": { "gpu": 2 } } } },
                { "op": "release", "reservation": "g",
                  "expect": { "status": "error", "error_kind": "unknown_reservation" } },
                { "op": "release", "reservation": "second", "expect": { "reservations": 0 } }
            ])
        };
        let f = failures(steps(json!({ "second": { "w": 2 } })));
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(
            failures(steps(json!({ "g": { "w": 2 } }))),
            [r#"step 3 (FailNode): lost: expected {"g": {"w": 2}}, got {"second": {"w": 2}}"#]
        );
    }

    #[test]
    fn distinct_compares_full_domain_paths_at_its_level() {
        // Racks b1/a and b2/a share the value "a" but are different racks (and blocks).
        let spread = |workers, level: &str| {
            json!({ "op": "spread",
                    "spread": { "gang": gang("s", workers), "replicas": 2, "level": "rack" },
                    "expect": { "status": "placed", "replicas": 2, "distinct": level } })
        };
        assert!(failures(json!([spread(4, "rack")])).is_empty());
        assert!(failures(json!([spread(4, "block")])).is_empty());
        // Two 2-worker replicas, best fit: racks b2/d and b2/a, both in block b2.
        assert!(failures(json!([spread(2, "rack")])).is_empty());
        assert_eq!(
            failures(json!([spread(2, "block")])),
            ["step 0 (Spread): replicas 0 and 1 share block b2"]
        );
    }

    #[test]
    fn admitted_and_spread_reservations_are_named() {
        let f = failures(json!([
            // p takes 3 of c1's 4; q (7) fits no rack and waits.
            { "op": "admit", "queue": [gang("p", 3), gang("q", 7)],
              "expect": { "admitted": ["p"], "waiting": ["q"], "reservations": 1,
                          "message_contains": ["gang q (7 w) does not fit"] } },
            { "op": "release", "reservation": "p", "expect": { "reservations": 0 } },
            { "op": "spread", "as": "r",
              "spread": { "gang": gang("s", 2), "replicas": 2, "level": "rack" },
              "expect": { "status": "placed", "replicas": 2, "reservations": 2 } },
            { "op": "release", "reservation": "r-1", "expect": { "reservations": 1 } },
            { "op": "release", "reservation": "r-0", "expect": { "reservations": 0 } },
            { "op": "admit", "queue": [gang("p", 3)],
              "expect": { "admitted": [], "waiting": ["p"] } }
        ]));
        assert_eq!(
            f,
            [
                r#"step 5 (Admit): admitted: expected [], got ["p"]"#,
                r#"step 5 (Admit): waiting: expected ["p"], got []"#
            ]
        );
    }
}
