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
use std::sync::{Arc, Mutex, RwLock};

use gang_core::lifecycle::{
    Admission, AdmitMode, Replacement, ReservationSnapshot, Spread, SpreadOutcome,
};
use gang_core::request::QuantitySpec;
use gang_core::{
    CompiledGang, Error, ErrorKind, Inventory, NodeSpec, Outcome, Placement, Quantity,
    ReservationId, Solver, Topology, HOSTNAME_LEVEL,
};
use indexmap::IndexMap;
use pyo3::prelude::*;
use pyo3::types::PyType;
use serde::Deserialize;

use crate::convert::{self, items, json_text};
use crate::errors::{core, edge_error, guard};
use crate::lifecycle::{
    self, reservation_id, PyAdmission, PyLost, PyOvercommit, PyReservation, PySpreadOutcome,
};
use crate::outcome::{not_placed, PyAssignment, PyDiagnosis, PyPlacement, RoleNames};
use crate::spec::{gang_from, node_from, PyGang, PyNode, PyQuantity};

/// Solvers kept per inventory for reuse (one per concurrent caller is enough).
const POOL: usize = 8;

pub struct InvState {
    inner: RwLock<Inner>,
    solvers: Mutex<Vec<(u64, Solver)>>,
}

struct Inner {
    inv: Inventory,
    /// Topology levels as given.
    levels: Vec<String>,
    /// Node names and label paths; replaced (not mutated) when nodes are added,
    /// removed or relabelled, so placements keep the snapshot they were made with.
    layout: Arc<Layout>,
}

/// Node order and label paths of one inventory layout.
pub struct Layout {
    /// Label levels (the levels without a trailing `kubernetes.io/hostname`).
    label_levels: Vec<String>,
    /// Node names in storage (topology) order.
    names: Vec<String>,
    /// Node name → index into `names` / `paths`.
    index: HashMap<String, usize>,
    /// Per node: label values of the label levels, up to the first missing one (a
    /// node missing a level's label is outside that level and finer).
    paths: Vec<Vec<String>>,
}

impl Layout {
    fn of(inv: &Inventory, levels: &[String]) -> Layout {
        let label_levels: Vec<String> = match levels.last() {
            Some(l) if l == HOSTNAME_LEVEL => levels[..levels.len() - 1].to_vec(),
            _ => levels.to_vec(),
        };
        let names: Vec<String> = inv.node_names().map(str::to_owned).collect();
        let paths = names
            .iter()
            .map(|n| {
                let spec = inv.node_spec(n).unwrap_or_else(|| NodeSpec::new(n.clone()));
                label_levels
                    .iter()
                    .map_while(|l| spec.get_label(l).map(str::to_owned))
                    .collect()
            })
            .collect();
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Layout {
            label_levels,
            names,
            index,
            paths,
        }
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
}

impl InvState {
    fn new(levels: Vec<String>, specs: Vec<NodeSpec>) -> Result<InvState, Error> {
        let inv = Inventory::builder(Topology::new(levels.clone())?)
            .nodes(specs)
            .build()?;
        Ok(InvState::from_parts(inv, levels))
    }

    fn from_parts(inv: Inventory, levels: Vec<String>) -> InvState {
        let layout = Arc::new(Layout::of(&inv, &levels));
        InvState {
            inner: RwLock::new(Inner {
                inv,
                levels,
                layout,
            }),
            solvers: Mutex::new(Vec::new()),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the core inventory (shared: queries).
    pub fn with_inventory<R>(&self, f: impl FnOnce(&Inventory) -> R) -> R {
        f(&self.read().inv)
    }

    /// Runs `f` on the core inventory (exclusive: lifecycle operations). With
    /// `relayout`, the node paths are read again afterwards (nodes added, removed or
    /// relabelled).
    pub fn with_inventory_mut<R>(&self, relayout: bool, f: impl FnOnce(&mut Inventory) -> R) -> R {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        let r = f(&mut inner.inv);
        if relayout {
            inner.layout = Arc::new(Layout::of(&inner.inv, &inner.levels));
        }
        r
    }

    /// The current node layout.
    pub fn layout(&self) -> Arc<Layout> {
        self.read().layout.clone()
    }

    fn levels(&self) -> Vec<String> {
        self.read().levels.clone()
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

    /// The nodes as they stand now, in topology order. With `fold_reserved`, the
    /// capacity held by reservations is added to each node's external use (the form
    /// used for pickling: same free capacity, no reservations).
    fn specs(&self, fold_reserved: bool) -> Vec<NodeSpec> {
        let inner = self.read();
        let inv = &inner.inv;
        let mut specs: Vec<NodeSpec> = inv
            .node_names()
            .filter_map(|n| inv.node_spec(n))
            .map(plain)
            .collect();
        if fold_reserved {
            let mut held: HashMap<(String, String), u64> = HashMap::new();
            for r in inv.reservations() {
                for (node, res, q) in r.usage(inv) {
                    *held.entry((node, res)).or_default() += q.millis();
                }
            }
            for s in &mut specs {
                for ((node, res), millis) in &held {
                    if *node != s.get_name() {
                        continue;
                    }
                    let used = s
                        .get_used()
                        .find(|(r, _)| r == res)
                        .and_then(|(_, a)| a.resolve("used").ok())
                        .map_or(0, |q| q.millis());
                    s.set_used(
                        res.clone(),
                        QuantitySpec::Exact(Quantity::from_millis(used.saturating_add(*millis))),
                    );
                }
            }
        }
        specs
    }

    fn cluster_json(&self, fold_reserved: bool) -> String {
        serde_json::json!({
            "topology": { "levels": self.levels() },
            "nodes": self.specs(fold_reserved),
        })
        .to_string()
    }

    /// Asks the solver about a gang (compiled here, under the same lock, when not given
    /// compiled); `ask` gets a function that wraps a core placement for Python
    /// (converted lazily).
    fn solve<T>(
        self: &Arc<Self>,
        gang: Option<&gang_core::Gang>,
        compiled: Option<&CompiledGang>,
        budget: u64,
        ask: impl FnOnce(
            &mut Solver,
            &Inventory,
            &CompiledGang,
            &dyn Fn(Placement) -> PyPlacement,
        ) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let inner = self.read();
        let fresh;
        let compiled = match (compiled, gang) {
            (Some(c), _) => c,
            (None, Some(g)) => {
                fresh = inner.inv.compile(g)?;
                &fresh
            }
            (None, None) => {
                return Err(Error::InvalidRequest {
                    field: "gang".into(),
                    value: String::new(),
                    reason: "no gang given".into(),
                })
            }
        };
        let wrap = |p: Placement| {
            PyPlacement::from_core(
                p,
                RoleNames::Compiled(compiled.clone()),
                inner.layout.clone(),
            )
        };
        self.with_solver(budget, |s| ask(s, &inner.inv, compiled, &wrap))
    }
}

/// A query's answer; both variants are moved once, straight into Python objects.
#[allow(clippy::large_enum_variant)]
enum Solved {
    Placed(PyPlacement),
    NotPlaced(gang_core::Diagnosis),
}

/// The cluster half of a scenario: `{"topology": {"levels": [...]}, "nodes": [...]}`
/// (only the levels are read here; the core parses the rest).
#[derive(Deserialize)]
struct ClusterDoc {
    topology: TopologyDoc,
}

#[derive(Deserialize)]
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
                Ok(InvState::from_parts(inv, doc.topology.levels))
            })
        })?;
        Ok(PyInventory::from_state(state))
    }

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
        ask: impl Send
            + FnOnce(
                &mut Solver,
                &Inventory,
                &CompiledGang,
                &dyn Fn(Placement) -> PyPlacement,
            ) -> Result<T, Error>,
    ) -> PyResult<T> {
        let target = Target::extract(gang)?;
        let budget = search_budget.unwrap_or(Solver::DEFAULT_SEARCH_BUDGET);
        if let Target::Compiled(c) = &target {
            if !Arc::ptr_eq(&c.get().inventory, &self.state) {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "compiled",
                    c.get().compiled.gang().get_name(),
                    "compiled against a different inventory; compile the gang again",
                ));
            }
        }
        let state = &self.state;
        py.detach(|| {
            core(|| match &target {
                Target::Gang(g) => state.solve(Some(&g.get().0), None, budget, ask),
                Target::Parsed(g) => state.solve(Some(g), None, budget, ask),
                Target::Compiled(c) => state.solve(None, Some(&c.get().compiled), budget, ask),
            })
        })
    }

    /// Places a gang: the placement, or the diagnosis of why not.
    fn place_or_diagnose(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<Solved> {
        self.run(py, gang, search_budget, |solver, inv, compiled, wrap| {
            Ok(match inv.place_with(solver, compiled)? {
                Outcome::Placed(p) => Solved::Placed(wrap(p)),
                Outcome::Unschedulable(d) | Outcome::Undecided(d) => Solved::NotPlaced(d),
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
        let text = self.state.cluster_json(false);
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The cluster document as JSON text.
    fn to_json(&self) -> String {
        self.state.cluster_json(false)
    }

    /// Topology levels as given, outermost first.
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.state.levels()
    }

    /// Node names in topology order.
    #[getter]
    fn node_names(&self) -> Vec<String> {
        self.state.layout().names.clone()
    }

    /// The nodes as `Node` objects, in topology order.
    #[getter]
    fn nodes(&self) -> Vec<PyNode> {
        self.state.specs(false).into_iter().map(PyNode).collect()
    }

    /// Resource names known to the inventory, sorted.
    #[getter]
    fn resources(&self) -> Vec<String> {
        self.state
            .with_inventory(|inv| inv.resources().map(str::to_owned).collect())
    }

    /// The node called `name` (KeyError if there is none).
    fn node(&self, name: &str) -> PyResult<PyNode> {
        match self.state.with_inventory(|inv| inv.node_spec(name)) {
            Some(spec) => Ok(PyNode(plain(spec))),
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
        let layout = self.state.layout();
        let Some(depth) = layout.label_levels.iter().position(|l| l == level) else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "level",
                level,
                "not a level of the inventory's topology",
            ));
        };
        let mut out: Vec<String> = Vec::new();
        for p in &layout.paths {
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
    /// `Contradictory` / `InvalidQuantity` for an invalid gang. The GIL is
    /// released while the solver runs.
    #[pyo3(signature = (gang, *, search_budget = None))]
    fn place(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<PyPlacement> {
        match self.place_or_diagnose(py, gang, search_budget)? {
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
        Ok(match self.place_or_diagnose(py, gang, search_budget)? {
            Solved::Placed(p) => Py::new(py, p)?.into_any(),
            Solved::NotPlaced(d) => Py::new(py, PyDiagnosis::new(d))?.into_any(),
        })
    }

    /// Like `place`, but answers "not now" with `None` instead of building a diagnosis:
    /// for a loop that asks again and again about gangs that keep waiting (a
    /// diagnosis costs far more than the answer). `None` covers unschedulable and
    /// undecided alike; call `place` or `try_place` for the reason. A placement found
    /// is the one `place` returns. Invalid input still raises.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    /// >>> inv.find(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})])).nodes
    /// {'a1': 2}
    /// >>> inv.find(gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})])) is None
    /// True
    #[pyo3(signature = (gang, *, search_budget = None))]
    fn find(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<u64>,
    ) -> PyResult<Option<PyPlacement>> {
        self.run(py, gang, search_budget, |solver, inv, compiled, wrap| {
            Ok(inv.find_with(solver, compiled)?.map(wrap))
        })
    }

    // ------------------------------------------------------------------ lifecycle

    /// Applies a placement atomically: re-checks every member against the inventory
    /// as it is now and, if all still fit, holds their capacity under a new id.
    /// Raises `Conflict` (naming the node and resource) and changes nothing otherwise.
    fn reserve(&self, py: Python<'_>, placement: &PyPlacement) -> PyResult<PyReservation> {
        let Some(p) = placement.core() else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "placement",
                placement.gang_name(),
                "an unpickled placement cannot be reserved; place the gang again here",
            ));
        };
        let state = &self.state;
        py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let id = inv.reserve(p)?;
                    reservation_data(inv, id)
                })
            })
        })
        .map(|data| PyReservation { data })
    }

    /// Gives back exactly what a reservation holds, and forgets it; returns it as it
    /// was. Raises `UnknownReservation` when it is not live (never made, or released
    /// already): nothing is ever credited twice.
    fn release(&self, py: Python<'_>, reservation: &Bound<'_, PyAny>) -> PyResult<PyReservation> {
        let id = reservation_id(reservation)?;
        let state = &self.state;
        py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let data = reservation_data(inv, id)?;
                    inv.release(id)?;
                    Ok(data)
                })
            })
        })
        .map(|data| PyReservation { data })
    }

    /// The live reservation with this id, or None.
    fn reservation(&self, reservation: &Bound<'_, PyAny>) -> PyResult<Option<PyReservation>> {
        let id = reservation_id(reservation)?;
        Ok(self
            .state
            .with_inventory(|inv| inv.reservation(id).map(|r| r.snapshot(inv)))
            .map(|data| PyReservation { data }))
    }

    /// Live reservations, by id.
    #[getter]
    fn reservations(&self) -> Vec<PyReservation> {
        self.state.with_inventory(|inv| {
            inv.reservations()
                .map(|r| PyReservation {
                    data: r.snapshot(inv),
                })
                .collect()
        })
    }

    /// Places the members a reservation lost (with `remove_node` / `fail_node`) inside
    /// the gang's original domain, and nowhere else; returns the members added. Raises
    /// `Pending` (saying which domain binds the gang and what it lacks) when that
    /// domain has no room now; nothing is applied then.
    fn replace(
        &self,
        py: Python<'_>,
        reservation: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyAssignment>> {
        let id = reservation_id(reservation)?;
        let state = &self.state;
        let r = py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.replace(id))))?;
        match r {
            Replacement::Placed { added } => Ok(added
                .into_iter()
                .map(|a| PyAssignment::new(a.role, a.node, a.count))
                .collect()),
            Replacement::Pending(p) => Err(lifecycle::pending(py, p)),
        }
    }

    /// Adds a node (a `Node` or a dict).
    fn add_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let spec = node_from(node, "node")?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.add_node(spec))))
    }

    /// Removes a node; returns what reservations lost with it (see `replace`).
    fn remove_node(&self, py: Python<'_>, name: &str) -> PyResult<Vec<PyLost>> {
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.remove_node(name))))
            .map(lifecycle::lost_list)
    }

    /// Marks a node failed: it is cordoned and reservations lose their members there
    /// (their capacity is given back); returns what was lost.
    fn fail_node(&self, py: Python<'_>, name: &str) -> PyResult<Vec<PyLost>> {
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.fail_node(name))))
            .map(lifecycle::lost_list)
    }

    /// Cordons a node: nothing new is placed on it; reservations there stay.
    fn cordon(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.cordon(name))))
    }

    /// Uncordons a node.
    fn uncordon(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.uncordon(name))))
    }

    /// Replaces a node's labels; returns the ids of reservations whose constrained
    /// members are no longer inside their domain.
    fn set_labels(
        &self,
        py: Python<'_>,
        name: &str,
        labels: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<u64>> {
        let labels: IndexMap<String, String> =
            convert::str_map(Some(labels), &format!("nodes[{name}].labels"), |v, f| {
                convert::string(v, f, ErrorKind::InvalidInventory)
            })?
            .into_iter()
            .collect();
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.set_labels(name, labels))))
            .map(|ids| ids.into_iter().map(|r| r.0).collect())
    }

    /// Sets a node's allocatable capacity of a resource (int or Kubernetes string);
    /// returns where capacity is now below what is used and reserved (the change is
    /// applied; those reservations are reported).
    fn set_capacity(
        &self,
        py: Python<'_>,
        node: &str,
        resource: &str,
        amount: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyOvercommit>> {
        let a = convert::amount(amount, &format!("nodes[{node}].capacity.{resource}"))?;
        let state = &self.state;
        py.detach(|| {
            core(|| state.with_inventory_mut(false, |inv| inv.set_capacity(node, resource, a)))
        })
        .map(|v| v.into_iter().map(PyOvercommit).collect())
    }

    /// Sets the amount of a resource used on a node by workloads gang did not place;
    /// reports overcommitment like `set_capacity`.
    fn set_used(
        &self,
        py: Python<'_>,
        node: &str,
        resource: &str,
        amount: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyOvercommit>> {
        let a = convert::amount(amount, &format!("nodes[{node}].used.{resource}"))?;
        let state = &self.state;
        py.detach(|| {
            core(|| state.with_inventory_mut(false, |inv| inv.set_used(node, resource, a)))
        })
        .map(|v| v.into_iter().map(PyOvercommit).collect())
    }

    /// Places and reserves up to `replicas` replicas of `gang`, each in its own domain
    /// of `level` (all of them, or at least `min_replicas`, or nothing); with `within`,
    /// all replicas inside one domain of that level.
    #[pyo3(signature = (gang, replicas, level, *, min_replicas = None, within = None))]
    fn spread(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        replicas: u32,
        level: String,
        min_replicas: Option<u32>,
        within: Option<String>,
    ) -> PyResult<PySpreadOutcome> {
        let g = gang_from(gang)?;
        let roles = RoleNames::Names(
            g.get_roles()
                .iter()
                .map(|r| r.get_name().to_owned())
                .collect(),
        );
        let mut spread = Spread::new(g, replicas, level);
        if let Some(m) = min_replicas {
            spread = spread.min_replicas(m);
        }
        if let Some(w) = within {
            spread = spread.within(w);
        }
        let state = &self.state;
        let (out, reservations) = py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let out = inv.spread(&spread)?;
                    let data = match &out {
                        SpreadOutcome::Placed { reservations, .. } => reservations
                            .iter()
                            .map(|&id| reservation_data(inv, id))
                            .collect::<Result<Vec<_>, _>>()?,
                        _ => Vec::new(),
                    };
                    Ok((out, data))
                })
            })
        })?;
        let layout = self.state.layout();
        Ok(match out {
            SpreadOutcome::Placed { placements, .. } => PySpreadOutcome {
                fit: reservations.len() as u32,
                needed: spread.get_min_replicas().unwrap_or(spread.get_replicas()),
                reservations: reservations
                    .into_iter()
                    .map(|data| Py::new(py, PyReservation { data }))
                    .collect::<PyResult<_>>()?,
                placements: placements
                    .into_iter()
                    .map(|p| Py::new(py, PyPlacement::from_core(p, roles.clone(), layout.clone())))
                    .collect::<PyResult<_>>()?,
                diagnosis: None,
            },
            SpreadOutcome::Unschedulable {
                fit,
                needed,
                diagnosis,
            } => PySpreadOutcome {
                reservations: Vec::new(),
                placements: Vec::new(),
                fit,
                needed,
                diagnosis: diagnosis
                    .map(|d| Py::new(py, PyDiagnosis::new(d)))
                    .transpose()?,
            },
        })
    }

    /// Admits a queue of gangs in order: each is placed whole and reserved, or waits
    /// holding nothing. `mode` is "fifo" (the first gang that does not fit blocks the
    /// rest) or "backfill" (later gangs may go ahead, only on nodes the waiting head
    /// cannot use).
    #[pyo3(signature = (queue, mode = "fifo"))]
    fn admit(
        &self,
        py: Python<'_>,
        queue: &Bound<'_, PyAny>,
        mode: &str,
    ) -> PyResult<Vec<PyAdmission>> {
        let mode = match mode {
            "fifo" => AdmitMode::Fifo,
            "backfill" => AdmitMode::Backfill,
            other => {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "mode",
                    other,
                    "expected fifo or backfill",
                ))
            }
        };
        let gangs: Vec<gang_core::Gang> = items(Some(queue))?
            .iter()
            .map(|g| gang_from(g))
            .collect::<PyResult<_>>()?;
        let state = &self.state;
        let (out, data) = py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let out = inv.admit(&gangs, mode)?;
                    let data = out
                        .iter()
                        .map(|a| match a {
                            Admission::Placed { reservation, .. } => {
                                reservation_data(inv, *reservation).map(Some)
                            }
                            Admission::Waiting { .. } => Ok(None),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((out, data))
                })
            })
        })?;
        let layout = self.state.layout();
        gangs
            .iter()
            .zip(out)
            .zip(data)
            .map(|((g, a), data)| {
                let roles = RoleNames::Names(
                    g.get_roles()
                        .iter()
                        .map(|r| r.get_name().to_owned())
                        .collect(),
                );
                Ok(match a {
                    Admission::Placed { placement, .. } => PyAdmission {
                        gang: g.get_name().to_owned(),
                        reservation: data
                            .map(|data| Py::new(py, PyReservation { data }))
                            .transpose()?,
                        placement: Some(Py::new(
                            py,
                            PyPlacement::from_core(placement, roles, layout.clone()),
                        )?),
                        diagnosis: None,
                        blocked_by: None,
                    },
                    Admission::Waiting {
                        diagnosis,
                        blocked_by,
                    } => PyAdmission {
                        gang: g.get_name().to_owned(),
                        reservation: None,
                        placement: None,
                        diagnosis: diagnosis
                            .map(|d| Py::new(py, PyDiagnosis::new(d)))
                            .transpose()?,
                        blocked_by,
                    },
                })
            })
            .collect()
    }

    /// Re-checks the inventory's internal invariants (for tests); raises
    /// `InternalError` describing the first broken one.
    fn _validate(&self) -> PyResult<()> {
        guard(|| self.state.with_inventory(|inv| inv.validate()))?
            .map_err(crate::errors::InternalError::new_err)
    }

    fn __len__(&self) -> usize {
        self.state.with_inventory(|inv| inv.len())
    }

    fn __contains__(&self, name: &str) -> bool {
        self.state.layout().index.contains_key(name)
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
            q(&self.state.levels()),
            self.__len__(),
            q(&self.resources())
        )
    }

    /// Pickles as the cluster document with the capacity held by reservations folded
    /// into each node's external use: the same free capacity, no reservations.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let text = slf.get().state.cluster_json(true);
        Ok((slf.get_type().getattr("from_json")?, (text,)))
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
            self.compiled.gang().get_name(),
            self.inventory.with_inventory(|inv| inv.len())
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

/// A node as the core reports it, with exact amounts written as a person would give
/// them (whole units as ints, else milli-unit text), so that it equals the same node
/// read back from its dict.
fn plain(mut spec: NodeSpec) -> NodeSpec {
    let fix = |a: &QuantitySpec| match a {
        QuantitySpec::Exact(q) => {
            let m = q.millis();
            match i64::try_from(m / 1000) {
                Ok(units) if m % 1000 == 0 => QuantitySpec::Units(units),
                _ => QuantitySpec::Text(q.to_string()),
            }
        }
        other => other.clone(),
    };
    let capacity: Vec<(String, QuantitySpec)> = spec
        .get_capacity()
        .map(|(r, a)| (r.to_owned(), fix(a)))
        .collect();
    let used: Vec<(String, QuantitySpec)> = spec
        .get_used()
        .map(|(r, a)| (r.to_owned(), fix(a)))
        .collect();
    for (r, a) in capacity {
        spec.set_capacity(r, a);
    }
    for (r, a) in used {
        spec.set_used(r, a);
    }
    spec
}

/// A snapshot of the live reservation `id`.
fn reservation_data(inv: &Inventory, id: ReservationId) -> Result<ReservationSnapshot, Error> {
    inv.reservation(id)
        .map(|r| r.snapshot(inv))
        .ok_or(Error::UnknownReservation { id })
}
