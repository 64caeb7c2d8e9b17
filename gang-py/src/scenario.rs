//! Scenario files (the README's "Scenario files"): a cluster, a gang, and what must come out.

use std::path::PathBuf;
use std::sync::OnceLock;

use gang_core::scenario::Scenario;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::{self, from_value, json_text};
use crate::errors::{core, guard};
use crate::inventory::{inventory_from_specs, PyInventory};
use crate::spec::{json_of, PyGang, PyNode};

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
        let inv = inventory_from_specs(py, self.s.topology.levels.clone(), self.s.nodes.clone())?;
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
        let text = convert::to_json(doc, "")?;
        core(|| Scenario::from_json(&text)).map(PyScenario::new)
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
        self.s.nodes.iter().cloned().map(PyNode).collect()
    }
    /// The gang to place.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang(self.s.gang.clone())
    }
    /// The `expect` block as a dict (None when absent).
    #[getter]
    fn expect<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.s
            .expect
            .as_ref()
            .map(|e| from_value(py, &json_of(e)))
            .transpose()
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
        search_budget: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inv = self.inventory_obj(py)?;
        let gang = Bound::new(py, self.gang())?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("search_budget", search_budget)?;
        inv.call_method("place", (gang,), Some(&kwargs))
    }
    /// Like `place`, returning the `Diagnosis` instead of raising when not placed.
    #[pyo3(signature = (*, search_budget = None))]
    fn try_place<'py>(
        &self,
        py: Python<'py>,
        search_budget: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inv = self.inventory_obj(py)?;
        let gang = Bound::new(py, self.gang())?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("search_budget", search_budget)?;
        inv.call_method("try_place", (gang,), Some(&kwargs))
    }
    /// Runs the scenario in the core and checks its `expect` block there; returns the
    /// expectations that did not hold, in words (empty: all held).
    fn check(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let s = &self.s;
        py.detach(|| guard(|| s.check().failures))
    }
    /// The scenario as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_value(py, &json_of(&self.s))
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
/// (naming the JSON path) and `OSError` when it cannot be read.
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
pub fn load_scenario(path: PathBuf) -> PyResult<PyScenario> {
    let text = std::fs::read_to_string(&path)?;
    core(|| Scenario::from_json(&text)).map(PyScenario::new)
}
