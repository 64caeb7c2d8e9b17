//! Results: `Placement` (+ `Assignment`) and `Diagnosis` (+ its reports).
//!
//! Both are immutable, comparable, hashable and picklable. A `Placement` keeps the core
//! placement it came from (for the lifecycle operations to come) plus a plain-data copy
//! that is what gets pickled; a `Diagnosis` is the core diagnosis itself, pickled as its
//! JSON form and read back field by field.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use gang_core::diagnosis::{
    DomainReport, Exclusions, Relaxation, RoleFit, RoleReport, SliceReport,
};
use gang_core::{CompiledGang, Diagnosis, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::convert::{from_value, json_text};
use crate::errors::{edge_error, NotPlaced, Undecided, Unschedulable};
use crate::inventory::Layout;
use crate::spec::{dict_of, hash_json, json_of, parse_value};

// ------------------------------------------------------------------------- Placement

/// Everything a `Placement` shows, as plain data (this is what is pickled).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementData {
    pub gang: String,
    pub level: Option<String>,
    pub domain: Vec<(String, String)>,
    pub assignments: Vec<AssignmentData>,
    pub placed: Vec<(String, u32)>,
    pub domains_used: Vec<(String, u32)>,
    pub search_complete: bool,
    /// The inventory's label levels, outermost first (for per-domain counts).
    pub levels: Vec<String>,
    /// The core's JSON form (the README's "Scenario files"), filled lazily from `core`.
    #[serde(default)]
    pub json: Option<Value>,
    /// The core's one-line rendering, filled lazily from `core`.
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignmentData {
    pub role: String,
    pub node: String,
    pub count: u32,
    /// The node's label values for the inventory's levels, outermost first, up to its
    /// first missing label.
    pub path: Vec<String>,
}

/// Where a gang goes: the level and domain, and how many members of each role on
/// which node. Returned by `Inventory.place`; immutable, hashable and picklable.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["block", "rack"], [
/// ...     gang.Node(f"n{i}", labels={"block": "b1", "rack": "r1" if i < 2 else "r2"},
/// ...               capacity={"gpu": 8}) for i in range(4)])
/// >>> p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 8})], required="rack"))
/// >>> p
/// Placement(gang='g', level='rack', domain='b1/r1', nodes={'n0': 1, 'n1': 1})
/// >>> p.domain, p.placed, p.members
/// ({'block': 'b1', 'rack': 'r1'}, {'w': 2}, 2)
/// >>> p.to_records()[0]
/// {'gang': 'g', 'role': 'w', 'node': 'n0', 'count': 1, 'block': 'b1', 'rack': 'r1'}
#[pyclass(name = "Placement", module = "gang", frozen)]
pub struct PyPlacement {
    /// The plain data, built on first use from `live` (or given when unpickled).
    data: OnceLock<PlacementData>,
    /// The core placement and what it was made from, when made in this process (absent
    /// after unpickling). The lifecycle operations (reserve...) will take it from here.
    live: Option<Live>,
    json: OnceLock<Value>,
    text: OnceLock<String>,
}

/// A placement made in this process: the core value, its role names, and the node
/// layout it was made on (for node paths).
pub struct Live {
    pub placement: gang_core::Placement,
    pub roles: RoleNames,
    pub layout: Arc<Layout>,
}

/// The gang's role names, in order (cheap to carry: a compiled gang is one `Arc`).
#[derive(Clone)]
pub enum RoleNames {
    Compiled(CompiledGang),
    Names(Vec<String>),
}

impl RoleNames {
    fn names(&self) -> Vec<&str> {
        match self {
            RoleNames::Compiled(c) => c.gang().get_roles().iter().map(|r| r.get_name()).collect(),
            RoleNames::Names(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

impl PyPlacement {
    /// Wraps a core placement; converting it to Python-facing data waits until asked,
    /// so `place` itself does no more than the core call.
    pub fn from_core(
        placement: gang_core::Placement,
        roles: RoleNames,
        layout: Arc<Layout>,
    ) -> PyPlacement {
        PyPlacement {
            data: OnceLock::new(),
            live: Some(Live {
                placement,
                roles,
                layout,
            }),
            json: OnceLock::new(),
            text: OnceLock::new(),
        }
    }

    fn data(&self) -> &PlacementData {
        self.data.get_or_init(|| {
            let Some(live) = &self.live else {
                unreachable!("an unpickled placement is built with its data")
            };
            let p = &live.placement;
            PlacementData {
                gang: p.gang().to_owned(),
                level: p.level().map(str::to_owned),
                domain: p.domain().to_vec(),
                assignments: p
                    .assignments()
                    .iter()
                    .map(|a| AssignmentData {
                        role: a.role.clone(),
                        node: a.node.clone(),
                        count: a.count,
                        path: live.layout.path_of(&a.node),
                    })
                    .collect(),
                placed: live
                    .roles
                    .names()
                    .into_iter()
                    .map(|r| (r.to_owned(), p.placed(r).unwrap_or(0)))
                    .collect(),
                domains_used: p.domains_used().to_vec(),
                search_complete: p.search_complete(),
                levels: live.layout.label_levels().to_vec(),
                json: None,
                text: None,
            }
        })
    }

    fn json(&self) -> &Value {
        self.json.get_or_init(|| match &self.live {
            Some(l) => json_of(&l.placement),
            None => self.data().json.clone().unwrap_or(Value::Null),
        })
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| match &self.live {
            Some(l) => l.placement.to_string(),
            None => self.data().text.clone().unwrap_or_default(),
        })
    }

    fn state(&self) -> PlacementData {
        let mut d = self.data().clone();
        d.json = Some(self.json().clone());
        d.text = Some(self.text().to_owned());
        d
    }

    /// The core placement, when made in this process.
    pub fn core(&self) -> Option<&gang_core::Placement> {
        self.live.as_ref().map(|l| &l.placement)
    }

    /// The gang's name.
    pub fn gang_name(&self) -> &str {
        &self.data().gang
    }

    fn domain_path(&self) -> String {
        self.data()
            .domain
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// Members of one role on one node.
#[pyclass(name = "Assignment", module = "gang", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyAssignment {
    #[pyo3(get)]
    role: String,
    #[pyo3(get)]
    node: String,
    #[pyo3(get)]
    count: u32,
}

#[pymethods]
impl PyAssignment {
    #[new]
    pub fn new(role: String, node: String, count: u32) -> Self {
        PyAssignment { role, node, count }
    }
    fn __repr__(&self) -> String {
        format!(
            "Assignment(role={:?}, node={:?}, count={})",
            self.role, self.node, self.count
        )
        .replace('"', "'")
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, String, u32))> {
        let a = slf.get();
        Ok((
            slf.get_type().into_any(),
            (a.role.clone(), a.node.clone(), a.count),
        ))
    }
    /// `(role, node, count)`, so that `role, node, count = assignment` works.
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let a = slf.get();
        let t = (a.role.clone(), a.node.clone(), a.count).into_pyobject(slf.py())?;
        t.try_iter().map(Bound::into_any)
    }
}

#[pymethods]
impl PyPlacement {
    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        &self.data().gang
    }
    /// The level whose single domain holds the constrained members; None when the gang
    /// was placed cluster-wide (unconstrained, or split above the top level).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.data().level.as_deref()
    }
    /// The domain as {level: value}, outermost first (empty cluster-wide).
    #[getter]
    fn domain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.data().domain {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// The domain's values joined by "/" ("b1/r1"; "" cluster-wide).
    #[getter(domain_path)]
    fn py_domain_path(&self) -> String {
        self.domain_path()
    }
    /// Per-role per-node member counts, ordered by role then node (topology order).
    #[getter]
    fn assignments(&self) -> Vec<PyAssignment> {
        self.data()
            .assignments
            .iter()
            .map(|a| PyAssignment {
                role: a.role.clone(),
                node: a.node.clone(),
                count: a.count,
            })
            .collect()
    }
    /// Members per node, summed over roles, in topology order.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let mut order: Vec<(&Vec<String>, &str, u32)> = self
            .data()
            .assignments
            .iter()
            .map(|a| (&a.path, a.node.as_str(), a.count))
            .collect();
        // Topology order: the path, then the name (as the inventory stores nodes).
        order.sort_by(|a, b| {
            let (pa, pb) = (a.0, b.0);
            for i in 0..pa.len().max(pb.len()) {
                let o = match (pa.get(i), pb.get(i)) {
                    (Some(x), Some(y)) => x.cmp(y),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                if o.is_ne() {
                    return o;
                }
            }
            a.1.cmp(b.1)
        });
        for (_, node, count) in order {
            let prev: u32 = match d.get_item(node)? {
                Some(v) => v.extract()?,
                None => 0,
            };
            d.set_item(node, prev + count)?;
        }
        Ok(d)
    }
    /// Members placed per role (below the count only for elastic roles).
    #[getter]
    fn placed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.data().placed {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Total members placed.
    #[getter]
    fn members(&self) -> u64 {
        self.data().placed.iter().map(|p| u64::from(p.1)).sum()
    }
    /// Distinct domains used per level, the node level last
    /// ({"block": 1, "rack": 2, "kubernetes.io/hostname": 3}).
    #[getter]
    fn domains_used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.data().domains_used {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// False when the exact search ran out of budget at a tighter level first, so a
    /// tighter placement might exist.
    #[getter]
    fn search_complete(&self) -> bool {
        self.data().search_complete
    }
    /// Members per domain of `level`, keyed by domain path ("b1/a"); members on nodes
    /// without that level's label are not counted. At the node level
    /// ("kubernetes.io/hostname") the keys are node names.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 1}),
    /// ...                                 gang.Node("b1", labels={"rack": "b"}, capacity={"gpu": 1})])
    /// >>> inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})])).domain_counts("rack")
    /// {'a': 1, 'b': 1}
    fn domain_counts<'py>(&self, py: Python<'py>, level: &str) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let depth = self.data().levels.iter().position(|l| l == level);
        let node_level = level == gang_core::HOSTNAME_LEVEL;
        if depth.is_none() && !node_level {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "level",
                level,
                "not a level of the inventory's topology",
            ));
        }
        for a in &self.data().assignments {
            let key = match depth {
                Some(i) if a.path.len() > i => a.path[..=i].join("/"),
                Some(_) => continue,
                None => a.node.clone(),
            };
            let prev: u32 = match d.get_item(&key)? {
                Some(v) => v.extract()?,
                None => 0,
            };
            d.set_item(key, prev + a.count)?;
        }
        Ok(d)
    }
    /// The core's JSON form as a dict: {"status": "placed", "gang", "level", "domain",
    /// "assignments", "placed", "domains_used", "search_complete"}.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_value(py, self.json())
    }
    /// The core's JSON form as text.
    fn to_json(&self) -> String {
        self.json().to_string()
    }
    /// One dict per assignment: gang, role, node, count, and the node's domain value
    /// at each topology level (missing labels are None). Ready for pandas.DataFrame.
    fn to_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for a in &self.data().assignments {
            let d = PyDict::new(py);
            d.set_item("gang", &self.data().gang)?;
            d.set_item("role", &a.role)?;
            d.set_item("node", &a.node)?;
            d.set_item("count", a.count)?;
            for (i, l) in self.data().levels.iter().enumerate() {
                d.set_item(l, a.path.get(i))?;
            }
            out.append(d)?;
        }
        Ok(out)
    }
    fn __str__(&self) -> &str {
        self.text()
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let level = match &self.data().level {
            Some(l) => format!("{l:?}").replace('"', "'"),
            None => "None".to_owned(),
        };
        Ok(format!(
            "Placement(gang={}, level={level}, domain={}, nodes={})",
            format!("{:?}", self.data().gang).replace('"', "'"),
            format!("{:?}", self.domain_path()).replace('"', "'"),
            self.nodes(py)?.repr()?
        ))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        let Ok(o) = other.cast::<Self>() else {
            return false;
        };
        let (a, b) = (self.data(), o.get().data());
        a.gang == b.gang
            && a.level == b.level
            && a.domain == b.domain
            && a.assignments == b.assignments
            && a.search_complete == b.search_complete
            && a.placed == b.placed
    }
    fn __hash__(&self) -> isize {
        let mut h = DefaultHasher::new();
        self.data().gang.hash(&mut h);
        self.data().level.hash(&mut h);
        self.data().domain.hash(&mut h);
        self.data().assignments.hash(&mut h);
        self.data().search_complete.hash(&mut h);
        h.finish() as isize
    }
    /// Rebuilds a placement from its pickled state.
    #[classmethod]
    fn _from_state(_cls: &Bound<'_, PyType>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = json_text(state)?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| edge_error(ErrorKind::InvalidScenario, "placement", "", &e.to_string()))?;
        let data: PlacementData = parse_value(v, "placement")?;
        Ok(PyPlacement {
            data: OnceLock::from(data),
            live: None,
            json: OnceLock::new(),
            text: OnceLock::new(),
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let state = serde_json::to_string(&slf.get().state()).unwrap_or_default();
        Ok((slf.get_type().getattr("_from_state")?, (state,)))
    }
}

// ------------------------------------------------------------------------- Diagnosis

/// Why a valid gang cannot be placed now: `str()` is one readable paragraph, the
/// attributes are data. Carried by `Unschedulable` / `Undecided` as `.diagnosis`, and
/// returned by `Inventory.try_place`.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["rack"], [
/// ...     gang.Node("a1", labels={"rack": "a"}, capacity={"nvidia.com/gpu": 3}),
/// ...     gang.Node("b1", labels={"rack": "b"}, capacity={"nvidia.com/gpu": 2}),
/// ...     gang.Node("b2", labels={"rack": "b"}, capacity={"nvidia.com/gpu": 2})])
/// >>> g = gang.Gang("train", [gang.Role("worker", 5, requests={"nvidia.com/gpu": 1})], required="rack")
/// >>> try:
/// ...     inv.place(g)
/// ... except gang.Unschedulable as e:
/// ...     d = e.diagnosis
/// >>> d.best.domain, d.best.fits[0].fits, d.roles[0].cluster_fit
/// ('b', 4, 7)
/// >>> print(d)
/// gang train (5 worker) does not fit in one rack (rack). Best rack: rack b fits 4 of 5 worker (short of nvidia.com/gpu). Cluster-wide, ignoring topology, 7 worker fit. Without the topology constraint all 5 fit now, across 2 racks.
#[pyclass(name = "Diagnosis", module = "gang", frozen)]
pub struct PyDiagnosis {
    pub d: Arc<Diagnosis>,
}

impl PyDiagnosis {
    pub fn new(d: Diagnosis) -> Self {
        PyDiagnosis { d: Arc::new(d) }
    }
}

#[pymethods]
impl PyDiagnosis {
    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        &self.d.gang
    }
    /// The level asked for (required, else preferred); None when unconstrained.
    #[getter]
    fn level(&self) -> Option<&str> {
        self.d.level.as_deref()
    }
    /// Per role: demand, cluster-wide fit, excluded nodes.
    #[getter]
    fn roles(&self) -> Vec<PyRoleReport> {
        self.d.roles.iter().cloned().map(PyRoleReport).collect()
    }
    /// The domain at `level` closest to fitting (the whole cluster when unconstrained).
    #[getter]
    fn best(&self) -> Option<PyDomainReport> {
        self.d.best.clone().map(PyDomainReport)
    }
    /// What relaxing the required level would give now, if anything fits then.
    #[getter]
    fn relaxation(&self) -> Option<PyRelaxation> {
        self.d.relaxation.clone().map(PyRelaxation)
    }
    /// Per slice level, how close the best domain comes.
    #[getter]
    fn slices(&self) -> Vec<PySliceReport> {
        self.d.slices.iter().cloned().map(PySliceReport).collect()
    }
    /// The exact multi-role search ran out of budget: a placement may exist.
    #[getter]
    fn search_exhausted(&self) -> bool {
        self.d.search_exhausted
    }
    /// "undecided" when the search budget ran out, else "unschedulable".
    #[getter]
    fn status(&self) -> &'static str {
        if self.d.search_exhausted {
            "undecided"
        } else {
            "unschedulable"
        }
    }
    /// The core's JSON form of the diagnosis, as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &*self.d)
    }
    /// The core's JSON form of the diagnosis, as text.
    fn to_json(&self) -> String {
        json_of(&*self.d).to_string()
    }
    /// One flat dict per role: demand, fits, exclusions by reason, and the best
    /// domain's numbers for that role. Ready for pandas.DataFrame.
    fn to_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for r in &self.d.roles {
            let d = PyDict::new(py);
            d.set_item("gang", &self.d.gang)?;
            d.set_item("status", self.status())?;
            d.set_item("level", self.d.level.as_deref())?;
            d.set_item("role", &r.role)?;
            d.set_item("count", r.count)?;
            d.set_item("needed", r.needed)?;
            d.set_item("constrained", r.constrained)?;
            d.set_item("cluster_fit", r.cluster_fit)?;
            d.set_item("fitting_nodes", r.fitting_nodes)?;
            let e = &r.excluded;
            d.set_item("excluded_cordoned", e.cordoned)?;
            d.set_item("excluded_selector", e.selector)?;
            d.set_item("excluded_taint", e.taint)?;
            d.set_item("excluded_missing_label", e.missing_label)?;
            d.set_item("excluded_too_small", e.too_small)?;
            d.set_item("unknown_resources", r.unknown_resources.join(","))?;
            let best = self.d.best.as_ref();
            let fit = best.and_then(|b| b.fits.iter().find(|f| f.role == r.role));
            d.set_item("best_domain", best.map(|b| b.domain.as_str()))?;
            d.set_item("best_fits", fit.map(|f| f.fits))?;
            d.set_item("best_short_of", best.map(|b| b.short_of.join(",")))?;
            d.set_item("best_reason", best.map(|b| b.reason.as_str()))?;
            out.append(d)?;
        }
        Ok(out)
    }
    fn __str__(&self) -> String {
        self.d.to_string()
    }
    fn __repr__(&self) -> String {
        let level = match &self.d.level {
            Some(l) => format!("{l:?}").replace('"', "'"),
            None => "None".to_owned(),
        };
        let best = match &self.d.best {
            Some(b) => format!("{:?}", b.domain).replace('"', "'"),
            None => "None".to_owned(),
        };
        format!(
            "Diagnosis(gang={}, status='{}', level={level}, best={best})",
            format!("{:?}", self.d.gang).replace('"', "'"),
            self.status()
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| *o.get().d == *self.d)
    }
    fn __hash__(&self) -> isize {
        hash_json(&*self.d)
    }
    /// Rebuilds a diagnosis from its JSON form (as produced by `to_json`).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = json_text(text)?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| edge_error(ErrorKind::InvalidScenario, "diagnosis", "", &e.to_string()))?;
        let d: Diagnosis = parse_value(v, "diagnosis")?;
        Ok(PyDiagnosis::new(d))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().getattr("from_json")?, (slf.get().to_json(),)))
    }
}

/// The Python exception for a diagnosis: `Unschedulable` or `Undecided`, with the
/// paragraph as message and the `Diagnosis` as `.diagnosis`.
pub fn not_placed(py: Python<'_>, d: Diagnosis) -> PyErr {
    let undecided = d.search_exhausted;
    let message = d.to_string();
    let err = if undecided {
        Undecided::new_err(message)
    } else {
        Unschedulable::new_err(message)
    };
    let value = err.value(py);
    let status = if undecided {
        "undecided"
    } else {
        "unschedulable"
    };
    match Bound::new(py, PyDiagnosis::new(d)) {
        Ok(diag) => {
            let _ = value.setattr("diagnosis", diag);
            let _ = value.setattr("status", status);
            err
        }
        Err(e) => NotPlaced::new_err(e.to_string()),
    }
}

// ------------------------------------------------------------------------- reports

/// One `#[pymethods]` block per report class: the shared methods plus its getters.
macro_rules! report_methods {
    ($t:ident, $de:ty { $($items:tt)* }) => {
        #[pymethods]
        impl $t {
            /// Rebuilds the report from its JSON form (for pickling).
            #[classmethod]
            fn _from_json(_cls: &Bound<'_, PyType>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
                let text = json_text(text)?;
                let v: Value = serde_json::from_str(&text).map_err(|e| {
                    edge_error(ErrorKind::InvalidScenario, "report", "", &e.to_string())
                })?;
                let report: $de = parse_value(v, "report")?;
                Ok($t(report))
            }
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
                let text = json_of(&slf.get().0).to_string();
                Ok((slf.get_type().getattr("_from_json")?, (text,)))
            }
            /// The JSON form, as a dict.
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                dict_of(py, &self.0)
            }
            fn __repr__(&self) -> String {
                format!("{}({})", stringify!($t).trim_start_matches("Py"), json_of(&self.0))
            }
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
            }
            fn __hash__(&self) -> isize {
                hash_json(&self.0)
            }
            $($items)*
        }
    };
}

/// One role's side of a Diagnosis.
#[pyclass(name = "RoleReport", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRoleReport(RoleReport);

/// Nodes excluded for a role, each counted once under its first reason in this order:
/// cordoned, selector, taint, missing_label, too_small.
#[pyclass(name = "Exclusions", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyExclusions(Exclusions);

/// How much of the gang one domain can take.
#[pyclass(name = "DomainReport", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyDomainReport(DomainReport);

/// Members of one role that fit in a domain.
#[pyclass(name = "RoleFit", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRoleFit(RoleFit);

/// What relaxing the required level would give now.
#[pyclass(name = "Relaxation", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRelaxation(Relaxation);

/// How close the best domain comes to holding whole slices of one level.
#[pyclass(name = "SliceReport", module = "gang", frozen)]
#[derive(Clone)]
pub struct PySliceReport(SliceReport);

report_methods!(PyRoleReport, RoleReport {
    /// Role name.
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Members requested.
    #[getter]
    fn count(&self) -> u32 {
        self.0.count
    }
    /// Members required (min_count).
    #[getter]
    fn needed(&self) -> u32 {
        self.0.needed
    }
    /// Bound by the topology constraint.
    #[getter]
    fn constrained(&self) -> bool {
        self.0.constrained
    }
    /// Members of this role that fit cluster-wide, ignoring topology and other roles.
    #[getter]
    fn cluster_fit(&self) -> u64 {
        self.0.cluster_fit
    }
    /// Nodes that could take at least one member.
    #[getter]
    fn fitting_nodes(&self) -> u32 {
        self.0.fitting_nodes
    }
    /// Nodes that cannot, by first reason.
    #[getter]
    fn excluded(&self) -> PyExclusions {
        PyExclusions(self.0.excluded)
    }
    /// Requested resources that no node offers.
    #[getter]
    fn unknown_resources(&self) -> Vec<String> {
        self.0.unknown_resources.clone()
    }
});

report_methods!(PyExclusions, Exclusions {
    #[getter]
    fn cordoned(&self) -> u32 {
        self.0.cordoned
    }
    #[getter]
    fn selector(&self) -> u32 {
        self.0.selector
    }
    #[getter]
    fn taint(&self) -> u32 {
        self.0.taint
    }
    #[getter]
    fn missing_label(&self) -> u32 {
        self.0.missing_label
    }
    #[getter]
    fn too_small(&self) -> u32 {
        self.0.too_small
    }
    /// Total excluded nodes.
    #[getter]
    fn total(&self) -> u32 {
        self.0.total()
    }
});

report_methods!(PyDomainReport, DomainReport {
    /// Level key (None: the whole cluster).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.0.level.as_deref()
    }
    /// Domain path ("b1/r2"; "" for the cluster).
    #[getter]
    fn domain(&self) -> &str {
        &self.0.domain
    }
    /// Per constrained role (every role when cluster-wide).
    #[getter]
    fn fits(&self) -> Vec<PyRoleFit> {
        self.0.fits.iter().cloned().map(PyRoleFit).collect()
    }
    /// Resources that are short for some role on their own.
    #[getter]
    fn short_of(&self) -> Vec<String> {
        self.0.short_of.clone()
    }
    /// "resources", "fragmented", "slices", "roles_together" or "undecided".
    #[getter]
    fn reason(&self) -> &'static str {
        self.0.reason.as_str()
    }
});

report_methods!(PyRoleFit, RoleFit {
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Members that fit (single-role, slices respected).
    #[getter]
    fn fits(&self) -> u64 {
        self.0.fits
    }
    /// Members required.
    #[getter]
    fn needed(&self) -> u32 {
        self.0.needed
    }
});

report_methods!(PyRelaxation, Relaxation {
    /// The tightest coarser level that fits (None: only without any topology).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.0.level.as_deref()
    }
    /// The domain that would be used ("" when cluster-wide).
    #[getter]
    fn domain(&self) -> &str {
        &self.0.domain
    }
    /// How many domains of the originally required level the gang would span.
    #[getter]
    fn spans(&self) -> u32 {
        self.0.spans
    }
    /// Nodes it would use that lack the required level's label.
    #[getter]
    fn outside(&self) -> u32 {
        self.0.outside
    }
});

report_methods!(PySliceReport, SliceReport {
    #[getter]
    fn level(&self) -> &str {
        &self.0.level
    }
    #[getter]
    fn size(&self) -> u32 {
        self.0.size
    }
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Most members any one domain of the slice level can take (ignoring slices).
    #[getter]
    fn largest(&self) -> u64 {
        self.0.largest
    }
    #[getter]
    fn largest_domain(&self) -> &str {
        &self.0.largest_domain
    }
    /// Whole slices of this level available in the best domain.
    #[getter]
    fn available(&self) -> u64 {
        self.0.available
    }
    /// Slices of this level the role needs.
    #[getter]
    fn needed(&self) -> u64 {
        self.0.needed
    }
});
