//! Scenario files (the README's "Scenario files"): a cluster, a gang, and what must come out.

use std::sync::OnceLock;

use gang_core::scenario::Scenario;
use pyo3::prelude::*;
use pyo3::types::PyType;

use gang_core::ErrorKind;

use crate::convert::json_text;
use crate::errors::{core, guard};
use crate::inventory::PyInventory;
use crate::pyser::to_py;
use crate::spec::{PyGang, PyNode};

/// A scenario document: `topology`, `nodes`, `gang`, optional `description` and
/// `expect`. Parsing checks the format; the inventory is built (and validated) when
/// first used, so an invalid cluster raises from `inventory` / `place`, naming the field.
///
/// >>> import gang
/// >>> s = gang.Scenario.from_dict({
/// ...     "topology": {"levels": ["rack"]},
/// ...     "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 8}}],
/// ...     "gang": {"name": "g", "roles": [{"name": "w", "count": 2, "requests": {"gpu": 4}}],
/// ...              "topology": {"required": "rack"}},
/// ...     "expect": {"status": "placed", "nodes": {"a1": 2}}})
/// >>> s.place().nodes
/// {'a1': 2}
/// >>> s.check()
/// []
#[pyclass(name = "Scenario", module = "gang", frozen)]
pub struct PyScenario {
    s: Scenario,
    inventory: OnceLock<Py<PyInventory>>,
}

impl PyScenario {
    fn ask<'py>(
        &self,
        py: Python<'py>,
        how: &str,
        search_budget: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inv = self.inventory_obj(py)?;
        let gang = Bound::new(py, PyGang::of(self.s.gang.clone()))?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("search_budget", search_budget)?;
        inv.call_method(how, (gang,), Some(&kwargs))
    }

    fn new(s: Scenario) -> Self {
        PyScenario {
            s,
            inventory: OnceLock::new(),
        }
    }

    fn inventory_obj<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyInventory>> {
        if let Some(inv) = self.inventory.get() {
            return Ok(inv.bind(py).clone());
        }
        let inv = PyInventory::build(py, self.s.topology.levels.clone(), self.s.nodes.clone())?;
        let inv = Py::new(py, inv)?;
        // Another thread may have won the race; either inventory is the same.
        let _ = self.inventory.set(inv.clone_ref(py));
        Ok(self.inventory.get().unwrap_or(&inv).bind(py).clone())
    }
}

#[pymethods]
impl PyScenario {
    /// A scenario from JSON text. Unknown fields are errors (`InvalidScenario`, naming
    /// the JSON path).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = json_text(text)?;
        core(|| Scenario::from_json(&text)).map(PyScenario::new)
    }
    /// A scenario from a dict in the same format.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::pyde::read(doc, "", ErrorKind::InvalidScenario).map(PyScenario::new)
    }
    /// What the scenario is about, if it says.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.s.description.as_deref()
    }
    /// Topology levels, outermost first.
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.s.topology.levels.clone()
    }
    /// The nodes as given.
    #[getter]
    fn nodes(&self) -> Vec<PyNode> {
        self.s.nodes.iter().cloned().map(PyNode::of).collect()
    }
    /// The gang to place.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang::of(self.s.gang.clone())
    }
    /// The `expect` block as a dict (None when absent).
    #[getter]
    fn expect<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.s.expect.as_ref().map(|e| to_py(py, e)).transpose()
    }
    /// The inventory, built on first use (raises when the cluster is invalid).
    #[getter]
    fn inventory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyInventory>> {
        self.inventory_obj(py)
    }
    /// Places the scenario's gang on its inventory (see `Inventory.place`).
    #[pyo3(signature = (*, search_budget = None))]
    fn place<'py>(
        &self,
        py: Python<'py>,
        search_budget: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.ask(py, "place", search_budget)
    }
    /// Like `place`, returning the `Diagnosis` instead of raising when not placed.
    #[pyo3(signature = (*, search_budget = None))]
    fn try_place<'py>(
        &self,
        py: Python<'py>,
        search_budget: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.ask(py, "try_place", search_budget)
    }
    /// Runs the scenario in the core and checks its `expect` block there; returns the
    /// expectations that did not hold, in words (empty: all held).
    fn check(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let s = &self.s;
        py.detach(|| guard(|| s.check().failures))
    }
    /// The scenario as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.s)
    }
    /// The scenario as JSON text.
    fn to_json(&self) -> String {
        self.s.to_json()
    }
    fn __repr__(&self) -> String {
        format!(
            "Scenario(gang={:?}, nodes={}, levels={:?})",
            self.s.gang.get_name(),
            self.s.nodes.len(),
            self.s.topology.levels
        )
        .replace('"', "'")
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().getattr("from_json")?, (slf.get().to_json(),)))
    }
}

/// Reads a scenario file (the README's "Scenario files"). Raises `InvalidScenario` when it does not parse
/// (naming the JSON path) and `OSError` (`FileNotFoundError`…, with its `filename`) when it cannot be read.
///
/// >>> import gang, json, tempfile, os
/// >>> doc = {"topology": {"levels": ["rack"]},
/// ...        "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 2}}],
/// ...        "gang": {"name": "g", "roles": [{"name": "w", "count": 4, "requests": {"gpu": 1}}]}}
/// >>> with tempfile.TemporaryDirectory() as d:
/// ...     path = os.path.join(d, "s.json")
/// ...     with open(path, "w") as f:
/// ...         json.dump(doc, f)
/// ...     s = gang.load_scenario(path)
/// >>> s.try_place().status
/// 'unschedulable'
#[pyfunction]
pub fn load_scenario(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<PyScenario> {
    // Python's own open(): an OSError names the file, as Python users expect; read
    // with a cap (GANG_MAX_INPUT_BYTES) and checked as UTF-8 while it streams in.
    let path: String = py
        .import("os")?
        .call_method1("fspath", (path,))?
        .extract()?;
    let text = crate::kube::read_file_capped(py, &path)?;
    core(|| Scenario::from_json(&text)).map(PyScenario::new)
}
