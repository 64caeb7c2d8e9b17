//! `Inventory` and `CompiledGang`: placement queries, with the GIL released.
//!
//! The Python `Inventory` keeps the core inventory, the node specs it was built from
//! (its pickled form), each node's label path (for per-domain views of placements) and
//! a small pool of solvers so that repeated queries reuse scratch space.
//!
//! Every query goes through [`InvState::with_inventory`]; when the core's lifecycle
//! operations (reserve / release / replace / admit) land, the inventory moves behind a
//! lock there and the new methods sit beside `place`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gang_core::{
    CompiledGang, Error, ErrorKind, Inventory, NodeSpec, Outcome, Solver, Topology,
    DEFAULT_SEARCH_BUDGET, HOSTNAME_LEVEL,
};
use pyo3::prelude::*;
use pyo3::types::PyType;
use serde::Deserialize;

use crate::convert::{self, from_value, items, json_text};
use crate::errors::{core, edge_error, guard};
use crate::outcome::{not_placed, PyDiagnosis, PyPlacement};
use crate::spec::{gang_from, node_from, PyGang, PyNode, PyQuantity};

/// Solvers kept per inventory for reuse (one per concurrent caller is enough).
const POOL: usize = 8;

pub struct InvState {
    inv: Inventory,
    /// Topology levels as given.
    levels: Vec<String>,
    /// Label levels (the levels without a trailing `kubernetes.io/hostname`).
    label_levels: Vec<String>,
    /// Node specs in storage (topology) order.
    specs: Vec<NodeSpec>,
    /// Node name → index into `specs`.
    index: HashMap<String, usize>,
    /// Per node (storage order): label values of the label levels, up to the first
    /// missing one (a node missing a level's label is outside that level and finer).
    paths: Vec<Vec<String>>,
    solvers: Mutex<Vec<(u64, Solver)>>,
}

impl InvState {
    fn new(levels: Vec<String>, specs: Vec<NodeSpec>) -> Result<InvState, Error> {
        let inv = Inventory::builder(Topology::new(levels.clone())?)
            .nodes(specs.iter().cloned())
            .build()?;
        Ok(InvState::from_parts(inv, levels, specs))
    }

    fn from_parts(inv: Inventory, levels: Vec<String>, specs: Vec<NodeSpec>) -> InvState {
        let label_levels: Vec<String> = match levels.last() {
            Some(l) if l == HOSTNAME_LEVEL => levels[..levels.len() - 1].to_vec(),
            _ => levels.clone(),
        };
        let mut by_name: HashMap<&str, &NodeSpec> =
            specs.iter().map(|s| (s.name.as_str(), s)).collect();
        let ordered: Vec<NodeSpec> = inv
            .node_names()
            .filter_map(|n| by_name.remove(n).cloned())
            .collect();
        let index = ordered
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let paths = ordered
            .iter()
            .map(|s| {
                label_levels
                    .iter()
                    .map_while(|l| s.labels.get(l).cloned())
                    .collect()
            })
            .collect();
        InvState {
            inv,
            levels,
            label_levels,
            specs: ordered,
            index,
            paths,
            solvers: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on the core inventory (the one place to add a lock for lifecycle
    /// operations).
    fn with_inventory<R>(&self, f: impl FnOnce(&Inventory) -> R) -> R {
        f(&self.inv)
    }

    /// Runs `f` with a pooled solver of the given budget.
    fn with_solver<R>(&self, budget: u64, f: impl FnOnce(&mut Solver) -> R) -> R {
        let pooled = {
            let mut pool = self.solvers.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|(b, _)| *b == budget)
                .map(|i| pool.swap_remove(i).1)
        };
        let mut solver = pooled.unwrap_or_else(|| Solver::with_search_budget(budget));
        let r = f(&mut solver);
        let mut pool = self.solvers.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL {
            pool.push((budget, solver));
        }
        r
    }

    /// The label levels, outermost first.
    pub fn label_levels(&self) -> &[String] {
        &self.label_levels
    }

    /// A node's label values for the label levels, up to its first missing label.
    pub fn path_of(&self, node: &str) -> Vec<String> {
        self.index
            .get(node)
            .map(|&i| self.paths[i].clone())
            .unwrap_or_default()
    }

    fn cluster_json(&self) -> serde_json::Value {
        serde_json::json!({
            "topology": { "levels": self.levels },
            "nodes": self.specs,
        })
    }

    /// Places a compiled gang; the outcome with the placement already converted.
    fn solve(self: &Arc<Self>, compiled: &CompiledGang, budget: u64) -> Result<Solved, Error> {
        let outcome =
            self.with_inventory(|inv| self.with_solver(budget, |s| s.place(inv, compiled)))?;
        Ok(match outcome {
            Outcome::Placed(p) => {
                Solved::Placed(PyPlacement::from_core(p, compiled.clone(), self.clone()))
            }
            Outcome::Unschedulable(d) | Outcome::Undecided(d) => Solved::NotPlaced(d),
        })
    }
}

/// A query's answer; both variants are moved once, straight into Python objects.
#[allow(clippy::large_enum_variant)]
enum Solved {
    Placed(PyPlacement),
    NotPlaced(gang_core::Diagnosis),
}

/// The cluster half of a scenario: `{"topology": {"levels": [...]}, "nodes": [...]}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterDoc {
    topology: TopologyDoc,
    nodes: Vec<NodeSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyDoc {
    #[serde(default)]
    levels: Vec<String>,
}

/// A validated cluster snapshot, ready for placement queries.
///
/// Build it from topology levels (outermost first) and nodes (`Node` objects or dicts
/// in the scenario format), from a dict (`from_dict`) or JSON text (`from_json`), or
/// take it from a scenario (`load_scenario(path).inventory`). It is immutable; queries
/// release the GIL and may run from several threads at once.
///
/// >>> import gang
/// >>> BLOCK, RACK = "topology.example.com/block", "topology.example.com/rack"
/// >>> def node(name, rack, used):
/// ...     return gang.Node(name, labels={BLOCK: "b1", RACK: rack},
/// ...                      capacity={"nvidia.com/gpu": 8, "cpu": "96"}, used={"nvidia.com/gpu": used})
/// >>> inv = gang.Inventory([BLOCK, RACK], [node("a1", "a", 6), node("a2", "a", 6), node("b1", "b", 5)])
/// >>> inv
/// Inventory(levels=['topology.example.com/block', 'topology.example.com/rack'], nodes=3, resources=['cpu', 'nvidia.com/gpu'])
/// >>> workers = gang.Role("worker", 4, requests={"nvidia.com/gpu": 1, "cpu": "500m"})
/// >>> inv.place(gang.Gang("train", [workers], required=RACK)).nodes
/// {'a1': 2, 'a2': 2}
/// >>> inv.place(gang.Gang("train", [gang.Role("worker", 5, requests={"nvidia.com/gpu": 1})], required=RACK))
/// Traceback (most recent call last):
///   ...
/// gang.Unschedulable: gang train (5 worker) does not fit in one rack (topology.example.com/rack). Best rack: rack b1/a fits 4 of 5 worker (short of nvidia.com/gpu). Cluster-wide, ignoring topology, 7 worker fit. Relaxing to block: block b1 fits all 5 now (across 2 racks).
#[pyclass(name = "Inventory", module = "gang", frozen)]
pub struct PyInventory {
    pub state: Arc<InvState>,
}

/// What `place` accepts: a `Gang`, a gang dict, or a `CompiledGang`.
enum Target {
    Gang(Py<PyGang>),
    Parsed(gang_core::Gang),
    Compiled(Py<PyCompiledGang>),
}

impl Target {
    fn extract(obj: &Bound<'_, PyAny>) -> PyResult<Target> {
        if let Ok(g) = obj.cast::<PyGang>() {
            return Ok(Target::Gang(g.clone().unbind()));
        }
        if let Ok(c) = obj.cast::<PyCompiledGang>() {
            return Ok(Target::Compiled(c.clone().unbind()));
        }
        Ok(Target::Parsed(gang_from(obj)?))
    }
}

impl PyInventory {
    pub fn from_state(state: InvState) -> Self {
        PyInventory {
            state: Arc::new(state),
        }
    }

    pub fn build(py: Python<'_>, levels: Vec<String>, specs: Vec<NodeSpec>) -> PyResult<Self> {
        let state = py.detach(|| core(|| InvState::new(levels, specs)))?;
        Ok(PyInventory::from_state(state))
    }

    fn parse_json(py: Python<'_>, text: String) -> PyResult<Self> {
        let state = py.detach(|| {
            core(|| {
                // The core parser validates and names the JSON path of any problem; the
                // specs are then read again for the Python view and pickling.
                let inv = Inventory::from_json(&text)?;
                let doc: ClusterDoc =
                    serde_json::from_str(&text).map_err(|e| Error::InvalidScenario {
                        field: "document".into(),
                        reason: e.to_string(),
                    })?;
                Ok(InvState::from_parts(inv, doc.topology.levels, doc.nodes))
            })
        })?;
        Ok(PyInventory::from_state(state))
    }

    fn run(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<Solved> {
        let target = Target::extract(gang)?;
        let budget = search_budget.unwrap_or(DEFAULT_SEARCH_BUDGET);
        if let Target::Compiled(c) = &target {
            if !Arc::ptr_eq(&c.get().inventory, &self.state) {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "compiled",
                    &c.get().compiled.gang().name,
                    "compiled against a different inventory; compile the gang again",
                ));
            }
        }
        let state = &self.state;
        py.detach(|| {
            core(|| match &target {
                Target::Gang(g) => {
                    let compiled = state.with_inventory(|inv| inv.compile(&g.get().0))?;
                    state.solve(&compiled, budget)
                }
                Target::Parsed(g) => {
                    let compiled = state.with_inventory(|inv| inv.compile(g))?;
                    state.solve(&compiled, budget)
                }
                Target::Compiled(c) => state.solve(&c.get().compiled, budget),
            })
        })
    }
}

#[pymethods]
impl PyInventory {
    /// Builds and validates an inventory from topology levels (outermost first) and
    /// nodes (`Node` objects or dicts).
    #[new]
    fn new(py: Python<'_>, levels: &Bound<'_, PyAny>, nodes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut lv = Vec::new();
        for (i, l) in items(Some(levels))?.iter().enumerate() {
            lv.push(convert::string(
                l,
                &format!("topology.levels[{i}]"),
                ErrorKind::InvalidInventory,
            )?);
        }
        let mut specs = Vec::new();
        for (i, n) in items(Some(nodes))?.iter().enumerate() {
            specs.push(node_from(n, &format!("nodes[{i}]"))?);
        }
        PyInventory::build(py, lv, specs)
    }

    /// An inventory from a dict in the scenario format:
    /// `{"topology": {"levels": [...]}, "nodes": [...]}` (nodes may be `Node` objects).
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory.from_dict({"topology": {"levels": ["rack"]},
    /// ...     "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 8}}]})
    /// >>> len(inv), inv.free("a1", "gpu")
    /// (1, Quantity('8'))
    /// >>> gang.Inventory.from_dict({"topology": {"levels": ["rack"]},
    /// ...     "nodes": [{"name": "a1", "capacity": {"memory": "12 GB"}}]})
    /// Traceback (most recent call last):
    ///   ...
    /// gang.InvalidQuantity: invalid quantity at nodes[a1].capacity.memory: "12 GB": unknown suffix
    #[classmethod]
    fn from_dict(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        doc: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let text = convert::to_json(doc, "")?;
        PyInventory::parse_json(py, text)
    }

    /// An inventory from JSON text in the scenario format (the cluster half).
    #[classmethod]
    fn from_json(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let text = json_text(text)?;
        PyInventory::parse_json(py, text)
    }

    /// The cluster document: `{"topology": {"levels": [...]}, "nodes": [...]}`, nodes
    /// in topology order, quantities as given.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_value(py, &self.state.cluster_json())
    }

    /// The cluster document as JSON text.
    fn to_json(&self) -> String {
        self.state.cluster_json().to_string()
    }

    /// Topology levels as given, outermost first.
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.state.levels.clone()
    }

    /// Node names in topology order.
    #[getter]
    fn node_names(&self) -> Vec<String> {
        self.state.specs.iter().map(|s| s.name.clone()).collect()
    }

    /// The nodes as `Node` objects, in topology order.
    #[getter]
    fn nodes(&self) -> Vec<PyNode> {
        self.state.specs.iter().cloned().map(PyNode).collect()
    }

    /// Resource names known to the inventory, sorted.
    #[getter]
    fn resources(&self) -> Vec<String> {
        self.state
            .with_inventory(|inv| inv.resources().map(str::to_owned).collect())
    }

    /// The node called `name` (KeyError if there is none).
    fn node(&self, name: &str) -> PyResult<PyNode> {
        match self.state.index.get(name) {
            Some(&i) => Ok(PyNode(self.state.specs[i].clone())),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned())),
        }
    }

    /// Free amount of `resource` on `node` (capacity minus external use, never below
    /// zero); None when the node or resource is unknown.
    fn free(&self, node: &str, resource: &str) -> Option<PyQuantity> {
        self.state
            .with_inventory(|inv| inv.free(node, resource))
            .map(PyQuantity)
    }

    /// Domain paths of `level` ("b1/a"), in topology order; node names at the node
    /// level.
    fn domains(&self, level: &str) -> PyResult<Vec<String>> {
        if level == HOSTNAME_LEVEL {
            return Ok(self.node_names());
        }
        let Some(depth) = self.state.label_levels.iter().position(|l| l == level) else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "level",
                level,
                "not a level of the inventory's topology",
            ));
        };
        let mut out: Vec<String> = Vec::new();
        for p in &self.state.paths {
            if p.len() > depth {
                let path = p[..=depth].join("/");
                if out.last() != Some(&path) {
                    out.push(path);
                }
            }
        }
        Ok(out)
    }

    /// Validates `gang` against this inventory once, for repeated `place` calls.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
    /// >>> c = inv.compile(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})]))
    /// >>> [inv.place(c).members for _ in range(3)]
    /// [2, 2, 2]
    fn compile(&self, py: Python<'_>, gang: &Bound<'_, PyAny>) -> PyResult<PyCompiledGang> {
        let g = match gang.cast::<PyGang>() {
            Ok(g) => g.get().0.clone(),
            Err(_) => gang_from(gang)?,
        };
        let state = &self.state;
        let compiled = py.detach(|| core(|| state.with_inventory(|inv| inv.compile(&g))))?;
        Ok(PyCompiledGang {
            compiled,
            inventory: self.state.clone(),
        })
    }

    /// Places `gang` (a `Gang`, a gang dict, or a `CompiledGang` from this inventory):
    /// all of it, or nothing. Returns the `Placement`; raises `Unschedulable` (with
    /// `.diagnosis`) when it does not fit, `Undecided` when a multi-role search ran out
    /// of `search_budget` (default 1,000,000 patterns), and an `InvalidRequest` /
    /// `ContradictoryRequest` / `InvalidQuantity` for an invalid gang. The GIL is
    /// released while the solver runs.
    #[pyo3(signature = (gang, *, search_budget = None))]
    fn place(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<PyPlacement> {
        match self.run(py, gang, search_budget)? {
            Solved::Placed(p) => Ok(p),
            Solved::NotPlaced(d) => Err(not_placed(py, d)),
        }
    }

    /// Like `place`, but returns the `Diagnosis` instead of raising when the gang is
    /// not placed (check `diagnosis.status`: "unschedulable" or "undecided"). Invalid
    /// input still raises.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    /// >>> inv.try_place(gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})]))
    /// Diagnosis(gang='g', status='unschedulable', level=None, best='')
    #[pyo3(signature = (gang, *, search_budget = None))]
    fn try_place(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        Ok(match self.run(py, gang, search_budget)? {
            Solved::Placed(p) => Py::new(py, p)?.into_any(),
            Solved::NotPlaced(d) => Py::new(py, PyDiagnosis::new(d))?.into_any(),
        })
    }

    /// Re-checks the inventory's internal invariants (for tests); raises
    /// `InternalError` describing the first broken one.
    fn _validate(&self) -> PyResult<()> {
        guard(|| self.state.with_inventory(|inv| inv.validate()))?
            .map_err(crate::errors::InternalError::new_err)
    }

    fn __len__(&self) -> usize {
        self.state.specs.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.state.index.contains_key(name)
    }

    fn __repr__(&self) -> String {
        let q = |v: &[String]| {
            let items: Vec<String> = v
                .iter()
                .map(|s| format!("{s:?}").replace('"', "'"))
                .collect();
            format!("[{}]", items.join(", "))
        };
        format!(
            "Inventory(levels={}, nodes={}, resources={})",
            q(&self.state.levels),
            self.state.specs.len(),
            q(&self.resources())
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().getattr("from_json")?, (slf.get().to_json(),)))
    }
}

/// A gang validated against one inventory, for repeated `Inventory.place` calls.
/// Tied to that inventory (placing it on another raises `InvalidRequest`); not
/// picklable — pickle the `Gang` and compile again.
#[pyclass(name = "CompiledGang", module = "gang", frozen)]
pub struct PyCompiledGang {
    compiled: CompiledGang,
    inventory: Arc<InvState>,
}

#[pymethods]
impl PyCompiledGang {
    /// The gang as given.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang(self.compiled.gang().clone())
    }
    fn __repr__(&self) -> String {
        format!(
            "CompiledGang({:?}, inventory of {} nodes)",
            self.compiled.gang().name,
            self.inventory.specs.len()
        )
        .replace('"', "'")
    }
}

/// Used by the scenario module.
pub fn inventory_from_specs(
    py: Python<'_>,
    levels: Vec<String>,
    specs: Vec<NodeSpec>,
) -> PyResult<PyInventory> {
    PyInventory::build(py, levels, specs)
}
