//! Results: `Placement` (+ `Assignment`) and `Diagnosis` (+ its reports).
//!
//! A `Placement` made in this process wraps the core placement itself; the views that
//! need node paths (`domain_counts`, `to_records`, pickling) read the core's
//! [`PlacementSnapshot`], taken once on first use from the inventory the placement was
//! made on (as it was then: see [`crate::state::Generation`]). An unpickled
//! placement is that snapshot alone. A `Diagnosis` is the core diagnosis, with the
//! inventory's levels for its summary record.

use std::sync::{Arc, OnceLock};

use gang_core::{Diagnosis, ErrorKind, Placement, PlacementSnapshot, HOSTNAME_LEVEL};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};

use crate::convert::{json_text, parse_json, repr_str};
use crate::dunder::{value_class, Repr};
use crate::errors::{edge_error, raise};
use crate::pyser::{hash_of, to_py};
use crate::reports::{PyDomainReport, PyFewerMembers, PyRelaxation, PyRoleReport, PySliceReport};
use crate::state::Source;

// ------------------------------------------------------------------------- Placement

/// Where a gang goes: the level and domain, and how many members of each role on
/// which node. Returned by `Inventory.place`; immutable, comparable, hashable and
/// picklable.
///
/// A domain is spelled one way everywhere: its full path (`domain`, "b1/r1"), with the
/// label value at the placement's level apart (`domain_value`, "r1") and per level in
/// `domain_labels`.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["block", "rack"], [
/// ...     gang.Node(f"n{i}", labels={"block": "b1", "rack": "r1" if i < 2 else "r2"},
/// ...               capacity={"gpu": 8}) for i in range(4)])
/// >>> p = inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 8})], required="rack"))
/// >>> p
/// Placement(gang='g', level='rack', domain='b1/r1', nodes={'n0': 1, 'n1': 1})
/// >>> p.domain, p.domain_value, p.domain_labels, p.placed, p.members
/// ('b1/r1', 'r1', {'block': 'b1', 'rack': 'r1'}, {'w': 2}, 2)
/// >>> p.to_records()[0]
/// {'gang': 'g', 'role': 'w', 'node': 'n0', 'count': 1, 'block': 'b1', 'rack': 'r1'}
/// >>> p.summary()
/// {'status': 'placed', 'gang': 'g', 'level': 'rack', 'domain': 'b1/r1', 'domain_value': 'r1', 'members': 2, 'nodes_used': 2, 'domains_used.block': 1, 'domains_used.rack': 1, 'best_domain': None, 'best_fits': None, 'short_of': None}
#[pyclass(name = "Placement", module = "gang", frozen)]
pub struct PyPlacement {
    /// The core placement and where it came from, when made in this process.
    live: Option<Live>,
    /// The snapshot, taken on first use (given when unpickled).
    snap: OnceLock<PlacementSnapshot>,
    /// The core's JSON form and text, when unpickled.
    saved: Option<(String, String)>,
}

/// What placements compare and hash by: gang, level, domain, assignments, completeness.
type Key<'a> = (
    &'a str,
    Option<&'a str>,
    &'a [(String, String)],
    Vec<(&'a str, &'a str, u32)>,
    bool,
);

/// A diagnosis' pickled form: its JSON text and the inventory's levels.
type DiagnosisState<'py> = (Bound<'py, PyAny>, (String, Vec<String>));

struct Live {
    placement: Placement,
    source: Source,
}

impl PyPlacement {
    /// Wraps a core placement; nothing is converted until asked, so `place` itself
    /// does no more than the core call.
    pub fn new(placement: Placement, source: Source) -> PyPlacement {
        PyPlacement {
            live: Some(Live { placement, source }),
            snap: OnceLock::new(),
            saved: None,
        }
    }

    /// The core placement, when made in this process.
    pub fn core(&self) -> Option<&Placement> {
        self.live.as_ref().map(|l| &l.placement)
    }

    /// The plain-data snapshot (taken on first use).
    pub fn snapshot(&self) -> &PlacementSnapshot {
        self.snap.get_or_init(|| match &self.live {
            Some(l) => l.source.snapshot(&l.placement),
            None => unreachable!("an unpickled placement is built with its snapshot"),
        })
    }

    fn level_opt(&self) -> Option<&str> {
        match &self.live {
            Some(l) => l.placement.level(),
            None => self.snapshot().level.as_deref(),
        }
    }

    fn domain_pairs(&self) -> &[(String, String)] {
        match &self.live {
            Some(l) => l.placement.domain(),
            None => &self.snapshot().domain,
        }
    }

    pub fn gang_name(&self) -> &str {
        match &self.live {
            Some(l) => l.placement.gang(),
            None => &self.snapshot().gang,
        }
    }

    fn path(&self) -> String {
        self.domain_pairs()
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// `(role, node, count)` per assignment.
    fn triples(&self) -> Vec<(&str, &str, u32)> {
        match &self.live {
            Some(l) => l
                .placement
                .assignments()
                .iter()
                .map(|a| (a.role.as_str(), a.node.as_str(), a.count))
                .collect(),
            None => self
                .snapshot()
                .assignments
                .iter()
                .map(|a| (a.role.as_str(), a.node.as_str(), a.count))
                .collect(),
        }
    }

    fn node_counts(&self) -> Vec<(&str, u32)> {
        match &self.live {
            Some(l) => l.placement.node_counts(),
            None => self
                .snapshot()
                .nodes
                .iter()
                .map(|(n, k)| (n.as_str(), *k))
                .collect(),
        }
    }

    fn placed_pairs(&self) -> Vec<(&str, u32)> {
        match &self.live {
            Some(l) => l.placement.placed_by_role().collect(),
            None => self
                .snapshot()
                .placed
                .iter()
                .map(|(r, k)| (r.as_str(), *k))
                .collect(),
        }
    }

    fn used(&self) -> &[(String, u32)] {
        match &self.live {
            Some(l) => l.placement.domains_used(),
            None => &self.snapshot().domains_used,
        }
    }

    fn complete(&self) -> bool {
        match &self.live {
            Some(l) => l.placement.search_complete(),
            None => self.snapshot().search_complete,
        }
    }

    fn json(&self) -> String {
        match (&self.live, &self.saved) {
            (Some(l), _) => serde_json::to_string(&l.placement).unwrap_or_default(),
            (None, Some((json, _))) => json.clone(),
            (None, None) => String::new(),
        }
    }

    fn text(&self) -> String {
        match (&self.live, &self.saved) {
            (Some(l), _) => l.placement.to_string(),
            (None, Some((_, text))) => text.clone(),
            (None, None) => String::new(),
        }
    }

    fn key(&self) -> Key<'_> {
        (
            self.gang_name(),
            self.level_opt(),
            self.domain_pairs(),
            self.triples(),
            self.complete(),
        )
    }
}

/// Members of one role on one node.
#[pyclass(name = "Assignment", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyAssignment(pub gang_core::Assignment);

impl Repr for PyAssignment {
    fn repr(&self) -> String {
        format!(
            "Assignment(role={}, node={}, count={})",
            repr_str(&self.0.role),
            repr_str(&self.0.node),
            self.0.count
        )
    }
}

value_class!(PyAssignment, "_from_dict", {
    #[new]
    fn new(
        role: &Bound<'_, PyAny>,
        node: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        Ok(PyAssignment(gang_core::Assignment {
            role: crate::convert::string(role, "role", k)?,
            node: crate::convert::string(node, "node", k)?,
            count: crate::convert::count(count, "count", k)?,
        }))
    }
    #[classmethod]
    fn _from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::pyde::read(doc, "assignment", ErrorKind::InvalidScenario).map(PyAssignment)
    }
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    #[getter]
    fn node(&self) -> &str {
        &self.0.node
    }
    #[getter]
    fn count(&self) -> u32 {
        self.0.count
    }
    /// `(role, node, count)`, so that `role, node, count = assignment` works.
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let a = &slf.get().0;
        let t = (a.role.clone(), a.node.clone(), a.count).into_pyobject(slf.py())?;
        t.try_iter().map(Bound::into_any)
    }
});

fn pairs_dict<'py, K: AsRef<str>>(
    py: Python<'py>,
    pairs: impl Iterator<Item = (K, u32)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(k.as_ref(), v)?;
    }
    Ok(d)
}

#[pymethods]
impl PyPlacement {
    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        self.gang_name()
    }
    /// The level whose single domain holds the constrained members; None when the gang
    /// was placed cluster-wide (unconstrained, or split above the top level).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.level_opt()
    }
    /// The domain's full path ("b1/r1"; "" cluster-wide).
    #[getter]
    fn domain(&self) -> String {
        self.path()
    }
    /// The label value at the placement's level ("r1"; None cluster-wide).
    #[getter]
    fn domain_value(&self) -> Option<&str> {
        self.domain_pairs().last().map(|(_, v)| v.as_str())
    }
    /// The domain as {level: value}, outermost first (empty cluster-wide).
    #[getter]
    fn domain_labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.domain_pairs() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Per-role per-node member counts, ordered by role then node (topology order).
    #[getter]
    fn assignments(&self) -> Vec<PyAssignment> {
        self.triples()
            .into_iter()
            .map(|(role, node, count)| {
                PyAssignment(gang_core::Assignment {
                    role: role.to_owned(),
                    node: node.to_owned(),
                    count,
                })
            })
            .collect()
    }
    /// Members per node, summed over roles, in topology order.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        pairs_dict(py, self.node_counts().into_iter())
    }
    /// Members placed per role (below the count only for elastic roles).
    #[getter]
    fn placed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        pairs_dict(py, self.placed_pairs().into_iter())
    }
    /// Total members placed.
    #[getter]
    fn members(&self) -> u64 {
        self.placed_pairs().iter().map(|p| u64::from(p.1)).sum()
    }
    /// Distinct domains used per level, the node level last
    /// ({"block": 1, "rack": 2, "kubernetes.io/hostname": 3}).
    #[getter]
    fn domains_used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        pairs_dict(py, self.used().iter().map(|(k, v)| (k.as_str(), *v)))
    }
    /// False when the exact search ran out of budget at a tighter level first, so a
    /// tighter placement might exist.
    #[getter]
    fn search_complete(&self) -> bool {
        self.complete()
    }
    /// Members per domain of `level`, keyed by domain path ("b1/a"); members on nodes
    /// without that level's label are counted under the key None. At the node level
    /// ("kubernetes.io/hostname") the keys are node names.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 1}),
    /// ...                                 gang.Node("b1", labels={"rack": "b"}, capacity={"gpu": 1}),
    /// ...                                 gang.Node("x1", capacity={"gpu": 1})])
    /// >>> inv.place(gang.Gang("g", [gang.Role("w", 3, requests={"gpu": 1})])).domain_counts("rack")
    /// {'a': 1, 'b': 1, None: 1}
    fn domain_counts<'py>(&self, py: Python<'py>, level: &str) -> PyResult<Bound<'py, PyDict>> {
        let Some(c) = self.snapshot().domain_counts(level) else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "level",
                level,
                "not a level of the inventory's topology",
            ));
        };
        let d = pairs_dict(py, c.domains.iter().map(|(k, v)| (k.as_str(), *v)))?;
        if c.outside > 0 {
            d.set_item(py.None(), c.outside)?;
        }
        Ok(d)
    }
    /// The core's JSON form as a dict: {"status": "placed", "gang", "level", "domain",
    /// "assignments", "placed", "domains_used", "search_complete"}.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.live {
            Some(l) => to_py(py, &l.placement),
            None => to_py(py, &parse_json::<serde_json::Value>(&self.json())?),
        }
    }
    /// The core's JSON form as text.
    fn to_json(&self) -> String {
        self.json()
    }
    /// One dict per assignment: gang, role, node, count, and the node's domain value
    /// at each topology level (None where the node has no label for it). Ready for
    /// pandas.DataFrame.
    fn to_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let s = self.snapshot();
        let out = PyList::empty(py);
        for a in &s.assignments {
            let d = PyDict::new(py);
            d.set_item("gang", &s.gang)?;
            d.set_item("role", &a.role)?;
            d.set_item("node", &a.node)?;
            d.set_item("count", a.count)?;
            for (i, l) in s.levels.iter().enumerate() {
                d.set_item(l, a.path.get(i))?;
            }
            out.append(d)?;
        }
        Ok(out)
    }
    /// One flat record for this result, with the same columns as `Diagnosis.summary()`
    /// (so a list of results is one table: see `gang.to_pandas`).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("status", "placed")?;
        d.set_item("gang", self.gang_name())?;
        d.set_item("level", self.level_opt())?;
        d.set_item("domain", self.path())?;
        // The label value at the gang's level (`r1` of `b1/r1`): the domain's own name.
        let pairs = self.domain_pairs();
        d.set_item("domain_value", pairs.last().map(|(_, v)| v.as_str()))?;
        d.set_item("members", self.members())?;
        let used = self.used();
        let nodes = used
            .iter()
            .find(|(k, _)| k == HOSTNAME_LEVEL)
            .map_or(0, |x| x.1);
        d.set_item("nodes_used", nodes)?;
        for (k, v) in used.iter().filter(|(k, _)| k != HOSTNAME_LEVEL) {
            d.set_item(format!("domains_used.{k}"), v)?;
        }
        d.set_item("best_domain", py.None())?;
        d.set_item("best_fits", py.None())?;
        d.set_item("short_of", py.None())?;
        Ok(d)
    }
    fn __str__(&self) -> String {
        self.text()
    }
    fn __repr__(&self) -> String {
        let nodes: Vec<String> = self
            .node_counts()
            .iter()
            .map(|(n, k)| format!("{}: {k}", repr_str(n)))
            .collect();
        format!(
            "Placement(gang={}, level={}, domain={}, nodes={{{}}})",
            repr_str(self.gang_name()),
            self.level_opt().map_or("None".to_owned(), repr_str),
            repr_str(&self.path()),
            nodes.join(", ")
        )
    }
    /// An HTML table for notebooks: one row per assignment, with the node's path.
    fn _repr_html_(&self) -> String {
        let s = self.snapshot();
        let mut head: Vec<&str> = vec!["role", "node", "count"];
        head.extend(s.levels.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = s
            .assignments
            .iter()
            .map(|a| {
                let mut r = vec![a.role.clone(), a.node.clone(), a.count.to_string()];
                r.extend((0..s.levels.len()).map(|i| a.path.get(i).cloned().unwrap_or_default()));
                r
            })
            .collect();
        crate::html::table(&self.text(), &head, &rows)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<Self>() {
            Ok(o) => pyo3::types::PyBool::new(py, self.key() == o.get().key())
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }
    fn __hash__(&self) -> isize {
        hash_of(&self.key())
    }
    /// Rebuilds a placement from its pickled state (snapshot, JSON form, text).
    #[classmethod]
    fn _from_state(
        _cls: &Bound<'_, PyType>,
        snapshot: &Bound<'_, PyAny>,
        json: String,
        text: String,
    ) -> PyResult<Self> {
        let snap: PlacementSnapshot = parse_json(&json_text(snapshot)?)?;
        Ok(PyPlacement {
            live: None,
            snap: OnceLock::from(snap),
            saved: Some((json, text)),
        })
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, String, String))> {
        let p = slf.get();
        let snap = serde_json::to_string(p.snapshot()).unwrap_or_default();
        Ok((
            slf.get_type().getattr("_from_state")?,
            (snap, p.json(), p.text()),
        ))
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
/// >>> d.summary()
/// {'status': 'unschedulable', 'gang': 'train', 'level': 'rack', 'domain': None, 'domain_value': None, 'members': 0, 'nodes_used': 0, 'domains_used.rack': 0, 'best_domain': 'b', 'best_fits': 4, 'short_of': 'nvidia.com/gpu'}
#[pyclass(name = "Diagnosis", module = "gang", frozen)]
pub struct PyDiagnosis {
    pub d: Arc<Diagnosis>,
    /// The inventory's label levels (for the summary's columns).
    pub levels: Vec<String>,
}

impl PyDiagnosis {
    pub fn new(d: Diagnosis, levels: Vec<String>) -> Self {
        PyDiagnosis {
            d: Arc::new(d),
            levels,
        }
    }

    fn status(&self) -> &'static str {
        if self.d.search_exhausted {
            "undecided"
        } else {
            "unschedulable"
        }
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
    /// For an elastic gang: what the best domain takes with lower minimums, or None.
    #[getter]
    fn fewer_members(&self) -> Option<PyFewerMembers> {
        self.d.fewer_members.clone().map(PyFewerMembers)
    }
    /// The paragraph as `(part, sentence)` pairs, in order; `str()` joins the sentences.
    /// Parts: "summary", "best", "cluster_wide", "slices", "unknown_resources",
    /// "excluded", "relaxation", "fewer_members".
    fn sentences(&self) -> Vec<(&'static str, String)> {
        self.d
            .sentences()
            .into_iter()
            .map(|(p, s)| (p.as_str(), s))
            .collect()
    }
    /// "undecided" when the search budget ran out, else "unschedulable".
    #[getter(status)]
    fn py_status(&self) -> &'static str {
        self.status()
    }
    /// The core's JSON form of the diagnosis, as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &*self.d)
    }
    /// The core's JSON form of the diagnosis, as text.
    fn to_json(&self) -> String {
        serde_json::to_string(&*self.d).unwrap_or_default()
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
    /// One flat record for this result, with the same columns as `Placement.summary()`:
    /// nothing placed, and the best domain, how many members it takes (all roles) and
    /// what it is short of.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("status", self.status())?;
        d.set_item("gang", &self.d.gang)?;
        d.set_item("level", self.d.level.as_deref())?;
        d.set_item("domain", py.None())?;
        d.set_item("domain_value", py.None())?;
        d.set_item("members", 0)?;
        d.set_item("nodes_used", 0)?;
        for l in &self.levels {
            d.set_item(format!("domains_used.{l}"), 0)?;
        }
        let best = self.d.best.as_ref();
        d.set_item("best_domain", best.map(|b| b.domain.as_str()))?;
        d.set_item(
            "best_fits",
            best.map(|b| b.fits.iter().map(|f| f.fits).sum::<u64>()),
        )?;
        d.set_item("short_of", best.map(|b| b.short_of.join(",")))?;
        Ok(d)
    }
    fn __str__(&self) -> String {
        self.d.to_string()
    }
    fn __repr__(&self) -> String {
        format!(
            "Diagnosis(gang={}, status={}, level={}, best={})",
            repr_str(&self.d.gang),
            repr_str(self.status()),
            self.d.level.as_deref().map_or("None".to_owned(), repr_str),
            self.d
                .best
                .as_ref()
                .map_or("None".to_owned(), |b| repr_str(&b.domain))
        )
    }
    /// For notebooks: the paragraph, then one row per role.
    fn _repr_html_(&self) -> String {
        let best = self.d.best.as_ref();
        let rows: Vec<Vec<String>> = self
            .d
            .roles
            .iter()
            .map(|r| {
                let fit = best.and_then(|b| b.fits.iter().find(|f| f.role == r.role));
                vec![
                    r.role.clone(),
                    r.count.to_string(),
                    r.needed.to_string(),
                    r.cluster_fit.to_string(),
                    fit.map_or(String::new(), |f| f.fits.to_string()),
                    r.excluded.total().to_string(),
                ]
            })
            .collect();
        format!(
            "<p>{}</p>{}",
            crate::html::escape(&self.d.to_string()),
            crate::html::table(
                "per role",
                &[
                    "role",
                    "count",
                    "needed",
                    "cluster_fit",
                    "best_domain_fits",
                    "excluded"
                ],
                &rows
            )
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<Self>() {
            Ok(o) => pyo3::types::PyBool::new(py, *o.get().d == *self.d)
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }
    fn __hash__(&self) -> isize {
        hash_of(&*self.d)
    }
    /// Rebuilds a diagnosis from its JSON form (as produced by `to_json`).
    #[classmethod]
    #[pyo3(signature = (text, levels = None))]
    fn from_json(
        _cls: &Bound<'_, PyType>,
        text: &Bound<'_, PyAny>,
        levels: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let d: Diagnosis = parse_json(&json_text(text)?).map_err(|e| {
            Python::attach(|py| {
                let field: String = e
                    .value(py)
                    .getattr("field")
                    .and_then(|f| f.extract())
                    .unwrap_or_default();
                let reason: String = e
                    .value(py)
                    .getattr("reason")
                    .and_then(|f| f.extract())
                    .unwrap_or_default();
                let at = if field == "document" {
                    "diagnosis".to_owned()
                } else {
                    format!("diagnosis.{field}")
                };
                edge_error(ErrorKind::InvalidScenario, &at, "", &reason)
            })
        })?;
        Ok(PyDiagnosis::new(d, levels.unwrap_or_default()))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<DiagnosisState<'py>> {
        let d = slf.get();
        Ok((
            slf.get_type().getattr("from_json")?,
            (d.to_json(), d.levels.clone()),
        ))
    }
}

/// The Python exception for a diagnosis: `Unschedulable` or `Undecided`, with the
/// paragraph as message and the `Diagnosis` as `.diagnosis`.
pub fn not_placed(py: Python<'_>, d: Diagnosis, levels: Vec<String>) -> PyErr {
    let undecided = d.search_exhausted;
    let message = d.to_string();
    let status = if undecided {
        "undecided"
    } else {
        "unschedulable"
    };
    let diag = Py::new(py, PyDiagnosis::new(d, levels)).map(|d| d.into_any());
    let reason = message
        .clone()
        .into_pyobject(py)
        .ok()
        .map(|s| s.into_any().unbind());
    let st = || status.into_pyobject(py).ok().map(|s| s.into_any().unbind());
    raise(
        if undecided {
            "Undecided"
        } else {
            "Unschedulable"
        },
        message,
        &[
            ("diagnosis", diag.ok()),
            ("status", st()),
            ("kind", st()),
            ("reason", reason),
        ],
    )
}
