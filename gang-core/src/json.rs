//! JSON forms of the results (behind the `serde` feature): outcomes and placements
//! (the README's "Scenario files"), errors, replacements, spread outcomes, admissions, scenario reports.
//! Every document that reports a result starts with its `"status"`; one that is not
//! placed carries the readable `"message"` beside the data.

use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::lifecycle::admit::Admission;
use crate::lifecycle::preempt::PreemptOutcome;
use crate::lifecycle::replace::Replacement;
use crate::lifecycle::spread::SpreadOutcome;
use crate::model::Error;

/// The JSON form of an outcome (the README's "Scenario files"):
/// `{"status": "placed", "level", "domain", "assignments", …}` or
/// `{"status": "unschedulable" | "undecided", "message", "diagnosis"}`.
pub(crate) fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Placed(p) => {
            let domain: serde_json::Map<String, Value> = p
                .domain()
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            let placed: serde_json::Map<String, Value> = p
                .compiled
                .gang()
                .roles
                .iter()
                .zip(&p.placed)
                .map(|(r, k)| (r.name.clone(), json!(k)))
                .collect();
            let used: serde_json::Map<String, Value> = p
                .domains_used()
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({
                "status": "placed",
                "gang": p.gang(),
                "level": p.level(),
                "domain": domain,
                "assignments": p.assignments(),
                "placed": placed,
                "domains_used": used,
                "search_complete": p.search_complete(),
            })
        }
        Outcome::Unschedulable(d) | Outcome::Undecided(d) => json!({
            "status": o.status(),
            "message": d.to_string(),
            "diagnosis": d,
        }),
    }
}

/// The JSON form of a preemption answer: `{"status": "placed", "message", "victims":
/// [{"id": {"kind", "id"}, "name", "priority", "evicted": [[resource, amount]…],
/// "cost"}…], "cost": [given, amount per cost resource…], "search_complete",
/// "placement": {the placement document}}` (the message is the plan in words, as its
/// `Display`), or the unschedulable / undecided document of an outcome.
fn preempt_json(o: &PreemptOutcome) -> Value {
    match o {
        PreemptOutcome::Placed(plan) => json!({
            "status": "placed",
            "message": plan.to_string(),
            "victims": plan.victims(),
            "cost": plan.cost().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "search_complete": plan.search_complete(),
            "placement": outcome_json(&Outcome::Placed(plan.placement().clone())),
        }),
        PreemptOutcome::Unschedulable(d) | PreemptOutcome::Undecided(d) => json!({
            "status": o.status(),
            "message": d.to_string(),
            "diagnosis": d,
        }),
    }
}

impl PreemptOutcome {
    /// The answer as a JSON document (costs as decimal strings: they are sums of
    /// milli-units and may exceed what JSON numbers hold exactly).
    ///
    /// ```
    /// use gang_core::{EvictableUnit, Gang, Inventory, NodeSpec, Role, Topology};
    /// let inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("nvidia.com/gpu", 2))
    ///     .evictable(EvictableUnit::new("pod-a", 0).amount("n1", "nvidia.com/gpu", 2))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 1).request("nvidia.com/gpu", 2)).priority(1);
    /// let json = inv.preempt(&gang)?.to_json();
    /// assert!(json.starts_with(r#"{"status":"placed","message":"evict pod-a (priority 0"#), "{json}");
    /// assert!(json.contains(r#""victims":[{"id":{"kind":"unit","id":"pod-a"},"name":"pod-a","priority":0,"#), "{json}");
    /// assert!(json.contains(r#""cost":["0","2000"]"#), "{json}");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        preempt_json(self).to_string()
    }
}

impl Serialize for PreemptOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        preempt_json(self).serialize(s)
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        outcome_json(self).serialize(s)
    }
}

impl Serialize for Placement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        outcome_json(&Outcome::Placed(self.clone())).serialize(s)
    }
}

impl Outcome {
    /// The outcome as a JSON document (the README's "Scenario files").
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 8))
    ///     .build()?;
    /// let gang = |n| Gang::new("g").role(Role::new("w", n).request("gpu", 1)).required("rack");
    /// let json = inv.place(&gang(2))?.to_json();
    /// assert!(json.starts_with(r#"{"status":"placed","gang":"g","level":"rack""#), "{json}");
    /// assert!(json.contains(r#""assignments":[{"role":"w","node":"a1","count":2}]"#));
    /// let json = inv.place(&gang(9))?.to_json();
    /// assert!(json.starts_with(r#"{"status":"unschedulable","message":"gang g (9 w)"#), "{json}");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        outcome_json(self).to_string()
    }
}

impl Error {
    /// The error as JSON: `{"status": "error", "kind", "field", "message"}`.
    ///
    /// ```
    /// use gang_core::Quantity;
    /// let json = Quantity::parse("12 GB").unwrap_err().to_json();
    /// assert!(json.starts_with(
    ///     r#"{"status":"error","kind":"invalid_quantity","field":"quantity","message":"#
    /// ), "{json}");
    /// ```
    pub fn to_json(&self) -> String {
        error_json(self).to_string()
    }
}

impl Serialize for Error {
    /// As [`Error::to_json`].
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        error_json(self).serialize(s)
    }
}

pub(crate) fn error_json(e: &Error) -> Value {
    json!({
        "status": "error",
        "kind": e.kind().as_str(),
        "field": e.field(),
        "message": e.to_string(),
    })
}

impl Serialize for Replacement {
    /// `{"status": "placed", "added": [assignment…]}` or
    /// `{"status": "pending", "message", "pending": {…}}`.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("gpu", 2);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1"), node("a2"), node("a3")])
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 1)).required("rack");
    /// let id = inv.reserve(inv.place(&gang)?.placement().unwrap())?;
    /// inv.fail_node(&inv.reservation(id).unwrap().assignments(&inv)[0].node.clone())?;
    /// let json = serde_json::to_string(&inv.replace(id)?).unwrap();
    /// assert!(json.starts_with(r#"{"status":"placed","added":[{"role":"w","node":"#), "{json}");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Replacement::Placed { added } => json!({ "status": "placed", "added": added }),
            Replacement::Pending(p) => json!({
                "status": "pending",
                "message": p.to_string(),
                "pending": p,
            }),
        }
        .serialize(s)
    }
}

impl Serialize for SpreadOutcome {
    /// `{"status": "placed", "reservations": [id…], "placements": [placement…]}` or
    /// `{"status": "unschedulable", "fit", "needed", "message", "diagnosis"}` (message
    /// and diagnosis null when no replica was tried).
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::Spread;
    /// let node = |n: &str, r: &str| NodeSpec::new(n).label("rack", r).capacity("gpu", 2);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1", "a"), node("b1", "b")])
    ///     .build()?;
    /// let replica = Gang::new("r").role(Role::new("w", 2).request("gpu", 1)).required("rack");
    /// let three = serde_json::to_value(inv.spread(&Spread::new(replica.clone(), 3, "rack"))?).unwrap();
    /// assert_eq!((three["status"].as_str(), three["fit"].as_u64()), (Some("unschedulable"), Some(2)));
    /// let two = serde_json::to_value(inv.spread(&Spread::new(replica, 2, "rack"))?).unwrap();
    /// let ids = [0, 1].map(|serial| gang_core::ReservationId::new(inv.id(), serial).0);
    /// assert_eq!(two["reservations"], serde_json::json!(ids));
    /// assert_eq!(two["placements"][1]["domain"], serde_json::json!({"rack": "b"}));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SpreadOutcome::Placed {
                reservations,
                placements,
            } => json!({
                "status": "placed",
                "reservations": reservations,
                "placements": placements,
            }),
            SpreadOutcome::Unschedulable {
                fit,
                needed,
                diagnosis,
            } => json!({
                "status": "unschedulable",
                "fit": fit,
                "needed": needed,
                "message": diagnosis.as_ref().map(ToString::to_string),
                "diagnosis": diagnosis,
            }),
        }
        .serialize(s)
    }
}

impl Serialize for Admission {
    /// `{"status": "placed", "reservation": id, "placement": {…}}` or
    /// `{"status": "waiting", "blocked_by", "message", "diagnosis"}` (null where not
    /// known: a gang not tried because of the head has no diagnosis).
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::lifecycle::AdmitMode;
    /// let mut inv = Inventory::builder(Topology::flat())
    ///     .node(NodeSpec::new("n1").capacity("gpu", 8))
    ///     .build()?;
    /// let job = |n: &str| Gang::new(n).role(Role::new("w", 8).request("gpu", 1));
    /// let out = inv.admit(&[job("a"), job("b")], AdmitMode::Fifo)?;
    /// let json = serde_json::to_value(&out).unwrap();
    /// let first = gang_core::ReservationId::new(inv.id(), 0);
    /// assert_eq!((json[0]["status"].as_str(), json[0]["reservation"].as_u64()), (Some("placed"), Some(first.0)));
    /// assert_eq!(json[1]["status"], "waiting");
    /// assert!(json[1]["message"].as_str().unwrap().contains("0 of 8 w"));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Admission::Placed {
                reservation,
                placement,
            } => json!({
                "status": "placed",
                "reservation": reservation,
                "placement": placement,
            }),
            Admission::Waiting {
                diagnosis,
                blocked_by,
            } => json!({
                "status": "waiting",
                "blocked_by": blocked_by,
                "message": diagnosis.as_ref().map(ToString::to_string),
                "diagnosis": diagnosis,
            }),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::lifecycle::Conflict;
    use crate::scenario::{Scenario, ScenarioTopology};
    use crate::{Gang, NodeSpec, Quantity, Role, Topology};

    #[test]
    fn topology_and_conflict() {
        let t = Topology::new(["block", "rack"]).unwrap();
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"levels": ["block", "rack"]})
        );
        let c = Conflict::Capacity {
            node: "n1".into(),
            resource: "cpu".into(),
            needed: Quantity::from_millis(1500),
            free: Quantity::from_units(1),
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"conflict": "capacity", "node": "n1", "resource": "cpu", "needed": "1500m", "free": 1})
        );
        let gone = Conflict::NodeGone { node: "n2".into() };
        assert_eq!(
            serde_json::to_value(&gone).unwrap(),
            json!({"conflict": "node_gone", "node": "n2"})
        );
    }

    #[test]
    fn error_serializes_as_its_document() {
        let e = Quantity::parse("12 GB").unwrap_err();
        assert_eq!(serde_json::to_string(&e).unwrap(), e.to_json());
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            (v["status"].as_str(), v["field"].as_str()),
            (Some("error"), Some("quantity"))
        );
    }

    #[test]
    fn scenario_report() {
        let s = |n| Scenario {
            description: None,
            topology: ScenarioTopology::default(),
            nodes: vec![NodeSpec::new("n1").capacity("gpu", 2)],
            gang: Gang::new("g").role(Role::new("w", n).request("gpu", 1)),
            expect: None,
            steps: Vec::new(),
        };
        let placed = serde_json::to_value(s(2).check()).unwrap();
        assert_eq!(placed["passed"], true);
        assert_eq!(placed["failures"], json!([]));
        assert_eq!(placed["outcome"]["status"], "placed");
        let bad = serde_json::to_value(s(0).check()).unwrap();
        assert_eq!(bad["outcome"]["status"], "error");
        assert_eq!(bad["outcome"]["field"], "gang.roles[w].count");
    }
}
