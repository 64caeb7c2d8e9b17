//! The scenario format (the README's "Scenario files"): one JSON document with a cluster, a gang and what
//! must come out. Every test suite and binding runs the same files.

mod steps;

pub use steps::{Step, StepExpect, StepOp};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;
use serde_json::Value;

use crate::json::{error_json, outcome_json};

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::inventory::Inventory;
use crate::model::{Error, EvictableUnit, Gang, NodeSpec, Topology};

/// A cluster, a gang, and optionally the expected result.
///
/// ```
/// use gang_core::ErrorKind;
/// use gang_core::scenario::Scenario;
/// let s = Scenario::from_json(r#"{
///   "topology": { "levels": ["rack"] },
///   "nodes": [ { "name": "a1", "labels": { "rack": "a" }, "capacity": { "gpu": 8 } } ],
///   "gang": { "name": "g", "roles": [ { "name": "w", "count": 2, "requests": { "gpu": 4 } } ],
///             "topology": { "required": "rack" } },
///   "expect": { "status": "placed", "domain": { "rack": "a" }, "nodes": { "a1": 2 } }
/// }"#)?;
/// assert_eq!((s.topology.levels.len(), s.nodes.len(), s.gang.get_name()), (1, 1, "g"));
/// assert_eq!(s.inventory()?.len(), 1);
/// assert!(s.run()?.is_placed());
/// let report = s.check();
/// assert!(report.passed(), "{:?}", report.failures);
/// assert_eq!(Scenario::from_json(&s.to_json())?, s); // round trip
///
/// // A wrong expectation is a failure in the report, not an error.
/// let mut wrong = s.clone();
/// wrong.expect.as_mut().unwrap().nodes = Some([("a1".to_owned(), 3)].into());
/// assert_eq!(wrong.check().failures, ["node a1: expected 3 members, got 2"]);
/// let err = Scenario::from_json(r#"{"topology": {}, "nodes": [], "gang": {}, "extra": 1}"#);
/// assert_eq!(err.unwrap_err().kind(), ErrorKind::InvalidScenario);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text: what the scenario is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Topology levels.
    pub topology: ScenarioTopology,
    /// Nodes.
    pub nodes: Vec<NodeSpec>,
    /// The gang to place.
    pub gang: Gang,
    /// What must come out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// Lifecycle steps run after the placement, on one inventory, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::scenario::steps::Step>,
}

/// A cluster document: `{"topology": {"levels": [...]}, "nodes": [...]}` (the cluster
/// half of a scenario).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterDoc {
    topology: ScenarioTopology,
    nodes: Vec<NodeSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    evictable: Vec<EvictableUnit>,
}

/// Parses JSON into `T`, naming the JSON path of the first problem.
fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        Error::scenario(
            // The root itself, or a key that renders as nothing (an empty key).
            if path.is_empty() || path == "." || path == "?" {
                "document".to_owned()
            } else {
                path
            },
            e.into_inner().to_string(),
        )
    })?;
    de.end()
        .map_err(|e| Error::scenario("document", e.to_string()))?;
    Ok(v)
}

impl Inventory {
    /// Builds an inventory from a cluster document:
    /// `{"topology": {"levels": [...]}, "nodes": [...]}` with nodes as in scenario files.
    ///
    /// ```
    /// use gang_core::Inventory;
    /// let inv = Inventory::from_json(r#"{"topology": {"levels": ["rack"]},
    ///     "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 8}}]}"#)?;
    /// assert_eq!(inv.len(), 1);
    /// let bad = r#"{"topology": {}, "nodes": [{"name": "a1", "capacity": {"gpu": "x"}}]}"#;
    /// assert_eq!(Inventory::from_json(bad).unwrap_err().field(), "nodes[a1].capacity.gpu");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidScenario`] when the document does not parse (naming the JSON
    /// path); otherwise as [`InventoryBuilder::build`](crate::InventoryBuilder::build).
    pub fn from_json(text: &str) -> Result<Inventory, Error> {
        let doc: ClusterDoc = from_json(text)?;
        let mut b = Inventory::builder(Topology::new(doc.topology.levels)?).nodes(doc.nodes);
        for u in doc.evictable {
            b = b.evictable(u);
        }
        b.build()
    }
}

impl Gang {
    /// Parses a gang document (the `gang` object of a scenario file).
    ///
    /// ```
    /// use gang_core::Gang;
    /// let g = Gang::from_json(r#"{"name": "g", "roles": [{"name": "w", "count": 4,
    ///     "requests": {"nvidia.com/gpu": 1}}], "topology": {"required": "rack"}}"#)?;
    /// assert_eq!(g.get_roles()[0].get_count(), 4);
    /// assert!(Gang::from_json(r#"{"name": "g", "roles": [], "colour": 1}"#).is_err());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidScenario`] naming the JSON path. The gang is validated when
    /// compiled or placed.
    pub fn from_json(text: &str) -> Result<Gang, Error> {
        from_json(text)
    }

    /// The gang as JSON, as [`Gang::from_json`] reads it.
    ///
    /// ```
    /// use gang_core::{Gang, Role};
    /// let gang = Gang::new("g")
    ///     .role(Role::new("w", 4).request("nvidia.com/gpu", 1))
    ///     .required("rack");
    /// let json = gang.to_json();
    /// assert!(json.starts_with(r#"{"name":"g","roles":[{"name":"w","count":4"#), "{json}");
    /// assert_eq!(Gang::from_json(&json)?, gang);
    /// assert!(Gang::from_json(&json.replace("count", "size")).is_err());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The `topology` object of a scenario file: `{"levels": [...]}`, outermost first.
///
/// Not re-exported; reach it through [`Scenario::topology`].
///
/// ```
/// use gang_core::Topology;
/// use gang_core::scenario::Scenario;
/// let doc = |levels: &str| {
///     format!(r#"{{"topology": {{"levels": {levels}}}, "nodes": [],
///         "gang": {{"name": "g", "roles": [{{"name": "w", "count": 1}}]}}}}"#)
/// };
/// let s = Scenario::from_json(&doc(r#"["block", "rack"]"#))?;
/// assert_eq!(s.topology.levels, ["block", "rack"]);
/// assert_eq!(s.inventory()?.topology(), &Topology::new(["block", "rack"])?);
/// // Levels are validated when the inventory is built.
/// let s = Scenario::from_json(&doc(r#"["rack", "rack"]"#))?;
/// assert_eq!(s.inventory().unwrap_err().field(), "topology.levels[1]");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioTopology {
    /// Level keys.
    #[serde(default)]
    pub levels: Vec<String>,
}

/// Expectations on a scenario's result. Every field is optional; each given one is
/// checked.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::scenario::Expect;
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let outcome = inv.place(&Gang::new("g").role(Role::new("w", 2).request("nvidia.com/gpu", 4)));
/// let expect = Expect {
///     status: Some("placed".into()),
///     level: Some(None), // cluster-wide: the gang has no required level
///     nodes: Some([("a1".to_owned(), 2)].into()),
///     ..Expect::default()
/// };
/// assert!(expect.check(Some(&inv), &outcome).is_empty());
/// let wrong = Expect { status: Some("unschedulable".into()), ..Expect::default() };
/// let failures = wrong.check(Some(&inv), &outcome);
/// assert!(failures[0].starts_with("status: expected unschedulable, got placed"), "{failures:?}");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `placed`, `unschedulable`, `undecided` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The placement's level key (`null`: cluster-wide).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub level: Option<Option<String>>,
    /// The placement's domain, level key → value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<IndexMap<String, String>>,
    /// Members per node (all roles); nodes not listed must have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<IndexMap<String, u32>>,
    /// Members placed per role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed: Option<IndexMap<String, u32>>,
    /// Members per domain: level key → domain path (`b1/a`) → count; unlisted domains of
    /// a listed level must have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_counts: Option<IndexMap<String, IndexMap<String, u32>>>,
    /// Distinct domains used per level key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domains_used: Option<IndexMap<String, u32>>,
    /// Substrings the diagnosis paragraph (or error message) must contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_contains: Vec<String>,
    /// A JSON subset the serialised diagnosis must contain (objects: listed keys only;
    /// arrays: same length, element by element).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Value>,
    /// The error kind (`invalid_request`, …), when `status` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The error's field, when `status` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_field: Option<String>,
}

mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    pub fn serialize<S: Serializer>(v: &Option<Option<String>>, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<String>>, D::Error> {
        Option::<String>::deserialize(d).map(Some)
    }
}

/// The result of running a scenario and checking its expectations.
///
/// ```
/// use gang_core::scenario::Scenario;
/// let s = Scenario::from_json(r#"{
///   "topology": { "levels": ["rack"] },
///   "nodes": [ { "name": "a1", "labels": { "rack": "a" }, "capacity": { "gpu": 8 } } ],
///   "gang": { "name": "g", "roles": [ { "name": "w", "count": 9, "requests": { "gpu": 1 } } ] },
///   "expect": { "status": "unschedulable", "message_contains": ["8 of 9 w"] }
/// }"#)?;
/// let report = s.check();
/// assert!(report.passed(), "{:?}", report.failures);
/// assert_eq!(report.outcome?.status(), "unschedulable");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScenarioReport {
    /// What came out.
    pub outcome: Result<Outcome, Error>,
    /// Each expectation that did not hold, in words.
    pub failures: Vec<String>,
}

impl ScenarioReport {
    /// Whether every expectation held. See [`ScenarioReport`] and [`Scenario`].
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl Scenario {
    /// Parses a scenario document. Unknown fields are errors. See [`Scenario`].
    ///
    /// ```
    /// use gang_core::scenario::Scenario;
    /// let err = Scenario::from_json(r#"{"topology": {"levels": []}, "nodes": [],
    ///     "gang": {"name": "g", "roles": [{"name": "w", "count": "four"}]}}"#).unwrap_err();
    /// assert_eq!(err.field(), "gang.roles[0].count");
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidScenario`] naming the JSON path (`gang.roles[0].count`) and what is
    /// wrong there.
    pub fn from_json(text: &str) -> Result<Scenario, Error> {
        from_json(text)
    }

    /// The scenario as pretty-printed JSON, as [`Scenario::from_json`] reads it. See
    /// [`Scenario`].
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Builds the inventory. See [`Scenario`] and [`Scenario::check`].
    ///
    /// # Errors
    /// As [`InventoryBuilder::build`](crate::InventoryBuilder::build).
    pub fn inventory(&self) -> Result<Inventory, Error> {
        Inventory::builder(Topology::new(self.topology.levels.clone())?)
            .nodes(self.nodes.iter().cloned())
            .build()
    }

    /// Builds the inventory and places the gang. See [`Scenario`] and [`Scenario::check`].
    ///
    /// # Errors
    /// Invalid inventory or request, as [`Inventory::place`].
    pub fn run(&self) -> Result<Outcome, Error> {
        self.inventory()?.place(&self.gang)
    }

    /// Runs the scenario and checks every expectation (and, for placements, the
    /// placement's own invariants), then runs its lifecycle steps, if any.
    ///
    /// An invalid gang is an expected result like any other:
    ///
    /// ```
    /// use gang_core::scenario::Scenario;
    /// let s = Scenario::from_json(r#"{
    ///   "topology": { "levels": ["rack"] },
    ///   "nodes": [ { "name": "a1", "labels": { "rack": "a" }, "capacity": { "gpu": 8 } } ],
    ///   "gang": { "name": "g", "roles": [ { "name": "w", "count": 2 } ],
    ///             "topology": { "required": "block" } },
    ///   "expect": { "status": "error", "error_kind": "invalid_request",
    ///               "error_field": "gang.topology.required" }
    /// }"#)?;
    /// assert!(s.inventory().is_ok());
    /// assert!(s.run().is_err());
    /// assert!(s.check().passed());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    pub fn check(&self) -> ScenarioReport {
        let inv = self.inventory();
        let outcome = inv
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|i| i.place(&self.gang));
        let mut failures = Vec::new();
        if let (Ok(inv), Ok(Outcome::Placed(p))) = (&inv, &outcome) {
            if let Err(e) = p.validate(inv) {
                failures.push(format!("placement invalid: {e}"));
            }
        }
        if let Some(e) = &self.expect {
            check_expect(e, inv.as_ref().ok(), &outcome, &mut failures);
        }
        if let (Ok(mut inv), false) = (inv, self.steps.is_empty()) {
            crate::scenario::steps::run_steps(&mut inv, &self.gang, &self.steps, &mut failures);
        }
        ScenarioReport { outcome, failures }
    }
}

impl Expect {
    /// Checks an outcome (or error) against these expectations, returning each one that
    /// does not hold, in words. `inventory` is needed for `domain_counts`. Bindings use
    /// this to check results they obtained through their own API. See [`Expect`].
    pub fn check(
        &self,
        inventory: Option<&Inventory>,
        outcome: &Result<Outcome, Error>,
    ) -> Vec<String> {
        let mut failures = Vec::new();
        check_expect(self, inventory, outcome, &mut failures);
        failures
    }
}

fn check_expect(
    e: &Expect,
    inv: Option<&Inventory>,
    outcome: &Result<Outcome, Error>,
    fail: &mut Vec<String>,
) {
    let status = match outcome {
        Ok(o) => o.status(),
        Err(_) => "error",
    };
    if let Some(want) = &e.status {
        if want != status {
            let why = match outcome {
                Ok(o) => outcome_json(o).to_string(),
                Err(err) => err.to_string(),
            };
            fail.push(format!("status: expected {want}, got {status}: {why}"));
        }
    }
    let message = match outcome {
        Ok(o) => o.diagnosis().map(ToString::to_string).unwrap_or_default(),
        Err(err) => err.to_string(),
    };
    for sub in &e.message_contains {
        if !message.contains(sub.as_str()) {
            fail.push(format!("message does not contain {sub:?}: {message}"));
        }
    }
    // An expected error kind or field is also unmet when there was no error at all.
    let (kind, field) = match outcome {
        Err(err) => (err.kind().as_str(), err.field()),
        Ok(o) => (o.status(), o.status()),
    };
    if let Some(k) = &e.error_kind {
        if k != kind {
            fail.push(format!("error kind: expected {k}, got {kind}"));
        }
    }
    if let Some(f) = &e.error_field {
        if f != field {
            fail.push(format!("error field: expected {f}, got {field}"));
        }
    }
    if let Some(want) = &e.diagnosis {
        match outcome.as_ref().ok().and_then(Outcome::diagnosis) {
            Some(d) => {
                let got = serde_json::to_value(d).unwrap_or(Value::Null);
                if let Err(why) = json_subset(want, &got, "diagnosis") {
                    fail.push(why);
                }
            }
            None => fail.push("diagnosis expected, but there is none".into()),
        }
    }
    let Some(p) = outcome.as_ref().ok().and_then(Outcome::placement) else {
        if e.level.is_some()
            || e.domain.is_some()
            || e.nodes.is_some()
            || e.placed.is_some()
            || e.domain_counts.is_some()
            || e.domains_used.is_some()
        {
            fail.push(format!(
                "placement expectations given, but the status is {status}"
            ));
        }
        return;
    };
    if let Some(want) = &e.level {
        if want.as_deref() != p.level() {
            fail.push(format!("level: expected {want:?}, got {:?}", p.level()));
        }
    }
    if let Some(want) = &e.domain {
        let got: IndexMap<String, String> = p.domain().iter().cloned().collect();
        if *want != got {
            fail.push(format!("domain: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &e.nodes {
        let got = p.node_counts();
        for (n, k) in want {
            let g = got.iter().find(|x| x.0 == n).map_or(0, |x| x.1);
            if g != *k {
                fail.push(format!("node {n}: expected {k} members, got {g}"));
            }
        }
        for (n, k) in &got {
            if !want.contains_key(*n) {
                fail.push(format!("node {n}: expected no members, got {k}"));
            }
        }
    }
    if let Some(want) = &e.placed {
        for (r, k) in want {
            if p.placed(r) != Some(*k) {
                fail.push(format!(
                    "role {r}: expected {k} placed, got {:?}",
                    p.placed(r)
                ));
            }
        }
    }
    if let Some(want) = &e.domains_used {
        for (lvl, k) in want {
            let g = p.domains_used().iter().find(|x| &x.0 == lvl).map(|x| x.1);
            if g != Some(*k) {
                fail.push(format!("domains used at {lvl}: expected {k}, got {g:?}"));
            }
        }
    }
    if let (Some(want), Some(inv)) = (&e.domain_counts, inv) {
        for (lvl, per) in want {
            let got = domain_counts(inv, p, lvl);
            for (path, k) in per {
                let g = got.get(path).copied().unwrap_or(0);
                if g != *k {
                    fail.push(format!("{lvl} {path}: expected {k} members, got {g}"));
                }
            }
            for (path, k) in &got {
                if !per.contains_key(path) {
                    fail.push(format!("{lvl} {path}: expected no members, got {k}"));
                }
            }
        }
    }
}

/// Members per domain path of level `key`.
fn domain_counts(inv: &Inventory, p: &Placement, key: &str) -> IndexMap<String, u32> {
    let mut out = IndexMap::new();
    let depth = inv.topology.depth_of(key);
    for &(_, n, k) in &p.members {
        let path = match depth {
            Some(d) if d <= inv.label_depth() => match inv.domain_of(n, d) {
                Some(dom) => inv.domain_values(d, dom).join("/"),
                None => continue,
            },
            Some(_) => inv.names[n as usize].clone(),
            None => continue,
        };
        *out.entry(path).or_insert(0) += k;
    }
    out
}

/// Checks that `want` is contained in `got` (see [`Expect::diagnosis`]).
fn json_subset(want: &Value, got: &Value, at: &str) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g.get(k).ok_or_else(|| format!("{at}.{k}: missing"))?;
                json_subset(wv, gv, &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Err(format!(
                    "{at}: expected {} elements, got {}: {got}",
                    w.len(),
                    g.len()
                ));
            }
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                json_subset(wv, gv, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        _ if want == got => Ok(()),
        _ => Err(format!("{at}: expected {want}, got {got}")),
    }
}

impl Serialize for ScenarioReport {
    /// `{"passed", "failures": [text…], "outcome": {outcome or error document}}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let outcome = match &self.outcome {
            Ok(o) => outcome_json(o),
            Err(e) => error_json(e),
        };
        json!({
            "passed": self.passed(),
            "failures": self.failures,
            "outcome": outcome,
        })
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Rack a: a1 (4 GPUs), a2 (2); rack b: b1 (2). Five 1-GPU workers in one rack go
    /// to rack a: 4 on the largest node, the last one on the smallest that holds it.
    fn doc(workers: u32, expect: Value) -> String {
        json!({
            "topology": { "levels": ["rack"] },
            "nodes": [
                { "name": "a1", "labels": { "rack": "a" }, "capacity": { "gpu": 4 } },
                { "name": "a2", "labels": { "rack": "a" }, "capacity": { "gpu": 2 } },
                { "name": "b1", "labels": { "rack": "b" }, "capacity": { "gpu": 2 } }
            ],
            "gang": { "name": "g",
                      "roles": [ { "name": "w", "count": workers, "requests": { "gpu": 1 } } ],
                      "topology": { "required": "rack" } },
            "expect": expect
        })
        .to_string()
    }

    fn failures(workers: u32, expect: Value) -> Vec<String> {
        Scenario::from_json(&doc(workers, expect))
            .unwrap()
            .check()
            .failures
    }

    #[test]
    fn unknown_fields_and_bad_values_name_their_json_path() {
        let base = json!({
            "topology": { "levels": ["rack"] },
            "nodes": [ { "name": "a1", "labels": { "rack": "a" }, "capacity": { "gpu": 4 },
                         "taints": [ { "key": "k", "effect": "NoSchedule" } ] } ],
            "gang": { "name": "g",
                      "roles": [ { "name": "w", "count": 1,
                                   "tolerations": [ { "key": "k" } ] } ],
                      "topology": { "required": "rack", "slices": [ { "level": "rack", "size": 1 } ] } },
            "expect": { "status": "placed" }
        });
        assert!(Scenario::from_json(&base.to_string()).is_ok());
        let cases: [(&str, Value, &str); 7] = [
            (
                "/nodes/0/taints/0",
                json!({ "key": "k", "effect": "NoSchedule", "colour": 1 }),
                "nodes[0].taints[0].colour",
            ),
            (
                "/gang/roles/0/tolerations/0",
                json!({ "key": "k", "colour": 1 }),
                "gang.roles[0].tolerations[0].colour",
            ),
            (
                "/gang/topology/slices/0",
                json!({ "level": "rack", "size": 1, "lvl": 1 }),
                "gang.topology.slices[0].lvl",
            ),
            ("/topology", json!({ "level": ["rack"] }), "topology.level"),
            (
                "/expect",
                json!({ "status": "placed", "nodez": {} }),
                "expect.nodez",
            ),
            (
                "/expect",
                json!({ "nodes": { "a1": "two" } }),
                "expect.nodes.a1",
            ),
            (
                "/gang/roles/0/tolerations/0",
                json!({ "key": "k", "operator": "exists" }),
                "gang.roles[0].tolerations[0].operator",
            ),
        ];
        for (at, value, field) in cases {
            let mut d = base.clone();
            *d.pointer_mut(at).unwrap() = value;
            let e = Scenario::from_json(&d.to_string()).unwrap_err();
            assert_eq!(
                (e.kind(), e.field()),
                (crate::ErrorKind::InvalidScenario, field),
                "{e}"
            );
        }
        let e = Scenario::from_json(&format!("{base} {{}}")).unwrap_err();
        assert_eq!(e.field(), "document", "{e}"); // trailing characters
        let e = Scenario::from_json(r#"{"topology": {}, "nodes": [], "gang": {"name": "g", "roles": []}, "expect": {"colour": 1}}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
    }

    /// `"level": null` (cluster-wide) differs from no level expectation at all.
    #[test]
    fn expect_level_null_is_not_absent() {
        let e: Expect = serde_json::from_str(r#"{"level": null}"#).unwrap();
        assert_eq!(e.level, Some(None));
        let e: Expect = serde_json::from_str("{}").unwrap();
        assert_eq!(e.level, None);
        // The gang is placed in rack a: expecting cluster-wide is a failure.
        assert_eq!(
            failures(5, json!({ "level": null })),
            [r#"level: expected None, got Some("rack")"#]
        );
        assert!(failures(5, json!({ "level": "rack" })).is_empty());
    }

    #[test]
    fn placement_expectations_that_fail_are_named_in_words() {
        let right = json!({
            "status": "placed", "level": "rack", "domain": { "rack": "a" },
            "nodes": { "a1": 4, "a2": 1 }, "placed": { "w": 5 },
            "domains_used": { "rack": 1 }, "domain_counts": { "rack": { "a": 5 } }
        });
        assert_eq!(failures(5, right), Vec::<String>::new());
        let wrong = json!({
            "level": "block", "domain": { "rack": "b" },
            "nodes": { "a1": 4, "b1": 1 }, "placed": { "w": 6, "x": 1 },
            "domains_used": { "rack": 2 }, "domain_counts": { "rack": { "a": 4, "b": 0 } },
            "message_contains": ["fits"]
        });
        assert_eq!(
            failures(5, wrong),
            [
                r#"message does not contain "fits": "#,
                r#"level: expected Some("block"), got Some("rack")"#,
                r#"domain: expected {"rack": "b"}, got {"rack": "a"}"#,
                "node b1: expected 1 members, got 0",
                "node a2: expected no members, got 1",
                "role w: expected 6 placed, got Some(5)",
                "role x: expected 1 placed, got None",
                "domains used at rack: expected 2, got Some(1)",
                "rack a: expected 4 members, got 5",
            ]
        );
    }

    #[test]
    fn expectations_on_diagnoses_and_errors() {
        // Nine workers fit nowhere: 8 GPUs in all.
        let right = json!({
            "status": "unschedulable",
            "message_contains": ["rack a fits 6 of 9 w"],
            "diagnosis": { "level": "rack", "best": { "domain": "a", "short_of": ["gpu"] },
                           "roles": [ { "cluster_fit": 8 } ], "relaxation": null }
        });
        assert_eq!(failures(9, right), Vec::<String>::new());
        let f = failures(9, json!({ "status": "placed", "nodes": { "a1": 4 } }));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].starts_with("status: expected placed, got unschedulable: {"),
            "{f:?}"
        );
        assert_eq!(
            f[1],
            "placement expectations given, but the status is unschedulable"
        );
        assert_eq!(
            failures(9, json!({ "diagnosis": { "best": { "domain": "b" } } })),
            [r#"diagnosis.best.domain: expected "b", got "a""#]
        );
        assert_eq!(
            failures(5, json!({ "diagnosis": {} })),
            ["diagnosis expected, but there is none"]
        );

        // An invalid request: its kind and field are checked, and the message.
        let mut s = Scenario::from_json(&doc(5, json!({}))).unwrap();
        s.gang.topology.required = Some("block".into());
        s.expect = Some(Expect {
            status: Some("error".into()),
            error_kind: Some("invalid_request".into()),
            error_field: Some("gang.topology.required".into()),
            message_contains: vec!["\"block\"".into()],
            ..Expect::default()
        });
        assert_eq!(s.check().failures, Vec::<String>::new());
        s.expect = Some(Expect {
            status: Some("unschedulable".into()),
            error_kind: Some("contradictory".into()),
            error_field: Some("gang.topology.preferred".into()),
            ..Expect::default()
        });
        let f = s.check().failures;
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f[0].starts_with("status: expected unschedulable, got error: invalid request at gang.topology.required"), "{f:?}");
        assert_eq!(
            f[1],
            "error kind: expected contradictory, got invalid_request"
        );
        assert_eq!(
            f[2],
            "error field: expected gang.topology.preferred, got gang.topology.required"
        );

        // An expected error kind or field is unmet when the gang was simply placed.
        assert_eq!(
            failures(
                5,
                json!({ "error_kind": "invalid_request", "error_field": "gang.name" })
            ),
            [
                "error kind: expected invalid_request, got placed",
                "error field: expected gang.name, got placed"
            ]
        );

        // An inventory that does not build is an error outcome too.
        let mut s = Scenario::from_json(&doc(
            5,
            json!({ "status": "error", "error_kind": "invalid_inventory" }),
        ))
        .unwrap();
        s.nodes[1].name = "a1".into();
        let report = s.check();
        assert!(report.passed(), "{:?}", report.failures);
        assert_eq!(
            report.outcome.unwrap_err().kind(),
            crate::ErrorKind::InvalidInventory
        );
    }

    #[test]
    fn json_subset_semantics() {
        let got = json!({ "a": 1, "b": [ { "x": 1, "y": 2 }, { "x": 3 } ], "c": null, "s": "t" });
        let ok = |want: Value| json_subset(&want, &got, "d");
        // Objects: listed keys only, at any depth.
        assert_eq!(ok(json!({})), Ok(()));
        assert_eq!(ok(json!({ "a": 1, "c": null })), Ok(()));
        assert_eq!(ok(json!({ "b": [ { "x": 1 }, {} ] })), Ok(()));
        assert_eq!(ok(json!({ "z": null })), Err("d.z: missing".into()));
        assert_eq!(
            ok(json!({ "b": [ {}, { "y": 2 } ] })),
            Err("d.b[1].y: missing".into())
        );
        // Arrays: same length, element by element.
        assert_eq!(
            ok(json!({ "b": [ { "x": 1 } ] })),
            Err(r#"d.b: expected 1 elements, got 2: [{"x":1,"y":2},{"x":3}]"#.into())
        );
        assert_eq!(
            ok(json!({ "b": [ { "x": 1 }, { "x": 4 } ] })),
            Err("d.b[1].x: expected 4, got 3".into())
        );
        // Scalars and mismatched kinds: equality.
        assert_eq!(ok(json!({ "a": 2 })), Err("d.a: expected 2, got 1".into()));
        assert_eq!(
            ok(json!({ "a": "1" })),
            Err(r#"d.a: expected "1", got 1"#.into())
        );
        assert_eq!(
            ok(json!({ "c": {} })),
            Err("d.c: expected {}, got null".into())
        );
        assert_eq!(
            ok(json!({ "s": [] })),
            Err(r#"d.s: expected [], got "t""#.into())
        );
        assert_eq!(
            ok(json!({ "a": null })),
            Err("d.a: expected null, got 1".into())
        );
    }
}
